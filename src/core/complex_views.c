/*
** complex_views.c — real, imag, view_as_real and view_as_complex: a complex
** element is two adjacent reals, so each is the same storage seen in the
** other dtype with the strides (and offset) doubled or halved, as PyTorch's.
*/
#include "core/complex_views.h"

/* self's complex storage seen as its real dtype: part 0 the real parts, 1 the
** imaginary ones; `pair` adds the trailing dim of 2 (view_as_real) */
static lt_tensor *real_view(lt_tensor *self, int part, bool pair) {
  int64_t sizes[LT_MAX_DIMS], strides[LT_MAX_DIMS];
  int nd = self->ndim;
  for (int d = 0; d < nd; d++) { sizes[d] = self->sizes[d]; strides[d] = self->strides[d] * 2; }
  if (pair) { sizes[nd] = 2; strides[nd] = 1; nd++; }
  return lt_tensor_new_view(self->storage, lt_dtype_to_real((lt_dtype)self->dtype), self->offset * 2 + part, nd,
                            sizes, strides);
}

lt_tensor *lt_core_real(lt_tensor *self) {
  if (!lt_dtype_is_complex((lt_dtype)self->dtype))   /* PyTorch: the real part of a real tensor is itself */
    return lt_tensor_alias(self, self->offset, self->ndim, self->sizes, self->strides);
  return real_view(self, 0, false);
}

lt_tensor *lt_core_imag(lt_tensor *self) {
  if (!lt_dtype_is_complex((lt_dtype)self->dtype))
    return lt_error_null("imag: not implemented for tensors with non-complex dtypes (got %s)",
                         lt_dtype_name((lt_dtype)self->dtype));
  return real_view(self, 1, false);
}

lt_tensor *lt_core_view_as_real(lt_tensor *self) {
  if (!lt_dtype_is_complex((lt_dtype)self->dtype))
    return lt_error_null("view_as_real: only supported for complex tensors (got %s)", lt_dtype_name((lt_dtype)self->dtype));
  if (self->ndim + 1 > LT_MAX_DIMS)
    return lt_error_null("view_as_real: a tensor of %d dims has no room for the trailing dim", self->ndim);
  return real_view(self, 0, true);
}

lt_tensor *lt_core_view_as_complex(lt_tensor *self) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (dt != LT_FLOAT32 && dt != LT_FLOAT64)
    return lt_error_null("view_as_complex: only supported for float32 and float64 tensors, got %s", lt_dtype_name(dt));
  int nd = self->ndim;
  if (nd == 0 || self->sizes[nd - 1] != 2)
    return lt_error_null("view_as_complex: the tensor must have a last dimension of size 2");
  if (self->strides[nd - 1] != 1)
    return lt_error_null("view_as_complex: the tensor must have a last dimension with stride 1");
  for (int d = 0; d < nd - 1; d++)
    if (self->strides[d] % 2 != 0)
      return lt_error_null("view_as_complex: the tensor must have a stride divisible by 2 for all but the last dimension");
  if (self->offset % 2 != 0)
    return lt_error_null("view_as_complex: the tensor must have a storage offset divisible by 2");
  int64_t strides[LT_MAX_DIMS];
  for (int d = 0; d < nd - 1; d++) strides[d] = self->strides[d] / 2;
  return lt_tensor_new_view(self->storage, lt_dtype_to_complex(dt), self->offset / 2, nd - 1, self->sizes, strides);
}
