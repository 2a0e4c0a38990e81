-- Derivatives of the ops of src/ops/shape_numpy.lua: float64 gradcheck for every
-- differentiable one (they are composites: the gradient comes through the ops they call),
-- with non-contiguous, broadcast, empty and 0-d inputs; gradgradcheck for a few;
-- hand-checked gradients where the rule is easy to state.
local T = require "testing"
local f64 = torch.float64

torch.manual_seed(12)

local function leaf(...) return torch.randn({ ... }, { dtype = f64, requires_grad = true }) end
local function scalar(v) return torch.tensor(v, { dtype = f64, requires_grad = true }) end
local gc = torch.autograd.gradcheck
local ggc = torch.autograd.gradgradcheck

-- gradcheck's finite differences must not see an output that aliases the perturbed input
-- (a view of it would move with it), so results are copied by a product with 1.
local function copy(o)
  if type(o) == "table" then
    local r = {}
    for i, t in ipairs(o) do r[i] = t * 1 end
    return r
  end
  return o * 1
end
local function gcv(fn, inputs) return gc(function(...) return copy(fn(...)) end, inputs) end

local function grad_of(fn, x, w)
  local y = fn(x)
  local g = torch.tensor(w, { dtype = f64 })
  return torch.autograd.grad({ y }, { x }, { grad_outputs = { g } })[1]:totable()
end

local check = T.test

check("broadcast_to, broadcast_tensors", function()
  local a, m = leaf(3), leaf(2, 1)
  T.ok(gcv(function(a) return a:broadcast_to(2, 3) end, { a }))
  T.ok(gcv(function(m) return torch.broadcast_to(m:t(), { 4, 2, 2 }) end, { m }))
  T.ok(gcv(function(a, m) return torch.broadcast_tensors({ a, m }) end, { a, m }))
  T.ok(gcv(function(a, s) return torch.broadcast_tensors({ s, a }) end, { a, scalar(1.5) }))
  -- the gradient sums over the broadcast dims
  T.eq(grad_of(function(a) return a:broadcast_to(2, 3) end, a, { { 1, 2, 3 }, { 4, 5, 6 } }), { 5, 7, 9 })
end)

check("hstack, vstack, dstack, column_stack", function()
  local a, b, m, n = leaf(3), leaf(2), leaf(2, 3), leaf(3, 2)
  T.ok(gcv(function(a, b) return torch.hstack({ a, b }) end, { a, b }))
  T.ok(gcv(function(m, n) return torch.hstack({ m, n:t() }) end, { m, n }))
  T.ok(gcv(function(a, m) return torch.vstack({ m, a }) end, { a, m }))
  T.ok(gcv(function(s, a) return torch.row_stack({ s, s }) end, { scalar(2.0), a }))
  T.ok(gcv(function(a, m) return torch.dstack({ m, a:view(1, 3):expand(2, 3), m:t():t() }) end, { a, m }))
  T.ok(gcv(function(a, n) return torch.column_stack({ a, n, a }) end, { a, n }))
  T.ok(gcv(function(s, a) return torch.hstack({ s, a }) end, { scalar(-1.0), a }))
end)

check("tensor_split, hsplit, vsplit, dsplit", function()
  local x, m, t = leaf(7), leaf(4, 5), leaf(2, 2, 6)
  T.ok(gcv(function(x) return x:tensor_split(3) end, { x }))
  T.ok(gcv(function(x) return x:tensor_split({ 3, 6 }) end, { x }))
  -- overlapping and empty pieces: each narrowed on its own
  T.ok(gcv(function(x) return x:tensor_split({ 5, 2 }) end, { x }))
  T.ok(gcv(function(m) return m:t():tensor_split(2, 2) end, { m }))
  T.ok(gcv(function(m) return m:tensor_split(torch.tensor({ 2, -1 }), -1) end, { m }))
  T.ok(gcv(function(m) return m:hsplit({ 2 }) end, { m }))
  T.ok(gcv(function(m) return m:vsplit(2) end, { m }))
  T.ok(gcv(function(t) return t:dsplit(3) end, { t }))
  T.ok(gcv(function(t) return t:permute(3, 1, 2):dsplit({ 2 }) end, { t }))
  -- an unused piece contributes nothing
  local g = torch.autograd.grad({ x:tensor_split(3)[2]:sum() }, { x })[1]
  T.eq(g:totable(), { 0, 0, 0, 1, 1, 0, 0 })
end)

