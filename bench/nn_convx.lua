-- nn_convx.lua — the convolution shapes people train beyond LeNet/ResNet (issue 27), forward
-- + backward (input, weight and bias gradients), float32, against bench/nn_convx.py (same
-- keys; run both with bench/nn.sh convx). Prints "key microseconds".
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path
local T = require("timing").new()

torch.manual_seed(0)
local F = torch.nn.functional

-- (key, op, input shape, weight shape, options, iterations)
local cases = {
  -- "What is torch.nn really?"'s CNN: three 3x3 stride-2 convs on 28x28, batch 64
  { "conv_s2_1to16", F.conv2d, { 64, 1, 28, 28 }, { 16, 1, 3, 3 }, { stride = 2, padding = 1 }, 20 },
  { "conv_s2_16to16", F.conv2d, { 64, 16, 14, 14 }, { 16, 16, 3, 3 }, { stride = 2, padding = 1 }, 20 },
  { "conv_s2_16to10", F.conv2d, { 64, 16, 7, 7 }, { 10, 16, 3, 3 }, { stride = 2, padding = 1 }, 40 },
  -- ResNet bottleneck's 1x1 reduction
  { "conv_1x1_256to64", F.conv2d, { 8, 256, 28, 28 }, { 64, 256, 1, 1 }, {}, 4 },
  -- MobileNet depthwise 3x3
  { "conv_dw_128", F.conv2d, { 8, 128, 56, 56 }, { 128, 1, 3, 3 }, { padding = 1, groups = 128 }, 4 },
  -- decoder: transposed 4x4 stride 2, 28x28 -> 56x56
  { "convt_64to32", F.conv_transpose2d, { 8, 64, 28, 28 }, { 64, 32, 4, 4 }, { stride = 2, padding = 1 }, 4 },
  -- 1-D: audio/text, 64 channels, length 1000
  { "conv1d_64", F.conv1d, { 32, 64, 1000 }, { 64, 64, 5 }, { padding = 2 }, 4 },
  -- 3-D: video/volume, 3x3x3
  { "conv3d_16", F.conv3d, { 4, 16, 16, 32, 32 }, { 16, 16, 3, 3, 3 }, { padding = 1 }, 2 },
}
for _, c in ipairs(cases) do
  local key, op, xs, ws, opt, it = table.unpack(c)
  local x = torch.randn(xs, { requires_grad = true })
  local w = torch.randn(ws, { requires_grad = true })
  local bn = (op == F.conv_transpose2d) and ws[2] or ws[1]
  local b = torch.randn(bn, { requires_grad = true })
  local g = torch.no_grad(function() return torch.randn(op(x, w, b, opt):size()) end)
  T:bench(key .. "_fwd", it * 2, function(n)
    torch.no_grad(function() for _ = 1, n do local y = op(x, w, b, opt) end end)
  end)
  T:bench(key .. "_fwd_bwd", it, function(n)
    for _ = 1, n do
      x.grad = nil; w.grad = nil; b.grad = nil
      op(x, w, b, opt):backward(g)
    end
  end)
end

-- one training step of that tutorial CNN (conv-relu x3, avg_pool2d 4, cross entropy, SGD
-- momentum 0.9), batch 64
local nn = torch.nn
local model = nn.Sequential(
  nn.Conv2d(1, 16, 3, { stride = 2, padding = 1 }), nn.ReLU(),
  nn.Conv2d(16, 16, 3, { stride = 2, padding = 1 }), nn.ReLU(),
  nn.Conv2d(16, 10, 3, { stride = 2, padding = 1 }), nn.ReLU(),
  nn.AvgPool2d(4), nn.Flatten())
local opt = torch.optim.SGD(model:parameters(), { lr = 0.1, momentum = 0.9 })
local xb = torch.rand(64, 1, 28, 28)
local yb = torch.randint(1, 11, { 64 })   -- class indices are 1-based
T:bench("tutorial_cnn_step", 20, function(n)
  for _ = 1, n do
    opt:zero_grad()
    F.cross_entropy(model(xb), yb):backward()
    opt:step()
  end
end)

T:report()
