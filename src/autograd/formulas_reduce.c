/*
** formulas_reduce.c — derivative helpers for reductions, scans and sorting.
**
** Everything is written with the ops' entry points so that create_graph
** records the backward computation too (double backward). Temporaries go
** into a small pool released on every exit path.
*/
#include <math.h>
#include <string.h>
#include "formulas_reduce.h"
#include "lt_ops.h"
#include "core/tpool.h"

typedef lt_tpool pool;

static lt_tensor *keep(pool *p, lt_tensor *t) { return lt_tpool_keep(p, t); }

static void drain(pool *p) { lt_tpool_drop(p); }

#define TRY(var, e) do { if (!((var) = keep(&P, (e)))) goto out; } while (0)

static lt_tensor *num(double v) { return lt_tensor_wrapped_number(lt_scalar_float(v)); }

static int64_t wrap_dim(int64_t d, int ndim) {
  int64_t n = ndim > 0 ? ndim : 1;
  if (d < 0) d += n;
  return d;
}

/* which of the input's dims a Dim[] reduced ({} or absent: all); returns the element count reduced */
static int64_t reduced_dims(const lt_input_meta *m, lt_intlist dim, bool mask[LT_MAX_DIMS]) {
  memset(mask, 0, LT_MAX_DIMS * sizeof mask[0]);
  if (dim.n <= 0) {
    for (int d = 0; d < m->ndim; d++) mask[d] = true;
  } else {
    for (int i = 0; i < dim.n; i++) {
      int64_t d = wrap_dim(dim.v[i], m->ndim);
      if (d >= 0 && d < m->ndim) mask[d] = true;
    }
  }
  int64_t count = 1;
  for (int d = 0; d < m->ndim; d++) if (mask[d]) count *= m->sizes[d];
  return count;
}

static void meta_of(const lt_tensor *t, lt_input_meta *m) {
  m->ndim = (int8_t)t->ndim;
  m->dtype = (uint8_t)t->dtype;
  m->device = lt_tensor_device(t);
  for (int d = 0; d < t->ndim; d++) m->sizes[d] = t->sizes[d];
}

/* t with the reduced dims put back as size 1 (a new reference) */
static lt_tensor *restore_dims(lt_tensor *t, int ndim, const bool *mask, bool keepdim) {
  lt_tensor_retain(t);
  if (keepdim || t->ndim == ndim) return t;
  for (int d = 0; d < ndim; d++) {
    if (!mask[d]) continue;
    lt_tensor *u = lt_unsqueeze(t, d);
    lt_tensor_release(t);
    if (!u) return NULL;
    t = u;
  }
  return t;
}

static lt_tensor *restore_one(lt_tensor *t, int ndim, int64_t dim, bool keepdim) {
  bool mask[LT_MAX_DIMS] = {0};
  if (dim >= 0 && dim < ndim) mask[dim] = true;
  return restore_dims(t, ndim, mask, keepdim);
}

static lt_intlist meta_sizes(const lt_input_meta *m) { return lt_intlist_make(m->sizes, m->ndim); }

/* mask (bool) as a tensor of dtype dt, so products never depend on bool promotion */
static lt_tensor *as_dtype(lt_tensor *t, int dt) { return lt_to(t, dt, false); }

/* does any element of the bool tensor hold true? -1 on error */
static int any_true(lt_tensor *b) {
  lt_tensor *a = lt_any(b, lt_intlist_none(), false);
  if (!a) return -1;
  lt_scalar s = lt_tensor_item(a);
  lt_tensor_release(a);
  if (lt_scalar_is_none(s)) return -1;
  return lt_scalar_to_double(s) != 0;
}

