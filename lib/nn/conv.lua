-- nn/conv.lua — Conv1d/2d/3d, ConvTranspose1d/2d/3d and the pooling and unpooling layers.
local torch = require "torch"
local base = require "nn.module"
local F = require "nn.functional"
local init = require "nn.initializers"
local Module, Parameter, pyval = base.Module, base.Parameter, base.pyval
local signature = require("torch_class").signature

local C = {}

local function ntuple(v, n, who, arg)
  if type(v) == "number" then local t = {} for i = 1, n do t[i] = v end return t end
  if type(v) == "table" and #v == n then return v end
  error(("%s: argument '%s' must be a number or a list of %d numbers"):format(who, arg, n), 4)
end

local function tuple_str(t)
  local parts = {}
  for i, v in ipairs(t) do parts[i] = tostring(v) end
  if #parts == 1 then return "(" .. parts[1] .. ",)" end
  return "(" .. table.concat(parts, ", ") .. ")"
end
local function all_eq(t, v) for _, x in ipairs(t) do if x ~= v then return false end end return true end

------------------------------------------------------------------------------
-- _ConvNd: Conv1d/Conv2d/Conv3d(in_channels, out_channels, kernel_size, stride=1, padding=0,
-- dilation=1, groups=1, bias=true, padding_mode="zeros", *, device=nil, dtype=nil);
-- ConvTranspose1d/2d/3d's order is PyTorch's: ..., padding, output_padding, groups, bias, dilation, ...
------------------------------------------------------------------------------
local CONV_SPEC = "in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, " ..
  "bias=true, padding_mode='zeros', *, device=nil, dtype=nil"
local CONV_TRANSPOSE_SPEC = "in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, " ..
  "groups=1, bias=true, dilation=1, padding_mode='zeros', *, device=nil, dtype=nil"
