-- CUDA scans (src/cuda/scan.c over the scan kernel of src/cuda/kernels/reduce.cu): cumsum,
-- cumprod, cummax, cummin, logcumsumexp compared with the CPU's over dtypes, dims, layouts,
-- empty and 0-d inputs, dtype= and out=, errors and gradients; the CUDA kernel ran, not the
-- CPU fallback.
local T = require "testing"
local C = require "cuda.check_reduce"
local c = torch.cuda

if not c.is_available() then
  T.skip("cuda scans", "torch.cuda is not available")
  T.done()
end

local check, gen = C.check, C.gen
local ALL = { torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64,
              torch.int16, torch.int8, torch.uint8, torch.bool }

local function views(dt)
  return {
    { "4x5x6", gen(dt, { 4, 5, 6 }) },
    { "transposed", gen(dt, { 6, 5 }):t() },
    { "stepped", gen(dt, { 8, 7, 6 }):narrow(1, 2, 5):unfold(2, 1, 2):select(4, 1) },
    { "1", gen(dt, { 1 }) },
    { "1025", gen(dt, { 1025 }) },
    { "0", gen(dt, { 0 }) },
    { "3x0x2", gen(dt, { 3, 0, 2 }) },
    { "0-d", gen(dt, {}) },
  }
end

T.test("cumsum, cumprod, cummax, cummin over dtypes, dims, layouts", function()
  for _, dt in ipairs(ALL) do
    for _, v in ipairs(views(dt)) do
      local x = v[2]
      for _, d in ipairs({ 1, -1, 2 }) do
        if d <= math.max(x:dim(), 1) then
          local what = ("%s %s dim %d"):format(dt.name, v[1], d)
          check("cumsum " .. what, function(t) return t:cumsum(d) end, { x })
          check("cumprod " .. what, function(t) return t:cumprod(d) end, { x:is_floating_point() and x / 3 or x })
          check("cummax values " .. what, function(t) return (t:cummax(d)) end, { x })
          check("cummax indices " .. what, function(t) local _, i = t:cummax(d) return i end, { x })
          check("cummin indices " .. what, function(t) local _, i = t:cummin(d) return i end, { x })
          if x:is_floating_point() then
            check("logcumsumexp " .. what, function(t) return t:logcumsumexp(d) end, { x })
          end
        end
      end
    end
  end
end)

T.test("ties, NaN and infinities", function()
  local nan = 0 / 0
  local x = torch.tensor({ { 1, 3, 3, 2, 3 }, { 2, nan, 5, nan, 1 }, { -math.huge, -math.huge, math.huge, 1, math.huge } })
  for _, dt in ipairs({ torch.float32, torch.float64, torch.float16 }) do
    check("cummax " .. dt.name, function(t) local _, i = t:cummax(2) return i end, { x:to(dt) })
    check("cummin " .. dt.name, function(t) local v = t:cummin(2) return v end, { x:to(dt) })
    check("logcumsumexp " .. dt.name, function(t) return t:logcumsumexp(2) end, { x:to(dt) })
  end
  check("cummax int ties", function(t) local _, i = t:cummax(1) return i end, { torch.tensor({ 2, 2, 1, 2 }) })
end)

T.test("dtype=, out= and a long line", function()
  local x = gen(torch.int32, { 3, 4 })
  check("cumsum dtype=", function(t) return t:cumsum(2, { dtype = torch.float64 }) end, { x })
  check("cumprod dtype=", function(t) return t:cumprod(1, { dtype = torch.float32 }) end, { x })
  local o = torch.zeros(1):cuda()
  torch.cumsum(x:cuda(), 2, { out = o })
  C.close(o, x:cumsum(2):float(), "cumsum out=")
  check("cumsum 2^20+3", function(t) return t:cumsum(1) end, { gen(torch.float64, { 2 ^ 20 + 3 }) })
end)

T.test("errors are the CPU's", function()
  check("cumsum bad dim", function(t) return t:cumsum(3) end, { torch.zeros(2, 2) })
  check("cummax bad dim", function(t) return t:cummax(-3) end, { torch.zeros(2, 2) })
  check("logcumsumexp int", function(t) return t:logcumsumexp(1) end, { torch.tensor({ 1, 2 }) })
end)

T.test("gradients through scans on cuda match the CPU's", function()
  local x = torch.randn(4, 5):double()
  local fs = {
    cumsum = function(t) return t:cumsum(2):pow(2):sum() end,
    cumprod = function(t) return t:cumprod(1):sum() end,
    cummax = function(t) local v = t:cummax(2) return v:pow(2):sum() end,
    logcumsumexp = function(t) return t:logcumsumexp(2):sum() end,
  }
  for name, f in pairs(fs) do
    local a = x:clone():requires_grad_()
    f(a):backward()
    local b = x:cuda():requires_grad_()
    f(b):backward()
    C.close(b.grad, a.grad, name .. " grad", 1e-10)
  end
end)

T.done()
