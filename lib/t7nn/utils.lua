-- t7nn/utils.lua — nn.utils: helpers over tensors and (nested) tables of tensors that
-- modules and scripts share.
local torch = require "torch"
local nn = require "t7nn.env"

local utils = {}

-- a tensor of type typename with param's contents. Tensors sharing a storage still share
-- one afterwards: the converted storage is cached by its identity in tensorCache.
local function convert_tensor(param, typename, tensorCache)
  if torch.typename(param) == typename then return param end
  local done = tensorCache[param]
  if done then return done end
  local out = torch.getmetatable(typename) and torch[typename:match("^torch%.(.*)$")]
  if not out then error("nn.utils.recursiveType: unknown tensor type '" .. tostring(typename) .. "'", 3) end
  local new
  if param:nElement() == 0 and param:dim() == 0 then
    new = out()
  else
    local key = "storage:" .. tostring(torch._t7storage_id(param))
    local st = tensorCache[key]
    if not st then
      st = out(param:storage():data():nElement()):copy(param:storage():data())
      tensorCache[key] = st
    end
    new = out():set(st:storage(), param:storageOffset(), param:size(), param:stride())
  end
  tensorCache[param] = new
  return new
end

function utils.recursiveType(param, typename, tensorCache)
  tensorCache = tensorCache or {}
  if torch.isTensor(param) then
    return convert_tensor(param, typename, tensorCache)
  elseif torch.isTypeOf(param, "nn.Module") or torch.isTypeOf(param, "nn.Criterion") then
    param:type(typename, tensorCache)
  elseif type(param) == "table" and getmetatable(param) == nil then
    for k, v in pairs(param) do param[k] = utils.recursiveType(v, typename, tensorCache) end
  end
  return param
end

-- t1 takes t2's shape (tensors, or tables of them, recursively); returns t1, t2
function utils.recursiveResizeAs(t1, t2)
  if type(t2) == "table" and not torch.isTensor(t2) then
    t1 = (type(t1) == "table" and not torch.isTensor(t1)) and t1 or {}
    for k, v in pairs(t2) do t1[k], t2[k] = utils.recursiveResizeAs(t1[k], v) end
    for k in pairs(t1) do if t2[k] == nil then t1[k] = nil end end
  elseif torch.isTensor(t2) then
    t1 = torch.isTensor(t1) and t1 or t2.new()
    t1:resizeAs(t2)
  else
    error("nn.utils.recursiveResizeAs: expecting nested tensors or tables, got "
      .. torch.type(t1) .. " and " .. torch.type(t2), 2)
  end
  return t1, t2
end

function utils.recursiveFill(t2, val)
  if type(t2) == "table" and not torch.isTensor(t2) then
    for k, v in pairs(t2) do t2[k] = utils.recursiveFill(v, val) end
  elseif torch.isTensor(t2) then
    t2:fill(val)
  else
    error("nn.utils.recursiveFill: expecting tensor or table thereof, got " .. torch.type(t2), 2)
  end
  return t2
end

-- t1 += val * t2, recursively; returns t1, t2
function utils.recursiveAdd(t1, val, t2)
  if not t2 then val, t2 = 1, val end
  if type(t2) == "table" and not torch.isTensor(t2) then
    t1 = (type(t1) == "table" and not torch.isTensor(t1)) and t1 or {}
    for k, v in pairs(t2) do t1[k], t2[k] = utils.recursiveAdd(t1[k], val, v) end
  elseif torch.isTensor(t1) and torch.isTensor(t2) then
    t1:add(val, t2)
  else
    error("nn.utils.recursiveAdd: expecting nested tensors or tables, got "
      .. torch.type(t1) .. " and " .. torch.type(t2), 2)
  end
  return t1, t2
end

-- t1 becomes a copy of t2 (resized as needed), recursively; returns t1, t2
function utils.recursiveCopy(t1, t2)
  if type(t2) == "table" and not torch.isTensor(t2) then
    t1 = (type(t1) == "table" and not torch.isTensor(t1)) and t1 or {}
    for k, v in pairs(t2) do t1[k], t2[k] = utils.recursiveCopy(t1[k], v) end
  elseif torch.isTensor(t2) then
    t1 = torch.isTensor(t1) and t1 or t2.new()
    t1:resizeAs(t2):copy(t2)
  else
    error("nn.utils.recursiveCopy: expecting nested tensors or tables, got "
      .. torch.type(t1) .. " and " .. torch.type(t2), 2)
  end
  return t1, t2
end

-- addSingletonDimension([view,] t [, dim]): a view of t with a dim of size 1 inserted
-- at dim (default 1); into view when given
function utils.addSingletonDimension(...)
  local view, t, dim
  if select("#", ...) < 3 then
    t, dim = ...
  else
    view, t, dim = ...
    if not torch.isTensor(view) then
      error("nn.utils.addSingletonDimension: output tensor expected, got " .. torch.type(view), 2)
    end
  end
  if not torch.isTensor(t) then error("nn.utils.addSingletonDimension: input tensor expected", 2) end
  dim = dim or 1
  if dim < 1 or dim > t:dim() + 1 then
    error(("nn.utils.addSingletonDimension: invalid dimension: %d. Tensor is of %d dimensions.")
      :format(dim, t:dim()), 2)
  end
  view = view or t.new()
  return view:set(t:unsqueeze(dim))
end

-- output becomes input viewed with the sizes given (a copy first if input is not contiguous)
function utils.contiguousView(output, input, ...)
  output = output or input.new()
  if input:isContiguous() then
    output:set(input:view(...))
  else
    output:resize(input:size()):copy(input)
    output:set(output:view(...))
  end
  return output
end

-- clear(self, name, ...) or clear(self, {names}): tensors emptied, tables made empty,
-- other values removed
function utils.clear(self, ...)
  local names = { ... }
  if type(names[1]) == "table" then names = names[1] end
  for _, f in ipairs(names) do
    local v = self[f]
    if v ~= nil then
      if torch.isTensor(v) then v:set()
      elseif type(v) == "table" then self[f] = {}
      else self[f] = nil end
    end
  end
  return self
end

nn.utils = utils
return utils
