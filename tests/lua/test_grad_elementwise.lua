-- Derivatives of the elementwise ops, activations and conversions: float64 gradcheck for
-- every differentiable op (broadcast operands, non-contiguous inputs), in-place forms on
-- non-leaves, views and leaves, saved-tensor version checks, hand-checked values at ties
-- and kinks, and gradgradcheck for the ops whose backward is itself differentiated.
local T = require "testing"
local f64 = torch.float64

torch.manual_seed(11)

local gc = torch.autograd.gradcheck
local ggc = torch.autograd.gradgradcheck

local function req(t) t.requires_grad = true; return t end
-- (sizes first: `f(..., opts)` would keep only the first size)
local function sized(fn, opts, ...)
  local a = table.pack(...)
  a[a.n + 1] = opts
  return fn(table.unpack(a, 1, a.n + 1))
end
local function leaf(...) return sized(torch.randn, { dtype = f64, requires_grad = true }, ...) end
-- uniform in (lo, hi)
local function unif(lo, hi, ...) return req(sized(torch.rand, { dtype = f64 }, ...) * (hi - lo) + lo) end
local function lt(v) return torch.tensor(v, { dtype = f64, requires_grad = true }) end

-- gradient of sum(w * fn(...)) with respect to the inputs, as tables
local function grads(fn, inputs, w)
  local y = fn(table.unpack(inputs))
  local g = w and torch.tensor(w, { dtype = f64 }) or torch.ones_like(y)
  local gs = torch.autograd.grad({ y }, inputs, { grad_outputs = { g }, allow_unused = true })
  local r = {}
  for i = 1, #inputs do r[i] = gs[i] and gs[i]:totable() end
  return r
end

-- fn(a, b) on a [2,3] and a [3] operand, on two [2,3] operands one of them transposed, and
-- on a 0-dim second operand
local function binary(fn, mk1, mk2)
  mk1 = mk1 or leaf
  mk2 = mk2 or mk1
  T.ok(gc(fn, { mk1(2, 3), mk2(3) }))
  T.ok(gc(function(a, b) return fn(a:t(), b) end, { mk1(3, 2), mk2(2, 3) }))
  T.ok(gc(function(a, b) return fn(a, b:t()) end, { mk1(2, 3), mk2(3, 2) }))
  T.ok(gc(fn, { mk1(3), mk2(2, 3) }))
end

local function unary(fn, mk)
  mk = mk or leaf
  T.ok(gc(fn, { mk(2, 3) }))
  T.ok(gc(function(x) return fn(x:t()) end, { mk(3, 2) }))
end

------------------------------------------------------------------------------
-- arithmetic
------------------------------------------------------------------------------
T.test("add, sub (alpha, broadcast, non-contiguous)", function()
  binary(function(a, b) return a + b end)
  binary(function(a, b) return torch.add(a, b, { alpha = 2.5 }) end)
  binary(function(a, b) return a - b end)
  binary(function(a, b) return a:sub(b, { alpha = -3 }) end)
  binary(function(a, b) return torch.subtract(a, b) end)
  local a, b = leaf(2, 3), leaf(3)
  local g = grads(function(a, b) return torch.sub(a, b, { alpha = 2 }) end, { a, b })
  T.near(g[2], { -4, -4, -4 }, 1e-12)
  T.ok(gc(function(a) return a + 2 end, { leaf(2, 3) }))
  T.ok(gc(function(a) return 1 - a end, { leaf(2, 3) }))
end)

T.test("mul, div (true division)", function()
  binary(function(a, b) return a * b end)
  binary(function(a, b) return a / b end, leaf, function(...) return unif(0.5, 2, ...) end)
  binary(function(a, b) return torch.true_divide(a, b) end, leaf, function(...) return unif(0.5, 2, ...) end)
  T.ok(gc(function(a) return 3 / a end, { unif(0.5, 2, 2, 3) }))
  local g = grads(function(a, b) return a / b end, { lt({ 1, 2 }), lt({ 2, 4 }) })
  T.near(g[1], { 0.5, 0.25 }, 1e-12)
  T.near(g[2], { -0.25, -0.125 }, 1e-12)
end)

