-- t7nn/simple.lua — modules of one line of math each, and the pass-through ones:
-- Identity, Copy, Contiguous, the scalings and shifts (CMul, Mul, MulConstant, CAdd, Add,
-- AddConstant, Constant), the noises (Dropout, SpatialDropout, VolumetricDropout,
-- WhiteNoise), OneHot, PrintSize, ZeroGrad, GradientReversal, Normalize, L1Penalty, Maxout.
local torch = require "torch"
local nn = require "t7nn.env"
local H = require "t7nn.helpers"
local sizestr, fail, grad_like, check_tensor = H.sizestr, H.failf, H.grad_like, H.check_tensor
local out = H.sized

-- a one-element tensor of no dims (what x:squeeze() gives for one element) as its number
local function scalar(v)
  if torch.isTensor(v) and v:dim() == 0 and v:nElement() == 1 then return v:sum() end
  return v
end

-- a new empty tensor of the named type ("torch.FloatTensor")
local function tensor_of(typename, self)
  local stem = type(typename) == "string" and typename:match("^torch%.(%a+Tensor)$")
  local cls = stem and torch[stem]
  if not cls then error(("%s: unknown tensor type '%s'"):format(torch.type(self), tostring(typename)), 3) end
  return cls()
end

-- the sizes given as numbers or as one LongStorage, checked positive
local function sizes_arg(self, args)
  local s = args
  if #args == 1 and torch.typename(args[1]) == "torch.LongStorage" then s = args[1]:totable() end
  if #s == 0 then fail(self, "a size is required") end
  local st = torch.LongStorage(#s)
  for i, v in ipairs(s) do
    if math.type(v) == nil or v < 1 then fail(self, "size %d must be a positive number, got %s", i, tostring(v)) end
    st[i] = v
  end
  return st
end

-- nn.Identity: output is the input (the same tensor or table), gradInput the gradOutput
local Identity = torch.class("nn.Identity", "nn.Module")

function Identity:updateOutput(input)
  self.output = input
  return self.output
end

function Identity:updateGradInput(input, gradOutput)
  self.gradInput = gradOutput
  return self.gradInput
end

function Identity:clearState()
  -- output and gradInput are the caller's tensors: forget them, do not empty them
  self.output, self.gradInput = torch.Tensor(), torch.Tensor()
  return self
end

-- nn.Copy(inputType, outputType [, forceCopy, dontCast]): the input converted to
-- outputType, the gradient back to inputType. Between one type (and no forceCopy) the
-- output shares the input's memory. dontCast: :type() leaves the module alone.
local Copy, CopyParent = torch.class("nn.Copy", "nn.Module")

function Copy:__init(intype, outtype, forceCopy, dontCast)
  CopyParent.__init(self)
  intype = intype or torch.Tensor.__typename
  outtype = outtype or torch.Tensor.__typename
  self.dontCast = dontCast
  self.gradInput = tensor_of(intype, self)
  self.output = tensor_of(outtype, self)
  -- a flag rather than Torch7's per-instance closures: modules with functions in them
  -- cannot be written to a file
  self.shareMemory = (not forceCopy) and intype == outtype
end

function Copy:updateOutput(input)
  check_tensor(self, input)
  if self.shareMemory then
    self.output:set(input)
  else
    self.output:resize(input:size()):copy(input)
  end
  return self.output
end

function Copy:updateGradInput(input, gradOutput)
  check_tensor(self, gradOutput, "gradOutput")
  if self.shareMemory then
    self.gradInput:set(gradOutput)
  else
    self.gradInput:resize(gradOutput:size()):copy(gradOutput)
  end
  return self.gradInput
end

function Copy:type(typename, tensorCache)
  if typename and self.dontCast then return self end
  return CopyParent.type(self, typename, tensorCache)
end

-- nn.Contiguous: the input itself when contiguous, else a contiguous copy (same for
-- the gradient)
local Contiguous, ContiguousParent = torch.class("nn.Contiguous", "nn.Module")

function Contiguous:updateOutput(input)
  check_tensor(self, input)
  if input:isContiguous() then
    self.output:set(input)
  else
    -- output may still be a view of an earlier input: detach it before resizing
    self.output:set()
    self.output:resizeAs(input):copy(input)
  end
  return self.output
end

function Contiguous:updateGradInput(input, gradOutput)
  check_tensor(self, gradOutput, "gradOutput")
  if gradOutput:isContiguous() then
    self.gradInput:set(gradOutput)
  else
    self.gradInput:set()
    self.gradInput:resizeAs(gradOutput):copy(gradOutput)
  end
  return self.gradInput
end

-- The shape a parameter of sizes `size` takes against an input (CMul, CAdd): the input's
-- own shape when both have as many elements; itself (broadcast over its dims of size 1)
-- when both have as many dims; else 1 x (one sample's shape), for a batch.
local function param_view(self, param, input)
  local pn, xn = param:nElement(), input:nElement()
  if pn == xn then return param:view(input:size()), "same" end
  if param:dim() == input:dim() then
    for d = 1, param:dim() do
      local ps, xs = param:size(d), input:size(d)
      if ps ~= xs and ps ~= 1 then
        error(("%s: the parameter of size %s cannot expand to the input's size %s")
          :format(torch.type(self), sizestr(param), sizestr(input)), 4)
      end
    end
    return param, "expand"
  end
  if input:dim() >= 2 and pn * input:size(1) == xn then
    local s = input:size():totable()
    s[1] = 1
    return param:view(table.unpack(s)), "batch"
  end
  error(("%s: an input of size %s does not fit the parameter of size %s")
    :format(torch.type(self), sizestr(input), sizestr(param)), 4)
end

-- sums t (of the input's shape) down to the shape of param's view, into param's gradient
local function acc_param_grad(gparam, view, mode, t, scale)
  if mode == "same" then
    gparam:add(scale, t:view(gparam:size()))
    return
  end
  for d = 1, t:dim() do
    if view:size(d) == 1 and t:size(d) ~= 1 then t = t:sum(d) end
  end
  gparam:add(scale, t:contiguous():view(gparam:size()))
end

-- nn.CMul(size...) or nn.CMul(LongStorage): y = x * weight elementwise, weight of the
-- given size; a weight of the input's element count multiplies element by element, one
-- with the input's dims broadcasts over its dims of size 1, else the input is a batch of
-- samples each multiplied by the weight
local CMul, CMulParent = torch.class("nn.CMul", "nn.Module")

function CMul:__init(...)
  CMulParent.__init(self)
  self.size = sizes_arg(self, { ... })
  self.weight = torch.Tensor(self.size)
  self.gradWeight = torch.Tensor(self.size)
  self.output:resize(self.size)
  self:reset()
end

function CMul:reset(stdv)
  stdv = stdv and stdv * math.sqrt(3) or 1 / math.sqrt(self.weight:nElement())
  self.weight:uniform(-stdv, stdv)
  return self
end

function CMul:updateOutput(input)
  check_tensor(self, input)
  local w = param_view(self, self.weight, input)
  torch.cmul(out(self.output, input), input, w:expandAs(input))
  return self.output
end

function CMul:updateGradInput(input, gradOutput)
  if not self.gradInput then return end
  gradOutput = grad_like(self, input, gradOutput)
  local w = param_view(self, self.weight, input)
  torch.cmul(out(self.gradInput, gradOutput), gradOutput, w:expandAs(input))
  return self.gradInput
end

function CMul:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  gradOutput = grad_like(self, input, gradOutput)
  local w, mode = param_view(self, self.weight, input)
  self._repeat = self._repeat or input.new()
  torch.cmul(out(self._repeat, input), input, gradOutput)
  acc_param_grad(self.gradWeight, w, mode, self._repeat, scale)
end

function CMul:type(typename, tensorCache)
  if typename then self:clearState() end
  return CMulParent.type(self, typename, tensorCache)
end

function CMul:clearState()
  nn.utils.clear(self, "_input", "_output", "_weight", "_gradWeight", "_expand", "_repeat", "_sum")
  return CMulParent.clearState(self)
end

function CMul:__tostring__()
  return torch.type(self) .. "(" .. table.concat(self.size:totable(), "x") .. ")"
end

-- nn.CAdd(size...) or nn.CAdd(LongStorage): y = x + bias, the bias fitted to the input
-- as CMul's weight is
local CAdd, CAddParent = torch.class("nn.CAdd", "nn.Module")

function CAdd:__init(...)
  CAddParent.__init(self)
  self.size = sizes_arg(self, { ... })
  self.bias = torch.Tensor(self.size)
  self.gradBias = torch.Tensor(self.size)
  self.output:resize(self.size)
  self:reset()
end

function CAdd:reset(stdv)
  stdv = stdv and stdv * math.sqrt(3) or 1 / math.sqrt(self.bias:nElement())
  self.bias:uniform(-stdv, stdv)
  return self
end

function CAdd:updateOutput(input)
  check_tensor(self, input)
  local b = param_view(self, self.bias, input)
  torch.add(out(self.output, input), input, b:expandAs(input))
  return self.output
end

function CAdd:updateGradInput(input, gradOutput)
  gradOutput = grad_like(self, input, gradOutput)
  self.gradInput = self.gradInput or input.new()
  self.gradInput:resizeAs(gradOutput):copy(gradOutput)
  return self.gradInput
end

function CAdd:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  gradOutput = grad_like(self, input, gradOutput)
  local b, mode = param_view(self, self.bias, input)
  acc_param_grad(self.gradBias, b, mode, gradOutput, scale)
end

function CAdd:type(typename, tensorCache)
  if typename then self:clearState() end
  return CAddParent.type(self, typename, tensorCache)
end

function CAdd:clearState()
  nn.utils.clear(self, "_gradBias", "_expand", "_output", "_bias", "_repeat")
  return CAddParent.clearState(self)
end

function CAdd:__tostring__()
  return torch.type(self) .. "(" .. table.concat(self.size:totable(), "x") .. ")"
end

-- nn.Mul(): y = w * x with one learnt scalar w (weight, one element)
local Mul, MulParent = torch.class("nn.Mul", "nn.Module")

function Mul:__init()
  MulParent.__init(self)
  self.weight = torch.Tensor(1)
  self.gradWeight = torch.Tensor(1)
  self:reset()
end

function Mul:reset(stdv)
  stdv = stdv and stdv * math.sqrt(3) or 1 / math.sqrt(self.weight:size(1))
  self.weight:uniform(-stdv, stdv)
  return self
end

function Mul:updateOutput(input)
  check_tensor(self, input)
  torch.mul(out(self.output, input), input, self.weight[1])
  return self.output
end

function Mul:updateGradInput(input, gradOutput)
  gradOutput = grad_like(self, input, gradOutput)
  torch.mul(out(self.gradInput, gradOutput), gradOutput, self.weight[1])
  return self.gradInput
end

function Mul:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  gradOutput = grad_like(self, input, gradOutput)
  self.gradWeight[1] = self.gradWeight[1] + scale * input:dot(gradOutput)
end

-- nn.MulConstant(c [, inplace]): y = c * x; in place, the input becomes the output and
-- backward restores it (dividing by c)
local MulConstant, MulConstantParent = torch.class("nn.MulConstant", "nn.Module")

function MulConstant:__init(constant_scalar, ip)
  MulConstantParent.__init(self)
  constant_scalar = scalar(constant_scalar)
  if type(constant_scalar) ~= "number" then
    error("nn.MulConstant: the constant must be a number, got " .. torch.type(constant_scalar), 2)
  end
  if ip ~= nil and type(ip) ~= "boolean" then error("nn.MulConstant: the in-place flag must be a boolean", 2) end
  self.constant_scalar = constant_scalar
  self.inplace = ip or false
end

function MulConstant:updateOutput(input)
  check_tensor(self, input)
  if self.inplace then
    input:mul(self.constant_scalar)
    self.output:set(input)
  else
    torch.mul(out(self.output, input), input, self.constant_scalar)
  end
  return self.output
end

function MulConstant:updateGradInput(input, gradOutput)
  if not self.gradInput then return end
  gradOutput = grad_like(self, input, gradOutput)
  if self.inplace then
    gradOutput:mul(self.constant_scalar)
    self.gradInput:set(gradOutput)
    input:div(self.constant_scalar)
  else
    torch.mul(out(self.gradInput, gradOutput), gradOutput, self.constant_scalar)
  end
  return self.gradInput
end

function MulConstant:__tostring__()
  return ("%s(%g%s)"):format(torch.type(self), self.constant_scalar, self.inplace and ", in-place" or "")
end

-- nn.Add(inputSize [, scalar]): y = x + bias with a learnt bias of inputSize elements
-- (a batch gets it on every sample), or one learnt scalar when scalar is true
local Add, AddParent = torch.class("nn.Add", "nn.Module")

function Add:__init(inputSize, scalar)
  AddParent.__init(self)
  local size = scalar and 1 or inputSize
  if math.type(size) == nil or size < 1 then
    error("nn.Add: inputSize must be a positive number, got " .. tostring(inputSize), 2)
  end
  self.scalar = scalar
  self.bias = torch.Tensor(size)
  self.gradBias = torch.Tensor(size)
  self._ones = torch.Tensor({ 1 })
  self:reset()
end

function Add:reset(stdv)
  stdv = stdv and stdv * math.sqrt(3) or 1 / math.sqrt(self.bias:size(1))
  self.bias:uniform(-stdv, stdv)
  return self
end

function Add:updateOutput(input)
  check_tensor(self, input)
  if self.scalar then
    torch.add(out(self.output, input), input, self.bias[1])
  elseif input:isSameSizeAs(self.bias) then
    torch.add(out(self.output, input), input, self.bias)
  else
    local n = input:size(1)
    if input:nElement() ~= n * self.bias:nElement() then
      fail(self, "an input of size %s is not a batch of %d-element samples", sizestr(input), self.bias:nElement())
    end
    self.output:resizeAs(input):copy(input)
    self.output:view(n, -1):add(self.bias:view(1, -1):expand(n, self.bias:nElement()))
  end
  return self.output
end

function Add:updateGradInput(input, gradOutput)
  if self.gradInput then
    gradOutput = grad_like(self, input, gradOutput)
    self.gradInput:resizeAs(gradOutput):copy(gradOutput)
    return self.gradInput
  end
end

function Add:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  gradOutput = grad_like(self, input, gradOutput)
  if self.gradBias:size(1) == 1 then
    self.gradBias[1] = self.gradBias[1] + scale * gradOutput:sum()
  elseif input:isSameSizeAs(self.bias) then
    self.gradBias:add(scale, gradOutput)
  else
    local g = gradOutput:contiguous():view(input:size(1), -1):sum(1)
    self.gradBias:view(-1):add(scale, g:view(-1))
  end
end

function Add:__tostring__()
  return ("%s(%d)"):format(torch.type(self), self.bias:nElement())
end

-- nn.AddConstant(c [, inplace]): y = x + c, c a number or a vector added to each row of
-- a 1-D or 2-D input; in place, the input becomes the output and backward restores it
local AddConstant, AddConstantParent = torch.class("nn.AddConstant", "nn.Module")

function AddConstant:__init(constant_scalar, ip)
  AddConstantParent.__init(self)
  constant_scalar = scalar(constant_scalar)
  if type(constant_scalar) ~= "number" and not torch.isTensor(constant_scalar) then
    error("nn.AddConstant: the constant must be a number or a tensor, got " .. torch.type(constant_scalar), 2)
  end
  if ip ~= nil and type(ip) ~= "boolean" then error("nn.AddConstant: the in-place flag must be a boolean", 2) end
  self.constant_scalar = constant_scalar
  self.inplace = ip or false
end

-- the constant as something to add to input: a number, or the vector expanded to it
local function constant_for(self, input)
  local c = self.constant_scalar
  if type(c) == "number" then return c end
  local d = input:dim()
  if d > 2 or d == 0 or input:size(d) ~= c:nElement() then
    error(("%s: the input (size %s) does not match the constant of %d elements (a 1-D or 2-D input whose last dim has them)")
      :format(torch.type(self), sizestr(input), c:nElement()), 4)
  end
  c = c:view(-1)
  if d == 2 then c = c:view(1, -1):expand(input:size(1), c:nElement()) end
  return c
end

function AddConstant:updateOutput(input)
  check_tensor(self, input)
  local c = constant_for(self, input)
  if self.inplace then
    input:add(c)
    self.output:set(input)
  else
    torch.add(out(self.output, input), input, c)
  end
  return self.output
end

function AddConstant:updateGradInput(input, gradOutput)
  gradOutput = grad_like(self, input, gradOutput)
  if self.inplace then
    self.gradInput:set(gradOutput)
    local c = constant_for(self, input)
    if type(c) == "number" then input:add(-c) else input:add(-1, c) end
  else
    self.gradInput:resizeAs(gradOutput):copy(gradOutput)
  end
  return self.gradInput
end

function AddConstant:__tostring__()
  local c = self.constant_scalar
  return ("%s(%s%s)"):format(torch.type(self), type(c) == "number" and ("%g"):format(c) or torch.type(c),
    self.inplace and ", in-place" or "")
end

-- nn.Constant(value [, nInputDim]): outputs value (a number or a tensor) whatever the
-- input; an input of more than nInputDim dims is a batch, and gets value per sample
local Constant, ConstantParent = torch.class("nn.Constant", "nn.Module")

function Constant:__init(value, nInputDim)
  if type(value) == "number" then value = torch.Tensor({ value }) end
  if not torch.isTensor(value) then error("nn.Constant: expecting a number or a tensor as value, got " .. torch.type(value), 2) end
  if nInputDim ~= nil and math.type(nInputDim) == nil then error("nn.Constant: nInputDim must be a number", 2) end
  self.value = value
  self.nInputDim = nInputDim
  ConstantParent.__init(self)
end

function Constant:updateOutput(input)
  if self.nInputDim and torch.isTensor(input) and input:dim() > self.nInputDim then
    local vs = self.value:size():totable()
    local n = input:size(1)
    self.output:resize(n, table.unpack(vs))
    self.output:copy(self.value:view(1, table.unpack(vs)):expand(self.output:size()))
  else
    self.output:resize(self.value:size()):copy(self.value)
  end
  return self.output
end

function Constant:updateGradInput(input, gradOutput)
  check_tensor(self, input)
  self.gradInput:resizeAs(input):zero()
  return self.gradInput
end

-- nn.Dropout([p = 0.5, v1, inplace, stochasticInference]): in training each element is
-- zeroed with probability p (one Bernoulli mask, kept in noise for backward). Version 2
-- (the default) divides the kept elements by 1-p while training and passes the input
-- unchanged in evaluation; version 1 (v1 true) scales by 1-p in evaluation instead.
-- stochasticInference: the mask is drawn in evaluation too.
local Dropout, DropoutParent = torch.class("nn.Dropout", "nn.Module")

function Dropout:__init(p, v1, inplace, stochasticInference)
  DropoutParent.__init(self)
  self.p = p or 0.5
  if type(self.p) ~= "number" or self.p >= 1 or self.p < 0 then
    error("nn.Dropout: illegal percentage, must be 0 <= p < 1", 2)
  end
  self.train = true
  self.inplace = inplace
  self.stochastic_inference = stochasticInference or false
  self.v2 = not v1
  self.noise = torch.Tensor()
end

function Dropout:updateOutput(input)
  check_tensor(self, input)
  if self.p > 0 and (self.train or self.stochastic_inference) then
    self.noise:resizeAs(input):bernoulli(1 - self.p)
    if self.v2 then self.noise:div(1 - self.p) end
    if self.inplace then
      input:cmul(self.noise)
      self.output:set(input)
    else
      torch.cmul(out(self.output, input), input, self.noise)
    end
    return self.output
  end
  if self.inplace then
    self.output:set(input)
  else
    self.output:resizeAs(input):copy(input)
  end
  if self.p > 0 and not self.v2 then self.output:mul(1 - self.p) end
  return self.output
end

function Dropout:updateGradInput(input, gradOutput)
  gradOutput = grad_like(self, input, gradOutput)
  local factor
  if self.train then
    factor = self.p > 0 and self.noise or nil
  elseif not self.v2 and self.p > 0 then
    factor = 1 - self.p
  end
  if self.inplace then
    if type(factor) == "number" then gradOutput:mul(factor) elseif factor then gradOutput:cmul(factor) end
    self.gradInput:set(gradOutput)
  elseif factor == nil then
    self.gradInput:resizeAs(gradOutput):copy(gradOutput)
  elseif type(factor) == "number" then
    torch.mul(out(self.gradInput, gradOutput), gradOutput, factor)
  else
    if not self.noise:isSameSizeAs(gradOutput) then
      fail(self, "backward of an input of size %s after a forward of size %s", sizestr(gradOutput), sizestr(self.noise))
    end
    torch.cmul(out(self.gradInput, gradOutput), gradOutput, self.noise)
  end
  return self.gradInput
end

function Dropout:setp(p) self.p = p end

function Dropout:__tostring__()
  return ("%s(%f)"):format(torch.type(self), self.p)
end

function Dropout:clearState()
  if self.noise then self.noise:set() end
  return DropoutParent.clearState(self)
end

-- dropout of whole feature maps: one Bernoulli draw per (sample, plane) of an input of
-- nd dims (a single sample) or nd + 1 dims (a batch), spread over the plane
local function feature_dropout(cls, nd, what)
  local M, parent = torch.class(cls, "nn.Module")

  function M:__init(p, stochasticInference)
    parent.__init(self)
    self.p = p or 0.5
    if type(self.p) ~= "number" or self.p >= 1 or self.p < 0 then
      error(cls .. ": illegal percentage, must be 0 <= p < 1", 2)
    end
    self.train = true
    self.stochastic_inference = stochasticInference or false
    self.noise = torch.Tensor()
  end

  function M:updateOutput(input)
    check_tensor(self, input)
    local d = input:dim()
    if d ~= nd and d ~= nd + 1 then
      fail(self, "input must be %dD %s or %dD (a batch), got size %s", nd, what, nd + 1, sizestr(input))
    end
    if self.train or self.stochastic_inference then
      local s = {}
      for i = 1, d do s[i] = 1 end
      s[1] = input:size(1)
      if d == nd + 1 then s[2] = input:size(2) end
      self.noise:resize(table.unpack(s)):bernoulli(1 - self.p)
      torch.cmul(out(self.output, input), input, self.noise:expandAs(input))
    else
      torch.mul(out(self.output, input), input, 1 - self.p)
    end
    return self.output
  end

  function M:updateGradInput(input, gradOutput)
    if not self.train then fail(self, "backprop only defined while training") end
    gradOutput = grad_like(self, input, gradOutput)
    if self.noise:dim() ~= input:dim() then fail(self, "backward before forward") end
    torch.cmul(out(self.gradInput, gradOutput), gradOutput, self.noise:expandAs(input))
    return self.gradInput
  end

  function M:setp(p) self.p = p end

  function M:__tostring__()
    return ("%s(%f)"):format(torch.type(self), self.p)
  end

  function M:clearState()
    if self.noise then self.noise:set() end
    return parent.clearState(self)
  end
  return M
end

-- nn.SpatialDropout([p = 0.5, stochasticInference]): drops whole planes of a C x H x W
-- input (or N x C x H x W); evaluation scales by 1-p
feature_dropout("nn.SpatialDropout", 3, "(nfeat, h, w)")
-- nn.VolumetricDropout([p = 0.5, stochasticInference]): the same over C x T x H x W
-- volumes (or N x C x T x H x W)
feature_dropout("nn.VolumetricDropout", 4, "(nfeat, t, h, w)")

-- nn.WhiteNoise([mean = 0, std = 0.1]): adds Gaussian noise in training; in evaluation
-- adds only the mean
local WhiteNoise, WhiteNoiseParent = torch.class("nn.WhiteNoise", "nn.Module")

function WhiteNoise:__init(mean, std)
  WhiteNoiseParent.__init(self)
  self.mean = mean or 0
  self.std = std or 0.1
  if type(self.mean) ~= "number" or type(self.std) ~= "number" or self.std < 0 then
    error("nn.WhiteNoise: mean and std must be numbers, std >= 0", 2)
  end
  self.noise = torch.Tensor()
end

function WhiteNoise:updateOutput(input)
  check_tensor(self, input)
  if self.train ~= false then
    self.noise:resizeAs(input):normal(self.mean, self.std)
    torch.add(out(self.output, input), input, self.noise)
  elseif self.mean ~= 0 then
    torch.add(out(self.output, input), input, self.mean)
  else
    self.output:resizeAs(input):copy(input)
  end
  return self.output
end

function WhiteNoise:updateGradInput(input, gradOutput)
  if self.train == false then fail(self, "backprop only defined while training") end
  gradOutput = grad_like(self, input, gradOutput)
  self.gradInput:resizeAs(gradOutput):copy(gradOutput)
  return self.gradInput
end

function WhiteNoise:clearState()
  self.noise:set()
  return WhiteNoiseParent.clearState(self)
end

function WhiteNoise:__tostring__()
  return ("%s mean: %f, std: %f"):format(torch.type(self), self.mean, self.std)
end

-- nn.OneHot(outputSize): class indices (1-based; a number or a tensor) to one-hot
-- vectors, a new last dim of outputSize; the gradient is zero
local OneHot, OneHotParent = torch.class("nn.OneHot", "nn.Module")

function OneHot:__init(outputSize)
  OneHotParent.__init(self)
  if math.type(outputSize) == nil or outputSize < 1 then
    error("nn.OneHot: outputSize must be a positive number, got " .. tostring(outputSize), 2)
  end
  self.outputSize = outputSize
end

function OneHot:updateOutput(input)
  local size, idx
  if type(input) == "number" then
    self._single = self._single or torch.LongTensor(1)
    self._single[1] = input
    idx = self._single
    size = {}
  elseif torch.isTensor(input) then
    size = input:dim() > 0 and input:size():totable() or {}
    idx = input
  else
    fail(self, "input must be a number or a tensor of indices, got %s", torch.type(input))
  end
  local n = #size
  size[n + 1] = self.outputSize
  self.output:resize(table.unpack(size)):zero()
  if idx:nElement() == 0 then return self.output end
  size[n + 1] = 1
  if torch.type(idx) ~= "torch.LongTensor" then
    self._input = self._input or torch.LongTensor()
    self._input:resize(idx:size()):copy(idx)
    idx = self._input
  end
  local lo, hi = idx:min(), idx:max()
  if lo < 1 or hi > self.outputSize then
    fail(self, "index %d out of range 1..%d", lo < 1 and lo or hi, self.outputSize)
  end
  self.output:scatter(n + 1, idx:view(table.unpack(size)), 1)
  return self.output
end

function OneHot:updateGradInput(input, gradOutput)
  if type(input) == "number" then return 0 end
  check_tensor(self, input)
  self.gradInput:resize(input:size()):zero()
  return self.gradInput
end

function OneHot:clearState()
  self._single, self._input = nil, nil
  return OneHotParent.clearState(self)
end

function OneHot:type(typename, tensorCache)
  self._single, self._input = nil, nil
  return OneHotParent.type(self, typename, tensorCache)
end

function OneHot:__tostring__()
  return ("%s(%d)"):format(torch.type(self), self.outputSize)
end

-- nn.PrintSize([prefix]): passes the input through, printing its size (and the
-- gradOutput's in backward)
local PrintSize, PrintSizeParent = torch.class("nn.PrintSize", "nn.Module")

function PrintSize:__init(prefix)
  PrintSizeParent.__init(self)
  self.prefix = prefix or "PrintSize"
end

local function size_of(v)
  if torch.type(v) == "table" then return v end
  if v == nil then return "missing size" end
  return v:size()
end

function PrintSize:updateOutput(input)
  self.output = input
  print(self.prefix .. ":input\n", size_of(input))
  return self.output
end

function PrintSize:updateGradInput(input, gradOutput)
  print(self.prefix .. ":gradOutput\n", size_of(gradOutput))
  self.gradInput = gradOutput
  return self.gradInput
end

-- nn.ZeroGrad: passes the input through; its gradient is zero (tables of tensors too)
local ZeroGrad = torch.class("nn.ZeroGrad", "nn.Module")

function ZeroGrad:updateOutput(input)
  if torch.isTensor(input) then self.output:set(input) else self.output = input end
  return self.output
end

function ZeroGrad:updateGradInput(input, gradOutput)
  self.gradInput = nn.utils.recursiveResizeAs(self.gradInput, input)
  self.gradInput = nn.utils.recursiveFill(self.gradInput, 0)
  return self.gradInput
end

-- nn.GradientReversal([lambda = 1]): the identity forward; backward multiplies the
-- gradient by -lambda
local GradientReversal, GradientReversalParent = torch.class("nn.GradientReversal", "nn.Module")
GradientReversal.__version = 2

function GradientReversal:__init(lambda)
  GradientReversalParent.__init(self)
  self.lambda = lambda or 1
  if type(self.lambda) ~= "number" then error("nn.GradientReversal: lambda must be a number", 2) end
end

function GradientReversal:setLambda(lambda) self.lambda = lambda end

function GradientReversal:updateOutput(input)
  check_tensor(self, input)
  self.output:set(input)
  return self.output
end

function GradientReversal:updateGradInput(input, gradOutput)
  gradOutput = grad_like(self, input, gradOutput)
  torch.mul(out(self.gradInput, gradOutput), gradOutput, -self.lambda)
  return self.gradInput
end

-- files of version 1 had no lambda (it was 1)
function GradientReversal:read(file, version)
  local fields = file:readObject()
  if type(fields) == "table" then for k, v in pairs(fields) do self[k] = v end end
  if version < 2 then self.lambda = 1 end
end

-- nn.Normalize(p [, eps = 1e-10]): each row of a 1-D or 2-D input divided by its p-norm
-- (p > 0, math.huge for the max norm); the norm is (sum |x|^p + eps)^(1/p), or
-- max |x| + eps
local Normalize, NormalizeParent = torch.class("nn.Normalize", "nn.Module")

function Normalize:__init(p, eps)
  NormalizeParent.__init(self)
  if type(p) ~= "number" then error("nn.Normalize: p-norm not provided", 2) end
  if not (p > 0) then error("nn.Normalize: " .. p .. "-norm not supported", 2) end
  self.p = p
  self.eps = eps or 1e-10
end

local function rows(self, t, what)
  if not torch.isTensor(t) or t:dim() < 1 or t:dim() > 2 then
    error(("%s: %s must be a 1-D or 2-D tensor (only 1d layer supported), got %s")
      :format(torch.type(self), what, torch.isTensor(t) and sizestr(t) or torch.type(t)), 3)
  end
  if t:dim() == 1 then return t:view(1, -1) end
  return t
end

function Normalize:updateOutput(input)
  local x = rows(self, input, "input")
  self.norm = self.norm or x.new()
  self.buffer = self.buffer or x.new()
  out(self.buffer, x):abs(x)
  if self.p == math.huge then
    self._indices = self._indices or torch.LongTensor()
    self.norm:resize(x:size(1), 1)
    self._indices:resize(x:size(1), 1)
    torch.max(self.norm, self._indices, self.buffer, 2)
    self.norm:add(self.eps)
  else
    self.normp = self.normp or x.new()
    self.buffer:pow(self.p)
    self.normp:resize(x:size(1), 1)
    torch.sum(self.normp, self.buffer, 2)
    self.normp:add(self.eps)
    torch.pow(out(self.norm, self.normp), self.normp, 1 / self.p)
  end
  self._output = self._output or x.new()
  torch.cdiv(out(self._output, x), x, self.norm:expandAs(x))
  self.output:set(self._output:view(input:size()))
  return self.output
end

-- d y_i / d x_k = delta_ik / N - x_i dN/dx_k / N^2 with dN/dx_k = x_k |x_k|^(p-2) N / normp
-- (max norm: sign(x_k) at the largest |x_k|, 0 elsewhere)
function Normalize:updateGradInput(input, gradOutput)
  local x = rows(self, input, "input")
  gradOutput = grad_like(self, input, gradOutput)
  local go = rows(self, gradOutput, "gradOutput")
  if not self.norm or self.norm:dim() ~= 2 or self.norm:size(1) ~= x:size(1) then
    fail(self, "backward before forward")
  end
  local n, d = x:size(1), x:size(2)
  self.cross = self.cross or x.new()
  self.buffer2 = self.buffer2 or x.new()
  -- cross = sum_i go_i x_i per row
  torch.cmul(out(self.buffer2, x), x, go)
  self.cross:resize(n, 1)
  torch.sum(self.cross, self.buffer2, 2)
  self._gradInput = self._gradInput or x.new()
  local gi = self._gradInput
  if self.p == math.huge then
    torch.cmul(out(gi, go), go, self.norm:expandAs(go))
    self.buffer:resizeAs(x):zero()
    local picked = x:gather(2, self._indices):sign()
    self.buffer:scatter(2, self._indices, picked)
    self.buffer:cmul(self.cross:expandAs(x))
    gi:add(-1, self.buffer)
    torch.cmul(out(self.buffer2, self.norm), self.norm, self.norm)
  else
    torch.cmul(out(gi, go), go, self.normp:expandAs(go))
    local p = self.p
    if p == 2 then
      self.buffer:resizeAs(x):copy(x)
    elseif p % 2 == 0 then
      out(self.buffer, x):pow(x, p - 2):cmul(x)
    elseif p < 2 then
      -- |x|^(p-2) is infinite at 0: eps keeps it finite, as Torch7 did
      out(self.buffer, x):abs(x):add(self.eps):pow(p - 2):cmul(x)
    else
      out(self.buffer, x):abs(x):pow(p - 2):cmul(x)
    end
    self.buffer:cmul(self.cross:expandAs(x))
    gi:add(-1, self.buffer)
    torch.cmul(out(self.buffer2, self.normp), self.normp, self.norm)
  end
  gi:cdiv(self.buffer2:expand(n, d))
  self.gradInput:set(gi:view(input:size()))
  return self.gradInput
end

function Normalize:__tostring__()
  if self.p % 1 == 0 then return ("%s(%d)"):format(torch.type(self), self.p) end
  return ("%s(%f)"):format(torch.type(self), self.p)
end

function Normalize:type(typename, tensorCache)
  self._indices = nil
  NormalizeParent.type(self, typename, tensorCache)
  return self
end

function Normalize:clearState()
  nn.utils.clear(self, "_output", "_indices", "_gradInput", "buffer", "buffer2", "norm", "normp", "cross")
  return NormalizeParent.clearState(self)
end

-- nn.L1Penalty(l1weight [, sizeAverage = false, provideOutput = true]): the identity,
-- recording loss = l1weight * |x|_1 (divided by the element count with sizeAverage);
-- backward adds that loss's gradient, l1weight * sign(x), to gradOutput (or gives it
-- alone when provideOutput is false)
local L1Penalty, L1PenaltyParent = torch.class("nn.L1Penalty", "nn.Module")

function L1Penalty:__init(l1weight, sizeAverage, provideOutput)
  L1PenaltyParent.__init(self)
  if type(l1weight) ~= "number" then error("nn.L1Penalty: l1weight must be a number", 2) end
  self.l1weight = l1weight
  self.sizeAverage = sizeAverage or false
  if provideOutput == nil then self.provideOutput = true else self.provideOutput = provideOutput end
end

local function l1_scale(self, input)
  local m = self.l1weight
  if self.sizeAverage == true then m = m / input:nElement() end
  return m
end

function L1Penalty:updateOutput(input)
  check_tensor(self, input)
  self.loss = l1_scale(self, input) * input:norm(1)
  self.output = input
  return self.output
end

function L1Penalty:updateGradInput(input, gradOutput)
  check_tensor(self, input)
  out(self.gradInput, input):sign(input):mul(l1_scale(self, input))
  if self.provideOutput == true then
    self.gradInput:add(grad_like(self, input, gradOutput))
  end
  return self.gradInput
end

-- nn.Maxout(inputSize, outputSize, maxoutNumber [, preprocess]): a Linear to
-- outputSize * maxoutNumber units, seen as maxoutNumber groups of outputSize, then the
-- largest of each unit's maxoutNumber values. preprocess, a module, runs on the
-- (batch x) maxoutNumber x outputSize values before the max. The container holds the
-- Linear (and preprocess); the grouping and the max are done here.
local Maxout, MaxoutParent = torch.class("nn.Maxout", "nn.Sequential")

function Maxout:__init(inputSize, outputSize, maxoutNumber, preprocess)
  MaxoutParent.__init(self)
  for i, v in ipairs({ inputSize, outputSize, maxoutNumber }) do
    if math.type(v) == nil or v < 1 then
      error(("nn.Maxout: argument %d must be a positive number, got %s"):format(i, tostring(v)), 2)
    end
  end
  self.outputSize, self.maxoutNumber = outputSize, maxoutNumber
  self:add(nn.Linear(inputSize, outputSize * maxoutNumber))
  if preprocess then self:add(preprocess) end
  self.output = torch.Tensor()
  self.gradInput = torch.Tensor()
  self._indices = torch.LongTensor()
end

-- the Linear's output as (n x) maxoutNumber x outputSize, and the dim to take the max over
local function grouped(self, lin)
  local k, o = self.maxoutNumber, self.outputSize
  if lin:dim() == 1 then return lin:view(k, o), 1 end
  return lin:view(lin:size(1), k, o), 2
end

function Maxout:updateOutput(input)
  local lin = self:rethrowErrors(self.modules[1], 1, "updateOutput", input)
  local g, dim = grouped(self, lin)
  if self.modules[2] then g = self:rethrowErrors(self.modules[2], 2, "updateOutput", g) end
  self._pre = g
  self._values = self._values or g.new()
  local s = g:size():totable()
  s[dim] = 1
  self._values:resize(table.unpack(s))
  self._indices:resize(table.unpack(s))
  torch.max(self._values, self._indices, g, dim)
  self.output:set(self._values:select(dim, 1))
  return self.output
end

-- the gradient with respect to the grouped values: gradOutput at each max, 0 elsewhere
local function grouped_grad(self, gradOutput)
  local g = self._pre
  local dim = g:dim() == 2 and 1 or 2
  self._gradPre = self._gradPre or g.new()
  self._gradPre:resizeAs(g):zero()
  self._gradPre:scatter(dim, self._indices, gradOutput:contiguous():view(self._indices:size()))
  return self._gradPre
end

local function maxout_back(self, input, gradOutput, method, ...)
  local g = grouped_grad(self, gradOutput)
  local lin = self.modules[1].output
  if self.modules[2] then
    local gl, _ = grouped(self, lin)
    g = self:rethrowErrors(self.modules[2], 2, method, gl, g, ...)
  end
  g = g:contiguous():view(lin:size())
  return self:rethrowErrors(self.modules[1], 1, method, input, g, ...)
end

function Maxout:updateGradInput(input, gradOutput)
  self.gradInput = maxout_back(self, input, gradOutput, "updateGradInput")
  return self.gradInput
end

function Maxout:backward(input, gradOutput, scale)
  self.gradInput = maxout_back(self, input, gradOutput, "backward", scale or 1)
  return self.gradInput
end

function Maxout:accGradParameters(input, gradOutput, scale)
  local g = grouped_grad(self, gradOutput)
  local lin = self.modules[1].output
  if self.modules[2] then
    local gl = grouped(self, lin)
    self:rethrowErrors(self.modules[2], 2, "accGradParameters", gl, g, scale or 1)
    g = self.modules[2].gradInput
  end
  self:rethrowErrors(self.modules[1], 1, "accGradParameters", input, g:contiguous():view(lin:size()), scale or 1)
end

function Maxout:accUpdateGradParameters(input, gradOutput, lr)
  local g = grouped_grad(self, gradOutput)
  local lin = self.modules[1].output
  if self.modules[2] then
    local gl = grouped(self, lin)
    self:rethrowErrors(self.modules[2], 2, "accUpdateGradParameters", gl, g, lr)
    g = self.modules[2].gradInput
  end
  self:rethrowErrors(self.modules[1], 1, "accUpdateGradParameters", input, g:contiguous():view(lin:size()), lr)
end

function Maxout:clearState()
  nn.utils.clear(self, "_values", "_gradPre")
  self._pre = nil
  if self._indices then self._indices:set() end
  return MaxoutParent.clearState(self)
end

return nn
