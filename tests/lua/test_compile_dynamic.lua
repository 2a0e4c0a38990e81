-- torch.compile with dynamic shapes: kernels that take their sizes as parameters, the
-- `dynamic` option (true, false, nil = automatic dynamic), the bounded cache of entries.
local T = require "testing"
local nn = require "nn"
local F = nn.functional
local C = require "compile"

-- a cache of our own, empty, so that kernels_compiled counts real compiles
local S = T.scratch()
C.cache_dir_override = S.dir .. "/cache"

local function rel_err(a, b)
  local d = (a - b):abs():max():item()
  local s = b:abs():max():item()
  return d / math.max(s, 1e-30)
end

local function tol(dt) return dt == torch.float32 and 1e-5 or 1e-12 end

-- the kernels had (compiled, or loaded from the disk cache) so far
local function kernels() return C.counters.kernels_compiled + C.counters.cache_hits end

local SIZES = { 1, 2, 3, 5, 8, 13, 16, 31, 64, 100 }

T.test("pointwise with broadcasting: eager's values at every size, one kernel for all", function()
  local fn = function(x, b, c) return torch.sigmoid(x + b) * c - x * 0.5 end
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    torch.compiler.reset()
    local f = torch.compile(fn, { dynamic = true })
    local k0 = kernels()
    for _, B in ipairs(SIZES) do
      local x = torch.randn(B, 7, 33, { dtype = dt })
      local b, c = torch.randn(33, { dtype = dt }), torch.randn(7, 1, { dtype = dt })
      local e = rel_err(f(x, b, c), fn(x, b, c))
      T.ok(e < tol(dt), ("%s B=%d: relative error %g"):format(dt, B, e))
    end
    T.eq(kernels() - k0, 1, tostring(dt))
    T.eq(C.counters.dynamic_traces, #SIZES)
    for _, g in ipairs(f:graphs()) do T.ok(g.dynamic) T.eq(g.kernels, 1) end
  end
end)

T.test("float64 arithmetic is exact at every size (the same operations in the same order)", function()
  local fn = function(x, y) return ((x + y) * 3 - y / 7) * x - 2.5 end
  local f = torch.compile(fn, { dynamic = true })
  for _, n in ipairs({ 10, 100, 1000, 4097, 33333 }) do
    local a, b = torch.randn(n, { dtype = torch.float64 }), torch.randn(n, { dtype = torch.float64 })
    T.eq((f(a, b) - fn(a, b)):abs():max():item(), 0.0)
    -- a row broadcast against a matrix
    local m = torch.randn(3, n, { dtype = torch.float64 })
    T.eq((f(m, b) - fn(m, b)):abs():max():item(), 0.0)
  end
end)

T.test("non-contiguous inputs: transposed and sliced, at several sizes", function()
  local fn = function(x, y) return torch.tanh(x) * y + 1 end
  local f = torch.compile(fn, { dynamic = true })
  for _, n in ipairs({ 5, 9, 40 }) do
    local xt = torch.randn(n + 3, n, { dtype = torch.float64 }):t()
    local ys = torch.randn(n, 2 * (n + 3), { dtype = torch.float64 }):narrow(2, 2, n + 3)
    T.ok(rel_err(f(xt, ys), fn(xt, ys)) < 1e-12)
    T.ok(rel_err(f(ys, xt), fn(ys, xt)) < 1e-12)
  end
end)

T.test("random shapes, broadcasts and layouts: eager's values and gradients, dynamic and default", function()
  -- a reproducible stream of cases: rank 1-4, sizes 1-6, each input broadcast on some dims
  -- (size 1 or a missing leading dim) and some transposed; each case called at 3 sizes
  local seed = 12345
  local function rnd(n) seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n + 1 end
  local fn = function(a, b, c) return torch.sigmoid(a * b + 0.5) * c - a / 3 end
  local fns = { [true] = torch.compile(fn, { dynamic = true }), default = torch.compile(fn) }
  local old = C.config.cache_size_limit
  C.config.cache_size_limit = 1000
  for case = 1, 12 do
    local rank = rnd(4)
    local masks = {}
    for k = 1, 3 do
      masks[k] = { lead = k == 1 and 0 or rnd(rank) - 1, one = {}, t = rank >= 2 and rnd(3) == 1 }
      for d = 1, rank do masks[k].one[d] = k > 1 and rnd(3) == 1 end
    end
    for _ = 1, 3 do
      local shape = {}
      for d = 1, rank do shape[d] = rnd(6) end
      local args = {}
      for k = 1, 3 do
        local m, sh = masks[k], {}
        for d = m.lead + 1, rank do sh[#sh + 1] = m.one[d] and 1 or shape[d] end
        local t
        if m.t and #sh >= 2 then
          local n = #sh
          sh[n - 1], sh[n] = sh[n], sh[n - 1]
          t = torch.randn(sh, { dtype = torch.float64 }):transpose(n - 1, n)
        else
          t = torch.randn(sh, { dtype = torch.float64 })
        end
        args[k] = t:requires_grad_(true)
      end
      local ye = fn(table.unpack(args))
      local gy = torch.randn(ye.shape, { dtype = torch.float64 })
      local ge = torch.autograd.grad({ ye }, args, { gy })
      for mode, f in pairs(fns) do
        local y = f(table.unpack(args))
        local what = ("case %d %s %s"):format(case, tostring(mode), T.fmt(shape))
        T.ok(rel_err(y, ye) < 1e-12, what)
        local g = torch.autograd.grad({ y }, args, { gy })
        for k = 1, 3 do T.ok(rel_err(g[k], ge[k]) < 1e-11, what .. " grad " .. k) end
      end
    end
  end
  C.config.cache_size_limit = old
end)

T.test("backward of a pointwise run at many sizes: eager's gradients, one backward kernel", function()
  local fn = function(x, b) return (torch.sigmoid(x * b) + x):sum() end
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    torch.compiler.reset()
    local f = torch.compile(function(x, b) return torch.sigmoid(x * b) + x end, { dynamic = true })
    local k0 = kernels()
    for _, B in ipairs({ 2, 3, 6, 17, 40 }) do
      local x = torch.randn(B, 19, { dtype = dt, requires_grad = true })
      local b = torch.randn(19, { dtype = dt, requires_grad = true })
      f(x, b):sum():backward()
      local gx, gb = x.grad, b.grad
      x.grad, b.grad = nil, nil
      fn(x, b):backward()
      T.ok(rel_err(gx, x.grad) < tol(dt), "x.grad")
      T.ok(rel_err(gb, b.grad) < tol(dt), "b.grad")
    end
    T.eq(kernels() - k0, 2, "one forward and one backward kernel for every size")
  end
end)

T.test("gradcheck (float64) of a dynamic run at two sizes", function()
  local f = torch.compile(function(x, b) return torch.exp(x * 0.3) * b - torch.sin(x) end, { dynamic = true })
  for _, n in ipairs({ 3, 5 }) do
    local x = torch.randn(n, 4, { dtype = torch.float64, requires_grad = true })
    local b = torch.randn(4, { dtype = torch.float64, requires_grad = true })
    T.ok(torch.autograd.gradcheck(f, { x, b }), "gradcheck at " .. n)
  end
end)

T.test("layer_norm -> gelu (+ residual) row kernels over many sizes, forward and backward", function()
  local fn = function(x, w, b, r) return F.gelu(F.layer_norm(x, { x.shape[#x.shape] }, w, b)) + r end
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    torch.compiler.reset()
    local f = torch.compile(fn, { dynamic = true })
    local k0
    for i, shape in ipairs({ { 2, 3, 16 }, { 4, 5, 16 }, { 3, 7, 48 }, { 1, 9, 40 }, { 6, 2, 24 } }) do
      local D = shape[3]
      local x = torch.randn(shape, { dtype = dt, requires_grad = true })
      local w = torch.randn(D, { dtype = dt, requires_grad = true })
      local b = torch.randn(D, { dtype = dt, requires_grad = true })
      local r = torch.randn(shape, { dtype = dt, requires_grad = true })
      local y = f(x, w, b, r)
      local ye = fn(x, w, b, r)
      T.ok(rel_err(y, ye) < tol(dt), ("forward %s"):format(T.fmt(shape)))
      local gy = torch.randn(shape, { dtype = dt })
      local g1 = torch.autograd.grad({ y }, { x, w, b, r }, { gy })
      local g2 = torch.autograd.grad({ ye }, { x, w, b, r }, { gy })
      for k = 1, 4 do T.ok(rel_err(g1[k], g2[k]) < (dt == torch.float32 and 1e-4 or 1e-11), ("grad %d %s"):format(k, T.fmt(shape))) end
      if i == 1 then k0 = kernels() end
    end
    -- the row kernel and its backward were made at the first size (B = 1 changes no structure here)
    T.eq(kernels() - k0, 0, "no kernel after the first size")
  end
end)

T.test("softmax with a causal mask (attention scores) at many sequence lengths", function()
  local mask_full = torch.zeros(32, 32)
  for i = 1, 32 do for j = i + 1, 32 do mask_full[i][j] = -math.huge end end
  local fn = function(s, mask)
    local L = s.shape[3]
    return F.softmax(s * 0.125 + mask:narrow(1, 1, L):narrow(2, 1, L), -1)
  end
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    torch.compiler.reset()
    local mask = mask_full:to(dt)
    local f = torch.compile(fn, { dynamic = true })
    local k0
    for i, L in ipairs({ 4, 7, 12, 20, 32, 9 }) do
      local s = torch.randn(2, 3, L, L, { dtype = dt, requires_grad = true })
      local y, ye = f(s, mask), fn(s, mask)
      T.ok(rel_err(y, ye) < tol(dt), "forward L=" .. L)
      local gy = torch.randn(2, 3, L, L, { dtype = dt })
      local g1 = torch.autograd.grad({ y }, { s }, { gy })[1]
      local g2 = torch.autograd.grad({ ye }, { s }, { gy })[1]
      T.ok(rel_err(g1, g2) < tol(dt) * 10, "backward L=" .. L)
      if i == 1 then k0 = kernels() end
    end
    T.eq(kernels() - k0, 0, "no kernel after the first length")
  end
end)

T.test("run -> sum / mean kernels (rows and all elements) at many sizes, forward and backward", function()
  local fns = {
    function(x, b) return (x * b + 1):sum(-1) end,
    function(x, b) return torch.exp(x - b):mean(-1, { keepdim = true }) end,
    function(x, b) return (x * b):sum() end,
    function(x, b) return (x * x + b):mean() end,
  }
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    for fi, fn in ipairs(fns) do
      torch.compiler.reset()
      local f = torch.compile(fn, { dynamic = true })
      local k0
      for i, B in ipairs({ 2, 3, 9, 30, 70 }) do
        local x = torch.randn(B, 21, { dtype = dt, requires_grad = true })
        local b = torch.randn(21, { dtype = dt, requires_grad = true })
        local y, ye = f(x, b), fn(x, b)
        T.ok(rel_err(y, ye) < tol(dt), ("fn %d B=%d forward"):format(fi, B))
        local gy = torch.randn(ye.shape, { dtype = dt })
        local g1 = torch.autograd.grad({ y }, { x, b }, { gy })
        local g2 = torch.autograd.grad({ ye }, { x, b }, { gy })
        T.ok(rel_err(g1[1], g2[1]) < tol(dt), ("fn %d B=%d grad x"):format(fi, B))
        T.ok(rel_err(g1[2], g2[2]) < tol(dt) * 10, ("fn %d B=%d grad b"):format(fi, B))
        if i == 1 then k0 = kernels() end
      end
      T.eq(kernels() - k0, 0, ("fn %d: no kernel after the first size"):format(fi))
    end
  end
  -- a sum over all elements of a long 1-D tensor (blocks of elements) at several lengths
  local f = torch.compile(function(x) return (x * 2):sum() end, { dynamic = true })
  for _, n in ipairs({ 10000, 20001, 50000 }) do
    local x = torch.randn(n, { dtype = torch.float64 })
    T.ok(rel_err(f(x), (x * 2):sum()) < 1e-12, "1-D sum of " .. n)
  end
end)

T.test("an MLP module with a varying batch (default: automatic dynamic)", function()
  torch.compiler.reset()
  torch.manual_seed(1)
  local model = nn.Sequential(nn.Linear(12, 32), nn.GELU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 5))
  local cm = torch.compile(model)
  local k_after_second
  for i, B in ipairs({ 16, 24, 7, 64, 3, 50, 33 }) do
    local x = torch.randn(B, 12)
    local y = cm(x)
    T.ok(rel_err(y, model(x)) < 1e-5, "forward B=" .. B)
    -- backward: the parameters' gradients
    for _, p in ipairs(model:parameters()) do p.grad = nil end
    y:pow(2):sum():backward()
    local g1 = {}
    for k, p in ipairs(model:parameters()) do g1[k] = p.grad; p.grad = nil end
    model(x):pow(2):sum():backward()
    for k, p in ipairs(model:parameters()) do T.ok(rel_err(g1[k], p.grad) < 1e-4, ("grad %d B=%d"):format(k, B)) end
    if i == 2 then k_after_second = kernels() end
  end
  T.eq(C.counters.dynamic_traces, 6, "the second batch size on is dynamic")
  T.eq(kernels() - k_after_second, 0, "no kernel compiled after the first dynamic trace")
  local g = cm:graphs()
  T.ok(not g[1].dynamic, "the first call is specialized")
  T.ok(g[2].dynamic)
end)

T.test("a GPT (bench/gpt_model.lua) with varying batch and sequence length: eager's loss and gradients", function()
  local ok, GPT = pcall(dofile, "bench/gpt_model.lua")
  if not ok then T.skip("GPT", "bench/gpt_model.lua not found from " .. os.getenv("PWD")); return end
  torch.compiler.reset()
  torch.manual_seed(2)
  local model = GPT({ vocab_size = 50, block_size = 16, n_layer = 1, n_head = 2, n_embd = 16 })
  local cm = torch.compile(model, { dynamic = true })
  local k_first
  for i, bt in ipairs({ { 2, 8 }, { 3, 8 }, { 2, 13 }, { 5, 16 }, { 1, 11 }, { 4, 5 } }) do
    local idx = torch.randint(1, 51, bt, { dtype = torch.int64 })
    local tgt = torch.randint(1, 51, bt, { dtype = torch.int64 })
    for _, p in ipairs(model:parameters()) do p.grad = nil end
    local loss = cm(idx, tgt)
    loss:backward()
    local g1 = {}
    for k, p in ipairs(model:parameters()) do g1[k] = p.grad; p.grad = nil end
    local le = model(idx, tgt)
    le:backward()
    T.ok(math.abs(loss:item() - le:item()) < 1e-5 * math.abs(le:item()), ("loss %s"):format(T.fmt(bt)))
    for k, p in ipairs(model:parameters()) do
      if p.grad then T.ok(rel_err(g1[k], p.grad) < 1e-4, ("grad %d %s"):format(k, T.fmt(bt))) end
    end
    if i == 1 then k_first = kernels() end
  end
  -- B = 1 changes which dims broadcast (a specialized size): a few kernels of its own at most
  T.ok(kernels() - k_first <= 8, ("kernels after the first sizes: %d"):format(kernels() - k_first))
end)

T.test("default (dynamic = nil): the first call specializes, a size change makes the function dynamic", function()
  torch.compiler.reset()
  local f = torch.compile(function(x, b) return torch.relu(x + b) * 2 end)
  local b = torch.randn(9)
  local function check(B) local x = torch.randn(B, 9); T.ok(rel_err(f(x, b), torch.relu(x + b) * 2) < 1e-6) end
  check(4)
  T.eq(C.counters.dynamic_traces, 0)
  local k1 = kernels()
  check(4)
  T.eq(C.counters.traces, 1)
  check(6)                                   -- only sizes changed: traced again, dynamic
  T.eq(C.counters.dynamic_traces, 1)
  T.eq(C.counters.recompiles, 0)
  local k2 = kernels()
  -- (at most one: here the dynamic source, with the row length 9 still a constant, is the
  -- specialized one's text, which goes by rows as well, so the kernel compiled first serves)
  T.ok(k2 - k1 <= 1, "the dynamic kernel")
  for _, B in ipairs({ 7, 8, 20, 33, 2, 100, 6 }) do check(B) end
  T.eq(kernels(), k2, "no C compile for new sizes")
  T.eq(C.counters.dynamic_traces, 7)         -- 6 was seen: no trace
  check(4)                                   -- the specialized entry still serves its size
  T.eq(C.counters.traces, 8)
  -- a dtype change is another kind: specialized first, as for a new function
  local x = torch.randn(5, 9, { dtype = torch.float64 })
  T.ok(rel_err(f(x, b:double()), torch.relu(x + b:double()) * 2) < 1e-12)
  T.eq(C.counters.recompiles, 1)
  -- a rank change is another kind too
  T.ok(rel_err(f(torch.ones(2, 3, 9), b), torch.relu(torch.ones(2, 3, 9) + b) * 2) < 1e-6)
  T.eq(C.counters.recompiles, 2)
end)

T.test("automatic dynamic keeps unchanged sizes constant in the kernels", function()
  torch.compiler.reset()
  local f = torch.compile(function(x, b) return torch.sigmoid(x + b) end)
  f(torch.randn(4, 37), torch.randn(37))
  f(torch.randn(6, 37), torch.randn(37))
  -- the dynamic entry's kernel: the last dim (37) is a constant, the rows a parameter or none
  local g = f:graphs()
  T.eq(#g, 2)
  T.ok(g[2].dynamic)
  -- the kernel of the dynamic entry is not the specialized one (it has no row count in it):
  -- a third size compiles nothing
  local k = kernels()
  f(torch.randn(11, 37), torch.randn(37))
  T.eq(kernels(), k)
  -- a change of the other dim marks it too: one more kernel, then none
  f(torch.randn(11, 40), torch.randn(40))
  f(torch.randn(12, 41), torch.randn(41))
  T.eq(kernels(), k + 1)
end)

T.test("a dynamic kernel's source has no sizes in it: the same text at every size", function()
  local trace, fuse = require "compile.trace", require "compile.fuse"
  local fn = function(x, b, c) return torch.exp(x * b) - c end
  local function source(dyn, B, D, dt)
    local g = trace.trace(fn, table.pack(torch.randn(B, D, { dtype = dt }), torch.randn(D, { dtype = dt }),
      torch.randn(B, 1, { dtype = dt })))
    local steps = fuse.plan(g)
    T.eq(steps[1].kind, "group")
    local sz = fuse.sizes(dyn)
    return fuse.source(steps[1].group, g.value_meta, "k", sz), sz.values
  end
  local all = function() return true end
  local s1, v1 = source(all, 4, 37, torch.float32)
  local s2, v2 = source(all, 9, 50, torch.float32)
  T.eq(s1, s2)
  local body = s1:sub(s1:find("void k(", 1, true), -1)          -- (past the shared helpers)
  T.ok(not body:find("37", 1, true) and not body:find("50", 1, true), body)
  T.eq(table.concat(v1, ","), "37")
  T.eq(table.concat(v2, ","), "50")
  -- only the rows marked: the row length stays a constant, and no parameter is left
  local rows = function(v, what, d) return what == "shape" and d == 1 end
  local s3, v3 = source(rows, 4, 37, torch.float32)
  T.ok(s3:find("D = 37", 1, true))
  T.eq(#v3, 0)
  -- the dtype and the broadcast pattern stay in the source
  T.ok(source(all, 4, 37, torch.float64) ~= s1)
  -- without sizes(): the specialized source, with constants (by rows: no division per element)
  local g = trace.trace(fn, table.pack(torch.randn(4, 37), torch.randn(37), torch.randn(4, 1)))
  local sp = fuse.source(fuse.plan(g)[1].group, g.value_meta, "k")
  T.ok(sp:find("D = 37", 1, true) and not sp:find("% 37", 1, true), sp)
end)

T.test("dynamic = false recompiles at each size and runs eagerly past cache_size_limit", function()
  torch.compiler.reset()
  local old = C.config.cache_size_limit
  C.config.cache_size_limit = 3
  local f = torch.compile(function(x) return x * 2 + 1 end, { dynamic = false })
  for B = 1, 6 do
    local x = torch.randn(B, 4)
    T.ok(rel_err(f(x), x * 2 + 1) < 1e-6)
  end
  T.eq(#f:graphs(), 3)
  T.eq(C.counters.traces, 3, "traced 3 times, then eager")
  T.eq(C.counters.recompiles, 2)
  T.eq(C.counters.dynamic_traces, 0)
  C.config.cache_size_limit = old
end)

T.test("dynamic sizes are not bounded by cache_size_limit; the LRU bound drops the oldest", function()
  torch.compiler.reset()
  local old, oldd = C.config.cache_size_limit, C.config.dynamic_cache_limit
  C.config.cache_size_limit, C.config.dynamic_cache_limit = 2, 4
  local f = torch.compile(function(x) return torch.exp(x) - 1 end, { dynamic = true })
  local k0 = kernels()
  for B = 2, 11 do
    local x = torch.randn(B, 3)
    T.ok(rel_err(f(x), torch.exp(x) - 1) < 1e-5, "B=" .. B)
  end
  T.eq(#f:graphs(), 4)
  T.eq(C.counters.dynamic_evictions, 6)
  T.eq(kernels() - k0, 1)
  -- the most recent sizes are kept: no trace; an evicted one is traced again
  local t = C.counters.traces
  f(torch.randn(11, 3)); f(torch.randn(10, 3))
  T.eq(C.counters.traces, t)
  f(torch.randn(2, 3))
  T.eq(C.counters.traces, t + 1)
  T.eq(kernels() - k0, 1)
  C.config.cache_size_limit, C.config.dynamic_cache_limit = old, oldd
end)

T.test("a dynamic kernel comes from the disk cache in a new process (after reset)", function()
  torch.compiler.reset()
  local fn = function(x, y) return torch.cos(x) * y - 3 end
  local f = torch.compile(fn, { dynamic = true })
  f(torch.randn(5, 6), torch.randn(6))
  torch.compiler.reset()
  local c0 = C.counters.kernels_compiled
  f(torch.randn(9, 6), torch.randn(6))
  T.eq(C.counters.kernels_compiled, c0)
  T.eq(C.counters.cache_hits, 1)
end)

T.test("a function with a graph break, dynamic or not, gives eager's values at every size", function()
  local fn = function(x)
    local y = torch.sigmoid(x * 2) + 1
    if y:sum():item() > 1.5 * y:numel() then return y * 3 - 1 end
    return y / 2 + x
  end
  for _, mode in ipairs({ true, false, "default" }) do
    torch.compiler.reset()
    local f = torch.compile(fn, { dynamic = mode ~= "default" and mode or nil })
    for _, B in ipairs({ 3, 8, 5, 12, 3 }) do
      for _, sgn in ipairs({ 1, -1 }) do
        local x = torch.rand(B, 6, { dtype = torch.float64 }) * sgn
        T.ok(rel_err(f(x), fn(x)) < 1e-12, ("%s B=%d"):format(tostring(mode), B))
      end
    end
  end
end)

T.test("dynamic = true: the segments of a function that breaks compile their kernels once", function()
  torch.compiler.reset()
  local fn = function(x, b)
    local y = torch.sigmoid(x * 2 + b)
    if y:sum():item() > 0 then return torch.tanh(y) * 3 - b end
    return y
  end
  local f = torch.compile(fn, { dynamic = true })
  local k0
  for i, B in ipairs({ 3, 5, 8, 13, 21 }) do
    local x, b = torch.randn(B, 10, { dtype = torch.float64 }), torch.randn(10, { dtype = torch.float64 })
    T.ok(rel_err(f(x, b), fn(x, b)) < 1e-12, "B=" .. B)
    if i == 1 then k0 = kernels() end
  end
  T.ok(C.counters.graph_breaks > 0)
  T.eq(kernels(), k0, "no kernel after the first size")
end)

T.test("a module switched between train and eval at the same sizes keeps an entry for each", function()
  torch.compiler.reset()
  torch.manual_seed(3)
  local model = nn.Sequential(nn.Linear(6, 8), nn.Dropout(0.5), nn.Linear(8, 3))
  local cm = torch.compile(model, { dynamic = true })
  for round = 1, 3 do
    for _, B in ipairs({ 4, 9 }) do
      model:train()
      local y = cm(torch.randn(B, 6))
      T.eq(y.shape[1], B)
      model:eval()
      local x = torch.randn(B, 6)
      T.ok(rel_err(cm(x), model(x)) < 1e-6, ("eval B=%d round %d"):format(B, round))
    end
    if round == 1 then T.eq(C.counters.dynamic_traces, 4) end
  end
  T.eq(C.counters.dynamic_traces, 4, "no trace after the first round")
end)

T.test("a global that changes at each call: eager's values, the traces at one size bounded", function()
  torch.compiler.reset()
  local f = torch.compile(function(x) return x * DYNAMIC_TEST_SCALE + 1 end, { dynamic = true })
  for i = 1, 10 do
    DYNAMIC_TEST_SCALE = i
    local x = torch.randn(4, 3)
    T.ok(rel_err(f(x), x * i + 1) < 1e-6, "scale " .. i)
  end
  T.eq(C.counters.traces, 4, "4 entries at one size, then eager")
  -- by default, a guard failing on something else than sizes does not make the function
  -- dynamic: specialized entries, up to cache_size_limit
  torch.compiler.reset()
  local g = torch.compile(function(x) return x * DYNAMIC_TEST_SCALE + 1 end)
  for i = 1, 3 do
    DYNAMIC_TEST_SCALE = i
    local x = torch.randn(4, 3)
    T.ok(rel_err(g(x), x * i + 1) < 1e-6, "scale " .. i)
  end
  T.eq(C.counters.dynamic_traces, 0)
  T.eq(C.counters.recompiles, 2)
  DYNAMIC_TEST_SCALE = nil
end)

T.test("bad values of the dynamic option are errors naming torch.compile and dynamic", function()
  for _, v in ipairs({ "yes", 1, 0, {} }) do
    T.raises(function() torch.compile(function(x) return x end, { dynamic = v }) end, "torch.compile: 'dynamic' must be")
  end
  T.raises(function() torch.compile(function(x) return x end, { dynamc = true }) end, "dynamc")
  -- the three good values
  for _, v in ipairs({ true, false }) do T.ok(torch.compile(function(x) return x end, { dynamic = v })) end
  T.ok(torch.compile(function(x) return x end, { dynamic = nil }))
end)

T.test("LUTORCH_COMPILE_DEBUG=1 logs why a function became dynamic", function()
  local exe = arg and arg[-1]
  if not exe or not exe:find("lutorch") then T.skip("debug log", "the lutorch program's path is not known"); return end
  local script = S.dir .. "/dyn_log.lua"
  local fh = io.open(script, "w")
  fh:write([[
local f = torch.compile(function(x) return x * 2 + 1 end)
f(torch.randn(8, 3)); f(torch.randn(16, 3)); f(torch.randn(5, 3))
]])
  fh:close()
  local p = io.popen(("LUTORCH_COMPILE_DEBUG=1 LUTORCH_COMPILE_CACHE='%s' '%s' '%s' 2>&1"):format(S.dir .. "/cache", exe, script))
  local out = p:read("a")
  p:close()
  T.ok(out:find("size of argument 1, dim 1 changed 8 -> 16: dims marked dynamic", 1, true), out)
  T.ok(out:find("new sizes (argument 1 float32([5, 3])", 1, true), out)
end)

T.done()
