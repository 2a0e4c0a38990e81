/*
** norm.h — the geometry and checks of the normalisation ops (src/ops/nn_norm.lua):
** layer_norm and batch_norm, their backward kernels, group_norm, and softmax.
*/
#ifndef LT_META_NORM_H
#define LT_META_NORM_H

#include "meta/meta.h"

/* layer_norm: a floating point input whose trailing dims are normalized_shape, seen as M
** rows of D; weight and bias (each NULL, or D floating point elements) */
int lt_meta_layer_norm(const char *op, const lt_tensor *input, lt_intlist normalized_shape, const lt_tensor *weight,
                       const lt_tensor *bias, int64_t *M, int64_t *D);
/* layer_norm_backward(_weight): grad_output of input's shape, mean and rstd of M elements;
** weight as for layer_norm (NULL for the weight gradient) */
int lt_meta_layer_norm_backward(const char *op, const lt_tensor *grad_output, const lt_tensor *input,
                                const lt_tensor *mean, const lt_tensor *rstd, const lt_tensor *weight,
                                lt_intlist normalized_shape, int64_t *M, int64_t *D);

/* batch_norm: a floating point input (N, C, ...) seen as (N, C, S); more than one value
** per channel when training, the running statistics when not; weight, bias,
** running_mean, running_var each NULL or C floating point elements */
int lt_meta_batch_norm(const char *op, const lt_tensor *input, const lt_tensor *weight, const lt_tensor *bias,
                       const lt_tensor *running_mean, const lt_tensor *running_var, bool training, int64_t *N,
                       int64_t *C, int64_t *S);
/* batch_norm's backward kernels: grad_output of input's shape; weight, save_mean and
** save_invstd each NULL or C floating point elements */
int lt_meta_batch_norm_backward(const char *op, const lt_tensor *grad_output, const lt_tensor *input,
                                const lt_tensor *weight, const lt_tensor *save_mean, const lt_tensor *save_invstd,
                                int64_t *N, int64_t *C, int64_t *S);

/* softmax, log_softmax: the result dtype *odt (dtype when >= 0, else self's) must be
** floating point; *d the wrapped dim */
int lt_meta_softmax(const char *op, const lt_tensor *self, int dtype, int64_t dim, lt_dtype *odt, int *d);
/* their backwards: grad_output of output's shape, a floating point output; *d the wrapped dim */
int lt_meta_softmax_backward(const char *op, const lt_tensor *grad_output, const lt_tensor *output, int64_t dim,
                             int *d);

/* group_norm: input (N, C, ...) with num_groups dividing C; weight, bias NULL or 1-D of C */
int lt_meta_group_norm(const char *op, const lt_tensor *input, int64_t num_groups, const lt_tensor *weight,
                       const lt_tensor *bias);

#endif
