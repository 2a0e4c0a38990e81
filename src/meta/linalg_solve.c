/*
** linalg_solve.c — the argument checks and right-hand-side rules of the
** solvers and factorizations (meta/linalg_solve.h), and the words of their
** failures: one place, so the CPU kernels, the composites and any later
** backend say the same thing.
*/
#include <stdio.h>
#include <string.h>
#include "meta/linalg_solve.h"
#include "meta/meta.h"

int lt_meta_linalg_floating(const char *op, const char *arg, const lt_tensor *a) {
  lt_dtype d = lt_tensor_dtype(a);
  if (d == LT_FLOAT32 || d == LT_FLOAT64 || d == LT_COMPLEX64 || d == LT_COMPLEX128) return 0;
  return lt_error("%s: argument '%s' must be float32, float64, complex64 or complex128, got %s", op, arg,
                  lt_dtype_name(d));
}

int lt_meta_linalg_matrix(const char *op, const char *arg, const lt_tensor *a, bool square) {
  if (lt_meta_linalg_floating(op, arg, a)) return -1;
  if (a->ndim < 2)
    return lt_error("%s: argument '%s' must have at least 2 dimensions (a matrix or a batch of them), got %d-D",
                    op, arg, a->ndim);
  if (square && a->sizes[a->ndim - 1] != a->sizes[a->ndim - 2])
    return lt_error("%s: argument '%s' must be a batch of square matrices, but it has shape %lld x %lld", op, arg,
                    (long long)a->sizes[a->ndim - 2], (long long)a->sizes[a->ndim - 1]);
  return 0;
}

int lt_meta_linalg_same_dtype(const char *op, const char *an, const lt_tensor *a, const char *bn, const lt_tensor *b) {
  if (a->dtype == b->dtype) return 0;
  return lt_error("%s: expected '%s' and '%s' to have the same dtype, but got %s and %s", op, an, bn,
                  lt_dtype_name((lt_dtype)a->dtype), lt_dtype_name((lt_dtype)b->dtype));
}

int lt_meta_linalg_batch(const char *op, const char *arg, const lt_tensor *a, int keep, int nb, const int64_t *batch,
                         int64_t *out) {
  int na = a->ndim - keep;
  int k = lt_broadcast_shapes(op, nb, batch, na, a->sizes, out);
  if (k < 0) {
    char b1[128], b2[128];
    return lt_error("%s: the batch dims of argument '%s' (%s) do not broadcast with %s", op, arg,
                    lt_shape_str(na, a->sizes, b1, sizeof b1), lt_shape_str(nb, batch, b2, sizeof b2));
  }
  return k;
}

/* is b the vector case of A X = B: 1-D, or A's shape without its last dim */
static bool vector_rhs(const lt_tensor *a, const lt_tensor *b) {
  if (b->ndim == 1) return true;
  if (b->ndim != a->ndim - 1) return false;
  for (int i = 0; i < b->ndim; i++)
    if (b->sizes[i] != a->sizes[i]) return false;
  return true;
}

int lt_meta_linalg_rhs(const char *op, const char *an, const lt_tensor *a, const char *bn, const lt_tensor *b,
                       bool left, bool matrix_only, lt_linalg_rhs *g) {
  if (lt_meta_linalg_matrix(op, an, a, true)) return -1;
  if (lt_meta_linalg_floating(op, bn, b) || lt_meta_linalg_same_dtype(op, an, a, bn, b)) return -1;
  memset(g, 0, sizeof *g);
  g->n = a->sizes[a->ndim - 1];
  g->vector = !matrix_only && vector_rhs(a, b);
  if (!g->vector && b->ndim < 2)
    return lt_error("%s: argument '%s' must have at least 2 dimensions (a matrix or a batch of them), got %d-D",
                    op, bn, b->ndim);
  int keep = g->vector ? 1 : 2;
  /* the dim of B that meets A: its rows (left) or its columns (right) */
  int64_t meet = g->vector ? b->sizes[b->ndim - 1] : left ? b->sizes[b->ndim - 2] : b->sizes[b->ndim - 1];
  if (meet != g->n) {
    char b1[128], b2[128];
    return lt_error("%s: argument '%s' (shape %s) does not fit '%s' (shape %s): it needs %lld %s, got %lld", op, bn,
                    lt_shape_str(b->ndim, b->sizes, b1, sizeof b1), an, lt_shape_str(a->ndim, a->sizes, b2, sizeof b2),
                    (long long)g->n, g->vector ? "entries" : left ? "rows" : "columns", (long long)meet);
  }
  g->k = g->vector ? 1 : left ? b->sizes[b->ndim - 1] : b->sizes[b->ndim - 2];
  int64_t ab[LT_MAX_DIMS];
  int na = a->ndim - 2;
  memcpy(ab, a->sizes, sizeof(int64_t) * (size_t)na);
  int nb = lt_meta_linalg_batch(op, bn, b, keep, na, ab, g->batch);
  if (nb < 0) return -1;
  g->nbatch = nb;
  return 0;
}

