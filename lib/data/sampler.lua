-- data/sampler.lua — which indices (1-based) a loader visits, and in which order.
-- A sampler has len() and iter(), which returns a function yielding the next
-- index (or, for BatchSampler, the next list of indices) until nil.
local torch = torch or require("torch")
local dataset = require "data.dataset"
local data_class = dataset.data_class
local class = require "torch_class"
-- options table for a generator argument: none at all when it is nil (an empty table is not taken as options)
local function G(g) if g ~= nil then return { generator = g } end end
local M = {}

local Sampler = data_class("data.Sampler")
M.Sampler = Sampler

-- yields the elements of a Lua list
local function list_iter(list)
  local i = 0
  return function()
    i = i + 1
    return list[i]
  end
end

local SequentialSampler = Sampler:extend("SequentialSampler")
M.SequentialSampler = SequentialSampler
local SEQUENTIAL = class.signature("data.SequentialSampler", "data_source")
function SequentialSampler:__init(...)
  local ds = dataset.parse(SEQUENTIAL, 1, ...).data_source
  if ds == nil then error("data.SequentialSampler: argument 'data_source' is required", 3) end
  self.n = dataset.len(ds)
end
function SequentialSampler:len() return self.n end
function SequentialSampler:iter()
  local i, n = 0, self.n
  return function()
    if i >= n then return nil end
    i = i + 1
    return i
  end
end

-- RandomSampler(data_source, replacement=false, num_samples=#ds, generator=nil)
local RandomSampler = Sampler:extend("RandomSampler")
M.RandomSampler = RandomSampler
local RANDOM = class.signature("data.RandomSampler", "data_source, replacement=false, num_samples=nil, generator=nil")
function RandomSampler:__init(...)
  local a = dataset.parse(RANDOM, 1, ...)
  if a.data_source == nil then error("data.RandomSampler: argument 'data_source' is required", 3) end
  if type(a.replacement) ~= "boolean" then
    error("data.RandomSampler: replacement should be a boolean, got " .. tostring(a.replacement), 3)
  end
  self.n = dataset.len(a.data_source)
  self.replacement = a.replacement
  self.num_samples = a.num_samples or self.n
  self.generator = a.generator
  if math.type(self.num_samples) ~= "integer" or self.num_samples < 0 then
    error("data.RandomSampler: num_samples should be a non-negative integer, got " .. tostring(self.num_samples), 3)
  end
end
function RandomSampler:len() return self.num_samples end
function RandomSampler:iter()
  local n, g, want = self.n, self.generator, self.num_samples
  local list
  if want == 0 or n == 0 then list = {}
  elseif self.replacement then
    list = torch.randint(1, n + 1, { want }, G(g)):totable()
  else
    list = {}
    while #list < want do   -- more samples than items: whole permutations, then part of one
      local p = torch.randperm(n, G(g)):totable()
      table.move(p, 1, math.min(n, want - #list), #list + 1, list)
    end
  end
  return list_iter(list)
end

-- WeightedRandomSampler(weights, num_samples, replacement=true, generator=nil)
local WeightedRandomSampler = Sampler:extend("WeightedRandomSampler")
M.WeightedRandomSampler = WeightedRandomSampler
local WEIGHTED = class.signature("data.WeightedRandomSampler", "weights, num_samples, replacement=true, generator=nil")
function WeightedRandomSampler:__init(...)
  local a = WEIGHTED(...)
  local weights = a.weights
  if weights == nil then error("data.WeightedRandomSampler: argument 'weights' is required", 3) end
  if not torch.is_tensor(weights) then
    if type(weights) ~= "table" then
      error("data.WeightedRandomSampler: weights must be a list of numbers or a tensor, got " .. type(weights), 3)
    end
    weights = torch.tensor(weights, { dtype = torch.float64 })
  end
  if weights:dim() ~= 1 then error("data.WeightedRandomSampler: weights must be 1-D", 3) end
  if math.type(a.num_samples) ~= "integer" or a.num_samples < 0 then
    error("data.WeightedRandomSampler: num_samples should be a non-negative integer, got " .. tostring(a.num_samples), 3)
  end
  if type(a.replacement) ~= "boolean" then
    error("data.WeightedRandomSampler: replacement should be a boolean, got " .. tostring(a.replacement), 3)
  end
  self.weights = weights:double()
  self.num_samples = a.num_samples
  self.replacement = a.replacement
  self.generator = a.generator
end
function WeightedRandomSampler:len() return self.num_samples end
function WeightedRandomSampler:iter()
  local idx = torch.multinomial(self.weights, self.num_samples, self.replacement, G(self.generator))
  return list_iter(idx:totable())
end

-- SubsetRandomSampler(indices, generator=nil): the given indices in random order
local SubsetRandomSampler = Sampler:extend("SubsetRandomSampler")
M.SubsetRandomSampler = SubsetRandomSampler
local SUBSET = class.signature("data.SubsetRandomSampler", "indices, generator=nil")
function SubsetRandomSampler:__init(...)
  local a = dataset.parse(SUBSET, 1, ...)
  local indices = a.indices
  if torch.is_tensor(indices) then indices = indices:totable() end
  if type(indices) ~= "table" then
    error("data.SubsetRandomSampler: argument 'indices' must be a list or a tensor, got " .. type(indices), 3)
  end
  self.indices = indices
  self.generator = a.generator
end
function SubsetRandomSampler:len() return #self.indices end
function SubsetRandomSampler:iter()
  local n = #self.indices
  if n == 0 then return list_iter({}) end
  local p = torch.randperm(n, G(self.generator)):totable()
  local out = {}
  for k, j in ipairs(p) do out[k] = self.indices[j] end
  return list_iter(out)
end

-- a sampler given as a plain Lua list of indices, or an object with iter()
function M.iter_of(s)
  if type(s) == "table" and type(s.iter) == "function" then return s:iter() end
  if type(s) == "table" then return list_iter(s) end
  if type(s) == "function" then return s end
  error("DataLoader: a sampler must have iter() or be a list of indices, got " .. type(s), 3)
end
function M.len_of(s)
  if type(s) == "table" and type(s.len) == "function" then return s:len() end
  return #s
end

-- BatchSampler(sampler, batch_size, drop_last=false): lists of indices
local BatchSampler = Sampler:extend("BatchSampler")
M.BatchSampler = BatchSampler
local BATCH = class.signature("data.BatchSampler", "sampler, batch_size, drop_last=false")
function BatchSampler:__init(...)
  local a = BATCH(...)
  if a.sampler == nil then error("data.BatchSampler: argument 'sampler' is required", 3) end
  if math.type(a.batch_size) ~= "integer" or a.batch_size < 1 then
    error("data.BatchSampler: batch_size should be a positive integer, got " .. tostring(a.batch_size), 3)
  end
  if type(a.drop_last) ~= "boolean" then
    error("data.BatchSampler: drop_last should be a boolean, got " .. tostring(a.drop_last), 3)
  end
  self.sampler, self.batch_size, self.drop_last = a.sampler, a.batch_size, a.drop_last
end
function BatchSampler:len()
  local n = M.len_of(self.sampler)
  if self.drop_last then return n // self.batch_size end
  return (n + self.batch_size - 1) // self.batch_size
end
function BatchSampler:iter()
  local nxt, bs, drop = M.iter_of(self.sampler), self.batch_size, self.drop_last
  return function()
    local b = {}
    for k = 1, bs do
      local i = nxt()
      if i == nil then break end
      b[k] = i
    end
    if #b == 0 or (drop and #b < bs) then return nil end
    return b
  end
end

return M
