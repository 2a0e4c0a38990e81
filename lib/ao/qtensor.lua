-- ao/qtensor.lua — quantized tensors (torch.quantize_per_tensor, torch.quantize_per_channel),
-- man/quantization.md. A quantized tensor is a Lua object over an int8 (torch.qint8) or
-- uint8 (torch.quint8) tensor of stored values and its quantization parameters, not a
-- dtype of the C core: the kernels never meet it (torchao builds its quantized weights the
-- same way, as tensor subclasses over plain integer tensors). Quantize and dequantize run
-- the C ops _quantize_per_tensor/_per_channel and _dequantize_per_tensor/_per_channel.
local torch = require "torch"

local Q = {}

-- dtype-like and qscheme objects: interned, printing as PyTorch's
local function token(kind, name, fields)
  local t = fields or {}
  t.name = name
  return setmetatable(t, { __name = kind, __tostring = function() return "torch." .. name end })
end

Q.qint8 = token("torch.dtype", "qint8", { is_quantized = true, is_floating_point = false, itemsize = 1,
                                         storage = torch.int8, qmin = -128, qmax = 127 })
Q.quint8 = token("torch.dtype", "quint8", { is_quantized = true, is_floating_point = false, itemsize = 1,
                                           storage = torch.uint8, qmin = 0, qmax = 255 })
Q.per_tensor_affine = token("torch.qscheme", "per_tensor_affine")
Q.per_channel_affine = token("torch.qscheme", "per_channel_affine")
Q.per_tensor_symmetric = token("torch.qscheme", "per_tensor_symmetric")
Q.per_channel_symmetric = token("torch.qscheme", "per_channel_symmetric")

local QTensor = { __name = "QTensor" }
QTensor.__index = QTensor
Q.QTensor = QTensor

-- torch.qint8 / "qint8" / torch.int8 (its storage) -> the quantized dtype object
local function qdtype(fn, d)
  if d == Q.qint8 or d == "qint8" or d == torch.int8 then return Q.qint8 end
  if d == Q.quint8 or d == "quint8" or d == torch.uint8 then return Q.quint8 end
  error(("%s: argument 'dtype' must be torch.qint8 or torch.quint8, got %s"):format(fn, tostring(d)), 3)
end

local function check_tensor(fn, arg, t)
  if not torch.is_tensor(t) then
    error(("%s: argument '%s' must be a tensor, got %s"):format(fn, arg, type(t)), 3)
  end
end

local function number_of(fn, arg, v, integer)
  if torch.is_tensor(v) and v:numel() == 1 then v = v:item() end
  if type(v) ~= "number" or (integer and math.type(v) ~= "integer" and v ~= math.floor(v)) then
    error(("%s: argument '%s' must be %s, got %s"):format(fn, arg, integer and "an integer" or "a number",
      tostring(v)), 3)
  end
  return integer and math.tointeger(v) or v
end

local function new(int, fields)
  fields._int = int
  return setmetatable(fields, QTensor)
end

function Q.quantize_per_tensor(x, scale, zero_point, dtype)
  local fn = "quantize_per_tensor"
  check_tensor(fn, "input", x)
  scale = number_of(fn, "scale", scale)
  zero_point = number_of(fn, "zero_point", zero_point, true)
  local dt = qdtype(fn, dtype)
  local q = torch._quantize_per_tensor(x, scale, zero_point, dt.storage)
  return new(q, { dtype = dt, _qscheme = Q.per_tensor_affine, _scale = scale, _zero_point = zero_point })
end

function Q.quantize_per_channel(x, scales, zero_points, axis, dtype)
  local fn = "quantize_per_channel"
  check_tensor(fn, "input", x)
  check_tensor(fn, "scales", scales)
  check_tensor(fn, "zero_points", zero_points)
  axis = number_of(fn, "axis", axis, true)
  local dt = qdtype(fn, dtype)
  local q = torch._quantize_per_channel(x, scales, zero_points, axis, dt.storage)
  if axis < 0 then axis = x:dim() + axis + 1 end
  -- kept as PyTorch keeps them: float64 scales, int64 zero points
  return new(q, { dtype = dt, _qscheme = Q.per_channel_affine, _scales = scales:to(torch.float64),
                  _zero_points = zero_points:to(torch.int64), _axis = axis })
end

local function check_q(fn, q)
  if getmetatable(q) ~= QTensor then
    error(("%s: argument 'self' must be a quantized tensor (torch.quantize_per_tensor), got %s"):format(fn,
      torch.is_tensor(q) and "a plain tensor" or type(q)), 3)
  end
end

function QTensor:dequantize()
  check_q("dequantize", self)
  if self._qscheme == Q.per_tensor_affine then
    return torch._dequantize_per_tensor(self._int, self._scale, self._zero_point)
  end
  return torch._dequantize_per_channel(self._int, self._scales, self._zero_points, self._axis)
