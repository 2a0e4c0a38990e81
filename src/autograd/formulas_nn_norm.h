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

/* normalisation layers: the fused *_backward kernels for a plain backward, differentiable
** ops recomputing the statistics from the input under create_graph (any order) */
lt_tensor *lt_grad_layer_norm_input(lt_tensor *grad, lt_tensor *input, lt_tensor *mean, lt_tensor *rstd,
                                    lt_tensor *weight, lt_intlist normalized_shape, double eps);
lt_tensor *lt_grad_layer_norm_weight(lt_tensor *grad, lt_tensor *input, lt_tensor *mean, lt_tensor *rstd,
                                     lt_intlist normalized_shape, double eps);
lt_tensor *lt_grad_batch_norm_input(lt_tensor *grad, lt_tensor *input, lt_tensor *weight, lt_tensor *save_mean,
                                    lt_tensor *save_invstd, bool training, double eps);
lt_tensor *lt_grad_batch_norm_weight(lt_tensor *grad, lt_tensor *input, lt_tensor *save_mean, lt_tensor *save_invstd,
                                     bool training, double eps);
lt_tensor *lt_grad_batch_norm_bias(lt_tensor *grad, lt_tensor *input);

/* joint derivatives (joint_derivative in src/ops/README.md): the needed gradients of
** (input, weight, bias) from one fused kernel, in a plain backward on the CPU; 0 where they
** decline (create_graph, another device: the per-input formulas then run), -1 on error */
int lt_grad_layer_norm_joint(lt_tensor *grad, lt_tensor *input, lt_tensor *mean, lt_tensor *rstd, lt_tensor *weight,
                             lt_intlist normalized_shape, const bool *needs, lt_tensor **grads);
int lt_grad_batch_norm_joint(lt_tensor *grad, lt_tensor *input, lt_tensor *weight, lt_tensor *save_mean,
                             lt_tensor *save_invstd, bool training, const bool *needs, lt_tensor **grads);

/* nll_loss: the input gradient (the fused kernel for a plain backward, ops under create_graph,
** with the mean's total weight recomputed from the weights) and the weights' gradient */
lt_tensor *lt_grad_nll_loss_self(lt_tensor *grad, lt_tensor *self, const lt_input_meta *self_meta,
                                 lt_tensor *target, lt_tensor *weight, const char *reduction,
                                 int64_t ignore_index, lt_tensor *total_weight);
lt_tensor *lt_grad_nll_loss_weight(lt_tensor *grad, lt_tensor *self, lt_tensor *target, lt_tensor *weight,
                                   const lt_input_meta *weight_meta, const char *reduction, int64_t ignore_index);

/* derivatives of the normalisation *_backward ops (direct calls; every argument independent):
** which is the argument's position in the op's tensor arguments, meta its metadata */
lt_tensor *lt_grad_layer_norm_backward(lt_tensor *grad, int which, lt_tensor *grad_output, lt_tensor *input,
                                       lt_tensor *mean, lt_tensor *rstd, lt_tensor *weight,
                                       lt_intlist normalized_shape, const lt_input_meta *meta);
lt_tensor *lt_grad_layer_norm_backward_weight(lt_tensor *grad, int which, lt_tensor *grad_output, lt_tensor *input,
                                              lt_tensor *mean, lt_tensor *rstd, lt_intlist normalized_shape,
                                              const lt_input_meta *meta);
lt_tensor *lt_grad_batch_norm_backward(lt_tensor *grad, int which, lt_tensor *grad_output, lt_tensor *input,
                                       lt_tensor *weight, lt_tensor *save_mean, lt_tensor *save_invstd,
                                       bool training, const lt_input_meta *meta);
lt_tensor *lt_grad_batch_norm_backward_weight(lt_tensor *grad, int which, lt_tensor *grad_output, lt_tensor *input,
                                              lt_tensor *save_mean, lt_tensor *save_invstd,
                                              const lt_input_meta *meta);
lt_tensor *lt_grad_batch_norm_backward_bias(lt_tensor *grad, const lt_input_meta *grad_output_meta);

/* nll_loss_backward's weight and total_weight: an error (not written) */
lt_tensor *lt_grad_nll_loss_backward_weight(lt_tensor *grad);
lt_tensor *lt_grad_nll_loss_backward_total_weight(lt_tensor *grad);

#endif
