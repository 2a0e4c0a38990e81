-- torch.compile: the row kernels' backward (layer_norm -> run, run -> softmax/log_softmax)
-- and pointwise runs fused into a following sum or mean.
local T = require "testing"
local nn = require "nn"
local F = nn.functional
local C = require "compile"

local S = T.scratch()
C.cache_dir_override = S.dir .. "/cache"

local function max_diff(a, b) return (a - b):abs():max():item() end
local function rel_err(a, b)
  return max_diff(a, b) / math.max(b:abs():max():item(), 1e-30)
end
local function tol(dt) return dt == torch.float32 and 1e-5 or 1e-12 end

-- values and gradients of the compiled fn against eager's, for inputs (a list) and one
-- incoming gradient per output
local function check_grads(fn, inputs, what)
  local f = torch.compile(fn)
  local outs = { f(table.unpack(inputs)) }
  local eouts = { fn(table.unpack(inputs)) }
  local gys = {}
  for k, o in ipairs(eouts) do gys[k] = torch.randn(o.shape, { dtype = o.dtype }) end
  local want = {}
  for _, x in ipairs(inputs) do if x.requires_grad then want[#want + 1] = x end end
  local g1 = torch.autograd.grad(outs, want, gys)
  local g2 = torch.autograd.grad(eouts, want, gys)
  local dt = inputs[1].dtype
  for k = 1, #outs do T.ok(rel_err(outs[k], eouts[k]) < tol(dt), ("%s %s: output %d"):format(what, dt, k)) end
  for k = 1, #want do
    local e = rel_err(g1[k], g2[k])
    T.ok(e < tol(dt), ("%s %s: gradient %d, relative error %g"):format(what, dt, k, e))
  end
  return f, outs
end

local function rand(shape, dt, rg)
  return torch.randn(shape, { dtype = dt, requires_grad = rg })
end

T.test("layer_norm -> run: one autograd node, gradients of x, weight, bias and a broadcast input", function()
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    local fn = function(x, w, b, r) return x + F.gelu(F.layer_norm(x, { 48 }, w, b)) * r end
    -- 70 rows: more than one block of the weight's partial sums, and a partial last block
    local x, w, b, r = rand({ 70, 48 }, dt, true), rand({ 48 }, dt, true), rand({ 48 }, dt, true), rand({ 48 }, dt, true)
    local f, outs = check_grads(fn, { x, w, b, r }, "layer_norm+gelu")
    T.eq(f:graphs()[1].kernels, 1)
    T.eq(tostring(outs[1].grad_fn), "<CompiledLayerNormRowsBackward>")
  end
end)

T.test("layer_norm -> run: the normalized value kept, no weight or bias, 3-D input", function()
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    local kept = function(x, w) local h = F.layer_norm(x, { 16 }, w); return torch.tanh(h) * 2, h end
    check_grads(kept, { rand({ 3, 5, 16 }, dt, true), rand({ 16 }, dt, true) }, "kept norm")
    local plain = function(x) return F.silu(F.layer_norm(x, { 16 }) * 3) end
    check_grads(plain, { rand({ 3, 5, 16 }, dt, true) }, "no weight")
  end
end)

T.test("layer_norm -> run: only some inputs need gradients", function()
  local fn = function(x, w, b) return torch.sigmoid(F.layer_norm(x, { 24 }, w, b)) * x end
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    -- a frozen input: only the weight and bias
    check_grads(fn, { rand({ 9, 24 }, dt, false), rand({ 24 }, dt, true), rand({ 24 }, dt, true) }, "w,b only")
    -- frozen parameters: only x
    check_grads(fn, { rand({ 9, 24 }, dt, true), rand({ 24 }, dt, false), rand({ 24 }, dt, false) }, "x only")
  end
end)

T.test("layer_norm -> run: gradcheck in float64", function()
  local f = torch.compile(function(x, w, b, r) return F.gelu(F.layer_norm(x, { 6 }, w, b) + r) * x end)
  local d = torch.float64
  T.ok(torch.autograd.gradcheck(f, { rand({ 4, 6 }, d, true), rand({ 6 }, d, true), rand({ 6 }, d, true),
                                     rand({ 6 }, d, true) }))
end)

T.test("layer_norm backward: weight gradients do not depend on the thread count", function()
  local f = torch.compile(function(x, w, b) return torch.tanh(F.layer_norm(x, { 64 }, w, b)) * 2 end)
  local x, w, b = rand({ 300, 64 }, torch.float32, true), rand({ 64 }, torch.float32, true), rand({ 64 }, torch.float32, true)
  local gy = torch.randn(300, 64)
  local threads = torch.get_num_threads()
  local saved = C.config.grain
  C.config.grain = 64          -- small tasks: the blocks are spread over every thread
  local g = {}
  for k, n in ipairs({ 1, 2 }) do
    torch.set_num_threads(n)
    g[k] = torch.autograd.grad({ f(x, w, b) }, { x, w, b }, { gy })
  end
  torch.set_num_threads(threads)
  C.config.grain = saved
  for i = 1, 3 do T.eq(max_diff(g[1][i], g[2][i]), 0.0) end
end)

T.test("run -> softmax / log_softmax: one autograd node, gradients of the scores and a broadcast mask", function()
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    local sm = function(s, m) return F.softmax(s * 0.125 + m, -1) end
    local lsm = function(s, m) return F.log_softmax(torch.tanh(s) - m, -1) end
    for name, fn in pairs({ softmax = sm, log_softmax = lsm }) do
      local f, outs = check_grads(fn, { rand({ 4, 7, 33 }, dt, true), rand({ 7, 33 }, dt, true) }, name)
      T.eq(f:graphs()[1].kernels, 1)
      T.eq(tostring(outs[1].grad_fn), "<CompiledSoftmaxRowsBackward>")
    end
    -- one op before the softmax, and the run's value used afterwards too
    check_grads(function(s) return F.softmax(s * 2, -1) end, { rand({ 5, 9 }, dt, true) }, "one op")
    check_grads(function(s, m) local z = s + m; return F.softmax(torch.exp(z) * 0.5, -1), z end,
      { rand({ 5, 9 }, dt, true), rand({ 9 }, dt, false) }, "value kept")
  end
end)

T.test("run -> softmax: gradcheck in float64", function()
  local d = torch.float64
  for _, fn in ipairs({ function(s, m) return F.softmax(torch.sigmoid(s) * 3 + m, -1) end,
                        function(s, m) return F.log_softmax(s * m, 2) end }) do
    T.ok(torch.autograd.gradcheck(torch.compile(fn), { rand({ 3, 5 }, d, true), rand({ 5 }, d, true) }))
  end
end)

T.test("run -> softmax: a causal -inf mask, and a row all -inf (NaN as in eager)", function()
  local mask = torch.zeros(6, 6)
  for i = 1, 6 do for j = i + 1, 6 do mask[i][j] = -math.huge end end
  local fn = function(s, m) return F.softmax(s * 0.5 + m, -1) end
  local s = rand({ 6, 6 }, torch.float32, true)
  check_grads(fn, { s, mask }, "causal")
  local m2 = mask:clone()
  m2[3]:fill(-math.huge)
  local f = torch.compile(fn)
  local y, ye = f(s, m2), fn(s, m2)
  local g = torch.autograd.grad({ y }, { s }, { torch.ones(6, 6) })[1]
  local ge = torch.autograd.grad({ ye }, { s }, { torch.ones(6, 6) })[1]
  for j = 1, 6 do
    local function num(v) return type(v) == "number" and v or v:item() end
    local a, b, c, d = num(y[3][j]), num(ye[3][j]), num(g[3][j]), num(ge[3][j])
    T.ok(a ~= a and b ~= b, "an all -inf row is NaN")
    T.ok(c ~= c and d ~= d, "and so is its gradient")
  end
  T.ok(max_diff(y:narrow(1, 1, 2), ye:narrow(1, 1, 2)) < 1e-6)
  T.ok(max_diff(g:narrow(1, 1, 2), ge:narrow(1, 1, 2)) < 1e-6)
end)

T.test("row kernels under autograd with an op that has no derivative rule: op by op, correct", function()
  local fn = function(s, e) return F.softmax(torch.pow(s, e) + 1, -1) end
  local s, e = (torch.rand(4, 8, { dtype = torch.float64 }) + 0.5):requires_grad_(true), torch.rand(4, 8, { dtype = torch.float64 })
  local f, outs = check_grads(fn, { s, e }, "pow")
  T.eq(tostring(outs[1].grad_fn), "<SoftmaxBackward0>")
end)

-- ---- sums and means ----

T.test("a run fused into sum/mean over the last dim and over all elements", function()
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    local x, m = torch.randn(37, 100, { dtype = dt }), torch.randn(100, { dtype = dt })
    local cases = {
      { "sum(-1)", function(a, b) return (a * 2 + b):sum(-1) end },
      { "mean(-1, keepdim)", function(a, b) return (a * b):square():mean(-1, { keepdim = true }) end },
      { "torch.sum(dim = ndim)", function(a, b) return torch.sum(a * a, 2) end },
      { "sum()", function(a, b) return (a - b):exp():sum() end },
      { "mean()", function(a, b) return torch.mean(a * b + 1) end },
    }
    for _, c in ipairs(cases) do
      local f = torch.compile(c[2])
      local r, e = f(x, m), c[2](x, m)
      T.eq(tostring(r.shape), tostring(e.shape), c[1])
      T.eq(r.dtype, dt)
      local err = rel_err(r, e)
      T.ok(err < tol(dt), ("%s %s: relative error %g"):format(c[1], dt, err))
      T.eq(f:graphs()[1].kernels, 1, c[1])
    end
  end
end)

T.test("reductions: a large sum over all elements (several blocks), thread count independent", function()
  local x = torch.rand(100003, { dtype = torch.float64 })
  local fn = function(a) return (a * 3 + 1):sum() end
  local f = torch.compile(fn)
  T.ok(rel_err(f(x), fn(x)) < 1e-12)
  local threads = torch.get_num_threads()
  torch.set_num_threads(1)
  local one = f(x):item()
  torch.set_num_threads(2)
  local two = f(x):item()
  torch.set_num_threads(threads)
  T.eq(one, two)
  local x32 = torch.rand(100003)
  T.ok(rel_err(f(x32), fn(x32)) < 1e-5)
  -- 2-D: blocks of whole rows, a broadcast row; and both under autograd
  local g = function(a, r) return (a * r):mean() end
  local x2, r = torch.rand(300, 100, { dtype = torch.float64 }), torch.rand(100, { dtype = torch.float64 })
  T.ok(rel_err(torch.compile(g)(x2, r), g(x2, r)) < 1e-12)
  check_grads(g, { x2:clone():requires_grad_(true), r:clone():requires_grad_(true) }, "2-D mean()")
  check_grads(fn, { x:clone():requires_grad_(true) }, "1-D sum()")
end)

T.test("reductions: non-contiguous and broadcast inputs, NaN and infinite rows", function()
  local fn = function(a, r) return (a * r - 1):sum(-1) end
  local f = torch.compile(fn)
  local xt, r = torch.randn(40, 30):t(), torch.randn(40)
  T.ok(rel_err(f(xt, r), fn(xt, r)) < 1e-5)
  local x = torch.randn(4, 40)
  x[2][5] = 0 / 0
  x[3][7] = math.huge
  x[4][1] = -math.huge
  local y, e = f(x, r), fn(x, r)
  for i = 1, 4 do
    local a, b = y[i], e[i]
    T.ok((a ~= a and b ~= b) or a == b or math.abs(a - b) <= 1e-5 * math.max(1, math.abs(b)), ("row %d: %s vs %s"):format(i, a, b))
  end
end)

T.test("reductions left to the op: other dims, a dtype, the run's value used again", function()
  local x = torch.randn(12, 10)
  local cases = {
    { function(a) return (a * 2 + 1):sum(1) end, 1 },                        -- not the last dim
    { function(a) return (a * 2 + 1):sum(-1, { dtype = torch.float64 }) end, 1 }, -- a conversion
    { function(a) local y = a * 2 + 1; return y:sum(-1), y end, 1 },         -- y returned too
    { function(a) local y = a * 2 + 1; return y:mean() + y:sum() end, 1 },   -- y used twice
  }
  for i, c in ipairs(cases) do
    local f = torch.compile(c[1])
    local r, e = { f(x) }, { c[1](x) }
    for k = 1, #e do T.ok(rel_err(r[k], e[k]) < 1e-5, ("case %d output %d"):format(i, k)) end
    T.eq(f:graphs()[1].kernels, c[2], "case " .. i)
  end
end)

T.test("reductions under autograd: one autograd node, gradients as eager's", function()
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    local f, outs = check_grads(function(a, b) return (torch.tanh(a) * b):sum(-1) end,
      { rand({ 6, 11 }, dt, true), rand({ 11 }, dt, true) }, "sum(-1)")
    T.eq(tostring(outs[1].grad_fn), "<CompiledReductionBackward>")
    check_grads(function(a) return (a * a + 1):mean() end, { rand({ 6, 11 }, dt, true) }, "mean()")
    check_grads(function(a, b) return (a - b):square():mean(-1, { keepdim = true }) end,
      { rand({ 2, 3, 9 }, dt, true), rand({ 3, 1 }, dt, true) }, "mean(-1, keepdim), a column broadcast")
    -- the run's other value is an output too: both gradients flow back
    check_grads(function(a) local y = torch.sigmoid(a) * 2; return (y + 1):sum(), y end,
      { rand({ 4, 5 }, dt, true) }, "sum() and a kept value")
  end
  local d = torch.float64
  T.ok(torch.autograd.gradcheck(torch.compile(function(a) return (torch.sin(a) * 2):mean(-1) end), { rand({ 3, 4 }, d, true) }))
  T.ok(torch.autograd.gradcheck(torch.compile(function(a, b) return (a * b + a):sum() end),
    { rand({ 3, 4 }, d, true), rand({ 4 }, d, true) }))
  -- an op without a derivative rule: the ops one by one
  local f, outs = check_grads(function(a, e) return torch.pow(a, e):sum(-1) end,
    { (torch.rand(3, 4, { dtype = d }) + 0.5):requires_grad_(true), torch.rand(3, 4, { dtype = d }) }, "pow")
  T.ok(tostring(outs[1].grad_fn):find("^<SumBackward") ~= nil)
  -- with no_grad the fused kernel runs on inputs that require grad
  local g = torch.compile(function(a) return (a * 2):sum(-1) end)
  local a = rand({ 5, 8 }, torch.float32, true)
  local r = torch.no_grad(function() return g(a) end)
  T.ok(not r.requires_grad)
  T.ok(rel_err(r, (a * 2):sum(-1):detach()) < 1e-5)
end)

T.test("residual inputs: a gradient passed on as the incoming one, not a copy, stays right", function()
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    local cases = {
      { "x + tanh(y)", function(x, y) return x + torch.tanh(y) end, { 3, 5 }, { 3, 5 } },
      { "broadcast residual", function(x, y) return torch.tanh(y) * 2 + x end, { 5 }, { 3, 5 } },
      { "a - tanh(b), tanh(a) - b", function(x, y) return (x - torch.tanh(y)) * 1 + (torch.tanh(x) - y) end, { 3, 5 }, { 3, 5 } },
      { "x used twice", function(x, y) return x + x * torch.sigmoid(y) end, { 3, 5 }, { 3, 5 } },
      { "add with alpha", function(x, y) return torch.add(torch.exp(y), x, { alpha = 3 }) end, { 3, 5 }, { 3, 5 } },
      { "two outputs", function(x, y) local z = x + torch.sin(y); return z * 1.0, z + 1 end, { 3, 5 }, { 3, 5 } },
      { "softmax", function(x, y) local z = torch.exp(y) + x; return F.softmax(z * 2, -1), z + 0 end, { 3, 5 }, { 3, 5 } },
      { "sum", function(x, y) local z = x + torch.cos(y); return (z * z):sum(-1), z - 1 end, { 3, 5 }, { 3, 5 } },
    }
    for _, c in ipairs(cases) do
      check_grads(c[2], { rand(c[3], dt, true), rand(c[4], dt, true) }, c[1])
    end
  end
  local d = torch.float64
  T.ok(torch.autograd.gradcheck(torch.compile(function(x, y) return torch.tanh(y) * 2 + x end),
    { rand({ 5 }, d, true), rand({ 3, 5 }, d, true) }))
  -- only the residual input needs a gradient
  check_grads(function(x, y) return x + F.gelu(F.layer_norm(y, { 5 })) end,
    { rand({ 3, 5 }, torch.float64, true), rand({ 3, 5 }, torch.float64, false) }, "residual only")
end)

T.test("backward with non-contiguous inputs (transposed, sliced)", function()
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    local st = rand({ 9, 6 }, dt, true)
    local sl = rand({ 6, 20 }, dt, true)
    local m = rand({ 9 }, dt, true)
    local sm = function(a, b) return F.log_softmax(a:t() * 0.5 + b, -1) end
    check_grads(sm, { st, m }, "softmax of a transposed input")
    local red = function(a, b) return (torch.tanh(a:narrow(2, 3, 9)) * b):sum(-1) end
    check_grads(red, { sl, m }, "sum of a slice")
    local ln = function(a, b) return F.gelu(F.layer_norm(a:t():contiguous(), { 9 }) * b) end
    check_grads(ln, { st, m }, "layer_norm after a copy")
  end
end)

T.test("a small transformer block trains the same compiled (float64 loss and every gradient)", function()
  torch.manual_seed(1)
  local d = torch.float64
  local C, H, L = 16, 2, 8
  local ln1, ln2 = nn.LayerNorm(C):to(d), nn.LayerNorm(C):to(d)
  local qkv, proj = nn.Linear(C, 3 * C):to(d), nn.Linear(C, C):to(d)
  local fc, out = nn.Linear(C, 4 * C):to(d), nn.Linear(4 * C, C):to(d)
  local mask = torch.zeros(L, L, { dtype = d })
  for i = 1, L do for j = i + 1, L do mask[i][j] = -math.huge end end
  local function block(x)
    local B = x.shape[1]
    local q, k, v = table.unpack(qkv(ln1(x)):split(C, 3))
    q = q:reshape(B, L, H, C // H):transpose(2, 3)
    k = k:reshape(B, L, H, C // H):transpose(2, 3)
    v = v:reshape(B, L, H, C // H):transpose(2, 3)
    local att = F.softmax(torch.matmul(q, k:transpose(3, 4)) * (1 / math.sqrt(C // H)) + mask, -1)
    x = x + proj(torch.matmul(att, v):transpose(2, 3):reshape(B, L, C))
    -- a layer_norm feeding pointwise ops (fused with its backward), then a fused mean
    local h = F.gelu(F.layer_norm(x, { C }, ln2.weight, ln2.bias) * 1.5)
    return (x + out(F.gelu(fc(h)))):square():mean()
  end
  local params = {}
  for _, m in ipairs({ ln1, ln2, qkv, proj, fc, out }) do
    for _, p in ipairs(m:parameters()) do params[#params + 1] = p end
  end
  local x = torch.randn(3, L, C, { dtype = d, requires_grad = true })
  local want = { x, table.unpack(params) }
  local fb = torch.compile(block)
  local l1, l2 = fb(x), block(x)
  T.ok(math.abs(l1:item() - l2:item()) <= 1e-12 * math.abs(l2:item()))
  local g1, g2 = torch.autograd.grad({ l1 }, want), torch.autograd.grad({ l2 }, want)
  for i = 1, #want do
    local e = rel_err(g1[i], g2[i])
    T.ok(e < 1e-10, ("gradient %d: relative error %g"):format(i, e))
  end
  T.ok(fb:graphs()[1].kernels >= 2, "the softmax and the layer_norm row kernels")
end)

S.remove()
T.done()
