-- Derivatives of the linalg ops (src/ops/linalg.lua, src/autograd/formulas_linalg.c):
-- float64 gradcheck for every op, with non-contiguous operands (transposed views of a
-- leaf taken inside fn, and strided leaves) and broadcast batch dims; gradgradcheck for
-- mm, matmul, dot, mv, addmm and bmm (and einsum).
local T = require "testing"

local f64 = torch.float64
local gc, ggc = torch.autograd.gradcheck, torch.autograd.gradgradcheck

local function leaf(...)
  return torch.randn(table.pack(...), { dtype = f64, requires_grad = true })
end
-- a leaf that is not contiguous: every other element of a bigger tensor
local function strided_vec(n)
  local v = torch.randn(n, 2, { dtype = f64 }):select(2, 1)
  v.requires_grad = true
  return v
end
-- a leaf stored transposed
local function tleaf(r, c)
  local m = torch.randn(c, r, { dtype = f64 }):t()
  m.requires_grad = true
  return m
end

---------------------------------------------------------------------------
-- dot, vdot, inner
---------------------------------------------------------------------------
T.test("dot", function()
  T.ok(gc(function(a, b) return torch.dot(a, b) end, { leaf(5), leaf(5) }))
  T.ok(gc(function(a, b) return a:dot(b) end, { strided_vec(4), leaf(4) }))
  T.ok(gc(function(a, b) return torch.vdot(a, b) end, { leaf(3), strided_vec(3) }))
end)

T.test("dot gradient values", function()
  local a = torch.tensor({ 1, 2, 3 }, { dtype = f64, requires_grad = true })
  local b = torch.tensor({ 4, 5, 6 }, { dtype = f64, requires_grad = true })
  torch.dot(a, b):backward()
  T.tensor(a.grad, { 4, 5, 6 })
  T.tensor(b.grad, { 1, 2, 3 })
end)

T.test("inner", function()
  T.ok(gc(function(a, b) return torch.inner(a, b) end, { leaf(2, 3), leaf(4, 3) }))
  T.ok(gc(function(a, b) return torch.inner(a, b) end, { leaf(2, 2, 3), leaf(3) }))
  T.ok(gc(function(a, b) return torch.inner(a:t(), b) end, { leaf(3, 2), leaf(2, 2, 3) }))
  T.ok(gc(function(a, b) return torch.inner(a, b) end, { leaf(4), strided_vec(4) }))
  -- a 0-d operand makes inner a product
  T.ok(gc(function(a, b) return torch.inner(a, b) end, { torch.randn({}, { dtype = f64, requires_grad = true }), leaf(2, 3) }))
  T.ok(gc(function(a, b) return torch.inner(a, b) end, { leaf(2, 3), torch.randn({}, { dtype = f64, requires_grad = true }) }))
end)

---------------------------------------------------------------------------
-- mv, mm, bmm
---------------------------------------------------------------------------
T.test("mv", function()
  T.ok(gc(function(m, v) return torch.mv(m, v) end, { leaf(3, 4), leaf(4) }))
  T.ok(gc(function(m, v) return m:t():mv(v) end, { leaf(4, 3), strided_vec(4) }))
end)

T.test("mm", function()
  T.ok(gc(function(a, b) return torch.mm(a, b) end, { leaf(3, 4), leaf(4, 2) }))
  T.ok(gc(function(a, b) return torch.mm(a:t(), b:t()) end, { leaf(4, 3), leaf(2, 4) }))
  T.ok(gc(function(a, b) return torch.mm(a, b) end, { tleaf(2, 3), tleaf(3, 2) }))
end)

T.test("mm gradient values", function()
  local a = torch.tensor({ { 1, 2 }, { 3, 4 } }, { dtype = f64, requires_grad = true })
  local b = torch.tensor({ { 5, 6 }, { 7, 8 } }, { dtype = f64, requires_grad = true })
  torch.mm(a, b):sum():backward()
  T.tensor(a.grad, { { 11, 15 }, { 11, 15 } })   -- ones @ b^T
  T.tensor(b.grad, { { 4, 4 }, { 6, 6 } })       -- a^T @ ones
end)

T.test("bmm", function()
  T.ok(gc(function(a, b) return torch.bmm(a, b) end, { leaf(2, 3, 4), leaf(2, 4, 2) }))
  T.ok(gc(function(a, b) return torch.bmm(a:transpose(2, 3), b:transpose(2, 3)) end, { leaf(2, 4, 3), leaf(2, 2, 4) }))
end)

