/*
** backend.c — the CUDA backend: an lt_backend for LT_DEV_CUDA over the
** driver seam (cuda/driver.h), registered with its kernel table when the
** module is opened.
**
**   - Memory comes from one caching allocator per device (cuda/alloc.h),
**     made on first use, on the current stream of the device.
**   - Byte copies to and from the host are queued on the current stream and
**     waited for: the core reads (or frees) the host side as soon as the
**     call returns.
**   - Same-device copies and fills that are byte moves (contiguous, same
**     dtype; a zero fill) are a device-to-device copy and a memset, queued
**     on the current stream. Anything else (broadcast, a dtype conversion,
**     strides, a nonzero value) runs the copy and fill kernels
**     (elementwise.c): the nvcc build on the current stream under a real
**     driver, the host build under the fake. What they refuse (more than 8
**     dims after merging) runs the CPU backend's copy and fill under the fake,
**     whose device memory is host memory (through the registry: src/cuda
**     does not include src/cpu), and is an error under a real driver.
**
** Nothing here has run on a GPU: it is tested against the fake driver.
*/
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include "core/error.h"
#include "cuda/alloc.h"
#include "cuda/cuda.h"
#include "cuda/trace.h"
#include "dispatch/dispatch.h"
#include "kernels_cuda.h"   /* generated: lt_cuda_kernel_table */

#define NEEDS_KERNELS "needs the CUDA kernels, which refuse it (more than 8 dims after merging)"

/* ---- memory: the caching allocator of each device ---- */

static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(lt_cuda_alloc *) caching[LT_CUDA_MAX_DEVICES];
static lt_allocator allocators[LT_CUDA_MAX_DEVICES];

/* What a 0-byte allocation hands out: the core wants a pointer that is not
** NULL, and the caching allocator gives 0 for 0 bytes (counting nothing, as
** PyTorch's does). Every empty storage shares this address; nothing is ever
** read or written through it (copies and sets of 0 bytes never reach the
** driver), and freeing it is a no-op. */
static _Alignas(512) unsigned char empty_block[512];

lt_cuda_alloc *lt_cuda_caching_allocator(int dev) {
  if (dev < 0 || dev >= lt_cuda_device_count())
    return lt_error_null("cuda: device cuda:%d does not exist (%d devices)", dev, lt_cuda_device_count());
  lt_cuda_alloc *a = atomic_load_explicit(&caching[dev], memory_order_acquire);
  if (a) return a;
  pthread_mutex_lock(&alloc_lock);
  a = atomic_load_explicit(&caching[dev], memory_order_relaxed);
  if (!a && (a = lt_cuda_alloc_new(lt_cuda_driver(), dev)))
    atomic_store_explicit(&caching[dev], a, memory_order_release);
  pthread_mutex_unlock(&alloc_lock);
  return a;
}

static int allocator_device(lt_allocator *self) { return (int)(self - allocators); }

static void *device_alloc(lt_allocator *self, size_t nbytes) {
  if (nbytes == 0) return empty_block;
  int dev = allocator_device(self);
  lt_cuda_alloc *a = lt_cuda_caching_allocator(dev);
  if (!a) return NULL;
  lt_cu_ptr p = 0;
  if (lt_cuda_alloc_malloc(a, nbytes, lt_cuda_current_stream(dev), &p) < 0) return NULL;
  return (void *)(uintptr_t)p;
}

static void device_free(lt_allocator *self, void *p, size_t nbytes) {
  (void)nbytes;
  if (!p || p == (void *)empty_block) return;
  lt_cuda_alloc *a = atomic_load_explicit(&caching[allocator_device(self)], memory_order_acquire);
  /* a block this allocator did not hand out would be a bug of the core; a
  ** free has no way to report it */
  if (a) (void)lt_cuda_alloc_free(a, (lt_cu_ptr)(uintptr_t)p);
}

static lt_allocator *allocator_of(int index) {
  if (index < 0 || index >= LT_CUDA_MAX_DEVICES) index = 0;   /* lt_backend_of checked it */
  return &allocators[index];
}

/* ---- byte copies between a device storage and host memory ---- */

static lt_cu_ptr storage_ptr(const lt_storage *s, size_t offset) {
  return (lt_cu_ptr)(uintptr_t)s->data + offset;
}

static int check_range(const char *op, const lt_storage *s, size_t offset, size_t nbytes) {
  if (s->device.type != LT_DEV_CUDA) return lt_error("%s: the storage is not on a cuda device", op);
  if (offset > s->nbytes || nbytes > s->nbytes - offset)
    return lt_error("%s: %zu bytes at offset %zu are past the end of a storage of %zu bytes", op, nbytes, offset,
                    s->nbytes);
  return 0;
}

