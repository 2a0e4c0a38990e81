-- nn/functional.lua — nn.functional (also nn.F): the functional form of every layer,
-- thin wrappers over the torch.* ops (PyTorch's torch.nn.functional in Lua).
--
-- Arguments follow PyTorch's positional order; keyword arguments come in a trailing options
-- table: F.cross_entropy(x, y, {weight = w, label_smoothing = 0.1}), F.gelu(x, {approximate =
-- "tanh"}). Class targets, indices and dims are 1-based, as everywhere in lutorch.
-- Each function calls its torch op (torch.linear, torch.cross_entropy, ...) directly.
local torch = require "torch"
local check_options = require("torch_class").check_options

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

-- the options table at the end of an argument list (a plain table, not a tensor)
local function is_opts(v) return type(v) == "table" and not torch.is_tensor(v) end

-- v when it is an options table (checked: an unknown name is an error naming F.who), else nil
local function opts_of(who, v, allowed)
  if is_opts(v) then return check_options("F." .. who, v, allowed) end
  return nil
end

------------------------------------------------------------------------------
-- linear layers
------------------------------------------------------------------------------
function F.linear(input, weight, bias)
  check_tensor(input, "linear", "input"); check_tensor(weight, "linear", "weight")
  return torch.linear(input, weight, bias)
end

function F.bilinear(input1, input2, weight, bias)
  return torch.bilinear(input1, input2, weight, bias)
end

------------------------------------------------------------------------------
-- activations (inplace = true runs the in-place op; softsign, logsigmoid and tanhshrink
-- have none, as in PyTorch, and ignore the flag)
------------------------------------------------------------------------------
local INPLACE_OPTS = { "inplace" }
local function act1(name, has_inplace)
  local inplace_name = name .. "_"
  F[name] = function(x, inplace)
    local o = opts_of(name, inplace, INPLACE_OPTS)
    if o then inplace = o.inplace end
    if inplace and has_inplace then return torch[inplace_name](x) end
    return torch[name](x)
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

local HARDTANH_OPTS = { "min_val", "max_val", "inplace" }
function F.hardtanh(x, min_val, max_val, inplace)
  local o = opts_of("hardtanh", min_val, HARDTANH_OPTS)
  if o then min_val, max_val, inplace = o.min_val, o.max_val, o.inplace end
  min_val, max_val = min_val or -1, max_val or 1
  if inplace then return torch.hardtanh_(x, min_val, max_val) end
  return torch.hardtanh(x, min_val, max_val)
end

local LEAKY_RELU_OPTS = { "negative_slope", "inplace" }
function F.leaky_relu(x, negative_slope, inplace)
  local o = opts_of("leaky_relu", negative_slope, LEAKY_RELU_OPTS)
  if o then negative_slope, inplace = o.negative_slope, o.inplace end
  negative_slope = negative_slope or 0.01
  if inplace then return torch.leaky_relu_(x, negative_slope) end
  return torch.leaky_relu(x, negative_slope)
end

local ALPHA_OPTS = { "alpha", "inplace" }
function F.elu(x, alpha, inplace)
  local o = opts_of("elu", alpha, ALPHA_OPTS)
  if o then alpha, inplace = o.alpha, o.inplace end
  alpha = alpha or 1
  if inplace then return torch.elu_(x, alpha) end
  return torch.elu(x, alpha)
end

function F.celu(x, alpha, inplace)
  local o = opts_of("celu", alpha, ALPHA_OPTS)
  if o then alpha, inplace = o.alpha, o.inplace end
  alpha = alpha or 1
  if inplace then return torch.celu_(x, alpha) end
  return torch.celu(x, alpha)
end

-- gelu(x, "tanh") or gelu(x, {approximate = "tanh"})
local GELU_OPTS = { "approximate" }
function F.gelu(x, approximate)
  local o = opts_of("gelu", approximate, GELU_OPTS)
  if o then approximate = o.approximate end
  return torch.gelu(x, { approximate = approximate or "none" })
end

local SOFTPLUS_OPTS = { "beta", "threshold" }
function F.softplus(x, beta, threshold)
  local o = opts_of("softplus", beta, SOFTPLUS_OPTS)
  if o then beta, threshold = o.beta, o.threshold end
  return torch.softplus(x, beta or 1, threshold or 20)
end

function F.threshold(x, threshold, value, inplace)
  if inplace then return torch.threshold_(x, threshold, value) end
  return torch.threshold(x, threshold, value)
end

local LAMBD_OPTS = { "lambd" }
function F.hardshrink(x, lambd)
  local o = opts_of("hardshrink", lambd, LAMBD_OPTS)
  if o then lambd = o.lambd end
  return torch.hardshrink(x, lambd or 0.5)
end

function F.softshrink(x, lambd)
  local o = opts_of("softshrink", lambd, LAMBD_OPTS)
  if o then lambd = o.lambd end
  return torch.softshrink(x, lambd or 0.5)
end

function F.prelu(x, weight) return torch.prelu(x, weight) end

local RRELU_OPTS = { "lower", "upper", "training", "inplace" }
function F.rrelu(x, lower, upper, training, inplace)
  local o = opts_of("rrelu", lower, RRELU_OPTS)
  if o then lower, upper, training, inplace = o.lower, o.upper, o.training, o.inplace end
  lower, upper = lower or 1 / 8, upper or 1 / 3
  if inplace then return torch.rrelu_(x, lower, upper, training and true or false) end
  return torch.rrelu(x, lower, upper, training and true or false)
end

local GLU_OPTS = { "dim" }
function F.glu(x, dim)
  local o = opts_of("glu", dim, GLU_OPTS)
  if o then dim = o.dim end
  return torch.glu(x, dim or -1)
end

-- softmax(x, dim, dtype) / softmax(x, {dim=, dtype=}); dim is required (1-based)
local SOFTMAX_OPTS = { "dim", "dtype" }
local function softmax_args(who, x, dim, dtype)
  local o = opts_of(who, dim, SOFTMAX_OPTS)
  if o then dim, dtype = o.dim, o.dtype end
  if dim == nil then
    error(("F.%s: argument 'dim' is required (PyTorch's implicit dim choice is deprecated)"):format(who), 3)
  end
  return dim, dtype
end

function F.softmax(x, dim, dtype)
  dim, dtype = softmax_args("softmax", x, dim, dtype)
  return torch.softmax(x, dim, dtype)
end

function F.log_softmax(x, dim, dtype)
  dim, dtype = softmax_args("log_softmax", x, dim, dtype)
  return torch.log_softmax(x, dim, dtype)
end

function F.softmin(x, dim, dtype)
  dim, dtype = softmax_args("softmin", x, dim, dtype)
  return F.softmax(-x, dim, dtype)
end

-- normalize(x, p=2, dim=2, eps=1e-12): x / max(||x||_p, eps) along dim
local NORMALIZE_OPTS = { "p", "dim", "eps" }
function F.normalize(x, p, dim, eps)
  local o = opts_of("normalize", p, NORMALIZE_OPTS)
  if o then p, dim, eps = o.p, o.dim, o.eps end
  p, dim, eps = p or 2, dim or 2, eps or 1e-12
  local n = x:norm(p, dim, true):clamp_min(eps)
  return x / n:expand_as(x)
end

------------------------------------------------------------------------------
-- dropout
------------------------------------------------------------------------------
local DROPOUT_OPTS = { "p", "training", "inplace" }
local function dropout_args(who, p, training, inplace, allowed)
  local o = opts_of(who, p, allowed or DROPOUT_OPTS)
  if o then p, training, inplace = o.p, o.training, o.inplace end
  if p == nil then p = 0.5 end
  if training == nil then training = true end
  if type(p) ~= "number" or p < 0 or p > 1 then
    error(("F.%s: dropout probability has to be between 0 and 1, but got %s"):format(who, tostring(p)), 3)
  end
  return p, training, inplace
end

function F.dropout(x, p, training, inplace)
  p, training, inplace = dropout_args("dropout", p, training, inplace)
  if not training or p == 0 then return x end
  if inplace then return torch.dropout_(x, p, true) end
  return torch.dropout(x, p, true)
end

local function feature_dropout(who, mindim)
  return function(x, p, training, inplace)
    p, training, inplace = dropout_args(who, p, training, inplace)
    if x:dim() < mindim then
      error(("F.%s: expected an input with at least %d dimensions, got %d"):format(who, mindim, x:dim()), 2)
    end
    if not training or p == 0 then return x end
    if inplace then return torch.feature_dropout_(x, p, true) end
    return torch.feature_dropout(x, p, true)
  end
end
F.dropout1d = feature_dropout("dropout1d", 2)
F.dropout2d = feature_dropout("dropout2d", 3)
F.dropout3d = feature_dropout("dropout3d", 4)
F.feature_dropout = F.dropout2d

local ALPHA_DROPOUT_OPTS = { "p", "training" }
function F.alpha_dropout(x, p, training)
  p, training = dropout_args("alpha_dropout", p, training, nil, ALPHA_DROPOUT_OPTS)
  if not training or p == 0 then return x end
  local alpha = -1.7580993408473766
  local keep = torch.empty_like(x):bernoulli_(1 - p)
  local a = 1 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
  local b = -a * alpha * p
  return (x * keep + (1 - keep) * alpha) * a + b
end

------------------------------------------------------------------------------
-- embedding, one_hot, distances, attention
------------------------------------------------------------------------------
-- embedding(input, weight, padding_idx) (PyTorch's order; the op is torch.embedding(weight, input, padding_idx))
local EMBEDDING_OPTS = { "padding_idx", "max_norm", "norm_type" }
function F.embedding(input, weight, padding_idx, max_norm, norm_type)
  local o = opts_of("embedding", padding_idx, EMBEDDING_OPTS)
  if o then padding_idx, max_norm, norm_type = o.padding_idx, o.max_norm, o.norm_type end
  check_tensor(input, "embedding", "input"); check_tensor(weight, "embedding", "weight")
  if padding_idx ~= nil and padding_idx < 0 then padding_idx = weight:size(1) + padding_idx + 1 end
  if max_norm ~= nil then
    -- renormalise, in place and without history, the rows that are looked up
    torch.no_grad(function()
      local idx = input:reshape(-1)
      local rows = weight:index_select(1, idx)
      local n = rows:norm(norm_type or 2, 2, true)
      local scale = torch.where(n:gt(max_norm), n:add(1e-7):reciprocal():mul(max_norm), torch.ones_like(n))
      weight:index_copy_(1, idx, rows * scale)
    end)
  end
  return torch.embedding(weight, input, padding_idx)
end

function F.one_hot(t, num_classes)
  return torch.one_hot(t, num_classes or -1)
end

local COSINE_SIMILARITY_OPTS = { "dim", "eps" }
function F.cosine_similarity(x1, x2, dim, eps)
  local o = opts_of("cosine_similarity", dim, COSINE_SIMILARITY_OPTS)
  if o then dim, eps = o.dim, o.eps end
  return torch.cosine_similarity(x1, x2, dim or 2, eps or 1e-8)
end

local PAIRWISE_DISTANCE_OPTS = { "p", "eps", "keepdim" }
function F.pairwise_distance(x1, x2, p, eps, keepdim)
  local o = opts_of("pairwise_distance", p, PAIRWISE_DISTANCE_OPTS)
  if o then p, eps, keepdim = o.p, o.eps, o.keepdim end
  return torch.pairwise_distance(x1, x2, p or 2, eps or 1e-6, keepdim and true or false)
end

-- scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale) or (q, k, v, {..})
local SDPA_OPTS = { "attn_mask", "dropout_p", "is_causal", "scale" }
function F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale)
  local o = opts_of("scaled_dot_product_attention", attn_mask, SDPA_OPTS)
  if o then attn_mask, dropout_p, is_causal, scale = o.attn_mask, o.dropout_p, o.is_causal, o.scale end
  return torch.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p or 0, is_causal and true or false, scale)
