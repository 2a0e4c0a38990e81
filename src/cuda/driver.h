/*
** driver.h — the CUDA driver as the CUDA backend sees it: one table of
** function pointers, the only way anything in src/cuda reaches a GPU.
**
** The table is filled in one of two ways:
**   - from libcuda.so.1, opened with dlopen at run time (a program linked with
**     -lcuda cannot even start on a machine without a driver, and no machine of
**     this project but a lent one has a driver);
**   - from the fake driver (LUTORCH_CUDA_DRIVER=fake, or lt_cu_fake_driver()):
**     devices on host memory, so everything above the seam (allocator, streams
**     and events, copies, dispatch, autograd on device tensors) is tested here.
**
** The types are lutorch's own, so this header needs no CUDA header and builds
** everywhere; their values and meanings are the CUDA driver API's (a result is
** a CUresult, a pointer a CUdeviceptr, a NULL stream the legacy default
** stream), which lets driver.c store the dlsym'd entry points directly.
** Every entry returns a result; nothing here sets lutorch's error slot:
** callers turn a failure into an error naming what they were doing
** (lt_cu_result_name gives "CUDA_ERROR_OUT_OF_MEMORY").
*/
#ifndef LT_CUDA_DRIVER_H
#define LT_CUDA_DRIVER_H
#include <stdbool.h>
#include <stddef.h>

typedef int lt_cu_result;                 /* CUresult */
enum {
  LT_CU_SUCCESS = 0,
  LT_CU_ERROR_INVALID_VALUE = 1,
  LT_CU_ERROR_OUT_OF_MEMORY = 2,
  LT_CU_ERROR_NOT_INITIALIZED = 3,
  LT_CU_ERROR_NO_DEVICE = 100,
  LT_CU_ERROR_INVALID_DEVICE = 101,
  LT_CU_ERROR_INVALID_CONTEXT = 201,
  LT_CU_ERROR_INVALID_HANDLE = 400,
  LT_CU_ERROR_NOT_FOUND = 500,
  LT_CU_ERROR_NOT_READY = 600,
  LT_CU_ERROR_LAUNCH_FAILED = 719,
  LT_CU_ERROR_NOT_SUPPORTED = 801,
  LT_CU_ERROR_UNKNOWN = 999,
};

typedef unsigned long long lt_cu_ptr;            /* CUdeviceptr: device memory, 0 = none */
typedef struct lt_cu_ctx_ *lt_cu_ctx;            /* CUcontext */
typedef struct lt_cu_stream_ *lt_cu_stream;      /* CUstream; NULL is the default stream */
typedef struct lt_cu_event_ *lt_cu_event;        /* CUevent */
typedef struct lt_cu_module_ *lt_cu_module;      /* CUmodule */
typedef struct lt_cu_function_ *lt_cu_function;  /* CUfunction */

/* the device attributes the backend asks for (CUdevice_attribute values) */
enum {
  LT_CU_ATTR_MAX_THREADS_PER_BLOCK = 1,
  LT_CU_ATTR_MULTIPROCESSOR_COUNT = 16,
  LT_CU_ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
  LT_CU_ATTR_COMPUTE_CAPABILITY_MINOR = 76,
};

/* flags with the driver's values */
enum {
  LT_CU_STREAM_NON_BLOCKING = 0x1,      /* cuStreamCreate: does not wait on the default stream */
  LT_CU_EVENT_DISABLE_TIMING = 0x2,     /* cuEventCreate */
  LT_CU_MEMHOSTALLOC_PORTABLE = 0x1,    /* cuMemHostAlloc: pinned for every context */
};