static int copy_to_host(void *dst, const lt_storage *src, size_t offset, size_t nbytes) {
  static const char op[] = "cuda: copy to the host";
  if (check_range(op, src, offset, nbytes) < 0) return -1;
  if (nbytes == 0) return 0;
  int dev = src->device.index;
  lt_cuda_guard g;
  if (lt_cuda_enter(dev, &g, op) < 0) return -1;
  const lt_cu_driver *drv = lt_cuda_driver();
  lt_cu_stream s = lt_cuda_current_stream(dev);
  int tr = lt_cuda_tracing ? lt_cuda_trace_begin(dev, (void *)s, "Memcpy DtoH", LT_CUDA_TRACE_MEMCPY, nbytes) : -1;
  lt_cu_result r = drv->memcpy_dtoh_async(dst, storage_ptr(src, offset), nbytes, s);
  lt_cuda_trace_end(tr);
  int rc = r != LT_CU_SUCCESS ? lt_cuda_fail(op, dev, "memcpy_dtoh_async", r) : 0;
  if (rc == 0 && (r = drv->stream_synchronize(s)) != LT_CU_SUCCESS) rc = lt_cuda_fail(op, dev, "stream_synchronize", r);
  lt_cuda_leave(&g);
  return rc;
}

/* waited for too: the host side may be a temporary the core frees next, and
** an asynchronous copy reads its source when it runs */
static int copy_from_host(lt_storage *dst, size_t offset, const void *src, size_t nbytes) {
  static const char op[] = "cuda: copy from the host";
  if (check_range(op, dst, offset, nbytes) < 0) return -1;
  if (nbytes == 0) return 0;
  int dev = dst->device.index;
  lt_cuda_guard g;
  if (lt_cuda_enter(dev, &g, op) < 0) return -1;
  const lt_cu_driver *drv = lt_cuda_driver();
  lt_cu_stream s = lt_cuda_current_stream(dev);
  int tr = lt_cuda_tracing ? lt_cuda_trace_begin(dev, (void *)s, "Memcpy HtoD", LT_CUDA_TRACE_MEMCPY, nbytes) : -1;
  lt_cu_result r = drv->memcpy_htod_async(storage_ptr(dst, offset), src, nbytes, s);
  lt_cuda_trace_end(tr);
  int rc = r != LT_CU_SUCCESS ? lt_cuda_fail(op, dev, "memcpy_htod_async", r) : 0;
  if (rc == 0 && (r = drv->stream_synchronize(s)) != LT_CU_SUCCESS) rc = lt_cuda_fail(op, dev, "stream_synchronize", r);
  lt_cuda_leave(&g);
  return rc;
}

/* ---- same-device copy and fill ---- */

static int same_device(const char *op, const lt_tensor *dst, const lt_tensor *src) {
  lt_device d = lt_tensor_device(dst);
  if (d.type != LT_DEV_CUDA) return lt_error("%s: the destination is not on a cuda device", op);
  if (src && !lt_device_eq(d, lt_tensor_device(src)))
    return lt_error("%s: a copy between different devices reached the backend", op);
  return 0;
}

static size_t tensor_bytes(const lt_tensor *t) { return (size_t)t->numel * lt_dtype_size((lt_dtype)t->dtype); }

static bool ranges_overlap(const lt_tensor *a, const lt_tensor *b) {
  if (a->storage != b->storage) return false;
  uintptr_t pa = (uintptr_t)lt_tensor_data(a), pb = (uintptr_t)lt_tensor_data(b);
  return pa < pb + tensor_bytes(b) && pb < pa + tensor_bytes(a);
}

static int queue_dtod(const lt_tensor *dst, const lt_tensor *src) {
  static const char op[] = "cuda: copy";
  int dev = lt_tensor_device(dst).index;
  lt_cuda_guard g;
  if (lt_cuda_enter(dev, &g, op) < 0) return -1;
  lt_cu_stream s = lt_cuda_current_stream(dev);
  int tr = lt_cuda_tracing ? lt_cuda_trace_begin(dev, (void *)s, "Memcpy DtoD", LT_CUDA_TRACE_MEMCPY, tensor_bytes(dst)) : -1;
  lt_cu_result r = lt_cuda_driver()->memcpy_dtod_async((lt_cu_ptr)(uintptr_t)lt_tensor_data(dst),
                                                       (lt_cu_ptr)(uintptr_t)lt_tensor_data(src),
                                                       tensor_bytes(dst), s);
  lt_cuda_trace_end(tr);
  lt_cuda_leave(&g);
  return r != LT_CU_SUCCESS ? lt_cuda_fail(op, dev, "memcpy_dtod_async", r) : 0;
}

