-- Derivatives of the ops of src/ops/math.lua: float64 gradcheck of every
-- differentiable op (broadcast operands, non-contiguous inputs, in-place forms on
-- non-leaves), gradgradcheck where the backward is itself differentiated, and
-- hand-checked values at ties and special points.
local T = require "testing"
local f64 = torch.float64

torch.manual_seed(21)

local gc = torch.autograd.gradcheck
local ggc = torch.autograd.gradgradcheck

local function req(t) t.requires_grad = true; return t end
local function leaf(...) return req(torch.randn(...):double()) end
-- uniform in (lo, hi)
local function unif(lo, hi, ...) return req(torch.rand(...):double() * (hi - lo) + lo) end
local function lt(v) return torch.tensor(v, { dtype = f64, requires_grad = true }) end
local function pos(...) return unif(0.3, 3, ...) end

local function grads(fn, inputs)
  local y = fn(table.unpack(inputs))
  local gs = torch.autograd.grad({ y }, inputs, { grad_outputs = { torch.ones_like(y) }, allow_unused = true })
  local r = {}
  for i = 1, #inputs do r[i] = gs[i] and gs[i]:totable() end
  return r
end

-- fn(a, b) with broadcasting, transposed operands, and the broadcast the other way
local function binary(fn, mk1, mk2)
  mk1 = mk1 or leaf
  mk2 = mk2 or mk1
  T.ok(gc(fn, { mk1(2, 3), mk2(3) }))
  T.ok(gc(function(a, b) return fn(a:t(), b) end, { mk1(3, 2), mk2(2, 3) }))
  T.ok(gc(fn, { mk1(3), mk2(2, 3) }))
end
local function unary(fn, mk)
  mk = mk or leaf
  T.ok(gc(fn, { mk(2, 3) }))
  T.ok(gc(function(x) return fn(x:t()) end, { mk(3, 2) }))
  -- the in-place form on a non-leaf, when there is one
end

T.test("logaddexp, logaddexp2", function()
  binary(torch.logaddexp)
  binary(torch.logaddexp2)
  binary(function(a, b) return a:logaddexp(b) end)
  T.ok(ggc(torch.logaddexp, { leaf(2, 3), leaf(3) }))
  T.ok(ggc(torch.logaddexp2, { leaf(3), leaf(3) }))
  -- equal arguments split the gradient
  local g = grads(torch.logaddexp, { lt({ 1, -2 }), lt({ 1, -2 }) })
  T.near(g[1], { 0.5, 0.5 }, 1e-12)
  T.near(g[2], { 0.5, 0.5 }, 1e-12)
end)

T.test("xlogy", function()
  binary(torch.xlogy, leaf, pos)
  T.ok(gc(function(a, b) return a:clone():xlogy_(b) end, { leaf(2, 3), pos(3) }))
  T.ok(ggc(torch.xlogy, { leaf(3), pos(3) }))
  -- at self == 0 the gradient for self is 0, for other 0 / other = 0
  local g = grads(torch.xlogy, { lt({ 0, 2 }), lt({ 3, 4 }) })
  T.near(g[1], { 0, math.log(4) }, 1e-12)
  T.near(g[2], { 0, 0.5 }, 1e-12)
end)

T.test("fmax, fmin (NaN and ties)", function()
  binary(torch.fmax)
  binary(torch.fmin)
  local nan = -(0 / 0)
  local g = grads(torch.fmax, { lt({ 1, nan, 2, 3 }), lt({ 1, 5, nan, 4 }) })
  T.eq(g[1], { 1, 0, 1, 0 })   -- ties go to self
  T.eq(g[2], { 0, 1, 0, 1 })
  g = grads(torch.fmin, { lt({ 1, nan, 2, 3 }), lt({ 1, 5, nan, 4 }) })
  T.eq(g[1], { 1, 0, 1, 1 })
  T.eq(g[2], { 0, 1, 0, 0 })
end)

