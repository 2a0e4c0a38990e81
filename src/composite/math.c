/*
** math.c — the composite ops of src/ops/math.lua, written with
** other ops' entry points (lt_mul, lt_norm, lt_sort, ...) so that autograd
** records them: deg2rad, ldexp, float_power, mvlgamma, cov, cross, cdist,
** pdist, dist, renorm, quantile, msort, trapezoid, tensordot.
**
** Intermediates go into a pool released at the end; every wrapper passes an
** earlier failure (NULL, error already set) straight through, so a composite
** reads as straight-line code with one check at the end.
*/
#include <math.h>
#include <string.h>
#include "core/tensor.h"
#include "lt_ops.h"
#include "core/tpool.h"
#include "core/backend.h"

typedef lt_tpool pool;
static inline lt_tensor *keep(pool *p, lt_tensor *t) { return lt_tpool_keep(p, t); }
static inline lt_tensor *finish(pool *p, lt_tensor *r) { return lt_tpool_finish(p, r); }
static inline void drop(pool *p) { lt_tpool_drop(p); }

#define OK1(a) (a)
#define OK2(a, b) ((a) && (b))
static lt_tensor *num(pool *p, double v) { return keep(p, lt_tensor_wrapped_number(lt_scalar_float(v))); }
static lt_tensor *mul(pool *p, lt_tensor *a, lt_tensor *b) { return OK2(a, b) ? keep(p, lt_mul(a, b)) : NULL; }
static lt_tensor *dv(pool *p, lt_tensor *a, lt_tensor *b) { return OK2(a, b) ? keep(p, lt_div(a, b, NULL)) : NULL; }
static lt_tensor *add(pool *p, lt_tensor *a, lt_tensor *b) { return OK2(a, b) ? keep(p, lt_add(a, b, lt_scalar_int(1))) : NULL; }
static lt_tensor *sub(pool *p, lt_tensor *a, lt_tensor *b) { return OK2(a, b) ? keep(p, lt_sub(a, b, lt_scalar_int(1))) : NULL; }
static lt_tensor *narrow(pool *p, lt_tensor *a, int64_t d, int64_t s, int64_t l) {
  return a ? keep(p, lt_narrow(a, d, s, l)) : NULL;
}
static lt_tensor *unsq(pool *p, lt_tensor *a, int64_t d) { return a ? keep(p, lt_unsqueeze(a, d)) : NULL; }
static lt_tensor *sq(pool *p, lt_tensor *a, int64_t d) { return a ? keep(p, lt_squeeze(a, d)) : NULL; }
static lt_tensor *to(pool *p, lt_tensor *a, lt_dtype dt) { return a ? keep(p, lt_to(a, dt, false)) : NULL; }
static lt_tensor *sum_dims(pool *p, lt_tensor *a, int64_t d, bool keepdim) {
  return a ? keep(p, lt_sum(a, lt_intlist_make(&d, 1), keepdim, -1)) : NULL;
}
static lt_tensor *where(pool *p, lt_tensor *c, lt_tensor *a, lt_tensor *b) {
  return (c && a && b) ? keep(p, lt_where(c, a, b)) : NULL;
}

/* result r written into out when given (through copy_, so autograd sees the
** in-place forms), else r itself */
static lt_tensor *into_out(const char *op, pool *p, lt_tensor *r, lt_tensor *out) {
  if (!r || p->failed || !out) return finish(p, r);
  if (!lt_can_cast((lt_dtype)r->dtype, (lt_dtype)out->dtype)) {
    lt_error("%s: result type %s can't be cast to the desired output type %s", op,
             lt_dtype_name((lt_dtype)r->dtype), lt_dtype_name((lt_dtype)out->dtype));
    return finish(p, NULL);
  }
  if (lt_tensor_resize_out(op, out, r->ndim, r->sizes) < 0) return finish(p, NULL);
  lt_tensor *c = keep(p, lt_copy_(out, r));
  return finish(p, c);
}

/* the in-place forms (out == self) compute from a copy of self: the ops that
** save self for their backward must not see it overwritten by the final copy_ */
static lt_tensor *src_of(pool *p, lt_tensor *self, lt_tensor *out) {
  return out == self ? keep(p, lt_clone(self)) : self;
}

static lt_dtype float_of(const lt_tensor *t) {
  return lt_dtype_is_float((lt_dtype)t->dtype) ? (lt_dtype)t->dtype : lt_get_default_dtype();
}

/* ---- elementwise composites -------------------------------------------------- */