static int device_copy(lt_tensor *dst, const lt_tensor *src) {
  if (same_device("cuda: copy", dst, src) < 0) return -1;
  int64_t st[LT_MAX_DIMS];
  if (lt_expand_strides("copy_", src, dst->ndim, dst->sizes, st) < 0) return -1;
  if (dst->numel == 0) return 0;
  /* a byte move: same dtype, both dense in the same order, no broadcast */
  if (dst->dtype == src->dtype && dst->numel == src->numel && lt_tensor_is_contiguous(dst) &&
      lt_tensor_is_contiguous(src)) {
    if (lt_tensor_data(dst) == lt_tensor_data(src)) return 0;
    if (!ranges_overlap(dst, src)) return queue_dtod(dst, src);
  }
  /* strides, broadcast, a conversion: the copy kernel */
  int rc = lt_cuda_ck_copy("cuda: copy", dst, src, st);
  if (rc <= 0) return rc;
  /* What the kernel refuses (more than 8 dims after merging): under the fake
  ** driver device memory is host memory, so the CPU's strided copy is right
  ** on it. */
  if (lt_cuda_host_device_memory()) { lt_cuda_count_fallback(); return lt_backend_get(LT_DEV_CPU)->copy(dst, src); }
  return lt_error("cuda: copy between these layouts " NEEDS_KERNELS);
}

/* the byte every element is made of, when v stored in dtype is one repeated byte */
static bool fill_byte(lt_dtype dt, lt_scalar v, unsigned char *byte) {
  if (dt == LT_BOOL) { *byte = v.type == LT_SCALAR_FLOAT ? v.v.f != 0 : v.v.i != 0; return true; }
  bool zero = v.type == LT_SCALAR_FLOAT ? v.v.f == 0 && !signbit(v.v.f) : v.v.i == 0;
  if (zero) { *byte = 0; return true; }
  if ((dt == LT_UINT8 || dt == LT_INT8) && v.type != LT_SCALAR_FLOAT) { *byte = (unsigned char)v.v.i; return true; }
  return false;
}

static int device_fill(lt_tensor *dst, lt_scalar v) {
  static const char op[] = "cuda: fill";
  if (same_device(op, dst, NULL) < 0) return -1;
  if (dst->numel == 0) return 0;
  unsigned char byte;
  if (lt_tensor_is_contiguous(dst) && fill_byte((lt_dtype)dst->dtype, v, &byte)) {
    int dev = lt_tensor_device(dst).index;
    lt_cuda_guard g;
    if (lt_cuda_enter(dev, &g, op) < 0) return -1;
    lt_cu_result r = lt_cuda_driver()->memset_d8_async((lt_cu_ptr)(uintptr_t)lt_tensor_data(dst), byte,
                                                       tensor_bytes(dst), lt_cuda_current_stream(dev));
    lt_cuda_leave(&g);
    return r != LT_CU_SUCCESS ? lt_cuda_fail(op, dev, "memset_d8_async", r) : 0;
  }
  int rc = lt_cuda_ck_fill(op, dst, v);
  if (rc <= 0) return rc;
  /* host memory under the fake: the CPU's fill (see device_copy) */
  if (lt_cuda_host_device_memory()) { lt_cuda_count_fallback(); return lt_backend_get(LT_DEV_CPU)->fill(dst, v); }
  return lt_error("cuda: fill of a strided tensor or with this value " NEEDS_KERNELS);
}

/* ---- synchronize, statistics, cache ---- */

static int device_synchronize(int index) {
  static const char op[] = "cuda: synchronize";
  if (!lt_cuda_device_started(index)) return 0;    /* nothing was ever queued there */
  lt_cuda_guard g;
  if (lt_cuda_enter(index, &g, op) < 0) return -1;
  lt_cu_result r = lt_cuda_driver()->ctx_synchronize();
  lt_cuda_leave(&g);
  if (r != LT_CU_SUCCESS) return lt_cuda_fail(op, index, "ctx_synchronize", r);
  (void)lt_cuda_reap_pinned_copies();   /* the non-blocking copies that ran free their sources */
  return 0;
}

