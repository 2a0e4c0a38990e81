-- Linear algebra: products through OpenBLAS (src/cpu/linalg.c, la_gemm.c, la_einsum.c).
-- Matrix products need operands of one dtype, as in PyTorch; outer, addr and kron promote.
-- Derivative helpers: src/autograd/formulas_linalg.c.
local AB = "*, Scalar beta=1, Scalar alpha=1"

-- torch.einsum("ij,jk->ik", a, b): overloads that gather the operands into the table form
local function einsum_n(n)
  local args, doc = {}, "einsum with the operands as separate arguments (the table form is torch.einsum(eq, {a, b}))."
  for i = 1, n do args[i] = "Tensor t" .. i end
  return { ("einsum_%d(str equation, %s) -> Tensor"):format(n, table.concat(args, ", ")),
           lua = "einsum", variants = "function", composite = "lt_la_einsum_" .. n, doc = doc }
end

return {
  { "dot(Tensor self, Tensor tensor) -> Tensor", kernels = { cpu = "lt_cpu_dot", cuda = "lt_cuda_dot" }, out = true, alias = { "vdot" },
    t7 = { reduce = true },
    derivatives = { self = "lt_grad_mul_conj(grad, tensor)", tensor = "lt_grad_mul_conj(grad, self)" },
    doc = "Dot product of two 1-D tensors of the same size and dtype; a 0-d result." },
  { "inner(Tensor self, Tensor other) -> Tensor", kernels = { cpu = "lt_cpu_inner", cuda = "lt_cuda_inner" }, out = true,
    derivatives = { self = "lt_grad_inner_self(grad, other, self_meta)",
                    other = "lt_grad_inner_other(grad, self, other_meta)" },
    doc = "Sum of products over the last dim of both: shape self.shape[:-1] + other.shape[:-1]." },
  { "mv(Tensor self, Tensor vec) -> Tensor", kernels = { cpu = "lt_cpu_mv", cuda = "lt_cuda_mv" }, out = true,
    t7 = { method = "result" },
    derivatives = { self = "lt_grad_mv_mat(grad, vec, LT_GRAD_ONE)", vec = "lt_grad_mv_vec(grad, self, LT_GRAD_ONE)" },
    doc = "Matrix (n x m) times vector (m): a vector (n)." },
  { "mm(Tensor self, Tensor mat2) -> Tensor", kernels = { cpu = "lt_cpu_mm", cuda = "lt_cuda_mm" }, out = true,
    t7 = { method = "result" },
    derivatives = { self = "lt_grad_mm_mat1(grad, mat2, LT_GRAD_ONE)", mat2 = "lt_grad_mm_mat2(grad, self, LT_GRAD_ONE)" },
    doc = "Matrix product of two 2-D tensors (n x m) @ (m x p)." },
  { "bmm(Tensor self, Tensor mat2) -> Tensor", kernels = { cpu = "lt_cpu_bmm", cuda = "lt_cuda_bmm" }, out = true,
    t7 = { method = "result" },
    derivatives = { self = "lt_grad_bmm_batch1(grad, mat2, LT_GRAD_ONE)", mat2 = "lt_grad_bmm_batch2(grad, self, LT_GRAD_ONE)" },
    doc = "Batched matrix product: (b x n x m) @ (b x m x p) -> (b x n x p)." },
  { "matmul(Tensor self, Tensor other) -> Tensor", kernels = { cpu = "lt_cpu_matmul", cuda = "lt_cuda_matmul" }, out = true,
    derivatives = { self = "lt_grad_matmul_self(grad, other, self_meta)",
                    other = "lt_grad_matmul_other(grad, self, other_meta)" },
    doc = "Matrix product with PyTorch's rules: 1-D.1-D dot, matrix-vector, vector-matrix, and batched N-D products that broadcast the batch dims." },
  -- Torch7's forms: a tensor first is self (x:addmv(0, 1, M, v) is x = 0 x + 1 M v), so the
  -- form that starts with self comes before the one that starts with beta, which would take a
  -- one-element x for beta
  { "addmm(Tensor self, Tensor mat1, Tensor mat2, " .. AB .. ") -> Tensor", kernels = { cpu = "lt_cpu_addmm", cuda = "lt_cuda_addmm" }, out = true, inplace = true,
    t7 = { forms = { "addmm(Tensor self, Scalar alpha, Tensor mat1, Tensor mat2)", "addmm(Tensor self, Scalar beta, Scalar alpha, Tensor mat1, Tensor mat2)", "addmm(Scalar beta, Tensor self, Scalar alpha, Tensor mat1, Tensor mat2)" } },
    derivatives = { self = "lt_grad_scale(grad, beta)", mat1 = "lt_grad_mm_mat1(grad, mat2, alpha)",
                    mat2 = "lt_grad_mm_mat2(grad, mat1, alpha)" },
    doc = "beta * self + alpha * (mat1 @ mat2); self broadcasts to the result." },
  { "addmv(Tensor self, Tensor mat, Tensor vec, " .. AB .. ") -> Tensor", kernels = { cpu = "lt_cpu_addmv", cuda = "lt_cuda_addmv" }, out = true, inplace = true,
    t7 = { forms = { "addmv(Tensor self, Scalar alpha, Tensor mat, Tensor vec)", "addmv(Tensor self, Scalar beta, Scalar alpha, Tensor mat, Tensor vec)", "addmv(Scalar beta, Tensor self, Scalar alpha, Tensor mat, Tensor vec)" } },
    derivatives = { self = "lt_grad_scale(grad, beta)", mat = "lt_grad_mv_mat(grad, vec, alpha)",
                    vec = "lt_grad_mv_vec(grad, mat, alpha)" },
    doc = "beta * self + alpha * (mat @ vec)." },
  { "addbmm(Tensor self, Tensor batch1, Tensor batch2, " .. AB .. ") -> Tensor", kernels = { cpu = "lt_cpu_addbmm", cuda = "lt_cuda_addbmm" }, out = true, inplace = true,
    t7 = { forms = { "addbmm(Tensor self, Scalar alpha, Tensor batch1, Tensor batch2)", "addbmm(Tensor self, Scalar beta, Scalar alpha, Tensor batch1, Tensor batch2)", "addbmm(Scalar beta, Tensor self, Scalar alpha, Tensor batch1, Tensor batch2)" } },
    derivatives = { self = "lt_grad_scale(grad, beta)", batch1 = "lt_grad_addbmm_batch1(grad, batch2, alpha)",
                    batch2 = "lt_grad_addbmm_batch2(grad, batch1, alpha)" },
    doc = "beta * self + alpha * sum_b batch1[b] @ batch2[b]: the batch is reduced." },
  { "baddbmm(Tensor self, Tensor batch1, Tensor batch2, " .. AB .. ") -> Tensor", kernels = { cpu = "lt_cpu_baddbmm", cuda = "lt_cuda_baddbmm" }, out = true, inplace = true,
    t7 = { forms = { "baddbmm(Tensor self, Scalar alpha, Tensor batch1, Tensor batch2)", "baddbmm(Tensor self, Scalar beta, Scalar alpha, Tensor batch1, Tensor batch2)", "baddbmm(Scalar beta, Tensor self, Scalar alpha, Tensor batch1, Tensor batch2)" } },
    derivatives = { self = "lt_grad_scale(grad, beta)", batch1 = "lt_grad_bmm_batch1(grad, batch2, alpha)",
                    batch2 = "lt_grad_bmm_batch2(grad, batch1, alpha)" },
    doc = "beta * self + alpha * bmm(batch1, batch2)." },
  { "addr(Tensor self, Tensor vec1, Tensor vec2, " .. AB .. ") -> Tensor", kernels = { cpu = "lt_cpu_addr", cuda = "lt_cuda_addr" }, out = true, inplace = true,
    t7 = { forms = { "addr(Tensor self, Scalar alpha, Tensor vec1, Tensor vec2)", "addr(Tensor self, Scalar beta, Scalar alpha, Tensor vec1, Tensor vec2)", "addr(Scalar beta, Tensor self, Scalar alpha, Tensor vec1, Tensor vec2)" } },
    derivatives = { self = "lt_grad_scale(grad, beta)", vec1 = "lt_grad_outer_vec1(grad, vec2, alpha)",
                    vec2 = "lt_grad_outer_vec2(grad, vec1, alpha)" },
    doc = "beta * self + alpha * outer(vec1, vec2)." },
  { "outer(Tensor self, Tensor vec2) -> Tensor", kernels = { cpu = "lt_cpu_outer", cuda = "lt_cuda_outer" }, out = true, alias = { "ger" },
    derivatives = { self = "lt_grad_outer_vec1(grad, vec2, LT_GRAD_ONE)", vec2 = "lt_grad_outer_vec2(grad, self, LT_GRAD_ONE)" },
    doc = "Outer product of two 1-D tensors: (n) x (m) -> (n x m)." },
  -- One declaration per op and never a wrong gradient: einsum is composite (formulas_linalg.c)
  -- and runs einsum_fast, the BLAS kernel, when no operand needs a gradient, else the same
  -- contraction through differentiable ops. einsum_fast itself refuses operands that need one.
  { "einsum(str equation, Tensor[] tensors) -> Tensor", variants = "function",
    composite = "lt_la_einsum_autograd",
    doc = "Einstein summation: torch.einsum(\"ij,jk->ik\", {a, b}) or torch.einsum(\"ij,jk->ik\", a, b). Implicit output, repeated subscripts (diagonals) and \"...\" are supported." },
  { "einsum_fast(str equation, Tensor[] tensors) -> Tensor", variants = "function", lua = "_einsum_fast",
    kernels = { cpu = "lt_cpu_einsum", cuda = "lt_cuda_einsum_fast" },
    doc = "einsum's BLAS kernel without autograd (raises when an operand requires grad); use torch.einsum." },
  einsum_n(1), einsum_n(2), einsum_n(3), einsum_n(4),
  { "trace(Tensor self) -> Tensor", kernels = { cpu = "lt_cpu_trace", cuda = "lt_cuda_trace" }, derivatives = { self = "lt_grad_trace(grad, self_meta)" },
    t7 = { reduce = true },
    doc = "Sum of the main diagonal of a 2-D tensor (integer inputs give int64)." },
  { "kron(Tensor self, Tensor other) -> Tensor", kernels = { cpu = "lt_cpu_kron", cuda = "lt_cuda_kron" }, out = true,
    derivatives = { self = "lt_grad_kron_self(grad, other, self_meta)",
                    other = "lt_grad_kron_other(grad, self, other_meta)" },
    doc = "Kronecker product: result[i*os + j] = self[i] * other[j] along every dim." },
}
