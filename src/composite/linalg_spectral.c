/*
** linalg_spectral.c — the composite ops of src/ops/linalg_spectral.lua: the
** public faces of eigh and svd over their kernels (vectors computed only when
** a gradient needs them), the old names (torch.qr, torch.svd, torch.symeig),
** and what is built on the decompositions: pinv, matrix_rank, the matrix,
** vector and general norms, cond. Written with entry points, so autograd sees
** every step.
*/
#include <float.h>
#include <math.h>
#include <string.h>
#include "lt_ops.h"
#include "autograd/autograd.h"
#include "core/error.h"
#include "core/tpool.h"
#include "meta/meta.h"
#include "meta/linalg_spectral.h"

typedef lt_tpool pool;
#define KEEP(var, e) do { if (!((var) = lt_tpool_keep(&P, (e)))) goto out; } while (0)

static bool wants_grad(const lt_tensor *t) { return lt_grad_enabled() && t->requires_grad; }
static lt_tensor *num(double v) { return lt_tensor_wrapped_number(lt_scalar_float(v)); }
static lt_tensor *mT(lt_tensor *t) { return lt_transpose(t, -2, -1); }
static bool is_cx(const lt_tensor *t) { return lt_dtype_is_complex((lt_dtype)t->dtype); }
/* t^H: the transpose, conjugated when complex (a new reference) */
static lt_tensor *mH(lt_tensor *t) {
  lt_tensor *tr = mT(t);
  if (!tr || !is_cx(t)) return tr;
  lt_tensor *c = lt_conj(tr);
  lt_tensor_release(tr);
  return c;
}
static lt_intlist one_dim(const int64_t *d) { return lt_intlist_make(d, 1); }
static const int64_t LAST[1] = {-1};

/* an empty 1-D tensor of t's dtype and device (the vectors not asked for) */
static lt_tensor *empty_of(const lt_tensor *t) {
  int64_t z = 0;
  return lt_zeros(lt_intlist_make(&z, 1), t->dtype, lt_tensor_device(t));
}

/* ---- QR ---- */

/* The m x m product H_1 ... H_k of the reflectors H_i = I - tau_i v_i v_i^H, v_i column i
** of A below the diagonal with a 1 on it, built with differentiable ops (a gradient is
** needed): Q starts as I and takes Q - tau_i (Q v_i) v_i^H, one reflector at a time. */
static lt_tensor *reflector_product(lt_tensor *A, lt_tensor *tau) {
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = tau->sizes[tau->ndim - 1];
  pool P = {0};
  lt_tensor *Q = NULL, *low, *eye_mn, *V, *I;
  KEEP(low, lt_tril(A, -1));
  KEEP(eye_mn, lt_eye(m, n, A->dtype, lt_tensor_device(A)));
  KEEP(V, lt_add(low, eye_mn, lt_scalar_int(1)));
  KEEP(I, lt_eye(m, m, A->dtype, lt_tensor_device(A)));
  Q = I;                 /* 2-D: the first products broadcast it over A's batch dims */
  lt_tensor_retain(Q);
  for (int64_t i = 0; Q && i < k; i++) {
    pool S = {0};
    lt_tensor *v = lt_tpool_keep(&S, lt_narrow(V, -1, i, 1));
    lt_tensor *t = v ? lt_tpool_keep(&S, lt_narrow(tau, -1, i, 1)) : NULL;
    lt_tensor *t2 = t ? lt_tpool_keep(&S, lt_unsqueeze(t, -1)) : NULL;
    lt_tensor *qv = t2 ? lt_tpool_keep(&S, lt_matmul(Q, v)) : NULL;
    lt_tensor *qvt = qv ? lt_tpool_keep(&S, lt_mul(qv, t2)) : NULL;
    lt_tensor *vt = qvt ? lt_tpool_keep(&S, mH(v)) : NULL;
    lt_tensor *upd = vt ? lt_tpool_keep(&S, lt_matmul(qvt, vt)) : NULL;
    lt_tensor *next = upd ? lt_sub(Q, upd, lt_scalar_int(1)) : NULL;
    lt_tpool_drop(&S);
    lt_tensor_release(Q);
    Q = next;
  }
  if (Q && Q->ndim != A->ndim) {   /* no reflector at all: I, over the batch dims */
    int64_t sz[LT_MAX_DIMS];
    for (int i = 0; i < A->ndim - 2; i++) sz[i] = A->sizes[i];
    sz[A->ndim - 2] = sz[A->ndim - 1] = m;
    lt_tensor *e = lt_expand(Q, lt_intlist_make(sz, A->ndim));
    lt_tensor_release(Q);
    Q = e;
  }
out:
  lt_tpool_drop(&P);
  return Q;
}

