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
-- identity and geometry), grad mode and the default dtype. compile/functional.lua rewrites
-- its in-place pointwise ops as functional ones where that is exact, so that they fuse
-- (inputs changed in place get their new values at the end). compile/fuse.lua turns runs of
-- pointwise ops into C kernels, compiled by the machine's C compiler into shared objects
-- cached on disk (keyed by the source, the compiler and its flags) and loaded with dlopen;
-- the other ops are called as they were. Later calls whose arguments pass the guards run the
-- compiled form; others trace again (up to cache_size_limit versions, then eager). With
-- dynamic shapes (the `dynamic` option; by default after a call whose sizes alone changed)
-- the kernels take their sizes as parameters, so a new size costs a trace but no C compile,
-- and the entries of each kind of arguments are kept per sizes in a bounded LRU table (see
-- "dynamic shapes" below).
--
-- Where the function needs a tensor's values (item(), printing, an op whose result is read
-- from the data) the trace breaks (fullgraph = true makes that an error naming the line);
-- otherwise the capture resumes as PyTorch's does (compile/trace.lua): the graph before the
-- break is a segment, compiled and run on the real tensors, the break's operation runs on
-- them, and the capture continues into a new segment. Arguments of a kind whose call broke
-- run in this segmented mode from then on: the Lua function runs again on meta tensors at
-- each call (its branches depend on values), and each segment is found in a per-function
-- cache keyed by its structure (compiled on a miss, up to segment_limit). A segment keeps
-- (makes real) the values the Lua code can still reach at its break: the live set, found
-- once by a full garbage collection when the segment is first compiled; a later use of a
-- value it did not keep is recovered by recomputing that value from the segment's inputs,
-- and the segment keeps it from then on.
-- Under autograd (grad mode on, an input of a fused run requiring grad) the run is one
-- autograd Function: its forward is the kernel, its backward a second generated kernel
-- that recomputes the run's values and applies the ops' derivatives in reverse (gradients
-- of broadcast inputs summed down to their shapes), so loss:backward() works unchanged.
-- The row kernels (layer_norm -> run, run -> softmax) are autograd Functions the same way,
-- their backward generated row code too, and so is a run fused into a sum or mean. A run
-- with an op that has no derivative rule here runs op by op.
local torch = require "torch"
local class = require "torch_class"
local trace = require "compile.trace"
local fuse = require "compile.fuse"
local functional = require "compile.functional"

local M = {}
M.config = { cache_size_limit = 8, segment_limit = 64, cc = os.getenv("CC") or "cc", grain = 32768,
             dynamic_cache_limit = 64 }

local function debug_on() local v = os.getenv("LUTORCH_COMPILE_DEBUG"); return v ~= nil and v ~= "" and v ~= "0" end
local function log(fmt, ...)
  if debug_on() then io.stderr:write("[torch.compile] ", fmt:format(...), "\n") end
end
M.log = log
M.debug_on = debug_on

local counters = { traces = 0, graph_breaks = 0, kernels_compiled = 0, kernels_loaded = 0, cache_hits = 0, recompiles = 0,
                   segments = 0, segment_hits = 0, segment_recompiles = 0, liveness_misses = 0, segmented_calls = 0,
                   escapes = 0, dynamic_traces = 0, dynamic_hits = 0, dynamic_evictions = 0, kernels_reused = 0 }
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
-- kernels are built without it from then on. -mprefer-vector-width=512: on an AVX-512 CPU,
-- GCC's default of 256-bit vectors leaves half the width unused in kernels whose arithmetic
-- (exp, sigmoid, erf polynomials) costs as much as their memory traffic (the 4-op chain of
-- bench/compile.sh: 23.5 -> 18.2 ms on one Ice Lake core); where the CPU has no AVX-512 the
-- flag changes nothing.
local BASE_FLAGS = "-O3 -march=native -mprefer-vector-width=512 -fPIC -shared -fno-math-errno -fno-trapping-math"
  .. " -ffp-contract=off"
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
M.read_all, M.write_all = read_all, write_all   -- for compile/cuda.lua's cache

local loaded = {}   -- key -> kernel (this process)
local by_source = {}   -- source -> kernel (this process): a dynamic graph's kernels, met again at each new size,
                       -- are found without hashing their source

-- the kernel for C source src (symbol name), from memory, the disk cache, or the compiler;
-- nil + message when it cannot be had
local build

local function kernel(src, name)
  local k = by_source[src]
  if k then counters.kernels_reused = counters.kernels_reused + 1; return k end
  local err
  k, err = build(src, name)
  if not k and M.config.mvec then
    log("the kernel did not build or load with libmvec (%s); building without it", err)
    M.config.mvec = false
    k, err = build(src, name)
  end
  if k then by_source[src] = k end
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

-- a dynamic kernel's size parameters (fuse.sizes) as the int64 tensor it takes last; nil
-- where it takes none
local function params_tensor(sz)
  if not sz or #sz.values == 0 then return nil end
  return torch.tensor(sz.values, { dtype = torch.int64 })
end

-- the group's forward kernel on input tensors ins: its outputs, in g.outputs order
-- the kernel's inputs: those it reads as contiguous copies (step.contig) made so
local function kernel_inputs(step, ins, ts)
  local g = step.group
  for i = 1, #g.inputs do
    local t = ins[i]
    if step.contig and step.contig[i] and not t:is_contiguous() then t = t:contiguous() end
    ts[i] = t
  end
  return ts
end

-- outs[k] copied into the layout relayout[k] (a recorded meta) where there is one
local function relayout(outs, lay)
  if not lay then return outs end
  for k, m in pairs(lay) do
    local t = outs[k]
    local e = torch.empty(fuse.extent(m), { dtype = t.dtype, device = t.device }):as_strided(m.shape, m.stride)
    e:copy_(t)
    outs[k] = e
  end
  return outs
end

