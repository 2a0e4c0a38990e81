/*
** creation.c — checks and geometry of the creation and random ops (meta/creation.h).
*/
#include <math.h>
#include <stdint.h>
#include "meta/creation.h"
#include "meta/meta.h"

lt_tensor *lt_meta_creation_new(const char *op, int ndim, const int64_t *sizes, int dtype, int dflt, lt_device dev) {
  if (ndim > LT_MAX_DIMS) return lt_error_null("%s: at most %d dims, got %d", op, LT_MAX_DIMS, ndim);
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) {
    if (sizes[i] < 0) return lt_error_null("%s: negative size %lld in dim %d", op, (long long)sizes[i], i + 1);
    if (sizes[i] && n > INT64_MAX / 16 / sizes[i]) return lt_error_null("%s: size is too large", op);
    n *= sizes[i];
  }
  lt_dtype dt = (lt_dtype)(dtype >= 0 ? dtype : dflt);
  lt_tensor *t = lt_tensor_new(dt, dev.type < 0 ? lt_device_cpu() : dev, ndim, sizes);
  if (!t) return lt_error_null("%s: %s", op, lt_error_message());
  return t;
}

int lt_meta_fill_value(const char *op, lt_scalar v, lt_dtype dt, void *elem) {
  if (v.type == LT_SCALAR_COMPLEX) {
    if (!lt_dtype_is_complex(dt))
      return lt_error("%s: a complex value cannot be converted to type %s (its imaginary part would be lost)", op,
                      lt_dtype_name(dt));
    lt_dtype_store_complex(dt, elem, v.v.f, v.im);
    return 0;
  }
  if (lt_dtype_is_integral(dt) && dt != LT_BOOL) {
    static const int64_t lo[] = { [LT_INT64] = INT64_MIN, [LT_INT32] = INT32_MIN, [LT_INT16] = INT16_MIN,
                                  [LT_INT8] = INT8_MIN, [LT_UINT8] = 0 };
    static const int64_t hi[] = { [LT_INT64] = INT64_MAX, [LT_INT32] = INT32_MAX, [LT_INT16] = INT16_MAX,
                                  [LT_INT8] = INT8_MAX, [LT_UINT8] = UINT8_MAX };
    int64_t x;
    if (v.type == LT_SCALAR_FLOAT) {
      if (!(v.v.f >= -9.2233720368547758e18 && v.v.f < 9.2233720368547758e18))
        return lt_error("%s: value %g cannot be converted to type %s without overflow", op, v.v.f, lt_dtype_name(dt));
      x = (int64_t)v.v.f;
    } else x = v.v.i;
    if (x < lo[dt] || x > hi[dt])
      return lt_error("%s: value %lld cannot be converted to type %s without overflow", op, (long long)x,
                      lt_dtype_name(dt));
    lt_dtype_store_int64(dt, elem, x);
  } else if (v.type == LT_SCALAR_FLOAT) {
    lt_dtype_store_double(dt, elem, v.v.f);
  } else {
    lt_dtype_store_int64(dt, elem, v.v.i);
  }
  return 0;
}

static bool scalar_is_int(lt_scalar s) { return s.type == LT_SCALAR_INT || s.type == LT_SCALAR_BOOL; }

int lt_meta_range(const char *op, lt_scalar start, lt_scalar end, lt_scalar step, bool inclusive, lt_meta_seq *c) {
  bool all_int = scalar_is_int(start) && scalar_is_int(end) && scalar_is_int(step);
  *c = (lt_meta_seq){0};
  if (all_int) {
    int64_t s = start.v.i, e = end.v.i, st = step.v.i;
    if (st == 0) return lt_error("%s: argument 'step' must be nonzero", op);
    __int128 d = (__int128)e - s;
    if ((d > 0 && st < 0) || (d < 0 && st > 0))
      return lt_error("%s: upper bound and lower bound inconsistent with step sign", op);
    __int128 cnt;
    if (inclusive) cnt = d / st + 1;
    else cnt = st > 0 ? (d + st - 1) / st : (d + st + 1) / st;
    if (cnt > INT64_MAX / 16) return lt_error("%s: the result would be too large", op);
    c->n = (int64_t)cnt;
    c->is_int = true; c->istart = s; c->istep = st;
    c->fstart = (double)s; c->fstep = (double)st;
  } else {
    double s = lt_scalar_to_double(start), e = lt_scalar_to_double(end), st = lt_scalar_to_double(step);
    if (!isfinite(s) || !isfinite(e)) return lt_error("%s: unsupported range: %g -> %g", op, s, e);
    if (st == 0 || !isfinite(st)) return lt_error("%s: argument 'step' must be nonzero and finite", op);
    if ((e > s && st < 0) || (e < s && st > 0))
      return lt_error("%s: upper bound and lower bound inconsistent with step sign", op);
    double cnt = inclusive ? floor((e - s) / st) + 1 : ceil((e - s) / st);
    if (!(cnt < 9.0e15)) return lt_error("%s: the result would be too large", op);
    c->n = cnt > 0 ? (int64_t)cnt : 0;
    c->fstart = s; c->fstep = st;
  }
  c->dflt = all_int && !inclusive ? LT_INT64 : lt_get_default_dtype();
  return 0;
}

