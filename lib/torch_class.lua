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

-- closest(name, candidates): the candidate a misspelt name most likely meant, or nil.
-- Candidates are a list or a set; the distance is Levenshtein's with a swap of two neighbours
-- counting as one edit ("is_casual" -> "is_causal"), and a name is suggested only when it is
-- near (at most 2 edits, or a third of the name's length).
local function edit_distance(a, b)
  local la, lb = #a, #b
  local prev2, prev, cur = {}, {}, {}
  for j = 0, lb do prev[j] = j end
  for i = 1, la do
    cur = { [0] = i }
    local ca = a:byte(i)
    for j = 1, lb do
      local cb = b:byte(j)
      local d = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca == cb and 0 or 1))
      if i > 1 and j > 1 and ca == b:byte(j - 1) and a:byte(i - 1) == cb then
        d = math.min(d, prev2[j - 2] + 1)
      end
      cur[j] = d
    end
    prev2, prev = prev, cur
  end
  return prev[lb]
end
M.edit_distance = edit_distance

function M.closest(name, candidates)
  if type(name) ~= "string" then return nil end
  local best, best_d
  local lname = name:lower()
  local function consider(c)
    if type(c) ~= "string" then return end
    local d = edit_distance(lname, c:lower())
    if (d <= 2 or d <= #name // 3) and d < #name and (not best_d or d < best_d) then best, best_d = c, d end
  end
  for k, v in next, candidates do
    if math.type(k) == "integer" then consider(v) else consider(k) end
  end
  return best
end

-- "f: unknown option 'x'" with " (did you mean 'y'?)" when a known name is near
local function unknown_option(fname, k, ...)
  if type(k) ~= "string" then
    return ("%s: unknown option [%s] (options are named: {name = value})"):format(fname, tostring(k))
  end
  local best, best_d
  for i = 1, select("#", ...) do
    local c = M.closest(k, (select(i, ...)))
    if c then
      local d = edit_distance(k:lower(), c:lower())
      if not best_d or d < best_d then best, best_d = c, d end
    end
  end
  if best then return ("%s: unknown option '%s' (did you mean '%s'?)"):format(fname, k, best) end
  return ("%s: unknown option '%s'"):format(fname, k)
end
M.unknown_option = unknown_option

-- check_options(fname, opts, allowed, ...): opts (nil, or a table of name = value) may hold
-- only the names of `allowed` (and of any further tables given); an unknown name is an
-- error naming fname, the option and the nearest known name:
--   optim.SGD: unknown option 'lerning_rate' (did you mean 'learning_rate'?)
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
    if not ok then error(unknown_option(fname, k, allowed, ...), 0) end
  end
  return opts
end

------------------------------------------------------------------------------
-- signatures: a Lua function's parameters, declared once, in Python's notation
------------------------------------------------------------------------------
-- local CONV2D = class.signature("nn.Conv2d",
--   "in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=true, " ..
--   "padding_mode='zeros', *, device=nil, dtype=nil")
-- function Conv2d:__init(...)
--   local a = CONV2D(...)          -- a.in_channels, a.stride, ... by name
--
-- The call takes PyTorch's positional arguments, and any of them by name in a trailing
-- options table, as PyTorch's keywords: nn.Conv2d(1, 16, 3, 2), nn.Conv2d(1, 16, {kernel_size
-- = 3, stride = 2}) and nn.Conv2d{in_channels = 1, out_channels = 16, kernel_size = 3} are one
-- call. Names after `*` are keyword-only. A default that is a literal (a number, true, false,
-- nil or a quoted string) is filled in; any other default text is only shown by help, and
-- the function supplies the value. Errors name the function: an unknown name (with the nearest
-- known one), an argument given both by position and by name, too many positional arguments.
--
-- The trailing options table is told from a positional table argument (a list such as a
-- kernel size {3, 3}, a list of modules) by its keys: all strings, or none at all ({}). A
-- last table with both list entries and names is an error, as either reading could be wrong.
-- Every signature is kept in class.signatures by name: help prints it, and the tests walk it.
M.signatures = {}