end

------------------------------------------------------------------------------
-- convolution and pooling
------------------------------------------------------------------------------
-- (bias, stride, padding, dilation, groups), or an options table in place of bias or of stride
-- (a table there that is not a list of numbers)
local CONV_OPTS = { "bias", "stride", "padding", "dilation", "groups" }
local CONV_STRIDE_OPTS = { "stride", "padding", "dilation", "groups" }
local function conv_opts(who, bias, stride, padding, dilation, groups)
  if is_opts(bias) then
    local o = check_options("F." .. who, bias, CONV_OPTS)
    return o.bias, o.stride, o.padding, o.dilation, o.groups
  end
  if is_opts(stride) and not stride[1] then
    local o = check_options("F." .. who, stride, CONV_STRIDE_OPTS)
    return bias, o.stride, o.padding, o.dilation, o.groups
  end
  return bias, stride, padding, dilation, groups
end

local function padding_arg(padding, n, who)
  if type(padding) == "string" then
    if padding ~= "same" and padding ~= "valid" then
      error(("F.%s: padding must be \"valid\", \"same\", a number or a list, got \"%s\""):format(who, padding), 3)
    end
    return padding
  end
  return ntuple(padding or 0, n, who, "padding")
end

function F.conv1d(input, weight, bias, stride, padding, dilation, groups)
  bias, stride, padding, dilation, groups = conv_opts("conv1d", bias, stride, padding, dilation, groups)
  return torch.conv1d(input, weight, bias, ntuple(stride or 1, 1, "conv1d", "stride"),
    padding_arg(padding, 1, "conv1d"), ntuple(dilation or 1, 1, "conv1d", "dilation"), groups or 1)
