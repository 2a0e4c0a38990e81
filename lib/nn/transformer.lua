-- nn/transformer.lua — attention layers as in torch.nn: MultiheadAttention,
-- TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer, TransformerDecoder
-- and Transformer.
--
--   local mha = nn.MultiheadAttention(16, 4, {batch_first = true})
--   local out, weights = mha(q, k, v, {key_padding_mask = pad, attn_mask = causal})
--   local layer = nn.TransformerEncoderLayer{d_model = 16, nhead = 4, dim_feedforward = 64, dropout = 0}
--   local enc = nn.TransformerEncoder(layer, 3, {norm = nn.LayerNorm(16)})
--   local y = enc(x, {mask = m, src_key_padding_mask = pad})
--   local model = nn.Transformer{d_model = 16, nhead = 4, num_encoder_layers = 2, num_decoder_layers = 2}
--   local out = model(src, tgt, {tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt:size(1))})
--
-- Constructors and forward methods take PyTorch's parameters (class.signature:
-- "nn.TransformerEncoderLayer", "nn.Transformer:forward", ...), positionally or by name in
-- a trailing options table. Parameter and submodule names follow PyTorch (in_proj_weight,
-- in_proj_bias, out_proj.weight, self_attn.*, multihead_attn.*, linear1.*, norm1.*,
-- encoder.layers.*, decoder.norm.*, ...), so a state_dict maps one to one except that
-- nn.ModuleList counts from 1 ("layers.1." where PyTorch writes "layers.0.").
-- Masks as in PyTorch's MultiheadAttention: a bool mask is true where attention is NOT
-- allowed; a float mask is added to the attention scores.
local torch = require "torch"
local base = require "nn.module"
local Module, Parameter = base.Module, base.Parameter
local class = require "torch_class"

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
-- MultiheadAttention(embed_dim, num_heads, dropout=0, bias=true, add_bias_kv=false,
--   add_zero_attn=false, kdim=nil, vdim=nil, batch_first=false)
------------------------------------------------------------------------------
local MHA = Module:extend("MultiheadAttention")
TR.MultiheadAttention = MHA

-- parameters in a dtype when the constructor is given one (an options table without a
-- dtype is refused by torch.empty, so pass one only if given)
local function empty_of(dtype)
  return function(...)
    if dtype then return torch.empty({ ... }, { dtype = dtype }) end
    return torch.empty({ ... })
  end
end
local function to_device(m, device)
  if device ~= nil then m:to(device) end
end

local MHA_SIG = class.signature("nn.MultiheadAttention", "embed_dim, num_heads, dropout=0.0, bias=true, " ..
  "add_bias_kv=false, add_zero_attn=false, kdim=nil, vdim=nil, batch_first=false, *, device=nil, dtype=nil")
function MHA:__init(...)
  local opts = MHA_SIG(...)
  local embed_dim, num_heads = opts.embed_dim, opts.num_heads
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
  if type(opts.dropout) ~= "number" or opts.dropout < 0 or opts.dropout > 1 then
    error(("%s: dropout must be a probability in [0, 1], got %s"):format(who, tostring(opts.dropout)), 3)
  end
  local kdim, vdim = opts.kdim or embed_dim, opts.vdim or embed_dim
  self.embed_dim, self.kdim, self.vdim = embed_dim, kdim, vdim
  self._qkv_same_embed_dim = kdim == embed_dim and vdim == embed_dim
  self.num_heads = num_heads
  self.dropout = opts.dropout
  self.batch_first = opts.batch_first == true
  self.head_dim = embed_dim // num_heads
  self.add_zero_attn = opts.add_zero_attn == true
  local empty = empty_of(opts.dtype)
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
  to_device(self, opts.device)
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

-- forward(query, key, value, key_padding_mask=nil, need_weights=true, attn_mask=nil,
--   average_attn_weights=true, is_causal=false) -> attn_output, attn_weights (nil unless
-- need_weights). key and value default to query (and value to key). is_causal without an
-- attn_mask applies the causal mask; with one, the mask given is used.
local MHA_FORWARD = class.signature("nn.MultiheadAttention:forward", "query, key=nil, value=nil, " ..
  "key_padding_mask=nil, need_weights=true, attn_mask=nil, average_attn_weights=true, is_causal=false")
