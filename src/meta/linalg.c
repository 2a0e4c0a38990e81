/*
** linalg.c — the device-neutral half of every matrix product op (dot, mv,
** mm, bmm, matmul, the add* forms, outer, addr, inner, kron; einsum in
** einsum_gemm.c): the shape and
** dtype checks with their messages, the result (or out=), and the strided
** views that turn each op into one batched product C = beta C + alpha A B,
** which the backend's gemm computes (meta/linalg.h). The CPU (src/cpu/
** linalg.c, over OpenBLAS) and CUDA (src/cuda/matmul.c, over cuBLAS) both
** run these, so they check, broadcast and lay out results alike.
*/
#include <stdio.h>
#include <string.h>
#include "meta/linalg.h"
#include "meta/meta.h"

static bool scalar_is_zero(lt_scalar s) { return s.type == LT_SCALAR_FLOAT ? s.v.f == 0.0 : s.v.i == 0; }

/* "2x3x4", as PyTorch prints shapes in product errors */
static const char *xshape(const lt_tensor *t, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = 0;
  if (t->ndim == 0) { snprintf(buf, n, "[]"); return buf; }
  for (int i = 0; i < t->ndim && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, i ? "x%lld" : "%lld", (long long)t->sizes[i]);
  return buf;
}

static int need_dim(const char *op, const lt_tensor *t, const char *arg, int nd) {
  if (t->ndim == nd) return 0;
  return lt_error("%s: argument '%s' must be a %d-D tensor (got %d-D)", op, arg, nd, t->ndim);
}

static int same_dtype(const char *op, const lt_tensor *a, const char *an, const lt_tensor *b, const char *bn) {
  if (a->dtype == b->dtype) return 0;
  return lt_error("%s: expected %s and %s to have the same dtype, but got: %s != %s", op, an, bn,
                  lt_dtype_name((lt_dtype)a->dtype), lt_dtype_name((lt_dtype)b->dtype));
}

static int cannot_multiply(const char *op, const char *an, const lt_tensor *a, const char *bn, const lt_tensor *b) {
  char b1[128], b2[128];
  return lt_error("%s: %s and %s shapes cannot be multiplied (%s and %s)", op, an, bn,
                  xshape(a, b1, sizeof b1), xshape(b, b2, sizeof b2));
}

/* PyTorch refuses fractional scale factors on integer products */
static int int_scalars(const char *op, lt_dtype dt, lt_scalar beta, lt_scalar alpha) {
  if (lt_dtype_is_float(dt)) return 0;
  if (beta.type == LT_SCALAR_FLOAT)
    return lt_error("%s: for integral input tensors, argument 'beta' must not be a floating point number", op);
  if (alpha.type == LT_SCALAR_FLOAT)
    return lt_error("%s: for integral input tensors, argument 'alpha' must not be a floating point number", op);
  return 0;
}

static lt_tensor *view(lt_tensor *t, int nd, const int64_t *sizes, const int64_t *strides) {
  return lt_tensor_alias(t, t->offset, nd, sizes, strides);
}

/* Strides that show t as `sizes` (same element count) without copying;
** false when its memory layout does not allow it. */
static bool view_strides(const lt_tensor *t, int nd, const int64_t *ns, int64_t *nst) {
  if (t->numel == 0) { lt_contiguous_strides(nd, ns, nst); return true; }
  int64_t osz[LT_MAX_DIMS], ost[LT_MAX_DIMS];
  int on = 0;
  for (int d = 0; d < t->ndim; d++)
    if (t->sizes[d] != 1) { osz[on] = t->sizes[d]; ost[on] = t->strides[d]; on++; }
  int j = nd - 1;
  int64_t run = 1;
  for (int i = on - 1; i >= 0;) {
    /* a chunk of old dims that chain into one run of memory */
    int c0 = i;
    int64_t prod = osz[i];
    while (c0 > 0 && ost[c0 - 1] == ost[c0] * osz[c0]) { c0--; prod *= osz[c0]; }
    int64_t got = 1;
    run = ost[i];
    while (got < prod) {
      if (j < 0) return false;
      nst[j] = run;
      run *= ns[j];
      got *= ns[j];
      j--;
    }
    if (got != prod) return false;
    i = c0 - 1;
  }
  for (; j >= 0; j--) {
    if (ns[j] != 1) return false;
    nst[j] = run;
  }
  return true;
}

