/*
** backend.c — the CPU backend registers itself through the same interface
** as any other backend: host memory from the CPU allocator, the strided copy
** and fill of copy.c, and byte copies to and from the host that are plain
** memcpy (its memory is the host's). The kernel table, copy and fill are
** those of the build of the kernels this CPU runs best (capability.h).
*/
#include <string.h>
#include "cpu/cpu.h"
#include "cpu/capability.h"
#include "cpu/cvt.h"
#include "dispatch/dispatch.h"

static int one_device(void) { return 1; }

static lt_allocator *cpu_allocator(int index) {
  (void)index;
  return lt_cpu_allocator();
}

static int to_host(void *dst, const lt_storage *src, size_t offset, size_t nbytes) {
  if (nbytes) memcpy(dst, (const char *)src->data + offset, nbytes);
  return 0;
}

static int from_host(lt_storage *dst, size_t offset, const void *src, size_t nbytes) {
  if (nbytes) memcpy((char *)dst->data + offset, src, nbytes);
  return 0;
}

static void memory_stats(int index, lt_memory_stats *out) {
  (void)index;
  lt_cpu_memory_stats(out);
}

static void reset_peak(int index) {
  (void)index;
  lt_cpu_reset_peak();
}

/* copy and fill are set by lt_cpu_init to the chosen build's */
static lt_backend cpu_backend = {
  .name = "cpu",
  .device_type = LT_DEV_CPU,
  .key = LT_KEY_CPU,
  .host_memory = true,
  .device_count = one_device,
  .allocator = cpu_allocator,
  .copy = lt_cpu_copy,
  .fill = lt_cpu_fill,
  .copy_to_host = to_host,
  .copy_from_host = from_host,
  .synchronize = NULL,
  .memory_stats = memory_stats,
  .reset_peak = reset_peak,
  .empty_cache = lt_cpu_empty_cache,
};

void *const *lt_cpu_kernels(void) {
  lt_capability_init();
  return lt_capability_variant()->kernels;
}

void lt_cpu_init(void) {
  lt_capability_init();   /* first: the conversions below stay within its level */
  const lt_cap_variant *v = lt_capability_variant();
  lt_cvt_init();   /* the 16-bit float conversions this CPU runs best */
  cpu_backend.copy = v->copy;
  cpu_backend.fill = v->fill;
  /* a static backend and its generated table at a backend key: neither can fail */
  (void)lt_backend_register(&cpu_backend);
  (void)lt_dispatch_register_backend(LT_KEY_CPU, v->kernels);
}
