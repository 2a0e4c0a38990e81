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
  /* Optional (NULL where the backend has none; CUDA has them): page-locked
  ** host memory, a cpu storage of nbytes the device reads directly (NULL
  ** with the error set when it cannot be had); whether a cpu storage is
  ** such memory; and a copy of nbytes from one (src, from byte src_offset)
  ** into a storage of this backend queued on the current stream without
  ** waiting, src kept alive until the copy has run. */
  lt_storage *(*pinned_storage)(size_t nbytes);
  bool (*is_pinned)(const lt_storage *s);
  int (*copy_from_pinned_async)(lt_storage *dst, size_t offset, lt_storage *src, size_t src_offset, size_t nbytes);
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
/* the same; non_blocking: a contiguous cpu tensor in pinned memory moves to a
** device whose backend has copy_from_pinned_async without waiting for the
** copy (anything else is copied as lt_tensor_to_device does) */
lt_tensor *lt_tensor_to_device_nb(lt_tensor *t, lt_device dev, bool non_blocking);
/* t's storage is page-locked host memory of some loaded backend (x:is_pinned()) */
bool lt_tensor_is_pinned(const lt_tensor *t);

#endif
