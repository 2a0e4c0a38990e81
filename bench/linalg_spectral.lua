-- linalg_spectral.lua — svd, eigh, qr and eig on the lutorch side (twin of linalg_spectral.py,
-- which runs PyTorch or numpy; run all three with `sh bench/linalg_spectral.sh`). Prints
-- "key microseconds". Float64, n = 64, 512, 2048 and a batch of 256 matrices 32 x 32.
-- The n = 2048 figures are one timed call each (no warm-up: a call takes seconds); eig
-- (general, complex results) is timed at 64, 512 and the batch only.
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path   -- timing.lua
local T = require("timing").new{ warmup = 2 }   -- reps from arg[1]; os.clock: one thread, CPU time
local big = os.getenv("BENCH_BIG") ~= "0"

torch.manual_seed(0)
local f64 = { dtype = torch.float64 }
local cases = { { "64", { 64, 64 }, 20 }, { "512", { 512, 512 }, 1 }, { "256x32", { 256, 32, 32 }, 5 } }
if big then cases[#cases + 1] = { "2048", { 2048, 2048 }, 0 } end

for _, c in ipairs(cases) do
  local key, shape, n = c[1], c[2], c[3]
  local a = torch.randn(shape, f64)
  local s = a + a:transpose(-2, -1)
  local work = {
    svd = function() torch.linalg.svd(a, false) end,
    eigh = function() torch.linalg.eigh(s) end,
    qr = function() torch.linalg.qr(a) end,
    eig = function() torch.linalg.eig(a) end,
  }
  for _, op in ipairs(n == 0 and { "svd", "eigh", "qr" } or { "svd", "eigh", "qr", "eig" }) do
    local f = work[op]
    if n == 0 then
      local t0 = os.clock(); f(); T:set(op .. "_" .. key, os.clock() - t0)
    else
      T:bench(op .. "_" .. key, n, function(k) for _ = 1, k do f() end end)
    end
  end
end
T:report()
