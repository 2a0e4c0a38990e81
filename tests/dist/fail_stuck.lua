-- Rank 1 never joins the collective: rank 0's watchdog must end the job with a clear error.
-- With "async" as the second argument rank 0 waits on a handle, and catches the Lua error
-- (a synchronous call runs on this thread, inside MPI: the watchdog reports it instead).
local dist = torch.distributed
dist.init_process_group { backend = "mpi", timeout = tonumber(arg[1]) or 2 }
local t = torch.ones(1000)
dist.all_reduce(t)          -- everyone
if dist.get_rank() == 1 then
  local t0 = os.time()
  while os.time() - t0 < 60 do end   -- stuck (the job must not wait for this)
end
if arg[2] == "async" then
  local ok, err = pcall(function() dist.all_reduce(t, { async_op = true }):wait() end)
  io.stderr:write("CAUGHT: ", tostring(err), "\n")
  os.exit(1)
end
dist.all_reduce(t)
print("UNREACHABLE")
