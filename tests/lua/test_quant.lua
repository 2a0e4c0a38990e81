-- test_quant.lua — quantization for inference (man/quantization.md): quantized tensors
-- against PyTorch 1.13, the quantized linear and embedding kernels against float32 within
-- their documented bounds, the CPU paths agreeing, torch.ao.quantize_, saving and loading,
-- bad input, and a Fashion-MNIST MLP's accuracy after quantization.
local T = require "testing"
local P = require "pyref"
local nn = require "nn"
local ao = torch.ao

torch.manual_seed(0)

------------------------------------------------------------------------------
-- quantized tensors
------------------------------------------------------------------------------
T.test("quantize_per_tensor: int_repr, dequantize, accessors, printing", function()
  local x = torch.tensor({ -1.0, -0.25, 0.0, 0.05, 0.15, 0.25, 1.0, 100.0 })
  local q = torch.quantize_per_tensor(x, 0.1, 10, torch.quint8)
  -- round half to even: 0.05/0.1 = 0.5 -> 0, 0.15/0.1 = 1.5 -> 2, 0.25 / 0.1 = 2.5 -> 2
  T.tensor(q:int_repr(), { 0, 8, 10, 10, 12, 12, 20, 255 }, { dtype = "uint8" })
  T.tensor(q:dequantize(), { -1.0, -0.2, 0.0, 0.0, 0.2, 0.2, 1.0, 24.5 }, { tol = 1e-6, dtype = "float32" })
  T.tensor(torch.dequantize(q), q:dequantize():totable())
  T.eq(q:q_scale(), 0.1); T.eq(q:q_zero_point(), 10)
  T.eq(tostring(q.dtype), "torch.quint8"); T.eq(tostring(q:qscheme()), "torch.per_tensor_affine")
  T.ok(q.dtype == torch.quint8)
  T.eq(q:size(), { 8 }); T.eq(q:numel(), 8); T.eq(q.shape, { 8 })
  local s = tostring(q)
  T.ok(s:find("dtype=torch.quint8,", 1, true), s)
  T.ok(s:find("quantization_scheme=torch.per_tensor_affine, scale=0.1, zero_point=10)", 1, true), s)
  local qi = torch.quantize_per_tensor(x, 0.01, 0, torch.qint8)
  T.tensor(qi:int_repr(), { -100, -25, 0, 5, 15, 25, 100, 127 }, { dtype = "int8" })
end)

T.test("quantize_per_channel: accessors, printing, negative axis", function()
  local x = torch.tensor({ { 1.0, -2.0, 3.0 }, { 0.5, 0.25, -0.125 } })
  local q = torch.quantize_per_channel(x, torch.tensor({ 0.1, 0.01 }), torch.tensor({ 0, 3 }), 1, torch.qint8)
  -- -0.125 / 0.01 = -12.5 rounds to -12 (half to even)
  T.tensor(q:int_repr(), { { 10, -20, 30 }, { 53, 28, -9 } })
  T.tensor(q:q_per_channel_scales(), { 0.1, 0.01 }, { dtype = "float64", tol = 1e-8 })
  T.tensor(q:q_per_channel_zero_points(), { 0, 3 }, { dtype = "int64" })
  T.eq(q:q_per_channel_axis(), 1)
  T.eq(tostring(q:qscheme()), "torch.per_channel_affine")
  T.ok(tostring(q):find("axis=1)", 1, true))
  local q2 = torch.quantize_per_channel(x, torch.tensor({ 0.1, 0.2, 0.3 }), torch.zeros(3, { dtype = torch.int64 }),
    -1, torch.quint8)
  T.eq(q2:q_per_channel_axis(), 2)
  T.raises(function() q:q_scale() end, "q_scale", "per channel")
  T.raises(function() q2:dequantize():q_scale() end)
end)