static lt_tensor *scale_impl(const char *op, lt_tensor *self, double k, lt_tensor *out) {
  pool p = {0};
  lt_tensor *x = lt_dtype_is_float((lt_dtype)self->dtype) ? src_of(&p, self, out) : to(&p, self, lt_get_default_dtype());
  return into_out(op, &p, mul(&p, x, num(&p, k)), out);
}
lt_tensor *lt_deg2rad_impl(lt_tensor *self, lt_tensor *out) {
  return scale_impl("deg2rad", self, 3.14159265358979323846 / 180.0, out);
}
lt_tensor *lt_rad2deg_impl(lt_tensor *self, lt_tensor *out) {
  return scale_impl("rad2deg", self, 180.0 / 3.14159265358979323846, out);
}

lt_tensor *lt_sgn_impl(lt_tensor *self, lt_tensor *out) {
  pool p = {0};
  if (lt_dtype_is_complex((lt_dtype)self->dtype)) return into_out("sgn", &p, keep(&p, lt__sgn_complex(self)), out);
  return into_out("sgn", &p, keep(&p, lt_sign(self)), out);
}

lt_tensor *lt_ldexp_impl(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  pool p = {0};
  self = src_of(&p, self, out);
  /* integer exponents go through the default float dtype, as PyTorch's pow(2.0, other) */
  lt_tensor *o = lt_dtype_is_float((lt_dtype)other->dtype) ? other : to(&p, other, lt_get_default_dtype());
  lt_tensor *e = o ? keep(&p, lt_exp2(o)) : NULL;
  return into_out("ldexp", &p, mul(&p, self, e), out);
}

lt_tensor *lt_float_power_impl(lt_tensor *self, lt_tensor *exponent, lt_tensor *out) {
  if (out && out->dtype != LT_FLOAT64)
    return lt_error_null("float_power: the result (float64) cannot be written into a %s tensor",
                         lt_dtype_name((lt_dtype)out->dtype));
  pool p = {0};
  self = src_of(&p, self, out);
  lt_tensor *a = to(&p, self, LT_FLOAT64), *b = to(&p, exponent, LT_FLOAT64);
  return into_out("float_power", &p, OK2(a, b) ? keep(&p, lt_pow(a, b)) : NULL, out);
}

lt_tensor *lt_polygamma_m_impl(lt_tensor *self, int64_t n) { return lt_polygamma(n, self); }

lt_tensor *lt_polygamma_inplace_impl(lt_tensor *self, int64_t n) {
  pool p = {0};
  lt_tensor *x = src_of(&p, self, self);
  return into_out("polygamma_", &p, x ? keep(&p, lt_polygamma(n, x)) : NULL, self);
}

/* sum over i < p of lgamma(x - i/2), plus p(p-1)/4 log(pi) */
lt_tensor *lt_mvlgamma_impl(lt_tensor *self, int64_t pdim, lt_tensor *out) {
  if (pdim < 1) return lt_error_null("mvlgamma: argument 'p' must be at least 1, got %lld", (long long)pdim);
  pool p = {0};
  lt_dtype dt = float_of(self);
  lt_tensor *x = to(&p, src_of(&p, self, out), dt);
  if (x && x->numel > 0) {   /* the domain: every element above (p - 1) / 2 */
    /* "not above", so a NaN fails the check too, as in PyTorch */
    lt_tensor *above = keep(&p, lt_gt(x, num(&p, (double)(pdim - 1) / 2)));
    lt_tensor *bad = above ? keep(&p, lt_logical_not(above)) : NULL;
    lt_tensor *anyb = bad ? keep(&p, lt_any(bad, lt_intlist_none(), false)) : NULL;
    if (anyb && lt_tensor_get_double(anyb, 0) != 0) {
      drop(&p);
      return lt_error_null("mvlgamma: argument 'self': all elements must be greater than (p - 1) / 2 = %g",
                           (double)(pdim - 1) / 2);
    }
  }
  /* an empty input has an empty result: no p-long range of offsets (p may be 2^31) */
  if (x && x->numel == 0) return into_out("mvlgamma", &p, keep(&p, lt_mul(x, num(&p, 1))), out);
  lt_tensor *offs = keep(&p, lt_arange(lt_scalar_int(0), lt_scalar_float(-(double)pdim / 2),
                                       lt_scalar_float(-0.5), dt, lt_tensor_device(self)));
  lt_tensor *xs = add(&p, unsq(&p, x, -1), offs);
  lt_tensor *lg = xs ? keep(&p, lt_lgamma(xs)) : NULL;
  lt_tensor *s = sum_dims(&p, lg, -1, false);
  double c = (double)pdim * (double)(pdim - 1) / 4 * log(3.14159265358979323846);
  return into_out("mvlgamma", &p, add(&p, s, num(&p, c)), out);
}

