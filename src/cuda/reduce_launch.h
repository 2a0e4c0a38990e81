/*
** reduce_launch.h — planning and launching the reduction kernels
** (src/cuda/kernels/reduce.h), shared by the reduction, scan and nn kernels
** of the CUDA backend (reduce.c, scan.c, ...).
*/
#ifndef LT_CUDA_REDUCE_LAUNCH_H
#define LT_CUDA_REDUCE_LAUNCH_H

#include "core/tensor.h"
#include "cuda/kernels/reduce.h"
#include "cuda/launch.h"

typedef struct lt_cuda_red {
  const char *op;
  int dev;
  lt_ck_red_geom g;              /* kept dims: x's strides, the result's contiguous ones */
  int nd;                        /* the result's rank and shape (keepdim's 1s included) */
  int64_t sizes[LT_MAX_DIMS];
  int64_t nout, R;               /* result elements, elements reduced into each */
} lt_cuda_red;

/* x reduced over dims (meta/reduce.h's rules): 0 or -1 with the error set */
int lt_cuda_red_plan(lt_cuda_red *p, const char *op, const lt_tensor *x, lt_intlist dims, bool keepdim);
/* Run reduce op kop (lt_ck_red_op) of x into out / out2 (contiguous, the
** result's shape, the op's dtypes), with a partials buffer when the kernel
** splits: 0, 1 refused (the caller falls back), -1 error. */
int lt_cuda_red_run(const lt_cuda_red *p, int kop, const lt_tensor *x, lt_tensor *out, lt_tensor *out2, double par);
/* The lines of x along dim d (0 for a 0-d x) as a kept geometry: every dim
** but d, with x's strides (in_strides), out's (out_strides) and out2's
** (out2_strides; 0 when out2 is NULL); out and out2 have x's shape. */
void lt_cuda_line_geom(lt_ck_red_geom *g, const lt_tensor *x, int d, const lt_tensor *out, const lt_tensor *out2);
/* launch_begin, and the reduce kernels of the build that runs */
int lt_cuda_red_begin(lt_cuda_launch *l, int dev, const char *op, const lt_ck_reduce_kernels **k);
/* buf (consumed) as the result in rdt, or copied into out (resized) */
lt_tensor *lt_cuda_red_finish(const char *op, lt_tensor *buf, lt_dtype rdt, lt_tensor *out);

/* LT_CUDA_FALLBACK (launch.h) for the kernels that return an int */
#define LT_CUDA_FALLBACK_INT(NAME, OPSTR, DT, ...) do { \
    if (lt_cuda_host_device_memory()) { \
      lt_cuda_count_fallback(); \
      return ((lt_##NAME##_backend_fn)lt_op_table[LT_OP_##NAME].kernel[LT_KEY_CPU])(__VA_ARGS__); \
    } \
    return lt_error("%s: not implemented for cuda %s tensors (the CUDA kernels refuse it)", OPSTR, \
                    lt_dtype_name(DT)); \
  } while (0)

#endif
