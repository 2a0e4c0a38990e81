-- The spectral linear algebra (src/ops/linalg_spectral.lua): qr, geqrf, householder_product,
-- ormqr, eigh, eigvalsh, symeig, svd, svdvals, pinv, matrix_rank, matrix_norm, vector_norm,
-- norm, cond and the old names. Decompositions are checked by reconstruction and invariants
-- (vectors are unique only up to sign), values against PyTorch 1.13 through pyref on the same
-- inputs; random, ill-conditioned, rank-deficient, repeated eigenvalues, 1x1, empty batches,
-- non-contiguous, float32 and float64; every error. Gradients: test_grad_linalg_spectral.lua.
local T = require "testing"
local P = require "pyref"

local f64, f32 = torch.float64, torch.float32
local L = torch.linalg

local function rnd(...) return torch.randn(table.pack(...), { dtype = f64 }) end
local function mT(x) return x:transpose(-2, -1) end
local function maxdiff(a, b) return (a:to(f64) - b:to(f64)):abs():max():item() end
local function eye_like(n, dt) return torch.eye(n, { dtype = dt or f64 }) end
local function sym(a) return a + mT(a) end
-- an orthonormal-columns check: Q^T Q = I
local function orthonormal(q, tol)
  local k = q:size(-1)
  return maxdiff(mT(q):matmul(q), eye_like(k, q.dtype):expand(mT(q):matmul(q).shape)) < tol
end

