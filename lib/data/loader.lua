-- data/loader.lua — DataLoader: batches from a dataset, in this process or in
-- forked worker processes.
--
-- Workers. Each worker is a fork() of this process with one SOCK_SEQPACKET
-- socketpair to the parent: the parent writes tasks ({id, idx}: the indices of
-- one batch) to it and the worker answers on the same socket ({id, batch},
-- {id, err}, or {id, done} when an iterable dataset runs dry). The worker
-- collates straight into shared memory (memfd); torch._data.send passes the
-- memfds with SCM_RIGHTS and the parent maps the pages, so batch bytes are
-- never copied between processes. At most prefetch_factor tasks per worker
-- are in flight; task ids are handed out in sampler order, round-robin over
-- the workers, and answers wait in a reorder buffer until their turn.
--
-- A worker that dies closes its end of the socket: the parent sees EOF at
-- once and raises with the exit status (waitpid), so a dead worker never
-- hangs the loop; `timeout` (seconds) bounds a worker that is alive but stuck.
-- The worker pool is an object whose finalizer closes the sockets, kills what
-- is left and reaps every child; iterators, loaders and shutdown() all go
-- through it, so no path leaves processes or zombies behind.
local torch = torch or require("torch")
local D = torch._data
local PF = torch._profiler     -- torch.profiler's primitives: fetches become ranges while it records
local class = require "torch_class"
local dataset = require "data.dataset"
local sampler = require "data.sampler"
local collate = require "data.collate"
local data_class = dataset.data_class
-- options table for a generator argument: none at all when it is nil (an empty table is not taken as options)
local function G(g) if g ~= nil then return { generator = g } end end
local M = {}

local DONE = setmetatable({}, { __name = "DONE" })

-- ---- worker info -------------------------------------------------------------

local worker_info = nil   -- set in a worker process only
function M.get_worker_info() return worker_info end

-- parent-side sockets of every live pool (a new worker closes its copies)
local parent_socks = {}

-- ---- fetching a batch (in the parent or in a worker) ----------------------------

-- a function(task_idx) -> batch | DONE
local function make_fetcher(loader)
  local ds, cf = loader.dataset, loader.collate_fn
  local auto = loader.batch_size ~= false or loader.batch_sampler_given
  if dataset.is_iterable(ds) then
    local it
    local bs, drop = loader.batch_size, loader.drop_last
    local f = {}
    function f.reset() it = nil end
    function f.fetch()
      it = it or ds:iter()
      if not auto then
        local s = it()
        if s == nil then return DONE end
        return cf(s)
      end
      local b = {}
      for k = 1, bs do
        local s = it()
        if s == nil then break end
        b[k] = s
      end
      if #b == 0 or (drop and #b < bs) then return DONE end
      return cf(b)
    end
    return f
  end
  local f = { reset = function() end }
  local fast = cf == collate.default_collate and type(ds.collate_batch) == "function"
  function f.fetch(idx)
    if not auto then return cf(dataset.get(ds, idx)) end
    if fast then return ds:collate_batch(idx) end
    local samples = {}
    for k, i in ipairs(idx) do samples[k] = dataset.get(ds, i) end
    return cf(samples)
  end
  return f
end

-- ---- the worker process -----------------------------------------------------------

