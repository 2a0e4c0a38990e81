/*
** ck_host.h — the shim that lets the CUDA kernels compile with a host C++
** compiler (g++ -x c++ -std=gnu++17): the CUDA qualifiers mean nothing, and
** the device intrinsics the kernels use have host versions beside them
** (ck.h, ck_math.h: #if defined(__CUDACC__) ... #else).
**
** There is no host imitation of threadIdx/blockIdx: a kernel is a struct
** whose run(tid, nthreads) is the body of one CUDA thread in a grid-stride
** loop (ck.h). On the device a __global__ wrapper calls it with the thread's
** index; on the host ck_launch calls it for every thread index in turn. So
** no global state is involved, and kernels that need shared memory, barriers
** or warp shuffles cannot be written this way: they have no host build (the
** backend falls back to the CPU op for them under the fake driver).
*/
#ifndef LT_CUDA_CK_HOST_H
#define LT_CUDA_CK_HOST_H
#if defined(__CUDACC__)
#error "ck_host.h is for the host build only"
#endif
#include <stdint.h>
#include <string.h>
#include <math.h>

#define __host__
#define __device__
#define __global__
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)

#endif
