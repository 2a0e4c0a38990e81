-- profiler_bench.lua MODE [N] — the per-op cost of a tiny op (add of two 1-element
-- tensors) with torch.profiler off, recording ("on": ops, backward nodes, ranges) and
-- recording with record_shapes and profile_memory ("full"). Prints "MODE microseconds",
-- the median of 5 timed loops of N ops after a warm-up. "off" uses nothing newer than
-- torch.time, so it also runs on a build from before the profiler (bench/profiler.sh's
-- BASE). The recording modes use the primitives under torch.profiler (torch._profiler)
-- and drop the events between loops, so the figure is the recording, not the Lua tables
-- a profile object builds when it finishes.
local mode = arg[1] or "off"
local N = math.tointeger(tonumber(arg[2] or "200000"))
local a, b = torch.ones(1), torch.ones(1)
local function loop(n) for _ = 1, n do local _ = a + b end end
loop(20000)
local P = torch._profiler
if mode == "on" then P.start{}
elseif mode == "full" then P.start{ record_shapes = true, profile_memory = true }
elseif mode ~= "off" then error("profiler_bench.lua: MODE is off, on or full") end
local reps = {}
for r = 1, 5 do
  collectgarbage()
  local t0 = torch.time()
  loop(N)
  reps[r] = (torch.time() - t0) / N * 1e6
  if mode ~= "off" then P.clear() end
end
if mode ~= "off" then P.stop(); P.clear() end
table.sort(reps)
print(("%s %.4f"):format(mode, reps[3]))
