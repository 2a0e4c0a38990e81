/*
** backend.c — the meta device's lt_backend: no memory, nothing to copy.
**
** Storages on meta are made by the core with a size and no bytes (data NULL:
** lt_storage_new), so the allocator is never asked for memory. A copy or fill
** on meta has nothing to write; a copy into meta from the host (x:to("meta"))
** keeps only the geometry; a copy out of meta to the host is PyTorch's error.
*/
#include "core/backend.h"
#include "dispatch/dispatch.h"
#include "metadev/metadev.h"
#include "kernels_meta.h"   /* generated: lt_meta_kernel_table */

static int one_device(void) { return 1; }

static void *no_alloc(lt_allocator *self, size_t nbytes) {
  (void)self; (void)nbytes;
  return lt_error_null("meta: tensors on the meta device have no memory");
}
static void no_free(lt_allocator *self, void *p, size_t nbytes) { (void)self; (void)p; (void)nbytes; }
static lt_allocator meta_alloc = { "meta", no_alloc, no_free, NULL };
static lt_allocator *meta_allocator(int index) { (void)index; return &meta_alloc; }

/* dst = src on meta: only the shapes are checked (src must broadcast to dst) */
static int meta_copy(lt_tensor *dst, const lt_tensor *src) {
  int64_t st[LT_MAX_DIMS];
  return lt_expand_strides("copy_", src, dst->ndim, dst->sizes, st);
}

static int meta_fill(lt_tensor *dst, lt_scalar v) { (void)dst; (void)v; return 0; }

static int to_host(void *dst, const lt_storage *src, size_t offset, size_t nbytes) {
  (void)dst; (void)src; (void)offset; (void)nbytes;
  return lt_error("cannot copy out of meta tensor; no data!");
}

static int from_host(lt_storage *dst, size_t offset, const void *src, size_t nbytes) {
  (void)dst; (void)offset; (void)src; (void)nbytes;
  return 0;
}

static void memory_stats(int index, lt_memory_stats *out) {
  (void)index;
  *out = (lt_memory_stats){0};
}

static void reset_peak(int index) { (void)index; }
static void empty_cache(void) {}

static const lt_backend meta_backend = {
  .name = "meta",
  .device_type = LT_DEV_META,
  .key = LT_KEY_META,
  .host_memory = false,
  .device_count = one_device,
  .allocator = meta_allocator,
  .copy = meta_copy,
  .fill = meta_fill,
  .copy_to_host = to_host,
  .copy_from_host = from_host,
  .synchronize = NULL,
  .memory_stats = memory_stats,
  .reset_peak = reset_peak,
  .empty_cache = empty_cache,
};

void lt_metadev_init(void) {
  /* a static backend and its generated table at a backend key: neither can fail */
  (void)lt_backend_register(&meta_backend);
  (void)lt_dispatch_register_backend(LT_KEY_META, lt_meta_kernel_table);
}
