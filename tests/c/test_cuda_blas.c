/*
** test_cuda_blas.c — the cuBLAS seam (src/cuda/blas.h): where the Makefile
** finds the toolkit's cublas_api.h (it then defines LT_HAVE_CUDA_H), the
** seam's values and the table's entry signatures against cuBLAS's own, at
** compile time; and always, the fake cuBLAS (src/cuda/fake_blas.c, compiled
** in here) against a plain reference: column-major products with every
** transpose pair, padded leading dimensions, batch strides (0 included),
** beta = 0 not reading C, float16, and cuBLAS's refusals.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda/blas.h"
#include "cuda/fake_blas.c"
#include "ctest.h"

#ifdef LT_HAVE_CUDA_H
#include <cublas_api.h>
#define SAME(a, b) _Static_assert((long long)(a) == (long long)(b), #a " != " #b)
SAME(LT_BLAS_SUCCESS, CUBLAS_STATUS_SUCCESS);
SAME(LT_BLAS_NOT_INITIALIZED, CUBLAS_STATUS_NOT_INITIALIZED);
SAME(LT_BLAS_ALLOC_FAILED, CUBLAS_STATUS_ALLOC_FAILED);
SAME(LT_BLAS_INVALID_VALUE, CUBLAS_STATUS_INVALID_VALUE);
SAME(LT_BLAS_NOT_SUPPORTED, CUBLAS_STATUS_NOT_SUPPORTED);
SAME(LT_BLAS_OP_N, CUBLAS_OP_N);
SAME(LT_BLAS_OP_T, CUBLAS_OP_T);
SAME(LT_BLAS_R_32F, CUDA_R_32F);
SAME(LT_BLAS_R_64F, CUDA_R_64F);
SAME(LT_BLAS_R_16F, CUDA_R_16F);
SAME(LT_BLAS_R_16BF, CUDA_R_16BF);
SAME(LT_BLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F);
SAME(LT_BLAS_COMPUTE_64F, CUBLAS_COMPUTE_64F);
SAME(LT_BLAS_COMPUTE_32F_FAST_TF32, CUBLAS_COMPUTE_32F_FAST_TF32);
SAME(LT_BLAS_DEFAULT_MATH, CUBLAS_DEFAULT_MATH);
SAME(LT_BLAS_PEDANTIC_MATH, CUBLAS_PEDANTIC_MATH);
SAME(LT_BLAS_TF32_TENSOR_OP_MATH, CUBLAS_TF32_TENSOR_OP_MATH);
SAME(LT_BLAS_GEMM_DEFAULT, CUBLAS_GEMM_DEFAULT);
_Static_assert(sizeof(lt_blas_handle) == sizeof(cublasHandle_t), "handle size");
_Static_assert(sizeof(int) == sizeof(cublasStatus_t) && sizeof(int) == sizeof(cublasOperation_t) &&
               sizeof(int) == sizeof(cudaDataType) && sizeof(int) == sizeof(cublasComputeType_t) &&
               sizeof(int) == sizeof(cublasGemmAlgo_t) && sizeof(int) == sizeof(cublasMath_t), "enum sizes");
/* the entries blas.c dlsym's, beside the table's types (enums passed as int) */
_Static_assert(__builtin_types_compatible_p(__typeof__(&cublasCreate_v2), cublasStatus_t (*)(cublasHandle_t *)), "create");
_Static_assert(__builtin_types_compatible_p(__typeof__(&cublasDestroy_v2), cublasStatus_t (*)(cublasHandle_t)), "destroy");
_Static_assert(__builtin_types_compatible_p(__typeof__(&cublasSetStream_v2),
                                            cublasStatus_t (*)(cublasHandle_t, cudaStream_t)), "set_stream");
_Static_assert(__builtin_types_compatible_p(__typeof__(&cublasSetMathMode),
                                            cublasStatus_t (*)(cublasHandle_t, cublasMath_t)), "set_math_mode");
_Static_assert(__builtin_types_compatible_p(
                 __typeof__(&cublasGemmStridedBatchedEx),
                 cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *,
                                    const void *, cudaDataType, int, long long, const void *, cudaDataType, int,
                                    long long, const void *, void *, cudaDataType, int, long long, int,
                                    cublasComputeType_t, cublasGemmAlgo_t)), "gemm_strided_batched");
_Static_assert(__builtin_types_compatible_p(__typeof__(&cublasGetStatusString), const char *(*)(cublasStatus_t)),
               "status_string");
#endif

static double urand(void) { return (double)rand() / RAND_MAX * 2 - 1; }