int lt_meta_linalg_info_error(const char *op, lt_linalg_failure kind, const int32_t *info, int64_t n, bool batched) {
  for (int64_t i = 0; i < n; i++) {
    int32_t c = info[i];
    if (c == 0) continue;
    char where[64] = "";
    if (batched) snprintf(where, sizeof where, " at batch index %lld", (long long)i + 1);
    if (c < 0)
      return lt_error("%s: LAPACK rejected argument %d for the matrix%s (a bug in lutorch)", op, -c, where);
    if (kind == LT_LINALG_SINGULAR)
      return lt_error("%s: the matrix%s is singular (U[%d,%d] is zero)", op, where, c, c);
    return lt_error("%s: the matrix%s is not positive-definite (the leading minor of order %d is not positive)",
                    op, where, c);
  }
  return 0;
}

int lt_meta_linalg_pivots(const char *op, const lt_tensor *piv, int64_t n) {
  if (piv->dtype != LT_INT32)
    return lt_error("%s: argument 'pivots' must be int32 (as linalg.lu_factor returns it), got %s", op,
                    lt_dtype_name((lt_dtype)piv->dtype));
  if (piv->ndim < 1 || piv->sizes[piv->ndim - 1] != n)
    return lt_error("%s: argument 'pivots' must have %lld entries in its last dim (one per row swap of LU)", op,
                    (long long)n);
  return 0;
}

int lt_meta_lstsq_driver(const char *op, const char *d, lt_lstsq_driver *k) {
  static const char *names[] = { "gels", "gelsy", "gelsd", "gelss" };
  if (!d) { *k = LT_LSTSQ_GELSY; return 0; }
  for (int i = 0; i < 4; i++)
    if (strcmp(d, names[i]) == 0) { *k = (lt_lstsq_driver)i; return 0; }
  return lt_error("%s: argument 'driver' must be one of \"gels\", \"gelsy\", \"gelsd\" or \"gelss\" on the CPU, got \"%s\"",
                  op, d);
}

int lt_meta_lstsq_shape(const char *op, const lt_tensor *A, const lt_tensor *B, int64_t *batch) {
  if (lt_meta_linalg_matrix(op, "A", A, false) || lt_meta_linalg_matrix(op, "B", B, false) ||
      lt_meta_linalg_same_dtype(op, "A", A, "B", B))
    return -1;
  int na = A->ndim - 2;
  int64_t m = A->sizes[na];
  if (B->sizes[B->ndim - 2] != m)
    return lt_error("%s: argument 'B' must have as many rows as 'A' (%lld), got %lld", op, (long long)m,
                    (long long)B->sizes[B->ndim - 2]);
  return lt_meta_linalg_batch(op, "B", B, 2, na, A->sizes, batch);
}

int lt_meta_t7_square(const char *op, const lt_tensor *a) {
  if (lt_meta_check_f32_or_f64(op, "self", a) < 0) return -1;
  if (a->ndim != 2) return lt_error("%s: argument 'self' must be a 2-D matrix, got %d-D", op, a->ndim);
  if (a->sizes[0] != a->sizes[1])
    return lt_error("%s: argument 'self' must be a square matrix, got %lldx%lld", op,
                    (long long)a->sizes[0], (long long)a->sizes[1]);
  if (a->sizes[0] > 0x7fffffff) return lt_error("%s: argument 'self' is too large for LAPACK", op);
  return 0;
}

int lt_meta_lu_factor(const char *op, const lt_tensor *A, bool pivot) {
  if (lt_meta_linalg_matrix(op, "A", A, false)) return -1;
  if (!pivot)
    return lt_error("%s: LU without pivoting (pivot=false) is not implemented on the CPU (LAPACK always pivots)", op);
  return 0;
}