static bool any_grad(lt_tensor *a, lt_tensor *b, lt_tensor *c) {
  return wants_grad(a) || wants_grad(b) || (c && wants_grad(c));
}

lt_tensor *lt_composite_linalg_householder_product(lt_tensor *A, lt_tensor *tau) {
  if (!any_grad(A, tau, NULL)) return lt__linalg_householder_product(A, tau);
  if (lt_meta_householder("linalg.householder_product", A, tau) < 0) return NULL;
  lt_tensor *Q = reflector_product(A, tau);
  lt_tensor *r = Q ? lt_narrow(Q, -1, 0, A->sizes[A->ndim - 1]) : NULL;
  lt_tensor_release(Q);
  return r;
}

lt_tensor *lt_composite_orgqr(lt_tensor *self, lt_tensor *input2) {
  return lt_composite_linalg_householder_product(self, input2);
}

lt_tensor *lt_composite_ormqr(lt_tensor *self, lt_tensor *input2, lt_tensor *input3, bool left, bool transpose) {
  if (!any_grad(self, input2, input3)) return lt__ormqr(self, input2, input3, left, transpose);
  if (lt_meta_ormqr("ormqr", self, input2, input3, left) < 0) return NULL;
  lt_tensor *Q = reflector_product(self, input2), *Qt = NULL, *r = NULL;
  if (!Q) return NULL;
  if (transpose) { Qt = mH(Q); lt_tensor_release(Q); Q = Qt; if (!Q) return NULL; }   /* Q^H for complex */
  r = left ? lt_matmul(Q, input3) : lt_matmul(input3, Q);
  lt_tensor_release(Q);
  return r;
}

int lt_composite_qr(lt_tensor *self, bool some, lt_tensor **Q, lt_tensor **R) {
  return lt_linalg_qr(self, some ? "reduced" : "complete", Q, R);
}

/* ---- eigh ---- */

int lt_composite_linalg_eigh(lt_tensor *A, const char *UPLO, lt_tensor **eigenvalues, lt_tensor **eigenvectors) {
  return lt__linalg_eigh(A, UPLO, true, eigenvalues, eigenvectors);
}

lt_tensor *lt_composite_linalg_eigvalsh(lt_tensor *A, const char *UPLO) {
  lt_tensor *L, *V;
  if (lt__linalg_eigh(A, UPLO, wants_grad(A), &L, &V) < 0) return NULL;
  lt_tensor_release(V);
  return L;
}

int lt_composite_symeig(lt_tensor *self, bool eigenvectors, bool upper, lt_tensor **L, lt_tensor **V) {
  if (lt__linalg_eigh(self, upper ? "U" : "L", eigenvectors || wants_grad(self), L, V) < 0) return -1;
  if (!eigenvectors) {
    lt_tensor_release(*V);
    if (!(*V = empty_of(self))) { lt_tensor_release(*L); *L = NULL; return -1; }
  }
  return 0;
}

/* ---- eig ---- */

int lt_composite_linalg_eig(lt_tensor *A, lt_tensor **eigenvalues, lt_tensor **eigenvectors) {
  return lt__linalg_eig(A, true, eigenvalues, eigenvectors);
}

