-- libs.lua — the Lua libraries as fields of torch, loaded on first use:
-- torch.nn, torch.optim, torch.utils.data, torch.distributed, torch.amp, torch.ao, torch.futures,
-- torch.image (`require "image"`, lutorch's Torch7-style image package)
-- (PyTorch's spellings) are the tables `require "nn"`, `require "optim"`,
-- `require "data"`, `require "distributed"`, `require "amp"` and `require "ao"`
-- return; torch.quantize_per_tensor and the other quantized-tensor names are
-- fields of torch.ao (man/quantization.md).
local torch = ...

local lazy = { nn = "nn", optim = "optim", data = "data", distributed = "distributed", amp = "amp", ao = "ao",
               futures = "distributed.futures", compiler = "compile", image = "image" }

-- names of torch that lib/ao defines
local from_ao = { quantize_per_tensor = true, quantize_per_channel = true, dequantize = true, qint8 = true,
                  quint8 = true, per_tensor_affine = true, per_channel_affine = true,
                  per_tensor_symmetric = true, per_channel_symmetric = true }

local function loader(t, k)
  if k == "compile" then
    local v = require("compile").compile
    rawset(t, k, v)
    return v
  end
  if from_ao[k] then
    local v = require("ao")[k]
    rawset(t, k, v)
    return v
  end
  local name = lazy[k]
  if name == nil then return nil end
  local v = require(name)
  rawset(t, k, v)
  return v
end

torch.utils = torch.utils or setmetatable({ swap_tensors = torch._swap_tensors }, { __index = function(t, k)
  if k == "data" then
    local v = require "data"
    rawset(t, k, v)
    return v
  end
end })

assert(getmetatable(torch) == nil, "torch module already has a metatable")
setmetatable(torch, { __index = loader })
