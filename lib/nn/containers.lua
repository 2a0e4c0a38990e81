-- nn/containers.lua — Sequential, ModuleList, ModuleDict.
--
-- Lua is 1-based, so Sequential and ModuleList name their children "1", "2", ...
-- (PyTorch: "0", "1", ...): `seq[1]` is the first layer, tostring(seq) prints "(1): ...",
-- and state_dict keys read "1.weight". ModuleDict keeps its keys as given.
local torch = require "torch"
local class = require "torch_class"
local base = require "nn.module"
local Module, is_module = base.Module, base.is_module

local C = {}

local function check_module(who, m, i)
  if not is_module(m) then
    error(("%s: argument %s must be a Module, got %s"):format(who, tostring(i), type(m)), 3)
  end
end

-- a plain table holding at least one value of the kind `is` tells: a dict of modules
-- (ModuleDict{enc = m}) or of parameters, not an options table, whatever its keys
local function holds(t, is)
  if type(t) ~= "table" or getmetatable(t) ~= nil then return false end
  for _, v in next, t do if is(v) then return true end end
  return false
end

------------------------------------------------------------------------------
-- Sequential(m1, m2, ...) or Sequential({name = m, ...} as an ordered list of {name, m})
------------------------------------------------------------------------------
local Sequential = Module:extend("Sequential")
C.Sequential = Sequential

