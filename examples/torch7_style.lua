-- torch7_style.lua — the MLP of fashion_mnist_mlp.lua (784-512-256-10, ReLU, SGD with
-- momentum 0.9, lr 0.05, batch 64) written the way Torch7 scripts were: a container built
-- with :add(), a criterion with forward/backward, model:forward/backward, and
-- optim.sgd(feval, params, config, state) over one flat parameter tensor (getParameters).
-- With --plain-sgd the step is model:updateParameters(lr) instead (no momentum).
--   lutorch examples/torch7_style.lua
--   lutorch examples/torch7_style.lua --plain-sgd --lr 0.1
-- Data: Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist).
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path
local common = require "common"
require "nn"        -- Torch7 scripts use the globals nn and optim
require "optim"

local o = common.options(arg, "usage: lutorch examples/torch7_style.lua [options]", {
  { "epochs", 1, "passes over the 60,000 training images" },
  { "batch", 64, "batch size" },
  { "lr", 0.05, "learning rate" },
  { "momentum", 0.9, "SGD momentum (optim.sgd only)" },
  { "plain_sgd", false, "step with model:updateParameters(lr) instead of optim.sgd" },
  { "nll", false, "LogSoftMax + ClassNLLCriterion instead of CrossEntropyCriterion" },
  { "threads", 0, "compute threads (0: lutorch's default)" },
  { "max_batches", 0, "stop each epoch after this many batches (0: all); for smoke tests" },
  { "data", "/usr/share/datasets/fashion-mnist", "directory of the idx files" },
  { "out", "torch7_style", "prefix of the loss-curve picture and the checkpoint" },
  { "quiet", false, "no progress bar" },
})
if o.threads > 0 then torch.set_num_threads(o.threads) end
torch.manual_seed(0)

local t0 = torch.time()
local xtr, ytr, xte, yte = common.fashion_mnist(o.data)
xtr, xte = xtr:view(-1, 784), xte:view(-1, 784)
print(("data: train %s, test %s, loaded in %.2f s | threads %d"):format(
  tostring(xtr.shape), tostring(xte.shape), torch.time() - t0, torch.get_num_threads()))

local model = nn.Sequential()
model:add(nn.Linear(784, 512)):add(nn.ReLU())
model:add(nn.Linear(512, 256)):add(nn.ReLU())
model:add(nn.Linear(256, 10))
local criterion
if o.nll then
  model:add(nn.LogSoftMax())
  criterion = nn.ClassNLLCriterion()
else
  criterion = nn.CrossEntropyCriterion()
end
model:to(o.device)           -- before getParameters: the flat tensors live where the model does
print(model)

-- one flat tensor holding every weight, and one holding every gradient
local params, gradParams = model:getParameters()
print(("%d parameters in one flat tensor"):format(params:nElement()))
-- dampening = 0 makes this PyTorch's SGD, as in fashion_mnist_mlp.lua; Torch7's optim.sgd
-- defaults the dampening to the momentum, which scales every step by (1 - momentum)
local config = { learningRate = o.lr, momentum = o.momentum, dampening = 0 }
local state = {}

local function evaluate()
  model:evaluate()
  local acc = common.accuracy(function(x) return model:forward(x) end, xte, yte, o.device)
  model:training()
  return acc
end

print(o.plain_sgd and ("step: model:updateParameters(%g)"):format(o.lr)
  or ("step: optim.sgd(feval, params, {learningRate = %g, momentum = %g, dampening = 0}, state)"):format(o.lr, o.momentum))
local function step(inputs, targets)
  local err
  if o.plain_sgd then
    model:zeroGradParameters()
    local outputs = model:forward(inputs)
    err = criterion:forward(outputs, targets)
    model:backward(inputs, criterion:backward(outputs, targets))
    model:updateParameters(o.lr)
  else
    -- feval(x) returns the loss and d loss / d x at x (x is params itself here)
    local function feval(x)
      if not rawequal(x, params) then params:copy(x) end
      gradParams:zero()
      local outputs = model:forward(inputs)
      err = criterion:forward(outputs, targets)
      model:backward(inputs, criterion:backward(outputs, targets))
      return err, gradParams
    end
    optim.sgd(feval, params, config, state)
  end
  return err
end

common.fit(o, xtr, ytr, step, evaluate, "Fashion-MNIST MLP, Torch7 style", { model = model:state_dict() })
