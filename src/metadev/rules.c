/*
** rules.c — the shape functions of the op families (metadev.h), which the
** generated meta kernels call. Each checks what the CPU's kernel checks
** before it touches data, through the same functions of src/meta where the
** CPU has them, and makes a meta result.
*/
#include <string.h>
#include "metadev/metadev.h"
#include "meta/meta.h"
#include "meta/ew.h"
#include "meta/reduce.h"
#include "meta/creation.h"

lt_tensor *lt_metadev_result(const char *op, lt_tensor *out, lt_dtype dt, int ndim, const int64_t *sizes) {
  if (out && !lt_can_cast(dt, (lt_dtype)out->dtype))
    return lt_error_null("%s: result type %s can't be cast to the desired output type %s", op,
                         lt_dtype_traits_table[dt].t7name, lt_dtype_traits_table[out->dtype].t7name);
  return lt_meta_result(op, out, dt, lt_metadev_device(), ndim, sizes);
}

static lt_dtype floating(lt_dtype dt) {
  return lt_dtype_is_float(dt) || lt_dtype_is_complex(dt) ? dt : lt_get_default_dtype();
}

lt_tensor *lt_metadev_pointwise(const char *op, lt_tensor *const *ts, int n, int mode, int dtype, lt_tensor *out) {
  lt_tensor *in[8];
  int m = 0;
  for (int k = 0; k < n && m < 8; k++) if (ts[k]) in[m++] = ts[k];
  if (m == 0) return lt_error_null("%s: no tensor argument", op);
  int64_t shape[LT_MAX_DIMS];
  int nd = lt_meta_ew_shape(op, in, m, shape);
  if (nd < 0) return NULL;
  lt_dtype dt;
  switch (mode) {
    case LT_MD_FLOAT: dt = floating((lt_dtype)lt_result_type(m, in)); break;
    case LT_MD_BOOL: dt = LT_BOOL; break;
    case LT_MD_SELF: dt = (lt_dtype)in[0]->dtype; break;
    default: dt = (lt_dtype)lt_result_type(m, in); break;
  }
  if (dtype >= 0) dt = (lt_dtype)dtype;
  if (out) return lt_metadev_result(op, out, dt, nd, shape);
  return lt_meta_ew_result(dt, nd, shape, in, m);
}

lt_tensor *lt_metadev_like(const char *op, lt_tensor *self, int dtype, lt_tensor *out) {
  lt_dtype dt = dtype >= 0 ? (lt_dtype)dtype : (lt_dtype)self->dtype;
  /* the CPU's kernels of this family (tril, masked_fill, scatter, ...) write a new
  ** contiguous tensor whatever self's layout: so does meta */
  return lt_metadev_result(op, out, dt, self->ndim, self->sizes);
}

lt_tensor *lt_metadev_same(const char *op, lt_tensor *self) {
  (void)op;
  lt_tensor_retain(self);
  return self;
}

/* the dtype of a reduction's (first) result */
static int reduce_dtype(const char *op, const lt_tensor *self, int mode, int dtype, lt_dtype *rdt) {
  lt_dtype in = (lt_dtype)self->dtype;
  switch (mode) {
    case LT_MD_SUM: return lt_meta_reduce_dtype(op, in, dtype, false, rdt);
    case LT_MD_MEAN: return lt_meta_reduce_dtype(op, in, dtype, true, rdt);
    case LT_MD_INDEX: *rdt = LT_INT64; return 0;
    case LT_MD_BOOL: *rdt = in == LT_UINT8 ? LT_UINT8 : LT_BOOL; return 0;
    case LT_MD_FLOAT:
      if (dtype >= 0) { *rdt = (lt_dtype)dtype; return 0; }
      if (!lt_dtype_is_float(in) && !lt_dtype_is_complex(in))
        return lt_error("%s: expected a floating point or complex tensor as input, got %s", op,
                        lt_dtype_traits_table[in].t7name);
      *rdt = lt_dtype_is_complex(in) ? lt_dtype_to_real(in) : in;
      return 0;
    default: *rdt = dtype >= 0 ? (lt_dtype)dtype : in; return 0;
  }
}

lt_tensor *lt_metadev_reduce(const char *op, lt_tensor *self, lt_intlist dims, bool keepdim, int mode, int dtype,
                             lt_tensor *out) {
  bool mask[LT_MAX_DIMS];
  int64_t shape[LT_MAX_DIMS];
  int nd;
  lt_dtype rdt;
  if (lt_meta_reduce(op, self->ndim, self->sizes, dims, keepdim, mask, &nd, shape) < 0) return NULL;
  if (reduce_dtype(op, self, mode, dtype, &rdt) < 0) return NULL;
  return lt_metadev_result(op, out, rdt, nd, shape);
}

int lt_metadev_reduce2(const char *op, lt_tensor *self, lt_intlist dims, bool keepdim, int mode, lt_tensor **a,
                       lt_tensor **b) {
  bool mask[LT_MAX_DIMS];
  int64_t shape[LT_MAX_DIMS];
  int nd;
  lt_dtype rdt;
  *a = *b = NULL;
  if (lt_meta_reduce(op, self->ndim, self->sizes, dims, keepdim, mask, &nd, shape) < 0) return -1;
  if (reduce_dtype(op, self, mode, -1, &rdt) < 0) return -1;
  *a = lt_tensor_new(rdt, lt_metadev_device(), nd, shape);
  *b = lt_tensor_new(mode == LT_MD_SELF ? LT_INT64 : rdt, lt_metadev_device(), nd, shape);
  if (*a && *b) return 0;
  lt_tensor_release(*a); lt_tensor_release(*b);
  *a = *b = NULL;
  return -1;
}

int lt_metadev_scan2(const char *op, lt_tensor *self, int64_t dim, lt_tensor **a, lt_tensor **b) {
  *a = *b = NULL;
  if (lt_wrap_dim(op, dim, self->ndim) < 0) return -1;
  *a = lt_tensor_new((lt_dtype)self->dtype, lt_metadev_device(), self->ndim, self->sizes);
  *b = lt_tensor_new(LT_INT64, lt_metadev_device(), self->ndim, self->sizes);
  if (*a && *b) return 0;
  lt_tensor_release(*a); lt_tensor_release(*b);
  *a = *b = NULL;
  return -1;
}

lt_tensor *lt_metadev_factory(const char *op, lt_intlist size, int dtype, int dflt, lt_device device) {
  (void)device;   /* the kernel runs at the meta key: the device is meta */
  if (size.n < 0) return lt_error_null("%s: argument 'size' is missing", op);
  return lt_meta_creation_new(op, size.n, size.v, dtype, dflt >= 0 ? dflt : (int)lt_get_default_dtype(),
                              lt_metadev_device());
}

lt_tensor *lt_metadev_factory_like(const char *op, lt_tensor *self, lt_intlist size, int dtype, lt_device device) {
  (void)device;
  if (size.n >= 0) return lt_meta_creation_new(op, size.n, size.v, dtype, self->dtype, lt_metadev_device());
  return lt_meta_creation_new(op, self->ndim, self->sizes, dtype, self->dtype, lt_metadev_device());
}

lt_tensor *lt_metadev_data_dependent(const char *op) {
  return lt_error_null("%s: cannot run on meta tensors: the shape of its result depends on the data "
                       "(Could not run 'aten::%s' with arguments from the 'Meta' backend)", op, op);
}
