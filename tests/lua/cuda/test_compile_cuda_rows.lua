-- test_compile_cuda_rows.lua — torch.compile's row and reduction kernels on CUDA tensors
-- (lib/compile/cuda.lua's "row and reduction kernels"): layer_norm -> run, run -> softmax /
-- log_softmax, run -> sum / mean over the last dimension or all elements, forward and
-- backward, each one CUDA kernel compiled by NVRTC; under the fake driver the same source's
-- host build runs it. Against eager: float64 to 1e-12, float32 to 1e-5 relative (forward and
-- gradients), gradcheck in float64; short rows (a warp per row), long ones (a block), odd
-- sizes, broadcast inputs, the normalized value kept, several outputs; float16 and bfloat16
-- (against eager, and against float32's results and gradients); the fixed order of the
-- group reduction; runs to run the same bits; more rows than a launch's blocks; the NVRTC
-- compile of every generated source (SKIP where libnvrtc is not found); the fall backs (the
-- ops and the pointwise kernel) where a kernel cannot be had, never a CPU kernel for a CUDA
-- tensor. Runs unchanged on a real GPU (tools/gpu_check.sh, stage compile).
local T = require "testing"
local c = torch.cuda

if not c.is_available() then
  T.skip("compile cuda rows", "torch.cuda is not available: " .. tostring(c.unavailable_reason()))
  T.done()
  return
end

local C = require "compile"
local cg = require "compile.cuda"
local fuse = require "compile.fuse"
local trace = require "compile.trace"
local F = require("nn").functional
local S = T.scratch()
C.cache_dir_override = S.dir .. "/cache"
local host = c._rtc_host_memory()
local nvrtc_version, nvrtc_why = c._rtc_nvrtc()
local TOL = { [torch.float64] = 1e-12, [torch.float32] = 1e-5 }
local DTYPES = { torch.float32, torch.float64 }

local function rel_err(a, b)
  a, b = a:cpu():double(), b:cpu():double()
  if b:numel() == 0 then return a:numel() == 0 and 0 or math.huge end
  local nan = torch.isnan(b)
  T.ok(torch.equal(torch.isnan(a), nan), "NaNs in the same places")
  local d = (a - b):abs():masked_fill(nan, 0):max():item()
  return d / math.max(b:abs():masked_fill(nan, 0):max():item(), 1e-30)
end

local function randn(shape, dt) return torch.randn(shape, { dtype = dt }):cuda() end

-- the row functions, for rows of D elements: {name, function, the tensors it closes over
-- (names in the returned table), its autograd node's name}
local LN, SM, RED = "CompiledLayerNormRowsBackward", "CompiledSoftmaxRowsBackward", "CompiledReductionBackward"
local function row_fns(D, dt)
  local w, b, mask = randn({ D }, dt), randn({ D }, dt), randn({ D }, dt)
  local col = randn({ 1 }, dt)
  return {
    { "layer_norm -> run", function(x) return torch.gelu(F.layer_norm(x, { D }, w, b)) * 2 + x end, { "w", "b" }, LN },
    { "layer_norm without weight, kept", function(x)
        local n = F.layer_norm(x, { D })
        return torch.tanh(n * 3) + 1, n
      end, {}, LN },
    { "run -> softmax", function(x) return torch.softmax(x * 0.25 + mask, -1) end, { "mask" }, SM },
    { "run -> log_softmax, an output", function(x)
        local h = torch.sigmoid(x) * col
        return torch.log_softmax(h * 2 - x, -1), h
      end, { "col" }, SM },
    { "run -> sum(-1)", function(x) return (torch.sigmoid(x) * x + mask):sum(-1) end, { "mask" }, RED },
    { "run -> mean(-1, keepdim)", function(x) return (torch.exp(x * 0.5) - mask):mean(-1, { keepdim = true }) end,
      { "mask" }, RED },
    { "run -> sum()", function(x) return (x * x + mask):sum() end, { "mask" }, RED },
    { "run -> mean()", function(x) return torch.relu(x - 0.25):mean() end, {}, RED },
  }, { w = w, b = b, mask = mask, col = col }
end

-- fn compiled and eager on x: the same results on the same device; the graph is one step
-- (the row kernel), launched on the device, with no CPU kernel
local function same(what, fn, x, tol)
  local f = torch.compile(fn)
  local want = table.pack(fn(x))
  f(x)
  c._kernel_counts(true)
  local got = table.pack(f(x))
  local k = c._kernel_counts(true)
  T.eq(got.n, want.n, what .. ": results")
  for i = 1, want.n do
    T.eq(tostring(got[i].device), tostring(want[i].device), what .. ": device")
    T.eq(got[i].dtype, want[i].dtype, what .. ": dtype")
    T.eq(tostring(got[i].shape), tostring(want[i].shape), what .. ": shape")
    local e = rel_err(got[i], want[i])
    T.ok(e <= (tol or TOL[want[i].dtype]), ("%s: result %d differs from eager by %g"):format(what, i, e))
  end
  local g = f:graphs()[1]
  T.eq(g.kernels, 1, what .. ": one fused kernel")
  T.eq(g.steps, 1, what .. ": one step (the row kernel, not the op and a pointwise kernel)")
  T.ok(k.host + k.device >= 1, what .. ": launched")
  T.eq(k.cpu, 0, what .. ": CPU kernels run for cuda tensors")
  return f
end

T.test("each row kernel's forward matches eager: short rows, long rows, odd sizes", function()
  for _, dt in ipairs(DTYPES) do
    -- 7: a warp per row; 1283: a block of 256 threads per row
    for _, shape in ipairs({ { 3, 4, 7 }, { 9, 1283 } }) do
      local fns = row_fns(shape[#shape], dt)
      for _, p in ipairs(fns) do
        same(("%s %s %s"):format(p[1], dt.name, table.concat(shape, "x")), p[2], randn(shape, dt))
      end
    end
  end
end)

T.test("sums over all elements: one partial sum per unit, added in order", function()
  for _, dt in ipairs(DTYPES) do
    for _, n in ipairs({ 1, 8191, 8193, 3 * 8192 + 17, 100000 }) do
      same(("sum of %d %s"):format(n, dt.name), function(x) return (x * 0.5 + 1):sum() end, randn({ n }, dt))
    end
    -- a broadcast input indexed flat, and a transposed one
    local r = randn({ 37 }, dt)
    same("broadcast, all " .. dt.name, function(x) return (x * r):mean() end, randn({ 300, 37 }, dt))
    same("transposed, all " .. dt.name, function(x) return torch.sigmoid(x):sum() end, randn({ 40, 300 }, dt):t())
  end
end)

T.test("the group reduction's order is the fixed tree, in the host build as on the device", function()
  -- a warp's 32 values where the order of the additions shows: lane l adds lane l + o for
  -- o = 16, 8, 4, 2, 1 (the device's shuffles), not left to right
  local v = {}
  for l = 1, 32 do v[l] = 0.0 end
  v[1], v[17] = 1e16, -1e16          -- left to right, each 1 is lost next to 1e16
  for l = 2, 16 do v[l] = 1.0 end
  local a = {}
  for l = 1, 32 do a[l] = v[l] end
  local o = 16
  while o > 0 do
    for l = 1, o do a[l] = a[l] + a[l + o] end
    o = o // 2
  end
  local naive = 0
  for l = 1, 32 do naive = naive + v[l] end
  T.ok(a[1] ~= naive, "the example tells the orders apart")
  local x = torch.tensor({ v }, { dtype = torch.float64 }):cuda()
  local r = torch.compile(function(t) return (t * 1):sum(-1) end)(x)
  T.eq(r:cpu()[1], a[1], "the tree's sum")
end)

T.test("runs give the same bits (no dependence on scheduling)", function()
  for _, dt in ipairs(DTYPES) do
    local x = randn({ 300, 700 }, dt):requires_grad_()
    local w, b = randn({ 700 }, dt):requires_grad_(), randn({ 700 }, dt):requires_grad_()
    local f = torch.compile(function(t) return torch.sigmoid(F.layer_norm(t, { 700 }, w, b)) * t end)
    local s = torch.compile(function(t) return (t * t - 1):sum() end)
    local first
    for _ = 1, 3 do
      local y = f(x)
      local gy = torch.ones(300, 700, { dtype = dt }):cuda()
      y:backward(gy)
      local got = { y:detach():cpu(), x.grad:cpu(), w.grad:cpu(), b.grad:cpu(), s(x:detach()):cpu() }
      x.grad, w.grad, b.grad = nil, nil, nil
      if first then
        for i = 1, #got do T.ok(torch.equal(got[i], first[i]), dt.name .. ": result " .. i .. " the same") end
      end
      first = first or got
    end
  end
end)

-- the backward of fn on x (and the tensors in params) against eager's
local function check_backward(what, fn, x, params, name)
  local f = torch.compile(fn)
  local leaves = { x }
  for _, p in ipairs(params) do leaves[#leaves + 1] = p end
  local res = table.pack(f(x))
  T.eq(res[1].grad_fn and res[1].grad_fn:name(), name, what .. ": one autograd node")
  local ws = {}
  for i = 1, res.n do ws[i] = torch.randn(res[i].shape, { dtype = x.dtype }):cuda() end
  torch.autograd.backward({ table.unpack(res, 1, res.n) }, ws)
  local got = {}
  for i, t in ipairs(leaves) do got[i] = t.grad; t.grad = nil end
  local eres = table.pack(fn(x))
  torch.autograd.backward({ table.unpack(eres, 1, eres.n) }, ws)
  for i, t in ipairs(leaves) do
    T.ok(got[i] ~= nil, what .. ": gradient " .. i)
    T.eq(tostring(got[i].device), tostring(t.device), what .. ": gradient's device")
    T.eq(tostring(got[i].shape), tostring(t.shape), what .. ": gradient's shape")
    local e = rel_err(got[i], t.grad)
    T.ok(e <= TOL[x.dtype], ("%s: gradient %d differs from eager's by %g"):format(what, i, e))
    t.grad = nil
  end
end

T.test("more rows than a launch's blocks: the loop over rows goes round", function()
  -- a warp per row, 8 rows a block, at most 65536 blocks: 524293 rows need a second turn
  local x = randn({ 65536 * 8 + 5, 3 }, torch.float32)
  same("softmax over many rows", function(t) return torch.softmax(t * 2, -1) end, x)
  same("sum over many rows", function(t) return (t * 2 + 1):sum(-1) end, x)
  -- the layer_norm backward over 5000 rows: units of 5 rows (1000 rows of partial sums)
  local xx = randn({ 5000, 16 }, torch.float64):requires_grad_()
  local ww = randn({ 16 }, torch.float64):requires_grad_()
  check_backward("layer_norm over 5000 rows", function(t) return torch.sigmoid(F.layer_norm(t, { 16 }, ww)) * t end,
    xx, { ww }, "CompiledLayerNormRowsBackward")
  -- no rows at all
  for _, fn in ipairs({ function(t) return torch.softmax(t * 2, -1) end, function(t) return (t * 2):sum(-1) end,
                        function(t) return torch.sigmoid(F.layer_norm(t, { 8 })) * t end }) do
    local e = randn({ 0, 8 }, torch.float32)
    local r = torch.compile(fn)(e)
    T.eq(tostring(r.shape), tostring(fn(e).shape), "no rows: the shape")
  end
end)

T.test("each row kernel's backward matches eager's, weight and bias and broadcast inputs included", function()
  for _, dt in ipairs(DTYPES) do
    -- 70 rows (one row a unit of the layer_norm's partial sums; several rows a unit: above)
    for _, shape in ipairs({ { 70, 9 }, { 70, 600 } }) do
      local fns, p = row_fns(shape[2], dt)
      for _, t in pairs(p) do t:requires_grad_() end
      for _, q in ipairs(fns) do
        local params = {}
        for _, name in ipairs(q[3]) do params[#params + 1] = p[name] end
        check_backward(("%s %s %s"):format(q[1], dt.name, table.concat(shape, "x")), q[2],
          randn(shape, dt):requires_grad_(), params, q[4])
      end
    end
  end
end)

T.test("gradcheck in float64 through each row kernel", function()
  local fns, p = row_fns(6, torch.float64)
  for _, t in pairs(p) do t:requires_grad_() end
  for _, q in ipairs(fns) do
    local f = torch.compile(q[2])
    local x = randn({ 4, 6 }, torch.float64):requires_grad_()
    T.ok(torch.autograd.gradcheck(f, { x }), q[1] .. ": gradcheck")
  end
  -- the weight, bias and mask as arguments
  local ln = torch.compile(function(x, w, b) return torch.sigmoid(F.layer_norm(x, { 6 }, w, b)) * x end)
  T.ok(torch.autograd.gradcheck(ln, { randn({ 5, 6 }, torch.float64):requires_grad_(),
    randn({ 6 }, torch.float64):requires_grad_(), randn({ 6 }, torch.float64):requires_grad_() }), "layer_norm's w and b")
  local sm = torch.compile(function(x, m) return torch.softmax(x / 3 + m, -1) end)
  T.ok(torch.autograd.gradcheck(sm, { randn({ 5, 6 }, torch.float64):requires_grad_(),
    randn({ 5, 1 }, torch.float64):requires_grad_() }), "softmax's column mask")
end)

-- the row steps of fn's graph on args
local function row_steps(fn, args)
  local graph = trace.trace(fn, table.pack(table.unpack(args)))
  local out = {}
  for _, s in ipairs(fuse.plan(graph)) do
    if s.kind == "rowgroup" or s.kind == "softmaxgroup" or s.kind == "reducegroup" then out[#out + 1] = s end
  end
  return out, graph.value_meta
end

T.test("NVRTC compiles every generated row source, forward and backward", function()
  if not nvrtc_version then
    T.skip("NVRTC compiles the row sources", "libnvrtc not found: " .. tostring(nvrtc_why))
    return
  end
  local seen = 0
  local function compiles(what, src)
    local ptx, log = c._rtc_compile(src, "compute_90", { "-std=c++17", "--fmad=false" })
    T.ok(ptx and ptx:find(".entry lt_kernel", 1, true), what .. ": " .. tostring(log))
    if seen == 0 then
      -- (the sources the tests above ran were compiled to cubins by the runner already)
      local cubin = c._rtc_compile(src, "sm_90", { "-std=c++17", "--fmad=false" })
      T.ok(cubin and cubin:sub(1, 4) == "\127ELF", what .. ": a cubin")
    end
    seen = seen + 1
  end
  -- a warp per row in float32, a block in float64 (the forward sources the tests above ran
  -- were compiled by the runner already, in both dtypes and group sizes)
  for _, case in ipairs({ { torch.float32, 5 }, { torch.float64, 1000 }, { torch.bfloat16, 9 } }) do
    do
      local dt, D = case[1], case[2]
      local fns = row_fns(D, dt)
      for _, q in ipairs(fns) do
        local steps, vm = row_steps(q[2], { randn({ 3, D }, dt) })
        T.eq(#steps, 1, q[1] .. ": one row step")
        for _, s in ipairs(steps) do
          compiles(q[1] .. " forward", (cg.row_source(s, vm)))
          -- every set of gradients the backward may be asked for: all, and each alone
          local sets = {}
          local n = #s.group.inputs
          local all = {}
          for k = 1, n do all[k] = true end
          if s.kind == "rowgroup" then
            all.x, all.w, all.b = true, s.norm.w ~= nil, s.norm.b ~= nil
            sets[#sets + 1] = { x = true }
            if s.norm.w then sets[#sets + 1] = { w = true, b = s.norm.b ~= nil } end
          else
            sets[#sets + 1] = { true }
          end
          sets[#sets + 1] = all
          for _, need in ipairs(sets) do compiles(q[1] .. " backward", (cg.row_backward_source(s, vm, need))) end
        end
      end
    end
  end
  T.ok(seen >= 60, "sources compiled: " .. seen)
end)

T.test("where a row kernel cannot be had: the ops run, the run a pointwise kernel, eager's values", function()
  local fn = function(x) return torch.softmax(torch.sigmoid(x) * 2 - x, -1) end
  local x = randn({ 6, 10 }, torch.float64)
  local saved_dir = C.cache_dir_override
  C.cache_dir_override = S.dir .. "/cache-fallback"
  local function check(what)
    torch.compiler.reset()
    local f = torch.compile(fn)
    c._kernel_counts(true)
    local r = f(x)
    local k = c._kernel_counts(true)
    T.ok(cg.counters.fallbacks >= 1, what .. ": fell back")
    T.eq(tostring(r.device), "cuda:0")
    T.ok(rel_err(r, fn(x)) <= 1e-12, what .. ": eager's values")
    T.ok(f:graphs()[1].steps > 1, what .. ": the softmax runs as itself")
    T.eq(k.cpu, 0, what .. ": no CPU kernel")
  end
  if nvrtc_version then
    cg.config.nvrtc_options = { "--no-such-option" }
    check("NVRTC fails")
    cg.config.nvrtc_options = {}
  end
  if host then
    local cxx = cg.config.cxx
    cg.config.cxx = "false"
    check("the host compiler fails")
    cg.config.cxx = cxx
  end
  C.cache_dir_override = saved_dir
  torch.compiler.reset()
end)

T.test("where the backward kernel cannot be had: the ops run under autograd, eager's gradients", function()
  local w = randn({ 8 }, torch.float64):requires_grad_()
  local fn = function(x) return torch.tanh(F.layer_norm(x, { 8 }, w)) * x end
  local saved_dir = C.cache_dir_override
  C.cache_dir_override = S.dir .. "/cache-backward"
  torch.compiler.reset()
  local f = torch.compile(fn)
  local x = randn({ 5, 8 }, torch.float64)
  torch.no_grad(function() f(x) end)          -- the forward kernel, without autograd
  local broken = false
  if nvrtc_version then cg.config.nvrtc_options = { "--no-such-option" }; broken = true
  elseif host then cg.config.cxx = "false"; broken = true end
  if broken then
    local xg = x:clone():requires_grad_()
    local y = f(xg)
    T.ok(y.grad_fn and not y.grad_fn:name():find("^Compiled"), "the ops under autograd: " .. tostring(y.grad_fn and y.grad_fn:name()))
    y:sum():backward()
    local g1, gw1 = xg.grad, w.grad
    xg.grad, w.grad = nil, nil
    fn(xg):sum():backward()
    T.ok(rel_err(g1, xg.grad) <= 1e-12 and rel_err(gw1, w.grad) <= 1e-12, "eager's gradients")
    w.grad = nil
  end
  cg.config.nvrtc_options = {}
  cg.config.cxx = os.getenv("CXX") or "c++"
  C.cache_dir_override = saved_dir
  torch.compiler.reset()
end)

T.test("float16 and bfloat16: read as float, statistics in double, rounded once at the store", function()
  -- eager rounds after every op, the kernel at its stores: eager's values within a few units
  -- in the last place (against float32's: the next test)
  local ULP = { [torch.float16] = 1e-3, [torch.bfloat16] = 8e-3 }
  -- float16 with a warp per row, bfloat16 with a block
  for _, case in ipairs({ { torch.float16, 40 }, { torch.bfloat16, 700 } }) do
    do
      local dt, D = case[1], case[2]
      local fns = row_fns(D, dt)
      for _, q in ipairs(fns) do
        local what = ("%s %s D=%d"):format(q[1], dt.name, D)
        local x = randn({ 30, D }, dt)
        local f = same(what, q[2], x, 8 * ULP[dt])
        local xg = x:clone():requires_grad_()
        local y = f(xg)
        T.eq(y.grad_fn and y.grad_fn:name(), q[4], what .. ": one autograd node")
        y:backward(torch.randn(y.shape):to(dt):cuda())
        T.eq(xg.grad.dtype, dt, what .. ": the gradient's dtype")
        T.ok(torch.isfinite(xg.grad):all():item(), what .. ": a finite gradient")
      end
    end
  end
end)

T.test("16-bit gradients against float32's, and 16-bit rows on the CPU stay ops", function()
  local ULP = { [torch.float16] = 1e-3, [torch.bfloat16] = 8e-3 }
  for _, dt in ipairs({ torch.float16, torch.bfloat16 }) do
    local D = 50
    local w32, m32 = torch.randn(D), torch.randn(D)
    local x32 = torch.randn(20, D)
    local function fns(w, m)
      return {
        { "layer_norm -> run", function(x) return torch.tanh(F.layer_norm(x, { D }, w)) * 2 + x end },
        { "run -> softmax", function(x) return torch.softmax(x * 0.5 + m, -1) end },
        { "run -> log_softmax", function(x) return torch.log_softmax(torch.sigmoid(x) * 4, -1) end },
        { "run -> sum(-1)", function(x) return (x * m + 1):sum(-1) end },
        { "run -> mean()", function(x) return torch.exp(x * 0.5):mean() end },
      }
    end
    local lo = fns(w32:to(dt):cuda(), m32:to(dt):cuda())
    -- the float32 reference on the values the 16-bit tensors hold
    local ref = fns(w32:to(dt):float():cuda(), m32:to(dt):float():cuda())
    for i, q in ipairs(lo) do
      local what = q[1] .. " " .. dt.name
      local f = torch.compile(q[2])
      local x = x32:to(dt):cuda():requires_grad_()
      local y = f(x)
      T.ok(y.grad_fn and y.grad_fn:name():find("^Compiled"), what .. ": fused")
      local gy = torch.randn(y.shape)
      y:backward(gy:to(dt):cuda())
      local xf = x:detach():float():requires_grad_()
      local yf = ref[i][2](xf)
      T.ok(rel_err(y, yf) <= 4 * ULP[dt], what .. ": the float32 result rounded, within " .. rel_err(y, yf))
      yf:backward(gy:to(dt):float():cuda())
      T.ok(rel_err(x.grad, xf.grad) <= 8 * ULP[dt], what .. ": the float32 gradient, within " .. rel_err(x.grad, xf.grad))
      -- on the CPU: the ops (and the run's ops: no 16-bit C kernels), eager's values
      local cpu = fns(w32:to(dt), m32:to(dt))[i][2]
      local fc = torch.compile(cpu)
      local xc = x32:to(dt)
      T.ok(torch.equal(fc(xc), cpu(xc)), what .. " on the CPU: eager's values")
      T.eq(fc:graphs()[1].kernels, 0, what .. " on the CPU: no kernel")
    end
  end
end)

T.test("cases left to the ops: a value moved between devices, a sum over another dim", function()
  local function check(what, fn, x, tol)
    local f = torch.compile(fn)
    c._kernel_counts(true)
    local r = f(x)
    local k = c._kernel_counts(true)
    T.eq(tostring(r.device), tostring(x.device), what .. ": device")
    T.ok(rel_err(r, fn(x)) <= tol, what .. ": eager's values")
    T.eq(k.cpu, 0, what .. ": no CPU kernel")
    return f
  end
  check("moved to the device", function(x) return torch.softmax((x:cpu() * 2 + 1):cuda(), -1) end,
    randn({ 4, 9 }, torch.float32), 1e-6)
  local f = check("sum over the first dim", function(x) return (x * 2 + 1):sum(1) end, randn({ 4, 9 }, torch.float32), 1e-6)
  T.eq(f:graphs()[1].kernels .. " " .. f:graphs()[1].steps, "1 2", "a pointwise kernel and the sum")
end)

S.remove()
T.done()
