/*
** metadev.h — the meta device: tensors with sizes, strides and dtype and no
** data (torch.empty(2, 3, {device = "meta"})), for reasoning about shapes
** without memory: building a large model before loading its checkpoint,
** checking a program's shapes, tracing.
**
** A backend like the CPU and CUDA ones (backend.c), registered at
** LT_KEY_META. Its storages have a size and a NULL data pointer
** (core/storage.c makes them); its copies and fills do nothing, and copying
** out of it (item(), printing's data, x:to("cpu"), saving) is an error.
**
** Its kernels run each op's shape function only. Most come from the op
** families of src/ops/meta.lua: tools/gen_meta.lua writes, into the
** generated kernels_meta.c, one kernel per op that calls the family's
** function here (pointwise, reduce, factory, ...). The others are written by
** hand (kernels.c, nn.c) over the device-neutral shape functions of
** src/meta, which the CPU's kernels call too: both devices agree on every
** result's sizes, strides and dtype by construction.
*/
#ifndef LT_METADEV_H
#define LT_METADEV_H

#include "core/tensor.h"

/* register the backend and its kernel table (lt_init calls it) */
void lt_metadev_init(void);

/* the meta device */
static inline lt_device lt_metadev_device(void) { lt_device d = {LT_DEV_META, 0}; return d; }

/* how a family's function picks the result dtype */
enum {
  LT_MD_PROMOTE,   /* the inputs' promoted type (lt_result_type) */
  LT_MD_FLOAT,     /* the same, integers and bool becoming the default float dtype */
  LT_MD_BOOL,      /* bool (comparisons, tests); reductions: uint8 stays uint8 */
  LT_MD_SELF,      /* the first input's */
  LT_MD_SUM,       /* reductions: integers become int64 (lt_meta_reduce_dtype) */
  LT_MD_MEAN,      /* reductions: floating point input only */
  LT_MD_INDEX,     /* int64 */
};

/* The result of a kernel: out checked (castable from dt) and resized, or a
** new contiguous meta tensor. New reference, NULL on error. */
lt_tensor *lt_metadev_result(const char *op, lt_tensor *out, lt_dtype dt, int ndim, const int64_t *sizes);

/* pointwise: the broadcast of ts[0..n-1] (NULLs skipped), dtype by mode
** (dtype >= 0 overrides), laid out as the CPU lays it out (meta/ew.h) */
lt_tensor *lt_metadev_pointwise(const char *op, lt_tensor *const *ts, int n, int mode, int dtype, lt_tensor *out);
/* self's shape; dtype >= 0 or self's */
lt_tensor *lt_metadev_like(const char *op, lt_tensor *self, int dtype, lt_tensor *out);
/* self itself, retained (in-place random fills and updates: nothing to compute) */
lt_tensor *lt_metadev_same(const char *op, lt_tensor *self);
/* self reduced over dims (absent or empty: all), dtype by mode */
lt_tensor *lt_metadev_reduce(const char *op, lt_tensor *self, lt_intlist dims, bool keepdim, int mode, int dtype,
                             lt_tensor *out);
/* two results of the reduced shape: mode LT_MD_SELF gives (self's dtype, int64
** indices), LT_MD_FLOAT two floating point ones (var_mean). 0 or -1. */
int lt_metadev_reduce2(const char *op, lt_tensor *self, lt_intlist dims, bool keepdim, int mode, lt_tensor **a,
                       lt_tensor **b);
/* two results of self's shape along dim (cummax, sort): self's dtype and int64 */
int lt_metadev_scan2(const char *op, lt_tensor *self, int64_t dim, lt_tensor **a, lt_tensor **b);
/* a factory's result: size, dtype (< 0: dflt, < 0 again: the default float dtype) */
lt_tensor *lt_metadev_factory(const char *op, lt_intlist size, int dtype, int dflt, lt_device device);
/* after self (zeros_like, new_zeros): size given or self's, dtype given or self's */
lt_tensor *lt_metadev_factory_like(const char *op, lt_tensor *self, lt_intlist size, int dtype, lt_device device);
/* "op: ... depends on the data" for the ops whose result shape the data decides; NULL */
lt_tensor *lt_metadev_data_dependent(const char *op);

#endif
