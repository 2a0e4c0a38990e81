-- train.lua — the soak test's training run (tests/soak/soak.sh, make soak): a classifier
-- trained for SECONDS on a synthetic dataset whose samples are made by DataLoader workers,
-- a checkpoint every CKPT_EVERY steps, and a Ctrl-C (SIGINT from soak.sh) caught mid-run:
-- the script saves, rebuilds model and optimizer from the checkpoint as a restarted run
-- would, checks that they are what it saved, and trains on. It ends by checking the loss
-- went down and printing "soak: done".
--   lutorch tests/soak/train.lua DIR SECONDS [WORKERS]
local nn = require "nn"
local optim = require "optim"
local data = require "data"
local F = nn.functional

local dir, seconds, workers = arg[1], tonumber(arg[2]), tonumber(arg[3] or 2)
assert(dir and seconds, "usage: train.lua DIR SECONDS [WORKERS]")
local CKPT_EVERY = 100
local ckpt = dir .. "/ckpt.pt"

-- samples computed in the worker from the index (real work per sample, as a decoder's):
-- 10 classes, each a direction in 32 dimensions plus noise
local Synthetic = data.Dataset:extend("Synthetic")
function Synthetic:__init(n)
  self.n = n
  torch.manual_seed(1)
  self.centers = torch.randn(10, 32)
end
function Synthetic:len() return self.n end
function Synthetic:get(i)
  local g = torch.Generator():manual_seed(i)
  local label = i % 10 + 1
  local x = self.centers[label] + torch.randn(32, { generator = g }) * 0.8
  return { x, label }
end

local ds = Synthetic(4096)
local loader = data.DataLoader(ds, { batch_size = 64, shuffle = true, num_workers = workers })

local function new_model()
  return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
end
local function new_optim(model) return optim.SGD(model:parameters(), { lr = 0.05, momentum = 0.9 }) end

local model = new_model()
local opt = new_optim(model)
local step, epoch = 0, 0

local function save()
  torch.save(ckpt, { model = model:state_dict(), optim = opt:state_dict(), step = step, epoch = epoch })
end

local probe_x = torch.randn(256, 32)
local function eval_loss()
  local xs, ys = {}, {}
  for i = 1, 512 do local s = ds:get(i); xs[i] = s[1]; ys[i] = s[2] end
  return torch.no_grad(function()
    return F.cross_entropy(model(torch.stack(xs)), torch.tensor(ys)):item()
  end)
end

local first_loss = eval_loss()
print(("soak: start, loss %.4f, %d workers"):format(first_loss, workers))
io.stdout:flush()
local deadline = os.time() + seconds
local interrupts = 0

local function train()
  while os.time() < deadline do
    epoch = epoch + 1
    for batch in loader:iter() do
      local x, y = batch[1], batch[2]
      opt:zero_grad()
      local loss = F.cross_entropy(model(x), y)
      loss:backward()
      opt:step()
      step = step + 1
      if step % CKPT_EVERY == 0 then save() end
      if step % 200 == 0 then
        print(("soak: step %d epoch %d loss %.4f lua %d KiB"):format(step, epoch, loss:item(), math.floor(collectgarbage("count"))))
        io.stdout:flush()
      end
      if os.time() >= deadline then break end
    end
  end
end

while os.time() < deadline do
  local ok, err = pcall(train)
  if not ok then
    if tostring(err):find("interrupted", 1, true) == nil then error(err, 0) end
    interrupts = interrupts + 1
    print(("soak: interrupted at step %d; saving"):format(step))
    save()
    -- resume as a new run would: everything from the checkpoint
    local before = torch.no_grad(function() return model(probe_x) end)
    model, opt = new_model(), nil
    opt = new_optim(model)
    local s = torch.load(ckpt)
    model:load_state_dict(s.model)
    opt:load_state_dict(s.optim)
    step, epoch = s.step, s.epoch
    local after = torch.no_grad(function() return model(probe_x) end)
    assert(torch.equal(before, after), "the resumed model computes what the saved one did")
    assert(torch.ones(100000):sum():item() == 100000, "kernels compute after the interrupt")
    print(("soak: resumed at step %d"):format(step))
    io.stdout:flush()
  end
end

local last_loss = eval_loss()
print(("soak: %d steps, %d epochs, %d interrupts, loss %.4f -> %.4f"):format(step, epoch, interrupts,
  first_loss, last_loss))
assert(last_loss < first_loss * 0.5, "the loss went down")
loader:shutdown()
print("soak: done")
