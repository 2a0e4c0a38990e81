-- Derivatives of the index ops: float64 gradcheck for every differentiable op (negative
-- dims, duplicate indices, non-contiguous inputs, broadcasting masks), in-place forms on
-- non-leaves, gradgradcheck for index_select and gather, and indexing reads and
-- assignments (x[i] = w) that autograd records.
local T = require "testing"
local f64 = torch.float64

torch.manual_seed(13)

local function leaf(...) return torch.randn({ ... }, { dtype = f64, requires_grad = true }) end
local function idx(v) return torch.tensor(v, { dtype = torch.int64 }) end
local gc = torch.autograd.gradcheck
local ggc = torch.autograd.gradgradcheck

local function grad_of(fn, x, w)
  local y = fn(x)
  local g = torch.tensor(w, { dtype = f64 })
  return torch.autograd.grad({ y }, { x }, { grad_outputs = { g } })[1]:totable()
end

local check = T.test

check("index_select: dims, duplicates, non-contiguous self", function()
  local x = leaf(4, 3)
  T.ok(gc(function(x) return x:index_select(1, idx({ 4, 1 })) end, { x }))
  T.ok(gc(function(x) return x:index_select(-1, idx({ 2, 2, -1 })) end, { x }))
  T.ok(gc(function(x) return x:t():index_select(2, idx({ 1, 3 })) end, { x }))
  T.ok(gc(function(x) return x:index_select(1, idx({})) end, { x }))
  T.eq(grad_of(function(x) return x:index_select(1, idx({ 2, 2, 4 })) end, x,
    { { 1, 1, 1 }, { 2, 2, 2 }, { 3, 3, 3 } }), { { 0, 0, 0 }, { 3, 3, 3 }, { 0, 0, 0 }, { 3, 3, 3 } })
end)

check("gather: index smaller than self, duplicates", function()
  local x = leaf(3, 4)
  T.ok(gc(function(x) return x:gather(2, idx({ { 1, 4 }, { 2, 2 }, { 3, 1 } })) end, { x }))
  T.ok(gc(function(x) return x:gather(1, idx({ { 3, 1, 2 } })) end, { x }))
  T.ok(gc(function(x) return x:t():gather(-1, idx({ { 1 }, { 3 }, { -1 }, { 2 } })) end, { x }))
  T.eq(grad_of(function(x) return x:gather(2, idx({ { 2, 2 }, { 1, 4 }, { 3, 3 } })) end, x,
    { { 1, 2 }, { 3, 4 }, { 5, 6 } }), { { 0, 3, 0, 0 }, { 3, 0, 0, 4 }, { 0, 0, 11, 0 } })
end)

