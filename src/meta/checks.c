/*
** checks.c — argument checks shared by kernels and composites.
*/
#include "meta/meta.h"

int lt_meta_check_prob(const char *op, const char *arg, double p) {
  if (!(p >= 0 && p <= 1)) return lt_error("%s: argument '%s' must be between 0 and 1, got %g", op, arg, p);
  return 0;
}

int lt_meta_check_float(const char *op, const char *arg, const lt_tensor *t) {
  if (!lt_dtype_is_float((lt_dtype)t->dtype))
    return lt_error("%s: argument '%s' must be a floating point tensor, got %s", op, arg,
                    lt_dtype_name((lt_dtype)t->dtype));
  return 0;
}
