/*
** alloc.c — the process-wide CPU allocator.
**
** Small blocks come from malloc (aligned by hand). Large blocks (>= LT_CPU_CACHE_MIN)
** are mmapped and, when freed, parked in a cache instead of being unmapped:
** an op that writes a fresh 64 MB output every step would otherwise take
** ~16k page faults (and the kernel's zeroing behind each) every step, which
** costs more than the op. A cached block is already faulted in, so reusing it
** costs nothing.
**
** A zero-byte request returns a static sentinel that free ignores, so it is
** never NULL but also not distinct between calls. Block contents are
** undefined, as with malloc.
**
** `allocated` and `peak` count the bytes asked for; `cached` counts the
** mapped bytes sitting in the cache.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* MAP_ANONYMOUS, posix_memalign under -std=c11 */
#endif
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <malloc.h>
#include "cpu/cpu.h"
#include "core/error.h"

#define ALIGN       64
#define HUGE_PAGE   ((size_t)2 << 20)
#define SMALL_UNIT  ((size_t)64 << 10)   /* a multiple of every common page size */
#define DEFAULT_CACHE_LIMIT ((size_t)1 << 30)

static _Alignas(ALIGN) unsigned char zero_block[ALIGN];

/* Statistics are atomics so reading them never takes the lock. */
static atomic_llong st_allocated, st_cached, st_peak, st_allocs, st_hits;

static void note_alloc(size_t nbytes) {
  long long now = atomic_fetch_add(&st_allocated, (long long)nbytes) + (long long)nbytes;
  long long peak = atomic_load(&st_peak);
  while (now > peak && !atomic_compare_exchange_weak(&st_peak, &peak, now)) {}
}

static void *out_of_memory(size_t nbytes) {
  return lt_error_null("out of memory allocating %zu bytes", nbytes);
}


/* ---- mapping ------------------------------------------------------------ */

/* Huge pages only cover 2 MiB-aligned 2 MiB stretches, so a block's tail is
** rounded up to 2 MiB when the slack is small next to the block (<= 1/8);
** otherwise a 2 MiB + 1 request would cost 4 MiB. 0 means overflow. */
static size_t round_large(size_t n) {
  size_t unit = SMALL_UNIT;
  if (n >= HUGE_PAGE) {
    size_t up = (n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    if (up >= n && up - n <= n / 8) return up;
  }
  if (n > SIZE_MAX - unit) return 0;
  return (n + unit - 1) & ~(unit - 1);
}

/* Map `size` bytes, starting on a 2 MiB boundary when the block is big enough
** to hold a huge page (mmap alone only promises page alignment). */
static void *map_block(size_t size) {
  size_t align = size >= HUGE_PAGE ? HUGE_PAGE : 0;
  if (size > SIZE_MAX - align) return NULL;
  size_t len = size + align;
  char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  if (align) {
    char *a = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
    size_t head = (size_t)(a - p), tail = len - head - size;
    if (head) munmap(p, head);
    if (tail) munmap(a + size, tail);
    p = a;
#ifdef MADV_HUGEPAGE
    madvise(p, size, MADV_HUGEPAGE);   /* advice only: fails harmlessly when THP is off */
#endif
  }
  return p;
}


/* ---- the cache: a list of free blocks, oldest first ---------------------- */

/* A cached block is ours while it waits, so its list node lives in its own
** first bytes: caching never allocates and so never fails. */
typedef struct cblock {
  struct cblock *prev, *next;
  size_t size;
} cblock;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cblock *oldest, *newest;
static size_t cached_bytes;
static size_t cache_limit = DEFAULT_CACHE_LIMIT;

static void unlink_block(cblock *b) {
  if (b->prev) b->prev->next = b->next; else oldest = b->next;
  if (b->next) b->next->prev = b->prev; else newest = b->prev;
  cached_bytes -= b->size;
  atomic_store(&st_cached, (long long)cached_bytes);
}

static void push_block(void *p, size_t size) {
  cblock *b = p;
  b->size = size;
  b->next = NULL;
  b->prev = newest;
  if (newest) newest->next = b; else oldest = b;
  newest = b;
  cached_bytes += size;
  atomic_store(&st_cached, (long long)cached_bytes);
}

/* Detach the oldest blocks until the cache fits `limit`; returns them as a
** chain so the caller can munmap after dropping the lock (munmap of a big
** block is slow: it shoots down TLBs on every core). */
static cblock *trim_to(size_t limit) {
  cblock *chain = NULL;
  while (cached_bytes > limit) {
    cblock *b = oldest;
    unlink_block(b);
    b->next = chain;
    chain = b;
  }
  return chain;
}

static void unmap_chain(cblock *b) {
  while (b) {
    cblock *next = b->next;
    munmap(b, b->size);
    b = next;
  }
}

/* Smallest cached block that holds `need` without wasting more than `need`. */
static cblock *best_fit(size_t need) {
  cblock *best = NULL;
  for (cblock *b = oldest; b; b = b->next) {
    if (b->size < need || b->size - need > need) continue;
    if (!best || b->size < best->size) best = b;
    if (b->size == need) break;
  }
  return best;
}


/* ---- live large blocks: pointer -> mapped size -------------------------- */

/* free() is told the size that was asked for, but a block served from the
** cache may be bigger than that; this open-addressed table remembers the
** real mapped size of every large block handed out. */
typedef struct { void *ptr; size_t size; } live_slot;
static live_slot *live;
static size_t live_cap, live_count;   /* live_cap is 0 or a power of two */

static size_t live_home(void *p) {
  uint64_t h = (uint64_t)(uintptr_t)p >> 12;
  h *= 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 32) & (live_cap - 1);
}

