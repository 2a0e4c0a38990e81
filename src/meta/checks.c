/*
** checks.c — argument checks shared by kernels and composites.
*/
#include "meta/meta.h"

int lt_meta_check_prob(const char *op, const char *arg, double p) {
  if (!(p >= 0 && p <= 1)) return lt_error("%s: argument '%s' must be between 0 and 1, got %g", op, arg, p);
  return 0;
}

int lt_meta_check_alpha(const char *op, lt_dtype dt, lt_scalar alpha) {
  if (alpha.type == LT_SCALAR_COMPLEX && !lt_dtype_is_complex(dt))
    return lt_error("%s: argument 'alpha' is complex but the result is %s", op, lt_dtype_name(dt));
  if (!lt_dtype_is_float(dt) && alpha.type == LT_SCALAR_FLOAT)
    return lt_error("%s: argument 'alpha' must be an integer for integral tensors, got %g", op, alpha.v.f);
  if (dt == LT_BOOL && alpha.type == LT_SCALAR_INT && alpha.v.i != 0 && alpha.v.i != 1)
    return lt_error("%s: argument 'alpha' must be a boolean for bool tensors", op);
  return 0;
}

int lt_meta_check_float(const char *op, const char *arg, const lt_tensor *t) {
  if (!lt_dtype_is_float((lt_dtype)t->dtype))
    return lt_error("%s: argument '%s' must be a floating point tensor, got %s", op, arg,
                    lt_dtype_name((lt_dtype)t->dtype));
  return 0;
}

int lt_meta_check_f32_or_f64(const char *op, const char *arg, const lt_tensor *t) {
  lt_dtype d = lt_tensor_dtype(t);
  if (d != LT_FLOAT32 && d != LT_FLOAT64)
    return lt_error("%s: argument '%s' must be float32 or float64, got %s", op, arg, lt_dtype_name(d));
  return 0;
}

int lt_meta_int_tuple(const char *op, const char *arg, lt_intlist l, int n, int64_t lo, const int64_t *dflt,
                      int64_t *v) {
  if (l.n <= 0 && dflt) {
    for (int i = 0; i < n; i++) v[i] = dflt[i];
    return 0;
  }
  if (l.n != 1 && l.n != n)
    return lt_error("%s: argument '%s' must have 1 or %d entries, got %d", op, arg, n, l.n < 0 ? 0 : l.n);
  for (int i = 0; i < n; i++) {
    v[i] = l.v[l.n == 1 ? 0 : i];
    if (v[i] < lo) return lt_error("%s: argument '%s' must be %s, got %lld", op, arg,
                                   lo > 0 ? "positive" : "non-negative", (long long)v[i]);
  }
  return 0;
}

int lt_meta_widen_1d(const char *op, const char *arg, lt_intlist l, int64_t fill, bool optional, int64_t *v) {
  if (optional && l.n <= 0) return 0;
  if (l.n != 1) return lt_error("%s: argument '%s' must have 1 entry, got %d", op, arg, l.n < 0 ? 0 : l.n);
  v[0] = fill; v[1] = l.v[0];
  return 0;
}

int lt_meta_check_1d_input(const char *op, int ndim) {
  if (ndim != 2 && ndim != 3)
    return lt_error("%s: argument 'input' must be 2-D (C, L) or 3-D (N, C, L), got %d-D", op, ndim);
  return 0;
}

/* the largest finite value of a floating dtype */
static double float_max(lt_dtype dt) {
  switch (dt) {
    case LT_FLOAT64: return 1.7976931348623157e308;
    case LT_FLOAT32: return 3.4028234663852886e38;
    case LT_FLOAT16: return 65504.0;
    default: return 3.3895313892515355e38;   /* bfloat16 */
  }
}

void lt_meta_nan_to_num_values(lt_dtype dt, lt_scalar nan, lt_scalar posinf, lt_scalar neginf, double v[3]) {
  double mx = float_max(dt);
  v[0] = lt_scalar_is_none(nan) ? 0.0 : lt_scalar_to_double(nan);
  v[1] = lt_scalar_is_none(posinf) ? mx : lt_scalar_to_double(posinf);
  v[2] = lt_scalar_is_none(neginf) ? -mx : lt_scalar_to_double(neginf);
  /* out-of-range replacements saturate rather than overflow the conversion */
  for (int k = 0; k < 3; k++) v[k] = v[k] > mx ? mx : v[k] < -mx ? -mx : v[k];
}
