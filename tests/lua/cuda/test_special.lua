-- test_special.lua — the CUDA kernels of torch.special's own ops and of igamma, igammac
-- (src/cuda/special.c over the special group of kernels/special.cu) against the CPU: every op
-- over the float dtypes and an integer one, hard values (0, signs, poles, infinities, NaN, the
-- tails), transposed and broadcast inputs, out=, and a gradient through the op on cuda
-- tensors. Both backends run the scalar code of src/meta/special_math.h; each check also reads
-- torch.cuda._kernel_counts() (check.lua): the CUDA kernel ran and the CPU's did not. Runs
-- unchanged on a real GPU, where CUDA's erfc, lgamma, j0, ... differ from glibc's by ulps.
local T = require "testing"
local check = require "cuda.check"
local c = torch.cuda

if not c.is_available() then
  T.skip("cuda special", "torch.cuda is not available: " .. tostring(c.unavailable_reason()))
  T.done()
  return
end

local fake = os.getenv("LUTORCH_CUDA_DRIVER") == "fake"
local sp = torch.special
local nan, inf = 0 / 0, math.huge
local TOL = fake and { [torch.float64] = 1e-13, [torch.float32] = 1e-6, [torch.float16] = 1e-3, [torch.bfloat16] = 8e-3 }
             or { [torch.float64] = 1e-11, [torch.float32] = 1e-5, [torch.float16] = 2e-3, [torch.bfloat16] = 1.6e-2 }
local FLOATS = { torch.float64, torch.float32, torch.float16, torch.bfloat16 }
local HARD = { 0, -0.0, 1e-30, -1e-5, 0.3, -0.7, 1, -1.5, 2.4048, 5, -8, 12.5, -26.5, 30, -38, 100, inf, -inf, nan }
local PROB = { 0, 1e-300, 1e-20, 0.01, 0.2, 0.25, 0.5, 0.75, 0.9, 1 - 1e-10, 1, -0.5, 2, nan }
local UNARY = { "erfcx", "i0e", "i1e", "ndtr", "ndtri", "log_ndtr", "entr", "bessel_j0", "bessel_j1",
                "bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
                "scaled_modified_bessel_k1" }

T.test("unary ops match the CPU", function()
  for _, name in ipairs(UNARY) do
    local f = sp[name]
    local vals = name == "ndtri" and PROB or HARD
    for _, dt in ipairs(FLOATS) do
      local x = torch.tensor(vals, { dtype = torch.float64 }):to(dt)
      check.check(name .. " " .. dt.name, f, { x }, nil, TOL)
      local r = torch.randn(7, 5):to(dt)
      if name == "ndtri" then r = torch.rand(7, 5):to(dt) end
      check.check(name .. " " .. dt.name .. " transposed", function(t) return f(t:t()) end, { r }, nil, TOL)
    end
    check.check(name .. " int64", f, { torch.tensor({ 0, 1, 2, 7 }) }, nil, TOL)
    check.check(name .. " empty", f, { torch.zeros(0, 3) }, "any", TOL)
  end
end)

T.test("xlog1py and zeta match the CPU, broadcasting", function()
  local xs = torch.tensor({ 0, 0, 1, -2, 3.5, 2, 0, inf, nan }, { dtype = torch.float64 })
  local ys = torch.tensor({ 0, -1, 0, 1e-20, 2.5, -1, inf, 1, 1 }, { dtype = torch.float64 })
  local ss = torch.tensor({ 2, 3, 1.5, 10, 1, 0.5, 2, 3, 65 }, { dtype = torch.float64 })
  local qs = torch.tensor({ 1, 0.5, 1e-3, 7.25, 1, 1, -3, -2.5, 1 }, { dtype = torch.float64 })
  for _, dt in ipairs(FLOATS) do
    check.check("xlog1py " .. dt.name, sp.xlog1py, { xs:to(dt), ys:to(dt) }, nil, TOL)
    check.check("zeta " .. dt.name, sp.zeta, { ss:to(dt), qs:to(dt) }, nil, TOL)
    check.check("gammainc " .. dt.name, sp.gammainc, { ss:to(dt), qs:abs():to(dt) }, nil, TOL)
    check.check("gammaincc " .. dt.name, sp.gammaincc, { qs:abs():to(dt), ss:to(dt) }, nil, TOL)
  end
  local a = torch.rand(4, 1):double() * 3 + 1.5
  local b = torch.rand(5):double() * 4 + 0.1
  check.check("zeta broadcast", sp.zeta, { a, b }, nil, TOL)
  check.check("xlog1py broadcast", sp.xlog1py, { a, b }, nil, TOL)
  check.check("zeta number", function(s) return sp.zeta(s, 2) end, { a }, nil, TOL)
  check.check("zeta ints", sp.zeta, { torch.tensor({ 2, 3 }), torch.tensor({ 1, 2 }) }, nil, TOL)
  check.check("zeta shapes", sp.zeta, { torch.randn(3), torch.randn(4) }, nil, TOL)
end)

T.test("out= and gradients on cuda tensors", function()
  local x = torch.randn(6):double():cuda()
  local o = torch.empty(6, { dtype = torch.float64 }):cuda()
  sp.erfcx(x, { out = o })
  check.close(o, sp.erfcx(x:cpu()), "erfcx out=", TOL)
  local xg = torch.randn(6):double():cuda()
  xg.requires_grad = true
  local g = torch.autograd.grad({ sp.i1e(xg):sum() }, { xg })[1]
  local xc = xg:detach():cpu()
  xc.requires_grad = true
  local gc = torch.autograd.grad({ sp.i1e(xc):sum() }, { xc })[1]
  check.close(g, gc, "i1e gradient", TOL)
end)

T.done()
