/*
** formulas_shape.h — derivative helpers for the shape ops (see src/ops/README.md, "Derivatives"),
** and cat, whose Tensor[] input the generator cannot give derivatives to.
** Dims arrive as the C kernels get them: 0-based, possibly negative.
*/
#ifndef LT_FORMULAS_SHAPE_H
#define LT_FORMULAS_SHAPE_H

#include "autograd.h"

/* view, squeeze, unsqueeze: grad seen with the input's shape */
lt_tensor *lt_grad_reshape_to(lt_tensor *grad, const lt_input_meta *self_meta);
/* permute: the inverse permutation */
lt_tensor *lt_grad_permute_back(lt_tensor *grad, lt_intlist dims);
/* narrow / select: grad placed into zeros of the input's shape */
lt_tensor *lt_grad_narrow_back(lt_tensor *grad, const lt_input_meta *self_meta, int64_t dim, int64_t start,
                               int64_t length);
lt_tensor *lt_grad_select_back(lt_tensor *grad, const lt_input_meta *self_meta, int64_t dim, int64_t index);
/* unfold: overlapping windows summed back into place */
/* as_strided: grad summed into a flat buffer over the storage range both geometries
** touch, read back at self's positions (self is the saved input, for its geometry) */
lt_tensor *lt_grad_as_strided(lt_tensor *grad, lt_tensor *self, lt_intlist size, lt_intlist stride,
                              int64_t storage_offset);
lt_tensor *lt_grad_unfold_back(lt_tensor *grad, const lt_input_meta *self_meta, int64_t dimension, int64_t size,
                               int64_t step);
/* diagonal: grad on the diagonal of zeros; diag (1-D and 2-D input) */
lt_tensor *lt_grad_diagonal_back(lt_tensor *grad, const lt_input_meta *self_meta, int64_t offset, int64_t dim1,
                                 int64_t dim2);
lt_tensor *lt_grad_diag_back(lt_tensor *grad, const lt_input_meta *self_meta, int64_t diagonal);
/* roll: rolled back by the negated shifts */
lt_tensor *lt_grad_roll_back(lt_tensor *grad, lt_intlist shifts, lt_intlist dims);

/* The cat op (a composite): the dispatched _cat, plus a hand-made CatBackward0
** node when an input requires grad. */
lt_tensor *lt_composite_cat(lt_tensor *const *tensors, int tensors_n, int64_t dim, lt_tensor *out);

#endif