end

function F.conv2d(input, weight, bias, stride, padding, dilation, groups)
  bias, stride, padding, dilation, groups = conv_opts("conv2d", bias, stride, padding, dilation, groups)
  return torch.conv2d(input, weight, bias, ntuple(stride or 1, 2, "conv2d", "stride"),
    padding_arg(padding, 2, "conv2d"), ntuple(dilation or 1, 2, "conv2d", "dilation"), groups or 1)
end

-- conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)
local CONV_TRANSPOSE_OPTS = { "bias", "stride", "padding", "output_padding", "groups", "dilation" }
local CONV_TRANSPOSE_STRIDE_OPTS = { "stride", "padding", "output_padding", "groups", "dilation" }
function F.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)
  local who = "conv_transpose2d"
  if is_opts(bias) then
    local o = check_options("F." .. who, bias, CONV_TRANSPOSE_OPTS)
    bias, stride, padding, output_padding, groups, dilation = o.bias, o.stride, o.padding, o.output_padding, o.groups, o.dilation
  elseif is_opts(stride) and not stride[1] then
    local o = check_options("F." .. who, stride, CONV_TRANSPOSE_STRIDE_OPTS)
    stride, padding, output_padding, groups, dilation = o.stride, o.padding, o.output_padding, o.groups, o.dilation
  end
  return torch.conv_transpose2d(input, weight, bias, ntuple(stride or 1, 2, who, "stride"), ntuple(padding or 0, 2, who, "padding"),
    ntuple(output_padding or 0, 2, who, "output_padding"), groups or 1, ntuple(dilation or 1, 2, who, "dilation"))