T.test("div with rounding_mode, floor_divide: zero gradient", function()
  for _, mode in ipairs({ "trunc", "floor" }) do
    binary(function(a, b) return a:div(b, { rounding_mode = mode }) end, leaf, function(...) return unif(0.5, 2, ...) end)
    local g = grads(function(a, b) return a:div(b, { rounding_mode = mode }) end, { lt({ 1.5, -2.5 }), lt({ 1, 2 }) })
    T.near(g[1], { 0, 0 }, 1e-12)
    T.near(g[2], { 0, 0 }, 1e-12)
  end
  binary(function(a, b) return torch.floor_divide(a, b) end, leaf, function(...) return unif(0.5, 2, ...) end)
  local g = grads(function(a, b) return torch.floor_divide(a, b) end, { lt({ 3.5 }), lt({ 2 }) })
  T.near(g[1], { 0 }, 1e-12)
end)

T.test("remainder, fmod", function()
  local pos = function(...) return unif(0.7, 1.9, ...) end
  binary(function(a, b) return torch.remainder(a, b) end, function(...) return leaf(...) * 3 end, pos)
  binary(function(a, b) return torch.fmod(a, b) end, function(...) return leaf(...) * 3 end, pos)
  -- -7.5 = 2 * -4 + 0.5: d/d other of remainder is -floor(-3.75) = 4; of fmod -trunc(-3.75) = 3
  local g = grads(function(a, b) return torch.remainder(a, b) end, { lt({ -7.5 }), lt({ 2 }) })
  T.near(g[1], { 1 }, 1e-12); T.near(g[2], { 4 }, 1e-12)
  g = grads(function(a, b) return torch.fmod(a, b) end, { lt({ -7.5 }), lt({ 2 }) })
  T.near(g[1], { 1 }, 1e-12); T.near(g[2], { 3 }, 1e-12)
end)

T.test("pow: base and exponent tensors, scalar exponent, zero base", function()
  binary(function(a, b) return torch.pow(a, b) end, function(...) return unif(0.5, 2, ...) end, leaf)
  T.ok(gc(function(a) return a ^ 3 end, { leaf(2, 3) }))
  T.ok(gc(function(a) return a:pow(2.5) end, { unif(0.5, 2, 2, 3) }))
  T.ok(gc(function(b) return torch.pow(torch.tensor(2, { dtype = f64 }), b) end, { leaf(2, 3) }))
  -- 0^e: d/d exponent is 0 where e >= 0 (not 0 * log 0 = nan); d/d base of x^0 is 0
  local g = grads(function(a, b) return torch.pow(a, b) end, { lt({ 0, 0, 2 }), lt({ 2, 0, 0 }) })
  T.near(g[1], { 0, 0, 0 }, 1e-12)
  T.near(g[2], { 0, 0, math.log(2) }, 1e-12)
end)

T.test("neg, abs, sign, square, reciprocal", function()
  unary(function(x) return -x end)
  unary(function(x) return x:neg() end)
  unary(function(x) return torch.negative(x) end)
  unary(function(x) return x:abs() end)
  unary(function(x) return x:sign() end)
  unary(function(x) return x:square() end)
  unary(function(x) return x:reciprocal() end, function(...) return unif(0.5, 2, ...) end)
  local g = grads(function(x) return x:abs() end, { lt({ -2, 0, 3 }) })
  T.near(g[1], { -1, 0, 1 }, 1e-12)
end)

T.test("exp, exp2, expm1, log, log2, log10, log1p, sqrt, rsqrt", function()
  local pos = function(...) return unif(0.5, 2, ...) end
  for _, n in ipairs({ "exp", "exp2", "expm1" }) do unary(function(x) return x[n](x) end) end
  for _, n in ipairs({ "log", "log2", "log10", "log1p", "sqrt", "rsqrt" }) do
    unary(function(x) return x[n](x) end, pos)
  end
  T.ok(gc(function(x) return x:log1p() end, { unif(-0.5, 0.5, 4) }))
end)

T.test("trigonometric and hyperbolic", function()
  for _, n in ipairs({ "sin", "cos", "tan", "atan", "sinh", "cosh", "tanh", "sigmoid" }) do
    unary(function(x) return x[n](x) end)
  end
  for _, n in ipairs({ "asin", "acos", "arcsin", "arccos", "arctan" }) do
    unary(function(x) return x[n](x) end, function(...) return unif(-0.9, 0.9, ...) end)
  end
  binary(function(a, b) return torch.atan2(a, b) end)
  binary(function(a, b) return torch.hypot(a, b) end)
end)

