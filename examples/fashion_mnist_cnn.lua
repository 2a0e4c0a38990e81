-- fashion_mnist_cnn.lua — LeNet-5 on Fashion-MNIST: two 5x5 convolutions with ReLU and
-- 2x2 max-pooling, then a 256-120-84-10 ReLU classifier; SGD (momentum 0.9), cross-entropy.
-- The same model, data and training loop as ../shared/bench-ref/fmnist_torch.py --model lenet.
--   lutorch examples/fashion_mnist_cnn.lua --epochs 1
-- Data: Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist).
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path
local common = require "common"
local nn = require "nn"
local optim = require "optim"
local data = require "data"
local F = nn.functional

local o = common.options(arg, "usage: lutorch examples/fashion_mnist_cnn.lua [options]", {
  { "epochs", 1, "passes over the 60,000 training images" },
  { "batch", 64, "batch size" },
  { "lr", 0.05, "SGD learning rate" },
  { "momentum", 0.9, "SGD momentum" },
  { "seed", 0, "random seed (initial weights and the order of the batches)" },
  { "threads", 0, "compute threads (0: lutorch's default)" },
  { "max_batches", 0, "stop each epoch after this many batches (0: all); for smoke tests" },
  { "data", "/usr/share/datasets/fashion-mnist", "directory of the idx files" },
  { "out", "fashion_mnist_cnn", "prefix of the loss-curve picture and the checkpoint" },
  { "quiet", false, "no progress bar" },
})
if o.threads > 0 then torch.set_num_threads(o.threads) end
torch.manual_seed(o.seed)

local t0 = torch.time()
local xtr, ytr, xte, yte = common.fashion_mnist(o.data)
-- images as [N, channels=1, 28, 28]: the layout conv2d expects
xtr, xte = xtr:view(-1, 1, 28, 28), xte:view(-1, 1, 28, 28)
print(("data: train %s, test %s, loaded in %.2f s | threads %d"):format(
  tostring(xtr.shape), tostring(xte.shape), torch.time() - t0, torch.get_num_threads()))

local LeNet = nn.Module:extend("LeNet")
function LeNet:__init()
  self.c1 = nn.Conv2d(1, 6, 5)      -- 28x28 -> 6 x 24x24, pooled to 12x12
  self.c2 = nn.Conv2d(6, 16, 5)     -- 12x12 -> 16 x 8x8, pooled to 4x4: 16*4*4 = 256
  self.f1 = nn.Linear(256, 120)
  self.f2 = nn.Linear(120, 84)
  self.f3 = nn.Linear(84, 10)
end
function LeNet:forward(x)
  x = F.max_pool2d(F.relu(self.c1(x)), 2)
  x = F.max_pool2d(F.relu(self.c2(x)), 2)
  x = x:flatten(2)                  -- keep dim 1 (the batch), flatten the rest: [B, 256]
  return self.f3(F.relu(self.f2(F.relu(self.f1(x)))))
end

local model = LeNet()
print(model)
local nparams = 0
for _, p in ipairs(model:parameters()) do nparams = nparams + p:numel() end
print(("%d parameters"):format(nparams))
local opt = optim.SGD(model:parameters(), { lr = o.lr, momentum = o.momentum })

local function evaluate()
  model:eval()
  local correct = 0
  torch.no_grad(function()
    for i = 1, xte:size(1), 1000 do
      local n = math.min(1000, xte:size(1) - i + 1)
      local pred = model(xte:narrow(1, i, n)):argmax(2)
      correct = correct + pred:eq(yte:narrow(1, i, n)):sum():item()
    end
  end)
  model:train()
  return correct / xte:size(1)
end

local n = xtr:size(1)
local nbatches = (n + o.batch - 1) // o.batch
local limit = o.max_batches > 0 and math.min(o.max_batches, nbatches) or nbatches
local losses, accs = {}, {}
for epoch = 1, o.epochs do
  local perm = torch.randperm(n)
  local total = 0
  local bar = not o.quiet and data.progress(limit, { desc = ("epoch %d"):format(epoch) })
  local start = torch.time()
  for b = 1, limit do
    local idx = perm:narrow(1, (b - 1) * o.batch + 1, math.min(o.batch, n - (b - 1) * o.batch))
    local x, y = xtr:index_select(1, idx), ytr:index_select(1, idx)
    local loss = F.cross_entropy(model(x), y)
    opt:zero_grad()
    loss:backward()
    opt:step()
    local l = loss:item()
    total = total + l
    losses[#losses + 1] = l
    if bar then bar:update(); bar:set("loss", l) end
  end
  local dt = torch.time() - start
  if bar then bar:close() end
  local acc = evaluate()
  accs[#accs + 1] = acc
  print(("epoch %d: train %.2f s | %.3f ms/batch | mean loss %.4f | test acc %.4f"):format(
    epoch, dt, 1e3 * dt / limit, total / limit, acc))
end
print(("peak RSS %.0f MiB"):format(common.peak_rss_mib()))
common.plot(o.out .. "_loss.png", "Fashion-MNIST LeNet-5: training loss per batch", "batch", { { "loss", losses } })
common.checkpoint(o.out .. ".t7", { model = model:state_dict(), accuracy = accs })
