/*
** la_einsum.h — the CPU einsum kernel (la_einsum.c). The equation's syntax and
** plan are device-neutral, in meta/einsum.h, which the kernel and the
** differentiable path (src/autograd/formulas_linalg.c) share.
*/
#ifndef LT_LA_EINSUM_H
#define LT_LA_EINSUM_H

#include "meta/einsum.h"

#endif