---------------------------------------------------------------------------
-- matmul: every rank combination and batch broadcasting
---------------------------------------------------------------------------
local mmf = function(a, b) return torch.matmul(a, b) end
T.test("matmul 1-D . 1-D", function() T.ok(gc(mmf, { leaf(4), strided_vec(4) })) end)
T.test("matmul 2-D . 1-D", function() T.ok(gc(mmf, { leaf(3, 4), leaf(4) })) end)
T.test("matmul 1-D . 2-D", function() T.ok(gc(mmf, { leaf(3), tleaf(3, 4) })) end)
T.test("matmul 2-D . 2-D", function()
  T.ok(gc(function(a, b) return torch.matmul(a:t(), b) end, { leaf(4, 3), leaf(4, 2) }))
end)
T.test("matmul N-D . 1-D", function() T.ok(gc(mmf, { leaf(2, 3, 4), leaf(4) })) end)
T.test("matmul 1-D . N-D", function() T.ok(gc(mmf, { strided_vec(3), leaf(2, 2, 3, 4) })) end)
T.test("matmul N-D . 2-D", function() T.ok(gc(mmf, { leaf(2, 3, 4), leaf(4, 2) })) end)
T.test("matmul 2-D . N-D", function()
  T.ok(gc(function(a, b) return torch.matmul(a, b:transpose(2, 3)) end, { leaf(3, 4), leaf(2, 5, 4) }))
end)
T.test("matmul broadcast batch dims", function()
  T.ok(gc(mmf, { leaf(2, 1, 3, 4), leaf(5, 4, 2) }))
  T.ok(gc(function(a, b) return torch.matmul(a:transpose(3, 4), b) end, { leaf(1, 3, 4, 2), leaf(2, 1, 4, 3) }))
end)
T.test("matmul operator", function()
  T.ok(gc(function(a, b) return a:matmul(b) end, { leaf(2, 3), leaf(3, 2) }))
end)

---------------------------------------------------------------------------
-- add* forms: self gets beta * grad (and is reduced to its broadcast shape)
---------------------------------------------------------------------------
T.test("addmm", function()
  T.ok(gc(function(s, a, b) return torch.addmm(s, a, b) end, { leaf(3, 2), leaf(3, 4), leaf(4, 2) }))
  T.ok(gc(function(s, a, b) return torch.addmm(s, a:t(), b, { beta = 0.5, alpha = -2 }) end,
    { leaf(2), leaf(4, 3), leaf(4, 2) }))
  T.ok(gc(function(s, a, b) return torch.addmm(s, a, b, { beta = 3, alpha = 0.25 }) end,
    { leaf(1, 1), tleaf(3, 4), leaf(4, 2) }))
end)

T.test("addmm gradient values", function()
  local s = torch.zeros(2, 2, { dtype = f64, requires_grad = true })
  local a = torch.ones(2, 3, { dtype = f64, requires_grad = true })
  local b = torch.ones(3, 2, { dtype = f64, requires_grad = true })
  torch.addmm(s, a, b, { beta = 2, alpha = 3 }):sum():backward()
  T.tensor(s.grad, { { 2, 2 }, { 2, 2 } })
  T.tensor(a.grad, { { 6, 6, 6 }, { 6, 6, 6 } })
  T.tensor(b.grad, { { 6, 6 }, { 6, 6 }, { 6, 6 } })
end)

T.test("addmm_ in place", function()
  T.ok(gc(function(s, a, b) local r = s * 1; r:addmm_(a, b, { beta = 2, alpha = 0.5 }); return r end,
    { leaf(3, 2), leaf(3, 4), leaf(4, 2) }))
end)

T.test("addmv", function()
  T.ok(gc(function(s, m, v) return torch.addmv(s, m, v) end, { leaf(3), leaf(3, 4), leaf(4) }))
  T.ok(gc(function(s, m, v) return torch.addmv(s, m:t(), v, { beta = 0.5, alpha = 2 }) end,
    { leaf(1), leaf(4, 3), strided_vec(4) }))
end)

