/*
** convert.c — the dtype conversions written with other ops: to, type_as and
** the float()/long()/... family. Only _to_copy converts; to() returns self
** when nothing changes.
*/
#include "lt_ops.h"
#include "autograd/autograd.h"   /* lt_detach */

lt_tensor *lt_type_as_impl(lt_tensor *self, lt_tensor *other) {
  return lt_to(self, other->dtype, false);
}

#define CONVERT(NAME, DT) \
lt_tensor *lt_to_##NAME##_impl(lt_tensor *self) { return lt_to(self, DT, false); }
CONVERT(float, LT_FLOAT32) CONVERT(double, LT_FLOAT64) CONVERT(half, LT_FLOAT16)
CONVERT(bfloat16, LT_BFLOAT16) CONVERT(long, LT_INT64) CONVERT(int, LT_INT32)
CONVERT(short, LT_INT16) CONVERT(char, LT_INT8) CONVERT(byte, LT_UINT8) CONVERT(bool, LT_BOOL)

/* to() returns self itself when nothing changes, so only the converting part
** (_to_copy) is an op with a derivative; a conversion to a dtype autograd does
** not follow (integers, bool) is made from a detached alias. Real to complex is
** differentiable, as in PyTorch (the real input's gradient is the real part). */
lt_tensor *lt_to_impl(lt_tensor *self, int dtype, bool copy) {
  if (dtype < 0 || dtype >= LT_NUM_DTYPES) return lt_error_null("to: argument 'dtype' is not a dtype");
  if (dtype == self->dtype && !copy) { lt_tensor_retain(self); return self; }
  if (self->requires_grad && !lt_dtype_is_differentiable((lt_dtype)dtype)) {
    lt_tensor *d = lt_detach(self);
    if (!d) return NULL;
    lt_tensor *r = lt__to_copy(d, dtype);
    lt_tensor_release(d);
    return r;
  }
  return lt__to_copy(self, dtype);
}

/* to(device[, dtype]): the dtype conversion first (on the source device), then the move */
lt_tensor *lt_to_device_impl(lt_tensor *self, lt_device device, int dtype, bool copy, bool non_blocking) {
  if (dtype >= LT_NUM_DTYPES) return lt_error_null("to: argument 'dtype' is not a dtype");
  bool move = device.type >= 0 && !lt_device_eq(device, lt_tensor_device(self));
  lt_tensor *c = dtype >= 0 ? lt_to(self, dtype, copy && !move) : (lt_tensor_retain(self), self);
  if (!c) return NULL;
  if (!move) {
    if (copy && c == self) { lt_tensor_release(c); return lt_clone(self); }
    return c;
  }
  lt_tensor *r = lt__to_device(c, device, non_blocking);
  lt_tensor_release(c);
  return r;
}

lt_tensor *lt_to_cuda_impl(lt_tensor *self, lt_device device, bool non_blocking) {
  lt_device d = {LT_DEV_CUDA, (int8_t)lt_device_current(LT_DEV_CUDA)};   /* "cuda": the current device */
  if (device.type >= 0) {
    if (device.type != LT_DEV_CUDA) return lt_error_null("cuda: argument 'device' must be a cuda device");
    d = device;
  }
  return lt_to_device_impl(self, d, -1, false, non_blocking);
}

lt_tensor *lt_to_cpu_impl(lt_tensor *self) {
  return lt_to_device_impl(self, lt_device_cpu(), -1, false, false);
}
