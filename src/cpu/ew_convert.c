/*
** ew_convert.c — dtype conversions (to, the float()/long()/... family),
** clone, and the in-place copy_, fill_, zero_.
*/
#include <stdio.h>
#include "cpu/ew.h"
#include "lt_ops.h"
#include "autograd/autograd.h"

lt_tensor *lt_type_as_impl(lt_tensor *self, lt_tensor *other) {
  return lt_to(self, other->dtype, false);
}

#define CONVERT(NAME, DT) \
lt_tensor *lt_to_##NAME##_impl(lt_tensor *self) { return lt_to(self, DT, false); }
CONVERT(float, LT_FLOAT32) CONVERT(double, LT_FLOAT64) CONVERT(half, LT_FLOAT16)
CONVERT(bfloat16, LT_BFLOAT16) CONVERT(long, LT_INT64) CONVERT(int, LT_INT32)
CONVERT(short, LT_INT16) CONVERT(char, LT_INT8) CONVERT(byte, LT_UINT8) CONVERT(bool, LT_BOOL)

lt_tensor *lt_cpu_clone(lt_tensor *self) {
  return lt_tensor_clone_as(self, (lt_dtype)self->dtype);
}

lt_tensor *lt_cpu_copy_(lt_tensor *self, lt_tensor *src) {
  if (lt_tensor_copy_(self, src) < 0) {
    char m[256];
    snprintf(m, sizeof m, "%s", lt_error_message());
    if (strncmp(m, "copy_:", 6) != 0) return lt_error_null("copy_: %s", m);
    return NULL;
  }
  lt_tensor_retain(self);
  return self;
}

lt_tensor *lt_cpu_fill_(lt_tensor *self, lt_scalar value) {
  if (lt_tensor_fill_(self, value) < 0) return NULL;
  lt_tensor_retain(self);
  return self;
}

lt_tensor *lt_cpu_zero_(lt_tensor *self) {
  return lt_cpu_fill_(self, lt_scalar_int(0));
}

/* to() returns self itself when nothing changes, so only the converting part
** (_to_copy) is an op with a derivative; a conversion to a non-floating dtype
** is not differentiable and is made from a detached alias. */
lt_tensor *lt_to_impl(lt_tensor *self, int dtype, bool copy) {
  if (dtype < 0 || dtype >= LT_NUM_DTYPES) return lt_error_null("to: argument 'dtype' is not a dtype");
  if (dtype == self->dtype && !copy) { lt_tensor_retain(self); return self; }
  if (self->requires_grad && !lt_dtype_is_float((lt_dtype)dtype)) {
    lt_tensor *d = lt_detach(self);
    if (!d) return NULL;
    lt_tensor *r = lt__to_copy(d, dtype);
    lt_tensor_release(d);
    return r;
  }
  return lt__to_copy(self, dtype);
}

lt_tensor *lt_cpu__to_copy(lt_tensor *self, int dtype) {
  if (dtype < 0 || dtype >= LT_NUM_DTYPES) return lt_error_null("to: argument 'dtype' is not a dtype");
  return lt_tensor_clone_as(self, (lt_dtype)dtype);
}
