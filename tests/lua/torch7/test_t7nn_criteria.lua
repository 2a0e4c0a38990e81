-- test_t7nn_criteria.lua — Torch7 mode's nn criteria (lib/t7nn/criteria.lua), under
-- `lutorch --torch7` (tests/sh/test_torch7_mode.sh). Forward values are checked against
-- PyTorch (tests/lua/pyref.lua) where it has the loss, else against plain Lua arithmetic;
-- backward passes against central differences through nn.Jacobian (float64); bad inputs
-- must raise errors naming the class.
local T = require "testing"
local P = require "pyref"
require "nn"

torch.manualSeed(11)
local HAVE_PY = P.available()

-- a criterion seen as a module of its input (a tensor; split gives the criterion a table
-- made of the tensor's rows) with a 1-element output, so that nn.Jacobian checks its
-- gradient; the target stays fixed
local CritModule, CritModuleParent = torch.class("nn.TestCriterionAsModule", "nn.Module")
function CritModule:__init(crit, target, split)
  CritModuleParent.__init(self)
  self.crit, self.target, self.split = crit, target, split
end
function CritModule:view_input(input)
  if not self.split then return input end
  local t = {}
  for i = 1, input:size(1) do t[i] = input[i] end
  return t
end
function CritModule:updateOutput(input)
  local loss = self.crit:forward(self:view_input(input), self.target)
  self.output:resize(1):fill(loss)
  return self.output
end
function CritModule:updateGradInput(input, gradOutput)
  local g = self.crit:backward(self:view_input(input), self.target)
  self.gradInput:resizeAs(input)
  if self.split then
    for i = 1, input:size(1) do self.gradInput[i]:copy(g[i]) end
  else
    self.gradInput:copy(g)
  end
  self.gradInput:mul(gradOutput[1])
  return self.gradInput
end

-- the largest error of the criterion's gradient (input redrawn in [lo, hi])
local function jacobian(crit, input, target, lo, hi, split)
  return nn.Jacobian.testJacobian(nn.TestCriterionAsModule(crit, target, split), input, lo, hi)
end
local PREC = 1e-5

local function num(v) return type(v) == "number" and v or v:sum() end

-- PyTorch comparisons are collected and made at the end in one Python run (starting
-- Python with torch costs seconds): each snippet computes y from its inputs
local pending = {}
local function near_py(got, inputs, code, tol, what)
  pending[#pending + 1] = { got = got, inputs = inputs, code = code, tol = tol or 1e-10,
    what = what or code }
end

local function pyliteral(v)
  if torch.isTensor(v) then
    local dt = v:type():match("torch%.(%a+)Tensor")
    local pydt = ({ Double = "float64", Float = "float32", Long = "int64", Int = "int32", Byte = "uint8" })[dt]
    return ("torch.tensor(%s, dtype=torch.float64).reshape([%s]).to(torch.%s)"):format(
      P.pylist(v:contiguous():view(-1):double():totable()), table.concat(v:size():totable(), ","), pydt)
  end
  return ("%.17g"):format(v)
end

local function run_pending()
  local src = { "import warnings", "warnings.filterwarnings('ignore')", "import torch, math",
    "import torch.nn.functional as F", "torch.set_default_dtype(torch.float64)", "_r = []" }
  for i, p in ipairs(pending) do
    src[#src + 1] = ("def _f%d():"):format(i)
    local names = {}
    for k in pairs(p.inputs) do names[#names + 1] = k end
    table.sort(names)
    for _, k in ipairs(names) do src[#src + 1] = ("    %s = %s"):format(k, pyliteral(p.inputs[k])) end
    src[#src + 1] = "    " .. p.code
    src[#src + 1] = "    return float(y)"
    src[#src + 1] = ("_r.append(repr(_f%d()))"):format(i)
  end
  src[#src + 1] = "print('return {' + ','.join(_r).replace('nan', '(0/0)') + '}')"
  local res = P.python(src, "PyTorch side")
  for i, p in ipairs(pending) do T.near(p.got, res[i], p.tol, p.what) end
end

-- f() raises an error whose message names the class
local function raises(f, name)
  local ok, err = pcall(f)
  T.ok(not ok, "expected an error from " .. name)
  T.ok(tostring(err):find(name, 1, true), ("error should name %s: %s"):format(name, tostring(err)))
end

if not HAVE_PY then print("SKIP the PyTorch comparisons: " .. tostring(P.why())) end

---------------------------------------------------------------------------------------------
T.test("MSECriterion: mean and sum, any shapes of one count, gradient", function()
  local x, t = torch.randn(3, 4), torch.randn(3, 4)
  local c = nn.MSECriterion()
  T.eq(c.sizeAverage, true)
  near_py(c:forward(x, t), { x = x, t = t }, "y = F.mse_loss(x, t)")
  local s = nn.MSECriterion(false)
  near_py(s:forward(x, t), { x = x, t = t }, "y = F.mse_loss(x, t, reduction='sum')")
  -- a target of another shape with the same element count pairs elements in order
  T.near(c:forward(x, t:view(12)), c:forward(x, t), 1e-14)
  T.near(c:forward(x, t:t():contiguous():t()), c:forward(x, t), 1e-14)
  local g = c:backward(x, t)
  T.ok((g - (x - t) * (2 / 12)):abs():max() < 1e-14)
  T.ok(jacobian(c, torch.Tensor(3, 4), t) < PREC)
  T.ok(jacobian(s, torch.Tensor(5), torch.randn(5)) < PREC)
  raises(function() c:forward(torch.randn(3), torch.randn(4)) end, "nn.MSECriterion")
  raises(function() c:forward(torch.randn(3), 1) end, "nn.MSECriterion")
end)

T.test("SpatialAutoCropMSECriterion: the target cropped at its centre", function()
  for _, avg in ipairs({ true, false }) do
    local c = nn.SpatialAutoCropMSECriterion(avg)
    local x, t = torch.randn(2, 3, 4, 5), torch.randn(2, 3, 7, 6)
    local ct = t[{ {}, {}, { 2, 5 }, { 1, 5 } }]
    T.near(c:forward(x, t), nn.MSECriterion(avg):forward(x, ct), 1e-13)
    local x3, t3 = torch.randn(3, 2, 2), torch.randn(3, 4, 3)
    T.near(c:forward(x3, t3), nn.MSECriterion(avg):forward(x3, t3[{ {}, { 2, 3 }, { 1, 2 } }]), 1e-13)
    T.ok(jacobian(c, torch.Tensor(1, 2, 3, 3), torch.randn(1, 2, 5, 4)) < PREC)
  end
  local c = nn.SpatialAutoCropMSECriterion()
  raises(function() c:forward(torch.randn(3, 3, 3), torch.randn(4, 3, 3)) end, "nn.SpatialAutoCropMSECriterion")
  raises(function() c:forward(torch.randn(2, 3, 3, 3), torch.randn(1, 3, 3, 3)) end, "nn.SpatialAutoCropMSECriterion")
  raises(function() c:forward(torch.randn(2, 5, 5), torch.randn(2, 5, 4)) end, "nn.SpatialAutoCropMSECriterion")
  raises(function() c:forward(torch.randn(5, 5), torch.randn(5, 5)) end, "nn.SpatialAutoCropMSECriterion")
end)

T.test("WeightedMSECriterion: MSE against target * weight, per sample in a batch", function()
  local w = torch.rand(4)
  local c = nn.WeightedMSECriterion(w)
  local x, t = torch.randn(4), torch.randn(4)
  local d = x - torch.cmul(t, w)
  T.near(c:forward(x, t), d:dot(d) / 4, 1e-13)
  local xb, tb = torch.randn(3, 4), torch.randn(3, 4)
  local db = xb - torch.cmul(tb, w:view(1, 4):expand(3, 4))
  T.near(c:forward(xb, tb), db:dot(db) / 12, 1e-13)
  T.ok(jacobian(c, torch.Tensor(4), t) < PREC)
  T.ok(jacobian(c, torch.Tensor(3, 4), tb) < PREC)
  raises(function() nn.WeightedMSECriterion() end, "nn.WeightedMSECriterion")
  raises(function() c:forward(torch.randn(3, 5), torch.randn(3, 5)) end, "nn.WeightedMSECriterion")
end)

T.test("ClassSimplexCriterion: unit vertices at equal angles; MSE to the class's vertex", function()
  local n = 5
  local c = nn.ClassSimplexCriterion(n)
  local s = c.simplex
  T.eq(s:size():totable(), { n, n })
  for i = 1, n do
    T.near(s[i]:norm(), 1, 1e-12)
    for j = i + 1, n do T.near(s[i]:dot(s[j]), -1 / (n - 1), 1e-12) end
  end
  local x = torch.randn(n)
  local d = x - s[3]
  T.near(c:forward(x, 3), d:dot(d) / n, 1e-13)
  local xb = torch.randn(2, n)
  local tb = torch.LongTensor({ 4, 1 })
  local db = xb - s:index(1, tb)
  T.near(c:forward(xb, tb), db:dot(db) / (2 * n), 1e-13)
  T.near(c:forward(xb, torch.Tensor({ 4, 1 })), db:dot(db) / (2 * n), 1e-13)
  T.ok(jacobian(c, torch.Tensor(n), 2) < PREC)
  T.ok(jacobian(c, torch.Tensor(2, n), tb) < PREC)
  T.eq(c:getTopPrediction(s:index(1, torch.LongTensor({ 2, 5 }))):totable(), { 2, 5 })
  raises(function() nn.ClassSimplexCriterion(1) end, "nn.ClassSimplexCriterion")
  raises(function() nn.ClassSimplexCriterion(2.5) end, "nn.ClassSimplexCriterion")
  raises(function() c:forward(x, 6) end, "nn.ClassSimplexCriterion")
  raises(function() c:forward(torch.randn(n + 1), 1) end, "nn.ClassSimplexCriterion")
end)

T.test("AbsCriterion: mean and sum of |x - t|, gradient +-1", function()
  local x, t = torch.randn(6), torch.randn(6)
  local c = nn.AbsCriterion()
  near_py(c:forward(x, t), { x = x, t = t }, "y = F.l1_loss(x, t)")
  near_py(nn.AbsCriterion(false):forward(x, t), { x = x, t = t }, "y = F.l1_loss(x, t, reduction='sum')")
  -- x = t gives +1 (Torch7's choice)
  T.eq(nn.AbsCriterion(false):backward(torch.Tensor({ 1, 2 }), torch.Tensor({ 1, 3 })):totable(), { 1, -1 })
  T.ok(jacobian(c, torch.Tensor(6), t) < PREC)
  raises(function() c:forward(x, torch.randn(5)) end, "nn.AbsCriterion")
end)

T.test("SmoothL1Criterion: quadratic inside 1, linear outside", function()
  local x, t = torch.randn(8) * 2, torch.randn(8)
  local c = nn.SmoothL1Criterion()
  near_py(c:forward(x, t), { x = x, t = t }, "y = F.smooth_l1_loss(x, t)")
  near_py(nn.SmoothL1Criterion(false):forward(x, t), { x = x, t = t }, "y = F.smooth_l1_loss(x, t, reduction='sum')")
  T.near(nn.SmoothL1Criterion(false):forward(torch.Tensor({ 0.5, 3 }), torch.Tensor({ 0, 0 })), 0.125 + 2.5, 1e-14)
  T.ok(jacobian(c, torch.Tensor(8), t) < PREC)
  raises(function() c:forward(x, "a") end, "nn.SmoothL1Criterion")
end)

T.test("MarginCriterion: max(0, margin - x y)", function()
  local x = torch.randn(10)
  local y = torch.Tensor(10):random(0, 1):mul(2):add(-1)
  local c = nn.MarginCriterion(0.7)
  local want = 0
  for i = 1, 10 do want = want + math.max(0, 0.7 - x[i] * y[i]) end
  T.near(c:forward(x, y), want / 10, 1e-14)
  c.sizeAverage = false
  T.near(c:forward(x, y), want, 1e-14)
  T.ok(jacobian(nn.MarginCriterion(), torch.Tensor(10), y) < PREC)
  raises(function() c:forward(x, torch.randn(3)) end, "nn.MarginCriterion")
end)

T.test("SoftMarginCriterion: log(1 + exp(-x y)), stable for large margins", function()
  local x = torch.randn(7)
  local y = torch.Tensor(7):random(0, 1):mul(2):add(-1)
  local c = nn.SoftMarginCriterion()
  near_py(c:forward(x, y), { x = x, t = y }, "y = F.soft_margin_loss(x, t)")
  T.near(c:forward(torch.Tensor({ -800 }), torch.Tensor({ 1 })), 800, 1e-12)
  T.ok(jacobian(c, torch.Tensor(7), y) < PREC)
  raises(function() c:forward(x, torch.randn(2)) end, "nn.SoftMarginCriterion")
end)

T.test("DistKLDivCriterion: sum of t (log t - x) over t > 0", function()
  local x = torch.randn(3, 4)
  local t = torch.rand(3, 4)
  t[1][2] = 0
  local c = nn.DistKLDivCriterion()
  near_py(c:forward(x, t), { x = x, t = t }, "y = F.kl_div(x, t, reduction='mean')")
  c.sizeAverage = false
  near_py(c:forward(x, t), { x = x, t = t }, "y = F.kl_div(x, t, reduction='sum')")
  T.eq(c:backward(x, t)[1][2], 0)
  T.ok(jacobian(nn.DistKLDivCriterion(), torch.Tensor(3, 4), t) < PREC)
  raises(function() c:forward(x, torch.rand(12)) end, "nn.DistKLDivCriterion")
end)

T.test("L1Cost: sum of |x|, gradient sign(x)", function()
  local x = torch.randn(9)
  local c = nn.L1Cost()
  T.near(c:forward(x), torch.abs(x):sum(), 1e-14)
  T.eq(c:backward(torch.Tensor({ -2, 0, 3 })):totable(), { -1, 0, 1 })
  T.ok(jacobian(c, torch.Tensor(9)) < PREC)
  raises(function() c:forward({}) end, "nn.L1Cost")
end)

T.test("BCECriterion: weights, batches, inputs outside [0, 1] refused", function()
  local x = torch.rand(4, 5) * 0.9 + 0.05
  local t = torch.rand(4, 5)
  local w = torch.rand(5)
  local c = nn.BCECriterion()
  near_py(c:forward(x, t), { x = x, t = t }, "y = F.binary_cross_entropy(x, t)", 1e-9)
  local cw = nn.BCECriterion(w, false)
  near_py(cw:forward(x, t), { x = x, t = t, w = w }, "y = F.binary_cross_entropy(x, t, weight=w, reduction='sum')", 1e-9)
  T.eq(#cw, 5)
  local x1, t1 = torch.rand(5) * 0.9 + 0.05, torch.rand(5)
  near_py(nn.BCECriterion(w):forward(x1, t1), { x = x1, t = t1, w = w },
    "y = F.binary_cross_entropy(x, t, weight=w)", 1e-9)
  T.ok(jacobian(c, torch.Tensor(4, 5), t, 0.05, 0.95) < PREC)
  T.ok(jacobian(cw, torch.Tensor(4, 5), t, 0.05, 0.95) < PREC)
  raises(function() c:forward(torch.Tensor({ 1.5 }), torch.Tensor({ 1 })) end, "nn.BCECriterion")
  raises(function() nn.BCECriterion(torch.rand(2, 2)) end, "nn.BCECriterion")
  raises(function() cw:forward(torch.rand(4, 6), torch.rand(4, 6)) end, "nn.BCECriterion")
end)

T.test("ClassNLLCriterion: 1-D and batch, weights, sizeAverage, ignoreIndex", function()
  local x = torch.randn(5, 4)
  local t = torch.LongTensor({ 1, 4, 2, 2, 3 })
  local w = torch.rand(4)
  local inputs = { x = x, t = t, w = w }
  local c = nn.ClassNLLCriterion()
  near_py(c:forward(x, t), inputs, "y = F.nll_loss(x, t - 1)")
  near_py(nn.ClassNLLCriterion(w):forward(x, t), inputs, "y = F.nll_loss(x, t - 1, weight=w)")
  near_py(nn.ClassNLLCriterion(w, false):forward(x, t), inputs, "y = F.nll_loss(x, t - 1, weight=w, reduction='sum')")
  -- the targets may be of any tensor type; forward returns the total weight too
  local out, tw = nn.ClassNLLCriterion(w):forward(x, torch.Tensor({ 1, 4, 2, 2, 3 }))
  T.near(tw, w[1] + w[4] + 2 * w[2] + w[3], 1e-12)
  T.near(out, nn.ClassNLLCriterion(w):forward(x, t), 1e-14)
  -- one sample: a number or a 1-element tensor
  local x1 = torch.randn(4)
  T.near(c:forward(x1, 3), -x1[3], 1e-14)
  T.near(c:forward(x1, torch.LongTensor({ 3 })), -x1[3], 1e-14)
  T.near(nn.ClassNLLCriterion(w, false):forward(x1, 3), -x1[3] * w[3], 1e-14)
  T.eq(nn.ClassNLLCriterion(w, false):backward(x1, 3)[3], -w[3])
  T.eq(nn.ClassNLLCriterion(w):backward(x1, 3)[3], -1)
  -- gradients
  for _, cr in ipairs({ c, nn.ClassNLLCriterion(w), nn.ClassNLLCriterion(w, false) }) do
    T.ok(jacobian(cr, torch.Tensor(5, 4), t) < PREC)
    T.ok(jacobian(cr, torch.Tensor(4), 2) < PREC)
  end
  -- ignoreIndex: those samples count for nothing
  local ci = nn.ClassNLLCriterion(nil, nil, -1)
  T.eq(ci:forward(x1, -1), 0)
  T.eq(ci:backward(x1, -1):abs():sum(), 0)
  local ti = t:clone(); ti[1] = -1
  local o = ci:forward(x, ti)
  local g = ci:backward(x, ti):clone()
  T.eq(g[1]:abs():sum(), 0)
  T.near(o, ci:forward(x:sub(2, 5), ti:sub(2, 5)), 1e-14)
  T.ok((ci:backward(x:sub(2, 5), ti:sub(2, 5)) - g:sub(2, 5)):abs():max() < 1e-14)
  -- every sample ignored: 0, not NaN
  T.eq(ci:forward(x, torch.LongTensor(5):fill(-1)), 0)
  T.eq(ci:backward(x, torch.LongTensor(5):fill(-1)):abs():sum(), 0)
  raises(function() c:forward(x, torch.LongTensor({ 1, 2, 3, 4, 5 })) end, "nn.ClassNLLCriterion")
  raises(function() c:forward(x, torch.LongTensor({ 1, 2 })) end, "nn.ClassNLLCriterion")
  raises(function() c:forward(torch.randn(2, 3, 4), torch.LongTensor({ 1, 2 })) end, "nn.ClassNLLCriterion")
  raises(function() c:forward(x1, 0) end, "nn.ClassNLLCriterion")
  raises(function() nn.ClassNLLCriterion(torch.rand(3)):forward(x, t) end, "nn.ClassNLLCriterion")
  raises(function() nn.ClassNLLCriterion(torch.rand(2, 2)) end, "nn.ClassNLLCriterion")
end)

T.test("SpatialClassNLLCriterion: per pixel, as ClassNLLCriterion of the pixels", function()
  local x = torch.randn(2, 3, 4, 5)
  local t = torch.LongTensor(2, 4, 5):random(1, 3)
  local w = torch.rand(3)
  local c = nn.SpatialClassNLLCriterion(w)
  local flat = x:permute(1, 3, 4, 2):contiguous():view(-1, 3)
  T.near(c:forward(x, t), nn.ClassNLLCriterion(w):forward(flat, t:view(-1)), 1e-12)
  near_py(nn.SpatialClassNLLCriterion(nil, false):forward(x, t), { x = x, t = t },
    "y = F.nll_loss(x, t - 1, reduction='sum')")
  T.ok(jacobian(c, torch.Tensor(1, 3, 2, 3), torch.LongTensor(1, 2, 3):random(1, 3)) < PREC)
  T.ok(jacobian(nn.SpatialClassNLLCriterion(nil, false), torch.Tensor(1, 3, 2, 2),
    torch.LongTensor(1, 2, 2):random(1, 3)) < PREC)
  raises(function() c:forward(torch.randn(3, 4, 5), t[1]) end, "nn.SpatialClassNLLCriterion")
  raises(function() c:forward(x, torch.LongTensor(2, 4, 4):fill(1)) end, "nn.SpatialClassNLLCriterion")
  raises(function() c:forward(x, torch.LongTensor(2, 4, 5):fill(4)) end, "nn.SpatialClassNLLCriterion")
end)

T.test("CrossEntropyCriterion: log-softmax then NLL; squeezing; sizeAverage propagation", function()
  local x = torch.randn(4, 6)
  local t = torch.LongTensor({ 2, 6, 1, 3 })
  local w = torch.rand(6)
  local c = nn.CrossEntropyCriterion()
  near_py(c:forward(x, t), { x = x, t = t }, "y = F.cross_entropy(x, t - 1)")
  near_py(nn.CrossEntropyCriterion(w):forward(x, t), { x = x, t = t, w = w }, "y = F.cross_entropy(x, t - 1, weight=w)")
  local x1 = torch.randn(6)
  near_py(c:forward(x1, 5), { x = x1:view(1, 6) }, "y = F.cross_entropy(x, torch.tensor([4]))")
  -- a 1 x 6 batch is squeezed to one sample; the gradient keeps the input's shape
  T.near(c:forward(x1:view(1, 6), torch.Tensor({ 5 })), c:forward(x1, 5), 1e-14)
  T.eq(c:backward(x1:view(1, 6), torch.Tensor({ 5 })):size():totable(), { 1, 6 })
  T.ok(jacobian(c, torch.Tensor(4, 6), t) < PREC)
  T.ok(jacobian(nn.CrossEntropyCriterion(w), torch.Tensor(6), 2) < PREC)
  local cs = nn.CrossEntropyCriterion(w)
  cs.sizeAverage = false
  near_py(cs:forward(x, t), { x = x, t = t, w = w }, "y = F.cross_entropy(x, t - 1, weight=w, reduction='sum')")
  T.eq(cs.nll.sizeAverage, false)
  local cn = nn.CrossEntropyCriterion()
  cn.nll.sizeAverage = false
  T.near(cn:forward(x, t), cs.nll.weights and nn.CrossEntropyCriterion(nil, false):forward(x, t), 1e-14)
  T.eq(cn.nll.sizeAverage, false)
  T.ok(jacobian(cs, torch.Tensor(4, 6), t) < PREC)
  raises(function() c:forward(torch.randn(2, 3, 4), torch.LongTensor({ 1, 2 })) end, "nn.CrossEntropyCriterion")
  raises(function() c:forward(x, torch.LongTensor({ 1, 2, 7, 1 })) end, "nn.ClassNLLCriterion")
end)

T.test("MultiLabelSoftMarginCriterion: BCE of sigmoid(x), weights", function()
  local x = torch.randn(3, 5) * 3
  local t = torch.rand(3, 5):round()
  local w = torch.rand(5)
  near_py(nn.MultiLabelSoftMarginCriterion():forward(x, t), { x = x, t = t },
    "y = F.multilabel_soft_margin_loss(x, t)", 1e-12)
  near_py(nn.MultiLabelSoftMarginCriterion(w):forward(x, t), { x = x, t = t, w = w },
    "y = F.multilabel_soft_margin_loss(x, t, weight=w)", 1e-12)
  T.ok(jacobian(nn.MultiLabelSoftMarginCriterion(), torch.Tensor(3, 5), t) < PREC)
  T.ok(jacobian(nn.MultiLabelSoftMarginCriterion(w, false), torch.Tensor(3, 5), t) < PREC)
  T.ok(jacobian(nn.MultiLabelSoftMarginCriterion(w), torch.Tensor(5), t[1]) < PREC)
  raises(function() nn.MultiLabelSoftMarginCriterion():forward(x, torch.rand(4)) end, "nn.MultiLabelSoftMarginCriterion")
end)

T.test("MultiMarginCriterion: p = 1 and 2, margins, weights", function()
  local x = torch.randn(4, 5)
  local t = torch.LongTensor({ 2, 5, 1, 1 })
  local w = torch.rand(5)
  local inputs = { x = x, t = t, w = w }
  near_py(nn.MultiMarginCriterion():forward(x, t), inputs, "y = F.multi_margin_loss(x, t - 1)")
  near_py(nn.MultiMarginCriterion(2, w, 0.5):forward(x, t), inputs,
    "y = F.multi_margin_loss(x, t - 1, p=2, margin=0.5, weight=w)")
  local c = nn.MultiMarginCriterion(1, w)
  c.sizeAverage = false
  near_py(c:forward(x, t), inputs, "y = F.multi_margin_loss(x, t - 1, weight=w, reduction='sum')")
  local x1 = torch.randn(5)
  near_py(nn.MultiMarginCriterion():forward(x1, 3), { x = x1:view(1, 5) },
    "y = F.multi_margin_loss(x, torch.tensor([2]))")
  T.ok(jacobian(nn.MultiMarginCriterion(), torch.Tensor(4, 5), t) < PREC)
  T.ok(jacobian(nn.MultiMarginCriterion(2, w, 0.3), torch.Tensor(4, 5), t) < PREC)
  T.ok(jacobian(c, torch.Tensor(5), 4) < PREC)
  raises(function() nn.MultiMarginCriterion(3) end, "nn.MultiMarginCriterion")
  raises(function() nn.MultiMarginCriterion():forward(x, torch.LongTensor({ 1, 2, 3 })) end, "nn.MultiMarginCriterion")
  raises(function() nn.MultiMarginCriterion():forward(x1, 6) end, "nn.MultiMarginCriterion")
  raises(function() nn.MultiMarginCriterion():forward(torch.randn(2, 2, 2), 1) end, "nn.MultiMarginCriterion")
end)

T.test("MultiLabelMarginCriterion: targets listed up to the first 0", function()
  local x = torch.randn(3, 4)
  local t = torch.LongTensor({ { 2, 4, 0, 0 }, { 1, 0, 3, 0 }, { 4, 3, 2, 1 } })
  local c = nn.MultiLabelMarginCriterion()
  near_py(c:forward(x, t), { x = x, t = t }, "y = F.multilabel_margin_loss(x, t - 1)")
  c.sizeAverage = false
  near_py(c:forward(x, t), { x = x, t = t }, "y = F.multilabel_margin_loss(x, t - 1, reduction='sum')")
  T.eq(c.isTarget:totable(), { { 0, 1, 0, 1 }, { 1, 0, 0, 0 }, { 1, 1, 1, 1 } })
  local x1 = torch.randn(4)
  near_py(nn.MultiLabelMarginCriterion():forward(x1, torch.LongTensor({ 3, 0, 0, 0 })), { x = x1 },
    "y = F.multilabel_margin_loss(x.view(1, 4), torch.tensor([[2, -1, -1, -1]]))")
  T.ok(jacobian(nn.MultiLabelMarginCriterion(), torch.Tensor(3, 4), t) < PREC)
  T.ok(jacobian(c, torch.Tensor(4), torch.LongTensor({ 3, 1, 0, 0 })) < PREC)
  raises(function() c:forward(x, torch.LongTensor({ 1, 2, 3, 4 })) end, "nn.MultiLabelMarginCriterion")
  raises(function() c:forward(x, t:clone():fill(5)) end, "nn.MultiLabelMarginCriterion")
end)

T.test("HingeEmbeddingCriterion: x for y = 1, max(0, margin - x) for y = -1", function()
  local x = torch.Tensor({ 0.3, 2.1, 1.8, 0 })
  local y = torch.Tensor({ 1, -1, -1, 1 })
  local c = nn.HingeEmbeddingCriterion(2)
  T.near(c:forward(x, y), (0.3 + 0.2) / 4, 1e-14)
  T.eq(c:backward(x, y):totable(), { 0.25, 0, -0.25, 0.25 })
  local xr = torch.rand(6) * 3
  local yr = torch.Tensor(6):random(0, 1):mul(2):add(-1)
  near_py(nn.HingeEmbeddingCriterion(1.5):forward(xr, yr), { x = xr, t = yr },
    "y = F.hinge_embedding_loss(x, t, margin=1.5)")
  T.near(c:forward(torch.Tensor({ 0.5 }), -1), 1.5, 1e-14)
  T.ok(jacobian(nn.HingeEmbeddingCriterion(1.5), torch.Tensor(6), yr, 0, 3) < PREC)
  raises(function() c:forward(x, torch.Tensor({ 1, 1 })) end, "nn.HingeEmbeddingCriterion")
end)

T.test("L1HingeEmbeddingCriterion: the L1 distance of a pair, hinged for y = -1", function()
  local a, b = torch.randn(5), torch.randn(5)
  local d = (a - b):abs():sum()
  local c = nn.L1HingeEmbeddingCriterion(d + 1)
  T.near(c:forward({ a, b }, 1), d, 1e-14)
  T.near(c:forward({ a, b }, -1), 1, 1e-12)
  T.eq(nn.L1HingeEmbeddingCriterion(d / 2):forward({ a, b }, -1), 0)
  local v = torch.Tensor(2, 5)
  T.ok(jacobian(c, v, 1, -2, 2, true) < PREC)
  T.ok(jacobian(nn.L1HingeEmbeddingCriterion(100), v, -1, -2, 2, true) < PREC)
  raises(function() c:forward(a, 1) end, "nn.L1HingeEmbeddingCriterion")
  raises(function() c:forward({ a, torch.randn(3) }, 1) end, "nn.L1HingeEmbeddingCriterion")
  raises(function() c:forward({ a, b }, 0) end, "nn.L1HingeEmbeddingCriterion")
end)

T.test("CosineEmbeddingCriterion: pairs and batches", function()
  local a, b = torch.randn(4, 3), torch.randn(4, 3)
  local y = torch.Tensor({ 1, -1, -1, 1 })
  local inputs = { a = a, b = b, t = y }
  local c = nn.CosineEmbeddingCriterion(0.2)
  near_py(c:forward({ a, b }, y), inputs, "y = F.cosine_embedding_loss(a, b, t, margin=0.2)", 1e-12)
  c.sizeAverage = false
  near_py(c:forward({ a, b }, y), inputs, "y = F.cosine_embedding_loss(a, b, t, margin=0.2, reduction='sum')", 1e-12)
  -- one pair, y a number: the gradient is 0 past the margin
  local v1, v2 = torch.Tensor({ 1, 0 }), torch.Tensor({ 0.5, math.sqrt(3) * 0.5 })
  local c1 = nn.CosineEmbeddingCriterion(0.6)
  T.near(c1:forward({ v1, v2 }, -1), 0, 1e-12)
  local g = c1:backward({ v1, v2 }, -1)
  T.eq(g[1]:size():totable(), { 2 })
  T.eq(g[1]:abs():sum() + g[2]:abs():sum(), 0)
  T.near(nn.CosineEmbeddingCriterion():forward({ v1, v2 }, 1), 0.5, 1e-12)
  T.ok(jacobian(nn.CosineEmbeddingCriterion(-0.5), torch.Tensor(2, 5), 1, -2, 2, true) < PREC)
  T.ok(jacobian(nn.CosineEmbeddingCriterion(-0.5), torch.Tensor(2, 5), -1, -2, 2, true) < PREC)
  T.ok(jacobian(nn.CosineEmbeddingCriterion(-0.3), torch.Tensor(2, 4, 3), y, -2, 2, true) < PREC)
  T.ok(jacobian(c, torch.Tensor(2, 4, 3), y, -2, 2, true) < PREC)
  raises(function() c:forward({ a, torch.randn(4, 2) }, y) end, "nn.CosineEmbeddingCriterion")
  raises(function() c:forward({ a, b }, torch.Tensor({ 1, 1 })) end, "nn.CosineEmbeddingCriterion")
end)

T.test("MarginRankingCriterion: one pair (y a number) and batches; float copies", function()
  local c = nn.MarginRankingCriterion(0.5)
  local a, b = torch.Tensor({ 0.3 }), torch.Tensor({ 0.1 })
  T.near(c:forward({ a, b }, 1), 0.3, 1e-14)
  T.near(c:forward({ a, b }, -1), 0.7, 1e-14)
  local g = c:backward({ a, b }, -1)
  T.eq({ g[1][1], g[2][1] }, { 1, -1 })
  local x1, x2 = torch.randn(5), torch.randn(5)
  local y = torch.Tensor({ 1, -1, 1, 1, -1 })
  near_py(c:forward({ x1, x2 }, y), { a = x1, b = x2, t = y }, "y = F.margin_ranking_loss(a, b, t, margin=0.5)")
  T.ok(jacobian(c, torch.Tensor(2, 5), y, -2, 2, true) < PREC)
  c.sizeAverage = false
  T.ok(jacobian(c, torch.Tensor(2, 5), y, -2, 2, true) < PREC)
  local cf = c:clone():float()
  T.near(cf:forward({ x1:float(), x2:float() }, y:float()), c:forward({ x1, x2 }, y), 1e-5)
  T.eq(torch.type(cf:backward({ x1:float(), x2:float() }, y:float())[1]), "torch.FloatTensor")
  raises(function() c:forward(x1, 1) end, "nn.MarginRankingCriterion")
  raises(function() c:forward({ x1, x2 }, torch.Tensor({ 1, 1 })) end, "nn.MarginRankingCriterion")
end)

T.test("DistanceRatioCriterion: X + log(exp(-X) + exp(-Y))", function()
  local X, Y = torch.rand(6, 1) * 3, torch.rand(6, 1) * 3
  local c = nn.DistanceRatioCriterion()
  local want = 0
  for i = 1, 6 do
    local x, y = X[i][1], Y[i][1]
    want = want + x + math.log(math.exp(-x) + math.exp(-y))
  end
  T.near(c:forward({ X, Y }), want / 6, 1e-13)
  T.near(nn.DistanceRatioCriterion(false):forward({ X, Y }), want, 1e-13)
  local g = c:backward({ X, Y })
  T.near((g[1] + g[2]):abs():max(), 0, 1e-13)
  T.near(g[1][1][1], (1 - math.exp(-X[1][1]) / (math.exp(-X[1][1]) + math.exp(-Y[1][1]))) / 6, 1e-13)
  T.ok(jacobian(c, torch.Tensor(2, 6), nil, 0, 3, true) < PREC)
  raises(function() c:forward({ X }) end, "nn.DistanceRatioCriterion")
  raises(function() c:forward({ X, torch.rand(5, 1) }) end, "nn.DistanceRatioCriterion")
end)

---------------------------------------------------------------------------------------------
T.test("MultiCriterion: the weighted sum of criteria of one input", function()
  local x = torch.randn(3, 5)
  local t = torch.LongTensor({ 1, 5, 2 })
  local nll, ce = nn.ClassNLLCriterion(), nn.CrossEntropyCriterion()
  local mc = nn.MultiCriterion():add(nll, 0.5):add(ce)
  T.near(mc:forward(x, t), nll:forward(x, t) / 2 + ce:forward(x, t), 1e-14)
  local want = nll:backward(x, t):clone():div(2):add(ce:backward(x, t))
  T.ok((mc:backward(x, t) - want):abs():max() < 1e-14)
  T.ok(jacobian(mc, torch.Tensor(3, 5), t) < PREC)
  mc:float()
  T.eq(torch.type(nll.gradInput), "torch.FloatTensor")
  T.near(mc:forward(x:float(), t), nn.MultiCriterion():add(nn.ClassNLLCriterion(), 0.5)
    :add(nn.CrossEntropyCriterion()):forward(x, t), 1e-5)
  raises(function() nn.MultiCriterion():add() end, "nn.MultiCriterion")
end)

T.test("ParallelCriterion: criteria of the input's entries; repeatTarget; nesting", function()
  local input = { torch.randn(2, 4), torch.randn(2, 4) }
  local target = { torch.IntTensor({ 1, 3 }), torch.randn(2, 4) }
  local nll, mse = nn.ClassNLLCriterion(), nn.MSECriterion()
  local pc = nn.ParallelCriterion():add(nll, 0.5):add(mse)
  T.near(pc:forward(input, target), nll:forward(input[1], target[1]) / 2 + mse:forward(input[2], target[2]), 1e-14)
  local g = pc:backward(input, target)
  T.ok((g[1] - nll:backward(input[1], target[1]):clone():div(2)):abs():max() < 1e-14)
  T.ok((g[2] - mse:backward(input[2], target[2])):abs():max() < 1e-14)
  local rep = nn.ParallelCriterion(true):add(nn.MSECriterion(), 0.5):add(nn.AbsCriterion())
  local tt = torch.randn(2, 4)
  T.near(rep:forward(input, tt), nn.MSECriterion():forward(input[1], tt) / 2 + nn.AbsCriterion():forward(input[2], tt), 1e-14)
  local nested = nn.ParallelCriterion():add(nn.ClassNLLCriterion(), 0.4):add(pc)
  local nin = { torch.randn(2, 3), input }
  local ntg = { torch.LongTensor({ 3, 2 }), target }
  T.near(nested:forward(nin, ntg), 0.4 * nn.ClassNLLCriterion():forward(nin[1], ntg[1]) + pc:forward(input, target), 1e-14)
  local ng = nested:backward(nin, ntg)
  T.eq(torch.type(ng[2][2]), "torch.DoubleTensor")
  T.ok(jacobian(nn.ParallelCriterion(true):add(nn.MSECriterion(), 0.3):add(nn.SmoothL1Criterion()),
    torch.Tensor(2, 4), torch.randn(4), -2, 2, true) < PREC)
  raises(function() pc:forward(torch.randn(2, 4), target) end, "nn.ParallelCriterion")
  raises(function() pc:forward(input, torch.randn(2, 4)) end, "nn.ParallelCriterion")
end)

-- a module of no parameters for ModuleCriterion: y = 2x
local Double, DoubleParent = torch.class("nn.TestDoubling", "nn.Module")
function Double:__init() DoubleParent.__init(self) end
function Double:updateOutput(x) self.output:resizeAs(x):copy(x):mul(2); return self.output end
function Double:updateGradInput(x, g) self.gradInput:resizeAs(g):copy(g):mul(2); return self.gradInput end

T.test("ModuleCriterion: the criterion of transformed input and target", function()
  local x, t = torch.randn(3, 4), torch.randn(3, 4)
  local mc = nn.ModuleCriterion(nn.MSECriterion(), nn.TestDoubling())
  T.near(mc:forward(x, t), nn.MSECriterion():forward(x * 2, t), 1e-14)
  T.ok((mc:backward(x, t) - nn.MSECriterion():backward(x * 2, t) * 2):abs():max() < 1e-14)
  local both = nn.ModuleCriterion(nn.MSECriterion(), nil, nn.TestDoubling())
  T.near(both:forward(x, t), nn.MSECriterion():forward(x, t * 2), 1e-14)
  T.ok(jacobian(mc, torch.Tensor(3, 4), t) < PREC)
  -- a module with parameters gets a warning, as in Torch7
  local printed = {}
  local p = print
  print = function(...) printed[#printed + 1] = table.concat({ ... }, " ") end
  nn.ModuleCriterion(nn.MSECriterion(), nn.Linear(2, 2))
  print = p
  T.ok(printed[1] and printed[1]:find("doesn't support parameter updates"))
  raises(function() nn.ModuleCriterion(nn.TestDoubling()) end, "nn.ModuleCriterion")
end)

T.test("CriterionTable: a criterion as a module of {input, target}", function()
  local crit = nn.MSECriterion()
  local ct = nn.CriterionTable(crit)
  local x, t = torch.randn(5), torch.randn(5)
  T.near(ct:forward({ x, t }), nn.MSECriterion():forward(x, t), 1e-14)
  local g = ct:backward({ x, t }, 1)
  T.ok(rawequal(g[1], crit.gradInput))
  T.ok((g[1] - (x - t) * (2 / 5)):abs():max() < 1e-14)
  raises(function() ct:forward(x) end, "nn.CriterionTable")
  raises(function() nn.CriterionTable(nn.Linear(2, 2)) end, "nn.CriterionTable")
end)

T.test("float criteria take float inputs; gradients stay float", function()
  local x, t = torch.randn(4, 3):float(), torch.LongTensor({ 1, 3, 2, 2 })
  for _, c in ipairs({ nn.ClassNLLCriterion(torch.rand(3)):float(), nn.CrossEntropyCriterion():float() }) do
    local o = c:forward(x, t)
    T.near(o, c:clone():double():forward(x:double(), t), 1e-5)
    T.eq(torch.type(c:backward(x, t)), "torch.FloatTensor")
  end
  local m = nn.MSECriterion():float()
  T.near(m:forward(x, x:clone():add(1)), 1, 1e-6)
  T.eq(torch.type(m:backward(x, x)), "torch.FloatTensor")
end)

T.test("StochasticGradient: fits a line; rates, hooks, order, iterations", function()
  torch.manualSeed(3)
  local data = {}
  for i = 1, 20 do
    local x = torch.randn(2)
    data[i] = { x, torch.Tensor({ 3 * x[1] - 2 * x[2] + 1 }) }
  end
  function data:size() return 20 end
  local lin = nn.Linear(2, 1)
  local sg = nn.StochasticGradient(lin, nn.MSECriterion())
  T.eq({ sg.learningRate, sg.learningRateDecay, sg.maxIteration, sg.shuffleIndices, sg.verbose },
    { 0.01, 0, 25, true, true })
  sg.learningRate, sg.maxIteration, sg.verbose = 0.05, 40, false
  local errors, seen = {}, 0
  sg.hookIteration = function(self, it, err) errors[it] = err end
  sg.hookExample = function(self, ex) seen = seen + 1 end
  local printed = {}
  local p = print
  print = function(...) printed[#printed + 1] = table.concat({ ... }, " ") end
  local ok, err = pcall(sg.train, sg, data)
  print = p
  T.ok(ok, err)
  T.eq(#errors, 40)
  T.eq(seen, 800)
  T.ok(errors[40] < errors[1] * 1e-3, ("error %g -> %g"):format(errors[1], errors[40]))
  T.near(lin.weight[1][1], 3, 1e-2)
  T.near(lin.bias[1], 1, 1e-2)
  T.eq(printed[1], "# StochasticGradient: training")
  -- in order without shuffling
  local order = {}
  local sg2 = nn.StochasticGradient(nn.Linear(2, 1), nn.MSECriterion())
  sg2.shuffleIndices, sg2.maxIteration, sg2.verbose = false, 1, false
  sg2.hookExample = function(self, ex) for i = 1, 20 do if ex == data[i] then order[#order + 1] = i end end end
  print = function() end
  sg2:train(data)
  print = p
  local want = {}
  for i = 1, 20 do want[i] = i end
  T.eq(order, want)
  raises(function() sg2:train(5) end, "nn.StochasticGradient")
end)

if HAVE_PY then
  T.test(("the %d values against PyTorch"):format(#pending), run_pending)
end

T.done()
