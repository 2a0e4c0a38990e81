-- The spectral linear algebra on the complex dtypes, and linalg.eig / eigvals (complex results
-- for real inputs too): eig, eigvals, qr, geqrf, householder_product, ormqr, eigh, eigvalsh,
-- svd, svdvals, pinv, matrix_rank, the norms and cond. Decompositions are checked by
-- reconstruction and invariants (A V = V diag(w), unitary Q and vectors, S sorted, real
-- eigenvalues and singular values), values against PyTorch 1.13 through pyref (complex
-- tensors travel as view_as_real); repeated eigenvalues, 1x1, empty batches, non-contiguous;
-- the errors, the phase (gauge) errors of the derivatives, and float64 gradchecks through
-- phase-invariant functions.
local T = require "testing"
local P = require "pyref"

local f64, f32, c64, c128 = torch.float64, torch.float32, torch.complex64, torch.complex128
local L = torch.linalg
local gradcheck = torch.autograd.gradcheck

local function rnd(...) return torch.randn(table.pack(...), { dtype = f64 }) end
local function crnd(...)
  local s = table.pack(...)
  return torch.complex(torch.randn(s, { dtype = f64 }), torch.randn(s, { dtype = f64 }))
end
local function mH(x) return x:transpose(-2, -1):conj() end
local function maxdiff(a, b)
  if a:is_complex() or b:is_complex() then return (a:to(c128) - b:to(c128)):abs():max():item() end
  return (a:to(f64) - b:to(f64)):abs():max():item()
end
-- Q^H Q = I over the batch
local function unitary_cols(q, tol)
  local g = mH(q):matmul(q)
  return maxdiff(g, torch.eye(q:size(-1), { dtype = c128 }):expand(g.shape)) < tol
end
-- the largest |A v_j - w_j v_j|
local function eig_residual(a, w, v)
  local ac = a:to(v.dtype)
  return (ac:matmul(v) - v * w:unsqueeze(-2)):abs():max():item()
end
-- a complex tensor sent to pyref and back: real pairs
local function pr(x) return torch.view_as_real(x:contiguous()) end
local function ok_grad(f, inputs) T.ok(gradcheck(f, inputs)) end

T.test("linalg.eig of real matrices: complex results, A V = V diag(w), unit vectors, batched", function()
  local a = rnd(2, 3, 5, 5)
  local w, v = L.eig(a)
  T.eq(w.dtype, c128); T.eq(v.dtype, c128)
  T.eq(w.shape, { 2, 3, 5 }); T.eq(v.shape, { 2, 3, 5, 5 })
  T.ok(eig_residual(a, w, v) < 1e-12)
  T.ok(maxdiff(L.vector_norm(v, 2, { dim = -2 }), torch.ones(2, 3, 5, { dtype = f64 })) < 1e-12)
  T.ok(maxdiff(L.eigvals(a), w) == 0)
  -- a rotation: +-i, a conjugate pair
  local r = torch.tensor({ { 0, -1 }, { 1, 0 } }, { dtype = f64 })
  local wr = L.eigvals(r)
  T.ok(maxdiff(wr:imag():abs(), torch.ones(2, { dtype = f64 })) < 1e-14)
  T.ok(maxdiff(wr:real(), torch.zeros(2, { dtype = f64 })) < 1e-14)
  T.ok(math.abs(wr:imag():sum():item()) < 1e-14)
  -- float32 gives complex64
  local a32 = torch.randn(4, 4)
  local w32, v32 = L.eig(a32)
  T.eq(w32.dtype, c64); T.eq(v32.dtype, c64)
  T.ok(eig_residual(a32, w32, v32) < 1e-4)
  -- the method form is not there (linalg names are functions), torch.linalg.eig is
  T.eq(type(L.eig), "function")
end)

