/*
** cpu.h — the CPU backend's public face: its registration, its allocator,
** and the strided copy and fill the core reaches through lt_backend. The
** kernels themselves are reached only through the dispatcher (their
** prototypes are generated into kernels_cpu.h, for src/cpu alone).
*/
#ifndef LT_CPU_H
#define LT_CPU_H

#include "core/backend.h"

/* register the CPU backend (lt_init calls it; once is enough, more is harmless) */
void lt_cpu_init(void);
/* the CPU's kernel table (op id -> kernel), for lt_dispatch_register_backend (a test
** backend borrows it, and lt_cpu_copy/lt_cpu_fill below) */
void *const *lt_cpu_kernels(void);

/* dst[...] = src on the CPU: src broadcast to dst's shape, dtype converted */
int lt_cpu_copy(lt_tensor *dst, const lt_tensor *src);
int lt_cpu_fill(lt_tensor *dst, lt_scalar v);

/* The process-wide CPU allocator: 64-byte aligned; blocks of at least
** LT_CPU_CACHE_MIN bytes are mmapped (with MADV_HUGEPAGE) and cached on free,
** so a large fresh output does not pay page faults each time. */
#define LT_CPU_CACHE_MIN ((size_t)1 << 20)
lt_allocator *lt_cpu_allocator(void);
void lt_cpu_memory_stats(lt_memory_stats *out);
void lt_cpu_empty_cache(void);             /* give cached blocks back to the OS */
void lt_cpu_set_cache_limit(size_t bytes); /* most bytes the cache keeps (default 1 GiB) */
void lt_cpu_reset_peak(void);

#endif
