-- data/sampler.lua — which indices (1-based) a loader visits, and in which order.
-- A sampler has len() and iter(), which returns a function yielding the next
-- index (or, for BatchSampler, the next list of indices) until nil.
local torch = torch or require("torch")
local dataset = require "data.dataset"
local data_class = dataset.data_class
local check_options = require("torch_class").check_options
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
function SequentialSampler:__init(ds) self.n = dataset.len(ds) end
function SequentialSampler:len() return self.n end
function SequentialSampler:iter()
  local i, n = 0, self.n
  return function()
    if i >= n then return nil end
    i = i + 1
    return i
  end
end

-- RandomSampler(ds, {replacement=false, num_samples=#ds, generator=nil})
local RandomSampler = Sampler:extend("RandomSampler")
M.RandomSampler = RandomSampler
local RANDOM_OPTS = { "replacement", "num_samples", "generator" }
function RandomSampler:__init(ds, opts)
  opts = check_options("data.RandomSampler", opts, RANDOM_OPTS)
  self.n = dataset.len(ds)
  self.replacement = opts.replacement or false
  self.num_samples = opts.num_samples or self.n
  self.generator = opts.generator
  if math.type(self.num_samples) ~= "integer" or self.num_samples < 0 then
    error("RandomSampler: num_samples should be a non-negative integer, got " .. tostring(self.num_samples), 3)
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

-- WeightedRandomSampler(weights, num_samples, {replacement=true, generator})
local WeightedRandomSampler = Sampler:extend("WeightedRandomSampler")
M.WeightedRandomSampler = WeightedRandomSampler
local WEIGHTED_OPTS = { "replacement", "generator" }
function WeightedRandomSampler:__init(weights, num_samples, opts)
  opts = check_options("data.WeightedRandomSampler", opts, WEIGHTED_OPTS)
  if not torch.is_tensor(weights) then weights = torch.tensor(weights, { dtype = torch.float64 }) end
  if weights:dim() ~= 1 then error("WeightedRandomSampler: weights must be 1-D", 3) end
  self.weights = weights:double()
  self.num_samples = num_samples
  self.replacement = opts.replacement ~= false
  self.generator = opts.generator
end
function WeightedRandomSampler:len() return self.num_samples end
function WeightedRandomSampler:iter()
  local idx = torch.multinomial(self.weights, self.num_samples, self.replacement, G(self.generator))
  return list_iter(idx:totable())
end

-- SubsetRandomSampler(indices, {generator}): the given indices in random order
local SubsetRandomSampler = Sampler:extend("SubsetRandomSampler")
M.SubsetRandomSampler = SubsetRandomSampler
local SUBSET_OPTS = { "generator" }
function SubsetRandomSampler:__init(indices, opts)
  opts = check_options("data.SubsetRandomSampler", opts, SUBSET_OPTS)
  if torch.is_tensor(indices) then indices = indices:totable() end
  self.indices = indices
  self.generator = opts.generator
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

-- BatchSampler(sampler, batch_size, drop_last): lists of indices
local BatchSampler = Sampler:extend("BatchSampler")
M.BatchSampler = BatchSampler
function BatchSampler:__init(sampler, batch_size, drop_last)
  if math.type(batch_size) ~= "integer" or batch_size < 1 then
    error("BatchSampler: batch_size should be a positive integer, got " .. tostring(batch_size), 3)
  end
  self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last or false
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
