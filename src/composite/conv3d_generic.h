/*
** conv3d_generic.h — the device-neutral kernels of conv3d and its two backward
** products (`any` kernels, src/composite/nn_conv3d.c): written with other ops'
** entry points (unfold views, one reshape, matmul), they run on every backend
** that has no kernel of its own (the CUDA backend, the meta device); the CPU has
** its own (src/cpu/nn_conv3d.c). Each returns a new reference, NULL with the
** error slot set.
*/
#ifndef LT_CONV3D_GENERIC_H
#define LT_CONV3D_GENERIC_H

#include "core/tensor.h"

lt_tensor *lt_conv3d_generic(lt_tensor *input, lt_tensor *weight, lt_tensor *bias, lt_intlist stride,
                             lt_intlist padding, lt_intlist dilation, int64_t groups);
lt_tensor *lt_conv3d_backward_input_generic(lt_tensor *grad_output, lt_tensor *weight, lt_intlist input_size,
                                            lt_intlist stride, lt_intlist padding, lt_intlist dilation,
                                            int64_t groups);
lt_tensor *lt_conv3d_backward_weight_generic(lt_tensor *grad_output, lt_tensor *input, lt_intlist weight_size,
                                             lt_intlist stride, lt_intlist padding, lt_intlist dilation,
                                             int64_t groups);

#endif
