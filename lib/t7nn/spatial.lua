-- t7nn/spatial.lua — 2-D modules over (C x H x W) inputs or batches (N x C x H x W):
-- max, average, adaptive, fractional and Lp pooling, unpooling, padding (zero, reflection,
-- replication, and the volumetric replication), up-sampling, PixelShuffle and the pooling
-- across features (FeatureLPPooling). Forward and backward go through the op library's
-- kernels (max_pool2d_with_indices, avg_pool2d, pad, upsample_*, and their *_backward).
local torch = require "torch"
local nn = require "t7nn.env"
local H = require "t7nn.helpers"
local shape, own, call = H.sizestr, H.own, H.call

---------------------------------------------------------------------------------------------
-- shared helpers

local function check_dims(self, input, lo, hi, what)
  if not torch.isTensor(input) then
    error(("%s: expected a tensor input, got %s"):format(torch.type(self), torch.type(input)), 3)
  end
  local d = input:dim()
  if d < lo or d > hi then
    error(("%s: %s expected for input, got a %d-D tensor (size %s)"):format(torch.type(self), what, d,
      d > 0 and shape(input) or "empty"), 3)
  end
end

local function check_grad(self, gradOutput, output)
  if not torch.isTensor(gradOutput) or not gradOutput:isSameSizeAs(output) then
    error(("%s: gradOutput of size %s expected (the size of the output), got %s"):format(torch.type(self),
      shape(output), torch.isTensor(gradOutput) and shape(gradOutput) or torch.type(gradOutput)), 3)
  end
end

local function check_int(cls, name, v, min)
  if math.type(v) ~= "integer" and not (type(v) == "number" and v == math.floor(v)) then
    error(("%s: %s must be an integer, got %s"):format(cls, name, tostring(v)), 4)
  end
  if min and v < min then
    error(("%s: %s must be at least %d, got %d"):format(cls, name, min, v), 4)
  end
  return math.tointeger(v)
end

-- the pooled size of one dim (Torch7's rule, with the last window made to start inside
-- the input or its left padding)
local function pooled_size(n, k, d, pad, dil, ceil_mode)
  local span = n + 2 * pad - (dil * (k - 1) + 1)
  local o = (ceil_mode and math.ceil(span / d) or math.floor(span / d)) + 1
  if ceil_mode and (o - 1) * d >= n + pad then o = o - 1 end
  return o
end

-- for 2-D pools: checks the input, the padding and the output size
local function check_pool(self, input, dilW, dilH)
  check_dims(self, input, 3, 4, "3D or 4D (batch mode) tensor")
  local cls = torch.type(self)
  if self.kW < 1 or self.kH < 1 then
    error(("%s: kernel size should be greater than zero, but got kH: %d kW: %d"):format(cls, self.kH, self.kW), 3)
  end
  if self.dW < 1 or self.dH < 1 then
    error(("%s: stride should be greater than zero, but got dH: %d dW: %d"):format(cls, self.dH, self.dW), 3)
  end
  if self.padW > self.kW / 2 or self.padH > self.kH / 2 or self.padW < 0 or self.padH < 0 then
    error(("%s: pad should be smaller than half of kernel size, but got padW = %d, padH = %d, kW = %d, kH = %d")
      :format(cls, self.padW, self.padH, self.kW, self.kH), 3)
  end
  local d = input:dim()
  local h, w = input:size(d - 1), input:size(d)
  local oh = pooled_size(h, self.kH, self.dH, self.padH, dilH or 1, self.ceil_mode)
  local ow = pooled_size(w, self.kW, self.dW, self.padW, dilW or 1, self.ceil_mode)
  if oh < 1 or ow < 1 then
    error(("%s: given input size (%s), the calculated output size (%dx%d) is too small"):format(cls, shape(input), oh, ow), 3)
  end
end

-- a 3-D input as a batch of one (the ops that take only 4-D inputs)
local function as4d(t)
  if t:dim() == 3 then return t:view(1, t:size(1), t:size(2), t:size(3)), true end
  return t, false
end

