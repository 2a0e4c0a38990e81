/*
** driver.c — lt_cu_driver_open: the driver this process uses, chosen once
** (the fake, or libcuda.so.1 through dlopen), and the names of results.
**
** Symbols are looked up with dlsym by their exported, versioned names
** (driver_syms.h), not through cuGetProcAddress. A versioned name pins the
** signature the table declares: cuGetProcAddress resolves a plain name at a
** CUDA version, and the answer changes with that version (at 13000,
** "cuCtxSynchronize" is the variant that takes a context), so a version bump
** would silently change an entry's ABI. cuGetProcAddress is itself versioned
** (its _v2 added an argument in 12.0) and would have to be dlsym'd anyway.
** What it offers beyond dlsym, per-thread default stream variants, the seam
** does not use: its NULL stream is the legacy default stream. Drivers keep
** exporting old versioned symbols, so these names stay valid; the one name
** cuda.h 13 moved to a newer version with the same signature
** (cuEventElapsedTime_v2, CUDA 12.8) falls back to the older one.
**
** Fork: the open holds a mutex, and pthread_atfork handlers (registered when
** the program or module is loaded) take it around fork, so a child never
** starts with an open half done: it was either finished before the fork or
** not begun. A child of a process that opened libcuda.so.1 cannot use it (a
** CUDA context does not survive fork), so in the child lt_cu_driver_open
** returns NULL and says why; callers that keep the table must ask again after
** a fork (lt_cu_driver_open is one atomic load once opened). The fake is
** host memory, copied with the process, and stays usable in the child.
** The library handle is never closed: unloading libcuda.so.1 after cuInit is
** not something the driver supports.
*/
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda/driver.h"
#include "cuda/driver_syms.h"

/* dlsym gives object pointers; POSIX makes them interchangeable with function pointers */
_Static_assert(sizeof(void *) == sizeof(lt_cu_result (*)(void)), "function pointers are not void *");

static const struct { const char *symbol, *older; size_t offset; } entries[] = {
#define LT_ENTRY(field, plain, symbol, older) {symbol, older, offsetof(lt_cu_driver, field)},
  LT_CU_DRIVER_SYMS(LT_ENTRY)
#undef LT_ENTRY
};
/* every function pointer of the table, after name, has an entry */
_Static_assert(sizeof entries / sizeof entries[0] ==
               (sizeof(lt_cu_driver) - offsetof(lt_cu_driver, init)) / sizeof(void *),
               "driver_syms.h does not cover every entry of lt_cu_driver");

static lt_cu_driver real;                 /* filled from libcuda.so.1 */
static char reason_buf[256];

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int opened;                 /* 1 once open_driver and open_reason are final */
static const lt_cu_driver *open_driver;
static const char *open_reason;

static const char *reason(const char *fmt, const char *arg) {
  snprintf(reason_buf, sizeof reason_buf, fmt, arg);
  return reason_buf;
}

static const lt_cu_driver *open_libcuda(const char **why) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    if (!e || strstr(e, "cannot open shared object file"))
      *why = "libcuda.so.1 not found (no NVIDIA driver)";
    else
      *why = reason("libcuda.so.1 could not be loaded: %s", e);
    return NULL;
  }
  lt_cu_driver t = {.name = "libcuda.so.1"};
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
    void *p = dlsym(h, entries[i].symbol);
    if (!p && entries[i].older) p = dlsym(h, entries[i].older);
    if (!p) {
      *why = reason("libcuda.so.1 has no %s (a driver older than CUDA 13?)", entries[i].symbol);
      return NULL;
    }
    memcpy((char *)&t + entries[i].offset, &p, sizeof p);
  }
  lt_cu_result r = t.init(0);
  if (r != LT_CU_SUCCESS) {
    *why = reason("cuInit failed: %s", lt_cu_result_name(r));
    return NULL;
  }
  int n = 0;
  r = t.device_count(&n);
  if (r != LT_CU_SUCCESS) {
    *why = reason("cuDeviceGetCount failed: %s", lt_cu_result_name(r));
    return NULL;
  }
  if (n <= 0) {
    *why = "no CUDA device (libcuda.so.1 found none)";
    return NULL;
  }
  real = t;
  return &real;
}

