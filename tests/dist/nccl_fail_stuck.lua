-- Rank 1 never joins: rank 0's collective on cuda tensors over the nccl backend (the fake NCCL)
-- must time out with an error naming it, as tests/dist/fail_stuck.lua does for MPI.
--   arg[2] nil:      a synchronous all_reduce: the watchdog reports it and ends the job
--   arg[2] "async":  rank 0 waits on a handle and catches the Lua error
--   arg[2] "device": rank 0 waits on an irecv that rank 1 never matches: the op was issued and
--                    stays unfinished on the device (the fake's queue), the in-flight check
--                    times it out
--   arg[2] "watchdog": the same irecv, never waited for: the watchdog's sweep of the ops in
--                    flight times it out and ends the job
local dist = torch.distributed
dist.init_process_group { backend = "nccl", timeout = tonumber(arg[1]) or 2 }
local t = torch.ones(1000, { device = "cuda" })
dist.all_reduce(t)          -- everyone
if dist.get_rank() == 1 then
  local t0 = os.time()
  while os.time() - t0 < 60 do end   -- stuck (the job must not wait for this)
end
if arg[2] == "async" then
  local ok, err = pcall(function() dist.all_reduce(t, { async_op = true }):wait() end)
  io.stderr:write("CAUGHT: ", tostring(err), "\n")
  os.exit(1)
elseif arg[2] == "device" then
  local ok, err = pcall(function() dist.irecv(t, 1):wait() end)
  io.stderr:write("CAUGHT: ", tostring(err), "\n")
  os.exit(1)
elseif arg[2] == "watchdog" then
  local w = dist.irecv(t, 1)
  local t0 = os.time()
  while os.time() - t0 < 60 do end   -- busy elsewhere: the job must end without a wait
  print("UNREACHABLE")
end
dist.all_reduce(t)
print("UNREACHABLE")
