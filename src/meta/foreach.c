/*
** foreach.c — the foreach and fused optimizer ops' argument checks (meta/foreach.h).
*/
#include "meta/foreach.h"
#include "core/error.h"

int lt_meta_foreach_lists(const char *op, int nbuf, lt_tensor *const *const *lists, const int *counts,
                          const char *const *names) {
  int n = counts[0];
  for (int b = 1; b < nbuf; b++)
    if (counts[b] != n)
      return lt_error("%s: argument '%s' has %d tensors, but '%s' has %d", op, names[b], counts[b], names[0], n);
  for (int i = 0; i < n; i++) {
    lt_tensor *p = lists[0][i];
    if (!p) return lt_error("%s: argument '%s' element %d is missing", op, names[0], i + 1);
    if (p->dtype != LT_FLOAT64 && p->dtype != LT_FLOAT32)
      return lt_error("%s: argument '%s' element %d must be float32 or float64, got %s", op, names[0], i + 1,
                      lt_dtype_name((lt_dtype)p->dtype));
    for (int b = 1; b < nbuf; b++) {
      lt_tensor *t = lists[b][i];
      if (!t) return lt_error("%s: argument '%s' element %d is missing", op, names[b], i + 1);
      if (t->dtype != p->dtype)
        return lt_error("%s: argument '%s' element %d has dtype %s, expected %s like '%s'", op, names[b], i + 1,
                        lt_dtype_name((lt_dtype)t->dtype), lt_dtype_name((lt_dtype)p->dtype), names[0]);
      if (!lt_tensor_same_shape(t, p)) {
        char s1[128], s2[128];
        lt_shape_str(t->ndim, t->sizes, s1, sizeof s1);
        lt_shape_str(p->ndim, p->sizes, s2, sizeof s2);
        return lt_error("%s: argument '%s' element %d has shape %s, expected %s like '%s'", op, names[b], i + 1, s1,
                        s2, names[0]);
      }
      if (!lt_device_eq(t->storage->device, p->storage->device))
        return lt_error("%s: argument '%s' element %d is on another device than '%s'", op, names[b], i + 1, names[0]);
    }
  }
  return 0;
}

int lt_meta_foreach_scalars(const char *op, const char *arg, lt_tensor *const *ts, int ts_n, int n) {
  if (ts_n != n) return lt_error("%s: argument '%s' has %d tensors, but 'params' has %d", op, arg, ts_n, n);
  for (int i = 0; i < n; i++)
    if (!ts[i] || ts[i]->numel != 1)
      return lt_error("%s: argument '%s' element %d must be a 1-element tensor", op, arg, i + 1);
  return 0;
}

int lt_meta_foreach_norm(lt_tensor *const *ts, int n, lt_dtype *dt) {
  if (n == 0) return lt_error("_foreach_norm: argument 'tensors' is an empty list");
  *dt = LT_FLOAT32;
  for (int i = 0; i < n; i++) {
    if (!ts[i]) return lt_error("_foreach_norm: argument 'tensors' element %d is missing", i + 1);
    if (ts[i]->dtype == LT_FLOAT64) *dt = LT_FLOAT64;
    else if (ts[i]->dtype != LT_FLOAT32)
      return lt_error("_foreach_norm: argument 'tensors' element %d must be float32 or float64, got %s", i + 1,
                      lt_dtype_name((lt_dtype)ts[i]->dtype));
  }
  return 0;
}
