/*
** alloc.h — the allocator interface. A storage remembers the allocator that
** made it and returns its bytes there. Each backend supplies its own (the
** CPU's is in src/cpu/cpu.h; CUDA's caching allocator in src/cuda).
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

#endif
