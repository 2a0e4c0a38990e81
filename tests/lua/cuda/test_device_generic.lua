-- test_device_generic.lua — the device-generic op suite: one table of op cases, run on every
-- loaded backend (the CPU always; cuda where torch.cuda is available: the fake driver here,
-- a real GPU when tools/gpu_check.sh runs it with LUTORCH_CUDA_DRIVER unset). Each case runs
-- its op on the device and on the CPU from the same inputs and compares: NMSE under a
-- per-dtype bound for floats (NaNs and infinities in the same places), exactly for integers
-- and bools; both must raise when the CPU raises. Inputs come from a few generators over
-- dtypes, sizes {0, 1, 31, 1025, 2^20+3 (cheap ops only)}, non-contiguous layouts (transposed,
-- stepped), broadcast and 0-d shapes; in-place and out= forms are cases of their own; the
-- differentiable ops are also gradchecked in float64 on the device.
--
-- At the end it prints, per op, whether the CUDA kernel or the CPU fallback ran
-- (torch.cuda._kernel_counts: host launches under the fake, device launches on a GPU,
-- cpu: the CPU's kernel on the fake's host memory), so the kernels' coverage shows.
-- Set LT_GENERIC_ONLY=name,name to run some ops only.
local T = require "testing"
local nn = require "nn"
local c = torch.cuda

local BIG = 2 ^ 20 + 3
local SIZES = { 0, 1, 31, 1025 }

local F = { torch.float32, torch.float64, torch.float16, torch.bfloat16 }
local F2 = { torch.float32, torch.float64 }
local I = { torch.int32, torch.int64, torch.uint8 }
local NUM = { torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.uint8 }
local ALL = { torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.uint8,
              torch.bool }
-- normalized mean squared error bounds
local NMSE = { [torch.float64] = 1e-24, [torch.float32] = 1e-11, [torch.float16] = 1e-5, [torch.bfloat16] = 1e-4 }

local only
if os.getenv("LT_GENERIC_ONLY") then
  only = {}
  for n in os.getenv("LT_GENERIC_ONLY"):gmatch("[^,]+") do only[n] = true end
end

-- ---- input generators: a CPU tensor of dtype dt and shape ----
local GEN = {}
local function floaty(dt) return dt == torch.float32 or dt == torch.float64 or dt == torch.float16 or dt == torch.bfloat16 end
local function randn(shape) return #shape == 0 and torch.randn({}) or torch.randn(shape) end
local function finish(x, dt)
  if dt == torch.bool then return x:gt(0) end
  if floaty(dt) then return x:to(dt) end
  x = x:round()
  if dt == torch.uint8 then x = x:abs() end
  return x:to(dt)
end
function GEN.any(dt, shape) return finish(randn(shape) * 3, dt) end
function GEN.pos(dt, shape) return finish(randn(shape):abs() * 3 + 0.5, dt) end        -- > 0: log, sqrt, pow's base
function GEN.nonzero(dt, shape)
  local x = randn(shape) * 3
  return finish(x:sign():masked_fill(x:eq(0), 1) * (x:abs() + 1), dt)