T.test("erf, erfc, erfinv, logit", function()
  unary(function(x) return x:erf() end)
  unary(function(x) return x:erfc() end)
  unary(function(x) return x:erfinv() end, function(...) return unif(-0.9, 0.9, ...) end)
  unary(function(x) return x:logit() end, function(...) return unif(0.1, 0.9, ...) end)
  unary(function(x) return x:logit(0.05) end, function(...) return unif(0.1, 0.9, ...) end)
  -- with eps, the input is clamped to [eps, 1 - eps]: no gradient outside
  local g = grads(function(x) return x:logit(0.2) end, { lt({ 0.1, 0.5, 0.9 }) })
  T.near(g[1], { 0, 4, 0 }, 1e-12)
end)

T.test("floor, ceil, round, trunc, frac", function()
  for _, n in ipairs({ "floor", "ceil", "round", "trunc", "fix" }) do
    unary(function(x) return x[n](x) end)
    local g = grads(function(x) return x[n](x) end, { lt({ -1.3, 2.7 }) })
    T.near(g[1], { 0, 0 }, 1e-12)
  end
  unary(function(x) return x:round({ decimals = 1 }) * 1 end)
  unary(function(x) return x:frac() end)
end)

------------------------------------------------------------------------------
-- selection: clamp, maximum, minimum, where, nan_to_num
------------------------------------------------------------------------------
T.test("clamp with number bounds, clip, clamp_min, clamp_max", function()
  unary(function(x) return x:clamp(-0.5, 0.5) end)
  unary(function(x) return x:clamp(-0.5) end)
  unary(function(x) return x:clamp(nil, 0.5) end)
  unary(function(x) return torch.clip(x, -0.3, 0.4) end)
  binary(function(a, b) return torch.clamp_min(a, b) end)
  binary(function(a, b) return torch.clamp_max(a, b) end)
  -- bounds are inclusive for self's gradient
  local g = grads(function(x) return x:clamp(-1, 1) end, { lt({ -2, -1, 0, 1, 2 }) })
  T.near(g[1], { 0, 1, 1, 1, 0 }, 1e-12)
end)

T.test("clamp with tensor bounds: each bound gets the gradient where it is selected", function()
  local x, lo, hi = leaf(2, 3), leaf(3) - 0.5, leaf(3) + 0.5
  lo = lo:detach(); hi = hi:detach(); req(lo); req(hi)
  T.ok(gc(function(x, lo, hi) return torch.clamp(x, lo, hi) end, { x, lo, hi }))
  T.ok(gc(function(x, lo) return torch.clamp(x, lo) end, { x, lo }))
  T.ok(gc(function(x, hi) return torch.clamp(x, nil, hi) end, { x, hi }))
  T.ok(gc(function(x, lo, hi) return torch.clamp(x:t(), lo, hi) end, { leaf(3, 2), lt({ { -0.2 }, { 0.1 } }), lt({ { 0.3 }, { 0.5 } }) }))
  -- x = {-2, 0, 2, 0}, lo = {-1, -1, -1, 1}, hi = {1, 1, 1, -1}: the last has lo > hi, result hi
  local g = grads(function(x, lo, hi) return torch.clamp(x, lo, hi) end,
    { lt({ -2, 0, 2, 0 }), lt({ -1, -1, -1, 1 }), lt({ 1, 1, 1, -1 }) })
  T.near(g[1], { 0, 1, 0, 0 }, 1e-12)
  T.near(g[2], { 1, 0, 0, 0 }, 1e-12)
  T.near(g[3], { 0, 0, 1, 1 }, 1e-12)
end)

T.test("maximum, minimum: ties split the gradient", function()
  binary(function(a, b) return torch.maximum(a, b) end)
  binary(function(a, b) return torch.minimum(a, b) end)
  local a, b = { 1, 2, 3 }, { 1, 0, 5 }
  local g = grads(function(a, b) return torch.maximum(a, b) end, { lt(a), lt(b) })
  T.near(g[1], { 0.5, 1, 0 }, 1e-12); T.near(g[2], { 0.5, 0, 1 }, 1e-12)
  g = grads(function(a, b) return torch.minimum(a, b) end, { lt(a), lt(b) })
  T.near(g[1], { 0.5, 0, 1 }, 1e-12); T.near(g[2], { 0.5, 1, 0 }, 1e-12)
end)

