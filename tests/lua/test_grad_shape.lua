-- Derivatives of the view and shape ops: float64 gradcheck for every differentiable op
-- (negative dims, non-contiguous inputs, broadcasting), gradgradcheck for view, transpose,
-- narrow, select, expand and cat, in-place ops on views (CopySlices), hand-checked values.
local T = require "testing"
local f64 = torch.float64

torch.manual_seed(11)

local function leaf(...) return torch.randn({ ... }, { dtype = f64, requires_grad = true }) end
local gc = torch.autograd.gradcheck
local ggc = torch.autograd.gradgradcheck

-- gradcheck's finite differences must not see an output that aliases the perturbed input
-- (a view of it would move with it), so view results are copied by a product with 1.
local function gcv(fn, inputs)
  return gc(function(...)
    local o = fn(...)
    if type(o) == "table" then
      local r = {}
      for i, t in ipairs(o) do r[i] = t * 1 end
      return r
    end
    return o * 1
  end, inputs)
end

-- the gradient of sum(fn(x) * w) for weights w (a table), as a table
local function grad_of(fn, x, w)
  local y = fn(x)
  local g = torch.tensor(w, { dtype = f64 })
  return torch.autograd.grad({ y }, { x }, { grad_outputs = { g } })[1]:totable()
end

local check = T.test

------------------------------------------------------------------------------
-- views
------------------------------------------------------------------------------
check("view, reshape, flatten, unflatten", function()
  local x = leaf(2, 3, 4)
  T.ok(gcv(function(x) return x:view(6, 4) end, { x }))
  T.ok(gcv(function(x) return x:view(-1) end, { x }))
  T.ok(gcv(function(x) return x:reshape(4, -1) end, { x }))
  -- a transposed input: reshape copies (contiguous), then views
  T.ok(gcv(function(x) return x:transpose(1, 3):reshape(-1) end, { x }))
  T.ok(gcv(function(x) return x:flatten(2) end, { x }))
  T.ok(gcv(function(x) return x:permute(3, 1, 2):flatten() end, { x }))
  T.ok(gcv(function(x) return x:unflatten(3, { 2, 2 }) end, { x }))
  local s = torch.tensor(1.5, { dtype = f64, requires_grad = true })
  T.ok(gcv(function(s) return s:view(1, 1) end, { s }))
end)

check("squeeze, unsqueeze", function()
  local x = leaf(2, 1, 3, 1)
  T.ok(gcv(function(x) return x:squeeze() end, { x }))
  T.ok(gcv(function(x) return x:squeeze(2) end, { x }))
  T.ok(gcv(function(x) return x:squeeze(-1) end, { x }))
  T.ok(gcv(function(x) return x:squeeze(1) end, { x }))   -- size 2: left alone
  T.ok(gcv(function(x) return x:unsqueeze(1) end, { x }))
  T.ok(gcv(function(x) return x:unsqueeze(-1) end, { x }))
  T.ok(gcv(function(x) return x:transpose(1, 3):unsqueeze(3) end, { x }))
end)

check("transpose, t, permute, movedim, T and mT", function()
  local x = leaf(2, 3, 4)
  T.ok(gcv(function(x) return x:transpose(1, 3) end, { x }))
  T.ok(gcv(function(x) return x:transpose(-1, 2) end, { x }))
  T.ok(gcv(function(x) return x:permute(2, 3, 1) end, { x }))
  T.ok(gcv(function(x) return x:permute({ -1, 1, 2 }) end, { x }))
  T.ok(gcv(function(x) return x:movedim(1, 3) end, { x }))
  T.ok(gcv(function(x) return x:movedim({ 1, 2 }, { 3, 1 }) end, { x }))
  T.ok(gcv(function(x) return x.T end, { x }))
  T.ok(gcv(function(x) return x.mT end, { x }))
  local m = leaf(3, 2)
  T.ok(gcv(function(m) return m:t() end, { m }))
  -- permute's gradient is the inverse permutation
  local g = grad_of(function(x) return x:permute(2, 3, 1) end, x, torch.arange(1, 25):view(3, 4, 2):totable())
  T.eq(g[1][1][1], 1); T.eq(g[1][1][2], 3); T.eq(g[1][2][1], 9); T.eq(g[2][1][1], 2)
end)

