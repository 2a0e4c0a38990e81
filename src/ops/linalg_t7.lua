-- The LAPACK calls Torch7's names need and PyTorch has no op for (kernels:
-- src/cpu/linalg_t7.c); src/vm/lua/t7lapack.lua gives them Torch7's call forms
-- (torch.pstrf, torch.eig) in Torch7 mode. One 2-D float32/float64 matrix each.
return {
  { "_pstrf(Tensor self, bool upper=True, float tol=-1) -> (Tensor factor, Tensor pivots)",
    variants = "function", nondiff = true,
    doc = "Cholesky with complete pivoting of a symmetric positive semi-definite matrix (LAPACK ?pstrf): " ..
          "P^T A P = U^T U (upper) or L L^T, with pivots (int32, 1-based) such that P[piv[k], k] = 1; " ..
          "tol < 0 means LAPACK's default. Past the rank, the factor is zero." },
  { "_eig_real(Tensor self, bool eigenvectors=False) -> (Tensor eigenvalues, Tensor vectors)",
    variants = "function", nondiff = true,
    doc = "Eigenvalues of a general real square matrix as an n x 2 tensor of (real, imaginary) rows, and, " ..
          "with eigenvectors=true, the right eigenvectors in LAPACK's real packing (a complex pair's " ..
          "vectors are columns j +- i column j+1); otherwise an empty 0x0 tensor (LAPACK ?geev)." },
}
