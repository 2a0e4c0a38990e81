-- nn_optim.lua — one optimizer step over 10M float32 parameters (10 tensors of
-- 1M and 100 of 100k): AdamW and SGD with momentum, against bench/nn_optim.py
-- (run both with bench/nn.sh optim). Prints "key microseconds". The *_foreach
-- keys repeat lutorch's figure, to compare with PyTorch's foreach=True path.
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path   -- timing.lua
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path
local optim = require "optim"
-- reps from arg[1]; os.clock: pinned to one thread, CPU time; warm up with fn(1) (allocates the state)
local T = require("timing").new{ warmup = function() return 1 end, fmt = "%.1f" }

torch.manual_seed(0)
local function params(count, size)
  local ps = {}
  for i = 1, count do
    ps[i] = torch.randn(size):requires_grad_()
    ps[i].grad = torch.randn(size)
  end
  return ps
end

local function bench(key, n, fn) return T:bench(key, n, fn) end
for _, shape in ipairs({ { 10, 1000000, "10x1M" }, { 100, 100000, "100x100k" } }) do
  local ps = params(shape[1], shape[2])
  local adamw = optim.AdamW(ps, { lr = 1e-3 })
  T:set("adamw_" .. shape[3] .. "_foreach",
    bench("adamw_" .. shape[3], 5, function(n) for _ = 1, n do adamw:step() end end))
  adamw = nil
  local sgd = optim.SGD(ps, { lr = 1e-3, momentum = 0.9 })
  T:set("sgd_mom_" .. shape[3] .. "_foreach",
    bench("sgd_mom_" .. shape[3], 5, function(n) for _ = 1, n do sgd:step() end end))
  sgd = nil
  collectgarbage()
end
T:report()
