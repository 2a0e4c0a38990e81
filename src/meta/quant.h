/*
** quant.h — the argument checks and result shapes of the quantization ops
** (src/ops/quant.lua): the CPU kernels (src/cpu/quant.c, quant_gemm.c) and
** the meta device's (src/metadev/quant.c) both run them, so both refuse the
** same input with the same message. Every function returns 0, or -1 with
** the error slot set to a message naming op and argument.
**
** The formats (man/quantization.md):
**   int8 per-tensor / per-channel affine: q = clamp(round_half_even(x / s) + zp)
**     in int8 [-128, 127] or uint8 [0, 255]; x ~ (q - zp) * s.
**   int8 weights of the linear and embedding kernels: int8 [rows, K] with one
**     float32 scale per row (symmetric, zero point 0).
**   int4 weights: uint8 [rows, K/2], two 4-bit values per byte (element 2j in
**     the low nibble, 2j+1 in the high one), float32 scales and zeros
**     [rows, K/group_size]; w ~ (q - 8) * scale + zero (torchao's int4 layout
**     with a floating zero point).
*/
#ifndef LT_META_QUANT_H
#define LT_META_QUANT_H

#include "core/tensor.h"

/* the storage dtype of a quantized tensor: int8 (qint8) or uint8 (quint8); qmin, qmax set */
int lt_meta_quant_dtype(const char *op, int dtype, int64_t *qmin, int64_t *qmax);
/* per-tensor: scale finite and > 0, zero point within [qmin, qmax] */
int lt_meta_quant_params(const char *op, double scale, int64_t zero_point, int64_t qmin, int64_t qmax);
/* per-channel: scales (floating) and zero_points (integer) 1-D of self's size along axis
** (0-based, wrapped into *ax) */
int lt_meta_quant_channel(const char *op, const lt_tensor *self, const lt_tensor *scales,
                          const lt_tensor *zero_points, int64_t axis, int *ax);
/* the input of a quantize: a real floating point tensor */
int lt_meta_quant_float_input(const char *op, const lt_tensor *self);
/* the stored values of a dequantize: int8 or uint8 */
int lt_meta_quant_stored(const char *op, const char *arg, const lt_tensor *q);

/* the float input of a quantized linear, [..., K]: float32, float16 or bfloat16 */
int lt_meta_qlinear_input(const char *op, const lt_tensor *input, int64_t K);
/* int8 weight [N, K] and float scales [N] (and bias [N] when given); *N, *K set */
int lt_meta_qlinear_int8(const char *op, const lt_tensor *weight, const lt_tensor *scales,
                         const lt_tensor *bias, int64_t *N, int64_t *K);
/* group_size 32, 64 or 128, dividing K (K the unpacked row length) */
int lt_meta_int4_group(const char *op, int64_t group_size, int64_t K);
/* int4 packed uint8 [N, K/2], scales and zeros float [N, K/gs] (and bias [N]); *N, *K set */
int lt_meta_qlinear_int4(const char *op, const lt_tensor *packed, const lt_tensor *scales,
                         const lt_tensor *zeros, int64_t group_size, const lt_tensor *bias, int64_t *N, int64_t *K);
/* the result sizes of a linear: input's with the last dim N (into sz; ndim is input's) */
void lt_meta_qlinear_sizes(const lt_tensor *input, int64_t N, int64_t *sz);
/* embedding indices (an integer tensor) and the result sizes indices.shape + [D] into sz */
int lt_meta_qembedding_sizes(const char *op, const lt_tensor *indices, int64_t D, int64_t *sz);
/* _int8_gemm_int32: int8 a [M, K], b [N, K] */
int lt_meta_int8_gemm(const char *op, const lt_tensor *a, const lt_tensor *b);
/* _int4_pack's weight: floating [N, K] */
int lt_meta_int4_pack(const char *op, const lt_tensor *weight, int64_t group_size);
/* the isa option: NULL, "auto", "portable", "avx2", "avx512", "avx512_vnni" */
int lt_meta_quant_isa_name(const char *op, const char *isa);

/* the largest K the int32 accumulation of an int8 dot product takes without overflow */
#define LT_QUANT_MAX_K ((int64_t)1 << 17)

#endif
