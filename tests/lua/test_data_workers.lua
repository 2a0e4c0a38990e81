-- DataLoader worker processes: ordering, errors, death, cleanup, shared memory.
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path
local T = require "testing"
local data = require "data"
local D = torch._data

local function children()
  local f = io.open("/proc/self/task/" .. D.getpid() .. "/children")
  local s = f and f:read("a") or ""
  if f then f:close() end
  local out = {}
  for pid in s:gmatch("%d+") do out[#out + 1] = tonumber(pid) end
  return out
end

-- every test must leave no child process and no extra descriptor behind
local base_fds = D.count_fds()
-- lutorch's shared memory is memfds (no name in /dev/shm); a named segment would start "lutorch"
local base_shm = D.count_fds("/dev/shm", "lutorch")
local function clean(name)
  collectgarbage(); collectgarbage()
  T.eq(#children(), 0, name .. ": child processes left")
  T.eq(D.count_fds(), base_fds, name .. ": descriptors left")
  if base_shm then T.eq(D.count_fds("/dev/shm", "lutorch"), base_shm, name .. ": /dev/shm entries left") end
end

local function batches(loader, iter)
  local out = {}
  if iter then
    for b in loader:iter() do out[#out + 1] = b end
  else
    for b in loader do out[#out + 1] = b end
  end
  return out
end

local function same(a, b)
  T.eq(#a, #b, "number of batches")
  for i = 1, #a do
    T.eq(a[i][1]:totable(), b[i][1]:totable(), "batch " .. i .. " data")
    T.eq(a[i][2]:totable(), b[i][2]:totable(), "batch " .. i .. " labels")
  end
end

local N = 103
local X = torch.arange(N * 3):float():reshape(N, 3)
local Y = torch.arange(1, N + 1)
local ds = data.TensorDataset(X, Y)

-- a map-style dataset written in Lua, with a per-sample get (no fast path)
local Slow = data.Dataset:extend("Slow")
function Slow:__init(n, opts) self.n = n; self.opts = opts or {} end
function Slow:len() return self.n end
function Slow:get(i)
  if self.opts.fail_at == i then error("bad sample " .. i) end
  if self.opts.exit_at == i and data.get_worker_info() then os.exit(3) end
  if self.opts.kill_at == i and data.get_worker_info() then D.kill(D.getpid(), 9) end
  if self.opts.hang_at == i and data.get_worker_info() then D.sleep(30) end
  local info = data.get_worker_info()
  return { x = torch.full({ 2 }, i), y = i, w = info and info.id or 0, s = "s" .. i, r = torch.rand({ 1 })[1] }
end

T.test("same batches with and without workers, same seed", function()
  for _, nw in ipairs({ 1, 2, 3 }) do
    local g0 = torch.Generator():manual_seed(42)
    local g1 = torch.Generator():manual_seed(42)
    local a = batches(data.DataLoader(ds, { batch_size = 10, shuffle = true, generator = g0 }))
    local b = batches(data.DataLoader(ds, { batch_size = 10, shuffle = true, generator = g1, num_workers = nw }))
    same(a, b)
    T.eq(#a, 11)
    T.eq(a[11][1]:size(1), 3, "partial last batch")
  end
  clean("ordering")
end)

T.test("a Lua dataset through workers: order, nested collate, worker info", function()
  local l = data.DataLoader(Slow(37), { batch_size = 4, num_workers = 3, prefetch_factor = 3 })
  local seen, workers = {}, {}
  local nb = 0
  for b in l do
    nb = nb + 1
    T.tensor(b.y, nil, { dtype = "int64" })
    T.tensor(b.x, nil, { dtype = "int64" })
    for k = 1, b.y:size(1) do
      seen[#seen + 1] = b.y[k]
      T.eq(b.x[k]:totable(), { b.y[k], b.y[k] })
      T.eq(b.s[k], "s" .. b.y[k])
    end
    workers[b.w[1]] = true
    T.ok(D.is_shm(b.x), "batch tensors arrive in shared memory")
  end
  T.eq(nb, 10)
  local want = {}
  for i = 1, 37 do want[i] = i end
  T.eq(seen, want, "sampler order")
  T.ok(workers[1] and workers[2] and workers[3], "all three workers worked")
  T.eq(data.get_worker_info(), nil, "no worker info in the parent")
  clean("lua dataset")
end)

T.test("drop_last with workers", function()
  local l = data.DataLoader(ds, { batch_size = 10, drop_last = true, num_workers = 2 })
  T.eq(#l, 10)
  local bs = batches(l)
  T.eq(#bs, 10)
  T.eq(bs[10][2]:totable()[10], 100)
  T.ok(D.is_shm(bs[1][1]) and D.is_shm(bs[1][2]), "the index_select fast path gathers into shared memory")
  clean("drop_last")
end)

T.test("worker seeds: base seed + id, reproducible per generator", function()
  local function run(seed)
    local l = data.DataLoader(Slow(8), { batch_size = 2, num_workers = 2, generator = torch.Generator():manual_seed(seed) })
    local out = {}
    for b in l do out[#out + 1] = b.r[1] end
    return out
  end
  local a, b, c = run(5), run(5), run(6)
  T.eq(a, b, "same generator seed: same worker random streams")
  T.ok(not T.deq(a, c), "another seed: other streams")
  T.ok(a[1] ~= a[2], "the two workers draw different numbers")
  local info = {}
  local l = data.DataLoader(Slow(4), { batch_size = 1, num_workers = 2,
    collate_fn = function(s) local i = data.get_worker_info(); return { id = i.id, n = i.num_workers, seed = i.seed, ds = i.dataset.n } end })
  for b in l do info[#info + 1] = b end
  T.eq(info[1].id, 1); T.eq(info[2].id, 2); T.eq(info[1].n, 2); T.eq(info[1].ds, 4)
  T.eq(info[2].seed - info[1].seed, 1)
  clean("seeds")
end)

T.test("a worker error shows the Lua error and traceback", function()
  local l = data.DataLoader(Slow(20, { fail_at = 9 }), { batch_size = 4, num_workers = 2 })
  local err = T.raises(function() for _ in l do end end, "DataLoader worker", "raised an error", "bad sample 9", "stack traceback", "test_data_workers.lua:", "in function")
  clean("worker error")
  -- the loader works again afterwards
  T.eq(#batches(data.DataLoader(ds, { batch_size = 50, num_workers = 2 })), 3)
  clean("after error")
end)

T.test("a worker that exits or is killed: an error, not a hang", function()
  local t0 = D.now()
  T.raises(function() for _ in data.DataLoader(Slow(20, { exit_at = 6 }), { batch_size = 2, num_workers = 2 }) do end end,
    "exited unexpectedly", "exited with status 3")
  T.raises(function() for _ in data.DataLoader(Slow(20, { kill_at = 3 }), { batch_size = 2, num_workers = 2 }) do end end,
    "exited unexpectedly", "signal 9")
  T.raises(function()
    for _ in data.DataLoader(ds, { batch_size = 2, num_workers = 2, worker_init_fn = function(id) if id == 2 then os.exit(7) end end }) do end
  end, "exited unexpectedly")
  T.raises(function()
    for _ in data.DataLoader(ds, { batch_size = 2, num_workers = 2, worker_init_fn = function(id) error("init boom " .. id) end }) do end
  end, "failed to start", "init boom")
  T.ok(D.now() - t0 < 10, "errors come promptly")
  clean("worker death")
end)

T.test("timeout bounds a stuck worker", function()
  local t0 = D.now()
  T.raises(function()
    for _ in data.DataLoader(Slow(8, { hang_at = 3 }), { batch_size = 1, num_workers = 2, timeout = 0.5 }) do end
  end, "timed out after 0.5 s")
  T.ok(D.now() - t0 < 5)
  clean("timeout")
end)

T.test("early break, re-iteration, <close> iterator, shutdown", function()
  local l = data.DataLoader(ds, { batch_size = 5, num_workers = 2 })
  for b in l do break end                        -- the loop form: workers live until the next loop
  T.eq(#batches(l), 21, "a new loop starts a new epoch")
  for b in l:iter() do break end                 -- the closing form: gone at the break
  T.eq(#children(), 0, "break closes the iterator's workers")
  for b in l do break end
  l:shutdown()
  T.eq(#children(), 0, "shutdown stops them")
  T.eq(#batches(l, true), 21)
  for b in l do break end
  l = nil
  clean("early break + GC of the loader")
end)

T.test("persistent workers stay across epochs", function()
  local l = data.DataLoader(ds, { batch_size = 10, num_workers = 2, persistent_workers = true, shuffle = true,
    generator = torch.Generator():manual_seed(1) })
  local e1 = batches(l)
  local pids = l:worker_pids()
  T.eq(#pids, 2)
  local e2 = batches(l)
  T.eq(l:worker_pids(), pids, "same worker processes")
  T.eq(#e1, 11); T.eq(#e2, 11)
  T.ok(not T.deq(e1[1][2]:totable(), e2[1][2]:totable()), "a new shuffle per epoch")
  for b in l:iter() do break end                 -- abandoned epoch: drained at the next one
  local e3 = batches(l)
  T.eq(#e3, 11)
  T.eq(l:worker_pids(), pids)
  -- ordering equals the single-process loader for the same seed
  local g = torch.Generator():manual_seed(1)
  local s = data.DataLoader(ds, { batch_size = 10, shuffle = true, generator = g })
  same(batches(s), e1)
  same(batches(s), e2)
  l:shutdown()
  clean("persistent")
  local l2 = data.DataLoader(ds, { batch_size = 10, num_workers = 2, persistent_workers = true })
  batches(l2)
  l2 = nil
  clean("persistent loader collected")
end)

T.test("iterable datasets in workers (sharded with worker info)", function()
  local Stream = data.IterableDataset:extend("Stream")
  function Stream:__init(n) self.n = n end
  function Stream:iter()
    local info = data.get_worker_info()
    local i, step = info and info.id or 1, info and info.num_workers or 1
    i = i - step
    return function()
      i = i + step
      if i <= self.n then return { v = i } end
    end
  end
  local all = {}
  for b in data.DataLoader(Stream(23), { batch_size = 3, num_workers = 2 }) do
    for k = 1, b.v:size(1) do all[#all + 1] = b.v[k] end
  end
  table.sort(all)
  local want = {}
  for i = 1, 23 do want[i] = i end
  T.eq(all, want)
  local single = {}
  for b in data.DataLoader(Stream(7), { batch_size = 3, drop_last = true }) do single[#single + 1] = b.v:totable() end
  T.eq(single, { { 1, 2, 3 }, { 4, 5, 6 } })
  local l = data.DataLoader(Stream(10), { batch_size = 2, num_workers = 2, persistent_workers = true })
  local c1, c2 = 0, 0
  for b in l do c1 = c1 + b.v:size(1) end
  for b in l do c2 = c2 + b.v:size(1) end
  T.eq(c1, 10); T.eq(c2, 10)
  l:shutdown()
  clean("iterable")
end)

T.test("many tensors per batch and large messages", function()
  local L = data.Dataset:extend("Many")
  function L:len() return 4 end
  function L:get(i)
    local t = {}
    for k = 1, 250 do t[k] = torch.full({ 2 }, k * 10 + i) end
    return { t = t, s = string.rep("x", 70000) }
  end
  local l = data.DataLoader(L(), { batch_size = 2, num_workers = 2,
    collate_fn = function(samples) return samples end })   -- 500 separate tensors per batch
  local n = 0
  for b in l do
    n = n + 1
    T.eq(#b, 2)
    T.eq(b[2].t[250]:totable(), { 2500 + 2 * n, 2500 + 2 * n })
    T.eq(#b[1].s, 70000)
  end
  T.eq(n, 2)
  clean("many tensors")
end)

T.test("a worker frees only the shared memory it made", function()
  local held = D.shm_empty(torch.float32, { 3 })   -- made before the fork, part of the dataset
  held:fill_(7)
  local l = data.DataLoader({ held, held, held, held }, { batch_size = 1, num_workers = 1, persistent_workers = true,
    collate_fn = function(s) return s[1] end })
  for _ = 1, 2 do
    local n = 0
    for b in l do n = n + 1; T.eq(b:totable(), { 7, 7, 7 }) end
    T.eq(n, 4)
  end
  l:shutdown()
  held:free()
  clean("shm ownership")
end)

T.test("bad options", function()
  T.raises(function() data.DataLoader(ds, { num_workers = -1 }) end, "num_workers")
  T.raises(function() data.DataLoader(ds, { persistent_workers = true }) end, "persistent_workers")
  T.raises(function() data.DataLoader(ds, { prefetch_factor = 0, num_workers = 1 }) end, "prefetch_factor")
  local l = data.DataLoader({ function() end }, { batch_size = 1, num_workers = 1 })
  T.raises(function() for _ in l do end end, "cannot send a function")
  clean("options")
end)

T.test("throughput with a slow per-sample transform (report, no assertion)", function()
  local Busy = data.Dataset:extend("Busy")
  function Busy:len() return 400 end
  function Busy:get(i)
    local t = D.now()
    while D.now() - t < 0.001 do end   -- ~1 ms of work per sample
    return torch.full({ 8 }, i)
  end
  local function rate(nw)
    local l = data.DataLoader(Busy(), { batch_size = 16, num_workers = nw })
    local t = D.now()
    local n = 0
    for b in l do n = n + b:size(1) end
    return n / (D.now() - t)
  end
  local r0, r2 = rate(0), rate(2)
  print(("THROUGHPUT busy 1 ms/sample: 0 workers %.0f samples/s, 2 workers %.0f samples/s, ratio %.2f"):format(r0, r2, r2 / r0))
  function Busy:get(i) D.sleep(0.001); return torch.full({ 8 }, i) end   -- waiting, not computing (I/O-like)
  r0, r2 = rate(0), rate(2)
  print(("THROUGHPUT sleep 1 ms/sample: 0 workers %.0f samples/s, 2 workers %.0f samples/s, ratio %.2f"):format(r0, r2, r2 / r0))
  clean("throughput")
end)

T.done()
