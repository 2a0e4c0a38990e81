/*
** test_parallel.c — the intra-op thread pool: coverage, chunking, nesting,
** thread counts, concurrent callers, and fork.
*/
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ctest.h"
#include "cpu/parallel.h"

/* ---- recording what a loop did ------------------------------------------- */

#define MAXN (1 << 20)
static atomic_uchar hits[MAXN];

typedef struct {
  atomic_int calls;
  atomic_llong min_chunk, covered;
  atomic_int bad_region;     /* fn found itself outside a region while threaded */
} record;

static void record_reset(record *r) {
  atomic_store(&r->calls, 0);
  atomic_store(&r->min_chunk, INT64_MAX);
  atomic_store(&r->covered, 0);
  atomic_store(&r->bad_region, 0);
}

static void mark(void *vp, int64_t b, int64_t e) {
  record *r = vp;
  atomic_fetch_add(&r->calls, 1);
  long long len = e - b, m = atomic_load(&r->min_chunk);
  while (len < m && !atomic_compare_exchange_weak(&r->min_chunk, &m, len)) {}
  for (int64_t i = b; i < e; i++) atomic_fetch_add_explicit(&hits[i], 1, memory_order_relaxed);
  atomic_fetch_add(&r->covered, len);
}

/* Every index in [0,n) hit once; returns 1 when so. Clears the marks. */
static int each_once(int64_t n) {
  int ok = 1;
  for (int64_t i = 0; i < n; i++) {
    if (atomic_load_explicit(&hits[i], memory_order_relaxed) != 1) ok = 0;
    atomic_store_explicit(&hits[i], 0, memory_order_relaxed);
  }
  return ok;
}

static int check_loop(int64_t n, int64_t grain) {
  record r;
  record_reset(&r);
  lt_parallel_for(n, grain, mark, &r);
  int nt = lt_get_num_threads(), ok = each_once(n);
  CHECK(ok);
  CHECK_EQ_INT(atomic_load(&r.covered), n);
  int calls = atomic_load(&r.calls);
  CHECK(calls <= nt);
  if (grain < 1) grain = 1;   /* as lt_parallel_for reads it */
  if (n == 0) CHECK_EQ_INT(calls, 0);
  else if (n < 2 * grain || nt == 1) CHECK_EQ_INT(calls, 1);
  else CHECK(atomic_load(&r.min_chunk) >= grain);
  return ok;
}

/* ---- the thread count from the environment: run first, in children, before
** anything has asked for (and so fixed) the default ------------------------- */

