-- Writes into tensors whose memory overlaps: an expanded (or otherwise
-- self-overlapping) destination, and inputs that partly overlap the
-- written-to tensor, are refused by every op that writes into a tensor it was
-- given (in place, out=, Tensor(a!) arguments), as in PyTorch. The checks sit
-- in the generated entry points (tools/gen.lua); the predicate is
-- core/overlap.h (tests/c/test_overlap.c).
local T = require "testing"

local INTERNAL = "unsupported operation: more than one element of the written-to tensor refers to a single memory location; clone() it first"
local PARTIAL = "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location; clone() it first"
local SAME = "unsupported operation: the input tensor is the written-to tensor"

local function expanded() return torch.zeros(1, 3):expand(3, 3) end   -- three rows, one memory row
local function ar(n) return torch.arange(1., n + 1) end                -- {1, 2, ..., n}

T.test("expanded destination: in-place arithmetic", function()
  local e = expanded()
  T.raises(function() e:add_(1) end, "add_: " .. INTERNAL)
  T.raises(function() e:mul_(2) end, "mul_: " .. INTERNAL)
  T.raises(function() e:sub_(torch.ones(3, 3)) end, "sub_: " .. INTERNAL)
  T.raises(function() e:addcmul_(torch.ones(3), torch.ones(3)) end, "addcmul_: " .. INTERNAL)
  T.raises(function() e:clamp_(0, 1) end, "clamp_: " .. INTERNAL)
  -- refused before any kernel ran: the memory is untouched (it used to hold 3s)
  T.tensor(e, { { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } })
end)

T.test("expanded destination: unary, random and Torch7 names", function()
  local e = expanded()
  T.raises(function() e:neg_() end, "neg_: " .. INTERNAL)
  T.raises(function() e:exp_() end, "exp_: " .. INTERNAL)
  T.raises(function() e:relu_() end, "relu_: " .. INTERNAL)
  T.raises(function() e:uniform_() end, "uniform_: " .. INTERNAL)
  T.raises(function() e:normal_() end, "normal_: " .. INTERNAL)
  T.raises(function() e:bernoulli_(0.5) end, "bernoulli_: " .. INTERNAL)
end)

T.test("expanded destination: copy_ and index ops", function()
  local e = expanded()
  T.raises(function() e:copy_(torch.ones(3, 3)) end, "copy_: " .. INTERNAL)
  T.raises(function() e:copy(torch.ones(3)) end, "copy_: " .. INTERNAL)        -- Torch7's name
  T.raises(function() e:scatter_(1, torch.tensor { { 1, 2, 3 } }, torch.ones(1, 3)) end, "scatter_: " .. INTERNAL)
  T.raises(function() e:index_add_(1, torch.tensor { 1 }, torch.ones(1, 3)) end, "index_add_: " .. INTERNAL)
  T.raises(function() e:index_copy_(1, torch.tensor { 1 }, torch.ones(1, 3)) end, "index_copy_: " .. INTERNAL)
  T.raises(function() e:put_(torch.tensor { 1 }, torch.ones(1)) end, "put_: " .. INTERNAL)
  T.raises(function() e:addmm_(torch.ones(3, 3), torch.ones(3, 3)) end, "addmm_: " .. INTERNAL)
  -- PyTorch lets these through with a deprecation warning; lutorch's kernels
  -- would lose some of the writes (they work on a copy and write it back)
  T.raises(function() e:masked_fill_(torch.ones(3, 3):bool(), 1) end, "masked_fill_: " .. INTERNAL)
  T.raises(function() e:index_fill_(1, torch.tensor { 1 }, 1) end, "index_fill_: " .. INTERNAL)
end)

T.test("expanded out=", function()
  local a = torch.ones(3, 3)
  T.raises(function() torch.add(a, 1, { out = expanded() }) end, "add: argument 'out': " .. INTERNAL)
  T.raises(function() torch.mul(a, a, { out = expanded() }) end, "mul: argument 'out': " .. INTERNAL)
  T.raises(function() torch.sin(a, { out = expanded() }) end, "sin: argument 'out': " .. INTERNAL)
  T.raises(function() torch.mm(a, a, { out = expanded() }) end, "mm: argument 'out': " .. INTERNAL)
  T.raises(function() torch.cat({ a }, 1, { out = expanded() }) end, "cat: argument 'out': " .. INTERNAL)
  T.raises(function() torch.where(a:bool(), a, a, { out = expanded() }) end, "where: argument 'out': " .. INTERNAL)
  -- PyTorch's reductions skip the check and give 9s here; refused instead
  T.raises(function() torch.sum(a, 1, { out = torch.zeros(1):expand(3) }) end, "sum: argument 'out': " .. INTERNAL)
  -- a composite op names itself
  T.raises(function() torch.ldexp(a, a, { out = expanded() }) end, "ldexp: argument 'out': " .. INTERNAL)
  T.raises(function() expanded():ldexp_(torch.ones(3)) end, "ldexp_: " .. INTERNAL)
end)

