/*
** half.c — float32 detours for the 16-bit float kernels (half.h).
*/
#include "cpu/half.h"

int lt_half_in(lt_tensor **dst, lt_tensor *const *src, int n) {
  for (int i = 0; i < n; i++) {
    dst[i] = NULL;
    if (src[i] && !(dst[i] = lt_tensor_to_dtype_contig(src[i], LT_FLOAT32))) {
      lt_half_release(dst, i);
      return -1;
    }
  }
  return 0;
}

void lt_half_release(lt_tensor **t, int n) {
  for (int i = 0; i < n; i++) { lt_tensor_release(t[i]); t[i] = NULL; }
}

lt_tensor *lt_half_out(lt_tensor *r, lt_dtype dt) {
  if (!r) return NULL;
  lt_tensor *h = lt_tensor_clone_as(r, dt);
  lt_tensor_release(r);
  return h;
}
