-- More math: special functions, binary math ops, statistics, binning and search.
-- Kernels: src/cpu/math_special.c (elementwise, through lt_ew) and
-- src/composite/math.c (composites, scans, binning). Derivative helpers:
-- src/autograd/formulas_math.c. Indices returned (searchsorted, bucketize)
-- are 1-based like argmax and sort.
local ops = {
  -- elementwise, binary
  { "logaddexp(Tensor self, Tensor other) -> Tensor", out = true,
    doc = "log(exp(self) + exp(other)), computed without overflow; integer inputs give the default float dtype.",
    derivatives = { self = "lt_mm_grad_logaddexp(grad, self, result)", other = "lt_mm_grad_logaddexp(grad, other, result)" } },
  { "logaddexp2(Tensor self, Tensor other) -> Tensor", out = true,
    doc = "log2(2^self + 2^other), computed without overflow; integer inputs give the default float dtype.",
    derivatives = { self = "lt_mm_grad_logaddexp2(grad, self, result)", other = "lt_mm_grad_logaddexp2(grad, other, result)" } },
  { "xlogy(Tensor self, Tensor other) -> Tensor", out = true, inplace = true, alias = { "special.xlogy" },
    doc = "self * log(other), 0 where self is 0 (unless other is NaN); integer inputs give the default float dtype.",
    derivatives = { self = "lt_mm_grad_xlogy_self(grad, self, other)", other = "lt_mm_grad_xlogy_other(grad, self, other)" } },
  { "fmax(Tensor self, Tensor other) -> Tensor", out = true,
    doc = "Elementwise maximum ignoring NaN: NaN only where both are NaN.",
    derivatives = { self = "lt_mm_grad_fmax_self(grad, self, other)", other = "lt_mm_grad_fmax_other(grad, self, other)" } },
  { "fmin(Tensor self, Tensor other) -> Tensor", out = true,
    doc = "Elementwise minimum ignoring NaN: NaN only where both are NaN.",
    derivatives = { self = "lt_mm_grad_fmin_self(grad, self, other)", other = "lt_mm_grad_fmin_other(grad, self, other)" } },
  { "gcd(Tensor self, Tensor other) -> Tensor", out = true, inplace = true, nondiff = true,
    doc = "Greatest common divisor of integer tensors (non-negative; gcd(0, 0) = 0)." },
  { "lcm(Tensor self, Tensor other) -> Tensor", out = true, inplace = true, nondiff = true,
    doc = "Least common multiple of integer tensors (non-negative; 0 when either is 0)." },
  { "heaviside(Tensor self, Tensor values) -> Tensor", out = true, inplace = true,
    doc = "0 where self < 0, 1 where self > 0, values where self == 0 (self and values of one dtype); not differentiable." },
  { "nextafter(Tensor self, Tensor other) -> Tensor", out = true, inplace = true,
    doc = "The next floating point value after self toward other (float32, float64); not differentiable." },
  { "ldexp(Tensor self, Tensor other) -> Tensor", out = true, inplace = true, composite = "lt_ldexp_impl",
    doc = "self * 2^other; integer inputs give the default float dtype." },
  { "float_power(Tensor self, Tensor exponent) -> Tensor", out = true, inplace = true, composite = "lt_float_power_impl",
    doc = "pow computed in float64 (the result is float64; the in-place form needs a float64 self)." },

  -- elementwise, unary
  { "deg2rad(Tensor self) -> Tensor", out = true, inplace = true, composite = "lt_deg2rad_impl",
    doc = "Degrees to radians: self * pi / 180." },
  { "rad2deg(Tensor self) -> Tensor", out = true, inplace = true, composite = "lt_rad2deg_impl",
    doc = "Radians to degrees: self * 180 / pi." },
  { "sgn(Tensor self) -> Tensor", out = true, inplace = true, composite = "lt_sgn_impl",
    doc = "self / |self| (0 at 0); for real tensors the same as sign." },
  { "sinc(Tensor self) -> Tensor", out = true, inplace = true, alias = { "special.sinc" },
    doc = "Normalised sinc: sin(pi x) / (pi x), 1 at 0.",
    derivatives = { self = "lt_mm_grad_sinc(grad, self)" } },
  { "signbit(Tensor self) -> Tensor", out = true, nondiff = true,
    doc = "True where the sign bit is set (negative numbers and -0.0)." },
  { "isposinf(Tensor self) -> Tensor", out = true, nondiff = true, doc = "True where self is +infinity." },
  { "isneginf(Tensor self) -> Tensor", out = true, nondiff = true, doc = "True where self is -infinity." },
  { "lgamma(Tensor self) -> Tensor", out = true, inplace = true, alias = { "special.gammaln" },
    doc = "log|Gamma(self)|.",
    derivatives = { self = "lt_mm_grad_lgamma(grad, self)" } },
  { "digamma(Tensor self) -> Tensor", out = true, inplace = true, alias = { "special.digamma", "special.psi" },
    doc = "d/dx lgamma(x); -inf at 0, NaN at negative integers.",
    derivatives = { self = "lt_mm_grad_digamma(grad, self)" } },
  { "polygamma(int n, Tensor self) -> Tensor", out = true, variants = "function", alias = { "special.polygamma" },
    doc = "The n-th derivative of digamma (n >= 0).",
    derivatives = { self = "lt_mm_grad_polygamma(grad, n, self)" } },
  { "polygamma_m(Tensor self, int n) -> Tensor", lua = "polygamma", variants = "method", composite = "lt_polygamma_m_impl",
    doc = "x:polygamma(n): torch.polygamma(n, x)." },
  { "polygamma_m_(Tensor(a!) self, int n) -> Tensor(a!)", lua = "polygamma_", variants = "method",
    composite = "lt_polygamma_inplace_impl", doc = "In place: x = torch.polygamma(n, x)." },
  { "mvlgamma(Tensor self, int p) -> Tensor", out = true, inplace = true, composite = "lt_mvlgamma_impl",
    alias = { "special.multigammaln" },
    doc = "Multivariate log-gamma of dimension p (every element must be > (p - 1) / 2)." },
  { "i0(Tensor self) -> Tensor", out = true, inplace = true, alias = { "special.i0", "special.modified_bessel_i0" },
    doc = "Modified Bessel function of the first kind, order 0.",
    derivatives = { self = "lt_mm_grad_i0(grad, self)" } },
  { "_i1(Tensor self) -> Tensor", variants = "function", alias = { "special.i1", "special.modified_bessel_i1" },
    doc = "Modified Bessel function of the first kind, order 1 (torch.special.i1; the derivative of i0).",
    derivatives = { self = "lt_mm_grad_i1(grad, self, result)" } },
  { "isin(Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool invert=False) -> Tensor", kernels = { cpu = "lt_cpu_isin", cuda = "lt_cuda_isin" },
    nondiff = true, variants = "function",
    doc = "True where an element of elements is in test_elements (false for NaN), compared after type promotion; "
      .. "invert=true negates; assume_unique is accepted and ignored." },
}

