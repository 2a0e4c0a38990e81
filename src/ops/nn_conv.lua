-- Convolution, pooling and resampling (src/cpu/nn_conv.c, nn_pool.c, nn_resample.c).
-- PyTorch's argument order; inputs (N, C, ...) or unbatched (C, ...); float32 and float64.
-- List arguments take one number for every spatial dim or a table (stride={2, 1}). Max-pool
-- indices are 1-based flat positions in each input plane. Derivative helpers:
-- src/autograd/formulas_nn_conv.c. The *_backward ops are the kernels of the derivatives.
local CONV = "int[] stride=1, int[] padding=0, int[] dilation=1, int groups=1"
local CONV_S = "int[] stride=1, str padding, int[] dilation=1, int groups=1"
local CARGS = "stride, padding, dilation, groups"
local AVG = "int[] kernel_size, int[]? stride=None, int[] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None"
local AVG_ARGS = "kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override"
local MAXP = "int[] kernel_size, int[]? stride=None, int[] padding=0, int[] dilation=1, bool ceil_mode=False"
local F = "function"

return {
  -- convolutions
  { "conv2d(Tensor input, Tensor weight, Tensor? bias=None, " .. CONV .. ") -> Tensor", kernels = { cpu = "lt_cpu_conv2d", cuda = "lt_cuda_conv2d" }, variants = F,
    derivatives = { input = "lt_grad_conv2d_input(grad, weight, input_meta, " .. CARGS .. ")",
                    weight = "lt_grad_conv2d_weight(grad, input, weight_meta, " .. CARGS .. ")",
                    bias = "lt_grad_conv_bias(grad)" },
    doc = "2-D convolution (cross-correlation) of input (N, C, H, W) or (C, H, W) with weight (O, C/groups, kH, kW)." },
  { "conv2d_padstr(Tensor input, Tensor weight, Tensor? bias=None, " .. CONV_S .. ") -> Tensor", lua = "conv2d",
    variants = F, composite = "lt_conv2d_padstr_impl",
    doc = "conv2d with padding \"valid\" (none) or \"same\" (output size = input size; stride 1)." },
  { "conv1d(Tensor input, Tensor weight, Tensor? bias=None, " .. CONV .. ") -> Tensor", variants = F,
    composite = "lt_conv1d_impl",
    doc = "1-D convolution of input (N, C, L) or (C, L) with weight (O, C/groups, kW)." },
  { "conv1d_padstr(Tensor input, Tensor weight, Tensor? bias=None, " .. CONV_S .. ") -> Tensor", lua = "conv1d",
    variants = F, composite = "lt_conv1d_padstr_impl",
    doc = "conv1d with padding \"valid\" or \"same\"." },
  { "conv_transpose2d(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, int[] padding=0, int[] output_padding=0, int groups=1, int[] dilation=1) -> Tensor", kernels = { cpu = "lt_cpu_conv_transpose2d", cuda = "lt_cuda_conv_transpose2d" },
    variants = F,
    derivatives = { input = "lt_grad_conv_transpose2d_input(grad, weight, stride, padding, dilation, groups)",
                    weight = "lt_grad_conv_transpose2d_weight(grad, input, weight_meta, stride, padding, dilation, groups)",
                    bias = "lt_grad_conv_bias(grad)" },
    doc = "Transposed 2-D convolution (the gradient of conv2d) with weight (C_in, C_out/groups, kH, kW)." },
  { "conv2d_backward_input(Tensor grad_output, Tensor weight, int[] input_size, " .. CONV .. ") -> Tensor", kernels = { cpu = "lt_cpu_conv2d_backward_input", cuda = "lt_cuda_conv2d_backward_input" },
    variants = F,
    derivatives = { grad_output = "lt_grad_conv_transpose2d_input(grad, weight, " .. CARGS .. ")",
                    weight = "lt_grad_conv_transpose2d_weight(grad, grad_output, weight_meta, " .. CARGS .. ")" },
    doc = "The gradient of conv2d with respect to its input (of shape input_size)." },
  { "conv2d_backward_weight(Tensor grad_output, Tensor input, int[] weight_size, " .. CONV .. ") -> Tensor", kernels = { cpu = "lt_cpu_conv2d_backward_weight", cuda = "lt_cuda_conv2d_backward_weight" },
    variants = F,
    derivatives = { grad_output = "lt_grad_conv_transpose2d_input(input, grad, " .. CARGS .. ")",
                    input = "lt_grad_conv2d_input(grad_output, grad, input_meta, " .. CARGS .. ")" },
    doc = "The gradient of conv2d with respect to its weight (of shape weight_size)." },

  -- max pools
  { "max_pool2d_with_indices(Tensor self, " .. MAXP .. ") -> (Tensor values, Tensor indices)", kernels = { cpu = "lt_cpu_max_pool2d_with_indices", cuda = "lt_cuda_max_pool2d_with_indices" }, variants = F,
    derivatives = { self = "lt_grad_max_pool2d(grad, indices, self_meta)" },
    doc = "2-D max pooling over (N, C, H, W) or (C, H, W); stride defaults to kernel_size. Also the 1-based flat positions of the maxima in each input plane." },
  { "max_pool2d(Tensor self, " .. MAXP .. ") -> Tensor", variants = F, composite = "lt_max_pool2d_impl",
    doc = "2-D max pooling; stride defaults to kernel_size." },
  { "max_pool1d_with_indices(Tensor self, " .. MAXP .. ") -> (Tensor values, Tensor indices)", variants = F,
    composite = "lt_max_pool1d_with_indices_impl",
    doc = "1-D max pooling over (N, C, L) or (C, L) and the 1-based positions of the maxima." },
  { "max_pool1d(Tensor self, " .. MAXP .. ") -> Tensor", variants = F, composite = "lt_max_pool1d_impl",
    doc = "1-D max pooling; stride defaults to kernel_size." },
  { "max_pool2d_backward(Tensor grad_output, Tensor indices, int[] input_size) -> Tensor", kernels = { cpu = "lt_cpu_max_pool2d_backward", cuda = "lt_cuda_max_pool2d_backward" }, variants = F,
    derivatives = { grad_output = "lt_grad_max_pool2d_backward(grad, indices)" },
    doc = "grad_output added into zeros of input_size at the 1-based plane positions in indices." },
  { "adaptive_max_pool2d(Tensor self, int[] output_size) -> (Tensor values, Tensor indices)", kernels = { cpu = "lt_cpu_adaptive_max_pool2d", cuda = "lt_cuda_adaptive_max_pool2d" }, variants = F,
    derivatives = { self = "lt_grad_max_pool2d(grad, indices, self_meta)" },
    doc = "Max over adaptive windows giving output_size (H, W); also the 1-based plane positions of the maxima." },

  -- average pools
  { "avg_pool2d(Tensor self, " .. AVG .. ") -> Tensor", kernels = { cpu = "lt_cpu_avg_pool2d", cuda = "lt_cuda_avg_pool2d" }, variants = F,
    derivatives = { self = "lt_grad_avg_pool2d(grad, self_meta, " .. AVG_ARGS .. ")" },
    doc = "2-D average pooling; stride defaults to kernel_size." },
  { "avg_pool2d_backward(Tensor grad_output, int[] input_size, " .. AVG .. ") -> Tensor", kernels = { cpu = "lt_cpu_avg_pool2d_backward", cuda = "lt_cuda_avg_pool2d_backward" }, variants = F,
    derivatives = { grad_output = "lt_avg_pool2d(grad, " .. AVG_ARGS .. ")" },
    doc = "The gradient of avg_pool2d with respect to its input (of shape input_size)." },
  { "avg_pool1d(Tensor self, int[] kernel_size, int[]? stride=None, int[] padding=0, bool ceil_mode=False, bool count_include_pad=True) -> Tensor",
    variants = F, composite = "lt_avg_pool1d_impl",
    doc = "1-D average pooling over (N, C, L) or (C, L)." },
  { "adaptive_avg_pool2d(Tensor self, int[] output_size) -> Tensor", kernels = { cpu = "lt_cpu_adaptive_avg_pool2d", cuda = "lt_cuda_adaptive_avg_pool2d" }, variants = F,
    derivatives = { self = "lt_grad_adaptive_avg_pool2d(grad, self_meta)" },
    doc = "Mean over adaptive windows giving output_size (H, W)." },
  { "adaptive_avg_pool2d_backward(Tensor grad_output, int[] input_size) -> Tensor", kernels = { cpu = "lt_cpu_adaptive_avg_pool2d_backward", cuda = "lt_cuda_adaptive_avg_pool2d_backward" }, variants = F,
    derivatives = { grad_output = "lt_grad_adaptive_avg_pool2d_backward(grad, grad_output_meta)" },
    doc = "The gradient of adaptive_avg_pool2d with respect to its input (of shape input_size)." },

  -- padding and resampling
  { "pad(Tensor self, int[] pad, str mode=\"constant\", float value=0) -> Tensor", kernels = { cpu = "lt_cpu_pad", cuda = "lt_cuda_pad" }, variants = F,
    derivatives = { self = "lt_grad_pad(grad, self_meta, pad, mode)" },
    doc = "F.pad: pad = {left, right} for the last dim, then the dim before, ...; mode \"constant\" (value; negative pads crop), \"reflect\" or \"replicate\" (up to 3 dims)." },
  { "pad_backward(Tensor grad_output, int[] input_size, int[] pad, str mode=\"constant\") -> Tensor", kernels = { cpu = "lt_cpu_pad_backward", cuda = "lt_cuda_pad_backward" }, variants = F,
    derivatives = { grad_output = "lt_grad_pad_backward(grad, pad, mode)" },
    doc = "The gradient of pad with respect to its input (of shape input_size)." },
  { "upsample_nearest2d(Tensor self, int[] output_size, float scales_h=0.0, float scales_w=0.0) -> Tensor", kernels = { cpu = "lt_cpu_upsample_nearest2d", cuda = "lt_cuda_upsample_nearest2d" }, variants = F,
    derivatives = { self = "lt_grad_upsample_nearest2d(grad, self_meta, output_size, scales_h, scales_w)" },
    doc = "Nearest-neighbour resize of (N, C, H, W) to output_size (OH, OW). Output row o reads source row floor(o / scales_h) when scales_h > 0 (the scale factor F.interpolate was given), else floor(o * H / OH); the same for columns." },
  { "upsample_nearest2d_backward(Tensor grad_output, int[] output_size, int[] input_size, float scales_h=0.0, float scales_w=0.0) -> Tensor", kernels = { cpu = "lt_cpu_upsample_nearest2d_backward", cuda = "lt_cuda_upsample_nearest2d_backward" }, variants = F,
    derivatives = { grad_output = "lt_upsample_nearest2d(grad, output_size, scales_h, scales_w)" },
    doc = "The gradient of upsample_nearest2d with respect to its input (of shape input_size)." },
  { "upsample_bilinear2d(Tensor self, int[] output_size, bool align_corners=False, float scales_h=0.0, float scales_w=0.0) -> Tensor", kernels = { cpu = "lt_cpu_upsample_bilinear2d", cuda = "lt_cuda_upsample_bilinear2d" }, variants = F,
    derivatives = { self = "lt_grad_upsample_bilinear2d(grad, self_meta, output_size, align_corners, scales_h, scales_w)" },
    doc = "Bilinear resize of (N, C, H, W) to output_size (OH, OW). Without align_corners, output row o samples source row (o + 0.5) / scales_h - 0.5 when scales_h > 0 (the scale factor F.interpolate was given), else (o + 0.5) * H / OH - 0.5; the same for columns." },
  { "upsample_bilinear2d_backward(Tensor grad_output, int[] output_size, int[] input_size, bool align_corners=False, float scales_h=0.0, float scales_w=0.0) -> Tensor", kernels = { cpu = "lt_cpu_upsample_bilinear2d_backward", cuda = "lt_cuda_upsample_bilinear2d_backward" },
    variants = F,
    derivatives = { grad_output = "lt_upsample_bilinear2d(grad, output_size, align_corners, scales_h, scales_w)" },
    doc = "The gradient of upsample_bilinear2d with respect to its input (of shape input_size)." },
  { "pixel_shuffle(Tensor self, int upscale_factor) -> Tensor", variants = F, composite = "lt_pixel_shuffle_impl",
    doc = "(*, C*r*r, H, W) -> (*, C, H*r, W*r)." },
  { "pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor", variants = F, composite = "lt_pixel_unshuffle_impl",
    doc = "(*, C, H*r, W*r) -> (*, C*r*r, H, W)." },
}
