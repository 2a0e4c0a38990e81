-- nn/transformer.lua — attention layers as in torch.nn: MultiheadAttention,
-- TransformerEncoderLayer, TransformerEncoder.
--
--   local mha = nn.MultiheadAttention(16, 4, {batch_first = true})
--   local out, weights = mha(q, k, v, {key_padding_mask = pad, attn_mask = causal})
--   local layer = nn.TransformerEncoderLayer(16, 4, {dim_feedforward = 64, dropout = 0})
--   local enc = nn.TransformerEncoder(layer, 3, {norm = nn.LayerNorm(16)})
--   local y = enc(x, {mask = m, src_key_padding_mask = pad})
--
-- Parameter and submodule names follow PyTorch (in_proj_weight, in_proj_bias,
-- out_proj.weight, self_attn.*, linear1.*, norm1.*, ...), so a state_dict maps one to one
-- except that nn.ModuleList counts from 1 ("layers.1." where PyTorch writes "layers.0.").
-- Masks as in PyTorch's MultiheadAttention: a bool mask is true where attention is NOT
-- allowed; a float mask is added to the attention scores.
local torch = require "torch"
local base = require "nn.module"
local Module, Parameter = base.Module, base.Parameter
local pyval = base.pyval
local check_options = require("torch_class").check_options

local TR = {}

-- the rest of nn, reached lazily: nn/init.lua requires this file while it is being built
local function nnlib() return require "nn" end
local function F() return require "nn.functional" end
local function init() return require "nn.initializers" end

local function shape_str(t)
  local s = {}
  for i, v in ipairs(t.shape) do s[i] = tostring(v) end
  return "[" .. table.concat(s, ", ") .. "]"
end

local function is_opts(v) return type(v) == "table" and not torch.is_tensor(v) and not base.is_module(v) end

------------------------------------------------------------------------------
-- deep copy of a module (TransformerEncoder's clones): new parameters and buffers with
-- the same values, submodules copied recursively, shared ones shared once
------------------------------------------------------------------------------
local function copy_plain(v, memo)
  if type(v) ~= "table" then return v end
  if torch.is_tensor(v) then return v:detach():clone() end
  if memo[v] then return memo[v] end
  if base.is_module(v) then return TR._deepcopy(v, memo) end
  local t = {}
  memo[v] = t
  for k, x in pairs(v) do t[k] = copy_plain(x, memo) end
  return setmetatable(t, getmetatable(v))
end

local function copy_od(od, fn)
  local n = { keys = {}, vals = {} }
  for i, k in ipairs(od.keys) do n.keys[i] = k end
  for k, v in pairs(od.vals) do n.vals[k] = fn(v) end
  return n
end

function TR._deepcopy(m, memo)
  memo = memo or {}
  if memo[m] then return memo[m] end
  local obj = {}
  memo[m] = obj
  obj._parameters = copy_od(rawget(m, "_parameters"), function(p)
    if memo[p] then return memo[p] end
    local q = Parameter(p:detach():clone(), p.requires_grad)
    memo[p] = q
    return q
  end)
  obj._buffers = copy_od(rawget(m, "_buffers"), function(b)
    if memo[b] then return memo[b] end
    local q = b:clone()
    memo[b] = q
    return q
  end)
  obj._modules = copy_od(rawget(m, "_modules"), function(c) return TR._deepcopy(c, memo) end)
  local attrs = {}
  for k, v in pairs(rawget(m, "_attrs")) do
    -- hooks stay with the original, as copy.deepcopy would copy them; we keep them too
    attrs[k] = copy_plain(v, memo)
  end
  obj._attrs = attrs
  local np = {}
  for k, v in pairs(rawget(m, "_non_persistent") or {}) do np[k] = v end
  obj._non_persistent = np
  for k, v in next, m do   -- anything else the module keeps raw (next: modules define __pairs)
    if rawget(obj, k) == nil then rawset(obj, k, copy_plain(v, memo)) end
  end
  return setmetatable(obj, getmetatable(m))
end

------------------------------------------------------------------------------
-- MultiheadAttention(embed_dim, num_heads, {dropout=0, bias=true, add_bias_kv=false,
--   add_zero_attn=false, kdim=, vdim=, batch_first=false})
------------------------------------------------------------------------------
local MHA = Module:extend("MultiheadAttention")
TR.MultiheadAttention = MHA

local MHA_OPTS = { "dropout", "bias", "add_bias_kv", "add_zero_attn", "kdim", "vdim", "batch_first", "dtype" }
function MHA:__init(embed_dim, num_heads, opts)
  opts = check_options("nn.MultiheadAttention", opts, MHA_OPTS)
  local who = "MultiheadAttention"
  if math.type(embed_dim) ~= "integer" or embed_dim <= 0 then
    error(("%s: embed_dim must be a positive integer, got %s"):format(who, tostring(embed_dim)), 3)
  end
  if math.type(num_heads) ~= "integer" or num_heads <= 0 then
    error(("%s: num_heads must be a positive integer, got %s"):format(who, tostring(num_heads)), 3)
  end
  if embed_dim % num_heads ~= 0 then
    error(("%s: embed_dim must be divisible by num_heads (got %d and %d)"):format(who, embed_dim, num_heads), 3)
  end
  local kdim, vdim = opts.kdim or embed_dim, opts.vdim or embed_dim
  self.embed_dim, self.kdim, self.vdim = embed_dim, kdim, vdim
  self._qkv_same_embed_dim = kdim == embed_dim and vdim == embed_dim
  self.num_heads = num_heads
  self.dropout = opts.dropout or 0
  self.batch_first = opts.batch_first == true
  self.head_dim = embed_dim // num_heads
  self.add_zero_attn = opts.add_zero_attn == true
  -- (an options table without a dtype is refused by torch.empty, so pass one only if given)
  local function empty(...)
    if opts.dtype then return torch.empty({ ... }, { dtype = opts.dtype }) end
    return torch.empty({ ... })
  end
  if self._qkv_same_embed_dim then
    self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim))
  else
    self.q_proj_weight = Parameter(empty(embed_dim, embed_dim))
    self.k_proj_weight = Parameter(empty(embed_dim, kdim))
    self.v_proj_weight = Parameter(empty(embed_dim, vdim))
  end
  local bias = opts.bias ~= false
  if bias then self.in_proj_bias = Parameter(empty(3 * embed_dim)) end
  self.out_proj = nnlib().Linear(embed_dim, embed_dim, { bias = bias, dtype = opts.dtype })
  if opts.add_bias_kv then
    self.bias_k = Parameter(empty(1, 1, embed_dim))
    self.bias_v = Parameter(empty(1, 1, embed_dim))
  end
  self:_reset_parameters()
