/*
** parallel.c — the intra-op thread pool.
**
** One job at a time: a caller publishes (fn, ctx, n, chunks), bumps a
** generation counter and wakes sleeping workers; everyone, the caller
** included, claims chunk indices from one atomic counter until none are left.
** Claiming instead of assigning means a worker that wakes late costs nothing:
** the caller simply does its chunk too.
**
** A job's lifetime is guarded by the mutex: a worker joins only while the job
** is open and counts itself in `active`; the caller, once it has run out of
** chunks, closes the job and waits for `active` to drain. So no worker can
** still be reading a job when the next one is written.
**
** Workers spin a few microseconds after a job (back-to-back elementwise ops
** then skip the futex wake-up) and then sleep: spinning longer would steal
** the cores from OpenBLAS's own threads.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* sched_getaffinity, CPU_COUNT under -std=c11 */
#endif
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <cblas.h>
#include "cpu/parallel.h"
#include "core/error.h"

#define MAX_WORKERS      255
#define WORKER_SPIN_NS   4000
#define CALLER_SPIN_NS   20000   /* the caller waits on peers already running its job */

static _Thread_local bool in_region;
static atomic_int num_threads;           /* 0 until first asked for */

static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER;   /* workers sleep here */
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;   /* the caller sleeps here */
static int nworkers, sleepers;           /* under mtx */
static atomic_bool busy;                 /* a caller owns the pool */
static atomic_ullong gen;                /* bumped (under mtx) for every job */
static atomic_int active;                /* workers inside the current job */

/* the current job: written under mtx while closed, read under mtx on joining */
static bool job_open;
static lt_parallel_fn job_fn;
static void *job_ctx;
static int64_t job_n, job_chunks;
static atomic_llong next_chunk;


/* ---- thread count -------------------------------------------------------- */

static int parse_count(const char *s) {
  if (!s || !*s) return 0;
  char *end;
  long v = strtol(s, &end, 10);   /* OMP_NUM_THREADS may be a list: "4,2" reads 4 */
  if (end == s || v < 1) return 0;
  return v > 1024 ? 1024 : (int)v;
}

static int default_threads(void) {
  int v = parse_count(getenv("LUTORCH_NUM_THREADS"));
  if (v) return v;
  v = parse_count(getenv("OMP_NUM_THREADS"));
  if (v) return v;
  cpu_set_t set;   /* honour taskset and container CPU masks */
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
  long c = sysconf(_SC_NPROCESSORS_ONLN);
  return c > 0 ? (int)c : 1;
}

int lt_get_num_threads(void) {
  int v = atomic_load(&num_threads);
  if (v == 0) {
    int expected = 0;
    v = default_threads();
    /* OpenBLAS works on the calling thread: big products are split over this
    ** pool (la_gemm.c), and its own idle workers would spin beside ours */
    openblas_set_num_threads(1);
    if (!atomic_compare_exchange_strong(&num_threads, &expected, v)) v = expected;
  }
  return v;
}

void lt_set_num_threads(int n) {
  if (n < 1) n = 1;
  if (n > 1024) n = 1024;
  atomic_store(&num_threads, n);
  openblas_set_num_threads(1);
}

bool lt_in_parallel_region(void) { return in_region; }


/* ---- spinning ------------------------------------------------------------- */

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spin while *v == val for at most `ns`; the clock is read every 64 pauses
** since a pause costs anything from 10 to 150 cycles depending on the CPU. */
static void spin_while_gen(unsigned long long val, int64_t ns) {
  int64_t stop = now_ns() + ns;
  for (int i = 1; atomic_load_explicit(&gen, memory_order_relaxed) == val; i++) {
    cpu_relax();
    if (i % 64 == 0 && now_ns() > stop) return;
  }
}

static void spin_while_active(int64_t ns) {
  int64_t stop = now_ns() + ns;
  for (int i = 1; atomic_load_explicit(&active, memory_order_acquire) > 0; i++) {
    cpu_relax();
    if (i % 64 == 0 && now_ns() > stop) return;
  }
}


/* ---- running a job -------------------------------------------------------- */

/* Chunk i of c over [0,n): the first n % c chunks get one extra item. After
** Ctrl-C (lt_interrupt_flag) the remaining chunks are skipped: the result is
** garbage, but the REPL's hook raises "interrupted" as soon as the op returns
** to Lua, so nobody sees it. */
static void run_chunks(lt_parallel_fn fn, void *ctx, int64_t n, int64_t c) {
  int64_t base = n / c, rem = n % c, i;
  while ((i = atomic_fetch_add(&next_chunk, 1)) < c) {
    if (lt_interrupt_flag) break;
    int64_t begin = i * base + (i < rem ? i : rem);
    fn(ctx, begin, begin + base + (i < rem));
  }
}

