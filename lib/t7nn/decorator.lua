-- t7nn/decorator.lua — modules wrapping one module: Decorator (passes everything through),
-- Bottle, WeightNorm, DontCast, NaN, Profile, GPU
local torch = require "torch"
local nn = require "t7nn.env"
local H = require "t7nn.helpers"
local fail = H.fail

local function check_module(cls, module, level)
  if not torch.isTypeOf(module, "nn.Module") then
    fail(cls, "the decorated module must be an nn.Module (got " .. torch.type(module) .. ")", level + 1)
  end
end

-- nn.Decorator(module): a container of one module that forwards every call to it
local Decorator, decParent = torch.class("nn.Decorator", "nn.Container")

function Decorator:__init(module)
  decParent.__init(self)
  check_module(torch.type(self), module, 3)
  self.modules[1] = module
end

function Decorator:updateOutput(input)
  self.output = self.modules[1]:updateOutput(input)
  return self.output
end

function Decorator:updateGradInput(input, gradOutput)
  self.gradInput = self.modules[1]:updateGradInput(input, gradOutput)
  return self.gradInput
end

function Decorator:accGradParameters(input, gradOutput, scale)
  self.modules[1]:accGradParameters(input, gradOutput, scale)
end

function Decorator:accUpdateGradParameters(input, gradOutput, lr)
  self.modules[1]:accUpdateGradParameters(input, gradOutput, lr)
end

function Decorator:sharedAccUpdateGradParameters(input, gradOutput, lr)
  self.modules[1]:sharedAccUpdateGradParameters(input, gradOutput, lr)
end

function Decorator:__tostring__()
  local inner = self.modules[1].__tostring__ and self.modules[1]:__tostring__() or torch.type(self.modules[1])
  return torch.type(self) .. " @ " .. inner
end

-- makes a class a decorator without inheriting from Decorator
function Decorator.decorate(class)
  for _, name in ipairs({ "updateOutput", "updateGradInput", "accGradParameters",
                          "accUpdateGradParameters", "sharedAccUpdateGradParameters", "__tostring__" }) do
    class[name] = Decorator[name]
  end
end

-- nn.Bottle(module [, nInputDim = 2] [, nOutputDim = nInputDim]): applies a module made for
-- nInputDim-D inputs to inputs with more leading dims, folded into the first one
local Bottle, botParent = torch.class("nn.Bottle", "nn.Decorator")

function Bottle:__init(module, nInputDim, nOutputDim)
  botParent.__init(self, module)
  self.nInputDim = nInputDim or 2
  self.nOutputDim = nOutputDim or self.nInputDim
  if self.nInputDim < 1 or self.nOutputDim < 1 then fail("nn.Bottle", "nInputDim and nOutputDim must be positive", 2) end
  self.dimDelta = self.nInputDim - self.nOutputDim
  self.inShape = torch.Tensor(self.nInputDim)
  self.outShape = torch.Tensor(self.nOutputDim)
end

