/*
** linalg_spectral_batch.c — column buffers and the batch loop of
** linalg_spectral_batch.h.
*/
#include <string.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include "cpu/linalg_spectral_batch.h"
#include "cpu/parallel.h"
#include "core/error.h"
#include <cblas.h>

int64_t lt_lsb_batch(const lt_tensor *t, int keep) {
  int64_t b = 1;
  for (int i = 0; i < t->ndim - keep; i++) b *= t->sizes[i];
  return b;
}

lt_tensor *lt_lsb_new(lt_dtype dt, const lt_tensor *like, int keep, int64_t rows, int64_t cols, bool zero) {
  int64_t sz[LT_MAX_DIMS];
  int nb = like->ndim - keep;
  for (int i = 0; i < nb; i++) sz[i] = like->sizes[i];
  sz[nb] = cols;
  sz[nb + 1] = rows;
  lt_device dev = lt_tensor_device(like);
  return zero ? lt_tensor_new_zeros(dt, dev, nb + 2, sz) : lt_tensor_new(dt, dev, nb + 2, sz);
}

lt_tensor *lt_lsb_view(lt_tensor *buf, int64_t r, int64_t c) {
  int64_t sz[LT_MAX_DIMS], st[LT_MAX_DIMS];
  int nd = buf->ndim;
  for (int i = 0; i < nd - 2; i++) { sz[i] = buf->sizes[i]; st[i] = buf->strides[i]; }
  sz[nd - 2] = r; st[nd - 2] = 1;
  sz[nd - 1] = c; st[nd - 1] = buf->sizes[nd - 1];   /* the leading dimension: rows */
  return lt_tensor_alias(buf, buf->offset, nd, sz, st);
}

lt_tensor *lt_lsb_load(const lt_tensor *a, lt_dtype dt, int64_t rows, int64_t cols) {
  int64_t m = a->sizes[a->ndim - 2], n = a->sizes[a->ndim - 1];
  lt_tensor *buf = lt_lsb_new(dt, a, 2, rows, cols, rows > m || cols > n);
  if (!buf) return NULL;
  lt_tensor *v = lt_lsb_view(buf, m, n);
  int rc = v ? lt_tensor_copy_(v, a) : -1;
  lt_tensor_release(v);
  if (rc < 0) { lt_tensor_release(buf); return NULL; }
  return buf;
}

int64_t lt_lsb_first_nonfinite(lt_tensor *buf) {
  int64_t per = buf->sizes[buf->ndim - 1] * buf->sizes[buf->ndim - 2], batch = lt_lsb_batch(buf, 2);
  for (int64_t b = 0; b < batch; b++) {
    if (buf->dtype == LT_FLOAT64) {
      const double *p = lt_lsb_at(buf, b);
      for (int64_t i = 0; i < per; i++) if (!isfinite(p[i])) return b;
    } else {
      const float *p = lt_lsb_at(buf, b);
      for (int64_t i = 0; i < per; i++) if (!isfinite(p[i])) return b;
    }
  }
  return -1;
}

int lt_lsb_dim(const char *op, int64_t v, lt_lapack_int *out) {
  if (v > INT_MAX) return lt_error("%s: a matrix dimension of %lld is more than LAPACK's 32-bit indices hold", op, (long long)v);
  *out = (lt_lapack_int)v;
  return 0;
}

typedef struct each_ctx {
  lt_lsb_fn one; void *ctx;
  lt_lapack_int *info;           /* per matrix */
} each_ctx;

static void each_range(void *p, int64_t begin, int64_t end) {
  each_ctx *e = p;
  for (int64_t b = begin; b < end; b++) e->info[b] = e->one(e->ctx, b);
}

/* below this per-matrix cost (about a 96 x 96 factorisation) a matrix is left to one
** thread and the batch is split across the pool; above it OpenBLAS threads each call */
#define SMALL_WORK (96.0 * 96.0 * 96.0)

lt_lapack_int lt_lsb_each(int64_t batch, double n_work, lt_lsb_fn one, void *ctx, int64_t *bad) {
  if (batch <= 0) return 0;
  if (batch == 1 || n_work > SMALL_WORK) {
    /* OpenBLAS runs on one thread (parallel.c): a large factorisation gets the pool's
    ** count of threads for its duration, unless it already runs inside a parallel loop */
    bool wide = n_work > SMALL_WORK && !lt_in_parallel_region() && lt_get_num_threads() > 1;
    if (wide) openblas_set_num_threads(lt_get_num_threads());
    lt_lapack_int r = 0;
    for (int64_t b = 0; b < batch && !r; b++) {
      r = one(ctx, b);
      if (r) *bad = b;
    }
    if (wide) openblas_set_num_threads(1);
    return r;
  }
  lt_lapack_int *info = calloc((size_t)batch, sizeof *info);
  if (!info) { *bad = 0; return -1; }
  each_ctx e = {one, ctx, info};
  int64_t grain = (int64_t)(SMALL_WORK / (n_work + 1.0)) + 1;
  lt_parallel_for(batch, grain, each_range, &e);
  lt_lapack_int r = 0;
  for (int64_t b = 0; b < batch; b++)
    if (info[b]) { r = info[b]; *bad = b; break; }
  free(info);
  return r;
}
