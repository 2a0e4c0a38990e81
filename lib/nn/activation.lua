-- nn/activation.lua — a module per activation function (ReLU, GELU, Softmax, PReLU, ...),
-- each a thin layer over nn.functional with PyTorch's constructor arguments and repr.
local torch = require "torch"
local base = require "nn.module"
local F = require "nn.functional"
local Module, Parameter, pyval = base.Module, base.Parameter, base.pyval
local signature = require("torch_class").signature

local A = {}

local function fl(v) return pyval(v + 0.0) end   -- a number printed as a Python float

-- a stateless activation, with an `inplace` flag where PyTorch has one: Name(inplace=false)
-- (Name(true), Name({inplace = true})); the others take no arguments
local function simple(name, fn, has_inplace)
  local C = Module:extend(name)
  local SIG = signature("nn." .. name, has_inplace and "inplace=false" or "")
  function C:__init(...)
    local inplace = SIG(...).inplace
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
local LEAKYRELU = signature("nn.LeakyReLU", "negative_slope=0.01, inplace=false")
function LeakyReLU:__init(...)
  local a = LEAKYRELU(...)
  self.negative_slope, self.inplace = a.negative_slope, a.inplace and true or false
end
function LeakyReLU:forward(x) return F.leaky_relu(x, self.negative_slope, self.inplace) end
function LeakyReLU:extra_repr()
  return "negative_slope=" .. pyval(self.negative_slope) .. (self.inplace and ", inplace=True" or "")
end

local function alpha_class(name, fn)
  local C = Module:extend(name)
  local SIG = signature("nn." .. name, "alpha=1.0, inplace=false")
  function C:__init(...)
    local a = SIG(...)
    self.alpha, self.inplace = a.alpha, a.inplace and true or false
  end
  function C:forward(x) return fn(x, self.alpha, self.inplace) end
  function C:extra_repr() return "alpha=" .. fl(self.alpha) .. (self.inplace and ", inplace=True" or "") end
  A[name] = C
end
alpha_class("ELU", F.elu)
alpha_class("CELU", F.celu)

local GELU = Module:extend("GELU")
A.GELU = GELU
local GELU_SIG = signature("nn.GELU", "approximate='none'")
function GELU:__init(...)
  local approximate = GELU_SIG(...).approximate
  if approximate ~= "none" and approximate ~= "tanh" then
    error(("GELU: approximate must be \"none\" or \"tanh\", got \"%s\""):format(tostring(approximate)), 3)
  end
  self.approximate = approximate
end
function GELU:forward(x) return F.gelu(x, { approximate = self.approximate }) end   -- keyword-only in PyTorch
function GELU:extra_repr() return "approximate='" .. self.approximate .. "'" end

local Softplus = Module:extend("Softplus")
A.Softplus = Softplus
local SOFTPLUS = signature("nn.Softplus", "beta=1, threshold=20")
function Softplus:__init(...)
  local a = SOFTPLUS(...)
  self.beta, self.threshold = a.beta, a.threshold
end
function Softplus:forward(x) return F.softplus(x, self.beta, self.threshold) end
function Softplus:extra_repr() return ("beta=%s, threshold=%s"):format(pyval(self.beta), pyval(self.threshold)) end

