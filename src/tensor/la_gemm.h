/*
** la_gemm.h — the batched matrix product under every linear-algebra op
** (mm, bmm, matmul, addmm, mv, dot, outer, einsum, ...). Private to src/tensor.
*/
#ifndef LT_LA_GEMM_H
#define LT_LA_GEMM_H

#include "tensor.h"

/*
** C[b] = alpha * A[b] @ B[b] + beta * C[b] for every batch index b.
** A is (batch..., m, k), B (batch..., k, n), C (batch..., m, n): one dtype, the
** same batch sizes (expanded views with stride 0 are fine, in A and B). With
** `reduce`, C is 2-D (m, n) and gets beta * C + alpha * sum_b A[b] @ B[b].
** C must already hold the beta term unless beta is zero (then C is only
** written, NaNs in it do not propagate). Float32/64 go to OpenBLAS, 16-bit
** floats through float32, integers through a blocked int64 loop that wraps
** like PyTorch's; bool is refused. C may alias A or B (a temporary is used).
** 0, or -1 with an error naming op.
*/
int lt_la_gemm(const char *op, lt_tensor *C, lt_tensor *A, lt_tensor *B,
               lt_scalar alpha, lt_scalar beta, bool reduce);

static inline bool lt_la_scalar_is_zero(lt_scalar s) {
  return s.type == LT_SCALAR_FLOAT ? s.v.f == 0.0 : s.v.i == 0;
}

#endif
