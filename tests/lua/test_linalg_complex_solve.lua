-- test_linalg_complex_solve.lua — the solve family of torch.linalg on complex64 and
-- complex128 (solve, inv, det, slogdet, cholesky, LU, triangular solves, lstsq and the
-- composites over them: old names, matrix_power, matrix_exp, multi_dot, cross,
-- diagonal): values against PyTorch 1.13 (pyref, the complex tensors sent and
-- returned as view_as_real), reconstructions, singular and non-positive-definite
-- matrices naming the batch element, 1x1, empty batches, non-contiguous inputs,
-- bad input, and complex gradchecks (perturbing real and imaginary parts).
local T = require "testing"
local P = require "pyref"

local c128, c64, f64 = torch.complex128, torch.complex64, torch.float64
local L = torch.linalg
local gc = torch.autograd.gradcheck

-- the largest |a - b| over complex (or real) tensors, with shapes checked
local function maxdiff(a, b)
  T.eq(a:size(), b:size(), "shape")
  if a:numel() == 0 then return 0 end
  local d = a:to(c128) - b:to(c128)
  return d:abs():max():item()
end
local function close(a, b, tol, what)
  local d = maxdiff(a, b)
  if not (d <= tol) then error((what or "values") .. ": max difference " .. d .. " > " .. tol, 2) end
end

