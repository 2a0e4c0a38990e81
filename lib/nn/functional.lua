-- nn/functional.lua — nn.functional (also nn.F): the functional form of every layer,
-- thin wrappers over the torch.* ops (PyTorch's torch.nn.functional in Lua).
--
-- Every function takes PyTorch's parameters, in PyTorch's order and by PyTorch's names,
-- declared once with class.signature (help prints them; class.signatures["F.relu"]). Any
-- argument may be given by name in a trailing options table, as Python's keywords:
-- F.cross_entropy(x, y, {weight = w, label_smoothing = 0.1}), F.gelu(x, {approximate =
-- "tanh"}), F.dropout(x, {p = 0.2, training = false}); a name that is not a parameter is an
-- error with the nearest known one. Where a function is one op with the op's parameters
-- (F.linear is torch.linear, F.avg_pool2d torch.avg_pool2d, ...), the parameter list is read
-- from the op's declaration (src/ops/*.lua, through torch._ops()) when this file loads, so
-- the two cannot drift apart; an op's `self` is PyTorch's `input`. Where PyTorch's F adds
-- to the op (`inplace`, `return_indices`) or names things differently (F.dropout's
-- `training` where the op says `train`), the difference is declared next to the function.
-- Class targets, indices and dims are 1-based, as everywhere in lutorch.
local torch = require "torch"
local class = require "torch_class"

local F = {}

local function check_tensor(v, who, arg)
  if not torch.is_tensor(v) then
    error(("F.%s: argument '%s' must be a tensor, got %s"):format(who, arg, type(v)), 3)
  end
end

-- a number or a list -> a list of n numbers
local function ntuple(v, n, who, arg)
  if type(v) == "number" then
    local t = {}
    for i = 1, n do t[i] = v end
    return t
  end
  if type(v) == "table" then
    if #v == 1 and n > 1 then
      local t = {}
      for i = 1, n do t[i] = v[1] end
      return t
    end
    if #v ~= n then
      error(("F.%s: argument '%s' must be a number or a list of %d numbers, got %d"):format(who, arg, n, #v), 3)
    end
    return v
  end
  error(("F.%s: argument '%s' must be a number or a list of %d numbers, got %s"):format(who, arg, n, type(v)), 3)
end
F._ntuple = ntuple

------------------------------------------------------------------------------
-- signatures
------------------------------------------------------------------------------
-- the declarations of the ops, by name ("dropout" -> "dropout(Tensor input, float p=0.5,
-- bool train=True) -> Tensor"), read once
local OP_DECLS
local function op_decl(name)
  if not OP_DECLS then
    OP_DECLS = {}
    for _, o in ipairs(torch._ops()) do OP_DECLS[o.name] = o.signature end
  end
  return OP_DECLS[name]
end

-- a default of the schema language in Lua's notation: None -> nil, True -> true, "x" -> 'x',
-- [1, 2] -> {1, 2}
local function lua_default(d)
  if d == "None" then return "nil" end
  if d == "True" then return "true" end
  if d == "False" then return "false" end
  local s = d:match('^"(.*)"$')
  if s then return "'" .. s .. "'" end
  return (d:gsub("%[", "{"):gsub("%]", "}"))
end

-- op_params("softplus") -> "input, beta=1, threshold=20": an op's parameters in signature
-- notation (its `self` named `input`, as PyTorch's F does), with `extra` parameters appended
local function op_params(name, extra)
  local decl = op_decl(name)
  local args = decl and decl:match("^[%w_.]+%((.*)%)%s*%->")
  if not args then error(("nn.functional: no declaration of the op '%s' to take its parameters from"):format(name), 2) end
  local out = {}
  for _, item in ipairs(class.split_params(args)) do
    if item == "*" then out[#out + 1] = "*"
    elseif item ~= "" then
      local pname, def = item:match("([%a_][%w_]*)%s*=%s*(.-)$")
      if not pname then pname = item:match("([%a_][%w_]*)$") end
      if pname == "self" then pname = "input" end
      out[#out + 1] = def and (pname .. "=" .. lua_default(def)) or pname
    end
  end
  if extra then out[#out + 1] = extra end
  return table.concat(out, ", ")
end
F._op_params = op_params

-- def(name, params, fn): F[name] parses its arguments by the signature "F.<name>" first, then
-- runs fn(a) on the table of arguments by name (a tail call, so error levels in fn count
-- from the caller of F[name])
local function def(name, params, fn)
  local sig = class.signature("F." .. name, params)
  local parse = sig.parse
  -- the losses PyTorch runs in float32 under autocast (src/ops/autocast.lua's `functional`)
  fn = torch._autocast.wrap(name, fn)
  F[name] = function(...) return fn(parse(...)) end
  return sig
end

------------------------------------------------------------------------------
-- linear layers
------------------------------------------------------------------------------
def("linear", op_params("linear"), function(a)
  check_tensor(a.input, "linear", "input"); check_tensor(a.weight, "linear", "weight")
  return torch.linear(a.input, a.weight, a.bias)
end)

def("bilinear", op_params("bilinear"), function(a)
  return torch.bilinear(a.input1, a.input2, a.weight, a.bias)
end)

------------------------------------------------------------------------------
-- activations: the op's parameters, and PyTorch's `inplace` where F has it (which runs the
-- in-place op). F.sigmoid and F.tanh take `inplace` too, as lutorch always let them.
------------------------------------------------------------------------------
local function act1(name, has_inplace)
  local inplace_name = name .. "_"
  if has_inplace then
    def(name, op_params(name, "inplace=false"), function(a)
      if a.inplace then return torch[inplace_name](a.input) end
      return torch[name](a.input)
    end)
  else
    def(name, op_params(name), function(a) return torch[name](a.input) end)
  end
end
act1("relu", true)
act1("relu6", true)
act1("sigmoid", true)
act1("tanh", true)
act1("silu", true)
act1("selu", true)
act1("mish", true)
act1("hardsigmoid", true)
act1("hardswish", true)
act1("softsign")
act1("logsigmoid")
act1("tanhshrink")

def("hardtanh", op_params("hardtanh", "inplace=false"), function(a)
  if a.inplace then return torch.hardtanh_(a.input, a.min_val, a.max_val) end
  return torch.hardtanh(a.input, a.min_val, a.max_val)
end)

def("leaky_relu", op_params("leaky_relu", "inplace=false"), function(a)
  if a.inplace then return torch.leaky_relu_(a.input, a.negative_slope) end
  return torch.leaky_relu(a.input, a.negative_slope)
end)

-- (the op also takes scale and input_scale, which F.elu does not)
def("elu", "input, alpha=1.0, inplace=false", function(a)
  if a.inplace then return torch.elu_(a.input, a.alpha) end
  return torch.elu(a.input, a.alpha)
end)

def("celu", op_params("celu", "inplace=false"), function(a)
  if a.inplace then return torch.celu_(a.input, a.alpha) end
  return torch.celu(a.input, a.alpha)
end)

-- gelu(x, "tanh") or gelu(x, {approximate = "tanh"}) (positional too, unlike the op's keyword)
def("gelu", "input, approximate='none'", function(a)
  return torch.gelu(a.input, { approximate = a.approximate })
end)

def("softplus", op_params("softplus"), function(a) return torch.softplus(a.input, a.beta, a.threshold) end)

def("threshold", op_params("threshold", "inplace=false"), function(a)
  if a.inplace then return torch.threshold_(a.input, a.threshold, a.value) end
  return torch.threshold(a.input, a.threshold, a.value)
end)

def("hardshrink", op_params("hardshrink"), function(a) return torch.hardshrink(a.input, a.lambd) end)
def("softshrink", op_params("softshrink"), function(a) return torch.softshrink(a.input, a.lambd) end)
def("prelu", op_params("prelu"), function(a) return torch.prelu(a.input, a.weight) end)

def("rrelu", op_params("rrelu", "inplace=false"), function(a)
  local training = a.training and true or false
  if a.inplace then return torch.rrelu_(a.input, a.lower, a.upper, training) end
  return torch.rrelu(a.input, a.lower, a.upper, training)
end)

def("glu", op_params("glu"), function(a) return torch.glu(a.input, a.dim) end)

-- softmax(x, dim, dtype) / softmax(x, {dim=, dtype=}); dim is required (1-based). PyTorch's
-- _stacklevel (a warning's bookkeeping) is left out, so dtype is the third argument.
local function need_dim(who, a)
  if a.dim == nil then
    error(("F.%s: argument 'dim' is required (PyTorch's implicit dim choice is deprecated)"):format(who), 3)
  end
end

def("softmax", op_params("softmax"), function(a)
  need_dim("softmax", a)
  return torch.softmax(a.input, a.dim, a.dtype)
end)

def("log_softmax", op_params("log_softmax"), function(a)
  need_dim("log_softmax", a)
  return torch.log_softmax(a.input, a.dim, a.dtype)
end)

def("softmin", "input, dim, dtype=nil", function(a)
  need_dim("softmin", a)
  return torch.softmax(-a.input, a.dim, a.dtype)
end)

-- normalize(x, p=2, dim=2, eps=1e-12): x / max(||x||_p, eps) along dim
def("normalize", "input, p=2.0, dim=2, eps=1e-12", function(a)
  local x = a.input
  check_tensor(x, "normalize", "input")
  local n = x:norm(a.p, a.dim, true):clamp_min(a.eps)
  return x / n:expand_as(x)
end)

------------------------------------------------------------------------------
-- dropout: PyTorch's `training` (the ops call it `train`) and `inplace`
------------------------------------------------------------------------------
local function check_p(who, p)
  if type(p) ~= "number" or p < 0 or p > 1 then
    error(("F.%s: dropout probability has to be between 0 and 1, but got %s"):format(who, tostring(p)), 3)
  end
end

local DROPOUT_PARAMS = "input, p=0.5, training=true, inplace=false"
def("dropout", DROPOUT_PARAMS, function(a)
  check_p("dropout", a.p)
  local x, p = a.input, a.p
  if not a.training or p == 0 then return x end
  if a.inplace then return torch.dropout_(x, p, true) end
  return torch.dropout(x, p, true)
end)

local function feature_dropout(who, mindim)
  def(who, DROPOUT_PARAMS, function(a)
    check_p(who, a.p)
    local x, p = a.input, a.p
    if x:dim() < mindim then
      error(("F.%s: expected an input with at least %d dimensions, got %d"):format(who, mindim, x:dim()), 2)
    end
    if not a.training or p == 0 then return x end
    if a.inplace then return torch.feature_dropout_(x, p, true) end
    return torch.feature_dropout(x, p, true)
  end)
end
feature_dropout("dropout1d", 2)
feature_dropout("dropout2d", 3)
feature_dropout("dropout3d", 4)
F.feature_dropout = F.dropout2d

-- as PyTorch, F.alpha_dropout is off unless training is given (nn.AlphaDropout passes it)
def("alpha_dropout", "input, p=0.5, training=false, inplace=false", function(a)
  check_p("alpha_dropout", a.p)
  local x, p = a.input, a.p
  if not a.training or p == 0 then return x end
  local alpha = -1.7580993408473766
  local keep = torch.empty_like(x):bernoulli_(1 - p)
  local s = 1 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
  local b = -s * alpha * p
  local y = (x * keep + (1 - keep) * alpha) * s + b
  if a.inplace then return x:copy_(y) end
  return y
end)

------------------------------------------------------------------------------
-- embedding, one_hot, distances, attention
------------------------------------------------------------------------------
-- embedding(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)
-- (PyTorch's order; the op is torch.embedding(weight, input, padding_idx)). sparse=true is
-- accepted and gives the same values with a dense gradient; scale_grad_by_freq is refused,
-- as it would change the gradient.
def("embedding", "input, weight, padding_idx=nil, max_norm=nil, norm_type=2.0, scale_grad_by_freq=false, sparse=false",
function(a)
  local input, weight, padding_idx, max_norm = a.input, a.weight, a.padding_idx, a.max_norm
  check_tensor(input, "embedding", "input"); check_tensor(weight, "embedding", "weight")
  if a.scale_grad_by_freq then
    error("F.embedding: scale_grad_by_freq=true is not supported", 2)
  end
  if padding_idx ~= nil and padding_idx < 0 then padding_idx = weight:size(1) + padding_idx + 1 end
  if max_norm ~= nil then
    -- renormalise, in place and without history, the rows that are looked up
    torch.no_grad(function()
      local idx = input:reshape(-1)
      local rows = weight:index_select(1, idx)
      local n = rows:norm(a.norm_type, 2, true)
      local scale = torch.where(n:gt(max_norm), n:add(1e-7):reciprocal():mul(max_norm), torch.ones_like(n))
      weight:index_copy_(1, idx, rows * scale)
    end)
  end
  return torch.embedding(weight, input, padding_idx)
end)

-- (PyTorch names the argument `tensor`)
def("one_hot", "tensor, num_classes=-1", function(a) return torch.one_hot(a.tensor, a.num_classes) end)

def("cosine_similarity", op_params("cosine_similarity"), function(a)
  return torch.cosine_similarity(a.x1, a.x2, a.dim, a.eps)
end)

def("pairwise_distance", op_params("pairwise_distance"), function(a)
  return torch.pairwise_distance(a.x1, a.x2, a.p, a.eps, a.keepdim and true or false)
end)

-- scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale)
def("scaled_dot_product_attention", op_params("scaled_dot_product_attention"), function(a)
  return torch.scaled_dot_product_attention(a.query, a.key, a.value, a.attn_mask, a.dropout_p,
    a.is_causal and true or false, a.scale)
end)

------------------------------------------------------------------------------
-- convolution and pooling
------------------------------------------------------------------------------
local function padding_arg(padding, n, who)
  if type(padding) == "string" then
    if padding ~= "same" and padding ~= "valid" then
      error(("F.%s: padding must be \"valid\", \"same\", a number or a list, got \"%s\""):format(who, padding), 3)
    end
    return padding
  end
  return ntuple(padding, n, who, "padding")
end

-- (the op's padding is a string or a list with no default; PyTorch's F defaults it to 0)
local CONV_PARAMS = "input, weight, bias=nil, stride=1, padding=0, dilation=1, groups=1"
def("conv1d", CONV_PARAMS, function(a)
  return torch.conv1d(a.input, a.weight, a.bias, ntuple(a.stride, 1, "conv1d", "stride"),
    padding_arg(a.padding, 1, "conv1d"), ntuple(a.dilation, 1, "conv1d", "dilation"), a.groups)
end)

def("conv2d", CONV_PARAMS, function(a)
  return torch.conv2d(a.input, a.weight, a.bias, ntuple(a.stride, 2, "conv2d", "stride"),
    padding_arg(a.padding, 2, "conv2d"), ntuple(a.dilation, 2, "conv2d", "dilation"), a.groups)
end)

def("conv3d", CONV_PARAMS, function(a)
  return torch.conv3d(a.input, a.weight, a.bias, ntuple(a.stride, 3, "conv3d", "stride"),
    padding_arg(a.padding, 3, "conv3d"), ntuple(a.dilation, 3, "conv3d", "dilation"), a.groups)
end)

-- conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation);
-- conv_transpose1d and conv_transpose3d alike
local function conv_transpose(n)
  local who = "conv_transpose" .. n .. "d"
  def(who, op_params(who), function(a)
    return torch[who](a.input, a.weight, a.bias, ntuple(a.stride, n, who, "stride"),
      ntuple(a.padding, n, who, "padding"), ntuple(a.output_padding, n, who, "output_padding"), a.groups,
      ntuple(a.dilation, n, who, "dilation"))
  end)
end
conv_transpose(1)
conv_transpose(2)
conv_transpose(3)

-- a stride left out (nil or {}) is the kernel size
local function stride_arg(stride, k, n, who)
  if stride == nil or (type(stride) == "table" and #stride == 0) then return k end
  return ntuple(stride, n, who, "stride")
end

-- max_pool2d(input, kernel_size, stride=kernel_size, padding=0, dilation=1, ceil_mode=false,
-- return_indices=false): the op's parameters and PyTorch's return_indices
local function max_pool(n)
  local who = "max_pool" .. n .. "d"
  local with_indices = who .. "_with_indices"
  local function pool(a, indices)
    local k = ntuple(a.kernel_size, n, who, "kernel_size")
    local s = stride_arg(a.stride, k, n, who)
    local p = ntuple(a.padding, n, who, "padding")
    local d = ntuple(a.dilation, n, who, "dilation")
    if indices then return torch[with_indices](a.input, k, s, p, d, a.ceil_mode and true or false) end
    return torch[who](a.input, k, s, p, d, a.ceil_mode and true or false)
  end
  def(who, op_params(who, "return_indices=false"), function(a) return pool(a, a.return_indices) end)
  -- (PyTorch's _with_indices take return_indices too, and always return the indices)
  def(with_indices, op_params(with_indices, "return_indices=false"), function(a) return pool(a, true) end)
end
max_pool(1)
max_pool(2)
max_pool(3)

-- avg_pool2d(input, kernel_size, stride=kernel_size, padding=0, ceil_mode=false, count_include_pad=true, divisor_override=nil)
local function avg_pool(n)
  local who = "avg_pool" .. n .. "d"
  def(who, op_params(who), function(a)
    local k = ntuple(a.kernel_size, n, who, "kernel_size")
    local s = stride_arg(a.stride, k, n, who)
    local p = ntuple(a.padding, n, who, "padding")
    local cip = a.count_include_pad ~= false
    if n == 1 then return torch[who](a.input, k, s, p, a.ceil_mode and true or false, cip) end
    return torch[who](a.input, k, s, p, a.ceil_mode and true or false, cip, a.divisor_override)
  end)
end
avg_pool(1)
avg_pool(2)
avg_pool(3)

-- max_unpool2d(input, indices, kernel_size, stride=kernel_size, padding=0, output_size=nil):
-- output_size (its last n entries; it may hold N and C too) defaults to the size the pooling
-- came from, (in - 1) * stride - 2 * padding + kernel_size
local function max_unpool(n)
  local who = "max_unpool" .. n .. "d"
  def(who, "input, indices, kernel_size, stride=nil, padding=0, output_size=nil", function(a)
    check_tensor(a.input, who, "input"); check_tensor(a.indices, who, "indices")
    local k = ntuple(a.kernel_size, n, who, "kernel_size")
    local s = stride_arg(a.stride, k, n, who)
    local p = ntuple(a.padding, n, who, "padding")
    local d = a.input:dim()
    local out = {}
    if a.output_size ~= nil then
      local os = a.output_size
      if torch.is_tensor(os) then os = os:totable() end
      if type(os) ~= "table" or (#os ~= n and #os ~= n + 2) then
        error(("F.%s: argument 'output_size' must have %d (or %d) entries"):format(who, n, n + 2), 2)
      end
      for i = 1, n do out[i] = os[#os - n + i] end
    else
      for i = 1, n do out[i] = (a.input:size(d - n + i) - 1) * s[i] - 2 * p[i] + k[i] end
    end
    if n == 2 then return torch.max_unpool2d(a.input, a.indices, out) end
    return torch.max_unpool3d(a.input, a.indices, out, s, p)
  end)
end
max_unpool(2)
max_unpool(3)

-- fractional_max_pool2d(input, kernel_size, output_size=nil, output_ratio=nil, return_indices=false,
-- _random_samples=nil): exactly one of output_size and output_ratio; without samples, each
-- plane draws its own (torch.rand, in the input's dtype and device)
local function fractional_max_pool(n)
  local who = "fractional_max_pool" .. n .. "d"
  local function pool(a, indices)
    check_tensor(a.input, who, "input")
    local x = a.input
    if x:dim() ~= n + 1 and x:dim() ~= n + 2 then
      error(("F.%s: argument 'input' must be %d-D or %d-D, got %d-D"):format(who, n + 1, n + 2, x:dim()), 3)
    end
    local k = ntuple(a.kernel_size, n, who, "kernel_size")
    if (a.output_size == nil) == (a.output_ratio == nil) then
      error(("F.%s: exactly one of output_size and output_ratio must be given"):format(who), 3)
    end
    local out
    if a.output_size ~= nil then out = ntuple(a.output_size, n, who, "output_size")
    else
      local r = ntuple(a.output_ratio, n, who, "output_ratio")
      out = {}
      for i = 1, n do
        if type(r[i]) ~= "number" or not (r[i] > 0 and r[i] < 1) then
          error(("F.%s: argument 'output_ratio' must lie in (0, 1), got %s"):format(who, tostring(r[i])), 3)
        end
        out[i] = math.floor(x:size(x:dim() - n + i) * r[i])
      end
    end
    local samples = a._random_samples
    if samples == nil then
      local nb = x:dim() == n + 2 and x:size(1) or 1
      samples = torch.rand({ nb, x:size(x:dim() - n), n }, { dtype = x.dtype, device = x.device })
    end
    local v, i = torch[who](x, k, out, samples)
    if indices then return v, i end
    return v
  end
  def(who, "input, kernel_size, output_size=nil, output_ratio=nil, return_indices=false, _random_samples=nil",
    function(a) return pool(a, a.return_indices) end)
  def(who .. "_with_indices", "input, kernel_size, output_size=nil, output_ratio=nil, return_indices=false, _random_samples=nil",
    function(a) return pool(a, true) end)
end
fractional_max_pool(2)
fractional_max_pool(3)

local function out_size2(output_size, input, who)
  if type(output_size) == "number" then return { output_size, output_size } end
  if type(output_size) ~= "table" or #output_size ~= 2 then
    error(("F.%s: output_size must be a number or a list of 2 numbers"):format(who), 3)
  end
  -- nil (None) keeps the input's size: {nil, 4} can't be written in Lua, so false too
  local r = {}
  for i = 1, 2 do
    local v = output_size[i]
    if v == nil or v == false then v = input:size(input:dim() - 2 + i) end
    r[i] = v
  end
  return r
end

def("adaptive_avg_pool2d", op_params("adaptive_avg_pool2d"), function(a)
  check_tensor(a.input, "adaptive_avg_pool2d", "input")
  return torch.adaptive_avg_pool2d(a.input, out_size2(a.output_size, a.input, "adaptive_avg_pool2d"))
end)

local function adaptive_max_pool2d(a, who, indices)
  check_tensor(a.input, who, "input")
  local v, i = torch.adaptive_max_pool2d(a.input, out_size2(a.output_size, a.input, who))
  if indices then return v, i end
  return v
end
def("adaptive_max_pool2d", op_params("adaptive_max_pool2d", "return_indices=false"), function(a)
  return adaptive_max_pool2d(a, "adaptive_max_pool2d", a.return_indices)
end)
def("adaptive_max_pool2d_with_indices", op_params("adaptive_max_pool2d", "return_indices=false"), function(a)
  return adaptive_max_pool2d(a, "adaptive_max_pool2d_with_indices", true)
end)

-- pad(input, pad, mode="constant", value=0): pad lists (left, right, top, bottom, ...) from the last dim
def("pad", op_params("pad"), function(a)
  return torch.pad(a.input, a.pad, a.mode, a.value == nil and 0 or a.value)
end)

def("pixel_shuffle", op_params("pixel_shuffle"), function(a) return torch.pixel_shuffle(a.input, a.upscale_factor) end)
def("pixel_unshuffle", op_params("pixel_unshuffle"), function(a)
  return torch.pixel_unshuffle(a.input, a.downscale_factor)
end)

-- interpolate(input, size, scale_factor, mode="nearest", align_corners, recompute_scale_factor, antialias)
-- (a table in the place of size is the options unless it is a list of sizes)
local function interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor)
  local who = "interpolate"
  check_tensor(input, who, "input")
  local nd = input:dim() - 2
  if nd ~= 2 and nd ~= 3 then
    error(("F.interpolate: only 4-D input ([N, C, H, W]) and 5-D input ([N, C, D, H, W]) are supported, got %d-D"):format(input:dim()), 3)
  end
  if (size == nil) == (scale_factor == nil) then
    error("F.interpolate: exactly one of size and scale_factor must be given", 3)
  end
  if recompute_scale_factor and size ~= nil then
    error("F.interpolate: recompute_scale_factor is not meaningful with an explicit size", 3)
  end
  -- as PyTorch: a given scale factor also sets where outputs sample the input (1/scale
  -- source steps per output step), unless recompute_scale_factor asks for in/out instead
  local out, sc = nil, {}
  for i = 1, nd do sc[i] = 0.0 end
  if size ~= nil then out = ntuple(size, nd, who, "size")
  else
    local sf = ntuple(scale_factor, nd, who, "scale_factor")
    out = {}
    for i = 1, nd do
      if type(sf[i]) ~= "number" or not (sf[i] > 0) or sf[i] == math.huge then
        error(("F.interpolate: scale_factor must be positive and finite, got %s"):format(tostring(sf[i])), 3)
      end
      out[i] = math.floor(input:size(2 + i) * sf[i])
      if not recompute_scale_factor then sc[i] = sf[i] + 0.0 end
    end
  end
  local linear = nd == 2 and "bilinear" or "trilinear"
  if mode == "nearest" then
    if align_corners ~= nil then
      error("F.interpolate: align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear", 3)
    end
    if nd == 3 then return torch.upsample_nearest3d(input, out, sc[1], sc[2], sc[3]) end
    return torch.upsample_nearest2d(input, out, sc[1], sc[2])
  elseif mode == linear then
    if nd == 3 then return torch.upsample_trilinear3d(input, out, align_corners and true or false, sc[1], sc[2], sc[3]) end
    return torch.upsample_bilinear2d(input, out, align_corners and true or false, sc[1], sc[2])
  end
  error(("F.interpolate: mode \"%s\" is not supported for %d-D input (nearest, %s)"):format(tostring(mode),
    input:dim(), linear), 3)
end

def("interpolate", "input, size=nil, scale_factor=nil, mode='nearest', align_corners=nil, " ..
  "recompute_scale_factor=nil, antialias=false", function(a)
  if a.antialias then error("F.interpolate: antialias=true is not supported", 2) end
  return interpolate(a.input, a.size, a.scale_factor, a.mode or "nearest", a.align_corners, a.recompute_scale_factor)
end)
def("upsample", "input, size=nil, scale_factor=nil, mode='nearest', align_corners=nil", function(a)
  return interpolate(a.input, a.size, a.scale_factor, a.mode or "nearest", a.align_corners)
end)
def("upsample_nearest", "input, size=nil, scale_factor=nil", function(a)
  return interpolate(a.input, a.size, a.scale_factor, "nearest")
end)
def("upsample_bilinear", "input, size=nil, scale_factor=nil", function(a)
  return interpolate(a.input, a.size, a.scale_factor, "bilinear", true)
end)

------------------------------------------------------------------------------
-- normalisation
------------------------------------------------------------------------------
-- batch_norm(input, running_mean, running_var, weight, bias, training=false, momentum=0.1, eps=1e-5)
-- (PyTorch's order; the op takes weight and bias first). Training updates the running
-- statistics in place (with the unbiased variance), as PyTorch.
def("batch_norm", "input, running_mean, running_var, weight=nil, bias=nil, training=false, momentum=0.1, eps=1e-05",
function(a)
  if not a.training and (a.running_mean == nil or a.running_var == nil) then
    error("F.batch_norm: running_mean and running_var are required when not training", 2)
  end
  return torch.batch_norm(a.input, a.weight, a.bias, a.running_mean, a.running_var, a.training and true or false,
    a.momentum == nil and 0.1 or a.momentum, a.eps)
end)

def("layer_norm", op_params("layer_norm"), function(a)
  local ns = a.normalized_shape
  if type(ns) == "number" then ns = { ns } end
  return torch.layer_norm(a.input, ns, a.weight, a.bias, a.eps)
end)

def("group_norm", op_params("group_norm"), function(a)
  return torch.group_norm(a.input, a.num_groups, a.weight, a.bias, a.eps)
end)

------------------------------------------------------------------------------
-- losses, with PyTorch's parameters: F.loss(input, target, ..., {reduction=, ...}). The
-- deprecated size_average and reduce keep their places (and their meaning: given, they
-- decide the reduction, as in PyTorch), so positional calls port unchanged.
------------------------------------------------------------------------------
local REDUCTIONS = { mean = true, sum = true, none = true }

local function reduction_of(who, a)
  local sa, rd = a.size_average, a.reduce
  if sa ~= nil or rd ~= nil then
    for _, e in ipairs({ { sa, "size_average" }, { rd, "reduce" } }) do
      if e[1] ~= nil and type(e[1]) ~= "boolean" then
        error(("F.%s: argument '%s' must be a boolean or nil, got %s (the reduction is named: {reduction = \"sum\"})")
          :format(who, e[2], type(e[1])), 3)
      end
    end
    if rd == false then return "none" end
    return sa == false and "sum" or "mean"
  end
  local red = a.reduction
  if not REDUCTIONS[red] and not (red == "batchmean" and who == "kl_div") then
    error(("F.%s: reduction must be \"mean\", \"sum\" or \"none\", got \"%s\""):format(who, tostring(red)), 3)
  end
  return red
end

local function reduce(x, red)
  if red == "mean" then return x:mean() end
  if red == "sum" then return x:sum() end
  return x
end

local LEGACY = "size_average=nil, reduce=nil, reduction='mean'"

def("nll_loss", "input, target, weight=nil, size_average=nil, ignore_index=-100, reduce=nil, reduction='mean'",
function(a)
  return torch.nll_loss(a.input, a.target, a.weight, reduction_of("nll_loss", a), a.ignore_index)
end)

def("cross_entropy", "input, target, weight=nil, size_average=nil, ignore_index=-100, reduce=nil, " ..
  "reduction='mean', label_smoothing=0.0", function(a)
  return torch.cross_entropy(a.input, a.target, a.weight, reduction_of("cross_entropy", a), a.ignore_index,
    a.label_smoothing)
end)

def("mse_loss", "input, target, " .. LEGACY, function(a)
  return torch.mse_loss(a.input, a.target, reduction_of("mse_loss", a))
end)
def("l1_loss", "input, target, " .. LEGACY, function(a)
  return torch.l1_loss(a.input, a.target, reduction_of("l1_loss", a))
end)
def("smooth_l1_loss", "input, target, " .. LEGACY .. ", beta=1.0", function(a)
  return torch.smooth_l1_loss(a.input, a.target, reduction_of("smooth_l1_loss", a), a.beta)
end)
def("huber_loss", "input, target, reduction='mean', delta=1.0", function(a)
  return torch.huber_loss(a.input, a.target, reduction_of("huber_loss", a), a.delta)
end)

def("binary_cross_entropy", "input, target, weight=nil, " .. LEGACY, function(a)
  return torch.binary_cross_entropy(a.input, a.target, a.weight, reduction_of("binary_cross_entropy", a))
end)

def("binary_cross_entropy_with_logits", "input, target, weight=nil, " .. LEGACY .. ", pos_weight=nil", function(a)
  return torch.binary_cross_entropy_with_logits(a.input, a.target, a.weight, a.pos_weight,
    reduction_of("binary_cross_entropy_with_logits", a))
end)

def("kl_div", "input, target, " .. LEGACY .. ", log_target=false", function(a)
  return torch.kl_div(a.input, a.target, reduction_of("kl_div", a), a.log_target and true or false)
end)

def("soft_margin_loss", "input, target, " .. LEGACY, function(a)
  return reduce(torch.softplus(-a.target * a.input), reduction_of("soft_margin_loss", a))
end)

def("margin_ranking_loss", "input1, input2, target, margin=0, " .. LEGACY, function(a)
  local red = reduction_of("margin_ranking_loss", a)
  return reduce((-a.target * (a.input1 - a.input2) + a.margin):clamp_min(0), red)
end)

def("hinge_embedding_loss", "input, target, margin=1.0, " .. LEGACY, function(a)
  local red = reduction_of("hinge_embedding_loss", a)
  local input = a.input
  local l = torch.where(a.target:eq(1), input, (-input + a.margin):clamp_min(0))
  return reduce(l, red)
end)

def("cosine_embedding_loss", "input1, input2, target, margin=0, " .. LEGACY, function(a)
  local red = reduction_of("cosine_embedding_loss", a)
  local input1, input2 = a.input1, a.input2
  local eps = 1e-12
  local dot = (input1 * input2):sum(-1)
  local n1 = (input1 * input1):sum(-1) + eps
  local n2 = (input2 * input2):sum(-1) + eps
  local cos = dot / (n1 * n2):sqrt()
  local l = torch.where(a.target:eq(1), 1 - cos, (cos - a.margin):clamp_min(0))
  return reduce(l, red)
end)

def("triplet_margin_loss", "anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=false, " .. LEGACY,
function(a)
  local red = reduction_of("triplet_margin_loss", a)
  local p, eps = a.p, a.eps
  local dp = F.pairwise_distance(a.anchor, a.positive, p, eps)
  local dn = F.pairwise_distance(a.anchor, a.negative, p, eps)
  if a.swap then dn = torch.minimum(dn, F.pairwise_distance(a.positive, a.negative, p, eps)) end
  return reduce((dp - dn + a.margin):clamp_min(0), red)
end)

def("poisson_nll_loss", "input, target, log_input=true, full=false, size_average=nil, eps=1e-08, reduce=nil, " ..
  "reduction='mean'", function(a)
  local red = reduction_of("poisson_nll_loss", a)
  local input, target = a.input, a.target
  local l
  if a.log_input ~= false then l = input:exp() - target * input
  else l = input - target * (input + a.eps):log() end
  if a.full then
    local st = target * target:log() - target + (target * (2 * math.pi)):log() * 0.5
    l = l + torch.where(target:gt(1), st, torch.zeros_like(st))
  end
  return reduce(l, red)
end)

def("gaussian_nll_loss", "input, target, var, full=false, eps=1e-06, reduction='mean'", function(a)
  local red = reduction_of("gaussian_nll_loss", a)
  local var = a.var:clamp_min(a.eps)
  local l = (var:log() + (a.input - a.target):square() / var) * 0.5
  if a.full then l = l + 0.5 * math.log(2 * math.pi) end
  return reduce(l, red)
end)

return F
