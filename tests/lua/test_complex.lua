-- test_complex.lua — the complex dtypes: complex values in Lua, creation,
-- promotion, printing, conversions, views, and the clean refusal of ops that
-- do not take complex (man/complex.md). Expected values are PyTorch 1.13's.
local T = require "testing"
local C = torch.complex_number

-- element-wise comparison of a complex tensor with a table of {re, im} pairs
-- (or numbers), to tol
local function cx_eq(x, want, tol)
  tol = tol or 1e-6
  local got = x:contiguous():view(-1):totable()
  T.eq(#got, #want)
  for i, w in ipairs(want) do
    local re, im = type(w) == "table" and w[1] or w, type(w) == "table" and w[2] or 0
    local g = got[i]
    T.ok(torch.is_complex_number(g), "element " .. i .. " is not a complex value")
    T.ok(math.abs(g.real - re) <= tol and math.abs(g.imag - im) <= tol,
         ("element %d: got %s, want (%g%+gj)"):format(i, tostring(g), re, im))
  end
end

T.test("dtypes, names and traits", function()
  T.eq(torch.cfloat, torch.complex64)
  T.eq(torch.cdouble, torch.complex128)
  T.eq(tostring(torch.complex64), "torch.complex64")
  T.eq(torch.complex64.itemsize, 8)
  T.eq(torch.complex128.itemsize, 16)
  T.ok(torch.complex64.is_complex and not torch.complex64.is_floating_point)
  T.ok(not torch.float32.is_complex)
  local x = torch.zeros(2, {dtype = "complex128"})
  T.ok(x:is_complex() and not x:is_floating_point())
  T.ok(not torch.zeros(2):is_complex())
  T.eq(x:type(), "torch.ComplexDoubleTensor")
end)

T.test("complex values: arithmetic, fields, tostring as Python", function()
  local z = C(1, 2)
  T.eq(z.real, 1); T.eq(z.imag, 2)
  T.eq(tostring(z), "(1+2j)")
  T.eq(tostring(z * z), "(-3+4j)")
  T.eq(tostring(z / z), "(1+0j)")
  T.eq(tostring(-z), "(-1-2j)")
  T.eq(tostring(1 + 2 * torch.j), "(1+2j)")
  T.eq(tostring(torch.j), "1j")
  T.eq(tostring(C(0, -1)), "-1j")
  T.eq(tostring(C(0.1, -2.5)), "(0.1-2.5j)")
  T.eq(tostring(C(-0.5, 1e20)), "(-0.5+1e+20j)")
  T.eq(tostring(C(1, 0 / 0)), "(1+nanj)")
  T.ok(z == C(1, 2) and z ~= C(1, -2))
  T.eq(z:conj(), C(1, -2))
  T.near(z:abs(), math.sqrt(5), 1e-15)
  T.near(C(0, 1):angle(), math.pi / 2, 1e-15)
  T.eq(tostring(torch.j ^ 2), tostring(C(-1, 1.2246467991473532e-16)))
  T.raises(function() return z + "a" end, "cannot combine")
end)

T.test("torch.tensor with complex values; item, totable, x[i]", function()
  local t = torch.tensor({C(1, 2), 3, C(0, -1)})
  T.eq(t.dtype, torch.complex64)
  cx_eq(t, {{1, 2}, 3, {0, -1}})
  T.eq(t[1], C(1, 2))
  T.eq(t:totable()[3], C(0, -1))
  T.eq(torch.tensor(C(1, 2)):item(), C(1, 2))
  T.eq(torch.tensor(C(1, 2)).dtype, torch.complex64)
  T.eq(torch.tensor({C(1, 2)}, {dtype = torch.cdouble}).dtype, torch.complex128)
  torch.set_default_dtype("float64")
  local ok, err = pcall(function() T.eq(torch.tensor({C(1, 2)}).dtype, torch.complex128) end)
  torch.set_default_dtype("float32")
  assert(ok, err)
  cx_eq(torch.tensor({{1, 2}, {3, 4}}, {dtype = torch.cfloat}), {1, 2, 3, 4})
  T.raises(function() return torch.tensor({C(1, 2)}, {dtype = torch.float32}) end, "complex values given for dtype float32")
  T.raises(function() return torch.tensor(C(1, 2), {dtype = torch.int64}) end, "complex")
end)

T.test("creation ops with complex dtypes", function()
  cx_eq(torch.zeros(2, {dtype = torch.cfloat}), {0, 0})
  cx_eq(torch.ones(2, 2, {dtype = torch.cdouble}), {1, 1, 1, 1})
  cx_eq(torch.full({3}, 2.5, {dtype = torch.cdouble}), {2.5, 2.5, 2.5})
  cx_eq(torch.eye(2, {dtype = torch.cfloat}), {1, 0, 0, 1})
  local x = torch.tensor({C(1, 1), C(2, 2)})
  T.eq(torch.zeros_like(x).dtype, torch.complex64)
  cx_eq(torch.ones_like(x), {1, 1})
  T.eq(x:new_zeros(3).dtype, torch.complex64)
  T.eq(torch.empty(4, {dtype = torch.cdouble}):size(1), 4)
  x:fill_(3)
  cx_eq(x, {3, 3})
  x:zero_()
  cx_eq(x, {0, 0})
end)

T.test("rand and randn with complex dtypes: independent parts, as PyTorch", function()
  torch.manual_seed(0)
  local z = torch.randn(200000, {dtype = torch.cfloat})
  T.eq(z.dtype, torch.complex64)
  T.near(z:real():var():item(), 0.5, 0.01)          -- each part N(0, 1/2): E|z|^2 = 1
  T.near(z:imag():var():item(), 0.5, 0.01)
  T.near(z:abs():square():mean():item(), 1, 0.02)
  local u = torch.rand(100000, {dtype = torch.cdouble})
  T.eq(u.dtype, torch.complex128)
  T.ok(u:real():min():item() >= 0 and u:imag():max():item() < 1)
  T.near(u:imag():mean():item(), 0.5, 0.01)
  T.eq(torch.randn_like(z).dtype, torch.complex64)
  T.eq(torch.rand_like(u):size(1), 100000)
end)

T.test("promotion follows PyTorch", function()
  T.eq(torch.promote_types(torch.float32, torch.complex64), torch.complex64)
  T.eq(torch.promote_types(torch.float64, torch.complex64), torch.complex128)
  T.eq(torch.promote_types(torch.int64, torch.complex64), torch.complex64)
  T.eq(torch.promote_types(torch.bool, torch.complex128), torch.complex128)
  T.eq(torch.promote_types(torch.float16, torch.complex64), torch.complex64)
  T.eq(torch.promote_types(torch.complex64, torch.complex128), torch.complex128)
end)

T.test("conversions: real to complex, complex to complex; complex to real refused", function()
  local x = torch.tensor({1.5, -2})
  local c = x:to(torch.cdouble)
  T.eq(c.dtype, torch.complex128)
  cx_eq(c, {1.5, -2})
  local c64 = torch.tensor({C(1.25, -3)}, {dtype = torch.cdouble}):to(torch.cfloat)
  cx_eq(c64, {{1.25, -3}})
  cx_eq(c64:to(torch.cdouble), {{1.25, -3}})
  cx_eq(torch.tensor({1, 2}):to(torch.cfloat), {1, 2})        -- int64
  cx_eq(torch.tensor({true, false}):to(torch.cfloat), {1, 0})  -- bool
  T.raises(function() return c:to(torch.float32) end, "would discard the imaginary part")
  T.raises(function() return torch.zeros(2):copy_(c) end, "would discard the imaginary part")
  T.raises(function() return torch.tensor(c, {dtype = torch.float64}) end, "imaginary part")
  local dst = torch.zeros(2, {dtype = torch.cfloat})
  dst:copy_(torch.tensor({7, 8}))
  cx_eq(dst, {7, 8})
  dst:copy_(torch.tensor({C(1, 2), C(3, 4)}, {dtype = torch.cdouble}))
  cx_eq(dst, {{1, 2}, {3, 4}})
end)

T.test("views and copies are dtype-agnostic", function()
  local x = torch.tensor({{C(1, 1), C(2, 2), C(3, 3)}, {C(4, 4), C(5, 5), C(6, 6)}}, {dtype = torch.cdouble})
  cx_eq(x:t():contiguous(), {{1, 1}, {4, 4}, {2, 2}, {5, 5}, {3, 3}, {6, 6}})
  cx_eq(x:view(3, 2), {{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}, {6, 6}})
  cx_eq(x:reshape(6):narrow(1, 2, 2), {{2, 2}, {3, 3}})
  cx_eq(x:select(1, 2), {{4, 4}, {5, 5}, {6, 6}})
  cx_eq(x:transpose(1, 2):clone(), {{1, 1}, {4, 4}, {2, 2}, {5, 5}, {3, 3}, {6, 6}})
  cx_eq(x[2], {{4, 4}, {5, 5}, {6, 6}})
  T.eq(x[2][3], C(6, 6))
  cx_eq(x:flip(2):select(1, 1), {{3, 3}, {2, 2}, {1, 1}})
  cx_eq(torch.cat({x, x}, 1):select(1, 3), {{1, 1}, {2, 2}, {3, 3}})
  cx_eq(x:unsqueeze(1):expand(2, 2, 3):contiguous():select(1, 2):select(1, 1), {{1, 1}, {2, 2}, {3, 3}})
end)

T.test("indexing writes take complex values", function()
  local x = torch.zeros(3, {dtype = torch.cfloat})
  x[2] = C(1, 2); x[3] = 5
  cx_eq(x, {0, {1, 2}, 5})
  local m = torch.zeros(2, 2, {dtype = torch.cdouble})
  m[{1, 2}] = C(0, -1); m[2] = C(3, 3)
  cx_eq(m, {0, {0, -1}, {3, 3}, {3, 3}})
  T.raises(function() local r = torch.zeros(2); r[1] = C(1, 2) end, "cannot assign a complex value to a float32 tensor")
  T.raises(function() local r = torch.zeros(2, 2); r[1] = torch.tensor({C(1, 2), C(0, 1)}) end, "imaginary part")
end)

T.test("printing as PyTorch", function()
  T.eq(tostring(torch.tensor({C(1, 2), C(3, -1)})), "tensor([1.+2.j, 3.-1.j])")
  T.eq(tostring(torch.tensor({C(1, 2), C(3, -1)}, {dtype = torch.cdouble})),
       "tensor([1.+2.j, 3.-1.j], dtype=torch.complex128)")
  T.eq(tostring(torch.tensor({C(1.5, 2), C(3e-5, -1)})), "tensor([1.5000e+00+2.j, 3.0000e-05-1.j])")
  T.eq(tostring(torch.tensor(C(1, 2))), "tensor(1.+2.j)")
  T.eq(tostring(torch.tensor({{0, C(-0.0, 0)}, {C(0, 1e10), 2}})),
       "tensor([[0.+0.0000e+00j, -0.+0.0000e+00j],\n        [0.+1.0000e+10j, 2.+0.0000e+00j]])")
  T.eq(tostring(torch.zeros(0, {dtype = torch.cfloat})), "tensor([], dtype=torch.complex64)")
end)

T.test("ops without complex support refuse it cleanly", function()
  local x = torch.tensor({C(1, 2), C(3, 4)})
  T.raises(function() return x:max() end, "max: complex64 is not supported: complex numbers have no ordering")
  T.raises(function() return x:sort() end, "no ordering")
  T.raises(function() return torch.lt(x, x) end, "no ordering")
  T.raises(function() return x:clamp(0, 1) end, "no ordering")
  T.raises(function() return x:erf() end, "erf: complex64 is not supported")
  T.raises(function() return x:logcumsumexp(1) end, "logcumsumexp: complex64 is not supported")
  T.raises(function() return torch.arange(3, {dtype = torch.cfloat}) end, "arange: complex64 is not supported")
  T.raises(function() return x // x end, "not implemented for complex64")
  T.raises(function() return torch.zeros(2, {dtype = torch.cfloat}):fill_(x) end, "fill_")
  T.raises(function() return torch.matmul(x, torch.ones(2)) end, "same dtype")
end)

-- reference values: PyTorch 1.13 (torch.tensor([1+2j, -0.5+3j, -1j]) and [2-1j, 1+1j, 4+0j])
local A = {{1, 2}, {-0.5, 3}, {0, -1}}
local B = {{2, -1}, {1, 1}, {4, 0}}
local function ab(dt) return torch.tensor({C(1, 2), C(-0.5, 3), C(0, -1)}, {dtype = dt}),
                             torch.tensor({C(2, -1), C(1, 1), C(4, 0)}, {dtype = dt}) end

T.test("elementwise arithmetic against PyTorch", function()
  for _, dt in ipairs({torch.cfloat, torch.cdouble}) do
    local a, b = ab(dt)
    cx_eq(a + b, {{3, 1}, {0.5, 4}, {4, -1}})
    cx_eq(a - b, {{-1, 3}, {-1.5, 2}, {-4, -1}})
    cx_eq(a * b, {{4, 3}, {-3.5, 2.5}, {0, -4}})
    cx_eq(a / b, {{0, 1}, {1.25, 1.75}, {0, -0.25}})
    cx_eq(-a, {{-1, -2}, {0.5, -3}, {0, 1}})
    cx_eq(a:pow(2), {{-3, 4}, {-8.75, -3}, {-1, 0}}, 1e-5)
    cx_eq(a:pow(b), {{2.4284, 14.932}, {-0.5131, 0.15498}, {1, 0}}, 2e-3)
    cx_eq(a:pow(0.5), {{1.2720, 0.7862}, {1.1272, 1.3307}, {0.7071, -0.7071}}, 1e-4)
    cx_eq(a:reciprocal(), {{0.2, -0.4}, {-0.054054, -0.324324}, {0, 1}}, 1e-5)
    cx_eq(a:exp(), {{-1.1312, 2.4717}, {-0.6005, 0.0856}, {0.5403, -0.8415}}, 1e-4)
    cx_eq(a:log(), {{0.8047, 1.1071}, {1.1123, 1.7359}, {0, -1.5708}}, 1e-4)
    cx_eq(a:sqrt(), {{1.2720, 0.7862}, {1.1272, 1.3307}, {0.7071, -0.7071}}, 1e-4)
    cx_eq(a:sin(), {{3.1658, 1.9596}, {-4.8267, 8.7915}, {0, -1.1752}}, 1e-4)
    cx_eq(a:tanh(), {{1.1667, -0.2435}, {-0.4695, -0.1116}, {0, -1.5574}}, 1e-4)
    cx_eq(a:sigmoid(), {{1.0214, 0.4034}, {-1.3931, 0.5127}, {0.5, -0.2732}}, 1e-4)
    T.tensor(a:abs(), {2.2361, 3.0414, 1}, {tol = 1e-4, dtype = dt == torch.cfloat and "float32" or "float64"})
    T.eq(torch.eq(a, a):totable(), {true, true, true})
    T.eq(torch.ne(a, b):totable(), {true, true, true})
    T.eq(a:isfinite():totable(), {true, true, true})
  end
  local x = torch.tensor({C(1, 0 / 0), C(1 / 0, 0), C(1, 1)})
  T.eq(x:isnan():totable(), {true, false, false})
  T.eq(x:isinf():totable(), {false, true, false})
  T.eq(x:isfinite():totable(), {false, false, true})
end)

T.test("mixed real and complex operands promote", function()
  local a = ab(torch.cfloat)
  T.eq((a + 1).dtype, torch.complex64)
  cx_eq(a * 2.5, {{2.5, 5}, {-1.25, 7.5}, {0, -2.5}})
  cx_eq(torch.tensor({1, 2, 3}) * a, {{1, 2}, {-1, 6}, {0, -3}})
  T.eq((torch.ones(3):double() + a).dtype, torch.complex128)
  T.eq((torch.ones(2) + torch.j).dtype, torch.complex64)
  T.eq((torch.ones(2):double() + torch.j).dtype, torch.complex128)
  T.eq((torch.tensor({1, 2}) + torch.j).dtype, torch.complex64)
  cx_eq(torch.ones(2) * torch.j, {{0, 1}, {0, 1}})
  cx_eq(torch.j * torch.ones(2), {{0, 1}, {0, 1}})
  local o = torch.zeros(3, {dtype = torch.cfloat})
  torch.mul(a, a, {out = o})
  cx_eq(o, {{-3, 4}, {-8.75, -3}, {-1, 0}}, 1e-5)
  T.raises(function() torch.mul(a, a, {out = torch.zeros(3)}) end, "")
end)

T.test("real, imag, view_as_real, view_as_complex are views", function()
  local a = ab(torch.cdouble)
  T.tensor(a:real(), {1, -0.5, 0}, {dtype = "float64"})
  T.tensor(a:imag(), {2, 3, -1}, {dtype = "float64"})
  T.eq(a:real():stride(1), 2)
  local v = torch.view_as_real(a)
  T.eq(v:size(), torch.Size and v:size() or v:size())
  T.eq(v:totable(), {{1, 2}, {-0.5, 3}, {0, -1}})
  a:imag():fill_(7)                                     -- writes through
  cx_eq(a, {{1, 7}, {-0.5, 7}, {0, 7}})
  local r = torch.tensor({{1., 2.}, {3., 4.}})
  local z = torch.view_as_complex(r)
  T.eq(z.dtype, torch.complex64)
  cx_eq(z, {{1, 2}, {3, 4}})
  r[2][1] = 9
  T.eq(z[2], C(9, 4))
  T.tensor(torch.ones(2):real(), {1, 1})
  T.raises(function() return torch.ones(2):imag() end, "imag: not implemented for tensors with non-complex dtypes")
  T.raises(function() return torch.view_as_real(torch.ones(2)) end, "only supported for complex tensors")
  T.raises(function() return torch.view_as_complex(torch.ones(3)) end, "last dimension of size 2")
  T.raises(function() return torch.view_as_complex(torch.ones(2, 2):t()) end, "stride 1")
  T.raises(function() return torch.view_as_complex(torch.ones(2, 2, {dtype = torch.int64})) end, "float32 and float64")
end)

T.test("conj, angle, sgn, polar, complex", function()
  local a = ab(torch.cfloat)
  cx_eq(a:conj(), {{1, -2}, {-0.5, -3}, {0, 1}})
  cx_eq(a:conj_physical(), {{1, -2}, {-0.5, -3}, {0, 1}})
  T.ok(not a:is_conj())
  cx_eq(a:resolve_conj(), A)
  T.tensor(a:angle(), {1.1071, 1.7359, -1.5708}, {tol = 1e-4})
  T.tensor(torch.tensor({-1., 2.}):angle(), {math.pi, 0}, {tol = 1e-6})
  cx_eq(torch.sgn(torch.tensor({C(3, 4), C(0, 0)})), {{0.6, 0.8}, {0, 0}})
  cx_eq(torch.complex(torch.tensor({1., 2.}), torch.tensor({3., 4.})), {{1, 3}, {2, 4}})
  T.eq(torch.complex(torch.ones(1):double(), torch.ones(1):double()).dtype, torch.complex128)
  cx_eq(torch.polar(torch.tensor({2.}), torch.tensor({math.pi / 2})), {{0, 2}}, 1e-6)
  T.raises(function() return torch.complex(torch.ones(2), torch.ones(2):double()) end, "same dtype")
  T.raises(function() return torch.polar(torch.ones(2, {dtype = torch.int64}), torch.ones(2)) end, "float32 or float64")
  T.tensor(torch.ones(2):conj(), {1, 1})
end)

T.test("reductions: sum, mean, prod", function()
  local x = torch.tensor({{C(1, 2), C(-0.5, 3)}, {C(0, -1), C(2, 0)}})
  T.eq(x:sum():item(), C(2.5, 4))
  cx_eq(x:sum(1), {{1, 1}, {1.5, 3}})
  cx_eq(x:mean(2), {{0.25, 2.5}, {1, -0.5}})
  T.eq(x:mean():item(), C(0.625, 1))
  T.eq(x:prod():item(), C(4, 13))
  cx_eq(x:prod(1), {{2, -1}, {-1, 6}})
  T.eq(torch.ones(300000, {dtype = torch.cfloat}):sum():item(), C(300000, 0))
  T.raises(function() return x:sum({dtype = torch.float32}) end, "must be a complex dtype")
end)

T.test("products through BLAS's c and z routines", function()
  for _, dt in ipairs({torch.cfloat, torch.cdouble}) do
    local a = torch.tensor({{C(1, 2), C(-0.5, 3)}, {C(0, -1), C(2, 0)}}, {dtype = dt})
    local b = torch.tensor({{C(2, 1), C(1, -1)}, {C(0.5, 0.5), C(-1, 2)}}, {dtype = dt})
    local mm = {{-1.75, 6.25}, {-2.5, -3}, {2, -1}, {-3, 3}}
    cx_eq(a:mm(b), mm, 1e-5)
    cx_eq(torch.matmul(a, b), mm, 1e-5)
    cx_eq(a:t():mm(b), {{0.5, 4.5}, {5, 2}, {-3, 6.5}, {0.5, 7.5}}, 1e-5)
    cx_eq(torch.matmul(a, b:t()), {{2.5, 8.5}, {-6, -2.5}, {3, -4}, {-1.5, 3.5}}, 1e-5)
    cx_eq(a:mv(b[1]), {{2.5, 8.5}, {3, -4}}, 1e-5)
    T.eq(torch.dot(a[1], b[1]):item(), C(2.5, 8.5))
    T.eq(torch.vdot(a[1], b[1]):item(), C(0.5, -5.5))
    cx_eq(torch.outer(a[1], b[2]), {{-0.5, 1.5}, {-5, 0}, {-1.75, 1.25}, {-5.5, -4}}, 1e-5)
    cx_eq(torch.bmm(a:unsqueeze(1):expand(2, 2, 2):contiguous(), b:unsqueeze(1):expand(2, 2, 2):contiguous())[2], mm, 1e-5)
  end
  -- a larger product against its real part computed in float64
  torch.manual_seed(1)
  local x = torch.randn(64, 32):double() + torch.randn(64, 32):double() * torch.j
  local y = torch.randn(32, 16):double() + torch.randn(32, 16):double() * torch.j
  local want = x:real():mm(y:real()) - x:imag():mm(y:imag())
  T.ok((x:mm(y):real() - want):abs():max():item() < 1e-10)
end)

T.test("serialization: lutorch's format, npy, safetensors", function()
  local dir = os.tmpname(); os.remove(dir)
  local x = torch.tensor({{C(1, 2), C(-0.5, 3)}, {C(0, -1), C(2, 0)}})
  local xd = x:to(torch.cdouble):t()
  torch.save(dir .. ".lt", {a = x, b = xd})
  local r = torch.load(dir .. ".lt")
  T.eq(r.a.dtype, torch.complex64); cx_eq(r.a, {{1, 2}, {-0.5, 3}, {0, -1}, {2, 0}})
  T.eq(r.b.dtype, torch.complex128); cx_eq(r.b, {{1, 2}, {0, -1}, {-0.5, 3}, {2, 0}})
  torch.save_npy(dir .. ".npy", xd)
  local n = torch.load_npy(dir .. ".npy")
  T.eq(n.dtype, torch.complex128); cx_eq(n, {{1, 2}, {0, -1}, {-0.5, 3}, {2, 0}})
  torch.save_safetensors(dir .. ".st", {a = x})
  local s = torch.load_safetensors(dir .. ".st")
  T.eq(s.a.dtype, torch.complex64); cx_eq(s.a, {{1, 2}, {-0.5, 3}, {0, -1}, {2, 0}})
  T.raises(function() torch.save_safetensors(dir .. ".st2", {b = xd}) end, "cannot hold (it has C64 for complex64 only)")
  for _, e in ipairs({".lt", ".npy", ".st", ".st2"}) do os.remove(dir .. e) end
end)

T.test("autograd: gradcheck on complex inputs (PyTorch's convention)", function()
  torch.manual_seed(2)
  local function cx(...)
    local size = {...}
    return (torch.randn(size, {dtype = torch.float64}) + torch.randn(size, {dtype = torch.float64}) * torch.j):requires_grad_()
  end
  local a, b = cx(3), cx(3)
  local m1, m2 = cx(3, 2), cx(2, 4)
  local r1 = torch.randn(3, {dtype = torch.float64}):requires_grad_()
  local r2 = torch.randn(3, {dtype = torch.float64}):abs():add(0.1):requires_grad_()
  local gc = torch.autograd.gradcheck
  local cases = {
    {"add", function(x, y) return x + y end, {a, b}}, {"sub", function(x, y) return x - 2 * y end, {a, b}},
    {"mul", function(x, y) return x * y end, {a, b}}, {"div", function(x, y) return x / y end, {a, b}},
    {"abs", function(x) return x:abs() end, {a}}, {"real", function(x) return x:real() end, {a}},
    {"imag", function(x) return x:imag() end, {a}}, {"conj", function(x) return x:conj() end, {a}},
    {"sum", function(x) return x:sum() end, {a}}, {"mean", function(x) return (x * x):mean() end, {a}},
    {"exp", function(x) return x:exp() end, {a}}, {"log", function(x) return x:log() end, {a}},
    {"sin", function(x) return x:sin() end, {a}}, {"tanh", function(x) return x:tanh() end, {a}},
    {"sqrt", function(x) return x:sqrt() end, {a}}, {"sigmoid", function(x) return x:sigmoid() end, {a}},
    {"reciprocal", function(x) return x:reciprocal() end, {a}}, {"square", function(x) return x:square() end, {a}},
    {"pow", function(x) return x:pow(3) end, {a}}, {"angle", function(x) return x:angle() end, {a}},
    {"view_as_real", function(x) return torch.view_as_real(x) * 2 end, {a}},
    {"view_as_complex", function(x) return torch.view_as_complex(x) end, {torch.randn(3, 2, {dtype = torch.float64}):requires_grad_()}},
    {"mm", function(x, y) return x:mm(y) end, {m1, m2}}, {"matmul", function(x, y) return torch.matmul(x, y) end, {m1, m2}},
    {"mv", function(x, y) return x:mv(y) end, {m1, cx(2)}}, {"dot", function(x, y) return torch.dot(x, y) end, {a, b}},
    {"complex", function(x, y) return torch.complex(x, y) end, {r1, r2}},
    {"polar", function(x, y) return torch.polar(x, y) end, {r2, r1}},
    {"real * complex", function(x, y) return x * y end, {r1, a}},
    {"abs of a sum (a real loss)", function(x, y) return (x * y + x):abs():sum() end, {a, b}},
  }
  for _, c in ipairs(cases) do
    local ok, err = pcall(gc, c[2], c[3])
    T.ok(ok, c[1] .. ": " .. tostring(err))
  end
  -- the gradient of a real loss is dL/dx + i dL/dy, as PyTorch's: |z|^2 gives 2z
  local z = torch.tensor({C(1, 2)}, {dtype = torch.cdouble}):requires_grad_()
  ;(z:abs():square()):sum():backward()
  T.eq(z.grad[1], C(2, 4))
  T.ok(torch.autograd.gradcheck(torch.sgn, {z}))   -- sgn's derivative (test_complex_ops.lua)
  T.ok(not pcall(function() torch.zeros(2, {dtype = torch.int64}).requires_grad = true end))
end)

T.test("to(complex) of a real tensor is differentiable: the gradient is the real part", function()
  local a = torch.randn(3, { dtype = torch.float64 }):requires_grad_()
  local y = a:to(torch.complex128)
  T.ok(y.grad_fn ~= nil, "to(complex128) records a node")
  ;(y * torch.complex_number(2, 3)):real():sum():backward()
  T.tensor(a.grad, { 2, 2, 2 })
  T.ok(torch.autograd.gradcheck(function(x) return x:to(torch.complex128) * x end,
    { torch.randn(3, { dtype = torch.float64 }):requires_grad_() }))
  T.eq(a:to(torch.int64).grad_fn, nil)   -- integers: detached, as before
end)

T.done()
