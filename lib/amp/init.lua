-- torch.amp — automatic mixed precision: autocast (torch.autocast, the
-- Autocast dispatch key: src/amp, src/vm/lua/autocast.lua) and the
-- GradScaler (loss scaling for float16 training, grad_scaler.lua).
-- torch.amp is this table (`require "amp"`).
local torch = require "torch"
return {
  autocast = torch.autocast,
  is_autocast_available = function(device_type)
    return device_type == "cpu" or (device_type == "cuda" and torch.cuda.is_available())
  end,
  GradScaler = require "amp.grad_scaler",
}
