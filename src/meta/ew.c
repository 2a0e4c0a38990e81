/*
** ew.c — an elementwise op's result geometry (meta/ew.h).
*/
#include <string.h>
#include "meta/ew.h"

int lt_meta_ew_shape(const char *op, lt_tensor *const *in, int n, int64_t *shape) {
  int nd = in[0]->ndim;
  memcpy(shape, in[0]->sizes, sizeof(int64_t) * (size_t)nd);
  for (int k = 1; k < n; k++) {
    const lt_tensor *t = in[k];
    if (t->ndim == nd && memcmp(t->sizes, shape, sizeof(int64_t) * (size_t)nd) == 0) continue;
    int64_t tmp[LT_MAX_DIMS];
    nd = lt_broadcast_shapes(op, nd, shape, t->ndim, t->sizes, tmp);
    if (nd < 0) return -1;
    memcpy(shape, tmp, sizeof(int64_t) * (size_t)nd);
  }
  return nd;
}

lt_tensor *lt_meta_ew_new(lt_dtype dt, int nd, const int64_t *shape, lt_tensor *const *in, int n) {
  for (int k = 0; k < n; k++)
    if (!in[k]->is_wrapped_number) return lt_tensor_new(dt, lt_tensor_device(in[k]), nd, shape);
  lt_tensor *r = lt_tensor_new(dt, lt_device_cpu(), nd, shape);
  if (r && n > 0 && nd == 0) { r->is_wrapped_number = true; r->keys &= ~LT_BACKEND_KEYS; }
  return r;
}

lt_tensor *lt_meta_ew_result(lt_dtype dt, int nd, const int64_t *shape, lt_tensor *const *in, int n) {
  for (int k = 0; k < n; k++) {
    const lt_tensor *t = in[k];
    if (t->ndim != nd || t->numel <= 1 || memcmp(t->sizes, shape, sizeof(int64_t) * (size_t)nd) != 0) continue;
    if (lt_tensor_is_contiguous(t)) break;
    /* the dims of t by stride, smallest first: dense when each stride is the product of the sizes below */
    int perm[LT_MAX_DIMS], m = 0;
    for (int d = 0; d < nd; d++) if (shape[d] != 1) perm[m++] = d;
    for (int i = 1; i < m; i++)
      for (int j = i; j > 0 && t->strides[perm[j - 1]] > t->strides[perm[j]]; j--) {
        int x = perm[j]; perm[j] = perm[j - 1]; perm[j - 1] = x;
      }
    int64_t want = 1;
    bool dense = true;
    for (int i = 0; i < m && dense; i++) {
      dense = t->strides[perm[i]] == want;
      want *= shape[perm[i]];
    }
    if (!dense) break;
    lt_storage *s = lt_storage_new(lt_tensor_device(t), (size_t)t->numel * lt_dtype_size(dt));
    if (!s) return NULL;
    lt_tensor *r = lt_tensor_new_view(s, dt, 0, nd, shape, t->strides);
    lt_storage_release(s);
    return r;
  }
  return lt_meta_ew_new(dt, nd, shape, in, n);
}
