-- Rank 1 is killed mid-training: the job must end with a clear error, not hang.
local nn = require "nn"
local F = nn.functional
local dist = torch.distributed
dist.init_process_group { backend = "mpi", timeout = tonumber(arg[1]) or 3 }
local m = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
local ddp = nn.DistributedDataParallel(m)
for step = 1, 1000 do
  if step == 5 and dist.get_rank() == 1 then
    local f = io.open("/proc/self/stat"); local pid = f:read("*l"):match("^(%d+)"); f:close()
    os.execute("kill -9 " .. pid)
  end
  F.cross_entropy(ddp(torch.randn(4, 8)), torch.randint(1, 3, { 4 })):backward()
end
print("UNREACHABLE")
