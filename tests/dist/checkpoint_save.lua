-- Saves the globals of tests/dist/checkpoint_globals.lua made from seed arg[2] into arg[1],
-- each rank its shards (tests/sh/test_dist.sh: the rank killed mid-save). Prints "saved".
local dist = torch.distributed
local G = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "checkpoint_globals.lua")
dist.init_process_group { backend = "mpi", timeout = 60 }
local rank, world = dist.get_rank(), dist.get_world_size()
local dir, seed = assert(arg[1], "usage: checkpoint_save.lua DIR SEED"), assert(tonumber(arg[2]))
dist.checkpoint.save(G.state_dict(G.split(rank, world), rank, world, seed), { checkpoint_id = dir })
dist.barrier()
if rank == 0 then print("saved " .. dist.checkpoint.metadata(dir).id) end
