/*
** test_alloc.c — the CPU allocator: alignment, the large-block cache, stats,
** limits, out-of-memory, and many threads at once.
*/
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "ctest.h"
#include "core/alloc.h"
#include "core/error.h"

#define MB ((size_t)1 << 20)

static lt_allocator *A;

static void *get(size_t n) { return A->alloc(A, n); }
static void put(void *p, size_t n) { A->free(A, p, n); }

static lt_memory_stats stats(void) {
  lt_memory_stats s;
  lt_cpu_memory_stats(&s);
  return s;
}

static long minor_faults(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

TEST(test_alignment) {
  static const size_t sizes[] = {1, 7, 63, 64, 65, 1000, 4096, 100000,
                                 MB - 1, MB, MB + 1, 3 * MB + 5, 64 * MB};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    size_t n = sizes[i];
    unsigned char *p = get(n);
    CHECK(p != NULL);
    if (!p) continue;
    CHECK_EQ_INT((uintptr_t)p % 64, 0);
    memset(p, 0xab, n);               /* every byte is writable */
    CHECK(p[0] == 0xab && p[n - 1] == 0xab);
    put(p, n);
  }
  void *h = get(4 * MB);
  CHECK_EQ_INT((uintptr_t)h % (2 * MB), 0);   /* huge-page aligned */
  put(h, 4 * MB);
  lt_cpu_empty_cache();
}

TEST(test_zero_bytes) {
  lt_memory_stats before = stats();
  void *a = get(0), *b = get(0);
  CHECK(a != NULL && b != NULL);
  CHECK_EQ_INT((uintptr_t)a % 64, 0);
  put(a, 0);
  put(b, 0);
  put(NULL, 0);
  lt_memory_stats after = stats();
  CHECK_EQ_INT(after.allocated, before.allocated);
  CHECK_EQ_INT(after.num_allocs, before.num_allocs + 2);
}

TEST(test_cache_reuse) {
  lt_cpu_empty_cache();
  size_t n = 64 * MB;
  lt_memory_stats s0 = stats();
  unsigned char *p = get(n);
  CHECK(p != NULL);
  memset(p, 1, n);
  put(p, n);
  lt_memory_stats s1 = stats();
  CHECK(s1.cached >= (int64_t)n);
  CHECK_EQ_INT(s1.allocated, s0.allocated);

  /* the point of the cache: the second 64 MB output takes no page faults */
  long f0 = minor_faults();
  unsigned char *q = get(n);
  memset(q, 2, n);
  long f1 = minor_faults();
  CHECK(q == p);
  CHECK_EQ_INT(stats().cache_hits, s1.cache_hits + 1);
  CHECK_EQ_INT(stats().cached, 0);
  CHECK(f1 - f0 < 64);

  /* best fit: a 40 MB request may take the 64 MB block back ... */
  put(q, n);
  unsigned char *r = get(40 * MB);
  CHECK(r == p);
  memset(r, 3, 40 * MB);
  put(r, 40 * MB);   /* ... and freeing with the smaller size returns all 64 MB */
  CHECK(stats().cached >= (int64_t)n);
  /* ... but a 20 MB request would waste more than it uses */
  int64_t hits = stats().cache_hits;
  unsigned char *t = get(20 * MB);
  CHECK(t != p);
  CHECK_EQ_INT(stats().cache_hits, hits);
  put(t, 20 * MB);
  lt_cpu_empty_cache();
  CHECK_EQ_INT(stats().cached, 0);
}

TEST(test_stats) {
  lt_cpu_empty_cache();
  lt_memory_stats s0 = stats();
  void *a = get(1000), *b = get(2 * MB), *c = get(10 * MB);
  lt_memory_stats s1 = stats();
  CHECK_EQ_INT(s1.allocated - s0.allocated, 1000 + 12 * MB);
  CHECK_EQ_INT(s1.num_allocs - s0.num_allocs, 3);
  CHECK(s1.peak >= s1.allocated);
  put(c, 10 * MB);
  lt_memory_stats s2 = stats();
  CHECK_EQ_INT(s2.allocated - s0.allocated, 1000 + 2 * MB);
  CHECK(s2.peak >= s0.allocated + 1000 + (int64_t)(12 * MB));
  lt_cpu_reset_peak();
  CHECK_EQ_INT(stats().peak, s2.allocated);
  put(a, 1000);
  put(b, 2 * MB);
  CHECK_EQ_INT(stats().allocated, s0.allocated);
  CHECK(stats().cached >= (int64_t)(12 * MB));
  lt_cpu_empty_cache();
  CHECK_EQ_INT(stats().cached, 0);
}

