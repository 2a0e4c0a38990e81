-- t7nn/shape.lua — modules that change the shape of a tensor: Reshape, ...
local torch = require "torch"
local nn = require "t7nn.env"

-- nn.Reshape(d1, d2, ... [, batchMode]) or nn.Reshape(LongStorage [, batchMode]): the
-- input's elements as that shape; an input with more elements is a batch (its first dim
-- kept) unless batchMode is false; batchMode true always keeps the first dim
local Reshape, parent = torch.class("nn.Reshape", "nn.Module")

function Reshape:__init(...)
  parent.__init(self)
  local args = { ... }
  if type(args[#args]) == "boolean" then self.batchMode = table.remove(args) end
  if #args == 1 and torch.typename(args[1]) == "torch.LongStorage" then args = args[1]:totable() end
  self.size = torch.LongStorage(#args)
  self.nelement = 1
  for i, s in ipairs(args) do
    if math.type(s) == nil or s < 1 then error(("nn.Reshape: size %d must be a positive number"):format(i), 2) end
    self.size[i] = s
    self.nelement = self.nelement * s
  end
  self.batchsize = torch.LongStorage(#args + 1)
  for i = 1, #args do self.batchsize[i + 1] = args[i] end
end

local function batched(self, input)
  if self.batchMode == false then return false end
  return self.batchMode == true or input:nElement() ~= self.nelement
end

function Reshape:updateOutput(input)
  if not input:isContiguous() then
    self._input = self._input or input.new()
    self._input:resizeAs(input):copy(input)
    input = self._input
  end
  if batched(self, input) then
    local n = input:size(1)
    if input:nElement() ~= n * self.nelement then
      error(("nn.Reshape: an input of %d elements cannot be %d x %s"):format(input:nElement(), n,
        table.concat(self.size:totable(), "x")), 2)
    end
    self.batchsize[1] = n
    self.output:set(input:view(self.batchsize))
  else
    if input:nElement() ~= self.nelement then
      error(("nn.Reshape: an input of %d elements cannot be %s"):format(input:nElement(),
        table.concat(self.size:totable(), "x")), 2)
    end
    self.output:set(input:view(self.size))
  end
  return self.output
end

function Reshape:updateGradInput(input, gradOutput)
  if not gradOutput:isContiguous() then
    self._gradOutput = self._gradOutput or gradOutput.new()
    self._gradOutput:resizeAs(gradOutput):copy(gradOutput)
    gradOutput = self._gradOutput
  end
  self.gradInput:set(gradOutput:view(input:size()))
  return self.gradInput
end

function Reshape:__tostring__()
  return torch.type(self) .. "(" .. table.concat(self.size:totable(), "x") .. ")"
end

function Reshape:clearState()
  nn.utils.clear(self, "_input", "_gradOutput")
  return parent.clearState(self)
end

return nn
