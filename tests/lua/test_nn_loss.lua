-- Loss functions: values against PyTorch (one Python run for every case, float64 and
-- float32), float64 gradchecks w.r.t. input (and target where PyTorch differentiates it)
-- incl. non-contiguous inputs, and errors for bad shapes, targets and options.
local T = require "testing"
local P = require "pyref"
local f64, f32 = torch.float64, torch.float32
local gc = torch.autograd.gradcheck

torch.manual_seed(11)

local function leaf(t) return t:detach():clone():requires_grad_() end
local function randint(lo, hi, shape) return torch.randint(lo, hi + 1, shape) end

------------------------------------------------------------------------------
-- values against PyTorch
------------------------------------------------------------------------------
do
  local I = {}
  I.x2 = torch.randn(6, 5, { dtype = f64 })
  I.t2 = randint(1, 5, { 6 })
  I.t2i = I.t2:clone(); I.t2i[2] = 3; I.t2i[4] = 3       -- class 3 ignored below
  I.x4 = torch.randn(3, 4, 2, 3, { dtype = f64 })
  I.t4 = randint(1, 4, { 3, 2, 3 })
  I.x1 = torch.randn(5, { dtype = f64 })
  I.t0 = torch.tensor(4)
  I.w5 = torch.rand(5, { dtype = f64 }) + 0.5
  I.w4 = torch.rand(4, { dtype = f64 }) + 0.5
  I.pt = torch.softmax(torch.randn(6, 5, { dtype = f64 }), 2)
  I.a = torch.randn(4, 7, { dtype = f64 }) * 2
  I.b = torch.randn(4, 7, { dtype = f64 }) * 2
  I.p = torch.rand(4, 7, { dtype = f64 }) * 0.98 + 0.01
  I.q = torch.rand(4, 7, { dtype = f64 })
  I.p0 = I.p:clone(); I.p0[1][1] = 0; I.p0[2][2] = 1
  I.bw = torch.rand(4, 7, { dtype = f64 })
  I.pw = torch.rand(7, { dtype = f64 }) * 3
  I.lq = torch.log_softmax(torch.randn(4, 7, { dtype = f64 }), 2)
  I.lp = torch.log_softmax(torch.randn(4, 7, { dtype = f64 }), 2)
  I.kt = I.q:clone(); I.kt[1][3] = 0

  -- { name, lutorch fn, python expression }
  local cases = {
    { "nll mean", function(c) return torch.nll_loss(c.x2, I.t2) end, "F.nll_loss(x2, t2-1)" },
    { "nll sum weight", function(c) return torch.nll_loss(c.x2, I.t2, c.w5, "sum") end,
      "F.nll_loss(x2, t2-1, weight=w5, reduction='sum')" },
    { "nll mean weight ignore", function(c) return torch.nll_loss(c.x2, I.t2i, c.w5, "mean", 3) end,
      "F.nll_loss(x2, t2i-1, weight=w5, ignore_index=2)" },
    { "nll none", function(c) return torch.nll_loss(c.x2, I.t2i, nil, "none", 3) end,
      "F.nll_loss(x2, t2i-1, reduction='none', ignore_index=2)" },
    { "nll 4-D weight", function(c) return torch.nll_loss(c.x4, I.t4, c.w4) end, "F.nll_loss(x4, t4-1, weight=w4)" },
    { "nll 4-D none", function(c) return torch.nll_loss(c.x4, I.t4, nil, "none") end,
      "F.nll_loss(x4, t4-1, reduction='none')" },
    { "nll 1-D", function(c) return torch.nll_loss(c.x1, I.t0) end, "F.nll_loss(x1, t0-1)" },
    { "ce mean", function(c) return torch.cross_entropy(c.x2, I.t2) end, "F.cross_entropy(x2, t2-1)" },
    { "ce weight smoothing", function(c) return torch.cross_entropy(c.x2, I.t2i, c.w5, "mean", 3, 0.2) end,
      "F.cross_entropy(x2, t2i-1, weight=w5, ignore_index=2, label_smoothing=0.2)" },
    { "ce smoothing sum", function(c) return torch.cross_entropy(c.x2, I.t2, nil, "sum", -100, 0.1) end,
      "F.cross_entropy(x2, t2-1, reduction='sum', label_smoothing=0.1)" },
    { "ce smoothing none 4-D", function(c) return torch.cross_entropy(c.x4, I.t4, c.w4, "none", -100, 0.3) end,
      "F.cross_entropy(x4, t4-1, weight=w4, reduction='none', label_smoothing=0.3)" },
    { "ce probs", function(c) return torch.cross_entropy(c.x2, c.pt) end, "F.cross_entropy(x2, pt)" },
    { "ce probs weight smoothing", function(c) return torch.cross_entropy(c.x2, c.pt, c.w5, "mean", -100, 0.25) end,
      "F.cross_entropy(x2, pt, weight=w5, label_smoothing=0.25)" },
    { "ce 1-D", function(c) return torch.cross_entropy(c.x1, I.t0) end, "F.cross_entropy(x1, t0-1)" },
    { "mse", function(c) return torch.mse_loss(c.a, c.b) end, "F.mse_loss(a, b)" },
    { "mse none", function(c) return torch.mse_loss(c.a, c.b, "none") end, "F.mse_loss(a, b, reduction='none')" },
    { "l1 sum", function(c) return torch.l1_loss(c.a, c.b, "sum") end, "F.l1_loss(a, b, reduction='sum')" },
    { "smooth_l1", function(c) return torch.smooth_l1_loss(c.a, c.b) end, "F.smooth_l1_loss(a, b)" },
    { "smooth_l1 beta", function(c) return torch.smooth_l1_loss(c.a, c.b, "none", 2.5) end,
      "F.smooth_l1_loss(a, b, reduction='none', beta=2.5)" },
    { "smooth_l1 beta 0", function(c) return torch.smooth_l1_loss(c.a, c.b, "sum", 0.0) end,
      "F.smooth_l1_loss(a, b, reduction='sum', beta=0.0)" },
    { "huber", function(c) return torch.huber_loss(c.a, c.b) end, "F.huber_loss(a, b)" },
    { "huber delta", function(c) return torch.huber_loss(c.a, c.b, "none", 0.7) end,
      "F.huber_loss(a, b, reduction='none', delta=0.7)" },
    { "bce", function(c) return torch.binary_cross_entropy(c.p, c.q) end, "F.binary_cross_entropy(p, q)" },
    { "bce weight none", function(c) return torch.binary_cross_entropy(c.p, c.q, c.bw, "none") end,
      "F.binary_cross_entropy(p, q, weight=bw, reduction='none')" },
    { "bce clamped log", function(c) return torch.binary_cross_entropy(c.p0, c.q, nil, "none") end,
      "F.binary_cross_entropy(p0, q, reduction='none')" },
    { "bce logits", function(c) return torch.binary_cross_entropy_with_logits(c.a, c.q) end,
      "F.binary_cross_entropy_with_logits(a, q)" },
    { "bce logits weights", function(c) return torch.binary_cross_entropy_with_logits(c.a, c.q, c.bw, c.pw, "sum") end,
      "F.binary_cross_entropy_with_logits(a, q, weight=bw, pos_weight=pw, reduction='sum')" },
    { "bce logits large", function(c) return torch.binary_cross_entropy_with_logits(c.a * 30, c.q, nil, nil, "none") end,
      "F.binary_cross_entropy_with_logits(a*30, q, reduction='none')" },
    { "kl mean", function(c) return torch.kl_div(c.lq, c.kt) end, "F.kl_div(lq, kt, reduction='mean')" },
    { "kl batchmean", function(c) return torch.kl_div(c.lq, c.kt, "batchmean") end, "F.kl_div(lq, kt, reduction='batchmean')" },
    { "kl none", function(c) return torch.kl_div(c.lq, c.kt, "none") end, "F.kl_div(lq, kt, reduction='none')" },
    { "kl log_target sum", function(c) return torch.kl_div(c.lq, c.lp, "sum", true) end,
      "F.kl_div(lq, lp, reduction='sum', log_target=True)" },
  }
  if not P.available() then
    T.skip("losses against PyTorch", P.why())
  else
    local exprs = {}
    for i, c in ipairs(cases) do exprs[i] = c[3] end
    local ok, r = pcall(P.run, I, "import warnings; warnings.filterwarnings(\"ignore\")", exprs)
    if not ok then
      T.test("losses against PyTorch", function() error(r) end)
    else
      for _, dt in ipairs({ f64, f32 }) do
        local C = {}
        for k, v in pairs(I) do C[k] = (v.dtype == f64 and v:to(dt) or v) end
        local tol = dt == f64 and 1e-10 or 2e-5
        for i, c in ipairs(cases) do
          T.test(c[1] .. " " .. dt.name, function()
            local got = c[2](C)
            T.eq(got.dtype, dt)
            T.ok((got:to(f64) - r[i]):abs():max():item() <= tol * (1 + r[i]:abs():max():item()),
                 ("differs from PyTorch: %s vs %s"):format(tostring(got), tostring(r[i])))
          end)
        end
      end
    end
  end
