/*
** lapack_batch.c — batches of column-major matrices for LAPACK
** (lapack_batch.h): the copy in, the per-matrix loop, the view out.
*/
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <cblas.h>
#include "core/error.h"
#include "cpu/lapack_batch.h"
#include "cpu/parallel.h"
#include "core/views.h"

/* bytes after a batch's last matrix that LAPACK's kernels may read (batch_alloc) */
#define LAPACK_SLACK_BYTES 256

static int batch_alloc(lt_lapack_batch *b, lt_dtype dt, lt_device dev, int nbatch, const int64_t *batch,
                       int64_t rows, int64_t cols, bool zero) {
  memset(b, 0, sizeof *b);
  int64_t sizes[LT_MAX_DIMS];
  b->nbatch = nbatch;
  b->count = 1;
  for (int i = 0; i < nbatch; i++) { b->batch[i] = sizes[i] = batch[i]; b->count *= batch[i]; }
  sizes[nbatch] = cols;
  sizes[nbatch + 1] = rows;
  b->rows = rows;
  b->cols = cols;
  /* One block with slack after its last matrix: OpenBLAS 0.3.21's complex gemv kernels
  ** (zgemv_n, reached from zlarf inside gesdd, geqrf, gehrd, ...) read a few elements
  ** past the end of the vector they are given (OpenBLAS issue 4013), and the last
  ** column of the last matrix is such a vector: a block ending at a page boundary
  ** would fault. buf is a contiguous view of the block without the slack. */
  int64_t numel = b->count * rows * cols, st[LT_MAX_DIMS];
  int64_t total = numel + (LAPACK_SLACK_BYTES + (int64_t)lt_dtype_size(dt) - 1) / (int64_t)lt_dtype_size(dt);
  lt_tensor *block = zero ? lt_tensor_new_zeros(dt, dev, 1, &total) : lt_tensor_new(dt, dev, 1, &total);
  if (!block) return -1;
  st[nbatch + 1] = 1;
  for (int i = nbatch; i >= 0; i--) st[i] = st[i + 1] * sizes[i + 1];
  b->buf = lt_tensor_alias(block, block->offset, nbatch + 2, sizes, st);
  lt_tensor_release(block);
  return b->buf ? 0 : -1;
}

int lt_lapack_batch_new(lt_lapack_batch *b, lt_dtype dt, lt_device dev, int nbatch, const int64_t *batch,
                        int64_t rows, int64_t cols) {
  return batch_alloc(b, dt, dev, nbatch, batch, rows, cols, false);
}

int lt_lapack_batch_zeros(lt_lapack_batch *b, lt_dtype dt, lt_device dev, int nbatch, const int64_t *batch,
                          int64_t rows, int64_t cols) {
  return batch_alloc(b, dt, dev, nbatch, batch, rows, cols, true);
}

/* a view of t with its last two dims swapped */
static lt_tensor *swap_last(const lt_tensor *t) { return lt_strided_transpose((lt_tensor *)t, -2, -1); }

int lt_lapack_batch_from(lt_lapack_batch *b, const lt_tensor *src, bool src_T, lt_dtype dt, int nbatch,
                         const int64_t *batch) {
  int n = src->ndim;
  int64_t rows = src->sizes[n - (src_T ? 1 : 2)], cols = src->sizes[n - (src_T ? 2 : 1)];
  if (lt_lapack_batch_new(b, dt, lt_tensor_device(src), nbatch, batch, rows, cols)) return -1;
  /* buf is (batch, cols, rows); src^T (or src itself when src_T) has that shape up to the batch */
  lt_tensor *s = src_T ? (lt_tensor_retain((lt_tensor *)src), (lt_tensor *)src) : swap_last(src);
  int rc = s ? lt_tensor_copy_(b->buf, s) : -1;
  lt_tensor_release(s);
  if (rc) lt_lapack_batch_release(b);
  return rc;
}

int lt_lapack_batch_padded(lt_lapack_batch *b, const lt_tensor *src, lt_dtype dt, int64_t rows, int64_t cols) {
  int n = src->ndim;
  int64_t m = src->sizes[n - 2], k = src->sizes[n - 1];
  if (rows == m && cols == k) return lt_lapack_batch_from(b, src, false, dt, n - 2, src->sizes);
  if (lt_lapack_batch_zeros(b, dt, lt_tensor_device(src), n - 2, src->sizes, rows, cols)) return -1;
  lt_tensor *corner = lt_lapack_batch_view(b, m, k);
  int rc = corner ? lt_tensor_copy_(corner, src) : -1;
  lt_tensor_release(corner);
  if (rc) lt_lapack_batch_release(b);
  return rc;
}

lt_tensor *lt_lapack_batch_view(const lt_lapack_batch *b, int64_t r, int64_t c) {
  int64_t sz[LT_MAX_DIMS], st[LT_MAX_DIMS];
  lt_tensor *buf = b->buf;
  int nd = buf->ndim;
  for (int i = 0; i < nd - 2; i++) { sz[i] = buf->sizes[i]; st[i] = buf->strides[i]; }
  sz[nd - 2] = r; st[nd - 2] = 1;
  sz[nd - 1] = c; st[nd - 1] = b->rows;   /* the leading dimension */
  return lt_tensor_alias(buf, buf->offset, nd, sz, st);
}