static void live_put(void *p, size_t size) {
  size_t i = live_home(p);
  while (live[i].ptr) i = (i + 1) & (live_cap - 1);
  live[i].ptr = p;
  live[i].size = size;
  live_count++;
}

static bool live_insert(void *p, size_t size) {
  if (2 * (live_count + 1) > live_cap) {   /* keep the load under 1/2 */
    size_t oldcap = live_cap, newcap = oldcap ? 2 * oldcap : 64;
    live_slot *old = live, *fresh = calloc(newcap, sizeof *fresh);
    if (!fresh) return false;
    live = fresh;
    live_cap = newcap;
    live_count = 0;
    for (size_t i = 0; i < oldcap; i++)
      if (old[i].ptr) live_put(old[i].ptr, old[i].size);
    free(old);
  }
  live_put(p, size);
  return true;
}

/* Remove `p` and return its size, 0 if unknown. Deletion shifts later
** entries of the probe run back so lookups never need tombstones. */
static size_t live_remove(void *p) {
  if (!live_cap) return 0;
  size_t mask = live_cap - 1, i = live_home(p);
  while (live[i].ptr != p) {
    if (!live[i].ptr) return 0;
    i = (i + 1) & mask;
  }
  size_t size = live[i].size;
  for (size_t j = (i + 1) & mask; live[j].ptr; j = (j + 1) & mask) {
    size_t h = live_home(live[j].ptr);
    /* move j into the hole at i unless its home lies cyclically in (i, j] */
    bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
    if (!stays) {
      live[i] = live[j];
      i = j;
    }
  }
  live[i].ptr = NULL;
  live_count--;
  return size;
}


/* ---- fork ---------------------------------------------------------------- */

/* A DataLoader worker forks while other threads may be allocating; holding
** the lock across fork() leaves the child with a consistent cache and an
** unlocked mutex instead of one owned by a thread that does not exist. */
static void fork_prepare(void) { pthread_mutex_lock(&lock); }
static void fork_parent(void) { pthread_mutex_unlock(&lock); }
static void fork_child(void) { pthread_mutex_unlock(&lock); }

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void init(void) { pthread_atfork(fork_prepare, fork_parent, fork_child); }


/* ---- the allocator -------------------------------------------------------- */

static void *alloc_large(size_t nbytes) {
  size_t need = round_large(nbytes);
  if (!need) return out_of_memory(nbytes);
  pthread_once(&init_once, init);
  pthread_mutex_lock(&lock);
  cblock *b = best_fit(need);
  if (b) {
    unlink_block(b);
    size_t size = b->size;
    if (!live_insert(b, size)) {
      pthread_mutex_unlock(&lock);
      munmap(b, size);
      return out_of_memory(nbytes);
    }
    pthread_mutex_unlock(&lock);
    atomic_fetch_add(&st_hits, 1);
    return b;
  }
  pthread_mutex_unlock(&lock);
  void *p = map_block(need);
  if (!p) {   /* the cache may hold what the OS is missing */
    lt_cpu_empty_cache();
    p = map_block(need);
    if (!p) return out_of_memory(nbytes);
  }
  pthread_mutex_lock(&lock);
  bool ok = live_insert(p, need);
  pthread_mutex_unlock(&lock);
  if (!ok) {
    munmap(p, need);
    return out_of_memory(nbytes);
  }
  return p;
}

