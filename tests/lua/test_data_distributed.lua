-- data.DistributedSampler and the distributed helpers that work without MPI.
local T = require "testing"
local data = require "data"

local function ds(n) return data.TensorDataset(torch.arange(1, n + 1)) end

local function shares(n, R, opts)
  local out = {}
  for r = 0, R - 1 do
    local o = { num_replicas = R, rank = r }
    for k, v in pairs(opts or {}) do o[k] = v end
    out[r + 1] = data.DistributedSampler(ds(n), o)
  end
  return out
end

T.test("no shuffle: strided shares, padded by repeating the start", function()
  local s = shares(10, 3, { shuffle = false })
  T.eq(s[1]:indices(), { 1, 4, 7, 10 })
  T.eq(s[2]:indices(), { 2, 5, 8, 1 })
  T.eq(s[3]:indices(), { 3, 6, 9, 2 })
  T.eq(s[1]:len(), 4)
end)

T.test("drop_last: equal shares without padding", function()
  local s = shares(10, 3, { shuffle = false, drop_last = true })
  T.eq(s[1]:indices(), { 1, 4, 7 })
  T.eq(s[3]:indices(), { 3, 6, 9 })
  T.eq(s[2]:len(), 3)
end)

T.test("shuffle: disjoint shares covering the dataset, new order per epoch", function()
  local s = shares(12, 2, { seed = 5 })
  local seen = {}
  for r = 1, 2 do for _, i in ipairs(s[r]:indices()) do T.ok(not seen[i], "index twice"); seen[i] = true end end
  for i = 1, 12 do T.ok(seen[i], "index missing") end
  local e0 = s[1]:indices()
  s[1]:set_epoch(1)
  T.ok(not T.deq(s[1]:indices(), e0), "epoch 1 draws a new order")
  s[1]:set_epoch(0)
  T.eq(s[1]:indices(), e0)
  T.eq(shares(12, 2, { seed = 5 })[1]:indices(), e0)      -- every rank draws the same permutation
end)

T.test("with a DataLoader", function()
  local s = data.DistributedSampler(ds(9), { num_replicas = 2, rank = 1, shuffle = false })
  local loader = data.DataLoader(ds(9), { batch_size = 2, sampler = s })
  local got = {}
  for b in loader do for _, v in ipairs(b[1]:totable()) do got[#got + 1] = v end end
  T.eq(got, { 2, 4, 6, 8, 1 })
  T.eq(#loader, 3)
end)

T.test("defaults without a process group; bad arguments", function()
  local s = data.DistributedSampler(ds(5))
  T.eq(s.num_replicas, 1); T.eq(s.rank, 0); T.eq(#s:indices(), 5)
  T.raises(function() data.DistributedSampler(ds(5), { num_replicas = 2, rank = 2 }) end, "invalid rank 2")
  T.raises(function() data.DistributedSampler(ds(5), { num_replicas = 0 }) end, "num_replicas")
  T.eq(#data.DistributedSampler(ds(0), { num_replicas = 2, rank = 0 }):indices(), 0)
end)

T.test("torch.distributed without init", function()
  local dist = torch.distributed
  T.eq(dist.is_initialized(), false)
  T.eq(dist.is_main_process(), true)
  T.raises(function() dist.get_rank() end, "not initialized")
  T.raises(function() dist.all_reduce(torch.ones(2)) end, "init_process_group")
  T.raises(function() dist.init_process_group { backend = "nccl" } end, "nccl")
  T.raises(function() dist.init_process_group { backend = "tcp" } end, "unknown backend")
  local n = 0
  for _ in dist.progress(3, { file = { write = function() end, flush = function() end }, tty = false }) do n = n + 1 end
  T.eq(n, 3)
end)

T.done()
