/*
** fake_backend.h — a test backend: malloc-backed memory registered as the
** "cuda" device, running the CPU kernel table at the CUDA dispatch key. Its
** memory is host memory in truth, but it says it is not (host_memory false),
** so the core has to use its byte copies, which it counts: a test can check
** that printing, item(), serialization and cross-device copies really went
** through the host. Two devices, so "cuda:1" exists and "cuda:2" does not.
** Header-only: the C test and the Lua test module both include it.
*/
#ifndef LT_FAKE_BACKEND_H
#define LT_FAKE_BACKEND_H

#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include "core/backend.h"
#include "cpu/cpu.h"
#include "dispatch/dispatch.h"

#define FAKE_DEVICES 2

typedef struct fake_counters {
  atomic_llong allocated, peak, num_allocs, to_host, from_host, to_host_bytes;
} fake_counters;
static fake_counters fake_count;

static void *fake_alloc(lt_allocator *self, size_t nbytes) {
  (void)self;
  /* 64-byte aligned like the CPU's, one extra block so 0 bytes is still a pointer */
  void *p = aligned_alloc(64, (nbytes + 63) / 64 * 64 + 64);
  if (!p) { lt_error("fake cuda: out of memory allocating %zu bytes", nbytes); return NULL; }
  long long now = atomic_fetch_add(&fake_count.allocated, (long long)nbytes) + (long long)nbytes;
  long long pk = atomic_load(&fake_count.peak);
  while (now > pk && !atomic_compare_exchange_weak(&fake_count.peak, &pk, now)) {}
  atomic_fetch_add(&fake_count.num_allocs, 1);
  return p;
}

static void fake_free(lt_allocator *self, void *p, size_t nbytes) {
  (void)self;
  atomic_fetch_sub(&fake_count.allocated, (long long)nbytes);
  free(p);
}

static lt_allocator fake_allocator = {"fake-cuda", fake_alloc, fake_free, NULL};

static int fake_device_count(void) { return FAKE_DEVICES; }
static lt_allocator *fake_allocator_of(int index) { (void)index; return &fake_allocator; }

static int fake_to_host(void *dst, const lt_storage *src, size_t offset, size_t nbytes) {
  if (src->device.type != LT_DEV_CUDA) return lt_error("fake cuda: copy_to_host from a %s storage", "non-cuda");
  if (offset + nbytes > src->nbytes) return lt_error("fake cuda: copy_to_host past the end of the storage");
  atomic_fetch_add(&fake_count.to_host, 1);
  atomic_fetch_add(&fake_count.to_host_bytes, (long long)nbytes);
  if (nbytes) memcpy(dst, (const char *)src->data + offset, nbytes);
  return 0;
}

static int fake_from_host(lt_storage *dst, size_t offset, const void *src, size_t nbytes) {
  if (dst->device.type != LT_DEV_CUDA) return lt_error("fake cuda: copy_from_host into a non-cuda storage");
  if (offset + nbytes > dst->nbytes) return lt_error("fake cuda: copy_from_host past the end of the storage");
  atomic_fetch_add(&fake_count.from_host, 1);
  if (nbytes) memcpy((char *)dst->data + offset, src, nbytes);
  return 0;
}

/* same-device copies and fills: the CPU's loops, after checking the devices */
static int fake_copy(lt_tensor *dst, const lt_tensor *src) {
  if (lt_tensor_device(dst).type != LT_DEV_CUDA || !lt_device_eq(lt_tensor_device(dst), lt_tensor_device(src)))
    return lt_error("fake cuda: copy between different devices reached the backend");
  return lt_cpu_copy(dst, src);
}

static int fake_fill(lt_tensor *dst, lt_scalar v) {
  if (lt_tensor_device(dst).type != LT_DEV_CUDA) return lt_error("fake cuda: fill of a non-cuda tensor");
  return lt_cpu_fill(dst, v);
}

static int fake_synchronize(int index) { (void)index; return 0; }

static void fake_memory_stats(int index, lt_memory_stats *out) {
  (void)index;
  memset(out, 0, sizeof *out);
  out->allocated = atomic_load(&fake_count.allocated);
  out->peak = atomic_load(&fake_count.peak);
  out->num_allocs = atomic_load(&fake_count.num_allocs);
}

static const lt_backend fake_backend = {
  .name = "cuda",
  .device_type = LT_DEV_CUDA,
  .key = LT_KEY_CUDA,
  .host_memory = false,
  .device_count = fake_device_count,
  .allocator = fake_allocator_of,
  .copy = fake_copy,
  .fill = fake_fill,
  .copy_to_host = fake_to_host,
  .copy_from_host = fake_from_host,
  .synchronize = fake_synchronize,
  .memory_stats = fake_memory_stats,
  .reset_peak = NULL,
  .empty_cache = NULL,
};

/* register the fake device, and the CPU's kernels at the CUDA key */
static int fake_backend_install(void) {
  lt_init();
  if (lt_backend_register(&fake_backend) < 0) return -1;
  return lt_dispatch_register_backend(LT_KEY_CUDA, lt_cpu_kernels());
}

#endif