/* ---- statistics ------------------------------------------------------------------ */

lt_tensor *lt_cov_impl(lt_tensor *self, int64_t correction, lt_tensor *fweights, lt_tensor *aweights) {
  if (self->ndim > 2)
    return lt_error_null("cov: argument 'self' must have at most 2 dims, got %d", self->ndim);
  if (self->dtype == LT_BOOL) return lt_error_null("cov: argument 'self' must be a number tensor, got bool");
  int64_t nobs = self->ndim == 0 ? 1 : self->sizes[self->ndim - 1];
  lt_tensor *ws[2] = {fweights, aweights};
  const char *wn[2] = {"fweights", "aweights"};
  for (int k = 0; k < 2; k++) {
    lt_tensor *w = ws[k];
    if (!w) continue;
    if (w->ndim > 1) return lt_error_null("cov: argument '%s' must be 0-D or 1-D, got %d dims", wn[k], w->ndim);
    if ((w->ndim == 0 ? 1 : w->sizes[0]) != nobs)
      return lt_error_null("cov: argument '%s' must have one weight per observation (%lld)", wn[k], (long long)nobs);
    if (k == 0 && (lt_dtype_is_float((lt_dtype)w->dtype) || w->dtype == LT_BOOL))
      return lt_error_null("cov: argument 'fweights' must be an integer tensor, got %s", lt_dtype_name((lt_dtype)w->dtype));
    if (k == 1 && !lt_dtype_is_float((lt_dtype)w->dtype))
      return lt_error_null("cov: argument 'aweights' must be a floating point tensor, got %s", lt_dtype_name((lt_dtype)w->dtype));
    for (int64_t i = 0; i < w->numel; i++)
      if (lt_tensor_get_double(w, i) < 0)
        return lt_error_null("cov: argument '%s' must be non-negative", wn[k]);
  }
  pool p = {0};
  lt_dtype dt = float_of(self);
  lt_tensor *x = to(&p, self, dt);
  if (x && x->ndim < 2) x = keep(&p, lt_view(x, lt_intlist_make((int64_t[]){1, -1}, 2)));
  lt_tensor *w = NULL;
  if (fweights) w = to(&p, fweights, dt);
  if (aweights) w = w ? mul(&p, w, aweights) : to(&p, aweights, dt);
  lt_tensor *avg, *wsum = NULL, *norm;
  if (w) {
    wsum = keep(&p, lt_sum(w, lt_intlist_none(), false, -1));
    avg = dv(&p, sum_dims(&p, mul(&p, x, w), -1, true), wsum);
  } else {
    avg = keep(&p, lt_mean(x, lt_intlist_make((int64_t[]){-1}, 1), true, -1));
  }
  if (!w) {
    norm = num(&p, (double)(nobs - correction));
  } else if (correction == 0) {
    norm = wsum;
  } else if (!aweights) {
    norm = sub(&p, wsum, num(&p, (double)correction));
  } else {
    lt_tensor *wa = dv(&p, keep(&p, lt_sum(mul(&p, w, aweights), lt_intlist_none(), false, -1)), wsum);
    norm = sub(&p, wsum, mul(&p, wa, num(&p, (double)correction)));
  }
  /* a negative normaliser counts as 0 (inf/NaN results), as in PyTorch */
  if (norm && !p.failed) norm = keep(&p, lt_clamp_min(norm, num(&p, 0)));
  lt_tensor *xm = sub(&p, x, avg);
  lt_tensor *xw = w ? mul(&p, xm, w) : xm;
  lt_tensor *xt = xm ? keep(&p, lt_t(xm)) : NULL;
  lt_tensor *c = OK2(xw, xt) ? keep(&p, lt_mm(xw, xt)) : NULL;
  c = dv(&p, c, norm);
  if (c && self->ndim < 2) c = keep(&p, lt_reshape(c, lt_intlist_make(NULL, 0)));
  return finish(&p, c);
}

