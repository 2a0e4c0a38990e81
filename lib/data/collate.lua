-- data/collate.lua — turning a list of samples into a batch, like PyTorch's
-- default_collate: tensors are stacked (in a worker, straight into shared
-- memory), numbers become an int64 tensor (all integers) or a tensor of the
-- default float dtype, booleans a bool tensor, strings stay a list, and
-- tables recurse: keyed tables by key, lists position by position.
local torch = torch or require("torch")
local D = torch._data
local M = {}

-- set in a DataLoader worker: tensors are then built in shared memory
M.in_worker = false

local function is_list(t)
  local n = #t
  if n == 0 then return next(t) == nil end
  local count = 0
  for _ in pairs(t) do count = count + 1 end
  return count == n
end

local function stack(batch)
  if M.in_worker then
    local t = D.stack_shm(batch)
    if t then return t end
    return D.to_shm(torch.stack(batch))
  end
  return torch.stack(batch)
end

local function collate(batch, path)
  local e = batch[1]
  local te = type(e)
  if torch.is_tensor(e) then
    for i = 2, #batch do
      if not torch.is_tensor(batch[i]) then
        error(("default_collate: sample %d%s is a %s, sample 1 is a tensor"):format(i, path, type(batch[i])), 0)
      end
    end
    local ok, r = pcall(stack, batch)
    if not ok then error(("default_collate: cannot stack the tensors%s: %s"):format(path, r), 0) end
    return r
  elseif te == "number" then
    local ints = true
    for i = 1, #batch do
      local v = batch[i]
      if type(v) ~= "number" then
        error(("default_collate: sample %d%s is a %s, sample 1 is a number"):format(i, path, type(v)), 0)
      end
      if math.type(v) ~= "integer" then ints = false end
    end
    if ints then return torch.tensor(batch, { dtype = torch.int64 }) end
    return torch.tensor(batch)
  elseif te == "boolean" then
    return torch.tensor(batch, { dtype = torch.bool })
  elseif te == "table" then
    local out = {}
    if is_list(e) then
      local n = #e
      for i = 2, #batch do
        if type(batch[i]) ~= "table" or #batch[i] ~= n then
          error(("default_collate: each element in list of batch should be of equal size (sample %d%s differs)")
            :format(i, path), 0)
        end
      end
      for j = 1, n do
        local col = {}
        for i = 1, #batch do col[i] = batch[i][j] end
        out[j] = collate(col, path .. "[" .. j .. "]")
      end
    else
      for k in pairs(e) do
        local col = {}
        for i = 1, #batch do
          local b = batch[i]
          if type(b) ~= "table" or b[k] == nil then
            error(("default_collate: sample %d%s has no key '%s'"):format(i, path, tostring(k)), 0)
          end
          col[i] = b[k]
        end
        out[k] = collate(col, path .. "." .. tostring(k))
      end
    end
    return out
  end
  return batch   -- strings and anything else: the list as it is
end

-- rows idx (an int64 tensor) of t, as a new tensor; in a worker, gathered
-- straight into shared memory (the batch fast path of TensorDataset, MNIST)
function M.index_rows(t, idx)
  if not M.in_worker then return t:index_select(1, idx) end
  local shape = t:size()
  shape[1] = idx:size(1)
  local out = D.shm_empty(t.dtype, shape)
  torch.index_select(t, 1, idx, { out = out })
  return out
end

function M.default_collate(batch)
  if type(batch) ~= "table" or #batch == 0 then error("default_collate: expected a non-empty list of samples", 2) end
  return collate(batch, "")
end

-- batching turned off (batch_size=false): numbers become 0-d tensors, the rest stays
function M.default_convert(sample)
  if type(sample) == "number" then
    return math.type(sample) == "integer" and torch.tensor(sample, { dtype = torch.int64 }) or torch.tensor(sample)
  elseif type(sample) == "table" and not torch.is_tensor(sample) then
    local out = {}
    for k, v in pairs(sample) do out[k] = M.default_convert(v) end
    return out
  end
  return sample
end

return M