-- "a, b={1, 2}, c='x,y'" -> {"a", "b={1, 2}", "c='x,y'"}: commas inside braces, brackets,
-- parentheses or quotes stay (the op declarations' "int[] stride=[1, 1]" too)
local function split_params(spec)
  local out, depth, quote, start = {}, 0, nil, 1
  for i = 1, #spec do
    local c = spec:sub(i, i)
    if quote then
      if c == quote then quote = nil end
    elseif c == "'" or c == '"' then quote = c
    elseif c == "{" or c == "(" or c == "[" then depth = depth + 1
    elseif c == "}" or c == ")" or c == "]" then depth = depth - 1
    elseif c == "," and depth == 0 then
      out[#out + 1] = spec:sub(start, i - 1); start = i + 1
    end
  end
  out[#out + 1] = spec:sub(start)
  for i, p in ipairs(out) do out[i] = p:match("^%s*(.-)%s*$") end
  return out
end

M.split_params = split_params

local LITERALS = { ["true"] = true, ["false"] = false }
local function literal(text)
  if text == "nil" then return true, nil end
  if LITERALS[text] ~= nil then return true, LITERALS[text] end
  local n = math.tointeger(tonumber(text)) or tonumber(text)
  if n then return true, n end
  local str = text:match("^'(.*)'$") or text:match('^"(.*)"$')
  if str then return true, str end
  return false
end

-- a plain table whose keys are all strings (or that is empty): a trailing options table
local function options_kind(v)
  if type(v) ~= "table" or getmetatable(v) ~= nil then return nil end
  local names, list = false, false
  -- list entries have integer keys; any other key (a string, or a typo such as [true]) is
  -- a name, so it is checked, never taken for a positional list
  for k in next, v do
    if math.type(k) == "integer" then list = true else names = true end
  end
  if names and list then return "mixed" end
  if list then return nil end
  return "options"
end
M.is_options = function(v) return options_kind(v) == "options" end

function M.signature(fname, spec)
  local sig = { name = fname, text = spec, params = {}, index = {}, npos = 0 }
  local kwonly = false
  for _, item in ipairs(split_params(spec)) do
    if item == "*" then
      kwonly = true
    elseif item ~= "" then
      local name, def = item:match("^([%a_][%w_]*)%s*=%s*(.-)$")
      name = name or item:match("^([%a_][%w_]*)$")
      if not name then error(("class.signature: bad parameter '%s' in %s"):format(item, fname), 2) end
      if sig.index[name] then error(("class.signature: parameter '%s' twice in %s"):format(name, fname), 2) end
      local p = { name = name, default_text = def, keyword_only = kwonly }
      if def then p.has_default, p.default = literal(def) end
      sig.params[#sig.params + 1] = p
      sig.index[name] = #sig.params
      if not kwonly then sig.npos = #sig.params end
    end
  end
  local params, index, npos = sig.params, sig.index, sig.npos
  local names = {}
  for i, p in ipairs(params) do names[i] = p.name end
  sig.names = names
  function sig.parse(...)
    -- trailing nils are not arguments: wrappers forward their unused parameters as nils
    local n = select("#", ...)
    while n > 0 and select(n, ...) == nil do n = n - 1 end
    local opts
    if n > 0 then
      local last = select(n, ...)
      local kind = options_kind(last)
      if kind == "mixed" then
        error(("%s: the last argument mixes list entries and named options; give a list and the options as two tables"):format(fname), 0)
      elseif kind == "options" then
        opts = last; n = n - 1
      end
    end
    if n > npos then
      error(("%s: too many arguments (%d given, at most %d positional)"):format(fname, n, npos), 0)
    end
    local a = {}
    for i = 1, n do a[names[i]] = (select(i, ...)) end
    if opts then
      for k, v in next, opts do
        local i = index[k]
        if not i then error(unknown_option(fname, k, names), 0) end
        if i <= n and a[k] ~= nil then
          error(("%s: argument '%s' given twice, as argument #%d and by name"):format(fname, k, i), 0)
        end
        a[k] = v
      end
    end
    for _, p in ipairs(params) do
      if a[p.name] == nil and p.has_default then a[p.name] = p.default end
    end
    return a
  end
  setmetatable(sig, { __call = function(_, ...) return sig.parse(...) end })
  M.signatures[fname] = sig
  return sig
end

-- "F.conv2d(input, weight, bias=nil, stride=1, ...)": the call form help prints
function M.call_form(fname)
  local sig = M.signatures[fname]
  if not sig then return nil end
  return ("%s(%s)"):format(fname, sig.text)
end

-- the module is callable: class(name [, parent])
return setmetatable(M, { __call = function(_, ...) return M.class(...) end })
