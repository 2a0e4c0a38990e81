-- t7nn/shape.lua — modules that change the shape of a tensor or pick part of it: Reshape,
-- View, Collapse, Squeeze, Unsqueeze, Transpose, Replicate, Select, Narrow, Index,
-- MaskedSelect, Padding, Convert.
local torch = require "torch"
local nn = require "t7nn.env"
local check_tensor = require("t7nn.helpers").check_tensor

-- nn.Reshape(d1, d2, ... [, batchMode]) or nn.Reshape(LongStorage [, batchMode]): the
-- input's elements as that shape; an input with more elements, or whose first dim is 1, is
-- a batch (its first dim kept) unless batchMode is false; batchMode true always keeps the
-- first dim
local Reshape, parent = torch.class("nn.Reshape", "nn.Module")

function Reshape:__init(...)
  parent.__init(self)
  local args = { ... }
  if type(args[#args]) == "boolean" then self.batchMode = table.remove(args) end
  if #args == 1 and torch.typename(args[1]) == "torch.LongStorage" then args = args[1]:totable() end
  self.size = torch.LongStorage(#args)
  self.nelement = 1
  for i, s in ipairs(args) do
    if math.type(s) == nil or s < 1 then error(("nn.Reshape: size %d must be a positive number"):format(i), 2) end
    self.size[i] = s
    self.nelement = self.nelement * s
  end
  self.batchsize = torch.LongStorage(#args + 1)
  for i = 1, #args do self.batchsize[i + 1] = args[i] end
end

local function batched(self, input)
  if self.batchMode == false then return false end
  return self.batchMode == true or input:nElement() ~= self.nelement or input:size(1) == 1
end

function Reshape:updateOutput(input)
  if not input:isContiguous() then
    self._input = self._input or input.new()
    self._input:resizeAs(input):copy(input)
    input = self._input
  end
  if batched(self, input) then
    local n = input:size(1)
    if input:nElement() ~= n * self.nelement then
      error(("nn.Reshape: an input of %d elements cannot be %d x %s"):format(input:nElement(), n,
        table.concat(self.size:totable(), "x")), 2)
    end
    self.batchsize[1] = n
    self.output:set(input:view(self.batchsize))
  else
    if input:nElement() ~= self.nelement then
      error(("nn.Reshape: an input of %d elements cannot be %s"):format(input:nElement(),
        table.concat(self.size:totable(), "x")), 2)
    end
    self.output:set(input:view(self.size))
  end
  return self.output
end

function Reshape:updateGradInput(input, gradOutput)
  if not gradOutput:isContiguous() then
    self._gradOutput = self._gradOutput or gradOutput.new()
    self._gradOutput:resizeAs(gradOutput):copy(gradOutput)
    gradOutput = self._gradOutput
  end
  self.gradInput:set(gradOutput:view(input:size()))
  return self.gradInput
end

function Reshape:__tostring__()
  return torch.type(self) .. "(" .. table.concat(self.size:totable(), "x") .. ")"
end

function Reshape:clearState()
  nn.utils.clear(self, "_input", "_gradOutput")
  return parent.clearState(self)
end

-- cls:type(...) first forgets the named fields (views of the caller's tensors, set again
-- by the next forward/backward) rather than converting them: a copy would be wasted, and a
-- view with gaps in its strides cannot be rebuilt on a converted storage
local function forget_views_on_type(cls, parent, ...)
  local names = { ... }
  function cls:type(typename, tensorCache)
    if typename then
      for _, n in ipairs(names) do self[n] = torch.Tensor() end
    end
    return parent.type(self, typename, tensorCache)
  end
end

forget_views_on_type(Reshape, parent, "output", "gradInput")

local function sizes_str(sizes)
  if torch.isTensor(sizes) then sizes = sizes:size() end
  if type(sizes) ~= "table" then sizes = sizes:totable() end
  if sizes.totable then sizes = sizes:totable() end
  return table.concat(sizes, "x")
end

-- res pointed at t viewed as sizes (a LongStorage); a t whose strides allow no view is
-- copied first (into a new tensor: res may be a view of someone else's memory)
local function view_into(res, t, sizes)
  if not t:isContiguous() then
    local ok, v = pcall(t.view, t, sizes)
    if ok then return res:set(v) end
    t = t:contiguous()
  end
  return res:set(t:view(sizes))
end

-- a dim given to a constructor, negative counting from the end of a tensor of n dims
local function real_dim(self, dim, n, what)
  local d = dim < 0 and n + dim + 1 or dim
  if d < 1 or d > n then
    error(("%s: %s %d out of range for an input of %d dims"):format(torch.type(self), what or "dimension", dim, n), 3)
  end
  return d
end

-- nn.View(d1, d2, ...) or nn.View(LongStorage): a view of the input with those sizes (one
-- of them may be -1: inferred). Extra leading elements form a batch dim; with
-- setNumInputDims(n) the last n dims are the example and the ones before it the batch.
local View, view_parent = torch.class("nn.View", "nn.Module")
forget_views_on_type(View, view_parent, "output", "gradInput")

function View:resetSize(...)
  local args = { ... }
  if #args == 1 and torch.typename(args[1]) == "torch.LongStorage" then args = args[1]:totable() end
  self.numElements = 1
  local inferred = false
  for i, s in ipairs(args) do
    if math.type(s) == nil then error(("nn.View: size %d must be a number"):format(i), 3) end
    if s == -1 then
      if inferred then error("nn.View: only one dimension can be at -1", 3) end
      inferred = true
    elseif s < 0 then
      error(("nn.View: size %d is %d: sizes must be positive or -1"):format(i, s), 3)
    else
      self.numElements = self.numElements * s
    end
  end
  self.size = torch.LongStorage(args)
  self._inferred = inferred
  return self
end

function View:__init(...)
  view_parent.__init(self)
  self:resetSize(...)
  self.numInputDims = nil
end

function View:setNumInputDims(numInputDims)
  self.numInputDims = numInputDims
  return self
end

-- the batch size the input implies, or nil when it is a single example
function View:_batchSize(input)
  local nd = input:dim()
  local exampleDims = math.min(self.numInputDims or nd, nd)
  local n = 1
  for d = nd - exampleDims + 1, nd do n = n * input:size(d) end
  if self.numElements == 0 or n % self.numElements ~= 0 then
    error(("nn.View: input view (%s) and desired view (%s) do not match")
      :format(sizes_str(input), table.concat(self.size:totable(), "x")), 3)
  end
  local b = self._inferred and 1 or n // self.numElements
  for d = 1, nd - exampleDims do b = b * input:size(d) end
  if b == 1 and (not self.numInputDims or nd <= self.numInputDims) then return nil end
  return b
end

function View:updateOutput(input)
  check_tensor(self, input)
  local b = self:_batchSize(input)
  local sizes = self.size
  if b then
    sizes = self.size:totable()
    table.insert(sizes, 1, b)
    sizes = torch.LongStorage(sizes)
  end
  local ok, err = pcall(view_into, self.output, input, sizes)
  if not ok then
    error(("nn.View: input view (%s) and desired view (%s) do not match")
      :format(sizes_str(input), table.concat(self.size:totable(), "x")), 2)
  end
  return self.output
end

function View:updateGradInput(input, gradOutput)
  view_into(self.gradInput, gradOutput, input:size())
  return self.gradInput
end

function View:__tostring__()
  return torch.type(self) .. "(" .. table.concat(self.size:totable(), ", ") .. ")"
end

-- nn.Collapse(nInputDim): the example dims as one (an input of more than nInputDim dims
-- keeps its first, batch dim): n x a x b x ... -> n x (a*b*...)
local Collapse, collapse_parent = torch.class("nn.Collapse", "nn.Module")
forget_views_on_type(Collapse, collapse_parent, "output", "gradInput")

function Collapse:__init(nInputDim)
  collapse_parent.__init(self)
  if math.type(nInputDim) == nil then error("nn.Collapse(nInputDim): nInputDim must be a number", 2) end
  self.nInputDim = nInputDim
end

function Collapse:updateOutput(input)
  check_tensor(self, input)
  local sizes = input:dim() > self.nInputDim and { input:size(1), -1 } or { -1 }
  view_into(self.output, input, torch.LongStorage(sizes))
  return self.output
end

function Collapse:updateGradInput(input, gradOutput)
  view_into(self.gradInput, gradOutput, input:size())
  return self.gradInput
end

-- nn.Squeeze([dim [, numInputDims]]): the dims of size 1 removed (only dim when given);
-- with numInputDims, an input of one more dim is a batch: dim counts within the example,
-- and a batch of 1 keeps its batch dim
local Squeeze, squeeze_parent = torch.class("nn.Squeeze", "nn.Module")
forget_views_on_type(Squeeze, squeeze_parent, "output", "gradInput")

function Squeeze:__init(dim, numInputDims)
  squeeze_parent.__init(self)
  self.dim = dim
  self:setNumInputDims(numInputDims)
end

function Squeeze:setNumInputDims(numInputDims)
  self.numInputDims = numInputDims
  return self
end

function Squeeze:updateOutput(input)
  check_tensor(self, input)
  local dim, keepFirst = self.dim, false
  if self.numInputDims and input:dim() == self.numInputDims + 1 then
    if dim then dim = dim + 1 elseif input:size(1) == 1 then keepFirst = true end
  end
  if dim then real_dim(self, dim, input:dim()) end
  local out = dim and input:squeeze(dim) or input:squeeze()
  if keepFirst then out = out:view(torch.LongStorage({ 1, table.unpack(out:size():totable()) })) end
  self.output:set(out)
  return self.output
end

function Squeeze:updateGradInput(input, gradOutput)
  check_tensor(self, gradOutput, "gradOutput")
  if gradOutput:nElement() ~= input:nElement() then
    error(("nn.Squeeze: gradOutput has %d elements, the input %d"):format(gradOutput:nElement(), input:nElement()), 2)
  end
  view_into(self.gradInput, gradOutput, input:size())
  return self.gradInput
end

-- nn.Unsqueeze(pos [, numInputDims]): a dim of size 1 inserted at pos (1..dim+1) of the
-- example; the dims before the example's numInputDims are batch dims. Without
-- numInputDims the first input's dims are taken as the example's.
local Unsqueeze, unsqueeze_parent = torch.class("nn.Unsqueeze", "nn.Module")
forget_views_on_type(Unsqueeze, unsqueeze_parent, "output", "gradInput")

function Unsqueeze:__init(pos, numInputDims)
  unsqueeze_parent.__init(self)
  if math.type(pos) == nil then error("nn.Unsqueeze(pos [, numInputDims]): pos must be a number", 2) end
  self.pos = pos
  self:setNumInputDims(numInputDims)
end

function Unsqueeze:setNumInputDims(numInputDims)
  self.numInputDims = numInputDims
  return self
end

function Unsqueeze:_getActualPosition(input)
  local nd = input:dim()
  self.numInputDims = self.numInputDims or nd
  local batchDims = nd - self.numInputDims
  if batchDims < 0 then
    error(("nn.Unsqueeze: the input has %d dims, fewer than numInputDims (%d)"):format(nd, self.numInputDims), 3)
  end
  local pos = self.pos + batchDims
  if pos < 1 or pos > nd + 1 then
    error(("nn.Unsqueeze: invalid position %d: input:dim() is %d, numInputDims %d")
      :format(self.pos, nd, self.numInputDims), 3)
  end
  return pos
end

function Unsqueeze:updateOutput(input)
  check_tensor(self, input)
  self.output:set(input:unsqueeze(self:_getActualPosition(input)))
  return self.output
end

function Unsqueeze:updateGradInput(input, gradOutput)
  check_tensor(self, gradOutput, "gradOutput")
  if gradOutput:nElement() ~= input:nElement() then
    error(("nn.Unsqueeze: gradOutput has %d elements, the input %d"):format(gradOutput:nElement(), input:nElement()), 2)
  end
  view_into(self.gradInput, gradOutput, input:size())
  return self.gradInput
end

function Unsqueeze:__tostring__()
  return torch.type(self) .. "(dim " .. self.pos .. ")"
end

-- nn.Transpose({d1, d2}, {d3, d4}, ...): the dims swapped pair after pair (a copy);
-- with setNumInputDims(n) the dims count within the last n
local Transpose, transpose_parent = torch.class("nn.Transpose", "nn.Module")

function Transpose:__init(...)
  transpose_parent.__init(self)
  self.permutations = { ... }
  for i, p in ipairs(self.permutations) do
    if type(p) ~= "table" or math.type(p[1]) == nil or math.type(p[2]) == nil then
      error(("nn.Transpose: permutation %d must be a pair of dims {d1, d2}"):format(i), 2)
    end
  end
  self.numInputDims = nil
end

function Transpose:setNumInputDims(numInputDims)
  self.numInputDims = numInputDims
  return self
end

local function transposed(self, t, from, to, step)
  local off = self.numInputDims and t:dim() - self.numInputDims or 0
  for i = from, to, step do
    local p = self.permutations[i]
    local a, b = p[1] + off, p[2] + off
    if a < 1 or b < 1 or a > t:dim() or b > t:dim() then
      error(("nn.Transpose: cannot swap dims %d and %d of a tensor of %d dims"):format(a, b, t:dim()), 3)
    end
    t = t:transpose(a, b)
  end
  return t
end

function Transpose:updateOutput(input)
  check_tensor(self, input)
  local t = transposed(self, input, 1, #self.permutations, 1)
  self.output:resizeAs(t):copy(t)
  return self.output
end

function Transpose:updateGradInput(input, gradOutput)
  local t = transposed(self, gradOutput, #self.permutations, 1, -1)
  self.gradInput:resizeAs(t):copy(t)
  return self.gradInput
end

-- nn.Replicate(nFeatures [, dim = 1 [, nDim]]): nFeatures copies of the input stacked
-- along a new dim `dim` (an expanded view, no copy); an input of more than nDim dims has a
-- batch dim first. gradInput sums the copies.
local Replicate, replicate_parent = torch.class("nn.Replicate", "nn.Module")
forget_views_on_type(Replicate, replicate_parent, "output", "gradInput")

function Replicate:__init(nf, dim, ndim)
  replicate_parent.__init(self)
  if math.type(nf) == nil or nf < 1 then error("nn.Replicate(nFeatures [, dim, nDim]): nFeatures must be a positive number", 2) end
  self.nfeatures = nf
  self.dim = dim or 1
  self.ndim = ndim
  if math.type(self.dim) == nil or self.dim < 1 then
    error("nn.Replicate: can only replicate across positive integer dimensions", 2)
  end
end

function Replicate:_dim(input)
  local d = self.dim + ((self.ndim and input:dim() > self.ndim) and 1 or 0)
  if d > input:dim() + 1 then
    error(("nn.Replicate: not enough input dimensions (%d) to replicate along dimension %d"):format(input:dim(), d), 3)
  end
  return d
end

function Replicate:updateOutput(input)
  check_tensor(self, input)
  local d = self:_dim(input)
  local sizes = input:size():totable()
  table.insert(sizes, d, self.nfeatures)
  self.output:set(input:unsqueeze(d):expand(torch.LongStorage(sizes)))
  return self.output
end

function Replicate:updateGradInput(input, gradOutput)
  local d = self:_dim(input)
  self.gradInput:resizeAs(input):copy(gradOutput:sum(d))
  return self.gradInput
end

-- nn.Select(dim, index): the slice input:select(dim, index) (a copy); negative dim and
-- index count from the end
local Select, select_parent = torch.class("nn.Select", "nn.Module")

function Select:__init(dimension, index)
  select_parent.__init(self)
  if math.type(dimension) == nil or math.type(index) == nil then
    error("nn.Select(dimension, index): both must be numbers", 2)
  end
  self.dimension = dimension
  self.index = index
end

function Select:_where(input)
  if input:dim() < 2 then
    error(("nn.Select: the input must have at least 2 dims (got %d)"):format(input:dim()), 3)
  end
  local d = real_dim(self, self.dimension, input:dim())
  local n = input:size(d)
  local i = self.index < 0 and n + self.index + 1 or self.index
  if i < 1 or i > n then
    error(("nn.Select: index %d out of range for dim %d of size %d"):format(self.index, d, n), 3)
  end
  return d, i
end

function Select:updateOutput(input)
  check_tensor(self, input)
  local d, i = self:_where(input)
  local s = input:select(d, i)
  self.output:resizeAs(s):copy(s)
  return self.output
end

function Select:updateGradInput(input, gradOutput)
  local d, i = self:_where(input)
  self.gradInput:resizeAs(input):zero()
  self.gradInput:select(d, i):copy(gradOutput)
  return self.gradInput
end

function Select:__tostring__()
  return ("%s(%d, %d)"):format(torch.type(self), self.dimension, self.index)
end

-- nn.Narrow(dim, offset [, length = 1]): input:narrow(dim, offset, length) (a copy).
-- Negative dim counts from the end; a negative length l ends |l|-1 elements before the
-- end (-1: up to the last); a negative offset keeps the first (size - length) elements.
local Narrow, narrow_parent = torch.class("nn.Narrow", "nn.Module")

function Narrow:__init(dimension, offset, length)
  narrow_parent.__init(self)
  if math.type(dimension) == nil or math.type(offset) == nil then
    error("nn.Narrow(dimension, offset, length): dimension and offset must be numbers", 2)
  end
  self.dimension = dimension
  self.index = offset
  self.length = length or 1
end

function Narrow:_range(input)
  local d = real_dim(self, self.dimension, input:dim())
  local n = input:size(d)
  local index, length = self.index, self.length
  if length < 0 then length = n - index + length + 2 end
  if index < 0 then index, length = 1, n - length end
  if index < 1 or length < 1 or index + length - 1 > n then
    error(("nn.Narrow: elements %d..%d out of range for dim %d of size %d")
      :format(index, index + length - 1, d, n), 3)
  end
  return d, index, length
end

function Narrow:updateOutput(input)
  check_tensor(self, input)
  local d, i, n = self:_range(input)
  local s = input:narrow(d, i, n)
  if torch.type(self.output) ~= torch.type(s) then self.output = s.new() end
  self.output:resizeAs(s):copy(s)
  return self.output
end

function Narrow:updateGradInput(input, gradOutput)
  local d, i, n = self:_range(input)
  if torch.type(self.gradInput) ~= torch.type(input) then self.gradInput = input.new() end
  self.gradInput:resizeAs(input):zero()
  self.gradInput:narrow(d, i, n):copy(gradOutput)
  return self.gradInput
end

function Narrow:__tostring__()
  return ("%s(%d, %d, %d)"):format(torch.type(self), self.dimension, self.index, self.length)
end

-- nn.Index(dim): input {t, indices (LongTensor)}: t:index(dim, indices), the entries of t
-- along dim at those indices; the indices get a zero gradient
local Index, index_parent = torch.class("nn.Index", "nn.Module")

function Index:__init(dimension)
  index_parent.__init(self)
  if math.type(dimension) == nil then error("nn.Index(dimension): dimension must be a number", 2) end
  self.dimension = dimension
  self.gradInput = { self.gradInput, self.gradInput.new() }
end

local function index_args(self, input)
  if type(input) ~= "table" or not torch.isTensor(input[1]) or not torch.isTensor(input[2]) then
    error("nn.Index: the input must be a table {tensor, LongTensor of indices}", 3)
  end
  local t, idx = input[1], input[2]
  if idx:dim() ~= 1 then error(("nn.Index: the indices must be 1-D (got %d dims)"):format(idx:dim()), 3) end
  real_dim(self, self.dimension, t:dim())
  if idx:nElement() > 0 then
    local lo, hi = idx:min(), idx:max()
    local n = t:size(self.dimension)
    if lo < 1 or hi > n then
      error(("nn.Index: index %d out of range for dim %d of size %d"):format(lo < 1 and lo or hi, self.dimension, n), 3)
    end
  end
  if torch.type(idx) ~= "torch.LongTensor" then idx = idx:long() end
  return t, idx
end

function Index:updateOutput(input)
  local t, idx = index_args(self, input)
  self.output:index(t, self.dimension, idx)
  return self.output
end

function Index:updateGradInput(input, gradOutput)
  local t, idx = index_args(self, input)
  self.gradInput[2]:resize(idx:size()):zero()
  self.gradInput[1]:resizeAs(t):zero():indexAdd(self.dimension, idx, gradOutput)
  return self.gradInput
end

function Index:clearState()
  self.gradInput[1]:set()
  self.gradInput[2]:set()
  self.output:set()
  return self
end

-- nn.MaskedSelect(): input {t, mask (ByteTensor of t's size)}: the elements of t where the
-- mask is 1, as a 1-D tensor; the mask gets a zero gradient
local MaskedSelect, masked_parent = torch.class("nn.MaskedSelect", "nn.Module")

function MaskedSelect:__init()
  masked_parent.__init(self)
  self._gradBuffer = torch.Tensor()
  self._gradMask = torch.ByteTensor()
end

local function masked_args(input)
  if type(input) ~= "table" or not torch.isTensor(input[1]) or not torch.isTensor(input[2]) then
    error("nn.MaskedSelect: the input must be a table {tensor, mask}", 3)
  end
  local t, mask = input[1], input[2]
  if t:nElement() ~= mask:nElement() then
    error(("nn.MaskedSelect: the mask (%s) and the input (%s) differ in size"):format(sizes_str(mask), sizes_str(t)), 3)
  end
  return t, mask
end

function MaskedSelect:updateOutput(input)
  local t, mask = masked_args(input)
  self.output:maskedSelect(t, mask)
  return self.output
end

function MaskedSelect:updateGradInput(input, gradOutput)
  local t, mask = masked_args(input)
  if torch.type(self._gradBuffer) ~= torch.type(t) then self._gradBuffer = t.new() end
  self._gradBuffer:resizeAs(t):zero():maskedCopy(mask, gradOutput)
  if torch.type(self._gradMask) ~= "torch.ByteTensor" then self._gradMask = torch.ByteTensor() end
  self._gradMask:resize(mask:size()):zero()
  self.gradInput = { self._gradBuffer, self._gradMask }
  return self.gradInput
end

function MaskedSelect:type(typename, tensorCache)
  if not typename then return self._type end
  masked_parent.type(self, typename, tensorCache)
  self._gradMask = torch.ByteTensor()   -- the mask's gradient stays a ByteTensor
  return self
end

function MaskedSelect:clearState()
  return nn.utils.clear(self, "output", "gradInput", "_gradBuffer", "_gradMask")
end

-- nn.Padding(dim, pad [, nInputDim [, value = 0 [, index = 1]]]): |pad| entries of value
-- added along dim: pad < 0 puts them before entry `index`, pad > 0 after entry
-- size - index + 1 (index 1: at the end). An input of other than nInputDim dims has a
-- batch dim first.
local Padding, padding_parent = torch.class("nn.Padding", "nn.Module")

function Padding:__init(dim, pad, nInputDim, value, index)
  padding_parent.__init(self)
  if math.type(dim) == nil or math.type(pad) == nil then
    error("nn.Padding(dim, pad [, nInputDim, value, index]): dim and pad must be numbers", 2)
  end
  self.value = value or 0
  self.index = index or 1
  self.dim = dim
  self.pad = pad
  self.nInputDim = nInputDim
  self.outputSize = torch.LongStorage()
end

-- the padded dim, where the input's entries before the padding end, and the pad's length
function Padding:_where(input)
  local dim = self.dim
  if self.nInputDim and input:dim() ~= self.nInputDim then dim = dim + 1 end
  dim = real_dim(self, dim, input:dim())
  local n = input:size(dim)
  local pad, index = self.pad, self.index
  if pad > 0 then index = n - index + 2 else pad = -pad end
  if index < 1 or index > n + 1 then
    error(("nn.Padding: index %d out of range for dim %d of size %d"):format(self.index, dim, n), 3)
  end
  return dim, index - 1, pad
end

function Padding:updateOutput(input)
  check_tensor(self, input)
  local dim, before, pad = self:_where(input)
  local n = input:size(dim)
  local sizes = input:size():totable()
  sizes[dim] = sizes[dim] + pad
  self.outputSize = torch.LongStorage(sizes)
  self.output:resize(self.outputSize):fill(self.value)
  if before > 0 then self.output:narrow(dim, 1, before):copy(input:narrow(dim, 1, before)) end
  if before < n then
    self.output:narrow(dim, before + pad + 1, n - before):copy(input:narrow(dim, before + 1, n - before))
  end
  return self.output
end

function Padding:updateGradInput(input, gradOutput)
  local dim, before, pad = self:_where(input)
  local n = input:size(dim)
  self.gradInput:resizeAs(input)
  if before > 0 then self.gradInput:narrow(dim, 1, before):copy(gradOutput:narrow(dim, 1, before)) end
  if before < n then
    self.gradInput:narrow(dim, before + 1, n - before):copy(gradOutput:narrow(dim, before + pad + 1, n - before))
  end
  return self.gradInput
end

-- nn.Convert([inputShape [, outputShape]]): data of one layout as another, the layouts
-- named by letters ('bchw': batch, channel, height, width; 'bf': batch, features; 'b*'
-- any): axes reordered (a Transpose) or features flattened (a Reshape). A layout without
-- 'b' is given one in front; an input of fewer dims than its layout is a single example.
-- The input is also converted to the module's tensor type.
local Convert, convert_parent = torch.class("nn.Convert", "nn.Container")

function Convert:__init(inputShape, outputShape)
  if outputShape and not inputShape then error("nn.Convert: expecting an inputShape when an outputShape is given", 2) end
  inputShape = inputShape or "b*"
  outputShape = outputShape or inputShape
  if type(inputShape) ~= "string" or type(outputShape) ~= "string" then
    error("nn.Convert(inputShape, outputShape): the shapes must be strings such as 'bchw'", 2)
  end
  self.inputShape = inputShape:find("b", 1, true) and inputShape or ("b" .. inputShape)
  self.outputShape = outputShape:find("b", 1, true) and outputShape or ("b" .. outputShape)
  self.inputBatchDim = self.inputShape:find("b", 1, true)
  self.outputBatchDim = self.outputShape:find("b", 1, true)
  if self.inputShape == "b*" or self.outputShape == "b*" then
    if self.inputShape ~= "b*" or self.outputShape ~= "b*" then
      error("nn.Convert: both or neither shapes must be b*", 2)
    end
    self.nInputDim, self.nOutputDim, self.transposition = -1, -1, true
  else
    self.nInputDim, self.nOutputDim = #self.inputShape, #self.outputShape
    if self.nInputDim == self.nOutputDim then
      self.transposition = true
      for i = 1, self.nInputDim do
        if not self.outputShape:find(self.inputShape:sub(i, i), 1, true) then
          self.transposition = false
          break
        end
      end
    end
  end
  convert_parent.__init(self)
end

function Convert:findAxis(axis, shape, silent)
  shape = shape or self.inputShape
  local pos = shape:find(axis, 1, true)
  if not pos and not silent then
    error(("nn.Convert: shape '%s' has no axis '%s'"):format(shape, axis), 2)
  end
  return pos
end

-- the Transpose taking the input layout to newShape (swaps, left to right)
function Convert:transpose(newShape)
  if newShape == self.inputShape then return nn.Identity() end
  local axes = {}
  for i = 1, #self.inputShape do axes[i] = self.inputShape:sub(i, i) end
  local swaps = {}
  for i = 1, #newShape do
    local c = newShape:sub(i, i)
    local j
    for k = 1, #axes do if axes[k] == c then j = k; break end end
    if not j then error(("nn.Convert: shape '%s' has no axis '%s'"):format(self.inputShape, c), 2) end
    if j ~= i then
      axes[i], axes[j] = axes[j], axes[i]
      swaps[#swaps + 1] = { j, i }
    end
  end
  return nn.Transpose(table.unpack(swaps))
end

-- to batch x features
function Convert:bf(input)
  if self.inputShape == "bt" then error("nn.Convert: conversion of shape bt to bf is not supported", 2) end
  local n = #self.inputShape
  if n == 1 then return nn.Reshape(1) end
  local b = self:findAxis("b")
  local m
  if b ~= 1 then m = nn.Transpose({ 1, b }) end
  if n > 2 then
    local reshape = nn.Reshape(input:select(b, 1):nElement())
    m = m and nn.Sequential():add(m):add(reshape) or reshape
  end
  return m or nn.Identity()
end

-- to a batch of scalars
function Convert:b(input)
  if self.inputShape == "bt" or self.inputShape == "tb" then
    return nn.Select(self:findAxis("t"), 1)
  elseif self.inputShape == "bf" or self.inputShape == "fb" then
    local f = self:findAxis("f")
    if input:size(f) > 1 then
      error("nn.Convert: cannot convert shape " .. self.inputShape .. " to b when there is more than one feature", 2)
    end
    return nn.Select(f, 1)
  end
  error("nn.Convert: cannot convert shape " .. self.inputShape .. " to b", 2)
end

-- a batch of scalars to batch x 1 targets
function Convert:bt()
  if self.inputShape ~= "b" then error("nn.Convert: cannot convert shape '" .. self.inputShape .. "' to bt", 2) end
  return nn.Reshape(1)
end

function Convert:default() return nn.Identity() end

function Convert:buildConverter(input)
  if self.transposition then
    self.converter = self:transpose(self.outputShape)
  else
    local f = Convert[self.outputShape]
    if type(f) ~= "function" then
      error(("nn.Convert: unrecognized conversion of shape %s to %s"):format(self.inputShape, self.outputShape), 3)
    end
    self.converter = f(self, input)
  end
  self.converter:type(torch.type(self.output))
  self.modules[1] = self.converter
end

function Convert:updateOutput(input)
  check_tensor(self, input)
  self._typeConverted = torch.type(input) ~= torch.type(self.output)
  if self._typeConverted then
    self._input = self._input or self.output.new()
    self._input:resize(input:size()):copy(input)
    input = self._input
  end
  self.batchMode = true
  if input:dim() < self.nInputDim then
    local sizes = input:size():totable()
    table.insert(sizes, self.inputBatchDim, 1)
    self.__input = self.__input or input.new()
    view_into(self.__input, input, torch.LongStorage(sizes))
    input = self.__input
    self.batchMode = false
  end
  if not self.converter then self:buildConverter(input) end
  local out = self:rethrowErrors(self.converter, 1, "updateOutput", input)
  if self.batchMode then
    self.output = out
  else
    local sizes = out:size():totable()
    table.remove(sizes, self.outputBatchDim)
    self.__output = self.__output or out.new()
    view_into(self.__output, out, torch.LongStorage(sizes))
    self.output = self.__output
  end
  return self.output
end

-- the input and gradOutput the converter saw
function Convert:_inner(input, gradOutput)
  local x = self._typeConverted and self._input or input
  if not self.batchMode then
    x = self.__input
    self.__gradOutput = self.__gradOutput or gradOutput.new()
    view_into(self.__gradOutput, gradOutput, self.converter.output:size())
    gradOutput = self.__gradOutput
  end
  return x, gradOutput
end

function Convert:updateGradInput(input, gradOutput)
  local x, g = self:_inner(input, gradOutput)
  local gi = self:rethrowErrors(self.converter, 1, "updateGradInput", x, g)
  if not self.batchMode then
    self.__gradInput = self.__gradInput or gi.new()
    view_into(self.__gradInput, gi, input:size())
    gi = self.__gradInput
  end
  if self._typeConverted then
    -- back to the caller's tensor type
    self._gradInput = (self._gradInput and torch.type(self._gradInput) == torch.type(input)) and self._gradInput or input.new()
    self._gradInput:resize(input:size()):copy(gi)
    gi = self._gradInput
  end
  self.gradInput = gi
  return self.gradInput
end

function Convert:accGradParameters(input, gradOutput, scale)
  local x, g = self:_inner(input, gradOutput)
  self:rethrowErrors(self.converter, 1, "accGradParameters", x, g, scale)
end

function Convert:accUpdateGradParameters(input, gradOutput, lr)
  local x, g = self:_inner(input, gradOutput)
  self:rethrowErrors(self.converter, 1, "accUpdateGradParameters", x, g, lr)
end

function Convert:clearState()
  self._input, self._gradInput, self.__input, self.__output = nil, nil, nil, nil
  self.__gradInput, self.__gradOutput = nil, nil
  return self
end

function Convert:type(typename, tensorCache)
  if not typename then return self._type end
  self:clearState()
  return convert_parent.type(self, typename, tensorCache)
end

return nn