T.test("where: condition is not differentiable; method form", function()
  local c = torch.tensor({ true, false, true })
  binary(function(a, b) return torch.where(c, a, b) end)
  T.ok(gc(function(a, b) return a:where(c, b) end, { leaf(2, 3), leaf(3) }))
  T.ok(gc(function(a) return torch.where(c, a, 0) end, { leaf(2, 3) }))
  local g = grads(function(a, b) return torch.where(c, a, b) end, { lt({ 1, 2, 3 }), lt({ 4, 5, 6 }) })
  T.near(g[1], { 1, 0, 1 }, 1e-12); T.near(g[2], { 0, 1, 0 }, 1e-12)
end)

T.test("nan_to_num: gradient only where self is finite", function()
  unary(function(x) return x:nan_to_num() end)
  local inf = math.huge
  local g = grads(function(x) return x:nan_to_num(0, 5, -5) end, { lt({ 0 / 0, inf, -inf, 2 }) })
  T.near(g[1], { 0, 0, 0, 1 }, 1e-12)
end)

------------------------------------------------------------------------------
-- lerp, addcmul, addcdiv
------------------------------------------------------------------------------
T.test("lerp with tensor and number weights", function()
  T.ok(gc(function(a, b, w) return torch.lerp(a, b, w) end, { leaf(2, 3), leaf(3), leaf(2, 1) }))
  T.ok(gc(function(a, b, w) return torch.lerp(a:t(), b, w) end, { leaf(3, 2), leaf(2, 3), leaf(3) }))
  T.ok(gc(function(a, b) return a:lerp(b, 0.3) end, { leaf(2, 3), leaf(3) }))
end)

T.test("addcmul, addcdiv (value, broadcast, non-contiguous)", function()
  local pos = function(...) return unif(0.5, 2, ...) end
  T.ok(gc(function(s, a, b) return torch.addcmul(s, a, b) end, { leaf(2, 3), leaf(3), leaf(2, 1) }))
  T.ok(gc(function(s, a, b) return torch.addcmul(s, a, b, { value = -2 }) end, { leaf(3), leaf(3, 2):t(), leaf(2, 3) }))
  T.ok(gc(function(s, a, b) return torch.addcmul(s:t(), a, b, { value = 0.5 }) end, { leaf(3, 2), leaf(2, 3), leaf(3) }))
  T.ok(gc(function(s, a, b) return torch.addcdiv(s, a, b) end, { leaf(2, 3), leaf(3), pos(2, 1) }))
  T.ok(gc(function(s, a, b) return torch.addcdiv(s, a, b:t(), { value = 3 }) end, { leaf(2, 3), leaf(3), pos(3, 2) }))
end)

------------------------------------------------------------------------------
-- activations
------------------------------------------------------------------------------
T.test("relu, relu6, hardtanh, leaky_relu", function()
  unary(function(x) return x:relu() end)
  unary(function(x) return torch.relu6(x * 4) end)
  unary(function(x) return x:hardtanh() end)
  unary(function(x) return x:hardtanh(-0.3, 0.7) end)
  unary(function(x) return x:leaky_relu() end)
  unary(function(x) return x:leaky_relu(0.2) end)
  local g = grads(function(x) return x:relu() end, { lt({ -1, 0, 2 }) })
  T.near(g[1], { 0, 0, 1 }, 1e-12)
  g = grads(function(x) return x:relu6() end, { lt({ -1, 0, 3, 6, 7 }) })
  T.near(g[1], { 0, 0, 1, 0, 0 }, 1e-12)
  g = grads(function(x) return x:leaky_relu(0.1) end, { lt({ -1, 0, 2 }) })
  T.near(g[1], { 0.1, 0.1, 1 }, 1e-12)
end)

T.test("elu (alpha, scale, input_scale), gelu (both), silu, softplus (beta, threshold)", function()
  unary(function(x) return x:elu() end)
  unary(function(x) return x:elu(0.7, 1.5, 2) end)
  unary(function(x) return x:gelu() end)
  unary(function(x) return x:gelu({ approximate = "tanh" }) end)
  unary(function(x) return x:silu() end)
  unary(function(x) return x:softplus() end)
  unary(function(x) return x:softplus(2, 1) end)
  -- above the threshold softplus is the identity
  local g = grads(function(x) return x:softplus(1, 1) end, { lt({ 3 }) })
  T.near(g[1], { 1 }, 1e-12)
  g = grads(function(x) return x:gelu() end, { lt({ 0 }) })
  T.near(g[1], { 0.5 }, 1e-12)
end)

