-- Random sampling and generators: reproducibility, state, distributions.
local T = require "testing"

local flat
local function stats(t)
  local v = flat(t)
  local n, s, s2, lo, hi = #v, 0, 0, math.huge, -math.huge
  for i = 1, n do
    local x = v[i]
    s = s + x; s2 = s2 + x * x
    if x < lo then lo = x end
    if x > hi then hi = x end
  end
  local mean = s / n
  return mean, math.sqrt(s2 / n - mean * mean), lo, hi
end

function flat(t)
  local out = {}
  local function walk(v)
    if type(v) == "table" then for _, x in ipairs(v) do walk(x) end else out[#out + 1] = v end
  end
  walk(t:totable())
  return out
end

-- seeds and generators ----------------------------------------------------------

T.test("manual_seed makes streams reproducible", function()
  torch.manual_seed(42)
  local a, an = torch.rand(100):totable(), torch.randn(7):totable()
  torch.manual_seed(42)
  local b, bn = torch.rand(100):totable(), torch.randn(7):totable()
  T.eq(a, b); T.eq(an, bn)
  torch.manual_seed(43)
  T.ok(not T.deq(torch.rand(100):totable(), a), "another seed gives other numbers")
  T.eq(torch.initial_seed(), 43)
end)

T.test("successive calls continue the stream", function()
  torch.manual_seed(7)
  local a = torch.rand(3):totable()
  local b = torch.rand(3):totable()
  T.ok(not T.deq(a, b))
end)

T.test("seed() picks a fresh seed and reports it", function()
  local s = torch.seed()
  T.eq(math.type(s), "integer")
  T.eq(torch.initial_seed(), s)
  torch.manual_seed(s)
  local a = torch.rand(4):totable()
  torch.manual_seed(s)
  T.eq(torch.rand(4):totable(), a)
end)

T.test("Generator objects are independent streams", function()
  local g1, g2 = torch.Generator(), torch.Generator()
  T.eq(g1:manual_seed(5), g1)
  g2:manual_seed(5)
  T.eq(g1:initial_seed(), 5)
  torch.manual_seed(1)
  local d1 = torch.rand(4):totable()
  torch.manual_seed(1)
  local a = torch.rand(10, {generator = g1}):totable()
  local b = torch.rand(10, {generator = g2}):totable()
  T.eq(a, b)
  -- the default generator did not move
  T.eq(torch.rand(4):totable(), d1)
  T.tensor(torch.randn(3, {generator = g1}), torch.randn(3, {generator = g2}):totable())
  T.ok(tostring(g1):find("Generator"))
  T.eq(tostring(g1.device), tostring(torch.device("cpu")))
  T.ok(torch.default_generator)
  T.eq(torch.manual_seed(3), torch.default_generator)
  T.eq(torch.default_generator:initial_seed(), 3)
end)

T.test("get/set state round trip", function()
  torch.manual_seed(11)
  torch.rand(5)
  local s = torch.get_rng_state()
  T.eq(s.dtype.name, "uint8")
  local a = torch.rand(6):totable()
  torch.set_rng_state(s)
  T.eq(torch.rand(6):totable(), a)

  local g = torch.Generator():manual_seed(99)
  torch.randn(3, {generator = g})
  local st = g:get_state()
  local x = torch.randint(0, 100, {20}, {generator = g}):totable()
  g:set_state(st)
  T.eq(torch.randint(0, 100, {20}, {generator = g}):totable(), x)
  -- a state as a Lua string works too
  local str = string.char(table.unpack(st:totable()))
  local g2 = torch.Generator()
  g2:set_state(str)
  T.eq(torch.randint(0, 100, {20}, {generator = g2}):totable(), x)
end)

T.test("state and seed errors", function()
  T.raises(function() torch.set_rng_state("short") end, "set_rng_state", "bytes")
  T.raises(function() torch.set_rng_state(torch.zeros(24)) end, "set_rng_state", "uint8")
  T.raises(function() torch.set_rng_state(torch.zeros(24, {dtype = "uint8"})) end, "set_rng_state", "state")
  T.raises(function() torch.manual_seed("x") end, "manual_seed", "seed")
  T.raises(function() torch.manual_seed(1.5) end, "manual_seed", "seed")
  T.raises(function() torch.rand(3, {generator = 5}) end, "rand", "generator")
  T.raises(function() torch.Generator("cuda") end, "Generator", "cuda")
end)

T.test("results do not depend on the thread count", function()
  local n0 = torch.get_num_threads()
  local g = torch.Generator()
  local function draw()
    g:manual_seed(2024)
    return { torch.rand(200003, {generator = g}):totable(), torch.randn(100001, {generator = g, dtype = "float64"}):totable(),
             torch.randint(0, 1000, {150001}, {generator = g}):totable() }
  end
  torch.set_num_threads(1)
  local a = draw()
  torch.set_num_threads(4)
  local b = draw()
  torch.set_num_threads(n0)
  for i = 1, 3 do T.ok(T.deq(a[i], b[i]), "stream " .. i) end
end)

-- distributions ----------------------------------------------------------------

T.test("rand: shape, dtype, range and moments", function()
  torch.manual_seed(0)
  T.tensor(torch.rand(2, 3), nil, {shape = {2, 3}, dtype = "float32"})
  T.tensor(torch.rand({4}, {dtype = "float64"}), nil, {dtype = "float64"})
  T.tensor(torch.rand(3, {dtype = "float16"}), nil, {dtype = "float16"})
  for _, dt in ipairs({"float32", "float64"}) do
    local m, s, lo, hi = stats(torch.rand(100000, {dtype = dt}))
    T.near(m, 0.5, 0.01, dt .. " mean")
    T.near(s, math.sqrt(1 / 12), 0.01, dt .. " std")
    T.ok(lo >= 0 and hi < 1, "in [0, 1)")
  end
  T.raises(function() torch.rand(3, {dtype = "int64"}) end, "rand", "floating point")
  T.raises(function() torch.rand(-3) end, "rand: negative size -3 in dim 1")
end)

T.test("randn: moments, float64, normal()", function()
  torch.manual_seed(1)
  for _, dt in ipairs({"float32", "float64"}) do
    local m, s = stats(torch.randn(100000, {dtype = dt}))
    T.ok(math.abs(m) < 0.02, dt .. " mean " .. m)
    T.near(s, 1, 0.02, dt .. " std")
  end
  local m, s = stats(torch.normal(3, 2, {50000}))
  T.near(m, 3, 0.02); T.near(s, 2, 0.03)
  T.tensor(torch.normal(0, 1, {2, 2}, {dtype = "float64"}), nil, {shape = {2, 2}, dtype = "float64"})
  T.tensor(torch.randn(5, {dtype = "bfloat16"}), nil, {dtype = "bfloat16"})
  T.raises(function() torch.normal(0, -1, {3}) end, "normal", "std")
  T.raises(function() torch.randn(2, {dtype = "int32"}) end, "randn", "floating point")
end)

T.test("randint: bounds, overloads, dtype", function()
  torch.manual_seed(3)
  local v = flat(torch.randint(3, 7, {20000}))
  local seen = {}
  for _, x in ipairs(v) do
    T.ok(x >= 3 and x <= 6 and math.type(x) == "integer", "value " .. tostring(x))
    seen[x] = (seen[x] or 0) + 1
  end
  for k = 3, 6 do T.ok((seen[k] or 0) > 4500, "value " .. k .. " frequency") end
  T.tensor(torch.randint(10, {2, 3}), nil, {shape = {2, 3}, dtype = "int64"})
  T.tensor(torch.randint(0, 10, {5}, {dtype = "int32"}), nil, {dtype = "int32"})
  T.tensor(torch.randint(0, 10, {5}, {dtype = "float32"}), nil, {dtype = "float32"})
  T.tensor(torch.randint(1, 2, {3}), {1, 1, 1})
  for _, x in ipairs(flat(torch.randint(-5, 0, {1000}))) do T.ok(x >= -5 and x < 0) end
  -- a range wider than 32 bits
  local big = 1 << 62
  for _, x in ipairs(flat(torch.randint(-big, big, {1000}))) do T.ok(x >= -big and x < big) end
  T.raises(function() torch.randint(5, 5, {3}) end, "randint", "high")
  T.raises(function() torch.randint(0, 300, {3}, {dtype = "uint8"}) end, "randint", "uint8")
  T.raises(function() torch.randint(-1, 3, {2}, {dtype = "uint8"}) end, "randint", "uint8")
end)

T.test("randperm is a permutation of 1..n", function()
  torch.manual_seed(4)
  for _, n in ipairs({0, 1, 2, 10, 1000}) do
    local p = torch.randperm(n)
    T.eq(p.dtype.name, "int64")
    T.eq(p:numel(), n)
    local v, seen = p:totable(), {}
    for _, x in ipairs(v) do
      T.ok(x >= 1 and x <= n and not seen[x])
      seen[x] = true
    end
  end
  local p = torch.randperm(50):totable()
  local same = true
  for i = 1, 50 do same = same and p[i] == i end
  T.ok(not same, "shuffled")
  T.tensor(torch.randperm(5, {dtype = "float64"}), nil, {dtype = "float64", shape = {5}})
  T.raises(function() torch.randperm(-1) end, "randperm", "'n'")
  T.raises(function() torch.randperm(300, {dtype = "uint8"}) end, "randperm", "uint8")
end)

T.test("*_like random ops", function()
  local x = torch.zeros(3, 4, {dtype = "float64"})
  T.tensor(torch.rand_like(x), nil, {shape = {3, 4}, dtype = "float64"})
  T.tensor(torch.randn_like(x, {dtype = "float32"}), nil, {shape = {3, 4}, dtype = "float32"})
  T.tensor(torch.randint_like(x, 10), nil, {shape = {3, 4}, dtype = "float64"})
  for _, v in ipairs(flat(torch.randint_like(x, 5, 8))) do T.ok(v >= 5 and v < 8 and v == math.floor(v)) end
  T.raises(function() torch.rand_like(torch.zeros(2, {dtype = "int64"})) end, "rand_like", "floating point")
end)

-- in-place samplers ---------------------------------------------------------------

T.test("uniform_, normal_, exponential_ fill in place", function()
  torch.manual_seed(5)
  local x = torch.zeros(100000, {dtype = "float64"})
  T.ok(rawequal(x:uniform_(-2, 2), x))
  local m, s, lo, hi = stats(x)
  T.near(m, 0, 0.02); T.ok(lo >= -2 and hi < 2)
  x:uniform(0, 1)                                -- Torch7 spelling
  m = stats(x)
  T.near(m, 0.5, 0.01)
  T.ok(rawequal(x:normal_(10, 3), x))
  m, s = stats(x)
  T.near(m, 10, 0.01); T.near(s, 3, 0.02)
  x:exponential_(2)
  m, s, lo = stats(x)
  T.near(m, 0.5, 0.02); T.ok(lo >= 0)
  T.raises(function() torch.zeros(3, {dtype = "int64"}):normal_() end, "normal_", "floating point")
  T.raises(function() torch.zeros(3):uniform_(2, 1) end, "uniform_")
  T.raises(function() torch.zeros(3):exponential_(0) end, "exponential_", "lambd")
end)

T.test("in-place samplers on a non-contiguous view", function()
  local x = torch.zeros(4, 6)
  local v = x.T or (x.t and x:t())
  if not v then return T.skip("noncontiguous", "no transpose yet") end
  v:uniform_(1, 2)
  for _, val in ipairs(flat(x)) do T.ok(val >= 1 and val < 2) end
end)

T.test("random_", function()
  torch.manual_seed(6)
  local x = torch.zeros(2000, {dtype = "int64"})
  x:random_(10)
  for _, v in ipairs(flat(x)) do T.ok(v >= 0 and v < 10) end
  x:random_(5, 8)
  for _, v in ipairs(flat(x)) do T.ok(v >= 5 and v < 8) end
  local b = torch.zeros(2000, {dtype = "uint8"}):random_()
  local _, _, lo, hi = stats(b)
  T.ok(lo >= 0 and hi <= 255 and hi > 200)
  local f = torch.zeros(100):random_(3)
  for _, v in ipairs(flat(f)) do T.ok(v == 0 or v == 1 or v == 2) end
  T.raises(function() torch.zeros(3, {dtype = "uint8"}):random_(0, 1000) end, "random_", "uint8")
  T.raises(function() torch.zeros(3):random_(4, 2) end, "random_", "high")
end)

T.test("bernoulli and bernoulli_", function()
  torch.manual_seed(7)
  T.tensor(torch.bernoulli(torch.tensor({0.0, 1.0, 0.0, 1.0})), {0, 1, 0, 1}, {dtype = "float32"})
  local m = stats(torch.bernoulli(torch.full({100000}, 0.3)))
  T.near(m, 0.3, 0.01)
  m = stats(torch.bernoulli(torch.zeros(100000, {dtype = "float64"}), 0.8))
  T.near(m, 0.8, 0.01)
  local x = torch.zeros(50000)
  T.ok(rawequal(x:bernoulli_(0.25), x))
  T.near((stats(x)), 0.25, 0.01)
  x:bernoulli_()
  T.near((stats(x)), 0.5, 0.01)
  -- tensor probabilities broadcast to self
  local y = torch.zeros(1000, 2)
  y:bernoulli_(torch.tensor({0.0, 1.0}))
  for i, row in ipairs(y:totable()) do T.eq(row, {0, 1}, "row " .. i) end
  local bi = torch.zeros(10, {dtype = "int64"}):bernoulli_(1)
  T.tensor(bi, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {dtype = "int64"})
  T.raises(function() torch.bernoulli(torch.tensor({0.5, 1.5})) end, "bernoulli", "[0, 1]")
  T.raises(function() torch.zeros(3):bernoulli_(2) end, "bernoulli_", "'p'")
  T.raises(function() torch.zeros(3):bernoulli_(torch.tensor({-0.5, 0.5, 0.5})) end, "bernoulli_", "[0, 1]")
end)

T.test("multinomial returns 1-based indices", function()
  torch.manual_seed(8)
  T.tensor(torch.multinomial(torch.tensor({0.0, 0.0, 1.0}), 4, true), {3, 3, 3, 3}, {dtype = "int64"})
  local w = torch.tensor({1.0, 3.0})
  local counts = {0, 0}
  for _, v in ipairs(flat(torch.multinomial(w, 20000, true))) do counts[v] = counts[v] + 1 end
  T.near(counts[2] / 20000, 0.75, 0.02)
  -- without replacement: distinct, every index once when all are drawn
  local p = flat(torch.multinomial(torch.tensor({1.0, 2.0, 3.0, 4.0, 5.0}), 5))
  table.sort(p)
  T.eq(p, {1, 2, 3, 4, 5})
  -- zero weights are never drawn
  for _ = 1, 20 do
    local s = flat(torch.multinomial(torch.tensor({0.0, 1.0, 0.0, 1.0}), 2))
    table.sort(s)
    T.eq(s, {2, 4})
  end
  local m = torch.multinomial(torch.tensor({{1.0, 0.0}, {0.0, 1.0}, {1.0, 1.0}}), 3, true)
  T.tensor(m, nil, {shape = {3, 3}, dtype = "int64"})
  T.eq(m:totable()[1], {1, 1, 1}); T.eq(m:totable()[2], {2, 2, 2})
  T.raises(function() torch.multinomial(torch.tensor({1.0, 1.0}), 3) end, "multinomial", "without replacement")
  T.raises(function() torch.multinomial(torch.tensor({1.0, 0.0}), 2) end, "multinomial", "non-zero")
  T.raises(function() torch.multinomial(torch.tensor({-1.0, 1.0}), 1) end, "multinomial", "non-negative")
  T.raises(function() torch.multinomial(torch.tensor({0.0, 0.0}), 1, true) end, "multinomial", "zero")
  T.raises(function() torch.multinomial(torch.zeros(2, 2, 2), 1) end, "multinomial", "1-D or 2-D")
  T.raises(function() torch.multinomial(torch.tensor({1, 2}), 1) end, "multinomial", "floating point")
  T.raises(function() torch.multinomial(torch.tensor({1.0}), 0) end, "multinomial", "num_samples")
end)

T.test("random ops release what they take on errors", function()
  collectgarbage(); collectgarbage()
  local before = torch._live_tensors()
  local p = torch.tensor({0.5, 1.5})
  for _ = 1, 10 do
    pcall(torch.bernoulli, p)
    pcall(torch.randint, 0, 300, {3}, {dtype = "uint8"})
    pcall(torch.multinomial, torch.tensor({1.0, 1.0}), 3)
    pcall(torch.rand, 3, {dtype = "int64"})
  end
  p = nil
  collectgarbage(); collectgarbage()
  T.eq(torch._live_tensors(), before)
end)

T.done()