check("expand, expand_as (broadcast gradients are summed)", function()
  local x = leaf(3, 1)
  T.ok(gcv(function(x) return x:expand(3, 4) end, { x }))
  T.ok(gcv(function(x) return x:expand(2, 3, 4) end, { x }))
  T.ok(gcv(function(x) return x:expand(2, -1, 5) end, { x }))
  T.ok(gcv(function(x) return x:t():expand(4, 3) end, { x }))
  T.ok(gcv(function(x) return x:expand_as(torch.zeros(2, 3, 2)) end, { x }))
  T.eq(grad_of(function(x) return x:expand(3, 4) end, x, { { 1, 1, 1, 1 }, { 1, 2, 3, 4 }, { 0, 0, 0, 1 } }),
    { { 4 }, { 10 }, { 1 } })
end)

check("narrow, select, sub (negative starts and indices)", function()
  local x = leaf(4, 5)
  T.ok(gcv(function(x) return x:narrow(1, 2, 2) end, { x }))
  T.ok(gcv(function(x) return x:narrow(-1, -3, 3) end, { x }))
  T.ok(gcv(function(x) return x:narrow(2, 1, 0) end, { x }))
  T.ok(gcv(function(x) return x:t():narrow(1, 5, 1) end, { x }))
  T.ok(gcv(function(x) return x:select(1, 2) end, { x }))
  T.ok(gcv(function(x) return x:select(-1, -1) end, { x }))
  T.ok(gcv(function(x) return x:t():select(2, 4) end, { x }))
  T.ok(gcv(function(x) return x:sub(2, 3, -2, -1) end, { x }))
  T.ok(gcv(function(x) return x[2] end, { x }))
  T.ok(gcv(function(x) return x[{ { 2, 3 }, -1 }] end, { x }))
  T.ok(gcv(function(x) return x[{ ":", { 1, 2 } }] end, { x }))
  T.eq(grad_of(function(x) return x:narrow(2, 2, 2) end, x, { { 1, 2 }, { 3, 4 }, { 5, 6 }, { 7, 8 } }),
    { { 0, 1, 2, 0, 0 }, { 0, 3, 4, 0, 0 }, { 0, 5, 6, 0, 0 }, { 0, 7, 8, 0, 0 } })
  T.eq(grad_of(function(x) return x:select(2, -2) end, x, { 1, 2, 3, 4 }),
    { { 0, 0, 0, 1, 0 }, { 0, 0, 0, 2, 0 }, { 0, 0, 0, 3, 0 }, { 0, 0, 0, 4, 0 } })
end)

check("x[i] on a tensor that requires grad is a 0-d view with history", function()
  local x = leaf(3)
  local e = x[2]
  T.ok(torch.is_tensor(e))
  T.eq(e:dim(), 0)
  T.ok(e.grad_fn ~= nil)
  e:backward()
  T.tensor(x.grad, { 0, 1, 0 })
  local m = leaf(2, 3)
  local f = m[{ 2, 3 }]
  T.eq(f:dim(), 0)
  f:backward()
  T.tensor(m.grad, { { 0, 0, 0 }, { 0, 0, 1 } })
  -- a plain tensor still gives Lua numbers
  T.eq(type(torch.zeros(3)[1]), "number")
end)

check("unfold (overlapping and gapped windows), diagonal", function()
  local x = leaf(3, 7)
  T.ok(gcv(function(x) return x:unfold(2, 3, 1) end, { x }))
  T.ok(gcv(function(x) return x:unfold(2, 2, 3) end, { x }))
  T.ok(gcv(function(x) return x:unfold(1, 2, 1) end, { x }))
  T.ok(gcv(function(x) return x:t():unfold(-1, 3, 2) end, { x }))
  T.eq(grad_of(function(v) return v:unfold(1, 2, 1) end, leaf(4), { { 1, 1 }, { 1, 1 }, { 1, 1 } }), { 1, 2, 2, 1 })
  local m = leaf(3, 4)
  T.ok(gcv(function(m) return m:diagonal() end, { m }))
  T.ok(gcv(function(m) return m:diagonal(1) end, { m }))
  T.ok(gcv(function(m) return m:diagonal(-2) end, { m }))
  T.ok(gcv(function(m) return m:diagonal(5) end, { m }))   -- empty
  T.ok(gcv(function(m) return m:t():diagonal(1) end, { m }))
  local b = leaf(2, 3, 4)
  T.ok(gcv(function(b) return b:diagonal(0, 1, 3) end, { b }))
  T.ok(gcv(function(b) return b:diagonal(-1, 3, 2) end, { b }))
  T.eq(grad_of(function(m) return m:diagonal(1) end, m, { 1, 2, 3 }),
    { { 0, 1, 0, 0 }, { 0, 0, 2, 0 }, { 0, 0, 0, 3 } })
end)

