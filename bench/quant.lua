-- quant.lua — torch.ao's quantized Linear 4096x4096 against float32 at batch 1, 8 and 64,
-- on the lutorch side (twin: quant.py for PyTorch 1.13; run both with `sh bench/quant.sh`).
-- Keys KIND_bB call one layer repeatedly: its weights stay in the last-level cache when they
-- fit (int8: 16 MB, int4: 8 MB; float32's 64 MB do not on a 48 MB L3). Keys KIND_b1_cold
-- cycle through copies of the layer, at least 96 MB of weights in all, so every call streams
-- its weights from memory, as the layers of a model larger than the cache do.
-- Prints "key microseconds", then "size_<what> bytes": the state dicts' tensor bytes and the
-- saved files (lutorch format, safetensors).
package.path = (arg[0]:match("^(.*/)") or "./") .. "?.lua;" .. package.path   -- timing.lua
local T = require("timing").new{ warmup = 4, reps = tonumber(arg[1]) or 5 }
local nn = require "nn"
local ao = torch.ao

torch.manual_seed(0)
local N = 4096
local KINDS = { "f32", "w8", "dyn8", "w4" }
local CONFIG = { w8 = ao.int8_weight_only(), dyn8 = ao.int8_dynamic_activation_int8_weight(),
                 w4 = ao.int4_weight_only({ group_size = 128 }) }
local COPIES = { f32 = 2, w8 = 6, dyn8 = 6, w4 = 12 }
local function layer(kind)
  local m = nn.Linear(N, N)
  if CONFIG[kind] then ao.quantize_(m, CONFIG[kind]) end
  return m
end
local models, cold = {}, {}
for _, k in ipairs(KINDS) do
  cold[k] = {}
  for i = 1, COPIES[k] do cold[k][i] = layer(k) end
  models[k] = cold[k][1]
  collectgarbage()
end

torch.no_grad(function()
  for _, b in ipairs({ 1, 8, 64 }) do
    local x = torch.randn(b, N)
    local n = b == 1 and 24 or b == 8 and 10 or 4
    for _, k in ipairs(KINDS) do
      local m = models[k]
      T:bench(("%s_b%d"):format(k, b), n, function(r) for _ = 1, r do m(x) end end)
    end
    if b == 1 then
      for _, k in ipairs(KINDS) do
        local ms = cold[k]
        T:bench(k .. "_b1_cold", n, function(r) for i = 1, r do ms[(i - 1) % #ms + 1](x) end end)
      end
    end
  end
end)
T:report()

-- sizes: the tensors of each state dict, and each model saved both ways
local dir = os.tmpname()
for _, k in ipairs({ "f32", "w8", "w4" }) do
  local sd, bytes, flat = models[k]:state_dict(), 0, {}
  for name, t in pairs(sd) do
    bytes = bytes + t:numel() * t:element_size()
    flat[name] = t
  end
  print(("size_%s_state_dict %d"):format(k, bytes))
  torch.save(dir, models[k])
  local f = io.open(dir, "rb"); print(("size_%s_lutorch_file %d"):format(k, f:seek("end"))); f:close()
  torch.save_safetensors(dir, flat)
  f = io.open(dir, "rb"); print(("size_%s_safetensors_file %d"):format(k, f:seek("end"))); f:close()
end
os.remove(dir)
