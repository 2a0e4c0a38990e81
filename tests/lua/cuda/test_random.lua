-- test_random.lua — the CUDA random and creation kernels (src/cuda/random.c,
-- creation.c, kernels/random.cu, creation.cu): the per-device generators, the
-- numbers against the CPU's (the same Philox streams), distributions, the creation
-- ops, dropout, and bad input. Runs under the fake driver (make test) and unchanged
-- on a GPU (tools/gpu_check.sh).
local T = require "testing"
torch = require "torch"

if not torch.cuda.is_available() then
  T.skip("cuda random", "CUDA is not available: " .. tostring(torch.cuda.unavailable_reason()))
  T.done()
  return
end
local fake = torch.cuda.driver == "fake"
local C = "cuda"

-- fn() did not run the CPU's kernel (the fallback), and launched a CUDA kernel
-- (host or device build) when its result is not empty, unless may_memset (a
-- fill of zeros or bytes is a driver memset)
local function on_cuda_kernels(fn, may_memset)
  torch.cuda._kernel_counts(true)
  local r = { fn() }
  local k = torch.cuda._kernel_counts()
  if not may_memset and r[1]:numel() > 0 then T.ok(k.host + k.device > 0, "no CUDA kernel ran") end
  T.eq(k.cpu, 0, "CPU fallbacks")
  return table.unpack(r)
end

-- the CUDA op and the CPU op under the same seed
local function both(seed, make)
  torch.manual_seed(seed)
  local a = make("cpu")
  torch.manual_seed(seed)
  local b = on_cuda_kernels(function() return make(C) end)
  return a, b
end

local function maxdiff(a, b) return (a:double() - b:cpu():double()):abs():max():item() end

T.test("rand and uniform_ equal the CPU's numbers, every dtype and size", function()
  for _, dt in ipairs({ torch.float32, torch.float64, torch.float16, torch.bfloat16 }) do
    for _, n in ipairs({ 0, 1, 31, 1025 }) do
      local a, b = both(7, function(d) return torch.rand(n, { dtype = dt, device = d }) end)
      T.eq(b.device.type, "cuda")
      T.eq(b.dtype, dt)
      T.ok(torch.equal(a, b:cpu()), "rand " .. tostring(dt) .. " n=" .. n)
      a, b = both(8, function(d) return torch.empty(n, { dtype = dt, device = d }):uniform_(-2, 3) end)
      T.ok(torch.equal(a, b:cpu()), "uniform_ " .. tostring(dt))
    end
  end
end)

T.test("randn, normal, normal_ and exponential_ match the CPU's (exactly in the host build)", function()
  for _, dt in ipairs({ torch.float32, torch.float64 }) do
    local a, b = both(9, function(d) return torch.randn({ 33, 31 }, { dtype = dt, device = d }) end)
    if fake then T.ok(torch.equal(a, b:cpu()), "randn exact") else T.ok(maxdiff(a, b) < 1e-4) end
    a, b = both(10, function(d) return torch.normal(2, 3, { 1025 }, { dtype = dt, device = d }) end)
    T.ok(maxdiff(a, b) < 1e-4)
    a, b = both(11, function(d) return torch.empty(1025, { dtype = dt, device = d }):normal_(-1, 0.5) end)
    T.ok(maxdiff(a, b) < 1e-4)
    a, b = both(12, function(d) return torch.empty(1025, { dtype = dt, device = d }):exponential_(2) end)
    if fake then T.ok(torch.equal(a, b:cpu()), "exponential exact") else T.ok(maxdiff(a, b) < 1e-4) end
  end
  local x = torch.zeros(3, 4, { device = C })
  local a, b = both(13, function(d) return torch.rand_like(torch.zeros(3, 4, { device = d })) end)
  T.ok(torch.equal(a, b:cpu()))
  a, b = both(13, function(d) return torch.randn_like(torch.zeros(3, 4, { device = d, dtype = torch.float64 })) end)
  T.ok(maxdiff(a, b) < 1e-9)
  T.eq(b.dtype, torch.float64)
  T.eq(x.device.type, "cuda")
end)

