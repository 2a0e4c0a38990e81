-- nn/initializers.lua — nn.init: in-place initialisations of tensors, as torch.nn.init.
-- Each fills its tensor without recording autograd history and returns it; the names
-- come with and without PyTorch's trailing underscore (nn.init.xavier_uniform_ and
-- nn.init.xavier_uniform are the same function).
local torch = require "torch"
local signature = require("torch_class").signature

local I = {}

local function no_grad(f) return torch.no_grad(f) end

local function check(t, who)
  if not torch.is_tensor(t) then error(("nn.init.%s: expected a tensor, got %s"):format(who, type(t)), 3) end
end

-- the options of a random draw: {generator = g} when one was given
local function gen(a) return a.generator ~= nil and { generator = a.generator } or nil end

-- each function's signature, PyTorch's (the random ones take a keyword-only generator)
local function sig(name, spec) return signature("nn.init." .. name, spec) end

-- fan_in, fan_out of a weight: dim 2 is the input features/channels, dim 1 the output ones;
-- the rest (a kernel) multiplies both
function I._calculate_fan_in_and_fan_out(t, who)
  local d = t:dim()
  if d < 2 then
    error(("nn.init.%s: fan in and fan out can not be computed for a tensor with fewer than 2 dimensions")
      :format(who or "_calculate_fan_in_and_fan_out"), 3)
  end
  local rf = 1
  for i = 3, d do rf = rf * t:size(i) end
  return t:size(2) * rf, t:size(1) * rf
end

local function fan(t, mode, who)
  local fin, fout = I._calculate_fan_in_and_fan_out(t, who)
  if mode == "fan_in" then return fin end
  if mode == "fan_out" then return fout end
  error(("nn.init.%s: mode %s is not supported, use fan_in or fan_out"):format(who, tostring(mode)), 3)
end

local function number(who, name, v)
  if type(v) ~= "number" then
    error(("nn.init.%s: argument '%s' must be a number, got %s"):format(who, name, type(v)), 3)
  end
  return v
end

-- calculate_gain(nonlinearity, param=nil)
local CALCULATE_GAIN = sig("calculate_gain", "nonlinearity, param=nil")
function I.calculate_gain(...)
  local a = CALCULATE_GAIN(...)
  local nonlinearity, param = a.nonlinearity, a.param
  local linear = { linear = 1, conv1d = 1, conv2d = 1, conv3d = 1, conv_transpose1d = 1,
                   conv_transpose2d = 1, conv_transpose3d = 1, sigmoid = 1 }
  if linear[nonlinearity] then return 1 end
  if nonlinearity == "tanh" then return 5 / 3 end
  if nonlinearity == "relu" then return math.sqrt(2.0) end
  if nonlinearity == "leaky_relu" then
    local slope
    if param == nil then slope = 0.01
    elseif type(param) == "number" then slope = param
    else error(("nn.init.calculate_gain: negative_slope %s is not a valid number"):format(tostring(param)), 2) end
    return math.sqrt(2.0 / (1 + slope ^ 2))
  end
  if nonlinearity == "selu" then return 3.0 / 4 end
  error(("nn.init.calculate_gain: unsupported nonlinearity %s"):format(tostring(nonlinearity)), 2)
end

-- the draws themselves, after the arguments are parsed
local function uniform(t, lo, hi, g)
  return no_grad(function()
    if g then return t:uniform_(lo, hi, g) end
    return t:uniform_(lo, hi)
  end)
end
local function normal(t, mean, std, g)
  return no_grad(function()
    if g then return t:normal_(mean, std, g) end
    return t:normal_(mean, std)
  end)
end

local UNIFORM = sig("uniform_", "tensor, a=0.0, b=1.0, *, generator=nil")
function I.uniform_(...)
  local a = UNIFORM(...)
  check(a.tensor, "uniform_")
  return uniform(a.tensor, number("uniform_", "a", a.a), number("uniform_", "b", a.b), gen(a))
end

local NORMAL = sig("normal_", "tensor, mean=0.0, std=1.0, *, generator=nil")
function I.normal_(...)
  local a = NORMAL(...)
  check(a.tensor, "normal_")
  return normal(a.tensor, number("normal_", "mean", a.mean), number("normal_", "std", a.std), gen(a))
end

