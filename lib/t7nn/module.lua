-- t7nn/module.lua — nn.Module, Torch7's module protocol.
--
-- A module holds plain tensors: output and gradInput, and for a module with parameters
-- weight/bias and their gradients gradWeight/gradBias. None is an autograd leaf: a script
-- may fill, replace or share them. The protocol:
--   forward(input)                       -> updateOutput(input), which sets self.output
--   backward(input, gradOutput, scale)   -> updateGradInput(input, gradOutput) (self.gradInput)
--                                           + accGradParameters(input, gradOutput, scale)
--                                             (gradWeight += scale * dL/dweight, ...)
-- updateGradInput and accGradParameters use the input and gradOutput they are given and
-- whatever updateOutput left in the module (its output, its buffers), as Torch7's did.
local torch = require "torch"
local nn = require "t7nn.env"

local Module = torch.class("nn.Module")

function Module:__init()
  self.gradInput = torch.Tensor()
  self.output = torch.Tensor()
  self._type = self.output:type()
end

-- {weights}, {gradWeights}: the module's own parameters (weight, bias by default)
function Module:parameters()
  if self.weight and self.bias then
    return { self.weight, self.bias }, { self.gradWeight, self.gradBias }
  elseif self.weight then
    return { self.weight }, { self.gradWeight }
  elseif self.bias then
    return { self.bias }, { self.gradBias }
  end
end

function Module:updateOutput(input) return self.output end

function Module:forward(input) return self:updateOutput(input) end

function Module:backward(input, gradOutput, scale)
  scale = scale or 1
  self:updateGradInput(input, gradOutput)
  self:accGradParameters(input, gradOutput, scale)
  return self.gradInput
end

-- gradInput, and the parameters moved by -lr * their gradient directly
function Module:backwardUpdate(input, gradOutput, lr)
  self:updateGradInput(input, gradOutput)
  self:accUpdateGradParameters(input, gradOutput, lr)
  return self.gradInput
end

function Module:updateGradInput(input, gradOutput) return self.gradInput end

function Module:accGradParameters(input, gradOutput, scale) end

-- weight -= lr * dL/dweight without touching gradWeight: accGradParameters with the
-- parameters standing in for their gradients and scale -lr
function Module:accUpdateGradParameters(input, gradOutput, lr)
  local gw, gb = self.gradWeight, self.gradBias
  self.gradWeight, self.gradBias = self.weight, self.bias
  self:accGradParameters(input, gradOutput, -lr)
  self.gradWeight, self.gradBias = gw, gb
end

