-- CUDA reductions (src/cuda/reduce.c over src/cuda/kernels/reduce.cu): every result is
-- compared with the CPU's for the same op, over dtypes, dims, keepdim, non-contiguous, empty
-- and 0-d inputs, the split path (2^20+3 elements), out= and dtype=, errors and gradients;
-- torch.cuda._kernel_counts() says the CUDA kernel ran, not the CPU fallback. Under the fake
-- driver the kernels' host build runs; the same file runs unchanged on a real GPU.
local T = require "testing"
local C = require "cuda.check_reduce"
local c = torch.cuda

if not c.is_available() then
  T.skip("cuda reductions", "torch.cuda is not available")
  T.done()
end

local check, gen = C.check, C.gen

local FL = { torch.float32, torch.float64, torch.float16, torch.bfloat16 }
local ALL = { torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64,
              torch.int16, torch.int8, torch.uint8, torch.bool }

local function views(dt)
  -- {name, tensor}: contiguous, transposed, sliced with a step, empty and 0-d
  local base = gen(dt, { 4, 5, 6 })
  return {
    { "4x5x6", base },
    { "transposed", gen(dt, { 6, 5 }):t() },
    { "stepped", gen(dt, { 8, 7, 6 }):narrow(1, 2, 5):unfold(2, 1, 2):select(4, 1) },
    { "1", gen(dt, { 1 }) },
    { "31", gen(dt, { 31 }) },
    { "1025", gen(dt, { 1025 }) },
    { "0", gen(dt, { 0 }) },
    { "3x0x2", gen(dt, { 3, 0, 2 }) },
    { "0-d", gen(dt, {}) },
  }
end

local DIMS = { { nil }, { 1 }, { -1 }, { { 1, 3 } }, { 2, true }, { { 1, 2 }, true } }

local function dimargs(x, d)
  if x:dim() == 0 and d[1] ~= nil and (type(d[1]) == "table" or d[1] > 1 or d[1] < -1) then return nil end
  if type(d[1]) == "table" then
    for _, k in ipairs(d[1]) do if k > x:dim() then return nil end end
  elseif d[1] and d[1] > x:dim() then return nil end
  return d
end

T.test("sum, nansum, prod over dtypes, dims, keepdim, layouts", function()
  for _, dt in ipairs(ALL) do
    for _, v in ipairs(views(dt)) do
      for _, d in ipairs(DIMS) do
        local a = dimargs(v[2], d)
        if a then
          local what = ("%s %s dims %s"):format(dt.name, v[1], T.fmt(a))
          if a[1] == nil then
            check("sum " .. what, function(x) return x:sum() end, { v[2] })
            check("prod " .. what, function(x) return x:prod() end, { v[2] })
          else
            check("sum " .. what, function(x) return x:sum(a[1], a[2]) end, { v[2] })
            check("nansum " .. what, function(x) return x:nansum(a[1], a[2]) end, { v[2] })
          end
        end
      end
      if v[2]:dim() >= 1 then
        check("prod dim " .. dt.name .. " " .. v[1], function(x) return x:prod(1, true) end, { v[2] })
      end
    end
  end
end)

T.test("mean, nanmean, var, std over floating dtypes", function()
  for _, dt in ipairs(FL) do
    for _, v in ipairs(views(dt)) do
      for _, d in ipairs(DIMS) do
        local a = dimargs(v[2], d)
        if a then
          local what = ("%s %s dims %s"):format(dt.name, v[1], T.fmt(a))
          check("mean " .. what, function(x) return x:mean(a[1], a[2]) end, { v[2] })
          check("nanmean " .. what, function(x) return x:nanmean(a[1], a[2]) end, { v[2] })
          check("var " .. what, function(x) return x:var(a[1], { keepdim = a[2] or false }) end, { v[2] })
          check("std " .. what, function(x) return x:std(a[1], { keepdim = a[2] or false, correction = 0 }) end,
                { v[2] })
          check("norm " .. what, function(x) return x:norm(2, a[1], a[2]) end, { v[2] })
          check("logsumexp " .. what, function(x) return torch.logsumexp(x, a[1] or {}, a[2]) end, { v[2] })
        end
      end
    end
  end
end)

T.test("max, min, amax, amin, argmax, argmin over dtypes", function()
  for _, dt in ipairs(ALL) do
    for _, v in ipairs(views(dt)) do
      local x = v[2]
      local what = dt.name .. " " .. v[1]
      check("max " .. what, function(t) return t:max() end, { x })
      check("min " .. what, function(t) return t:min() end, { x })
      check("argmax " .. what, function(t) return t:argmax() end, { x })
      check("argmin " .. what, function(t) return t:argmin() end, { x })
      check("amax " .. what, function(t) return t:amax() end, { x })
      if x:dim() >= 1 then
        check("max dim values " .. what, function(t) return (t:max(1)) end, { x })
        check("max dim indices " .. what, function(t) local _, i = t:max(-1, true) return i end, { x })
        check("min dim indices " .. what, function(t) local _, i = t:min(1) return i end, { x })
        check("argmax dim " .. what, function(t) return t:argmax(1, true) end, { x })
        check("amin dims " .. what, function(t) return t:amin({ 1 }, true) end, { x })
      end
    end
  end
end)