local function worker_main(loader, id, nw, seed, sock)
  -- this is a copy of the parent: drop the parent's sockets, keep ours
  for fd in pairs(parent_socks) do D.close(fd) end
  parent_socks = {}
  collate.in_worker = true
  -- a profiler running in the parent is not this process's: its hooks off, its events dropped
  -- (the fetch times go back with each batch instead)
  PF.stop(); PF.clear()
  worker_info = { id = id, num_workers = nw, seed = seed, dataset = loader.dataset }
  torch.set_num_threads(1)
  torch.manual_seed(seed)
  local since = D.shm_serial()   -- shared-memory tensors made from here on are ours to free
  -- old objects are shared copy-on-write with the parent: a major collection
  -- writes mark bits into every page of the parent's heap, so make them rare
  collectgarbage("generational", 20, 300)
  local f
  local ok, err = xpcall(function()
    if loader.worker_init_fn then loader.worker_init_fn(id) end
    f = make_fetcher(loader)
  end, debug.traceback)
  if not ok then
    D.send(sock, { init_err = "in worker_init_fn:\n" .. tostring(err) })
    D.exit(1)
  end
  while true do
    local got, msg = D.recv(sock)
    if not got or msg.stop then D.exit(0) end   -- EOF: the parent is done with us
    if msg.reset then f.reset()
    else
      local t0 = msg.prof and PF.now_ns()
      local fok, res = xpcall(f.fetch, debug.traceback, msg.idx)
      local reply
      if not fok then reply = { id = msg.id, err = tostring(res) }
      elseif res == DONE then reply = { id = msg.id, done = true }
      elseif res == nil then reply = { id = msg.id, err = "collate_fn returned nil" }
      else reply = { id = msg.id, batch = res } end
      -- the parent's profiler records this fetch on the worker's own track
      if t0 then reply.prof_t0, reply.prof_t1, reply.prof_pid = t0, PF.now_ns(), D.getpid() end
      local sent, serr = D.send(sock, reply)
      if not sent then
        if serr:find("Broken pipe", 1, true) or serr:find("reset", 1, true) then D.exit(0) end
        D.send(sock, { id = msg.id, err = "cannot send the batch to the parent: " .. serr })
      end
      D.free_shm(reply, since)
      reply, res = nil, nil
    end
  end
end

-- ---- the worker pool ---------------------------------------------------------------

local Pool = class("data.loader.WorkerPool")

local function shutdown_pool(p)
  if p.closed then return end
  p.closed = true
  if D.getpid() ~= p.owner then return end   -- a forked copy: not ours to reap
  for _, w in ipairs(p.workers) do
    if w.sock then parent_socks[w.sock] = nil; D.close(w.sock); w.sock = nil end
  end
  -- the workers see EOF and leave; give them a moment, then make sure
  local deadline = D.now() + 0.5
  for _, w in ipairs(p.workers) do
    while not w.reaped do
      local st = D.waitpid(w.pid, false)
      if st ~= "running" then w.reaped = true
      elseif D.now() > deadline then
        D.kill(w.pid, 9)
        D.waitpid(w.pid, true)
        w.reaped = true
      else D.sleep(0.002) end
    end
  end
end
Pool.__gc = shutdown_pool
Pool.__close = shutdown_pool
Pool.shutdown = shutdown_pool

-- Pool(loader, base_seed): forks loader.num_workers workers
function Pool:__init(loader, base_seed)
  self.workers, self.owner, self.closed = {}, D.getpid(), false
  self.user = setmetatable({}, { __mode = "v" })   -- the epoch it serves, held weakly
  local nw = loader.num_workers
  for id = 1, nw do
    local a, b = D.socketpair()
    if not a then shutdown_pool(self); error("DataLoader: " .. b, 0) end
    local seed = base_seed + id
    local pid, ferr = D.fork()
    if not pid then D.close(a); D.close(b); shutdown_pool(self); error("DataLoader: " .. ferr, 0) end
    if pid == 0 then
      D.close(a)
      local ok, e = xpcall(worker_main, debug.traceback, loader, id, nw, seed, b)
      if not ok then pcall(D.send, b, { init_err = tostring(e) }) end
      D.exit(1)
    end
    D.close(b)
    parent_socks[a] = true
    self.workers[id] = { id = id, pid = pid, sock = a, outstanding = 0, active = true }
  end
end

-- how a worker ended, for the error message
local function describe_exit(w)
  local st, code, name
  for _ = 1, 100 do   -- EOF comes a hair before the kernel marks the child dead
    st, code, name = D.waitpid(w.pid, false)
    if st ~= "running" then break end
    D.sleep(0.005)
  end
  if st ~= "running" then w.reaped = true end
  if st == "signaled" then return ("killed by signal %d (%s)"):format(code, name) end
  if st == "exited" then return ("exited with status %d"):format(code) end
  return "closed its connection"
end

-- ---- iterators --------------------------------------------------------------------

local Iter = class("data.loader.Iterator")

