-- test_t7nn_volumetric.lua — Torch7 mode's nn (lib/t7nn): the 3-D convolutions and poolings
-- of t7nn/volumetric.lua under `lutorch --torch7` (tests/sh/test_torch7_mode.sh). Forward
-- values and gradients are checked against PyTorch 1.13 (tests/lua/pyref.lua, one Python run
-- for the whole file) or plain Lua arithmetic, backward passes against finite differences
-- (nn.Jacobian, float64), and bad input must raise an error naming the class.
local T = require "testing"
local P = require "pyref"
require "nn"

torch.manualSeed(7)

local function sizes(t) return t:size():totable() end

-- a and b (tensors) equal within tol, sizes included
local function near(a, b, tol, msg)
  if not T.deq(sizes(a), sizes(b)) then
    error((msg or "") .. ": size " .. table.concat(sizes(a), "x") .. " expected " .. table.concat(sizes(b), "x"), 2)
  end
  local d = a:nElement() == 0 and 0 or (a:double() - b:double()):abs():max()
  if d > (tol or 1e-10) then error(("%s: differs by %g"):format(msg or "values", d), 2) end
end

local function jacobian(m, x, msg)
  local err = nn.Jacobian.testJacobian(m, x)
  if not (err < 1e-6) then error(("%s: Jacobian error %g"):format(msg or torch.type(m), err), 2) end
end

local function jacobian_params(m, x, msg)
  local err = nn.Jacobian.testJacobianParameters(m, x, m.weight, m.gradWeight)
  if not (err < 1e-6) then error(("%s: weight Jacobian error %g"):format(msg or torch.type(m), err), 2) end
  if m.bias then
    err = nn.Jacobian.testJacobianParameters(m, x, m.bias, m.gradBias)
    if not (err < 1e-6) then error(("%s: bias Jacobian error %g"):format(msg or torch.type(m), err), 2) end
  end
end

local function raises(cls, fn) return T.raises(fn, cls) end

---------------------------------------------------------------------------------------------
-- the computations PyTorch checks: made here first, then one Python run for all of them

