-- Double backward (create_graph) through the normalisation and loss layers: float64
-- gradgradcheck for nll_loss, cross_entropy, layer_norm, group_norm and batch_norm (their
-- backwards are recomputed from differentiable ops under create_graph), a third-order
-- check, create_graph through the other nn layers whose backward is an op of its own
-- (conv, pooling, padding, resampling, embedding, activations), and a gradient penalty
-- ||d loss / d x||^2 and its gradients against PyTorch.
local T = require "testing"
local P = require "pyref"
local F = require("nn").functional
local f64 = torch.float64

torch.manual_seed(7)

local function leaf(...) return torch.randn({ ... }, { dtype = f64, requires_grad = true }) end
local function idx(v) return torch.tensor(v, { dtype = torch.int64 }) end

-- gradgradcheck checks the recorded (create_graph) backward against its own numerical
-- derivative; that it is the right gradient in the first place is checked here, against the
-- plain backward (the fused kernels, which test_nn_norm / test_nn_loss gradcheck)
local function ggc(fn, inputs)
  local outs = fn(table.unpack(inputs))
  if torch.is_tensor(outs) then outs = { outs } end
  local gos = {}
  for i, o in ipairs(outs) do gos[i] = torch.randn(o.shape, { dtype = f64 }) end
  local diff = {}
  for _, x in ipairs(inputs) do if x.requires_grad then diff[#diff + 1] = x end end
  local plain = torch.autograd.grad(outs, diff, { grad_outputs = gos, retain_graph = true, allow_unused = true })
  local rec = torch.autograd.grad(outs, diff, { grad_outputs = gos, create_graph = true, allow_unused = true })
  for i = 1, #diff do
    if plain[i] == nil or rec[i] == nil then
      if plain[i] ~= rec[i] then return false end
    elseif (plain[i] - rec[i]):abs():max():item() > 1e-10 * (1 + plain[i]:abs():max():item()) then
      return false
    end
  end
  return torch.autograd.gradgradcheck(fn, inputs)
end

-- the gradient of fn's (weighted) output with create_graph, as a function whose own
-- gradgradcheck is a third-order check of fn
local function grad_fn(fn, n)
  return function(...)
    local xs = { ... }
    local y = fn(...)
    local v = torch.linspace(-1, 1, y:numel(), { dtype = f64 }):reshape(y.shape)
    local gs = torch.autograd.grad({ (y * v):sum() }, { table.unpack(xs, 1, n) }, { create_graph = true })
    return (gs[1] * gs[1]):sum() + gs[1]:sum()
  end
end

T.test("nll_loss: each reduction, weight, ignore_index", function()
  local x = leaf(5, 4)
  local t = idx({ 1, 3, 2, 4, 3 })
  local w = torch.tensor({ 0.5, 2, 1.5, 1 }, { dtype = f64 })
  local nll = torch.nll_loss   -- (input, target, weight, reduction, ignore_index)
  for _, red in ipairs({ "mean", "sum", "none" }) do
    T.ok(ggc(function(a) return nll(a, t, nil, red) end, { x }), red)
    T.ok(ggc(function(a) return nll(a, t, w, red, 3) end, { x }), red .. " weight ignore_index")
    -- a nonlinear input so that the second derivative in x is not zero
    T.ok(ggc(function(a) return nll(torch.tanh(a), t, w, red) end, { x }), red .. " tanh")
    T.ok(ggc(function(a) return F.nll_loss(F.log_softmax(a, 2), t, w, { reduction = red, ignore_index = 4 }) end, { x }),
      red .. " F.nll_loss")
  end
  -- (N, C, d) input, unbatched input
  local x3 = leaf(2, 3, 2)
  local t3 = idx({ { 1, 3 }, { 2, 2 } })
  T.ok(ggc(function(a) return nll(torch.sin(a), t3, w:narrow(1, 1, 3), "mean", 2) end, { x3 }), "(N, C, d)")
  T.ok(ggc(function(a) return nll(torch.sin(a), t3, nil, "none") end, { x3 }), "(N, C, d) none")
  T.ok(ggc(function(a) return nll(torch.sin(a), idx(2)) end, { leaf(4) }), "unbatched")
end)

T.test("nll_loss and cross_entropy: gradients of the class weights", function()
  local gc = torch.autograd.gradcheck
  local nll = torch.nll_loss
  local x, w = leaf(5, 4), torch.rand(4, { dtype = f64 }):add(0.5):requires_grad_()
  local t = idx({ 1, 3, 2, 4, 3 })
  for _, red in ipairs({ "mean", "sum", "none" }) do
    T.ok(gc(function(a, b) return nll(a, t, b, red) end, { x, w }), red)
    T.ok(gc(function(a, b) return nll(a, t, b, red, 3) end, { x, w }), red .. " ignore_index")
    T.ok(ggc(function(a, b) return nll(torch.tanh(a), t, b, red, 2) end, { x, w }), red .. " second order")
    T.ok(ggc(function(a, b) return F.cross_entropy(a, t, b, { reduction = red, ignore_index = 4 }) end, { x, w }),
      red .. " cross_entropy")
    -- with label_smoothing and "mean" the divisor sum(w[t]) is recomputed from the weights
    -- (nll_loss's total_weight output carries no gradient)
    T.ok(ggc(function(a, b) return F.cross_entropy(a, t, b, { reduction = red, label_smoothing = 0.2, ignore_index = 4 }) end,
      { x, w }), red .. " cross_entropy label_smoothing")
  end
  local x3 = leaf(2, 3, 2)
  local t3 = idx({ { 1, 3 }, { 2, 2 } })
  T.ok(ggc(function(a, b) return nll(torch.sin(a), t3, b) end, { x3, w:narrow(1, 1, 3) }), "(N, C, d)")
  T.ok(ggc(function(a, b) return nll(torch.sin(a), idx(2), b) end, { leaf(4), w }), "unbatched")
  -- against the same loss written with index ops: -sum(w[t] x[n, t]) / sum(w[t])
  local y = nll(x, t, w)
  local gw = torch.autograd.grad({ y }, { w })[1]
  local wt = w:index_select(1, t)
  local xt = x:gather(2, t:unsqueeze(2)):squeeze(2)
  local ref = torch.autograd.grad({ -(wt * xt):sum() / wt:sum() }, { w })[1]
  T.ok((gw - ref):abs():max():item() < 1e-12)
end)

T.test("cross_entropy: weight, ignore_index, label_smoothing, probabilities", function()
  local x = leaf(4, 5)
  local t = idx({ 1, 2, 5, 2 })
  local w = torch.tensor({ 1, 0.5, 2, 1.5, 0.25 }, { dtype = f64 })
  for _, red in ipairs({ "mean", "sum", "none" }) do
    T.ok(ggc(function(a) return F.cross_entropy(a, t, { reduction = red }) end, { x }), red)
    T.ok(ggc(function(a) return F.cross_entropy(a, t, { weight = w, ignore_index = 2, reduction = red }) end, { x }),
      red .. " weight ignore_index")
    T.ok(ggc(function(a) return F.cross_entropy(a, t, { weight = w, label_smoothing = 0.2, reduction = red }) end, { x }),
      red .. " label_smoothing")
  end
  local p = torch.softmax(torch.randn(4, 5, { dtype = f64 }), 2)
  T.ok(ggc(function(a) return F.cross_entropy(a, p, { label_smoothing = 0.1 }) end, { x }), "probabilities")
  -- gradient w.r.t. probability targets too
  T.ok(ggc(function(a, q) return F.cross_entropy(a, torch.softmax(q, 2)) end, { x, leaf(4, 5) }), "target")
  local x3 = leaf(2, 3, 2)
  T.ok(ggc(function(a) return F.cross_entropy(a, idx({ { 1, 3 }, { 2, 2 } }), { label_smoothing = 0.3 }) end, { x3 }),
    "(N, C, d)")
end)

T.test("the example of the issue: a gradient penalty through cross_entropy", function()
  local x = leaf(4, 6)
  local y = F.cross_entropy(x, idx({ 1, 2, 3, 4 }))
  local g = torch.autograd.grad({ y }, { x }, { create_graph = true })[1]
  local gp = (g * g):sum()
  gp:backward()
  T.eq(x.grad.shape, x.shape)
  T.ok(x.grad:abs():sum():item() > 0)
end)

T.test("layer_norm: with and without weight / bias, 1 and 2 normalised dims", function()
  local x = leaf(3, 4)
  T.ok(ggc(function(a) return F.layer_norm(a, { 4 }) end, { x }), "plain")
  T.ok(ggc(function(a, w) return F.layer_norm(a, { 4 }, w) end, { x, leaf(4) }), "weight")
  T.ok(ggc(function(a, b) return F.layer_norm(a, { 4 }, nil, b) end, { x, leaf(4) }), "bias")
  T.ok(ggc(function(a, w, b) return F.layer_norm(a, { 4 }, w, b) end, { x, leaf(4), leaf(4) }), "weight bias")
  local x3 = leaf(2, 3, 4)
  T.ok(ggc(function(a, w, b) return F.layer_norm(a, { 3, 4 }, w, b, 1e-3) end, { x3, leaf(3, 4), leaf(3, 4) }),
    "2 dims")
  T.ok(ggc(function(a) return F.layer_norm(a, { 3, 4 }) end, { x3 }), "2 dims plain")
  -- non-contiguous input, broadcast use of the output
  T.ok(ggc(function(a, w) return F.layer_norm(a:transpose(1, 2), { 3 }, w) * a:transpose(1, 2) end,
    { leaf(3, 4), leaf(3) }), "non-contiguous")
  -- the fused first-order backward still agrees with the recorded one
  local w = leaf(4)
  local y = F.layer_norm(x, { 4 }, w)
  local v = torch.randn(3, 4, { dtype = f64 })
  local g1 = torch.autograd.grad({ y }, { x, w }, { grad_outputs = { v }, retain_graph = true })
  local g2 = torch.autograd.grad({ y }, { x, w }, { grad_outputs = { v }, create_graph = true })
  T.ok((g1[1] - g2[1]):abs():max():item() < 1e-12)
  T.ok((g1[2] - g2[2]):abs():max():item() < 1e-12)
end)

T.test("group_norm", function()
  local x = leaf(2, 4, 3)
  T.ok(ggc(function(a, w, b) return F.group_norm(a, 2, w, b) end, { x, leaf(4), leaf(4) }), "affine")
  T.ok(ggc(function(a) return F.group_norm(a, 4) end, { x }), "no affine")
  T.ok(ggc(function(a, w) return F.group_norm(a, 1, w) end, { leaf(2, 2, 2, 2), leaf(2) }), "4-d")
end)

T.test("batch_norm: training with and without affine, eval", function()
  local function rs() return torch.zeros(3, { dtype = f64 }), torch.ones(3, { dtype = f64 }) end
  local x = leaf(4, 3)
  local x4 = leaf(3, 3, 2, 2)
  for _, a in ipairs({ x, x4, leaf(2, 3, 3) }) do
    T.ok(ggc(function(i) return F.batch_norm(i, nil, nil, nil, nil, true) end, { a }), "training")
    T.ok(ggc(function(i, w, b) return F.batch_norm(i, nil, nil, w, b, true) end, { a, leaf(3), leaf(3) }),
      "training affine")
    T.ok(ggc(function(i, w) local m, v = rs(); return F.batch_norm(i, m, v, w, nil, true, 0.1, 1e-3) end,
      { a, leaf(3) }), "training running stats")
  end
  local m = torch.randn(3, { dtype = f64 })
  local v = torch.rand(3, { dtype = f64 }) + 0.5
  T.ok(ggc(function(i, w, b) return F.batch_norm(i, m, v, w, b, false) end, { x4, leaf(3), leaf(3) }), "eval affine")
  T.ok(ggc(function(i) return F.batch_norm(i, m, v) end, { x }), "eval")
  -- eval with a nonlinearity after it: the second derivative in x and weight is not zero
  T.ok(ggc(function(i, w) return torch.tanh(F.batch_norm(i, m, v, w, nil, false)) end, { x4, leaf(3) }), "eval tanh")
  -- the fused first-order backward agrees with the recorded one
  local w, b = leaf(3), leaf(3)
  local y = F.batch_norm(x4, nil, nil, w, b, true)
  local g = torch.randn(3, 3, 2, 2, { dtype = f64 })
  local g1 = torch.autograd.grad({ y }, { x4, w, b }, { grad_outputs = { g }, retain_graph = true })
  local g2 = torch.autograd.grad({ y }, { x4, w, b }, { grad_outputs = { g }, create_graph = true })
  for i = 1, 3 do T.ok((g1[i] - g2[i]):abs():max():item() < 1e-12, "input " .. i) end
end)

-- the *_backward ops called directly: every argument independent, mean and 1/std included
T.test("layer_norm_backward, layer_norm_backward_weight called directly", function()
  local gc = torch.autograd.gradcheck
  local function pos(...) return (torch.rand({ ... }, { dtype = f64 }) + 0.5):requires_grad_() end
  for _, c in ipairs({ { { 2, 3, 4 }, { 4 }, { 2, 3, 1 } }, { { 2, 3, 4 }, { 3, 4 }, { 2, 1, 1 } } }) do
    local sh, ns, ms = c[1], c[2], c[3]
    local go, x, w = leaf(table.unpack(sh)), leaf(table.unpack(sh)), leaf(table.unpack(ns))
    local m, r = leaf(table.unpack(ms)), pos(table.unpack(ms))
    local lnb = function(a, b, cm, d, e) return torch.layer_norm_backward(a, b, cm, d, e, ns) end
    local lnbn = function(a, b, cm, d) return torch.layer_norm_backward(a, b, cm, d, nil, ns) end
    local lnw = function(a, b, cm, d) return torch.layer_norm_backward_weight(a, b, cm, d, ns) end
    T.ok(gc(lnb, { go, x, m, r, w }), "layer_norm_backward " .. #ns)
    T.ok(ggc(lnb, { go, x, m, r, w }), "layer_norm_backward second order " .. #ns)
    T.ok(ggc(lnbn, { go, x, m, r }), "layer_norm_backward no weight " .. #ns)
    T.ok(gc(lnw, { go, x, m, r }), "layer_norm_backward_weight " .. #ns)
    T.ok(ggc(lnw, { go, x, m, r }), "layer_norm_backward_weight second order " .. #ns)
  end
end)

T.test("batch_norm_backward, _weight, _bias called directly", function()
  local gc = torch.autograd.gradcheck
  local function pos(...) return (torch.rand({ ... }, { dtype = f64 }) + 0.5):requires_grad_() end
  for _, sh in ipairs({ { 4, 3 }, { 3, 3, 2 } }) do
    local go, x = leaf(table.unpack(sh)), leaf(table.unpack(sh))
    local w, m, is = leaf(3), leaf(3), pos(3)
    for _, tr in ipairs({ true, false }) do
      local bnb = function(a, b, c, d, e) return torch.batch_norm_backward(a, b, c, d, e, tr) end
      local bnbn = function(a, b, d, e) return torch.batch_norm_backward(a, b, nil, d, e, tr) end
      T.ok(gc(bnb, { go, x, w, m, is }), "batch_norm_backward " .. tostring(tr))
      T.ok(ggc(bnb, { go, x, w, m, is }), "batch_norm_backward second order " .. tostring(tr))
      T.ok(ggc(bnbn, { go, x, m, is }), "batch_norm_backward no weight " .. tostring(tr))
    end
    T.ok(gc(torch.batch_norm_backward_weight, { go, x, m, is }), "batch_norm_backward_weight")
    T.ok(ggc(torch.batch_norm_backward_weight, { go, x, m, is }), "batch_norm_backward_weight second order")
    T.ok(ggc(function(a) return torch.batch_norm_backward_bias(a, x) end, { go }), "batch_norm_backward_bias")
  end
end)

T.test("third order: layer_norm, batch_norm, cross_entropy", function()
  T.ok(ggc(grad_fn(function(a, w) return F.layer_norm(a, { 4 }, w) end, 2), { leaf(2, 4), leaf(4) }), "layer_norm")
  T.ok(ggc(grad_fn(function(a, w) return F.batch_norm(a, nil, nil, w, nil, true) end, 2), { leaf(4, 2), leaf(2) }),
    "batch_norm")
  T.ok(ggc(grad_fn(function(a) return F.group_norm(a, 2) end, 1), { leaf(2, 4, 2) }), "group_norm")
  T.ok(ggc(grad_fn(function(a) return F.cross_entropy(a, idx({ 1, 3, 2 }), { label_smoothing = 0.1 }) end, 1),
    { leaf(3, 4) }), "cross_entropy")
end)

-- the other layers whose backward is an op of its own: create_graph through each
T.test("create_graph through conv, pooling, padding, resampling, embedding, activations", function()
  local cases = {
    { "conv2d", function(x, w, b) return F.conv2d(x, w, b, 1, 1) end, { leaf(1, 2, 4, 4), leaf(3, 2, 3, 3), leaf(3) } },
    { "conv2d groups", function(x, w) return F.conv2d(x, w, nil, 2, 0, 1, 2) end, { leaf(1, 4, 5, 5), leaf(2, 2, 2, 2) } },
    { "conv1d", function(x, w) return F.conv1d(x, w) end, { leaf(2, 2, 5), leaf(3, 2, 2) } },
    { "conv_transpose2d", function(x, w, b) return F.conv_transpose2d(x, w, b, 2) end,
      { leaf(1, 2, 3, 3), leaf(2, 3, 2, 2), leaf(3) } },
    { "max_pool2d", function(x) return F.max_pool2d(x, 2) end, { leaf(1, 2, 4, 4) } },
    { "max_pool1d", function(x) return F.max_pool1d(x, 2) end, { leaf(1, 2, 6) } },
    { "avg_pool2d", function(x) return F.avg_pool2d(x, 2, 1, 1) end, { leaf(1, 2, 4, 4) } },
    { "avg_pool1d", function(x) return F.avg_pool1d(x, 2) end, { leaf(1, 2, 6) } },
    { "adaptive_avg_pool2d", function(x) return F.adaptive_avg_pool2d(x, { 2, 3 }) end, { leaf(1, 2, 5, 4) } },
    { "adaptive_max_pool2d", function(x) return F.adaptive_max_pool2d(x, { 2, 2 }) end, { leaf(1, 2, 5, 4) } },
    { "pad constant", function(x) return F.pad(x, { 1, 2 }) end, { leaf(2, 3) } },
    { "pad reflect", function(x) return F.pad(x, { 1, 2, 1, 1 }, "reflect") end, { leaf(1, 3, 4) } },
    { "pad replicate", function(x) return F.pad(x, { 1, 2 }, "replicate") end, { leaf(1, 2, 3) } },
    { "upsample nearest", function(x) return F.interpolate(x, { size = { 5, 3 } }) end, { leaf(1, 2, 2, 2) } },
    { "upsample bilinear", function(x) return F.interpolate(x, { size = { 5, 3 }, mode = "bilinear" }) end,
      { leaf(1, 2, 2, 2) } },
    { "upsample bilinear align_corners",
      function(x) return F.interpolate(x, { size = { 5, 3 }, mode = "bilinear", align_corners = true }) end,
      { leaf(1, 2, 2, 2) } },
    { "embedding padding_idx", function(w) return F.embedding(idx({ { 1, 3 }, { 3, 2 } }), w, { padding_idx = 2 }) ^ 2 end,
      { leaf(4, 3) } },
    { "softmax", function(x) return F.softmax(x, 2) end, { leaf(3, 4) } },
    { "log_softmax", function(x) return F.log_softmax(x, 1) end, { leaf(3, 4) } },
    { "linear", function(x, w, b) return F.linear(x, w, b) end, { leaf(3, 4), leaf(2, 4), leaf(2) } },
    { "prelu", function(x, w) return F.prelu(x, w) end, { leaf(3, 2), leaf(2) } },
    { "gelu tanh", function(x) return F.gelu(x, { approximate = "tanh" }) end, { leaf(3, 4) } },
    { "threshold", function(x) return F.threshold(x, 0.1, 2) end, { leaf(3, 4) } },
  }
  for _, a in ipairs({ "elu", "selu", "celu", "gelu", "silu", "mish", "softplus", "softsign", "logsigmoid",
    "hardsigmoid", "hardswish", "hardtanh", "tanhshrink", "hardshrink", "softshrink", "leaky_relu" }) do
    cases[#cases + 1] = { a, function(x) return F[a](x) end, { leaf(3, 4) } }
  end
  for _, c in ipairs(cases) do T.ok(ggc(c[2], c[3]), c[1]) end
end)

-- ||d loss / d x||^2 for a small LayerNorm + Linear + cross_entropy model (and a BatchNorm /
-- GroupNorm one), its value and its gradients, against PyTorch
if not P.available() then
  T.skip("gradient penalty against PyTorch", P.why())
else
  T.test("gradient penalty against PyTorch", function()
    local function rnd(...) return torch.randn({ ... }, { dtype = f64 }) end
    local inp = {
      x = rnd(4, 5), lw = rnd(5), lb = rnd(5), W = rnd(3, 5), b = rnd(3), t = idx({ 1, 3, 2, 3 }),
      z = rnd(4, 4), bw = rnd(4), bb = rnd(4), gw = rnd(4), W2 = rnd(3, 4),
    }
    local body = [[
for v in (x, lw, lb, W, b, z, bw, bb, gw, W2): v.requires_grad_()
loss = F.cross_entropy(F.linear(F.layer_norm(x, (5,), lw, lb), W, b), t - 1)
gx, = torch.autograd.grad(loss, x, create_graph=True)
gp = (gx * gx).sum()
gp.backward()
h = F.group_norm(F.batch_norm(z, None, None, bw, bb, True).reshape(4, 4, 1), 2, gw).reshape(4, 4)
loss2 = F.cross_entropy(F.linear(torch.tanh(h), W2), t - 1, label_smoothing=0.1)
gz, = torch.autograd.grad(loss2, z, create_graph=True)
gp2 = (gz * gz).sum()
gp2.backward()
]]
    local want = P.run(inp, body, { "gp", "x.grad", "lw.grad", "lb.grad", "W.grad", "b.grad",
      "gp2", "z.grad", "bw.grad", "bb.grad", "gw.grad", "W2.grad" })
    local a = {}
    for k, v in pairs(inp) do a[k] = v:is_floating_point() and v:clone():requires_grad_() or v end
    local loss = F.cross_entropy(F.linear(F.layer_norm(a.x, { 5 }, a.lw, a.lb), a.W, a.b), a.t)
    local gx = torch.autograd.grad({ loss }, { a.x }, { create_graph = true })[1]
    local gp = (gx * gx):sum()
    gp:backward()
    local h = F.group_norm(F.batch_norm(a.z, nil, nil, a.bw, a.bb, true):reshape(4, 4, 1), 2, a.gw):reshape(4, 4)
    local loss2 = F.cross_entropy(F.linear(torch.tanh(h), a.W2), a.t, { label_smoothing = 0.1 })
    local gz = torch.autograd.grad({ loss2 }, { a.z }, { create_graph = true })[1]
    local gp2 = (gz * gz):sum()
    gp2:backward()
    local got = { gp, a.x.grad, a.lw.grad, a.lb.grad, a.W.grad, a.b.grad,
      gp2, a.z.grad, a.bw.grad, a.bb.grad, a.gw.grad, a.W2.grad }
    local names = { "gp", "x.grad", "lw.grad", "lb.grad", "W.grad", "b.grad",
      "gp2", "z.grad", "bw.grad", "bb.grad", "gw.grad", "W2.grad" }
    for i, g in ipairs(got) do
      local w = want[i]
      if type(w) == "number" then w = torch.tensor(w, { dtype = f64 }) end
      T.eq(g.shape, w.shape, names[i] .. " shape")
      -- relative to the values' size: the penalty's gradients reach 1e2-1e3 for some draws
      local d = (g:detach() - w):abs():max():item()
      local scale = math.max(1, w:abs():max():item())
      T.ok(d <= 1e-10 * scale, ("%s differs by %g (largest value %g)"):format(names[i], d, scale))
    end
  end)
end

T.test("nll_loss_backward called directly: weight that requires grad is an error, not a dropped gradient", function()
  local x = torch.randn(3, 4, { dtype = f64 })
  local w = torch.rand(4, { dtype = f64, requires_grad = true })
  local go = torch.tensor(1.0, { dtype = f64 })
  local g = torch.nll_loss_backward(go, x, idx({ 1, 2, 3 }), w, "mean", -100, torch.tensor(2.0, { dtype = f64 }))
  T.raises(function() g:sum():backward() end, "nll_loss_backward", "'weight' is not implemented")
end)

T.test("in-place ops on views under create_graph: second derivatives are recorded", function()
  -- the base's CopySlices node and the view's node rebuild their gradients from index ops
  -- when create_graph is on (they used to write raw copies, so gradgradcheck saw 0)
  T.ok(ggc(function(m) local z = torch.zeros(3, 3, { dtype = f64 }); z:diagonal():copy_(m); return (z * z):sum() end,
    { leaf(3) }), "diagonal():copy_")
  T.ok(ggc(function(m, v) local c = m:clone(); c:select(1, 1):copy_(v); return (c * c * c):sum() end,
    { leaf(3, 4), leaf(4) }), "select():copy_")
  T.ok(ggc(function(m) local c = m * 1; c:select(1, 1):mul_(2); return (c * c):sum() end, { leaf(3, 4) }), "select():mul_")
  T.ok(ggc(function(m, v) local c = m:clone(); c:narrow(2, 2, 2):add_(v); return c:tanh():sum() end,
    { leaf(3, 4), leaf(3, 2) }), "narrow():add_")
  T.ok(ggc(function(m) local c = m:clone(); local v = c:select(2, 3); v:mul_(2); return (v * c:sum()):sum() end,
    { leaf(3, 4) }), "the view used after the write")
  T.ok(ggc(function(m) local c = m:clone(); c:t():select(1, 2):mul_(3); return (c * c):sum() end, { leaf(3, 4) }),
    "a strided view")
end)

T.done()
