-- test_autocast.lua — torch.autocast("cuda"): the CUDA table of src/ops/autocast.lua on cuda
-- tensors (float16 by default), through the same Autocast key as the CPU's. Under the fake
-- driver the kernels are the CPU's on host memory, so this checks the policies (dtypes,
-- explicit dtype= winning, promotion, the banned op, the two device types' independence),
-- not the GPU's arithmetic. The same file runs unchanged on a real GPU.
local T = require "testing"
local c = torch.cuda

if not c.is_available() then
  T.skip("cuda autocast", "torch.cuda is not available: " .. tostring(c.reason or "?"))
  T.done()
  return
end

local nn = require "nn"
local F = nn.functional
local f16, bf16, f32, f64 = torch.float16, torch.bfloat16, torch.float32, torch.float64

local function cuda(t) return t:cuda() end
torch.manual_seed(11)
local x, y = cuda(torch.randn(4, 4)), cuda(torch.randn(4, 4))
local xh = x:half()

local function on(fn, dtype) return torch.autocast("cuda", { dtype = dtype }, fn) end

T.test("the CUDA defaults and the two device types' states are apart", function()
  T.eq(torch.get_autocast_dtype("cuda"), f16)
  on(function()
    T.eq(torch.is_autocast_enabled("cuda"), true)
    T.eq(torch.is_autocast_enabled("cpu"), false)
    T.eq(torch.mm(x, y).dtype, f16)
    local xc = torch.randn(2, 2)
    T.eq(torch.mm(xc, xc).dtype, f32, "a CPU call inside a cuda region is not cast")
  end)
end)

T.test("lower precision: the matmul, linear and convolution family", function()
  on(function()
    T.eq(torch.mm(x, y).dtype, f16)
    T.eq(torch.mv(x, y[1]).dtype, f16, "mv is on CUDA's list")
    T.eq(F.linear(x, y).dtype, f16)
    T.eq(x:matmul(y).dtype, f16)
    local img, w = cuda(torch.randn(1, 2, 6, 6)), cuda(torch.randn(3, 2, 3, 3))
    T.eq(F.conv2d(img, w).dtype, f16)
  end)
  T.eq(on(function() return torch.mm(x, y) end, bf16).dtype, bf16, "bfloat16 on request")
end)

T.test("fp32: transcendentals, norms and losses run in float32", function()
  on(function()
    T.eq(xh:exp().dtype, f32)
    T.eq(xh:abs():log1p().dtype, f32)
    T.eq(F.layer_norm(xh, { 4 }).dtype, f32)
    T.eq(F.mse_loss(xh, xh).dtype, f32)
    T.eq(F.soft_margin_loss(xh, xh:sign()).dtype, f32, "a loss written in Lua")
  end)
end)

T.test("fp32_dtype: softmax and sum in float32 unless dtype= is given", function()
  on(function()
    T.eq(torch.softmax(xh, 1).dtype, f32)
    T.eq(torch.log_softmax(xh, 1).dtype, f32)
    T.eq(xh:sum().dtype, f32)
    T.eq(xh:cumsum(1).dtype, f32)
    T.eq(torch.softmax(xh, 1, { dtype = f64 }).dtype, f64, "an explicit dtype wins")
    T.eq(x:double():sum().dtype, f64, "float64 is not eligible")
  end)
end)

T.test("promote and banned", function()
  on(function()
    T.eq(torch.addcmul(xh, x, xh).dtype, f32)
    T.eq(torch.addcmul(xh, xh, xh).dtype, f16)
    T.raises(function() F.binary_cross_entropy(xh:sigmoid(), xh:sigmoid()) end,
      "binary_cross_entropy", "unsafe to autocast", "with_logits")
  end)
end)

T.test("convolutions take a 16-bit dtype through float32, never a mix of dtypes", function()
  local img, w = cuda(torch.randn(1, 2, 6, 6)), cuda(torch.randn(3, 2, 3, 3))
  local y = F.conv2d(img:half(), w:half())
  T.eq(y.dtype, f16)
  local err = (y:float():cpu() - F.conv2d(img:half():float(), w:half():float()):cpu()):abs():max():item()
  T.ok(err < 1e-2, "float16 conv2d near its float32 result: " .. err)
  T.raises(function() F.conv2d(img:bfloat16(), w) end, "conv2d", "weight")
end)

T.test("gradients reach float32 cuda leaves", function()
  local w = cuda(torch.randn(4, 4)):requires_grad_()
  local loss = on(function() return F.mse_loss(torch.mm(x, w), y) end)
  T.eq(loss.dtype, f32)
  loss:backward()
  T.eq(w.grad.dtype, f32)
  T.eq(tostring(w.grad.device):sub(1, 4), "cuda")
end)

T.done()
