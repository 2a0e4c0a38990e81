-- nn/activation.lua — a module per activation function (ReLU, GELU, Softmax, PReLU, ...),
-- each a thin layer over nn.functional with PyTorch's constructor arguments and repr.
local torch = require "torch"
local base = require "nn.module"
local F = require "nn.functional"
local Module, Parameter, pyval = base.Module, base.Parameter, base.pyval
local check_options = require("torch_class").check_options

local A = {}

local function fl(v) return pyval(v + 0.0) end   -- a number printed as a Python float

-- a stateless activation with an optional `inplace` flag: Name(inplace) / Name({inplace=})
local INPLACE_OPTS = { "inplace" }
local function simple(name, fn, has_inplace)
  local C = Module:extend(name)
  function C:__init(inplace)
    if type(inplace) == "table" then
      check_options("nn." .. name, inplace, INPLACE_OPTS)
      inplace = inplace.inplace
    end
    self.inplace = inplace and true or false
  end
  if has_inplace then
    function C:forward(x) return fn(x, self.inplace) end
    function C:extra_repr() return self.inplace and "inplace=True" or "" end
  else
    function C:forward(x) return fn(x) end
  end
  A[name] = C
  return C
end

simple("ReLU", F.relu, true)
simple("ReLU6", F.relu6, true)
simple("SELU", F.selu, true)
simple("SiLU", F.silu, true)
simple("Mish", F.mish, true)
simple("Hardsigmoid", F.hardsigmoid, true)
simple("Hardswish", F.hardswish, true)
simple("Sigmoid", F.sigmoid)
simple("Tanh", F.tanh)
simple("Softsign", F.softsign)
simple("LogSigmoid", F.logsigmoid)
simple("Tanhshrink", F.tanhshrink)

local LeakyReLU = Module:extend("LeakyReLU")
A.LeakyReLU = LeakyReLU
local LEAKY_OPTS = { "negative_slope", "inplace" }
function LeakyReLU:__init(negative_slope, inplace)
  if type(negative_slope) == "table" then
    check_options("nn.LeakyReLU", negative_slope, LEAKY_OPTS)
    negative_slope, inplace = negative_slope.negative_slope, negative_slope.inplace
  end
  self.negative_slope, self.inplace = negative_slope or 0.01, inplace and true or false
end
function LeakyReLU:forward(x) return F.leaky_relu(x, self.negative_slope, self.inplace) end
function LeakyReLU:extra_repr()
  return "negative_slope=" .. pyval(self.negative_slope) .. (self.inplace and ", inplace=True" or "")
end

local ALPHA_OPTS = { "alpha", "inplace" }
local function alpha_class(name, fn)
  local C = Module:extend(name)
  function C:__init(alpha, inplace)
    if type(alpha) == "table" then
      check_options("nn." .. name, alpha, ALPHA_OPTS)
      alpha, inplace = alpha.alpha, alpha.inplace
    end
    self.alpha, self.inplace = alpha or 1.0, inplace and true or false
  end
  function C:forward(x) return fn(x, self.alpha, self.inplace) end
  function C:extra_repr() return "alpha=" .. fl(self.alpha) .. (self.inplace and ", inplace=True" or "") end
  A[name] = C
end
alpha_class("ELU", F.elu)
alpha_class("CELU", F.celu)

local GELU = Module:extend("GELU")
A.GELU = GELU
local GELU_OPTS = { "approximate" }
function GELU:__init(approximate)
  if type(approximate) == "table" then
    check_options("nn.GELU", approximate, GELU_OPTS)
    approximate = approximate.approximate
  end
  approximate = approximate or "none"
  if approximate ~= "none" and approximate ~= "tanh" then
    error(("GELU: approximate must be \"none\" or \"tanh\", got \"%s\""):format(tostring(approximate)), 3)
  end
  self.approximate = approximate
end
function GELU:forward(x) return F.gelu(x, self.approximate) end
function GELU:extra_repr() return "approximate='" .. self.approximate .. "'" end

local Softplus = Module:extend("Softplus")
A.Softplus = Softplus
local SOFTPLUS_OPTS = { "beta", "threshold" }
function Softplus:__init(beta, threshold)
  if type(beta) == "table" then
    check_options("nn.Softplus", beta, SOFTPLUS_OPTS)
    beta, threshold = beta.beta, beta.threshold
  end
  self.beta, self.threshold = beta or 1, threshold or 20
end
function Softplus:forward(x) return F.softplus(x, self.beta, self.threshold) end
function Softplus:extra_repr() return ("beta=%s, threshold=%s"):format(pyval(self.beta), pyval(self.threshold)) end

-- PReLU(num_parameters=1, init=0.25)
local PReLU = Module:extend("PReLU")
A.PReLU = PReLU
local PRELU_OPTS, DTYPE_OPTS = { "num_parameters", "init", "dtype" }, { "dtype" }
function PReLU:__init(num_parameters, init_value, opts)
  if type(num_parameters) == "table" then
    opts = check_options("nn.PReLU", num_parameters, PRELU_OPTS)
    num_parameters, init_value = opts.num_parameters, opts.init
  elseif opts ~= nil then
    check_options("nn.PReLU", opts, DTYPE_OPTS)
  end
  self.num_parameters = num_parameters or 1
  if math.type(self.num_parameters) ~= "integer" or self.num_parameters < 1 then
    error(("PReLU: argument 'num_parameters' must be a positive integer, got %s"):format(tostring(num_parameters)), 3)
  end
  self.init = init_value or 0.25
  self.weight = Parameter(torch.full({ self.num_parameters }, self.init, { dtype = opts and opts.dtype or nil, requires_grad = false }))
