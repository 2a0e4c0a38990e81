-- amp_train.lua — one Fashion-MNIST training epoch (SGD, momentum 0.9, batch 64) of the
-- MLP 784-512-256-10 and of LeNet-5, timed on the lutorch side (twin: amp_train.py;
-- run both with `sh bench/amp_train.sh`). Modes (argument 1, default all):
--   float32    the plain float32 model
--   autocast   under torch.autocast("cpu", {dtype = torch.bfloat16}): linear/conv in
--              bfloat16, the loss in float32; prints "autocast not available" where
--              torch.autocast is missing (a tree from before man/amp.md)
--   bf16model  the model's parameters in bfloat16 and the loss in float32 (the same
--              bfloat16 kernels, no float32 master weights)
-- Prints "key seconds" per (model, mode): the training time of the batches only.
-- BATCHES=N times the first N batches of the epoch and scales to the whole epoch.
package.path = (arg[0]:match("^(.*/)") or "./") .. "../examples/?.lua;" .. package.path
local common = require "common"
local nn, F, optim = torch.nn, torch.nn.functional, torch.optim
local modes = arg[1] and { arg[1] } or { "float32", "autocast", "bf16model" }
local models = os.getenv("MODELS") or "mlp lenet"
local xtr, ytr = common.fashion_mnist(os.getenv("DATA") or "/usr/share/datasets/fashion-mnist")
local n, batch = xtr:size(1), 64
local nb = (n + batch - 1) // batch
local limit = tonumber(os.getenv("BATCHES") or "0")
if limit <= 0 or limit > nb then limit = nb end

local function mlp()
  return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))
end
local function lenet()
  return nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
                       nn.Flatten(), nn.Linear(256, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))
end

local function epoch(name, mode)
  torch.manual_seed(0)
  local model = name == "mlp" and mlp() or lenet()
  local x_all = name == "mlp" and xtr:view(-1, 784) or xtr:view(-1, 1, 28, 28)
  local dt = torch.float32
  if mode == "bf16model" then model:to(torch.bfloat16); dt = torch.bfloat16 end
  local opt = optim.SGD(model:parameters(), { lr = 0.05, momentum = 0.9 })
  if mode == "bf16model" then
    -- lutorch's fused optimizers take float32/64 parameters only: SGD with momentum by hand
    local params, bufs = model:parameters(), {}
    opt = {
      zero_grad = function() for _, p in ipairs(params) do p.grad = nil end end,
      step = function()
        torch.no_grad(function()
          for i, p in ipairs(params) do
            if bufs[i] then bufs[i]:mul_(0.9):add_(p.grad) else bufs[i] = p.grad:clone() end
            p:add_(bufs[i], { alpha = -0.05 })
          end
        end)
      end,
    }
  end
  local perm = torch.randperm(n)
  local function step(x, y)
    opt.zero_grad(opt)
    local loss
    if mode == "autocast" then
      loss = torch.autocast("cpu", { dtype = torch.bfloat16 }, function() return F.cross_entropy(model(x), y) end)
    else
      loss = F.cross_entropy(model(x:to(dt)):float(), y)
    end
    loss:backward()
    opt.step(opt)
    return loss
  end
  local t0
  for b = 1, limit do
    if b == 2 then t0 = torch.time() end   -- the first batch warms up
    local idx = perm:narrow(1, (b - 1) * batch + 1, math.min(batch, n - (b - 1) * batch))
    step(x_all:index_select(1, idx), ytr:index_select(1, idx))
  end
  return (torch.time() - t0) / (limit - 1) * nb
end

for _, mode in ipairs(modes) do
  if mode == "autocast" and not torch.autocast then
    print("# autocast not available (torch.autocast is nil on this tree): skipped")
  else
    for name in models:gmatch("%S+") do print(("%s_%s %.3f"):format(name, mode, epoch(name, mode))) end
  end
end
