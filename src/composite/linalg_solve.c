/*
** linalg_solve.c — the composites of src/ops/linalg_solve.lua: the raising
** forms over the _ex kernels (solve, inv, cholesky, lu_factor), the old
** names (inverse, det, slogdet, logdet, cholesky_solve, cholesky_inverse,
** triangular_solve, lu), lu_unpack, matrix_power, matrix_exp, multi_dot and
** the small ones (cross, vander, diagonal). Each is written with entry points,
** so autograd records every step and nothing here has a derivative of its own.
** An inner op's error is passed on under the name of the op the user called.
** Complex matrices go through the same code: where a formula has A^T for
** real A it has A^H for complex (cholesky_solve's factors).
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lt_ops.h"
#include "core/backend.h"
#include "meta/linalg_solve.h"

/* The error slot's message under op's name: an inner op's name ("linalg.solve_ex: ...")
** is replaced, a message without one is prefixed. Returns -1. */
static int fail_as(const char *op) {
  const char *m = lt_error_message();
  char buf[768];
  const char *colon = strstr(m, ": ");
  bool named = colon && colon - m < 40 && memchr(m, ' ', (size_t)(colon - m)) == NULL;
  snprintf(buf, sizeof buf, "%s", named ? colon + 2 : m);
  return lt_error("%s: %s", op, buf);
}
static void *fail_null(const char *op) { fail_as(op); return NULL; }

/* the info codes (int32, any device) through meta's message; 0 when all are 0. On the
** meta device there are no codes to read: nothing is refused, as PyTorch's meta does */
static int check_info(const char *op, lt_linalg_failure kind, lt_tensor *info, bool batched) {
  if (LT_IS_META(info)) return 0;
  lt_tensor *h = lt_tensor_to_host(info);
  lt_tensor *c = h ? lt_tensor_contiguous(h) : NULL;
  int rc = c ? lt_meta_linalg_info_error(op, kind, lt_tensor_data(c), c->numel, batched) : -1;
  lt_tensor_release(c);
  lt_tensor_release(h);
  return rc;
}

static lt_tensor *mT(lt_tensor *t) { return lt_transpose(t, t->ndim - 2, t->ndim - 1); }

/* the conjugate transpose: mT for a real t */
static lt_tensor *mH(lt_tensor *t) {
  lt_tensor *r = mT(t);
  if (!r || !lt_dtype_is_complex((lt_dtype)t->dtype)) return r;
  lt_tensor *c = lt_conj(r);
  lt_tensor_release(r);
  return c;
}

/* the identity with A's shape (*, n, n): an expanded view */
static lt_tensor *eye_like(lt_tensor *A) {
  int64_t n = A->sizes[A->ndim - 1];
  lt_tensor *e = lt_eye(n, LT_NOINT, (int)A->dtype, lt_tensor_device(A));
  lt_tensor *r = e ? lt_expand(e, lt_intlist_make(A->sizes, A->ndim)) : NULL;
  lt_tensor_release(e);
  return r;
}

static lt_tensor *scalar(double v) { return lt_tensor_wrapped_number(lt_scalar_float(v)); }

/* ---- solve and inverse ---- */

lt_tensor *lt_composite_linalg_solve(lt_tensor *A, lt_tensor *B, bool left) {
  const char *op = "linalg.solve";
  lt_tensor *x = NULL, *info = NULL;
  if (lt_linalg_solve_ex(A, B, left, false, &x, &info)) return fail_null(op);
  int rc = check_info(op, LT_LINALG_SINGULAR, info, A->ndim > 2);
  lt_tensor_release(info);
  if (rc) { lt_tensor_release(x); return NULL; }
  return x;
}

static int inv_ex(const char *op, lt_tensor *A, bool check_errors, lt_tensor **inverse, lt_tensor **info) {
  if (lt_meta_linalg_matrix(op, "A", A, true)) return -1;
  lt_tensor *I = eye_like(A);
  int rc = I ? lt_linalg_solve_ex(A, I, true, false, inverse, info) : -1;
  lt_tensor_release(I);
  if (rc) return fail_as(op);
  if (check_errors && check_info(op, LT_LINALG_SINGULAR, *info, A->ndim > 2)) {
    lt_tensor_release(*inverse);
    lt_tensor_release(*info);
    *inverse = *info = NULL;   /* the caller releases what the outputs hold */
    return -1;
  }
  return 0;
}