------------------------------------------------------------------------------
-- conversions and whole-tensor writes
------------------------------------------------------------------------------
T.test("to, double, type_as, clone: identity gradient cast back to the input dtype", function()
  unary(function(x) return x:clone() end)
  unary(function(x) return x:to(f64, { copy = true }) end)
  unary(function(x) return x:double() * 2 end)
  unary(function(x) return x:type_as(torch.zeros(1, { dtype = f64 })) end)   -- x itself
  local x = torch.randn(2, 3, { requires_grad = true })
  local y = x:to(f64)
  T.eq(y.dtype, f64); T.ok(y.requires_grad)
  local loss = (y * torch.arange(1, 4, { dtype = f64 })):sum()
  loss:backward()
  T.eq(x.grad.dtype, torch.float32)
  T.tensor(x.grad, { { 1, 2, 3 }, { 1, 2, 3 } })
  local z = x:float()
  T.ok(rawequal(z, x) or (z.grad_fn == nil and z.requires_grad))   -- same dtype: self itself
  local h = x:half():float()
  T.ok(h.requires_grad)
end)

T.test("conversions to integer dtypes are not differentiable", function()
  local x = leaf(2, 3)
  for _, c in ipairs({ "long", "int", "short", "char", "byte", "bool" }) do
    local r = x[c](x)
    T.ok(not r.requires_grad, c)
    T.ok(r.grad_fn == nil, c)
  end
  local r = x:to(torch.int64)
  T.ok(not r.requires_grad)
end)

T.test("copy_: zero gradient for self's old value, src gets grad reduced to its shape", function()
  local function f(x, s) local y = x * 2; y:copy_(s); return y * x end
  T.ok(gc(f, { leaf(2, 3), leaf(3) }))
  T.ok(gc(function(x, s) local y = x * 1; y:copy_(s:t()); return y end, { leaf(2, 3), leaf(3, 2) }))
  -- into a view: only that row is replaced
  local function g(x, s) local y = x * 2; y:select(1, 1):copy_(s); return y end
  T.ok(gc(g, { leaf(2, 3), leaf(3) }))
  local gx = grads(g, { leaf(2, 3), leaf(3) })
  T.near(gx[1], { { 0, 0, 0 }, { 2, 2, 2 } }, 1e-12)
  T.near(gx[2], { 1, 1, 1 }, 1e-12)
  -- a buffer that does not require grad picks up src's history; dtype converted back
  local s = torch.randn(3, { requires_grad = true })
  local buf = torch.zeros(2, 3, { dtype = f64 })
  buf:copy_(s)
  T.ok(buf.requires_grad)
  T.tensor(buf, s:double():detach():expand(2, 3):totable(), { tol = 1e-12 })
  buf:sum():backward()
  T.eq(s.grad.dtype, torch.float32)
  T.tensor(s.grad, { 2, 2, 2 })
  -- exact values even where self held infinities
  local y = lt({ math.huge, 1 }) * 1
  y:copy_(torch.tensor({ 3, 4 }, { dtype = f64 }))
  T.tensor(y, { 3, 4 })
  T.raises(function() leaf(3):copy_(torch.zeros(3, { dtype = f64 })) end, "copy_", "leaf Variable")
  T.eq(tostring((leaf(3) * 1):copy_(leaf(3)).grad_fn), "<CopyBackwards>")
end)

