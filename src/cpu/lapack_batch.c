/*
** lapack_batch.c — batches of column-major matrices for LAPACK
** (lapack_batch.h): the copy in, the per-matrix loop, the view out.
*/
#include <stdatomic.h>
#include <string.h>
#include "cpu/lapack_batch.h"
#include "cpu/parallel.h"
#include "core/views.h"

int lt_lapack_batch_new(lt_lapack_batch *b, lt_dtype dt, lt_device dev, int nbatch, const int64_t *batch,
                        int64_t rows, int64_t cols) {
  memset(b, 0, sizeof *b);
  int64_t sizes[LT_MAX_DIMS];
  b->nbatch = nbatch;
  b->count = 1;
  for (int i = 0; i < nbatch; i++) { b->batch[i] = sizes[i] = batch[i]; b->count *= batch[i]; }
  sizes[nbatch] = cols;
  sizes[nbatch + 1] = rows;
  b->rows = rows;
  b->cols = cols;
  b->buf = lt_tensor_new(dt, dev, nbatch + 2, sizes);
  return b->buf ? 0 : -1;
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

typedef struct run_ctx {
  lt_lapack_batch_fn fn;
  void *ctx;
  atomic_int failed;
} run_ctx;

static void run_range(void *p, int64_t begin, int64_t end) {
  run_ctx *r = p;
  for (int64_t i = begin; i < end; i++)
    if (r->fn(r->ctx, i)) atomic_store(&r->failed, 1);
}

int lt_lapack_batch_run(int64_t count, int64_t order, lt_lapack_batch_fn fn, void *ctx) {
  run_ctx r = { fn, ctx, 0 };
  if (order <= 128 && count > 1) {
    /* a grain of matrices worth ~32K multiply-adds each chunk */
    int64_t work = order * order * order;
    int64_t grain = work > 0 ? (32768 + work - 1) / work : count;
    if (grain < 1) grain = 1;
    lt_parallel_for(count, grain, run_range, &r);
  } else {
    run_range(&r, 0, count);
  }
  return atomic_load(&r.failed) ? -1 : 0;
}

lt_tensor *lt_lapack_int_tensor(lt_device dev, int nbatch, const int64_t *batch, int extra, const int64_t *tail) {
  int64_t sizes[LT_MAX_DIMS];
  memcpy(sizes, batch, sizeof(int64_t) * (size_t)nbatch);
  for (int i = 0; i < extra; i++) sizes[nbatch + i] = tail[i];
  return lt_tensor_new_zeros(LT_INT32, dev, nbatch + extra, sizes);
}
