-- t7nn/normalization.lua — normalizations: BatchNormalization and its Spatial and
-- Volumetric forms, LayerNormalization, local contrast normalizations (Subtractive,
-- Divisive, Contrastive) and SpatialCrossMapLRN
local torch = require "torch"
local nn = require "t7nn.env"
local H = require "t7nn.helpers"
local fail, sizestr = H.fail, H.sizestr

-- nn.BatchNormalization(N [, eps = 1e-5] [, momentum = 0.1] [, affine = true]): per feature
-- (dim 2 of a batch), y = (x - mean) / sqrt(var + eps) * weight + bias. Training uses the
-- batch's mean and (biased) variance and moves running_mean / running_var (unbiased) by
-- momentum; evaluation (and a batch of one) uses the running ones. nDim is the batch's
-- number of dims (2; the Spatial form 4, the Volumetric 5); in evaluation a single sample
-- (nDim - 1 dims) is taken too.
local BN, bnParent = torch.class("nn.BatchNormalization", "nn.Module")
BN.__version = 2
BN.nDim = 2

function BN:__init(nOutput, eps, momentum, affine)
  bnParent.__init(self)
  if type(nOutput) ~= "number" or nOutput < 1 or nOutput ~= math.floor(nOutput) then
    fail(torch.type(self), "Missing argument #1: dimensionality of input (a positive integer). ", 2)
  end
  if affine ~= nil and type(affine) ~= "boolean" then fail(torch.type(self), "affine has to be true/false", 2) end
  self.affine = affine ~= false
  self.eps = eps or 1e-5
  self.train = true
  self.momentum = momentum or 0.1
  self.running_mean = torch.zeros(nOutput)
  self.running_var = torch.ones(nOutput)
  if self.affine then
    self.weight = torch.Tensor(nOutput)
    self.bias = torch.Tensor(nOutput)
    self.gradWeight = torch.Tensor(nOutput)
    self.gradBias = torch.Tensor(nOutput)
    self:reset()
  end
end

function BN:reset()
  if self.weight then self.weight:uniform() end
  if self.bias then self.bias:zero() end
  self.running_mean:zero()
  self.running_var:fill(1)
end

function BN:checkInputDim(input)
  local cls = torch.type(self)
  if not torch.isTensor(input) then fail(cls, "input must be a tensor", 3) end
  local d = input:dim()
  if not (d == self.nDim or (d == self.nDim - 1 and self.train == false)) then
    fail(cls, ("only mini-batch supported (%dD tensor), got %dD tensor instead"):format(self.nDim, d), 3)
  end
  local featDim = d == self.nDim - 1 and 1 or 2
  if input:size(featDim) ~= self.running_mean:nElement() then
    fail(cls, ("got %d-feature tensor, expected %d"):format(input:size(featDim), self.running_mean:nElement()), 3)
  end
end

-- x as C x M (features first), a copy
local function features_first(x, C)
  local n = x:size(1)
  local L = x:nElement() // (n * C)
  -- always a new tensor (a transposed view with a plane of one would pass as contiguous)
  return x.new(C, n, L):copy(x:contiguous():view(n, C, L):transpose(1, 2)):view(C, n * L)
end