check("rot90, fliplr, flipud, ravel", function()
  local m, t = leaf(2, 3), leaf(2, 3, 4)
  for _, k in ipairs({ 0, 1, 2, 3, -1, 6 }) do
    T.ok(gcv(function(m) return m:rot90(k) end, { m }), "k = " .. k)
  end
  T.ok(gcv(function(t) return t:rot90(1, { 3, 1 }) end, { t }))
  T.ok(gcv(function(t) return t:transpose(1, 3):rot90(-1, { -1, 2 }) end, { t }))
  T.ok(gcv(function(m) return m:fliplr() end, { m }))
  T.ok(gcv(function(t) return t:permute(2, 3, 1):flipud() end, { t }))
  T.ok(gcv(function(t) return t:ravel() end, { t }))
  T.ok(gcv(function(t) return t:transpose(1, 2):ravel() end, { t }))
  T.ok(gcv(function(s) return s:ravel() end, { scalar(0.5) }))
end)

check("repeat_interleave", function()
  local m = leaf(2, 3)
  T.ok(gcv(function(m) return m:repeat_interleave(2) end, { m }))
  T.ok(gcv(function(m) return m:repeat_interleave(3, 1) end, { m }))
  T.ok(gcv(function(m) return m:t():repeat_interleave(2, -1) end, { m }))
  T.ok(gcv(function(m) return m:repeat_interleave(torch.tensor({ 0, 2, 3 }), 2) end, { m }))
  T.ok(gcv(function(m) return m:repeat_interleave(torch.tensor({ 2 }), 1) end, { m }))
  T.ok(gcv(function(m) return m:repeat_interleave(torch.tensor({ 1, 0, 2, 1, 1, 3 })) end, { m }))
  T.ok(gcv(function(s) return s:repeat_interleave(4) end, { scalar(1.25) }))
  -- each element's gradient adds over its copies
  local a = leaf(3)
  T.eq(grad_of(function(a) return a:repeat_interleave(torch.tensor({ 2, 0, 1 })) end, a, { 1, 2, 5 }), { 3, 0, 5 })
end)

check("meshgrid, cartesian_prod", function()
  local a, b, c = leaf(3), leaf(2), leaf(4)
  T.ok(gcv(function(a, b) return torch.meshgrid({ a, b }) end, { a, b }))
  T.ok(gcv(function(a, b, c) return torch.meshgrid({ a, b, c }, { indexing = "xy" }) end, { a, b, c }))
  T.ok(gcv(function(a, s) return torch.meshgrid({ s, a }) end, { a, scalar(3.0) }))
  T.ok(gcv(function(a, c) return torch.meshgrid({ c:unfold(1, 1, 2):select(2, 1), a }) end, { a, c }))
  T.ok(gcv(function(a, b) return torch.cartesian_prod({ a, b }) end, { a, b }))
  T.ok(gcv(function(a, b, c) return torch.cartesian_prod({ b, c, a }) end, { a, b, c }))
  T.ok(gcv(function(a) return torch.cartesian_prod({ a }) end, { a }))
end)

check("diag_embed, diagflat", function()
  local a, m, t = leaf(3), leaf(2, 3), leaf(2, 3, 4)
  T.ok(gcv(function(a) return a:diag_embed() end, { a }))
  T.ok(gcv(function(a) return a:diag_embed(2) end, { a }))
  T.ok(gcv(function(m) return m:diag_embed(-1, 1, 3) end, { m }))
  T.ok(gcv(function(t) return t:permute(3, 1, 2):diag_embed(1, -1, 2) end, { t }))
  T.ok(gcv(function(a) return a:diagflat() end, { a }))
  T.ok(gcv(function(m) return m:t():diagflat(-2) end, { m }))
  T.ok(gcv(function(s) return s:diagflat(1) end, { scalar(2.0) }))
  T.ok(ggc(function(m) return m:diag_embed(1) end, { m }))
  -- diagonal undoes diag_embed, so the gradient is the diagonal of the output's gradient
  local g = torch.arange(1, 10, { dtype = f64 }):view(3, 3):totable()
  T.eq(grad_of(function(a) return a:diag_embed() end, a, g), { 1, 5, 9 })
end)

