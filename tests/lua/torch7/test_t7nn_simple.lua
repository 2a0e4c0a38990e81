-- test_t7nn_simple.lua — Torch7 mode's nn (lib/t7nn): the one-line modules of simple.lua
-- and the transfer functions of activation.lua. Forward values are checked against plain
-- Lua arithmetic element by element, backward passes against finite differences
-- (nn.Jacobian, float64), and bad arguments must raise errors naming the class.
local T = require "testing"
require "nn"
torch.manualSeed(7)

local jac = nn.Jacobian
local PREC = 1e-5

-- a new tensor of x's shape with f applied to every element (plain Lua)
local function map(x, f)
  local flat = x:contiguous():view(-1)
  local r = torch.Tensor(flat:nElement())
  for i = 1, flat:nElement() do r[i] = f(flat[i]) end
  return r:view(x:size())
end

local function maxdiff(a, b)
  T.ok(a:nElement() == b:nElement(), "element counts differ: " .. a:nElement() .. " vs " .. b:nElement())
  return (a:contiguous():view(-1) - b:contiguous():view(-1)):abs():max()
end

local function close(a, b, tol, msg)
  local d = maxdiff(a, b)
  if not (d <= (tol or 1e-12)) then error((msg or "tensors differ") .. ": max difference " .. d, 2) end
end

local function jacobian_ok(m, input, lo, hi, msg)
  local err = jac.testJacobian(m, input, lo, hi)
  if not (err < PREC) then error((msg or torch.type(m)) .. ": Jacobian error " .. err, 2) end
end

local function io_ok(m, input, lo, hi)
  input:uniform(lo or -2, hi or 2)
  local ferr, berr = jac.testIO(m, input, lo, hi)
  T.ok(ferr == 0 and berr == 0, torch.type(m) .. ": i/o errors " .. ferr .. ", " .. berr)
end

local function sigmoid(v) return 1 / (1 + math.exp(-v)) end

-- class, constructor arguments, the function per element, the input range
local elementwise = {
  { "Tanh", {}, math.tanh },
  { "Sigmoid", {}, sigmoid },
  { "Exp", {}, math.exp },
  { "Log", {}, math.log, 0.1, 5 },
  { "Abs", {}, math.abs },
  { "Square", {}, function(v) return v * v end },
  { "Sqrt", {}, math.sqrt, 0.1, 4 },
  { "Power", { 2.5 }, function(v) return v ^ 2.5 end, 0.1, 2 },
  { "Power", { 3 }, function(v) return v ^ 3 end },
  { "LogSigmoid", {}, function(v) return math.log(sigmoid(v)) end },
  { "SoftPlus", {}, function(v) return math.log(1 + math.exp(v)) end },
  { "SoftPlus", { 2 }, function(v) return math.log(1 + math.exp(2 * v)) / 2 end },
  { "SoftSign", {}, function(v) return v / (1 + math.abs(v)) end },
  { "TanhShrink", {}, function(v) return v - math.tanh(v) end },
  { "HardShrink", { 0.7 }, function(v) return math.abs(v) > 0.7 and v or 0 end },
  { "SoftShrink", { 0.7 }, function(v) return v > 0.7 and v - 0.7 or v < -0.7 and v + 0.7 or 0 end },
  { "Threshold", { 0.3, -1.5 }, function(v) return v > 0.3 and v or -1.5 end },
  { "ReLU", {}, function(v) return math.max(v, 0) end },
  { "ReLU6", {}, function(v) return math.min(math.max(v, 0), 6) end, -8, 8 },
  { "LeakyReLU", { 0.2 }, function(v) return v > 0 and v or 0.2 * v end },
  { "HardTanh", {}, function(v) return math.min(math.max(v, -1), 1) end },
  { "HardTanh", { -0.5, 1.5 }, function(v) return math.min(math.max(v, -0.5), 1.5) end },
  { "Clamp", { -0.2, 0.4 }, function(v) return math.min(math.max(v, -0.2), 0.4) end },
  { "ELU", {}, function(v) return v > 0 and v or math.exp(v) - 1 end },
  { "ELU", { 0.3 }, function(v) return v > 0 and v or 0.3 * (math.exp(v) - 1) end },
  { "PReLU", {}, function(v) return v > 0 and v or 0.25 * v end },
}

for _, case in ipairs(elementwise) do
  local name, args, f, lo, hi = table.unpack(case)
  T.test(("%s(%s): forward per element, Jacobian, i/o"):format(name, table.concat(args, ", ")), function()
    lo, hi = lo or -3, hi or 3
    local m = nn[name](table.unpack(args))
    T.eq(torch.type(m), "nn." .. name)
    for _, shape in ipairs({ { 7 }, { 3, 5 }, { 2, 3, 4 } }) do
      local x = torch.Tensor(table.unpack(shape)):uniform(lo, hi)
      local y = m:forward(x)
      T.ok(y:isSameSizeAs(x), "output size")
      close(y, map(x, f), 1e-12, name .. " forward")
      jacobian_ok(m, torch.Tensor(table.unpack(shape)), lo, hi)
    end
    -- a non-contiguous input
    local x = torch.Tensor(4, 6):uniform(lo, hi):t()
    close(m:forward(x), map(x, f), 1e-12, name .. " forward of a transposed input")
    io_ok(m, torch.Tensor(3, 4), lo, hi)
    -- the wrong gradOutput
    m:forward(torch.Tensor(3, 4):uniform(lo, hi))
    T.raises(function() m:backward(torch.Tensor(3, 4):uniform(lo, hi), torch.Tensor(5)) end, "nn." .. name)
    T.raises(function() m:forward("x") end, "nn." .. name)
  end)
