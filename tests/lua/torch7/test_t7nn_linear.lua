-- test_t7nn_linear.lua — Torch7 mode's nn (lib/t7nn): linear.lua, normalization.lua,
-- decorator.lua, hessian.lua. Forward values against plain Lua arithmetic, backward
-- passes against central differences (nn.Jacobian, float64), bad input raising an error
-- that names the class.
local T = require "testing"
require "nn"
torch.manualSeed(1)
local jac = nn.Jacobian
local TOL = 1e-5

local function jacobian_ok(m, input, params)
  T.ok(jac.testJacobian(m, input) < TOL, torch.type(m) .. ": gradInput")
  for _, p in ipairs(params or {}) do
    T.ok(jac.testJacobianParameters(m, input, m[p[1]], m[p[2]]) < TOL, torch.type(m) .. ": " .. p[2])
  end
end

T.test("Linear: forward by hand, Jacobians, noBias, diagonal Hessian", function()
  local m = nn.Linear(3, 2)
  local x = torch.Tensor({ 1, -2, 0.5 })
  local y = m:forward(x)
  for i = 1, 2 do
    local s = m.bias[i]
    for j = 1, 3 do s = s + m.weight[i][j] * x[j] end
    T.near(y[i], s, 1e-12)
  end
  jacobian_ok(m, torch.Tensor(4, 3), { { "weight", "gradWeight" }, { "bias", "gradBias" } })
  m:noBias()
  jacobian_ok(m, torch.Tensor(3), { { "weight", "gradWeight" } })
  T.eq(tostring(m), "nn.Linear(3 -> 2) without bias")
  nn.hessian.enable()
  m = nn.Linear(3, 2)
  T.ok(jac.testDiagHessianInput(m, torch.Tensor(5, 3)) < TOL)
  T.ok(jac.testDiagHessianWeight(m, torch.Tensor(5, 3)) < TOL)
  T.ok(jac.testDiagHessianBias(m, torch.Tensor(5, 3)) < TOL)
  T.raises(function() m:forward(torch.Tensor(2, 4)) end, "nn.Linear")
end)

T.test("LookupTable: rows, batches, padding, maxNorm, scaleGradByFreq", function()
  local m = nn.LookupTable(5, 3)
  local y = m:forward(torch.LongTensor({ 2, 5, 2 }))
  T.eq(y:size():totable(), { 3, 3 })
  T.near((y[1] - m.weight[2]):abs():max(), 0, 0)
  local yb = m:forward(torch.LongTensor({ { 1, 2 }, { 3, 4 } }))
  T.eq(yb:size():totable(), { 2, 2, 3 })
  m:zeroGradParameters()
  m:backward(torch.LongTensor({ 2, 2, 3 }), torch.ones(3, 3))
  T.near(m.gradWeight[2][1], 2, 0); T.near(m.gradWeight[3][1], 1, 0); T.near(m.gradWeight[1][1], 0, 0)
  local p = nn.LookupTable(5, 3, 2)
  p:zeroGradParameters(); p:backward(torch.LongTensor({ 2, 3 }), torch.ones(2, 3))
  T.near(p.gradWeight[2]:abs():sum(), 0, 0)
  local f = nn.LookupTable(5, 3):scaleGradByFreq()
  f:zeroGradParameters(); f:backward(torch.LongTensor({ 4, 4, 4 }), torch.ones(3, 3))
  T.near(f.gradWeight[4][1], 1, 1e-12)
  local n = nn.LookupTable(5, 3, 0, 0.5)
  n:forward(torch.LongTensor({ 1, 3 }))
  T.ok(n.weight[1]:norm() <= 0.5 + 1e-6)
  T.raises(function() m:forward(torch.LongTensor({ 0 })) end, "nn.LookupTable")
  T.raises(function() m:forward(torch.LongTensor({ 6 })) end, "nn.LookupTable")
  T.raises(function() m:forward(torch.LongTensor(2, 2, 2):fill(1)) end, "nn.LookupTable")
  T.raises(function() nn.LookupTable(0, 3) end, "nn.LookupTable")
end)

