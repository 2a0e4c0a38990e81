-- Rank 1 raises a Lua error mid-training: the whole job ends with that message.
local nn = require "nn"
local F = nn.functional
local dist = torch.distributed
dist.init_process_group { backend = "mpi", timeout = 30 }
local m = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
local ddp = nn.DistributedDataParallel(m)
for step = 1, 1000 do
  if step == 5 and dist.get_rank() == 1 then error("boom from rank 1 at step 5") end
  F.cross_entropy(ddp(torch.randn(4, 8)), torch.randint(1, 3, { 4 })):backward()
end
print("UNREACHABLE")