static bool same_view(const lt_tensor *a, const lt_tensor *b) {
  if (a->storage != b->storage || a->offset != b->offset || a->ndim != b->ndim) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->sizes[d] != b->sizes[d] || (a->sizes[d] != 1 && a->strides[d] != b->strides[d])) return false;
  return true;
}

/* self expanded to R's shape, for the beta term; NULL with an error naming self */
static lt_tensor *expand_self(const char *op, lt_tensor *self, int nd, const int64_t *sizes) {
  int64_t st[LT_MAX_DIMS];
  if (lt_expand_strides(op, self, nd, sizes, st) < 0) {
    char b1[128], b2[128];
    return lt_error_null("%s: argument 'self' of shape %s cannot be broadcast to %s", op,
                         lt_shape_str(self->ndim, self->sizes, b1, sizeof b1), lt_shape_str(nd, sizes, b2, sizeof b2));
  }
  return view(self, nd, sizes, st);
}

/*
** R = beta * selfx + alpha * (A @ B), with the product computed in the shape
** (cnd, cshape) that A and B give; R holds the same elements in its own shape.
** Writes straight into R whenever R can be viewed in that shape, has the
** product's dtype and is no input of it; otherwise through a temporary.
*/
static int product_into(lt_meta_gemm_fn gemm, const char *op, lt_tensor *R, lt_tensor *selfx, lt_tensor *A, lt_tensor *B,
                        lt_scalar alpha, lt_scalar beta, bool reduce, int cnd, const int64_t *cshape) {
  bool beta0 = !selfx || scalar_is_zero(beta);
  int64_t cst[LT_MAX_DIMS];
  bool direct = R->dtype == A->dtype && R->storage != A->storage && R->storage != B->storage &&
                view_strides(R, cnd, cshape, cst);
  lt_tensor *C, *Rv;
  if (direct) {
    C = view(R, cnd, cshape, cst);
    Rv = NULL;   /* R is the caller's: a reference of our own only when C was made */
    if (C) { lt_tensor_retain(R); Rv = R; }
  } else {
    C = lt_tensor_new((lt_dtype)A->dtype, lt_tensor_device(A), cnd, cshape);
    Rv = C ? lt_tensor_alias(C, 0, R->ndim, R->sizes, NULL) : NULL;
  }
  int rc = -1;
  if (!C || !Rv) goto done;
  if (!beta0 && !same_view(Rv, selfx) && lt_tensor_copy_(Rv, selfx) < 0) goto done;
  if (gemm(op, C, A, B, alpha, beta0 ? lt_scalar_int(0) : beta, reduce) < 0) goto done;
  rc = direct ? 0 : lt_tensor_copy_(R, Rv);
done:
  lt_tensor_release(C);
  lt_tensor_release(Rv);
  return rc;
}

/* the result of a product op: R allocated (or out resized), filled by product_into */
static lt_tensor *finish(lt_meta_gemm_fn gemm, const char *op, lt_tensor *like, lt_tensor *out, lt_dtype dt, int rnd, const int64_t *rsizes,
                         lt_tensor *self, lt_tensor *A, lt_tensor *B, lt_scalar alpha, lt_scalar beta, bool reduce,
                         int cnd, const int64_t *cshape) {
  lt_tensor *selfx = NULL;
  if (self && !(selfx = expand_self(op, self, rnd, rsizes))) return NULL;
  lt_tensor *R = lt_meta_result(op, out, dt, lt_tensor_device(like), rnd, rsizes);
  if (R && product_into(gemm, op, R, selfx, A, B, alpha, beta, reduce, cnd, cshape) < 0) {
    lt_tensor_release(R);
    R = NULL;
  }
  lt_tensor_release(selfx);
  return R;
}

/* a 1-D tensor as a (1 x n) row or an (n x 1) column */
static lt_tensor *as_row(lt_tensor *v) {
  int64_t sz[2] = {1, v->sizes[0]}, st[2] = {v->strides[0] * v->sizes[0], v->strides[0]};
  return view(v, 2, sz, st);
}
static lt_tensor *as_col(lt_tensor *v) {
  int64_t sz[2] = {v->sizes[0], 1}, st[2] = {v->strides[0], 1};
  return view(v, 2, sz, st);
}

static const lt_scalar ONE = {LT_SCALAR_INT, {1}};
static const lt_scalar ZERO = {LT_SCALAR_INT, {0}};

/* ---- dot, mv, mm, bmm and their add* forms ---- */

