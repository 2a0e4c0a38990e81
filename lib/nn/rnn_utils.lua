-- nn/rnn_utils.lua — nn.utils.rnn: batches of sequences of different lengths, padded into
-- one tensor or packed into a PackedSequence that nn.RNN / LSTM / GRU run without
-- computing on the padding (PyTorch's torch.nn.utils.rnn).
--
--   local R = nn.utils.rnn
--   local padded = R.pad_sequence({a, b, c}, {batch_first = true})        -- (3, L_max, *)
--   local packed = R.pack_padded_sequence(padded, {5, 3, 2}, {batch_first = true})
--   local out, h_n = gru(packed)                -- out: a PackedSequence, h_n: (D * layers, 3, H)
--   local y, lengths = R.pad_packed_sequence(out, {batch_first = true})
--
-- A PackedSequence holds `data`, the steps of every sequence interleaved time step by time
-- step ((sum of lengths, *), the longest sequences first within a step), `batch_sizes` (an
-- int64 tensor: how many sequences are still running at each step), and, when the batch
-- was not already sorted by decreasing length, `sorted_indices` / `unsorted_indices` (the
-- permutation and its inverse; 1-based, like every index in lutorch). Everything is written
-- with differentiable ops (index_select, cat, stack), so gradients flow through packing.
local torch = require "torch"
local class = require "torch_class"

local U = {}

local function shape_str(t)
  local s = {}
  for i, v in ipairs(t.shape) do s[i] = tostring(v) end
  return "[" .. table.concat(s, ", ") .. "]"
end

-- a list of lengths (Lua integers) from a 1-D tensor or a Lua list
local function lengths_list(who, lengths)
  local out = {}
  if torch.is_tensor(lengths) then
    if lengths:dim() ~= 1 then
      error(("%s: argument 'lengths' must be a 1-D tensor or a list, got a %d-D tensor"):format(who, lengths:dim()), 3)
    end
    lengths = lengths:to("cpu"):to(torch.float64):totable()
  elseif type(lengths) ~= "table" then
    error(("%s: argument 'lengths' must be a 1-D tensor or a list of integers, got %s"):format(who, type(lengths)), 3)
  end
  for i, v in ipairs(lengths) do
    local n = math.tointeger(v)
    if not n then
      error(("%s: lengths must be integers, got %s at position %d"):format(who, tostring(v), i), 3)
    end
    out[i] = n
  end
  return out
end

-- inverse of a permutation given as a Lua list (1-based)
local function invert(perm)
  local inv = {}
  for i, p in ipairs(perm) do inv[p] = i end
  return inv
end

local function index_tensor(list) return torch.tensor(list, { dtype = torch.int64 }) end

------------------------------------------------------------------------------
-- PackedSequence(data, batch_sizes, sorted_indices=nil, unsorted_indices=nil)
------------------------------------------------------------------------------
local PackedSequence = class("nn.utils.rnn.PackedSequence")
U.PackedSequence = PackedSequence

local PACKED = class.signature("nn.utils.rnn.PackedSequence",
  "data, batch_sizes=nil, sorted_indices=nil, unsorted_indices=nil")
function PackedSequence:__init(...)
  local a = PACKED(...)
  local who = "nn.utils.rnn.PackedSequence"
  if not torch.is_tensor(a.data) then
    error(("%s: argument 'data' must be a tensor, got %s"):format(who, type(a.data)), 3)
  end
  local bs = a.batch_sizes
  if bs == nil then
    error(("%s: argument 'batch_sizes' is required (use pack_padded_sequence or pack_sequence to make one)"):format(who), 3)
  end
  if not torch.is_tensor(bs) then bs = index_tensor(lengths_list(who, bs)) end
  local list = lengths_list(who, bs)
  local total = 0
  for i, b in ipairs(list) do
    if b <= 0 or (i > 1 and b > list[i - 1]) then
      error(("%s: batch_sizes must be positive and non-increasing, got %d after %s"):format(who, b,
        i > 1 and tostring(list[i - 1]) or "nothing"), 3)
    end
    total = total + b
  end
  if a.data:dim() < 1 or a.data:size(1) ~= total then
    error(("%s: data has %s rows but batch_sizes add up to %d"):format(who,
      a.data:dim() < 1 and "no" or tostring(a.data:size(1)), total), 3)
  end
  self.data, self.batch_sizes = a.data, bs:to(torch.int64)
  self._bs = list
  local si, ui = a.sorted_indices, a.unsorted_indices
  if si ~= nil and not torch.is_tensor(si) then si = index_tensor(lengths_list(who, si)) end
  if ui ~= nil and not torch.is_tensor(ui) then ui = index_tensor(lengths_list(who, ui)) end
  if si ~= nil and ui == nil then ui = index_tensor(invert(lengths_list(who, si))) end
  self.sorted_indices, self.unsorted_indices = si, ui
end

-- the batch sizes as a Lua list
function PackedSequence:_batch_sizes()
  return rawget(self, "_bs") or lengths_list("PackedSequence", self.batch_sizes)
end

-- a PackedSequence with the same layout and other data (what the recurrent layers return)
function PackedSequence:_with_data(data)
  return PackedSequence(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)
end

-- to(...) moves or converts the data (as Tensor:to); the indices follow the data's device,
-- batch_sizes stay on the CPU, as in PyTorch
function PackedSequence:to(...)
  local data = self.data:to(...)
  if rawequal(data, self.data) then return self end
  local si, ui = self.sorted_indices, self.unsorted_indices
  if si ~= nil then si, ui = si:to(data.device), ui:to(data.device) end
  return PackedSequence(data, self.batch_sizes, si, ui)
end
function PackedSequence:double() return self:to(torch.float64) end
function PackedSequence:float() return self:to(torch.float32) end
function PackedSequence:cpu() return self:to("cpu") end
function PackedSequence:cuda() return self:to("cuda") end

function PackedSequence:__tostring()
  local function s(v) return v == nil and "None" or tostring(v) end
  return ("PackedSequence(data=%s, batch_sizes=%s, sorted_indices=%s, unsorted_indices=%s)"):format(
    s(self.data), s(self.batch_sizes), s(self.sorted_indices), s(self.unsorted_indices))
end

function U.is_packed(v) return class.isinstance(v, PackedSequence) end

------------------------------------------------------------------------------
-- pad_sequence(sequences, batch_first=false, padding_value=0, padding_side='right')
------------------------------------------------------------------------------
-- sequences: a list of tensors (L_i, *) with the same trailing sizes (or one tensor, whose
-- first dim is the list). Result: (L_max, B, *), or (B, L_max, *) with batch_first.
local PAD = class.signature("nn.utils.rnn.pad_sequence",
  "sequences, batch_first=false, padding_value=0.0, padding_side='right'")
function U.pad_sequence(...)
  local a = PAD(...)
  local who = "nn.utils.rnn.pad_sequence"
  local seqs = a.sequences
  if torch.is_tensor(seqs) then seqs = torch.unbind(seqs, 1) end
  if type(seqs) ~= "table" or #seqs == 0 then
    error(("%s: argument 'sequences' must be a non-empty list of tensors, got %s"):format(who,
      type(seqs) == "table" and "an empty table" or type(seqs)), 2)
  end
  if a.padding_side ~= "right" and a.padding_side ~= "left" then
    error(("%s: padding_side must be 'right' or 'left', got %s"):format(who, tostring(a.padding_side)), 2)
  end
  local first = seqs[1]
  local maxlen = 0
  for i, s in ipairs(seqs) do
    if not torch.is_tensor(s) then
      error(("%s: sequences[%d] must be a tensor, got %s"):format(who, i, type(s)), 2)
    end
    if s:dim() < 1 or s:dim() ~= first:dim() then
      error(("%s: every sequence must have at least one dim and as many as sequences[1] (%s), got %s for sequences[%d]")
        :format(who, shape_str(first), shape_str(s), i), 2)
    end
    for d = 2, s:dim() do
      if s:size(d) ~= first:size(d) then
        error(("%s: the trailing sizes of sequences[%d] %s differ from those of sequences[1] %s"):format(
          who, i, shape_str(s), shape_str(first)), 2)
      end
    end
    if s:size(1) > maxlen then maxlen = s:size(1) end
  end
  local padded = {}
  for i, s in ipairs(seqs) do
    local n = s:size(1)
    if n < maxlen then
      local shape = s.shape
      shape[1] = maxlen - n
      local pad = torch.full(shape, a.padding_value, { dtype = s.dtype, device = s.device })
      s = torch.cat(a.padding_side == "right" and { s, pad } or { pad, s }, 1)
    end
    padded[i] = s
  end
  return torch.stack(padded, a.batch_first and 1 or 2)
end

------------------------------------------------------------------------------
-- pack_padded_sequence(input, lengths, batch_first=false, enforce_sorted=true)
------------------------------------------------------------------------------
local PACK_PADDED = class.signature("nn.utils.rnn.pack_padded_sequence",
  "input, lengths, batch_first=false, enforce_sorted=true")
function U.pack_padded_sequence(...)
  local a = PACK_PADDED(...)
  local who = "nn.utils.rnn.pack_padded_sequence"
  local input = a.input
  if not torch.is_tensor(input) then
    error(("%s: argument 'input' must be a tensor, got %s"):format(who, type(input)), 2)
  end
  if input:dim() < 2 then
    error(("%s: input must be at least 2-D (time and batch), got %s"):format(who, shape_str(input)), 2)
  end
  local lens = lengths_list(who, a.lengths)
  local bd = a.batch_first and 1 or 2
  local B, T = input:size(bd), input:size(3 - bd)
  if #lens ~= B then
    error(("%s: expected %d lengths (the batch size of input %s), got %d"):format(who, B, shape_str(input), #lens), 2)
  end
  for i, n in ipairs(lens) do
    if n <= 0 then
      error(("%s: length of all samples has to be greater than 0, but found %d at position %d"):format(who, n, i), 2)
    end
    if n > T then
      error(("%s: lengths[%d] = %d is larger than the input's sequence length %d"):format(who, i, n, T), 2)
    end
  end
  local order
  if a.enforce_sorted then
    for i = 2, #lens do
      if lens[i] > lens[i - 1] then
        error(("%s: 'lengths' must be sorted in decreasing order when enforce_sorted is true (%d follows %d); "
          .. "pass enforce_sorted = false to pack an unsorted batch"):format(who, lens[i], lens[i - 1]), 2)
      end
    end
  else
    -- stable: equal lengths keep their order
    order = {}
    for i = 1, B do order[i] = i end
    table.sort(order, function(i, j)
      if lens[i] ~= lens[j] then return lens[i] > lens[j] end
      return i < j
    end)
    local sorted = {}
    for i, k in ipairs(order) do sorted[i] = lens[k] end
    lens = sorted
  end
  local x = input
  local si, ui
  if order then
    si = index_tensor(order)
    ui = index_tensor(invert(order))
    x = x:index_select(bd, si:to(x.device))
    si, ui = si:to(x.device), ui:to(x.device)
  end
  if a.batch_first then x = x:transpose(1, 2) end
  -- (T, B, *) -> rows (t, b) for b within the batch of step t, time step by time step
  local rest = x.shape
  table.remove(rest, 1); table.remove(rest, 1)
  local flat = x:reshape({ T * B, table.unpack(rest) })
  local bs, idx = {}, {}
  for t = 1, lens[1] do
    local n = 0
    while n < B and lens[n + 1] >= t do n = n + 1 end
    bs[t] = n
    for b = 1, n do idx[#idx + 1] = (t - 1) * B + b end
  end
  local data = flat:index_select(1, index_tensor(idx):to(x.device))
  return PackedSequence(data, index_tensor(bs), si, ui)
end

------------------------------------------------------------------------------
-- pad_packed_sequence(sequence, batch_first=false, padding_value=0, total_length=nil)
--   -> padded (T, B, *) or (B, T, *), lengths (int64, in the batch's original order)
------------------------------------------------------------------------------
local PAD_PACKED = class.signature("nn.utils.rnn.pad_packed_sequence",
  "sequence, batch_first=false, padding_value=0.0, total_length=nil")
function U.pad_packed_sequence(...)
  local a = PAD_PACKED(...)
  local who = "nn.utils.rnn.pad_packed_sequence"
  local seq = a.sequence
  if not U.is_packed(seq) then
    error(("%s: argument 'sequence' must be a PackedSequence, got %s"):format(who, class.type(seq)), 2)
  end
  local bs = seq:_batch_sizes()
  local data = seq.data
  local N, B, Tmax = data:size(1), bs[1], #bs
  local T = Tmax
  if a.total_length ~= nil then
    if math.type(a.total_length) ~= "integer" or a.total_length < Tmax then
      error(("%s: expected total_length to be at least the length of the longest sequence in the input (%d), got %s")
        :format(who, Tmax, tostring(a.total_length)), 2)
    end
    T = a.total_length
  end
  -- every (t, b) of the padded result reads a row of data, or the padding row (N + 1)
  local map, off = {}, 0
  for t = 1, T do
    local n = bs[t] or 0
    for b = 1, B do map[(t - 1) * B + b] = b <= n and off + b or N + 1 end
    off = off + n
  end
  local rest = data.shape
  rest[1] = 1
  local pad = torch.full(rest, a.padding_value, { dtype = data.dtype, device = data.device })
  local src = torch.cat({ data, pad }, 1)
  table.remove(rest, 1)
  local out = src:index_select(1, index_tensor(map):to(data.device)):reshape({ T, B, table.unpack(rest) })
  local lens = {}
  for b = 1, B do
    local n = 0
    while n < Tmax and bs[n + 1] >= b do n = n + 1 end
    lens[b] = n
  end
  local ui = seq.unsorted_indices
  if ui ~= nil then
    out = out:index_select(2, ui:to(data.device))
    local perm = lengths_list(who, ui)
    local l2 = {}
    for i, k in ipairs(perm) do l2[i] = lens[k] end
    lens = l2
  end
  if a.batch_first then out = out:transpose(1, 2) end
  return out, index_tensor(lens)
end

------------------------------------------------------------------------------
-- pack_sequence(sequences, enforce_sorted=true): pad_sequence, then pack_padded_sequence
------------------------------------------------------------------------------
local PACK = class.signature("nn.utils.rnn.pack_sequence", "sequences, enforce_sorted=true")
function U.pack_sequence(...)
  local a = PACK(...)
  local seqs = a.sequences
  if type(seqs) ~= "table" or #seqs == 0 then
    error(("nn.utils.rnn.pack_sequence: argument 'sequences' must be a non-empty list of tensors, got %s"):format(
      type(seqs)), 2)
  end
  local lens = {}
  for i, s in ipairs(seqs) do
    if not torch.is_tensor(s) then
      error(("nn.utils.rnn.pack_sequence: sequences[%d] must be a tensor, got %s"):format(i, type(s)), 2)
    end
    lens[i] = s:dim() > 0 and s:size(1) or 0
  end
  return U.pack_padded_sequence(U.pad_sequence(seqs), lens, { enforce_sorted = a.enforce_sorted })
end

------------------------------------------------------------------------------
-- unpad_sequence(padded_sequences, lengths, batch_first=false) -> list of (L_i, *) tensors;
-- unpack_sequence(packed_sequences) -> list of tensors (the inverses of pad/pack_sequence)
------------------------------------------------------------------------------
local UNPAD = class.signature("nn.utils.rnn.unpad_sequence", "padded_sequences, lengths, batch_first=false")
function U.unpad_sequence(...)
  local a = UNPAD(...)
  local who = "nn.utils.rnn.unpad_sequence"
  local p = a.padded_sequences
  if not torch.is_tensor(p) or p:dim() < 2 then
    error(("%s: argument 'padded_sequences' must be a tensor of at least 2 dims"):format(who), 2)
  end
  if not a.batch_first then p = p:transpose(1, 2) end
  local lens = lengths_list(who, a.lengths)
  if #lens ~= p:size(1) then
    error(("%s: expected %d lengths (the batch size), got %d"):format(who, p:size(1), #lens), 2)
  end
  local out = {}
  for b, n in ipairs(lens) do
    if n < 0 or n > p:size(2) then
      error(("%s: lengths[%d] = %d is outside [0, %d]"):format(who, b, n, p:size(2)), 2)
    end
    out[b] = p:select(1, b):narrow(1, 1, n)
  end
  return out
end

local UNPACK = class.signature("nn.utils.rnn.unpack_sequence", "packed_sequences")
function U.unpack_sequence(...)
  local a = UNPACK(...)
  local padded, lens = U.pad_packed_sequence(a.packed_sequences, { batch_first = true })
  return U.unpad_sequence(padded, lens, { batch_first = true })
end

return U