/* grad summed along dim from the end: out[i] = sum_{j >= i} grad[j] */
static lt_tensor *reverse_cumsum(lt_tensor *g, int64_t dim) {
  int64_t d[1] = {dim};
  lt_intlist dl = lt_intlist_make(d, 1);
  lt_tensor *f = lt_flip(g, dl);
  if (!f) return NULL;
  lt_tensor *c = lt_cumsum(f, dim, -1);
  lt_tensor_release(f);
  if (!c) return NULL;
  lt_tensor *r = lt_flip(c, dl);
  lt_tensor_release(c);
  return r;
}

/* ---- sums and means ---- */

lt_tensor *lt_grad_sum(lt_tensor *grad, const lt_input_meta *self_meta, lt_intlist dim, bool keepdim) {
  pool P = {0};
  lt_tensor *r = NULL, *g;
  bool mask[LT_MAX_DIMS];
  reduced_dims(self_meta, dim, mask);
  TRY(g, restore_dims(grad, self_meta->ndim, mask, keepdim));
  r = lt_expand(g, meta_sizes(self_meta));
out:
  drain(&P);
  return r;
}

static lt_tensor *not_nan(lt_tensor *self, int dt) {
  lt_tensor *n = lt_isnan(self);
  if (!n) return NULL;
  lt_tensor *k = lt_logical_not(n);
  lt_tensor_release(n);
  if (!k) return NULL;
  lt_tensor *r = as_dtype(k, dt);
  lt_tensor_release(k);
  return r;
}

lt_tensor *lt_grad_nansum(lt_tensor *grad, lt_tensor *self, lt_intlist dim, bool keepdim) {
  pool P = {0};
  lt_tensor *r = NULL, *g, *m;
  bool mask[LT_MAX_DIMS];
  lt_input_meta sm;
  meta_of(self, &sm);
  reduced_dims(&sm, dim, mask);
  TRY(g, restore_dims(grad, sm.ndim, mask, keepdim));
  TRY(m, not_nan(self, grad->dtype));
  r = lt_mul(g, m);
out:
  drain(&P);
  return r;
}

lt_tensor *lt_grad_mean(lt_tensor *grad, const lt_input_meta *self_meta, lt_intlist dim, bool keepdim) {
  pool P = {0};
  lt_tensor *r = NULL, *g, *e, *n;
  bool mask[LT_MAX_DIMS];
  int64_t count = reduced_dims(self_meta, dim, mask);
  TRY(g, restore_dims(grad, self_meta->ndim, mask, keepdim));
  TRY(e, lt_expand(g, meta_sizes(self_meta)));
  TRY(n, num((double)count));
  r = lt_div(e, n, NULL);
out:
  drain(&P);
  return r;
}

lt_tensor *lt_grad_nanmean(lt_tensor *grad, lt_tensor *self, lt_intlist dim, bool keepdim) {
  pool P = {0};
  lt_tensor *r = NULL, *g, *m, *c, *one, *c1, *gm;
  bool mask[LT_MAX_DIMS];
  lt_input_meta sm;
  meta_of(self, &sm);
  reduced_dims(&sm, dim, mask);
  TRY(g, restore_dims(grad, sm.ndim, mask, keepdim));
  TRY(m, not_nan(self, grad->dtype));
  TRY(c, lt_sum(m, dim, true, -1));
  /* a slice of NaN only has mask 0 everywhere: dividing by 1 keeps its gradient 0, not 0/0 */
  TRY(one, num(1.0));
  TRY(c1, lt_clamp_min(c, one));
  TRY(gm, lt_mul(g, m));
  r = lt_div(gm, c1, NULL);
out:
  drain(&P);
  return r;
}

/* bool [1, .., n, .., 1]: true at the first position along dim d */
static lt_tensor *first_slice_mask(const lt_tensor *x, int64_t d) {
  int64_t sz[LT_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) sz[i] = i == d ? x->sizes[d] : 1;
  lt_tensor *m = lt_zeros(lt_intlist_make(sz, x->ndim), LT_BOOL, lt_tensor_device(x));
  if (!m || m->numel == 0) return m;
  /* a fresh constant, not data of the graph: its first element set through its device's fill */
  int64_t one[LT_MAX_DIMS];
  for (int i = 0; i < m->ndim; i++) one[i] = 1;
  lt_tensor *first = lt_tensor_alias(m, 0, m->ndim, one, m->strides);
  if (!first || lt_tensor_fill_(first, lt_scalar_bool(true)) < 0) { lt_tensor_release(first); lt_tensor_release(m); return NULL; }
  lt_tensor_release(first);
  return m;
}