local function forward_kernel(step, ins)
  local g = step.group
  local outs = {}
  local ts = kernel_inputs(step, ins, {})
  for k = 1, #g.outputs do
    -- an output stored straight into the input it is the new state of (compile/functional.lua)
    local into = g.store_into and g.store_into[k]
    outs[k] = into and ins[into] or torch.empty(g.shape, { dtype = g.dtype, device = step.device })
    ts[#ts + 1] = outs[k]
  end
  if step.params then ts[#ts + 1] = step.params end
  if step.run then step.run(step.numel, ts, step.extents)   -- a CUDA kernel (compile/cuda.lua)
  else torch._compiled_run(step.kernel, step.numel, M.config.grain, ts, step.extents) end
  return relayout(outs, step.relayout)
end

-- the step's grad_aliases (by group input), the outputs except `computed` (the softmax's
-- or the sum's input, whose gradient the kernel computes) having a gradient tensor
local function step_aliases(s, computed)
  if not s.aliases then
    local seeded = {}
    for _, v in ipairs(s.group.outputs) do if v ~= computed then seeded[v] = true end end
    s.aliases = fuse.grad_aliases(s.group, seeded)
  end
  return s.aliases
end

-- which of the first n inputs a backward kernel computes the gradient of (asked for, and not
-- an output's incoming gradient passed on), and the key naming that set
local function kernel_needs(ctx, n, aliases)
  local need, key = {}, {}
  for k = 1, n do
    need[k] = (ctx.needs_input_grad[k] and not aliases[k]) and true or false
    key[k] = need[k] and "1" or "0"
  end
  return need, table.concat(key)
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
      -- an input whose gradient is an output's incoming one (a residual): that tensor, not
      -- a copy written by the kernel
      local need, key = kernel_needs(ctx, #g.inputs, step_aliases(step))
      local bk = backward_kernels[key]
      if not bk and step.device then
        local err
        bk, err = require("compile.cuda").backward(step, vm, need, M)
        if not bk then error("torch.compile: the CUDA backward kernel could not be had: " .. err, 0) end
        backward_kernels[key] = bk
      elseif not bk then
        local sz = step.dyn and fuse.sizes(step.dyn)
        local src, extents = fuse.backward_source(g, vm, "lt_kernel", need, nil, sz)
        local k, err = kernel(src, "lt_kernel")
        if debug_on() then log("backward kernel (%d ops):\n%s", #g.nodes, src) end
        if not k then error("torch.compile: the backward kernel did not compile: " .. err, 0) end
        bk = { kernel = k, extents = extents, params = params_tensor(sz) }
        backward_kernels[key] = bk
      end
      local ts, gout_of = kernel_inputs(step, ins, {}), {}
      for k = 1, #g.outputs do
        local go = gouts[k]
        if go == nil then go = torch.zeros(g.shape, { dtype = g.dtype, device = step.device }) end
        if go.dtype ~= g.dtype then go = go:to(g.dtype) end
        ts[#ts + 1] = go:is_contiguous() and go or go:contiguous()
        gout_of[g.outputs[k]] = ts[#ts]
      end
      local grads = {}
      for k = 1, #g.inputs do
        if need[k] then
          grads[k] = torch.empty(g.shape, { dtype = g.dtype, device = step.device })
          ts[#ts + 1] = grads[k]
        end
      end
      if bk.params then ts[#ts + 1] = bk.params end
      if key:find("1") then
        if bk.run then bk.run(step.numel, ts, bk.extents)   -- a CUDA kernel (compile/cuda.lua)
        else torch._compiled_run(bk.kernel, step.numel, M.config.grain, ts, bk.extents) end
      end
      for k = 1, #g.inputs do
        if need[k] then grads[k] = reduce_to(grads[k], vm[g.inputs[k]].shape)
        elseif ctx.needs_input_grad[k] then grads[k] = reduce_to(gout_of[step.aliases[k]], vm[g.inputs[k]].shape) end
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
  vm = step.kvm or vm
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
local function compile_group(g, vm, out, dyn)
  if not fuse.ctype(g.dtype) then
    -- a float16 or bfloat16 run: the C generator has no kernel for it
    for _, pw in ipairs(g.nodes) do out[#out + 1] = { kind = "node", node = pw.node } end
    return
  end
  local sz = dyn and fuse.sizes(dyn)
  -- an input read across its layout (a transposed matrix: a stride other than 1 along the
  -- output's last dimension) is read from a contiguous copy: element by element its loads
  -- would each touch another cache line (tanh(a:t()) * y + 1 on 2048 x 2048: 235 ms, against
  -- 5 ms for the copy and 5 for the kernel). Specialized kernels only (a dynamic kernel's
  -- strides may be parameters).
  local contig, kvm = nil, vm
  if not dyn then
    for i, v in ipairs(g.inputs) do
      local m = vm[v]
      local n = #m.shape
      if n >= 1 and m.shape[n] > 1 and m.stride[n] ~= 1 and fuse.numel(m.shape) >= 4096 then
        contig = contig or {}
        contig[i] = true
        if kvm == vm then kvm = setmetatable({}, { __index = vm }) end
        local cm = {}
        for key, x in pairs(m) do cm[key] = x end
        cm.stride = fuse.contiguous_strides(m.shape)
        kvm[v] = cm
      end
    end
  end
  local src, _, extents = fuse.source(g, kvm, "lt_kernel", sz)
  local k, err = kernel(src, "lt_kernel")
  if debug_on() then log("kernel (%d ops):\n%s", #g.nodes, src) end
  if k then
    out[#out + 1] = { kind = "group", group = g, kernel = k, extents = extents, numel = fuse.numel(g.shape),
                      params = params_tensor(sz), dyn = dyn, contig = contig, kvm = kvm }
  else
    io.stderr:write("torch.compile: warning: a fused kernel did not compile; its ops run eagerly: ", err, "\n")
    for _, pw in ipairs(g.nodes) do out[#out + 1] = { kind = "node", node = pw.node } end
  end
end

-- the compiled form of a graph: its steps, kernels loaded (a group whose kernel could not be
-- had runs its nodes). dyn (a dynamic graph: fuse.sizes's predicate): the C kernels take the
-- sizes it marks as parameters; as_is: without the functionalization pass
local function compile_graph(graph, dyn, as_is)
  -- in-place ops made functional where they can be, so that they fuse (compile/functional.lua)
  local fsteps = not as_is and functional.compile(graph, function(g) return compile_graph(g, dyn, true) end, kernel)
  if fsteps then return fsteps end
  local steps = fuse.plan(graph)
  local vm = graph.value_meta
  local out = {}
  -- a kernel writes its outputs row-major, where eager's op may have laid its result out
  -- otherwise (the tanh of a transposed matrix is transposed) and the trace recorded that:
  -- such outputs are copied into eager's layout after the kernel (step.relayout), so that every
  -- later step — a view, another kernel reading the recorded strides — and the caller see the
  -- layout the graph was traced with (a later kernel read a row-major result through the
  -- recorded strides: wrong values)
  local function layouts(st, values)
    for k, v in ipairs(values) do
      local m = vm[v]
      if not fuse.row_major(m) then
        st.relayout = st.relayout or {}
        st.relayout[k] = m
      end
    end
  end
  local function laid_out(first)
    for i = first, #out do
      local st = out[i]
      if st.kind == "group" then layouts(st, st.group.outputs)
      elseif st.kind == "rowgroup" or st.kind == "softmaxgroup" then layouts(st, st.outvals)
      elseif st.kind == "reducegroup" then
        local vs = {}
        for _, v in ipairs(st.group.outputs) do if v ~= st.reduce.x then vs[#vs + 1] = v end end
        vs[#vs + 1] = st.reduce.out
        layouts(st, vs)
      end
    end
  end
  -- the device of each value: a group on the CPU gets a C kernel, on a CUDA device a CUDA
  -- kernel (compile/cuda.lua), and one whose devices differ or cannot be told its ops
  local cudagen = require "compile.cuda"
  local devs = cudagen.value_devices(graph)
  local function group_on(g, out_, split)
    local where = cudagen.common_device(devs, g.inputs)
    if where == "cpu" then compile_group(g, vm, out_, dyn)
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
    local first = #out + 1
    local where = s.kind == "rowgroup" and cudagen.common_device(devs,
      { s.norm.x, s.norm.w or s.norm.x, s.norm.b or s.norm.x, table.unpack(s.group.inputs) })
      or (s.kind == "softmaxgroup" or s.kind == "reducegroup") and cudagen.common_device(devs, s.group.inputs)
    -- (the C generator has no 16-bit kernels: those steps run as ops on the CPU)
    local rows_cpu = (s.kind == "rowgroup" or s.kind == "softmaxgroup") and where == "cpu" and fuse.ctype(s.group.dtype)
    local reduce_cpu = s.kind == "reducegroup" and where == "cpu" and fuse.ctype(s.group.dtype)
    -- a row or reduction step on one CUDA device: its CUDA kernel (compile/cuda.lua), the
    -- step's fields as the C kernel's below
    local cuda_rows = s.kind ~= "group" and s.kind ~= "node" and where and where:match("^cuda:")
      and cudagen.row_step(s, vm, where, M)
    if cuda_rows then
      s.nin, s.vm = #s.order - (s.kind == "reducegroup" and #s.group.outputs or 0), vm
      if s.kind == "rowgroup" then
        s.outvals = {}
        for _, v in ipairs(s.group.outputs) do s.outvals[#s.outvals + 1] = v end
        if s.keep_norm then s.outvals[#s.outvals + 1] = s.norm.out end
        s.before, s.D = s.norm.node, s.norm.D
      elseif s.kind == "softmaxgroup" then
        s.outvals = {}
        for _, v in ipairs(s.group.outputs) do if v ~= s.softmax.x then s.outvals[#s.outvals + 1] = v end end
        s.outvals[#s.outvals + 1] = s.softmax.out
        s.after, s.D = s.softmax.node, s.softmax.D
      end
      if s.outvals then s.nin = #s.order - #s.outvals end
      out[#out + 1] = s
    elseif s.kind == "group" then
      group_on(s.group, out, true)
    elseif s.kind == "reducegroup" and not reduce_cpu then
      -- a reduction kernel is C: off the CPU, the run is a kernel there and the sum or mean its op
      group_on(s.group, out, true)
      out[#out + 1] = { kind = "node", node = s.reduce.node }
    elseif s.kind == "reducegroup" then
      local sz = dyn and fuse.sizes(dyn)
      local src, order, extents, size, per = fuse.reduce_source(s, vm, "lt_kernel", sz)
      local k, err = kernel(src, "lt_kernel")
      if debug_on() then log("reduction kernel (%d ops and %s):\n%s", #s.group.nodes, s.reduce.op, src) end
      if k then
        s.kernel, s.order, s.extents, s.size, s.per = k, order, extents, size, per
        s.params, s.dyn = params_tensor(sz), dyn
        s.nin, s.vm = #s.group.inputs, vm
        out[#out + 1] = s
      else
        io.stderr:write("torch.compile: warning: a fused kernel did not compile; its ops run eagerly: ", err, "\n")
        compile_group(s.group, vm, out, dyn)
        out[#out + 1] = { kind = "node", node = s.reduce.node }
      end
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
      local sz = dyn and fuse.sizes(dyn)
      if s.kind == "rowgroup" then
        src, order, extents = fuse.row_source(s, vm, "lt_kernel", sz)
        for _, v in ipairs(g.outputs) do outvals[#outvals + 1] = v end
        if s.keep_norm then outvals[#outvals + 1] = s.norm.out end
        s.before, s.D = s.norm.node, s.norm.D
      else
        src, order, extents = fuse.softmax_source(s, vm, "lt_kernel", sz)
        for _, v in ipairs(g.outputs) do if v ~= s.softmax.x then outvals[#outvals + 1] = v end end
        outvals[#outvals + 1] = s.softmax.out
        s.after, s.D = s.softmax.node, s.softmax.D
      end
      local k, err = kernel(src, "lt_kernel")
      if debug_on() then log("row kernel (%s and %d ops):\n%s", (s.before or s.after).name, #g.nodes, src) end
      if k then
        s.kernel, s.order, s.extents, s.outvals = k, order, extents, outvals
        s.params, s.dyn = params_tensor(sz), dyn
        s.nin = #order - #outvals
        s.rows = fuse.numel(g.shape) // s.D
        out[#out + 1] = s
      else
        io.stderr:write("torch.compile: warning: a fused kernel did not compile; its ops run eagerly: ", err, "\n")
        if s.before then out[#out + 1] = { kind = "node", node = s.before } end
        compile_group(g, vm, out, dyn)
        if s.after then out[#out + 1] = { kind = "node", node = s.after } end
      end
    else
      out[#out + 1] = s
    end
    laid_out(first)
  end
  return out
end

local run_steps

-- the row kernel's forward on tensors ins (s.order's first s.nin): its outputs, in s.outvals order
local function rows_forward(s, ins)
  local ts, outs = {}, {}
  for i = 1, s.nin do ts[i] = ins[i] end
  for k = 1, #s.outvals do
    outs[k] = torch.empty(s.group.shape, { dtype = s.group.dtype, device = s.device })
    ts[#ts + 1] = outs[k]
  end
  if s.params then ts[#ts + 1] = s.params end
  if s.run then s.run(s.launch, ts, s.extents)   -- a CUDA kernel (compile/cuda.lua)
  else torch._compiled_run(s.kernel, s.rows, math.max(1, M.config.grain // s.D), ts, s.extents) end
  return relayout(outs, s.relayout)
end

-- a row step's backward kernel bk on tensors ts: the C kernel over size items of per elements
-- each, or the CUDA kernel (compile/cuda.lua)
local function run_row_backward(bk, ts, size, per)
  if bk.run then bk.run(bk.launch, ts, bk.extents)
  else torch._compiled_run(bk.kernel, size, math.max(1, M.config.grain // per), ts, bk.extents) end
end

-- a backward kernel of a row step for one set of inputs needing gradients (key), built on
-- first need by make(sz) -> source, order, extents[, blocks] (sz: the size parameters of a
-- dynamic step's kernel, else nil); a CUDA step's (s.run) from compile/cuda.lua for need
local function row_backward_kernel(s, key, make, need)
  s.backward_kernels = s.backward_kernels or {}
  local bk = s.backward_kernels[key]
  if bk then return bk end
  if s.run then
    -- a CUDA step: its backward kernel on the device
    local err
    bk, err = require("compile.cuda").row_backward(s, s.vm, need, M)
    if not bk then error("torch.compile: the CUDA backward kernel could not be had: " .. err, 0) end
    s.backward_kernels[key] = bk
    return bk
  end
  local sz = s.dyn and fuse.sizes(s.dyn)
  local src, order, extents, blocks = make(sz)
  local k, err = kernel(src, "lt_kernel")
  if debug_on() then
    log("row backward kernel (%s and %d ops):\n%s", (s.before or s.after or s.reduce.node).name, #s.group.nodes, src)
  end
  if not k then error("torch.compile: the backward kernel did not compile: " .. err, 0) end
  bk = { kernel = k, extents = extents, blocks = blocks, params = params_tensor(sz) }
  s.backward_kernels[key] = bk
  return bk
end

local function contiguous_grad(go, g, device)
  if go == nil then return torch.zeros(g.shape, { dtype = g.dtype, device = device }) end
  if go.dtype ~= g.dtype then go = go:to(g.dtype) end
  return go:is_contiguous() and go or go:contiguous()
end


-- backward of a softmax row step: grads of its inputs (s.order's first s.nin = g.inputs)
local function softmax_rows_backward(s, vm, ctx, gouts)
  local g, sm = s.group, s.softmax
  local saved = ctx.saved_tensors
  local aliases = step_aliases(s, sm.x)
  local need, key = kernel_needs(ctx, s.nin, aliases)
  local bk = row_backward_kernel(s, key, function(sz)
    return fuse.softmax_backward_source(s, vm, "lt_kernel", need, sz)
  end, need)
  local ts, gout_of = {}, {}
  for i = 1, s.nin do ts[i] = saved[i] end
  for k = 1, #s.outvals - 1 do
    ts[#ts + 1] = contiguous_grad(gouts[k], g, s.device)
    gout_of[s.outvals[k]] = ts[#ts]
  end
  ts[#ts + 1] = saved[s.nin + 1]
  ts[#ts + 1] = contiguous_grad(gouts[#s.outvals], g, s.device)
  local grads = {}
  for k = 1, s.nin do
    if need[k] then grads[k] = torch.empty(g.shape, { dtype = g.dtype, device = s.device }); ts[#ts + 1] = grads[k] end
  end
  if bk.params then ts[#ts + 1] = bk.params end
  if key:find("1") then run_row_backward(bk, ts, s.rows, s.D) end
  for k = 1, s.nin do
    if need[k] then grads[k] = reduce_to(grads[k], vm[s.order[k]].shape)
    elseif ctx.needs_input_grad[k] then grads[k] = reduce_to(gout_of[aliases[k]], vm[s.order[k]].shape) end
  end
  return table.unpack(grads, 1, s.nin)
end

-- backward of a layer_norm row step: s.order is x, [w], [b], the group's other inputs
local function norm_rows_backward(s, vm, ctx, gouts)
  local g, rn = s.group, s.norm
  local saved = ctx.saved_tensors
  local need, key = {}, {}
  local slot = {}                 -- input position in s.order -> its key in need
  local pos = 1
  slot[pos] = "x"; pos = pos + 1
  if rn.w then slot[pos] = "w"; pos = pos + 1 end
  if rn.b then slot[pos] = "b"; pos = pos + 1 end
  for k, v in ipairs(g.inputs) do
    if v ~= rn.out then slot[pos] = k; pos = pos + 1 end
  end
  local aliases = step_aliases(s)
  for i = 1, s.nin do
    local n = ctx.needs_input_grad[i] and true or false
    if type(slot[i]) == "number" and aliases[slot[i]] then n = false end
    need[slot[i]] = n
    key[i] = n and "1" or "0"
  end
  key = table.concat(key)
  local bk = row_backward_kernel(s, key, function(sz)
    return fuse.norm_backward_source(s, vm, "lt_kernel", need, sz)
  end, need)
  local ts, gout_of = {}, {}
  for i = 1, s.nin do ts[i] = saved[i] end
  for k = 1, #s.outvals do
    ts[#ts + 1] = contiguous_grad(gouts[k], g, s.device)
    gout_of[s.outvals[k]] = ts[#ts]
  end
  local res, gx = {}, nil
  local on = { dtype = g.dtype, device = s.device }
  if need.x then gx = torch.empty(g.shape, on); ts[#ts + 1] = gx end
  for i = 1, s.nin do
    if type(slot[i]) == "number" and need[slot[i]] then
      res[i] = torch.empty(g.shape, on); ts[#ts + 1] = res[i]
    end
  end
  -- the partial sums: in the tensor's dtype (the C kernel), in double (the CUDA kernel)
  local pon = { dtype = s.run and torch.float64 or g.dtype, device = s.device }
  local pw, pb
  if need.w then pw = torch.empty({ bk.blocks, rn.D }, pon); ts[#ts + 1] = pw end
  if need.b then pb = torch.empty({ bk.blocks, rn.D }, pon); ts[#ts + 1] = pb end
  if bk.params then ts[#ts + 1] = bk.params end
  if key:find("1") then run_row_backward(bk, ts, bk.blocks, rn.D * fuse.NORM_BLOCK) end
  for i = 1, s.nin do
    local w = slot[i]
    if w == "x" and gx then res[i] = gx
    elseif w == "w" and pw then res[i] = pw:sum(1, { dtype = torch.float64 }):to(g.dtype)
    elseif w == "b" and pb then res[i] = pb:sum(1, { dtype = torch.float64 }):to(g.dtype)
    elseif type(w) == "number" and res[i] then res[i] = reduce_to(res[i], vm[s.order[i]].shape)
    elseif type(w) == "number" and ctx.needs_input_grad[i] and aliases[w] then
      res[i] = reduce_to(gout_of[aliases[w]], vm[s.order[i]].shape)
    end
  end
  return table.unpack(res, 1, s.nin)
end

-- a CUDA row or reduction step (compile/cuda.lua): can its backward kernel be had? (made now,
-- for every input, as for a pointwise group; where it cannot, the ops run under autograd)
local function cuda_backward_ready(s, vm)
  local need = {}
  if s.kind == "rowgroup" then
    need.x, need.w, need.b = true, s.norm.w ~= nil, s.norm.b ~= nil
    for k, v in ipairs(s.group.inputs) do need[k] = v ~= s.norm.out end
  else
    for k = 1, #s.group.inputs do need[k] = true end
  end
  local bk, err = require("compile.cuda").row_backward(s, vm, need, M)
  if not bk then
    io.stderr:write("torch.compile: warning: a fused CUDA backward kernel could not be had; the ops run under autograd: ",
      err, "\n")
  end
  return bk ~= nil
end

-- the row step as an autograd Function (forward: the row kernel; backward: a generated row
-- kernel); false where an op of its group has no derivative rule here
local function row_function(s, vm)
  if s.fn ~= nil then return s.fn end
  if not fuse.differentiable(s.group) then s.fn = false; return false end
  if s.run and not cuda_backward_ready(s, vm) then s.fn = false; return false end
  local softmax = s.kind == "softmaxgroup"
  s.fn = torch.autograd.Function {
    name = softmax and "CompiledSoftmaxRows" or "CompiledLayerNormRows",
    forward = function(ctx, ...)
      local ins = { ... }
      local outs = rows_forward(s, ins)
      if softmax then
        ins[s.nin + 1] = outs[#outs]
        ctx:save_for_backward(table.unpack(ins, 1, s.nin + 1))
      else
        ctx:save_for_backward(...)
      end
      return table.unpack(outs)
    end,
    backward = function(ctx, ...)
      if softmax then return softmax_rows_backward(s, vm, ctx, { ... }) end
      return norm_rows_backward(s, vm, ctx, { ... })
    end,
  }
  return s.fn
end

-- a row kernel (a layer_norm before the group, or a softmax after it); under autograd, one
-- autograd Function whose backward is a row kernel too, or, where the group has an op with
-- no derivative rule, that op as itself and the group's ops one by one
local function run_rows(s, vals, vm)
  local ins = {}
  for i = 1, s.nin do ins[i] = vals[s.order[i]] end
  if not s.run and not on_cpu(ins) then
    -- a safety net: compile_graph gives C row kernels CPU tensors only
    if s.before then run_node(s.before, vals) end
    for _, pw in ipairs(s.group.nodes) do run_node(pw.node, vals) end
    if s.after then run_node(s.after, vals) end
    return
  end
  local outs
  if torch.is_grad_enabled() then
    for i = 1, s.nin do
      if ins[i].requires_grad then
        local fn = row_function(s, vm)
        if not fn then
          if s.before then run_node(s.before, vals) end
          for _, pw in ipairs(s.group.nodes) do run_node(pw.node, vals) end
          if s.after then run_node(s.after, vals) end
          return
        end
        outs = { fn.apply(table.unpack(ins, 1, s.nin)) }
        break
      end
    end
  end
  outs = outs or rows_forward(s, ins)
  for k, v in ipairs(s.outvals) do vals[v] = outs[k] end
end

-- the reduction step's forward on the group's inputs ins: its other outputs (in g.outputs
-- order, red.x left out) and the reduction's result last
local function reduce_forward(s, ins)
  local g, red, vm = s.group, s.reduce, s.vm
  local ts, outs = {}, {}
  for i = 1, s.nin do ts[i] = ins[i] end
  for _, v in ipairs(g.outputs) do
    if v ~= red.x then
      outs[#outs + 1] = torch.empty(g.shape, { dtype = g.dtype, device = s.device })
      ts[#ts + 1] = outs[#outs]
    end
  end
  local function launch()
    if s.run then s.run(s.launch, ts, s.extents)   -- a CUDA kernel (compile/cuda.lua)
    else torch._compiled_run(s.kernel, s.size, math.max(1, M.config.grain // s.per), ts, s.extents) end
  end
  if red.all then
    local part = torch.empty({ s.size }, { dtype = torch.float64, device = s.device })
    ts[#ts + 1] = part
    if s.params then ts[#ts + 1] = s.params end
    launch()
    local total = part:sum()
    if red.op == "mean" then total = total / fuse.numel(g.shape) end
    outs[#outs + 1] = total:to(g.dtype)
  else
    local res = torch.empty(vm[red.out].shape, { dtype = g.dtype, device = s.device })
    ts[#ts + 1] = res
    if s.params then ts[#ts + 1] = s.params end
    launch()
    outs[#outs + 1] = res
  end
  return relayout(outs, s.relayout)
end

-- the reduction step as an autograd Function: the backward kernel broadcasts the sum's
-- gradient back into the group's derivatives; false where the group has an op without a rule
local function reduce_function(s, vm)
  if s.fn ~= nil then return s.fn end
  if not fuse.differentiable(s.group) then s.fn = false; return false end
  if s.run and not cuda_backward_ready(s, vm) then s.fn = false; return false end
  local g, red = s.group, s.reduce
  s.fn = torch.autograd.Function {
    name = "CompiledReduction",
    forward = function(ctx, ...)
      ctx:save_for_backward(...)
      return table.unpack(reduce_forward(s, { ... }))
    end,
    backward = function(ctx, ...)
      local gouts = { ... }
      local saved = ctx.saved_tensors
      local aliases = step_aliases(s, red.x)
      local need, key = kernel_needs(ctx, s.nin, aliases)
      local bk = row_backward_kernel(s, key, function(sz)
        local src, order, extents, size, per = fuse.reduce_backward_source(s, vm, "lt_kernel", need, sz)
        return src, order, extents, { size = size, per = per }
      end, need)
      local ts, gout_of, k = {}, {}, 0
      for i = 1, s.nin do ts[i] = saved[i] end
      for _, v in ipairs(g.outputs) do
        if v ~= red.x then
          k = k + 1
          ts[#ts + 1] = contiguous_grad(gouts[k], g, s.device)
          gout_of[v] = ts[#ts]
        end
      end
      local gs = gouts[#gouts]
      if gs == nil then gs = torch.zeros(vm[red.out].shape, { dtype = g.dtype, device = s.device }) end
      if gs.dtype ~= g.dtype then gs = gs:to(g.dtype) end
      ts[#ts + 1] = gs:is_contiguous() and gs or gs:contiguous()
      local grads = {}
      for k = 1, s.nin do
        if need[k] then grads[k] = torch.empty(g.shape, { dtype = g.dtype, device = s.device }); ts[#ts + 1] = grads[k] end
      end
      if bk.params then ts[#ts + 1] = bk.params end
      if key:find("1") then
        if bk.run then bk.run(bk.launch, ts, bk.extents)   -- a CUDA kernel (compile/cuda.lua)
        else torch._compiled_run(bk.kernel, bk.blocks.size, math.max(1, M.config.grain // bk.blocks.per), ts, bk.extents) end
      end
      for k = 1, s.nin do
        if need[k] then grads[k] = reduce_to(grads[k], vm[g.inputs[k]].shape)
        elseif ctx.needs_input_grad[k] and aliases[k] then grads[k] = reduce_to(gout_of[aliases[k]], vm[g.inputs[k]].shape) end
      end
      return table.unpack(grads, 1, s.nin)
    end,
  }
  return s.fn
end

-- a pointwise group fused with the sum (mean) of one of its results; under autograd, one
-- autograd Function (or, where the group has an op with no derivative rule, the group's ops
-- and the reduction one by one)
local function run_reduce(s, vals, vm)
  local g, red = s.group, s.reduce
  local ins = {}
  for i = 1, s.nin do ins[i] = vals[g.inputs[i]] end
  if not s.run and not on_cpu(ins) then
    -- a safety net: compile_graph gives C reduction kernels CPU tensors only
    for _, pw in ipairs(g.nodes) do run_node(pw.node, vals) end
    run_node(red.node, vals)
    return
  end
  local outs
  if torch.is_grad_enabled() then
    for i = 1, s.nin do
      if ins[i].requires_grad then
        local fn = reduce_function(s, vm)
        if not fn then
          for _, pw in ipairs(g.nodes) do run_node(pw.node, vals) end
          run_node(red.node, vals)
          return
        end
        outs = { fn.apply(table.unpack(ins, 1, s.nin)) }
        break
      end
    end
  end
  outs = outs or reduce_forward(s, ins)
  local k = 0
  for _, v in ipairs(g.outputs) do
    if v ~= red.x then k = k + 1; vals[v] = outs[k] end
  end
  vals[red.out] = outs[#outs]
end

function run_steps(steps, vals, vm)
  -- a functionalized graph writing into an input that shares storage with another: as it is
  if steps.functional and steps.functional.shared(vals) then steps = steps.functional.plain() end
  for _, s in ipairs(steps) do
    if s.kind == "group" then
      if not run_group(s, vals, vm) then
        -- a group with an op that has no derivative rule, under autograd: its ops one by one
        for _, pw in ipairs(s.group.nodes) do run_node(pw.node, vals) end
      end
    elseif s.kind == "rowgroup" or s.kind == "softmaxgroup" then
      run_rows(s, vals, vm)
    elseif s.kind == "reducegroup" then
      run_reduce(s, vals, vm)
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
    else
      local l = graph.lifted[inp.index]
      if l.grad_of then vals[inp.value] = l.grad_of.grad else vals[inp.value] = l.tensor end
    end
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

-- the compiled function's upvalues (but _ENV): {index, name, value}
local function upvalues(fn)
  local list = {}
  for i = 1, 255 do
    local name, v = debug.getupvalue(fn, i)
    if name == nil then break end
    if name ~= "_ENV" then list[#list + 1] = { i, name, v } end
  end
  return list
end

-- is v the value an upvalue had (numbers, strings, booleans by value; the rest by identity)?
local function same_value(a, b)
  if type(a) == "number" and type(b) == "number" then return a == b or (a ~= a and b ~= b) end
  return rawequal(a, b)
end

-- nil when the entry's guards pass for args, else the reason; tensors_checked: the tensor
-- arguments' geometry, dtype, device and requires_grad are known to match (a dynamic entry
-- found by them)
local function check_guards(entry, args, tensors_checked)
  if args.n ~= entry.nargs then return ("%d arguments, traced with %d"):format(args.n, entry.nargs) end
  for i = 1, args.n do
    local a, g = args[i], entry.arg_guards[i]
    if g.tensor then
      if not torch.is_tensor(a) then return ("argument %d is not a tensor"):format(i) end
      if not tensors_checked and not tensor_guard(a, g.tensor) then return ("argument %d is %s, traced as %s"):format(i, describe(a), g.desc) end
    elseif type(a) == "table" or type(a) == "userdata" then
      if not rawequal(a, g.value) then return ("argument %d is another %s"):format(i, type(a)) end
    elseif a ~= g.value then
      return ("argument %d is %s, traced as %s"):format(i, tostring(a), tostring(g.value))
    end
  end
  for _, l in ipairs(entry.graph.lifted or {}) do
    local t = l.tensor
    if l.grad_of then
      t = l.grad_of.grad
      if t == nil then return "a .grad the function read is nil now" end
    end
    if not tensor_guard(t, l.meta) then return "a tensor read from outside changed shape, dtype or requires_grad" end
  end
  local gs = global_state()
  if gs.grad ~= entry.state.grad then return "grad mode changed" end
  if gs.default_dtype ~= entry.state.default_dtype then return "the default dtype changed" end
  if gs.autocast ~= entry.state.autocast then return "autocast state changed" end
  for _, u in ipairs(entry.upvalues) do
    local _, v = debug.getupvalue(entry.fn, u[1])
    if not same_value(v, u[3]) then return ("its upvalue '%s' changed"):format(u[2]) end
  end
  for _, g in ipairs(entry.globals or {}) do
    if not same_value(g[1][g[2]], g[3]) then return ("the global '%s' changed"):format(tostring(g[2])) end
  end
  for _, mm in ipairs(entry.module_modes) do
    local m = mm[1]
    if m.training ~= mm[2] then
      return ("a module it calls (%s) is in %s mode now"):format(m:_get_name(), m.training and "train" or "eval")
    end
    for _, slot in ipairs(mm[3]) do
      if not rawequal(m[slot[1]].vals[slot[2]], slot[3]) then
        return ("a module it calls (%s) has another tensor as '%s' now"):format(m:_get_name(), slot[2])
      end
    end
    local attrs, n = rawget(m, "_attrs"), 0
    for k, v in pairs(attrs) do
      n = n + 1
      if not same_value(v, mm[4][k]) then
        return ("an attribute of a module it calls (%s.%s) changed"):format(m:_get_name(), tostring(k))
      end
    end
    if n ~= mm[5] then return ("a module it calls (%s) has new attributes"):format(m:_get_name()) end
  end
  if entry.module_params then
    local ps = entry.module:parameters()
    if #ps ~= #entry.module_params then return "the module's parameters changed" end
    for i, p in ipairs(ps) do if not rawequal(p, entry.module_params[i]) then return "the module's parameters changed" end end
  end
  return nil
end

-- ---- segments: a function whose capture breaks ----

local function node_steps(graph)
  local steps = {}
  for _, node in ipairs(graph.nodes) do steps[#steps + 1] = { kind = "node", node = node } end
  return steps
end

-- a segment's steps, with the values it keeps (e.keep) as the graph's outputs
local function build_segment(self, e)
  local g = e.graph
  local outs = {}
  for i, l in ipairs(e.keep) do outs[i] = { ref = l } end
  g.outputs, g.noutputs = outs, #outs
  -- dynamic = true: its kernels take their sizes as parameters (a segment met at new sizes is a
  -- new segment, but it finds its kernels compiled, by their sources)
  local dyn = self.opts.dynamic == true and function() return true end or nil
  if self.opts.backend == "eager" then e.steps = node_steps(g) else e.steps = compile_graph(g, dyn) end
end

-- the global state a segment's key includes; grad: the mode its ops were recorded in
local function state_key(grad)
  local gs = global_state()
  return ("grad=%s dtype=%s autocast=%s"):format(tostring(grad), tostring(gs.default_dtype), tostring(gs.autocast))
end

local function segment_end(e)
  if e.what == "grad mode change" then return "the grad mode change at " .. e.where end
  return e.what and ("the break at %s (%s)"):format(e.where, e.what) or "the return"
end

-- a copy of a segment's graph whose varying nodes (by index) are renamed, so that the fusion
-- leaves them as calls: each call's numbers are put into their arguments before the run
local function varying_graph(g, varying)
  local c = { nodes = {}, inputs = g.inputs, nvalues = g.nvalues, value_meta = g.value_meta }
  for i, n in ipairs(g.nodes) do
    if varying[i] then
      local m = {}
      for k, v in pairs(n) do m[k] = v end
      m.name = n.name .. " (varying)"
      n = m
    end
    c.nodes[i] = n
  end
  return c
end

-- run a segment of a resumable trace (trace.lua's hook): its cached compiled form, made on a
-- miss; the real tensors of the values it made that the run left (keyed by local value), and
-- its cache entry. A segment whose form was seen before with other numbers (a number read by
-- item(), a loop counter) gets one entry for all its numbers, the ops taking the numbers that
-- changed left unfused and given each call's numbers, rather than a compilation per number.
local function run_segment(self, seg)
  local sk = state_key(seg.grad)
  local key = seg.key .. "\n" .. sk
  local e = self.segments[key]
  local fkey, form
  if not e then
    fkey = seg.form_key() .. "\n" .. sk
    form = self.forms[fkey]
  end
  if not e and form and form.generic then
    local covers = true
    for i, c in ipairs(seg.consts) do
      if c ~= form.consts[i] and not form.generic.varying[i] then covers = false end
    end
    if covers then e = form.generic end
  end
  if e then
    counters.segment_hits = counters.segment_hits + 1
    if e.stale then
      -- a value the liveness missed is kept from now on
      local have = {}
      for _, l in ipairs(e.keep) do have[l] = true end
      for l in pairs(e.extra) do if not have[l] then e.keep[#e.keep + 1] = l end end
      e.stale = false
      build_segment(self, e)
      counters.segment_recompiles = counters.segment_recompiles + 1
      log("segment %d recompiled: it keeps %d values now", e.index, #e.keep)
    end
  elseif self.nsegments >= M.config.segment_limit then
    -- past the limit: the segment's ops run one by one (each value is real: nothing to keep)
    if not self.segment_limit_logged then
      log("segment_limit (%d) reached: new segments run op by op", M.config.segment_limit)
      self.segment_limit_logged = true
    end
    e = { graph = seg.graph, steps = node_steps(seg.graph), uncached = true }
  else
    local keep, how
    if self.opts.backend == "eager" or seg.unsafe then
      -- op by op, every value is real anyway; a segment with in-place or random ops cannot be
      -- recomputed, so it keeps all it makes
      keep, how = {}, seg.unsafe and "all (in-place or random ops)" or "all"
      for _, p in ipairs(seg.produced) do keep[#keep + 1] = p.l end
    else
      keep, how = {}, seg.what and "live" or "the results and what escapes"
      local have = {}
      for _, l in ipairs(seg.forced) do if not have[l] then have[l] = true; keep[#keep + 1] = l end end
      -- what the Lua code still holds: at a break, what it goes on with; at the end, what it
      -- stored away (escaped tensors, handed their real values after the run)
      for _, l in ipairs(seg.live()) do if not have[l] then have[l] = true; keep[#keep + 1] = l end end
    end
    local varying, graph, nvary = nil, seg.graph, 0
    if form then
      varying = {}
      if form.generic then for i in pairs(form.generic.varying) do varying[i] = true end end
      for i, c in ipairs(seg.consts) do if c ~= form.consts[i] then varying[i] = true end end
      for _ in pairs(varying) do nvary = nvary + 1 end
      graph = varying_graph(seg.graph, varying)
    end
    e = { graph = graph, keep = keep, what = seg.what, where = seg.where, index = #self.segment_list + 1,
          varying = varying }
    build_segment(self, e)
    if varying then form.generic = e
    else
      self.segments[key] = e
      self.forms[fkey] = { consts = seg.consts }
    end
    self.segment_list[#self.segment_list + 1] = e
    self.nsegments = self.nsegments + 1
    counters.segments = counters.segments + 1
    if debug_on() then
      log("segment %d compiled, up to %s: %d ops, %d inputs, keeps %d of %d values (%s), %d steps%s", e.index,
        segment_end(e), #seg.graph.nodes, #seg.graph.inputs, #keep, #seg.produced, how, #e.steps,
        not varying and "" or nvary == 0 and ", for any tensors read from outside of these shapes"
          or (", for every value of the numbers of its %d ops whose numbers change"):format(nvary))
      for i, n in ipairs(graph.nodes) do log("  %3d %-20s %s", i, n.name, n.where or "") end
    end
  end
  -- this call's numbers into the ops whose numbers change
  if e.varying then for i in pairs(e.varying) do e.graph.nodes[i].args = seg.graph.nodes[i].args end end
  local vals = {}
  for i, inp in ipairs(e.graph.inputs) do vals[inp.value] = seg.input_reals[i] end
  run_steps(e.steps, vals, e.graph.value_meta)
  local reals = {}
  for _, p in ipairs(seg.produced) do
    local r = vals[p.l]
    if r ~= nil and torch.is_tensor(r) then reals[p.l] = r end
  end
  return reals, e
end

local each_ref = functional.each_ref     -- f(value, alias) for each value in a template

-- a value a segment did not keep, used after its break (trace.lua's hook): recomputed op by op
-- from the segment's real inputs and kept values, where that gives eager's value (the ops are
-- not in place or random, and what they read was not changed in place since); the segment
-- keeps it from the next call on
local function recover(rec, l)
  local g = rec.graph
  local producer = {}
  for i, node in ipairs(g.nodes) do
    for k = 1, node.nres do each_ref(node.outs[k], function(v, alias) if not alias then producer[v] = i end end) end
  end
  local vals = {}
  for i, inp in ipairs(g.inputs) do vals[inp.value] = rec.input_reals[i] end
  for v, r in pairs(rec.reals) do vals[v] = r end
  local need, used, problem = {}, {}, nil
  local function want(v)
    if vals[v] ~= nil then used[v] = true; return end
    local i = producer[v]
    if not i then problem = "no op of the segment made it"; return end
    if need[i] then return end
    need[i] = true
    local node = g.nodes[i]
    for k = 1, node.nargs do each_ref(node.args[k], want) end
  end
  want(l)
  for v in pairs(used) do
    if rec.versions[v] ~= nil and vals[v]._version ~= rec.versions[v] then
      problem = "a tensor it is computed from was changed in place since"
    end
  end
  local order = {}
  for i in pairs(need) do order[#order + 1] = i end
  table.sort(order)
  for _, i in ipairs(order) do
    local n = g.nodes[i]
    if trace.mutates(n) or trace.random_op(n.name) then problem = "it comes from in-place or random ops" end
  end
  local e = rec.entry
  if e and not e.uncached then
    e.extra = e.extra or {}
    e.extra[l] = true
    e.stale = true
  end
  counters.liveness_misses = counters.liveness_misses + 1
  if problem then
    error(("torch.compile: a tensor computed before the graph break at %s is used after it but was not kept, " ..
      "and it cannot be recomputed (%s); later calls keep it"):format(rec.where or "?", problem), 0)
  end
  for _, i in ipairs(order) do run_node(g.nodes[i], vals) end
  log("a value that the segment up to %s did not keep is used after it: recomputed (%d ops); kept from now on",
    rec.where or "the return", #order)
  return vals[l]
end

local function hooks_for(self, always, globals)
  local before = not always and upvalues(self.fn) or {}   -- (segmented calls run the Lua code anyway)
  return {
    -- did the traced call assign an upvalue of the function, or a global? (a replay would not)
    wrote_upvalues = function()
      if globals and globals.wrote then
        log("the function assigns the global '%s': these arguments run in segmented mode, the function " ..
          "traced at each call", tostring(globals.wrote))
        return true
      end
      for _, u in ipairs(before) do
        local _, v = debug.getupvalue(self.fn, u[1])
        if not same_value(v, u[3]) then
          log("the function assigns its upvalue '%s': these arguments run in segmented mode, the function " ..
            "traced at each call", u[2])
          return true
        end
      end
      return false
    end,
    always = always,
    fullgraph = self.opts.fullgraph,      -- a break ends the capture (an error) rather than resuming it
    on_escape = function(n)
      counters.escapes = counters.escapes + 1
      log("the function leaves %d tensor(s) it computed where Lua code can reach them (a table, an optimizer's "
        .. "state, self.output): these arguments run in segmented mode, the function traced at each call", n)
    end,
    no_where = always and not debug_on(),    -- the nodes' source lines are for the debug log
    run_segment = function(seg) return run_segment(self, seg) end,
    recover = recover,
    on_break = function(what, where)
      counters.graph_breaks = counters.graph_breaks + 1
      log("graph break at %s: %s() needs a tensor's values; the graph before it runs, the capture resumes after it",
        where, what)
    end,
  }
end

-- a call in segmented mode: the function traced again, its segments found in the cache
local function run_segmented(self, args)
  counters.segmented_calls = counters.segmented_calls + 1
  local r, msg, where, info = trace.trace(self.fn, args, hooks_for(self, true))
  if r then return table.unpack(r.results, 1, r.results.n) end
  if info and info.ran and (info.impure or info.run_failed) then error(msg, 0) end
  log("the capture failed at %s: %s; running eagerly", where, msg)
  return self.fn(table.unpack(args, 1, args.n))
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
  self.segmented = {}     -- keys of argument kinds whose capture breaks: segmented mode
  self.segments, self.forms, self.segment_list, self.nsegments = {}, {}, {}, 0
  self.kinds = {}         -- dynamic shapes: kind key -> its entries by sizes (see call_dynamic)
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

-- the globals the compiled function's code reads during a capture: the _ENV upvalue of the
-- function, and of the functions it closes over that are not lutorch's own, is a proxy while
-- the capture runs (an _ENV cell is shared by every function of its chunk), each global's first
-- value noted; a write goes through and is noted too. nil where there is none (the wrapper of
-- a compiled module is this library's).
local LIB_ROOT = (debug.getinfo(1, "S").source:match("^@(.*)/compile/[^/]*$"))
local function ours(f)
  local src = debug.getinfo(f, "S").source
  return LIB_ROOT ~= nil and src:sub(1, #LIB_ROOT + 2) == "@" .. LIB_ROOT .. "/"
end

local function watch_globals(fn)
  local cells, seen = {}, {}
  local function find(f, deep)
    if debug.getinfo(f, "S").what == "C" or ours(f) then return end
    for i = 1, 255 do
      local name, v = debug.getupvalue(f, i)
      if name == nil then break end
      if name == "_ENV" and type(v) == "table" then
        local id = debug.upvalueid(f, i)
        if not seen[id] then seen[id] = true; cells[#cells + 1] = { f, i, v } end
      elseif deep and type(v) == "function" then
        find(v, false)
      end
    end
  end
  find(fn, true)
  if #cells == 0 then return nil end
  local w = { reads = {}, order = {} }
  for _, c in ipairs(cells) do
    local env = c[3]
    local proxy = setmetatable({}, {
      __index = function(_, k)
        local v = env[k]
        local r = w.reads[env]
        if not r then r = {}; w.reads[env] = r end
        if r[k] == nil and not w.wrote then r[k] = { v }; w.order[#w.order + 1] = { env, k } end
        return v
      end,
      __newindex = function(_, k, v) env[k] = v; w.wrote = w.wrote or k end,
      __pairs = function() return next, env, nil end,
    })
    debug.setupvalue(c[1], c[2], proxy)
  end
  w.restore = function() for _, c in ipairs(cells) do debug.setupvalue(c[1], c[2], c[3]) end end
  return w
end

local size_marks

-- kind: the dynamic kind the entry is for (its kernels take their sizes as parameters), or nil
local function new_entry(self, args, kind)
  counters.traces = counters.traces + 1
  local globals = not self.module and watch_globals(self.fn) or nil
  local ok, graph, msg, where, info = pcall(trace.trace, self.fn, args, hooks_for(self, false, globals))
  if globals then globals.restore() end
  if not ok then error(graph, 0) end
  if graph and graph.results then return nil, graph.results end   -- it broke, and resumed
  if not graph then
    if info and info.ran and (info.impure or info.run_failed) then error(msg, 0) end
    counters.graph_breaks = counters.graph_breaks + 1
    if self.opts.fullgraph then
      error(("torch.compile: graph break at %s: %s (fullgraph = true)"):format(where, msg), 0)
    end
    log("the capture failed at %s: %s; running eagerly for these arguments", where, msg)
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
  -- the train/eval flag of each module the function called (Dropout, BatchNorm read it)
  -- and its own parameters and buffers by identity (a parameter replaced by assignment)
  entry.upvalues = upvalues(self.fn)
  entry.fn = self.fn
  if globals then
    entry.globals = {}
    for _, ek in ipairs(globals.order) do
      entry.globals[#entry.globals + 1] = { ek[1], ek[2], globals.reads[ek[1]][ek[2]][1] }
    end
  end
  entry.module_modes = {}
  for _, m in ipairs(graph.modules or {}) do
    local slots = {}
    for _, reg in ipairs({ "_parameters", "_buffers" }) do
      for _, k in ipairs(m[reg].keys) do slots[#slots + 1] = { reg, k, m[reg].vals[k] } end
    end
    -- and its attributes (numbers such as Dropout's p or a norm's eps by value, hook tables by identity)
    local attrs, n = {}, 0
    for k, v in pairs(rawget(m, "_attrs")) do attrs[k] = v; n = n + 1 end
    entry.module_modes[#entry.module_modes + 1] = { m, m.training, slots, attrs, n }
  end
  if self.opts.backend == "eager" then
    entry.steps = {}
    for _, node in ipairs(graph.nodes) do entry.steps[#entry.steps + 1] = { kind = "node", node = node } end
  else
    entry.steps = compile_graph(graph, kind and size_marks(kind, graph))
    entry.dynamic = kind ~= nil
  end
  if debug_on() then
    log("captured %d ops, %d graph inputs (%d read from outside), %d steps after fusion", #graph.nodes,
      #graph.inputs, #graph.lifted, #entry.steps)
    for i, n in ipairs(graph.nodes) do log("  %3d %-20s %s", i, n.name, n.where) end
  end
  return entry
end

-- ---- dynamic shapes ----
--
-- A dynamic graph is traced at each new size as any other (the Lua function reads sizes and
-- bakes them into its ops' arguments, as reshape(B, T, H, C // H)), but its C kernels take the
-- sizes marked dynamic as parameters (fuse.sizes): their sources have no such sizes in them,
-- so a trace at a new size finds them compiled (in memory, or on disk by the same source).
-- Arguments of one kind (all but their sizes and strides: dtypes, devices, requires_grad,
-- ranks, contiguity, the other arguments, grad mode, the default dtype, autocast) share a
-- table of entries, one per sizes seen, found by their sizes and strides; it holds up to
-- config.dynamic_cache_limit entries, the least recently used dropped (no cache_size_limit,
-- no eager fallback for sizes).

local name = trace.name    -- dtypes and devices as text, memoized

local function tensor_kind(dtype, device, rank, requires_grad, contiguous)
  return name(dtype) .. " " .. name(device) .. " " .. rank .. (requires_grad and " grad" or "") .. (contiguous and "" or " strided")
end

local function state_kind(gs)
  return (gs.grad and "grad " or "no_grad ") .. name(gs.default_dtype) .. (gs.autocast and " autocast" or "")
end

-- the kind of an argument list, and its key with the sizes and strides
local function dynamic_keys(args)
  local kp, sp = {}, {}
  for i = 1, args.n do
    local a = args[i]
    if torch.is_tensor(a) then
      local shape, contiguous = a.shape, a:is_contiguous()
      kp[i] = tensor_kind(a.dtype, a.device, #shape, a.requires_grad, contiguous)
      -- (a contiguous tensor's strides follow from its sizes)
      sp[i] = contiguous and table.concat(shape, ",") or (table.concat(shape, ",") .. ";" .. table.concat(a:stride(), ","))
    else
      kp[i], sp[i] = type(a) .. ":" .. tostring(a), ""
    end
  end
  kp[args.n + 1] = state_kind(global_state())
  local kk = table.concat(kp, "|")
  return kk, kk .. "#" .. table.concat(sp, "|")
end

local function meta_contiguous(m)
  local acc = 1
  for d = #m.shape, 1, -1 do
    if m.shape[d] == 0 then return true end
    if m.shape[d] ~= 1 and m.stride[d] ~= acc then return false end
    acc = acc * m.shape[d]
  end
  return true
end

-- the kind of the arguments a (specialized) entry was traced for
local function entry_kind(e)
  local kp = {}
  for i = 1, e.nargs do
    local g = e.arg_guards[i]
    if g.tensor then
      local m = g.tensor
      kp[i] = tensor_kind(m.dtype, m.device, #m.shape, m.requires_grad, meta_contiguous(m))
    else
      kp[i] = type(g.value) .. ":" .. tostring(g.value)
    end
  end
  kp[e.nargs + 1] = state_kind(e.state)
  return table.concat(kp, "|")
end

-- do the tensor arguments' sizes or strides differ from those an entry was traced with?
local function sizes_differ(e, args)
  for i = 1, args.n do
    local m = e.arg_guards[i] and e.arg_guards[i].tensor
    if m and torch.is_tensor(args[i]) then
      local shape, stride = args[i].shape, args[i]:stride()
      for d = 1, #shape do
        if shape[d] ~= m.shape[d] or (shape[d] ~= 1 and stride[d] ~= m.stride[d]) then return true end
      end
    end
  end
  return false
end

local function all_dynamic() return true end
local SAME_SIZES = 4        -- entries kept for one kind and sizes (other guards differing)
local dynamic_order = 0     -- numbers the dynamic entries in the order they are made (graphs())

local function graph_sig(graph)
  local names = {}
  for i, n in ipairs(graph.nodes) do names[i] = n.name end
  return graph.nvalues .. ":" .. table.concat(names, ",")
end

-- the sizes of a dynamic graph that its kernels take as parameters (fuse.sizes's predicate):
-- all of them (dynamic = true, or a graph whose ops differ from the kind's first graph's), else
-- (automatic dynamic) the sizes and strides of values that differ between this graph and the
-- kind's first, accumulated over the kind's traces: what did not change stays a constant
function size_marks(kind, graph)
  if kind.all then return all_dynamic end
  if graph_sig(graph) ~= kind.sig then
    log("the graph at these sizes has other ops than at the first sizes: all its sizes are kernel parameters")
    return all_dynamic
  end
  local marks, ref = kind.marks, kind.ref
  for v, m in pairs(graph.value_meta) do
    local r = ref[v]
    for _, what in ipairs({ "shape", "stride" }) do
      local a, b = m[what], r[what]
      for d = 1, math.max(#a, #b) do
        if a[d] ~= b[d] then
          marks[v] = marks[v] or { shape = {}, stride = {} }
          marks[v][what][d] = true
        end
      end
    end
  end
  return function(v, what, d)
    local mv = marks[v]
    return mv ~= nil and mv[what][d] == true
  end
end

-- a call that dynamic shapes take: true and its results packed; false where the call is the
-- specialized path's (dynamic = false, a first kind of arguments under automatic dynamic, or
-- arguments whose capture broke or failed: segmented mode, eager)
local function call_dynamic(self, args)
  local mode = self.opts.dynamic
  if mode == false or (mode == nil and #self.entries == 0) then return false end
  local kk, sk = dynamic_keys(args)
  local kind = self.kinds[kk]
  local why
  if kind then
    for _, e in ipairs(kind.entries[sk] or {}) do
      why = check_guards(e, args, true)
      if not why then
        kind.clock = kind.clock + 1
        e.used = kind.clock
        counters.dynamic_hits = counters.dynamic_hits + 1
        return true, table.pack(run_graph(e, args))
      end
    end
  end
  local key = args_key(args)
  if self.segmented[key] or self.eager_for[key] then return false end
  if kind and kind.entries[sk] and #kind.entries[sk] >= SAME_SIZES then
    -- guards other than sizes failed again and again at these sizes (a global or an upvalue
    -- that changes at each call): as past cache_size_limit, eager
    log("%d entries at these sizes, and another guard failed (%s): running eagerly", SAME_SIZES, why)
    return true, table.pack(self.fn(table.unpack(args, 1, args.n)))
  end
  if not kind then
    if mode == true then
      kind = { all = true }
      log("dynamic = true: every size is a kernel parameter")
    else
      -- automatic dynamic: a specialized entry of this kind, whose guards failed (on sizes)
      local e0
      for _, e in ipairs(self.entries) do
        if entry_kind(e) == kk and sizes_differ(e, args) then e0 = e; break end
      end
      if not e0 then return false end
      kind = { ref = e0.graph.value_meta, sig = graph_sig(e0.graph), marks = {} }
      if debug_on() then
        for i = 1, args.n do
          local m = e0.arg_guards[i].tensor
          if m then
            local shape = args[i].shape
            for d = 1, #shape do
              if shape[d] ~= m.shape[d] then
                log("size of argument %d, dim %d changed %d -> %d: dims marked dynamic", i, d, m.shape[d], shape[d])
              end
            end
          end
        end
      end
    end
    kind.entries, kind.count, kind.clock = {}, 0, 0
    self.kinds[kk] = kind
  end
  kind.clock = kind.clock + 1
  counters.dynamic_traces = counters.dynamic_traces + 1
  if debug_on() then
    local d = {}
    for i = 1, args.n do if torch.is_tensor(args[i]) then d[#d + 1] = ("argument %d %s"):format(i, (describe(args[i]):gsub("%s+$", ""))) end end
    log("new sizes (%s): traced; its kernels take their sizes as parameters", table.concat(d, ", "))
  end
  local ne, results = new_entry(self, args, kind)
  if results then
    self.segmented[key] = true
    return true, results
  end
  if not ne then
    self.eager_for[key] = true
    return true, table.pack(self.fn(table.unpack(args, 1, args.n)))
  end
  -- the sizes' entries: more than one where another guard failed at these sizes (a module in
  -- eval mode, a parameter replaced), up to SAME_SIZES (then eager, above); the kind's, up to
  -- dynamic_cache_limit
  local list = kind.entries[sk] or {}
  kind.entries[sk] = list
  if kind.count >= M.config.dynamic_cache_limit then
    local oldest, ok, oi
    for k, l in pairs(kind.entries) do
      for i, x in ipairs(l) do
        if not oldest or x.used < oldest then oldest, ok, oi = x.used, k, i end
      end
    end
    if ok then
      table.remove(kind.entries[ok], oi)
      if #kind.entries[ok] == 0 and ok ~= sk then kind.entries[ok] = nil end
      kind.count = kind.count - 1
      counters.dynamic_evictions = counters.dynamic_evictions + 1
      log("dynamic_cache_limit (%d) reached: the entry used least recently is dropped", M.config.dynamic_cache_limit)
    end
  end
  ne.used = kind.clock
  dynamic_order = dynamic_order + 1
  ne.order = dynamic_order
  list[#list + 1] = ne
  kind.count = kind.count + 1
  return true, table.pack(run_graph(ne, args))
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
  local dyn, res = call_dynamic(self, args)
  if dyn then return table.unpack(res, 1, res.n) end
  local key = args_key(args)
  if self.segmented[key] then return run_segmented(self, args) end
  if self.eager_for[key] then return self.fn(...) end
  if #self.entries >= M.config.cache_size_limit then
    log("cache_size_limit (%d) reached: running eagerly (%s)", M.config.cache_size_limit, reasons[#reasons] or "")
    return self.fn(...)
  end
  if #self.entries > 0 then
    counters.recompiles = counters.recompiles + 1
    log("recompiling: %s", table.concat(reasons, "; "))
  end
  local e, results = new_entry(self, args)
  if results then
    self.segmented[key] = true
    return table.unpack(results, 1, results.n)
  end
  if not e then
    self.eager_for[key] = true
    return self.fn(...)
  end
  self.entries[#self.entries + 1] = e
  return run_graph(e, args)
end

--- the graphs captured so far (for inspection): a list of {ops = {names}, kernels = n}, the
-- whole graphs first, then the segments of functions that break, each with segment = its
-- number, ends = "FILE:LINE (item)" (its break) or "return", keeps = the values it keeps and,
-- for one made for every value of its numbers, varying = how many of its ops take them
function Compiled:graphs()
  local out = {}
  local function add(e)
    local ops, k = {}, 0
    for j, n in ipairs(e.graph.nodes) do ops[j] = n.name end
    for _, s in ipairs(e.steps) do if s.kind ~= "node" then k = k + 1 end end
    out[#out + 1] = { ops = ops, kernels = k, steps = #e.steps }
    return out[#out]
  end
  for _, e in ipairs(self.entries) do add(e) end
  -- dynamic entries (one per sizes seen), marked dynamic = true, in the order they were made
  local dyn = {}
  for _, kind in pairs(self.kinds) do
    for _, l in pairs(kind.entries) do for _, e in ipairs(l) do dyn[#dyn + 1] = e end end
  end
  table.sort(dyn, function(a, b) return a.order < b.order end)
  for _, e in ipairs(dyn) do add(e).dynamic = true end
  for _, e in ipairs(self.segment_list) do
    local g = add(e)
    g.segment, g.keeps = e.index, #e.keep
    if e.varying then
      g.varying = 0
      for _ in pairs(e.varying) do g.varying = g.varying + 1 end
    end
    g.ends = e.what and ("%s (%s)"):format(e.where, e.what) or "return"
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
  if opts.dynamic ~= nil and type(opts.dynamic) ~= "boolean" then
    error(("torch.compile: 'dynamic' must be true, false or nil, got %s"):format(tostring(opts.dynamic)), 2)
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

--- torch.compiler.is_compiling(): true while torch.compile captures a graph (the traced
-- function runs on meta tensors), false otherwise
function M.is_compiling() return trace.tracing() end

--- torch.compiler.disable(fn): fn, never traced: called from a compiled function, it is a graph
-- break and runs on the real tensors (under fullgraph, an error); called elsewhere, fn itself
function M.disable(fn, opts)
  if type(fn) ~= "function" then
    error("torch.compiler.disable: argument 'fn' must be a function, got " .. type(fn), 2)
  end
  class.check_options("torch.compiler.disable", opts, { "recursive", "reason" })
  return function(...) return trace.call_outside(fn, ...) end
end

--- reset(): forget what every compiled function captured in this process (the disk cache stays)
function M.reset()
  loaded, by_source = {}, {}
  for k in pairs(counters) do counters[k] = 0 end
  for c in pairs(instances) do
    c.entries, c.eager_for, c.segmented, c.kinds = {}, {}, {}, {}
    c.segments, c.forms, c.segment_list, c.nsegments = {}, {}, {}, 0
    c.segment_limit_logged = nil
  end
  if package.loaded["compile.cuda"] then package.loaded["compile.cuda"].reset() end
  M.config.mvec = true     -- tried again: a failure may have been the compiler's, not libmvec's
end

return M
