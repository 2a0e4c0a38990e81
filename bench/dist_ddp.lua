-- dist_ddp.lua — one DDP training step of the LeNet-5 (batch 64 per rank, SGD momentum),
-- as bench/dist_ddp.py does with PyTorch's DDP over gloo; prints "lutorch ms_per_step" on rank 0.
local nn = require "nn"
local optim = require "optim"
local F = nn.functional
local dist = torch.distributed
dist.init_process_group()
local steps = tonumber(arg[1]) or 50
local B = tonumber(arg[2]) or 64
torch.manual_seed(0)
local model = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
  nn.MaxPool2d(2), nn.Flatten(), nn.Linear(256, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))
local ddp = nn.DistributedDataParallel(model)
local opt = optim.SGD(ddp:parameters(), { lr = 0.01, momentum = 0.9 })
local x, y = torch.randn(B, 1, 28, 28), torch.randint(1, 11, { B })
local function step()
  opt:zero_grad()
  F.cross_entropy(ddp(x), y):backward()
  opt:step()
end
for _ = 1, 5 do step() end
dist.barrier()
local t0 = dist.clock()
for _ = 1, steps do step() end
local dt = dist.clock() - t0
if dist.get_rank() == 0 then print(("lutorch %.3f"):format(1e3 * dt / steps)) end
dist.destroy_process_group()
