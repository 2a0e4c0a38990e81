/*
** formulas_nn_conv.c — derivative helpers of src/ops/nn_conv.lua, written with
** the ops' entry points so that create_graph records them too.
*/
#include <string.h>
#include "formulas_nn_conv.h"
#include "lt_ops.h"

static lt_intlist meta_sizes(const lt_input_meta *m) { return lt_intlist_make(m->sizes, m->ndim); }

lt_tensor *lt_grad_conv2d_input(lt_tensor *grad, lt_tensor *weight, const lt_input_meta *input_meta,
                                lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups) {
  return lt_conv2d_backward_input(grad, weight, meta_sizes(input_meta), stride, padding, dilation, groups);
}

lt_tensor *lt_grad_conv2d_weight(lt_tensor *grad, lt_tensor *input, const lt_input_meta *weight_meta,
                                 lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups) {
  return lt_conv2d_backward_weight(grad, input, meta_sizes(weight_meta), stride, padding, dilation, groups);
}

lt_tensor *lt_grad_conv_bias(lt_tensor *grad) {
  int64_t d4[3] = {0, 2, 3}, d3[2] = {1, 2};
  lt_intlist dims = grad->ndim == 4 ? lt_intlist_make(d4, 3) : lt_intlist_make(d3, 2);
  return lt_sum(grad, dims, false, -1);
}

lt_tensor *lt_grad_conv_transpose2d_input(lt_tensor *grad, lt_tensor *weight, lt_intlist stride,
                                          lt_intlist padding, lt_intlist dilation, int64_t groups) {
  return lt_conv2d(grad, weight, NULL, stride, padding, dilation, groups);
}

lt_tensor *lt_grad_conv_transpose2d_weight(lt_tensor *grad, lt_tensor *input, const lt_input_meta *weight_meta,
                                           lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups) {
  return lt_conv2d_backward_weight(input, grad, meta_sizes(weight_meta), stride, padding, dilation, groups);
}

lt_tensor *lt_grad_conv3d_input(lt_tensor *grad, lt_tensor *weight, const lt_input_meta *input_meta,
                                lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups) {
  return lt_conv3d_backward_input(grad, weight, meta_sizes(input_meta), stride, padding, dilation, groups);
}

lt_tensor *lt_grad_conv3d_weight(lt_tensor *grad, lt_tensor *input, const lt_input_meta *weight_meta,
                                 lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups) {
  return lt_conv3d_backward_weight(grad, input, meta_sizes(weight_meta), stride, padding, dilation, groups);
}

lt_tensor *lt_grad_conv3d_bias(lt_tensor *grad) {
  int64_t d5[4] = {0, 2, 3, 4}, d4[3] = {1, 2, 3};
  lt_intlist dims = grad->ndim == 5 ? lt_intlist_make(d5, 4) : lt_intlist_make(d4, 3);
  return lt_sum(grad, dims, false, -1);
}

lt_tensor *lt_grad_conv3d_backward_input_grad_output(lt_tensor *grad, lt_tensor *weight, lt_intlist stride,
                                                     lt_intlist padding, lt_intlist dilation, int64_t groups) {
  return lt_conv3d(grad, weight, NULL, stride, padding, dilation, groups);
}

lt_tensor *lt_grad_conv3d_backward_input_weight(lt_tensor *grad, lt_tensor *grad_output,
                                                const lt_input_meta *weight_meta, lt_intlist stride,
                                                lt_intlist padding, lt_intlist dilation, int64_t groups) {
  return lt_conv3d_backward_weight(grad_output, grad, meta_sizes(weight_meta), stride, padding, dilation, groups);
}

lt_tensor *lt_grad_conv3d_backward_weight_grad_output(lt_tensor *grad, lt_tensor *input, lt_intlist stride,
                                                      lt_intlist padding, lt_intlist dilation, int64_t groups) {
  return lt_conv3d(input, grad, NULL, stride, padding, dilation, groups);
}

lt_tensor *lt_grad_max_pool2d(lt_tensor *grad, lt_tensor *indices, const lt_input_meta *self_meta) {
  return lt_max_pool2d_backward(grad, indices, meta_sizes(self_meta));
}

/* t with its last two dims as one */
static lt_tensor *flat_planes(lt_tensor *t) {
  int64_t sz[LT_MAX_DIMS];
  int n = t->ndim - 1;
  memcpy(sz, t->sizes, sizeof(int64_t) * (size_t)n);
  sz[n - 1] = t->sizes[n - 1] * t->sizes[n];
  return lt_reshape(t, lt_intlist_make(sz, n));
}

lt_tensor *lt_grad_max_pool2d_backward(lt_tensor *grad, lt_tensor *indices) {
  lt_tensor *g = flat_planes(grad);
  lt_tensor *i = g ? flat_planes(indices) : NULL;
  lt_tensor *r = i ? lt_gather(g, g->ndim - 1, i) : NULL;
  lt_tensor *out = r ? lt_reshape(r, lt_intlist_make(indices->sizes, indices->ndim)) : NULL;
  lt_tensor_release(g);
  lt_tensor_release(i);
  lt_tensor_release(r);
  return out;
}

lt_tensor *lt_grad_avg_pool2d(lt_tensor *grad, const lt_input_meta *self_meta, lt_intlist kernel_size,
                              lt_intlist stride, lt_intlist padding, bool ceil_mode, bool count_include_pad,
                              int64_t divisor_override) {
  return lt_avg_pool2d_backward(grad, meta_sizes(self_meta), kernel_size, stride, padding, ceil_mode,
                                count_include_pad, divisor_override);
}

lt_tensor *lt_grad_adaptive_avg_pool2d(lt_tensor *grad, const lt_input_meta *self_meta) {
  return lt_adaptive_avg_pool2d_backward(grad, meta_sizes(self_meta));
}

lt_tensor *lt_grad_adaptive_avg_pool2d_backward(lt_tensor *grad, const lt_input_meta *grad_output_meta) {
  return lt_adaptive_avg_pool2d(grad, lt_intlist_make(grad_output_meta->sizes + grad_output_meta->ndim - 2, 2));
}

lt_tensor *lt_grad_pad(lt_tensor *grad, const lt_input_meta *self_meta, lt_intlist pad, const char *mode) {
  return lt_pad_backward(grad, meta_sizes(self_meta), pad, mode);
}

lt_tensor *lt_grad_pad_backward(lt_tensor *grad, lt_intlist pad, const char *mode) {
  return lt_pad(grad, pad, mode, 0.0);
}

lt_tensor *lt_grad_upsample_nearest2d(lt_tensor *grad, const lt_input_meta *self_meta, lt_intlist output_size,
                                      double scales_h, double scales_w) {
  return lt_upsample_nearest2d_backward(grad, output_size, meta_sizes(self_meta), scales_h, scales_w);
}

lt_tensor *lt_grad_upsample_bilinear2d(lt_tensor *grad, const lt_input_meta *self_meta, lt_intlist output_size,
                                       bool align_corners, double scales_h, double scales_w) {
  return lt_upsample_bilinear2d_backward(grad, output_size, meta_sizes(self_meta), align_corners, scales_h, scales_w);
}
