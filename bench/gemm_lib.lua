-- gemm_lib.lua — float32 products through each library lutorch can use (OpenBLAS, oneDNN's
-- sgemm; torch.backends.cpu.set_gemm_library) at the shapes training runs: a batch of 64
-- through Linear layers (forward, input and weight gradients), an LSTM's gates, im2col
-- convolutions, attention's small products, a classifier's last layer, 2048^2. One thread:
--   OPENBLAS_NUM_THREADS=1 LUTORCH_NUM_THREADS=1 taskset -c 1 lutorch bench/gemm_lib.lua
-- Prints GFLOP/s per library (median of 7 timed runs) and the ratio of the times.
-- With the argument "grid": the ratio time(oneDNN) / time(OpenBLAS) over a grid of shapes
-- with B transposed (row-major C = A B^T, both contiguous along K: the weight gradients'
-- form), CPU time (os.clock), which decided gemm_lib.c's rule for them.
local cpu = torch.backends.cpu
if not pcall(cpu.set_gemm_library, "onednn") then
  print("oneDNN is not loadable here: " .. tostring(select(2, cpu.gemm_library()))); return
end
torch.manual_seed(0)
-- { name, M, N, K, A transposed, B transposed }: row-major C (M x N) = op(A) op(B)
local shapes = {
  { "MLP fc1 forward 64x784 -> 512", 64, 512, 784, false, true },
  { "MLP fc1 input grad", 64, 784, 512, false, false },
  { "MLP fc1 weight grad", 512, 784, 64, true, false },
  { "MLP fc2 forward 64x512 -> 256", 64, 256, 512, false, true },
  { "LSTM gates 64x512 -> 2048", 64, 2048, 512, false, true },
  { "im2col conv 16 x 441 x 144", 16, 441, 144, false, false },
  { "LeNet conv2 im2col 16 x 1024 x 150", 16, 1024, 150, false, false },
  { "attention 128x64 . 64x128", 128, 128, 64, false, true },
  { "ResNet 3x3 64 x 3136 x 576", 64, 3136, 576, false, false },
  { "LSTM gates input grad 64x2048 -> 512", 64, 512, 2048, false, false },
  { "1x1 conv 64 x 784 x 256", 64, 784, 256, false, false },
  { "conv1d shifted 64 x 1000 x 64", 64, 1000, 64, false, false },
  { "classifier 64x256 -> 10", 64, 10, 256, false, true },
  { "32^3", 32, 32, 32, false, false },
  { "512^2", 512, 512, 512, false, false },
  { "1024^2", 1024, 1024, 1024, false, false },
  { "2048^2", 2048, 2048, 2048, false, false },
}
local function median(t) table.sort(t); return t[(#t + 1) // 2] end
local timer = torch.Timer()
-- GFLOP/s of both libraries, the timed runs alternating between them (a shared machine's
-- drift then touches both alike)
local function gflops(A, B, M, N, K)
  local macs = M * N * K
  local reps = math.max(1, math.floor(2e8 / macs))
  local ts = { openblas = {}, onednn = {} }
  for _, lib in ipairs({ "openblas", "onednn" }) do
    cpu.set_gemm_library(lib)
    for _ = 1, 2 do local c = A:mm(B) end
  end
  for r = 1, 7 do
    for _, lib in ipairs({ "openblas", "onednn" }) do
      cpu.set_gemm_library(lib)
      timer:reset()
      for _ = 1, reps do local c = A:mm(B) end
      ts[lib][r] = timer:time().real / reps
    end
  end
  return 2 * macs / median(ts.openblas) / 1e9, 2 * macs / median(ts.onednn) / 1e9
end
if arg and arg[1] == "grid" then
  local function secs(lib, A, B, M, N, K)
    cpu.set_gemm_library(lib)
    local reps = math.max(1, math.floor(3e7 / (M * N * K)))
    local c = A:mm(B)
    local ts = {}
    for r = 1, 5 do
      local t0 = os.clock()
      for _ = 1, reps do c = A:mm(B) end
      ts[r] = (os.clock() - t0) / reps
    end
    return median(ts)
  end
  print("time(oneDNN) / time(OpenBLAS), C (M x N) = A (M x K) B^T, B stored N x K")
  for _, M in ipairs({ 16, 64, 128, 256 }) do
    for _, N in ipairs({ 16, 64, 256, 1024 }) do
      local row = {}
      for _, K in ipairs({ 64, 784, 1024, 1568, 2048, 3136, 3248, 4096, 6272 }) do
        if M * N * K >= 2 ^ 18 then
          local A, B = torch.randn(M, K), torch.randn(N, K):t()
          row[#row + 1] = ("%d:%.2f"):format(K, secs("onednn", A, B, M, N, K) / secs("openblas", A, B, M, N, K))
        end
      end
      print(("M=%-4d N=%-5d %s"):format(M, N, table.concat(row, " ")))
    end
  end
  cpu.set_gemm_library("auto")
  return
end
print(("%-36s %10s %10s %8s"):format("product", "OpenBLAS", "oneDNN", "time o/b"))
for _, s in ipairs(shapes) do
  local name, M, N, K, ta, tb = table.unpack(s)
  local A = ta and torch.randn(K, M):t() or torch.randn(M, K)
  local B = tb and torch.randn(N, K):t() or torch.randn(K, N)
  local b, o = gflops(A, B, M, N, K)
  print(("%-36s %10.1f %10.1f %8.2f"):format(name, b, o, b / o))
end
cpu.set_gemm_library("auto")
