/*
** conv.h — what conv.c and pool.c share: the conv/pool kernels of the build
** that runs (src/cuda/kernels/conv.h) and the bias addition.
*/
#ifndef LT_CUDA_CONV_H
#define LT_CUDA_CONV_H

#include "cuda/launch.h"
#include "cuda/kernels/conv.h"

/* whether the nvcc build of the conv kernels is linked in */
bool lt_cuda_have_conv_kernels(void);
/* the conv kernels of the build l runs */
const lt_ck_conv_kernels *lt_cuda_conv_kernels(const lt_cuda_launch *l);
/* lt_cuda_launch_begin on t's device for the conv kernels */
int lt_cuda_conv_launch_begin(lt_cuda_launch *l, const lt_tensor *t, const char *op);
/* y += bias broadcast over channel dim 1 of y seen as (N, ch, plane), y contiguous;
** bias NULL: nothing. 0 or -1 */
int lt_cuda_add_bias(const char *op, lt_tensor *y, lt_tensor *bias, int64_t N, int64_t ch, int64_t plane);

#endif
