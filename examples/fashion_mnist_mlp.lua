-- fashion_mnist_mlp.lua — a 784-512-256-10 ReLU MLP on Fashion-MNIST, trained
-- the PyTorch way: nn.Module, F.cross_entropy, optim.SGD (momentum 0.9).
--   lutorch examples/fashion_mnist_mlp.lua --epochs 3
-- Data: Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist).
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path
local common = require "common"
local nn = require "nn"
local optim = require "optim"
local F = nn.functional

local o = common.options(arg, "usage: lutorch examples/fashion_mnist_mlp.lua [options]", {
  { "epochs", 1, "passes over the 60,000 training images" },
  { "batch", 64, "batch size" },
  { "lr", 0.05, "SGD learning rate" },
  { "momentum", 0.9, "SGD momentum" },
  { "threads", 0, "compute threads (0: lutorch's default)" },
  { "max_batches", 0, "stop each epoch after this many batches (0: all); for smoke tests" },
  { "data", "/usr/share/datasets/fashion-mnist", "directory of the idx files" },
  { "out", "fashion_mnist_mlp", "prefix of the loss-curve picture and the checkpoint" },
  { "quiet", false, "no progress bar" },
  { "start", "", "start from the weights and first batch order in this directory (bench/fmnist_start.py)" },
  amp = true,
})
if o.threads > 0 then torch.set_num_threads(o.threads) end
torch.manual_seed(0)

local t0 = torch.time()
local xtr, ytr, xte, yte = common.fashion_mnist(o.data)
xtr, xte = xtr:view(-1, 784), xte:view(-1, 784)
print(("data: train %s, test %s, loaded in %.2f s | threads %d"):format(
  tostring(xtr.shape), tostring(xte.shape), torch.time() - t0, torch.get_num_threads()))

local MLP = nn.Module:extend("MLP")
function MLP:__init()
  self.fc1 = nn.Linear(784, 512)
  self.fc2 = nn.Linear(512, 256)
  self.fc3 = nn.Linear(256, 10)
end
function MLP:forward(x)
  return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))
end

local model = MLP()
print(model)
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

common.fit(o, xtr, ytr, step, evaluate, "Fashion-MNIST MLP", { model = model:state_dict() })
