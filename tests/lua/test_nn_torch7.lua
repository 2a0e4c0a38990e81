-- Torch7 spellings: forward/backward/updateParameters, criteria, getParameters, the
-- Torch7 class names, and a Torch7 training loop against the PyTorch-style one.
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path
local T = require "testing"
local nn = require "nn"
local F = nn.functional

torch.manual_seed(1)

local function mlp()
  return nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3), nn.LogSoftMax())
end

local X = torch.randn(32, 5, { dtype = torch.float64 })
local Y = (X:narrow(2, 1, 1):gt(0):long() + X:narrow(2, 2, 1):gt(0.5):long()):view(-1) + 1   -- classes 1..3

T.test("a Torch7 loop trains an MLP to the same loss as the PyTorch-style loop", function()
  local a = mlp():double()
  local b = mlp():double()
  b:load_state_dict(a:state_dict())
  local lr = 0.1
  -- PyTorch style
  local crit_a = nn.NLLLoss()
  local la
  for _ = 1, 25 do
    a:zero_grad()
    local loss = crit_a(a(X), Y)
    loss:backward()
    torch.no_grad(function()
      for _, p in ipairs(a:parameters()) do p:sub_(p.grad * lr) end
    end)
    la = loss:item()
  end
  -- Torch7 style
  local crit_b = nn.ClassNLLCriterion()
  local lb
  for _ = 1, 25 do
    local out = b:forward(X)
    lb = crit_b:forward(out, Y)
    T.ok(type(lb) == "number")
    b:zeroGradParameters()
    b:backward(X, crit_b:backward(out, Y))
    b:updateParameters(lr)
  end
  T.near(lb, la, 1e-12)
  local pa, pb = a:parameters(), b:parameters()
  for i = 1, #pa do T.tensor(pb[i], pa[i]:totable(), { tol = 1e-12 }) end
  T.ok(la < 1.0)
end)

T.test("backward returns gradInput and accumulates into the parameters' grads", function()
  local m = nn.Linear(3, 2):double()
  local x = torch.randn(4, 3, { dtype = torch.float64 })
  local out = m:forward(x)
  T.ok(m.output == out)
  local go = torch.randn(4, 2, { dtype = torch.float64 })
  local gi = m:backward(x, go)
  T.tensor(gi, go:mm(m.weight):totable(), { tol = 1e-12 })
  T.tensor(m.weight.grad, go:t():mm(x):totable(), { tol = 1e-12 })
  m:backward(x, go)   -- accumulates
  T.tensor(m.weight.grad, (go:t():mm(x) * 2):totable(), { tol = 1e-12 })
  T.tensor(m.bias.grad, (go:sum(1) * 2):totable(), { tol = 1e-12 })
  m:zeroGradParameters()
  T.eq(m.weight.grad:abs():sum():item(), 0.0)
  -- module-local: a chain of two modules, each backward on its own
  local m1, m2 = nn.Linear(3, 4):double(), nn.Tanh()
  local h = m1:forward(x)
  local y = m2:forward(h)
  local gh = m2:backward(h, torch.ones_like(y))
  T.tensor(gh, (1 - y:detach():square()):totable(), { tol = 1e-12 })
  T.eq(m1.weight.grad, nil)   -- m2's backward stops at its input
  m1:backward(x, gh)
  T.tensor(m1.bias.grad, gh:sum(1):totable(), { tol = 1e-12 })
  T.raises(function() nn.Linear(2, 2):backward(torch.ones(1, 2), torch.ones(1, 2)) end, "backward() called before forward()")
end)

T.test("getParameters: parameters and grads are views of two flat tensors", function()
  local m = nn.Sequential(nn.Linear(3, 2), nn.Tanh(), nn.Linear(2, 1)):double()
  local before = nn.utils.parameters_to_vector(m:parameters()):detach():clone()
  local flat, gflat = m:getParameters()
  T.eq(flat.shape, { 11 })
  T.tensor(flat, before:totable())
  -- writing the flat tensor changes the layers
  flat:fill_(0.5)
  T.tensor(m[1].weight, { { 0.5, 0.5, 0.5 }, { 0.5, 0.5, 0.5 } })
  -- backward accumulates into the flat grad
  local x = torch.randn(4, 3, { dtype = torch.float64 })
  local out = m:forward(x)
  m:zeroGradParameters()
  m:backward(x, torch.ones_like(out))
  T.ok(gflat:abs():sum():item() > 0)
  T.tensor(gflat:narrow(1, 11, 1), { 4.0 })   -- the last bias: d sum(out) / d b = batch size
  -- autograd's own backward too
  m:zero_grad()
  T.eq(gflat:abs():sum():item(), 0.0)
  m(x):sum():backward()
  T.tensor(gflat:narrow(1, 11, 1), { 4.0 })
  -- an SGD step on the flat tensors moves the layers
  local w0 = m[3].bias:item()
  flat:add_(gflat, { alpha = -0.1 })
  T.near(m[3].bias:item(), w0 - 0.4, 1e-12)
end)