end

------------------------------------------------------------------------------
-- gradients (float64 gradcheck)
------------------------------------------------------------------------------
T.test("nll_loss and cross_entropy gradcheck (weights, ignore_index, 4-D, non-contiguous)", function()
  local x = leaf(torch.randn(6, 5, { dtype = f64 }))
  local t = randint(1, 5, { 6 }); t[3] = 2
  local w = torch.rand(5, { dtype = f64 }) + 0.5
  local xt = leaf(torch.randn(5, 6, { dtype = f64 })):t()   -- non-contiguous (6, 5)
  for _, red in ipairs({ "mean", "sum", "none" }) do
    T.ok(gc(function(a) return torch.nll_loss(a, t, w, red, 2) end, { x }), "nll " .. red)
    T.ok(gc(function(a) return torch.cross_entropy(a, t, w, red, 2, 0.15) end, { x }), "ce " .. red)
  end
  T.ok(gc(function(a) return torch.nll_loss(a, t) end, { xt }))
  T.ok(gc(function(a) return torch.cross_entropy(a, t) end, { xt }))
  local x4 = leaf(torch.randn(2, 3, 2, 2, { dtype = f64 }))
  local t4 = randint(1, 3, { 2, 2, 2 })
  T.ok(gc(function(a) return torch.cross_entropy(a, t4, nil, "mean", -100, 0.1) end, { x4 }))
  local pt = leaf(torch.softmax(torch.randn(6, 5, { dtype = f64 }), 2))
  T.ok(gc(function(a, p) return torch.cross_entropy(a, p, w, "mean", -100, 0.2) end, { x, pt }))
end)

