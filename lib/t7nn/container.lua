-- t7nn/container.lua — nn.Container (modules holding modules) and nn.Sequential.
local torch = require "torch"
local nn = require "t7nn.env"

local Container, parent = torch.class("nn.Container", "nn.Module")

function Container:__init(...)
  parent.__init(self, ...)
  self.modules = {}
end

function Container:add(module)
  self.modules[#self.modules + 1] = module
  return self
end

function Container:get(index) return self.modules[index] end
function Container:size() return #self.modules end

-- module[funcName](module, ...), an error in it prefixed with "In i module of Container:"
-- (each container on the way adds its line, outermost first)
function Container:rethrowErrors(module, index, funcName, ...)
  local results = table.pack(xpcall(module[funcName], function(err)
    if type(err) ~= "string" then return err end
    -- the first container to see the error keeps a traceback of where it happened
    if err:find("\n%[traceback%]") then
      err = err:gsub("^\n", "")   -- an inner container's message: one line per container
    else
      err = err .. "\n[traceback]" .. debug.traceback("", 2)
    end
    return ("\nIn %d module of %s:\n%s"):format(index, torch.type(self), err)
  end, module, ...))
  if not results[1] then error(results[2], 0) end
  return table.unpack(results, 2, results.n)
end

function Container:applyToModules(func)
  for _, m in ipairs(self.modules) do func(m) end
end

function Container:zeroGradParameters() self:applyToModules(function(m) m:zeroGradParameters() end) end
function Container:updateParameters(lr) self:applyToModules(function(m) m:updateParameters(lr) end) end
function Container:training() self:applyToModules(function(m) m:training() end); parent.training(self) end
function Container:evaluate() self:applyToModules(function(m) m:evaluate() end); parent.evaluate(self) end
function Container:share(mlp, ...)
  for i, m in ipairs(self.modules) do m:share(mlp.modules[i], ...) end
  return self
end
function Container:reset(stdv) self:applyToModules(function(m) m:reset(stdv) end) end

function Container:parameters()
  local w, gw = {}, {}
  for _, m in ipairs(self.modules) do
    local mw, mgw = m:parameters()
    if mw then
      for i = 1, #mw do
        w[#w + 1] = mw[i]
        gw[#gw + 1] = mgw[i]
      end
    end
  end
  return w, gw
end

function Container:clearState()
  -- fields of the container itself (other than its modules) are cleared too
  if self.output ~= nil or self.gradInput ~= nil then parent.clearState(self) end
  for _, m in ipairs(self.modules) do m:clearState() end
  return self
end

local Sequential = torch.class("nn.Sequential", "nn.Container")

function Sequential:__len() return #self.modules end

function Sequential:add(module)
  if #self.modules == 0 then self.gradInput = module.gradInput end
  self.modules[#self.modules + 1] = module
  self.output = module.output
  return self
end

function Sequential:insert(module, index)
  index = index or (#self.modules + 1)
  if index > #self.modules + 1 or index < 1 then
    error(("nn.Sequential:insert: index %d out of range 1..%d"):format(index, #self.modules + 1), 2)
  end
  table.insert(self.modules, index, module)
  self.output = self.modules[#self.modules].output
  self.gradInput = self.modules[1].gradInput
  return self
end

function Sequential:remove(index)
  index = index or #self.modules
  if index > #self.modules or index < 1 then
    error(("nn.Sequential:remove: index %d out of range 1..%d"):format(index, #self.modules), 2)
  end
  table.remove(self.modules, index)
  if #self.modules > 0 then
    self.output = self.modules[#self.modules].output
    self.gradInput = self.modules[1].gradInput
  else
    self.output = torch.Tensor()
    self.gradInput = torch.Tensor()
  end
  return self
end

function Sequential:updateOutput(input)
  local x = input
  for i, m in ipairs(self.modules) do x = self:rethrowErrors(m, i, "updateOutput", x) end
  self.output = x
  return x
end

-- walks the modules backwards; module i's input was module i-1's output
local function walk_back(self, input, gradOutput, each)
  local g = gradOutput
  for i = #self.modules, 1, -1 do
    local below = i > 1 and self.modules[i - 1].output or input
    g = each(self.modules[i], i, below, g)
  end
  return g
end

function Sequential:updateGradInput(input, gradOutput)
  self.gradInput = walk_back(self, input, gradOutput, function(m, i, x, g)
    return self:rethrowErrors(m, i, "updateGradInput", x, g)
  end)
  return self.gradInput
end

function Sequential:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  walk_back(self, input, gradOutput, function(m, i, x, g)
    self:rethrowErrors(m, i, "accGradParameters", x, g, scale)
    return m.gradInput
  end)
end

function Sequential:backward(input, gradOutput, scale)
  scale = scale or 1
  self.gradInput = walk_back(self, input, gradOutput, function(m, i, x, g)
    return self:rethrowErrors(m, i, "backward", x, g, scale)
  end)
  return self.gradInput
end

function Sequential:accUpdateGradParameters(input, gradOutput, lr)
  walk_back(self, input, gradOutput, function(m, i, x, g)
    self:rethrowErrors(m, i, "accUpdateGradParameters", x, g, lr)
    return m.gradInput
  end)
end

function Sequential:__tostring__()
  local lines = { torch.type(self) .. " {", "  [input -> " }
  local chain = {}
  for i = 1, #self.modules do chain[i] = "(" .. i .. ")" end
  lines[2] = "  [input -> " .. table.concat(chain, " -> ") .. (#chain > 0 and " -> " or "") .. "output]"
  for i, m in ipairs(self.modules) do
    lines[#lines + 1] = ("  (%d): %s"):format(i, tostring(m):gsub("\n", "\n  "))
  end
  lines[#lines + 1] = "}"
  return table.concat(lines, "\n")
end

return Container
