-- nn/initializers.lua — nn.init: in-place initialisations of tensors, as torch.nn.init.
-- Each fills its tensor without recording autograd history and returns it; the names
-- come with and without PyTorch's trailing underscore (nn.init.xavier_uniform_ and
-- nn.init.xavier_uniform are the same function).
local torch = require "torch"
local check_options = require("torch_class").check_options

local I = {}

-- the trailing options of the random initialisations: {generator = g}
local GEN_OPTS = { "generator" }
local function gen_opts(who, opts)
  if opts ~= nil then check_options("nn.init." .. who, opts, GEN_OPTS) end
  return opts
end

local function no_grad(f) return torch.no_grad(f) end

local function check(t, who)
  if not torch.is_tensor(t) then error(("nn.init.%s: expected a tensor, got %s"):format(who, type(t)), 3) end
end

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

-- calculate_gain(nonlinearity, param)
function I.calculate_gain(nonlinearity, param)
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

function I.uniform_(t, a, b, opts)
  check(t, "uniform_")
  gen_opts("uniform_", opts)
  return no_grad(function()
    if opts then return t:uniform_(a or 0, b or 1, opts) end
    return t:uniform_(a or 0, b or 1)
  end)
end

function I.normal_(t, mean, std, opts)
  check(t, "normal_")
  gen_opts("normal_", opts)
  return no_grad(function()
    if opts then return t:normal_(mean or 0, std or 1, opts) end
    return t:normal_(mean or 0, std or 1)
  end)
end

function I.constant_(t, val)
  check(t, "constant_")
  return no_grad(function() return t:fill_(val) end)
end
function I.zeros_(t) check(t, "zeros_"); return no_grad(function() return t:zero_() end) end
function I.ones_(t) check(t, "ones_"); return no_grad(function() return t:fill_(1) end) end

function I.eye_(t)
  check(t, "eye_")
  if t:dim() ~= 2 then error("nn.init.eye_: only tensors with 2 dimensions are supported", 2) end
  return no_grad(function() return t:copy_(torch.eye(t:size(1), t:size(2), { dtype = t.dtype })) end)
end

-- dirac_(t, groups): identity convolution kernels
function I.dirac_(t, groups)
  check(t, "dirac_")
  groups = groups or 1
  local d = t:dim()
  if d < 3 or d > 5 then error("nn.init.dirac_: only tensors with 3, 4, or 5 dimensions are supported", 2) end
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

function I.xavier_uniform_(t, gain, opts)
  check(t, "xavier_uniform_")
  gen_opts("xavier_uniform_", opts)
  local fin, fout = I._calculate_fan_in_and_fan_out(t, "xavier_uniform_")
  local std = (gain or 1) * math.sqrt(2.0 / (fin + fout))
  local a = math.sqrt(3.0) * std
  return I.uniform_(t, -a, a, opts)
end

function I.xavier_normal_(t, gain, opts)
  check(t, "xavier_normal_")
  gen_opts("xavier_normal_", opts)
  local fin, fout = I._calculate_fan_in_and_fan_out(t, "xavier_normal_")
  local std = (gain or 1) * math.sqrt(2.0 / (fin + fout))
  return I.normal_(t, 0, std, opts)
end

-- kaiming_uniform_(t, a=0, mode="fan_in", nonlinearity="leaky_relu") (or an options table)
local KAIMING_OPTS = { "a", "mode", "nonlinearity", "generator" }
local function kaiming_args(who, a, mode, nonlinearity)
  if type(a) == "table" then
    check_options("nn.init." .. who, a, KAIMING_OPTS)
    return a.a or 0, a.mode or "fan_in", a.nonlinearity or "leaky_relu", a
  end
  return a or 0, mode or "fan_in", nonlinearity or "leaky_relu", nil
end

function I.kaiming_uniform_(t, a, mode, nonlinearity, opts)
  check(t, "kaiming_uniform_")
  gen_opts("kaiming_uniform_", opts)
  local o
  a, mode, nonlinearity, o = kaiming_args("kaiming_uniform_", a, mode, nonlinearity)
  if t:numel() == 0 then return t end
  local f = fan(t, mode, "kaiming_uniform_")
  local gain = I.calculate_gain(nonlinearity, a)
  local bound = math.sqrt(3.0) * gain / math.sqrt(f)
  return I.uniform_(t, -bound, bound, opts or (o and o.generator and { generator = o.generator }))
end

function I.kaiming_normal_(t, a, mode, nonlinearity, opts)
  check(t, "kaiming_normal_")
  gen_opts("kaiming_normal_", opts)
  local o
  a, mode, nonlinearity, o = kaiming_args("kaiming_normal_", a, mode, nonlinearity)
  if t:numel() == 0 then return t end
  local f = fan(t, mode, "kaiming_normal_")
  local std = I.calculate_gain(nonlinearity, a) / math.sqrt(f)
  return I.normal_(t, 0, std, opts or (o and o.generator and { generator = o.generator }))
end

-- trunc_normal_(t, mean=0, std=1, a=-2, b=2): normal samples redrawn into [a, b] by the
-- inverse-CDF method (uniform in the CDF's range, then erfinv)
function I.trunc_normal_(t, mean, std, a, b, opts)
  check(t, "trunc_normal_")
  gen_opts("trunc_normal_", opts)
  mean, std, a, b = mean or 0, std or 1, a or -2, b or 2
  local function erf(x) return torch.tensor(x, { dtype = torch.float64 }):erf():item() end
  local function cdf(x) return (1 + erf(x / math.sqrt(2))) / 2 end
  local l, u = cdf((a - mean) / std), cdf((b - mean) / std)
  return no_grad(function()
    if opts then t:uniform_(2 * l - 1, 2 * u - 1, opts) else t:uniform_(2 * l - 1, 2 * u - 1) end
    t:erfinv_()
    t:mul_(std * math.sqrt(2.0))
    t:add_(mean)
    t:clamp_(a, b)
    return t
  end)
end

-- orthogonal_(t, gain=1): the rows (or columns, whichever are fewer) are orthonormal.
-- A normal matrix is orthonormalised by modified Gram-Schmidt (two passes for accuracy) and
-- signed like the Q of a QR factorisation with a positive diagonal in R.
function I.orthogonal_(t, gain, opts)
  check(t, "orthogonal_")
  gen_opts("orthogonal_", opts)
  if t:dim() < 2 then error("nn.init.orthogonal_: only tensors with 2 or more dimensions are supported", 2) end
  if t:numel() == 0 then return t end
  gain = gain or 1
  local rows = t:size(1)
  local cols = t:numel() // rows
  return no_grad(function()
    local flat = torch.randn(rows, cols, { dtype = torch.float64, generator = opts and opts.generator or nil })
    local transposed = rows < cols
    if transposed then flat = flat:t():contiguous() end
    -- columns of flat (n x k, n >= k) made orthonormal
    local n, k = flat:size(1), flat:size(2)
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

-- sparse_(t, sparsity, std=0.01): each column gets ceil(sparsity * rows) zeros
function I.sparse_(t, sparsity, std)
  check(t, "sparse_")
  if t:dim() ~= 2 then error("nn.init.sparse_: only tensors with 2 dimensions are supported", 2) end
  std = std or 0.01
  local rows, cols = t:size(1), t:size(2)
  local nz = math.ceil(sparsity * rows)
  return no_grad(function()
    t:normal_(0, std)
    for c = 1, cols do
      local idx = torch.randperm(rows):narrow(1, 1, nz)
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
