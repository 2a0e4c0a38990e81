-- nn_norm.lua — batch_norm, layer_norm, log_softmax + nll_loss forward+backward on the
-- lutorch side (twin of nn_norm.py; run with `sh bench/nn.sh norm`). Prints "key microseconds".
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path   -- timing.lua
local T = require("timing").new{ warmup = 10 }   -- reps from arg[1]; os.clock: one thread, CPU time

torch.manual_seed(0)
local function leaf(...) return torch.randn({ ... }, { requires_grad = true }) end
local function fig(k, n, fn) T:bench(k, n, fn) end

do
  local x, w, b = leaf(64, 64, 28, 28), leaf(64), leaf(64)
  local rm, rv = torch.zeros(64), torch.ones(64)
  local g = torch.randn(64, 64, 28, 28)
  fig("bn_train_64x64x28x28", 5, function(n)
    for _ = 1, n do torch.batch_norm(x, w, b, rm, rv, true, 0.1, 1e-5):backward(g) end
  end)
end
do
  local x, w, b = leaf(256, 1024), leaf(1024), leaf(1024)
  local rm, rv = torch.zeros(1024), torch.ones(1024)
  local g = torch.randn(256, 1024)
  fig("bn1d_train_256x1024", 50, function(n)
    for _ = 1, n do torch.batch_norm(x, w, b, rm, rv, true, 0.1, 1e-5):backward(g) end
  end)
end
for _, s in ipairs({ { 256, 1000 }, { 64, 10 } }) do
  local x = leaf(s[1], s[2])
  local t = torch.randint(1, s[2] + 1, { s[1] })
  fig(("lsm_nll_%dx%d"):format(s[1], s[2]), s[2] == 10 and 2000 or 100, function(n)
    for _ = 1, n do torch.nll_loss(torch.log_softmax(x, 2), t):backward() end
  end)
end
do
  local x, w, b = leaf(64, 128, 512), leaf(512), leaf(512)
  local g = torch.randn(64, 128, 512)
  fig("ln_64x128x512", 5, function(n)
    for _ = 1, n do torch.layer_norm(x, { 512 }, w, b):backward(g) end
  end)
end
do
  local x = torch.randn(256, 1000)
  fig("softmax_fwd_256x1000", 200, function(n) for _ = 1, n do torch.softmax(x, 2) end end)
end
T:report()
