-- fashion_mnist_cnn.lua — LeNet-5 on Fashion-MNIST: two 5x5 convolutions with ReLU and
-- 2x2 max-pooling, then a 256-120-84-10 ReLU classifier; SGD (momentum 0.9), cross-entropy.
-- The same model, data and training loop as ../shared/bench-ref/fmnist_torch.py --model lenet.
--   lutorch examples/fashion_mnist_cnn.lua --epochs 1
-- Data: Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist).
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path
local common = require "common"
local nn = require "nn"
local optim = require "optim"
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
  { "start", "", "start from the weights and first batch order in this directory (bench/fmnist_start.py)" },
  amp = true,
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
if o.start ~= "" then common.load_start(model, o.start) end
model:to(o.device)
local opt = optim.SGD(model:parameters(), { lr = o.lr, momentum = o.momentum })

local function evaluate()
  model:eval()
  local acc = common.accuracy(model, xte, yte, o.device)
  model:train()
  return acc
end

local function step(x, y)
  return common.amp_step(o, opt, function() return F.cross_entropy(model(x), y) end)
end

common.fit(o, xtr, ytr, step, evaluate, "Fashion-MNIST LeNet-5", { model = model:state_dict() })
