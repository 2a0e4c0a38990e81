-- test_linalg.lua — dot, mv, mm, bmm, matmul, add* forms, outer, inner, einsum, trace, kron.
local T = require "testing"

local function tensor(v, dt) return torch.tensor(v, dt and { dtype = dt } or nil) end

-- reference product of two nested Lua tables
local function refmm(a, b)
  local r = {}
  for i = 1, #a do
    r[i] = {}
    for j = 1, #b[1] do
      local s = 0
      for k = 1, #b do s = s + a[i][k] * b[k][j] end
      r[i][j] = s
    end
  end
  return r
end

local function transpose(a)
  local r = {}
  for j = 1, #a[1] do
    r[j] = {}
    for i = 1, #a do r[j][i] = a[i][j] end
  end
  return r
end

-- a deterministic small-integer matrix, so float products are exact
local function mat(m, n, seed)
  local r = {}
  for i = 1, m do
    r[i] = {}
    for j = 1, n do r[i][j] = ((i * 7 + j * 3 + (seed or 0) * 5) % 11) - 5 end
  end
  return r
end

local A = { { 1, 2, 3 }, { 4, 5, 6 } }          -- 2x3
local B = { { 7, 8 }, { 9, 10 }, { 11, 12 } }   -- 3x2
local AB = { { 58, 64 }, { 139, 154 } }

---------------------------------------------------------------------------
-- dot
---------------------------------------------------------------------------
T.test("dot values and 0-d result", function()
  local r = torch.dot(tensor({ 1, 2, 3 }, "float32"), tensor({ 4, 5, 6 }, "float32"))
  T.tensor(r, 32, { dtype = "float32", shape = {} })
  T.eq(tensor({ 1.5, 2 }, "float64"):dot(tensor({ 2, 4 }, "float64")):item(), 11)
  T.tensor(torch.vdot(tensor({ 1, 2 }), tensor({ 3, 4 })), 11, { dtype = "int64" })
  T.tensor(torch.dot(tensor({ 1, 2, 3 }), tensor({ -1, 0, 2 })), 5, { dtype = "int64" })
end)