T.test("linalg.eig of complex matrices; repeated eigenvalues, 1x1, empty batch, non-contiguous", function()
  local a = crnd(3, 4, 4)
  local w, v = L.eig(a)
  T.eq(w.dtype, c128)
  T.ok(eig_residual(a, w, v) < 1e-12)
  T.ok(maxdiff(L.vector_norm(v, 2, { dim = -2 }), torch.ones(3, 4, { dtype = f64 })) < 1e-12)
  local w2, v2 = L.eig(a:to(c64))
  T.eq(w2.dtype, c64)
  T.ok(eig_residual(a:to(c64), w2, v2) < 1e-4)
  -- 2 I + a nilpotent part: one eigenvalue twice
  local rep = torch.eye(3, { dtype = c128 }) * 2
  local wr, vr = L.eig(rep)
  T.ok(maxdiff(wr, torch.full({ 3 }, 2, { dtype = c128 })) < 1e-14)
  T.ok(eig_residual(rep, wr, vr) < 1e-14)
  local one = crnd(1, 1)
  local w1, v1 = L.eig(one)
  T.ok(maxdiff(w1, one:view(1)) < 1e-15)
  T.ok(maxdiff(v1:abs(), torch.ones(1, 1, { dtype = f64 })) < 1e-15)
  local we, ve = L.eig(torch.zeros(0, 3, 3, { dtype = c128 }))
  T.eq(we.shape, { 0, 3 }); T.eq(ve.shape, { 0, 3, 3 })
  local w0, v0 = L.eig(torch.zeros(2, 0, 0))
  T.eq(w0.shape, { 2, 0 }); T.eq(w0.dtype, c64)
  local nc = crnd(4, 4):transpose(1, 2)
  T.ok(not nc:is_contiguous())
  T.ok(maxdiff(L.eigvals(nc), L.eigvals(nc:contiguous())) == 0)
end)

T.test("linalg.eig against PyTorch 1.13 (eigenvalues in LAPACK's order; vectors up to a phase)", function()
  if not P.available() then T.skip(P.why()) return end
  local a, c = rnd(5, 5), crnd(4, 4)
  local r = P.run({ a = a, c = pr(c) }, [[
c = torch.view_as_complex(c)
wa, va = torch.linalg.eig(a)
wc, vc = torch.linalg.eig(c)
]], { "torch.view_as_real(wa)", "va.abs()", "torch.view_as_real(wc)", "vc.abs()" })
  local wa, va = L.eig(a)
  local wc, vc = L.eig(c)
  T.ok(maxdiff(pr(wa), r[1]) < 1e-10)
  T.ok(maxdiff(va:abs(), r[2]) < 1e-10)
  T.ok(maxdiff(pr(wc), r[3]) < 1e-10)
  T.ok(maxdiff(vc:abs(), r[4]) < 1e-10)
end)

T.test("linalg.eig: errors name the op, the argument and the batch element", function()
  T.raises(function() L.eig(rnd(2, 3)) end, "linalg.eig: argument 'A' must be a batch of square matrices")
  T.raises(function() L.eigvals(rnd(3)) end, "linalg.eigvals: argument 'A' must have at least 2 dims")
  T.raises(function() L.eig(torch.ones(2, 2, { dtype = torch.int64 })) end, "linalg.eig: argument 'A' must be float32, float64, complex64 or complex128")
  local b = rnd(3, 2, 2); b[2][1][1] = 0 / 0
  T.raises(function() L.eigvals(b) end, "linalg.eigvals: argument 'A' holds NaN or inf in batch element 2")
end)

T.test("linalg.eig derivatives: eigenvalues, phase-invariant vectors; the phase error", function()
  ok_grad(function(x) return L.eigvals(x) end, { rnd(3, 3):requires_grad_() })
  ok_grad(function(x) return L.eigvals(x) end, { crnd(3, 3):requires_grad_() })
  ok_grad(function(x) local _, v = L.eig(x); return v:abs() end, { rnd(2, 3, 3):requires_grad_() })
  ok_grad(function(x) local w, v = L.eig(x); return w, v:abs() end, { crnd(3, 3):requires_grad_() })
  -- double backward for real inputs (complex ones: the gradgradcheck test below)
  T.ok(torch.autograd.gradgradcheck(function(x) local w, v = L.eig(x); return w:real(), (v * v:conj()):real() end,
    { rnd(3, 3):requires_grad_() }))
  local x = crnd(3, 3):requires_grad_()
  T.raises(function() local _, vv = L.eig(x); vv:real():sum():backward() end,
    "linalg.eig: the loss depends on the phase of the eigenvectors")
  T.raises(function() local ww = torch._linalg_eig(x, false); ww:abs():sum():backward() end,
    "linalg.eig: the derivative needs the eigenvectors")
end)