T.test("integers: randint, randint_like, random_ (int64 ranges, bool, floats) equal the CPU's", function()
  local cases = {
    function(d) return torch.randint(0, 10, { 1025 }, { device = d }) end,
    function(d) return torch.randint(7, { 31 }, { device = d, dtype = torch.int32 }) end,
    function(d) return torch.randint(-2 ^ 62, 2 ^ 62, { 257 }, { device = d }) end,
    function(d) return torch.randint(math.mininteger, math.maxinteger, { 65 }, { device = d }) end,
    function(d) return torch.randint(0, 2, { 100 }, { device = d, dtype = torch.bool }) end,
    function(d) return torch.randint_like(torch.zeros(5, 5, { device = d, dtype = torch.int16 }), -3, 4) end,
    function(d) return torch.randint_like(torch.zeros(5, 5, { device = d, dtype = torch.uint8 }), 200) end,
    function(d) return torch.zeros(1025, { device = d, dtype = torch.int64 }):random_() end,
    function(d) return torch.zeros(1025, { device = d, dtype = torch.float32 }):random_() end,
    function(d) return torch.zeros(100, { device = d, dtype = torch.bool }):random_() end,
    function(d) return torch.zeros(100, { device = d, dtype = torch.int8 }):random_(-5, 5) end,
    function(d) return torch.zeros(100, { device = d, dtype = torch.float64 }):random_(1000) end,
  }
  for i, f in ipairs(cases) do
    local a, b = both(20 + i, f)
    T.eq(b.dtype, a.dtype)
    T.ok(torch.equal(a, b:cpu()), "case " .. i)
  end
  local r = torch.randint(3, 6, { 4096 }, { device = C }):cpu()
  T.ok(r:min():item() == 3 and r:max():item() == 5)
end)

T.test("bernoulli in every form equals the CPU's", function()
  local a, b = both(30, function(d) return torch.zeros(1025, { device = d }):bernoulli_(0.3) end)
  T.ok(torch.equal(a, b:cpu()))
  a, b = both(31, function(d) return torch.bernoulli(torch.zeros(4, 5, { device = d }), 0.7) end)
  T.ok(torch.equal(a, b:cpu()))
  local p = torch.rand(6, 7)
  a, b = both(32, function(d) return torch.bernoulli(p:to(d)) end)
  T.ok(torch.equal(a, b:cpu()))
  a, b = both(33, function(d) return torch.zeros(6, 7, { device = d, dtype = torch.float64 }):bernoulli_(p:to(d)) end)
  T.ok(torch.equal(a, b:cpu()))
  -- p broadcast to self
  a, b = both(34, function(d) return torch.zeros(6, 7, { device = d }):bernoulli_(torch.rand(7):to(d)) end)
  T.eq(b:size(), { 6, 7 })
end)

T.test("distributions: mean and variance of 2^20 samples", function()
  local n = 2 ^ 20
  torch.cuda.manual_seed(1234)
  local u = torch.rand(n, { device = C }):cpu():double()
  T.ok(math.abs(u:mean():item() - 0.5) < 0.003, "uniform mean")
  T.ok(math.abs(u:var():item() - 1 / 12) < 0.002, "uniform var")
  T.ok(u:min():item() >= 0 and u:max():item() < 1)
  local z = torch.randn(n, { device = C, dtype = torch.float64 }):cpu()
  T.ok(math.abs(z:mean():item()) < 0.005, "normal mean")
  T.ok(math.abs(z:var():item() - 1) < 0.01, "normal var")
  local e = torch.empty(n, { device = C }):exponential_(4):cpu():double()
  T.ok(math.abs(e:mean():item() - 0.25) < 0.003, "exponential mean")
  T.ok(math.abs(e:var():item() - 1 / 16) < 0.003, "exponential var")
  local bb = torch.zeros(n, { device = C }):bernoulli_(0.2):cpu():double()
  T.ok(math.abs(bb:mean():item() - 0.2) < 0.003, "bernoulli mean")
  local ri = torch.randint(0, 10, { n }, { device = C }):cpu():double()
  T.ok(math.abs(ri:mean():item() - 4.5) < 0.02, "randint mean")
  T.ok(math.abs(ri:var():item() - 8.25) < 0.05, "randint var")
end)

