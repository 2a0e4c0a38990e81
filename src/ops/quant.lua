-- Quantization for inference (man/quantization.md): affine quantize and dequantize
-- (the storage of torch.quantize_per_tensor/per_channel's quantized tensors, lib/ao),
-- and the kernels of torch.ao's quantized Linear and Embedding modules: int8 weights with
-- one scale a row, int4 weights in groups, int8 dynamic activations. Kernels:
-- src/cpu/quant.c, src/cpu/quant_gemm.c (paths: cpu/quant.h); checks and shapes:
-- src/meta/quant.c; meta kernels: src/metadev/quant.c. None is differentiable: the
-- quantized modules are for inference (their outputs carry no gradient).
-- `isa` picks the CPU path ("portable", "avx2", "avx512", "avx512_vnni"; nil or "auto":
-- $LUTORCH_QUANT_ISA, else the best the CPU has), for tests and benchmarks.
local function k(name)
  return { cpu = "lt_cpu_" .. name, meta = "lt_metadev_" .. name }
end

return {
  { "_quantize_per_tensor(Tensor self, float scale, int zero_point, ScalarType dtype) -> Tensor",
    variants = "function", nondiff = true, kernels = k("_quantize_per_tensor"),
    doc = "clamp(round_half_even(self / scale) + zero_point) as int8 (dtype int8) or uint8 (uint8): torch.quantize_per_tensor's stored values." },
  { "_quantize_per_channel(Tensor self, Tensor scales, Tensor zero_points, Dim axis, ScalarType dtype) -> Tensor",
    variants = "function", nondiff = true, kernels = k("_quantize_per_channel"),
    doc = "The same with one scale and zero point per index along axis (scales, zero_points 1-D of that size)." },
  { "_dequantize_per_tensor(Tensor self, float scale, int zero_point) -> Tensor",
    variants = "function", nondiff = true, kernels = k("_dequantize_per_tensor"),
    doc = "(self - zero_point) * scale as float32, self int8 or uint8." },
  { "_dequantize_per_channel(Tensor self, Tensor scales, Tensor zero_points, Dim axis) -> Tensor",
    variants = "function", nondiff = true, kernels = k("_dequantize_per_channel"),
    doc = "(self - zero_points[c]) * scales[c] as float32, c the index along axis." },
  { "_int8_weight_only_linear(Tensor input, Tensor weight, Tensor scales, Tensor? bias=None, *, str? isa=None) -> Tensor",
    variants = "function", nondiff = true, kernels = k("_int8_weight_only_linear"),
    doc = "input @ (scales[:, None] * weight)^T + bias with weight int8 [out, in], input float32/float16/bfloat16 [..., in]; the result in input's dtype." },
  { "_int8_dynamic_linear(Tensor input, Tensor weight, Tensor scales, Tensor? bias=None, *, str? isa=None) -> Tensor",
    variants = "function", nondiff = true, kernels = k("_int8_dynamic_linear"),
    doc = "input quantized per row to int8 (scale max|row| / 127), int8 x int8 -> int32 products with weight int8 [out, in], rescaled by both scales, plus bias." },
  { "_int4_weight_only_linear(Tensor input, Tensor packed, Tensor scales, Tensor zeros, int group_size, Tensor? bias=None, *, str? isa=None) -> Tensor",
    variants = "function", nondiff = true, kernels = k("_int4_weight_only_linear"),
    doc = "input @ W^T + bias with W int4 in groups of group_size (32, 64, 128) along in: packed uint8 [out, in/2], scales and zeros float32 [out, in/group_size]." },
  { "_int8_gemm_int32(Tensor a, Tensor b, *, str? isa=None) -> Tensor",
    variants = "function", nondiff = true, kernels = k("_int8_gemm_int32"),
    doc = "a @ b^T in int32 for int8 a [M, K] and b [N, K]: the dot products of _int8_dynamic_linear, exact on every path." },
  { "_int4_pack(Tensor weight, int group_size) -> (Tensor packed, Tensor scales, Tensor zeros)",
    variants = "function", nondiff = true, kernels = k("_int4_pack"),
    doc = "weight [rows, in] quantized to int4 in groups along in (asymmetric, as torchao's int4_weight_only): packed uint8 [rows, in/2], scales and zeros float32 [rows, in/group_size]." },
  { "_int4_unpack(Tensor packed, Tensor scales, Tensor zeros, int group_size) -> Tensor",
    variants = "function", nondiff = true, kernels = k("_int4_unpack"),
    doc = "_int4_pack's weight dequantized to float32 [rows, in]: (q - 8) * scale + zero." },
  { "_int8_embedding(Tensor weight, Tensor scales, Tensor indices) -> Tensor",
    variants = "function", nondiff = true, kernels = k("_int8_embedding"),
    doc = "Rows of weight int8 [num, dim] times their scales [num], picked by 1-based indices: float32 indices.shape + [dim]." },
  { "_int4_embedding(Tensor packed, Tensor scales, Tensor zeros, int group_size, Tensor indices) -> Tensor",
    variants = "function", nondiff = true, kernels = k("_int4_embedding"),
    doc = "Rows of an int4 table (as _int4_pack makes) dequantized, picked by 1-based indices: float32 indices.shape + [dim]." },
}