static int child_count(const char *lut, const char *omp) {
  pid_t pid = fork();
  if (pid == 0) {
    if (lut) setenv("LUTORCH_NUM_THREADS", lut, 1); else unsetenv("LUTORCH_NUM_THREADS");
    if (omp) setenv("OMP_NUM_THREADS", omp, 1); else unsetenv("OMP_NUM_THREADS");
    _exit(lt_get_num_threads());
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(test_env_default) {
  CHECK_EQ_INT(child_count("3", NULL), 3);
  CHECK_EQ_INT(child_count("3", "5"), 3);
  CHECK_EQ_INT(child_count(NULL, "5"), 5);
  CHECK_EQ_INT(child_count(NULL, "2,1"), 2);
  CHECK_EQ_INT(child_count("junk", "7"), 7);
  int d = child_count(NULL, NULL);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  CHECK(d >= 1 && d <= cores);
}

/* ---- coverage ------------------------------------------------------------- */

TEST(test_coverage) {
  static const int64_t ns[] = {0, 1, 2, 3, 7, 100, 999, 1000, 1001, 4096, 65535,
                               65536, 65537, 100003, MAXN};
  static const int64_t grains[] = {0, 1, 2, 7, 100, 1000, LT_GRAIN_ELEMENTWISE, MAXN};
  static const int threads[] = {1, 2, 3, 4, 16};
  for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
    lt_set_num_threads(threads[t]);
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
      for (size_t g = 0; g < sizeof grains / sizeof *grains; g++)
        check_loop(ns[i], grains[g]);
  }
  record r;
  record_reset(&r);
  lt_parallel_for(-5, 1, mark, &r);   /* nothing to do: fn is not called */
  CHECK_EQ_INT(atomic_load(&r.calls), 0);
}

/* ---- really threaded, and the region flag --------------------------------- */

typedef struct {
  pthread_t ids[64];
  atomic_int nids, outside;
} who;

static void sleepy(void *vp, int64_t b, int64_t e) {
  who *w = vp;
  (void)b; (void)e;
  if (!lt_in_parallel_region()) atomic_fetch_add(&w->outside, 1);
  int k = atomic_fetch_add(&w->nids, 1);
  if (k < 64) w->ids[k] = pthread_self();
  struct timespec ts = {0, 20 * 1000 * 1000};   /* long enough for a sleeper to wake */
  nanosleep(&ts, NULL);
}

static int distinct_threads(who *w) {
  int n = atomic_load(&w->nids), d = 0;
  if (n > 64) n = 64;
  for (int i = 0; i < n; i++) {
    int seen = 0;
    for (int j = 0; j < i; j++) if (pthread_equal(w->ids[i], w->ids[j])) seen = 1;
    d += !seen;
  }
  return d;
}

TEST(test_threads_used) {
  lt_set_num_threads(2);
  CHECK(!lt_in_parallel_region());
  who w;
  memset(&w, 0, sizeof w);
  lt_parallel_for(2, 1, sleepy, &w);
  CHECK_EQ_INT(atomic_load(&w.nids), 2);
  CHECK_EQ_INT(distinct_threads(&w), 2);
  CHECK_EQ_INT(atomic_load(&w.outside), 0);
  CHECK(!lt_in_parallel_region());

  lt_set_num_threads(4);
  memset(&w, 0, sizeof w);
  lt_parallel_for(4, 1, sleepy, &w);
  CHECK_EQ_INT(atomic_load(&w.nids), 4);
  CHECK(distinct_threads(&w) >= 2);
}

/* ---- nesting --------------------------------------------------------------- */

typedef struct {
  atomic_int inner_calls, inner_wrong;
} nest;

typedef struct { nest *n; pthread_t outer; int64_t len; } inner_ctx;

static void inner(void *vp, int64_t b, int64_t e) {
  inner_ctx *c = vp;
  atomic_fetch_add(&c->n->inner_calls, 1);
  /* inline means: one chunk, the whole range, on the outer chunk's thread */
  if (b != 0 || e != c->len || !pthread_equal(pthread_self(), c->outer))
    atomic_fetch_add(&c->n->inner_wrong, 1);
}

static void outer(void *vp, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; i++) {
    inner_ctx c = {vp, pthread_self(), 1 << 16};
    lt_parallel_for(c.len, 1, inner, &c);
  }
}

TEST(test_nested) {
  lt_set_num_threads(4);
  nest n;
  atomic_init(&n.inner_calls, 0);
  atomic_init(&n.inner_wrong, 0);
  lt_parallel_for(64, 1, outer, &n);
  CHECK_EQ_INT(atomic_load(&n.inner_calls), 64);
  CHECK_EQ_INT(atomic_load(&n.inner_wrong), 0);
}

/* ---- thread count --------------------------------------------------------- */

TEST(test_set_get) {
  lt_set_num_threads(1);
  CHECK_EQ_INT(lt_get_num_threads(), 1);
  who w;
  memset(&w, 0, sizeof w);
  lt_parallel_for(8, 1, sleepy, &w);   /* one thread: a single inline call */
  CHECK_EQ_INT(atomic_load(&w.nids), 1);
  CHECK(pthread_equal(w.ids[0], pthread_self()));
  CHECK_EQ_INT(atomic_load(&w.outside), 1);   /* inline: no region */
  lt_set_num_threads(0);
  CHECK_EQ_INT(lt_get_num_threads(), 1);
  lt_set_num_threads(3);
  CHECK_EQ_INT(lt_get_num_threads(), 3);
  check_loop(MAXN, 1);
}

/* ---- several callers at once ---------------------------------------------- */

#define CALLERS 4
#define SLICE (MAXN / CALLERS)

typedef struct { int64_t base; atomic_int bad; } slice_ctx;

static void mark_slice(void *vp, int64_t b, int64_t e) {
  slice_ctx *s = vp;
  for (int64_t i = b; i < e; i++) atomic_fetch_add_explicit(&hits[s->base + i], 1, memory_order_relaxed);
}