lt_tensor *lt_meta_dot(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *tensor, lt_tensor *out) {
  const char *op = "dot";
  if (need_dim(op, self, "self", 1) < 0 || need_dim(op, tensor, "tensor", 1) < 0) return NULL;
  if (self->sizes[0] != tensor->sizes[0])
    return lt_error_null("dot: inconsistent tensor size: argument 'self' has %lld elements and 'tensor' has %lld",
                         (long long)self->sizes[0], (long long)tensor->sizes[0]);
  if (same_dtype(op, self, "self", tensor, "tensor") < 0) return NULL;
  lt_tensor *A = as_row(self), *B = as_col(tensor), *R = NULL;
  int64_t cs[2] = {1, 1};
  if (A && B) R = finish(gemm, op, self, out, (lt_dtype)self->dtype, 0, NULL, NULL, A, B, ONE, ZERO, false, 2, cs);
  lt_tensor_release(A); lt_tensor_release(B);
  return R;
}

static lt_tensor *mv_impl(lt_meta_gemm_fn gemm, const char *op, lt_tensor *self, lt_tensor *mat, lt_tensor *vec, lt_scalar beta,
                          lt_scalar alpha, lt_tensor *out, const char *mn) {
  if (need_dim(op, mat, mn, 2) < 0 || need_dim(op, vec, "vec", 1) < 0) return NULL;
  if (mat->sizes[1] != vec->sizes[0]) return cannot_multiply(op, mn, mat, "vec", vec), NULL;
  if (same_dtype(op, mat, mn, vec, "vec") < 0) return NULL;
  if (self && same_dtype(op, self, "self", mat, mn) < 0) return NULL;
  if (int_scalars(op, (lt_dtype)mat->dtype, beta, alpha) < 0) return NULL;
  lt_tensor *B = as_col(vec), *R = NULL;
  int64_t rs[1] = {mat->sizes[0]}, cs[2] = {mat->sizes[0], 1};
  if (B) R = finish(gemm, op, mat, out, (lt_dtype)mat->dtype, 1, rs, self, mat, B, alpha, beta, false, 2, cs);
  lt_tensor_release(B);
  return R;
}

lt_tensor *lt_meta_mv(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *vec, lt_tensor *out) {
  return mv_impl(gemm, "mv", NULL, self, vec, ZERO, ONE, out, "self");
}

lt_tensor *lt_meta_addmv(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *mat, lt_tensor *vec, lt_scalar beta, lt_scalar alpha,
                        lt_tensor *out) {
  return mv_impl(gemm, "addmv", self, mat, vec, beta, alpha, out, "mat");
}

static lt_tensor *mm_impl(lt_meta_gemm_fn gemm, const char *op, lt_tensor *self, lt_tensor *m1, lt_tensor *m2, lt_scalar beta,
                          lt_scalar alpha, lt_tensor *out, const char *n1, const char *n2) {
  if (need_dim(op, m1, n1, 2) < 0 || need_dim(op, m2, n2, 2) < 0) return NULL;
  if (m1->sizes[1] != m2->sizes[0]) return cannot_multiply(op, "mat1", m1, "mat2", m2), NULL;
  if (same_dtype(op, m1, n1, m2, n2) < 0) return NULL;
  if (self && same_dtype(op, self, "self", m1, n1) < 0) return NULL;
  if (int_scalars(op, (lt_dtype)m1->dtype, beta, alpha) < 0) return NULL;
  int64_t rs[2] = {m1->sizes[0], m2->sizes[1]};
  return finish(gemm, op, m1, out, (lt_dtype)m1->dtype, 2, rs, self, m1, m2, alpha, beta, false, 2, rs);
}

lt_tensor *lt_meta_mm(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *mat2, lt_tensor *out) {
  return mm_impl(gemm, "mm", NULL, self, mat2, ZERO, ONE, out, "self", "mat2");
}

lt_tensor *lt_meta_addmm(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *mat1, lt_tensor *mat2, lt_scalar beta, lt_scalar alpha,
                        lt_tensor *out) {
  return mm_impl(gemm, "addmm", self, mat1, mat2, beta, alpha, out, "mat1", "mat2");
}