lt_tensor *lt_composite_linalg_eigvals(lt_tensor *A) {
  lt_tensor *L, *V;
  if (lt__linalg_eig(A, wants_grad(A), &L, &V) < 0) return NULL;
  lt_tensor_release(V);
  return L;
}

/* ---- SVD ---- */

int lt_composite_linalg_svd(lt_tensor *A, bool full_matrices, lt_tensor **U, lt_tensor **S, lt_tensor **Vh) {
  return lt__linalg_svd(A, full_matrices, true, U, S, Vh);
}

lt_tensor *lt_composite_linalg_svdvals(lt_tensor *A) {
  lt_tensor *U, *S, *Vh;
  if (lt__linalg_svd(A, false, wants_grad(A), &U, &S, &Vh) < 0) return NULL;
  lt_tensor_release(U);
  lt_tensor_release(Vh);
  return S;
}

/* zeros of A's batch shape with a trailing (d x d) */
static lt_tensor *batch_zeros(const lt_tensor *A, int64_t d) {
  int64_t sz[LT_MAX_DIMS];
  int nb = A->ndim - 2;
  for (int i = 0; i < nb; i++) sz[i] = A->sizes[i];
  sz[nb] = sz[nb + 1] = d;
  return lt_zeros(lt_intlist_make(sz, nb + 2), A->dtype, lt_tensor_device(A));
}

int lt_composite_svd(lt_tensor *self, bool some, bool compute_uv, lt_tensor **U, lt_tensor **S, lt_tensor **V) {
  if (compute_uv) {
    lt_tensor *Vh;
    if (lt__linalg_svd(self, !some, true, U, S, &Vh) < 0) return -1;
    *V = mH(Vh);
    lt_tensor_release(Vh);
    if (!*V) { lt_tensor_release(*U); lt_tensor_release(*S); *U = *S = NULL; return -1; }
    return 0;
  }
  if (!(*S = lt_composite_linalg_svdvals(self))) return -1;
  *U = batch_zeros(self, self->sizes[self->ndim - 2]);
  *V = *U ? batch_zeros(self, self->sizes[self->ndim - 1]) : NULL;
  if (!*V) { lt_tensor_release(*U); lt_tensor_release(*S); *U = *S = NULL; return -1; }
  return 0;
}

/* (C * w) @ R^H: the columns of C scaled by w (..., k), times R's conjugate transpose — a
** matrix rebuilt from its factors, as pinv (V diag(w) U^H) and the SVD inverse need it */
static lt_tensor *scaled_product(lt_tensor *C, lt_tensor *w, lt_tensor *R) {
  pool P = {0};
  lt_tensor *u, *left, *rt, *res = NULL;
  KEEP(u, lt_unsqueeze(w, -2));
  KEEP(left, lt_mul(C, u));
  KEEP(rt, mH(R));
  res = lt_matmul(left, rt);
out:
  lt_tpool_drop(&P);
  return res;
}

/* ---- tolerances (pinv, matrix_rank) ---- */

/* PyTorch's rule: atol absent is 0; rtol absent is eps * max(m, n) when atol is 0, else 0 */
static void tolerances(const lt_tensor *A, lt_scalar atol, lt_scalar rtol, double *a, double *r) {
  *a = lt_scalar_is_none(atol) ? 0.0 : lt_scalar_to_double(atol);
  if (!lt_scalar_is_none(rtol)) { *r = lt_scalar_to_double(rtol); return; }
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
  double eps = A->dtype == LT_FLOAT64 || A->dtype == LT_COMPLEX128 ? DBL_EPSILON : FLT_EPSILON;
  *r = *a > 0.0 ? 0.0 : eps * (double)(m > n ? m : n);
}

/* the spectrum the tolerance applies to: singular values, or |eigenvalues| when hermitian,
** with L and V (eigh) or U, S, Vh (svd) when vectors are asked for */
typedef struct spectrum { lt_tensor *vals, *L, *V, *U, *S, *Vh; } spectrum;

