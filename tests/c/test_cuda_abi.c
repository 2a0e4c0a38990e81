/*
** test_cuda_abi.c — the driver seam (src/cuda/driver.h) against the CUDA
** Toolkit's cuda.h, where the Makefile finds one (it then defines
** LT_HAVE_CUDA_H and adds the include folder); without one it prints a SKIP
** line. At compile time: the sizes of the handle and pointer types, the
** values of the results, attributes and flags, and every entry's signature
** beside the real function's (each SIG line gives the table's parameters and
** the driver's, type for type). At run time: that each symbol driver.c looks
** up is the one cuda.h binds the plain name to, and that lt_cu_result_name
** spells the results as cuda.h does. Nothing here needs libcuda.
*/
#include <stdio.h>
#include <string.h>
#include "cuda/driver.h"
#include "cuda/driver_syms.h"

#ifndef LT_HAVE_CUDA_H
int main(void) {
  printf("SKIP no cuda.h (CUDA Toolkit): the seam's types and values are not checked against it\n");
  printf("0 passed, 0 failed, 1 skipped\n");
  return 0;
}
#else
#include <cuda.h>
#include "ctest.h"

#define SAME(a, b) _Static_assert((long long)(a) == (long long)(b), #a " != " #b)
#define SAME_SIZE(a, b) _Static_assert(sizeof(a) == sizeof(b), "sizeof " #a " != sizeof " #b)

SAME_SIZE(lt_cu_ptr, CUdeviceptr);
SAME_SIZE(lt_cu_result, CUresult);
SAME_SIZE(int, CUdevice);
SAME_SIZE(int, CUdevice_attribute);
SAME_SIZE(lt_cu_ctx, CUcontext);
SAME_SIZE(lt_cu_stream, CUstream);
SAME_SIZE(lt_cu_event, CUevent);
SAME_SIZE(lt_cu_module, CUmodule);
SAME_SIZE(lt_cu_function, CUfunction);

SAME(LT_CU_SUCCESS, CUDA_SUCCESS);
SAME(LT_CU_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_VALUE);
SAME(LT_CU_ERROR_OUT_OF_MEMORY, CUDA_ERROR_OUT_OF_MEMORY);
SAME(LT_CU_ERROR_NOT_INITIALIZED, CUDA_ERROR_NOT_INITIALIZED);
SAME(LT_CU_ERROR_NO_DEVICE, CUDA_ERROR_NO_DEVICE);
SAME(LT_CU_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_DEVICE);
SAME(LT_CU_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_CONTEXT);
SAME(LT_CU_ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_HANDLE);
SAME(LT_CU_ERROR_NOT_FOUND, CUDA_ERROR_NOT_FOUND);
SAME(LT_CU_ERROR_NOT_READY, CUDA_ERROR_NOT_READY);
SAME(LT_CU_ERROR_LAUNCH_FAILED, CUDA_ERROR_LAUNCH_FAILED);
SAME(LT_CU_ERROR_NOT_SUPPORTED, CUDA_ERROR_NOT_SUPPORTED);
SAME(LT_CU_ERROR_UNKNOWN, CUDA_ERROR_UNKNOWN);
SAME(200, CUDA_ERROR_INVALID_IMAGE);         /* the fake's answer to an image it cannot read */