static lt_tensor *bmm_impl(lt_meta_gemm_fn gemm, const char *op, lt_tensor *self, lt_tensor *b1, lt_tensor *b2, lt_scalar beta,
                           lt_scalar alpha, lt_tensor *out, const char *n1, const char *n2, bool reduce) {
  if (need_dim(op, b1, n1, 3) < 0 || need_dim(op, b2, n2, 3) < 0) return NULL;
  if (b1->sizes[0] != b2->sizes[0])
    return lt_error_null("%s: %s and %s must have the same number of batches, got %lld and %lld", op, n1, n2,
                         (long long)b1->sizes[0], (long long)b2->sizes[0]);
  if (b1->sizes[2] != b2->sizes[1]) return cannot_multiply(op, n1, b1, n2, b2), NULL;
  if (same_dtype(op, b1, n1, b2, n2) < 0) return NULL;
  if (self && same_dtype(op, self, "self", b1, n1) < 0) return NULL;
  if (int_scalars(op, (lt_dtype)b1->dtype, beta, alpha) < 0) return NULL;
  int64_t rs[3] = {b1->sizes[0], b1->sizes[1], b2->sizes[2]};
  if (reduce)
    return finish(gemm, op, b1, out, (lt_dtype)b1->dtype, 2, rs + 1, self, b1, b2, alpha, beta, true, 2, rs + 1);
  return finish(gemm, op, b1, out, (lt_dtype)b1->dtype, 3, rs, self, b1, b2, alpha, beta, false, 3, rs);
}

lt_tensor *lt_meta_bmm(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *mat2, lt_tensor *out) {
  return bmm_impl(gemm, "bmm", NULL, self, mat2, ZERO, ONE, out, "self", "mat2", false);
}

lt_tensor *lt_meta_baddbmm(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *batch1, lt_tensor *batch2, lt_scalar beta, lt_scalar alpha,
                          lt_tensor *out) {
  return bmm_impl(gemm, "baddbmm", self, batch1, batch2, beta, alpha, out, "batch1", "batch2", false);
}

lt_tensor *lt_meta_addbmm(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *batch1, lt_tensor *batch2, lt_scalar beta, lt_scalar alpha,
                         lt_tensor *out) {
  return bmm_impl(gemm, "addbmm", self, batch1, batch2, beta, alpha, out, "batch1", "batch2", true);
}

/* ---- outer products (these promote, as PyTorch's do) ---- */

static lt_tensor *outer_impl(lt_meta_gemm_fn gemm, const char *op, lt_tensor *self, lt_tensor *v1, lt_tensor *v2, lt_scalar beta,
                             lt_scalar alpha, lt_tensor *out, const char *n1, const char *n2) {
  if (need_dim(op, v1, n1, 1) < 0 || need_dim(op, v2, n2, 1) < 0) return NULL;
  lt_dtype dt = lt_promote_types((lt_dtype)v1->dtype, (lt_dtype)v2->dtype);
  if (self) dt = lt_promote_types(dt, (lt_dtype)self->dtype);
  if (int_scalars(op, dt, beta, alpha) < 0) return NULL;
  lt_tensor *a = NULL, *b = NULL, *A = NULL, *B = NULL, *R = NULL;
  int64_t rs[2] = {v1->sizes[0], v2->sizes[0]};
  if (v1->dtype == dt) { a = v1; lt_tensor_retain(a); } else a = lt_tensor_clone_as(v1, dt);
  if (!a) goto done;
  if (v2->dtype == dt) { b = v2; lt_tensor_retain(b); } else b = lt_tensor_clone_as(v2, dt);
  if (!b || !(A = as_col(a)) || !(B = as_row(b))) goto done;
  R = finish(gemm, op, v1, out, dt, 2, rs, self, A, B, alpha, beta, false, 2, rs);
done:
  lt_tensor_release(a); lt_tensor_release(b); lt_tensor_release(A); lt_tensor_release(B);
  return R;
}

lt_tensor *lt_meta_outer(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *vec2, lt_tensor *out) {
  return outer_impl(gemm, "outer", NULL, self, vec2, ZERO, ONE, out, "self", "vec2");
}

lt_tensor *lt_meta_addr(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *vec1, lt_tensor *vec2, lt_scalar beta, lt_scalar alpha,
                       lt_tensor *out) {
  return outer_impl(gemm, "addr", self, vec1, vec2, beta, alpha, out, "vec1", "vec2");
}

/* ---- matmul ---- */

