-- torch.ao — quantization for inference in the spirit of torchao (man/quantization.md).
-- torch.ao is this table (`require "ao"`):
--   torch.ao.quantize_(model, config [, {filter_fn = fn(module, fqn)}])
--   configs: int8_weight_only(), int8_dynamic_activation_int8_weight(), int4_weight_only{group_size=128}
--   the quantized modules (ao/modules.lua) and tensors (ao/qtensor.lua; torch.quantize_per_tensor, ...)
-- CPU only; no quantization-aware training, no static (calibrated) activation quantization.
local torch = require "torch"
local class = require "torch_class"
local nn = require "nn"
local Q = require "ao.qtensor"
local modules = require "ao.modules"

local ao = {}
for k, v in pairs(Q) do if not k:find("^_") then ao[k] = v end end
for k, v in pairs(modules) do if type(v) == "table" then ao[k] = v end end

------------------------------------------------------------------------------
-- configs: what quantize_ does to a Linear (and an Embedding)
------------------------------------------------------------------------------
local Config = {}
Config.__index = Config
Config.__name = "ao.Config"
function Config:__tostring()
  if self.group_size then
    return ("%s(group_size=%d%s)"):format(self.name, self.group_size, self.padding and ", padding=True" or "")
  end
  return self.name .. "()"
end

local function no_options(fn, o)
  if o ~= nil then class.check_options(fn, o, {}) end
end

function ao.int8_weight_only(o)
  no_options("torch.ao.int8_weight_only", o)
  return setmetatable({ name = "int8_weight_only",
    linear = modules.Int8WeightOnlyLinear.from_float,
    embedding = modules.Int8WeightOnlyEmbedding.from_float }, Config)
end

function ao.int8_dynamic_activation_int8_weight(o)
  no_options("torch.ao.int8_dynamic_activation_int8_weight", o)
  -- activations are quantized per row as they come: embeddings (no activation) stay float
  return setmetatable({ name = "int8_dynamic_activation_int8_weight",
    linear = modules.Int8DynamicLinear.from_float }, Config)
end

function ao.int4_weight_only(o)
  local fn = "torch.ao.int4_weight_only"
  if o ~= nil then class.check_options(fn, o, { "group_size", "padding" }) end
  local gs = o and o.group_size or 128
  if gs ~= 32 and gs ~= 64 and gs ~= 128 then
    error(("%s: option 'group_size' must be 32, 64 or 128, got %s"):format(fn, tostring(gs)), 2)
  end
  local padding = o and o.padding or false
  if type(padding) ~= "boolean" then
    error(("%s: option 'padding' must be a boolean, got %s"):format(fn, type(padding)), 2)
  end
  gs = math.tointeger(gs)
  return setmetatable({ name = "int4_weight_only", group_size = gs, padding = padding,
    linear = function(m) return modules.Int4WeightOnlyLinear.from_float(m, gs, padding) end,
    embedding = function(m) return modules.Int4WeightOnlyEmbedding.from_float(m, gs) end }, Config)
end

------------------------------------------------------------------------------
-- quantize_: each matching module becomes its quantized version, in place
------------------------------------------------------------------------------
-- m takes q's state and class: whoever holds m (its parent, the caller) now holds the
-- quantized module, the root included
local function become(m, q)
  for k in next, m do rawset(m, k, nil) end
  for k, v in next, q do rawset(m, k, v) end
  setmetatable(m, getmetatable(q))
end

local function convert_fn(config, m)
  if class.isinstance(m, nn.Linear) then return config.linear end
  if class.isinstance(m, nn.Embedding) then return config.embedding end
end

function ao.quantize_(model, config, o)
  local fn = "torch.ao.quantize_"
  if not nn.is_module(model) then
    error(("%s: argument 'model' must be an nn.Module, got %s"):format(fn, type(model)), 2)
  end
  if getmetatable(config) ~= Config then
    error(("%s: argument 'config' must be a config such as torch.ao.int8_weight_only(), got %s"):format(fn,
      type(config)), 2)
  end
  if o ~= nil then class.check_options(fn, o, { "filter_fn" }) end
  local filter = o and o.filter_fn
  if filter ~= nil and type(filter) ~= "function" then
    error(("%s: option 'filter_fn' must be a function (module, fqn) -> boolean, got %s"):format(fn, type(filter)), 2)
  end
  -- collect first, convert after: the walk must not see modules it already changed
  local pending = {}
  for _, e in ipairs(model:named_modules()) do
    local fqn, m = e[1], e[2]
    local conv = convert_fn(config, m)
    if conv and (filter == nil or filter(m, fqn)) then pending[#pending + 1] = { m, conv } end
  end
  torch.no_grad(function()
    for _, t in ipairs(pending) do
      local m, conv = t[1], t[2]
      local training = m.training
      local q = conv(m)
      q:train(training)
      become(m, q)
    end
  end)
  return model
end

-- the CPU path the quantized modules ask their kernels for: "auto" (nil), "portable",
-- "avx2", "avx512", "avx512_vnni" (an error at the next forward where the CPU lacks it)
function ao.set_isa(isa)
  if isa ~= nil and type(isa) ~= "string" then
    error("torch.ao.set_isa: argument 'isa' must be a string or nil, got " .. type(isa), 2)
  end
  modules.isa = (isa ~= "auto") and isa or nil
end

------------------------------------------------------------------------------
-- torch.save / torch.load: the quantized modules are nn modules ("nn.ao.<Class>", found by
-- nn's resolver, which loads this library for an "ao." name); quantized tensors are "ao.QTensor"
------------------------------------------------------------------------------
if torch.serialization and torch.serialization.register_namespace then
  torch.serialization.register_namespace("ao", {
    name_of = function(mt) if mt == Q.QTensor then return "QTensor" end end,
    resolve = function(short) if short == "QTensor" then return Q.QTensor end end,
    save = function(obj) return Q._save(obj), nil end,
    load = function(obj, extra, cls) Q._load(obj, extra, cls) end,
  })
end

return ao