int lt_composite_linalg_inv_ex(lt_tensor *A, bool check_errors, lt_tensor **inverse, lt_tensor **info) {
  return inv_ex("linalg.inv_ex", A, check_errors, inverse, info);
}

static lt_tensor *inv(const char *op, lt_tensor *A) {
  lt_tensor *r = NULL, *info = NULL;
  if (inv_ex(op, A, true, &r, &info)) return NULL;
  lt_tensor_release(info);
  return r;
}
lt_tensor *lt_composite_linalg_inv(lt_tensor *A) { return inv("linalg.inv", A); }
lt_tensor *lt_composite_inverse(lt_tensor *self) { return inv("inverse", self); }

/* ---- determinants ---- */

lt_tensor *lt_composite_det(lt_tensor *self) {
  lt_tensor *r = lt_linalg_det(self);
  return r ? r : fail_null("det");
}

static int slogdet(const char *op, lt_tensor *A, lt_tensor **sign, lt_tensor **logabsdet) {
  return lt__linalg_slogdet(A, logabsdet, sign) ? fail_as(op) : 0;
}
int lt_composite_linalg_slogdet(lt_tensor *A, lt_tensor **sign, lt_tensor **logabsdet) {
  return slogdet("linalg.slogdet", A, sign, logabsdet);
}
int lt_composite_slogdet(lt_tensor *self, lt_tensor **sign, lt_tensor **logabsdet) {
  return slogdet("slogdet", self, sign, logabsdet);
}

lt_tensor *lt_composite_logdet(lt_tensor *self) {
  lt_tensor *sign = NULL, *logabs = NULL;
  if (slogdet("logdet", self, &sign, &logabs)) return NULL;
  /* log(sign) is 0 for a positive determinant, nan for a negative one, -inf (with logabs) for zero */
  lt_tensor *ls = lt_log(sign);
  lt_tensor *r = ls ? lt_add(logabs, ls, lt_scalar_int(1)) : NULL;
  lt_tensor_release(ls);
  lt_tensor_release(sign);
  lt_tensor_release(logabs);
  return r ? r : fail_null("logdet");
}

/* ---- Cholesky ---- */

static lt_tensor *cholesky(const char *op, lt_tensor *A, bool upper) {
  lt_tensor *L = NULL, *info = NULL;
  if (lt_linalg_cholesky_ex(A, upper, false, &L, &info)) return fail_null(op);
  int rc = check_info(op, LT_LINALG_NOT_PD, info, A->ndim > 2);
  lt_tensor_release(info);
  if (rc) { lt_tensor_release(L); return NULL; }
  return L;
}
lt_tensor *lt_composite_linalg_cholesky(lt_tensor *A, bool upper) { return cholesky("linalg.cholesky", A, upper); }
lt_tensor *lt_composite_cholesky(lt_tensor *self, bool upper) { return cholesky("cholesky", self, upper); }

/* A X = B with A = L L^H (or U^H U): two triangular solves */
static lt_tensor *cholesky_solve(const char *op, lt_tensor *B, lt_tensor *F, bool upper) {
  if (lt_meta_linalg_matrix(op, "input2", F, true)) return NULL;
  lt_tensor *Ft = mH(F);
  if (!Ft) return fail_null(op);
  /* lower: L (L^H X) = B; upper: U^H (U X) = B */
  lt_tensor *Y = lt_linalg_solve_triangular(upper ? Ft : F, B, false, true, false);
  lt_tensor *X = Y ? lt_linalg_solve_triangular(upper ? F : Ft, Y, true, true, false) : NULL;
  lt_tensor_release(Y);
  lt_tensor_release(Ft);
  return X ? X : fail_null(op);
}

lt_tensor *lt_composite_cholesky_solve(lt_tensor *self, lt_tensor *input2, bool upper) {
  return cholesky_solve("cholesky_solve", self, input2, upper);
}

