-- t7nn/table.lua — modules over tables of tensors: the containers ParallelTable,
-- ConcatTable, MapTable; the table plumbing SplitTable, JoinTable, SelectTable,
-- NarrowTable, FlattenTable, ZipTable, ZipTableOneToMany; element-wise arithmetic across
-- a table: CAddTable, CSubTable, CMulTable, CDivTable, CMaxTable, CMinTable,
-- CAddTensorTable; and MixtureTable (a gated mixture of experts).
local torch = require "torch"
local nn = require "t7nn.env"
local H = require "t7nn.helpers"
local sizes_str = H.sizestr

local function is_table(x) return type(x) == "table" and not torch.isTensor(x) end

-- Hot paths (char-rnn's LSTM runs CAddTable, CMulTable, JoinTable, SplitTable, ... per
-- time step) use the cheapest calls: this size test rather than isSameSizeAs, resizeAs
-- only when the size differs, copy_/add_/zero_ (same-size forms) rather than Torch7's
-- copy/add/zero, which first check for reshapes and broadcasts
local function same_size(a, b)
  local d = a:dim()
  if d ~= b:dim() then return false end
  for k = 1, d do
    if a:size(k) ~= b:size(k) then return false end
  end
  return true
end

-- dst with src's size (resized only when it differs)
local function fit(dst, src)
  if not same_size(dst, src) then dst:resizeAs(src) end
  return dst
end

-- gradOutput with like's size: as it is, or reshaped when it has as many elements (Torch7's
-- element-wise ops took any shapes of one element count)
local function grad_as(self, gradOutput, like)
  if not torch.isTensor(gradOutput) then
    error(("%s: gradOutput must be a tensor, got %s"):format(torch.type(self), torch.type(gradOutput)), 3)
  end
  if same_size(gradOutput, like) then return gradOutput end
  if gradOutput:nElement() ~= like:nElement() then
    error(("%s: gradOutput is %s but the output is %s"):format(torch.type(self), sizes_str(gradOutput), sizes_str(like)), 3)
  end
  return gradOutput:reshape(like:size())
end