if P.available() then
  T.test("quantize_per_tensor/per_channel match PyTorch 1.13", function()
    local x = torch.randn(5, 7) * 3
    local sc = torch.rand(7) * 0.05 + 0.01
    local zp = torch.randint(-10, 10, { 7 })
    local r = P.run({ x = x, sc = sc, zp = zp }, [[
x = x.float()
a = torch.quantize_per_tensor(x, 0.037, 3, torch.qint8)
b = torch.quantize_per_tensor(x, 0.05, 128, torch.quint8)
c = torch.quantize_per_channel(x, sc, zp.long(), 1, torch.qint8)
ai, ad, bi, bd, ci, cd = a.int_repr(), a.dequantize(), b.int_repr(), b.dequantize(), c.int_repr(), c.dequantize()
]], { "ai", "ad", "bi", "bd", "ci", "cd" })
    local a = torch.quantize_per_tensor(x, 0.037, 3, torch.qint8)
    local b = torch.quantize_per_tensor(x, 0.05, 128, torch.quint8)
    local c = torch.quantize_per_channel(x, sc, zp, 2, torch.qint8)
    T.tensor(a:int_repr():double(), r[1]:totable()); T.tensor(a:dequantize():double(), r[2]:totable(), { tol = 1e-6 })
    T.tensor(b:int_repr():double(), r[3]:totable()); T.tensor(b:dequantize():double(), r[4]:totable(), { tol = 1e-6 })
    T.tensor(c:int_repr():double(), r[5]:totable()); T.tensor(c:dequantize():double(), r[6]:totable(), { tol = 1e-6 })
  end)
else
  T.skip("quantize against PyTorch", P.why())
end

T.test("quantize/dequantize round trip: within scale / 2", function()
  local x = torch.rand(100) * 2 - 1
  local q = torch.quantize_per_tensor(x, 2 / 255, 128, torch.quint8)
  T.ok((q:dequantize() - x):abs():max():item() <= 1 / 255 + 1e-6)
  local y = torch.randn(4, 50)
  local s = y:abs():amax(2) / 127
  local qc = torch.quantize_per_channel(y, s, torch.zeros(4, { dtype = torch.int64 }), 1, torch.qint8)
  T.ok(((qc:dequantize() - y):abs() - s:view(4, 1) / 2):max():item() <= 1e-6)
end)

