-- lowp.lua — the 16-bit floats (float16, bfloat16) on kernels written for float32 and
-- float64 only. `float32_kernels` names, per backend, the ops whose kernels there take
-- them through float32: the generated table entry (tools/gen.lua, widen_wrapper)
-- converts each 16-bit floating tensor argument to float32, runs the kernel, and rounds
-- its floating results back to the first such argument's dtype.
-- So a bfloat16 network's pooling and resampling (after a convolution autocast ran in
-- bfloat16) work, with float32 arithmetic inside and one rounding at the end. An op
-- whose kernel on a backend takes the 16-bit floats itself is not listed for it; the
-- shape checks of these ops (src/meta: conv, pool, resample) keep refusing 16-bit
-- floats, so a kernel never sees one it was not written for.
local ops = {}

local POOL_RESAMPLE = {
  "max_pool2d_with_indices", "max_pool2d_backward", "adaptive_max_pool2d",
  "avg_pool2d", "avg_pool2d_backward", "adaptive_avg_pool2d", "adaptive_avg_pool2d_backward",
  "upsample_nearest2d", "upsample_nearest2d_backward", "upsample_bilinear2d", "upsample_bilinear2d_backward",
}
local CONV = { "conv2d", "conv2d_backward_input", "conv2d_backward_weight", "conv_transpose2d" }

local function join(...)
  local r = {}
  for _, l in ipairs({ ... }) do for _, x in ipairs(l) do r[#r + 1] = x end end
  return r
end

ops.float32_kernels = {
  cpu = POOL_RESAMPLE,
  meta = POOL_RESAMPLE,
  -- CUDA's convolutions are its own kernels in float32/float64 (no cuDNN yet)
  cuda = join(CONV, POOL_RESAMPLE),
}

return ops