SAME(LT_CU_ATTR_MAX_THREADS_PER_BLOCK, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
SAME(LT_CU_ATTR_MULTIPROCESSOR_COUNT, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
SAME(LT_CU_ATTR_COMPUTE_CAPABILITY_MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
SAME(LT_CU_ATTR_COMPUTE_CAPABILITY_MINOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);

SAME(LT_CU_STREAM_NON_BLOCKING, CU_STREAM_NON_BLOCKING);
SAME(LT_CU_EVENT_DISABLE_TIMING, CU_EVENT_DISABLE_TIMING);
SAME(LT_CU_MEMHOSTALLOC_PORTABLE, CU_MEMHOSTALLOC_PORTABLE);
/* the fake accepts exactly these flags */
SAME(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS, 7);
SAME(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED, 7);

/* SIG(field, symbol, the table's parameters, the driver's parameters) */
#define SIG(field, sym, lt, cu) \
  _Static_assert(__builtin_types_compatible_p(__typeof__(((lt_cu_driver *)0)->field), \
                                              lt_cu_result (*) lt), "table: " #field); \
  _Static_assert(__builtin_types_compatible_p(__typeof__(&sym), CUresult (*) cu), "cuda.h: " #sym)

SIG(init, cuInit, (unsigned), (unsigned int));
SIG(driver_version, cuDriverGetVersion, (int *), (int *));
SIG(device_count, cuDeviceGetCount, (int *), (int *));
SIG(device_name, cuDeviceGetName, (char *, int, int), (char *, int, CUdevice));
SIG(device_total_mem, cuDeviceTotalMem_v2, (size_t *, int), (size_t *, CUdevice));
SIG(device_attribute, cuDeviceGetAttribute, (int *, int, int), (int *, CUdevice_attribute, CUdevice));
SIG(primary_ctx_retain, cuDevicePrimaryCtxRetain, (lt_cu_ctx *, int), (CUcontext *, CUdevice));
SIG(primary_ctx_release, cuDevicePrimaryCtxRelease_v2, (int), (CUdevice));
SIG(ctx_set_current, cuCtxSetCurrent, (lt_cu_ctx), (CUcontext));
SIG(ctx_get_current, cuCtxGetCurrent, (lt_cu_ctx *), (CUcontext *));
SIG(ctx_synchronize, cuCtxSynchronize, (void), (void));
SIG(mem_alloc, cuMemAlloc_v2, (lt_cu_ptr *, size_t), (CUdeviceptr *, size_t));
SIG(mem_free, cuMemFree_v2, (lt_cu_ptr), (CUdeviceptr));
SIG(mem_get_info, cuMemGetInfo_v2, (size_t *, size_t *), (size_t *, size_t *));
SIG(mem_host_alloc, cuMemHostAlloc, (void **, size_t, unsigned), (void **, size_t, unsigned int));
SIG(mem_free_host, cuMemFreeHost, (void *), (void *));
SIG(memcpy_htod_async, cuMemcpyHtoDAsync_v2, (lt_cu_ptr, const void *, size_t, lt_cu_stream),
    (CUdeviceptr, const void *, size_t, CUstream));
SIG(memcpy_dtoh_async, cuMemcpyDtoHAsync_v2, (void *, lt_cu_ptr, size_t, lt_cu_stream),
    (void *, CUdeviceptr, size_t, CUstream));
SIG(memcpy_dtod_async, cuMemcpyDtoDAsync_v2, (lt_cu_ptr, lt_cu_ptr, size_t, lt_cu_stream),
    (CUdeviceptr, CUdeviceptr, size_t, CUstream));
SIG(memset_d8_async, cuMemsetD8Async, (lt_cu_ptr, unsigned char, size_t, lt_cu_stream),
    (CUdeviceptr, unsigned char, size_t, CUstream));
SIG(stream_create, cuStreamCreate, (lt_cu_stream *, unsigned), (CUstream *, unsigned int));
SIG(stream_destroy, cuStreamDestroy_v2, (lt_cu_stream), (CUstream));
SIG(stream_synchronize, cuStreamSynchronize, (lt_cu_stream), (CUstream));
SIG(stream_query, cuStreamQuery, (lt_cu_stream), (CUstream));
SIG(stream_wait_event, cuStreamWaitEvent, (lt_cu_stream, lt_cu_event, unsigned),
    (CUstream, CUevent, unsigned int));
SIG(event_create, cuEventCreate, (lt_cu_event *, unsigned), (CUevent *, unsigned int));
SIG(event_destroy, cuEventDestroy_v2, (lt_cu_event), (CUevent));
SIG(event_record, cuEventRecord, (lt_cu_event, lt_cu_stream), (CUevent, CUstream));
SIG(event_query, cuEventQuery, (lt_cu_event), (CUevent));
SIG(event_synchronize, cuEventSynchronize, (lt_cu_event), (CUevent));
SIG(event_elapsed_time, cuEventElapsedTime, (float *, lt_cu_event, lt_cu_event), (float *, CUevent, CUevent));
SIG(module_load_data, cuModuleLoadData, (lt_cu_module *, const void *), (CUmodule *, const void *));
SIG(module_unload, cuModuleUnload, (lt_cu_module), (CUmodule));
SIG(module_get_function, cuModuleGetFunction, (lt_cu_function *, lt_cu_module, const char *),
    (CUfunction *, CUmodule, const char *));
SIG(launch_kernel, cuLaunchKernel,
    (lt_cu_function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, lt_cu_stream,
     void **, void **),
    (CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
     unsigned int, CUstream, void **, void **));

#define STR_(x) #x
#define STR(x) STR_(x)

/* the name cuda.h binds `plain` to, after its #defines, is the symbol driver.c looks up */
TEST(symbol_names) {
  int n = 0;
#define CHECK_SYM(field, plain, symbol, older) do { \
    const char *bound = STR(plain); \
    int ok = strcmp(bound, symbol) == 0 || (older && strcmp(bound, older ? older : "") == 0); \
    if (!ok) fprintf(stderr, "%s: cuda.h binds %s to %s, driver.c looks up %s\n", #field, #plain, bound, symbol); \
    CHECK(ok); n++; \
  } while (0);
  LT_CU_DRIVER_SYMS(CHECK_SYM)
#undef CHECK_SYM
  CHECK_EQ_INT(n, 35);
#if CUDA_VERSION >= 12080
  CHECK(strcmp(STR(cuEventElapsedTime), "cuEventElapsedTime_v2") == 0);
#endif
}

TEST(result_names) {
#define NAME(r) do { \
    if (strcmp(lt_cu_result_name(r), #r) != 0) fprintf(stderr, "%d: %s\n", (int)r, lt_cu_result_name(r)); \
    CHECK(strcmp(lt_cu_result_name(r), #r) == 0); \
  } while (0)
  NAME(CUDA_SUCCESS); NAME(CUDA_ERROR_INVALID_VALUE); NAME(CUDA_ERROR_OUT_OF_MEMORY);
  NAME(CUDA_ERROR_NOT_INITIALIZED); NAME(CUDA_ERROR_DEINITIALIZED); NAME(CUDA_ERROR_STUB_LIBRARY);
  NAME(CUDA_ERROR_DEVICE_UNAVAILABLE); NAME(CUDA_ERROR_NO_DEVICE); NAME(CUDA_ERROR_INVALID_DEVICE);
  NAME(CUDA_ERROR_DEVICE_NOT_LICENSED); NAME(CUDA_ERROR_INVALID_IMAGE); NAME(CUDA_ERROR_INVALID_CONTEXT);
  NAME(CUDA_ERROR_NO_BINARY_FOR_GPU); NAME(CUDA_ERROR_INVALID_PTX); NAME(CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
  NAME(CUDA_ERROR_INVALID_HANDLE); NAME(CUDA_ERROR_NOT_FOUND); NAME(CUDA_ERROR_NOT_READY);
  NAME(CUDA_ERROR_ILLEGAL_ADDRESS); NAME(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES); NAME(CUDA_ERROR_LAUNCH_TIMEOUT);
  NAME(CUDA_ERROR_CONTEXT_IS_DESTROYED); NAME(CUDA_ERROR_LAUNCH_FAILED); NAME(CUDA_ERROR_NOT_SUPPORTED);
  NAME(CUDA_ERROR_SYSTEM_NOT_READY); NAME(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH);
  NAME(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE); NAME(CUDA_ERROR_UNKNOWN);
#undef NAME
}

int main(void) {
  printf("cuda.h version %d\n", CUDA_VERSION);
  RUN(symbol_names);
  RUN(result_names);
  return ctest_summary();
}
#endif