T.test("max/argmax: NaN propagates, the first of equal maxima wins", function()
  local nan = 0 / 0
  local x = torch.tensor({ { 1, 5, 5, 2 }, { nan, 3, nan, 9 }, { 7, 7, 7, 7 } })
  for _, dt in ipairs(FL) do
    local y = x:to(dt)
    check("max dim " .. dt.name, function(t) local v, i = t:max(2) return i end, { y })
    check("max dim values " .. dt.name, function(t) return (t:max(2)) end, { y })
    check("min dim " .. dt.name, function(t) local v, i = t:min(1) return i end, { y })
    check("argmax " .. dt.name, function(t) return t:argmax() end, { y })
    check("amax " .. dt.name, function(t) return t:amax(1) end, { y })
  end
  check("argmax ties int", function(t) return t:argmax(2) end, { torch.tensor({ { 3, 3, 1 }, { 0, 2, 2 } }) })
end)

T.test("all, any, count_nonzero", function()
  for _, dt in ipairs(ALL) do
    for _, v in ipairs(views(dt)) do
      for _, d in ipairs(DIMS) do
        local a = dimargs(v[2], d)
        if a then
          local what = ("%s %s dims %s"):format(dt.name, v[1], T.fmt(a))
          check("all " .. what, function(x) return x:all(a[1], a[2]) end, { v[2] })
          check("any " .. what, function(x) return x:any(a[1], a[2]) end, { v[2] })
          check("count_nonzero " .. what, function(x) return x:count_nonzero(a[1]) end, { v[2] })
        end
      end
    end
  end
  local z = torch.tensor({ { 0, 1 }, { 0, 0 } })
  check("all zeros", function(x) return x:all(2) end, { z })
  check("any zeros", function(x) return x:any(2) end, { z })
  check("all uint8", function(x) return x:all() end, { z:to(torch.uint8) })
end)

T.test("2^20+3 elements: the split path", function()
  local n = 2 ^ 20 + 3
  for _, dt in ipairs({ torch.float32, torch.float64, torch.int64, torch.float16 }) do
    local x = gen(dt, { n })
    check("sum " .. dt.name, function(t) return t:sum() end, { x })
    check("max " .. dt.name, function(t) return t:max() end, { x })
    check("argmin " .. dt.name, function(t) return t:argmin() end, { x })
    if dt ~= torch.int64 then
      check("mean " .. dt.name, function(t) return t:mean() end, { x })
      check("var " .. dt.name, function(t) return t:var() end, { x })
      check("norm " .. dt.name, function(t) return t:norm() end, { x })
      check("logsumexp " .. dt.name, function(t) return torch.logsumexp(t, { 1 }) end, { x })
    end
  end
  -- few outputs, long strided slices
  local y = gen(torch.float32, { 3, 2 ^ 14 + 1 }):t()
  check("sum columns of a transpose", function(t) return t:sum(1) end, { y })
  check("argmax columns of a transpose", function(t) return t:argmax(1) end, { y })
  check("std_mean split", function(t) local s, m = torch.std_mean(t, 1) return s end, { y })
  check("var_mean split mean", function(t) local v, m = torch.var_mean(t, 1) return m end, { y })
  local b = torch.zeros(n):to(torch.bool)
  b[n] = true
  check("any split", function(t) return t:any() end, { b })
  check("count_nonzero split", function(t) return t:count_nonzero() end, { b })
  check("prod split", function(t) return t:prod() end, { torch.ones(n):to(torch.float64) })
end)

