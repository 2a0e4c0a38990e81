-- t7nn/simple.lua — modules of one line of math each, and the pass-through ones:
-- Identity, ...
local torch = require "torch"
local nn = require "t7nn.env"

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

return nn
