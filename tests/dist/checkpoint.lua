-- torch.distributed.checkpoint on 2 ranks (run by tests/sh/test_dist.sh under mpirun):
-- each rank saves its shards of some global tensors into arg[1], then loads them back
-- with another split, and rank 0 alone loads them into whole tensors. The checkpoint
-- left in arg[1] is what tests/dist/checkpoint_load.lua then loads on 1, 3 and 4 ranks.
local T = require "testing"
local dist = torch.distributed
local dcp = dist.checkpoint
local G = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "checkpoint_globals.lua")
dist.init_process_group { backend = "mpi", timeout = 60 }
local rank, world = dist.get_rank(), dist.get_world_size()
assert(world == 2, "run on 2 ranks")
local dir = assert(arg[1], "usage: checkpoint.lua DIR")
local S = torch.serialization

-- small blocks, so ranges start and end inside blocks and chunks span several
dcp.block_bytes = 12

local function names(d)
  local l = S._dcp_listdir(d)
  table.sort(l)
  return l
end

-- rank 0 holds 4 of a's 7 elements, rank 1 the other 3; m (5x3) splits 8/7, and so on
T.test("save: each rank writes its own shards; whole tensors once", function()
  dcp.save(G.state_dict(G.split(rank, world), rank, world), { checkpoint_id = dir })
  local m = dcp.metadata(dir)
  T.eq(m.world_size, 2)
  T.eq(#m.files, 2)
  local a = m.tensors.a
  T.eq(a.shape, { 7 })
  T.eq(#a.chunks, 2)
  T.eq({ a.chunks[1].offset, a.chunks[1].numel, a.chunks[2].offset, a.chunks[2].numel }, { 0, 4, 4, 3 })
  T.ok(a.chunks[1].file:match("%-0%.bin$") and a.chunks[2].file:match("%-1%.bin$"))
  T.eq(m.tensors["opt.state[1].exp_avg"].shape, { 5, 3 })
  -- replicated on both ranks: written once, by rank 0
  T.eq(#m.tensors.r.chunks, 1)
  T.ok(m.tensors.r.chunks[1].file:match("%-0%.bin$"))
  -- whole on rank 1 only: written by rank 1
  T.eq(#m.tensors.only1.chunks, 1)
  T.ok(m.tensors.only1.chunks[1].file:match("%-1%.bin$"))
  -- the same range on both ranks (replicated shards): each element written once
  local covered = 0
  for _, c in ipairs(m.tensors.dup.chunks) do covered = covered + c.numel end
  T.eq(covered, 10)
  T.eq(m.values.step.value, 100)
  T.eq(m.values["opt.param_groups[1].lr"].value, 0.5)
  T.eq(m.values.rank0_only.value, "from rank 0")
  T.eq(#names(dir), 3)
end)

T.test("load on 2 ranks with another split", function()
  local split = G.split(rank, world, "other")
  local sd = G.blank(split, rank, world)
  dcp.load(sd, { checkpoint_id = dir })
  G.check(T, sd, split, rank, world)
end)

T.test("load on 2 ranks with the split it was saved with", function()
  local sd = G.blank(G.split(rank, world), rank, world)
  dcp.load(sd, { checkpoint_id = dir })
  G.check(T, sd, G.split(rank, world), rank, world)
end)

T.test("rank 0 alone loads whole tensors (no_dist)", function()
  if rank == 0 then
    local sd = G.blank(nil)
    dcp.load(sd, { checkpoint_id = dir, no_dist = true })
    G.check(T, sd, nil)
  end
  dist.barrier()
end)

T.test("a rank that fails mid-write: every rank raises, the checkpoint is untouched", function()
  local before = names(dir)
  local id = dcp.metadata(dir).id
  if rank == 1 then dcp._test_fail_after_bytes = 20 end
  local ok, err = pcall(dcp.save, G.state_dict(G.split(rank, world), rank, world, 99), { checkpoint_id = dir })
  dcp._test_fail_after_bytes = nil
  T.ok(not ok)
  T.ok(tostring(err):find("torch.distributed.checkpoint.save: rank 1: test hook: failing after 20 bytes", 1, true), err)
  dist.barrier()
  T.eq(names(dir), before)
  T.eq(dcp.metadata(dir).id, id)
  local sd = G.blank(G.split(rank, world), rank, world)
  dcp.load(sd, { checkpoint_id = dir })
  G.check(T, sd, G.split(rank, world), rank, world)
end)

T.test("a bad leaf on one rank: both raise naming it, nothing written", function()
  local before = names(dir)
  local sd = G.state_dict(G.split(rank, world), rank, world)
  if rank == 1 then sd.bad = { fn = print } end
  T.raises(function() dcp.save(sd, { checkpoint_id = dir }) end, "rank 1: state_dict bad.fn: a function")
  dist.barrier()
  T.eq(names(dir), before)
end)

T.test("ranks that disagree on a tensor's shape, or leave a gap: both raise", function()
  local other = dir .. "-bad"
  local t = rank == 0 and torch.zeros(3) or torch.zeros(4)
  T.raises(function() dcp.save({ x = t }, { checkpoint_id = other }) end, "tensor x is float32 [3] on rank 0 but float32 [4] on rank 1")
  local s = dist.register_shard(torch.zeros(2), { 10 }, rank * 5)
  T.raises(function() dcp.save({ x = s }, { checkpoint_id = other }) end, "tensor x", "hold 4 of its 10 elements")
end)

T.test("process_group: a group of rank 0 alone saves a world of one", function()
  local g0 = dist.new_group({ 0 })
  if rank == 0 then
    local d = dir .. "-g0"
    torch.manual_seed(3)
    local w = torch.randn(6)
    dcp.save({ w = w, k = "v" }, { checkpoint_id = d, process_group = g0 })
    T.eq(dcp.metadata(d).world_size, 1)
    local back = { w = torch.zeros(6), k = "" }
    dcp.load(back, { checkpoint_id = d, process_group = g0 })
    T.ok(torch.equal(back.w, w))
    T.eq(back.k, "v")
  else
    T.raises(function() dcp.save({}, { checkpoint_id = dir .. "-g0", process_group = g0 }) end, "not a member")
  end
  dist.barrier()
end)

T.done()