T.test("LinearWeightNorm, Bilinear, Euclidean, WeightedEuclidean, Cosine: gradients", function()
  local w = nn.LinearWeightNorm(4, 3)
  jacobian_ok(w, torch.Tensor(2, 4), { { "v", "gradV" }, { "g", "gradG" }, { "bias", "gradBias" } })
  local lin = nn.Linear(4, 3)
  local x = torch.randn(2, 4)
  T.ok((nn.LinearWeightNorm.fromLinear(lin):forward(x) - lin:forward(x)):abs():max() < 1e-10)
  jacobian_ok(nn.Euclidean(4, 3), torch.Tensor(2, 4), { { "weight", "gradWeight" } })
  jacobian_ok(nn.WeightedEuclidean(4, 3), torch.Tensor(2, 4), { { "weight", "gradWeight" }, { "diagCov", "gradDiagCov" } })
  jacobian_ok(nn.Cosine(4, 3), torch.Tensor(2, 4), { { "weight", "gradWeight" } })
  local e = nn.Euclidean(2, 1)
  e.weight:copy(torch.Tensor({ { 1 }, { 1 } }))
  T.near(e:forward(torch.Tensor({ 4, 5 }))[1], 5, 1e-12)
  local c = nn.Cosine(2, 1)
  c.weight:copy(torch.Tensor({ { 1, 0 } }))
  T.near(c:forward(torch.Tensor({ 1, 1 }))[1], 1 / math.sqrt(2), 1e-9)
  -- Bilinear: y = x1^T W x2 + b
  local b = nn.Bilinear(2, 3, 2)
  local x1, x2 = torch.randn(4, 2), torch.randn(4, 3)
  local y = b:forward({ x1, x2 })
  local s = b.bias[2]
  for i = 1, 2 do for j = 1, 3 do s = s + x1[3][i] * b.weight[2][i][j] * x2[3][j] end end
  T.near(y[3][2], s, 1e-10)
  -- gradients by central differences of sum(y .* g)
  local g = torch.randn(4, 2)
  b:zeroGradParameters()
  local gi = b:backward({ x1, x2 }, g)
  local function loss() return torch.cmul(b:forward({ x1, x2 }), g):sum() end
  for _, t in ipairs({ x1, x2, b.weight }) do
    local gr = t == x1 and gi[1] or t == x2 and gi[2] or b.gradWeight
    local flat, gflat = t:view(-1), gr:contiguous():view(-1)
    for k = 1, flat:nElement() do
      local v = flat[k]
      flat[k] = v + 1e-6; local a = loss()
      flat[k] = v - 1e-6; local c2 = loss()
      flat[k] = v
      T.near(gflat[k], (a - c2) / 2e-6, 1e-5)
    end
  end
  T.raises(function() b:forward({ x1 }) end, "nn.Bilinear")
  T.raises(function() b:forward({ x1, torch.randn(4, 2) }) end, "nn.Bilinear")
  T.raises(function() nn.Euclidean(2, 1):forward(torch.randn(3)) end, "nn.Euclidean")
  T.raises(function() nn.Cosine(2, 1):forward(torch.randn(2, 2, 2)) end, "nn.Cosine")
end)

T.test("SparseLinear, IndexLinear, PartialLinear agree with Linear", function()
  local s = nn.SparseLinear(6, 3, true)
  local lin = nn.Linear(6, 3)
  lin.weight:copy(s.weight); lin.bias:copy(s.bias)
  local sp = torch.Tensor({ { 2, 0.5 }, { 5, -1 } })
  local dense = torch.zeros(6); dense[2] = 0.5; dense[5] = -1
  T.ok((s:forward(sp) - lin:forward(dense)):abs():max() < 1e-12)
  T.ok((s:forward({ sp, sp }) - lin:forward(dense:view(1, 6):expand(2, 6):contiguous())):abs():max() < 1e-12)
  T.raises(function() s:forward(torch.Tensor({ { 7, 1 } })) end, "nn.SparseLinear")
  local il = nn.IndexLinear(6, 3)
  il.weight:copy(lin.weight:t()); il.bias:copy(lin.bias)
  T.ok((il:forward({ torch.LongTensor({ 2, 5 }), torch.Tensor({ 0.5, -1 }) }) - lin:forward(dense)):abs():max() < 1e-12)
  T.raises(function() nn.IndexLinear(6, 3, nil, nil, nil, nil, true) end, "nn.IndexLinear")
  local p = nn.PartialLinear(4, 5)
  local x = torch.randn(3, 4)
  p:setPartition(torch.Tensor({ 2, 4 }))
  local y = p:forward(x)
  local w = p.network:get(1):get(2).weight
  T.near(y[1][2], w[4]:dot(x[1]) + p.bias[1][4], 1e-10)
  T.raises(function() p:setPartition(torch.Tensor({ 9 })) end, "nn.PartialLinear")
end)

T.test("BatchNormalization family: values, running statistics, gradients", function()
  local m = nn.BatchNormalization(3)
  local x = torch.randn(5, 3)
  local y = m:forward(x)
  for c = 1, 3 do
    local col = x:select(2, c)
    local mu = col:mean(); local var = (col - mu):pow(2):mean()
    T.near(y[2][c], (x[2][c] - mu) / math.sqrt(var + 1e-5) * m.weight[c] + m.bias[c], 1e-10)
    T.near(m.running_mean[c], 0.1 * mu, 1e-12)
  end
  jacobian_ok(m, torch.Tensor(4, 3), { { "weight", "gradWeight" }, { "bias", "gradBias" } })
  m:evaluate()
  jacobian_ok(m, torch.Tensor(3), { { "weight", "gradWeight" } })
  jacobian_ok(nn.SpatialBatchNormalization(2), torch.Tensor(3, 2, 2, 3), { { "weight", "gradWeight" } })
  jacobian_ok(nn.SpatialBatchNormalization(1, 1e-5, 0.1, false), torch.Tensor(3, 1, 3, 3))
  jacobian_ok(nn.VolumetricBatchNormalization(2), torch.Tensor(2, 2, 2, 2, 2), { { "bias", "gradBias" } })
  T.raises(function() nn.BatchNormalization(3):forward(torch.randn(3)) end, "nn.BatchNormalization")
  T.raises(function() nn.BatchNormalization(3):forward(torch.randn(2, 4)) end, "nn.BatchNormalization")
  T.raises(function() nn.BatchNormalization(0) end, "nn.BatchNormalization")
end)

