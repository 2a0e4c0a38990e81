-- autocast.lua — which ops torch.autocast casts, and to what, per device type
-- (tools/gen_autocast.lua reads `autocast` from here; man/amp.md lists the same).
--
-- The lists are PyTorch's (aten/src/ATen/autocast_mode.cpp of PyTorch 2.x): the
-- AutocastCPU table for "cpu" and the AutocastCUDA one for "cuda", written with
-- lutorch's op names (conv2d_padstr is conv2d with padding="same"/"valid",
-- einsum_N the einsum of N operands). Ops PyTorch lists that lutorch does not
-- have are left out. Policies:
--   lower     floating arguments (float32/float16/bfloat16, not float64) become
--             the autocast dtype: the matmul, linear and convolution family
--   fp32      floating arguments become float32: losses, norms, the
--             transcendental functions (CUDA), linear algebra and FFT (CPU)
--   fp32_dtype  the op runs with dtype=float32 unless a dtype is given (the
--             reductions and softmax with a dtype argument: CUDA)
--   promote   floating arguments become the widest among them (float32 when
--             any is float32, else the autocast dtype)
--   banned    an error: binary_cross_entropy on CUDA (use the _with_logits form)
--   keep      no casts, and none inside: the op runs below Autocast as written
-- PyTorch's lists name aten ops; where PyTorch writes an op as a composite of a
-- listed one (einsum, inner, tensordot and multi_dot through mm/bmm) it is cast
-- through that one, so lutorch, whose op has a kernel of its own, lists the op
-- itself (marked "decomposed" below); where lutorch
-- writes as a composite what PyTorch runs as one unlisted kernel (bilinear, which
-- is _trilinear there), `keep` stops the composite's matmuls from being cast.
-- Every other op runs on its arguments as they are. `functional` lists the
-- nn.functional losses that lutorch writes in Lua (lib/nn/functional.lua):
-- they get the fp32 policy there, as the aten ops behind them have in PyTorch.
-- Only out-of-place ops are listed: in-place and out= forms are never cast.
local ops = {}

ops.autocast = {
  cpu = {
    lower = {
      "conv1d", "conv1d_padstr", "conv2d", "conv2d_padstr", "conv_transpose2d",
      "bmm", "mm", "baddbmm", "addmm", "addbmm", "linear", "matmul", "prelu",
      "scaled_dot_product_attention",
      -- decomposed: through mm/bmm in PyTorch
      "einsum", "einsum_1", "einsum_2", "einsum_3", "einsum_4", "inner", "tensordot",
      "tensordot_dims", "linalg_multi_dot",
    },
    keep = { "bilinear" },
    fp32 = {
      "binary_cross_entropy", "polar", "prod", "quantile", "nanquantile", "stft", "cdist",
      "trace", "view_as_complex",
      "cholesky", "cholesky_inverse", "cholesky_solve", "inverse", "lu_solve", "orgqr",
      "ormqr", "pinverse", "geqrf", "lu", "qr", "svd", "triangular_solve",
      "mse_loss", "nll_loss", "smooth_l1_loss", "cross_entropy", "l1_loss", "huber_loss",
      "kl_div", "binary_cross_entropy_with_logits",
      "fft_fft", "fft_ifft", "fft_fft2", "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft",
      "fft_irfft", "fft_rfft2", "fft_irfft2", "fft_rfftn", "fft_irfftn", "fft_hfft", "fft_ihfft",
      "linalg_cond", "linalg_cond_str", "linalg_matrix_rank", "linalg_solve", "linalg_cholesky",
      "linalg_cholesky_ex", "linalg_svdvals", "linalg_eigvals", "linalg_eigvalsh", "linalg_inv",
      "linalg_inv_ex", "linalg_householder_product", "linalg_qr", "linalg_svd", "linalg_eig",
      "linalg_eigh", "linalg_lstsq",
    },
    promote = { "stack", "cat", "index_copy" },
    functional = {
      fp32 = {
        "cosine_embedding_loss", "hinge_embedding_loss", "poisson_nll_loss", "margin_ranking_loss",
        "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss", "multilabel_margin_loss",
        "ctc_loss",
      },
    },
  },
  cuda = {
    lower = {
      "conv1d", "conv1d_padstr", "conv2d", "conv2d_padstr", "conv_transpose2d", "prelu",
      "addmm", "addmv", "addr", "matmul", "einsum", "einsum_1", "einsum_2", "einsum_3", "einsum_4",
      "mm", "mv", "linear", "addbmm", "baddbmm", "bmm", "linalg_multi_dot",
      "scaled_dot_product_attention",
    },
    fp32 = {
      "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
      "reciprocal", "rsqrt", "sinh", "tan", "pow", "softplus", "layer_norm", "native_layer_norm",
      "group_norm", "cosine_similarity", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss",
      "mse_loss", "nll_loss", "binary_cross_entropy_with_logits", "dist", "pdist", "cdist",
      "renorm", "logsumexp", "upsample_nearest2d", "upsample_bilinear2d",
    },
    fp32_dtype = {
      "prod", "softmax", "log_softmax", "cumprod", "cumsum", "linalg_vector_norm",
      "linalg_matrix_norm", "linalg_matrix_norm_str", "sum", "norm",
    },
    promote = {
      "addcdiv", "addcmul", "atan2", "bilinear", "cross", "linalg_cross", "dot", "tensordot",
      "tensordot_dims", "scatter_add",
    },
    banned = { "binary_cross_entropy" },
    functional = {
      fp32 = {
        "poisson_nll_loss", "cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss",
        "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
      },
    },
  },
}

return ops