end

T.test("Threshold, ReLU, ReLU6, HardTanh, LeakyReLU, ELU, RReLU in place match the out-of-place forms", function()
  local pairs_ = {
    { nn.Threshold(0.1, -0.5, true), nn.Threshold(0.1, -0.5) },
    { nn.ReLU(true), nn.ReLU() },
    { nn.ReLU6(true), nn.ReLU6() },
    { nn.HardTanh(-0.5, 0.5, true), nn.HardTanh(-0.5, 0.5) },
    { nn.LeakyReLU(0.1, true), nn.LeakyReLU(0.1) },
    { nn.ELU(0.7, true), nn.ELU(0.7) },
    { nn.RReLU(0.1, 0.3, true), nn.RReLU(0.1, 0.3) },
  }
  -- RReLU in evaluation: a fixed slope, so both forms agree
  pairs_[7][1]:evaluate(); pairs_[7][2]:evaluate()
  for _, p in ipairs(pairs_) do
    local ip, op = p[1], p[2]
    T.ok(ip.inplace, torch.type(ip) .. " in place")
    local x = torch.Tensor(4, 5):uniform(-8, 8)
    local go = torch.Tensor(4, 5):uniform(-1, 1)
    local x1, go1 = x:clone(), go:clone()
    local y = op:forward(x):clone()
    local gi = op:backward(x, go):clone()
    local y1 = ip:forward(x1)
    close(y1, y, 0, torch.type(ip) .. " forward")
    T.ok(y1:storage() and x1:isSetTo(y1) or x1:isSameSizeAs(y1), "the output is the input")
    close(x1, y, 0, torch.type(ip) .. " overwrote its input")
    local gi1 = ip:backward(x1, go1)
    close(gi1, gi, 1e-15, torch.type(ip) .. " backward")
    close(go1, gi, 1e-15, torch.type(ip) .. " overwrote gradOutput")
  end
  -- a boolean alone is LeakyReLU's in-place flag
  local l = nn.LeakyReLU(true)
  T.ok(l.inplace); T.eq(l.negval, 0.01)
  T.eq(nn.LeakyReLU(-0.5, true).inplace, false)
end)

T.test("HardTanh's bounds are exclusive for the gradient (as Threshold's)", function()
  local m = nn.HardTanh(1, math.huge, true)
  local g = m:backward(torch.Tensor({ 1, 2 }), torch.Tensor({ 1, 1 }))
  T.eq(g:totable(), { 0, 1 })
  local t = nn.Threshold(1, 0)
  T.eq(t:backward(torch.Tensor({ 1, 2 }), torch.Tensor({ 1, 1 })):totable(), { 0, 1 })
  -- Abs's gradient is +1 at 0
  T.eq(nn.Abs():backward(torch.Tensor({ 0, -2, 3 }), torch.Tensor({ 1, 1, 1 })):totable(), { 1, -1, 1 })
  -- Sqrt's gradient is 0 where the output is 0
  local s = nn.Sqrt()
  s:forward(torch.zeros(3))
  T.eq(s:backward(torch.zeros(3), torch.ones(3)):totable(), { 0, 0, 0 })
end)

T.test("activation constructors: bad arguments name the class", function()
  T.raises(function() nn.Power() end, "nn.Power")
  T.raises(function() nn.Threshold("a") end, "nn.Threshold")
  T.raises(function() nn.Threshold(0, 1, true) end, "nn.Threshold", "in-place")
  T.raises(function() nn.Threshold(0, 0, 1) end, "nn.Threshold")
  T.raises(function() nn.ReLU(1) end, "nn.ReLU")
  T.raises(function() nn.HardTanh(1, -1) end, "nn.HardTanh")
  T.raises(function() nn.Clamp() end, "nn.Clamp")
  T.raises(function() nn.ReLU6("yes") end, "nn.ReLU6")
  T.raises(function() nn.ELU("a") end, "nn.ELU")
  T.raises(function() nn.ELU(1, 1) end, "nn.ELU")
  T.raises(function() nn.RReLU(0.5, 0.1) end, "nn.RReLU")
  T.raises(function() nn.HardShrink(-1) end, "nn.HardShrink")
  T.raises(function() nn.SoftShrink("a") end, "nn.SoftShrink")
  T.raises(function() nn.PReLU(-2) end, "nn.PReLU")
  T.raises(function() nn.GatedLinearUnit(0) end, "nn.GatedLinearUnit")
  T.raises(function() nn.CReLU() end, "nn.CReLU")
  T.raises(function() nn.SoftPlus("a") end, "nn.SoftPlus")
end)