lt_tensor *lt_composite_cholesky_inverse(lt_tensor *self, bool upper) {
  if (lt_meta_linalg_matrix("cholesky_inverse", "self", self, true)) return NULL;
  lt_tensor *I = eye_like(self);
  lt_tensor *r = I ? cholesky_solve("cholesky_inverse", I, self, upper) : NULL;
  lt_tensor_release(I);
  return r;
}

int lt_composite_triangular_solve(lt_tensor *self, lt_tensor *A, bool upper, bool transpose, bool unitriangular,
                                  lt_tensor **solution, lt_tensor **cloned_coefficient) {
  const char *op = "triangular_solve";
  if (lt_meta_linalg_matrix(op, "A", A, true)) return -1;
  /* transpose is A^T, not A^H, for complex A too (PyTorch's) */
  lt_tensor *At = transpose ? mT(A) : (lt_tensor_retain(A), A);
  lt_tensor *X = At ? lt_linalg_solve_triangular(At, self, transpose ? !upper : upper, true, unitriangular) : NULL;
  lt_tensor_release(At);
  lt_tensor *C = X ? lt_clone(A) : NULL;
  if (!C) { lt_tensor_release(X); return fail_as(op); }
  *solution = X;
  *cloned_coefficient = C;
  return 0;
}

/* ---- LU ---- */

int lt_composite_linalg_lu_factor(lt_tensor *A, bool pivot, lt_tensor **LU, lt_tensor **pivots) {
  const char *op = "linalg.lu_factor";
  lt_tensor *info = NULL;
  if (lt_linalg_lu_factor_ex(A, pivot, false, LU, pivots, &info)) return fail_as(op);
  /* a zero on U's diagonal would divide by zero in lu_solve: PyTorch refuses it here (not on meta: no data) */
  if (LT_IS_META(info)) { lt_tensor_release(info); return 0; }
  lt_tensor *h = lt_tensor_to_host(info);
  lt_tensor *c = h ? lt_tensor_contiguous(h) : NULL;
  int rc = c ? 0 : -1;
  const int32_t *v = c ? lt_tensor_data(c) : NULL;
  for (int64_t i = 0; c && i < c->numel; i++)
    if (v[i] > 0) {
      char where[64] = "";
      if (A->ndim > 2) snprintf(where, sizeof where, " at batch index %lld", (long long)i + 1);
      rc = lt_error("%s: the matrix%s is singular (U[%d,%d] is zero), so lu_solve would divide by zero; "
                    "linalg.lu or linalg.lu_factor_ex factor it anyway", op, where, (int)v[i], (int)v[i]);
      break;
    }
  lt_tensor_release(c);
  lt_tensor_release(h);
  lt_tensor_release(info);
  if (rc) { lt_tensor_release(*LU); lt_tensor_release(*pivots); *LU = *pivots = NULL; }
  return rc;
}

static lt_tensor *empty_of(lt_tensor *t) {
  int64_t z = 0;
  return lt_tensor_new((lt_dtype)t->dtype, lt_tensor_device(t), 1, &z);
}

static int lu_unpack(const char *op, lt_tensor *LU, lt_tensor *pivots, bool unpack_data, bool unpack_pivots,
                     lt_tensor **P, lt_tensor **L, lt_tensor **U) {
  if (lt_meta_linalg_matrix(op, "LU_data", LU, false)) return -1;
  int nd = LU->ndim;
  int64_t m = LU->sizes[nd - 2], n = LU->sizes[nd - 1], k = m < n ? m : n;
  *P = *L = *U = NULL;
  if (unpack_data) {
    lt_tensor *low = lt_narrow(LU, nd - 1, 0, k);
    lt_tensor *sl = low ? lt_tril(low, -1) : NULL;
    lt_tensor *e = sl ? lt_eye(m, k, (int)LU->dtype, lt_tensor_device(LU)) : NULL;
    *L = e ? lt_add(sl, e, lt_scalar_int(1)) : NULL;
    lt_tensor_release(low); lt_tensor_release(sl); lt_tensor_release(e);
    lt_tensor *up = *L ? lt_narrow(LU, nd - 2, 0, k) : NULL;
    *U = up ? lt_triu(up, 0) : NULL;
    lt_tensor_release(up);
  } else {
    *L = empty_of(LU);
    *U = *L ? empty_of(LU) : NULL;
  }
  if (*U) *P = unpack_pivots ? lt__lu_permutation(LU, pivots) : empty_of(LU);
  if (!*P) {
    lt_tensor_release(*L); lt_tensor_release(*U);
    *L = *U = NULL;
    return fail_as(op);
  }
  return 0;
}

