-- fft.lua — lutorch's side of bench/fft.sh: torch.fft.fft and rfft of 2^20 and of the
-- prime 1000003 points, float64 (complex128) and float32 (complex64), one thread.
-- Prints "lutorch OP DTYPE N MS": the median of REPS calls after one warm-up call
-- (which also makes and caches the plan). Usage: lutorch bench/fft.lua [REPS]
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path
local reps = tonumber(arg[1]) or 7
torch.set_num_threads(1)
torch.manual_seed(1)
local function median(t) table.sort(t); return t[(#t + 1) // 2] end
for _, dt in ipairs { torch.float64, torch.float32 } do
  for _, n in ipairs { 1 << 20, 1000003 } do
    local x = torch.randn(n, { dtype = dt })
    local z = torch.fft.fft(x)                       -- a complex input of the same length
    for _, case in ipairs { { "fft", torch.fft.fft, z }, { "rfft", torch.fft.rfft, x } } do
      local f, a = case[2], case[3]
      f(a)
      local ts = {}
      for r = 1, reps do
        local t0 = os.clock()
        f(a)
        ts[r] = os.clock() - t0
      end
      print(("lutorch %s %s %d %.2f"):format(case[1], tostring(dt):gsub("^torch%.", ""), n, median(ts) * 1e3))
    end
  end
end
