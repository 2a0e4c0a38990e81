/*
** shape.h — the CUDA backend's kernels of the shape ops that are not plain
** copies, in both builds (nvcc: lt_ck_shape_device_kernels; host:
** lt_ck_host_shape_kernels), as kernels.h describes for the elementwise ones.
** (contiguous, cat, flip, roll and diag need none: they are geometry over
** the copy kernel, src/core/shape_copies.c.)
**
**   - triangle: tril/triu. out = in where the element is kept, 0 elsewhere,
**     over a geometry (rows 0 out, 1 in; out may be in, element for
**     element), the last two dims the matrix: element (i, j) is kept when
**     j - i <= k (lower) or j - i >= k (upper). es the element size (zero
**     bits are 0 in every dtype).
**
** Nothing in the device build has run on a GPU.
*/
#ifndef LT_CUDA_KERNELS_SHAPE_H
#define LT_CUDA_KERNELS_SHAPE_H
#include <stdint.h>
#include "cuda/kernels/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*lt_ck_triangle_fn)(int es, void *out, const void *in, const lt_ck_geom *g, int64_t k, int lower,
                                 void *stream);

typedef struct lt_ck_shape_kernels {
  const char *name;
  lt_ck_triangle_fn triangle;
} lt_ck_shape_kernels;

const lt_ck_shape_kernels *lt_ck_shape_device_kernels(void);   /* nvcc build */
const lt_ck_shape_kernels *lt_ck_host_shape_kernels(void);     /* host build */

#ifdef __cplusplus
}
#endif
#endif