end
function PReLU:reset_parameters() torch.no_grad(function() self.weight:fill_(self.init) end) end
function PReLU:forward(x)
  if not torch.is_tensor(x) then error("PReLU: expected a tensor input, got " .. type(x), 2) end
  if self.num_parameters > 1 and (x:dim() < 2 or x:size(2) ~= self.num_parameters) then
    error(("PReLU: expected input with %d channels (dim 2), got %s"):format(self.num_parameters,
      x:dim() < 2 and (x:dim() .. "-D input") or tostring(x:size(2))), 2)
  end
  return F.prelu(x, self.weight)
end
function PReLU:extra_repr() return "num_parameters=" .. self.num_parameters end

-- Hardtanh(min_val=-1, max_val=1, inplace)
local Hardtanh = Module:extend("Hardtanh")
A.Hardtanh = Hardtanh
local HARDTANH_OPTS = { "min_val", "max_val", "inplace" }
function Hardtanh:__init(min_val, max_val, inplace)
  if type(min_val) == "table" then
    check_options("nn.Hardtanh", min_val, HARDTANH_OPTS)
    min_val, max_val, inplace = min_val.min_val, min_val.max_val, min_val.inplace
  end
  self.min_val, self.max_val, self.inplace = min_val or -1.0, max_val or 1.0, inplace and true or false
  if self.max_val <= self.min_val then
    error(("Hardtanh: max_val (%s) must be greater than min_val (%s)"):format(self.max_val, self.min_val), 3)
  end
end
function Hardtanh:forward(x) return F.hardtanh(x, self.min_val, self.max_val, self.inplace) end
function Hardtanh:extra_repr()
  return ("min_val=%s, max_val=%s"):format(fl(self.min_val), fl(self.max_val)) .. (self.inplace and ", inplace=True" or "")
end

-- Softmax(dim) / LogSoftmax(dim) / Softmin(dim): dim is 1-based and required
local DIM_OPTS = { "dim" }
local function softmax_class(name, fn)
  local C = Module:extend(name)
  function C:__init(dim)
    if type(dim) == "table" then
      check_options("nn." .. name, dim, DIM_OPTS)
      dim = dim.dim
    end
    self.dim = dim
  end
  function C:forward(x)
    if self.dim == nil then
      error(("%s: no dim was given (construct it as nn.%s(dim))"):format(name, name), 2)
    end
    return fn(x, self.dim)
  end
  function C:extra_repr() return "dim=" .. pyval(self.dim) end
  A[name] = C
end
softmax_class("Softmax", F.softmax)
softmax_class("LogSoftmax", F.log_softmax)
softmax_class("Softmin", F.softmin)

local Softmax2d = Module:extend("Softmax2d")
A.Softmax2d = Softmax2d
function Softmax2d:forward(x)
  if x:dim() ~= 3 and x:dim() ~= 4 then
    error(("Softmax2d: expected a 3-D or 4-D input, got %d-D"):format(x:dim()), 2)
  end
  return F.softmax(x, -3)
end

local GLU = Module:extend("GLU")
A.GLU = GLU
function GLU:__init(dim)
  if type(dim) == "table" then
    check_options("nn.GLU", dim, DIM_OPTS)
    dim = dim.dim
  end
  self.dim = dim or -1
end
function GLU:forward(x) return F.glu(x, self.dim) end
function GLU:extra_repr() return "dim=" .. self.dim end

local Threshold = Module:extend("Threshold")
A.Threshold = Threshold
function Threshold:__init(threshold, value, inplace)
  if threshold == nil or value == nil then error("Threshold: arguments 'threshold' and 'value' are required", 3) end
  self.threshold, self.value, self.inplace = threshold, value, inplace and true or false
end
function Threshold:forward(x) return F.threshold(x, self.threshold, self.value, self.inplace) end
function Threshold:extra_repr()
  return ("threshold=%s, value=%s"):format(pyval(self.threshold), pyval(self.value)) .. (self.inplace and ", inplace=True" or "")
end

local LAMBD_OPTS = { "lambd" }
local function shrink_class(name, fn)
  local C = Module:extend(name)
  function C:__init(lambd)
    if type(lambd) == "table" then
      check_options("nn." .. name, lambd, LAMBD_OPTS)
      lambd = lambd.lambd
    end
    self.lambd = lambd or 0.5
  end
  function C:forward(x) return fn(x, self.lambd) end
  function C:extra_repr() return pyval(self.lambd) end
  A[name] = C
end
shrink_class("Hardshrink", F.hardshrink)
shrink_class("Softshrink", F.softshrink)

local RReLU = Module:extend("RReLU")
A.RReLU = RReLU
local RRELU_OPTS = { "lower", "upper", "inplace" }
function RReLU:__init(lower, upper, inplace)
  if type(lower) == "table" then
    check_options("nn.RReLU", lower, RRELU_OPTS)
    lower, upper, inplace = lower.lower, lower.upper, lower.inplace
  end
  self.lower, self.upper, self.inplace = lower or 1 / 8, upper or 1 / 3, inplace and true or false
end
function RReLU:forward(x) return F.rrelu(x, self.lower, self.upper, self.training, self.inplace) end
function RReLU:extra_repr()
  return ("lower=%s, upper=%s"):format(pyval(self.lower), pyval(self.upper)) .. (self.inplace and ", inplace=True" or "")
end

return A