T.test("criteria: forward gives a number, backward d loss / d input", function()
  local x = torch.randn(4, 3, { dtype = torch.float64 })
  local t = torch.randn(4, 3, { dtype = torch.float64 })
  local c = nn.MSECriterion()
  T.near(c:forward(x, t), (x - t):square():mean():item(), 1e-12)
  T.tensor(c:backward(x, t), ((x - t) * (2 / 12)):totable(), { tol = 1e-12 })
  local cs = nn.MSECriterion(false)   -- sizeAverage = false
  T.near(cs:forward(x, t), (x - t):square():sum():item(), 1e-12)
  local lsm = F.log_softmax(x, 2)
  local y = torch.tensor({ 1, 3, 2, 2 })
  local nll = nn.ClassNLLCriterion()
  T.near(nll:forward(lsm, y), -(lsm[1][1] + lsm[2][3] + lsm[3][2] + lsm[4][2]) / 4, 1e-12)
  local g = nll:backward(lsm, y)
  T.tensor(g[2], { 0, 0, -0.25 })
  local ce = nn.CrossEntropyCriterion()
  T.near(ce:forward(x, y), nll:forward(lsm, y), 1e-12)
  local p = torch.rand(5, { dtype = torch.float64 }) * 0.8 + 0.1
  local tt = torch.tensor({ 1, 0, 1, 1, 0 }, { dtype = torch.float64 })
  local bce = nn.BCECriterion()
  local expect = -(tt * p:log() + (1 - tt) * (1 - p):log()):mean():item()
  T.near(bce:forward(p, tt), expect, 1e-12)
  T.tensor(bce:backward(p, tt), ((p - tt) / (p * (1 - p)) / 5):totable(), { tol = 1e-10 })
  -- PyTorch-named losses have backward too
  T.tensor(nn.MSELoss():backward(x, t), ((x - t) * (2 / 12)):totable(), { tol = 1e-12 })
end)

T.test("Torch7 class names: View, Reshape, table layers, SoftMax", function()
  local x = torch.randn(2, 3, 4)
  T.eq(nn.View(12)(x).shape, { 2, 12 })
  T.eq(nn.View(-1, 4)(x).shape, { 6, 4 })
  T.eq(nn.View(3, 4):setNumInputDims(2)(x).shape, { 2, 3, 4 })
  T.eq(nn.Reshape(12)(x).shape, { 2, 12 })
  T.eq(nn.Reshape(6, 4, false)(x).shape, { 6, 4 })
  local a, b = torch.randn(2, 3), torch.randn(2, 3)
  T.tensor(nn.CAddTable()({ a, b }), (a + b):totable(), { tol = 1e-6 })
  T.tensor(nn.JoinTable(2)({ a, b }), torch.cat({ a, b }, 2):totable())
  local ct = nn.ConcatTable():add(nn.Identity()):add(nn.MulConstant(2))
  local outs = ct(a)
  T.tensor(outs[2], (a * 2):totable())
  local pt = nn.ParallelTable():add(nn.MulConstant(3)):add(nn.Identity())
  T.tensor(pt({ a, b })[1], (a * 3):totable())
  local cat = nn.Concat(2):add(nn.Linear(3, 2)):add(nn.Linear(3, 4))
  T.eq(cat(a).shape, { 2, 6 })
  T.tensor(nn.SoftMax()(a):sum(2), { 1, 1 }, { tol = 1e-6 })
  T.tensor(nn.LogSoftMax()(a):exp():sum(2), { 1, 1 }, { tol = 1e-6 })
  -- a table container through backward: gradInput is a table
  local m = nn.Sequential(nn.ConcatTable():add(nn.Linear(3, 2)):add(nn.Linear(3, 2)), nn.CAddTable()):double()
  local xd = torch.randn(4, 3, { dtype = torch.float64 })
  local y = m:forward(xd)
  local gi = m:backward(xd, torch.ones_like(y))
  T.tensor(gi, torch.ones(4, 2, { dtype = torch.float64 }):mm(m[1][1].weight + m[1][2].weight):totable(), { tol = 1e-12 })
end)

T.test("type(), clearState()", function()
  local m = nn.Linear(2, 2)
  T.eq(m:type(), "torch.FloatTensor")
  m:type("torch.DoubleTensor")
  T.eq(m.weight.dtype.name, "float64")
  T.eq(m:type(), "torch.DoubleTensor")
  m:forward(torch.ones(1, 2, { dtype = torch.float64 }))
  T.ok(m.output ~= nil)
  m:clearState()
  T.eq(m.output, nil)
end)

T.test("SpatialConvolution / SpatialMaxPooling map onto Conv2d / MaxPool2d", function()
  local c = nn.SpatialConvolution(3, 8, 5, 3, 2, 1, 2, 1)   -- kW=5, kH=3, dW=2, dH=1, padW=2, padH=1
  T.eq(c.weight.shape, { 8, 3, 3, 5 })
  T.eq(c.stride, { 1, 2 })
  T.eq(c.padding, { 1, 2 })
  T.ok(nn.isinstance(c, nn.Conv2d))
  local p = nn.SpatialMaxPooling(2, 3, 1, 2)
  T.eq(p.kernel_size, { 3, 2 })
  T.eq(p.stride, { 2, 1 })
  if torch.conv2d == nil or torch.max_pool2d == nil then
    T.skip("SpatialConvolution forward", "torch.conv2d / torch.max_pool2d not in this build yet")
  else
    local x = torch.randn(1, 3, 10, 12)
    T.eq(c(x).shape, { 1, 8, 10, 6 })
    T.eq(p(x).shape, { 1, 3, 4, 11 })
  end
end)

T.done()