/* prod_{j < i} x_j along d (1 at i = 0): x rolled one step with its first slice set to 1, then
** scanned. Made of differentiable ops only, so the result can be differentiated again. */
static lt_tensor *exclusive_cumprod(lt_tensor *x, int64_t d) {
  pool P = {0};
  lt_tensor *r = NULL, *first, *rolled, *one, *s;
  int64_t shift[1] = {1}, dd[1] = {d};
  TRY(first, first_slice_mask(x, d));
  TRY(rolled, lt_roll(x, lt_intlist_make(shift, 1), lt_intlist_make(dd, 1)));
  TRY(one, num(1.0));
  TRY(s, lt_where(first, one, rolled));
  r = lt_cumprod(s, d, -1);
out:
  drain(&P);
  return r;
}

/* the product of every other element of x's slice along d, exact with any number of zeros */
static lt_tensor *prod_of_others(lt_tensor *x, int64_t d) {
  pool P = {0};
  lt_tensor *r = NULL, *fwd, *fx, *bx, *bwd;
  int64_t dd[1] = {d};
  lt_intlist dl = lt_intlist_make(dd, 1);
  TRY(fwd, exclusive_cumprod(x, d));
  TRY(fx, lt_flip(x, dl));
  TRY(bx, exclusive_cumprod(fx, d));
  TRY(bwd, lt_flip(bx, dl));
  r = lt_mul(fwd, bwd);
out:
  drain(&P);
  return r;
}

/* d prod / d x_i is the product of the others: result / x_i when the input holds no zero,
** else exclusive products from both ends (which double backward can differentiate too). */
lt_tensor *lt_grad_prod(lt_tensor *grad, lt_tensor *self, lt_tensor *result, int64_t dim, bool keepdim) {
  pool P = {0};
  lt_tensor *r = NULL, *g, *res, *zero, *z;
  if (self->ndim == 0) return lt_grad_identity(grad);
  bool full = dim == LT_NOINT;
  int64_t d = full ? 0 : wrap_dim(dim, self->ndim);
  if (full) {
    bool mask[LT_MAX_DIMS];
    lt_input_meta sm;
    meta_of(self, &sm);
    reduced_dims(&sm, lt_intlist_none(), mask);
    TRY(g, restore_dims(grad, self->ndim, mask, keepdim));
    TRY(res, restore_dims(result, self->ndim, mask, keepdim));
  } else {
    TRY(g, restore_one(grad, self->ndim, d, keepdim));
    TRY(res, restore_one(result, self->ndim, d, keepdim));
  }
  TRY(zero, num(0.0));
  TRY(z, lt_eq(self, zero));
  int anyz = any_true(z);
  if (anyz < 0) goto out;
  if (!anyz) {
    lt_tensor *gr;
    TRY(gr, lt_mul(g, res));
    r = lt_div(gr, self, NULL);
    goto out;
  }
  lt_tensor *others;
  if (full) {
    lt_tensor *flat, *o1;
    int64_t m1[1] = {-1};
    TRY(flat, lt_reshape(self, lt_intlist_make(m1, 1)));
    TRY(o1, prod_of_others(flat, 0));
    TRY(others, lt_reshape(o1, lt_intlist_make(self->sizes, self->ndim)));
  } else {
    TRY(others, prod_of_others(self, d));
  }
  r = lt_mul(g, others);
out:
  drain(&P);
  return r;
}

/* ---- max, min and friends ---- */