lt_tensor *lt_meta_matmul(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  const char *op = "matmul";
  int da = self->ndim, db = other->ndim;
  if (da == 0 || db == 0)
    return lt_error_null("matmul: both arguments need to be at least 1-D, but got %d-D and %d-D", da, db);
  if (same_dtype(op, self, "self", other, "other") < 0) return NULL;
  int64_t m = da == 1 ? 1 : self->sizes[da - 2], k = self->sizes[da - 1];
  int64_t kb = db == 1 ? other->sizes[0] : other->sizes[db - 2], n = db == 1 ? 1 : other->sizes[db - 1];
  if (k != kb) return cannot_multiply(op, "self", self, "other", other), NULL;
  int abn = da > 2 ? da - 2 : 0, bbn = db > 2 ? db - 2 : 0;
  int64_t sh[LT_MAX_DIMS + 2];
  int nb = lt_broadcast_shapes(op, abn, self->sizes, bbn, other->sizes, sh);
  if (nb < 0) {
    char b1[128], b2[128];
    return lt_error_null("matmul: batch dims of self %s and other %s cannot be broadcast",
                         lt_shape_str(abn, self->sizes, b1, sizeof b1), lt_shape_str(bbn, other->sizes, b2, sizeof b2));
  }
  if (nb + 2 > LT_MAX_DIMS) return lt_error_null("matmul: the result would have more than %d dims", LT_MAX_DIMS);
  /* operands as (batch..., rows, cols): a 1-D self is one row, a 1-D other one column */
  int64_t ast[LT_MAX_DIMS], bst[LT_MAX_DIMS], asz[LT_MAX_DIMS], bsz[LT_MAX_DIMS], csz[LT_MAX_DIMS];
  for (int i = 0; i < nb; i++) {
    int ia = i - (nb - abn), ib = i - (nb - bbn);
    ast[i] = ia >= 0 && self->sizes[ia] == sh[i] ? self->strides[ia] : 0;
    bst[i] = ib >= 0 && other->sizes[ib] == sh[i] ? other->strides[ib] : 0;
    asz[i] = bsz[i] = csz[i] = sh[i];
  }
  asz[nb] = m; asz[nb + 1] = k;
  ast[nb] = da == 1 ? k * self->strides[0] : self->strides[da - 2];
  ast[nb + 1] = self->strides[da - 1];
  bsz[nb] = k; bsz[nb + 1] = n;
  bst[nb] = other->strides[db == 1 ? 0 : db - 2];
  bst[nb + 1] = db == 1 ? 1 : other->strides[db - 1];
  csz[nb] = m; csz[nb + 1] = n;
  int rnd = nb;
  int64_t rsz[LT_MAX_DIMS];
  memcpy(rsz, sh, sizeof(int64_t) * (size_t)nb);
  if (da > 1) rsz[rnd++] = m;
  if (db > 1) rsz[rnd++] = n;
  lt_tensor *A = view(self, nb + 2, asz, ast), *B = A ? view(other, nb + 2, bsz, bst) : NULL, *R = NULL;
  if (B) R = finish(gemm, op, self, out, (lt_dtype)self->dtype, rnd, rsz, NULL, A, B, ONE, ZERO, false, nb + 2, csz);
  lt_tensor_release(A); lt_tensor_release(B);
  return R;
}

/* ---- inner ---- */

/* t as a (rows x cols) matrix: a view when its strides allow, else a contiguous copy */
static lt_tensor *as_matrix(lt_tensor *t, int64_t rows, int64_t cols) {
  int64_t sz[2] = {rows, cols}, st[2];
  if (view_strides(t, 2, sz, st)) return view(t, 2, sz, st);
  lt_tensor *c = lt_tensor_contiguous(t);
  if (!c) return NULL;
  lt_tensor *v = lt_tensor_alias(c, c->offset, 2, sz, NULL);
  lt_tensor_release(c);
  return v;
}

