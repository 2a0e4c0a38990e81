-- Linear algebra: products through OpenBLAS (src/tensor/ops_linalg.c, la_gemm.c, la_einsum.c).
-- Matrix products need operands of one dtype, as in PyTorch; outer, addr and kron promote.
local AB = "*, Scalar beta=1, Scalar alpha=1"

-- torch.einsum("ij,jk->ik", a, b): overloads that gather the operands into the table form
local function einsum_n(n)
  local args, doc = {}, "einsum with the operands as separate arguments (the table form is torch.einsum(eq, {a, b}))."
  for i = 1, n do args[i] = "Tensor t" .. i end
  return { ("einsum_%d(str equation, %s) -> Tensor"):format(n, table.concat(args, ", ")),
           lua = "einsum", variants = "function", composite = "lt_la_einsum_" .. n, doc = doc }
end

return {
  { "dot(Tensor self, Tensor tensor) -> Tensor", out = true, alias = { "vdot" },
    doc = "Dot product of two 1-D tensors of the same size and dtype; a 0-d result." },
  { "inner(Tensor self, Tensor other) -> Tensor", out = true,
    doc = "Sum of products over the last dim of both: shape self.shape[:-1] + other.shape[:-1]." },
  { "mv(Tensor self, Tensor vec) -> Tensor", out = true,
    doc = "Matrix (n x m) times vector (m): a vector (n)." },
  { "mm(Tensor self, Tensor mat2) -> Tensor", out = true,
    doc = "Matrix product of two 2-D tensors (n x m) @ (m x p)." },
  { "bmm(Tensor self, Tensor mat2) -> Tensor", out = true,
    doc = "Batched matrix product: (b x n x m) @ (b x m x p) -> (b x n x p)." },
  { "matmul(Tensor self, Tensor other) -> Tensor", out = true,
    doc = "Matrix product with PyTorch's rules: 1-D.1-D dot, matrix-vector, vector-matrix, and batched N-D products that broadcast the batch dims." },
  { "addmm(Tensor self, Tensor mat1, Tensor mat2, " .. AB .. ") -> Tensor", out = true, inplace = true,
    doc = "beta * self + alpha * (mat1 @ mat2); self broadcasts to the result." },
  { "addmv(Tensor self, Tensor mat, Tensor vec, " .. AB .. ") -> Tensor", out = true, inplace = true,
    doc = "beta * self + alpha * (mat @ vec)." },
  { "addbmm(Tensor self, Tensor batch1, Tensor batch2, " .. AB .. ") -> Tensor", out = true, inplace = true,
    doc = "beta * self + alpha * sum_b batch1[b] @ batch2[b]: the batch is reduced." },
  { "baddbmm(Tensor self, Tensor batch1, Tensor batch2, " .. AB .. ") -> Tensor", out = true, inplace = true,
    doc = "beta * self + alpha * bmm(batch1, batch2)." },
  { "addr(Tensor self, Tensor vec1, Tensor vec2, " .. AB .. ") -> Tensor", out = true, inplace = true,
    doc = "beta * self + alpha * outer(vec1, vec2)." },
  { "outer(Tensor self, Tensor vec2) -> Tensor", out = true, alias = { "ger" },
    doc = "Outer product of two 1-D tensors: (n) x (m) -> (n x m)." },
  { "einsum(str equation, Tensor[] tensors) -> Tensor", variants = "function",
    doc = "Einstein summation: torch.einsum(\"ij,jk->ik\", {a, b}) or torch.einsum(\"ij,jk->ik\", a, b). Implicit output, repeated subscripts (diagonals) and \"...\" are supported." },
  einsum_n(1), einsum_n(2), einsum_n(3), einsum_n(4),
  { "trace(Tensor self) -> Tensor",
    doc = "Sum of the main diagonal of a 2-D tensor (integer inputs give int64)." },
  { "kron(Tensor self, Tensor other) -> Tensor", out = true,
    doc = "Kronecker product: result[i*os + j] = self[i] * other[j] along every dim." },
}