torch.manual_seed(11)
local function crandn(...) return torch.randn({ ... }, { dtype = c128 }) end
-- well-conditioned: randn + n I
local function wellcond(...)
  local s = { ... }
  return torch.randn(s, { dtype = c128 }) + torch.eye(s[#s], { dtype = c128 }) * s[#s]
end
-- Hermitian positive-definite: a a^H + I
local function hpd(...)
  local a = crandn(...)
  local n = a.shape[#a.shape]
  return a:matmul(a:transpose(-2, -1):conj()) + torch.eye(n, { dtype = c128 })
end
local function mH(x) return x:transpose(-2, -1):conj() end
local function eye(n, dt) return torch.eye(n, { dtype = dt or c128 }) end

---------------------------------------------------------------------------
-- values against PyTorch (one Python run for all)
---------------------------------------------------------------------------
local A = wellcond(2, 3, 3)
local B = crandn(2, 3, 2)
local Bv = crandn(3)
local H = hpd(2, 3, 3)
local M, R = crandn(5, 3), crandn(5, 2)
local S = crandn(3, 3)     -- no structure: det, slogdet, lu of a general matrix
local Rc = crandn(4, 3)    -- cross along dim 2

T.test("values against PyTorch 1.13", function()
  if not P.available() then return T.skip(P.why()) end
  local vr = torch.view_as_real
  local outs = {
    "vr(torch.linalg.solve(A, B))", "vr(torch.linalg.solve(A, B.mT, left=False))", "vr(torch.linalg.solve(A, Bv))",
    "vr(torch.linalg.inv(A))", "vr(torch.linalg.det(S))",
    "vr(torch.linalg.slogdet(S)[0])", "torch.linalg.slogdet(S)[1]", "vr(torch.logdet(S))",
    "vr(torch.linalg.cholesky(H))", "vr(torch.linalg.cholesky(H, upper=True))",
    "vr(torch.linalg.lu_factor(S)[0])", "torch.linalg.lu_factor(S)[1]",
    "vr(torch.linalg.lu(S)[1])", "vr(torch.linalg.lu(S)[2])",
    "vr(torch.linalg.lu_solve(*torch.linalg.lu_factor(A), B, adjoint=True))",
    "vr(torch.linalg.lu_solve(*torch.linalg.lu_factor(A), B.mT, left=False, adjoint=True))",
    "vr(torch.linalg.solve_triangular(A, B, upper=True))",
    "vr(torch.linalg.solve_triangular(A, B.mT, upper=False, left=False, unitriangular=True))",
    "vr(torch.triangular_solve(B, A, upper=True, transpose=True)[0])",
    "vr(torch.cholesky_solve(B, torch.linalg.cholesky(H)))", "vr(torch.cholesky_inverse(torch.linalg.cholesky(H)))",
    "vr(torch.linalg.lstsq(M, R, driver='gelsd')[0])", "torch.linalg.lstsq(M, R, driver='gelsd')[1]",
    "torch.linalg.lstsq(M, R, driver='gelsd')[3]", "vr(torch.linalg.lstsq(M, R)[0])",
    "vr(torch.linalg.lstsq(M, R, driver='gels')[0])", "torch.linalg.lstsq(M, R, driver='gels')[1]",
    "vr(torch.linalg.matrix_power(S, 3))", "vr(torch.linalg.matrix_power(A, -2))",
    "vr(torch.linalg.matrix_exp(S))", "vr(torch.linalg.multi_dot([M.mT, M, S]))",
    "vr(torch.linalg.cross(Rc, Rc.flip(0)))",
  }
  local r = P.run({ Ar = vr(A), Br = vr(B), Bvr = vr(Bv), Hr = vr(H), Mr = vr(M), Rr = vr(R), Sr = vr(S), Rcr = vr(Rc) },
    table.concat({
      "import warnings; warnings.filterwarnings('ignore')   # triangular_solve is deprecated",
      "vr = lambda t: torch.view_as_real(t.resolve_conj())",
      "A, B, Bv, H = [torch.view_as_complex(t.contiguous()) for t in (Ar, Br, Bvr, Hr)]",
      "M, R, S, Rc = [torch.view_as_complex(t.contiguous()) for t in (Mr, Rr, Sr, Rcr)]",
    }, "\n"), outs)
  local cx = function(t) return torch.view_as_complex(t:contiguous()) end
  local i = 0
  local function nxt() i = i + 1; return r[i] end
  local tol = 1e-10
  close(L.solve(A, B), cx(nxt()), tol, "solve")
  close(L.solve(A, B:transpose(-2, -1), { left = false }), cx(nxt()), tol, "solve left=false")
  close(L.solve(A, Bv), cx(nxt()), tol, "solve vector")
  close(L.inv(A), cx(nxt()), tol, "inv")
  close(L.det(S), cx(nxt()), tol, "det")
  local sign, logabs = L.slogdet(S)
  T.eq(sign.dtype, c128); T.eq(logabs.dtype, f64)
  close(sign, cx(nxt()), tol, "slogdet sign")
  close(logabs, nxt(), tol, "slogdet logabsdet")
  close(torch.logdet(S), cx(nxt()), tol, "logdet")
  close(L.cholesky(H), cx(nxt()), tol, "cholesky")
  close(L.cholesky(H, { upper = true }), cx(nxt()), tol, "cholesky upper")
  local LU, piv = L.lu_factor(S)
  close(LU, cx(nxt()), tol, "lu_factor LU")
  close(piv:to(f64), nxt(), 0, "lu_factor pivots")
  local _, Lo, Up = L.lu(S)
  close(Lo, cx(nxt()), tol, "lu L")
  close(Up, cx(nxt()), tol, "lu U")
  local LUa, pa = L.lu_factor(A)
  close(L.lu_solve(LUa, pa, B, { adjoint = true }), cx(nxt()), tol, "lu_solve adjoint")
  close(L.lu_solve(LUa, pa, B:transpose(-2, -1), { left = false, adjoint = true }), cx(nxt()), tol, "lu_solve right adjoint")
  close(L.solve_triangular(A, B, { upper = true }), cx(nxt()), tol, "solve_triangular")
  close(L.solve_triangular(A, B:transpose(-2, -1), { upper = false, left = false, unitriangular = true }), cx(nxt()), tol,
        "solve_triangular right unit")
  close((torch.triangular_solve(B, A, true, true)), cx(nxt()), tol, "triangular_solve transpose (not conjugated)")
  close(torch.cholesky_solve(B, L.cholesky(H)), cx(nxt()), tol, "cholesky_solve")
  close(torch.cholesky_inverse(L.cholesky(H)), cx(nxt()), tol, "cholesky_inverse")
  local sol, res, rank, sv = L.lstsq(M, R, nil, { driver = "gelsd" })
  close(sol, cx(nxt()), tol, "lstsq gelsd")
  T.eq(res.dtype, f64); T.eq(sv.dtype, f64); T.eq(rank:item(), 3)
  close(res, nxt(), tol, "lstsq residuals")
  close(sv, nxt(), tol, "lstsq singular values")
  close((L.lstsq(M, R)), cx(nxt()), tol, "lstsq gelsy")
  sol, res = L.lstsq(M, R, nil, { driver = "gels" })
  close(sol, cx(nxt()), tol, "lstsq gels")
  close(res, nxt(), tol, "lstsq gels residuals")
  close(L.matrix_power(S, 3), cx(nxt()), tol, "matrix_power 3")
  close(L.matrix_power(A, -2), cx(nxt()), tol, "matrix_power -2")
  close(L.matrix_exp(S), cx(nxt()), 1e-9, "matrix_exp")
  close(L.multi_dot({ M:transpose(-2, -1), M, S }), cx(nxt()), tol, "multi_dot")
  close(L.cross(Rc, Rc:flip(1)), cx(nxt()), tol, "cross")
end)

---------------------------------------------------------------------------
-- reconstructions, methods and the old names
---------------------------------------------------------------------------
T.test("reconstructions (complex128 and complex64)", function()
  for _, dt in ipairs { c128, c64 } do
    local tol = dt == c128 and 1e-10 or 2e-4
    local a, b, h = A:to(dt), B:to(dt), H:to(dt)
    close(a:matmul(L.solve(a, b)), b, tol, "A X = B")
    close(a:matmul(L.inv(a)), eye(3, dt):expand(2, 3, 3), tol, "A inv(A)")
    local l = L.cholesky(h)
    close(l:matmul(mH(l)), h, tol, "L L^H")
    T.eq(l:imag():diagonal(0, -2, -1):abs():max():item(), 0, "real diagonal")
    local u = L.cholesky(h, { upper = true })
    close(mH(u):matmul(u), h, tol, "U^H U")
    local p, lo, up = L.lu(a)
    close(p:matmul(lo):matmul(up), a, tol, "P L U")
    local s, la = L.slogdet(a)
    close(s:abs(), torch.ones(2, { dtype = dt == c128 and f64 or torch.float32 }), tol, "|sign| = 1")
    close(s * la:exp(), L.det(a), tol * 100, "sign exp(logabsdet) = det")
    local ex = L.matrix_exp(a[1] * 0.1)
    close(L.matrix_exp(a[1] * -0.1):matmul(ex), eye(3, dt), tol, "exp(-A) exp(A) = I")
  end
end)

T.test("methods and old names", function()
  local a = A[1]
  close(a:inverse(), L.inv(a), 1e-12, "inverse")
  close(torch.inverse(a), L.inv(a), 1e-12, "torch.inverse")
  close(a:det(), L.det(a), 1e-12, "det")
  local s1, l1 = a:slogdet()
  local s2, l2 = L.slogdet(a)
  close(s1, s2, 1e-12); close(l1, l2, 1e-12)
  close(a:logdet(), torch.complex(l2, s2:angle()), 1e-12, "logdet = log|det| + i arg det")
  close(H[1]:cholesky(), L.cholesky(H[1]), 1e-12, "cholesky")
  close(a:matrix_power(2), a:matmul(a), 1e-12, "matrix_power")
  close(a:matrix_exp(), L.matrix_exp(a), 1e-12, "matrix_exp")
  local LU, piv, info = a:lu({ get_infos = true })
  T.eq(info:item(), 0)
  close(torch.lu_solve(B[1], LU, piv), L.solve(a, B[1]), 1e-12, "lu_solve")
  local p, lo, up = torch.lu_unpack(LU, piv)
  close(p:matmul(lo):matmul(up), a, 1e-12, "lu_unpack")
  T.eq(p.dtype, c128)
  local inv, inf = L.inv_ex(a)
  close(inv, L.inv(a), 1e-12); T.eq(inf:item(), 0)
  close(L.diagonal(A), A:diagonal(0, -2, -1), 0, "diagonal")
  -- vander is a cumprod: complex once cumprod takes it, a clean error naming vander until then
  local x = crandn(3)
  local ok, v = pcall(L.vander, x, { N = 3 })
  if ok then close(v, torch.stack({ torch.ones(3, { dtype = c128 }), x, x * x }, -1), 1e-12, "vander")
  else T.ok(tostring(v):find("linalg.vander: complex128 is not supported", 1, true), v) end
end)

---------------------------------------------------------------------------
-- hard inputs: singular, not positive-definite, 1x1, empty, non-contiguous
---------------------------------------------------------------------------
T.test("singular complex matrices name the batch element", function()
  local a = A:clone()
  a[2]:select(1, 3):copy(a[2]:select(1, 1))   -- row 3 = row 1: an exact zero pivot
  local sing = torch.zeros(2, 2, { dtype = c128 })
  T.raises(function() L.solve(sing, B[1]:narrow(1, 1, 2)) end, "linalg.solve", "singular")
  T.raises(function() L.inv(a) end, "linalg.inv", "batch index 2", "singular")
  local inv, info = L.inv_ex(a)
  T.eq(info[1], 0); T.ok(info[2] > 0)
  T.raises(function() L.inv_ex(a, { check_errors = true }) end, "linalg.inv_ex", "batch index 2")
  T.eq(L.det(sing):abs():item(), 0)
  local s, la = L.slogdet(sing)
  T.eq(s:abs():item(), 0); T.eq(la:item(), -math.huge)
  T.raises(function() L.lu_factor(sing) end, "linalg.lu_factor", "singular")
end)

T.test("cholesky of a non-Hermitian-positive-definite matrix", function()
  local h = H:clone()
  h[2][2][2] = -5
  T.raises(function() L.cholesky(h) end, "linalg.cholesky", "batch index 2", "not positive-definite", "order 2")
  local _, info = L.cholesky_ex(h)
  T.eq(info[1], 0); T.eq(info[2], 2)
  T.raises(function() L.cholesky_ex(h, { check_errors = true }) end, "linalg.cholesky_ex", "batch index 2")
end)

T.test("1x1, empty batches, non-contiguous", function()
  local z = torch.tensor({ { 2 + 3 * torch.j } }, { dtype = c128 })
  close(L.inv(z), torch.tensor({ { 1 / (2 + 3 * torch.j) } }, { dtype = c128 }), 1e-15, "1x1 inv")
  close(L.det(z), z:view(-1)[1] * torch.ones({}, { dtype = c128 }), 1e-15, "1x1 det")
  local e = torch.zeros(0, 3, 3, { dtype = c128 })
  T.eq(L.solve(e, torch.zeros(0, 3, 2, { dtype = c128 })):size(), { 0, 3, 2 })
  T.eq(L.inv(e):size(), { 0, 3, 3 })
  T.eq(L.det(e):size(), { 0 })
  T.eq(L.cholesky(e):size(), { 0, 3, 3 })
  T.eq(L.lu_factor(e):size(), { 0, 3, 3 })
  T.eq(L.det(torch.zeros(0, 0, { dtype = c128 })):item(), torch.complex_number(1, 0))
  -- non-contiguous: a transposed view and a strided slice
  local at = A:transpose(-2, -1)
  T.ok(not at:is_contiguous())
  close(L.solve(at, B), L.solve(at:contiguous(), B), 1e-12, "transposed A")
  local big = crandn(2, 6, 4)
  local bs = big:narrow(2, 2, 3):narrow(3, 1, 2)
  close(L.solve(A, bs), L.solve(A, bs:contiguous()), 1e-12, "strided B")
  close(L.cholesky(H:transpose(-2, -1)), L.cholesky(H:transpose(-2, -1):contiguous()), 1e-12, "transposed H")
  -- broadcast batch
  close(L.solve(A[1], B), L.solve(A[1]:expand(2, 3, 3), B), 1e-12, "broadcast A")
end)

---------------------------------------------------------------------------
-- bad input
---------------------------------------------------------------------------
T.test("bad input", function()
  T.raises(function() L.solve(A, B:real()) end, "linalg.solve", "same dtype", "complex128", "float64")
  T.raises(function() L.solve(A:to(c64), B) end, "same dtype", "complex64", "complex128")
  T.raises(function() L.inv(torch.ones(3, 3, { dtype = torch.int64 })) end, "linalg.inv", "'A'",
           "float32, float64, complex64 or complex128", "int64")
  T.raises(function() L.det(crandn(2, 3)) end, "linalg.det", "square")
  T.raises(function() L.cholesky(crandn(3)) end, "linalg.cholesky", "at least 2 dimensions")
  T.raises(function() L.lstsq(M, crandn(4, 2)) end, "linalg.lstsq", "rows")
  T.raises(function() L.lstsq(M, R, nil, { driver = "nope" }) end, "linalg.lstsq", "driver")
  local LU, piv = L.lu_factor(A)
  T.raises(function() L.lu_solve(LU, piv:to(torch.int64), B) end, "linalg.lu_solve", "int32")
end)

---------------------------------------------------------------------------
-- gradients (complex128; real and imaginary parts perturbed)
---------------------------------------------------------------------------
T.test("gradcheck: solve, inv, det, slogdet", function()
  local a = wellcond(3, 3):requires_grad_()
  local b = crandn(3, 2):requires_grad_()
  T.ok(gc(function(x, y) return L.solve(x, y) end, { a, b }))
  T.ok(gc(function(x, y) return L.solve(x, y, { left = false }) end, { a, crandn(2, 3):requires_grad_() }))
  T.ok(gc(function(x, y) return L.solve(x, y, { left = false }) end, { a, crandn(3):requires_grad_() }))
  T.ok(gc(function(x) return L.inv(x) end, { a }))
  T.ok(gc(function(x) return L.det(x) end, { crandn(2, 3, 3):requires_grad_() }))
  T.ok(gc(function(x) local _, l = L.slogdet(x); return l end, { a }))
  T.ok(gc(function(x) return (L.slogdet(x)) end, { a }))   -- the complex sign is differentiable
  T.ok(gc(function(x) return L.slogdet(x) end, { crandn(2, 3, 3):requires_grad_() }))
  T.ok(gc(function(x) return torch.logdet(x) end, { a }))
end)

T.test("det's gradient at a singular complex A: conj of the cofactors", function()
  -- (1+i) times a rank-2 real matrix: its cofactors are (1+i)^2 = 2i times the real ones
  local r1 = torch.tensor({ { 1, 2, 3 }, { 2, 4, 6 }, { 1, 0, 1 } }, { dtype = c128 })
  local cof1 = torch.tensor({ { 4, 4, -4 }, { -2, -2, 2 }, { 0, 0, 0 } }, { dtype = c128 })
  local x = (r1 * (1 + torch.j)):requires_grad_()
  L.det(x):real():backward()
  close(x.grad, cof1 * (-2 * torch.j), 1e-12, "conj(cofactors)")
end)

T.test("gradcheck: cholesky, triangular, LU", function()
  local h = hpd(3, 3)
  -- through the Hermitian part, so the perturbed input stays Hermitian
  local herm = function(x) return (x + mH(x)) * 0.5 end
  T.ok(gc(function(x) return L.cholesky(herm(x)) end, { h:clone():requires_grad_() }))
  T.ok(gc(function(x) return L.cholesky(herm(x), { upper = true }) end, { h:clone():requires_grad_() }))
  local a = wellcond(3, 3):requires_grad_()
  local b = crandn(3, 2):requires_grad_()
  T.ok(gc(function(x, y) return L.solve_triangular(x, y, { upper = true }) end, { a, b }))
  T.ok(gc(function(x, y) return L.solve_triangular(x, y, { upper = false, left = false, unitriangular = true }) end,
          { a, crandn(2, 3):requires_grad_() }))
  T.ok(gc(function(x) return (L.lu_factor(x)) end, { a }))
  T.ok(gc(function(x, y) local lu, p = L.lu_factor(x); return L.lu_solve(lu, p, y, { adjoint = true }) end, { a, b }))
  T.ok(gc(function(x, y) local lu, p = L.lu_factor(x); return L.lu_solve(lu, p, y, { left = false, adjoint = true }) end,
          { a, crandn(2, 3):requires_grad_() }))
  T.ok(gc(function(y, l) return torch.cholesky_solve(y, l) end, { b, L.cholesky(h):requires_grad_() }))
end)

T.test("gradcheck: lstsq, matrix_exp", function()
  T.ok(gc(function(x, y) return (L.lstsq(x, y)) end, { crandn(5, 3):requires_grad_(), crandn(5, 2):requires_grad_() }))
  T.ok(gc(function(x) return L.matrix_exp(x) end, { (crandn(3, 3) * 0.3):requires_grad_() }))
end)

-- gradgradcheck on complex inputs: the complex function seen as a real one of the
-- inputs' real views (view_as_real in and out), so the real gradgradcheck checks
-- the complex double backward
local ggc = torch.autograd.gradgradcheck
local function realify(f)
  return function(...)
    local a = table.pack(...)
    for i = 1, a.n do a[i] = torch.view_as_complex(a[i]) end
    return torch.view_as_real(f(table.unpack(a, 1, a.n)))
  end
end
local function rleaf(x) return torch.view_as_real(x):clone():requires_grad_() end

T.test("gradgradcheck (complex, through the real views)", function()
  local a, b = rleaf(wellcond(3, 3)), rleaf(crandn(3, 2))
  T.ok(ggc(realify(function(x, y) return L.solve(x, y) end), { a, b }))
  T.ok(ggc(realify(function(x) return L.det(x) end), { a }))
  T.ok(ggc(function(x) local _, l = L.slogdet(torch.view_as_complex(x)); return l end, { a }))
  T.ok(ggc(realify(function(x) return L.cholesky((x + mH(x)) * 0.5) end), { rleaf(hpd(3, 3)) }))
  T.ok(ggc(realify(function(x, y) return L.solve_triangular(x, y, { upper = true }) end), { a, b }))
  T.ok(ggc(realify(function(x, y) local lu, p = L.lu_factor(x); return L.lu_solve(lu, p, y, { adjoint = true }) end),
           { a, b }))
  T.ok(ggc(realify(function(x, y) return (L.lstsq(x, y)) end), { rleaf(crandn(4, 2)), rleaf(crandn(4, 1)) }))
end)

T.test("the gradient convention is PyTorch's (backward of |det|^2)", function()
  if not P.available() then return T.skip(P.why()) end
  local a = wellcond(3, 3)
  local x = a:clone():requires_grad_()
  local d = L.det(x)
  ;(d * d:conj()):real():backward()
  local r = P.run({ ar = torch.view_as_real(a) },
    "a = torch.view_as_complex(ar.contiguous()).requires_grad_()\nd = torch.linalg.det(a)\n(d * d.conj()).real.backward()",
    { "torch.view_as_real(a.grad)" })
  close(x.grad, torch.view_as_complex(r[1]:contiguous()), 1e-9, "grad of |det|^2")
end)

T.done()
