-- test_pointwise.lua — the pointwise ops' CUDA kernels (src/cuda/unary.c, binary.c over the
-- family in src/cuda/kernels/pointwise.h) against the CPU: every op over dtypes, sizes 0, 1, 31,
-- 1025 and 0-d, transposed, sliced and broadcast inputs, numbers, out= and in-place forms, bad
-- input giving the CPU's error, and gradients through the op on cuda tensors. Each check also
-- reads torch.cuda._kernel_counts(): the CUDA kernel ran (host count under the fake driver) and
-- the CPU's kernel did not. Runs unchanged on a real GPU (device count instead of host).
local T = require "testing"
local check = require "cuda.check"
local c = torch.cuda

if not c.is_available() then
  T.skip("cuda pointwise", "torch.cuda is not available: " .. tostring(c.unavailable_reason()))
  T.done()
  return
end

local fake = os.getenv("LUTORCH_CUDA_DRIVER") == "fake"
local FLOATS = { torch.float32, torch.float64, torch.float16, torch.bfloat16 }
local DT = { torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16,
             torch.int8, torch.uint8, torch.bool }
-- the host build uses the CPU's libm (exact but for FMA contraction); a GPU's differs by ulps
local TOL = fake and { [torch.float64] = 1e-12, [torch.float32] = 1e-5, [torch.float16] = 2e-3, [torch.bfloat16] = 1.6e-2 }
             or { [torch.float64] = 1e-9, [torch.float32] = 1e-4, [torch.float16] = 4e-3, [torch.bfloat16] = 3.2e-2 }
local isfloat = {}
for _, d in ipairs(FLOATS) do isfloat[d] = true end

-- values of dtype dt (0-d for shape {}); kind "pos" > 0, "nonzero" without zeros, "unit" in (-1, 1)
local function gen(dt, shape, kind)
  local x = #shape == 0 and torch.randn({}) * 3 or torch.randn(shape) * 3
  if kind == "unit" then x = torch.tanh(x) * 0.99 end
  if dt == torch.bool then return x:gt(0) end
  if isfloat[dt] then
    if kind == "pos" or kind == "nonzero" then x = x:abs() + 0.25 end
    return x:to(dt)
  end
  x = x:round()
  if dt == torch.uint8 then x = x:abs() end
  if kind == "pos" or kind == "nonzero" then x = x:abs() + 1 end
  return x:to(dt)
end

local function close(got, want, what, tol) check.close(got, want, what, tol or TOL) end

local nchecks = 0
-- f on the CPU and on cuda give the same result, or raise the same error; the CUDA kernels ran
-- and the CPU's kernel did not ("any": no launch needed, e.g. a constant or a copy); tol_dt:
-- the dtype whose tolerance applies (an out= of float64 holds a float32 result)
local function check(what, f, args, expect, tol_dt)
  nchecks = nchecks + 1
  local dargs = {}
  for i, t in ipairs(args) do dargs[i] = type(t) == "userdata" and t:cuda() or t end
  local okc, want = pcall(f, table.unpack(args))
  c._kernel_counts(true)
  local okd, got = pcall(f, table.unpack(dargs))
  local n = c._kernel_counts(true)
  if not okc then
    T.ok(not okd, what .. ": the CPU raises (" .. tostring(want) .. ") but cuda does not")
    if not okd then T.eq(tostring(got):match(": ([^:]*)$"), tostring(want):match(": ([^:]*)$"), what .. " error") end
    T.eq(n.cpu, 0, what .. ": the CPU kernel ran for the error")
    return
  end
  T.ok(okd, what .. ": " .. tostring(got))
  if not okd then return end
  if type(want) ~= "userdata" then T.eq(got, want, what); return end
  close(got, want, what, tol_dt and TOL[tol_dt])
  T.eq(n.cpu, 0, what .. ": fell back to the CPU kernel")
  if want:numel() > 0 and expect ~= "any" then T.ok(n.host + n.device > 0, what .. ": no CUDA kernel launch") end
  if fake then T.eq(n.device, 0, what .. ": the nvcc build ran under the fake") end
