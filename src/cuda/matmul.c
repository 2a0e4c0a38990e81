/*
** matmul.c — the CUDA kernels of the matrix products (dot, inner, mv, mm,
** bmm, matmul, addmm, addmv, addbmm, baddbmm, addr, outer, kron, einsum_fast,
** _linear; and trace, a kernel of src/cuda/kernels/linalg.cu):
** the CPU's checks, results and strided views (meta/linalg.c) over
** lt_cuda_gemm, cuBLAS through the seam (blas.h), so a CUDA product rejects
** what the CPU rejects with the same message and broadcasts, lays out and
** writes out= alike. The in-place forms are the generated defaults over the
** out= kernels.
**
** cuBLAS multiplies floating dtypes only; integer products (which the CPU
** computes, wrapping like int64) run the CPU's kernel under the fake driver
** and are an error naming the op under a real one, as PyTorch's CUDA
** products are. Bool is refused by the CPU's kernel under the fake, as on
** the CPU.
**
** Nothing here has run on a GPU: it is tested under the fake driver, whose
** cuBLAS (fake_blas.c) is host code with cuBLAS's semantics
** (tests/lua/cuda/test_matmul.lua compares every layout with the CPU).
*/
#include "core/error.h"
#include "cuda/blas.h"
#include "cuda/launch.h"
#include "cuda/kernels/linalg.h"
#include "dispatch/dispatch.h"
#include "meta/linalg.h"
#include "kernels_cuda.h"   /* generated: lt_ops.h, the kernel types */

/* lt_cuda_gemm as meta's gemm: a dtype it refuses never gets here (each op
** checks first), so a refusal is an internal error rather than a silent skip */
static int gemm(const char *op, lt_tensor *C, lt_tensor *A, lt_tensor *B, lt_scalar alpha, lt_scalar beta,
                bool reduce) {
  int rc = lt_cuda_gemm(op, C, A, B, alpha, beta, reduce);
  return rc > 0 ? lt_error("%s: no cuBLAS path for %s", op, lt_dtype_name((lt_dtype)A->dtype)) : rc;
}

/* whether every tensor given is on a cuda device with a dtype cuBLAS multiplies */
static bool blas_ok(lt_dtype dt, lt_tensor *a, lt_tensor *b) {
  return lt_cuda_gemm_dtype(dt) && lt_cuda_on(a) && lt_cuda_on(b);
}

static lt_dtype promoted(lt_tensor *a, lt_tensor *b, lt_tensor *c) {
  lt_dtype dt = lt_promote_types((lt_dtype)a->dtype, (lt_dtype)b->dtype);
  return c ? lt_promote_types(dt, (lt_dtype)c->dtype) : dt;
}

#define FALLBACK(NAME, DT, ...) LT_CUDA_FALLBACK(NAME, #NAME, DT, __VA_ARGS__)

/* ops whose operands share one dtype (the meta checks say so when they do not) */
#define PRODUCT2(NAME, A, B)                                                    \
  lt_tensor *lt_cuda_##NAME(lt_tensor *A, lt_tensor *B, lt_tensor *out) {       \
    if (A->dtype == B->dtype && !blas_ok((lt_dtype)A->dtype, A, B))             \
      FALLBACK(NAME, (lt_dtype)A->dtype, A, B, out);                            \
    return lt_meta_##NAME(gemm, A, B, out);                                     \
  }
PRODUCT2(dot, self, tensor)
PRODUCT2(inner, self, other)
PRODUCT2(mv, self, vec)
PRODUCT2(mm, self, mat2)
PRODUCT2(bmm, self, mat2)
PRODUCT2(matmul, self, other)

#define PRODUCT3(NAME, A, B)                                                                            \
  lt_tensor *lt_cuda_##NAME(lt_tensor *self, lt_tensor *A, lt_tensor *B, lt_scalar beta, lt_scalar alpha, \
                            lt_tensor *out) {                                                           \
    if (A->dtype == B->dtype && !blas_ok((lt_dtype)A->dtype, A, B))                                     \
      FALLBACK(NAME, (lt_dtype)A->dtype, self, A, B, beta, alpha, out);                                 \
    return lt_meta_##NAME(gemm, self, A, B, beta, alpha, out);                                          \
  }
PRODUCT3(addmm, mat1, mat2)
PRODUCT3(addmv, mat, vec)
PRODUCT3(addbmm, batch1, batch2)
PRODUCT3(baddbmm, batch1, batch2)

