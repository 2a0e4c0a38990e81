/*
** linalg.h — the CUDA kernels of src/cuda/matmul.c besides cuBLAS, in both
** builds (kernels.h explains the two): trace. This header is C.
*/
#ifndef LT_CUDA_KERNELS_LINALG_H
#define LT_CUDA_KERNELS_LINALG_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
** trace: *out = the sum of n elements of x, `stride` elements apart (the
**   diagonal), accumulated in double for the floating dtypes (out of x's
**   dtype) and in wrapping int64 for the others (out int64), as the CPU.
**   One thread adds them in order.
*/
typedef struct lt_ck_linalg_kernels {
  const char *name;
  int (*trace)(int dtype, const void *x, int64_t n, int64_t stride, void *out, void *stream);
} lt_ck_linalg_kernels;

const lt_ck_linalg_kernels *lt_ck_linalg_device_kernels(void);   /* the nvcc build */
const lt_ck_linalg_kernels *lt_ck_host_linalg_kernels(void);     /* the host build */

#ifdef __cplusplus
}
#endif
#endif