-- softmax over dim d of x, in plain Lua (x of at most 4 dims)
local function softmax_ref(x, d, log, neg)
  local r = x:clone()
  local sizes = x:size():totable()
  local n = sizes[d]
  local others = {}
  for i = 1, #sizes do if i ~= d then others[#others + 1] = i end end
  local idx = {}
  local function visit(k)
    if k > #others then
      local vals, mx = {}, -math.huge
      for j = 1, n do
        idx[d] = j
        local v = x[idx]
        if neg then v = -v end
        vals[j] = v
        mx = math.max(mx, v)
      end
      local s = 0
      for j = 1, n do s = s + math.exp(vals[j] - mx) end
      for j = 1, n do
        idx[d] = j
        r[idx] = log and (vals[j] - mx - math.log(s)) or math.exp(vals[j] - mx) / s
      end
      return
    end
    for i = 1, sizes[others[k]] do idx[others[k]] = i; visit(k + 1) end
  end
  visit(1)
  return r
end

T.test("SoftMax, LogSoftMax, SoftMin, SpatialSoftMax, SpatialLogSoftMax: the dims of Torch7, values, Jacobian", function()
  local cases = {
    { "SoftMax", false, false }, { "LogSoftMax", true, false }, { "SoftMin", false, true },
    { "SpatialSoftMax", false, false }, { "SpatialLogSoftMax", true, false },
  }
  for _, c in ipairs(cases) do
    local name, log, neg = table.unpack(c)
    local m = nn[name]()
    -- 1-D: dim 1; 2-D: dim 2; 3-D: dim 1; 4-D: dim 2
    for _, sd in ipairs({ { { 6 }, 1 }, { { 3, 5 }, 2 }, { { 4, 2, 3 }, 1 }, { { 2, 3, 2, 2 }, 2 } }) do
      local x = torch.Tensor(table.unpack(sd[1])):uniform(-3, 3)
      close(m:forward(x), softmax_ref(x, sd[2], log, neg), 1e-12, name .. " forward " .. #sd[1] .. "-D")
      local err = jac.testJacobian(m, torch.Tensor(table.unpack(sd[1])))
      T.ok(err < PREC, name .. " Jacobian " .. err)
    end
    -- a non-contiguous gradOutput gives what a contiguous one does
    local x = torch.randn(4, 10)
    local go = torch.randn(4, 20):narrow(2, 1, 10)
    m:forward(x)
    local g1 = m:backward(x, go):clone()
    local g2 = m:backward(x, go:clone())
    close(g1, g2, 1e-15, name .. " non-contiguous gradOutput")
    io_ok(m, torch.Tensor(3, 4))
    T.raises(function() m:forward(torch.randn(2, 2, 2, 2, 2)) end, "nn." .. name, "1D, 2D, 3D or 4D")
    T.raises(function() m:forward(torch.Tensor()) end, "nn." .. name)
    m:forward(torch.randn(3, 4))
    T.raises(function() m:backward(torch.randn(3, 4), torch.randn(7)) end, "nn." .. name)
  end
  -- large inputs do not overflow
  local y = nn.LogSoftMax():forward(torch.Tensor({ { 1000, 0 } }))
  T.near(y[1][1], 0, 1e-12); T.near(y[1][2], -1000, 1e-9)
end)

T.test("PReLU: a slope per plane (dim 2 of a batch), the shared slope; gradients of the slopes", function()
  local m = nn.PReLU(3)
  m.weight:copy(torch.Tensor({ 0.1, 0.2, 0.3 }))
  local x = torch.Tensor(2, 3, 4):uniform(-2, 2)
  local y = m:forward(x)
  for i = 1, 2 do for c = 1, 3 do for k = 1, 4 do
    local v = x[i][c][k]
    T.near(y[i][c][k], v > 0 and v or m.weight[c] * v, 1e-15)
  end end end
  local x1 = torch.Tensor(3):uniform(-2, 2)
  local y1 = m:forward(x1)
  for c = 1, 3 do T.near(y1[c], x1[c] > 0 and x1[c] or m.weight[c] * x1[c], 1e-15) end
  for _, shape in ipairs({ { 3 }, { 4, 3 }, { 2, 3, 2, 2 } }) do
    local input = torch.Tensor(table.unpack(shape))
    jacobian_ok(m, input)
    T.ok(jac.testJacobianParameters(m, input, m.weight, m.gradWeight) < PREC, "PReLU weight")
    T.ok(jac.testJacobianUpdateParameters(m, input, m.weight) < PREC, "PReLU weight update")
  end
  for k, err in pairs(jac.testAllUpdate(m, torch.randn(4, 3), "weight", "gradWeight")) do
    T.ok(err < PREC, "PReLU " .. k .. " " .. err)
  end
  local s = nn.PReLU()
  T.eq(s.weight:nElement(), 1)
  local input = torch.Tensor(3, 4)
  T.ok(jac.testJacobianParameters(s, input, s.weight, s.gradWeight) < PREC, "shared PReLU weight")
  io_ok(m, torch.Tensor(2, 3, 2))
  T.raises(function() m:forward(torch.randn(2, 4)) end, "nn.PReLU", "planes")
  T.raises(function() m:forward(torch.randn(5)) end, "nn.PReLU")
end)

T.test("RReLU: slopes drawn in [lower, upper] in training, their mean in evaluation", function()
  local m = nn.RReLU(0.1, 0.3)
  T.ok(m.train)
  local x = torch.Tensor(200):uniform(-2, 2)
  x[1] = -1
  local y = m:forward(x)
  local g = m:backward(x, torch.ones(200))
  for i = 1, 200 do
    local v = x[i]
    if v > 0 then
      T.eq(y[i], v); T.eq(g[i], 1)
    else
      local a = y[i] / v
      T.ok(a >= 0.1 - 1e-12 and a <= 0.3 + 1e-12, "slope in range")
      T.near(g[i], a, 1e-12)
    end
  end
  m:evaluate()
  close(m:forward(x), map(x, function(v) return v > 0 and v or 0.2 * v end), 1e-15, "evaluation")
  jacobian_ok(m, torch.Tensor(3, 4))
  io_ok(m, torch.Tensor(3, 4))
end)

T.test("GatedLinearUnit: a * sigmoid(b) over the halves of the last dim (or dim)", function()
  local m = nn.GatedLinearUnit()
  local x = torch.Tensor(3, 4):uniform(-2, 2)
  local y = m:forward(x)
  T.eq(y:size():totable(), { 3, 2 })
  for i = 1, 3 do for j = 1, 2 do T.near(y[i][j], x[i][j] * sigmoid(x[i][j + 2]), 1e-15) end end
  jacobian_ok(m, torch.Tensor(2, 6))
  local m2 = nn.GatedLinearUnit(2)
  local x2 = torch.Tensor(2, 4, 3):uniform(-2, 2)
  local y2 = m2:forward(x2)
  T.eq(y2:size():totable(), { 2, 2, 3 })
  T.near(y2[2][1][3], x2[2][1][3] * sigmoid(x2[2][3][3]), 1e-15)
  jacobian_ok(m2, torch.Tensor(2, 4, 3))
  T.raises(function() m:forward(torch.randn(3, 5)) end, "nn.GatedLinearUnit", "even")
  T.raises(function() nn.GatedLinearUnit(4):forward(torch.randn(3, 4)) end, "nn.GatedLinearUnit")
end)

T.test("CReLU: relu(x) and relu(-x) along the features, batched or not", function()
  local m = nn.CReLU(3)
  local x = torch.Tensor(2, 3, 2, 2):uniform(-2, 2)
  local y = m:forward(x)
  T.eq(y:size():totable(), { 2, 6, 2, 2 })
  for i = 1, 2 do for c = 1, 3 do for h = 1, 2 do for w = 1, 2 do
    local v = x[i][c][h][w]
    T.eq(y[i][c][h][w], math.max(v, 0)); T.eq(y[i][c + 3][h][w], math.max(-v, 0))
  end end end end
  local x1 = torch.Tensor(3, 2, 2):uniform(-2, 2)
  local y1 = m:forward(x1)
  T.eq(y1:size():totable(), { 6, 2, 2 })
  T.eq(y1[5][2][1], math.max(-x1[2][2][1], 0))
  jacobian_ok(m, torch.Tensor(2, 3, 2, 2))
  jacobian_ok(m, torch.Tensor(3, 2, 2))
  io_ok(m, torch.Tensor(2, 3, 2, 2))
  T.eq(tostring(m), "CReLU()")
  T.raises(function() m:forward(torch.randn(3, 2)) end, "nn.CReLU")
end)

T.test("CMul: elementwise, broadcast, batch; the weight's gradient", function()
  local m = nn.CMul(1, 3, 4, 1)
  -- as many elements as the weight: elementwise
  local x = torch.Tensor(3, 4):uniform(-1, 1)
  local y = m:forward(x)
  local w = m.weight:view(3, 4)
  for i = 1, 3 do for j = 1, 4 do T.near(y[i][j], x[i][j] * w[i][j], 1e-15) end end
  jacobian_ok(m, torch.Tensor(3, 4))
  T.ok(jac.testJacobianParameters(m, torch.Tensor(3, 4), m.weight, m.gradWeight) < PREC)
  -- a batch of samples (fewer dims than the weight)
  x = torch.Tensor(5, 3, 4):uniform(-1, 1)
  y = m:forward(x)
  T.near(y[5][2][3], x[5][2][3] * w[2][3], 1e-15)
  jacobian_ok(m, torch.Tensor(2, 3, 4))
  T.ok(jac.testJacobianParameters(m, torch.Tensor(2, 3, 4), m.weight, m.gradWeight) < PREC)
  -- the weight's dims: broadcast over its dims of size 1
  x = torch.Tensor(2, 3, 4, 5):uniform(-1, 1)
  y = m:forward(x)
  T.near(y[2][3][1][4], x[2][3][1][4] * w[3][1], 1e-15)
  jacobian_ok(m, torch.Tensor(2, 3, 4, 2))
  T.ok(jac.testJacobianParameters(m, torch.Tensor(2, 3, 4, 2), m.weight, m.gradWeight) < PREC)
  T.ok(jac.testJacobianUpdateParameters(m, torch.Tensor(2, 3, 4, 2), m.weight) < PREC)
  for k, err in pairs(jac.testAllUpdate(m, torch.randn(2, 3, 4), "weight", "gradWeight")) do
    T.ok(err < PREC, "CMul " .. k .. " " .. err)
  end
  io_ok(m, torch.Tensor(2, 3, 4))
  -- non-contiguous input and gradOutput
  local c = nn.CMul(4, 3, 5)
  local xi = torch.rand(10, 3, 5):resize(10, 1, 3, 5):expand(10, 4, 3, 5)
  local out = c:forward(xi)
  T.ok(out:isSameSizeAs(xi))
  T.ok(c:backward(xi, torch.rand(10, 1, 3, 5):expand(10, 4, 3, 5)):isSameSizeAs(xi))
  T.eq(nn.CMul(torch.LongStorage({ 2, 3 })).weight:size():totable(), { 2, 3 })
  T.raises(function() m:forward(torch.randn(2, 7)) end, "nn.CMul")
  T.raises(function() nn.CMul(3, 4):forward(torch.randn(2, 5, 4)) end, "nn.CMul")
  T.raises(function() nn.CMul() end, "nn.CMul")
  T.raises(function() nn.CMul(0) end, "nn.CMul")
end)

T.test("CAdd: bias per channel, row, column, element; batches; gradients", function()
  for _, size in ipairs({ { 3, 1, 1 }, { 1, 4, 1 }, { 1, 1, 5 }, { 3, 4, 5 } }) do
    local m = nn.CAdd(table.unpack(size))
    local x = torch.Tensor(3, 4, 5):uniform(-1, 1)
    local y = m:forward(x)
    local b = m.bias
    T.near(y[3][2][4], x[3][2][4] + b[math.min(3, size[1])][math.min(2, size[2])][math.min(4, size[3])], 1e-15)
    jacobian_ok(m, torch.Tensor(3, 4, 5))
    local p, gp = m:getParameters()
    T.ok(jac.testJacobianParameters(m, torch.Tensor(3, 4, 5), p, gp) < PREC)
    T.ok(jac.testJacobianUpdateParameters(m, torch.Tensor(3, 4, 5), m.bias) < PREC)
  end
  local m = nn.CAdd(5)
  local x = torch.Tensor(4, 5):uniform(-1, 1)
  close(m:forward(x), x + m.bias:view(1, 5):expand(4, 5), 1e-15)
  T.ok(jac.testJacobianParameters(m, torch.Tensor(4, 5), m.bias, m.gradBias) < PREC)
  for k, err in pairs(jac.testAllUpdate(m, torch.randn(4, 5), "bias", "gradBias")) do
    T.ok(err < PREC, "CAdd " .. k .. " " .. err)
  end
  io_ok(m, torch.Tensor(4, 5))
  T.raises(function() m:forward(torch.randn(4, 6)) end, "nn.CAdd")
end)

T.test("Add, Mul: a learnt bias vector or scalar, a learnt scale", function()
  local a = nn.Add(4)
  local x = torch.Tensor(4):uniform(-1, 1)
  close(a:forward(x), x + a.bias, 1e-15)
  local xb = torch.Tensor(3, 4):uniform(-1, 1)
  local yb = a:forward(xb)
  T.near(yb[3][2], xb[3][2] + a.bias[2], 1e-15)
  for _, input in ipairs({ torch.Tensor(4), torch.Tensor(3, 4), torch.Tensor(3, 2, 2) }) do
    jacobian_ok(a, input)
    T.ok(jac.testJacobianParameters(a, input, a.bias, a.gradBias) < PREC, "Add bias")
    T.ok(jac.testJacobianUpdateParameters(a, input, a.bias) < PREC, "Add bias update")
  end
  local s = nn.Add(4, true)
  T.eq(s.bias:nElement(), 1)
  local xs = torch.Tensor(2, 3):uniform(-1, 1)
  close(s:forward(xs), xs + s.bias[1], 1e-15)
  T.ok(jac.testJacobianParameters(s, torch.Tensor(2, 3), s.bias, s.gradBias) < PREC)
  for k, err in pairs(jac.testAllUpdate(a, torch.randn(3, 4), "bias", "gradBias")) do
    T.ok(err < PREC, "Add " .. k .. " " .. err)
  end
  io_ok(a, torch.Tensor(3, 4))
  T.raises(function() a:forward(torch.randn(3, 5)) end, "nn.Add")
  T.raises(function() nn.Add() end, "nn.Add")

  local m = nn.Mul()
  x = torch.Tensor(2, 3):uniform(-1, 1)
  close(m:forward(x), x * m.weight[1], 1e-15)
  jacobian_ok(m, torch.Tensor(2, 3))
  T.ok(jac.testJacobianParameters(m, torch.Tensor(2, 3), m.weight, m.gradWeight) < PREC)
  for k, err in pairs(jac.testAllUpdate(m, torch.randn(3, 4), "weight", "gradWeight")) do
    T.ok(err < PREC, "Mul " .. k .. " " .. err)
  end
end)

T.test("MulConstant, AddConstant: out of place, in place (the input restored), tensor constants", function()
  local x = torch.Tensor(3, 4):uniform(-2, 2)
  close(nn.MulConstant(-1.5):forward(x), map(x, function(v) return -1.5 * v end), 0)
  close(nn.AddConstant(0.25):forward(x), map(x, function(v) return v + 0.25 end), 0)
  jacobian_ok(nn.MulConstant(3), torch.Tensor(3, 4))
  jacobian_ok(nn.AddConstant(3), torch.Tensor(3, 4))
  for _, pair in ipairs({ { nn.MulConstant(4, true), nn.MulConstant(4) }, { nn.AddConstant(2, true), nn.AddConstant(2) } }) do
    local ip, op = pair[1], pair[2]
    local x1, x2 = x:clone(), x:clone()
    local go = torch.Tensor(3, 4):uniform(-1, 1)
    close(ip:forward(x1), op:forward(x2), 0, torch.type(ip))
    close(ip:backward(x1, go:clone()), op:backward(x2, go), 0, torch.type(ip))
    close(x1, x, 0, torch.type(ip) .. " restores its input")
  end
  local t = nn.AddConstant(torch.Tensor({ 1, 2, 3 }))
  T.eq(t:forward(torch.Tensor({ -1, -2, -3 })):totable(), { 0, 0, 0 })
  T.eq(t:forward(torch.Tensor({ { 1, 1, 1 }, { 2, 2, 2 } })):totable(), { { 2, 3, 4 }, { 3, 4, 5 } })
  -- a one-element tensor of no dims (x:squeeze()) is a number
  T.eq(nn.MulConstant(torch.Tensor({ 2 }):squeeze()).constant_scalar, 2)
  T.raises(function() t:forward(torch.randn(2, 4)) end, "nn.AddConstant")
  T.raises(function() t:forward(torch.randn(2, 2, 3)) end, "nn.AddConstant")
  T.raises(function() nn.MulConstant("a") end, "nn.MulConstant")
  T.raises(function() nn.MulConstant(2, 1) end, "nn.MulConstant")
  T.raises(function() nn.AddConstant({}) end, "nn.AddConstant")
end)

T.test("Dropout: v2 scales in training, v1 in evaluation; in place; the mask in backward", function()
  local p = 0.25
  local m = nn.Dropout(p)
  local x = torch.Tensor(50, 40):uniform(1, 2)
  local y = m:forward(x)
  local go = torch.Tensor(50, 40):uniform(-1, 1)
  local g = m:backward(x, go)
  local kept = 0
  for i = 1, 50 do for j = 1, 40 do
    if y[i][j] == 0 then
      T.eq(g[i][j], 0)
    else
      kept = kept + 1
      T.near(y[i][j], x[i][j] / (1 - p), 1e-15); T.near(g[i][j], go[i][j] / (1 - p), 1e-15)
    end
  end end
  T.ok(math.abs(kept / 2000 - (1 - p)) < 0.05, "kept fraction " .. kept / 2000)
  m:evaluate()
  close(m:forward(x), x, 0, "v2 evaluation passes the input")
  local v1 = nn.Dropout(p, true)
  v1:evaluate()
  close(v1:forward(x), x * (1 - p), 1e-15, "v1 evaluation scales")
  close(v1:backward(x, go), go * (1 - p), 1e-15, "v1 evaluation backward")
  -- in place: the input is the output
  local ip = nn.Dropout(p, nil, true)
  local xi = x:clone()
  local yi = ip:forward(xi)
  close(xi, yi, 0, "in place")
  local goi = go:clone()
  ip:backward(xi, goi)
  close(goi, go:clone():cmul(ip.noise), 0, "in-place backward masks gradOutput")
  -- stochastic inference draws the mask in evaluation too
  local s = nn.Dropout(0.5, false, false, true)
  s:evaluate()
  T.ok(s:forward(torch.ones(1000)):eq(0):sum() > 100)
  T.eq(nn.Dropout(0):forward(x):totable(), x:totable())
  T.ok(tostring(nn.Dropout(0.3)):find("nn.Dropout(", 1, true) == 1)
  T.raises(function() nn.Dropout(1) end, "nn.Dropout")
  T.raises(function() nn.Dropout(-0.1) end, "nn.Dropout")
  io_ok(nn.Dropout(0), torch.Tensor(3, 4))
end)

T.test("SpatialDropout, VolumetricDropout: whole planes dropped, batched or not", function()
  for _, c in ipairs({ { "SpatialDropout", { 30, 3, 4 }, { 4, 30, 3, 4 } },
                       { "VolumetricDropout", { 30, 2, 3, 4 }, { 3, 30, 2, 3, 4 } } }) do
    local name, single, batch = table.unpack(c)
    local m = nn[name](0.3)
    for _, shape in ipairs({ single, batch }) do
      local x = torch.Tensor(table.unpack(shape)):uniform(1, 2)
      local y = m:forward(x)
      local go = torch.Tensor(table.unpack(shape)):uniform(-1, 1)
      local g = m:backward(x, go)
      local planes = x:nElement() / (x:dim() == #single and x:size(1) or x:size(1) * x:size(2))
      local yf, xf = y:contiguous():view(-1, planes), x:contiguous():view(-1, planes)
      local gf, gof = g:contiguous():view(-1, planes), go:contiguous():view(-1, planes)
      for r = 1, yf:size(1) do
        local zero = yf[r][1] == 0
        if zero then
          T.eq(yf[r]:abs():max(), 0); T.eq(gf[r]:abs():max(), 0)
        else
          close(yf[r], xf[r], 0); close(gf[r], gof[r], 0)
        end
      end
    end
    m:evaluate()
    local x = torch.Tensor(table.unpack(single)):uniform(1, 2)
    close(m:forward(x), x * 0.7, 1e-15, name .. " evaluation")
    T.raises(function() m:backward(x, x) end, "nn." .. name, "training")
    m:training()
    T.raises(function() m:forward(torch.randn(3, 4)) end, "nn." .. name)
  end
end)

T.test("WhiteNoise, GradientReversal, ZeroGrad, Constant, Copy, Contiguous, PrintSize", function()
  local w = nn.WhiteNoise(0.5, 0.2)
  local x = torch.zeros(40, 50)
  local y = w:forward(x)
  T.ok(math.abs(y:mean() - 0.5) < 0.02 and math.abs(y:std() - 0.2) < 0.02, "noise statistics")
  local go = torch.randn(40, 50)
  close(w:backward(x, go), go, 0)
  w:evaluate()
  close(w:forward(x), x + 0.5, 0)
  T.raises(function() w:backward(x, go) end, "nn.WhiteNoise")

  local r = nn.GradientReversal(0.5)
  x = torch.randn(3, 4)
  close(r:forward(x), x, 0)
  close(r:backward(x, go:narrow(1, 1, 3):narrow(2, 1, 4)), go:narrow(1, 1, 3):narrow(2, 1, 4) * -0.5, 0)
  r:setLambda(2)
  T.eq(r.lambda, 2)
  local seq = nn.Sequential():add(nn.GradientReversal()):add(nn.GradientReversal())
  jacobian_ok(seq, torch.Tensor(3, 4))
  local rc = r:clone()
  T.eq(rc.lambda, 2)

  local z = nn.ZeroGrad()
  close(z:forward(x), x, 0)
  T.eq(z:backward(x, x):abs():max(), 0)
  local zt = z:backward({ x, torch.randn(2) }, { x, torch.randn(2) })
  T.eq(#zt, 2); T.eq(zt[2]:abs():max(), 0)

  local value = torch.randn(5, 2)
  local c = nn.Constant(value:clone(), 2)
  local cy = c:forward(torch.randn(7, 3, 3))
  T.eq(cy:size():totable(), { 7, 5, 2 })
  close(cy[4], value, 0)
  close(c:forward(torch.randn(3, 3)), value, 0)
  T.eq(c:backward(torch.randn(3, 3), value):abs():max(), 0)
  T.eq(nn.Constant(2.5):forward(torch.randn(3)):totable(), { 2.5 })
  T.raises(function() nn.Constant("a") end, "nn.Constant")

  local cp = nn.Copy("torch.DoubleTensor", "torch.FloatTensor")
  local cf = cp:forward(x)
  T.eq(torch.type(cf), "torch.FloatTensor")
  close(cf:double(), x, 1e-6)
  T.eq(torch.type(cp:backward(x, cf)), "torch.DoubleTensor")
  local same = nn.Copy()
  T.ok(same:forward(x):isSetTo(x), "one type: the output shares the input")
  T.ok(not nn.Copy(nil, nil, true):forward(x):isSetTo(x), "forceCopy copies")
  cp.dontCast = true
  cp:double()
  T.eq(torch.type(cp.output), "torch.FloatTensor")
  T.raises(function() nn.Copy("torch.NoSuchTensor") end, "nn.Copy")
  local sc = nn.Copy("torch.DoubleTensor", "torch.FloatTensor"):clone()
  T.eq(torch.type(sc:forward(x)), "torch.FloatTensor")

  local ct = nn.Contiguous()
  T.ok(ct:forward(x):isSetTo(x))
  local xt = x:t()
  local yc = ct:forward(xt)
  T.ok(yc:isContiguous()); close(yc, xt, 0)

  local printed = {}
  local print0 = print
  print = function(...) printed[#printed + 1] = table.concat({ tostring(select(1, ...)) }, " ") end
  local ps = nn.PrintSize("here")
  local ok, err = pcall(function()
    T.ok(rawequal(ps:forward(x), x)); T.ok(rawequal(ps:backward(x, x), x))
  end)
  print = print0
  if not ok then error(err, 0) end
  T.eq(printed[1], "here:input\n"); T.eq(printed[2], "here:gradOutput\n")
end)

T.test("OneHot: indices (a number, a vector, a matrix; any type) to one-hot rows", function()
  local m = nn.OneHot(5)
  local y = m:forward(torch.LongTensor({ 2, 5, 1 }))
  T.eq(y:totable(), { { 0, 1, 0, 0, 0 }, { 0, 0, 0, 0, 1 }, { 1, 0, 0, 0, 0 } })
  T.eq(m:forward(3):totable(), { 0, 0, 1, 0, 0 })
  local y2 = m:forward(torch.Tensor({ { 1, 2 }, { 4, 4 } }))
  T.eq(y2:size():totable(), { 2, 2, 5 })
  T.eq(y2[2][1]:totable(), { 0, 0, 0, 1, 0 })
  local g = m:backward(torch.Tensor({ { 1, 2 }, { 4, 4 } }), torch.randn(2, 2, 5))
  T.eq(g:size():totable(), { 2, 2 }); T.eq(g:abs():max(), 0)
  T.raises(function() m:forward(torch.LongTensor({ 0, 2 })) end, "nn.OneHot", "out of range")
  T.raises(function() m:forward(torch.LongTensor({ 6 })) end, "nn.OneHot")
  T.raises(function() m:forward("a") end, "nn.OneHot")
  T.raises(function() nn.OneHot() end, "nn.OneHot")
end)

T.test("Normalize: p = 1, 2, 3, 1.5, inf; vectors and batches; Jacobian", function()
  for _, p in ipairs({ 1, 2, 3, 4, 1.5, math.huge }) do
    local m = nn.Normalize(p)
    local x = torch.Tensor(3, 5):uniform(-2, 2)
    local y = m:forward(x)
    for i = 1, 3 do
      local s = 0
      for j = 1, 5 do
        local a = math.abs(x[i][j])
        if p == math.huge then s = math.max(s, a) else s = s + a ^ p end
      end
      local n = p == math.huge and s + 1e-10 or (s + 1e-10) ^ (1 / p)
      for j = 1, 5 do T.near(y[i][j], x[i][j] / n, 1e-12) end
    end
    local v = torch.Tensor(6):uniform(-2, 2)
    close(m:forward(v), v / v:norm(p), 1e-9, "Normalize vector " .. p)
    jacobian_ok(m, torch.Tensor(4, 5), -2, 2, "Normalize " .. p)
    jacobian_ok(m, torch.Tensor(5), -2, 2, "Normalize vector " .. p)
  end
  io_ok(nn.Normalize(2), torch.Tensor(3, 4))
  T.ok(tostring(nn.Normalize(2)):find("nn.Normalize(2)", 1, true) ~= nil)
  T.raises(function() nn.Normalize(2):forward(torch.randn(2, 3, 4)) end, "nn.Normalize")
  T.raises(function() nn.Normalize() end, "nn.Normalize")
  T.raises(function() nn.Normalize(-1) end, "nn.Normalize")
end)

T.test("L1Penalty: the identity, loss = weight * |x|_1, its sign gradient added", function()
  local m = nn.L1Penalty(0.5)
  local x = torch.Tensor(2, 5):uniform(-1, 1)
  x[1][1] = 0
  T.ok(rawequal(m:forward(x), x))
  T.near(m.loss, 0.5 * x:clone():abs():sum(), 1e-12)
  local go = torch.randn(2, 5)
  close(m:backward(x, go), go + map(x, function(v) return v > 0 and 0.5 or v < 0 and -0.5 or 0 end), 1e-15)
  local a = nn.L1Penalty(1, true, false)
  a:forward(x)
  T.near(a.loss, x:clone():abs():sum() / 10, 1e-12)
  close(a:backward(x, go), map(x, function(v) return v > 0 and 0.1 or v < 0 and -0.1 or 0 end), 1e-15)
  T.raises(function() nn.L1Penalty() end, "nn.L1Penalty")
end)

T.test("Maxout: a Linear to k groups, the max of each unit; gradients; preprocess", function()
  local m = nn.Maxout(4, 3, 2)
  T.ok(torch.isTypeOf(m, "nn.Sequential"))
  local lin = m.modules[1]
  local x = torch.Tensor(5, 4):uniform(-1, 1)
  local y = m:forward(x):clone()
  T.eq(y:size():totable(), { 5, 3 })
  local l = x * lin.weight:t() + lin.bias:view(1, 6):expand(5, 6)
  for i = 1, 5 do for j = 1, 3 do T.near(y[i][j], math.max(l[i][j], l[i][3 + j]), 1e-12) end end
  local y1 = m:forward(x[2])
  T.eq(y1:size():totable(), { 3 })
  close(y1, y[2], 1e-12)
  jacobian_ok(m, torch.Tensor(5, 4))
  jacobian_ok(m, torch.Tensor(4))
  T.ok(jac.testJacobianParameters(m, torch.Tensor(5, 4), lin.weight, lin.gradWeight) < PREC, "Maxout weight")
  T.ok(jac.testJacobianParameters(m, torch.Tensor(5, 4), lin.bias, lin.gradBias) < PREC, "Maxout bias")
  T.ok(jac.testJacobianUpdateParameters(m, torch.Tensor(5, 4), lin.weight) < PREC, "Maxout weight update")
  local pm = nn.Maxout(4, 3, 2, nn.Tanh())
  jacobian_ok(pm, torch.Tensor(5, 4))
  T.eq(#pm:parameters(), 2)
  io_ok(m, torch.Tensor(3, 4))
  T.raises(function() nn.Maxout(4, 0, 2) end, "nn.Maxout")
  T.raises(function() m:forward(torch.randn(5, 3)) end, "nn.Linear")
end)

T.test("float modules: :float() converts, forward and backward keep the type", function()
  for _, m in ipairs({ nn.Tanh(), nn.Sigmoid(), nn.ReLU(), nn.LogSoftMax(), nn.CMul(3), nn.PReLU(3), nn.Dropout(0.3) }) do
    m:float()
    local x = torch.FloatTensor(2, 3):uniform(-1, 1)
    local y = m:forward(x)
    T.eq(torch.type(y), "torch.FloatTensor", torch.type(m))
    T.eq(torch.type(m:backward(x, y:clone())), "torch.FloatTensor", torch.type(m))
  end
end)

T.done()
