/*
** cuda_index.h — what the CUDA index, shape and sort kernels' C files share
** (index.c): launching the index kernel family, the device-side index check
** with its read-back, and reading one int64 back from device memory.
** Nothing here has run on a GPU.
*/
#ifndef LT_CUDA_INDEX_H
#define LT_CUDA_INDEX_H

#include "core/tensor.h"
#include "cuda/kernels/index.h"
#include "cuda/launch.h"

typedef struct lt_cuda_ix {
  lt_cuda_launch l;
  const lt_ck_index_kernels *k;   /* the build that runs */
  const char *op;
} lt_cuda_ix;

/* begin a launch of the index kernels on `on`'s device: 0 or -1 */
int lt_cuda_ix_begin(lt_cuda_ix *x, const lt_tensor *on, const char *op);
/* end it with the kernel's result rc: 0, or -1 with the error set (a refusal too) */
int lt_cuda_ix_end(lt_cuda_ix *x, int rc);
/* element `linear` of an int64 device tensor, read back (synchronizing): 0 or -1 */
int lt_cuda_read_i64(const lt_tensor *t, int64_t linear, int64_t *v);
/* a number as one element of dtype dt (8 bytes of host memory), as the CPU converts it */
void lt_cuda_scalar_bits(lt_scalar v, lt_dtype dt, void *bits);
/* every value of idx (contiguous int64 on the device) a valid index of size:
** kind 0 1-based into dim `dim` (negative from the end; dim < 0 a flat
** index), kind 1 embedding's 1..size, kind 2 searchsorted's sorter's
** 1..size (the messages differ). A kernel and one read-back (a sync);
** 0, or -1 with the CPU's message. */
int lt_cuda_check_index(const char *op, const lt_tensor *idx, int64_t size, int dim, int kind);
/* the indexed kernel (index.h LT_CK_IX_*) over g, writing w */
int lt_cuda_ix_launch(const char *op, int mode, lt_tensor *w, const lt_tensor *in, const lt_tensor *idx,
                      const void *value, lt_scalar alpha, const lt_ck_ix_geom *g);

#endif