-- composites on the C entry points of other ops: differentiable through them
local composites = {
  { "logcumsumexp(Tensor self, Dim dim) -> Tensor",
    kernels = { cpu = "lt_cpu_logcumsumexp", cuda = "lt_cuda_logcumsumexp" },
    doc = "log(cumsum(exp(self))) along dim, computed stably; floating point only.",
    derivatives = { self = "lt_mm_grad_logcumsumexp(grad, self, result, dim)" } },
  { "cov(Tensor self, *, int correction=1, Tensor? fweights=None, Tensor? aweights=None) -> Tensor",
    composite = "lt_cov_impl",
    doc = "Covariance matrix of the variables in the rows of self (observations in columns); "
      .. "fweights (integer counts) and aweights weight the observations." },
  { "cross(Tensor self, Tensor other, Dim? dim=None) -> Tensor", composite = "lt_cross_impl",
    doc = "Cross product of 3-vectors along dim (by default the first dim of size 3), broadcasting." },
  { "cdist(Tensor x1, Tensor x2, float p=2, str? compute_mode=None) -> Tensor", composite = "lt_cdist_impl",
    variants = "function",
    doc = "p-norm distances between the rows of x1 [B.., P, M] and x2 [B.., R, M]: [B.., P, R]; "
      .. "compute_mode is checked and ignored (distances are computed directly)." },
  { "pdist(Tensor self, float p=2) -> Tensor", composite = "lt_pdist_impl", variants = "function",
    doc = "p-norm distances between every pair of rows i < j of a 2-D self, in row-major order." },
  { "dist(Tensor self, Tensor other, Scalar p=2) -> Tensor", composite = "lt_dist_impl",
    t7 = { reduce = true },
    doc = "p-norm of self - other (broadcasting)." },
  { "renorm(Tensor self, Scalar p, Dim dim, Scalar maxnorm) -> Tensor", out = true, inplace = true,
    composite = "lt_renorm_impl",
    doc = "Scales each slice along dim whose p-norm exceeds maxnorm down to norm maxnorm." },
  { "quantile(Tensor self, Tensor q, Dim? dim=None, bool keepdim=False, *, str interpolation=\"linear\") -> Tensor",
    composite = "lt_quantile_impl",
    doc = "q-th quantiles (q a number or a 1-D tensor in [0, 1]) over dim (the flattened tensor when nil); "
      .. "interpolation \"linear\", \"lower\", \"higher\", \"midpoint\" or \"nearest\"; NaN in a slice gives NaN." },
  { "nanquantile(Tensor self, Tensor q, Dim? dim=None, bool keepdim=False, *, str interpolation=\"linear\") -> Tensor",
    composite = "lt_nanquantile_impl",
    doc = "quantile ignoring NaN (NaN only for slices of NaN only)." },
  { "msort(Tensor self) -> Tensor", composite = "lt_msort_impl",
    doc = "Sorted along the first dim (the values of sort(self, 1))." },
  { "trapezoid(Tensor y, Tensor x, *, Dim dim=-1) -> Tensor", composite = "lt_trapezoid_impl", variants = "function",
    alias = { "trapz" },
    doc = "Trapezoidal rule along dim with sample points x (1-D of the dim's size, or broadcastable to y)." },
  { "trapezoid_dx(Tensor y, *, Scalar dx=1, Dim dim=-1) -> Tensor", lua = "trapezoid", composite = "lt_trapezoid_dx_impl",
    variants = "function", alias = { "trapz" },
    doc = "Trapezoidal rule along dim with constant spacing dx." },
  { "tensordot(Tensor self, Tensor other, int dims=2) -> Tensor", composite = "lt_tensordot_impl", variants = "function",
    doc = "Contracts the last dims of self with the first dims of other; or, with two tables of dims, "
      .. "tensordot(a, b, dims_a, dims_b) contracts those dims pairwise (PyTorch's dims=(dims_a, dims_b))." },
  { "tensordot_dims(Tensor self, Tensor other, Dim[] dims_self, Dim[] dims_other) -> Tensor", lua = "tensordot",
    composite = "lt_tensordot_dims_impl", variants = "function",
    doc = "tensordot(a, b, dims_a, dims_b): contracts dims_a of a with dims_b of b." },

  -- binning and search (integer results)
  { "searchsorted(Tensor sorted_sequence, Tensor input, *, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None) -> Tensor", kernels = { cpu = "lt_cpu_searchsorted", cuda = "lt_cuda_searchsorted" },
    nondiff = true, variants = "function",
    doc = "1-based insertion positions of self's values in the innermost dim of sorted_sequence: "
      .. "the first position i with seq[i] >= v (> v with right=true or side=\"right\"), n + 1 past the end; "
      .. "sorter: the 1-based indices (argsort) that sort an unsorted sequence." },
  { "bucketize(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor", kernels = { cpu = "lt_cpu_bucketize", cuda = "lt_cuda_bucketize" },
    nondiff = true, variants = "function",
    doc = "1-based bucket of each value among the sorted 1-D boundaries: searchsorted(boundaries, self, {right = right})." },
  { "bincount(Tensor self, Tensor? weights=None, int minlength=0) -> Tensor", kernels = { cpu = "lt_cpu_bincount", cuda = "lt_cuda_bincount" }, nondiff = true,
    doc = "Counts of each value 0, 1, ... of a 1-D non-negative integer tensor: element k (1-based) holds "
      .. "the count (or weight sum) of value k - 1, as in PyTorch; length max(max + 1, minlength)." },
  { "histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor", kernels = { cpu = "lt_cpu_histc", cuda = "lt_cuda_histc" }, out = true, nondiff = true,
    doc = "Histogram of bins equal bins over [min, max] (the data's range when both are 0); "
      .. "elements outside are ignored (NaN counts in the first bin, as in PyTorch 1.13)." },
}
-- the elementwise ops with a CUDA kernel (src/cuda/unary.c, binary.c)
local cuda = { logaddexp = 1, logaddexp2 = 1, xlogy = 1, fmax = 1, fmin = 1, gcd = 1, lcm = 1, heaviside = 1,
               nextafter = 1, sinc = 1, signbit = 1, isposinf = 1, isneginf = 1, lgamma = 1, digamma = 1,
               polygamma = 1, i0 = 1, _i1 = 1 }
for _, d in ipairs(ops) do
  local name = d[1]:match("^([%w_]+)%(")
  if cuda[name] then d.kernels = { cpu = "lt_cpu_" .. name, cuda = "lt_cuda_" .. name } end
end
for _, d in ipairs(composites) do ops[#ops + 1] = d end
return ops
