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

local Dataset = data_class("data.Dataset")
M.Dataset = Dataset
-- ds[i] is ds:get(i)
function Dataset.__index(self, k)
  local cls = getmetatable(self)
  local v = cls[k]
  if v == nil and type(k) == "number" then return cls.get(self, k) end
  return v
end
function Dataset:len() error(self.__name .. ": len() is not implemented", 2) end
function Dataset:get() error(self.__name .. ": get(i) is not implemented", 2) end

local IterableDataset = data_class("data.IterableDataset")
M.IterableDataset = IterableDataset
function IterableDataset:iter() error(self.__name .. ": iter() is not implemented", 2) end

-- ---- TensorDataset(t1, t2, ...): sample i is {t1[i], t2[i], ...} ----
local TensorDataset = Dataset:extend("TensorDataset")
M.TensorDataset = TensorDataset
function TensorDataset:__init(...)
  local ts = { ... }
  if #ts == 0 then error("TensorDataset: expected at least one tensor", 3) end
  for k, t in ipairs(ts) do
    if not torch.is_tensor(t) then error(("TensorDataset: argument %d must be a tensor, got %s"):format(k, type(t)), 3) end
    if t:dim() == 0 then error(("TensorDataset: argument %d is 0-d; tensors need a first dim"):format(k), 3) end
    if t:size(1) ~= ts[1]:size(1) then
      error(("TensorDataset: size mismatch between tensors (argument 1 has %d rows, argument %d has %d)")
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
function Subset:__init(ds, indices)
  if torch.is_tensor(indices) then indices = indices:totable() end
  if type(indices) ~= "table" then error("Subset: argument 'indices' must be a list or a tensor", 3) end
  self.dataset, self.indices = ds, indices
end
function Subset:len() return #self.indices end
function Subset:get(i)
  local j = self.indices[i]
  if j == nil then error(("Subset: index %s out of range [1, %d]"):format(tostring(i), #self.indices), 2) end
  return M.get(self.dataset, j)
end

-- ---- ConcatDataset({ds1, ds2, ...}) ----
local ConcatDataset = Dataset:extend("ConcatDataset")
M.ConcatDataset = ConcatDataset
function ConcatDataset:__init(list)
  if type(list) ~= "table" or #list == 0 then error("ConcatDataset: expected a non-empty list of datasets", 3) end
  self.datasets, self.cumulative = list, {}
  local s = 0
  for k, d in ipairs(list) do
    if M.is_iterable(d) then error("ConcatDataset: does not support iterable datasets", 3) end
    s = s + M.len(d)
    self.cumulative[k] = s
  end
end
function ConcatDataset:len() return self.cumulative[#self.cumulative] end
function ConcatDataset:get(i)
  local n = self:len()
  if i < 0 then i = n + 1 + i end
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
function M.random_split(ds, lengths, generator)
  local n = M.len(ds)
  local sum = 0
  for _, l in ipairs(lengths) do sum = sum + l end
  local lens = {}
  if math.abs(sum - 1) < 1e-9 and math.type(lengths[1]) == "float" then
    local used = 0
    for k, f in ipairs(lengths) do
      if f < 0 or f > 1 then error(("random_split: fraction %s is not in [0, 1]"):format(f), 2) end
      lens[k] = math.floor(n * f)
      used = used + lens[k]
    end
    for k = 0, n - used - 1 do          -- the remainder, round-robin as PyTorch does
      local j = k % #lens + 1
      lens[j] = lens[j] + 1
    end
  else
    if sum ~= n then
      error(("random_split: sum of input lengths (%s) does not equal the length of the dataset (%d)"):format(sum, n), 2)
    end
    lens = lengths
  end
  local perm = torch.randperm(n, G(generator)):totable()
  local out, off = {}, 0
  for k, l in ipairs(lens) do
    out[k] = Subset(ds, table.move(perm, off + 1, off + l, 1, {}))
    off = off + l
  end
  return out
end

return M
