-- PyTorch code that ports as written, for nn.functional and the sequence models:
-- signatures (arguments by position or by name, "did you mean" for a misspelt name, option
-- names read from the ops' declarations), keyword construction of the recurrent and
-- attention modules, TransformerDecoderLayer / TransformerDecoder / Transformer and
-- nn.utils.rnn (padding, packing, PackedSequence through RNN/LSTM/GRU) against PyTorch 1.13
-- with identical weights (one Python run for all of them), and gradchecks through packing.
local T = require "testing"
local P = require "pyref"
local class = require "torch_class"
local nn = require "nn"
local F = nn.functional
local R = nn.utils.rnn

torch.manual_seed(5)
local f64 = { dtype = torch.float64 }
local function randn(...) return torch.randn(table.pack(...), f64) end
local function leaf(t) t.requires_grad = true; return t end
local function maxdiff(a, b) return (a:detach():to(torch.float64) - b:detach():to(torch.float64)):abs():max():item() end

-- a misspelling of a parameter name that is still near it: two neighbours swapped, or a
-- letter dropped from a short name
local function misspell(name)
  if #name >= 4 then
    local i = #name // 2
    local s = name:sub(1, i - 1) .. name:sub(i + 1, i + 1) .. name:sub(i, i) .. name:sub(i + 2)
    if s ~= name then return s end
  end
  return name .. "x"
end

------------------------------------------------------------------------------
-- nn.functional signatures
------------------------------------------------------------------------------
T.test("F: a call with only a misspelt options table raises 'did you mean'", function()
  T.raises(function() F.scaled_dot_product_attention({ is_casual = true }) end,
    "F.scaled_dot_product_attention: unknown option 'is_casual' (did you mean 'is_causal'?)")
  T.raises(function() F.dropout({ trainig = false }) end, "F.dropout: unknown option 'trainig' (did you mean 'training'?)")
  local q = randn(1, 2, 3, 4)
  T.raises(function() F.scaled_dot_product_attention(q, q, q, { is_casual = true }) end,
    "F.scaled_dot_product_attention: unknown option 'is_casual' (did you mean 'is_causal'?)")
  T.raises(function() F.dropout(randn(3), { trainig = false }) end, "did you mean 'training'?")
  T.raises(function() F.relu({ inplac = true }) end, "F.relu: unknown option 'inplac' (did you mean 'inplace'?)")
end)

T.test("F: every function with arguments has a signature, and rejects a misspelt name of it", function()
  local n = 0
  for name, fn in pairs(F) do
    if type(fn) == "function" and name:sub(1, 1) ~= "_" then
      local sig = class.signatures["F." .. name]
      -- F.feature_dropout is F.dropout2d under PyTorch's other name
      if not sig and rawequal(fn, F.dropout2d) then sig = class.signatures["F.dropout2d"] end
      T.ok(sig ~= nil, "F." .. name .. " has a signature")
      local p = sig.names[#sig.names]
      local bad = misspell(p)
      local err = T.raises(function() fn({ [bad] = 1 }) end, "unknown option '" .. bad .. "'")
      T.ok(err:find("did you mean '" .. p .. "'", 1, true), "F." .. name .. " suggests " .. p .. ": " .. err)
      n = n + 1
    end
  end
  T.ok(n > 70, "all of nn.functional (" .. n .. ")")
end)

T.test("F: arguments by name, as Python's keywords", function()
  local q, k, v = randn(2, 3, 4), randn(2, 5, 4), randn(2, 5, 4)
  local a = F.scaled_dot_product_attention(q, k, v, nil, 0, true)
  local b = F.scaled_dot_product_attention { query = q, key = k, value = v, is_causal = true }
  T.eq(maxdiff(a, b), 0)
  local x = randn(4, 3)
  T.ok(rawequal(F.dropout { input = x, training = false }, x))
  T.ok(rawequal(F.dropout(x, { p = 0.3, training = false }), x))
  T.eq(maxdiff(F.softmax { input = x, dim = 2 }, torch.softmax(x, 2)), 0)
  local w = randn(2, 3)
  T.eq(maxdiff(F.linear { input = x, weight = w }, x:mm(w:t())), 0)
  T.eq(maxdiff(F.leaky_relu(x, { negative_slope = 0.2 }), torch.leaky_relu(x, 0.2)), 0)
  T.raises(function() F.linear(x, w, nil, { weight = w }) end, "F.linear: argument 'weight' given twice")
  T.raises(function() F.relu(x, false, 3) end, "F.relu: too many arguments")
end)

T.test("F: parameter lists of the ops come from their declarations", function()
  local decl = {}
  for _, o in ipairs(torch._ops()) do decl[o.name] = o.signature end
  -- the op's own parameter names, in order (self as PyTorch's input)
  local function op_names(op)
    local out = {}
    local args = decl[op]:match("^[%w_.]+%((.*)%)%s*%->")
    for item in (args .. ","):gmatch("([^,]*),") do
      local nm = item:match("([%a_][%w_]*)%s*=") or item:match("([%a_][%w_]*)%s*$")
      if nm and item:match("%S") ~= "*" then out[#out + 1] = nm == "self" and "input" or nm end
    end
    return out
  end
  for _, fn in ipairs({ "linear", "bilinear", "softplus", "glu", "layer_norm", "group_norm", "pad", "avg_pool2d",
      "conv_transpose2d", "cosine_similarity", "pairwise_distance", "scaled_dot_product_attention", "hardshrink" }) do
    T.eq(class.signatures["F." .. fn].names, op_names(fn), fn)
  end
  -- the op's parameters and PyTorch's inplace / return_indices after them
  local relu = op_names("relu"); relu[#relu + 1] = "inplace"
  T.eq(class.signatures["F.relu"].names, relu)
  local mp = op_names("max_pool2d"); mp[#mp + 1] = "return_indices"
  T.eq(class.signatures["F.max_pool2d"].names, mp)
  -- the text is the declaration's, in Lua's notation
  T.eq(class.call_form("F.avg_pool2d"), "F.avg_pool2d(input, kernel_size, stride=nil, padding=0, ceil_mode=false, "
    .. "count_include_pad=true, divisor_override=nil)")
  -- where PyTorch's F names differ from the op's, its own names: training, not the op's train
  T.eq(class.signatures["F.dropout"].names, { "input", "p", "training", "inplace" })
  T.ok(decl.dropout:find("bool train=", 1, true))
  T.eq(class.signatures["F.one_hot"].names, { "tensor", "num_classes" })
  T.eq(class.signatures["F.cross_entropy"].names, { "input", "target", "weight", "size_average", "ignore_index",
    "reduce", "reduction", "label_smoothing" })
  T.eq(F._op_params("dropout"), "input, p=0.5, train=true")
end)

T.test("F losses: PyTorch's positions, and size_average / reduce decide the reduction as there", function()
  local x, y = randn(4, 3), randn(4, 3)
  T.eq(maxdiff(F.mse_loss(x, y, nil, false), (x - y):square()), 0)                 -- reduce=False
  T.near(F.mse_loss(x, y, false):item(), (x - y):square():sum():item(), 1e-12)      -- size_average=False
  T.near(F.mse_loss(x, y, { size_average = true, reduction = "sum" }):item(), (x - y):square():mean():item(), 1e-12)
  local logits, t = randn(4, 5), torch.tensor({ 1, 2, 5, 3 })
  local s = F.cross_entropy(logits, t, nil, nil, 3, nil, "sum")                     -- ignore_index=3, by position
  T.near(s:item(), F.cross_entropy(logits, t, { ignore_index = 3, reduction = "sum" }):item(), 1e-12)
  T.raises(function() F.mse_loss(x, y, "sum") end, "F.mse_loss: argument 'size_average' must be a boolean")
  T.raises(function() F.l1_loss(x, y, { reduction = "avg" }) end, "F.l1_loss: reduction must be")
  T.near(F.triplet_margin_loss(x, y, x * 2, 0.5):item(),
    F.triplet_margin_loss(x, y, x * 2, { margin = 0.5 }):item(), 1e-12)
end)

T.test("F: PyTorch's defaults and the arguments lutorch cannot honour", function()
  local x = randn(100)
  T.ok(rawequal(F.alpha_dropout(x, 0.5), x), "alpha_dropout is off unless training is given (PyTorch's default)")
  T.ok(maxdiff(F.alpha_dropout(x, 0.5, true), x) > 0)
  local w = randn(5, 3)
  local idx = torch.tensor({ 1, 2, 2 })
  T.raises(function() F.embedding(idx, w, { scale_grad_by_freq = true }) end,
    "F.embedding: scale_grad_by_freq=true is not supported")
  T.eq(maxdiff(F.embedding(idx, w, { sparse = true }), w:index_select(1, idx)), 0)
  T.raises(function() F.interpolate(randn(1, 1, 2, 2), { scale_factor = 2, antialias = true }) end,
    "F.interpolate: antialias=true is not supported")
  T.eq(F.one_hot { tensor = torch.tensor({ 1, 3 }), num_classes = 4 }:sum():item(), 2)
end)

------------------------------------------------------------------------------
-- keyword construction of the recurrent and attention modules
------------------------------------------------------------------------------
T.test("recurrent modules and cells take PyTorch's parameters by name", function()
  local m = nn.LSTM { input_size = 3, hidden_size = 4, batch_first = true }
  T.eq({ m.input_size, m.hidden_size, m.batch_first, m.num_layers }, { 3, 4, true, 1 })
  T.raises(function() nn.LSTM { input_size = 3, hidden_size = 4, batch_firts = true } end,
    "nn.LSTM: unknown option 'batch_firts' (did you mean 'batch_first'?)")
  T.raises(function() nn.LSTM({ batch_firts = true }) end, "did you mean 'batch_first'?")
  local r = nn.RNN(3, 4, 2, "relu")                 -- RNN's fourth positional is nonlinearity, as there
  T.eq({ r.num_layers, r.nonlinearity, r.mode }, { 2, "relu", "RNN_RELU" })
  local g = nn.GRU(3, 4, { num_layers = 2, bidirectional = true, dtype = torch.float64 })
  T.eq(g.weight_hh_l1_reverse.dtype.name, "float64")
  T.eq(nn.LSTM(3, 5, 1, true, false, 0, false, 2).proj_size, 2)
  T.raises(function() nn.GRU { input_size = 3, hidden_size = 4, proj_size = 2 } end, "nn.GRU: unknown option 'proj_size'")
  local c = nn.LSTMCell { input_size = 3, hidden_size = 4, bias = false }
  T.eq(c.bias_ih, nil)
  T.eq(nn.RNNCell(3, 4, { nonlinearity = "relu", dtype = torch.float64 }).weight_ih.dtype.name, "float64")
  T.raises(function() nn.GRUCell(3, 4, { bais = false }) end, "nn.GRUCell: unknown option 'bais' (did you mean 'bias'?)")
  T.ok(nn.RNNBase("GRU", 3, 4, { num_layers = 2 }).weight_ih_l1 ~= nil)
  -- forward by name too
  local x = torch.randn(2, 5, 3)
  local out, hc = m { input = x }
  T.eq(out.shape, { 2, 5, 4 }); T.eq(hc[1].shape, { 1, 2, 4 })
  T.raises(function() m(x, { h_x = 1 }) end, "nn.LSTM:forward: unknown option 'h_x' (did you mean 'hx'?)")
  local h = c { input = torch.randn(2, 3) }
  T.eq(h.shape, { 2, 4 })
end)

T.test("attention and transformer modules take PyTorch's parameters by name", function()
  local layer = nn.TransformerEncoderLayer { d_model = 8, nhead = 2, dim_feedforward = 32 }
  T.eq(layer.linear1.weight.shape, { 32, 8 })
  T.eq(layer.dropout.p, 0.1)
  T.raises(function() nn.TransformerEncoderLayer { d_model = 8, nhead = 2, dim_feedfoward = 32 } end,
    "nn.TransformerEncoderLayer: unknown option 'dim_feedfoward' (did you mean 'dim_feedforward'?)")
  local l2 = nn.TransformerEncoderLayer(8, 2, 16, 0.0, "gelu")       -- all positional
  T.eq({ l2.linear1.weight.shape[1], l2.dropout.p, l2._activation }, { 16, 0.0, "gelu" })
  local mha = nn.MultiheadAttention { embed_dim = 8, num_heads = 2, batch_first = true, dtype = torch.float64 }
  T.eq(mha.in_proj_weight.dtype.name, "float64")
  T.raises(function() nn.MultiheadAttention(8, 2, { add_zero_atn = true }) end, "did you mean 'add_zero_attn'?")
  local enc = nn.TransformerEncoder { encoder_layer = layer, num_layers = 2, enable_nested_tensor = false }
  T.eq(#enc.layers, 2)
  T.raises(function() nn.TransformerEncoder(layer, 2, { nrom = nn.LayerNorm(8) }) end, "did you mean 'norm'?")
  -- forward methods by name
  local x = randn(2, 4, 8)
  mha:eval()
  local o1, w1 = mha(x, x, x, nil, true, nil, false)
  local o2, w2 = mha { query = x, key = x, value = x, average_attn_weights = false }
  T.eq(maxdiff(o1, o2), 0); T.eq(maxdiff(w1, w2), 0)
  T.raises(function() mha(x, x, x, { need_weight = false }) end,
    "nn.MultiheadAttention:forward: unknown option 'need_weight' (did you mean 'need_weights'?)")
  layer:eval()
  local src = torch.randn(4, 2, 8)
  T.eq(maxdiff(layer(src, nil, nil, false), layer { src = src }), 0)
  T.raises(function() layer(src, { src_mak = src }) end, "did you mean 'src_mask'?")
  T.raises(function() enc(src, { msk = src }) end, "nn.TransformerEncoder:forward: unknown option 'msk' (did you mean 'mask'?)")
end)

T.test("every signature of these modules rejects a misspelt name with 'did you mean'", function()
  local n = 0
  for name, sig in pairs(class.signatures) do
    if name:match("^nn%.[%w]*RNN") or name:match("^nn%.LSTM") or name:match("^nn%.GRU") or name:match("^nn%.Transformer")
        or name:match("^nn%.MultiheadAttention") or name:match("^nn%.utils%.rnn%.") then
      local p = sig.names[#sig.names]
      local bad = misspell(p)
      local ok, err = pcall(sig.parse, { [bad] = 1 })
      T.ok(not ok and err:find(name .. ": unknown option '" .. bad .. "' (did you mean '" .. p .. "'?)", 1, true),
        name .. ": " .. tostring(err))
      n = n + 1
    end
  end
  T.ok(n >= 30, "signatures checked: " .. n)
  -- the calls themselves parse first
  T.raises(function() nn.Transformer({ nhaed = 2 }) end, "nn.Transformer: unknown option 'nhaed' (did you mean 'nhead'?)")
  T.raises(function() nn.TransformerDecoderLayer({ dim_feedfoward = 2 }) end, "did you mean 'dim_feedforward'?")
  T.raises(function() R.pad_sequence({ batch_frist = true }) end,
    "nn.utils.rnn.pad_sequence: unknown option 'batch_frist' (did you mean 'batch_first'?)")
  T.raises(function() R.pack_padded_sequence({ enforce_sort = false }) end, "did you mean 'enforce_sorted'?")
end)

------------------------------------------------------------------------------
-- transformer decoder and Transformer against PyTorch
------------------------------------------------------------------------------
local cases = {}

-- a case is built where it is declared; on a build that lacks what it needs, its test
-- fails with the error instead of the whole file stopping there
local function guard(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if not ok then cases[#cases + 1] = { kind = "error", name = name, err = err } end
end

-- PyTorch's state_dict names: ModuleList children count from 0 there
local function py_name(n) return (n:gsub("layers%.(%d+)", function(d) return "layers." .. (tonumber(d) - 1) end)) end

-- m (float64, eval); args: list of {name, value}; leaves: names whose grads are compared
local function mcase(name, m, ctor, args, leaves, lua_call, py_call)
  m:double():eval()
  local byname = {}
  for _, a in ipairs(args) do byname[a[1]] = a[2] end
  local out = lua_call(m, byname)
  local go = torch.randn(out.shape, f64)
  ;(out * go):sum():backward()
  local names, W, grads = {}, {}, {}
  for _, l in ipairs(leaves) do grads[#grads + 1] = byname[l].grad:reshape(-1) end
  for n, p in m:named_parameters() do
    names[#names + 1] = py_name(n)
    W[#W + 1] = p:detach()
    grads[#grads + 1] = p.grad:reshape(-1)
  end
  cases[#cases + 1] = { kind = "module", name = name, ctor = ctor, args = args, leaves = leaves, py_call = py_call,
    names = names, W = W, go = go, out = out:detach(), grad = torch.cat(grads, 1) }
end

local E, NH, L, S, N = 8, 2, 4, 3, 2

guard("TransformerDecoderLayer relu, all masks", function()
  local x, mem = leaf(randn(L, N, E)), leaf(randn(S, N, E))
  local tm = nn.Transformer.generate_square_subsequent_mask(L, { dtype = torch.float64 })
  local mm = randn(L, S)
  local tkpm = torch.tensor({ { false, false, false, true }, { false, true, false, false } })
  local mkpm = torch.tensor({ { false, false, true }, { false, false, false } })
  mcase("TransformerDecoderLayer relu, all masks",
    nn.TransformerDecoderLayer(E, NH, { dim_feedforward = 16, dropout = 0 }),
    "nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0)",
    { { "x", x }, { "mem", mem }, { "tm", tm }, { "mm", mm }, { "tkpm", tkpm }, { "mkpm", mkpm } }, { "x", "mem" },
    function(m, a)
      return m(a.x, a.mem, { tgt_mask = a.tm, memory_mask = a.mm, tgt_key_padding_mask = a.tkpm,
        memory_key_padding_mask = a.mkpm })
    end,
    "m(x, mem, tgt_mask=tm, memory_mask=mm, tgt_key_padding_mask=tkpm, memory_key_padding_mask=mkpm)")
end)
guard("TransformerDecoderLayer gelu, norm_first, batch_first", function()
  local x, mem = leaf(randn(N, L, E)), leaf(randn(N, S, E))
  mcase("TransformerDecoderLayer gelu, norm_first, batch_first",
    nn.TransformerDecoderLayer { d_model = E, nhead = NH, dim_feedforward = 16, dropout = 0.3, activation = "gelu",
      norm_first = true, batch_first = true, layer_norm_eps = 1e-3 },
    "nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.3, activation='gelu', norm_first=True, "
      .. "batch_first=True, layer_norm_eps=1e-3)",
    { { "x", x }, { "mem", mem } }, { "x", "mem" },
    function(m, a) return m(a.x, a.mem) end, "m(x, mem)")
end)
guard("TransformerDecoderLayer unbatched, positional arguments", function()
  local x, mem = leaf(randn(L, E)), leaf(randn(S, E))
  mcase("TransformerDecoderLayer unbatched, positional arguments",
    nn.TransformerDecoderLayer(E, NH, 16, 0.0, "relu", 1e-4, false, false, true),
    "nn.TransformerDecoderLayer(8, 2, 16, 0.0, F.relu, 1e-4, False, False)",
    { { "x", x }, { "mem", mem } }, { "x", "mem" }, function(m, a) return m(a.x, a.mem) end, "m(x, mem)")
end)
guard("TransformerDecoder 2 layers, norm, causal tgt_mask", function()
  local x, mem = leaf(randn(L, N, E)), leaf(randn(S, N, E))
  local tm = nn.Transformer.generate_square_subsequent_mask(L, { dtype = torch.float64 })
  local layer = nn.TransformerDecoderLayer(E, NH, { dim_feedforward = 16 })
  mcase("TransformerDecoder 2 layers, norm, causal tgt_mask",
    nn.TransformerDecoder(layer, 2, nn.LayerNorm(E)),
    "nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, dim_feedforward=16), 2, norm=nn.LayerNorm(8))",
    { { "x", x }, { "mem", mem }, { "tm", tm } }, { "x", "mem" },
    function(m, a) return m(a.x, a.mem, a.tm) end, "m(x, mem, tgt_mask=tm)")
end)
guard("Transformer 2+2 layers, masks", function()
  local src, tgt = leaf(randn(5, N, E)), leaf(randn(L, N, E))
  local sm = randn(5, 5) * 0.1
  local tm = nn.Transformer.generate_square_subsequent_mask(L, { dtype = torch.float64 })
  local skpm = torch.tensor({ { false, false, false, false, true }, { false, false, false, false, false } })
  local tkpm = torch.tensor({ { false, false, false, false }, { false, false, false, true } })
  mcase("Transformer 2+2 layers, masks",
    nn.Transformer { d_model = E, nhead = NH, num_encoder_layers = 2, num_decoder_layers = 2, dim_feedforward = 16,
      dropout = 0.1 },
    "nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16)",
    { { "src", src }, { "tgt", tgt }, { "sm", sm }, { "tm", tm }, { "skpm", skpm }, { "tkpm", tkpm } },
    { "src", "tgt" },
    function(m, a)
      return m(a.src, a.tgt, { src_mask = a.sm, tgt_mask = a.tm, src_key_padding_mask = a.skpm,
        tgt_key_padding_mask = a.tkpm, memory_key_padding_mask = a.skpm })
    end,
    "m(src, tgt, src_mask=sm, tgt_mask=tm, src_key_padding_mask=skpm, tgt_key_padding_mask=tkpm, "
      .. "memory_key_padding_mask=skpm)")
end)
guard("Transformer batch_first, norm_first, gelu, 1+2 layers", function()
  local src, tgt = leaf(randn(N, 5, E)), leaf(randn(N, L, E))
  mcase("Transformer batch_first, norm_first, gelu, 1+2 layers",
    nn.Transformer(E, NH, 1, 2, 16, 0.0, "gelu", nil, nil, 1e-5, true, true),
    "nn.Transformer(8, 2, 1, 2, 16, 0.0, 'gelu', None, None, 1e-5, True, True)",
    { { "src", src }, { "tgt", tgt } }, { "src", "tgt" },
    function(m, a) return m(a.src, a.tgt) end, "m(src, tgt)")
end)

------------------------------------------------------------------------------
-- nn.utils.rnn against PyTorch
------------------------------------------------------------------------------
-- padding and packing alone: the padded tensor and the packed pieces
local seqs = { randn(3, 2), randn(5, 2), randn(1, 2), randn(4, 2) }
local pad_results, packed_u, packed_s, unpacked, unpacked_lens
local pack_ok, pack_err = xpcall(function()
  pad_results = { R.pad_sequence(seqs), R.pad_sequence(seqs, true, -1.5) }
  packed_u = R.pack_padded_sequence(pad_results[1], { 3, 5, 1, 4 }, { enforce_sorted = false })
  packed_s = R.pack_sequence({ seqs[2], seqs[4], seqs[1], seqs[3] })
  unpacked, unpacked_lens = R.pad_packed_sequence(packed_u, { batch_first = true, padding_value = 7, total_length = 6 })
end, debug.traceback)

-- a recurrent layer over a PackedSequence: the padded output, final states and every gradient
local function packed_case(kind, ctor_lua, ctor_py, batch_first, lengths, enforce_sorted, with_h0)
  guard(ctor_py .. " over a PackedSequence", function()
    local m = ctor_lua():double()
    m:eval()
    local B, Tm = #lengths, 0
    for _, l in ipairs(lengths) do if l > Tm then Tm = l end end
    local x = leaf(batch_first and randn(B, Tm, m.input_size) or randn(Tm, B, m.input_size))
    local D = m.bidirectional and 2 or 1
    local Hout = (m.proj_size or 0) > 0 and m.proj_size or m.hidden_size
    local hx, h0, c0
    if with_h0 then
      h0 = leaf(randn(D * m.num_layers, B, Hout))
      if kind == "LSTM" then c0 = leaf(randn(D * m.num_layers, B, m.hidden_size)); hx = { h0, c0 } else hx = h0 end
    end
    local packed = R.pack_padded_sequence(x, lengths, batch_first, enforce_sorted)
    local out, st = m(packed, hx)
    local y = R.pad_packed_sequence(out, batch_first)
    local hn, cn = st, nil
    if kind == "LSTM" then hn, cn = st[1], st[2] end
    local gy, gh = torch.randn(y.shape, f64), torch.randn(hn.shape, f64)
    local gc = cn and torch.randn(cn.shape, f64) or torch.zeros(1, f64)
    local loss = (y * gy):sum() + (hn * gh):sum()
    if cn then loss = loss + (cn * gc):sum() end
    loss:backward()
    local grads = { x.grad:reshape(-1) }
    if h0 then grads[#grads + 1] = h0.grad:reshape(-1) end
    if c0 then grads[#grads + 1] = c0.grad:reshape(-1) end
    local W = {}
    for _, p in ipairs(m:parameters()) do W[#W + 1] = p:detach(); grads[#grads + 1] = p.grad:reshape(-1) end
    cases[#cases + 1] = { kind = "packed", name = ctor_py .. " over a PackedSequence", ctor = ctor_py,
      x = x:detach(), lengths = lengths, batch_first = batch_first, enforce_sorted = enforce_sorted,
      h0 = h0 and h0:detach(), c0 = c0 and c0:detach(), W = W, gy = gy, gh = gh, gc = gc,
      y = y:detach(), hn = hn:detach(), cn = cn and cn:detach(), grad = torch.cat(grads, 1) }
  end)
end

packed_case("LSTM", function() return nn.LSTM(3, 4, { num_layers = 2, bidirectional = true }) end,
  "nn.LSTM(3, 4, num_layers=2, bidirectional=True)", false, { 5, 3, 3, 1 }, true, true)
packed_case("LSTM", function() return nn.LSTM(3, 4, { batch_first = true, proj_size = 2, bidirectional = true }) end,
  "nn.LSTM(3, 4, batch_first=True, proj_size=2, bidirectional=True)", true, { 2, 5, 1, 4 }, false, true)
packed_case("GRU", function() return nn.GRU { input_size = 3, hidden_size = 4, num_layers = 2, bidirectional = true } end,
  "nn.GRU(3, 4, num_layers=2, bidirectional=True)", false, { 3, 6, 2 }, false, false)
packed_case("GRU", function() return nn.GRU(3, 5, { batch_first = true }) end,
  "nn.GRU(3, 5, batch_first=True)", true, { 1, 4, 4, 2 }, false, true)
packed_case("RNN", function() return nn.RNN(3, 4, 2, "relu") end,
  "nn.RNN(3, 4, 2, nonlinearity='relu')", false, { 4, 2 }, true, true)
packed_case("RNN", function() return nn.RNN(3, 4, { bidirectional = true, bias = false }) end,
  "nn.RNN(3, 4, bidirectional=True, bias=False)", true, { 2, 3, 1 }, false, false)

------------------------------------------------------------------------------
-- PyTorch, once
------------------------------------------------------------------------------
local PY_HELPERS = [[
import warnings
warnings.simplefilter('ignore')
U = nn.utils.rnn
def run(m, names, W, leaves, go, f):
    m.load_state_dict(dict(zip(names, W)))
    m.eval()
    out = f(m)
    (out * go).sum().backward()
    params = dict(m.named_parameters())
    g = torch.cat([t.grad.reshape(-1) for t in leaves] + [params[n].grad.reshape(-1) for n in names])
    return [out, g, len(params)]
def run_packed(m, W, x, lengths, batch_first, enforce_sorted, h0, c0, gy, gh, gc):
    with torch.no_grad():
        for p, w in zip(m.parameters(), W): p.copy_(w)
    m.eval()
    x = x.clone().requires_grad_()
    leaves = [x]
    hx = None
    if h0 is not None:
        h0 = h0.clone().requires_grad_(); leaves.append(h0); hx = h0
        if c0 is not None:
            c0 = c0.clone().requires_grad_(); leaves.append(c0); hx = (h0, c0)
    p = U.pack_padded_sequence(x, torch.tensor(lengths), batch_first=batch_first, enforce_sorted=enforce_sorted)
    out, st = m(p, hx) if hx is not None else m(p)
    y, _ = U.pad_packed_sequence(out, batch_first=batch_first)
    hn, cn = st if isinstance(st, tuple) else (st, None)
    loss = (y * gy).sum() + (hn * gh).sum() + ((cn * gc).sum() if cn is not None else 0)
    loss.backward()
    g = torch.cat([t.grad.reshape(-1) for t in leaves + list(m.parameters())])
    return [y, hn, cn if cn is not None else torch.zeros(1), g]
R = []
]]

local ref
if P.available() then
  local inputs, body, outputs = {}, { PY_HELPERS }, {}
  for i, c in ipairs(cases) do
    local pre = "c" .. i .. "_"
    if c.kind == "error" then
      body[#body + 1] = "R.append(None)"
    elseif c.kind == "module" then
      inputs[pre .. "names"], inputs[pre .. "W"], inputs[pre .. "go"] = c.names, c.W, c.go
      local assigns = {}
      for _, a in ipairs(c.args) do
        local t = a[2]
        if t.requires_grad then t = t:detach(); t.requires_grad = true end
        inputs[pre .. a[1]] = t
        assigns[#assigns + 1] = ("%s = %s%s"):format(a[1], pre, a[1])
      end
      body[#body + 1] = "def f" .. i .. "():\n    " .. table.concat(assigns, "\n    ")
        .. ("\n    return run(%s, %snames, %sW, [%s], %sgo, lambda m: %s)"):format(
          c.ctor, pre, pre, table.concat(c.leaves, ", "), pre, c.py_call)
      body[#body + 1] = "R.append(f" .. i .. "())"
      for k = 0, 1 do outputs[#outputs + 1] = ("R[%d][%d]"):format(i - 1, k) end
      outputs[#outputs + 1] = ("R[%d][2]"):format(i - 1)
    else
      for _, k in ipairs({ "x", "W", "gy", "gh", "gc", "h0", "c0" }) do
        if c[k] ~= nil then inputs[pre .. k] = c[k] end
      end
      inputs[pre .. "lengths"] = c.lengths
      body[#body + 1] = ("R.append(run_packed(%s, %sW, %sx, %slengths, %s, %s, %s, %s, %sgy, %sgh, %sgc))"):format(
        c.ctor, pre, pre, pre, c.batch_first and "True" or "False", c.enforce_sorted and "True" or "False",
        c.h0 and (pre .. "h0") or "None", c.c0 and (pre .. "c0") or "None", pre, pre, pre)
      for k = 0, 3 do outputs[#outputs + 1] = ("R[%d][%d]"):format(i - 1, k) end
    end
  end
  -- padding and packing
  for i, s in ipairs(seqs) do inputs["s" .. i] = s end
  body[#body + 1] = "seqs = [s1, s2, s3, s4]"
  body[#body + 1] = "pu = U.pack_padded_sequence(U.pad_sequence(seqs), torch.tensor([3, 5, 1, 4]), enforce_sorted=False)"
  body[#body + 1] = "ps = U.pack_sequence([s2, s4, s1, s3])"
  body[#body + 1] = "up, upl = U.pad_packed_sequence(pu, batch_first=True, padding_value=7, total_length=6)"
  body[#body + 1] = "m5 = Transformer_mask = nn.Transformer.generate_square_subsequent_mask(5)"
  for _, e in ipairs({ "U.pad_sequence(seqs)", "U.pad_sequence(seqs, True, -1.5)", "pu.data", "pu.batch_sizes",
      "pu.sorted_indices + 1", "pu.unsorted_indices + 1", "ps.data", "ps.batch_sizes", "up", "upl", "m5" }) do
    outputs[#outputs + 1] = e
  end
  ref = P.run(inputs, table.concat(body, "\n"), outputs)
end

local function close(a, b, what, tol)
  T.eq(a.shape, b.shape, what .. " shape")
  local d = maxdiff(a, b)
  T.ok(d < (tol or 1e-10), ("%s differs from PyTorch by %g"):format(what, d))
end

local k = 0
for _, c in ipairs(cases) do
  if c.kind == "error" then
    T.test(c.name .. " vs PyTorch", function() error(c.err, 0) end)
  elseif not ref then T.skip(c.name, P.why())
  elseif c.kind == "module" then
    local r = { ref[k + 1], ref[k + 2], ref[k + 3] }
    k = k + 3
    T.test(c.name .. " vs PyTorch", function()
      close(c.out, r[1], "output")
      close(c.grad, r[2], "gradients")
      -- the parameter names are PyTorch's state_dict keys (ModuleList children counted from 0
      -- there): PyTorch's strict load_state_dict took them all, and there are as many
      T.eq(#c.names, r[3], "parameter count")
    end)
  else
    local r = { ref[k + 1], ref[k + 2], ref[k + 3], ref[k + 4] }
    k = k + 4
    T.test(c.name .. " vs PyTorch", function()
      close(c.y, r[1], "padded output")
      close(c.hn, r[2], "h_n")
      if c.cn then close(c.cn, r[3], "c_n") end
      close(c.grad, r[4], "gradients")
    end)
  end
end

if ref then
  T.test("pad_sequence, pack_padded_sequence, pack_sequence, pad_packed_sequence vs PyTorch", function()
    if not pack_ok then error(pack_err, 0) end
    local r = { table.unpack(ref, k + 1, k + 11) }
    close(pad_results[1], r[1], "pad_sequence")
    close(pad_results[2], r[2], "pad_sequence batch_first, padding_value")
    close(packed_u.data, r[3], "packed data")
    T.eq(packed_u.batch_sizes:totable(), r[4]:to(torch.int64):totable())
    T.eq(packed_u.sorted_indices:totable(), r[5]:to(torch.int64):totable())
    T.eq(packed_u.unsorted_indices:totable(), r[6]:to(torch.int64):totable())
    close(packed_s.data, r[7], "pack_sequence data")
    T.eq(packed_s.batch_sizes:totable(), r[8]:to(torch.int64):totable())
    T.eq(packed_s.sorted_indices, nil)
    close(unpacked, r[9], "pad_packed_sequence batch_first, padding_value, total_length")
    T.eq(unpacked_lens:totable(), r[10]:to(torch.int64):totable())
    T.eq(nn.Transformer.generate_square_subsequent_mask(5):totable(), r[11]:totable(), "generate_square_subsequent_mask")
  end)
else
  T.skip("nn.utils.rnn vs PyTorch", P.why())
end

------------------------------------------------------------------------------
-- nn.utils.rnn: behaviour, gradients, errors
------------------------------------------------------------------------------
T.test("gradcheck through pack_padded_sequence, an LSTM and pad_packed_sequence", function()
  local m = nn.LSTM(2, 3, { bidirectional = true }):double()
  local x = leaf(randn(4, 3, 2))
  local h0, c0 = leaf(randn(2, 3, 3)), leaf(randn(2, 3, 3))
  local inputs = { x, h0, c0 }
  for _, p in ipairs(m:parameters()) do inputs[#inputs + 1] = p end
  T.ok(torch.autograd.gradcheck(function()
    local p = R.pack_padded_sequence(x, { 2, 4, 1 }, { enforce_sorted = false })
    local out, hc = m(p, { h0, c0 })
    local y = R.pad_packed_sequence(out, { padding_value = 0.5 })
    return y, hc[1], hc[2]
  end, inputs))
end)

T.test("gradcheck through pad_sequence, pack_sequence and a GRU over packed data", function()
  local a, b = leaf(randn(3, 2)), leaf(randn(1, 2))
  T.ok(torch.autograd.gradcheck(function() return R.pad_sequence({ a, b }, true, 2.0, "left") end, { a, b }))
  local g = nn.GRU(2, 2, { num_layers = 2 }):double()
  local inputs = { a, b }
  for _, p in ipairs(g:parameters()) do inputs[#inputs + 1] = p end
  T.ok(torch.autograd.gradcheck(function()
    local out, h = g(R.pack_sequence({ b, a }, false))
    return out.data, h
  end, inputs))
end)

T.test("pad_sequence: padding side, value, batch_first, a tensor of sequences", function()
  local a, b = torch.tensor({ 1, 2, 3 }), torch.tensor({ 4 })
  T.tensor(R.pad_sequence({ a, b }), { { 1, 4 }, { 2, 0 }, { 3, 0 } })
  T.tensor(R.pad_sequence({ a, b }, { batch_first = true, padding_value = -1, padding_side = "left" }),
    { { 1, 2, 3 }, { -1, -1, 4 } })
  T.tensor(R.pad_sequence(torch.tensor({ { 1, 2 }, { 3, 4 } }), true), { { 1, 2 }, { 3, 4 } })
  T.raises(function() R.pad_sequence({}) end, "nn.utils.rnn.pad_sequence", "non-empty list")
  T.raises(function() R.pad_sequence({ torch.zeros(2, 3), torch.zeros(2, 4) }) end,
    "nn.utils.rnn.pad_sequence", "trailing sizes of sequences[2]")
  T.raises(function() R.pad_sequence({ a }, { padding_side = "middle" }) end, "padding_side")
end)

T.test("packing: sorted and unsorted batches, round trips, errors", function()
  local x = randn(4, 3, 2)
  T.raises(function() R.pack_padded_sequence(x, { 2, 4, 1 }) end, "nn.utils.rnn.pack_padded_sequence",
    "sorted in decreasing order", "enforce_sorted = false")
  T.raises(function() R.pack_padded_sequence(x, { 4, 0, 0 }) end, "greater than 0")
  T.raises(function() R.pack_padded_sequence(x, { 5, 2, 1 }) end, "larger than the input's sequence length 4")
  T.raises(function() R.pack_padded_sequence(x, { 4, 2 }) end, "expected 3 lengths")
  T.raises(function() R.pack_padded_sequence(x, { 4, 2.5, 1 }) end, "lengths must be integers")
  local p = R.pack_padded_sequence(x, torch.tensor({ 2, 4, 1 }), { enforce_sorted = false })
  T.eq(p.batch_sizes:totable(), { 3, 2, 1, 1 })
  T.eq(p.sorted_indices:totable(), { 2, 1, 3 })
  T.eq(p.unsorted_indices:totable(), { 2, 1, 3 })
  local y, l = R.pad_packed_sequence(p)
  T.eq(l:totable(), { 2, 4, 1 })
  T.eq(maxdiff(y:narrow(1, 1, 2):select(2, 1), x:narrow(1, 1, 2):select(2, 1)), 0)
  T.eq(y[{ { 3, 4 }, 1 }]:abs():sum():item(), 0)
  T.raises(function() R.pad_packed_sequence(p, { total_length = 3 }) end, "total_length", "at least", "(4)")
  T.raises(function() R.pad_packed_sequence(x) end, "nn.utils.rnn.pad_packed_sequence", "must be a PackedSequence")
  -- unpack / unpad give the sequences back
  local seqs = { randn(2, 3), randn(4, 3), randn(1, 3) }
  local back = R.unpack_sequence(R.pack_sequence(seqs, { enforce_sorted = false }))
  for i = 1, 3 do T.eq(maxdiff(back[i], seqs[i]), 0) end
  local again = R.unpad_sequence(R.pad_sequence(seqs, true), { 2, 4, 1 }, true)
  for i = 1, 3 do T.eq(maxdiff(again[i], seqs[i]), 0) end
  -- the class: conversions keep the layout; construction checks it
  local q = p:float()
  T.eq(q.data.dtype.name, "float32")
  T.eq(q.batch_sizes:totable(), p.batch_sizes:totable())
  T.eq(q.sorted_indices:totable(), p.sorted_indices:totable())
  T.ok(tostring(p):find("^PackedSequence%(data="))
  T.eq(class.type(p), "nn.utils.rnn.PackedSequence")
  local made = R.PackedSequence(p.data, p.batch_sizes, p.sorted_indices)
  T.eq(made.unsorted_indices:totable(), { 2, 1, 3 })
  T.raises(function() R.PackedSequence(p.data, { 3, 3 }) end, "nn.utils.rnn.PackedSequence", "batch_sizes add up to 6")
  T.raises(function() R.PackedSequence(p.data, { 1, 3, 2, 1 }) end, "non-increasing")
end)

T.test("recurrent layers over a PackedSequence: the same as each sequence alone", function()
  local m = nn.GRU(2, 3, { bidirectional = true }):double()
  local seqs = { randn(2, 2), randn(5, 2), randn(3, 2) }
  local out, h = m(R.pack_sequence(seqs, { enforce_sorted = false }))
  local y = R.pad_packed_sequence(out, { batch_first = true })
  for i, s in ipairs(seqs) do
    local o1, h1 = m(s)                         -- unbatched
    T.ok(maxdiff(y[i]:narrow(1, 1, s:size(1)), o1) < 1e-12, "output of sequence " .. i)
    T.ok(maxdiff(h:select(2, i), h1) < 1e-12, "h_n of sequence " .. i)
  end
  local lstm = nn.LSTM(2, 3):double()
  T.raises(function() lstm(R.pack_sequence({ randn(2, 3) })) end, "LSTM", "PackedSequence's data", "input_size = 2")
  T.raises(function() lstm(R.pack_sequence({ randn(2, 2) }), { randn(1, 2, 3), randn(1, 1, 3) }) end,
    "LSTM", "hx[1] (h_0)", "[1, 1, 3]")
end)

------------------------------------------------------------------------------
-- the Transformer's structure and errors
------------------------------------------------------------------------------
T.test("Transformer: structure, init, square subsequent mask, errors", function()
  local t = nn.Transformer { d_model = 8, nhead = 2, num_encoder_layers = 2, num_decoder_layers = 1, dim_feedforward = 16 }
  local sd = t:state_dict()
  for _, key in ipairs({ "encoder.layers.1.self_attn.in_proj_weight", "encoder.layers.2.linear2.bias", "encoder.norm.weight",
      "decoder.layers.1.multihead_attn.out_proj.weight", "decoder.layers.1.norm3.bias", "decoder.norm.bias" }) do
    T.ok(sd[key] ~= nil, key)
  end
  T.eq(sd["decoder.layers.2.norm1.weight"], nil)
  -- every matrix xavier-uniform, as PyTorch's _reset_parameters
  local w = t.encoder.layers[1].linear1.weight
  T.ok(w:abs():max():item() <= math.sqrt(6 / (8 + 16)) and w:abs():max():item() > 0.5 * math.sqrt(6 / 24))
  local m = nn.Transformer.generate_square_subsequent_mask(3)
  T.tensor(m, { { 0, -math.huge, -math.huge }, { 0, 0, -math.huge }, { 0, 0, 0 } }, { dtype = "float32" })
  T.eq(t:generate_square_subsequent_mask(3):totable(), m:totable())
  T.raises(function() nn.Transformer.generate_square_subsequent_mask(-1) end, "generate_square_subsequent_mask", "sz")
  local src, tgt = torch.randn(5, 2, 8), torch.randn(3, 2, 8)
  t:eval()
  T.eq(t(src, tgt, { tgt_mask = nn.Transformer.generate_square_subsequent_mask(3) }).shape, { 3, 2, 8 })
  T.eq(t(torch.randn(5, 8), torch.randn(3, 8)).shape, { 3, 8 })
  -- tgt_is_causal without a mask applies the causal mask
  T.eq(maxdiff(t(src, tgt, { tgt_is_causal = true }), t(src, tgt, { tgt_mask = m })), 0)
  T.raises(function() t(src, torch.randn(3, 4, 8)) end, "Transformer", "batch number of src and tgt")
  T.raises(function() t(src, torch.randn(3, 2, 6)) end, "Transformer", "d_model (8)")
  T.raises(function() t(src, "x") end, "Transformer: argument 'tgt' must be a tensor")
  T.raises(function() nn.TransformerDecoder("layer", 2) end, "TransformerDecoder", "decoder_layer")
  T.raises(function() nn.TransformerDecoderLayer(8, 2, { activation = "tanh" }) end, "TransformerDecoderLayer", "activation")
  -- bias=false (PyTorch 2.1's): no bias anywhere in the layer
  local nb = nn.TransformerDecoderLayer(8, 2, { dim_feedforward = 16, bias = false })
  for name in nb:named_parameters() do T.ok(not name:find("bias"), name) end
  T.eq(nb(torch.randn(3, 8), torch.randn(4, 8)).shape, { 3, 8 })
  -- custom encoder / decoder
  local enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 1)
  local t2 = nn.Transformer { d_model = 8, nhead = 2, custom_encoder = enc, num_decoder_layers = 1, dim_feedforward = 16 }
  T.ok(rawequal(t2.encoder, enc))
  T.eq(#t2.decoder.layers, 1)
  -- float64 throughout with dtype
  local t3 = nn.Transformer(8, 2, 1, 1, 16, { dtype = torch.float64 })
  T.eq(t3.decoder.norm.weight.dtype.name, "float64")
  T.eq(t3.encoder.layers[1].self_attn.in_proj_weight.dtype.name, "float64")
end)

T.done()
