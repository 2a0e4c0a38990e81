-- test_matmul.lua — the matrix products on CUDA tensors (src/cuda/matmul.c over the cuBLAS
-- seam, src/cuda/blas.c), compared with the CPU's result. Under the fake driver cuBLAS is
-- the fake's host implementation (src/cuda/fake_blas.c) with cuBLAS's semantics, so every
-- layout below checks the mapping from row-major strided tensors to cuBLAS calls; each check
-- also says that cuBLAS ran (torch.cuda._blas_calls) and the CPU's kernel did not.
-- The same file runs unchanged on a real GPU.
local T = require "testing"
local c = torch.cuda
local fake = os.getenv("LUTORCH_CUDA_DRIVER") == "fake"

if not c.is_available() then
  T.skip("cuda matmul", "torch.cuda is not available: " .. tostring(c.reason or "?"))
  T.done()
  return
end

local TOL = { [torch.float64] = 1e-12, [torch.float32] = 1e-5, [torch.float16] = 2e-2, [torch.bfloat16] = 1e-1 }

-- max |a - b| / (1 + max |b|), in float64 on the CPU
local function close(got, want, tol, what)
  T.eq(tostring(got.device):sub(1, 4), "cuda", what .. ": result device")
  T.eq(got.dtype, want.dtype, what .. ": dtype")
  T.eq(tostring(got.shape), tostring(want.shape), what .. ": shape")
  if want:numel() == 0 then return end
  local g, w = got:cpu():double(), want:double()
  local err = (g - w):abs():max():item() / (1 + w:abs():max():item())
  T.ok(err <= tol, ("%s: error %g > %g"):format(what, err, tol))
end

-- x on cuda with the same values and layout (strides) as x on the CPU
local function cu(x)
  if type(x) ~= "userdata" then return x end
  return x:cuda()
end

-- f(args) on the CPU and on cuda: the same result, cuBLAS ran, the CPU kernel did not
local function check(what, f, args, tol, dt)
  local cargs, dargs = {}, {}
  for i, t in ipairs(args) do cargs[i] = t; dargs[i] = cu(t) end
  local want = f(table.unpack(cargs))
  c._kernel_counts(true); c._blas_calls(true)
  local got = f(table.unpack(dargs))
  local n, calls = c._kernel_counts(true), c._blas_calls(true)
  close(got, want, tol or TOL[dt or want.dtype] or 1e-5, what)
  T.eq(n.cpu, 0, what .. ": the CPU fallback ran")
  -- a product with nothing to sum (k = 0, no batches) only fills (a memset may do) or scales
  local empty = false
  for _, t in ipairs(args) do empty = empty or (type(t) == "userdata" and t:numel() == 0) end
  if not empty then T.ok(calls > 0 or n.host + n.device > 0, what .. ": neither cuBLAS nor a kernel ran") end
end

-- a view of x with every element `s` apart along dim d (a sliced-with-step layout)
local function step(x, d, s) return x:unfold(d, 1, s):select(-1, 1) end

local DT = { torch.float32, torch.float64, torch.float16, torch.bfloat16 }
local function rnd(dt, ...) return torch.randn(...):to(dt) end

T.test("mm: every transpose and stride layout of both operands, every float dtype", function()
  for _, dt in ipairs(DT) do
    local a, b = rnd(dt, 5, 7), rnd(dt, 7, 3)
    local at, bt = rnd(dt, 7, 5):t(), rnd(dt, 3, 7):t()            -- column-major operands
    local as, bs = step(rnd(dt, 5, 14), 2, 2), step(rnd(dt, 14, 3), 1, 2)   -- strided rows / cols
    local ag = step(step(rnd(dt, 10, 14), 1, 2), 2, 2)             -- neither layout: copied
    for _, A in ipairs({ a, at, as, ag }) do
      for _, B in ipairs({ b, bt, bs }) do
        check(("mm %s %s x %s"):format(tostring(dt), tostring(A:stride()), tostring(B:stride())), torch.mm, { A, B })
      end
    end
  end
end)

T.test("mm: sizes 0, 1, 31 and a 1025-long inner dim", function()
  for _, s in ipairs({ { 0, 3, 4 }, { 3, 0, 4 }, { 3, 4, 0 }, { 1, 1, 1 }, { 1, 5, 1 }, { 31, 31, 31 },
                       { 2, 1025, 3 }, { 33, 1, 17 } }) do
    local m, k, n = s[1], s[2], s[3]
    check(("mm %dx%d @ %dx%d"):format(m, k, k, n), torch.mm, { torch.randn(m, k), torch.randn(k, n) })
  end
  -- k = 0 with a beta term: C = beta * self
  check("addmm k=0", function(s, a, b) return torch.addmm(s, a, b, { beta = 2 }) end,
        { torch.randn(3, 4), torch.randn(3, 0), torch.randn(0, 4) })
end)

