-- Derivatives of the spectral linear algebra (src/ops/linalg_spectral.lua,
-- src/autograd/formulas_linalg_spectral.c): float64 gradcheck and gradgradcheck of
-- qr, eigh, eigvalsh, svd, svdvals, pinv, the norms and cond. Eigen- and singular
-- vectors are unique only up to sign, so the checked functions use sign-invariant
-- outputs (products of a vector with itself or with its partner), and inputs have
-- distinct eigenvalues / singular values: gradients are undefined where they repeat.
local T = require "testing"

local f64 = torch.float64
local gc, ggc = torch.autograd.gradcheck, torch.autograd.gradgradcheck

local function leaf(...)
  return torch.randn(table.pack(...), { dtype = f64, requires_grad = true })
end
local function tleaf(r, c)
  local m = torch.randn(c, r, { dtype = f64 }):t()
  m.requires_grad = true
  return m
end
local function sym(a) return a + a:transpose(-2, -1) end
local function both(f, inputs)
  T.ok(gc(f, inputs))
  T.ok(ggc(f, inputs))
end

T.test("linalg.qr reduced, tall and square, batched", function()
  local f = function(a) local q, r = torch.linalg.qr(a); return q, r end
  both(f, { leaf(5, 3) })
  both(f, { leaf(2, 4, 4) })
  T.ok(gc(f, { tleaf(4, 3) }))
  -- only Q or only R used
  T.ok(gc(function(a) local q = torch.linalg.qr(a); return q end, { leaf(4, 2) }))
  T.ok(gc(function(a) local _, r = torch.linalg.qr(a); return r end, { leaf(4, 2) }))
  T.ok(gc(function(a) local q, r = torch.qr(a); return q:matmul(r) end, { leaf(3, 3) }))
end)

T.test("linalg.qr wide (m < n), reduced and complete", function()
  local f = function(mode) return function(a) local q, r = torch.linalg.qr(a, mode); return q, r end end
  both(f("reduced"), { leaf(2, 4) })
  both(f("complete"), { leaf(2, 3, 5) })
  T.ok(gc(function(a) local _, r = torch.linalg.qr(a); return r end, { leaf(3, 4) }))
  T.ok(gc(function(a) local q = torch.linalg.qr(a); return q end, { leaf(3, 4) }))
end)

T.test("linalg.qr: the derivative's limits are errors", function()
  local q, r = torch.linalg.qr(leaf(4, 2), "complete")
  T.raises(function() (q:sum() + r:sum()):backward() end, "mode \"complete\" is not defined for inputs with more rows")
  local _, r2 = torch.linalg.qr(leaf(4, 2), "r")
  T.raises(function() r2:sum():backward() end, "mode \"r\"")
end)

T.test("householder_product (orgqr) and ormqr", function()
  both(function(a, t) return torch.linalg.householder_product(a, t) end, { leaf(4, 3), leaf(3) })
  T.ok(gc(function(a, t) return torch.orgqr(a, t) end, { leaf(2, 5, 3), leaf(2, 2) }))
  local c = leaf(4, 2)
  both(function(a, t, x) return torch.ormqr(a, t, x) end, { leaf(4, 3), leaf(3), c })
  T.ok(gc(function(a, t, x) return torch.ormqr(a, t, x, false, true) end, { leaf(3, 2), leaf(2), leaf(2, 3) }))
  -- the differentiable product equals the kernel's
  local a, t = torch.geqrf(torch.randn(5, 3, { dtype = f64 }))
  local q0 = torch.linalg.householder_product(a, t)
  a.requires_grad = true
  T.ok((torch.linalg.householder_product(a, t) - q0):abs():max():item() < 1e-13)
  T.ok((torch.ormqr(a, t, torch.eye(5, { dtype = f64 })):narrow(2, 1, 3) - q0):abs():max():item() < 1e-13)
end)

T.test("linalg.eigh values and vectors (symmetrised input)", function()
  local f = function(a)
    local l, v = torch.linalg.eigh(sym(a))
    return l, v * v
  end
  both(f, { leaf(4, 4) })
  both(f, { leaf(2, 3, 3) })
  T.ok(gc(function(a) local l, v = torch.linalg.eigh(sym(a), "U"); return v:abs() end, { tleaf(3, 3) }))
  both(function(a) return torch.linalg.eigvalsh(sym(a)) end, { leaf(3, 3) })
  T.ok(gc(function(a) return (torch.symeig(sym(a), true)) end, { leaf(3, 3) }))
end)

