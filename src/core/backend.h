/*
** backend.h — the interface every backend implements, and the registry.
**
** A backend owns one device type: its allocator, the copies and fills the
** core needs to move and initialise data without knowing the device, and its
** kernel table (registered with the dispatcher by the backend itself, at its
** dispatch key). The CPU backend registers through this interface like any
** other (lt_init); a loadable backend registers when it is loaded. The core
** finds a backend by device and reports "cuda: backend not loaded" where none
** is registered.
**
** A backend's memory may not be host memory: the core never dereferences a
** data pointer of a device whose backend has host_memory false; it copies to
** the host first (lt_tensor_to_host), as printing, item(), serialization and
** anomaly mode do.
*/
#ifndef LT_BACKEND_H
#define LT_BACKEND_H

#include "core/tensor.h"

typedef struct lt_backend {
  const char *name;             /* "cpu", "cuda": the device's name in messages */
  int device_type;              /* LT_DEV_* */
  lt_dispatch_key key;          /* the dispatch key its kernels sit at */
  bool host_memory;             /* its data pointers are host addresses the core may read */
  int (*device_count)(void);
  lt_allocator *(*allocator)(int index);
  /* dst[...] = src on one device of this backend: src broadcast to dst's shape, dtype converted */
  int (*copy)(lt_tensor *dst, const lt_tensor *src);
  int (*fill)(lt_tensor *dst, lt_scalar v);
  /* nbytes between a storage of this backend (from byte offset) and host memory */
  int (*copy_to_host)(void *dst, const lt_storage *src, size_t offset, size_t nbytes);
  int (*copy_from_host)(lt_storage *dst, size_t offset, const void *src, size_t nbytes);
  int (*synchronize)(int index);            /* wait for queued work; may be NULL */
  void (*memory_stats)(int index, lt_memory_stats *out);
  void (*reset_peak)(int index);
  void (*empty_cache)(void);                /* return cached blocks to the device */
} lt_backend;

/* Register (or replace) the backend for b->device_type. b must outlive the
** process (a static struct). 0 or -1. */
int lt_backend_register(const lt_backend *b);
/* the backend of dev's type; NULL with "cuda: backend not loaded" (or a bad
** device index) in the error slot */
const lt_backend *lt_backend_of(lt_device dev);
/* the backend registered for a device type, or NULL (no error set) */
const lt_backend *lt_backend_get(int device_type);
/* "cpu", "cuda", ... for a device type, registered or not */
const char *lt_device_type_name(int device_type);

/* t as host-readable memory: t itself (retained) when its backend's memory is
** host memory, else a contiguous host copy. New reference, NULL on error. */
lt_tensor *lt_tensor_to_host(lt_tensor *t);
/* a copy of t on dev (t itself, retained, when already there). No autograd:
** the _to_device op records the graph. */
lt_tensor *lt_tensor_to_device(lt_tensor *t, lt_device dev);

#endif
