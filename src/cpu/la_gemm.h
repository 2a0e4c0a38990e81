/*
** la_gemm.h — the batched matrix product under every linear-algebra op
** (mm, bmm, matmul, addmm, mv, dot, outer, einsum, ...). Private to the CPU backend.
*/
#ifndef LT_LA_GEMM_H
#define LT_LA_GEMM_H

#include "core/tensor.h"

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

/*
** One row-major float32 (f32) or float64 product C (m x n) = alpha A B + beta C, A
** stored transposed when ta (k x m), B when tb (n x k). OpenBLAS runs on one
** thread; a product worth it is split by columns (or rows) over lutorch's pool,
** so one set of threads does all the work: OpenBLAS's own workers would spin
** beside the pool's and fight it for the cores. With beta = 0, C is only written.
*/
void lt_la_blas_gemm(bool f32, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                     const void *A, int64_t lda, const void *B, int64_t ldb, double beta, void *C, int64_t ldc);

static inline bool lt_la_scalar_is_zero(lt_scalar s) {
  return s.type == LT_SCALAR_FLOAT ? s.v.f == 0.0 : s.v.i == 0;
}

#endif