function MHA:forward(...)
  local who = "MultiheadAttention"
  local o = MHA_FORWARD(...)
  local query, key, value = o.query, o.key, o.value
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
-- the layers' shared pieces
------------------------------------------------------------------------------
-- activation: "relu", "gelu", a function (F.relu, ...) or a module
local function activation_fn(who, a)
  if a == nil or a == "relu" then return "relu" end
  if a == "gelu" then return "gelu" end
  if type(a) == "function" or base.is_module(a) then return a end
  error(("%s: activation should be relu/gelu, not %s"):format(who, tostring(a)), 4)
end

-- keeps the activation: a module as the submodule `activation` (as PyTorch registers it),
-- anything else as a plain field
local function set_activation(self, who, a)
  local act = activation_fn(who, a)
  if base.is_module(act) then self.activation = act
  else self._activation = act end
end

local function act(self, x)
  local a = self._activation
  if a == "relu" then return F().relu(x) end
  if a == "gelu" then return F().gelu(x) end
  if a ~= nil then return a(x) end
  return self.activation(x)
end

local function check_dropout(who, p)
  if type(p) ~= "number" or p < 0 or p > 1 then
    error(("%s: dropout must be a probability in [0, 1], got %s"):format(who, tostring(p)), 4)
  end
end

local function check_tensor(who, name, v)
  if not torch.is_tensor(v) then
    error(("%s: argument '%s' must be a tensor, got %s"):format(who, name, type(v)), 3)
  end
end

-- num_layers deep copies of a layer in a ModuleList
local function clones(who, layer, what, num_layers)
  if not base.is_module(layer) then
    error(("%s: argument '%s' must be a Module, got %s"):format(who, what, type(layer)), 4)
  end
  if math.type(num_layers) ~= "integer" or num_layers < 0 then
    error(("%s: argument 'num_layers' must be a non-negative integer, got %s"):format(who, tostring(num_layers)), 4)
  end
  local layers = {}
  for i = 1, num_layers do layers[i] = TR._deepcopy(layer) end
  return nnlib().ModuleList(layers)
end

local LAYER_PARAMS = "d_model, nhead, dim_feedforward=2048, dropout=0.1, activation='relu', layer_norm_eps=1e-05, " ..
  "batch_first=false, norm_first=false, bias=true, *, device=nil, dtype=nil"

------------------------------------------------------------------------------
-- TransformerEncoderLayer(d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
--   layer_norm_eps=1e-5, batch_first=false, norm_first=false, bias=true)
------------------------------------------------------------------------------
local EncoderLayer = Module:extend("TransformerEncoderLayer")
TR.TransformerEncoderLayer = EncoderLayer

local ENCODER_LAYER = class.signature("nn.TransformerEncoderLayer", LAYER_PARAMS)
function EncoderLayer:__init(...)
  local a = ENCODER_LAYER(...)
  local who = "TransformerEncoderLayer"
  local nn = nnlib()
  local p = a.dropout
  check_dropout(who, p)
  local bias = a.bias ~= false
  local fo = { dtype = a.dtype, bias = bias }
  self.self_attn = MHA(a.d_model, a.nhead, { dropout = p, bias = bias, batch_first = a.batch_first, dtype = a.dtype })
  self.linear1 = nn.Linear(a.d_model, a.dim_feedforward, fo)
  self.dropout = nn.Dropout(p)
  self.linear2 = nn.Linear(a.dim_feedforward, a.d_model, fo)
  self.norm_first = a.norm_first == true
  self.norm1 = nn.LayerNorm(a.d_model, { eps = a.layer_norm_eps, bias = bias, dtype = a.dtype })
  self.norm2 = nn.LayerNorm(a.d_model, { eps = a.layer_norm_eps, bias = bias, dtype = a.dtype })
  self.dropout1 = nn.Dropout(p)
  self.dropout2 = nn.Dropout(p)
  self.batch_first = a.batch_first == true
  set_activation(self, who, a.activation)
  to_device(self, a.device)
end

EncoderLayer._act = act

function EncoderLayer:_sa_block(x, attn_mask, kpm, is_causal)
  x = self.self_attn(x, x, x, { attn_mask = attn_mask, key_padding_mask = kpm, need_weights = false,
                                is_causal = is_causal })
  return self.dropout1(x)
end

function EncoderLayer:_ff_block(x)
  x = self.linear2(self.dropout(self:_act(self.linear1(x))))
  return self.dropout2(x)
end

-- forward(src, src_mask=nil, src_key_padding_mask=nil, is_causal=false)
local ENCODER_LAYER_FORWARD = class.signature("nn.TransformerEncoderLayer:forward",
  "src, src_mask=nil, src_key_padding_mask=nil, is_causal=false")
