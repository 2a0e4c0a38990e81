/*
** creation.h — the device-neutral parts of the creation and random ops: the
** new result's size checks, a fill value's range check, the length and
** steps of arange/range, and the bounds of integer sampling. The CPU's
** kernels (src/cpu/creation.c, random.c) and the CUDA ones (src/cuda/
** creation.c, random.c) share them, so they reject the same input alike.
*/
#ifndef LT_META_CREATION_H
#define LT_META_CREATION_H

#include "core/tensor.h"

/* A new contiguous tensor for creation op `op` on dev (type -1: the cpu):
** checks the sizes (naming the op); dtype < 0 picks dflt. Memory
** uninitialised (allocated through dev's backend). */
lt_tensor *lt_meta_creation_new(const char *op, int ndim, const int64_t *sizes, int dtype, int dflt, lt_device dev);

/* v as one element of dt in host memory (elem: 8 bytes); integer dtypes
** refuse values they cannot hold, as PyTorch does */
int lt_meta_fill_value(const char *op, lt_scalar v, lt_dtype dt, void *elem);

/* arange (inclusive false) and Torch7's range (inclusive): p[i] = start + i
** * step for i < n, exactly in int64 when every bound is an integer (is_int),
** else in double; dflt the result's dtype when none is given */
typedef struct lt_meta_seq {
  int64_t n;
  bool is_int;
  int64_t istart, istep;
  double fstart, fstep;
  lt_dtype dflt;
} lt_meta_seq;
int lt_meta_range(const char *op, lt_scalar start, lt_scalar end, lt_scalar step, bool inclusive, lt_meta_seq *s);

/* eye's sizes {n, m} (m absent: n), both non-negative; linspace and logspace's steps, non-negative */
int lt_meta_eye_shape(int64_t n, int64_t m, int64_t sizes[2]);
int lt_meta_check_steps(const char *op, int64_t steps);

/* [low, high) must be non-empty and representable in dt (randint, random_) */
int lt_meta_int_bounds(const char *op, lt_dtype dt, int64_t low, int64_t high);

/* randperm's result: n >= 0 and 1..n exact in the dtype (dtype < 0: int64) */
lt_tensor *lt_meta_randperm_new(int64_t n, int dtype, lt_device dev);

/* native_dropout's results o (input's dtype) and m (bool) when no draw is
** needed (eval, p 0 or 1, no elements): filled and copied; 1 when done, 0
** when a draw is needed, -1 on error (p and input checked before). */
int lt_meta_dropout_trivial(lt_tensor *input, double p, bool train, lt_tensor *o, lt_tensor *m);
/* _dropout_mask's result (self's dtype and device, shape or self's sizes),
** filled when p is 0 or 1 or it is empty (*done); NULL on error */
lt_tensor *lt_meta_dropout_mask_new(const char *op, lt_tensor *self, double p, lt_intlist shape, bool *done);

/* multinomial(self, num_samples): self 1-D or 2-D floating weights with at least one
** category, num_samples > 0 (at most the categories without replacement). Fills the int64
** result's shape ((rows, num_samples) or (num_samples)) and returns its dim count, or -1. */
int lt_meta_multinomial(const char *op, const lt_tensor *self, int64_t num_samples, bool replacement, int64_t *sizes);

#endif