local function conv_class(name, n, transposed)
  local Conv = Module:extend(name)
  local SIG = signature("nn." .. name, transposed and CONV_TRANSPOSE_SPEC or CONV_SPEC)
  function Conv:__init(...)
    local o = SIG(...)
    local in_channels, out_channels, kernel_size = o.in_channels, o.out_channels, o.kernel_size
    local function int(arg, v)
      if math.type(v) ~= "integer" or v < 1 then
        error(("%s: argument '%s' must be a positive integer, got %s"):format(name, arg, tostring(v)), 4)
      end
    end
    int("in_channels", in_channels); int("out_channels", out_channels)
    local groups = o.groups or 1
    int("groups", groups)
    if in_channels % groups ~= 0 then error(("%s: in_channels (%d) must be divisible by groups (%d)"):format(name, in_channels, groups), 3) end
    if out_channels % groups ~= 0 then error(("%s: out_channels (%d) must be divisible by groups (%d)"):format(name, out_channels, groups), 3) end
    self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
    if kernel_size == nil then error(name .. ": argument 'kernel_size' is required", 3) end
    self.kernel_size = ntuple(kernel_size, n, name, "kernel_size")
    self.stride = ntuple(o.stride or 1, n, name, "stride")
    if type(o.padding) == "string" then
      if transposed or (o.padding ~= "same" and o.padding ~= "valid") then
        error(("%s: padding must be a number, a list%s, got \"%s\""):format(name,
          transposed and "" or " or \"same\"/\"valid\"", o.padding), 3)
      end
      if o.padding == "same" and not all_eq(self.stride, 1) then
        error(name .. ": padding='same' is not supported for strided convolutions", 3)
      end
      self.padding = o.padding
    else
      self.padding = ntuple(o.padding or 0, n, name, "padding")
    end
    self.dilation = ntuple(o.dilation or 1, n, name, "dilation")
    self.padding_mode = o.padding_mode or "zeros"
    local pm = self.padding_mode
    if pm ~= "zeros" and (transposed or (pm ~= "reflect" and pm ~= "replicate")) then
      error(("%s: padding_mode \"%s\" is not supported (%s)"):format(name, pm,
        transposed and "zeros" or "zeros, reflect, replicate"), 3)
    end
    self.transposed = transposed or false
    if transposed then self.output_padding = ntuple(o.output_padding or 0, n, name, "output_padding") end
    local shape
    if transposed then shape = { in_channels, out_channels // groups }
    else shape = { out_channels, in_channels // groups } end
    for i = 1, n do shape[#shape + 1] = self.kernel_size[i] end
    local fo = base.factory_kwargs("nn." .. name, o)
    self.weight = Parameter(torch.empty(shape, fo))
    if o.bias ~= false then self.bias = Parameter(torch.empty(out_channels, fo)) end
    self:reset_parameters()
  end

  function Conv:reset_parameters()
    init.kaiming_uniform_(self.weight, math.sqrt(5))
    if self.bias ~= nil then
      local fan_in = init._calculate_fan_in_and_fan_out(self.weight)
      if fan_in ~= 0 then
        local bound = 1 / math.sqrt(fan_in)
        init.uniform_(self.bias, -bound, bound)
      end
    end
  end

  function Conv:extra_repr()
    local s = ("%d, %d, kernel_size=%s, stride=%s"):format(self.in_channels, self.out_channels,
      tuple_str(self.kernel_size), tuple_str(self.stride))
    if type(self.padding) == "string" then s = s .. ", padding=" .. self.padding
    elseif not all_eq(self.padding, 0) then s = s .. ", padding=" .. tuple_str(self.padding) end
    if not all_eq(self.dilation, 1) then s = s .. ", dilation=" .. tuple_str(self.dilation) end
    if self.output_padding and not all_eq(self.output_padding, 0) then
      s = s .. ", output_padding=" .. tuple_str(self.output_padding)
    end
    if self.groups ~= 1 then s = s .. ", groups=" .. self.groups end
    if self.bias == nil then s = s .. ", bias=False" end
    if self.padding_mode ~= "zeros" then s = s .. ", padding_mode=" .. self.padding_mode end
    return s
  end

  -- padding_mode reflect/replicate: pad explicitly (F.pad's order: last dim first),
  -- then convolve without padding
  function Conv:_padded(x)
    if self.padding_mode == "zeros" then return x, self.padding end
    local pads = {}
    for i = n, 1, -1 do
      local lo, hi
      if self.padding == "same" then
        local total = self.dilation[i] * (self.kernel_size[i] - 1)
        lo = total // 2; hi = total - lo
      elseif self.padding == "valid" then lo, hi = 0, 0
      else lo, hi = self.padding[i], self.padding[i] end
      pads[#pads + 1] = lo; pads[#pads + 1] = hi
    end
    local z = {}
    for i = 1, n do z[i] = 0 end
    return F.pad(x, pads, self.padding_mode), z
  end

  function Conv:_check_input(x)
    if not torch.is_tensor(x) then error(("%s: expected a tensor input, got %s"):format(name, type(x)), 3) end
    local d = x:dim()
    if d ~= n + 1 and d ~= n + 2 then
      error(("%s: expected %d-D (unbatched) or %d-D (batched) input, got %d-D input of size %s"):format(
        name, n + 1, n + 2, d, tostring(x.shape)), 3)
    end
    local cin = x:size(d - n)
    if cin ~= self.in_channels then
      error(("%s: expected input with %d channels (dim %d), got %d"):format(name, self.in_channels, d - n, cin), 3)
    end
  end

  C[name] = Conv
  return Conv
end

local Conv1d = conv_class("Conv1d", 1)
function Conv1d:forward(x)
  self:_check_input(x)
  local xp, pad = self:_padded(x)
  return F.conv1d(xp, self.weight, self.bias, self.stride, pad, self.dilation, self.groups)
end

local Conv2d = conv_class("Conv2d", 2)
function Conv2d:forward(x)
  self:_check_input(x)
  local xp, pad = self:_padded(x)
  return F.conv2d(xp, self.weight, self.bias, self.stride, pad, self.dilation, self.groups)
end

local Conv3d = conv_class("Conv3d", 3)
function Conv3d:forward(x)
  self:_check_input(x)
  local xp, pad = self:_padded(x)
  return F.conv3d(xp, self.weight, self.bias, self.stride, pad, self.dilation, self.groups)
end

-- forward(input, output_size=nil): output_size (its last n entries) picks output_padding so
-- the result has that size
local function conv_transpose_class(name, n)
  local Conv = conv_class(name, n, true)
  local FORWARD = signature("nn." .. name .. ":forward", "input, output_size=nil")
  local fn = F["conv_transpose" .. n .. "d"]
  function Conv:forward(...)
    local a = FORWARD(...)
    local x, output_size = a.input, a.output_size
    self:_check_input(x)
    if output_size ~= nil and (type(output_size) ~= "table" or #output_size < n) then
      error(("%s: argument 'output_size' must be a list of at least %d sizes"):format(name, n), 2)
    end
    local op = self.output_padding
    if output_size ~= nil then
      local d = x:dim()
      local os = {}
      for i = 1, n do os[i] = output_size[#output_size - n + i] end
      op = {}
      for i = 1, n do
        local min = (x:size(d - n + i) - 1) * self.stride[i] - 2 * self.padding[i] + self.dilation[i] * (self.kernel_size[i] - 1) + 1
        op[i] = os[i] - min
        if op[i] < 0 or op[i] >= math.max(self.stride[i], self.dilation[i]) then
          error(("%s: requested an output size of %s, but valid sizes range from %d to %d (for an input of %d)"):format(
            name, tuple_str(os), min, min + math.max(self.stride[i], self.dilation[i]) - 1, x:size(d - n + i)), 2)
        end
      end
    end
    return fn(x, self.weight, self.bias, self.stride, self.padding, op, self.groups, self.dilation)
  end
  return Conv
end
conv_transpose_class("ConvTranspose1d", 1)
conv_transpose_class("ConvTranspose2d", 2)
conv_transpose_class("ConvTranspose3d", 3)

------------------------------------------------------------------------------
-- pooling
------------------------------------------------------------------------------
-- the pools' arguments: kernel_size is required; stride defaults to kernel_size
local function pool_args(who, SIG, ...)
  local o = SIG(...)
  if o.kernel_size == nil then error(who .. ": argument 'kernel_size' is required", 4) end
  return o
end

local function maxpool_class(name, n)
  local P = Module:extend(name)
  -- MaxPool2d(kernel_size, stride=kernel_size, padding=0, dilation=1, return_indices=false, ceil_mode=false)
  local SIG = signature("nn." .. name, "kernel_size, stride=nil, padding=0, dilation=1, return_indices=false, " ..
    "ceil_mode=false")
  function P:__init(...)
    local o = pool_args(name, SIG, ...)
    local kernel_size = o.kernel_size
    self.kernel_size = kernel_size
    self.stride = o.stride or kernel_size
    self.padding, self.dilation = o.padding, o.dilation
    self.return_indices, self.ceil_mode = o.return_indices, o.ceil_mode
  end
  local fn = F["max_pool" .. n .. "d"]
  function P:forward(x)
    if not torch.is_tensor(x) then error(("%s: expected a tensor input, got %s"):format(name, type(x)), 2) end
    if x:dim() ~= n + 1 and x:dim() ~= n + 2 then
      error(("%s: expected %d-D or %d-D input, got %d-D"):format(name, n + 1, n + 2, x:dim()), 2)
    end
    return fn(x, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode, self.return_indices)
  end
  function P:extra_repr()
    return ("kernel_size=%s, stride=%s, padding=%s, dilation=%s, ceil_mode=%s"):format(pyval(self.kernel_size),
      pyval(self.stride), pyval(self.padding), pyval(self.dilation), pyval(self.ceil_mode))
  end
  C[name] = P
end
maxpool_class("MaxPool1d", 1)
maxpool_class("MaxPool2d", 2)
maxpool_class("MaxPool3d", 3)

local function avgpool_class(name, n)
  local P = Module:extend(name)
  -- AvgPool2d(kernel_size, stride=kernel_size, padding=0, ceil_mode=false, count_include_pad=true,
  -- divisor_override=nil); AvgPool1d has no divisor_override, as in PyTorch
  local SIG = signature("nn." .. name, "kernel_size, stride=nil, padding=0, ceil_mode=false, " ..
    "count_include_pad=true" .. (n > 1 and ", divisor_override=nil" or ""))
  function P:__init(...)
    local o = pool_args(name, SIG, ...)
    local kernel_size = o.kernel_size
    self.kernel_size = kernel_size
    self.stride = o.stride or kernel_size
    self.padding, self.ceil_mode = o.padding, o.ceil_mode
    self.count_include_pad = o.count_include_pad
    self.divisor_override = o.divisor_override
  end
  local fn = F["avg_pool" .. n .. "d"]
  function P:forward(x)
    if not torch.is_tensor(x) then error(("%s: expected a tensor input, got %s"):format(name, type(x)), 2) end
    if x:dim() ~= n + 1 and x:dim() ~= n + 2 then
      error(("%s: expected %d-D or %d-D input, got %d-D"):format(name, n + 1, n + 2, x:dim()), 2)
    end
    if n == 1 then   -- F.avg_pool1d has no divisor_override (PyTorch's)
      return fn(x, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)
    end
    return fn(x, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad, self.divisor_override)
  end
  function P:extra_repr()
    if n == 1 then
      return ("kernel_size=%s, stride=%s, padding=%s"):format(tuple_str(ntuple(self.kernel_size, 1, name, "kernel_size")),
        tuple_str(ntuple(self.stride, 1, name, "stride")), tuple_str(ntuple(self.padding, 1, name, "padding")))
    end
    return ("kernel_size=%s, stride=%s, padding=%s"):format(pyval(self.kernel_size), pyval(self.stride), pyval(self.padding))
  end
  C[name] = P
end
avgpool_class("AvgPool1d", 1)
avgpool_class("AvgPool2d", 2)
avgpool_class("AvgPool3d", 3)

-- MaxUnpool2d(kernel_size, stride=kernel_size, padding=0); forward(input, indices, output_size=nil)
local function maxunpool_class(name, n)
  local P = Module:extend(name)
  local SIG = signature("nn." .. name, "kernel_size, stride=nil, padding=0")
  local FORWARD = signature("nn." .. name .. ":forward", "input, indices, output_size=nil")
  function P:__init(...)
    local o = pool_args(name, SIG, ...)
    self.kernel_size = ntuple(o.kernel_size, n, name, "kernel_size")
    self.stride = ntuple(o.stride or o.kernel_size, n, name, "stride")
    self.padding = ntuple(o.padding, n, name, "padding")
  end
  local fn = F["max_unpool" .. n .. "d"]
  function P:forward(...)
    local a = FORWARD(...)
    local x = a.input
    if not torch.is_tensor(x) then error(("%s: expected a tensor input, got %s"):format(name, type(x)), 2) end
    if x:dim() ~= n + 1 and x:dim() ~= n + 2 then
      error(("%s: expected %d-D or %d-D input, got %d-D"):format(name, n + 1, n + 2, x:dim()), 2)
    end
    return fn(x, a.indices, self.kernel_size, self.stride, self.padding, a.output_size)
  end
  function P:extra_repr()
    return ("kernel_size=%s, stride=%s, padding=%s"):format(tuple_str(self.kernel_size), tuple_str(self.stride),
      tuple_str(self.padding))
  end
  C[name] = P
end
maxunpool_class("MaxUnpool2d", 2)
maxunpool_class("MaxUnpool3d", 3)

-- FractionalMaxPool2d(kernel_size, output_size=nil, output_ratio=nil, return_indices=false,
-- _random_samples=nil): new pooling regions at every forward unless _random_samples is given
local function fractional_class(name, n)
  local P = Module:extend(name)
  local SIG = signature("nn." .. name, "kernel_size, output_size=nil, output_ratio=nil, return_indices=false, " ..
    "_random_samples=nil")
  function P:__init(...)
    local o = pool_args(name, SIG, ...)
    self.kernel_size = o.kernel_size
    self.output_size, self.output_ratio = o.output_size, o.output_ratio
    self.return_indices, self._random_samples = o.return_indices, o._random_samples
    if (self.output_size == nil) == (self.output_ratio == nil) then
      error(name .. ": exactly one of output_size and output_ratio must be given", 3)
    end
    if self.output_ratio ~= nil then
      for _, r in ipairs(ntuple(self.output_ratio, n, name, "output_ratio")) do
        if not (r > 0 and r < 1) then
          error(("%s: argument 'output_ratio' must lie in (0, 1), got %s"):format(name, tostring(r)), 3)
        end
      end
    end
  end
  local fn = F["fractional_max_pool" .. n .. "d"]
  function P:forward(x)
    if not torch.is_tensor(x) then error(("%s: expected a tensor input, got %s"):format(name, type(x)), 2) end
    return fn(x, self.kernel_size, self.output_size, self.output_ratio, self.return_indices, self._random_samples)
  end
  function P:extra_repr()
    return ("kernel_size=%s, output_size=%s, output_ratio=%s"):format(pyval(self.kernel_size),
      pyval(self.output_size), pyval(self.output_ratio))
  end
  C[name] = P
end
fractional_class("FractionalMaxPool2d", 2)
fractional_class("FractionalMaxPool3d", 3)

local AdaptiveAvgPool2d = Module:extend("AdaptiveAvgPool2d")
C.AdaptiveAvgPool2d = AdaptiveAvgPool2d
local ADAPTIVEAVGPOOL2D = signature("nn.AdaptiveAvgPool2d", "output_size")
function AdaptiveAvgPool2d:__init(...)
  local output_size = ADAPTIVEAVGPOOL2D(...).output_size
  if output_size == nil then error("AdaptiveAvgPool2d: argument 'output_size' is required", 3) end
  self.output_size = output_size
end
function AdaptiveAvgPool2d:forward(x)
  if not torch.is_tensor(x) or (x:dim() ~= 3 and x:dim() ~= 4) then
    error(("AdaptiveAvgPool2d: expected a 3-D or 4-D input, got %s"):format(torch.is_tensor(x) and (x:dim() .. "-D") or type(x)), 2)
  end
  return F.adaptive_avg_pool2d(x, self.output_size)
end
function AdaptiveAvgPool2d:extra_repr() return "output_size=" .. pyval(self.output_size) end

local AdaptiveMaxPool2d = Module:extend("AdaptiveMaxPool2d")
C.AdaptiveMaxPool2d = AdaptiveMaxPool2d
local ADAPTIVEMAXPOOL2D = signature("nn.AdaptiveMaxPool2d", "output_size, return_indices=false")
function AdaptiveMaxPool2d:__init(...)
  local a = ADAPTIVEMAXPOOL2D(...)
  if a.output_size == nil then error("AdaptiveMaxPool2d: argument 'output_size' is required", 3) end
  self.output_size, self.return_indices = a.output_size, a.return_indices
end
function AdaptiveMaxPool2d:forward(x)
  if not torch.is_tensor(x) or (x:dim() ~= 3 and x:dim() ~= 4) then
    error(("AdaptiveMaxPool2d: expected a 3-D or 4-D input, got %s"):format(torch.is_tensor(x) and (x:dim() .. "-D") or type(x)), 2)
  end
  return F.adaptive_max_pool2d(x, self.output_size, self.return_indices)
end
function AdaptiveMaxPool2d:extra_repr() return "output_size=" .. pyval(self.output_size) end

return C
