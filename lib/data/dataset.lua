-- data/dataset.lua — map-style and iterable datasets.
--
-- A map-style dataset is anything with len() (or #ds) and get(i), 1-based;
-- a plain Lua list of samples is one too. An iterable dataset has iter(),
-- returning a function that yields samples until nil. Subclass with
--   local MyDS = data.Dataset:extend("MyDS")
--   function MyDS:__init(...) ... end
--   function MyDS:len() ... end
--   function MyDS:get(i) ... end
-- options table for a generator argument: none at all when it is nil (an empty table is not taken as options)
local torch = torch or require("torch")
local class = require "torch_class"
local function G(g) if g ~= nil then return { generator = g } end end
local M = {}

-- ---- the data library's classes ----
-- Every class here is a class of the libraries' helper (torch_class.lua), named
-- data.<Name>; the base classes made by data_class also give their instances `#obj`
-- (obj:len()) and tostring(obj) "Name(len)" ("Name" when there is no length). Subclasses
-- (Base:extend("Name")) inherit both.
local function data_class(name)
  local c = class(name)
  c.__len = function(self) return self:len() end
  c.__tostring = function(self)
    local ok, n = pcall(function() return self:len() end)
    return ok and ("%s(%d)"):format(self.__name, n) or self.__name
  end
  return c
end
M.data_class = data_class

-- length and item of any dataset-like value
function M.len(ds)
  if type(ds) == "table" and type(ds.len) == "function" then return ds:len() end
  return #ds
end
function M.get(ds, i)
  if type(ds) == "table" and type(ds.get) == "function" then return ds:get(i) end
  return ds[i]
end
function M.is_iterable(ds)
  return type(ds) == "table" and type(ds.iter) == "function" and type(ds.get) ~= "function"
end

-- ---- arguments ----
-- parse(sig, nfixed, ...): sig(...), except that when exactly the first nfixed arguments are
-- given and the last of them is a plain table that is empty (an empty list of indices) or an
-- object made of functions (a dataset or sampler written as a plain table, {len = ..., get =
-- ...}), it is that argument, not the options table the signature would take it for. A call
-- with nothing but a misspelt options table still reaches the signature and fails there.
local function duck(t)
  if type(t) ~= "table" or getmetatable(t) ~= nil then return false end
  if next(t) == nil then return true end
  for _, k in ipairs({ "len", "get", "iter" }) do
    if type(rawget(t, k)) == "function" then return true end
  end
  return false
end
function M.parse(sig, nfixed, ...)
  local n = select("#", ...)
  if nfixed > 0 and n == nfixed and duck((select(n, ...))) then
    local args = table.pack(...)
    args[n + 1], args.n = {}, n + 1
    return sig(table.unpack(args, 1, args.n))
  end
  return sig(...)
end

-- ---- batches by range or index tensor: ds[{{first, last}}], ds[idx] ----
-- rows(key, n, fname) reads the key of a batch over n samples:
--   "range", first, count   for {{first, last}} (Torch7's range: 1-based, inclusive; a
--                           negative index counts from the end, -1 the last), clamped to
--                           the samples there are, as a Python slice is: the last partial
--                           batch comes out short, a range past the end empty
--   "index", tensor         for a 1-D integer tensor of indices (negative from the end) or
--                           a 1-D bool mask of n entries
--   "one", i                for a 0-d integer tensor
local function describe(v)
  if torch.is_tensor(v) then return ("a %s tensor of shape %s"):format(v.dtype.name, tostring(v.shape)) end
  if type(v) == "table" then return "a table" end
  return ("%s %s"):format(type(v), tostring(v))
end

local RANGE_HELP = "ds[i] (an integer), ds[{{first, last}}] (a range, 1-based, inclusive) " ..
  "or ds[idx] (a 1-D integer or bool tensor)"

local function range_end(v, n, fname, which)
  if math.type(v) ~= "integer" then
    error(("%s: the range's %s index must be an integer, got %s"):format(fname, which, describe(v)), 0)
  end
  if v == 0 then error(("%s: index 0 in a range (indices are 1-based; -1 is the last)"):format(fname), 0) end
  if v < 0 then return n + 1 + v end
  return v
end

function M.rows(key, n, fname)
  if torch.is_tensor(key) then
    local dt = key.dtype
    if dt == torch.bool then
      if key:dim() ~= 1 or key:size(1) ~= n then
        error(("%s: a bool mask must be 1-D with one entry per sample (%d), got shape %s"):format(
          fname, n, tostring(key.shape)), 0)
      end
      return "index", key:nonzero():reshape(-1)
    end
    if dt.is_floating_point or dt.is_complex then
      error(("%s: index tensors must be integer or bool, got %s"):format(fname, dt.name), 0)
    end
    if dt == torch.uint8 then   -- PyTorch reads a uint8 index as a mask, an old convention
      error(("%s: a uint8 index tensor is ambiguous (PyTorch takes it as a mask): give :bool() for a " ..
        "mask or :long() for indices"):format(fname), 0)
    end
    if key:dim() == 0 then
      local i = key:item()
      return "one", i < 0 and n + 1 + i or i
    end
    if key:dim() ~= 1 then
      error(("%s: an index tensor must be 1-D, got shape %s"):format(fname, tostring(key.shape)), 0)
    end
    local idx = key:to(torch.int64)
    if idx:numel() > 0 then
      local lo, hi = idx:min():item(), idx:max():item()
      for _, v in ipairs({ lo, hi }) do
        if v == 0 or v > n or v < -n then
          error(("%s: index %d out of range [1, %d] (negative indices count from the end)"):format(fname, v, n), 0)
        end
      end
    end
    return "index", idx
  end
  if type(key) == "table" and getmetatable(key) == nil then
    local r = key[1]
    if #key ~= 1 or next(key, 1) ~= nil or type(r) ~= "table" or getmetatable(r) ~= nil then
      local hint = ""
      if math.type(r) == "integer" then
        hint = " (a list of sample indices is a tensor: ds[torch.tensor{...}])"
      end
      error(("%s: a table index must be a range {{first, last}}%s; the forms are %s"):format(fname, hint, RANGE_HELP), 0)
    end
    local nr = 0
    for _ in pairs(r) do nr = nr + 1 end
    if nr ~= #r or #r > 2 then
      error(("%s: a range is {first, last}, got a table of %d entries"):format(fname, nr), 0)
    end
    local first = #r >= 1 and range_end(r[1], n, fname, "first") or 1
    local last = #r == 2 and range_end(r[2], n, fname, "last") or (#r == 1 and first or n)
    if first < 1 then first = 1 end
    if first > n + 1 then first = n + 1 end
    if last > n then last = n end
    return "range", first, math.max(0, last - first + 1)
  end
  error(("%s: cannot index a dataset with %s; the forms are %s"):format(fname, describe(key), RANGE_HELP), 0)
end

local Dataset = data_class("data.Dataset")
M.Dataset = Dataset
-- ds[i] is ds:get(i); ds[{{first, last}}] and ds[idx] are ds:get_batch(key) where the class
-- has one (TensorDataset, Subset), an error elsewhere; names are fields and methods
function Dataset.__index(self, k)
  local cls = getmetatable(self)
  local v = cls[k]
  if v ~= nil then return v end
  local tk = type(k)
  if tk == "number" then return cls.get(self, k) end
  if tk == "string" then return nil end
  local gb = cls.get_batch
  if gb then return gb(self, k) end
  if tk == "table" or torch.is_tensor(k) then
    error(("%s: ds[...] with a range or an index tensor needs a dataset that gives batches (TensorDataset, " ..
      "or a Subset of one); index one sample with an integer, or batch with data.DataLoader"):format(
      cls.__typename), 2)
  end
  error(("%s: cannot index a dataset with %s; the forms are %s"):format(cls.__typename, describe(k), RANGE_HELP), 2)
end
function Dataset:len() error(self.__name .. ": len() is not implemented", 2) end
function Dataset:get() error(self.__name .. ": get(i) is not implemented", 2) end

-- the batch of ds for a range or an index tensor (a dataset with get_batch), else an error
function M.get_batch(ds, key, fname)
  if type(ds) == "table" and type(ds.get_batch) == "function" then return ds:get_batch(key) end
  error(("%s: the dataset it wraps (%s) gives no batches by range or index tensor"):format(
    fname, require("torch_class").type(ds)), 0)
end

local IterableDataset = data_class("data.IterableDataset")
M.IterableDataset = IterableDataset
function IterableDataset:iter() error(self.__name .. ": iter() is not implemented", 2) end

-- ---- TensorDataset(t1, t2, ...): sample i is {t1[i], t2[i], ...} ----
local TensorDataset = Dataset:extend("TensorDataset")
M.TensorDataset = TensorDataset
-- class.signature takes no *args: the signature holds no names, so a trailing options table
-- (there are no options) is refused by it with the function's name; help shows "*tensors"
local TENSORDATASET = class.signature("data.TensorDataset", "")
TENSORDATASET.text = "*tensors"
function TensorDataset:__init(...)
  local n = select("#", ...)
  if n > 0 and class.is_options((select(n, ...))) then TENSORDATASET(select(n, ...)) end
  local ts = { ... }
  if n == 0 then error("data.TensorDataset: expected at least one tensor", 3) end
  for k = 1, n do
    local t = ts[k]
    if not torch.is_tensor(t) then error(("data.TensorDataset: argument %d must be a tensor, got %s"):format(k, type(t)), 3) end
    if t:dim() == 0 then error(("data.TensorDataset: argument %d is 0-d; tensors need a first dim"):format(k), 3) end
    if t:size(1) ~= ts[1]:size(1) then
      error(("data.TensorDataset: size mismatch between tensors (argument 1 has %d rows, argument %d has %d)")
        :format(ts[1]:size(1), k, t:size(1)), 3)
    end
  end
  self.tensors = ts
  self.n = ts[1]:size(1)
end
function TensorDataset:len() return self.n end
function TensorDataset:get(i)
  if math.type(i) ~= "integer" or i < 1 or i > self.n then
    error(("TensorDataset: index %s out of range [1, %d]"):format(tostring(i), self.n), 2)
  end
  local out = {}
  for k, t in ipairs(self.tensors) do out[k] = t:select(1, i) end
  return out
end
-- ds[{{first, last}}] -> {t1 rows first..last, t2 rows ..., ...} (views, clamped at the end);
-- ds[idx] -> the rows idx of each tensor (copies), as PyTorch's tensor[index] per tensor
function TensorDataset:get_batch(key)
  local kind, a, b = M.rows(key, self.n, "data.TensorDataset")
  if kind == "one" then return self:get(a) end
  local out = {}
  for k, t in ipairs(self.tensors) do
    if kind == "range" then out[k] = t:narrow(1, a, b) else out[k] = t:index_select(1, a) end
  end
  return out
end
-- the default collate of samples idx, in one index_select per tensor
function TensorDataset:collate_batch(idx)
  local it = torch.tensor(idx, { dtype = torch.int64 })
  local out = {}
  local rows = require("data.collate").index_rows
  for k, t in ipairs(self.tensors) do out[k] = rows(t, it) end
  return out
end

-- ---- Subset(ds, indices): indices a Lua list or an int64 tensor, 1-based ----
local Subset = Dataset:extend("Subset")
M.Subset = Subset
local SUBSET = class.signature("data.Subset", "dataset, indices")
function Subset:__init(...)
  local a = M.parse(SUBSET, 2, ...)
  local ds, indices = a.dataset, a.indices
  if ds == nil then error("data.Subset: argument 'dataset' is required", 3) end
  if torch.is_tensor(indices) then indices = indices:totable() end
  if type(indices) ~= "table" then error("data.Subset: argument 'indices' must be a list or a tensor", 3) end
  self.dataset, self.indices = ds, indices
end
function Subset:len() return #self.indices end
function Subset:get(i)
  local j = self.indices[i]
  if j == nil then error(("Subset: index %s out of range [1, %d]"):format(tostring(i), #self.indices), 2) end
  return M.get(self.dataset, j)
end
-- a range or index tensor over the subset: the batch of the wrapped dataset at those of its
-- indices (PyTorch's dataset[[indices[i] for i in idx]]); it must give batches itself
function Subset:get_batch(key)
  local kind, a, b = M.rows(key, #self.indices, "data.Subset")
  if kind == "one" then return self:get(a) end
  local sel = {}
  if kind == "range" then
    for k = 1, b do sel[k] = self.indices[a + k - 1] end
  else
    local n = #self.indices
    for k, i in ipairs(a:totable()) do sel[k] = self.indices[i < 0 and n + 1 + i or i] end
  end
  return M.get_batch(self.dataset, torch.tensor(sel, { dtype = torch.int64 }), "data.Subset")
end

-- ---- ConcatDataset({ds1, ds2, ...}) ----
local ConcatDataset = Dataset:extend("ConcatDataset")
M.ConcatDataset = ConcatDataset
local CONCAT = class.signature("data.ConcatDataset", "datasets")
function ConcatDataset:__init(...)
  local list = CONCAT(...).datasets
  if type(list) ~= "table" or #list == 0 then error("data.ConcatDataset: expected a non-empty list of datasets", 3) end
  self.datasets, self.cumulative = list, {}
  local s = 0
  for k, d in ipairs(list) do
    if M.is_iterable(d) then error("data.ConcatDataset: does not support iterable datasets", 3) end
    s = s + M.len(d)
    self.cumulative[k] = s
  end
end
function ConcatDataset:len() return self.cumulative[#self.cumulative] end
function ConcatDataset:get(i)
  local n = self:len()
  if math.type(i) == "integer" and i < 0 then i = n + 1 + i end
  if math.type(i) ~= "integer" or i < 1 or i > n then
    error(("ConcatDataset: index %s out of range [1, %d]"):format(tostring(i), n), 2)
  end
  local lo, hi = 1, #self.cumulative   -- first k with cumulative[k] >= i
  while lo < hi do
    local mid = (lo + hi) // 2
    if self.cumulative[mid] >= i then hi = mid else lo = mid + 1 end
  end
  return M.get(self.datasets[lo], i - (self.cumulative[lo - 1] or 0))
end

-- ---- random_split(ds, lengths | fractions, generator) -> list of Subsets ----
local RANDOM_SPLIT = class.signature("data.random_split", "dataset, lengths, generator=nil")
function M.random_split(...)
  local a = RANDOM_SPLIT(...)
  local ds, lengths, generator = a.dataset, a.lengths, a.generator
  if ds == nil then error("data.random_split: argument 'dataset' is required", 2) end
  if type(lengths) ~= "table" or #lengths == 0 then
    error("data.random_split: argument 'lengths' must be a non-empty list of lengths or fractions", 2)
  end
  for k, l in ipairs(lengths) do
    if type(l) ~= "number" or l < 0 then
      error(("data.random_split: lengths[%d] must be a non-negative number, got %s"):format(k, tostring(l)), 2)
    end
  end
  local n = M.len(ds)
  local sum = 0
  for _, l in ipairs(lengths) do sum = sum + l end
  local lens = {}
  if math.abs(sum - 1) < 1e-9 and math.type(lengths[1]) == "float" then
    local used = 0
    for k, f in ipairs(lengths) do
      if f < 0 or f > 1 then error(("data.random_split: fraction %s is not in [0, 1]"):format(f), 2) end
      lens[k] = math.floor(n * f)
      used = used + lens[k]
    end
    for k = 0, n - used - 1 do          -- the remainder, round-robin as PyTorch does
      local j = k % #lens + 1
      lens[j] = lens[j] + 1
    end
  else
    if sum ~= n then
      error(("data.random_split: sum of input lengths (%s) does not equal the length of the dataset (%d)"):format(sum, n), 2)
    end
    lens = lengths
  end
  local perm = torch.randperm(n, G(generator)):totable()
  local out, off = {}, 0
  for k, l in ipairs(lens) do
    out[k] = Subset(ds, table.move(perm, off + 1, off + l, 1, {}), {})
    off = off + l
  end
  return out
end

return M
