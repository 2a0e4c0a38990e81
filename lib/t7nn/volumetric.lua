-- t7nn/volumetric.lua — 3-D modules over volumes (C x T x H x W, or batches N x C x T x H x W):
-- convolutions (plain, dilated, transposed) and poolings (max, dilated max, average,
-- fractional max) and max unpooling.
--
-- Forward passes run the op library's 3-D ops (conv3d, conv_transpose3d, max_pool3d_with_indices,
-- avg_pool3d, max_unpool3d, fractional_max_pool3d). Those have no backward kernels of their
-- own: a gradient with respect to an input comes from the adjoint op where there is one
-- (conv_transpose3d for conv3d and the other way round, scatter/gather through the max
-- indices), and weight gradients come from autograd run over a detached copy of the
-- computation. The ops take sizes in (T, H, W) order; Torch7's constructors take (T, W, H).
local torch = require "torch"
local nn = require "t7nn.env"
local H = require "t7nn.helpers"
local shape, own, call = H.sizestr, H.own, H.call

---------------------------------------------------------------------------------------------
-- shared helpers

local function check_int(cls, name, v, min)
  if math.type(v) ~= "integer" and not (type(v) == "number" and v == math.floor(v)) then
    error(("%s: %s must be an integer, got %s"):format(cls, name, tostring(v)), 4)
  end
  if min and v < min then
    error(("%s: %s must be at least %d, got %d"):format(cls, name, min, v), 4)
  end
  return math.tointeger(v)
end

-- a volume or a batch of them (nPlanes planes when given); returns the dim of T
local function check_volume(self, input, nPlanes)
  local cls = torch.type(self)
  if not torch.isTensor(input) then
    error(("%s: expected a tensor input, got %s"):format(cls, torch.type(input)), 4)
  end
  local d = input:dim()
  if d ~= 4 and d ~= 5 then
    error(("%s: 4D or 5D (batch mode) tensor expected for input, got a %d-D tensor (size %s)")
      :format(cls, d, d > 0 and shape(input) or "empty"), 4)
  end
  if nPlanes and input:size(d - 3) ~= nPlanes then
    error(("%s: input has %d planes, expected %d (input size %s)"):format(cls, input:size(d - 3), nPlanes, shape(input)), 4)
  end
  if self.weight and input:type() ~= self.weight:type() then
    error(("%s: input is a %s but the module's weight is a %s (convert the module with :type())")
      :format(cls, input:type(), self.weight:type()), 4)
  end
  return d - 2
end

local function check_grad(self, gradOutput, sizes)
  local ok = torch.isTensor(gradOutput) and gradOutput:dim() == #sizes
  if ok then
    for i, s in ipairs(sizes) do if gradOutput:size(i) ~= s then ok = false end end
  end
  if not ok then
    error(("%s: gradOutput of size %s expected (the size of the output), got %s"):format(torch.type(self),
      table.concat(sizes, "x"), torch.isTensor(gradOutput) and shape(gradOutput) or torch.type(gradOutput)), 3)
  end
end

-- the sum of gradOutput over all dims but the plane dim
local function plane_sums(g)
  local d = g:dim()
  local s = g:sum(d):sum(d - 1):sum(d - 2)
  if d == 5 then s = s:sum(1) end
  return s:view(s:nElement())
end

