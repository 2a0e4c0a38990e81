-- compile/trace.lua — capturing a graph by running a function on meta tensors.
--
-- The function runs once with every tensor argument replaced by a meta tensor of the same
-- shape, dtype and strides (no data, no work). While it runs, the op functions of torch,
-- the tensor methods and the tensor operators are wrapped: a call that involves a traced
-- tensor runs the original on meta tensors (which checks the arguments and gives the
-- results' shapes) and is recorded as a node — the original function and its arguments,
-- tensors among them replaced by graph values. A real tensor met as an argument (a
-- module's parameter, a tensor closed over) becomes a graph input of its own, held by
-- identity, so the graph sees its current values at each call. Lua code in between (nn
-- modules, F.*, loops over Lua numbers) is not recorded: it ran, and its effect is the ops
-- it called. Calls made inside a recorded call are not recorded again.
--
-- Anything that needs a tensor's values (item, tolist, printing, a branch on data) fails on
-- a meta tensor: that is a graph break, reported with its Lua source line.
local torch = require "torch"

local M = {}

local TMETA = getmetatable(torch.empty(0))

-- ---- the graph under construction ----

local Graph = {}
Graph.__index = Graph

local function new_graph()
  return setmetatable({ nodes = {}, inputs = {}, nvalues = 0, value_meta = {} }, Graph)
end

function Graph:new_value(meta)
  self.nvalues = self.nvalues + 1
  self.value_meta[self.nvalues] = meta
  return self.nvalues
end

local function meta_of(t)
  return { shape = t.shape, dtype = t.dtype, stride = t:stride(), requires_grad = t.requires_grad, device = t.device }
end
M.meta_of = meta_of

-- ---- the state of a trace ----

local state = nil          -- the trace running, or nil
local depth = 0            -- >0 inside a recorded call: inner calls are not recorded

-- the elements a tensor of these sizes and strides reaches past its offset
local function extent(shape, stride)
  local e = 1
  for i = 1, #shape do
    if shape[i] == 0 then return 0 end
    e = e + (shape[i] - 1) * stride[i]
  end
  return e
end
M.extent = extent

-- a meta tensor standing for t, with t's geometry (made with the wrappers off: it is the
-- tracer's own work, not the traced function's)
local function meta_like(t)
  local shape, stride = t.shape, t:stride()
  depth = depth + 1
  local ok, m = pcall(function()
    local m = torch.empty(extent(shape, stride), { dtype = t.dtype, device = "meta" }):as_strided(shape, stride)
    if t.requires_grad then m.requires_grad = true end
    return m
  end)
  depth = depth - 1
  if not ok then error(m, 0) end
  return m
end

-- value of a traced (meta) tensor, or of a real tensor lifted as an input
local function value_of(t)
  local v = state.values[t]
  if v then return v end
  if t.device.type == "meta" then
    error("torch.compile: a meta tensor that the traced function did not get from its arguments", 0)
  end
  -- a real tensor: a graph input held by identity
  local m = meta_like(t)
  v = state.graph:new_value(meta_of(t))
  state.values[m] = v
  state.lifted[#state.lifted + 1] = { tensor = t, value = v, meta = meta_of(t) }
  state.graph.inputs[#state.graph.inputs + 1] = { kind = "lifted", value = v, index = #state.lifted }
  state.meta_for[t] = m
  return v, m
end

-- the argument list with tensors replaced: {template for replay, meta arguments to run}
local function convert(x, seen)
  if torch.is_tensor(x) then
    local v = state.values[x]
    if v then return { ref = v }, x end
    local m = state.meta_for[x]
    if m then return { ref = state.values[m] }, m end
    local vv, mm = value_of(x)
    return { ref = vv }, mm
  elseif type(x) == "table" and getmetatable(x) == nil then
    seen = seen or {}
    if seen[x] then error("torch.compile: a table argument refers to itself", 0) end
    seen[x] = true
    local tpl, args, has = {}, {}, false
    for k, v in pairs(x) do
      local a, b = convert(v, seen)
      tpl[k], args[k] = a, b
      if type(a) == "table" and (a.ref or a.tbl) then has = true end
    end
    seen[x] = nil
    if has then return { tbl = tpl }, args end
    return { const = x }, x
  else
    return { const = x }, x
  end
end

-- the outputs of a recorded call: each tensor becomes a value; a real tensor (a factory
-- function's result) is handed to the traced code as a meta tensor standing for it
local function register_outputs(res, n)
  local outs = {}
  local function reg(x)
    if torch.is_tensor(x) then
      local v = state.values[x]
      if v then return { ref = v, alias = true }, x end   -- an argument returned (in place ops)
      v = state.graph:new_value(meta_of(x))
      local m = x
      if x.device.type ~= "meta" then m = meta_like(x) end
      state.values[m] = v
      return { ref = v }, m
    elseif type(x) == "table" and getmetatable(x) == nil then
      local t, r = {}, {}
      for k, y in pairs(x) do t[k], r[k] = reg(y) end
      return { tbl = t }, r
    end
    return { const = x }, x
  end
  for i = 1, n do outs[i], res[i] = reg(res[i]) end
  return outs
end

-- record a call of fn (named name) with the given arguments
local function record(name, fn, ...)
  local n = select("#", ...)
  local raw = table.pack(...)
  local tpl, margs = {}, {}
  for i = 1, n do tpl[i], margs[i] = convert(raw[i]) end
  depth = depth + 1
  local res = table.pack(pcall(fn, table.unpack(margs, 1, n)))
  depth = depth - 1
  if not res[1] then error(res[2], 0) end
  table.remove(res, 1)
  res.n = res.n - 1
  local node = { name = name, fn = fn, args = tpl, nargs = n, nres = res.n }
  node.outs = register_outputs(res, res.n)
  node.where = state.where()
  state.graph.nodes[#state.graph.nodes + 1] = node
  return table.unpack(res, 1, res.n)
end

-- fn wrapped: recorded when called by the traced code (not from inside a recorded call)
local function wrap(name, fn)
  return function(...)
    if state and depth == 0 then return record(name, fn, ...) end
    return fn(...)
  end
end

-- ---- installing and removing the wrappers ----

local OPERATORS = { "__add", "__sub", "__mul", "__div", "__mod", "__pow", "__unm", "__idiv" }
local OP_NAME = { __add = "add", __sub = "sub", __mul = "mul", __div = "div", __mod = "remainder",
                  __pow = "pow", __unm = "neg", __idiv = "floor_divide" }

-- which keys of torch are ops (wrapped); the rest (dtypes, submodules, helpers) are left alone
local op_names
local function ops()
  if op_names then return op_names end
  op_names = {}
  for _, o in ipairs(torch._ops()) do op_names[o.name] = true end
  -- functions that make tensors from others without being declared ops
  for _, k in ipairs({ "cat", "stack", "where", "einsum", "chunk", "split", "broadcast_tensors" }) do op_names[k] = true end
  return op_names
end

-- values of a tensor's __index that are not ops: attributes read freely while tracing
local NOT_RECORDED = { shape = true, dtype = true, device = true, requires_grad = true, size = true, dim = true,
  stride = true, numel = true, is_contiguous = true, element_size = true, is_floating_point = true,
  grad_fn = true, is_leaf = true, ndim = true, nelement = true, type = true }
-- methods that read values: a graph break
local BREAKS = { item = true, tolist = true, totable = true, numpy = true, storage = true, data_ptr = true }

local saved

local function install()
  saved = { torch = {}, mt = {} }
  local names = ops()
  for k, v in pairs(torch) do
    if type(v) == "function" and names[k] then
      saved.torch[k] = v
      torch[k] = wrap(k, v)
    end
  end
  for _, k in ipairs(OPERATORS) do
    local f = TMETA[k]
    if f then saved.mt[k] = f; TMETA[k] = wrap(OP_NAME[k], f) end
  end
  local index, newindex = TMETA.__index, TMETA.__newindex
  saved.mt.__index, saved.mt.__newindex = index, newindex
  local cache = {}
  TMETA.__index = function(t, k)
    if not state or depth > 0 then return index(t, k) end
    if type(k) ~= "string" then return record("index", index, t, k) end   -- x[i]
    local v = index(t, k)
    if type(v) ~= "function" or NOT_RECORDED[k] then return v end
    if BREAKS[k] then
      return function() error(("graph break: %s() needs a tensor's values"):format(k), 2) end
    end
    local w = cache[k]
    if not w then
      w = function(self, ...)
        local f = index(self, k)
        if state and depth == 0 then return record(k, f, self, ...) end
        return f(self, ...)
      end
      cache[k] = w
    end
    return w
  end
  if newindex then
    TMETA.__newindex = function(t, k, v)
      if state and depth == 0 and type(k) ~= "string" then return record("index_put", newindex, t, k, v) end
      return newindex(t, k, v)
    end
  end
end

local function uninstall()
  for k, v in pairs(saved.torch) do torch[k] = v end
  for k, v in pairs(saved.mt) do TMETA[k] = v end
  saved = nil
end

-- ---- tracing a call ----

-- where the traced code is: the first Lua frame outside this library and the wrappers
local function where()
  for level = 3, 40 do
    local info = debug.getinfo(level, "Sl")
    if not info then break end
    if info.what ~= "C" and not info.source:find("lib/compile/", 1, true) and info.currentline > 0 then
      return info.short_src .. ":" .. info.currentline
    end
  end
  return "?"
end

--- trace(fn, args): the graph of fn(args...) or nil, the graph break's message and place
function M.trace(fn, args)
  if state then error("torch.compile: tracing while tracing (a compiled function called inside another's trace)", 0) end
  local graph = new_graph()
  state = { graph = graph, values = setmetatable({}, { __mode = "k" }), meta_for = setmetatable({}, { __mode = "k" }),
            lifted = {}, where = where }
  local margs = { n = args.n }
  local ok, res = pcall(function()
    for i = 1, args.n do
      local a = args[i]
      if torch.is_tensor(a) then
        local m = meta_like(a)
        local v = graph:new_value(meta_of(a))
        state.values[m] = v
        graph.inputs[#graph.inputs + 1] = { kind = "arg", value = v, index = i }
        margs[i] = m
      else
        margs[i] = a
      end
    end
    install()
    local r = table.pack(xpcall(fn, function(e)
      return { msg = tostring(e), where = where() }
    end, table.unpack(margs, 1, margs.n)))
    uninstall()
    return r
  end)
  local st = state
  state = nil
  depth = 0
  if saved then uninstall() end
  if not ok then error(res, 0) end
  if not res[1] then
    local e = res[2]
    return nil, e.msg, e.where
  end
  -- the results: tensors become values
  local outs = {}
  local function reg(x)
    if torch.is_tensor(x) then
      local v = st.values[x]
      if not v then return nil end
      return { ref = v }
    elseif type(x) == "table" and getmetatable(x) == nil then
      local t = {}
      for k, y in pairs(x) do
        local r = reg(y)
        if r == nil then return nil end
        t[k] = r
      end
      return { tbl = t }
    end
    return { const = x }
  end
  for i = 2, res.n do
    local r = reg(res[i])
    if r == nil then return nil, "the function returns a tensor that it did not compute from its inputs", "?" end
    outs[i - 1] = r
  end
  graph.outputs, graph.noutputs = outs, res.n - 1
  graph.lifted = st.lifted
  return graph
end

return M
