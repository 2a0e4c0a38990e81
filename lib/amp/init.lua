-- torch.amp — automatic mixed precision: today the GradScaler (loss scaling for
-- float16 training, grad_scaler.lua). torch.amp is this table (`require "amp"`).
return {
  GradScaler = require "amp.grad_scaler",
}
