-- compile — torch.compile: capture a graph, fuse its pointwise ops, run generated C kernels.
--
--   local f = torch.compile(function(x, y, z) return x * torch.sigmoid(x) * y + z end)
--   local r = f(a, b, c)                  -- same result as the function, one pass over memory
--   local m = torch.compile(model)        -- a module: its forward, parameters read each call
--
-- The first call with a new kind of arguments traces the function on meta tensors
-- (compile/trace.lua) into a graph of op calls, with guards on what the trace depended on:
-- each tensor argument's shape, strides, dtype, device and requires_grad, the value of every
-- other argument, the tensors it read from outside (parameters, closed-over tensors: by
-- identity and geometry), grad mode and the default dtype. compile/fuse.lua turns runs of
-- pointwise ops into C kernels, compiled by the machine's C compiler into shared objects
-- cached on disk (keyed by the source, the compiler and its flags) and loaded with dlopen;
-- the other ops are called as they were. Later calls whose arguments pass the guards run the
-- compiled form; others trace again (up to cache_size_limit versions, then eager).
--
-- Where the function needs a tensor's values (item(), printing, a branch on data) the trace
-- stops: a graph break. This version then runs the function eagerly for those arguments
-- (fullgraph = true makes it an error), logging the break with its source line.
-- Under autograd (grad mode on, an input of a fused run requiring grad) the run is one
-- autograd Function: its forward is the kernel, its backward a second generated kernel
-- that recomputes the run's values and applies the ops' derivatives in reverse (gradients
-- of broadcast inputs summed down to their shapes), so loss:backward() works unchanged.
-- A run with an op that has no derivative rule here runs op by op under autograd.
local torch = require "torch"
local class = require "torch_class"
local trace = require "compile.trace"
local fuse = require "compile.fuse"

local M = {}
M.config = { cache_size_limit = 8, cc = os.getenv("CC") or "cc", grain = 32768 }

local function debug_on() local v = os.getenv("LUTORCH_COMPILE_DEBUG"); return v ~= nil and v ~= "" and v ~= "0" end
local function log(fmt, ...)
  if debug_on() then io.stderr:write("[torch.compile] ", fmt:format(...), "\n") end
end
M.log = log
M.debug_on = debug_on

local counters = { traces = 0, graph_breaks = 0, kernels_compiled = 0, kernels_loaded = 0, cache_hits = 0, recompiles = 0 }
M.counters = counters

-- ---- the disk cache of compiled kernels ----

local function cache_dir()
  if M.cache_dir_override then return M.cache_dir_override end
  local d = os.getenv("LUTORCH_COMPILE_CACHE")
  if d and d ~= "" then return d end
  local base = os.getenv("XDG_CACHE_HOME")
  if not base or base == "" then base = (os.getenv("HOME") or "/tmp") .. "/.cache" end
  return base .. "/lutorch/compile"
end

M.cache_dir = cache_dir

local function mkdir_p(d) os.execute("mkdir -p '" .. d:gsub("'", "'\\''") .. "' 2>/dev/null") end
M.mkdir_p = mkdir_p

-- FNV-1a, 64 bits, in two 32-bit halves (Lua integers wrap; enough to name cache files)
local function hash(s)
  local h1, h2 = 0x811c9dc5, 0x050c5d1f
  for i = 1, #s do
    local c = s:byte(i)
    h1 = ((h1 ~ c) * 0x01000193) & 0xffffffff
    h2 = ((h2 ~ c) * 0x01000193 + (h1 >> 7)) & 0xffffffff
  end
  return ("%08x%08x"):format(h1, h2)
end
M.hash = hash

-- -ffp-contract=off: no fused multiply-adds the eager ops would not do, so float64 results
-- match eager bit for bit where the operations are the same. With libmvec (glibc 2.35 on)
-- the transcendental functions vectorize; where a kernel does not build or load with it,
-- kernels are built without it from then on.
local BASE_FLAGS = "-O3 -march=native -fPIC -shared -fno-math-errno -fno-trapping-math -ffp-contract=off"
M.config.mvec = true
local function flags() return M.config.mvec and (BASE_FLAGS .. " -DLT_MVEC") or BASE_FLAGS end
local function libs() return M.config.mvec and "-lmvec -lm" or "-lm" end