lt_tensor *lt_cross_impl(lt_tensor *self, lt_tensor *other, int64_t dim) {
  int64_t sz[LT_MAX_DIMS];
  int nd = lt_broadcast_shapes("cross", self->ndim, self->sizes, other->ndim, other->sizes, sz);
  if (nd < 0) return NULL;
  int d;
  if (dim == LT_NOINT) {
    d = -1;
    for (int i = 0; i < nd; i++) if (sz[i] == 3) { d = i; break; }
    if (d < 0) return lt_error_null("cross: no dim of size 3 in the inputs; pass argument 'dim'");
  } else {
    if ((d = lt_wrap_dim("cross", dim, nd)) < 0) return NULL;
    if (sz[d] != 3) return lt_error_null("cross: argument 'dim': dim %d has size %lld, not 3", d + 1, (long long)sz[d]);
  }
  pool p = {0};
  lt_intlist shape = lt_intlist_make(sz, nd);
  lt_tensor *a = keep(&p, lt_expand(self, shape)), *b = keep(&p, lt_expand(other, shape));
  lt_tensor *ac[3], *bc[3], *r[3];
  for (int i = 0; i < 3; i++) { ac[i] = narrow(&p, a, d, i, 1); bc[i] = narrow(&p, b, d, i, 1); }
  for (int i = 0; i < 3; i++) {
    int j = (i + 1) % 3, k = (i + 2) % 3;
    r[i] = sub(&p, mul(&p, ac[j], bc[k]), mul(&p, ac[k], bc[j]));
  }
  lt_tensor *c = p.failed ? NULL : keep(&p, lt_cat(r, 3, d));
  return finish(&p, c);
}

static int check_p(const char *op, double pv) {
  if (!(pv >= 0)) return lt_error("%s: argument 'p' must be non-negative, got %g", op, pv);
  return 0;
}

lt_tensor *lt_cdist_impl(lt_tensor *x1, lt_tensor *x2, double pv, const char *compute_mode) {
  if (compute_mode && strcmp(compute_mode, "use_mm_for_euclid_dist_if_necessary") != 0 &&
      strcmp(compute_mode, "use_mm_for_euclid_dist") != 0 && strcmp(compute_mode, "donot_use_mm_for_euclid_dist") != 0)
    return lt_error_null("cdist: argument 'compute_mode' must be \"use_mm_for_euclid_dist_if_necessary\", "
                         "\"use_mm_for_euclid_dist\" or \"donot_use_mm_for_euclid_dist\", got \"%s\"", compute_mode);
  if (x1->ndim < 2) return lt_error_null("cdist: argument 'x1' must have at least 2 dims, got %d", x1->ndim);
  if (x2->ndim < 2) return lt_error_null("cdist: argument 'x2' must have at least 2 dims, got %d", x2->ndim);
  if (x1->sizes[x1->ndim - 1] != x2->sizes[x2->ndim - 1])
    return lt_error_null("cdist: arguments 'x1' and 'x2' must have the same number of columns, got %lld and %lld",
                         (long long)x1->sizes[x1->ndim - 1], (long long)x2->sizes[x2->ndim - 1]);
  if (!lt_dtype_is_float((lt_dtype)x1->dtype) || !lt_dtype_is_float((lt_dtype)x2->dtype))
    return lt_error_null("cdist: arguments 'x1' and 'x2' must be floating point tensors");
  if (check_p("cdist", pv) < 0) return NULL;
  pool p = {0};
  /* [.., P, 1, M] - [.., 1, R, M] -> norm over M */
  lt_tensor *d = sub(&p, unsq(&p, x1, -2), unsq(&p, x2, -3));
  int64_t last = -1;
  lt_tensor *r = d ? keep(&p, lt_norm(d, lt_scalar_float(pv), lt_intlist_make(&last, 1), false, -1)) : NULL;
  return finish(&p, r);
}

lt_tensor *lt_pdist_impl(lt_tensor *self, double pv) {
  if (self->ndim != 2) return lt_error_null("pdist: argument 'self' must be 2-D, got %d dims", self->ndim);
  if (!lt_dtype_is_float((lt_dtype)self->dtype))
    return lt_error_null("pdist: argument 'self' must be a floating point tensor, got %s", lt_dtype_name((lt_dtype)self->dtype));
  if (check_p("pdist", pv) < 0) return NULL;
  int64_t n = self->sizes[0], m = n * (n - 1) / 2;
  if (n < 2) m = 0;
  /* the pairs' indices are written on the host, then moved to self's device (meta, cuda) */
  lt_tensor *hi = lt_tensor_new(LT_INT64, lt_device_cpu(), 1, &m);
  lt_tensor *hj = hi ? lt_tensor_new(LT_INT64, lt_device_cpu(), 1, &m) : NULL;
  if (!hj) { lt_tensor_release(hi); return NULL; }
  int64_t *iv = (int64_t *)lt_tensor_data(hi), *jv = (int64_t *)lt_tensor_data(hj), k = 0;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = i + 1; j < n; j++) { iv[k] = i + 1; jv[k] = j + 1; k++; }   /* 1-based indices */
  pool p = {0};
  keep(&p, hi); keep(&p, hj);
  lt_tensor *ii = keep(&p, lt_tensor_to_device(hi, lt_tensor_device(self)));
  lt_tensor *jj = keep(&p, lt_tensor_to_device(hj, lt_tensor_device(self)));
  if (!ii || !jj) return finish(&p, NULL);
  lt_tensor *a = keep(&p, lt_index_select(self, 0, ii)), *b = keep(&p, lt_index_select(self, 0, jj));
  lt_tensor *d = sub(&p, a, b);
  int64_t last = -1;
  lt_tensor *r = d ? keep(&p, lt_norm(d, lt_scalar_float(pv), lt_intlist_make(&last, 1), false, -1)) : NULL;
  return finish(&p, r);
}

