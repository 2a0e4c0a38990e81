/*
** promote.c — PyTorch's type promotion over the inputs of an op
** (result_type) and its casting rule (can_cast): shared by every backend
** and by composites, so they agree on the dtype of a result.
*/
#include "core/tensor.h"

static int promote_opt(int a, int b) {
  if (a < 0) return b;
  if (b < 0) return a;
  return (int)lt_promote_types((lt_dtype)a, (lt_dtype)b);
}

static bool is_flt(int t) { return t >= 0 && lt_dtype_is_float((lt_dtype)t); }

/* the result of a higher-priority class `hi` after meeting a lower one:
** the lower class only matters when it is of a higher category */
static bool is_cx(int t) { return t >= 0 && lt_dtype_is_complex((lt_dtype)t); }

static int combine(int hi, int lo) {
  if (is_cx(hi)) return hi;
  if (is_cx(lo)) {   /* a float keeps its width, complexified; an integer takes lo */
    if (is_flt(hi)) return (int)lt_dtype_to_complex((lt_dtype)hi);
    return lo;
  }
  if (is_flt(hi)) return hi;
  if (hi == LT_BOOL || is_flt(lo)) return promote_opt(hi, lo);
  return hi >= 0 ? hi : lo;
}

int lt_result_type(int n, lt_tensor *const *ts) {
  int dim = -1, zero = -1, wrapped = -1;
  for (int i = 0; i < n; i++) {
    const lt_tensor *t = ts[i];
    if (!t) continue;
    int dt = t->dtype;
    if (t->is_wrapped_number) {
      if (lt_dtype_is_float((lt_dtype)dt)) dt = lt_get_default_dtype();
      else if (lt_dtype_is_complex((lt_dtype)dt)) dt = lt_dtype_to_complex(lt_get_default_dtype());
      wrapped = promote_opt(wrapped, dt);
    } else if (t->ndim == 0) {
      zero = promote_opt(zero, dt);
    } else {
      dim = promote_opt(dim, dt);
    }
  }
  return combine(dim, combine(zero, wrapped));
}

bool lt_can_cast(lt_dtype from, lt_dtype to) {
  if (lt_dtype_is_complex(from) && !lt_dtype_is_complex(to)) return false;
  if (lt_dtype_is_float(from) && !lt_dtype_is_float(to)) return false;
  if (from != LT_BOOL && to == LT_BOOL) return false;
  return true;
}