-- the gradient of f(leaf) . gradOutput with respect to leaf, by autograd over a detached
-- copy (the module's tensors are never marked as requiring gradients)
local function autograd_wrt(leaf, gradOutput, f)
  local x = leaf:detach():clone():requires_grad_(true)
  local out = f(x)
  return torch.autograd.grad({ out }, { x }, { gradOutput })[1]
end

-- the adjoint of conv3d with respect to its input (of sizes input_sizes): conv_transpose3d
-- for unit strides, else autograd through conv3d (faster there: the op conv_transpose3d
-- spreads its input out by the stride)
local function conv3d_input_grad(gradOutput, w, input_sizes, stride, pad, dil)
  if stride[1] == 1 and stride[2] == 1 and stride[3] == 1 then
    return torch.conv_transpose3d(gradOutput, w, nil, stride, pad, 0, 1, dil)
  end
  local z = gradOutput.new(table.unpack(input_sizes)):zero():requires_grad_(true)
  local out = torch.conv3d(z, w, nil, stride, pad, dil, 1)
  return torch.autograd.grad({ out }, { z }, { gradOutput })[1]
end

-- planes x (volume elements): the flat view the indices address
local function planes_view(t, nvol)
  if not t:isContiguous() then t = t:contiguous() end
  return t:view(t:nElement() / nvol, nvol)
end

-- gradOutput added into zeros of input's size at the 1-based volume positions in indices
local function scatter_max_grad(input, gradOutput, indices)
  local d = input:dim()
  local vol = input:size(d - 2) * input:size(d - 1) * input:size(d)
  local ovol = indices:size(d - 2) * indices:size(d - 1) * indices:size(d)
  local gi = input.new(input:nElement() / vol, vol):zero()
  gi:scatterAdd(2, planes_view(indices, ovol), planes_view(gradOutput, ovol))
  return gi:view(input:size())
end

-- a convolution's planes, kernel size, strides (default 1) and paddings (default 0), checked
local function conv_geometry(self, cls, nInputPlane, nOutputPlane, kT, kW, kH, dT, dW, dH, padT, padW, padH)
  self.nInputPlane = check_int(cls, "nInputPlane", nInputPlane, 1)
  self.nOutputPlane = check_int(cls, "nOutputPlane", nOutputPlane, 1)
  self.kT = check_int(cls, "kT", kT, 1)
  self.kW = check_int(cls, "kW", kW, 1)
  self.kH = check_int(cls, "kH", kH, 1)
  self.dT = check_int(cls, "dT", dT or 1, 1)
  self.dW = check_int(cls, "dW", dW or 1, 1)
  self.dH = check_int(cls, "dH", dH or 1, 1)
  self.padT = check_int(cls, "padT", padT or 0, 0)
  self.padW = check_int(cls, "padW", padW or 0, 0)
  self.padH = check_int(cls, "padH", padH or 0, 0)
end

---------------------------------------------------------------------------------------------
-- nn.VolumetricConvolution(nInputPlane, nOutputPlane, kT, kW, kH [, dT = 1, dW = 1, dH = 1,
-- padT = 0, padW = padT, padH = padW]): the cross-correlation of each input volume with its
-- kernel, summed over input planes, plus a bias per output plane. weight: nOutputPlane x
-- nInputPlane x kT x kH x kW. Output size floor((T + 2 padT - kT) / dT) + 1 (H, W alike).
local VolumetricConvolution, parent = torch.class("nn.VolumetricConvolution", "nn.Module")

function VolumetricConvolution:__init(nInputPlane, nOutputPlane, kT, kW, kH, dT, dW, dH, padT, padW, padH)
  parent.__init(self)
  local cls = torch.type(self)
  conv_geometry(self, cls, nInputPlane, nOutputPlane, kT, kW, kH, dT, dW, dH, padT, padW or padT, padH or padW or padT)
  self.weight = torch.Tensor(nOutputPlane, nInputPlane, kT, kH, kW)
  self.bias = torch.Tensor(nOutputPlane)
  self.gradWeight = torch.Tensor(nOutputPlane, nInputPlane, kT, kH, kW)
  self.gradBias = torch.Tensor(nOutputPlane)
  self:reset()
end

function VolumetricConvolution:reset(stdv)
  stdv = stdv and stdv * math.sqrt(3) or 1 / math.sqrt(self.kT * self.kW * self.kH * self.nInputPlane)
  self.weight:uniform(-stdv, stdv)
  if self.bias then self.bias:uniform(-stdv, stdv) end
  return self
end

function VolumetricConvolution:noBias()
  self.bias, self.gradBias = nil, nil
  return self
end

-- stride, padding and dilation in the ops' (T, H, W) order
function VolumetricConvolution:_geometry()
  return { self.dT, self.dH, self.dW }, { self.padT, self.padH, self.padW },
    { self.dilationT or 1, self.dilationH or 1, self.dilationW or 1 }
end

-- the weight as the op takes it (5-D; a view of the module's)
function VolumetricConvolution:_kernelWeight()
  local w = self.weight
  if w:dim() ~= 5 then
    w = w:contiguous():view(self.nOutputPlane, self.nInputPlane, self.kT, self.kH, self.kW)
  end
  return w
end

-- the output's sizes for this input (an error when the input is too small)
function VolumetricConvolution:_outputSizes(input)
  local t = check_volume(self, input, self.nInputPlane)
  local _, _, dil = self:_geometry()
  local function out(n, k, d, pad, di) return math.floor((n + 2 * pad - di * (k - 1) - 1) / d) + 1 end
  local oT = out(input:size(t), self.kT, self.dT, self.padT, dil[1])
  local oH = out(input:size(t + 1), self.kH, self.dH, self.padH, dil[2])
  local oW = out(input:size(t + 2), self.kW, self.dW, self.padW, dil[3])
  if oT < 1 or oH < 1 or oW < 1 then
    error(("%s: input size %s is too small (calculated output size %dx%dx%d)")
      :format(torch.type(self), shape(input), oT, oH, oW), 3)
  end
  if input:dim() == 5 then return { input:size(1), self.nOutputPlane, oT, oH, oW } end
  return { self.nOutputPlane, oT, oH, oW }
end

function VolumetricConvolution:updateOutput(input)
  self:_outputSizes(input)
  local stride, pad, dil = self:_geometry()
  self.output:set(call(self, torch.conv3d, input, self:_kernelWeight(), self.bias, stride, pad, dil, 1))
  return self.output
end

function VolumetricConvolution:updateGradInput(input, gradOutput)
  if self.gradInput then
    check_grad(self, gradOutput, self:_outputSizes(input))
    local stride, pad, dil = self:_geometry()
    self.gradInput:set(call(self, conv3d_input_grad, gradOutput, self:_kernelWeight(), input:size():totable(),
      stride, pad, dil))
    return self.gradInput
  end
end

function VolumetricConvolution:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  check_grad(self, gradOutput, self:_outputSizes(input))
  local stride, pad, dil = self:_geometry()
  local x = input:detach()
  local gw = autograd_wrt(self:_kernelWeight(), gradOutput, function(w)
    return torch.conv3d(x, w, nil, stride, pad, dil, 1)
  end)
  self.gradWeight:view(gw:size()):add(scale, gw)
  if self.bias and self.gradBias then self.gradBias:add(scale, plane_sums(gradOutput)) end
end

function VolumetricConvolution:type(typename, tensorCache)
  if self.finput then self.finput = torch.Tensor() end
  if self.fgradInput then self.fgradInput = torch.Tensor() end
  return parent.type(self, typename, tensorCache)
end

function VolumetricConvolution:clearState()
  nn.utils.clear(self, "finput", "fgradInput", "_input", "_gradOutput")
  return parent.clearState(self)
end

-- "(a -> b, kTxkWxkH[, dT,dW,dH][, padT,padW,padH]" as Torch7 printed the 3-D convolutions
local function conv_desc(self)
  local s = ("%s(%d -> %d, %dx%dx%d"):format(torch.type(self), self.nInputPlane, self.nOutputPlane,
    self.kT, self.kW, self.kH)
  local padded = self.padT ~= 0 or self.padW ~= 0 or self.padH ~= 0
  if self.dT ~= 1 or self.dW ~= 1 or self.dH ~= 1 or padded then
    s = s .. (", %d,%d,%d"):format(self.dT, self.dW, self.dH)
  end
  if padded then s = s .. (", %d,%d,%d"):format(self.padT, self.padW, self.padH) end
  return s
end

function VolumetricConvolution:__tostring__()
  return conv_desc(self) .. ")"
end

---------------------------------------------------------------------------------------------
-- nn.VolumetricDilatedConvolution(nInputPlane, nOutputPlane, kT, kW, kH, dT, dW, dH, padT,
-- padW, padH [, dilationT = 1, dilationW = 1, dilationH = 1]): VolumetricConvolution whose
-- kernel taps are dilation apart; output size floor((T + 2 padT - dilationT (kT - 1) - 1) /
-- dT) + 1 (H, W alike)
local VolumetricDilatedConvolution = torch.class("nn.VolumetricDilatedConvolution", "nn.VolumetricConvolution")

function VolumetricDilatedConvolution:__init(nInputPlane, nOutputPlane, kT, kW, kH, dT, dW, dH, padT, padW, padH,
                                             dilationT, dilationW, dilationH)
  VolumetricConvolution.__init(self, nInputPlane, nOutputPlane, kT, kW, kH, dT, dW, dH, padT, padW, padH)
  local cls = torch.type(self)
  self.dilationT = check_int(cls, "dilationT", dilationT or 1, 1)
  self.dilationW = check_int(cls, "dilationW", dilationW or 1, 1)
  self.dilationH = check_int(cls, "dilationH", dilationH or 1, 1)
end

function VolumetricDilatedConvolution:__tostring__()
  return conv_desc(self) .. (", %d,%d,%d"):format(self.dilationT, self.dilationW, self.dilationH)
    .. (self.bias and ")" or ") without bias")
end

---------------------------------------------------------------------------------------------
-- nn.VolumetricFullConvolution(nInputPlane, nOutputPlane, kT, kW, kH [, dT, dW, dH = 1,
-- padT, padW, padH = 0, adjT, adjW, adjH = 0]): the transposed convolution (the adjoint of
-- VolumetricConvolution's map from input to output); weight nInputPlane x nOutputPlane x kT x
-- kH x kW. Output size (T - 1) dT - 2 padT + kT + adjT (H, W alike). The input may be
-- {input, target}: then the adjustments are chosen so that the output has target's last three
-- sizes (T, H, W), and gradInput is {gradInput, zeros of target's size}.
local VolumetricFullConvolution, parentF = torch.class("nn.VolumetricFullConvolution", "nn.Module")

function VolumetricFullConvolution:__init(nInputPlane, nOutputPlane, kT, kW, kH, dT, dW, dH, padT, padW, padH,
                                          adjT, adjW, adjH)
  parentF.__init(self)
  local cls = torch.type(self)
  conv_geometry(self, cls, nInputPlane, nOutputPlane, kT, kW, kH, dT, dW, dH, padT, padW, padH)
  self.adjT = check_int(cls, "adjT", adjT or 0, 0)
  self.adjW = check_int(cls, "adjW", adjW or 0, 0)
  self.adjH = check_int(cls, "adjH", adjH or 0, 0)
  if self.adjT > self.dT - 1 or self.adjW > self.dW - 1 or self.adjH > self.dH - 1 then
    error(("%s: adjT, adjW and adjH must be smaller than dT, dW and dH (got adj %d,%d,%d for strides %d,%d,%d)")
      :format(cls, self.adjT, self.adjW, self.adjH, self.dT, self.dW, self.dH), 2)
  end
  self.weight = torch.Tensor(nInputPlane, nOutputPlane, kT, kH, kW)
  self.gradWeight = torch.Tensor(nInputPlane, nOutputPlane, kT, kH, kW)
  self.bias = torch.Tensor(nOutputPlane)
  self.gradBias = torch.Tensor(nOutputPlane)
  self.ones = torch.Tensor()
  self:reset()
end

VolumetricFullConvolution.reset = VolumetricConvolution.reset
VolumetricFullConvolution.noBias = VolumetricConvolution.noBias
VolumetricFullConvolution.type = VolumetricConvolution.type
VolumetricFullConvolution.clearState = VolumetricConvolution.clearState

-- modules saved by older versions (weight nOutputPlane x nInputPlane, pT/pW/pH fields)
function VolumetricFullConvolution:backCompatibility()
  if not self.adjW then
    self.weight = self.weight:transpose(1, 2):contiguous()
    if self.gradWeight then self.gradWeight = self.gradWeight:transpose(1, 2):contiguous() end
  end
  self.padT = self.padT or self.pT or 0
  self.padW = self.padW or self.pW or 0
  self.padH = self.padH or self.pH or 0
  self.adjT, self.adjW, self.adjH = self.adjT or 0, self.adjW or 0, self.adjH or 0
end

-- the input tensor and the adjustments {T, H, W} (from the target's size for a table input)
function VolumetricFullConvolution:_unpack(input)
  self:backCompatibility()
  if type(input) == "table" and not torch.isTensor(input) then
    local x, target = input[1], input[2]
    if not torch.isTensor(x) or not torch.isTensor(target) or target:dim() < 3 then
      error(("%s: a table input must be {input, target} (target's last three dims give the output size)")
        :format(torch.type(self)), 3)
    end
    local d = target:dim()
    return x, { (target:size(d - 2) + 2 * self.padT - self.kT) % self.dT,
      (target:size(d - 1) + 2 * self.padH - self.kH) % self.dH,
      (target:size(d) + 2 * self.padW - self.kW) % self.dW }
  end
  return input, { self.adjT, self.adjH, self.adjW }
end

function VolumetricFullConvolution:_outputSizes(x, adj)
  local t = check_volume(self, x, self.nInputPlane)
  local oT = (x:size(t) - 1) * self.dT - 2 * self.padT + self.kT + adj[1]
  local oH = (x:size(t + 1) - 1) * self.dH - 2 * self.padH + self.kH + adj[2]
  local oW = (x:size(t + 2) - 1) * self.dW - 2 * self.padW + self.kW + adj[3]
  if oT < 1 or oH < 1 or oW < 1 then
    error(("%s: input size %s is too small (calculated output size %dx%dx%d)")
      :format(torch.type(self), shape(x), oT, oH, oW), 3)
  end
  if x:dim() == 5 then return { x:size(1), self.nOutputPlane, oT, oH, oW } end
  return { self.nOutputPlane, oT, oH, oW }
end

function VolumetricFullConvolution:_kernelWeight()
  local w = self.weight
  if w:dim() ~= 5 then
    w = w:contiguous():view(self.nInputPlane, self.nOutputPlane, self.kT, self.kH, self.kW)
  end
  return w
end

function VolumetricFullConvolution:_geometry()
  return { self.dT, self.dH, self.dW }, { self.padT, self.padH, self.padW }
end

function VolumetricFullConvolution:updateOutput(input)
  local x, adj = self:_unpack(input)
  local sizes = self:_outputSizes(x, adj)
  local stride, pad = self:_geometry()
  -- the adjoint of the convolution from the output's size to the input's
  local out = call(self, conv3d_input_grad, x, self:_kernelWeight(), sizes, stride, pad, { 1, 1, 1 })
  if self.bias then
    local b = self.bias:view(1, self.nOutputPlane, 1, 1, 1)
    if x:dim() == 4 then b = b:select(1, 1) end
    out:add(b:expandAs(out))
  end
  self.output:set(out)
  return self.output
end

function VolumetricFullConvolution:updateGradInput(input, gradOutput)
  if self.gradInput then
    local x, adj = self:_unpack(input)
    check_grad(self, gradOutput, self:_outputSizes(x, adj))
    local stride, pad = self:_geometry()
    if type(self.gradInput) == "table" and not torch.isTensor(self.gradInput) then
      self.gradInput = self.gradInput[1] or x.new()
    end
    -- the adjoint of the transposed convolution: the convolution with the same kernel
    self.gradInput:set(call(self, torch.conv3d, gradOutput, self:_kernelWeight(), nil, stride, pad, 1, 1))
    if not rawequal(x, input) then
      -- the target only gives a size: its gradient is zeros
      self.gradInput = { self.gradInput, H.size_target_grad(self, input[2]) }
    end
    return self.gradInput
  end
end

function VolumetricFullConvolution:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  local x, adj = self:_unpack(input)
  check_grad(self, gradOutput, self:_outputSizes(x, adj))
  local stride, pad = self:_geometry()
  -- the weight's gradient of <conv_transpose3d(x, w), gradOutput> is the one of
  -- <conv3d(gradOutput, w), x>: the convolution is the cheaper op
  local go = gradOutput:detach()
  local gw = autograd_wrt(self:_kernelWeight(), x, function(w)
    return torch.conv3d(go, w, nil, stride, pad, 1, 1)
  end)
  self.gradWeight:view(gw:size()):add(scale, gw)
  if self.bias and self.gradBias then self.gradBias:add(scale, plane_sums(gradOutput)) end
end

function VolumetricFullConvolution:__tostring__()
  local s = conv_desc(self)
  if (self.adjT or 0) ~= 0 or (self.adjW or 0) ~= 0 or (self.adjH or 0) ~= 0 then
    s = s .. (", %d,%d,%d"):format(self.adjT, self.adjW, self.adjH)
  end
  return s .. ")"
end

---------------------------------------------------------------------------------------------
-- pooling helpers

-- Torch7's pooled size of one dim (the last window made to start inside the input or its
-- left padding when there is padding)
local function pooled_size(n, k, d, pad, dil, ceil_mode, padded)
  local span = n + 2 * pad - (dil * (k - 1) + 1)
  local o = (ceil_mode and math.ceil(span / d) or math.floor(span / d)) + 1
  if padded and (o - 1) * d >= n + pad then o = o - 1 end
  return o
end

-- checks a 3-D pool's input and geometry; returns the output's sizes
local function check_pool(self, input, dil)
  check_volume(self, input)
  local cls = torch.type(self)
  local padT, padW, padH = self.padT or 0, self.padW or 0, self.padH or 0
  if padT > self.kT // 2 or padW > self.kW // 2 or padH > self.kH // 2 then
    error(("%s: pad should be smaller than half of kernel size, but got kT: %d kW: %d, kH: %d, padT: %d, padW: %d, padH: %d")
      :format(cls, self.kT, self.kW, self.kH, padT, padW, padH), 3)
  end
  dil = dil or { 1, 1, 1 }
  local d = input:dim()
  local padded = padT ~= 0 or padW ~= 0 or padH ~= 0
  local oT = pooled_size(input:size(d - 2), self.kT, self.dT, padT, dil[1], self.ceil_mode, padded)
  local oH = pooled_size(input:size(d - 1), self.kH, self.dH, padH, dil[2], self.ceil_mode, padded)
  local oW = pooled_size(input:size(d), self.kW, self.dW, padW, dil[3], self.ceil_mode, padded)
  if oT < 1 or oH < 1 or oW < 1 then
    error(("%s: given input size (%s), the calculated output size (%dx%dx%d) is too small")
      :format(cls, shape(input), oT, oH, oW), 3)
  end
  local sizes = input:size():totable()
  sizes[d - 2], sizes[d - 1], sizes[d] = oT, oH, oW
  return sizes
end

local function pool_geometry(self)
  check_int(torch.type(self), "kT", self.kT, 1)
  return { self.kT, self.kH, self.kW }, { self.dT, self.dH, self.dW }, { self.padT or 0, self.padH or 0, self.padW or 0 }
end

local function pool_init(self, kT, kW, kH, dT, dW, dH)
  local cls = torch.type(self)
  self.kT = check_int(cls, "kT", kT, 1)
  self.kW = check_int(cls, "kW", kW, 1)
  self.kH = check_int(cls, "kH", kH, 1)
  self.dT = check_int(cls, "dT", dT or kT, 1)
  self.dW = check_int(cls, "dW", dW or kW, 1)
  self.dH = check_int(cls, "dH", dH or kH, 1)
end

local function pool_desc(self)
  local s = ("%s(%dx%dx%d, %d,%d,%d"):format(torch.type(self), self.kT, self.kW, self.kH, self.dT, self.dW, self.dH)
  if (self.padT or 0) ~= 0 or (self.padW or 0) ~= 0 or (self.padH or 0) ~= 0 then
    s = s .. (", %d,%d,%d"):format(self.padT, self.padW, self.padH)
  end
  return s
end

---------------------------------------------------------------------------------------------
-- nn.VolumetricMaxPooling(kT, kW, kH [, dT = kT, dW = kW, dH = kH, padT, padW, padH = 0]):
-- the maximum of each kT x kH x kW window (padding counts as -inf); :ceil() rounds the output
-- size up. indices (LongTensor, the output's size) holds the 1-based position of each
-- maximum in its input volume, (t-1)*H*W + (h-1)*W + w. (Torch7 packed three byte offsets
-- into each index instead; only VolumetricMaxUnpooling read them.)
local VolumetricMaxPooling, parentMP = torch.class("nn.VolumetricMaxPooling", "nn.Module")

VolumetricMaxPooling.__version = 2

function VolumetricMaxPooling:__init(kT, kW, kH, dT, dW, dH, padT, padW, padH)
  parentMP.__init(self)
  pool_init(self, kT, kW, kH, dT, dW, dH)
  local cls = torch.type(self)
  self.padT = check_int(cls, "padT", padT or 0, 0)
  self.padW = check_int(cls, "padW", padW or 0, 0)
  self.padH = check_int(cls, "padH", padH or 0, 0)
  self.ceil_mode = false
  self.indices = torch.LongTensor()
end

function VolumetricMaxPooling:ceil() self.ceil_mode = true; return self end
function VolumetricMaxPooling:floor() self.ceil_mode = false; return self end

function VolumetricMaxPooling:_dilation()
  return { self.dilationT or 1, self.dilationH or 1, self.dilationW or 1 }
end

function VolumetricMaxPooling:updateOutput(input)
  self.ceil_mode = self.ceil_mode or false
  local dil = self:_dilation()
  local sizes = check_pool(self, input, dil)
  local d = input:dim()
  self.itime, self.iheight, self.iwidth = input:size(d - 2), input:size(d - 1), input:size(d)
  local k, s, p = pool_geometry(self)
  local out, idx = call(self, torch.max_pool3d_with_indices, input, k, s, p, dil, self.ceil_mode)
  if out:size(d - 2) ~= sizes[d - 2] or out:size(d - 1) ~= sizes[d - 1] or out:size(d) ~= sizes[d] then
    error(("%s: windows past the end of input size %s (stride larger than the kernel in ceil mode)")
      :format(torch.type(self), shape(input)), 2)
  end
  own(self, "indices", idx)
  return own(self, "output", out)
end

function VolumetricMaxPooling:updateGradInput(input, gradOutput)
  check_grad(self, gradOutput, self.indices:size():totable())
  if not torch.isTensor(input) or input:dim() ~= self.indices:dim() then
    error(torch.type(self) .. ": the input of updateGradInput must be the one of the last forward", 2)
  end
  return own(self, "gradInput", scatter_max_grad(input, gradOutput, self.indices))
end

function VolumetricMaxPooling:empty() return self:clearState() end

function VolumetricMaxPooling:clearState()
  if self.indices then self.indices:set() end
  return parentMP.clearState(self)
end

-- files of version 1 had no ceil_mode (floor)
function VolumetricMaxPooling:read(file, version)
  local fields = file:readObject()
  if type(fields) == "table" then for k, v in pairs(fields) do self[k] = v end end
  if version < 2 then self.ceil_mode = false end
end

function VolumetricMaxPooling:__tostring__()
  return pool_desc(self) .. ")"
end

-- nn.VolumetricDilatedMaxPooling(kT, kW, kH, dT, dW, dH, padT, padW, padH [, dilationT,
-- dilationW, dilationH = 1]): VolumetricMaxPooling whose window reads every dilation-th
-- element (a window spans dilation * (k - 1) + 1 input elements)
local VolumetricDilatedMaxPooling = torch.class("nn.VolumetricDilatedMaxPooling", "nn.VolumetricMaxPooling")

function VolumetricDilatedMaxPooling:__init(kT, kW, kH, dT, dW, dH, padT, padW, padH, dilationT, dilationW, dilationH)
  VolumetricMaxPooling.__init(self, kT, kW, kH, dT, dW, dH, padT, padW, padH)
  local cls = torch.type(self)
  self.dilationT = check_int(cls, "dilationT", dilationT or 1, 1)
  self.dilationW = check_int(cls, "dilationW", dilationW or 1, 1)
  self.dilationH = check_int(cls, "dilationH", dilationH or 1, 1)
end

function VolumetricDilatedMaxPooling:__tostring__()
  return pool_desc(self) .. (", %d,%d,%d)"):format(self.dilationT, self.dilationW, self.dilationH)
end

---------------------------------------------------------------------------------------------
-- nn.VolumetricAveragePooling(kT, kW, kH [, dT = kT, dW = kW, dH = kH]): the mean of each
-- kT x kH x kW window (no padding, output size floor((T - kT) / dT) + 1)
local VolumetricAveragePooling, parentAP = torch.class("nn.VolumetricAveragePooling", "nn.Module")

function VolumetricAveragePooling:__init(kT, kW, kH, dT, dW, dH)
  parentAP.__init(self)
  pool_init(self, kT, kW, kH, dT, dW, dH)
end

function VolumetricAveragePooling:_args()
  local k, s, p = pool_geometry(self)
  return k, s, p, self.ceil_mode or false, self.count_include_pad ~= false
end

function VolumetricAveragePooling:updateOutput(input)
  check_pool(self, input)
  return own(self, "output", call(self, torch.avg_pool3d, input, self:_args()))
end

function VolumetricAveragePooling:updateGradInput(input, gradOutput)
  if self.gradInput then
    check_grad(self, gradOutput, check_pool(self, input))
    local k, s, p, ceil_mode, include = self:_args()
    local gi = autograd_wrt(input, gradOutput, function(x)
      return torch.avg_pool3d(x, k, s, p, ceil_mode, include)
    end)
    return own(self, "gradInput", gi)
  end
end

function VolumetricAveragePooling:empty() return parentAP.clearState(self) end

function VolumetricAveragePooling:__tostring__()
  return pool_desc(self) .. ")"
end

---------------------------------------------------------------------------------------------
-- nn.VolumetricMaxUnpooling(poolingModule): the inverse of a VolumetricMaxPooling whose
-- kernel equals its stride: each input value goes back to where the pooling's last forward
-- found its maximum, zeros elsewhere; the output has the pooling's input size
local VolumetricMaxUnpooling, parentMU = torch.class("nn.VolumetricMaxUnpooling", "nn.Module")

function VolumetricMaxUnpooling:__init(poolingModule)
  parentMU.__init(self)
  if torch.type(poolingModule) ~= "nn.VolumetricMaxPooling" then
    error("nn.VolumetricMaxUnpooling: the argument must be a nn.VolumetricMaxPooling module, got "
      .. torch.type(poolingModule), 2)
  end
  if poolingModule.kT ~= poolingModule.dT or poolingModule.kH ~= poolingModule.dH
    or poolingModule.kW ~= poolingModule.dW then
    error("nn.VolumetricMaxUnpooling: the pooling module's kernel size must equal its stride", 2)
  end
  self.pooling = poolingModule
end

function VolumetricMaxUnpooling:setParams()
  local p = self.pooling
  self.indices = p.indices
  self.otime, self.oheight, self.owidth = p.itime, p.iheight, p.iwidth
  self.dT, self.dH, self.dW = p.dT, p.dH, p.dW
  self.padT, self.padH, self.padW = p.padT, p.padH, p.padW
end

local function check_unpool(self, input)
  check_volume(self, input)
  if not self.otime or not self.indices or not input:isSameSizeAs(self.indices) then
    error(("%s: the input (size %s) must have the size of the pooling module's last output (%s)")
      :format(torch.type(self), shape(input),
        self.indices and self.indices:dim() > 0 and shape(self.indices) or "none yet"), 3)
  end
  local sizes = input:size():totable()
  local d = #sizes
  sizes[d - 2], sizes[d - 1], sizes[d] = self.otime, self.oheight, self.owidth
  return sizes
end

function VolumetricMaxUnpooling:updateOutput(input)
  self:setParams()
  check_unpool(self, input)
  return own(self, "output", call(self, torch.max_unpool3d, input, self.indices,
    { self.otime, self.oheight, self.owidth }, { self.dT, self.dH, self.dW }, { self.padT, self.padH, self.padW }))
end

function VolumetricMaxUnpooling:updateGradInput(input, gradOutput)
  self:setParams()
  local osizes = check_unpool(self, input)
  check_grad(self, gradOutput, osizes)
  local vol = self.otime * self.oheight * self.owidth
  local ivol = input:size(input:dim() - 2) * input:size(input:dim() - 1) * input:size(input:dim())
  local gi = torch.gather(planes_view(gradOutput, vol), 2, planes_view(self.indices, ivol))
  return own(self, "gradInput", gi:viewAs(input))
end

function VolumetricMaxUnpooling:empty() return self:clearState() end

function VolumetricMaxUnpooling:__tostring__()
  return "nn.VolumetricMaxUnpooling associated to " .. tostring(self.pooling)
end

---------------------------------------------------------------------------------------------
-- nn.VolumetricFractionalMaxPooling(poolSizeT, poolSizeW, poolSizeH, outT, outW, outH) or
-- (poolSizeT, poolSizeW, poolSizeH, ratioT, ratioW, ratioH): max pooling over pool-size
-- windows placed pseudo-randomly (Graham's fractional max pooling) giving an output of the
-- given size, or floor(size * ratio) for ratios in (0, 1). As in Torch7, this class reads
-- its input as planes x H x W x T (T the last dim). Each plane draws three uniforms
-- (randomSamples, N x C x 3: for T, W, H) per forward unless :fixPoolingRegions() keeps
-- them. indices: 1-based positions of the maxima in their input volumes.
local VolumetricFractionalMaxPooling, parentFP = torch.class("nn.VolumetricFractionalMaxPooling", "nn.Module")

function VolumetricFractionalMaxPooling:__init(poolSizeT, poolSizeW, poolSizeH, arg1, arg2, arg3)
  parentFP.__init(self)
  local cls = torch.type(self)
  self.poolSizeT = check_int(cls, "poolSizeT", poolSizeT, 2)
  self.poolSizeW = check_int(cls, "poolSizeW", poolSizeW, 2)
  self.poolSizeH = check_int(cls, "poolSizeH", poolSizeH, 2)
  if type(arg1) ~= "number" or type(arg2) ~= "number" or type(arg3) ~= "number" then
    error(cls .. ": the output size (outT, outW, outH) or the ratios (ratioT, ratioW, ratioH) must be numbers", 2)
  end
  self.randomSamples = nil
  self.newRandomPool = false
  if arg1 >= 1 and arg2 >= 1 and arg3 >= 1 then
    self.outT = check_int(cls, "outT", arg1, 1)
    self.outW = check_int(cls, "outW", arg2, 1)
    self.outH = check_int(cls, "outH", arg3, 1)
  else
    for _, r in ipairs({ arg1, arg2, arg3 }) do
      if not (r > 0 and r < 1) then
        error(("%s: the ratios must be in (0, 1), got %s, %s, %s")
          :format(cls, tostring(arg1), tostring(arg2), tostring(arg3)), 2)
      end
    end
    self.ratioT, self.ratioW, self.ratioH = arg1, arg2, arg3
  end
end

function VolumetricFractionalMaxPooling:fixPoolingRegions(val)
  if val == nil then val = true end
  self.newRandomPool = val
  return self
end

function VolumetricFractionalMaxPooling:getBufferSize_(input)
  check_volume(self, input)
  if input:dim() == 5 then return torch.LongStorage({ input:size(1), input:size(2), 3 }) end
  return torch.LongStorage({ 1, input:size(1), 3 })
end

-- outT, outW, outH for this input
function VolumetricFractionalMaxPooling:getOutputSizes_(input)
  if self.ratioT then
    local d = input:dim()
    local oT = math.floor(input:size(d) * self.ratioT)
    local oW = math.floor(input:size(d - 1) * self.ratioW)
    local oH = math.floor(input:size(d - 2) * self.ratioH)
    if oT < 1 or oW < 1 or oH < 1 then
      error(torch.type(self) .. ": the reduction ratio or the input size is too small (an output of 0 elements)", 3)
    end
    return oT, oW, oH
  end
  return self.outT, self.outW, self.outH
end

-- new uniforms per forward (kept when fixed, unless the batch or plane count changed)
function VolumetricFractionalMaxPooling:initSampleBuffer_(input)
  local n = input:dim() == 5 and input:size(1) or 1
  local c = input:size(input:dim() - 3)
  local r = self.randomSamples
  if r == nil or torch.type(r) ~= torch.type(input) then
    self.randomSamples = input.new(n, c, 3):uniform()
  elseif r:size(1) ~= n or r:size(2) ~= c then
    r:resize(n, c, 3):uniform()
  elseif not self.newRandomPool then
    r:uniform()
  end
end

function VolumetricFractionalMaxPooling:updateOutput(input)
  check_volume(self, input)
  local cls = torch.type(self)
  local d = input:dim()
  local iH, iW, iT = input:size(d - 2), input:size(d - 1), input:size(d)
  local oT, oW, oH = self:getOutputSizes_(input)
  local checks = { { oH, self.poolSizeH, iH, "poolSizeH", "height" }, { oW, self.poolSizeW, iW, "poolSizeW", "width" },
    { oT, self.poolSizeT, iT, "poolSizeT", "time" } }
  for _, c in ipairs(checks) do
    if c[1] + c[2] - 1 >= c[3] then
      error(("%s: %s (%d) too large relative to input %s (%d) for an output of %d"):format(cls, c[4], c[2], c[5], c[3], c[1]), 2)
    end
  end
  self:initSampleBuffer_(input)
  -- the op reads (D, H, W) = Torch7's (H, W, T) and its samples in that order: Torch7's
  -- samples (T, W, H) reversed
  local samples = self.randomSamples:index(3, torch.LongTensor({ 3, 2, 1 }))
  local out, idx = call(self, torch.fractional_max_pool3d, input, { self.poolSizeH, self.poolSizeW, self.poolSizeT },
    { oH, oW, oT }, samples)
  self.indices = idx
  return own(self, "output", out)
end

function VolumetricFractionalMaxPooling:updateGradInput(input, gradOutput)
  if self.randomSamples == nil or not self.indices then
    error(torch.type(self) .. ": call updateOutput/forward before updateGradInput", 2)
  end
  check_grad(self, gradOutput, self.indices:size():totable())
  return own(self, "gradInput", scatter_max_grad(input, gradOutput, self.indices))
end

function VolumetricFractionalMaxPooling:empty() return self:clearState() end

function VolumetricFractionalMaxPooling:clearState()
  self.indices = nil
  self.randomSamples = nil
  return parentFP.clearState(self)
end

function VolumetricFractionalMaxPooling:__tostring__()
  return ("%s(%sx%sx%s, %d,%d,%d)"):format(torch.type(self), tostring(self.outT or self.ratioT),
    tostring(self.outW or self.ratioW), tostring(self.outH or self.ratioH),
    self.poolSizeT, self.poolSizeW, self.poolSizeH)
end

return nn
