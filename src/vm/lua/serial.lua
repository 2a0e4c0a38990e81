-- serial.lua — torch.save / torch.load / torch.serialize / torch.deserialize and the
-- class registry (man/serialization.md). The format itself is C (src/serial,
-- src/vm/lserial.c); this part parses arguments, names classes and rebuilds them.
local torch = ...
local S = torch.serialization

------------------------------------------------------------------------------
-- classes: a class is a metatable; a file names it, a load looks the name up
------------------------------------------------------------------------------
local by_mt = setmetatable({}, { __mode = "k" })   -- metatable -> entry
local by_name = {}                                   -- name -> entry
local namespaces = {}                                -- "nn" -> {name_of, resolve, save, load}
-- libraries that register a namespace when required; a file naming "nn.Linear" may load
-- lutorch's own nn library (found on package.path like any require), never code from the file
local lazy = { nn = "nn", optim = "optim", ao = "ao" }

local function check_hooks(fn, opts)
  if opts == nil then return nil, nil end
  if type(opts) ~= "table" then error(fn .. ": argument 'opts' must be a table {save=, load=}", 3) end
  for _, k in ipairs({ "save", "load" }) do
    if opts[k] ~= nil and type(opts[k]) ~= "function" then
      error(("%s: option '%s' must be a function"):format(fn, k), 3)
    end
  end
  return opts.save, opts.load
end

-- register_class(name, cls [, {save = fn(obj) -> fields, extra; load = fn(obj, extra, cls)}])
function S.register_class(name, cls, opts)
  if type(name) ~= "string" or name == "" then
    error("torch.serialization.register_class: argument 'name' must be a non-empty string", 2)
  end
  if type(cls) ~= "table" then
    error("torch.serialization.register_class: argument 'cls' must be a table (the metatable of the instances)", 2)
  end
  local save, load = check_hooks("torch.serialization.register_class", opts)
  local old = by_name[name]
  if old and by_mt[old.cls] == old then by_mt[old.cls] = nil end
  local e = { name = name, cls = cls, save = save, load = load }
  by_mt[cls] = e
  by_name[name] = e
  return cls
end

function S.unregister_class(name)
  local e = by_name[name]
  if e then by_name[name] = nil; if by_mt[e.cls] == e then by_mt[e.cls] = nil end end
end

-- register_namespace(prefix, {name_of = fn(mt, obj) -> short name or nil,
--                             resolve = fn(short) -> cls or nil, save = ..., load = ...})
function S.register_namespace(prefix, spec)
  if type(prefix) ~= "string" or not prefix:match("^[%a_][%w_]*$") then
    error("torch.serialization.register_namespace: argument 'prefix' must be an identifier", 2)
  end
  if type(spec) ~= "table" or type(spec.name_of) ~= "function" or type(spec.resolve) ~= "function" then
    error("torch.serialization.register_namespace: argument 'spec' must be a table with name_of and resolve functions", 2)
  end
  check_hooks("torch.serialization.register_namespace", spec)
  namespaces[prefix] = spec
end

-- called by the saver for each table with a metatable: name, fields (or nil: the raw
-- table), extra -- or nil, reason
function S._class_info(t)
  local mt = debug.getmetatable(t)
  local e = by_mt[mt]
  if e then
    if e.save then return e.name, e.save(t) end
    return e.name, nil, nil
  end
  for prefix, ns in pairs(namespaces) do
    local short = ns.name_of(mt, t)
    if short then
      if ns.save then return prefix .. "." .. short, ns.save(t, mt) end
      return prefix .. "." .. short, nil, nil
    end
  end
  local n = type(mt) == "table" and rawget(mt, "__name")
  if type(n) == "string" then
    return nil, ("a table of class '%s', which is not registered with torch.serialization.register_class"):format(n)
  end
  return nil, "a table with a metatable that is not a registered class (torch.serialization.register_class)"
end

local function show(name)
  if #name > 80 then name = name:sub(1, 80) .. "..." end
  return ("%q"):format(name):gsub("\\\n", "\\n")
end

-- called by the loader for each class name in a file: {cls=, load=}
function S._resolve_class(name, fn, file)
  local e = by_name[name]
  if e then return e end
  local prefix, short = name:match("^([%a_][%w_]*)%.(.+)$")
  if prefix then
    if not namespaces[prefix] and lazy[prefix] and not package.loaded[lazy[prefix]] then
      local ok, err = pcall(require, lazy[prefix])
      if not ok and not namespaces[prefix] then
        error(("%s: %s names class %s; loading library '%s' for it failed: %s"):format(
          fn, file, show(name), lazy[prefix], tostring(err)), 0)
      end
    end
    local ns = namespaces[prefix]
    local cls = ns and ns.resolve(short)
    if cls then return { name = name, cls = cls, load = ns.load } end
  end
  error(("%s: %s names class %s, which is not registered (torch.serialization.register_class)"):format(
    fn, file, show(name)), 0)
end

-- rebuild classed tables, innermost first (the saver numbered parents before children)
function S._finish(fix)
  for i = #fix, 1, -1 do
    local f = fix[i]
    local t, e, extra = f[1], f[2], f[3]
    if e.load then e.load(t, extra, e.cls) else setmetatable(t, e.cls) end
  end
end

------------------------------------------------------------------------------
-- the API
------------------------------------------------------------------------------
local function is_file(x) return io.type(x) == "file" end

-- torch.save(path_or_file, value)
function torch.save(dest, value)
  if type(dest) == "string" then return S._save(dest, value) end
  if is_file(dest) then return S._save_file(dest, value) end
  if io.type(dest) == "closed file" then error("torch.save: the file handle is closed", 2) end
  error(("torch.save: argument 'path' must be a file name or an open file, got %s"):format(type(dest)), 2)
end

-- Torch7 files: name ends in .t7, or the first 4 bytes are a little-endian Torch7 type tag
-- (1 number .. 8 recursive function), or an ascii file starting with such a tag and a newline
local function looks_t7(path, head)
  if path:match("%.t7$") then return true end
  if #head >= 4 then
    local tag = string.unpack("<i4", head)
    if tag >= 0 and tag <= 8 then return true end
  end
  return head:match("^%d\n") ~= nil
end

-- torch.load(path_or_file [, {mmap = false, verify = nil}])
function torch.load(src, opts)
  if opts ~= nil and type(opts) ~= "table" then
    error(("torch.load: argument 'opts' must be a table, got %s"):format(type(opts)), 2)
  end
  opts = opts or {}
  if type(src) == "string" then
    if torch.load_t7 then
      local f = io.open(src, "rb")
      if f then
        local head = f:read(8) or ""
        f:close()
        if not S._is_ours(head) and looks_t7(src, head) then return torch.load_t7(src) end
      end
    end
    local verify = opts.verify
    if verify == nil then verify = false end
    return S._load(src, opts.mmap and true or false, verify and true or false)
  end
  if is_file(src) then return S._load_file(src) end
  if io.type(src) == "closed file" then error("torch.load: the file handle is closed", 2) end
  error(("torch.load: argument 'path' must be a file name or an open file, got %s"):format(type(src)), 2)
end

function torch.serialize(value) return S._serialize(value) end
function torch.deserialize(s)
  if type(s) ~= "string" then
    error(("torch.deserialize: argument 's' must be a string, got %s"):format(type(s)), 2)
  end
  return S._deserialize(s)
end
