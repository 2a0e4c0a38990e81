-- nn.fully_shard on cuda tensors over the nccl backend, on 2 ranks through the fake NCCL and
-- the fake CUDA driver (run by tests/sh/test_dist.sh under mpirun with
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
  return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 11), nn.Tanh(), nn.Linear(11, 3))
end
local B = 4
local function batch(s)
  torch.manual_seed(1000 + s)
  return torch.randn(B * world, 6), torch.randint(1, 4, { B * world })
end

for _, raf in ipairs({ true, false }) do
  T.test(("FSDP on cuda over nccl (reshard_after_forward=%s) equals one process"):format(raf), function()
    local ref = make_model(3)
    local ropt = optim.SGD(ref:parameters(), { lr = 0.1, momentum = 0.9 })
    local m = make_model(3):to(dev)
    nn.fully_shard(m[1], { reshard_after_forward = raf }); nn.fully_shard(m[3], { reshard_after_forward = raf })
    nn.fully_shard(m, { reshard_after_forward = raf })
    for _, p in ipairs(m:parameters()) do T.eq(p.device.type, "cuda") end
    local opt = optim.SGD(m:parameters(), { lr = 0.1, momentum = 0.9 })
    for s = 1, 3 do
      local x, y = batch(s)
      ropt:zero_grad(); F.cross_entropy(ref(x), y):backward(); ropt:step()
      local xs, ys = x:narrow(1, rank * B + 1, B):to(dev), y:narrow(1, rank * B + 1, B):to(dev)
      opt:zero_grad(); F.cross_entropy(m(xs), ys):backward(); opt:step()
    end
    local full = nn.fsdp.full_state_dict(m, { rank0_only = false })
    local worst = 0
    for k, v in pairs(ref:state_dict()) do
      T.eq(full[k].device.type, "cuda")
      worst = math.max(worst, (full[k]:cpu() - v):abs():max():item())
    end
    T.ok(worst <= 1e-12, ("largest difference %g"):format(worst))
  end)
end

T.done()
