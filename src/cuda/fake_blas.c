/*
** fake_blas.c — the cuBLAS of the fake driver (blas.h): the entry points the
** seam uses, on host memory, with cuBLAS's semantics, so that what matmul.c
** and conv.c ask of cuBLAS is computed, and checked, without a GPU.
**
** cublasGemmStridedBatchedEx as documented: column-major; op(A) is m x k
** (A stored m x k with lda >= max(1, m) when transa is N, k x m with
** lda >= max(1, k) when T), op(B) k x n likewise, C m x n with
** ldc >= max(1, m); batch b at A + b * strideA and so on; beta == 0 writes C
** without reading it (NaNs there do not propagate); alpha and beta are
** floats for the 32-bit compute types and doubles for COMPUTE_64F. The
** type combinations are cuBLAS's: 32F/32F, 64F/64F, 16F and 16BF with
** 32F compute; anything else is CUBLAS_STATUS_NOT_SUPPORTED, a bad size or
** leading dimension CUBLAS_STATUS_INVALID_VALUE, as the library answers.
** Sums accumulate in double, in order, and round once to C's type: cuBLAS's
** own order and rounding (tiles, FMAs in the compute type) are not part of
** its contract, and a result exact to C's precision keeps the fake's answer
** within the CPU's rounding of its own.
*/
#include <stdint.h>
#include <stdlib.h>
#include "core/dtype.h"
#include "cuda/blas.h"

struct lt_blas_ctx_ { unsigned magic; void *stream; int math; };
#define MAGIC 0xb1a5u

static lt_blas_status create(lt_blas_handle *h) {
  if (!h) return LT_BLAS_INVALID_VALUE;
  lt_blas_handle c = calloc(1, sizeof *c);
  if (!c) return LT_BLAS_ALLOC_FAILED;
  c->magic = MAGIC;
  *h = c;
  return LT_BLAS_SUCCESS;
}

static bool valid(lt_blas_handle h) { return h && h->magic == MAGIC; }

static lt_blas_status destroy(lt_blas_handle h) {
  if (!valid(h)) return LT_BLAS_NOT_INITIALIZED;
  h->magic = 0;
  free(h);
  return LT_BLAS_SUCCESS;
}

static lt_blas_status set_stream(lt_blas_handle h, void *s) {
  if (!valid(h)) return LT_BLAS_NOT_INITIALIZED;
  h->stream = s;
  return LT_BLAS_SUCCESS;
}

static lt_blas_status set_math_mode(lt_blas_handle h, int mode) {
  if (!valid(h)) return LT_BLAS_NOT_INITIALIZED;
  h->math = mode;
  return LT_BLAS_SUCCESS;
}

static double load(int t, const char *p, int64_t i) {
  switch (t) {
    case LT_BLAS_R_32F: return ((const float *)p)[i];
    case LT_BLAS_R_64F: return ((const double *)p)[i];
    case LT_BLAS_R_16F: return lt_half_to_float(((const lt_half *)p)[i]);
    default: return lt_bf16_to_float(((const lt_bfloat16 *)p)[i]);
  }
}

static void store(int t, char *p, int64_t i, double v) {
  switch (t) {
    case LT_BLAS_R_32F: ((float *)p)[i] = (float)v; break;
    case LT_BLAS_R_64F: ((double *)p)[i] = v; break;
    case LT_BLAS_R_16F: ((lt_half *)p)[i] = lt_float_to_half((float)v); break;
    default: ((lt_bfloat16 *)p)[i] = lt_float_to_bf16((float)v); break;
  }
}

static int elsize(int t) { return t == LT_BLAS_R_64F ? 8 : t == LT_BLAS_R_32F ? 4 : 2; }

static lt_blas_status gemm(lt_blas_handle h, int transa, int transb, int m, int n, int k, const void *alpha,
                           const void *A, int atype, int lda, long long stride_a, const void *B, int btype, int ldb,
                           long long stride_b, const void *beta, void *C, int ctype, int ldc, long long stride_c,
                           int batch, int compute, int algo) {
  (void)algo;
  if (!valid(h)) return LT_BLAS_NOT_INITIALIZED;
  if (atype != btype || atype != ctype) return LT_BLAS_NOT_SUPPORTED;
  bool f64 = compute == LT_BLAS_COMPUTE_64F;
  if (f64 ? atype != LT_BLAS_R_64F
          : (compute != LT_BLAS_COMPUTE_32F && compute != LT_BLAS_COMPUTE_32F_FAST_TF32) || atype == LT_BLAS_R_64F ||
              (atype != LT_BLAS_R_32F && atype != LT_BLAS_R_16F && atype != LT_BLAS_R_16BF))
    return LT_BLAS_NOT_SUPPORTED;
  if ((transa != LT_BLAS_OP_N && transa != LT_BLAS_OP_T) || (transb != LT_BLAS_OP_N && transb != LT_BLAS_OP_T))
    return LT_BLAS_INVALID_VALUE;
  if (m < 0 || n < 0 || k < 0 || batch < 0 || !alpha || !beta) return LT_BLAS_INVALID_VALUE;
  int arows = transa == LT_BLAS_OP_N ? m : k, brows = transb == LT_BLAS_OP_N ? k : n;
  if (lda < (arows > 1 ? arows : 1) || ldb < (brows > 1 ? brows : 1) || ldc < (m > 1 ? m : 1))
    return LT_BLAS_INVALID_VALUE;
  if (m == 0 || n == 0 || batch == 0) return LT_BLAS_SUCCESS;
  double al = f64 ? *(const double *)alpha : *(const float *)alpha;
  double be = f64 ? *(const double *)beta : *(const float *)beta;
  int es = elsize(atype);
  for (int b = 0; b < batch; b++) {
    const char *pa = (const char *)A + (int64_t)b * stride_a * es;
    const char *pb = (const char *)B + (int64_t)b * stride_b * es;
    char *pc = (char *)C + (int64_t)b * stride_c * es;
    for (int j = 0; j < n; j++)
      for (int i = 0; i < m; i++) {
        double sd = 0;
        for (int l = 0; l < k; l++) {
          /* op(A)[i, l] and op(B)[l, j], column-major */
          int64_t ia = transa == LT_BLAS_OP_N ? i + (int64_t)l * lda : l + (int64_t)i * lda;
          int64_t ib = transb == LT_BLAS_OP_N ? l + (int64_t)j * ldb : j + (int64_t)l * ldb;
          double x = load(atype, pa, ia), y = load(atype, pb, ib);
          sd += x * y;
        }
        int64_t ic = i + (int64_t)j * ldc;
        double v = al * sd;
        if (be != 0) v += be * load(ctype, pc, ic);
        store(ctype, pc, ic, v);
      }
  }
  return LT_BLAS_SUCCESS;
}

static const char *status_string(lt_blas_status s) {
  switch (s) {
    case LT_BLAS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case LT_BLAS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case LT_BLAS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case LT_BLAS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case LT_BLAS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "CUBLAS_STATUS_UNKNOWN";
  }
}

static const lt_blas fake = {
  .name = "fake", .create = create, .destroy = destroy, .set_stream = set_stream, .set_math_mode = set_math_mode,
  .gemm_strided_batched = gemm, .status_string = status_string,
};

const lt_blas *lt_cuda_fake_blas(void) { return &fake; }