end

local SHAPES = { { "0", { 0 } }, { "1", { 1 } }, { "31", { 31 } }, { "1025", { 1025 } }, { "0-d", {} } }

-- ---- unary ops: name, function, value kind, whether an in-place form exists ----
local function m(name, ...) local extra = { ... }; return function(x) return x[name](x, table.unpack(extra)) end end
local UNARY = {
  { "neg" }, { "abs" }, { "exp" }, { "relu" }, { "sigmoid" }, { "tanh" }, { "sqrt", kind = "pos" },
  { "rsqrt", kind = "pos" }, { "exp2" }, { "expm1" }, { "log", kind = "pos" }, { "log2", kind = "pos" },
  { "log10", kind = "pos" }, { "log1p", kind = "pos" }, { "sin" }, { "cos" }, { "tan" }, { "asin", kind = "unit" },
  { "acos", kind = "unit" }, { "atan" }, { "sinh" }, { "cosh" }, { "asinh" }, { "atanh", kind = "unit" },
  { "acosh", f = function(x) return (x:abs() + 1):acosh() end, noinplace = true }, { "erf" }, { "erfc" }, { "erfinv", kind = "unit" },
  { "reciprocal", kind = "nonzero" }, { "floor" }, { "ceil" }, { "trunc" }, { "round" }, { "frac" }, { "sign" },
  { "square" }, { "sinc" }, { "lgamma", kind = "pos" }, { "digamma", kind = "pos" }, { "i0" },
  { "logit", kind = "unit" }, { "nan_to_num" }, { "bitwise_not" }, { "logical_not" },
  { "relu6" }, { "hardtanh" }, { "silu" }, { "gelu" }, { "mish" }, { "hardsigmoid" }, { "hardswish" },
  { "selu" }, { "celu" }, { "elu" }, { "leaky_relu" },
  { "softsign", noinplace = true }, { "logsigmoid", noinplace = true }, { "tanhshrink", noinplace = true },
  { "softplus", noinplace = true }, { "hardshrink", noinplace = true }, { "softshrink", noinplace = true },
  { "isnan", noout = true }, { "isinf", noout = true }, { "isfinite", noout = true },
  { "isposinf", noinplace = true }, { "isneginf", noinplace = true }, { "signbit", noinplace = true },
  { "round decimals=2", f = function(x) return x:round({ decimals = 2 }) end, noinplace = true },
  { "round decimals=-1", f = function(x) return x:round({ decimals = -1 }) end, noinplace = true },
  { "gelu tanh", f = function(x) return x:gelu({ approximate = "tanh" }) end, noinplace = true },
  { "logit eps", f = function(x) return x:logit(0.1) end, noinplace = true },
  { "nan_to_num values", f = function(x) return x:nan_to_num(1, 2, -2) end, noinplace = true },
  { "hardtanh bounds", f = function(x) return x:hardtanh(-0.5, 2.5) end, noinplace = true },
  { "leaky_relu slope", f = function(x) return x:leaky_relu(0.2) end, noinplace = true },
  { "elu alpha", f = function(x) return torch.nn.functional.elu(x, 0.7) end, noinplace = true },
  { "celu alpha", f = function(x) return x:celu(0.5) end, noinplace = true },
  { "softplus beta", f = function(x) return x:softplus(2, 1) end, noinplace = true },
  { "threshold", f = function(x) return x:threshold(0.5, -1) end, noinplace = true },
  { "threshold int bounds", f = function(x) return x:threshold(1.5, 7) end, noinplace = true },
  { "hardshrink lambd", f = function(x) return x:hardshrink(1) end, noinplace = true },
  { "polygamma 1", f = function(x) return torch.polygamma(1, x) end, noinplace = true, kind = "pos" },
  { "polygamma 3", f = function(x) return torch.polygamma(3, x) end, noinplace = true, kind = "pos" },
  { "_i1", f = function(x) return torch._i1(x) end, noinplace = true },
  { "pow 2", f = function(x) return x ^ 2 end, noinplace = true },
  { "pow 3", f = function(x) return x:pow(3) end, noinplace = true },
  { "pow 0.5", f = function(x) return x:pow(0.5) end, noinplace = true, kind = "pos" },
  { "pow -0.5", f = function(x) return x:pow(-0.5) end, noinplace = true, kind = "pos" },
  { "pow -1", f = function(x) return x:pow(-1) end, noinplace = true, kind = "nonzero" },
  { "pow 2.5", f = function(x) return x:pow(2.5) end, noinplace = true, kind = "pos" },
  { "pow 4 int", f = function(x) return x:pow(4) end, noinplace = true },
}

