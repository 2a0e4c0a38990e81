/*
** foreach.h — the argument checks of the foreach and fused optimizer ops
** (src/ops/optim.lua), shared by their CPU and CUDA kernels so both reject a
** bad list with the same message.
*/
#ifndef LT_META_FOREACH_H
#define LT_META_FOREACH_H

#include "core/tensor.h"

/* nbuf parallel lists (lists[b] with counts[b] tensors, named names[b]):
** every list as long as list 0, no tensor missing, list 0's tensors float32
** or float64, and every list's i-th tensor of the dtype, shape and device of
** list 0's. 0 or -1. */
int lt_meta_foreach_lists(const char *op, int nbuf, lt_tensor *const *const *lists, const int *counts,
                          const char *const *names);
/* a list of n 1-element tensors (step counts, NAdam's mu products) named arg, for n
** parameters. 0 or -1. */
int lt_meta_foreach_scalars(const char *op, const char *arg, lt_tensor *const *ts, int ts_n, int n);
/* _foreach_norm's list: not empty, float32 or float64; *dt is the result's
** dtype (float64 when any tensor is). 0 or -1. */
int lt_meta_foreach_norm(lt_tensor *const *ts, int n, lt_dtype *dt);

#endif
