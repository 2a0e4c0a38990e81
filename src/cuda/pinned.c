/*
** pinned.c — page-locked host memory and the copies from it that are not
** waited for (x:pin_memory(), x:to("cuda", {non_blocking = true})).
**
**   - A pinned storage is a cpu storage over cuMemHostAlloc'd memory
**     (portable: every context may use it), wrapped as external memory whose
**     release is cuMemFreeHost; is_pinned recognises it by that release.
**     Each is one driver allocation (no caching, unlike PyTorch's host
**     allocator): pinning is for buffers that are reused, such as a
**     DataLoader's batches.
**   - A non-blocking copy from one is queued on the current stream of the
**     destination's device, an event recorded after it, and the source
**     storage retained until that event completes, so dropping the source
**     tensor at once cannot free (or let the host reuse) memory the copy
**     still reads. Completed copies are reaped on every later pinned
**     allocation or copy, on synchronize, and by _pending_pinned_copies.
**
** Under the fake driver pinned memory is the fake's tagged host memory
** (counted by lt_cu_fake_calls("mem_host_alloc")); a held stream keeps a copy
** pending. Nothing here has run on a GPU.
*/
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include "core/error.h"
#include "cuda/cuda.h"
#include "cuda/trace.h"

/* ---- pinned storages ---- */

static void pinned_release(void *data, void *ctx) {
  int dev = (int)(intptr_t)ctx;
  lt_cuda_guard g;
  if (lt_cuda_enter(dev, &g, "cuda: free pinned memory") < 0) return;
  (void)lt_cuda_driver()->mem_free_host(data);
  lt_cuda_leave(&g);
}

bool lt_cuda_is_pinned(const lt_storage *s) {
  return s && s->kind == LT_STORAGE_EXTERNAL && s->release == pinned_release;
}

lt_storage *lt_cuda_pinned_storage(size_t nbytes) {
  static const char op[] = "pin_memory";
  lt_cuda_reap_pinned_copies();
  int dev = lt_device_current(LT_DEV_CUDA);
  lt_cuda_guard g;
  if (lt_cuda_enter(dev, &g, op) < 0) return NULL;
  void *p = NULL;
  /* the driver refuses 0 bytes: an empty tensor still gets a (1-byte) block */
  lt_cu_result r = lt_cuda_driver()->mem_host_alloc(&p, nbytes ? nbytes : 1, LT_CU_MEMHOSTALLOC_PORTABLE);
  lt_cuda_leave(&g);
  if (r != LT_CU_SUCCESS) {
    lt_cuda_fail(op, dev, "mem_host_alloc", r);
    return NULL;
  }
  lt_storage *s = lt_storage_from_blob(p, nbytes, lt_device_cpu(), pinned_release, (void *)(intptr_t)dev);
  if (!s) pinned_release(p, (void *)(intptr_t)dev);
  return s;
}

/* ---- copies not waited for ---- */

typedef struct pending {
  lt_cu_event e;
  lt_storage *src;
  int dev;
  struct pending *next;
} pending;

static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static pending *pendings;

long lt_cuda_reap_pinned_copies(void) {
  const lt_cu_driver *drv = lt_cuda_driver();
  pending *done = NULL;
  long left = 0;
  pthread_mutex_lock(&pending_lock);
  for (pending **pp = &pendings; *pp;) {
    pending *p = *pp;
    if (drv->event_query(p->e) == LT_CU_SUCCESS) {
      *pp = p->next;
      p->next = done;
      done = p;
    } else {
      pp = &p->next;
      left++;
    }
  }
  pthread_mutex_unlock(&pending_lock);
  /* outside the lock: releasing a storage may free pinned memory, which reaps nothing */
  while (done) {
    pending *p = done;
    done = p->next;
    lt_cuda_guard g;
    if (lt_cuda_enter(p->dev, &g, "cuda: pinned copy") == 0) {
      (void)drv->event_destroy(p->e);
      lt_cuda_leave(&g);
    }
    lt_storage_release(p->src);
    free(p);
  }
  return left;
}

int lt_cuda_copy_from_pinned_async(lt_storage *dst, size_t offset, lt_storage *src, size_t src_offset, size_t nbytes) {
  static const char op[] = "cuda: non_blocking copy from pinned memory";
  if (dst->device.type != LT_DEV_CUDA || !lt_cuda_is_pinned(src))
    return lt_error("%s: needs a cuda destination and a pinned source", op);
  if (offset > dst->nbytes || nbytes > dst->nbytes - offset || src_offset > src->nbytes ||
      nbytes > src->nbytes - src_offset)
    return lt_error("%s: %zu bytes are past the end of a storage", op, nbytes);
  (void)lt_cuda_reap_pinned_copies();
  if (nbytes == 0) return 0;
  int dev = dst->device.index;
  pending *p = malloc(sizeof *p);
  if (!p) return lt_error("%s: out of memory", op);
  lt_cuda_guard g;
  if (lt_cuda_enter(dev, &g, op) < 0) { free(p); return -1; }
  const lt_cu_driver *drv = lt_cuda_driver();
  lt_cu_stream s = lt_cuda_current_stream(dev);
  int rc = 0;
  int tr = lt_cuda_tracing ? lt_cuda_trace_begin(dev, (void *)s, "Memcpy HtoD (Pinned)", LT_CUDA_TRACE_MEMCPY, nbytes) : -1;
  lt_cu_result r = drv->memcpy_htod_async((lt_cu_ptr)(uintptr_t)dst->data + offset, (const char *)src->data + src_offset,
                                          nbytes, s);
  lt_cuda_trace_end(tr);
  if (r != LT_CU_SUCCESS) rc = lt_cuda_fail(op, dev, "memcpy_htod_async", r);
  p->e = NULL;
  if (rc == 0 && (r = drv->event_create(&p->e, LT_CU_EVENT_DISABLE_TIMING)) != LT_CU_SUCCESS)
    rc = lt_cuda_fail(op, dev, "event_create", r);
  if (rc == 0 && (r = drv->event_record(p->e, s)) != LT_CU_SUCCESS) rc = lt_cuda_fail(op, dev, "event_record", r);
  if (rc < 0) {
    /* the copy may be queued: wait for it rather than let the source go early */
    (void)drv->stream_synchronize(s);
    if (p->e) (void)drv->event_destroy(p->e);
    lt_cuda_leave(&g);
    free(p);
    return -1;
  }
  lt_cuda_leave(&g);
  lt_storage_retain(src);
  p->src = src;
  p->dev = dev;
  pthread_mutex_lock(&pending_lock);
  p->next = pendings;
  pendings = p;
  pthread_mutex_unlock(&pending_lock);
  return 0;
}
