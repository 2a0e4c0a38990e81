/*
** reduce.h — what reductions, scans and sorts (src/ops/reduce.lua, sort.lua)
** know before reading data: which dims they reduce, the result's shape and
** dtype, and their argument checks. How a backend lays the data out for its
** loops (the CPU's [O, R, I] blocks, src/cpu/red.h) is its own.
*/
#ifndef LT_META_REDUCE_H
#define LT_META_REDUCE_H

#include "meta/meta.h"

/* ---- reductions over a list of dims ---- */

/* the dims a reduction over dims reduces (absent or empty: all) as mask[ndim]: wrapped,
** each at most once. A 0-d tensor accepts dim 0 / -1 and reduces nothing. */
int lt_meta_reduce_mask(const char *op, int ndim, lt_intlist dims, bool *mask);
/* the result's shape: the kept dims, and the reduced ones as 1 with keepdim; its rank */
int lt_meta_reduce_shape(int ndim, const int64_t *sizes, const bool *mask, bool keepdim, int64_t *out);
/* mask and shape in one */
int lt_meta_reduce(const char *op, int ndim, const int64_t *sizes, lt_intlist dims, bool keepdim, bool *mask,
                   int *ndim_out, int64_t *out);

/* sum, prod, mean and friends: the result dtype, dtype (>= 0) if given, else int64 for an
** integral input, else the input's; mean needs a floating point one */
int lt_meta_reduce_dtype(const char *op, lt_dtype in, int dtype, bool mean, lt_dtype *rdt);
/* max/min and their indices have no identity: reduced elements (per result element)
** must exist unless the result is empty; all_dims: no dim was named */
int lt_meta_reduce_nonempty(const char *op, int64_t reduced, int64_t kept, bool all_dims);
/* var/std: a floating point input, at most one of unbiased (>= 0) and correction; the
** correction that applies */
int lt_meta_var_correction(const char *op, lt_dtype in, int unbiased, lt_scalar correction, double *corr);
/* norm: a floating point input and dtype (when >= 0), p not NaN */
int lt_meta_norm_check(const char *op, lt_dtype in, int dtype, double p);

/* ---- one-dim ops: scans, sort, topk, kthvalue, median, mode ---- */

/* geometry of x's shape around dim d: O elements before it, R along it, I after */
typedef struct lt_line_geom {
  int d;               /* wrapped dim (0 for a 0-d tensor) */
  int64_t O, R, I;
} lt_line_geom;
int lt_meta_line(const char *op, int ndim, const int64_t *sizes, int64_t dim, lt_line_geom *g);
/* the size of dim (already checked; 1 for a 0-d tensor) */
int64_t lt_meta_dim_size(int ndim, const int64_t *sizes, int64_t dim);
/* sizes with dim d resized to n (keep), or removed; the rank */
int lt_meta_line_shape(int ndim, const int64_t *sizes, int d, int64_t n, bool keep, int64_t *out);
/* topk: 0 <= k <= the size of dim */
int lt_meta_topk_check(int ndim, const int64_t *sizes, int64_t k, int64_t dim);
/* kthvalue: 1 <= k <= the size of dim */
int lt_meta_kthvalue_check(int ndim, const int64_t *sizes, int64_t k, int64_t dim);
/* median, nanmedian, mode along dim: the dim must not be empty unless the result is */
int lt_meta_line_select_check(const char *op, int ndim, const int64_t *sizes, int64_t dim);

#endif
