-- FSDP with distributed checkpoints across world sizes (run by tests/sh/test_dist.sh):
--   mpirun -np 2 lutorch tests/dist/fsdp_checkpoint.lua save DIR
--       trains a sharded model 2 steps (AdamW, float64), saves model and optimizer shards to
--       DIR/ck with torch.distributed.checkpoint, then takes a third step; rank 0 keeps the
--       outputs after step 2 and the full parameters after step 3 in DIR/ref.t7
--   mpirun -np N lutorch tests/dist/fsdp_checkpoint.lua load DIR     (N = 1, 3, 4)
--       a sharded model on N ranks loads DIR/ck: the same outputs as the saved model, and
--       resuming (the optimizer's state too) takes step 3 to the same parameters
--   lutorch tests/dist/fsdp_checkpoint.lua plain DIR
--       a plain, unsharded model loads DIR/ck: the same outputs
local T = require "testing"
local nn = require "nn"
local optim = require "optim"
local F = nn.functional
local dist = torch.distributed
local dcp = dist.checkpoint
local mode, dir = arg[1], arg[2]
assert(mode and dir, "usage: fsdp_checkpoint.lua save|load|plain DIR")
torch.set_default_dtype(torch.float64)
if mode ~= "plain" then dist.init_process_group { backend = "mpi", timeout = 60 } end
local rank = mode == "plain" and 0 or dist.get_rank()
local world = mode == "plain" and 1 or dist.get_world_size()

local TOTAL = 12      -- the combined batch, split evenly over 1, 2, 3 or 4 ranks
local function model(seed)
  torch.manual_seed(seed)
  return nn.Sequential(nn.Linear(5, 9), nn.Tanh(), nn.Linear(9, 7), nn.Tanh(), nn.Linear(7, 3))
end
local function shard_model(m)
  nn.fully_shard(m[1]); nn.fully_shard(m[3]); nn.fully_shard(m)
  return m
end
local function batch(s)
  torch.manual_seed(100 + s)
  local x, y = torch.randn(TOTAL, 5), torch.randint(1, 4, { TOTAL })
  local b = TOTAL // world
  return x:narrow(1, rank * b + 1, b), y:narrow(1, rank * b + 1, b)
end
local function probe() torch.manual_seed(7); return torch.randn(4, 5) end
local function step(m, opt, s)
  local x, y = batch(s)
  opt:zero_grad()
  F.cross_entropy(m(x), y):backward()
  opt:step()
end
local function make_opt(m) return optim.AdamW(m:parameters(), { lr = 0.05, weight_decay = 0.01 }) end

if mode == "save" then
  local m = shard_model(model(1))
  local opt = make_opt(m)
  step(m, opt, 1); step(m, opt, 2)
  dcp.save({ model = m:state_dict(), optim = nn.fsdp.optim_state_dict(m, opt), step = 2 }, { checkpoint_id = dir .. "/ck" })
  local out = torch.no_grad(function() return m(probe()) end)
  step(m, opt, 3)
  local full = nn.fsdp.full_state_dict(m)
  if rank == 0 then torch.save(dir .. "/ref.t7", { out = out, after3 = full }) end
  dist.barrier()
  T.test("saved", function() T.ok(true) end)
  T.done()
  return
end

local ref = torch.load(dir .. "/ref.t7")

if mode == "plain" then
  T.test("a plain model loads the sharded checkpoint: the same outputs", function()
    local m = model(99)
    local sd = m:state_dict()
    dcp.load({ model = sd }, { checkpoint_id = dir .. "/ck" })
    T.eq((m(probe()) - ref.out):abs():max():item(), 0.0)
  end)
  T.done()
  return
end

T.test(("%d rank(s) load the 2-rank checkpoint: the same outputs"):format(world), function()
  local m = shard_model(model(99))
  dcp.load({ model = m:state_dict() }, { checkpoint_id = dir .. "/ck" })
  local out = torch.no_grad(function() return m(probe()) end)
  T.eq((out - ref.out):abs():max():item(), 0.0)
end)

T.test(("%d rank(s) resume model and AdamW state: step 3 as the 2-rank run took it"):format(world), function()
  local m = shard_model(model(99))
  local opt = make_opt(m)
  step(m, opt, 0)          -- the optimizer's state tensors exist; loading overwrites them
  local state = { model = m:state_dict(), optim = nn.fsdp.optim_state_dict(m, opt), step = 0 }
  dcp.load(state, { checkpoint_id = dir .. "/ck" })
  nn.fsdp.load_optim_state_dict(m, opt, state.optim)
  T.eq(state.step, 2)
  step(m, opt, 3)
  local full = nn.fsdp.full_state_dict(m, { rank0_only = false })
  local worst = 0
  for k, v in pairs(ref.after3) do worst = math.max(worst, (full[k] - v):abs():max():item()) end
  T.ok(worst <= 1e-12, ("largest difference %g"):format(worst))
end)

T.done()
