-- nn — neural network modules in the image of torch.nn, with Torch7's spellings on top.
--
--   local nn = require "nn"
--   local F = nn.functional            -- also nn.F
--   local model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
--   local loss = F.cross_entropy(model(x), y)
--
-- Decisions (Lua is 1-based): Sequential and ModuleList name their children "1", "2", ...
-- (state_dict keys "1.weight"), dims are 1-based (nn.Softmax(2), nn.Flatten() starts at dim
-- 2), class targets / embedding indices / padding_idx are 1-based. Modules are classes made
-- with nn.Module:extend("Name"); see nn/module.lua.
local torch = require "torch"
-- Torch7 mode has Torch7's nn: plain-tensor modules with Torch7's protocol (lib/t7nn)
if torch.compat() == "torch7" then return require "t7nn" end
local base = require "nn.module"

local nn = {}

nn.Module = base.Module
nn.Parameter = base.Parameter
nn.is_parameter = base.is_parameter
nn.is_module = base.is_module
nn.isinstance = base.isinstance
nn.classes = base.classes   -- every Module class by name (for loaders)

nn.functional = require "nn.functional"
nn.F = nn.functional
nn.init = require "nn.initializers"
nn.utils = require "nn.utils"

local function merge(t)
  for k, v in pairs(t) do
    if k:sub(1, 1) ~= "_" then nn[k] = v end
  end
end
merge(require "nn.containers")
merge(require "nn.layers")
merge(require "nn.activation")
merge(require "nn.conv")
merge(require "nn.norm")
merge(require "nn.loss")
merge(require "nn.ddp")   -- DistributedDataParallel (needs torch.distributed only when used)
nn.fsdp = require "nn.fsdp"  -- fully_shard and its helpers (torch.distributed when used)
nn.fully_shard = nn.fsdp.fully_shard

require("nn.torch7").install(nn)

-- optional parts written separately (RNN/LSTM/GRU, attention and transformers): they may be
-- absent; what they return is merged in. They may `require "nn"` themselves: nn is
-- registered in package.loaded before they load.
package.loaded["nn"] = nn
for _, name in ipairs({ "nn.rnn", "nn.transformer" }) do
  local ok, mod = pcall(require, name)
  if ok and type(mod) == "table" then
    for k, v in pairs(mod) do
      if type(k) == "string" and nn[k] == nil then nn[k] = v end
    end
  elseif not ok and not tostring(mod):find("module '" .. name .. "' not found", 1, true) then
    -- present but broken: say so instead of hiding the error
    error(mod, 0)
  end
end

-- Torch7 scripts use the global `nn`
if rawget(_G, "nn") == nil then rawset(_G, "nn", nn) end

return nn