T.test("seeded draws reproduce; successive draws (other offsets) differ", function()
  torch.cuda.manual_seed(5)
  local a = torch.rand(1000, { device = C })
  local b = torch.rand(1000, { device = C })
  torch.cuda.manual_seed(5)
  local a2 = torch.rand(1000, { device = C })
  T.ok(torch.equal(a:cpu(), a2:cpu()))
  T.ok(not torch.equal(a:cpu(), b:cpu()))
  -- the state is (seed, offset): saving and restoring it replays
  local st = torch.cuda.get_rng_state()
  local c = torch.randn(100, { device = C })
  torch.cuda.set_rng_state(st)
  T.ok(torch.equal(c:cpu(), torch.randn(100, { device = C }):cpu()))
  -- a cuda draw does not move the cpu's generator, nor a cpu draw the cuda one
  torch.manual_seed(6)
  local cpu1 = torch.rand(10)
  torch.manual_seed(6)
  local _ = torch.rand(10, { device = C })
  T.ok(torch.equal(torch.rand(10), cpu1))
  T.eq(torch.cuda.initial_seed(), 6)
end)

T.test("torch.Generator('cuda') feeds cuda ops; a cpu generator is refused", function()
  local g = torch.Generator(C)
  T.eq(g.device.type, "cuda")
  g:manual_seed(42)
  local a = torch.rand(100, { device = C, generator = g })
  g:manual_seed(42)
  local b = torch.rand(100, { device = C, generator = g })
  T.ok(torch.equal(a:cpu(), b:cpu()))
  local cg = torch.Generator():manual_seed(42)
  T.ok(torch.equal(torch.rand(100, { generator = cg }), a:cpu()), "same seed, same stream as the cpu's")
  T.raises(function() torch.rand(3, { device = C, generator = torch.Generator() }) end, "rand", "cuda generator")
end)

T.test("in place on strided views draws through a contiguous copy", function()
  torch.manual_seed(3)
  local base = torch.zeros(8, 6)
  local v = base:t():uniform_()
  torch.manual_seed(3)
  local cb = torch.zeros(8, 6, { device = C })
  local cv = on_cuda_kernels(function() return cb:t():uniform_() end)
  T.ok(torch.equal(base, cb:cpu()))
  T.ok(torch.equal(v, cv:cpu()))
  local s = torch.zeros(20, { device = C })
  s:narrow(1, 1, 10):normal_()
  T.eq(s:cpu():narrow(1, 11, 10):abs():sum():item(), 0)
end)

T.test("dropout: native_dropout and the mask equal the CPU's", function()
  local x = torch.randn(33, 31)
  local a1, a2 = nil, nil
  torch.manual_seed(40)
  a1, a2 = torch.native_dropout(x, 0.3, true)
  torch.manual_seed(40)
  local b1, b2 = on_cuda_kernels(function() return torch.native_dropout(x:to(C), 0.3, true) end)
  T.ok(torch.equal(a1, b1:cpu()))
  T.ok(torch.equal(a2, b2:cpu()))
  local m1, m2 = both(41, function(d) return torch._dropout_mask(torch.zeros(7, 9, { device = d }), 0.5) end)
  T.ok(torch.equal(m1, m2:cpu()))
  -- eval and p = 0: the input itself
  local e = torch.native_dropout(x:to(C), 0.3, false)
  T.ok(torch.equal(e:cpu(), x))
  -- autograd through dropout on cuda
  local xc = x:to(C):requires_grad_()
  torch.manual_seed(42)
  local y = torch.nn.functional.dropout(xc, 0.5, true)
  y:sum():backward()
  local g = xc.grad:cpu()
  T.ok(torch.equal(g, y:cpu():ne(0):float() * 2))
  -- large: the fraction kept
  local big = torch.ones(2 ^ 20 + 3, { device = C })
  local o = torch.native_dropout(big, 0.25, true)
  local kept = o:cpu():ne(0):double():mean():item()
  T.ok(math.abs(kept - 0.75) < 0.003)
end)

