/*
** formulas_linalg_spectral.c — derivative helpers of the spectral linear algebra.
** Written with the ops' entry points so create_graph records the backward
** computation too (double backward); temporaries go into a pool released on
** every path. The formulas (real case), with E_ij = L_j - L_i and
** F_ij = 1 / (s_j^2 - s_i^2) off the diagonal:
**   eigh: gA = V (diag(gL) + skew(V^T gV) / E) V^T
**   svd:  gA = U [skew(U^T gU) F S + diag(gS) + S skew(V^T gV) F] V^T (x2 for the skews)
**         + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T)
**   qr:   M = R gR^T - gQ^T Q, gA = (gQ + Q copyltu(M)) R^-T (m >= n),
**         copyltu(M) the symmetric matrix with M's lower triangle; a wide A = [X | Y]
**         is X = Q U, square, and Y = Q V.
*/
#include <string.h>
#include "formulas_linalg_spectral.h"
#include "lt_ops.h"
#include "core/error.h"
#include "core/tpool.h"

typedef lt_tpool pool;
#define TRY(var, e) do { if (!((var) = lt_tpool_keep(&P, (e)))) goto out; } while (0)

static lt_tensor *num(double v) { return lt_tensor_wrapped_number(lt_scalar_float(v)); }
static lt_tensor *mT(lt_tensor *t) { return lt_transpose(t, -2, -1); }

/* a - b */
static lt_tensor *minus(lt_tensor *a, lt_tensor *b) { return lt_sub(a, b, lt_scalar_int(1)); }
static lt_tensor *plus(lt_tensor *a, lt_tensor *b) { return lt_add(a, b, lt_scalar_int(1)); }

/* X - X^T, a new reference */
static lt_tensor *skew2(lt_tensor *X) {
  lt_tensor *t = mT(X);
  lt_tensor *r = t ? minus(X, t) : NULL;
  lt_tensor_release(t);
  return r;
}

/* ---- eigh ---- */

lt_tensor *lt_grad_linalg_eigh(lt_tensor *gL, lt_tensor *gV, lt_tensor *L, lt_tensor *V) {
  if (V->ndim < 2)   /* _linalg_eigh called directly with compute_v = false */
    return lt_error_null("linalg.eigh: the derivative needs the eigenvectors: call it with compute_v = true");
  pool P = {0};
  lt_tensor *inner = NULL, *r = NULL, *vt, *left;
  if (gV) {
    lt_tensor *vtr, *vtg, *sk, *half, *li, *lj, *E, *eye, *E1, *q;
    int64_t n = V->sizes[V->ndim - 1];
    TRY(vtr, mT(V));
    TRY(vtg, lt_matmul(vtr, gV));
    TRY(sk, skew2(vtg));
    TRY(half, num(0.5));
    TRY(li, lt_unsqueeze(L, -1));
    TRY(lj, lt_unsqueeze(L, -2));
    TRY(E, minus(lj, li));                                  /* E_ij = L_j - L_i */
    TRY(eye, lt_eye(n, n, V->dtype, lt_tensor_device(V)));
    TRY(E1, plus(E, eye));                                  /* 1 on the diagonal, where skew is 0 */
    TRY(q, lt_div(sk, E1, NULL));
    TRY(inner, lt_mul(q, half));
  }
  if (gL) {
    lt_tensor *d;
    TRY(d, lt_diag_embed(gL, 0, -2, -1));
    if (inner) TRY(inner, plus(inner, d)); else inner = d;
  }
  if (!inner) { r = lt_zeros(lt_intlist_make(V->sizes, V->ndim), V->dtype, lt_tensor_device(V)); goto out; }
  TRY(left, lt_matmul(V, inner));
  TRY(vt, mT(V));
  r = lt_matmul(left, vt);
out:
  lt_tpool_drop(&P);
  return r;
}

/* ---- svd ---- */

/* the leading k columns (dim -1) or rows (dim -2) of t, kept; t itself when it has k */
static lt_tensor *lead(pool *p, lt_tensor *t, int64_t dim, int64_t k) {
  if (!t) return NULL;
  if (t->sizes[t->ndim + dim] == k) return t;
  return lt_tpool_keep(p, lt_narrow(t, dim, 0, k));
}

