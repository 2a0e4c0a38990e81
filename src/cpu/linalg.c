/*
** linalg.c — the CPU kernels of src/ops/linalg.lua: the products are
** meta/linalg.c's checks and views over lt_la_gemm (la_gemm.c), so no
** operand is copied unless BLAS cannot read it as is; trace and einsum's
** varargs forms.
*/
#include <stdio.h>
#include <string.h>
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "cpu/la_gemm.h"
#include "meta/linalg.h"
#include "meta/meta.h"

/* ---- the products ---- */

lt_tensor *lt_cpu_dot(lt_tensor *self, lt_tensor *tensor, lt_tensor *out) {
  return lt_meta_dot(lt_la_gemm, self, tensor, out);
}
lt_tensor *lt_cpu_mv(lt_tensor *self, lt_tensor *vec, lt_tensor *out) {
  return lt_meta_mv(lt_la_gemm, self, vec, out);
}
lt_tensor *lt_cpu_addmv(lt_tensor *self, lt_tensor *mat, lt_tensor *vec, lt_scalar beta, lt_scalar alpha, lt_tensor *out) {
  return lt_meta_addmv(lt_la_gemm, self, mat, vec, beta, alpha, out);
}
lt_tensor *lt_cpu_mm(lt_tensor *self, lt_tensor *mat2, lt_tensor *out) {
  return lt_meta_mm(lt_la_gemm, self, mat2, out);
}
lt_tensor *lt_cpu_addmm(lt_tensor *self, lt_tensor *mat1, lt_tensor *mat2, lt_scalar beta, lt_scalar alpha, lt_tensor *out) {
  return lt_meta_addmm(lt_la_gemm, self, mat1, mat2, beta, alpha, out);
}
lt_tensor *lt_cpu_bmm(lt_tensor *self, lt_tensor *mat2, lt_tensor *out) {
  return lt_meta_bmm(lt_la_gemm, self, mat2, out);
}
lt_tensor *lt_cpu_baddbmm(lt_tensor *self, lt_tensor *batch1, lt_tensor *batch2, lt_scalar beta, lt_scalar alpha, lt_tensor *out) {
  return lt_meta_baddbmm(lt_la_gemm, self, batch1, batch2, beta, alpha, out);
}
lt_tensor *lt_cpu_addbmm(lt_tensor *self, lt_tensor *batch1, lt_tensor *batch2, lt_scalar beta, lt_scalar alpha, lt_tensor *out) {
  return lt_meta_addbmm(lt_la_gemm, self, batch1, batch2, beta, alpha, out);
}
lt_tensor *lt_cpu_outer(lt_tensor *self, lt_tensor *vec2, lt_tensor *out) {
  return lt_meta_outer(lt_la_gemm, self, vec2, out);
}
lt_tensor *lt_cpu_addr(lt_tensor *self, lt_tensor *vec1, lt_tensor *vec2, lt_scalar beta, lt_scalar alpha, lt_tensor *out) {
  return lt_meta_addr(lt_la_gemm, self, vec1, vec2, beta, alpha, out);
}
lt_tensor *lt_cpu_matmul(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  return lt_meta_matmul(lt_la_gemm, self, other, out);
}
lt_tensor *lt_cpu_inner(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  return lt_meta_inner(lt_la_gemm, self, other, out);
}
lt_tensor *lt_cpu_kron(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  return lt_meta_kron(lt_la_gemm, self, other, out);
}

/* ---- trace ---- */

lt_tensor *lt_cpu_trace(lt_tensor *self) {
  if (lt_meta_trace(self) < 0) return NULL;
  lt_dtype dt = (lt_dtype)self->dtype;
  int64_t n = self->sizes[0] < self->sizes[1] ? self->sizes[0] : self->sizes[1];
  int64_t st = self->strides[0] + self->strides[1];
  const char *p = lt_tensor_data(self);
  size_t es = lt_dtype_size(dt);
  if (lt_dtype_is_complex(dt)) {   /* complex: both parts summed in double */
    double sr = 0, si = 0, re, im;
    for (int64_t i = 0; i < n; i++) {
      lt_dtype_load_complex(dt, p + i * st * (int64_t)es, &re, &im);
      sr += re; si += im;
    }
    return lt_tensor_from_scalar(lt_scalar_complex(sr, si), dt);
  }
  if (lt_dtype_is_float(dt)) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += lt_dtype_load_double(dt, p + i * st * (int64_t)es);
    return lt_tensor_from_scalar(lt_scalar_float(s), dt);
  }
  uint64_t s = 0;   /* wraps like an int64 sum */
  for (int64_t i = 0; i < n; i++) s += (uint64_t)lt_dtype_load_int64(dt, p + i * st * (int64_t)es);
  return lt_tensor_from_scalar(lt_scalar_int((int64_t)s), LT_INT64);
}

/* ---- einsum's varargs forms ---- */

lt_tensor *lt_la_einsum_1(const char *equation, lt_tensor *t1) {
  lt_tensor *ts[1] = {t1};
  return lt_einsum(equation, ts, 1);
}
lt_tensor *lt_la_einsum_2(const char *equation, lt_tensor *t1, lt_tensor *t2) {
  lt_tensor *ts[2] = {t1, t2};
  return lt_einsum(equation, ts, 2);
}
lt_tensor *lt_la_einsum_3(const char *equation, lt_tensor *t1, lt_tensor *t2, lt_tensor *t3) {
  lt_tensor *ts[3] = {t1, t2, t3};
  return lt_einsum(equation, ts, 3);
}
lt_tensor *lt_la_einsum_4(const char *equation, lt_tensor *t1, lt_tensor *t2, lt_tensor *t3, lt_tensor *t4) {
  lt_tensor *ts[4] = {t1, t2, t3, t4};
  return lt_einsum(equation, ts, 4);
}