static void *caller_main(void *vp) {
  slice_ctx *s = vp;
  for (int it = 0; it < 200; it++) {
    lt_parallel_for(SLICE, 1000, mark_slice, s);
    for (int64_t i = 0; i < SLICE; i++) {
      if (atomic_load_explicit(&hits[s->base + i], memory_order_relaxed) != 1) s->bad = 1;
      atomic_store_explicit(&hits[s->base + i], 0, memory_order_relaxed);
    }
  }
  return NULL;
}

TEST(test_concurrent_callers) {
  lt_set_num_threads(4);
  pthread_t th[CALLERS];
  slice_ctx s[CALLERS];
  for (int i = 0; i < CALLERS; i++) {
    s[i].base = (int64_t)i * SLICE;
    atomic_init(&s[i].bad, 0);
    pthread_create(&th[i], NULL, caller_main, &s[i]);
  }
  for (int i = 0; i < CALLERS; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < CALLERS; i++) CHECK_EQ_INT(atomic_load(&s[i].bad), 0);
}

/* ---- fork ----------------------------------------------------------------- */

/* In the child: the pool must work again (threads restarted) and not hang. */
static int child_loop_ok(void) {
  alarm(20);
  record r;
  record_reset(&r);
  lt_parallel_for(MAXN, 1000, mark, &r);
  if (!each_once(MAXN)) return 0;
  who w;
  memset(&w, 0, sizeof w);
  lt_parallel_for(2, 1, sleepy, &w);
  /* which threads ran the two items depends on scheduling under load: only
  ** require that the loop finished */
  return 1;
}

static int fork_and_check(void) {
  pid_t pid = fork();
  if (pid == 0) _exit(child_loop_ok() ? 0 : 1);
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static atomic_bool stop_hammer;
static atomic_uchar scratch[1 << 12];   /* its own array: a child copies it mid-write */

static void mark_scratch(void *vp, int64_t b, int64_t e) {
  (void)vp;
  for (int64_t i = b; i < e; i++) atomic_store_explicit(&scratch[i], 1, memory_order_relaxed);
}

static void *hammer(void *vp) {
  (void)vp;
  while (!atomic_load(&stop_hammer)) lt_parallel_for(1 << 12, 1, mark_scratch, NULL);
  return NULL;
}

TEST(test_fork) {
  lt_set_num_threads(2);
  check_loop(MAXN, 1000);                 /* the pool is up before forking */
  CHECK(fork_and_check());

  /* fork while another thread keeps the pool busy: the child must not
  ** inherit a held lock or a job it will never see finish */
  atomic_store(&stop_hammer, false);
  pthread_t th;
  pthread_create(&th, NULL, hammer, NULL);
  int ok = 1;
  for (int i = 0; i < 20; i++) ok &= fork_and_check();
  atomic_store(&stop_hammer, true);
  pthread_join(th, NULL);
  CHECK(ok);
}

/* ---- not a check: what a threaded call costs ------------------------------ */

static void nothing(void *vp, int64_t b, int64_t e) { (void)vp; (void)b; (void)e; }

static void report_overhead(void) {
  lt_set_num_threads(2);
  enum { N = 20000 };
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < N; i++) lt_parallel_for(1 << 20, 1, nothing, NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double us = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / N;
  fprintf(stderr, "back-to-back threaded call, 2 threads: %.2f us\n", us);
  struct timespec gap = {0, 200 * 1000};
  double total = 0;
  for (int i = 0; i < 200; i++) {
    nanosleep(&gap, NULL);   /* let the worker fall asleep */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    lt_parallel_for(1 << 20, 1, nothing, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    total += (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
  }
  fprintf(stderr, "call after the worker slept:          %.2f us\n", total / 1e3 / 200);
}

int main(void) {
  ctest_init();
  RUN(test_env_default);
  RUN(test_coverage);
  RUN(test_threads_used);
  RUN(test_nested);
  RUN(test_set_get);
  RUN(test_concurrent_callers);
  RUN(test_fork);
  if (getenv("CTEST_BENCH")) report_overhead();
  return ctest_summary();
}
