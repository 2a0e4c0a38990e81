-- autocast.lua — torch.autocast's Lua half: the region's guard and function
-- forms over the thread's autocast state (src/vm/lautocast.c), and the
-- fp32 policy of the nn.functional losses written in Lua.
--
--   do
--     local ac <close> = torch.autocast("cpu", { dtype = torch.bfloat16 })
--     local loss = loss_fn(model(x), y)     -- linear/conv in bfloat16, the loss in float32
--   end                                     -- the previous state is back
--   local out = torch.autocast("cpu", function() return model(x) end)
--
-- PyTorch's semantics (man/amp.md): per device type, nestable, `enabled =
-- false` turns autocast off inside an enabled region, the cast cache of the
-- weights lives until the outermost region ends.
local torch = ...
local A = torch._autocast

local DEVICES = { cpu = true, cuda = true }
local OPTIONS = { "dtype", "enabled", "cache_enabled" }

local function device_type_of(v, fname)
  local s = v
  if type(v) == "userdata" and v.type then s = v.type end
  if type(s) ~= "string" then
    error(("%s: argument 'device_type' must be \"cpu\" or \"cuda\" (got %s)"):format(fname, type(v)), 3)
  end
  local base = s:match("^(%a+)")
  if not DEVICES[base] then
    error(("%s: argument 'device_type' must be \"cpu\" or \"cuda\" (got \"%s\")"):format(fname, s), 3)
  end
  return base
end

local function check_opts(opts, fname)
  if opts == nil then return {} end
  if type(opts) ~= "table" then
    error(("%s: argument 'opts' must be a table of options (dtype, enabled, cache_enabled), got %s"):format(fname, type(opts)), 3)
  end
  for k in pairs(opts) do
    local known = false
    for _, o in ipairs(OPTIONS) do known = known or o == k end
    if not known then
      local hint = ""
      for _, o in ipairs(OPTIONS) do
        if type(k) == "string" and (o:sub(1, 3) == k:sub(1, 3)) then hint = (" (did you mean '%s'?)"):format(o) end
      end
      error(("%s: unknown option '%s'%s"):format(fname, tostring(k), hint), 3)
    end
  end
  if opts.dtype ~= nil and opts.dtype ~= torch.bfloat16 and opts.dtype ~= torch.float16 then
    error(("%s: option 'dtype' must be torch.bfloat16 or torch.float16 (got %s)"):format(fname, tostring(opts.dtype)), 3)
  end
  for _, o in ipairs({ "enabled", "cache_enabled" }) do
    if opts[o] ~= nil and type(opts[o]) ~= "boolean" then
      error(("%s: option '%s' must be a boolean (got %s)"):format(fname, o, type(opts[o])), 3)
    end
  end
  return opts
end

local Region = { __name = "torch.autocast" }
Region.__index = Region
function Region:__close() self:exit() end
-- leaves the region: the state it replaced comes back (once; __close calls it too)
function Region:exit()
  if self._done then return end
  self._done = true
  torch.set_autocast_enabled(self.device_type, self._prev_enabled)
  torch.set_autocast_dtype(self.device_type, self._prev_dtype)
  torch.set_autocast_cache_enabled(self._prev_cache)
  A.exit()
end
function Region:__tostring()
  return ("torch.autocast(\"%s\", {dtype = %s, enabled = %s})"):format(self.device_type,
    tostring(self.fast_dtype), tostring(self.enabled))
end

local function enter(device_type, opts, fname)
  local dev = device_type_of(device_type, fname)
  opts = check_opts(opts, fname)
  local enabled = opts.enabled
  if enabled == nil then enabled = true end
  if enabled and dev == "cuda" and not torch.cuda.is_available() then
    io.stderr:write("warning: torch.autocast: device_type \"cuda\" was given, but CUDA is not available: disabling\n")
    enabled = false
  end
  local r = setmetatable({
    device_type = dev, enabled = enabled,
    fast_dtype = opts.dtype or torch.get_autocast_dtype(dev),
    _prev_enabled = torch.is_autocast_enabled(dev),
    _prev_dtype = torch.get_autocast_dtype(dev),
    _prev_cache = torch.is_autocast_cache_enabled(),
    _done = false,
  }, Region)
  A.enter()
  torch.set_autocast_dtype(dev, r.fast_dtype)
  torch.set_autocast_enabled(dev, enabled)
  if opts.cache_enabled ~= nil then torch.set_autocast_cache_enabled(opts.cache_enabled) end
  return r
end

-- torch.autocast(device_type [, opts] [, fn, ...]): with fn, fn(...) runs in
-- the region and its results are returned (the region ends also when fn
-- raises); without, the region starts and its guard (a <close> value) is
-- returned.
local function callable(f)
  if type(f) == "function" then return true end
  local mt = getmetatable(f)
  return type(mt) == "table" and mt.__call ~= nil
end

function torch.autocast(device_type, opts, fn, ...)
  -- torch.autocast{device_type = "cpu", dtype = ...}: PyTorch's keywords in one table
  if type(device_type) == "table" and not getmetatable(device_type) and device_type.device_type ~= nil then
    local o = {}
    for k, v in pairs(device_type) do if k ~= "device_type" then o[k] = v end end
    return torch.autocast(device_type.device_type, o, opts, fn, ...)
  end
  if opts ~= nil and type(opts) ~= "table" and callable(opts) then return torch.autocast(device_type, nil, opts, fn, ...) end
  if type(opts) == "table" and getmetatable(opts) and callable(opts) then return torch.autocast(device_type, nil, opts, fn, ...) end
  local r = enter(device_type, opts, "autocast")
  if fn == nil then return r end
  if not callable(fn) then
    r:exit()
    error(("autocast: argument 'fn' must be a function (got %s)"):format(type(fn)), 2)
  end
  local g <close> = r
  return fn(...)
end

-- PyTorch 1.x's per-device forms: torch.cpu.amp.autocast{dtype = ...} and
-- torch.cuda.amp.autocast{...} are torch.autocast with the device type filled in
-- (the options table first, as their keywords are)
local function device_amp(dev)
  return {
    autocast = function(opts, fn, ...)
      if opts ~= nil and type(opts) ~= "table" and callable(opts) then return torch.autocast(dev, nil, opts, fn, ...) end
      return torch.autocast(dev, opts, fn, ...)
    end,
  }
end
torch.cpu = torch.cpu or {}
torch.cpu.amp = device_amp("cpu")
rawset(torch.cuda, "amp", device_amp("cuda"))

-- PyTorch 1.x's per-device spellings
function torch.is_autocast_cpu_enabled() return torch.is_autocast_enabled("cpu") end
function torch.set_autocast_cpu_enabled(on) return torch.set_autocast_enabled("cpu", on) end
function torch.get_autocast_cpu_dtype() return torch.get_autocast_dtype("cpu") end
function torch.set_autocast_cpu_dtype(dt) return torch.set_autocast_dtype("cpu", dt) end
function torch.get_autocast_gpu_dtype() return torch.get_autocast_dtype("cuda") end
function torch.set_autocast_gpu_dtype(dt) return torch.set_autocast_dtype("cuda", dt) end

-- The fp32 policy of the nn.functional losses written in Lua
-- (src/ops/autocast.lua's `functional`): A.wrap(name, fn) is fn, or, for a
-- listed name, a function that, when autocast is on for the device of the
-- first tensor argument, runs fn on the arguments' float32 casts with that
-- device's autocast off, as PyTorch's fp32 wrapper runs the aten op.
-- fn takes one table (the arguments by name: lib/nn/functional.lua's def).
local lists
local function first_device(a)
  for _, v in pairs(a) do
    if torch.is_tensor(v) then return v.device.type end
  end
end
function A.wrap(name, fn)
  lists = lists or A.lists()
  local pol = { cpu = lists.functional.cpu[name], cuda = lists.functional.cuda[name] }
  if not pol.cpu and not pol.cuda then return fn end
  return function(a)
    local dev = first_device(a)
    if not dev or not pol[dev] or not torch.is_autocast_enabled(dev) then return fn(a) end
    local cast = {}
    for k, v in pairs(a) do
      if torch.is_tensor(v) and v.device.type == dev and
         (v.dtype == torch.float16 or v.dtype == torch.bfloat16) then
        v = v:to(torch.float32)
      end
      cast[k] = v
    end
    torch.set_autocast_enabled(dev, false)
    local ok, r = pcall(fn, cast)
    torch.set_autocast_enabled(dev, true)
    if not ok then error(r, 0) end
    return r
  end
end
