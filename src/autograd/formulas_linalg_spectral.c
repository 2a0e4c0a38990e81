/*
** formulas_linalg_spectral.c — derivative helpers of the spectral linear algebra.
** Written with the ops' entry points so create_graph records the backward
** computation too (double backward); temporaries go into a pool released on
** every path. The formulas hold for real and complex inputs alike, with X^H
** the conjugate transpose (X^T for real X), skew(X) = X - X^H, E_ij = L_j - L_i
** and F_ij = 1 / (s_j^2 - s_i^2) off the diagonal (0 on it); a gradient is
** dL/d conj(z), PyTorch's convention:
**   eigh: gA = V (diag(gL) + F o skew(V^H gV) / 2) V^H, F_ij = 1 / E_ij
**   eig:  gA = V^-H (diag(gL) + (V^H gV - V^H V diag(re diag(V^H gV))) / conj(E)) V^H
**   svd:  gA = U [F o skew(U^H gU) S + diag(gS) + S F o skew(V^H gV)
**                 + i diag(im(U^H gU - V^H gV)) / (2 S)] V^H
**         + (I - U U^H) gU S^-1 V^H + U S^-1 gV^H (I - V V^H)
**   qr:   M = R gR^H - gQ^H Q, gA = (gQ + Q copyltu(M)) R^-H (m >= n),
**         copyltu(M) the Hermitian matrix with M's strict lower triangle and the real
**         part of its diagonal; a wide A = [X | Y] is X = Q U, square, and Y = Q V.
** Eigenvectors of eig and eigh (complex) and singular vectors (complex) are defined up
** to a phase each; a loss that depends on the phase has no gradient, and the im parts
** above that would measure it must vanish (gauge_check), as PyTorch requires.
*/
#include <string.h>
#include "formulas_linalg_spectral.h"
#include "lt_ops.h"
#include "core/error.h"
#include "core/tpool.h"

typedef lt_tpool pool;
#define TRY(var, e) do { if (!((var) = lt_tpool_keep(&P, (e)))) goto out; } while (0)

static lt_tensor *num(double v) { return lt_tensor_wrapped_number(lt_scalar_float(v)); }
static bool is_cx(const lt_tensor *t) { return lt_dtype_is_complex((lt_dtype)t->dtype); }

/* t^H: the transpose of its last two dims, conjugated when complex */
static lt_tensor *mH(lt_tensor *t) {
  lt_tensor *tr = lt_transpose(t, -2, -1);
  if (!tr || !is_cx(t)) return tr;
  lt_tensor *c = lt_conj(tr);
  lt_tensor_release(tr);
  return c;
}

/* a - b */
static lt_tensor *minus(lt_tensor *a, lt_tensor *b) { return lt_sub(a, b, lt_scalar_int(1)); }
static lt_tensor *plus(lt_tensor *a, lt_tensor *b) { return lt_add(a, b, lt_scalar_int(1)); }

/* x in like's dtype when like is complex and x real (matmul does not promote), else x
** itself; a new reference either way */
static lt_tensor *as_dtype_of(lt_tensor *x, const lt_tensor *like) {
  if (x->dtype == like->dtype || !is_cx(like)) { lt_tensor_retain(x); return x; }
  return lt_to(x, like->dtype, false);
}

/* X - X^H, a new reference */
static lt_tensor *skew2(lt_tensor *X) {
  lt_tensor *t = mH(X);
  lt_tensor *r = t ? minus(X, t) : NULL;
  lt_tensor_release(t);
  return r;
}

/* the diagonals of a batch of square matrices, (..., n): sum(X o I) over the rows, whose
** derivatives (mul, sum) take complex tensors, so that double backward runs through them */
static lt_tensor *diag_of(lt_tensor *X) {
  int64_t n = X->sizes[X->ndim - 1], last = -1;
  lt_tensor *eye = lt_eye(n, n, lt_dtype_to_real((lt_dtype)X->dtype), lt_tensor_device(X));
  lt_tensor *m = eye ? lt_mul(X, eye) : NULL;
  lt_tensor *r = m ? lt_sum(m, lt_intlist_make(&last, 1), false, -1) : NULL;
  lt_tensor_release(eye);
  lt_tensor_release(m);
  return r;
}