T.test("addbmm", function()
  T.ok(gc(function(s, a, b) return torch.addbmm(s, a, b) end, { leaf(3, 2), leaf(2, 3, 4), leaf(2, 4, 2) }))
  T.ok(gc(function(s, a, b) return torch.addbmm(s, a:transpose(2, 3), b, { beta = -1, alpha = 0.5 }) end,
    { leaf(2), leaf(2, 4, 3), leaf(2, 4, 2) }))
end)

T.test("baddbmm", function()
  T.ok(gc(function(s, a, b) return torch.baddbmm(s, a, b) end, { leaf(2, 3, 2), leaf(2, 3, 4), leaf(2, 4, 2) }))
  T.ok(gc(function(s, a, b) return torch.baddbmm(s, a, b:transpose(2, 3), { beta = 2, alpha = -0.5 }) end,
    { leaf(3, 1), leaf(2, 3, 4), leaf(2, 2, 4) }))
end)

T.test("addr", function()
  T.ok(gc(function(s, a, b) return torch.addr(s, a, b) end, { leaf(3, 2), leaf(3), leaf(2) }))
  T.ok(gc(function(s, a, b) return torch.addr(s, a, b, { beta = 0.5, alpha = 3 }) end,
    { leaf(2), strided_vec(3), leaf(2) }))
end)

T.test("outer, ger", function()
  T.ok(gc(function(a, b) return torch.outer(a, b) end, { leaf(3), strided_vec(4) }))
  T.ok(gc(function(a, b) return torch.ger(a, b) end, { leaf(2), leaf(3) }))
end)

T.test("outer with mixed dtypes", function()
  local b = torch.randn(3, { dtype = torch.float32 })
  T.ok(gc(function(a) return torch.outer(a, b) end, { leaf(2) }))
  T.ok(gc(function(a) return torch.outer(b, a) end, { leaf(2) }))
end)

---------------------------------------------------------------------------
-- trace, kron
---------------------------------------------------------------------------
T.test("trace", function()
  T.ok(gc(function(a) return torch.trace(a) end, { leaf(3, 3) }))
  T.ok(gc(function(a) return a:t():trace() end, { leaf(4, 2) }))
  local a = torch.randn(2, 3, { dtype = f64, requires_grad = true })
  torch.trace(a):backward()
  T.tensor(a.grad, { { 1, 0, 0 }, { 0, 1, 0 } })
end)

T.test("kron", function()
  T.ok(gc(function(a, b) return torch.kron(a, b) end, { leaf(2, 3), leaf(3, 2) }))
  T.ok(gc(function(a, b) return torch.kron(a:t(), b) end, { leaf(3, 2), leaf(2) }))
  T.ok(gc(function(a, b) return torch.kron(a, b) end, { strided_vec(2), leaf(2, 1, 2) }))
end)

---------------------------------------------------------------------------
-- einsum
---------------------------------------------------------------------------
local function ein(eq) return function(...) return torch.einsum(eq, ...) end end

T.test("einsum products", function()
  T.ok(gc(ein("ij,jk->ik"), { leaf(3, 4), leaf(4, 2) }))
  T.ok(gc(ein("bij,bjk->bik"), { leaf(2, 3, 4), leaf(2, 4, 2) }))
  T.ok(gc(ein("i,j->ij"), { leaf(3), strided_vec(2) }))
  T.ok(gc(ein("ij,ij->ij"), { leaf(2, 3), leaf(2, 3) }))
  T.ok(gc(ein("ij,jk"), { leaf(2, 3), leaf(3, 2) }))           -- implicit output
  T.ok(gc(ein("ij,ik,il->jkl"), { leaf(3, 2), leaf(3, 2), leaf(3, 2) }))
  T.ok(gc(ein("ij,jk,kl->il"), { leaf(2, 3), leaf(3, 2), leaf(2, 2) }))
end)

T.test("einsum on transposed operands", function()
  T.ok(gc(function(a, b) return torch.einsum("ij,jk->ki", a:t(), b) end, { leaf(4, 3), leaf(4, 2) }))
  T.ok(gc(function(a, b) return torch.einsum("bij,bkj->bik", a:transpose(2, 3), b) end, { leaf(2, 4, 3), leaf(2, 2, 4) }))
end)

T.test("einsum one operand", function()
  T.ok(gc(ein("ij->ji"), { leaf(2, 3) }))
  T.ok(gc(ein("ij->"), { leaf(2, 3) }))
  T.ok(gc(ein("ijk->j"), { leaf(2, 3, 2) }))
end)

