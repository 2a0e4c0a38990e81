-- nn_conv.lua — conv2d and max_pool2d, forward and forward+backward, float32, against
-- bench/nn_conv.py (run both with bench/nn.sh conv). Prints "key microseconds".
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path   -- timing.lua
local T = require("timing").new()   -- reps from arg[1]; os.clock: pinned to one thread, CPU time

torch.manual_seed(0)
local function bench(key, n, fn) T:bench(key, n, fn) end

-- conv2d: (name, N, C, H, O, k, padding, iterations)
local convs = {
  { "conv_lenet1", 64, 1, 28, 6, 5, 0, 20 },
  { "conv_lenet2", 64, 6, 12, 16, 5, 0, 20 },
  { "conv_resnet", 8, 64, 56, 64, 3, 1, 2 },
}
for _, c in ipairs(convs) do
  local name, N, C, H, O, k, p, it = table.unpack(c)
  local x = torch.randn(N, C, H, H, { requires_grad = true })
  local w = torch.randn(O, C, k, k, { requires_grad = true })
  local b = torch.randn(O, { requires_grad = true })
  local g = torch.no_grad(function() return torch.randn(torch.conv2d(x, w, b, { padding = p }):size()) end)
  bench(name .. "_fwd", it * 2, function(n)
    torch.no_grad(function() for _ = 1, n do local y = torch.conv2d(x, w, b, { padding = p }) end end)
  end)
  bench(name .. "_fwd_bwd", it, function(n)
    for _ = 1, n do
      x.grad = nil; w.grad = nil; b.grad = nil
      torch.conv2d(x, w, b, { padding = p }):backward(g)
    end
  end)
end

-- max_pool2d 2x2 on LeNet's first feature map (64, 6, 24, 24)
local xp = torch.randn(64, 6, 24, 24, { requires_grad = true })
local gp = torch.randn(64, 6, 12, 12)
bench("maxpool_fwd", 100, function(n) torch.no_grad(function() for _ = 1, n do local y = torch.max_pool2d(xp, 2) end end) end)
bench("maxpool_fwd_bwd", 50, function(n)
  for _ = 1, n do xp.grad = nil; torch.max_pool2d(xp, 2):backward(gp) end
end)

T:report()
