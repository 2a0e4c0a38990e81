-- man/pytorch.md's porting checklist: each lutorch line of the table runs and means what its
-- PyTorch line means (the values PyTorch gives, written out), and the PyTorch spelling that
-- Lua would take wrongly is an error, not a wrong number.
package.path = "lib/?.lua;lib/?/init.lua;" .. package.path
local T = require "testing"
local nn = require "nn"
local F = nn.functional
local data = require "data"

local x = torch.tensor({ { 1., 2., 3. }, { 4., 5., 6. } })

T.test("dims and indices are 1-based, ranges inclusive", function()
  T.tensor(x:sum(1), { 5, 7, 9 })                         -- x.sum(dim=0)
  T.eq(x:transpose(1, 2).shape, { 3, 2 })                 -- x.transpose(0, 1)
  T.tensor(x[1], { 1, 2, 3 })                             -- x[0]
  T.tensor(x[{ ":", 1 }], { 1, 4 })                       -- x[:, 0]
  T.tensor(x[{ {}, { 2, 3 } }], { { 2, 3 }, { 5, 6 } })   -- x[:, 1:3]
  T.tensor(x[{ ":", torch.tensor({ 1, 3 }) }], { { 1, 3 }, { 4, 6 } })   -- x[:, [0, 2]]
  T.raises(function() return x[{ ":", { 1, 2, 3 } }] end, "torch.tensor")   -- a list is not a range
end)

T.test("class targets are 1-based", function()
  local logits = torch.tensor({ { 2., 0., 0. }, { 0., 0., 2. } })
  -- PyTorch: F.cross_entropy(logits, torch.tensor([0, 2])) = 0.23954477906
  T.near(F.cross_entropy(logits, torch.tensor({ 1, 3 })):item(), 0.2395447791, 1e-6)
end)

T.test("several results are several values; == is x:eq(y); truth needs :item()", function()
  local values, idx = x:max(2)
  T.tensor(values, { 3, 6 }); T.tensor(idx, { 3, 3 })
  T.raises(function() return x:max(2).values end, "tensor has no field or method 'values'")
  local preds, yb = torch.tensor({ 1, 2, 3, 4 }), torch.tensor({ 1, 0, 3, 0 })
  T.near(preds:eq(yb):float():mean():item(), 0.5, 0)       -- (preds == yb).float().mean()
  T.raises(function() return preds == yb end, "x:eq(y)")
  T.eq(x:gt(0):any():item(), true)                          -- (x > 0).any()
  local loss = torch.tensor(0.05)
  T.eq(loss:item() < 0.1, true)
end)

T.test("keywords in a trailing table; matmul; add_", function()
  local l = nn.Linear(4, 8, { bias = false })
  T.eq(l.bias, nil)
  T.eq(torch.zeros(2, 3, { dtype = torch.float64 }).dtype, torch.float64)
  T.raises(function() nn.Linear(4, 8, { biass = false }) end, "did you mean 'bias'")
  local a, b = torch.ones(2, 3), torch.ones(3, 4)
  T.eq(a:matmul(b).shape, { 2, 4 })
  local y = torch.zeros(2)
  y:add_(torch.ones(2))
  T.tensor(y, { 1, 1 })
end)

T.test("no_grad as a function or a to-be-closed value", function()
  local w = torch.ones(2, { requires_grad = true })
  local r = torch.no_grad(function() return w * 2 end)
  T.eq(r.requires_grad, false)
  do
    local _ <close> = torch.no_grad()
    T.eq((w * 2).requires_grad, false)
  end
  T.eq((w * 2).requires_grad, true)
end)

T.test("classes: nn.Module:extend and torch.autograd.Function:extend", function()
  local Net = nn.Module:extend("ChecklistNet")
  function Net:__init() self.fc = nn.Linear(2, 1) end
  function Net:forward(v) return self.fc(v) end
  T.eq(Net()(torch.ones(3, 2)).shape, { 3, 1 })
  local Exp = torch.autograd.Function:extend("ChecklistExp")
  function Exp.forward(ctx, v) local e = v:exp(); ctx:save_for_backward(e); return e end
  function Exp.backward(ctx, g) local e = table.unpack(ctx.saved_tensors); return g * e end
  local v = torch.tensor({ 0.0, 1.0 }, { dtype = torch.float64, requires_grad = true })
  Exp.apply(v):sum():backward()
  T.near(v.grad[2], math.exp(1), 1e-12)
end)

T.test("loops: DataLoader with unpack, counting batches, ipairs over a model", function()
  local ds = data.TensorDataset(torch.arange(10):float(), torch.arange(10))
  local n, seen = 0, 0
  for xb, yb in data.DataLoader(ds, { batch_size = 4, unpack = true }) do
    n = n + 1; seen = seen + yb:numel()
    T.ok(torch.is_tensor(xb) and torch.is_tensor(yb))
  end
  T.eq({ n, seen }, { 3, 10 })
  local i = 0
  for _ in data.DataLoader(ds, { batch_size = 4 }) do i = i + 1 end   -- enumerate(loader)
  T.eq(i, 3)
  local model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
  local names = {}
  for k, layer in ipairs(model) do names[k] = layer.__name end
  T.eq(names, { "Linear", "ReLU" })
end)

T.test("torch.save takes the path first", function()
  local S = T.scratch()
  torch.save(S.path("t.t7"), torch.ones(2))
  T.tensor(torch.load(S.path("t.t7")), { 1, 1 })
  S.remove()
end)

T.done()
