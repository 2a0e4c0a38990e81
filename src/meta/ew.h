/*
** ew.h — the geometry of an elementwise op's result: the broadcast shape of
** its inputs, and the new result laid out like its first full-sized input
** when that one is a dense permutation of contiguous (a transposed input
** gives a transposed result). The CPU's elementwise driver (src/cpu/iter.c)
** and the meta device's pointwise kernels (src/metadev) both make their
** results here, so the two agree on sizes and strides.
*/
#ifndef LT_META_EW_H
#define LT_META_EW_H

#include "core/tensor.h"

/* the broadcast shape of in[0..n-1] (n >= 1) into shape; its rank, or -1 with an error naming op */
int lt_meta_ew_shape(const char *op, lt_tensor *const *in, int n, int64_t *shape);
/* A new contiguous result where the tensor inputs live. Only Lua numbers
** among the inputs (a derivative's `exponent - 1`) give a number again (a
** 0-d wrapped number), which goes with any device. NULL on error. */
lt_tensor *lt_meta_ew_new(lt_dtype dt, int nd, const int64_t *shape, lt_tensor *const *in, int n);
/* The same, laid out like the first input of the result's shape (more than
** one element) when it is dense; contiguous otherwise. */
lt_tensor *lt_meta_ew_result(lt_dtype dt, int nd, const int64_t *shape, lt_tensor *const *in, int n);

#endif
