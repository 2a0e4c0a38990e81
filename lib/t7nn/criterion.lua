-- t7nn/criterion.lua — nn.Criterion: a loss. forward(input, target) -> updateOutput, a
-- number in self.output; backward(input, target) -> updateGradInput, d loss / d input in
-- self.gradInput.
local torch = require "torch"
local nn = require "t7nn.env"

local Criterion = torch.class("nn.Criterion")

function Criterion:__init()
  self.gradInput = torch.Tensor()
  self.output = 0
end

function Criterion:updateOutput(input, target) end
function Criterion:forward(input, target) return self:updateOutput(input, target) end
function Criterion:backward(input, target) return self:updateGradInput(input, target) end
function Criterion:updateGradInput(input, target) end

Criterion.clone = nn.Module.clone

function Criterion:type(typename, tensorCache)
  if not typename then return self._type or self.gradInput:type() end
  tensorCache = tensorCache or {}
  for k, v in pairs(self) do
    self[k] = nn.utils.recursiveType(v, typename, tensorCache)
  end
  self._type = typename
  return self
end

function Criterion:float() return self:type("torch.FloatTensor") end
function Criterion:double() return self:type("torch.DoubleTensor") end
function Criterion:cuda() return self:type("torch.CudaTensor") end

-- crit(input, target) is forward then backward
function Criterion:__call__(input, target)
  self.output = self:forward(input, target)
  self.gradInput = self:backward(input, target)
  return self.output, self.gradInput
end

function Criterion:__tostring__() return torch.type(self) end

return Criterion
