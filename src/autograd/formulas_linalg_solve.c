/*
** formulas_linalg_solve.c — derivative helpers of src/ops/linalg_solve.lua.
** Every step is an entry point (matmul, linalg.solve_ex, solve_triangular,
** tril, ...), so create_graph records the backward pass too. The helpers
** below whose names end in _c consume their tensor arguments (release them,
** NULL-safe) and return a new reference or NULL, which keeps each formula a
** chain of calls without a release on every line.
**
** Complex inputs follow PyTorch's convention (the gradient of a real loss is
** dL/d(conj z)): each formula is the real one with the transposes of its
** factors made conjugate transposes (mH_c), and det's factor conjugated.
*/
#include <string.h>
#include "formulas_linalg_solve.h"
#include "lt_ops.h"

static lt_tensor *ref(lt_tensor *t) { lt_tensor_retain(t); return t; }

static bool is_complex(const lt_tensor *t) { return lt_dtype_is_complex((lt_dtype)t->dtype); }

/* the conjugate of a complex t (a real one itself) */
static lt_tensor *conj_c(lt_tensor *t) {
  if (!t || !is_complex(t)) return t;
  lt_tensor *r = lt_conj(t);
  lt_tensor_release(t);
  return r;
}

/* the conjugate transpose t^H of the last two dims (t^T for real t: a view) */
static lt_tensor *mH_c(lt_tensor *t) {
  if (!t) return NULL;
  lt_tensor *r = lt_transpose(t, t->ndim - 2, t->ndim - 1);
  lt_tensor_release(t);
  return conj_c(r);
}

#define CONSUME2(NAME, CALL)                                                 \
  static lt_tensor *NAME(lt_tensor *a, lt_tensor *b) {                       \
    lt_tensor *r = a && b ? CALL : NULL;                                     \
    lt_tensor_release(a);                                                    \
    lt_tensor_release(b);                                                    \
    return r;                                                                \
  }
CONSUME2(mm_c, lt_matmul(a, b))
CONSUME2(mul_c, lt_mul(a, b))
CONSUME2(sub_c, lt_sub(a, b, lt_scalar_int(1)))
CONSUME2(add_c, lt_add(a, b, lt_scalar_int(1)))

static lt_tensor *neg_c(lt_tensor *a) {
  lt_tensor *r = a ? lt_neg(a) : NULL;
  lt_tensor_release(a);
  return r;
}

static lt_tensor *imag_c(lt_tensor *a) {
  lt_tensor *r = a ? lt_imag(a) : NULL;
  lt_tensor_release(a);
  return r;
}

static lt_tensor *unsqueeze_c(lt_tensor *a, int64_t d) {
  lt_tensor *r = a ? lt_unsqueeze(a, d) : NULL;
  lt_tensor_release(a);
  return r;
}

static lt_tensor *tri_c(lt_tensor *a, bool upper, int64_t diag) {
  lt_tensor *r = a ? (upper ? lt_triu(a, diag) : lt_tril(a, diag)) : NULL;
  lt_tensor_release(a);
  return r;
}

/* X with A X = B (left) or X A = B, without an error for a singular A */
static lt_tensor *solve_c(lt_tensor *A, lt_tensor *B, bool left) {
  lt_tensor *x = NULL, *info = NULL;
  if (A && B && lt_linalg_solve_ex(A, B, left, false, &x, &info) == 0) lt_tensor_release(info);
  lt_tensor_release(A);
  lt_tensor_release(B);
  return x;
}

static lt_tensor *trisolve_c(lt_tensor *A, lt_tensor *B, bool upper, bool left, bool unit) {
  lt_tensor *r = A && B ? lt_linalg_solve_triangular(A, B, upper, left, unit) : NULL;
  lt_tensor_release(A);
  lt_tensor_release(B);
  return r;
}

/* p q^H for matrices, or the outer product p q^H of vectors */
static lt_tensor *outer_c(lt_tensor *p, lt_tensor *q, bool vector) {
  if (vector) return mm_c(unsqueeze_c(p, -1), unsqueeze_c(conj_c(q), -2));
  return mm_c(p, mH_c(q));
}

