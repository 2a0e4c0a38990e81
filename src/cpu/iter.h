/*
** iter.h — elementwise iteration (the TensorIterator idea): broadcast the
** inputs to one shape, pick the result dtype with PyTorch's promotion rules,
** merge dims that are contiguous in every operand, and call a per-dtype loop
** over runs of the innermost dim, split over the thread pool when large.
*/
#ifndef LT_ITER_H
#define LT_ITER_H

#include "core/tensor.h"

#define LT_ITER_MAX_OPERANDS 5          /* the output and up to four inputs */
#define LT_EW_MAX_IN (LT_ITER_MAX_OPERANDS - 1)

/* One run of n elements: data[k] points at operand k's first element (k = 0
** is the output), strides[k] is its step in bytes (0 for a broadcast value). */
typedef void (*lt_ew_loop)(char **data, const int64_t *strides, int64_t n, void *ctx);


/* A raw iteration over operands that already have the broadcast shape. */
typedef struct lt_iter {
  int nt, ndim;                      /* operands; dims after merging (innermost first) */
  int64_t numel;
  int64_t shape[LT_MAX_DIMS];
  int64_t st[LT_MAX_DIMS][LT_ITER_MAX_OPERANDS];   /* byte strides [dim][operand] */
  char *data[LT_ITER_MAX_OPERANDS];
  lt_ew_loop fn;
  void *ctx;
} lt_iter;

/* Set up from row-major sizes and per-operand byte strides (strides[k][dim]);
** dims are ordered by operand 0's strides, then merged. */
void lt_iter_init(lt_iter *it, int nt, int ndim, const int64_t *sizes,
                  char *const *data, const int64_t (*strides)[LT_MAX_DIMS]);
/* Run fn over every element; parallel above 2*grain elements (0: default grain). */
void lt_iter_run(lt_iter *it, lt_ew_loop fn, void *ctx, int64_t grain);

/* An elementwise call: inputs, the dtype the loop reads each input in (inputs
** of another dtype are converted first), the dtype it writes, the loop. */
typedef struct lt_ew {
  const char *op;                    /* Lua name, for errors */
  int nin;
  lt_tensor *in[LT_EW_MAX_IN];
  lt_dtype in_dt[LT_EW_MAX_IN];
  lt_dtype out_dt;
  lt_ew_loop fn;
  void *ctx;
  int64_t grain;                     /* 0: LT_GRAIN_ELEMENTWISE */
} lt_ew;

/*
** Broadcast, allocate the result (or check/resize `out`, casting into its
** dtype when it differs), convert inputs, run. 1-element inputs are read once
** into a scalar slot. Returns a new reference (to `out` when given), or NULL
** with an error naming e->op.
*/
lt_tensor *lt_ew_run(lt_ew *e, lt_tensor *out);

/* The cast loop dst <- src for a dtype pair (never NULL). Float -> integer
** saturates (NaN -> 0) instead of invoking undefined behaviour. */
lt_ew_loop lt_cast_loop(lt_dtype dst, lt_dtype src);

#endif
