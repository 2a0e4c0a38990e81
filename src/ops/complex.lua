-- complex.lua — the complex dtypes' ops (real, imag, view_as_real, ...) and,
-- in `complex_ops`, the ops declared in other files whose kernels take complex
-- tensors (tools/gen.lua: an op not listed here nor declared `complex = true`
-- refuses complex inputs in its entry point, naming itself; man/complex.md).
local ops = {
  { "real(Tensor(a) self) -> Tensor(a)", kernels = { any = "lt_core_real" }, complex = true,
    derivatives = { self = "lt_grad_real(grad, self_meta)" },
    doc = "The real parts of a complex tensor, as a view (strides doubled); a real tensor itself." },
  { "imag(Tensor(a) self) -> Tensor(a)", kernels = { any = "lt_core_imag" }, complex = true,
    derivatives = { self = "lt_grad_imag(grad)" },
    doc = "The imaginary parts of a complex tensor, as a view; an error for real tensors." },
  { "view_as_real(Tensor(a) self) -> Tensor(a)", kernels = { any = "lt_core_view_as_real" }, complex = true,
    variants = "function", derivatives = { self = "lt_grad_view_as_real(grad)" },
    doc = "A complex tensor seen as its real dtype with a trailing dim of 2 (re, im); a view." },
  { "view_as_complex(Tensor(a) self) -> Tensor(a)", kernels = { any = "lt_core_view_as_complex" }, complex = true,
    variants = "function", derivatives = { self = "lt_view_as_real(grad)" },
    doc = "A float32/float64 tensor whose last dim is 2 (stride 1) seen as complex64/complex128; a view." },
  { "conj_physical(Tensor self) -> Tensor", out = true, inplace = true, complex = true,
    derivatives = { self = "lt_conj_physical(grad)" },
    doc = "The complex conjugate, computed into new memory; a copy of a real tensor." },
  { "conj(Tensor self) -> Tensor", composite = "lt_conj_impl",
    doc = "The complex conjugate. Eager: a new tensor (conj_physical), not PyTorch's lazy conjugate bit; a real tensor itself." },
  { "resolve_conj(Tensor self) -> Tensor", composite = "lt_resolve_conj_impl",
    doc = "self: lutorch's conj is eager, so there is no conjugate bit to resolve." },
  { "is_conj(Tensor self) -> bool", composite = "lt_is_conj_impl", nondiff = true,
    doc = "false: conj is eager (man/complex.md)." },
  { "angle(Tensor self) -> Tensor", out = true, complex = true,
    derivatives = { self = "lt_grad_angle(grad, self)" },
    doc = "The argument atan2(imag, real) of each element, in the real dtype; for real tensors 0, or pi where negative." },
  { "polar(Tensor abs, Tensor angle) -> Tensor", out = true, variants = "function", complex = true,
    derivatives = { abs = "lt_grad_polar_abs(grad, angle)", angle = "lt_grad_polar_angle(grad, result)" },
    doc = "abs * (cos(angle) + i sin(angle)) from two float32 or two float64 tensors." },
  { "complex(Tensor real, Tensor imag) -> Tensor", out = true, variants = "function", complex = true,
    derivatives = { real = "lt_grad_real_part(grad)", imag = "lt_grad_imag_part(grad)" },
    doc = "real + i imag from two float32 or two float64 tensors (complex64, complex128)." },
  { "vdot(Tensor self, Tensor other) -> Tensor", composite = "lt_vdot_impl", variants = "function",
    doc = "sum(conj(self) * other) of two 1-D tensors: dot with the first conjugated (dot itself for real tensors)." },
  { "adjoint(Tensor self) -> Tensor", composite = "lt_adjoint_impl",
    doc = "The conjugate transpose of the last two dims (x.mH): transpose(-2, -1) and conj; a copy for complex (conj is eager), a view for real." },
  { "_sgn_complex(Tensor self) -> Tensor", variants = "function", complex = true,
    derivatives = { self = "lt_grad_sgn(grad, self, result)" },
    doc = "z / |z| (0 at 0) of a complex tensor: sgn's complex kernel." },
}

ops.complex_ops = {
    -- device-neutral kernels: geometry only, or the core's copy and fill
    "_to_copy", "_to_device", "clone", "copy_", "fill_", "zero_", "contiguous",
    "view", "squeeze", "unsqueeze", "transpose", "permute", "expand", "narrow", "select",
    "unfold", "diagonal", "_cat", "flip", "roll", "diag", "set_", "_set_data",
    -- creation: the fill takes any dtype's element
    "zeros", "ones", "empty", "full", "eye", "zeros_like", "ones_like", "empty_like", "full_like",
    "new_zeros", "new_ones", "new_empty", "new_full",
    -- random samples: the parts drawn independently (src/cpu/random.c)
    "rand", "randn", "rand_like", "randn_like",
    -- elementwise (src/cpu/ew_binary.c, ew_unary.c: the C99 complex loops)
    "add", "sub", "mul", "div", "neg", "pow", "reciprocal", "square", "abs", "eq", "ne",
    "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
    "sigmoid", "isnan", "isinf", "isfinite", "where", "log2", "log10", "isclose", "allclose", "equal",
    -- reductions (src/cpu/reduce.c), scans (red_scan.c: _Complex loops), var and std
    -- (red_stats.c: by parts, real results)
    "sum", "mean", "prod", "cumsum", "cumprod", "var", "std", "var_mean", "std_mean", "trace",
    "all", "any", "count_nonzero",
    -- products (src/cpu/la_gemm.c: BLAS's c and z routines)
    "mm", "bmm", "mv", "dot", "matmul", "addmm", "outer", "inner", "kron", "einsum_fast",
    -- indexing (src/cpu/index.c moves elements by width, complex128 as 16 bytes;
    -- the accumulating ones have complex loops)
    "index_select", "gather", "scatter", "scatter_value", "scatter_add", "index_add", "index_copy",
    "index_fill", "masked_fill", "masked_select", "masked_scatter", "nonzero", "take", "put",
    -- tril, triu (src/cpu/shape.c: zeroing by width)
    "tril", "triu",
  }

-- ops whose Scalar arguments may be complex values (torch.complex_number, or a
-- 1-element complex tensor): true, or the tensor arguments of which one must be
-- complex then (a complex value is never stored into a real tensor). Every
-- other op refuses a complex Scalar, naming the argument (tools/gen.lua).
ops.complex_scalar_ops = {
  fill_ = { "self" }, masked_fill = { "self" }, index_fill = { "self" }, scatter_value = { "self" },
  index_add = { "self" }, add = { "self", "other" }, sub = { "self", "other" }, full = true, full_like = true, new_full = true,
}

return ops
