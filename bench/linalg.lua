-- linalg.lua — torch.linalg.solve and inv at n = 64, 512, 2048 and a batch of 256
-- 32x32 matrices, float64, on the lutorch side (twins: linalg.py for PyTorch and
-- numpy; run all three with `sh bench/linalg.sh`). Prints "key microseconds".
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path   -- timing.lua
local T = require("timing").new{ warmup = 1000, reps = tonumber(arg[1]) or 3 }

torch.manual_seed(0)
local function wellcond(b, n)
  local s = b and { b, n, n } or { n, n }
  return torch.randn(s, { dtype = torch.float64 }) + torch.eye(n, { dtype = torch.float64 }) * n
end
for _, c in ipairs({ { nil, 64, 200 }, { nil, 512, 5 }, { nil, 2048, 1 }, { 256, 32, 20 } }) do
  local b, n, reps = c[1], c[2], c[3]
  local A = wellcond(b, n)
  local B = torch.randn(b and { b, n, 1 } or { n, 1 }, { dtype = torch.float64 })
  local tag = b and ("%dx%dx%d"):format(b, n, n) or ("%dx%d"):format(n, n)
  T:bench("solve_" .. tag, reps, function(k) for _ = 1, k do torch.linalg.solve(A, B) end end)
  T:bench("inv_" .. tag, reps, function(k) for _ = 1, k do torch.linalg.inv(A) end end)
end
T:report()