TEST(test_limit) {
  lt_cpu_empty_cache();
  lt_cpu_set_cache_limit(8 * MB);
  void *p[3];
  for (int i = 0; i < 3; i++) p[i] = get(4 * MB);
  for (int i = 0; i < 3; i++) put(p[i], 4 * MB);
  CHECK_EQ_INT(stats().cached, 8 * MB);   /* the oldest (p[0]) went back to the OS */
  int64_t hits = stats().cache_hits;
  void *x = get(4 * MB), *y = get(4 * MB);
  CHECK_EQ_INT(stats().cache_hits, hits + 2);
  CHECK((x == p[1] && y == p[2]) || (x == p[2] && y == p[1]));
  put(x, 4 * MB);
  put(y, 4 * MB);

  void *big = get(16 * MB);               /* larger than the whole cache */
  put(big, 16 * MB);
  CHECK_EQ_INT(stats().cached, 8 * MB);

  lt_cpu_set_cache_limit(4 * MB);         /* lowering the limit trims at once */
  CHECK_EQ_INT(stats().cached, 4 * MB);
  lt_cpu_set_cache_limit(0);
  CHECK_EQ_INT(stats().cached, 0);
  void *z = get(4 * MB);
  put(z, 4 * MB);
  CHECK_EQ_INT(stats().cached, 0);
  lt_cpu_set_cache_limit((size_t)1 << 30);
}

TEST(test_out_of_memory) {
  lt_error_clear();
  lt_memory_stats s0 = stats();
  void *p = get(SIZE_MAX - 100);
  CHECK(p == NULL);
  CHECK(strstr(lt_error_message(), "out of memory allocating") != NULL);
  p = get((size_t)1 << 62);               /* sane arithmetic, impossible size */
  CHECK(p == NULL);
  CHECK(strstr(lt_error_message(), "4611686018427387904 bytes") != NULL);
  CHECK_EQ_INT(stats().allocated, s0.allocated);
}

/* Threads allocate a mix of small and large blocks, stamp them with their own
** pattern and check it survived: two threads handed one block would clash. */
typedef struct { unsigned seed; int id, ok; } worker_arg;

static void *alloc_worker(void *vp) {
  worker_arg *w = vp;
  enum { SLOTS = 8 };
  unsigned char *blk[SLOTS] = {0};
  size_t len[SLOTS] = {0};
  w->ok = 1;
  for (int it = 0; it < 3000; it++) {
    int k = (int)(rand_r(&w->seed) % SLOTS);
    if (blk[k]) {
      unsigned char tag = (unsigned char)(k + 8 * w->id);
      if (blk[k][0] != tag || blk[k][len[k] - 1] != tag || blk[k][len[k] / 2] != tag) w->ok = 0;
      put(blk[k], len[k]);
      blk[k] = NULL;
    } else {
      unsigned r = rand_r(&w->seed);
      len[k] = r % 4 == 0 ? MB + r % (6 * MB) : 1 + r % 5000;
      blk[k] = get(len[k]);
      if (!blk[k] || (uintptr_t)blk[k] % 64) { w->ok = 0; blk[k] = NULL; continue; }
      unsigned char tag = (unsigned char)(k + 8 * w->id);
      blk[k][0] = blk[k][len[k] / 2] = blk[k][len[k] - 1] = tag;
    }
  }
  for (int k = 0; k < SLOTS; k++) if (blk[k]) put(blk[k], len[k]);
  return NULL;
}

TEST(test_threads) {
  enum { N = 8 };
  lt_cpu_set_cache_limit(32 * MB);        /* small, so eviction races too */
  lt_memory_stats s0 = stats();
  pthread_t th[N];
  worker_arg arg[N];
  for (int i = 0; i < N; i++) {
    arg[i].seed = 1234u + 77u * (unsigned)i;
    arg[i].id = i;
    CHECK_EQ_INT(pthread_create(&th[i], NULL, alloc_worker, &arg[i]), 0);
  }
  for (int i = 0; i < N; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < N; i++) CHECK(arg[i].ok);
  lt_memory_stats s1 = stats();
  CHECK_EQ_INT(s1.allocated, s0.allocated);
  CHECK(s1.cached <= (int64_t)(32 * MB));
  CHECK(s1.cache_hits > s0.cache_hits);
  lt_cpu_empty_cache();
  lt_cpu_set_cache_limit((size_t)1 << 30);
  CHECK_EQ_INT(stats().cached, 0);
}

int main(void) {
  ctest_init();
  A = lt_cpu_allocator();
  CHECK(A != NULL && A->alloc && A->free);
  RUN(test_alignment);
  RUN(test_zero_bytes);
  RUN(test_cache_reuse);
  RUN(test_stats);
  RUN(test_limit);
  RUN(test_out_of_memory);
  RUN(test_threads);
  return ctest_summary();
}