int lt_composite_lu_unpack(lt_tensor *LU_data, lt_tensor *LU_pivots, bool unpack_data, bool unpack_pivots,
                           lt_tensor **P, lt_tensor **L, lt_tensor **U) {
  return lu_unpack("lu_unpack", LU_data, LU_pivots, unpack_data, unpack_pivots, P, L, U);
}

int lt_composite_linalg_lu(lt_tensor *A, bool pivot, lt_tensor **P, lt_tensor **L, lt_tensor **U) {
  const char *op = "linalg.lu";
  lt_tensor *LU = NULL, *piv = NULL, *info = NULL;
  if (lt_linalg_lu_factor_ex(A, pivot, false, &LU, &piv, &info)) return fail_as(op);
  int rc = lu_unpack(op, LU, piv, true, true, P, L, U);
  lt_tensor_release(LU); lt_tensor_release(piv); lt_tensor_release(info);
  return rc;
}

int lt_composite_lu(lt_tensor *self, bool pivot, bool get_infos, lt_tensor **LU, lt_tensor **pivots,
                    lt_tensor **infos) {
  /* without get_infos a singular matrix is an error, as torch.lu */
  if (lt_linalg_lu_factor_ex(self, pivot, false, LU, pivots, infos)) return fail_as("lu");
  if (!get_infos && check_info("lu", LT_LINALG_SINGULAR, *infos, self->ndim > 2)) {
    lt_tensor_release(*LU); lt_tensor_release(*pivots); lt_tensor_release(*infos);
    *LU = *pivots = *infos = NULL;
    return -1;
  }
  return 0;
}

lt_tensor *lt_composite_lu_solve(lt_tensor *self, lt_tensor *LU_data, lt_tensor *LU_pivots) {
  lt_tensor *r = lt_linalg_lu_solve(LU_data, LU_pivots, self, true, false);
  return r ? r : fail_null("lu_solve");
}

/* ---- matrix_power ---- */

static lt_tensor *matrix_power(const char *op, lt_tensor *A, int64_t n) {
  if (lt_meta_linalg_matrix(op, "A", A, true)) return NULL;
  if (n == 0) {   /* the identity, as a tensor of its own */
    lt_tensor *I = eye_like(A);
    lt_tensor *r = I ? lt_contiguous(I) : NULL;
    lt_tensor_release(I);
    return r ? r : fail_null(op);
  }
  lt_tensor *base = n < 0 ? inv(op, A) : (lt_tensor_retain(A), A);
  if (!base) return NULL;
  uint64_t e = n < 0 ? (uint64_t)(-(n + 1)) + 1 : (uint64_t)n;
  lt_tensor *acc = NULL;
  /* binary powering: acc collects the squares of base at e's one bits */
  while (base) {
    if (e & 1) {
      lt_tensor *t = acc ? lt_matmul(acc, base) : (lt_tensor_retain(base), base);
      lt_tensor_release(acc);
      acc = t;
      if (!acc) break;
    }
    e >>= 1;
    if (!e) break;
    lt_tensor *sq = lt_matmul(base, base);
    lt_tensor_release(base);
    base = sq;
    if (!base) { lt_tensor_release(acc); acc = NULL; }   /* no partial product on failure */
  }
  lt_tensor_release(base);
  if (!acc) return fail_null(op);
  if (n == 1 || n == -1) {   /* a new tensor, not A itself */
    lt_tensor *c = n == 1 ? lt_clone(acc) : (lt_tensor_retain(acc), acc);
    lt_tensor_release(acc);
    acc = c;
  }
  return acc ? acc : fail_null(op);
}

