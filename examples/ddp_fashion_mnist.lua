-- ddp_fashion_mnist.lua — the LeNet-5 of fashion_mnist_cnn.lua trained data-parallel:
-- each rank trains on its own share of every epoch (data.DistributedSampler), and
-- nn.DistributedDataParallel averages the gradients while backward runs.
--   lutorch --nproc 2 examples/ddp_fashion_mnist.lua --epochs 1
--   mpirun -np 2 lutorch examples/ddp_fashion_mnist.lua --smoke       (as root: --allow-run-as-root)
-- Rank 0 prints, draws the progress bar and saves the checkpoint; after a barrier every
-- rank loads it back and checks it holds the weights it trained.
-- Data: Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist).
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path
local common = require "common"
local nn = require "nn"
local optim = require "optim"
local data = require "data"
local dist = torch.distributed
local F = nn.functional

local o = common.options(arg, "usage: lutorch --nproc N examples/ddp_fashion_mnist.lua [options]", {
  { "epochs", 1, "passes over the 60,000 training images (shared by the ranks)" },
  { "batch", 64, "batch size per rank" },
  { "lr", 0.05, "SGD learning rate" },
  { "momentum", 0.9, "SGD momentum" },
  { "seed", 0, "random seed (initial weights on rank 0, and the shuffle)" },
  { "max_batches", 0, "stop each epoch after this many batches per rank (0: all)" },
  { "smoke", false, "a quick check: 20 batches, 2000 test images" },
  { "bucket_mb", 25, "DDP bucket size in MB" },
  { "timeout", 600, "seconds a collective may take before the job is ended" },
  { "data", "/usr/share/datasets/fashion-mnist", "directory of the idx files" },
  { "out", "ddp_fashion_mnist", "prefix of the checkpoint" },
  { "quiet", false, "no progress bar" },
})
if o.device ~= "cpu" then
  io.stderr:write("ddp_fashion_mnist: --device " .. o.device .. " is not supported: the process group moves CPU tensors\n")
  os.exit(2)
end
if o.smoke then o.max_batches = 20 end

dist.init_process_group { backend = "mpi", timeout = o.timeout }
local rank, world = dist.get_rank(), dist.get_world_size()
local print0 = dist.print0
torch.manual_seed(o.seed + rank)      -- different on purpose: DDP starts every rank from rank 0's weights

local t0 = torch.time()
local xtr, ytr, xte, yte = common.fashion_mnist(o.data)
xtr, xte = xtr:view(-1, 1, 28, 28), xte:view(-1, 1, 28, 28)
if o.smoke then xte, yte = xte:narrow(1, 1, 2000), yte:narrow(1, 1, 2000) end
print0(("data: train %s, test %s, loaded in %.2f s | %d ranks x %d threads"):format(
  tostring(xtr.shape), tostring(xte.shape), torch.time() - t0, world, torch.get_num_threads()))

local LeNet = nn.Module:extend("LeNet")
function LeNet:__init()
  self.c1 = nn.Conv2d(1, 6, 5)
  self.c2 = nn.Conv2d(6, 16, 5)
  self.f1 = nn.Linear(256, 120)
  self.f2 = nn.Linear(120, 84)
  self.f3 = nn.Linear(84, 10)
end
function LeNet:forward(x)
  x = F.max_pool2d(F.relu(self.c1(x)), 2)
  x = F.max_pool2d(F.relu(self.c2(x)), 2)
  x = x:flatten(2)
  return self.f3(F.relu(self.f2(F.relu(self.f1(x)))))
end

local model = LeNet()
local ddp = nn.DistributedDataParallel(model, { bucket_cap_mb = o.bucket_mb })
print0(ddp)
local opt = optim.SGD(ddp:parameters(), { lr = o.lr, momentum = o.momentum })

-- every rank visits its own share of the same permutation; equal shares, equal step counts
local sampler = data.DistributedSampler(data.TensorDataset(xtr, ytr), { shuffle = true, seed = o.seed })

for epoch = 1, o.epochs do
  sampler:set_epoch(epoch)
  local idx = torch.tensor(sampler:indices())
  local nb = (idx:numel() + o.batch - 1) // o.batch
  if o.max_batches > 0 then nb = math.min(nb, o.max_batches) end
  local bar = not o.quiet and dist.progress(nb, { desc = ("epoch %d"):format(epoch) })
  local start, total = torch.time(), 0
  for b = 1, nb do
    local rows = idx:narrow(1, (b - 1) * o.batch + 1, math.min(o.batch, idx:numel() - (b - 1) * o.batch))
    local loss = F.cross_entropy(ddp(xtr:index_select(1, rows)), ytr:index_select(1, rows))
    opt:zero_grad()
    loss:backward()           -- gradients are averaged over the ranks by the time it returns
    opt:step()
    total = total + loss:item()
    if bar then bar:update(); bar:set("loss", loss:item()) end
  end
  if bar then bar:close() end
  local dt = torch.time() - start
  -- the mean loss over all ranks, for the log line
  local mean = torch.tensor({ total / nb }, { dtype = torch.float64 })
  dist.all_reduce(mean, { op = "avg" })
  model:eval()
  local acc = common.accuracy(model, xte, yte)
  model:train()
  print0(("epoch %d: train %.2f s | %.3f ms/step | mean loss %.4f | test acc %.4f"):format(
    epoch, dt, 1e3 * dt / nb, mean:item(), acc))
end

-- save on rank 0, wait, load everywhere: the checkpoint holds what every rank trained
local path = o.out .. ".ckpt"
local saved = false
if rank == 0 then saved = common.checkpoint(path, { model = model:state_dict() }) end
local flag = torch.tensor({ saved and 1 or 0 })
dist.broadcast(flag, 0)
dist.barrier()
if flag:item() == 1 then
  local ck = torch.load(path)
  local max = 0
  for _, e in ipairs(model:named_parameters()) do
    max = math.max(max, (ck.model[e[1]] - e[2]:detach()):abs():max():item())
  end
  local all = torch.tensor({ max })
  dist.all_reduce(all, { op = "max" })
  print0(("checkpoint loaded on %d ranks: largest difference from the trained weights %g"):format(world, all:item()))
  dist.barrier()
  if rank == 0 and o.smoke then os.remove(path) end
end
dist.destroy_process_group()