local CONSTANT = sig("constant_", "tensor, val")
function I.constant_(...)
  local a = CONSTANT(...)
  check(a.tensor, "constant_")
  local t, val = a.tensor, number("constant_", "val", a.val)
  return no_grad(function() return t:fill_(val) end)
end

local ZEROS, ONES = sig("zeros_", "tensor"), sig("ones_", "tensor")
function I.zeros_(...)
  local t = ZEROS(...).tensor
  check(t, "zeros_"); return no_grad(function() return t:zero_() end)
end
function I.ones_(...)
  local t = ONES(...).tensor
  check(t, "ones_"); return no_grad(function() return t:fill_(1) end)
end

local EYE = sig("eye_", "tensor")
function I.eye_(...)
  local t = EYE(...).tensor
  check(t, "eye_")
  if t:dim() ~= 2 then error("nn.init.eye_: only tensors with 2 dimensions are supported", 2) end
  return no_grad(function() return t:copy_(torch.eye(t:size(1), t:size(2), { dtype = t.dtype })) end)
end

-- dirac_(tensor, groups=1): identity convolution kernels
local DIRAC = sig("dirac_", "tensor, groups=1")
function I.dirac_(...)
  local a = DIRAC(...)
  local t, groups = a.tensor, a.groups
  check(t, "dirac_")
  local d = t:dim()
  if d < 3 or d > 5 then error("nn.init.dirac_: only tensors with 3, 4, or 5 dimensions are supported", 2) end
  if math.type(groups) ~= "integer" or groups < 1 or t:size(1) % groups ~= 0 then
    error(("nn.init.dirac_: argument 'groups' must be a positive integer that divides dim 1 (%d), got %s")
      :format(t:size(1), tostring(groups)), 2)
  end
  local out_per = t:size(1) // groups
  local min_dim = math.min(out_per, t:size(2))
  return no_grad(function()
    t:zero_()
    for g = 0, groups - 1 do
      for k = 1, min_dim do
        local idx = { g * out_per + k, k }
        for j = 3, d do idx[j] = t:size(j) // 2 + 1 end
        local v = t
        for j = 1, d - 1 do v = v:select(1, idx[j]) end
        v:narrow(1, idx[d], 1):fill_(1)
      end
    end
    return t
  end)
end

local XAVIER_UNIFORM = sig("xavier_uniform_", "tensor, gain=1.0, *, generator=nil")
function I.xavier_uniform_(...)
  local a = XAVIER_UNIFORM(...)
  local t = a.tensor
  check(t, "xavier_uniform_")
  local fin, fout = I._calculate_fan_in_and_fan_out(t, "xavier_uniform_")
  local std = number("xavier_uniform_", "gain", a.gain) * math.sqrt(2.0 / (fin + fout))
  local bound = math.sqrt(3.0) * std
  return uniform(t, -bound, bound, gen(a))
end

local XAVIER_NORMAL = sig("xavier_normal_", "tensor, gain=1.0, *, generator=nil")
function I.xavier_normal_(...)
  local a = XAVIER_NORMAL(...)
  local t = a.tensor
  check(t, "xavier_normal_")
  local fin, fout = I._calculate_fan_in_and_fan_out(t, "xavier_normal_")
  local std = number("xavier_normal_", "gain", a.gain) * math.sqrt(2.0 / (fin + fout))
  return normal(t, 0, std, gen(a))
end

-- kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", *, generator=nil)
local KAIMING = "tensor, a=0, mode='fan_in', nonlinearity='leaky_relu', *, generator=nil"
local KAIMING_UNIFORM, KAIMING_NORMAL = sig("kaiming_uniform_", KAIMING), sig("kaiming_normal_", KAIMING)
function I.kaiming_uniform_(...)
  local a = KAIMING_UNIFORM(...)
  local t = a.tensor
  check(t, "kaiming_uniform_")
  if t:numel() == 0 then return t end
  local f = fan(t, a.mode, "kaiming_uniform_")
  local gain = I.calculate_gain(a.nonlinearity, a.a)
  local bound = math.sqrt(3.0) * gain / math.sqrt(f)
  return uniform(t, -bound, bound, gen(a))
end

function I.kaiming_normal_(...)
  local a = KAIMING_NORMAL(...)
  local t = a.tensor
  check(t, "kaiming_normal_")
  if t:numel() == 0 then return t end
  local f = fan(t, a.mode, "kaiming_normal_")
  local std = I.calculate_gain(a.nonlinearity, a.a) / math.sqrt(f)
  return normal(t, 0, std, gen(a))
