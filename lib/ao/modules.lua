-- ao/modules.lua — the quantized modules torch.ao.quantize_ puts in place of nn.Linear and
-- nn.Embedding (man/quantization.md). Their weights are buffers (int8, or int4 packed two a
-- byte in uint8, with float32 scales and zeros), so state_dict, load_state_dict, torch.save
-- and :to(device) treat them as any module's; they are not parameters: nothing here trains.
-- The forward runs the C kernels (src/ops/quant.lua), whose outputs carry no gradient.
local torch = require "torch"
local nn = require "nn"
local F = require "nn.functional"

local M = {}
local function pybool(b) return b and "True" or "False" end
M.isa = nil   -- the CPU path the modules ask for (torch.ao.set_isa); nil: the kernels' choice

local function opts()
  if M.isa then return { isa = M.isa } end
end

local function check_input(who, x)
  if not torch.is_tensor(x) then error(("%s: expected a tensor input, got %s"):format(who, type(x)), 3) end
end

-- the float weight of a Linear/Embedding, detached, float32, on the CPU
local function float_weight(m) return m.weight:detach():to(torch.float32) end

-- per-row symmetric int8: scale = max|row| / 127 (at least 1e-8 / 127 for a zero row)
local function int8_rows(w)
  local scales = w:abs():amax(2):clamp_min(1e-8) / 127
  local q = torch._quantize_per_channel(w, scales, torch.zeros(w:size(1), { dtype = torch.int64 }), 1, torch.int8)
  return q, scales
end

local function bias_of(m)
  if m.bias ~= nil then return m.bias:detach():to(torch.float32):clone() end
end

------------------------------------------------------------------------------
-- Linear with int8 weights: weight-only (x stays float) and dynamic (x quantized per row)
------------------------------------------------------------------------------
local function linear_class(name, kernel, what)
  local C = nn.Module:extend("ao." .. name)
  -- C(in_features, out_features, bias): empty buffers of the right shapes (load_state_dict fills them)
  function C:__init(in_features, out_features, bias)
    self.in_features, self.out_features = in_features, out_features
    self:register_buffer("weight", torch.zeros(out_features, in_features, { dtype = torch.int8 }))
    self:register_buffer("scales", torch.ones(out_features))
    if bias ~= false then self:register_buffer("bias", torch.zeros(out_features)) end
  end
  function C.from_float(m)
    local q = C(m.in_features, m.out_features, m.bias ~= nil)
    q.weight, q.scales = int8_rows(float_weight(m))
    if m.bias ~= nil then q.bias = bias_of(m) end
    return q
  end
  function C:forward(x)
    check_input(name, x)
    return kernel(x, self.weight, self.scales, self.bias, opts())
  end
  function C:extra_repr()
    return ("in_features=%d, out_features=%d, bias=%s, %s"):format(self.in_features, self.out_features,
      pybool(self.bias ~= nil), what)
  end
  -- the float weight these int8 values stand for
  function C:dequantized_weight() return self.weight:to(torch.float32) * self.scales:view(-1, 1) end
  return C
end

M.Int8WeightOnlyLinear = linear_class("Int8WeightOnlyLinear", torch._int8_weight_only_linear,
  "weight=int8 per-channel symmetric")
M.Int8DynamicLinear = linear_class("Int8DynamicLinear", torch._int8_dynamic_linear,
  "weight=int8 per-channel symmetric, activation=int8 per-token dynamic")

------------------------------------------------------------------------------
-- Linear with int4 weights in groups
------------------------------------------------------------------------------
local Int4 = nn.Module:extend("ao.Int4WeightOnlyLinear")
M.Int4WeightOnlyLinear = Int4