function Bottle:updateOutput(input)
  if not torch.isTensor(input) then fail("nn.Bottle", "input must be a tensor", 2) end
  local lead = input:dim() - self.nInputDim   -- the dims folded into the first
  if lead > 0 then
    local sizes = input:size():totable()
    local fold = 1
    for d = 1, lead + 1 do fold = fold * sizes[d] end
    local inner = { fold }
    for d = lead + 2, #sizes do inner[#inner + 1] = sizes[d] end
    self.inShape:resize(#inner):copy(torch.Tensor(inner))
    local output = self.modules[1]:updateOutput(input:contiguous():view(table.unpack(inner)))
    if output:dim() ~= self.nOutputDim then
      fail("nn.Bottle", ("Wrong number of output dims on module. Expected: %d but got %d"):format(self.nOutputDim, output:dim()), 2)
    end
    local osz = output:size():totable()
    self.outShape:resize(#osz):copy(torch.Tensor(osz))
    local shape = {}
    for d = 1, lead do shape[d] = sizes[d] end
    shape[lead + 1] = osz[1] // (fold // sizes[lead + 1])
    for d = 2, #osz do shape[#shape + 1] = osz[d] end
    self.output:set(output:contiguous():view(table.unpack(shape)))
  else
    self.output:set(self.modules[1]:updateOutput(input))
  end
  return self.output
end

local function shape_of(t) local s = {}; for i = 1, t:nElement() do s[i] = math.floor(t[i]) end; return s end

function Bottle:updateGradInput(input, gradOutput)
  local m = self.modules[1]
  if input:dim() > self.nInputDim then
    local gi = m:updateGradInput(input:contiguous():view(table.unpack(shape_of(self.inShape))),
      gradOutput:contiguous():view(table.unpack(shape_of(self.outShape))))
    if gi then self.gradInput:set(gi:contiguous():viewAs(input)) else self.gradInput = nil end
  else
    local gi = m:updateGradInput(input, gradOutput)
    if gi then self.gradInput:set(gi) else self.gradInput = nil end
  end
  return self.gradInput
end

function Bottle:accGradParameters(input, gradOutput, scale)
  if input:dim() > self.nInputDim then
    input = input:contiguous():view(table.unpack(shape_of(self.inShape)))
    gradOutput = gradOutput:contiguous():view(table.unpack(shape_of(self.outShape)))
  end
  self.modules[1]:accGradParameters(input, gradOutput, scale)
end

-- nn.WeightNorm(module [, outputDim = 1]): the module's weight becomes g * v / ||v||, the
-- norm over every dim but outputDim (a slice per output); the parameters are v, g and the
-- module's bias
local WeightNorm, wnParent = torch.class("nn.WeightNorm", "nn.Decorator")

function WeightNorm:__init(module, outputDim)
  wnParent.__init(self, module)
  if not torch.isTensor(module.weight) then fail("nn.WeightNorm", "the module must have a weight", 2) end
  if module.bias then self.bias, self.gradBias = module.bias, module.gradBias end
  self.weight, self.gradWeight = module.weight, module.gradWeight
  self.outputDim = outputDim or 1
  if self.outputDim < 1 or self.outputDim > self.weight:dim() then
    fail("nn.WeightNorm", "outputDim must be a dim of the weight (1.." .. self.weight:dim() .. ")", 2)
  end
  local rows = self.weight:size(self.outputDim)
  local others = self.weight:nElement() // rows
  self.viewIn = torch.LongStorage({ rows, others })
  local out = self.weight:size():totable()
  table.insert(out, 1, table.remove(out, self.outputDim))
  self.viewOut = torch.LongStorage(out)
  self.weightSize = self.weight:size()
  self.v = torch.Tensor(rows, others)
  self.g = torch.Tensor(rows)
  self._norm = torch.Tensor(rows)
  self._scale = torch.Tensor(rows)
  self.gradG = torch.Tensor(rows):zero()
  self.gradV = torch.Tensor(rows, others)
  self:resetInit()
end

-- the weight with outputDim moved first (and back)
function WeightNorm:permuteIn(t)
  for i = self.outputDim - 1, 1, -1 do t = t:transpose(i, i + 1) end
  return t
end
function WeightNorm:permuteOut(t)
  for i = 1, self.outputDim - 1 do t = t:transpose(i, i + 1) end
  return t
end

function WeightNorm:resetInit()
  self.v:normal(0, math.sqrt(2 / self.viewIn[2]))
  self.g:norm(self.v, 2, 2)
  if self.bias then self.bias:zero() end
end

function WeightNorm:evaluate()
  if self.train ~= false then
    self:updateWeight()
    wnParent.evaluate(self)
  end
end

-- weight = v * g / sqrt(||v||^2 + 1e-4)
function WeightNorm:updateWeight()
  local rows, others = self.viewIn[1], self.viewIn[2]
  self._norm:resize(rows, 1):norm(self.v, 2, 2)
  self._norm:resize(rows):pow(2):add(10e-5):sqrt()
  self._scale:resize(rows):copy(self.g):cdiv(self._norm)
  local w = torch.cmul(self.v, self._scale:view(rows, 1):expand(rows, others))
  self.weight:copy(self:permuteOut(w:view(self.viewOut)))
end

function WeightNorm:updateOutput(input)
  if self.train ~= false then self:updateWeight() end
  self.output:set(self.modules[1]:updateOutput(input))
  return self.output
end

function WeightNorm:updateGradInput(input, gradOutput)
  self.gradInput:set(self.modules[1]:updateGradInput(input, gradOutput))
  return self.gradInput
end

-- the module's weight gradient dW (its gradWeight is used as scratch space) turns into
-- dg = sum(dW .* v) / ||v|| and dv = (g / ||v||) dW - (g dg / ||v||^2) v
function WeightNorm:accGradParameters(input, gradOutput, scale)
  local rows, others = self.viewIn[1], self.viewIn[2]
  self.gradWeight:zero()
  self.modules[1]:accGradParameters(input, gradOutput, scale or 1)
  local dW = self:permuteIn(self.gradWeight):contiguous():view(rows, others)
  local norm = self._norm:view(rows, 1):expand(rows, others)
  local sc = self._scale:view(rows, 1):expand(rows, others)
  local dg = torch.cmul(dW, self.v):cdiv(norm):sum(2):view(rows)
  local dv = torch.cmul(dW, sc)
  dv:add(-1, torch.cmul(self.v, sc):cdiv(norm):cmul(dg:view(rows, 1):expand(rows, others)))
  self.gradG:add(dg)
  self.gradV:add(dv)
  self.gradWeight:copy(self:permuteOut(self.gradV:view(self.viewOut)))
end

function WeightNorm:accUpdateGradParameters(input, gradOutput, lr)
  local gv, gg = self.gradV, self.gradG
  self.gradV, self.gradG = self.v, self.g
  local ok, err = pcall(function()
    self.modules[1].gradBias, self.gradBias = self.bias, self.bias
    self:accGradParameters(input, gradOutput, -lr)
  end)
  self.gradV, self.gradG = gv, gg
  if self.bias then self.gradBias = self.modules[1].gradBias end
  if not ok then error(err, 0) end
end

function WeightNorm:zeroGradParameters()
  self.modules[1]:zeroGradParameters()
  self.gradV:zero()
  self.gradG:zero()
end

function WeightNorm:updateParameters(lr)
  if self.bias then self.bias:add(-lr, self.gradBias) end
  self.g:add(-lr, self.gradG)
  self.v:add(-lr, self.gradV)
end

function WeightNorm:parameters()
  if self.bias then
    return { self.v, self.g, self.bias }, { self.gradV, self.gradG, self.gradBias }
  end
  return { self.v, self.g }, { self.gradV, self.gradG }
end

-- nn.DontCast(module [, castin] [, castout = castin] [, moduleType]): :type() leaves the
-- module as it is; with castin the input (and gradInput) are converted to and from the
-- module's type, with castout the output (and gradOutput)
local DontCast, dcParent = torch.class("nn.DontCast", "nn.Decorator")

local function copy_as(dst, src, typename)
  if torch.type(src) == "table" then
    dst = torch.type(dst) == "table" and dst or {}
    for k, v in pairs(src) do dst[k] = copy_as(dst[k], v, typename) end
  elseif torch.isTensor(src) then
    dst = torch.type(dst) == typename and dst or torch[typename:match("^torch%.(.+)$")]()
    dst:resize(src:size())
    if src:nElement() > 0 then dst:copy(src) end
  end
  return dst
end

-- the type of the first tensor found in src (a tensor or nested tables), and whether found
local function tensor_type(src)
  if type(src) == "table" and not torch.isTensor(src) then
    local t
    for _, v in pairs(src) do
      local ty, found = tensor_type(v)
      if found then return ty, true end
      t = ty
    end
    return t, false
  end
  return torch.type(src), torch.isTensor(src)
end

function DontCast:__init(module, castin, castout, moduleType)
  dcParent.__init(self, module)
  self.castin = castin
  self.castout = castout == nil and castin or castout
  self.moduleType = moduleType
  if (self.castin or self.castout) and not self.moduleType then
    local ty, found = tensor_type(module.output)
    if not found then ty, found = tensor_type(module:parameters()) end
    if not found then fail("nn.DontCast", "Cannot extrapolate moduleType. Provide constructor argument 4", 2) end
    self.moduleType = ty
  end
end

function DontCast:updateOutput(input)
  if self.castin and tensor_type(input) ~= self.moduleType then
    self._input = copy_as(self._input, input, self.moduleType)
    input = self._input
  end
  local output = self.modules[1]:updateOutput(input)
  if self.castout then
    self.output = copy_as(self.output, output, tensor_type(self.output))
  else
    self.output = output
  end
  return self.output
end

local function module_args(self, input, gradOutput, convert)
  if self.castin and tensor_type(input) ~= self.moduleType then input = self._input end
  if self.castout and tensor_type(gradOutput) ~= self.moduleType then
    if convert then self._gradOutput = copy_as(self._gradOutput, gradOutput, self.moduleType) end
    gradOutput = self._gradOutput
  end
  return input, gradOutput
end

function DontCast:updateGradInput(input, gradOutput)
  local i, g = module_args(self, input, gradOutput, true)
  local gradInput = self.modules[1]:updateGradInput(i, g)
  if self.castin then
    self.gradInput = copy_as(self.gradInput, gradInput, tensor_type(self.gradInput))
  else
    self.gradInput = gradInput
  end
  return self.gradInput
end

function DontCast:accGradParameters(input, gradOutput, scale)
  local i, g = module_args(self, input, gradOutput, false)
  self.modules[1]:accGradParameters(i, g, scale)
end

function DontCast:accUpdateGradParameters(input, gradOutput, lr)
  local i, g = module_args(self, input, gradOutput, false)
  self.modules[1]:accUpdateGradParameters(i, g, lr)
end

-- only the decorator's own output/gradInput change type
function DontCast:type(typename)
  if not typename then return self._type end
  if self.castout and tensor_type(self.output) ~= typename then self.output = copy_as(nil, self.output, typename) end
  if self.castin and tensor_type(self.gradInput) ~= typename then self.gradInput = copy_as(nil, self.gradInput, typename) end
  return self
end

-- nn.NaN(module [, id]): raises an error naming the module when its output, gradInput or
-- parameter gradients hold a NaN (saying whether the input, gradOutput or parameters did)
local NaN, nanParent = torch.class("nn.NaN", "nn.Decorator")

local idseq = 0
function NaN.newId()
  idseq = idseq + 1
  return idseq
end

function NaN:__init(module, id)
  nanParent.__init(self, module)
  self.id = id or NaN.newId()
end

function NaN:recursiveIsNaN(t)
  if type(t) == "table" and not torch.isTensor(t) then
    for _, v in pairs(t) do
      if self:recursiveIsNaN(v) then return true end
    end
    return false
  elseif torch.isTensor(t) then
    if t:nElement() == 0 then return false end
    local s = t:sum()
    return s ~= s
  end
  return false
end

function NaN:updateOutput(input)
  self.output = self.modules[1]:updateOutput(input)
  if self:recursiveIsNaN(self.output) then
    local where = self:recursiveIsNaN(input) and "input"
      or self:recursiveIsNaN((self:parameters())) and "parameters" or "output"
    error(("NaN found in %s of module :\n%s"):format(where, self:__tostring__()), 2)
  end
  return self.output
end

function NaN:updateGradInput(input, gradOutput)
  self.gradInput = self.modules[1]:updateGradInput(input, gradOutput)
  if self:recursiveIsNaN(self.gradInput) then
    local where = self:recursiveIsNaN(gradOutput) and "gradOutput" or "gradInput"
    error(("NaN found in %s of module :\n%s"):format(where, self:__tostring__()), 2)
  end
  return self.gradInput
end

function NaN:accGradParameters(input, gradOutput, scale)
  self.modules[1]:accGradParameters(input, gradOutput, scale)
  local _, grads = self:parameters()
  if self:recursiveIsNaN(grads) then
    error("NaN found in gradParameters of module :\n" .. self:__tostring__(), 2)
  end
end

function NaN:__tostring__()
  local inner = self.modules[1].__tostring__ and self.modules[1]:__tostring__() or torch.type(self.modules[1])
  return ("%s(%s) @ %s"):format(torch.type(self), tostring(self.id), inner)
end

-- nn.Profile(module [, print_interval = 100] [, name]): prints the time spent in the
-- module's forward (and backward) passes every print_interval calls
local Profile, profParent = torch.class("nn.Profile", "nn.Decorator")

function Profile:__init(module, print_interval, name)
  profParent.__init(self, module)
  self.print_interval = print_interval or 100
  self.name = name or torch.type(module)
  self.module = module
  self.numFwds, self.numBwds = 0, 0
  self.summedFwdTime, self.summedBwdTime = 0, 0
end

local function clock() return os.clock() end

function Profile:updateOutput(input)
  local t0 = clock()
  self.output = self.module:updateOutput(input)
  self.summedFwdTime = self.summedFwdTime + (clock() - t0)
  self.numFwds = self.numFwds + 1
  if self.numFwds % self.print_interval == 0 then
    print(("%s took %.3f seconds for %d forward passes"):format(self.name, self.summedFwdTime, self.print_interval))
    self.numFwds, self.summedFwdTime = 0, 0
  end
  return self.output
end

function Profile:updateGradInput(input, gradOutput)
  local t0 = clock()
  self.gradInput = self.module:updateGradInput(input, gradOutput)
  self.summedBwdTime = self.summedBwdTime + (clock() - t0)
  self.numBwds = self.numBwds + 1
  if self.numBwds % self.print_interval == 0 then
    print(("%s took %.3f seconds for %d backward passes"):format(self.name, self.summedBwdTime, self.print_interval))
    self.numBwds, self.summedBwdTime = 0, 0
  end
  return self.gradInput
end

-- nn.GPU(module, device [, outdevice = device]): runs the module on a device. Without CUDA
-- (this build's tensors live on the CPU) the module runs where it is and the decorator
-- only records the devices, as Torch7's did for CPU tensors.
local GPU, gpuParent = torch.class("nn.GPU", "nn.Decorator")

function GPU:__init(module, device, outdevice)
  gpuParent.__init(self, module)
  if type(device) ~= "number" then fail("nn.GPU", "device must be a number (got " .. type(device) .. ")", 2) end
  self.device = device
  self.outdevice = outdevice or device
end

function GPU:setDevice(device)
  self.device = device or self.device
  return self
end

function GPU:__tostring__()
  local inner = self.modules[1].__tostring__ and self.modules[1]:__tostring__() or torch.type(self.modules[1])
  return ("%s(%s) @ %s"):format(torch.type(self), tostring(self.device), inner)
end

return nn
