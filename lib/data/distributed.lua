-- data/distributed.lua — DistributedSampler: each rank its own share of a dataset.
--
--   local sampler = data.DistributedSampler(ds, {shuffle = true, seed = 0})   -- PyTorch's order too
--   local loader = data.DataLoader(ds, {batch_size = 64, sampler = sampler, unpack = true})
--   for epoch = 1, E do sampler:set_epoch(epoch); for x, y in loader do ... end end
--
-- Every rank draws the same permutation (seeded with seed + epoch), pads it by
-- repeating its start to a multiple of num_replicas (or drops the tail with
-- drop_last), and takes every num_replicas-th index from position rank + 1: the
-- ranks' shares are disjoint and of equal length, so every rank runs the same
-- number of steps (a rank with one more batch would wait forever in DDP).
-- num_replicas and rank default to torch.distributed's world size and rank
-- (1 and 0 without a process group). Indices are 1-based, ranks 0-based.
local torch = torch or require("torch")
local dataset = require "data.dataset"
local Sampler = require("data.sampler").Sampler

local M = {}

local DistributedSampler = Sampler:extend("DistributedSampler")
M.DistributedSampler = DistributedSampler

local function dist_default()
  local ok, dist = pcall(require, "distributed")
  if ok and dist.is_initialized() then return dist.get_world_size(), dist.get_rank() end
  return 1, 0
end

local SIG = require("torch_class").signature("data.DistributedSampler",
  "dataset, num_replicas=nil, rank=nil, shuffle=true, seed=0, drop_last=false")
function DistributedSampler:__init(...)
  local a = dataset.parse(SIG, 1, ...)
  if a.dataset == nil then error("data.DistributedSampler: argument 'dataset' is required", 3) end
  local world, rank = dist_default()
  self.num_replicas = a.num_replicas or world
  self.rank = a.rank or rank
  if math.type(self.num_replicas) ~= "integer" or self.num_replicas < 1 then
    error("data.DistributedSampler: num_replicas must be a positive integer, got " .. tostring(self.num_replicas), 3)
  end
  if math.type(self.rank) ~= "integer" or self.rank < 0 or self.rank >= self.num_replicas then
    error(("data.DistributedSampler: invalid rank %s, rank should be in the interval [0, %d]"):format(
      tostring(self.rank), self.num_replicas - 1), 3)
  end
  for _, k in ipairs({ "shuffle", "drop_last" }) do
    if type(a[k]) ~= "boolean" then
      error(("data.DistributedSampler: %s should be a boolean, got %s"):format(k, tostring(a[k])), 3)
    end
  end
  if math.type(a.seed) ~= "integer" then
    error("data.DistributedSampler: seed should be an integer, got " .. tostring(a.seed), 3)
  end
  self.shuffle = a.shuffle
  self.seed = a.seed
  self.drop_last = a.drop_last
  local ds = a.dataset
  self.epoch = 0
  self.n = dataset.len(ds)
  if self.drop_last and self.n % self.num_replicas ~= 0 then
    self.num_samples = self.n // self.num_replicas
  else
    self.num_samples = (self.n + self.num_replicas - 1) // self.num_replicas
  end
  self.total_size = self.num_samples * self.num_replicas
end

--- set_epoch(e): a different shuffle each epoch, the same on every rank
function DistributedSampler:set_epoch(e)
  if math.type(e) ~= "integer" then
    error("data.DistributedSampler:set_epoch: argument 'epoch' must be an integer, got " .. tostring(e), 2)
  end
  self.epoch = e
end

function DistributedSampler:len() return self.num_samples end

--- the indices of this rank for the current epoch (a list)
function DistributedSampler:indices()
  local idx
  if self.shuffle then
    local g = torch.Generator()
    g:manual_seed(self.seed + self.epoch)
    idx = self.n > 0 and torch.randperm(self.n, { generator = g }):totable() or {}
  else
    idx = {}
    for i = 1, self.n do idx[i] = i end
  end
  if #idx > 0 then
    local k = 1
    while #idx < self.total_size do idx[#idx + 1] = idx[k]; k = k + 1 end   -- pad by repeating the start
  end
  local out = {}
  for i = self.rank + 1, self.total_size, self.num_replicas do out[#out + 1] = idx[i] end
  return out
end

function DistributedSampler:iter()
  local list, i = self:indices(), 0
  return function() i = i + 1; return list[i] end
end

return M
