-- dist_allreduce.lua — torch.distributed.all_reduce (float32 sum, in place) on the sizes
-- given as ELEMS ITERS pairs; prints "lutorch ELEMS seconds_per_op" on rank 0 (bench/dist.sh).
local dist = torch.distributed
dist.init_process_group()
local async = os.getenv("ASYNC") == "1"
for a = 1, #arg - 1, 2 do
  local n, iters = tonumber(arg[a]), tonumber(arg[a + 1])
  local t = torch.ones(n)
  dist.all_reduce(t)
  dist.barrier()
  local t0 = dist.clock()
  for _ = 1, iters do dist.all_reduce(t) end
  local dt = dist.clock() - t0
  if dist.get_rank() == 0 then print(("lutorch %d %.9f"):format(n, dt / iters)) end
end
dist.destroy_process_group()