lt_tensor *lt_composite_linalg_matrix_power(lt_tensor *A, int64_t n) {
  return matrix_power("linalg.matrix_power", A, n);
}
lt_tensor *lt_composite_matrix_power(lt_tensor *self, int64_t n) { return matrix_power("matrix_power", self, n); }

/* ---- matrix_exp: scaling and squaring with the [13/13] Pade approximant ---- */

/* sum of c[i] * t[i] over the n terms (t[i] may be NULL for a zero coefficient's slot: skipped) */
static lt_tensor *lincomb(int n, const double *c, lt_tensor *const *t) {
  lt_tensor *acc = NULL;
  for (int i = 0; i < n; i++) {
    /* c[i] * t[i] as a product with a wrapped number, not add's alpha: main's
    ** add refuses a float alpha for complex tensors (meta's check takes them for integers) */
    lt_tensor *s = scalar(c[i]);
    lt_tensor *term = s ? lt_mul(t[i], s) : NULL;
    lt_tensor_release(s);
    lt_tensor *next = !term ? NULL : acc ? lt_add(acc, term, lt_scalar_int(1)) : (lt_tensor_retain(term), term);
    lt_tensor_release(term);
    lt_tensor_release(acc);
    acc = next;
    if (!acc) return NULL;
  }
  return acc;
}

/* a @ b + r, consuming nothing */
static lt_tensor *mm_plus(lt_tensor *a, lt_tensor *b, lt_tensor *r) {
  lt_tensor *p = lt_matmul(a, b);
  lt_tensor *s = p ? lt_add(p, r, lt_scalar_int(1)) : NULL;
  lt_tensor_release(p);
  return s;
}

/* the largest 1-norm (maximum column sum of |A|) over the batch, as a number */
static int max_norm1(lt_tensor *A, double *out) {
  int64_t d = -2;
  lt_tensor *a = lt_abs(A);
  lt_tensor *cs = a ? lt_sum(a, lt_intlist_make(&d, 1), false, -1) : NULL;
  lt_tensor *mx = cs ? lt_max(cs) : NULL;
  lt_scalar v = mx ? lt_tensor_item(mx) : lt_scalar_none();
  lt_tensor_release(a); lt_tensor_release(cs); lt_tensor_release(mx);
  if (lt_scalar_is_none(v)) return -1;
  *out = lt_scalar_to_double(v);
  return 0;
}

static lt_tensor *matrix_exp(const char *op, lt_tensor *A) {
  if (lt_meta_linalg_matrix(op, "A", A, true)) return NULL;
  if (A->numel == 0) return lt_clone(A);
  /* Higham (2005): the [13/13] approximant is accurate to double precision for
  ** 1-norms up to theta13; larger matrices are scaled by 2^-s and the result squared s times */
  static const double b[14] = { 64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
                                1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
                                33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0 };
  const double theta13 = 5.371920351148152;
  double norm;
  if (max_norm1(A, &norm)) return fail_null(op);
  int s = 0;
  if (norm > theta13 && isfinite(norm)) s = (int)ceil(log2(norm / theta13));
  lt_tensor *k = scalar(ldexp(1.0, -s));
  lt_tensor *X = k ? lt_mul(A, k) : NULL;
  lt_tensor_release(k);
  lt_tensor *I = X ? eye_like(A) : NULL;
  lt_tensor *X2 = I ? lt_matmul(X, X) : NULL;
  lt_tensor *X4 = X2 ? lt_matmul(X2, X2) : NULL;
  lt_tensor *X6 = X4 ? lt_matmul(X4, X2) : NULL;
  lt_tensor *U = NULL, *V = NULL, *R = NULL;
  if (X6) {
    lt_tensor *hiU_t[3] = { X6, X4, X2 }, *loU_t[4] = { X6, X4, X2, I };
    double hiU[3] = { b[13], b[11], b[9] }, loU[4] = { b[7], b[5], b[3], b[1] };
    double hiV[3] = { b[12], b[10], b[8] }, loV[4] = { b[6], b[4], b[2], b[0] };
    lt_tensor *h = lincomb(3, hiU, hiU_t), *l = h ? lincomb(4, loU, loU_t) : NULL;
    lt_tensor *inner = l ? mm_plus(X6, h, l) : NULL;
    U = inner ? lt_matmul(X, inner) : NULL;
    lt_tensor_release(h); lt_tensor_release(l); lt_tensor_release(inner);
    h = U ? lincomb(3, hiV, hiU_t) : NULL;
    l = h ? lincomb(4, loV, loU_t) : NULL;
    V = l ? mm_plus(X6, h, l) : NULL;
    lt_tensor_release(h); lt_tensor_release(l);
  }
  if (V) {
    /* (V - U) R = (V + U) */
    lt_tensor *P = lt_add(V, U, lt_scalar_int(1)), *Q = P ? lt_sub(V, U, lt_scalar_int(1)) : NULL;
    lt_tensor *info = NULL;
    if (Q && lt_linalg_solve_ex(Q, P, true, false, &R, &info) == 0) lt_tensor_release(info);
    lt_tensor_release(P); lt_tensor_release(Q);
  }
  for (int i = 0; R && i < s; i++) {
    lt_tensor *sq = lt_matmul(R, R);
    lt_tensor_release(R);
    R = sq;
  }
  lt_tensor_release(X); lt_tensor_release(I); lt_tensor_release(X2); lt_tensor_release(X4);
  lt_tensor_release(X6); lt_tensor_release(U); lt_tensor_release(V);
  return R ? R : fail_null(op);
}

