/*
** alloc.h — the allocator interface and the CPU allocator.
** A storage remembers the allocator that made it and returns its bytes there.
** The CUDA backend supplies its own allocator through the same interface.
*/
#ifndef LT_ALLOC_H
#define LT_ALLOC_H

#include <stddef.h>
#include <stdint.h>

typedef struct lt_allocator lt_allocator;
struct lt_allocator {
  const char *name;
  /* NULL (with the error slot set) on failure; nbytes may be 0 */
  void *(*alloc)(lt_allocator *self, size_t nbytes);
  void (*free)(lt_allocator *self, void *ptr, size_t nbytes);
  void *ctx;
};

typedef struct lt_memory_stats {
  int64_t allocated;      /* bytes currently handed out */
  int64_t cached;         /* bytes held in the cache, free for reuse */
  int64_t peak;           /* high-water mark of allocated */
  int64_t num_allocs;     /* allocation calls */
  int64_t cache_hits;     /* allocations served from the cache */
} lt_memory_stats;

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
