/*
** linalg_solve.h — the device-neutral checks of the solvers and
** factorizations (src/ops/linalg_solve.lua): what a square matrix argument
** must be, how a right-hand side is read (vector or matrix, PyTorch's rule)
** and broadcast against the batch, and the message for an info code that a
** factorization returned. The CPU kernels (src/cpu/linalg_solve*.c) and the
** composites (src/composite/linalg_solve.c) share them, and a CUDA backend
** would too, so every backend rejects the same input with the same words.
*/
#ifndef LT_META_LINALG_SOLVE_H
#define LT_META_LINALG_SOLVE_H

#include "core/tensor.h"

/* arg is float32, float64, complex64 or complex128: the dtypes LAPACK has */
int lt_meta_linalg_floating(const char *op, const char *arg, const lt_tensor *a);
/* arg is such a tensor of >= 2 dims; square too when `square` */
int lt_meta_linalg_matrix(const char *op, const char *arg, const lt_tensor *a, bool square);
/* b has a's dtype (argument names an and bn) */
int lt_meta_linalg_same_dtype(const char *op, const char *an, const lt_tensor *a, const char *bn, const lt_tensor *b);

/* How A X = B (left) or X A = B reads: A is (*, n, n); B is a vector (*, n)
** when it is 1-D or has A's shape without the last dim, else a matrix
** (*, n, k) (left) or (*, k, n). batch is the broadcast of the two batches. */
typedef struct lt_linalg_rhs {
  bool vector;
  int nbatch;
  int64_t batch[LT_MAX_DIMS];
  int64_t n, k;          /* A's order, B's number of right-hand sides (1 for a vector) */
} lt_linalg_rhs;

/* Reads B against the square A (checked) and fills g; the messages name the
** arguments an and bn. matrix_only: B must be a matrix (lu_solve, solve_triangular). */
int lt_meta_linalg_rhs(const char *op, const char *an, const lt_tensor *a, const char *bn, const lt_tensor *b,
                       bool left, bool matrix_only, lt_linalg_rhs *g);

/* The batch dims of a (all but the last `keep`) broadcast with `batch` into out; returns the count or -1 */
int lt_meta_linalg_batch(const char *op, const char *arg, const lt_tensor *a, int keep, int nb, const int64_t *batch,
                         int64_t *out);

/* What a nonzero info code of a factorization means */
typedef enum {
  LT_LINALG_SINGULAR,    /* LU: U[i,i] is exactly zero */
  LT_LINALG_NOT_PD       /* Cholesky: the leading minor of order i is not positive */
} lt_linalg_failure;

/* The error for the first nonzero entry of info[0..n) (int32 codes, LAPACK's
** 1-based i), naming the batch element (1-based, row-major over the batch)
** when batched. Returns 0 when every code is zero, else -1 with the error set. */
int lt_meta_linalg_info_error(const char *op, lt_linalg_failure kind, const int32_t *info, int64_t n, bool batched);

/* lu_solve's and lu_unpack's pivots: int32 with n entries in the last dim (their values,
** 1..rows, are the data's: a backend with data checks them itself) */
int lt_meta_linalg_pivots(const char *op, const lt_tensor *piv, int64_t n);
/* lu_factor's A (a batch of matrices) and its pivot flag: LAPACK always pivots, so
** pivot=false is refused (as PyTorch refuses it on the CPU). 0, or -1 with the error. */
int lt_meta_lu_factor(const char *op, const lt_tensor *A, bool pivot);

/* linalg.lstsq's LAPACK driver, by name (NULL: gelsy) */
typedef enum { LT_LSTSQ_GELS, LT_LSTSQ_GELSY, LT_LSTSQ_GELSD, LT_LSTSQ_GELSS } lt_lstsq_driver;
int lt_meta_lstsq_driver(const char *op, const char *driver, lt_lstsq_driver *k);
/* lstsq's A (*, m, n) and B (*, m, k): matrices of one dtype with A's rows; the broadcast
** batch into batch. Returns its dim count or -1. */
int lt_meta_lstsq_shape(const char *op, const lt_tensor *A, const lt_tensor *B, int64_t *batch);

/* Torch7's pstrf and eig (src/ops/linalg_t7.lua): one 2-D square float32/float64 matrix 'self' */
int lt_meta_t7_square(const char *op, const lt_tensor *a);

#endif
