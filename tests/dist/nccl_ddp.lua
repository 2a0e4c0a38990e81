-- nn.DistributedDataParallel on cuda tensors over the nccl backend, on 2 ranks through the fake
-- NCCL and the fake CUDA driver (run by tests/sh/test_dist.sh under mpirun with
-- LUTORCH_CUDA_DRIVER=fake LUTORCH_NCCL=fake): training matches one process on the whole batch.
local T = require "testing"
local nn = require "nn"
local optim = require "optim"
local F = nn.functional
local dist = torch.distributed
dist.init_process_group { backend = "nccl", timeout = 30 }
local rank, world = dist.get_rank(), dist.get_world_size()
local dev = "cuda:" .. torch.cuda.current_device()
torch.set_default_dtype(torch.float64)

local function make_model(seed)
  torch.manual_seed(seed)
  return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 3))
end

-- the whole batch of step s, the same on every rank; rank r takes rows r*B+1 .. (r+1)*B
local B = 4
local function batch(s)
  torch.manual_seed(1000 + s)
  return torch.randn(B * world, 6), torch.randint(1, 4, { B * world })
end
local function shard(x, y) return x:narrow(1, rank * B + 1, B), y:narrow(1, rank * B + 1, B) end

local function flat_params(m)
  local ps = {}
  for i, p in ipairs(m:parameters()) do ps[i] = p:detach():reshape(-1):cpu() end
  return torch.cat(ps)
end

T.test("construction broadcasts rank 0's parameters (on the GPU)", function()
  local m = make_model(rank + 1):to(dev)
  nn.DistributedDataParallel(m)
  T.eq(m:parameters()[1].device.type, "cuda")
  local d = (flat_params(m) - flat_params(make_model(1))):abs():max():item()
  T.eq(d, 0.0, "rank " .. rank .. " does not hold rank 0's weights")
end)

for _, cfg in ipairs({
  { name = "default buckets", opts = {} },
  { name = "small buckets", opts = { bucket_cap_mb = 0.0005, first_bucket_bytes = 256 } },
  { name = "gradient_as_bucket_view", opts = { bucket_cap_mb = 0.001, gradient_as_bucket_view = true } },
}) do
  T.test("training on cuda matches one process on the combined batch: " .. cfg.name, function()
    local m = make_model(7):to(dev)
    local ddp = nn.DistributedDataParallel(m, cfg.opts)
    local opt = optim.SGD(ddp:parameters(), { lr = 0.1 })
    for s = 1, 5 do
      local x, y = shard(batch(s))
      opt:zero_grad()
      F.cross_entropy(ddp(x:to(dev)), y:to(dev)):backward()
      opt:step()
    end
    local ref = make_model(7)
    local ropt = optim.SGD(ref:parameters(), { lr = 0.1 })
    for s = 1, 5 do
      local x, y = batch(s)
      ropt:zero_grad()
      F.cross_entropy(ref(x), y):backward()
      ropt:step()
    end
    local d = (flat_params(m) - flat_params(ref)):abs():max():item()
    T.ok(d < 1e-12, ("differs from single-process training by %g"):format(d))
    -- and the ranks agree exactly
    local p = flat_params(m):to(dev)
    local other = p:clone()
    dist.broadcast(other, 0)
    T.eq((p - other):abs():max():item(), 0.0, "ranks differ")
  end)
end

dist.destroy_process_group()
T.done()
