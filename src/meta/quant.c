/*
** quant.c — the quantization ops' argument checks and result shapes
** (meta/quant.h), shared by the CPU's kernels and the meta device's.
*/
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "meta/quant.h"

static const char *dn(const lt_tensor *t) { return lt_dtype_name((lt_dtype)t->dtype); }

static bool is_int(lt_dtype t) { return lt_dtype_is_integral(t) && t != LT_BOOL; }

int lt_meta_quant_dtype(const char *op, int dtype, int64_t *qmin, int64_t *qmax) {
  if (dtype == LT_INT8) { *qmin = -128; *qmax = 127; return 0; }
  if (dtype == LT_UINT8) { *qmin = 0; *qmax = 255; return 0; }
  return lt_error("%s: argument 'dtype' must be int8 (torch.qint8) or uint8 (torch.quint8), got %s", op,
                  dtype < 0 ? "None" : lt_dtype_name((lt_dtype)dtype));
}

int lt_meta_quant_params(const char *op, double scale, int64_t zero_point, int64_t qmin, int64_t qmax) {
  if (!(scale > 0) || !isfinite(scale) || (float)scale == 0.0f)
    return lt_error("%s: argument 'scale' must be a finite number > 0 (in float32), got %g", op, scale);
  if (zero_point < qmin || zero_point > qmax)
    return lt_error("%s: argument 'zero_point' must be within [%lld, %lld], got %lld", op, (long long)qmin,
                    (long long)qmax, (long long)zero_point);
  return 0;
}

int lt_meta_quant_channel(const char *op, const lt_tensor *self, const lt_tensor *scales,
                          const lt_tensor *zero_points, int64_t axis, int *ax) {
  if (self->ndim == 0) return lt_error("%s: argument 'self' must have at least one dim", op);
  int d = lt_wrap_dim(op, axis, self->ndim);
  if (d < 0) return -1;
  *ax = d;
  if (!lt_dtype_is_float((lt_dtype)scales->dtype))
    return lt_error("%s: argument 'scales' must be a floating point tensor, got %s", op, dn(scales));
  if (!is_int((lt_dtype)zero_points->dtype))
    return lt_error("%s: argument 'zero_points' must be an integer tensor, got %s", op, dn(zero_points));
  int64_t c = self->sizes[d];
  if (scales->ndim != 1 || scales->sizes[0] != c)
    return lt_error("%s: argument 'scales' must be 1-D of size %lld (self's size along axis), got %d-D", op,
                    (long long)c, scales->ndim);
  if (zero_points->ndim != 1 || zero_points->sizes[0] != c)
    return lt_error("%s: argument 'zero_points' must be 1-D of size %lld (self's size along axis)", op, (long long)c);
  return 0;
}

int lt_meta_quant_float_input(const char *op, const lt_tensor *self) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (!lt_dtype_is_float(dt) || lt_dtype_is_complex(dt))
    return lt_error("%s: argument 'self' must be a floating point tensor, got %s", op, lt_dtype_name(dt));
  return 0;
}

int lt_meta_quant_stored(const char *op, const char *arg, const lt_tensor *q) {
  if (q->dtype != LT_INT8 && q->dtype != LT_UINT8)
    return lt_error("%s: argument '%s' must hold int8 or uint8 values, got %s", op, arg, dn(q));
  return 0;
}

int lt_meta_qlinear_input(const char *op, const lt_tensor *input, int64_t K) {
  lt_dtype t = (lt_dtype)input->dtype;
  if (t != LT_FLOAT32 && t != LT_FLOAT16 && t != LT_BFLOAT16)
    return lt_error("%s: argument 'input' must be float32, float16 or bfloat16, got %s", op, dn(input));
  if (input->ndim == 0) return lt_error("%s: argument 'input' must have at least one dim ([..., in_features])", op);
  if (input->sizes[input->ndim - 1] != K)
    return lt_error("%s: argument 'input' has last dim %lld, the weight's in_features are %lld", op,
                    (long long)input->sizes[input->ndim - 1], (long long)K);
  return 0;
}

static int check_vec(const char *op, const char *arg, const lt_tensor *t, int64_t n) {
  if (!lt_dtype_is_float((lt_dtype)t->dtype))
    return lt_error("%s: argument '%s' must be a floating point tensor, got %s", op, arg, dn(t));
  if (t->ndim != 1 || t->sizes[0] != n)
    return lt_error("%s: argument '%s' must be 1-D of size %lld (out_features)", op, arg, (long long)n);
  return 0;
}

int lt_meta_qlinear_int8(const char *op, const lt_tensor *weight, const lt_tensor *scales,
                         const lt_tensor *bias, int64_t *N, int64_t *K) {
  if (weight->dtype != LT_INT8) return lt_error("%s: argument 'weight' must be int8, got %s", op, dn(weight));
  if (weight->ndim != 2)
    return lt_error("%s: argument 'weight' must be 2-D ([out_features, in_features]), got %d-D", op, weight->ndim);
  *N = weight->sizes[0];
  *K = weight->sizes[1];
  if (*K > LT_QUANT_MAX_K)
    return lt_error("%s: argument 'weight' has %lld in_features, more than the int32 accumulators take (%lld)", op,
                    (long long)*K, (long long)LT_QUANT_MAX_K);
  if (check_vec(op, "scales", scales, *N) < 0) return -1;
  if (bias && check_vec(op, "bias", bias, *N) < 0) return -1;
  return 0;
}

