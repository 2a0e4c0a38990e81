/*
** formulas_reduce.h — derivative helpers for the reduce ops (see src/ops/README.md, "Derivatives").
** Dims arrive as the C kernels get them: 0-based, possibly negative; index tensors hold 1-based values.
*/
#ifndef LT_FORMULAS_REDUCE_H
#define LT_FORMULAS_REDUCE_H

#include "autograd.h"

/* sum, nansum, mean, nanmean: grad spread back over the reduced dims */
lt_tensor *lt_grad_sum(lt_tensor *grad, const lt_input_meta *self_meta, lt_intlist dim, bool keepdim);
lt_tensor *lt_grad_nansum(lt_tensor *grad, lt_tensor *self, lt_intlist dim, bool keepdim);
lt_tensor *lt_grad_mean(lt_tensor *grad, const lt_input_meta *self_meta, lt_intlist dim, bool keepdim);
lt_tensor *lt_grad_nanmean(lt_tensor *grad, lt_tensor *self, lt_intlist dim, bool keepdim);
/* prod over one dim (LT_NOINT: all elements), exact when self holds zeros */
lt_tensor *lt_grad_prod(lt_tensor *grad, lt_tensor *self, lt_tensor *result, int64_t dim, bool keepdim);

/* full max/min/median/nanmedian: grad shared evenly among the elements equal to result */
lt_tensor *lt_grad_evenly(lt_tensor *grad, lt_tensor *self, lt_tensor *result);
/* amax/amin: the same per reduced slice */
lt_tensor *lt_grad_amax(lt_tensor *grad, lt_tensor *self, lt_tensor *result, lt_intlist dim, bool keepdim);
/* max/min/kthvalue/median/nanmedian/mode along dim: grad sent to the returned indices */
lt_tensor *lt_grad_value_select(lt_tensor *grad, const lt_input_meta *self_meta, int64_t dim, bool keepdim,
                                lt_tensor *indices);
/* sort/topk/cummax/cummin: indices have self's rank; repeated indices accumulate */
lt_tensor *lt_grad_index_scatter(lt_tensor *grad, const lt_input_meta *self_meta, int64_t dim, lt_tensor *indices);

lt_tensor *lt_grad_var(lt_tensor *grad, lt_tensor *self, lt_intlist dim, int unbiased, bool keepdim,
                       lt_scalar correction);
lt_tensor *lt_grad_std(lt_tensor *grad, lt_tensor *self, lt_tensor *result, lt_intlist dim, int unbiased,
                       bool keepdim, lt_scalar correction);
lt_tensor *lt_grad_norm(lt_tensor *grad, lt_tensor *self, lt_tensor *result, lt_scalar p, lt_intlist dim,
                        bool keepdim);
lt_tensor *lt_grad_norm_str(lt_tensor *grad, lt_tensor *self, lt_tensor *result, const char *p, lt_intlist dim,
                            bool keepdim);
lt_tensor *lt_grad_logsumexp(lt_tensor *grad, lt_tensor *self, lt_tensor *result, lt_intlist dim, bool keepdim);

/* scans */
lt_tensor *lt_grad_cumsum(lt_tensor *grad, const lt_input_meta *self_meta, int64_t dim);
lt_tensor *lt_grad_cumprod(lt_tensor *grad, lt_tensor *self, lt_tensor *result, int64_t dim);

#endif