/* one batched product through the fake, checked against the reference */
static void one(int ta, int tb, int m, int n, int k, int pad, int batch, bool share_b, double alpha, double beta) {
  const lt_blas *b = lt_cuda_fake_blas();
  lt_blas_handle h;
  CHECK_EQ_INT(b->create(&h), LT_BLAS_SUCCESS);
  int ar = ta == LT_BLAS_OP_N ? m : k, ac = ta == LT_BLAS_OP_N ? k : m;
  int br = tb == LT_BLAS_OP_N ? k : n, bc = tb == LT_BLAS_OP_N ? n : k;
  int lda = (ar > 1 ? ar : 1) + pad, ldb = (br > 1 ? br : 1) + pad, ldc = (m > 1 ? m : 1) + pad;
  long long sa = (long long)lda * ac, sb = share_b ? 0 : (long long)ldb * bc, sc = (long long)ldc * n;
  double *A = calloc((size_t)(sa * batch + 1), 8), *B = calloc((size_t)(ldb * bc * batch + 1), 8);
  double *C = calloc((size_t)(sc * batch + 1), 8), *R = calloc((size_t)(sc * batch + 1), 8);
  for (long long i = 0; i < sa * batch; i++) A[i] = urand();
  for (long long i = 0; i < (long long)ldb * bc * batch; i++) B[i] = urand();
  for (long long i = 0; i < sc * batch; i++) C[i] = R[i] = beta == 0 ? NAN : urand();
  for (int p = 0; p < batch; p++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < m; i++) {
        double s = 0;
        for (int l = 0; l < k; l++) {
          double x = ta == LT_BLAS_OP_N ? A[p * sa + i + (long long)l * lda] : A[p * sa + l + (long long)i * lda];
          double y = tb == LT_BLAS_OP_N ? B[p * sb + l + (long long)j * ldb] : B[p * sb + j + (long long)l * ldb];
          s += x * y;
        }
        double *r = &R[p * sc + i + (long long)j * ldc];
        *r = alpha * s + (beta == 0 ? 0 : beta * *r);
      }
  CHECK_EQ_INT(b->gemm_strided_batched(h, ta, tb, m, n, k, &alpha, A, LT_BLAS_R_64F, lda, sa, B, LT_BLAS_R_64F, ldb, sb,
                                       &beta, C, LT_BLAS_R_64F, ldc, sc, batch, LT_BLAS_COMPUTE_64F,
                                       LT_BLAS_GEMM_DEFAULT), LT_BLAS_SUCCESS);
  double err = 0;
  bool padding_kept = true;
  for (int p = 0; p < batch; p++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < ldc; i++) {
        double c = C[p * sc + i + (long long)j * ldc], r = R[p * sc + i + (long long)j * ldc];
        if (i >= m) { padding_kept &= beta == 0 ? c != c : c == r; continue; }   /* rows past m untouched */
        err = fmax(err, fabs(c - r));
      }
  CHECK(err < 1e-12);
  CHECK(padding_kept);
  b->destroy(h);
  free(A); free(B); free(C); free(R);
}

TEST(fake_gemm_layouts) {
  int sizes[][3] = {{1, 1, 1}, {3, 4, 5}, {5, 1, 7}, {1, 6, 2}, {8, 8, 8}, {2, 3, 0}};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int ta = 0; ta < 2; ta++)
      for (int tb = 0; tb < 2; tb++)
        for (int pad = 0; pad < 2; pad++) {
          one(ta, tb, sizes[s][0], sizes[s][1], sizes[s][2], pad, 1, false, 1.5, 0);
          one(ta, tb, sizes[s][0], sizes[s][1], sizes[s][2], pad, 3, false, -1, 0.5);
          one(ta, tb, sizes[s][0], sizes[s][1], sizes[s][2], pad, 3, true, 2, 1);
        }
}

TEST(fake_gemm_half_and_refusals) {
  const lt_blas *b = lt_cuda_fake_blas();
  lt_blas_handle h;
  CHECK_EQ_INT(b->create(&h), LT_BLAS_SUCCESS);
  /* float16 with float32 accumulation: [1 2; 3 4] (column-major) squared */
  lt_half A[4], C[4];
  float v[4] = {1, 3, 2, 4};
  for (int i = 0; i < 4; i++) A[i] = lt_float_to_half(v[i]);
  float one = 1, zero = 0;
  CHECK_EQ_INT(b->gemm_strided_batched(h, 0, 0, 2, 2, 2, &one, A, LT_BLAS_R_16F, 2, 0, A, LT_BLAS_R_16F, 2, 0, &zero, C,
                                       LT_BLAS_R_16F, 2, 0, 1, LT_BLAS_COMPUTE_32F, -1), LT_BLAS_SUCCESS);
  CHECK_NEAR(lt_half_to_float(C[0]), 7, 0); CHECK_NEAR(lt_half_to_float(C[1]), 15, 0);
  CHECK_NEAR(lt_half_to_float(C[2]), 10, 0); CHECK_NEAR(lt_half_to_float(C[3]), 22, 0);
  /* a leading dimension below the rows, a mixed type pair, float64 with a 32-bit compute type */
  CHECK_EQ_INT(b->gemm_strided_batched(h, 0, 0, 2, 2, 2, &one, A, LT_BLAS_R_16F, 1, 0, A, LT_BLAS_R_16F, 2, 0, &zero, C,
                                       LT_BLAS_R_16F, 2, 0, 1, LT_BLAS_COMPUTE_32F, -1), LT_BLAS_INVALID_VALUE);
  CHECK_EQ_INT(b->gemm_strided_batched(h, 0, 0, 2, 2, 2, &one, A, LT_BLAS_R_16F, 2, 0, A, LT_BLAS_R_32F, 2, 0, &zero, C,
                                       LT_BLAS_R_16F, 2, 0, 1, LT_BLAS_COMPUTE_32F, -1), LT_BLAS_NOT_SUPPORTED);
  double d[4] = {0};
  CHECK_EQ_INT(b->gemm_strided_batched(h, 0, 0, 2, 2, 2, &one, d, LT_BLAS_R_64F, 2, 0, d, LT_BLAS_R_64F, 2, 0, &zero, d,
                                       LT_BLAS_R_64F, 2, 0, 1, LT_BLAS_COMPUTE_32F, -1), LT_BLAS_NOT_SUPPORTED);
  CHECK_EQ_INT(b->destroy(h), LT_BLAS_SUCCESS);
  CHECK(strcmp(b->status_string(LT_BLAS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE") == 0);
}

int main(void) {
#ifndef LT_HAVE_CUDA_H
  printf("SKIP no cublas_api.h (CUDA Toolkit): the seam's values are not checked against it\n");
#endif
  RUN(fake_gemm_layouts);
  RUN(fake_gemm_half_and_refusals);
  return ctest_summary();
}
