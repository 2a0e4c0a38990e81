-- t7nn/linear.lua — affine maps: Linear, ...
local torch = require "torch"
local nn = require "t7nn.env"

-- nn.Linear(inputSize, outputSize [, bias = true]): y = W x + b for x of inputSize
-- elements or a batch (n x inputSize); weight is outputSize x inputSize
local Linear, parent = torch.class("nn.Linear", "nn.Module")

function Linear:__init(inputSize, outputSize, bias)
  parent.__init(self)
  if math.type(inputSize) == nil or math.type(outputSize) == nil then
    error("nn.Linear: inputSize and outputSize must be numbers", 2)
  end
  self.weight = torch.Tensor(outputSize, inputSize)
  self.gradWeight = torch.Tensor(outputSize, inputSize)
  if bias ~= false then
    self.bias = torch.Tensor(outputSize)
    self.gradBias = torch.Tensor(outputSize)
  end
  self:reset()
end

function Linear:noBias()
  self.bias, self.gradBias = nil, nil
  return self
end

-- uniform in +-1/sqrt(inputSize), or +-stdv*sqrt(3) (a uniform of standard deviation stdv)
function Linear:reset(stdv)
  stdv = stdv and stdv * math.sqrt(3) or 1 / math.sqrt(self.weight:size(2))
  self.weight:uniform(-stdv, stdv)
  if self.bias then self.bias:uniform(-stdv, stdv) end
  return self
end

local function check_input(self, input)
  local d = input:dim()
  if (d ~= 1 and d ~= 2) or input:size(d) ~= self.weight:size(2) then
    error(("nn.Linear: input must be a vector of %d elements or a batch n x %d (got size %s): size mismatch")
      :format(self.weight:size(2), self.weight:size(2), table.concat(input:size():totable(), "x")), 3)
  end
end

function Linear:updateOutput(input)
  check_input(self, input)
  if input:dim() == 1 then
    self.output:resize(self.weight:size(1))
    if self.bias then self.output:copy(self.bias) else self.output:zero() end
    self.output:addmv(1, self.weight, input)
  else
    local n = input:size(1)
    self.output:resize(n, self.weight:size(1))
    if self.bias then
      self.output:copy(self.bias:view(1, -1):expand(n, self.weight:size(1)))
    else
      self.output:zero()
    end
    self.output:addmm(1, input, self.weight:t())
  end
  return self.output
end

function Linear:updateGradInput(input, gradOutput)
  if self.gradInput then
    self.gradInput:resizeAs(input)
    if input:dim() == 1 then
      self.gradInput:addmv(0, 1, self.weight:t(), gradOutput)
    else
      self.gradInput:addmm(0, 1, gradOutput, self.weight)
    end
    return self.gradInput
  end
end

function Linear:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  if input:dim() == 1 then
    self.gradWeight:addr(scale, gradOutput, input)
    if self.bias then self.gradBias:add(scale, gradOutput) end
  else
    self.gradWeight:addmm(scale, gradOutput:t(), input)
    if self.bias then self.gradBias:add(scale, gradOutput:sum(1):view(-1)) end
  end
end

function Linear:clearState()
  nn.utils.clear(self, "addBuffer")
  return parent.clearState(self)
end

function Linear:__tostring__()
  return ("%s(%d -> %d)%s"):format(torch.type(self), self.weight:size(2), self.weight:size(1),
    self.bias and "" or " without bias")
end

return nn