T.test("creation ops on cuda equal the CPU's", function()
  local cases = {
    function(d) return torch.zeros(3, 4, { device = d }) end,
    function(d) return torch.ones(31, { device = d, dtype = torch.int32 }) end,
    function(d) return torch.full({ 2, 3 }, 7, { device = d }) end,
    function(d) return torch.full({ 1025 }, 2.5, { device = d, dtype = torch.float16 }) end,
    function(d) return torch.full({ 3 }, true, { device = d }) end,
    function(d) return torch.zeros_like(torch.ones(2, 2, { device = d, dtype = torch.int8 })) end,
    function(d) return torch.ones_like(torch.ones(2, 2, { device = d })) end,
    function(d) return torch.full_like(torch.ones(2, 2, { device = d }), -3) end,
    function(d) return torch.ones(2, { device = d }):new_zeros({ 3 }) end,
    function(d) return torch.ones(2, { device = d }):new_ones({ 3, 1 }) end,
    function(d) return torch.ones(2, { device = d }):new_full({ 3 }, 9) end,
    function(d) return torch.arange(10, { device = d }) end,
    function(d) return torch.arange(1, 2.5, 0.1, { device = d }) end,
    function(d) return torch.arange(-5, 5, 3, { device = d, dtype = torch.float64 }) end,
    function(d) return torch.arange(0, 1025, { device = d, dtype = torch.int16 }) end,
    function(d) return torch.range(1, 4, { device = d }) end,
    function(d) return torch.linspace(-1, 1, 7, { device = d }) end,
    function(d) return torch.linspace(0, 10, 1, { device = d, dtype = torch.float64 }) end,
    function(d) return torch.linspace(0, 10, 0, { device = d }) end,
    function(d) return torch.logspace(0, 3, 4, { device = d }) end,
    function(d) return torch.logspace(0, 3, 4, 2, { device = d, dtype = torch.float64 }) end,
    function(d) return torch.eye(4, { device = d }) end,
    function(d) return torch.eye(3, 5, { device = d, dtype = torch.int64 }) end,
    function(d) return torch.eye(0, { device = d }) end,
  }
  for i, f in ipairs(cases) do
    local a = f("cpu")
    local b = on_cuda_kernels(function() return f(C) end, i <= 11)
    T.eq(b.device.type, "cuda", "case " .. i)
    T.eq(b.dtype, a.dtype, "case " .. i)
    T.eq(b:size(), a:size(), "case " .. i)
    T.ok(torch.equal(a, b:cpu()), "case " .. i)
  end
  local e = torch.empty(5, 5, { device = C, dtype = torch.float64 })
  T.eq(e.device.type, "cuda")
  T.eq(torch.empty_like(e).dtype, torch.float64)
  T.eq(e:new_empty({ 2 }).device.type, "cuda")
  local big = torch.arange(2 ^ 20 + 3, { device = C })
  T.eq(big:cpu()[2 ^ 20 + 3], 2 ^ 20 + 2)
  T.eq(torch.ones(2 ^ 20 + 3, { device = C }):sum():item(), 2 ^ 20 + 3)
end)

