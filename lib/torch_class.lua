-- torch_class.lua — the class helper of lutorch's Lua libraries, in the spirit of Torch7's
-- torch.class. Every class of nn, optim, data and distributed is made with it, and a
-- script's own classes can be too:
--
--   local class = require "torch_class"
--   local Point = class("mylib.Point")               -- a class named "mylib.Point"
--   function Point:__init(x, y) self.x, self.y = x, y end
--   function Point:norm() return math.sqrt(self.x ^ 2 + self.y ^ 2) end
--   local Point3 = Point:extend("Point3")            -- a subclass, "mylib.Point3"
--   function Point3:__init(x, y, z) Point.__init(self, x, y); self.z = z end
--   function Point3:norm() return math.sqrt(Point.norm(self) ^ 2 + self.z ^ 2) end
--   local p = Point3(1, 2, 2)                        -- Class(...) runs __init on a new table
--   class.isinstance(p, Point), class.type(p)        --> true, "mylib.Point3"
--
-- A class is a plain table, the metatable of its instances:
-- - methods are its fields; an instance finds them in its class, then in the parent's, ...
--   (the class is its own `__index`, unless the class sets `__index` to a function, which
--   its subclasses then share: such a function ends with `getmetatable(self)[k]`);
-- - `Class.super` is the parent class, `Class.__name` the short name ("Point3", which
--   tostring and error messages use), `Class.__typename` the full name ("mylib.Point3");
--   tostring(Class) is the full name;
-- - metamethods (__call, __tostring, __len, __close, __gc, __eq, ...) are copied into a
--   subclass when it is made, so define them on a class before extending it;
-- - two hooks a base class may define, inherited like methods:
--     Class:__new(...)          returns the raw table of a new instance (default: {}),
--                               before the metatable is set and __init runs;
--     Class:__define(key, v)    runs instead of a plain rawset when a field is assigned to
--                               the class or to a subclass (nn.Module wraps `forward` so).
--
-- The same module holds the one check of options tables (check_options below): every
-- function and constructor of the libraries that takes {name = value, ...} options rejects
-- a name it does not know, naming the function and the option.
local torch = require "torch"

local M = {}

local by_name = {}      -- full name -> class (the last class defined under a name wins)
local made = setmetatable({}, { __mode = "k" })   -- every class made here
local namespaces = {}   -- "nn" -> {short name -> class}

local METAMETHODS = {
  "__newindex", "__call", "__tostring", "__len", "__pairs", "__close", "__gc", "__eq", "__lt",
  "__le", "__concat", "__unm", "__add", "__sub", "__mul", "__div", "__mod", "__pow", "__idiv",
  "__band", "__bor", "__bxor", "__shl", "__shr", "__bnot",
}

-- "optim.lr_scheduler.StepLR" -> "optim.lr_scheduler", "StepLR"; "Point" -> nil, "Point"
local function split(full)
  local ns, short = full:match("^(.*)%.([^.]+)$")
  if ns then return ns, short end
  return nil, full
end

-- the live table of the classes of a namespace ("nn" -> nn.classes), by short name
function M.namespace(ns)
  local t = namespaces[ns]
  if not t then t = {}; namespaces[ns] = t end
  return t
end

-- the class of a full name, or nil
function M.find(full) return by_name[full] end

-- is t a class made here?
local function is_class(t) return made[t] == true end
M.is_class = is_class

local function construct(cls, ...)
  local new = cls.__new
  local obj = new and new(cls, ...) or {}
  setmetatable(obj, cls)
  local init = cls.__init
  if init then init(obj, ...) end
  return obj
end

local function class_newindex(cls, k, v)
  local define = cls.__define
  if define then define(cls, k, v) else rawset(cls, k, v) end
end

local function class_tostring(cls) return rawget(cls, "__typename") end

local extend

local function make(full, parent)
  local ns, short = split(full)
  local cls = {}
  rawset(cls, "__name", short)
  rawset(cls, "__typename", full)
  rawset(cls, "super", parent)
  if parent then
    for _, k in ipairs(METAMETHODS) do rawset(cls, k, rawget(parent, k)) end
    local idx = rawget(parent, "__index")
    if type(idx) == "function" then rawset(cls, "__index", idx) else rawset(cls, "__index", cls) end
  else
    rawset(cls, "__index", cls)
    rawset(cls, "extend", extend)
  end
  setmetatable(cls, { __index = parent, __call = construct, __newindex = class_newindex,
                      __tostring = class_tostring })
  made[cls] = true
  by_name[full] = cls
  if ns then M.namespace(ns)[short] = cls end
  return cls