T.test("linalg.svd: U, S, Vh, reduced and full, wide and tall", function()
  local f = function(full)
    return function(a)
      local u, s, vh = torch.linalg.svd(a, full)
      local k = s:size(-1)
      -- u_i v_i^T is sign-invariant
      local un, vn = u:narrow(-1, 1, k), vh:narrow(-2, 1, k)
      return s, un:matmul(vn), un * un
    end
  end
  both(f(false), { leaf(5, 3) })
  both(f(false), { leaf(3, 5) })
  both(f(false), { leaf(2, 3, 3) })
  T.ok(gc(f(true), { leaf(4, 3) }))
  T.ok(gc(f(false), { tleaf(4, 3) }))
  both(function(a) return torch.linalg.svdvals(a) end, { leaf(4, 3) })
  T.ok(gc(function(a) local u, s, v = torch.svd(a); return s, u:matmul(v:t()) end, { leaf(4, 3) }))
end)

T.test("pinv, pinverse, hermitian pinv", function()
  both(function(a) return torch.linalg.pinv(a) end, { leaf(4, 3) })
  T.ok(gc(function(a) return torch.linalg.pinv(a) end, { leaf(2, 3, 5) }))
  T.ok(gc(function(a) return torch.pinverse(a) end, { leaf(3, 3) }))
  T.ok(gc(function(a) return torch.linalg.pinv(sym(a), { hermitian = true }) end, { leaf(3, 3) }))
end)

T.test("matrix_norm, vector_norm, norm, cond", function()
  for _, ord in ipairs({ "fro", "nuc", 2, -2, 1, -1, math.huge, -math.huge }) do
    T.ok(gc(function(a) return torch.linalg.matrix_norm(a, ord) end, { leaf(2, 4, 3) }), tostring(ord))
  end
  both(function(a) return torch.linalg.matrix_norm(a, "nuc") end, { leaf(3, 3) })
  T.ok(gc(function(a) return torch.linalg.matrix_norm(a, 1, { dim = { 1, 3 }, keepdim = true }) end, { leaf(3, 2, 4) }))
  for _, ord in ipairs({ 2, 1, 3, 0.5, math.huge, -math.huge }) do
    T.ok(gc(function(a) return torch.linalg.vector_norm(a, ord, 2) end, { leaf(3, 4) }), tostring(ord))
  end
  both(function(a) return torch.linalg.vector_norm(a) end, { leaf(3, 4) })
  T.ok(gc(function(a) return torch.linalg.norm(a) end, { leaf(3, 4) }))
  T.ok(gc(function(a) return torch.linalg.norm(a, "nuc") end, { leaf(3, 4) }))
  both(function(a) return torch.linalg.cond(a) end, { leaf(4, 3) })
  T.ok(gc(function(a) return torch.linalg.cond(a, 1) end, { leaf(3, 3) }))
  T.ok(gc(function(a) return torch.linalg.cond(a, "fro") end, { leaf(3, 3) }))
end)

T.test("the kernels without vectors refuse a gradient rather than give a wrong one", function()
  local a = leaf(3, 3)
  local l = torch._linalg_eigh(a, "L", false)
  T.raises(function() l:sum():backward() end, "compute_v = true")
  local _, s = torch._linalg_svd(a, false, false)
  T.raises(function() s:sum():backward() end, "compute_uv = true")
  -- through the public names the vectors are computed when a gradient needs them
  T.ok(gc(function(x) return torch.linalg.svdvals(x) end, { leaf(3, 2) }))
  local x = leaf(3, 3)
  torch.linalg.eigvalsh(sym(x)):sum():backward()
  T.ok(x.grad ~= nil)
end)

T.test("the triangular solve of the QR derivative", function()
  local a = torch.randn(3, 3, { dtype = f64 }):triu() + torch.eye(3, { dtype = f64 }) * 3
  a.requires_grad = true
  both(function(x, b) return torch._linalg_spectral_trsolve(x, b, true) end, { a, leaf(3, 2) })
end)

T.done()
