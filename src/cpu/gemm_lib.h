/*
** gemm_lib.h — which library runs the float32 matrix products (gemm_lib.c): OpenBLAS,
** or oneDNN's JIT sgemm where it was measured faster (bench/README.md, "CPU training
** speed"). la_gemm.c asks here before each float32 BLAS call. Private to the CPU backend.
*/
#ifndef LT_GEMM_LIB_H
#define LT_GEMM_LIB_H

#include <stdbool.h>
#include <stdint.h>

/* row-major C (m x n) = alpha op(A) op(B) + beta C through oneDNN when it is the
** library chosen and the product is big enough to gain; false: the caller uses OpenBLAS */
bool lt_gemm_lib_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *A,
                       int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);

/* the library in use: "onednn" or "openblas" */
const char *lt_gemm_lib_name(void);
/* why oneDNN is not in use (NULL when it is) */
const char *lt_gemm_lib_why(void);
/* choose "auto", "openblas" or "onednn": 0, or -1 with the error set (an unknown
** name; oneDNN asked for where it cannot load) */
int lt_gemm_lib_select(const char *name);

#endif