static lt_cuda_alloc *made_allocator(int index) {
  if (index < 0 || index >= LT_CUDA_MAX_DEVICES) return NULL;
  return atomic_load_explicit(&caching[index], memory_order_acquire);
}

static void device_memory_stats(int index, lt_memory_stats *out) {
  lt_cuda_alloc *a = made_allocator(index);
  if (a) lt_cuda_alloc_memory_stats(a, out);
  else memset(out, 0, sizeof *out);
}

static void device_reset_peak(int index) {
  lt_cuda_alloc *a = made_allocator(index);
  if (a) lt_cuda_alloc_reset_peak(a);
}

static void device_empty_cache(void) {
  for (int i = 0; i < lt_cuda_device_count(); i++) {
    lt_cuda_alloc *a = made_allocator(i);
    if (a) (void)lt_cuda_alloc_empty_cache(a);
  }
}

static int device_count(void) { return lt_cuda_device_count(); }

static const lt_backend cuda_backend = {
  .name = "cuda",
  .device_type = LT_DEV_CUDA,
  .key = LT_KEY_CUDA,
  .host_memory = false,   /* even under the fake: the core reads it through copy_to_host */
  .device_count = device_count,
  .allocator = allocator_of,
  .copy = device_copy,
  .fill = device_fill,
  .copy_to_host = copy_to_host,
  .copy_from_host = copy_from_host,
  .synchronize = device_synchronize,
  .memory_stats = device_memory_stats,
  .reset_peak = device_reset_peak,
  .empty_cache = device_empty_cache,
  .pinned_storage = lt_cuda_pinned_storage,
  .is_pinned = lt_cuda_is_pinned,
  .copy_from_pinned_async = lt_cuda_copy_from_pinned_async,
};

/* ---- the kernel table and the open ---- */

static pthread_mutex_t kernel_lock = PTHREAD_MUTEX_INITIALIZER;
static void *kernels[LT_NUM_OPS];
static bool registered;

int lt_cuda_register_kernels(void *const *table) {
  if (!table) return lt_error("cuda: register_kernels: no table");
  pthread_mutex_lock(&kernel_lock);
  for (int i = 0; i < LT_NUM_OPS; i++)
    if (table[i]) kernels[i] = table[i];
  int r = registered ? lt_dispatch_register_backend(LT_KEY_CUDA, table) : 0;
  pthread_mutex_unlock(&kernel_lock);
  return r;
}

static pthread_once_t open_once = PTHREAD_ONCE_INIT;
static int open_status = -1;
static const char *open_reason = "the CUDA backend was not opened";

static void open_backend(void) {
  lt_init();
  const char *why = NULL;
  const lt_cu_driver *drv = lt_cu_driver_open(&why);
  if (!drv) { open_reason = why ? why : "no CUDA driver"; return; }
  int n = 0;
  lt_cu_result r = drv->device_count(&n);
  if (r != LT_CU_SUCCESS || n <= 0) {
    open_reason = r != LT_CU_SUCCESS ? "cuDeviceGetCount failed" : "no CUDA device";
    return;
  }
  lt_cuda_device_setup(drv, n);
  for (int i = 0; i < LT_CUDA_MAX_DEVICES; i++)
    allocators[i] = (lt_allocator){"cuda-caching", device_alloc, device_free, NULL};
  pthread_mutex_lock(&kernel_lock);
  for (int i = 0; i < LT_NUM_OPS; i++) {
    if (!kernels[i]) kernels[i] = lt_cuda_kernel_table[i];
    /* Under the fake driver, an op without a CUDA kernel runs the CPU's: the
    ** fake's device memory is host memory, and the CPU kernels allocate their
    ** results on the device they were dispatched for, so dispatch, device
    ** checks, copies and autograd on cuda tensors are all exercised without a
    ** GPU. Under a real driver those slots stay empty. */
    if (!kernels[i] && lt_cuda_host_device_memory()) kernels[i] = lt_op_table[i].kernel[LT_KEY_CPU];
  }
  int rc = lt_backend_register(&cuda_backend);
  if (rc == 0) rc = lt_dispatch_register_backend(LT_KEY_CUDA, kernels);
  registered = rc == 0;
  pthread_mutex_unlock(&kernel_lock);
  if (rc < 0) { open_reason = "the CUDA backend could not be registered"; return; }
  open_status = 0;
  open_reason = NULL;
}

int lt_cuda_backend_open(const char **why) {
  pthread_once(&open_once, open_backend);
  if (why) *why = open_reason;
  return open_status;
}