/* outer, addr and kron promote their operands */
lt_tensor *lt_cuda_outer(lt_tensor *self, lt_tensor *vec2, lt_tensor *out) {
  lt_dtype dt = promoted(self, vec2, NULL);
  if (!blas_ok(dt, self, vec2)) FALLBACK(outer, dt, self, vec2, out);
  return lt_meta_outer(gemm, self, vec2, out);
}

lt_tensor *lt_cuda_addr(lt_tensor *self, lt_tensor *vec1, lt_tensor *vec2, lt_scalar beta, lt_scalar alpha,
                        lt_tensor *out) {
  lt_dtype dt = promoted(self, vec1, vec2);
  if (!blas_ok(dt, vec1, vec2)) FALLBACK(addr, dt, self, vec1, vec2, beta, alpha, out);
  return lt_meta_addr(gemm, self, vec1, vec2, beta, alpha, out);
}

lt_tensor *lt_cuda_kron(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  lt_dtype dt = promoted(self, other, NULL);
  if (!blas_ok(dt, self, other)) FALLBACK(kron, dt, self, other, out);
  return lt_meta_kron(gemm, self, other, out);
}

/* _linear: input [N, in] @ weight^T [in, out] + bias, one product with the
** bias broadcast into the result (addmm's beta term) */
lt_tensor *lt_cuda__linear(lt_tensor *input, lt_tensor *weight, lt_tensor *bias) {
  if (input->ndim != 2 || weight->ndim != 2 || input->sizes[1] != weight->sizes[1])
    return lt_error_null("_linear: arguments 'input' [N, in] and 'weight' [out, in] do not match");
  if (input->dtype == weight->dtype && !blas_ok((lt_dtype)input->dtype, input, weight))
    FALLBACK(_linear, (lt_dtype)input->dtype, input, weight, bias);
  int64_t sz[2] = {weight->sizes[1], weight->sizes[0]}, st[2] = {weight->strides[1], weight->strides[0]};
  lt_tensor *wt = lt_tensor_alias(weight, weight->offset, 2, sz, st);
  if (!wt) return NULL;
  lt_tensor *y = bias ? lt_meta_addmm(gemm, bias, input, wt, lt_scalar_int(1), lt_scalar_int(1), NULL)
                      : lt_meta_mm(gemm, input, wt, NULL);
  lt_tensor_release(wt);
  return y;
}

/* einsum_fast: meta's contraction over cuBLAS (floating operands; others as the integer products) */
lt_tensor *lt_cuda_einsum_fast(const char *equation, lt_tensor *const *tensors, int tensors_n) {
  lt_dtype dt = tensors_n > 0 ? (lt_dtype)tensors[0]->dtype : LT_FLOAT32;
  bool ok = true;
  for (int i = 0; i < tensors_n; i++) ok &= blas_ok((lt_dtype)tensors[i]->dtype, tensors[i], tensors[i]);
  if (!ok) FALLBACK(einsum_fast, dt, equation, tensors, tensors_n);
  return lt_meta_einsum(gemm, equation, tensors, tensors_n);
}

/* trace: the linalg kernel (one thread adds the diagonal in order, as the CPU) into a 0-d result */
extern const lt_ck_linalg_kernels *lt_ck_linalg_device_kernels(void) __attribute__((weak));

lt_tensor *lt_cuda_trace(lt_tensor *self) {
  const char *op = "trace";
  if (lt_meta_trace(self) < 0) return NULL;
  lt_dtype dt = lt_dtype_is_float((lt_dtype)self->dtype) ? (lt_dtype)self->dtype : LT_INT64;
  lt_tensor *r = lt_tensor_new(dt, lt_tensor_device(self), 0, NULL);
  if (!r) return NULL;
  int64_t n = self->sizes[0] < self->sizes[1] ? self->sizes[0] : self->sizes[1];
  lt_cuda_launch l;
  if (lt_cuda_launch_begin(&l, lt_tensor_device(self).index, lt_ck_linalg_device_kernels != NULL, op) < 0) {
    lt_tensor_release(r);
    return NULL;
  }
  const lt_ck_linalg_kernels *k = l.host ? lt_ck_host_linalg_kernels() : lt_ck_linalg_device_kernels();
  int rc = k->trace(self->dtype, lt_tensor_data(self), n, self->strides[0] + self->strides[1], lt_tensor_data(r),
                    l.stream);
  lt_cuda_launch_end(&l);
  rc = lt_cuda_launch_result(&l, op, rc, lt_cuda_ck_kernels(&l)->error_string);
  if (rc != 0) {
    lt_tensor_release(r);
    if (rc > 0) FALLBACK(trace, (lt_dtype)self->dtype, self);
    return NULL;
  }
  return r;
}
