-- library.lua — torch.library and torch.ops: custom ops defined from Lua (or loaded
-- from a C extension), as PyTorch's torch.library has them. The C half
-- (src/vm/llibrary.c) parses schemas, converts values and calls through the
-- dispatcher; this file is the public API over it: define, impl,
-- register_autograd, register_fake, Library objects, opcheck, and the torch.ops
-- namespaces. Runs once when the torch module opens.
local torch = ...
local lib = torch.library

local function argerror(fname, name, expected, v, level)
  error(("%s: argument '%s' must be %s, got %s"):format(fname, name, expected, type(v)), level + 1)
end

-- "mylib::scale", or "scale" inside a Library of namespace ns
local function qualify(name, ns)
  if name:find("::", 1, true) then return name end
  if not ns then
    error(("torch.library: op name '%s' needs its namespace: \"mylib::%s\""):format(name, name), 3)
  end
  return ns .. "::" .. name
end

-- the qualified name of an op given as a string or as a torch.ops callable
local op_names = setmetatable({}, { __mode = "k" })
local function name_of(op, fname)
  if type(op) == "string" then return op end
  local n = op_names[op]
  if n then return n end
  error(("%s: expected an op name (\"mylib::scale\") or torch.ops.mylib.scale, got %s"):format(fname, type(op)), 3)
end

local function check_op(fname, name)
  if not lib._schema(name) then
    error(("%s: no op named %s (define it first with torch.library.define)"):format(fname, name), 3)
  end
end

------------------------------------------------------------------------------
-- define, impl, register_fake, register_autograd

-- torch.library.define("mylib::scale(Tensor x, float s) -> Tensor" [, {doc = ...}])
-- or PyTorch's two-string form define("mylib::scale", "(Tensor x, float s) -> Tensor")
function lib.define(qualname, schema, opts)
  if type(qualname) ~= "string" then argerror("torch.library.define", "qualname", "a string", qualname, 2) end
  if type(schema) == "table" then schema, opts = nil, schema end
  if schema ~= nil and type(schema) ~= "string" then argerror("torch.library.define", "schema", "a string", schema, 2) end
  opts = opts or {}
  local text = schema and (qualname .. schema) or qualname
  local ok, r = pcall(lib._define, text, opts.doc)
  if not ok then error(r, 2) end
  return r
end

-- the dispatch names impl takes; PyTorch's spellings (CPU, CUDA, Meta) included
local function register_impl(fname, name, types, fn, level)
  if type(types) == "string" then types = { types } end
  if type(types) ~= "table" then argerror(fname, "types", "a device name or a list of them", types, level) end
  if type(fn) ~= "function" then argerror(fname, "fn", "a function", fn, level) end
  check_op(fname, name)
  for _, dev in ipairs(types) do
    local ok, err = pcall(lib._impl, name, dev, fn)
    if not ok then error(err, level + 1) end
  end
end

