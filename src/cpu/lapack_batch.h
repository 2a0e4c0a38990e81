/*
** lapack_batch.h — the plumbing between lutorch's batched, strided,
** row-major tensors and LAPACK's one column-major matrix per call: a batch
** of matrices copied (broadcast, cast) into Fortran order, one contiguous
** block per matrix, a loop that calls a routine on each (on the thread pool
** when the matrices are many and small), and the block handed back as a
** tensor without a further copy.
**
** The block of a batch is a contiguous tensor of sizes (batch..., cols,
** rows): in row-major terms each matrix is stored transposed, which is
** exactly column-major for LAPACK with leading dimension rows. Seen through
** lt_lapack_batch_tensor it is the (batch..., rows, cols) result, with
** column-major strides, as PyTorch's LAPACK results have.
**
** One plumbing for every LAPACK kernel of the CPU (the solve family, least
** squares, QR, eigh, eig, SVD, Torch7's pstrf and eig): complex batches are the
** same blocks of (re, im) pairs, which is how Fortran's COMPLEX is laid out.
*/
#ifndef LT_CPU_LAPACK_BATCH_H
#define LT_CPU_LAPACK_BATCH_H

#include "core/tensor.h"

typedef struct lt_lapack_batch {
  lt_tensor *buf;          /* owned; contiguous (batch..., cols, rows) */
  int nbatch;              /* batch dims */
  int64_t batch[LT_MAX_DIMS];
  int64_t count;           /* matrices: the product of batch */
  int64_t rows, cols;      /* of each matrix; LAPACK's leading dimension is rows */
} lt_lapack_batch;

/* An uninitialised batch of count matrices rows x cols of dtype dt on dev. 0 / -1. */
int lt_lapack_batch_new(lt_lapack_batch *b, lt_dtype dt, lt_device dev, int nbatch, const int64_t *batch,
                        int64_t rows, int64_t cols);
/* The same, zeroed (padding that LAPACK reads, vectors it may not write). */
int lt_lapack_batch_zeros(lt_lapack_batch *b, lt_dtype dt, lt_device dev, int nbatch, const int64_t *batch,
                          int64_t rows, int64_t cols);
/* A batch holding src's matrices (its last two dims), broadcast to the batch
** dims given (src's own batch dims must broadcast to them) and cast to dt.
** src_T: take src's matrices transposed (A^T for a solve with A on the right). */
int lt_lapack_batch_from(lt_lapack_batch *b, const lt_tensor *src, bool src_T, lt_dtype dt, int nbatch,
                         const int64_t *batch);
/* A batch of src's own batch dims (all but its last two) holding its matrices cast to dt,
** each the top left corner of a zeroed rows x cols matrix (rows, cols >= src's): room for
** LAPACK to write more than it reads (a complete Q in place of a wide A). */
int lt_lapack_batch_padded(lt_lapack_batch *b, const lt_tensor *src, lt_dtype dt, int64_t rows, int64_t cols);
/* the data of matrix i */
void *lt_lapack_batch_at(const lt_lapack_batch *b, int64_t i);
/* The batch as a (batch..., rows, cols) tensor, or (batch..., cols, rows) when
** transposed: a new reference to a view of buf, which stays owned by b. */
lt_tensor *lt_lapack_batch_tensor(const lt_lapack_batch *b, bool transposed);
/* The (batch..., r, c) view of the top left r x c corner of each matrix (r <= rows,
** c <= cols), column-major: a new reference, buf stays owned by b. */
lt_tensor *lt_lapack_batch_view(const lt_lapack_batch *b, int64_t r, int64_t c);
/* the first matrix (0-based) holding a NaN or an infinity, or -1 when all are finite: the
** eigen and singular value drivers loop, fail or give garbage on them. Floating dtypes,
** real or complex (both parts are looked at). */
int64_t lt_lapack_batch_first_nonfinite(const lt_lapack_batch *b);
/* releases buf (NULL-safe; b may be zeroed) */
void lt_lapack_batch_release(lt_lapack_batch *b);

/* fn(ctx, i) for every i in [0, count): on the thread pool when the
** matrices are small enough (order <= 128) and many, else in order on this
** thread, where OpenBLAS threads each call itself. fn must not call lt_error
** (it may run on a pool thread); it returns 0, or -1 for a failure that the
** caller reports (an allocation). Returns -1 when any call failed. */
typedef int (*lt_lapack_batch_fn)(void *ctx, int64_t i);
int lt_lapack_batch_run(int64_t count, int64_t order, lt_lapack_batch_fn fn, void *ctx);
/* The same loop for routines whose status is LAPACK's info: fn returns it (0 ok; the
** caller's own code, e.g. < -999, for a failed allocation). work is a rough cost of one
** call (n^3 for an n x n factorisation): small matrices are spread over the pool, a
** large one gets OpenBLAS's threads. Returns 0, or the info of the first failing matrix
** with *bad its index (0-based). */
int lt_lapack_batch_each(int64_t count, double work, lt_lapack_batch_fn fn, void *ctx, int64_t *bad);

/* The error of a failed batch, -1: LAPACK's info for matrix `bad` (0-based) of op, with
** `positive` saying what an info > 0 means; info <= -1000 is a failed allocation. */
int lt_lapack_failed(const char *op, int info, int64_t bad, const char *positive);
/* The error naming the first matrix of b that holds NaN or inf in argument arg, -1;
** 0 when all are finite. */
int lt_lapack_check_finite(const char *op, const char *arg, const lt_lapack_batch *b);

/* v as a LAPACK dimension, or -1 with an error naming op when it is more than 32 bits hold */
int lt_lapack_dim(const char *op, int64_t v, int *out);

/* A new int32 tensor of the batch dims (the info codes, the pivots' batch...) with
** `extra` trailing dims of sizes tail (NULL when extra is 0) */
lt_tensor *lt_lapack_int_tensor(lt_device dev, int nbatch, const int64_t *batch, int extra, const int64_t *tail);

#endif