T.test("fill_, zero_: zero gradient for the old value", function()
  local function f(x) local y = x * 3; y:narrow(2, 1, 1):fill_(5); return y * x end
  T.ok(gc(f, { leaf(2, 3) }))
  T.ok(gc(function(x) local y = x * 3; y:select(2, 2):zero_(); return y end, { leaf(2, 3) }))
  local g = grads(function(x) local y = x * 3; y:narrow(2, 1, 1):fill_(5); return y end, { leaf(2, 2) })
  T.near(g[1], { { 0, 3 }, { 0, 3 } }, 1e-12)
  local y = lt({ math.huge }) * 1
  y:fill_(2); T.tensor(y, { 2 })
  g = grads(function(x) local y = x * 1; y:zero_(); return y end, { leaf(3) })
  T.near(g[1], { 0, 0, 0 }, 1e-12)
  T.raises(function() leaf(3):fill_(1) end, "fill_", "leaf Variable")
  T.raises(function() leaf(3):zero_() end, "zero_", "leaf Variable")
  -- without grad mode a leaf may be written (initialisation)
  local w = leaf(3)
  torch.no_grad(function() w:fill_(0.5) end)
  T.tensor(w, { 0.5, 0.5, 0.5 })
end)

------------------------------------------------------------------------------
-- in-place forms
------------------------------------------------------------------------------
local function pos01(...) return unif(0.1, 0.9, ...) end

T.test("in-place forms on non-leaves match their out-of-place gradients", function()
  local pos = function(...) return unif(0.5, 2, ...) end
  local cases = {
    { "sin_" }, { "cos_" }, { "neg_" }, { "abs_" }, { "square_" }, { "log_", pos }, { "log1p_", pos },
    { "relu6_" }, { "leaky_relu_" }, { "elu_" }, { "gelu_" }, { "silu_" }, { "hardtanh_" },
    { "erf_" }, { "atan_" }, { "sinh_" }, { "frac_" }, { "floor_" }, { "nan_to_num_" }, { "logit_", pos01 },
  }
  for _, c in ipairs(cases) do
    local n, mk = c[1], c[2] or leaf
    T.ok(gc(function(x) local y = x * 1; y[n](y); return y end, { mk(2, 3) }), n)
  end
  local pos2 = function(...) return unif(0.5, 2, ...) end
  T.ok(gc(function(a, b) local y = a * 1; y:add_(b, { alpha = 2 }); return y end, { leaf(2, 3), leaf(3) }))
  T.ok(gc(function(a, b) local y = a * 1; y:sub_(b); return y end, { leaf(2, 3), leaf(3) }))
  T.ok(gc(function(a, b) local y = a * 1; y:mul_(b); return y end, { leaf(2, 3), leaf(3) }))
  T.ok(gc(function(a, b) local y = a * 1; y:div_(b); return y end, { leaf(2, 3), pos2(3) }))
  T.ok(gc(function(a) local y = a * 1; y:pow_(3); return y end, { leaf(2, 3) }))
  T.ok(gc(function(a, b) local y = a * 1; y:clamp_(-0.5, 0.5); return y * b end, { leaf(2, 3), leaf(3) }))
  T.ok(gc(function(a, b, w) local y = a * 1; y:lerp_(b, w); return y end, { leaf(2, 3), leaf(3), leaf(3) }))
  T.ok(gc(function(a, b, c) local y = a * 1; y:addcmul_(b, c); return y end, { leaf(2, 3), leaf(3), leaf(2, 3) }))
  -- twice in a row, the second using the first's result
  T.ok(gc(function(x) local y = x * 1; y:sin_(); y:mul_(2); y:cos_(); return y end, { leaf(2, 3) }))
end)

-- These formulas use the op's result, saved after the in-place write (needs the saved
-- output's version to account for the entry point's version bump).
T.test("in-place forms of ops whose derivative uses the result", function()
  local pos = function(...) return unif(0.5, 2, ...) end
  local cases = {
    { "exp_" }, { "exp2_" }, { "expm1_" }, { "tanh_" }, { "sigmoid_" }, { "tan_", pos01 }, { "relu_" },
    { "sqrt_", pos }, { "rsqrt_", pos }, { "reciprocal_", pos }, { "erfinv_", pos01 },
  }
  for _, c in ipairs(cases) do
    local n, mk = c[1], c[2] or leaf
    T.ok(gc(function(x) local y = x * 1; y[n](y); return y end, { mk(2, 3) }), n)
  end
  T.ok(gc(function(a, b) local y = a * 1; y:pow_(b); return y end, { unif(0.5, 2, 2, 3), leaf(3) }))
  T.ok(gc(function(a, b) local y = a * 1; y:hypot_(b); return y end, { leaf(2, 3), leaf(3) }))
  T.ok(ggc(function(x) local y = x * 1; y:exp_(); return y end, { leaf(2, 3) }))
end)

