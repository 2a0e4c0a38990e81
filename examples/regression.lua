-- regression.lua — fitting curves to noisy points, three ways:
--   1. a line y = w x + b with plain autograd: loss:backward(), then a hand-written
--      gradient step under torch.no_grad;
--   2. a cubic with a coefficient vector and optim.Adam;
--   3. the same cubic as nn.Linear(3, 1) on the features [x, x^2, x^3], with optim.SGD
--      and F.mse_loss — and the exact least-squares answer to compare with.
-- Each prints the fitted coefficients next to the ones the data was made from.
--   lutorch examples/regression.lua
--   lutorch examples/regression.lua --steps 200 --noise 0.5
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path
local common = require "common"
local nn = require "nn"
local optim = require "optim"
local F = nn.functional

local o = common.options(arg, "usage: lutorch examples/regression.lua [options]", {
  { "points", 200, "number of data points" },
  { "noise", 0.1, "standard deviation of the noise added to y" },
  { "steps", 1000, "optimisation steps for each fit" },
  { "seed", 0, "random seed" },
  { "out", "regression", "prefix of the loss-curve picture and the checkpoint" },
})
torch.manual_seed(o.seed)

local function row(name, got, want)
  local g, w = {}, {}
  for i = 1, #want do g[i] = ("%8.4f"):format(got[i]); w[i] = ("%8.4f"):format(want[i]) end
  print(("  %-22s fitted %s | truth %s"):format(name, table.concat(g, " "), table.concat(w, " ")))
end

-- data: x uniform in [-2, 2], y from a known polynomial plus Gaussian noise
-- (made on the CPU, so every --device sees the same numbers, then moved to o.device)
local dev = o.device
local x = (torch.rand(o.points) * 4 - 2):to(dev)
local noise = (torch.randn(o.points) * o.noise):to(dev)

------------------------------------------------------------------------------
-- 1. a line, with autograd and a hand-written update
------------------------------------------------------------------------------
local true_w, true_b = 2.5, -1.0
local y = x * true_w + true_b + noise
local w = torch.zeros(1, { requires_grad = true, device = dev })     -- leaves that collect .grad
local b = torch.zeros(1, { requires_grad = true, device = dev })
local lr = 0.1
local line_losses = {}
for step = 1, o.steps do
  local loss = ((x * w + b - y) ^ 2):mean()            -- mean squared error
  loss:backward()                                      -- fills w.grad and b.grad
  torch.no_grad(function()                             -- the update itself is not recorded
    w:sub_(w.grad * lr)
    b:sub_(b.grad * lr)
  end)
  w.grad:zero_(); b.grad:zero_()                       -- grads accumulate: reset them
  line_losses[step] = loss:item()
end
print(("1. line y = w x + b, gradient descent by hand (%d steps, final loss %.5f)"):format(o.steps, line_losses[o.steps]))
row("[w, b]", { w:item(), b:item() }, { true_w, true_b })

------------------------------------------------------------------------------
-- 2. a cubic, coefficients in one tensor, optim.Adam
------------------------------------------------------------------------------
local truth = { 0.5, -1.2, 0.8, 0.3 }                  -- c0 + c1 x + c2 x^2 + c3 x^3
local X = torch.stack({ torch.ones_like(x), x, x ^ 2, x ^ 3 }, 2)   -- [points, 4]
y = X:mv(torch.tensor(truth):to(dev)) + noise
local c = torch.zeros(4, { requires_grad = true, device = dev })
local adam = optim.Adam({ c }, { lr = 0.05 })
local cubic_losses = {}
for step = 1, o.steps do
  adam:zero_grad()
  local loss = F.mse_loss(X:mv(c), y)
  loss:backward()
  adam:step()
  cubic_losses[step] = loss:item()
end
print(("2. cubic c0 + c1 x + c2 x^2 + c3 x^3, optim.Adam (final loss %.5f)"):format(cubic_losses[o.steps]))
row("[c0, c1, c2, c3]", c:detach():cpu():totable(), truth)

------------------------------------------------------------------------------
-- 3. the cubic as a layer: nn.Linear(3, 1) on [x, x^2, x^3] (the bias is c0)
------------------------------------------------------------------------------
local feats = X:narrow(2, 2, 3)                        -- drop the column of ones
local model = nn.Linear(3, 1):to(dev)
local sgd = optim.SGD(model:parameters(), { lr = 0.01, momentum = 0.9 })
local layer_losses = {}
for step = 1, o.steps do
  sgd:zero_grad()
  local loss = F.mse_loss(model(feats):squeeze(2), y)
  loss:backward()
  sgd:step()
  layer_losses[step] = loss:item()
end
print(model)
print(("3. the cubic as nn.Linear(3, 1), optim.SGD momentum 0.9 (final loss %.5f)"):format(layer_losses[o.steps]))
local wt = model.weight:detach():view(-1):cpu():totable()
row("[bias, weight...]", { model.bias:item(), wt[1], wt[2], wt[3] }, truth)

-- the exact least-squares fit, for comparison: the normal equations (X^T X) c = X^T y,
-- a 4x4 system, solved in plain Lua by Gaussian elimination on :totable() values
local function solve(A, v)
  local n = #v
  for k = 1, n do
    local p = k                                        -- partial pivoting
    for i = k + 1, n do if math.abs(A[i][k]) > math.abs(A[p][k]) then p = i end end
    A[k], A[p], v[k], v[p] = A[p], A[k], v[p], v[k]
    for i = k + 1, n do
      local f = A[i][k] / A[k][k]
      for j = k, n do A[i][j] = A[i][j] - f * A[k][j] end
      v[i] = v[i] - f * v[k]
    end
  end
  local s = {}
  for i = n, 1, -1 do
    local acc = v[i]
    for j = i + 1, n do acc = acc - A[i][j] * s[j] end
    s[i] = acc / A[i][i]
  end
  return s
end
local Xd, yd = X:cpu():double(), y:cpu():double()
row("least squares (exact)", solve(Xd:t():mm(Xd):totable(), Xd:t():mv(yd):totable()), truth)

common.plot(o.out .. "_loss.png", "regression: training loss per step", "step",
  { { "line (by hand)", line_losses }, { "cubic (Adam)", cubic_losses }, { "nn.Linear (SGD)", layer_losses } })
common.checkpoint(o.out .. ".ckpt", { model = model:state_dict(), line = { w = w:detach(), b = b:detach() }, cubic = c:detach() })
