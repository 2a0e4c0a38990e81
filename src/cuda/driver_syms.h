/*
** driver_syms.h — which libcuda.so.1 symbol fills which entry of the driver
** table (private to driver.c and the tests).
**
** X(field, plain, symbol, older) for every entry of lt_cu_driver, in the
** struct's order: `plain` is the name a program writes against cuda.h,
** `symbol` the exported name that cuda.h 13.0 binds it to (cuda.h #defines
** cuMemAlloc to cuMemAlloc_v2 and so on), `older` an exported name with the
** same signature to fall back on where an older driver lacks `symbol`, or
** NULL. tests/c/test_cuda_abi.c checks every `symbol` against the toolkit's
** cuda.h where one is installed.
**
** The names are the legacy-default-stream ones (no _ptsz/_ptds): the NULL
** stream of the seam is the legacy default stream.
*/
#ifndef LT_CUDA_DRIVER_SYMS_H
#define LT_CUDA_DRIVER_SYMS_H

#define LT_CU_DRIVER_SYMS(X) \
  X(init, cuInit, "cuInit", NULL) \
  X(driver_version, cuDriverGetVersion, "cuDriverGetVersion", NULL) \
  X(device_count, cuDeviceGetCount, "cuDeviceGetCount", NULL) \
  X(device_name, cuDeviceGetName, "cuDeviceGetName", NULL) \
  X(device_total_mem, cuDeviceTotalMem, "cuDeviceTotalMem_v2", NULL) \
  X(device_attribute, cuDeviceGetAttribute, "cuDeviceGetAttribute", NULL) \
  X(primary_ctx_retain, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL) \
  X(primary_ctx_release, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", NULL) \
  X(ctx_set_current, cuCtxSetCurrent, "cuCtxSetCurrent", NULL) \
  X(ctx_get_current, cuCtxGetCurrent, "cuCtxGetCurrent", NULL) \
  X(ctx_synchronize, cuCtxSynchronize, "cuCtxSynchronize", NULL) \
  X(mem_alloc, cuMemAlloc, "cuMemAlloc_v2", NULL) \
  X(mem_free, cuMemFree, "cuMemFree_v2", NULL) \
  X(mem_get_info, cuMemGetInfo, "cuMemGetInfo_v2", NULL) \
  X(mem_host_alloc, cuMemHostAlloc, "cuMemHostAlloc", NULL) \
  X(mem_free_host, cuMemFreeHost, "cuMemFreeHost", NULL) \
  X(memcpy_htod_async, cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", NULL) \
  X(memcpy_dtoh_async, cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", NULL) \
  X(memcpy_dtod_async, cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", NULL) \
  X(memset_d8_async, cuMemsetD8Async, "cuMemsetD8Async", NULL) \
  X(stream_create, cuStreamCreate, "cuStreamCreate", NULL) \
  X(stream_destroy, cuStreamDestroy, "cuStreamDestroy_v2", NULL) \
  X(stream_synchronize, cuStreamSynchronize, "cuStreamSynchronize", NULL) \
  X(stream_query, cuStreamQuery, "cuStreamQuery", NULL) \
  X(stream_wait_event, cuStreamWaitEvent, "cuStreamWaitEvent", NULL) \
  X(event_create, cuEventCreate, "cuEventCreate", NULL) \
  X(event_destroy, cuEventDestroy, "cuEventDestroy_v2", NULL) \
  X(event_record, cuEventRecord, "cuEventRecord", NULL) \
  X(event_query, cuEventQuery, "cuEventQuery", NULL) \
  X(event_synchronize, cuEventSynchronize, "cuEventSynchronize", NULL) \
  X(event_elapsed_time, cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime") \
  X(module_load_data, cuModuleLoadData, "cuModuleLoadData", NULL) \
  X(module_unload, cuModuleUnload, "cuModuleUnload", NULL) \
  X(module_get_function, cuModuleGetFunction, "cuModuleGetFunction", NULL) \
  X(launch_kernel, cuLaunchKernel, "cuLaunchKernel", NULL)

#endif