static void spectrum_release(spectrum *s) {
  lt_tensor_release(s->vals); lt_tensor_release(s->L); lt_tensor_release(s->V);
  lt_tensor_release(s->U); lt_tensor_release(s->S); lt_tensor_release(s->Vh);
  memset(s, 0, sizeof *s);
}

static int spectrum_of(const char *op, lt_tensor *A, bool hermitian, bool vectors, spectrum *s) {
  memset(s, 0, sizeof *s);
  if (lt_meta_spectral_matrix(op, "A", A, hermitian) < 0) return -1;
  if (hermitian) {
    if (lt__linalg_eigh(A, "L", vectors, &s->L, &s->V) < 0) return -1;
    if (!(s->vals = lt_abs(s->L))) { spectrum_release(s); return -1; }
  } else {
    if (lt__linalg_svd(A, false, vectors, &s->U, &s->S, &s->Vh) < 0) return -1;
    s->vals = s->S;
    lt_tensor_retain(s->vals);
  }
  return 0;
}

/* vals > max(atol, rtol * max(vals)) over the last dim (a bool mask) */
static lt_tensor *above_tolerance(lt_tensor *vals, double atol, double rtol) {
  pool P = {0};
  lt_tensor *mx, *r, *rt, *at, *tol, *res = NULL;
  KEEP(mx, lt_amax(vals, one_dim(LAST), true));
  KEEP(rt, num(rtol));
  KEEP(r, lt_mul(mx, rt));
  KEEP(at, num(atol));
  KEEP(tol, lt_clamp(r, at, NULL));
  res = lt_gt(vals, tol);
out:
  lt_tpool_drop(&P);
  return res;
}

lt_tensor *lt_composite_linalg_pinv(lt_tensor *A, lt_scalar rcond, bool hermitian, lt_scalar atol, lt_scalar rtol) {
  const char *op = "linalg.pinv";
  if (!lt_scalar_is_none(rcond) && !lt_scalar_is_none(rtol))
    return lt_error_null("%s: give rtol or rcond (its old name), not both", op);
  double at, rt;
  if (lt_meta_spectral_matrix(op, "A", A, hermitian) < 0) return NULL;
  tolerances(A, atol, lt_scalar_is_none(rcond) ? rtol : rcond, &at, &rt);
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
  if (m == 0 || n == 0) {   /* the pseudo-inverse of an empty matrix is an empty (n x m) one */
    lt_tensor *t = mT(A);
    lt_tensor *r = t ? lt_zeros(lt_intlist_make(t->sizes, t->ndim), A->dtype, lt_tensor_device(A)) : NULL;
    lt_tensor_release(t);
    return r;
  }
  spectrum s;
  if (spectrum_of(op, A, hermitian, true, &s) < 0) return NULL;
  pool P = {0};
  lt_tensor *res = NULL, *mask, *one, *zero, *safe, *inv, *w;
  lt_tensor *d = hermitian ? s.L : s.S;                 /* what gets inverted */
  KEEP(mask, above_tolerance(s.vals, at, rt));
  KEEP(one, num(1.0));
  KEEP(zero, num(0.0));
  KEEP(safe, lt_where(mask, d, one));                   /* no 1/0 anywhere, so no NaN gradient */
  KEEP(inv, lt_reciprocal(safe));
  KEEP(w, lt_where(mask, inv, zero));
  if (hermitian) res = scaled_product(s.V, w, s.V);    /* V diag(w) V^T */
  else {
    lt_tensor *v;
    KEEP(v, mH(s.Vh));
    res = scaled_product(v, w, s.U);                    /* V diag(w) U^T */
  }
out:
  lt_tpool_drop(&P);
  spectrum_release(&s);
  return res;
}