T.test("contrast normalizations, LRN, LayerNormalization", function()
  local s = nn.SpatialSubtractiveNormalization(2, torch.ones(3, 3))
  local x = torch.rand(2, 5, 5)
  local y = s:forward(x)
  -- the centre pixel: minus the mean of its 3x3 neighbourhood over both planes
  local mu = x[{ {}, { 2, 4 }, { 2, 4 } }]:sum() / 18
  T.near(y[1][3][3], x[1][3][3] - mu, 1e-10)
  jacobian_ok(s, torch.Tensor(2, 5, 5))
  jacobian_ok(nn.SpatialSubtractiveNormalization(2, torch.ones(3)), torch.Tensor(2, 2, 5, 5))
  jacobian_ok(nn.SpatialDivisiveNormalization(2, torch.ones(3, 3)), torch.Tensor(2, 5, 5))
  jacobian_ok(nn.SpatialContrastiveNormalization(2, torch.ones(3)), torch.Tensor(2, 5, 5))
  local l = nn.SpatialCrossMapLRN(3, 0.5, 0.75, 1)
  local z = torch.rand(4, 2, 2)
  local o = l:forward(z)
  local sc = 1 + 0.5 / 3 * (z[1][1][1] ^ 2 + z[2][1][1] ^ 2 + z[3][1][1] ^ 2)
  T.near(o[2][1][1], z[2][1][1] * sc ^ -0.75, 1e-12)
  jacobian_ok(l, torch.Tensor(4, 2, 2))
  jacobian_ok(nn.LayerNormalization(4), torch.Tensor(3, 4), { { "weight", "gradWeight" }, { "bias", "gradBias" } })
  T.raises(function() nn.SpatialSubtractiveNormalization(2, torch.ones(2, 2)) end, "nn.SpatialSubtractiveNormalization")
  T.raises(function() s:forward(torch.rand(3, 5, 5)) end, "nn.SpatialSubtractiveNormalization")
  T.raises(function() l:forward(torch.rand(4, 2)) end, "nn.SpatialCrossMapLRN")
end)

T.test("decorators: Bottle, WeightNorm, DontCast, NaN, Profile, GPU", function()
  local lin = nn.Linear(4, 2)
  local b = nn.Bottle(lin)
  local x = torch.randn(3, 5, 4)
  local y = b:forward(x)
  T.eq(y:size():totable(), { 3, 5, 2 })
  T.ok((y[2][3] - lin:forward(x[2][3])):abs():max() < 1e-12)
  local gi = b:backward(x, torch.ones(3, 5, 2))
  T.eq(gi:size():totable(), { 3, 5, 4 })
  local w = nn.WeightNorm(nn.Linear(4, 3))
  jacobian_ok(w, torch.Tensor(2, 4), { { "v", "gradV" }, { "g", "gradG" }, { "bias", "gradBias" } })
  local d = nn.DontCast(nn.Linear(4, 2):float(), true)
  T.eq(torch.type(d:forward(torch.randn(3, 4))), "torch.DoubleTensor")
  d:float()
  T.eq(torch.type(d.modules[1].weight), "torch.FloatTensor")
  local n = nn.NaN(nn.Linear(2, 2))
  n:forward(torch.randn(2))
  T.raises(function() n:forward(torch.Tensor({ 0 / 0, 1 })) end, "NaN found in input")
  local p = nn.Profile(nn.Linear(2, 2), 1000)
  T.ok((p:forward(torch.ones(2)) - p.modules[1].output):abs():max() == 0)
  local g = nn.GPU(nn.Linear(2, 2), 1)
  T.ok((g:forward(torch.ones(2)) - g.modules[1].output):abs():max() == 0)
  T.raises(function() nn.GPU(nn.Linear(2, 2), "x") end, "nn.GPU")
  T.raises(function() nn.Bottle({}) end, "nn.Bottle")
end)

T.test("Kmeans: centers move to the clusters", function()
  local x = torch.Tensor(60, 2)
  for i = 1, 60 do x[i]:fill(((i - 1) % 3) * 10) end
  local km = nn.Kmeans(3, 2)
  km:initKmeansPlus(x)
  for _ = 1, 5 do
    km:zeroGradParameters(); km:forward(x); km:backward(x, nil); km.weight:add(-1, km.gradWeight)
  end
  km:forward(x)
  T.ok(km.loss < 1e-6, "loss " .. km.loss)
  T.raises(function() km:forward(torch.randn(4, 3)) end, "nn.Kmeans")
end)

T.done()