-- for modules sharing parameters: the update must go through the gradients (two
-- modules swapping their shared weight in turn would see each other's updates)
function Module:sharedAccUpdateGradParameters(input, gradOutput, lr)
  if self:parameters() then
    self:zeroGradParameters()
    self:accGradParameters(input, gradOutput, 1)
    self:updateParameters(lr)
  end
end

function Module:zeroGradParameters()
  local _, grads = self:parameters()
  if grads then
    for _, g in ipairs(grads) do g:zero() end
  end
end

function Module:updateParameters(lr)
  local params, grads = self:parameters()
  if params then
    for i, p in ipairs(params) do p:add(-lr, grads[i]) end
  end
end

function Module:training() self.train = true end
function Module:evaluate() self.train = false end

-- self's named fields (default: the parameters and their gradients) become views of
-- mlp's: both modules then read and write the same memory
function Module:share(mlp, ...)
  for i = 1, select("#", ...) do
    local name = select(i, ...)
    if self[name] ~= nil then
      self[name]:set(mlp[name])
      self.accUpdateGradParameters = self.sharedAccUpdateGradParameters
      mlp.accUpdateGradParameters = mlp.sharedAccUpdateGradParameters
    end
  end
  return self
end

-- a deep copy of a value: tables (with their metatables) and tensors are copied once each,
-- tensors that shared a storage share one copy of it, functions and other values are kept
local function deep_copy(v, seen, storages)
  if type(v) ~= "table" and type(v) ~= "userdata" then return v end
  if seen[v] ~= nil then return seen[v] end
  if torch.isTensor(v) then
    local c
    if v:nElement() == 0 and v:dim() == 0 then
      c = v.new()
    else
      local key = torch._t7storage_id(v)
      local st = storages[key]
      if not st then
        st = v:storage():data():clone():storage()
        storages[key] = st
      end
      c = v.new():set(st, v:storageOffset(), v:size(), v:stride())
    end
    seen[v] = c
    return c
  end
  if torch.isStorage(v) then
    local c = v:data():clone():storage()
    seen[v] = c
    return c
  end
  if type(v) == "userdata" then return v end
  local c = {}
  seen[v] = c
  for k, x in pairs(v) do c[deep_copy(k, seen, storages)] = deep_copy(x, seen, storages) end
  return setmetatable(c, getmetatable(v))
end

-- a deep copy (tensors that shared a storage share one in the copy, as Torch7's copy
-- through its serialization kept them; functions set on the module are kept too); with
-- names, the copy shares those fields with self
function Module:clone(...)
  local copy = deep_copy(self, {}, {})
  if select("#", ...) > 0 then copy:share(self, ...) end
  return copy
end

-- every tensor the module holds becomes a tensor of the given type; tensors that shared a
-- storage still share one (tensorCache carries that across calls: net1, net2 sharing)
function Module:type(typename, tensorCache)
  if not typename then return self._type end
  tensorCache = tensorCache or {}
  for k, v in pairs(self) do
    self[k] = nn.utils.recursiveType(v, typename, tensorCache)
  end
  self._type = typename
  return self
end

function Module:float(...) return self:type("torch.FloatTensor", ...) end
function Module:double(...) return self:type("torch.DoubleTensor", ...) end
function Module:cuda(...) return self:type("torch.CudaTensor", ...) end

function Module:reset() end

-- the storage identity of a tensor, and the range of its elements in that storage
local function storage_span(t)
  local span = 0
  if t:nElement() > 0 then
    span = 1
    for d = 1, t:dim() do span = span + (t:size(d) - 1) * t:stride(d) end
  end
  return torch._t7storage_id(t), t:storageOffset(), span
end

-- One flat tensor holding every tensor of the list, which become views of it (their sizes
-- and strides kept). Tensors that shared memory share it in the flat tensor: the tensors
-- of one storage keep their relative positions; what none of them uses is left out.
function Module.flatten(tensors)
  if not tensors or #tensors == 0 then return torch.Tensor() end
  local order, groups = {}, {}
  for i, t in ipairs(tensors) do
    local id, off, span = storage_span(t)
    local g = groups[id]
    if not g then
      g = { members = {}, base = t:storage() }
      groups[id] = g
      order[#order + 1] = g
    end
    g.members[#g.members + 1] = { index = i, first = off, last = off + span - 1 }
  end
  -- per storage: the runs of elements in use, each given a place in the flat tensor
  local total, runs = 0, {}
  for _, g in ipairs(order) do
    local ms = {}
    for _, m in ipairs(g.members) do if m.last >= m.first then ms[#ms + 1] = m end end
    table.sort(ms, function(a, b) return a.first < b.first end)
    local run
    for _, m in ipairs(ms) do
      if run and m.first <= run.last + 1 then
        if m.last > run.last then run.last = m.last end
      else
        run = { storage = g.base, first = m.first, last = m.last }
        runs[#runs + 1] = run
      end
      m.run = run
    end
  end
  for _, r in ipairs(runs) do r.at = total + 1; total = total + (r.last - r.first + 1) end
  local flat = tensors[1].new(total)
  for _, r in ipairs(runs) do
    local n = r.last - r.first + 1
    flat:narrow(1, r.at, n):copy(r.storage:data():narrow(1, r.first, n))
  end
  local fs = flat:storage()
  for _, g in ipairs(order) do
    for _, m in ipairs(g.members) do
      local t = tensors[m.index]
      if m.run then
        t:set(fs, m.run.at + (m.first - m.run.first), t:size(), t:stride())
      else
        t:set(fs, 1, t:size(), t:stride())
      end
    end
  end
  return flat
end

-- the parameters and their gradients as two flat tensors (the module's tensors become views
-- of them): what optim's functions take
function Module:getParameters()
  local params, grads = self:parameters()
  local p, g = Module.flatten(params), Module.flatten(grads)
  if p:nElement() ~= g:nElement() then
    error(("%s:getParameters(): %d parameters but %d gradients (share parameters and gradients together)")
      :format(torch.type(self), p:nElement(), g:nElement()), 2)
  end
  if params then
    for i = 1, #params do
      if params[i]:storageOffset() ~= grads[i]:storageOffset() then
        error(("%s:getParameters(): parameter %d and its gradient are laid out differently (one of them is shared alone)")
          :format(torch.type(self), i), 2)
      end
    end
  end
  return p, g
end

-- m(input) is forward; m(input, gradOutput) forward then backward
function Module:__call__(input, gradOutput)
  self:forward(input)
  if gradOutput then
    self:backward(input, gradOutput)
    return self.output, self.gradInput
  end
  return self.output
end

-- callback on self, then on every module below it (preorder)
function Module:apply(callback)
  callback(self)
  if self.modules then
    for _, m in ipairs(self.modules) do m:apply(callback) end
  end
end

-- the modules of class typename below self (preorder), and the container holding each
function Module:findModules(typename, container)
  container = container or self
  local nodes, containers = {}, {}
  if torch.typename(self) == typename then
    nodes[1], containers[1] = self, container
  end
  if type(self.modules) == "table" then
    for _, child in ipairs(self.modules) do
      local n, c = child:findModules(typename, self)
      for j = 1, #n do
        nodes[#nodes + 1] = n[j]
        containers[#containers + 1] = c[j]
      end
    end
  end
  return nodes, containers
end

-- self and every module below it, in preorder
function Module:listModules()
  local list = { self }
  if self.modules then
    for _, m in ipairs(self.modules) do
      for _, sub in ipairs(m:listModules()) do list[#list + 1] = sub end
    end
  end
  return list
end

-- empties the buffers (output, gradInput, ...) to save memory before saving a module
function Module:clearState()
  return nn.utils.clear(self, "output", "gradInput")
end

-- callback(module) returns the module to put in its place; containers recurse
function Module:replace(callback)
  local out = callback(self)
  if self.modules then
    for i, m in ipairs(self.modules) do self.modules[i] = m:replace(callback) end
  end
  return out
end

function Module:__tostring__()
  return torch.type(self)
end

return Module