int lt_meta_int4_group(const char *op, int64_t group_size, int64_t K) {
  if (group_size != 32 && group_size != 64 && group_size != 128)
    return lt_error("%s: argument 'group_size' must be 32, 64 or 128, got %lld", op, (long long)group_size);
  if (K % group_size != 0)
    return lt_error("%s: in_features (%lld) must be a multiple of group_size (%lld)", op, (long long)K,
                    (long long)group_size);
  return 0;
}

static int check_groups(const char *op, const char *arg, const lt_tensor *t, int64_t n, int64_t g) {
  if (t->dtype != LT_FLOAT32) return lt_error("%s: argument '%s' must be float32, got %s", op, arg, dn(t));
  if (t->ndim != 2 || t->sizes[0] != n || t->sizes[1] != g)
    return lt_error("%s: argument '%s' must be [%lld, %lld] ([rows, in_features / group_size])", op, arg,
                    (long long)n, (long long)g);
  return 0;
}

int lt_meta_qlinear_int4(const char *op, const lt_tensor *packed, const lt_tensor *scales,
                         const lt_tensor *zeros, int64_t group_size, const lt_tensor *bias, int64_t *N, int64_t *K) {
  if (packed->dtype != LT_UINT8)
    return lt_error("%s: argument 'packed' must be uint8 (two int4 values a byte), got %s", op, dn(packed));
  if (packed->ndim != 2)
    return lt_error("%s: argument 'packed' must be 2-D ([rows, in_features / 2]), got %d-D", op, packed->ndim);
  *N = packed->sizes[0];
  *K = packed->sizes[1] * 2;
  if (lt_meta_int4_group(op, group_size, *K) < 0) return -1;
  int64_t g = *K / group_size;
  if (check_groups(op, "scales", scales, *N, g) < 0 || check_groups(op, "zeros", zeros, *N, g) < 0) return -1;
  if (bias && check_vec(op, "bias", bias, *N) < 0) return -1;
  return 0;
}

void lt_meta_qlinear_sizes(const lt_tensor *input, int64_t N, int64_t *sz) {
  for (int i = 0; i < input->ndim - 1; i++) sz[i] = input->sizes[i];
  sz[input->ndim - 1] = N;
}

int lt_meta_qembedding_sizes(const char *op, const lt_tensor *indices, int64_t D, int64_t *sz) {
  lt_dtype it = (lt_dtype)indices->dtype;
  if (it != LT_INT64 && it != LT_INT32 && it != LT_INT16 && it != LT_INT8 && it != LT_UINT8)
    return lt_error("%s: argument 'indices' must be an integer tensor, got %s", op, lt_dtype_name(it));
  if (indices->ndim + 1 > LT_MAX_DIMS) return lt_error("%s: argument 'indices' has too many dims", op);
  for (int i = 0; i < indices->ndim; i++) sz[i] = indices->sizes[i];
  sz[indices->ndim] = D;
  return 0;
}

int lt_meta_int8_gemm(const char *op, const lt_tensor *a, const lt_tensor *b) {
  if (a->dtype != LT_INT8) return lt_error("%s: argument 'a' must be int8, got %s", op, dn(a));
  if (b->dtype != LT_INT8) return lt_error("%s: argument 'b' must be int8, got %s", op, dn(b));
  if (a->ndim != 2) return lt_error("%s: argument 'a' must be 2-D ([M, K]), got %d-D", op, a->ndim);
  if (b->ndim != 2) return lt_error("%s: argument 'b' must be 2-D ([N, K]), got %d-D", op, b->ndim);
  if (a->sizes[1] != b->sizes[1])
    return lt_error("%s: arguments 'a' [M, %lld] and 'b' [N, %lld] must have the same K", op,
                    (long long)a->sizes[1], (long long)b->sizes[1]);
  if (a->sizes[1] > LT_QUANT_MAX_K)
    return lt_error("%s: argument 'a' has K = %lld, more than the int32 accumulators take (%lld)", op,
                    (long long)a->sizes[1], (long long)LT_QUANT_MAX_K);
  return 0;
}

int lt_meta_int4_pack(const char *op, const lt_tensor *weight, int64_t group_size) {
  lt_dtype t = (lt_dtype)weight->dtype;
  if (!lt_dtype_is_float(t) || lt_dtype_is_complex(t))
    return lt_error("%s: argument 'weight' must be a floating point tensor, got %s", op, dn(weight));
  if (weight->ndim != 2) return lt_error("%s: argument 'weight' must be 2-D ([rows, in_features]), got %d-D", op,
                                         weight->ndim);
  return lt_meta_int4_group(op, group_size, weight->sizes[1]);
}

int lt_meta_quant_isa_name(const char *op, const char *isa) {
  static const char *names[] = {"auto", "portable", "avx2", "avx512", "avx512_vnni"};
  if (!isa) return 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(isa, names[i]) == 0) return 0;
  return lt_error("%s: argument 'isa' must be one of \"auto\", \"portable\", \"avx2\", \"avx512\", \"avx512_vnni\", "
                  "got \"%s\"", op, isa);
}
