/*
** fft.c — the checks and result shapes of the FFT primitives and of the
** complex constructors (meta/fft.h).
*/
#include <string.h>
#include "meta/fft.h"
#include "meta/meta.h"

int lt_meta_fft_dims(const char *op, const lt_tensor *t, lt_intlist dim, int64_t normalization, int *dims) {
  if (dim.n < 1) return lt_error("%s: argument 'dim' must name at least one dim", op);
  if (dim.n > t->ndim) return lt_error("%s: argument 'dim' names %d dims of a %d-dim tensor", op, dim.n, t->ndim);
  for (int i = 0; i < dim.n; i++) {
    int d = lt_wrap_dim(op, dim.v[i], t->ndim);
    if (d < 0) return -1;
    for (int j = 0; j < i; j++)
      if (dims[j] == d) return lt_error("%s: argument 'dim' repeats dim %d", op, d + 1);
    if (t->sizes[d] < 1)
      return lt_error("%s: argument 'self' has size 0 along dim %d, which has nothing to transform", op, d + 1);
    dims[i] = d;
  }
  if (normalization < 0 || normalization > 2)
    return lt_error("%s: argument 'normalization' must be 0, 1 or 2, got %lld", op, (long long)normalization);
  return dim.n;
}

/* self is complex, or the error naming op */
static int complex_self(const char *op, const lt_tensor *self) {
  if (lt_dtype_is_complex((lt_dtype)self->dtype)) return 0;
  return lt_error("%s: argument 'self' must be complex, got %s", op, lt_dtype_name((lt_dtype)self->dtype));
}

int lt_meta_fft_c2c(const char *op, const lt_tensor *self, lt_intlist dim, int64_t normalization, int *dims) {
  if (complex_self(op, self) < 0) return -1;
  return lt_meta_fft_dims(op, self, dim, normalization, dims);
}

int lt_meta_fft_r2c(const char *op, const lt_tensor *self, lt_intlist dim, int64_t normalization, int *dims,
                    int64_t *sizes) {
  if (self->dtype != LT_FLOAT32 && self->dtype != LT_FLOAT64)
    return lt_error("%s: argument 'self' must be float32 or float64, got %s", op, lt_dtype_name((lt_dtype)self->dtype));
  int nd = lt_meta_fft_dims(op, self, dim, normalization, dims);
  if (nd < 0) return -1;
  memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
  sizes[dims[nd - 1]] = self->sizes[dims[nd - 1]] / 2 + 1;
  return nd;
}

int lt_meta_fft_c2r(const char *op, const lt_tensor *self, lt_intlist dim, int64_t normalization,
                    int64_t last_dim_size, int *dims, int64_t *sizes) {
  if (complex_self(op, self) < 0) return -1;
  if (last_dim_size < 1)
    return lt_error("%s: argument 'last_dim_size' must be at least 1, got %lld", op, (long long)last_dim_size);
  int nd = lt_meta_fft_dims(op, self, dim, normalization, dims);
  if (nd < 0) return -1;
  int last = dims[nd - 1];
  if (self->sizes[last] != last_dim_size / 2 + 1)
    return lt_error("%s: argument 'self' has %lld values along dim %d; a real result of %lld needs %lld", op,
                    (long long)self->sizes[last], last + 1, (long long)last_dim_size, (long long)(last_dim_size / 2 + 1));
  memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
  sizes[last] = last_dim_size;
  return nd;
}

int lt_meta_fft_halfweight(const char *op, const lt_tensor *self, int64_t dim, int64_t n) {
  if (complex_self(op, self) < 0) return -1;
  int d = lt_wrap_dim(op, dim, self->ndim);
  if (d < 0) return -1;
  if (n < 1 || self->sizes[d] != n / 2 + 1)
    return lt_error("%s: argument 'n' (%lld) does not match %lld values along dim %d", op, (long long)n,
                    (long long)self->sizes[d], d + 1);
  return d;
}

int lt_meta_complex_parts(const char *op, const char *na, const char *nb, const lt_tensor *a, const lt_tensor *b) {
  lt_dtype da = (lt_dtype)a->dtype, db = (lt_dtype)b->dtype;
  if (da != LT_FLOAT32 && da != LT_FLOAT64)
    return lt_error("%s: argument '%s' must be a float32 or float64 tensor, got %s", op, na, lt_dtype_name(da));
  if (db != da)
    return lt_error("%s: expected '%s' and '%s' to have the same dtype, got %s and %s", op, na, nb, lt_dtype_name(da),
                    lt_dtype_name(db));
  return (int)lt_dtype_to_complex(da);
}