end

-- max_pool2d(input, kernel_size, stride=kernel_size, padding=0, dilation=1, ceil_mode=false, return_indices=false)
local MAX_POOL_OPTS = { "stride", "padding", "dilation", "ceil_mode", "return_indices" }
local function pool_opts(who, kernel_size, stride, padding, dilation, ceil_mode, return_indices)
  if is_opts(stride) and not stride[1] then
    local o = check_options("F." .. who, stride, MAX_POOL_OPTS)
    return kernel_size, o.stride, o.padding, o.dilation, o.ceil_mode, o.return_indices
  end
  return kernel_size, stride, padding, dilation, ceil_mode, return_indices
end

local function max_pool(n)
  local who = "max_pool" .. n .. "d"
  local with_indices = who .. "_with_indices"
  return function(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)
    kernel_size, stride, padding, dilation, ceil_mode, return_indices =
      pool_opts(who, kernel_size, stride, padding, dilation, ceil_mode, return_indices)
    local k = ntuple(kernel_size, n, who, "kernel_size")
    local s = (stride == nil or (type(stride) == "table" and #stride == 0)) and k or ntuple(stride, n, who, "stride")
    local p = ntuple(padding or 0, n, who, "padding")
    local d = ntuple(dilation or 1, n, who, "dilation")
    if return_indices then
      return torch[with_indices](input, k, s, p, d, ceil_mode and true or false)
    end
    return torch[who](input, k, s, p, d, ceil_mode and true or false)
  end
end
F.max_pool1d = max_pool(1)
F.max_pool2d = max_pool(2)
function F.max_pool1d_with_indices(input, k, s, p, d, c) return F.max_pool1d(input, k, s, p, d, c, true) end
function F.max_pool2d_with_indices(input, k, s, p, d, c) return F.max_pool2d(input, k, s, p, d, c, true) end

-- avg_pool2d(input, kernel_size, stride=kernel_size, padding=0, ceil_mode=false, count_include_pad=true, divisor_override=nil)
local AVG_POOL_OPTS = { "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override" }
local function avg_pool(n)
  local who = "avg_pool" .. n .. "d"
  return function(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    if is_opts(stride) and not stride[1] then
      local o = check_options("F." .. who, stride, AVG_POOL_OPTS)
      stride, padding, ceil_mode, count_include_pad, divisor_override =
        o.stride, o.padding, o.ceil_mode, o.count_include_pad, o.divisor_override
    end
    local k = ntuple(kernel_size, n, who, "kernel_size")
    local s = (stride == nil or (type(stride) == "table" and #stride == 0)) and k or ntuple(stride, n, who, "stride")
    local p = ntuple(padding or 0, n, who, "padding")
    if count_include_pad == nil then count_include_pad = true end
    if n == 1 then
      return torch[who](input, k, s, p, ceil_mode and true or false, count_include_pad)
    end
    return torch[who](input, k, s, p, ceil_mode and true or false, count_include_pad, divisor_override)
  end
end
F.avg_pool1d = avg_pool(1)
F.avg_pool2d = avg_pool(2)

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

function F.adaptive_avg_pool2d(input, output_size)
  return torch.adaptive_avg_pool2d(input, out_size2(output_size, input, "adaptive_avg_pool2d"))
end

local ADAPTIVE_MAX_POOL_OPTS = { "return_indices" }
function F.adaptive_max_pool2d(input, output_size, return_indices)
  local o = opts_of("adaptive_max_pool2d", return_indices, ADAPTIVE_MAX_POOL_OPTS)
  if o then return_indices = o.return_indices end
  local v, i = torch.adaptive_max_pool2d(input, out_size2(output_size, input, "adaptive_max_pool2d"))
  if return_indices then return v, i end
  return v
end
function F.adaptive_max_pool2d_with_indices(input, output_size) return F.adaptive_max_pool2d(input, output_size, true) end

-- pad(input, pad, mode="constant", value=0): pad lists (left, right, top, bottom, ...) from the last dim
local PAD_OPTS = { "mode", "value" }
function F.pad(input, pad, mode, value)
  local o = opts_of("pad", mode, PAD_OPTS)
  if o then mode, value = o.mode, o.value end
  return torch.pad(input, pad, mode or "constant", value or 0)
end

function F.pixel_shuffle(input, upscale_factor) return torch.pixel_shuffle(input, upscale_factor) end
function F.pixel_unshuffle(input, downscale_factor) return torch.pixel_unshuffle(input, downscale_factor) end

-- interpolate(input, size, scale_factor, mode="nearest", align_corners, recompute_scale_factor)
-- or interpolate(input, {size=, scale_factor=, mode=, align_corners=, recompute_scale_factor=})
-- (a table in place of size is the options unless it is a list of sizes)
local INTERPOLATE_OPTS = { "size", "scale_factor", "mode", "align_corners", "recompute_scale_factor" }
function F.interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor)
  if is_opts(size) and size[1] == nil then
    local o = check_options("F.interpolate", size, INTERPOLATE_OPTS)
    size, scale_factor, mode, align_corners, recompute_scale_factor =
      o.size, o.scale_factor, o.mode, o.align_corners, o.recompute_scale_factor
  end
  mode = mode or "nearest"
  local who = "interpolate"
  check_tensor(input, who, "input")
  if input:dim() ~= 4 then
    error(("F.interpolate: only 4-D input ([N, C, H, W]) is supported, got %d-D"):format(input:dim()), 2)
  end
  if (size == nil) == (scale_factor == nil) then
    error("F.interpolate: exactly one of size and scale_factor must be given", 2)
  end
  if recompute_scale_factor and size ~= nil then
    error("F.interpolate: recompute_scale_factor is not meaningful with an explicit size", 2)
  end
  -- as PyTorch: a given scale factor also sets where outputs sample the input (1/scale
  -- source steps per output step), unless recompute_scale_factor asks for in/out instead
  local out, sh, sw = nil, 0.0, 0.0
  if size ~= nil then out = ntuple(size, 2, who, "size")
  else
    local sf = ntuple(scale_factor, 2, who, "scale_factor")
    for i = 1, 2 do
      if type(sf[i]) ~= "number" or not (sf[i] > 0) or sf[i] == math.huge then
        error(("F.interpolate: scale_factor must be positive and finite, got %s"):format(tostring(sf[i])), 2)
      end
    end
    out = { math.floor(input:size(3) * sf[1]), math.floor(input:size(4) * sf[2]) }
    if not recompute_scale_factor then sh, sw = sf[1] + 0.0, sf[2] + 0.0 end
  end
  if mode == "nearest" then
    if align_corners ~= nil then
      error("F.interpolate: align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear", 2)
    end
    return torch.upsample_nearest2d(input, out, sh, sw)
  elseif mode == "bilinear" then
    return torch.upsample_bilinear2d(input, out, align_corners and true or false, sh, sw)
  end
  error(("F.interpolate: mode \"%s\" is not supported (nearest, bilinear)"):format(tostring(mode)), 2)
end
F.upsample = F.interpolate
function F.upsample_nearest(input, size, scale_factor) return F.interpolate(input, size, scale_factor, "nearest") end
function F.upsample_bilinear(input, size, scale_factor) return F.interpolate(input, size, scale_factor, "bilinear", true) end

------------------------------------------------------------------------------
-- normalisation
------------------------------------------------------------------------------
-- batch_norm(input, running_mean, running_var, weight, bias, training=false, momentum=0.1, eps=1e-5)
-- (PyTorch's order; the op takes weight and bias first). Training updates the running
-- statistics in place (with the unbiased variance), as PyTorch.
local BATCH_NORM_OPTS = { "weight", "bias", "training", "momentum", "eps" }
function F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
  if is_opts(weight) then
    local o = check_options("F.batch_norm", weight, BATCH_NORM_OPTS)
    weight, bias, training, momentum, eps = o.weight, o.bias, o.training, o.momentum, o.eps
  end
  if not training and (running_mean == nil or running_var == nil) then
    error("F.batch_norm: running_mean and running_var are required when not training", 2)
  end
  momentum, eps = momentum or 0.1, eps or 1e-5
  return torch.batch_norm(input, weight, bias, running_mean, running_var, training and true or false, momentum, eps)
end

local NORM_OPTS = { "weight", "bias", "eps" }
function F.layer_norm(input, normalized_shape, weight, bias, eps)
  if is_opts(weight) then
    local o = check_options("F.layer_norm", weight, NORM_OPTS)
    weight, bias, eps = o.weight, o.bias, o.eps
  end
  if type(normalized_shape) == "number" then normalized_shape = { normalized_shape } end
  return torch.layer_norm(input, normalized_shape, weight, bias, eps or 1e-5)
end

function F.group_norm(input, num_groups, weight, bias, eps)
  if is_opts(weight) then
    local o = check_options("F.group_norm", weight, NORM_OPTS)
    weight, bias, eps = o.weight, o.bias, o.eps
  end
  return torch.group_norm(input, num_groups, weight, bias, eps or 1e-5)
end

------------------------------------------------------------------------------
-- losses: F.loss(input, target, [weight,] {reduction=, ...})
------------------------------------------------------------------------------
local REDUCTIONS = { mean = true, sum = true, none = true }

-- the options of each loss: reduction and the loss's own
local LOSS_OPTS = {
  nll_loss = { "reduction", "weight", "ignore_index" },
  cross_entropy = { "reduction", "weight", "ignore_index", "label_smoothing" },
  mse_loss = { "reduction" }, l1_loss = { "reduction" },
  smooth_l1_loss = { "reduction", "beta" }, huber_loss = { "reduction", "delta" },
  binary_cross_entropy = { "reduction", "weight" },
  binary_cross_entropy_with_logits = { "reduction", "weight", "pos_weight" },
  kl_div = { "reduction", "log_target" },
  soft_margin_loss = { "reduction" },
  margin_ranking_loss = { "reduction", "margin" },
  hinge_embedding_loss = { "reduction", "margin" },
  cosine_embedding_loss = { "reduction", "margin" },
  triplet_margin_loss = { "reduction", "margin", "p", "eps", "swap" },
  poisson_nll_loss = { "reduction", "log_input", "full", "eps" },
  gaussian_nll_loss = { "reduction", "full", "eps" },
}

local function loss_opts(who, a, b)
  -- (weight, opts) or (opts)
  local weight, o
  if torch.is_tensor(a) then weight, o = a, b
  elseif is_opts(a) then o = a
  elseif a == nil then o = b
  else error(("F.%s: expected a weight tensor or an options table, got %s"):format(who, type(a)), 3) end
  o = check_options("F." .. who, o, LOSS_OPTS[who])
  local red = o.reduction or "mean"
  if not REDUCTIONS[red] and not (red == "batchmean" and who == "kl_div") then
    error(("F.%s: reduction must be \"mean\", \"sum\" or \"none\", got \"%s\""):format(who, tostring(red)), 3)
  end
  return weight or o.weight, o, red
end

local function reduce(x, red)
  if red == "mean" then return x:mean() end
  if red == "sum" then return x:sum() end
  return x
end

function F.nll_loss(input, target, weight, opts)
  local w, o, red = loss_opts("nll_loss", weight, opts)
  return torch.nll_loss(input, target, w, red, o.ignore_index or -100)
end

function F.cross_entropy(input, target, weight, opts)
  local w, o, red = loss_opts("cross_entropy", weight, opts)
  return torch.cross_entropy(input, target, w, red, o.ignore_index or -100, o.label_smoothing or 0)
end

-- mse_loss / l1_loss(input, target, {reduction=}); smooth_l1_loss {beta = 1}, huber_loss {delta = 1}
local function simple_loss(name, extra)
  F[name] = function(input, target, opts)
    local _, o, red = loss_opts(name, nil, opts)
    if extra then return torch[name](input, target, red, extra(o)) end
    return torch[name](input, target, red)
  end
end
simple_loss("mse_loss")
simple_loss("l1_loss")
simple_loss("smooth_l1_loss", function(o) return o.beta or 1.0 end)
simple_loss("huber_loss", function(o) return o.delta or 1.0 end)

function F.binary_cross_entropy(input, target, weight, opts)
  local w, _, red = loss_opts("binary_cross_entropy", weight, opts)
  return torch.binary_cross_entropy(input, target, w, red)
end

function F.binary_cross_entropy_with_logits(input, target, weight, opts)
  local w, o, red = loss_opts("binary_cross_entropy_with_logits", weight, opts)
  return torch.binary_cross_entropy_with_logits(input, target, w, o.pos_weight, red)
end

function F.kl_div(input, target, opts)
  local _, o, red = loss_opts("kl_div", nil, opts)
  return torch.kl_div(input, target, red, o.log_target and true or false)
end

function F.soft_margin_loss(input, target, opts)
  local _, _, red = loss_opts("soft_margin_loss", nil, opts)
  return reduce(torch.softplus(-target * input), red)
end

function F.margin_ranking_loss(input1, input2, target, opts)
  local _, o, red = loss_opts("margin_ranking_loss", nil, opts)
  return reduce((-target * (input1 - input2) + (o.margin or 0)):clamp_min(0), red)
end

function F.hinge_embedding_loss(input, target, opts)
  local _, o, red = loss_opts("hinge_embedding_loss", nil, opts)
  local margin = o.margin or 1
  local l = torch.where(target:eq(1), input, (-input + margin):clamp_min(0))
  return reduce(l, red)
end

function F.cosine_embedding_loss(input1, input2, target, opts)
  local _, o, red = loss_opts("cosine_embedding_loss", nil, opts)
  local margin = o.margin or 0
  local eps = 1e-12
  local dot = (input1 * input2):sum(-1)
  local n1 = (input1 * input1):sum(-1) + eps
  local n2 = (input2 * input2):sum(-1) + eps
  local cos = dot / (n1 * n2):sqrt()
  local l = torch.where(target:eq(1), 1 - cos, (cos - margin):clamp_min(0))
  return reduce(l, red)
end

function F.triplet_margin_loss(anchor, positive, negative, opts)
  local _, o, red = loss_opts("triplet_margin_loss", nil, opts)
  local margin, p, eps = o.margin or 1, o.p or 2, o.eps or 1e-6
  local dp = F.pairwise_distance(anchor, positive, p, eps)
  local dn = F.pairwise_distance(anchor, negative, p, eps)
  if o.swap then dn = torch.minimum(dn, F.pairwise_distance(positive, negative, p, eps)) end
  return reduce((dp - dn + margin):clamp_min(0), red)
end

function F.poisson_nll_loss(input, target, opts)
  local _, o, red = loss_opts("poisson_nll_loss", nil, opts)
  local log_input = o.log_input ~= false
  local eps = o.eps or 1e-8
  local l
  if log_input then l = input:exp() - target * input
  else l = input - target * (input + eps):log() end
  if o.full then
    local st = target * target:log() - target + (target * (2 * math.pi)):log() * 0.5
    l = l + torch.where(target:gt(1), st, torch.zeros_like(st))
  end
  return reduce(l, red)
end

function F.gaussian_nll_loss(input, target, var, opts)
  local _, o, red = loss_opts("gaussian_nll_loss", nil, opts)
  local eps = o.eps or 1e-6
  var = var:clamp_min(eps)
  local l = (var:log() + (input - target):square() / var) * 0.5
  if o.full then l = l + 0.5 * math.log(2 * math.pi) end
  return reduce(l, red)
end

return F