lt_tensor *lt_composite_linalg_matrix_exp(lt_tensor *A) { return matrix_exp("linalg.matrix_exp", A); }
lt_tensor *lt_composite_matrix_exp(lt_tensor *self) { return matrix_exp("matrix_exp", self); }

/* ---- multi_dot: the chain in its cheapest order ---- */

/* the product of mats[i..j] split where split[i][j] says (n x n tables, row-major) */
static lt_tensor *chain(lt_tensor *const *mats, const int *split, int n, int i, int j) {
  if (i == j) { lt_tensor_retain(mats[i]); return mats[i]; }
  int s = split[i * n + j];
  lt_tensor *a = chain(mats, split, n, i, s), *b = a ? chain(mats, split, n, s + 1, j) : NULL;
  lt_tensor *r = b ? lt_mm(a, b) : NULL;
  lt_tensor_release(a);
  lt_tensor_release(b);
  return r;
}

lt_tensor *lt_composite_linalg_multi_dot(lt_tensor *const *tensors, int tensors_n) {
  const char *op = "linalg.multi_dot";
  int n = tensors_n;
  if (n < 2) return lt_error_null("%s: argument 'tensors' must hold at least 2 tensors, got %d", op, n);
  for (int i = 0; i < n; i++) {
    const lt_tensor *t = tensors[i];
    bool end = i == 0 || i == n - 1;
    if (!(t->ndim == 2 || (end && t->ndim == 1)))
      return lt_error_null("%s: tensor %d of 'tensors' must be 2-D%s, got %d-D", op, i + 1,
                           end ? " (or 1-D, as the first or last)" : "", t->ndim);
    if (t->dtype != tensors[0]->dtype)
      return lt_error_null("%s: every tensor must have one dtype, but tensor 1 is %s and tensor %d is %s", op,
                           lt_dtype_name((lt_dtype)tensors[0]->dtype), i + 1, lt_dtype_name((lt_dtype)t->dtype));
  }
  if (n == 2) {
    lt_tensor *r = lt_matmul(tensors[0], tensors[1]);
    return r ? r : fail_null(op);
  }
  bool row = tensors[0]->ndim == 1, col = tensors[n - 1]->ndim == 1;
  lt_tensor **m = calloc((size_t)n, sizeof *m);
  int64_t *p = malloc(sizeof(int64_t) * (size_t)(n + 1));
  double *cost = malloc(sizeof(double) * (size_t)(n * n));
  int *split = malloc(sizeof(int) * (size_t)(n * n));
  lt_tensor *r = NULL;
  if (!m || !p || !cost || !split) { lt_error("%s: out of memory", op); goto done; }
  for (int i = 0; i < n; i++) {
    lt_tensor *t = tensors[i];
    m[i] = i == 0 && row ? lt_unsqueeze(t, 0) : i == n - 1 && col ? lt_unsqueeze(t, 1) : (lt_tensor_retain(t), t);
    if (!m[i]) goto done;
    if (i > 0 && m[i]->sizes[0] != p[i]) {
      lt_error("%s: tensor %d of 'tensors' has %lld rows, but tensor %d has %lld columns", op, i + 1,
               (long long)m[i]->sizes[0], i, (long long)p[i]);
      goto done;
    }
    p[i] = m[i]->sizes[0];
    p[i + 1] = m[i]->sizes[1];
  }
  /* cost[i][j]: fewest multiply-adds for mats i..j (the classic chain order problem) */
  for (int i = 0; i < n; i++) cost[i * n + i] = 0;
  for (int len = 1; len < n; len++)
    for (int i = 0; i + len < n; i++) {
      int j = i + len;
      cost[i * n + j] = INFINITY;
      for (int s = i; s < j; s++) {
        double c = cost[i * n + s] + cost[(s + 1) * n + j] + (double)p[i] * (double)p[s + 1] * (double)p[j + 1];
        if (c < cost[i * n + j]) { cost[i * n + j] = c; split[i * n + j] = s; }
      }
    }
  r = chain(m, split, n, 0, n - 1);
  if (r && (row || col)) {
    lt_tensor *q = row ? lt_select(r, 0, 0) : (lt_tensor_retain(r), r);
    lt_tensor *q2 = q && col ? lt_select(q, -1, 0) : (q ? (lt_tensor_retain(q), q) : NULL);
    lt_tensor_release(q);
    lt_tensor_release(r);
    r = q2;
  }
  if (!r) fail_as(op);
done:
  for (int i = 0; m && i < n; i++) lt_tensor_release(m[i]);
  free(m); free(p); free(cost); free(split);
  return r;
}

