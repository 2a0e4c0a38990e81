-- linalg.lua — torch.linalg.solve and inv at n = 64, 512, 2048 and a batch of 256
-- 32x32 matrices, float64, and (keys c...) complex128 at n = 64, 512 and the batch, on the lutorch side (twins: linalg.py for PyTorch and
-- numpy; run all three with `sh bench/linalg.sh`). Prints "key microseconds".
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path   -- timing.lua
local T = require("timing").new{ warmup = 1000, reps = tonumber(arg[1]) or 3 }

torch.manual_seed(0)
local function wellcond(b, n, dt)
  local s = b and { b, n, n } or { n, n }
  return torch.randn(s, { dtype = dt }) + torch.eye(n, { dtype = dt }) * n
end
local cases = {
  { nil, 64, 200, torch.float64, "" }, { nil, 512, 5, torch.float64, "" }, { nil, 2048, 1, torch.float64, "" },
  { 256, 32, 20, torch.float64, "" },
  { nil, 64, 100, torch.complex128, "c" }, { nil, 512, 2, torch.complex128, "c" }, { 256, 32, 10, torch.complex128, "c" },
}
for _, c in ipairs(cases) do
  local b, n, reps, dt, pre = c[1], c[2], c[3], c[4], c[5]
  local A = wellcond(b, n, dt)
  local B = torch.randn(b and { b, n, 1 } or { n, 1 }, { dtype = dt })
  local tag = b and ("%dx%dx%d"):format(b, n, n) or ("%dx%d"):format(n, n)
  T:bench(pre .. "solve_" .. tag, reps, function(k) for _ = 1, k do torch.linalg.solve(A, B) end end)
  T:bench(pre .. "inv_" .. tag, reps, function(k) for _ = 1, k do torch.linalg.inv(A) end end)
end
T:report()
