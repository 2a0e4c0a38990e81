-- Convolution, pooling and resampling ops (src/ops/nn_conv.lua): values and gradients
-- against PyTorch (one Python run for every case), float64 gradcheck of every
-- differentiable op (with non-contiguous inputs), and argument errors.
local T = require "testing"
local P = require "pyref"

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
-- against PyTorch: every case adds inputs, a Python snippet and Lua results;
-- one Python process computes them all
---------------------------------------------------------------------------
local cases, inputs, body, outputs = {}, {}, {}, {}

-- name: case id; ins: name -> tensor; lua: function(ins) -> list of results;
-- py: Python lines with {name} for inputs and {1}, {2}, ... for results
local function case(name, ins, lua, py, tol)
  local id = "c" .. (#cases + 1)
  local c = { name = name, tol = tol or 1e-9, first = #outputs + 1 }
  local src = py:gsub("{(%w+)}", function(k)
    if k:match("^%d+$") then return id .. "_r" .. k end
    return id .. "_" .. k
  end)
  body[#body + 1] = src
  local ok, res = pcall(lua, ins)
  for k, v in pairs(ins) do inputs[id .. "_" .. k] = v end   -- after: lua adds the upstream gradients
  c.res = ok and res or nil
  c.err = not ok and res or nil
  c.n = ok and #res or 0
  for i = 1, c.n do outputs[#outputs + 1] = id .. "_r" .. i end
  cases[#cases + 1] = c
end

-- y:backward with a random upstream gradient, sent to Python as ins[name]
local function bw(ins, y, name)
  ins[name] = torch.randn(y:size(), { dtype = f64 })
  y:backward(ins[name])
end

-- forward value plus the gradients of the inputs that require grad (upstream g)
local function with_grads(f, names)
  return function(ins)
    local y = f(ins)
    local r = { y }
    bw(ins, y, "g")
    for _, n in ipairs(names) do r[#r + 1] = ins[n].grad end
    return r
  end
end

local function g64(...) return torch.randn(table.pack(...), { dtype = f64 }) end
local function l64(...) return torch.randn(table.pack(...), { dtype = f64, requires_grad = true }) end

-- conv2d
case("conv2d plain with bias, grads", { x = l64(2, 3, 6, 5), w = l64(4, 3, 3, 3), b = l64(4) },
  with_grads(function(a) return torch.conv2d(a.x, a.w, a.b) end, { "x", "w", "b" }),
  "y = F.conv2d({x}, {w}, {b}); y.backward({g})\n{1}, {2}, {3}, {4} = y, {x}.grad, {w}.grad, {b}.grad")
case("conv2d stride/padding/dilation/groups, grads",
  { x = l64(3, 4, 7, 6), w = l64(6, 2, 3, 2), b = l64(6) },
  with_grads(function(a)
    return torch.conv2d(a.x, a.w, a.b, { stride = { 2, 1 }, padding = { 1, 2 }, dilation = { 1, 2 }, groups = 2 })
  end, { "x", "w", "b" }),
  "y = F.conv2d({x}, {w}, {b}, stride=(2,1), padding=(1,2), dilation=(1,2), groups=2); y.backward({g})\n" ..
  "{1}, {2}, {3}, {4} = y, {x}.grad, {w}.grad, {b}.grad")
case("conv2d depthwise, batch of 1, positional lists", { x = l64(1, 3, 5, 5), w = l64(6, 1, 2, 2) },
  with_grads(function(a) return torch.conv2d(a.x, a.w, nil, { 2, 2 }, { 1, 1 }, { 1, 1 }, 3) end, { "x", "w" }),
  "y = F.conv2d({x}, {w}, None, 2, 1, 1, 3); y.backward({g})\n{1}, {2}, {3} = y, {x}.grad, {w}.grad")
case("conv2d 1x1", { x = l64(3, 4, 3, 2), w = l64(5, 4, 1, 1) },
  with_grads(function(a) return torch.conv2d(a.x, a.w) end, { "x", "w" }),
  "y = F.conv2d({x}, {w}); y.backward({g})\n{1}, {2}, {3} = y, {x}.grad, {w}.grad")
case("conv2d 1x1 strided unbatched", { x = l64(4, 5, 5), w = l64(2, 4, 1, 1) },
  with_grads(function(a) return torch.conv2d(a.x, a.w, nil, { stride = 2 }) end, { "x", "w" }),
  "y = F.conv2d({x}, {w}, stride=2); y.backward({g})\n{1}, {2}, {3} = y, {x}.grad, {w}.grad")
case("conv2d padding same (asymmetric), grads", { x = l64(2, 2, 5, 6), w = l64(3, 2, 2, 4) },
  with_grads(function(a) return torch.conv2d(a.x, a.w, nil, { padding = "same", dilation = { 1, 1 } }) end, { "x", "w" }),
  "y = F.conv2d({x}, {w}, padding='same'); y.backward({g})\n{1}, {2}, {3} = y, {x}.grad, {w}.grad")
case("conv2d padding same with dilation, valid", { x = rnd(f64, 1, 2, 7, 7), w = rnd(f64, 2, 2, 3, 3) },
  function(a) return { torch.conv2d(a.x, a.w, nil, 1, "same", 2), torch.conv2d(a.x, a.w, nil, { padding = "valid" }) } end,
  "{1} = F.conv2d({x}, {w}, padding='same', dilation=2)\n{2} = F.conv2d({x}, {w}, padding='valid')")
case("conv2d float32 unbatched", { x = rnd(f32, 3, 9, 8), w = rnd(f32, 4, 3, 3, 3), b = rnd(f32, 4) },
  function(a) return { torch.conv2d(a.x, a.w, a.b, { padding = 1, stride = 2 }) } end,
  "{1} = F.conv2d({x}, {w}, {b}, padding=1, stride=2)", 1e-5)
-- enough channels for the shifted-gemm path (nn_conv_shift.c): stride 1, padding, dilation, groups
-- (its gradients are checked here against PyTorch in float64: a gradcheck this size takes half a minute)
case("conv2d many channels, padding/dilation/groups, grads",
  { x = l64(2, 32, 15, 17), w = l64(32, 16, 3, 2), b = l64(32) },
  with_grads(function(a)
    return torch.conv2d(a.x, a.w, a.b, { padding = { 1, 2 }, dilation = { 1, 2 }, groups = 2 })
  end, { "x", "w", "b" }),
  "y = F.conv2d({x}, {w}, {b}, padding=(1,2), dilation=(1,2), groups=2); y.backward({g})\n" ..
  "{1}, {2}, {3}, {4} = y, {x}.grad, {w}.grad, {b}.grad")
case("conv2d many channels, float32, padding wider than the kernel",
  { x = rnd(f32, 2, 16, 18, 18), w = rnd(f32, 24, 16, 3, 3), g = rnd(f32, 2, 24, 22, 20), v = rnd(f32, 16, 16, 3, 3) },
  function(a)
    return { torch.conv2d(a.x, a.w, nil, { padding = 1 }), torch.conv2d(a.x, a.v, nil, { padding = { 3, 2 } }),
             torch.conv2d_backward_input(a.g, a.w, a.x:size(), 1, { 3, 2 }, 1, 1),
             torch.conv2d_backward_weight(a.g, a.x, a.w:size(), 1, { 3, 2 }, 1, 1) }
  end,
  "{1} = F.conv2d({x}, {w}, padding=1)\n{2} = F.conv2d({x}, {v}, padding=(3,2))\n" ..
  "{3} = torch.nn.grad.conv2d_input({x}.shape, {w}, {g}, padding=(3,2))\n" ..
  "{4} = torch.nn.grad.conv2d_weight({x}, {w}.shape, {g}, padding=(3,2))", 1e-5)
-- one input channel per group, stride 1: the direct forward loop (nn_conv_direct.c)
case("conv2d one input channel, padding/dilation, grads", { x = l64(2, 1, 11, 13), w = l64(3, 1, 3, 2), b = l64(3) },
  with_grads(function(a) return torch.conv2d(a.x, a.w, a.b, { padding = { 1, 2 }, dilation = { 2, 1 } }) end,
             { "x", "w", "b" }),
  "y = F.conv2d({x}, {w}, {b}, padding=(1,2), dilation=(2,1)); y.backward({g})\n" ..
  "{1}, {2}, {3}, {4} = y, {x}.grad, {w}.grad, {b}.grad")
case("conv2d depthwise rows past 32 and under 8, float32",
  { x = rnd(f32, 2, 3, 9, 37), w = rnd(f32, 6, 1, 3, 3), b = rnd(f32, 6), y = rnd(f32, 1, 2, 6, 9), v = rnd(f32, 2, 1, 3, 3) },
  function(a) return { torch.conv2d(a.x, a.w, a.b, { padding = 1, groups = 3 }), torch.conv2d(a.y, a.v, nil, { groups = 2 }) } end,
  "{1} = F.conv2d({x}, {w}, {b}, padding=1, groups=3)\n{2} = F.conv2d({y}, {v}, groups=2)", 1e-5)
-- a few input channels per group, stride 1: the direct loop four filters at a time
case("conv2d few channels, padding/dilation/groups, grads", { x = l64(2, 4, 9, 12), w = l64(6, 2, 3, 2), b = l64(6) },
  with_grads(function(a)
    return torch.conv2d(a.x, a.w, a.b, { padding = { 1, 2 }, dilation = { 2, 1 }, groups = 2 })
  end, { "x", "w", "b" }),
  "y = F.conv2d({x}, {w}, {b}, padding=(1,2), dilation=(2,1), groups=2); y.backward({g})\n" ..
  "{1}, {2}, {3}, {4} = y, {x}.grad, {w}.grad, {b}.grad")
case("conv2d few channels (LeNet's second layer), float32", { x = rnd(f32, 3, 6, 12, 12), w = rnd(f32, 16, 6, 5, 5), b = rnd(f32, 16) },
  function(a) return { torch.conv2d(a.x, a.w, a.b) } end, "{1} = F.conv2d({x}, {w}, {b})", 1e-5)
-- conv1d
case("conv1d stride/padding/dilation/groups, grads", { x = l64(2, 4, 11), w = l64(6, 2, 3), b = l64(6) },
  with_grads(function(a)
    return torch.conv1d(a.x, a.w, a.b, { stride = 2, padding = 1, dilation = 2, groups = 2 })
  end, { "x", "w", "b" }),
  "y = F.conv1d({x}, {w}, {b}, stride=2, padding=1, dilation=2, groups=2); y.backward({g})\n" ..
  "{1}, {2}, {3}, {4} = y, {x}.grad, {w}.grad, {b}.grad")
case("conv1d same, unbatched, float32", { x = rnd(f32, 3, 10), w = rnd(f32, 2, 3, 4), y = rnd(f64, 2, 3, 7), v = rnd(f64, 4, 3, 2) },
  function(a) return { torch.conv1d(a.x, a.w, nil, { padding = "same" }), torch.conv1d(a.y, a.v, nil, { padding = "valid" }) } end,
  "{1} = F.conv1d({x}, {w}, padding='same')\n{2} = F.conv1d({y}, {v}, padding='valid')", 1e-5)
-- conv_transpose2d
case("conv_transpose2d stride/padding/output_padding/groups/dilation, grads",
  { x = l64(2, 4, 3, 4), w = l64(4, 3, 3, 2), b = l64(6) },
  with_grads(function(a)
    return torch.conv_transpose2d(a.x, a.w, a.b, { stride = { 2, 3 }, padding = { 1, 0 }, output_padding = { 1, 0 },
                                                   groups = 2, dilation = { 2, 1 } })
  end, { "x", "w", "b" }),
  "y = F.conv_transpose2d({x}, {w}, {b}, stride=(2,3), padding=(1,0), output_padding=(1,0), groups=2, dilation=(2,1)); y.backward({g})\n" ..
  "{1}, {2}, {3}, {4} = y, {x}.grad, {w}.grad, {b}.grad")
case("conv_transpose2d plain unbatched float32", { x = rnd(f32, 3, 4, 4), w = rnd(f32, 3, 2, 3, 3) },
  function(a) return { torch.conv_transpose2d(a.x, a.w, nil, 2) } end,
  "{1} = F.conv_transpose2d({x}, {w}, None, 2)", 1e-5)
-- max pools
case("max_pool2d k3 s2 p1 ceil_mode, indices, grads", { x = l64(2, 3, 8, 7) },
  function(a)
    local v, i = torch.max_pool2d_with_indices(a.x, { 3 }, { 2 }, { 1 }, { 1 }, true)
    bw(a, v, "g")
    return { v, i, a.x.grad }
  end,
  "v, i = F.max_pool2d({x}, 3, 2, 1, 1, True, return_indices=True); v.backward({g})\n{1}, {2}, {3} = v, i + 1, {x}.grad")
case("max_pool2d dilation, rectangular, unbatched, float32",
  { x = rnd(f32, 2, 9, 8), y = rnd(f64, 2, 2, 6, 7) },
  function(a)
    local v, i = torch.max_pool2d_with_indices(a.y, { 3, 2 }, { 1, 2 }, { 1, 0 }, 2)
    return { torch.max_pool2d(a.x, { 2, 3 }, { stride = 2, dilation = { 2, 1 } }), v, i }
  end,
  "{1} = F.max_pool2d({x}, (2,3), stride=2, dilation=(2,1))\nv, i = F.max_pool2d({y}, (3,2), (1,2), (1,0), 2, return_indices=True)\n{2}, {3} = v, i + 1", 1e-6)
case("max_pool1d ceil_mode, indices, grads", { x = l64(2, 3, 10) },
  function(a)
    local v, i = torch.max_pool1d_with_indices(a.x, 3, { stride = 3, padding = 1, ceil_mode = true })
    bw(a, v, "g")
    return { v, i, a.x.grad, torch.max_pool1d(a.x, { 2 }, { 1 }, { 0 }, 2) }
  end,
  "v, i = F.max_pool1d({x}, 3, stride=3, padding=1, ceil_mode=True, return_indices=True); v.backward({g})\n" ..
  "{1}, {2}, {3} = v, i + 1, {x}.grad\n{4} = F.max_pool1d({x}, 2, 1, 0, 2)")
-- average pools
case("avg_pool2d padding ceil_mode count_include_pad, grads", { x = l64(2, 2, 7, 6) },
  with_grads(function(a) return torch.avg_pool2d(a.x, { 3 }, { 2 }, { 1 }, true, false) end, { "x" }),
  "y = F.avg_pool2d({x}, 3, 2, 1, True, False); y.backward({g})\n{1}, {2} = y, {x}.grad")
case("avg_pool2d divisor_override, include pad, unbatched float32",
  { x = rnd(f32, 3, 6, 6), y = rnd(f64, 1, 2, 5, 7) },
  function(a)
    return { torch.avg_pool2d(a.x, { 2, 3 }, { 2, 1 }, { 1, 1 }, { divisor_override = 5 }),
             torch.avg_pool2d(a.y, 3, { padding = 1, ceil_mode = true }) }
  end,
  "{1} = F.avg_pool2d({x}, (2,3), (2,1), (1,1), divisor_override=5)\n{2} = F.avg_pool2d({y}, 3, padding=1, ceil_mode=True)", 1e-6)
case("avg_pool1d, grads", { x = l64(2, 3, 9) },
  with_grads(function(a) return torch.avg_pool1d(a.x, { 3 }, { 2 }, { 1 }, false, false) end, { "x" }),
  "y = F.avg_pool1d({x}, 3, 2, 1, False, False); y.backward({g})\n{1}, {2} = y, {x}.grad")
-- adaptive pools
case("adaptive_avg_pool2d, grads", { x = l64(2, 3, 7, 5) },
  with_grads(function(a) return torch.adaptive_avg_pool2d(a.x, { 3, 2 }) end, { "x" }),
  "y = F.adaptive_avg_pool2d({x}, (3,2)); y.backward({g})\n{1}, {2} = y, {x}.grad")
case("adaptive_max_pool2d, indices, grads, upsizing", { x = l64(3, 7, 5), y = rnd(f64, 1, 2, 3, 3) },
  function(a)
    local v, i = torch.adaptive_max_pool2d(a.x, 4)
    bw(a, v, "g")
    return { v, i, a.x.grad, torch.adaptive_avg_pool2d(a.y, 5) }
  end,
  "v, i = F.adaptive_max_pool2d({x}, 4, return_indices=True); v.backward({g})\n{1}, {2}, {3} = v, i + 1, {x}.grad\n" ..
  "{4} = F.adaptive_avg_pool2d({y}, 5)")
-- pad
case("pad constant (with cropping), grads", { x = l64(2, 3, 4) },
  with_grads(function(a) return torch.pad(a.x, { -1, -1, 2, 1 }, "constant", 1.5) end, { "x" }),
  "y = F.pad({x}, (-1,-1,2,1), 'constant', 1.5); y.backward({g})\n{1}, {2} = y, {x}.grad")
case("pad reflect 2-D, grads", { x = l64(1, 2, 4, 5) },
  with_grads(function(a) return torch.pad(a.x, { 2, 1, 3, 0 }, "reflect") end, { "x" }),
  "y = F.pad({x}, (2,1,3,0), 'reflect'); y.backward({g})\n{1}, {2} = y, {x}.grad")
case("pad replicate 3-D, grads", { x = l64(1, 2, 2, 3, 2) },
  with_grads(function(a) return torch.pad(a.x, { 1, 2, 0, 1, 2, 1 }, "replicate") end, { "x" }),
  "y = F.pad({x}, (1,2,0,1,2,1), 'replicate'); y.backward({g})\n{1}, {2} = y, {x}.grad")
case("pad reflect 1-D float32, constant default", { x = rnd(f32, 2, 5), y = rnd(f64, 3, 2) },
  function(a) return { torch.pad(a.x, { 3, 4 }, "reflect"), torch.pad(a.y, { 1, 1, 1, 1 }) } end,
  "{1} = F.pad({x}, (3,4), 'reflect')\n{2} = F.pad({y}, (1,1,1,1))", 1e-7)
-- upsampling
case("upsample_nearest2d up and down, grads", { x = l64(2, 2, 5, 3), y = rnd(f64, 1, 1, 9, 7) },
  function(a)
    local v = torch.upsample_nearest2d(a.x, { 7, 8 })
    bw(a, v, "g")
    return { v, a.x.grad, torch.upsample_nearest2d(a.y, { 4, 3 }) }
  end,
  "y = F.interpolate({x}, size=(7,8), mode='nearest'); y.backward({g})\n{1}, {2} = y, {x}.grad\n" ..
  "{3} = F.interpolate({y}, size=(4,3), mode='nearest')")
case("upsample_bilinear2d align_corners both, grads",
  { x = l64(1, 2, 4, 3), z = l64(1, 1, 3, 4) },
  function(a)
    local v = torch.upsample_bilinear2d(a.x, { 7, 5 }, true)
    bw(a, v, "g")
    local u = torch.upsample_bilinear2d(a.z, { 6, 2 })
    bw(a, u, "h")
    return { v, a.x.grad, u, a.z.grad }
  end,
  "y = F.interpolate({x}, size=(7,5), mode='bilinear', align_corners=True); y.backward({g})\n{1}, {2} = y, {x}.grad\n" ..
  "u = F.interpolate({z}, size=(6,2), mode='bilinear', align_corners=False); u.backward({h})\n{3}, {4} = u, {z}.grad")
-- a non-integer scale factor sets where outputs sample (1/scale), not just the output size
case("interpolate with scale factors 1.7, (0.6, 2.3), recompute_scale_factor, grads",
  { x = l64(2, 3, 5, 7), y = rnd(f64, 1, 2, 6, 4) },
  function(a)
    local F = require("nn").functional
    local v = F.interpolate(a.x, { scale_factor = 1.7, mode = "bilinear" })
    bw(a, v, "g")
    return { v, a.x.grad,
             F.interpolate(a.y, { scale_factor = { 0.6, 2.3 }, mode = "nearest" }),
             F.interpolate(a.y, { scale_factor = { 0.6, 2.3 }, mode = "bilinear" }),
             F.interpolate(a.y, { scale_factor = 1.45, mode = "nearest", recompute_scale_factor = true }),
             F.interpolate(a.y, { scale_factor = 1.45, mode = "bilinear", align_corners = true }),
             require("nn").Upsample({ scale_factor = 2.5, mode = "nearest" })(a.y) }
  end,
  "y = F.interpolate({x}, scale_factor=1.7, mode='bilinear'); y.backward({g})\n{1}, {2} = y, {x}.grad\n" ..
  "{3} = F.interpolate({y}, scale_factor=(0.6, 2.3), mode='nearest')\n" ..
  "{4} = F.interpolate({y}, scale_factor=(0.6, 2.3), mode='bilinear')\n" ..
  "{5} = F.interpolate({y}, scale_factor=1.45, mode='nearest', recompute_scale_factor=True)\n" ..
  "{6} = F.interpolate({y}, scale_factor=1.45, mode='bilinear', align_corners=True)\n" ..
  "{7} = torch.nn.Upsample(scale_factor=2.5, mode='nearest')({y})")
case("pixel_shuffle / pixel_unshuffle", { x = rnd(f64, 2, 8, 2, 3), y = rnd(f64, 3, 4, 6) },
  function(a) return { torch.pixel_shuffle(a.x, 2), torch.pixel_unshuffle(a.y, 2) } end,
  "{1} = F.pixel_shuffle({x}, 2)\n{2} = F.pixel_unshuffle({y}, 2)")

if not P.available() then
  T.skip("values against PyTorch", P.why())
else
  for _, c in ipairs(cases) do   -- a case that failed here is reported below; keep Python going
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
T.test("gradcheck conv2d", function()
  T.ok(gc(function(x, w, b) return torch.conv2d(x, w, b, { stride = 2, padding = 1, groups = 2 }) end,
          { tleaf(2, 4, 5, 4), leaf(4, 2, 3, 2), leaf(4) }))
  T.ok(gc(function(x, w) return torch.conv2d(x, w, nil, { padding = "same", dilation = { 2, 1 } }) end,
          { leaf(1, 2, 5, 4), tleaf(3, 2, 2, 3) }))
  T.ok(gc(function(x, w) return torch.conv2d(x, w) end, { tleaf(3, 3, 3), leaf(2, 3, 1, 1) }))
  T.ok(gc(function(x, w, b) return torch.conv2d(x, w, b, { padding = { 0, 1 } }) end,   -- the direct loop
          { tleaf(1, 1, 4, 8), leaf(2, 1, 2, 2), leaf(2) }))
  T.ok(gc(function(x, w, b) return torch.conv2d(x, w, b) end, { tleaf(1, 2, 3, 6), leaf(5, 2, 2, 2), leaf(5) }))
end)

T.test("gradcheck conv1d, conv_transpose2d", function()
  T.ok(gc(function(x, w, b) return torch.conv1d(x, w, b, { stride = 2, padding = 2, dilation = 2 }) end,
          { tleaf(2, 3, 7), leaf(2, 3, 3), leaf(2) }))
  T.ok(gc(function(x, w) return torch.conv1d(x, w, nil, { padding = "same" }) end, { leaf(2, 6), leaf(3, 2, 4) }))
  T.ok(gc(function(x, w, b)
    return torch.conv_transpose2d(x, w, b, { stride = 2, padding = 1, output_padding = 1, groups = 2 })
  end, { tleaf(2, 4, 3, 3), leaf(4, 1, 3, 2), leaf(2) }))
end)

T.test("gradgradcheck conv2d, conv_transpose2d", function()
  T.ok(ggc(function(x, w) return torch.conv2d(x, w, nil, { stride = 2, padding = 1 }) end,
           { leaf(2, 2, 4, 4), leaf(3, 2, 2, 2) }))
  T.ok(ggc(function(x, w) return torch.conv_transpose2d(x, w, nil, 2) end, { leaf(1, 2, 2, 3), leaf(2, 1, 2, 2) }))
end)

T.test("gradcheck max pools", function()
  T.ok(gc(function(x) return torch.max_pool2d(x, 3, { stride = 2, padding = 1, ceil_mode = true }) end, { tleaf(2, 2, 5, 6) }))
  T.ok(gc(function(x) return torch.max_pool2d(x, 2, { dilation = 2 }) end, { leaf(2, 5, 5) }))
  T.ok(gc(function(x) return torch.max_pool1d(x, 2, { stride = 1 }) end, { tleaf(2, 3, 5) }))
  T.ok(gc(function(x) local v = torch.adaptive_max_pool2d(x, { 2, 3 }); return v end, { tleaf(1, 2, 5, 4) }))
  T.ok(ggc(function(x) return torch.max_pool2d(x, 2) end, { leaf(1, 2, 4, 4) }))
end)

T.test("gradcheck average pools", function()
  T.ok(gc(function(x) return torch.avg_pool2d(x, 3, { stride = 2, padding = 1, ceil_mode = true, count_include_pad = false }) end, { tleaf(2, 2, 6, 5) }))
  T.ok(gc(function(x) return torch.avg_pool2d(x, 2, { divisor_override = 3 }) end, { leaf(2, 4, 4) }))
  T.ok(gc(function(x) return torch.avg_pool1d(x, 3, { stride = 1, padding = 1 }) end, { tleaf(2, 2, 5) }))
  T.ok(gc(function(x) return torch.adaptive_avg_pool2d(x, { 3, 2 }) end, { tleaf(1, 2, 5, 4) }))
  T.ok(ggc(function(x) return torch.avg_pool2d(x, 2, { stride = 1 }) end, { leaf(1, 1, 3, 3) }))
  T.ok(ggc(function(x) return torch.adaptive_avg_pool2d(x, 2) end, { leaf(1, 1, 3, 3) }))
end)

T.test("gradcheck pad, upsample, pixel_shuffle", function()
  T.ok(gc(function(x) return torch.pad(x, { 1, -1, 2, 0 }, "constant", 3) end, { tleaf(2, 3, 4) }))
  T.ok(gc(function(x) return torch.pad(x, { 2, 1, 1, 2 }, "reflect") end, { tleaf(1, 3, 4) }))
  T.ok(gc(function(x) return torch.pad(x, { 2, 1 }, "replicate") end, { tleaf(2, 3) }))
  T.ok(ggc(function(x) return torch.pad(x, { 1, 1 }, "reflect") end, { leaf(1, 3) }))
  T.ok(gc(function(x) return torch.upsample_nearest2d(x, { 5, 3 }) end, { tleaf(1, 2, 3, 4) }))
  T.ok(gc(function(x) return torch.upsample_bilinear2d(x, { 5, 3 }) end, { tleaf(1, 2, 3, 4) }))
  T.ok(gc(function(x) return torch.upsample_bilinear2d(x, { 2, 6 }, true) end, { leaf(1, 1, 3, 4) }))
  T.ok(ggc(function(x) return torch.upsample_bilinear2d(x, { 4, 4 }) end, { leaf(1, 1, 2, 3) }))
  T.ok(gc(function(x) return torch.upsample_nearest2d(x, { 5, 6 }, 1.7, 1.9) end, { tleaf(1, 2, 3, 4) }))
  T.ok(gc(function(x) return torch.upsample_bilinear2d(x, { 5, 6 }, false, 1.7, 1.9) end, { tleaf(1, 2, 3, 4) }))
  T.ok(gc(function(x) return torch.pixel_shuffle(x, 2) end, { tleaf(1, 4, 2, 3) }))
  T.ok(gc(function(x) return torch.pixel_unshuffle(x, 2) end, { tleaf(1, 4, 2) }))
end)

---------------------------------------------------------------------------
-- small exact cases
---------------------------------------------------------------------------
T.test("max_pool2d indices are 1-based plane positions", function()
  local x = torch.tensor({ { { 1, 5, 2, 0 }, { 3, 4, 9, 1 } } }, { dtype = f64 })
  local v, i = torch.max_pool2d_with_indices(x, 2)
  T.tensor(v, { { { 5, 9 } } })
  T.tensor(i, { { { 2, 7 } } }, { dtype = "int64" })
  local g = torch.max_pool2d_backward(torch.ones(1, 1, 2, { dtype = f64 }), i, { 1, 2, 4 })
  T.tensor(g, { { { 0, 1, 0, 0 }, { 0, 0, 1, 0 } } })
end)

-- 2x2 stride-2 pools take their own branch-free loop (nn_pool.c); the general loop (a
-- 3x3 window with a dilation of 1 over the same values, or ceil_mode on odd sizes) is the
-- reference: same values, same indices, same rule for ties (the first) and NaNs (the last)
T.test("max_pool2d 2x2: the fast loop agrees with the general one, ties and NaNs", function()
  torch.manual_seed(5)
  for _, dt in ipairs({ f32, f64 }) do
    local x = torch.randn(3, 4, 10, 13, { dtype = dt })
    x[1][1][1][1], x[1][1][1][2] = 10, 10               -- a tie: the first wins
    x[2][2][3][3] = 0 / 0                               -- one NaN in a window
    x[3][1][5][5], x[3][1][6][6] = 0 / 0, 0 / 0         -- two: the last wins
    local v, i = torch.max_pool2d_with_indices(x, 2)
    -- the general loop: windows of 2 padded by 0 with ceil_mode on a view one column wider
    local xw = torch.cat({ x, torch.full({ 3, 4, 10, 1 }, -math.huge, { dtype = dt }) }, 4)
    local v2, i2 = torch.max_pool2d_with_indices(xw, 2, 2, 0, 1, true)
    T.eq(v2:size(4), 7)
    local same = v:eq(v2:narrow(4, 1, 6)):logical_or(v:ne(v)):all():item()
    T.eq(same, true, "values " .. tostring(dt))
    -- flat positions: xw's rows are one element longer
    local row = torch.floor((i2:narrow(4, 1, 6) - 1) / 14)
    local col = (i2:narrow(4, 1, 6) - 1) % 14
    T.eq(torch.equal(i, row * 13 + col + 1), true, "indices " .. tostring(dt))
    T.eq(i[1][1][1][1], 1)
    T.eq(i[3][1][3][3], 5 * 13 + 6)                   -- the second NaN (row 6, col 6)
  end
end)

T.test("batched conv2d takes the chunked path and the per-image path alike", function()
  local x, w = rnd(f32, 9, 3, 12, 10), rnd(f32, 5, 3, 3, 3)
  local all = torch.conv2d(x, w, nil, { padding = 1 })
  for n = 1, 9, 4 do
    local one = torch.conv2d(x:narrow(1, n, 1), w, nil, { padding = 1 })
    T.ok((one - all:narrow(1, n, 1)):abs():max():item() < 1e-5)
  end
end)

---------------------------------------------------------------------------
-- errors name the op and the argument
---------------------------------------------------------------------------
T.test("argument errors", function()
  local x, w = rnd(f32, 1, 4, 5, 5), rnd(f32, 2, 4, 3, 3)
  T.raises(function() torch.conv2d(x, rnd(f32, 3, 4)) end, "conv2d", "'weight'", "4-D")
  T.raises(function() torch.conv2d(x, w, nil, { groups = 3 }) end, "conv2d", "groups")
  T.raises(function() torch.conv2d(x, rnd(f32, 2, 3, 3, 3)) end, "conv2d", "'input'", "channels")
  T.raises(function() torch.conv2d(x:long(), w:long()) end, "conv2d", "'input'", "floating point")
  T.raises(function() torch.conv2d(x, w:double()) end, "conv2d", "'weight'", "dtype")
  T.raises(function() torch.conv2d(x, w, nil, { stride = { 1, 2, 3 } }) end, "conv2d", "'stride'")
  T.raises(function() torch.conv2d(x, w, nil, { stride = 0 }) end, "conv2d", "'stride'", "positive")
  T.raises(function() torch.conv2d(x, w, nil, { padding = -1 }) end, "conv2d", "'padding'")
  T.raises(function() torch.conv2d(x, w, rnd(f32, 3)) end, "conv2d", "'bias'")
  T.raises(function() torch.conv2d(x, w, nil, { stride = 2, padding = "same" }) end, "conv2d", "'padding'", "strided")
  T.raises(function() torch.conv2d(x, w, nil, { padding = "full" }) end, "conv2d", "'padding'")
  T.raises(function() torch.conv2d(rnd(f32, 1, 4, 2, 2), w) end, "conv2d", "'input'", "smaller")
  T.raises(function() torch.conv1d(rnd(f32, 1, 4, 5), w) end, "conv1d", "'weight'", "3-D")
  T.raises(function() torch.conv1d(rnd(f32, 1, 3, 5), rnd(f32, 2, 4, 3)) end, "conv1d", "'input'")
  T.raises(function() torch.conv_transpose2d(x, rnd(f32, 4, 2, 3, 3), nil, { output_padding = 1 }) end,
           "conv_transpose2d", "'output_padding'")
  T.raises(function() torch.conv_transpose2d(x, rnd(f32, 3, 2, 3, 3)) end, "conv_transpose2d", "'input'")
  T.raises(function() torch.max_pool2d(x, 2, { padding = 2 }) end, "max_pool2d", "'padding'")
  T.raises(function() torch.max_pool2d(rnd(f32, 5, 5), 2) end, "max_pool2d", "'input'", "3-D")
  T.raises(function() torch.max_pool2d(x, 0) end, "max_pool2d", "'kernel_size'")
  T.raises(function() torch.max_pool2d(x:long(), 2) end, "max_pool2d", "'input'", "float32")
  T.raises(function() torch.max_pool1d(rnd(f32, 2, 3, 5), 7) end, "max_pool1d", "'input'")
  T.raises(function() torch.avg_pool2d(x, 2, { divisor_override = 0 }) end, "avg_pool2d", "'divisor_override'")
  T.raises(function() torch.avg_pool1d(x, 2) end, "avg_pool1d", "'input'")
  T.raises(function() torch.adaptive_avg_pool2d(x, { 0, 2 }) end, "adaptive_avg_pool2d", "'output_size'")
  T.raises(function() torch.pad(x, { 1 }) end, "pad", "'pad'")
  T.raises(function() torch.pad(x, { 1, 1 }, "wrap") end, "pad", "'mode'")
  T.raises(function() torch.pad(rnd(f32, 1, 4, 5), { 5, 1 }, "reflect") end, "pad", "'pad'", "reflect")
  T.raises(function() torch.pad(x, { 1, 1, 1, 1, 1, 1, 1, 1 }, "replicate") end, "pad", "'pad'")
  T.raises(function() torch.upsample_nearest2d(rnd(f32, 2, 3, 3), { 4, 4 }) end, "upsample_nearest2d", "'input'", "4-D")
  T.raises(function() torch.upsample_bilinear2d(x, { 0, 4 }) end, "upsample_bilinear2d", "'output_size'")
  T.raises(function() torch.pixel_shuffle(rnd(f32, 1, 6, 2, 2), 2) end, "pixel_shuffle", "'input'", "divisible")
  T.raises(function() torch.pixel_shuffle(rnd(f32, 1, 4, 2, 2), math.maxinteger) end, "pixel_shuffle", "'upscale_factor' is too large")
  T.raises(function() torch.pixel_unshuffle(rnd(f32, 1, 1, 3, 4), 2) end, "pixel_unshuffle", "'input'")
  T.raises(function() torch.max_pool2d_backward(torch.ones(1, 1, 1), torch.tensor({ { { 9 } } }), { 1, 2, 2 }) end,
           "max_pool2d_backward", "'indices'")
end)

T.test("double backward of the backward ops is differentiable", function()
  -- conv2d's input gradient again through autograd (create_graph)
  local x, w = leaf(1, 2, 4, 4), leaf(3, 2, 3, 3)
  local y = torch.conv2d(x, w, nil, { padding = 1 })
  local gx = torch.autograd.grad({ y:pow(2):sum() }, { x }, { create_graph = true })[1]
  gx:sum():backward()
  T.ok(w.grad ~= nil)
end)

-- float32 layers with few channels take the direct vector path (nn_conv_vec.c: strided
-- ones for all products, stride-1 ones for the gradients);
-- float64 takes im2col: the two must agree, forward and both gradients, over strides,
-- dilations, rectangular kernels, channel counts around the vector width, odd sizes
T.test("float32 convs with few channels (vector path) agree with float64 (im2col)", function()
  local F = torch.nn.functional
  torch.manual_seed(1)
  local cases = {
    { 64, 16, 14, 14, 16, 3, 3, { stride = 2, padding = 1 } },   -- the nn_tutorial CNN
    { 2, 16, 7, 7, 10, 3, 3, { stride = 2, padding = 1 } },
    { 2, 5, 11, 13, 7, 3, 2, { stride = { 2, 3 }, padding = { 1, 0 } } },
    { 2, 3, 12, 12, 33, 5, 5, { stride = 2, padding = 2, dilation = 2 } },
    { 1, 40, 9, 9, 20, 3, 3, { stride = 3 } },
    { 3, 9, 10, 10, 64, 2, 2, { stride = 2 } },
    { 2, 17, 6, 5, 1, 3, 3, { stride = 2, padding = 1 } },
    { 2, 20, 10, 10, 65, 1, 1, { stride = 2 } },                  -- too many outputs: im2col
    { 3, 1, 28, 28, 16, 3, 3, { stride = 2, padding = 1 } },      -- one input channel
    { 2, 1, 9, 9, 4, 1, 2, { stride = 2 } },                     -- 2 products per output: im2col
    { 4, 6, 12, 12, 16, 5, 5, {} },                               -- LeNet's second layer: gradients
    { 2, 8, 9, 11, 12, 3, 3, { padding = 2, dilation = 2 } },     -- stride 1, padded, dilated
  }
  for i, c in ipairs(cases) do
    local N, C, H, W, O, kh, kw, opt = table.unpack(c)
    local x = torch.randn(N, C, H, W, { dtype = "float64", requires_grad = true })
    local w = torch.randn(O, C, kh, kw, { dtype = "float64", requires_grad = true })
    local b = torch.randn(O, { dtype = "float64", requires_grad = true })
    local y = F.conv2d(x, w, b, opt)
    local g = torch.randn(y:size(), { dtype = "float64" })
    y:backward(g)
    local xf = x:detach():float():requires_grad_()
    local wf = w:detach():float():requires_grad_()
    local bf = b:detach():float():requires_grad_()
    local yf = F.conv2d(xf, wf, bf, opt)
    yf:backward(g:float())
    local function rel(a, ref) return (a:double() - ref):abs():max():item() / ref:abs():max():item() end
    T.ok(rel(yf, y) < 1e-5, "case " .. i .. " forward")
    T.ok(rel(xf.grad, x.grad) < 1e-5, "case " .. i .. " input gradient")
    T.ok(rel(wf.grad, w.grad) < 1e-5, "case " .. i .. " weight gradient")
    T.ok(rel(bf.grad, b.grad) < 1e-5, "case " .. i .. " bias gradient")
  end
end)

T.test("depthwise weight gradient (one channel a group: dot products of shifted planes) against a window sum", function()
  local F = require("nn").functional
  torch.manual_seed(3)
  -- N, C, H, W, k, stride, padding, dilation
  for _, c in ipairs({ { 8, 16, 20, 20, 3, 1, 1, 1 }, { 2, 8, 17, 13, 3, 2, 1, 1 }, { 3, 4, 15, 16, 5, 1, 2, 2 },
                       { 2, 6, 9, 9, 3, 3, 0, 1 }, { 1, 3, 12, 7, 2, 1, 0, 1 }, { 2, 4, 11, 11, 3, 2, 2, 2 } }) do
    local N, C, H, W, k, st, p, dil = table.unpack(c)
    for _, dt in ipairs({ torch.float64, torch.float32 }) do
      local x = torch.randn(N, C, H, W, { dtype = dt })
      local y = torch.conv2d(x, torch.randn(C, 1, k, k, { dtype = dt }), nil,
        { stride = st, padding = p, dilation = dil, groups = C })
      local OH, OW = y:size(3), y:size(4)
      local gy = torch.randn(y:size(), { dtype = dt })
      local gw = torch.conv2d_backward_weight(gy, x, { C, 1, k, k }, { st, st }, { p, p }, { dil, dil }, C)
      local xp = F.pad(x:double(), { p, p, p, p })
      local ref = torch.zeros(C, 1, k, k, { dtype = torch.float64 })
      for i = 0, k - 1 do
        for j = 0, k - 1 do
          local win = xp:narrow(3, i * dil + 1, (OH - 1) * st + 1):narrow(4, j * dil + 1, (OW - 1) * st + 1)
          if st > 1 then win = win:unfold(3, 1, st):unfold(4, 1, st):squeeze(6):squeeze(5) end
          ref:select(3, i + 1):select(3, j + 1):copy_((win * gy:double()):sum({ 1, 3, 4 }):reshape(C, 1))
        end
      end
      local rel = (gw:double() - ref):abs():max():item() / ref:abs():max():item()
      T.ok(rel < (dt == torch.float64 and 1e-13 or 1e-6), table.concat(c, ",") .. " " .. tostring(dt) .. ": " .. rel)
    end
  end
  -- the same on one thread and two
  local x, g = torch.randn(4, 32, 14, 14), torch.randn(4, 32, 14, 14)
  local n = torch.get_num_threads()
  torch.set_num_threads(1)
  local a = torch.conv2d_backward_weight(g, x, { 32, 1, 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, 32)
  torch.set_num_threads(2)
  local b = torch.conv2d_backward_weight(g, x, { 32, 1, 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, 32)
  torch.set_num_threads(n)
  T.eq((a - b):abs():max():item(), 0)
end)

T.test("depthwise input gradient (the forward loop over the flipped kernel) against a sum of shifted products", function()
  local F = require("nn").functional
  torch.manual_seed(5)
  -- N, C, H, W, k, padding, dilation (stride 1; the last has padding past the kernel's reach)
  for _, c in ipairs({ { 8, 16, 20, 20, 3, 1, 1 }, { 2, 8, 17, 13, 3, 1, 1 }, { 3, 4, 15, 16, 5, 2, 2 },
                       { 2, 6, 9, 9, 3, 0, 1 }, { 1, 3, 12, 9, 2, 0, 1 }, { 2, 4, 11, 12, 3, 3, 1 } }) do
    local N, C, H, W, k, p, dil = table.unpack(c)
    local x = torch.randn(N, C, H, W, { dtype = torch.float64, requires_grad = true })
    local w = torch.randn(C, 1, k, k, { dtype = torch.float64 })
    local xp = F.pad(x, { p, p, p, p })
    local OH, OW = H + 2 * p - dil * (k - 1), W + 2 * p - dil * (k - 1)
    local y = torch.zeros(N, C, OH, OW, { dtype = torch.float64 })
    for i = 0, k - 1 do
      for j = 0, k - 1 do
        local wij = w:select(2, 1):select(2, i + 1):select(2, j + 1):reshape(1, C, 1, 1)
        y = y + xp:narrow(3, i * dil + 1, OH):narrow(4, j * dil + 1, OW) * wij
      end
    end
    local gy = torch.randn(y:size(), { dtype = torch.float64 })
    local ref = torch.autograd.grad({ y }, { x }, { gy })[1]
    for _, dt in ipairs({ torch.float64, torch.float32 }) do
      local gx = torch.conv2d_backward_input(gy:to(dt), w:to(dt), { N, C, H, W }, { 1, 1 }, { p, p }, { dil, dil }, C)
      local rel = (gx:double() - ref):abs():max():item() / ref:abs():max():item()
      T.ok(rel < (dt == torch.float64 and 1e-13 or 1e-6), table.concat(c, ",") .. " " .. tostring(dt) .. ": " .. rel)
    end
  end
end)

-- the float32 kernels (channel-vector loops, direct loops, shifted and im2col gemms) end in
-- partial register blocks: random shapes and strides against the float64 path
T.test("conv2d float32: random shapes and strides against float64 (values and all gradients)", function()
  local F = torch.nn.functional
  torch.manual_seed(2)
  math.randomseed(2)
  for _ = 1, 60 do
    local N, C, O = math.random(1, 3), math.random(1, 20), math.random(1, 33)
    local kh, kw, sh, sw = math.random(1, 5), math.random(1, 5), math.random(1, 3), math.random(1, 3)
    local H, W = math.random(kh, 16), math.random(kw, 16)
    local opt = { stride = { sh, sw }, padding = { math.random(0, kh // 2), math.random(0, kw // 2) } }
    local x, w, b = torch.randn(N, C, H, W), torch.randn(O, C, kh, kw), torch.randn(O)
    local xs, ws, bs = x:clone():requires_grad_(true), w:clone():requires_grad_(true), b:clone():requires_grad_(true)
    local xd, wd, bd = x:double():requires_grad_(true), w:double():requires_grad_(true), b:double():requires_grad_(true)
    local y, yd = F.conv2d(xs, ws, bs, opt), F.conv2d(xd, wd, bd, opt)
    local gy = torch.randn(y:size())
    y:backward(gy); yd:backward(gy:double())
    local function rel(a, r) return (a:double() - r):abs():max():item() / (r:abs():max():item() + 1) end
    local what = ("N=%d C=%d O=%d k=%dx%d s=%dx%d in=%dx%d"):format(N, C, O, kh, kw, sh, sw, H, W)
    T.ok(rel(y:detach(), yd:detach()) < 1e-5, what .. ": values")
    T.ok(rel(xs.grad, xd.grad) < 1e-5, what .. ": input gradient")
    T.ok(rel(ws.grad, wd.grad) < 1e-5, what .. ": weight gradient")
    T.ok(rel(bs.grad, bd.grad) < 1e-5, what .. ": bias gradient")
  end
end)

T.done()