function EncoderLayer:forward(...)
  local a = ENCODER_LAYER_FORWARD(...)
  check_tensor("TransformerEncoderLayer", "src", a.src)
  local mask, kpm, causal = a.src_mask, a.src_key_padding_mask, a.is_causal
  local x = a.src
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
-- TransformerEncoder(encoder_layer, num_layers, norm=nil): num_layers deep copies of the
-- layer. enable_nested_tensor and mask_check (PyTorch's fast-path switches) are accepted
-- and change nothing: there is one path here.
------------------------------------------------------------------------------
local Encoder = Module:extend("TransformerEncoder")
TR.TransformerEncoder = Encoder

local ENCODER = class.signature("nn.TransformerEncoder",
  "encoder_layer, num_layers, norm=nil, enable_nested_tensor=true, mask_check=true")
function Encoder:__init(...)
  local a = ENCODER(...)
  self.layers = clones("TransformerEncoder", a.encoder_layer, "encoder_layer", a.num_layers)
  self.num_layers = a.num_layers
  if a.norm ~= nil then self.norm = a.norm end
  self.enable_nested_tensor, self.mask_check = a.enable_nested_tensor, a.mask_check
end

-- forward(src, mask=nil, src_key_padding_mask=nil, is_causal=nil)
local ENCODER_FORWARD = class.signature("nn.TransformerEncoder:forward",
  "src, mask=nil, src_key_padding_mask=nil, is_causal=nil")
function Encoder:forward(...)
  local a = ENCODER_FORWARD(...)
  check_tensor("TransformerEncoder", "src", a.src)
  local x = a.src
  for _, layer in ipairs(self.layers:children()) do
    x = layer(x, { src_mask = a.mask, src_key_padding_mask = a.src_key_padding_mask, is_causal = a.is_causal })
  end
  if self.norm ~= nil then x = self.norm(x) end
  return x
end

------------------------------------------------------------------------------
-- TransformerDecoderLayer(d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
--   layer_norm_eps=1e-5, batch_first=false, norm_first=false, bias=true): self-attention over
-- the target, attention over the encoder's output (memory), a feed-forward block
------------------------------------------------------------------------------
local DecoderLayer = Module:extend("TransformerDecoderLayer")
TR.TransformerDecoderLayer = DecoderLayer

local DECODER_LAYER = class.signature("nn.TransformerDecoderLayer", LAYER_PARAMS)
function DecoderLayer:__init(...)
  local a = DECODER_LAYER(...)
  local who = "TransformerDecoderLayer"
  local nn = nnlib()
  local p = a.dropout
  check_dropout(who, p)
  local bias = a.bias ~= false
  local fo = { dtype = a.dtype, bias = bias }
  local mo = { dropout = p, bias = bias, batch_first = a.batch_first, dtype = a.dtype }
  self.self_attn = MHA(a.d_model, a.nhead, mo)
  self.multihead_attn = MHA(a.d_model, a.nhead, mo)
  self.linear1 = nn.Linear(a.d_model, a.dim_feedforward, fo)
  self.dropout = nn.Dropout(p)
  self.linear2 = nn.Linear(a.dim_feedforward, a.d_model, fo)
  self.norm_first = a.norm_first == true
  local no = { eps = a.layer_norm_eps, bias = bias, dtype = a.dtype }
  self.norm1 = nn.LayerNorm(a.d_model, no)
  self.norm2 = nn.LayerNorm(a.d_model, no)
  self.norm3 = nn.LayerNorm(a.d_model, no)
  self.dropout1 = nn.Dropout(p)
  self.dropout2 = nn.Dropout(p)
  self.dropout3 = nn.Dropout(p)
  self.batch_first = a.batch_first == true
  set_activation(self, who, a.activation)
  to_device(self, a.device)
end

DecoderLayer._act = act

DecoderLayer._sa_block = EncoderLayer._sa_block   -- self-attention, then dropout1: the same

function DecoderLayer:_mha_block(x, mem, attn_mask, kpm, is_causal)
  x = self.multihead_attn(x, mem, mem, { attn_mask = attn_mask, key_padding_mask = kpm, need_weights = false,
                                         is_causal = is_causal })
  return self.dropout2(x)
end

function DecoderLayer:_ff_block(x)
  x = self.linear2(self.dropout(self:_act(self.linear1(x))))
  return self.dropout3(x)
end

-- forward(tgt, memory, tgt_mask=nil, memory_mask=nil, tgt_key_padding_mask=nil,
--   memory_key_padding_mask=nil, tgt_is_causal=false, memory_is_causal=false)
local DECODER_LAYER_FORWARD = class.signature("nn.TransformerDecoderLayer:forward",
  "tgt, memory, tgt_mask=nil, memory_mask=nil, tgt_key_padding_mask=nil, memory_key_padding_mask=nil, " ..
  "tgt_is_causal=false, memory_is_causal=false")
function DecoderLayer:forward(...)
  local a = DECODER_LAYER_FORWARD(...)
  local who = "TransformerDecoderLayer"
  check_tensor(who, "tgt", a.tgt)
  check_tensor(who, "memory", a.memory)
  local x, mem = a.tgt, a.memory
  if self.norm_first then
    x = x + self:_sa_block(self.norm1(x), a.tgt_mask, a.tgt_key_padding_mask, a.tgt_is_causal)
    x = x + self:_mha_block(self.norm2(x), mem, a.memory_mask, a.memory_key_padding_mask, a.memory_is_causal)
    x = x + self:_ff_block(self.norm3(x))
  else
    x = self.norm1(x + self:_sa_block(x, a.tgt_mask, a.tgt_key_padding_mask, a.tgt_is_causal))
    x = self.norm2(x + self:_mha_block(x, mem, a.memory_mask, a.memory_key_padding_mask, a.memory_is_causal))
    x = self.norm3(x + self:_ff_block(x))
  end
  return x
end

------------------------------------------------------------------------------
-- TransformerDecoder(decoder_layer, num_layers, norm=nil): num_layers deep copies of the layer
------------------------------------------------------------------------------
local Decoder = Module:extend("TransformerDecoder")
TR.TransformerDecoder = Decoder

local DECODER = class.signature("nn.TransformerDecoder", "decoder_layer, num_layers, norm=nil")
function Decoder:__init(...)
  local a = DECODER(...)
  self.layers = clones("TransformerDecoder", a.decoder_layer, "decoder_layer", a.num_layers)
  self.num_layers = a.num_layers
  if a.norm ~= nil then self.norm = a.norm end
end

-- forward(tgt, memory, tgt_mask=nil, memory_mask=nil, tgt_key_padding_mask=nil,
--   memory_key_padding_mask=nil, tgt_is_causal=nil, memory_is_causal=false)
local DECODER_FORWARD = class.signature("nn.TransformerDecoder:forward",
  "tgt, memory, tgt_mask=nil, memory_mask=nil, tgt_key_padding_mask=nil, memory_key_padding_mask=nil, " ..
  "tgt_is_causal=nil, memory_is_causal=false")
function Decoder:forward(...)
  local a = DECODER_FORWARD(...)
  check_tensor("TransformerDecoder", "tgt", a.tgt)
  check_tensor("TransformerDecoder", "memory", a.memory)
  local x = a.tgt
  local o = { tgt_mask = a.tgt_mask, memory_mask = a.memory_mask, tgt_key_padding_mask = a.tgt_key_padding_mask,
              memory_key_padding_mask = a.memory_key_padding_mask, tgt_is_causal = a.tgt_is_causal,
              memory_is_causal = a.memory_is_causal }
  for _, layer in ipairs(self.layers:children()) do x = layer(x, a.memory, o) end
  if self.norm ~= nil then x = self.norm(x) end
  return x
end

------------------------------------------------------------------------------
-- Transformer(d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
--   dim_feedforward=2048, dropout=0.1, activation="relu", custom_encoder=nil,
--   custom_decoder=nil, layer_norm_eps=1e-5, batch_first=false, norm_first=false, bias=true):
-- an encoder and a decoder, each ending in a LayerNorm; every weight matrix starts
-- xavier-uniform, as in PyTorch
------------------------------------------------------------------------------
local Transformer = Module:extend("Transformer")
TR.Transformer = Transformer

local TRANSFORMER = class.signature("nn.Transformer", "d_model=512, nhead=8, num_encoder_layers=6, " ..
  "num_decoder_layers=6, dim_feedforward=2048, dropout=0.1, activation='relu', custom_encoder=nil, " ..
  "custom_decoder=nil, layer_norm_eps=1e-05, batch_first=false, norm_first=false, bias=true, *, device=nil, dtype=nil")
function Transformer:__init(...)
  local a = TRANSFORMER(...)
  local nn = nnlib()
  local bias = a.bias ~= false
  local lo = { dim_feedforward = a.dim_feedforward, dropout = a.dropout, activation = a.activation,
               layer_norm_eps = a.layer_norm_eps, batch_first = a.batch_first, norm_first = a.norm_first,
               bias = bias, dtype = a.dtype }
  local no = { eps = a.layer_norm_eps, bias = bias, dtype = a.dtype }
  if a.custom_encoder ~= nil then self.encoder = a.custom_encoder
  else
    self.encoder = Encoder(EncoderLayer(a.d_model, a.nhead, lo), a.num_encoder_layers, nn.LayerNorm(a.d_model, no))
  end
  if a.custom_decoder ~= nil then self.decoder = a.custom_decoder
  else
    self.decoder = Decoder(DecoderLayer(a.d_model, a.nhead, lo), a.num_decoder_layers, nn.LayerNorm(a.d_model, no))
  end
  self:_reset_parameters()
  self.d_model, self.nhead, self.batch_first = a.d_model, a.nhead, a.batch_first == true
  to_device(self, a.device)
end

function Transformer:_reset_parameters()
  local I = init()
  for _, p in ipairs(self:parameters()) do
    if p:dim() > 1 then I.xavier_uniform_(p) end
  end
end

-- forward(src, tgt, src_mask=nil, tgt_mask=nil, memory_mask=nil, src_key_padding_mask=nil,
--   tgt_key_padding_mask=nil, memory_key_padding_mask=nil, src_is_causal=nil,
--   tgt_is_causal=nil, memory_is_causal=false) -> the decoder's output, shaped like tgt
local TRANSFORMER_FORWARD = class.signature("nn.Transformer:forward", "src, tgt, src_mask=nil, tgt_mask=nil, " ..
  "memory_mask=nil, src_key_padding_mask=nil, tgt_key_padding_mask=nil, memory_key_padding_mask=nil, " ..
  "src_is_causal=nil, tgt_is_causal=nil, memory_is_causal=false")
function Transformer:forward(...)
  local a = TRANSFORMER_FORWARD(...)
  local who = "Transformer"
  local src, tgt = a.src, a.tgt
  check_tensor(who, "src", src)
  check_tensor(who, "tgt", tgt)
  if src:dim() ~= tgt:dim() or (src:dim() ~= 2 and src:dim() ~= 3) then
    error(("%s: src and tgt must both be 2-D (unbatched) or 3-D (batched), got src %s and tgt %s"):format(
      who, shape_str(src), shape_str(tgt)), 2)
  end
  if src:dim() == 3 then
    local bd = self.batch_first and 1 or 2
    if src:size(bd) ~= tgt:size(bd) then
      error(("%s: the batch number of src and tgt must be equal (src %s, tgt %s, batch_first=%s)"):format(
        who, shape_str(src), shape_str(tgt), tostring(self.batch_first)), 2)
    end
  end
  if src:size(-1) ~= self.d_model or tgt:size(-1) ~= self.d_model then
    error(("%s: the feature number of src and tgt must be equal to d_model (%d), got src %s and tgt %s"):format(
      who, self.d_model, shape_str(src), shape_str(tgt)), 2)
  end
  local memory = self.encoder(src, { mask = a.src_mask, src_key_padding_mask = a.src_key_padding_mask,
                                     is_causal = a.src_is_causal })
  return self.decoder(tgt, memory, { tgt_mask = a.tgt_mask, memory_mask = a.memory_mask,
    tgt_key_padding_mask = a.tgt_key_padding_mask, memory_key_padding_mask = a.memory_key_padding_mask,
    tgt_is_causal = a.tgt_is_causal, memory_is_causal = a.memory_is_causal })
end

-- Transformer.generate_square_subsequent_mask(sz, device=nil, dtype=nil): the (sz, sz) float
-- mask with -inf above the diagonal and 0 elsewhere (a position attends to itself and the
-- ones before it). Also callable as model:generate_square_subsequent_mask(sz).
local SQUARE_MASK = class.signature("nn.Transformer.generate_square_subsequent_mask", "sz, device=nil, dtype=nil")
function Transformer.generate_square_subsequent_mask(...)
  local first = ...
  local a
  if base.is_module(first) then a = SQUARE_MASK(select(2, ...)) else a = SQUARE_MASK(...) end
  local sz = a.sz
  if math.type(sz) ~= "integer" or sz < 0 then
    error(("Transformer.generate_square_subsequent_mask: argument 'sz' must be a non-negative integer, got %s"):format(
      tostring(sz)), 2)
  end
  local o = {}
  if a.dtype ~= nil then o.dtype = a.dtype end
  if a.device ~= nil then o.device = a.device end
  return torch.full({ sz, sz }, -math.huge, o):triu(1)
end

return TR