-- PReLU(num_parameters=1, init=0.25, *, device=nil, dtype=nil)
local PReLU = Module:extend("PReLU")
A.PReLU = PReLU
local PRELU = signature("nn.PReLU", "num_parameters=1, init=0.25, *, device=nil, dtype=nil")
function PReLU:__init(...)
  local a = PRELU(...)
  local num_parameters = a.num_parameters
  self.num_parameters = num_parameters
  if math.type(num_parameters) ~= "integer" or num_parameters < 1 then
    error(("PReLU: argument 'num_parameters' must be a positive integer, got %s"):format(tostring(num_parameters)), 3)
  end
  if type(a.init) ~= "number" then
    error(("PReLU: argument 'init' must be a number, got %s"):format(type(a.init)), 3)
  end
  self.init = a.init
  self.weight = Parameter(torch.full({ num_parameters }, self.init, base.factory_kwargs("nn.PReLU", a)))
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
local HARDTANH = signature("nn.Hardtanh", "min_val=-1.0, max_val=1.0, inplace=false")
function Hardtanh:__init(...)
  local a = HARDTANH(...)
  self.min_val, self.max_val, self.inplace = a.min_val, a.max_val, a.inplace and true or false
  if self.max_val <= self.min_val then
    error(("Hardtanh: max_val (%s) must be greater than min_val (%s)"):format(self.max_val, self.min_val), 3)
  end
end
function Hardtanh:forward(x) return F.hardtanh(x, self.min_val, self.max_val, self.inplace) end
function Hardtanh:extra_repr()
  return ("min_val=%s, max_val=%s"):format(fl(self.min_val), fl(self.max_val)) .. (self.inplace and ", inplace=True" or "")
end

-- Softmax(dim) / LogSoftmax(dim) / Softmin(dim): dim is 1-based and required
local function softmax_class(name, fn)
  local C = Module:extend(name)
  local SIG = signature("nn." .. name, "dim=nil")
  function C:__init(...)
    self.dim = SIG(...).dim
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
local SOFTMAX2D = signature("nn.Softmax2d", "")
function Softmax2d:__init(...) SOFTMAX2D(...) end
function Softmax2d:forward(x)
  if x:dim() ~= 3 and x:dim() ~= 4 then
    error(("Softmax2d: expected a 3-D or 4-D input, got %d-D"):format(x:dim()), 2)
  end
  return F.softmax(x, -3)
end

local GLU = Module:extend("GLU")
A.GLU = GLU
local GLU_SIG = signature("nn.GLU", "dim=-1")
function GLU:__init(...)
  self.dim = GLU_SIG(...).dim
end
function GLU:forward(x) return F.glu(x, self.dim) end
function GLU:extra_repr() return "dim=" .. self.dim end

local Threshold = Module:extend("Threshold")
A.Threshold = Threshold
local THRESHOLD = signature("nn.Threshold", "threshold, value, inplace=false")
function Threshold:__init(...)
  local a = THRESHOLD(...)
  if a.threshold == nil or a.value == nil then error("Threshold: arguments 'threshold' and 'value' are required", 3) end
  self.threshold, self.value, self.inplace = a.threshold, a.value, a.inplace and true or false
end
function Threshold:forward(x) return F.threshold(x, self.threshold, self.value, self.inplace) end
function Threshold:extra_repr()
  return ("threshold=%s, value=%s"):format(pyval(self.threshold), pyval(self.value)) .. (self.inplace and ", inplace=True" or "")
end

local function shrink_class(name, fn)
  local C = Module:extend(name)
  local SIG = signature("nn." .. name, "lambd=0.5")
  function C:__init(...)
    self.lambd = SIG(...).lambd
  end
  function C:forward(x) return fn(x, self.lambd) end
  function C:extra_repr() return pyval(self.lambd) end
  A[name] = C
end
shrink_class("Hardshrink", F.hardshrink)
shrink_class("Softshrink", F.softshrink)

local RReLU = Module:extend("RReLU")
A.RReLU = RReLU
local RRELU = signature("nn.RReLU", "lower=0.125, upper=1/3, inplace=false")
function RReLU:__init(...)
  local a = RRELU(...)
  self.lower, self.upper, self.inplace = a.lower, a.upper or 1 / 3, a.inplace and true or false
end
function RReLU:forward(x) return F.rrelu(x, self.lower, self.upper, self.training, self.inplace) end
function RReLU:extra_repr()
  return ("lower=%s, upper=%s"):format(pyval(self.lower), pyval(self.upper)) .. (self.inplace and ", inplace=True" or "")
end

return A