static void *worker_main(void *arg) {
  unsigned long long seen = (unsigned long long)(uintptr_t)arg;
  in_region = true;   /* a kernel running here must not fan out again */
  for (;;) {
    spin_while_gen(seen, WORKER_SPIN_NS);
    pthread_mutex_lock(&mtx);
    while (atomic_load(&gen) == seen) {
      sleepers++;
      pthread_cond_wait(&work_cv, &mtx);
      sleepers--;
    }
    seen = atomic_load(&gen);
    if (!job_open) {   /* woke too late: the caller did it all */
      pthread_mutex_unlock(&mtx);
      continue;
    }
    lt_parallel_fn fn = job_fn;
    void *ctx = job_ctx;
    int64_t n = job_n, c = job_chunks;
    atomic_fetch_add(&active, 1);
    pthread_mutex_unlock(&mtx);
    run_chunks(fn, ctx, n, c);
    if (atomic_fetch_sub(&active, 1) == 1) {
      pthread_mutex_lock(&mtx);
      pthread_cond_signal(&done_cv);
      pthread_mutex_unlock(&mtx);
    }
  }
  return NULL;
}

/* Start workers until there are `want` (called under mtx). Workers block all
** signals so SIGINT and friends keep going to the thread that expects them. */
static void grow_pool(int want) {
  if (want > MAX_WORKERS) want = MAX_WORKERS;
  if (nworkers >= want) return;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  while (nworkers < want) {
    pthread_t t;
    void *seen = (void *)(uintptr_t)atomic_load(&gen);
    if (pthread_create(&t, NULL, worker_main, seen) != 0) break;
    pthread_detach(t);   /* workers live as long as the process */
    nworkers++;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}


/* ---- fork ----------------------------------------------------------------- */

/* The child of a fork has only the forking thread: forget the workers (they
** are restarted lazily on the child's first parallel loop) and any job that
** was in flight in the parent. Holding mtx across fork() keeps the pool state
** the child copies consistent. */
static void fork_prepare(void) { pthread_mutex_lock(&mtx); }
static void fork_parent(void) { pthread_mutex_unlock(&mtx); }
static void fork_child(void) {
  nworkers = 0;
  sleepers = 0;
  job_open = false;
  atomic_store(&active, 0);
  atomic_store(&busy, false);
  pthread_cond_init(&work_cv, NULL);
  pthread_cond_init(&done_cv, NULL);
  pthread_mutex_unlock(&mtx);
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void register_atfork(void) {
  pthread_atfork(fork_prepare, fork_parent, fork_child);
}


/* ---- the entry point ------------------------------------------------------ */

void lt_parallel_for(int64_t n, int64_t grain, lt_parallel_fn fn, void *ctx) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  int nt = lt_get_num_threads();
  if (n / 2 < grain || nt == 1 || in_region) {
    fn(ctx, 0, n);
    return;
  }
  pthread_once(&atfork_once, register_atfork);
  /* A second caller (the autograd thread, a loader thread) just runs inline:
  ** the cores are busy with the first one's job anyway. */
  if (atomic_exchange(&busy, true)) {
    fn(ctx, 0, n);
    return;
  }
  int64_t chunks = n / grain < nt ? n / grain : nt;
  pthread_mutex_lock(&mtx);
  grow_pool(nt - 1);
  if (nworkers == 0) {   /* could not start a single thread */
    pthread_mutex_unlock(&mtx);
    atomic_store(&busy, false);
    fn(ctx, 0, n);
    return;
  }
  job_fn = fn;
  job_ctx = ctx;
  job_n = n;
  job_chunks = chunks;
  atomic_store(&next_chunk, 0);
  job_open = true;
  atomic_fetch_add(&gen, 1);
  for (int64_t w = 0; w < chunks - 1 && w < sleepers; w++)
    pthread_cond_signal(&work_cv);
  pthread_mutex_unlock(&mtx);

  in_region = true;
  run_chunks(fn, ctx, n, chunks);
  pthread_mutex_lock(&mtx);
  job_open = false;   /* every chunk is claimed; let no one else join */
  pthread_mutex_unlock(&mtx);
  spin_while_active(CALLER_SPIN_NS);
  if (atomic_load(&active) > 0) {
    pthread_mutex_lock(&mtx);
    while (atomic_load(&active) > 0) pthread_cond_wait(&done_cv, &mtx);
    pthread_mutex_unlock(&mtx);
  }
  in_region = false;
  atomic_store(&busy, false);
}
