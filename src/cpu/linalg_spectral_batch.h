/*
** linalg_spectral_batch.h — the plumbing between batched row-major tensors and
** LAPACK's column-major matrices, for the spectral kernels (linalg_spectral.c):
** a "column buffer" is a contiguous tensor of sizes (batch..., cols, rows), so
** matrix b of the batch is a Fortran array with leading dimension rows at
** element b * rows * cols. Loads copy (and convert) into it; results are views
** of it with the last two dims swapped, as PyTorch returns them. Kept small so
** that it can merge with the other LAPACK plumbing later.
*/
#ifndef LT_CPU_LINALG_SPECTRAL_BATCH_H
#define LT_CPU_LINALG_SPECTRAL_BATCH_H

#include "core/tensor.h"
#include "cpu/lapack.h"

/* product of t's leading dims (all but its last `keep`) */
int64_t lt_lsb_batch(const lt_tensor *t, int keep);
/* a new column buffer for `rows` x `cols` matrices with the batch dims of like (all but
** its last `keep` dims); zeroed when asked */
lt_tensor *lt_lsb_new(lt_dtype dt, const lt_tensor *like, int keep, int64_t rows, int64_t cols, bool zero);
/* a (batch..., r, c) view of the leading r rows and c columns of buffer buf */
lt_tensor *lt_lsb_view(lt_tensor *buf, int64_t r, int64_t c);
/* a new column buffer holding a's matrices (converted to dt), padded to rows x cols
** (>= a's) with zeros when larger */
lt_tensor *lt_lsb_load(const lt_tensor *a, lt_dtype dt, int64_t rows, int64_t cols);
/* element offset of matrix b in a buffer */
static inline void *lt_lsb_at(lt_tensor *buf, int64_t b) {
  int nd = buf->ndim;
  return (char *)lt_tensor_data(buf) + b * buf->sizes[nd - 1] * buf->sizes[nd - 2] * (int64_t)lt_dtype_size((lt_dtype)buf->dtype);
}
/* the first matrix b of a buffer holding a NaN or an infinity, or -1 when all are finite
** (LAPACK's eigen and singular value drivers would loop, fail or give garbage on them) */
int64_t lt_lsb_first_nonfinite(lt_tensor *buf);
/* a LAPACK dimension from an int64, or -1 with an error naming op when it does not fit */
int lt_lsb_dim(const char *op, int64_t v, lt_lapack_int *out);

/* Run one(ctx, b) for every matrix b < batch; in parallel over the batch when the
** matrices are small (n_work: a rough per-matrix cost, e.g. n^3) and many, else in
** order with OpenBLAS threading each call. one returns LAPACK's info for b (0 ok,
** < 0 also for an allocation failure). Returns 0, or the first failing b's info
** with *bad = b. */
typedef lt_lapack_int (*lt_lsb_fn)(void *ctx, int64_t b);
lt_lapack_int lt_lsb_each(int64_t batch, double n_work, lt_lsb_fn one, void *ctx, int64_t *bad);

#endif
