-- timing.lua — the timing harness shared by the bench scripts (twin of timing.py).
--   package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path
--   local T = require("timing").new{ warmup = 10, fmt = "%.4f" }
--   T:bench("key", n, function(n) for _ = 1, n do ... end end)
--   T:report()                          -- prints "key microseconds", in bench order
-- Each figure is the median over `reps` runs of fn(n), per call, after one warm-up
-- run. Options (all optional):
--   reps    runs per figure (default: tonumber(arg[1]) or 5)
--   warmup  a number d: warm up with fn(max(1, n // d)) (default 5); or a
--           function(n) returning the warm-up count
--   fmt     format of the microseconds in report (default "%.2f")
--   clock   default os.clock: the scripts run pinned to one core and one thread, where
--           CPU time is the wall time of an idle machine and other load does not count
local M = {}

function M.median(t) table.sort(t); return t[(#t + 1) // 2] end

local Timer = {}
Timer.__index = Timer

function M.new(opts)
  opts = opts or {}
  local warmup = opts.warmup or 5
  if type(warmup) == "number" then
    local d = warmup
    warmup = function(n) return math.max(1, n // d) end
  end
  return setmetatable({
    reps = opts.reps or tonumber(arg and arg[1]) or 5,
    warmup = warmup,
    fmt = opts.fmt or "%.2f",
    clock = opts.clock or os.clock,
    keys = {},
    r = {},
  }, Timer)
end

-- seconds per call of fn(n): the median of reps runs, after a warm-up run
function Timer:time(n, fn)
  local clock = self.clock
  fn(self.warmup(n))
  local ts = {}
  for _ = 1, self.reps do
    local t0 = clock()
    fn(n)
    ts[#ts + 1] = (clock() - t0) / n
  end
  return M.median(ts)
end

-- records a figure given in seconds (a new key keeps its place; a repeated one is overwritten)
function Timer:set(key, seconds)
  if self.r[key] == nil then self.keys[#self.keys + 1] = key end
  self.r[key] = seconds
end

function Timer:bench(key, n, fn) self:set(key, self:time(n, fn)); return self.r[key] end

function Timer:report()
  local line = "%s " .. self.fmt
  for _, key in ipairs(self.keys) do print(line:format(key, self.r[key] * 1e6)) end
end

return M