/* A^-H with A's batch: the solve of A^H against the identity of A's shape */
static lt_tensor *inv_mH(lt_tensor *A) {
  int64_t n = A->sizes[A->ndim - 1];
  lt_tensor *eye = lt_eye(n, LT_NOINT, (int)A->dtype, lt_tensor_device(A));
  lt_tensor *I = eye ? lt_expand(eye, lt_intlist_make(A->sizes, A->ndim)) : NULL;
  lt_tensor_release(eye);
  return solve_c(mH_c(ref(A)), I, true);
}

/* ---- solve ---- */

lt_tensor *lt_grad_linalg_solve_B(lt_tensor *grad, lt_tensor *A, bool left) {
  /* left: X = A^-1 B, so gB = A^-H gX; right: X = B A^-1, gB = gX A^-H */
  return solve_c(mH_c(ref(A)), ref(grad), left);
}

lt_tensor *lt_grad_linalg_solve_A(lt_tensor *grad, lt_tensor *A, lt_tensor *result, bool left) {
  bool vector = result->ndim == A->ndim - 1;
  lt_tensor *gB = lt_grad_linalg_solve_B(grad, A, left);
  /* left: gA = -gB X^H; right: gA = -X^H gB */
  if (left) return neg_c(outer_c(gB, ref(result), vector));
  if (vector) return neg_c(mm_c(unsqueeze_c(conj_c(ref(result)), -1), unsqueeze_c(gB, -2)));   /* x^H gB */
  return neg_c(mm_c(mH_c(ref(result)), gB));
}

lt_tensor *lt_grad_lu_solve_B(lt_tensor *grad, lt_tensor *LU, lt_tensor *pivots, bool left, bool adjoint) {
  return lt_linalg_lu_solve(LU, pivots, grad, left, !adjoint);
}

/* P, L and U of a packed LU: lu_unpack's, so double backward reaches LU through tril/triu */
static int unpack(lt_tensor *LU, lt_tensor *pivots, lt_tensor **P, lt_tensor **Lo, lt_tensor **Up) {
  return lt_lu_unpack(LU, pivots, true, true, P, Lo, Up);
}

/* the gradient of packed LU from that of the A = P L U it stands for: with dA = P (dL U + L dU),
** gL = tril(P^T gA U^H, -1) and gU = triu(L^H P^T gA) */
static lt_tensor *lu_from_A(lt_tensor *gA, lt_tensor *LU, lt_tensor *pivots) {
  lt_tensor *P = NULL, *Lo = NULL, *Up = NULL;
  if (!gA || unpack(LU, pivots, &P, &Lo, &Up)) { lt_tensor_release(gA); return NULL; }
  lt_tensor *PtgA = mm_c(mH_c(P), gA);
  lt_tensor *gL = PtgA ? tri_c(mm_c(ref(PtgA), mH_c(ref(Up))), false, -1) : NULL;
  lt_tensor *gU = PtgA ? tri_c(mm_c(mH_c(ref(Lo)), ref(PtgA)), true, 0) : NULL;
  lt_tensor_release(PtgA);
  lt_tensor_release(Lo);
  lt_tensor_release(Up);
  return add_c(gL, gU);
}

lt_tensor *lt_grad_lu_solve_LU(lt_tensor *grad, lt_tensor *LU, lt_tensor *pivots, lt_tensor *result, bool left,
                               bool adjoint) {
  lt_tensor *gB = lt_grad_lu_solve_B(grad, LU, pivots, left, adjoint);
  /* the implied A's gradient, for A X = B, A^H X = B, X A = B and X A^H = B (A^T for real A) */
  lt_tensor *gA = left ? (adjoint ? mm_c(ref(result), mH_c(gB)) : mm_c(gB, mH_c(ref(result))))
                       : (adjoint ? mm_c(mH_c(gB), ref(result)) : mm_c(mH_c(ref(result)), gB));
  return lu_from_A(neg_c(gA), LU, pivots);
}

static lt_tensor *narrow_c(lt_tensor *a, int64_t dim, int64_t start, int64_t len) {
  lt_tensor *r = a ? lt_narrow(a, dim, start, len) : NULL;
  lt_tensor_release(a);
  return r;
}