-- torch.library.impl(name, "cpu" | {"cpu", "cuda"} | "CompositeImplicitAutograd" | "default", fn)
-- Without fn, a function that registers the one it is given (PyTorch's decorator):
--   torch.library.impl("mylib::scale", "cpu")(function(x, s) ... end)
function lib.impl(name, types, fn)
  name = name_of(name, "torch.library.impl")
  if fn == nil then
    return function(f) register_impl("torch.library.impl", name, types, f, 2); return f end
  end
  register_impl("torch.library.impl", name, types, fn, 2)
  return fn
end

-- torch.library.register_fake(name, fn): fn(args...) returns results with the real
-- kernel's shapes and dtypes without computing them (torch.empty(...)). opcheck
-- compares it with the real kernel; the meta device runs it.
function lib.register_fake(name, fn)
  name = name_of(name, "torch.library.register_fake")
  local function reg(f)
    if type(f) ~= "function" then argerror("torch.library.register_fake", "fn", "a function", f, 3) end
    check_op("torch.library.register_fake", name)
    lib._register_fake(name, f)
    return f
  end
  if fn == nil then return reg end
  return reg(fn)
end
lib.impl_abstract = lib.register_fake

-- the ctx of a derivative: save_for_backward, saved_tensors, needs_input_grad
local Ctx = {}
local ctx_mt = {}
ctx_mt.__index = function(self, k)
  if k == "saved_tensors" then
    local s = rawget(self, "_saved")
    if not s then return {} end
    for i = 1, s.n do
      local t = s.tensors[i]
      if t ~= nil and torch.autograd._version(t) ~= s.versions[i] then
        error(("%s: one of the variables needed for gradient computation has been modified by an inplace "
          .. "operation: saved tensor %d is at version %d; expected version %d instead")
          :format(rawget(self, "_name"), i, torch.autograd._version(t), s.versions[i]), 2)
      end
    end
    return s.tensors
  end
  return Ctx[k]
end

function Ctx:save_for_backward(...)
  local ts = table.pack(...)
  local saved = { tensors = {}, versions = {}, n = ts.n }
  for i = 1, ts.n do
    local t = ts[i]
    if t ~= nil and not torch.is_tensor(t) then
      error(("save_for_backward: argument %d must be a tensor or nil, got %s"):format(i, type(t)), 2)
    end
    saved.tensors[i] = t
    saved.versions[i] = t ~= nil and torch.autograd._version(t) or nil
  end
  rawset(self, "_saved", saved)
end
Ctx.mark_non_differentiable = function() end
function Ctx:set_materialize_grads(v) rawset(self, "_materialize", v) end

local function contains(list, x)
  for i = 1, list.n or #list do if rawequal(list[i], x) then return true end end
  return false
end

-- torch.library.register_autograd(name, backward, {setup_context = fn})
--   setup_context(ctx, inputs, output): inputs is every argument, output the result
--   (a table of them when the op has several); backward(ctx, grad, ...) returns one
--   gradient per argument (nil for arguments that are not tensors).
function lib.register_autograd(name, backward, opts)
  local fname = "torch.library.register_autograd"
  name = name_of(name, fname)
  if type(backward) ~= "function" then argerror(fname, "backward", "a function", backward, 2) end
  local setup_context
  if type(opts) == "function" then setup_context = opts
  elseif type(opts) == "table" then
    for k in pairs(opts) do
      if k ~= "setup_context" then error(("%s: unexpected option '%s'"):format(fname, tostring(k)), 2) end
    end
    setup_context = opts.setup_context
  elseif opts ~= nil then argerror(fname, "setup_context", "a function or {setup_context = fn}", opts, 2) end
  check_op(fname, name)
  local schema = lib._schema(name)
  local nrets = #schema.rets
  local node_name = name .. "Backward"
  local function setup(needs, nargs, ...)
    local all = table.pack(...)
    local inputs = table.pack(table.unpack(all, 1, nargs))
    local output, outs
    if nrets == 1 then output = all[nargs + 1]; outs = { output, n = 1 }
    else outs = table.pack(table.unpack(all, nargs + 1, all.n)); output = outs end
    local ctx = setmetatable({ needs_input_grad = needs, _name = node_name }, ctx_mt)
    if setup_context then setup_context(ctx, inputs, output) end
    -- the ctx lives in the registry for its node: a saved output holding that node
    -- would be a cycle the collector cannot see, so it keeps a history-free alias
    local s = rawget(ctx, "_saved")
    if s then
      for i = 1, s.n do
        if torch.is_tensor(s.tensors[i]) and contains(outs, s.tensors[i]) then s.tensors[i] = s.tensors[i]:detach() end
      end
    end
    return ctx
  end
  local ok, err = pcall(lib._register_autograd, name, setup, backward)
  if not ok then error(err, 2) end
end

------------------------------------------------------------------------------
-- torch.ops: torch.ops.mylib.scale(x, 2); torch.ops.aten.NAME is torch.NAME

local ops_mt = {}
local function namespace(ns)
  local t = {}
  return setmetatable(t, { __index = function(self, name)
    local f = lib._op(ns .. "::" .. name)
    if not f then
      error(("torch.ops.%s.%s: no such op (define it with torch.library.define(\"%s::%s(...) -> ...\") "
        .. "or require the extension that defines it)"):format(ns, name, ns, name), 2)
    end
    op_names[f] = ns .. "::" .. name
    rawset(self, name, f)
    return f
  end, __name = "torch.ops." .. ns })
end
ops_mt.__index = function(self, ns)
  if type(ns) ~= "string" then return nil end
  local t
  if ns == "aten" then
    t = setmetatable({}, { __index = function(_, name) return torch[name] end })
  else
    t = namespace(ns)
  end
  rawset(self, ns, t)
  return t
end
torch.ops = setmetatable({}, ops_mt)

------------------------------------------------------------------------------
-- torch.library.Library(ns, kind): "DEF" owns a namespace (once), "FRAGMENT" adds
-- to one, "IMPL" only registers kernels for ops defined elsewhere

local Library = {}
Library.__index = Library
Library.__name = "torch.library.Library"
local def_owners = {}

function Library:define(schema, opts)
  if self.kind == "IMPL" then
    error(("Library(%q, \"IMPL\"):define: an IMPL library cannot define ops (use \"DEF\" or \"FRAGMENT\")")
      :format(self.ns), 2)
  end
  if type(schema) ~= "string" then argerror("Library:define", "schema", "a string", schema, 2) end
  local text = schema
  if not schema:find("::", 1, true) then text = self.ns .. "::" .. schema
  elseif schema:match("^([%w_]+)::") ~= self.ns then
    error(("Library(%q):define: %s is not in namespace %s"):format(self.ns, schema, self.ns), 2)
  end
  local ok, r = pcall(lib._define, text, opts and opts.doc)
  if not ok then error(r, 2) end
  self.defined[#self.defined + 1] = r
  return r:match("::(.*)$")
end

-- lib:impl(name, fn, dispatch_key) as in PyTorch; dispatch_key defaults to "default"
function Library:impl(name, fn, key)
  if type(name) ~= "string" then argerror("Library:impl", "op_name", "a string", name, 2) end
  register_impl("Library:impl", qualify(name, self.ns), key or "default", fn, 2)
end

function Library:register_fake(name, fn)
  return lib.register_fake(qualify(name, self.ns), fn)
end

function Library:register_autograd(name, backward, opts)
  return lib.register_autograd(qualify(name, self.ns), backward, opts)
end

function lib.Library(ns, kind)
  if type(ns) ~= "string" or not ns:match("^[%a_][%w_]*$") then
    argerror("torch.library.Library", "ns", "a namespace name", ns, 2)
  end
  if kind ~= "DEF" and kind ~= "IMPL" and kind ~= "FRAGMENT" then
    error(("torch.library.Library: argument 'kind' must be \"DEF\", \"IMPL\" or \"FRAGMENT\", got %s")
      :format(tostring(kind)), 2)
  end
  if kind == "DEF" then
    if def_owners[ns] then
      error(("torch.library.Library: namespace %s already has a DEF library (use \"FRAGMENT\" to add to it)")
        :format(ns), 2)
    end
    def_owners[ns] = true
  end
  return setmetatable({ ns = ns, kind = kind, defined = {} }, Library)
end

------------------------------------------------------------------------------
-- torch.library.opcheck(op, args [, kwargs] [, {test_utils = {...}}])

local ALL_TESTS = { "test_schema", "test_autograd_registration", "test_faketensor", "test_gradcheck" }

local function clone_arg(a)
  if torch.is_tensor(a) then return a:clone() end
  if type(a) == "table" then
    local t = {}
    for i, v in ipairs(a) do t[i] = clone_arg(v) end
    return t
  end
  return a
end

-- the argument with its tensors moved to the meta device (shapes, dtypes, no data)
local function meta_arg(a)
  if torch.is_tensor(a) then return a:to("meta") end
  if type(a) == "table" then
    local t = {}
    for i, v in ipairs(a) do t[i] = meta_arg(v) end
    return t
  end
  return a
end

local function tensors_of(v, out)
  out = out or {}
  if torch.is_tensor(v) then out[#out + 1] = v
  elseif type(v) == "table" then for _, x in ipairs(v) do tensors_of(x, out) end end
  return out
end

local function describe(t) return ("%s %s"):format(tostring(t.dtype), table.concat(t.shape, "x")) end

function lib.opcheck(op, args, kwargs, opts)
  local fname = "torch.library.opcheck"
  local name = name_of(op, fname)
  if type(args) ~= "table" then argerror(fname, "args", "a table of arguments", args, 2) end
  if kwargs ~= nil and type(kwargs) ~= "table" then argerror(fname, "kwargs", "a table", kwargs, 2) end
  if kwargs and kwargs.test_utils and opts == nil then kwargs, opts = nil, kwargs end
  opts = opts or {}
  local schema = lib._schema(name)
  if not schema then error(("%s: no op named %s"):format(fname, name), 2) end
  local tests = opts.test_utils or ALL_TESTS
  if type(tests) == "string" then tests = { tests } end
  local want = {}
  for _, t in ipairs(tests) do want[t] = true end
  local f = lib._op(name)
  local nargs = #schema.args
  local function call(a)
    local list = {}
    for i = 1, nargs do list[i] = a[i] end
    if kwargs and next(kwargs) then return table.pack(f(table.unpack(list, 1, nargs), kwargs)) end
    return table.pack(f(table.unpack(list, 1, nargs)))
  end
  local function fail(test, msg) error(("%s: %s failed for %s: %s"):format(fname, test, name, msg), 3) end
  local result = {}

  -- schema: it parses, the results are what it declares, inputs change only where announced
  if want.test_schema then
    local ok, err = lib._parse(schema.text)
    if not ok then fail("test_schema", err) end
    local before, versions = {}, {}
    for i = 1, nargs do
      before[i] = clone_arg(args[i])
      local ts = tensors_of(args[i])
      versions[i] = {}
      for k, t in ipairs(ts) do versions[i][k] = torch.autograd._version(t) end
    end
    local ok2, outs = pcall(call, args)
    if not ok2 then fail("test_schema", outs) end
    if outs.n ~= #schema.rets then fail("test_schema", ("%d results, the schema declares %d"):format(outs.n, #schema.rets)) end
    for i = 1, nargs do
      local a = schema.args[i]
      local now, was = tensors_of(args[i]), tensors_of(before[i])
      for k, t in ipairs(now) do
        local changed = not torch.equal(t, was[k])
        if changed and not a.mutable then
          fail("test_schema", ("argument '%s' was modified, but the schema does not declare it Tensor(a!)"):format(a.name))
        end
        if a.mutable and torch.autograd._version(t) == versions[i][k] then
          fail("test_schema", ("argument '%s' is Tensor(a!) but its version did not change"):format(a.name))
        end
      end
    end
    -- a result that shares an input's memory must say so with an alias annotation
    for r = 1, outs.n do
      local rs = schema.rets[r]
      for _, o in ipairs(tensors_of(outs[r])) do
        for i = 1, nargs do
          for _, t in ipairs(tensors_of(args[i])) do
            if lib._same_storage(o, t) and not (rs.alias and rs.alias == schema.args[i].alias) then
              fail("test_schema", ("result %d shares memory with argument '%s', but the schema does not declare "
                .. "an alias (Tensor(a) -> Tensor(a))"):format(r, schema.args[i].name))
            end
          end
        end
      end
    end
    result.test_schema = "SUCCESS"
  end

  local floating = false
  for i = 1, nargs do
    for _, t in ipairs(tensors_of(args[i])) do floating = floating or t:is_floating_point() end
  end

  -- autograd registration: a differentiable op needs a derivative or a composite kernel
  if want.test_autograd_registration then
    if floating and not schema.has_autograd and not schema.composite and not schema.mutates then
      fail("test_autograd_registration", "the op takes floating-point tensors but has no derivative "
        .. "(torch.library.register_autograd) and no CompositeImplicitAutograd kernel")
    end
    result.test_autograd_registration = "SUCCESS"
  end

  -- the fake kernel: the same shapes, dtypes and devices as the real one
  if want.test_faketensor then
    if not schema.has_fake then
      fail("test_faketensor", "no fake kernel (torch.library.register_fake)")
    end
    local real = call(clone_arg(args))
    local fa = clone_arg(args)
    local fake = table.pack(lib._call_fake(name, table.unpack(fa, 1, nargs)))
    for r = 1, real.n do
      local rt, ft = tensors_of(real[r]), tensors_of(fake[r])
      if #rt ~= #ft then fail("test_faketensor", ("result %d: %d tensors, the fake kernel gives %d"):format(r, #rt, #ft)) end
      for k, t in ipairs(rt) do
        local u = ft[k]
        local same = #t.shape == #u.shape and t.dtype == u.dtype and tostring(t.device) == tostring(u.device)
        for d = 1, #t.shape do same = same and t.shape[d] == u.shape[d] end
        if not same then
          fail("test_faketensor", ("result %d: the kernel gives %s, the fake kernel %s"):format(r, describe(t), describe(u)))
        end
      end
    end
    -- and through the dispatcher on meta tensors, where the fake kernel is the meta device's kernel
    local onmeta = call(meta_arg(args))
    for r = 1, real.n do
      for k, t in ipairs(tensors_of(real[r])) do
        local u = tensors_of(onmeta[r])[k]
        local same = u ~= nil and u.is_meta and #t.shape == #u.shape and t.dtype == u.dtype
        for d = 1, #t.shape do same = same and t.shape[d] == u.shape[d] end
        if not same then
          fail("test_faketensor", ("result %d: the kernel gives %s, the op on meta tensors %s"):format(r, describe(t),
            u and describe(u) or "nothing"))
        end
      end
    end
    result.test_faketensor = "SUCCESS"
  end

  -- gradcheck in float64 where there is a derivative
  if want.test_gradcheck then
    if schema.has_autograd and floating then
      local inputs, where = {}, {}
      local a = clone_arg(args)
      for i = 1, nargs do
        if torch.is_tensor(a[i]) and a[i]:is_floating_point() then
          a[i] = a[i]:detach():double():requires_grad_(true)
          inputs[#inputs + 1] = a[i]
          where[#inputs] = i
        end
      end
      local function fn(...)
        local xs = table.pack(...)
        local b = {}
        for i = 1, nargs do b[i] = a[i] end
        for k, i in ipairs(where) do b[i] = xs[k] end
        local outs = call(b)
        local ts = {}
        for r = 1, outs.n do for _, t in ipairs(tensors_of(outs[r])) do ts[#ts + 1] = t end end
        return table.unpack(ts)
      end
      local ok, err = pcall(torch.autograd.gradcheck, fn, inputs)
      if not ok then fail("test_gradcheck", err) end
      if err == false then fail("test_gradcheck", "the derivative does not match finite differences") end
      result.test_gradcheck = "SUCCESS"
    else
      result.test_gradcheck = "SKIP"
    end
  end
  return result
end

-- the qualified names of every op defined at run time
function lib.list() return lib._list() end