local SEQUENTIAL = base.varargs_signature("nn.Sequential", "*args")
function Sequential:__init(...)
  local n = select("#", ...)
  if n == 1 and holds((...), is_module) and (...)[1] == nil then
    error("Sequential: a table of named modules has no order in Lua; give a list of {name, module} pairs: "
      .. "nn.Sequential({{\"conv\", c}, {\"relu\", r}})", 3)
  end
  local _
  _, n = base.varargs_options(SEQUENTIAL, ...)
  local args = table.pack(...)
  -- Sequential{{"conv", c}, {"relu", r}}: named children in order (PyTorch's OrderedDict form)
  if n == 1 and type(args[1]) == "table" and not is_module(args[1]) then
    for i, e in ipairs(args[1]) do
      if type(e) == "table" and not is_module(e) then
        check_module("Sequential", e[2], i)
        self:add_module(tostring(e[1]), e[2])
      else
        check_module("Sequential", e, i)
        self:add_module(tostring(#self._modules.keys + 1), e)
      end
    end
    return
  end
  for i = 1, n do
    check_module("Sequential", args[i], i)
    self:add_module(tostring(i), args[i])
  end
end

-- the i-th child (1-based; negative counts from the end); a range {a, b} gives a new Sequential
local function child_at(self, i, who, reg, what)
  local keys = (reg or self._modules).keys
  local n = #keys
  local j = i
  if j < 0 then j = n + j + 1 end
  if j < 1 or j > n or math.type(j) ~= "integer" then
    error(("%s: index %s is out of range (it has %d %s)"):format(who, tostring(i), n, what or "modules"), 3)
  end
  return keys[j]
end

-- pairs() over an ordered registry ({keys = {...}, vals = {name = v}}) in order: position and
-- value for the lists, name and value for the dicts
local function walk(reg, by_name)
  local i = 0
  return function()
    i = i + 1
    local k = reg.keys[i]
    if k then return by_name and k or i, reg.vals[k] end
  end
end

-- seq[i]. One past the end (n + 1) is nil, not an error: that is the read with which Lua's
-- iteration ends (ipairs(seq), `while seq[i] do`), so `for i, m in ipairs(seq)` walks the
-- modules as PyTorch's `for i, m in enumerate(seq)`. Every other index outside 1..n (and
-- -n..-1) is an error: seq[0] (PyTorch's first index), seq[n + 2], seq[1.5].
local function item(self, i, who, reg, what)
  if type(i) ~= "number" then return nil end
  if i == #reg.keys + 1 then return nil end
  return reg.vals[child_at(self, i, who, reg, what)]
end

function Sequential:__getitem(i) return item(self, i, "Sequential", self._modules) end
function Sequential:__setitem(i, m)
  check_module("Sequential", m, i)
  local k = child_at(self, i, "Sequential")
  self._modules.vals[k] = m
end

function Sequential:__len_impl() return #self._modules.keys end

function Sequential:append(m)
  check_module("Sequential.append", m, 1)
  self:add_module(tostring(#self._modules.keys + 1), m)
  return self
end
Sequential.add = Sequential.append   -- Torch7

function Sequential:insert(i, m)
  check_module("Sequential.insert", m, 2)
  local mods = self:children()
  table.insert(mods, i, m)
  self._modules.keys, self._modules.vals = {}, {}
  for j, c in ipairs(mods) do self:add_module(tostring(j), c) end
  return self
end

function Sequential:remove(i)
  local mods = self:children()
  i = i or #mods
  local m = table.remove(mods, i)
  self._modules.keys, self._modules.vals = {}, {}
  for j, c in ipairs(mods) do self:add_module(tostring(j), c) end
  return m
end

-- seq:extend({m1, m2}) appends modules; Sequential:extend("Name") (a string) still makes a subclass
function Sequential:extend(list, ...)
  if type(list) == "string" then return Module.extend(self, list, ...) end
  for _, m in ipairs(list) do self:append(m) end
  return self
end

-- Sequential:slice(a, b): a new Sequential of children a..b (inclusive, as Lua ranges)
function Sequential:slice(a, b)
  local mods = self:children()
  local n = #mods
  a = a or 1; b = b or n
  if a < 0 then a = n + a + 1 end
  if b < 0 then b = n + b + 1 end
  local out = Sequential()
  for j = a, b do if mods[j] then out:append(mods[j]) end end
  return out
end

function Sequential:size() return #self._modules.keys end   -- Torch7
function Sequential:get(i) return self:__getitem(i) end     -- Torch7

function Sequential:__pairs_impl() return walk(self._modules, false) end

function Sequential:forward(x)
  local keys, vals = self._modules.keys, self._modules.vals
  for i = 1, #keys do
    x = vals[keys[i]](x)
  end
  return x
end

------------------------------------------------------------------------------
-- ModuleList(list)
------------------------------------------------------------------------------
local ModuleList = Module:extend("ModuleList")
C.ModuleList = ModuleList

local MODULELIST = class.signature("nn.ModuleList", "modules=nil")
function ModuleList:__init(...)
  local list = MODULELIST(...).modules
  if list ~= nil then
    if type(list) ~= "table" or is_module(list) then
      error("ModuleList: expected a list of modules", 3)
    end
    for i, m in ipairs(list) do
      check_module("ModuleList", m, i)
      self:add_module(tostring(i), m)
    end
  end
end
function ModuleList:__getitem(i) return item(self, i, "ModuleList", self._modules) end
ModuleList.__len_impl = Sequential.__len_impl
ModuleList.__pairs_impl = Sequential.__pairs_impl
ModuleList.append = Sequential.append
ModuleList.extend = Sequential.extend
ModuleList.insert = Sequential.insert
ModuleList.remove = Sequential.remove
function ModuleList:__setitem(i, m)
  check_module("ModuleList", m, i)
  local k = child_at(self, i, "ModuleList")
  self._modules.vals[k] = m
end
function ModuleList:forward()
  error("ModuleList: a ModuleList is a container; call its modules, not the list", 2)
end

------------------------------------------------------------------------------
-- ModuleDict({name = module, ...}) (keys sorted when given a plain table: Lua tables have
-- no order) or ModuleDict({{"name", module}, ...}) to fix the order
------------------------------------------------------------------------------
local ModuleDict = Module:extend("ModuleDict")
C.ModuleDict = ModuleDict

function ModuleDict:update(t)
  if type(t) ~= "table" or is_module(t) then error("ModuleDict: expected a table of modules", 3) end
  if #t > 0 then
    for i, e in ipairs(t) do
      check_module("ModuleDict", e[2], i)
      self:add_module(tostring(e[1]), e[2])
    end
  else
    for _, k in ipairs(base.keys(t)) do
      check_module("ModuleDict", t[k], k)
      self:add_module(tostring(k), t[k])
    end
  end
  return self
end

local MODULEDICT = class.signature("nn.ModuleDict", "modules=nil")
function ModuleDict:__init(...)
  local t = ...
  if not (select("#", ...) == 1 and holds(t, is_module)) then t = MODULEDICT(...).modules end
  if t ~= nil then self:update(t) end
end
function ModuleDict:keys() local out = {} for i, k in ipairs(self._modules.keys) do out[i] = k end return out end
function ModuleDict:values() return self:children() end
function ModuleDict:items() return self:named_children() end
function ModuleDict:__len_impl() return #self._modules.keys end
function ModuleDict:contains(k) return self._modules.vals[k] ~= nil end
function ModuleDict:pop(k)
  local m = self._modules.vals[k]
  self:add_module(k, nil)
  return m
end
function ModuleDict:__pairs_impl() return walk(self._modules, true) end
function ModuleDict:forward()
  error("ModuleDict: a ModuleDict is a container; call its modules, not the dict", 2)
end

------------------------------------------------------------------------------
-- ParameterList / ParameterDict
------------------------------------------------------------------------------
local ParameterList = Module:extend("ParameterList")
C.ParameterList = ParameterList
local PARAMETERLIST = class.signature("nn.ParameterList", "values=nil")
function ParameterList:__init(...)
  local list = PARAMETERLIST(...).values
  if list ~= nil and (type(list) ~= "table" or torch.is_tensor(list)) then
    error("ParameterList: argument 'values' must be a list of tensors, got " ..
      (torch.is_tensor(list) and "a tensor" or type(list)), 3)
  end
  for i, p in ipairs(list or {}) do self:register_parameter(tostring(i), p) end
end
function ParameterList:__getitem(i) return item(self, i, "ParameterList", self._parameters, "parameters") end
function ParameterList:__len_impl() return #self._parameters.keys end
function ParameterList:__pairs_impl() return walk(self._parameters, false) end
function ParameterList:append(p)
  self:register_parameter(tostring(#self._parameters.keys + 1), p)
  return self
end
function ParameterList:extend(list, ...)
  if type(list) == "string" then return Module.extend(self, list, ...) end
  for _, p in ipairs(list) do self:append(p) end
  return self
end
function ParameterList:extra_repr()
  local lines = {}
  for _, k in ipairs(self._parameters.keys) do
    local p = self._parameters.vals[k]
    local shape = {}
    for i, s in ipairs(p.shape) do shape[i] = tostring(s) end
    lines[#lines + 1] = ("(%s): Parameter containing: [torch.%s of size %s]"):format(
      k, p.dtype.name:gsub("^%l", string.upper) .. "Tensor", table.concat(shape, "x"))
  end
  return table.concat(lines, "\n")
end

-- ParameterDict({name = p, ...}) (keys sorted: Lua tables have no order) or
-- ParameterDict({{"name", p}, ...}) to fix the order
local ParameterDict = Module:extend("ParameterDict")
C.ParameterDict = ParameterDict
local PARAMETERDICT = class.signature("nn.ParameterDict", "parameters=nil")
function ParameterDict:update(t)
  if type(t) ~= "table" or torch.is_tensor(t) then
    error("ParameterDict: expected a table of tensors, got " .. (torch.is_tensor(t) and "a tensor" or type(t)), 3)
  end
  if #t > 0 then
    for _, e in ipairs(t) do self:register_parameter(tostring(e[1]), e[2]) end
  else
    for _, k in ipairs(base.keys(t)) do self:register_parameter(k, t[k]) end
  end
  return self
end
function ParameterDict:__init(...)
  local t = ...
  if not (select("#", ...) == 1 and holds(t, torch.is_tensor)) then t = PARAMETERDICT(...).parameters end
  if t ~= nil then self:update(t) end
end
function ParameterDict:__len_impl() return #self._parameters.keys end
function ParameterDict:keys() local out = {} for i, k in ipairs(self._parameters.keys) do out[i] = k end return out end
function ParameterDict:values()
  local out = {}
  for i, k in ipairs(self._parameters.keys) do out[i] = self._parameters.vals[k] end
  return out
end
function ParameterDict:items() return self:named_parameters({ recurse = false }) end
function ParameterDict:contains(k) return self._parameters.vals[k] ~= nil end
function ParameterDict:__pairs_impl() return walk(self._parameters, true) end

return C