static const lt_cu_driver *choose(const char **why) {
  const char *env = getenv("LUTORCH_CUDA_DRIVER");
  if (!env || !*env || strcmp(env, "libcuda.so.1") == 0) return open_libcuda(why);
  if (strcmp(env, "fake") == 0) return lt_cu_fake_driver();
  if (strcmp(env, "none") == 0) {
    *why = "CUDA turned off (LUTORCH_CUDA_DRIVER=none)";
    return NULL;
  }
  *why = reason("LUTORCH_CUDA_DRIVER=%.64s: no such driver (fake, none or libcuda.so.1)", env);
  return NULL;
}

const lt_cu_driver *lt_cu_driver_open(const char **why) {
  if (!atomic_load_explicit(&opened, memory_order_acquire)) {
    pthread_mutex_lock(&open_lock);
    if (!atomic_load_explicit(&opened, memory_order_relaxed)) {
      const char *r = NULL;
      open_driver = choose(&r);
      open_reason = r;
      atomic_store_explicit(&opened, 1, memory_order_release);
    }
    pthread_mutex_unlock(&open_lock);
  }
  if (why) *why = open_driver ? NULL : open_reason;
  return open_driver;
}

/* ---- fork ---- */
static void fork_prepare(void) { pthread_mutex_lock(&open_lock); }
static void fork_parent(void) { pthread_mutex_unlock(&open_lock); }
static void fork_child(void) {
  if (atomic_load_explicit(&opened, memory_order_relaxed) && open_driver == &real) {
    open_driver = NULL;
    open_reason = "CUDA was initialised before this process forked; a forked child cannot use it";
  }
  pthread_mutex_unlock(&open_lock);
}
__attribute__((constructor)) static void driver_atfork(void) {
  pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* ---- result names ---- */
static const struct { lt_cu_result r; const char *name; } names[] = {
  {0, "CUDA_SUCCESS"},
  {1, "CUDA_ERROR_INVALID_VALUE"},
  {2, "CUDA_ERROR_OUT_OF_MEMORY"},
  {3, "CUDA_ERROR_NOT_INITIALIZED"},
  {4, "CUDA_ERROR_DEINITIALIZED"},
  {34, "CUDA_ERROR_STUB_LIBRARY"},
  {46, "CUDA_ERROR_DEVICE_UNAVAILABLE"},
  {100, "CUDA_ERROR_NO_DEVICE"},
  {101, "CUDA_ERROR_INVALID_DEVICE"},
  {102, "CUDA_ERROR_DEVICE_NOT_LICENSED"},
  {200, "CUDA_ERROR_INVALID_IMAGE"},
  {201, "CUDA_ERROR_INVALID_CONTEXT"},
  {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
  {218, "CUDA_ERROR_INVALID_PTX"},
  {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
  {400, "CUDA_ERROR_INVALID_HANDLE"},
  {500, "CUDA_ERROR_NOT_FOUND"},
  {600, "CUDA_ERROR_NOT_READY"},
  {700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
  {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
  {702, "CUDA_ERROR_LAUNCH_TIMEOUT"},
  {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED"},
  {719, "CUDA_ERROR_LAUNCH_FAILED"},
  {801, "CUDA_ERROR_NOT_SUPPORTED"},
  {802, "CUDA_ERROR_SYSTEM_NOT_READY"},
  {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
  {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"},
  {999, "CUDA_ERROR_UNKNOWN"},
};

const char *lt_cu_result_name(lt_cu_result r) {
  static _Thread_local char buf[32];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].r == r) return names[i].name;
  snprintf(buf, sizeof buf, "CUDA_ERROR_%d", r);
  return buf;
}
