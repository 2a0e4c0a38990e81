/*
** backend.c — the CPU backend registers itself through the same interface
** as any other backend: host memory from the CPU allocator, the strided copy
** and fill of copy.c, and byte copies to and from the host that are plain
** memcpy (its memory is the host's).
*/
#include <string.h>
#include "cpu/cpu.h"
#include "cpu/cvt.h"
#include "kernels_cpu.h"   /* generated: lt_cpu_kernel_table */

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

static const lt_backend cpu_backend = {
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

void *const *lt_cpu_kernels(void) { return lt_cpu_kernel_table; }

void lt_cpu_init(void) {
  lt_cvt_init();   /* the 16-bit float conversions this CPU runs best */
  /* a static backend and its generated table at a backend key: neither can fail */
  (void)lt_backend_register(&cpu_backend);
  (void)lt_dispatch_register_backend(LT_KEY_CPU, lt_cpu_kernel_table);
}