check("chunk, split, unbind: lists of views", function()
  local x = leaf(5, 3)
  T.ok(gcv(function(x) return x:chunk(2) end, { x }))
  T.ok(gcv(function(x) return x:chunk(3, 2) end, { x }))
  T.ok(gcv(function(x) return x:split(2) end, { x }))
  T.ok(gcv(function(x) return x:split({ 1, 4 }) end, { x }))
  T.ok(gcv(function(x) return x:unbind(2) end, { x }))
  T.ok(gcv(function(x) return x:t():unbind() end, { x }))
  -- only one piece used: the others get zeros
  local parts = x:split(2)
  parts[2]:sum():backward()
  T.tensor(x.grad, { { 0, 0, 0 }, { 0, 0, 0 }, { 1, 1, 1 }, { 1, 1, 1 }, { 0, 0, 0 } })
end)

check("contiguous, flip, roll", function()
  local x = leaf(3, 4)
  T.ok(gcv(function(x) return x:contiguous() end, { x }))
  T.ok(gcv(function(x) return x:t():contiguous() end, { x }))
  T.ok(gc(function(x) return x:flip(1) end, { x }))
  T.ok(gc(function(x) return x:flip(1, -1) end, { x }))
  T.ok(gc(function(x) return x:t():flip(2) end, { x }))
  T.ok(gc(function(x) return x:roll(1) end, { x }))
  T.ok(gc(function(x) return x:roll(-5, 2) end, { x }))
  T.ok(gc(function(x) return x:roll({ 2, -1 }, { 1, 2 }) end, { x }))
  T.ok(gc(function(x) return x:t():roll(7, 1) end, { x }))
  T.eq(grad_of(function(v) return v:roll(1) end, leaf(3), { 1, 2, 3 }), { 2, 3, 1 })
end)

check("tril, triu (and in place on a non-leaf), diag", function()
  local x = leaf(3, 4)
  T.ok(gc(function(x) return x:tril() end, { x }))
  T.ok(gc(function(x) return x:tril(-1) end, { x }))
  T.ok(gc(function(x) return x:triu(1) end, { x }))
  T.ok(gc(function(x) return x:t():triu() end, { x }))
  T.ok(gc(function(x) return (x * 1):tril_(1) end, { x }))
  T.ok(gc(function(x) return (x * 1):triu_(-1) end, { x }))
  local b = leaf(2, 3, 3)
  T.ok(gc(function(b) return b:tril() end, { b }))
  local v = leaf(3)
  T.ok(gc(function(v) return torch.diag(v) end, { v }))
  T.ok(gc(function(v) return torch.diag(v, 2) end, { v }))
  T.ok(gc(function(v) return torch.diag(v, -1) end, { v }))
  T.ok(gc(function(x) return torch.diag(x) end, { x }))
  T.ok(gc(function(x) return torch.diag(x, 1) end, { x }))
  T.ok(gc(function(x) return torch.diag(x, -2) end, { x }))
  T.ok(gc(function(x) return torch.diag(x:t(), 1) end, { x }))
end)

check("repeat, tile", function()
  local x = leaf(2, 3)
  T.ok(gc(function(x) return x:repeatTensor(2, 1) end, { x }))
  T.ok(gc(function(x) return x:repeatTensor(2, 2, 3) end, { x }))
  T.ok(gc(function(x) return x:t():repeatTensor(1, 2) end, { x }))
  T.ok(gc(function(x) return x:tile(2) end, { x }))
  T.ok(gc(function(x) return x:tile({ 3, 1, 1 }) end, { x }))
  T.eq(grad_of(function(v) return v:repeatTensor(3) end, leaf(2), { 1, 2, 3, 4, 5, 6 }), { 9, 12 })
end)

