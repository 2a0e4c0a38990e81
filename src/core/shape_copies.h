/*
** shape_copies.h — the device-neutral kernels of contiguous, _cat, flip, roll
** and diag (`any` kernels: every backend runs them through its copy and
** fill). Each returns a new reference, NULL with the error slot set.
*/
#ifndef LT_SHAPE_COPIES_H
#define LT_SHAPE_COPIES_H

#include "core/tensor.h"

lt_tensor *lt_core_contiguous(lt_tensor *self);
lt_tensor *lt_core__cat(lt_tensor *const *tensors, int tensors_n, int64_t dim, lt_tensor *out);
lt_tensor *lt_core_flip(lt_tensor *self, lt_intlist dims);
lt_tensor *lt_core_roll(lt_tensor *self, lt_intlist shifts, lt_intlist dims);
lt_tensor *lt_core_diag(lt_tensor *self, int64_t diagonal, lt_tensor *out);

#endif
