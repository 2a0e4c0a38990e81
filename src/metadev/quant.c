/*
** quant.c — the meta device's kernels of the quantization ops
** (src/ops/quant.lua): the CPU's checks (meta/quant.h) and result shapes,
** no data. Checks that read values (scales > 0 per channel, indices in
** range, finite weights) are the CPU's alone.
*/
#include "core/error.h"
#include "kernels_meta.h"
#include "meta/quant.h"
#include "metadev/metadev.h"

static lt_tensor *like(lt_dtype dt, const lt_tensor *t) {
  return lt_tensor_new(dt, lt_metadev_device(), t->ndim, t->sizes);
}

lt_tensor *lt_metadev__quantize_per_tensor(lt_tensor *self, double scale, int64_t zero_point, int dtype) {
  int64_t qmin, qmax;
  if (lt_meta_quant_dtype("quantize_per_tensor", dtype, &qmin, &qmax) < 0) return NULL;
  if (lt_meta_quant_params("quantize_per_tensor", scale, zero_point, qmin, qmax) < 0) return NULL;
  if (lt_meta_quant_float_input("quantize_per_tensor", self) < 0) return NULL;
  return like((lt_dtype)dtype, self);
}

lt_tensor *lt_metadev__quantize_per_channel(lt_tensor *self, lt_tensor *scales, lt_tensor *zero_points, int64_t axis,
                                            int dtype) {
  int64_t qmin, qmax;
  int ax;
  if (lt_meta_quant_dtype("quantize_per_channel", dtype, &qmin, &qmax) < 0) return NULL;
  if (lt_meta_quant_channel("quantize_per_channel", self, scales, zero_points, axis, &ax) < 0) return NULL;
  if (lt_meta_quant_float_input("quantize_per_channel", self) < 0) return NULL;
  return like((lt_dtype)dtype, self);
}

lt_tensor *lt_metadev__dequantize_per_tensor(lt_tensor *self, double scale, int64_t zero_point) {
  int64_t qmin, qmax;
  if (lt_meta_quant_stored("dequantize", "self", self) < 0) return NULL;
  lt_meta_quant_dtype("dequantize", self->dtype, &qmin, &qmax);
  if (lt_meta_quant_params("dequantize", scale, zero_point, qmin, qmax) < 0) return NULL;
  return like(LT_FLOAT32, self);
}

lt_tensor *lt_metadev__dequantize_per_channel(lt_tensor *self, lt_tensor *scales, lt_tensor *zero_points,
                                              int64_t axis) {
  int ax;
  if (lt_meta_quant_stored("dequantize", "self", self) < 0) return NULL;
  if (lt_meta_quant_channel("dequantize", self, scales, zero_points, axis, &ax) < 0) return NULL;
  return like(LT_FLOAT32, self);
}

static lt_tensor *linear_result(lt_tensor *input, int64_t N) {
  int64_t sz[LT_MAX_DIMS];
  lt_meta_qlinear_sizes(input, N, sz);
  return lt_tensor_new((lt_dtype)input->dtype, lt_metadev_device(), input->ndim, sz);
}

lt_tensor *lt_metadev__int8_weight_only_linear(lt_tensor *input, lt_tensor *weight, lt_tensor *scales,
                                               lt_tensor *bias, const char *isa) {
  const char *op = "_int8_weight_only_linear";
  int64_t N, K;
  if (lt_meta_qlinear_int8(op, weight, scales, bias, &N, &K) < 0 || lt_meta_qlinear_input(op, input, K) < 0 ||
      lt_meta_quant_isa_name(op, isa) < 0)
    return NULL;
  return linear_result(input, N);
}

lt_tensor *lt_metadev__int8_dynamic_linear(lt_tensor *input, lt_tensor *weight, lt_tensor *scales, lt_tensor *bias,
                                           const char *isa) {
  const char *op = "_int8_dynamic_linear";
  int64_t N, K;
  if (lt_meta_qlinear_int8(op, weight, scales, bias, &N, &K) < 0 || lt_meta_qlinear_input(op, input, K) < 0 ||
      lt_meta_quant_isa_name(op, isa) < 0)
    return NULL;
  return linear_result(input, N);
}