lt_tensor *lt_composite_pinverse(lt_tensor *self, lt_scalar rcond) {
  return lt_composite_linalg_pinv(self, lt_scalar_none(), false, lt_scalar_none(), rcond);
}

lt_tensor *lt_composite_linalg_matrix_rank(lt_tensor *A, lt_scalar tol, bool hermitian, lt_scalar atol, lt_scalar rtol) {
  const char *op = "linalg.matrix_rank";
  if (!lt_scalar_is_none(tol) && (!lt_scalar_is_none(atol) || !lt_scalar_is_none(rtol)))
    return lt_error_null("%s: give tol (PyTorch 1.13) or atol and rtol, not both", op);
  double at, rt;
  if (lt_meta_spectral_matrix(op, "A", A, hermitian) < 0) return NULL;
  if (!lt_scalar_is_none(tol)) { at = lt_scalar_to_double(tol); rt = 0.0; }
  else tolerances(A, atol, rtol, &at, &rt);
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
  if (m == 0 || n == 0)
    return lt_zeros(lt_intlist_make(A->sizes, A->ndim - 2), LT_INT64, lt_tensor_device(A));
  /* a count has no gradient: the spectrum is computed without vectors */
  bool g = lt_tls_grad_enabled;
  lt_tls_grad_enabled = false;
  spectrum s;
  lt_tensor *res = NULL;
  if (spectrum_of(op, A, hermitian, false, &s) == 0) {
    lt_tensor *mask = above_tolerance(s.vals, at, rt);
    if (mask) res = lt_sum(mask, one_dim(LAST), false, LT_INT64);
    lt_tensor_release(mask);
    spectrum_release(&s);
  }
  lt_tls_grad_enabled = g;
  return res;
}

/* ---- norms ---- */

/* x converted to dtype (when given), retained as is otherwise */
static lt_tensor *with_dtype(lt_tensor *x, int dtype) {
  if (dtype < 0) { lt_tensor_retain(x); return x; }
  return lt_to(x, dtype, false);
}

/* The norms' input: floating or complex x, and a dtype (when given) of x's kind, float
** for a real x and complex for a complex one (the norm itself is real either way) */
static int norm_input(const char *op, const char *arg, lt_tensor *x, int dtype) {
  if (!is_cx(x) && lt_meta_check_float(op, arg, x) < 0) return -1;
  if (dtype < 0) return 0;
  lt_dtype d = (lt_dtype)dtype;
  if (is_cx(x) ? !lt_dtype_is_complex(d) : !lt_dtype_is_float(d))
    return lt_error("%s: argument 'dtype' must be a %s dtype for a %s input, got %s", op,
                    is_cx(x) ? "complex" : "floating point", lt_dtype_name(lt_tensor_dtype(x)), lt_dtype_name(d));
  return 0;
}

/* the p-norm of x (the entry point lt_norm) over the moduli of a complex x */
static lt_tensor *norm_of(lt_tensor *x, lt_scalar ord, lt_intlist dim, bool keepdim) {
  if (!is_cx(x)) return lt_norm(x, ord, dim, keepdim, -1);
  lt_tensor *a = lt_abs(x);
  lt_tensor *r = a ? lt_norm(a, ord, dim, keepdim, -1) : NULL;
  lt_tensor_release(a);
  return r;
}

lt_tensor *lt_composite_linalg_vector_norm(lt_tensor *x, lt_scalar ord, lt_intlist dim, bool keepdim, int dtype) {
  const char *op = "linalg.vector_norm";
  if (norm_input(op, "x", x, dtype) < 0) return NULL;
  lt_tensor *y = with_dtype(x, dtype);
  if (!y) return NULL;
  lt_tensor *r = norm_of(y, ord, dim, keepdim);
  lt_tensor_release(y);
  return r;
}