T.test("fill_ and zero_ accept an expanded tensor, as in PyTorch", function()
  local base = torch.ones(1, 3)
  local e = base:expand(3, 3)
  e:fill_(7)
  T.tensor(base, { { 7, 7, 7 } })
  e:zero_()
  e:fill(2)                                   -- Torch7's names
  e:zero()
  T.tensor(e, { { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } })
  -- assigning a number through Lua indexing is a fill too; a tensor is a copy
  local f = torch.zeros(1, 3):expand(3, 3)
  f[{ {}, 1 }] = 5
  T.tensor(f, { { 5, 0, 0 }, { 5, 0, 0 }, { 5, 0, 0 } })
  T.raises(function() f[{ {}, 2 }] = torch.tensor { 1., 2., 3. } end, "index: " .. INTERNAL)
  T.tensor(f, { { 5, 0, 0 }, { 5, 0, 0 }, { 5, 0, 0 } })
end)

T.test("size-1 and empty dims with stride 0 are not overlap", function()
  local x = torch.zeros(3):view(1, 3)
  x:expand(1, 3):add_(1)                      -- expanding to the same size: stride 0 on a size-1 dim
  T.tensor(x, { { 1, 1, 1 } })
  local z = torch.zeros(1, 0):expand(3, 0)
  z:add_(1)
  T.eq(z:size(), { 3, 0 })
  local s = torch.zeros(1)
  s:expand(1):mul_(3)
end)

T.test("overlapping windows (unfold) are refused, separate ones work", function()
  local x = ar(5)
  -- windows of 3 with step 1 share elements: PyTorch lets this through and gives garbage
  T.raises(function() x:unfold(1, 3, 1):add_(1) end, "add_: " .. INTERNAL)
  T.tensor(x, { 1, 2, 3, 4, 5 })
  local y = ar(8)
  y:unfold(1, 2, 3):mul_(10)                  -- windows {1,2}, {4,5}, {7,8}: apart
  T.tensor(y, { 10, 20, 3, 40, 50, 6, 70, 80 })
end)

T.test("transposed and strided destinations still work", function()
  local a = torch.arange(1., 7.):view(2, 3)
  a:t():add_(torch.tensor { 10., 20. })      -- a's columns get 10 and 20 by row
  T.tensor(a, { { 11, 12, 13 }, { 24, 25, 26 } })
  a:select(2, 2):mul_(2)                      -- a strided column
  T.tensor(a, { { 11, 24, 13 }, { 24, 50, 26 } })
  local b = torch.zeros(4, 4)
  b:diagonal():fill_(1):add_(1)
  T.tensor(b:diagonal(), { 2, 2, 2, 2 })
  torch.add(torch.ones(3, 2), 1, { out = torch.zeros(2, 3):t() })   -- a transposed out=
  local o = torch.zeros(2, 3)
  torch.mul(torch.ones(3, 2), 3, { out = o:t() })
  T.tensor(o, { { 3, 3, 3 }, { 3, 3, 3 } })
end)

