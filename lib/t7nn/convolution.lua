-- t7nn/convolution.lua — convolutions over images (C x H x W, or batches N x C x H x W) and
-- over sequences (nFrames x frameSize, or batches N x nFrames x frameSize), and the
-- sub-samplings and poolings of sequences.
--
-- The 2-D classes run the op library's kernels: torch.conv2d forward, and its backward
-- kernels conv2d_backward_input / conv2d_backward_weight (torch.conv_transpose2d for the
-- transposed ones). A class whose weight is laid out otherwise (one kernel per connection,
-- per input plane, per output position) builds the kernel weight from its own with
-- whole-tensor ops and folds the kernel's weight gradient back the same way.
local torch = require "torch"
local nn = require "t7nn.env"
local H = require "t7nn.helpers"
local sizestr = H.sizestr

-- dst += scale * src, dst and src of one element count (a 2-D gradWeight of a 4-D kernel)
local function accumulate(dst, scale, src)
  if dst:dim() == src:dim() and dst:isSameSizeAs(src) then
    dst:add(scale, src)
  else
    dst:view(src:size()):add(scale, src)
  end
end

-- t viewed with the given sizes (t itself when it has them already)
local function viewed(t, ...)
  local sizes = { ... }
  if t:dim() == #sizes then
    local same = true
    for i, s in ipairs(sizes) do if t:size(i) ~= s then same = false; break end end
    if same then return t end
  end
  if not t:isContiguous() then t = t:contiguous() end
  return t:view(table.unpack(sizes))
end

-- the sum of a gradOutput (N x C x H x W or C x H x W) over all but its plane dim: C values
local function plane_sums(gradOutput)
  local d = gradOutput:dim()
  local s = gradOutput:sum(d):sum(d - 1)
  if d == 4 then s = s:sum(1) end
  return s:view(s:nElement())
end

local function check_type(self, input)
  if self.weight and input:type() ~= self.weight:type() then
    error(("%s: input is a %s but the module's weight is a %s (convert the module with :type())")
      :format(torch.type(self), input:type(), self.weight:type()), 4)
  end
end

-- an image or a batch of them with nPlanes planes; returns the dims of H and W
local function check_image(self, input, nPlanes)
  if not torch.isTensor(input) then
    error(("%s: input must be a tensor, got %s"):format(torch.type(self), torch.type(input)), 4)
  end
  local d = input:dim()
  if d ~= 3 and d ~= 4 then
    error(("%s: 3D or 4D (batch mode) tensor expected for input, got a tensor of size %s")
      :format(torch.type(self), sizestr(input)), 4)
  end
  if nPlanes and input:size(d - 2) ~= nPlanes then
    error(("%s: input has %d planes, expected %d (input size %s)")
      :format(torch.type(self), input:size(d - 2), nPlanes, sizestr(input)), 4)
  end
  check_type(self, input)
  return d - 1, d
end