/* 1 / (lj - li) off the diagonal, 0 on it: (..., n, n) from l (..., n) */
static lt_tensor *inverse_gaps(lt_tensor *l) {
  pool P = {0};
  lt_tensor *r = NULL, *li, *lj, *E, *eye, *E1, *one, *F;
  int64_t n = l->sizes[l->ndim - 1];
  TRY(li, lt_unsqueeze(l, -1));
  TRY(lj, lt_unsqueeze(l, -2));
  TRY(E, minus(lj, li));
  TRY(eye, lt_eye(n, n, l->dtype, lt_tensor_device(l)));
  TRY(E1, plus(E, eye));
  TRY(one, num(1.0));
  TRY(F, lt_div(one, E1, NULL));
  r = minus(F, eye);
out:
  lt_tpool_drop(&P);
  return r;
}

/* The phase of a complex vector is arbitrary, so a loss must not depend on it: the
** imaginary parts d (real, any shape) that measure the dependence must vanish. As
** PyTorch, a loose absolute tolerance (1e-2) only catches losses that plainly depend
** on it. 0, or -1 with the error. */
static int gauge_check(const char *op, const char *what, lt_tensor *d) {
  lt_tensor *a = lt_abs(d);
  lt_tensor *mx = a ? lt_amax(a, lt_intlist_make(NULL, 0), false) : NULL;
  lt_scalar v = mx ? lt_tensor_item(mx) : lt_scalar_none();
  lt_tensor_release(a);
  lt_tensor_release(mx);
  if (lt_scalar_is_none(v)) return -1;
  double m = lt_scalar_to_double(v);
  if (m > 1e-2 || m != m)
    return lt_error("%s: the loss depends on the phase of the %s, which is arbitrary (each is defined up to a "
                    "factor e^(i phi)): its gradient is not defined. Use a loss invariant to the phases, e.g. one of "
                    "the eigenvalues, singular values or abs of the vectors", op, what);
  return 0;
}

/* diag(d) as a complex matrix from the real vector d (..., n): i diag(d) */
static lt_tensor *i_diag(lt_tensor *d) {
  pool P = {0};
  lt_tensor *r = NULL, *D, *zero, *Z;
  TRY(D, lt_diag_embed(d, 0, -2, -1));
  TRY(zero, num(0.0));
  TRY(Z, lt_mul(D, zero));
  r = lt_complex(Z, D);
out:
  lt_tpool_drop(&P);
  return r;
}

/* diag(d) for a complex d (..., n): d as a column times the identity */
static lt_tensor *diag_cx(lt_tensor *d) {
  pool P = {0};
  lt_tensor *r = NULL, *col, *eye;
  int64_t n = d->sizes[d->ndim - 1];
  TRY(col, lt_unsqueeze(d, -1));
  TRY(eye, lt_eye(n, n, lt_dtype_to_real((lt_dtype)d->dtype), lt_tensor_device(d)));
  r = lt_mul(col, eye);
out:
  lt_tpool_drop(&P);
  return r;
}

/* ---- eigh ---- */