---------------------------------------------------------------------------------------------
-- nn.SpatialMaxPooling(kW, kH [, dW = kW, dH = kH, padW = 0, padH = 0]): the maximum of
-- each kW x kH window, windows every dW, dH over the input padded with -inf; :ceil() rounds
-- the output size up. indices (LongTensor, the output's size) holds the 1-based position of
-- each maximum in its input plane (row-major), as THNN kept it.
local SpatialMaxPooling, parent = torch.class("nn.SpatialMaxPooling", "nn.Module")

function SpatialMaxPooling:__init(kW, kH, dW, dH, padW, padH)
  parent.__init(self)
  local cls = torch.type(self)
  self.kW = check_int(cls, "kW", kW, 1)
  self.kH = check_int(cls, "kH", kH, 1)
  self.dW = check_int(cls, "dW", dW or kW, 1)
  self.dH = check_int(cls, "dH", dH or kH, 1)
  self.padW = check_int(cls, "padW", padW or 0, 0)
  self.padH = check_int(cls, "padH", padH or 0, 0)
  self.ceil_mode = false
  self.indices = torch.LongTensor()
end

function SpatialMaxPooling:ceil() self.ceil_mode = true; return self end
function SpatialMaxPooling:floor() self.ceil_mode = false; return self end

function SpatialMaxPooling:updateOutput(input)
  self.ceil_mode = self.ceil_mode or false
  self.padW, self.padH = self.padW or 0, self.padH or 0
  local dilW, dilH = self.dilationW or 1, self.dilationH or 1
  check_pool(self, input, dilW, dilH)
  local d = input:dim()
  self.iheight, self.iwidth = input:size(d - 1), input:size(d)
  local out, idx = call(self, torch.max_pool2d_with_indices, input, { self.kH, self.kW }, { self.dH, self.dW },
    { self.padH, self.padW }, { dilH, dilW }, self.ceil_mode)
  own(self, "indices", idx)
  return own(self, "output", out)
end

function SpatialMaxPooling:updateGradInput(input, gradOutput)
  check_grad(self, gradOutput, self.indices)
  return own(self, "gradInput", call(self, torch.max_pool2d_backward, gradOutput, self.indices, input:size():totable()))
end

function SpatialMaxPooling:empty() return self:clearState() end

function SpatialMaxPooling:clearState()
  if self.indices then self.indices:set() end
  return parent.clearState(self)
end

function SpatialMaxPooling:__tostring__()
  local s = ("%s(%dx%d, %d,%d"):format(torch.type(self), self.kW, self.kH, self.dW, self.dH)
  if (self.padW or 0) ~= 0 or (self.padH or 0) ~= 0 then s = s .. ", " .. self.padW .. "," .. self.padH end
  if self.dilationW then s = s .. ", " .. self.dilationW .. "," .. self.dilationH end
  return s .. ")"
end

-- nn.SpatialDilatedMaxPooling(kW, kH, dW, dH, padW, padH [, dilationW = 1, dilationH = 1]):
-- SpatialMaxPooling whose window reads every dilation-th element (a window spans
-- dilation * (k - 1) + 1 input elements)
local SpatialDilatedMaxPooling = torch.class("nn.SpatialDilatedMaxPooling", "nn.SpatialMaxPooling")

function SpatialDilatedMaxPooling:__init(kW, kH, dW, dH, padW, padH, dilationW, dilationH)
  SpatialMaxPooling.__init(self, kW, kH, dW, dH, padW, padH)
  local cls = torch.type(self)
  self.dilationW = check_int(cls, "dilationW", dilationW or 1, 1)
  self.dilationH = check_int(cls, "dilationH", dilationH or 1, 1)
end

-- nn.SpatialMaxUnpooling(poolingModule): the inverse of a SpatialMaxPooling whose kernel
-- equals its stride: each input value goes back to where the pooling's last forward found
-- its maximum, zeros elsewhere; the output has the pooling's input size
local SpatialMaxUnpooling, parent_unpool = torch.class("nn.SpatialMaxUnpooling", "nn.Module")

function SpatialMaxUnpooling:__init(poolingModule)
  parent_unpool.__init(self)
  if torch.type(poolingModule) ~= "nn.SpatialMaxPooling" then
    error("nn.SpatialMaxUnpooling: the argument must be a nn.SpatialMaxPooling module, got "
      .. torch.type(poolingModule), 2)
  end
  if poolingModule.kH ~= poolingModule.dH or poolingModule.kW ~= poolingModule.dW then
    error("nn.SpatialMaxUnpooling: the pooling module's kernel size must equal its stride", 2)
  end
  self.pooling = poolingModule
end

function SpatialMaxUnpooling:setParams()
  self.indices = self.pooling.indices
  self.oheight = self.pooling.iheight
  self.owidth = self.pooling.iwidth
end

local function check_unpool(self, input)
  check_dims(self, input, 3, 4, "3D or 4D (batch mode) tensor")
  if not self.oheight or not self.indices or not input:isSameSizeAs(self.indices) then
    error(("%s: the input (size %s) must have the size of the pooling module's last output (%s)")
      :format(torch.type(self), shape(input), self.indices and self.indices:dim() > 0 and shape(self.indices) or "none yet"), 3)
  end
end

function SpatialMaxUnpooling:updateOutput(input)
  self:setParams()
  check_unpool(self, input)
  local size = input:size():totable()
  size[#size - 1], size[#size] = self.oheight, self.owidth
  -- the values scattered into zeros at the plane positions: max pooling's backward
  return own(self, "output", call(self, torch.max_pool2d_backward, input, self.indices, size))
end

function SpatialMaxUnpooling:updateGradInput(input, gradOutput)
  self:setParams()
  check_unpool(self, input)
  local d = input:dim()
  local planes = input:nElement() / (input:size(d - 1) * input:size(d))
  local osize = input:size():totable()
  osize[d - 1], osize[d] = self.oheight, self.owidth
  if not gradOutput:isSize(torch.LongStorage(osize)) then
    error(("%s: gradOutput of size %s expected, got %s"):format(torch.type(self), table.concat(osize, "x"), shape(gradOutput)), 2)
  end
  local g = gradOutput:contiguous():view(planes, self.oheight * self.owidth)
  local gi = torch.gather(g, 2, self.indices:contiguous():view(planes, -1))
  return own(self, "gradInput", gi:viewAs(input))
end

function SpatialMaxUnpooling:empty() return self:clearState() end

function SpatialMaxUnpooling:__tostring__()
  return "nn.SpatialMaxUnpooling associated to " .. tostring(self.pooling)
end

---------------------------------------------------------------------------------------------
-- nn.SpatialFractionalMaxPooling(poolSizeW, poolSizeH, outW, outH) or (poolSizeW,
-- poolSizeH, ratioW, ratioH): max pooling over poolSize windows placed pseudo-randomly
-- (Graham's fractional max pooling) so that the output is outH x outW, or
-- floor(H * ratioH) x floor(W * ratioW) for ratios in (0, 1). Each plane draws two
-- uniforms (randomSamples, N x C x 2) per forward, unless :fixPoolingRegions() keeps them.
local SpatialFractionalMaxPooling, parent_frac = torch.class("nn.SpatialFractionalMaxPooling", "nn.Module")

function SpatialFractionalMaxPooling:__init(poolSizeW, poolSizeH, arg1, arg2)
  parent_frac.__init(self)
  local cls = torch.type(self)
  self.poolSizeW = check_int(cls, "poolSizeW", poolSizeW, 2)
  self.poolSizeH = check_int(cls, "poolSizeH", poolSizeH, 2)
  if type(arg1) ~= "number" or type(arg2) ~= "number" then
    error(cls .. ": the output size (outW, outH) or the ratios (ratioW, ratioH) must be numbers", 2)
  end
  self.randomSamples = nil
  self.newRandomPool = false
  if arg1 >= 1 and arg2 >= 1 then
    self.outW = check_int(cls, "outW", arg1, 1)
    self.outH = check_int(cls, "outH", arg2, 1)
  else
    if not (arg1 > 0 and arg1 < 1 and arg2 > 0 and arg2 < 1) then
      error(("%s: the ratios must be in (0, 1), got %s, %s"):format(cls, tostring(arg1), tostring(arg2)), 2)
    end
    self.ratioW, self.ratioH = arg1, arg2
  end
end

function SpatialFractionalMaxPooling:fixPoolingRegions(val)
  if val == nil then val = true end
  self.newRandomPool = val
  return self
end

function SpatialFractionalMaxPooling:getOutputSizes_(input)
  local d = input:dim()
  if self.ratioW then
    local ow = math.floor(input:size(d) * self.ratioW)
    local oh = math.floor(input:size(d - 1) * self.ratioH)
    if ow < 1 or oh < 1 then
      error(torch.type(self) .. ": the reduction ratio or the input size is too small (an output of 0 elements)", 3)
    end
    return ow, oh
  end
  return self.outW, self.outH
end

-- new uniforms per forward (kept when fixed, unless the batch or plane count changed)
function SpatialFractionalMaxPooling:initSampleBuffer_(input)
  local n = input:dim() == 4 and input:size(1) or 1
  local c = input:size(input:dim() - 2)
  local r = self.randomSamples
  if r == nil or torch.type(r) ~= torch.type(input) then
    self.randomSamples = input.new(n, c, 2):uniform()
  elseif r:size(1) ~= n or r:size(2) ~= c then
    r:resize(n, c, 2):uniform()
  elseif not self.newRandomPool then
    r:uniform()
  end
end

-- the window starts (0-based) of one dim, from one uniform sample, as THNN computed them
-- (in the tensor's precision)
local function f32(x) return (string.unpack("f", string.pack("f", x))) end
local function intervals(u, n, out, pool, single)
  local r = single and f32 or function(x) return x end
  local seq = {}
  if out > 1 then
    local alpha = r((n - pool) / (out - 1))
    local base = math.floor(r(u * alpha))
    for i = 0, out - 2 do seq[i + 1] = math.floor(r(r(i + u) * alpha)) - base end
  end
  seq[out] = n - pool
  return seq
end

function SpatialFractionalMaxPooling:updateOutput(input)
  check_dims(self, input, 3, 4, "3D or 4D (batch mode) tensor")
  local cls = torch.type(self)
  local d = input:dim()
  local h, w = input:size(d - 1), input:size(d)
  local ow, oh = self:getOutputSizes_(input)
  local pw, ph = self.poolSizeW, self.poolSizeH
  if oh + ph - 1 >= h then
    error(("%s: poolSizeH (%d) too large relative to input height (%d) for %d output rows"):format(cls, ph, h, oh), 2)
  end
  if ow + pw - 1 >= w then
    error(("%s: poolSizeW (%d) too large relative to input width (%d) for %d output columns"):format(cls, pw, w, ow), 2)
  end
  self:initSampleBuffer_(input)
  local planes = input:nElement() / (h * w)
  local samples = self.randomSamples:contiguous():view(planes, 2)
  local single = torch.type(input) == "torch.FloatTensor"
  -- window starts per plane: rows (planes x oh), columns (planes x ow)
  local rows, cols = {}, {}
  for p = 1, planes do
    rows[p] = intervals(samples[p][2], h, oh, ph, single)
    cols[p] = intervals(samples[p][1], w, ow, pw, single)
  end
  local R = torch.LongTensor(rows):view(planes, oh, 1, 1, 1)
  local C = torch.LongTensor(cols):view(planes, 1, ow, 1, 1)
  local DH = torch.range(0, ph - 1):long():view(1, 1, 1, ph, 1)
  local DW = torch.range(0, pw - 1):long():view(1, 1, 1, 1, pw)
  local size = { planes, oh, ow, ph, pw }
  -- 1-based plane positions of every window element: (row + dh) * w + col + dw + 1
  local pos = torch.LongTensor(table.unpack(size))
  pos:copy(R:expand(table.unpack(size))):add(DH:expand(table.unpack(size))):mul(w)
  pos:add(C:expand(table.unpack(size))):add(DW:expand(table.unpack(size))):add(1)
  pos = pos:view(planes, oh * ow, ph * pw)
  local vals = torch.gather(input:contiguous():view(planes, h * w), 2, pos:view(planes, -1))
  -- the first maximum of each window in reading order, as THNN's scan kept it
  local maxv, arg = torch.max(vals:view(planes, oh * ow, ph * pw), 3)
  local idx = torch.gather(pos, 3, arg)
  local osize = input:size():totable()
  osize[d - 1], osize[d] = oh, ow
  self.indices = idx:view(table.unpack(osize))
  return own(self, "output", maxv:view(table.unpack(osize)))
end

function SpatialFractionalMaxPooling:updateGradInput(input, gradOutput)
  if self.randomSamples == nil or not self.indices then
    error(torch.type(self) .. ": call updateOutput/forward before updateGradInput", 2)
  end
  check_grad(self, gradOutput, self.indices)
  return own(self, "gradInput", call(self, torch.max_pool2d_backward, gradOutput, self.indices, input:size():totable()))
end

function SpatialFractionalMaxPooling:empty() return self:clearState() end

function SpatialFractionalMaxPooling:clearState()
  self.indices = nil
  self.randomSamples = nil
  return parent_frac.clearState(self)
end

function SpatialFractionalMaxPooling:__tostring__()
  return ("%s(%sx%s, %d,%d)"):format(torch.type(self), tostring(self.outW or self.ratioW),
    tostring(self.outH or self.ratioH), self.poolSizeW, self.poolSizeH)
end

---------------------------------------------------------------------------------------------
-- nn.SpatialAveragePooling(kW, kH [, dW = 1, dH = 1, padW = 0, padH = 0]): the mean of each
-- kW x kH window (zero padding); :ceil() / :floor() round the output size;
-- :setCountExcludePad() divides by the window's elements inside the input instead of
-- kW * kH; divide = false gives the sums (kept for old saved models)
local SpatialAveragePooling, parent_avg = torch.class("nn.SpatialAveragePooling", "nn.Module")

function SpatialAveragePooling:__init(kW, kH, dW, dH, padW, padH)
  parent_avg.__init(self)
  local cls = torch.type(self)
  self.kW = check_int(cls, "kW", kW, 1)
  self.kH = check_int(cls, "kH", kH, 1)
  self.dW = check_int(cls, "dW", dW or 1, 1)
  self.dH = check_int(cls, "dH", dH or 1, 1)
  self.padW = check_int(cls, "padW", padW or 0, 0)
  self.padH = check_int(cls, "padH", padH or 0, 0)
  self.ceil_mode = false
  self.count_include_pad = true
  self.divide = true
end

function SpatialAveragePooling:ceil() self.ceil_mode = true; return self end
function SpatialAveragePooling:floor() self.ceil_mode = false; return self end
function SpatialAveragePooling:setCountIncludePad() self.count_include_pad = true; return self end
function SpatialAveragePooling:setCountExcludePad() self.count_include_pad = false; return self end

-- modules saved before ceil_mode existed
local function avg_defaults(self)
  if self.ceil_mode == nil then
    self.ceil_mode, self.count_include_pad, self.padW, self.padH = false, true, 0, 0
  end
end

function SpatialAveragePooling:updateOutput(input)
  avg_defaults(self)
  check_pool(self, input)
  local out = call(self, torch.avg_pool2d, input, { self.kH, self.kW }, { self.dH, self.dW }, { self.padH, self.padW },
    self.ceil_mode, self.count_include_pad)
  if self.divide == false then out:mul(self.kW * self.kH) end
  return own(self, "output", out)
end

function SpatialAveragePooling:updateGradInput(input, gradOutput)
  if self.gradInput then
    avg_defaults(self)
    check_pool(self, input)
    local gi = call(self, torch.avg_pool2d_backward, gradOutput, input:size():totable(), { self.kH, self.kW },
      { self.dH, self.dW }, { self.padH, self.padW }, self.ceil_mode, self.count_include_pad)
    if self.divide == false then gi:mul(self.kW * self.kH) end
    return own(self, "gradInput", gi)
  end
end

function SpatialAveragePooling:__tostring__()
  local s = ("%s(%dx%d, %d,%d"):format(torch.type(self), self.kW, self.kH, self.dW, self.dH)
  if (self.padW or 0) ~= 0 or (self.padH or 0) ~= 0 then s = s .. ", " .. self.padW .. "," .. self.padH end
  return s .. ")"
end

-- nn.SpatialLPPooling(nInputPlane, pnorm, kW, kH [, dW = kW, dH = kH]): the p-norm of each
-- window, (sum x^p)^(1/p) (Torch7 built it as Power, AveragePooling, MulConstant, Power;
-- here it is computed directly, with no parameters)
local SpatialLPPooling, parent_lp = torch.class("nn.SpatialLPPooling", "nn.Module")

function SpatialLPPooling:__init(nInputPlane, pnorm, kW, kH, dW, dH)
  parent_lp.__init(self)
  local cls = torch.type(self)
  if type(pnorm) ~= "number" or pnorm == 0 then
    error(cls .. ": pnorm must be a non-zero number, got " .. tostring(pnorm), 2)
  end
  self.nInputPlane = nInputPlane
  self.pnorm = pnorm
  self.kW = check_int(cls, "kW", kW, 1)
  self.kH = check_int(cls, "kH", kH, 1)
  self.dW = check_int(cls, "dW", dW or kW, 1)
  self.dH = check_int(cls, "dH", dH or kH, 1)
  self.padW, self.padH = 0, 0
end

local function lp_args(self) return { self.kH, self.kW }, { self.dH, self.dW }, { 0, 0 }, false, true end

function SpatialLPPooling:updateOutput(input)
  check_pool(self, input)
  if self.nInputPlane and input:size(input:dim() - 2) ~= self.nInputPlane then
    error(("%s: input of %d planes expected, got size %s"):format(torch.type(self), self.nInputPlane, shape(input)), 2)
  end
  local p = self.pnorm
  local xp = p == 2 and torch.cmul(input, input) or torch.pow(input, p)
  -- the window sums of x^p
  self._sums = call(self, torch.avg_pool2d, xp, lp_args(self)):mul(self.kW * self.kH)
  local out = p == 2 and torch.sqrt(self._sums) or torch.pow(self._sums, 1 / p)
  return own(self, "output", out)
end

-- d/dx (sum x^p)^(1/p) = s^(1/p - 1) x^(p - 1)
function SpatialLPPooling:updateGradInput(input, gradOutput)
  check_grad(self, gradOutput, self.output)
  local p = self.pnorm
  local gs = torch.cmul(gradOutput, p == 2 and torch.cdiv(self.output:clone():fill(1), self.output)
    or torch.pow(self._sums, 1 / p - 1))
  local gi = call(self, torch.avg_pool2d_backward, gs, input:size():totable(), lp_args(self)):mul(self.kW * self.kH)
  if p ~= 1 then gi:cmul(p == 2 and input or torch.pow(input, p - 1)) end
  return own(self, "gradInput", gi)
end

function SpatialLPPooling:clearState()
  nn.utils.clear(self, "_sums")
  return parent_lp.clearState(self)
end

function SpatialLPPooling:__tostring__()
  return ("%s(%s, %dx%d, %d,%d)"):format(torch.type(self), tostring(self.pnorm), self.kW, self.kH, self.dW, self.dH)
end

---------------------------------------------------------------------------------------------
-- nn.SpatialAdaptiveMaxPooling(W, H): max pooling whose windows adapt to the input so that
-- the output is H x W (window i of n over m elements: floor(i m / n) to ceil((i + 1) m / n));
-- indices as SpatialMaxPooling's
local SpatialAdaptiveMaxPooling, parent_amax = torch.class("nn.SpatialAdaptiveMaxPooling", "nn.Module")

function SpatialAdaptiveMaxPooling:__init(W, H)
  parent_amax.__init(self)
  local cls = torch.type(self)
  self.W = check_int(cls, "W", W, 1)
  self.H = check_int(cls, "H", H, 1)
end

function SpatialAdaptiveMaxPooling:updateOutput(input)
  check_dims(self, input, 3, 4, "3D or 4D (batch mode) tensor")
  local out, idx = call(self, torch.adaptive_max_pool2d, input, { self.H, self.W })
  if torch.type(self.indices) == "torch.LongTensor" then self.indices:set(idx) else self.indices = idx end
  return own(self, "output", out)
end

function SpatialAdaptiveMaxPooling:updateGradInput(input, gradOutput)
  check_grad(self, gradOutput, self.indices)
  return own(self, "gradInput", call(self, torch.max_pool2d_backward, gradOutput, self.indices, input:size():totable()))
end

function SpatialAdaptiveMaxPooling:empty() return self:clearState() end

function SpatialAdaptiveMaxPooling:clearState()
  if self.indices then self.indices:set() end
  return parent_amax.clearState(self)
end

function SpatialAdaptiveMaxPooling:__tostring__()
  return ("%s(%dx%d)"):format(torch.type(self), self.W, self.H)
end

-- nn.SpatialAdaptiveAveragePooling(W, H): the means over the adaptive windows (as
-- SpatialAdaptiveMaxPooling's) giving an H x W output
local SpatialAdaptiveAveragePooling, parent_aavg = torch.class("nn.SpatialAdaptiveAveragePooling", "nn.Module")

function SpatialAdaptiveAveragePooling:__init(W, H)
  parent_aavg.__init(self)
  local cls = torch.type(self)
  self.W = check_int(cls, "W", W, 1)
  self.H = check_int(cls, "H", H, 1)
end

function SpatialAdaptiveAveragePooling:updateOutput(input)
  check_dims(self, input, 3, 4, "3D or 4D (batch mode) tensor")
  return own(self, "output", call(self, torch.adaptive_avg_pool2d, input, { self.H, self.W }))
end

function SpatialAdaptiveAveragePooling:updateGradInput(input, gradOutput)
  check_grad(self, gradOutput, self.output)
  return own(self, "gradInput", call(self, torch.adaptive_avg_pool2d_backward, gradOutput, input:size():totable()))
end

function SpatialAdaptiveAveragePooling:empty() return self:clearState() end

function SpatialAdaptiveAveragePooling:__tostring__()
  return ("%s(%dx%d)"):format(torch.type(self), self.W, self.H)
end

---------------------------------------------------------------------------------------------
-- padding: pads = {left, right, top, bottom [, front, back]} of the last 2 (3) dims;
-- negative values crop. Reflection and replication pad the cropped input.

-- the input cropped by the negative pads, and the positive pads
local function crop(input, pads)
  local d = input:dim()
  local c, pos, cropped = input, {}, false
  for i = 1, #pads, 2 do
    local dim = d - (i - 1) / 2
    local a, b = pads[i], pads[i + 1]
    if a < 0 or b < 0 then
      local lo, hi = math.max(-a, 0), math.max(-b, 0)
      c = c:narrow(dim, lo + 1, c:size(dim) - lo - hi)
      cropped = true
    end
    pos[i], pos[i + 1] = math.max(a, 0), math.max(b, 0)
  end
  return c, pos, cropped
end

local function check_padded_size(self, input, pads)
  local d = input:dim()
  for i = 1, #pads, 2 do
    local dim = d - (i - 1) / 2
    if input:size(dim) + pads[i] + pads[i + 1] < 1 then
      error(("%s: input (size %s) is too small for the padding (an empty dim %d)"):format(torch.type(self), shape(input), dim), 3)
    end
  end
end

local function pad_forward(self, input, pads, mode)
  check_padded_size(self, input, pads)
  local c, pos = crop(input, pads)
  if mode ~= "constant" then
    local d = c:dim()
    for i = 1, #pos, 2 do
      local dim = d - (i - 1) / 2
      local n = c:size(dim)
      if mode == "reflect" and (pos[i] >= n or pos[i + 1] >= n) then
        error(("%s: the padding (%d, %d) must be smaller than the input's dim %d (%d)")
          :format(torch.type(self), pos[i], pos[i + 1], dim, n), 3)
      end
    end
  end
  return own(self, "output", call(self, torch.pad, c, pos, mode))
end

local function pad_backward(self, input, gradOutput, pads, mode)
  local d = input:dim()
  local ok = torch.isTensor(gradOutput) and gradOutput:dim() == d
  for i = 1, d do
    if not ok then break end
    local extra = 0
    local k = d - i   -- 0 for the last dim
    if 2 * k + 2 <= #pads then extra = pads[2 * k + 1] + pads[2 * k + 2] end
    ok = gradOutput:size(i) == input:size(i) + extra
  end
  if not ok then
    error(("%s: input and gradOutput must be compatible in size (input %s, gradOutput %s)"):format(torch.type(self),
      shape(input), torch.isTensor(gradOutput) and shape(gradOutput) or torch.type(gradOutput)), 3)
  end
  local c, pos, cropped = crop(input, pads)
  local g = call(self, torch.pad_backward, gradOutput, c:size():totable(), pos, mode)
  if not cropped then return own(self, "gradInput", g) end
  local gi = self.gradInput
  if torch.type(gi) ~= torch.type(input) then gi = input.new(); self.gradInput = gi end
  gi:resizeAs(input):zero()
  local view = gi
  for i = 1, #pads, 2 do
    local dim = d - (i - 1) / 2
    local lo, hi = math.max(-pads[i], 0), math.max(-pads[i + 1], 0)
    view = view:narrow(dim, lo + 1, view:size(dim) - lo - hi)
  end
  view:copy(g)
  return gi
end

-- nn.SpatialZeroPadding(left [, right, top, bottom]): zeros around the last two dims
local SpatialZeroPadding, parent_zp = torch.class("nn.SpatialZeroPadding", "nn.Module")

local function pad4(self, cls, l, r, t, b)
  self.pad_l = check_int(cls, "pad_l", l)
  self.pad_r = check_int(cls, "pad_r", r or l)
  self.pad_t = check_int(cls, "pad_t", t or l)
  self.pad_b = check_int(cls, "pad_b", b or l)
end

local function pads4(self) return { self.pad_l, self.pad_r, self.pad_t, self.pad_b } end

local function pad4_tostring(self)
  return ("%s(l=%d, r=%d, t=%d, b=%d)"):format(torch.type(self), self.pad_l, self.pad_r, self.pad_t, self.pad_b)
end

function SpatialZeroPadding:__init(l, r, t, b)
  parent_zp.__init(self)
  pad4(self, torch.type(self), l, r, t, b)
end

function SpatialZeroPadding:updateOutput(input)
  check_dims(self, input, 3, 4, "3D or 4D (batch mode) tensor")
  return pad_forward(self, input, pads4(self), "constant")
end

function SpatialZeroPadding:updateGradInput(input, gradOutput)
  check_dims(self, input, 3, 4, "3D or 4D (batch mode) tensor")
  return pad_backward(self, input, gradOutput, pads4(self), "constant")
end

SpatialZeroPadding.__tostring__ = pad4_tostring

-- nn.SpatialReflectionPadding(left [, right, top, bottom]): the input mirrored at its
-- edges (the edge itself not repeated); a pad must be smaller than the dim it pads
local SpatialReflectionPadding, parent_rp = torch.class("nn.SpatialReflectionPadding", "nn.Module")

function SpatialReflectionPadding:__init(l, r, t, b)
  parent_rp.__init(self)
  pad4(self, torch.type(self), l, r, t, b)
end

function SpatialReflectionPadding:updateOutput(input)
  check_dims(self, input, 3, 4, "3D or 4D (batch mode) tensor")
  return pad_forward(self, input, pads4(self), "reflect")
end

function SpatialReflectionPadding:updateGradInput(input, gradOutput)
  check_dims(self, input, 3, 4, "3D or 4D (batch mode) tensor")
  return pad_backward(self, input, gradOutput, pads4(self), "reflect")
end

SpatialReflectionPadding.__tostring__ = pad4_tostring

-- nn.SpatialReplicationPadding(left [, right, top, bottom]): the edge values repeated
local SpatialReplicationPadding, parent_rep = torch.class("nn.SpatialReplicationPadding", "nn.Module")

function SpatialReplicationPadding:__init(l, r, t, b)
  parent_rep.__init(self)
  pad4(self, torch.type(self), l, r, t, b)
end

function SpatialReplicationPadding:updateOutput(input)
  check_dims(self, input, 3, 4, "3D or 4D (batch mode) tensor")
  return pad_forward(self, input, pads4(self), "replicate")
end

function SpatialReplicationPadding:updateGradInput(input, gradOutput)
  check_dims(self, input, 3, 4, "3D or 4D (batch mode) tensor")
  return pad_backward(self, input, gradOutput, pads4(self), "replicate")
end

SpatialReplicationPadding.__tostring__ = pad4_tostring

-- nn.VolumetricReplicationPadding(left [, right, top, bottom, front, back]): edge values
-- repeated around the last three dims of (C x T x H x W) or (N x C x T x H x W)
local VolumetricReplicationPadding, parent_vrep = torch.class("nn.VolumetricReplicationPadding", "nn.Module")

function VolumetricReplicationPadding:__init(pleft, pright, ptop, pbottom, pfront, pback)
  parent_vrep.__init(self)
  local cls = torch.type(self)
  self.pleft = check_int(cls, "pleft", pleft)
  self.pright = check_int(cls, "pright", pright or pleft)
  self.ptop = check_int(cls, "ptop", ptop or pleft)
  self.pbottom = check_int(cls, "pbottom", pbottom or pleft)
  self.pfront = check_int(cls, "pfront", pfront or pleft)
  self.pback = check_int(cls, "pback", pback or pleft)
end

local function pads6(self) return { self.pleft, self.pright, self.ptop, self.pbottom, self.pfront, self.pback } end

function VolumetricReplicationPadding:updateOutput(input)
  check_dims(self, input, 4, 5, "4D or 5D (batch mode) tensor")
  return pad_forward(self, input, pads6(self), "replicate")
end

function VolumetricReplicationPadding:updateGradInput(input, gradOutput)
  check_dims(self, input, 4, 5, "4D or 5D (batch mode) tensor")
  return pad_backward(self, input, gradOutput, pads6(self), "replicate")
end

function VolumetricReplicationPadding:__tostring__()
  return ("%s(left=%d, right=%d, top=%d, bottom=%d, front=%d, back=%d)"):format(torch.type(self),
    self.pleft, self.pright, self.ptop, self.pbottom, self.pfront, self.pback)
end

---------------------------------------------------------------------------------------------
-- up-sampling

local function check_scale(cls, scale)
  if type(scale) ~= "number" or scale < 1 then
    error(cls .. ": scale_factor must be a number of at least 1, got " .. tostring(scale), 4)
  end
  if math.floor(scale) ~= scale then
    error(cls .. ": scale_factor must be an integer, got " .. tostring(scale), 4)
  end
  return math.tointeger(scale)
end

-- the sizes of an input with its last n dims changed to sizes
local function resized(input, sizes)
  local s = input:size():totable()
  for i = 1, #sizes do s[#s - #sizes + i] = sizes[i] end
  return s
end

-- nearest-neighbour 2-D resize of a 3-D or 4-D input: output o reads input floor(o / scale)
local function nearest2d(self, input, oh, ow, scale)
  local x, was3 = as4d(input:contiguous())
  local out = call(self, torch.upsample_nearest2d, x, { oh, ow }, scale, scale)
  if was3 then out = out:view(table.unpack(resized(input, { oh, ow }))) end
  return out
end

local function nearest2d_backward(self, input, gradOutput, oh, ow, scale)
  local g = as4d(gradOutput:contiguous())
  local isize = input:dim() == 3 and { 1, input:size(1), input:size(2), input:size(3) } or input:size():totable()
  local gi = call(self, torch.upsample_nearest2d_backward, g, { oh, ow }, isize, scale, scale)
  return gi:viewAs(input)
end

-- bilinear 2-D resize with the corners aligned (THNN's: output o samples input
-- o * (in - 1) / (out - 1))
local function bilinear2d(self, input, oh, ow)
  local x, was3 = as4d(input:contiguous())
  local out = call(self, torch.upsample_bilinear2d, x, { oh, ow }, true)
  if was3 then out = out:view(table.unpack(resized(input, { oh, ow }))) end
  return out
end

local function bilinear2d_backward(self, input, gradOutput, oh, ow)
  local g = as4d(gradOutput:contiguous())
  local isize = input:dim() == 3 and { 1, input:size(1), input:size(2), input:size(3) } or input:size():totable()
  local gi = call(self, torch.upsample_bilinear2d_backward, g, { oh, ow }, isize, true)
  return gi:viewAs(input)
end

-- nn.SpatialUpSamplingNearest(scale): each pixel repeated scale x scale times (H*s x W*s)
local SpatialUpSamplingNearest, parent_usn = torch.class("nn.SpatialUpSamplingNearest", "nn.Module")

function SpatialUpSamplingNearest:__init(scale)
  parent_usn.__init(self)
  self.scale_factor = check_scale(torch.type(self), scale)
  self.inputSize = torch.LongStorage(4)
  self.outputSize = torch.LongStorage(4)
end

local function record_sizes(self, input, oh, ow)
  local d = input:dim()
  for i = 1, d do self.inputSize[i] = input:size(i); self.outputSize[i] = input:size(i) end
  self.outputSize[d - 1], self.outputSize[d] = oh, ow
end

function SpatialUpSamplingNearest:updateOutput(input)
  check_dims(self, input, 3, 4, "3D or 4D (batch mode) tensor")
  local d, s = input:dim(), self.scale_factor
  local oh, ow = input:size(d - 1) * s, input:size(d) * s
  record_sizes(self, input, oh, ow)
  return own(self, "output", nearest2d(self, input, oh, ow, s))
end

function SpatialUpSamplingNearest:updateGradInput(input, gradOutput)
  check_dims(self, input, 3, 4, "3D or 4D (batch mode) tensor")
  local d, s = input:dim(), self.scale_factor
  local oh, ow = input:size(d - 1) * s, input:size(d) * s
  if not gradOutput:isSize(torch.LongStorage(resized(input, { oh, ow }))) then
    error(("%s: gradOutput of size %s expected, got %s"):format(torch.type(self),
      table.concat(resized(input, { oh, ow }), "x"), shape(gradOutput)), 2)
  end
  return own(self, "gradInput", nearest2d_backward(self, input, gradOutput, oh, ow, s))
end

function SpatialUpSamplingNearest:__tostring__()
  return ("%s(%d)"):format(torch.type(self), self.scale_factor)
end

-- nn.SpatialUpSamplingBilinear(scale) or ({oheight = , owidth = }): bilinear resize to
-- (H*scale x W*scale) or the given size, corners aligned
local SpatialUpSamplingBilinear, parent_usb = torch.class("nn.SpatialUpSamplingBilinear", "nn.Module")

function SpatialUpSamplingBilinear:__init(params)
  parent_usb.__init(self)
  local cls = torch.type(self)
  if type(params) == "table" then
    self.owidth = check_int(cls, "owidth", params.owidth, 1)
    self.oheight = check_int(cls, "oheight", params.oheight, 1)
  else
    self.scale_factor = check_scale(cls, params)
  end
  self.inputSize = torch.LongStorage(4)
  self.outputSize = torch.LongStorage(4)
end

local function bilinear_size(self, input)
  local d = input:dim()
  if self.scale_factor then return input:size(d - 1) * self.scale_factor, input:size(d) * self.scale_factor end
  return self.oheight, self.owidth
end

function SpatialUpSamplingBilinear:setSize(input)
  local oh, ow = bilinear_size(self, input)
  record_sizes(self, input, oh, ow)
end

function SpatialUpSamplingBilinear:updateOutput(input)
  check_dims(self, input, 3, 4, "3D or 4D (batch mode) tensor")
  local oh, ow = bilinear_size(self, input)
  record_sizes(self, input, oh, ow)
  return own(self, "output", bilinear2d(self, input, oh, ow))
end

function SpatialUpSamplingBilinear:updateGradInput(input, gradOutput)
  check_dims(self, input, 3, 4, "3D or 4D (batch mode) tensor")
  local oh, ow = bilinear_size(self, input)
  if not gradOutput:isSize(torch.LongStorage(resized(input, { oh, ow }))) then
    error(("%s: gradOutput of size %s expected, got %s"):format(torch.type(self),
      table.concat(resized(input, { oh, ow }), "x"), shape(gradOutput)), 2)
  end
  return own(self, "gradInput", bilinear2d_backward(self, input, gradOutput, oh, ow))
end

function SpatialUpSamplingBilinear:clearState()
  nn.utils.clear(self, "_input", "_gradOutput")
  return parent_usb.clearState(self)
end

function SpatialUpSamplingBilinear:__tostring__()
  if self.scale_factor then return ("%s(%d)"):format(torch.type(self), self.scale_factor) end
  return ("%s(%d, %d)"):format(torch.type(self), self.oheight, self.owidth)
end

-- resampling one dim by a matrix: A is out x in; x's dim `dim` (of size in) becomes out
local function along(x, dim, A)
  local d = x:dim()
  local t = x:transpose(dim, d):contiguous()
  local n = t:size(d)
  local rows = t:nElement() / n
  local r = torch.mm(t:view(rows, n), A:t())
  local s = t:size():totable()
  s[d] = A:size(1)
  return r:view(table.unpack(s)):transpose(dim, d)
end

-- the resampling matrix (out x in) of one dim: nearest (input floor(o / scale)) or linear
-- with the corners aligned
local resample_cache = setmetatable({}, { __mode = "v" })
local function resample_matrix(proto, n, m, mode, scale)
  local key = table.concat({ torch.type(proto), n, m, mode, tostring(scale) }, ":")
  local A = resample_cache[key]
  if A then return A end
  A = proto.new(m, n):zero()
  for o = 0, m - 1 do
    if mode == "nearest" then
      A[o + 1][math.min(o // scale, n - 1) + 1] = 1
    else
      local r = m > 1 and (n - 1) / (m - 1) or 0
      local src = r * o
      local i0 = math.floor(src)
      if i0 > n - 1 then i0 = n - 1 end
      local lam = src - i0
      local i1 = i0 < n - 1 and i0 + 1 or i0
      A[o + 1][i0 + 1] = A[o + 1][i0 + 1] + (1 - lam)
      A[o + 1][i1 + 1] = A[o + 1][i1 + 1] + lam
    end
  end
  resample_cache[key] = A
  return A
end

-- nn.UpSampling(scale [, mode = 'nearest']) or ({[odepth =], oheight =, owidth =}, 'linear'):
-- up-sampling of (N x C x H x W) or (N x C x D x H x W): nearest repeats each element
-- scale times per dim; linear ('linear', 'bilinear' or 'trilinear') interpolates with the
-- corners aligned, to size * scale or to the given size
local UpSampling, parent_us = torch.class("nn.UpSampling", "nn.Module")

function UpSampling:__init(params, mode)
  parent_us.__init(self)
  local cls = torch.type(self)
  if mode == "linear" or mode == "bilinear" or mode == "trilinear" then
    self.mode = "linear"
  else
    self.mode = "nearest"
  end
  if type(params) == "table" then
    if self.mode == "nearest" then error(cls .. ": nearest neighbour upsampling requires a scale_factor", 2) end
    if params.owidth == nil or params.oheight == nil then
      error(cls .. ": output height and width (oheight, owidth) are required", 2)
    end
    self.owidth = check_int(cls, "owidth", params.owidth, 1)
    self.oheight = check_int(cls, "oheight", params.oheight, 1)
    if params.odepth ~= nil then self.odepth = check_int(cls, "odepth", params.odepth, 1) end
  else
    self.scale_factor = check_scale(cls, params)
  end
  self.inputSize = torch.LongStorage(5):fill(0)
  self.outputSize = torch.LongStorage(5):fill(0)
end

-- the output sizes of the resampled dims (2 or 3 of them)
function UpSampling:setSize(input)
  local d = input:dim()
  local k = d - 2
  if self.scale_factor == nil and k == 3 and self.odepth == nil then
    error(torch.type(self) .. ": no output depth (odepth) was given for a volumetric (5D) input", 3)
  end
  for i = 1, d do self.inputSize[i] = input:size(i); self.outputSize[i] = input:size(i) end
  local given = k == 3 and { self.odepth, self.oheight, self.owidth } or { self.oheight, self.owidth }
  local sizes = {}
  for i = 1, k do
    local dim = 2 + i
    sizes[i] = self.scale_factor and input:size(dim) * self.scale_factor or given[i]
    self.outputSize[dim] = sizes[i]
  end
  return sizes
end

local function check_upsampling(self, input)
  check_dims(self, input, 4, 5, "4D (spatial) or 5D (volumetric) tensor")
end

function UpSampling:updateOutput(input)
  check_upsampling(self, input)
  local sizes = self:setSize(input)
  local out
  if input:dim() == 4 then
    out = self.mode == "nearest" and nearest2d(self, input, sizes[1], sizes[2], self.scale_factor)
      or bilinear2d(self, input, sizes[1], sizes[2])
  else
    out = input
    for i = 1, 3 do
      out = along(out, 2 + i, resample_matrix(input, input:size(2 + i), sizes[i], self.mode, self.scale_factor))
    end
    out = out:contiguous()
  end
  return own(self, "output", out)
end

function UpSampling:updateGradInput(input, gradOutput)
  check_upsampling(self, input)
  local sizes = self:setSize(input)
  if not torch.isTensor(gradOutput) or not gradOutput:isSize(torch.LongStorage(resized(input, sizes))) then
    error(("%s: gradOutput of size %s expected, got %s"):format(torch.type(self),
      table.concat(resized(input, sizes), "x"), torch.isTensor(gradOutput) and shape(gradOutput) or torch.type(gradOutput)), 2)
  end
  local gi
  if input:dim() == 4 then
    gi = self.mode == "nearest" and nearest2d_backward(self, input, gradOutput, sizes[1], sizes[2], self.scale_factor)
      or bilinear2d_backward(self, input, gradOutput, sizes[1], sizes[2])
  else
    gi = gradOutput
    for i = 1, 3 do
      local A = resample_matrix(input, input:size(2 + i), sizes[i], self.mode, self.scale_factor)
      gi = along(gi, 2 + i, A:t())
    end
    gi = gi:contiguous()
  end
  return own(self, "gradInput", gi)
end

function UpSampling:__tostring__()
  if self.scale_factor then return ("%s(%dx, %s)"):format(torch.type(self), self.scale_factor, self.mode) end
  if self.odepth then
    return ("%s(%dx%dx%d, %s)"):format(torch.type(self), self.odepth, self.oheight, self.owidth, self.mode)
  end
  return ("%s(%dx%d, %s)"):format(torch.type(self), self.oheight, self.owidth, self.mode)
end

---------------------------------------------------------------------------------------------
-- nn.PixelShuffle(r): (N x) C*r*r x H x W -> (N x) C x H*r x W*r, output (c, h*r + i,
-- w*r + j) taking input channel c*r*r + i*r + j at (h, w) (sub-pixel convolution's shuffle)
local PixelShuffle, parent_ps = torch.class("nn.PixelShuffle", "nn.Module")

function PixelShuffle:__init(upscaleFactor)
  parent_ps.__init(self)
  self.upscaleFactor = check_int(torch.type(self), "upscaleFactor", upscaleFactor, 1)
  self.upscaleFactorSquared = self.upscaleFactor * self.upscaleFactor
end

function PixelShuffle:updateOutput(input)
  check_dims(self, input, 3, 4, "3D or 4D (batch mode) tensor")
  local c = input:size(input:dim() - 2)
  if c % self.upscaleFactorSquared ~= 0 then
    error(("%s: the input's %d channels are not a multiple of upscaleFactor^2 (%d)"):format(torch.type(self), c,
      self.upscaleFactorSquared), 2)
  end
  return own(self, "output", call(self, torch.pixel_shuffle, input, self.upscaleFactor):contiguous())
end

function PixelShuffle:updateGradInput(input, gradOutput)
  check_dims(self, input, 3, 4, "3D or 4D (batch mode) tensor")
  local r = self.upscaleFactor
  local d = input:dim()
  local want = resized(input, { input:size(d - 2) / self.upscaleFactorSquared, input:size(d - 1) * r, input:size(d) * r })
  if not torch.isTensor(gradOutput) or not gradOutput:isSize(torch.LongStorage(want)) then
    error(("%s: gradOutput of size %s expected"):format(torch.type(self), table.concat(want, "x")), 2)
  end
  return own(self, "gradInput", call(self, torch.pixel_unshuffle, gradOutput, r):contiguous())
end

function PixelShuffle:clearState()
  nn.utils.clear(self, "_intermediateShape", "_outShape", "_shuffleIn", "_shuffleOut")
  return parent_ps.clearState(self)
end

function PixelShuffle:__tostring__()
  return ("%s(%d)"):format(torch.type(self), self.upscaleFactor)
end

---------------------------------------------------------------------------------------------
-- nn.FeatureLPPooling(width, stride, power [, batch_mode = false]): Lp pooling across the
-- feature dim (the first, or the second in batch mode) of a 1-3-D input (2-4-D in batch
-- mode): output feature k is (sum_{i<width} x_{k*stride+i}^power)^(1/power), so that the
-- feature dim becomes (F - width) / stride + 1
local FeatureLPPooling, parent_flp = torch.class("nn.FeatureLPPooling", "nn.Module")

function FeatureLPPooling:__init(width, stride, power, batch_mode)
  parent_flp.__init(self)
  local cls = torch.type(self)
  if type(width) ~= "number" or width < 2 or width > 16 then error(cls .. ": width must be within 2 to 16", 2) end
  if type(stride) ~= "number" or stride < 1 or stride > 4 then error(cls .. ": stride must be within 1 to 4", 2) end
  if type(power) ~= "number" or power == 0 then error(cls .. ": power must be a non-zero number", 2) end
  self.width = math.tointeger(width) or width
  self.stride = math.tointeger(stride) or stride
  self.power = power
  self.batch_mode = batch_mode and true or false
end

-- the input as 4-D (batch x feature x opt1 x opt2), a view
local function flp_view(self, input)
  local d = input:dim()
  if self.batch_mode then
    check_dims(self, input, 2, 4, "a 2-4-D tensor (batch mode)")
  else
    check_dims(self, input, 1, 3, "a 1-3-D tensor")
  end
  local s = input:size():totable()
  if not self.batch_mode then table.insert(s, 1, 1) end
  while #s < 4 do s[#s + 1] = 1 end
  if s[2] < self.width then
    error(("%s: the feature dim (%d) must be at least width (%d)"):format(torch.type(self), s[2], self.width), 3)
  end
  return input:contiguous():view(table.unpack(s)), d
end

local function flp_out_size(self, input, nf)
  local s = input:size():totable()
  s[self.batch_mode and 2 or 1] = nf
  return s
end

function FeatureLPPooling:updateOutput(input)
  local x = flp_view(self, input)
  local nf = (x:size(2) - self.width) // self.stride + 1
  -- windows along the feature dim: (B, nf, o1, o2, width)
  local win = x:unfold(2, self.width, self.stride)
  local p = self.power
  local s = (p == 1 and win:clone() or torch.pow(win, p)):sum(5):select(5, 1)
  local out = p == 1 and s or torch.pow(s, 1 / p)
  return own(self, "output", out:contiguous():view(table.unpack(flp_out_size(self, input, nf))))
end

-- d y_k / d x_i = (x_i / y_k)^(p - 1), nothing where y_k is 0
function FeatureLPPooling:updateGradInput(input, gradOutput)
  local x = flp_view(self, input)
  local nf = (x:size(2) - self.width) // self.stride + 1
  if not torch.isTensor(gradOutput) or not gradOutput:isSize(torch.LongStorage(flp_out_size(self, input, nf))) then
    error(("%s: gradOutput of size %s expected"):format(torch.type(self),
      table.concat(flp_out_size(self, input, nf), "x")), 2)
  end
  local y = self.output:contiguous():view(x:size(1), nf, x:size(3), x:size(4))
  local g = gradOutput:contiguous():view(x:size(1), nf, x:size(3), x:size(4))
  local zero = y:eq(0)
  local ysafe = y:clone():maskedFill(zero, 1)
  local gz = g:clone():maskedFill(zero, 0)
  local win = x:unfold(2, self.width, self.stride)
  local size5 = { x:size(1), nf, x:size(3), x:size(4), self.width }
  local ratio = torch.cdiv(win, ysafe:view(x:size(1), nf, x:size(3), x:size(4), 1):expand(table.unpack(size5)))
  local p = self.power
  local term = p == 1 and ratio:fill(1) or (p == 2 and ratio or torch.pow(ratio, p - 1))
  term:cmul(gz:view(x:size(1), nf, x:size(3), x:size(4), 1):expand(table.unpack(size5)))
  local gi = x.new():resizeAs(x):zero()
  -- window element i of output k is input feature k*stride + i
  local span = (nf - 1) * self.stride + 1
  for i = 1, self.width do
    gi:narrow(2, i, span):unfold(2, 1, self.stride):select(5, 1):add(term:select(5, i))
  end
  return own(self, "gradInput", gi:viewAs(input))
end

function FeatureLPPooling:__tostring__()
  return ("%s(w%d s%d power %s batch %s)"):format(torch.type(self), self.width, self.stride, tostring(self.power),
    tostring(self.batch_mode))
end

return nn
