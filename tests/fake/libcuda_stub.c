/*
** libcuda_stub.c — a stand-in libcuda.so.1 for tests/c/test_cuda_driver.c,
** so that lt_cu_driver_open's dlopen path runs on machines without a driver.
** The Makefile builds it three times, each as libcuda.so.1 in a folder of
** its own: complete, without cuLaunchKernel (LT_STUB_NO_LAUNCH: a missing
** symbol), and without cuEventElapsedTime_v2 (LT_STUB_NO_V2: an older driver).
**
** Every entry records its exported name in lt_stub_last, so the test can
** check which symbol each entry of the table reached. cuInit, cuDeviceGetCount
** and cuDriverGetVersion behave as LT_STUB_CUDA_MODE says: "nodevice" (cuInit
** fails with CUDA_ERROR_NO_DEVICE, as on a machine with a driver and no GPU),
** "zero" (cuInit succeeds, no device), otherwise one device. Everything else
** returns CUDA_ERROR_NOT_SUPPORTED.
*/
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "cuda/driver.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT const char *volatile lt_stub_last = "";
EXPORT atomic_int lt_stub_init_calls;

static const char *mode(void) {
  const char *m = getenv("LT_STUB_CUDA_MODE");
  return m ? m : "";
}

EXPORT lt_cu_result cuInit(unsigned flags) {
  lt_stub_last = "cuInit";
  atomic_fetch_add(&lt_stub_init_calls, 1);
  return strcmp(mode(), "nodevice") == 0 ? LT_CU_ERROR_NO_DEVICE : LT_CU_SUCCESS;
}

EXPORT lt_cu_result cuDriverGetVersion(int *v) {
  lt_stub_last = "cuDriverGetVersion";
  if (v) *v = 13000;
  return LT_CU_SUCCESS;
}

EXPORT lt_cu_result cuDeviceGetCount(int *n) {
  lt_stub_last = "cuDeviceGetCount";
  if (n) *n = strcmp(mode(), "zero") == 0 ? 0 : 1;
  return LT_CU_SUCCESS;
}

#define STUB(name, params) \
  EXPORT lt_cu_result name params { lt_stub_last = #name; return LT_CU_ERROR_NOT_SUPPORTED; }

STUB(cuDeviceGetName, (char *name, int len, int dev))
STUB(cuDeviceTotalMem_v2, (size_t *bytes, int dev))
STUB(cuDeviceGetAttribute, (int *value, int attribute, int dev))
STUB(cuDevicePrimaryCtxRetain, (lt_cu_ctx *ctx, int dev))
STUB(cuDevicePrimaryCtxRelease_v2, (int dev))
STUB(cuCtxSetCurrent, (lt_cu_ctx ctx))
STUB(cuCtxGetCurrent, (lt_cu_ctx *ctx))
STUB(cuCtxSynchronize, (void))
STUB(cuMemAlloc_v2, (lt_cu_ptr *p, size_t bytes))
STUB(cuMemFree_v2, (lt_cu_ptr p))
STUB(cuMemGetInfo_v2, (size_t *free_bytes, size_t *total_bytes))
STUB(cuMemHostAlloc, (void **p, size_t bytes, unsigned flags))
STUB(cuMemFreeHost, (void *p))
STUB(cuMemcpyHtoDAsync_v2, (lt_cu_ptr dst, const void *src, size_t n, lt_cu_stream s))
STUB(cuMemcpyDtoHAsync_v2, (void *dst, lt_cu_ptr src, size_t n, lt_cu_stream s))
STUB(cuMemcpyDtoDAsync_v2, (lt_cu_ptr dst, lt_cu_ptr src, size_t n, lt_cu_stream s))
STUB(cuMemsetD8Async, (lt_cu_ptr dst, unsigned char value, size_t n, lt_cu_stream s))
STUB(cuStreamCreate, (lt_cu_stream *s, unsigned flags))
STUB(cuStreamDestroy_v2, (lt_cu_stream s))
STUB(cuStreamSynchronize, (lt_cu_stream s))
STUB(cuStreamQuery, (lt_cu_stream s))
STUB(cuStreamWaitEvent, (lt_cu_stream s, lt_cu_event e, unsigned flags))
STUB(cuEventCreate, (lt_cu_event *e, unsigned flags))
STUB(cuEventDestroy_v2, (lt_cu_event e))
STUB(cuEventRecord, (lt_cu_event e, lt_cu_stream s))
STUB(cuEventQuery, (lt_cu_event e))
STUB(cuEventSynchronize, (lt_cu_event e))
STUB(cuEventElapsedTime, (float *ms, lt_cu_event a, lt_cu_event b))
#ifndef LT_STUB_NO_V2
STUB(cuEventElapsedTime_v2, (float *ms, lt_cu_event a, lt_cu_event b))
#endif
STUB(cuModuleLoadData, (lt_cu_module *m, const void *image))
STUB(cuModuleUnload, (lt_cu_module m))
STUB(cuModuleGetFunction, (lt_cu_function *f, lt_cu_module m, const char *name))
#ifndef LT_STUB_NO_LAUNCH
STUB(cuLaunchKernel, (lt_cu_function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                      unsigned by, unsigned bz, unsigned shared, lt_cu_stream s, void **params,
                      void **extra))
#endif
/* the plain names cuda.h maps away, exported as the real driver does: the table must not use them */
STUB(cuMemAlloc, (unsigned *p, unsigned bytes))
STUB(cuStreamDestroy, (lt_cu_stream s))