static void free_large(void *p) {
  cblock *evicted = NULL;
  pthread_mutex_lock(&lock);
  size_t size = live_remove(p);
  assert(size && "lt_cpu_allocator: freeing a block it did not allocate");
  if (!size) {   /* not ours: leaking beats unmapping someone else's memory */
    pthread_mutex_unlock(&lock);
    return;
  }
  if (size > cache_limit) {
    pthread_mutex_unlock(&lock);
    munmap(p, size);
    return;
  }
  push_block(p, size);
  evicted = trim_to(cache_limit);
  pthread_mutex_unlock(&lock);
  unmap_chain(evicted);
}

/* Blocks under LT_CPU_CACHE_MIN come from malloc. glibc's defaults make those
** costly for tensor work: it mmaps anything over 128 KiB afresh (a page fault
** and a zeroed page per 4 KiB, every time: a 256 KiB result cost 5x the op)
** and gives the top of the heap back above 128 KiB free (so a 32 KiB
** temporary made in a loop faults its pages in again each step). Large
** blocks are this file's business, so malloc keeps the rest on its heap —
** up to glibc's largest threshold (32 MiB), not just below LT_CPU_CACHE_MIN:
** libraries beside us malloc big temporaries too (OpenMPI a buffer the size
** of the message in every collective), and a fixed threshold also turns off
** glibc's own raising of it, so each of those was a fresh mmap, faulted in and
** unmapped again (a 1 MiB all_reduce ran 4x slower than from plain C). */
static pthread_once_t malloc_tuned = PTHREAD_ONCE_INIT;
static void tune_malloc(void) {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

/* Small blocks: malloc'd with room to align by hand. posix_memalign would ask
** glibc for more than the block each time (size + alignment + slack), so a
** freed block never fits the next request of the same size and the heap grows
** with every temporary; a plain malloc of a fixed padded size reuses it. The
** pointer malloc gave sits just below the aligned block. */
static void *small_alloc(size_t nbytes) {
  char *raw = malloc(nbytes + ALIGN);
  if (!raw) return NULL;
  char *p = (char *)(((uintptr_t)raw + ALIGN) & ~(uintptr_t)(ALIGN - 1));
  ((void **)p)[-1] = raw;
  return p;
}

static void small_free(void *p) { free(((void **)p)[-1]); }

static void *cpu_alloc(lt_allocator *self, size_t nbytes) {
  (void)self;
  pthread_once(&malloc_tuned, tune_malloc);
  atomic_fetch_add(&st_allocs, 1);
  void *p;
  if (nbytes == 0) return zero_block;
  if (nbytes >= LT_CPU_CACHE_MIN) {
    p = alloc_large(nbytes);
    if (!p) return NULL;
  } else if (!(p = small_alloc(nbytes))) {
    return out_of_memory(nbytes);
  }
  note_alloc(nbytes);
  return p;
}

static void cpu_free(lt_allocator *self, void *ptr, size_t nbytes) {
  (void)self;
  if (!ptr || ptr == zero_block) return;
  atomic_fetch_sub(&st_allocated, (long long)nbytes);
  if (nbytes >= LT_CPU_CACHE_MIN) free_large(ptr);
  else small_free(ptr);
}

static lt_allocator cpu_allocator = {"cpu", cpu_alloc, cpu_free, NULL};

lt_allocator *lt_cpu_allocator(void) { return &cpu_allocator; }

void lt_cpu_memory_stats(lt_memory_stats *out) {
  out->allocated = atomic_load(&st_allocated);
  out->cached = atomic_load(&st_cached);
  out->peak = atomic_load(&st_peak);
  out->num_allocs = atomic_load(&st_allocs);
  out->cache_hits = atomic_load(&st_hits);
}

void lt_cpu_reset_peak(void) {
  atomic_store(&st_peak, atomic_load(&st_allocated));
}

void lt_cpu_empty_cache(void) {
  pthread_once(&init_once, init);
  pthread_mutex_lock(&lock);
  cblock *chain = trim_to(0);
  pthread_mutex_unlock(&lock);
  unmap_chain(chain);
}

void lt_cpu_set_cache_limit(size_t bytes) {
  pthread_once(&init_once, init);
  pthread_mutex_lock(&lock);
  cache_limit = bytes;
  cblock *chain = trim_to(bytes);
  pthread_mutex_unlock(&lock);
  unmap_chain(chain);
}
