/*
** creation.h — shared by the CPU's creation and random kernels.
*/
#ifndef LT_CPU_CREATION_H
#define LT_CPU_CREATION_H

#include "core/tensor.h"

/* A new contiguous tensor for creation op `op` on dev (type -1: the cpu):
** checks the sizes (naming the op); dtype < 0 picks dflt. Memory
** uninitialised. The dispatcher routed the call here by dev's key, so dev is
** a device whose memory this backend's loops can write. */
lt_tensor *lt_creation_new(const char *op, int ndim, const int64_t *sizes, int dtype, int dflt, lt_device dev);

#endif
