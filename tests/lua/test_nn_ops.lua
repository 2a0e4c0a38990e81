-- The nn ops of src/ops/nn_misc.lua: values against PyTorch (float64 and float32), float64
-- gradcheck for every differentiable op and argument (non-contiguous inputs included),
-- dropout's statistics and gradient, in-place and out= forms, and errors naming op and argument.
local T = require "testing"
local P = require "pyref"
local f64, f32 = torch.float64, torch.float32
local gc = torch.autograd.gradcheck
local ggc = torch.autograd.gradgradcheck

torch.manual_seed(7)

local function sized(fn, opts, ...)
  local a = table.pack(...)
  a[a.n + 1] = opts
  return fn(table.unpack(a, 1, a.n + 1))
end
local function leaf(...) return sized(torch.randn, { dtype = f64, requires_grad = true }, ...) end
local function rnd(...) return sized(torch.randn, { dtype = f64 }, ...) end
-- values away from the kinks of the piecewise activations (|x| in [0.1, 3.9] minus +-0.5, +-3 zones)
local function smooth(...)
  local x = sized(torch.rand, { dtype = f64 }, ...)
  local v = x:view(-1):totable()
  local pick = { -3.6, -2.2, -1.3, -0.8, -0.3, -0.15, 0.2, 0.35, 0.7, 1.1, 1.9, 2.6, 3.4 }
  for i = 1, #v do v[i] = pick[1 + math.floor(v[i] * #pick) % #pick] + (x:view(-1)[i] - 0.5) * 0.05 end
  local r = torch.tensor(v, { dtype = f64 }):view(x.shape)
  r.requires_grad = true
  return r
end
local have_py = P.available()

