-- tutorial_cnn.lua — the CNN of PyTorch's "What is torch.nn really?" (three 3x3 stride-2
-- convolutions 1 -> 16 -> 16 -> 10 with ReLU, average pooling, cross-entropy; SGD lr 0.1,
-- momentum 0.9, batches of 64 drawn in a shuffled order), trained on Fashion-MNIST for
-- EPOCHS epochs, the whole loop timed (batching included), then the test accuracy.
-- Twin: bench/tutorial_cnn.py; both run by bench/tutorial_cnn.sh.
--   lutorch bench/tutorial_cnn.lua [EPOCHS [START]]
-- START: a directory from `bench/tutorial_cnn.py --write-start START` (PyTorch's initial
-- weights and first-epoch order), so both sides train from one start.
package.path = "examples/?.lua;" .. package.path
local common = require "common"
local nn, F = torch.nn, torch.nn.functional
local epochs = tonumber(arg[1] or "1")
local start = arg[2]
local xtr, ytr, xte, yte = common.fashion_mnist()
xtr, xte = xtr:view(-1, 1, 28, 28), xte:view(-1, 1, 28, 28)

torch.manual_seed(0)
local model = nn.Sequential(
  nn.Conv2d(1, 16, 3, { stride = 2, padding = 1 }), nn.ReLU(),
  nn.Conv2d(16, 16, 3, { stride = 2, padding = 1 }), nn.ReLU(),
  nn.Conv2d(16, 10, 3, { stride = 2, padding = 1 }), nn.ReLU(),
  nn.AvgPool2d(4), nn.Flatten())
if start then common.load_start(model, start) end
local opt = torch.optim.SGD(model:parameters(), { lr = 0.1, momentum = 0.9 })
local bs, n = 64, xtr:size(1)
local loss_sum, nb = 0, 0
local timer = torch.Timer()   -- wall time
for e = 1, epochs do
  local perm = (e == 1 and start) and common.start_order(start, n) or torch.randperm(n)   -- 1..n
  for i = 1, n, bs do
    local idx = perm:narrow(1, i, math.min(bs, n - i + 1))
    local xb, yb = xtr:index_select(1, idx), ytr:index_select(1, idx)
    opt:zero_grad()
    local loss = F.cross_entropy(model(xb), yb)
    loss:backward()
    opt:step()
    loss_sum, nb = loss_sum + loss:item(), nb + 1
  end
end
local train_s = timer:time().real
local acc = torch.no_grad(function()
  return (model(xte):argmax(2):eq(yte):sum():item()) / xte:size(1)
end)
print(("train %.3f s mean loss %.4f test acc %.4f"):format(train_s, loss_sum / nb, acc))
