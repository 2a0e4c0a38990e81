-- test_t7nn_spatial.lua — Torch7 mode's nn (lib/t7nn): the 2-D poolings, paddings,
-- up-samplings, PixelShuffle and FeatureLPPooling of t7nn/spatial.lua and the reductions
-- and pair modules of t7nn/reduce.lua, under `lutorch --torch7`
-- (tests/sh/test_torch7_mode.sh). Forward values are checked against PyTorch 1.13
-- (tests/lua/pyref.lua, one Python run for the whole file) or plain Lua arithmetic,
-- backward passes against finite differences (nn.Jacobian, float64), and bad input must
-- raise an error naming the class.
local T = require "testing"
local P = require "pyref"
require "nn"

torch.manualSeed(11)

local function sizes(t) return t:size():totable() end
local function same_size(a, b) return T.deq(sizes(a), sizes(b)) end

-- a and b (tensors) equal within tol, sizes included
local function near(a, b, tol, msg)
  if not same_size(a, b) then
    error((msg or "") .. ": size " .. table.concat(sizes(a), "x") .. " expected " .. table.concat(sizes(b), "x"), 2)
  end
  local d = a:nElement() == 0 and 0 or (a:double() - b:double()):abs():max()
  if d > (tol or 1e-10) then error(("%s: differs by %g"):format(msg or "values", d), 2) end
end

-- (the input redrawn in [lo, hi], default [-2, 2])
local function jacobian(m, x, tol, msg, lo, hi)
  local err = nn.Jacobian.testJacobian(m, x, lo, hi)
  if not (err < (tol or 1e-6)) then error(("%s: Jacobian error %g"):format(msg or torch.type(m), err), 2) end
end

-- module -> file -> module gives the same output and gradInput
local function io_same(m, x)
  local ferr, berr = nn.Jacobian.testIO(m, x)
  T.eq(ferr, 0, "testIO forward")
  T.eq(berr, 0, "testIO backward")
end

local function raises(cls, fn) return T.raises(fn, cls) end

---------------------------------------------------------------------------------------------
-- the modules and inputs whose forward values PyTorch checks: computed here first, then one
-- Python run for all of them

local X = torch.rand(2, 3, 7, 8)
local XPOS = torch.rand(2, 3, 7, 8):add(0.1)
local X5 = torch.rand(2, 2, 3, 4, 5)
local XV4 = torch.rand(3, 2, 4, 5)
local XS = torch.rand(2, 3, 4, 5)
local XFR = torch.rand(2, 3, 9, 10)
local XPS = torch.rand(2, 8, 3, 4)
local XFL = torch.rand(2, 9, 3)