int lt_meta_int_bounds(const char *op, lt_dtype dt, int64_t low, int64_t high) {
  if (high <= low)
    return lt_error("%s: argument 'high' (%lld) must be greater than 'low' (%lld)", op, (long long)high, (long long)low);
  int64_t lo, hi;
  switch (dt) {
    case LT_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
    case LT_INT16: lo = INT16_MIN; hi = INT16_MAX; break;
    case LT_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
    case LT_UINT8: lo = 0; hi = UINT8_MAX; break;
    case LT_BOOL: lo = 0; hi = 1; break;
    default: return 0;
  }
  if (low < lo || high - 1 > hi)
    return lt_error("%s: range [%lld, %lld) is out of bounds for dtype %s", op, (long long)low, (long long)high,
                    lt_dtype_name(dt));
  return 0;
}

lt_tensor *lt_meta_randperm_new(int64_t n, int dtype, lt_device dev) {
  if (n < 0) return lt_error_null("randperm: argument 'n' must be non-negative, got %lld", (long long)n);
  lt_tensor *t = lt_meta_creation_new("randperm", 1, &n, dtype, LT_INT64, dev);
  if (!t) return NULL;
  lt_dtype dt = (lt_dtype)t->dtype;
  if (dt != LT_INT64 && dt != LT_FLOAT64 && dt != LT_INT32 && n > 0) {
    /* 1..n must be representable exactly */
    double maxexact = dt == LT_FLOAT32 ? 16777216.0 : dt == LT_INT16 ? 32767.0 : dt == LT_INT8 ? 127.0 :
                      dt == LT_UINT8 ? 255.0 : dt == LT_FLOAT16 ? 2048.0 : dt == LT_BFLOAT16 ? 256.0 :
                      dt == LT_BOOL ? 1.0 : 9e18;
    if ((double)n > maxexact) {
      lt_tensor_release(t);
      return lt_error_null("randperm: n = %lld is too large for dtype %s", (long long)n, lt_dtype_name(dt));
    }
  }
  return t;
}

int lt_meta_dropout_trivial(lt_tensor *input, double p, bool train, lt_tensor *o, lt_tensor *m) {
  if (!train || p == 0 || p == 1 || input->numel == 0) {
    bool all = !train || p == 0;
    if (lt_tensor_fill_(m, lt_scalar_bool(all)) < 0) return -1;
    if (all ? lt_tensor_copy_(o, input) < 0 : lt_tensor_fill_(o, lt_scalar_int(0)) < 0) return -1;
    return 1;
  }
  return 0;
}

lt_tensor *lt_meta_dropout_mask_new(const char *op, lt_tensor *self, double p, lt_intlist shape, bool *done) {
  *done = false;
  if (lt_meta_check_prob(op, "p", p) < 0 || lt_meta_check_float(op, "self", self) < 0) return NULL;
  int nd = shape.n >= 0 ? shape.n : self->ndim;
  const int64_t *sz = shape.n >= 0 ? shape.v : self->sizes;
  if (nd > LT_MAX_DIMS) return lt_error_null("%s: argument 'shape' has too many dims", op);
  for (int i = 0; i < nd; i++)
    if (sz[i] < 0) return lt_error_null("%s: argument 'shape' has a negative size", op);
  lt_tensor *m = lt_tensor_new((lt_dtype)self->dtype, lt_tensor_device(self), nd, sz);
  if (!m) return NULL;
  if (p == 0 || p == 1 || m->numel == 0) {
    if (lt_tensor_fill_(m, lt_scalar_int(p == 1 ? 0 : 1)) < 0) { lt_tensor_release(m); return NULL; }
    *done = true;
  }
  return m;
}

int lt_meta_eye_shape(int64_t n, int64_t m, int64_t sizes[2]) {
  if (m == LT_NOINT) m = n;
  if (n < 0) return lt_error("eye: argument 'n' must be non-negative, got %lld", (long long)n);
  if (m < 0) return lt_error("eye: argument 'm' must be non-negative, got %lld", (long long)m);
  sizes[0] = n; sizes[1] = m;
  return 0;
}

int lt_meta_check_steps(const char *op, int64_t steps) {
  if (steps < 0) return lt_error("%s: argument 'steps' must be non-negative, got %lld", op, (long long)steps);
  return 0;
}

int lt_meta_multinomial(const char *op, const lt_tensor *self, int64_t num_samples, bool replacement, int64_t *sizes) {
  if (self->ndim < 1 || self->ndim > 2)
    return lt_error("%s: argument 'self' must be 1-D or 2-D, got %d-D", op, self->ndim);
  if (!lt_dtype_is_float((lt_dtype)self->dtype))
    return lt_error("%s: argument 'self' must be a floating point tensor, got %s", op, lt_dtype_name((lt_dtype)self->dtype));
  int64_t ncat = self->sizes[self->ndim - 1];
  if (num_samples <= 0) return lt_error("%s: argument 'num_samples' must be positive, got %lld", op, (long long)num_samples);
  if (ncat == 0) return lt_error("%s: argument 'self' has no categories", op);
  if (!replacement && num_samples > ncat)
    return lt_error("%s: cannot take %lld samples from %lld categories without replacement", op,
                    (long long)num_samples, (long long)ncat);
  if (self->ndim == 2) sizes[0] = self->sizes[0];
  sizes[self->ndim - 1] = num_samples;
  return self->ndim;
}