lt_tensor *lt_grad_linalg_svd(lt_tensor *gU, lt_tensor *gS, lt_tensor *gVh, lt_tensor *U, lt_tensor *S,
                              lt_tensor *Vh, bool full_matrices) {
  (void)full_matrices;   /* the vectors past k are cut off below either way */
  if (U->ndim < 2 || Vh->ndim < 2)   /* _linalg_svd called directly with compute_uv = false */
    return lt_error_null("linalg.svd: the derivative needs U and Vh: call it with compute_uv = true");
  pool P = {0};
  lt_tensor *r = NULL, *inner = NULL, *V, *sinv, *s2, *si, *sj, *F, *eye, *extra = NULL;
  int64_t m = U->sizes[U->ndim - 2], n = Vh->sizes[Vh->ndim - 1], k = S->sizes[S->ndim - 1];
  if (k == 0) {   /* A is empty, and so is its gradient: shape (..., m, n) */
    int64_t sz[LT_MAX_DIMS];
    for (int i = 0; i < U->ndim - 2; i++) sz[i] = U->sizes[i];
    sz[U->ndim - 2] = m; sz[U->ndim - 1] = n;
    return lt_zeros(lt_intlist_make(sz, U->ndim), U->dtype, lt_tensor_device(U));
  }
  U = lead(&P, U, -1, k);
  Vh = lead(&P, Vh, -2, k);
  gU = lead(&P, gU, -1, k);
  gVh = lead(&P, gVh, -2, k);
  if (!U || !Vh) goto out;
  TRY(V, mT(Vh));
  TRY(sinv, lt_reciprocal(S));
  if (gU || gVh) {
    lt_tensor *one, *E, *E1;
    TRY(s2, lt_mul(S, S));
    TRY(si, lt_unsqueeze(s2, -1));
    TRY(sj, lt_unsqueeze(s2, -2));
    TRY(E, minus(sj, si));                                  /* s_j^2 - s_i^2 */
    TRY(eye, lt_eye(k, k, S->dtype, lt_tensor_device(S)));
    TRY(E1, plus(E, eye));
    TRY(one, num(1.0));
    TRY(F, lt_div(one, E1, NULL));
    TRY(F, minus(F, eye));                                  /* 0 on the diagonal */
  }
  if (gU) {
    lt_tensor *ut, *utg, *sk, *fs, *srow;
    TRY(ut, mT(U));
    TRY(utg, lt_matmul(ut, gU));
    TRY(sk, skew2(utg));
    TRY(fs, lt_mul(F, sk));
    TRY(srow, lt_unsqueeze(S, -2));
    TRY(inner, lt_mul(fs, srow));                           /* (F o skew) S */
    if (m > k) {                                            /* (I - U U^T) gU S^-1 */
      lt_tensor *p, *q, *d, *w;
      TRY(p, lt_matmul(U, utg));
      TRY(d, minus(gU, p));
      TRY(w, lt_unsqueeze(sinv, -2));
      TRY(q, lt_mul(d, w));
      TRY(extra, lt_matmul(q, Vh));
    }
  }
  if (gVh) {
    lt_tensor *gV, *vtg, *sk, *fs, *scol, *t;
    TRY(gV, mT(gVh));
    TRY(vtg, lt_matmul(Vh, gV));
    TRY(sk, skew2(vtg));
    TRY(fs, lt_mul(F, sk));
    TRY(scol, lt_unsqueeze(S, -1));
    TRY(t, lt_mul(scol, fs));                               /* S (F o skew) */
    if (inner) TRY(inner, plus(inner, t)); else inner = t;
    if (n > k) {                                            /* U S^-1 gV^T (I - V V^T) */
      lt_tensor *d, *w, *q, *e2;
      lt_tensor *gvv, *pp;
      TRY(gvv, lt_matmul(gVh, V));
      TRY(pp, lt_matmul(gvv, Vh));
      TRY(d, minus(gVh, pp));
      TRY(w, lt_unsqueeze(sinv, -1));
      TRY(q, lt_mul(w, d));
      TRY(e2, lt_matmul(U, q));
      if (extra) TRY(extra, plus(extra, e2)); else extra = e2;
    }
  }
  if (gS) {
    lt_tensor *d;
    TRY(d, lt_diag_embed(gS, 0, -2, -1));
    if (inner) TRY(inner, plus(inner, d)); else inner = d;
  }
  {
    lt_tensor *left, *core = NULL;
    if (inner) {
      TRY(left, lt_matmul(U, inner));
      TRY(core, lt_matmul(left, Vh));
    }
    if (core && extra) r = plus(core, extra);
    else if (core || extra) { r = core ? core : extra; lt_tensor_retain(r); }
    else lt_error("linalg.svd: no gradient reached the decomposition");
  }
out:
  lt_tpool_drop(&P);
  return r;
}

/* ---- qr ---- */

