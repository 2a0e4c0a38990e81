-- Linear algebra, the spectral part: QR, symmetric eigendecomposition, SVD and what is
-- built on them (pinv, matrix_rank, the matrix and vector norms, cond), through LAPACK.
-- float32, float64, complex64 and complex128 inputs, batched over leading dims (the
-- eigenvalues of eigh and the singular values are real for complex inputs; eig's results
-- are complex for real ones). Kernels: src/cpu/linalg_spectral*.c;
-- checks: src/meta/linalg_spectral.c; composites: src/composite/linalg_spectral.c;
-- derivative helpers: src/autograd/formulas_linalg_spectral.c. The LAPACK kernels return
-- their matrices column-major (transposed views), as PyTorch does.
local F = "function"
local NORM_TAIL = "Dim[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"

local ops = {
  -- ---- QR ----
  { "geqrf(Tensor self) -> (Tensor a, Tensor tau)", kernels = { cpu = "lt_cpu_geqrf" }, complex = true,
    doc = "LAPACK's geqrf: QR as Householder reflectors below the diagonal of a and their scales tau, R on and above it (for householder_product and ormqr). Not differentiable." },
  { "_linalg_householder_product(Tensor A, Tensor tau) -> Tensor", variants = F,
    kernels = { cpu = "lt_cpu_linalg_householder_product" }, complex = true,
    doc = "householder_product's kernel (LAPACK orgqr), not differentiable. Use torch.linalg.householder_product." },
  { "linalg_householder_product(Tensor A, Tensor tau) -> Tensor", lua = "linalg.householder_product",
    composite = "lt_composite_linalg_householder_product",
    doc = "The first n columns of the product of the Householder reflectors (A[:, i], tau[i]) of an (m x n) A, m >= n >= #tau (LAPACK's orgqr, ungqr for complex); differentiable (the product is rebuilt with differentiable ops when a gradient is needed)." },
  { "orgqr(Tensor self, Tensor input2) -> Tensor", composite = "lt_composite_orgqr",
    doc = "torch.linalg.householder_product under its old name." },
  { "_ormqr(Tensor self, Tensor input2, Tensor input3, bool left=True, bool transpose=False) -> Tensor",
    variants = F, kernels = { cpu = "lt_cpu_ormqr" }, complex = true,
    doc = "ormqr's kernel (LAPACK ormqr), not differentiable. Use torch.ormqr." },
  { "ormqr(Tensor self, Tensor input2, Tensor input3, bool left=True, bool transpose=False) -> Tensor",
    composite = "lt_composite_ormqr",
    doc = "input3 multiplied by Q, the product of geqrf's reflectors (self, tau = input2): Q C, Q^T C, C Q or C Q^T (left, transpose; Q^H for complex, as PyTorch); differentiable (through Q formed with differentiable ops when a gradient is needed)." },
  { "linalg_qr(Tensor A, str mode=\"reduced\") -> (Tensor Q, Tensor R)", lua = "linalg.qr",
    kernels = { cpu = "lt_cpu_linalg_qr" }, complex = true,
    derivatives = { A = "lt_grad_linalg_qr(grad_Q, grad_R, Q, R, mode)" },
    doc = "QR decomposition A = Q R (Q orthonormal or unitary columns, R upper triangular): mode \"reduced\" (Q m x k, R k x n, k = min(m, n)), \"complete\" (Q m x m, R m x n) or \"r\" (R only, Q empty). Differentiable except for mode \"r\" and \"complete\" with m > n." },
  { "qr(Tensor self, bool some=True) -> (Tensor Q, Tensor R)", composite = "lt_composite_qr",
    doc = "The old torch.qr: linalg.qr with mode \"reduced\" (some = true) or \"complete\"." },
  -- ---- symmetric eigendecomposition ----
  { "_linalg_eigh(Tensor A, str UPLO=\"L\", bool compute_v=True) -> (Tensor eigenvalues, Tensor eigenvectors)",
    variants = F, kernels = { cpu = "lt_cpu__linalg_eigh" }, complex = true,
    derivatives = { A = "lt_grad_linalg_eigh(grad_eigenvalues, grad_eigenvectors, eigenvalues, eigenvectors)" },
    doc = "eigh's kernel (LAPACK syevd, heevd for complex; real eigenvalues); compute_v = false leaves the vectors empty. Use torch.linalg.eigh." },
  { "linalg_eigh(Tensor A, str UPLO=\"L\") -> (Tensor eigenvalues, Tensor eigenvectors)", lua = "linalg.eigh",
    composite = "lt_composite_linalg_eigh",
    doc = "Eigenvalues (ascending, real) and orthonormal eigenvectors (columns) of symmetric or Hermitian matrices, reading the lower (UPLO = \"L\") or upper triangle. Gradients are unstable near repeated eigenvalues and undefined at them; for complex A a loss must not depend on the vectors' phases." },
  { "linalg_eigvalsh(Tensor A, str UPLO=\"L\") -> Tensor", lua = "linalg.eigvalsh",
    composite = "lt_composite_linalg_eigvalsh",
    doc = "The eigenvalues of symmetric matrices, ascending (vectors are computed only when a gradient needs them)." },
  { "symeig(Tensor self, bool eigenvectors=False, bool upper=True) -> (Tensor values, Tensor vectors)",
    composite = "lt_composite_symeig",
    doc = "PyTorch 1.13's deprecated torch.symeig (Torch7 had it): linalg.eigh reading the upper (upper = true) or lower triangle; without eigenvectors the second result is empty." },
  { "_linalg_eig(Tensor A, bool compute_v=True) -> (Tensor eigenvalues, Tensor eigenvectors)",
    variants = F, kernels = { cpu = "lt_cpu__linalg_eig" }, complex = true,
    derivatives = { A = "lt_grad_linalg_eig(grad_eigenvalues, grad_eigenvectors, eigenvalues, eigenvectors)" },
    doc = "eig's kernel (LAPACK geev); compute_v = false leaves the vectors empty. Use torch.linalg.eig." },
  { "linalg_eig(Tensor A) -> (Tensor eigenvalues, Tensor eigenvectors)", lua = "linalg.eig",
    composite = "lt_composite_linalg_eig",
    doc = "Eigenvalues and right eigenvectors (columns, each of unit norm) of general square matrices, complex64/complex128 whatever the input (float32 gives complex64), in LAPACK's order: A V = V diag(L). The vectors are defined up to a complex phase, so a loss must not depend on it (a gradient that does is an error); gradients are undefined at repeated eigenvalues." },
  { "linalg_eigvals(Tensor A) -> Tensor", lua = "linalg.eigvals", composite = "lt_composite_linalg_eigvals",
    doc = "The eigenvalues of general square matrices, complex, as linalg.eig gives them (vectors are computed only when a gradient needs them)." },
  -- ---- SVD ----
  { "_linalg_svd(Tensor A, bool full_matrices=False, bool compute_uv=True) -> (Tensor U, Tensor S, Tensor Vh)",
    variants = F, kernels = { cpu = "lt_cpu__linalg_svd" }, complex = true,
    derivatives = { A = "lt_grad_linalg_svd(grad_U, grad_S, grad_Vh, U, S, Vh, full_matrices)" },
    doc = "svd's kernel (LAPACK gesdd; S real for complex A); compute_uv = false leaves U and Vh empty. Use torch.linalg.svd." },
  { "linalg_svd(Tensor A, bool full_matrices=True) -> (Tensor U, Tensor S, Tensor Vh)", lua = "linalg.svd",
    composite = "lt_composite_linalg_svd",
    doc = "Singular value decomposition A = U diag(S) Vh, S real and descending; full_matrices = false gives the reduced U (m x k) and Vh (k x n). Gradients are unstable near repeated singular values and undefined at them; with full_matrices the extra columns get no gradient; for complex A a loss must not depend on the vectors' phases." },
  { "linalg_svdvals(Tensor A) -> Tensor", lua = "linalg.svdvals", composite = "lt_composite_linalg_svdvals",
    doc = "The singular values, descending (vectors are computed only when a gradient needs them)." },
  { "svd(Tensor self, bool some=True, bool compute_uv=True) -> (Tensor U, Tensor S, Tensor V)",
    composite = "lt_composite_svd",
    doc = "The old torch.svd: U, S and V = Vh^H (not Vh), reduced when some; compute_uv = false gives zero U (m x m) and V (n x n)." },
  -- ---- built on them ----
  { "linalg_pinv(Tensor A, Scalar? rcond=None, bool hermitian=False, *, Scalar? atol=None, Scalar? rtol=None) -> Tensor",
    lua = "linalg.pinv", composite = "lt_composite_linalg_pinv",
    doc = "Moore-Penrose pseudo-inverse through the SVD (eigh when hermitian): singular values at most max(atol, rtol * largest) count as zero; rtol defaults to eps * max(m, n) when atol is absent or 0, else 0; rcond (PyTorch 1.13) is rtol." },
  { "pinverse(Tensor self, Scalar rcond=1e-15) -> Tensor", composite = "lt_composite_pinverse",
    doc = "linalg.pinv with rtol = rcond." },
  { "linalg_matrix_rank(Tensor A, Scalar? tol=None, bool hermitian=False, *, Scalar? atol=None, Scalar? rtol=None) -> Tensor",
    lua = "linalg.matrix_rank", composite = "lt_composite_linalg_matrix_rank",
    doc = "The number of singular values (eigenvalue magnitudes when hermitian) above max(atol, rtol * largest), int64; tol (PyTorch 1.13) is atol with rtol 0; rtol defaults as in pinv." },
  { "linalg_matrix_norm_str(Tensor A, str ord=\"fro\", " .. NORM_TAIL, lua = "linalg.matrix_norm",
    composite = "lt_composite_linalg_matrix_norm_str",
    doc = "Matrix norm over the two dims in dim (default the last two): \"fro\" or \"nuc\"." },
  { "linalg_matrix_norm(Tensor A, Scalar ord, " .. NORM_TAIL, lua = "linalg.matrix_norm",
    composite = "lt_composite_linalg_matrix_norm",
    doc = "Matrix norm with a numeric ord: 1, -1 (max/min column sum), math.huge, -math.huge (row sums), 2, -2 (largest/smallest singular value)." },
  { "linalg_vector_norm(Tensor x, Scalar ord=2, " .. NORM_TAIL, lua = "linalg.vector_norm",
    composite = "lt_composite_linalg_vector_norm",
    doc = "Vector ord-norm over dim (all elements when absent): any real ord, 0 (the count of non-zeros), math.huge, -math.huge; dtype converts x first." },
  { "linalg_norm(Tensor A, Scalar? ord=None, " .. NORM_TAIL, lua = "linalg.norm",
    composite = "lt_composite_linalg_norm",
    doc = "vector_norm or matrix_norm as PyTorch chooses: a 2-D dim, or no dim and a 2-D A with ord given, is a matrix norm; no ord and no dim is the 2-norm of all elements." },
  { "linalg_norm_str(Tensor A, str ord, " .. NORM_TAIL, lua = "linalg.norm",
    composite = "lt_composite_linalg_norm_str",
    doc = "linalg.norm with ord \"fro\" or \"nuc\": a matrix norm." },
  { "linalg_cond(Tensor A, Scalar? p=None) -> Tensor", lua = "linalg.cond", composite = "lt_composite_linalg_cond",
    doc = "Condition number: for p = nil, 2, -2 the ratio of extreme singular values (any shape); for 1, -1, math.huge, -math.huge the norm of A times that of its inverse (square A; a singular A gives inf)." },
  { "linalg_cond_str(Tensor A, str p) -> Tensor", lua = "linalg.cond", composite = "lt_composite_linalg_cond_str",
    doc = "linalg.cond with p \"fro\" or \"nuc\" (square A)." },
  -- the triangular solve the QR derivative needs (A X = B, A triangular); the general
  -- solvers live in linalg.lua
  { "_linalg_spectral_trsolve(Tensor A, Tensor B, bool upper) -> Tensor", variants = F,
    kernels = { cpu = "lt_cpu__linalg_spectral_trsolve" }, complex = true,
    derivatives = { A = "lt_grad_spectral_trsolve_A(grad, A, result, upper)",
                    B = "lt_grad_spectral_trsolve_B(grad, A, upper)" },
    doc = "X with A X = B for triangular A (upper or lower), batched over equal leading dims (LAPACK trtrs); used by the QR derivative." },
}

return ops
