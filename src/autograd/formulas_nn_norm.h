/*
** formulas_nn_norm.h — derivative helpers for softmax, the normalisations and
** the losses (src/ops/nn_norm.lua, src/ops/nn_loss.lua). Dims are 0-based.
*/
#ifndef LT_FORMULAS_NN_NORM_H
#define LT_FORMULAS_NN_NORM_H

#include "autograd.h"

/* double backward of softmax_backward / log_softmax_backward */
lt_tensor *lt_grad_softmax_backward_output(lt_tensor *grad, lt_tensor *grad_output, lt_tensor *output, int64_t dim);
lt_tensor *lt_grad_log_softmax_backward_grad(lt_tensor *grad, lt_tensor *output, int64_t dim);
lt_tensor *lt_grad_log_softmax_backward_output(lt_tensor *grad, lt_tensor *grad_output, lt_tensor *output,
                                               int64_t dim);

/* layer_norm's bias: grad summed over the dims before normalized_shape */
lt_tensor *lt_grad_layer_norm_bias(lt_tensor *grad, lt_intlist normalized_shape);

#endif
