-- nn.MultiheadAttention, TransformerEncoderLayer, TransformerEncoder: outputs, attention
-- weights and gradients against PyTorch with identical weights (one Python run for all
-- cases), gradcheck, masks, clones, errors.
local T = require "testing"
local P = require "pyref"
local nn = require "nn"

torch.manual_seed(11)
local f64 = { dtype = torch.float64 }
local has_ln = torch.layer_norm ~= nil
local LN_WHY = "torch.layer_norm (the norm helper's op) is not in this build yet"

local function randn(...) return torch.randn(table.pack(...), f64) end
local function leaf(t) t.requires_grad = true; return t end

------------------------------------------------------------------------------
-- cases: m (float64, eval), a lutorch call and the same call in Python
------------------------------------------------------------------------------
local cases = {}

-- args: list of {name, value}; leaves: names whose grads are compared (in order)
local function mcase(name, m, ctor, args, leaves, lua_call, py_call)
  m:double():eval()
  local byname = {}
  for _, a in ipairs(args) do byname[a[1]] = a[2] end
  local out, w = lua_call(m, byname)
  local go = torch.randn(out.shape, f64)
  local gw = w and torch.randn(w.shape, f64) or nil
  local loss = (out * go):sum()
  if w then loss = loss + (w * gw):sum() end
  loss:backward()
  local names, W, grads = {}, {}, {}
  for _, l in ipairs(leaves) do grads[#grads + 1] = byname[l].grad:reshape(-1) end
  for n, p in m:named_parameters() do
    names[#names + 1] = n:gsub("^layers%.(%d+)", function(d) return "layers." .. (tonumber(d) - 1) end)
    W[#W + 1] = p:detach()
    grads[#grads + 1] = p.grad:reshape(-1)
  end
  cases[#cases + 1] = { name = name, ctor = ctor, args = args, leaves = leaves, py_call = py_call,
    names = names, W = W, go = go, gw = gw, out = out:detach(), w = w and w:detach(), grad = torch.cat(grads, 1) }
end

local E, NH, L, S, N = 8, 2, 4, 3, 2

-- self-attention, sequence-major, averaged weights
do
  local x = leaf(randn(L, N, E))
  mcase("MHA self-attention", nn.MultiheadAttention(E, NH), "nn.MultiheadAttention(8, 2)",
    { { "x", x } }, { "x" },
    function(m, a) return m(a.x, a.x, a.x) end,
    "m(x, x, x)")
end
-- cross-attention, batch_first, bool attn_mask and key_padding_mask, per-head weights
do
  local q, k, v = leaf(randn(N, L, E)), leaf(randn(N, S, E)), leaf(randn(N, S, E))
  local am = torch.tensor({ { false, true, false }, { false, false, true }, { true, false, false }, { false, false, false } })
  local kpm = torch.tensor({ { false, false, true }, { false, false, false } })
  mcase("MHA cross-attention batch_first, bool masks, per-head weights",
    nn.MultiheadAttention(E, NH, { batch_first = true }), "nn.MultiheadAttention(8, 2, batch_first=True)",
    { { "q", q }, { "k", k }, { "v", v }, { "am", am }, { "kpm", kpm } }, { "q", "k", "v" },
    function(m, a) return m(a.q, a.k, a.v, { attn_mask = a.am, key_padding_mask = a.kpm, average_attn_weights = false }) end,
    "m(q, k, v, attn_mask=am, key_padding_mask=kpm, average_attn_weights=False)")
end
-- kdim/vdim (separate projections), float 3-D attn_mask, no bias
do
  local q, k, v = leaf(randn(L, N, E)), leaf(randn(S, N, 5)), leaf(randn(S, N, 6))
  local am = randn(N * NH, L, S)
  mcase("MHA kdim/vdim, float 3-D mask, bias=false",
    nn.MultiheadAttention(E, NH, { kdim = 5, vdim = 6, bias = false }),
    "nn.MultiheadAttention(8, 2, kdim=5, vdim=6, bias=False)",
    { { "q", q }, { "k", k }, { "v", v }, { "am", am } }, { "q", "k", "v" },
    function(m, a) return m(a.q, a.k, a.v, { attn_mask = a.am }) end,
    "m(q, k, v, attn_mask=am)")
end
-- unbatched with a key padding mask; add_bias_kv and add_zero_attn
do
  local q, k = leaf(randn(L, E)), leaf(randn(S, E))
  local kpm = torch.tensor({ false, true, false })
  mcase("MHA unbatched, add_bias_kv, add_zero_attn",
    nn.MultiheadAttention(E, NH, { add_bias_kv = true, add_zero_attn = true }),
    "nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True)",
    { { "q", q }, { "k", k }, { "kpm", kpm } }, { "q", "k" },
    function(m, a) return m(a.q, a.k, a.k, { key_padding_mask = a.kpm }) end,
    "m(q, k, k, key_padding_mask=kpm)")
end
-- need_weights=false (the scaled_dot_product_attention path) and is_causal
do
  local x = leaf(randn(N, L, E))
  local causal = torch.ones(L, L, { dtype = torch.bool }):triu(1)
  mcase("MHA is_causal, need_weights=false",
    nn.MultiheadAttention(E, NH, { batch_first = true }), "nn.MultiheadAttention(8, 2, batch_first=True)",
    { { "x", x }, { "causal", causal } }, { "x" },
    function(m, a) return (m(a.x, a.x, a.x, { is_causal = true, need_weights = false })) end,
    "m(x, x, x, attn_mask=causal, need_weights=False)[0]")
end

if has_ln then
  do
    local x = leaf(randn(L, N, E))
    local am = randn(L, L)
    local kpm = torch.tensor({ { false, false, false, true }, { false, true, false, false } })
    mcase("TransformerEncoderLayer relu, masks",
      nn.TransformerEncoderLayer(E, NH, { dim_feedforward = 16, dropout = 0 }),
      "nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)",
      { { "x", x }, { "am", am }, { "kpm", kpm } }, { "x" },
      function(m, a) return m(a.x, { src_mask = a.am, src_key_padding_mask = a.kpm }) end,
      "m(x, src_mask=am, src_key_padding_mask=kpm)")
  end
  do
    local x = leaf(randn(N, L, E))
    mcase("TransformerEncoderLayer gelu, norm_first, batch_first",
      nn.TransformerEncoderLayer(E, NH, { dim_feedforward = 16, dropout = 0.2, activation = "gelu",
        norm_first = true, batch_first = true, layer_norm_eps = 1e-3 }),
      "nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.2, activation='gelu', norm_first=True, batch_first=True, layer_norm_eps=1e-3)",
      { { "x", x } }, { "x" },
      function(m, a) return m(a.x) end, "m(x)")
  end
  do
    local x = leaf(randn(L, E))
    mcase("TransformerEncoderLayer unbatched",
      nn.TransformerEncoderLayer(E, NH, { dim_feedforward = 16, dropout = 0 }),
      "nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)",
      { { "x", x } }, { "x" }, function(m, a) return m(a.x) end, "m(x)")
  end
  do
    local x = leaf(randn(L, N, E))
    local causal = torch.ones(L, L, { dtype = torch.bool }):triu(1)
    local layer = nn.TransformerEncoderLayer(E, NH, { dim_feedforward = 16, dropout = 0.1 })
    mcase("TransformerEncoder 2 layers, norm, causal mask",
      nn.TransformerEncoder(layer, 2, { norm = nn.LayerNorm(E) }),
      "nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, dim_feedforward=16), 2, norm=nn.LayerNorm(8))",
      { { "x", x }, { "causal", causal } }, { "x" },
      function(m, a) return m(a.x, { mask = a.causal }) end, "m(x, mask=causal)")
  end
end

------------------------------------------------------------------------------
-- PyTorch, once
------------------------------------------------------------------------------
local PY_HELPERS = [[
def run(m, names, W, leaves, go, gw, f):
    m.load_state_dict(dict(zip(names, W)))
    m.eval()
    r = f(m)
    out, w = r if isinstance(r, tuple) else (r, None)
    loss = (out * go).sum() + ((w * gw).sum() if gw is not None else 0)
    loss.backward()
    params = dict(m.named_parameters())
    g = torch.cat([t.grad.reshape(-1) for t in leaves] + [params[n].grad.reshape(-1) for n in names])
    return [out, w if w is not None else torch.zeros(1), g]
R = []
]]

local ref
if P.available() then
  local inputs, body, outputs = {}, { PY_HELPERS }, {}
  for i, c in ipairs(cases) do
    local pre = "c" .. i .. "_"
    inputs[pre .. "names"], inputs[pre .. "W"], inputs[pre .. "go"] = c.names, c.W, c.go
    if c.gw then inputs[pre .. "gw"] = c.gw end
    local assigns = {}
    for _, a in ipairs(c.args) do
      local t = a[2]
      if t.requires_grad then t = t:detach(); t.requires_grad = true end
      inputs[pre .. a[1]] = t
      assigns[#assigns + 1] = ("%s = %s%s"):format(a[1], pre, a[1])
    end
    local leaves = {}
    for j, l in ipairs(c.leaves) do leaves[j] = l end
    body[#body + 1] = "def f" .. i .. "():\n    " .. table.concat(assigns, "\n    ")
      .. ("\n    return run(%s, %snames, %sW, [%s], %sgo, %s, lambda m: %s)"):format(
        c.ctor, pre, pre, table.concat(leaves, ", "), pre, c.gw and (pre .. "gw") or "None", c.py_call)
    body[#body + 1] = "R.append(f" .. i .. "())"
    for k = 0, 2 do outputs[#outputs + 1] = ("R[%d][%d]"):format(i - 1, k) end
  end
  ref = P.run(inputs, table.concat(body, "\n"), outputs)
end

local function close(a, b, what, tol)
  T.eq(a.shape, b.shape, what .. " shape")
  local d = (a - b):abs():max():item()
  T.ok(d < (tol or 1e-10), ("%s differs from PyTorch by %g"):format(what, d))
end

for i, c in ipairs(cases) do
  if not ref then T.skip(c.name, P.why()) break end
  T.test(c.name .. " vs PyTorch", function()
    close(c.out, ref[3 * i - 2], "output")
    if c.w then close(c.w, ref[3 * i - 1], "attention weights") end
    close(c.grad, ref[3 * i], "gradients")
  end)
end
if not has_ln then T.skip("TransformerEncoderLayer / TransformerEncoder vs PyTorch", LN_WHY) end

------------------------------------------------------------------------------
-- structure and behaviour
------------------------------------------------------------------------------
T.test("MultiheadAttention parameters as PyTorch", function()
  local m = nn.MultiheadAttention(8, 2)
  local names = {}
  for n, p in m:named_parameters() do names[#names + 1] = n end
  T.eq(names, { "in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias" })
  T.eq(m.in_proj_weight.shape, { 24, 8 })
  T.ok(m.in_proj_bias:abs():max():item() == 0 and m.out_proj.bias:abs():max():item() == 0)
  local bound = math.sqrt(6 / (8 + 24))
  T.ok(m.in_proj_weight:abs():max():item() <= bound, "xavier_uniform bound")
  local s = nn.MultiheadAttention(8, 2, { kdim = 3, vdim = 5, add_bias_kv = true })
  names = {}
  for n in s:named_parameters() do names[#names + 1] = n end
  T.eq(names, { "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias", "bias_k", "bias_v",
    "out_proj.weight", "out_proj.bias" })
  T.eq(s.k_proj_weight.shape, { 8, 3 }); T.eq(s.bias_k.shape, { 1, 1, 8 })
end)

T.test("MultiheadAttention shapes, float32, need_weights", function()
  local m = nn.MultiheadAttention(6, 3)
  local q, k = torch.randn(5, 2, 6), torch.randn(7, 2, 6)
  local out, w = m(q, k, k)
  T.eq(out.shape, { 5, 2, 6 }); T.eq(w.shape, { 2, 5, 7 })
  T.near(w:sum(-1):mean():item(), 1, 1e-5)
  local o2, w2 = m(q, k, k, { need_weights = false })
  T.ok(w2 == nil)
  T.ok((o2 - out):abs():max():item() < 1e-5, "both paths agree")
  local _, wh = m(q, k, k, { average_attn_weights = false })
  T.eq(wh.shape, { 2, 3, 5, 7 })
  -- a masked key gets no weight
  local kpm = torch.zeros(2, 7, { dtype = torch.bool }); kpm[{ 1, 3 }] = true
  local _, wm = m(q, k, k, { key_padding_mask = kpm })
  T.ok(wm[1]:select(2, 3):abs():max():item() == 0)
end)

T.test("MultiheadAttention dropout acts in training only", function()
  local m = nn.MultiheadAttention(8, 2, { dropout = 0.5 })
  local x = torch.randn(6, 2, 8)
  m:eval()
  T.ok((m(x, x, x) - m(x, x, x)):abs():max():item() == 0)
  m:train()
  T.ok((m(x, x, x) - m(x, x, x)):abs():max():item() > 0)
end)

T.test("gradcheck MultiheadAttention (query, key, value, parameters)", function()
  local m = nn.MultiheadAttention(4, 2, { kdim = 3 }):double()
  local q = leaf(randn(2, 1, 4))
  local k = leaf(randn(3, 1, 3))
  local v = leaf(randn(3, 1, 4):transpose(1, 1))
  local kpm = torch.tensor({ { false, false, true } })
  local inputs = { q, k, v }
  for _, p in ipairs(m:parameters()) do inputs[#inputs + 1] = p end
  T.ok(torch.autograd.gradcheck(function() return m(q, k, v, { key_padding_mask = kpm }) end, inputs))
end)

if has_ln then
  T.test("TransformerEncoder clones the layer", function()
    local layer = nn.TransformerEncoderLayer(8, 2, { dim_feedforward = 16 })
    local enc = nn.TransformerEncoder(layer, 3)
    T.eq(#enc:parameters(), 3 * #layer:parameters())
    local sd = enc:state_dict()
    T.ok(sd["layers.1.self_attn.in_proj_weight"] ~= nil and sd["layers.3.norm2.bias"] ~= nil)
    local l1, l2 = enc.layers[1], enc.layers[2]
    T.ok((l1.linear1.weight - layer.linear1.weight):abs():max():item() == 0, "same values")
    torch.no_grad(function() l1.linear1.weight:add_(1) end)
    T.ok((l2.linear1.weight - layer.linear1.weight):abs():max():item() == 0, "independent tensors")
    T.ok(not rawequal(l1.self_attn, l2.self_attn))
    local x = torch.randn(4, 2, 8)
    enc:eval()
    T.eq(enc(x).shape, { 4, 2, 8 })
    x.requires_grad = true
    enc:train()
    enc(x):sum():backward()
    T.ok(enc.layers[3].linear2.weight.grad ~= nil)
  end)
else
  T.skip("TransformerEncoder clones the layer", LN_WHY)
end

T.test("errors name the layer", function()
  T.raises(function() nn.MultiheadAttention(10, 3) end, "MultiheadAttention", "divisible")
  local m = nn.MultiheadAttention(8, 2)
  T.raises(function() m(torch.randn(4, 2, 6), torch.randn(4, 2, 6), torch.randn(4, 2, 6)) end,
    "MultiheadAttention", "embedding dimension of 8")
  T.raises(function() m(torch.randn(4, 2, 8), torch.randn(3, 2, 8), torch.randn(3, 2, 8),
    { attn_mask = torch.zeros(4, 4, { dtype = torch.bool }) }) end, "MultiheadAttention", "attn_mask", "[4, 3]")
  T.raises(function() m(torch.randn(4, 2, 8), torch.randn(3, 2, 8), torch.randn(3, 2, 8),
    { key_padding_mask = torch.zeros(2, 4, { dtype = torch.bool }) }) end, "MultiheadAttention", "key_padding_mask")
  T.raises(function() m(torch.randn(4, 8), torch.randn(3, 2, 8), torch.randn(3, 2, 8)) end,
    "MultiheadAttention", "key and value must be 2-D")
  T.raises(function() nn.TransformerEncoderLayer(8, 2, { activation = "tanh" }) end,
    "TransformerEncoderLayer", "activation")
  T.raises(function() nn.TransformerEncoder("x", 2) end, "TransformerEncoder", "encoder_layer")
end)

T.done()
