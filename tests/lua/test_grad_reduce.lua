-- Derivatives of the reductions, scans and sorting ops: float64 gradcheck for every
-- differentiable op (dims, keepdim, negative dims, non-contiguous inputs, ties, zeros,
-- NaN), gradgradcheck for the ops whose backward is itself differentiated, hand-checked
-- gradient values, and non-differentiable outputs.
local T = require "testing"
local f64 = torch.float64
local nan, inf = 0 / 0, math.huge

torch.manual_seed(7)

local function leaf(...) return torch.randn({ ... }, { dtype = f64, requires_grad = true }) end
local function lt(v) return torch.tensor(v, { dtype = f64, requires_grad = true }) end
local gc = torch.autograd.gradcheck
-- gradgradcheck of fn, with the first-order gradients cloned: sum's gradient is (like
-- PyTorch's) an expanded view of the incoming gradient, and autograd.gradcheck keeps the
-- outputs it perturbs without copying them, so a view of a perturbed input would read as
-- a zero numerical derivative
local function ggc(fn, inputs, opts)
  local n = #inputs
  local outs = table.pack(fn(table.unpack(inputs)))
  local all = {}
  for i = 1, n do all[i] = inputs[i] end
  for i = 1, outs.n do
    local g = torch.randn(outs[i].shape, { dtype = outs[i].dtype })
    g.requires_grad = true
    all[n + i] = g
  end
  local function gradfn(...)
    local args = table.pack(...)
    return torch.enable_grad(function()
      local ins, gos = {}, {}
      for i = 1, n do ins[i] = args[i] end
      for i = 1, outs.n do gos[i] = args[n + i] end
      local o = table.pack(fn(table.unpack(ins)))
      local ys = {}
      for i = 1, o.n do ys[i] = o[i] end
      local g = torch.autograd.grad(ys, ins, { grad_outputs = gos, create_graph = true })
      local r = {}
      for i = 1, n do r[i] = g[i]:clone() end
      return r
    end)
  end
  return torch.autograd.gradcheck(gradfn, all, opts)
end

-- grad of fn(x) summed with weights w (or ones), as a table
local function grad_of(fn, x, w)
  local y = fn(x)
  local g = w and torch.tensor(w, { dtype = f64 }) or torch.ones_like(y)
  return torch.autograd.grad({ y }, { x }, { grad_outputs = { g } })[1]:totable()
end

