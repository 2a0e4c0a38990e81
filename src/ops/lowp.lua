-- lowp.lua — the 16-bit floats (float16, bfloat16) on kernels written for float32 and
-- float64 only. `float32_kernels` names, per backend, the ops whose kernels there take
-- them through float32: the generated table entry (tools/gen.lua, widen_wrapper)
-- converts each 16-bit floating tensor argument to float32, runs the kernel, and rounds
-- its floating results back to the first such argument's dtype.
-- So a bfloat16 network's convolutions, pooling and resampling work, with float32
-- arithmetic inside (float32 accumulation, as PyTorch's CPU kernels have for bfloat16)
-- and one rounding at the end. A call mixing dtypes goes to the kernel as it is, whose
-- checks refuse it. An op whose kernel on a backend takes the 16-bit floats itself is
-- not listed for it. The pool and resample shape checks (src/meta) refuse 16-bit
-- floats; the conv checks take them (the meta device's convolutions do), so on each
-- backend with float32-only convolution kernels the conv family must be listed here.
local ops = {}

-- the convolution kernels are float32/float64 (im2col and the GEMMs): measured, the
-- conversions cost 3-11% over float32's time (bench/README.md, 16-bit floats)
local POOL_RESAMPLE = {
  "max_pool2d_with_indices", "max_pool2d_backward", "adaptive_max_pool2d",
  "avg_pool2d", "avg_pool2d_backward", "adaptive_avg_pool2d", "adaptive_avg_pool2d_backward",
  "upsample_nearest2d", "upsample_nearest2d_backward", "upsample_bilinear2d", "upsample_bilinear2d_backward",
}
local CONV = { "conv2d", "conv2d_backward_input", "conv2d_backward_weight", "conv_transpose2d" }
-- the CPU's conv3d kernels are float32/float64 too; elsewhere conv3d is the generic kernel (matmul)
local CONV3D = { "conv3d", "conv3d_backward_input", "conv3d_backward_weight" }

local function join(...)
  local r = {}
  for _, l in ipairs({ ... }) do for _, x in ipairs(l) do r[#r + 1] = x end end
  return r
end

ops.float32_kernels = {
  cpu = join(CONV, CONV3D, POOL_RESAMPLE),
  meta = POOL_RESAMPLE,
  -- CUDA's convolutions are its own kernels in float32/float64 (no cuDNN yet)
  cuda = join(CONV, POOL_RESAMPLE),
}

return ops