T.test("unary ops over dtypes and sizes", function()
  for _, u in ipairs(UNARY) do
    local f = u.f or m(u[1])
    for _, dt in ipairs(DT) do
      for _, sh in ipairs(SHAPES) do
        check(("%s %s [%s]"):format(u[1], tostring(dt), sh[1]), f, { gen(dt, sh[2], u.kind) }, "any")
      end
    end
  end
end)

T.test("unary ops launch the CUDA kernel", function()
  -- floating inputs always have a kernel (integer ones may be a copy or a constant)
  for _, u in ipairs(UNARY) do
    local f = u.f or m(u[1])
    check(u[1] .. " float32 launches", f, { gen(torch.float32, { 9 }, u.kind) })
  end
end)

T.test("unary ops: non-contiguous, out= and in place", function()
  for _, u in ipairs(UNARY) do
    local f = u.f or m(u[1])
    for _, dt in ipairs({ torch.float32, torch.float16, torch.int32, torch.uint8 }) do
      local x = gen(dt, { 6, 5 }, u.kind)
      check(u[1] .. " transposed " .. tostring(dt), f, { x:t() }, "any")
      check(u[1] .. " sliced " .. tostring(dt), function(y) return f(y:narrow(1, 2, 3)) end, { x }, "any")
      check(u[1] .. " stepped " .. tostring(dt), function(y) return f(y:t()[{ { 1, 5, 2 } }]) end, { x }, "any")
      if not u.f and not u.noout then
        check(u[1] .. " out= " .. tostring(dt), function(y, o) torch[u[1]](y, { out = o }); return o end,
              { x, torch.zeros(6, 5) }, "any")
        check(u[1] .. " out= resized " .. tostring(dt), function(y, o) torch[u[1]](y, { out = o }); return o end,
              { x, torch.zeros({ 3 }, { dtype = torch.float64 }) }, "any", torch.float16)
      end
      if not u.f and not u.noout and not u.noinplace then
        check(u[1] .. "_ " .. tostring(dt), function(y) local z = y:clone(); z[u[1] .. "_"](z); return z end, { x }, "any")
        check(u[1] .. "_ on a transposed view " .. tostring(dt),
              function(y) local z = y:clone(); z:t()[u[1] .. "_"](z:t()); return z end, { x }, "any")
      end
    end
  end
end)

T.test("unary ops: special values", function()
  local v = torch.tensor({ 0, -0.0, 1 / 0, -1 / 0, 0 / 0, 1, -1, 0.5, -0.5, 2.5, -2.5, 1e-30, 1e30, -7, 3.5 })
  for _, u in ipairs(UNARY) do
    local f = u.f or m(u[1])
    for _, dt in ipairs(FLOATS) do check(u[1] .. " specials " .. tostring(dt), f, { v:to(dt) }, "any") end
  end
end)