local compiler_id
local function compiler()
  if compiler_id then return compiler_id end
  local p = io.popen(M.config.cc .. " --version 2>/dev/null")
  local v = p and p:read("l") or "unknown"
  if p then p:close() end
  compiler_id = v or "unknown"
  return compiler_id
end

local function read_all(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function write_all(path, s)
  local f, err = io.open(path, "wb")
  if not f then return nil, err end
  f:write(s)
  f:close()
  return true
end

local loaded = {}   -- key -> kernel (this process)

-- the kernel for C source src (symbol name), from memory, the disk cache, or the compiler;
-- nil + message when it cannot be had
local build

local function kernel(src, name)
  local k, err = build(src, name)
  if not k and M.config.mvec then
    log("the kernel did not build or load with libmvec (%s); building without it", err)
    M.config.mvec = false
    k, err = build(src, name)
  end
  return k, err
end

function build(src, name)
  local key = hash(src .. "\0" .. compiler() .. "\0" .. flags())
  if loaded[key] then return loaded[key] end
  local dir = cache_dir()
  local so, sum = dir .. "/" .. key .. ".so", dir .. "/" .. key .. ".sum"
  local bytes = read_all(so)
  if bytes and read_all(sum) == hash(bytes) then
    local k, err = torch._compiled_load(so, name)
    if k then
      counters.cache_hits = counters.cache_hits + 1
      loaded[key] = k
      return k
    end
    log("cache entry %s does not load (%s): rebuilding it", so, err)
  elseif bytes then
    log("cache entry %s is corrupt (its checksum does not match): rebuilding it", so)
  end
  mkdir_p(dir)
  local tmp = ("%s/%s.%d.%d"):format(dir, key, os.time(), math.random(1, 1e9))
  local ok, err = write_all(tmp .. ".c", src)
  if not ok then return nil, "cannot write " .. tmp .. ".c: " .. tostring(err) end
  local cmd = ("%s %s -o '%s.so' '%s.c' %s 2>'%s.err'"):format(M.config.cc, flags(), tmp, tmp, libs(), tmp)
  local t0 = torch.time()
  local rc = os.execute(cmd)
  local msg = read_all(tmp .. ".err") or ""
  os.remove(tmp .. ".c"); os.remove(tmp .. ".err")
  if not rc then
    os.remove(tmp .. ".so")
    return nil, "the C compiler failed: " .. cmd .. "\n" .. msg
  end
  counters.kernels_compiled = counters.kernels_compiled + 1
  log("compiled %s in %.2f s", key, torch.time() - t0)
  local b = read_all(tmp .. ".so")
  write_all(sum, hash(b))
  os.rename(tmp .. ".so", so)
  local k, lerr = torch._compiled_load(so, name)
  if not k then return nil, lerr end
  loaded[key] = k
  return k
end

-- ---- running a graph ----

local function resolve(tpl, vals)
  if tpl.ref then return vals[tpl.ref] end
  if tpl.tbl then
    local t = {}
    for k, x in pairs(tpl.tbl) do t[k] = resolve(x, vals) end
    return t
  end
  return tpl.const
end

local function bind_outputs(node, res, vals)
  local function bind(tpl, x)
    if tpl.ref then
      if not tpl.alias then vals[tpl.ref] = x end
    elseif tpl.tbl then
      for k, t in pairs(tpl.tbl) do bind(t, x[k]) end
    end
  end
  for i = 1, node.nres do bind(node.outs[i], res[i]) end
end

local function run_node(node, vals)
  local args = {}
  for i = 1, node.nargs do args[i] = resolve(node.args[i], vals) end
  local res = table.pack(node.fn(table.unpack(args, 1, node.nargs)))
  bind_outputs(node, res, vals)
end

-- the group's forward kernel on input tensors ins: its outputs, in g.outputs order
local function forward_kernel(step, ins)
  local g = step.group
  local ts, outs = {}, {}
  for i = 1, #g.inputs do ts[i] = ins[i] end
  for k = 1, #g.outputs do
    outs[k] = torch.empty(g.shape, { dtype = g.dtype, device = step.device })
    ts[#ts + 1] = outs[k]
  end
  if step.run then step.run(step.numel, ts, step.extents)   -- a CUDA kernel (compile/cuda.lua)
  else torch._compiled_run(step.kernel, step.numel, M.config.grain, ts, step.extents) end
  return outs
end

-- a gradient at the group's shape summed down to an input's (broadcast) shape
local function reduce_to(grad, shape)
  local n, m = #grad.shape, #shape
  if n == m then
    local same = true
    for d = 1, n do if grad.shape[d] ~= shape[d] then same = false end end
    if same then return grad end
  end
  local lead = {}
  for d = 1, n - m do lead[#lead + 1] = d end
  if #lead > 0 then grad = grad:sum(lead) end
  local keep = {}
  for d = 1, m do if shape[d] == 1 and grad.shape[d] ~= 1 then keep[#keep + 1] = d end end
  if #keep > 0 then grad = grad:sum(keep, { keepdim = true }) end
  return grad
end

-- the group as an autograd Function: the forward kernel, and a backward kernel made from
-- the ops' derivatives (one per set of inputs needing a gradient); false where an op of the
-- group has no derivative rule here
local function group_function(step, vm)
  if step.fn ~= nil then return step.fn end
  local g = step.group
  if not fuse.differentiable(g) then step.fn = false; return false end
  local backward_kernels = {}
  if step.device then
    -- a CUDA group (compile/cuda.lua): its backward kernel for every input is made now; where it
    -- cannot be had, the group's ops run under autograd
    local all = {}
    for k = 1, #g.inputs do all[k] = true end
    local bk, err = require("compile.cuda").backward(step, vm, all, M)
    if not bk then
      io.stderr:write("torch.compile: warning: a fused CUDA backward kernel could not be had; the ops run under autograd: ",
        err, "\n")
      step.fn = false
      return false
    end
    backward_kernels[("1"):rep(#g.inputs)] = bk
  end
  step.fn = torch.autograd.Function {
    name = "CompiledPointwise",
    forward = function(ctx, ...)
      local ins = { ... }
      ctx:save_for_backward(...)
      return table.unpack(forward_kernel(step, ins))
    end,
    backward = function(ctx, ...)
      local gouts = { ... }
      local ins = ctx.saved_tensors
      local need, key = {}, {}
      for k = 1, #g.inputs do
        need[k] = ctx.needs_input_grad[k] and true or false
        key[k] = need[k] and "1" or "0"
      end
      key = table.concat(key)
      local bk = backward_kernels[key]
      if not bk and step.device then
        local err
        bk, err = require("compile.cuda").backward(step, vm, need, M)
        if not bk then error("torch.compile: the CUDA backward kernel could not be had: " .. err, 0) end
        backward_kernels[key] = bk
      elseif not bk then
        local src, extents = fuse.backward_source(g, vm, "lt_kernel", need)
        local k, err = kernel(src, "lt_kernel")
        if debug_on() then log("backward kernel (%d ops):\n%s", #g.nodes, src) end
        if not k then error("torch.compile: the backward kernel did not compile: " .. err, 0) end
        bk = { kernel = k, extents = extents }
        backward_kernels[key] = bk
      end
      local ts = {}
      for i = 1, #g.inputs do ts[i] = ins[i] end
      for k = 1, #g.outputs do
        local go = gouts[k]
        if go == nil then go = torch.zeros(g.shape, { dtype = g.dtype, device = step.device }) end
        if go.dtype ~= g.dtype then go = go:to(g.dtype) end
        ts[#ts + 1] = go:is_contiguous() and go or go:contiguous()
      end
      local grads = {}
      for k = 1, #g.inputs do
        if need[k] then
          grads[k] = torch.empty(g.shape, { dtype = g.dtype, device = step.device })
          ts[#ts + 1] = grads[k]
        end
      end
      if bk.run then bk.run(step.numel, ts, bk.extents)
      else torch._compiled_run(bk.kernel, step.numel, M.config.grain, ts, bk.extents) end
      for k = 1, #g.inputs do
        if need[k] then grads[k] = reduce_to(grads[k], vm[g.inputs[k]].shape) end
      end
      return table.unpack(grads, 1, #g.inputs)
    end,
  }
  return step.fn
end

local function on_cpu(ts)
  for i = 1, #ts do if ts[i].device.type ~= "cpu" then return false end end
  return true
end

local function run_group(step, vals, vm)
  local g = step.group
  local ins = {}
  for i, v in ipairs(g.inputs) do ins[i] = vals[v] end
  -- a C kernel takes CPU tensors only: anything else runs the ops (a safety net; compile_graph
  -- sends groups on other devices elsewhere)
  if not step.run and not on_cpu(ins) then return false end
  local outs
  if torch.is_grad_enabled() then
    local any = false
    for i = 1, #ins do if ins[i].requires_grad then any = true break end end
    if any then
      local fn = group_function(step, vm)
      if not fn then return false end
      outs = { fn.apply(table.unpack(ins, 1, #ins)) }
    end
  end
  outs = outs or forward_kernel(step, ins)
  for k, v in ipairs(g.outputs) do vals[v] = outs[k] end
  return true
end

-- a pointwise group's compiled step appended to out (its nodes, where the kernel could not
-- be had)
local function compile_group(g, vm, out)
  if not fuse.ctype(g.dtype) then
    -- a float16 or bfloat16 run: the C generator has no kernel for it
    for _, pw in ipairs(g.nodes) do out[#out + 1] = { kind = "node", node = pw.node } end
    return
  end
  local src, _, extents = fuse.source(g, vm, "lt_kernel")
  local k, err = kernel(src, "lt_kernel")
  if debug_on() then log("kernel (%d ops):\n%s", #g.nodes, src) end
  if k then
    out[#out + 1] = { kind = "group", group = g, kernel = k, extents = extents, numel = fuse.numel(g.shape) }
  else
    io.stderr:write("torch.compile: warning: a fused kernel did not compile; its ops run eagerly: ", err, "\n")
    for _, pw in ipairs(g.nodes) do out[#out + 1] = { kind = "node", node = pw.node } end
  end
end

-- the compiled form of a graph: its steps, kernels loaded (a group whose kernel could not be
-- had runs its nodes)
local function compile_graph(graph)
  local steps = fuse.plan(graph)
  local vm = graph.value_meta
  local out = {}
  -- the device of each value: a group on the CPU gets a C kernel, on a CUDA device a CUDA
  -- kernel (compile/cuda.lua), and one whose devices differ or cannot be told its ops
  local cudagen = require "compile.cuda"
  local devs = cudagen.value_devices(graph)
  local function group_on(g, out_, split)
    local where = cudagen.common_device(devs, g.inputs)
    if where == "cpu" then compile_group(g, vm, out_)
    elseif where and where:match("^cuda:") then cudagen.compile_group(g, vm, out_, where, M)
    elseif split then
      -- ops on several devices: a group for each
      for _, part in ipairs(cudagen.split(g, devs)) do
        if part.device and #part.group.nodes > 1 then group_on(part.group, out_, false)
        else for _, pw in ipairs(part.group.nodes) do out_[#out_ + 1] = { kind = "node", node = pw.node } end end
      end
    else
      for _, pw in ipairs(g.nodes) do out_[#out_ + 1] = { kind = "node", node = pw.node } end
    end
  end
  for _, s in ipairs(steps) do
    local rows_cpu = s.kind == "rowgroup" and cudagen.common_device(devs,
      { s.norm.x, s.norm.w or s.norm.x, s.norm.b or s.norm.x, table.unpack(s.group.inputs) }) == "cpu"
      or s.kind == "softmaxgroup" and cudagen.common_device(devs, s.group.inputs) == "cpu"
    if s.kind == "group" then
      group_on(s.group, out, true)
    elseif (s.kind == "rowgroup" or s.kind == "softmaxgroup") and not rows_cpu then
      -- a row kernel is C: off the CPU, the op before or after runs as itself
      if s.kind == "rowgroup" then out[#out + 1] = { kind = "node", node = s.norm.node } end
      group_on(s.group, out, true)
      if s.kind == "softmaxgroup" then out[#out + 1] = { kind = "node", node = s.softmax.node } end
    elseif s.kind == "rowgroup" or s.kind == "softmaxgroup" then
      -- a row kernel: the op before or after the group (layer_norm, softmax) fused with it;
      -- outvals: the values of its output pointers, in order
      local g, src, order, extents = s.group
      local outvals = {}
      if s.kind == "rowgroup" then
        src, order, extents = fuse.row_source(s, vm, "lt_kernel")
        for _, v in ipairs(g.outputs) do outvals[#outvals + 1] = v end
        if s.keep_norm then outvals[#outvals + 1] = s.norm.out end
        s.before, s.D = s.norm.node, s.norm.D
      else
        src, order, extents = fuse.softmax_source(s, vm, "lt_kernel")
        for _, v in ipairs(g.outputs) do if v ~= s.softmax.x then outvals[#outvals + 1] = v end end
        outvals[#outvals + 1] = s.softmax.out
        s.after, s.D = s.softmax.node, s.softmax.D
      end
      local k, err = kernel(src, "lt_kernel")
      if debug_on() then log("row kernel (%s and %d ops):\n%s", (s.before or s.after).name, #g.nodes, src) end
      if k then
        s.kernel, s.order, s.extents, s.outvals = k, order, extents, outvals
        s.nin = #order - #outvals
        s.rows = fuse.numel(g.shape) // s.D
        out[#out + 1] = s
      else
        io.stderr:write("torch.compile: warning: a fused kernel did not compile; its ops run eagerly: ", err, "\n")
        if s.before then out[#out + 1] = { kind = "node", node = s.before } end
        compile_group(g, vm, out)
        if s.after then out[#out + 1] = { kind = "node", node = s.after } end
      end
    else
      out[#out + 1] = s
    end
  end
  return out
end

local run_steps

-- a row kernel (a layer_norm before the group, or a softmax after it); under autograd, that
-- op as itself and the group's own kernel (compiled on first need), whose backward exists
local function run_rows(s, vals, vm)
  local g = s.group
  local ts = {}
  for i = 1, s.nin do ts[i] = vals[s.order[i]] end
  if not on_cpu(ts) then
    -- a safety net: compile_graph gives row kernels CPU tensors only
    if s.before then run_node(s.before, vals) end
    for _, pw in ipairs(g.nodes) do run_node(pw.node, vals) end
    if s.after then run_node(s.after, vals) end
    return
  end
  if torch.is_grad_enabled() then
    for i = 1, s.nin do
      if ts[i].requires_grad then
        if s.before then run_node(s.before, vals) end
        if not s.plain then s.plain = {}; compile_group(g, vm, s.plain) end
        run_steps(s.plain, vals, vm)
        if s.after then run_node(s.after, vals) end
        return
      end
    end
  end
  local outs = {}
  for k = 1, #s.outvals do
    outs[k] = torch.empty(g.shape, { dtype = g.dtype })
    ts[#ts + 1] = outs[k]
  end
  torch._compiled_run(s.kernel, s.rows, math.max(1, M.config.grain // s.D), ts, s.extents)
  for k, v in ipairs(s.outvals) do vals[v] = outs[k] end
end

function run_steps(steps, vals, vm)
  for _, s in ipairs(steps) do
    if s.kind == "group" then
      if not run_group(s, vals, vm) then
        -- a group with an op that has no derivative rule, under autograd: its ops one by one
        for _, pw in ipairs(s.group.nodes) do run_node(pw.node, vals) end
      end
    elseif s.kind == "rowgroup" or s.kind == "softmaxgroup" then
      run_rows(s, vals, vm)
    else
      run_node(s.node, vals)
    end
  end
end

local function run_graph(entry, args)
  local graph = entry.graph
  local vals = {}
  for _, inp in ipairs(graph.inputs) do
    if inp.kind == "arg" then vals[inp.value] = args[inp.index]
    else vals[inp.value] = graph.lifted[inp.index].tensor end
  end
  run_steps(entry.steps, vals, graph.value_meta)
  local res = {}
  for i = 1, graph.noutputs do res[i] = resolve(graph.outputs[i], vals) end
  return table.unpack(res, 1, graph.noutputs)
end

-- ---- guards ----

local function same_list(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

local function tensor_guard(t, m)
  return t.dtype == m.dtype and t.device == m.device and t.requires_grad == m.requires_grad
     and same_list(t.shape, m.shape) and same_list(t:stride(), m.stride)
end

local function describe(t)
  return ("%s%s %s"):format(tostring(t.dtype):gsub("^torch%.", ""), tostring(t.shape):gsub("^torch%.Size", ""),
    t.requires_grad and "requires_grad" or "")
end

local function global_state()
  return { grad = torch.is_grad_enabled(), default_dtype = torch.get_default_dtype(),
           autocast = torch.is_autocast_enabled and torch.is_autocast_enabled() or false }
end

-- nil when the entry's guards pass for args, else the reason
local function check_guards(entry, args)
  if args.n ~= entry.nargs then return ("%d arguments, traced with %d"):format(args.n, entry.nargs) end
  for i = 1, args.n do
    local a, g = args[i], entry.arg_guards[i]
    if g.tensor then
      if not torch.is_tensor(a) then return ("argument %d is not a tensor"):format(i) end
      if not tensor_guard(a, g.tensor) then return ("argument %d is %s, traced as %s"):format(i, describe(a), g.desc) end
    elseif type(a) == "table" or type(a) == "userdata" then
      if not rawequal(a, g.value) then return ("argument %d is another %s"):format(i, type(a)) end
    elseif a ~= g.value then
      return ("argument %d is %s, traced as %s"):format(i, tostring(a), tostring(g.value))
    end
  end
  for _, l in ipairs(entry.graph.lifted or {}) do
    if not tensor_guard(l.tensor, l.meta) then return "a tensor read from outside changed shape, dtype or requires_grad" end
  end
  local gs = global_state()
  if gs.grad ~= entry.state.grad then return "grad mode changed" end
  if gs.default_dtype ~= entry.state.default_dtype then return "the default dtype changed" end
  if gs.autocast ~= entry.state.autocast then return "autocast state changed" end
  if entry.module_params then
    local ps = entry.module:parameters()
    if #ps ~= #entry.module_params then return "the module's parameters changed" end
    for i, p in ipairs(ps) do if not rawequal(p, entry.module_params[i]) then return "the module's parameters changed" end end
  end
  return nil
end

-- ---- the compiled callable ----

local Compiled = class("torch.compile.CompiledFunction")

local OPTS = { "mode", "fullgraph", "dynamic", "backend", "options", "disable" }
local MODES = { default = true, ["reduce-overhead"] = true, ["max-autotune"] = true, ["max-autotune-no-cudagraphs"] = true }
local BACKENDS = { inductor = true, eager = true, lutorch = true }

local instances = setmetatable({}, { __mode = "k" })   -- for reset()

function Compiled:__init(fn, opts, module)
  self.fn, self.opts, self.module = fn, opts, module
  self.entries = {}
  self.eager_for = {}     -- keys of argument kinds that fell back
  instances[self] = true
end

local function args_key(args)
  local parts = {}
  for i = 1, args.n do
    local a = args[i]
    if torch.is_tensor(a) then parts[i] = describe(a)
    else parts[i] = type(a) .. ":" .. tostring(a) end
  end
  return table.concat(parts, "|")
end

local function new_entry(self, args)
  counters.traces = counters.traces + 1
  local graph, msg, where = trace.trace(self.fn, args)
  if not graph then
    counters.graph_breaks = counters.graph_breaks + 1
    if self.opts.fullgraph then
      error(("torch.compile: graph break at %s: %s (fullgraph = true)"):format(where, msg), 0)
    end
    log("graph break at %s: %s; running eagerly for these arguments", where, msg)
    return nil
  end
  local entry = { graph = graph, nargs = args.n, arg_guards = {}, state = global_state() }
  for i = 1, args.n do
    local a = args[i]
    if torch.is_tensor(a) then entry.arg_guards[i] = { tensor = trace.meta_of(a), desc = describe(a) }
    else entry.arg_guards[i] = { value = a } end
  end
  if self.module then
    entry.module = self.module
    entry.module_params = self.module:parameters()
  end
  if self.opts.backend == "eager" then
    entry.steps = {}
    for _, node in ipairs(graph.nodes) do entry.steps[#entry.steps + 1] = { kind = "node", node = node } end
  else
    entry.steps = compile_graph(graph)
  end
  if debug_on() then
    log("captured %d ops, %d graph inputs (%d read from outside), %d steps after fusion", #graph.nodes,
      #graph.inputs, #graph.lifted, #entry.steps)
    for i, n in ipairs(graph.nodes) do log("  %3d %-20s %s", i, n.name, n.where) end
  end
  return entry
end

function Compiled:__call(...)
  if self.opts.disable then return self.fn(...) end
  local args = table.pack(...)
  local reasons = {}
  for _, e in ipairs(self.entries) do
    local why = check_guards(e, args)
    if not why then return run_graph(e, args) end
    reasons[#reasons + 1] = why
  end
  local key = args_key(args)
  if self.eager_for[key] then return self.fn(...) end
  if #self.entries >= M.config.cache_size_limit then
    log("cache_size_limit (%d) reached: running eagerly (%s)", M.config.cache_size_limit, reasons[#reasons] or "")
    return self.fn(...)
  end
  if #self.entries > 0 then
    counters.recompiles = counters.recompiles + 1
    log("recompiling: %s", table.concat(reasons, "; "))
  end
  local e = new_entry(self, args)
  if not e then
    self.eager_for[key] = true
    return self.fn(...)
  end
  self.entries[#self.entries + 1] = e
  return run_graph(e, args)
end

--- the graphs captured so far (for inspection): a list of {ops = {names}, kernels = n}
function Compiled:graphs()
  local out = {}
  for i, e in ipairs(self.entries) do
    local ops, k = {}, 0
    for j, n in ipairs(e.graph.nodes) do ops[j] = n.name end
    for _, s in ipairs(e.steps) do if s.kind ~= "node" then k = k + 1 end end
    out[i] = { ops = ops, kernels = k }
  end
  return out
end

--- torch.compile(fn_or_module, {mode=, fullgraph=false, dynamic=, backend="inductor", disable=false})
function M.compile(fn, opts)
  opts = class.check_options("torch.compile", opts, OPTS)
  if opts.mode ~= nil and not MODES[opts.mode] then
    error(("torch.compile: unknown mode '%s' (default, reduce-overhead, max-autotune)"):format(tostring(opts.mode)), 2)
  end
  if opts.backend ~= nil and not BACKENDS[opts.backend] then
    error(("torch.compile: unknown backend '%s' (inductor, eager)"):format(tostring(opts.backend)), 2)
  end
  if opts.dynamic then
    error("torch.compile: dynamic = true is not supported: shapes are specialized (each new shape recompiles)", 2)
  end
  if opts.fullgraph ~= nil and type(opts.fullgraph) ~= "boolean" then error("torch.compile: 'fullgraph' must be a boolean", 2) end
  local ok_nn, nn = pcall(require, "nn")
  if ok_nn and nn.Module and type(fn) == "table" and rawget(fn, "_modules") then
    local module = fn
    return Compiled(function(...) return module(...) end, opts, module)
  end
  if type(fn) ~= "function" then
    error("torch.compile: argument 'model' must be a function or an nn.Module, got " .. type(fn), 2)
  end
  return Compiled(fn, opts)
end

--- reset(): forget what every compiled function captured in this process (the disk cache stays)
function M.reset()
  loaded = {}
  for k in pairs(counters) do counters[k] = 0 end
  for c in pairs(instances) do c.entries, c.eager_for = {}, {} end
  if package.loaded["compile.cuda"] then package.loaded["compile.cuda"].reset() end
  M.config.mvec = true     -- tried again: a failure may have been the compiler's, not libmvec's
end

return M