------------------------------------------------------------------------------
-- cat and stack
------------------------------------------------------------------------------
check("cat: dims, mixed requires_grad, non-contiguous and 1-D empty inputs", function()
  local a, b = leaf(2, 3), leaf(4, 3)
  local c = torch.randn(1, 3, { dtype = f64 })
  T.ok(gc(function(a, b) return torch.cat({ a, b }) end, { a, b }))
  T.ok(gc(function(a, b) return torch.cat({ a, c, b, a }, 1) end, { a, b }))
  T.ok(gc(function(a, b) return torch.cat({ a:t(), b:t() }, 2) end, { a, b }))
  T.ok(gc(function(a, b) return torch.cat({ a, b:narrow(1, 1, 2) }, -1) end, { a, b }))
  T.ok(gc(function(a) return torch.cat({ torch.zeros(0, { dtype = f64 }), a }, 1) end, { a }))
  T.ok(gc(function(a, b) return torch.cat(a, b:narrow(1, 1, 2)) end, { a, b }))   -- Torch7's cat(a, b [, dim])
  T.ok(gc(function(a) return torch.concat({ a }, 2) end, { a }))
  local y = torch.cat({ a, c })
  T.eq(tostring(y.grad_fn), "<CatBackward0>")
  y = torch.cat({ a, b })
  y:backward(torch.arange(1, 19, { dtype = f64 }):view(6, 3))
  T.tensor(a.grad, { { 1, 2, 3 }, { 4, 5, 6 } })
  T.tensor(b.grad, { { 7, 8, 9 }, { 10, 11, 12 }, { 13, 14, 15 }, { 16, 17, 18 } })
end)

check("cat: an empty 1-D input that requires grad gets an empty gradient; dtypes promote", function()
  local e = torch.zeros(0, { dtype = f64, requires_grad = true })
  local a = leaf(2, 2)
  torch.cat({ e, a }):sum():backward()
  T.eq(e.grad:size(), { 0 })
  T.tensor(a.grad, { { 1, 1 }, { 1, 1 } })
  local f = torch.randn(2, { requires_grad = true })          -- float32
  local d = torch.randn(2, { dtype = f64, requires_grad = true })
  local y = torch.cat({ f, d })
  T.eq(y.dtype, f64)
  y:sum():backward()
  T.eq(f.grad.dtype, torch.float32)
  T.tensor(f.grad, { 1, 1 })
end)

check("cat: no graph without grad; out= with grad is an error", function()
  local a = leaf(2)
  T.ok(torch.no_grad(function() return torch.cat({ a, a }).grad_fn == nil end))
  T.ok(torch.cat({ torch.ones(1), torch.ones(2) }).grad_fn == nil)
  T.raises(function() torch.cat({ a, a }, 1, { out = torch.zeros(4, { dtype = f64 }) }) end, "out=")
  local o = torch.zeros(4)
  torch.cat({ torch.ones(2), torch.ones(2) }, 1, { out = o })
  T.tensor(o, { 1, 1, 1, 1 })
end)

check("stack", function()
  local a, b = leaf(2, 3), leaf(2, 3)
  T.ok(gc(function(a, b) return torch.stack({ a, b }) end, { a, b }))
  T.ok(gc(function(a, b) return torch.stack({ a, b, a }, 2) end, { a, b }))
  T.ok(gc(function(a, b) return torch.stack({ a:t(), b:t() }, -1) end, { a, b }))
  T.ok(gc(function(a) return torch.stack({ a, torch.ones(2, 3, { dtype = f64 }) }, 3) end, { a }))
end)