T.test("ldexp, float_power, deg2rad, rad2deg, sgn", function()
  T.ok(gc(function(a) return torch.ldexp(a, torch.tensor({ 1, -2, 3 })) end, { leaf(2, 3) }))
  T.ok(gc(function(a, b) return torch.ldexp(a, b) end, { leaf(2, 3), leaf(3) }))
  binary(torch.float_power, pos, leaf)
  T.ok(gc(function(a) return torch.float_power(a, 3) end, { leaf(2, 3) }))
  T.ok(gc(function(a) return a:clone():float_power_(2) end, { leaf(2, 3) }))
  unary(torch.deg2rad)
  unary(torch.rad2deg)
  unary(function(x) return x:clone():deg2rad_() end)
  unary(torch.sgn)
  local g = grads(torch.sgn, { lt({ -2, 0, 3 }) })
  T.eq(g[1], { 0, 0, 0 })
end)

T.test("sinc", function()
  unary(torch.sinc)
  unary(function(x) return x:clone():sinc_() end)
  T.ok(ggc(torch.sinc, { leaf(4) }))
  local g = grads(torch.sinc, { lt({ 0, 0.5 }) })
  -- d/dx sinc at 1/2: (cos(pi/2) - sinc(1/2)) / (1/2) = -4 / pi
  T.near(g[1], { 0, -4 / math.pi }, 1e-12)
end)

T.test("lgamma, digamma, polygamma, mvlgamma", function()
  unary(torch.lgamma, pos)
  unary(function(x) return torch.lgamma(-x) end, function(...) return unif(0.1, 0.9, ...) end)
  unary(function(x) return x:clone():lgamma_() end, pos)
  unary(torch.digamma, pos)
  unary(function(x) return x:clone():digamma_() end, pos)
  for n = 0, 3 do
    unary(function(x) return torch.polygamma(n, x) end, pos)
    unary(function(x) return x:polygamma(n) end, pos)
  end
  unary(function(x) return x:clone():polygamma_(2) end, pos)
  T.ok(ggc(torch.lgamma, { pos(4) }))
  T.ok(ggc(torch.digamma, { pos(4) }))
  for p = 1, 4 do
    unary(function(x) return torch.mvlgamma(x, p) end, function(...) return unif(2, 4, ...) end)
  end
  unary(function(x) return x:clone():mvlgamma_(2) end, function(...) return unif(2, 4, ...) end)
  -- lgamma'(1) = digamma(1) = -euler gamma
  local g = grads(torch.lgamma, { lt({ 1 }) })
  T.near(g[1], { -0.57721566490153286 }, 1e-14)
end)

T.test("i0, _i1", function()
  unary(torch.i0, function(...) return leaf(...) * 3 end)
  unary(function(x) return x:clone():i0_() end)
  unary(torch._i1, function(...) return leaf(...) * 3 end)
  T.ok(gc(torch.i0, { lt({ 0, 35, -40 }) }))
  T.ok(ggc(torch.i0, { leaf(4) }))
  local g = grads(torch._i1, { lt({ 0 }) })
  T.near(g[1], { 0.5 }, 1e-15)
end)

T.test("heaviside, nextafter: no derivative", function()
  T.raises(function() torch.heaviside(leaf(3), torch.zeros(3):double()):sum():backward() end, "heaviside")
  T.raises(function() torch.nextafter(leaf(3), torch.zeros(3):double()):sum():backward() end, "nextafter")
  -- without grad they run
  T.eq(torch.heaviside(torch.tensor({ -1, 0, 1 }), torch.tensor({ 7 })):totable(), { 0, 7, 1 })
end)

T.test("logcumsumexp", function()
  T.ok(gc(function(x) return torch.logcumsumexp(x, 1) end, { leaf(4, 3) }))
  T.ok(gc(function(x) return torch.logcumsumexp(x, 2) end, { leaf(4, 3) }))
  T.ok(gc(function(x) return torch.logcumsumexp(x:t(), -1) end, { leaf(4, 3) }))
  T.ok(gc(function(x) return x:logcumsumexp(1) * torch.tensor({ 1, -2, 3, -1 }, { dtype = f64 }) end, { leaf(4) }))
  -- far apart values: no overflow in the backward
  local g = grads(function(x) return torch.logcumsumexp(x, 1) end, { lt({ -800, 0, 800 }) })
  T.near(g[1], { 1, 1, 1 }, 1e-12)
end)

