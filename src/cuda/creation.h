/*
** creation.h — what the CUDA creation and random kernels (creation.c,
** random.c) share: launching the random/sequence kernels (random.h) with
** launch.h's choice of build.
*/
#ifndef LT_CUDA_CREATION_H
#define LT_CUDA_CREATION_H

#include "core/tensor.h"
#include "cuda/kernels/random.h"
#include "cuda/launch.h"

/* the kernels of the build a launch runs; NULL where it has none */
const lt_ck_random_kernels *lt_cuda_random_kernels(const lt_cuda_launch *l);
/* whether the nvcc build of these kernels is linked in */
bool lt_cuda_have_random_device_kernels(void);

/* run the sampler / the sequence on device dev: 0, -1 with the error set, 1 refused */
int lt_cuda_run_random(const char *op, int dev, const lt_ck_rng_args *a);
int lt_cuda_run_seq(const char *op, int dev, const lt_ck_seq_args *a);

/* the device a creation op's result goes on: device (type -1 or "cuda"
** resolved by the binding), the dispatcher routed it here */
static inline int lt_cuda_creation_dev(lt_device d) { return d.type == LT_DEV_CUDA ? d.index : 0; }

#endif
