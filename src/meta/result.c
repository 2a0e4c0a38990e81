/*
** result.c — the tensor an op writes its result into: out= or a new one.
*/
#include "meta/meta.h"

lt_tensor *lt_meta_result(const char *op, lt_tensor *out, lt_dtype dt, lt_device dev, int ndim,
                          const int64_t *sizes) {
  if (!out) return lt_tensor_new(dt, dev, ndim, sizes);
  if (!lt_device_eq(lt_tensor_device(out), dev)) return lt_error_null("%s: argument 'out' is on another device", op);
  if (lt_tensor_resize_out(op, out, ndim, sizes) < 0) return NULL;
  lt_tensor_retain(out);
  return out;
}
