-- Rank 1 never joins the collective: rank 0's watchdog must end the job with a clear error.
local dist = torch.distributed
dist.init_process_group { backend = "mpi", timeout = tonumber(arg[1]) or 2 }
local t = torch.ones(1000)
dist.all_reduce(t)          -- everyone
if dist.get_rank() == 1 then
  local t0 = os.time()
  while os.time() - t0 < 60 do end   -- stuck (the job must not wait for this)
end
dist.all_reduce(t)
print("UNREACHABLE")
