/*
** formulas_nn_misc.h — derivative helpers for the ops declared in src/ops/nn_misc.lua.
** Each returns a new reference, or NULL with the error set. The activation helpers run the
** fused kernel _activation_backward when no graph of the backward pass is being recorded,
** and the same derivative written with ops (so double backward works) when one is.
*/
#ifndef LT_FORMULAS_NN_MISC_H
#define LT_FORMULAS_NN_MISC_H

#include "autograd.h"

/* grad^T @ input: linear's weight gradient, laid out like the weight */
lt_tensor *lt_nn_grad_linear_weight(lt_tensor *grad, lt_tensor *input);
lt_tensor *lt_nn_grad_mish(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_nn_grad_hardsigmoid(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_nn_grad_hardswish(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_nn_grad_softsign(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_nn_grad_logsigmoid(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_nn_grad_threshold(lt_tensor *grad, lt_tensor *self, lt_scalar threshold);
lt_tensor *lt_nn_grad_shrink(lt_tensor *grad, lt_tensor *self, lt_scalar lambd);
lt_tensor *lt_nn_grad_tanhshrink(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_nn_grad_selu(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_nn_grad_celu(lt_tensor *grad, lt_tensor *self, lt_scalar alpha);
lt_tensor *lt_nn_grad_prelu_self(lt_tensor *grad, lt_tensor *self, lt_tensor *weight);
lt_tensor *lt_nn_grad_prelu_weight(lt_tensor *grad, lt_tensor *self, lt_tensor *weight);
/* grad * mask * 1/(1-p) (train), grad (not train) */
lt_tensor *lt_nn_grad_dropout(lt_tensor *grad, lt_tensor *mask, double p, bool train);
/* rows of grad added into a [num_embeddings, dim] zero tensor; padding_idx's row stays 0 */
lt_tensor *lt_nn_grad_embedding(lt_tensor *grad, lt_tensor *indices, const lt_input_meta *weight_meta,
                                int64_t padding_idx);

#endif
