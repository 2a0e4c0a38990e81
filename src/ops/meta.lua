-- meta.lua — the meta device's kernels (src/metadev), beside the declarations.
--
-- On meta an op runs its shape function only. `meta_rules` puts ops in the
-- families whose shape function is one C function of src/metadev/metadev.h;
-- tools/gen_meta.lua writes each op's meta kernel, with the op's kernel type,
-- calling it. `meta_kernels` names the hand-written ones (src/metadev/
-- kernels.c, nn.c). An op in neither has no meta kernel: it raises "OP: not
-- implemented for meta tensors" (tests/lua/test_meta.lua lists them). The
-- in-place form of an op with `out = true` follows it.
return {
  meta_rules = {
    -- the broadcast of the tensor arguments, in their promoted dtype
    pointwise_promote = {
      "add", "sub", "mul", "remainder", "pow", "neg", "floor_divide", "fmod", "maximum", "minimum", "lerp",
      "addcmul", "clamp", "clamp_min", "clamp_max", "nan_to_num", "round", "relu", "relu6", "hardtanh",
      "leaky_relu", "abs", "sign", "square", "floor", "ceil", "trunc", "frac", "bitwise_and", "bitwise_or",
      "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "gcd", "lcm", "heaviside",
      "fmax", "fmin", "nextafter", "threshold", "hardshrink", "softshrink", "prelu",
    },
    -- the same, integers and bool made the default float dtype
    pointwise_float = {
      "div", "atan2", "hypot", "addcdiv", "sqrt", "rsqrt", "reciprocal", "exp", "exp2", "expm1", "log", "log2",
      "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "erf",
      "asinh", "acosh", "atanh",
      "erfc", "erfinv", "logit", "elu", "gelu", "silu", "softplus", "logaddexp", "logaddexp2", "xlogy", "sinc",
      "lgamma", "digamma", "polygamma", "i0", "_i1", "igamma", "igammac", "mish", "hardsigmoid", "hardswish",
      "softsign", "logsigmoid", "tanhshrink", "selu", "celu",
      "special_erfcx", "special_i0e", "special_i1e", "special_ndtr", "special_ndtri", "special_log_ndtr",
      "special_entr", "special_bessel_j0", "special_bessel_j1", "special_bessel_y0", "special_bessel_y1",
      "special_modified_bessel_k0", "special_modified_bessel_k1", "special_scaled_modified_bessel_k0",
      "special_scaled_modified_bessel_k1", "special_xlog1py", "special_zeta",
    },
    -- bool results: comparisons and tests
    pointwise_bool = {
      "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite", "logical_and", "logical_or",
      "logical_xor", "logical_not", "isclose", "signbit", "isposinf", "isneginf",
    },
    -- self's shape and dtype
    like = {
      "tril", "triu", "masked_fill", "index_fill", "index_add", "index_copy", "scatter", "scatter_value",
      "scatter_add", "masked_scatter", "put", "_activation_backward", "logcumsumexp", "bernoulli", "bernoulli_p",
    },
    -- self's dtype, laid out as the CPU's elementwise kernels lay out their result (after self's strides)
    pointwise_self = { "_sgn_complex" },
    -- the tensor written, as it is (a random fill has nothing to compute)
    returns_self = { "bernoulli_", "bernoulli_tensor_", "uniform_", "normal_", "exponential_", "random_" },
    -- in-place updates of tensor lists with no result (foreach ops, fused optimizer steps): nothing to write
    updates = {
      "_foreach_mul_", "_foreach_add_", "_foreach_zero_", "_fused_sgd_", "_fused_adam_", "_fused_adamax_",
      "_fused_nadam_", "_fused_radam_", "_fused_rmsprop_", "_fused_adagrad_", "_fused_adadelta_",
    },
    reduce_sum = { "sum", "nansum", "prod" },
    reduce_mean = { "mean", "nanmean" },
    reduce_self = { "amax", "amin", "max", "min", "median", "nanmedian" },
    reduce_index = { "argmax", "argmin", "count_nonzero" },
    reduce_bool = { "all", "any" },
    reduce_float = { "var", "std", "norm", "norm_str", "logsumexp" },
    reduce_values_indices = { "max_dim", "min_dim", "median_dim", "nanmedian_dim", "mode", "kthvalue" },
    reduce_float_pair = { "var_mean", "std_mean" },
    scan_values_indices = { "cummax", "cummin", "sort" },
    factory = { "zeros", "ones", "empty", "full", "rand", "randn", "normal" },
    factory_int = { "randint", "randint_high" },
    factory_like = {
      "zeros_like", "ones_like", "empty_like", "full_like", "new_zeros", "new_ones", "new_empty", "new_full",
      "rand_like", "randn_like", "randint_like", "randint_like_high",
    },
  },
  meta_kernels = {
    dot = "lt_metadev_dot", inner = "lt_metadev_inner", mv = "lt_metadev_mv", mm = "lt_metadev_mm",
    bmm = "lt_metadev_bmm", matmul = "lt_metadev_matmul", outer = "lt_metadev_outer", kron = "lt_metadev_kron",
    addmm = "lt_metadev_addmm", addmv = "lt_metadev_addmv", addbmm = "lt_metadev_addbmm",
    baddbmm = "lt_metadev_baddbmm", addr = "lt_metadev_addr", einsum_fast = "lt_metadev_einsum",
    trace = "lt_metadev_trace",
    arange = "lt_metadev_arange", range = "lt_metadev_range", linspace = "lt_metadev_linspace",
    logspace = "lt_metadev_logspace", eye = "lt_metadev_eye", randperm = "lt_metadev_randperm",
    multinomial = "lt_metadev_multinomial",
    where = "lt_metadev_where", softmax = "lt_metadev_softmax", log_softmax = "lt_metadev_log_softmax",
    softmax_backward = "lt_metadev_softmax_backward", log_softmax_backward = "lt_metadev_log_softmax_backward",
    index_select = "lt_metadev_index_select", gather = "lt_metadev_gather", embedding = "lt_metadev_embedding",
    histc = "lt_metadev_histc", one_hot = "lt_metadev_one_hot", _linear = "lt_metadev__linear",
    conv2d = "lt_metadev_conv2d", conv2d_backward_input = "lt_metadev_conv2d_backward_input",
    conv2d_backward_weight = "lt_metadev_conv2d_backward_weight",
    max_pool2d_with_indices = "lt_metadev_max_pool2d_with_indices", adaptive_max_pool2d = "lt_metadev_adaptive_max_pool2d",
    avg_pool2d = "lt_metadev_avg_pool2d", adaptive_avg_pool2d = "lt_metadev_adaptive_avg_pool2d",
    native_layer_norm = "lt_metadev_native_layer_norm", nll_loss_forward = "lt_metadev_nll_loss_forward",
    nll_loss_backward = "lt_metadev_nll_loss_backward",
    native_dropout = "lt_metadev_native_dropout", _dropout_mask = "lt_metadev__dropout_mask",
    cumsum = "lt_metadev_cumsum", cumprod = "lt_metadev_cumprod", argsort = "lt_metadev_argsort", topk = "lt_metadev_topk",
    conv_transpose2d = "lt_metadev_conv_transpose2d", max_pool2d_backward = "lt_metadev_max_pool2d_backward",
    avg_pool2d_backward = "lt_metadev_avg_pool2d_backward",
    adaptive_avg_pool2d_backward = "lt_metadev_adaptive_avg_pool2d_backward", pad = "lt_metadev_pad",
    pad_backward = "lt_metadev_pad_backward", upsample_nearest2d = "lt_metadev_upsample_nearest2d",
    upsample_bilinear2d = "lt_metadev_upsample_bilinear2d",
    upsample_nearest2d_backward = "lt_metadev_upsample_nearest2d_backward",
    upsample_bilinear2d_backward = "lt_metadev_upsample_bilinear2d_backward",
    native_batch_norm = "lt_metadev_native_batch_norm", batch_norm_backward = "lt_metadev_batch_norm_backward",
    batch_norm_backward_weight = "lt_metadev_batch_norm_backward_weight",
    batch_norm_backward_bias = "lt_metadev_batch_norm_backward_bias",
    layer_norm_backward = "lt_metadev_layer_norm_backward",
    layer_norm_backward_weight = "lt_metadev_layer_norm_backward_weight",
    _embedding_backward = "lt_metadev__embedding_backward", _foreach_norm = "lt_metadev__foreach_norm",
    searchsorted = "lt_metadev_searchsorted", bucketize = "lt_metadev_bucketize", take = "lt_metadev_take",
    isin = "lt_metadev_isin", conj_physical = "lt_metadev_conj_physical",
    -- the LAPACK-backed linear algebra (src/metadev/linalg.c): results laid out as the CPU's column-major blocks
    linalg_solve_ex = "lt_metadev_linalg_solve_ex", linalg_lu_factor_ex = "lt_metadev_linalg_lu_factor_ex",
    linalg_lu_solve = "lt_metadev_linalg_lu_solve", linalg_cholesky_ex = "lt_metadev_linalg_cholesky_ex",
    linalg_solve_triangular = "lt_metadev_linalg_solve_triangular", linalg_det = "lt_metadev_linalg_det",
    _linalg_slogdet = "lt_metadev__linalg_slogdet", _lu_permutation = "lt_metadev__lu_permutation",
    linalg_lstsq = "lt_metadev_linalg_lstsq", geqrf = "lt_metadev_geqrf",
    _linalg_householder_product = "lt_metadev_linalg_householder_product", _ormqr = "lt_metadev_ormqr",
    linalg_qr = "lt_metadev_linalg_qr", _linalg_eigh = "lt_metadev__linalg_eigh", _linalg_eig = "lt_metadev__linalg_eig",
    _linalg_svd = "lt_metadev__linalg_svd", _linalg_spectral_trsolve = "lt_metadev__linalg_spectral_trsolve",
    _pstrf = "lt_metadev__pstrf", _eig_real = "lt_metadev__eig_real",
    -- the FFT primitives and the complex constructors (src/metadev/fft.c)
    _fft_c2c = "lt_metadev__fft_c2c", _fft_r2c = "lt_metadev__fft_r2c", _fft_c2r = "lt_metadev__fft_c2r",
    _fft_halfweight = "lt_metadev__fft_halfweight", angle = "lt_metadev_angle", complex = "lt_metadev_complex",
    polar = "lt_metadev_polar",
    -- the result's shape or value is the data's: PyTorch's meta refuses them too
    nonzero = "lt_metadev_nonzero", masked_select = "lt_metadev_masked_select", unique = "lt_metadev_unique",
    bincount = "lt_metadev_bincount", equal = "lt_metadev_equal", allclose = "lt_metadev_allclose",
  },
}
