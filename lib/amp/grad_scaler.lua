-- grad_scaler.lua — torch.amp.GradScaler: loss scaling for training in float16.
--
--   local scaler = torch.amp.GradScaler()        -- or GradScaler("cuda", {init_scale = 1024})
--   for x, y in loader do
--     opt:zero_grad()
--     local loss = loss_fn(model(x), y)
--     scaler:scale(loss):backward()               -- gradients of loss * scale
--     scaler:unscale_(opt)                         -- optional: before clipping the true gradients
--     scaler:step(opt)                             -- unscales, skips the step on inf/NaN
--     scaler:update()                              -- backs off or grows the scale
--   end
--
-- Small float16 gradients underflow to zero; multiplying the loss by a large
-- scale keeps them representable, and dividing the gradients by it before the
-- step gives the true ones back. A scale too large makes some gradient
-- overflow: that step is skipped and the scale backed off, while
-- growth_interval clean steps in a row grow it again. The rules, the error
-- messages and the state_dict are PyTorch's (torch.amp.GradScaler, 2.x).
--
-- The scale is a Lua number kept at float32 precision (PyTorch keeps a
-- float32 tensor so that a GPU need not synchronise; here the inf check reads
-- one flag per device and step in any case, as PyTorch's step does). The
-- gradients are unscaled on their own devices, whatever `device` says: it
-- only decides whether the scaler is enabled (a "cuda" scaler without the
-- CUDA backend disables itself with a warning, as PyTorch's does).
local torch = require "torch"
local class = require "torch_class"

local GradScaler = class("amp.GradScaler")

local SIG = class.signature("amp.GradScaler",
  "device='cpu', init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=true")

local READY, UNSCALED, STEPPED = "ready", "unscaled", "stepped"

-- x rounded to float32, as PyTorch's scale tensor holds it
local function f32(x) return (string.unpack("<f", string.pack("<f", x))) end

local function is_number(v) return math.type(v) ~= nil end

local function check_factor(fname, name, v, ok, rule)
  if not is_number(v) or v ~= v then
    error(("%s: argument '%s' must be a number, got %s"):format(fname, name, type(v)), 3)
  end
  if not ok(v) then error(("%s: argument '%s' %s, got %s"):format(fname, name, rule, v), 3) end
end

local function check_interval(fname, v)
  if math.type(v) ~= "integer" and not (math.type(v) == "float" and v == math.floor(v)) then
    error(("%s: argument 'growth_interval' must be an integer, got %s"):format(fname, tostring(v)), 3)
  end
  if v < 1 then error(("%s: argument 'growth_interval' must be positive, got %d"):format(fname, v), 3) end
  return math.tointeger(v)
end

function GradScaler:__init(...)
  local a = SIG(...)
  local fname = "amp.GradScaler"
  if type(a.device) ~= "string" then
    error(("%s: argument 'device' must be a string such as \"cpu\" or \"cuda\", got %s"):format(fname, type(a.device)), 2)
  end
  local dev = a.device:match("^(%a+)")
  if dev ~= "cpu" and dev ~= "cuda" then
    error(("%s: argument 'device' must be \"cpu\" or \"cuda\", got \"%s\""):format(fname, a.device), 2)
  end
  if type(a.enabled) ~= "boolean" then
    error(("%s: argument 'enabled' must be a boolean, got %s"):format(fname, type(a.enabled)), 2)
  end
  check_factor(fname, "init_scale", a.init_scale, function(v) return v > 0 and v < math.huge end, "must be positive and finite")
  check_factor(fname, "growth_factor", a.growth_factor, function(v) return v > 1 end, "must be > 1.0")
  check_factor(fname, "backoff_factor", a.backoff_factor, function(v) return v > 0 and v < 1 end, "must be in (0, 1)")
  self.device = a.device
  self._enabled = a.enabled
  if self._enabled and dev == "cuda" and not (torch.cuda and torch.cuda.is_available and torch.cuda.is_available()) then
    io.stderr:write("warning: amp.GradScaler is enabled for \"cuda\", but CUDA is not available: disabling\n")
    self._enabled = false
  end
  self._scale = f32(a.init_scale)
  self._growth_factor = a.growth_factor
  self._backoff_factor = a.backoff_factor
  self._growth_interval = check_interval(fname, a.growth_interval)
  self._growth_tracker = 0
  self._per_optimizer = setmetatable({}, { __mode = "k" })   -- optimizer -> {stage, found_inf}
end

function GradScaler:is_enabled() return self._enabled end

local function opt_state(self, opt)
  local st = self._per_optimizer[opt]
  if not st then
    st = { stage = READY, found_inf = nil }
    self._per_optimizer[opt] = st
  end
  return st
end

local function scale_outputs(self, v)
  if torch.is_tensor(v) then return v * self._scale end
  if type(v) == "table" then
    local out = {}
    for k, x in pairs(v) do out[k] = scale_outputs(self, x) end
    return out
  end
  error(("amp.GradScaler.scale: argument 'outputs' must be a tensor or a table of tensors, got %s"):format(type(v)), 3)
end

-- outputs (a tensor, or a table of them, nested) multiplied by the scale
function GradScaler:scale(outputs)
  if not self._enabled then return outputs end
  return scale_outputs(self, outputs)
end

local function check_optimizer(fname, opt)
  if type(opt) ~= "table" or type(opt.param_groups) ~= "table" then
    error(("%s: argument 'optimizer' must be an optimizer (with param_groups), got %s"):format(fname,
      torch.is_tensor(opt) and "a tensor" or type(opt)), 3)
  end
end

-- Divides every gradient of opt's parameters by the scale, in place, and
-- records whether any of them held an inf or a NaN. Once per update().
function GradScaler:unscale_(opt)
  if not self._enabled then return end
  check_optimizer("amp.GradScaler.unscale_", opt)
  local st = opt_state(self, opt)
  if st.stage == UNSCALED then
    error("amp.GradScaler.unscale_: unscale_() has already been called on this optimizer since the last update()", 2)
  elseif st.stage == STEPPED then
    error("amp.GradScaler.unscale_: unscale_() is being called after step()", 2)
  end
  -- the reciprocal in double, then float32, as PyTorch computes inv_scale
  local inv = f32(1 / self._scale)
  local found = {}    -- device name -> true/false
  for _, g in ipairs(opt.param_groups) do
    for _, p in ipairs(g.params) do
      local grad = p.grad
      if grad ~= nil then
        if grad.dtype == torch.float16 then
          error("amp.GradScaler.unscale_: attempting to unscale float16 gradients (the parameters must be float32; autocast casts them for compute)", 2)
        end
        local dev = tostring(grad.device)
        if not found[dev] then found[dev] = not torch.isfinite(grad):all():item() end
        grad:mul_(inv)
      end
    end
  end
  st.found_inf = found
  st.stage = UNSCALED
end

local function any_inf(found)
  for _, v in pairs(found) do if v then return true end end
  return false
end

-- opt:step() unless a gradient held an inf or NaN (then nothing: the step is
-- skipped). Unscales first if unscale_ was not called. Returns step's result,
-- or nil when skipped.
function GradScaler:step(opt, ...)
  if not self._enabled then return opt:step(...) end
  check_optimizer("amp.GradScaler.step", opt)
  if select("#", ...) > 0 then
    error("amp.GradScaler.step: closure use is not supported while the GradScaler is enabled", 2)
  end
  local st = opt_state(self, opt)
  if st.stage == STEPPED then
    error("amp.GradScaler.step: step() has already been called since the last update()", 2)
  end
  if st.stage == READY then self:unscale_(opt) end
  if next(st.found_inf) == nil then
    error("amp.GradScaler.step: no inf checks were recorded for this optimizer (none of its parameters has a gradient)", 2)
  end
  local ret
  if not any_inf(st.found_inf) then ret = opt:step() end
  st.stage = STEPPED
  return ret
end

-- The scale for the next iteration: backed off after a step with an inf or
-- NaN, grown after growth_interval clean ones; or new_scale (a number or a
-- one-element tensor) when given. Resets every optimizer's stage.
function GradScaler:update(new_scale)
  if not self._enabled then return end
  if new_scale ~= nil then
    if torch.is_tensor(new_scale) then
      if new_scale:numel() ~= 1 then
        error("amp.GradScaler.update: argument 'new_scale' must be a number or a one-element tensor, got a tensor of " .. new_scale:numel() .. " elements", 2)
      end
      new_scale = new_scale:item()
    end
    check_factor("amp.GradScaler.update", "new_scale", new_scale, function(v) return v > 0 end, "must be positive")
    self._scale = f32(new_scale)
  else
    local seen, inf = false, false
    for _, st in pairs(self._per_optimizer) do
      if st.found_inf then
        seen = true
        if any_inf(st.found_inf) then inf = true end
      end
    end
    if not seen then error("amp.GradScaler.update: no inf checks were recorded prior to update()", 2) end
    if inf then
      self._scale = f32(self._scale * self._backoff_factor)
      self._growth_tracker = 0
    else
      self._growth_tracker = self._growth_tracker + 1
      if self._growth_tracker == self._growth_interval then
        local grown = f32(self._scale * self._growth_factor)
        if grown < math.huge then self._scale = grown end   -- a scale that would overflow float32 stays
        self._growth_tracker = 0
      end
    end
  end
  self._per_optimizer = setmetatable({}, { __mode = "k" })
end

-- the current scale (a number); 1.0 when disabled, as PyTorch
function GradScaler:get_scale() return self._enabled and self._scale or 1.0 end
function GradScaler:get_growth_factor() return self._growth_factor end
function GradScaler:get_backoff_factor() return self._backoff_factor end
function GradScaler:get_growth_interval() return self._growth_interval end
function GradScaler:_get_growth_tracker() return self._enabled and self._growth_tracker or 0 end

function GradScaler:set_growth_factor(v)
  check_factor("amp.GradScaler.set_growth_factor", "new_factor", v, function(x) return x > 1 end, "must be > 1.0")
  self._growth_factor = v
end
function GradScaler:set_backoff_factor(v)
  check_factor("amp.GradScaler.set_backoff_factor", "new_factor", v, function(x) return x > 0 and x < 1 end, "must be in (0, 1)")
  self._backoff_factor = v
end
function GradScaler:set_growth_interval(v)
  self._growth_interval = check_interval("amp.GradScaler.set_growth_interval", v)
end

-- PyTorch's keys; {} when disabled
function GradScaler:state_dict()
  if not self._enabled then return {} end
  return { scale = self._scale, growth_factor = self._growth_factor, backoff_factor = self._backoff_factor,
           growth_interval = self._growth_interval, _growth_tracker = self._growth_tracker }
end

function GradScaler:load_state_dict(sd)
  local fname = "amp.GradScaler.load_state_dict"
  if not self._enabled then return end
  if type(sd) ~= "table" then error(("%s: argument 'state_dict' must be a table, got %s"):format(fname, type(sd)), 2) end
  if next(sd) == nil then
    error(fname .. ": the state dict is empty, possibly because it was saved from a disabled GradScaler", 2)
  end
  class.check_options(fname, sd, { "scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker" })
  local function num(k)
    local v = sd[k]
    if torch.is_tensor(v) then v = v:item() end
    if not is_number(v) then error(("%s: '%s' must be a number, got %s"):format(fname, k, type(v)), 3) end
    return v
  end
  self._scale = f32(num("scale"))
  self._growth_factor = num("growth_factor")
  self._backoff_factor = num("backoff_factor")
  self._growth_interval = check_interval(fname, num("growth_interval"))
  self._growth_tracker = math.tointeger(num("_growth_tracker")) or 0
end

function GradScaler:__tostring()
  return ("amp.GradScaler(scale=%g, growth_factor=%g, backoff_factor=%g, growth_interval=%d, enabled=%s)"):format(
    self._scale, self._growth_factor, self._backoff_factor, self._growth_interval, tostring(self._enabled))
end

return GradScaler