static lt_tensor *cat2_c(lt_tensor *a, lt_tensor *b, int64_t dim) {
  lt_tensor *parts[2] = { a, b };
  lt_tensor *r = a && b ? lt_cat(parts, 2, dim) : NULL;
  lt_tensor_release(a);
  lt_tensor_release(b);
  return r;
}

lt_tensor *lt_grad_lu_factor(lt_tensor *grad, lt_tensor *LU, lt_tensor *pivots) {
  /* A = P L U with L m x k, U k x n, k = min(m, n); L1, U1 their leading k x k blocks,
  ** L2 the rows of a tall L below it, U2 the columns of a wide U right of it. With
  ** X = L1^-1 (P^T dA)_11 U1^-1 = L1^-1 dL1 + dU1 U1^-1, dL1 = L1 tril(X, -1) and
  ** dU1 = triu(X) U1; the rest follow from the other block: dU2 = L1^-1 (dA_12 - dL1 U2)
  ** (wide), dL2 = (dA_21 - L2 dU1) U1^-1 (tall). Collecting the terms in X:
  **   phi = tril(L1^H gL1, -1) + triu(gU1 U1^H) - tril(gU2 U2^H, -1) - triu(L2^H gL2)
  **   gA = P [L1^-H phi U1^-H, L1^-H gU2]  (wide)  or  P [L1^-H phi U1^-H; gL2 U1^-H]  (tall) */
  int64_t m = LU->sizes[LU->ndim - 2], n = LU->sizes[LU->ndim - 1], k = m < n ? m : n;
  lt_tensor *P = NULL, *Lo = NULL, *Up = NULL;
  if (unpack(LU, pivots, &P, &Lo, &Up)) return NULL;
  lt_tensor *L1 = narrow_c(ref(Lo), -2, 0, k), *U1 = narrow_c(ref(Up), -1, 0, k);
  lt_tensor *g11 = narrow_c(narrow_c(ref(grad), -2, 0, k), -1, 0, k);
  lt_tensor *phiL = tri_c(mm_c(mH_c(ref(L1)), tri_c(ref(g11), false, -1)), false, -1);
  lt_tensor *phiU = tri_c(mm_c(tri_c(g11, true, 0), mH_c(ref(U1))), true, 0);
  lt_tensor *phi = add_c(phiL, phiU), *g2 = NULL;
  if (n > k) {         /* wide: gU2 is the columns k.. of grad, all above the diagonal */
    g2 = narrow_c(ref(grad), -1, k, n - k);
    phi = sub_c(phi, tri_c(mm_c(ref(g2), mH_c(narrow_c(ref(Up), -1, k, n - k))), false, -1));
  } else if (m > k) {  /* tall: gL2 is the rows k.., all below it */
    g2 = narrow_c(ref(grad), -2, k, m - k);
    phi = sub_c(phi, tri_c(mm_c(mH_c(narrow_c(ref(Lo), -2, k, m - k)), ref(g2)), true, 0));
  }
  lt_tensor *Y = trisolve_c(mH_c(ref(L1)), phi, true, true, true);     /* L1^-H phi */
  lt_tensor *Z = trisolve_c(mH_c(ref(U1)), Y, false, false, false);    /* (L1^-H phi) U1^-H */
  if (n > k) Z = cat2_c(Z, trisolve_c(mH_c(ref(L1)), g2, true, true, true), -1);
  else if (m > k) Z = cat2_c(Z, trisolve_c(mH_c(ref(U1)), g2, false, false, false), -2);
  lt_tensor *r = mm_c(ref(P), Z);
  lt_tensor *all[] = { P, Lo, Up, L1, U1 };
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) lt_tensor_release(all[i]);
  return r;
}

/* ---- triangular ---- */

lt_tensor *lt_grad_solve_triangular_B(lt_tensor *grad, lt_tensor *A, bool upper, bool left, bool unitriangular) {
  return trisolve_c(mH_c(ref(A)), ref(grad), !upper, left, unitriangular);
}