check("scatter: self and src (src larger than index, a number), in place on a non-leaf", function()
  local x, s = leaf(3, 4), leaf(3, 5)
  local i = idx({ { 2, 4 }, { 1, 3 } })
  T.ok(gc(function(x, s) return x:scatter(2, i, s) end, { x, s }))
  T.ok(gc(function(x, s) return x:scatter(1, idx({ { 3, 1, 2, 1 } }), s) end, { x, s }))
  T.ok(gc(function(x, s) return x:t():scatter(-1, idx({ { 3 }, { 1 } }), s:t()) end, { x, s }))
  T.ok(gc(function(x) return x:scatter(2, i, 7.5) end, { x }))
  T.ok(gc(function(x, s) return (x * 1):scatter_(2, i, s) end, { x, s }))
  T.ok(gc(function(x) return (x * 1):scatter_(2, i, -1) end, { x }))
  local v = torch.tensor(2.0, { dtype = f64, requires_grad = true })
  T.ok(gc(function(x, v) return x:scatter(2, i, v) end, { x, v }))
  T.eq(grad_of(function(x) return x:scatter(2, i, 0) end, x, { { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, { 1, 1, 1, 1 } }),
    { { 1, 0, 1, 0 }, { 0, 1, 0, 1 }, { 1, 1, 1, 1 } })
  local g = grad_of(function(s) return torch.zeros(3, 4, { dtype = f64 }):scatter(2, i, s) end, s,
    { { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 9, 10, 11, 12 } })
  T.eq(g, { { 2, 4, 0, 0, 0 }, { 5, 7, 0, 0, 0 }, { 0, 0, 0, 0, 0 } })
end)

check("scatter_add: duplicates accumulate", function()
  local x, s = leaf(3, 4), leaf(2, 3)
  local i = idx({ { 1, 1, 4 }, { 2, 2, 2 } })
  T.ok(gc(function(x, s) return x:scatter_add(2, i, s) end, { x, s }))
  T.ok(gc(function(x, s) return x:scatter_add(1, idx({ { 3, 3, 1 } }), s) end, { x, s }))
  T.ok(gc(function(x, s) return (x * 1):scatter_add_(2, i, s:t():t()) end, { x, s }))
end)

check("index_add (alpha), index_copy, index_fill", function()
  local x, s = leaf(4, 3), leaf(2, 3)
  T.ok(gc(function(x, s) return x:index_add(1, idx({ 4, 2 }), s) end, { x, s }))
  T.ok(gc(function(x, s) return x:index_add(1, idx({ 3, 3 }), s, { alpha = -2.5 }) end, { x, s }))
  T.ok(gc(function(x, s) return x:t():index_add(-1, idx({ 1, -1 }), s:t()) end, { x, s }))
  T.ok(gc(function(x, s) return (x * 1):index_add_(1, idx({ 1, 2 }), s, { alpha = 3 }) end, { x, s }))
  T.eq(grad_of(function(s) return x:index_add(1, idx({ 4, 2 }), s, { alpha = 2 }) end, s,
    { { 1, 1, 1 }, { 2, 2, 2 }, { 3, 3, 3 }, { 4, 4, 4 } }), { { 8, 8, 8 }, { 4, 4, 4 } })
  T.ok(gc(function(x, s) return x:index_copy(1, idx({ 3, 1 }), s) end, { x, s }))
  T.ok(gc(function(x, s) return x:t():index_copy(2, idx({ 4, 2 }), s:t()) end, { x, s }))
  T.ok(gc(function(x, s) return (x * 1):index_copy_(1, idx({ 2, 4 }), s) end, { x, s }))
  T.ok(gc(function(x) return x:index_fill(2, idx({ 1, 3 }), 5) end, { x }))
  T.ok(gc(function(x) return (x * 1):index_fill_(-1, idx({ 2 }), -1.5) end, { x }))
  T.eq(grad_of(function(x) return x:index_copy(1, idx({ 3, 1 }), s) end, x,
    { { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1 } }), { { 0, 0, 0 }, { 1, 1, 1 }, { 0, 0, 0 }, { 1, 1, 1 } })
end)

check("masked_fill: number value, broadcast mask, in place", function()
  local x = leaf(3, 4)
  local m = torch.tensor({ { true, false, false, true }, { false, false, true, false }, { true, true, true, true } })
  T.ok(gc(function(x) return x:masked_fill(m, 0.5) end, { x }))
  T.ok(gc(function(x) return x:masked_fill(torch.tensor({ true, false, true, false }), -3) end, { x }))
  T.ok(gc(function(x) return x:t():masked_fill(m:t(), 1) end, { x }))
  T.ok(gc(function(x) return (x * 1):masked_fill_(m, 2) end, { x }))
  -- self broadcast up to the mask's shape: gradients summed back
  local r = leaf(4)
  T.ok(gc(function(r) return r:masked_fill(m, 0) end, { r }))
  T.eq(grad_of(function(r) return r:masked_fill(m, 0) end, r, { { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, { 1, 1, 1, 1 } }),
    { 1, 2, 1, 1 })
end)

check("masked_fill: a 0-d tensor value gets the sum of the gradients of the filled positions", function()
  local x = leaf(3, 4)
  local m = x:detach():gt(0)
  local v = torch.tensor(1.5, { dtype = f64, requires_grad = true })
  T.ok(gc(function(x, v) return x:masked_fill(m, v) end, { x, v }))
  T.ok(gc(function(x, v) return x:t():masked_fill(m:t(), v) end, { x, v }))
  T.ok(gc(function(x, v) return (x * 1):masked_fill_(m, v) end, { x, v }))
  T.ok(gc(function(x, v) return x:masked_fill(torch.tensor({ false, true, true, false }), v * 2) end, { x, v }))
  local y = x:masked_fill(m, v)
  T.tensor(y:detach(), torch.where(m, torch.full({ 3, 4 }, 1.5, { dtype = f64 }), x:detach()):totable())
  y:backward(torch.arange(1, 13, { dtype = f64 }):view(3, 4))
  local want = 0
  for k = 1, 12 do if m:view(-1)[k] then want = want + k end end
  T.near(v.grad:item(), want)
  -- a value that does not require grad takes the scalar kernel; a 1-element tensor is accepted
  T.tensor(torch.zeros(2):masked_fill(torch.tensor({ true, false }), torch.tensor({ 4 })), { 4, 0 })
  T.raises(function() torch.zeros(2):masked_fill(torch.tensor({ true, false }), torch.ones(2)) end, "masked_fill")
end)

check("masked_select and masked_scatter", function()
  local x = leaf(3, 4)
  local m = x:detach():lt(0.3)
  T.ok(gc(function(x) return x:masked_select(m) end, { x }))
  T.ok(gc(function(x) return x:t():masked_select(m:t()) end, { x }))
  local r = leaf(4)
  T.ok(gc(function(r) return r:masked_select(m) end, { r }))   -- self broadcast to the mask
  local s = leaf(15)
  T.ok(gc(function(x, s) return x:masked_scatter(m, s) end, { x, s }))
  T.ok(gc(function(x, s) return x:masked_scatter(torch.tensor({ true, false, true, true }), s:narrow(1, 2, 12):view(3, 4)) end, { x, s }))
  T.ok(gc(function(x, s) return (x * 1):masked_scatter_(m, s) end, { x, s }))
  local mm = torch.tensor({ true, false, true })
  T.eq(grad_of(function(s) return torch.zeros(3, { dtype = f64 }):masked_scatter(mm, s) end, leaf(4), { 5, 6, 7 }),
    { 5, 7, 0, 0 })
end)

check("take and put", function()
  local x = leaf(3, 4)
  T.ok(gc(function(x) return x:take(idx({ { 1, 12 }, { 5, 5 } })) end, { x }))
  T.ok(gc(function(x) return x:t():take(idx({ 2, -1, 7 })) end, { x }))
  local s = leaf(2, 2)
  T.ok(gc(function(x, s) return x:put(idx({ 1, 6, 12, 2 }), s) end, { x, s }))
  T.ok(gc(function(x, s) return x:put(idx({ 3, 3, 4, -1 }), s, true) end, { x, s }))
  T.ok(gc(function(x, s) return (x * 1):put_(idx({ { 2, 4 }, { 6, 8 } }), s) end, { x, s }))
  T.eq(grad_of(function(v) return v:take(idx({ 2, 2, 3 })) end, leaf(3), { 1, 2, 3 }), { 0, 3, 3 })
end)

check("nonzero is not differentiable; out= with grad is an error", function()
  local x = leaf(2, 2)
  local n = x:nonzero()
  T.eq(n.dtype, torch.int64)
  T.ok(not n.requires_grad)
  T.raises(function() torch.index_select(x, 1, idx({ 1 }), { out = torch.zeros(1, 2, { dtype = f64 }) }) end, "out=")
end)

check("gradgradcheck: index_select, gather, scatter_add, index_add, masked_select, take", function()
  local x = leaf(3, 3)
  T.ok(ggc(function(x) local v = x:index_select(1, idx({ 3, 1, 3 })); return v * v end, { x }))
  T.ok(ggc(function(x) local v = x:index_select(2, idx({ 2 })); return v * v end, { x }))
  T.ok(ggc(function(x) local v = x:gather(2, idx({ { 1, 1 }, { 3, 2 }, { 2, 3 } })); return v * v end, { x }))
  local s = leaf(2, 3)
  T.ok(ggc(function(x, s) local v = x:scatter_add(1, idx({ { 1, 3, 3 }, { 2, 2, 1 } }), s); return v * v end, { x, s }))
  T.ok(ggc(function(x, s) local v = x:index_add(1, idx({ 3, 1 }), s, { alpha = 2 }); return v * v end, { x, s }))
  T.ok(ggc(function(x) local v = x:masked_select(x:detach():gt(0)); return v * v end, { x }))
  T.ok(ggc(function(x) local v = x:take(idx({ 9, 1, 1 })); return v * v end, { x }))
end)

------------------------------------------------------------------------------
-- Lua indexing syntax
------------------------------------------------------------------------------
check("assignment of a tensor that requires grad into a plain tensor", function()
  local w = leaf(2)
  T.ok(gc(function(w) local b = torch.zeros(3, { dtype = f64 }); b[2] = w[1]; return b end, { w }))
  T.ok(gc(function(w) local b = torch.zeros(3, 2, { dtype = f64 }); b[3] = w; return b end, { w }))
  T.ok(gc(function(w) local b = torch.zeros(3, 2, { dtype = f64 }); b[{ 1, 2 }] = w[2]; b[{ { 2, 3 }, 1 }] = w; return b end, { w }))
  T.ok(gc(function(w) local b = torch.zeros(2, 2, { dtype = f64 }); b[{ ":", 2 }] = w; return b end, { w }))
  T.ok(gc(function(w) local b = torch.zeros(4, 2, { dtype = f64 }); b[idx({ 4, 1 })] = w; return b end, { w }))
  T.ok(gc(function(w) local b = torch.zeros(2, 2, { dtype = f64 }); b[torch.tensor({ true, false })] = w; return b end, { w }))
  T.ok(gc(function(w) local b = torch.zeros(2, { dtype = f64 }); b[torch.tensor({ false, true })] = w[2]; return b end, { w }))
  T.ok(gc(function(w) local b = torch.zeros(3, { dtype = f64 }); b[idx(2)] = w[1]; return b end, { w }))
  local b = torch.zeros(3, { dtype = f64 })
  b[2] = w[1] * 3
  T.ok(b.requires_grad)
  b:sum():backward()
  T.tensor(w.grad, { 3, 0 })
end)

check("assignment into a tensor with history: overwritten elements get no gradient", function()
  local x, w = leaf(3, 2), leaf(2)
  T.ok(gc(function(x) local y = x * 1; y[2] = 0; return y end, { x }))
  T.ok(gc(function(x) local y = x * 1; y[{ 3, 1 }] = 5; return y end, { x }))
  T.ok(gc(function(x) local y = x * 1; y[2] = y[1]; return y end, { x }))
  T.ok(gc(function(x, w) local y = x * 1; y[1] = w; return y end, { x, w }))
  T.ok(gc(function(x, w) local y = x * 1; local yt = y:t(); yt[{ ":", { 2, 3 } }] = w:view(2, 1); return y end, { x, w }))
  T.ok(gc(function(x, w) local y = x * 1; y[x:detach():gt(0)] = w[1]; return y end, { x, w }))
  T.ok(gc(function(x) local y = x * 1; y[x:detach():gt(0)] = 0; return y end, { x }))
  T.ok(gc(function(x, w) local y = x * 1; y[idx({ 3 })] = w:view(1, 2); return y end, { x, w }))
  local y = x * 1
  y[2] = 0
  y:sum():backward()
  T.tensor(x.grad, { { 1, 1 }, { 0, 0 }, { 1, 1 } })
end)

check("assignment into a leaf that requires grad is an error; plain writes stay plain", function()
  local x = leaf(3)
  T.raises(function() x[1] = 2 end, "leaf Variable")
  T.raises(function() x[{ { 1, 2 } }] = 0 end, "leaf Variable")
  torch.no_grad(function() x[1] = 2 end)   -- allowed without grad mode
  T.eq(x[1]:item(), 2)
  local b = torch.zeros(2, 2)
  b[1] = 3
  b[{ 2, 2 }] = 4
  T.tensor(b, { { 3, 3 }, { 0, 4 } })
  T.ok(not b.requires_grad and b.grad_fn == nil)
end)

T.done()