lt_tensor *lt_meta_inner(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  const char *op = "inner";
  if (same_dtype(op, self, "self", other, "other") < 0) return NULL;
  int da = self->ndim, db = other->ndim;
  int64_t rsz[2 * LT_MAX_DIMS];
  int rnd = 0;
  lt_tensor *A = NULL, *B = NULL, *R = NULL;
  int64_t csz[2];
  if (da == 0 || db == 0) {
    /* a scalar times a tensor: (1 x 1) @ (1 x numel) */
    lt_tensor *s = da == 0 ? self : other, *t = da == 0 ? other : self;
    for (int i = 0; i < t->ndim; i++) rsz[rnd++] = t->sizes[i];
    int64_t one[2] = {1, 1}, ost[2] = {1, 1};
    A = view(s, 2, one, ost);
    B = as_matrix(t, 1, t->numel);
    csz[0] = 1; csz[1] = t->numel;
    if (da != 0) {  /* keep self on the left: (numel x 1) @ (1 x 1) */
      lt_tensor *x = A; A = as_matrix(t, t->numel, 1); lt_tensor_release(B); B = x;
      csz[0] = t->numel; csz[1] = 1;
    }
  } else {
    int64_t k = self->sizes[da - 1];
    if (other->sizes[db - 1] != k) {
      char b1[128], b2[128];
      return lt_error_null("inner: the last dims of self %s and other %s must match", xshape(self, b1, sizeof b1),
                           xshape(other, b2, sizeof b2));
    }
    if (da - 1 + db - 1 > LT_MAX_DIMS)
      return lt_error_null("inner: the result would have more than %d dims", LT_MAX_DIMS);
    int64_t M = 1, N = 1;
    for (int i = 0; i < da - 1; i++) { rsz[rnd++] = self->sizes[i]; M *= self->sizes[i]; }
    for (int i = 0; i < db - 1; i++) { rsz[rnd++] = other->sizes[i]; N *= other->sizes[i]; }
    A = as_matrix(self, M, k);
    lt_tensor *bt = as_matrix(other, N, k);
    if (bt) {
      int64_t sz[2] = {k, N}, st[2] = {bt->strides[1], bt->strides[0]};
      B = lt_tensor_alias(bt, bt->offset, 2, sz, st);
      lt_tensor_release(bt);
    }
    csz[0] = M; csz[1] = N;
  }
  if (A && B) R = finish(gemm, op, self, out, (lt_dtype)self->dtype, rnd, rsz, NULL, A, B, ONE, ZERO, false, 2, csz);
  lt_tensor_release(A); lt_tensor_release(B);
  return R;
}

/* ---- kron ---- */

lt_tensor *lt_meta_kron(lt_meta_gemm_fn gemm, lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  const char *op = "kron";
  int nd = self->ndim > other->ndim ? self->ndim : other->ndim;
  if (2 * nd > LT_MAX_DIMS) return lt_error_null("kron: at most %d dims are supported, got %d", LT_MAX_DIMS / 2, nd);
  lt_dtype dt = lt_promote_types((lt_dtype)self->dtype, (lt_dtype)other->dtype);
  int64_t as[LT_MAX_DIMS], bs[LT_MAX_DIMS], rs[LT_MAX_DIMS];
  for (int i = 0; i < nd; i++) {
    int ia = i - (nd - self->ndim), ib = i - (nd - other->ndim);
    as[i] = ia >= 0 ? self->sizes[ia] : 1;
    bs[i] = ib >= 0 ? other->sizes[ib] : 1;
    rs[i] = as[i] * bs[i];
  }
  lt_tensor *a = NULL, *b = NULL, *A = NULL, *B = NULL, *P = NULL, *Pv = NULL, *Rv = NULL, *R = NULL;
  a = lt_tensor_to_dtype_contig(self, dt);
  b = a ? lt_tensor_to_dtype_contig(other, dt) : NULL;
  if (!b) goto done;
  /* the outer product of the flattened operands, laid out (a dims..., b dims...) */
  int64_t an = a->numel, bn = b->numel;
  int64_t asz[2] = {an, 1}, bsz[2] = {1, bn}, psz[2] = {an, bn};
  A = lt_tensor_alias(a, a->offset, 2, asz, NULL);
  B = lt_tensor_alias(b, b->offset, 2, bsz, NULL);
  P = A && B ? lt_tensor_new(dt, lt_tensor_device(self), 2, psz) : NULL;
  if (!P || gemm(op, P, A, B, ONE, ZERO, false) < 0) goto done;
  R = lt_meta_result(op, out, dt, lt_tensor_device(self), nd, rs);
  if (!R) goto done;
  /* ... copied into the result seen with the same (a dims..., b dims...) index order */
  int64_t vsz[LT_MAX_DIMS], vst[LT_MAX_DIMS];
  for (int i = 0; i < nd; i++) {
    vsz[i] = as[i]; vst[i] = R->strides[i] * bs[i];
    vsz[nd + i] = bs[i]; vst[nd + i] = R->strides[i];
  }
  Pv = lt_tensor_alias(P, 0, 2 * nd, vsz, NULL);
  Rv = Pv ? view(R, 2 * nd, vsz, vst) : NULL;
  if (!Rv || lt_tensor_copy_(Rv, Pv) < 0) { lt_tensor_release(R); R = NULL; }
done:
  lt_tensor_release(a); lt_tensor_release(b); lt_tensor_release(A); lt_tensor_release(B);
  lt_tensor_release(P); lt_tensor_release(Pv); lt_tensor_release(Rv);
  return R;
}

/* ---- trace ---- */

int lt_meta_trace(const lt_tensor *self) { return need_dim("trace", self, "self", 2); }
