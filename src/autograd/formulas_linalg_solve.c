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

static lt_tensor *unsqueeze_c(lt_tensor *a, int64_t d) {
  lt_tensor *r = a ? lt_unsqueeze(a, d) : NULL;
  lt_tensor_release(a);
  return r;
}

lt_tensor *lt_linalg_triangle(lt_tensor *t, bool upper, int64_t diag) {
  if (!is_complex(t)) return upper ? lt_triu(t, diag) : lt_tril(t, diag);
  /* tril and triu refuse complex: t times the real 0/1 mask of the triangle */
  int64_t sz[2] = { t->sizes[t->ndim - 2], t->sizes[t->ndim - 1] };
  lt_tensor *ones = lt_ones(lt_intlist_make(sz, 2), (int)lt_dtype_to_real((lt_dtype)t->dtype), lt_tensor_device(t));
  lt_tensor *mask = ones ? (upper ? lt_triu(ones, diag) : lt_tril(ones, diag)) : NULL;
  lt_tensor *r = mask ? lt_mul(t, mask) : NULL;
  lt_tensor_release(ones);
  lt_tensor_release(mask);
  return r;
}

static lt_tensor *tri_c(lt_tensor *a, bool upper, int64_t diag) {
  lt_tensor *r = a ? lt_linalg_triangle(a, upper, diag) : NULL;
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

lt_tensor *lt_grad_lu_factor(lt_tensor *grad, lt_tensor *LU, lt_tensor *pivots) {
  if (LU->sizes[LU->ndim - 1] != LU->sizes[LU->ndim - 2])
    return lt_error_null("linalg.lu_factor: the derivative for a non-square A is not implemented");
  lt_tensor *P = NULL, *Lo = NULL, *Up = NULL;
  if (unpack(LU, pivots, &P, &Lo, &Up)) return NULL;
  /* A = P L U, P^T dA = dL U + L dU, and L^-1 P^T dA U^-1 = L^-1 dL + dU U^-1 splits into
  ** its strictly lower and its upper part: so gA = P L^-H phi U^-H with phi below */
  lt_tensor *phiL = tri_c(mm_c(mH_c(ref(Lo)), tri_c(ref(grad), false, -1)), false, -1);
  lt_tensor *phiU = tri_c(mm_c(tri_c(ref(grad), true, 0), mH_c(ref(Up))), true, 0);
  lt_tensor *phi = add_c(phiL, phiU);
  lt_tensor *Y = trisolve_c(mH_c(ref(Lo)), phi, true, true, true);     /* L^-H phi */
  lt_tensor *Z = trisolve_c(mH_c(ref(Up)), Y, false, false, false);    /* (L^-H phi) U^-H */
  lt_tensor *r = mm_c(ref(P), Z);
  lt_tensor_release(P);
  lt_tensor_release(Lo);
  lt_tensor_release(Up);
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

lt_tensor *lt_grad_slogdet(lt_tensor *grad, lt_tensor *A) {
  return mul_c(unsqueeze_c(unsqueeze_c(ref(grad), -1), -1), inv_mH(A));
}

lt_tensor *lt_grad_det(lt_tensor *grad, lt_tensor *A, lt_tensor *det) {
  /* d det = det tr(A^-1 dA): gA = grad conj(det) A^-H */
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