end

-- Parent:extend(name [, body]): a subclass; a name without a dot is taken in the parent's
-- namespace (nn.Module:extend("Net") is "nn.Net"); body's fields are assigned to it
function extend(parent, name, body)
  if not is_class(parent) then
    error("extend: call it on a class, as Parent:extend(\"Name\")", 2)
  end
  if type(name) ~= "string" or name == "" then
    error(("%s.extend: expected a class name (a string), got %s"):format(rawget(parent, "__typename"),
      type(name)), 2)
  end
  if not name:find(".", 1, true) then
    local ns = split(rawget(parent, "__typename"))
    if ns then name = ns .. "." .. name end
  end
  local cls = make(name, parent)
  if body ~= nil then
    if type(body) ~= "table" then
      error(("%s.extend: argument 'body' must be a table of fields, got %s"):format(
        rawget(parent, "__typename"), type(body)), 2)
    end
    for k, v in pairs(body) do cls[k] = v end
  end
  return cls
end

-- class(name [, parent]): a new class; parent is a class or the full name of one. Returns
-- the class and its parent, as Torch7's torch.class("nn.Foo", "nn.Module") did.
function M.class(name, parent)
  if type(name) ~= "string" or name == "" then
    error("torch_class: argument 'name' must be a non-empty string, got " .. type(name), 2)
  end
  if type(parent) == "string" then
    local p = by_name[parent]
    if not p then
      error(("torch_class: unknown parent class '%s' (require the library that defines it first)"):format(parent), 2)
    end
    parent = p
  end
  if parent == nil then return make(name, nil), nil end
  if not is_class(parent) then
    error("torch_class: argument 'parent' must be a class or a class name, got " .. type(parent), 2)
  end
  return extend(parent, name), parent
end

-- isinstance(obj, cls): obj is an instance of cls or of a subclass of it
function M.isinstance(obj, cls)
  if type(obj) ~= "table" then return false end
  local c = getmetatable(obj)
  while c do
    if rawequal(c, cls) then return true end
    c = type(c) == "table" and rawget(c, "super") or nil
  end
  return false
end

-- typename(obj): the full class name of an instance ("nn.Linear"), a tensor's type
-- ("torch.FloatTensor"), or nil (Torch7's torch.typename)
function M.typename(obj)
  if torch.is_tensor(obj) then return obj:type() end
  if type(obj) ~= "table" then return nil end
  local c = getmetatable(obj)
  if is_class(c) then return rawget(c, "__typename") end
  return nil
end

-- type(obj): typename(obj), else Lua's type(obj) (Torch7's torch.type)
function M.type(obj) return M.typename(obj) or type(obj) end

------------------------------------------------------------------------------
-- options tables
------------------------------------------------------------------------------
-- the set of names an `allowed` table gives: its list entries and its string keys, so a
-- list {"lr", "momentum"} and a table of defaults {lr = 1e-3, momentum = 0} both work
local sets = setmetatable({}, { __mode = "k" })
local function set_of(allowed)
  local s = sets[allowed]
  if s then return s end
  s = {}
  for k, v in next, allowed do
    if math.type(k) == "integer" then s[v] = true else s[k] = true end
  end
  sets[allowed] = s
  return s
end

-- check_options(fname, opts, allowed, ...): opts (nil, or a table of name = value) may hold
-- only the names of `allowed` (and of any further tables given); an unknown name is an
-- error naming fname and the option:
--   optim.SGD: unknown option 'lerning_rate'
-- Returns opts, or a new empty table when opts is nil.
function M.check_options(fname, opts, allowed, ...)
  if opts == nil then return {} end
  if type(opts) ~= "table" then
    error(("%s: options must be a table {name = value, ...}, got %s"):format(fname,
      torch.is_tensor(opts) and "a tensor" or type(opts)), 0)
  end
  local s = set_of(allowed)
  local n = select("#", ...)
  for k in next, opts do
    local ok = s[k]
    for i = 1, n do
      if ok then break end
      ok = set_of((select(i, ...)))[k]
    end
    if not ok then
      if type(k) == "string" then error(("%s: unknown option '%s'"):format(fname, k), 0) end
      error(("%s: unknown option [%s] (options are named: {name = value})"):format(fname, tostring(k)), 0)
    end
  end
  return opts
end

-- the module is callable: class(name [, parent])
return setmetatable(M, { __call = function(_, ...) return M.class(...) end })
