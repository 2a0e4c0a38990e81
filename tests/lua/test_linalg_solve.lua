-- test_linalg_solve.lua — torch.linalg's solvers and factorizations (solve, inv, det,
-- slogdet, cholesky, LU, triangular solves, lstsq) and their composites (old names,
-- matrix_power, matrix_exp, multi_dot, cross, vander, diagonal): values against
-- PyTorch 1.13 (pyref) on random, ill-conditioned, singular, 1x1, empty and
-- non-contiguous inputs in float32 and float64, gradcheck/gradgradcheck, and errors.
local T = require "testing"
local P = require "pyref"

local f64, f32 = torch.float64, torch.float32
local L = torch.linalg
local gc, ggc = torch.autograd.gradcheck, torch.autograd.gradgradcheck

-- the largest |a - b|, with shapes checked
local function maxdiff(a, b)
  T.eq(a:size(), b:size(), "shape")
  if a:numel() == 0 then return 0 end
  return (a:to(f64) - b:to(f64)):abs():max():item()
end
local function close(a, b, tol, what)
  local d = maxdiff(a, b)
  if not (d <= tol) then error((what or "values") .. ": max difference " .. d .. " > " .. tol, 2) end
end

torch.manual_seed(7)
-- well-conditioned random square matrices: randn + n I
local function wellcond(...)
  local s = { ... }
  local n = s[#s]
  return torch.randn(s, { dtype = f64 }) + torch.eye(n, { dtype = f64 }) * n
end
local function spd(...)
  local a = torch.randn({ ... }, { dtype = f64 })
  local n = a.shape[#a.shape]
  return a:matmul(a:transpose(-2, -1)) + torch.eye(n, { dtype = f64 })
end

---------------------------------------------------------------------------
-- values against PyTorch
---------------------------------------------------------------------------
local A = wellcond(3, 4, 4)
local Bv = torch.randn({ 3, 4 }, { dtype = f64 })
local Bm = torch.randn({ 2, 1, 4, 2 }, { dtype = f64 })
local Bl = torch.randn({ 3, 2, 4 }, { dtype = f64 })
local S = spd(2, 5, 5)
local H = torch.tensor({ { 1, 1 / 2, 1 / 3, 1 / 4 }, { 1 / 2, 1 / 3, 1 / 4, 1 / 5 }, { 1 / 3, 1 / 4, 1 / 5, 1 / 6 },
  { 1 / 4, 1 / 5, 1 / 6, 1 / 7 } }, { dtype = f64 })       -- Hilbert: ill-conditioned
local Sing = torch.tensor({ { 1, 2, 3 }, { 2, 4, 6 }, { 1, 0, 1 } }, { dtype = f64 })
local R = torch.randn({ 2, 6, 3 }, { dtype = f64 })
local RB = torch.randn({ 2, 6, 2 }, { dtype = f64 })
local W = torch.randn({ 3, 5 }, { dtype = f64 })
local E = torch.randn({ 2, 3, 3 }, { dtype = f64 }) * 3

if not P.available() then
  T.skip("values against PyTorch", P.why())
else
  local r = P.run({ A = A, Bv = Bv, Bm = Bm, Bl = Bl, S = S, H = H, Sing = Sing, R = R, RB = RB, W = W, E = E }, [[
import warnings
warnings.filterwarnings("ignore")
la = torch.linalg
Lc = la.cholesky(S)
LUf, piv = la.lu_factor(A)
Pp, Ll, Uu = la.lu(W)
]], { "la.solve(A, Bv)", "la.solve(A, Bm)", "la.solve(A, Bl, left=False)", "la.inv(A)", "la.det(A)",
        "la.slogdet(A)[0]", "la.slogdet(A)[1]", "Lc", "la.cholesky(S, upper=True)", "LUf", "piv",
        "la.lu_solve(LUf, piv, Bm)", "la.lu_solve(LUf, piv, Bm, adjoint=True)", "Pp", "Ll", "Uu",
        "la.solve_triangular(Lc, S, upper=False)", "la.solve_triangular(Lc.mT, S, upper=True, left=False, unitriangular=True)",
        "la.inv(H)", "la.det(H)", "la.det(Sing)", "la.slogdet(Sing)[1]",
        "la.lstsq(R, RB).solution", "la.lstsq(R, RB, driver='gelsd').residuals", "la.lstsq(R, RB, driver='gelsd').singular_values",
        "la.lstsq(R, RB, driver='gels').solution", "la.lstsq(R, RB, driver='gelss').rank",
        "la.matrix_exp(E)", "la.matrix_power(A, 3)", "la.matrix_power(A, -2)", "torch.cholesky_solve(Bm, Lc[:1].expand(2, 1, 5, 5)[..., :4, :4].contiguous())",
        "torch.cholesky_inverse(Lc)", "torch.logdet(A)", "la.multi_dot([W.mT, W, W.mT[:, 0]])", "la.vander(W)",
        "torch.triangular_solve(Bm, Lc[0, :4, :4], upper=False, transpose=True)[0]",
        "la.lu_factor(W)[0]", "la.lu_factor(W.mT)[1]" })
  local i = 0
  local function nxt() i = i + 1; return r[i] end
  T.test("solve: vector, broadcast matrix and right-hand forms", function()
    i = 0
    close(L.solve(A, Bv), nxt(), 1e-12, "vector")
    close(L.solve(A, Bm), nxt(), 1e-12, "broadcast")
    close(L.solve(A, Bl, { left = false }), nxt(), 1e-12, "left=false")
  end)
  T.test("inv, det, slogdet", function()
    i = 3
    close(L.inv(A), nxt(), 1e-12, "inv")
    close(L.det(A), nxt(), 1e-9, "det")
    local s, l = L.slogdet(A)
    close(s, nxt(), 0, "sign")
    close(l, nxt(), 1e-12, "logabsdet")
  end)
  T.test("cholesky lower and upper", function()
    i = 7
    close(L.cholesky(S), nxt(), 1e-12, "L")
    close(L.cholesky(S, { upper = true }), nxt(), 1e-12, "U")
  end)
  local LUf, piv
  T.test("lu_factor, lu_solve, lu", function()
    i = 9
    LUf, piv = L.lu_factor(A)
    close(LUf, nxt(), 1e-12, "LU")
    T.eq(piv.dtype, torch.int32)
    close(piv, nxt(), 0, "pivots")
    close(L.lu_solve(LUf, piv, Bm), nxt(), 1e-12, "lu_solve")
    close(L.lu_solve(LUf, piv, Bm, { adjoint = true }), nxt(), 1e-12, "adjoint")
    local p, l, u = L.lu(W)
    close(p, nxt(), 0, "P"); close(l, nxt(), 1e-12, "L"); close(u, nxt(), 1e-12, "U")
    close(p:matmul(l):matmul(u), W, 1e-12, "P L U = A")
  end)
  T.test("solve_triangular: lower left, upper right unitriangular", function()
    i = 16
    local Lc = L.cholesky(S)
    close(L.solve_triangular(Lc, S, { upper = false }), nxt(), 1e-10)
    close(L.solve_triangular(Lc.mT, S, { upper = true, left = false, unitriangular = true }), nxt(), 1e-6)
  end)
  T.test("ill-conditioned and singular", function()
    i = 18
    close(L.inv(H), nxt(), 1e-6, "inv(Hilbert)")
    close(L.det(H), nxt(), 1e-16, "det(Hilbert)")
    close(L.det(Sing), nxt(), 1e-12, "det(singular)")
    local s, l = L.slogdet(Sing)
    local want = nxt()
    T.ok(l:item() == want:item() or l:item() < -30, "logabsdet of a singular matrix: " .. l:item())
  end)
  T.test("lstsq: drivers, residuals, singular values, rank", function()
    i = 22
    local sol = L.lstsq(R, RB)
    close(sol, nxt(), 1e-12, "gelsy")
    local _, res, rank, sv = L.lstsq(R, RB, { driver = "gelsd" })
    close(res, nxt(), 1e-10, "residuals")
    close(sv, nxt(), 1e-12, "singular values")
    close(L.lstsq(R, RB, { driver = "gels" }), nxt(), 1e-12, "gels")
    local _, _, rk = L.lstsq(R, RB, { driver = "gelss" })
    T.eq(rk.dtype, torch.int64)
    close(rk, nxt(), 0, "rank")
  end)
  T.test("matrix_exp, matrix_power", function()
    i = 27
    close(L.matrix_exp(E), nxt(), 1e-10, "matrix_exp")
    close(L.matrix_power(A, 3), nxt(), 1e-9, "A^3")
    close(L.matrix_power(A, -2), nxt(), 1e-12, "A^-2")
  end)
  T.test("old names: cholesky_solve, cholesky_inverse, logdet, triangular_solve", function()
    i = 30
    local Lc = L.cholesky(S)
    close(torch.cholesky_solve(Bm, Lc:narrow(1, 1, 1):expand(2, 1, 5, 5):narrow(3, 1, 4):narrow(4, 1, 4):contiguous()),
      nxt(), 1e-12, "cholesky_solve")
    close(torch.cholesky_inverse(Lc), nxt(), 1e-12, "cholesky_inverse")
    close(torch.logdet(A), nxt(), 1e-12, "logdet")
    close(L.multi_dot({ W.mT, W, W.mT:select(2, 1) }), nxt(), 1e-12, "multi_dot")
    close(L.vander(W), nxt(), 1e-9, "vander")
    local X, C = torch.triangular_solve(Bm, Lc[1]:narrow(1, 1, 4):narrow(2, 1, 4), false, true)
    close(X, nxt(), 1e-12, "triangular_solve")
    close(C, Lc[1]:narrow(1, 1, 4):narrow(2, 1, 4), 0, "cloned coefficient")
    close(L.lu_factor(W), nxt(), 1e-12, "lu_factor wide")
    local _, p2 = L.lu_factor(W.mT)
    close(p2, nxt(), 0, "pivots tall")
  end)
end

---------------------------------------------------------------------------
-- properties that need no reference
---------------------------------------------------------------------------
T.test("float32 agrees with float64", function()
  local a = wellcond(2, 6, 6)
  local b = torch.randn({ 2, 6, 3 }, { dtype = f64 })
  close(L.solve(a:float(), b:float()), L.solve(a, b), 1e-5, "solve")
  T.eq(L.solve(a:float(), b:float()).dtype, f32)
  close(L.inv(a:float()), L.inv(a), 1e-5, "inv")
  close(L.det(a:float()), L.det(a), 1e-2 * L.det(a):abs():max():item(), "det")
  local s = spd(6, 6)
  close(L.cholesky(s:float()), L.cholesky(s), 1e-4, "cholesky")
  close(L.lstsq(R:float(), RB:float()), L.lstsq(R, RB), 1e-4, "lstsq")
end)

T.test("non-contiguous inputs: transposed, sliced, expanded", function()
  local a = wellcond(5, 5)
  local b = torch.randn({ 5, 3 }, { dtype = f64 })
  local at = a:t():contiguous():t()         -- column-major storage
  close(L.solve(at, b), L.solve(a, b), 1e-12, "transposed A")
  local big = torch.randn({ 8, 8 }, { dtype = f64 }) + torch.eye(8, { dtype = f64 }) * 8
  local sl = big:narrow(1, 2, 5):narrow(2, 3, 5)
  close(L.inv(sl), L.inv(sl:contiguous()), 1e-12, "sliced")
  close(L.det(a:t()), L.det(a), 1e-9, "det of a transpose")
  local ex = a:expand(3, 5, 5)
  close(L.solve(ex, b), L.solve(a, b):expand(3, 5, 3), 1e-12, "expanded batch")
  local bs = torch.randn({ 5, 6 }, { dtype = f64 }):narrow(2, 1, 3)
  close(L.solve(a, bs), L.solve(a, bs:contiguous()), 1e-12, "sliced B")
  close(a:matmul(L.solve(a, b)), b, 1e-12, "A X = B")
end)

T.test("1x1 and empty batches", function()
  local one = torch.tensor({ { 4 } }, { dtype = f64 })
  T.tensor(L.inv(one), { { 0.25 } })
  T.tensor(L.det(one), 4)
  T.tensor(L.cholesky(one), { { 2 } })
  T.tensor(L.solve(one, torch.tensor({ 2 }, { dtype = f64 })), { 0.5 })
  local e = torch.zeros(0, 3, 3, { dtype = f64 })
  T.eq(L.inv(e):size(), { 0, 3, 3 })
  T.eq(L.det(e):size(), { 0 })
  T.eq(L.cholesky(e):size(), { 0, 3, 3 })
  local lu, piv, info = L.lu_factor_ex(e)
  T.eq(lu:size(), { 0, 3, 3 }); T.eq(piv:size(), { 0, 3 }); T.eq(info:size(), { 0 })
  T.eq(L.solve(e, torch.zeros(0, 3, 2, { dtype = f64 })):size(), { 0, 3, 2 })
  local z = torch.zeros(2, 0, 0, { dtype = f64 })
  T.tensor(L.det(z), { 1, 1 })
  T.eq(L.inv(z):size(), { 2, 0, 0 })
  T.eq(L.matrix_exp(z):size(), { 2, 0, 0 })
end)

T.test("_ex variants return info codes instead of raising", function()
  local a = torch.stack({ torch.eye(3, { dtype = f64 }), torch.zeros(3, 3, { dtype = f64 }) })
  local inv, info = L.inv_ex(a)
  T.eq(info.dtype, torch.int32)
  T.tensor(info, { 0, 1 })
  local _, info2 = L.solve_ex(a, torch.ones(2, 3, { dtype = f64 }))
  T.tensor(info2, { 0, 1 })
  local _, info3 = L.cholesky_ex(torch.tensor({ { 1, 0 }, { 0, -1 } }, { dtype = f64 }))
  T.tensor(info3, 2)
  local _, _, info4 = L.lu_factor_ex(Sing)
  T.tensor(info4, 3)
  T.raises(function() L.inv_ex(a, { check_errors = true }) end, "linalg.inv_ex", "batch index 2", "singular")
  T.raises(function() L.cholesky_ex(-torch.eye(2, { dtype = f64 }), { check_errors = true }) end,
    "linalg.cholesky_ex", "not positive-definite", "order 1")
end)

T.test("methods and old names", function()
  local a = wellcond(4, 4)
  close(a:inverse(), L.inv(a), 0)
  close(torch.inverse(a), L.inv(a), 0)
  close(a:det(), L.det(a), 0)
  local s1, l1 = a:slogdet()
  local s2, l2 = L.slogdet(a)
  close(s1, s2, 0); close(l1, l2, 0)
  close(a:logdet(), l2, 1e-12)
  local s = spd(4, 4)
  close(s:cholesky(), L.cholesky(s), 0)
  close(torch.cholesky(s, true), L.cholesky(s, { upper = true }), 0)
  local b = torch.randn({ 4, 2 }, { dtype = f64 })
  close(b:cholesky_solve(s:cholesky()), L.solve(s, b), 1e-10)
  close(s:cholesky():cholesky_inverse(), L.inv(s), 1e-10)
  close(s:cholesky(true):cholesky_inverse(true), L.inv(s), 1e-10)
  close(b:cholesky_solve(s:cholesky(true), true), L.solve(s, b), 1e-10)
  local x, c = b:triangular_solve(s:cholesky(true))
  close(s:cholesky(true):matmul(x), b, 1e-10)
  local lu, piv = a:lu()
  close(lu, L.lu_factor(a), 0)
  close(b:lu_solve(lu, piv), L.solve(a, b), 1e-12)
  close(torch.lu_solve(b, lu, piv), L.solve(a, b), 1e-12)
  close(a:matrix_power(2), a:matmul(a), 1e-12)
  close(a:matrix_exp(), L.matrix_exp(a), 0)
  close(L.matrix_power(a, 0), torch.eye(4, { dtype = f64 }), 0)
  close(L.matrix_power(a, 1), a, 0)
  close(L.matrix_power(a, -1), L.inv(a), 1e-12)
  local P_, L_, U_ = torch.lu_unpack(L.lu_factor(a))
  close(P_:matmul(L_):matmul(U_), a, 1e-12)
  close(L.diagonal(a), torch.diagonal(a, 0, 1, 2), 0)
  local u, v = torch.randn({ 2, 3 }, { dtype = f64 }), torch.randn({ 2, 3 }, { dtype = f64 })
  close(L.cross(u, v), torch.cross(u, v, 2), 0)
  close(L.matrix_exp(torch.zeros(3, 3, { dtype = f64 })), torch.eye(3, { dtype = f64 }), 1e-14)
  -- a large norm takes the squaring path: exp(diag(d)) = diag(exp(d))
  local d = torch.tensor({ 10, -3, 0.5 }, { dtype = f64 })
  close(L.matrix_exp(torch.diag(d)), torch.diag(d:exp()), 1e-9 * math.exp(10))
end)

---------------------------------------------------------------------------
-- errors
---------------------------------------------------------------------------
T.test("singular and non-positive-definite errors name the batch element", function()
  local a = torch.stack({ torch.eye(3, { dtype = f64 }), torch.eye(3, { dtype = f64 }), Sing })
  T.raises(function() L.inv(a) end, "linalg.inv: the matrix at batch index 3 is singular (U[", "] is zero)")
  T.raises(function() L.solve(Sing, torch.ones(3, { dtype = f64 })) end, "linalg.solve: the matrix is singular (U[2,2] is zero)")
  T.raises(function() torch.inverse(Sing) end, "inverse", "singular")
  local npd = torch.tensor({ { 1, 2 }, { 2, 1 } }, { dtype = f64 })
  T.raises(function() L.cholesky(npd) end, "linalg.cholesky: the matrix is not positive-definite (the leading minor of order 2 is not positive)")
  T.raises(function() L.cholesky(torch.stack({ torch.eye(2, { dtype = f64 }), npd })) end, "batch index 2", "order 2")
  T.raises(function() L.lu_factor(Sing) end, "linalg.lu_factor", "singular", "U[3,3]")
  T.raises(function() Sing:lu() end, "lu", "singular")
  local lu, piv, info = Sing:lu(true, true)
  T.tensor(info, 3)
end)

T.test("shape, dtype and option errors name the argument", function()
  local a = wellcond(3, 3)
  T.raises(function() L.solve(torch.ones(2, 3, { dtype = f64 }), torch.ones(2, { dtype = f64 })) end, "linalg.solve", "'A'", "square")
  T.raises(function() L.solve(a, torch.ones(4, { dtype = f64 })) end, "linalg.solve", "'B'", "3 entries")
  T.raises(function() L.solve(a, torch.ones(4, 2, { dtype = f64 })) end, "linalg.solve", "'B'", "rows")
  T.raises(function() L.solve(a, torch.ones(3, 2, { dtype = f64 }), { left = false }) end, "linalg.solve", "'B'", "columns")
  T.raises(function() L.solve(a:expand(2, 3, 3), torch.ones(3, 3, 2, { dtype = f64 })) end, "linalg.solve", "batch dims", "'B'")
  T.raises(function() L.solve(a, torch.ones(3, { dtype = f32 })) end, "linalg.solve", "same dtype")
  T.raises(function() L.inv(torch.ones(3, 3, { dtype = torch.int64 })) end, "linalg.inv", "'A'", "float32, float64, complex64 or complex128", "int64")
  T.raises(function() L.inv(torch.ones(3, { dtype = f64 })) end, "linalg.inv", "'A'", "2 dimensions")
  T.raises(function() L.det(torch.ones(2, 3, { dtype = f64 })) end, "linalg.det", "'A'", "square")
  T.raises(function() torch.det(torch.ones(2, 3, { dtype = f64 })) end, "det:", "square")
  T.raises(function() L.cholesky(torch.ones(2, 3, { dtype = f64 })) end, "linalg.cholesky", "'A'", "square")
  T.raises(function() L.solve_triangular(a, torch.ones(2, 3, { dtype = f64 }), { upper = true }) end, "linalg.solve_triangular", "'B'", "rows")
  T.raises(function() L.solve_triangular(a, torch.ones(3, { dtype = f64 }), { upper = true }) end, "linalg.solve_triangular", "'B'", "2 dimensions")
  T.raises(function() L.lu_factor(a, { pivot = false }) end, "linalg.lu_factor", "pivot")
  local lu, piv = L.lu_factor(a)
  T.raises(function() L.lu_solve(lu, piv:long(), torch.ones(3, 1, { dtype = f64 })) end, "linalg.lu_solve", "'pivots'", "int32")
  T.raises(function() L.lu_solve(lu, piv * 0, torch.ones(3, 1, { dtype = f64 })) end, "linalg.lu_solve", "'pivots'", "outside")
  T.raises(function() L.lstsq(a, torch.ones(2, 1, { dtype = f64 })) end, "linalg.lstsq", "'B'", "rows")
  T.raises(function() L.lstsq(a, torch.ones(3, 1, { dtype = f64 }), nil, { driver = "magic" }) end, "linalg.lstsq", "'driver'", "magic")
  T.raises(function() L.lstsq(torch.tensor({ { 1, 0 }, { 2, 0 }, { 3, 0 } }, { dtype = f64 }), torch.ones(3, 1, { dtype = f64 }), nil, { driver = "gels" }) end, "linalg.lstsq", "full rank")
  T.raises(function() L.matrix_power(torch.ones(2, 3, { dtype = f64 }), 2) end, "linalg.matrix_power", "square")
  T.raises(function() L.matrix_exp(torch.ones(2, 3, { dtype = f64 })) end, "linalg.matrix_exp", "square")
  T.raises(function() L.multi_dot({ a }) end, "linalg.multi_dot", "at least 2")
  T.raises(function() L.multi_dot({ a, torch.ones(2, 2, { dtype = f64 }), a }) end, "linalg.multi_dot", "rows")
  T.raises(function() L.multi_dot({ a, torch.ones(3, { dtype = f64 }), a }) end, "linalg.multi_dot", "2-D")
  T.raises(function() L.vander(torch.ones(3, { dtype = f64 }), { N = 1 }) end, "linalg.vander", "'N'")
  T.raises(function() L.cross(torch.ones(2, { dtype = f64 }), torch.ones(2, { dtype = f64 })) end, "linalg.cross")
  T.raises(function() torch.lu_unpack(lu, piv:narrow(1, 1, 2)) end, "lu_unpack", "'pivots'")
end)

---------------------------------------------------------------------------
-- gradients (float64)
---------------------------------------------------------------------------
local function leaf(t) t = t:clone(); t.requires_grad = true; return t end

T.test("gradcheck/gradgradcheck solve (vector, matrix, broadcast, right, transposed)", function()
  local a, b = leaf(wellcond(3, 3)), leaf(torch.randn({ 3, 2 }, { dtype = f64 }))
  local f = function(x, y) return L.solve(x, y) end
  T.ok(gc(f, { a, b })); T.ok(ggc(f, { a, b }))
  local bv = leaf(torch.randn({ 3 }, { dtype = f64 }))
  T.ok(gc(f, { a, bv })); T.ok(ggc(f, { a, bv }))
  local ab = leaf(wellcond(2, 3, 3))
  local bb = leaf(torch.randn({ 3, 2 }, { dtype = f64 }))
  T.ok(gc(f, { ab, bb }))
  local br = leaf(torch.randn({ 2, 3 }, { dtype = f64 }))
  T.ok(gc(function(x, y) return L.solve(x, y, { left = false }) end, { a, br }))
  T.ok(ggc(function(x, y) return L.solve(x, y, { left = false }) end, { a, br }))
  T.ok(gc(function(x, y) return L.solve(x:t(), y) end, { a, b }))
end)

T.test("gradcheck/gradgradcheck inv, det, slogdet, logdet", function()
  local a = leaf(wellcond(2, 3, 3))
  T.ok(gc(function(x) return L.inv(x) end, { a })); T.ok(ggc(function(x) return L.inv(x) end, { a }))
  T.ok(gc(function(x) return L.det(x) end, { a })); T.ok(ggc(function(x) return L.det(x) end, { a }))
  T.ok(gc(function(x) local _, l = L.slogdet(x); return l end, { a }))
  T.ok(ggc(function(x) local _, l = L.slogdet(x); return l end, { a }))
  T.ok(gc(function(x) return torch.logdet(x) end, { a }))
  local n = leaf(-wellcond(3, 3))
  T.ok(gc(function(x) local _, l = L.slogdet(x); return l end, { n }))
end)

T.test("gradcheck/gradgradcheck cholesky (through a symmetric input)", function()
  local x = leaf(torch.randn({ 2, 3, 3 }, { dtype = f64 }))
  local function sym(m) return m:matmul(m.mT) + torch.eye(3, { dtype = f64 }) end
  T.ok(gc(function(m) return L.cholesky(sym(m)) end, { x }))
  T.ok(ggc(function(m) return L.cholesky(sym(m)) end, { x }))
  T.ok(gc(function(m) return L.cholesky(sym(m), { upper = true }) end, { x }))
  local b = leaf(torch.randn({ 3, 2 }, { dtype = f64 }))
  T.ok(gc(function(m, y) return torch.cholesky_solve(y, L.cholesky(sym(m))) end, { x, b }))
  T.ok(gc(function(m) return torch.cholesky_inverse(L.cholesky(sym(m))) end, { x }))
end)

T.test("gradcheck/gradgradcheck solve_triangular and triangular_solve", function()
  local a = leaf(wellcond(3, 3))
  local b = leaf(torch.randn({ 2, 3, 2 }, { dtype = f64 }))
  for _, up in ipairs({ true, false }) do
    for _, unit in ipairs({ false, true }) do
      local f = function(x, y) return L.solve_triangular(x, y, { upper = up, unitriangular = unit }) end
      T.ok(gc(f, { a, b }))
    end
  end
  T.ok(ggc(function(x, y) return L.solve_triangular(x, y, { upper = true }) end, { a, b }))
  local br = leaf(torch.randn({ 2, 3 }, { dtype = f64 }))
  T.ok(gc(function(x, y) return L.solve_triangular(x, y, { upper = false, left = false }) end, { a, br }))
  T.ok(gc(function(x, y) return torch.triangular_solve(y, x, true, true) end, { a, b }))
end)

T.test("gradcheck lu_solve (B), lstsq (full rank), matrix_exp, matrix_power, multi_dot, vander", function()
  local a = wellcond(3, 3)
  local lu, piv = L.lu_factor(a)
  local b = leaf(torch.randn({ 3, 2 }, { dtype = f64 }))
  T.ok(gc(function(y) return L.lu_solve(lu, piv, y) end, { b }))
  T.ok(gc(function(y) return L.lu_solve(lu, piv, y, { adjoint = true }) end, { b }))
  T.ok(gc(function(y) return L.lu_solve(lu, piv, y:t(), { left = false }) end, { b }))
  local lul = leaf(lu)
  for _, left in ipairs({ true, false }) do
    for _, adj in ipairs({ false, true }) do
      local f = function(x, y) return L.lu_solve(x, piv, left and y or y:t(), { left = left, adjoint = adj }) end
      T.ok(gc(f, { lul, b }))
    end
  end
  T.ok(ggc(function(x, y) return L.lu_solve(x, piv, y) end, { lul, b }))
  local bb = leaf(torch.randn({ 2, 3, 2 }, { dtype = f64 }))
  T.ok(gc(function(x, y) return L.lu_solve(x, piv, y) end, { lul, bb }))
  local r, rb = leaf(torch.randn({ 5, 3 }, { dtype = f64 })), leaf(torch.randn({ 5, 2 }, { dtype = f64 }))
  T.ok(gc(function(x, y) return (L.lstsq(x, y)) end, { r, rb }))
  T.ok(ggc(function(x, y) return (L.lstsq(x, y)) end, { r, rb }))
  local e = leaf(torch.randn({ 3, 3 }, { dtype = f64 }))
  T.ok(gc(function(x) return L.matrix_exp(x) end, { e }))
  T.ok(ggc(function(x) return L.matrix_exp(x) end, { e }))
  local big = leaf(torch.randn({ 3, 3 }, { dtype = f64 }) * 4)   -- scaled and squared
  T.ok(gc(function(x) return L.matrix_exp(x) end, { big }, { rtol = 1e-3, atol = 1e-4 }))
  local m = leaf(wellcond(3, 3))
  T.ok(gc(function(x) return L.matrix_power(x, 3) end, { m }))
  T.ok(gc(function(x) return L.matrix_power(x, -2) end, { m }))
  local p, q, w = leaf(torch.randn({ 2, 3 }, { dtype = f64 })), leaf(torch.randn({ 3, 4 }, { dtype = f64 })),
    leaf(torch.randn({ 4 }, { dtype = f64 }))
  T.ok(gc(function(x, y, z) return L.multi_dot({ x, y, z }) end, { p, q, w }))
  T.ok(gc(function(x) return L.vander(x) end, { leaf(torch.randn({ 2, 3 }, { dtype = f64 })) }))
end)

T.test("gradcheck/gradgradcheck lu_factor and lu (square, wide, tall)", function()
  local a = leaf(torch.randn({ 2, 4, 4 }, { dtype = f64 }))
  T.ok(gc(function(x) return (L.lu_factor(x)) end, { a }))
  T.ok(ggc(function(x) return (L.lu_factor(x)) end, { a }))
  T.ok(gc(function(x) local _, l, u = L.lu(x); return l, u end, { a }))
  for _, sz in ipairs { { 3, 5 }, { 2, 5, 3 } } do
    local w = leaf(torch.randn(sz, { dtype = f64 }))
    T.ok(gc(function(x) return (L.lu_factor(x)) end, { w }))
    T.ok(ggc(function(x) return (L.lu_factor(x)) end, { w }))
    T.ok(gc(function(x) local _, l, u = L.lu(x); return l, u end, { w }))
  end
end)

T.test("lu_factor's gradient for wide and tall A against PyTorch", function()
  if not P.available() then return T.skip(P.why()) end
  local w, t = torch.randn({ 3, 5 }, { dtype = f64 }), torch.randn({ 5, 3 }, { dtype = f64 })
  local gw, gt = torch.randn({ 3, 5 }, { dtype = f64 }), torch.randn({ 5, 3 }, { dtype = f64 })
  local r = P.run({ w = w, t = t, gw = gw, gt = gt }, table.concat({
    "w.requires_grad_(); t.requires_grad_()",
    "torch.linalg.lu_factor(w)[0].backward(gw)",
    "P, Lo, U = torch.linalg.lu(t); (Lo * gt).sum().backward()",
  }, "\n"), { "w.grad", "t.grad" })
  local x = w:clone():requires_grad_()
  L.lu_factor(x):backward(gw)
  close(x.grad, r[1], 1e-10, "wide")
  local y = t:clone():requires_grad_()
  local _, lo = L.lu(y)
  ;(lo * gt):sum():backward()
  close(y.grad, r[2], 1e-10, "tall")
end)

T.test("det's gradient at singular A is the cofactor matrix", function()
  -- rank n-1: the cofactors are finite and nonzero; rank n-2: all zero
  local r1 = torch.tensor({ { 1, 2, 3 }, { 2, 4, 6 }, { 1, 0, 1 } }, { dtype = f64 })
  local r2 = torch.tensor({ { 1, 2, 3 }, { 2, 4, 6 }, { 3, 6, 9 } }, { dtype = f64 })
  local cof1 = torch.tensor({ { 4, 4, -4 }, { -2, -2, 2 }, { 0, 0, 0 } }, { dtype = f64 })
  local x = torch.stack({ r1, r2, torch.eye(3, { dtype = f64 }) * 2 }):requires_grad_()
  L.det(x):sum():backward()
  close(x.grad[1], cof1, 1e-12, "rank n-1")
  close(x.grad[2], torch.zeros(3, 3, { dtype = f64 }), 1e-12, "rank n-2")
  close(x.grad[3], torch.eye(3, { dtype = f64 }) * 4, 1e-12, "the invertible one in the same batch")
  T.ok(gc(function(a) return L.det(a) end, { r1:clone():requires_grad_() }))
  T.ok(gc(function(a) return L.det(a) end, { r2:clone():requires_grad_() }))
  local y = r1:clone():requires_grad_()
  torch.det(y):backward()
  close(y.grad, cof1, 1e-12, "torch.det")
end)

T.done()
