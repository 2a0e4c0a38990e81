-- lt_cuda_bench.lua — lutorch's side of the GPU benchmarks (tools/gpu_check.sh; PyTorch's
-- side is pt_cuda_bench.py, the same work on the same GPU):
--   add_gbps     c = a + b over float32 tensors of MIB MiB each: GB/s moved (3 tensors)
--   sum_gbps     a:sum() over MIB MiB of float32: GB/s read
--   mm_tflops    a:mm(b) in bfloat16, N x N by N x N: TFLOP/s (2 N^3 per product)
--   mlp_ms       one training step of the Fashion-MNIST MLP (784-512-256-10, ReLU, batch 64,
--                cross entropy, SGD momentum 0.9) on a synthetic batch: ms per step
-- Usage: lutorch bench/cuda/lt_cuda_bench.lua [MIB [N [STEPS]]] (defaults 256 8192 200).
-- Prints "key value unit" lines; a benchmark that fails prints "key n/a (the error)", so
-- one op without a CUDA kernel does not hide the others. Inputs are made on the CPU and
-- copied over, so only the op timed needs its CUDA kernel.
local nn = require "nn"
local optim = require "optim"
local F = nn.functional

local MIB = tonumber(arg[1]) or 256
local N = tonumber(arg[2]) or 8192
local STEPS = tonumber(arg[3]) or 200
local dev = "cuda"
local sync = torch.cuda.synchronize

-- seconds per call of fn, the best of `reps` timed loops of `iters` calls after warm-up
local function time(fn, iters, reps)
  fn(); fn(); sync()
  local best = math.huge
  for _ = 1, reps or 3 do
    local t0 = torch.time()
    for _ = 1, iters do fn() end
    sync()
    best = math.min(best, (torch.time() - t0) / iters)
  end
  return best
end

local function bench(key, unit, f)
  local ok, v = pcall(f)
  if ok then print(("%s %.4g %s"):format(key, v, unit))
  else print(("%s n/a (%s)"):format(key, tostring(v):gsub("\n.*", ""))) end
  io.stdout:flush()
end

print(("device %s | lutorch, %d MiB, mm %d, %d MLP steps"):format(
  torch.cuda.get_device_name and torch.cuda.get_device_name() or "cuda", MIB, N, STEPS))

local n = MIB * 1024 * 1024 // 4
bench("add_gbps", "GB/s", function()
  local a, b = torch.ones(n):to(dev), torch.ones(n):to(dev)
  local c = torch.empty({ n }, { device = dev })
  local t = time(function() torch.add(a, b, { out = c }) end, 20)
  return 3 * n * 4 / t / 1e9
end)
collectgarbage()
bench("sum_gbps", "GB/s", function()
  local a = torch.ones(n):to(dev)
  local t = time(function() return a:sum() end, 20)
  return n * 4 / t / 1e9
end)
collectgarbage()
bench("mm_tflops", "TFLOP/s", function()
  local a = torch.randn(N, N):to(torch.bfloat16):to(dev)
  local b = torch.randn(N, N):to(torch.bfloat16):to(dev)
  local t = time(function() return a:mm(b) end, 5)
  return 2 * N ^ 3 / t / 1e12
end)
collectgarbage()
bench("mlp_ms", "ms", function()
  torch.manual_seed(0)
  local model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))
  model:to(dev)
  local opt = optim.SGD(model:parameters(), { lr = 0.05, momentum = 0.9 })
  local x = torch.rand(64, 784):to(dev)
  local y = torch.randint(1, 11, { 64 }):to(dev)
  local function step()
    local loss = F.cross_entropy(model(x), y)
    opt:zero_grad()
    loss:backward()
    opt:step()
    return loss
  end
  return time(step, STEPS, 1) * 1e3
end)