T.test("mm: a transposed result (out= with a column-major layout) and out= overlapping an input", function()
  local a, b = torch.randn(4, 6), torch.randn(6, 5)
  local want = torch.mm(a, b)
  local out = torch.empty(5, 4):cuda():t()
  local r = torch.mm(a:cuda(), b:cuda(), { out = out })
  close(out, want, 1e-5, "mm out= transposed")
  T.eq(T.fmt(r:stride()), T.fmt(out:stride()), "out= keeps its layout")
  -- out= that is an input
  local x = torch.randn(4, 4)
  local dx = x:cuda()
  torch.mm(dx, dx, { out = dx })
  close(dx, torch.mm(x, x), 1e-5, "mm out= self")
  -- out= with a general stride (neither layout): through a temporary
  local big = torch.zeros(8, 10):cuda()
  local o = step(step(big, 1, 2), 2, 2)
  torch.mm(a:cuda(), b:cuda(), { out = o })
  close(o, want, 1e-5, "mm out= strided")
end)

T.test("bmm, baddbmm, addbmm: layouts and alpha/beta", function()
  for _, dt in ipairs(DT) do
    local x, y = rnd(dt, 3, 4, 5), rnd(dt, 3, 5, 2)
    check("bmm " .. tostring(dt), torch.bmm, { x, y })
    check("bmm transposed", torch.bmm, { rnd(dt, 3, 5, 4):transpose(2, 3), rnd(dt, 3, 2, 5):transpose(2, 3) })
    check("bmm batch-major permuted", torch.bmm, { rnd(dt, 4, 3, 5):permute(2, 1, 3), y })
    check("bmm expanded batch", torch.bmm, { rnd(dt, 1, 4, 5):expand(3, 4, 5), y })
    check("bmm strided batch", torch.bmm, { step(rnd(dt, 6, 4, 5), 1, 2), y })
    local s = rnd(dt, 3, 4, 2)
    check("baddbmm", function(s, a, b) return torch.baddbmm(s, a, b, { beta = 0.5, alpha = 2 }) end, { s, x, y })
    check("baddbmm broadcast self", function(s, a, b) return torch.baddbmm(s, a, b, { beta = 3 }) end,
          { rnd(dt, 4, 1), x, y })
    check("addbmm", function(s, a, b) return torch.addbmm(s, a, b, { beta = 0.5, alpha = -1 }) end,
          { rnd(dt, 4, 2), x, y })
  end
  check("bmm 0 batches", torch.bmm, { torch.randn(0, 4, 5), torch.randn(0, 5, 2) })
  check("addbmm 0 batches", function(s, a, b) return torch.addbmm(s, a, b, { beta = 2 }) end,
        { torch.randn(4, 2), torch.randn(0, 4, 5), torch.randn(0, 5, 2) })
end)

T.test("matmul: 1-d operands, broadcast batch dims, N-d", function()
  local cases = {
    { { 5 }, { 5 } }, { { 3, 5 }, { 5 } }, { { 5 }, { 5, 4 } }, { { 2, 3, 5 }, { 5 } }, { { 5 }, { 2, 5, 4 } },
    { { 2, 1, 3, 5 }, { 4, 5, 2 } }, { { 2, 3, 5 }, { 5, 4 } }, { { 3, 5 }, { 6, 5, 4 } },
    { { 2, 2, 3, 5 }, { 2, 2, 5, 4 } }, { { 1, 3, 5 }, { 7, 5, 2 } }, { { 0, 3, 5 }, { 5, 2 } },
  }
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    for _, cs in ipairs(cases) do
      check("matmul " .. T.fmt(cs[1]) .. " @ " .. T.fmt(cs[2]), torch.matmul,
            { rnd(dt, table.unpack(cs[1])), rnd(dt, table.unpack(cs[2])) })
    end
  end
  -- a transposed N-d operand
  check("matmul transposed batch", torch.matmul, { torch.randn(2, 3, 5, 4):transpose(3, 4), torch.randn(3, 5, 2) })
end)

