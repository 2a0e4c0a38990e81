-- bf16.lua — the 16-bit float figures on the lutorch side (twin: bf16.py; run both with
-- `sh bench/bf16.sh`): mm at 2048 and at the Fashion-MNIST MLP's shapes (forward
-- 64x784x512, 64x512x256, 64x256x10 and the backward's 784x64x512) in float32, bfloat16
-- and float16; 16M-element add, sum, exp, relu; conv2d of LeNet-5's second layer and a
-- ResNet 3x3 64->64 block. Prints "key microseconds" (median of reps, one thread).
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path   -- timing.lua
local T = require("timing").new{ warmup = 1, reps = tonumber(arg[1]) or 3 }
local F = torch.nn.functional
torch.manual_seed(0)
local dts = { { "f32", torch.float32 }, { "bf16", torch.bfloat16 }, { "f16", torch.float16 } }
local shapes = { { 2048, 2048, 2048, 1 }, { 64, 784, 512, 30 }, { 64, 512, 256, 60 }, { 64, 256, 10, 400 },
                 { 784, 64, 512, 30 } }
for _, s in ipairs(shapes) do
  local m, k, n, r = s[1], s[2], s[3], s[4]
  for _, d in ipairs(dts) do
    local a, b = torch.randn(m, k):to(d[2]), torch.randn(k, n):to(d[2])
    T:bench(("mm_%dx%dx%d_%s"):format(m, k, n, d[1]), r, function(q) for _ = 1, q do torch.mm(a, b) end end)
  end
end
local N = 16 * 1024 * 1024
for _, d in ipairs(dts) do
  if d[1] ~= "f16" then
    local a, b = torch.randn(N):to(d[2]), torch.randn(N):to(d[2])
    T:bench("add16M_" .. d[1], 3, function(q) for _ = 1, q do local _ = a + b end end)
    T:bench("sum16M_" .. d[1], 3, function(q) for _ = 1, q do local _ = a:sum() end end)
    T:bench("exp16M_" .. d[1], 3, function(q) for _ = 1, q do local _ = a:exp() end end)
    T:bench("relu16M_" .. d[1], 3, function(q) for _ = 1, q do local _ = torch.relu(a) end end)
  end
end
local convs = { { "conv_lenet2", { 64, 6, 12, 12 }, { 16, 6, 5, 5 }, 0, 20 },
                { "conv_resnet64", { 8, 64, 28, 28 }, { 64, 64, 3, 3 }, 1, 3 } }
for _, c in ipairs(convs) do
  for _, d in ipairs(dts) do
    if d[1] ~= "f16" then
      local x, w = torch.randn(c[2]):to(d[2]), (torch.randn(c[3]) * 0.1):to(d[2])
      T:bench(c[1] .. "_" .. d[1], c[5], function(q) for _ = 1, q do F.conv2d(x, w, nil, { padding = c[4] }) end end)
    end
  end
end
T:report()