-- ---- binary ops ----
local function fn(name) return function(a, b) return torch[name](a, b) end end
local BINARY = {
  { "add" }, { "sub" }, { "mul" }, { "div", kind = "nonzero" }, { "remainder", kind = "nonzero" },
  { "fmod", kind = "nonzero" }, { "floor_divide", kind = "nonzero" }, { "pow", first = "pos" },
  { "atan2" }, { "hypot" }, { "maximum", noinplace = true }, { "minimum", noinplace = true },
  { "fmax", noinplace = true }, { "fmin", noinplace = true }, { "logaddexp", noinplace = true },
  { "logaddexp2", noinplace = true }, { "xlogy", second = "pos" }, { "nextafter" }, { "gcd" }, { "lcm" },
  { "heaviside" }, { "bitwise_and" }, { "bitwise_or" }, { "bitwise_xor" }, { "bitwise_left_shift" },
  { "bitwise_right_shift" }, { "eq" }, { "ne" }, { "lt" }, { "le" }, { "gt" }, { "ge" }, { "logical_and" },
  { "logical_or" }, { "logical_xor" }, { "clamp_min" }, { "clamp_max" },
  { "isclose", noout = true, noinplace = true },
  { "add alpha", f = function(a, b) return torch.add(a, b, { alpha = 2 }) end },
  { "sub alpha", f = function(a, b) return torch.sub(a, b, { alpha = 3 }) end },
  { "div trunc", f = function(a, b) return torch.div(a, b, { rounding_mode = "trunc" }) end, kind = "nonzero" },
  { "div floor", f = function(a, b) return torch.div(a, b, { rounding_mode = "floor" }) end, kind = "nonzero" },
  { "isclose loose", f = function(a, b) return torch.isclose(a, b, 0.5, 1, true) end },
  { "prelu", f = function(a) return torch.prelu(a, torch.tensor({ 0.25 }):to(a.dtype):to(a.device)) end },
}

T.test("binary ops over dtypes and sizes", function()
  for _, b in ipairs(BINARY) do
    local f = b.f or fn(b[1])
    for _, dt in ipairs(DT) do
      for _, sh in ipairs(SHAPES) do
        check(("%s %s [%s]"):format(b[1], tostring(dt), sh[1]), f,
              { gen(dt, sh[2], b.first), gen(dt, sh[2], b.kind or b.second) }, "any")
      end
    end
  end
end)

T.test("binary ops launch the CUDA kernel", function()
  local ints = { gcd = 1, lcm = 1, bitwise_and = 1, bitwise_or = 1, bitwise_xor = 1, bitwise_left_shift = 1,
                 bitwise_right_shift = 1 }
  for _, b in ipairs(BINARY) do
    local dt = ints[b[1]] and torch.int32 or torch.float32
    check(b[1] .. " launches", b.f or fn(b[1]), { gen(dt, { 9 }, b.first), gen(dt, { 9 }, b.kind or b.second) })
  end
end)

T.test("binary ops: layouts, broadcasting, numbers, mixed dtypes", function()
  for _, b in ipairs(BINARY) do
    local f = b.f or fn(b[1])
    for _, dt in ipairs({ torch.float32, torch.float16, torch.int64, torch.uint8, torch.bool }) do
      local x, y = gen(dt, { 7, 5 }, b.first):t(), gen(dt, { 5, 9 }, b.kind or b.second):narrow(2, 2, 7)
      check(b[1] .. " transposed/sliced " .. tostring(dt), f, { x, y }, "any")
      check(b[1] .. " broadcast " .. tostring(dt), f, { gen(dt, { 3, 1 }, b.first), gen(dt, { 1, 4 }, b.kind) }, "any")
      check(b[1] .. " 0-d with 31 " .. tostring(dt), f, { gen(dt, {}, b.first), gen(dt, { 31 }, b.kind) }, "any")
      if not b.f then
        check(b[1] .. " number " .. tostring(dt), function(a) return f(a, 3) end, { x }, "any")
        check(b[1] .. " float number " .. tostring(dt), function(a) return f(a, 2.5) end, { x }, "any")
      end
    end
    local f32, f64, i32, u8 = gen(torch.float32, { 31 }, b.first), gen(torch.float64, { 31 }, b.kind),
      gen(torch.int32, { 31 }, b.first), gen(torch.uint8, { 31 }, b.kind)
    check(b[1] .. " float32 with float64", f, { f32, f64 }, "any")
    check(b[1] .. " int32 with float32", f, { i32, f32 }, "any")
    check(b[1] .. " uint8 with int32", f, { u8, i32 }, "any")
    check(b[1] .. " bool with int32", f, { gen(torch.bool, { 31 }), i32 }, "any")
  end
end)