end

function MHA:_reset_parameters()
  local I = init()
  if self._qkv_same_embed_dim then I.xavier_uniform_(self.in_proj_weight)
  else
    I.xavier_uniform_(self.q_proj_weight); I.xavier_uniform_(self.k_proj_weight)
    I.xavier_uniform_(self.v_proj_weight)
  end
  if self.in_proj_bias ~= nil then
    I.constant_(self.in_proj_bias, 0)
    I.constant_(self.out_proj.bias, 0)
  end
  if self.bias_k ~= nil then I.xavier_normal_(self.bias_k); I.xavier_normal_(self.bias_v) end
end

-- the float mask (broadcastable to (N, heads, L, S)) from a bool or float mask
local function float_mask(m, dtype)
  if m.dtype == torch.bool or m.dtype == torch.uint8 then
    return torch.zeros(m.shape, { dtype = dtype }):masked_fill(m:to(torch.bool), -math.huge)
  end
  if not m:is_floating_point() then
    error(("MultiheadAttention: masks must be bool or floating point, got %s"):format(m.dtype.name), 4)
  end
  return m:to(dtype)
end

local function pad_last(m, value)
  local s = m.shape
  s[#s] = 1
  return torch.cat({ m, torch.full(s, value, { dtype = m.dtype }) }, #s)
end

-- forward(query, key, value, {key_padding_mask=, need_weights=true, attn_mask=,
--   average_attn_weights=true, is_causal=false}) -> attn_output, attn_weights (nil unless
-- need_weights). PyTorch's positional form (q, k, v, key_padding_mask, need_weights,
-- attn_mask, average_attn_weights, is_causal) works too.
local MHA_FORWARD_OPTS = { "key_padding_mask", "need_weights", "attn_mask", "average_attn_weights", "is_causal" }
function MHA:forward(query, key, value, a, ...)
  local who = "MultiheadAttention"
  local o
  if is_opts(a) then o = check_options("nn.MultiheadAttention:forward", a, MHA_FORWARD_OPTS)
  else
    local r = table.pack(...)
    o = { key_padding_mask = a, need_weights = r[1], attn_mask = r[2], average_attn_weights = r[3], is_causal = r[4] }
  end
  key = key or query
  value = value or key
  for _, e in ipairs({ { query, "query" }, { key, "key" }, { value, "value" } }) do
    if not torch.is_tensor(e[1]) then
      error(("%s: argument '%s' must be a tensor, got %s"):format(who, e[2], type(e[1])), 2)
    end
  end
  local qd = query:dim()
  if qd ~= 2 and qd ~= 3 then
    error(("%s: query should be unbatched 2-D or batched 3-D, got %d-D tensor %s"):format(who, qd, shape_str(query)), 2)
  end
  if key:dim() ~= qd or value:dim() ~= qd then
    error(("%s: key and value must be %d-D like query, got key %s and value %s"):format(
      who, qd, shape_str(key), shape_str(value)), 2)
  end
  local E, nh, hd = self.embed_dim, self.num_heads, self.head_dim
  if query:size(-1) ~= E then
    error(("%s: was expecting embedding dimension of %d, but got %d (query %s)"):format(
      who, E, query:size(-1), shape_str(query)), 2)
  end
  if key:size(-1) ~= self.kdim or value:size(-1) ~= self.vdim then
    error(("%s: expected key of last dim %d and value of last dim %d, got key %s and value %s"):format(
      who, self.kdim, self.vdim, shape_str(key), shape_str(value)), 2)
  end
  local batched = qd == 3
  -- work batch-major: (N, L, E)
  local q, k, v
  if not batched then q, k, v = query:unsqueeze(1), key:unsqueeze(1), value:unsqueeze(1)
  elseif self.batch_first then q, k, v = query, key, value
  else q, k, v = query:transpose(1, 2), key:transpose(1, 2), value:transpose(1, 2) end
  local N, L, S = q:size(1), q:size(2), k:size(2)
  if k:size(1) ~= N or v:size(1) ~= N or v:size(2) ~= S then
    error(("%s: key and value must have the same sequence length and batch size as each other "
      .. "and the batch size of query; got query %s, key %s, value %s"):format(
      who, shape_str(query), shape_str(key), shape_str(value)), 2)
  end
  local linear = F().linear
  local b = self.in_proj_bias
  local bq, bk, bv
  if b ~= nil then bq, bk, bv = b:narrow(1, 1, E), b:narrow(1, E + 1, E), b:narrow(1, 2 * E + 1, E) end
  if self._qkv_same_embed_dim then
    local W = self.in_proj_weight
    if rawequal(query, key) and rawequal(key, value) then
      -- self-attention: one product for q, k and v
      local qkv = linear(q, W, b)
      q, k, v = qkv:narrow(3, 1, E), qkv:narrow(3, E + 1, E), qkv:narrow(3, 2 * E + 1, E)
    else
      q = linear(q, W:narrow(1, 1, E), bq)
      k = linear(k, W:narrow(1, E + 1, E), bk)
      v = linear(v, W:narrow(1, 2 * E + 1, E), bv)
    end
  else
    q = linear(q, self.q_proj_weight, bq)
    k = linear(k, self.k_proj_weight, bk)
    v = linear(v, self.v_proj_weight, bv)
  end
  local dtype = q.dtype

  -- masks, checked and turned into one float mask of shape (N or 1, heads or 1, L, S)
  local attn_mask, kpm = o.attn_mask, o.key_padding_mask
  if attn_mask == nil and o.is_causal then
    attn_mask = torch.ones(L, S, { dtype = torch.bool }):triu(1)
  end
  if attn_mask ~= nil then
    if not torch.is_tensor(attn_mask) then
      error(("%s: attn_mask must be a tensor, got %s"):format(who, type(attn_mask)), 2)
    end
    if attn_mask:dim() == 2 then
      if attn_mask:size(1) ~= L or attn_mask:size(2) ~= S then
        error(("%s: the shape of the 2D attn_mask is %s, but should be [%d, %d]"):format(
          who, shape_str(attn_mask), L, S), 2)
      end
      attn_mask = float_mask(attn_mask, dtype):view(1, 1, L, S)
    elseif attn_mask:dim() == 3 then
      if attn_mask:size(1) ~= N * nh or attn_mask:size(2) ~= L or attn_mask:size(3) ~= S then
        error(("%s: the shape of the 3D attn_mask is %s, but should be [%d, %d, %d]"):format(
          who, shape_str(attn_mask), N * nh, L, S), 2)
      end
      attn_mask = float_mask(attn_mask, dtype):view(N, nh, L, S)
    else
      error(("%s: attn_mask's dimension %d is not supported (2-D or 3-D)"):format(who, attn_mask:dim()), 2)
    end
  end
  if kpm ~= nil then
    if not torch.is_tensor(kpm) then
      error(("%s: key_padding_mask must be a tensor, got %s"):format(who, type(kpm)), 2)
    end
    local want = batched and ("[%d, %d]"):format(N, S) or ("[%d]"):format(S)
    if kpm:dim() ~= (batched and 2 or 1) or kpm:size(-1) ~= S or (batched and kpm:size(1) ~= N) then
      error(("%s: expecting key_padding_mask shape of %s, but got %s"):format(who, want, shape_str(kpm)), 2)
    end
    kpm = float_mask(kpm, dtype):view(N, 1, 1, S)
  end

  -- extra key/value positions
  if self.bias_k ~= nil then
    k = torch.cat({ k, self.bias_k:expand(N, 1, E) }, 2)
    v = torch.cat({ v, self.bias_v:expand(N, 1, E) }, 2)
    if attn_mask then attn_mask = pad_last(attn_mask, 0) end
    if kpm then kpm = pad_last(kpm, 0) end
    S = S + 1
  end
  -- heads: (N, L, E) -> (N * heads, L, head_dim)
  local function heads(t, len) return t:reshape(N, len, nh, hd):transpose(2, 3):reshape(N * nh, len, hd) end
  q, k, v = heads(q, L), heads(k, S), heads(v, S)
  if self.add_zero_attn then
    k = torch.cat({ k, torch.zeros(N * nh, 1, hd, { dtype = dtype }) }, 2)
    v = torch.cat({ v, torch.zeros(N * nh, 1, hd, { dtype = dtype }) }, 2)
    if attn_mask then attn_mask = pad_last(attn_mask, 0) end
    if kpm then kpm = pad_last(kpm, 0) end
    S = S + 1
  end
  local mask
  if attn_mask and kpm then mask = attn_mask + kpm else mask = attn_mask or kpm end
  if mask then mask = mask:expand(N, nh, L, S):reshape(N * nh, L, S) end

  local p = self.training and self.dropout or 0
  local need_weights = o.need_weights ~= false
  local out, w
  if not need_weights then
    out = torch.scaled_dot_product_attention(q, k, v, mask, p, false)
  else
    local qs = q / math.sqrt(hd)
    if mask then w = torch.baddbmm(mask, qs, k:transpose(2, 3))
    else w = torch.bmm(qs, k:transpose(2, 3)) end
    w = F().softmax(w, -1)
    if p > 0 then w = F().dropout(w, p, true) end
    out = torch.bmm(w, v)
  end
  -- (N * heads, L, head_dim) -> (N, L, E), then the output projection
  out = out:view(N, nh, L, hd):transpose(2, 3):reshape(N, L, E)
  out = self.out_proj(out)
  if not batched then out = out:squeeze(1)
  elseif not self.batch_first then out = out:transpose(1, 2) end
  if not need_weights then return out, nil end
  w = w:view(N, nh, L, S)
  if o.average_attn_weights ~= false then w = w:mean(2) end
  if not batched then w = w:squeeze(1) end
  return out, w
end

------------------------------------------------------------------------------
-- TransformerEncoderLayer(d_model, nhead, {dim_feedforward=2048, dropout=0.1,
--   activation="relu"|"gelu"|function, layer_norm_eps=1e-5, batch_first=false,
--   norm_first=false, bias=true})
------------------------------------------------------------------------------
local EncoderLayer = Module:extend("TransformerEncoderLayer")
TR.TransformerEncoderLayer = EncoderLayer

local function activation_fn(a)
  if a == nil or a == "relu" then return "relu" end
  if a == "gelu" then return "gelu" end
  if type(a) == "function" or base.is_module(a) then return a end
  error(("TransformerEncoderLayer: activation should be relu/gelu, not %s"):format(tostring(a)), 4)
end

local LAYER_OPTS = { "dim_feedforward", "dropout", "activation", "layer_norm_eps", "batch_first", "norm_first",
  "bias", "dtype" }
function EncoderLayer:__init(d_model, nhead, opts)
  opts = check_options("nn.TransformerEncoderLayer", opts, LAYER_OPTS)
  local nn = nnlib()
  local p = opts.dropout
  if p == nil then p = 0.1 end
  local dff = opts.dim_feedforward or 2048
  local eps = opts.layer_norm_eps or 1e-5
  local bias = opts.bias ~= false
  local fo = { dtype = opts.dtype, bias = bias }
  self.self_attn = MHA(d_model, nhead, { dropout = p, bias = bias, batch_first = opts.batch_first, dtype = opts.dtype })
  self.linear1 = nn.Linear(d_model, dff, fo)
  self.dropout = nn.Dropout(p)
  self.linear2 = nn.Linear(dff, d_model, fo)
  self.norm_first = opts.norm_first == true
  self.norm1 = nn.LayerNorm(d_model, { eps = eps, bias = bias, dtype = opts.dtype })
  self.norm2 = nn.LayerNorm(d_model, { eps = eps, bias = bias, dtype = opts.dtype })
  self.dropout1 = nn.Dropout(p)
  self.dropout2 = nn.Dropout(p)
  self.batch_first = opts.batch_first == true
  local act = activation_fn(opts.activation)
  if base.is_module(act) then self.activation = act
  else self._activation = act end
end

function EncoderLayer:_act(x)
  local a = self._activation
  if a == "relu" then return F().relu(x) end
  if a == "gelu" then return F().gelu(x) end
  if a ~= nil then return a(x) end
  return self.activation(x)
end

function EncoderLayer:_sa_block(x, attn_mask, kpm, is_causal)
  x = self.self_attn(x, x, x, { attn_mask = attn_mask, key_padding_mask = kpm, need_weights = false,
                                is_causal = is_causal })
  return self.dropout1(x)
end

function EncoderLayer:_ff_block(x)
  x = self.linear2(self.dropout(self:_act(self.linear1(x))))
  return self.dropout2(x)
end

-- forward(src, {src_mask=, src_key_padding_mask=, is_causal=}) or (src, src_mask, src_key_padding_mask, is_causal)
local LAYER_FORWARD_OPTS = { "src_mask", "src_key_padding_mask", "is_causal" }
function EncoderLayer:forward(src, a, b, c)
  local mask, kpm, causal
  if is_opts(a) then
    check_options("nn.TransformerEncoderLayer:forward", a, LAYER_FORWARD_OPTS)
    mask, kpm, causal = a.src_mask, a.src_key_padding_mask, a.is_causal
  else mask, kpm, causal = a, b, c end
  if not torch.is_tensor(src) then
    error(("TransformerEncoderLayer: argument 'src' must be a tensor, got %s"):format(type(src)), 2)
  end
  local x = src
  if self.norm_first then
    x = x + self:_sa_block(self.norm1(x), mask, kpm, causal)
    x = x + self:_ff_block(self.norm2(x))
  else
    x = self.norm1(x + self:_sa_block(x, mask, kpm, causal))
    x = self.norm2(x + self:_ff_block(x))
  end
  return x
end

------------------------------------------------------------------------------
-- TransformerEncoder(encoder_layer, num_layers, {norm=}): num_layers deep copies of the layer
------------------------------------------------------------------------------
local Encoder = Module:extend("TransformerEncoder")
TR.TransformerEncoder = Encoder

local ENCODER_OPTS = { "norm" }
function Encoder:__init(encoder_layer, num_layers, opts)
  opts = check_options("nn.TransformerEncoder", opts, ENCODER_OPTS)
  if not base.is_module(encoder_layer) then
    error(("TransformerEncoder: argument 'encoder_layer' must be a Module, got %s"):format(type(encoder_layer)), 3)
  end
  if math.type(num_layers) ~= "integer" or num_layers < 0 then
    error(("TransformerEncoder: argument 'num_layers' must be a non-negative integer, got %s"):format(
      tostring(num_layers)), 3)
  end
  local layers = {}
  for i = 1, num_layers do layers[i] = TR._deepcopy(encoder_layer) end
  self.layers = nnlib().ModuleList(layers)
  self.num_layers = num_layers
  if opts.norm ~= nil then self.norm = opts.norm end
end

-- forward(src, {mask=, src_key_padding_mask=, is_causal=}) or (src, mask, src_key_padding_mask, is_causal)
local ENCODER_FORWARD_OPTS = { "mask", "src_key_padding_mask", "is_causal" }
function Encoder:forward(src, a, b, c)
  local mask, kpm, causal
  if is_opts(a) then
    check_options("nn.TransformerEncoder:forward", a, ENCODER_FORWARD_OPTS)
    mask, kpm, causal = a.mask, a.src_key_padding_mask, a.is_causal
  else mask, kpm, causal = a, b, c end
  local x = src
  for _, layer in ipairs(self.layers:children()) do
    x = layer(x, { src_mask = mask, src_key_padding_mask = kpm, is_causal = causal })
  end
  if self.norm ~= nil then x = self.norm(x) end
  return x
end

return TR