end

-- trunc_normal_(tensor, mean=0, std=1, a=-2, b=2): normal samples redrawn into [a, b] by the
-- inverse-CDF method (uniform in the CDF's range, then erfinv)
local TRUNC_NORMAL = sig("trunc_normal_", "tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, *, generator=nil")
function I.trunc_normal_(...)
  local args = TRUNC_NORMAL(...)
  local t = args.tensor
  check(t, "trunc_normal_")
  local mean, std = number("trunc_normal_", "mean", args.mean), number("trunc_normal_", "std", args.std)
  local a, b = number("trunc_normal_", "a", args.a), number("trunc_normal_", "b", args.b)
  local g = gen(args)
  local function erf(x) return torch.tensor(x, { dtype = torch.float64 }):erf():item() end
  local function cdf(x) return (1 + erf(x / math.sqrt(2))) / 2 end
  local l, u = cdf((a - mean) / std), cdf((b - mean) / std)
  return no_grad(function()
    if g then t:uniform_(2 * l - 1, 2 * u - 1, g) else t:uniform_(2 * l - 1, 2 * u - 1) end
    t:erfinv_()
    t:mul_(std * math.sqrt(2.0))
    t:add_(mean)
    t:clamp_(a, b)
    return t
  end)
end

-- orthogonal_(tensor, gain=1): the rows (or columns, whichever are fewer) are orthonormal.
-- A normal matrix is orthonormalised by modified Gram-Schmidt (two passes for accuracy) and
-- signed like the Q of a QR factorisation with a positive diagonal in R.
local ORTHOGONAL = sig("orthogonal_", "tensor, gain=1, *, generator=nil")
function I.orthogonal_(...)
  local a = ORTHOGONAL(...)
  local t = a.tensor
  check(t, "orthogonal_")
  if t:dim() < 2 then error("nn.init.orthogonal_: only tensors with 2 or more dimensions are supported", 2) end
  if t:numel() == 0 then return t end
  local gain = number("orthogonal_", "gain", a.gain)
  local rows = t:size(1)
  local cols = t:numel() // rows
  return no_grad(function()
    local flat = torch.randn(rows, cols, { dtype = torch.float64, generator = a.generator })
    local transposed = rows < cols
    if transposed then flat = flat:t():contiguous() end
    -- columns of flat (n x k, n >= k) made orthonormal
    local k = flat:size(2)
    local q = flat:clone()
    for j = 1, k do
      local v = q:narrow(2, j, 1)
      for _ = 1, 2 do
        if j > 1 then
          local prev = q:narrow(2, 1, j - 1)
          local coef = prev:t():mm(v)
          v:sub_(prev:mm(coef))
        end
      end
      v:div_(v:norm())
    end
    if transposed then q = q:t() end
    t:copy_(q:reshape(t.shape):mul(gain))
    return t
  end)
end

-- sparse_(tensor, sparsity, std=0.01): each column gets ceil(sparsity * rows) zeros
local SPARSE = sig("sparse_", "tensor, sparsity, std=0.01, *, generator=nil")
function I.sparse_(...)
  local a = SPARSE(...)
  local t = a.tensor
  check(t, "sparse_")
  if t:dim() ~= 2 then error("nn.init.sparse_: only tensors with 2 dimensions are supported", 2) end
  local sparsity, std = number("sparse_", "sparsity", a.sparsity), number("sparse_", "std", a.std)
  if sparsity < 0 or sparsity > 1 then
    error(("nn.init.sparse_: argument 'sparsity' must be in [0, 1], got %s"):format(tostring(sparsity)), 2)
  end
  local g = gen(a)
  local rows, cols = t:size(1), t:size(2)
  local nz = math.ceil(sparsity * rows)
  return no_grad(function()
    if g then t:normal_(0, std, g) else t:normal_(0, std) end
    for c = 1, cols do
      local idx = torch.randperm(rows, g):narrow(1, 1, nz)
      for i = 1, nz do t[idx[i]][c] = 0 end
    end
    return t
  end)
end

-- the same functions without the trailing underscore
for _, k in ipairs({ "uniform_", "normal_", "constant_", "zeros_", "ones_", "eye_", "dirac_",
                     "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
                     "trunc_normal_", "orthogonal_", "sparse_" }) do
  I[k:sub(1, -2)] = I[k]
end

return I
