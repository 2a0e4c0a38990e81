/*
** copy.c — strided copy with broadcasting and dtype conversion, and fill.
** The loops are the cast loops of ew_cast.c (one per dtype pair); the walk
** over dims is lt_iter's (dims merged where both operands are contiguous,
** parallel above the elementwise grain).
*/
#include <string.h>
#include "tensor.h"
#include "iter.h"
#include "parallel.h"

typedef struct copy1d { char *dst; const char *src; int64_t st[2]; lt_ew_loop fn; } copy1d;

static void copy1d_chunk(void *p, int64_t begin, int64_t end) {
  copy1d *c = p;
  char *d[2] = {c->dst + begin * c->st[0], (char *)c->src + begin * c->st[1]};
  c->fn(d, c->st, end - begin, NULL);
}

/* true when writing dst could clobber src elements not yet read */
static bool overlaps(const lt_tensor *dst, const lt_tensor *src, const int64_t *sst) {
  if (dst->storage != src->storage) return false;
  if (lt_tensor_data(dst) != lt_tensor_data(src)) return true;
  for (int d = 0; d < dst->ndim; d++)
    if (dst->sizes[d] != 1 && dst->strides[d] != sst[d]) return true;
  return false;
}

int lt_tensor_copy_(lt_tensor *dst, const lt_tensor *src) {
  if (!lt_device_eq(lt_tensor_device(dst), lt_tensor_device(src)))
    return lt_error("copy_: cross-device copies need the device backend");
  int nd = dst->ndim;
  int64_t st[2][LT_MAX_DIMS];
  if (lt_expand_strides("copy_", src, nd, dst->sizes, st[1]) < 0) return -1;
  if (dst->numel == 0) return 0;
  if (src->numel > 1 && overlaps(dst, src, st[1])) {
    lt_tensor *tmp = lt_tensor_clone_as(src, (lt_dtype)src->dtype);
    if (!tmp) return -1;
    int r = lt_tensor_copy_(dst, tmp);
    lt_tensor_release(tmp);
    return r;
  }
  lt_dtype ddt = (lt_dtype)dst->dtype, sdt = (lt_dtype)src->dtype;
  int64_t des = (int64_t)lt_dtype_size(ddt), ses = (int64_t)lt_dtype_size(sdt);
  lt_ew_loop fn = lt_cast_loop(ddt, sdt);
  bool dc = lt_tensor_is_contiguous(dst);
  if (dc && (src->numel == 1 || (src->numel == dst->numel && lt_tensor_is_contiguous(src)))) {
    copy1d c = {lt_tensor_data(dst), lt_tensor_data(src), {des, src->numel == 1 ? 0 : ses}, fn};
    if (dst->numel < 2 * LT_GRAIN_ELEMENTWISE) copy1d_chunk(&c, 0, dst->numel);
    else lt_parallel_for(dst->numel, LT_GRAIN_ELEMENTWISE, copy1d_chunk, &c);
    return 0;
  }
  for (int d = 0; d < nd; d++) { st[0][d] = dst->strides[d] * des; st[1][d] *= ses; }
  char *data[2] = {lt_tensor_data(dst), lt_tensor_data(src)};
  lt_iter it;
  lt_iter_init(&it, 2, nd, dst->sizes, data, (const int64_t (*)[LT_MAX_DIMS])st);
  lt_iter_run(&it, fn, NULL, 0);
  return 0;
}

int lt_tensor_fill_(lt_tensor *dst, lt_scalar v) {
  /* the value converted once into dst's dtype, then stored everywhere */
  _Alignas(16) char slot[16], val[16];
  lt_dtype dt = (lt_dtype)dst->dtype;
  lt_dtype sdt = v.type == LT_SCALAR_FLOAT ? LT_FLOAT64 : v.type == LT_SCALAR_BOOL ? LT_BOOL : LT_INT64;
  if (v.type == LT_SCALAR_FLOAT) memcpy(val, &v.v.f, sizeof(double));
  else if (v.type == LT_SCALAR_BOOL) val[0] = v.v.i != 0;
  else memcpy(val, &v.v.i, sizeof(int64_t));
  char *d[2] = {slot, val};
  int64_t s[2] = {0, 0};
  lt_cast_loop(dt, sdt)(d, s, 1, NULL);
  if (dst->numel == 0) return 0;
  lt_ew_loop fn = lt_cast_loop(dt, dt);
  int64_t des = (int64_t)lt_dtype_size(dt);
  if (lt_tensor_is_contiguous(dst)) {
    copy1d c = {lt_tensor_data(dst), slot, {des, 0}, fn};
    if (dst->numel < 2 * LT_GRAIN_ELEMENTWISE) copy1d_chunk(&c, 0, dst->numel);
    else lt_parallel_for(dst->numel, LT_GRAIN_ELEMENTWISE, copy1d_chunk, &c);
    return 0;
  }
  int64_t st[2][LT_MAX_DIMS];
  for (int k = 0; k < dst->ndim; k++) { st[0][k] = dst->strides[k] * des; st[1][k] = 0; }
  char *data[2] = {lt_tensor_data(dst), slot};
  lt_iter it;
  lt_iter_init(&it, 2, dst->ndim, dst->sizes, data, (const int64_t (*)[LT_MAX_DIMS])st);
  lt_iter_run(&it, fn, NULL, 0);
  return 0;
}