lt_tensor *lt_grad_linalg_eigh(lt_tensor *gL, lt_tensor *gV, lt_tensor *L, lt_tensor *V) {
  if (V->ndim < 2)   /* _linalg_eigh called directly with compute_v = false */
    return lt_error_null("linalg.eigh: the derivative needs the eigenvectors: call it with compute_v = true");
  pool P = {0};
  lt_tensor *inner = NULL, *r = NULL, *vh, *left;
  TRY(vh, mH(V));
  if (gV) {
    lt_tensor *W, *sk, *half, *F, *q;
    TRY(W, lt_matmul(vh, gV));
    if (is_cx(V)) {
      lt_tensor *d, *im;
      TRY(d, diag_of(W));
      TRY(im, lt_imag(d));
      if (gauge_check("linalg.eigh", "eigenvectors", im) < 0) goto out;
    }
    TRY(sk, skew2(W));
    TRY(half, num(0.5));
    TRY(F, inverse_gaps(L));                                /* 1 / (L_j - L_i), 0 on the diagonal */
    TRY(q, lt_mul(sk, F));
    TRY(inner, lt_mul(q, half));
  }
  if (gL) {
    lt_tensor *d;
    TRY(d, lt_diag_embed(gL, 0, -2, -1));
    if (inner) TRY(inner, plus(inner, d)); else inner = d;
  }
  if (!inner) { r = lt_zeros(lt_intlist_make(V->sizes, V->ndim), V->dtype, lt_tensor_device(V)); goto out; }
  TRY(inner, as_dtype_of(inner, V));
  TRY(left, lt_matmul(V, inner));
  r = lt_matmul(left, vh);
out:
  lt_tpool_drop(&P);
  return r;
}

/* ---- eig ---- */

