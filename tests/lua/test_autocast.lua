-- test_autocast.lua — torch.autocast on the CPU: the region's forms and options, the
-- output dtype and value of each op under bfloat16 autocast against PyTorch 1.13's CPU
-- autocast on the same calls, gradients reaching float32 leaves (against PyTorch's),
-- the weight cast cache, what is never cast (float64, out= and in-place forms, meta,
-- the backward), promotion, float16, nn modules and losses, and the op lists in the
-- manual. The CUDA table is tested in tests/lua/cuda/test_autocast.lua.
local T = require "testing"
local P = require "pyref"
local nn = require "nn"
local F = nn.functional

local bf16, f32, f64, f16 = torch.bfloat16, torch.float32, torch.float64, torch.float16

local function on(fn) return torch.autocast("cpu", { dtype = bf16 }, fn) end

T.test("defaults: off, bfloat16 on the CPU and float16 on CUDA", function()
  T.eq(torch.is_autocast_enabled(), false)
  T.eq(torch.is_autocast_enabled("cpu"), false)
  T.eq(torch.is_autocast_enabled("cuda"), false)
  T.eq(torch.get_autocast_dtype("cpu"), bf16)
  T.eq(torch.get_autocast_dtype("cuda"), f16)
  T.eq(torch.is_autocast_cpu_enabled(), false)
  T.eq(torch.get_autocast_cpu_dtype(), bf16)
  T.eq(torch.is_autocast_cache_enabled(), true)
  T.ok(torch.amp.autocast == torch.autocast)
end)

T.test("the guard form: on inside, the previous state back at the end of the block", function()
  local x, y = torch.randn(3, 4), torch.randn(4, 2)
  do
    local ac <close> = torch.autocast("cpu")
    T.eq(torch.is_autocast_enabled("cpu"), true)
    T.eq(torch.get_autocast_dtype("cpu"), bf16)
    T.eq(torch.mm(x, y).dtype, bf16)
    T.ok(tostring(ac):find("autocast", 1, true) ~= nil)
  end
  T.eq(torch.is_autocast_enabled("cpu"), false)
  T.eq(torch.mm(x, y).dtype, f32)
end)

T.test("the function form returns fn's results and ends the region when fn raises", function()
  local x = torch.randn(2, 2)
  local a, b = torch.autocast("cpu", function() return torch.mm(x, x), 7 end)
  T.eq(a.dtype, bf16); T.eq(b, 7)
  local r = torch.autocast("cpu", { dtype = f16 }, function(p, q) return torch.mm(p, q) end, x, x)
  T.eq(r.dtype, f16)
  T.raises(function() torch.autocast("cpu", function() error("boom") end) end, "boom")
  -- a module (a callable table) as fn, and PyTorch's keywords in one table
  local lin = nn.Linear(2, 3)
  T.eq(torch.autocast("cpu", lin, x).dtype, bf16)
  T.eq(torch.autocast({ device_type = "cpu", dtype = f16 }, function() return torch.mm(x, x) end).dtype, f16)
  -- PyTorch 1.x's per-device forms
  T.eq(torch.cpu.amp.autocast(function() return torch.mm(x, x) end).dtype, bf16)
  T.eq(torch.cpu.amp.autocast({ dtype = f16 }, function() return torch.mm(x, x) end).dtype, f16)
  do
    local g <close> = torch.cpu.amp.autocast()
    T.eq(torch.is_autocast_enabled("cpu"), true)
  end
  T.eq(torch.is_autocast_enabled("cpu"), false)
  T.ok(type(torch.cuda.amp.autocast) == "function")
  T.eq(torch.is_autocast_enabled("cpu"), false)
  T.eq(torch.get_autocast_dtype("cpu"), bf16, "the dtype comes back too")
end)

T.test("nesting: enabled = false inside, another dtype inside, each restored", function()
  local x = torch.randn(2, 2)
  on(function()
    T.eq(torch.mm(x, x).dtype, bf16)
    torch.autocast("cpu", { enabled = false }, function()
      T.eq(torch.is_autocast_enabled("cpu"), false)
      T.eq(torch.mm(x, x).dtype, f32)
    end)
    torch.autocast("cpu", { dtype = f16 }, function() T.eq(torch.mm(x, x).dtype, f16) end)
    T.eq(torch.mm(x, x).dtype, bf16)
  end)
end)

T.test("bad options and device types are errors naming autocast and the option", function()
  T.raises(function() torch.autocast("cpu", { dtyp = bf16 }) end, "autocast", "unknown option 'dtyp'", "did you mean 'dtype'")
  T.raises(function() torch.autocast("cpu", { dtype = f32 }) end, "autocast", "'dtype'", "bfloat16")
  T.raises(function() torch.autocast("cpu", { dtype = torch.int8 }) end, "'dtype'")
  T.raises(function() torch.autocast("cpu", { enabled = "yes" }) end, "'enabled'", "boolean")
  T.raises(function() torch.autocast("tpu") end, "autocast", "device_type", "tpu")
  T.raises(function() torch.autocast(3) end, "device_type")
  T.raises(function() torch.autocast("cpu", 5) end, "opts")
  T.raises(function() torch.autocast("cpu", {}, 5) end, "'fn'")
  T.raises(function() torch.set_autocast_dtype("cpu", f64) end, "set_autocast_dtype", "'dtype'")
  T.raises(function() torch.is_autocast_enabled("gpu") end, "is_autocast_enabled", "device_type")
  T.eq(torch.is_autocast_enabled("cpu"), false, "a refused region leaves nothing on")
end)

T.test("a cuda region without the CUDA backend warns and does nothing", function()
  if torch.cuda.is_available() then T.skip("cuda autocast off", "a CUDA device is present"); return end
  local x = torch.randn(2, 2)
  torch.autocast("cuda", function()
    T.eq(torch.is_autocast_enabled("cuda"), false)
    T.eq(torch.mm(x, x).dtype, f32)
  end)
end)

------------------------------------------------------------------------------
-- per-op dtypes and values against PyTorch 1.13's CPU autocast (bfloat16)
------------------------------------------------------------------------------
torch.manual_seed(7)
local I = {
  x = torch.randn(4, 4), y = torch.randn(4, 4), b = torch.randn(2, 4, 4), v = torch.randn(4),
  img = torch.randn(1, 2, 8, 8), w = torch.randn(3, 2, 3, 3), wt = torch.randn(2, 3, 3, 3),
  s = torch.randn(1, 2, 8), w1 = torch.randn(3, 2, 3), W = torch.randn(2, 4, 4),
  xd = torch.randn(4, 4, { dtype = f64 }),
}
I.xb, I.yb, I.vb = I.x:to(bf16), I.y:to(bf16), I.v:to(bf16)
I.imgb = I.img:to(bf16)
I.p, I.q = torch.rand(4, 4), torch.rand(4, 4)
I.pb, I.qb = I.p:to(bf16), I.q:to(bf16)
I.xe = (I.x + 4 * torch.eye(4)):to(bf16)

-- { name, lutorch call, PyTorch expression (0-based dims and classes), note }
local CASES = {
  { "mm", function() return torch.mm(I.x, I.y) end, "torch.mm(x, y)" },
  { "matmul", function() return I.x:matmul(I.y) end, "x @ y" },
  { "bmm", function() return torch.bmm(I.b, I.b) end, "torch.bmm(b, b)" },
  { "addmm", function() return torch.addmm(I.x, I.x, I.y) end, "torch.addmm(x, x, y)" },
  { "baddbmm", function() return torch.baddbmm(I.b, I.b, I.b) end, "torch.baddbmm(b, b, b)" },
  { "addbmm", function() return torch.addbmm(I.x, I.b, I.b) end, "torch.addbmm(x, b, b)" },
  { "mv (not listed on the CPU)", function() return torch.mv(I.x, I.v) end, "torch.mv(x, v)" },
  { "dot (not listed on the CPU)", function() return torch.dot(I.v, I.v) end, "torch.dot(v, v)" },
  { "linear", function() return F.linear(I.x, I.y) end, "F.linear(x, y)" },
  { "linear with bias", function() return F.linear(I.x, I.y, I.v) end, "F.linear(x, y, v)" },
  { "conv2d", function() return F.conv2d(I.img, I.w) end, "F.conv2d(img, w)" },
  { "conv2d padding='same'", function() return F.conv2d(I.img, I.w, nil, { padding = "same" }) end, "F.conv2d(img, w, padding='same')" },
  { "conv1d", function() return F.conv1d(I.s, I.w1) end, "F.conv1d(s, w1)" },
  { "einsum", function() return torch.einsum("ij,jk->ik", I.x, I.y) end, "torch.einsum('ij,jk->ik', x, y)" },
  { "softmax (float32 stays)", function() return torch.softmax(I.x, 1) end, "torch.softmax(x, 0)" },
  { "log_softmax of bfloat16", function() return torch.log_softmax(I.xb, 1) end, "torch.log_softmax(xb, 0)" },
  { "sum of bfloat16", function() return I.xb:sum() end, "xb.sum()" },
  { "exp of bfloat16", function() return I.xb:exp() end, "xb.exp()" },
  { "layer_norm of bfloat16", function() return F.layer_norm(I.xb, { 4 }) end, "F.layer_norm(xb, (4,))" },
  { "mse_loss", function() return F.mse_loss(I.xb, I.yb) end, "F.mse_loss(xb, yb)" },
  { "l1_loss", function() return F.l1_loss(I.xb, I.yb) end, "F.l1_loss(xb, yb)" },
  { "smooth_l1_loss", function() return F.smooth_l1_loss(I.xb, I.yb) end, "F.smooth_l1_loss(xb, yb)" },
  { "huber_loss", function() return F.huber_loss(I.xb, I.yb) end, "F.huber_loss(xb, yb)" },
  { "kl_div", function() return F.kl_div(I.xb, I.qb, { reduction = "batchmean" }) end, "F.kl_div(xb, qb, reduction='batchmean')" },
  { "cross_entropy", function() return F.cross_entropy(I.xb, torch.tensor({ 1, 2, 3, 4 })) end,
    "F.cross_entropy(xb, torch.tensor([0, 1, 2, 3]))" },
  { "nll_loss", function() return F.nll_loss(I.xb, torch.tensor({ 1, 2, 3, 4 })) end, "F.nll_loss(xb, torch.tensor([0, 1, 2, 3]))" },
  { "binary_cross_entropy", function() return F.binary_cross_entropy(I.pb, I.qb) end, "F.binary_cross_entropy(pb, qb)" },
  { "binary_cross_entropy_with_logits", function() return F.binary_cross_entropy_with_logits(I.xb, I.qb) end,
    "F.binary_cross_entropy_with_logits(xb, qb)" },
  { "soft_margin_loss (Lua)", function() return F.soft_margin_loss(I.xb, I.yb:sign()) end, "F.soft_margin_loss(xb, yb.sign())" },
  { "hinge_embedding_loss (Lua)", function() return F.hinge_embedding_loss(I.xb, I.yb:sign()) end,
    "F.hinge_embedding_loss(xb, yb.sign())" },
  { "margin_ranking_loss (Lua)", function() return F.margin_ranking_loss(I.vb, I.vb:flip(1), I.vb:sign()) end,
    "F.margin_ranking_loss(vb, vb.flip(0), vb.sign())" },
  { "cosine_embedding_loss (Lua)", function() return F.cosine_embedding_loss(I.xb, I.yb, torch.ones(4)) end,
    "F.cosine_embedding_loss(xb, yb, torch.ones(4, dtype=torch.float32))" },
  { "poisson_nll_loss (Lua)", function() return F.poisson_nll_loss(I.xb, I.qb) end, "F.poisson_nll_loss(xb, qb)" },
  { "triplet_margin_loss (Lua)", function() return F.triplet_margin_loss(I.xb, I.yb, I.pb) end, "F.triplet_margin_loss(xb, yb, pb)" },
  { "cat promotes", function() return torch.cat({ I.xb, I.y }) end, "torch.cat([xb, y])" },
  { "cat of bfloat16 only", function() return torch.cat({ I.xb, I.yb }) end, "torch.cat([xb, yb])" },
  { "stack promotes", function() return torch.stack({ I.xb, I.y }) end, "torch.stack([xb, y])" },
  { "index_copy promotes", function() return I.xb:index_copy(1, torch.tensor({ 1 }), I.y:narrow(1, 1, 1)) end,
    "xb.index_copy(0, torch.tensor([0]), y[:1])" },
  { "add (not listed)", function() return I.xb + I.y end, "xb + y" },
  { "outer (not listed)", function() return torch.outer(I.v, I.v) end, "torch.outer(v, v)" },
  { "kron (not listed)", function() return torch.kron(I.x, I.y) end, "torch.kron(x, y)" },
  { "inner (mm in PyTorch)", function() return torch.inner(I.x, I.y) end, "torch.inner(x, y)" },
  { "tensordot (mm in PyTorch)", function() return torch.tensordot(I.xb, I.y) end, "torch.tensordot(xb, y)" },
  { "linalg.multi_dot (mm in PyTorch)", function() return torch.linalg.multi_dot({ I.x, I.y, I.x }) end,
    "torch.linalg.multi_dot([x, y, x])" },
  { "bilinear of bfloat16", function() return F.bilinear(I.xb, I.yb, I.W:to(bf16)) end, "F.bilinear(xb, yb, W.bfloat16())" },
  { "mm of float64 is not cast", function() return torch.mm(I.xd, I.xd) end, "torch.mm(xd, xd)" },
  { "prod", function() return I.xb:prod() end, "xb.prod()" },
  { "cdist", function() return torch.cdist(I.xb, I.yb) end, "torch.cdist(xb, yb)" },
  { "trace", function() return torch.trace(I.xb) end, "torch.trace(xb)" },
  { "inverse", function() return torch.inverse(I.xe) end, "torch.inverse(xe)" },
  { "linalg.solve", function() return torch.linalg.solve(I.xe, I.yb) end, "torch.linalg.solve(xe, yb)" },
  { "fft.fft", function() return torch.view_as_real(torch.fft.fft(I.vb)) end, "torch.view_as_real(torch.fft.fft(vb))" },
  { "polar", function() return torch.view_as_real(torch.polar(I.vb:abs(), I.vb)) end, "torch.view_as_real(torch.polar(vb.abs(), vb))" },
  { "quantile", function() return torch.quantile(I.vb, torch.tensor({ 0.5 })) end,
    "torch.quantile(vb, torch.tensor([0.5], dtype=torch.float32))" },
  { "group_norm (not listed)", function() return F.group_norm(I.imgb, 2) end, "F.group_norm(imgb, 2)" },
  { "max_pool2d (not listed)", function() return F.max_pool2d(I.imgb, 2) end, "F.max_pool2d(imgb, 2)" },
  { "upsample nearest (not listed)", function() return F.interpolate(I.imgb, { scale_factor = 2 }) end,
    "F.interpolate(imgb, scale_factor=2)" },
  { "cumsum (not listed)", function() return I.xb:cumsum(1) end, "xb.cumsum(0)" },
  { "pow (not listed)", function() return I.xb ^ 2 end, "xb ** 2" },
  { "atan2 (type promotion)", function() return torch.atan2(I.xb, I.y) end, "torch.atan2(xb, y)" },
  { "bilinear (not listed)", function() return F.bilinear(I.x, I.y, I.W) end, "F.bilinear(x, y, W)" },
}
-- where lutorch follows PyTorch 2.x's list, which added these to the CPU's lower-precision ops
local PYTORCH2 = {
  { "conv_transpose2d", function() return F.conv_transpose2d(I.img, I.wt) end, "F.conv_transpose2d(img, wt)" },
  { "prelu", function() return F.prelu(I.x, torch.tensor({ 0.25 })) end, "F.prelu(x, torch.tensor([0.25], dtype=torch.float32))" },
}

local CODE = { float64 = 0, float32 = 1, float16 = 2, bfloat16 = 3, complex64 = 4, complex128 = 5 }
local NAME = {}
for k, v in pairs(CODE) do NAME[v] = k end

local function pyside(cases)
  local body = {
    "CODE = {torch.float64: 0, torch.float32: 1, torch.float16: 2, torch.bfloat16: 3, torch.complex64: 4, torch.complex128: 5}",
    "xb, yb, vb, imgb, pb, qb = x.bfloat16(), y.bfloat16(), v.bfloat16(), img.bfloat16(), p.bfloat16(), q.bfloat16()",
    "xe = (x + 4 * torch.eye(4, dtype=torch.float32)).bfloat16()",
    "res = []",
    "def run(f):",
    "    try:",
    "        with torch.autocast('cpu', dtype=torch.bfloat16):",
    "            r = f()",
    "        res.append((CODE.get(r.dtype, -1), r))",
    "    except Exception as e:",
    "        res.append((-2, None))",
  }
  local outs = {}
  for i, c in ipairs(cases) do
    body[#body + 1] = ("run(lambda: %s)"):format(c[3])
    outs[#outs + 1] = ("res[%d][0]"):format(i - 1)
    outs[#outs + 1] = ("res[%d][1]"):format(i - 1)
  end
  local inputs = {}
  for k, t in pairs(I) do
    if t.dtype == f32 or t.dtype == f64 then inputs[k] = t end
  end
  return P.run(inputs, table.concat(body, "\n"), outs)
end

local function compare(cases, expect_dtype_of)
  local r = pyside(cases)
  for i, c in ipairs(cases) do
    local code, want = r[2 * i - 1], r[2 * i]
    T.test("autocast cpu, against PyTorch 1.13: " .. c[1], function()
      T.ok(code >= 0, "PyTorch raised on " .. c[3])
      local got = on(c[2])
      local expect = expect_dtype_of and expect_dtype_of(c, NAME[code]) or NAME[code]
      T.eq(got.dtype.name, expect, c[1] .. ": dtype")
      if not expect_dtype_of then
        -- the same values, to the rounding of the lower dtype (both accumulate in float32)
        local g = got:to(f64)
        local err = (g - want):abs():max():item() / (1 + want:abs():max():item())
        T.ok(err <= 2e-2, ("%s: differs from PyTorch by %g"):format(c[1], err))
      end
    end)
  end
end

if not P.available() then
  T.skip("autocast against PyTorch", P.why())
else
  compare(CASES)
  -- PyTorch 1.13 keeps these in float32; 2.x (and lutorch) casts them to the lower dtype
  compare(PYTORCH2, function(c, py) T.eq(py, "float32", c[1] .. ": PyTorch 1.13's dtype"); return "bfloat16" end)
end

------------------------------------------------------------------------------
-- gradients
------------------------------------------------------------------------------
T.test("gradients reach float32 leaves in float32, as PyTorch's do", function()
  torch.manual_seed(3)
  local x = torch.randn(8, 6)
  local W1 = torch.randn(5, 6, { requires_grad = true })
  local b1 = torch.randn(5, { requires_grad = true })
  local W2 = torch.randn(3, 5, { requires_grad = true })
  local b2 = torch.randn(3, { requires_grad = true })
  local tgt = torch.tensor({ 1, 2, 3, 1, 2, 3, 1, 2 })
  local loss, out = on(function()
    local h = torch.relu(F.linear(x, W1, b1))
    local o = F.linear(h, W2, b2)
    return F.cross_entropy(o, tgt), o
  end)
  T.eq(out.dtype, bf16, "the logits")
  T.eq(loss.dtype, f32, "the loss")
  loss:backward()
  for _, p in ipairs({ W1, b1, W2, b2 }) do T.eq(p.grad.dtype, f32, "a leaf's gradient") end
  if not P.available() then T.skip("gradients against PyTorch", P.why()); return end
  local r = P.run({ x = x, W1 = W1, b1 = b1, W2 = W2, b2 = b2 }, [[
with torch.autocast('cpu', dtype=torch.bfloat16):
    o = F.linear(torch.relu(F.linear(x, W1, b1)), W2, b2)
    loss = F.cross_entropy(o, torch.tensor([0, 1, 2, 0, 1, 2, 0, 1]))
loss.backward()
]], { "loss", "W1.grad", "b1.grad", "W2.grad", "b2.grad" })
  T.near(loss:item(), r[1]:item(), 2e-2, "loss")
  for i, p in ipairs({ W1, b1, W2, b2 }) do
    local err = (p.grad:double() - r[i + 1]):abs():max():item() / (1 + r[i + 1]:abs():max():item())
    T.ok(err < 3e-2, ("gradient %d differs from PyTorch's by %g"):format(i, err))
  end
  -- the float32 computation is near too: bfloat16 rounds, it does not change the result's meaning
  W1.grad = nil
  F.cross_entropy(F.linear(torch.relu(F.linear(x, W1, b1)), W2, b2), tgt):backward()
  local err = (W1.grad - r[2]:float()):abs():max():item()
  T.ok(err < 0.1, "float32 gradient near the autocast one: " .. err)
end)

T.test("a backward inside the region runs in the forward's dtypes", function()
  local w = torch.randn(4, 4, { requires_grad = true })
  local x = torch.randn(2, 4)
  on(function()
    local y = torch.mm(x, w)
    T.eq(y.dtype, bf16)
    y:sum():backward()
  end)
  T.eq(w.grad.dtype, f32)
  T.tensor(w.grad, x:sum(1):unsqueeze(2):expand(4, 4):totable(), { tol = 2e-2 })
end)

------------------------------------------------------------------------------
-- the cache, and what is not cast
------------------------------------------------------------------------------
T.test("a float32 leaf weight is cast once per region and the cache empties at its end", function()
  local w = torch.randn(4, 4, { requires_grad = true })
  local x = torch.randn(2, 4)
  on(function()
    T.eq(torch._autocast.cache_size(), 0)
    local a = torch.mm(x, w)
    T.eq(torch._autocast.cache_size(), 1)
    local b = torch.mm(x, w)
    T.eq(torch._autocast.cache_size(), 1, "the second use hits the cache")
    T.ok(torch.equal(a, b))
    on(function() torch.mm(x, w) end)
    T.eq(torch._autocast.cache_size(), 1, "a nested region keeps the outer one's cache")
    -- non-leaves and tensors without requires_grad are not cached
    torch.mm(x, w * 2); torch.mm(x, torch.randn(4, 4))
    T.eq(torch._autocast.cache_size(), 1)
    -- a weight changed in place is cast again, not read stale from the cache
    torch.no_grad(function() w:add_(1) end)
    local c = torch.mm(x, w)
    T.ok(not torch.equal(c, a), "the cached cast followed the in-place change")
    T.near((c - a):float():mean():item(), x:sum(2):mean():item(), 0.1)
    -- and one given new data (x.data = y) too
    w.data = torch.zeros(4, 4)
    T.tensor(torch.mm(x, w):float(), torch.zeros(2, 4):totable())
  end)
  T.eq(torch._autocast.cache_size(), 0)
  torch.autocast("cpu", { cache_enabled = false }, function()
    torch.mm(x, w)
    T.eq(torch._autocast.cache_size(), 0, "cache_enabled = false")
  end)
  T.eq(torch.is_autocast_cache_enabled(), true)
end)

T.test("out= and in-place forms, float64, integers and meta tensors are never cast", function()
  local x, y = torch.randn(3, 3), torch.randn(3, 3)
  on(function()
    local out = torch.empty(3, 3)
    T.eq(torch.mm(x, y, { out = out }).dtype, f32)
    local z = x:clone()
    z:addmm_(x, y)
    T.eq(z.dtype, f32)
    T.eq(torch.mm(x:double(), y:double()).dtype, f64)
    T.eq(torch.mm(torch.ones(2, 2, { dtype = torch.int64 }), torch.ones(2, 2, { dtype = torch.int64 })).dtype, torch.int64)
    local m = torch.mm(torch.empty(2, 3, { device = "meta" }), torch.empty(3, 4, { device = "meta" }))
    T.eq(m.dtype, f32, "meta is not cast")
  end)
end)

T.test("promote: a float16 argument beside a bfloat16 autocast is an error naming the op", function()
  on(function()
    T.raises(function() torch.cat({ torch.ones(2, { dtype = f16 }), torch.ones(2, { dtype = bf16 }) }) end,
      "cat", "float16")
    T.eq(torch.cat({ torch.ones(2, { dtype = bf16 }), torch.ones(2, { dtype = f64 }) }).dtype, f64,
      "float64 is left alone (and promotes as usual)")
  end)
end)

T.test("float16 autocast on the CPU", function()
  local x = torch.randn(3, 4)
  local r = torch.autocast("cpu", { dtype = f16 }, function()
    return { torch.mm(x, x:t()), F.mse_loss(x:half(), x:half()), torch.cat({ x:half(), x }) }
  end)
  T.eq(r[1].dtype, f16); T.eq(r[2].dtype, f32); T.eq(r[3].dtype, f32)
  T.tensor(r[1]:float(), torch.mm(x, x:t()):totable(), { tol = 2e-2 * 8 })
end)

T.test("nn modules under autocast: Linear/Conv2d in bfloat16, the loss in float32", function()
  torch.manual_seed(5)
  local model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 10))
  local x = torch.randn(2, 1, 8, 8)
  local crit = nn.CrossEntropyLoss()
  local ref = model(x)
  local out, loss = on(function()
    local o = model(x)
    return o, crit(o, torch.tensor({ 3, 7 }))
  end)
  T.eq(out.dtype, bf16); T.eq(loss.dtype, f32)
  local err = (out:float() - ref):abs():max():item() / (1 + ref:abs():max():item())
  T.ok(err < 3e-2, "bfloat16 forward near float32: " .. err)
  loss:backward()
  for _, p in ipairs(model:parameters()) do T.eq(p.grad.dtype, f32) end
end)

T.test("pooling and resampling take bfloat16 and float16 through float32 (src/ops/lowp.lua)", function()
  torch.manual_seed(9)
  local x = torch.randn(2, 3, 8, 8)
  for _, dt in ipairs({ bf16, f16 }) do
    local xl = x:to(dt)
    local ref = xl:float()   -- the same inputs: the 16-bit values, exactly, in float32
    local cases = {
      { "max_pool2d", function(t) return F.max_pool2d(t, 2) end },
      { "avg_pool2d", function(t) return F.avg_pool2d(t, 3, { stride = 2, padding = 1 }) end },
      { "adaptive_avg_pool2d", function(t) return F.adaptive_avg_pool2d(t, { 3, 3 }) end },
      { "adaptive_max_pool2d", function(t) return F.adaptive_max_pool2d(t, { 3, 3 }) end },
      { "interpolate nearest", function(t) return F.interpolate(t, { scale_factor = 2 }) end },
      { "interpolate bilinear", function(t) return F.interpolate(t, { size = { 5, 7 }, mode = "bilinear" }) end },
    }
    for _, c in ipairs(cases) do
      local got, want = c[2](xl), c[2](ref)
      T.eq(got.dtype, dt, c[1] .. " keeps " .. dt.name)
      T.ok(torch.equal(got, want:to(dt)), c[1] .. " in " .. dt.name .. ": float32 arithmetic, one rounding")
      -- and the gradient, through the backward kernels
      local a = xl:clone():requires_grad_()
      local b = ref:clone():requires_grad_()
      c[2](a):sum():backward()
      c[2](b):sum():backward()
      T.eq(a.grad.dtype, dt)
      T.ok(torch.equal(a.grad, b.grad:to(dt)), c[1] .. " gradient in " .. dt.name)
    end
    local v, i = F.max_pool2d(xl, 2, { return_indices = true })
    T.eq(i.dtype, torch.int64, "the indices stay int64")
  end
  -- meta, and a dtype these kernels do not take
  local m = F.max_pool2d(torch.empty(1, 2, 8, 8, { device = "meta", dtype = bf16 }), 2)
  T.eq(m.dtype, bf16); T.eq(m.shape, { 1, 2, 4, 4 })
  T.raises(function() F.max_pool2d(torch.ones(1, 1, 4, 4, { dtype = torch.int32 }), 2) end, "max_pool2d")
end)

T.test("the op lists: torch._autocast.lists() and man/amp.md name the same ops", function()
  local L = torch._autocast.lists()
  T.eq(L.cpu.mm, "lower"); T.eq(L.cpu.linear, "lower"); T.eq(L.cpu.cat, "promote")
  T.eq(L.cpu.mse_loss, "fp32"); T.eq(L.cpu.softmax, nil, "softmax is CUDA's")
  T.eq(L.cuda.softmax, "fp32_dtype"); T.eq(L.cuda.exp, "fp32"); T.eq(L.cuda.binary_cross_entropy, "banned")
  T.eq(L.functional.cpu.soft_margin_loss, "fp32")
  local f = io.open("man/amp.md")
  if not f then T.skip("man/amp.md", "not found from " .. os.getenv("PWD")); return end
  local doc = f:read("a"); f:close()
  for _, dev in ipairs({ "cpu", "cuda" }) do
    for _, tab in ipairs({ L[dev], L.functional[dev] }) do
      for name in pairs(tab) do
        T.ok(doc:find("`" .. name .. "`", 1, true) ~= nil, "man/amp.md names " .. name .. " (" .. dev .. ")")
      end
    end
  end
end)

T.done()
