/*
** blas.h — cuBLAS as the CUDA backend sees it: one table of function
** pointers, as the driver seam (driver.h) is for libcuda, and the one GEMM
** every matrix product and convolution of the backend goes through.
**
** The table is filled in one of two ways:
**   - under a real driver, from libcuda's companion libcublas.so.13 (or .12),
**     opened with dlopen the first time a product runs: the module is never
**     linked with -lcublas, so it loads where there is no cuBLAS, and only
**     the products fail then, with the reason;
**   - under the fake driver, by fake_blas.c: a host implementation of the
**     same entry points with cuBLAS's semantics (column-major, transposes,
**     leading dimensions, batch strides, beta = 0 writes without reading C),
**     computing on the host memory the fake hands out. So the mapping from
**     lutorch's row-major strided tensors to cuBLAS calls (matmul.c) is
**     tested here, call for call, without a GPU.
**
** The types are lutorch's, with the values of cublas_api.h and
** library_types.h (tests/c/test_cuda_blas.c checks them against the
** toolkit's headers where they are found), so the dlsym'd entry points are
** stored as they are. Nothing of the real path has run on a GPU.
*/
#ifndef LT_CUDA_BLAS_H
#define LT_CUDA_BLAS_H
#include <stdbool.h>
#include <stdint.h>
#include "core/tensor.h"

typedef int lt_blas_status;                   /* cublasStatus_t */
typedef struct lt_blas_ctx_ *lt_blas_handle;  /* cublasHandle_t */
enum {
  LT_BLAS_SUCCESS = 0,
  LT_BLAS_NOT_INITIALIZED = 1,
  LT_BLAS_ALLOC_FAILED = 3,
  LT_BLAS_INVALID_VALUE = 7,
  LT_BLAS_NOT_SUPPORTED = 15,
};
enum { LT_BLAS_OP_N = 0, LT_BLAS_OP_T = 1 };                       /* cublasOperation_t */
enum { LT_BLAS_R_32F = 0, LT_BLAS_R_64F = 1, LT_BLAS_R_16F = 2, LT_BLAS_R_16BF = 14 };   /* cudaDataType */
enum { LT_BLAS_COMPUTE_32F = 68, LT_BLAS_COMPUTE_64F = 70, LT_BLAS_COMPUTE_32F_FAST_TF32 = 77 };
enum { LT_BLAS_DEFAULT_MATH = 0, LT_BLAS_PEDANTIC_MATH = 2, LT_BLAS_TF32_TENSOR_OP_MATH = 3 };  /* cublasMath_t */
enum { LT_BLAS_GEMM_DEFAULT = -1 };                                 /* cublasGemmAlgo_t */

typedef struct lt_blas {
  const char *name;   /* "libcublas.so.13", "libcublas.so.12" or "fake" */
  lt_blas_status (*create)(lt_blas_handle *h);                   /* cublasCreate_v2 */
  lt_blas_status (*destroy)(lt_blas_handle h);                   /* cublasDestroy_v2 */
  lt_blas_status (*set_stream)(lt_blas_handle h, void *stream);  /* cublasSetStream_v2 */
  lt_blas_status (*set_math_mode)(lt_blas_handle h, int mode);   /* cublasSetMathMode */
  /* cublasGemmStridedBatchedEx: C[b] = alpha op(A[b]) op(B[b]) + beta C[b],
  ** column-major, op(A) m x k, op(B) k x n, C m x n; alpha and beta point to
  ** host numbers of the compute type (float for COMPUTE_32F*, double for 64F) */
  lt_blas_status (*gemm_strided_batched)(lt_blas_handle h, int transa, int transb, int m, int n, int k,
                                         const void *alpha, const void *A, int atype, int lda, long long stride_a,
                                         const void *B, int btype, int ldb, long long stride_b, const void *beta,
                                         void *C, int ctype, int ldc, long long stride_c, int batch,
                                         int compute, int algo);
  const char *(*status_string)(lt_blas_status s);                /* cublasGetStatusString */
} lt_blas;

/* The cuBLAS of this process: the fake under the fake driver, else the
** library opened once; NULL with the error set (naming op) when there is none. */
const lt_blas *lt_cuda_blas(const char *op);
/* the fake's table (fake_blas.c) */
const lt_blas *lt_cuda_fake_blas(void);

/*
** C[b] = alpha * A[b] @ B[b] + beta * C[b] on device tensors, row-major with
** any strides, as the CPU's lt_la_gemm (meta/linalg.h: lt_meta_gemm_fn): A
** (batch..., m, k), B (batch..., k, n), C (batch..., m, n), one floating
** dtype, A and B may broadcast batch dims (stride 0); with `reduce`, C is
** (m, n) and gets beta C + alpha sum_b A[b] B[b]. beta = 0: C is only
** written. Each operand reaches cuBLAS as (transpose, leading dimension)
** when its strides allow, else through a contiguous copy; C is written in
** place when one of its two dims is contiguous, else through a temporary.
** 0; -1 with the error set; 1 when the dtype has no cuBLAS path (integers,
** bool: the caller falls back or reports).
*/
int lt_cuda_gemm(const char *op, lt_tensor *C, lt_tensor *A, lt_tensor *B, lt_scalar alpha, lt_scalar beta,
                 bool reduce);

/* whether lt_cuda_gemm has a path for dtype dt (the floating dtypes) */
bool lt_cuda_gemm_dtype(lt_dtype dt);

/* cuBLAS GEMM calls made since the last reset (both builds), for tests */
long lt_cuda_blas_calls(bool reset);

#endif