T.test("einsum repeated subscripts (diagonals, traces)", function()
  T.ok(gc(ein("ii->i"), { leaf(3, 3) }))
  T.ok(gc(ein("ii"), { leaf(3, 3) }))
  T.ok(gc(ein("iij,jk->ik"), { leaf(2, 2, 3), leaf(3, 2) }))
  T.ok(gc(ein("bii->b"), { leaf(2, 3, 3) }))
  T.ok(gc(ein("iii->i"), { leaf(2, 2, 2) }))
  T.ok(gc(ein("ij,jj->i"), { leaf(2, 3), leaf(3, 3) }))
end)

T.test("einsum ellipsis and broadcasting", function()
  T.ok(gc(ein("...ij,...jk->...ik"), { leaf(2, 1, 3, 4), leaf(3, 4, 2) }))
  T.ok(gc(ein("...ij->...ji"), { leaf(2, 2, 3) }))
  T.ok(gc(ein("ij,jk->ik"), { leaf(3, 1), leaf(4, 2) }))   -- j of size 1 broadcasts
  T.ok(gc(ein("b...,b...->b"), { leaf(2, 3), leaf(2, 3) }))
end)

T.test("einsum table form and only some operands requiring grad", function()
  local b = torch.randn(4, 2, { dtype = f64 })
  T.ok(gc(function(a) return torch.einsum("ij,jk->ik", { a, b }) end, { leaf(3, 4) }))
  T.ok(gc(function(a) return torch.einsum("ij,jk->ik", { b:t(), a }) end, { leaf(4, 3) }))
end)

T.test("einsum with grad matches the kernel", function()
  local a, b, c = leaf(2, 3, 3), leaf(3, 4), leaf(2, 4)
  for _, eq in ipairs({ "bii,ij->bj", "bij,jk,bk->bi", "bij->", "bij,jk" }) do
    local ops = eq == "bij,jk,bk->bi" and { torch.randn(2, 3, 3, { dtype = f64, requires_grad = true }), b, c } or
                eq == "bij,jk" and { a, b } or eq == "bij->" and { a } or { a, torch.randn(3, 4, { dtype = f64 }) }
    local r = torch.einsum(eq, ops)
    T.ok(r.requires_grad, eq .. " records a graph")
    local plain = {}
    for i, t in ipairs(ops) do plain[i] = t:detach() end
    local k = torch.einsum(eq, plain)
    T.ok(not k.requires_grad)
    T.ok(torch.allclose(r:detach(), k), eq)
    T.eq(r:size(), k:size())
  end
end)