lt_tensor *lt_grad_linalg_eig(lt_tensor *gL, lt_tensor *gV, lt_tensor *L, lt_tensor *V) {
  const char *op = "linalg.eig";
  if (V->ndim < 2)   /* _linalg_eig called directly with compute_v = false */
    return lt_error_null("%s: the derivative needs the eigenvectors: call it with compute_v = true", op);
  int64_t n = V->sizes[V->ndim - 1];
  pool P = {0};
  lt_tensor *r = NULL, *inner = NULL, *vh, *right;
  if (n == 0) { r = lt_zeros(lt_intlist_make(V->sizes, V->ndim), V->dtype, lt_tensor_device(V)); goto out; }
  TRY(vh, mH(V));
  if (gV) {
    lt_tensor *W, *d, *im, *re, *vhv, *rerow, *t, *G, *lc, *F;
    TRY(W, lt_matmul(vh, gV));
    TRY(d, diag_of(W));
    TRY(im, lt_imag(d));
    if (gauge_check(op, "eigenvectors", im) < 0) goto out;
    /* the unit norm of each vector is a constraint: the real part of W's diagonal goes */
    TRY(re, lt_real(d));
    TRY(vhv, lt_matmul(vh, V));
    TRY(rerow, lt_unsqueeze(re, -2));
    TRY(t, lt_mul(vhv, rerow));
    TRY(G, minus(W, t));
    TRY(lc, lt_conj(L));
    TRY(F, inverse_gaps(lc));                               /* 1 / conj(L_j - L_i), 0 on the diagonal */
    TRY(inner, lt_mul(G, F));
  }
  if (gL) {
    lt_tensor *D;
    TRY(D, diag_cx(gL));
    if (inner) TRY(inner, plus(inner, D)); else inner = D;
  }
  if (!inner) { r = lt_zeros(lt_intlist_make(V->sizes, V->ndim), V->dtype, lt_tensor_device(V)); goto out; }
  TRY(right, lt_matmul(inner, vh));
  r = lt_linalg_solve(vh, right, true);                             /* V^-H (inner V^H) */
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
  lt_tensor *r = NULL, *inner = NULL, *V, *sinv, *s2, *F = NULL, *extra = NULL;
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
  TRY(V, mH(Vh));
  TRY(sinv, lt_reciprocal(S));
  lt_tensor *utg = NULL, *vtg = NULL;   /* U^H gU, V^H gV */
  if (gU || gVh) {
    TRY(s2, lt_mul(S, S));
    TRY(F, inverse_gaps(s2));                               /* 1 / (s_j^2 - s_i^2), 0 on the diagonal */
  }
  if (gU) {
    lt_tensor *ut;
    TRY(ut, mH(U));
    TRY(utg, lt_matmul(ut, gU));
  }
  if (gVh) {
    lt_tensor *gV;
    TRY(gV, mH(gVh));
    TRY(vtg, lt_matmul(Vh, gV));
  }
  lt_tensor *phase = NULL;   /* complex: im diag(U^H gU - V^H gV) / 2 S, and the gauge */
  if (is_cx(U) && (gU || gVh)) {
    lt_tensor *du = NULL, *dv = NULL, *iu = NULL, *iv = NULL, *sum, *dif, *two, *den, *q;
    if (utg) { TRY(du, diag_of(utg)); TRY(iu, lt_imag(du)); }
    if (vtg) { TRY(dv, diag_of(vtg)); TRY(iv, lt_imag(dv)); }
    if (iu && iv) { TRY(sum, plus(iu, iv)); TRY(dif, minus(iu, iv)); }
    else if (iu) { sum = iu; dif = iu; }
    else { sum = iv; TRY(dif, lt_neg(iv)); }
    if (gauge_check("linalg.svd", "singular vectors", sum) < 0) goto out;
    TRY(two, num(2.0));
    TRY(den, lt_mul(S, two));
    TRY(q, lt_div(dif, den, NULL));
    TRY(phase, i_diag(q));
  }
  if (gU) {
    lt_tensor *sk, *fs, *srow;
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
    lt_tensor *sk, *fs, *scol, *t;
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
  if (phase) { if (inner) TRY(inner, plus(inner, phase)); else inner = phase; }
  {
    lt_tensor *left, *core = NULL;
    if (inner) {
      TRY(inner, as_dtype_of(inner, U));
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
    TRY(grt, mH(gR));
    TRY(M, lt_matmul(R, grt));
  }
  if (gQ) {
    lt_tensor *gqt, *w;
    TRY(gqt, mH(gQ));
    TRY(w, lt_matmul(gqt, Q));
    if (M) TRY(M, minus(M, w)); else TRY(M, lt_neg(w));
  }
  if (!M) { r = lt_zeros(lt_intlist_make(Q->sizes, Q->ndim), Q->dtype, lt_tensor_device(Q)); goto out; }
  TRY(lo1, lt_tril(M, -1));
  TRY(lo1t, mH(lo1));
  TRY(lo, plus(lo1, lo1t));
  {
    lt_tensor *d, *re, *D;
    TRY(d, diag_of(M));
    TRY(re, lt_real(d));
    TRY(D, lt_diag_embed(re, 0, -2, -1));
    TRY(sym, plus(lo, D));                                  /* copyltu(M) */
  }
  TRY(qs, lt_matmul(Q, sym));
  if (gQ) TRY(b, plus(gQ, qs)); else b = qs;
  TRY(bt, mH(b));
  TRY(x, lt__linalg_spectral_trsolve(R, bt, true));         /* R^-1 b^H = (b R^-H)^H */
  r = mH(x);
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
    TRY(gvt, mH(gV));
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
  lt_tensor *at = mH(A);
  lt_tensor *r = at ? lt__linalg_spectral_trsolve(at, grad, !upper) : NULL;
  lt_tensor_release(at);
  return r;
}

lt_tensor *lt_grad_spectral_trsolve_A(lt_tensor *grad, lt_tensor *A, lt_tensor *X, bool upper) {
  pool P = {0};
  lt_tensor *r = NULL, *gB, *xt, *p, *np;
  TRY(gB, lt_grad_spectral_trsolve_B(grad, A, upper));
  TRY(xt, mH(X));
  TRY(p, lt_matmul(gB, xt));
  TRY(np, lt_neg(p));
  r = upper ? lt_triu(np, 0) : lt_tril(np, 0);
out:
  lt_tpool_drop(&P);
  return r;
}