-- Every comparison with PyTorch goes through one Python run (starting PyTorch costs seconds):
-- the tests register inputs, statements and result expressions, then ref() runs them all.
local REQ = { inputs = {}, body = {}, outs = {}, names = {} }
local function want(inputs, body, outs)
  for k, v in pairs(inputs) do REQ.inputs[k] = v end
  REQ.body[#REQ.body + 1] = body
  for name, e in pairs(outs) do REQ.names[#REQ.names + 1] = name; REQ.outs[#REQ.outs + 1] = e end
end
local REF
local function ref(name)
  if not REF then
    local r = P.run(REQ.inputs, table.concat(REQ.body, "\n"), REQ.outs)
    REF = {}
    for i, n in ipairs(REQ.names) do REF[n] = r[i] end
  end
  return REF[name]
end
local function near(a, b, tol, msg)
  T.ok(torch.is_tensor(a), (msg or "") .. ": not a tensor")
  T.eq(a:size(), b:size(), msg)
  local d = (a:to(f64) - b:to(f64)):abs():max():item()
  if d ~= d and a:isnan():eq(b:isnan()):all():item() then
    d = (a:nan_to_num() - b:nan_to_num():to(a.dtype)):abs():max():item()
  end
  if not (d <= tol) then error(("%s: max difference %g > %g"):format(msg or "values", d, tol), 2) end
end

-- the activations: name, Lua call, PyTorch expression on x
local ACTS = {
  { "mish", function(x) return torch.mish(x) end, "F.mish(x)" },
  { "hardsigmoid", function(x) return torch.hardsigmoid(x) end, "F.hardsigmoid(x)" },
  { "hardswish", function(x) return torch.hardswish(x) end, "F.hardswish(x)" },
  { "softsign", function(x) return torch.softsign(x) end, "F.softsign(x)" },
  { "logsigmoid", function(x) return torch.logsigmoid(x) end, "F.logsigmoid(x)" },
  { "tanhshrink", function(x) return torch.tanhshrink(x) end, "F.tanhshrink(x)" },
  { "selu", function(x) return torch.selu(x) end, "F.selu(x)" },
  { "celu", function(x) return torch.celu(x, 1.5) end, "F.celu(x, 1.5)" },
  { "threshold", function(x) return torch.threshold(x, 0.3, -2) end, "F.threshold(x, 0.3, -2)" },
  { "hardshrink", function(x) return torch.hardshrink(x, 0.6) end, "F.hardshrink(x, 0.6)" },
  { "softshrink", function(x) return torch.softshrink(x, 0.6) end, "F.softshrink(x, 0.6)" },
  { "glu", function(x) return torch.glu(x) end, "F.glu(x)" },
  { "glu1", function(x) return torch.glu(x, 1) end, "F.glu(x, 0)" },
}

-- ---- inputs of the comparisons with PyTorch, registered before any test runs ----
local AX = rnd(6, 8) * 3
AX[1][1] = 30; AX[1][2] = -30; AX[1][3] = 0; AX[1][4] = 3; AX[1][5] = -3; AX[1][6] = 0.6; AX[1][7] = -0.6; AX[1][8] = 0.3
do
  local outs = {}
  for _, a in ipairs(ACTS) do
    outs[a[1]] = a[3]
    outs[a[1] .. "32"] = a[3]:gsub("%(x", "(x32")
  end
  want({ x = AX, x32 = AX:to(f32) }, "", outs)
end

local PX, PW = smooth(2, 3, 4), leaf(3)
want({ px = PX:detach(), pw = PW:detach() },
  "px.requires_grad_(); pw.requires_grad_(); py = F.prelu(px, pw); py.sum().backward()",
  { py = "py", px_grad = "px.grad", pw_grad = "pw.grad", py32 = "F.prelu(px.float(), pw.float())" })

local LX, LW, LB = leaf(2, 3, 5), leaf(4, 5), leaf(4)
local BX1, BX2, BW, BB = leaf(3, 4), leaf(3, 2), leaf(5, 4, 2), leaf(5)
want({ lx = LX:detach(), lw = LW:detach(), lb = LB:detach(), bx1 = BX1:detach(), bx2 = BX2:detach(),
       bw = BW:detach(), bb = BB:detach() }, [[
for t in (lx, lw, lb, bx1, bx2, bw, bb): t.requires_grad_()
ly = F.linear(lx, lw, lb); bz = F.bilinear(bx1, bx2, bw, bb)
(ly.sum() + bz.sum()).backward()
]], { ly = "ly", lx_grad = "lx.grad", lw_grad = "lw.grad", lb_grad = "lb.grad", bz = "bz", bx1_grad = "bx1.grad",
      bx2_grad = "bx2.grad", bw_grad = "bw.grad", bb_grad = "bb.grad", ly32 = "F.linear(lx.float(), lw.float())" })

local EW, EI = leaf(7, 2), torch.tensor({ 7, 1, 1, 4, 4, 4 })
want({ ew = EW:detach(), ei = EI - 1 },
  "ew.requires_grad_(); ey = F.embedding(ei, ew, padding_idx=3); ey.backward(torch.arange(12.).view(6, 2))",
  { ey = "ey", ew_grad = "ew.grad" })

local DA, DB, DC = leaf(4, 5), leaf(4, 5), leaf(5)
want({ da = DA:detach(), db = DB:detach(), dc = DC:detach() }, "", {
  cos1 = "F.cosine_similarity(da, db)", cos2 = "F.cosine_similarity(da, dc, dim=1)",
  cos3 = "F.cosine_similarity(da, db, dim=0, eps=0.5)", pd1 = "F.pairwise_distance(da, db)",
  pd2 = "F.pairwise_distance(da, dc, p=1.5, keepdim=True)", pd3 = "F.pairwise_distance(da, db, p=0.5, eps=0.1)",
  cos32 = "F.cosine_similarity(da.float(), db.float())", pd32 = "F.pairwise_distance(da.float(), db.float())" })

-- this PyTorch may predate F.scaled_dot_product_attention: the reference is its documented math
local SQ, SK, SV = leaf(2, 3, 4, 5), leaf(2, 3, 6, 5), leaf(2, 3, 6, 2)
local SBM = torch.rand(4, 6):gt(0.3)
SBM[{ {}, 1 }] = true                       -- every query sees at least one key
local SFM = rnd(4, 6)
want({ sq = SQ:detach(), sk = SK:detach(), sv = SV:detach(), sbm = SBM, sfm = SFM }, [[
def sd(q, k, v, mask=None, causal=False, scale=None):
    s = scale if scale is not None else 1 / math.sqrt(q.size(-1))
    a = q @ k.transpose(-2, -1) * s
    if causal:
        a = a.masked_fill(~torch.ones(a.size(-2), a.size(-1), dtype=torch.bool).tril(), float('-inf'))
    if mask is not None:
        a = a.masked_fill(~mask, float('-inf')) if mask.dtype == torch.bool else a + mask
    return a.softmax(-1) @ v
if hasattr(F, 'scaled_dot_product_attention'): sd = F.scaled_dot_product_attention
for t in (sq, sk, sv): t.requires_grad_()
sy1 = sd(sq, sk, sv); sy2 = sd(sq, sk, sv, sbm); sy3 = sd(sq, sk, sv, sfm, scale=0.3)
sy4 = sd(sq, sk[:, :, :4], sv[:, :, :4], causal=True) if sd is not F.__dict__.get('scaled_dot_product_attention') else sd(sq, sk[:, :, :4], sv[:, :, :4], is_causal=True)
(sy1 + sy2 + sy3 + sy4).sum().backward()
sy32 = sd(sq.float(), sk.float(), sv.float(), sbm)
]], { sy1 = "sy1", sy2 = "sy2", sy3 = "sy3", sy4 = "sy4", sq_grad = "sq.grad", sk_grad = "sk.grad",
      sv_grad = "sv.grad", sy32 = "sy32" })

T.test("activations match PyTorch (float64, float32, large magnitudes)", function()
  if not have_py then return T.skip("activations vs PyTorch", P.why()) end
  for _, a in ipairs(ACTS) do
    near(a[2](AX), ref(a[1]), 1e-12, a[1] .. " float64")
    local y = a[2](AX:to(f32))
    T.eq(y.dtype, f32, a[1])
    near(y, ref(a[1] .. "32"), 2e-6, a[1] .. " float32")
  end
end)

T.test("in-place and out= forms", function()
  local x = rnd(3, 4)
  for _, c in ipairs({ { "mish" }, { "hardsigmoid" }, { "hardswish" }, { "selu" }, { "celu", 0.7 },
                       { "threshold", 0.1, 5 } }) do
    local name = c[1]
    local y = torch[name](x, table.unpack(c, 2))
    local z = x:clone()
    local r = torch[name .. "_"](z, table.unpack(c, 2))
    near(z, y, 0, name .. "_")
    near(r, y, 0, name .. "_ result")
    local z2 = x:clone()
    z2[name .. "_"](z2, table.unpack(c, 2))
    near(z2, y, 0, name .. "_ method")
  end
  for _, name in ipairs({ "mish", "hardsigmoid", "hardswish", "softsign", "logsigmoid", "tanhshrink", "hardshrink",
                          "softshrink" }) do
    local o = torch.empty(0, { dtype = f64 })
    torch[name](x, { out = o })
    near(o, torch[name](x), 0, name .. " out=")
  end
  -- threshold keeps integer tensors integer
  T.tensor(torch.threshold(torch.tensor({ 1, 2, 3, 4 }), 2.5, 0), { 0, 0, 3, 4 }, { dtype = "int64" })
end)

T.test("activation gradients: gradcheck float64, non-contiguous, double backward", function()
  for _, a in ipairs(ACTS) do
    local fn = a[2]
    T.ok(gc(fn, { smooth(4, 6) }), a[1])
    T.ok(gc(function(x) return fn(x:t()) end, { smooth(6, 4) }), a[1] .. " transposed")
  end
  for _, a in ipairs(ACTS) do
    if a[1] ~= "threshold" and a[1] ~= "hardshrink" then   -- piecewise constant derivative: trivially 0
      T.ok(ggc(a[2], { smooth(2, 4) }), a[1] .. " gradgradcheck")
    end
  end
  -- in-place forms on non-leaves
  T.ok(gc(function(x) return torch.mish_(x * 1) end, { smooth(3, 4) }))
  T.ok(gc(function(x) return torch.celu_(x * 1, 0.8) end, { smooth(3, 4) }))
  T.ok(gc(function(x) return torch.hardswish_(x * 1) end, { smooth(3, 4) }))
end)

T.test("_activation_backward matches the derivatives written with ops", function()
  local x, g = AX:clone(), rnd(6, 8)
  local cases = {
    { "gelu", function(t) return torch.gelu(t) end }, { "gelu_tanh", function(t) return torch.gelu(t, { approximate = "tanh" }) end },
    { "silu", torch.silu }, { "softplus", function(t) return torch.softplus(t, 2, 5) end, 2, 5 },
    { "elu", function(t) return torch.elu(t, 0.7, 1.2, 0.9) end, 0.7, 1.2, 0.9 },
    { "mish", torch.mish }, { "hardswish", torch.hardswish }, { "logsigmoid", torch.logsigmoid },
  }
  for _, c in ipairs(cases) do
    local xl = x:clone(); xl.requires_grad = true
    local want = torch.autograd.grad({ c[2](xl) }, { xl }, { grad_outputs = { g }, create_graph = true })[1]
    near(torch._activation_backward(g, x, c[1], c[3] or 0, c[4] or 0, c[5] or 0), want:detach(), 1e-12, c[1])
    near(torch._activation_backward(g:float(), x:float(), c[1], c[3] or 0, c[4] or 0, c[5] or 0), want:detach(), 1e-5,
      c[1] .. " float32")
  end
  T.raises(function() torch._activation_backward(g, x, "nope") end, "_activation_backward", "'act'")
end)

T.test("prelu: values, gradients in both arguments, PyTorch", function()
  T.ok(gc(torch.prelu, { smooth(2, 3, 4), leaf(3) }))
  T.ok(gc(torch.prelu, { smooth(5), leaf(1) }))
  T.ok(gc(function(a, b) return torch.prelu(a:transpose(2, 3), b) end, { smooth(2, 4, 3), leaf(3) }))
  T.ok(gc(torch.prelu, { smooth(3, 4), leaf(1) }))
  T.ok(ggc(torch.prelu, { smooth(2, 3), leaf(3) }))
  if not have_py then return T.skip("prelu vs PyTorch", P.why()) end
  local y = torch.prelu(PX, PW)
  y:backward(torch.ones_like(y))
  near(y, ref("py"), 1e-12, "prelu")
  near(PX.grad, ref("px_grad"), 1e-12, "prelu x.grad")
  near(PW.grad, ref("pw_grad"), 1e-12, "prelu w.grad")
  near(torch.prelu(PX:detach():float(), PW:detach():float()), ref("py32"), 1e-6, "prelu float32")
end)

T.test("linear and bilinear match PyTorch with gradients", function()
  T.ok(gc(torch.linear, { leaf(2, 3, 5), leaf(4, 5), leaf(4) }))
  T.ok(gc(torch.linear, { leaf(5), leaf(4, 5) }))
  T.ok(gc(function(a, ww) return torch.linear(a:t(), ww:t()) end, { leaf(5, 3), leaf(5, 4) }))
  T.ok(gc(torch.bilinear, { leaf(3, 4), leaf(3, 2), leaf(5, 4, 2), leaf(5) }))
  T.ok(gc(function(a, c, ww) return torch.bilinear(a:t(), c, ww) end, { leaf(4, 3), leaf(3, 2), leaf(2, 4, 2) }))
  T.tensor(torch.linear(torch.ones(2, 3), torch.ones(4, 3), torch.zeros(4)), { { 3, 3, 3, 3 }, { 3, 3, 3, 3 } })
  if not have_py then return T.skip("linear vs PyTorch", P.why()) end
  local y = torch.linear(LX, LW, LB)
  local z = torch.bilinear(BX1, BX2, BW, BB)
  torch.autograd.backward({ y:sum() + z:sum() })
  near(y, ref("ly"), 1e-12, "linear")
  near(LX.grad, ref("lx_grad"), 1e-12, "linear x.grad")
  near(LW.grad, ref("lw_grad"), 1e-12, "linear w.grad")
  near(LB.grad, ref("lb_grad"), 1e-12, "linear b.grad")
  near(z, ref("bz"), 1e-12, "bilinear")
  near(BX1.grad, ref("bx1_grad"), 1e-12, "bilinear x1.grad")
  near(BX2.grad, ref("bx2_grad"), 1e-12, "bilinear x2.grad")
  near(BW.grad, ref("bw_grad"), 1e-12, "bilinear weight.grad")
  near(BB.grad, ref("bb_grad"), 1e-12, "bilinear bias.grad")
  near(torch.linear(LX:detach():float(), LW:detach():float()), ref("ly32"), 1e-5, "linear float32")
end)

T.test("embedding: 1-based rows, padding_idx gets no gradient, PyTorch", function()
  local w = leaf(6, 3)
  local idx = torch.tensor({ { 1, 3, 3 }, { 6, 2, 3 } })
  local e = torch.embedding(w, idx, 3)
  T.eq(e:size(), { 2, 3, 3 })
  near(e[1][2], w:detach()[3], 0, "row 3")
  e:backward(torch.ones_like(e))
  T.tensor(w.grad:sum(2), { 3, 3, 0, 0, 0, 3 }, { tol = 1e-12 })
  local w2 = leaf(6, 3)
  torch.embedding(w2, idx, -1):sum():backward()
  T.tensor(w2.grad:sum(2), { 3, 3, 9, 0, 0, 0 }, { tol = 1e-12 })
  T.ok(gc(function(ww) return torch.embedding(ww, idx) end, { leaf(6, 3) }))
  T.ok(gc(function(ww) return torch.embedding(ww:t(), idx, 4) end, { leaf(3, 6) }))
  T.ok(ggc(function(ww) return torch.embedding(ww, idx, 2) end, { leaf(6, 3) }))
  -- int32 indices, float32 weights
  local w32 = torch.randn(5, 4)
  near(torch.embedding(w32, torch.tensor({ 5, 1 }, { dtype = torch.int32 })), torch.stack({ w32[5], w32[1] }), 0, "int32")
  if not have_py then return T.skip("embedding vs PyTorch", P.why()) end
  local y = torch.embedding(EW, EI, 4)
  y:backward(torch.arange(12, { dtype = f64 }):view(6, 2))
  near(y, ref("ey"), 0, "embedding")
  near(EW.grad, ref("ew_grad"), 1e-12, "embedding grad")
end)

T.test("one_hot", function()
  local r = torch.one_hot(torch.tensor({ 1, 3, 2 }))
  T.tensor(r, { { 1, 0, 0 }, { 0, 0, 1 }, { 0, 1, 0 } }, { dtype = "int64" })
  T.eq(torch.one_hot(torch.tensor({ { 2 }, { 1 } }), 4):size(), { 2, 1, 4 })
  T.tensor(torch.tensor({ 2, 1 }):one_hot(3), { { 0, 1, 0 }, { 1, 0, 0 } })
end)

T.test("cosine_similarity and pairwise_distance match PyTorch", function()
  local a, b, c = leaf(4, 5), leaf(4, 5), leaf(5)
  T.ok(gc(torch.cosine_similarity, { a, b }))
  T.ok(gc(function(x, y) return torch.cosine_similarity(x, y, 1) end, { a, b }))
  T.ok(gc(function(x, y) return torch.cosine_similarity(x:t(), y, -1) end, { leaf(5, 4), c }))
  T.ok(gc(torch.pairwise_distance, { a, b }))
  T.ok(gc(function(x, y) return torch.pairwise_distance(x:t(), y, 3, 1e-6, true) end, { leaf(5, 4), c }))
  T.ok(gc(function(x, y) return torch.pairwise_distance(x, y, 1) end, { a, b }))
  if not have_py then return T.skip("distances vs PyTorch", P.why()) end
  local ad, bd, cd = DA:detach(), DB:detach(), DC:detach()
  near(torch.cosine_similarity(ad, bd), ref("cos1"), 1e-12, "cos")
  near(torch.cosine_similarity(ad, cd, 2), ref("cos2"), 1e-12, "cos broadcast")
  near(torch.cosine_similarity(ad, bd, 1, 0.5), ref("cos3"), 1e-12, "cos dim 1 eps")
  near(torch.pairwise_distance(ad, bd), ref("pd1"), 1e-12, "pdist")
  near(torch.pairwise_distance(ad, cd, 1.5, 1e-6, true), ref("pd2"), 1e-12, "pdist p=1.5 keepdim")
  near(torch.pairwise_distance(ad, bd, 0.5, 0.1), ref("pd3"), 1e-10, "pdist p=0.5")
  near(torch.cosine_similarity(ad:float(), bd:float()), ref("cos32"), 1e-6, "cos float32")
  near(torch.pairwise_distance(ad:float(), bd:float()), ref("pd32"), 1e-5, "pdist float32")
end)

T.test("scaled_dot_product_attention matches PyTorch with gradients", function()
  local sdpa = torch.scaled_dot_product_attention
  T.ok(gc(function(a, b, c) return sdpa(a, b, c) end, { leaf(1, 3, 2), leaf(1, 4, 2), leaf(1, 4, 3) }))
  T.ok(gc(function(a, b, c) return sdpa(a, b, c, SBM[{ { 1, 3 }, { 1, 4 } }]) end, { leaf(3, 2), leaf(4, 2), leaf(4, 3) }))
  T.ok(gc(function(a, b, c, m) return sdpa(a, b, c, m) end, { leaf(3, 2), leaf(4, 2), leaf(4, 3), leaf(3, 4) }))
  T.ok(gc(function(a, b, c) return sdpa(a:transpose(1, 2), b, c, nil, 0, true, 0.7) end,
    { leaf(2, 3), leaf(3, 2), leaf(3, 2) }))
  if not have_py then return T.skip("sdpa vs PyTorch", P.why()) end
  local q, k, v = SQ, SK, SV
  local y1 = sdpa(q, k, v)
  local y2 = sdpa(q, k, v, SBM)
  local y3 = sdpa(q, k, v, SFM, 0, false, 0.3)
  local y4 = sdpa(q, k:narrow(3, 1, 4), v:narrow(3, 1, 4), { is_causal = true })
  torch.autograd.backward({ (y1 + y2 + y3 + y4):sum() })
  near(y1, ref("sy1"), 1e-12, "sdpa")
  near(y2, ref("sy2"), 1e-12, "sdpa bool mask")
  near(y3, ref("sy3"), 1e-12, "sdpa float mask, scale")
  near(y4, ref("sy4"), 1e-12, "sdpa causal")
  near(q.grad, ref("sq_grad"), 1e-11, "sdpa q.grad")
  near(k.grad, ref("sk_grad"), 1e-11, "sdpa k.grad")
  near(v.grad, ref("sv_grad"), 1e-11, "sdpa v.grad")
  near(sdpa(q:detach():float(), k:detach():float(), v:detach():float(), SBM), ref("sy32"), 1e-5, "sdpa float32")
end)

T.test("dropout: statistics, scaling, gradient = mask * scale * grad", function()
  local x = torch.ones(200, 500, { dtype = f64 })
  local y = torch.dropout(x, 0.3, true)
  local kept = y:ne(0)
  local frac = kept:double():mean():item()
  T.ok(math.abs(frac - 0.7) < 0.01, "kept fraction " .. frac)
  T.ok(y:masked_select(kept):sub(1 / 0.7):abs():max():item() < 1e-12, "kept values scaled by 1/(1-p)")
  -- float32 and the same statistics
  local y32 = torch.dropout(torch.ones(100000), 0.5, true)
  T.ok(math.abs(y32:ne(0):float():mean():item() - 0.5) < 0.01)
  -- gradient
  local a = leaf(50, 40)
  local b = torch.dropout(a, 0.4, true)
  local g = rnd(50, 40)
  b:backward(g)
  local m = b:detach():ne(0):double()
  near(a.grad, g * m / 0.6, 1e-12, "dropout grad")
  -- native_dropout returns the mask
  local o, mk = torch.native_dropout(a:detach(), 0.25, true)
  T.eq(mk.dtype, torch.bool)
  near(o, a:detach() * mk:double() / 0.75, 1e-12, "native_dropout")
  -- identities and p = 1
  local z = rnd(3, 4)
  T.ok(rawequal(torch.dropout(z, 0.5, false), z) or torch.dropout(z, 0.5, false):equal(z))
  T.ok(torch.dropout(z, 0, true):equal(z))
  T.ok(torch.dropout(z, 1, true):eq(0):all():item())
  local a1 = leaf(3)
  torch.dropout(a1, 1, true):sum():backward()
  T.tensor(a1.grad, { 0, 0, 0 })
  -- the same seed gives the same mask
  torch.manual_seed(3); local m1 = torch.dropout(torch.ones(1000), 0.5, true)
  torch.manual_seed(3); local m2 = torch.dropout(torch.ones(1000), 0.5, true)
  T.ok(m1:equal(m2))
  -- gradcheck with a fixed mask (the seed is reset before every evaluation)
  T.ok(gc(function(t) torch.manual_seed(5); return torch.dropout(t, 0.5, true) end, { leaf(4, 5) }))
  T.ok(gc(function(t) torch.manual_seed(5); return torch.dropout(t:t(), 0.3, true) end, { leaf(5, 4) }))
  -- in place
  local w = torch.ones(1000, { dtype = f64 })
  local r = torch.dropout_(w, 0.2, true)
  T.ok(r:equal(w) and w:eq(0):any():item(), "dropout_ works in place")
  T.ok(math.abs(w:ne(0):double():mean():item() - 0.8) < 0.06)
  T.ok(w:masked_select(w:ne(0)):sub(1.25):abs():max():item() < 1e-12)
  T.ok(gc(function(t) torch.manual_seed(9); return torch.dropout_(t * 1, 0.5, true) end, { leaf(3, 4) }))
end)

T.test("feature_dropout zeroes whole channels", function()
  local x = torch.ones(20, 30, 4, 5)
  local y = torch.feature_dropout(x, 0.5, true)
  local per = y:sum({ 3, 4 })
  T.ok(per:eq(0):logical_or(per:eq(40)):all():item(), "channels are all zero or all 2")
  local f = per:eq(0):float():mean():item()
  T.ok(math.abs(f - 0.5) < 0.1, "dropped fraction " .. f)
  local z = torch.ones(8, 6, 3)
  torch.feature_dropout_(z, 0.5, true)
  local s = z:sum(3)
  T.ok(s:eq(0):logical_or(s:eq(6)):all():item())
  T.ok(gc(function(t) torch.manual_seed(4); return torch.feature_dropout(t, 0.5, true) end, { leaf(3, 4, 2) }))
end)

T.test("rrelu", function()
  local x = rnd(4, 5)
  near(torch.rrelu(x), torch.leaky_relu(x, (1 / 8 + 1 / 3) / 2), 1e-15, "eval")
  local y = torch.rrelu(x, 0.1, 0.3, true)
  local ratio = (y / x):masked_select(x:lt(0))
  T.ok(ratio:ge(0.1 - 1e-12):all():item() and ratio:le(0.3 + 1e-12):all():item())
  near(y:masked_select(x:ge(0)), x:masked_select(x:ge(0)), 0, "positive part")
  T.ok(gc(function(t) torch.manual_seed(2); return torch.rrelu(t, 0.1, 0.3, true) end, { smooth(3, 4) }))
end)

T.test("errors name the op and the argument", function()
  local x = torch.randn(2, 3)
  T.raises(function() torch.linear(x, torch.randn(4, 5)) end, "linear", "'input'")
  T.raises(function() torch.linear(x, torch.randn(4)) end, "linear", "'weight'")
  T.raises(function() torch.linear(x, torch.randn(4, 3), torch.randn(5)) end, "linear", "'bias'")
  T.raises(function() torch.bilinear(x, x, torch.randn(2, 3, 4)) end, "bilinear", "'input2'")
  T.raises(function() torch.dropout(x, 1.5, true) end, "dropout", "'p'")
  T.raises(function() torch.dropout(torch.tensor({ 1, 2 }), 0.5, true) end, "dropout", "'input'")
  T.raises(function() torch.feature_dropout(torch.randn(3), 0.5, true) end, "feature_dropout", "'input'")
  T.raises(function() torch.embedding(torch.randn(5, 2), torch.tensor({ 0 })) end, "embedding", "'indices'", "1-based")
  T.raises(function() torch.embedding(torch.randn(5, 2), torch.tensor({ 6 })) end, "embedding", "'indices'")
  T.raises(function() torch.embedding(torch.randn(5, 2), torch.tensor({ 1.0 })) end, "embedding", "'indices'")
  T.raises(function() torch.embedding(torch.randn(5), torch.tensor({ 1 })) end, "embedding", "'weight'")
  T.raises(function() torch.embedding(torch.randn(5, 2), torch.tensor({ 1 }), 6) end, "embedding", "'padding_idx'")
  T.raises(function() torch.one_hot(torch.tensor({ 0, 1 })) end, "one_hot", "'self'")
  T.raises(function() torch.one_hot(torch.tensor({ 4 }), 3) end, "one_hot", "'self'")
  T.raises(function() torch.one_hot(torch.tensor({ 1.0 })) end, "one_hot", "'self'")
  T.raises(function() torch.one_hot(torch.tensor({ 1 }), 0) end, "one_hot", "'num_classes'")
  T.raises(function() torch.glu(torch.randn(2, 3)) end, "glu", "'self'")
  T.raises(function() torch.prelu(torch.randn(2, 3, 4), torch.randn(4)) end, "prelu", "'weight'")
  T.raises(function() torch.mish(torch.tensor({ 1, 2 })) end, "mish", "'self'")
  T.raises(function() torch.hardshrink(x, -1) end, "hardshrink", "'lambd'")
  T.raises(function() torch.celu(x, 0) end, "celu", "'alpha'")
  T.raises(function() torch.cosine_similarity(torch.randn(2, 3), torch.randn(4, 3)) end, "cosine_similarity")
  T.raises(function() torch.cosine_similarity(x, x, 3) end, "cosine_similarity", "dim")
  local q = torch.randn(2, 3, 4)
  T.raises(function() torch.scaled_dot_product_attention(q, torch.randn(2, 5, 3), q) end, "scaled_dot_product_attention", "'key'")
  T.raises(function() torch.scaled_dot_product_attention(q, q, torch.randn(2, 2, 4)) end, "scaled_dot_product_attention", "'value'")
  T.raises(function() torch.scaled_dot_product_attention(q, q, q, torch.ones(3, 3):bool(), 0, true) end,
    "scaled_dot_product_attention", "'attn_mask'")
  T.raises(function() torch.scaled_dot_product_attention(torch.randn(3), q, q) end, "scaled_dot_product_attention", "'query'")
end)

T.done()