lt_tensor *lt_grad_solve_triangular_A(lt_tensor *grad, lt_tensor *A, lt_tensor *result, bool upper, bool left,
                                      bool unitriangular) {
  lt_tensor *gB = lt_grad_solve_triangular_B(grad, A, upper, left, unitriangular);
  lt_tensor *g = left ? outer_c(gB, ref(result), false) : mm_c(mH_c(ref(result)), gB);
  /* only the triangle A's solve reads gets a gradient; not the diagonal when it is taken as ones */
  int64_t diag = unitriangular ? (upper ? 1 : -1) : 0;
  return neg_c(tri_c(g, upper, diag));
}

/* ---- Cholesky ---- */

lt_tensor *lt_grad_cholesky(lt_tensor *grad, lt_tensor *L, bool upper) {
  /* with lower L (upper: L = U^H, gL = gU^H), M = tril(L^H gL), and S the
  ** Hermitian matrix whose lower triangle is M with its diagonal halved,
  ** gA = L^-H S L^-1 */
  lt_tensor *l = upper ? mH_c(ref(L)) : ref(L);
  lt_tensor *g = upper ? mH_c(ref(grad)) : ref(grad);
  if (!l || !g) { lt_tensor_release(l); lt_tensor_release(g); return NULL; }
  lt_tensor *M = tri_c(mm_c(mH_c(ref(l)), g), false, 0);
  lt_tensor *S = M ? add_c(ref(M), mH_c(tri_c(ref(M), false, -1))) : NULL;
  lt_tensor_release(M);
  lt_tensor *half = S ? lt_grad_scale(S, lt_scalar_float(0.5)) : NULL;
  lt_tensor_release(S);
  lt_tensor *Y = trisolve_c(ref(l), half, false, false, false);    /* S L^-1 */
  lt_tensor *r = trisolve_c(mH_c(ref(l)), Y, true, true, false);   /* L^-H (S L^-1) */
  lt_tensor_release(l);
  return r;
}

/* ---- determinants ---- */

lt_tensor *lt_grad_slogdet(lt_tensor *grad_logabsdet, lt_tensor *grad_sign, lt_tensor *A, lt_tensor *sign) {
  /* log det A = logabsdet + i theta (sign = e^(i theta)) moves by tr(A^-1 dA); a real
  ** loss sees it through w = g_logabsdet + i Im(g_sign conj(sign)), so gA = w A^-H.
  ** A real sign is locally constant: its gradient is dropped. */
  lt_tensor *w;
  if (is_complex(A) && grad_sign) {
    lt_tensor *im = imag_c(mul_c(ref(grad_sign), conj_c(ref(sign))));
    lt_tensor *re = !im ? NULL : grad_logabsdet ? ref(grad_logabsdet) : lt_zeros_like(im, -1, (lt_device){ .type = -1 });
    w = re && im ? lt_complex(re, im) : NULL;
    lt_tensor_release(re);
    lt_tensor_release(im);
  } else if (grad_logabsdet) {
    w = ref(grad_logabsdet);
  } else {
    return lt_zeros_like(A, -1, (lt_device){ .type = -1 });
  }
  return mul_c(unsqueeze_c(unsqueeze_c(w, -1), -1), inv_mH(A));
}

/* the product of the other entries along the last dim, prod_{j != i} s_j, as the
** product of an exclusive prefix and an exclusive suffix cumprod: no division, so
** zeros in s are fine */
static lt_tensor *prod_others(lt_tensor *s) {
  int64_t n = s->sizes[s->ndim - 1], last = s->ndim - 1;
  lt_tensor *first = lt_narrow(s, -1, 0, 1);
  lt_tensor *one = first ? lt_ones_like(first, -1, (lt_device){ .type = -1 }) : NULL;
  lt_tensor *head = one ? lt_narrow(s, -1, 0, n - 1) : NULL, *tail = head ? lt_narrow(s, -1, 1, n - 1) : NULL;
  lt_tensor *pre_parts[2] = { one, head }, *suf_parts[2] = { tail, one };
  lt_tensor *pre_in = tail ? lt_cat(pre_parts, 2, -1) : NULL, *suf_in = pre_in ? lt_cat(suf_parts, 2, -1) : NULL;
  lt_tensor *pre = suf_in ? lt_cumprod(pre_in, -1, -1) : NULL;
  lt_tensor *flipped = pre ? lt_flip(suf_in, lt_intlist_make(&last, 1)) : NULL;
  lt_tensor *cp = flipped ? lt_cumprod(flipped, -1, -1) : NULL;
  lt_tensor *suf = cp ? lt_flip(cp, lt_intlist_make(&last, 1)) : NULL;
  lt_tensor *r = suf ? lt_mul(pre, suf) : NULL;
  lt_tensor *all[] = { first, one, head, tail, pre_in, suf_in, pre, flipped, cp, suf };
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) lt_tensor_release(all[i]);
  return r;
}