T.test("in-place on a view of a non-leaf rewrites the base's history", function()
  T.ok(gc(function(x) local y = x * 1; y:select(1, 2):exp_(); return y end, { leaf(2, 3) }))
  T.ok(gc(function(x, b) local y = x * 1; y:narrow(2, 2, 2):mul_(b); return y end, { leaf(2, 3), leaf(2) }))
end)

T.test("in-place on a leaf that requires grad raises", function()
  T.raises(function() leaf(3):exp_() end, "exp_", "leaf Variable that requires grad")
  T.raises(function() leaf(3):add_(1) end, "add_", "leaf Variable")
  T.raises(function() leaf(3):relu_() end, "relu_", "leaf Variable")
  T.raises(function() leaf(2, 3):select(1, 1):mul_(2) end, "mul_", "view of a leaf Variable")
  -- a leaf that does not require grad may take in place an operand that does
  local a, b = torch.zeros(3, { dtype = f64 }), leaf(3)
  a:add_(b)
  T.ok(a.requires_grad)
  a:sum():backward()
  T.tensor(b.grad, { 1, 1, 1 })
end)

T.test("modifying a saved tensor in place makes backward raise", function()
  local x = leaf(3)
  local y = x * 1
  local z = y:sin()          -- saves y
  y:add_(1)
  T.raises(function() z:sum():backward() end, "modified by an inplace operation")
  -- a saved output (exp saves its result)
  local w = x * 1
  local e = w:exp()
  e:mul_(2)
  T.raises(function() e:sum():backward() end, "modified by an inplace operation")
  -- ops that save nothing are not affected
  local a = x * 1
  local s = a + 1
  a:mul_(2)
  s:sum():backward()
  T.tensor(x.grad, { 1, 1, 1 })
end)

T.test("float32 inputs get float32 gradients", function()
  local x = torch.randn(2, 3, { requires_grad = true })
  local y = torch.randn(3, { dtype = f64, requires_grad = true })
  local z = (x * y):sin()
  T.eq(z.dtype, f64)
  z:sum():backward()
  T.eq(x.grad.dtype, torch.float32); T.eq(y.grad.dtype, f64)
  T.tensor(y.grad, nil, { shape = { 3 } })
end)

------------------------------------------------------------------------------
-- second order
------------------------------------------------------------------------------
T.test("gradgradcheck", function()
  local pos = function(...) return unif(0.5, 2, ...) end
  T.ok(ggc(function(a, b) return a + b end, { leaf(2, 3), leaf(3) }))
  T.ok(ggc(function(a, b) return torch.sub(a, b, { alpha = 2 }) end, { leaf(2, 3), leaf(3) }))
  T.ok(ggc(function(a, b) return a * b end, { leaf(2, 3), leaf(3) }))
  T.ok(ggc(function(a, b) return a / b end, { leaf(2, 3), pos(3) }))
  T.ok(ggc(function(a, b) return torch.pow(a, b) end, { pos(2, 3), leaf(3) }))
  T.ok(ggc(function(a) return a ^ 3 end, { leaf(2, 3) }))
  T.ok(ggc(function(x) return x:exp() end, { leaf(2, 3) }))
  T.ok(ggc(function(x) return x:log() end, { pos(2, 3) }))
  T.ok(ggc(function(x) return x:sin() end, { leaf(2, 3) }))
  T.ok(ggc(function(x) return x:tanh() end, { leaf(2, 3) }))
  T.ok(ggc(function(x) return x:sigmoid() end, { leaf(2, 3) }))
  T.ok(ggc(function(x) return x:relu() end, { leaf(2, 3) }))
  T.ok(ggc(function(x) return x:gelu() end, { leaf(2, 3) }))
  T.ok(ggc(function(x) return x:gelu({ approximate = "tanh" }) end, { leaf(2, 3) }))
  T.ok(ggc(function(x) return x:silu() end, { leaf(2, 3) }))
  T.ok(ggc(function(x) return x:softplus() end, { leaf(2, 3) }))
  local c = torch.tensor({ true, false, true })
  T.ok(ggc(function(a, b) return torch.where(c, a, b) end, { leaf(2, 3), leaf(3) }))
  T.ok(ggc(function(x) local y = x * 1; y:sin_(); return y end, { leaf(2, 3) }))
end)

T.done()