T.test("cov, cross, dist, cdist, pdist, renorm", function()
  T.ok(gc(function(x) return torch.cov(x) end, { leaf(3, 5) }))
  T.ok(gc(function(x) return torch.cov(x, { correction = 0 }) end, { leaf(5) }))
  T.ok(gc(function(x, w) return torch.cov(x, { fweights = torch.tensor({ 1, 2, 1, 3 }), aweights = w }) end,
          { leaf(2, 4), pos(4) }))
  T.ok(gc(function(a, b) return torch.cross(a, b) end, { leaf(4, 3), leaf(4, 3) }))
  T.ok(gc(function(a, b) return torch.cross(a, b, 1) end, { leaf(3, 2), leaf(3, 1) }))
  T.ok(gc(function(a, b) return a:t():cross(b, 2) end, { leaf(3, 2), leaf(3) }))
  for _, p in ipairs({ 2, 1, 3.5, math.huge }) do
    T.ok(gc(function(a, b) return torch.dist(a, b, p) end, { leaf(2, 3), leaf(3) }))
    T.ok(gc(function(a, b) return torch.cdist(a, b, p) end, { leaf(2, 3, 4), leaf(2, 5, 4) }))
    T.ok(gc(function(a) return torch.pdist(a, p) end, { leaf(4, 3) }))
  end
  T.ok(gc(function(a, b) return torch.cdist(a:transpose(1, 2), b) end, { leaf(4, 3), leaf(5, 4) }))
  T.ok(gc(function(x) return torch.renorm(x, 2, 1, 1) end, { leaf(3, 4) }))
  T.ok(gc(function(x) return x:renorm(1, 2, 0.5) end, { leaf(3, 4) }))
  T.ok(gc(function(x) return x:clone():renorm_(3, 1, 0.2) end, { leaf(2, 3, 2) }))
end)

T.test("quantile, nanquantile, msort", function()
  for _, mode in ipairs({ "linear", "lower", "higher", "midpoint", "nearest" }) do
    T.ok(gc(function(x) return torch.quantile(x, torch.tensor({ 0.2, 0.5, 0.9 }, { dtype = f64 }), 2, false,
                                              { interpolation = mode }) end, { leaf(3, 5) }))
    T.ok(gc(function(x) return torch.nanquantile(x, 0.3, 1, true, { interpolation = mode }) end, { leaf(4, 2) }))
  end
  T.ok(gc(function(x) return torch.quantile(x, 0.7) end, { leaf(3, 4) }))
  T.ok(gc(function(x) return torch.quantile(x:t(), 0.4, 1) end, { leaf(3, 4) }))
  T.ok(gc(function(x)
    local y = torch.cat({ x, torch.full({ 2, 1 }, -(0 / 0), { dtype = f64 }) }, 2)   -- NaN in the last column
    return torch.nanquantile(y, 0.5, 2)
  end, { leaf(2, 4) }))
  T.ok(gc(torch.msort, { leaf(4, 3) }))
  T.ok(gc(function(x) return x:t():msort() end, { leaf(4, 3) }))
end)

T.test("trapezoid, tensordot", function()
  T.ok(gc(function(y) return torch.trapezoid(y) end, { leaf(3, 5) }))
  T.ok(gc(function(y, x) return torch.trapezoid(y, x) end, { leaf(3, 5), leaf(5) }))
  T.ok(gc(function(y, x) return torch.trapz(y, x, { dim = 1 }) end, { leaf(3, 5), leaf(3, 5) }))
  T.ok(gc(function(y) return torch.trapezoid(y:t(), { dx = 0.3 }) end, { leaf(3, 5) }))
  T.ok(gc(function(a, b) return torch.tensordot(a, b) end, { leaf(2, 3, 4), leaf(3, 4, 2) }))
  T.ok(gc(function(a, b) return torch.tensordot(a, b, { 1, 3 }, { 2, 1 }) end, { leaf(2, 3, 4), leaf(4, 2) }))
  T.ok(gc(function(a, b) return torch.tensordot(a:t(), b, 1) end, { leaf(3, 2), leaf(3, 4) }))
end)

T.done()
