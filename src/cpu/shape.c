/*
** shape.c — the CPU kernels of tril and triu. The views themselves are
** device-neutral (src/core/views.c), as are the shape ops that only copy
** (contiguous, cat, flip, roll, diag: src/core/shape_copies.c); the
** composites are in src/composite/shape.c.
*/
#include <string.h>
#include <stdlib.h>
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "meta/meta.h"

/* ---- tril, triu ---- */

/* zero n elements of size es, `stride` elements apart (zero bits are 0 in every dtype) */
static void zero_run(char *p, int64_t stride, int64_t n, size_t es) {
  if (n <= 0) return;
  if (stride == 1) { memset(p, 0, (size_t)n * es); return; }
  int64_t sb = stride * (int64_t)es;
  switch (es) {
    case 1: for (int64_t i = 0; i < n; i++) p[i * sb] = 0; break;
    case 2: for (int64_t i = 0; i < n; i++) *(uint16_t *)(p + i * sb) = 0; break;
    case 4: for (int64_t i = 0; i < n; i++) *(uint32_t *)(p + i * sb) = 0; break;
    case 16: for (int64_t i = 0; i < n; i++) memset(p + i * sb, 0, 16); break;   /* complex128 */
    default: for (int64_t i = 0; i < n; i++) *(uint64_t *)(p + i * sb) = 0; break;
  }
}

static lt_tensor *triangle(const char *op, lt_tensor *self, int64_t k, lt_tensor *out, bool lower) {
  if (self->ndim < 2) return lt_error_null("%s: expects a tensor with at least 2 dims, got %d", op, self->ndim);
  lt_tensor *r;
  if (out == self) { r = self; lt_tensor_retain(r); }
  else {
    r = lt_meta_result(op, out, out ? (lt_dtype)out->dtype : (lt_dtype)self->dtype, lt_tensor_device(self), self->ndim,
                       self->sizes);
    if (!r) return NULL;
    if (lt_tensor_copy_(r, self) < 0) { lt_tensor_release(r); return NULL; }
  }
  int nd = r->ndim;
  int64_t rows = r->sizes[nd - 2], cols = r->sizes[nd - 1], rst = r->strides[nd - 2], cst = r->strides[nd - 1];
  int64_t batch = r->numel ? r->numel / (rows * cols) : 0;
  size_t es = lt_dtype_size((lt_dtype)r->dtype);
  char *base = lt_tensor_data(r);
  /* past the matrix a diagonal keeps all or nothing: clamp, so i + k cannot overflow */
  if (k > cols) k = cols;
  if (k < -rows - 1) k = -rows - 1;
  for (int64_t b = 0; b < batch; b++) {
    int64_t off = 0, rem = b;
    for (int i = nd - 3; i >= 0; i--) { off += (rem % r->sizes[i]) * r->strides[i]; rem /= r->sizes[i]; }
    for (int64_t i = 0; i < rows; i++) {
      char *row = base + (off + i * rst) * (int64_t)es;
      /* keep column j when j - i <= k (lower) or j - i >= k (upper) */
      int64_t lo, hi;   /* the zeroed columns [lo, hi) */
      if (lower) { lo = i + k + 1; hi = cols; if (lo < 0) lo = 0; }
      else { lo = 0; hi = i + k; if (hi > cols) hi = cols; }
      if (lo < hi) zero_run(row + lo * cst * (int64_t)es, cst, hi - lo, es);
    }
  }
  return r;
}

lt_tensor *lt_cpu_tril(lt_tensor *self, int64_t diagonal, lt_tensor *out) { return triangle("tril", self, diagonal, out, true); }
lt_tensor *lt_cpu_triu(lt_tensor *self, int64_t diagonal, lt_tensor *out) { return triangle("triu", self, diagonal, out, false); }