T.test("partial overlap: copy_ and in-place ops", function()
  local x = ar(6)
  T.raises(function() x[{ { 3, 4 } }]:copy_(x[{ { 2, 3 } }]) end, "copy_: argument 'src': " .. PARTIAL)
  local a = ar(6)
  T.raises(function() a:narrow(1, 2, 3):add_(a:narrow(1, 1, 3)) end, "add_: argument 'other': " .. PARTIAL)
  T.raises(function() a:narrow(1, 2, 3):lerp_(a:narrow(1, 1, 3), 0.5) end, "lerp_: argument 'end': " .. PARTIAL)
  T.raises(function() a:narrow(1, 2, 3):addcmul_(torch.ones(3), a:narrow(1, 1, 3)) end,
           "addcmul_: argument 'tensor2': " .. PARTIAL)
  local m = torch.arange(1., 10.):view(3, 3)
  T.raises(function() m:add_(m:t()) end, "add_: argument 'other': " .. PARTIAL)
  -- a 0-d view of one of x's own elements overlaps x (PyTorch refuses it too)
  T.raises(function() a:mul_(a:select(1, 1)) end, "mul_: argument 'other': " .. PARTIAL)
  -- one element broadcast over x: PyTorch misses this one (it gives 4, 8, 8)
  local t = torch.full({ 3 }, 2.)
  T.raises(function() t:mul_(t[{ { 1 } }]:expand(3)) end, "mul_: argument 'other': " .. PARTIAL)
  T.tensor(x, { 1, 2, 3, 4, 5, 6 })
  T.tensor(a, { 1, 2, 3, 4, 5, 6 })
  -- the clone() the message asks for
  x[{ { 3, 4 } }]:copy_(x[{ { 2, 3 } }]:clone())
  T.tensor(x, { 1, 2, 2, 3, 5, 6 })
end)

T.test("partial overlap: out=", function()
  local x = ar(6)
  T.raises(function() torch.add(x[{ { 1, 3 } }], 1, { out = x[{ { 2, 4 } }] }) end, "add: argument 'self': " .. PARTIAL)
  T.raises(function() torch.neg(x[{ { 1, 3 } }], { out = x[{ { 2, 4 } }] }) end, "neg: argument 'self': " .. PARTIAL)
  T.raises(function() torch.cumsum(x[{ { 1, 3 } }], 1, { out = x[{ { 2, 4 } }] }) end, "cumsum: argument 'self': " .. PARTIAL)
  local m = torch.arange(1., 13.):view(4, 3)
  T.raises(function() torch.mm(m:narrow(1, 1, 3), torch.eye(3), { out = m:narrow(1, 2, 3) }) end,
           "mm: argument 'self': " .. PARTIAL)
  -- PyTorch's reductions skip this check (and give 1, 2, 3 here instead of 5, 7, 9)
  T.raises(function() torch.sum(m:narrow(1, 1, 2), 1, true, { out = m:narrow(1, 2, 1) }) end, "sum: argument 'self': " .. PARTIAL)
  T.tensor(x, { 1, 2, 3, 4, 5, 6 })
end)

T.test("the identical view stays allowed", function()
  local a = ar(4)
  a:add_(a)
  T.tensor(a, { 2, 4, 6, 8 })
  a:mul_(a:view(4))                           -- another header, same elements
  T.tensor(a, { 4, 16, 36, 64 })
  a:view(2, 2):sub_(a:view(2, 2))
  T.tensor(a, { 0, 0, 0, 0 })
  local b = ar(3)
  torch.mul(b, 2, { out = b })
  torch.add(b, b, { out = b })
  T.tensor(b, { 4, 8, 12 })
  b:copy_(b)
  b:view(1, 3):addcmul_(b, b)
  T.tensor(b, { 20, 72, 156 })
  local m = torch.arange(1., 5.):view(2, 2)
  m:addmm_(m, m)                              -- read-all kernels copy what they read
  T.tensor(m, { { 8, 12 }, { 18, 26 } })
  torch.mm(m, m, { out = m })
  T.tensor(m, { { 280, 408 }, { 612, 892 } })
  -- disjoint parts of one storage are not overlap
  local x = ar(6)
  x[{ { 1, 2 } }]:copy_(x[{ { 5, 6 } }])
  x:select(1, 3):add_(x:select(1, 4))
  T.tensor(x, { 5, 6, 7, 4, 5, 6 })
end)

T.test("interleaved views are too hard to decide and pass, as in PyTorch", function()
  local x = ar(8)
  local v = x:view(4, 2)
  v:select(2, 1):add_(v:select(2, 2))         -- the odd elements += the even ones: apart
  T.tensor(x, { 3, 2, 7, 4, 11, 6, 15, 8 })
end)