-- gradOutput of the sizes the output has
local function check_gradOutput(self, gradOutput, output_sizes)
  if not torch.isTensor(gradOutput) or gradOutput:dim() ~= #output_sizes then
    error(("%s: gradOutput must have %d dims (the output's size %s)")
      :format(torch.type(self), #output_sizes, table.concat(output_sizes, "x")), 4)
  end
  for i, s in ipairs(output_sizes) do
    if gradOutput:size(i) ~= s then
      error(("%s: gradOutput has size %s, expected the output's size %s")
        :format(torch.type(self), sizestr(gradOutput), table.concat(output_sizes, "x")), 4)
    end
  end
end

local function check_positive(cls, names, ...)
  local values = { ... }
  for i, name in ipairs(names) do
    local v = values[i]
    if math.type(v) ~= "integer" and not (type(v) == "number" and v == math.floor(v)) then
      error(("%s: %s must be an integer, got %s"):format(cls, name, tostring(v)), 4)
    end
    if v < 1 then error(("%s: %s must be positive, got %s"):format(cls, name, tostring(v)), 4) end
  end
end

local function check_nonneg(cls, names, ...)
  local values = { ... }
  for i, name in ipairs(names) do
    local v = values[i]
    if type(v) ~= "number" or v ~= math.floor(v) or v < 0 then
      error(("%s: %s must be a non-negative integer, got %s"):format(cls, name, tostring(v)), 4)
    end
  end
end

-- the output size of a convolution along one dim (< 1: the input is too small)
local function conv_out(n, k, d, pad, dil)
  return math.floor((n + 2 * pad - dil * (k - 1) - 1) / d) + 1
end

local function uniform_reset(self, stdv, fan_in)
  stdv = stdv and stdv * math.sqrt(3) or 1 / math.sqrt(fan_in)
  self.weight:uniform(-stdv, stdv)
  if self.bias then self.bias:uniform(-stdv, stdv) end
  return self
end

-- "(a -> b, kWxkH[, dW,dH][, padW,padH]" as Torch7 printed the 2-D convolutions
local function conv_desc(self)
  local s = ("%s(%d -> %d, %dx%d"):format(torch.type(self), self.nInputPlane, self.nOutputPlane, self.kW, self.kH)
  if self.dW ~= 1 or self.dH ~= 1 or self.padW ~= 0 or self.padH ~= 0 then
    s = s .. (", %d,%d"):format(self.dW, self.dH)
  end
  if self.padW ~= 0 or self.padH ~= 0 then s = s .. (", %d,%d"):format(self.padW, self.padH) end
  return s
end

local function with_bias(self, s)
  return s .. (self.bias and ")" or ") without bias")
end

--------------------------------------------------------------------------------------------
-- nn.SpatialConvolution(nInputPlane, nOutputPlane, kW, kH [, dW = 1, dH = 1, padW = 0,
-- padH = padW]): the cross-correlation of each input plane with its kernel, summed over
-- input planes, plus a bias per output plane. weight: nOutputPlane x nInputPlane x kH x kW.
-- Output size: floor((H + 2 padH - kH) / dH) + 1 (W alike).
local SpatialConvolution, parent = torch.class("nn.SpatialConvolution", "nn.Module")

local function init_conv(self, cls, nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH)
  dW, dH = dW or 1, dH or 1
  padW = padW or 0
  padH = padH or padW
  check_positive(cls, { "nInputPlane", "nOutputPlane", "kW", "kH", "dW", "dH" },
    nInputPlane, nOutputPlane, kW, kH, dW, dH)
  check_nonneg(cls, { "padW", "padH" }, padW, padH)
  self.nInputPlane, self.nOutputPlane = nInputPlane, nOutputPlane
  self.kW, self.kH, self.dW, self.dH = kW, kH, dW, dH
  self.padW, self.padH = padW, padH
end

function SpatialConvolution:__init(nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH)
  parent.__init(self)
  init_conv(self, torch.type(self), nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH)
  self.weight = torch.Tensor(nOutputPlane, nInputPlane, kH, kW)
  self.bias = torch.Tensor(nOutputPlane)
  self.gradWeight = torch.Tensor(nOutputPlane, nInputPlane, kH, kW)
  self.gradBias = torch.Tensor(nOutputPlane)
  self:reset()
end

function SpatialConvolution:noBias()
  self.bias, self.gradBias = nil, nil
  return self
end

function SpatialConvolution:reset(stdv)
  return uniform_reset(self, stdv, self.kW * self.kH * self.nInputPlane)
end

-- modules saved by older versions: one padding field
local function conv_compat(self)
  if self.padding then
    self.padW, self.padH, self.padding = self.padding, self.padding, nil
  end
  self.padW = self.padW or 0
  self.padH = self.padH or self.padW
end

-- the weight as the kernel takes it (a view)
function SpatialConvolution:_kernelWeight()
  return viewed(self.weight, self.nOutputPlane, self.nInputPlane, self.kH, self.kW)
end

function SpatialConvolution:_geometry()
  return { self.dH, self.dW }, { self.padH, self.padW }, { self.dilationH or 1, self.dilationW or 1 }
end

-- the output's sizes for this input (error when the input is too small)
function SpatialConvolution:_outputSizes(input)
  local h, w = check_image(self, input, self.nInputPlane)
  local oH = conv_out(input:size(h), self.kH, self.dH, self.padH, self.dilationH or 1)
  local oW = conv_out(input:size(w), self.kW, self.dW, self.padW, self.dilationW or 1)
  if oH < 1 or oW < 1 then
    error(("%s: input size %s is too small (calculated output size %dx%d)")
      :format(torch.type(self), sizestr(input), oH, oW), 3)
  end
  if input:dim() == 4 then return { input:size(1), self.nOutputPlane, oH, oW } end
  return { self.nOutputPlane, oH, oW }
end

function SpatialConvolution:updateOutput(input)
  conv_compat(self)
  self:_outputSizes(input)
  local stride, pad, dil = self:_geometry()
  self.output:set(torch.conv2d(input, self:_kernelWeight(), self.bias, stride, pad, dil))
  return self.output
end

function SpatialConvolution:updateGradInput(input, gradOutput)
  if self.gradInput then
    conv_compat(self)
    check_gradOutput(self, gradOutput, self:_outputSizes(input))
    local stride, pad, dil = self:_geometry()
    self.gradInput:set(torch.conv2d_backward_input(gradOutput, self:_kernelWeight(), input:size(), stride, pad, dil))
    return self.gradInput
  end
end

function SpatialConvolution:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  conv_compat(self)
  check_gradOutput(self, gradOutput, self:_outputSizes(input))
  local stride, pad, dil = self:_geometry()
  local gw = torch.conv2d_backward_weight(gradOutput, input,
    { self.nOutputPlane, self.nInputPlane, self.kH, self.kW }, stride, pad, dil)
  accumulate(self.gradWeight, scale, gw)
  if self.bias and self.gradBias then self.gradBias:add(scale, plane_sums(gradOutput)) end
end

function SpatialConvolution:type(typename, tensorCache)
  self.finput = self.finput and torch.Tensor()
  self.fgradInput = self.fgradInput and torch.Tensor()
  return parent.type(self, typename, tensorCache)
end

function SpatialConvolution:clearState()
  nn.utils.clear(self, "finput", "fgradInput", "_input", "_gradOutput")
  return parent.clearState(self)
end

function SpatialConvolution:__tostring__()
  return with_bias(self, conv_desc(self))
end

--------------------------------------------------------------------------------------------
-- nn.SpatialConvolutionMM(same arguments): SpatialConvolution with Torch7's 2-D weight
-- nOutputPlane x (nInputPlane * kH * kW) (each row a kernel, planes then rows then columns)
-- (its own class, as in Torch7: not a kind of SpatialConvolution)
local SpatialConvolutionMM, parentMM = torch.class("nn.SpatialConvolutionMM", "nn.Module")

for _, name in ipairs({ "noBias", "reset", "_kernelWeight", "_geometry", "_outputSizes", "updateOutput",
  "updateGradInput", "accGradParameters", "type", "clearState", "__tostring__" }) do
  SpatialConvolutionMM[name] = SpatialConvolution[name]
end

function SpatialConvolutionMM:__init(nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH)
  parentMM.__init(self)
  init_conv(self, torch.type(self), nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH)
  self.weight = torch.Tensor(nOutputPlane, nInputPlane * kH * kW)
  self.bias = torch.Tensor(nOutputPlane)
  self.gradWeight = torch.Tensor(nOutputPlane, nInputPlane * kH * kW)
  self.gradBias = torch.Tensor(nOutputPlane)
  self:reset()
end

--------------------------------------------------------------------------------------------
-- nn.SpatialDilatedConvolution(nInputPlane, nOutputPlane, kW, kH [, dW, dH, padW, padH,
-- dilationW = 1, dilationH = 1]): SpatialConvolution whose kernel taps are dilation apart;
-- output size floor((H + 2 padH - dilationH (kH - 1) - 1) / dH) + 1
local SpatialDilatedConvolution = torch.class("nn.SpatialDilatedConvolution", "nn.SpatialConvolution")

function SpatialDilatedConvolution:__init(nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH, dilationW, dilationH)
  parent.__init(self)
  init_conv(self, torch.type(self), nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH)
  self.dilationW = dilationW or 1
  self.dilationH = dilationH or 1
  check_positive(torch.type(self), { "dilationW", "dilationH" }, self.dilationW, self.dilationH)
  self.weight = torch.Tensor(nOutputPlane, nInputPlane, kH, kW)
  self.bias = torch.Tensor(nOutputPlane)
  self.gradWeight = torch.Tensor(nOutputPlane, nInputPlane, kH, kW)
  self.gradBias = torch.Tensor(nOutputPlane)
  self:reset()
end

function SpatialDilatedConvolution:__tostring__()
  return with_bias(self, conv_desc(self) .. (", %d,%d"):format(self.dilationW, self.dilationH))
end

--------------------------------------------------------------------------------------------
-- nn.SpatialDepthWiseConvolution(nInputPlane, multiplier, kW, kH [, dW, dH, padW, padH]):
-- every input plane i is convolved with `multiplier` kernels of its own; output plane
-- (i-1)*multiplier + j is input plane i with kernel j (plus bias[j][i]). Torch7's layout:
-- weight multiplier x (nInputPlane*kH*kW) (or multiplier x nInputPlane x kH x kW), bias
-- multiplier x nInputPlane; nOutputPlane is the multiplier.
local SpatialDepthWiseConvolution, parentDW = torch.class("nn.SpatialDepthWiseConvolution", "nn.Module")

function SpatialDepthWiseConvolution:__init(nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH)
  parentDW.__init(self)
  init_conv(self, torch.type(self), nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH)
  self.weight = torch.Tensor(nOutputPlane, nInputPlane * kH * kW)
  self.bias = torch.Tensor(nOutputPlane, nInputPlane)
  self.gradWeight = torch.Tensor(nOutputPlane, nInputPlane * kH * kW)
  self.gradBias = torch.Tensor(nOutputPlane, nInputPlane)
  self:reset()
end

SpatialDepthWiseConvolution.noBias = SpatialConvolution.noBias
SpatialDepthWiseConvolution.reset = SpatialConvolution.reset
SpatialDepthWiseConvolution.type = SpatialConvolution.type
SpatialDepthWiseConvolution.clearState = SpatialConvolution.clearState
SpatialDepthWiseConvolution.__tostring__ = SpatialConvolution.__tostring__

-- the grouped kernel weight: (nInputPlane*multiplier) x 1 x kH x kW, input plane major
function SpatialDepthWiseConvolution:_kernelWeight()
  local m, n = self.nOutputPlane, self.nInputPlane
  return viewed(self.weight, m, n, self.kH, self.kW):transpose(1, 2):contiguous():view(n * m, 1, self.kH, self.kW)
end

function SpatialDepthWiseConvolution:_kernelBias()
  if not self.bias then return nil end
  local m, n = self.nOutputPlane, self.nInputPlane
  return viewed(self.bias, m, n):t():contiguous():view(n * m)
end

function SpatialDepthWiseConvolution:_outputSizes(input)
  local sizes = SpatialConvolution._outputSizes(self, input)
  sizes[#sizes - 2] = self.nInputPlane * self.nOutputPlane
  return sizes
end

function SpatialDepthWiseConvolution:updateOutput(input)
  conv_compat(self)
  self:_outputSizes(input)
  self.output:set(torch.conv2d(input, self:_kernelWeight(), self:_kernelBias(),
    { self.dH, self.dW }, { self.padH, self.padW }, 1, self.nInputPlane))
  return self.output
end

function SpatialDepthWiseConvolution:updateGradInput(input, gradOutput)
  if self.gradInput then
    conv_compat(self)
    check_gradOutput(self, gradOutput, self:_outputSizes(input))
    self.gradInput:set(torch.conv2d_backward_input(gradOutput, self:_kernelWeight(), input:size(),
      { self.dH, self.dW }, { self.padH, self.padW }, 1, self.nInputPlane))
    return self.gradInput
  end
end

function SpatialDepthWiseConvolution:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  conv_compat(self)
  check_gradOutput(self, gradOutput, self:_outputSizes(input))
  local m, n = self.nOutputPlane, self.nInputPlane
  local gw = torch.conv2d_backward_weight(gradOutput, input, { n * m, 1, self.kH, self.kW },
    { self.dH, self.dW }, { self.padH, self.padW }, 1, n)
  viewed(self.gradWeight, m, n, self.kH, self.kW):add(scale, gw:view(n, m, self.kH, self.kW):transpose(1, 2))
  if self.bias and self.gradBias then
    viewed(self.gradBias, m, n):add(scale, plane_sums(gradOutput):view(n, m):t())
  end
end

--------------------------------------------------------------------------------------------
-- nn.SpatialConvolutionLocal(nInputPlane, nOutputPlane, iW, iH, kW, kH [, dW, dH, padW,
-- padH]): a convolution whose kernels are not shared: every output position (y, x) has its
-- own nOutputPlane x nInputPlane x kH x kW kernel and its own bias. weight: oH x oW x
-- nOutputPlane x nInputPlane x kH x kW; bias: nOutputPlane x oH x oW. Input of size iH x iW.
local SpatialConvolutionLocal, parentL = torch.class("nn.SpatialConvolutionLocal", "nn.Module")

function SpatialConvolutionLocal:__init(nInputPlane, nOutputPlane, iW, iH, kW, kH, dW, dH, padW, padH)
  parentL.__init(self)
  local cls = torch.type(self)
  init_conv(self, cls, nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH)
  check_positive(cls, { "iW", "iH" }, iW, iH)
  self.iW, self.iH = iW, iH
  self.oW = math.floor((2 * self.padW + iW - kW) / self.dW) + 1
  self.oH = math.floor((2 * self.padH + iH - kH) / self.dH) + 1
  if self.oW < 1 or self.oH < 1 then
    error(("%s: illegal configuration: output width or height less than 1 (input %dx%d, kernel %dx%d)")
      :format(cls, iW, iH, kW, kH), 2)
  end
  self.weight = torch.Tensor(self.oH, self.oW, nOutputPlane, nInputPlane, kH, kW)
  self.bias = torch.Tensor(nOutputPlane, self.oH, self.oW)
  self.gradWeight = torch.Tensor():resizeAs(self.weight)
  self.gradBias = torch.Tensor():resizeAs(self.bias)
  self:reset()
end

SpatialConvolutionLocal.reset = SpatialConvolution.reset
SpatialConvolutionLocal.type = SpatialConvolution.type
SpatialConvolutionLocal.clearState = SpatialConvolution.clearState

function SpatialConvolutionLocal:_check(input)
  local h, w = check_image(self, input, self.nInputPlane)
  if input:size(h) ~= self.iH or input:size(w) ~= self.iW then
    error(("%s: input size %s inconsistent with the expected input size %s%dx%dx%d")
      :format(torch.type(self), sizestr(input), input:dim() == 4 and "batchsize x " or "",
        self.nInputPlane, self.iH, self.iW), 3)
  end
  if input:dim() == 4 then return { input:size(1), self.nOutputPlane, self.oH, self.oW } end
  return { self.nOutputPlane, self.oH, self.oW }
end

-- the patches of a batch: (oH*oW) x (nInputPlane*kH*kW) x N, a new contiguous tensor
function SpatialConvolutionLocal:_columns(input4)
  local x = input4
  if self.padW > 0 or self.padH > 0 then
    x = torch.pad(x, { self.padW, self.padW, self.padH, self.padH })
  end
  -- N x C x oH x oW x kH x kW (a strided view of the input)
  local patches = x:unfold(3, self.kH, self.dH):unfold(4, self.kW, self.dW)
  patches = patches:narrow(3, 1, self.oH):narrow(4, 1, self.oW)
  return patches:permute(3, 4, 2, 5, 6, 1):contiguous()
    :view(self.oH * self.oW, self.nInputPlane * self.kH * self.kW, input4:size(1))
end

local function as_batch(input)
  if input:dim() == 3 then return input:view(1, input:size(1), input:size(2), input:size(3)) end
  return input
end

function SpatialConvolutionLocal:updateOutput(input)
  local sizes = self:_check(input)
  local x = as_batch(input:isContiguous() and input or input:contiguous())
  local n, L = x:size(1), self.oH * self.oW
  local w = viewed(self.weight, L, self.nOutputPlane, self.nInputPlane * self.kH * self.kW)
  local out = torch.bmm(w, self:_columns(x))  -- L x nOutputPlane x N
  local res = out:view(self.oH, self.oW, self.nOutputPlane, n):permute(4, 3, 1, 2):contiguous()
  res:add(viewed(self.bias, 1, self.nOutputPlane, self.oH, self.oW):expandAs(res))
  self.output:set(res:view(table.unpack(sizes)))
  return self.output
end

-- gradOutput as L x nOutputPlane x N
function SpatialConvolutionLocal:_gradRows(gradOutput, n)
  local g = gradOutput:dim() == 3 and gradOutput:view(1, gradOutput:size(1), gradOutput:size(2), gradOutput:size(3))
    or gradOutput
  return g:permute(3, 4, 2, 1):contiguous():view(self.oH * self.oW, self.nOutputPlane, n)
end

function SpatialConvolutionLocal:updateGradInput(input, gradOutput)
  if self.gradInput then
    check_gradOutput(self, gradOutput, self:_check(input))
    local n = input:dim() == 4 and input:size(1) or 1
    local C, kH, kW, L = self.nInputPlane, self.kH, self.kW, self.oH * self.oW
    local w = viewed(self.weight, L, self.nOutputPlane, C * kH * kW)
    -- the gradient of every patch: oH x oW x C x kH x kW x N
    local gcols = torch.bmm(w:transpose(2, 3), self:_gradRows(gradOutput, n))
      :view(self.oH, self.oW, C, kH, kW, n)
    local Hp, Wp = self.iH + 2 * self.padH, self.iW + 2 * self.padW
    local gpad = input.new(n, C, Hp, Wp):zero()
    -- each kernel tap adds its patches' gradients at the positions it read
    for i = 1, kH do
      for j = 1, kW do
        local dst = gpad:narrow(3, i, (self.oH - 1) * self.dH + 1):narrow(4, j, (self.oW - 1) * self.dW + 1)
          :unfold(3, 1, self.dH):unfold(4, 1, self.dW):select(6, 1):select(5, 1)
        dst:add(gcols:select(5, j):select(4, i):permute(4, 3, 1, 2))
      end
    end
    local gi = gpad:narrow(3, self.padH + 1, self.iH):narrow(4, self.padW + 1, self.iW)
    if input:dim() == 3 then gi = gi:select(1, 1) end
    self.gradInput:resizeAs(input):copy(gi)
    return self.gradInput
  end
end

function SpatialConvolutionLocal:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  check_gradOutput(self, gradOutput, self:_check(input))
  local x = as_batch(input:isContiguous() and input or input:contiguous())
  local n, L = x:size(1), self.oH * self.oW
  local rows = self:_gradRows(gradOutput, n)                     -- L x O x N
  local gw = torch.bmm(rows, self:_columns(x):transpose(2, 3))   -- L x O x K
  accumulate(self.gradWeight, scale, gw:view(self.weight:size()))
  local gb = gradOutput
  if gb:dim() == 4 then gb = gb:sum(1):view(self.nOutputPlane, self.oH, self.oW) end
  accumulate(self.gradBias, scale, gb)
end

function SpatialConvolutionLocal:__tostring__()
  local s = ("%s(%d -> %d, %dx%d, %dx%d"):format(torch.type(self), self.nInputPlane, self.nOutputPlane,
    self.iW, self.iH, self.kW, self.kH)
  if self.dW ~= 1 or self.dH ~= 1 or self.padW ~= 0 or self.padH ~= 0 then
    s = s .. (", %d,%d"):format(self.dW, self.dH)
  end
  if self.padW ~= 0 or self.padH ~= 0 then s = s .. (", %d,%d"):format(self.padW, self.padH) end
  return s .. ")"
end

--------------------------------------------------------------------------------------------
-- nn.SpatialFullConvolution(nInputPlane, nOutputPlane, kW, kH [, dW, dH, padW = 0, padH = 0,
-- adjW = 0, adjH = 0]): the transposed convolution (the adjoint of SpatialConvolution's
-- map from input to output); weight nInputPlane x nOutputPlane x kH x kW. Output size
-- (H - 1) dH - 2 padH + kH + adjH. Input may be {input, target}: then adjW/adjH are chosen
-- so that the output has target's last two sizes (SpatialFullConvolutionDualInput), and
-- gradInput is {gradInput, zeros like target}.
local SpatialFullConvolution, parentF = torch.class("nn.SpatialFullConvolution", "nn.Module")

function SpatialFullConvolution:__init(nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH, adjW, adjH)
  parentF.__init(self)
  local cls = torch.type(self)
  dW, dH = dW or 1, dH or 1
  padW, padH = padW or 0, padH or 0
  adjW, adjH = adjW or 0, adjH or 0
  check_positive(cls, { "nInputPlane", "nOutputPlane", "kW", "kH", "dW", "dH" },
    nInputPlane, nOutputPlane, kW, kH, dW, dH)
  check_nonneg(cls, { "padW", "padH", "adjW", "adjH" }, padW, padH, adjW, adjH)
  if adjW > dW - 1 or adjH > dH - 1 then
    error(("%s: adjW and adjH must be smaller than dW and dH (got adj %d,%d for strides %d,%d)")
      :format(cls, adjW, adjH, dW, dH), 2)
  end
  self.nInputPlane, self.nOutputPlane = nInputPlane, nOutputPlane
  self.kW, self.kH, self.dW, self.dH = kW, kH, dW, dH
  self.padW, self.padH, self.adjW, self.adjH = padW, padH, adjW, adjH
  self.weight = torch.Tensor(nInputPlane, nOutputPlane, kH, kW)
  self.gradWeight = torch.Tensor(nInputPlane, nOutputPlane, kH, kW)
  self.bias = torch.Tensor(nOutputPlane)
  self.gradBias = torch.Tensor(nOutputPlane)
  self.ones = torch.Tensor()
  self:reset()
end

SpatialFullConvolution.noBias = SpatialConvolution.noBias
SpatialFullConvolution.reset = SpatialConvolution.reset
SpatialFullConvolution.type = SpatialConvolution.type
SpatialFullConvolution.clearState = SpatialConvolution.clearState

-- the input tensor and the adjustments to use (from the target's size for a table input)
function SpatialFullConvolution:_unpack(input)
  self.adjW, self.adjH = self.adjW or 0, self.adjH or 0
  if type(input) == "table" and not torch.isTensor(input) then
    local x, target = input[1], input[2]
    if not torch.isTensor(x) or not torch.isTensor(target) or target:dim() < 2 then
      error(("%s: a table input must be {input, target} (target's last two dims give the output size)")
        :format(torch.type(self)), 3)
    end
    local tH, tW = target:size(target:dim() - 1), target:size(target:dim())
    return x, (tW + 2 * self.padW - self.kW) % self.dW, (tH + 2 * self.padH - self.kH) % self.dH
  end
  return input, self.adjW, self.adjH
end

function SpatialFullConvolution:_outputSizes(x, adjW, adjH)
  local h, w = check_image(self, x, self.nInputPlane)
  local oH = (x:size(h) - 1) * self.dH - 2 * self.padH + self.kH + adjH
  local oW = (x:size(w) - 1) * self.dW - 2 * self.padW + self.kW + adjW
  if oH < 1 or oW < 1 then
    error(("%s: input size %s is too small (calculated output size %dx%d)")
      :format(torch.type(self), sizestr(x), oH, oW), 3)
  end
  if x:dim() == 4 then return { x:size(1), self.nOutputPlane, oH, oW } end
  return { self.nOutputPlane, oH, oW }
end

function SpatialFullConvolution:_kernelWeight()
  return viewed(self.weight, self.nInputPlane, self.nOutputPlane, self.kH, self.kW)
end

function SpatialFullConvolution:updateOutput(input)
  local x, adjW, adjH = self:_unpack(input)
  self:_outputSizes(x, adjW, adjH)
  self.output:set(torch.conv_transpose2d(x, self:_kernelWeight(), self.bias,
    { self.dH, self.dW }, { self.padH, self.padW }, { adjH, adjW }))
  return self.output
end

function SpatialFullConvolution:updateGradInput(input, gradOutput)
  if self.gradInput then
    local x, adjW, adjH = self:_unpack(input)
    check_gradOutput(self, gradOutput, self:_outputSizes(x, adjW, adjH))
    if type(self.gradInput) == "table" then self.gradInput = self.gradInput[1] or x.new() end
    self.gradInput:set(torch.conv2d(gradOutput, self:_kernelWeight(), nil, { self.dH, self.dW }, { self.padH, self.padW }))
    if x ~= input then
      -- the target only gives a size: its gradient is zeros
      self.gradInput = { self.gradInput, H.size_target_grad(self, input[2]) }
    end
    return self.gradInput
  end
end

function SpatialFullConvolution:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  local x, adjW, adjH = self:_unpack(input)
  check_gradOutput(self, gradOutput, self:_outputSizes(x, adjW, adjH))
  local gw = torch.conv2d_backward_weight(x, gradOutput,
    { self.nInputPlane, self.nOutputPlane, self.kH, self.kW }, { self.dH, self.dW }, { self.padH, self.padW })
  accumulate(self.gradWeight, scale, gw)
  if self.bias and self.gradBias then self.gradBias:add(scale, plane_sums(gradOutput)) end
end

function SpatialFullConvolution:__tostring__()
  local s = conv_desc(self)
  if (self.adjW or 0) ~= 0 or (self.adjH or 0) ~= 0 then s = s .. (", %d,%d"):format(self.adjW, self.adjH) end
  return with_bias(self, s)
end

--------------------------------------------------------------------------------------------
-- Connection tables: k x 2 tensors whose row k says that kernel k takes input plane
-- table[k][1] to output plane table[k][2].
nn.tables = nn.tables or {}

-- every input plane to every output plane (nin*nout rows, output-major)
function nn.tables.full(nin, nout)
  local t = torch.Tensor(nin * nout, 2)
  t:select(2, 1):copy(torch.range(1, nin):repeatTensor(nout))
  t:select(2, 2):copy(torch.range(1, nout):view(nout, 1):expand(nout, nin):contiguous():view(nin * nout))
  return t
end

-- plane i to plane i
function nn.tables.oneToOne(nfeat)
  local r = torch.range(1, nfeat)
  return torch.Tensor(nfeat, 2):copy(r:view(nfeat, 1):expand(nfeat, 2))
end

-- every output plane from nto distinct input planes drawn at random; the draws go through
-- random permutations of the inputs, so the inputs are used about equally often
function nn.tables.random(nin, nout, nto)
  if nto > nin then error(("nn.tables.random: nto (%d) must not exceed nin (%d)"):format(nto, nin), 2) end
  local t = torch.Tensor(nto * nout, 2)
  local chunks = math.floor(nin / nto)
  local perm, used = torch.randperm(nin), 0
  for o = 1, nout do
    local rows = t:narrow(1, (o - 1) * nto + 1, nto)
    rows:select(2, 1):copy(perm:narrow(1, used * nto + 1, nto))
    rows:select(2, 2):fill(o)
    used = used + 1
    if used == chunks then perm, used = torch.randperm(nin), 0 end
  end
  return t
end

-- the flat positions of the table's kernels in a dense first x second weight:
-- (a - 1) * nb + b for the columns (ca, cb) of the table
local function dense_index(connTable, ca, cb, nb)
  return connTable:select(2, ca):long():add(-1):mul(nb):add(connTable:select(2, cb):long())
end

local function map_init(self, cls, conMatrix, kW, kH, dW, dH)
  if not torch.isTensor(conMatrix) or conMatrix:dim() ~= 2 or conMatrix:size(2) ~= 2 then
    error(("%s: the connection table must be a k x 2 tensor (nn.tables.full, oneToOne, random)"):format(cls), 3)
  end
  dW, dH = dW or 1, dH or 1
  check_positive(cls, { "kW", "kH", "dW", "dH" }, kW, kH, dW, dH)
  if conMatrix:min() < 1 then error(cls .. ": connection table entries must be plane numbers >= 1", 3) end
  self.kW, self.kH, self.dW, self.dH = kW, kH, dW, dH
  self.connTable = conMatrix
  self.nInputPlane = math.floor(conMatrix:select(2, 1):max())
  self.nOutputPlane = math.floor(conMatrix:select(2, 2):max())
  self.weight = torch.Tensor(conMatrix:size(1), kH, kW)
  self.bias = torch.Tensor(self.nOutputPlane)
  self.gradWeight = torch.Tensor(conMatrix:size(1), kH, kW)
  self.gradBias = torch.Tensor(self.nOutputPlane)
end

-- each kernel and each bias uniform in +-1/sqrt(kW*kH*fan-in of its output plane)
local function map_reset(self, stdv)
  if stdv then
    stdv = stdv * math.sqrt(3)
    self.weight:uniform(-stdv, stdv)
    self.bias:uniform(-stdv, stdv)
    return self
  end
  local outs = self.connTable:select(2, 2):long()
  local fanin = torch.zeros(self.nOutputPlane):indexAdd(1, outs, torch.ones(outs:nElement()))
  local bound = fanin:mul(self.kW * self.kH):sqrt():pow(-1)   -- per output plane
  local k = self.weight:size(1)
  local per_kernel = bound:index(1, outs):view(k, 1, 1):expandAs(self.weight)
  self.weight:uniform(-1, 1):cmul(per_kernel)
  self.bias:uniform(-1, 1):cmul(bound)
  return self
end

local function map_desc(self)
  local s = ("%s(%d -> %d, %dx%d"):format(torch.type(self), self.nInputPlane, self.nOutputPlane, self.kW, self.kH)
  if self.dW ~= 1 or self.dH ~= 1 then s = s .. (", %d,%d"):format(self.dW, self.dH) end
  return s .. ")"
end

-- weight and bias shrunk by the factor (1 - decay)
local function decay_parameters(self, decay)
  self.weight:add(-decay, self.weight)
  self.bias:add(-decay, self.bias)
end

--------------------------------------------------------------------------------------------
-- nn.SpatialConvolutionMap(connTable, kW, kH [, dW, dH]): SpatialConvolution where only the
-- (input, output) plane pairs of the table have a kernel; weight k x kH x kW (one kernel per
-- table row), bias per output plane. Input planes past the table's largest are ignored.
local SpatialConvolutionMap, parentCM = torch.class("nn.SpatialConvolutionMap", "nn.Module")

function SpatialConvolutionMap:__init(conMatrix, kW, kH, dW, dH)
  parentCM.__init(self)
  map_init(self, torch.type(self), conMatrix, kW, kH, dW, dH)
  self:reset()
end

SpatialConvolutionMap.reset = map_reset
SpatialConvolutionMap.__tostring__ = map_desc
SpatialConvolutionMap.decayParameters = decay_parameters

-- the dense nOutputPlane x nInputPlane x kH x kW weight (zero where the table has no kernel)
function SpatialConvolutionMap:_denseWeight()
  local nO, nI = self.nOutputPlane, self.nInputPlane
  local idx = dense_index(self.connTable, 2, 1, nI)
  return self.weight.new(nO * nI, self.kH, self.kW):zero():indexAdd(1, idx, self.weight)
    :view(nO, nI, self.kH, self.kW), idx
end

-- the input's first nInputPlane planes
function SpatialConvolutionMap:_planes(input)
  local h, w = check_image(self, input)
  local pd = input:dim() - 2
  if input:size(pd) < self.nInputPlane then
    error(("%s: input has %d planes, the connection table needs %d")
      :format(torch.type(self), input:size(pd), self.nInputPlane), 3)
  end
  local oH = conv_out(input:size(h), self.kH, self.dH, 0, 1)
  local oW = conv_out(input:size(w), self.kW, self.dW, 0, 1)
  if oH < 1 or oW < 1 then
    error(("%s: input size %s is smaller than the kernel %dx%d"):format(torch.type(self), sizestr(input), self.kW, self.kH), 3)
  end
  local sizes = input:dim() == 4 and { input:size(1), self.nOutputPlane, oH, oW } or { self.nOutputPlane, oH, oW }
  if input:size(pd) > self.nInputPlane then return input:narrow(pd, 1, self.nInputPlane), sizes end
  return input, sizes
end

function SpatialConvolutionMap:updateOutput(input)
  local x = self:_planes(input)
  self.output:set(torch.conv2d(x, (self:_denseWeight()), self.bias, { self.dH, self.dW }))
  return self.output
end

-- gradInput of a Map convolution from gi, the gradient of the planes x it used: the
-- input's planes past the connection table's get zeros
local function map_grad_input(self, input, x, gi)
  if x ~= input then
    self.gradInput:resizeAs(input):zero():narrow(input:dim() - 2, 1, self.nInputPlane):copy(gi)
  else
    self.gradInput:set(gi)
  end
  return self.gradInput
end

function SpatialConvolutionMap:updateGradInput(input, gradOutput)
  if self.gradInput then
    local x, sizes = self:_planes(input)
    check_gradOutput(self, gradOutput, sizes)
    local gi = torch.conv2d_backward_input(gradOutput, (self:_denseWeight()), x:size(), { self.dH, self.dW })
    return map_grad_input(self, input, x, gi)
  end
end

function SpatialConvolutionMap:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  local x, sizes = self:_planes(input)
  check_gradOutput(self, gradOutput, sizes)
  local nO, nI = self.nOutputPlane, self.nInputPlane
  local gw = torch.conv2d_backward_weight(gradOutput, x, { nO, nI, self.kH, self.kW }, { self.dH, self.dW })
  self.gradWeight:add(scale, gw:view(nO * nI, self.kH, self.kW):index(1, dense_index(self.connTable, 2, 1, nI)))
  self.gradBias:add(scale, plane_sums(gradOutput))
end

--------------------------------------------------------------------------------------------
-- nn.SpatialFullConvolutionMap(connTable, kW, kH [, dW, dH]): SpatialFullConvolution (no
-- padding) over the table's plane pairs; output size (H - 1) dH + kH
local SpatialFullConvolutionMap, parentFM = torch.class("nn.SpatialFullConvolutionMap", "nn.Module")

function SpatialFullConvolutionMap:__init(conMatrix, kW, kH, dW, dH)
  parentFM.__init(self)
  map_init(self, torch.type(self), conMatrix, kW, kH, dW, dH)
  self:reset()
end

SpatialFullConvolutionMap.reset = map_reset
SpatialFullConvolutionMap.__tostring__ = map_desc

-- the dense nInputPlane x nOutputPlane x kH x kW weight of the transposed kernel
function SpatialFullConvolutionMap:_denseWeight()
  local nO, nI = self.nOutputPlane, self.nInputPlane
  local idx = dense_index(self.connTable, 1, 2, nO)
  return self.weight.new(nI * nO, self.kH, self.kW):zero():indexAdd(1, idx, self.weight)
    :view(nI, nO, self.kH, self.kW)
end

function SpatialFullConvolutionMap:_planes(input)
  local h, w = check_image(self, input)
  local pd = input:dim() - 2
  if input:size(pd) < self.nInputPlane then
    error(("%s: input has %d planes, the connection table needs %d")
      :format(torch.type(self), input:size(pd), self.nInputPlane), 3)
  end
  local oH, oW = (input:size(h) - 1) * self.dH + self.kH, (input:size(w) - 1) * self.dW + self.kW
  local sizes = input:dim() == 4 and { input:size(1), self.nOutputPlane, oH, oW } or { self.nOutputPlane, oH, oW }
  if input:size(pd) > self.nInputPlane then return input:narrow(pd, 1, self.nInputPlane), sizes end
  return input, sizes
end

function SpatialFullConvolutionMap:updateOutput(input)
  local x = self:_planes(input)
  self.output:set(torch.conv_transpose2d(x, self:_denseWeight(), self.bias, { self.dH, self.dW }))
  return self.output
end

function SpatialFullConvolutionMap:updateGradInput(input, gradOutput)
  if self.gradInput then
    local x, sizes = self:_planes(input)
    check_gradOutput(self, gradOutput, sizes)
    local gi = torch.conv2d(gradOutput, self:_denseWeight(), nil, { self.dH, self.dW })
    return map_grad_input(self, input, x, gi)
  end
end

function SpatialFullConvolutionMap:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  local x, sizes = self:_planes(input)
  check_gradOutput(self, gradOutput, sizes)
  local nO, nI = self.nOutputPlane, self.nInputPlane
  local gw = torch.conv2d_backward_weight(x, gradOutput, { nI, nO, self.kH, self.kW }, { self.dH, self.dW })
  self.gradWeight:add(scale, gw:view(nI * nO, self.kH, self.kW):index(1, dense_index(self.connTable, 1, 2, nO)))
  self.gradBias:add(scale, plane_sums(gradOutput))
end

--------------------------------------------------------------------------------------------
-- nn.SpatialSubSampling(nInputPlane, kW, kH [, dW, dH]): each plane's kW x kH windows
-- summed, times a weight per plane, plus a bias per plane; output size floor((H - kH) / dH) + 1
local SpatialSubSampling, parentSS = torch.class("nn.SpatialSubSampling", "nn.Module")

function SpatialSubSampling:__init(nInputPlane, kW, kH, dW, dH)
  parentSS.__init(self)
  dW, dH = dW or 1, dH or 1
  check_positive(torch.type(self), { "nInputPlane", "kW", "kH", "dW", "dH" }, nInputPlane, kW, kH, dW, dH)
  self.nInputPlane = nInputPlane
  self.kW, self.kH, self.dW, self.dH = kW, kH, dW, dH
  self.weight = torch.Tensor(nInputPlane)
  self.bias = torch.Tensor(nInputPlane)
  self.gradWeight = torch.Tensor(nInputPlane)
  self.gradBias = torch.Tensor(nInputPlane)
  self:reset()
end

function SpatialSubSampling:reset(stdv)
  return uniform_reset(self, stdv, self.kW * self.kH)
end

function SpatialSubSampling:_sizes(input)
  local h, w = check_image(self, input, self.nInputPlane)
  if input:size(w) < self.kW or input:size(h) < self.kH then
    error(("%s: input image (%s) smaller than kernel size %dx%d"):format(torch.type(self), sizestr(input), self.kW, self.kH), 3)
  end
  local oH = math.floor((input:size(h) - self.kH) / self.dH) + 1
  local oW = math.floor((input:size(w) - self.kW) / self.dW) + 1
  if input:dim() == 4 then return { input:size(1), self.nInputPlane, oH, oW } end
  return { self.nInputPlane, oH, oW }
end

-- a grouped kernel: plane c's kH x kW window all weight[c]
function SpatialSubSampling:_kernelWeight()
  return self.weight:view(self.nInputPlane, 1, 1, 1):expand(self.nInputPlane, 1, self.kH, self.kW):contiguous()
end

function SpatialSubSampling:updateOutput(input)
  self:_sizes(input)
  self.output:set(torch.conv2d(input, self:_kernelWeight(), self.bias, { self.dH, self.dW }, 0, 1, self.nInputPlane))
  return self.output
end

function SpatialSubSampling:updateGradInput(input, gradOutput)
  if self.gradInput then
    check_gradOutput(self, gradOutput, self:_sizes(input))
    self.gradInput:set(torch.conv2d_backward_input(gradOutput, self:_kernelWeight(), input:size(),
      { self.dH, self.dW }, 0, 1, self.nInputPlane))
    return self.gradInput
  end
end

function SpatialSubSampling:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  check_gradOutput(self, gradOutput, self:_sizes(input))
  local C = self.nInputPlane
  local gw = torch.conv2d_backward_weight(gradOutput, input, { C, 1, self.kH, self.kW }, { self.dH, self.dW }, 0, 1, C)
  self.gradWeight:add(scale, gw:view(C, self.kH * self.kW):sum(2):view(C))
  self.gradBias:add(scale, plane_sums(gradOutput))
end

function SpatialSubSampling:__tostring__()
  local s = ("%s(%d, %dx%d"):format(torch.type(self), self.nInputPlane, self.kW, self.kH)
  if self.dW ~= 1 or self.dH ~= 1 then s = s .. (", %d,%d"):format(self.dW, self.dH) end
  return s .. ")"
end

--------------------------------------------------------------------------------------------
-- Sequences: nFrames x frameSize, or a batch N x nFrames x frameSize.
local function check_sequence(self, input, frameSize)
  if not torch.isTensor(input) then
    error(("%s: input must be a tensor, got %s"):format(torch.type(self), torch.type(input)), 4)
  end
  local d = input:dim()
  if d ~= 2 and d ~= 3 then
    error(("%s: 2D or 3D (batch mode) tensor expected for input (nFrames x frameSize), got size %s")
      :format(torch.type(self), sizestr(input)), 4)
  end
  if frameSize and input:size(d) ~= frameSize then
    error(("%s: invalid input frame size %d, expected %d (input size %s)")
      :format(torch.type(self), input:size(d), frameSize, sizestr(input)), 4)
  end
  check_type(self, input)
end

-- a sequence as a batch of one-plane images N x 1 x nFrames x frameSize (a view when it can)
local function seq_image(input)
  local x = input:isContiguous() and input or input:contiguous()
  if x:dim() == 2 then return x:view(1, 1, x:size(1), x:size(2)) end
  return x:view(x:size(1), 1, x:size(2), x:size(3))
end

local function seq_frames(self, input, kW, dW)
  local T = input:size(input:dim() - 1)
  if T < kW then
    error(("%s: input sequence of %d frames is shorter than the kernel (%d)"):format(torch.type(self), T, kW), 4)
  end
  return math.floor((T - kW) / dW) + 1
end

--------------------------------------------------------------------------------------------
-- nn.TemporalConvolution(inputFrameSize, outputFrameSize, kW [, dW = 1]): output frame t is
-- weight * (input frames (t-1) dW + 1 .. (t-1) dW + kW, concatenated) + bias.
-- weight: outputFrameSize x (kW * inputFrameSize); nOutputFrame = floor((nFrames - kW)/dW) + 1.
-- Computed as a 2-D convolution of the 1 x nFrames image whose planes are the features, with
-- a 1 x kW kernel per (output feature, input feature) pair.
local TemporalConvolution, parentTC = torch.class("nn.TemporalConvolution", "nn.Module")

function TemporalConvolution:__init(inputFrameSize, outputFrameSize, kW, dW)
  parentTC.__init(self)
  dW = dW or 1
  check_positive(torch.type(self), { "inputFrameSize", "outputFrameSize", "kW", "dW" },
    inputFrameSize, outputFrameSize, kW, dW)
  self.inputFrameSize, self.outputFrameSize = inputFrameSize, outputFrameSize
  self.kW, self.dW = kW, dW
  self.weight = torch.Tensor(outputFrameSize, inputFrameSize * kW)
  self.bias = torch.Tensor(outputFrameSize)
  self.gradWeight = torch.Tensor(outputFrameSize, inputFrameSize * kW)
  self.gradBias = torch.Tensor(outputFrameSize)
  self:reset()
end

function TemporalConvolution:reset(stdv)
  return uniform_reset(self, stdv, self.kW * self.inputFrameSize)
end

-- the weight as outputFrameSize x inputFrameSize x 1 x kW (a copy)
function TemporalConvolution:_kernelWeight()
  return viewed(self.weight, self.outputFrameSize, self.kW, self.inputFrameSize):transpose(2, 3):contiguous()
    :view(self.outputFrameSize, self.inputFrameSize, 1, self.kW)
end

function TemporalConvolution:_outputSizes(input)
  check_sequence(self, input, self.inputFrameSize)
  local n = seq_frames(self, input, self.kW, self.dW)
  if input:dim() == 3 then return { input:size(1), n, self.outputFrameSize } end
  return { n, self.outputFrameSize }
end

-- a sequence (or a batch) as N x frameSize x 1 x nFrames
local function planes_image(t)
  local b = t:dim() == 2 and t:view(1, t:size(1), t:size(2)) or t
  return b:transpose(2, 3):contiguous():view(b:size(1), b:size(3), 1, b:size(2))
end

-- N x F x 1 x T from the kernel as the sequence layout (a view)
local function planes_sequence(y, sizes)
  local out = y:view(y:size(1), y:size(2), y:size(4)):transpose(2, 3)
  if #sizes == 2 then out = out:select(1, 1) end
  return out
end

function TemporalConvolution:updateOutput(input)
  local sizes = self:_outputSizes(input)
  local y = torch.conv2d(planes_image(input), self:_kernelWeight(), self.bias, { 1, self.dW })
  self.output:resize(table.unpack(sizes)):copy(planes_sequence(y, sizes))
  return self.output
end

function TemporalConvolution:updateGradInput(input, gradOutput)
  if self.gradInput then
    local sizes = self:_outputSizes(input)
    check_gradOutput(self, gradOutput, sizes)
    local x = planes_image(input)
    local gi = torch.conv2d_backward_input(planes_image(gradOutput), self:_kernelWeight(), x:size(), { 1, self.dW })
    self.gradInput:resizeAs(input):copy(planes_sequence(gi, sizes))
    return self.gradInput
  end
end

function TemporalConvolution:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  check_gradOutput(self, gradOutput, self:_outputSizes(input))
  local g = planes_image(gradOutput)
  local O, F = self.outputFrameSize, self.inputFrameSize
  local gw = torch.conv2d_backward_weight(g, planes_image(input), { O, F, 1, self.kW }, { 1, self.dW })
  viewed(self.gradWeight, O, self.kW, F):add(scale, gw:view(O, F, self.kW):transpose(2, 3))
  self.gradBias:add(scale, plane_sums(g))
end

-- shared modules update through the parameters too (the gradient does not read them)
TemporalConvolution.sharedAccUpdateGradParameters = nn.Module.accUpdateGradParameters

function TemporalConvolution:__tostring__()
  local s = ("%s(%d -> %d, %d"):format(torch.type(self), self.inputFrameSize, self.outputFrameSize, self.kW)
  if self.dW ~= 1 then s = s .. (", %d"):format(self.dW) end
  return s .. ")"
end

--------------------------------------------------------------------------------------------
-- nn.TemporalSubSampling(inputFrameSize, kW [, dW = 1]): output frame t is the sum of input
-- frames (t-1) dW + 1 .. (t-1) dW + kW, times a weight per feature, plus a bias per feature
local TemporalSubSampling, parentTS = torch.class("nn.TemporalSubSampling", "nn.Module")

function TemporalSubSampling:__init(inputFrameSize, kW, dW)
  parentTS.__init(self)
  dW = dW or 1
  check_positive(torch.type(self), { "inputFrameSize", "kW", "dW" }, inputFrameSize, kW, dW)
  self.inputFrameSize, self.kW, self.dW = inputFrameSize, kW, dW
  self.weight = torch.Tensor(inputFrameSize)
  self.bias = torch.Tensor(inputFrameSize)
  self.gradWeight = torch.Tensor(inputFrameSize)
  self.gradBias = torch.Tensor(inputFrameSize)
  self:reset()
end

function TemporalSubSampling:reset(stdv)
  return uniform_reset(self, stdv, self.kW)
end

function TemporalSubSampling:_outputSizes(input)
  check_sequence(self, input, self.inputFrameSize)
  local n = seq_frames(self, input, self.kW, self.dW)
  if input:dim() == 3 then return { input:size(1), n, self.inputFrameSize } end
  return { n, self.inputFrameSize }
end

-- a grouped kernel over the feature planes: feature f's kW taps all weight[f]
function TemporalSubSampling:_kernelWeight()
  local F = self.inputFrameSize
  return self.weight:view(F, 1, 1, 1):expand(F, 1, 1, self.kW):contiguous()
end

function TemporalSubSampling:updateOutput(input)
  local sizes = self:_outputSizes(input)
  local y = torch.conv2d(planes_image(input), self:_kernelWeight(), self.bias, { 1, self.dW }, 0, 1,
    self.inputFrameSize)
  self.output:resize(table.unpack(sizes)):copy(planes_sequence(y, sizes))
  return self.output
end

function TemporalSubSampling:updateGradInput(input, gradOutput)
  if self.gradInput then
    local sizes = self:_outputSizes(input)
    check_gradOutput(self, gradOutput, sizes)
    local x = planes_image(input)
    local gi = torch.conv2d_backward_input(planes_image(gradOutput), self:_kernelWeight(), x:size(),
      { 1, self.dW }, 0, 1, self.inputFrameSize)
    self.gradInput:resizeAs(input):copy(planes_sequence(gi, sizes))
    return self.gradInput
  end
end

function TemporalSubSampling:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  check_gradOutput(self, gradOutput, self:_outputSizes(input))
  local F = self.inputFrameSize
  local g = planes_image(gradOutput)
  local gw = torch.conv2d_backward_weight(g, planes_image(input), { F, 1, 1, self.kW }, { 1, self.dW }, 0, 1, F)
  self.gradWeight:add(scale, gw:view(F, self.kW):sum(2):view(F))
  self.gradBias:add(scale, plane_sums(g))
end

function TemporalSubSampling:__tostring__()
  local s = ("%s(%d, %d"):format(torch.type(self), self.inputFrameSize, self.kW)
  if self.dW ~= 1 then s = s .. (", %d"):format(self.dW) end
  return s .. ")"
end

--------------------------------------------------------------------------------------------
-- nn.TemporalMaxPooling(kW [, dW = kW]): each feature's maximum over windows of kW frames,
-- dW frames apart; self.indices holds where each maximum was found
local TemporalMaxPooling, parentTM = torch.class("nn.TemporalMaxPooling", "nn.Module")

function TemporalMaxPooling:__init(kW, dW)
  parentTM.__init(self)
  dW = dW or kW
  check_positive(torch.type(self), { "kW", "dW" }, kW, dW)
  self.kW, self.dW = kW, dW
end

function TemporalMaxPooling:_outputSizes(input)
  check_sequence(self, input)
  local n = seq_frames(self, input, self.kW, self.dW)
  local d = input:dim()
  if d == 3 then return { input:size(1), n, input:size(3) } end
  return { n, input:size(2) }
end

function TemporalMaxPooling:updateOutput(input)
  local sizes = self:_outputSizes(input)
  local v, idx = torch.max_pool2d_with_indices(seq_image(input), { self.kW, 1 }, { self.dW, 1 })
  self.indices = idx
  self.output:set(v:view(table.unpack(sizes)))
  return self.output
end

function TemporalMaxPooling:updateGradInput(input, gradOutput)
  if self.gradInput then
    check_gradOutput(self, gradOutput, self:_outputSizes(input))
    if not self.indices then self:updateOutput(input) end
    local x = seq_image(input)
    local gi = torch.max_pool2d_backward(seq_image(gradOutput), self.indices, x:size())
    self.gradInput:set(gi:view(input:size()))
    return self.gradInput
  end
end

function TemporalMaxPooling:empty() self:clearState() end

function TemporalMaxPooling:clearState()
  nn.utils.clear(self, "indices")
  return parentTM.clearState(self)
end

function TemporalMaxPooling:__tostring__()
  return ("%s(%d, %d)"):format(torch.type(self), self.kW, self.dW)
end

--------------------------------------------------------------------------------------------
-- nn.TemporalDynamicKMaxPooling(minK [, factor = 0]): the k largest values of each feature
-- over the frames, kept in their order in the sequence; k = max(minK, ceil(factor * nFrames))
local TemporalDynamicKMaxPooling, parentDK = torch.class("nn.TemporalDynamicKMaxPooling", "nn.Module")

function TemporalDynamicKMaxPooling:__init(minK, factor)
  parentDK.__init(self)
  check_positive(torch.type(self), { "minK" }, minK)
  self.minK = minK
  self.factor = factor or 0
end

function TemporalDynamicKMaxPooling:updateOutput(input)
  check_sequence(self, input)
  local dim = input:dim() - 1
  local T = input:size(dim)
  local k = math.max(self.minK, math.ceil(self.factor * T))
  if T < k then
    error(("%s: input sequence length (%d) too small for the desired k value (%d)")
      :format(torch.type(self), T, k), 2)
  end
  local _, top = torch.topk(input, k, dim, true)
  self.indices = top:sort(dim)
  self.output:set(input:gather(dim, self.indices))
  return self.output
end

function TemporalDynamicKMaxPooling:updateGradInput(input, gradOutput)
  if self.gradInput then
    check_sequence(self, input)
    if not self.indices or not gradOutput:isSameSizeAs(self.indices) then
      error(("%s: gradOutput of size %s does not match the last output")
        :format(torch.type(self), sizestr(gradOutput)), 2)
    end
    local dim = input:dim() - 1
    -- the kept positions are distinct: scattering places each gradient once
    self.gradInput:resizeAs(input):zero():scatter(dim, self.indices, gradOutput)
    return self.gradInput
  end
end

function TemporalDynamicKMaxPooling:clearState()
  nn.utils.clear(self, "indices")
  return parentDK.clearState(self)
end

--------------------------------------------------------------------------------------------
-- nn.TemporalRowConvolution(inputFrameSize, kW [, dW = 1, featFirst = false]): every feature
-- row is convolved with its own kW-tap kernel: output[t][f] = sum_k weight[f][1][k] *
-- input[(t-1) dW + k][f] + bias[f]. Input nFrames x inputFrameSize, or inputFrameSize x
-- nFrames with featFirst (batches: a leading dim); the output has the input's layout.
local TemporalRowConvolution, parentTR = torch.class("nn.TemporalRowConvolution", "nn.Module")

function TemporalRowConvolution:__init(inputFrameSize, kW, dW, featFirst)
  parentTR.__init(self)
  dW = dW or 1
  check_positive(torch.type(self), { "inputFrameSize", "kW", "dW" }, inputFrameSize, kW, dW)
  self.inputFrameSize, self.kW, self.dW = inputFrameSize, kW, dW
  self.weight = torch.Tensor(inputFrameSize, 1, kW)
  self.bias = torch.Tensor(inputFrameSize)
  self.gradWeight = torch.Tensor(inputFrameSize, 1, kW)
  self.gradBias = torch.Tensor(inputFrameSize)
  self.featFirst = featFirst and true or false
  self:reset()
end

TemporalRowConvolution.noBias = SpatialConvolution.noBias

function TemporalRowConvolution:reset(stdv)
  return uniform_reset(self, stdv, self.kW * self.inputFrameSize)
end

-- the input as N x F x 1 x T (features as planes), and the output's sizes
function TemporalRowConvolution:_image(input)
  local F = self.inputFrameSize
  if not torch.isTensor(input) or (input:dim() ~= 2 and input:dim() ~= 3) then
    error(("%s: 2D or 3D (batch mode) tensor expected for input"):format(torch.type(self)), 3)
  end
  check_type(self, input)
  local d = input:dim()
  local fdim, tdim = d - 1, d
  if not self.featFirst then fdim, tdim = d, d - 1 end
  if input:size(fdim) ~= F then
    error(("%s: input has %d features, expected inputFrameSize %d (input size %s%s)")
      :format(torch.type(self), input:size(fdim), F, sizestr(input), self.featFirst and ", featFirst" or ""), 3)
  end
  local T = input:size(tdim)
  if T < self.kW then
    error(("%s: input sequence of %d frames is shorter than the kernel (%d)"):format(torch.type(self), T, self.kW), 3)
  end
  local nOut = math.floor((T - self.kW) / self.dW) + 1
  local x = input
  if d == 2 then x = x:view(1, x:size(1), x:size(2)) end
  if not self.featFirst then x = x:transpose(2, 3) end
  x = x:contiguous():view(x:size(1), F, 1, T)
  local sizes
  if self.featFirst then sizes = { F, nOut } else sizes = { nOut, F } end
  if d == 3 then table.insert(sizes, 1, input:size(1)) end
  return x, sizes
end

-- a tensor in the input's layout as N x F x 1 x T
function TemporalRowConvolution:_asImage(t)
  local g = t
  if g:dim() == 2 then g = g:view(1, g:size(1), g:size(2)) end
  if not self.featFirst then g = g:transpose(2, 3) end
  return g:contiguous():view(g:size(1), g:size(2), 1, g:size(3))
end

-- N x F x 1 x T' in the input's layout (sizes)
function TemporalRowConvolution:_fromImage(y, sizes)
  local r = y:view(y:size(1), y:size(2), y:size(4))
  if not self.featFirst then r = r:transpose(2, 3) end
  if #sizes == 2 then r = r:select(1, 1) end
  return r
end

function TemporalRowConvolution:_kernelWeight()
  return viewed(self.weight, self.inputFrameSize, 1, 1, self.kW)
end

function TemporalRowConvolution:updateOutput(input)
  local x, sizes = self:_image(input)
  local y = torch.conv2d(x, self:_kernelWeight(), self.bias, { 1, self.dW }, 0, 1, self.inputFrameSize)
  self.output:resize(table.unpack(sizes)):copy(self:_fromImage(y, sizes))
  return self.output
end

function TemporalRowConvolution:updateGradInput(input, gradOutput)
  if self.gradInput then
    local x, sizes = self:_image(input)
    check_gradOutput(self, gradOutput, sizes)
    local gi = torch.conv2d_backward_input(self:_asImage(gradOutput), self:_kernelWeight(), x:size(),
      { 1, self.dW }, 0, 1, self.inputFrameSize)
    self.gradInput:resizeAs(input):copy(self:_fromImage(gi, input:dim() == 2 and { 0, 0 } or { 0, 0, 0 }))
    return self.gradInput
  end
end

function TemporalRowConvolution:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  local x, sizes = self:_image(input)
  check_gradOutput(self, gradOutput, sizes)
  local g = self:_asImage(gradOutput)
  local F = self.inputFrameSize
  local gw = torch.conv2d_backward_weight(g, x, { F, 1, 1, self.kW }, { 1, self.dW }, 0, 1, F)
  accumulate(self.gradWeight, scale, gw)
  if self.bias and self.gradBias then self.gradBias:add(scale, plane_sums(g)) end
end

TemporalRowConvolution.type = SpatialConvolution.type
TemporalRowConvolution.clearState = SpatialConvolution.clearState

function TemporalRowConvolution:__tostring__()
  local s = ("%s(%d, %d"):format(torch.type(self), self.inputFrameSize, self.kW)
  if self.dW ~= 1 then s = s .. (", %d"):format(self.dW) end
  return with_bias(self, s)
end

return nn