local function draw_seed(gen)
  -- as PyTorch: one draw from the loader's generator per epoch, with or
  -- without workers, so the sampler's random stream is the same either way
  return torch.randint(0, 1 << 62, { 1 }, G(gen))[1]
end

-- does an unfinished iterator of loader hold live workers?
local function workers_held(loader)
  for it in pairs(loader._iters) do
    if not it.finished and it.pool and not it.pool.closed then return true end
  end
  return false
end

-- the persistent pool, drained of what an abandoned epoch left in flight, when no unfinished
-- iterator uses it; nil when there is none or it is busy
local function take_persistent(loader)
  local pool = loader._pool
  if pool and pool.closed then loader._pool = nil; return nil end
  if not pool then return nil end
  local user = pool.user[1]
  if user and not user.finished then return nil end   -- another loop of this loader is on it
  for _, w in ipairs(pool.workers) do
    while w.outstanding > 0 do
      local ready = D.poll({ w.sock }, loader.timeout > 0 and math.floor(loader.timeout * 1000) or -1)
      if #ready == 0 then
        shutdown_pool(pool); loader._pool = nil
        error("DataLoader: timed out draining a persistent worker", 0)
      end
      local ok = D.recv(w.sock)
      if not ok then shutdown_pool(pool); loader._pool = nil; return nil end
      w.outstanding = w.outstanding - 1
    end
    w.active = true
    if dataset.is_iterable(loader.dataset) then D.send(w.sock, { reset = true }) end
  end
  return pool
end

-- Iter(loader): one epoch of loader
--
-- Several epochs of one loader may be open at once (nested loops, a loop left by break
-- whose iterator is not collected yet). Each has workers of its own, except that the
-- persistent pool serves one epoch at a time: an epoch that finds it busy gets a pool of its
-- own that ends with it. Before forking, an epoch whose loader has another unfinished epoch
-- holding workers runs a full garbage collection: an abandoned `for b in loader do` loop is
-- found dead that way (nothing refers to its last batch any more) and its workers end then,
-- rather than at some later collection.
function Iter:__init(loader)
  self.loader, self.owner = loader, D.getpid()
  loader._iters[self] = true
  self.base_seed = draw_seed(loader.generator)
  if not dataset.is_iterable(loader.dataset) then
    self.next_idx = sampler.iter_of(loader.index_sampler)
  end
  if loader.num_workers == 0 then
    self.fetcher = make_fetcher(loader)
    return
  end
  -- twice: an abandoned loop's last value may be a tensor, whose finalizer keeps the
  -- loop's entry (and so its iterator) for one more cycle
  if workers_held(loader) then
    collectgarbage()
    if workers_held(loader) then collectgarbage() end
  end
  local pool = loader.persistent_workers and take_persistent(loader)
  if pool then
    self.owns_pool = false
  else
    pool = Pool(loader, self.base_seed)
    if loader.persistent_workers and not loader._pool then
      loader._pool = pool
      self.owns_pool = false
    else
      self.owns_pool = true
    end
  end
  pool.user[1] = self
  self.pool = pool
  self.send_idx, self.rcvd_idx, self.buffer, self.task_worker, self.rr = 0, 1, {}, {}, 0
  for _ = 1, loader.prefetch_factor * loader.num_workers do self:_try_put() end
end

function Iter:_try_put()
  if self.exhausted then return end
  local ws, nw = self.pool.workers, #self.pool.workers
  local w
  for _ = 1, nw do
    self.rr = self.rr % nw + 1
    if ws[self.rr].active then w = ws[self.rr]; break end
  end
  if not w then self.exhausted = true; return end
  local idx
  if self.next_idx then
    idx = self.next_idx()
    if idx == nil then self.exhausted = true; return end
  end
  self.send_idx = self.send_idx + 1
  local ok = D.send(w.sock, { id = self.send_idx, idx = idx, prof = PF.recording() or nil })
  if not ok then self:_worker_gone(w) end
  self.task_worker[self.send_idx] = w
  w.outstanding = w.outstanding + 1
end

function Iter:_fail(msg)
  self:close(true)
  error(msg, 0)
end