T.test("regression and binary losses gradcheck w.r.t. input and target", function()
  local a = leaf(torch.randn(4, 5, { dtype = f64 }) * 2)
  local b = leaf(torch.randn(5, 4, { dtype = f64 }) * 2):t()
  local p = leaf(torch.rand(4, 5, { dtype = f64 }) * 0.9 + 0.05)
  local q = leaf(torch.rand(4, 5, { dtype = f64 }))
  local w = torch.rand(4, 5, { dtype = f64 })
  local pw = torch.rand(5, { dtype = f64 }) * 2
  for _, red in ipairs({ "mean", "sum", "none" }) do
    T.ok(gc(function(x, y) return torch.mse_loss(x, y, red) end, { a, b }), "mse " .. red)
    T.ok(gc(function(x, y) return torch.l1_loss(x, y, red) end, { a, b }), "l1 " .. red)
    T.ok(gc(function(x, y) return torch.smooth_l1_loss(x, y, red, 0.8) end, { a, b }), "smooth_l1 " .. red)
    T.ok(gc(function(x, y) return torch.huber_loss(x, y, red, 1.3) end, { a, b }), "huber " .. red)
    T.ok(gc(function(x, y) return torch.binary_cross_entropy(x, y, w, red) end, { p, q }), "bce " .. red)
    T.ok(gc(function(x, y) return torch.binary_cross_entropy_with_logits(x, y, w, pw, red) end, { a, q }),
         "bce logits " .. red)
  end
  local lq = leaf(torch.log_softmax(torch.randn(4, 5, { dtype = f64 }), 2))
  local lp = leaf(torch.log_softmax(torch.randn(4, 5, { dtype = f64 }), 2))
  for _, red in ipairs({ "mean", "batchmean", "sum", "none" }) do
    T.ok(gc(function(x, y) return torch.kl_div(x, y, red) end, { lq, q }), "kl " .. red)
    T.ok(gc(function(x, y) return torch.kl_div(x, y, red, true) end, { lq, lp }), "kl log_target " .. red)
  end
end)