lt_tensor *lt_grad_evenly(lt_tensor *grad, lt_tensor *self, lt_tensor *result) {
  pool P = {0};
  lt_tensor *r = NULL, *m, *mf, *cnt, *gm;
  lt_scalar v = lt_tensor_item(result);
  if (lt_scalar_is_none(v)) return NULL;
  if (isnan(lt_scalar_to_double(v))) TRY(m, lt_isnan(self));   /* NaN won: it takes the gradient */
  else TRY(m, lt_eq(self, result));
  TRY(mf, as_dtype(m, grad->dtype));
  TRY(cnt, lt_sum(mf, lt_intlist_none(), false, -1));
  TRY(gm, lt_mul(mf, grad));
  r = lt_div(gm, cnt, NULL);
out:
  drain(&P);
  return r;
}

lt_tensor *lt_grad_amax(lt_tensor *grad, lt_tensor *self, lt_tensor *result, lt_intlist dim, bool keepdim) {
  pool P = {0};
  lt_tensor *r = NULL, *g, *res, *m, *mf, *cnt, *gm;
  bool mask[LT_MAX_DIMS];
  lt_input_meta sm;
  meta_of(self, &sm);
  reduced_dims(&sm, dim, mask);
  TRY(g, restore_dims(grad, sm.ndim, mask, keepdim));
  TRY(res, restore_dims(result, sm.ndim, mask, keepdim));
  TRY(m, lt_eq(self, res));
  TRY(mf, as_dtype(m, grad->dtype));
  TRY(cnt, lt_sum(mf, dim, true, -1));
  TRY(gm, lt_mul(mf, g));
  r = lt_div(gm, cnt, NULL);
out:
  drain(&P);
  return r;
}

lt_tensor *lt_grad_index_scatter(lt_tensor *grad, const lt_input_meta *self_meta, int64_t dim, lt_tensor *indices) {
  pool P = {0};
  lt_tensor *r = NULL, *z, *ix;
  if (self_meta->ndim == 0) return lt_grad_identity(grad);
  int64_t d = wrap_dim(dim, self_meta->ndim);
  /* under create_graph a saved output comes back with history; indices must not carry any */
  TRY(ix, lt_detach(indices));
  TRY(z, lt_zeros(meta_sizes(self_meta), grad->dtype, self_meta->device));
  r = lt_scatter_add(z, d, ix, grad);
out:
  drain(&P);
  return r;
}

lt_tensor *lt_grad_value_select(lt_tensor *grad, const lt_input_meta *self_meta, int64_t dim, bool keepdim,
                                lt_tensor *indices) {
  pool P = {0};
  lt_tensor *r = NULL, *g, *ix;
  if (self_meta->ndim == 0) return lt_grad_identity(grad);
  int64_t d = wrap_dim(dim, self_meta->ndim);
  TRY(g, restore_one(grad, self_meta->ndim, d, keepdim));
  TRY(ix, restore_one(indices, self_meta->ndim, d, keepdim));
  r = lt_grad_index_scatter(g, self_meta, d, ix);
out:
  drain(&P);
  return r;
}

/* ---- variance, norms, logsumexp ---- */

static double correction_of(int unbiased, lt_scalar correction) {
  if (unbiased >= 0) return unbiased ? 1.0 : 0.0;
  return lt_scalar_is_none(correction) ? 1.0 : lt_scalar_to_double(correction);
}

/* grad * (x - mean) / (N - correction), the common part of var and std (scale 2 for var, 1/std for std) */
static lt_tensor *centered_times(lt_tensor *g, lt_tensor *self, lt_intlist dim, double denom) {
  pool P = {0};
  lt_tensor *r = NULL, *mean, *diff, *gd, *n;
  TRY(mean, lt_mean(self, dim, true, -1));
  TRY(diff, lt_sub(self, mean, lt_scalar_int(1)));
  TRY(gd, lt_mul(g, diff));
  TRY(n, num(denom));
  r = lt_div(gd, n, NULL);
out:
  drain(&P);
  return r;
}

