-- timer.lua — torch.Timer, Torch7's stopwatch: time() gives {real=, user=, sys=}
-- seconds (real on a monotonic wall clock, user + sys as the process's CPU time).
local torch = ...

local Timer = { __name = "torch.Timer" }
Timer.__index = Timer

function torch.Timer()
  return setmetatable({}, Timer):reset()
end

function Timer:reset()
  self._real, self._cpu = 0, 0
  self._t0, self._c0 = torch.time(), os.clock()
  self._running = true
  return self
end

function Timer:stop()
  if self._running then
    self._real = self._real + torch.time() - self._t0
    self._cpu = self._cpu + os.clock() - self._c0
    self._running = false
  end
  return self
end

function Timer:resume()
  if not self._running then
    self._t0, self._c0 = torch.time(), os.clock()
    self._running = true
  end
  return self
end

function Timer:time()
  local real, cpu = self._real, self._cpu
  if self._running then
    real = real + torch.time() - self._t0
    cpu = cpu + os.clock() - self._c0
  end
  return { real = real, user = cpu, sys = 0 }
end

Timer.__tostring = function(t) return ("torch.Timer(%.3f s)"):format(t:time().real) end
