-- distributed/futures.lua — torch.futures: a Future holds a value some work will produce.
--
--   local fut = dist.all_reduce(t, {async_op = true}):get_future()   -- value: {t}
--   local half = fut:then_(function(f) return f:value()[1] / 2 end)  -- or half = fut["then"](fut, fn)
--   print(half:wait())
--
-- Lua has no threads to complete a future in the background, so a future is completed
-- either by set_result / set_exception, or by its driver: a function that blocks until
-- the work behind it is done (Work:get_future gives one that waits for the collective).
-- wait() runs the driver; a future chained with then_ drives its parent, whose completion
-- runs the callback that completes the child. A future nothing can complete makes wait()
-- an error rather than a hang. Reached as torch.distributed.futures (torch.futures once
-- the distributed library is loaded).
local class = require "torch_class"

local futures = {}

local Future = class("torch.futures.Future")
futures.Future = Future

local PENDING, DONE, FAILED = 0, 1, 2

function Future:__init()
  self._state = PENDING
  self._callbacks = {}
end

local function check_fn(fn, method, what)
  if type(fn) ~= "function" then
    error(("Future.%s: '%s' must be a function, got %s"):format(method, what, type(fn)), 3)
  end
end

-- a driver returns this when it completes the future some other way (or cannot)
local NOTHING = {}

-- a future completed with what driver() returns (driver blocks until the work is done);
-- poll() says without blocking whether driver() would return at once
function futures._driven(driver, poll)
  local f = Future()
  f._driver, f._poll = driver, poll
  return f
end

local function complete(self, state, v, method)
  if self._state ~= PENDING then error("Future." .. method .. ": the future is already completed", 3) end
  self._state = state
  if state == DONE then self._value = v else self._error = v end
  self._driver, self._poll = nil, nil
  local cbs = self._callbacks
  self._callbacks = {}
  -- every callback runs; the first error among them is raised afterwards
  local first
  for _, cb in ipairs(cbs) do
    local ok, err = pcall(cb, self)
    if not ok and first == nil then first = err end
  end
  if first ~= nil then error(first, 0) end
end

--- fut:set_result(v): complete the future with v (runs its callbacks)
function Future:set_result(v) complete(self, DONE, v, "set_result") end

--- fut:set_exception(err): complete the future with an error: wait() and value() raise it
function Future:set_exception(err) complete(self, FAILED, err, "set_exception") end

-- run the driver (once): its value or its error completes the future
local function drive(self)
  local d = self._driver
  if self._state ~= PENDING or not d then return end
  self._driver, self._poll = nil, nil
  local ok, v = pcall(d)
  if self._state ~= PENDING then return end
  if not ok then self:set_exception(v) elseif v ~= NOTHING then self:set_result(v) end
end

--- fut:done(): true once completed (never blocks)
function Future:done()
  if self._state == PENDING and self._poll and self._poll() then drive(self) end
  return self._state ~= PENDING
end

--- fut:wait(): blocks until completed; the value, or raises the future's error
function Future:wait()
  drive(self)
  if self._state == PENDING then
    error("Future.wait: the future is not completed and nothing will complete it " ..
          "(no set_result, and it waits on no work)", 2)
  end
  if self._state == FAILED then error(self._error, 0) end
  return self._value
end

--- fut:value(): the value of a completed future (an error before, or the future's error)
function Future:value()
  if self._state == PENDING then error("Future.value: the future is not completed yet (call wait())", 2) end
  if self._state == FAILED then error(self._error, 0) end
  return self._value
end

--- fut:add_done_callback(fn): fn(fut) when the future completes (now, if it has)
function Future:add_done_callback(fn)
  check_fn(fn, "add_done_callback", "callback")
  if self._state ~= PENDING then fn(self) else self._callbacks[#self._callbacks + 1] = fn end
end

--- fut:then_(fn) (PyTorch's fut.then; also fut["then"](fut, fn)): a new future completed with
--- fn(fut) once fut completes, or with fn's error
function Future:then_(fn)
  check_fn(fn, "then_", "callback")
  local child = Future()
  local function run(parent)
    local ok, v = pcall(fn, parent)
    if ok then child:set_result(v) else child:set_exception(v) end
  end
  if self._state ~= PENDING then
    run(self)
  else
    self._callbacks[#self._callbacks + 1] = run
    -- waiting on the child waits on the parent, whose completion runs `run`
    child._driver = function() drive(self); return NOTHING end
    child._poll = function() return self:done() end
  end
  return child
end
Future["then"] = Future.then_

function Future:__tostring()
  local s = self._state == PENDING and "pending" or self._state == DONE and "done" or "failed"
  return ("Future(%s)"):format(s)
end

local function check_list(list, fn)
  if type(list) ~= "table" then error(("%s: 'futures' must be a list of futures, got %s"):format(fn, type(list)), 3) end
  for i, f in ipairs(list) do
    if getmetatable(f) ~= Future then error(("%s: futures[%d] is not a Future"):format(fn, i), 3) end
  end
end

--- collect_all(list): a future completed with the list itself once every future of it is
function futures.collect_all(list)
  check_list(list, "collect_all")
  local all, left = Future(), #list
  local function one() left = left - 1; if left == 0 then all:set_result(list) end end
  if left == 0 then all:set_result(list); return all end
  for _, f in ipairs(list) do f:add_done_callback(one) end
  all._driver = function() for _, f in ipairs(list) do drive(f) end; return NOTHING end
  all._poll = function()
    for _, f in ipairs(list) do if not f:done() then return false end end
    return true
  end
  return all
end

--- wait_all(list): waits for every future; the list of their values (raises the first error)
function futures.wait_all(list)
  check_list(list, "wait_all")
  local out = {}
  for i, f in ipairs(list) do out[i] = f:wait() end
  return out
end

return futures