check("take_along_dim", function()
  local m, t = leaf(2, 3), leaf(2, 1, 3)
  T.ok(gcv(function(m) return m:take_along_dim(torch.tensor({ { 3, 1 }, { 2, 2 } }), 2) end, { m }))
  T.ok(gcv(function(m) return m:take_along_dim(torch.tensor({ { 2, 1, 2 } }), 1) end, { m }))
  T.ok(gcv(function(t) return t:take_along_dim(torch.tensor({ { { 1, 3, 2 }, { 3, 3, 3 } } }), 3) end, { t }))
  T.ok(gcv(function(m) return m:t():take_along_dim(torch.tensor({ 6, 1, 1, 4 })) end, { m }))
  T.ok(ggc(function(m) return m:take_along_dim(torch.tensor({ { 3, 1 }, { 2, 2 } }), 2) end, { m }))
  -- repeated indices accumulate
  T.eq(grad_of(function(m) return m:take_along_dim(torch.tensor({ { 1, 1 } }), 2) end, m, { { 1, 2 }, { 3, 4 } }),
    { { 3, 0, 0 }, { 7, 0, 0 } })
end)

check("select_scatter, slice_scatter", function()
  local m, src3, src2, a = leaf(2, 3), leaf(3), leaf(2), leaf(8)
  T.ok(gcv(function(m, s) return m:select_scatter(s, 1, 2) end, { m, src3 }))
  T.ok(gcv(function(m, s) return m:t():select_scatter(s, 2, -1) end, { m, src3 }))
  T.ok(gcv(function(a, s) return a:select_scatter(s, 1, 4) end, { a, scalar(1.0) }))
  T.ok(gcv(function(a, s) return a:slice_scatter(s, 1, 2, nil, 3) end, { a, src3 }))
  T.ok(gcv(function(a, s) return a:slice_scatter(s, 1, -3, -2) end, { a, src2 }))
  T.ok(gcv(function(m, s) return m:slice_scatter(s:view(2, 1), 2, 3) end, { m, src2 }))
  T.ok(gcv(function(m, s) return m:t():slice_scatter(s:view(1, 2):expand(2, 2), 1, 1, 3, 2) end, { m, src2 }))
  T.ok(ggc(function(m, s) return m:select_scatter(s, 2, 1) end, { m, src2 }))
  T.ok(ggc(function(a, s) return a:slice_scatter(s, 1, 1, 6, 3) end, { a, src2 }))
  -- self's gradient is zero on the replaced slice, src's is the slice of the output's gradient
  local x, s = leaf(3), scalar(0.0)
  local y = x:select_scatter(s, 1, 2)
  local gx, gs = table.unpack(torch.autograd.grad({ y }, { x, s }, { grad_outputs = { torch.tensor({ 1.0, 2.0, 3.0 },
    { dtype = f64 }) } }))
  T.eq(gx:totable(), { 1, 0, 3 }); T.eq(gs:item(), 2)
end)

check("diff, vander", function()
  local a, m, p, q = leaf(6), leaf(3, 4), leaf(3, 1), leaf(3, 2)
  T.ok(gcv(function(a) return a:diff() end, { a }))
  T.ok(gcv(function(a) return a:diff(3) end, { a }))
  T.ok(gcv(function(m) return m:diff(1, 1) end, { m }))
  T.ok(gcv(function(m) return m:t():diff(2, -1) end, { m }))
  T.ok(gcv(function(m, p, q) return m:diff(1, 2, p, q) end, { m, p, q }))
  T.ok(gcv(function(m, q) return m:diff(2, -1, { append = q }) end, { m, q }))
  T.ok(gcv(function(a) return a:diff(0) end, { a }))
  T.ok(ggc(function(m, p) return m:diff(2, 2, p) end, { m, p }))
  local v = torch.tensor({ 0.5, -1.5, 2.0 }, { dtype = f64, requires_grad = true })
  T.ok(gc(function(v) return torch.vander(v) end, { v }))
  T.ok(gc(function(v) return torch.vander(v, 5, true) end, { v }))
  T.ok(gc(function(v) return torch.vander(v, 1) end, { v }))
  T.ok(gc(function(a) return torch.vander(a:unfold(1, 1, 2):select(2, 1), 4) end, { a }))
  -- d/dx of x^2 + x + 1 at x = 3 is 7
  local x = torch.tensor({ 3.0 }, { dtype = f64, requires_grad = true })
  T.eq(grad_of(function(x) return torch.vander(x) end, x, { { 1 } }), { 0 })   -- one column: x^0
  T.eq(grad_of(function(x) return torch.vander(x, 3) end, x, { { 1, 1, 1 } }), { 7 })
end)

check("the integer-valued functions record nothing", function()
  T.ok(not torch.tril_indices(3, 3).requires_grad)
  T.ok(not torch.repeat_interleave(torch.tensor({ 1, 2 })).requires_grad)
  local x = leaf(2, 2)
  T.eq(torch.numel(x), 4)
end)

T.done()