end
function GEN.unit(dt, shape) return finish(torch.rand(#shape == 0 and {} or shape) * 1.8 - 0.9, dt) end

-- ---- layouts: a function of (gen, dt) giving a CPU tensor, and the view to apply on each side ----
-- Each layout makes a base tensor and a view function, so the device side gets the same view
-- (non-contiguous, stepped) of its own copy of the base.
local function layout_contig(n) return { name = "n=" .. n, shape = { n } } end
local LAYOUT_T = { name = "transposed", shape = { 7, 9 }, view = function(x) return x:t() end }
local LAYOUT_S = { name = "stepped", shape = { 32, 2 }, view = function(x) return x:select(2, 1) end }
local LAYOUT_0 = { name = "0-d", shape = {} }

local function layouts(cheap)
  local l = {}
  for _, n in ipairs(SIZES) do l[#l + 1] = layout_contig(n) end
  if cheap then l[#l + 1] = layout_contig(BIG) end
  l[#l + 1] = LAYOUT_T; l[#l + 1] = LAYOUT_S; l[#l + 1] = LAYOUT_0
  return l
end

-- ---- comparing a device result with the CPU's ----
local function on_device(x, dev)
  if dev == "cpu" then return tostring(x.device) == "cpu" end
  return tostring(x.device):sub(1, #dev) == dev
end

local function compare(got, want, what, dev)
  if type(want) ~= "userdata" then
    if type(want) == "table" then
      T.eq(type(got), "table", what .. ": a list")
      for i = 1, #want do compare(got[i], want[i], what .. "[" .. i .. "]", dev) end
    elseif type(want) == "number" and math.type(want) == "float" then
      T.ok(type(got) == "number" and (got == want or math.abs(got - want) <= 1e-5 * (1 + math.abs(want))),
           what .. ": " .. tostring(got) .. " vs " .. tostring(want))
    else
      T.eq(got, want, what)
    end
    return
  end
  T.ok(type(got) == "userdata", what .. ": a tensor")
  T.ok(on_device(got, dev), what .. ": on " .. dev .. ", got " .. tostring(got.device))
  local h = got:cpu()
  T.eq(h.dtype, want.dtype, what .. " dtype")
  T.eq(tostring(h:size()), tostring(want:size()), what .. " shape")
  if h:numel() == 0 or h.dtype ~= want.dtype then return end
  if not floaty(want.dtype) then
    T.ok(torch.equal(h, want), what .. ": values differ")
    return
  end
  local a, b = h:double(), want:double()
  local an, bn = torch.isnan(a), torch.isnan(b)
  T.ok(torch.equal(an, bn), what .. ": NaNs in other places")
  local same = a:eq(b)                        -- infinities of the same sign, equal values
  local inf = torch.isinf(a):logical_or(torch.isinf(b))
  T.ok(torch.equal(inf:logical_and(same:logical_not()):any(), torch.tensor(false)), what .. ": infinities differ")
  local mask = an:logical_or(inf)
  local d, w = (a - b):masked_fill(mask, 0), b:masked_fill(mask, 0)
  local num, den = d:pow(2):sum():item(), w:pow(2):sum():item()
  local nmse = num / math.max(den, 1e-300)
  if den == 0 then nmse = num end
  T.ok(nmse <= NMSE[want.dtype], ("%s: NMSE %g > %g"):format(what, nmse, NMSE[want.dtype]))
end

-- ---- the cases ----
-- name: the op (the summary's key); dtypes; gen: an input generator (or one per input);
-- arity: tensor inputs; f(inputs...) -> result(s); cheap: also at 2^20+3; grad: gradcheck
-- in float64; shapes: fixed input shapes instead of the layouts (a list of input-shape lists);
-- bcast: binary broadcast and number forms too.
local CASES = {}
local function case(t) CASES[#CASES + 1] = t end

local function unary(name, dtypes, gen, f, opt)
  opt = opt or {}
  case({ name = name, dtypes = dtypes, gen = gen, arity = 1, f = f, cheap = opt.cheap, grad = opt.grad })
end
local function binary(name, dtypes, gen, f, opt)
  opt = opt or {}
  case({ name = name, dtypes = dtypes, gen = gen, arity = 2, f = f, cheap = opt.cheap, grad = opt.grad, bcast = true })
end

-- pointwise
unary("neg", { torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64 }, "any",
      function(x) return -x end, { cheap = true, grad = true })
unary("abs", NUM, "any", torch.abs, { grad = true })
unary("exp", F, "any", torch.exp, { cheap = true, grad = true })
unary("log", F, "pos", torch.log, { grad = true })
unary("sqrt", F, "pos", torch.sqrt, { grad = true })
unary("sin", F, "any", torch.sin, { grad = true })
unary("cos", F2, "any", torch.cos)
unary("tanh", F, "any", torch.tanh, { grad = true })
unary("sigmoid", F, "any", torch.sigmoid, { grad = true })
unary("relu", NUM, "any", torch.relu)
unary("floor", F2, "any", torch.floor)
unary("round", F2, "any", torch.round)
unary("sign", NUM, "any", torch.sign)
unary("reciprocal", F2, "nonzero", torch.reciprocal, { grad = true })
unary("asin", F2, "unit", torch.asin)
unary("erf", F2, "any", torch.erf)
unary("clamp", NUM, "any", function(x) return torch.clamp(x, -1, 2) end)
unary("to(float16)", NUM, "any", function(x) return x:to(torch.float16) end, { cheap = true })
unary("contiguous", ALL, "any", function(x) return x:contiguous() end, { cheap = true })
unary("logical_not", ALL, "any", torch.logical_not)
binary("add", NUM, "any", function(a, b) return a + b end, { cheap = true, grad = true })
binary("sub", NUM, "any", function(a, b) return a - b end, { grad = true })
binary("mul", ALL, "any", function(a, b) return a * b end, { cheap = true, grad = true })
binary("div", F, { "any", "nonzero" }, function(a, b) return a / b end, { grad = true })
binary("add(alpha)", NUM, "any", function(a, b) return torch.add(a, b, { alpha = 2 }) end)
binary("pow", F2, { "pos", "any" }, torch.pow, { grad = true })
binary("maximum", NUM, "any", torch.maximum)
binary("minimum", NUM, "any", torch.minimum)
binary("atan2", F2, "any", torch.atan2)
binary("eq", ALL, "any", torch.eq)
binary("lt", NUM, "any", torch.lt)
binary("ge", NUM, "any", torch.ge)
binary("ne", ALL, "any", torch.ne)
binary("logical_and", ALL, "any", torch.logical_and)
case({ name = "where", dtypes = NUM, gen = { "any", "any", "any" }, arity = 3,
       f = function(m, a, b) return torch.where(m:gt(0), a, b) end })

-- in-place and out= forms
case({ name = "add_", dtypes = NUM, gen = "any", arity = 2, f = function(a, b) local r = a:clone(); r:add_(b); return r end })
case({ name = "mul_(number)", dtypes = NUM, gen = "any", arity = 1, f = function(a) local r = a:clone(); r:mul_(3); return r end })
case({ name = "exp_", dtypes = F, gen = "any", arity = 1, f = function(a) local r = a:clone(); r:exp_(); return r end })
case({ name = "clamp_", dtypes = NUM, gen = "any", arity = 1, f = function(a) local r = a:clone(); r:clamp_(0, 2); return r end })
case({ name = "add(out=)", dtypes = NUM, gen = "any", arity = 2,
       f = function(a, b) local o = torch.empty({ 0 }, { dtype = a.dtype, device = a.device }); torch.add(a, b, { out = o }); return o end })
case({ name = "mul(out=float64)", dtypes = { torch.float32, torch.int32 }, gen = "any", arity = 2,
       f = function(a, b) local o = torch.empty({ 0 }, { dtype = torch.float64, device = a.device }); torch.mul(a, b, { out = o }); return o end })
case({ name = "exp(out=)", dtypes = F2, gen = "any", arity = 1,
       f = function(a) local o = torch.empty({ 0 }, { dtype = a.dtype, device = a.device }); torch.exp(a, { out = o }); return o end })

-- reductions, over the whole tensor and over dims
local R2 = { { 31, 33 } }
local function reduce(name, dtypes, f, opt)
  opt = opt or {}
  case({ name = name, dtypes = dtypes, gen = opt.gen or "any", arity = 1, f = f, cheap = opt.cheap, grad = opt.grad,
         reduce = true })
end
reduce("sum", NUM, function(x) return torch.sum(x) end, { cheap = true, grad = true })
reduce("sum(dim)", NUM, function(x) if x:dim() == 0 then return torch.sum(x) end return torch.sum(x, x:dim()) end, { grad = true })
reduce("sum(dim 1, keepdim)", F2, function(x) if x:dim() == 0 then return torch.sum(x) end return torch.sum(x, 1, true) end)
reduce("mean", F, function(x) return torch.mean(x) end, { grad = true })
reduce("mean(dim)", F2, function(x) if x:dim() == 0 then return torch.mean(x) end return torch.mean(x, 1) end)
reduce("prod(dim)", F2, function(x) if x:dim() == 0 then return torch.prod(x) end return torch.prod(x:clamp(-1.2, 1.2), x:dim()) end)
reduce("amax(dim)", NUM, function(x) if x:dim() == 0 or x:numel() == 0 then return x:clone() end return torch.amax(x, x:dim()) end)
reduce("max", NUM, function(x) if x:numel() == 0 then return x:clone() end return torch.max(x) end)
reduce("max(dim)", F2, function(x) if x:dim() == 0 or x:numel() == 0 then return x:clone() end return { torch.max(x, x:dim()) } end)
reduce("argmin(dim)", F2, function(x) if x:dim() == 0 or x:numel() == 0 then return x:clone() end return torch.argmin(x, 1) end)
reduce("var(dim)", F2, function(x) if x:dim() == 0 then return x:clone() end return torch.var(x, x:dim()) end, { grad = true })
reduce("std", F2, function(x) return torch.std(x) end)
reduce("norm", F2, function(x) return torch.norm(x) end, { grad = true })
reduce("logsumexp(dim)", F2, function(x) if x:dim() == 0 then return x:clone() end return torch.logsumexp(x, x:dim()) end, { grad = true })
reduce("cumsum(dim)", NUM, function(x) if x:dim() == 0 then return x:clone() end return torch.cumsum(x, x:dim()) end, { grad = true })
reduce("all", ALL, function(x) return torch.all(x) end)
reduce("any(dim)", ALL, function(x) if x:dim() == 0 then return torch.any(x) end return torch.any(x, 1) end)

-- softmax family
reduce("softmax(dim)", F, function(x) if x:dim() == 0 then return x:clone() end return torch.softmax(x, x:dim()) end, { grad = true })
reduce("log_softmax(dim 1)", F2, function(x) if x:dim() == 0 then return x:clone() end return torch.log_softmax(x, 1) end, { grad = true })

-- fixed shapes: matmul family, conv, indexing, sort, joining
local function fixed(name, dtypes, shapes, f, opt)
  opt = opt or {}
  case({ name = name, dtypes = dtypes, gen = opt.gen or "any", arity = #shapes[1], shapes = shapes, f = f,
         grad = opt.grad, views = opt.views })
end
local MM = { torch.float32, torch.float64, torch.bfloat16 }
fixed("mm", MM, { { { 31, 17 }, { 17, 9 } }, { { 0, 5 }, { 5, 3 } }, { { 1, 1 }, { 1, 1 } }, { { 65, 130 }, { 130, 33 } } },
      torch.mm, { grad = true, views = { function(x) return x:t():contiguous():t() end } })
fixed("bmm", F2, { { { 3, 5, 7 }, { 3, 7, 4 } } }, torch.bmm, { grad = true })
fixed("matmul(broadcast)", F2, { { { 2, 3, 4, 5 }, { 5, 6 } }, { { 5 }, { 5 } }, { { 4, 5 }, { 5 } } }, torch.matmul, { grad = true })
fixed("mv", F2, { { { 9, 13 }, { 13 } } }, torch.mv, { grad = true })
fixed("addmm", F2, { { { 9 }, { 9, 13 }, { 13, 9 } } }, function(b, x, y) return torch.addmm(b, x, y) end, { grad = true })
fixed("conv2d", F2, { { { 2, 3, 9, 9 }, { 4, 3, 3, 3 }, { 4 } } }, function(x, w, b) return torch.conv2d(x, w, b) end,
      { grad = true })
fixed("conv2d(stride, padding)", F2, { { { 1, 2, 8, 7 }, { 3, 2, 3, 2 } } },
      function(x, w) return torch.conv2d(x, w, nil, { 2, 1 }, { 1, 0 }) end, { grad = true })
fixed("index_select", NUM, { { { 7, 9 } } }, function(x) return torch.index_select(x, 1, torch.tensor({ 3, 1, 7, 3 }):to(x.device)) end,
      { grad = true, views = { function(x) return x:t():contiguous():t() end } })
fixed("gather", NUM, { { { 5, 6 } } }, function(x) return torch.gather(x, 2, torch.tensor({ { 1, 6 }, { 2, 2 }, { 3, 1 }, { 6, 5 }, { 1, 1 } }):to(x.device)) end,
      { grad = true })
fixed("scatter", NUM, { { { 5, 6 } } }, function(x) return x:scatter(2, torch.tensor({ { 1 }, { 2 }, { 3 }, { 6 }, { 4 } }):to(x.device), 7) end)
fixed("masked_fill", ALL, { { { 7, 9 } }, { { 1025 } } }, function(x) return x:masked_fill(x:ne(x:flatten()[1]), 1) end)
fixed("index(range)", ALL, { { { 7, 9 } } }, function(x) return x[{ { 2, 5 }, { 3, 9 } }]:contiguous() end)
fixed("narrow", ALL, { { { 7, 9 } } }, function(x) return x:narrow(2, 3, 4):contiguous() end)
fixed("sort", F2, { { { 31, 33 } }, { { 1025 } }, { { 0 } } }, function(x) return { torch.sort(x, x:dim()) } end)
fixed("sort(values)", NUM, { { { 31, 33 } }, { { 1025 } } }, function(x) local v = torch.sort(x, 1); return v end)
fixed("topk", F2, { { { 31, 33 } }, { { 1025 } } }, function(x) return { torch.topk(x, 3, x:dim()) } end)
fixed("argsort", F2, { { { 6, 40 } } }, function(x) return torch.argsort(x, 2) end)
fixed("cat", ALL, { { { 3, 4 }, { 5, 4 } }, { { 0, 4 }, { 2, 4 } } }, function(a, b) return torch.cat({ a, b }, 1) end, { grad = true })
fixed("stack", ALL, { { { 3, 4 }, { 3, 4 } } }, function(a, b) return torch.stack({ a, b }, 2) end, { grad = true })
fixed("embedding", F2, { { { 10, 4 } } }, function(w) return nn.functional.embedding(torch.tensor({ { 1, 3 }, { 10, 3 } }):to(w.device), w) end,
      { grad = true })
fixed("layer_norm", F2, { { { 6, 10 } } }, function(x) return nn.functional.layer_norm(x, { 10 }) end, { grad = true })
fixed("cross_entropy", F2, { { { 6, 5 } } }, function(x) return nn.functional.cross_entropy(x, torch.tensor({ 1, 5, 2, 2, 4, 3 }):to(x.device)) end,
      { grad = true })
fixed("max_pool2d", F2, { { { 1, 2, 6, 6 } } }, function(x) return nn.functional.max_pool2d(x, 2) end, { grad = true })

-- creation on the device: no inputs, the device passed in
local function creation(name, f) CASES[#CASES + 1] = { name = name, dtypes = { torch.float32 }, arity = 0, create = f } end
creation("zeros", function(dev) return torch.zeros({ 31, 3 }, { device = dev }) end)
creation("ones(int64)", function(dev) return torch.ones({ 1025 }, { dtype = torch.int64, device = dev }) end)
creation("full", function(dev) return torch.full({ 4, 5 }, 2.5, { device = dev }) end)
creation("arange", function(dev) return torch.arange(0, 31, { device = dev }) end)
creation("linspace", function(dev) return torch.linspace(-1, 1, 1025, { device = dev }) end)
creation("eye", function(dev) return torch.eye(7, { device = dev }) end)
creation("zeros_like", function(dev) return torch.zeros_like(torch.ones({ 3, 3 }, { device = dev })) end)
creation("empty(0)", function(dev) return torch.empty({ 0, 4 }, { device = dev }) end)

-- ---- running ----
local counts = {}     -- op -> { kernel = n, cpu = n }
local function counted(name, fn)
  if c.is_available() then c._kernel_counts(true) end
  local r = { pcall(fn) }
  if c.is_available() then
    local n = c._kernel_counts(true)
    local e = counts[name] or { kernel = 0, cpu = 0 }
    e.kernel, e.cpu = e.kernel + n.host + n.device, e.cpu + n.cpu
    counts[name] = e
  end
  return table.unpack(r)
end

local function to_dev(x, dev)
  if type(x) ~= "userdata" then return x end
  return x:to(dev)
end

-- the CPU and device inputs of a case: bases made on the CPU, copied, then viewed alike
local function inputs(cs, dt, shapes, view, dev)
  local cpu, d = {}, {}
  for i = 1, #shapes do
    local g = type(cs.gen) == "table" and cs.gen[i] or cs.gen
    local base = GEN[g](dt, shapes[i])
    local db = to_dev(base, dev)
    cpu[i], d[i] = view and view(base) or base, view and view(db) or db
  end
  return cpu, d
end

local function err_tail(e) return tostring(e):match(": ([^:]*)$") or tostring(e) end

local function run_one(cs, dev, what, cpu_in, dev_in)
  local okc, want = pcall(cs.f, table.unpack(cpu_in))
  local okd, got = counted(cs.name, function() return cs.f(table.unpack(dev_in)) end)
  if not okc then
    T.ok(not okd, what .. ": the CPU raises (" .. err_tail(want) .. ") but " .. dev .. " does not")
    if not okd then T.eq(err_tail(got), err_tail(want), what .. ": the same error") end
    return
  end
  T.ok(okd, what .. ": " .. tostring(got))
  if okd then compare(got, want, what, dev) end
end

-- the shape lists a case runs over
local function shape_sets(cs)
  if cs.shapes then
    local sets = {}
    for _, s in ipairs(cs.shapes) do sets[#sets + 1] = { shapes = s, name = "shapes" } end
    for _, v in ipairs(cs.views or {}) do sets[#sets + 1] = { shapes = cs.shapes[1], view = v, name = "strided" } end
    return sets
  end
  local sets = {}
  local ls = layouts(cs.cheap)
  if cs.reduce then ls[#ls + 1] = { name = "31x33", shape = { 31, 33 } } end
  for _, l in ipairs(ls) do
    local s = {}
    for i = 1, cs.arity do s[i] = l.shape end
    sets[#sets + 1] = { shapes = s, view = l.view, name = l.name }
  end
  if cs.bcast then
    sets[#sets + 1] = { shapes = { { 5, 1 }, { 1, 6 } }, name = "broadcast" }
    sets[#sets + 1] = { shapes = { { 31 }, {} }, name = "tensor, 0-d" }
    sets[#sets + 1] = { shapes = { { 0, 3 }, { 1, 3 } }, name = "empty broadcast" }
  end
  return sets
end

local function run_case(cs, dev)
  if cs.create then
    local okc, want = pcall(cs.create, "cpu")
    local okd, got = counted(cs.name, function() return cs.create(dev) end)
    T.ok(okc and okd, cs.name .. ": " .. tostring(okc and got or want))
    if okc and okd then compare(got, want, cs.name, dev) end
    return
  end
  for _, dt in ipairs(cs.dtypes) do
    for _, set in ipairs(shape_sets(cs)) do
      -- the big size only for float32 and one integer type: the cheap ops' memory path
      local big = set.shapes[1][1] == BIG
      if not big or dt == torch.float32 or dt == torch.int32 then
        local cpu_in, dev_in = inputs(cs, dt, set.shapes, set.view, dev)
        run_one(cs, dev, ("%s %s %s"):format(cs.name, dt.name, set.name), cpu_in, dev_in)
        if cs.bcast and set.name == "n=31" then
          -- a Lua number as the second operand
          run_one({ name = cs.name, f = function(a) return cs.f(a, 2) end }, dev, cs.name .. " " .. dt.name .. " number",
                  { cpu_in[1] }, { dev_in[1] })
        end
      end
    end
  end
end

-- gradcheck in float64 on the device: small inputs of the case's first shapes
local function run_grad(cs, dev)
  local shapes = cs.shapes and cs.shapes[1] or nil
  if not shapes then
    shapes = {}
    for i = 1, cs.arity do shapes[i] = cs.reduce and { 3, 4 } or { 5 } end
    if cs.bcast then shapes = { { 3, 1 }, { 1, 4 } } end
  end
  local xs = {}
  for i = 1, #shapes do
    local g = type(cs.gen) == "table" and cs.gen[i] or cs.gen
    xs[i] = GEN[g](torch.float64, shapes[i]):to(dev):requires_grad_()
  end
  local ok, res = pcall(function()
    return torch.autograd.gradcheck(function(...)
      local r = cs.f(...)
      if type(r) == "table" then r = r[1] end
      return r
    end, xs)
  end)
  T.ok(ok and res == true, cs.name .. " gradcheck on " .. dev .. ": " .. tostring(res))
end

local devices = { "cpu" }
if c.is_available() then devices[#devices + 1] = "cuda" end

for _, dev in ipairs(devices) do
  for _, cs in ipairs(CASES) do
    if not only or only[cs.name] then
      T.test(dev .. ": " .. cs.name, function() run_case(cs, dev) end)
      if cs.grad then T.test(dev .. ": " .. cs.name .. " gradcheck", function() run_grad(cs, dev) end) end
    end
  end
end
if not c.is_available() then
  T.skip("cuda: the device-generic suite", "torch.cuda is not available: " .. tostring(c.unavailable_reason()))
end

-- The coverage: per op, the CUDA kernel launches and counted CPU fallbacks over its cases,
-- and whether its dispatched op (the case name's first word) is still in
-- src/cuda/kernels_left.lua: such an op has no declared CUDA kernel, so under the fake the
-- backend's table runs the CPU's kernel (not counted) and the launches seen are copies around
-- it (or kernels registered outside the declarations, as elementwise.c's are); on a GPU it
-- raises. An op not in the list ran its CUDA kernel where launches were counted.
if c.is_available() then
  local left = {}
  local okl, groups = pcall(dofile, "src/cuda/kernels_left.lua")
  if okl then for _, g in ipairs(groups) do for _, op in ipairs(g.ops) do left[op] = g.why end end end
  local names = {}
  for n in pairs(counts) do names[#names + 1] = n end
  table.sort(names)
  local k, f, z = 0, 0, 0
  print("coverage on cuda: per op, launches of the CUDA kernels ('kernel'), counted CPU fallbacks ('cpu'), and")
  print("whether src/cuda/kernels_left.lua still lists it (then the CPU's kernel ran under the fake):")
  for _, n in ipairs(names) do
    local e, op = counts[n], n:match("^[%w_]+")
    local what
    if left[op] then what = "CPU kernel (left: " .. left[op] .. ")"; f = f + 1
    elseif e.cpu > 0 then what = "CPU fallback (counted)"; f = f + 1
    elseif e.kernel > 0 then what = "CUDA kernel"; k = k + 1
    else what = "no launch (byte moves, or a composite of other ops)"; z = z + 1 end
    print(("  %-26s kernel %6d  cpu %5d  %s"):format(n, e.kernel, e.cpu, what))
  end
  print(("coverage: %d ops on CUDA kernels, %d on the CPU's kernel, %d without a launch"):format(k, f, z))
end

T.done()
