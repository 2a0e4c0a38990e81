-- compile/trace.lua — capturing a graph by running a function on meta tensors, and resuming
-- the capture after a graph break.
--
-- The function runs with every tensor argument replaced by a meta tensor of the same shape,
-- dtype and strides (no data, no work). While it runs, the op functions of torch, the
-- tensor methods and the tensor operators are wrapped: a call that involves a traced
-- tensor runs the original on meta tensors (which checks the arguments and gives the
-- results' shapes) and is recorded as a node — the original function and its arguments,
-- tensors among them replaced by graph values. A real tensor met as an argument (a
-- module's parameter, a tensor closed over) becomes a graph input of its own, held by
-- identity, so the graph sees its current values at each call. Lua code in between (nn
-- modules, F.*, loops over Lua numbers) is not recorded: it ran, and its effect is the ops
-- it called. Calls made inside a recorded call are not recorded again.
--
-- Anything that needs a tensor's values (item, tolist, printing, an op whose result is read
-- from the data) cannot run on a meta tensor: a graph break, reported with its Lua source
-- line. Without hooks (fullgraph) the trace stops there. With hooks the capture resumes, as
-- PyTorch's does: the nodes recorded so far are a segment, which the hooks compile (or find
-- in their cache, keyed by the segment's structure) and run on the real tensors; the break's
-- operation then runs on real tensors (item() returns the real number, so the Lua code
-- branches on it), and the capture goes on into a new segment whose inputs include the real
-- tensors computed so far. Each meta tensor of a value that has a real counterpart maps to
-- it (weakly: the real tensor lives as long as the Lua code holds the meta one).
--
-- Which values of a segment become real is the hooks' choice: the ones the Lua code can still
-- reach (the live set, found by a full garbage collection when the segment is first seen) and
-- those the break needs. A later use of a value that was not kept is detected when it is
-- recorded (its meta tensor has no real counterpart) and recovered by recomputing it from
-- the segment's real inputs (the hooks' recover), never read as garbage. A segment also ends
-- where the traced code changes grad mode (torch.no_grad inside the function), so that each
-- runs in the mode its ops were recorded in. A segment is described for the hooks' cache by
-- a key (its ops, their constant arguments, its inputs' metas, lifted tensors by identity)
-- and a form key (the same with numbers masked), so that a segment seen again with other
-- numbers (read by item(), a loop counter) can share one entry.
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
local depth = 0            -- >0 inside a recorded call (or a segment's run): inner calls are not recorded

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

-- a meta tensor of the geometry desc describes (meta_of's fields), made with the wrappers off:
-- it is the tracer's own work, not the traced function's
local function meta_from(desc)
  depth = depth + 1
  local ok, m = pcall(function()
    local m = torch.empty(extent(desc.shape, desc.stride), { dtype = desc.dtype, device = "meta" })
      :as_strided(desc.shape, desc.stride)
    if desc.requires_grad then m.requires_grad = true end
    return m
  end)
  depth = depth - 1
  if not ok then error(m, 0) end
  return m
end

-- a meta tensor standing for t, with t's geometry
local function meta_like(t) return meta_from(meta_of(t)) end

-- a new graph value for meta tensor m (its description meta), and the real tensor it stands
-- for where there is one
local function new_value(m, desc, real)
  local v = state.graph:new_value(desc)
  state.values[m] = v
  state.meta_by_value[v] = m
  if real then state.real[m] = real end
  return v
end

-- in a resumable trace: a value used by the open segment. One with a real counterpart (an
-- argument, a lifted tensor, a value made real by an earlier segment) is pinned as an input of
-- the segment; one made by an earlier segment and not kept is recovered.
local function note_use(m, v)
  if not state.hooks then return end
  local r = state.real[m]
  if not r and v < state.open_first then
    local rec = state.pending[m]
    if not rec then
      error("torch.compile: a tensor computed before a graph break has no real value and no way to recompute it", 0)
    end
    depth = depth + 1
    local ok, res = pcall(state.hooks.recover, rec, rec.local_of[v])
    depth = depth - 1
    if not ok then error(res, 0) end
    r = res
    state.real[m] = r
    state.pending[m] = nil
  end
  if r then state.pins[v] = r end
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
  v = new_value(m, meta_of(t), t)
  -- grad_of: t was read as that tensor's .grad; a replay reads the .grad it has then (zero_grad
  -- makes a new one each step)
  state.lifted[#state.lifted + 1] = { tensor = t, value = v, meta = meta_of(t), grad_of = state.grad_of[t] }
  state.lifted_value[v] = t
  state.graph.inputs[#state.graph.inputs + 1] = { kind = "lifted", value = v, index = #state.lifted }
  state.meta_for[t] = m
  return v, m
end

-- the argument list with tensors replaced: {template for replay, meta arguments to run}
local function convert(x, seen)
  if torch.is_tensor(x) then
    local v = state.values[x]
    local m = x
    if not v then
      m = state.meta_for[x]
      if m then v = state.values[m] else v, m = value_of(x) end
    end
    note_use(m, v)
    return { ref = v }, m
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
      if v then                                          -- an argument returned (in place ops)
        note_use(x, v)
        return { ref = v, alias = true }, x
      end
      local m = x
      if x.device.type ~= "meta" then m = meta_like(x) end
      v = new_value(m, meta_of(x))
      state.made[m] = true
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

-- ---- segments (a resumable trace) ----

-- a name for an object by identity, stable in this process (for the segment keys)
local ident_of = setmetatable({}, { __mode = "k" })
local ident_count = 0
local function ident(x)
  local id = ident_of[x]
  if not id then
    ident_count = ident_count + 1
    id = ident_count
    ident_of[x] = id
  end
  return id
end

-- a constant argument as key text: numbers, strings and booleans by value (integer and float
-- apart), tables by content, functions and other objects by identity; with mask, numbers
-- only by their kind (the key of the segment's form whatever its numbers)
local function const_key(x, depth_left, mask)
  local t = type(x)
  if t == "number" then
    if mask then return math.type(x) == "integer" and "ni" or "nf" end
    return (math.type(x) == "integer" and "i%d" or "f%.17g"):format(x)
  elseif t == "string" then return ("%q"):format(x)
  elseif t == "boolean" or t == "nil" then return tostring(x)
  elseif t == "table" and depth_left > 0 then
    local keys = {}
    for k in next, x do keys[#keys + 1] = k end
    table.sort(keys, function(a, b)
      local ta, tb = type(a), type(b)
      if ta ~= tb then return ta < tb end
      if ta == "number" or ta == "string" then return a < b end
      return ident(a) < ident(b)
    end)
    local parts = {}
    for i, k in ipairs(keys) do parts[i] = const_key(k, 0) .. "=" .. const_key(rawget(x, k), depth_left - 1, mask) end
    return "{" .. table.concat(parts, ",") .. "}"
  end
  return "#" .. ident(x)
end

local function tpl_key(tpl, mask)
  if tpl.ref then return (tpl.alias and "a" or "r") .. tpl.ref end
  if tpl.tbl then
    local keys = {}
    for k in pairs(tpl.tbl) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b)
      if type(a) ~= type(b) then return type(a) < type(b) end
      return a < b
    end)
    local parts = {}
    for i, k in ipairs(keys) do parts[i] = const_key(k, 0) .. ":" .. tpl_key(tpl.tbl[k], mask) end
    return "{" .. table.concat(parts, ",") .. "}"
  end
  return const_key(tpl.const, 4, mask)
end

local name_of = setmetatable({}, { __mode = "k" })    -- dtypes and devices as text, memoized
local function name(x)
  local s = name_of[x]
  if not s then s = tostring(x); name_of[x] = s end
  return s
end

M.name = name

local function meta_key(m)
  return name(m.dtype) .. "(" .. table.concat(m.shape, ",") .. ")[" .. table.concat(m.stride, ",") .. "]" ..
    name(m.device) .. (m.requires_grad and "g" or "")
end

-- ops whose results are random: a segment with one keeps all its values (it cannot be replayed)
local function random_op(name)
  return name:find("rand", 1, true) or name:find("normal", 1, true) or name:find("bernoulli", 1, true)
      or name:find("dropout", 1, true) or name:find("multinomial", 1, true) or name:find("uniform", 1, true)
      or name:find("exponential", 1, true) or name:find("poisson", 1, true) or name:find("cauchy", 1, true)
      or name:find("geometric", 1, true)
end
-- ops that change a tensor in place (a segment with one cannot be replayed either)
local function mutates(node)
  if node.name:sub(-1) == "_" or node.name == "index_put" then return true end
  for i = 1, node.nres do if node.outs[i].alias then return true end end
  return false
end
M.mutates, M.random_op = mutates, random_op

-- the open segment as a graph of its own, numbered from 1: its inputs (values it uses that
-- it did not make) first met first, each a positional input; its key (the nodes' op
-- functions, names and constant arguments, the inputs' metas, lifted tensors by identity);
-- each node's constant arguments as text (to see which change from call to call); and a
-- function giving its form's key (the same with numbers masked, and the metas of the values
-- it makes), made only when the key is not in the cache
local function canonical(forced, ending)
  local gvm = state.graph.value_meta
  local g = new_graph()
  local local_of, produced, input_reals, parts, consts = {}, {}, {}, {}, {}
  -- an input's description is its real tensor's (strides, device): the kernels read it
  local function input(v)
    local r = state.pins[v]
    if not r then
      local m = state.meta_by_value[v]
      r = m and state.real[m]
    end
    if not r then error("torch.compile: internal error: a segment input without a real tensor", 0) end
    local desc = meta_of(r)
    local l = g:new_value(desc)
    local_of[v] = l
    input_reals[#input_reals + 1] = r
    g.inputs[#g.inputs + 1] = { kind = "arg", value = l, index = #input_reals }
    local lt = state.lifted_value[v]
    parts[#parts + 1] = "in " .. meta_key(desc) .. (lt and (" lifted#" .. ident(lt)) or "")
  end
  local function map(tpl, out)
    if tpl.ref then
      local l = local_of[tpl.ref]
      if out and not tpl.alias then
        l = g:new_value(gvm[tpl.ref])
        local_of[tpl.ref] = l
        produced[#produced + 1] = { l = l, v = tpl.ref }
      elseif not l then
        input(tpl.ref)
        l = local_of[tpl.ref]
      end
      return { ref = l, alias = tpl.alias }
    elseif tpl.tbl then
      local t = {}
      for k, x in pairs(tpl.tbl) do t[k] = map(x, out) end
      return { tbl = t }
    end
    return tpl
  end
  local unsafe = false
  local nodes = g.nodes
  for _, node in ipairs(state.graph.nodes) do
    local n = { name = node.name, fn = node.fn, nargs = node.nargs, nres = node.nres, where = node.where,
                args = {}, outs = {} }
    local ap, op = {}, {}
    for i = 1, node.nargs do n.args[i] = map(node.args[i], false); ap[i] = tpl_key(n.args[i]) end
    for i = 1, node.nres do n.outs[i] = map(node.outs[i], true); op[i] = tpl_key(n.outs[i]) end
    nodes[#nodes + 1] = n
    if mutates(n) or random_op(n.name) then unsafe = true end
    local c = table.concat(ap, ",")
    consts[#nodes] = c
    parts[#parts + 1] = n.name .. " #" .. ident(n.fn) .. " (" .. c .. ") -> " .. table.concat(op, ",")
  end
  local keep = {}
  for _, v in ipairs(forced) do
    if not local_of[v] then input(v) end
    keep[#keep + 1] = local_of[v]
  end
  local ending_part = (ending and "end " or "break ") .. table.concat(keep, ",")
  parts[#parts + 1] = ending_part
  local function form_key()
    local fp = {}
    for _, inp in ipairs(g.inputs) do fp[#fp + 1] = "in " .. meta_key(g.value_meta[inp.value]) end
    for _, n in ipairs(nodes) do
      local gp, op = {}, {}
      for i = 1, n.nargs do gp[i] = tpl_key(n.args[i], true) end
      for i = 1, n.nres do op[i] = tpl_key(n.outs[i]) end
      fp[#fp + 1] = n.name .. " #" .. ident(n.fn) .. " (" .. table.concat(gp, ",") .. ") -> " .. table.concat(op, ",")
    end
    for _, p in ipairs(produced) do fp[#fp + 1] = "out " .. meta_key(g.value_meta[p.l]) end
    fp[#fp + 1] = ending_part
    return table.concat(fp, "\n")
  end
  return { graph = g, key = table.concat(parts, "\n"), form_key = form_key, consts = consts,
           input_reals = input_reals, produced = produced, forced = keep, unsafe = unsafe, local_of = local_of }
end

-- the values of tensors in x (nested plain tables too), a function applied to each
local function each_tensor(x, f, seen)
  if torch.is_tensor(x) then f(x)
  elseif type(x) == "table" and getmetatable(x) == nil then
    seen = seen or {}
    if seen[x] then return end
    seen[x] = true
    for _, y in pairs(x) do each_tensor(y, f, seen) end
  end
end

-- x with each tensor in it (in plain tables, nested) replaced by f(tensor)
local function map_tensors(x, f)
  if torch.is_tensor(x) then return f(x) end
  if type(x) == "table" and getmetatable(x) == nil then
    local t = {}
    for k, y in pairs(x) do t[k] = map_tensors(y, f) end
    return t
  end
  return x
end

-- close the open segment: run it (through the hooks) and bind its kept values' real tensors
-- to their meta tensors. forced: meta tensors that must become real (the break's arguments,
-- the function's results); what, where: the break, or nil at the end of the function.
local function close_segment(forced_metas, what, where)
  local forced, seenv = {}, {}
  for _, m in ipairs(forced_metas) do
    local v = state.values[m]
    if v and not state.real[m] and not seenv[v] then
      seenv[v] = true
      if v < state.open_first then note_use(m, v)       -- made before: recovered if not kept
      else forced[#forced + 1] = v end
    end
  end
  if #state.graph.nodes > 0 then
    depth = depth + 1                   -- the tracer's own work: tensor attributes read unwrapped
    local okc, seg = pcall(canonical, forced, what == nil)
    depth = depth - 1
    if not okc then error(seg, 0) end
    seg.what, seg.where, seg.grad = what, where, state.seg_grad
    -- the live values: those whose meta tensors the Lua code still holds after a full collection
    seg.live = function()
      collectgarbage("collect")
      local live = {}
      for _, p in ipairs(seg.produced) do if state.meta_by_value[p.v] then live[#live + 1] = p.l end end
      return live
    end
    -- run in the grad mode its ops were recorded in (a break inside torch.no_grad runs the
    -- ops recorded before it, outside, with grad on)
    depth = depth + 1
    local prev = torch.is_grad_enabled()
    torch.set_grad_enabled(state.seg_grad)
    local ok, reals, entry = pcall(state.hooks.run_segment, seg)
    torch.set_grad_enabled(prev)
    depth = depth - 1
    state.ran = true
    if seg.unsafe then state.impure = true end
    if not ok then
      -- the segment is not run again by a later break (the traced code may catch the error)
      state.run_failed = true
      state.graph.nodes, state.pins, state.open_first = {}, {}, state.graph.nvalues + 1
      error(reals, 0)
    end
    local rec = { entry = entry, graph = seg.graph, input_reals = seg.input_reals, reals = reals, local_of = seg.local_of,
                  where = where, versions = {} }
    depth = depth + 1
    for i, r in ipairs(seg.input_reals) do rec.versions[seg.graph.inputs[i].value] = r._version end
    for l, r in pairs(reals) do rec.versions[l] = r._version end
    depth = depth - 1
    for _, p in ipairs(seg.produced) do
      local m = state.meta_by_value[p.v]
      if m then
        if reals[p.l] then state.real[m] = reals[p.l] else state.pending[m] = rec end
      end
    end
  end
  state.graph.nodes = {}
  state.pins = {}
  state.open_first = state.graph.nvalues + 1
end

-- a break resumes the capture (hooks given, not fullgraph); otherwise it ends it
local function resumable() return state.hooks and not state.hooks.fullgraph end

-- the name a call of a torch.compiler.disable'd function breaks with (it may do anything: a
-- segment after it that fails cannot be rerun)
local DISABLED = "torch.compiler.disable"
M.DISABLED = DISABLED

-- a graph break in a resumable trace: close the segment, run fn on the real counterparts of
-- its arguments, hand tensors it returns to the Lua code as meta tensors standing for them
local function do_break(what, fn, ...)
  local where = state.where()
  local n, raw = select("#", ...), table.pack(...)
  state.breaks = state.breaks + 1
  if state.hooks.on_break then state.hooks.on_break(what, where) end
  local metas = {}
  for i = 1, n do each_tensor(raw[i], function(t) if state.values[t] then metas[#metas + 1] = t end end) end
  close_segment(metas, what, where)
  local function to_real(t)
    if state.values[t] then return state.real[t] end
    return t
  end
  local rargs = {}
  for i = 1, n do rargs[i] = map_tensors(raw[i], to_real) end
  -- an op run here that changes tensors or draws random numbers: the call cannot be rerun
  if what:sub(-1) == "_" or what == "index_put" or random_op(what) or what == DISABLED then state.impure = true end
  depth = depth + 1
  local res = table.pack(pcall(fn, table.unpack(rargs, 1, n)))
  depth = depth - 1
  state.ran = true
  if not res[1] then error(res[2], 0) end
  local function to_meta(x)
    for i = 1, n do if rawequal(x, rargs[i]) and torch.is_tensor(raw[i]) then return raw[i] end end
    if x.device.type == "meta" then return x end
    local m = meta_like(x)
    local v = new_value(m, meta_of(x), x)
    state.made[m] = true
    state.open_first = math.max(state.open_first, v + 1)
    return m
  end
  for i = 2, res.n do res[i] = map_tensors(res[i], to_meta) end
  return table.unpack(res, 2, res.n)
end

-- the random generators' states now (the CPU's, and the CUDA devices' where CUDA is loaded),
-- as a function that restores them
local function rng_state()
  local cpu = torch.get_rng_state()
  local cuda
  if torch.cuda.is_initialized() then
    local ok, st = pcall(torch.cuda.get_rng_state_all)
    if ok then cuda = st end
  end
  return function()
    torch.set_rng_state(cpu)
    if cuda then pcall(torch.cuda.set_rng_state_all, cuda) end
  end
end

-- record a call of fn (named name) with the given arguments
local function record(name, fn, ...)
  if state.hooks then
    -- a segment's ops run in one grad mode: where the traced code changes it (torch.no_grad
    -- inside the function), the segment before the change is closed and run in its own
    local gm = torch.is_grad_enabled()
    if #state.graph.nodes == 0 then state.seg_grad = gm
    elseif gm ~= state.seg_grad then
      state.split = true
      close_segment({}, "grad mode change", state.where())
      state.seg_grad = gm
    end
  end
  local n = select("#", ...)
  local raw = table.pack(...)
  local tpl, margs = {}, {}
  for i = 1, n do tpl[i], margs[i] = convert(raw[i]) end
  -- a random op runs again when the graph runs: what it draws while recorded (a factory such
  -- as torch.randn makes a real tensor) is given back to the generators, so that a compiled
  -- call draws what eager's does
  local rng = random_op(name) and rng_state()
  depth = depth + 1
  local res = table.pack(pcall(fn, table.unpack(margs, 1, n)))
  depth = depth - 1
  if rng then rng() end
  if not res[1] then
    -- an op that cannot run on meta tensors (its result is read from the data, as equal's, or
    -- its shape depends on it, as nonzero's; it has no meta kernel; it reads a value inside):
    -- a graph break, the op run on the real tensors (where the arguments are wrong, that
    -- raises eager's error)
    if resumable() then return do_break(name, fn, ...) end
    error(res[2], 0)
  end
  table.remove(res, 1)
  res.n = res.n - 1
  local node = { name = name, fn = fn, args = tpl, nargs = n, nres = res.n }
  node.outs = register_outputs(res, res.n)
  if not state.no_where then node.where = state.where() end
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
local wrappers = {}     -- name -> {original, its wrapper}: made once per function, not per trace

local function install()
  saved = { torch = {}, mt = {} }
  -- the modules the function calls (their train/eval flags are guards)
  local base = package.loaded["nn.module"]
  if base then
    saved.observer = { base, base.call_observer }
    base.call_observer = function(m) if state and not state.modules_seen[m] then
      state.modules_seen[m] = true
      state.modules[#state.modules + 1] = m
    end end
  end
  local names = ops()
  for k, v in pairs(torch) do
    if type(v) == "function" and names[k] then
      saved.torch[k] = v
      local w = wrappers[k]
      if not w or w[1] ~= v then w = { v, wrap(k, v) }; wrappers[k] = w end
      torch[k] = w[2]
    end
  end
  for _, k in ipairs(OPERATORS) do
    local f = TMETA[k]
    if f then
      saved.mt[k] = f
      if k == "__unm" then
        -- Lua passes the operand twice to __unm: recorded as neg(x), one argument, so the
        -- scheduler sees the pointwise neg it is
        local w = wrap(OP_NAME[k], f)
        TMETA[k] = function(a) return w(a) end
      else
        TMETA[k] = wrap(OP_NAME[k], f)
      end
    end
  end
  local index, newindex = TMETA.__index, TMETA.__newindex
  saved.mt.__index, saved.mt.__newindex = index, newindex
  local cache = {}
  TMETA.__index = function(t, k)
    if not state or depth > 0 then return index(t, k) end
    if type(k) ~= "string" then return record("index", index, t, k) end   -- x[i]
    local v = index(t, k)
    -- a real tensor's grad (an optimizer reading p.grad): each call reads the current one
    if k == "grad" and v ~= nil and state.values[t] == nil then state.grad_of[v] = t end
    if type(v) ~= "function" or NOT_RECORDED[k] then return v end
    if BREAKS[k] then
      return function(self, ...)
        if state and depth == 0 and resumable() then
          return do_break(k, function(r, ...) return index(r, k)(r, ...) end, self, ...)
        end
        error(("graph break: %s() needs a tensor's values"):format(k), 2)
      end
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
  -- printing a tensor reads its values: a graph break (a meta tensor would print no values)
  local tostr = TMETA.__tostring
  if tostr then
    saved.mt.__tostring = tostr
    TMETA.__tostring = function(t)
      if state and depth == 0 then
        if resumable() then return (do_break("print", tostr, t)) end
        error("graph break: printing a tensor needs its values", 2)
      end
      return tostr(t)
    end
  end
end

local function uninstall()
  if saved.observer then saved.observer[1].call_observer = saved.observer[2] end
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

-- Tensors that escape: values the traced function made and left where Lua code can reach
-- them other than as its results (an optimizer's state created on its first step, a module's
-- self.output, a cache table), results stored away included. A replayed graph would not
-- update them (the Lua code does not run), so a call that leaves any runs as one segment
-- instead: its values are made real and the meta tensors handed their real tensors
-- (hand_over). Found by a full collection with the results set aside as value numbers; a
-- result whose meta tensor was collected gets a fresh one (a meta tensor holds no data).
local ASIDE = {}

local function find_escapes(r)
  local function aside(t)
    local v = state.values[t]
    if v and state.made[t] then return setmetatable({ v = v }, ASIDE) end
    return t
  end
  for i = 2, r.n do r[i] = map_tensors(r[i], aside) end
  depth = depth + 1
  collectgarbage("collect")
  depth = depth - 1
  -- (meta_by_value has weak values: a dead tensor leaves it in this collection, where weak
  -- keys keep a tensor with a finalizer until the next one)
  local n = 0
  for _, m in pairs(state.meta_by_value) do
    if state.made[m] then n = n + 1 end
  end
  local function back(x)
    if getmetatable(x) == ASIDE then
      local m = state.meta_by_value[x.v]
      if not m then
        m = meta_from(state.graph.value_meta[x.v])
        state.values[m], state.meta_by_value[x.v], state.made[m] = x.v, m, true
      end
      return m
    elseif type(x) == "table" and getmetatable(x) == nil then
      local t = {}
      for k, y in pairs(x) do t[k] = back(y) end
      return t
    end
    return x
  end
  for i = 2, r.n do r[i] = back(r[i]) end
  return n
end

-- at the end of a segmented call: each meta tensor the trace made that is still alive and has a
-- real value becomes another name of that real tensor (torch._share_tensor): the Lua value the
-- traced code holds, in a table or as a result, is then the real tensor, autograd history
-- included. (A tensor the traced code freed, with :free() or <close>, is left as it is.)
local function hand_over()
  depth = depth + 1
  for m in pairs(state.made) do
    local r = state.real[m]
    if r and not rawequal(r, m) and pcall(function()
      if m.device.type == "meta" then torch._share_tensor(m, r) end
    end) then
      state.real[m] = m
    end
  end
  depth = depth - 1
end

--- is a capture running the traced code now (torch.compiler.is_compiling)?
function M.tracing() return state ~= nil and depth == 0 end

--- fn(...) called from traced code runs on the real tensors, outside the graph: a graph break
-- (an error under fullgraph); outside a capture, a plain call (torch.compiler.disable)
function M.call_outside(fn, ...)
  if not state or depth > 0 then return fn(...) end
  if resumable() then return do_break(DISABLED, fn, ...) end
  error("a torch.compiler.disable'd function is called", 0)
end

--- trace(fn, args[, hooks]): the graph of fn(args...).
-- Without hooks: the graph, or nil, the graph break's (or error's) message and place.
-- With hooks {run_segment = f(seg) -> reals, entry; recover = f(rec, local) -> tensor;
-- on_break = f(what, where); always = bool; no_where = bool (nodes without source lines)}: a break resumes the capture (see the header);
-- then, or always when hooks.always, the result is {results = packed real results}, the
-- function's results computed by the segments. On an error: nil, message, place, and a
-- table {ran = a segment ran, impure = a segment that ran changed tensors in place or drew
-- random numbers, run_failed = the error came from running a segment}.
function M.trace(fn, args, hooks)
  if state then error("torch.compile: tracing while tracing (a compiled function called inside another's trace)", 0) end
  local graph = new_graph()
  state = { graph = graph, values = setmetatable({}, { __mode = "k" }), meta_for = setmetatable({}, { __mode = "k" }),
            lifted = {}, lifted_value = {}, where = where, hooks = hooks,
            real = setmetatable({}, { __mode = "k" }), meta_by_value = setmetatable({}, { __mode = "v" }),
            pending = setmetatable({}, { __mode = "k" }), pins = {}, open_first = 1, breaks = 0,
            made = setmetatable({}, { __mode = "k" }), grad_of = setmetatable({}, { __mode = "k" }),
            modules = {}, modules_seen = {},
            no_where = hooks and hooks.no_where }
  local margs = { n = args.n }
  local ok, res = pcall(function()
    for i = 1, args.n do
      local a = args[i]
      if torch.is_tensor(a) then
        local m = meta_like(a)
        local v = new_value(m, meta_of(a), a)
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
    -- a whole graph whose tensors escape cannot be replayed: run it as a segment
    -- so does one that assigned its upvalues (a counter, an accumulator): the Lua code must run
    local escapes, wrote = 0, false
    if r[1] and hooks and not (state.breaks > 0 or state.split or hooks.always) then
      wrote = hooks.wrote_upvalues ~= nil and hooks.wrote_upvalues()
      escapes = find_escapes(r)
      if escapes > 0 and hooks.on_escape then hooks.on_escape(escapes) end
    end
    -- resumed: the last segment, up to the function's results
    if r[1] and hooks and (state.breaks > 0 or state.split or hooks.always or escapes > 0 or wrote) then
      local r2 = table.pack(xpcall(function()
        local metas = {}
        for i = 2, r.n do
          each_tensor(r[i], function(t)
            if t.device.type == "meta" and not state.values[t] then
              error("the function returns a tensor that it did not compute from its inputs", 0)
            end
            if state.values[t] then metas[#metas + 1] = t end
          end)
        end
        close_segment(metas, nil, nil)
        hand_over()
        local function to_real(x)
          if torch.is_tensor(x) then return state.values[x] and state.real[x] or x end
          if type(x) == "table" and getmetatable(x) == nil then
            local t = {}
            for k, y in pairs(x) do t[k] = to_real(y) end
            return t
          end
          return x
        end
        local out = { n = r.n - 1 }
        for i = 2, r.n do out[i - 1] = to_real(r[i]) end
        return out
      end, function(e) return { msg = tostring(e), where = where() } end))
      r = r2[1] and { true, resumed = r2[2] } or r2
    end
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
    return nil, e.msg, e.where, { ran = st.ran, impure = st.impure, run_failed = st.run_failed }
  end
  if res.resumed then return { results = res.resumed } end
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
  graph.modules = st.modules
  return graph
end

return M
