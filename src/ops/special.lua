-- special.lua — the functions of torch.special that have no top-level torch
-- name (erfcx, ndtr, zeta, the Bessel functions, ...). The ones PyTorch also
-- has at top level (erf, lgamma as gammaln, sigmoid as expit, i0, ...) are
-- aliases in their own declarations (elementwise.lua, math.lua, nn_norm.lua,
-- reduce.lua). Each computes in double whatever the dtype, by the scalar code
-- of src/meta/special_math.h, which the CPU's loops (src/cpu/math_special.c)
-- and the CUDA kernels (src/cuda/special.c over kernels/special.cu) share.
-- Integer and bool inputs give the default float dtype. No in-place forms, as
-- in PyTorch, except igamma_ and igammac_ (torch.igamma, torch.igammac, the
-- top-level names of special.gammainc and gammaincc). Derivative helpers:
-- src/autograd/formulas_special.c. Reference: man/special.md.
local unary = {
  { "erfcx", "Scaled complementary error function e^(x^2) erfc(x); +inf below about -26.6.",
    "lt_sp_grad_erfcx(grad, self, result)" },
  { "i0e", "Exponentially scaled modified Bessel function of the first kind, order 0: e^-|x| i0(x).",
    "lt_sp_grad_i0e(grad, self, result)" },
  { "i1e", "Exponentially scaled modified Bessel function of the first kind, order 1: e^-|x| i1(x).",
    "lt_sp_grad_i1e(grad, self, result)" },
  { "ndtr", "Standard normal distribution function: the area under the Gaussian density from -inf to x.",
    "lt_sp_grad_ndtr(grad, self)" },
  { "ndtri", "Inverse of ndtr: the x with ndtr(x) = p, for p in [0, 1] (-inf at 0, +inf at 1, NaN outside).",
    "lt_sp_grad_ndtri(grad, result)" },
  { "log_ndtr", "log(ndtr(x)), finite (about -x^2/2) where ndtr underflows.",
    "lt_sp_grad_log_ndtr(grad, self, result)" },
  { "entr", "Elementwise entropy term: -x log(x) for x > 0, 0 at 0, -inf for x < 0.",
    "lt_sp_grad_entr(grad, self)" },
  { "bessel_j0", "Bessel function of the first kind, order 0.", "lt_sp_grad_bessel_j0(grad, self)" },
  { "bessel_j1", "Bessel function of the first kind, order 1.", "lt_sp_grad_bessel_j1(grad, self, result)" },
  { "bessel_y0", "Bessel function of the second kind, order 0 (-inf at 0, NaN for x < 0).",
    "lt_sp_grad_bessel_y0(grad, self)" },
  { "bessel_y1", "Bessel function of the second kind, order 1 (-inf at 0, NaN for x < 0).",
    "lt_sp_grad_bessel_y1(grad, self, result)" },
  { "modified_bessel_k0", "Modified Bessel function of the second kind, order 0 (+inf at 0, NaN for x < 0).",
    "lt_sp_grad_bessel_k0(grad, self)" },
  { "modified_bessel_k1", "Modified Bessel function of the second kind, order 1 (+inf at 0, NaN for x < 0).",
    "lt_sp_grad_bessel_k1(grad, self, result)" },
  { "scaled_modified_bessel_k0", "Exponentially scaled modified Bessel function of the second kind, order 0: e^x k0(x).",
    "lt_sp_grad_bessel_k0e(grad, self, result)" },
  { "scaled_modified_bessel_k1", "Exponentially scaled modified Bessel function of the second kind, order 1: e^x k1(x).",
    "lt_sp_grad_bessel_k1e(grad, self, result)" },
}

local ops = {}
for _, u in ipairs(unary) do
  ops[#ops + 1] = { "special_" .. u[1] .. "(Tensor self) -> Tensor", lua = "special." .. u[1], out = true, variants = "function",
                    doc = u[2], derivatives = { self = u[3] } }
end

ops[#ops + 1] = { "special_xlog1py(Tensor self, Tensor other) -> Tensor", lua = "special.xlog1py", out = true, variants = "function",
  doc = "self * log1p(other), 0 where self is 0 (unless other is NaN); broadcasting.",
  derivatives = { self = "lt_sp_grad_xlog1py_self(grad, self, other)",
                  other = "lt_sp_grad_xlog1py_other(grad, self, other)" } }
ops[#ops + 1] = { "special_zeta(Tensor self, Tensor other) -> Tensor", lua = "special.zeta", out = true, variants = "function",
  doc = "Hurwitz zeta function: the sum over k >= 0 of (other + k)^-self, broadcasting; self > 1 "
    .. "(+inf at 1, NaN below), a non-positive integer other is a pole (+inf). Differentiable in other only, as in PyTorch.",
  derivatives = { self = "lt_sp_grad_zeta_self(grad)", other = "lt_sp_grad_zeta_other(grad, self, other)" } }

ops[#ops + 1] = { "igamma(Tensor self, Tensor other) -> Tensor", out = true, inplace = true,
  alias = { "special.gammainc" },
  doc = "Regularized lower incomplete gamma function P(self, other), self and other >= 0 (NaN otherwise), "
    .. "broadcasting. Differentiable in other only, as in PyTorch.",
  derivatives = { self = "lt_sp_grad_igamma_self(grad)", other = "lt_sp_grad_igamma_other(grad, self, other)" } }
ops[#ops + 1] = { "igammac(Tensor self, Tensor other) -> Tensor", out = true, inplace = true,
  alias = { "special.gammaincc" },
  doc = "Regularized upper incomplete gamma function Q(self, other) = 1 - P(self, other), broadcasting. "
    .. "Differentiable in other only, as in PyTorch.",
  derivatives = { self = "lt_sp_grad_igamma_self(grad)", other = "lt_sp_grad_igammac_other(grad, self, other)" } }

-- every op here has a CUDA kernel (src/cuda/special.c)
for _, d in ipairs(ops) do
  local name = d[1]:match("^([%w_]+)%(")
  d.kernels = { cpu = "lt_cpu_" .. name, cuda = "lt_cuda_" .. name }
end
return ops