lt_tensor *lt_dist_impl(lt_tensor *self, lt_tensor *other, lt_scalar pv) {
  int64_t sz[LT_MAX_DIMS];
  if (lt_broadcast_shapes("dist", self->ndim, self->sizes, other->ndim, other->sizes, sz) < 0) return NULL;
  if (!lt_dtype_is_float((lt_dtype)self->dtype) || !lt_dtype_is_float((lt_dtype)other->dtype))
    return lt_error_null("dist: arguments 'self' and 'other' must be floating point tensors");
  pool p = {0};
  lt_tensor *d = sub(&p, self, other);
  lt_tensor *r = d ? keep(&p, lt_norm(d, pv, lt_intlist_none(), false, -1)) : NULL;
  return finish(&p, r);
}

lt_tensor *lt_renorm_impl(lt_tensor *self, lt_scalar pv, int64_t dim, lt_scalar maxnorm, lt_tensor *out) {
  if (!lt_dtype_is_float((lt_dtype)self->dtype))
    return lt_error_null("renorm: argument 'self' must be a floating point tensor, got %s", lt_dtype_name((lt_dtype)self->dtype));
  if (self->ndim < 2) return lt_error_null("renorm: argument 'self' must have at least 2 dims, got %d", self->ndim);
  if (!(lt_scalar_to_double(pv) > 0)) return lt_error_null("renorm: argument 'p' must be positive, got %g", lt_scalar_to_double(pv));
  if (!(lt_scalar_to_double(maxnorm) >= 0))
    return lt_error_null("renorm: argument 'maxnorm' must be non-negative, got %g", lt_scalar_to_double(maxnorm));
  int d = lt_wrap_dim("renorm", dim, self->ndim);
  if (d < 0) return NULL;
  int64_t others[LT_MAX_DIMS];
  int no = 0;
  for (int i = 0; i < self->ndim; i++) if (i != d) others[no++] = i;
  pool p = {0};
  self = src_of(&p, self, out);
  lt_tensor *nrm = self ? keep(&p, lt_norm(self, pv, lt_intlist_make(others, no), true, -1)) : NULL;
  lt_tensor *mx = keep(&p, lt_tensor_wrapped_number(maxnorm));
  /* slices over maxnorm scale by maxnorm / (norm + 1e-7), the rest stay */
  lt_tensor *f = dv(&p, mx, add(&p, nrm, num(&p, 1e-7)));
  lt_tensor *big = OK2(nrm, mx) ? keep(&p, lt_gt(nrm, mx)) : NULL;
  lt_tensor *s = where(&p, big, f, num(&p, 1.0));
  return into_out("renorm", &p, mul(&p, self, s), out);
}

/* ---- quantile -------------------------------------------------------------------- */

