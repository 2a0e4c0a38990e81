/*
** shape.c — the CUDA kernels of tril and triu (and their in-place forms),
** over src/cuda/kernels/shape.cu: the input copied into the result with the
** other triangle zeroed, in one pass. The other shape ops that copy
** (contiguous, cat, flip, roll, diag) are device-neutral `any` kernels
** (src/core/shape_copies.c) over the copy kernel.
**
** Nothing here has run on a GPU: it is tested with the host build under the
** fake driver (tests/lua/cuda/test_index.lua's shape section).
*/
#include <string.h>
#include "core/error.h"
#include "cuda/cuda.h"
#include "cuda/kernels/shape.h"
#include "cuda/launch.h"
#include "meta/meta.h"
#include "kernels_cuda.h"   /* generated: lt_ops.h, the kernel types */

extern const lt_ck_shape_kernels *lt_ck_shape_device_kernels(void) __attribute__((weak));

static lt_tensor *triangle(const char *op, lt_tensor *self, int64_t k, lt_tensor *out, bool lower) {
  if (self->ndim < 2) return lt_error_null("%s: expects a tensor with at least 2 dims, got %d", op, self->ndim);
  lt_tensor *r = out == self ? (lt_tensor_retain(self), self)
                             : lt_meta_result(op, out, out ? (lt_dtype)out->dtype : (lt_dtype)self->dtype,
                                              lt_tensor_device(self), self->ndim, self->sizes);
  if (!r) return NULL;
  /* the kernel moves elements: out= of another dtype takes a temporary */
  lt_tensor *w = r->dtype == self->dtype ? (lt_tensor_retain(r), r)
                                         : lt_tensor_new((lt_dtype)self->dtype, lt_tensor_device(self), self->ndim,
                                                         self->sizes);
  int rc = w ? 0 : -1;
  if (rc == 0 && w->numel > 0) {
    int nd = self->ndim;
    int64_t rows = self->sizes[nd - 2], cols = self->sizes[nd - 1];
    if (k > cols) k = cols;   /* past the matrix a diagonal keeps all or nothing */
    if (k < -rows - 1) k = -rows - 1;
    lt_ck_geom g;
    lt_cuda_geom_init(&g, nd, self->sizes);
    memcpy(g.strides[0], w->strides, sizeof(int64_t) * (size_t)nd);
    memcpy(g.strides[1], self->strides, sizeof(int64_t) * (size_t)nd);
    lt_cuda_launch l;
    rc = lt_cuda_launch_begin(&l, lt_tensor_device(self).index, lt_ck_shape_device_kernels != NULL, op);
    if (rc == 0) {
      const lt_ck_shape_kernels *kk = l.host ? lt_ck_host_shape_kernels() : lt_ck_shape_device_kernels();
      int kr = kk->triangle((int)lt_dtype_size((lt_dtype)self->dtype), lt_tensor_data(w), lt_tensor_data(self), &g, k,
                            lower, l.stream);
      lt_cuda_launch_end(&l);
      const lt_ck_kernels *ck = lt_cuda_ck_kernels(&l);
      rc = lt_cuda_launch_result(&l, op, kr, ck ? ck->error_string : NULL);
      if (rc > 0) rc = lt_error("%s: the CUDA kernel refused the arguments", op);
    }
  }
  if (rc == 0 && w != r) rc = lt_tensor_copy_(r, w);
  lt_tensor_release(w);
  if (rc < 0) { lt_tensor_release(r); return NULL; }
  return r;
}

lt_tensor *lt_cuda_tril(lt_tensor *self, int64_t diagonal, lt_tensor *out) {
  return triangle("tril", self, diagonal, out, true);
}

lt_tensor *lt_cuda_triu(lt_tensor *self, int64_t diagonal, lt_tensor *out) {
  return triangle("triu", self, diagonal, out, false);
}
