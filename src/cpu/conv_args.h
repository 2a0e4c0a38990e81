/*
** conv_args.h — the operands of the convolution kernels (nn_conv.c, nn_conv3d.c) made
** contiguous before a product and released after. Private to the CPU backend.
*/
#ifndef LT_CONV_ARGS_H
#define LT_CONV_ARGS_H

#include "core/tensor.h"

/* contiguous copies (or new references) of n tensors; NULLs stay NULL. 0, or -1 with
** nothing left held */
static inline int lt_conv_contig(lt_tensor **dst, lt_tensor *const *src, int n) {
  for (int i = 0; i < n; i++) {
    dst[i] = NULL;
    if (src[i] && !(dst[i] = lt_tensor_contiguous(src[i]))) {
      for (int k = 0; k < i; k++) lt_tensor_release(dst[k]);
      return -1;
    }
  }
  return 0;
}

static inline void lt_conv_release(lt_tensor **t, int n) { for (int i = 0; i < n; i++) lt_tensor_release(t[i]); }

#endif
