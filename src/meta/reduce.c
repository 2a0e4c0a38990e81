/*
** reduce.c — reduction, scan and sort geometry and checks (reduce.h).
*/
#include <string.h>
#include "meta/reduce.h"

int lt_meta_reduce_mask(const char *op, int ndim, lt_intlist dims, bool *mask) {
  for (int d = 0; d < ndim; d++) mask[d] = dims.n <= 0;
  for (int k = 0; k < dims.n; k++) {
    int d = lt_wrap_dim(op, dims.v[k], ndim);
    if (d < 0) return -1;
    if (ndim == 0) continue;
    if (mask[d]) return lt_error("%s: argument 'dim': dim %d appears more than once in the list of dims", op, d + 1);
    mask[d] = true;
  }
  return 0;
}

int lt_meta_reduce_shape(int ndim, const int64_t *sizes, const bool *mask, bool keepdim, int64_t *out) {
  int n = 0;
  for (int d = 0; d < ndim; d++) {
    if (!mask[d]) out[n++] = sizes[d];
    else if (keepdim) out[n++] = 1;
  }
  return n;
}

int lt_meta_reduce(const char *op, int ndim, const int64_t *sizes, lt_intlist dims, bool keepdim, bool *mask,
                   int *ndim_out, int64_t *out) {
  if (lt_meta_reduce_mask(op, ndim, dims, mask) < 0) return -1;
  *ndim_out = lt_meta_reduce_shape(ndim, sizes, mask, keepdim, out);
  return 0;
}

int lt_meta_reduce_dtype(const char *op, lt_dtype in, int dtype, bool mean, lt_dtype *rdt) {
  lt_dtype want = dtype >= 0 ? (lt_dtype)dtype : in;
  if (lt_dtype_is_complex(in) && !lt_dtype_is_complex(want))
    return lt_error("%s: argument 'dtype' must be a complex dtype for a %s input, got %s", op, lt_dtype_name(in),
                    lt_dtype_name(want));
  if (mean && !lt_dtype_is_float(want) && !lt_dtype_is_complex(want))
    return lt_error("%s: could not infer the output dtype: input dtype %s is not floating point "
                    "(pass dtype= a floating point dtype, or convert the input)", op,
                    lt_dtype_name(dtype >= 0 ? (lt_dtype)dtype : in));
  *rdt = dtype >= 0 ? (lt_dtype)dtype : lt_dtype_is_integral(in) ? LT_INT64 : in;
  return 0;
}

int lt_meta_reduce_nonempty(const char *op, int64_t reduced, int64_t kept, bool all_dims) {
  if (reduced == 0 && kept > 0) {
    if (all_dims)
      return lt_error("%s: cannot reduce an empty tensor (it has no elements; pass a dim whose size is not 0)", op);
    return lt_error("%s: cannot reduce over a dim of size 0 (argument 'dim')", op);
  }
  return 0;
}

int lt_meta_var_correction(const char *op, lt_dtype in, int unbiased, lt_scalar correction, double *corr) {
  if (!lt_dtype_is_float(in))
    return lt_error("%s: input dtype %s is not supported (only floating point dtypes)", op, lt_dtype_name(in));
  if (unbiased >= 0 && !lt_scalar_is_none(correction))
    return lt_error("%s: pass either 'unbiased' or 'correction', not both", op);
  *corr = unbiased >= 0 ? (unbiased ? 1.0 : 0.0) : lt_scalar_is_none(correction) ? 1.0 : lt_scalar_to_double(correction);
  return 0;
}

int lt_meta_norm_check(const char *op, lt_dtype in, int dtype, double p) {
  if (!lt_dtype_is_float(in))
    return lt_error("%s: input dtype %s is not supported (only floating point dtypes)", op, lt_dtype_name(in));
  if (dtype >= 0 && !lt_dtype_is_float((lt_dtype)dtype))
    return lt_error("%s: argument 'dtype' must be a floating point dtype, got %s", op, lt_dtype_name((lt_dtype)dtype));
  if (p != p) return lt_error("%s: argument 'p' must not be NaN", op);
  return 0;
}

int lt_meta_line(const char *op, int ndim, const int64_t *sizes, int64_t dim, lt_line_geom *g) {
  int d = lt_wrap_dim(op, dim, ndim);
  if (d < 0) return -1;
  g->d = d;
  g->O = g->R = g->I = 1;
  for (int k = 0; k < ndim; k++) {
    if (k < d) g->O *= sizes[k];
    else if (k == d) g->R = sizes[k];
    else g->I *= sizes[k];
  }
  return 0;
}

int64_t lt_meta_dim_size(int ndim, const int64_t *sizes, int64_t dim) {
  int d = lt_wrap_dim("", dim, ndim);
  return ndim == 0 || d < 0 ? 1 : sizes[d];
}

int lt_meta_line_shape(int ndim, const int64_t *sizes, int d, int64_t n, bool keep, int64_t *out) {
  int on = 0;
  for (int k = 0; k < ndim; k++) {
    if (k != d) out[on++] = sizes[k];
    else if (keep) out[on++] = n;
  }
  return on;
}

int lt_meta_topk_check(int ndim, const int64_t *sizes, int64_t k, int64_t dim) {
  if (lt_wrap_dim("topk", dim, ndim) < 0) return -1;
  int64_t n = lt_meta_dim_size(ndim, sizes, dim);
  if (k < 0 || k > n)
    return lt_error("topk: argument 'k' (%lld) out of range: the dim has %lld elements", (long long)k, (long long)n);
  return 0;
}

int lt_meta_kthvalue_check(int ndim, const int64_t *sizes, int64_t k, int64_t dim) {
  if (lt_wrap_dim("kthvalue", dim, ndim) < 0) return -1;
  int64_t n = lt_meta_dim_size(ndim, sizes, dim);
  if (k < 1 || k > n)
    return lt_error("kthvalue: argument 'k' (%lld) out of range: the dim has %lld elements (k is 1-based)",
                    (long long)k, (long long)n);
  return 0;
}

int lt_meta_line_select_check(const char *op, int ndim, const int64_t *sizes, int64_t dim) {
  if (lt_wrap_dim(op, dim, ndim) < 0) return -1;
  int64_t n = lt_meta_dim_size(ndim, sizes, dim);
  if (n == 0 && lt_shape_numel(ndim, sizes) == 0) {
    /* an empty line has no median or mode; a shape [0, 3] reduced over 2 is fine */
    bool other_empty = false;
    int d = lt_wrap_dim(op, dim, ndim);
    for (int i = 0; i < ndim; i++) if (i != d && sizes[i] == 0) other_empty = true;
    if (!other_empty) return lt_error("%s: cannot reduce over a dim of size 0 (argument 'dim')", op);
  }
  return 0;
}