-- y (C x M) back into dst shaped like x
local function from_features_first(dst, y, x, C)
  local n = x:size(1)
  dst:resizeAs(x)
  dst:view(n, C, x:nElement() // (n * C)):copy(y:view(C, n, -1):transpose(1, 2))
  return dst
end

local function as_batch(self, t)
  if t:dim() == self.nDim - 1 then
    local s = t:size():totable(); table.insert(s, 1, 1)
    return t:contiguous():view(table.unpack(s))
  end
  return t
end

-- whether the batch's statistics are used (and the running ones updated)
local function batch_stats(self, input) return self.train ~= false and input:size(1) > 1 end

function BN:updateOutput(input)
  self:checkInputDim(input)
  local x = as_batch(self, input)
  local C = self.running_mean:nElement()
  local xc = features_first(x, C)
  local M = xc:size(2)
  self.save_mean = self.save_mean or x.new()
  self.save_std = self.save_std or x.new()
  if batch_stats(self, x) then
    self.save_mean:resize(C, 1):mean(xc, 2)
    xc:add(-1, self.save_mean:expand(C, M))
    local var = torch.cmul(xc, xc):mean(2)               -- biased
    self.save_std:resize(C, 1):copy(var):add(self.eps):sqrt():pow(-1)
    self.running_mean:mul(1 - self.momentum):add(self.momentum, self.save_mean:view(C))
    self.running_var:mul(1 - self.momentum):add(self.momentum * M / (M - 1), var:view(C))
  else
    self.save_mean:resize(C, 1):copy(self.running_mean)
    xc:add(-1, self.save_mean:expand(C, M))
    self.save_std:resize(C, 1):copy(self.running_var):add(self.eps):sqrt():pow(-1)
  end
  xc:cmul(self.save_std:expand(C, M))                      -- normalized
  self._xhat = xc
  local y = xc
  if self.affine then
    y = torch.cmul(xc, self.weight:view(C, 1):expand(C, M)):add(self.bias:view(C, 1):expand(C, M))
  end
  from_features_first(self.output, y, x, C)
  if input:dim() ~= x:dim() then self.output:resizeAs(input) end
  return self.output
end

local function backward(self, input, gradOutput, scale, gradInput, gradWeight, gradBias)
  self:checkInputDim(input)
  self:checkInputDim(gradOutput)
  if not self._xhat then fail(torch.type(self), "must call :updateOutput() first", 3) end
  local x = as_batch(self, input)
  local C = self.running_mean:nElement()
  local g = features_first(as_batch(self, gradOutput), C)
  local M = g:size(2)
  local xhat = self._xhat
  if xhat:size(2) ~= M then fail(torch.type(self), "gradOutput does not match the last forward's input", 3) end
  scale = scale or 1
  if gradInput then
    local w = self.affine and self.weight:view(C, 1) or nil
    local gi
    if batch_stats(self, x) then
      -- (g - mean(g) - xhat * mean(g .* xhat)) * invstd * weight
      local mg = g:mean(2)
      local mgx = torch.cmul(g, xhat):mean(2)
      gi = g:clone():add(-1, mg:expand(C, M)):add(-1, torch.cmul(xhat, mgx:expand(C, M)))
    else
      gi = g:clone()
    end
    gi:cmul(self.save_std:expand(C, M))
    if w then gi:cmul(w:expand(C, M)) end
    from_features_first(gradInput, gi, x, C)
    if input:dim() ~= x:dim() then gradInput:resizeAs(input) end
  end
  if gradWeight then gradWeight:add(scale, torch.cmul(g, xhat):sum(2):view(C)) end
  if gradBias then gradBias:add(scale, g:sum(2):view(C)) end
  return self.gradInput
end

function BN:backward(input, gradOutput, scale)
  return backward(self, input, gradOutput, scale, self.gradInput, self.gradWeight, self.gradBias)
end

function BN:updateGradInput(input, gradOutput)
  return backward(self, input, gradOutput, 1, self.gradInput)
end

function BN:accGradParameters(input, gradOutput, scale)
  backward(self, input, gradOutput, scale, nil, self.gradWeight, self.gradBias)
end

function BN:clearState()
  nn.utils.clear(self, "buffer", "buffer2", "centered", "std", "normalized", "_input",
    "_gradOutput", "save_mean", "save_std", "_xhat")
  return bnParent.clearState(self)
end

function BN:__tostring__()
  return ("%s (%dD) (%d)"):format(torch.type(self), self.nDim, self.running_mean:nElement())
end

-- nn.SpatialBatchNormalization(N, ...): the same over batches n x N x h x w (per plane)
local SBN = torch.class("nn.SpatialBatchNormalization", "nn.BatchNormalization")
SBN.__version = 2
SBN.nDim = 4

-- nn.VolumetricBatchNormalization(N, ...): batches n x N x t x h x w
local VBN = torch.class("nn.VolumetricBatchNormalization", "nn.BatchNormalization")
VBN.__version = 2
VBN.nDim = 5

-- nn.LayerNormalization(nOutput [, bias = 0] [, eps = 1e-10] [, affine = true]): each row
-- of a batch n x nOutput centred and scaled to norm sqrt(nOutput) (||x - mean|| + eps), then
-- weight .* y + bias when affine (weight starting at 1, bias at the value given)
local LN, lnParent = torch.class("nn.LayerNormalization", "nn.Module")

function LN:__init(nOutput, bias, eps, affine)
  lnParent.__init(self)
  if type(nOutput) ~= "number" or nOutput < 1 then fail("nn.LayerNormalization", "nOutput must be a positive integer", 2) end
  self.nOutput = nOutput
  self.eps = eps or 1e-10
  self.affine = affine == nil and true or affine
  if self.affine then
    self.weight = torch.Tensor(nOutput):fill(1)
    self.gradWeight = torch.Tensor(nOutput):zero()
    self.bias = torch.Tensor(nOutput):fill(bias or 0)
    self.gradBias = torch.Tensor(nOutput):zero()
  end
end

function LN:updateOutput(input)
  if not torch.isTensor(input) or input:dim() ~= 2 or input:size(2) ~= self.nOutput then
    fail("nn.LayerNormalization", ("input must be n x %d (got %s)"):format(self.nOutput, sizestr(input)), 2)
  end
  local n, d = input:size(1), self.nOutput
  local c = input:clone():add(-1, input:mean(2):expand(n, d))
  self._norm = c:norm(2, 2):add(self.eps)                 -- n x 1
  self._xhat = c:cdiv(self._norm:expand(n, d)):mul(math.sqrt(d))
  self.output:resizeAs(input):copy(self._xhat)
  if self.affine then
    self.output:cmul(self.weight:view(1, d):expand(n, d)):add(self.bias:view(1, d):expand(n, d))
  end
  return self.output
end

function LN:updateGradInput(input, gradOutput)
  local n, d = input:size(1), self.nOutput
  local g = gradOutput:clone()
  if self.affine then g:cmul(self.weight:view(1, d):expand(n, d)) end
  -- y = sqrt(d) c / (||c|| + eps), c = x - mean(x)
  local u = self._xhat:clone():div(math.sqrt(d))          -- c / (||c|| + eps)
  local r = torch.cdiv(self._norm:clone():add(-self.eps), self._norm)   -- ||c|| / (||c|| + eps)
  local nc = self._norm:clone():add(-self.eps):clamp(1e-300, math.huge)
  local dot = torch.cmul(g, u):sum(2)
  local gc = g:clone():add(-1, torch.cmul(u, torch.cmul(dot, r):cdiv(nc):cmul(self._norm):expand(n, d)))
  gc:cdiv(self._norm:expand(n, d)):mul(math.sqrt(d))
  gc:add(-1, gc:mean(2):expand(n, d))
  self.gradInput:resizeAs(input):copy(gc)
  return self.gradInput
end

function LN:accGradParameters(input, gradOutput, scale)
  if not self.affine then return end
  scale = scale or 1
  self.gradWeight:add(scale, torch.cmul(gradOutput, self._xhat):sum(1):view(-1))
  self.gradBias:add(scale, gradOutput:sum(1):view(-1))
end

function LN:clearState()
  nn.utils.clear(self, "_norm", "_xhat")
  return lnParent.clearState(self)
end

-- the local (kernel-weighted, zero-padded) sums of the contrast normalizations: a kernel
-- (2-D, or 1-D applied along both axes) summed over all planes
local function local_kernel(cls, nInputPlane, kernel)
  nInputPlane = nInputPlane or 1
  if type(nInputPlane) ~= "number" or nInputPlane < 1 then fail(cls, "nInputPlane must be a positive integer", 3) end
  kernel = kernel and kernel:clone() or torch.Tensor(9, 9):fill(1)
  local kd = kernel:dim()
  if kd ~= 1 and kd ~= 2 then fail(cls, "averaging kernel must be 2D or 1D", 3) end
  if kernel:size(1) % 2 == 0 or (kd == 2 and kernel:size(2) % 2 == 0) then
    fail(cls, "averaging kernel must have ODD dimensions", 3)
  end
  kernel:div(kernel:sum() * nInputPlane)
  local k2 = kd == 2 and kernel or torch.ger(kernel, kernel)
  local w = torch.Tensor(1, nInputPlane, k2:size(1), k2:size(2))
  w:copy(k2:view(1, 1, k2:size(1), k2:size(2)):expand(1, nInputPlane, k2:size(1), k2:size(2)))
  return kernel, w, { (k2:size(1) - 1) // 2, (k2:size(2) - 1) // 2 }
end

local function planes_input(cls, self, input)
  if not torch.isTensor(input) or (input:dim() ~= 3 and input:dim() ~= 4) then
    fail(cls, "input must be nInputPlane x h x w or a batch of them (got " .. sizestr(input) .. ")", 3)
  end
  local x = input:dim() == 3 and input:view(1, input:size(1), input:size(2), input:size(3)) or input
  if x:size(2) ~= self.nInputPlane then
    fail(cls, ("input has %d planes, expected %d"):format(x:size(2), self.nInputPlane), 3)
  end
  return x:contiguous()
end

-- n x 1 x h x w local sums of x (n x planes x h x w)
local function local_sum(self, x)
  local w = self._weight:typeAs(x)
  return torch.conv2d(x, w, nil, { 1, 1 }, self._pad, { 1, 1 }, 1)
end

local function local_sum_backward(self, g, x)
  local w = self._weight:typeAs(x)
  return torch.conv2d_backward_input(g, w, x:size():totable(), { 1, 1 }, self._pad, { 1, 1 }, 1)
end

-- the local sums of ones: what the sums of the border pixels are divided by
local function coefficients(self, x)
  local h, w = x:size(3), x:size(4)
  if not self._coefs or self._coefs:size(3) ~= h or self._coefs:size(4) ~= w or torch.type(self._coefs) ~= torch.type(x) then
    self._coefs = local_sum(self, x.new(1, self.nInputPlane, h, w):fill(1))
  end
  self.coef = self._coefs
  return self._coefs
end

-- nn.SpatialSubtractiveNormalization(nInputPlane [, kernel = 9x9 ones]): x minus its local
-- mean (a kernel-weighted average over the neighbourhood and all planes, corrected at the
-- borders)
local SSN, ssnParent = torch.class("nn.SpatialSubtractiveNormalization", "nn.Module")

function SSN:__init(nInputPlane, kernel)
  ssnParent.__init(self)
  self.nInputPlane = nInputPlane or 1
  self.kernel, self._weight, self._pad = local_kernel("nn.SpatialSubtractiveNormalization", self.nInputPlane, kernel)
end

function SSN:updateOutput(input)
  local x = planes_input("nn.SpatialSubtractiveNormalization", self, input)
  local n, c, h, w = x:size(1), x:size(2), x:size(3), x:size(4)
  local mean = local_sum(self, x):cdiv(coefficients(self, x):expand(n, 1, h, w))
  self.output:resizeAs(input):copy(x:clone():add(-1, mean:expand(n, c, h, w)):viewAs(input))
  return self.output
end

function SSN:updateGradInput(input, gradOutput)
  local x = planes_input("nn.SpatialSubtractiveNormalization", self, input)
  local n, c, h, w = x:size(1), x:size(2), x:size(3), x:size(4)
  local g = gradOutput:contiguous():view(n, c, h, w)
  local gm = g:sum(2):cdiv(coefficients(self, x):expand(n, 1, h, w)):mul(-1)
  local gi = local_sum_backward(self, gm, x):add(g)
  self.gradInput:resizeAs(input):copy(gi:viewAs(input))
  return self.gradInput
end

function SSN:clearState()
  self._coefs = nil
  return ssnParent.clearState(self)
end

-- nn.SpatialDivisiveNormalization(nInputPlane [, kernel] [, threshold = 1e-4] [, thresval =
-- threshold]): x divided by its local standard deviation sqrt(local sum of x^2) / coef, that
-- divisor replaced by thresval where it is not above threshold
local SDN, sdnParent = torch.class("nn.SpatialDivisiveNormalization", "nn.Module")

function SDN:__init(nInputPlane, kernel, threshold, thresval)
  sdnParent.__init(self)
  self.nInputPlane = nInputPlane or 1
  self.kernel, self._weight, self._pad = local_kernel("nn.SpatialDivisiveNormalization", nInputPlane, kernel)
  self.threshold = threshold or 1e-4
  self.thresval = thresval or threshold or 1e-4
end

function SDN:updateOutput(input)
  local x = planes_input("nn.SpatialDivisiveNormalization", self, input)
  local n, c, h, w = x:size(1), x:size(2), x:size(3), x:size(4)
  local s = local_sum(self, torch.cmul(x, x))
  self._sqrtS = s:sqrt()
  local a = self._sqrtS:clone():cdiv(coefficients(self, x):expand(n, 1, h, w))
  self._above = torch.gt(a, self.threshold)
  local t = a:clone():maskedFill(torch.le(a, self.threshold), self.thresval)
  self._div = t
  self.output:resizeAs(input):copy(torch.cdiv(x, t:expand(n, c, h, w)):viewAs(input))
  return self.output
end

function SDN:updateGradInput(input, gradOutput)
  local x = planes_input("nn.SpatialDivisiveNormalization", self, input)
  local n, c, h, w = x:size(1), x:size(2), x:size(3), x:size(4)
  local g = gradOutput:contiguous():view(n, c, h, w)
  local t = self._div:expand(n, c, h, w)
  local gi = torch.cdiv(g, t)
  -- through the divisor: d/dt = -sum_planes g x / t^2, then a = sqrt(S) / coef
  local gt = torch.cmul(g, x):cdiv(t):cdiv(t):sum(2):mul(-1)
  gt:cmul(self._above:typeAs(gt))
  local sq = self._sqrtS:clone()
  local zero = torch.eq(sq, 0)
  sq:maskedFill(zero, 1)
  local gS = gt:cdiv(coefficients(self, x):expand(n, 1, h, w)):cdiv(sq):mul(0.5):maskedFill(zero, 0)
  local gx2 = local_sum_backward(self, gS, x)
  gi:add(2, torch.cmul(gx2, x))
  self.gradInput:resizeAs(input):copy(gi:viewAs(input))
  return self.gradInput
end

function SDN:clearState()
  self._coefs, self._sqrtS, self._above, self._div = nil, nil, nil, nil
  return sdnParent.clearState(self)
end

-- nn.SpatialContrastiveNormalization(nInputPlane [, kernel] [, threshold] [, thresval]):
-- the subtractive normalization followed by the divisive one
local SCN, scnParent = torch.class("nn.SpatialContrastiveNormalization", "nn.Module")

function SCN:__init(nInputPlane, kernel, threshold, thresval)
  scnParent.__init(self)
  self.nInputPlane = nInputPlane or 1
  self.kernel = kernel or torch.Tensor(9, 9):fill(1)
  self.threshold = threshold or 1e-4
  self.thresval = thresval or threshold or 1e-4
  local kd = self.kernel:dim()
  if kd ~= 1 and kd ~= 2 then fail("nn.SpatialContrastiveNormalization", "averaging kernel must be 2D or 1D", 2) end
  if self.kernel:size(1) % 2 == 0 or (kd == 2 and self.kernel:size(2) % 2 == 0) then
    fail("nn.SpatialContrastiveNormalization", "averaging kernel must have ODD dimensions", 2)
  end
  self.normalizer = nn.Sequential()
  self.normalizer:add(nn.SpatialSubtractiveNormalization(nInputPlane, self.kernel))
  self.normalizer:add(nn.SpatialDivisiveNormalization(nInputPlane, self.kernel, self.threshold, self.thresval))
end

function SCN:updateOutput(input)
  self.output = self.normalizer:forward(input)
  return self.output
end

function SCN:updateGradInput(input, gradOutput)
  self.gradInput = self.normalizer:backward(input, gradOutput)
  return self.gradInput
end

-- nn.SpatialCrossMapLRN(size [, alpha = 1e-4] [, beta = 0.75] [, k = 1]): y = x / (k + alpha /
-- size * sum of x^2 over the size neighbouring planes)^beta, for c x h x w or a batch
local LRN, lrnParent = torch.class("nn.SpatialCrossMapLRN", "nn.Module")

function LRN:__init(size, alpha, beta, k)
  lrnParent.__init(self)
  if type(size) ~= "number" or size < 1 then fail("nn.SpatialCrossMapLRN", "size must be a positive integer", 2) end
  self.size = size
  self.alpha = alpha or 0.0001
  self.beta = beta or 0.75
  self.k = k or 1
end

-- sums over the window of planes [c - half, c + half] of t (n x C x h x w)
local function window_sum(t, half)
  local C = t:size(2)
  local out = t:clone()
  for o = 1, half do
    if o < C then
      out:narrow(2, 1, C - o):add(t:narrow(2, o + 1, C - o))
      out:narrow(2, o + 1, C - o):add(t:narrow(2, 1, C - o))
    end
  end
  return out
end

local function lrn_input(input)
  if not torch.isTensor(input) or (input:dim() ~= 3 and input:dim() ~= 4) then
    fail("nn.SpatialCrossMapLRN", "input must be c x h x w or a batch n x c x h x w (got " .. sizestr(input) .. ")", 3)
  end
  return input:dim() == 3 and input:contiguous():view(1, input:size(1), input:size(2), input:size(3)) or input:contiguous()
end

function LRN:updateOutput(input)
  local x = lrn_input(input)
  local half = (self.size - 1) // 2
  self.scale = window_sum(torch.cmul(x, x), half):mul(self.alpha / self.size):add(self.k)
  self.output:resizeAs(input):copy(torch.pow(self.scale, -self.beta):cmul(x):viewAs(input))
  return self.output
end

-- dy_c/dx = s_c^-beta, and through the scales: -2 alpha beta / size * x * sum over the
-- window of g y / s
function LRN:updateGradInput(input, gradOutput)
  local x = lrn_input(input)
  local half = (self.size - 1) // 2
  local g = gradOutput:contiguous():viewAs(x)
  local y = self.output:contiguous():viewAs(x)
  local r = window_sum(torch.cmul(g, y):cdiv(self.scale), half)
  local gi = torch.pow(self.scale, -self.beta):cmul(g)
  gi:add(-2 * self.alpha * self.beta / self.size, r:cmul(x))
  self.gradInput:resizeAs(input):copy(gi:viewAs(input))
  return self.gradInput
end

function LRN:clearState()
  nn.utils.clear(self, "scale")
  return lrnParent.clearState(self)
end

return nn