/* the two dims of a matrix norm, wrapped to [0, ndim) and distinct */
static int matrix_dims(const char *op, const lt_tensor *A, lt_intlist dim, int64_t d[2]) {
  if (A->ndim < 2) return lt_error("%s: argument 'A' must have at least 2 dims, got %d", op, A->ndim);
  if (dim.n < 0) { d[0] = A->ndim - 2; d[1] = A->ndim - 1; return 0; }
  if (dim.n != 2) return lt_error("%s: argument 'dim' must name 2 dims, got %d", op, dim.n);
  for (int i = 0; i < 2; i++) {
    int w = lt_wrap_dim(op, dim.v[i], A->ndim);
    if (w < 0) return -1;
    d[i] = w;
  }
  if (d[0] == d[1]) return lt_error("%s: argument 'dim' must name 2 different dims", op);
  return 0;
}

/* the sizes of a reduction over dims d[0], d[1] of A (kept as 1 when keepdim) */
static int reduced_sizes(const lt_tensor *A, const int64_t d[2], bool keepdim, int64_t *sz) {
  int n = 0;
  for (int i = 0; i < A->ndim; i++) {
    if (i == d[0] || i == d[1]) { if (keepdim) sz[n++] = 1; }
    else sz[n++] = A->sizes[i];
  }
  return n;
}

/* f(singular values of A with dims d moved last) reduced over the last dim, reshaped */
static lt_tensor *svd_norm(lt_tensor *A, const int64_t d[2], bool keepdim, int which) {
  pool P = {0};
  lt_tensor *B, *S, *r, *res = NULL;
  int64_t dst[2] = {-2, -1}, sz[LT_MAX_DIMS];
  KEEP(B, lt_movedim(A, lt_intlist_make(d, 2), lt_intlist_make(dst, 2)));
  KEEP(S, lt_composite_linalg_svdvals(B));
  if (which == 0) KEEP(r, lt_sum(S, one_dim(LAST), false, -1));            /* nuclear */
  else if (which > 0) KEEP(r, lt_amax(S, one_dim(LAST), false));          /* 2 */
  else KEEP(r, lt_amin(S, one_dim(LAST), false));                         /* -2 */
  int n = reduced_sizes(A, d, keepdim, sz);
  res = lt_reshape(r, lt_intlist_make(sz, n));
out:
  lt_tpool_drop(&P);
  return res;
}

/* max (or min) over dim `other` of the sums of |A| over dim `summed` */
static lt_tensor *sum_norm(lt_tensor *A, const int64_t d[2], int64_t summed, int64_t other, bool keepdim, bool mx) {
  pool P = {0};
  lt_tensor *a, *s, *r, *res = NULL;
  int64_t sz[LT_MAX_DIMS];
  KEEP(a, lt_abs(A));
  KEEP(s, lt_sum(a, one_dim(&summed), true, -1));
  KEEP(r, mx ? lt_amax(s, one_dim(&other), true) : lt_amin(s, one_dim(&other), true));
  int n = reduced_sizes(A, d, keepdim, sz);
  res = lt_reshape(r, lt_intlist_make(sz, n));
out:
  lt_tpool_drop(&P);
  return res;
}

static int matrix_norm_input(const char *op, lt_tensor *A, int dtype, lt_tensor **B) {
  if (lt_meta_spectral_matrix(op, "A", A, false) < 0 || norm_input(op, "A", A, dtype) < 0) return -1;
  if (dtype >= 0 && dtype != LT_FLOAT32 && dtype != LT_FLOAT64 && dtype != LT_COMPLEX64 && dtype != LT_COMPLEX128)
    return lt_error("%s: argument 'dtype' must be float32, float64, complex64 or complex128, got %s", op,
                    lt_dtype_name((lt_dtype)dtype));
  return (*B = with_dtype(A, dtype)) ? 0 : -1;
}

