-- kernels_left.lua — the dispatched ops that have no CUDA kernel yet, each
-- group under the reason why. `make check-gen` runs
--   lua5.4 tools/gen.lua --check --left cuda=src/cuda/kernels_left.lua src/ops/*.lua
-- which prints them grouped by reason and fails when an op without a CUDA
-- kernel is not listed here, or a listed op has one: when you add a kernel
-- (`kernels = { cuda = "lt_cuda_..." }` in its declaration), remove it here.
-- Under the fake driver these ops run the CPU's kernel on the fake's host
-- memory; under a real driver they are the dispatcher's "not implemented for
-- cuda tensors" error naming the op.
return {
{ why = "the joint backward of the normalisations, used by a plain backward on the CPU only (on CUDA the per-input backward kernels run): a fused CUDA version is not written yet",
  ops = {
    "native_layer_norm_backward",
    "native_batch_norm_backward",
  } },
{ why = "needs a per-row cumulative sum and search, and for sampling without replacement a per-row top-k of random keys: not written yet (the scan and sort kernels it would use exist)",
  ops = {
    "multinomial",
  } },
{ why = "Torch7 mode's LAPACK helpers (one small matrix, as Torch7 had them): the CPU's LAPACK; a CUDA version would go through cuSOLVER, which is not bound yet",
  ops = {
    "_pstrf",
    "_eig_real",
  } },
{ why = "needs cuSOLVER (not bound yet): LU, Cholesky, triangular solves, determinants and least squares run on LAPACK on the CPU",
  ops = {
    "linalg_solve_ex",
    "linalg_lu_factor_ex",
    "linalg_lu_solve",
    "linalg_cholesky_ex",
    "linalg_solve_triangular",
    "linalg_det",
    "_linalg_slogdet",
    "_lu_permutation",
    "linalg_lstsq",
  } },
{ why = "needs cuSOLVER (not bound yet): the spectral decompositions and the triangular solve of the QR derivative",
  ops = {
    "_linalg_eig",
    "geqrf",
    "_linalg_householder_product",
    "_ormqr",
    "linalg_qr",
    "_linalg_eigh",
    "_linalg_svd",
    "_linalg_spectral_trsolve",
  } },
{ why = "complex dtypes: the complex kernels are CPU-only so far (man/complex.md); on cuda these ops refuse complex tensors",
  ops = {
    "conj_physical",
    "conj_physical_",
    "angle",
    "polar",
    "complex",
    "_sgn_complex",
  } },
{ why = "needs cuFFT (not bound yet): torch.fft's transforms run on the CPU's own engine (src/cpu/fft.h)",
  ops = {
    "_fft_c2c",
    "_fft_r2c",
    "_fft_c2r",
    "_fft_halfweight",
  } },
{ why = "quantized kernels are CPU-only for now (man/quantization.md): int8/int4 products and packing on the CPU's AVX2/AVX-512/VNNI paths",
  ops = {
    "_quantize_per_tensor",
    "_quantize_per_channel",
    "_dequantize_per_tensor",
    "_dequantize_per_channel",
    "_int8_weight_only_linear",
    "_int8_dynamic_linear",
    "_int4_weight_only_linear",
    "_int8_gemm_int32",
    "_int4_pack",
    "_int4_unpack",
    "_int8_embedding",
    "_int4_embedding",
  } },
}