static lt_tensor *quantile_impl(const char *op, bool ignore_nan, lt_tensor *self, lt_tensor *q, int64_t dim,
                                bool keepdim, const char *interpolation) {
  enum { Q_LINEAR, Q_LOWER, Q_HIGHER, Q_MIDPOINT, Q_NEAREST } mode;
  if (strcmp(interpolation, "linear") == 0) mode = Q_LINEAR;
  else if (strcmp(interpolation, "lower") == 0) mode = Q_LOWER;
  else if (strcmp(interpolation, "higher") == 0) mode = Q_HIGHER;
  else if (strcmp(interpolation, "midpoint") == 0) mode = Q_MIDPOINT;
  else if (strcmp(interpolation, "nearest") == 0) mode = Q_NEAREST;
  else return lt_error_null("%s: argument 'interpolation' must be \"linear\", \"lower\", \"higher\", \"midpoint\" "
                            "or \"nearest\", got \"%s\"", op, interpolation);
  lt_dtype dt = (lt_dtype)self->dtype;
  if (dt != LT_FLOAT32 && dt != LT_FLOAT64)
    return lt_error_null("%s: argument 'self' must be a float32 or float64 tensor, got %s", op, lt_dtype_name(dt));
  if (self->numel == 0) return lt_error_null("%s: argument 'self' must be non-empty", op);
  if (q->ndim > 1) return lt_error_null("%s: argument 'q' must be a number or a 0-D or 1-D tensor, got %d dims", op, q->ndim);
  if (!q->is_wrapped_number && q->dtype != self->dtype)
    return lt_error_null("%s: argument 'q' (%s) must have the dtype of 'self' (%s)", op,
                         lt_dtype_name((lt_dtype)q->dtype), lt_dtype_name(dt));
  for (int64_t i = 0; i < q->numel; i++) {
    double v = lt_tensor_get_double(q, i);
    if (!(v >= 0 && v <= 1)) return lt_error_null("%s: argument 'q' must be in [0, 1], got %g", op, v);
  }
  int d = -1;
  if (dim != LT_NOINT && (d = lt_wrap_dim(op, dim, self->ndim)) < 0) return NULL;
  pool p = {0};
  /* x: the values to reduce along its last dim */
  lt_tensor *x;
  if (dim == LT_NOINT) x = keep(&p, lt_reshape(self, lt_intlist_make((int64_t[]){-1}, 1)));
  else if (self->ndim == 0) x = keep(&p, lt_reshape(self, lt_intlist_make((int64_t[]){1}, 1)));
  else {
    int64_t src = d, dst = -1;
    x = keep(&p, lt_movedim(self, lt_intlist_make(&src, 1), lt_intlist_make(&dst, 1)));
  }
  lt_tensor *sorted = NULL, *idx = NULL;
  if (x && lt_sort(x, -1, false, false, &sorted, &idx) == 0) { keep(&p, sorted); keep(&p, idx); }
  else p.failed = true;
  int xnd = x ? x->ndim : 0;
  int64_t n = x ? x->sizes[xnd - 1] : 0;
  /* q as [Q, 1, ..., 1] (or [1, ..., 1]) in float64 */
  bool qvec = q->ndim == 1;
  int64_t qs[LT_MAX_DIMS];
  int qnd = 0;
  if (qvec) qs[qnd++] = q->numel;
  for (int i = 0; i < xnd; i++) qs[qnd++] = 1;
  lt_tensor *qv = to(&p, q, LT_FLOAT64);
  qv = qv ? keep(&p, lt_reshape(qv, lt_intlist_make(qs, qnd))) : NULL;
  lt_tensor *nans = sorted ? keep(&p, lt_isnan(sorted)) : NULL;
  lt_tensor *rank;
  if (ignore_nan) {
    /* rank over the non-NaN count; all-NaN slices get rank 0, which reads a NaN */
    lt_tensor *cnt = nans ? keep(&p, lt_logical_not(nans)) : NULL;
    cnt = sum_dims(&p, cnt, -1, true);
    rank = mul(&p, qv, sub(&p, to(&p, cnt, LT_FLOAT64), num(&p, 1)));
    rank = rank ? keep(&p, lt_clamp_min(rank, num(&p, 0))) : NULL;
  } else {
    /* a slice with a NaN reads its last element, the NaN (sorted last) */
    int64_t last = -1;
    lt_tensor *anyn = nans ? keep(&p, lt_any(nans, lt_intlist_make(&last, 1), true)) : NULL;
    rank = where(&p, anyn, num(&p, (double)(n - 1)), mul(&p, qv, num(&p, (double)(n - 1))));
  }
  if (rank && mode == Q_LOWER) rank = keep(&p, lt_floor(rank));
  else if (rank && mode == Q_HIGHER) rank = keep(&p, lt_ceil(rank));
  else if (rank && mode == Q_NEAREST) rank = keep(&p, lt_round(rank, 0));
  /* expand sorted to rank's leading dims so gather lines up */
  lt_tensor *srt = sorted;
  int64_t es[LT_MAX_DIMS];
  if (rank && sorted) {
    int off = rank->ndim - xnd;
    for (int i = 0; i < rank->ndim; i++) es[i] = i < off ? rank->sizes[i] : sorted->sizes[i - off];
    es[rank->ndim - 1] = n;
    if (qvec) srt = keep(&p, lt_expand(unsq(&p, sorted, 0), lt_intlist_make(es, rank->ndim)));
    int64_t rs[LT_MAX_DIMS];
    memcpy(rs, es, sizeof rs);
    rs[rank->ndim - 1] = 1;
    rank = keep(&p, lt_expand(rank, lt_intlist_make(rs, rank->ndim)));
  }
  lt_tensor *lo = rank ? keep(&p, lt_floor(rank)) : NULL;
  lt_tensor *ilo = lo ? add(&p, to(&p, lo, LT_INT64), num(&p, 1)) : NULL;   /* 1-based for gather */
  if (ilo) ilo = keep(&p, lt_to(ilo, LT_INT64, false));
  lt_tensor *vlo = OK2(srt, ilo) ? keep(&p, lt_gather(srt, -1, ilo)) : NULL;
  lt_tensor *val = vlo;
  if (mode == Q_LINEAR || mode == Q_MIDPOINT) {
    lt_tensor *hi = rank ? keep(&p, lt_ceil(rank)) : NULL;
    lt_tensor *ihi = hi ? keep(&p, lt_to(add(&p, to(&p, hi, LT_INT64), num(&p, 1)), LT_INT64, false)) : NULL;
    lt_tensor *vhi = OK2(srt, ihi) ? keep(&p, lt_gather(srt, -1, ihi)) : NULL;
    lt_tensor *w = mode == Q_MIDPOINT ? num(&p, 0.5) : to(&p, sub(&p, rank, lo), dt);
    val = (vlo && vhi && w) ? keep(&p, lt_lerp(vlo, vhi, w)) : NULL;
  }
  val = sq(&p, val, -1);
  if (val && keepdim) {
    /* the reduced dims come back with size 1 */
    int64_t ks[LT_MAX_DIMS];
    int kn = 0;
    if (qvec) ks[kn++] = q->numel;
    for (int i = 0; i < self->ndim; i++) ks[kn++] = (dim == LT_NOINT || i == d) ? 1 : self->sizes[i];
    if (dim != LT_NOINT && self->ndim > 0) {
      /* val is [Q?, rest...] in self's order without d: put d back */
      val = unsq(&p, val, (qvec ? 1 : 0) + d);
    } else {
      val = keep(&p, lt_reshape(val, lt_intlist_make(ks, kn)));
    }
  }
  return finish(&p, val);
}