static lt_tensor *matrix_norm_num(const char *op, lt_tensor *A, double o, lt_intlist dim, bool keepdim, int dtype) {
  int64_t d[2];
  lt_tensor *B, *r = NULL;
  if (matrix_dims(op, A, dim, d) < 0 || matrix_norm_input(op, A, dtype, &B) < 0) return NULL;
  if (o == 2.0 || o == -2.0) r = svd_norm(B, d, keepdim, o > 0 ? 1 : -1);
  else if (o == 1.0 || o == -1.0) r = sum_norm(B, d, d[0], d[1], keepdim, o > 0);
  else if (isinf(o)) r = sum_norm(B, d, d[1], d[0], keepdim, o > 0);
  else lt_error("%s: argument 'ord' must be \"fro\", \"nuc\", math.huge, -math.huge, 1, -1, 2 or -2, got %g", op, o);
  lt_tensor_release(B);
  return r;
}

static lt_tensor *matrix_norm_str(const char *op, lt_tensor *A, const char *ord, lt_intlist dim, bool keepdim, int dtype) {
  int64_t d[2];
  lt_tensor *B, *r = NULL;
  bool fro = !ord || !strcmp(ord, "fro"), nuc = ord && !strcmp(ord, "nuc");
  if (!fro && !nuc)
    return lt_error_null("%s: argument 'ord' must be \"fro\", \"nuc\", math.huge, -math.huge, 1, -1, 2 or -2, got \"%s\"", op, ord);
  if (matrix_dims(op, A, dim, d) < 0 || matrix_norm_input(op, A, dtype, &B) < 0) return NULL;
  if (fro) r = norm_of(B, lt_scalar_float(2.0), lt_intlist_make(d, 2), keepdim);
  else r = svd_norm(B, d, keepdim, 0);
  lt_tensor_release(B);
  return r;
}

lt_tensor *lt_composite_linalg_matrix_norm_str(lt_tensor *A, const char *ord, lt_intlist dim, bool keepdim, int dtype) {
  return matrix_norm_str("linalg.matrix_norm", A, ord, dim, keepdim, dtype);
}

lt_tensor *lt_composite_linalg_matrix_norm(lt_tensor *A, lt_scalar ord, lt_intlist dim, bool keepdim, int dtype) {
  return matrix_norm_num("linalg.matrix_norm", A, lt_scalar_to_double(ord), dim, keepdim, dtype);
}

lt_tensor *lt_composite_linalg_norm(lt_tensor *A, lt_scalar ord, lt_intlist dim, bool keepdim, int dtype) {
  const char *op = "linalg.norm";
  if (dim.n == 2) {
    if (lt_scalar_is_none(ord)) return matrix_norm_str(op, A, "fro", dim, keepdim, dtype);
    return matrix_norm_num(op, A, lt_scalar_to_double(ord), dim, keepdim, dtype);
  }
  if (dim.n > 2) return lt_error_null("%s: argument 'dim' must name 1 or 2 dims, got %d", op, dim.n);
  if (dim.n < 0 && !lt_scalar_is_none(ord)) {
    if (A->ndim == 2) return matrix_norm_num(op, A, lt_scalar_to_double(ord), dim, keepdim, dtype);
    if (A->ndim != 1)
      return lt_error_null("%s: argument 'A' must be 1-D or 2-D when ord is given without dim, got %d dims", op, A->ndim);
  }
  if (norm_input(op, "A", A, dtype) < 0) return NULL;
  lt_tensor *y = with_dtype(A, dtype);
  if (!y) return NULL;
  lt_tensor *r = norm_of(y, lt_scalar_is_none(ord) ? lt_scalar_float(2.0) : ord, dim, keepdim);
  lt_tensor_release(y);
  return r;
}

lt_tensor *lt_composite_linalg_norm_str(lt_tensor *A, const char *ord, lt_intlist dim, bool keepdim, int dtype) {
  const char *op = "linalg.norm";
  if (dim.n >= 0 && dim.n != 2)
    return lt_error_null("%s: ord \"%s\" is a matrix norm: argument 'dim' must name 2 dims, got %d", op, ord, dim.n);
  if (dim.n < 0 && A->ndim != 2)
    return lt_error_null("%s: ord \"%s\" without dim needs a 2-D argument 'A', got %d dims", op, ord, A->ndim);
  return matrix_norm_str(op, A, ord, dim, keepdim, dtype);
}