T.test("binary ops: out= and in place", function()
  for _, b in ipairs(BINARY) do
    if not b.f then
      for _, dt in ipairs({ torch.float32, torch.int32 }) do
        local x, y = gen(dt, { 5, 7 }, b.first), gen(dt, { 7 }, b.kind or b.second)
        if not b.noout then
          check(b[1] .. " out= " .. tostring(dt), function(p, q, o) torch[b[1]](p, q, { out = o }); return o end,
                { x, y, torch.zeros(5, 7) }, "any")
          check(b[1] .. " out= float64 resized " .. tostring(dt),
                function(p, q, o) torch[b[1]](p, q, { out = o }); return o end,
                { x, y, torch.zeros({ 2 }, { dtype = torch.float64 }) }, "any", torch.float32)
          check(b[1] .. " out= overlapping " .. tostring(dt), function(p)
            local z = p:clone(); torch[b[1]](z:narrow(1, 1, 4), z:narrow(1, 2, 4), { out = z:narrow(1, 2, 4) }); return z
          end, { x }, "any")
        end
        if not b.noinplace then
          check(b[1] .. "_ broadcast " .. tostring(dt), function(p, q) local z = p:clone(); z[b[1] .. "_"](z, q); return z end,
                { x, y }, "any")
          check(b[1] .. "_ number " .. tostring(dt), function(p) local z = p:clone(); z[b[1] .. "_"](z, 2); return z end,
                { x }, "any")
        end
      end
    end
  end
end)

T.test("integer division by zero raises the CPU's error", function()
  local a, z = torch.arange(6):int(), torch.tensor({ 1, 2, 0, 1, 2, 3 }):int()
  for _, f in ipairs({ torch.remainder, torch.fmod, torch.floor_divide,
                       function(x, y) return torch.div(x, y, { rounding_mode = "trunc" }) end }) do
    check("int / 0", f, { a, z })
    check("int / number 0", function(x) return f(x, 0) end, { a })
  end
  check("float / 0 is inf", function(x, y) return torch.div(x, y, { rounding_mode = "floor" }) end, { a:float(), z:float() })
  check("INT_MIN / -1 wraps", function(x) return torch.div(x, -1, { rounding_mode = "trunc" }) end,
        { torch.tensor({ -2147483648, 7 }):int() })
end)