T.test("ops that read inputs while writing refuse even the same view", function()
  local function M() return torch.arange(1., 5.):view(2, 2) end
  local x = M()
  T.raises(function() torch.index_select(x, 1, torch.tensor { 2, 1 }, { out = x }) end, "index_select: argument 'self': " .. SAME)
  T.raises(function() torch.gather(x, 1, torch.tensor { { 2, 1 }, { 1, 2 } }, { out = x }) end, "gather: argument 'self': " .. SAME)
  T.raises(function() x:index_add_(1, torch.tensor { 2, 1 }, x) end, "index_add_: argument 'source': " .. SAME)
  T.raises(function() x:index_copy_(1, torch.tensor { 2, 1 }, x) end, "index_copy_: argument 'source': " .. SAME)
  T.raises(function() x:scatter_(1, torch.tensor { { 2, 1 }, { 1, 2 } }, x) end, "scatter_: argument 'src': " .. SAME)
  T.raises(function() x:masked_scatter_(torch.ones(2, 2):bool(), x) end, "masked_scatter_: argument 'source': " .. SAME)
  T.raises(function() torch.cat({ x }, 1, { out = x }) end, "cat: argument 'tensors' (element 1): " .. SAME)
  T.raises(function() torch.cat({ x:narrow(1, 2, 1), x:narrow(1, 1, 1) }, 1, { out = x }) end,
           "cat: argument 'tensors' (element 1): " .. PARTIAL)
  T.tensor(x, { { 1, 2 }, { 3, 4 } })
  -- the result starting as self: self may be out itself
  local y = M()
  torch.index_add(y, 1, torch.tensor { 1 }, torch.ones(1, 2), { out = y })
  T.tensor(y, { { 2, 3 }, { 3, 4 } })
  y:index_add_(1, torch.tensor { 2, 1 }, y:clone())
  T.tensor(y, { { 5, 7 }, { 5, 7 } })
end)

T.test("lists: _foreach ops name the element", function()
  local ok1 = torch.zeros(2)
  T.raises(function() torch._foreach_add_({ ok1, torch.zeros(1):expand(2) }, { torch.ones(2), torch.ones(2) }) end,
           "_foreach_add_: argument 'self' (element 2): " .. INTERNAL)
  T.tensor(ok1, { 0, 0 })                     -- nothing was written
  local p = ar(4)
  T.raises(function() torch._foreach_add_({ p:narrow(1, 2, 2) }, { p:narrow(1, 1, 2) }) end,
           "_foreach_add_: argument 'other' (element 1): " .. PARTIAL)
  torch._foreach_add_({ p }, { p })
  T.tensor(p, { 2, 4, 6, 8 })
end)

T.test("a refused op leaves the version counter alone", function()
  -- sin saves h for backward; a write into h would make backward refuse
  local x = torch.ones(1, 3, { requires_grad = true })
  local h = x * 2
  local s = h:sin()
  T.raises(function() h:expand(3, 3):add_(1) end, "add_: " .. INTERNAL)
  s:sum():backward()
  T.near(x.grad:totable(), { { 2 * math.cos(2), 2 * math.cos(2), 2 * math.cos(2) } }, 1e-6)
end)

T.test("autograd: a grad kept from a create_graph pass accumulates once", function()
  -- sum's backward hands an expanded gradient; a second backward used to add
  -- into it in place, three times into one location (4s instead of 2s)
  local x = torch.ones(3, { requires_grad = true })
  x:sum():backward({ create_graph = true })
  x:sum():backward()
  T.tensor(x.grad, { 2, 2, 2 })
  -- and the grad can be updated in place afterwards (clip_grad_norm_, optimizers)
  local w = torch.ones(3, { requires_grad = true })
  w:sum():backward({ create_graph = true })
  w.grad:mul_(3)
  T.tensor(w.grad, { 3, 3, 3 })
end)

T.test("training still works: nn, optim and an expanded input", function()
  torch.manual_seed(0)
  local nn, optim = require "nn", require "optim"
  local model = nn.Sequential(nn.Linear(3, 4), nn.ReLU({ inplace = true }), nn.Linear(4, 1))
  local opt = optim.SGD(model:parameters(), { lr = 0.1, momentum = 0.9, weight_decay = 1e-3 })
  local x = torch.randn(1, 3):expand(5, 3)    -- an expanded input is read, never written
  for _ = 1, 3 do
    opt:zero_grad()
    local loss = model(x):pow(2):mean()
    loss:backward()
    nn.utils.clip_grad_norm_(model:parameters(), 1.0)
    opt:step()
  end
  T.ok(model(x):sum():item() == model(x):sum():item())
end)

T.done()