lt_tensor *lt_grad_var(lt_tensor *grad, lt_tensor *self, lt_intlist dim, int unbiased, bool keepdim,
                       lt_scalar correction) {
  pool P = {0};
  lt_tensor *r = NULL, *g, *two, *c;
  bool mask[LT_MAX_DIMS];
  lt_input_meta sm;
  meta_of(self, &sm);
  int64_t count = reduced_dims(&sm, dim, mask);
  TRY(g, restore_dims(grad, sm.ndim, mask, keepdim));
  TRY(c, centered_times(g, self, dim, (double)count - correction_of(unbiased, correction)));
  TRY(two, num(2.0));
  r = lt_mul(c, two);
out:
  drain(&P);
  return r;
}

lt_tensor *lt_grad_std(lt_tensor *grad, lt_tensor *self, lt_tensor *result, lt_intlist dim, int unbiased,
                       bool keepdim, lt_scalar correction) {
  pool P = {0};
  lt_tensor *r = NULL, *g, *res, *zero, *q, *isz, *gs;
  bool mask[LT_MAX_DIMS];
  lt_input_meta sm;
  meta_of(self, &sm);
  int64_t count = reduced_dims(&sm, dim, mask);
  TRY(g, restore_dims(grad, sm.ndim, mask, keepdim));
  TRY(res, restore_dims(result, sm.ndim, mask, keepdim));
  TRY(zero, num(0.0));
  TRY(q, lt_div(g, res, NULL));
  TRY(isz, lt_eq(res, zero));
  TRY(gs, lt_where(isz, zero, q));    /* a constant slice: 0, as PyTorch */
  r = centered_times(gs, self, dim, (double)count - correction_of(unbiased, correction));
out:
  drain(&P);
  return r;
}

lt_tensor *lt_grad_norm(lt_tensor *grad, lt_tensor *self, lt_tensor *result, lt_scalar p, lt_intlist dim,
                        bool keepdim) {
  pool P = {0};
  lt_tensor *r = NULL, *g, *res, *zero, *isz, *sg;
  double pv = lt_scalar_is_none(p) ? 2.0 : lt_scalar_to_double(p);
  lt_input_meta sm;
  meta_of(self, &sm);
  if (pv == 0.0) return lt_zeros(meta_sizes(&sm), grad->dtype, sm.device);
  bool mask[LT_MAX_DIMS];
  reduced_dims(&sm, dim, mask);
  TRY(g, restore_dims(grad, sm.ndim, mask, keepdim));
  TRY(res, restore_dims(result, sm.ndim, mask, keepdim));
  TRY(zero, num(0.0));
  if (pv == 1.0) {
    TRY(sg, lt_sign(self));
    r = lt_mul(g, sg);
  } else if (pv == 2.0) {
    lt_tensor *q, *s;
    TRY(q, lt_div(g, res, NULL));
    TRY(isz, lt_eq(res, zero));
    TRY(s, lt_where(isz, zero, q));
    r = lt_mul(self, s);
  } else if (isinf(pv)) {
    /* the elements of largest (smallest) magnitude share the gradient evenly */
    lt_tensor *a, *m, *mf, *cnt, *sm1, *gm;
    TRY(a, lt_abs(self));
    TRY(m, lt_eq(a, res));
    TRY(mf, as_dtype(m, grad->dtype));
    TRY(cnt, lt_sum(mf, dim, true, -1));
    TRY(sg, lt_sign(self));
    TRY(sm1, lt_mul(sg, mf));
    TRY(gm, lt_mul(sm1, g));
    r = lt_div(gm, cnt, NULL);
  } else {
    /* sign(x) |x|^(p-1) * grad / norm^(p-1); 0 where x == 0 or the norm is 0 */
    lt_tensor *a, *e, *ap, *s1, *isx0, *sc, *rp, *q, *s2;
    TRY(e, num(pv - 1.0));
    TRY(a, lt_abs(self));
    TRY(ap, lt_pow(a, e));
    TRY(sg, lt_sign(self));
    TRY(s1, lt_mul(sg, ap));
    TRY(isx0, lt_eq(self, zero));
    TRY(sc, lt_where(isx0, zero, s1));
    TRY(rp, lt_pow(res, e));
    TRY(q, lt_div(g, rp, NULL));
    TRY(isz, lt_eq(res, zero));
    TRY(s2, lt_where(isz, zero, q));
    r = lt_mul(sc, s2);
  }
out:
  drain(&P);
  return r;
}

