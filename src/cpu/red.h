/*
** red.h — shared plumbing of the reduction, scan and sort kernels (internal
** to src/cpu/reduce.c, red_*.c and sort.c).
**
** A reduction is planned once: the input is brought to a contiguous block
** seen as [O, R, I] (R the reduced elements, O and I the kept ones before and
** after them in memory), the kernel writes an [O, I] buffer, and
** lt_red_finish turns that buffer into the result (logical order, result
** dtype, out=). Only the output-sized buffer is ever copied for the layout.
** The device-neutral part (the reduced dims, the result's shape and dtype,
** the checks) is meta/reduce.h's; this is the CPU's layout of the data.
*/
#ifndef LT_RED_H
#define LT_RED_H

#include "core/tensor.h"
#include "cpu/parallel.h"
#include "meta/reduce.h"

typedef struct lt_red {
  const char *op;
  lt_tensor *src;                   /* owned; its data is the [O, R, I] block */
  int64_t O, R, I;
  int ndim_out;
  int64_t osizes[LT_MAX_DIMS];      /* the result's logical shape */
  int64_t ostrides[LT_MAX_DIMS];    /* the [O, I] buffer seen with that shape */
  bool ordered;                     /* buffer order is already the logical order */
} lt_red;

/* Plan a reduction of x over dims (n <= 0: all dims). `logical`: the R
** elements must come in row-major order (flat indices of argmax). 0 or -1. */
int lt_red_plan(lt_red *g, const char *op, lt_tensor *x, lt_intlist dims, bool keepdim, bool logical);
/* Consume buf (1-D, O*I elements) and return the result in dtype rdt, or write out. */
lt_tensor *lt_red_finish(lt_red *g, lt_tensor *buf, lt_dtype rdt, lt_tensor *out);
void lt_red_free(lt_red *g);
static inline const void *lt_red_data(const lt_red *g) { return lt_tensor_data(g->src); }
/* a 1-D buffer of n elements */
lt_tensor *lt_red_buffer(lt_dtype dt, int64_t n, lt_device dev);

/* Geometry of a one-dim op (scans, sort): x contiguous as [O, R, I] around dim d. */
typedef struct lt_line {
  lt_tensor *src;      /* owned, contiguous */
  int d;               /* wrapped dim (0 for a 0-d tensor) */
  int64_t O, R, I;
} lt_line;
int lt_line_plan(lt_line *g, const char *op, lt_tensor *x, int64_t dim);

#define LT_RED_TILE 1024  /* columns a task owns in an outer reduction: whole cache lines, few streams */

static inline int64_t lt_red_grain(int64_t work_per_item) {
  if (work_per_item < 1) work_per_item = 1;
  int64_t g = LT_GRAIN_ELEMENTWISE / work_per_item;
  return g < 1 ? 1 : g;
}

#endif
