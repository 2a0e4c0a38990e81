-- compile/functional.lua — functionalization: in-place pointwise ops of a captured graph
-- made functional, so that the fuser (compile/fuse.lua) fuses them with their neighbours.
--
-- The trace records `h:add_(1)` as a node whose result is an alias of its argument: the
-- graph value h stands for a tensor that changes. Run as it is, each such op is a call
-- between kernels and a pass over memory. This pass rewrites, where it can prove the result
-- is the same:
--   * an in-place op that the fuser does as a pointwise op (add_, sub_, mul_, div_, relu_,
--     sigmoid_, tanh_, exp_, neg_, gelu_, ..., and F.relu(x, {inplace = true}), which calls
--     torch.relu_) becomes the functional op making a new value: each state of the tensor is
--     a value of its own, and every later use (the op's own returned alias included) reads
--     the state it saw in eager mode. A tensor the graph made keeps its value number for its
--     last state (so the graph's results and a segment's kept values need no renaming); the
--     earlier states get new numbers.
--   * an in-place op on a graph input (an argument, a tensor read from outside, a value of an
--     earlier segment) is computed the same way, and the last state is written into the
--     input's memory: by the fused C kernel itself where the input is laid out as its output
--     (row-major; the kernel names that input through one pointer, not restrict, for both its
--     load and its store), else by one copy_ at the end of the graph; the version counter is
--     then advanced to where eager's in-place ops would have taken it
--     (torch._compiled_bump_version). Ops reading the input before the in-place op read the
--     input (its old values), after it the new state.
-- A tensor (its "family": the value and every in-place op on it) is rewritten only when all
-- of this holds, else all its ops stay as they were (calls on the real tensor):
--   * every in-place op on it is one of the above, of its dtype and shape (no cast back, no
--     broadcasting of the tensor itself), whose result is laid out row-major (a fused run's
--     outputs are, whatever the value's recorded strides: a transposed tensor's states stay
--     ops), and no other op writes into it (copy_, fill_, index_put, an op given `out`, a
--     random in-place op);
--   * it shares its memory with no other value: a tensor the graph made comes from an op
--     known to return fresh memory (a pointwise op, a matrix product, a reduction, clone,
--     ...), and no op makes a view of it (narrow, transpose, view, x[i], reshape, contiguous,
--     ...) before its last in-place op (a view made after it sees the last state, which is the
--     real tensor); an input is read only by such ops, has no overlapping elements (an
--     expanded tensor) and, at each run, shares its storage with no other input (checked
--     before the run: where it does, the run takes the graph as it was, op by op);
--   * under autograd (grad mode on, some value of the graph requiring grad) inputs are not
--     rewritten (the copy would have to carry the history, and a fused run saves its inputs
--     for its backward, which a write would spoil), and the graph is rewritten only where
--     nothing is left changing in place afterwards (the longer fused runs save more than
--     eager's ops did); the fused run is then differentiated like any other.
local torch = require "torch"
local fuse = require "compile.fuse"
local trace = require "compile.trace"

local M = {}

-- what the pass did in this process: in-place ops rewritten (per graph compiled), inputs
-- written back (per graph), kernels storing straight into their input (per graph), runs that
-- took the graph as it was (inputs sharing storage)
M.counters = { ops = 0, inputs = 0, shared_fallbacks = 0, stores = 0 }
-- false: graphs compiled from then on keep their in-place ops (for comparing)
M.enabled = true

local TMETA = getmetatable(torch.empty(0))
-- torch's functions and the tensor methods as they are before any trace wraps them (this
-- file is loaded with compile/init.lua, before the first capture)
local index0 = TMETA.__index
local torch_fn = {}
for k, f in pairs(torch) do if type(f) == "function" then torch_fn[k] = f end end

-- ops known to return memory of their own (besides the pointwise ops the fuser takes)
local FRESH = {}
for _, k in ipairs({ "clone", "matmul", "mm", "bmm", "addmm", "linear", "conv1d", "conv2d", "conv3d",
                     "softmax", "log_softmax", "layer_norm", "sum", "mean", "cat", "stack", "where", "clamp",
                     "zeros", "ones", "empty", "full", "randn", "rand", "zeros_like", "ones_like", "empty_like",
                     "full_like", "randn_like", "rand_like", "arange" }) do FRESH[k] = true end

-- the functional op of an in-place one, called with the in-place op's arguments
local function functional_fn(base)
  local f = torch_fn[base]
  if f then return f end
  return function(self, ...) return index0(self, base)(self, ...) end
end

-- f(value, alias) for each value in an argument or result template (nested tables too)
local function each_ref(tpl, f)
  if tpl.ref then f(tpl.ref, tpl.alias)
  elseif tpl.tbl then for _, x in pairs(tpl.tbl) do each_ref(x, f) end end
end
M.each_ref = each_ref

local function renamed(tpl, cur)
  if tpl.ref then
    local r = cur[tpl.ref]
    if r and r ~= tpl.ref then return { ref = r, alias = tpl.alias }, true end
    return tpl, false
  elseif tpl.tbl then
    local t, any = {}, false
    for k, x in pairs(tpl.tbl) do
      local y, c = renamed(x, cur)
      t[k] = y
      any = any or c
    end
    if any then return { tbl = t }, true end
  end
  return tpl, false
end

local function meta_tensor(m)
  local t = torch.empty(math.max(fuse.extent(m), 1), { dtype = m.dtype, device = "meta" }):as_strided(m.shape, m.stride)
  if m.requires_grad then t.requires_grad = true end
  return t
end

local function same(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- laid out row-major (sizes of 1 aside)
local function dense(m)
  local acc = 1
  for d = #m.shape, 1, -1 do
    if m.shape[d] ~= 1 and m.stride[d] ~= acc then return false end
    acc = acc * m.shape[d]
  end
  return true
end

-- no two elements of a tensor of this geometry at one place (an expanded tensor has them)
local function no_overlap(m)
  local dims = {}
  for d = 1, #m.shape do
    if m.shape[d] == 0 then return true end
    if m.shape[d] > 1 then dims[#dims + 1] = d end
  end
  table.sort(dims, function(a, b) return m.stride[a] < m.stride[b] end)
  local reach = 1
  for _, d in ipairs(dims) do
    if m.stride[d] < reach then return false end
    reach = m.stride[d] * m.shape[d]
  end
  return true
end

-- the pointwise in-place op node on value v: {node =, base =, meta =} (meta: its result's,
-- by running the functional op on meta tensors), or nil when the fuser would not take it as
-- the functional op with the tensor's own dtype and shape
local function inplace_form(node, vm)
  local name = node.name
  if name:sub(-1) ~= "_" or node.nres ~= 1 or node.nargs < 1 then return nil end
  local a1, o1 = node.args[1], node.outs[1]
  if not (a1.ref and o1.ref == a1.ref and o1.alias) then return nil end
  local base = name:sub(1, -2)
  local self = vm[a1.ref]
  -- the result's meta, as the tracer would have recorded the functional op's
  local ok, res = pcall(function()
    local args = {}
    local function conv(tpl)
      if tpl.ref then return meta_tensor(vm[tpl.ref]) end
      if tpl.tbl then
        local t = {}
        for k, x in pairs(tpl.tbl) do t[k] = conv(x) end
        return t
      end
      return tpl.const
    end
    for i = 1, node.nargs do args[i] = conv(node.args[i]) end
    local r = functional_fn(base)(table.unpack(args, 1, node.nargs))
    if not torch.is_tensor(r) then return nil end
    return { shape = r.shape, dtype = r.dtype, stride = r:stride(), requires_grad = r.requires_grad, device = self.device }
  end)
  if not ok or not res then return nil end
  if res.dtype ~= self.dtype or not same(res.shape, self.shape) then return nil end
  -- laid out row-major: a fused run's outputs are, and the eager op's result is (it follows
  -- its inputs' layout, which the guards fix), so a state read by a later kernel through
  -- these strides is read right whichever way it was made
  if not dense(res) then return nil end
  -- and the fuser takes the functional op (else rewriting it gains nothing)
  local probe = { name = base, nargs = node.nargs, args = node.args, nres = 1, outs = { { ref = 0 } } }
  if not fuse.pointwise(probe, setmetatable({ [0] = res }, { __index = vm })) then return nil end
  return { base = base, meta = res }
end

-- a node that writes into the value v in some other way than the ops above take (copy_,
-- fill_, index_put, `out`, a random in-place op): its outputs alias v, or it is an
-- in-place op on v
local function writes(node, v)
  if (node.name:sub(-1) == "_" or node.name == "index_put") and node.nargs >= 1 and node.args[1].ref == v then
    return true
  end
  for k = 1, node.nres do
    local hit = false
    each_ref(node.outs[k], function(r, alias) if alias and r == v then hit = true end end)
    if hit then return true end
  end
  return false
end

-- a node whose results are memory of its own (reading v through it cannot see v change)
local function fresh(node, vm)
  for k = 1, node.nres do
    local alias = false
    each_ref(node.outs[k], function(_, a) if a then alias = true end end)
    if alias then
      -- an in-place op of another tensor (its result is that tensor): it reads v, no more
      return node.name:sub(-1) == "_" and node.args[1] and node.args[1].ref ~= nil
        and node.outs[1].ref == node.args[1].ref and node.nres == 1
    end
  end
  if FRESH[node.name] then return true end
  return fuse.pointwise(node, vm) ~= nil
end

--- functionalize(graph): a copy of graph whose eligible in-place ops are functional (see
--- the header), or nil when it has none. The copy shares the graph's inputs, outputs and
--- value_meta (the new values are added to it); its `writes` lists the inputs written back
--- ({value =, from =, count = in-place ops}).
function M.functionalize(graph)
  local vm, nodes = graph.value_meta, graph.nodes
  local grad = torch.is_grad_enabled()
  local is_input = {}
  for _, inp in ipairs(graph.inputs) do is_input[inp.value] = true end
  local producer = {}
  for i, node in ipairs(nodes) do
    for k = 1, node.nres do each_ref(node.outs[k], function(v, alias) if not alias then producer[v] = i end end) end
  end
  -- candidates: values with an in-place op of the pointwise kind
  local forms, fam = {}, {}
  for i, node in ipairs(nodes) do
    if node.name:sub(-1) == "_" and node.nargs >= 1 and node.args[1].ref then
      local v = node.args[1].ref
      local f = inplace_form(node, vm)
      fam[v] = fam[v] or { ops = {}, ok = true }
      if f then
        f.index = i
        forms[i] = f
        fam[v].ops[#fam[v].ops + 1] = i
        fam[v].last = i
      else
        fam[v].ok = false
      end
    end
  end
  -- under autograd, with any value requiring grad (an input, or a tensor made with
  -- requires_grad inside the function), inputs are left as they are: a fused run saves its
  -- inputs for its backward, and writing into one would fail that backward where eager's ops
  -- (which save less) succeed
  local grad_inputs = false
  if grad then
    for v = 1, graph.nvalues do if vm[v] and vm[v].requires_grad then grad_inputs = true end end
  end
  local any = false
  for v, F in pairs(fam) do
    if F.ok and #F.ops > 0 then
      local p = producer[v]
      F.input = is_input[v] or false
      if not F.input then
        -- made by an op with fresh results, as one of its results (not inside a table of them)
        local direct = false
        if p then for k = 1, nodes[p].nres do if nodes[p].outs[k].ref == v then direct = true end end end
        if not (direct and fresh(nodes[p], vm)) then F.ok = false end
      end
      if F.input then
        local m = vm[v]
        if not no_overlap(m) then F.ok = false end
        if grad_inputs then F.ok = false end
        for _, i in ipairs(F.ops) do if grad and forms[i].meta.requires_grad then F.ok = false end end
      else
        -- the last state keeps v's number: it must be what vm[v] says
        local m, r = vm[v], forms[F.last].meta
        if not same(m.stride, r.stride) or (m.requires_grad or false) ~= (r.requires_grad or false) then F.ok = false end
      end
      -- every other node touching v: reads it through an op with fresh results (views of it
      -- after its last in-place op are fine for a tensor the graph made), writes into it never
      for i, node in ipairs(nodes) do
        if not F.ok then break end
        if not forms[i] or node.args[1].ref ~= v then
          if writes(node, v) then
            F.ok = false
          else
            local reads = false
            for k = 1, node.nargs do each_ref(node.args[k], function(r) if r == v then reads = true end end) end
            if reads and not fresh(node, vm) and (F.input or i < F.last) then F.ok = false end
          end
        end
      end
      any = any or F.ok
    end
  end
  if not any then return nil end

  -- the rewrite
  local nvalues = graph.nvalues
  local function new_value(meta)
    nvalues = nvalues + 1
    vm[nvalues] = meta
    return nvalues
  end
  local cur, out, writes_back = {}, {}, {}
  for v, F in pairs(fam) do
    if F.ok then
      if F.input then cur[v] = v else cur[v] = new_value(vm[v]) end
    end
  end
  for i, node in ipairs(nodes) do
    local f = forms[i]
    local v = f and node.args[1].ref
    local F = v and fam[v]
    local args, changed = {}, false
    for k = 1, node.nargs do
      local c
      args[k], c = renamed(node.args[k], cur)
      changed = changed or c
    end
    if F and F.ok then
      local r
      if not F.input and i == F.last then r = v else r = new_value(f.meta) end
      out[#out + 1] = { name = f.base, fn = functional_fn(f.base), args = args, nargs = node.nargs, nres = 1,
                        outs = { { ref = r } }, where = node.where, functionalized = node.name }
      cur[v] = r
    else
      -- the producer of a tensor the graph made: its first state gets a new number
      local outs, oc = {}, false
      for k = 1, node.nres do
        local o = node.outs[k]
        if o.ref and not o.alias and fam[o.ref] and fam[o.ref].ok and not fam[o.ref].input then
          outs[k] = { ref = cur[o.ref] }
          oc = true
        else
          outs[k] = o
        end
      end
      if changed or oc then
        local n = {}
        for k, x in pairs(node) do n[k] = x end
        n.args, n.outs = args, outs
        out[#out + 1] = n
      else
        out[#out + 1] = node
      end
    end
  end
  -- the inputs' last states into their memory, in the order of their first in-place op
  local order = {}
  for v, F in pairs(fam) do if F.ok and F.input then order[#order + 1] = v end end
  table.sort(order, function(a, b) return fam[a].ops[1] < fam[b].ops[1] end)
  for _, v in ipairs(order) do
    local count = #fam[v].ops
    out[#out + 1] = {
      name = "copy_", nargs = 2, nres = 1, args = { { ref = v }, { ref = cur[v] } }, outs = { { ref = v, alias = true } },
      where = "(functionalization: the input's new values)",
      fn = function(dst, src)
        -- eager bumps the version once per in-place op (a kernel that stored into dst itself
        -- leaves only that to do)
        if rawequal(dst, src) then torch._compiled_bump_version(dst, count)
        else
          dst:copy_(src)
          torch._compiled_bump_version(dst, count - 1)
        end
        return dst
      end,
    }
    writes_back[#writes_back + 1] = { value = v, from = cur[v], count = count }
  end
  -- under autograd, a graph that still changes tensors in place is left whole: the fused runs
  -- the rewrite makes longer save their inputs for their backward, and an in-place op left
  -- after them could spoil one that eager's ops (which save less) would not have saved
  if grad_inputs then
    for _, n in ipairs(out) do if trace.mutates(n) then return nil end end
  end
  graph.nvalues = nvalues
  for _, n in ipairs(out) do if n.functionalized then M.counters.ops = M.counters.ops + 1 end end
  M.counters.inputs = M.counters.inputs + #writes_back
  return { nodes = out, inputs = graph.inputs, outputs = graph.outputs, noutputs = graph.noutputs,
           value_meta = vm, nvalues = nvalues, lifted = graph.lifted, writes = writes_back }
end

-- true when an input the graph writes into shares its storage with another input at this
-- run (eager would let the other see the write as it happens)
local function shared_storage(fg, vals)
  local owner = {}
  for _, inp in ipairs(fg.inputs) do
    local t = vals[inp.value]
    if torch.is_tensor(t) then
      local s = torch._compiled_storage(t)
      owner[s] = (owner[s] or 0) + 1
    end
  end
  for _, w in ipairs(fg.writes) do
    local t = vals[w.value]
    if owner[torch._compiled_storage(t)] > 1 then
      M.counters.shared_fallbacks = M.counters.shared_fallbacks + 1
      return true
    end
  end
  return false
end

-- the group's kernel source with output ko written through input ki's pointer: one pointer,
-- not restrict, for both (a restrict pair naming one memory would be undefined behaviour:
-- the compiler may reload the input after the store), so the loop reads element i and then
-- writes it through the same base (distance 0: it still vectorizes without a check); nil
-- where the source is not of the form expected
local function store_into_source(src, ki, ko)
  local nin, nout = 0, 0
  local T
  local inpat = "\n  const (%w+) %*restrict in" .. ki .. " = %(const %w+ %*%)p%[(%d+)%];\n"
  src, nin = src:gsub(inpat, function(t, idx)
    T = t
    return ("\n  %s *io%d = (%s *)p[%s];\n  const %s *in%d = io%d;\n"):format(t, ki, t, idx, t, ki, ki)
  end)
  if nin ~= 1 then return nil end
  local outpat = "\n  " .. T .. " %*restrict out" .. ko .. " = %(" .. T .. " %*%)p%[%d+%];\n"
  src, nout = src:gsub(outpat, ("\n  %s *out%d = io%d;\n"):format(T, ko, ki))
  if nout ~= 1 then return nil end
  return src
end

--- compile(graph, compile_plain, build): the compiled steps of graph with its in-place ops
--- made functional where they can be (compile_plain(g): the steps of a graph as it is;
--- build(src, name): a loaded kernel, or nil and a message), or nil when nothing changes.
--- Where the graph writes into inputs, the steps carry steps.functional = {shared =
--- f(vals) -> bool, plain = f() -> the steps of the graph as it is}: a run whose inputs share
--- storage takes the plain steps.
function M.compile(graph, compile_plain, build)
  if not M.enabled then return nil end
  local fg = M.functionalize(graph)
  if not fg then return nil end
  local steps = compile_plain(fg)
  -- a C kernel computing an input's last state from the input itself stores it straight into
  -- the input (group.store_into[k] = the input's place among the run's inputs, for output k)
  -- where the input is laid out as the run's output (row-major): element i is read and then
  -- written by the same iteration and by no other, and no other input shares its storage
  -- (checked at each run). Its kernel is built again with one pointer for the pair. The copy
  -- at the end then only bumps the version.
  for _, w in ipairs(fg.writes) do
    local m = fg.value_meta[w.value]
    for _, s in ipairs((build and dense(m)) and steps or {}) do
      local g = s.kind == "group" and s.kernel and not s.run and s.group
      if g and same(g.shape, m.shape) and g.dtype == m.dtype and not g.store_into then
        local ki, ko
        for k, v in ipairs(g.inputs) do if v == w.value then ki = k end end
        for k, v in ipairs(g.outputs) do if v == w.from then ko = k end end
        local src = ki and ko and store_into_source((fuse.source(g, fg.value_meta, "lt_kernel")), ki, ko)
        local k = src and build(src, "lt_kernel")
        if k then
          s.kernel = k
          g.store_into = { [ko] = ki }
          M.counters.stores = M.counters.stores + 1
        end
      end
    end
  end
  if #fg.writes > 0 then
    local plain
    steps.functional = {
      shared = function(vals) return shared_storage(fg, vals) end,
      plain = function()
        plain = plain or compile_plain(graph)
        return plain
      end,
    }
  end
  return steps
end

return M
