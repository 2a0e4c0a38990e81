/*
** formulas_index.h — derivative helpers for the index ops (see src/ops/README.md, "Derivatives").
** Dims arrive 0-based (possibly negative); index tensors hold 1-based values.
*/
#ifndef LT_FORMULAS_INDEX_H
#define LT_FORMULAS_INDEX_H

#include "autograd.h"

/* index_select: grad index_add'ed into zeros; gather: scatter_add'ed */
lt_tensor *lt_grad_index_select_back(lt_tensor *grad, const lt_input_meta *self_meta, int64_t dim, lt_tensor *index);
lt_tensor *lt_grad_gather_back(lt_tensor *grad, const lt_input_meta *self_meta, int64_t dim, lt_tensor *index);
/* scatter: self's overwritten positions get no gradient; src gets grad gathered (zero-padded to its shape) */
lt_tensor *lt_grad_scatter_self(lt_tensor *grad, int64_t dim, lt_tensor *index);
lt_tensor *lt_grad_scatter_src(lt_tensor *grad, const lt_input_meta *src_meta, int64_t dim, lt_tensor *index);
/* index_add's source: alpha * grad's selected slices */
lt_tensor *lt_grad_index_add_source(lt_tensor *grad, int64_t dim, lt_tensor *index, lt_scalar alpha);
/* index_copy / index_fill: the overwritten slices get no gradient */
lt_tensor *lt_grad_index_fill_zero(lt_tensor *grad, int64_t dim, lt_tensor *index);
/* masked_fill / masked_scatter: the overwritten positions get no gradient */
lt_tensor *lt_grad_masked_fill_zero(lt_tensor *grad, lt_tensor *mask);
lt_tensor *lt_grad_masked_select_back(lt_tensor *grad, const lt_input_meta *self_meta, lt_tensor *mask);
lt_tensor *lt_grad_masked_scatter_source(lt_tensor *grad, const lt_input_meta *source_meta, lt_tensor *mask);
/* take / put */
lt_tensor *lt_grad_take_back(lt_tensor *grad, const lt_input_meta *self_meta, lt_tensor *index);
lt_tensor *lt_grad_put_self(lt_tensor *grad, lt_tensor *index, bool accumulate);
lt_tensor *lt_grad_put_source(lt_tensor *grad, const lt_input_meta *source_meta, lt_tensor *index);

/* masked_fill with a 0-d tensor value (the composite behind x:masked_fill(mask, v)):
** recorded as masked_scatter of the value expanded over the true positions when
** the value requires grad, so the value gets the sum of their gradients. */
lt_tensor *lt_composite_masked_fill_t(lt_tensor *self, lt_tensor *mask, lt_tensor *value, lt_tensor *out);

#endif
