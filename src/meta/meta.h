/*
** meta.h — device-neutral shape inference and argument checks: what an op
** can know from sizes, strides and dtypes alone. Backends and composites
** share these, so a CUDA kernel and the CPU kernel reject the same bad input
** with the same message, and the meta device can run them without data.
** Functions return 0 / -1 (error slot set, message naming op and argument).
*/
#ifndef LT_META_H
#define LT_META_H

#include "core/tensor.h"

/* a probability argument: 0 <= p <= 1 (dropout and friends); arg names it */
int lt_meta_check_prob(const char *op, const char *arg, double p);
/* t must have a floating point dtype */
int lt_meta_check_float(const char *op, const char *arg, const lt_tensor *t);

#endif
