-- nn_optim.lua — one optimizer step over 10M float32 parameters (10 tensors of
-- 1M and 100 of 100k): AdamW and SGD with momentum, against bench/nn_optim.py
-- (run both with bench/nn.sh optim). Prints "key microseconds". The *_foreach
-- keys repeat lutorch's figure, to compare with PyTorch's foreach=True path.
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path
local optim = require "optim"
local reps = tonumber(arg[1]) or 5
local clock = os.clock   -- pinned to one thread: CPU time

local function median(t) table.sort(t); return t[(#t + 1) // 2] end
local function time(n, fn)
  fn(1)                                    -- warm up (allocates the state)
  local ts = {}
  for _ = 1, reps do
    local t0 = clock()
    fn(n)
    ts[#ts + 1] = (clock() - t0) / n
  end
  return median(ts)
end

torch.manual_seed(0)
local function params(count, size)
  local ps = {}
  for i = 1, count do
    ps[i] = torch.randn(size):requires_grad_()
    ps[i].grad = torch.randn(size)
  end
  return ps
end

local keys, r = {}, {}
local function bench(key, n, fn) keys[#keys + 1] = key; r[key] = time(n, fn) end
for _, shape in ipairs({ { 10, 1000000, "10x1M" }, { 100, 100000, "100x100k" } }) do
  local ps = params(shape[1], shape[2])
  local adamw = optim.AdamW(ps, { lr = 1e-3 })
  bench("adamw_" .. shape[3], 5, function(n) for _ = 1, n do adamw:step() end end)
  r["adamw_" .. shape[3] .. "_foreach"] = r["adamw_" .. shape[3]]
  keys[#keys + 1] = "adamw_" .. shape[3] .. "_foreach"
  adamw = nil
  local sgd = optim.SGD(ps, { lr = 1e-3, momentum = 0.9 })
  bench("sgd_mom_" .. shape[3], 5, function(n) for _ = 1, n do sgd:step() end end)
  r["sgd_mom_" .. shape[3] .. "_foreach"] = r["sgd_mom_" .. shape[3]]
  keys[#keys + 1] = "sgd_mom_" .. shape[3] .. "_foreach"
  sgd = nil
  collectgarbage()
end
for _, k in ipairs(keys) do print(("%s %.1f"):format(k, r[k] * 1e6)) end