-- ---- ternary ops ----
T.test("where, clamp, lerp, addcmul, addcdiv", function()
  for _, dt in ipairs(DT) do
    for _, sh in ipairs(SHAPES) do
      local what = tostring(dt) .. " [" .. sh[1] .. "]"
      local x, y, z = gen(dt, sh[2]), gen(dt, sh[2]), gen(dt, sh[2], "nonzero")
      check("where " .. what, torch.where, { gen(torch.bool, sh[2]), x, y })
      check("where uint8 condition " .. what, torch.where, { gen(torch.uint8, sh[2]), x, y })
      check("clamp tensors " .. what, torch.clamp, { x, y, z })
      check("clamp numbers " .. what, function(a) return torch.clamp(a, -1, 2) end, { x })
      check("clamp min only " .. what, function(a) return torch.clamp(a, 0) end, { x })
      check("clamp max only " .. what, function(a) return torch.clamp(a, nil, 1) end, { x })
      check("lerp " .. what, torch.lerp, { x, y, z })
      check("lerp number weight " .. what, function(a, b) return torch.lerp(a, b, 0.75) end, { x, y })
      check("addcmul " .. what, function(a, b, cc) return torch.addcmul(a, b, cc, { value = 2 }) end, { x, y, z })
      check("addcdiv " .. what, function(a, b, cc) return torch.addcdiv(a, b, cc, { value = 0.5 }) end, { x, y, z })
    end
  end
  for _, dt in ipairs({ torch.float32, torch.int64, torch.float16 }) do
    local x = gen(dt, { 6, 4 })
    check("where broadcast " .. tostring(dt), torch.where, { gen(torch.bool, { 6, 1 }), x:t():t(), gen(dt, { 4 }) })
    check("where numbers " .. tostring(dt), function(cnd) return torch.where(cnd, 1, 0) end, { gen(torch.bool, { 6, 4 }) })
    check("where transposed " .. tostring(dt), torch.where, { gen(torch.bool, { 4, 6 }):t(), x, gen(dt, { 4, 6 }):t() })
    check("clamp broadcast " .. tostring(dt), torch.clamp, { x:t(), gen(dt, { 6 }), gen(dt, { 4, 1 }) })
    check("clamp_ " .. tostring(dt), function(a) local r = a:clone(); r:clamp_(-1, 1); return r end, { x })
    check("addcmul_ " .. tostring(dt), function(a, b) local r = a:clone(); r:addcmul_(b, b); return r end, { x, gen(dt, { 4 }) })
    check("clamp out= " .. tostring(dt), function(a, o) torch.clamp(a, 0, 1, { out = o }); return o end,
          { x, torch.zeros({ 6, 4 }, { dtype = torch.float64 }) })
    check("lerp_ " .. tostring(dt), function(a, b) local r = a:clone(); r:lerp_(b, 0.3); return r end, { x, x:t():t() * 2 })
  end
  check("addcmul float value on int raises", function(a) return torch.addcmul(a, a, a, { value = 0.5 }) end,
        { torch.arange(4) })
  check("where float condition raises", torch.where, { torch.randn(3), torch.randn(3), torch.randn(3) })
  check("clamp without bounds raises", function(a) return torch.clamp(a) end, { torch.randn(3) })
  check("where 2^20+3", torch.where, { gen(torch.bool, { 2 ^ 20 + 3 }), torch.randn(2 ^ 20 + 3), torch.randn(2 ^ 20 + 3) })
end)

-- ---- activations' backward and the rest ----
T.test("_activation_backward for every activation", function()
  local acts = { { "mish" }, { "hardsigmoid" }, { "hardswish" }, { "softsign" }, { "logsigmoid" }, { "threshold", 0.3 },
                 { "hardshrink", 0.5 }, { "softshrink", 0.5 }, { "tanhshrink" }, { "elu", 1.2, 1.1, 0.9 }, { "silu" },
                 { "gelu" }, { "gelu_tanh" }, { "softplus", 2, 5 } }
  for _, a in ipairs(acts) do
    for _, dt in ipairs(FLOATS) do
      for _, sh in ipairs(SHAPES) do
        check(("_activation_backward %s %s [%s]"):format(a[1], tostring(dt), sh[1]),
              function(g, x) return torch._activation_backward(g, x, a[1], a[2] or 0, a[3] or 0, a[4] or 0) end,
              { gen(dt, sh[2]), gen(dt, sh[2]) })
      end
    end
  end
  check("_activation_backward bad name", function(g, x) return torch._activation_backward(g, x, "nope") end,
        { torch.randn(3), torch.randn(3) })
  check("_activation_backward int", function(g, x) return torch._activation_backward(g, x, "silu") end,
        { torch.arange(3), torch.arange(3) })
end)

T.test("prelu per channel", function()
  for _, dt in ipairs(FLOATS) do
    check("prelu channels " .. tostring(dt), function(x, w) return torch.prelu(x, w) end,
          { gen(dt, { 2, 3, 4 }), gen(dt, { 3 }) })
  end
  check("prelu wrong channels", function(x, w) return torch.prelu(x, w) end, { torch.randn(2, 3), torch.randn(4) })
  check("prelu dtype mismatch", function(x, w) return torch.prelu(x, w) end, { torch.randn(2, 3), torch.randn(3):double() })
end)

