/*
** linalg.h — the device-neutral half of the matrix product ops (linalg.c):
** each checks its arguments with the CPU's messages, makes the result (or
** resizes out=) and reduces the op to one call of the backend's gemm on
** strided views, so no operand is copied unless the backend must.
*/
#ifndef LT_META_LINALG_H
#define LT_META_LINALG_H

#include "core/tensor.h"

/*
** A backend's batched product: C[b] = alpha * A[b] @ B[b] + beta * C[b] for
** every batch index b. A is (batch..., m, k), B (batch..., k, n), C
** (batch..., m, n): one dtype, the same batch sizes (expanded views with
** stride 0 are fine in A and B). With `reduce`, C is 2-D (m, n) and gets
** beta * C + alpha * sum_b A[b] @ B[b]. C holds the beta term unless beta is
** zero (then C is only written). C may alias A or B. 0, or -1 with an error
** naming op. The CPU's is lt_la_gemm, CUDA's lt_cuda_gemm.
*/
typedef int (*lt_meta_gemm_fn)(const char *op, lt_tensor *C, lt_tensor *A, lt_tensor *B, lt_scalar alpha,
                               lt_scalar beta, bool reduce);

/* the ops, with the signatures of their kernels after the gemm to run */
lt_tensor *lt_meta_dot(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *tensor, lt_tensor *out);
lt_tensor *lt_meta_mv(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *vec, lt_tensor *out);
lt_tensor *lt_meta_addmv(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *mat, lt_tensor *vec, lt_scalar beta,
                         lt_scalar alpha, lt_tensor *out);
lt_tensor *lt_meta_mm(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *mat2, lt_tensor *out);
lt_tensor *lt_meta_addmm(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *mat1, lt_tensor *mat2, lt_scalar beta,
                         lt_scalar alpha, lt_tensor *out);
lt_tensor *lt_meta_bmm(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *mat2, lt_tensor *out);
lt_tensor *lt_meta_baddbmm(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *batch1, lt_tensor *batch2,
                           lt_scalar beta, lt_scalar alpha, lt_tensor *out);
lt_tensor *lt_meta_addbmm(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *batch1, lt_tensor *batch2,
                          lt_scalar beta, lt_scalar alpha, lt_tensor *out);
lt_tensor *lt_meta_outer(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *vec2, lt_tensor *out);
lt_tensor *lt_meta_addr(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *vec1, lt_tensor *vec2, lt_scalar beta,
                        lt_scalar alpha, lt_tensor *out);
lt_tensor *lt_meta_matmul(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *other, lt_tensor *out);
lt_tensor *lt_meta_inner(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *other, lt_tensor *out);
lt_tensor *lt_meta_kron(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *other, lt_tensor *out);
/* trace's check: self is 2-D */
int lt_meta_trace(const lt_tensor *self);
/* einsum_fast's kernel (einsum_gemm.c): the plan of meta/einsum.h, contracted by gemm */
lt_tensor *lt_meta_einsum(lt_meta_gemm_fn gemm, const char *equation, lt_tensor *const *tensors, int n);

#endif