end

-- torch.dequantize(q): a quantized tensor's float32 values; a list of them gives a list
function Q.dequantize(q)
  if type(q) == "table" and getmetatable(q) == nil then
    local out = {}
    for i, v in ipairs(q) do out[i] = Q.dequantize(v) end
    return out
  end
  if torch.is_tensor(q) and q:is_floating_point() then return q end   -- PyTorch: a float tensor is itself
  check_q("dequantize", q)
  return q:dequantize()
end

function Q.is_quantized(q) return getmetatable(q) == QTensor end

local function per_tensor(fn, self)
  check_q(fn, self)
  if self._qscheme ~= Q.per_tensor_affine then
    error(("%s: the tensor is quantized per channel; use q_per_channel_scales() and friends"):format(fn), 3)
  end
end

local function per_channel(fn, self)
  check_q(fn, self)
  if self._qscheme ~= Q.per_channel_affine then
    error(("%s: the tensor is quantized per tensor; use q_scale() and q_zero_point()"):format(fn), 3)
  end
end

function QTensor:int_repr() check_q("int_repr", self); return self._int:clone() end
function QTensor:q_scale() per_tensor("q_scale", self); return self._scale end
function QTensor:q_zero_point() per_tensor("q_zero_point", self); return self._zero_point end
function QTensor:q_per_channel_scales() per_channel("q_per_channel_scales", self); return self._scales:clone() end
function QTensor:q_per_channel_zero_points()
  per_channel("q_per_channel_zero_points", self)
  return self._zero_points:clone()
end
function QTensor:q_per_channel_axis() per_channel("q_per_channel_axis", self); return self._axis end
function QTensor:qscheme() check_q("qscheme", self); return self._qscheme end
function QTensor:size(d) return self._int:size(d) end
function QTensor:dim() return self._int:dim() end
function QTensor:numel() return self._int:numel() end
function QTensor:nelement() return self._int:numel() end
function QTensor:element_size() return 1 end
function QTensor:is_quantized() return true end
function QTensor:__len() return self._int:size(1) end

-- fields read like a tensor's: shape, device, is_quantized
local methods = QTensor
QTensor.__index = function(self, k)
  if k == "shape" then return self._int.shape end
  if k == "device" then return self._int.device end
  if k == "ndim" then return self._int:dim() end
  return methods[k]
end

local function fmt_number(v)
  for prec = 1, 17 do
    local s = ("%." .. prec .. "g"):format(v)
    if tonumber(s) == v then return s end
  end
  return tostring(v)
end

-- PyTorch's repr: the dequantized values, then size, dtype and the scheme's parameters
function QTensor:__tostring()
  local body = tostring(self:dequantize()):gsub("%)%s*$", "")
  local sz = {}
  for i = 1, self:dim() do sz[i] = tostring(self:size(i)) end
  local size = #sz == 1 and ("(" .. sz[1] .. ",)") or ("(" .. table.concat(sz, ", ") .. ")")
  local pad = "       "
  if self._qscheme == Q.per_tensor_affine then
    return ("%s, size=%s, dtype=%s,\n%squantization_scheme=%s, scale=%s, zero_point=%d)"):format(body, size,
      tostring(self.dtype), pad, tostring(self._qscheme), fmt_number(self._scale), self._zero_point)
  end
  return ("%s, size=%s, dtype=%s,\n%squantization_scheme=%s,\n%sscale=%s,\n%szero_point=%s, axis=%d)"):format(
    body, size, tostring(self.dtype), pad, tostring(self._qscheme), pad, tostring(self._scales), pad,
    tostring(self._zero_points), self._axis)
end

-- saved by torch.save as "ao.QTensor": its fields (tensors, numbers) and the names of its
-- dtype and scheme; loading rebuilds the interned objects
local SCHEMES = { per_tensor_affine = Q.per_tensor_affine, per_channel_affine = Q.per_channel_affine }
function Q._save(obj)
  return { int = obj._int, dtype = obj.dtype.name, qscheme = obj._qscheme.name, scale = obj._scale,
           zero_point = obj._zero_point, scales = obj._scales, zero_points = obj._zero_points, axis = obj._axis }
end
function Q._load(obj, _, cls)
  local f = {}
  for k, v in pairs(obj) do f[k] = v; obj[k] = nil end
  local dt = (f.dtype == "qint8" and Q.qint8) or (f.dtype == "quint8" and Q.quint8)
  local qs = SCHEMES[f.qscheme]
  if not dt or not qs or not torch.is_tensor(f.int) then error("torch.load: a corrupt ao.QTensor", 0) end
  obj._int, obj.dtype, obj._qscheme = f.int, dt, qs
  obj._scale, obj._zero_point = f.scale, f.zero_point
  obj._scales, obj._zero_points, obj._axis = f.scales, f.zero_points, f.axis
  setmetatable(obj, cls)
end

return Q
