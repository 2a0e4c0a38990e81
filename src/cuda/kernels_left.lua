-- kernels_left.lua — the dispatched ops that have no CUDA kernel yet, each
-- group under the reason why. `make check-gen` runs
--   lua5.4 tools/gen.lua --check --left cuda=src/cuda/kernels_left.lua src/ops/*.lua
-- which prints them grouped by reason and fails when an op without a CUDA
-- kernel is not listed here, or a listed op has one: when you add a kernel
-- (`kernels = { cuda = "lt_cuda_..." }` in its declaration), remove it here.
-- Under the fake driver these ops run the CPU's kernel on the fake's host
-- memory; under a real driver they are the dispatcher's "not implemented for
-- cuda tensors" error naming the op.
return {
{ why = "not written yet (creation)",
  ops = {
    "zeros", "ones", "empty", "full", "arange", "range",
    "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like",
    "full_like", "new_zeros", "new_ones", "new_empty", "new_full", "rand",
    "randn", "randint", "randint_high", "randperm", "normal", "normal_",
    "rand_like", "randn_like", "randint_like", "randint_like_high", "bernoulli", "bernoulli_",
    "bernoulli_p", "bernoulli_tensor_", "uniform_", "exponential_", "random_", "multinomial",
  } },
{ why = "not written yet (elementwise)",
  ops = {
    "add", "add_", "sub", "sub_", "mul", "mul_",
    "div", "div_", "remainder", "remainder_", "pow", "pow_",
    "neg", "neg_", "floor_divide", "floor_divide_", "fmod", "fmod_",
    "atan2", "atan2_", "hypot", "hypot_", "maximum", "minimum",
    "lerp", "lerp_", "addcmul", "addcmul_", "addcdiv", "addcdiv_",
    "clamp", "clamp_", "clamp_min", "clamp_min_", "clamp_max", "clamp_max_",
    "where", "nan_to_num", "nan_to_num_", "round", "round_", "logit",
    "logit_", "eq", "eq_", "ne", "ne_", "lt",
    "lt_", "le", "le_", "gt", "gt_", "ge",
    "ge_", "isnan", "isinf", "isfinite", "logical_and", "logical_and_",
    "logical_or", "logical_or_", "logical_xor", "logical_xor_", "logical_not", "logical_not_",
    "bitwise_and", "bitwise_and_", "bitwise_or", "bitwise_or_", "bitwise_xor", "bitwise_xor_",
    "bitwise_not", "bitwise_not_", "bitwise_left_shift", "bitwise_left_shift_", "bitwise_right_shift", "bitwise_right_shift_",
    "equal", "isclose", "allclose", "relu", "relu_", "relu6",
    "relu6_", "hardtanh", "hardtanh_", "leaky_relu", "leaky_relu_", "elu",
    "elu_", "gelu", "gelu_", "silu", "silu_", "softplus",
    "abs", "abs_", "sign", "sign_", "square", "square_",
    "sqrt", "sqrt_", "rsqrt", "rsqrt_", "reciprocal", "reciprocal_",
    "exp", "exp_", "exp2", "exp2_", "expm1", "expm1_",
    "log", "log_", "log2", "log2_", "log10", "log10_",
    "log1p", "log1p_", "sin", "sin_", "cos", "cos_",
    "tan", "tan_", "asin", "asin_", "acos", "acos_",
    "atan", "atan_", "sinh", "sinh_", "cosh", "cosh_",
    "tanh", "tanh_", "sigmoid", "sigmoid_", "erf", "erf_",
    "erfc", "erfc_", "erfinv", "erfinv_", "floor", "floor_",
    "ceil", "ceil_", "trunc", "trunc_", "frac", "frac_",
  } },
{ why = "not written yet (index)",
  ops = {
    "index_select", "gather", "scatter", "scatter_", "scatter_value", "scatter_value_",
    "scatter_add", "scatter_add_", "index_add", "index_add_", "index_copy", "index_copy_",
    "index_fill", "index_fill_", "masked_fill", "masked_fill_", "masked_select", "masked_scatter",
    "masked_scatter_", "nonzero", "take", "put", "put_",
  } },
{ why = "not written yet (linalg)",
  ops = {
    "dot", "inner", "mv", "mm", "bmm", "matmul",
    "addmm", "addmm_", "addmv", "addmv_", "addbmm", "addbmm_",
    "baddbmm", "baddbmm_", "addr", "addr_", "outer", "einsum_fast",
    "trace", "kron",
  } },
{ why = "not written yet (math)",
  ops = {
    "logaddexp", "logaddexp2", "xlogy", "xlogy_", "fmax", "fmin",
    "gcd", "gcd_", "lcm", "lcm_", "heaviside", "heaviside_",
    "nextafter", "nextafter_", "sinc", "sinc_", "signbit", "isposinf",
    "isneginf", "lgamma", "lgamma_", "digamma", "digamma_", "polygamma",
    "i0", "i0_", "_i1", "isin", "logcumsumexp", "searchsorted",
    "bucketize", "bincount", "histc",
  } },
{ why = "not written yet (nn_conv)",
  ops = {
    "conv2d", "conv_transpose2d", "conv2d_backward_input", "conv2d_backward_weight", "max_pool2d_with_indices", "max_pool2d_backward",
    "adaptive_max_pool2d", "avg_pool2d", "avg_pool2d_backward", "adaptive_avg_pool2d", "adaptive_avg_pool2d_backward", "pad",
    "pad_backward", "upsample_nearest2d", "upsample_nearest2d_backward", "upsample_bilinear2d", "upsample_bilinear2d_backward",
  } },
{ why = "not written yet (nn_loss)",
  ops = {
    "nll_loss_forward", "nll_loss_backward",
  } },
{ why = "not written yet (nn_misc)",
  ops = {
    "_linear", "native_dropout", "_dropout_mask", "embedding", "_embedding_backward", "one_hot",
    "mish", "mish_", "hardsigmoid", "hardsigmoid_", "hardswish", "hardswish_",
    "softsign", "logsigmoid", "tanhshrink", "selu", "selu_", "celu",
    "celu_", "threshold", "threshold_", "hardshrink", "softshrink", "prelu",
    "_activation_backward",
  } },
{ why = "not written yet (nn_norm)",
  ops = {
    "softmax", "log_softmax", "softmax_backward", "log_softmax_backward", "native_batch_norm", "batch_norm_backward",
    "batch_norm_backward_weight", "batch_norm_backward_bias", "native_layer_norm", "layer_norm_backward", "layer_norm_backward_weight",
  } },
{ why = "not written yet (optim)",
  ops = {
    "_foreach_mul_", "_foreach_add_", "_foreach_zero_", "_foreach_norm", "_fused_sgd_", "_fused_adam_",
    "_fused_adamax_", "_fused_nadam_", "_fused_radam_", "_fused_rmsprop_", "_fused_adagrad_", "_fused_adadelta_",
  } },
{ why = "not written yet (reduce)",
  ops = {
    "sum", "nansum", "mean", "nanmean", "prod", "max_dim",
    "max", "min_dim", "min", "amax", "amin", "argmax",
    "argmin", "all", "any", "count_nonzero", "var", "std",
    "var_mean", "std_mean", "norm", "norm_str", "logsumexp", "cumsum",
    "cumprod", "cummax", "cummin",
  } },
{ why = "not written yet (shape)",
  ops = {
    "contiguous", "_cat", "flip", "roll", "tril", "tril_",
    "triu", "triu_", "diag",
  } },
{ why = "not written yet (sort)",
  ops = {
    "sort", "argsort", "topk", "kthvalue", "median_dim", "median",
    "nanmedian_dim", "nanmedian", "mode", "unique",
  } },
}