local ours = {}     -- name -> our tensor
local pyexpr = {}   -- name -> the Python expression of the reference
local order = {}
local function ref(name, ourvalue, expr)
  ours[name], pyexpr[name] = ourvalue:clone(), expr
  order[#order + 1] = name
end

local mp = nn.SpatialMaxPooling(2, 3, 2, 2, 1, 1):ceil()
ref("maxpool", mp:forward(X), "F.max_pool2d(X, (3,2), (2,2), (1,1), ceil_mode=True)")
ref("maxpool_idx", mp.indices:double():add(-1),
  "F.max_pool2d(X, (3,2), (2,2), (1,1), ceil_mode=True, return_indices=True)[1]")
local mp3 = nn.SpatialMaxPooling(3, 3)
ref("maxpool3d", mp3:forward(X[1]), "F.max_pool2d(X[0], 3)")
local dmp = nn.SpatialDilatedMaxPooling(2, 2, 1, 2, 1, 0, 2, 3)
ref("dilated", dmp:forward(X), "F.max_pool2d(X, (2,2), (2,1), (0,1), dilation=(3,2))")
ref("dilated_idx", dmp.indices:double():add(-1),
  "F.max_pool2d(X, (2,2), (2,1), (0,1), dilation=(3,2), return_indices=True)[1]")

local ap = nn.SpatialAveragePooling(3, 2, 2, 1, 1, 1):ceil():setCountExcludePad()
ref("avg_ceil_exclude", ap:forward(X), "F.avg_pool2d(X, (2,3), (1,2), (1,1), ceil_mode=True, count_include_pad=False)")
local ap2 = nn.SpatialAveragePooling(3, 3, 2, 2, 1, 1)
ref("avg_include", ap2:forward(X), "F.avg_pool2d(X, 3, 2, 1)")
local ap3 = nn.SpatialAveragePooling(2, 2)
ref("avg_stride1", ap3:forward(X[2]), "F.avg_pool2d(X[1], 2, 1)")

local amp = nn.SpatialAdaptiveMaxPooling(3, 4)
ref("adaptive_max", amp:forward(X), "F.adaptive_max_pool2d(X, (4,3))")
ref("adaptive_max_idx", amp.indices:double():add(-1), "F.adaptive_max_pool2d(X, (4,3), return_indices=True)[1]")
local aap = nn.SpatialAdaptiveAveragePooling(5, 3)
ref("adaptive_avg", aap:forward(X:transpose(3, 4)), "F.adaptive_avg_pool2d(X.transpose(2,3), (3,5))")

local fmp = nn.SpatialFractionalMaxPooling(2, 3, 4, 3):fixPoolingRegions()
ref("fractional", fmp:forward(XFR), "F.fractional_max_pool2d(XFR, (3,2), output_size=(3,4), _random_samples=FS)")
ref("fractional_idx", fmp.indices:double():add(-1),
  "F.fractional_max_pool2d(XFR, (3,2), output_size=(3,4), _random_samples=FS, return_indices=True)[1]")
local FS = fmp.randomSamples:clone()
local fmr = nn.SpatialFractionalMaxPooling(3, 2, 0.6, 0.5):fixPoolingRegions()
ref("fractional_ratio", fmr:forward(XFR), "F.fractional_max_pool2d(XFR, (2,3), output_ratio=(0.5,0.6), _random_samples=FR)")
local FR = fmr.randomSamples:clone()

local lp2 = nn.SpatialLPPooling(3, 2, 3, 2, 1, 2)
ref("lp2", lp2:forward(XPOS), "F.lp_pool2d(XPOS, 2, (2,3), (2,1))")
local lp3 = nn.SpatialLPPooling(3, 3, 2, 2)
ref("lp3", lp3:forward(XPOS[1]), "F.lp_pool2d(XPOS[0], 3, 2)")

ref("reflect", nn.SpatialReflectionPadding(2, 1, 0, 3):forward(X), "F.pad(X, (2,1,0,3), mode='reflect')")
ref("reflect_neg", nn.SpatialReflectionPadding(-2, 1, 2, -1):forward(X),
  "F.pad(X[:, :, :-1, 2:], (0,1,2,0), mode='reflect')")
ref("replicate", nn.SpatialReplicationPadding(3, 0, 2, 1):forward(X[1]), "F.pad(X[0:1], (3,0,2,1), mode='replicate')[0]")
ref("replicate_neg", nn.SpatialReplicationPadding(1, -3, -2, 2):forward(X),
  "F.pad(X[:, :, 2:, :-3], (1,0,0,2), mode='replicate')")
ref("zeropad", nn.SpatialZeroPadding(-1, 2, 1, -2):forward(X), "F.pad(X, (-1,2,1,-2))")
ref("vreplicate", nn.VolumetricReplicationPadding(1, 2, 0, 1, 2, 1):forward(X5), "F.pad(X5, (1,2,0,1,2,1), mode='replicate')")
ref("vreplicate4", nn.VolumetricReplicationPadding(2, -1, 1, 0, -1, 1):forward(XV4),
  "F.pad(XV4[None, :, 1:, :, :-1], (2,0,1,0,0,1), mode='replicate')[0]")

ref("nearest", nn.SpatialUpSamplingNearest(3):forward(XS), "F.interpolate(XS, scale_factor=3, mode='nearest')")
ref("nearest3d", nn.SpatialUpSamplingNearest(2):forward(XS[1]), "F.interpolate(XS[0:1], scale_factor=2, mode='nearest')[0]")
ref("bilinear", nn.SpatialUpSamplingBilinear(2):forward(XS), "F.interpolate(XS, size=(8,10), mode='bilinear', align_corners=True)")
ref("bilinear_size", nn.SpatialUpSamplingBilinear({ oheight = 5, owidth = 9 }):forward(XS[2]),
  "F.interpolate(XS[1:2], size=(5,9), mode='bilinear', align_corners=True)[0]")
ref("upsampling_nearest4", nn.UpSampling(2):forward(XS), "F.interpolate(XS, scale_factor=2, mode='nearest')")
ref("upsampling_linear4", nn.UpSampling(3, "bilinear"):forward(XS), "F.interpolate(XS, size=(12,15), mode='bilinear', align_corners=True)")
ref("upsampling_nearest5", nn.UpSampling(3):forward(X5), "F.interpolate(X5, scale_factor=3, mode='nearest')")
ref("upsampling_linear5", nn.UpSampling(2, "trilinear"):forward(X5),
  "F.interpolate(X5, size=(6,8,10), mode='trilinear', align_corners=True)")
ref("upsampling_size5", nn.UpSampling({ odepth = 4, oheight = 5, owidth = 7 }, "linear"):forward(X5),
  "F.interpolate(X5, size=(4,5,7), mode='trilinear', align_corners=True)")

ref("pixelshuffle", nn.PixelShuffle(2):forward(XPS), "F.pixel_shuffle(XPS, 2)")
ref("featurelp", nn.FeatureLPPooling(3, 2, 2, true):forward(XFL), "XFL.unfold(1, 3, 2).pow(2).sum(-1).sqrt()")
ref("featurelp4", nn.FeatureLPPooling(4, 1, 4, false):forward(XFL[1]), "XFL[0].unfold(0, 4, 1).pow(4).sum(-1).pow(0.25)")

local REF   -- name -> PyTorch's tensor, or nil without PyTorch
if P.available() then
  local exprs = {}
  for i, name in ipairs(order) do exprs[i] = pyexpr[name] end
  local inputs = { X = X, XPOS = XPOS, X5 = X5, XV4 = XV4, XS = XS, XFR = XFR, XPS = XPS, XFL = XFL, FS = FS, FR = FR }
  local r = P.run(inputs, "", exprs)
  REF = {}
  for i, name in ipairs(order) do REF[name] = r[i] end
end

-- the PyTorch references of the names given
local function against_pytorch(title, names, tol)
  if not REF then T.skip(title, P.why()); return end
  T.test(title .. ": forward against PyTorch", function()
    for _, name in ipairs(names) do near(ours[name], torch.DoubleTensor(REF[name]:totable()), tol or 1e-12, name) end
  end)
end

---------------------------------------------------------------------------------------------
-- max pooling

against_pytorch("SpatialMaxPooling", { "maxpool", "maxpool_idx", "maxpool3d" })
against_pytorch("SpatialDilatedMaxPooling", { "dilated", "dilated_idx" })

T.test("SpatialMaxPooling: output sizes, ceil/floor, 1-based indices, backward", function()
  local m = nn.SpatialMaxPooling(2, 2)
  local x = torch.Tensor({ { { 1, 5, 2 }, { 3, 4, 9 }, { 0, 7, 8 } } })
  local y = m:forward(x)
  T.eq(sizes(y), { 1, 1, 1 })
  T.eq(y[1][1][1], 5); T.eq(m.indices[1][1][1], 2)
  T.eq(torch.type(m.indices), "torch.LongTensor")
  m:ceil()
  y = m:forward(x)
  T.eq(sizes(y), { 1, 2, 2 })
  T.eq(y:view(4):totable(), { 5, 9, 7, 8 })
  T.eq(m.indices:view(4):totable(), { 2, 6, 8, 9 })
  local gi = m:backward(x, torch.Tensor({ { { 1, 2 }, { 3, 4 } } }))
  T.eq(gi:view(9):totable(), { 0, 1, 0, 0, 0, 2, 0, 3, 4 })
  T.eq(m.iheight, 3); T.eq(m.iwidth, 3)
  T.eq(tostring(nn.SpatialMaxPooling(3, 2, 1, 1, 1, 0)), "nn.SpatialMaxPooling(3x2, 1,1, 1,0)")
  T.eq(tostring(nn.SpatialDilatedMaxPooling(3, 2, 1, 1, 1, 0, 2, 2)), "nn.SpatialDilatedMaxPooling(3x2, 1,1, 1,0, 2,2)")
end)

T.test("SpatialMaxPooling, SpatialDilatedMaxPooling: Jacobian, batch, float, testIO", function()
  jacobian(nn.SpatialMaxPooling(2, 3, 2, 1, 1, 1):ceil(), torch.rand(2, 5, 6))
  jacobian(nn.SpatialMaxPooling(3, 2, 2, 2, 1, 0), torch.rand(2, 2, 5, 6))
  jacobian(nn.SpatialDilatedMaxPooling(2, 2, 1, 1, 1, 0, 2, 2):ceil(), torch.rand(2, 2, 5, 6))
  io_same(nn.SpatialMaxPooling(2, 2), torch.rand(2, 4, 6))
  local m = nn.SpatialMaxPooling(2, 2):float()
  local y = m:forward(torch.rand(2, 4, 4):float())
  T.eq(torch.type(y), "torch.FloatTensor"); T.eq(torch.type(m.indices), "torch.LongTensor")
  T.eq(torch.type(m:backward(torch.rand(2, 4, 4):float(), y)), "torch.FloatTensor")
end)

T.test("SpatialMaxPooling: bad input names the class", function()
  raises("nn.SpatialMaxPooling", function() nn.SpatialMaxPooling(2, 2):forward(torch.rand(4, 4)) end)
  raises("nn.SpatialMaxPooling", function() nn.SpatialMaxPooling(2, 2):forward(torch.rand(1, 1, 2, 3, 4, 5)) end)
  raises("nn.SpatialMaxPooling", function() nn.SpatialMaxPooling(5, 5):forward(torch.rand(1, 3, 3)) end)
  raises("nn.SpatialMaxPooling", function() nn.SpatialMaxPooling(2, 2, 1, 1, 2, 0):forward(torch.rand(1, 6, 6)) end)
  raises("nn.SpatialMaxPooling", function() nn.SpatialMaxPooling("a", 2) end)
  raises("nn.SpatialMaxPooling", function() nn.SpatialMaxPooling(0, 2) end)
  local m = nn.SpatialMaxPooling(2, 2)
  m:forward(torch.rand(1, 4, 4))
  raises("nn.SpatialMaxPooling", function() m:backward(torch.rand(1, 4, 4), torch.rand(1, 3, 2)) end)
  raises("nn.SpatialDilatedMaxPooling", function() nn.SpatialDilatedMaxPooling(2, 2, 1, 1, 0, 0, 4, 4):forward(torch.rand(1, 3, 3)) end)
  raises("nn.SpatialDilatedMaxPooling", function() nn.SpatialDilatedMaxPooling(2, 2, 1, 1, 0, 0, 0) end)
end)

T.test("SpatialMaxUnpooling: values back where the maxima were, Jacobian, errors", function()
  local pool = nn.SpatialMaxPooling(2, 2, 2, 2, 1, 1):ceil()
  local unpool = nn.SpatialMaxUnpooling(pool)
  local x = torch.rand(2, 3, 5, 7)
  local y = pool:forward(x)
  local u = unpool:forward(y)
  T.ok(u:isSameSizeAs(x))
  -- u is x where x was its window's maximum, 0 elsewhere; maxpool of u is y again
  local mask = u:ne(0)
  T.eq(mask:sum(), y:nElement())
  near(u:maskedSelect(mask), x:maskedSelect(mask), 0, "kept values")
  near(nn.SpatialMaxPooling(2, 2, 2, 2, 1, 1):ceil():forward(u), y, 0, "pooled again")
  jacobian(unpool, y:clone())
  T.eq(tostring(unpool), "nn.SpatialMaxUnpooling associated to nn.SpatialMaxPooling(2x2, 2,2, 1,1)")
  raises("nn.SpatialMaxUnpooling", function() nn.SpatialMaxUnpooling(nn.SpatialMaxPooling(3, 3, 2, 2)) end)
  raises("nn.SpatialMaxUnpooling", function() nn.SpatialMaxUnpooling(nn.Identity()) end)
  raises("nn.SpatialMaxUnpooling", function() unpool:forward(torch.rand(2, 3, 2, 2)) end)
  raises("nn.SpatialMaxUnpooling", function() nn.SpatialMaxUnpooling(nn.SpatialMaxPooling(2, 2)):forward(torch.rand(1, 2, 2)) end)
end)

---------------------------------------------------------------------------------------------
-- fractional max pooling

against_pytorch("SpatialFractionalMaxPooling", { "fractional", "fractional_idx", "fractional_ratio" })

T.test("SpatialFractionalMaxPooling: sizes, fixed and new regions, Jacobian, errors", function()
  local m = nn.SpatialFractionalMaxPooling(2, 2, 0.5, 0.7)
  local y = m:forward(torch.rand(3, 10, 9))
  T.eq(sizes(y), { 3, 7, 4 })
  T.eq(sizes(m.randomSamples), { 1, 3, 2 })
  -- regions redrawn per forward unless fixed
  local s1 = m.randomSamples:clone()
  m:forward(torch.rand(3, 10, 9))
  T.ok((m.randomSamples - s1):abs():max() > 0)
  m:fixPoolingRegions()
  s1 = m.randomSamples:clone()
  m:forward(torch.rand(3, 10, 9))
  T.eq((m.randomSamples - s1):abs():max(), 0)
  -- every output is the maximum of a 2x2 window of the input
  local x = torch.rand(1, 8, 8)
  local f = nn.SpatialFractionalMaxPooling(2, 2, 5, 5):fixPoolingRegions()
  local out = f:forward(x)
  for i = 1, 25 do
    local p = f.indices:view(25)[i] - 1
    T.eq(out:view(25)[i], x:view(64)[p + 1])
  end
  jacobian(nn.SpatialFractionalMaxPooling(2, 3, 3, 2):fixPoolingRegions(), torch.rand(2, 2, 6, 7))
  jacobian(nn.SpatialFractionalMaxPooling(3, 2, 0.5, 0.5):fixPoolingRegions(), torch.rand(2, 7, 8))
  T.eq(torch.type(nn.SpatialFractionalMaxPooling(2, 2, 2, 2):float():forward(torch.rand(1, 6, 6):float())), "torch.FloatTensor")
  raises("nn.SpatialFractionalMaxPooling", function() nn.SpatialFractionalMaxPooling(1, 2, 2, 2) end)
  raises("nn.SpatialFractionalMaxPooling", function() nn.SpatialFractionalMaxPooling(2, 2, 0.5, 1.5) end)
  raises("nn.SpatialFractionalMaxPooling", function() nn.SpatialFractionalMaxPooling(2, 2, 5, 5):forward(torch.rand(1, 5, 5)) end)
  raises("nn.SpatialFractionalMaxPooling", function() nn.SpatialFractionalMaxPooling(2, 2, 2, 2):forward(torch.rand(5, 5)) end)
  raises("nn.SpatialFractionalMaxPooling", function() nn.SpatialFractionalMaxPooling(2, 2, 0.1, 0.1):forward(torch.rand(1, 5, 5)) end)
  raises("nn.SpatialFractionalMaxPooling", function()
    nn.SpatialFractionalMaxPooling(2, 2, 2, 2):updateGradInput(torch.rand(1, 5, 5), torch.rand(1, 2, 2))
  end)
end)

---------------------------------------------------------------------------------------------
-- average, Lp and adaptive pooling

against_pytorch("SpatialAveragePooling", { "avg_ceil_exclude", "avg_include", "avg_stride1" })
against_pytorch("SpatialLPPooling", { "lp2", "lp3" }, 1e-10)
against_pytorch("SpatialAdaptiveMaxPooling", { "adaptive_max", "adaptive_max_idx" })
against_pytorch("SpatialAdaptiveAveragePooling", { "adaptive_avg" })

T.test("SpatialAveragePooling: values, divide, old models, Jacobian, errors", function()
  local x = torch.Tensor({ { { 1, 2, 3 }, { 4, 5, 6 } } })
  local m = nn.SpatialAveragePooling(2, 2)
  T.eq(m:forward(x):view(2):totable(), { 3, 4 })
  m.divide = false
  T.eq(m:forward(x):view(2):totable(), { 12, 16 })
  T.eq(m:backward(x, torch.Tensor({ { { 1, 1 } } })):view(6):totable(), { 1, 2, 1, 1, 2, 1 })
  -- a model saved before ceil_mode, count_include_pad and padding existed
  local old = nn.SpatialAveragePooling(2, 2)
  old.ceil_mode, old.count_include_pad, old.padW, old.padH = nil, nil, nil, nil
  T.eq(old:forward(x):view(2):totable(), { 3, 4 })
  for _, ceil in ipairs({ true, false }) do
    for _, inc in ipairs({ true, false }) do
      local a = nn.SpatialAveragePooling(3, 2, 2, 1, 1, 1)
      if ceil then a:ceil() end
      if not inc then a:setCountExcludePad() end
      jacobian(a, torch.rand(2, 2, 5, 6))
    end
  end
  io_same(nn.SpatialAveragePooling(2, 2, 2, 2), torch.rand(2, 4, 4))
  T.eq(tostring(nn.SpatialAveragePooling(3, 2, 1, 1, 1, 0)), "nn.SpatialAveragePooling(3x2, 1,1, 1,0)")
  raises("nn.SpatialAveragePooling", function() nn.SpatialAveragePooling(2, 2):forward(torch.rand(5)) end)
  raises("nn.SpatialAveragePooling", function() nn.SpatialAveragePooling(4, 4):forward(torch.rand(1, 3, 3)) end)
  raises("nn.SpatialAveragePooling", function() nn.SpatialAveragePooling(2, 2, 1, 1, 3):forward(torch.rand(1, 5, 5)) end)
  raises("nn.SpatialAveragePooling", function() nn.SpatialAveragePooling(2.5, 2) end)
end)

T.test("SpatialLPPooling: p-norm of windows, Jacobian, errors", function()
  local x = torch.Tensor({ { { 3, 4 }, { 0, 0 } } })
  T.near(nn.SpatialLPPooling(1, 2, 2, 2):forward(x)[1][1][1], 5, 1e-12)
  T.near(nn.SpatialLPPooling(1, 1, 2, 2):forward(x)[1][1][1], 7, 1e-12)
  jacobian(nn.SpatialLPPooling(2, 2, 2, 3, 1, 2), torch.rand(2, 5, 6))
  jacobian(nn.SpatialLPPooling(2, 3, 2, 2), torch.rand(2, 2, 4, 4), 1e-6, "p=3", 0.5, 1.5)
  io_same(nn.SpatialLPPooling(2, 2, 2, 2), torch.rand(2, 4, 4):add(0.5))
  raises("nn.SpatialLPPooling", function() nn.SpatialLPPooling(3, 2, 2, 2):forward(torch.rand(2, 4, 4)) end)
  raises("nn.SpatialLPPooling", function() nn.SpatialLPPooling(3, 2, 2, 2):forward(torch.rand(4, 4)) end)
  raises("nn.SpatialLPPooling", function() nn.SpatialLPPooling(3, "x", 2, 2) end)
end)

T.test("SpatialAdaptiveMaxPooling, SpatialAdaptiveAveragePooling: windows, Jacobian, errors", function()
  -- 5 inputs to 3 outputs: windows [1,2], [2,4], [4,5]
  local x = torch.Tensor({ { { 1, 5, 2, 0, 3 } } })
  T.eq(nn.SpatialAdaptiveMaxPooling(3, 1):forward(x):view(3):totable(), { 5, 5, 3 })
  T.eq(nn.SpatialAdaptiveAveragePooling(3, 1):forward(x):view(3):totable(), { 3, 7 / 3, 1.5 })
  jacobian(nn.SpatialAdaptiveMaxPooling(3, 2), torch.rand(2, 5, 7))
  jacobian(nn.SpatialAdaptiveMaxPooling(2, 3), torch.rand(2, 2, 5, 4))
  jacobian(nn.SpatialAdaptiveAveragePooling(3, 2), torch.rand(2, 5, 7))
  jacobian(nn.SpatialAdaptiveAveragePooling(4, 4), torch.rand(2, 1, 3, 6))
  io_same(nn.SpatialAdaptiveMaxPooling(2, 2), torch.rand(2, 5, 5))
  io_same(nn.SpatialAdaptiveAveragePooling(2, 2), torch.rand(2, 5, 5))
  for _, cls in ipairs({ "SpatialAdaptiveMaxPooling", "SpatialAdaptiveAveragePooling" }) do
    raises("nn." .. cls, function() nn[cls](2, 2):forward(torch.rand(5, 5)) end)
    raises("nn." .. cls, function() nn[cls](0, 2) end)
    local m = nn[cls](2, 2)
    m:forward(torch.rand(1, 4, 4))
    raises("nn." .. cls, function() m:backward(torch.rand(1, 4, 4), torch.rand(1, 3, 3)) end)
  end
end)

---------------------------------------------------------------------------------------------
-- padding

against_pytorch("SpatialReflectionPadding", { "reflect", "reflect_neg" })
against_pytorch("SpatialReplicationPadding", { "replicate", "replicate_neg" })
against_pytorch("SpatialZeroPadding", { "zeropad" })
against_pytorch("VolumetricReplicationPadding", { "vreplicate", "vreplicate4" })

T.test("padding: small cases by hand, Jacobians (negative pads crop), errors", function()
  local x = torch.Tensor({ { { 1, 2, 3 } } })
  T.eq(nn.SpatialReflectionPadding(2, 1, 0, 0):forward(x):view(6):totable(), { 3, 2, 1, 2, 3, 2 })
  T.eq(nn.SpatialReplicationPadding(2, 1, 0, 0):forward(x):view(6):totable(), { 1, 1, 1, 2, 3, 3 })
  T.eq(nn.SpatialZeroPadding(1, -1, 0, 0):forward(x):view(3):totable(), { 0, 1, 2 })
  T.eq(sizes(nn.SpatialZeroPadding(1):forward(x)), { 1, 3, 5 })
  jacobian(nn.SpatialReflectionPadding(2, -1, 1, -2), torch.rand(2, 2, 6, 5), 1e-7)
  jacobian(nn.SpatialReplicationPadding(-1, 3, -2, 1), torch.rand(2, 6, 5), 1e-7)
  jacobian(nn.SpatialZeroPadding(-1, 2, 1, -2), torch.rand(2, 2, 5, 4), 1e-7)
  jacobian(nn.VolumetricReplicationPadding(1, -1, 2, 0, -1, 2), torch.rand(2, 3, 4, 4), 1e-7)
  jacobian(nn.VolumetricReplicationPadding(1), torch.rand(1, 2, 2, 2, 3), 1e-7)
  io_same(nn.SpatialReflectionPadding(1, 2, 1, 0), torch.rand(2, 4, 4))
  T.eq(tostring(nn.SpatialReflectionPadding(1, 2, 3, 4)), "nn.SpatialReflectionPadding(l=1, r=2, t=3, b=4)")
  T.eq(tostring(nn.VolumetricReplicationPadding(1)), "nn.VolumetricReplicationPadding(left=1, right=1, top=1, bottom=1, front=1, back=1)")
  for _, cls in ipairs({ "SpatialReflectionPadding", "SpatialReplicationPadding", "SpatialZeroPadding" }) do
    raises("nn." .. cls, function() nn[cls](1):forward(torch.rand(4, 4)) end)
    raises("nn." .. cls, function() nn[cls]("a") end)
    raises("nn." .. cls, function() nn[cls](-3, -3, 0, 0):forward(torch.rand(1, 4, 4)) end)
    local m = nn[cls](1)
    m:forward(torch.rand(1, 4, 4))
    raises("nn." .. cls, function() m:backward(torch.rand(1, 4, 4), torch.rand(1, 6, 5)) end)
  end
  raises("nn.SpatialReflectionPadding", function() nn.SpatialReflectionPadding(4, 0, 0, 0):forward(torch.rand(1, 4, 4)) end)
  raises("nn.VolumetricReplicationPadding", function() nn.VolumetricReplicationPadding(1):forward(torch.rand(4, 4, 4)) end)
  local v = nn.VolumetricReplicationPadding(1)
  v:forward(torch.rand(1, 2, 2, 2))
  raises("nn.VolumetricReplicationPadding", function() v:backward(torch.rand(1, 2, 2, 2), torch.rand(1, 4, 4, 3)) end)
end)

---------------------------------------------------------------------------------------------
-- up-sampling, PixelShuffle

against_pytorch("SpatialUpSamplingNearest", { "nearest", "nearest3d" })
against_pytorch("SpatialUpSamplingBilinear", { "bilinear", "bilinear_size" }, 1e-12)
against_pytorch("UpSampling", { "upsampling_nearest4", "upsampling_linear4", "upsampling_nearest5",
  "upsampling_linear5", "upsampling_size5" }, 1e-12)
against_pytorch("PixelShuffle", { "pixelshuffle" })

T.test("up-sampling: sizes, fields, Jacobians, errors", function()
  local m = nn.SpatialUpSamplingNearest(2)
  T.eq(m:forward(torch.Tensor({ { { 1, 2 } } })):view(8):totable(), { 1, 1, 2, 2, 1, 1, 2, 2 })
  T.eq(m.outputSize[2], 2); T.eq(m.outputSize[3], 4)
  jacobian(nn.SpatialUpSamplingNearest(2), torch.rand(2, 3, 2))
  jacobian(nn.SpatialUpSamplingBilinear(3), torch.rand(1, 2, 2, 3))
  jacobian(nn.SpatialUpSamplingBilinear({ oheight = 4, owidth = 5 }), torch.rand(2, 3, 2))
  jacobian(nn.UpSampling(2, "linear"), torch.rand(1, 2, 2, 3))
  jacobian(nn.UpSampling(2), torch.rand(1, 1, 2, 2, 3))
  jacobian(nn.UpSampling(2, "trilinear"), torch.rand(1, 1, 2, 2, 3))
  jacobian(nn.UpSampling({ odepth = 3, oheight = 3, owidth = 2 }, "linear"), torch.rand(1, 1, 2, 2, 3))
  io_same(nn.UpSampling(2, "linear"), torch.rand(1, 2, 3, 3))
  T.eq(tostring(nn.UpSampling(2, "linear")), "nn.UpSampling(2x, linear)")
  T.eq(tostring(nn.SpatialUpSamplingBilinear({ oheight = 4, owidth = 5 })), "nn.SpatialUpSamplingBilinear(4, 5)")
  raises("nn.SpatialUpSamplingNearest", function() nn.SpatialUpSamplingNearest(1.5) end)
  raises("nn.SpatialUpSamplingNearest", function() nn.SpatialUpSamplingNearest(0) end)
  raises("nn.SpatialUpSamplingNearest", function() nn.SpatialUpSamplingNearest(2):forward(torch.rand(3, 3)) end)
  raises("nn.SpatialUpSamplingNearest", function()
    local n = nn.SpatialUpSamplingNearest(2); n:forward(torch.rand(1, 2, 2)); n:backward(torch.rand(1, 2, 2), torch.rand(1, 3, 4))
  end)
  raises("nn.SpatialUpSamplingBilinear", function() nn.SpatialUpSamplingBilinear(2.5) end)
  raises("nn.SpatialUpSamplingBilinear", function() nn.SpatialUpSamplingBilinear(2):forward(torch.rand(1, 1, 1, 2, 2)) end)
  raises("nn.UpSampling", function() nn.UpSampling({ oheight = 2, owidth = 2 }) end)
  raises("nn.UpSampling", function() nn.UpSampling({ oheight = 2 }, "linear") end)
  raises("nn.UpSampling", function() nn.UpSampling(2):forward(torch.rand(2, 3, 3)) end)
  raises("nn.UpSampling", function() nn.UpSampling({ oheight = 2, owidth = 2 }, "linear"):forward(torch.rand(1, 1, 2, 2, 2)) end)
end)

T.test("PixelShuffle: the shuffle's formula, backward is the inverse, errors", function()
  local r = 3
  local x = torch.rand(2 * r * r, 2, 3)
  local ps = nn.PixelShuffle(r)
  local y = ps:forward(x)
  T.eq(sizes(y), { 2, 6, 9 })
  for c = 1, 2 do for h = 1, 6 do for w = 1, 9 do
    local ch = (c - 1) * r * r + ((h - 1) % r) * r + ((w - 1) % r) + 1
    T.eq(y[c][h][w], x[ch][(h - 1) // r + 1][(w - 1) // r + 1])
  end end end
  near(ps:backward(x, y), x, 0, "backward of the output")
  jacobian(nn.PixelShuffle(2), torch.rand(1, 4, 2, 2))
  io_same(nn.PixelShuffle(2), torch.rand(4, 2, 3))
  raises("nn.PixelShuffle", function() nn.PixelShuffle(2):forward(torch.rand(3, 2, 2)) end)
  raises("nn.PixelShuffle", function() nn.PixelShuffle(2):forward(torch.rand(4, 2)) end)
  raises("nn.PixelShuffle", function() nn.PixelShuffle(0) end)
end)

---------------------------------------------------------------------------------------------
-- FeatureLPPooling

against_pytorch("FeatureLPPooling", { "featurelp", "featurelp4" }, 1e-12)

T.test("FeatureLPPooling: values by hand, zero output, Jacobians, float, errors", function()
  local x = torch.Tensor({ 1, 2, 3, 4, 5 })
  T.eq(nn.FeatureLPPooling(2, 1, 1):forward(x):totable(), { 3, 5, 7, 9 })
  local y = nn.FeatureLPPooling(3, 2, 2):forward(x)
  T.near(y[1], math.sqrt(14), 1e-12); T.near(y[2], math.sqrt(50), 1e-12)
  -- a zero output gives no gradient (the derivative is taken as 0 there)
  local z = nn.FeatureLPPooling(3, 1, 2)
  z:forward(torch.zeros(6))
  T.eq(z:backward(torch.zeros(6), torch.ones(4)):abs():max(), 0)
  for _, p in ipairs({ 1, 2, 4 }) do
    jacobian(nn.FeatureLPPooling(3, 2, p, false), torch.rand(7, 2), 1e-5, "p=" .. p)
    jacobian(nn.FeatureLPPooling(2, 1, p, true), torch.rand(2, 5, 2, 2), 1e-5, "batch p=" .. p)
  end
  local f = nn.FeatureLPPooling(2, 2, 2, true):float()
  T.eq(torch.type(f:forward(torch.rand(2, 6):float())), "torch.FloatTensor")
  raises("nn.FeatureLPPooling", function() nn.FeatureLPPooling(1, 1, 2) end)
  raises("nn.FeatureLPPooling", function() nn.FeatureLPPooling(2, 5, 2) end)
  raises("nn.FeatureLPPooling", function() nn.FeatureLPPooling(3, 1, 2):forward(torch.rand(2)) end)
  raises("nn.FeatureLPPooling", function() nn.FeatureLPPooling(2, 1, 2, false):forward(torch.rand(2, 2, 2, 2)) end)
  raises("nn.FeatureLPPooling", function() nn.FeatureLPPooling(2, 1, 2, true):forward(torch.rand(4)) end)
end)

---------------------------------------------------------------------------------------------
-- reductions

T.test("Sum, Mean: dims, nInputDims, sizeAverage, squeeze, Jacobian, errors", function()
  local x = torch.Tensor({ { 1, 2, 3 }, { 4, 5, 6 } })
  T.eq(nn.Sum(1):forward(x):totable(), { 5, 7, 9 })
  T.eq(nn.Sum(2):forward(x):totable(), { 6, 15 })
  T.eq(nn.Sum(-1):forward(x):totable(), { 6, 15 })
  T.eq(nn.Sum(1, 1):forward(x):totable(), { 6, 15 })          -- a batch of vectors
  T.eq(nn.Sum(1, 2):forward(x):totable(), { 5, 7, 9 })
  T.eq(nn.Sum(1, 1, true):forward(x):totable(), { 2, 5 })
  T.eq(nn.Sum(1, nil, nil, false):forward(x):totable(), { { 5, 7, 9 } })
  T.eq(nn.Sum(1):forward(torch.Tensor({ 1, 2, 3 })):totable(), { 6 })
  T.eq(nn.Mean(2):forward(x):totable(), { 2, 5 })
  T.eq(nn.Mean(1, 1):forward(x):totable(), { 2, 5 })
  local s = nn.Sum(2)
  s:forward(x)
  T.eq(s:backward(x, torch.Tensor({ 1, 2 })):totable(), { { 1, 1, 1 }, { 2, 2, 2 } })
  local m = nn.Mean(1)
  m:forward(x)
  T.eq(m:backward(x, torch.Tensor({ 2, 4, 6 })):totable(), { { 1, 2, 3 }, { 1, 2, 3 } })
  -- the output changes shape between calls (a squeezed view before)
  T.eq(sizes(s:forward(torch.rand(4, 3, 2))), { 4, 2 })
  for d = 1, 3 do
    jacobian(nn.Sum(d), torch.rand(3, 4, 2))
    jacobian(nn.Mean(d), torch.rand(3, 4, 2))
  end
  jacobian(nn.Sum(1, nil, true, false), torch.rand(3, 4))
  io_same(nn.Sum(2), torch.rand(3, 4))
  T.ok(torch.isTypeOf(nn.Mean(1), "nn.Sum"))
  raises("nn.Sum", function() nn.Sum(3):forward(x) end)
  raises("nn.Sum", function() nn.Sum(1, nil, nil, "yes") end)
  raises("nn.Sum", function() nn.Sum(1.5) end)
  raises("nn.Sum", function() nn.Sum(1):forward({}) end)
  raises("nn.Sum", function() s:forward(x); s:backward(x, torch.rand(5)) end)
  raises("nn.Mean", function() nn.Mean(4):forward(x) end)
end)

T.test("Max, Min: values, the gradient to the chosen element, Jacobian, errors", function()
  local x = torch.Tensor({ { 1, 7, 3 }, { 9, 5, 9 } })
  local mx = nn.Max(2)
  T.eq(mx:forward(x):totable(), { 7, 9 })
  T.eq(mx:backward(x, torch.Tensor({ 1, 2 })):totable(), { { 0, 1, 0 }, { 2, 0, 0 } })
  local mn = nn.Min(1)
  T.eq(mn:forward(x):totable(), { 1, 5, 3 })
  T.eq(mn:backward(x, torch.Tensor({ 1, 2, 3 })):totable(), { { 1, 0, 3 }, { 0, 2, 0 } })
  T.eq(nn.Max(1, 1):forward(x):totable(), { 7, 9 })
  T.eq(nn.Min(-1):forward(torch.Tensor({ 4, 2, 8 })):totable(), { 2 })
  T.eq(sizes(mx:forward(torch.rand(2, 3, 4))), { 2, 4 })
  for d = 1, 3 do
    jacobian(nn.Max(d), torch.rand(3, 4, 2))
    jacobian(nn.Min(d), torch.rand(3, 4, 2))
  end
  io_same(nn.Max(1), torch.rand(3, 4))
  local f = nn.Max(1):float()
  T.eq(torch.type(f:forward(torch.rand(3, 2):float())), "torch.FloatTensor")
  T.eq(torch.type(f:backward(torch.rand(3, 2):float(), torch.rand(2):float())), "torch.FloatTensor")
  raises("nn.Max", function() nn.Max(3):forward(x) end)
  raises("nn.Min", function() nn.Min(0):forward(x) end)
  raises("nn.Max", function() mx:forward(x); mx:backward(x, torch.rand(3)) end)
end)

---------------------------------------------------------------------------------------------
-- pair modules: MM, MV, DotProduct, CosineDistance, PairwiseDistance

-- plain Lua matrix products of nested tables
local function matmul(a, b)
  local r = {}
  for i = 1, #a do
    r[i] = {}
    for j = 1, #b[1] do
      local s = 0
      for k = 1, #b do s = s + a[i][k] * b[k][j] end
      r[i][j] = s
    end
  end
  return r
end
local function tr(a)
  local r = {}
  for j = 1, #a[1] do r[j] = {} for i = 1, #a do r[j][i] = a[i][j] end end
  return r
end

T.test("MM: the four transpose modes, batches, gradients, errors", function()
  for _, mode in ipairs({ { false, false }, { true, false }, { false, true }, { true, true } }) do
    local ta, tb = mode[1], mode[2]
    local A = ta and torch.randn(2, 4, 3) or torch.randn(2, 3, 4)
    local B = tb and torch.randn(2, 5, 4) or torch.randn(2, 4, 5)
    local mm = nn.MM(ta, tb)
    local y = mm:forward({ A, B })
    local G = torch.randn(2, 3, 5)
    local gA, gB = table.unpack(mm:backward({ A, B }, G))
    for b = 1, 2 do
      local a = ta and tr(A[b]:totable()) or A[b]:totable()
      local bb = tb and tr(B[b]:totable()) or B[b]:totable()
      near(y[b], torch.Tensor(matmul(a, bb)), 1e-12, "forward")
      -- dC/dA' = G B'^T, dC/dB' = A'^T G, transposed back where A or B was
      local ga = matmul(G[b]:totable(), tr(bb))
      local gb = matmul(tr(a), G[b]:totable())
      near(gA[b], torch.Tensor(ta and tr(ga) or ga), 1e-12, "gradA")
      near(gB[b], torch.Tensor(tb and tr(gb) or gb), 1e-12, "gradB")
    end
    -- unbatched
    local y2 = nn.MM(ta, tb):forward({ A[1], B[1] })
    near(y2, y[1], 1e-12, "2D")
  end
  raises("nn.MM", function() nn.MM():forward({ torch.rand(2, 3), torch.rand(4, 2) }) end)
  raises("nn.MM", function() nn.MM():forward({ torch.rand(2, 3) }) end)
  raises("nn.MM", function() nn.MM():forward({ torch.rand(2, 3, 4), torch.rand(3, 4, 2) }) end)
  raises("nn.MM", function() nn.MM():forward({ torch.rand(2, 3), torch.rand(2, 3, 4) }) end)
  raises("nn.MM", function() nn.MM():forward({ torch.rand(3), torch.rand(3) }) end)
end)

T.test("MV: plain and transposed, batches, gradients, errors", function()
  for _, trans in ipairs({ false, true }) do
    local M = trans and torch.randn(3, 4, 5) or torch.randn(3, 5, 4)
    local v = torch.randn(3, 4)
    local mv = nn.MV(trans)
    local y = mv:forward({ M, v })
    T.eq(sizes(y), { 3, 5 })
    local g = torch.randn(3, 5)
    local gM, gv = table.unpack(mv:backward({ M, v }, g))
    for b = 1, 3 do
      local m = trans and tr(M[b]:totable()) or M[b]:totable()
      local col = {}
      for i = 1, 4 do col[i] = { v[b][i] } end
      near(y[b], torch.Tensor(matmul(m, col)):view(5), 1e-12, "forward")
      local gcol = {}
      for i = 1, 5 do gcol[i] = { g[b][i] } end
      local gm = matmul(gcol, { v[b]:totable() })       -- g v^T
      near(gM[b], torch.Tensor(trans and tr(gm) or gm), 1e-12, "gradM")
      near(gv[b], torch.Tensor(matmul(tr(m), gcol)):view(4), 1e-12, "gradv")
    end
    local one = nn.MV(trans)
    near(one:forward({ M[2], v[2] }), y[2], 1e-12, "1D forward")
    local gM1, gv1 = table.unpack(one:backward({ M[2], v[2] }, g[2]))
    near(gM1, gM[2], 1e-12, "1D gradM"); near(gv1, gv[2], 1e-12, "1D gradv")
  end
  raises("nn.MV", function() nn.MV("yes") end)
  raises("nn.MV", function() nn.MV():forward({ torch.rand(3, 4), torch.rand(5) }) end)
  raises("nn.MV", function() nn.MV():forward({ torch.rand(3, 4), torch.rand(2, 4) }) end)
  raises("nn.MV", function() nn.MV():forward({ torch.rand(2, 3, 4), torch.rand(3, 4) }) end)
  raises("nn.MV", function() nn.MV():forward(torch.rand(3, 4)) end)
end)

-- a module of a pair, seen as a module of one tensor (2 x ...) for the Jacobian
local function as_pair(m)
  local w = nn.Module()
  function w:updateOutput(x) self.output = m:forward({ x[1], x[2] }); return self.output end
  function w:updateGradInput(x, g)
    local gi = m:updateGradInput({ x[1], x[2] }, g)
    self.gradInput = torch.cat(gi[1]:view(1, table.unpack(sizes(x[1]))), gi[2]:view(1, table.unpack(sizes(x[2]))), 1)
    return self.gradInput
  end
  return w
end

T.test("DotProduct: values, gradients, Jacobian, errors", function()
  local a, b = torch.Tensor({ 1, 2, 3 }), torch.Tensor({ 4, 5, 6 })
  local d = nn.DotProduct()
  T.eq(d:forward({ a, b }):totable(), { 32 })
  local ga, gb = table.unpack(d:backward({ a, b }, torch.Tensor({ 2 })))
  T.eq(ga:totable(), { 8, 10, 12 }); T.eq(gb:totable(), { 2, 4, 6 })
  local A, B = torch.rand(4, 3), torch.rand(4, 3)
  local y = nn.DotProduct():forward({ A, B })
  for i = 1, 4 do T.near(y[i], A[i]:dot(B[i]), 1e-12) end
  jacobian(as_pair(nn.DotProduct()), torch.rand(2, 5))
  jacobian(as_pair(nn.DotProduct()), torch.rand(2, 3, 4))
  raises("nn.DotProduct", function() nn.DotProduct():forward({ torch.rand(3), torch.rand(4) }) end)
  raises("nn.DotProduct", function() nn.DotProduct():forward(torch.rand(3)) end)
  raises("nn.DotProduct", function() nn.DotProduct():forward({ torch.rand(2, 2, 2), torch.rand(2, 2, 2) }) end)
end)

T.test("CosineDistance: values, Jacobian, errors", function()
  local a, b = torch.Tensor({ 1, 0, 1 }), torch.Tensor({ 0, 2, 2 })
  T.near(nn.CosineDistance():forward({ a, b })[1], 2 / (math.sqrt(2) * math.sqrt(8)), 1e-10)
  local A, B = torch.rand(4, 3), torch.rand(4, 3)
  local y = nn.CosineDistance():forward({ A, B })
  for i = 1, 4 do T.near(y[i], A[i]:dot(B[i]) / (A[i]:norm() * B[i]:norm()), 1e-10) end
  jacobian(as_pair(nn.CosineDistance()), torch.rand(2, 5))
  jacobian(as_pair(nn.CosineDistance()), torch.rand(2, 3, 4))
  raises("nn.CosineDistance", function() nn.CosineDistance():forward({ torch.rand(3), torch.rand(2) }) end)
  raises("nn.CosineDistance", function() nn.CosineDistance():forward({ torch.rand(3) }) end)
end)

T.test("PairwiseDistance: p-norms, batches, Jacobians, errors", function()
  local a, b = torch.Tensor({ 1, 2, 3 }), torch.Tensor({ 4, 0, 3 })
  T.near(nn.PairwiseDistance(1):forward({ a, b })[1], 5, 1e-12)
  T.near(nn.PairwiseDistance():forward({ a, b })[1], math.sqrt(13), 1e-12)
  T.near(nn.PairwiseDistance(3):forward({ a, b })[1], (27 + 8) ^ (1 / 3), 1e-12)
  local A, B = torch.rand(4, 3), torch.rand(4, 3)
  for _, p in ipairs({ 1, 1.5, 2, 3 }) do
    local y = nn.PairwiseDistance(p):forward({ A, B })
    for i = 1, 4 do
      local s = 0
      for j = 1, 3 do s = s + math.abs(A[i][j] - B[i][j]) ^ p end
      T.near(y[i], s ^ (1 / p), 1e-12)
    end
    jacobian(as_pair(nn.PairwiseDistance(p)), torch.rand(2, 4), 1e-4, "p=" .. p)
    jacobian(as_pair(nn.PairwiseDistance(p)), torch.rand(2, 3, 4), 1e-4, "batch p=" .. p)
  end
  raises("nn.PairwiseDistance", function() nn.PairwiseDistance(0) end)
  raises("nn.PairwiseDistance", function() nn.PairwiseDistance():forward({ torch.rand(2, 2, 2), torch.rand(2, 2, 2) }) end)
  raises("nn.PairwiseDistance", function() nn.PairwiseDistance():forward({ torch.rand(3), torch.rand(4) }) end)
end)

T.done()