------------------------------------------------------------------------------
-- in-place ops on views rewrite the base's history (CopySlices)
------------------------------------------------------------------------------
check("in-place op on a view of a non-leaf", function()
  local x = leaf(3, 4)
  T.ok(gc(function(x) local y = x * 1; y:narrow(1, 1, 2):mul_(2); return y end, { x }))
  T.ok(gc(function(x) local y = x * 1; y:select(2, 3):mul_(x:select(2, 1)); return y end, { x }))
  T.ok(gc(function(x) local y = x * 1; y:t():narrow(1, 2, 2):tril_(); return y end, { x }))
  T.ok(gc(function(x) local y = x * 1; y:diagonal():mul_(3); return y end, { x }))
  T.ok(gc(function(x) local y = x * 1; y:view(12):narrow(1, 3, 4):mul_(-1); return y end, { x }))
  local y = x * 1
  y:narrow(1, 1, 2):mul_(2)
  T.eq(tostring(y.grad_fn), "<CopySlices>")
  y:sum():backward()
  T.tensor(x.grad, { { 2, 2, 2, 2 }, { 2, 2, 2, 2 }, { 1, 1, 1, 1 } })
  -- the view's own history reads its region of the base's
  local x2 = leaf(3)
  local z = x2 * 1
  local v = z:narrow(1, 2, 2)
  v:mul_(5)
  v:sum():backward()
  T.tensor(x2.grad, { 0, 5, 5 })
end)

check("in-place op on a view of a leaf that requires grad is an error", function()
  local x = leaf(3)
  T.raises(function() x:narrow(1, 1, 2):mul_(2) end, "leaf")
end)

------------------------------------------------------------------------------
-- second derivatives (squared so the gradient does not alias grad_output)
------------------------------------------------------------------------------
check("gradgradcheck: view, transpose, narrow, select, expand", function()
  local x = leaf(2, 3)
  T.ok(ggc(function(x) local v = x:view(3, 2); return v * v end, { x }))
  T.ok(ggc(function(x) local v = x:transpose(1, 2); return v * v end, { x }))
  T.ok(ggc(function(x) local v = x:t():narrow(1, 2, 2); return v * v end, { x }))
  T.ok(ggc(function(x) local v = x:select(2, -1); return v * v end, { x }))
  T.ok(ggc(function(x) local v = x:narrow(2, 2, 1):expand(2, 4); return v * v end, { x }))
  T.ok(ggc(function(x) local v = x:unsqueeze(1):expand(3, 2, 3); return v * v end, { x }))
end)

check("gradgradcheck: cat and stack", function()
  local a, b = leaf(2, 2), leaf(1, 2)
  T.ok(ggc(function(a, b) local v = torch.cat({ a, b }); return v * v end, { a, b }))
  T.ok(ggc(function(a, b) local v = torch.cat({ a:t(), b:t() }, 2); return v * v end, { a, b }))
  T.ok(ggc(function(a) local v = torch.stack({ a, a * 2 }); return v * v end, { a }))
end)

check("gradgradcheck: unfold, diagonal, permute, flip, roll", function()
  local x = leaf(3, 3)
  T.ok(ggc(function(x) local v = x:unfold(2, 2, 1); return v * v end, { x }))
  T.ok(ggc(function(x) local v = x:diagonal(1); return v * v end, { x }))
  T.ok(ggc(function(x) local v = x:permute(2, 1); return v * v end, { x }))
  T.ok(ggc(function(x) local v = x:flip(1); return v * v end, { x }))
  T.ok(ggc(function(x) local v = x:roll(1, 2); return v * v end, { x }))
end)

T.test("split, chunk and unbind record one node for all pieces", function()
  local x = torch.randn(6, 4, { dtype = torch.float64, requires_grad = true })
  local ps = x:split(2)
  T.eq(ps[1].grad_fn:name(), "SplitBackward0")
  T.ok(ps[1].grad_fn == ps[3].grad_fn)
  T.eq(x:unbind(2)[1].grad_fn:name(), "UnbindBackward0")
  T.ok(torch.autograd.gradcheck(function(a) local u = a:unbind(2); return u[1] * u[3] + u[4] end, { x }))
  T.ok(torch.autograd.gradcheck(function(a) local u = a:chunk(3, 1); return torch.cat({ u[3], u[1] }) end, { x }))
  T.ok(torch.autograd.gradcheck(function(a) local u = a:split({ 1, 5 }); return u[2]:sum(1) end, { x }))
  T.ok(torch.autograd.gradgradcheck(function(a) local u = a:chunk(3, 1); return (u[3] * u[1]):sum() end, { x }))
  -- pieces no loss uses get zeros
  local g = torch.autograd.grad((x:split(4)[2] * 3):sum(), x)
  T.tensor(g:narrow(1, 1, 4), torch.zeros(4, 4):totable())
  T.tensor(g:narrow(1, 5, 2), torch.full({ 2, 4 }, 3.0):totable())
end)

T.done()