T.test("errors are the CPU's", function()
  local f, i, b = torch.randn(4), torch.arange(4), torch.tensor({ true, false })
  check("neg bool", function(x) return -x end, { b })
  check("sub bool", function(x) return x - x end, { b })
  check("bitwise_and float", torch.bitwise_and, { f, f })
  check("shift bool", torch.bitwise_left_shift, { b, b })
  check("gcd float", torch.gcd, { f, f })
  check("nextafter int", torch.nextafter, { i, i })
  check("nextafter half", torch.nextafter, { f:half(), f:half() })
  check("lerp int", torch.lerp, { i, i, i })
  check("addcdiv int", torch.addcdiv, { i, i, i })
  check("silu int", torch.nn.functional.silu, { i })
  check("frac int", torch.frac, { i })
  check("gelu bad approximate", function(x) return x:gelu({ approximate = "no" }) end, { f })
  check("div bad mode", function(x) return torch.div(x, x, { rounding_mode = "up" }) end, { f })
  check("pow int negative", function(x) return x:pow(-2) end, { i })
  check("hardshrink negative lambd", function(x) return x:hardshrink(-1) end, { f })
  check("celu alpha 0", function(x) return x:celu(0) end, { f })
  check("round decimals int", function(x) return x:round({ decimals = 1 }) end, { i })
  check("heaviside dtypes", torch.heaviside, { f, f:double() })
  check("isclose negative rtol", function(x) return torch.isclose(x, x, -1) end, { f })
  check("exp out= int", function(x, o) torch.exp(x, { out = o }); return o end, { f, torch.zeros(4):long() })
  check("add broadcast mismatch", torch.add, { torch.randn(3), torch.randn(4) })
  check("eq_ keeps self's dtype", function(x, y) local z = x:clone(); z:eq_(y); return z end, { f, f:clone():fill_(0) })
  check("lt_ int", function(x) local z = x:clone(); z:lt_(2); return z end, { i })
  check("relu6 bool", torch.nn.functional.relu6, { b })
  check("threshold fractional value on int", function(x) return x:threshold(1, 0.5) end, { i })
end)

T.test("large and 10-d inputs", function()
  local n = 2 ^ 20 + 3
  local x, y = torch.randn(n), torch.rand(n) + 0.5
  check("add 2^20+3", torch.add, { x, y })
  check("div 2^20+3", torch.div, { x, y })
  check("exp 2^20+3", torch.exp, { x })
  check("gt 2^20+3", torch.gt, { x, y })
  check("gelu 2^20+3 half", torch.nn.functional.gelu, { x:half() })
  -- 10 dims reversed merge into none: past the kernels' 8, the CPU's kernel runs under the fake
  local base = torch.randn({ 2, 2, 2, 2, 2, 2, 2, 2, 2, 2 })
  local perm = { 10, 9, 8, 7, 6, 5, 4, 3, 2, 1 }
  local p = base:permute(perm)
  if fake then
    local d = base:cuda():permute(perm)
    c._kernel_counts(true)
    local r = torch.sin(d)
    local n2 = c._kernel_counts(true)
    close(r, torch.sin(p), "sin 10-d")
    T.ok(n2.cpu > 0, "sin 10-d: the CPU fallback")
  end
end)