local inputs = {}   -- Python name -> tensor
local code = {}     -- Python statements
local ours, exprs, order = {}, {}, {}
local function ref(name, ourvalue, expr)
  ours[name], exprs[name] = ourvalue:clone(), expr
  order[#order + 1] = name
end

-- a module's forward, gradInput, gradWeight and gradBias (accumulated with scale 0.5)
-- against `y = <pyexpr of XR, WR, BR>; y.backward(G)` in PyTorch
local function conv_case(tag, m, x, pyexpr)
  local y = m:forward(x):clone()
  local g = torch.rand(y:size())
  m:zeroGradParameters()
  local gi = m:updateGradInput(x, g):clone()
  m:accGradParameters(x, g, 0.5)
  inputs["X" .. tag], inputs["W" .. tag], inputs["B" .. tag], inputs["G" .. tag] = x, m.weight:clone(), m.bias:clone(), g
  local e = pyexpr:gsub("XR", "X" .. tag .. "r"):gsub("WR", "W" .. tag .. "r"):gsub("BR", "B" .. tag .. "r")
  for _, v in ipairs({ "X", "W", "B" }) do
    code[#code + 1] = ("%s%sr = %s%s.clone().requires_grad_()"):format(v, tag, v, tag)
  end
  code[#code + 1] = ("Y%s = %s"):format(tag, e)
  code[#code + 1] = ("Y%s.backward(G%s)"):format(tag, tag)
  ref(tag .. "_out", y, "Y" .. tag)
  ref(tag .. "_gradInput", gi, ("X%sr.grad"):format(tag))
  ref(tag .. "_gradWeight", m.gradWeight, ("0.5 * W%sr.grad"):format(tag))
  ref(tag .. "_gradBias", m.gradBias, ("0.5 * B%sr.grad"):format(tag))
end

-- convolutions: Torch7's (kT, kW, kH) are PyTorch's (kT, kH, kW)
local XC = torch.rand(2, 2, 4, 5, 6)
conv_case("conv", nn.VolumetricConvolution(2, 3, 2, 3, 2, 1, 2, 1, 1, 0, 1), XC,
  "F.conv3d(XR, WR, BR, stride=(1,1,2), padding=(1,1,0))")
conv_case("conv4", nn.VolumetricConvolution(2, 2, 3, 2, 2, 2, 1, 1), XC[2],
  "F.conv3d(XR, WR, BR, stride=(2,1,1))")
conv_case("dil", nn.VolumetricDilatedConvolution(2, 2, 2, 2, 3, 1, 1, 2, 0, 1, 0, 2, 1, 2), XC,
  "F.conv3d(XR, WR, BR, stride=(1,2,1), padding=(0,0,1), dilation=(2,2,1))")
conv_case("full", nn.VolumetricFullConvolution(2, 3, 3, 2, 2, 2, 1, 2, 1, 0, 1, 1, 0, 1), torch.rand(2, 2, 3, 3, 4),
  "F.conv_transpose3d(XR, WR, BR, stride=(2,2,1), padding=(1,1,0), output_padding=(1,1,0))")
conv_case("full4", nn.VolumetricFullConvolution(2, 2, 2, 3, 2, 3, 3, 2), torch.rand(2, 2, 3, 2),
  "F.conv_transpose3d(XR, WR, BR, stride=(3,2,3))")

-- poolings
local XP = torch.rand(2, 2, 5, 6, 7)
inputs.XP = XP
local mp = nn.VolumetricMaxPooling(2, 3, 2, 2, 2, 1, 1, 1, 0):ceil()
ref("maxpool", mp:forward(XP), "F.max_pool3d(XP, (2,2,3), (2,1,2), (1,0,1), ceil_mode=True)")
ref("maxpool_idx", mp.indices:double():add(-1),
  "F.max_pool3d(XP, (2,2,3), (2,1,2), (1,0,1), ceil_mode=True, return_indices=True)[1]")
local mp4 = nn.VolumetricMaxPooling(3, 2, 2)
ref("maxpool4", mp4:forward(XP[1]), "F.max_pool3d(XP[0:1], (3,2,2))[0]")
local dmp = nn.VolumetricDilatedMaxPooling(2, 2, 2, 1, 2, 2, 0, 1, 1, 2, 1, 2)
ref("dilmax", dmp:forward(XP), "F.max_pool3d(XP, 2, (1,2,2), (0,1,1), dilation=(2,2,1))")
ref("dilmax_idx", dmp.indices:double():add(-1),
  "F.max_pool3d(XP, 2, (1,2,2), (0,1,1), dilation=(2,2,1), return_indices=True)[1]")
ref("avg", nn.VolumetricAveragePooling(2, 3, 2, 1, 2, 2):forward(XP), "F.avg_pool3d(XP, (2,2,3), (1,2,2))")
ref("avg4", nn.VolumetricAveragePooling(2, 2, 2):forward(XP[2]), "F.avg_pool3d(XP[1:2], 2)[0]")

local up = nn.VolumetricMaxPooling(2, 2, 2)
local UY = up:forward(XP):clone()
local unpool = nn.VolumetricMaxUnpooling(up)
inputs.UY, inputs.UI = UY, up.indices:clone():add(-1)
ref("unpool", unpool:forward(UY), "F.max_unpool3d(UY, UI, 2, 2, output_size=(5,6,7))")

-- fractional: Torch7 reads planes x H x W x T, PyTorch (D, H, W): the same dims, the
-- samples (T, W, H) reversed
local XF = torch.rand(2, 2, 8, 7, 9)
inputs.XF = XF
local fm = nn.VolumetricFractionalMaxPooling(2, 3, 2, 3, 2, 4):fixPoolingRegions()
ref("frac", fm:forward(XF), "F.fractional_max_pool3d(XF, (2,3,2), output_size=(4,2,3), _random_samples=FS.flip(-1))")
ref("frac_idx", fm.indices:double():add(-1),
  "F.fractional_max_pool3d(XF, (2,3,2), output_size=(4,2,3), _random_samples=FS.flip(-1), return_indices=True)[1]")
inputs.FS = fm.randomSamples:clone()
local fr = nn.VolumetricFractionalMaxPooling(2, 2, 3, 0.5, 0.6, 0.7):fixPoolingRegions()
ref("frac_ratio", fr:forward(XF), "F.fractional_max_pool3d(XF, (3,2,2), output_size=(5,4,4), _random_samples=FR.flip(-1))")
inputs.FR = fr.randomSamples:clone()

local REF   -- name -> PyTorch's tensor, or nil without PyTorch
if P.available() then
  local e = {}
  for i, name in ipairs(order) do e[i] = exprs[name] end
  local r = P.run(inputs, table.concat(code, "\n"), e)
  REF = {}
  for i, name in ipairs(order) do REF[name] = r[i] end
end

local function against_pytorch(title, names, tol)
  if not REF then T.skip(title, P.why()); return end
  T.test(title .. ": against PyTorch", function()
    for _, name in ipairs(names) do
      near(ours[name], torch.DoubleTensor(REF[name]:totable()), tol or 1e-12, name)
    end
  end)
end

local function grads(tag)
  return { tag .. "_out", tag .. "_gradInput", tag .. "_gradWeight", tag .. "_gradBias" }
end

---------------------------------------------------------------------------------------------
-- convolutions

against_pytorch("VolumetricConvolution: forward, gradInput, gradWeight, gradBias (batch)", grads("conv"))
against_pytorch("VolumetricConvolution: forward and gradients (one volume)", grads("conv4"))
against_pytorch("VolumetricDilatedConvolution: forward and gradients", grads("dil"))
against_pytorch("VolumetricFullConvolution: forward and gradients (batch)", grads("full"))
against_pytorch("VolumetricFullConvolution: forward and gradients (one volume, strides > kernel)", grads("full4"))

T.test("VolumetricConvolution: window sums by hand, sizes, fields, tostring", function()
  local m = nn.VolumetricConvolution(1, 1, 2, 2, 1)
  m.weight:fill(1); m.bias:fill(0.5)
  local x = torch.rand(1, 3, 2, 4)
  local y = m:forward(x)
  T.eq(sizes(y), { 1, 2, 2, 3 })
  for t = 1, 2 do for h = 1, 2 do for w = 1, 3 do
    local s = 0.5
    for a = 0, 1 do for c = 0, 1 do s = s + x[1][t + a][h][w + c] end end
    T.near(y[1][t][h][w], s, 1e-12)
  end end end
  T.eq(sizes(nn.VolumetricConvolution(2, 4, 3, 2, 1).weight), { 4, 2, 3, 1, 2 })
  local p = nn.VolumetricConvolution(1, 1, 3, 3, 3, 2, 2, 2, 1)
  T.eq({ p.padT, p.padW, p.padH }, { 1, 1, 1 })
  T.eq(sizes(p:forward(torch.rand(1, 5, 6, 7))), { 1, 3, 3, 4 })
  T.eq(tostring(nn.VolumetricConvolution(2, 3, 4, 5, 6)), "nn.VolumetricConvolution(2 -> 3, 4x5x6)")
  T.eq(tostring(nn.VolumetricConvolution(2, 3, 4, 5, 6, 1, 2, 3, 0, 1, 0)),
    "nn.VolumetricConvolution(2 -> 3, 4x5x6, 1,2,3, 0,1,0)")
  T.eq(tostring(nn.VolumetricDilatedConvolution(2, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 2, 3, 4):noBias()),
    "nn.VolumetricDilatedConvolution(2 -> 3, 1x1x1, 2,3,4) without bias")
  T.eq(tostring(nn.VolumetricFullConvolution(2, 3, 4, 4, 4, 2, 2, 2, 1, 1, 1, 1, 0, 1)),
    "nn.VolumetricFullConvolution(2 -> 3, 4x4x4, 2,2,2, 1,1,1, 1,0,1)")
end)

T.test("VolumetricFullConvolution: the adjoint of VolumetricConvolution, table input", function()
  -- <full(x), y> = <x, conv(y)> for the same weight, no bias
  local f = nn.VolumetricFullConvolution(2, 3, 3, 2, 2, 2, 2, 1, 1, 0, 1, 1, 1, 0):noBias()
  local c = nn.VolumetricConvolution(3, 2, 3, 2, 2, 2, 2, 1, 1, 0, 1):noBias()
  c.weight:copy(f.weight)
  local x = torch.rand(2, 2, 3, 4, 3)
  local fx = f:forward(x)
  T.eq(sizes(fx), { 2, 3, 6, 3, 7 })
  local y = torch.rand(fx:size())
  T.near(fx:dot(y), x:dot(c:forward(y)), 1e-10)
  -- {input, target}: the adjustments from target's size, gradInput[2] a stored zero
  local m = nn.VolumetricFullConvolution(2, 2, 3, 3, 3, 2, 2, 2, 1, 1, 1)
  local target = torch.zeros(6, 8, 6)
  local out = m:forward({ x[1], target })
  T.eq(sizes(out), { 2, 6, 8, 6 })
  local gi = m:backward({ x[1], target }, out:clone():uniform())
  T.eq(sizes(gi[1]), sizes(x[1]))
  T.eq(sizes(gi[2]), { 6, 8, 6 })
  T.eq(gi[2]:sum(), 0)
  -- a plain input again after a table one
  T.ok(torch.isTensor(m:backward(x[1], m:forward(x[1]):clone():uniform())))
end)

T.test("convolutions: Jacobians (input, weight, bias), batch and single, float", function()
  local c = nn.VolumetricConvolution(2, 2, 2, 2, 3, 2, 1, 2, 1, 0, 1)
  jacobian(c, torch.rand(2, 3, 4, 5)); jacobian_params(c, torch.rand(2, 3, 4, 5))
  jacobian(c, torch.rand(2, 2, 3, 4, 5))
  local d = nn.VolumetricDilatedConvolution(1, 2, 2, 2, 2, 1, 2, 1, 0, 1, 0, 2, 1, 2)
  jacobian(d, torch.rand(2, 1, 4, 5, 4)); jacobian_params(d, torch.rand(1, 4, 5, 4))
  local f = nn.VolumetricFullConvolution(2, 1, 2, 3, 2, 2, 2, 1, 0, 1, 0, 1, 1, 0)
  jacobian(f, torch.rand(2, 2, 2, 3)); jacobian_params(f, torch.rand(2, 2, 2, 2, 3))
  local ff = nn.VolumetricFullConvolution(1, 2, 2, 2, 2):noBias()
  jacobian_params(ff, torch.rand(1, 2, 2, 2))
  local m = nn.VolumetricConvolution(1, 2, 2, 2, 2):float()
  local y = m:forward(torch.rand(1, 3, 3, 3):float())
  T.eq(torch.type(y), "torch.FloatTensor")
  T.eq(torch.type(m:backward(torch.rand(1, 3, 3, 3):float(), y)), "torch.FloatTensor")
end)

T.test("convolutions: bad input names the class", function()
  local c = nn.VolumetricConvolution(2, 3, 2, 2, 2)
  raises("nn.VolumetricConvolution", function() c:forward(torch.rand(2, 4, 4)) end)
  raises("nn.VolumetricConvolution", function() c:forward(torch.rand(3, 4, 4, 4)) end)
  raises("nn.VolumetricConvolution", function() c:forward(torch.rand(2, 1, 4, 4)) end)
  raises("nn.VolumetricConvolution", function() c:forward(torch.rand(2, 4, 4, 4):float()) end)
  raises("nn.VolumetricConvolution", function() c:backward(torch.rand(2, 4, 4, 4), torch.rand(3, 3, 3, 2)) end)
  raises("nn.VolumetricConvolution", function() nn.VolumetricConvolution(2, 3, 0, 2, 2) end)
  raises("nn.VolumetricConvolution", function() nn.VolumetricConvolution(2, 3, 2, 2, 2, 1, 1, 1, -1) end)
  raises("nn.VolumetricConvolution", function() nn.VolumetricConvolution("a", 3, 2, 2, 2) end)
  raises("nn.VolumetricDilatedConvolution", function()
    nn.VolumetricDilatedConvolution(1, 1, 2, 2, 2, 1, 1, 1, 0, 0, 0, 0)
  end)
  raises("nn.VolumetricDilatedConvolution", function()
    nn.VolumetricDilatedConvolution(1, 1, 2, 2, 2, 1, 1, 1, 0, 0, 0, 3, 3, 3):forward(torch.rand(1, 3, 3, 3))
  end)
  local f = nn.VolumetricFullConvolution(2, 1, 2, 2, 2, 2, 2, 2)
  raises("nn.VolumetricFullConvolution", function() f:forward(torch.rand(3, 2, 2, 2)) end)
  raises("nn.VolumetricFullConvolution", function() f:forward(torch.rand(2, 2, 2)) end)
  raises("nn.VolumetricFullConvolution", function() f:forward({ torch.rand(2, 2, 2, 2), torch.rand(3, 3) }) end)
  raises("nn.VolumetricFullConvolution", function() f:backward(torch.rand(2, 2, 2, 2), torch.rand(1, 3, 3, 3)) end)
  raises("nn.VolumetricFullConvolution", function() nn.VolumetricFullConvolution(2, 1, 2, 2, 2, 1, 1, 1, 0, 0, 0, 1) end)
end)

---------------------------------------------------------------------------------------------
-- poolings

against_pytorch("VolumetricMaxPooling: values and 1-based indices (ceil, padding, single volume)",
  { "maxpool", "maxpool_idx", "maxpool4" })
against_pytorch("VolumetricDilatedMaxPooling: values and indices", { "dilmax", "dilmax_idx" })
against_pytorch("VolumetricAveragePooling", { "avg", "avg4" })
against_pytorch("VolumetricMaxUnpooling", { "unpool" })
against_pytorch("VolumetricFractionalMaxPooling: output size, ratios, indices", { "frac", "frac_idx", "frac_ratio" })

T.test("VolumetricMaxPooling: values and indices by hand, backward, fields, tostring", function()
  local m = nn.VolumetricMaxPooling(2, 2, 2)
  local x = torch.range(1, 27):view(1, 3, 3, 3)
  x[1][1][1][1] = 100
  local y = m:forward(x)
  T.eq(sizes(y), { 1, 1, 1, 1 })
  T.eq(y[1][1][1][1], 100); T.eq(m.indices[1][1][1][1], 1)
  T.eq(torch.type(m.indices), "torch.LongTensor")
  m:ceil()
  y = m:forward(x)
  T.eq(sizes(y), { 1, 2, 2, 2 })
  -- each window's largest element is its last; the first window holds the 100
  T.eq(y:view(8):totable(), { 100, 15, 17, 18, 23, 24, 26, 27 })
  T.eq(m.indices:view(8):totable(), { 1, 15, 17, 18, 23, 24, 26, 27 })
  local gi = m:backward(x, torch.range(1, 8):view(1, 2, 2, 2))
  local want = torch.zeros(27)
  for i, p in ipairs(m.indices:view(8):totable()) do want[p] = want[p] + i end
  near(gi:view(27), want, 0, "gradInput")
  T.eq({ m.itime, m.iheight, m.iwidth }, { 3, 3, 3 })
  T.eq(tostring(nn.VolumetricMaxPooling(2, 3, 4)), "nn.VolumetricMaxPooling(2x3x4, 2,3,4)")
  T.eq(tostring(nn.VolumetricMaxPooling(2, 3, 4, 1, 1, 1, 1, 1, 0)), "nn.VolumetricMaxPooling(2x3x4, 1,1,1, 1,1,0)")
  T.eq(tostring(nn.VolumetricDilatedMaxPooling(2, 2, 2, 1, 1, 1, 0, 0, 0, 2, 3, 1)),
    "nn.VolumetricDilatedMaxPooling(2x2x2, 1,1,1, 2,3,1)")
  T.eq(tostring(nn.VolumetricAveragePooling(2, 3, 4)), "nn.VolumetricAveragePooling(2x3x4, 2,3,4)")
end)

T.test("VolumetricAveragePooling: means by hand", function()
  local x = torch.rand(2, 4, 3, 5)
  local y = nn.VolumetricAveragePooling(2, 3, 2, 2, 2, 1):forward(x)
  T.eq(sizes(y), { 2, 2, 2, 2 })
  for c = 1, 2 do for t = 1, 2 do for h = 1, 2 do for w = 1, 2 do
    local s = 0
    for a = 0, 1 do for b = 0, 1 do for d = 0, 2 do
      s = s + x[c][2 * t - 1 + a][h + b][2 * w - 1 + d]
    end end end
    T.near(y[c][t][h][w], s / 12, 1e-12)
  end end end end
end)

T.test("poolings: Jacobians, batch and single, testIO, float", function()
  jacobian(nn.VolumetricMaxPooling(2, 2, 3, 2, 1, 2, 1, 1, 0):ceil(), torch.rand(2, 4, 5, 5))
  jacobian(nn.VolumetricMaxPooling(2, 2, 2, 1, 1, 1), torch.rand(2, 2, 3, 3, 4))
  jacobian(nn.VolumetricDilatedMaxPooling(2, 2, 2, 1, 2, 1, 0, 1, 0, 2, 1, 2):ceil(), torch.rand(2, 2, 4, 4, 5))
  jacobian(nn.VolumetricAveragePooling(2, 2, 2, 1, 2, 1), torch.rand(2, 3, 4, 4))
  jacobian(nn.VolumetricAveragePooling(3, 2, 2), torch.rand(2, 2, 3, 4, 4))
  local p = nn.VolumetricMaxPooling(2, 2, 2)
  local y = p:forward(torch.rand(2, 2, 4, 5, 4))
  jacobian(nn.VolumetricMaxUnpooling(p), y:clone())
  jacobian(nn.VolumetricFractionalMaxPooling(2, 2, 3, 2, 3, 2):fixPoolingRegions(), torch.rand(2, 2, 6, 6, 5))
  jacobian(nn.VolumetricFractionalMaxPooling(2, 2, 2, 0.5, 0.5, 0.6):fixPoolingRegions(), torch.rand(2, 6, 5, 6))
  local ferr, berr = nn.Jacobian.testIO(nn.VolumetricMaxPooling(2, 2, 2), torch.rand(2, 4, 4, 4))
  T.eq(ferr, 0); T.eq(berr, 0)
  local m = nn.VolumetricMaxPooling(2, 2, 2):float()
  local x = torch.rand(2, 4, 4, 4):float()
  T.eq(torch.type(m:forward(x)), "torch.FloatTensor"); T.eq(torch.type(m.indices), "torch.LongTensor")
  T.eq(torch.type(m:backward(x, m.output)), "torch.FloatTensor")
end)

T.test("VolumetricMaxUnpooling: values back where the maxima were", function()
  local pool = nn.VolumetricMaxPooling(2, 2, 2, 2, 2, 2, 1, 1, 1)
  local unpool = nn.VolumetricMaxUnpooling(pool)
  local x = torch.rand(2, 5, 4, 3)
  local y = pool:forward(x)
  local u = unpool:forward(y)
  T.ok(u:isSameSizeAs(x))
  local mask = u:ne(0)
  T.eq(mask:sum(), y:nElement())
  near(u:maskedSelect(mask), x:maskedSelect(mask), 0, "kept values")
  near(nn.VolumetricMaxPooling(2, 2, 2, 2, 2, 2, 1, 1, 1):forward(u), y, 0, "pooled again")
  T.eq(tostring(unpool), "nn.VolumetricMaxUnpooling associated to nn.VolumetricMaxPooling(2x2x2, 2,2,2, 1,1,1)")
end)

T.test("VolumetricFractionalMaxPooling: sizes, fixed and new regions, maxima of windows", function()
  local m = nn.VolumetricFractionalMaxPooling(2, 2, 2, 0.5, 0.6, 0.7)
  -- planes x H x W x T: T from the last dim
  local y = m:forward(torch.rand(3, 10, 9, 8))
  T.eq(sizes(y), { 3, 7, 5, 4 })
  T.eq(sizes(m.randomSamples), { 1, 3, 3 })
  local s1 = m.randomSamples:clone()
  m:forward(torch.rand(3, 10, 9, 8))
  T.ok((m.randomSamples - s1):abs():max() > 0)
  m:fixPoolingRegions()
  s1 = m.randomSamples:clone()
  m:forward(torch.rand(3, 10, 9, 8))
  T.eq((m.randomSamples - s1):abs():max(), 0)
  local x = torch.rand(1, 6, 6, 6)
  local f = nn.VolumetricFractionalMaxPooling(2, 2, 2, 3, 3, 3):fixPoolingRegions()
  local out = f:forward(x)
  for i = 1, 27 do T.eq(out:view(27)[i], x:view(216)[f.indices:view(27)[i]]) end
  T.eq(tostring(f), "nn.VolumetricFractionalMaxPooling(3x3x3, 2,2,2)")
end)

T.test("poolings: bad input names the class", function()
  raises("nn.VolumetricMaxPooling", function() nn.VolumetricMaxPooling(2, 2, 2):forward(torch.rand(4, 4, 4)) end)
  raises("nn.VolumetricMaxPooling", function() nn.VolumetricMaxPooling(2, 2, 2):forward(torch.rand(1, 1, 1, 4, 4, 4)) end)
  raises("nn.VolumetricMaxPooling", function() nn.VolumetricMaxPooling(3, 3, 3):forward(torch.rand(1, 2, 2, 2)) end)
  raises("nn.VolumetricMaxPooling", function() nn.VolumetricMaxPooling(2, 2, 2, 1, 1, 1, 2):forward(torch.rand(1, 4, 4, 4)) end)
  raises("nn.VolumetricMaxPooling", function() nn.VolumetricMaxPooling(0, 2, 2) end)
  raises("nn.VolumetricMaxPooling", function() nn.VolumetricMaxPooling(2, "a", 2) end)
  local m = nn.VolumetricMaxPooling(2, 2, 2)
  m:forward(torch.rand(1, 4, 4, 4))
  raises("nn.VolumetricMaxPooling", function() m:backward(torch.rand(1, 4, 4, 4), torch.rand(1, 2, 2, 1)) end)
  raises("nn.VolumetricDilatedMaxPooling", function() nn.VolumetricDilatedMaxPooling(2, 2, 2, 1, 1, 1, 0, 0, 0, 0) end)
  raises("nn.VolumetricDilatedMaxPooling", function()
    nn.VolumetricDilatedMaxPooling(2, 2, 2, 1, 1, 1, 0, 0, 0, 3, 3, 3):forward(torch.rand(1, 3, 3, 3))
  end)
  raises("nn.VolumetricAveragePooling", function() nn.VolumetricAveragePooling(2, 2, 2):forward(torch.rand(3, 3, 3)) end)
  raises("nn.VolumetricAveragePooling", function() nn.VolumetricAveragePooling(4, 2, 2):forward(torch.rand(1, 3, 3, 3)) end)
  raises("nn.VolumetricAveragePooling", function()
    nn.VolumetricAveragePooling(2, 2, 2):backward(torch.rand(1, 4, 4, 4), torch.rand(1, 3, 3, 3))
  end)
  raises("nn.VolumetricMaxUnpooling", function() nn.VolumetricMaxUnpooling(nn.VolumetricMaxPooling(3, 3, 3, 2, 2, 2)) end)
  raises("nn.VolumetricMaxUnpooling", function() nn.VolumetricMaxUnpooling(nn.SpatialMaxPooling(2, 2)) end)
  local p = nn.VolumetricMaxPooling(2, 2, 2)
  local u = nn.VolumetricMaxUnpooling(p)
  raises("nn.VolumetricMaxUnpooling", function() u:forward(torch.rand(1, 2, 2, 2)) end)
  p:forward(torch.rand(1, 4, 4, 4))
  raises("nn.VolumetricMaxUnpooling", function() u:forward(torch.rand(1, 3, 2, 2)) end)
  raises("nn.VolumetricMaxUnpooling", function() u:backward(p.output, torch.rand(1, 4, 4, 3)) end)
  raises("nn.VolumetricFractionalMaxPooling", function() nn.VolumetricFractionalMaxPooling(1, 2, 2, 2, 2, 2) end)
  raises("nn.VolumetricFractionalMaxPooling", function() nn.VolumetricFractionalMaxPooling(2, 2, 2, 0.5, 0.5, 1.5) end)
  raises("nn.VolumetricFractionalMaxPooling", function()
    nn.VolumetricFractionalMaxPooling(2, 2, 2, 4, 4, 4):forward(torch.rand(1, 5, 5, 5))
  end)
  raises("nn.VolumetricFractionalMaxPooling", function()
    nn.VolumetricFractionalMaxPooling(2, 2, 2, 2, 2, 2):forward(torch.rand(5, 5, 5))
  end)
  raises("nn.VolumetricFractionalMaxPooling", function()
    nn.VolumetricFractionalMaxPooling(2, 2, 2, 0.1, 0.1, 0.1):forward(torch.rand(1, 5, 5, 5))
  end)
  raises("nn.VolumetricFractionalMaxPooling", function()
    nn.VolumetricFractionalMaxPooling(2, 2, 2, 2, 2, 2):updateGradInput(torch.rand(1, 5, 5, 5), torch.rand(1, 2, 2, 2))
  end)
end)

T.done()