-- padding: an in_features that is not a multiple of group_size is padded with zero columns
-- (the input with zeros at each forward, as torchao's Int4WeightOnlyQuantizer with
-- padding_allowed); without it such a layer is an error
function Int4:__init(in_features, out_features, bias, group_size, padding)
  self.in_features, self.out_features, self.group_size = in_features, out_features, group_size
  local k = in_features
  if k % group_size ~= 0 then
    if not padding then
      error(("Int4WeightOnlyLinear: in_features (%d) must be a multiple of group_size (%d) "
        .. "(or use int4_weight_only{padding = true})"):format(in_features, group_size), 3)
    end
    k = (k + group_size - 1) // group_size * group_size
  end
  self.padded_in_features = k
  local g = k // group_size
  self:register_buffer("weight", torch.zeros(out_features, k // 2, { dtype = torch.uint8 }))
  self:register_buffer("scales", torch.ones(out_features, g))
  self:register_buffer("zeros", torch.zeros(out_features, g))
  if bias ~= false then self:register_buffer("bias", torch.zeros(out_features)) end
end

function Int4.from_float(m, group_size, padding)
  local q = Int4(m.in_features, m.out_features, m.bias ~= nil, group_size, padding)
  local w = float_weight(m)
  local pad = q.padded_in_features - m.in_features
  if pad > 0 then w = torch.pad(w, { 0, pad }) end
  q.weight, q.scales, q.zeros = torch._int4_pack(w, group_size)
  if m.bias ~= nil then q.bias = bias_of(m) end
  return q
end

function Int4:forward(x)
  check_input("Int4WeightOnlyLinear", x)
  local pad = self.padded_in_features - self.in_features
  if pad > 0 and x:dim() > 0 and x:size(-1) == self.in_features then x = torch.pad(x, { 0, pad }) end
  return torch._int4_weight_only_linear(x, self.weight, self.scales, self.zeros, self.group_size, self.bias, opts())
end

function Int4:extra_repr()
  local pad = self.padded_in_features ~= self.in_features
    and (", padded_in_features=%d"):format(self.padded_in_features) or ""
  return ("in_features=%d, out_features=%d, bias=%s, weight=int4 asymmetric, group_size=%d%s"):format(
    self.in_features, self.out_features, pybool(self.bias ~= nil), self.group_size, pad)
end

function Int4:dequantized_weight()
  local w = torch._int4_unpack(self.weight, self.scales, self.zeros, self.group_size)
  return w:narrow(2, 1, self.in_features)
end

------------------------------------------------------------------------------
-- Embeddings: int8 rows, int4 groups (lookups only: no max_norm renormalisation)
------------------------------------------------------------------------------
local function check_indices(who, idx)
  check_input(who, idx)
  if idx:is_floating_point() then
    error(("%s: expected an integer tensor of indices, got %s"):format(who, idx.dtype.name), 3)
  end
end

local E8 = nn.Module:extend("ao.Int8WeightOnlyEmbedding")
M.Int8WeightOnlyEmbedding = E8

function E8:__init(num_embeddings, embedding_dim, padding_idx)
  self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
  self:register_buffer("weight", torch.zeros(num_embeddings, embedding_dim, { dtype = torch.int8 }))
  self:register_buffer("scales", torch.ones(num_embeddings))
end

function E8.from_float(m)
  local q = E8(m.num_embeddings, m.embedding_dim, m.padding_idx)
  q.weight, q.scales = int8_rows(float_weight(m))
  return q
end

function E8:forward(idx)
  check_indices("Int8WeightOnlyEmbedding", idx)
  return torch._int8_embedding(self.weight, self.scales, idx)
end

function E8:extra_repr()
  return ("%d, %d, weight=int8 per-row symmetric"):format(self.num_embeddings, self.embedding_dim)
end

local E4 = nn.Module:extend("ao.Int4WeightOnlyEmbedding")
M.Int4WeightOnlyEmbedding = E4

function E4:__init(num_embeddings, embedding_dim, padding_idx, group_size)
  self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
  self.group_size = group_size
  if embedding_dim % group_size ~= 0 then
    error(("Int4WeightOnlyEmbedding: embedding_dim (%d) must be a multiple of group_size (%d)"):format(
      embedding_dim, group_size), 3)
  end
  local g = embedding_dim // group_size
  self:register_buffer("weight", torch.zeros(num_embeddings, embedding_dim // 2, { dtype = torch.uint8 }))
  self:register_buffer("scales", torch.ones(num_embeddings, g))
  self:register_buffer("zeros", torch.zeros(num_embeddings, g))
end

function E4.from_float(m, group_size)
  local q = E4(m.num_embeddings, m.embedding_dim, m.padding_idx, group_size)
  q.weight, q.scales, q.zeros = torch._int4_pack(float_weight(m), group_size)
  return q
end

function E4:forward(idx)
  check_indices("Int4WeightOnlyEmbedding", idx)
  return torch._int4_embedding(self.weight, self.scales, self.zeros, self.group_size, idx)
end

function E4:extra_repr()
  return ("%d, %d, weight=int4 asymmetric, group_size=%d"):format(self.num_embeddings, self.embedding_dim,
    self.group_size)
end

return M
