/*
** meta.h — device-neutral shape inference and argument checks: what an op
** can know from sizes, strides and dtypes alone. Backends and composites
** share these, so a CUDA kernel and the CPU kernel reject the same bad input
** with the same message, and the meta device can run them without data.
** Functions return 0 / -1 (error slot set, message naming op and argument).
**
** This header has the checks every topic uses; the topics have their own:
** meta/conv.h, meta/pool.h, meta/resample.h, meta/norm.h, meta/loss.h, meta/einsum.h,
** meta/reduce.h, meta/foreach.h.
*/
#ifndef LT_META_H
#define LT_META_H

#include "core/tensor.h"

/* a probability argument: 0 <= p <= 1 (dropout and friends); arg names it */
int lt_meta_check_prob(const char *op, const char *arg, double p);
/* add/sub's alpha for a result of dtype dt: an integer for integral tensors, 0 or 1 for bool */
int lt_meta_check_alpha(const char *op, lt_dtype dt, lt_scalar alpha);
/* t must have a floating point dtype */
int lt_meta_check_float(const char *op, const char *arg, const lt_tensor *t);
/* nan_to_num's replacements of NaN, +inf and -inf for floating dtype dt, v[0..2]:
** the given numbers (defaults 0 and dt's largest and lowest), saturated to dt's range */
void lt_meta_nan_to_num_values(lt_dtype dt, lt_scalar nan, lt_scalar posinf, lt_scalar neginf, double v[3]);
/* t must be float32 or float64 (the nn kernels' dtypes) */
int lt_meta_check_f32_or_f64(const char *op, const char *arg, const lt_tensor *t);

/* An int list of 1 or n entries into v[n] (one entry: repeated), every entry >= lo
** (lo > 0: "positive", else "non-negative"). An absent or empty list takes dflt[n]
** when dflt is not NULL, else is an error. */
int lt_meta_int_tuple(const char *op, const char *arg, lt_intlist l, int n, int64_t lo, const int64_t *dflt,
                      int64_t *v);
/* the list of a 1-D op (1 entry) as the 2-D op's {fill, entry}; an absent or empty list
** leaves v alone when optional */
int lt_meta_widen_1d(const char *op, const char *arg, lt_intlist l, int64_t fill, bool optional, int64_t *v);
/* the input of a 1-D conv or pool: (C, L) or (N, C, L) */
int lt_meta_check_1d_input(const char *op, int ndim);

/* The result of an op: out resized to sizes (retained; it must be on dev), or a new
** tensor of dtype dt on dev (lt_tensor_new allocates through dev's backend). NULL on error. */
lt_tensor *lt_meta_result(const char *op, lt_tensor *out, lt_dtype dt, lt_device dev, int ndim,
                          const int64_t *sizes);

#endif
