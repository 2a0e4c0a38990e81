-- meta.lua — the meta device's Lua half: the default device's guard and
-- function forms over torch.set_default_device (src/vm/lmeta.c), PyTorch's
-- `with torch.device("meta"):`.
--
--   do
--     local _ <close> = torch.default_device("meta")
--     model = nn.Linear(4096, 4096)         -- parameters on meta: nothing allocated
--   end                                     -- the previous default is back
--   model = torch.with_default_device("meta", function() return nn.Linear(4, 4) end)
local torch = ...

local Guard = { __name = "torch.default_device" }
Guard.__index = Guard
function Guard:__close() self:exit() end
-- restores the default device the guard replaced (once; __close calls it too)
function Guard:exit()
  if not self._done then
    self._done = true
    torch.set_default_device(self._prev)
  end
end

-- torch.default_device(device): sets the default device of factory functions
-- and returns a guard (a <close> value) that puts the previous one back
function torch.default_device(device)
  local prev = torch.get_default_device()
  torch.set_default_device(device)
  return setmetatable({ _prev = prev, _done = false }, Guard)
end

-- torch.with_default_device(device, fn, ...): fn(...) with device the default,
-- restored afterwards, also when fn raises; fn's results
function torch.with_default_device(device, fn, ...)
  if type(fn) ~= "function" then error("with_default_device: argument 'fn' must be a function", 2) end
  local g <close> = torch.default_device(device)
  return fn(...)
end