lt_tensor *lt_quantile_impl(lt_tensor *self, lt_tensor *q, int64_t dim, bool keepdim, const char *interpolation) {
  return quantile_impl("quantile", false, self, q, dim, keepdim, interpolation);
}
lt_tensor *lt_nanquantile_impl(lt_tensor *self, lt_tensor *q, int64_t dim, bool keepdim, const char *interpolation) {
  return quantile_impl("nanquantile", true, self, q, dim, keepdim, interpolation);
}

lt_tensor *lt_msort_impl(lt_tensor *self) {
  lt_tensor *v = NULL, *i = NULL;
  if (lt_sort(self, 0, false, false, &v, &i) < 0) return NULL;
  lt_tensor_release(i);
  return v;
}

/* ---- trapezoid ------------------------------------------------------------------- */

static lt_tensor *trapz_core(const char *op, lt_tensor *y, lt_tensor *x, lt_scalar dx, int64_t dim) {
  int d = lt_wrap_dim(op, dim, y->ndim);
  if (d < 0) return NULL;
  if (y->dtype == LT_BOOL) return lt_error_null("%s: argument 'y' must be a number tensor, got bool", op);
  int64_t n = y->ndim ? y->sizes[d] : 1;
  pool p = {0};
  if (n == 0) {   /* an empty dim integrates to 0 */
    lt_tensor *s = sum_dims(&p, y, d, false);
    return finish(&p, s);
  }
  lt_tensor *ysum = add(&p, narrow(&p, y, d, 1, n - 1), narrow(&p, y, d, 0, n - 1));
  lt_tensor *t;
  if (x) {
    lt_tensor *dxs;
    if (x->ndim == 1) {
      if (x->sizes[0] != n) {
        drop(&p);
        return lt_error_null("%s: argument 'x' has %lld points but 'y' has %lld along dim %d", op,
                             (long long)x->sizes[0], (long long)n, d + 1);
      }
      dxs = sub(&p, narrow(&p, x, 0, 1, n - 1), narrow(&p, x, 0, 0, n - 1));
      /* line the differences up with y's dim */
      int64_t vs[LT_MAX_DIMS];
      for (int i = 0; i < y->ndim; i++) vs[i] = i == d ? n - 1 : 1;
      dxs = dxs ? keep(&p, lt_reshape(dxs, lt_intlist_make(vs, y->ndim))) : NULL;
    } else {
      int64_t bs[LT_MAX_DIMS];
      if (lt_broadcast_shapes(op, y->ndim, y->sizes, x->ndim, x->sizes, bs) < 0) { drop(&p); return NULL; }
      int xd = lt_wrap_dim(op, dim, x->ndim);
      if (xd < 0) { drop(&p); return NULL; }
      int64_t xn = x->sizes[xd];
      dxs = sub(&p, narrow(&p, x, xd, 1, xn - 1), narrow(&p, x, xd, 0, xn - 1));
    }
    t = mul(&p, ysum, dxs);
    t = dv(&p, sum_dims(&p, t, d, false), num(&p, 2.0));
  } else {
    lt_tensor *s = sum_dims(&p, ysum, d, false);
    t = dv(&p, mul(&p, s, keep(&p, lt_tensor_wrapped_number(dx))), num(&p, 2.0));
  }
  return finish(&p, t);
}