lt_tensor *lt_metadev__int4_weight_only_linear(lt_tensor *input, lt_tensor *packed, lt_tensor *scales,
                                               lt_tensor *zeros, int64_t group_size, lt_tensor *bias,
                                               const char *isa) {
  const char *op = "_int4_weight_only_linear";
  int64_t N, K;
  if (lt_meta_qlinear_int4(op, packed, scales, zeros, group_size, bias, &N, &K) < 0 ||
      lt_meta_qlinear_input(op, input, K) < 0 || lt_meta_quant_isa_name(op, isa) < 0)
    return NULL;
  return linear_result(input, N);
}

lt_tensor *lt_metadev__int8_gemm_int32(lt_tensor *a, lt_tensor *b, const char *isa) {
  if (lt_meta_int8_gemm("_int8_gemm_int32", a, b) < 0 || lt_meta_quant_isa_name("_int8_gemm_int32", isa) < 0)
    return NULL;
  int64_t sz[2] = {a->sizes[0], b->sizes[0]};
  return lt_tensor_new(LT_INT32, lt_metadev_device(), 2, sz);
}

int lt_metadev__int4_pack(lt_tensor *weight, int64_t group_size, lt_tensor **packed, lt_tensor **scales,
                          lt_tensor **zeros) {
  *packed = *scales = *zeros = NULL;
  if (lt_meta_int4_pack("_int4_pack", weight, group_size) < 0) return -1;
  int64_t N = weight->sizes[0], K = weight->sizes[1];
  int64_t psz[2] = {N, K / 2}, gsz[2] = {N, K / group_size};
  *packed = lt_tensor_new(LT_UINT8, lt_metadev_device(), 2, psz);
  *scales = lt_tensor_new(LT_FLOAT32, lt_metadev_device(), 2, gsz);
  *zeros = lt_tensor_new(LT_FLOAT32, lt_metadev_device(), 2, gsz);
  if (*packed && *scales && *zeros) return 0;
  lt_tensor_release(*packed); lt_tensor_release(*scales); lt_tensor_release(*zeros);
  *packed = *scales = *zeros = NULL;
  return -1;
}

lt_tensor *lt_metadev__int4_unpack(lt_tensor *packed, lt_tensor *scales, lt_tensor *zeros, int64_t group_size) {
  int64_t N, K;
  if (lt_meta_qlinear_int4("_int4_unpack", packed, scales, zeros, group_size, NULL, &N, &K) < 0) return NULL;
  int64_t sz[2] = {N, K};
  return lt_tensor_new(LT_FLOAT32, lt_metadev_device(), 2, sz);
}

lt_tensor *lt_metadev__int8_embedding(lt_tensor *weight, lt_tensor *scales, lt_tensor *indices) {
  int64_t V, D, sz[LT_MAX_DIMS];
  if (lt_meta_qlinear_int8("_int8_embedding", weight, scales, NULL, &V, &D) < 0) return NULL;
  if (lt_meta_qembedding_sizes("_int8_embedding", indices, D, sz) < 0) return NULL;
  return lt_tensor_new(LT_FLOAT32, lt_metadev_device(), indices->ndim + 1, sz);
}

lt_tensor *lt_metadev__int4_embedding(lt_tensor *packed, lt_tensor *scales, lt_tensor *zeros, int64_t group_size,
                                      lt_tensor *indices) {
  int64_t V, D, sz[LT_MAX_DIMS];
  if (lt_meta_qlinear_int4("_int4_embedding", packed, scales, zeros, group_size, NULL, &V, &D) < 0) return NULL;
  if (lt_meta_qembedding_sizes("_int4_embedding", indices, D, sz) < 0) return NULL;
  return lt_tensor_new(LT_FLOAT32, lt_metadev_device(), indices->ndim + 1, sz);
}