T.test("einsum: many equations against the kernel, each gradchecked", function()
  local cases = {
    { "ij,jk->ki", { 3, 4 }, { 4, 2 } }, { "ij,kj->ik", { 3, 4 }, { 2, 4 } }, { "bij,jk->bik", { 2, 3, 4 }, { 4, 2 } },
    { "i,i->", { 3 }, { 3 } }, { "i,i->i", { 3 }, { 3 } }, { "ij,j->i", { 3, 4 }, { 4 } }, { "ij->j", { 3, 4 } },
    { "iij->j", { 2, 2, 3 } }, { "ijji->ij", { 2, 3, 3, 2 } }, { "ii,ii->i", { 3, 3 }, { 3, 3 } },
    { "...i,...i->...", { 2, 3 }, { 3 } }, { "i...,i...->...", { 2, 3, 1 }, { 2, 1, 4 } },
    { "ab,cd->abcd", { 2, 3 }, { 2, 2 } }, { "abc,cba->", { 2, 3, 2 }, { 2, 3, 2 } },
    { "ij,jk,kl,lm->im", { 2, 3 }, { 3, 2 }, { 2, 2 }, { 2, 3 } }, { "ij,ij,ij->", { 2, 3 }, { 2, 3 }, { 2, 3 } },
    { "bn,anm,bm->ba", { 2, 3 }, { 4, 3, 5 }, { 2, 5 } }, { "ij,ik->jk", { 3, 1 }, { 3, 4 } },
    { "Ab,bC->AC", { 2, 3 }, { 3, 2 } }, { "ji", { 2, 3 } }, { "ba,ca", { 2, 3 }, { 4, 3 } },
    { "i,j,k->ijk", { 2 }, { 3 }, { 2 } }, { "ij,ji->", { 3, 4 }, { 4, 3 } }, { "bii->bi", { 2, 3, 3 } },
    { "i->", { 0 } }, { "ij,jk->ik", { 0, 3 }, { 3, 2 } },
  }
  for _, c in ipairs(cases) do
    local ins, plain = {}, {}
    for i = 2, #c do
      local t = torch.randn(c[i], { dtype = f64 })
      plain[#plain + 1] = t
      local l = t:clone()
      l.requires_grad = true
      ins[#ins + 1] = l
    end
    local r, k = torch.einsum(c[1], ins), torch.einsum(c[1], plain)
    T.eq(r:size(), k:size(), c[1])
    T.ok(torch.allclose(r:detach(), k), c[1])
    T.ok(gc(function(...) return torch.einsum(c[1], { ... }) end, ins), c[1])
  end
end)

T.test("einsum result is not a view of its operand", function()
  local a = leaf(2, 3)
  local r = torch.einsum("ij->ij", a)
  r:detach():fill_(0)
  T.ok(a:detach():abs():sum():item() > 0)
end)

T.test("einsum errors under grad", function()
  local a = leaf(2, 3)
  T.raises(function() torch.einsum("ij,jk->ik", a, leaf(4, 2)) end, "einsum", "'j'")
  T.raises(function() torch.einsum("ij->k", a) end, "einsum", "'k'")
  T.raises(function() torch.einsum("ijk->i", a) end, "einsum", "operand 1")
  T.raises(function() torch.einsum("ij,jk", { a }) end, "einsum")
  T.raises(function() torch.einsum("ij,jk->ik", a, torch.randn(3, 2)) end, "einsum", "dtype")
  T.raises(function() torch.einsum("ii->i", leaf(2, 3)) end, "einsum", "'i'")
end)

T.test("_einsum_fast refuses operands that need a gradient", function()
  T.raises(function() torch._einsum_fast("ij->", { leaf(2, 2) }) end, "derivative")
  T.tensor(torch._einsum_fast("ij->", { torch.ones(2, 2) }), 4)
end)

---------------------------------------------------------------------------
-- out= refuses autograd
---------------------------------------------------------------------------
T.test("out= with requires_grad raises", function()
  local o = torch.empty(2, 2, { dtype = f64 })
  T.raises(function() torch.mm(leaf(2, 2), leaf(2, 2), { out = o }) end, "mm", "out=")
end)

---------------------------------------------------------------------------
-- second order
---------------------------------------------------------------------------
T.test("gradgradcheck mm", function()
  T.ok(ggc(function(a, b) return torch.mm(a, b) end, { leaf(2, 3), leaf(3, 2) }))
  T.ok(ggc(function(a, b) return torch.mm(a:t(), b) end, { leaf(3, 2), tleaf(3, 2) }))
end)

T.test("gradgradcheck matmul", function()
  T.ok(ggc(mmf, { leaf(3), leaf(3) }))
  T.ok(ggc(mmf, { leaf(2, 3), leaf(3) }))
  T.ok(ggc(mmf, { leaf(3), leaf(3, 2) }))
  T.ok(ggc(mmf, { leaf(2, 1, 2, 3), leaf(2, 3, 2) }))
  T.ok(ggc(mmf, { leaf(2, 2, 3), leaf(3) }))
end)

T.test("gradgradcheck dot", function()
  T.ok(ggc(function(a, b) return torch.dot(a, b) end, { leaf(3), strided_vec(3) }))
end)

T.test("gradgradcheck mv", function()
  T.ok(ggc(function(m, v) return torch.mv(m, v) end, { leaf(2, 3), leaf(3) }))
end)

T.test("gradgradcheck addmm", function()
  T.ok(ggc(function(s, a, b) return torch.addmm(s, a, b, { beta = 0.5, alpha = 2 }) end,
    { leaf(2), leaf(2, 3), leaf(3, 2) }))
end)

T.test("gradgradcheck bmm", function()
  T.ok(ggc(function(a, b) return torch.bmm(a, b:transpose(2, 3)) end, { leaf(2, 2, 3), leaf(2, 2, 3) }))
end)

T.test("gradgradcheck einsum", function()
  T.ok(ggc(ein("bij,bjk->bik"), { leaf(2, 2, 3), leaf(2, 3, 2) }))
  T.ok(ggc(ein("ii,i->i"), { leaf(2, 2), leaf(2) }))
end)

T.done()
