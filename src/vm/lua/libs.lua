-- libs.lua — the Lua libraries as fields of torch, loaded on first use:
-- torch.nn, torch.optim, torch.utils.data, torch.distributed, torch.amp
-- (PyTorch's spellings) are the tables `require "nn"`, `require "optim"`,
-- `require "data"`, `require "distributed"` and `require "amp"` return.
local torch = ...

local lazy = { nn = "nn", optim = "optim", data = "data", distributed = "distributed", amp = "amp" }

local function loader(t, k)
  local name = lazy[k]
  if name == nil then return nil end
  local v = require(name)
  rawset(t, k, v)
  return v
end

torch.utils = torch.utils or setmetatable({}, { __index = function(t, k)
  if k == "data" then
    local v = require "data"
    rawset(t, k, v)
    return v
  end
end })

assert(getmetatable(torch) == nil, "torch module already has a metatable")
setmetatable(torch, { __index = loader })