T.test("addmm, addmv, addr, mv, dot, outer, inner, kron, _linear", function()
  for _, dt in ipairs(DT) do
    local s, a, b = rnd(dt, 4, 3), rnd(dt, 4, 5), rnd(dt, 5, 3)
    check("addmm " .. tostring(dt), function(s, a, b) return torch.addmm(s, a, b, { beta = 0.5, alpha = 2 }) end,
          { s, a, b })
    check("addmm beta 0 ignores NaN", function(s, a, b) return torch.addmm(s, a, b, { beta = 0 }) end,
          { torch.full({ 4, 3 }, 0 / 0):to(dt), a, b })
    check("addmm broadcast bias", function(s, a, b) return torch.addmm(s, a, b) end, { rnd(dt, 3), a, b })
    check("addmm transposed", function(s, a, b) return torch.addmm(s, a, b, { alpha = 3 }) end,
          { rnd(dt, 3, 4):t(), rnd(dt, 5, 4):t(), b })
    local v = rnd(dt, 5)
    check("mv", torch.mv, { a, v })
    check("mv strided", torch.mv, { rnd(dt, 5, 4):t(), step(rnd(dt, 10), 1, 2) })
    check("addmv", function(s, m, x) return torch.addmv(s, m, x, { beta = 2, alpha = 0.5 }) end,
          { rnd(dt, 4), a, v })
    check("dot", torch.dot, { v, rnd(dt, 5) })
    check("dot strided", torch.dot, { step(rnd(dt, 10), 1, 2), rnd(dt, 5) })
    check("outer", torch.outer, { rnd(dt, 4), rnd(dt, 3) })
    check("addr", function(s, x, y) return torch.addr(s, x, y, { beta = 2, alpha = -1 }) end,
          { rnd(dt, 4, 3), rnd(dt, 4), rnd(dt, 3) })
    check("inner", torch.inner, { rnd(dt, 2, 3, 5), rnd(dt, 4, 5) })
    check("kron", torch.kron, { rnd(dt, 2, 3), rnd(dt, 3, 2) })
    check("_linear", function(x, w, b) return torch._linear(x, w, b) end, { rnd(dt, 6, 5), rnd(dt, 3, 5), rnd(dt, 3) })
  end
  check("outer promotes", torch.outer, { torch.randn(4), torch.randn(3):double() })
end)

T.test("out= and in-place forms", function()
  local s, a, b = torch.randn(4, 3), torch.randn(4, 5), torch.randn(5, 3)
  local want = torch.addmm(s, a, b, { beta = 2, alpha = 3 })
  local ds = s:cuda()
  c._blas_calls(true)
  ds:addmm_(a:cuda(), b:cuda(), { beta = 2, alpha = 3 })
  close(ds, want, 1e-5, "addmm_")
  T.ok(c._blas_calls(true) > 0, "addmm_ ran cuBLAS")
  local out = torch.empty(0):cuda()
  torch.mm(a:cuda(), b:cuda(), { out = out })
  close(out, torch.mm(a, b), 1e-5, "mm out= resized")
  local x = torch.randn(3, 4, 2)
  local dx = x:cuda()
  dx:baddbmm_(torch.randn(3, 4, 5):cuda(), torch.randn(3, 5, 2):cuda(), { beta = 0 })
  T.eq(tostring(dx.shape), tostring(x.shape), "baddbmm_ shape")
  local v = torch.randn(4)
  local dv = v:cuda()
  local m, w = torch.randn(4, 5), torch.randn(5)
  dv:addmv_(m:cuda(), w:cuda())
  close(dv, torch.addmv(v, m, w), 1e-5, "addmv_")
  local r = torch.randn(4, 3)
  local dr = r:cuda()
  local p, q = torch.randn(4), torch.randn(3)
  dr:addr_(p:cuda(), q:cuda(), { alpha = 2 })
  close(dr, torch.addr(r, p, q, { alpha = 2 }), 1e-5, "addr_")
end)

T.test("einsum on cuda tensors", function()
  local eqs = {
    { "ij,jk->ik", { 3, 4 }, { 4, 5 } }, { "bij,bjk->bik", { 2, 3, 4 }, { 2, 4, 5 } }, { "ij->ji", { 3, 4 } },
    { "ii->i", { 4, 4 } }, { "ij->", { 3, 4 } }, { "i,j->ij", { 3 }, { 4 } }, { "...ij,...jk->...ik", { 2, 3, 4 }, { 4, 2 } },
    { "ijk,ik->j", { 2, 3, 4 }, { 2, 4 } },
  }
  for _, e in ipairs(eqs) do
    local args = {}
    for i = 2, #e do args[#args + 1] = torch.randn(e[i]) end
    check("einsum " .. e[1], function(...) return torch.einsum(e[1], ...) end, args)
  end
  local a, b = torch.randn(3, 4), torch.randn(4, 2)
  local da = a:cuda():requires_grad_()
  local r = torch.einsum("ij,jk->ik", da, b:cuda())
  r:backward(torch.ones(3, 2):cuda())
  close(da.grad, torch.ones(3, 2):mm(b:t()), 1e-5, "einsum grad")
end)