int64_t lt_lapack_batch_first_nonfinite(const lt_lapack_batch *b) {
  lt_dtype dt = (lt_dtype)b->buf->dtype;
  bool dbl = dt == LT_FLOAT64 || dt == LT_COMPLEX128;
  int64_t per = b->rows * b->cols * (lt_dtype_is_complex(dt) ? 2 : 1);
  for (int64_t i = 0; i < b->count; i++) {
    const void *p = lt_lapack_batch_at(b, i);
    for (int64_t j = 0; j < per; j++)
      if (!isfinite(dbl ? ((const double *)p)[j] : ((const float *)p)[j])) return i;
  }
  return -1;
}

int lt_lapack_failed(const char *op, int info, int64_t bad, const char *positive) {
  if (info <= -1000) return lt_error("%s: out of memory for LAPACK's workspace", op);
  if (info < 0) return lt_error("%s: LAPACK rejected argument %d (an internal error)", op, -info);
  return lt_error("%s: %s for batch element %lld (1-based, of the matrices flattened over the batch dims; LAPACK info %d)",
                  op, positive, (long long)bad + 1, info);
}

int lt_lapack_check_finite(const char *op, const char *arg, const lt_lapack_batch *b) {
  int64_t i = lt_lapack_batch_first_nonfinite(b);
  if (i < 0) return 0;
  return lt_error("%s: argument '%s' holds NaN or inf in batch element %lld (1-based, of the matrices flattened over the batch dims)",
                  op, arg, (long long)i + 1);
}

int lt_lapack_dim(const char *op, int64_t v, int *out) {
  if (v > INT_MAX)
    return lt_error("%s: a matrix dimension of %lld is more than LAPACK's 32-bit indices hold", op, (long long)v);
  *out = (int)v;
  return 0;
}

void *lt_lapack_batch_at(const lt_lapack_batch *b, int64_t i) {
  return (char *)lt_tensor_data(b->buf) + (size_t)(i * b->rows * b->cols) * lt_dtype_size((lt_dtype)b->buf->dtype);
}

lt_tensor *lt_lapack_batch_tensor(const lt_lapack_batch *b, bool transposed) {
  if (transposed) { lt_tensor_retain(b->buf); return b->buf; }
  return swap_last(b->buf);
}

void lt_lapack_batch_release(lt_lapack_batch *b) {
  lt_tensor_release(b->buf);
  b->buf = NULL;
}

typedef struct each_ctx {
  lt_lapack_batch_fn fn;
  void *ctx;
  int *info;                     /* per matrix */
} each_ctx;

static void each_range(void *p, int64_t begin, int64_t end) {
  each_ctx *e = p;
  for (int64_t i = begin; i < end; i++) e->info[i] = e->fn(e->ctx, i);
}

/* below this cost of one call (about a 96 x 96 factorisation) a matrix is left to one
** thread and the batch is split across the pool; above it OpenBLAS threads each call */
#define SMALL_WORK (96.0 * 96.0 * 96.0)

int lt_lapack_batch_each(int64_t count, double work, lt_lapack_batch_fn fn, void *ctx, int64_t *bad) {
  if (count <= 0) return 0;
  if (count == 1 || work > SMALL_WORK) {
    /* OpenBLAS runs on one thread (parallel.c): a large factorisation gets the pool's
    ** count of threads for its duration, unless it already runs inside a parallel loop */
    bool wide = work > SMALL_WORK && !lt_in_parallel_region() && lt_get_num_threads() > 1;
    if (wide) openblas_set_num_threads(lt_get_num_threads());
    int r = 0;
    for (int64_t i = 0; i < count && !r; i++)
      if ((r = fn(ctx, i))) *bad = i;
    if (wide) openblas_set_num_threads(1);
    return r;
  }
  int *info = calloc((size_t)count, sizeof *info);
  if (!info) { *bad = 0; return -1; }
  each_ctx e = {fn, ctx, info};
  lt_parallel_for(count, (int64_t)(SMALL_WORK / (work + 1.0)) + 1, each_range, &e);
  int r = 0;
  for (int64_t i = 0; i < count; i++)
    if (info[i]) { r = info[i]; *bad = i; break; }
  free(info);
  return r;
}

int lt_lapack_batch_run(int64_t count, int64_t order, lt_lapack_batch_fn fn, void *ctx) {
  int64_t bad;
  return lt_lapack_batch_each(count, (double)order * (double)order * (double)order, fn, ctx, &bad) ? -1 : 0;
}

lt_tensor *lt_lapack_int_tensor(lt_device dev, int nbatch, const int64_t *batch, int extra, const int64_t *tail) {
  int64_t sizes[LT_MAX_DIMS];
  memcpy(sizes, batch, sizeof(int64_t) * (size_t)nbatch);
  for (int i = 0; i < extra; i++) sizes[nbatch + i] = tail[i];
  return lt_tensor_new_zeros(LT_INT32, dev, nbatch + extra, sizes);
}
