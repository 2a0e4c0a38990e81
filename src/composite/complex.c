/*
** complex.c — the composite ops of src/ops/complex.lua: conj (eager: the
** conjugate is computed by conj_physical; lutorch has no lazy conjugate bit),
** resolve_conj and is_conj, which follow from that choice; vdot; adjoint (mH).
*/
#include "core/tensor.h"
#include "lt_ops.h"

lt_tensor *lt_conj_impl(lt_tensor *self) {
  if (!lt_dtype_is_complex((lt_dtype)self->dtype)) { lt_tensor_retain(self); return self; }   /* as PyTorch */
  return lt_conj_physical(self);
}

lt_tensor *lt_resolve_conj_impl(lt_tensor *self) {
  lt_tensor_retain(self);
  return self;
}

int lt_is_conj_impl(lt_tensor *self) {
  (void)self;
  return 0;
}

lt_tensor *lt_vdot_impl(lt_tensor *self, lt_tensor *other) {
  lt_tensor *c = lt_conj(self);
  if (!c) return NULL;
  lt_tensor *r = lt_dot(c, other);
  lt_tensor_release(c);
  return r;
}

lt_tensor *lt_adjoint_impl(lt_tensor *self) {
  if (self->ndim < 2)
    return lt_error_null("adjoint: the tensor must have at least 2 dims, got %d", self->ndim);
  lt_tensor *t = lt_transpose(self, -2, -1);
  if (!t) return NULL;
  lt_tensor *r = lt_conj(t);
  lt_tensor_release(t);
  return r;
}
