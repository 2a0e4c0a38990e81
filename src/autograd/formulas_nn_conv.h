/*
** formulas_nn_conv.h — derivative helpers for the ops declared in src/ops/nn_conv.lua.
** Each returns a new reference (the gradient) or NULL with the error set.
*/
#ifndef LT_FORMULAS_NN_CONV_H
#define LT_FORMULAS_NN_CONV_H

#include "autograd.h"

/* conv2d: the input gradient (a transposed convolution) and the weight gradient */
lt_tensor *lt_grad_conv2d_input(lt_tensor *grad, lt_tensor *weight, const lt_input_meta *input_meta,
                                lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups);
lt_tensor *lt_grad_conv2d_weight(lt_tensor *grad, lt_tensor *input, const lt_input_meta *weight_meta,
                                 lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups);
/* the bias gradient of a (transposed) convolution: grad summed over all dims but channels */
lt_tensor *lt_grad_conv_bias(lt_tensor *grad);
/* conv_transpose2d: a convolution of grad, and the weight gradient with the roles of
** grad and input swapped (also the double-backward formulas of the backward ops) */
lt_tensor *lt_grad_conv_transpose2d_input(lt_tensor *grad, lt_tensor *weight, lt_intlist stride,
                                          lt_intlist padding, lt_intlist dilation, int64_t groups);
lt_tensor *lt_grad_conv_transpose2d_weight(lt_tensor *grad, lt_tensor *input, const lt_input_meta *weight_meta,
                                           lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups);
/* conv3d: its two backward products (conv3d_backward_weight's input gradient too), the
** bias gradient (over (N, O, D, H, W) or unbatched (O, D, H, W)) and the derivatives of
** the backward products, which are linear in each argument: a conv3d of grad, and the
** weight gradient with grad as the input */
lt_tensor *lt_grad_conv3d_input(lt_tensor *grad, lt_tensor *weight, const lt_input_meta *input_meta,
                                lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups);
lt_tensor *lt_grad_conv3d_weight(lt_tensor *grad, lt_tensor *input, const lt_input_meta *weight_meta,
                                 lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups);
lt_tensor *lt_grad_conv3d_bias(lt_tensor *grad);
lt_tensor *lt_grad_conv3d_backward_input_grad_output(lt_tensor *grad, lt_tensor *weight, lt_intlist stride,
                                                     lt_intlist padding, lt_intlist dilation, int64_t groups);
lt_tensor *lt_grad_conv3d_backward_input_weight(lt_tensor *grad, lt_tensor *grad_output,
                                                const lt_input_meta *weight_meta, lt_intlist stride,
                                                lt_intlist padding, lt_intlist dilation, int64_t groups);
lt_tensor *lt_grad_conv3d_backward_weight_grad_output(lt_tensor *grad, lt_tensor *input, lt_intlist stride,
                                                      lt_intlist padding, lt_intlist dilation, int64_t groups);
/* max pools (also adaptive): grad scattered to the 1-based plane positions in indices */
lt_tensor *lt_grad_max_pool2d(lt_tensor *grad, lt_tensor *indices, const lt_input_meta *self_meta);
/* max_pool2d_backward with respect to grad_output: grad gathered at indices */
lt_tensor *lt_grad_max_pool2d_backward(lt_tensor *grad, lt_tensor *indices);
lt_tensor *lt_grad_avg_pool2d(lt_tensor *grad, const lt_input_meta *self_meta, lt_intlist kernel_size,
                              lt_intlist stride, lt_intlist padding, bool ceil_mode, bool count_include_pad,
                              int64_t divisor_override);
lt_tensor *lt_grad_adaptive_avg_pool2d(lt_tensor *grad, const lt_input_meta *self_meta);
/* adaptive_avg_pool2d_backward with respect to grad_output: the pool again */
lt_tensor *lt_grad_adaptive_avg_pool2d_backward(lt_tensor *grad, const lt_input_meta *grad_output_meta);
lt_tensor *lt_grad_pad(lt_tensor *grad, const lt_input_meta *self_meta, lt_intlist pad, const char *mode);
/* pad_backward with respect to grad_output: zero-padding again */
lt_tensor *lt_grad_pad_backward(lt_tensor *grad, lt_intlist pad, const char *mode);
lt_tensor *lt_grad_upsample_nearest2d(lt_tensor *grad, const lt_input_meta *self_meta, lt_intlist output_size,
                                      double scales_h, double scales_w);
lt_tensor *lt_grad_upsample_bilinear2d(lt_tensor *grad, const lt_input_meta *self_meta, lt_intlist output_size,
                                       bool align_corners, double scales_h, double scales_w);

#endif