T.test("trace: floating and integer dtypes, rectangular, strided, empty", function()
  for _, dt in ipairs({ torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64,
                        torch.uint8, torch.bool }) do
    for _, shape in ipairs({ { 4, 4 }, { 3, 5 }, { 6, 2 }, { 0, 3 }, { 1, 1 } }) do
      local x = (torch.randn(shape) * 4):to(dt)
      local want = torch.trace(x)
      c._kernel_counts(true)
      local got = torch.trace(x:cuda())
      local n = c._kernel_counts(true)
      close(got, want, TOL[dt] or 0, "trace " .. tostring(dt) .. " " .. T.fmt(shape))
      T.eq(n.cpu, 0, "trace fell back")
      T.ok(n.host + n.device > 0, "the trace kernel ran")
    end
  end
  local x = torch.randn(6, 8)
  close(torch.trace(x:cuda():t()), torch.trace(x:t()), 1e-6, "trace transposed")
  T.raises(function() torch.trace(torch.randn(3):cuda()) end, "2-D")
  local a = torch.randn(4, 4):double():cuda():requires_grad_()
  T.ok(torch.autograd.gradcheck(function(t) return torch.trace(t) end, { a }), "gradcheck trace")
end)

T.test("integer products: the CPU's result under the fake, an error naming the op on a GPU", function()
  local a, b = torch.tensor({ { 1, 2 }, { 3, 4 } }), torch.tensor({ { 5, 6 }, { 7, 8 } })
  local ok, r = pcall(torch.mm, a:cuda(), b:cuda())
  if fake then
    T.ok(ok, tostring(r))
    T.eq(r:cpu():tolist(), torch.mm(a, b):tolist())
  else
    T.ok(not ok and tostring(r):find("mm", 1, true), "an error naming mm: " .. tostring(r))
  end
end)

T.test("bad input gives the CPU's errors", function()
  local cases = {
    { torch.mm, { torch.randn(3, 4), torch.randn(5, 2) } },
    { torch.mm, { torch.randn(3), torch.randn(3, 2) } },
    { torch.mm, { torch.randn(3, 4), torch.randn(4, 2):double() } },
    { torch.bmm, { torch.randn(2, 3, 4), torch.randn(3, 4, 2) } },
    { torch.matmul, { torch.randn(2, 3, 4), torch.randn(3, 5, 2) } },
    { torch.dot, { torch.randn(3), torch.randn(4) } },
    { function(s, a, b) return torch.addmm(s, a, b) end, { torch.randn(5, 5), torch.randn(3, 4), torch.randn(4, 2) } },
  }
  for i, cs in ipairs(cases) do
    local okc, ec = pcall(cs[1], table.unpack(cs[2]))
    local dargs = {}
    for j, t in ipairs(cs[2]) do dargs[j] = t:cuda() end
    local okd, ed = pcall(cs[1], table.unpack(dargs))
    T.ok(not okc and not okd, "case " .. i .. " raises")
    T.eq(tostring(ed):match(": ([^:]*)$"), tostring(ec):match(": ([^:]*)$"), "case " .. i .. " message")
  end
end)

T.test("autograd through mm, matmul, addmm and linear on cuda tensors", function()
  local function grads(dev)
    torch.manual_seed(7)
    local a = torch.randn(4, 5):to(dev):requires_grad_()
    local b = torch.randn(5, 3):to(dev):requires_grad_()
    local x = torch.randn(2, 3, 5):to(dev):requires_grad_()
    local s = torch.randn(3):to(dev):requires_grad_()
    local w = torch.randn(6, 3):to(dev):requires_grad_()
    local y = torch.matmul(x, b) + torch.addmm(s, a, b, { alpha = 2 }):sum()
    local z = torch.nn.functional.linear(y, w)
    z:sum():backward()
    return { a.grad, b.grad, x.grad, s.grad, w.grad }
  end
  local want = grads("cpu")
  c._blas_calls(true)
  local got = grads("cuda")
  T.ok(c._blas_calls(true) > 0, "the backward ran cuBLAS")
  for i = 1, #want do close(got[i], want[i], 1e-5, "grad " .. i) end
  local a = torch.randn(3, 4):double():cuda():requires_grad_()
  local b = torch.randn(4, 2):double():cuda():requires_grad_()
  T.ok(torch.autograd.gradcheck(function(p, q) return torch.mm(p, q) end, { a, b }), "gradcheck mm")
  local x = torch.randn(2, 3, 4):double():cuda():requires_grad_()
  T.ok(torch.autograd.gradcheck(function(p, q) return torch.matmul(p, q) end, { x, b }), "gradcheck matmul")
end)

T.test("one large product (2^20+ elements in the result)", function()
  if fake then
    -- the fake's cuBLAS is a plain triple loop: keep it cheap, k = 1
    check("mm 1025x1025, k=1", torch.mm, { torch.randn(1025, 1), torch.randn(1, 1025) })
  else
    check("mm 1024x1024x1024", torch.mm, { torch.randn(1024, 1024), torch.randn(1024, 1024) }, 1e-4)
  end
end)

T.done()
