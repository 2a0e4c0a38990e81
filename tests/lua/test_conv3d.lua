-- The volumetric ops (src/ops/nn_conv.lua, src/composite/nn_conv3d.c) and as_strided:
-- conv3d, conv_transpose1d/3d, max_pool3d, avg_pool3d, max_unpool2d/3d,
-- fractional_max_pool2d/3d, upsample_nearest3d/trilinear3d. Values and gradients
-- against PyTorch (one Python run), float64 gradchecks, argument errors, meta shapes,
-- and the nn classes and F forms over them.
local T = require "testing"
local P = require "pyref"
local nn = require "nn"
local F = nn.functional

local f64, f32 = torch.float64, torch.float32
local gc, ggc = torch.autograd.gradcheck, torch.autograd.gradgradcheck

local function rnd(dt, ...) return torch.randn(table.pack(...), { dtype = dt }) end
local function leaf(...) return torch.randn(table.pack(...), { dtype = f64, requires_grad = true }) end
-- a leaf that is not contiguous: its last two dims stored transposed
local function tleaf(...)
  local s = table.pack(...)
  s[#s], s[#s - 1] = s[#s - 1], s[#s]
  local t = torch.randn(s, { dtype = f64 }):transpose(-1, -2)
  t.requires_grad = true
  return t
end

---------------------------------------------------------------------------
-- against PyTorch: every case adds inputs, a Python snippet and Lua results
---------------------------------------------------------------------------
local cases, inputs, body, outputs = {}, {}, {}, {}

local function case(name, ins, lua, py, tol)
  local id = "c" .. (#cases + 1)
  local c = { name = name, tol = tol or 1e-9, first = #outputs + 1 }
  local src = py:gsub("{(%w+)}", function(k)
    if k:match("^%d+$") then return id .. "_r" .. k end
    return id .. "_" .. k
  end)
  body[#body + 1] = src
  local ok, res = pcall(lua, ins)
  for k, v in pairs(ins) do inputs[id .. "_" .. k] = v end
  c.res = ok and res or nil
  c.err = not ok and res or nil
  c.n = ok and #res or 0
  for i = 1, c.n do outputs[#outputs + 1] = id .. "_r" .. i end
  cases[#cases + 1] = c
end

local function bw(ins, y, name)
  ins[name] = torch.randn(y:size(), { dtype = f64 })
  y:backward(ins[name])
end

local function with_grads(f, names)
  return function(ins)
    local y = f(ins)
    local r = { y }
    bw(ins, y, "g")
    for _, n in ipairs(names) do r[#r + 1] = ins[n].grad end
    return r
  end
end

local function l64(...) return torch.randn(table.pack(...), { dtype = f64, requires_grad = true }) end

-- convolutions
case("conv3d with bias, grads", { x = l64(2, 3, 5, 4, 6), w = l64(4, 3, 2, 3, 2), b = l64(4) },
  with_grads(function(a) return torch.conv3d(a.x, a.w, a.b) end, { "x", "w", "b" }),
  "y = F.conv3d({x}, {w}, {b}); y.backward({g})\n{1}, {2}, {3}, {4} = y, {x}.grad, {w}.grad, {b}.grad")
case("conv3d stride/padding/dilation/groups, grads", { x = l64(2, 4, 6, 7, 5), w = l64(6, 2, 3, 2, 2), b = l64(6) },
  with_grads(function(a)
    return torch.conv3d(a.x, a.w, a.b, { stride = { 2, 1, 2 }, padding = { 1, 2, 0 }, dilation = { 1, 2, 2 }, groups = 2 })
  end, { "x", "w", "b" }),
  "y = F.conv3d({x}, {w}, {b}, stride=(2,1,2), padding=(1,2,0), dilation=(1,2,2), groups=2); y.backward({g})\n" ..
  "{1}, {2}, {3}, {4} = y, {x}.grad, {w}.grad, {b}.grad")
case("conv3d float32 unbatched, F.conv3d padding same", { x = rnd(f32, 3, 5, 6, 4), w = rnd(f32, 2, 3, 3, 3, 3),
  y = rnd(f64, 1, 2, 5, 5, 6), v = rnd(f64, 3, 2, 2, 3, 4) },
  function(a) return { torch.conv3d(a.x, a.w, nil, { padding = 1, stride = 2 }), F.conv3d(a.y, a.v, nil, 1, "same"),
                       F.conv3d(a.y, a.v, nil, 1, "valid") } end,
  "{1} = F.conv3d({x}, {w}, padding=1, stride=2)\n{2} = F.conv3d({y}, {v}, padding='same')\n" ..
  "{3} = F.conv3d({y}, {v}, padding='valid')", 1e-5)
case("conv_transpose3d stride/padding/output_padding/groups/dilation, grads",
  { x = l64(2, 4, 3, 4, 3), w = l64(4, 3, 3, 2, 3), b = l64(6) },
  with_grads(function(a)
    return torch.conv_transpose3d(a.x, a.w, a.b, { stride = { 2, 1, 3 }, padding = { 1, 0, 2 }, output_padding = { 1, 0, 1 },
                                                   groups = 2, dilation = { 1, 2, 1 } })
  end, { "x", "w", "b" }),
  "y = F.conv_transpose3d({x}, {w}, {b}, stride=(2,1,3), padding=(1,0,2), output_padding=(1,0,1), groups=2, dilation=(1,2,1)); " ..
  "y.backward({g})\n{1}, {2}, {3}, {4} = y, {x}.grad, {w}.grad, {b}.grad")
case("conv_transpose3d unbatched float32", { x = rnd(f32, 2, 3, 3, 2), w = rnd(f32, 2, 3, 2, 2, 2) },
  function(a) return { torch.conv_transpose3d(a.x, a.w, nil, 2) } end,
  "{1} = F.conv_transpose3d({x}, {w}, stride=2)", 1e-5)
case("conv_transpose1d, grads", { x = l64(2, 4, 5), w = l64(4, 3, 3), b = l64(6) },
  with_grads(function(a)
    return torch.conv_transpose1d(a.x, a.w, a.b, { stride = 2, padding = 1, output_padding = 1, groups = 2, dilation = 2 })
  end, { "x", "w", "b" }),
  "y = F.conv_transpose1d({x}, {w}, {b}, stride=2, padding=1, output_padding=1, groups=2, dilation=2); y.backward({g})\n" ..
  "{1}, {2}, {3}, {4} = y, {x}.grad, {w}.grad, {b}.grad")

-- pools: indices are PyTorch's plus one
case("max_pool3d with indices, padding/dilation/ceil_mode, grads", { x = l64(2, 2, 6, 7, 5) },
  function(a)
    local v, i = torch.max_pool3d_with_indices(a.x, { 3, 2, 2 }, { 2, 2, 1 }, { 1, 1, 0 }, { 1, 1, 2 }, true)
    bw(a, v, "g")
    return { v, i, a.x.grad }
  end,
  "v, i = F.max_pool3d({x}, (3,2,2), (2,2,1), (1,1,0), (1,1,2), ceil_mode=True, return_indices=True); v.backward({g})\n" ..
  "{1}, {2}, {3} = v, i + 1, {x}.grad")
case("max_pool3d unbatched float32, F", { x = rnd(f32, 3, 5, 5, 6) },
  function(a) local v, i = F.max_pool3d(a.x, 2, { return_indices = true }); return { v, i } end,
  "v, i = F.max_pool3d({x}, 2, return_indices=True)\n{1}, {2} = v, i + 1", 1e-6)
case("avg_pool3d ceil_mode, count_include_pad=false, grads", { x = l64(2, 2, 5, 6, 7) },
  with_grads(function(a)
    return torch.avg_pool3d(a.x, { 3, 2, 3 }, { 2, 2, 2 }, { 1, 1, 1 }, true, false)
  end, { "x" }),
  "y = F.avg_pool3d({x}, (3,2,3), (2,2,2), (1,1,1), ceil_mode=True, count_include_pad=False); y.backward({g})\n" ..
  "{1}, {2} = y, {x}.grad")
case("avg_pool3d count_include_pad, divisor_override, unbatched", { x = rnd(f64, 2, 5, 4, 5), y = rnd(f32, 1, 2, 4, 4, 4) },
  function(a) return { torch.avg_pool3d(a.x, 3, 2, 1), F.avg_pool3d(a.y, 2, { divisor_override = 3 }),
                       nn.AvgPool3d(3, { stride = 1, padding = 1, ceil_mode = true })(a.x) } end,
  "{1} = F.avg_pool3d({x}, 3, 2, 1)\n{2} = F.avg_pool3d({y}, 2, divisor_override=3)\n" ..
  "{3} = torch.nn.AvgPool3d(3, stride=1, padding=1, ceil_mode=True)({x})", 1e-6)
case("max_unpool2d / max_unpool3d, grads", { x = rnd(f64, 2, 3, 6, 5), y = rnd(f64, 2, 2, 4, 5, 6) },
  function(a)
    local v, i = F.max_pool2d(a.x, 2, { return_indices = true })
    v = v:detach():requires_grad_()
    local u = F.max_unpool2d(v, i, 2, { output_size = { 6, 5 } })
    bw(a, u, "g")
    local v3, i3 = F.max_pool3d(a.y, 3, { stride = 2, padding = 1, return_indices = true })
    a.v, a.i, a.v3, a.i3 = v:detach(), i, v3, i3
    return { u, v.grad, F.max_unpool3d(v3, i3, 3, 2, 1, { 4, 5, 6 }), F.max_unpool3d(v3, i3, 3, 2, 1, { 2, 2, 4, 5, 6 }) }
  end,
  "v = {v}.clone().requires_grad_()\nu = F.max_unpool2d(v, {i} - 1, 2, output_size=(6,5)); u.backward({g})\n" ..
  "{1}, {2} = u, v.grad\n{3} = F.max_unpool3d({v3}, {i3} - 1, 3, 2, 1, output_size=(4,5,6))\n" ..
  "{4} = F.max_unpool3d({v3}, {i3} - 1, 3, 2, 1, output_size=(2,2,4,5,6))")
case("fractional_max_pool2d, float64 and float32 samples, grads",
  { x = l64(2, 3, 9, 11), u = torch.rand({ 2, 3, 2 }, { dtype = f64 }), y = rnd(f32, 3, 10, 7), s = torch.rand({ 1, 3, 2 }) },
  function(a)
    local v, i = torch.fractional_max_pool2d(a.x, { 3, 2 }, { 4, 6 }, a.u)
    bw(a, v, "g")
    local v2, i2 = F.fractional_max_pool2d(a.y, 2, { output_size = { 6, 5 }, return_indices = true, _random_samples = a.s })
    return { v, i, a.x.grad, v2, i2 }
  end,
  "v, i = F.fractional_max_pool2d({x}, (3,2), output_size=(4,6), return_indices=True, _random_samples={u}); v.backward({g})\n" ..
  "{1}, {2}, {3} = v, i + 1, {x}.grad\n" ..
  "v2, i2 = F.fractional_max_pool2d({y}, 2, output_size=(6,5), return_indices=True, _random_samples={s})\n{4}, {5} = v2, i2 + 1",
  1e-6)
case("fractional_max_pool3d, grads", { x = l64(2, 2, 7, 8, 9), u = torch.rand({ 2, 2, 3 }, { dtype = f64 }),
  y = rnd(f32, 2, 6, 7, 5), s = torch.rand({ 1, 2, 3 }) },
  function(a)
    local v, i = torch.fractional_max_pool3d(a.x, { 2, 3, 2 }, { 4, 5, 3 }, a.u)
    bw(a, v, "g")
    local v2, i2 = torch.fractional_max_pool3d(a.y, 2, 3, a.s)
    return { v, i, a.x.grad, v2, i2 }
  end,
  "v, i = F.fractional_max_pool3d({x}, (2,3,2), output_size=(4,5,3), return_indices=True, _random_samples={u}); v.backward({g})\n" ..
  "{1}, {2}, {3} = v, i + 1, {x}.grad\n" ..
  "v2, i2 = F.fractional_max_pool3d({y}, 2, output_size=3, return_indices=True, _random_samples={s})\n{4}, {5} = v2, i2 + 1",
  1e-6)

-- 3-D resampling
case("interpolate 5-D nearest / trilinear, grads", { x = l64(1, 2, 3, 4, 5), y = rnd(f32, 2, 1, 4, 3, 5) },
  function(a)
    local v = F.interpolate(a.x, { size = { 5, 7, 4 }, mode = "trilinear" })
    bw(a, v, "g")
    return { v, a.x.grad,
             F.interpolate(a.y, { scale_factor = { 1.5, 2.3, 0.6 }, mode = "nearest" }),
             F.interpolate(a.y, { scale_factor = 1.7, mode = "trilinear" }),
             F.interpolate(a.y, { size = { 6, 5, 9 }, mode = "trilinear", align_corners = true }),
             F.interpolate(a.y, { size = { 7, 2, 8 } }),
             nn.Upsample({ scale_factor = 2, mode = "nearest" })(a.y) }
  end,
  "v = F.interpolate({x}, size=(5,7,4), mode='trilinear'); v.backward({g})\n{1}, {2} = v, {x}.grad\n" ..
  "{3} = F.interpolate({y}, scale_factor=(1.5, 2.3, 0.6), mode='nearest')\n" ..
  "{4} = F.interpolate({y}, scale_factor=1.7, mode='trilinear')\n" ..
  "{5} = F.interpolate({y}, size=(6,5,9), mode='trilinear', align_corners=True)\n" ..
  "{6} = F.interpolate({y}, size=(7,2,8))\n" ..
  "{7} = torch.nn.Upsample(scale_factor=2, mode='nearest')({y})", 1e-5)

-- as_strided: an absolute, 0-based storage offset, as PyTorch
case("as_strided values and gradient", { x = l64(4, 5) },
  function(a)
    local base = a.x * 1
    local y = torch.as_strided(base, { 3, 3 }, { 4, 2 }, 1)
    bw(a, y, "g")
    local z = a.x:detach():t():as_strided({ 2, 4 }, { 1, 5 })
    return { y, a.x.grad, z }
  end,
  "base = {x} * 1\ny = torch.as_strided(base, (3,3), (4,2), 1); y.backward({g})\n{1}, {2} = y, {x}.grad\n" ..
  "{3} = {x}.detach().t().as_strided((2,4), (1,5))")

if not P.available() then
  T.skip("values against PyTorch", P.why())
else
  for _, c in ipairs(cases) do
    if c.err then body[_] = "pass" end
  end
  table.insert(body, 1, "import warnings; warnings.filterwarnings('ignore')")
  local ref = P.run(inputs, table.concat(body, "\n"), outputs)
  for _, c in ipairs(cases) do
    T.test(c.name .. " (against PyTorch)", function()
      if c.err then error(c.err) end
      for i = 1, c.n do
        local got, want = c.res[i], ref[c.first + i - 1]
        T.eq(got:size(), want:size(), "result " .. i .. " shape")
        local d = (got:to(f64) - want):abs():max():item()
        T.ok(d <= c.tol * (1 + want:abs():max():item()), ("result %d differs by %g"):format(i, d))
      end
    end)
  end
end

---------------------------------------------------------------------------
-- gradcheck (float64), non-contiguous inputs included
---------------------------------------------------------------------------
T.test("gradcheck conv3d, conv_transpose3d, conv_transpose1d", function()
  T.ok(gc(function(x, w, b) return torch.conv3d(x, w, b, { stride = { 2, 1, 1 }, padding = 1, dilation = { 1, 1, 2 }, groups = 2 }) end,
          { tleaf(1, 2, 3, 3, 4), leaf(2, 1, 2, 2, 2), leaf(2) }))
  T.ok(gc(function(x, w) return torch.conv3d(x, w, nil, 1, "same") end, { leaf(1, 3, 3, 2), tleaf(2, 1, 2, 1, 2) }))
  T.ok(gc(function(x, w, b)
    return torch.conv_transpose3d(x, w, b, { stride = 2, padding = { 1, 0, 0 }, output_padding = { 1, 0, 1 } })
  end, { tleaf(1, 2, 2, 2, 2), leaf(2, 1, 2, 2, 1), leaf(1) }))
  T.ok(gc(function(x, w) return torch.conv_transpose1d(x, w, nil, { stride = 2, padding = 1 }) end,
          { tleaf(2, 2, 3), leaf(2, 2, 3) }))
  T.ok(ggc(function(x, w) return torch.conv3d(x, w, nil, 2, 1) end, { leaf(1, 1, 3, 3, 3), leaf(1, 1, 2, 2, 2) }))
end)

T.test("gradcheck 3-D pools, unpools, fractional pools", function()
  T.ok(gc(function(x) return torch.max_pool3d(x, 2, { 1, 2, 1 }, 1, 1, true) end, { tleaf(1, 2, 3, 4, 3) }))
  T.ok(gc(function(x) return torch.max_pool3d(x, 2, nil, 0, 2) end, { leaf(2, 3, 4, 3) }))
  T.ok(gc(function(x) return torch.avg_pool3d(x, 2, 1, 1, true, false) end, { tleaf(1, 1, 3, 2, 3) }))
  T.ok(gc(function(x) return torch.avg_pool3d(x, { 2, 1, 2 }, nil, 0, false, true, 3) end, { leaf(2, 2, 3, 4) }))
  local _, i2 = torch.max_pool2d_with_indices(rnd(f64, 2, 4, 4), 2)
  T.ok(gc(function(x) return torch.max_unpool2d(x, i2, { 4, 4 }) end, { leaf(2, 2, 2) }))
  local _, i3 = torch.max_pool3d_with_indices(rnd(f64, 1, 1, 4, 4, 3), 2)
  T.ok(gc(function(x) return torch.max_unpool3d(x, i3, { 4, 4, 3 }, 2, 0) end, { leaf(1, 1, 2, 2, 1) }))
  local u = torch.rand({ 1, 2, 2 }, { dtype = f64 })
  T.ok(gc(function(x) return (torch.fractional_max_pool2d(x, 2, { 3, 3 }, u)) end, { tleaf(1, 2, 5, 6) }))
  local u3 = torch.rand({ 1, 1, 3 }, { dtype = f64 })
  T.ok(gc(function(x) return (torch.fractional_max_pool3d(x, 2, { 2, 3, 2 }, u3)) end, { leaf(1, 4, 5, 4) }))
  T.ok(ggc(function(x) return torch.max_pool3d(x, 2) end, { leaf(1, 1, 2, 2, 4) }))
end)

T.test("gradcheck 3-D upsampling and as_strided", function()
  T.ok(gc(function(x) return torch.upsample_nearest3d(x, { 3, 5, 2 }) end, { tleaf(1, 1, 2, 3, 4) }))
  T.ok(gc(function(x) return torch.upsample_trilinear3d(x, { 3, 5, 2 }) end, { tleaf(1, 2, 2, 3, 4) }))
  T.ok(gc(function(x) return torch.upsample_trilinear3d(x, { 4, 2, 3 }, true, 0, 0, 0) end, { leaf(1, 1, 2, 3, 2) }))
  T.ok(gc(function(x) return torch.upsample_trilinear3d(x, { 3, 5, 6 }, false, 1.7, 1.9, 2.1) end, { leaf(1, 1, 2, 3, 3) }))
  -- overlapping windows of the view accumulate; an expanded input shares its gradient
  T.ok(gc(function(x) return torch.as_strided(x * 1, { 3, 3 }, { 2, 1 }, 1) end, { leaf(9) }))
  T.ok(gc(function(x) return torch.as_strided(x, { 2, 2 }, { 1, 3 }) end, { tleaf(3, 4) }))
  T.ok(ggc(function(x) return torch.as_strided(x * 1, { 2, 3 }, { 1, 2 }, 2) end, { leaf(8) }))
end)

---------------------------------------------------------------------------
-- the CPU's conv3d kernels (src/cpu/nn_conv3d.c): against a reference built from
-- conv2d (one conv2d per depth tap, summed), values and all three gradients, in
-- float64 and float32, over the paths the kernels choose: stride 1 (padded-volume
-- columns; the input gradient as the transposed conv, or scattered back when the
-- padding exceeds the kernel's reach), one tap, strided, several column chunks
---------------------------------------------------------------------------
-- conv3d(x, w, b, s, p, d, g) as conv2d over each output depth plane: differentiable,
-- so its gradients are the reference gradients
local function conv3d_ref(x, w, b, s, p, d, g)
  local od = math.floor((x:size(3) + 2 * p[1] - d[1] * (w:size(3) - 1) - 1) / s[1]) + 1
  local xp = F.pad(x, { 0, 0, 0, 0, p[1], p[1] })
  local planes = {}
  for o = 1, od do
    local acc
    for kd = 1, w:size(3) do
      local z = torch.conv2d(xp:select(3, (o - 1) * s[1] + (kd - 1) * d[1] + 1), w:select(3, kd), nil,
                             { s[2], s[3] }, { p[2], p[3] }, { d[2], d[3] }, g)
      acc = acc and acc + z or z
    end
    planes[o] = acc
  end
  local y = torch.stack(planes, 3)
  return b and y + b:view(1, -1, 1, 1, 1) or y
end

-- (name, x shape, w shape, stride, padding, dilation, groups, bias)
local geometries = {
  { "3x3x3 pad 1", { 2, 4, 5, 6, 7 }, { 3, 4, 3, 3, 3 }, { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1 }, 1, true },
  { "odd kernel, uneven padding, dilation, groups", { 2, 4, 6, 5, 7 }, { 6, 2, 2, 3, 2 }, { 1, 1, 1 },
    { 0, 2, 1 }, { 2, 1, 2 }, 2, true },
  { "padding beyond the kernel's reach", { 1, 3, 4, 5, 4 }, { 2, 3, 2, 2, 3 }, { 1, 1, 1 }, { 2, 1, 3 },
    { 1, 1, 1 }, 1, false },
  { "one tap (1x1x1)", { 2, 6, 3, 4, 5 }, { 4, 6, 1, 1, 1 }, { 1, 1, 1 }, { 0, 0, 0 }, { 1, 1, 1 }, 1, true },
  { "one tap, padded", { 1, 3, 3, 2, 4 }, { 2, 3, 1, 1, 1 }, { 1, 1, 1 }, { 1, 0, 2 }, { 1, 1, 1 }, 1, false },
  { "stride 2", { 2, 4, 7, 8, 6 }, { 5, 4, 3, 3, 3 }, { 2, 2, 2 }, { 1, 1, 1 }, { 1, 1, 1 }, 1, true },
  { "mixed strides, dilation, groups", { 2, 6, 7, 6, 9 }, { 4, 3, 2, 3, 2 }, { 2, 1, 3 }, { 1, 0, 2 },
    { 1, 2, 2 }, 2, true },
  { "stride 3, no padding, odd sizes", { 1, 2, 8, 7, 9 }, { 3, 2, 3, 2, 3 }, { 3, 3, 2 }, { 0, 0, 0 },
    { 1, 1, 1 }, 1, true },
  -- the direct vector loops (rows of a vector or more, 4 and 8 filters a block): rows that
  -- end in an overlapping vector, an odd number of rows, overlapping filter and tap blocks
  { "direct loops: long rows, 10 filters, odd rows", { 2, 9, 3, 5, 37 }, { 10, 9, 3, 3, 3 }, { 1, 1, 1 },
    { 1, 1, 1 }, { 1, 1, 1 }, 1, true },
  { "direct loops: dilation, groups, uneven padding", { 1, 16, 4, 6, 21 }, { 16, 8, 2, 3, 3 }, { 1, 1, 1 },
    { 0, 1, 2 }, { 2, 1, 2 }, 2, true },
  { "direct loops: one channel, 27 taps", { 2, 1, 4, 4, 40 }, { 8, 1, 3, 3, 3 }, { 1, 1, 1 }, { 1, 1, 1 },
    { 1, 1, 1 }, 1, false },
  { "many channels: several column chunks", { 1, 32, 6, 9, 8 }, { 8, 32, 3, 3, 3 }, { 1, 1, 1 }, { 1, 1, 1 },
    { 1, 1, 1 }, 1, true },
  { "many channels strided: several chunks", { 1, 32, 9, 12, 10 }, { 8, 32, 3, 3, 3 }, { 2, 1, 2 }, { 1, 1, 1 },
    { 1, 1, 1 }, 1, false },
}

for _, gm in ipairs(geometries) do
  local name, xs, ws, s, p, d, g, hasb = table.unpack(gm)
  T.test("conv3d kernels against conv2d: " .. name, function()
    local x0, w0 = torch.randn(xs, { dtype = f64 }), torch.randn(ws, { dtype = f64 })
    local b0 = hasb and torch.randn({ ws[1] }, { dtype = f64 }) or nil
    -- the reference's values and gradients, in float64
    local xr, wr = x0:clone():requires_grad_(), w0:clone():requires_grad_()
    local br = b0 and b0:clone():requires_grad_() or nil
    local yr = conv3d_ref(xr, wr, br, s, p, d, g)
    local gy = torch.randn(yr:size(), { dtype = f64 })
    yr:backward(gy)
    for _, dt in ipairs({ f64, f32 }) do
      local tol = dt == f64 and 1e-10 or 2e-4
      local x, w = x0:to(dt):detach():requires_grad_(), w0:to(dt):detach():requires_grad_()
      local b = b0 and b0:to(dt):detach():requires_grad_() or nil
      local y = torch.conv3d(x, w, b, s, p, d, g)
      T.eq(y.dtype, dt)
      y:backward(gy:to(dt))
      local function close(got, want, what)
        T.eq(got:size(), want:size(), what .. " shape")
        local e = (got:to(f64) - want):abs():max():item()
        T.ok(e <= tol * (1 + want:abs():max():item()), ("%s %s differs by %g"):format(tostring(dt), what, e))
      end
      close(y, yr, "output")
      close(x.grad, xr.grad, "input gradient")
      close(w.grad, wr.grad, "weight gradient")
      if b then close(b.grad, br.grad, "bias gradient") end
    end
  end)
end

T.test("conv3d kernels: unbatched, non-contiguous, empty batch, no input channels", function()
  local x, w = rnd(f64, 3, 4, 5, 6), rnd(f64, 2, 3, 3, 3, 3)
  local y = torch.conv3d(x, w, nil, 1, 1)
  T.eq(y:size(), { 2, 4, 5, 6 })
  T.ok((y - torch.conv3d(x:unsqueeze(1), w, nil, 1, 1):squeeze(1)):abs():max():item() < 1e-12)
  local xt = rnd(f64, 1, 3, 6, 5, 4):transpose(3, 5)   -- (1, 3, 4, 5, 6), strided
  T.ok((torch.conv3d(xt, w, nil, 2, 1) - torch.conv3d(xt:contiguous(), w, nil, 2, 1)):abs():max():item() < 1e-12)
  local e = torch.conv3d(rnd(f32, 0, 3, 4, 4, 4), rnd(f32, 2, 3, 3, 3, 3), rnd(f32, 2), 1, 1)
  T.eq(e:size(), { 0, 2, 4, 4, 4 })
  local z = torch.conv3d(rnd(f32, 2, 0, 4, 4, 4), rnd(f32, 2, 0, 3, 3, 3), torch.tensor({ 1.5, -2 }), 1, 1)
  T.tensor(z:select(2, 1), torch.full({ 2, 4, 4, 4 }, 1.5):totable())
  T.tensor(z:select(2, 2), torch.full({ 2, 4, 4, 4 }, -2):totable())
  local gx = torch.conv3d_backward_input(rnd(f32, 0, 2, 4, 4, 4), rnd(f32, 2, 3, 3, 3, 3), { 0, 3, 4, 4, 4 }, 1, 1)
  T.eq(gx:size(), { 0, 3, 4, 4, 4 })
  local gw = torch.conv3d_backward_weight(rnd(f32, 0, 2, 4, 4, 4), rnd(f32, 0, 3, 4, 4, 4), { 2, 3, 3, 3, 3 }, 1, 1)
  T.tensor(gw, torch.zeros(2, 3, 3, 3, 3):totable())
end)

T.test("gradcheck the conv3d kernels and their backward ops (float64)", function()
  -- stride 1 with bias (the padded-volume path), strided with groups, padding beyond reach
  T.ok(gc(function(x, w, b) return torch.conv3d(x, w, b, 1, 1) end,
          { tleaf(1, 2, 3, 4, 3), leaf(2, 2, 3, 2, 3), leaf(2) }))
  T.ok(gc(function(x, w, b) return torch.conv3d(x, w, b, { 2, 1, 2 }, { 0, 1, 1 }, { 1, 2, 1 }, 2) end,
          { leaf(2, 4, 4, 5, 4), tleaf(2, 2, 2, 2, 2), leaf(2) }))
  T.ok(gc(function(x, w) return torch.conv3d(x, w, nil, 1, { 2, 0, 1 }) end, { leaf(1, 1, 2, 3, 2), leaf(2, 1, 2, 2, 1) }))
  -- the backward ops themselves, in each argument (their derivatives: double backward)
  local xs = { 1, 2, 4, 3, 4 }
  T.ok(gc(function(gy, w) return torch.conv3d_backward_input(gy, w, xs, 1, 1) end,
          { leaf(1, 3, 4, 3, 4), leaf(3, 2, 3, 3, 3) }))
  T.ok(gc(function(gy, w) return torch.conv3d_backward_input(gy, w, { 1, 2, 5, 4, 5 }, 2, 1) end,
          { leaf(1, 3, 3, 3, 3), tleaf(3, 2, 3, 2, 3) }))
  T.ok(gc(function(gy, x) return torch.conv3d_backward_weight(gy, x, { 3, 2, 3, 3, 3 }, 1, 1) end,
          { leaf(1, 3, 4, 3, 4), leaf(table.unpack(xs)) }))
  T.ok(gc(function(gy, x) return torch.conv3d_backward_weight(gy, x, { 4, 1, 2, 2, 2 }, 2, 0, 1, 2) end,
          { leaf(2, 4, 2, 2, 2), tleaf(2, 2, 5, 4, 4) }))
  T.ok(ggc(function(x, w, b) return torch.conv3d(x, w, b, 1, 1) end, { leaf(1, 2, 3, 3, 2), leaf(2, 2, 2, 3, 2), leaf(2) }))
  T.ok(ggc(function(x, w) return torch.conv3d(x, w, nil, 2, 1, 1, 2) end, { leaf(1, 2, 3, 4, 3), leaf(2, 1, 2, 2, 2) }))
end)

T.test("conv3d backward ops: argument errors", function()
  local gy, w, x = rnd(f32, 1, 3, 4, 4, 4), rnd(f32, 3, 2, 3, 3, 3), rnd(f32, 1, 2, 4, 4, 4)
  local bi, bw_ = torch.conv3d_backward_input, torch.conv3d_backward_weight
  T.raises(function() bi(gy, w, { 1, 2, 4, 4, 5 }, 1, 1) end, "conv3d_backward_input", "'grad_output'", "shape")
  T.raises(function() bi(gy, w, { 2, 4, 4 }, 1, 1) end, "conv3d_backward_input", "'input_size'", "4 or 5")
  T.raises(function() bi(gy, w, { 1, 2, -4, 4, 4 }, 1, 1) end, "conv3d_backward_input", "'input_size'", "negative")
  T.raises(function() bi(gy, w, { 1, 3, 4, 4, 4 }, 1, 1) end, "conv3d_backward_input", "'weight'", "channels")
  T.raises(function() bi(gy, w:double(), { 1, 2, 4, 4, 4 }, 1, 1) end, "conv3d_backward_input", "'weight'", "dtype")
  T.raises(function() bi(gy:long(), w:long(), { 1, 2, 4, 4, 4 }, 1, 1) end, "conv3d_backward_input", "'grad_output'",
           "floating point")
  T.raises(function() bi(gy, w, { 1, 2, 4, 4, 4 }, 0, 1) end, "conv3d_backward_input", "'stride'", "positive")
  T.raises(function() bi(gy, w, { 1, 2, 4, 4, 4 }, 1, 1, 1, 0) end, "conv3d_backward_input", "'groups'", "positive")
  T.raises(function() bi(gy, rnd(f32, 3, 2, 3, 3), { 1, 2, 4, 4, 4 }, 1, 1) end, "conv3d_backward_input", "'weight'", "5-D")
  T.raises(function() bi(gy, w, { 1, 2, 1, 4, 4 }, 1, 0) end, "conv3d_backward_input", "'input'", "smaller")
  T.raises(function() bw_(gy, x, { 3, 2, 3, 3 }, 1, 1) end, "conv3d_backward_weight", "'weight_size'", "5 entries")
  T.raises(function() bw_(gy, x, { 3, 2, 3, -3, 3 }, 1, 1) end, "conv3d_backward_weight", "'weight_size'", "negative")
  T.raises(function() bw_(gy, x, { 3, 2, 3, 3, 3 }, 2, 1) end, "conv3d_backward_weight", "'grad_output'", "shape")
  T.raises(function() bw_(gy, x:double(), { 3, 2, 3, 3, 3 }, 1, 1) end, "conv3d_backward_weight", "'input'", "dtype")
  T.raises(function() bw_(gy, x, { 3, 4, 3, 3, 3 }, 1, 1) end, "conv3d_backward_weight", "'weight_size'", "channels")
  T.raises(function() bw_(gy, x, { 3, 2, 3, 3, 3 }, 1, { 1, 1 }) end, "conv3d_backward_weight", "'padding'")
  T.raises(function() bw_(gy, rnd(f32, 2, 4, 4), { 3, 2, 3, 3, 3 }, 1, 1) end, "conv3d_backward_weight", "'input'", "4-D")
end)

---------------------------------------------------------------------------
-- small exact cases
---------------------------------------------------------------------------
T.test("max_pool3d indices are 1-based volume positions", function()
  local x = torch.zeros(1, 2, 2, 3, { dtype = f64 })
  x[1][2][2][3] = 5   -- (d=2, h=2, w=3): position 1*6 + 1*3 + 2 + 1 = 12
  local v, i = torch.max_pool3d_with_indices(x, { 2, 2, 3 })
  T.tensor(v, { { { { 5 } } } })
  T.tensor(i, { { { { 12 } } } }, { dtype = "int64" })
  T.tensor(torch.max_unpool3d(v, i, { 2, 2, 3 }, 1, 0), x:totable())
end)

T.test("as_strided: views, offsets, bounds", function()
  local x = torch.arange(12.)
  local y = torch.as_strided(x, { 2, 3 }, { 3, 1 }, 4)
  T.tensor(y, { { 4, 5, 6 }, { 7, 8, 9 } })
  y:fill_(0)   -- a view: writes go through
  T.eq(x[5], 0)
  local n = x:narrow(1, 3, 4)
  T.tensor(n:as_strided({ 2 }, { 1 }), { 2, 3 })   -- absent offset: the input's own
  T.eq(torch.as_strided(x, { 0, 5 }, { 100, 100 }, 11):numel(), 0)   -- empty: nothing reached
  T.raises(function() torch.as_strided(x, { 4, 4 }, { 4, 1 }) end, "as_strided", "out of bounds")
  T.raises(function() torch.as_strided(x, { 2 }, { 1 }, 11) end, "as_strided", "out of bounds")
  T.raises(function() torch.as_strided(x, { 2, 2 }, { 1 }) end, "as_strided", "'stride'")
  T.raises(function() torch.as_strided(x, { 2 }, { -1 }) end, "as_strided", "'stride'")
  T.raises(function() torch.as_strided(x, { -2 }, { 1 }) end, "as_strided", "'size'")
  T.raises(function() torch.as_strided(x, { 2 }, { 1 }, -1) end, "as_strided", "'storage_offset'")
end)

T.test("meta device: shapes of the volumetric ops", function()
  local function both(f, ...)
    local args, margs = table.pack(...), {}
    for i = 1, args.n do
      margs[i] = torch.is_tensor(args[i]) and args[i]:to("meta") or args[i]
    end
    local c = table.pack(f(table.unpack(args, 1, args.n)))
    local m = table.pack(f(table.unpack(margs, 1, args.n)))
    for i = 1, c.n do
      T.eq(m[i].device.type, "meta")
      T.eq(m[i]:size(), c[i]:size())
      T.eq(m[i].dtype, c[i].dtype)
    end
  end
  local x, w = rnd(f32, 2, 4, 5, 6, 7), rnd(f32, 6, 2, 3, 2, 3)
  both(function(a, b) return torch.conv3d(a, b, nil, 2, 1, 1, 2) end, x, w)
  both(function(a, b) return torch.conv_transpose3d(a, b, nil, 2, 1, 1) end, x, rnd(f32, 4, 3, 3, 3, 3))
  both(function(a, b) return torch.conv_transpose1d(a, b, nil, 2) end, rnd(f32, 2, 3, 5), rnd(f32, 3, 2, 3))
  both(function(a) return torch.max_pool3d_with_indices(a, 2, nil, 1, 1, true) end, x)
  both(function(a) return torch.avg_pool3d(a, 3, 2, 1) end, x)
  local v, i = torch.max_pool3d_with_indices(x, 2)
  both(function(a, b) return torch.max_unpool3d(a, b, { 5, 6, 7 }, 2, 0) end, v, i)
  both(function(a, b) return torch.fractional_max_pool2d(a, 2, { 3, 4 }, b) end, rnd(f32, 2, 3, 6, 7), torch.rand(2, 3, 2))
  both(function(a, b) return torch.fractional_max_pool3d(a, 2, 3, b) end, x, torch.rand(2, 4, 3))
  both(function(a) return torch.upsample_trilinear3d(a, { 3, 8, 9 }) end, x)
  both(function(a) return torch.upsample_nearest3d(a, { 3, 8, 9 }) end, x)
  both(function(a) return torch.as_strided(a, { 3, 2 }, { 2, 5 }, 3) end, rnd(f32, 4, 5))
end)

---------------------------------------------------------------------------
-- errors name the op and the argument
---------------------------------------------------------------------------
T.test("argument errors", function()
  local x, w = rnd(f32, 1, 4, 5, 5, 5), rnd(f32, 2, 4, 3, 3, 3)
  T.raises(function() torch.conv3d(x, rnd(f32, 2, 4, 3, 3)) end, "conv3d", "'weight'", "5-D")
  T.raises(function() torch.conv3d(rnd(f32, 4, 5, 5), w) end, "conv3d", "'input'", "5-D")
  T.raises(function() torch.conv3d(x, w, nil, 1, 0, 1, 3) end, "conv3d", "'weight'", "groups")
  T.raises(function() torch.conv3d(x, rnd(f32, 2, 3, 3, 3, 3)) end, "conv3d", "'weight'", "channels")
  T.raises(function() torch.conv3d(x, w:double()) end, "conv3d", "'weight'", "dtype")
  T.raises(function() torch.conv3d(x:long(), w:long()) end, "conv3d", "'input'", "floating point")
  T.raises(function() torch.conv3d(x, w, nil, 0) end, "conv3d", "'stride'", "positive")
  T.raises(function() torch.conv3d(x, w, nil, { 1, 2 }) end, "conv3d", "'stride'")
  T.raises(function() torch.conv3d(x, w, nil, 1, -1) end, "conv3d", "'padding'")
  T.raises(function() torch.conv3d(x, w, rnd(f32, 3)) end, "conv3d", "'bias'")
  T.raises(function() torch.conv3d(rnd(f32, 1, 4, 2, 5, 5), w) end, "conv3d", "'input'", "smaller")
  T.raises(function() torch.conv3d(x, w, nil, 2, "same") end, "conv3d", "'same'", "strided")
  T.raises(function() torch.conv_transpose3d(x, rnd(f32, 4, 2, 3, 3, 3), nil, 1, 0, 1) end, "conv_transpose3d", "'output_padding'")
  T.raises(function() torch.conv_transpose3d(x, rnd(f32, 3, 2, 3, 3, 3)) end, "conv_transpose3d", "'weight'", "channels")
  T.raises(function() torch.conv_transpose1d(rnd(f32, 2, 3, 5), rnd(f32, 3, 2, 2, 2)) end, "conv_transpose1d", "'weight'")
  T.raises(function() torch.max_pool3d(x, 2, nil, 2) end, "max_pool3d", "'padding'")
  T.raises(function() torch.max_pool3d(rnd(f32, 5, 5, 5), 2) end, "max_pool3d", "'input'", "4-D")
  T.raises(function() torch.max_pool3d(x, 0) end, "max_pool3d", "'kernel_size'")
  T.raises(function() torch.max_pool3d(x, 2, 0) end, "max_pool3d", "'stride'")
  T.raises(function() torch.max_pool3d(x, 6) end, "max_pool3d", "'input'", "too small")
  T.raises(function() torch.max_pool3d(x:long(), 2) end, "max_pool3d", "'input'")
  T.raises(function() torch.avg_pool3d(x, 2, nil, 0, false, true, 0) end, "avg_pool3d", "'divisor_override'")
  T.raises(function() torch.avg_pool3d(x, { 2, 2 }) end, "avg_pool3d", "'kernel_size'")
  local v, i = torch.max_pool3d_with_indices(x, 2)
  T.raises(function() torch.max_unpool3d(v, i, { 3, 3, 3 }, 2, 0) end, "max_unpool3d", "'indices'", "out of range")
  T.raises(function() torch.max_unpool3d(v, i:narrow(1, 1, 1):squeeze(1), { 5, 5, 5 }, 2, 0) end, "max_unpool3d", "'indices'")
  T.raises(function() torch.max_unpool3d(v, i:double(), { 5, 5, 5 }, 2, 0) end, "max_unpool3d", "'indices'", "int64")
  T.raises(function() torch.max_unpool3d(v, i, { 5, 5 }, 2, 0) end, "max_unpool3d", "'output_size'")
  T.raises(function() torch.max_unpool3d(v, i, { 5, 5, 5 }, 0, 0) end, "max_unpool3d", "'stride'")
  local v2, i2 = torch.max_pool2d_with_indices(rnd(f32, 2, 3, 4, 4), 2)
  T.raises(function() torch.max_unpool2d(v2, i2 + 20, { 4, 4 }) end, "max_unpool2d", "'indices'", "out of range")
  T.raises(function() torch.max_unpool2d(v2, i2 - 1, { 4, 4 }) end, "max_unpool2d", "'indices'", "out of range")
  T.raises(function() torch.max_unpool2d(v2:view(-1), i2:view(-1), { 4, 4 }) end, "max_unpool2d", "'input'")
  local y = rnd(f32, 2, 3, 8, 8)
  T.raises(function() torch.fractional_max_pool2d(y, 2, { 4, 4 }, torch.rand(2, 3, 3)) end,
           "fractional_max_pool2d", "'random_samples'", "shape")
  T.raises(function() torch.fractional_max_pool2d(y, 2, { 4, 4 }, torch.rand(1, 3, 2)) end,
           "fractional_max_pool2d", "'random_samples'")
  T.raises(function() torch.fractional_max_pool2d(y, 2, { 4, 4 }, torch.rand(2, 3, 2) + 1) end,
           "fractional_max_pool2d", "'random_samples'", "[0, 1)")
  T.raises(function() torch.fractional_max_pool2d(y, 3, { 7, 4 }, torch.rand(2, 3, 2)) end,
           "fractional_max_pool2d", "'output_size'")
  T.raises(function() torch.fractional_max_pool2d(y, 0, { 4, 4 }, torch.rand(2, 3, 2)) end,
           "fractional_max_pool2d", "'kernel_size'")
  T.raises(function() torch.fractional_max_pool3d(rnd(f32, 8, 8), 2, 2, torch.rand(1, 8, 3)) end, "fractional_max_pool3d", "'input'")
  T.raises(function() torch.upsample_trilinear3d(y, { 2, 2, 2 }) end, "upsample_trilinear3d", "'input'", "5-D")
  T.raises(function() torch.upsample_nearest3d(x, { 2, 0, 2 }) end, "upsample_nearest3d", "'output_size'")
  T.raises(function() F.interpolate(x, { size = 3, mode = "bilinear" }) end, "interpolate", "bilinear")
  T.raises(function() F.fractional_max_pool2d(y, 2) end, "fractional_max_pool2d", "output_size")
  T.raises(function() nn.FractionalMaxPool3d(2, { output_ratio = 1.5 }) end, "FractionalMaxPool3d", "output_ratio")
  T.raises(function() nn.Conv3d(4, 2, 3)(rnd(f32, 1, 3, 5, 5, 5)) end, "Conv3d", "channels")
  T.raises(function() nn.MaxPool3d(2)(rnd(f32, 5, 5)) end, "MaxPool3d", "4-D")
end)

---------------------------------------------------------------------------
-- the nn classes
---------------------------------------------------------------------------
T.test("nn classes: shapes, parameters, repr", function()
  local x = rnd(f32, 2, 3, 6, 7, 8)
  local c = nn.Conv3d(3, 4, { 3, 2, 3 }, { stride = 2, padding = 1, bias = false })
  T.eq(c.weight:size(), { 4, 3, 3, 2, 3 })
  T.eq(c.bias, nil)
  T.eq(c(x):size(), { 2, 4, 3, 4, 4 })
  T.ok(tostring(c):find("Conv3d%(3, 4, kernel_size=%(3, 2, 3%), stride=%(2, 2, 2%)"))
  local r = nn.Conv3d(3, 2, 3, { padding = 1, padding_mode = "replicate" })
  T.eq(r(x):size(), { 2, 2, 6, 7, 8 })
  local ct = nn.ConvTranspose3d(3, 4, 3, { stride = 2, groups = 1 })
  T.eq(ct.weight:size(), { 3, 4, 3, 3, 3 })
  T.eq(ct(x):size(), { 2, 4, 13, 15, 17 })
  T.eq(ct(x, { 14, 16, 18 }):size(), { 2, 4, 14, 16, 18 })
  T.raises(function() ct(x, { 20, 16, 18 }) end, "ConvTranspose3d", "output size")
  local c1 = nn.ConvTranspose1d(3, 2, 3, { stride = 2 })
  T.eq(c1(rnd(f32, 2, 3, 5)):size(), { 2, 2, 11 })
  local mp = nn.MaxPool3d(2, { return_indices = true })
  local v, i = mp(x)
  T.eq(v:size(), { 2, 3, 3, 3, 4 })
  local up = nn.MaxUnpool3d(2)
  local back = up(v, i, x:size())
  T.eq(back:size(), x:size())
  T.ok((back - x * back:ne(0)):abs():max():item() == 0)   -- every kept value at its place
  T.eq(nn.AvgPool3d(2, { stride = 1 })(x):size(), { 2, 3, 5, 6, 7 })
  local fp = nn.FractionalMaxPool2d(3, { output_ratio = { 0.5, 0.7 } })
  T.eq(fp(rnd(f32, 2, 3, 10, 10)):size(), { 2, 3, 5, 7 })
  local fp3 = nn.FractionalMaxPool3d(2, { output_size = 3, return_indices = true })
  local fv, fi = fp3(x)
  T.eq(fv:size(), { 2, 3, 3, 3, 3 })
  T.eq(fi.dtype, torch.int64)
  local u2 = nn.MaxUnpool2d(2, { stride = 2 })
  local p2, i2 = F.max_pool2d(rnd(f32, 1, 2, 4, 6), 2, { return_indices = true })
  T.eq(u2(p2, i2):size(), { 1, 2, 4, 6 })
end)

-- the direct loops' register blocks (rows, filters, vector columns) end in partial blocks:
-- random shapes, values and both gradients against conv2d summed over depth slices
T.test("conv3d: random shapes against conv2d over depth slices (values, input and weight gradients)", function()
  torch.manual_seed(1)
  math.randomseed(1)
  for trial = 1, 30 do
    local N, cg, g, og = math.random(1, 2), math.random(1, 12), math.random(1, 2), math.random(1, 9)
    local kd, kh, kw = math.random(1, 3), math.random(1, 3), math.random(1, 3)
    local D, H, W = math.random(kd, 6), math.random(kh, 8), math.random(kw + 4, 21)
    local pd, ph, pw = math.random(0, kd // 2), math.random(0, kh // 2), math.random(0, kw // 2)
    local dt = trial % 2 == 0 and f64 or f32
    local x = rnd(dt, N, cg * g, D, H, W)
    local w = rnd(dt, og * g, cg, kd, kh, kw):requires_grad_(true)
    local b = rnd(dt, og * g)
    local xr = x:clone():requires_grad_(true)
    local y = F.conv3d(xr, w, b, { padding = { pd, ph, pw }, groups = g })
    local gy = torch.randn(y:size(), { dtype = dt })
    y:backward(gy)
    local x2, w2 = x:clone():requires_grad_(true), w:detach():clone():requires_grad_(true)
    local xp = F.pad(x2, { 0, 0, 0, 0, pd, pd })
    local slices = {}
    for d = 1, D + 2 * pd - kd + 1 do
      local acc = b:view(1, -1, 1, 1)
      for k = 1, kd do
        acc = acc + F.conv2d(xp:select(3, d + k - 1), w2:select(3, k), nil, { padding = { ph, pw }, groups = g })
      end
      slices[d] = acc
    end
    local ref = torch.stack(slices, 3)
    ref:backward(gy)
    local tol = dt == f64 and 1e-10 or 1e-4
    local function rel(a, r) return (a - r):abs():max():item() / (r:abs():max():item() + 1) end
    local what = ("N=%d cg=%d g=%d og=%d k=%dx%dx%d in=%dx%dx%d"):format(N, cg, g, og, kd, kh, kw, D, H, W)
    T.ok(rel(y:detach(), ref:detach()) < tol, what .. ": values")
    T.ok(rel(xr.grad, x2.grad) < tol, what .. ": input gradient")
    T.ok(rel(w.grad, w2.grad) < tol, what .. ": weight gradient")
  end
end)

T.done()