-- (a failure that says "the derivative of 'X' is not implemented" names another family's op)
local check = T.test

------------------------------------------------------------------------------
-- sum and friends
------------------------------------------------------------------------------
check("sum: all, dim lists, keepdim, negative dims", function()
  local x = leaf(2, 3, 4)
  T.ok(gc(function(x) return x:sum() end, { x }))
  T.ok(gc(function(x) return x:sum(2) end, { x }))
  T.ok(gc(function(x) return x:sum(-1, true) end, { x }))
  T.ok(gc(function(x) return x:sum({ 1, 3 }) end, { x }))
  T.ok(gc(function(x) return x:sum({ 3, 1 }, true) end, { x }))
  T.ok(gc(function(x) return x:sum({}) end, { x }))
  T.ok(gc(function(x) return x:sum({ dim = 2, keepdim = true, dtype = torch.float64 }) end, { x }))
end)

check("sum: values, non-contiguous input, 0-dim input", function()
  local x = leaf(3, 4)
  T.ok(gc(function(x) return x:t():sum(2) end, { x }))
  T.ok(gc(function(x) return x:t():sum({ 1 }, true) end, { x }))
  T.eq(grad_of(function(x) return x:sum(2) end, x, { 1, 2, 3 }),
    { { 1, 1, 1, 1 }, { 2, 2, 2, 2 }, { 3, 3, 3, 3 } })
  local s = lt(2.5)
  T.ok(gc(function(s) return s:sum() end, { s }))
  T.eq(grad_of(function(s) return s:sum() end, s), 1)
end)

check("sum: float32 input with dtype=float64 gets a float32 gradient", function()
  local x = torch.randn(2, 3, { requires_grad = true })
  local y = x:sum(1, { dtype = torch.float64 })
  T.eq(y.dtype, torch.float64)
  y:sum():backward()
  T.eq(x.grad.dtype, torch.float32)
  T.tensor(x.grad, { { 1, 1, 1 }, { 1, 1, 1 } })
end)

check("sum: backward into .grad accumulates", function()
  local x = leaf(2, 3)
  x:sum():backward()
  x:sum(1):sum():backward()
  T.tensor(x.grad, { { 2, 2, 2 }, { 2, 2, 2 } })
end)

check("nansum/nanmean: NaN positions get no gradient", function()
  local x = lt({ { 1, nan, 3 }, { nan, 4, 2 } })
  T.ok(gc(function(x) return x:nansum() end, { x }))
  T.ok(gc(function(x) return x:nansum(2) end, { x }))
  T.ok(gc(function(x) return x:nanmean(1, true) end, { x }))
  T.ok(gc(function(x) return x:t():nanmean(1) end, { x }))
  T.eq(grad_of(function(x) return x:nanmean(2) end, x), { { 0.5, 0, 0.5 }, { 0, 0.5, 0.5 } })
  T.eq(grad_of(function(x) return x:nansum() end, x), { { 1, 0, 1 }, { 0, 1, 1 } })
  -- a slice of NaN only: its mean is NaN, its gradient 0 (not NaN)
  local y = lt({ { nan, 1 }, { nan, 3 } })
  T.eq(grad_of(function(y) return y:nanmean(1) end, y, { 1, 1 }), { { 0, 0.5 }, { 0, 0.5 } })
end)

check("mean: all, dims, keepdim, non-contiguous", function()
  local x = leaf(2, 3, 4)
  T.ok(gc(function(x) return x:mean() end, { x }))
  T.ok(gc(function(x) return x:mean({ 1, 3 }) end, { x }))
  T.ok(gc(function(x) return x:mean(-2, true) end, { x }))
  local y = leaf(3, 4)
  T.ok(gc(function(y) return y:t():mean(1) end, { y }))
  T.eq(grad_of(function(y) return y:mean() end, y)[1][1], 1 / 12)
end)

------------------------------------------------------------------------------
-- prod
------------------------------------------------------------------------------
check("prod: all and along a dim, keepdim, non-contiguous", function()
  local x = leaf(3, 4)
  T.ok(gc(function(x) return x:prod() end, { x }))
  T.ok(gc(function(x) return x:prod(2) end, { x }))
  T.ok(gc(function(x) return x:prod(1, true) end, { x }))
  T.ok(gc(function(x) return x:prod(-1) end, { x }))
  T.ok(gc(function(x) return x:t():prod(1) end, { x }))
end)

check("prod: inputs with one zero and with several zeros", function()
  local one = lt({ { 2, 0, 3 }, { 1, 4, 5 } })
  T.ok(gc(function(x) return x:prod() end, { one }))
  T.ok(gc(function(x) return x:prod(2) end, { one }))
  T.ok(gc(function(x) return x:prod(1, true) end, { one }))
  T.eq(grad_of(function(x) return x:prod(2) end, one), { { 0, 6, 0 }, { 20, 5, 4 } })
  T.eq(grad_of(function(x) return x:prod() end, one), { { 0, 120, 0 }, { 0, 0, 0 } })
  local two = lt({ { 0, 2, 0 }, { 0, 3, 7 } })
  T.ok(gc(function(x) return x:prod() end, { two }))
  T.ok(gc(function(x) return x:prod(2) end, { two }))
  T.ok(gc(function(x) return x:prod(1) end, { two }))
  T.eq(grad_of(function(x) return x:prod(2) end, two), { { 0, 0, 0 }, { 21, 0, 0 } })
  T.eq(grad_of(function(x) return x:prod(1) end, two), { { 0, 3, 7 }, { 0, 2, 0 } })
  T.eq(grad_of(function(x) return x:prod() end, two), { { 0, 0, 0 }, { 0, 0, 0 } })
end)

------------------------------------------------------------------------------
-- max, min, amax, amin
------------------------------------------------------------------------------
check("max/min: full reduction, gradient shared among tied extrema", function()
  local x = leaf(3, 4)
  T.ok(gc(function(x) return x:max() end, { x }))
  T.ok(gc(function(x) return x:min() end, { x }))
  T.ok(gc(function(x) return x:t():max() end, { x }))
  -- two tied maxima: the one-sided differences give 1/2 each, as the shared gradient does
  local t = lt({ { 1, 5, 2 }, { 5, 0, -1 } })
  T.ok(gc(function(x) return x:max() end, { t }))
  T.ok(gc(function(x) return x:min() end, { lt({ { 1, -3, 2 }, { 5, -3, 4 } }) }))
  local three = lt({ 4, 1, 4, 4 })
  local g = grad_of(function(x) return x:max() end, three)
  T.near(g, { 1 / 3, 0, 1 / 3, 1 / 3 }, 1e-15)
end)

check("max/min with dim: gradient goes to the returned (1-based) indices", function()
  local x = leaf(3, 4)
  T.ok(gc(function(x) return (x:max(1)) end, { x }))
  T.ok(gc(function(x) return (x:max(2, true)) end, { x }))
  T.ok(gc(function(x) return (x:min(-1)) end, { x }))
  T.ok(gc(function(x) return (x:min(1, true)) end, { x }))
  T.ok(gc(function(x) return (x:t():max(2)) end, { x }))
  local y = leaf(2, 3, 2)
  T.ok(gc(function(y) return (y:max(2)) end, { y }))
  -- with a tie only the returned index gets the gradient
  local t = lt({ { 1, 7, 7 }, { 3, 2, 1 } })
  local v, i = t:max(2)
  local g = torch.autograd.grad({ v }, { t }, { grad_outputs = { torch.tensor({ 10, 20 }, { dtype = f64 }) } })[1]
  local row = { 0, 0, 0 }
  row[i[1]] = 10
  T.tensor(g, { row, { 20, 0, 0 } })
end)

check("amax/amin: dims, keepdim, ties shared evenly", function()
  local x = leaf(2, 3, 4)
  T.ok(gc(function(x) return x:amax() end, { x }))
  T.ok(gc(function(x) return x:amax({ 1, 3 }) end, { x }))
  T.ok(gc(function(x) return x:amin(2, true) end, { x }))
  T.ok(gc(function(x) return x:amin({ -1 }) end, { x }))
  local y = leaf(3, 4)
  T.ok(gc(function(y) return y:t():amax(1) end, { y }))
  local t = lt({ { 1, 5, 5 }, { 2, 2, 0 } })
  T.ok(gc(function(x) return x:amax(2) end, { t }))
  T.ok(gc(function(x) return x:amin(1) end, { lt({ { 1, 5, 0 }, { 1, 2, 0 } }) }))
  T.eq(grad_of(function(x) return x:amax(2) end, t), { { 0, 0.5, 0.5 }, { 0.5, 0.5, 0 } })
  T.near(grad_of(function(x) return x:amax() end, lt({ 3, 3, 3 })), { 1 / 3, 1 / 3, 1 / 3 }, 1e-15)
end)

------------------------------------------------------------------------------
-- var, std, var_mean, std_mean
------------------------------------------------------------------------------
check("var/std: dims, keepdim, correction, unbiased", function()
  local x = leaf(3, 4)
  T.ok(gc(function(x) return x:var() end, { x }))
  T.ok(gc(function(x) return x:var(2) end, { x }))
  T.ok(gc(function(x) return x:var(1, { keepdim = true, correction = 0 }) end, { x }))
  T.ok(gc(function(x) return x:var(-1, false, true) end, { x }))
  T.ok(gc(function(x) return x:var({ 1, 2 }, { correction = 2 }) end, { x }))
  T.ok(gc(function(x) return x:std() end, { x }))
  T.ok(gc(function(x) return x:std(1) end, { x }))
  T.ok(gc(function(x) return x:std(2, { keepdim = true, correction = 0 }) end, { x }))
  T.ok(gc(function(x) return x:t():std(2) end, { x }))
  T.ok(gc(function(x) return x:t():var(1, true) end, { x }))
  local y = leaf(2, 3, 2)
  T.ok(gc(function(y) return y:var({ 1, 3 }) end, { y }))
  T.ok(gc(function(y) return y:std({ 3, 1 }, true) end, { y }))
end)

check("std of a constant slice has gradient 0", function()
  local x = lt({ { 2, 2, 2 }, { 1, 2, 3 } })
  local g = grad_of(function(x) return x:std(2) end, x)
  T.eq(g[1], { 0, 0, 0 })
  T.near(g[2], { -0.5, 0, 0.5 }, 1e-12)
end)

check("var_mean/std_mean: the first output", function()
  local x = leaf(3, 4)
  T.ok(gc(function(x) return (torch.var_mean(x, 2)) end, { x }))
  T.ok(gc(function(x) return (torch.var_mean(x, { dim = 1, keepdim = true, correction = 0 })) end, { x }))
  T.ok(gc(function(x) return (torch.std_mean(x)) end, { x }))
  T.ok(gc(function(x) return (torch.std_mean(x:t(), 1)) end, { x }))
  local v, m = torch.var_mean(x, 2)
  T.eq(v.requires_grad, true)
end)

------------------------------------------------------------------------------
-- norm, logsumexp
------------------------------------------------------------------------------
check("norm: p = 2, 1, inf, -inf, 0, 3, 0.5, 1.5, \"fro\", with dims", function()
  local x = leaf(3, 4)
  for _, p in ipairs({ 2, 1, inf, -inf, 0, 3, 0.5, 1.5, 2.5 }) do
    T.ok(gc(function(x) return x:norm(p) end, { x }), "p = " .. p)
    T.ok(gc(function(x) return x:norm(p, 2) end, { x }), "p = " .. p .. " dim 2")
    T.ok(gc(function(x) return x:norm(p, { 1 }, true) end, { x }), "p = " .. p .. " keepdim")
    T.ok(gc(function(x) return x:t():norm(p, -1) end, { x }), "p = " .. p .. " transposed")
  end
  T.ok(gc(function(x) return x:norm("fro") end, { x }))
  T.ok(gc(function(x) return x:norm("fro", 1) end, { x }))
  T.ok(gc(function(x) return x:norm() end, { x }))
  local y = leaf(2, 3, 2)
  T.ok(gc(function(y) return y:norm(2, { 1, 3 }) end, { y }))
end)

check("norm: gradient at zero is 0 (subgradient), values", function()
  local z = lt({ { 0, 0 }, { 3, -4 } })
  T.near(grad_of(function(x) return x:norm(2, 2) end, z), { { 0, 0 }, { 0.6, -0.8 } }, 1e-15)
  T.eq(grad_of(function(x) return x:norm(1) end, z), { { 0, 0 }, { 1, -1 } })
  T.eq(grad_of(function(x) return x:norm(0) end, z), { { 0, 0 }, { 0, 0 } })
  T.eq(grad_of(function(x) return x:norm(inf) end, z), { { 0, 0 }, { 0, -1 } })
  local g = grad_of(function(x) return x:norm(0.5, 2) end, z)
  T.eq(g[1], { 0, 0 })
  for _, v in ipairs(g[2]) do T.ok(v == v, "no NaN") end
  T.ok(gc(function(x) return x:norm(3, 2) end, { lt({ { 0, 1 }, { 2, -1 } }) }))
  -- two entries of the largest magnitude share the inf-norm gradient
  T.eq(grad_of(function(x) return x:norm(inf) end, lt({ 2, -2, 1 })), { 0.5, -0.5, 0 })
end)

check("logsumexp: dims, keepdim, non-contiguous, large values", function()
  local x = leaf(3, 4)
  T.ok(gc(function(x) return x:logsumexp(2) end, { x }))
  T.ok(gc(function(x) return x:logsumexp({ 1, 2 }) end, { x }))
  T.ok(gc(function(x) return x:logsumexp(1, true) end, { x }))
  T.ok(gc(function(x) return x:t():logsumexp(-1) end, { x }))
  local big = lt({ 1000, 1000 })
  T.near(grad_of(function(x) return x:logsumexp(1) end, big), { 0.5, 0.5 }, 1e-12)
end)

------------------------------------------------------------------------------
-- scans
------------------------------------------------------------------------------
check("cumsum: reverse cumulative sum of grad", function()
  local x = leaf(3, 4)
  T.ok(gc(function(x) return x:cumsum(1) end, { x }))
  T.ok(gc(function(x) return x:cumsum(2) end, { x }))
  T.ok(gc(function(x) return x:cumsum(-1) end, { x }))
  T.ok(gc(function(x) return x:t():cumsum(2) end, { x }))
  T.eq(grad_of(function(x) return x:cumsum(1) end, lt({ 1, 2, 3 }), { 1, 10, 100 }), { 111, 110, 100 })
  T.ok(gc(function(s) return s:cumsum(1) end, { lt(3) }))
end)

check("cumprod: no zeros, one zero, several zeros", function()
  local x = leaf(3, 4)
  T.ok(gc(function(x) return x:cumprod(1) end, { x }))
  T.ok(gc(function(x) return x:cumprod(2) end, { x }))
  T.ok(gc(function(x) return x:t():cumprod(-1) end, { x }))
  local z = lt({ { 2, 0, 3, 4 }, { 0, 2, 0, 5 }, { 1, 2, 3, 4 } })
  T.ok(gc(function(x) return x:cumprod(2) end, { z }))
  T.ok(gc(function(x) return x:cumprod(1) end, { z }))
  T.ok(gc(function(x) return x:t():cumprod(1) end, { z }))
  -- d/dx of (x1, x1 x2, x1 x2 x3) summed, at (2, 0, 3): (1, 2 + 6, 0)
  T.eq(grad_of(function(x) return x:cumprod(1) end, lt({ 2, 0, 3 })), { 1, 8, 0 })
  for _, v in ipairs(grad_of(function(x) return x:cumprod(2) end, z)[2]) do T.ok(v == v, "no NaN") end
end)

check("cummax/cummin: gradient accumulates at the running indices", function()
  local x = leaf(3, 4)
  T.ok(gc(function(x) return (x:cummax(1)) end, { x }))
  T.ok(gc(function(x) return (x:cummax(2)) end, { x }))
  T.ok(gc(function(x) return (x:cummin(-1)) end, { x }))
  T.ok(gc(function(x) return (x:t():cummin(1)) end, { x }))
  T.eq(grad_of(function(x) return (x:cummax(1)) end, lt({ 1, 3, 2, 5, 4 })), { 1, 2, 0, 2, 0 })
end)

------------------------------------------------------------------------------
-- sort and selection
------------------------------------------------------------------------------
check("sort/topk: values scatter back through the indices", function()
  local x = leaf(3, 4)
  T.ok(gc(function(x) return (x:sort()) end, { x }))
  T.ok(gc(function(x) return (x:sort(1, true)) end, { x }))
  T.ok(gc(function(x) return (x:t():sort(2)) end, { x }))
  T.ok(gc(function(x) return (x:topk(2)) end, { x }))
  T.ok(gc(function(x) return (x:topk(2, 1, false)) end, { x }))
  T.ok(gc(function(x) return (x:t():topk(1, -1)) end, { x }))
  T.eq(grad_of(function(x) return (x:sort(1)) end, lt({ 3, 1, 2 }), { 1, 2, 3 }), { 3, 1, 2 })
  T.eq(grad_of(function(x) return (x:topk(2)) end, lt({ 3, 1, 2 }), { 10, 20 }), { 10, 0, 20 })
  local s = lt(4)
  T.ok(gc(function(s) return (s:sort()) end, { s }))
end)

check("kthvalue/median/nanmedian/mode along a dim", function()
  local x = leaf(3, 5)
  T.ok(gc(function(x) return (x:kthvalue(2)) end, { x }))
  T.ok(gc(function(x) return (x:kthvalue(1, 1, true)) end, { x }))
  T.ok(gc(function(x) return (x:t():kthvalue(3, 2)) end, { x }))
  T.ok(gc(function(x) return (x:median(2)) end, { x }))
  T.ok(gc(function(x) return (x:median(1, true)) end, { x }))
  T.ok(gc(function(x) return (x:t():median(-1)) end, { x }))
  T.ok(gc(function(x) return (x:nanmedian(2)) end, { x }))
  T.ok(gc(function(x) return (x:nanmedian(1, true)) end, { x }))
  -- distinct values: the mode is the smallest, at a stable index
  T.ok(gc(function(x) return (x:mode(2)) end, { x }))
  T.ok(gc(function(x) return (x:mode(1, true)) end, { x }))
  local m = lt({ { 5, 5, 1 }, { 2, 7, 7 } })
  T.eq(grad_of(function(x) return (x:mode(2)) end, m, { 1, 2 }), { { 0, 1, 0 }, { 0, 0, 2 } })
  local n = lt({ { nan, 5, 1 }, { 4, 2, nan } })
  T.eq(grad_of(function(x) return (x:nanmedian(2)) end, n, { 1, 2 }), { { 0, 0, 1 }, { 0, 2, 0 } })
end)

check("median/nanmedian of all elements", function()
  local x = leaf(3, 4)
  T.ok(gc(function(x) return x:median() end, { x }))
  T.ok(gc(function(x) return x:nanmedian() end, { x }))
  T.ok(gc(function(x) return x:t():median() end, { x }))
  T.eq(grad_of(function(x) return x:median() end, lt({ 4, 1, 3, 2 })), { 0, 0, 0, 1 })
  T.eq(grad_of(function(x) return x:nanmedian() end, lt({ 4, nan, 3, 1 })), { 0, 0, 1, 0 })
end)

------------------------------------------------------------------------------
-- broadcast inputs: the engine reduces broadcast gradients through sum
------------------------------------------------------------------------------
check("broadcast inputs into reductions", function()
  local a, b = leaf(3, 4), leaf(4)
  T.ok(gc(function(a, b) return (a + b):sum(1) end, { a, b }))
  T.ok(gc(function(a, b) return (a * b):amax(2) end, { a, b }))
  T.ok(gc(function(a, b) return (a - b):var(1) end, { a, b }))
  local c = leaf(3, 1)
  T.ok(gc(function(a, c) return (a + c):logsumexp(2) end, { a, c }))
end)

------------------------------------------------------------------------------
-- double backward
------------------------------------------------------------------------------
check("gradgradcheck: sum, mean", function()
  local x = leaf(2, 3)
  T.ok(ggc(function(x) return x:sum() end, { x }))
  T.ok(ggc(function(x) return x:sum(2) end, { x }))
  T.ok(ggc(function(x) return x:sum(1, true) end, { x }))
  T.ok(ggc(function(x) return x:mean() end, { x }))
  T.ok(ggc(function(x) return x:mean(2) end, { x }))
end)

check("gradgradcheck: max (full), amax", function()
  local x = leaf(2, 3)
  T.ok(ggc(function(x) return x:max() end, { x }))
  T.ok(ggc(function(x) return x:amax(2) end, { x }))
  T.ok(ggc(function(x) return x:amin({ 1 }, true) end, { x }))
end)

check("gradgradcheck: var, std", function()
  local x = leaf(2, 3)
  T.ok(ggc(function(x) return x:var() end, { x }))
  T.ok(ggc(function(x) return x:var(2) end, { x }))
  T.ok(ggc(function(x) return x:std() end, { x }))
  T.ok(ggc(function(x) return x:std(1, true) end, { x }))
end)

check("gradgradcheck: norm (p = 2), logsumexp", function()
  local x = leaf(2, 3)
  T.ok(ggc(function(x) return x:norm() end, { x }))
  T.ok(ggc(function(x) return x:norm(2, 2) end, { x }))
  T.ok(ggc(function(x) return x:logsumexp(2) end, { x }))
  T.ok(ggc(function(x) return x:logsumexp({ 1, 2 }) end, { x }))
end)

check("gradgradcheck: cumsum, prod", function()
  local x = leaf(2, 3)
  T.ok(ggc(function(x) return x:cumsum(2) end, { x }))
  T.ok(ggc(function(x) return x:cumsum(1) end, { x }))
  T.ok(ggc(function(x) return x:prod() end, { x }))
  T.ok(ggc(function(x) return x:prod(2) end, { x }))
  T.ok(ggc(function(x) return x:prod(1, true) end, { x }))
  -- exact with zeros too: d/dx_k of prod_{l ~= j} x_l is not 0 when x_k is the zero
  local z = lt({ { 2, 0, 3 }, { 1, 4, 5 } })
  T.ok(ggc(function(x) return x:prod() end, { z }))
  T.ok(ggc(function(x) return x:prod(2) end, { z }))
  T.ok(ggc(function(x) return x:prod(1) end, { lt({ { 0, 2 }, { 0, 3 }, { 4, 0 } }) }))
end)

check("gradgradcheck: the other reductions", function()
  local x = leaf(2, 3)
  T.ok(ggc(function(x) return x:nansum(2) end, { x }))
  T.ok(ggc(function(x) return x:nanmean(1, true) end, { x }))
  T.ok(ggc(function(x) return (x:max(2)) end, { x }))
  T.ok(ggc(function(x) return x:min() end, { x }))
  T.ok(ggc(function(x) return (torch.var_mean(x, 2)) end, { x }))
  T.ok(ggc(function(x) return (torch.std_mean(x, 1)) end, { x }))
  for _, p in ipairs({ 1, 3, 0.5, inf }) do
    T.ok(ggc(function(x) return x:norm(p, 2) end, { x }), "p = " .. p)
  end
  T.ok(ggc(function(x) return x:cumprod(2) end, { x }))
  T.ok(ggc(function(x) return (x:cummax(2)) end, { x }))
  T.ok(ggc(function(x) return (x:sort(2)) end, { x }))
  T.ok(ggc(function(x) return (x:topk(2)) end, { x }))
  T.ok(ggc(function(x) return (x:kthvalue(2, 2)) end, { x }))
  T.ok(ggc(function(x) return (x:median(2)) end, { x }))
  T.ok(ggc(function(x) return x:median() end, { x }))
end)

------------------------------------------------------------------------------
-- non-differentiable outputs
------------------------------------------------------------------------------
T.test("argmax, argmin, argsort, all, any, count_nonzero, unique, indices: no grad", function()
  local x = leaf(3, 4)
  T.eq(x:argmax().requires_grad, false)
  T.eq(x:argmax(2).requires_grad, false)
  T.eq(x:argmin(1, true).requires_grad, false)
  T.eq(x:argsort().requires_grad, false)
  T.eq(x:all().requires_grad, false)
  T.eq(x:any(2).requires_grad, false)
  T.eq(x:count_nonzero().requires_grad, false)
  local u, inv, cnt = x:unique()
  T.eq(u.requires_grad, false)
  T.eq(inv.requires_grad, false)
  T.eq(cnt.requires_grad, false)
  local v, i = x:max(2)
  T.eq(v.requires_grad, true)
  T.eq(i.requires_grad, false)
  v, i = x:sort()
  T.eq(i.requires_grad, false)
  v, i = x:cummax(1)
  T.eq(i.requires_grad, false)
end)

T.test("no graph under no_grad", function()
  local x = leaf(3)
  local y = torch.no_grad(function() return x:sum() end)
  T.eq(y.requires_grad, false)
end)

T.done()
