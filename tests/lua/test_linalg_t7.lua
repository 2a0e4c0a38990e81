-- The two LAPACK helpers Torch7 mode's names stand on (src/ops/linalg_t7.lua):
-- torch._pstrf (pivoted Cholesky, Torch7's pstrf) and torch._eig_real (general
-- real eigen decomposition with real outputs, Torch7's eig).
local T = require "testing"
local f64 = { dtype = torch.float64 }

local function permuted(a, piv)
  local p = piv:long()
  return a:index(1, p):index(2, p)
end

T.test("_pstrf of a positive definite matrix rebuilds P^T A P", function()
  torch.manual_seed(1)
  for _, n in ipairs({ 1, 2, 5, 17 }) do
    local m = torch.randn(n, n, f64)
    local a = m:mm(m:t()) + torch.eye(n, f64)
    for _, upper in ipairs({ true, false }) do
      local f, piv = torch._pstrf(a, upper)
      T.eq(piv.dtype, torch.int32)
      local r = upper and f:t():mm(f) or f:mm(f:t())
      T.ok((r - permuted(a, piv)):abs():max():item() < 1e-12, "n=" .. n)
      -- triangular, the other triangle zero
      local other = upper and torch.tril(f, -1) or torch.triu(f, 1)
      T.eq(other:abs():max():item(), 0)
      -- complete pivoting puts the largest diagonal first
      T.eq(piv[1], a:diag():argmax():item())
    end
  end
end)

T.test("_pstrf of a semi-definite matrix: zero past the rank, still rebuilds", function()
  torch.manual_seed(2)
  local m = torch.randn(6, 2, f64)
  local a = m:mm(m:t())                      -- rank 2
  local f, piv = torch._pstrf(a, true)
  T.ok((f:t():mm(f) - permuted(a, piv)):abs():max():item() < 1e-12)
  T.eq(f:narrow(1, 3, 4):abs():max():item(), 0)
  -- the pivots are a permutation of 1..6
  local seen = {}
  for _, p in ipairs(piv:totable()) do seen[p] = true end
  for i = 1, 6 do T.ok(seen[i], "pivot " .. i) end
end)

T.test("_pstrf in float32, and a 0x0 matrix", function()
  local a = torch.tensor({ { 4, 2 }, { 2, 3 } }, { dtype = torch.float32 })
  local f, piv = torch._pstrf(a, false)
  T.eq(f.dtype, torch.float32)
  T.ok((f:mm(f:t()) - permuted(a, piv)):abs():max():item() < 1e-6)
  local e, p = torch._pstrf(torch.zeros(0, 0, f64))
  T.eq(e:numel(), 0); T.eq(p:numel(), 0)
end)

T.test("_eig_real: real eigenvalues of a triangular matrix are its diagonal", function()
  local d = { 1.96, 3.80, 4.17, 5.70, -7.10 }
  local a = torch.diag(torch.tensor(d, f64)) + torch.triu(torch.ones(5, 5, f64), 1)
  local e, v = torch._eig_real(a, true)
  T.eq(e:size(1), 5); T.eq(e:size(2), 2)
  T.tensor(e:select(2, 1), d)
  T.eq(e:select(2, 2):abs():max():item(), 0)
  T.ok((a:mm(v) - v:mm(torch.diag(e:select(2, 1)))):abs():max():item() < 1e-12)
end)

T.test("_eig_real: a complex pair comes as (re, im) rows and packed vectors", function()
  local a = torch.tensor({ { 1, -2 }, { 3, 1 } }, f64)  -- eigenvalues 1 +- i sqrt(6)
  local e, v = torch._eig_real(a, true)
  local s6 = math.sqrt(6)
  T.near(e[1][1], 1, 1e-12); T.near(math.abs(e[1][2]), s6, 1e-12)
  T.near(e[2][2], -e[1][2], 1e-12)
  -- A (vr + i vi) = (a + i b)(vr + i vi)
  local re, im = e[1][1], e[1][2]
  local vr, vi = v:select(2, 1), v:select(2, 2)
  T.ok((a:mv(vr) - (vr * re - vi * im)):abs():max():item() < 1e-12)
  T.ok((a:mv(vi) - (vr * im + vi * re)):abs():max():item() < 1e-12)
end)

T.test("_eig_real without vectors gives an empty second result; matches numpy", function()
  torch.manual_seed(3)
  local a = torch.randn(6, 6, f64)
  local e, v = torch._eig_real(a)
  T.eq(v:numel(), 0)
  -- the eigenvalues' sum and product are the trace and the determinant's sign-free check
  local sre = e:select(2, 1):sum():item()
  T.near(sre, a:trace():item(), 1e-10)
  T.near(e:select(2, 2):sum():item(), 0, 1e-10)
end)

T.test("bad input names the function and the argument", function()
  T.raises(function() torch._eig_real(torch.ones(2, 3)) end, "eig: argument 'self' must be a square matrix")
  T.raises(function() torch._eig_real(torch.ones(2)) end, "2-D")
  T.raises(function() torch._pstrf(torch.ones(2, 2, { dtype = torch.int64 })) end,
    "pstrf: argument 'self' must be float32 or float64")
  T.raises(function() torch._pstrf(torch.ones(2, 2), true, "x") end, "tol")
end)

T.done()
