-- Loads the checkpoint that tests/dist/checkpoint.lua saved on 2 ranks (arg[1]; arg[2]: the
-- seed of its globals, default that script's) on however many ranks this runs on: 1, 3, 4
-- (tests/sh/test_dist.sh), each rank with its own shards of every tensor, then whole.
local T = require "testing"
local dist = torch.distributed
local dcp = dist.checkpoint
local G = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "checkpoint_globals.lua")
dist.init_process_group { backend = "mpi", timeout = 60 }
local rank, world = dist.get_rank(), dist.get_world_size()
local dir = assert(arg[1], "usage: checkpoint_load.lua DIR [SEED]")
local seed = tonumber(arg[2])

T.test(("load a 2-rank checkpoint on %d ranks: each its share"):format(world), function()
  T.eq(dcp.metadata(dir).world_size, 2)
  local split = G.split(rank, world)
  local sd = G.blank(split, rank)
  dcp.load(sd, { checkpoint_id = dir })
  G.check(T, sd, split, rank, world, seed)
end)

T.test(("load a 2-rank checkpoint on %d ranks: the other split"):format(world), function()
  local split = G.split(rank, world, "other")
  local sd = G.blank(split, rank)
  dcp.load(sd, { checkpoint_id = dir })
  G.check(T, sd, split, rank, world, seed)
end)

T.test(("load a 2-rank checkpoint on %d ranks: whole tensors everywhere"):format(world), function()
  local sd = G.blank(nil, rank)
  dcp.load(sd, { checkpoint_id = dir, process_group = dist.group_world() })
  G.check(T, sd, nil, rank, world, seed)
end)

T.done()
