/*
** copy_ops.c — the device-neutral kernels of clone, copy_, fill_, zero_ and
** _to_copy: each is the core's copy or fill (src/core/backend.c), which
** hands the loop to the tensor's backend, so one kernel serves every backend
** (declared with `kernels = {any = ...}`).
*/
#include <stdio.h>
#include <string.h>
#include "core/copy_ops.h"
#include "core/backend.h"

lt_tensor *lt_core_clone(lt_tensor *self) {
  return lt_tensor_clone_as(self, (lt_dtype)self->dtype);
}

/* Complex to real loses the imaginary part. PyTorch warns and drops it; we
** have no warnings, and a silent loss is worse than an error that names the
** explicit spellings. */
static int refuse_complex_to_real(const char *op, lt_dtype from, lt_dtype to) {
  if (!lt_dtype_is_complex(from) || lt_dtype_is_complex(to)) return 0;
  return lt_error("%s: casting %s to %s would discard the imaginary part; take x.real, x:abs() "
                  "or x:angle() first", op, lt_dtype_name(from), lt_dtype_name(to));
}

lt_tensor *lt_core_copy_(lt_tensor *self, lt_tensor *src) {
  if (refuse_complex_to_real("copy_", (lt_dtype)src->dtype, (lt_dtype)self->dtype) < 0) return NULL;
  if (lt_tensor_copy_(self, src) < 0) {
    char m[256];
    snprintf(m, sizeof m, "%s", lt_error_message());
    if (strncmp(m, "copy_:", 6) != 0) return lt_error_null("copy_: %s", m);
    return NULL;
  }
  lt_tensor_retain(self);
  return self;
}

lt_tensor *lt_core_fill_(lt_tensor *self, lt_scalar value) {
  if (lt_tensor_fill_(self, value) < 0) return NULL;
  lt_tensor_retain(self);
  return self;
}

lt_tensor *lt_core_zero_(lt_tensor *self) {
  return lt_core_fill_(self, lt_scalar_int(0));
}

lt_tensor *lt_core__to_copy(lt_tensor *self, int dtype) {
  if (dtype < 0 || dtype >= LT_NUM_DTYPES) return lt_error_null("to: argument 'dtype' is not a dtype");
  if (refuse_complex_to_real("to", (lt_dtype)self->dtype, (lt_dtype)dtype) < 0) return NULL;
  return lt_tensor_clone_as(self, (lt_dtype)dtype);
}

lt_tensor *lt_core__to_device(lt_tensor *self, lt_device device, bool non_blocking) {
  if (device.type < 0) device = lt_device_cpu();
  /* a kernel's result is never self (autograd hangs its node on it): same device, a clone */
  if (lt_device_eq(lt_tensor_device(self), device)) return lt_tensor_clone_as(self, (lt_dtype)self->dtype);
  return lt_tensor_to_device_nb(self, device, non_blocking);
}