lt_tensor *lt_trapezoid_impl(lt_tensor *y, lt_tensor *x, int64_t dim) {
  return trapz_core("trapezoid", y, x, lt_scalar_int(1), dim);
}
lt_tensor *lt_trapezoid_dx_impl(lt_tensor *y, lt_scalar dx, int64_t dim) {
  return trapz_core("trapezoid", y, NULL, dx, dim);
}

/* ---- tensordot ------------------------------------------------------------------- */

lt_tensor *lt_tensordot_dims_impl(lt_tensor *self, lt_tensor *other, lt_intlist da, lt_intlist db) {
  if (da.n != db.n)
    return lt_error_null("tensordot: arguments 'dims_self' and 'dims_other' must have the same length, got %d and %d",
                         da.n, db.n);
  bool ca[LT_MAX_DIMS] = {0}, cb[LT_MAX_DIMS] = {0};
  int64_t pa[LT_MAX_DIMS], pb[LT_MAX_DIMS], fs[2 * LT_MAX_DIMS];
  int na = 0, nb = 0, nf = 0;
  int64_t k = 1;
  int wa[LT_MAX_DIMS], wb[LT_MAX_DIMS];
  for (int i = 0; i < da.n; i++) {
    wa[i] = lt_wrap_dim("tensordot", da.v[i], self->ndim);
    if (wa[i] < 0) return NULL;
    wb[i] = lt_wrap_dim("tensordot", db.v[i], other->ndim);
    if (wb[i] < 0) return NULL;
    if (ca[wa[i]] || cb[wb[i]]) return lt_error_null("tensordot: a dim appears twice in the dims to contract");
    if (self->sizes[wa[i]] != other->sizes[wb[i]])
      return lt_error_null("tensordot: contracted dims %d of 'self' (size %lld) and %d of 'other' (size %lld) differ",
                           wa[i] + 1, (long long)self->sizes[wa[i]], wb[i] + 1, (long long)other->sizes[wb[i]]);
    ca[wa[i]] = cb[wb[i]] = true;
    k *= self->sizes[wa[i]];
  }
  int64_t fa = 1, fb = 1;
  for (int i = 0; i < self->ndim; i++) if (!ca[i]) { pa[na++] = i; fs[nf++] = self->sizes[i]; fa *= self->sizes[i]; }
  for (int i = 0; i < da.n; i++) pa[na++] = wa[i];
  for (int i = 0; i < db.n; i++) pb[nb++] = wb[i];
  for (int i = 0; i < other->ndim; i++) if (!cb[i]) { pb[nb++] = i; fs[nf++] = other->sizes[i]; fb *= other->sizes[i]; }
  pool p = {0};
  lt_tensor *a = keep(&p, lt_permute(self, lt_intlist_make(pa, na)));
  lt_tensor *b = keep(&p, lt_permute(other, lt_intlist_make(pb, nb)));
  a = a ? keep(&p, lt_reshape(a, lt_intlist_make((int64_t[]){fa, k}, 2))) : NULL;
  b = b ? keep(&p, lt_reshape(b, lt_intlist_make((int64_t[]){k, fb}, 2))) : NULL;
  lt_tensor *c = OK2(a, b) ? keep(&p, lt_mm(a, b)) : NULL;
  c = c ? keep(&p, lt_reshape(c, lt_intlist_make(fs, nf))) : NULL;
  return finish(&p, c);
}

lt_tensor *lt_tensordot_impl(lt_tensor *self, lt_tensor *other, int64_t dims) {
  if (dims < 0 || dims > self->ndim || dims > other->ndim)
    return lt_error_null("tensordot: argument 'dims' (%lld) must be between 0 and the dims of both tensors",
                         (long long)dims);
  int64_t da[LT_MAX_DIMS], db[LT_MAX_DIMS];
  for (int i = 0; i < dims; i++) { da[i] = self->ndim - dims + i; db[i] = i; }
  return lt_tensordot_dims_impl(self, other, lt_intlist_make(da, (int)dims), lt_intlist_make(db, (int)dims));
}
