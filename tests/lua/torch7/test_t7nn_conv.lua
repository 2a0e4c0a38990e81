-- test_t7nn_conv.lua — Torch7 mode's nn (lib/t7nn/convolution.lua): the 2-D and Temporal
-- convolutions, sub-samplings and poolings. Forward values are checked against plain Lua
-- loops over the definitions (Torch7's documentation of each class); backward passes
-- against finite differences with nn.Jacobian, in float64; bad inputs and constructor
-- arguments must raise errors that name the class.
local T = require "testing"
require "nn"

torch.manualSeed(1234)
local J = nn.Jacobian
local TOL = 1e-5

-- a tensor as nested Lua tables, and back
local function tab(t) return t:totable() end

local function maxdiff(a, b) return (a - b):abs():max() end

local function near_tensor(got, want, tol, what)
  T.eq(got:size():totable(), want:size():totable(), (what or "") .. " size")
  local d = maxdiff(got, want)
  if d > (tol or 1e-10) then error(("%s: max difference %g"):format(what or "tensor", d), 2) end
end

-- d output / d input and / d parameters against finite differences; the direct update too
local function check_jacobians(m, input, what)
  local err = J.testJacobian(m, input)
  T.ok(err < TOL, what .. ": d/dinput error " .. err)
  if m.weight then
    err = J.testJacobianParameters(m, input, m.weight, m.gradWeight)
    T.ok(err < TOL, what .. ": d/dweight error " .. err)
    err = J.testJacobianUpdateParameters(m, input, m.weight)
    T.ok(err < TOL, what .. ": accUpdateGradParameters weight error " .. err)
  end
  if m.bias then
    err = J.testJacobianParameters(m, input, m.bias, m.gradBias)
    T.ok(err < TOL, what .. ": d/dbias error " .. err)
    err = J.testJacobianUpdateParameters(m, input, m.bias)
    T.ok(err < TOL, what .. ": accUpdateGradParameters bias error " .. err)
  end
end

-- accGradParameters(…, scale) adds scale times the gradient
local function check_scale(m, input)
  m:forward(input)
  local go = m.output:clone():uniform(-1, 1)
  m:zeroGradParameters()
  m:backward(input, go, 1)
  local gw = m.gradWeight:clone()
  local gb = m.gradBias and m.gradBias:clone()
  m:zeroGradParameters()
  m:backward(input, go, 0.25)
  T.ok(maxdiff(m.gradWeight, gw * 0.25) < 1e-12, torch.type(m) .. ": scale on gradWeight")
  if gb then T.ok(maxdiff(m.gradBias, gb * 0.25) < 1e-12, torch.type(m) .. ": scale on gradBias") end
end

-- a batch of 3 gives, for each sample, what the sample gives alone
local function check_batch(m, x1, batchdim_input)
  local n = 3
  local sizes = x1:size():totable()
  table.insert(sizes, 1, n)
  local xb = torch.randn(table.unpack(sizes))
  local ob = m:forward(xb):clone()
  local gob = ob:clone():normal()
  m:zeroGradParameters()
  local gib = m:backward(xb, gob):clone()
  local gw = m.gradWeight and m.gradWeight:clone()
  local acc = m.gradWeight and m.gradWeight:clone():zero()
  for i = 1, n do
    local o = m:forward(xb[i]):clone()
    near_tensor(o, ob[i], 1e-10, torch.type(m) .. " batch output " .. i)
    if gw then m:zeroGradParameters() end
    local gi = m:backward(xb[i], gob[i])
    near_tensor(gi, gib[i], 1e-10, torch.type(m) .. " batch gradInput " .. i)
    if gw then acc:add(m.gradWeight) end
  end
  if gw then near_tensor(acc, gw, 1e-9, torch.type(m) .. " batch gradWeight") end
end

-- plain loops ----------------------------------------------------------------------------

-- cross-correlation of x (C x H x W tables) with w (O x C x kH x kW), stride, padding, dilation
local function ref_conv(x, w, b, dH, dW, padH, padW, dilH, dilW, C, H, W, O, kH, kW)
  dilH, dilW = dilH or 1, dilW or 1
  local oH = math.floor((H + 2 * padH - dilH * (kH - 1) - 1) / dH) + 1
  local oW = math.floor((W + 2 * padW - dilW * (kW - 1) - 1) / dW) + 1
  local out = torch.Tensor(O, oH, oW)
  for o = 1, O do
    for y = 1, oH do
      for xx = 1, oW do
        local s = b and b[o] or 0
        for c = 1, C do
          for i = 1, kH do
            for j = 1, kW do
              local iy = (y - 1) * dH - padH + (i - 1) * dilH + 1
              local ix = (xx - 1) * dW - padW + (j - 1) * dilW + 1
              if iy >= 1 and iy <= H and ix >= 1 and ix <= W then
                s = s + x[c][iy][ix] * w[o][c][i][j]
              end
            end
          end
        end
        out[o][y][xx] = s
      end
    end
  end
  return out
end

-- the transposed convolution: input pixel (c, y, x) adds x * w[c][o] at the positions
-- (y-1) dH - padH + i, (x-1) dW - padW + j of output plane o
local function ref_full(x, w, b, dH, dW, padH, padW, adjH, adjW, C, H, W, O, kH, kW)
  local oH = (H - 1) * dH - 2 * padH + kH + adjH
  local oW = (W - 1) * dW - 2 * padW + kW + adjW
  local out = torch.Tensor(O, oH, oW)
  for o = 1, O do out[o]:fill(b and b[o] or 0) end
  for c = 1, C do
    for y = 1, H do
      for xx = 1, W do
        for o = 1, O do
          for i = 1, kH do
            for j = 1, kW do
              local oy = (y - 1) * dH - padH + i
              local ox = (xx - 1) * dW - padW + j
              if oy >= 1 and oy <= oH and ox >= 1 and ox <= oW then
                out[o][oy][ox] = out[o][oy][ox] + x[c][y][xx] * w[c][o][i][j]
              end
            end
          end
        end
      end
    end
  end
  return out
end

-- SpatialConvolution family ---------------------------------------------------------------

T.test("SpatialConvolution: forward = cross-correlation loops (stride, padding, bias, noBias)", function()
  local C, O, kW, kH, dW, dH, pW, pH = 3, 2, 3, 2, 2, 1, 1, 2
  local m = nn.SpatialConvolution(C, O, kW, kH, dW, dH, pW, pH)
  T.eq(m.weight:size():totable(), { O, C, kH, kW })
  T.eq(m.padW, 1); T.eq(m.padH, 2)
  local x = torch.randn(C, 6, 7)
  local want = ref_conv(tab(x), tab(m.weight), tab(m.bias), dH, dW, pH, pW, 1, 1, C, 6, 7, O, kH, kW)
  near_tensor(m:forward(x), want, 1e-12, "output")
  m:noBias()
  T.ok(m.bias == nil and m.gradBias == nil)
  want = ref_conv(tab(x), tab(m.weight), nil, dH, dW, pH, pW, 1, 1, C, 6, 7, O, kH, kW)
  near_tensor(m:forward(x), want, 1e-12, "output without bias")
  T.eq(tostring(m), "nn.SpatialConvolution(3 -> 2, 3x2, 2,1, 1,2) without bias")
  T.eq(tostring(nn.SpatialConvolution(1, 4, 5, 5)), "nn.SpatialConvolution(1 -> 4, 5x5)")
  -- padH defaults to padW
  T.eq(nn.SpatialConvolution(1, 1, 3, 3, 1, 1, 2).padH, 2)
end)

T.test("SpatialConvolution: jacobians, scale, batch = samples, non-contiguous input", function()
  local m = nn.SpatialConvolution(2, 3, 3, 2, 2, 1, 1, 0)
  check_jacobians(m, torch.Tensor(2, 5, 6), "SpatialConvolution")
  check_jacobians(m, torch.Tensor(2, 2, 5, 6), "SpatialConvolution batch")
  check_scale(m, torch.randn(2, 2, 5, 6))
  check_batch(m, torch.randn(2, 5, 6))
  local x = torch.randn(2, 2, 6, 5):transpose(3, 4)
  near_tensor(m:forward(x):clone(), m:forward(x:contiguous()):clone(), 0, "non-contiguous input")
  m:noBias()
  check_jacobians(m, torch.Tensor(2, 5, 6), "SpatialConvolution without bias")
end)

T.test("SpatialConvolution: float modules, weights in a bigger storage, bad inputs", function()
  local m = nn.SpatialConvolution(2, 3, 3, 3)
  local x = torch.randn(2, 5, 5)
  local y = m:forward(x):clone()
  local mf = m:clone():float()
  local yf = mf:forward(x:float())
  T.eq(yf:type(), "torch.FloatTensor")
  T.ok(maxdiff(yf:double(), y) < 1e-5)
  -- a weight that is a view into a larger storage (as getParameters makes)
  local params = m:getParameters()
  T.ok(maxdiff(m:forward(x), y) == 0)
  T.eq(params:nElement(), 2 * 3 * 9 + 3)
  T.raises(function() m:forward(torch.randn(5, 5)) end, "nn.SpatialConvolution", "3D or 4D")
  T.raises(function() m:forward(torch.randn(3, 5, 5)) end, "nn.SpatialConvolution", "planes")
  T.raises(function() m:forward(torch.randn(2, 2, 2)) end, "nn.SpatialConvolution", "too small")
  T.raises(function() m:forward(torch.randn(2, 5, 5):float()) end, "nn.SpatialConvolution", "FloatTensor")
  m:forward(x)
  T.raises(function() m:backward(x, torch.randn(3, 2, 2)) end, "nn.SpatialConvolution", "gradOutput")
  T.raises(function() nn.SpatialConvolution(2, 3, 0, 3) end, "nn.SpatialConvolution", "kW")
  T.raises(function() nn.SpatialConvolution(2, 3, 3, 3, 1, 1, -1) end, "nn.SpatialConvolution", "padW")
end)

T.test("SpatialConvolutionMM: Torch7's 2-D weight, same map as SpatialConvolution", function()
  local m = nn.SpatialConvolutionMM(3, 2, 2, 3, 1, 2, 1, 1)
  T.eq(m.weight:size():totable(), { 2, 3 * 3 * 2 })
  local ref = nn.SpatialConvolution(3, 2, 2, 3, 1, 2, 1, 1)
  ref.weight:copy(m.weight:view(2, 3, 3, 2)); ref.bias:copy(m.bias)
  local x = torch.randn(2, 3, 6, 5)
  near_tensor(m:forward(x), ref:forward(x), 1e-12, "output")
  local go = m.output:clone():normal()
  near_tensor(m:backward(x, go), ref:backward(x, go), 1e-12, "gradInput")
  T.ok(not torch.isTypeOf(m, "nn.SpatialConvolution"), "MM is its own class, as in Torch7")
  check_jacobians(m, torch.Tensor(3, 5, 4), "SpatialConvolutionMM")
  check_jacobians(m, torch.Tensor(2, 3, 5, 4), "SpatialConvolutionMM batch")
  check_scale(m, x)
  T.eq(tostring(m), "nn.SpatialConvolutionMM(3 -> 2, 2x3, 1,2, 1,1)")
  T.raises(function() m:forward(torch.randn(2, 6, 5)) end, "nn.SpatialConvolutionMM")
end)

T.test("SpatialDilatedConvolution: taps dilation apart", function()
  local m = nn.SpatialDilatedConvolution(2, 2, 3, 2, 1, 2, 1, 0, 2, 3)
  T.ok(torch.isTypeOf(m, "nn.SpatialConvolution"))
  local x = torch.randn(2, 8, 9)
  local want = ref_conv(tab(x), tab(m.weight), tab(m.bias), 2, 1, 0, 1, 3, 2, 2, 8, 9, 2, 2, 3)
  near_tensor(m:forward(x), want, 1e-12, "output")
  check_jacobians(m, torch.Tensor(2, 7, 7), "SpatialDilatedConvolution")
  check_batch(m, torch.randn(2, 7, 7))
  T.eq(tostring(m), "nn.SpatialDilatedConvolution(2 -> 2, 3x2, 1,2, 1,0, 2,3)")
  T.raises(function() m:forward(torch.randn(2, 3, 3)) end, "nn.SpatialDilatedConvolution", "too small")
  T.raises(function() nn.SpatialDilatedConvolution(2, 2, 3, 3, 1, 1, 0, 0, 0, 1) end, "nn.SpatialDilatedConvolution", "dilationW")
end)

T.test("SpatialDepthWiseConvolution: each plane with its own kernels", function()
  local n, mult, k = 3, 2, 3
  local m = nn.SpatialDepthWiseConvolution(n, mult, k, k, 1, 2, 1, 0)
  T.eq(m.weight:size():totable(), { mult, n * k * k })
  T.eq(m.bias:size():totable(), { mult, n })
  local x = torch.randn(n, 7, 6)
  -- output plane (i-1)*mult + j: plane i with kernel weight[j][i]
  local w4 = m.weight:view(mult, n, k, k)
  local y = m:forward(x)
  T.eq(y:size(1), n * mult)
  for i = 1, n do
    for j = 1, mult do
      local want = ref_conv({ tab(x[i]) }, { { tab(w4[j][i]) } }, { m.bias[j][i] }, 2, 1, 0, 1, 1, 1, 1, 7, 6, 1, k, k)
      near_tensor(y[(i - 1) * mult + j], want[1], 1e-12, "plane " .. i .. "," .. j)
    end
  end
  check_jacobians(m, torch.Tensor(n, 5, 5), "SpatialDepthWiseConvolution")
  check_batch(m, torch.randn(n, 5, 5))
  check_scale(m, torch.randn(n, 5, 5))
  -- a 4-D weight (mult x n x kH x kW) is taken as well
  m.weight = w4:clone()
  m.gradWeight = m.weight:clone():zero()
  near_tensor(m:forward(x), y:clone(), 1e-12, "4-D weight")
  T.raises(function() m:forward(torch.randn(2, 7, 6)) end, "nn.SpatialDepthWiseConvolution")
end)

T.test("SpatialConvolutionLocal: unshared kernels, one per output position", function()
  local C, O, iW, iH, kW, kH, dW, dH, pW, pH = 2, 3, 5, 4, 2, 3, 2, 1, 1, 1
  local m = nn.SpatialConvolutionLocal(C, O, iW, iH, kW, kH, dW, dH, pW, pH)
  local oW, oH = m.oW, m.oH
  T.eq(oW, math.floor((2 * pW + iW - kW) / dW) + 1); T.eq(oH, math.floor((2 * pH + iH - kH) / dH) + 1)
  T.eq(m.weight:size():totable(), { oH, oW, O, C, kH, kW })
  local x = torch.randn(C, iH, iW)
  local y = m:forward(x)
  local xt, wt, bt = tab(x), tab(m.weight), tab(m.bias)
  local want = torch.Tensor(O, oH, oW)
  for o = 1, O do
    for yy = 1, oH do
      for xx = 1, oW do
        local s = bt[o][yy][xx]
        for c = 1, C do
          for i = 1, kH do
            for j = 1, kW do
              local iy, ix = (yy - 1) * dH - pH + i, (xx - 1) * dW - pW + j
              if iy >= 1 and iy <= iH and ix >= 1 and ix <= iW then
                s = s + xt[c][iy][ix] * wt[yy][xx][o][c][i][j]
              end
            end
          end
        end
        want[o][yy][xx] = s
      end
    end
  end
  near_tensor(y, want, 1e-12, "output")
  check_jacobians(m, torch.Tensor(C, iH, iW), "SpatialConvolutionLocal")
  check_jacobians(m, torch.Tensor(2, C, iH, iW), "SpatialConvolutionLocal batch")
  check_batch(m, torch.randn(C, iH, iW))
  check_scale(m, torch.randn(C, iH, iW))
  T.eq(tostring(m), "nn.SpatialConvolutionLocal(2 -> 3, 5x4, 2x3, 2,1, 1,1)")
  T.raises(function() m:forward(torch.randn(C, iH + 1, iW)) end, "nn.SpatialConvolutionLocal", "inconsistent")
  T.raises(function() nn.SpatialConvolutionLocal(1, 1, 2, 2, 3, 3) end, "nn.SpatialConvolutionLocal", "illegal")
end)

T.test("SpatialFullConvolution: the transposed convolution, adj, noBias", function()
  local C, O, kW, kH, dW, dH, pW, pH, aW, aH = 2, 3, 3, 2, 2, 3, 1, 0, 1, 2
  local m = nn.SpatialFullConvolution(C, O, kW, kH, dW, dH, pW, pH, aW, aH)
  T.eq(m.weight:size():totable(), { C, O, kH, kW })
  local x = torch.randn(C, 4, 3)
  local want = ref_full(tab(x), tab(m.weight), tab(m.bias), dH, dW, pH, pW, aH, aW, C, 4, 3, O, kH, kW)
  near_tensor(m:forward(x), want, 1e-12, "output")
  check_jacobians(m, torch.Tensor(C, 4, 3), "SpatialFullConvolution")
  check_jacobians(m, torch.Tensor(2, C, 3, 3), "SpatialFullConvolution batch")
  check_batch(m, torch.randn(C, 3, 4))
  check_scale(m, torch.randn(C, 3, 4))
  T.eq(tostring(m), "nn.SpatialFullConvolution(2 -> 3, 3x2, 2,3, 1,0, 1,2)")
  m:noBias()
  want = ref_full(tab(x), tab(m.weight), nil, dH, dW, pH, pW, aH, aW, C, 4, 3, O, kH, kW)
  near_tensor(m:forward(x), want, 1e-12, "output without bias")
  check_jacobians(m, torch.Tensor(C, 4, 3), "SpatialFullConvolution without bias")
  T.raises(function() nn.SpatialFullConvolution(2, 2, 3, 3, 2, 2, 0, 0, 2, 0) end, "nn.SpatialFullConvolution", "adjW")
  T.raises(function() m:forward(torch.randn(3, 4, 3)) end, "nn.SpatialFullConvolution", "planes")
  T.raises(function() m:forward({ x }) end, "nn.SpatialFullConvolution", "target")
end)

T.test("SpatialFullConvolution: {input, target} picks adj from the target's size", function()
  local m = nn.SpatialFullConvolution(2, 2, 3, 3, 2, 2, 1, 1)
  local ref = m:clone()
  local x = torch.randn(2, 4, 4)
  -- without adj the output is 7x7; targets of 8x8 (adj 1) and 7x8
  for _, tsize in ipairs({ { 8, 8 }, { 7, 8 } }) do
    local target = torch.Tensor(tsize[1], tsize[2])
    local y = m:forward({ x, target })
    T.eq({ y:size(2), y:size(3) }, tsize)
    ref.adjH, ref.adjW = tsize[1] - 7, tsize[2] - 7
    near_tensor(y, ref:forward(x), 0, "dual output")
    local go = y:clone():normal()
    local gi = m:backward({ x, target }, go)
    near_tensor(gi[1], ref:backward(x, go), 0, "dual gradInput")
    T.eq(gi[2]:size():totable(), target:size():totable())
    T.eq(gi[2]:storage():size(), 1); T.eq(gi[2]:storage()[1], 0)
  end
end)

-- connection tables ---------------------------------------------------------------------

T.test("nn.tables: full, oneToOne, random", function()
  local f = nn.tables.full(2, 3)
  T.eq(f:totable(), { { 1, 1 }, { 2, 1 }, { 1, 2 }, { 2, 2 }, { 1, 3 }, { 2, 3 } })
  T.eq(nn.tables.oneToOne(3):totable(), { { 1, 1 }, { 2, 2 }, { 3, 3 } })
  local r = nn.tables.random(5, 4, 2)
  T.eq(r:size():totable(), { 8, 2 })
  local counts = {}
  for k = 1, 8 do
    local i, o = r[k][1], r[k][2]
    T.ok(i >= 1 and i <= 5, "input plane in range")
    T.eq(o, math.floor((k - 1) / 2) + 1)
    counts[o] = counts[o] or {}
    T.ok(not counts[o][i], "distinct inputs per output")
    counts[o][i] = true
  end
  T.raises(function() nn.tables.random(2, 2, 3) end, "nn.tables.random")
end)

T.test("SpatialConvolutionMap: a kernel per table row", function()
  local tbl = torch.Tensor({ { 1, 1 }, { 3, 1 }, { 2, 2 }, { 3, 2 }, { 1, 3 } })
  local m = nn.SpatialConvolutionMap(tbl, 3, 2, 2, 1)
  T.eq(m.nInputPlane, 3); T.eq(m.nOutputPlane, 3)
  T.eq(m.weight:size():totable(), { 5, 2, 3 })
  local x = torch.randn(3, 5, 7)
  local y = m:forward(x)
  local want = torch.Tensor(3, 4, 3)
  for o = 1, 3 do want[o]:fill(m.bias[o]) end
  for k = 1, 5 do
    local i, o = tbl[k][1], tbl[k][2]
    local c = ref_conv({ tab(x[i]) }, { { tab(m.weight[k]) } }, nil, 1, 2, 0, 0, 1, 1, 1, 5, 7, 1, 2, 3)
    want[o]:add(c[1])
  end
  near_tensor(y, want, 1e-12, "output")
  check_jacobians(m, torch.Tensor(3, 5, 6), "SpatialConvolutionMap")
  check_jacobians(m, torch.Tensor(2, 3, 4, 5), "SpatialConvolutionMap batch")
  check_batch(m, torch.randn(3, 4, 5))
  check_scale(m, torch.randn(3, 4, 5))
  -- each kernel drawn within +-1/sqrt(kW*kH*fan-in of its output)
  local r = nn.SpatialConvolutionMap(nn.tables.full(4, 2), 2, 2)
  T.ok(r.weight:abs():max() <= 1 / math.sqrt(2 * 2 * 4))
  T.eq(tostring(m), "nn.SpatialConvolutionMap(3 -> 3, 3x2, 2,1)")
  T.raises(function() m:forward(torch.randn(2, 5, 7)) end, "nn.SpatialConvolutionMap", "planes")
  T.raises(function() nn.SpatialConvolutionMap(torch.Tensor(3, 3), 2, 2) end, "nn.SpatialConvolutionMap")
end)

T.test("SpatialFullConvolutionMap: SpatialFullConvolution over the table's pairs", function()
  local tbl = torch.Tensor({ { 1, 2 }, { 2, 1 }, { 2, 2 } })
  local m = nn.SpatialFullConvolutionMap(tbl, 2, 3, 2, 1)
  local x = torch.randn(2, 3, 4)
  -- the same as a full SpatialFullConvolution whose missing kernels are zero
  local full = nn.SpatialFullConvolution(2, 2, 2, 3, 2, 1)
  full.weight:zero(); full.bias:copy(m.bias)
  for k = 1, 3 do full.weight[tbl[k][1]][tbl[k][2]]:copy(m.weight[k]) end
  local want = ref_full(tab(x), tab(full.weight), tab(full.bias), 1, 2, 0, 0, 0, 0, 2, 3, 4, 2, 3, 2)
  near_tensor(m:forward(x), want, 1e-12, "output")
  check_jacobians(m, torch.Tensor(2, 3, 4), "SpatialFullConvolutionMap")
  check_scale(m, x)
  T.eq(tostring(m), "nn.SpatialFullConvolutionMap(2 -> 2, 2x3, 2,1)")
  T.raises(function() m:forward(torch.randn(3, 4)) end, "nn.SpatialFullConvolutionMap")
end)

T.test("SpatialSubSampling: window sums times a weight per plane", function()
  local m = nn.SpatialSubSampling(2, 3, 2, 2, 1)
  local x = torch.randn(2, 5, 8)
  local y = m:forward(x)
  T.eq(y:size():totable(), { 2, 4, 3 })
  for c = 1, 2 do
    for yy = 1, 4 do
      for xx = 1, 3 do
        local s = x[c]:narrow(1, yy, 2):narrow(2, (xx - 1) * 2 + 1, 3):sum()
        T.near(y[c][yy][xx], m.weight[c] * s + m.bias[c], 1e-12)
      end
    end
  end
  check_jacobians(m, torch.Tensor(2, 5, 8), "SpatialSubSampling")
  check_jacobians(m, torch.Tensor(2, 2, 4, 5), "SpatialSubSampling batch")
  check_batch(m, torch.randn(2, 5, 8))
  check_scale(m, x)
  T.eq(tostring(m), "nn.SpatialSubSampling(2, 3x2, 2,1)")
  T.raises(function() m:forward(torch.randn(2, 1, 8)) end, "nn.SpatialSubSampling", "smaller than kernel")
  T.raises(function() m:forward(torch.randn(3, 5, 8)) end, "nn.SpatialSubSampling")
end)

-- Temporal ---------------------------------------------------------------------------------

T.test("TemporalConvolution: frames concatenated times the weight", function()
  local F, O, kW, dW = 3, 2, 3, 2
  local m = nn.TemporalConvolution(F, O, kW, dW)
  T.eq(m.weight:size():totable(), { O, F * kW })
  local x = torch.randn(8, F)
  local y = m:forward(x)
  T.eq(y:size():totable(), { 3, O })
  for t = 1, 3 do
    local frames = x:narrow(1, (t - 1) * dW + 1, kW):contiguous():view(F * kW)
    local want = torch.mv(m.weight, frames):add(m.bias)
    near_tensor(y[t], want, 1e-12, "frame " .. t)
  end
  check_jacobians(m, torch.Tensor(8, F), "TemporalConvolution")
  check_jacobians(m, torch.Tensor(2, 7, F), "TemporalConvolution batch")
  check_batch(m, torch.randn(7, F))
  check_scale(m, x)
  -- modules sharing the weight update it through accUpdateGradParameters
  for name, err in pairs(J.testAllUpdate(m, torch.randn(7, F), "weight", "gradWeight")) do
    T.ok(err < 1e-9, "TemporalConvolution " .. name .. " " .. err)
  end
  T.eq(tostring(m), "nn.TemporalConvolution(3 -> 2, 3, 2)")
  T.raises(function() m:forward(torch.randn(8, F + 1)) end, "nn.TemporalConvolution", "frame size")
  T.raises(function() m:forward(torch.randn(2, F)) end, "nn.TemporalConvolution", "shorter")
  T.raises(function() m:forward(torch.randn(8)) end, "nn.TemporalConvolution", "2D or 3D")
end)

T.test("TemporalSubSampling: window sums times a weight per feature", function()
  local F, kW, dW = 3, 3, 2
  local m = nn.TemporalSubSampling(F, kW, dW)
  local x = torch.randn(9, F)
  local y = m:forward(x)
  T.eq(y:size():totable(), { 4, F })
  for t = 1, 4 do
    local s = x:narrow(1, (t - 1) * dW + 1, kW):sum(1):view(F)
    near_tensor(y[t], s:cmul(m.weight):add(m.bias), 1e-12, "frame " .. t)
  end
  check_jacobians(m, torch.Tensor(9, F), "TemporalSubSampling")
  check_jacobians(m, torch.Tensor(2, 7, F), "TemporalSubSampling batch")
  check_scale(m, x)
  T.raises(function() m:forward(torch.randn(9, F + 1)) end, "nn.TemporalSubSampling")
end)

T.test("TemporalMaxPooling: maxima over windows of frames", function()
  local m = nn.TemporalMaxPooling(3, 2)
  local x = torch.randn(9, 4)
  local y = m:forward(x)
  T.eq(y:size():totable(), { 4, 4 })
  for t = 1, 4 do
    near_tensor(y[t], x:narrow(1, (t - 1) * 2 + 1, 3):max(1):view(4), 0, "frame " .. t)
  end
  check_jacobians(m, torch.Tensor(9, 4), "TemporalMaxPooling")
  check_jacobians(m, torch.Tensor(2, 9, 4), "TemporalMaxPooling batch")
  check_batch(m, torch.randn(9, 4))
  T.eq(nn.TemporalMaxPooling(4).dW, 4)
  T.raises(function() m:forward(torch.randn(2, 4)) end, "nn.TemporalMaxPooling", "shorter")
  T.raises(function() m:forward(torch.randn(2, 2, 2, 4)) end, "nn.TemporalMaxPooling", "2D or 3D")
end)

T.test("TemporalDynamicKMaxPooling: the k largest per feature, in sequence order", function()
  local m = nn.TemporalDynamicKMaxPooling(2, 0.5)
  local x = torch.Tensor({ { 1, 9 }, { 5, 8 }, { 3, 7 }, { 4, 1 }, { 2, 2 }, { 6, 3 }, { 0, 4 } })
  -- k = max(2, ceil(0.5 * 7)) = 4
  local y = m:forward(x)
  T.eq(y:totable(), { { 5, 9 }, { 3, 8 }, { 4, 7 }, { 6, 4 } })
  local go = torch.randn(4, 2)
  local gi = m:backward(x, go)
  T.eq(gi:sum(), go:sum())
  T.eq(gi[1][1], 0); T.eq(gi[2][1], go[1][1]); T.eq(gi[7][2], go[4][2])
  check_jacobians(m, torch.Tensor(7, 3), "TemporalDynamicKMaxPooling")
  check_jacobians(m, torch.Tensor(2, 7, 3), "TemporalDynamicKMaxPooling batch")
  T.raises(function() nn.TemporalDynamicKMaxPooling(5):forward(torch.randn(3, 2)) end,
    "nn.TemporalDynamicKMaxPooling", "too small")
  T.raises(function() m:forward(torch.randn(7)) end, "nn.TemporalDynamicKMaxPooling")
end)

T.test("TemporalRowConvolution: a kernel per feature row, featFirst layouts", function()
  local F, kW, dW = 3, 3, 2
  for _, featFirst in ipairs({ false, true }) do
    local m = nn.TemporalRowConvolution(F, kW, dW, featFirst)
    T.eq(m.weight:size():totable(), { F, 1, kW })
    local seq = torch.randn(8, F)                       -- frames x features
    local x = featFirst and seq:t():contiguous() or seq
    local y = m:forward(x)
    local want = torch.Tensor(3, F)
    for t = 1, 3 do
      for f = 1, F do
        local s = m.bias[f]
        for k = 1, kW do s = s + m.weight[f][1][k] * seq[(t - 1) * dW + k][f] end
        want[t][f] = s
      end
    end
    if featFirst then want = want:t() end
    near_tensor(y, want, 1e-12, "output featFirst=" .. tostring(featFirst))
    local shape = featFirst and { F, 8 } or { 8, F }
    check_jacobians(m, torch.Tensor(shape[1], shape[2]), "TemporalRowConvolution")
    check_jacobians(m, torch.Tensor(2, shape[1], shape[2]), "TemporalRowConvolution batch")
    check_batch(m, torch.randn(shape[1], shape[2]))
    check_scale(m, torch.randn(shape[1], shape[2]))
    m:noBias()
    check_jacobians(m, torch.Tensor(shape[1], shape[2]), "TemporalRowConvolution without bias")
    T.raises(function() m:forward(torch.randn(F + 1, F + 1)) end, "nn.TemporalRowConvolution", "inputFrameSize")
  end
  T.eq(tostring(nn.TemporalRowConvolution(4, 3, 2)), "nn.TemporalRowConvolution(4, 3, 2)")
end)

-- saving and loading ------------------------------------------------------------------------

T.test("modules written and read back compute the same", function()
  local mods = {
    { nn.SpatialConvolution(2, 3, 3, 3, 1, 1, 1, 1), torch.randn(2, 2, 5, 5) },
    { nn.SpatialFullConvolution(2, 3, 3, 3, 2, 2), torch.randn(2, 4, 4) },
    { nn.SpatialConvolutionLocal(2, 2, 4, 4, 2, 2), torch.randn(2, 4, 4) },
    { nn.SpatialConvolutionMap(nn.tables.oneToOne(2), 2, 2), torch.randn(2, 4, 4) },
    { nn.TemporalConvolution(3, 2, 2), torch.randn(5, 3) },
    { nn.TemporalMaxPooling(2), torch.randn(6, 3) },
  }
  for _, p in ipairs(mods) do
    local ferr, berr = J.testIO(p[1], p[2])
    T.ok(ferr == 0 and berr == 0, torch.type(p[1]) .. " i/o")
  end
end)

T.done()
