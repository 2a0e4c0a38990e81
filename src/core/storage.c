/*
** storage.c — refcounted buffers on one device from one allocator.
** Small CPU storages carry their bytes in the same allocation as the header,
** so a one-element result costs one malloc, not two; every other storage
** comes from its device's backend allocator.
*/
#include <stdlib.h>
#include <string.h>
#include "core/backend.h"

#define INLINE_BYTES 64      /* storages up to this size live inside their header */

void (*lt_storage_bytes_hook)(int64_t delta) = NULL;
void (*lt_storage_trace_hook)(const lt_storage *s, int64_t delta) = NULL;

typedef struct inline_storage {
  lt_storage s;
  _Alignas(64) unsigned char bytes[INLINE_BYTES];
} inline_storage;

/* freed inline storages wait in a small per-thread list, like tensor headers */
#ifdef __SANITIZE_ADDRESS__
#define INLINE_CACHE_MAX 0
#else
#define INLINE_CACHE_MAX 4096
#endif
static _Thread_local inline_storage *inline_cache = NULL;
static _Thread_local int inline_cache_n = 0;

lt_storage *lt_storage_new(lt_device dev, size_t nbytes) {
  lt_storage *s;
  /* a meta storage has a size and no bytes: data stays NULL and nothing is counted */
  if (dev.type == LT_DEV_META) return lt_storage_from_blob(NULL, nbytes, dev, NULL, NULL);
  if (dev.type == LT_DEV_CPU && nbytes <= INLINE_BYTES) {
    inline_storage *is = inline_cache;
    if (is) {
      inline_cache = (inline_storage *)is->s.data;   /* linked through the data slot */
      inline_cache_n--;
    } else {
      is = aligned_alloc(64, sizeof(inline_storage));
    }
    if (!is) return lt_error_null("out of memory allocating a storage");
    s = &is->s;
    s->data = is->bytes;
    s->allocator = NULL;
    s->kind = LT_STORAGE_INLINE;
  } else {
    const lt_backend *b = lt_backend_of(dev);
    if (!b) return NULL;
    lt_allocator *a = b->allocator(dev.index);
    if (!a) return NULL;
    s = malloc(sizeof(lt_storage));
    if (!s) return lt_error_null("out of memory allocating a storage");
    s->data = a->alloc(a, nbytes);
    if (!s->data) { free(s); return NULL; }
    s->allocator = a;
    s->kind = LT_STORAGE_ALLOCATED;
    if (lt_storage_bytes_hook) lt_storage_bytes_hook((int64_t)nbytes);
  }
  atomic_init(&s->refcount, 1);
  atomic_init(&s->version, 0);
  s->nbytes = nbytes;
  s->device = dev;
  s->release = NULL;
  s->release_ctx = NULL;
  if (lt_storage_trace_hook) lt_storage_trace_hook(s, (int64_t)nbytes);
  return s;
}

lt_storage *lt_storage_from_blob(void *data, size_t nbytes, lt_device dev,
                                 void (*release)(void *, void *), void *ctx) {
  lt_storage *s = malloc(sizeof(lt_storage));
  if (!s) return lt_error_null("out of memory allocating a storage");
  atomic_init(&s->refcount, 1);
  atomic_init(&s->version, 0);
  s->data = data;
  s->nbytes = nbytes;
  s->device = dev;
  s->allocator = NULL;
  s->release = release;
  s->release_ctx = ctx;
  s->kind = LT_STORAGE_EXTERNAL;
  return s;
}

int lt_storage_reallocate(lt_storage *s, size_t nbytes) {
  if (s->kind != LT_STORAGE_ALLOCATED)
    return lt_error("a storage that is %s cannot be reallocated (only memory from an allocator can)",
                    s->kind == LT_STORAGE_INLINE ? "small enough to live in its header" : "external memory");
  if (nbytes == s->nbytes) return 0;
  if (s->nbytes) {
    if (lt_storage_trace_hook) lt_storage_trace_hook(s, -(int64_t)s->nbytes);
    s->allocator->free(s->allocator, s->data, s->nbytes);
    if (lt_storage_bytes_hook) lt_storage_bytes_hook(-(int64_t)s->nbytes);
  }
  s->data = NULL;
  s->nbytes = 0;
  if (nbytes == 0) return 0;
  void *d = s->allocator->alloc(s->allocator, nbytes);
  if (!d) return -1;
  s->data = d;
  s->nbytes = nbytes;
  if (lt_storage_bytes_hook) lt_storage_bytes_hook((int64_t)nbytes);
  if (lt_storage_trace_hook) lt_storage_trace_hook(s, (int64_t)nbytes);
  return 0;
}

void lt_storage_retain(lt_storage *s) {
  atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed);
}

void lt_storage_release(lt_storage *s) {
  if (!s) return;
  if (atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1) return;
  if (lt_storage_trace_hook && s->kind != LT_STORAGE_EXTERNAL) lt_storage_trace_hook(s, -(int64_t)s->nbytes);
  if (s->kind == LT_STORAGE_ALLOCATED) {
    s->allocator->free(s->allocator, s->data, s->nbytes);
    if (lt_storage_bytes_hook) lt_storage_bytes_hook(-(int64_t)s->nbytes);
  } else if (s->kind == LT_STORAGE_EXTERNAL && s->release) {
    s->release(s->data, s->release_ctx);
  } else if (s->kind == LT_STORAGE_INLINE && inline_cache_n < INLINE_CACHE_MAX) {
    s->data = inline_cache;
    inline_cache = (inline_storage *)s;
    inline_cache_n++;
    return;
  }
  free(s);   /* an inline storage's bytes go with it */
}
