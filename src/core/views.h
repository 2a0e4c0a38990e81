/*
** views.h — the stride-only views, shared by every backend: they compute
** sizes, strides and an offset over the same storage and never touch the
** data. The op declarations name them as `any` kernels; code below the
** dispatcher that needs a view without recording autograd history (the Lua
** indexing fast path, the engine) calls them directly. Every function returns
** a new reference, NULL with the error slot set on failure.
*/
#ifndef LT_VIEWS_H
#define LT_VIEWS_H

#include "core/tensor.h"

/* Resolve a requested shape (one entry may be -1) against numel into out.
** Returns the number of dims, or -1 with an error naming op. */
int lt_shape_infer(const char *op, lt_intlist size, int64_t numel, int64_t *out);
/* strides for seeing t with shape ns (nn dims) without a copy; false when none exist */
bool lt_view_strides(const lt_tensor *t, int nn, const int64_t *ns, int64_t *nst);

lt_tensor *lt_strided_view(lt_tensor *self, lt_intlist size);
lt_tensor *lt_strided_squeeze(lt_tensor *self, int64_t dim);
lt_tensor *lt_strided_unsqueeze(lt_tensor *self, int64_t dim);
lt_tensor *lt_strided_transpose(lt_tensor *self, int64_t dim0, int64_t dim1);
lt_tensor *lt_strided_permute(lt_tensor *self, lt_intlist dims);
lt_tensor *lt_strided_expand(lt_tensor *self, lt_intlist size);
lt_tensor *lt_strided_narrow(lt_tensor *self, int64_t dim, int64_t start, int64_t length);
lt_tensor *lt_strided_select(lt_tensor *self, int64_t dim, int64_t index);
lt_tensor *lt_strided_unfold(lt_tensor *self, int64_t dimension, int64_t size, int64_t step);
lt_tensor *lt_strided_diagonal(lt_tensor *self, int64_t offset, int64_t dim1, int64_t dim2);
/* any geometry over self's storage: storage_offset absolute (LT_NOINT: self's), checked
** against the storage's size */
lt_tensor *lt_strided_as_strided(lt_tensor *self, lt_intlist size, lt_intlist stride, int64_t storage_offset);
/* self takes source's storage and geometry (set_ keeps the dtype; _set_data is `p.data = q`) */
lt_tensor *lt_strided_set_(lt_tensor *self, lt_tensor *source);
lt_tensor *lt_strided__set_data(lt_tensor *self, lt_tensor *source);

#endif