T.test("bad input gives the CPU's errors", function()
  T.raises(function() torch.rand(3, { device = C, dtype = torch.int64 }) end, "rand", "floating point")
  T.raises(function() torch.randint(5, 3, { 2 }, { device = C }) end, "randint", "must be greater than")
  T.raises(function() torch.randint(0, 300, { 2 }, { device = C, dtype = torch.uint8 }) end, "out of bounds")
  T.raises(function() torch.zeros(3, { device = C }):uniform_(2, 1) end, "uniform_", "from <= to")
  T.raises(function() torch.zeros(3, { device = C }):normal_(0, -1) end, "normal_", "non-negative")
  T.raises(function() torch.zeros(3, { device = C }):exponential_(0) end, "exponential_", "positive")
  T.raises(function() torch.zeros(3, { device = C }):bernoulli_(1.5) end, "bernoulli_", "[0, 1]")
  T.raises(function() torch.bernoulli(torch.full({ 3 }, 2.0, { device = C })) end, "bernoulli", "probabilities must be in [0, 1]")
  T.raises(function() torch.zeros(-1, { device = C }) end, "zeros", "negative size")
  T.raises(function() torch.full({ 2 }, 300, { device = C, dtype = torch.uint8 }) end, "full", "overflow")
  T.raises(function() torch.arange(0, 10, 0, { device = C }) end, "arange", "step")
  T.raises(function() torch.arange(10, 0, 1, { device = C }) end, "arange", "inconsistent")
  T.raises(function() torch.linspace(0, 1, -1, { device = C }) end, "linspace", "non-negative")
  T.raises(function() torch.eye(-1, { device = C }) end, "eye", "non-negative")
  T.raises(function() torch.native_dropout(torch.ones(3, { device = C }), 1.5, true) end, "native_dropout")
  T.raises(function() torch.native_dropout(torch.ones(3, { device = C, dtype = torch.int64 }), 0.5, true) end,
           "native_dropout")
end)

T.test("randperm: a permutation of 1..n on the device, uniform, seeded, every dtype", function()
  torch.cuda._kernel_counts(true)
  for _, n in ipairs({ 1, 31, 1025, 70000 }) do
    local p = torch.randperm(n, { device = C })
    T.eq(tostring(p.device):sub(1, 4), "cuda", "device")
    T.eq(p.dtype, torch.int64, "dtype")
    T.ok(torch.equal(p:cpu():sort(), torch.arange(1, n + 1)), "a permutation of 1.." .. n)
  end
  T.eq(torch.cuda._kernel_counts(true).cpu, 0, "no CPU fallback")
  T.eq(torch.randperm(0, { device = C }):numel(), 0, "n = 0")
  local f = torch.randperm(100, { device = C, dtype = torch.float32 })
  T.eq(f.dtype, torch.float32)
  T.ok(torch.equal(f:cpu():sort(), torch.arange(1, 101, { dtype = torch.float32 })), "float32 permutation")
  torch.cuda.manual_seed(7); local a = torch.randperm(500, { device = C }):cpu()
  torch.cuda.manual_seed(7); local b = torch.randperm(500, { device = C }):cpu()
  T.ok(torch.equal(a, b), "the same seed gives the same permutation")
  T.ok(not torch.equal(a, torch.randperm(500, { device = C }):cpu()), "the next draw differs")
  -- each of the 6 orders of 3 comes up about 1/6 of the time (3000 draws: 500 +- 4 sigma)
  local cnt = {}
  for _ = 1, 3000 do
    local p = torch.randperm(3, { device = C }):cpu()
    local k = p[1] * 100 + p[2] * 10 + p[3]
    cnt[k] = (cnt[k] or 0) + 1
  end
  local orders = 0
  for _, v in pairs(cnt) do orders = orders + 1; T.ok(math.abs(v - 500) < 4 * math.sqrt(3000 / 6 * 5 / 6), "uniform: " .. v) end
  T.eq(orders, 6, "every order appears")
  T.raises(function() torch.randperm(-1, { device = C }) end, "randperm: argument 'n' must be non-negative")
  T.raises(function() torch.randperm(300, { device = C, dtype = torch.uint8 }) end, "randperm: n = 300 is too large")
end)

T.done()