lt_tensor *lt_grad_norm_str(lt_tensor *grad, lt_tensor *self, lt_tensor *result, const char *p, lt_intlist dim,
                            bool keepdim) {
  (void)p;   /* the forward accepted only "fro", the 2-norm */
  return lt_grad_norm(grad, self, result, lt_scalar_float(2.0), dim, keepdim);
}

lt_tensor *lt_grad_logsumexp(lt_tensor *grad, lt_tensor *self, lt_tensor *result, lt_intlist dim, bool keepdim) {
  pool P = {0};
  lt_tensor *r = NULL, *g, *res, *diff, *e;
  bool mask[LT_MAX_DIMS];
  lt_input_meta sm;
  meta_of(self, &sm);
  reduced_dims(&sm, dim, mask);
  TRY(g, restore_dims(grad, sm.ndim, mask, keepdim));
  TRY(res, restore_dims(result, sm.ndim, mask, keepdim));
  TRY(diff, lt_sub(self, res, lt_scalar_int(1)));
  TRY(e, lt_exp(diff));
  r = lt_mul(g, e);
out:
  drain(&P);
  return r;
}

/* ---- scans ---- */

lt_tensor *lt_grad_cumsum(lt_tensor *grad, const lt_input_meta *self_meta, int64_t dim) {
  if (self_meta->ndim == 0) return lt_grad_identity(grad);
  return reverse_cumsum(grad, wrap_dim(dim, self_meta->ndim));
}

/* Without zeros: revcumsum(grad * result) / x. With zeros (per slice, k the first zero):
** positions before k keep that formula (the later terms of the sum vanish), position k gets
** revcumsum(grad * cumprod(x with x_k := 1)) at k, positions after k get 0. */
lt_tensor *lt_grad_cumprod(lt_tensor *grad, lt_tensor *self, lt_tensor *result, int64_t dim) {
  pool P = {0};
  lt_tensor *r = NULL, *zero, *z, *gr, *rc;
  if (self->ndim == 0) return lt_grad_identity(grad);
  int64_t d = wrap_dim(dim, self->ndim);
  TRY(zero, num(0.0));
  TRY(z, lt_eq(self, zero));
  int anyz = any_true(z);
  if (anyz < 0) goto out;
  TRY(gr, lt_mul(grad, result));
  TRY(rc, reverse_cumsum(gr, d));
  if (!anyz) {
    r = lt_div(rc, self, NULL);
    goto out;
  }
  lt_tensor *one, *zc, *before, *xs, *a, *ma, *zc1, *first, *x1, *c1, *gc, *b, *mb;
  TRY(one, num(1.0));
  TRY(zc, lt_cumsum(z, d, -1));                  /* zeros seen so far, int64 */
  TRY(before, lt_eq(zc, zero));
  TRY(xs, lt_where(before, self, one));
  TRY(a, lt_div(rc, xs, NULL));
  TRY(ma, lt_where(before, a, zero));
  TRY(zc1, lt_eq(zc, one));
  TRY(first, lt_logical_and(z, zc1));
  TRY(x1, lt_where(first, one, self));
  TRY(c1, lt_cumprod(x1, d, -1));
  TRY(gc, lt_mul(grad, c1));
  TRY(b, reverse_cumsum(gc, d));
  TRY(mb, lt_where(first, b, zero));
  r = lt_add(ma, mb, lt_scalar_int(1));
out:
  drain(&P);
  return r;
}