------------------------------------------------------------------------------
-- the linear kernels against float32
------------------------------------------------------------------------------
-- every path this CPU has (the others are errors naming the argument)
local PATHS = {}
for _, isa in ipairs({ "portable", "avx2", "avx512", "avx512_vnni" }) do
  local ok, err = pcall(torch._int8_gemm_int32, torch.zeros(1, 1, { dtype = torch.int8 }),
    torch.zeros(1, 1, { dtype = torch.int8 }), { isa = isa })
  if ok then PATHS[#PATHS + 1] = isa
  else assert(tostring(err):find("lacks that path", 1, true), err) end
end
print("quantized kernel paths on this CPU: " .. table.concat(PATHS, ", "))

local function randint8(m, k) return torch.randint(-128, 128, { m, k }):to(torch.int8) end

T.test("_int8_gemm_int32: every path gives the exact int32 products", function()
  for _, sz in ipairs({ { 1, 1, 1 }, { 1, 4096, 7 }, { 3, 67, 5 }, { 5, 130, 9 }, { 9, 200, 3 } }) do
    local m, k, n = sz[1], sz[2], sz[3]
    local a, b = randint8(m, k), randint8(n, k)
    a[1][1] = -128; b[1][1] = -128   -- the extremes
    local ref = a:to(torch.int64):matmul(b:to(torch.int64):t())
    for _, isa in ipairs(PATHS) do
      local r = torch._int8_gemm_int32(a, b, { isa = isa })
      T.eq(r.dtype.name, "int32")
      T.ok(r:to(torch.int64):eq(ref):all():item(), isa .. " " .. table.concat(sz, "x"))
    end
  end
end)

-- max |y - y_float| / (max|x| * sum |W row| ...) bounds, man/quantization.md:
--   int8 weight-only: |err| <= sum_k |x_k| * s_n / 2            (the weight rounding)
--   int8 dynamic:     |err| <= sum_k (|x_k| s_n + |w_k| s_x) / 2 + K s_x s_n / 4
--   int4 weight-only: |err| <= sum_k |x_k| * scale_g / 2
-- plus float32 rounding (a relative 1e-5 of sum |x||w|)
local function check_bound(y, yf, bound, abssum, what)
  local excess = ((y - yf):abs() - bound - abssum * 1e-5):max():item()
  T.ok(excess <= 0, ("%s exceeds its bound by %g"):format(what, excess))
end

T.test("int8 weight-only, int8 dynamic and int4 linear: within the documented bounds", function()
  for _, sz in ipairs({ { 1, 64, 3 }, { 1, 4096, 33 }, { 2, 160, 17 }, { 4, 96, 5 }, { 7, 224, 11 }, { 13, 128, 70 },
                        { 40, 256, 9 } }) do
    local m, k, n = sz[1], sz[2], sz[3]
    local x, lin = torch.randn(m, k), nn.Linear(k, n)
    local w, b = lin.weight:detach(), lin.bias:detach()
    local yf = torch.nn.functional.linear(x, w, b)
    local abssum = x:abs():matmul(w:abs():t())
    -- int8 weight-only
    local q8 = ao.Int8WeightOnlyLinear.from_float(lin)
    local ws = q8.scales
    local bound8 = x:abs():sum(2, { keepdim = true }) * ws:view(1, -1) / 2
    for _, isa in ipairs(PATHS) do
      local y = torch._int8_weight_only_linear(x, q8.weight, q8.scales, q8.bias, { isa = isa })
      T.eq(y:size(), { m, n })
      check_bound(y, yf, bound8, abssum, "int8 weight-only " .. isa .. " " .. table.concat(sz, "x"))
    end
    -- int8 dynamic: the activation's rounding too
    local sx = x:abs():amax(2, { keepdim = true }) / 127
    local boundd = (x:abs():sum(2, { keepdim = true }) * ws:view(1, -1)
      + sx * w:abs():sum(2):view(1, -1)) / 2 + sx * ws:view(1, -1) * (k / 4)
    local ref
    for _, isa in ipairs(PATHS) do
      local y = torch._int8_dynamic_linear(x, q8.weight, q8.scales, q8.bias, { isa = isa })
      check_bound(y, yf, boundd, abssum, "int8 dynamic " .. isa .. " " .. table.concat(sz, "x"))
      -- exact int32 sums on every path: the same float results
      if ref then T.ok(y:eq(ref):all():item(), "int8 dynamic: path " .. isa .. " differs") else ref = y end
    end
    -- int4, each group size dividing k
    for _, gs in ipairs({ 32, 64, 128 }) do
      if k % gs == 0 then
        local q4 = ao.Int4WeightOnlyLinear.from_float(lin, gs)
        local g = k // gs
        local bound4 = x:abs():view(m, g, gs):sum(3):matmul(q4.scales:t()) / 2
        for _, isa in ipairs(PATHS) do
          local y = torch._int4_weight_only_linear(x, q4.weight, q4.scales, q4.zeros, gs, q4.bias, { isa = isa })
          check_bound(y, yf, bound4, abssum, ("int4 g%d %s %s"):format(gs, isa, table.concat(sz, "x")))
        end
      end
    end
  end
end)

T.test("quantized linear: leading dims, no bias, bfloat16 input, empty batch", function()
  local lin = nn.Linear(64, 8, { bias = false })
  local q8 = ao.Int8WeightOnlyLinear.from_float(lin)
  local x = torch.randn(2, 3, 64)
  local y = q8(x)
  T.eq(y:size(), { 2, 3, 8 })
  T.ok((y - lin(x):detach()):abs():max():item() < 0.05)
  local yb = q8(x:bfloat16())
  T.eq(yb.dtype.name, "bfloat16")
  T.ok((yb:float() - y):abs():max():item() < 0.05)
  T.eq(q8(torch.randn(0, 64)):size(), { 0, 8 })
  local q4 = ao.Int4WeightOnlyLinear.from_float(lin, 32)
  T.eq(q4(torch.randn(0, 64)):size(), { 0, 8 })
  -- a forward under an input that requires grad runs; the result carries no gradient
  local xr = torch.randn(1, 64, { requires_grad = true })
  T.ok(not q8(xr).requires_grad)
  T.eq(#q8:parameters(), 0)
end)

T.test("int4 packing: round trip within scale / 2, nibble layout", function()
  local w = torch.randn(6, 128)
  for _, gs in ipairs({ 32, 64, 128 }) do
    local p, s, z = torch._int4_pack(w, gs)
    T.eq(p:size(), { 6, 64 }); T.eq(p.dtype.name, "uint8"); T.eq(s:size(), { 6, 128 // gs }); T.eq(z:size(), s:size())
    local back = torch._int4_unpack(p, s, z, gs)
    local half = s:repeat_interleave(gs, 2) / 2
    T.ok(((back - w):abs() - half):max():item() <= 1e-5, "group " .. gs)
  end
  -- one group 0..15 exactly: scale 1, zero min + 8, q = value; element 2j in the low nibble
  local v = torch.arange(0, 32):float():view(1, 32) % 16
  local p, s, z = torch._int4_pack(v, 32)
  T.tensor(s, { { 1.0 } }); T.tensor(z, { { 8.0 } })
  T.eq(p[1][1], 0x10); T.eq(p[1][2], 0x32); T.eq(p[1][8], 0xfe)
  T.tensor(torch._int4_unpack(p, s, z, 32), v:totable())
end)

T.test("quantized embeddings", function()
  local e = nn.Embedding(20, 64)
  local idx = torch.tensor({ { 1, 5, 20 }, { 20, 2, 2 } })
  local ref = e(idx):detach()
  local q8 = ao.Int8WeightOnlyEmbedding.from_float(e)
  local y8 = q8(idx)
  T.eq(y8:size(), { 2, 3, 64 })
  T.ok((y8 - ref):abs():max():item() <= e.weight:abs():max():item() / 127 / 2 + 1e-6)
  local q4 = ao.Int4WeightOnlyEmbedding.from_float(e, 32)
  local y4 = q4(idx)
  T.ok((y4 - ref):abs():max():item() <= q4.scales:max():item() / 2 + 1e-5)
  T.raises(function() q8(torch.tensor({ 21 })) end, "_int8_embedding", "indices", "21")
  T.raises(function() q4(torch.tensor({ 0 })) end, "_int4_embedding", "indices")
  T.raises(function() q8(torch.tensor({ 1.0 })) end, "Int8WeightOnlyEmbedding", "integer")
end)

------------------------------------------------------------------------------
-- torch.ao.quantize_
------------------------------------------------------------------------------
local function mlp()
  return nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 10))
end

T.test("quantize_: each config, filter_fn, printing, in place", function()
  local x = torch.randn(4, 64)
  for _, cfg in ipairs({ ao.int8_weight_only(), ao.int8_dynamic_activation_int8_weight(),
                         ao.int4_weight_only({ group_size = 32 }) }) do
    local m = mlp()
    local first = m[1]
    local yf = m(x):detach()
    local r = ao.quantize_(m, cfg)
    T.ok(r == m)
    T.ok(rawequal(m[1], first), "the module object itself becomes quantized")
    local y = m(x)
    T.ok((y - yf):abs():max():item() < 0.05, tostring(cfg))
    T.eq(#m:parameters(), 0)
  end
  local m = mlp()
  ao.quantize_(m, ao.int8_weight_only(), { filter_fn = function(mod, fqn) return fqn ~= "5" and mod.in_features ~= 32 end })
  T.eq(getmetatable(m[1]).__name, "Int8WeightOnlyLinear")
  T.eq(getmetatable(m[3]).__name, "Linear")
  T.eq(getmetatable(m[5]).__name, "Linear")
  local s = tostring(m)
  T.ok(s:find("Int8WeightOnlyLinear(in_features=64, out_features=32, bias=True, weight=int8 per-channel symmetric)",
    1, true), s)
  local m4 = mlp()
  ao.quantize_(m4, ao.int4_weight_only({ group_size = 32 }))
  T.ok(tostring(m4):find("group_size=32", 1, true))
  -- a bare Linear is quantized in place too; embeddings only by the weight-only configs
  local lin = nn.Linear(64, 4)
  ao.quantize_(lin, ao.int8_dynamic_activation_int8_weight())
  T.eq(getmetatable(lin).__name, "Int8DynamicLinear")
  local e = nn.Embedding(10, 32)
  ao.quantize_(e, ao.int8_dynamic_activation_int8_weight())
  T.eq(getmetatable(e).__name, "Embedding")
  ao.quantize_(e, ao.int4_weight_only({ group_size = 32 }))
  T.eq(getmetatable(e).__name, "Int4WeightOnlyEmbedding")
end)

T.test("set_isa: the modules ask for a path", function()
  local m = mlp()
  local x = torch.randn(3, 64)
  ao.quantize_(m, ao.int8_dynamic_activation_int8_weight())
  local ref = m(x)
  for _, isa in ipairs(PATHS) do
    ao.set_isa(isa)
    T.ok(m(x):eq(ref):all():item(), isa)
  end
  ao.set_isa(nil)
end)

------------------------------------------------------------------------------
-- saving and loading
------------------------------------------------------------------------------
T.test("torch.save / torch.load of a quantized model and tensor; safetensors of its state_dict", function()
  local S = T.scratch()
  local x = torch.randn(3, 64)
  for _, cfg in ipairs({ ao.int8_weight_only(), ao.int8_dynamic_activation_int8_weight(),
                         ao.int4_weight_only({ group_size = 32 }) }) do
    local m = mlp()
    ao.quantize_(m, cfg)
    local y = m(x)
    torch.save(S.path("m.t7"), m)
    local m2 = torch.load(S.path("m.t7"))
    T.ok(m2(x):eq(y):all():item(), "torch.load " .. tostring(cfg))
    T.eq(tostring(m2), tostring(m))
    -- safetensors: the state dict, loaded into a fresh float model quantized the same way
    local sd = m:state_dict()
    local flat = {}
    for k, v in pairs(sd) do flat[k] = v end
    torch.save_safetensors(S.path("m.safetensors"), flat)
    local m3 = mlp()
    ao.quantize_(m3, cfg)
    m3:load_state_dict(torch.load_safetensors(S.path("m.safetensors")))
    T.ok(m3(x):eq(y):all():item(), "safetensors " .. tostring(cfg))
  end
  -- a fresh process finds the quantized classes by name
  local q = torch.quantize_per_channel(torch.randn(2, 3), torch.tensor({ 0.1, 0.2 }), torch.tensor({ 0, 1 }), 1,
    torch.quint8)
  torch.save(S.path("q.t7"), { q = q, m = (function() local l = nn.Linear(64, 2); ao.quantize_(l, ao.int8_weight_only()); return l end)() })
  local cmd = ("%s -e 'local t = torch.load(%q); print(t.q:int_repr():sum():item(), tostring(t.q.dtype), "
    .. "getmetatable(t.m).__name)' 2>&1"):format(arg and arg[-1] or "lutorch", S.path("q.t7"))
  local p = io.popen(cmd)
  local out = p:read("a"); p:close()
  T.eq(out, ("%d\ttorch.quint8\tInt8WeightOnlyLinear\n"):format(q:int_repr():sum():item()))
  local back = torch.load(S.path("q.t7")).q
  T.ok(back:int_repr():eq(q:int_repr()):all():item())
  T.eq(back:q_per_channel_axis(), 1)
  S.remove()
end)

------------------------------------------------------------------------------
-- bad input: errors naming the op and the argument
------------------------------------------------------------------------------
T.test("bad input is an error naming the op and the argument", function()
  local x = torch.randn(2, 4)
  T.raises(function() torch.quantize_per_tensor(x, 0, 0, torch.qint8) end, "quantize_per_tensor", "scale")
  T.raises(function() torch.quantize_per_tensor(x, 0.1, 200, torch.qint8) end, "quantize_per_tensor", "zero_point")
  T.raises(function() torch.quantize_per_tensor(x, 0.1, 0, torch.float32) end, "quantize_per_tensor", "dtype")
  T.raises(function() torch.quantize_per_tensor(torch.tensor({ 1, 2 }), 0.1, 0, torch.qint8) end,
    "quantize_per_tensor", "self", "floating point")
  T.raises(function() torch.quantize_per_channel(x, torch.ones(3), torch.zeros(3, { dtype = torch.int64 }), 1, torch.qint8) end,
    "quantize_per_channel", "scales")
  T.raises(function() torch.quantize_per_channel(x, torch.ones(2), torch.zeros(2), 1, torch.qint8) end,
    "quantize_per_channel", "zero_points")
  T.raises(function() torch.quantize_per_channel(x, torch.tensor({ 1.0, -1.0 }), torch.zeros(2, { dtype = torch.int64 }), 1, torch.qint8) end,
    "quantize_per_channel", "scales")
  T.raises(function() torch.quantize_per_channel(x, torch.ones(2), torch.zeros(2, { dtype = torch.int64 }), 3, torch.qint8) end,
    "quantize_per_channel", "dim")
  T.raises(function() torch.dequantize(torch.ones(2, { dtype = torch.int64 })) end, "dequantize", "self")
  T.raises(function() torch._dequantize_per_tensor(torch.ones(2), 0.1, 0) end, "dequantize", "self")
  local w, s = torch.zeros(3, 4, { dtype = torch.int8 }), torch.ones(3)
  T.raises(function() torch._int8_weight_only_linear(torch.randn(2, 5), w, s) end, "_int8_weight_only_linear", "input")
  T.raises(function() torch._int8_weight_only_linear(torch.randn(2, 4):double(), w, s) end, "_int8_weight_only_linear", "input", "float64")
  T.raises(function() torch._int8_weight_only_linear(x, w:float(), s) end, "_int8_weight_only_linear", "weight")
  T.raises(function() torch._int8_weight_only_linear(x, w, torch.ones(2)) end, "_int8_weight_only_linear", "scales")
  T.raises(function() torch._int8_weight_only_linear(x, w, s, torch.ones(4)) end, "_int8_weight_only_linear", "bias")
  T.raises(function() torch._int8_weight_only_linear(x, w, s, nil, { isa = "sse9" }) end, "_int8_weight_only_linear", "isa", "sse9")
  T.raises(function() torch._int8_dynamic_linear(x, w:view(4, 3), s) end, "_int8_dynamic_linear")
  T.raises(function() torch._int8_dynamic_linear(torch.tensor({ { 0 / 0, 1, 2, 3 } }), w, s) end, "_int8_dynamic_linear", "input", "non-finite")
  T.raises(function() torch._int4_pack(torch.randn(2, 48), 32) end, "_int4_pack", "multiple of group_size")
  T.raises(function() torch._int4_pack(torch.randn(2, 64), 16) end, "_int4_pack", "group_size", "32, 64 or 128")
  T.raises(function() torch._int4_pack(torch.ones(2, 64, { dtype = torch.int64 }), 32) end, "_int4_pack", "weight")
  local p, s4, z4 = torch._int4_pack(torch.randn(3, 64), 32)
  T.raises(function() torch._int4_weight_only_linear(torch.randn(1, 64), p, s4, z4, 64) end, "_int4_weight_only_linear", "scales")
  T.raises(function() torch._int4_weight_only_linear(torch.randn(1, 64), p:to(torch.int8), s4, z4, 32) end, "_int4_weight_only_linear", "packed")
  T.raises(function() torch._int4_weight_only_linear(torch.randn(1, 64), p, s4, z4:double(), 32) end, "_int4_weight_only_linear", "zeros")
  T.raises(function() torch._int8_gemm_int32(w, w:float()) end, "_int8_gemm_int32", "'b'")
  T.raises(function() torch._int8_gemm_int32(w, torch.zeros(3, 5, { dtype = torch.int8 })) end, "_int8_gemm_int32", "same K")
  T.raises(function() ao.int4_weight_only({ group_size = 48 }) end, "int4_weight_only", "group_size", "48")
  T.raises(function() ao.int4_weight_only({ groupsize = 32 }) end, "int4_weight_only", "groupsize")
  T.raises(function() ao.int8_weight_only({ x = 1 }) end, "int8_weight_only", "x")
  T.raises(function() ao.quantize_(mlp(), "int8") end, "quantize_", "config")
  T.raises(function() ao.quantize_(mlp(), ao.int8_weight_only(), { filter = print }) end, "quantize_", "filter")
  T.raises(function() ao.quantize_(nn.Linear(48, 2), ao.int4_weight_only({ group_size = 32 })) end, "multiple of group_size")
  T.raises(function() ao.int4_weight_only({ padding = 1 }) end, "int4_weight_only", "padding")
  T.raises(function() ao.set_isa(3) end, "set_isa", "isa")
  -- meta tensors: the same checks, no data
  local xm = torch.empty(2, 4, { device = "meta" })
  local ym = torch._int8_weight_only_linear(xm, w:to("meta"), s:to("meta"))
  T.ok(ym.is_meta); T.eq(ym:size(), { 2, 3 })
  T.raises(function() torch._int8_weight_only_linear(torch.empty(2, 5, { device = "meta" }), w:to("meta"), s:to("meta")) end,
    "_int8_weight_only_linear", "input")
end)

------------------------------------------------------------------------------
-- Fashion-MNIST: a small MLP's accuracy after quantization
------------------------------------------------------------------------------
local FM = "/usr/share/datasets/fashion-mnist"
if io.open(FM .. "/t10k-labels-idx1-ubyte.gz") then
  T.test("Fashion-MNIST MLP: accuracy within 0.5 (int8) and 1.5 (int4) points of float32", function()
    local data = require "data"
    local function load(train)
      local ds = data.FashionMNIST(nil, { train = train })
      return ds.data:to(torch.float32):div_(255):view(-1, 784), ds.targets
    end
    local xtr, ytr = load(true)
    local xte, yte = load(false)
    torch.manual_seed(1)
    local model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    local opt = torch.optim.Adam(model:parameters(), { lr = 1e-3 })
    local n, bs = xtr:size(1), 128
    for _ = 1, 2 do
      local perm = torch.randperm(n)
      for i = 1, n - bs + 1, bs do
        local idx = perm:narrow(1, i, bs)
        local loss = nn.functional.cross_entropy(model(xtr:index_select(1, idx)), ytr:index_select(1, idx))
        opt:zero_grad(); loss:backward(); opt:step()
      end
    end
    local function accuracy(m)
      local pred = torch.no_grad(function() return m(xte):argmax(2) end)
      return pred:eq(yte):float():mean():item() * 100
    end
    local base = accuracy(model)
    T.ok(base > 80, "float32 accuracy " .. base)
    local report = { ("float32 %.2f"):format(base) }
    for _, c in ipairs({ { ao.int8_weight_only(), 0.5 }, { ao.int8_dynamic_activation_int8_weight(), 0.5 },
                         { ao.int4_weight_only({ group_size = 32, padding = true }), 1.5 } }) do
      local m = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
      m:load_state_dict(model:state_dict())
      ao.quantize_(m, c[1])
      local acc = accuracy(m)
      report[#report + 1] = ("%s %.2f"):format(c[1].name, acc)
      T.ok(math.abs(acc - base) <= c[2], ("%s: %.2f vs float32 %.2f"):format(tostring(c[1]), acc, base))
    end
    print("Fashion-MNIST test accuracy: " .. table.concat(report, ", "))
  end)
else
  T.skip("Fashion-MNIST MLP accuracy after quantization", "dataset-fashion-mnist is not installed (" .. FM .. ")")
end

T.done()