-- a worker's socket is closed: report what it said last, or how it ended
function Iter:_worker_gone(w)
  while #D.poll({ w.sock }, 0) > 0 do
    local ok, msg = D.recv(w.sock)
    if not ok then break end
    self:_check(w, msg)
  end
  self:_fail(("DataLoader worker %d (pid %d) exited unexpectedly: %s"):format(w.id, w.pid, describe_exit(w)))
end

function Iter:_check(w, msg)
  if msg.init_err then
    self:_fail(("DataLoader worker %d (pid %d) failed to start: %s"):format(w.id, w.pid, msg.init_err))
  end
  if msg.err then
    self:_fail(("DataLoader worker %d (pid %d) raised an error while fetching batch %d:\n%s")
      :format(w.id, w.pid, msg.id, msg.err))
  end
end

-- wait for answers; store them in the reorder buffer
function Iter:_receive()
  local fds, owners = {}, {}
  for _, w in ipairs(self.pool.workers) do
    if w.outstanding > 0 then fds[#fds + 1] = w.sock; owners[#owners + 1] = w end
  end
  if #fds == 0 then self:_fail("DataLoader: internal error: waiting with no batch in flight") end
  local timeout = self.loader.timeout
  local ready = D.poll(fds, timeout > 0 and math.floor(timeout * 1000) or -1)
  if #ready == 0 then
    if timeout > 0 then
      local w = self.task_worker[self.rcvd_idx]
      self:_fail(("DataLoader timed out after %g s waiting for batch %d from worker %d (pid %d)")
        :format(timeout, self.rcvd_idx, w and w.id or 0, w and w.pid or 0))
    end
    return   -- interrupted by a signal
  end
  for _, k in ipairs(ready) do
    local w = owners[k]
    local ok, msg = D.recv(w.sock)
    if not ok then self:_worker_gone(w) end
    self:_check(w, msg)
    if msg.prof_t0 then
      PF.add_event{ name = "DataLoader worker fetch", t0 = msg.prof_t0, t1 = msg.prof_t1, pid = msg.prof_pid,
                    tid = msg.prof_pid }
    end
    w.outstanding = w.outstanding - 1
    if msg.done then
      w.active = false
      self.buffer[msg.id] = DONE
    else
      self.buffer[msg.id] = msg.batch
    end
  end
end

-- the next batch; while torch.profiler records, each call is a range named as PyTorch's
function Iter:next()
  if not PF.recording() then return self:_next() end
  PF.range_push(self.loader.num_workers == 0 and "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
    or "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__")
  local ok, b = pcall(self._next, self)
  PF.range_pop()
  if not ok then error(b, 0) end
  return b
end

function Iter:_next()
  if self.finished then return nil end
  if self.loader.num_workers == 0 then
    local b
    if self.next_idx then
      local idx = self.next_idx()
      if idx == nil then self:close(); return nil end
      b = self.fetcher.fetch(idx)
    else
      b = self.fetcher.fetch()
      if b == DONE then self:close(); return nil end
    end
    return b
  end
  while true do
    local b = self.buffer[self.rcvd_idx]
    if b ~= nil then
      self.buffer[self.rcvd_idx] = nil
      self.task_worker[self.rcvd_idx] = nil
      self.rcvd_idx = self.rcvd_idx + 1
      self:_try_put()
      if b ~= DONE then return b end
    elseif self.rcvd_idx > self.send_idx then
      self:_try_put()
      if self.rcvd_idx > self.send_idx then self:close(); return nil end
    else
      self:_receive()
    end
  end
end

-- end the epoch: its own workers go now; the persistent ones stay with the loader (an
-- abandoned epoch's batches are drained when the next one starts).
-- force: shut the pool down even when persistent (after an error).
function Iter:close(force)
  if self.finished then return end
  self.finished = true
  self.loader._iters[self] = nil
  local pool = self.pool
  if pool and D.getpid() == self.owner then
    if force or self.owns_pool then
      shutdown_pool(pool)
      if self.loader._pool == pool then self.loader._pool = nil end
    end
  end
  self.buffer = nil
end
Iter.__close = function(self) self:close() end
Iter.__gc = function(self)
  -- a dropped iterator takes its own workers along (the persistent ones stay)
  if not self.finished and self.pool and self.owns_pool and D.getpid() == self.owner then
    shutdown_pool(self.pool)
  end
  self.finished = true
end

-- what a step of a loop gives for batch b: b, or with unpack = true its fields
-- pin_memory = true with a CUDA device: the batch's cpu tensors copied into page-locked
-- memory (x:pin_memory()), in the main process, so x:cuda({non_blocking = true}) of them is
-- not waited for; plain tables are walked (their tensors replaced in place), as PyTorch's
-- pin_memory walks lists and dicts
local function pin_batch(b, depth)
  if torch.is_tensor(b) then
    return b.device.type == "cpu" and b:pin_memory() or b
  end
  if type(b) == "table" and getmetatable(b) == nil and depth < 32 then
    for k, v in pairs(b) do b[k] = pin_batch(v, depth + 1) end
  end
  return b
end

local function deliver(it, b)
  local loader = it.loader
  if b ~= nil and loader._pin then b = pin_batch(b, 0) end
  if b == nil or not loader.unpack then return b end
  local plain = type(b) == "table" and getmetatable(b) == nil
  local n, count, named = plain and #b or 0, 0, false
  if plain then
    for k in next, b do
      count = count + 1
      if math.type(k) ~= "integer" or k < 1 or k > n then named = true end
    end
  end
  -- a list with no names and no holes (a hole first would end the loop)
  local ok = plain and n > 0 and not named and count == n
  if not ok then
    local what = torch.is_tensor(b) and "a tensor" or type(b) ~= "table" and ("a " .. type(b))
      or (getmetatable(b) ~= nil and "an object") or (next(b) == nil and "an empty table")
      or (named and "a table with named fields") or "a list with nil fields"
    it:close()
    error(("data.DataLoader: unpack = true gives the fields of a list batch {x, y, ...} as separate values, " ..
      "but the batch is %s; use `for batch in loader do` (unpack = false) for such batches"):format(what), 0)
  end
  return table.unpack(b, 1, n)
end

Iter.__call = function(self) return deliver(self, self:next()) end

-- ---- DataLoader ---------------------------------------------------------------------

local DataLoader = data_class("data.DataLoader")
M.DataLoader = DataLoader

-- PyTorch's order (1.13), then lutorch's own `unpack`
local SIG = class.signature("data.DataLoader",
  "dataset, batch_size=1, shuffle=false, sampler=nil, batch_sampler=nil, num_workers=0, collate_fn=nil, " ..
  "pin_memory=false, drop_last=false, timeout=0, worker_init_fn=nil, multiprocessing_context=nil, " ..
  "generator=nil, *, prefetch_factor=2, persistent_workers=false, pin_memory_device='', unpack=false")

-- warnings go through here (tests replace it)
function M.warn(msg) io.stderr:write("warning: ", msg, "\n") end
local warned = {}
local function warn_once(key, msg)
  if warned[key] then return end
  warned[key] = true
  M.warn(msg)
end

local function callable(f)
  if type(f) == "function" then return true end
  local mt = getmetatable(f)
  return mt ~= nil and mt.__call ~= nil
end

function DataLoader:__init(...)
  local o = dataset.parse(SIG, 1, ...)
  local ds = o.dataset
  if ds == nil then error("data.DataLoader: argument 'dataset' is required", 3) end
  self.dataset = ds
  local iterable = dataset.is_iterable(ds)
  self.batch_size = o.batch_size
  self.drop_last = o.drop_last
  self.num_workers = o.num_workers
  self.prefetch_factor = o.prefetch_factor
  self.persistent_workers = o.persistent_workers
  self.worker_init_fn = o.worker_init_fn
  self.generator = o.generator
  self.timeout = o.timeout
  self.unpack = o.unpack
  self.pin_memory = o.pin_memory
  for _, k in ipairs({ "shuffle", "drop_last", "persistent_workers", "pin_memory", "unpack" }) do
    if type(o[k]) ~= "boolean" then
      error(("data.DataLoader: %s should be a boolean, got %s"):format(k, tostring(o[k])), 3)
    end
  end
  local bs = self.batch_size
  if bs ~= false and (math.type(bs) ~= "integer" or bs < 1) then
    error("data.DataLoader: batch_size should be a positive integer (or false to turn batching off), got " .. tostring(bs), 3)
  end
  if math.type(self.num_workers) ~= "integer" or self.num_workers < 0 then
    error("data.DataLoader: num_workers should be a non-negative integer, got " .. tostring(self.num_workers), 3)
  end
  if math.type(self.prefetch_factor) ~= "integer" or self.prefetch_factor < 1 then
    error("data.DataLoader: prefetch_factor should be a positive integer, got " .. tostring(self.prefetch_factor), 3)
  end
  if type(self.timeout) ~= "number" or self.timeout < 0 then
    error("data.DataLoader: timeout should be a non-negative number of seconds, got " .. tostring(self.timeout), 3)
  end
  for _, k in ipairs({ "collate_fn", "worker_init_fn" }) do
    if o[k] ~= nil and not callable(o[k]) then
      error(("data.DataLoader: %s should be a function, got %s"):format(k, type(o[k])), 3)
    end
  end
  local ctx = o.multiprocessing_context
  if ctx ~= nil and ctx ~= "fork" then
    error(("data.DataLoader: multiprocessing_context %s is not supported: workers are always fork()ed " ..
      "(give nil or 'fork')"):format(type(ctx) == "string" and ("'" .. ctx .. "'") or tostring(ctx)), 3)
  end
  if type(o.pin_memory_device) ~= "string" then
    error("data.DataLoader: pin_memory_device should be a string, got " .. tostring(o.pin_memory_device), 3)
  end
  if self.persistent_workers and self.num_workers == 0 then
    error("data.DataLoader: persistent_workers option needs num_workers > 0", 3)
  end
  if self.pin_memory then
    -- PyTorch pins batches for faster copies to a GPU (deliver, pin_batch), and warns and
    -- goes on without when there is none: the batches are the same either way
    if torch.cuda.is_available() then
      self._pin = true
    else
      warn_once("pin_memory", "data.DataLoader: pin_memory=true has no effect: no CUDA device is present (" ..
        tostring(torch.cuda.unavailable_reason()) .. "); batches are ordinary CPU tensors")
    end
  end
  if iterable then
    if o.shuffle then error("data.DataLoader: an iterable dataset cannot be shuffled (shuffle=true)", 3) end
    if o.sampler or o.batch_sampler then error("data.DataLoader: an iterable dataset takes no sampler or batch_sampler", 3) end
  else
    if o.sampler and o.shuffle then error("data.DataLoader: sampler option is mutually exclusive with shuffle", 3) end
    if o.batch_sampler then
      if o.batch_size ~= 1 or o.shuffle or o.sampler or o.drop_last then
        error("data.DataLoader: batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last", 3)
      end
      self.batch_size = nil
      self.batch_sampler_given = true
      self.index_sampler = o.batch_sampler
    else
      local s = o.sampler
      if not s then
        s = o.shuffle and sampler.RandomSampler(ds, G(self.generator)) or sampler.SequentialSampler(ds, {})
      end
      self.sampler = s
      if bs == false then
        if self.drop_last then error("data.DataLoader: batch_size=false option disables auto-batching and is mutually exclusive with drop_last", 3) end
        self.index_sampler = s
      else
        self.index_sampler = sampler.BatchSampler(s, bs, self.drop_last)
      end
    end
    self.batch_sampler = self.index_sampler ~= self.sampler and self.index_sampler or nil
  end
  self.collate_fn = o.collate_fn or (self.batch_size == false and collate.default_convert or collate.default_collate)
  -- the epochs of this loader not known to be over (held weakly: iter() and plain loops)
  self._iters = setmetatable({}, { __mode = "k" })
  -- plain loops: the value a loop last got -> its epoch (see DataLoader:__call)
  self._loops = setmetatable({}, { __mode = "k" })
end

function DataLoader:len()
  if dataset.is_iterable(self.dataset) then
    local ok, n = pcall(dataset.len, self.dataset)
    if not ok or type(n) ~= "number" then error("data.DataLoader: this iterable dataset has no length", 2) end
    if self.batch_size == false then return n end
    return self.drop_last and n // self.batch_size or (n + self.batch_size - 1) // self.batch_size
  end
  return sampler.len_of(self.index_sampler)
end

-- for batch in loader:iter() do ... end: one epoch; the fourth value closes it, so a break
-- (or an error) out of the loop ends its workers at once
function DataLoader:iter()
  local it = Iter(self)
  return Iter.__call, it, nil, it
end

-- for batch in loader do ... end: a new epoch each time a loop starts.
--
-- Lua calls loader(nil, control) at each step, control being the first value the step
-- before returned (nil the first time), and gives the loop no other identity. So each value
-- a loop last got is mapped to that loop's epoch, in a table with weak keys: a live loop
-- holds its control value, which keeps its epoch; a loop left by break or by an error lets go
-- of it, and its epoch (and workers) can be collected. Nested loops over one loader are two
-- epochs told apart by their batches. Should two open epochs last have given the same value
-- (a collate_fn that returns a number or a cached object), the next step cannot tell whose
-- turn it is, and it is an error rather than a guess.
local SHARED = {}   -- metatable of a list of epochs that last gave the same value

local function attach(loops, key, it)
  local e = loops[key]
  if e == nil or e == it or (getmetatable(e) ~= SHARED and e.finished) then
    loops[key] = it
  elseif getmetatable(e) == SHARED then
    for _, x in ipairs(e) do if x == it then return end end
    e[#e + 1] = it
  else
    loops[key] = setmetatable({ e, it }, SHARED)
  end
end

local function detach(loops, key, it)
  local e = loops[key]
  if e == it then loops[key] = nil; return end
  if getmetatable(e) ~= SHARED then return end
  for k = #e, 1, -1 do
    if e[k] == it or e[k].finished then table.remove(e, k) end
  end
  if #e == 0 then loops[key] = nil elseif #e == 1 then loops[key] = e[1] end
end

local function value_text(v)
  if type(v) == "string" then return ("'%s'"):format(#v > 40 and v:sub(1, 37) .. "..." or v) end
  if torch.is_tensor(v) then return "a tensor" end
  return tostring(v)
end

function DataLoader:__call(_, control)
  local loops = self._loops
  local it
  if control == nil then
    it = Iter(self)
  else
    local e = loops[control]
    if e == nil then
      error("data.DataLoader: called with a value that is not the batch a loop over this loader last got " ..
        "(a loop calls loader(nil, last_batch); use loader:iter() to step by hand)", 2)
    end
    if getmetatable(e) == SHARED then
      local open = {}
      for _, x in ipairs(e) do if not x.finished then open[#open + 1] = x end end
      if #open > 1 then
        error(("data.DataLoader: %d loops over this loader last got the same batch (%s), so the next step " ..
          "cannot tell which loop it belongs to; give each loop its own epoch with `for b in loader:iter() do` " ..
          "(which also closes at a break), or make collate_fn return a new table per batch"):format(
          #open, value_text(control)), 2)
      end
      it = open[1] or e[1]
    else
      it = e
    end
    detach(loops, control, it)
  end
  local r = table.pack(deliver(it, it:next()))
  local v = r[1]
  if v == nil then return nil end
  if v ~= v then
    error("data.DataLoader: the batch is NaN, which a for loop cannot pass back as its control value; " ..
      "use `for b in loader:iter() do`", 2)
  end
  attach(loops, v, it)
  return table.unpack(r, 1, r.n)
end

-- stop every worker (persistent ones too) now; loops still running end at their next step
function DataLoader:shutdown()
  for it in pairs(self._iters) do it:close(true) end
  if self._pool then shutdown_pool(self._pool); self._pool = nil end
end
DataLoader.__close = DataLoader.shutdown
DataLoader.__gc = function(self)
  if self._pool then shutdown_pool(self._pool) end
end

-- pids of the live workers of this loader, every open epoch's and the persistent ones
-- (tests and debugging)
function DataLoader:worker_pids()
  local out, seen = {}, {}
  local function add(pool)
    if pool and not pool.closed and not seen[pool] then
      seen[pool] = true
      for _, w in ipairs(pool.workers) do out[#out + 1] = w.pid end
    end
  end
  add(self._pool)
  for it in pairs(self._iters) do
    if not it.finished then add(it.pool) end
  end
  return out
end

return M