T.test("gradients through pointwise ops on cuda match the CPU", function()
  local ops = {
    function(x, y) return (x:sin() * y:exp() + x:atan2(y) - x:hypot(y)):sum() end,
    function(x, y) return (torch.where(x:gt(y), x, y) + x:clamp(-0.5, 0.5) + torch.lerp(x, y, 0.3)):sum() end,
    function(x, y) return (torch.addcmul(x, x, y, { value = 2 }) + torch.addcdiv(x, y, y:abs() + 1)):sum() end,
    function(x) return (x:gelu() + x:silu() + x:mish() + x:softplus() + x:elu() + x:hardswish()):sum() end,
    function(x) return (x:logsigmoid() + x:softsign() + x:tanhshrink() + x:hardsigmoid() + x:celu(0.5)):sum() end,
    function(x) return (x:hardshrink() + x:softshrink() + x:threshold(0.1, 2) + x:leaky_relu(0.1)):sum() end,
    function(x, y) return (torch.maximum(x, y) + torch.fmin(x, y) + torch.logaddexp(x, y) + x:pow(y:abs())):sum() end,
    function(x) return (x:abs():sqrt() + x:abs():add(1):log() + x:erf() + x:sigmoid():logit() + x:sinc()):sum() end,
    function(x, y) return (torch.xlogy(x, y:abs() + 1) + torch.prelu(x, torch.tensor({ 0.2 }, { dtype = x.dtype })
      :to(x.device)) + x:remainder(1.5)):sum() end,
  }
  for k, f in ipairs(ops) do
    local x0, y0 = torch.randn({ 4, 5 }, { dtype = torch.float64 }), torch.randn({ 4, 5 }, { dtype = torch.float64 })
    local function grads(dev)
      local x = (dev == "cpu" and x0:clone() or x0:cuda()):requires_grad_()
      local y = (dev == "cpu" and y0:clone() or y0:cuda()):requires_grad_()
      f(x, y):backward()
      return x.grad, y.grad
    end
    local gx, gy = grads("cpu")
    c._kernel_counts(true)
    local dx, dy = grads("cuda")
    local n = c._kernel_counts(true)
    close(dx, gx, "grad x " .. k)
    if gy then close(dy, gy, "grad y " .. k) end
    T.ok(n.host + n.device > 0, "grads " .. k .. ": the CUDA kernels ran")
  end
  local x = torch.randn({ 3, 4 }, { dtype = torch.float64 }):cuda():requires_grad_()
  T.ok(torch.autograd.gradcheck(function(t) return (t:tanh() * t:sigmoid() + t:atan()):sum() end, { x }),
       "gradcheck on cuda float64")
end)

T.test("equal and allclose: the comparison and all() on the device, one value read back", function()
  local cases = {
    { torch.float32, { 3, 4 } }, { torch.float64, { 1025 } }, { torch.int64, { 31 } }, { torch.bool, { 5, 2 } },
    { torch.float16, { 7 } }, { torch.float32, { 0 } }, { torch.float64, {} },
  }
  for _, cs in ipairs(cases) do
    local dt, shape = cs[1], cs[2]
    local a = gen(dt, shape, "normal")
    local b = a:clone()
    local ga, gb = a:cuda(), b:cuda()
    c._kernel_counts(true)
    T.eq(torch.equal(ga, gb), torch.equal(a, b), "equal " .. tostring(dt))
    T.eq(torch.allclose(ga, gb), torch.allclose(a, b), "allclose " .. tostring(dt))
    if a:numel() > 0 and dt ~= torch.bool then
      local a2 = a:clone()
      local flat = a2:view(-1)
      flat[1] = flat[1] + 1
      T.eq(torch.equal(ga, a2:cuda()), false, "equal after a change " .. tostring(dt))
      T.eq(torch.allclose(ga, a2:cuda()), false, "allclose after a change " .. tostring(dt))
    end
    local n = c._kernel_counts(true)
    T.eq(n.cpu, 0, "no CPU fallback " .. tostring(dt))
  end
  local x = torch.randn(4, 6):cuda()
  T.eq(torch.equal(x, x:t():contiguous():t()), true, "equal of another layout")
  T.eq(torch.equal(x, x[{ { 1, 2 } }]), false, "equal of another shape is false")
  T.eq(torch.allclose(x, x + 1e-9), true, "allclose within tolerance")
  T.eq(torch.allclose(x, x + 1, { atol = 2 }), true, "allclose with atol")
  local nan = torch.tensor({ 1, 0 / 0 }):cuda()
  T.eq(torch.allclose(nan, nan), false, "NaN is not close")
  T.eq(torch.allclose(nan, nan, { equal_nan = true }), true, "equal_nan")
  T.raises(function() torch.allclose(x, x, { rtol = -1 }) end, "allclose: argument 'rtol' must be non-negative")
  T.raises(function() torch.allclose(x, torch.randn(5):cuda()) end, "allclose: shapes")
end)

print(("%d checks against the CPU"):format(nchecks))
T.done()
