-- softmax, log_softmax, batch_norm, layer_norm, group_norm: values against PyTorch (one
-- Python run, float64 and float32), running-statistics updates, float64 gradchecks for
-- every differentiable argument incl. non-contiguous inputs, double backward of softmax,
-- and errors for bad shapes.
local T = require "testing"
local P = require "pyref"
local f64, f32 = torch.float64, torch.float32
local gc = torch.autograd.gradcheck

torch.manual_seed(5)

local function leaf(t) return t:detach():clone():requires_grad_() end

------------------------------------------------------------------------------
-- values against PyTorch
------------------------------------------------------------------------------
do
  local I = {}
  I.s = torch.randn(4, 6, 5, { dtype = f64 }) * 3
  I.big = torch.randn(3, 40, { dtype = f64 }) * 30
  I.x2 = torch.randn(8, 3, { dtype = f64 })
  I.x3 = torch.randn(4, 3, 5, { dtype = f64 })
  I.x4 = torch.randn(3, 4, 2, 3, { dtype = f64 }) * 2 + 1
  I.w3, I.b3 = torch.randn(3, { dtype = f64 }), torch.randn(3, { dtype = f64 })
  I.w4, I.b4 = torch.randn(4, { dtype = f64 }), torch.randn(4, { dtype = f64 })
  I.rm3, I.rv3 = torch.randn(3, { dtype = f64 }), torch.rand(3, { dtype = f64 }) + 0.5
  I.rm4, I.rv4 = torch.randn(4, { dtype = f64 }), torch.rand(4, { dtype = f64 }) + 0.5
  I.lw, I.lb = torch.randn(5, { dtype = f64 }), torch.randn(5, { dtype = f64 })
  I.lw2 = torch.randn(3, 5, { dtype = f64 })
  I.g = torch.randn(2, 6, 3, 2, { dtype = f64 })
  I.gw, I.gb = torch.randn(6, { dtype = f64 }), torch.randn(6, { dtype = f64 })

  -- { name, lutorch fn (C: inputs in the dtype tested), python statements, python results }
  local cases = {
    { "softmax last dim", function(C) return torch.softmax(C.s, 3) end, "F.softmax(s, 2)" },
    { "softmax dim 1", function(C) return torch.softmax(C.s, 1) end, "F.softmax(s, 0)" },
    { "softmax dim 2", function(C) return C.s:softmax(2) end, "F.softmax(s, 1)" },
    { "softmax large values", function(C) return torch.softmax(C.big, -1) end, "F.softmax(big, -1)" },
    { "log_softmax last dim", function(C) return torch.log_softmax(C.s, -1) end, "F.log_softmax(s, -1)" },
    { "log_softmax dim 2", function(C) return C.s:log_softmax(2) end, "F.log_softmax(s, 1)" },
    { "log_softmax large values", function(C) return torch.log_softmax(C.big, 2) end, "F.log_softmax(big, 1)" },
    { "log_softmax transposed", function(C) return torch.log_softmax(C.s:transpose(1, 3), 2) end,
      "F.log_softmax(s.transpose(0, 2), 1)" },
    { "batch_norm eval (N,C)", function(C) return torch.batch_norm(C.x2, C.w3, C.b3, C.rm3, C.rv3, false, 0.1, 1e-5) end,
      "F.batch_norm(x2, rm3, rv3, w3, b3, False, 0.1, 1e-5)" },
    { "batch_norm eval (N,C,L) no affine", function(C) return torch.batch_norm(C.x3, nil, nil, C.rm3, C.rv3) end,
      "F.batch_norm(x3, rm3, rv3)" },
    { "batch_norm train (N,C,H,W)", function(C) return torch.batch_norm(C.x4, C.w4, C.b4, nil, nil, true, 0.1, 1e-3) end,
      "F.batch_norm(x4, None, None, w4, b4, True, 0.1, 1e-3)" },
    { "batch_norm train (N,C) weight only", function(C) return torch.batch_norm(C.x2, C.w3, nil, nil, nil, true) end,
      "F.batch_norm(x2, None, None, w3, None, True)" },
    { "layer_norm", function(C) return torch.layer_norm(C.x3, { 5 }, C.lw, C.lb) end, "F.layer_norm(x3, [5], lw, lb)" },
    { "layer_norm 2 dims weight only", function(C) return torch.layer_norm(C.x3, { 3, 5 }, C.lw2, nil, 1e-3) end,
      "F.layer_norm(x3, [3, 5], lw2, None, 1e-3)" },
    { "layer_norm no affine", function(C) return torch.layer_norm(C.x4, { 2, 3 }) end, "F.layer_norm(x4, [2, 3])" },
    { "group_norm", function(C) return torch.group_norm(C.g, 3, C.gw, C.gb) end, "F.group_norm(g, 3, gw, gb)" },
    { "group_norm 1 group no affine", function(C) return torch.group_norm(C.g, 1) end, "F.group_norm(g, 1)" },
    { "group_norm 6 groups", function(C) return torch.group_norm(C.g, 6, C.gw, nil, 1e-2) end,
      "F.group_norm(g, 6, gw, None, 1e-2)" },
  }
  -- running statistics after two training steps
  local function bn_steps(C, x, rm, rv, mom)
    local m, v = rm:clone(), rv:clone()
    torch.batch_norm(x, nil, nil, m, v, true, mom, 1e-5)
    torch.batch_norm(x * 2, nil, nil, m, v, true, mom, 1e-5)
    return m, v
  end
  local run_py = [[
import warnings; warnings.filterwarnings("ignore")
def bn_steps(x, rm, rv, mom):
    m, v = rm.clone(), rv.clone()
    F.batch_norm(x, m, v, None, None, True, mom, 1e-5)
    F.batch_norm(x * 2, m, v, None, None, True, mom, 1e-5)
    return m, v
m4, v4 = bn_steps(x4, rm4, rv4, 0.1)
m2, v2 = bn_steps(x2, rm3, rv3, 0.3)
]]
  if not P.available() then
    T.skip("norms against PyTorch", P.why())
  else
    local exprs = {}
    for i, c in ipairs(cases) do exprs[i] = c[3] end
    for _, e in ipairs({ "m4", "v4", "m2", "v2" }) do exprs[#exprs + 1] = e end
    local ok, r = pcall(P.run, I, run_py, exprs)
    if not ok then
      T.test("norms against PyTorch", function() error(r) end)
    else
      for _, dt in ipairs({ f64, f32 }) do
        local C = {}
        for k, v in pairs(I) do C[k] = v:to(dt) end
        local tol = dt == f64 and 1e-10 or 3e-5
        local function close(got, want)
          T.eq(got.dtype, dt)
          T.ok((got:to(f64) - want):abs():max():item() <= tol * (1 + want:abs():max():item()),
               ("differs from PyTorch: %s vs %s"):format(tostring(got), tostring(want)))
        end
        for i, c in ipairs(cases) do
          T.test(c[1] .. " " .. dt.name, function() close(c[2](C), r[i]) end)
        end
        T.test("batch_norm running stats (momentum, unbiased var) " .. dt.name, function()
          local n = #cases
          local m4, v4 = bn_steps(C, C.x4, C.rm4, C.rv4, 0.1)
          close(m4, r[n + 1]); close(v4, r[n + 2])
          local m2, v2 = bn_steps(C, C.x2, C.rm3, C.rv3, 0.3)
          close(m2, r[n + 3]); close(v2, r[n + 4])
        end)
      end
    end
  end
end

T.test("softmax: dtype=, integer input, rows sum to one, float32 running stats with float64 input", function()
  local x = torch.randn(3, 7)
  local y = torch.softmax(x, 2, torch.float64)
  T.eq(y.dtype, f64)
  T.near(y:sum(2):totable(), { 1, 1, 1 }, 1e-12)
  T.raises(function() torch.softmax(torch.tensor({ 1, 2, 3 }), 1) end, "softmax", "'self'", "floating")
  T.eq(torch.log_softmax(torch.tensor({ 1, 2, 3 }), 1, torch.float32).dtype, f32)
  T.raises(function() torch.softmax(x, 3) end, "softmax", "dim")
  local rm, rv = torch.zeros(7), torch.ones(7)
  torch.batch_norm(torch.randn(5, 7, { dtype = f64 }), nil, nil, rm, rv, true)
  T.eq(rm.dtype, f32)
  T.ok(rm:abs():sum():item() > 0)
  local e = torch.softmax(torch.empty(0, 4), 2)
  T.eq(e:size(), { 0, 4 })
end)

------------------------------------------------------------------------------
-- gradients
------------------------------------------------------------------------------
T.test("softmax / log_softmax gradcheck (dims, non-contiguous) and double backward", function()
  local x = leaf(torch.randn(3, 4, 5, { dtype = f64 }))
  local xt = leaf(torch.randn(5, 4, 3, { dtype = f64 })):transpose(1, 3)
  for _, d in ipairs({ 1, 2, 3 }) do
    T.ok(gc(function(a) return torch.softmax(a, d) end, { x }), "softmax " .. d)
    T.ok(gc(function(a) return torch.log_softmax(a, d) end, { x }), "log_softmax " .. d)
    T.ok(gc(function(a) return torch.softmax(a, d) end, { xt }), "softmax transposed " .. d)
    T.ok(gc(function(a) return torch.log_softmax(a, d) end, { xt }), "log_softmax transposed " .. d)
  end
  local s = leaf(torch.randn(3, 5, { dtype = f64 }))
  T.ok(torch.autograd.gradgradcheck(function(a) return torch.softmax(a, 2) end, { s }))
  T.ok(torch.autograd.gradgradcheck(function(a) return torch.log_softmax(a, 1) end, { s }))
end)

T.test("batch_norm gradcheck: train and eval, input/weight/bias, (N,C), (N,C,L), (N,C,H,W), non-contiguous", function()
  local w, b = leaf(torch.randn(3, { dtype = f64 })), leaf(torch.randn(3, { dtype = f64 }))
  local rm, rv = torch.randn(3, { dtype = f64 }), torch.rand(3, { dtype = f64 }) + 0.5
  for _, shape in ipairs({ { 6, 3 }, { 4, 3, 5 }, { 2, 3, 3, 2 } }) do
    local x = leaf(torch.randn(shape, { dtype = f64 }))
    T.ok(gc(function(a, ww, bb) return torch.batch_norm(a, ww, bb, nil, nil, true) end, { x, w, b }), "train")
    T.ok(gc(function(a, ww, bb) return torch.batch_norm(a, ww, bb, rm, rv, false) end, { x, w, b }), "eval")
  end
  local xt = leaf(torch.randn(5, 3, 4, { dtype = f64 })):transpose(1, 3)   -- (4, 3, 5) non-contiguous
  T.ok(gc(function(a) return torch.batch_norm(a, nil, nil, nil, nil, true) end, { xt }), "no affine, transposed")
end)

T.test("layer_norm and group_norm gradcheck (input, weight, bias; non-contiguous)", function()
  local x = leaf(torch.randn(3, 4, 5, { dtype = f64 }))
  local xt = leaf(torch.randn(5, 4, 3, { dtype = f64 })):transpose(1, 3)
  local w, b = leaf(torch.randn(5, { dtype = f64 })), leaf(torch.randn(5, { dtype = f64 }))
  local w2 = leaf(torch.randn(4, 5, { dtype = f64 }))
  T.ok(gc(function(a, ww, bb) return torch.layer_norm(a, { 5 }, ww, bb) end, { x, w, b }))
  T.ok(gc(function(a, ww, bb) return torch.layer_norm(a, { 5 }, ww, bb) end, { xt, w, b }))
  T.ok(gc(function(a, ww) return torch.layer_norm(a, { 4, 5 }, ww) end, { x, w2 }))
  T.ok(gc(function(a) return torch.layer_norm(a, { 3, 4, 5 }) end, { x }))
  local g = leaf(torch.randn(2, 6, 2, 2, { dtype = f64 }))
  local gw, gb = leaf(torch.randn(6, { dtype = f64 })), leaf(torch.randn(6, { dtype = f64 }))
  T.ok(gc(function(a, ww, bb) return torch.group_norm(a, 3, ww, bb) end, { g, gw, gb }))
  local gt = leaf(torch.randn(2, 2, 6, 2, { dtype = f64 })):transpose(2, 3)
  T.ok(gc(function(a, ww, bb) return torch.group_norm(a, 2, ww, bb) end, { gt, gw, gb }))
end)

T.test("batch_norm on wide (N, C) inputs (several channel blocks) matches the composed formula", function()
  local x = leaf(torch.randn(10, 600, { dtype = f64 }))
  local w, b = leaf(torch.randn(600, { dtype = f64 })), leaf(torch.randn(600, { dtype = f64 }))
  local g = torch.randn(10, 600, { dtype = f64 })
  local y = torch.batch_norm(x, w, b, nil, nil, true, 0.1, 1e-5)
  local gx, gw, gb = table.unpack(torch.autograd.grad({ y }, { x, w, b }, { grad_outputs = { g } }))
  local m, v = x:mean(1, true), x:var(1, false, true)
  local z = (x - m) / (v + 1e-5):sqrt() * w + b
  local hx, hw, hb = table.unpack(torch.autograd.grad({ z }, { x, w, b }, { grad_outputs = { g } }))
  T.ok((y - z):abs():max():item() < 1e-10, "values")
  T.ok((gx - hx):abs():max():item() < 1e-10, "grad input")
  T.ok((gw - hw):abs():max():item() < 1e-10, "grad weight")
  T.ok((gb - hb):abs():max():item() < 1e-10, "grad bias")
end)

------------------------------------------------------------------------------
-- errors
------------------------------------------------------------------------------
T.test("errors name the op and the argument", function()
  local x = torch.randn(4, 3, 5)
  T.raises(function() torch.batch_norm(x, torch.ones(4), nil, nil, nil, true) end, "batch_norm", "'weight'")
  T.raises(function() torch.batch_norm(x, nil, nil, torch.zeros(2), torch.ones(3), true) end, "batch_norm", "'running_mean'")
  T.raises(function() torch.batch_norm(x, nil, nil, nil, nil, false) end, "batch_norm", "'running_mean'")
  T.raises(function() torch.batch_norm(torch.randn(1, 3), nil, nil, nil, nil, true) end, "batch_norm", "more than 1 value")
  T.raises(function() torch.batch_norm(torch.randn(3), nil, nil, nil, nil, true) end, "batch_norm", "'input'")
  T.raises(function() torch.layer_norm(x, { 4 }) end, "layer_norm", "'normalized_shape'")
  T.raises(function() torch.layer_norm(x, { 5 }, torch.ones(4)) end, "layer_norm", "'weight'")
  T.raises(function() torch.layer_norm(x, { 5 }, nil, torch.ones(6)) end, "layer_norm", "'bias'")
  T.raises(function() torch.group_norm(x, 2) end, "group_norm", "'num_groups'")
  T.raises(function() torch.group_norm(x, 3, torch.ones(4)) end, "group_norm", "'weight'")
  T.raises(function() torch.layer_norm(torch.tensor({ 1, 2 }), { 2 }) end, "layer_norm", "'input'")
end)

------------------------------------------------------------------------------
-- the joint backward kernels (native_layer_norm_backward, native_batch_norm_backward):
-- what a plain backward runs for input, weight and bias together
------------------------------------------------------------------------------
local function maxdiff(a, b) return (a:double() - b:double()):abs():max():item() end

T.test("native_layer_norm_backward equals the separate backward ops (shapes, weight or none, float32/64)", function()
  for _, dt in ipairs({ f64, f32 }) do
    local tol = dt == f64 and 1e-12 or 2e-5
    for _, c in ipairs({ { { 5, 7, 33 }, { 33 } }, { { 3, 300 }, { 300 } }, { { 1000, 64 }, { 64 } },
                         { { 4, 6, 5 }, { 6, 5 } }, { { 2, 2000 }, { 2000 } }, { { 1, 1 }, { 1 } } }) do
      local shp, ns = c[1], c[2]
      local x, g = torch.randn(shp, { dtype = dt }), torch.randn(shp, { dtype = dt })
      for _, w in ipairs({ torch.randn(ns, { dtype = dt }), false }) do
        w = w or nil
        local _, mean, rstd = torch.native_layer_norm(x, ns, w, nil, 1e-5)
        local gi, gw, gb = torch.native_layer_norm_backward(g, x, mean, rstd, w, ns)
        local lead = {}
        for i = 1, #shp - #ns do lead[i] = i end
        T.near(maxdiff(gi, torch.layer_norm_backward(g, x, mean, rstd, w, ns)), 0, tol)
        T.near(maxdiff(gw, torch.layer_norm_backward_weight(g, x, mean, rstd, ns)), 0, tol * 10)
        T.near(maxdiff(gb, g:sum(lead)), 0, tol * 10)
        T.eq(gw:size(), ns)
        T.eq(gi.dtype, dt)
      end
    end
  end
end)

T.test("native_layer_norm_backward: gradients not asked for come back empty; no thread-count dependence", function()
  local x, g = torch.randn(300, 40), torch.randn(300, 40)
  local w = torch.randn(40)
  local _, mean, rstd = torch.native_layer_norm(x, { 40 }, w, nil, 1e-5)
  local gi, gw, gb = torch.native_layer_norm_backward(g, x, mean, rstd, w, { 40 }, false, true, false)
  T.eq(gi:numel(), 0); T.eq(gb:numel(), 0); T.eq(gw:size(), { 40 })
  local n = torch.get_num_threads()
  torch.set_num_threads(1)
  local a1, b1, c1 = torch.native_layer_norm_backward(g, x, mean, rstd, w, { 40 })
  torch.set_num_threads(2)
  local a2, b2, c2 = torch.native_layer_norm_backward(g, x, mean, rstd, w, { 40 })
  torch.set_num_threads(n)
  T.eq(maxdiff(a1, a2), 0); T.eq(maxdiff(b1, b2), 0); T.eq(maxdiff(c1, c2), 0)
end)

T.test("layer_norm / batch_norm backward through the joint kernel: each subset of input, weight, bias", function()
  for _, which in ipairs({ { true, true, true }, { true, false, false }, { false, true, false }, { false, false, true },
                           { false, true, true } }) do
    local x0, w0, b0 = torch.randn(6, 5, 8, { dtype = f64 }), torch.randn(8, { dtype = f64 }), torch.randn(8, { dtype = f64 })
    local g = torch.randn(6, 5, 8, { dtype = f64 })
    local x, w, b = x0:clone(), w0:clone(), b0:clone()
    if which[1] then x:requires_grad_() end
    if which[2] then w:requires_grad_() end
    if which[3] then b:requires_grad_() end
    torch.layer_norm(x, { 8 }, w, b):backward(g)
    -- the same gradients through create_graph, which takes the per-input formulas
    local x2, w2, b2 = leaf(x0), leaf(w0), leaf(b0)
    local gx, gw, gb = table.unpack(torch.autograd.grad({ torch.layer_norm(x2, { 8 }, w2, b2) }, { x2, w2, b2 }, { g },
      { create_graph = true }))
    T.near(which[1] and maxdiff(x.grad, gx) or 0, 0, 1e-12); T.eq(x.grad == nil, not which[1])
    T.near(which[2] and maxdiff(w.grad, gw) or 0, 0, 1e-12); T.eq(w.grad == nil, not which[2])
    T.near(which[3] and maxdiff(b.grad, gb) or 0, 0, 1e-12); T.eq(b.grad == nil, not which[3])
    -- batch_norm (N, C, L), training and eval
    for _, training in ipairs({ true, false }) do
      local y0, cw, cb = torch.randn(4, 5, 3, { dtype = f64 }), torch.randn(5, { dtype = f64 }), torch.randn(5, { dtype = f64 })
      local rm, rv = torch.randn(5, { dtype = f64 }), torch.rand(5, { dtype = f64 }) + 0.5
      local gy = torch.randn(4, 5, 3, { dtype = f64 })
      local y, v, u = y0:clone(), cw:clone(), cb:clone()
      if which[1] then y:requires_grad_() end
      if which[2] then v:requires_grad_() end
      if which[3] then u:requires_grad_() end
      torch.batch_norm(y, v, u, rm:clone(), rv:clone(), training):backward(gy)
      local y2, v2, u2 = leaf(y0), leaf(cw), leaf(cb)
      local hy, hv, hu = table.unpack(torch.autograd.grad({ torch.batch_norm(y2, v2, u2, rm:clone(), rv:clone(), training) },
        { y2, v2, u2 }, { gy }, { create_graph = true }))
      T.near(which[1] and maxdiff(y.grad, hy) or 0, 0, 1e-12)
      T.near(which[2] and maxdiff(v.grad, hv) or 0, 0, 1e-12)
      T.near(which[3] and maxdiff(u.grad, hu) or 0, 0, 1e-12)
    end
  end
end)

T.test("native_batch_norm_backward equals the separate backward ops ((N,C) and (N,C,H,W), train/eval)", function()
  for _, dt in ipairs({ f64, f32 }) do
    local tol = dt == f64 and 1e-12 or 2e-5
    for _, shp in ipairs({ { 256, 300 }, { 4, 3, 5, 6 }, { 7, 2 } }) do
      local C = shp[2]
      local x, g = torch.randn(shp, { dtype = dt }), torch.randn(shp, { dtype = dt })
      local w = torch.randn(C, { dtype = dt })
      for _, training in ipairs({ true, false }) do
        local rm, rv = torch.zeros(C, { dtype = dt }), torch.ones(C, { dtype = dt })
        local _, sm, si = torch.native_batch_norm(x, w, nil, rm, rv, training, 0.1, 1e-5)
        local gi, gw, gb = torch.native_batch_norm_backward(g, x, w, sm, si, training)
        T.near(maxdiff(gi, torch.batch_norm_backward(g, x, w, sm, si, training)), 0, tol)
        T.near(maxdiff(gw, torch.batch_norm_backward_weight(g, x, sm, si)), 0, tol * 10)
        T.near(maxdiff(gb, torch.batch_norm_backward_bias(g, x)), 0, tol * 10)
      end
    end
  end
end)

T.test("the joint backward ops: argument errors name the op; they are not differentiable themselves", function()
  local x, g = torch.randn(4, 6), torch.randn(4, 6)
  local _, mean, rstd = torch.native_layer_norm(x, { 6 }, nil, nil, 1e-5)
  T.raises(function() torch.native_layer_norm_backward(torch.randn(4, 5), x, mean, rstd, nil, { 6 }) end,
    "native_layer_norm_backward")
  T.raises(function() torch.native_layer_norm_backward(g, x, mean, rstd, torch.randn(5), { 6 }) end,
    "native_layer_norm_backward")
  T.raises(function() torch.native_layer_norm_backward(g, x, mean, rstd, nil, { 6 }, { bogus = 1 }) end,
    "native_layer_norm_backward")
  T.raises(function() torch.native_layer_norm_backward(leaf(g), x, mean, rstd, nil, { 6 }) end,
    "native_layer_norm_backward", "derivative")
  local _, sm, si = torch.native_batch_norm(x, nil, nil, nil, nil, true, 0.1, 1e-5)
  T.raises(function() torch.native_batch_norm_backward(g, torch.randn(4, 5), nil, sm, si, true) end,
    "native_batch_norm_backward")
  T.raises(function() torch.native_batch_norm_backward(leaf(g), x, nil, sm, si, true) end,
    "native_batch_norm_backward", "derivative")
end)

T.done()