/* the cofactor form of det's gradient, finite at singular A: with A = U S V^H,
** det A = det U det V^H prod S, so gA = U diag(grad conj(det U det V^H) prod_{j != i} S_j) V^H */
static lt_tensor *det_grad_svd(lt_tensor *grad, lt_tensor *A) {
  lt_tensor *U = NULL, *S = NULL, *Vh = NULL;
  if (lt_linalg_svd(A, false, &U, &S, &Vh)) return NULL;
  lt_tensor *alpha = conj_c(mul_c(lt_linalg_det(U), lt_linalg_det(Vh)));
  lt_tensor *D = mul_c(unsqueeze_c(mul_c(ref(grad), alpha), -1), prod_others(S));
  lt_tensor *r = mm_c(mul_c(ref(U), unsqueeze_c(D, -2)), ref(Vh));
  lt_tensor_release(U);
  lt_tensor_release(S);
  lt_tensor_release(Vh);
  return r;
}

/* whether some entry of det is exactly zero (an exactly singular matrix) */
static int has_zero(lt_tensor *det) {
  if (det->numel == 0) return 0;
  lt_tensor *m = lt_abs(det);
  lt_tensor *lo = m ? lt_min(m) : NULL;
  lt_scalar v = lo ? lt_tensor_item(lo) : lt_scalar_none();
  lt_tensor_release(m);
  lt_tensor_release(lo);
  if (lt_scalar_is_none(v)) return -1;
  return lt_scalar_to_double(v) == 0;
}

lt_tensor *lt_grad_det(lt_tensor *grad, lt_tensor *A, lt_tensor *det) {
  /* d det = det tr(A^-1 dA): gA = grad conj(det) A^-H where A is invertible. Where a
  ** det is exactly zero that is 0 * inf: the batch takes the SVD's cofactor form
  ** instead (as PyTorch), which is finite there and the same elsewhere */
  int z = has_zero(det);
  if (z < 0) return NULL;
  if (z) return det_grad_svd(grad, A);
  lt_tensor *gd = mul_c(ref(grad), conj_c(ref(det)));
  return mul_c(unsqueeze_c(unsqueeze_c(gd, -1), -1), inv_mH(A));
}

/* ---- least squares (full column rank) ---- */

/* G = (A^H A)^-1 gX */
static lt_tensor *normal_solve(lt_tensor *grad, lt_tensor *A) {
  return solve_c(mm_c(mH_c(ref(A)), ref(A)), ref(grad), true);
}

lt_tensor *lt_grad_lstsq_B(lt_tensor *grad, lt_tensor *A) {
  return mm_c(ref(A), normal_solve(grad, A));
}

lt_tensor *lt_grad_lstsq_A(lt_tensor *grad, lt_tensor *A, lt_tensor *B, lt_tensor *solution) {
  /* dX = A^+ (dB - dA X) + (A^H A)^-1 dA^H (B - A X): gA = -gB X^H + R G^H */
  lt_tensor *G = normal_solve(grad, A);
  if (!G) return NULL;
  lt_tensor *gB = mm_c(ref(A), ref(G));
  lt_tensor *R = sub_c(ref(B), mm_c(ref(A), ref(solution)));
  return sub_c(mm_c(R, mH_c(G)), mm_c(gB, mH_c(ref(solution))));
}