T.test("dot strided vectors and out=", function()
  local m = tensor({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, "float32")
  local col = m:t():select(1, 2)             -- {2, 4, 6}, stride 2
  T.tensor(torch.dot(col, tensor({ 1, 1, 1 }, "float32")), 12)
  local o = torch.zeros(3)
  local r = torch.dot(tensor({ 1, 2 }, "float32"), tensor({ 3, 4 }, "float32"), { out = o })
  T.tensor(o, 11, { shape = {} })
  T.tensor(r, 11, { shape = {} })
end)

T.test("dot errors", function()
  T.raises(function() torch.dot(torch.zeros(2, 2), torch.zeros(2)) end, "dot", "'self'", "1-D", "2-D")
  T.raises(function() torch.dot(torch.zeros(2), torch.zeros(3)) end, "dot", "2", "3")
  T.raises(function() torch.dot(torch.zeros(2), torch.zeros(2, { dtype = "float64" })) end,
    "dot", "same dtype", "float32", "float64")
end)

---------------------------------------------------------------------------
-- mm
---------------------------------------------------------------------------
T.test("mm values, method and function", function()
  T.tensor(torch.mm(tensor(A, "float32"), tensor(B, "float32")), AB, { dtype = "float32", shape = { 2, 2 } })
  T.tensor(tensor(A, "float64"):mm(tensor(B, "float64")), AB, { dtype = "float64" })
  T.tensor(torch.mm(tensor(A), tensor(B)), AB, { dtype = "int64" })
  T.tensor(torch.mm(tensor(A, "int32"), tensor(B, "int32")), AB, { dtype = "int32" })
  T.tensor(torch.mm(tensor(A, "int16"), tensor(B, "int16")), AB, { dtype = "int16" })
  T.tensor(torch.mm(tensor(A, "float16"), tensor(B, "float16")), AB, { dtype = "float16" })
  T.tensor(torch.mm(tensor(A, "bfloat16"), tensor(B, "bfloat16")), AB, { dtype = "bfloat16" })
end)

T.test("mm larger against a reference, all dtypes", function()
  local a, b = mat(37, 53, 1), mat(53, 29, 2)
  local ref = refmm(a, b)
  for _, dt in ipairs({ "float32", "float64", "int64", "int32" }) do
    T.tensor(torch.mm(tensor(a, dt), tensor(b, dt)), ref, { dtype = dt, shape = { 37, 29 } })
  end
  -- wide enough for the integer kernel's column blocks and row blocks
  local c, d = mat(70, 300, 3), mat(300, 270, 4)
  T.tensor(torch.mm(tensor(c), tensor(d)), refmm(c, d))
end)

T.test("mm non-contiguous (transposed) inputs", function()
  local a, b = mat(4, 5, 1), mat(5, 3, 2)
  local ref = refmm(a, b)
  for _, dt in ipairs({ "float32", "float64", "int64", "float16" }) do
    local at = tensor(transpose(a), dt):t()   -- 4x5 view, column-major
    local bt = tensor(transpose(b), dt):t()   -- 5x3 view
    T.ok(not at:is_contiguous())
    T.tensor(torch.mm(at, tensor(b, dt)), ref, { dtype = dt })
    T.tensor(torch.mm(tensor(a, dt), bt), ref, { dtype = dt })
    T.tensor(torch.mm(at, bt), ref, { dtype = dt })
  end
  -- a row-strided view: every other column of a wider matrix
  local w = tensor(mat(4, 10, 5), "float32")
  local cols = w:narrow(2, 1, 5)              -- 4x5 with row stride 10
  local ref2 = refmm(cols:totable(), b)
  T.tensor(torch.mm(cols, tensor(b, "float32")), ref2)
end)

T.test("mm out=, including NaN-filled and transposed out", function()
  local o = torch.full({ 2, 2 }, 0 / 0)
  local r = torch.mm(tensor(A, "float32"), tensor(B, "float32"), { out = o })
  T.tensor(o, AB)
  T.tensor(r, AB)
  local o2 = torch.zeros(5)                     -- resized
  torch.mm(tensor(A, "float32"), tensor(B, "float32"), { out = o2 })
  T.tensor(o2, AB, { shape = { 2, 2 } })
  local base = torch.full({ 2, 2 }, 0 / 0)
  local ot = base:t()
  torch.mm(tensor(A, "float32"), tensor(B, "float32"), { out = ot })
  T.tensor(base, transpose(AB))
  -- out aliasing an input: computed through a temporary
  local sq = tensor({ { 1, 2 }, { 3, 4 } }, "float32")
  torch.mm(sq, sq, { out = sq })
  T.tensor(sq, { { 7, 10 }, { 15, 22 } })
end)

T.test("mm empty and zero inner dim", function()
  T.tensor(torch.mm(torch.zeros(2, 0), torch.zeros(0, 3)), { { 0, 0, 0 }, { 0, 0, 0 } })
  T.tensor(torch.mm(torch.zeros(0, 4), torch.zeros(4, 3)), nil, { shape = { 0, 3 } })
  T.tensor(torch.mm(torch.zeros(2, 0, { dtype = "int64" }), torch.zeros(0, 2, { dtype = "int64" })),
    { { 0, 0 }, { 0, 0 } })
end)

T.test("mm errors", function()
  T.raises(function() torch.mm(torch.zeros(2, 3), torch.zeros(4, 5)) end,
    "mm: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)")
  T.raises(function() torch.mm(torch.zeros(2, 3), torch.zeros(3, 4, 5)) end,
    "mm: argument 'mat2' must be a 2-D tensor (got 3-D)")
  T.raises(function() torch.mm(torch.zeros(3), torch.zeros(3, 4)) end, "mm: argument 'self' must be a 2-D tensor (got 1-D)")
  T.raises(function() torch.mm(torch.zeros(2, 3), torch.zeros(3, 2, { dtype = "float64" })) end,
    "mm: expected self and mat2 to have the same dtype", "float32 != float64")
  T.raises(function() torch.mm(torch.zeros(2, 2, { dtype = "bool" }), torch.zeros(2, 2, { dtype = "bool" })) end,
    "mm", "bool")
end)

---------------------------------------------------------------------------
-- mv, bmm
---------------------------------------------------------------------------
T.test("mv values, transposed matrix, strided vector", function()
  local m = tensor(A, "float32")
  T.tensor(torch.mv(m, tensor({ 1, 0, -1 }, "float32")), { -2, -2 }, { shape = { 2 } })
  T.tensor(m:t():mv(tensor({ 1, 1 }, "float32")), { 5, 7, 9 })
  local v = tensor({ { 1, 9 }, { 0, 9 }, { -1, 9 } }, "float32"):select(2, 1)   -- stride 2
  T.tensor(torch.mv(m, v), { -2, -2 })
  T.tensor(torch.mv(tensor(A), tensor({ 1, 1, 1 })), { 6, 15 }, { dtype = "int64" })
  T.tensor(torch.mv(tensor(A, "float64"), tensor({ 1, 1, 1 }, "float64"), { out = torch.zeros(2, { dtype = "float64" }) }),
    { 6, 15 })
  T.raises(function() torch.mv(m, tensor({ 1, 2 }, "float32")) end, "mv", "cannot be multiplied", "2x3", "2")
  T.raises(function() torch.mv(m, m) end, "mv: argument 'vec' must be a 1-D tensor (got 2-D)")
end)

T.test("bmm values, transposed batches, errors", function()
  local a = { mat(2, 3, 1), mat(2, 3, 2), mat(2, 3, 3) }
  local b = { mat(3, 4, 4), mat(3, 4, 5), mat(3, 4, 6) }
  local ref = { refmm(a[1], b[1]), refmm(a[2], b[2]), refmm(a[3], b[3]) }
  for _, dt in ipairs({ "float32", "float64", "int64", "bfloat16" }) do
    T.tensor(torch.bmm(tensor(a, dt), tensor(b, dt)), ref, { dtype = dt, shape = { 3, 2, 4 } })
  end
  local bt = { transpose(b[1]), transpose(b[2]), transpose(b[3]) }
  T.tensor(tensor(a, "float32"):bmm(tensor(bt, "float32"):transpose(2, 3)), ref)
  -- many small products (spread over the thread pool)
  local many_a, many_b, many_ref = {}, {}, {}
  for i = 1, 200 do
    many_a[i], many_b[i] = mat(3, 4, i), mat(4, 2, i + 1)
    many_ref[i] = refmm(many_a[i], many_b[i])
  end
  T.tensor(torch.bmm(tensor(many_a, "float32"), tensor(many_b, "float32")), many_ref)
  T.tensor(torch.bmm(tensor(many_a), tensor(many_b)), many_ref)
  T.raises(function() torch.bmm(torch.zeros(2, 2, 3), torch.zeros(3, 3, 2)) end, "bmm", "batches", "2", "3")
  T.raises(function() torch.bmm(torch.zeros(2, 2, 3), torch.zeros(2, 4, 2)) end,
    "bmm: self and mat2 shapes cannot be multiplied (2x2x3 and 2x4x2)")
  T.raises(function() torch.bmm(torch.zeros(2, 3), torch.zeros(2, 3, 2)) end, "bmm: argument 'self' must be a 3-D tensor (got 2-D)")
end)

---------------------------------------------------------------------------
-- matmul
---------------------------------------------------------------------------
T.test("matmul 1-D and 2-D cases", function()
  local v3 = tensor({ 1, 2, 3 }, "float32")
  T.tensor(torch.matmul(v3, v3), 14, { shape = {} })
  T.tensor(torch.matmul(tensor(A, "float32"), v3), { 14, 32 }, { shape = { 2 } })
  T.tensor(torch.matmul(tensor({ 1, 1 }, "float32"), tensor(A, "float32")), { 5, 7, 9 }, { shape = { 3 } })
  T.tensor(tensor(A, "float32"):matmul(tensor(B, "float32")), AB, { shape = { 2, 2 } })
end)

T.test("matmul batched shapes and broadcasting", function()
  local function shape(a, b) return torch.matmul(torch.zeros(table.unpack(a)), torch.zeros(table.unpack(b))):size() end
  T.eq(shape({ 10, 3, 4 }, { 4 }), { 10, 3 })
  T.eq(shape({ 4 }, { 10, 4, 5 }), { 10, 5 })
  T.eq(shape({ 10, 3, 4 }, { 4, 5 }), { 10, 3, 5 })
  T.eq(shape({ 3, 4 }, { 10, 4, 5 }), { 10, 3, 5 })
  T.eq(shape({ 2, 1, 3, 4 }, { 5, 4, 6 }), { 2, 5, 3, 6 })
  T.eq(shape({ 7, 1, 3, 4 }, { 1, 6, 4, 2 }), { 7, 6, 3, 2 })
  T.eq(shape({ 2, 3, 4 }, { 2, 4, 5 }), { 2, 3, 5 })
  T.eq(shape({ 1, 4 }, { 4 }), { 1 })
end)

T.test("matmul batched values with broadcasting", function()
  local a = { { mat(2, 3, 1) }, { mat(2, 3, 2) } }                  -- 2x1x2x3
  local b = { mat(3, 2, 3), mat(3, 2, 4), mat(3, 2, 5) }            -- 3x3x2
  local r = torch.matmul(tensor(a, "float32"), tensor(b, "float32"))
  T.eq(r:size(), { 2, 3, 2, 2 })
  local rt = r:totable()
  for i = 1, 2 do for j = 1, 3 do T.eq(rt[i][j], refmm(a[i][1], b[j])) end end
  -- (batch, m, k) @ (k, n): one tall product
  local x = { mat(4, 3, 1), mat(4, 3, 2) }
  local w = mat(3, 5, 3)
  T.tensor(torch.matmul(tensor(x), tensor(w)), { refmm(x[1], w), refmm(x[2], w) })
  T.tensor(torch.matmul(tensor(x, "float64"), tensor(w, "float64")), { refmm(x[1], w), refmm(x[2], w) })
  -- 3-D @ 1-D and 1-D @ 3-D
  local v = { 1, -1, 2 }
  local mv1 = torch.matmul(tensor(x, "float32"), tensor(v, "float32")):totable()
  for bb = 1, 2 do
    for i = 1, 4 do T.eq(mv1[bb][i], x[bb][i][1] - x[bb][i][2] + 2 * x[bb][i][3]) end
  end
  local u = { 1, 2, 3, 4 }
  local vm = torch.matmul(tensor(u, "float32"), tensor(x, "float32")):totable()
  for bb = 1, 2 do T.eq(vm[bb], refmm({ u }, x[bb])[1]) end
  -- out=
  local o = torch.zeros(1)
  torch.matmul(tensor(x, "float32"), tensor(w, "float32"), { out = o })
  T.tensor(o, { refmm(x[1], w), refmm(x[2], w) }, { shape = { 2, 4, 5 } })
end)

T.test("matmul errors", function()
  T.raises(function() torch.matmul(torch.zeros(2, 3), torch.zeros(4, 5)) end, "matmul", "cannot be multiplied", "2x3", "4x5")
  T.raises(function() torch.matmul(torch.zeros(3), torch.zeros(4)) end, "matmul", "3", "4")
  T.raises(function() torch.matmul(torch.zeros(2, 2, 3), torch.zeros(3, 3, 2)) end, "matmul", "broadcast")
  T.raises(function() torch.matmul(torch.zeros(2), torch.zeros(2, { dtype = "float64" })) end, "matmul", "same dtype")
end)

---------------------------------------------------------------------------
-- add* forms
---------------------------------------------------------------------------
T.test("addmm alpha, beta, broadcast bias, in place", function()
  local a, b = tensor(A, "float32"), tensor(B, "float32")
  local c = tensor({ { 1, 1 }, { 1, 1 } }, "float32")
  T.tensor(torch.addmm(c, a, b), { { 59, 65 }, { 140, 155 } })
  T.tensor(torch.addmm(c, a, b, { beta = 2, alpha = 0.5 }), { { 31, 34 }, { 71.5, 79 } })
  T.tensor(c:addmm(a, b, { alpha = 2 }), { { 117, 129 }, { 279, 309 } })
  T.tensor(torch.addmm(tensor({ 10, 20 }, "float32"), a, b), { { 68, 84 }, { 149, 174 } })
  -- beta = 0 ignores self, NaNs included
  T.tensor(torch.addmm(torch.full({ 2, 2 }, 0 / 0), a, b, { beta = 0 }), AB)
  -- in place
  local d = tensor({ { 1, 1 }, { 1, 1 } }, "float32")
  local r = d:addmm_(a, b, { beta = -1 })
  T.ok(rawequal(r, d))
  T.tensor(d, { { 57, 63 }, { 138, 153 } })
  -- float64 and int64
  T.tensor(torch.addmm(tensor({ { 1, 2 }, { 3, 4 } }, "float64"), tensor(A, "float64"), tensor(B, "float64"), { beta = 3 }),
    { { 61, 70 }, { 148, 166 } })
  T.tensor(torch.addmm(tensor({ { 1, 2 }, { 3, 4 } }), tensor(A), tensor(B), { beta = 2, alpha = 3 }),
    { { 176, 196 }, { 423, 470 } }, { dtype = "int64" })
end)

T.test("addmm errors", function()
  local a, b = torch.zeros(2, 3), torch.zeros(3, 2)
  T.raises(function() torch.addmm(torch.zeros(3, 3), a, b) end, "addmm", "'self'", "[3, 3]", "[2, 2]")
  T.raises(function() torch.addmm(torch.zeros(2, 2), a, torch.zeros(4, 2)) end, "addmm: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x2)")
  T.raises(function() torch.addmm(torch.zeros(2, 2, { dtype = "float64" }), a, b) end, "addmm", "same dtype")
  local i = torch.zeros(2, 2, { dtype = "int64" })
  T.raises(function() torch.addmm(i, torch.zeros(2, 2, { dtype = "int64" }), i, { alpha = 0.5 }) end, "addmm", "alpha", "integral")
  T.raises(function() torch.zeros(2, 2):addmm_(torch.zeros(3, 3), torch.zeros(3, 3)) end, "addmm")
end)

T.test("addmv, addr, outer, ger", function()
  local m, v = tensor(A, "float32"), tensor({ 1, 0, -1 }, "float32")
  T.tensor(torch.addmv(tensor({ 1, 2 }, "float32"), m, v, { beta = 2, alpha = 3 }), { -4, -2 })
  T.tensor(torch.addmv(torch.full({ 2 }, 0 / 0), m, v, { beta = 0 }), { -2, -2 })
  local s = tensor({ 1, 1 }, "float32")
  s:addmv_(m, v)
  T.tensor(s, { -1, -1 })
  local x, y = tensor({ 1, 2 }, "float32"), tensor({ 3, 4, 5 }, "float32")
  T.tensor(torch.outer(x, y), { { 3, 4, 5 }, { 6, 8, 10 } }, { shape = { 2, 3 } })
  T.tensor(x:ger(y), { { 3, 4, 5 }, { 6, 8, 10 } })
  T.tensor(torch.outer(tensor({ 1, 2 }), tensor({ 3, 4 })), { { 3, 4 }, { 6, 8 } }, { dtype = "int64" })
  T.tensor(torch.outer(tensor({ 1, 2 }), tensor({ 0.5 }, "float64")), { { 0.5 }, { 1 } }, { dtype = "float64" })
  T.tensor(torch.addr(torch.ones(2, 3), x, y, { beta = 2, alpha = -1 }), { { -1, -2, -3 }, { -4, -6, -8 } })
  local z = torch.ones(2, 3)
  z:addr_(x, y)
  T.tensor(z, { { 4, 5, 6 }, { 7, 9, 11 } })
  T.raises(function() torch.outer(torch.zeros(2, 2), y) end, "outer: argument 'self' must be a 1-D tensor (got 2-D)")
end)

T.test("baddbmm and addbmm", function()
  local a = { mat(2, 3, 1), mat(2, 3, 2) }
  local b = { mat(3, 2, 3), mat(3, 2, 4) }
  local r1, r2 = refmm(a[1], b[1]), refmm(a[2], b[2])
  local ta, tb = tensor(a, "float32"), tensor(b, "float32")
  local function lin(p, q, al, be, c)
    local r = {}
    for i = 1, 2 do r[i] = {} for j = 1, 2 do r[i][j] = al * (p[i][j] + (q and q[i][j] or 0)) + be * c end end
    return r
  end
  T.tensor(torch.baddbmm(torch.ones(2, 2, 2), ta, tb, { beta = 2, alpha = 3 }), { lin(r1, nil, 3, 2, 1), lin(r2, nil, 3, 2, 1) })
  T.tensor(torch.baddbmm(torch.ones(2), ta, tb), { lin(r1, nil, 1, 1, 1), lin(r2, nil, 1, 1, 1) })
  T.tensor(torch.addbmm(torch.ones(2, 2), ta, tb, { beta = 2, alpha = 3 }), lin(r1, r2, 3, 2, 1))
  T.tensor(torch.addbmm(torch.full({ 2, 2 }, 0 / 0), ta, tb, { beta = 0 }), lin(r1, r2, 1, 0, 0))
  T.tensor(torch.addbmm(torch.ones(2, 2, { dtype = "int64" }), tensor(a), tensor(b)), lin(r1, r2, 1, 1, 1), { dtype = "int64" })
  local s = torch.zeros(2, 2)
  s:addbmm_(ta, tb)
  T.tensor(s, lin(r1, r2, 1, 0, 0))
  T.tensor(torch.addbmm(torch.ones(2, 2), torch.zeros(0, 2, 3), torch.zeros(0, 3, 2), { beta = 5 }), { { 5, 5 }, { 5, 5 } })
  T.raises(function() torch.baddbmm(torch.zeros(2, 2, 2), ta, torch.zeros(3, 3, 2)) end, "baddbmm", "batches")
end)

---------------------------------------------------------------------------
-- inner, einsum, trace, kron
---------------------------------------------------------------------------
T.test("inner", function()
  T.tensor(torch.inner(tensor({ 1, 2, 3 }, "float32"), tensor({ 4, 5, 6 }, "float32")), 32, { shape = {} })
  local a, b = tensor(A, "float32"), tensor({ { 1, 0, 0 }, { 0, 1, 0 }, { 1, 1, 1 }, { 2, 0, 0 } }, "float32")
  T.tensor(torch.inner(a, b), { { 1, 2, 6, 2 }, { 4, 5, 15, 8 } }, { shape = { 2, 4 } })
  T.tensor(torch.inner(tensor(2, "float32"), a), { { 2, 4, 6 }, { 8, 10, 12 } })
  T.raises(function() torch.inner(a, torch.zeros(2, 2)) end, "inner", "last dims")
end)

T.test("einsum matrix products", function()
  local a, b = tensor(A, "float32"), tensor(B, "float32")
  T.tensor(torch.einsum("ij,jk->ik", { a, b }), AB)
  T.tensor(torch.einsum("ij,jk->ik", a, b), AB)
  T.tensor(torch.einsum("ij,jk", a, b), AB)                     -- implicit output
  T.tensor(torch.einsum("ij,jk->ki", a, b), transpose(AB))
  T.tensor(torch.einsum("ik,jk->ij", a, b:t()), AB)              -- a @ b, b given transposed
  T.tensor(torch.einsum("i j , j k -> i k", a, b), AB)            -- spaces
  local x = { mat(2, 3, 1), mat(2, 3, 2) }
  local y = { mat(3, 4, 3), mat(3, 4, 4) }
  T.tensor(torch.einsum("bij,bjk->bik", tensor(x, "float64"), tensor(y, "float64")),
    { refmm(x[1], y[1]), refmm(x[2], y[2]) }, { dtype = "float64" })
  T.tensor(torch.einsum("...ij,...jk->...ik", tensor(x), tensor(y)), { refmm(x[1], y[1]), refmm(x[2], y[2]) })
  T.tensor(torch.einsum("bij,jk->bik", tensor(x), tensor(y[1])), { refmm(x[1], y[1]), refmm(x[2], y[1]) })
  -- three operands
  local c = tensor({ { 1, 0 }, { 0, 2 } }, "float32")
  T.tensor(torch.einsum("ij,jk,kl->il", a, b, c), { { 58, 128 }, { 139, 308 } })
end)

T.test("einsum reductions, diagonals, outer products", function()
  local a = tensor(A, "float32")
  local sq = tensor({ { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 } }, "float32")
  T.tensor(torch.einsum("ii->i", sq), { 1, 5, 9 })
  T.tensor(torch.einsum("ii", sq), 15, { shape = {} })
  T.tensor(torch.einsum("ij->ji", a), transpose(A))
  T.tensor(torch.einsum("ij->", a), 21, { shape = {} })
  T.tensor(torch.einsum("ij->j", a), { 5, 7, 9 })
  T.tensor(torch.einsum("ij->i", a), { 6, 15 })
  T.tensor(torch.einsum("i,i->", tensor({ 1, 2 }, "float32"), tensor({ 3, 4 }, "float32")), 11)
  T.tensor(torch.einsum("i,j->ij", tensor({ 1, 2 }, "float32"), tensor({ 3, 4, 5 }, "float32")), { { 3, 4, 5 }, { 6, 8, 10 } })
  T.tensor(torch.einsum("ij,ij->ij", a, a), { { 1, 4, 9 }, { 16, 25, 36 } })
  T.tensor(torch.einsum("ij,ij->", a, a), 91)
  T.tensor(torch.einsum("ij,j->i", a, tensor({ 1, 0, -1 }, "float32")), { -2, -2 })
  T.tensor(torch.einsum("ij,kj->", a, a), 5 * 5 + 7 * 7 + 9 * 9)   -- sum_j (sum_i a_ij)^2
  T.tensor(torch.einsum("ij,jk->", a, tensor(B, "float32")), 58 + 64 + 139 + 154)
  -- attention-shaped: batch and heads, contraction over the last dim of both
  local q = { { mat(3, 4, 1), mat(3, 4, 2) } }                       -- 1x2x3x4
  local k = { { mat(5, 4, 3), mat(5, 4, 4) } }                       -- 1x2x5x4
  local r = torch.einsum("bhqd,bhkd->bhqk", tensor(q, "float32"), tensor(k, "float32"))
  T.tensor(r, { { refmm(q[1][1], transpose(k[1][1])), refmm(q[1][2], transpose(k[1][2])) } }, { shape = { 1, 2, 3, 5 } })
  -- the result is a new tensor, not a view of the input
  local t = torch.einsum("ij->ij", a)
  T.tensor(t, A)
end)

T.test("einsum errors", function()
  local a = torch.zeros(2, 3)
  T.raises(function() torch.einsum("ij,jk->ik", { a }) end, "einsum", "operand")
  T.raises(function() torch.einsum("ijk->i", a) end, "einsum", "operand 1", "2 dims")
  T.raises(function() torch.einsum("ij,jk->ik", a, torch.zeros(4, 2)) end, "einsum", "'j'", "3", "4")
  T.raises(function() torch.einsum("ij->k", a) end, "einsum", "'k'")
  T.raises(function() torch.einsum("ij->ii", a) end, "einsum", "more than once")
  T.raises(function() torch.einsum("i1->i", a) end, "einsum", "'1'")
  T.raises(function() torch.einsum("ii->i", a) end, "einsum", "repeated")
  T.raises(function() torch.einsum("ij,jk", a, torch.zeros(3, 2, { dtype = "float64" })) end, "einsum", "same dtype")
end)

T.test("trace", function()
  T.tensor(torch.trace(tensor({ { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 } }, "float32")), 15, { shape = {}, dtype = "float32" })
  T.tensor(tensor(A):trace(), 6, { dtype = "int64" })
  T.tensor(tensor(A, "int32"):trace(), 6, { dtype = "int64" })
  T.tensor(tensor(A, "float64"):t():trace(), 6, { dtype = "float64" })
  T.raises(function() torch.trace(torch.zeros(3)) end, "trace: argument 'self' must be a 2-D tensor (got 1-D)")
end)

T.test("kron", function()
  local a, b = tensor({ { 1, 2 }, { 3, 4 } }, "float32"), tensor({ { 0, 1 }, { 1, 0 } }, "float32")
  T.tensor(torch.kron(a, b), { { 0, 1, 0, 2 }, { 1, 0, 2, 0 }, { 0, 3, 0, 4 }, { 3, 0, 4, 0 } }, { shape = { 4, 4 } })
  T.tensor(torch.kron(tensor({ 1, 2 }), tensor({ 1, 10, 100 })), { 1, 10, 100, 2, 20, 200 }, { dtype = "int64" })
  T.tensor(torch.kron(tensor({ 1, 2 }, "float32"), tensor({ { 1 }, { 2 } }, "float32")), { { 1, 2 }, { 2, 4 } })
end)

T.test("no leaked tensors", function()
  collectgarbage(); collectgarbage()
  local before = torch._live_tensors and torch._live_tensors()
  for _ = 1, 3 do
    local a, b = torch.ones(3, 4), torch.ones(4, 5)
    local _ = torch.mm(a, b), torch.matmul(a:t(), torch.ones(3)), torch.einsum("ij,jk->ik", a, b)
    pcall(torch.mm, a, a)
  end
  collectgarbage(); collectgarbage()
  if before then T.eq(torch._live_tensors(), before) end
end)

T.done()
