-- nn/module.lua — nn.Module: the base class of every layer, PyTorch's torch.nn.Module in Lua.
--
--   local Net = nn.Module:extend("Net")
--   function Net:__init(n) self.fc = nn.Linear(n, 2); self.scale = nn.Parameter(torch.ones(1)) end
--   function Net:forward(x) return self.fc(x) * self.scale end
--   local net = Net(4); local y = net(torch.randn(3, 4))
--
-- An instance keeps everything the user assigns out of its own table: assigning to
-- `self.name` always reaches __newindex, which files the value as a parameter (a tensor
-- made by nn.Parameter), a submodule (a Module), a buffer (a tensor assigned to a name
-- registered with register_buffer) or a plain attribute. Reading `self.name` looks in those
-- four places, then in the class chain. Each registry keeps its insertion order, so
-- named_parameters() and state_dict() list names the way PyTorch does.
local torch = require "torch"
local class = require "torch_class"

local M = {}

------------------------------------------------------------------------------
-- ordered registries and ordered results
------------------------------------------------------------------------------
local function od_new() return { keys = {}, vals = {} } end

local function od_set(od, k, v)
  if od.vals[k] == nil then
    if v == nil then return end
    od.keys[#od.keys + 1] = k
  elseif v == nil then
    for i, kk in ipairs(od.keys) do if kk == k then table.remove(od.keys, i) break end end
  end
  od.vals[k] = v
end

-- a list of {name, value} pairs that a generic for iterates as `for name, v in list do`
-- (a callable table is a valid iterator in Lua 5.4) and that also indexes as a list
local NamedList = { __name = "NamedList" }
NamedList.__call = function(self, _, ctrl)
  local i
  if ctrl == nil then i = 1 else i = (getmetatable(self).pos[ctrl] or #self) + 1 end
  local e = self[i]
  if e then return e[1], e[2] end
  return nil
end
local function named_list(entries)
  local pos = {}
  for i, e in ipairs(entries) do pos[e[1]] = i end
  return setmetatable(entries, { __call = NamedList.__call, __name = "NamedList", pos = pos })
end
M.named_list = named_list

-- an ordered dict: a plain name -> value table whose pairs() walk follows insertion order
-- (PyTorch's OrderedDict for state_dict). The order lives in the metatable's `__keys`.
local function od_pairs(t)
  local keys = getmetatable(t).__keys
  local i = 0
  return function()
    while true do
      i = i + 1
      local k = keys[i]
      if k == nil then return nil end
      local v = rawget(t, k)
      if v ~= nil then return k, v end
    end
  end, t, nil
end
local function ordered_dict()
  local mt = { __keys = {}, __name = "OrderedDict", __pairs = od_pairs }
  mt.__newindex = function(t, k, v)
    if v == nil then return end
    local keys = mt.__keys
    keys[#keys + 1] = k
    rawset(t, k, v)
  end
  return setmetatable({}, mt)
end
M.ordered_dict = ordered_dict
-- the keys of an ordered dict (or of a plain table, sorted) as a list
function M.keys(t)
  local mt = getmetatable(t)
  local out = {}
  if mt and mt.__keys then
    for _, k in ipairs(mt.__keys) do if rawget(t, k) ~= nil then out[#out + 1] = k end end
  else
    for k in pairs(t) do out[#out + 1] = k end
    table.sort(out, function(a, b) return tostring(a) < tostring(b) end)
  end
  return out
end

------------------------------------------------------------------------------
-- Parameter: a tensor marked in a weak set; assigning it to a module field registers it
------------------------------------------------------------------------------
local PARAMS = setmetatable({}, { __mode = "k" })

local PARAMETER = class.signature("nn.Parameter", "data=nil, requires_grad=true")
function M.Parameter(...)
  local a = PARAMETER(...)
  local t, requires_grad = a.data, a.requires_grad
  if t == nil then t = torch.empty(0) end
  if not torch.is_tensor(t) then
    error("nn.Parameter: expected a tensor, got " .. type(t), 2)
  end
  if not t.is_leaf then t = t:detach() end
  if requires_grad and not t:is_floating_point() then
    error(("nn.Parameter: only floating point tensors can require gradients (got %s); "
      .. "pass requires_grad=false"):format(t.dtype.name), 2)
  end
  t.requires_grad = requires_grad and true or false
  PARAMS[t] = true
  return t
end
function M.is_parameter(t) return PARAMS[t] == true end
local is_parameter = M.is_parameter

------------------------------------------------------------------------------
-- what the layers' constructors share
------------------------------------------------------------------------------
-- the tensor options of a layer's parameters from its device= and dtype= arguments
-- (PyTorch's factory_kwargs), checked before anything is made so that a bad one is an error
-- naming the layer: a dtype must be a floating one (parameters require grad), a device one
-- whose backend is loaded
function M.factory_kwargs(who, a)
  local dtype, device = a.dtype, a.device
  if dtype ~= nil or device ~= nil then
    local ok, t = pcall(torch.empty, 0, { dtype = dtype, device = device })
    if not ok then
      local msg = tostring(t):gsub("^empty: ", ""):gsub(" %(#%d+%)", "")
      if not msg:find("^argument '") then msg = "argument 'device': " .. msg end   -- backend not loaded
      error(who .. ": " .. msg, 0)
    end
    if not t:is_floating_point() then
      error(("%s: argument 'dtype' must be a floating point dtype (parameters require grad), got %s"):format(
        who, t.dtype.name), 0)
    end
  end
  return { dtype = dtype, device = device, requires_grad = false }
end

-- a signature for a constructor of PyTorch's `*args` (nn.Sequential(*args), Torch7's
-- nn.View(*sizes)): class.signature declares named parameters only, so the parser is the
-- one of `keywords` (usually none: a trailing options table is then an unknown option) and
-- `shown` is what help prints between the parentheses
function M.varargs_signature(fname, shown, keywords)
  local sig = class.signature(fname, keywords or "")
  sig.text = shown
  return sig
end

-- the trailing options table of a varargs call, parsed by sig (nil when there is none):
-- returns the parsed names and the number of positional arguments before it
function M.varargs_options(sig, ...)
  local n = select("#", ...)
  if n > 0 and class.is_options((select(n, ...))) then return sig.parse((select(n, ...))), n - 1 end
  return nil, n
end

------------------------------------------------------------------------------
-- Module: a class made with the libraries' class helper (torch_class.lua), like every
-- other class of nn, optim and data. What it adds to a plain class: an instance starts
-- with its registries (__new), fields are filed through __newindex and read through
-- __index, and defining `forward` on a class goes through __define (below).
------------------------------------------------------------------------------
local Module = class("nn.Module")
M.Module = Module

local function is_module(v)
  return type(v) == "table" and rawget(v, "_modules") ~= nil and rawget(v, "_parameters") ~= nil
end
M.is_module = is_module

-- what `self.k` finds: attributes, parameters, buffers, submodules, then the class chain
-- (one function for every Module class: it reaches the class as the metatable)
local function index(self, k)
  local v = self._attrs[k]
  if v ~= nil then return v end
  v = self._parameters.vals[k]
  if v ~= nil then return v end
  v = self._buffers.vals[k]
  if v ~= nil then return v end
  v = self._modules.vals[k]
  if v ~= nil then return v end
  local cls = getmetatable(self)
  if type(k) ~= "string" then
    local get = cls.__getitem
    if get then return get(self, k) end
    return nil
  end
  return cls[k]
end

local function remove_from(self, name, except)
  if except ~= "attrs" then self._attrs[name] = nil end
  if except ~= "params" then od_set(self._parameters, name, nil) end
  if except ~= "buffers" then od_set(self._buffers, name, nil) end
  if except ~= "modules" then od_set(self._modules, name, nil) end
end

local function newindex(self, k, v)
  if type(k) ~= "string" then
    local set = getmetatable(self).__setitem
    if set then return set(self, k, v) end
    error(("%s: cannot assign to index %s"):format(self:_get_name(), tostring(k)), 2)
  end
  if torch.is_tensor(v) and is_parameter(v) then
    remove_from(self, k, "params")
    od_set(self._parameters, k, v)
  elseif is_module(v) then
    remove_from(self, k, "modules")
    od_set(self._modules, k, v)
  elseif self._parameters.vals[k] ~= nil and v ~= nil then
    error(("%s: cannot assign a %s as parameter '%s' (nn.Parameter or nil expected)"):format(
      self:_get_name(), torch.is_tensor(v) and "plain tensor" or type(v), k), 2)
  elseif self._buffers.vals[k] ~= nil and v ~= nil then
    if not torch.is_tensor(v) then
      error(("%s: cannot assign a %s as buffer '%s' (a tensor or nil expected)"):format(
        self:_get_name(), type(v), k), 2)
    end
    od_set(self._buffers, k, v)
  elseif self._modules.vals[k] ~= nil and v ~= nil then
    error(("%s: cannot assign a %s as child module '%s' (a Module or nil expected)"):format(
      self:_get_name(), type(v), k), 2)
  else
    remove_from(self, k, "attrs")
    self._attrs[k] = v
  end
end

-- A class's forward() definition is kept as _forward_impl; `Class.forward` becomes a small
-- wrapper that calls that very function through M.forward_entry, which torch7.lua replaces
-- with Torch7's bookkeeping (remember the last input and output: module.output, which
-- backward() needs). Calling the module (`m(x)`) runs the hooks and the most derived
-- _forward_impl without that bookkeeping; `m:forward(x)` runs no hooks (as in PyTorch), and
-- `Parent.forward(self, x)` from a subclass reaches the parent's own definition.
M.forward_entry = function(self, impl, ...) return impl(self, ...) end

function Module.__define(cls, k, v)
  if k == "forward" and type(v) == "function" then
    rawset(cls, "_forward_impl", v)
    rawset(cls, "forward", function(self, ...)
      local observe = M.call_observer
      if observe then observe(self) end
      return M.forward_entry(self, v, ...)
    end)
    return
  end
  rawset(cls, k, v)
end

-- a new instance starts with its registries, so that __init (and a subclass's __init that
-- doesn't call its parent's) can assign fields at once. An instance's whole state is its
-- raw fields _parameters, _buffers, _modules (ordered {keys = {...}, vals = {...}}), _attrs
-- and _non_persistent; its class is getmetatable(m), which lets a loader (torch.load)
-- rebuild a module from its class name without running code from the file.
function Module.__new()
  return {
    _parameters = od_new(), _buffers = od_new(), _modules = od_new(),
    _attrs = { training = true }, _non_persistent = {},
  }
end

-- the generic metamethods every Module class carries (they dispatch to methods, so
-- subclasses override methods, never metamethods)
Module.__index = index
Module.__newindex = newindex
-- torch.compile's capture sets this while it runs, to learn which modules the traced function
-- calls: their training flags become guards of the captured graph
M.call_observer = nil

function Module.__call(self, ...)
  local observe = M.call_observer
  if observe then observe(self) end
  local attrs = self._attrs
  if attrs._forward_pre_hooks == nil and attrs._forward_hooks == nil then return self:_forward_impl(...) end
  return self:_call_with_hooks(...)
end
function Module.__tostring(self) return self:__repr() end
function Module.__len(self)
  local f = getmetatable(self).__len_impl
  if f then return f(self) end
  return 0
end
function Module.__pairs(self)
  local f = getmetatable(self).__pairs_impl
  if f then return f(self) end
  return next, {}, nil
end

-- every Module class by its name in nn ("Linear", "Net" for nn.Module:extend("Net")); the
-- last one defined under a name wins. Subclasses: Module:extend(name), from the helper.
M.classes = class.namespace("nn")

-- is `obj` an instance of class `cls` (or of a subclass)?
M.isinstance = class.isinstance
function Module:is_a(cls) return class.isinstance(self, cls) end

-- no-op: registries exist before __init runs. nn.Module() takes no arguments (PyTorch's
-- Module.__init__ rejects any too), so a subclass without an __init of its own that is
-- given some is told so rather than silently ignoring them
local MODULE = class.signature("nn.Module", "")
function Module:__init(...)
  local n = select("#", ...)
  if n == 0 then return end
  if n == 1 and class.is_options((...)) then MODULE(...) return end   -- unknown option 'x'
  local cls = getmetatable(self)
  if rawequal(cls, Module) then MODULE(...) end
  error(("%s: got %d argument(s), but the class has no __init of its own to take them (nn.Module's "
    .. "takes none): define %s:__init"):format(rawget(cls, "__typename") or "nn.Module", n,
    rawget(cls, "__name") or "Class"), 3)
end

Module.forward = function(self)
  error(("%s: forward() is not implemented"):format(self:_get_name()), 2)
end

function Module:_get_name() return getmetatable(self).__name end

-- the hooked call path
function Module:_call_with_hooks(...)
  local args = table.pack(...)
  local pre = self._forward_pre_hooks
  if pre then
    for _, e in ipairs(pre.list) do
      local r = e.fn(self, args)
      if r ~= nil then
        if type(r) == "table" and not torch.is_tensor(r) and not is_module(r) then
          args = r; args.n = args.n or #r
        else
          args = table.pack(r)
        end
      end
    end
  end
  local res = table.pack(self:_forward_impl(table.unpack(args, 1, args.n)))
  local post = self._forward_hooks
  if post then
    for _, e in ipairs(post.list) do
      local r = e.fn(self, args, res[1])
      if r ~= nil then res[1] = r end
    end
  end
  return table.unpack(res, 1, res.n)
end

local function add_hook(self, field, fn, what)
  if type(fn) ~= "function" then
    error(("%s: %s expects a function, got %s"):format(self:_get_name(), what, type(fn)), 3)
  end
  local hooks = self._attrs[field]
  if not hooks then hooks = { list = {} }; self._attrs[field] = hooks end
  local entry = { fn = fn }
  hooks.list[#hooks.list + 1] = entry
  local handle = {}
  function handle.remove()
    local h = self._attrs[field]
    if not h then return end
    for i, e in ipairs(h.list) do
      if e == entry then table.remove(h.list, i) break end
    end
    if #h.list == 0 then self._attrs[field] = nil end
  end
  return handle
end

-- hook(module, inputs) -> nil or new inputs (a tensor or a list)
function Module:register_forward_pre_hook(fn)
  return add_hook(self, "_forward_pre_hooks", fn, "register_forward_pre_hook")
end
-- hook(module, inputs, output) -> nil or a new output
function Module:register_forward_hook(fn)
  return add_hook(self, "_forward_hooks", fn, "register_forward_hook")
end
-- hook(module, state_dict, prefix): runs once state_dict() has put this module's parameters
-- and buffers, and its children's, in state_dict (under prefix); it may change or add entries
function Module:register_state_dict_post_hook(fn)
  return add_hook(self, "_state_dict_hooks", fn, "register_state_dict_post_hook")
end

------------------------------------------------------------------------------
-- registration
------------------------------------------------------------------------------
-- the options of a method: unknown names are errors naming the module's class and the method
local function method_options(self, method, opts, allowed)
  return class.check_options(self.__typename .. ":" .. method, opts, allowed)
end

-- a method's boolean argument, given as itself or by name in an options table
-- (m:train(false), m:train({mode = false}); register_buffer(name, t, {persistent = false}))
local function flag(self, method, v, name, default)
  if type(v) == "table" and getmetatable(v) == nil then
    method_options(self, method, v, { name })
    v = v[name]
  end
  if v == nil then return default end
  if type(v) ~= "boolean" then
    error(("%s: %s: argument '%s' must be a boolean, got %s"):format(self:_get_name(), method, name,
      torch.is_tensor(v) and "a tensor" or type(v)), 3)
  end
  return v
end

local function check_name(self, name, what)
  if type(name) ~= "string" then
    error(("%s: %s name must be a string, got %s"):format(self:_get_name(), what, type(name)), 3)
  end
  if name == "" or name:find(".", 1, true) then
    error(("%s: %s name can't be empty or contain \".\" (got \"%s\")"):format(self:_get_name(), what, name), 3)
  end
end

function Module:register_parameter(name, p)
  check_name(self, name, "parameter")
  if p ~= nil and not torch.is_tensor(p) then
    error(("%s: register_parameter('%s') expects a tensor or nil, got %s"):format(self:_get_name(), name, type(p)), 2)
  end
  if p ~= nil and not is_parameter(p) then p = M.Parameter(p, p.requires_grad or p:is_floating_point()) end
  remove_from(self, name, "params")
  od_set(self._parameters, name, p)
end

function Module:register_buffer(name, t, persistent)
  persistent = flag(self, "register_buffer", persistent, "persistent", true)
  check_name(self, name, "buffer")
  if t ~= nil and not torch.is_tensor(t) then
    error(("%s: register_buffer('%s') expects a tensor or nil, got %s"):format(self:_get_name(), name, type(t)), 2)
  end
  remove_from(self, name, "buffers")
  -- a nil buffer keeps its slot (PyTorch lists it nowhere, but the name stays a buffer)
  if t == nil then
    od_set(self._buffers, name, nil)
    self._non_persistent[name] = nil
    return
  end
  od_set(self._buffers, name, t)
  self._non_persistent[name] = (persistent == false) or nil
end

function Module:add_module(name, m)
  if type(name) ~= "string" then name = tostring(name) end
  if m ~= nil and not is_module(m) then
    error(("%s: add_module('%s') expects a Module, got %s"):format(self:_get_name(), name, type(m)), 2)
  end
  remove_from(self, name, "modules")
  od_set(self._modules, name, m)
end
Module.register_module = Module.add_module

------------------------------------------------------------------------------
-- iteration
------------------------------------------------------------------------------
-- named_modules: {name, module} pairs, self first (name ""), each module once
function Module:_named_modules(out, memo, prefix)
  if memo[self] then return end
  memo[self] = true
  out[#out + 1] = { prefix, self }
  for _, k in ipairs(self._modules.keys) do
    local m = self._modules.vals[k]
    m:_named_modules(out, memo, prefix == "" and k or (prefix .. "." .. k))
  end
end

function Module:named_modules(prefix)
  if type(prefix) == "table" and getmetatable(prefix) == nil then
    prefix = method_options(self, "named_modules", prefix, { "prefix" }).prefix
  end
  local out = {}
  self:_named_modules(out, {}, prefix or "")
  return named_list(out)
end

function Module:modules()
  local out = {}
  for i, e in ipairs(self:named_modules()) do out[i] = e[2] end
  return out
end

function Module:named_children()
  local out = {}
  for _, k in ipairs(self._modules.keys) do out[#out + 1] = { k, self._modules.vals[k] } end
  return named_list(out)
end

function Module:children()
  local out = {}
  for _, k in ipairs(self._modules.keys) do out[#out + 1] = self._modules.vals[k] end
  return out
end

local function named_members(self, field, prefix, recurse)
  local out, seen = {}, {}
  local mods
  if recurse == false then mods = { { prefix or "", self } }
  else mods = self:named_modules(prefix) end
  for _, e in ipairs(mods) do
    local mp, m = e[1], e[2]
    local reg = m[field]
    for _, k in ipairs(reg.keys) do
      local v = reg.vals[k]
      if v ~= nil and not seen[v] then
        seen[v] = true
        out[#out + 1] = { mp == "" and k or (mp .. "." .. k), v }
      end
    end
  end
  return out
end

local NAMED_OPTS, RECURSE_OPTS = { "prefix", "recurse" }, { "recurse" }

-- named_parameters(prefix="", recurse=true) or ({prefix=, recurse=}): ordered {name, p}
-- pairs; shared parameters once
function Module:named_parameters(prefix, recurse)
  if type(prefix) == "table" then
    method_options(self, "named_parameters", prefix, NAMED_OPTS)
    prefix, recurse = prefix.prefix, prefix.recurse
  end
  return named_list(named_members(self, "_parameters", prefix, recurse))
end

-- parameters(recurse=true): a list of parameter tensors
function Module:parameters(recurse)
  if type(recurse) == "table" then
    method_options(self, "parameters", recurse, RECURSE_OPTS)
    recurse = recurse.recurse
  end
  local out = {}
  for i, e in ipairs(named_members(self, "_parameters", "", recurse)) do out[i] = e[2] end
  return out
end

function Module:named_buffers(prefix, recurse)
  if type(prefix) == "table" then
    method_options(self, "named_buffers", prefix, NAMED_OPTS)
    prefix, recurse = prefix.prefix, prefix.recurse
  end
  return named_list(named_members(self, "_buffers", prefix, recurse))
end

function Module:buffers(recurse)
  if type(recurse) == "table" then
    method_options(self, "buffers", recurse, RECURSE_OPTS)
    recurse = recurse.recurse
  end
  local out = {}
  for i, e in ipairs(named_members(self, "_buffers", "", recurse)) do out[i] = e[2] end
  return out
end

-- get_submodule("encoder.layers.1")
function Module:get_submodule(target)
  if target == "" or target == nil then return self end
  local m = self
  for part in tostring(target):gmatch("[^.]+") do
    local c = m._modules.vals[part]
    if not c then
      error(("%s has no attribute `%s`"):format(m:_get_name(), part), 2)
    end
    m = c
  end
  return m
end

function Module:get_parameter(target)
  local mod, name = tostring(target):match("^(.*)%.([^.]+)$")
  if not mod then mod, name = "", target end
  local m = self:get_submodule(mod)
  local p = m._parameters.vals[name]
  if p == nil then error(("%s has no parameter `%s`"):format(m:_get_name(), name), 2) end
  return p
end

------------------------------------------------------------------------------
-- state
------------------------------------------------------------------------------
function Module:_save_to_state_dict(dest, prefix, keep_vars)
  for _, k in ipairs(self._parameters.keys) do
    local p = self._parameters.vals[k]
    if p ~= nil then dest[prefix .. k] = keep_vars and p or p:detach() end
  end
  for _, k in ipairs(self._buffers.keys) do
    local b = self._buffers.vals[k]
    if b ~= nil and not self._non_persistent[k] then dest[prefix .. k] = keep_vars and b or b:detach() end
  end
end

-- state_dict({prefix=, keep_vars=}): an ordered name -> tensor table (pairs() walks it in
-- PyTorch's order: a module's parameters, then its buffers, then each child's, depth first).
-- The tensors share storage with the module's (detached unless keep_vars).
local STATE_DICT_OPTS = { "destination", "prefix", "keep_vars" }
function Module:state_dict(opts)
  opts = method_options(self, "state_dict", opts, STATE_DICT_OPTS)
  local dest = opts.destination or ordered_dict()
  local function walk(m, prefix)
    m:_save_to_state_dict(dest, prefix, opts.keep_vars)
    for _, k in ipairs(m._modules.keys) do
      local c = m._modules.vals[k]
      if c then walk(c, prefix .. k .. ".") end
    end
    local hooks = m._attrs._state_dict_hooks
    if hooks then for _, e in ipairs(hooks.list) do e.fn(m, dest, prefix) end end
  end
  walk(self, opts.prefix or "")
  return dest
end

local function T_same_shape(a, b)
  local sa, sb = a.shape, b.shape
  if #sa ~= #sb then return false end
  for i = 1, #sa do if sa[i] ~= sb[i] then return false end end
  return true
end

local function shape_str(t) return tostring(t.shape) end   -- "torch.Size([3, 4])"

-- load_state_dict(sd, {strict=true}): copies values in place (keeping the module's tensors);
-- returns {missing_keys=..., unexpected_keys=...}. Errors name every offending key.
local LOAD_OPTS = { "strict" }
function Module:load_state_dict(sd, opts)
  opts = method_options(self, "load_state_dict", opts, LOAD_OPTS)
  local strict = opts.strict ~= false
  if type(sd) ~= "table" then
    error(("%s: load_state_dict expects a table of tensors, got %s"):format(self:_get_name(), type(sd)), 2)
  end
  local errors, missing, unexpected = {}, {}, {}
  local expected = {}
  local own = self:state_dict({ keep_vars = true })
  for _, k in ipairs(M.keys(own)) do expected[k] = true end
  local targets = {}
  -- the real tensors (parameters and buffers) behind each key
  local function walk(m, prefix)
    for _, k in ipairs(m._parameters.keys) do
      local p = m._parameters.vals[k]
      if p then targets[prefix .. k] = p end
    end
    for _, k in ipairs(m._buffers.keys) do
      local b = m._buffers.vals[k]
      if b and not m._non_persistent[k] then targets[prefix .. k] = b end
    end
    for _, k in ipairs(m._modules.keys) do walk(m._modules.vals[k], prefix .. k .. ".") end
  end
  walk(self, "")
  torch.no_grad(function()
    for _, k in ipairs(M.keys(own)) do
      local v = sd[k]
      local t = targets[k]
      if v == nil then
        missing[#missing + 1] = k
      elseif not torch.is_tensor(v) then
        errors[#errors + 1] = ('While copying the parameter named "%s", expected a tensor from checkpoint, got %s.')
          :format(k, type(v))
      elseif not T_same_shape(v, t) then
        errors[#errors + 1] = ("size mismatch for %s: copying a param with shape %s from checkpoint, "
          .. "the shape in current model is %s."):format(k, shape_str(v), shape_str(t))
      else
        t:copy_(v)
      end
    end
  end)
  for _, k in ipairs(M.keys(sd)) do
    if not expected[k] then unexpected[#unexpected + 1] = k end
  end
  if strict then
    local function quoted(list)
      local q = {}
      for i, k in ipairs(list) do q[i] = '"' .. k .. '"' end
      return table.concat(q, ", ")
    end
    if #unexpected > 0 then
      table.insert(errors, 1, ("Unexpected key(s) in state_dict: %s. "):format(quoted(unexpected)))
    end
    if #missing > 0 then
      table.insert(errors, 1, ("Missing key(s) in state_dict: %s. "):format(quoted(missing)))
    end
  end
  if #errors > 0 then
    error(("Error(s) in loading state_dict for %s:\n\t%s"):format(self:_get_name(), table.concat(errors, "\n\t")), 2)
  end
  return { missing_keys = missing, unexpected_keys = unexpected }
end


------------------------------------------------------------------------------
-- modes, grads, conversions
------------------------------------------------------------------------------
function Module:train(mode)
  if type(mode) == "table" and getmetatable(mode) == nil then mode = flag(self, "train", mode, "mode", true) end
  if mode == nil then mode = true end
  if type(mode) ~= "boolean" then
    error(("%s: train() expects a boolean, got %s"):format(self:_get_name(), type(mode)), 2)
  end
  for _, m in ipairs(self:modules()) do m._attrs.training = mode end
  return self
end

function Module:eval() return self:train(false) end

function Module:requires_grad_(requires_grad)
  requires_grad = flag(self, "requires_grad_", requires_grad, "requires_grad", true)
  for _, p in ipairs(self:parameters()) do p.requires_grad = requires_grad end
  return self
end

-- zero_grad({set_to_none=true}): drops the grads (or zeroes them in place)
local ZERO_GRAD_OPTS = { "set_to_none" }
function Module:zero_grad(opts)
  local set_to_none = true
  if type(opts) == "table" then
    method_options(self, "zero_grad", opts, ZERO_GRAD_OPTS)
    if opts.set_to_none ~= nil then set_to_none = opts.set_to_none end
  elseif type(opts) == "boolean" then set_to_none = opts end
  for _, p in ipairs(self:parameters()) do
    local g = p.grad
    if g ~= nil then
      if set_to_none then p.grad = nil
      else
        if g.grad_fn ~= nil then g = g:detach(); p.grad = g end
        g:zero_()
      end
    end
  end
end

-- apply(fn): fn(m) for every submodule (children first, as PyTorch) and self; returns self
function Module:apply(fn)
  for _, c in ipairs(self:children()) do c:apply(fn) end
  fn(self)
  return self
end

-- _apply(fn): replaces every parameter, its grad and every buffer by fn(tensor).
-- A parameter becomes a new leaf parameter when fn returns a different tensor, so
-- optimizers built before to()/double() hold the old tensors (create them afterwards).
function Module:_apply(fn)
  local done = {}   -- a tensor shared by several modules stays shared
  local function conv(t)
    local r = done[t]
    if r == nil then r = fn(t); done[t] = r end
    return r
  end
  torch.no_grad(function()
    for _, m in ipairs(self:modules()) do
      local P = m._parameters
      for _, k in ipairs(P.keys) do
        local p = P.vals[k]
        if p ~= nil then
          local np = done[p]
          if np == nil then
            -- the parameter keeps its identity (optimizers built before still hold it):
            -- its data moves, as PyTorch's `param.data = fn(param)`
            np = p
            local moved = fn(p)
            if not rawequal(moved, p) then
              local g = p.grad
              p.grad = nil
              p.data = moved:detach()
              if g ~= nil then p.grad = fn(g) end
            end
            done[p] = np
          end
          P.vals[k] = np
        end
      end
      local B = m._buffers
      for _, k in ipairs(B.keys) do
        local b = B.vals[k]
        if b ~= nil then B.vals[k] = conv(b) end
      end
    end
  end)
  return self
end

local function dtype_of(arg)
  if type(arg) == "string" then
    local d = torch[arg]
    if type(d) ~= "userdata" and type(d) ~= "table" then return nil end
    if arg == "cpu" or arg == "cuda" then return nil end
    return d
  end
  if (type(arg) == "userdata" and not torch.is_tensor(arg)) or type(arg) == "table" then
    if arg.name and arg.is_floating_point ~= nil then return arg end
  end
  return nil
end

-- to(dtype) / to(device) / to(device, dtype) / to({dtype=, device=}):
-- floating parameters and buffers change dtype (integer buffers such as
-- num_batches_tracked keep theirs); parameters and buffers move to the device
-- (its backend must be loaded), keeping their identity.
local TO_OPTS = { "dtype", "device" }
function Module:to(a, b)
  local dtype, device
  local function take(x)
    if x == nil then return end
    -- an options table: a plain table (dtypes and devices are tables with a metatable)
    if type(x) == "table" and getmetatable(x) == nil then
      method_options(self, "to", x, TO_OPTS)
      dtype = x.dtype and (dtype_of(x.dtype) or x.dtype) or dtype
      device = x.device or device
      return
    end
    local d = dtype_of(x)
    if d then dtype = d
    elseif torch.is_tensor(x) then dtype = x.dtype; device = x.device
    else device = x end
  end
  take(a); take(b)
  if dtype and not dtype.is_floating_point then
    error(("%s: to() only accepts floating point dtypes, got %s"):format(self:_get_name(), dtype.name), 2)
  end
  if not dtype and not device then return self end
  if device then   -- a device whose backend is not loaded fails here, before anything moves
    local ok, err = pcall(torch.empty, 0, { device = device })
    if not ok then error(("%s: to(): %s"):format(self:_get_name(), tostring(err):gsub("^empty: ", "")), 2) end
  end
  return self:_apply(function(t)
    local r = t
    if device then r = r:to(device) end
    if dtype and r:is_floating_point() and r.dtype ~= dtype then r = r:to(dtype) end
    return r
  end)
end

function Module:float() return self:to(torch.float32) end
function Module:double() return self:to(torch.float64) end
function Module:half() return self:to(torch.float16) end
function Module:bfloat16() return self:to(torch.bfloat16) end
function Module:cpu() return self:to("cpu") end

-- to_empty{device = D}: every parameter and buffer replaced by an uninitialised
-- tensor of its shape and dtype on D (PyTorch's Module.to_empty): how a model
-- built on the meta device gets memory, before reset_parameters() or
-- load_state_dict() gives it values. Parameters keep their identity.
local TO_EMPTY_OPTS = { device = true, recurse = true }
function Module:to_empty(opts)
  if type(opts) ~= "table" or getmetatable(opts) ~= nil then
    error(("%s: to_empty: expected an options table {device = ...}"):format(self:_get_name()), 2)
  end
  method_options(self, "to_empty", opts, TO_EMPTY_OPTS)
  if opts.device == nil then error(("%s: to_empty: argument 'device' is required"):format(self:_get_name()), 2) end
  local ok, err = pcall(torch.empty, 0, { device = opts.device })
  if not ok then error(("%s: to_empty(): %s"):format(self:_get_name(), tostring(err):gsub("^empty: ", "")), 2) end
  return self:_apply(function(t) return torch.empty_like(t, { device = opts.device }) end)
end
function Module:cuda() return self:to("cuda") end

------------------------------------------------------------------------------
-- printing
------------------------------------------------------------------------------
function Module:extra_repr() return "" end

local function addindent(s, n)
  local pad = string.rep(" ", n)
  return (s:gsub("\n", "\n" .. pad))
end

function Module:__repr()
  local extra_lines = {}
  local extra = self:extra_repr()
  if extra and extra ~= "" then
    for line in (extra .. "\n"):gmatch("(.-)\n") do extra_lines[#extra_lines + 1] = line end
  end
  local child_lines = {}
  for _, k in ipairs(self._modules.keys) do
    local m = self._modules.vals[k]
    child_lines[#child_lines + 1] = "(" .. k .. "): " .. addindent(tostring(m), 2)
  end
  local s = self:_get_name() .. "("
  if #extra_lines + #child_lines > 0 then
    if #extra_lines == 1 and #child_lines == 0 then
      s = s .. extra_lines[1]
    else
      local lines = {}
      for _, l in ipairs(extra_lines) do lines[#lines + 1] = l end
      for _, l in ipairs(child_lines) do lines[#lines + 1] = l end
      s = s .. "\n  " .. table.concat(lines, "\n  ") .. "\n"
    end
  end
  return s .. ")"
end

-- Python spellings for extra_repr texts
function M.pybool(b) return b and "True" or "False" end
function M.pyval(v)
  if type(v) == "boolean" then return v and "True" or "False" end
  if v == nil then return "None" end
  if type(v) == "table" then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = M.pyval(x) end
    if #parts == 1 then return "(" .. parts[1] .. ",)" end
    return "(" .. table.concat(parts, ", ") .. ")"
  end
  if type(v) == "string" then return "'" .. v .. "'" end
  if math.type(v) == "float" then
    if v ~= v then return "nan" end
    if v == math.huge then return "inf" end
    if v == -math.huge then return "-inf" end
    -- Python's repr: the shortest text that reads back as v, with a ".0" on whole numbers
    local txt
    for prec = 1, 17 do
      txt = ("%." .. prec .. "g"):format(v)
      if tonumber(txt) == v then break end
    end
    if not txt:find("[.e]") then txt = txt .. ".0" end
    return txt
  end
  return tostring(v)
end

------------------------------------------------------------------------------
-- Torch7's `training` is both the boolean field and the method model:training().
-- A boolean can only be called through the boolean type's metatable: calling a boolean
-- with a module as its argument switches that module to training mode.
------------------------------------------------------------------------------
do
  local bmt = debug.getmetatable(true)
  if bmt == nil then
    bmt = {}
    debug.setmetatable(true, bmt)
  end
  if bmt.__call == nil then
    bmt.__call = function(_, m, ...)
      if is_module(m) then return m:train(true) end
      error("attempt to call a boolean value", 2)
    end
  end
end


------------------------------------------------------------------------------
-- torch.save / torch.load (man/serialization.md): modules are saved as their registries
-- under the name "nn.<Class>"; forward hooks (functions) are left out; a load marks the
-- tensors in _parameters as Parameters again. State dicts (ordered dicts) keep their order.
------------------------------------------------------------------------------
if torch.serialization and torch.serialization.register_namespace then
  local HOOKS = { _forward_hooks = true, _forward_pre_hooks = true, _state_dict_hooks = true }
  local function is_module_class(c)
    if not class.is_class(c) then return false end
    while c do
      if c == Module then return true end
      c = rawget(c, "super")
    end
    return false
  end
  torch.serialization.register_namespace("nn", {
    -- a Module class is named by its full name without the "nn." ("Linear", "Net"); one of
    -- another namespace (class("mylib.Net", nn.Module)) by its full name ("nn.mylib.Net")
    name_of = function(mt)
      if is_module_class(mt) then
        local full = rawget(mt, "__typename")
        if class.find(full) ~= mt then return nil end   -- redefined since: no longer by that name
        return full:match("^nn%.(.+)$") or full
      end
      if rawget(mt, "__name") == "OrderedDict" and type(rawget(mt, "__keys")) == "table" then return "OrderedDict" end
      return nil
    end,
    resolve = function(short)
      if short == "OrderedDict" then return "OrderedDict" end
      local cls = class.find("nn." .. short) or class.find(short)
      -- torch.ao's quantized modules ("nn.ao.Int8WeightOnlyLinear"): lutorch's own library
      if not cls and short:match("^ao%.") and not package.loaded.ao then
        pcall(require, "ao")
        cls = class.find(short)
      end
      if is_module_class(cls) then return cls end
      return nil
    end,
    save = function(obj, mt)
      if rawget(mt, "__name") == "OrderedDict" and M.classes.OrderedDict ~= mt then
        local keys = {}
        for _, k in ipairs(mt.__keys) do if rawget(obj, k) ~= nil then keys[#keys + 1] = k end end
        return nil, keys
      end
      local fields = {}
      for k, v in next, obj do fields[k] = v end
      if type(obj._attrs) == "table" then
        local attrs = {}
        for k, v in next, rawget(obj, "_attrs") do if not HOOKS[k] then attrs[k] = v end end
        fields._attrs = attrs
      end
      return fields, nil
    end,
    load = function(obj, extra, cls)
      if cls == "OrderedDict" then
        local od = ordered_dict()
        local keys = getmetatable(od).__keys
        if type(extra) ~= "table" then error("torch.load: corrupt OrderedDict (no key list)", 0) end
        for _, k in ipairs(extra) do keys[#keys + 1] = k end
        setmetatable(obj, getmetatable(od))
        return
      end
      local p = rawget(obj, "_parameters")
      if type(p) ~= "table" or type(p.keys) ~= "table" or type(p.vals) ~= "table" or
         type(rawget(obj, "_modules")) ~= "table" or type(rawget(obj, "_buffers")) ~= "table" or
         type(rawget(obj, "_attrs")) ~= "table" then
        error(("torch.load: corrupt module of class nn.%s (missing registries)"):format(rawget(cls, "__name")), 0)
      end
      if rawget(obj, "_non_persistent") == nil then rawset(obj, "_non_persistent", {}) end
      setmetatable(obj, cls)
      for _, k in ipairs(p.keys) do
        local t = p.vals[k]
        if torch.is_tensor(t) then M.Parameter(t, t.requires_grad) end
      end
    end,
  })
end

return M