typedef struct lt_cu_driver {
  const char *name;   /* "libcuda.so.1" or "fake" */
  lt_cu_result (*init)(unsigned flags);
  lt_cu_result (*driver_version)(int *version);
  /* devices: ordinals 0 .. count - 1 */
  lt_cu_result (*device_count)(int *count);
  lt_cu_result (*device_name)(char *name, int len, int dev);
  lt_cu_result (*device_total_mem)(size_t *bytes, int dev);
  lt_cu_result (*device_attribute)(int *value, int attribute, int dev);
  /* each device's primary context; a thread works on the device whose context is current */
  lt_cu_result (*primary_ctx_retain)(lt_cu_ctx *ctx, int dev);
  lt_cu_result (*primary_ctx_release)(int dev);
  lt_cu_result (*ctx_set_current)(lt_cu_ctx ctx);
  lt_cu_result (*ctx_get_current)(lt_cu_ctx *ctx);
  lt_cu_result (*ctx_synchronize)(void);
  /* memory of the current context's device */
  lt_cu_result (*mem_alloc)(lt_cu_ptr *p, size_t bytes);
  lt_cu_result (*mem_free)(lt_cu_ptr p);
  lt_cu_result (*mem_get_info)(size_t *free_bytes, size_t *total_bytes);
  /* page-locked host memory */
  lt_cu_result (*mem_host_alloc)(void **p, size_t bytes, unsigned flags);
  lt_cu_result (*mem_free_host)(void *p);
  /* copies and sets queued on a stream, in stream order */
  lt_cu_result (*memcpy_htod_async)(lt_cu_ptr dst, const void *src, size_t bytes, lt_cu_stream s);
  lt_cu_result (*memcpy_dtoh_async)(void *dst, lt_cu_ptr src, size_t bytes, lt_cu_stream s);
  lt_cu_result (*memcpy_dtod_async)(lt_cu_ptr dst, lt_cu_ptr src, size_t bytes, lt_cu_stream s);
  lt_cu_result (*memset_d8_async)(lt_cu_ptr dst, unsigned char value, size_t bytes, lt_cu_stream s);
  /* streams: FIFO queues of work on one device */
  lt_cu_result (*stream_create)(lt_cu_stream *s, unsigned flags);
  lt_cu_result (*stream_destroy)(lt_cu_stream s);
  lt_cu_result (*stream_synchronize)(lt_cu_stream s);
  lt_cu_result (*stream_query)(lt_cu_stream s);        /* SUCCESS when all done, else NOT_READY */
  lt_cu_result (*stream_wait_event)(lt_cu_stream s, lt_cu_event e, unsigned flags);
  /* events: a point in a stream's queue */
  lt_cu_result (*event_create)(lt_cu_event *e, unsigned flags);
  lt_cu_result (*event_destroy)(lt_cu_event e);
  lt_cu_result (*event_record)(lt_cu_event e, lt_cu_stream s);
  lt_cu_result (*event_query)(lt_cu_event e);          /* SUCCESS when reached, else NOT_READY */
  lt_cu_result (*event_synchronize)(lt_cu_event e);
  lt_cu_result (*event_elapsed_time)(float *ms, lt_cu_event start, lt_cu_event end);
  /* kernels: a cubin or PTX image (from nvcc or NVRTC), its functions, a launch */
  lt_cu_result (*module_load_data)(lt_cu_module *m, const void *image);
  lt_cu_result (*module_unload)(lt_cu_module m);
  lt_cu_result (*module_get_function)(lt_cu_function *f, lt_cu_module m, const char *name);
  lt_cu_result (*launch_kernel)(lt_cu_function f, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                                unsigned block_x, unsigned block_y, unsigned block_z,
                                unsigned shared_bytes, lt_cu_stream s, void **params, void **extra);
} lt_cu_driver;

/* The driver this process uses, opened once: the fake when the environment
** has LUTORCH_CUDA_DRIVER=fake, else libcuda.so.1 through dlopen, initialised
** (cuInit) and with at least one device. NULL when there is none, with *why
** (when why is not NULL) a sentence for torch.cuda to report, e.g.
** "libcuda.so.1 not found (no NVIDIA driver)" or "cuInit failed:
** CUDA_ERROR_NO_DEVICE"; the reason is static, valid for the process. */
const lt_cu_driver *lt_cu_driver_open(const char **why);

/* "CUDA_ERROR_OUT_OF_MEMORY" for LT_CU_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_<n>" (a
** static buffer per thread) for a value this header does not name */
const char *lt_cu_result_name(lt_cu_result r);

/* ---- the fake driver ----
** Devices on host memory. Work queued on a stream runs when the stream is not
** held: at once, in order (a stream is a FIFO); a held stream keeps its work
** (copies, sets, event records) queued until it is released, so the work of
** another stream, queries and waits can be observed in between. Events are
** sequence numbers in their stream's queue. Device memory is host memory the
** fake allocated and tagged with its device; using memory of another device,
** a freed pointer, or a handle the fake did not make returns
** INVALID_VALUE/INVALID_HANDLE instead of crashing, so tests can check that the
** backend never does. Synchronizing a held stream, or an event in one, returns
** NOT_READY rather than blocking forever. Kernel launches are not supported
** (NOT_SUPPORTED): kernels run under the fake through their host builds. */
const lt_cu_driver *lt_cu_fake_driver(void);

/* Test knobs of the fake. They act on the fake's state, which
** lt_cu_fake_reset returns to the start: 2 devices of 1 GiB each, nothing held,
** no failure armed, every allocation and handle released (a test calls it
** first, and may check lt_cu_fake_live_allocations() == 0 at its end). */
void lt_cu_fake_reset(void);
void lt_cu_fake_set_device_count(int n);            /* 0 .. 16 */
void lt_cu_fake_set_total_mem(int dev, size_t bytes);
/* the nth mem_alloc from now (1 = the next) fails with OUT_OF_MEMORY; 0 disarms */
void lt_cu_fake_fail_alloc(long nth);
/* hold or release a stream (NULL: the default stream of the current device) */
void lt_cu_fake_hold_stream(lt_cu_stream s, bool hold);
/* what the fake has counted since the last reset */
long lt_cu_fake_live_allocations(void);             /* mem_alloc'd, not yet freed */
size_t lt_cu_fake_allocated_bytes(int dev);
long lt_cu_fake_calls(const char *entry);           /* e.g. "mem_alloc", "stream_synchronize" */

#endif
