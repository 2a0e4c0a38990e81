/*
** linalg_spectral.c — the checks of meta/linalg_spectral.h: shapes, dtypes and
** string options of QR, eigh, SVD, householder_product and ormqr.
*/
#include <string.h>
#include "meta/linalg_spectral.h"
#include "meta/meta.h"
#include "core/error.h"
#include "core/dtype.h"

int lt_meta_spectral_matrix(const char *op, const char *arg, const lt_tensor *t, bool square) {
  char b[128];
  if (t->ndim < 2)
    return lt_error("%s: argument '%s' must have at least 2 dims (a batch of matrices), got %d", op, arg, t->ndim);
  lt_dtype d = lt_tensor_dtype(t);
  if (d != LT_FLOAT32 && d != LT_FLOAT64 && d != LT_COMPLEX64 && d != LT_COMPLEX128)
    return lt_error("%s: argument '%s' must be float32, float64, complex64 or complex128, got %s",
                    op, arg, lt_dtype_name(d));
  if (square && t->sizes[t->ndim - 1] != t->sizes[t->ndim - 2])
    return lt_error("%s: argument '%s' must be a batch of square matrices, got shape %s", op, arg,
                    lt_shape_str(t->ndim, t->sizes, b, sizeof b));
  return 0;
}

int lt_meta_qr_mode(const char *op, const char *mode) {
  if (!mode || !strcmp(mode, "reduced")) return 0;
  if (!strcmp(mode, "complete")) return 1;
  if (!strcmp(mode, "r")) return 2;
  return lt_error("%s: argument 'mode' must be \"reduced\", \"complete\" or \"r\", got \"%s\"", op, mode);
}

char lt_meta_eigh_uplo(const char *op, const char *uplo) {
  if (!uplo) return 'L';
  if ((uplo[0] == 'L' || uplo[0] == 'l') && !uplo[1]) return 'L';
  if ((uplo[0] == 'U' || uplo[0] == 'u') && !uplo[1]) return 'U';
  lt_error("%s: argument 'UPLO' must be \"L\" or \"U\", got \"%s\"", op, uplo);
  return 0;
}

int lt_meta_same_batch(const char *op, const char *aname, const lt_tensor *a, int akeep,
                       const char *bname, const lt_tensor *b, int bkeep) {
  char s1[128], s2[128];
  int na = a->ndim - akeep, nb = b->ndim - bkeep;
  bool same = na == nb && na >= 0;
  for (int i = 0; same && i < na; i++) same = a->sizes[i] == b->sizes[i];
  if (!same)
    return lt_error("%s: argument '%s' of shape %s does not match the batch dims of argument '%s' of shape %s",
                    op, bname, lt_shape_str(b->ndim, b->sizes, s2, sizeof s2), aname,
                    lt_shape_str(a->ndim, a->sizes, s1, sizeof s1));
  return 0;
}

static int check_tau(const char *op, const lt_tensor *a, const lt_tensor *tau, int64_t kmax, const char *what) {
  if (tau->ndim < 1) return lt_error("%s: argument 'tau' must have at least 1 dim", op);
  if (tau->dtype != a->dtype)
    return lt_error("%s: argument 'tau' must have the dtype of the reflectors (%s), got %s", op,
                    lt_dtype_name(lt_tensor_dtype(a)), lt_dtype_name(lt_tensor_dtype(tau)));
  if (lt_meta_same_batch(op, "A", a, 2, "tau", tau, 1) < 0) return -1;
  if (tau->sizes[tau->ndim - 1] > kmax)
    return lt_error("%s: argument 'tau' has %lld scales, more than %s (%lld)", op,
                    (long long)tau->sizes[tau->ndim - 1], what, (long long)kmax);
  return 0;
}

int lt_meta_householder(const char *op, const lt_tensor *a, const lt_tensor *tau) {
  if (lt_meta_spectral_matrix(op, "A", a, false) < 0) return -1;
  int64_t m = a->sizes[a->ndim - 2], n = a->sizes[a->ndim - 1];
  if (m < n) return lt_error("%s: argument 'A' must have at least as many rows as columns, got %lld x %lld", op,
                             (long long)m, (long long)n);
  return check_tau(op, a, tau, n, "A's columns");
}

int lt_meta_ormqr(const char *op, const lt_tensor *a, const lt_tensor *tau, const lt_tensor *c, bool left) {
  if (lt_meta_spectral_matrix(op, "self", a, false) < 0) return -1;
  if (lt_meta_spectral_matrix(op, "input3", c, false) < 0) return -1;
  if (c->dtype != a->dtype)
    return lt_error("%s: argument 'input3' must have the dtype of self (%s), got %s", op,
                    lt_dtype_name(lt_tensor_dtype(a)), lt_dtype_name(lt_tensor_dtype(c)));
  if (lt_meta_same_batch(op, "self", a, 2, "input3", c, 2) < 0) return -1;
  int64_t mn = a->sizes[a->ndim - 2], k = a->sizes[a->ndim - 1];
  int64_t need = left ? c->sizes[c->ndim - 2] : c->sizes[c->ndim - 1];
  if (mn != need)
    return lt_error("%s: argument 'self' has %lld rows but input3 has %lld %s", op, (long long)mn, (long long)need,
                    left ? "rows (left = true)" : "columns (left = false)");
  int64_t kmax = k < mn ? k : mn;
  if (lt_meta_same_batch(op, "self", a, 2, "input2", tau, 1) < 0) return -1;
  if (tau->dtype != a->dtype)
    return lt_error("%s: argument 'input2' must have the dtype of self (%s), got %s", op,
                    lt_dtype_name(lt_tensor_dtype(a)), lt_dtype_name(lt_tensor_dtype(tau)));
  if (tau->sizes[tau->ndim - 1] > kmax)
    return lt_error("%s: argument 'input2' has %lld scales, more than self's reflectors (%lld)", op,
                    (long long)tau->sizes[tau->ndim - 1], (long long)kmax);
  return 0;
}

int lt_meta_spectral_trsolve(const char *op, const lt_tensor *a, const lt_tensor *b) {
  if (lt_meta_spectral_matrix(op, "A", a, true) < 0 || lt_meta_spectral_matrix(op, "B", b, false) < 0) return -1;
  if (a->dtype != b->dtype)
    return lt_error("%s: argument 'B' must have A's dtype (%s), got %s", op, lt_dtype_name((lt_dtype)a->dtype),
                    lt_dtype_name((lt_dtype)b->dtype));
  if (lt_meta_same_batch(op, "A", a, 2, "B", b, 2) < 0) return -1;
  int64_t n = a->sizes[a->ndim - 1];
  if (b->sizes[b->ndim - 2] != n)
    return lt_error("%s: argument 'B' must have %lld rows (A's size), got %lld", op, (long long)n,
                    (long long)b->sizes[b->ndim - 2]);
  return 0;
}
