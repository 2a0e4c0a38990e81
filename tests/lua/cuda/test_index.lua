-- tests/lua/cuda/test_index.lua — the CUDA indexing kernels (src/cuda/index.c over
-- src/cuda/kernels/index.cu) against the CPU: index_select, gather, scatter, scatter_add,
-- index_add/copy/fill, take, put, masked_fill/select/scatter, nonzero, embedding and its
-- backward, one_hot, and x[idx] / x[mask] from Lua. Runs under the fake driver
-- (tests/sh/test_cuda_fake.sh: the kernels' host build) and unchanged on a real GPU.
local T = require "testing"
local c = torch.cuda

if not c.is_available() then
  T.skip("cuda indexing kernels", "CUDA is not available: " .. tostring(c.unavailable_reason()))
  T.done()
  return
end

local DT = { torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16,
             torch.int8, torch.uint8, torch.bool }

local function gen(dt, shape)
  local x = #shape == 0 and torch.randn({}) * 3 or torch.randn(shape) * 3
  if dt == torch.bool then return x:gt(0) end
  if x:is_floating_point() and (dt == torch.float32 or dt == torch.float64 or dt == torch.float16
                                or dt == torch.bfloat16) then return x:to(dt) end
  x = x:round()
  if dt == torch.uint8 then x = x:abs() end
  return x:to(dt)
end

local function I(t) return torch.tensor(t) end
-- n random 1-based indices into size, negative ones among them when neg
local function rindex(n, size, neg, shape)
  local v = torch.randint(1, size + 1, shape or { n })
  if neg then v = torch.where(torch.rand(v:size()):lt(0.3), v - (size + 1), v) end
  return v
end

local H = require "cuda.check"
local close, check = H.close, H.check

local SIZES = { 0, 1, 31, 1025 }

T.test("index_select over dtypes, dims, sizes, negative and duplicate indices", function()
  for _, dt in ipairs(DT) do
    for _, n in ipairs(SIZES) do
      local x = gen(dt, { 5, n })
      check("index_select dim 1 " .. tostring(dt) .. " n=" .. n, function(a, i) return a:index_select(1, i) end,
            { x, rindex(7, 5, true) })
      if n > 0 then
        check("index_select dim 2 " .. tostring(dt) .. " n=" .. n, function(a, i) return a:index_select(2, i) end,
              { x, rindex(n + 3, n, true) })
      end
    end
  end
  local x = torch.randn(6, 7)
  check("index_select transposed", function(a, i) return a:t():index_select(2, i) end, { x, I{ 6, 1, -1, 2 } })
  check("index_select stepped", function(a, i) return a[{ {}, { 1, 7, 2 } }]:index_select(1, i) end, { x, I{ 3, 3 } })
  check("index_select int32 index", function(a, i) return a:index_select(1, i) end, { x, I{ 2, 5 }:int() })
  check("index_select empty index", function(a, i) return a:index_select(1, i) end,
        { x, torch.zeros(0, { dtype = "int64" }) }, "any")
  check("index_select 0-d", function(a, i) return a:index_select(1, i) end, { torch.tensor(3.5), I{ 1, 1 } })
  check("index_select out=", function(a, i, o) return torch.index_select(a, 1, i, { out = o }) end,
        { x, I{ 2 }, torch.zeros(1, 7, { dtype = "float64" }) })
  check("index_select large", function(a, i) return a:index_select(1, i) end,
        { torch.randn(1024 * 1024 + 3), rindex(4099, 1024 * 1024 + 3, true) })
end)

T.test("out of range indices raise the CPU's error, found on the device", function()
  local x = torch.randn(3, 4)
  for _, bad in ipairs({ { 5 }, { 0 }, { 1, 2, -5, 9 } }) do
    check("index_select bad " .. table.concat(bad, ","), function(a, i) return a:index_select(2, i) end, { x, I(bad) })
  end
  local d = x:cuda()
  T.raises(function() return d:index_select(2, I{ 1, 7 }:cuda()) end,
           "index_select: index 7 is out of range for dim 2 with size 4")
  T.raises(function() return d:index_select(1, I{ 0 }:cuda()) end, "index_select", "1-based")
  T.raises(function() return d:gather(1, I{ { 1, 4 } }:cuda()) end, "gather: index 4 is out of range for dim 1 with size 3")
  T.raises(function() return d:take(I{ 13 }:cuda()) end, "take: index 13 is out of range for a tensor with 12 elements")
  local before = d:cpu()
  T.raises(function() d:index_add_(1, I{ 1, 9 }:cuda(), torch.ones(2, 4):cuda()) end, "index_add", "out of range")
  T.ok(torch.equal(d:cpu(), before), "a bad index writes nothing")
  T.raises(function() d:scatter_(2, I{ { 1, 5 } }:cuda(), torch.ones(1, 2):cuda()) end, "scatter", "out of range")
  T.ok(torch.equal(d:cpu(), before), "a bad scatter index writes nothing")
  T.raises(function() return d:index_select(1, torch.tensor({ 1.0 }):cuda()) end, "index_select", "int64", "float32")
end)

T.test("gather and scatter (tensor, value, add) over dtypes and dims", function()
  for _, dt in ipairs(DT) do
    local x = gen(dt, { 4, 6 })
    local src = gen(dt, { 5, 6 })
    check("gather dim 1 " .. tostring(dt), function(a, i) return a:gather(1, i) end, { x, rindex(0, 4, true, { 5, 6 }) })
    check("gather dim 2 " .. tostring(dt), function(a, i) return a:gather(2, i) end, { x, rindex(0, 6, true, { 3, 9 }) })
    -- scatter without duplicates along a dim: a permutation per column
    local perm = torch.stack({ torch.randperm(4), torch.randperm(4), torch.randperm(4) }, 2) + 1
    check("scatter dim 1 " .. tostring(dt), function(a, i, s) return a:scatter(1, i, s) end, { x, perm, src })
    check("scatter value " .. tostring(dt), function(a, i) return a:scatter(2, i, 1) end,
          { x, rindex(0, 6, true, { 4, 3 }) })
    if dt ~= torch.bool then
      check("scatter_add duplicates " .. tostring(dt), function(a, i, s) return a:scatter_add(1, i, s) end,
            { x, rindex(0, 4, false, { 5, 6 }), src })
    end
  end
  local x = torch.randn(5, 8)
  check("gather transposed", function(a, i) return a:t():gather(1, i) end, { x, rindex(0, 5, false, { 2, 5 }) })
  check("gather empty index", function(a, i) return a:gather(1, i) end, { x, torch.zeros(0, 8, { dtype = "int64" }) }, "any")
  check("gather 0-d", function(a, i) return a:gather(1, i) end, { torch.tensor(2.0), torch.tensor(1) })
  check("scatter 0-d src is a number", function(a, i, s) return a:scatter(1, i, s) end,
        { x, I{ { 1, 2 } }, torch.tensor(7.0) })
  check("scatter_ in place", function(a, i, s) a:scatter_(2, i, s); return a end,
        { x:clone(), I{ { 8 }, { 1 } }, torch.ones(2, 1) })
  check("scatter_add_ in place, stepped src", function(a, i, s) a:scatter_add_(1, i, s[{ { 1, 6, 2 } }]); return a end,
        { x:clone(), rindex(0, 5, false, { 3, 8 }), torch.randn(6, 8) })
  check("scatter_add large with many duplicates", function(a, i, s) return a:scatter_add(1, i, s) end,
        { torch.zeros(3), rindex(0, 3, false, { 100003 }), torch.ones(100003, { dtype = "float64" }) })
  check("scatter_add float16 duplicates", function(a, i, s) return a:scatter_add(1, i, s) end,
        { torch.zeros(4, { dtype = "float16" }), rindex(0, 4, false, { 64 }), torch.ones(64, { dtype = "float16" }) })
  check("scatter_add int8 duplicates wrap", function(a, i, s) return a:scatter_add(1, i, s) end,
        { torch.zeros(2, { dtype = "int8" }), rindex(0, 2, false, { 301 }), torch.ones(301, { dtype = "int8" }) })
  check("scatter_add 0-d src raises", function(a, i, s) return a:scatter_add(1, i, s) end,
        { x, I{ { 1 } }, torch.tensor(1.0) })
  check("gather index shape error", function(a, i) return a:gather(1, i) end, { x, I{ 1, 2 } })
end)

T.test("index_add, index_copy, index_fill with their in-place forms", function()
  for _, dt in ipairs(DT) do
    local x = gen(dt, { 5, 3 })
    local src = gen(dt, { 7, 3 })
    if dt ~= torch.bool then
      check("index_add duplicates " .. tostring(dt), function(a, i, s) return a:index_add(1, i, s) end,
            { x, rindex(7, 5, true), src })
    end
    check("index_copy " .. tostring(dt), function(a, i, s) return a:index_copy(1, i, s) end,
          { x, torch.randperm(5)[{ { 1, 3 } }] + 1, src[{ { 1, 3 } }] })
    check("index_fill " .. tostring(dt), function(a, i) return a:index_fill(2, i, 1) end, { x, I{ 3, -3 } })
  end
  local x = torch.randn(4, 6)
  check("index_add alpha", function(a, i, s) return a:index_add(2, i, s, { alpha = 2.5 }) end,
        { x, I{ 1, 1, 6 }, torch.randn(4, 3) })
  check("index_add int alpha", function(a, i, s) return a:index_add(1, i, s, { alpha = 3 }) end,
        { torch.zeros(3, 2, { dtype = "int64" }), I{ 2, 2 }, torch.ones(2, 2, { dtype = "int64" }) })
  check("index_add int with float alpha raises", function(a, i, s) return a:index_add(1, i, s, { alpha = 0.5 }) end,
        { torch.zeros(3, { dtype = "int64" }), I{ 1 }, torch.ones(1, { dtype = "int64" }) })
  check("index_add_ in place, transposed self", function(a, i, s) a:index_add_(1, i, s); return a end,
        { torch.randn(6, 4):t(), I{ 4, 4, 1 }, torch.randn(3, 6) })
  check("index_copy_ in place", function(a, i, s) a:index_copy_(2, i, s); return a end,
        { x:clone(), I{ 2, 5 }, torch.randn(4, 2) })
  check("index_fill_ in place", function(a, i) a:index_fill_(1, i, -2); return a end, { x:clone(), I{ 4 } })
  check("index_add empty index", function(a, i, s) return a:index_add(1, i, s) end,
        { x, torch.zeros(0, { dtype = "int64" }), torch.zeros(0, 6) }, "any")
  check("index_add source shape error", function(a, i, s) return a:index_add(1, i, s) end,
        { x, I{ 1 }, torch.zeros(2, 6) })
  check("index_add large duplicates", function(a, i, s) return a:index_add(1, i, s) end,
        { torch.zeros(7, 3), rindex(50001, 7, true), torch.randn(50001, 3) })
end)

T.test("take and put (with accumulate)", function()
  for _, dt in ipairs(DT) do
    local x = gen(dt, { 3, 5 })
    check("take " .. tostring(dt), function(a, i) return a:take(i) end, { x, rindex(0, 15, true, { 2, 9 }) })
    check("put " .. tostring(dt), function(a, i, s) return a:put(i, s) end,
          { x, torch.randperm(15)[{ { 1, 6 } }] + 1, gen(dt, { 6 }) })
    if dt ~= torch.bool then
      check("put accumulate " .. tostring(dt), function(a, i, s) return a:put(i, s, true) end,
            { x, rindex(0, 15, true, { 40 }), gen(dt, { 40 }) })
    end
  end
  local x = torch.randn(4, 5)
  check("take transposed", function(a, i) return a:t():take(i) end, { x, I{ 1, 2, -1 } })
  check("put_ into a transposed self", function(a, i, s) a:t():put_(i, s, true); return a end,
        { x:clone(), I{ 1, 2, 2, -1 }, torch.ones(4) })
  check("take empty", function(a, i) return a:take(i) end, { x, torch.zeros(0, { dtype = "int64" }) }, "any")
  check("put size error", function(a, i, s) return a:put(i, s) end, { x, I{ 1 }, torch.ones(2) })
end)

T.test("masked_fill, masked_select, masked_scatter, nonzero", function()
  for _, dt in ipairs(DT) do
    for _, n in ipairs(SIZES) do
      local x = gen(dt, { 3, n })
      local m = torch.rand(3, n):lt(0.4)
      check("masked_fill " .. tostring(dt) .. " n=" .. n, function(a, mm) return a:masked_fill(mm, 2) end, { x, m })
      check("masked_select " .. tostring(dt) .. " n=" .. n, function(a, mm) return a:masked_select(mm) end, { x, m })
      check("masked_scatter " .. tostring(dt) .. " n=" .. n, function(a, mm, s) return a:masked_scatter(mm, s) end,
            { x, m, gen(dt, { 3 * n + 2 }) })
      check("nonzero " .. tostring(dt) .. " n=" .. n, function(a) return a:nonzero() end, { x })
    end
  end
  local x = torch.randn(4, 6)
  local row = torch.tensor({ true, false, true, true, false, false })
  check("masked_fill broadcast mask", function(a, mm) return a:masked_fill(mm, -1.5) end, { x, row })
  check("masked_fill_ in place, transposed", function(a, mm) a:t():masked_fill_(mm, 9); return a end,
        { x:clone(), torch.rand(6, 4):lt(0.5) })
  check("masked_fill NaN value", function(a, mm) return a:masked_fill(mm, 0 / 0) end, { x, row })
  check("masked_fill 0-d", function(a, mm) return a:masked_fill(mm, 1) end, { torch.tensor(2.0), torch.tensor(true) })
  check("masked_select broadcast self", function(a, mm) return a:masked_select(mm) end,
        { torch.randn(6), torch.rand(3, 6):lt(0.5) })
  check("masked_select large", function(a, mm) return a:masked_select(mm) end,
        { torch.randn(1024 * 1024 + 3), torch.rand(1024 * 1024 + 3):lt(0.5) })
  check("masked_scatter_ in place", function(a, mm, s) a:masked_scatter_(mm, s); return a end,
        { x:clone(), torch.rand(4, 6):lt(0.5), torch.randn(30) })
  check("masked_scatter too short source", function(a, mm, s) return a:masked_scatter(mm, s) end,
        { x, torch.ones(4, 6, { dtype = "bool" }), torch.randn(3) })
  check("masked_fill non-bool mask", function(a, mm) return a:masked_fill(mm, 1) end, { x, torch.ones(4, 6) })
  check("nonzero NaN and -0", function(a) return a:nonzero() end, { torch.tensor({ 0.0, -0.0, 1.5, 0 / 0 }) })
  check("nonzero transposed 3-d", function(a) return a:transpose(1, 3):nonzero() end,
        { torch.rand(3, 4, 5):lt(0.3) })
  check("nonzero 0-d", function(a) return a:nonzero() end, { torch.tensor(3) })
  check("nonzero large", function(a) return a:nonzero() end, { torch.rand(1024 * 1024 + 3):lt(0.01) })
end)

T.test("x[idx], x[mask] and their assignments on cuda tensors", function()
  local x = torch.randn(5, 4)
  check("x[idx]", function(a, i) return a[i] end, { x, I{ 5, 1, -1 } })
  check("x[mask]", function(a, mm) return a[mm] end, { x, torch.rand(5, 4):lt(0.5) })
  check("x[{idx, idx}]", function(a, i, j) return a[{ i, j }] end, { x, I{ 1, 2, 5 }, I{ 4, 4, 1 } })
  check("x[mask] = v", function(a, mm) a[mm] = 0; return a end, { x:clone(), torch.rand(5, 4):lt(0.5) })
  check("x[idx] = t", function(a, i, s) a[i] = s; return a end, { x:clone(), I{ 2, 4 }, torch.ones(2, 4) })
end)

T.test("embedding, its backward and one_hot", function()
  local nn = torch.nn
  for _, dt in ipairs({ torch.float32, torch.float64, torch.float16, torch.bfloat16 }) do
    local w = torch.randn(10, 3):to(dt)
    check("embedding " .. tostring(dt), function(ww, i) return torch.nn.functional.embedding(i, ww) end,
          { w, rindex(0, 10, false, { 4, 5 }) })
    check("_embedding_backward " .. tostring(dt), function(g, i) return torch._embedding_backward(g, i, 10) end,
          { torch.randn(4, 5, 3):to(dt), rindex(0, 10, false, { 4, 5 }) })
  end
  local i = rindex(0, 6, false, { 20 })
  check("_embedding_backward padding_idx", function(g, ii) return torch._embedding_backward(g, ii, 6, 2) end,
        { torch.randn(20, 4), i })
  check("embedding out of range", function(ww, ii) return torch.nn.functional.embedding(ii, ww) end,
        { torch.randn(6, 2), I{ 1, 7 } })
  check("embedding -1 raises (1-based, no negatives)", function(ww, ii) return torch.nn.functional.embedding(ii, ww) end,
        { torch.randn(6, 2), I{ -1 } })
  check("embedding int32 indices", function(ww, ii) return torch.nn.functional.embedding(ii, ww) end,
        { torch.randn(6, 2), I{ 3, 1 }:int() })
  check("one_hot", function(a) return torch.nn.functional.one_hot(a, 5) end, { rindex(0, 5, false, { 3, 4 }) }, "fallback")
  check("one_hot inferred classes", function(a) return torch.nn.functional.one_hot(a) end, { I{ 1, 4, 2 } }, "fallback")
  check("one_hot out of range", function(a) return torch.nn.functional.one_hot(a, 3) end, { I{ 1, 4 } }, "fallback")
  T.ok(nn ~= nil)
end)

T.test("bincount and histc (their size and range come from the reductions)", function()
  -- the greatest value (bincount) and the data's range (histc) come from max/min, which may
  -- run the CPU's kernel under the fake: "fallback" allows it; the counting is the CUDA kernels'
  for _, dt in ipairs({ torch.int64, torch.int32, torch.uint8, torch.int8 }) do
    local x = torch.randint(0, 9, { 301 }):to(dt)
    check("bincount " .. tostring(dt), function(a) return torch.bincount(a) end, { x }, "fallback")
    check("bincount weights " .. tostring(dt), function(a, w) return torch.bincount(a, w) end,
          { x, torch.randn(301) }, "fallback")
  end
  local x = torch.randint(0, 5, { 1000 })
  check("bincount float32 weights", function(a, w) return torch.bincount(a, w) end, { x, torch.rand(1000) }, "fallback")
  check("bincount minlength", function(a) return torch.bincount(a, nil, 12) end, { x }, "fallback")
  check("bincount empty", function(a) return torch.bincount(a, nil, 3) end, { torch.zeros(0, { dtype = "int64" }) }, "fallback")
  check("bincount negative", function(a) return torch.bincount(a) end, { torch.tensor({ 1, -2, -5 }) }, "fallback")
  check("bincount 2-D", function(a) return torch.bincount(a) end, { torch.ones(2, 2, { dtype = "int64" }) }, "fallback")
  check("bincount large", function(a) return torch.bincount(a) end, { torch.randint(0, 7, { 1024 * 1024 + 3 }) }, "fallback")
  for _, dt in ipairs({ torch.float32, torch.float64, torch.float16, torch.bfloat16 }) do
    local v = torch.randn(2000):to(dt)
    check("histc range " .. tostring(dt), function(a) return torch.histc(a, 17, -1, 1) end, { v })
    check("histc data range " .. tostring(dt), function(a) return torch.histc(a, 10) end, { v }, "fallback")
  end
  check("histc NaN in bin 1", function(a) return torch.histc(a, 4, 0, 1) end, { torch.tensor({ 0.5, 0 / 0, 1.0, 2.0 }) })
  check("histc NaN data range", function(a) return torch.histc(a) end, { torch.tensor({ 0.5, 0 / 0 }) }, "fallback")
  check("histc constant", function(a) return torch.histc(a, 3) end, { torch.ones(5) }, "fallback")
  check("histc out=", function(a, o) return torch.histc(a, 5, 0, 1, { out = o }) end, { torch.rand(50), torch.zeros(1) })
  check("histc integer raises", function(a) return torch.histc(a) end, { torch.ones(3, { dtype = "int64" }) })
  check("histc min > max", function(a) return torch.histc(a, 4, 2, 1) end, { torch.ones(3) })
end)

T.test("shape ops that copy: contiguous, cat, flip, roll, diag (copy kernel), tril/triu (own kernel)", function()
  for _, dt in ipairs(DT) do
    local x = gen(dt, { 5, 7 })
    local w = tostring(dt)
    check("contiguous of transposed " .. w, function(a) return a:t():contiguous() end, { x })
    check("cat " .. w, function(a, b) return torch.cat({ a, b, a }, 1) end, { x, gen(dt, { 2, 7 }) }, "any")
    check("flip " .. w, function(a) return a:flip({ 1, 2 }) end, { x })
    check("roll " .. w, function(a) return a:roll({ 2, -3 }, { 1, 2 }) end, { x })
    check("tril " .. w, function(a) return a:tril() end, { x })
    check("triu -2 " .. w, function(a) return a:triu(-2) end, { x })
    check("diag of a matrix " .. w, function(a) return a:diag(1) end, { x })
  end
  local x = torch.randn(3, 4, 5)
  check("cat dim 3 of transposed", function(a) return torch.cat({ a:transpose(1, 2), a:transpose(1, 2) }, 3) end, { x })
  check("cat promotes", function(a, b) return torch.cat({ a, b }) end, { torch.ones(2, { dtype = "int32" }), torch.randn(3) })
  check("cat 1-D empty skipped", function(a, b) return torch.cat({ a, b }) end, { torch.zeros(0), torch.randn(2, 3) }, "any")
  check("cat shape error", function(a, b) return torch.cat({ a, b }, 1) end, { torch.randn(2, 3), torch.randn(2, 4) })
  check("flip 3-d", function(a) return a:flip({ 2 }) end, { x })
  check("roll flat", function(a) return a:roll(7) end, { x }, "any")
  check("diag of a vector", function(a) return torch.diag(a, -2) end, { torch.randn(4) })
  check("tril batched, transposed", function(a) return a:transpose(2, 3):tril(1) end, { x })
  check("triu_ in place", function(a) a:triu_(1); return a end, { x:clone() })
  check("tril_ in place, stepped", function(a) a[{ {}, { 1, 4, 2 } }]:tril_(); return a end, { x:clone() })
  check("tril out= of another dtype", function(a, o) return torch.tril(a, 0, { out = o }) end,
        { x, torch.zeros(1, { dtype = "float64" }) })
  check("tril large diagonal", function(a) return a:tril(100) end, { x })
  check("triu large negative diagonal", function(a) return a:triu(-100) end, { x })
  check("tril of a vector raises", function(a) return a:tril() end, { torch.randn(3) })
  check("tril large", function(a) return a:tril() end, { torch.randn(1025, 1025) })
end)

T.test("gradients through index_select, gather, embedding and masked ops on cuda match the CPU", function()
  local function grads(dev, f, x0, ...)
    local x = x0:to(dev):detach()
    x:requires_grad_(true)
    local args = {}
    for k, a in ipairs({ ... }) do args[k] = a:to(dev) end
    local y = f(x, table.unpack(args))
    local g = torch.arange(y:numel()):view(y:size()):to(x0.dtype):to(dev)
    y:mul(g):sum():backward()
    return x.grad
  end
  local cases = {
    { "index_select", function(x, i) return x:index_select(1, i) end, torch.randn(5, 3), I{ 1, 5, 1, -2 } },
    { "gather", function(x, i) return x:gather(2, i) end, torch.randn(4, 6), rindex(0, 6, true, { 4, 9 }) },
    { "embedding", function(w, i) return torch.nn.functional.embedding(i, w) end, torch.randn(8, 3),
      rindex(0, 8, false, { 2, 7 }) },
    { "masked_select", function(x, m) return x:masked_select(m) end, torch.randn(5, 5), torch.rand(5, 5):lt(0.5) },
    { "take", function(x, i) return x:take(i) end, torch.randn(3, 4), I{ 1, 1, 12 } },
  }
  for _, cs in ipairs(cases) do
    local want = grads("cpu", cs[2], cs[3], cs[4])
    c._kernel_counts(true)
    local got = grads("cuda", cs[2], cs[3], cs[4])
    local k = c._kernel_counts(true)
    close(got, want, cs[1] .. " grad")
    T.ok(k.host + k.device > 0, cs[1] .. ": the CUDA kernels ran")
  end
  local x = torch.randn(4, 3, { dtype = "float64" }):cuda()
  x:requires_grad_(true)
  local idx = I{ 2, 4, 2 }:cuda()
  T.ok(torch.autograd.gradcheck(function(a) return a:index_select(1, idx) end, { x }), "gradcheck index_select")
  local gi = I{ { 1, 3 }, { 2, 2 } }:cuda()
  T.ok(torch.autograd.gradcheck(function(a) return a:gather(2, gi) end, { x }), "gradcheck gather")
end)

T.done()
