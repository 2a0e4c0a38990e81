/*
** device.c — the CUDA devices as the backend sees them: the driver table,
** each device's primary context (retained the first time a device is used,
** as PyTorch creates contexts lazily: a context costs device memory), the
** current stream of each device per thread, and the guard that makes a
** device's context current around driver calls and restores the caller's.
*/
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include "core/error.h"
#include "cuda/cuda.h"

static const lt_cu_driver *drv;
static int ndev;
static bool host_memory;
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(lt_cu_ctx) ctxs[LT_CUDA_MAX_DEVICES];
static _Thread_local lt_cu_stream current[LT_CUDA_MAX_DEVICES];

void lt_cuda_device_setup(const lt_cu_driver *d, int count) {
  drv = d;
  ndev = count < LT_CUDA_MAX_DEVICES ? count : LT_CUDA_MAX_DEVICES;
  /* the fake's device pointers are host addresses (cuda/driver.h) */
  host_memory = d == lt_cu_fake_driver();
}

const lt_cu_driver *lt_cuda_driver(void) { return drv; }
int lt_cuda_device_count(void) { return ndev; }
bool lt_cuda_host_device_memory(void) { return host_memory; }

int lt_cuda_fail(const char *op, int dev, const char *what, lt_cu_result r) {
  return lt_error("%s: cuda:%d: %s failed: %s", op, dev, what, lt_cu_result_name(r));
}

static lt_cu_ctx context(int dev, const char *op) {
  lt_cu_ctx c = atomic_load_explicit(&ctxs[dev], memory_order_acquire);
  if (c) return c;
  pthread_mutex_lock(&ctx_lock);
  c = atomic_load_explicit(&ctxs[dev], memory_order_relaxed);
  if (!c) {
    lt_cu_result r = drv->primary_ctx_retain(&c, dev);
    if (r != LT_CU_SUCCESS) {
      c = NULL;
      lt_cuda_fail(op, dev, "primary_ctx_retain", r);
    } else {
      atomic_store_explicit(&ctxs[dev], c, memory_order_release);
    }
  }
  pthread_mutex_unlock(&ctx_lock);
  return c;
}

bool lt_cuda_device_started(int dev) {
  return dev >= 0 && dev < ndev && atomic_load_explicit(&ctxs[dev], memory_order_acquire) != NULL;
}

int lt_cuda_enter(int dev, lt_cuda_guard *g, const char *op) {
  g->switched = false;
  g->prev = NULL;
  if (!drv) return lt_error("%s: the CUDA backend is not open", op);
  if (dev < 0 || dev >= ndev) return lt_error("%s: device cuda:%d does not exist (%d devices)", op, dev, ndev);
  lt_cu_ctx c = context(dev, op);
  if (!c) return -1;
  lt_cu_ctx cur = NULL;
  lt_cu_result r = drv->ctx_get_current(&cur);
  if (r != LT_CU_SUCCESS) return lt_cuda_fail(op, dev, "ctx_get_current", r);
  if (cur == c) return 0;
  r = drv->ctx_set_current(c);
  if (r != LT_CU_SUCCESS) return lt_cuda_fail(op, dev, "ctx_set_current", r);
  g->prev = cur;
  g->switched = true;
  return 0;
}

void lt_cuda_leave(lt_cuda_guard *g) {
  if (g->switched) drv->ctx_set_current(g->prev);
  g->switched = false;
}

lt_cu_stream lt_cuda_current_stream(int dev) {
  return dev >= 0 && dev < LT_CUDA_MAX_DEVICES ? current[dev] : NULL;
}

void lt_cuda_set_current_stream(int dev, lt_cu_stream s) {
  if (dev >= 0 && dev < LT_CUDA_MAX_DEVICES) current[dev] = s;
}