/* ---- cond ---- */

/* A's inverse through its SVD, inf where a singular value is 0 (cond's 1-, inf- and fro-norms) */
static lt_tensor *svd_inverse(lt_tensor *A) {
  pool P = {0};
  lt_tensor *U, *S, *Vh, *res = NULL, *inv, *v;
  if (lt__linalg_svd(A, false, true, &U, &S, &Vh) < 0) return NULL;
  lt_tpool_keep(&P, U); lt_tpool_keep(&P, S); lt_tpool_keep(&P, Vh);
  KEEP(inv, lt_reciprocal(S));
  KEEP(v, mH(Vh));
  res = scaled_product(v, inv, U);
out:
  lt_tpool_drop(&P);
  return res;
}

static lt_tensor *cond_by_inverse(const char *op, lt_tensor *A, double p, const char *ps) {
  if (lt_meta_spectral_matrix(op, "A", A, true) < 0) return NULL;
  pool P = {0};
  lt_tensor *inv, *na, *ni, *r, *S, *smin, *zero, *sing, *infv, *res = NULL;
  lt_intlist none = lt_intlist_none();
  KEEP(inv, svd_inverse(A));
  if (ps) {
    KEEP(na, matrix_norm_str(op, A, ps, none, false, -1));
    KEEP(ni, matrix_norm_str(op, inv, ps, none, false, -1));
  } else {
    KEEP(na, matrix_norm_num(op, A, p, none, false, -1));
    KEEP(ni, matrix_norm_num(op, inv, p, none, false, -1));
  }
  KEEP(r, lt_mul(na, ni));
  /* a singular matrix: inf, as PyTorch gives, rather than the NaN of 0 * inf */
  KEEP(S, lt_composite_linalg_svdvals(A));
  KEEP(smin, lt_amin(S, one_dim(LAST), false));
  KEEP(zero, num(0.0));
  KEEP(sing, lt_eq(smin, zero));
  KEEP(infv, num(INFINITY));
  res = lt_where(sing, infv, r);
out:
  lt_tpool_drop(&P);
  return res;
}

lt_tensor *lt_composite_linalg_cond(lt_tensor *A, lt_scalar p) {
  const char *op = "linalg.cond";
  double pv = lt_scalar_is_none(p) ? 2.0 : lt_scalar_to_double(p);
  if (pv == 2.0 || pv == -2.0) {
    if (lt_meta_spectral_matrix(op, "A", A, false) < 0) return NULL;
    pool P = {0};
    lt_tensor *S, *mx, *mn, *res = NULL;
    KEEP(S, lt_composite_linalg_svdvals(A));
    KEEP(mx, lt_amax(S, one_dim(LAST), false));
    KEEP(mn, lt_amin(S, one_dim(LAST), false));
    res = pv > 0 ? lt_div(mx, mn, NULL) : lt_div(mn, mx, NULL);
  out:
    lt_tpool_drop(&P);
    return res;
  }
  if (pv != 1.0 && pv != -1.0 && !isinf(pv))
    return lt_error_null("%s: argument 'p' must be nil, 2, -2, 1, -1, math.huge, -math.huge, \"fro\" or \"nuc\", got %g", op, pv);
  return cond_by_inverse(op, A, pv, NULL);
}

lt_tensor *lt_composite_linalg_cond_str(lt_tensor *A, const char *p) {
  const char *op = "linalg.cond";
  if (strcmp(p, "fro") && strcmp(p, "nuc"))
    return lt_error_null("%s: argument 'p' must be nil, 2, -2, 1, -1, math.huge, -math.huge, \"fro\" or \"nuc\", got \"%s\"", op, p);
  return cond_by_inverse(op, A, 0.0, p);
}