T.test("complex qr, geqrf, householder_product, ormqr: unitary Q, triangular R, Q^H for transpose", function()
  for _, shape in ipairs({ { 5, 3 }, { 3, 5 }, { 2, 4, 4 } }) do
    local a = crnd(table.unpack(shape))
    local m, n = shape[#shape - 1], shape[#shape]
    local q, r = L.qr(a)
    T.eq(q.dtype, c128)
    T.ok(maxdiff(q:matmul(r), a) < 1e-12)
    T.ok(unitary_cols(q, 1e-12))
    T.ok(maxdiff(r, r:triu()) == 0)
    local qc = L.qr(a, "complete")
    T.eq(qc:size(-1), m)
    T.ok(unitary_cols(qc, 1e-12))
    local h, tau = torch.geqrf(a)
    T.eq(tau.dtype, c128)
    if m >= n then
      T.ok(maxdiff(L.householder_product(h, tau), q) < 1e-12)
      -- with a gradient wanted, the product is built with differentiable ops: the same Q
      T.ok(maxdiff(L.householder_product(h:clone():requires_grad_(), tau), q) < 1e-12)
    end
    local c = crnd(table.unpack(shape)):narrow(-1, 1, 2)
    T.ok(maxdiff(torch.ormqr(h, tau, c, true, true), mH(qc):matmul(c)) < 1e-12)
    T.ok(maxdiff(torch.ormqr(h, tau, c:clone():requires_grad_(), true, true), mH(qc):matmul(c)) < 1e-12)
    T.ok(maxdiff(torch.ormqr(h, tau, c, true, false), qc:matmul(c)) < 1e-12)
  end
  local q32, r32 = L.qr(crnd(4, 3):to(c64))
  T.eq(q32.dtype, c64); T.eq(r32.dtype, c64)
  local qo = torch.qr(crnd(4, 3), false)
  T.eq(qo.shape, { 4, 4 })
  local qe, re = L.qr(torch.zeros(0, 3, 2, { dtype = c128 }))
  T.eq(qe.shape, { 0, 3, 2 }); T.eq(re.shape, { 0, 2, 2 })
end)

T.test("complex qr against PyTorch 1.13 (the same LAPACK: the same phases)", function()
  if not P.available() then T.skip(P.why()) return end
  local a = crnd(4, 3)
  local r = P.run({ a = pr(a) }, [[
a = torch.view_as_complex(a)
q, r = torch.linalg.qr(a)
]], { "torch.view_as_real(q)", "torch.view_as_real(r)" })
  local q, rr = L.qr(a)
  T.ok(maxdiff(pr(q), r[1]) < 1e-12)
  T.ok(maxdiff(pr(rr), r[2]) < 1e-12)
end)

T.test("complex eigh, eigvalsh, symeig: real ascending eigenvalues, unitary vectors, UPLO", function()
  local b = crnd(2, 4, 4)
  local h = b + mH(b)
  local l, v = L.eigh(h)
  T.eq(l.dtype, f64); T.eq(v.dtype, c128)
  T.ok(maxdiff(h:matmul(v), v * l:unsqueeze(-2)) < 1e-12)
  T.ok(unitary_cols(v, 1e-12))
  T.ok((l:narrow(-1, 2, 3) - l:narrow(-1, 1, 3)):min():item() >= 0)
  T.ok(maxdiff(L.eigvalsh(h), l) < 1e-12)
  -- "U" reads the upper triangle: the lower one may hold anything
  local up = h:triu()
  T.ok(maxdiff(L.eigvalsh(up, "U"), l) < 1e-12)
  local lo, lv = torch.symeig(h, true)
  T.ok(maxdiff(lo, l) < 1e-12)
  T.eq(L.eigvalsh(h:to(c64)).dtype, f32)
  -- repeated eigenvalues: the identity
  T.ok(maxdiff(L.eigvalsh(torch.eye(3, { dtype = c128 })), torch.ones(3, { dtype = f64 })) < 1e-15)
  local one = torch.complex(torch.tensor({ { 2.5 } }, { dtype = f64 }), torch.zeros(1, 1, { dtype = f64 }))
  local l1, v1 = L.eigh(one)
  T.ok(maxdiff(l1, torch.tensor({ 2.5 }, { dtype = f64 })) == 0)
  T.ok(maxdiff(v1:abs(), torch.ones(1, 1, { dtype = f64 })) == 0)
  local le = L.eigvalsh(torch.zeros(0, 2, 2, { dtype = c64 }))
  T.eq(le.shape, { 0, 2 }); T.eq(le.dtype, f32)
end)

T.test("complex svd, svdvals, torch.svd: real descending S, unitary U and V", function()
  for _, shape in ipairs({ { 5, 3 }, { 3, 5 }, { 2, 4, 4 }, { 1, 1 } }) do
    local a = crnd(table.unpack(shape))
    local u, s, vh = L.svd(a, false)
    T.eq(s.dtype, f64); T.eq(u.dtype, c128)
    T.ok(maxdiff((u * s:unsqueeze(-2)):matmul(vh), a) < 1e-12)
    T.ok(unitary_cols(u, 1e-12)); T.ok(unitary_cols(mH(vh), 1e-12))
    if s:size(-1) > 1 then T.ok((s:narrow(-1, 1, s:size(-1) - 1) - s:narrow(-1, 2, s:size(-1) - 1)):min():item() >= 0) end
    T.ok(maxdiff(L.svdvals(a), s) < 1e-12)
    local uf, _, vhf = L.svd(a)
    T.ok(unitary_cols(uf, 1e-12)); T.ok(unitary_cols(vhf, 1e-12))
  end
  local a = crnd(4, 3)
  local u, s, v = torch.svd(a)
  T.ok(maxdiff((u * s:unsqueeze(-2)):matmul(mH(v)), a) < 1e-12)
  local um, sm = a:svd()
  T.ok(maxdiff(sm, s) < 1e-12)
  T.eq(L.svdvals(a:to(c64)).dtype, f32)
  -- non-contiguous inputs give what their contiguous copies give
  local nc = crnd(3, 4):transpose(1, 2)
  T.ok(not nc:is_contiguous())
  T.ok(maxdiff(L.svdvals(nc), L.svdvals(nc:contiguous())) == 0)
  local qn, rn = L.qr(nc)
  T.ok(maxdiff(qn:matmul(rn), nc) < 1e-12)
  local ue, se, ve = L.svd(torch.zeros(3, 0, { dtype = c128 }))
  T.eq(se.shape, { 0 }); T.ok(maxdiff(ue, torch.eye(3, { dtype = c128 })) == 0)
  T.raises(function() L.svd(torch.complex(torch.tensor({ { 0 / 0 } }, { dtype = f64 }), torch.zeros(1, 1, { dtype = f64 }))) end,
    "linalg.svd: argument 'A' holds NaN or inf in batch element 1")
end)

T.test("complex pinv, matrix_rank, norms and cond: real results, against PyTorch 1.13", function()
  local a, sq = crnd(4, 3), crnd(3, 3)
  local h = sq + mH(sq)
  T.ok(maxdiff(L.pinv(a):matmul(a), torch.eye(3, { dtype = c128 })) < 1e-12)
  T.ok(maxdiff(L.pinv(h, { hermitian = true }), L.pinv(h)) < 1e-10)
  T.eq(L.matrix_rank(a):item(), 3)
  local low = crnd(4, 2):matmul(crnd(2, 3))
  T.eq(L.matrix_rank(low):item(), 2)
  for _, t in ipairs({ L.matrix_norm(a), L.vector_norm(a), L.norm(a), L.cond(sq) }) do T.eq(t.dtype, f64) end
  T.eq(L.vector_norm(a:to(c64)).dtype, f32)
  T.raises(function() L.vector_norm(a, 2, { dtype = f64 }) end, "linalg.vector_norm: argument 'dtype' must be a complex dtype")
  if not P.available() then T.skip(P.why()) return end
  local r = P.run({ a = pr(a), sq = pr(sq), low = pr(low) }, [[
a = torch.view_as_complex(a); sq = torch.view_as_complex(sq); low = torch.view_as_complex(low)
LA = torch.linalg
]], { "torch.view_as_real(LA.pinv(a))", "LA.matrix_norm(a)", "LA.matrix_norm(a, 'nuc')", "LA.matrix_norm(a, 2)",
      "LA.matrix_norm(a, -2)", "LA.matrix_norm(a, 1)", "LA.matrix_norm(a, float('inf'))", "LA.vector_norm(a, 3)",
      "LA.vector_norm(a, float('inf'))", "LA.norm(a)", "LA.cond(sq)", "LA.cond(sq, 1)", "LA.cond(sq, 'fro')",
      "LA.matrix_rank(low)", "LA.vector_norm(a, 0)" })
  local mine = { pr(L.pinv(a)), L.matrix_norm(a), L.matrix_norm(a, "nuc"), L.matrix_norm(a, 2), L.matrix_norm(a, -2),
    L.matrix_norm(a, 1), L.matrix_norm(a, math.huge), L.vector_norm(a, 3), L.vector_norm(a, math.huge), L.norm(a),
    L.cond(sq), L.cond(sq, 1), L.cond(sq, "fro"), L.matrix_rank(low), L.vector_norm(a, 0) }
  for i, m in ipairs(mine) do T.ok(maxdiff(m, r[i]) < 1e-10, "output " .. i) end
end)

T.test("complex derivatives: qr, householder_product, ormqr, eigh, svd, pinv, norms (gradcheck)", function()
  ok_grad(function(x) return L.qr(x) end, { crnd(4, 3):requires_grad_() })
  ok_grad(function(x) local q, r = L.qr(x); return q, r end, { crnd(2, 4):requires_grad_() })
  local h, tau = torch.geqrf(crnd(4, 3))
  ok_grad(function(x, t) return L.householder_product(x, t) end, { h:requires_grad_(), tau:requires_grad_() })
  ok_grad(function(x, t, c) return torch.ormqr(x, t, c, false, true) end,
    { h:detach():requires_grad_(), tau:detach():requires_grad_(), crnd(2, 4):requires_grad_() })
  ok_grad(function(x) local l, v = L.eigh(x + mH(x)); return l, v:abs() end, { crnd(3, 3):requires_grad_() })
  ok_grad(function(x) local u, s, vh = L.svd(x, false); return u:abs(), s, vh:abs() end, { crnd(4, 3):requires_grad_() })
  ok_grad(function(x) local u, s, vh = L.svd(x, false); return (u * s:unsqueeze(-2)):matmul(vh) end, { crnd(3, 4):requires_grad_() })
  ok_grad(function(x) return L.svdvals(x) end, { crnd(2, 3, 3):requires_grad_() })
  ok_grad(function(x) return L.pinv(x) end, { crnd(4, 3):requires_grad_() })
  ok_grad(function(x) return L.matrix_norm(x, "nuc"), L.matrix_norm(x), L.vector_norm(x, 3) end, { crnd(3, 3):requires_grad_() })
  -- a loss that depends on the phases of the vectors has no gradient
  local x = crnd(3, 3):requires_grad_()
  T.raises(function() local u = L.svd(x); u:real():sum():backward() end, "linalg.svd: the loss depends on the phase of the singular vectors")
  T.raises(function() local _, v = L.eigh(x + mH(x)); v:real():sum():backward() end, "linalg.eigh: the loss depends on the phase of the eigenvectors")
end)

T.test("complex gradgradcheck: eigvals, eigvalsh, eigh, svdvals, svd, qr, pinv, eig, the norms", function()
  local gg = torch.autograd.gradgradcheck
  local herm = function(x) return x + mH(x) end
  T.ok(gg(function(x) return L.eigvals(x) end, { crnd(3, 3):requires_grad_() }), "eigvals")
  T.ok(gg(function(x) return L.eigvalsh(herm(x)) end, { crnd(3, 3):requires_grad_() }), "eigvalsh")
  T.ok(gg(function(x) local w, v = L.eigh(herm(x)); return w, v:abs() end, { crnd(3, 3):requires_grad_() }), "eigh")
  T.ok(gg(function(x) return L.svdvals(x) end, { crnd(4, 3):requires_grad_() }), "svdvals")
  -- U's and Vh's phases cancel in u_k vh_k (gauge-invariant)
  T.ok(gg(function(x) local u, s, vh = L.svd(x, { full_matrices = false })
    return s, u:narrow(-1, 1, 1) * vh:narrow(-2, 1, 1) end, { crnd(4, 3):requires_grad_() }), "svd")
  T.ok(gg(function(x) return L.qr(x) end, { crnd(4, 3):requires_grad_() }), "qr")
  T.ok(gg(function(x) return L.pinv(x) end, { crnd(3, 2):requires_grad_() }), "pinv")
  T.ok(gg(function(x) local w, v = L.eig(x); return w, v:abs() end, { crnd(3, 3):requires_grad_() }), "eig")
  T.ok(gg(function(x) return L.matrix_norm(x) end, { crnd(3, 2):requires_grad_() }), "matrix_norm")
  T.ok(gg(function(x) return L.vector_norm(x, 3) end, { crnd(4):requires_grad_() }), "vector_norm")
end)

T.done()