T.test("linalg.qr: reduced, complete, r; tall, wide, batched, non-contiguous, float32", function()
  for _, shape in ipairs({ { 5, 3 }, { 3, 5 }, { 4, 4 }, { 2, 3, 6, 2 }, { 1, 1 } }) do
    local a = rnd(table.unpack(shape))
    local m, n = shape[#shape - 1], shape[#shape]
    local k = math.min(m, n)
    local q, r = L.qr(a)
    T.eq(q:size(-1), k); T.eq(r:size(-2), k)
    T.ok(maxdiff(q:matmul(r), a) < 1e-12)
    T.ok(orthonormal(q, 1e-12))
    T.ok(maxdiff(r, r:triu()) == 0)
    local qc, rc = L.qr(a, "complete")
    T.eq(qc:size(-1), m); T.eq(rc:size(-2), m)
    T.ok(maxdiff(qc:matmul(rc), a) < 1e-12)
    T.ok(orthonormal(qc, 1e-12))
    local q0, r0 = L.qr(a, "r")
    T.eq(q0:numel(), 0)
    T.ok(maxdiff(r0, r) == 0)
  end
  local t = rnd(3, 5):t()   -- non-contiguous (5 x 3)
  local q, r = L.qr(t)
  T.ok(maxdiff(q:matmul(r), t) < 1e-12)
  local a32 = torch.randn(6, 4)
  local q32, r32 = L.qr(a32)
  T.eq(q32.dtype, f32)
  T.ok(maxdiff(q32:matmul(r32), a32) < 1e-5)
  -- the old name and the method
  local qo, ro = torch.qr(a32)
  T.ok(maxdiff(qo, q32) == 0)
  local qm, rm = a32:qr(false)
  T.eq(qm:size(2), 6)
  -- empty batch and empty matrices
  local qe, re = L.qr(torch.zeros(0, 3, 2))
  T.eq(qe.shape, { 0, 3, 2 }); T.eq(re.shape, { 0, 2, 2 })
  local qz, rz = L.qr(torch.zeros(3, 0), "complete")
  T.ok(maxdiff(qz, torch.eye(3)) == 0); T.eq(rz.shape, { 3, 0 })
end)

T.test("geqrf, householder_product (orgqr), ormqr", function()
  local a = rnd(2, 5, 3)
  local g, tau = torch.geqrf(a)
  T.eq(g.shape, { 2, 5, 3 }); T.eq(tau.shape, { 2, 3 })
  local q, r = L.qr(a)
  T.ok(maxdiff(L.householder_product(g, tau), q) < 1e-12)
  T.ok(maxdiff(torch.orgqr(g, tau), q) < 1e-12)
  T.ok(maxdiff(g:triu():narrow(-2, 1, 3), r) < 1e-12)
  local qc = L.qr(a, "complete")
  local c = rnd(2, 5, 4)
  T.ok(maxdiff(torch.ormqr(g, tau, c), qc:matmul(c)) < 1e-12)
  T.ok(maxdiff(g:ormqr(tau, c, true, true), mT(qc):matmul(c)) < 1e-12)
  local d = rnd(2, 4, 5)
  T.ok(maxdiff(torch.ormqr(g, tau, d, false), d:matmul(qc)) < 1e-12)
  T.ok(maxdiff(torch.ormqr(g, tau, d, false, true), d:matmul(mT(qc))) < 1e-12)
  local g1, tau1 = rnd(4, 4):geqrf()
  T.eq(tau1.shape, { 4 })
end)

T.test("linalg.eigh: reconstruction, UPLO, repeated eigenvalues, 1x1, batches, float32", function()
  local a = sym(rnd(3, 5, 5))
  local w, v = L.eigh(a)
  T.eq(w.shape, { 3, 5 }); T.eq(v.shape, { 3, 5, 5 })
  T.ok(maxdiff((v * w:unsqueeze(-2)):matmul(mT(v)), a) < 1e-12)
  T.ok(orthonormal(v, 1e-12))
  T.ok(maxdiff(w, w:sort(-1)) == 0)   -- ascending
  -- UPLO: only that triangle is read
  local b = rnd(4, 4)
  local wl = L.eigvalsh(b)
  local wu = L.eigvalsh(b, "U")
  T.ok(maxdiff(wl, L.eigvalsh(sym(b:tril()) - torch.diag(b:diagonal()))) < 1e-12)
  T.ok(maxdiff(wu, L.eigvalsh(sym(b:triu()) - torch.diag(b:diagonal()))) < 1e-12)
  T.ok(maxdiff(L.eigvalsh(b, "u"), wu) == 0)
  -- repeated eigenvalues: the identity, and diag(2, 2, 5) rotated
  local wi, vi = L.eigh(eye_like(4))
  T.ok(maxdiff(wi, torch.ones(4, { dtype = f64 })) < 1e-15)
  T.ok(orthonormal(vi, 1e-14))
  local q = L.qr(rnd(3, 3))
  local rep = q:matmul(torch.diag(torch.tensor({ 2, 2, 5 }, { dtype = f64 }))):matmul(q:t())
  local wr, vr = L.eigh(rep)
  T.ok(maxdiff(wr, torch.tensor({ 2, 2, 5 }, { dtype = f64 })) < 1e-12)
  T.ok(maxdiff((vr * wr:unsqueeze(-2)):matmul(vr:t()), rep) < 1e-12)
  local w1, v1 = L.eigh(torch.tensor({ { 3 } }, { dtype = f64 }))
  T.eq(w1:item(), 3); T.eq(math.abs(v1:item()), 1)
  local we, ve = L.eigh(torch.zeros(0, 3, 3))
  T.eq(we.shape, { 0, 3 }); T.eq(ve.shape, { 0, 3, 3 })
  local a32 = sym(torch.randn(6, 6))
  local w32, v32 = L.eigh(a32)
  T.eq(w32.dtype, f32)
  T.ok(maxdiff((v32 * w32:unsqueeze(-2)):matmul(v32:t()), a32) < 1e-4)
  -- non-contiguous input
  local big = sym(rnd(6, 6))
  local nc = big:narrow(1, 1, 3):narrow(2, 1, 3)
  T.ok(maxdiff(L.eigvalsh(nc), L.eigvalsh(nc:contiguous())) == 0)
end)

T.test("symeig (PyTorch 1.13's, deprecated): upper by default, vectors on request", function()
  local b = rnd(4, 4)
  local w, v = torch.symeig(b)
  T.eq(v:numel(), 0)
  T.ok(maxdiff(w, L.eigvalsh(b, "U")) == 0)
  local w2, v2 = b:symeig(true, false)
  local wl, vl = L.eigh(b)
  T.ok(maxdiff(w2, wl) == 0); T.ok(maxdiff(v2, vl) == 0)
end)

T.test("linalg.svd: full and reduced, tall and wide, rank-deficient, batches, float32", function()
  for _, shape in ipairs({ { 5, 3 }, { 3, 5 }, { 4, 4 }, { 2, 2, 6, 3 }, { 1, 1 } }) do
    local a = rnd(table.unpack(shape))
    local m, n = shape[#shape - 1], shape[#shape]
    local k = math.min(m, n)
    local u, s, vh = L.svd(a)
    T.eq(u:size(-1), m); T.eq(vh:size(-2), n); T.eq(s:size(-1), k)
    T.ok(orthonormal(u, 1e-12)); T.ok(orthonormal(mT(vh), 1e-12))
    local ur, sr, vhr = L.svd(a, false)
    T.eq(ur:size(-1), k); T.eq(vhr:size(-2), k)
    T.ok(maxdiff((ur * sr:unsqueeze(-2)):matmul(vhr), a) < 1e-12)
    T.ok(maxdiff(sr, s) < 1e-13)
    T.ok(maxdiff(s, s:sort(-1, true)) == 0)   -- descending
    T.ok(maxdiff(L.svdvals(a), s) < 1e-13)
  end
  -- rank 2 of 4
  local x = rnd(4, 2):matmul(rnd(2, 4))
  local s = L.svdvals(x)
  T.ok(s[3] < 1e-13 and s[4] < 1e-13 and s[2] > 1e-3)
  local a32 = torch.randn(5, 4)
  local u, s32, vh = L.svd(a32, false)
  T.eq(s32.dtype, f32)
  T.ok(maxdiff((u * s32:unsqueeze(-2)):matmul(vh), a32) < 1e-5)
  local ue, se, vhe = L.svd(torch.zeros(0, 4, 3), false)
  T.eq(ue.shape, { 0, 4, 3 }); T.eq(se.shape, { 0, 3 }); T.eq(vhe.shape, { 0, 3, 3 })
end)

T.test("torch.svd (old): U, S, V; some; compute_uv = false; the method", function()
  local a = rnd(5, 3)
  local u, s, v = torch.svd(a)
  T.eq(u.shape, { 5, 3 }); T.eq(v.shape, { 3, 3 })
  T.ok(maxdiff((u * s:unsqueeze(-2)):matmul(v:t()), a) < 1e-12)
  local uf, sf, vf = a:svd(false)
  T.eq(uf.shape, { 5, 5 }); T.eq(vf.shape, { 3, 3 })
  local u0, s0, v0 = torch.svd(a, true, false)
  T.eq(u0.shape, { 5, 5 }); T.eq(v0.shape, { 3, 3 })
  T.eq(u0:abs():sum():item(), 0); T.eq(v0:abs():sum():item(), 0)
  T.ok(maxdiff(s0, s) < 1e-13)
end)

T.test("pinv, pinverse, matrix_rank: full rank, rank-deficient, hermitian, tolerances", function()
  local a = rnd(5, 3)
  local p = L.pinv(a)
  T.eq(p.shape, { 3, 5 })
  T.ok(maxdiff(p:matmul(a), eye_like(3)) < 1e-12)
  T.ok(maxdiff(torch.pinverse(a), p) < 1e-13)
  T.ok(maxdiff(a:pinverse(), p) < 1e-13)
  -- rank-deficient: the Penrose conditions
  local x = rnd(4, 2):matmul(rnd(2, 5))
  local px = L.pinv(x)
  T.ok(maxdiff(x:matmul(px):matmul(x), x) < 1e-10)
  T.ok(maxdiff(px:matmul(x):matmul(px), px) < 1e-10)
  T.eq(L.matrix_rank(x):item(), 2)
  T.eq(L.matrix_rank(a):item(), 3)
  local h = sym(rnd(4, 4))
  T.ok(maxdiff(L.pinv(h, { hermitian = true }), L.pinv(h)) < 1e-10)
  T.eq(L.matrix_rank(h, { hermitian = true }):item(), 4)
  -- tolerances: a singular value of 1e-3 counts or not
  local d = torch.diag(torch.tensor({ 1, 1e-3, 1e-9 }, { dtype = f64 }))
  T.eq(L.matrix_rank(d):item(), 3)
  T.eq(L.matrix_rank(d, { atol = 1e-6 }):item(), 2)
  T.eq(L.matrix_rank(d, { rtol = 1e-2 }):item(), 1)
  T.eq(L.matrix_rank(d, 1e-6):item(), 2)                   -- tol, PyTorch 1.13
  T.ok(maxdiff(L.pinv(d, { rtol = 1e-6 }), torch.diag(torch.tensor({ 1, 1e3, 0 }, { dtype = f64 }))) < 1e-9)
  T.ok(maxdiff(L.pinv(d, 1e-6), L.pinv(d, { rtol = 1e-6 })) == 0)   -- rcond, PyTorch 1.13
  T.eq(L.matrix_rank(rnd(3, 4, 2)).shape, { 3 })
  T.eq(L.pinv(torch.zeros(2, 0, 3)).shape, { 2, 3, 0 })
  T.eq(L.matrix_rank(torch.zeros(2, 0, 3)).dtype, torch.int64)
end)

T.test("norms: matrix_norm ords, vector_norm ords, norm's dispatch, dims, keepdim, dtype", function()
  local a = rnd(2, 3, 4)
  local s = L.svdvals(a)
  T.ok(maxdiff(L.matrix_norm(a), (a * a):sum({ 2, 3 }):sqrt()) < 1e-13)
  T.ok(maxdiff(L.matrix_norm(a, "nuc"), s:sum(-1)) < 1e-13)
  T.ok(maxdiff(L.matrix_norm(a, 2), s:amax(-1)) < 1e-13)
  T.ok(maxdiff(L.matrix_norm(a, -2), s:amin(-1)) < 1e-13)
  T.ok(maxdiff(L.matrix_norm(a, 1), a:abs():sum(2):amax(-1)) < 1e-13)
  T.ok(maxdiff(L.matrix_norm(a, -1), a:abs():sum(2):amin(-1)) < 1e-13)
  T.ok(maxdiff(L.matrix_norm(a, math.huge), a:abs():sum(3):amax(-1)) < 1e-13)
  T.ok(maxdiff(L.matrix_norm(a, -math.huge), a:abs():sum(3):amin(-1)) < 1e-13)
  T.eq(L.matrix_norm(a, "fro", { dim = { 1, 3 }, keepdim = true }).shape, { 1, 3, 1 })
  T.eq(L.matrix_norm(a, 2, { dim = { 3, 1 }, keepdim = true }).shape, { 1, 3, 1 })
  T.ok(maxdiff(L.matrix_norm(a, "nuc", { dim = { 1, 3 } }), L.svdvals(a:permute(2, 1, 3)):sum(-1)) < 1e-13)
  local v = rnd(3, 4)
  T.ok(maxdiff(L.vector_norm(v), (v * v):sum():sqrt()) < 1e-13)
  T.ok(maxdiff(L.vector_norm(v, 1, 2), v:abs():sum(2)) < 1e-13)
  T.ok(maxdiff(L.vector_norm(v, 0), torch.tensor(12.0, { dtype = f64 })) == 0)
  T.ok(maxdiff(L.vector_norm(v, math.huge), v:abs():max()) == 0)
  T.ok(maxdiff(L.vector_norm(v, -math.huge), v:abs():min()) == 0)
  T.ok(maxdiff(L.vector_norm(v, 3, { 1, 2 }), (v:abs() ^ 3):sum() ^ (1 / 3)) < 1e-13)
  T.eq(L.vector_norm(torch.randn(3), 2, { dtype = f64 }).dtype, f64)
  T.eq(L.vector_norm(v, 2, 1, true).shape, { 1, 4 })
  -- linalg.norm: no ord and no dim: the 2-norm of everything; ord on a 2-D input: matrix
  T.ok(maxdiff(L.norm(a), (a * a):sum():sqrt()) < 1e-13)
  T.ok(maxdiff(L.norm(v, 2), L.matrix_norm(v, 2)) == 0)
  T.ok(maxdiff(L.norm(v, "nuc"), L.matrix_norm(v, "nuc")) == 0)
  T.ok(maxdiff(L.norm(v:view(-1), 1), v:abs():sum()) < 1e-13)
  T.ok(maxdiff(L.norm(a, 1, 3), a:abs():sum(3)) < 1e-13)
  T.ok(maxdiff(L.norm(a, 1, { 2, 3 }), L.matrix_norm(a, 1)) == 0)
  T.ok(maxdiff(L.norm(a, nil, { 2, 3 }), L.matrix_norm(a)) == 0)
end)

T.test("cond: p = nil, 2, -2 by singular values; 1, inf, fro, nuc by the inverse; singular gives inf", function()
  local a = rnd(2, 4, 4)
  local s = L.svdvals(a)
  T.ok(maxdiff(L.cond(a), s:amax(-1) / s:amin(-1)) < 1e-10)
  T.ok(maxdiff(L.cond(a, -2), s:amin(-1) / s:amax(-1)) < 1e-13)
  local t = rnd(5, 3)
  T.eq(L.cond(t).shape, {})
  local sing = torch.tensor({ { 1, 2 }, { 2, 4 } }, { dtype = f64 })
  -- the inverse goes through the SVD until linalg.inv lands: inf where a singular value is
  -- exactly 0, else huge (PyTorch's LU gives inf when a pivot is exactly 0)
  T.ok(L.cond(sing, 1):item() > 1e15)
  T.eq(L.cond(torch.zeros(2, 2, { dtype = f64 }), 1):item(), math.huge)
  T.ok(L.cond(sing):item() > 1e15)
  -- ill-conditioned: a Hilbert matrix
  local hil = torch.zeros(6, 6, { dtype = f64 })
  for i = 1, 6 do for j = 1, 6 do hil[i][j] = 1 / (i + j - 1) end end
  T.ok(math.abs(L.cond(hil):item() / 1.495105864e7 - 1) < 1e-5)
end)

T.test("values against PyTorch 1.13", function()
  if not P.available() then T.skip(P.why()) return end
  local hil = torch.zeros(5, 5, { dtype = f64 })
  for i = 1, 5 do for j = 1, 5 do hil[i][j] = 1 / (i + j - 1) end end
  local inputs = { a = rnd(2, 5, 3), s = sym(rnd(4, 4)), w = rnd(3, 6), r = rnd(4, 2):matmul(rnd(2, 5)), h = hil,
                   c = rnd(5, 4) }
  local body = [[
g, tau = torch.geqrf(a)
q, rr = torch.linalg.qr(a)
]]
  local outs = { "torch.linalg.eigvalsh(s)", "torch.linalg.eigvalsh(s, 'U')", "torch.linalg.svdvals(a)",
                 "torch.linalg.svdvals(w)", "torch.linalg.pinv(r)", "torch.linalg.pinv(s, hermitian=True)",
                 "torch.linalg.matrix_rank(r)", "torch.linalg.matrix_rank(h)", "torch.linalg.matrix_rank(h, tol=1e-4)",
                 "torch.linalg.matrix_norm(a, 'nuc')", "torch.linalg.matrix_norm(w, -2)",
                 "torch.linalg.matrix_norm(w, float('inf'))", "torch.linalg.vector_norm(w, 0.5)",
                 "torch.linalg.vector_norm(w, -1, dim=1)", "torch.linalg.norm(w)", "torch.linalg.norm(w, 'fro')",
                 "torch.linalg.cond(h)", "torch.linalg.cond(s, 1)", "torch.linalg.cond(s, 'nuc')",
                 "torch.linalg.cond(s, -float('inf'))", "g", "tau", "rr.abs()", "q.abs()",
                 "torch.ormqr(g[0], tau[0], c, True, True)", "torch.linalg.pinv(h, rtol=1e-3)" }
  local ref = P.run(inputs, body, outs)
  local a, s, w, r, h, c = inputs.a, inputs.s, inputs.w, inputs.r, inputs.h, inputs.c
  local g, tau = torch.geqrf(a)
  local q, rr = L.qr(a)
  local mine = { L.eigvalsh(s), L.eigvalsh(s, "U"), L.svdvals(a), L.svdvals(w), L.pinv(r), L.pinv(s, { hermitian = true }),
                 L.matrix_rank(r), L.matrix_rank(h), L.matrix_rank(h, 1e-4),
                 L.matrix_norm(a, "nuc"), L.matrix_norm(w, -2), L.matrix_norm(w, math.huge), L.vector_norm(w, 0.5),
                 L.vector_norm(w, -1, 2), L.norm(w), L.norm(w, "fro"), L.cond(h), L.cond(s, 1), L.cond(s, "nuc"),
                 L.cond(s, -math.huge), g, tau, rr:abs(), q:abs(), torch.ormqr(g[1], tau[1], c, true, true),
                 L.pinv(h, { rtol = 1e-3 }) }
  for i, m in ipairs(mine) do
    local e = ref[i]
    local tol = 1e-9 * math.max(1, e:abs():max():item())
    T.ok(maxdiff(m, e) <= tol, outs[i] .. (": off by %g"):format(maxdiff(m, e)))
  end
end)

T.test("errors name the op and the argument", function()
  T.raises(function() L.eigh(rnd(2, 3)) end, "linalg.eigh: argument 'A' must be a batch of square matrices")
  T.raises(function() L.eigh(torch.ones(2, 2, { dtype = torch.int64 })) end, "linalg.eigh: argument 'A' must be float32, float64, complex64 or complex128")
  T.raises(function() L.eigvalsh(rnd(3)) end, "linalg.eigvalsh: argument 'A' must have at least 2 dims")
  T.raises(function() L.eigh(rnd(3, 3), "X") end, "argument 'UPLO'")
  T.raises(function() L.qr(rnd(3, 3), "full") end, "linalg.qr: argument 'mode'")
  T.raises(function() L.qr(torch.ones(2, 2, { dtype = torch.int32 })) end, "linalg.qr: argument 'A' must be float32, float64, complex64 or complex128")
  T.raises(function() L.svd(torch.ones(3, 2, { dtype = torch.int64 })) end, "linalg.svd: argument 'A'")
  T.raises(function() L.svdvals(rnd(3)) end, "linalg.svdvals: argument 'A'")
  T.raises(function() L.svd(torch.tensor({ { 0 / 0, 1 }, { 1, 1 } }, { dtype = f64 })) end, "holds NaN or inf in batch element 1")
  local b = rnd(3, 2, 2); b[3][1][2] = math.huge
  T.raises(function() L.eigvalsh(b) end, "linalg.eigvalsh: argument 'A' holds NaN or inf in batch element 3")
  T.raises(function() L.pinv(rnd(3, 2), { hermitian = true }) end, "linalg.pinv: argument 'A' must be a batch of square matrices")
  T.raises(function() L.pinv(rnd(3, 3), 1e-3, { rtol = 1e-3 }) end, "linalg.pinv: give rtol or rcond")
  T.raises(function() L.matrix_rank(rnd(3, 3), 1e-3, { atol = 1 }) end, "linalg.matrix_rank: give tol")
  T.raises(function() L.matrix_rank(torch.ones(2, 2, { dtype = torch.int64 })) end, "linalg.matrix_rank: argument 'A'")
  T.raises(function() L.matrix_norm(rnd(3, 3), 3) end, "linalg.matrix_norm: argument 'ord'")
  T.raises(function() L.matrix_norm(rnd(3, 3), "max") end, "linalg.matrix_norm: argument 'ord'")
  T.raises(function() L.matrix_norm(rnd(3)) end, "linalg.matrix_norm: argument 'A'")
  T.raises(function() L.matrix_norm(rnd(3, 3), "fro", { dim = { 1, 1 } }) end, "linalg.matrix_norm: argument 'dim' must name 2 different dims")
  T.raises(function() L.matrix_norm(rnd(3, 3), "fro", { dim = { 1 } }) end, "linalg.matrix_norm: argument 'dim' must name 2 dims")
  T.raises(function() L.matrix_norm(rnd(3, 3), "fro", { dtype = torch.int64 }) end, "linalg.matrix_norm: argument 'dtype'")
  T.raises(function() L.vector_norm(torch.ones(3, { dtype = torch.int64 })) end, "linalg.vector_norm: argument 'x'")
  T.raises(function() L.vector_norm(rnd(3), 2, { dtype = torch.int64 }) end, "linalg.vector_norm: argument 'dtype'")
  T.raises(function() L.norm(rnd(2, 2, 2), 2) end, "linalg.norm: argument 'A' must be 1-D or 2-D")
  T.raises(function() L.norm(rnd(2, 2, 2), "fro") end, "linalg.norm: ord \"fro\" without dim")
  T.raises(function() L.norm(rnd(2, 2, 2), "nuc", 1) end, "argument 'dim' must name 2 dims")
  T.raises(function() L.cond(rnd(3, 2), 1) end, "linalg.cond: argument 'A' must be a batch of square matrices")
  T.raises(function() L.cond(rnd(3, 3), 3) end, "linalg.cond: argument 'p'")
  T.raises(function() L.cond(rnd(3, 3), "max") end, "linalg.cond: argument 'p'")
  local g, tau = torch.geqrf(rnd(4, 3))
  T.raises(function() L.householder_product(rnd(2, 3), torch.ones(2, { dtype = f64 })) end, "at least as many rows as columns")
  T.raises(function() L.householder_product(g, torch.ones(4, { dtype = f64 })) end, "argument 'tau' has 4 scales")
  T.raises(function() L.householder_product(g, torch.ones(3)) end, "argument 'tau' must have the dtype")
  T.raises(function() L.householder_product(g, torch.ones(2, 3, { dtype = f64 })) end, "does not match the batch dims")
  T.raises(function() torch.ormqr(g, tau, rnd(3, 3)) end, "ormqr: argument 'self' has 4 rows but input3 has 3 rows")
  T.raises(function() torch.ormqr(g, tau, torch.ones(4, 3)) end, "ormqr: argument 'input3' must have the dtype")
  T.raises(function() torch.geqrf(rnd(3)) end, "geqrf: argument 'self' must have at least 2 dims")
  T.raises(function() torch._linalg_spectral_trsolve(torch.zeros(2, 2, { dtype = f64 }), rnd(2, 1), true) end, "singular")
end)

T.done()
