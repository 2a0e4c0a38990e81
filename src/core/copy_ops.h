/*
** copy_ops.h — the device-neutral kernels of clone, copy_, fill_, zero_ and
** _to_copy (`any` kernels in the op declarations). Each returns a new
** reference (self for the in-place ones), NULL with the error slot set.
*/
#ifndef LT_COPY_OPS_H
#define LT_COPY_OPS_H

#include "core/tensor.h"

lt_tensor *lt_core_clone(lt_tensor *self);
lt_tensor *lt_core_copy_(lt_tensor *self, lt_tensor *src);
lt_tensor *lt_core_fill_(lt_tensor *self, lt_scalar value);
lt_tensor *lt_core_zero_(lt_tensor *self);
lt_tensor *lt_core__to_copy(lt_tensor *self, int dtype);
/* always a new tensor on device (absent: the cpu) */
lt_tensor *lt_core__to_device(lt_tensor *self, lt_device device, bool non_blocking);

#endif