-- dst takes like's size and src's values (src of like's size, or of as many elements)
local function copy_as(dst, like, src)
  fit(dst, like)
  if rawequal(like, src) or same_size(like, src) then return dst:copy_(src) end
  return dst:copy(src)
end

local function check_table(self, input, least, what)
  if not is_table(input) then
    error(("%s: %s must be a table of tensors, got %s"):format(torch.type(self), what or "the input", torch.type(input)), 3)
  end
  if least and #input < least then
    error(("%s: %s must hold at least %d tensors (got %d)"):format(torch.type(self), what or "the input", least, #input), 3)
  end
end

-- input[i] for i = 1..#input must be tensors of input[1]'s size
local function check_same_size(self, input, from)
  local first = input[1]
  if not torch.isTensor(first) then
    error(("%s: input[1] must be a tensor, got %s"):format(torch.type(self), torch.type(first)), 3)
  end
  for i = from or 2, #input do
    local t = input[i]
    if not torch.isTensor(t) then
      error(("%s: input[%d] must be a tensor, got %s"):format(torch.type(self), i, torch.type(t)), 3)
    end
    if not same_size(t, first) then
      error(("%s: input[%d] is %s but input[1] is %s"):format(torch.type(self), i, sizes_str(t), sizes_str(first)), 3)
    end
  end
end

-- the tensor of the table's slot i, made (of like's type) when missing or of another type
local function slot(list, i, like)
  local t = list[i]
  if not torch.isTensor(t) or torch.type(t) ~= torch.type(like) then
    t = like.new()
    list[i] = t
  end
  return t
end

local function drop_after(list, n)
  for i = #list, n + 1, -1 do list[i] = nil end
end

-- cls:type(...) starts the named fields afresh (tables of other modules' or the caller's
-- tensors, views among them) rather than converting what they hold
local function fresh_on_type(cls, parent, fields)
  function cls:type(typename, tensorCache)
    if typename then
      for name, make in pairs(fields) do self[name] = make() end
    end
    return parent.type(self, typename, tensorCache)
  end
end
local function new_table() return {} end
local function new_tensor() return torch.Tensor() end

------------------------------------------------------------------------------------------
-- Containers

-- nn.ParallelTable(): module i gets input[i]; output[i] is its output
local ParallelTable, ptparent = torch.class("nn.ParallelTable", "nn.Container")

function ParallelTable:__init()
  ptparent.__init(self)
  self.output = {}
  self.gradInput = {}
end

local function check_parallel(self, input)
  check_table(self, input)
  if #input < #self.modules then
    error(("%s: the input holds %d entries for %d modules"):format(torch.type(self), #input, #self.modules), 3)
  end
end

function ParallelTable:updateOutput(input)
  check_parallel(self, input)
  local out = self.output
  for i, m in ipairs(self.modules) do out[i] = self:rethrowErrors(m, i, "updateOutput", input[i]) end
  drop_after(out, #self.modules)
  return out
end

function ParallelTable:updateGradInput(input, gradOutput)
  check_parallel(self, input)
  local gi = self.gradInput
  for i, m in ipairs(self.modules) do
    gi[i] = self:rethrowErrors(m, i, "updateGradInput", input[i], gradOutput[i])
  end
  drop_after(gi, #self.modules)
  return gi
end

function ParallelTable:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  for i, m in ipairs(self.modules) do
    self:rethrowErrors(m, i, "accGradParameters", input[i], gradOutput[i], scale)
  end
end

function ParallelTable:backward(input, gradOutput, scale)
  check_parallel(self, input)
  scale = scale or 1
  local gi = self.gradInput
  for i, m in ipairs(self.modules) do
    gi[i] = self:rethrowErrors(m, i, "backward", input[i], gradOutput[i], scale)
  end
  drop_after(gi, #self.modules)
  return gi
end

function ParallelTable:accUpdateGradParameters(input, gradOutput, lr)
  for i, m in ipairs(self.modules) do
    self:rethrowErrors(m, i, "accUpdateGradParameters", input[i], gradOutput[i], lr)
  end
end

ParallelTable.__tostring__ = nn.Container._branchesString
fresh_on_type(ParallelTable, ptparent, { output = new_table, gradInput = new_table })

-- nn.ConcatTable(): every module gets the input; output[i] is module i's output.
-- gradInput is the sum of the modules' gradInputs (a table shaped as the input when the
-- input is a table).
local ConcatTable, ctparent = torch.class("nn.ConcatTable", "nn.Container")

function ConcatTable:__init()
  ctparent.__init(self)
  self.output = {}
end

function ConcatTable:updateOutput(input)
  local out = self.output
  for i, m in ipairs(self.modules) do out[i] = self:rethrowErrors(m, i, "updateOutput", input) end
  drop_after(out, #self.modules)
  return out
end

local accumulate = nn.Container._accumulateGrad

local function concattable_backward(self, method, input, gradOutput, scale)
  check_table(self, gradOutput, #self.modules, "gradOutput")
  if torch.isTensor(input) then
    local gi = torch.isTensor(self.gradInput) and self.gradInput or input.new()
    self.gradInput = gi
    for i, m in ipairs(self.modules) do
      local g = self:rethrowErrors(m, i, method, input, gradOutput[i], scale)
      if i == 1 then fit(gi, g):copy_(g) else gi:add(g) end
    end
    if #self.modules == 0 then fit(gi, input):zero_() end
  else
    for i, m in ipairs(self.modules) do
      local g = self:rethrowErrors(m, i, method, input, gradOutput[i], scale)
      if not is_table(g) then
        error(("%s: module %d gave a gradInput that is not a table for a table input"):format(torch.type(self), i), 0)
      end
      if #g ~= #input then
        error(("%s: module %d gave a gradInput of %d entries for an input of %d"):format(torch.type(self), i, #g, #input), 0)
      end
      self.gradInput = accumulate(self.gradInput, g, i == 1)
    end
  end
  return self.gradInput
end

function ConcatTable:updateGradInput(input, gradOutput)
  return concattable_backward(self, "updateGradInput", input, gradOutput)
end

function ConcatTable:backward(input, gradOutput, scale)
  return concattable_backward(self, "backward", input, gradOutput, scale or 1)
end

function ConcatTable:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  for i, m in ipairs(self.modules) do
    self:rethrowErrors(m, i, "accGradParameters", input, gradOutput[i], scale)
  end
end

function ConcatTable:accUpdateGradParameters(input, gradOutput, lr)
  for i, m in ipairs(self.modules) do
    self:rethrowErrors(m, i, "accUpdateGradParameters", input, gradOutput[i], lr)
  end
end

ConcatTable.__tostring__ = nn.Container._branchesString
fresh_on_type(ConcatTable, ctparent, { output = new_table, gradInput = new_tensor })

-- nn.MapTable(module [, shared = true]): the module applied to every entry of the input
-- table, through clones made as the table grows; the clones share the module's weight,
-- bias and their gradients unless shared is false
local MapTable, mtparent = torch.class("nn.MapTable", "nn.Container")

function MapTable:__init(module, shared)
  mtparent.__init(self)
  self.shared = shared == nil or shared
  self.sharedparams = { "weight", "bias", "gradWeight", "gradBias" }
  self.output = {}
  self.gradInput = {}
  if module then self:add(module) end
end

function MapTable:add(module)
  if self.module then error("nn.MapTable: holds a single module (it has one)", 2) end
  if not torch.isTypeOf(module, "nn.Module") then error("nn.MapTable: the module must be an nn.Module", 2) end
  self.module = module
  self.modules[1] = module
  return self
end

-- clones up to n
function MapTable:_extend(n)
  if not self.module then error("nn.MapTable: no module to map (add one)", 3) end
  self.sharedparams = self.sharedparams or { "weight", "bias", "gradWeight", "gradBias" }
  self.modules[1] = self.module
  for i = 2, n do
    if not self.modules[i] then
      self.modules[i] = self.shared and self.module:clone(table.unpack(self.sharedparams))
        or self.module:clone()
    end
  end
end

function MapTable:resize(n)
  self:_extend(n)
  for i = #self.modules, math.max(n, 1) + 1, -1 do
    self.modules[i]:clearState()
    self.modules[i] = nil
  end
  return self
end

local function check_map(self, input)
  check_table(self, input)
  self:_extend(#input)
end

function MapTable:updateOutput(input)
  check_map(self, input)
  self.output = {}
  for i = 1, #input do self.output[i] = self:rethrowErrors(self.modules[i], i, "updateOutput", input[i]) end
  return self.output
end

function MapTable:updateGradInput(input, gradOutput)
  check_map(self, input)
  self.gradInput = {}
  for i = 1, #input do
    self.gradInput[i] = self:rethrowErrors(self.modules[i], i, "updateGradInput", input[i], gradOutput[i])
  end
  return self.gradInput
end

function MapTable:accGradParameters(input, gradOutput, scale)
  check_map(self, input)
  scale = scale or 1
  for i = 1, #input do
    self:rethrowErrors(self.modules[i], i, "accGradParameters", input[i], gradOutput[i], scale)
  end
end

function MapTable:accUpdateGradParameters(input, gradOutput, lr)
  check_map(self, input)
  for i = 1, #input do
    self:rethrowErrors(self.modules[i], i, "accUpdateGradParameters", input[i], gradOutput[i], lr)
  end
end

-- with shared parameters the clones' are the module's: touch them once
function MapTable:zeroGradParameters()
  if not self.module then return end
  if self.shared then self.module:zeroGradParameters() else mtparent.zeroGradParameters(self) end
end

function MapTable:updateParameters(lr)
  if not self.module then return end
  if self.shared then self.module:updateParameters(lr) else mtparent.updateParameters(self, lr) end
end

function MapTable:clearState()
  for i = #self.modules, 2, -1 do
    self.modules[i]:clearState()
    self.modules[i] = nil
  end
  return mtparent.clearState(self)
end

fresh_on_type(MapTable, mtparent, { output = new_table, gradInput = new_table })

function MapTable:__tostring__()
  if not self.module then return torch.type(self) .. " { }" end
  return torch.type(self) .. " {\n  " .. tostring(self.module):gsub("\n", "\n        ") .. "\n}"
end

------------------------------------------------------------------------------------------
-- Table plumbing

-- nn.SplitTable(dim [, nInputDims]): the slices input:select(dim, i) as a table. dim < 0
-- counts from the end; with nInputDims, an input of nInputDims + 1 dims is a batch and
-- dim counts within the example.
local SplitTable, splitparent = torch.class("nn.SplitTable", "nn.Module")
fresh_on_type(SplitTable, splitparent, { output = new_table, gradInput = new_tensor })

function SplitTable:__init(dimension, nInputDims)
  splitparent.__init(self)
  if math.type(dimension) == nil then error("nn.SplitTable(dimension [, nInputDims]): dimension must be a number", 2) end
  self.dimension = dimension
  self.nInputDims = nInputDims
end

function SplitTable:_getPositiveDimension(input)
  local d = self.dimension
  if d < 0 then
    d = input:dim() + d + 1
  elseif self.nInputDims and input:dim() == self.nInputDims + 1 then
    d = d + 1
  end
  if d < 1 or d > input:dim() then
    error(("nn.SplitTable: dimension %d out of range for an input of %d dims"):format(self.dimension, input:dim()), 3)
  end
  return d
end

function SplitTable:updateOutput(input)
  if not torch.isTensor(input) then error("nn.SplitTable: the input must be a tensor, got " .. torch.type(input), 2) end
  local d = self:_getPositiveDimension(input)
  local out
  if input:dim() == 1 then
    -- a vector's slices are its numbers, as Torch7's select gave them
    out = {}
    for i = 1, input:size(1) do out[i] = input[i] end
  else
    out = input:unbind(d)   -- the views input:select(d, i), in one call
  end
  self.output = out
  return out
end

function SplitTable:updateGradInput(input, gradOutput)
  local d = self:_getPositiveDimension(input)
  local n = input:size(d)
  check_table(self, gradOutput, n, "gradOutput")
  local gi = self.gradInput
  if not torch.isTensor(gi) or torch.type(gi) ~= torch.type(input) then gi = input.new(); self.gradInput = gi end
  fit(gi, input)
  if input:dim() > 1 then
    -- the slices stacked in one call when they have the slices' size
    local g1 = gradOutput[1]
    local ok = #gradOutput == n and torch.isTensor(g1) and torch.type(g1) == torch.type(gi)
      and g1:dim() == input:dim() - 1
    if ok then
      for i = 1, n do
        local g = gradOutput[i]
        if not torch.isTensor(g) or not same_size(g, g1) then ok = false; break end
      end
      if ok then
        for k = 1, g1:dim() do
          if g1:size(k) ~= input:size(k < d and k or k + 1) then ok = false; break end
        end
      end
    end
    if ok then
      torch.stack(gi, gradOutput, d)
      return gi
    end
  end
  for i = 1, n do
    local g = gradOutput[i]
    if input:dim() == 1 then
      if torch.isTensor(g) then gi:narrow(1, i, 1):copy(g) else gi[i] = g end
    else
      gi:select(d, i):copy(g)
    end
  end
  return gi
end

-- nn.JoinTable(dim [, nInputDims]): the tensors of the input concatenated along dim (their
-- other sizes must agree); dim < 0 counts from the end; with nInputDims, inputs of
-- nInputDims + 1 dims are batches and dim counts within the example
local JoinTable, joinparent = torch.class("nn.JoinTable", "nn.Module")

function JoinTable:__init(dimension, nInputDims)
  joinparent.__init(self)
  if math.type(dimension) == nil then error("nn.JoinTable(dimension [, nInputDims]): dimension must be a number", 2) end
  self.size = torch.LongStorage()
  self.dimension = dimension
  self.gradInput = {}
  self.nInputDims = nInputDims
end

function JoinTable:_getPositiveDimension(input)
  local nd = input[1]:dim()
  local d = self.dimension
  if d < 0 then
    d = nd + d + 1
  elseif self.nInputDims and nd == self.nInputDims + 1 then
    d = d + 1
  end
  if d < 1 or d > nd then
    error(("nn.JoinTable: dimension %d out of range for inputs of %d dims"):format(self.dimension, nd), 3)
  end
  return d
end

local function check_join(self, input)
  check_table(self, input, 1)
  local first = input[1]
  if not torch.isTensor(first) then error("nn.JoinTable: input[1] must be a tensor, got " .. torch.type(first), 3) end
  local d = self:_getPositiveDimension(input)
  local nd = first:dim()
  for i = 2, #input do
    local t = input[i]
    if not torch.isTensor(t) then error(("nn.JoinTable: input[%d] must be a tensor, got %s"):format(i, torch.type(t)), 3) end
    local ok = t:dim() == nd
    if ok then
      for k = 1, nd do
        if k ~= d and t:size(k) ~= first:size(k) then ok = false; break end
      end
    end
    if not ok then
      error(("nn.JoinTable: input[%d] is %s but input[1] is %s (they may only differ in dim %d)")
        :format(i, sizes_str(t), sizes_str(first), d), 3)
    end
  end
  return d
end

function JoinTable:updateOutput(input)
  local d = check_join(self, input)
  local out = self.output
  local joined = torch.cat(input, d)
  if torch.type(out) == torch.type(joined) then
    out:set(joined)
  else
    fit(out, joined):copy_(joined)   -- the module's own type (Torch7's copy converted)
  end
  return out
end

function JoinTable:updateGradInput(input, gradOutput)
  local d = check_join(self, input)
  local gi = self.gradInput
  local offset = 1
  for i = 1, #input do
    local t = input[i]
    local n = t:size(d)
    copy_as(slot(gi, i, t), t, gradOutput:narrow(d, offset, n))
    offset = offset + n
  end
  drop_after(gi, #input)
  return gi
end

function JoinTable:type(typename, tensorCache)
  self.gradInput = {}
  return joinparent.type(self, typename, tensorCache)
end

-- input[index] (a tensor or a table); gradInput has the input's shape, zeros except at index
local SelectTable, selparent = torch.class("nn.SelectTable", "nn.Module")

function SelectTable:__init(index)
  selparent.__init(self)
  if index == nil then error("nn.SelectTable(index): index expected", 2) end
  self.index = index
  self.gradInput = {}
end

local function select_index(self, input)
  check_table(self, input)
  local index = self.index
  if math.type(index) ~= nil and index < 0 then index = #input + index + 1 end
  if input[index] == nil then
    error(("nn.SelectTable: index %s does not exist in an input of %d entries"):format(tostring(self.index), #input), 3)
  end
  return index
end

function SelectTable:updateOutput(input)
  self.output = input[select_index(self, input)]
  return self.output
end

-- dst shaped as src with zeros in every tensor
local function zeros_like(dst, src)
  if torch.isTensor(src) then
    dst = (torch.isTensor(dst) and torch.type(dst) == torch.type(src)) and dst or src.new()
    return fit(dst, src):zero_()
  end
  if not is_table(src) then return nil end
  dst = is_table(dst) and dst or {}
  for k, v in pairs(src) do dst[k] = zeros_like(dst[k], v) end
  for k in pairs(dst) do if src[k] == nil then dst[k] = nil end end
  return dst
end

-- dst a copy of src (tensors or nested tables)
local function copy_like(dst, src)
  if torch.isTensor(src) then
    dst = (torch.isTensor(dst) and torch.type(dst) == torch.type(src)) and dst or src.new()
    return fit(dst, src):copy_(src)
  end
  dst = is_table(dst) and dst or {}
  for k, v in pairs(src) do dst[k] = copy_like(dst[k], v) end
  for k in pairs(dst) do if src[k] == nil then dst[k] = nil end end
  return dst
end

function SelectTable:updateGradInput(input, gradOutput)
  local index = select_index(self, input)
  local gi = is_table(self.gradInput) and self.gradInput or {}
  for k, v in pairs(input) do
    if k ~= index then gi[k] = zeros_like(gi[k], v) end
  end
  for k in pairs(gi) do if input[k] == nil then gi[k] = nil end end
  gi[index] = copy_like(gi[index], gradOutput)
  self.gradInput = gi
  return gi
end

function SelectTable:type(typename, tensorCache)
  self.gradInput = {}
  self.output = {}
  return selparent.type(self, typename, tensorCache)
end

function SelectTable:clearState()
  -- output is the caller's: forget it rather than empty it
  self.output = {}
  self.gradInput = {}
  return self
end

function SelectTable:__tostring__()
  return torch.type(self) .. "(" .. tostring(self.index) .. ")"
end

-- nn.NarrowTable(offset [, length = 1]): the entries offset..offset+length-1 of the input
-- table; gradInput passes the gradOutputs through, zeros for the other entries
local NarrowTable, ntparent = torch.class("nn.NarrowTable", "nn.Module")

function NarrowTable:__init(offset, length)
  ntparent.__init(self)
  if math.type(offset) == nil then error("nn.NarrowTable(offset, length): offset must be a number", 2) end
  self.offset = offset
  self.length = length or 1
  self.output = {}
  self.gradInput = {}
end

local function check_narrow(self, input)
  check_table(self, input)
  local last = self.offset + self.length - 1
  if self.offset < 1 or last > #input then
    error(("nn.NarrowTable: entries %d..%d out of range for an input of %d entries"):format(self.offset, last, #input), 3)
  end
end

function NarrowTable:updateOutput(input)
  check_narrow(self, input)
  local out = self.output
  for i = 1, self.length do out[i] = input[self.offset + i - 1] end
  drop_after(out, self.length)
  return out
end

function NarrowTable:updateGradInput(input, gradOutput)
  check_narrow(self, input)
  local gi = self.gradInput
  local first, last = self.offset, self.offset + self.length - 1
  for i = 1, #input do
    if i >= first and i <= last then
      gi[i] = gradOutput[i - first + 1]
    else
      gi[i] = zeros_like(gi[i], input[i])
    end
  end
  drop_after(gi, #input)
  return gi
end

function NarrowTable:type(typename, tensorCache)
  self.output = {}
  self.gradInput = {}
  return ntparent.type(self, typename, tensorCache)
end

function NarrowTable:clearState()
  self.output = {}
  self.gradInput = {}
  return self
end

-- nn.FlattenTable(): a nested table of tensors as one flat table (depth first); the
-- output table is rebuilt only when the input's structure or tensors change
local FlattenTable, ftparent = torch.class("nn.FlattenTable", "nn.Module")

function FlattenTable:__init()
  ftparent.__init(self)
  self.output = {}
  self.input_map = {}
  self.gradInput = {}
end

-- appends input's tensors to out; returns input's shape with each tensor's index in out
local function flatten_into(out, input)
  if is_table(input) then
    local map = {}
    for i = 1, #input do map[i] = flatten_into(out, input[i]) end
    return map
  end
  out[#out + 1] = input
  return #out
end

-- whether map still describes where input's tensors are in flat
local function same_mapping(flat, input, map)
  if map == nil or flat == nil or input == nil then return false end
  if is_table(input) then
    if type(map) ~= "table" or #map ~= #input then return false end
    for i = 1, #input do
      if not same_mapping(flat, input[i], map[i]) then return false end
    end
    return true
  end
  return type(map) == "number" and rawequal(flat[map], input)
end

-- the flat table's entries put back in the nested shape of map
local function unflatten(flat, map)
  if type(map) == "table" then
    local t = {}
    for i = 1, #map do t[i] = unflatten(flat, map[i]) end
    return t
  end
  return flat[map]
end

function FlattenTable:updateOutput(input)
  check_table(self, input)
  if not same_mapping(self.output, input, self.input_map) then
    self.output = {}
    self.input_map = flatten_into(self.output, input)
  end
  return self.output
end

function FlattenTable:updateGradInput(input, gradOutput)
  check_table(self, input)
  check_table(self, gradOutput, nil, "gradOutput")
  if not same_mapping(gradOutput, self.gradInput, self.input_map) then
    self.gradInput = unflatten(gradOutput, self.input_map)
  end
  return self.gradInput
end

function FlattenTable:type(typename, tensorCache)
  -- holds references only: emptied, not converted
  if not typename then return self._type end
  self:clearState()
  self._type = typename
  return self
end

function FlattenTable:clearState()
  self.input_map = {}
  self.output = {}
  self.gradInput = {}
  return self
end

-- nn.ZipTable(): { {a1, a2}, {b1, b2}, ... } -> { {a1, b1, ...}, {a2, b2, ...} }
local ZipTable, zparent = torch.class("nn.ZipTable", "nn.Module")
fresh_on_type(ZipTable, zparent, { output = new_table, gradInput = new_table })

function ZipTable:__init()
  zparent.__init(self)
  self.output = {}
  self.gradInput = {}
end

local function zip(tables, who)
  local out = {}
  for i, t in ipairs(tables) do
    if not is_table(t) then error(("nn.%s: entry %d must be a table, got %s"):format(who, i, torch.type(t)), 3) end
    for j, v in ipairs(t) do
      local o = out[j] or {}
      o[i] = v
      out[j] = o
    end
  end
  return out
end

function ZipTable:updateOutput(input)
  check_table(self, input)
  self.output = zip(input, "ZipTable")
  return self.output
end

function ZipTable:updateGradInput(input, gradOutput)
  check_table(self, gradOutput, nil, "gradOutput")
  self.gradInput = zip(gradOutput, "ZipTable")
  return self.gradInput
end

-- nn.ZipTableOneToMany(): { v, {a, b, c} } -> { {v, a}, {v, b}, {v, c} }; v's gradient
-- is the sum of its copies'
local ZipOne, zoparent = torch.class("nn.ZipTableOneToMany", "nn.Module")
fresh_on_type(ZipOne, zoparent, { output = new_table, gradInput = new_table })

function ZipOne:__init()
  zoparent.__init(self)
  self.output = {}
  self.gradInput = {}
  self.gradInputEl = torch.Tensor()
end

local function check_zipone(self, input)
  if not is_table(input) or #input ~= 2 or not is_table(input[2]) then
    error("nn.ZipTableOneToMany: the input must be a table {element, table}", 3)
  end
end

function ZipOne:updateOutput(input)
  check_zipone(self, input)
  local v = input[1]
  self.output = {}
  for i, x in ipairs(input[2]) do self.output[i] = { v, x } end
  return self.output
end

function ZipOne:updateGradInput(input, gradOutput)
  check_zipone(self, input)
  local v = input[1]
  local gv = self.gradInputEl
  if torch.type(gv) ~= torch.type(v) then gv = v.new(); self.gradInputEl = gv end
  gv:resizeAs(v):zero()
  local rest = {}
  for i, g in ipairs(gradOutput) do
    gv:add(g[1])
    rest[i] = g[2]
  end
  self.gradInput = { gv, rest }
  return self.gradInput
end

------------------------------------------------------------------------------------------
-- Element-wise arithmetic across a table

-- nn.CAddTable([inplace]): the sum of the input's tensors (inplace: written into input[1])
local CAddTable, caparent = torch.class("nn.CAddTable", "nn.Module")
fresh_on_type(CAddTable, caparent, { output = new_tensor, gradInput = new_table })

function CAddTable:__init(inplace)
  caparent.__init(self)
  self.inplace = inplace
  self.gradInput = {}
end

function CAddTable:updateOutput(input)
  check_table(self, input, 1)
  check_same_size(self, input)
  local out = self.output
  local n = #input
  if self.inplace then
    out:set(input[1])
    for i = 2, n do out:add_(input[i]) end
  elseif n == 1 then
    fit(out, input[1]):copy_(input[1])
  else
    fit(out, input[1]):add(input[1], input[2])
    for i = 3, n do out:add_(input[i]) end
  end
  return out
end

function CAddTable:updateGradInput(input, gradOutput)
  local gi = self.gradInput
  for i = 1, #input do
    local g = slot(gi, i, input[1])
    if self.inplace then g:set(gradOutput) else copy_as(g, input[i], gradOutput) end
  end
  drop_after(gi, #input)
  return gi
end

-- nn.CSubTable(): input[1] - input[2]
local CSubTable, csparent = torch.class("nn.CSubTable", "nn.Module")

function CSubTable:__init()
  csparent.__init(self)
  self.gradInput = {}
end

function CSubTable:updateOutput(input)
  check_table(self, input, 2)
  check_same_size(self, input)
  fit(self.output, input[1]):csub(input[1], input[2])
  return self.output
end

function CSubTable:updateGradInput(input, gradOutput)
  gradOutput = grad_as(self, gradOutput, input[1])
  local gi = self.gradInput
  copy_as(slot(gi, 1, input[1]), input[1], gradOutput)
  fit(slot(gi, 2, input[1]), input[2]):mul(gradOutput, -1)
  drop_after(gi, 2)
  return gi
end

-- nn.CMulTable(): the element-wise product of the input's tensors
local CMulTable, cmparent = torch.class("nn.CMulTable", "nn.Module")

function CMulTable:__init()
  cmparent.__init(self)
  self.gradInput = {}
end

function CMulTable:updateOutput(input)
  check_table(self, input, 1)
  check_same_size(self, input)
  local out = self.output
  if #input == 1 then
    fit(out, input[1]):copy_(input[1])
  else
    fit(out, input[1]):cmul(input[1], input[2])
    for i = 3, #input do out:cmul_(input[i]) end
  end
  return out
end

-- d/d input[i] = gradOutput times the product of the others (no division: zeros allowed)
function CMulTable:updateGradInput(input, gradOutput)
  gradOutput = grad_as(self, gradOutput, input[1])
  local gi = self.gradInput
  local n = #input
  for i = 1, n do
    local g = fit(slot(gi, i, input[1]), input[i])
    if n == 1 then
      g:copy(gradOutput)
    else
      local first = i == 1 and 2 or 1
      g:cmul(gradOutput, input[first])
      for j = first + 1, n do
        if j ~= i then g:cmul_(input[j]) end
      end
    end
  end
  drop_after(gi, n)
  return gi
end

-- the gradient through output / input[i] (fewer products; wrong where an input is 0)
function CMulTable:updateGradInput_efficient(input, gradOutput)
  gradOutput = grad_as(self, gradOutput, input[1])
  self.tout = self.tout or input[1].new()
  local gi = self.gradInput
  for i = 1, #input do
    fit(self.tout, self.output):cdiv(self.output, input[i])
    fit(slot(gi, i, input[1]), input[i]):cmul(gradOutput, self.tout)
  end
  drop_after(gi, #input)
  return gi
end

function CMulTable:clearState()
  nn.utils.clear(self, "tout")
  return cmparent.clearState(self)
end

-- nn.CDivTable(): input[1] / input[2]
local CDivTable, cdparent = torch.class("nn.CDivTable", "nn.Module")

function CDivTable:__init()
  cdparent.__init(self)
  self.gradInput = {}
end

function CDivTable:updateOutput(input)
  check_table(self, input, 2)
  check_same_size(self, input)
  fit(self.output, input[1]):cdiv(input[1], input[2])
  return self.output
end

-- d/da (a / b) = 1 / b; d/db (a / b) = -a / b^2 = -(g / b) * a / b
function CDivTable:updateGradInput(input, gradOutput)
  gradOutput = grad_as(self, gradOutput, input[1])
  local gi = self.gradInput
  local g1 = fit(slot(gi, 1, input[1]), input[1]):cdiv(gradOutput, input[2])
  fit(slot(gi, 2, input[1]), input[2]):cmul(g1, self.output):mul_(-1)
  drop_after(gi, 2)
  return gi
end

-- nn.CMaxTable() / nn.CMinTable(): the element-wise max / min of the input's tensors;
-- the gradient goes to the input that gave the element (the first one on ties)
local function extremum_table(name, cmp, pick)
  local C, parent = torch.class("nn." .. name, "nn.Module")

  function C:__init()
    parent.__init(self)
    self.gradInput = {}
    self.maxIdx = torch.Tensor()
  end

  function C:updateOutput(input)
    check_table(self, input, 1)
    check_same_size(self, input)
    local out, idx = self.output, self.maxIdx
    fit(out, input[1]):copy_(input[1])
    if torch.type(idx) ~= torch.type(out) then idx = out.new(); self.maxIdx = idx end
    fit(idx, out):fill_(1)
    if #input > 1 then
      local mask = self._mask
      if torch.type(mask) ~= "torch.ByteTensor" then mask = torch.ByteTensor(); self._mask = mask end
      for i = 2, #input do
        mask[cmp](mask, input[i], out)   -- where input[i] beats the best so far
        idx:maskedFill(mask, i)
        out[pick](out, input[i])
      end
    end
    return out
  end

  function C:updateGradInput(input, gradOutput)
    gradOutput = grad_as(self, gradOutput, input[1])
    local gi = self.gradInput
    for i = 1, #input do
      fit(slot(gi, i, input[i]), input[i]):eq(self.maxIdx, i):cmul_(gradOutput)
    end
    drop_after(gi, #input)
    return gi
  end

  function C:type(typename, tensorCache)
    if typename then self._mask = nil end
    return parent.type(self, typename, tensorCache)
  end

  function C:clearState()
    nn.utils.clear(self, "_mask", "maxIdx")
    return parent.clearState(self)
  end
  return C
end
extremum_table("CMaxTable", "gt", "cmax")
extremum_table("CMinTable", "lt", "cmin")

-- nn.CAddTensorTable(): { v, {a, b, c} } -> { v + a, v + b, v + c }
local CAddTensorTable, cattparent = torch.class("nn.CAddTensorTable", "nn.Module")
fresh_on_type(CAddTensorTable, cattparent, { output = new_table, gradInput = new_table })

function CAddTensorTable:__init()
  cattparent.__init(self)
  self.gradInput = {}
end

local function check_addtensor(self, input)
  if not is_table(input) or not torch.isTensor(input[1]) or not is_table(input[2]) then
    error("nn.CAddTensorTable: the input must be a table {tensor, table of tensors}", 3)
  end
  local v = input[1]
  for i, t in ipairs(input[2]) do
    if not torch.isTensor(t) or not same_size(t, v) then
      error(("nn.CAddTensorTable: input[2][%d] must be a tensor of input[1]'s size (%s)"):format(i, sizes_str(v)), 3)
    end
  end
end

function CAddTensorTable:updateOutput(input)
  check_addtensor(self, input)
  local v = input[1]
  local out = {}
  for i, t in ipairs(input[2]) do out[i] = torch.add(t, v) end
  self.output = out
  return out
end

function CAddTensorTable:updateGradInput(input, gradOutput)
  check_addtensor(self, input)
  local v, list = input[1], input[2]
  local gi = self.gradInput
  local gv = fit(slot(gi, 1, v), v)
  if #list == 0 then gv:zero_() else copy_as(gv, v, gradOutput[1]) end
  for i = 2, #list do gv:add(gradOutput[i]) end
  local gl = is_table(gi[2]) and gi[2] or {}
  for i = 1, #list do copy_as(slot(gl, i, v), v, gradOutput[i]) end
  drop_after(gl, #list)
  gi[2] = gl
  return gi
end

------------------------------------------------------------------------------------------
-- nn.MixtureTable([dim]): input {gater, experts}: the experts' outputs weighted by the
-- gater's and summed. gater: n weights (or a batch B x n); experts: a table of n tensors
-- of one size, or one tensor with the n experts along dim (default 1, or 2 for a batch).
local MixtureTable, mixparent = torch.class("nn.MixtureTable", "nn.Module")

function MixtureTable:__init(dim)
  mixparent.__init(self)
  self.dim = dim
  self.size = torch.LongStorage()
  self.batchSize = 0
  self.size2 = torch.LongStorage()
  self.backwardSetup = false
  self.gradInput = {}
end

local function check_mixture(self, input)
  if not is_table(input) or not torch.isTensor(input[1]) or input[2] == nil then
    error("nn.MixtureTable: the input must be a table {gater, experts}", 3)
  end
  local gater, experts = input[1], input[2]
  if gater:dim() < 1 or gater:dim() > 2 then
    error(("nn.MixtureTable: the gater must be 1-D or 2-D (got %d dims)"):format(gater:dim()), 3)
  end
  local dimG = gater:dim()
  local n = gater:size(dimG)
  if is_table(experts) then
    if #experts ~= n then
      error(("nn.MixtureTable: %d experts for %d gater outputs (should be one gater output per expert)"):format(#experts, n), 3)
    end
    for i = 1, n do
      local e = experts[i]
      if not torch.isTensor(e) or not same_size(e, experts[1]) then
        error(("nn.MixtureTable: expert %d must be a tensor of expert 1's size"):format(i), 3)
      end
    end
  elseif torch.isTensor(experts) then
    local dim = self.dim or (dimG == 1 and 1 or 2)
    if dim > experts:dim() or experts:size(dim) ~= n then
      error(("nn.MixtureTable: the experts (%s) need %d entries along dim %d"):format(sizes_str(experts), n, dim), 3)
    end
  else
    error("nn.MixtureTable: the experts must be a table of tensors or a tensor", 3)
  end
  return gater, experts, dimG
end

-- the gater as a tensor to broadcast against the experts (sizes 1 but for the batch and dim)
local function gater_view(self, gater, ndims)
  local dimG = gater:dim()
  local sizes = {}
  for k = 1, ndims do sizes[k] = 1 end
  if dimG > 1 then sizes[1] = gater:size(1) end
  sizes[self.dim] = gater:size(dimG)
  return gater:contiguous():view(torch.LongStorage(sizes))
end

function MixtureTable:updateOutput(input)
  local gater, experts, dimG = check_mixture(self, input)
  self.dimG = dimG
  self.batchSize = dimG > 1 and gater:size(1) or 1
  self.dim = self.dim or (dimG == 1 and 1 or 2)
  if is_table(experts) then
    self.table = true
    local e1 = experts[1]
    local g = gater_view(self, gater, e1:dim() + 1)
    self._gaterView = g
    local out = self.output:resizeAs(e1):zero()
    for i, e in ipairs(experts) do out:addcmul(1, e, g:select(self.dim, i):expandAs(e)) end
  else
    self.table = false
    local g = gater_view(self, gater, experts:dim())
    self._gaterView = g
    self._expert = self._expert or experts.new()
    self._expert:resizeAs(experts):cmul(g:expandAs(experts), experts)
    self.output:resizeAs(experts:select(self.dim, 1)):copy(self._expert:sum(self.dim))
  end
  return self.output
end

function MixtureTable:updateGradInput(input, gradOutput)
  local gater, experts, dimG = check_mixture(self, input)
  local g = self._gaterView
  local gi = self.gradInput
  local ggater = slot(gi, 1, gater):resizeAs(gater)
  self._expert = self._expert or gater.new()
  if is_table(experts) then
    local gexperts = is_table(gi[2]) and gi[2] or {}
    for i, e in ipairs(experts) do
      -- gater: the sum over an example's elements of gradOutput * expert i
      self._expert:resizeAs(e):cmul(gradOutput, e)
      local rows = dimG == 1 and self._expert:view(1, -1) or self._expert:view(gradOutput:size(1), -1)
      local s = rows:sum(2)
      if dimG == 1 then ggater[i] = s[1][1] else ggater:select(2, i):copy(s) end
      -- expert i: its gate times gradOutput
      slot(gexperts, i, e):resizeAs(e):cmul(g:select(self.dim, i):expandAs(e), gradOutput)
    end
    drop_after(gexperts, #experts)
    gi[2] = gexperts
  else
    local sizes = experts:size():totable()
    sizes[self.dim] = 1
    local gout = gradOutput:contiguous():view(torch.LongStorage(sizes)):expandAs(experts)
    self._expert:resizeAs(experts):cmul(gout, experts)
    -- the gater's dim next to the batch, then the rest summed
    local t = self._expert:transpose(self.dim, dimG):contiguous()
    local rows = dimG == 1 and t:view(gater:size(1), -1) or t:view(gater:size(1), gater:size(2), -1)
    ggater:copy(rows:sum(dimG + 1))
    slot(gi, 2, experts):resizeAs(experts):cmul(g:expandAs(experts), gout)
  end
  drop_after(gi, 2)
  return gi
end

function MixtureTable:type(typename, tensorCache)
  self._gaterView, self._expert = nil, nil
  self.gradInput = {}
  return mixparent.type(self, typename, tensorCache)
end

function MixtureTable:clearState()
  nn.utils.clear(self, "_gaterView", "_expert")
  self.gradInput = {}
  return mixparent.clearState(self)
end

return nn
