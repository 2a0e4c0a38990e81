-- test_backend_fake.lua — device tensors with no GPU: a fake "cuda" backend (malloc-backed,
-- the CPU's kernels at the CUDA dispatch key; tests/fake/) registered through the same
-- interface a real backend uses. Routing, device errors, the host copies behind printing,
-- item() and serialization, and autograd seeding its gradients on the device.
local T = require "testing"

T.test("without a backend, cuda tensors are an error naming the op", function()
  local ok, err = pcall(torch.zeros, 2, { device = "cuda" })
  T.ok(not ok and err:find("zeros: argument 'device': no CUDA device is present (cuda: backend not loaded", 1, true), err)
  ok, err = pcall(torch.tensor, { 1, 2 }, { device = "cuda:0" })
  T.ok(not ok and err:find("cuda: backend not loaded", 1, true), err)
  T.eq(torch._device_count("cuda"), 0)
  ok, err = pcall(torch.memory_stats, "cuda")
  T.ok(not ok and err:find("memory_stats: argument 'device': no CUDA device is present", 1, true), err)
  ok, err = pcall(torch.empty_cache, {})
  T.ok(not ok and err:find("empty_cache: argument 'device': expected a device", 1, true), err)
  ok, err = pcall(torch.memory_stats, "gpu")
  T.ok(not ok and err:find("memory_stats: argument 'device': invalid device 'gpu'", 1, true), err)
  ok, err = pcall(torch._device_count, "tpu")
  T.ok(not ok and err:find("device_count: unknown device type 'tpu'", 1, true), err)
end)

local build = os.getenv("BUILD") or "build"
package.cpath = build .. "/tests/?.so;" .. package.cpath
local ok_load, fake = pcall(require, "fake_cuda")
if not ok_load then
  T.test("the fake backend module loads", function() error(fake) end)
  T.done()
  return
end

T.test("creation on the device, and device indices", function()
  local x = torch.tensor({ { 1, 2 }, { 3, 4 } }, { device = "cuda" })
  T.eq(tostring(x.device), "cuda:0")
  T.ok(x.is_cuda)
  local z = torch.zeros(2, 3, { device = "cuda:1" })
  T.eq(tostring(z.device), "cuda:1")
  T.eq(torch._device_count("cuda"), 2)
  local ok, err = pcall(torch.ones, 2, { device = "cuda:2" })
  T.ok(not ok and err:find("device cuda:2 does not exist", 1, true), err)
  local r = torch.randn(4, { device = "cuda" })
  T.eq(tostring(r.device), "cuda:0")
  T.eq(tostring(torch.arange(5, { device = "cuda" }).device), "cuda:0")
  -- *_like keep the input's device unless told another
  T.eq(tostring(torch.zeros_like(r).device), "cuda:0")
  T.eq(tostring(torch.ones_like(r, { device = "cpu" }).device), "cpu")
  T.eq(tostring(torch.empty_like(torch.ones(2), { device = "cuda:1" }).device), "cuda:1")
end)

T.test("ops route by device; results stay on it; numbers go with any device", function()
  local x = torch.tensor({ 1, 2, 3 }, { device = "cuda" })
  for _, y in ipairs({ x + x, x * 2, x:exp(), x:sum(), x:view(3, 1), x:t(), x:max(), x:cumsum(1),
                       x:sort(), torch.cat({ x, x }) }) do
    T.eq(tostring(y.device), "cuda:0")
  end
  T.eq((x * 2):sum():item(), 12)
  T.eq(x[2], 2)
end)

T.test("mixing devices in one op is an error naming the op", function()
  local x = torch.tensor({ 1, 2, 3 }, { device = "cuda" })
  local c = torch.tensor({ 1, 2, 3 })
  local ok, err = pcall(function() return x + c end)
  T.ok(not ok and err:find("expected all tensors to be on the same device", 1, true), err)
  ok, err = pcall(torch.cat, { x, c })
  T.ok(not ok and err:find("cat:", 1, true), err)
end)

T.test("printing and item() read the device through a host copy", function()
  local x = torch.tensor({ { 1.5, 2 }, { 3, 4 } }, { device = "cuda" })
  local before = fake.counters().to_host
  local s = tostring(x)
  T.ok(fake.counters().to_host > before, "printing copied to the host")
  T.ok(s:find("1.5", 1, true) and s:find("cuda", 1, true), s)
  before = fake.counters().to_host
  T.eq(x[{ 2, 2 }], 4)
  T.eq(x:sum():item(), 10.5)
  T.ok(fake.counters().to_host > before)
end)

T.test("backward seeds and accumulates gradients on the device", function()
  local w = torch.tensor({ 1, -2, 3 }, { dtype = "float64", device = "cuda", requires_grad = true })
  local loss = (w * w):sum()
  T.eq(tostring(loss.device), "cuda:0")
  loss:backward()
  T.eq(tostring(w.grad.device), "cuda:0")
  T.eq(w.grad[1], 2); T.eq(w.grad[2], -4); T.eq(w.grad[3], 6)
end)

T.test("saving a device tensor writes its host copy; it loads on the cpu", function()
  local x = torch.tensor({ 1, 2, 3, 4 }, { device = "cuda" })
  local path = os.tmpname()
  torch.save(path, { a = x, b = x:view(2, 2) })
  local t = torch.load(path)
  os.remove(path)
  T.eq(tostring(t.a.device), "cpu")
  T.eq(t.a:sum():item(), 10)
  T.eq(t.b[{ 2, 1 }], 3)
end)

T.test("to(device), cuda() and cpu() move data and gradients between devices", function()
  local x = torch.tensor({ 1, 2, 3 }, { dtype = "float64", requires_grad = true })
  -- to the device a tensor is on: the tensor itself (the same storage)
  local y = torch.zeros(2)
  y:to("cpu")[1] = 7; y:cpu()[2] = 8
  T.eq(y[1], 7); T.eq(y[2], 8)
  local before = fake.counters().from_host
  local d = x:to("cuda")
  T.ok(fake.counters().from_host > before, "moved through copy_from_host")
  T.eq(tostring(d.device), "cuda:0")
  local e = torch.zeros(2, { device = "cuda" })
  e:cuda()[1] = 3
  T.eq(e[1], 3)
  T.eq(tostring(x:cuda("cuda:1").device), "cuda:1")
  local f = x:to("cuda", torch.float32)
  T.eq(tostring(f.device), "cuda:0"); T.eq(tostring(f.dtype), "torch.float32")
  T.eq(d:cpu():sum():item(), 6)
  -- the gradient comes back to the cpu leaf
  local loss = (d * d):sum()
  loss:backward()
  T.eq(tostring(x.grad.device), "cpu")
  T.eq(x.grad[1], 2); T.eq(x.grad[3], 6)
  -- copy_ crosses devices; other ops do not
  local h = torch.zeros(3)
  h:copy_(d)
  T.eq(h[2]:item(), 2)
  local ok, err = pcall(function() return x:cuda("cpu") end)
  T.ok(not ok and err:find("cuda: argument 'device' must be a cuda device", 1, true), err)
  ok, err = pcall(function() return x:to("cuda:5") end)
  T.ok(not ok and err:find("cuda:5 does not exist", 1, true), err)
end)

T.test("gradcheck through to(device) and back", function()
  local x = torch.randn(3, 2, { dtype = "float64", requires_grad = true })
  T.ok(torch.autograd.gradcheck(function(a) return (a:to("cuda") * 3):cpu() end, { x }))
  T.ok(torch.autograd.gradcheck(function(a) return a:to("cuda"):t():exp():sum() end, { x }))
end)

T.test("indexing, masks and the fused optimizers run on the device", function()
  local x = torch.tensor({ 1, -2, 3, -4 }, { device = "cuda" })
  local m = x:gt(0)
  T.eq(tostring(m.device), "cuda:0")
  local pos = x[m]
  T.eq(tostring(pos.device), "cuda:0"); T.eq(pos:sum():item(), 4)
  local idx = torch.tensor({ 4, 1 }, { device = "cuda" })
  T.eq(x:index_select(1, idx):cpu()[1], -4)
  local nn, optim = require "nn", require "optim"
  local lin = nn.Linear(3, 2)
  local w = lin.weight
  local opt = optim.AdamW(lin:parameters(), { lr = 0.1 })   -- made before the move: still the same parameters
  lin:cuda()
  T.ok(rawequal(lin.weight, w), "the parameter keeps its identity")
  T.eq(tostring(w.device), "cuda:0")
  local inp = torch.randn(5, 3, { device = "cuda" })
  local before = lin.weight:cpu():clone()
  local loss = lin(inp):pow(2):sum()
  loss:backward()
  T.eq(tostring(lin.weight.grad.device), "cuda:0")
  opt:step()
  T.eq(tostring(lin.weight.device), "cuda:0")
  T.ok((lin.weight:cpu() - before):abs():sum():item() > 0, "the step moved the weights")
  lin:cpu()
  T.eq(tostring(lin.bias.device), "cpu")
  -- p.data = q takes q's device, as in PyTorch
  local p = torch.zeros(2)
  p.data = torch.ones(2, { device = "cuda:1" })
  T.eq(tostring(p.device), "cuda:1")
end)

T.test("the backend's memory statistics", function()
  local before = torch.memory_stats("cuda").allocated
  local x <close> = torch.empty(1024, { device = "cuda" })
  T.eq(torch.memory_stats("cuda").allocated - before, 4096)
  torch.synchronize("cuda")
  torch.empty_cache("cuda")
end)

T.test("tensors on two devices of one backend in one op are an error naming the op and the devices", function()
  local a = torch.ones(3, { device = "cuda:0" })
  local b = torch.ones(3, { device = "cuda:1" })
  T.raises(function() return a + b end, "add: expected all tensors to be on the same device, but found tensors on cuda:0 and cuda:1")
  T.raises(function() a:add_(b) end, "add_: expected all tensors to be on the same device")
  T.raises(function() return torch.cat({ a, b }) end, "expected all tensors to be on the same device", "cuda:0 and cuda:1")
  T.raises(function() return torch.add(a, a, { out = torch.empty(3, { device = "cuda:1" }) }) end, "cuda:0 and cuda:1")
  T.raises(function() return a:matmul(b) end, "matmul", "cuda:0 and cuda:1")
  -- numbers, one device, and copies across devices stay fine
  T.tensor((a + 1):cpu(), { 2, 2, 2 })
  T.tensor((b * b):cpu(), { 1, 1, 1 })
  T.tensor(a:copy_(b):cpu(), { 1, 1, 1 })
  T.tensor(b:to("cuda:0"):add(a):cpu(), { 2, 2, 2 })
end)

T.done()