/* A = Q R with Q m x n, R n x n (m >= n); gQ and gR may be NULL */
static lt_tensor *qr_tall(lt_tensor *gQ, lt_tensor *gR, lt_tensor *Q, lt_tensor *R) {
  pool P = {0};
  lt_tensor *r = NULL, *M = NULL, *b, *lo, *lo1, *lo1t, *sym, *qs, *bt, *x;
  if (gR) {
    lt_tensor *grt;
    TRY(grt, mT(gR));
    TRY(M, lt_matmul(R, grt));
  }
  if (gQ) {
    lt_tensor *gqt, *w;
    TRY(gqt, mT(gQ));
    TRY(w, lt_matmul(gqt, Q));
    if (M) TRY(M, minus(M, w)); else TRY(M, lt_neg(w));
  }
  if (!M) { r = lt_zeros(lt_intlist_make(Q->sizes, Q->ndim), Q->dtype, lt_tensor_device(Q)); goto out; }
  TRY(lo, lt_tril(M, 0));
  TRY(lo1, lt_tril(M, -1));
  TRY(lo1t, mT(lo1));
  TRY(sym, plus(lo, lo1t));                                 /* copyltu(M) */
  TRY(qs, lt_matmul(Q, sym));
  if (gQ) TRY(b, plus(gQ, qs)); else b = qs;
  TRY(bt, mT(b));
  TRY(x, lt__linalg_spectral_trsolve(R, bt, true));         /* R^-1 b^T = (b R^-T)^T */
  r = mT(x);
out:
  lt_tpool_drop(&P);
  return r;
}

/* A = [X | Y] wide (m < n): X = Q U is a square QR and Y = Q V, so X gets the square
** formula with gQ + Y gV^T for Q's gradient, and Y gets Q gV */
static lt_tensor *qr_wide(lt_tensor *gQ, lt_tensor *gR, lt_tensor *Q, lt_tensor *R) {
  pool P = {0};
  int64_t m = Q->sizes[Q->ndim - 2], n = R->sizes[R->ndim - 1];
  lt_tensor *r = NULL, *U, *V, *gU = NULL, *gV = NULL, *gQ2 = gQ, *gX, *gY;
  TRY(U, lt_narrow(R, -1, 0, m));
  TRY(V, lt_narrow(R, -1, m, n - m));
  if (gR) {
    lt_tensor *Y, *gvt, *t;
    TRY(gU, lt_narrow(gR, -1, 0, m));
    TRY(gV, lt_narrow(gR, -1, m, n - m));
    TRY(Y, lt_matmul(Q, V));
    TRY(gvt, mT(gV));
    TRY(t, lt_matmul(Y, gvt));
    if (gQ) TRY(gQ2, plus(gQ, t)); else gQ2 = t;
  }
  TRY(gX, qr_tall(gQ2, gU, Q, U));
  if (gV) TRY(gY, lt_matmul(Q, gV));
  else TRY(gY, lt_zeros(lt_intlist_make(V->sizes, V->ndim), Q->dtype, lt_tensor_device(Q)));
  lt_tensor *parts[2] = {gX, gY};
  r = lt_cat(parts, 2, -1);
out:
  lt_tpool_drop(&P);
  return r;
}

lt_tensor *lt_grad_linalg_qr(lt_tensor *gQ, lt_tensor *gR, lt_tensor *Q, lt_tensor *R, const char *mode) {
  const char *op = "linalg.qr";
  if (mode && !strcmp(mode, "r"))
    return lt_error_null("%s: the derivative of mode \"r\" is not defined (Q is needed); use mode \"reduced\"", op);
  int64_t m = Q->sizes[Q->ndim - 2], n = R->sizes[R->ndim - 1];
  if (m < n) return qr_wide(gQ, gR, Q, R);
  if (Q->sizes[Q->ndim - 1] != n)
    return lt_error_null("%s: the derivative of mode \"complete\" is not defined for inputs with more rows than columns (%lld x %lld); use mode \"reduced\"",
                         op, (long long)m, (long long)n);
  return qr_tall(gQ, gR, Q, R);
}

/* ---- the triangular solve ---- */

lt_tensor *lt_grad_spectral_trsolve_B(lt_tensor *grad, lt_tensor *A, bool upper) {
  lt_tensor *at = mT(A);
  lt_tensor *r = at ? lt__linalg_spectral_trsolve(at, grad, !upper) : NULL;
  lt_tensor_release(at);
  return r;
}

lt_tensor *lt_grad_spectral_trsolve_A(lt_tensor *grad, lt_tensor *A, lt_tensor *X, bool upper) {
  pool P = {0};
  lt_tensor *r = NULL, *gB, *xt, *p, *np;
  TRY(gB, lt_grad_spectral_trsolve_B(grad, A, upper));
  TRY(xt, mT(X));
  TRY(p, lt_matmul(gB, xt));
  TRY(np, lt_neg(p));
  r = upper ? lt_triu(np, 0) : lt_tril(np, 0);
out:
  lt_tpool_drop(&P);
  return r;
}