T.test("norm orders, var corrections, var_mean, std_mean", function()
  local x = gen(torch.float64, { 5, 7 })
  for _, p in ipairs({ 2, 1, 0, 3, 0.5, -1, math.huge, -math.huge }) do
    check("norm p=" .. p, function(t) return t:norm(p, 2) end, { x })
    check("norm all p=" .. p, function(t) return t:norm(p) end, { x })
  end
  check("norm fro", function(t) return t:norm("fro") end, { x })
  check("norm dtype=", function(t) return t:norm(2, 1, false, { dtype = torch.float32 }) end, { x })
  check("norm f32 dtype=f64", function(t) return t:norm(2, nil, false, { dtype = torch.float64 }) end,
        { x:float() })
  for _, corr in ipairs({ 0, 1, 2, 7, 9 }) do
    check("var correction " .. corr, function(t) return t:var(2, { correction = corr }) end, { x })
  end
  check("var unbiased=false", function(t) return t:var(1, false) end, { x })
  check("var_mean var", function(t) local v = torch.var_mean(t, 2) return v end, { x })
  check("var_mean mean", function(t) local _, m = torch.var_mean(t, 2, { keepdim = true }) return m end, { x })
  check("std_mean std", function(t) local s = torch.std_mean(t) return s end, { x:float() })
  check("var 1 element", function(t) return t:var() end, { torch.tensor({ 3.0 }) })
  check("var empty", function(t) return t:var(1) end, { torch.zeros(0, 3) })
  check("logsumexp -inf and inf", function(t) return torch.logsumexp(t, { 2 }) end,
        { torch.tensor({ { -math.huge, -math.huge }, { math.huge, 1 }, { 0 / 0, 1 }, { 1000, 1000 } }) })
  check("logsumexp int", function(t) return torch.logsumexp(t, { 1 }) end, { torch.tensor({ 1, 2, 3 }) })
end)

T.test("dtype= and out=", function()
  local x = gen(torch.float32, { 4, 6 })
  check("sum dtype=f64", function(t) return t:sum(2, false, { dtype = torch.float64 }) end, { x })
  check("sum int dtype=f32", function(t) return t:sum({ dtype = torch.float32 }) end, { gen(torch.int32, { 9 }) })
  check("mean int dtype=f64", function(t) return t:mean({ dtype = torch.float64 }) end, { gen(torch.int32, { 9 }) })
  check("cumsum-free prod dtype=", function(t) return t:prod(1, false, { dtype = torch.float64 }) end, { x })
  for _, name in ipairs({ "sum", "mean", "amax", "nansum" }) do
    local o = torch.zeros(3, 3):cuda()
    torch[name](x:cuda(), 2, { out = o })
    C.close(o, torch[name](x, 2), name .. " out=")
    local od = torch.zeros(1):to(torch.float64):cuda()   -- out= of another dtype
    torch[name](x:cuda(), 1, { out = od })
    C.close(od, torch[name](x, 1):double(), name .. " out= float64", 1e-6)   -- float32 results
  end
  local oi = torch.zeros(2):to(torch.int64):cuda()
  torch.argmax(x:cuda(), 2, { out = oi })
  C.close(oi, x:argmax(2), "argmax out=")
end)

T.test("errors are the CPU's", function()
  local i = gen(torch.int32, { 3 })
  check("mean of int", function(t) return t:mean() end, { i })
  check("var of int", function(t) return t:var() end, { i })
  check("norm of int", function(t) return t:norm() end, { i })
  check("max of empty", function(t) return t:max() end, { torch.zeros(0) })
  check("max over empty dim", function(t) return t:max(1) end, { torch.zeros(0, 2) })
  check("argmax of empty", function(t) return t:argmax() end, { torch.zeros(0) })
  check("max over empty dim, empty result", function(t) return (t:max(2)) end, { torch.zeros(0, 2) })
  check("bad dim", function(t) return t:sum(3) end, { torch.zeros(2, 2) })
  check("dim twice", function(t) return t:sum({ 1, 1 }) end, { torch.zeros(2, 2) })
  check("unbiased and correction", function(t) return t:var(1, true, { correction = 1 }) end, { torch.zeros(2, 2) })
  check("norm p", function(t) return t:norm("nuc") end, { torch.zeros(2, 2) })
  check("norm NaN p", function(t) return t:norm(0 / 0) end, { torch.zeros(2, 2) })
  check("norm int dtype=", function(t) return t:norm(2, nil, false, { dtype = torch.int32 }) end, { torch.zeros(2) })
end)

T.test("gradients through reductions on cuda match the CPU's", function()
  local x = torch.randn(4, 5):double()
  local fs = {
    sum = function(t) return t:sum(2):pow(2):sum() end,
    mean = function(t) return t:mean(1):pow(2):sum() end,
    var = function(t) return t:var(2):sum() end,
    std = function(t) return t:std():sum() end,
    norm = function(t) return t:norm(2, 1):sum() end,
    logsumexp = function(t) return torch.logsumexp(t, { 2 }):sum() end,
    amax = function(t) return t:amax(2):sum() end,
    max = function(t) local v = t:max(1) return v:sum() end,
    prod = function(t) return t:prod(2):sum() end,
  }
  for name, f in pairs(fs) do
    local a = x:clone():requires_grad_()
    f(a):backward()
    local b = x:cuda():requires_grad_()
    f(b):backward()
    C.close(b.grad, a.grad, name .. " grad", 1e-10)
  end
  local g = x:cuda():requires_grad_()
  T.ok(torch.autograd.gradcheck(function(t) return t:var(2) end, { g }), "gradcheck var on cuda")
end)

T.done()
