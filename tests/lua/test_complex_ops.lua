-- test_complex_ops.lua — the breadth of complex support: the functions added
-- for complex (log2, log10, asinh, acosh, atanh; sgn's derivative), scans and
-- statistics (cumsum, cumprod, var, std, trace, isclose), the indexing ops,
-- complex Scalar arguments, stft/istft of complex signals, and gradgradcheck
-- of complex inputs. Values against PyTorch 1.13 (pyref, one Python run per
-- group), gradients with float64 gradcheck/gradgradcheck, errors named.
local T = require "testing"
local P = require "pyref"
local C = torch.complex_number

local function R(t) return t:is_complex() and torch.view_as_real(t) or t end
-- the snippet's prelude: complex inputs travel as their real views
local PY = "def C(v): return torch.view_as_complex(v.contiguous())\n" ..
           "def R(t): return torch.view_as_real(t) if t.is_complex() else t\n"
local function near(a, b, tol) T.near(R(a):to(torch.float64):totable(), b:totable(), tol or 1e-10) end

-- points off and near the branch cuts (the imaginary axis beyond +-i for asinh, the real
-- axis below 1 for acosh and beyond +-1 for atanh), approached from both sides
local Z = torch.tensor({C(1, 2), C(-0.5, 3), C(0.3, -0.7), C(2, 0.5), C(1e-12, 2), C(-1e-12, 2),
                        C(-2, 1e-12), C(-2, -1e-12), C(2, 1e-12), C(2, -1e-12), C(0.5, 0), C(-3, -4)},
                       {dtype = torch.cdouble})

T.test("log2, log10, asinh, acosh, atanh and sgn of complex match PyTorch (branch cuts included)", function()
  if not P.available() then return T.skip(P.why()) end
  local r = P.run({ zv = torch.view_as_real(Z) }, PY .. [=[
z = C(zv)
out = [R(f(z)) for f in (torch.log2, torch.log10, torch.asinh, torch.acosh, torch.atanh, torch.sgn)]
z32 = z.to(torch.complex64)
out32 = [R(f(z32)).double() for f in (torch.log2, torch.asinh, torch.atanh)]
x = torch.tensor([0.25, 0.5, 0.9, -0.7])
real = [torch.asinh(x), torch.acosh(x + 1.5), torch.atanh(x), torch.acosh(x)]

]=], { "out", "out32", "real" })
  local fns = { torch.log2, torch.log10, torch.asinh, torch.acosh, torch.atanh, torch.sgn }
  for i, f in ipairs(fns) do near(f(Z), r[1][i], 1e-12) end
  local z32 = Z:to(torch.cfloat)
  for i, f in ipairs({ torch.log2, torch.asinh, torch.atanh }) do near(f(z32), r[2][i], 2e-6) end
  local x = torch.tensor({0.25, 0.5, 0.9, -0.7}, {dtype = torch.double})
  near(torch.asinh(x), r[3][1]); near(torch.acosh(x + 1.5), r[3][2]); near(torch.atanh(x), r[3][3])
  T.ok(torch.acosh(x):isnan():all():item())   -- below 1: nan, as PyTorch
  -- aliases, in-place, out=, integer inputs
  near(torch.arctanh(x), r[3][3])
  local y = x:clone(); y:asinh_(); near(y, r[3][1])
  local o = torch.empty(12, {dtype = torch.cdouble}); torch.atanh(Z, {out = o}); near(o, r[1][5], 1e-12)
  T.eq(torch.asinh(torch.tensor({1, 2})).dtype, torch.get_default_dtype())
end)

T.test("derivatives of the new functions: gradcheck and gradgradcheck, complex and real", function()
  local z = torch.tensor({C(1, 2), C(-0.5, 3), C(0.3, -0.7), C(-2, 0.5)}, {dtype = torch.cdouble}):requires_grad_()
  for _, name in ipairs({ "log2", "log10", "asinh", "acosh", "atanh", "sgn" }) do
    local f = function(a) return torch[name](a) end
    T.ok(torch.autograd.gradcheck(f, {z}), name)
    T.ok(torch.autograd.gradgradcheck(f, {z}), name .. " (second order)")
  end
  local x = torch.tensor({0.3, -0.6, 0.8}, {dtype = torch.double}):requires_grad_()
  T.ok(torch.autograd.gradcheck(torch.asinh, {x}))
  T.ok(torch.autograd.gradcheck(torch.atanh, {x}))
  T.ok(torch.autograd.gradgradcheck(torch.atanh, {x}))
  local x1 = (x:detach() + 2):requires_grad_()
  T.ok(torch.autograd.gradcheck(torch.acosh, {x1}))
  -- sgn at 0 has no derivative: 0 there, as PyTorch
  local z0 = torch.tensor({C(0, 0), C(3, 4)}, {dtype = torch.cdouble}):requires_grad_()
  torch.view_as_real(z0:sgn()):sum():backward()
  T.eq(z0.grad[1], C(0, 0))
end)

T.test("gradgradcheck perturbs complex inputs through their real views", function()
  local z = torch.tensor({C(1, 2), C(0.3, -0.7)}, {dtype = torch.cdouble}):requires_grad_()
  T.ok(torch.autograd.gradgradcheck(function(a) return a * a * a end, {z}))
  T.ok(torch.autograd.gradgradcheck(function(a, b) return a:exp() * b:conj() end,
    {z, torch.tensor({C(0.5, 1), C(-1, 0.25)}, {dtype = torch.cdouble}):requires_grad_()}))
  -- a wrong second derivative is caught: this Function's first derivative is right, but its
  -- backward detaches the input, so the second derivative it records is 0
  local Bad = torch.autograd.Function{
    forward = function(ctx, a) ctx:save_for_backward(a); return a * a end,
    backward = function(ctx, g) return g * (ctx.saved_tensors[1]:detach() * 2):conj() end }
  T.ok(torch.autograd.gradcheck(function(a) return Bad.apply(a) end, {z}))
  local ok = torch.autograd.gradgradcheck(function(a) return Bad.apply(a) end, {z}, {raise_exception = false})
  T.eq(ok, false)
end)

local X = torch.tensor({{C(1, 2), C(-0.5, 3), C(2, 1)}, {C(0.3, -1), C(0, 0), C(-1, -1)},
                        {C(0.5, 0.5), C(2, -3), C(1, 0)}}, {dtype = torch.cdouble})

T.test("cumsum, cumprod, var, std, var_mean, std_mean, trace, isclose of complex match PyTorch", function()
  if not P.available() then return T.skip(P.why()) end
  local r = P.run({ xv = torch.view_as_real(X) }, PY .. [=[
x = C(xv)
vm, m = torch.var_mean(x, 1)
sm, m2 = torch.std_mean(x, 0, unbiased=False)
out = [R(x.cumsum(1)), R(x.cumprod(0)), R(x.cumprod(1)), x.var(), x.var(0), x.std(1, keepdim=True),
       vm, R(m), sm, R(m2), R(x.trace()), x.var(1, correction=0)]
y = x + 1e-7
iz = [torch.isclose(x, y), torch.isclose(x, y, rtol=0, atol=1e-9)]

]=], { "out", "iz" })
  local o = r[1]
  near(X:cumsum(2), o[1]); near(X:cumprod(1), o[2]); near(X:cumprod(2), o[3])
  near(X:var(), o[4]); near(X:var(1), o[5]); near(X:std(2, nil, true), o[6])
  local v, m = torch.var_mean(X, 2)
  near(v, o[7]); near(m, o[8])
  local s, m2 = torch.std_mean(X, 1, {unbiased = false})
  near(s, o[9]); near(m2, o[10])
  near(X:trace(), o[11])
  near(X:var(2, {correction = 0}), o[12])
  T.eq(X:var().dtype, torch.float64)
  T.eq(X:to(torch.cfloat):std().dtype, torch.float32)
  local y = X + 1e-7
  T.eq(torch.isclose(X, y):to(torch.float64):totable(), r[2][1]:totable())
  T.eq(torch.isclose(X, y, 0, 1e-9):to(torch.float64):totable(), r[2][2]:totable())
  T.eq(torch.allclose(X, y), false)   -- the 0 element: |d| > atol
  T.ok(torch.allclose(X, X + 1e-9))
  local nan = torch.tensor({C(0 / 0, 1)}, {dtype = torch.cdouble})
  T.eq(torch.isclose(nan, torch.tensor({C(1, 0 / 0)}, {dtype = torch.cdouble}), {equal_nan = true})[1], true)
  T.ok(torch.equal(X, X:clone()))
  T.eq(X:to(torch.cfloat):cumsum(1).dtype, torch.complex64)
  -- linalg.vander is a cumprod: complex now too
  local v = X:select(1, 1)
  near(torch.linalg.vander(v, {N = 3}), R(torch.stack({torch.ones(3, {dtype = torch.cdouble}), v, v * v}, -1)), 1e-12)
end)

T.test("all, any, count_nonzero (a nonzero part is nonzero), mH and adjoint", function()
  local x = torch.tensor({{C(1, 2), C(0, -1)}, {C(0, 0), C(2, 0)}}, {dtype = torch.cdouble})
  T.eq(x:all():item(), false)
  T.eq(x:any(2):totable(), {true, true})
  T.eq(x:count_nonzero(1):totable(), {1, 2})
  T.eq(torch.zeros(3, {dtype = torch.cfloat}):any():item(), false)
  T.eq(x.mH:totable(), {{C(1, -2), C(0, -0.0)}, {C(0, 1), C(2, -0.0)}})
  T.eq(x:adjoint():totable(), x.mH:totable())
  T.eq(torch.ones(2, 3).mH:size(1), 3)
  T.ok(torch.autograd.gradcheck(function(a) return a.mH end, {x:clone():requires_grad_()}))
  T.raises(function() return torch.ones(2).mH end, "mH: the tensor must have at least 2 dims")
  T.raises(function() return torch.adjoint(torch.ones(2)) end, "adjoint: the tensor must have at least 2 dims")
end)

T.test("derivatives of the complex scans and statistics", function()
  local x = X:clone():requires_grad_()
  local fs = {
    function(a) return a:cumsum(2) end,
    function(a) return a:cumprod(2) end,          -- a zero in row 2: cumprod's zero path
    function(a) return a:var(1) end,
    function(a) return a:std() end,
    function(a) return a:trace() end,
  }
  for i, f in ipairs(fs) do T.ok(torch.autograd.gradcheck(f, {x}), "function " .. i) end
  T.ok(torch.autograd.gradgradcheck(fs[2], {(X + 0.5):detach():requires_grad_()}))
end)

T.test("indexing ops move complex elements (complex64 and complex128, non-contiguous)", function()
  if not P.available() then return T.skip(P.why()) end
  local xt = X:t()                                  -- non-contiguous complex128
  local idx = torch.tensor({3, 1})
  local m = torch.tensor({{true, false, true}, {false, false, true}, {true, true, false}})
  local r = P.run({ xv = torch.view_as_real(X) }, PY .. [=[
x = C(xv).t()
i = torch.tensor([2, 0]); g = torch.tensor([[2, 0, 1], [1, 1, 0]])
m = torch.tensor([[True, False, True], [False, False, True], [True, True, False]])
v = torch.tensor([1+1j, 2-1j], dtype=torch.complex128)
out = [R(x.index_select(1, i)), R(x.gather(0, g)), R(x.scatter(0, g, x[:2])), R(x.scatter_add(0, g, x[:2])),
       R(x.index_add(0, i, x[:2], alpha=2)), R(x.index_copy(1, i, x[:, :2])), R(x.index_fill(1, i, 2-3j)),
       R(x.masked_fill(m, 1j)), R(x.masked_select(m)), R(x.masked_scatter(m, x.flip(0))),
       R(x.take(torch.tensor([8, 0, 4]))), R(x.put(torch.tensor([1, 5]), v, accumulate=True)),
       x.nonzero().double(), R(x.tril()), R(x.triu(1)), R(torch.kron(x[:2, :2], x[1:, 1:])),
       R(torch.inner(x, x)), R(torch.einsum('ij,jk->ik', x, x.conj())), R(x.scatter(1, g.t()[:, :2], -1j))]
x64 = x.to(torch.complex64)
out64 = [R(x64.index_select(0, i)).double(), R(x64.masked_fill(m, 2+2j)).double(), R(x64.cumsum(0)).double()]

]=], { "out", "out64" })
  local o = r[1]
  local g = torch.tensor({{3, 1, 2}, {2, 2, 1}})
  near(xt:index_select(2, idx), o[1]); near(xt:gather(1, g), o[2])
  near(xt:scatter(1, g, xt:narrow(1, 1, 2)), o[3]); near(xt:scatter_add(1, g, xt:narrow(1, 1, 2)), o[4])
  near(xt:index_add(1, idx, xt:narrow(1, 1, 2), {alpha = 2}), o[5])
  near(xt:index_copy(2, idx, xt:narrow(2, 1, 2)), o[6])
  near(xt:index_fill(2, idx, C(2, -3)), o[7])
  near(xt:masked_fill(m, torch.j), o[8]); near(xt:masked_select(m), o[9])
  near(xt:masked_scatter(m, xt:flip(1)), o[10])
  near(xt:take(torch.tensor({9, 1, 5})), o[11])
  local v = torch.tensor({C(1, 1), C(2, -1)}, {dtype = torch.cdouble})
  near(xt:put(torch.tensor({2, 6}), v, true), o[12])
  T.eq(xt:nonzero():to(torch.float64):totable(), (o[13] + 1):totable())      -- 1-based here
  near(xt:tril(), o[14]); near(xt:triu(1), o[15])
  near(torch.kron(xt:narrow(1, 1, 2):narrow(2, 1, 2), xt:narrow(1, 2, 2):narrow(2, 2, 2)), o[16])
  near(torch.inner(xt, xt), o[17]); near(torch.einsum("ij,jk->ik", xt, xt:conj()), o[18])
  near(xt:scatter(2, g:t():narrow(2, 1, 2), -torch.j), o[19])
  -- advanced indexing reads and writes
  local y = xt:clone(); y[{idx}] = xt:narrow(1, 1, 2)
  near(y:index_select(1, idx), R(xt:narrow(1, 1, 2)))
  near(xt[{idx}], R(xt:index_select(1, idx)))
  local x64 = xt:to(torch.cfloat)
  near(x64:index_select(1, idx), r[2][1], 1e-6); near(x64:masked_fill(m, C(2, 2)), r[2][2], 1e-6)
  near(x64:cumsum(1), r[2][3], 1e-5)
end)

T.test("gradients through complex indexing", function()
  local x = X:clone():requires_grad_()
  local g = torch.tensor({{3, 1, 2}, {2, 2, 1}})
  local m = torch.tensor({{true, false, true}, {false, false, true}, {true, true, false}})
  T.ok(torch.autograd.gradcheck(function(a) return a:index_select(1, torch.tensor({3, 1})) end, {x}))
  T.ok(torch.autograd.gradcheck(function(a) return a:gather(1, g) end, {x}))
  T.ok(torch.autograd.gradcheck(function(a) return a:masked_fill(m, torch.j) end, {x}))
  T.ok(torch.autograd.gradcheck(function(a) return a:tril() * a:masked_select(m):sum() end, {x}))
end)

T.test("complex Scalar arguments: full, fill_, masked_fill, index_fill, promotion", function()
  local z = C(1, 2)
  local f = torch.full({2}, z)
  T.eq(f.dtype, torch.complex64); T.eq(f[2], z)
  T.eq(torch.full({2}, z, {dtype = torch.cdouble})[1], z)
  T.eq(torch.full_like(torch.zeros(2, {dtype = torch.cdouble}), z)[2], z)
  T.eq(torch.zeros(2, {dtype = torch.cfloat}):new_full({3}, z)[3], z)
  local x = torch.zeros(3, {dtype = torch.cdouble})
  x:fill_(C(0.5, -1)); T.eq(x[3], C(0.5, -1))
  x:fill_(torch.tensor(C(2, 3))); T.eq(x[1], C(2, 3))  -- a 1-element complex tensor as the value
  local m = torch.tensor({true, false, true})
  T.eq(x:masked_fill(m, torch.j)[1], C(0, 1))
  T.eq(x:index_fill(1, torch.tensor({2}), z)[2], z)
  -- a complex value with a real tensor promotes in arithmetic (float32 -> complex64) ...
  local r = torch.ones(2) + z
  T.eq(r.dtype, torch.complex64); T.eq(r[1], C(2, 2))
  T.eq((torch.ones(2, {dtype = torch.double}) * torch.j).dtype, torch.complex128)
  T.eq(torch.where(m, x, z)[2], z)
  T.eq(torch.ones(1, {dtype = torch.cdouble}):pow(C(0, 1))[1], C(1, 0))
  -- a complex alpha: add, sub (and in place), index_add; the gradients take conj(alpha)
  local a = torch.tensor({C(1, 2), C(3, -1)}, {dtype = torch.cdouble})
  local b = torch.tensor({C(0.5, 1), C(-1, 2)}, {dtype = torch.cdouble})
  T.eq(a:add(b, {alpha = z}):totable(), (a + b * z):totable())
  T.eq(a:sub(b, {alpha = torch.j}):totable(), (a - b * torch.j):totable())
  T.eq(a:clone():add_(b, {alpha = z}):totable(), (a + b * z):totable())
  T.eq(a:index_add(1, torch.tensor({2, 1}), b, {alpha = z}):totable(), (a + b:flip(1) * z):totable())
  local r = torch.tensor({0.5, 2}, {dtype = torch.double})
  T.eq(a:add(r, {alpha = z}):totable(), (a + r * z):totable())
  for _, f in ipairs({ function(p, q) return p:add(q, {alpha = z}) end, function(p, q) return p:sub(q, {alpha = z}) end }) do
    T.ok(torch.autograd.gradcheck(f, {a:clone():requires_grad_(), b:clone():requires_grad_()}))
    T.ok(torch.autograd.gradcheck(f, {a:clone():requires_grad_(), r:clone():requires_grad_()}))
  end
  -- ... and is an error where it would be stored into a real tensor or read as real
  T.raises(function() torch.zeros(2):fill_(z) end, "fill_: argument 'value' is complex, which needs a complex self")
  T.raises(function() torch.full({2}, z, {dtype = torch.float32}) end, "full: a complex value")
  T.raises(function() torch.zeros(2):masked_fill(torch.tensor({true, false}), z) end, "masked_fill: argument 'value' is complex")
  T.raises(function() torch.zeros(2):index_fill(1, torch.tensor({1}), z) end, "index_fill: argument 'value' is complex")
  T.raises(function() torch.clamp(x, z) end, "")
  T.raises(function() torch.ones(2):add(torch.ones(2), {alpha = z}) end, "add: argument 'alpha' is complex, which needs a complex self or other")
  T.raises(function() torch.addcmul(x, x, x, {value = z}) end, "addcmul: argument 'value' must be a real number")
  T.raises(function() torch.nn.functional.leaky_relu(torch.ones(2), z) end, "must be a real number")
  T.raises(function() torch.zeros(2):masked_fill(torch.tensor({true, false}), torch.tensor(z)) end, "is complex")
end)

T.test("stft and istft of complex signals and windows match PyTorch", function()
  if not P.available() then return T.skip(P.why()) end
  torch.manual_seed(3)
  local x = torch.randn(40, {dtype = torch.cdouble})
  local xr = torch.randn(40, {dtype = torch.double})
  local w = torch.hann_window(16, {dtype = torch.double})
  local r = P.run({ xv = torch.view_as_real(x), xr = xr, w = w }, PY .. [=[
x = C(xv)
out = [R(torch.stft(x, 16, window=w, return_complex=True)),
       R(torch.stft(xr, 16, window=w.to(torch.complex128) * 1j, return_complex=True)),
       R(torch.stft(xr, 16, window=w, return_complex=True, onesided=False)),
       R(torch.stft(x, 16, hop_length=3, win_length=10, return_complex=True, center=False)),
       R(torch.stft(x.to(torch.complex64), 16, return_complex=True, normalized=True)).double()]

]=], { "out" })
  local s = torch.stft(x, 16, {window = w, return_complex = true})
  T.eq(s:size(1), 16); T.eq(s:size(2), 11)
  near(s, r[1][1], 1e-12)
  near(torch.stft(xr, 16, {window = w:to(torch.cdouble) * torch.j, return_complex = true}), r[1][2], 1e-12)
  local s3 = torch.stft(xr, 16, {window = w, return_complex = true, onesided = false})
  near(s3, r[1][3], 1e-12)
  near(torch.stft(x, 16, {hop_length = 3, win_length = 10, return_complex = true, center = false}), r[1][4], 1e-12)
  near(torch.stft(x:to(torch.cfloat), 16, {return_complex = true, normalized = true}), r[1][5], 1e-5)
  -- round trips: a complex signal back with return_complex, a real one from its two-sided spectrum
  near(torch.istft(s, 16, {window = w, return_complex = true}), R(x), 1e-12)
  near(torch.istft(s3, 16, {window = w, onesided = false}), xr, 1e-12)
  T.raises(function() torch.stft(x, 16, {window = w, return_complex = true, onesided = true}) end,
    "stft: onesided=true needs a real signal")
  T.raises(function() torch.istft(s, 16, {window = w, return_complex = true, onesided = true}) end,
    "istft: return_complex=true needs the two-sided spectrum")
  T.raises(function() torch.istft(s, 16, {window = w:to(torch.cdouble)}) end, "istft: a complex window needs return_complex")
  T.raises(function() torch.istft(s, 12, {return_complex = true, onesided = false}) end, "istft: argument 'self' has 16 frequencies")
end)

T.test("stft and istft of complex signals: gradients", function()
  local w = torch.hann_window(8, {dtype = torch.double})
  local xs = torch.randn(20, {dtype = torch.cdouble}):requires_grad_()
  T.ok(torch.autograd.gradcheck(function(a) return torch.stft(a, 8, {window = w, return_complex = true}) end, {xs}))
  local ss = torch.stft(xs:detach(), 8, {window = w, return_complex = true}):requires_grad_()
  T.ok(torch.autograd.gradcheck(function(a) return torch.istft(a, 8, {window = w, return_complex = true}) end, {ss}))
end)

T.done()