/* ---- cross, vander, diagonal ---- */

lt_tensor *lt_composite_linalg_cross(lt_tensor *self, lt_tensor *other, int64_t dim) {
  lt_tensor *r = lt_cross(self, other, dim);
  return r ? r : fail_null("linalg.cross");
}

lt_tensor *lt_composite_linalg_vander(lt_tensor *x, int64_t N) {
  const char *op = "linalg.vander";
  if (x->ndim < 1) return lt_error_null("%s: argument 'x' must have at least one dimension, got a 0-d tensor", op);
  int64_t n = x->sizes[x->ndim - 1];
  if (N == LT_NOINT) N = n;
  if (N <= 1) return lt_error_null("%s: argument 'N' must be greater than 1, got %lld", op, (long long)N);
  /* cumprod of [1, x, x, ..., x] along a new last dim: the powers x^0 .. x^(N-1) */
  int64_t sz[LT_MAX_DIMS];
  memcpy(sz, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
  sz[x->ndim] = N - 1;
  lt_dtype xdt = (lt_dtype)x->dtype;   /* complex too: cumprod takes it */
  lt_dtype dt = lt_dtype_is_float(xdt) || lt_dtype_is_complex(xdt) ? xdt : LT_INT64;
  lt_tensor *xu = lt_unsqueeze(x, -1);
  lt_tensor *xe = xu ? lt_expand(xu, lt_intlist_make(sz, x->ndim + 1)) : NULL;
  sz[x->ndim] = 1;
  lt_tensor *one = xe ? lt_ones(lt_intlist_make(sz, x->ndim + 1), (int)dt, lt_tensor_device(x)) : NULL;
  lt_tensor *parts[2] = { one, xe };
  lt_tensor *c = one ? lt_cat(parts, 2, -1) : NULL;
  lt_tensor *r = c ? lt_cumprod(c, -1, (int)dt) : NULL;
  lt_tensor_release(xu); lt_tensor_release(xe); lt_tensor_release(one); lt_tensor_release(c);
  return r ? r : fail_null(op);
}

lt_tensor *lt_composite_linalg_diagonal(lt_tensor *A, int64_t offset, int64_t dim1, int64_t dim2) {
  lt_tensor *r = lt_diagonal(A, offset, dim1, dim2);
  return r ? r : fail_null("linalg.diagonal");
}
