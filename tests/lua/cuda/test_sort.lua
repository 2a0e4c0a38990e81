-- tests/lua/cuda/test_sort.lua — the CUDA sorting kernels (src/cuda/sort.c over
-- src/cuda/kernels/sort.cu) against the CPU: sort, argsort, topk, kthvalue, median,
-- nanmedian, mode and unique, with stability, NaN order, descending, dims, non-contiguous
-- and large rows. Runs under the fake driver (the kernels' host build: the per-row merge
-- sort) and unchanged on a real GPU (rows of 64 and more take CUB's radix sort there).
local T = require "testing"
local c = torch.cuda

if not c.is_available() then
  T.skip("cuda sorting kernels", "CUDA is not available: " .. tostring(c.unavailable_reason()))
  T.done()
  return
end

local DT = { torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16,
             torch.int8, torch.uint8, torch.bool }
local FLOATS = { torch.float32, torch.float64, torch.float16, torch.bfloat16 }

-- few distinct values, so ties (stability) are everywhere
local function gen(dt, shape)
  local x = (torch.randn(shape) * 3):round()
  if dt == torch.bool then return x:gt(0) end
  if dt == torch.uint8 then x = x:abs() end
  return x:to(dt)
end

-- with NaNs, -0 and +0, infinities
local function gen_nan(dt, shape)
  local x = (torch.randn(shape) * 2):round():to(dt)
  local r = torch.rand(shape)
  x = x:masked_fill(r:lt(0.1), 0 / 0):masked_fill(r:gt(0.95), -0.0):masked_fill(r:gt(0.9):logical_and(r:le(0.92)), 1 / 0)
  return x
end

local H = require "cuda.check"
local EXACT = {}   -- sorting moves values: equal bits
local function close(got, want, what) H.close(got, want, what, EXACT) end
local function check(what, f, args, mode) H.check(what, f, args, mode, EXACT) end

local function pair(f) return function(...) return { f(...) } end end

T.test("sort and argsort: dtypes, sizes, dims, descending, stable ties", function()
  for _, dt in ipairs(DT) do
    for _, n in ipairs({ 0, 1, 31, 1025 }) do
      local x = gen(dt, { 3, n })
      local w = tostring(dt) .. " n=" .. n
      check("sort " .. w, pair(function(a) return a:sort() end), { x })
      check("sort descending " .. w, pair(function(a) return a:sort(2, true) end), { x })
      check("sort dim 1 " .. w, pair(function(a) return a:sort(1) end), { x })
      check("argsort " .. w, function(a) return a:argsort() end, { x })
    end
  end
  local x = gen(torch.float32, { 4, 5, 6 })
  check("sort middle dim", pair(function(a) return a:sort(2) end), { x })
  check("sort transposed", pair(function(a) return a:transpose(1, 3):sort(-1, true) end), { x })
  check("sort stepped", pair(function(a) return a[{ {}, {}, { 1, 6, 2 } }]:sort(3) end), { x })
  check("sort 0-d", pair(function(a) return a:sort() end), { torch.tensor(2.5) })
  check("sort stable flag", pair(function(a) return a:sort(1, false, { stable = true }) end), { gen(torch.int64, { 40 }) })
  check("sort large row", pair(function(a) return a:sort() end), { gen(torch.float32, { 1024 * 1024 + 3 }) })
  check("sort many rows", pair(function(a) return a:sort(1, true) end), { gen(torch.int32, { 70, 300 }) })
  check("sort bad dim", pair(function(a) return a:sort(3) end), { x[1] })
end)

T.test("sort orders NaN last (first descending) and keeps -0/+0 ties stable", function()
  for _, dt in ipairs(FLOATS) do
    for _, n in ipairs({ 31, 100, 1025 }) do
      local x = gen_nan(dt, { 2, n })
      check("sort NaN " .. tostring(dt) .. " n=" .. n, pair(function(a) return a:sort() end), { x })
      check("sort NaN desc " .. tostring(dt) .. " n=" .. n, pair(function(a) return a:sort(2, true) end), { x })
    end
  end
  local d = torch.tensor({ 0 / 0, 1.0, -0.0, 0.0, -1 / 0, 0 / 0, -0.0 }):cuda()
  local v, i = d:sort()
  T.eq(i:cpu():totable(), { 5, 3, 4, 7, 2, 1, 6 })
  local _, j = d:sort(1, true)
  T.eq(j:cpu():totable(), { 1, 6, 2, 3, 4, 7, 5 })
  T.ok(v ~= nil)
end)

T.test("topk, kthvalue, median, nanmedian, mode", function()
  for _, dt in ipairs(DT) do
    local x = gen(dt, { 5, 33 })
    local w = tostring(dt)
    check("topk " .. w, pair(function(a) return a:topk(4) end), { x })
    check("topk smallest dim 1 " .. w, pair(function(a) return a:topk(2, 1, false) end), { x })
    check("kthvalue " .. w, pair(function(a) return a:kthvalue(7) end), { x })
    check("median dim " .. w, pair(function(a) return a:median(2) end), { x })
    check("median all " .. w, function(a) return a:median() end, { x })
    check("mode " .. w, pair(function(a) return a:mode() end), { x })
    check("mode dim 1 keepdim " .. w, pair(function(a) return a:mode(1, true) end), { x })
  end
  for _, dt in ipairs(FLOATS) do
    local x = gen_nan(dt, { 6, 40 })
    x[2]:fill_(0 / 0)
    local w = tostring(dt)
    check("median NaN " .. w, pair(function(a) return a:median(2) end), { x })
    check("nanmedian " .. w, pair(function(a) return a:nanmedian(2) end), { x })
    check("nanmedian keepdim " .. w, pair(function(a) return a:nanmedian(1, true) end), { x })
    check("median all NaN " .. w, function(a) return a:median() end, { x })
    check("nanmedian all " .. w, function(a) return a:nanmedian() end, { x })
    check("topk NaN " .. w, pair(function(a) return a:topk(5) end), { x })
    check("kthvalue NaN " .. w, pair(function(a) return a:kthvalue(3, 2, true) end), { x })
  end
  local x = gen(torch.float64, { 4, 7 })
  check("topk k=0", pair(function(a) return a:topk(0) end), { x })
  check("topk k too big", pair(function(a) return a:topk(8) end), { x })
  check("kthvalue k=0", pair(function(a) return a:kthvalue(0) end), { x })
  check("topk transposed", pair(function(a) return a:t():topk(3) end), { x })
  check("median empty", function(a) return a:median() end, { torch.zeros(0) })
  check("kthvalue 0-d", pair(function(a) return a:kthvalue(1) end), { torch.tensor(3.0) })
  check("mode large row", pair(function(a) return a:mode() end), { gen(torch.int64, { 100003 }) })
end)

T.test("unique: sorted values, inverse, counts", function()
  for _, dt in ipairs(DT) do
    for _, n in ipairs({ 0, 1, 31, 1025 }) do
      check("unique " .. tostring(dt) .. " n=" .. n,
            pair(function(a) return torch.unique(a, { return_inverse = true, return_counts = true }) end),
            { gen(dt, { 2, n }) })
    end
  end
  check("unique NaN", pair(function(a) return torch.unique(a, { return_inverse = true, return_counts = true }) end),
        { gen_nan(torch.float32, { 50 }) })
  check("unique transposed", pair(function(a) return torch.unique(a:t(), { return_inverse = true }) end),
        { gen(torch.int32, { 5, 7 }) })
  check("unique large", pair(function(a) return torch.unique(a, { return_counts = true }) end),
        { gen(torch.int64, { 1024 * 1024 + 3 }) })
  -- along a dim: no CUDA kernel; the CPU's runs under the fake
  check("unique dim", pair(function(a) return torch.unique(a, { dim = 1 }) end), { gen(torch.int64, { 6, 2 }) }, "fallback")
end)

T.test("searchsorted, bucketize, isin", function()
  for _, dt in ipairs({ torch.float32, torch.float64, torch.float16, torch.int64, torch.int32, torch.uint8 }) do
    local seq = (gen(dt, { 40 }):sort())
    local x = gen(dt, { 3, 17 })
    local w = tostring(dt)
    check("searchsorted " .. w, function(s, v) return torch.searchsorted(s, v) end, { seq, x })
    check("searchsorted right int32 " .. w, function(s, v) return torch.searchsorted(s, v, { right = true, out_int32 = true }) end,
          { seq, x })
    check("bucketize " .. w, function(v, b) return torch.bucketize(v, b) end, { x, seq })
    check("isin " .. w, function(a, b) return torch.isin(a, b) end, { x, gen(dt, { 9 }) })
    check("isin invert " .. w, function(a, b) return torch.isin(a, b, { invert = true }) end, { x, gen(dt, { 9 }) })
  end
  local seq = (torch.randn(4, 30):sort())
  check("searchsorted batched", function(s, v) return torch.searchsorted(s, v, { side = "right" }) end,
        { seq, torch.randn(4, 7) })
  local raw = torch.randn(50)
  local order = raw:argsort()
  check("searchsorted sorter", function(s, v, o) return torch.searchsorted(s, v, { sorter = o }) end,
        { raw, torch.randn(13), order })
  check("searchsorted bad sorter", function(s, v, o) return torch.searchsorted(s, v, { sorter = o }) end,
        { raw, torch.randn(3), order:clone():fill_(51) })
  check("searchsorted NaN", function(s, v) return torch.searchsorted(s, v) end,
        { torch.tensor({ 1.0, 2.0, 0 / 0 }), torch.tensor({ 0 / 0, 1.5, 3.0 }) })
  check("searchsorted a number", function(s) return torch.searchsorted(s, 0.25) end, { (torch.randn(20):sort()) })
  check("searchsorted shape error", function(s, v) return torch.searchsorted(s, v) end, { torch.randn(2, 5), torch.randn(3, 2) })
  check("searchsorted bad side", function(s, v) return torch.searchsorted(s, v, { side = "up" }) end, { seq, torch.randn(4, 2) })
  check("bucketize 2-D boundaries", function(v, b) return torch.bucketize(v, b) end, { torch.randn(3), torch.randn(2, 2) })
  check("isin NaN never matches", function(a, b) return torch.isin(a, b) end,
        { torch.tensor({ 0 / 0, 1.0, 2.0 }), torch.tensor({ 0 / 0, 2.0 }) })
  check("isin mixed dtypes", function(a, b) return torch.isin(a, b) end,
        { torch.tensor({ 1, 2, 3 }), torch.tensor({ 2.0, 2.5 }) })
  check("isin empty test", function(a, b) return torch.isin(a, b) end, { torch.randn(4), torch.zeros(0) })
  check("isin large", function(a, b) return torch.isin(a, b) end,
        { gen(torch.int64, { 1024 * 1024 + 3 }), gen(torch.int64, { 1000 }) })
end)

T.test("gradients through sort, topk, kthvalue, median on cuda match the CPU", function()
  local function grads(dev, f, x0)
    local x = x0:to(dev):detach()
    x:requires_grad_(true)
    local y = f(x)
    local g = torch.arange(y:numel()):view(y:size()):to(x0.dtype):to(dev)
    y:mul(g):sum():backward()
    return x.grad
  end
  local x0 = gen(torch.float64, { 4, 9 }) + torch.rand(4, 9, { dtype = "float64" })
  local cases = {
    { "sort", function(x) return (x:sort(2, true)) end },
    { "topk", function(x) return (x:topk(3)) end },
    { "kthvalue", function(x) return (x:kthvalue(2, 1)) end },
    { "median", function(x) return (x:median(2)) end },
  }
  for _, cs in ipairs(cases) do
    local want = grads("cpu", cs[2], x0)
    c._kernel_counts(true)
    local got = grads("cuda", cs[2], x0)
    local k = c._kernel_counts(true)
    close(got, want, cs[1] .. " grad")
    T.ok(k.host + k.device > 0, cs[1] .. ": the CUDA kernels ran")
  end
  local x = x0:cuda()
  x:requires_grad_(true)
  T.ok(torch.autograd.gradcheck(function(a) return (a:sort(2)) end, { x }), "gradcheck sort")
  T.ok(torch.autograd.gradcheck(function(a) return (a:topk(2, 1)) end, { x }), "gradcheck topk")
end)

T.done()