T.test("double backward through cross_entropy", function()
  local x = leaf(torch.randn(3, 4, { dtype = f64 }))
  local t = torch.tensor({ 1, 4, 2 })
  T.ok(torch.autograd.gradgradcheck(function(a) return torch.mse_loss(a:softmax(2), a) end, { x }))
end)

------------------------------------------------------------------------------
-- errors
------------------------------------------------------------------------------
T.test("errors name the op and the argument", function()
  local x = torch.randn(3, 4)
  T.raises(function() torch.nll_loss(x, torch.tensor({ 1, 5, 2 })) end, "nll_loss", "'target'", "5", "[1, 4]")
  T.raises(function() torch.nll_loss(x, torch.tensor({ 1, 0, 2 })) end, "nll_loss", "'target'", "0")
  T.raises(function() torch.cross_entropy(x, torch.tensor({ 1, 9, 2 })) end, "cross_entropy", "'target'", "9")
  T.raises(function() torch.nll_loss(x, torch.tensor({ 1, 2 })) end, "nll_loss", "'target'", "shape")
  T.raises(function() torch.nll_loss(x, torch.tensor({ 1.0, 2.0, 3.0 })) end, "nll_loss", "'target'", "integer")
  T.raises(function() torch.nll_loss(x, torch.tensor({ 1, 2, 3 }), torch.ones(3)) end, "nll_loss", "'weight'")
  T.raises(function() torch.cross_entropy(x, torch.rand(3, 5)) end, "cross_entropy", "'target'", "shape")
  T.raises(function() torch.cross_entropy(x, torch.tensor({ 1, 2, 3 }), nil, "mean", -100, 1.5) end,
           "cross_entropy", "'label_smoothing'")
  T.raises(function() torch.mse_loss(x, x, "avg") end, "mse_loss", "'reduction'", "avg")
  T.raises(function() torch.kl_div(x, x, "avg") end, "kl_div", "'reduction'", "batchmean")
  T.raises(function() torch.binary_cross_entropy(x, torch.rand(3, 4)) end, "binary_cross_entropy", "'input'", "between 0 and 1")
  T.raises(function() torch.binary_cross_entropy(torch.rand(3, 4), torch.rand(4, 3)) end,
           "binary_cross_entropy", "'target'", "shape")
  T.raises(function() torch.binary_cross_entropy_with_logits(x, torch.rand(4)) end,
           "binary_cross_entropy_with_logits", "'target'")
  T.raises(function() torch.smooth_l1_loss(x, x, "mean", -1.0) end, "smooth_l1_loss", "'beta'")
  T.raises(function() torch.huber_loss(x, x, "mean", 0.0) end, "huber_loss", "'delta'")
end)

T.test("all targets ignored gives NaN mean like PyTorch; sum gives 0", function()
  local x = torch.randn(2, 3, { dtype = f64 })
  local t = torch.tensor({ 2, 2 })
  local m = torch.nll_loss(x, t, nil, "mean", 2):item()
  T.ok(m ~= m)
  T.eq(torch.nll_loss(x, t, nil, "sum", 2):item(), 0.0)
end)

T.done()
