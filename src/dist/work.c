/*
** work.c — the work queue, the communication thread and the watchdog.
**
** Collectives run one at a time, in the order the program issued them, on one
** communication thread: every rank then enters them in the same order (a
** mismatch hangs or corrupts), and the Lua thread is free to compute while a
** bucket of gradients is being reduced. Point-to-point ops are started on the
** caller's thread instead: two ranks that each send before they receive must
** not block one shared thread on a send the other has not matched yet.
**
** The watchdog checks the running collective against the timeout. When it
** expires the group is marked broken: waiters get an error naming the
** collective and the ranks (a Lua error on the calling rank), and if the
** process has not gone down by itself a few seconds later the watchdog aborts
** the job, so no rank is left hanging.
**
** A backend with a `pending` function (NCCL) only issues its ops when it runs
** them: they finish later, on a CUDA stream. Such items go on an in-flight
** list when their run returns; waiters poll `pending` until the device is
** done, and the watchdog checks the list against the same timeout, so a
** collective stuck on the device ends the job as a stuck MPI call does.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sched.h>
#include "dist.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cond, done_cond, wd_cond;
static lt_dist_work *q_head, *q_tail, *running;
static lt_dist_work *inflight;     /* issued on a device, not yet seen done: a reference each */
static bool running_on_caller;     /* the running collective is a synchronous one on the caller's thread */
static pthread_t comm_thread, wd_thread;
static bool started, stopping;
static double timeout_s = 600.0;
static int my_rank;
static char broken_msg[400];
static double broken_at;
static const double grace_s = 3.0;   /* time the process gets to go down by itself */

double lt_dist_clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void deadline_in(struct timespec *ts, double secs) {
  clock_gettime(CLOCK_MONOTONIC, ts);
  double ns = ts->tv_nsec + secs * 1e9;
  ts->tv_sec += (time_t)(ns / 1e9);
  ts->tv_nsec = (long)(ns - (double)(time_t)(ns / 1e9) * 1e9);
}

static const char *kind_names[] = {
  "all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter", "all_to_all", "gather",
  "scatter", "barrier", "send", "recv", "new_group"
};
const char *lt_dist_kind_name(lt_dist_kind k) { return kind_names[k]; }

static void describe(lt_dist_work *w, char *b, size_t n) {
  char ranks[160];
  size_t k = 0;
  ranks[0] = 0;
  for (int i = 0; i < w->pg->size && k + 16 < sizeof ranks; i++)
    k += (size_t)snprintf(ranks + k, sizeof ranks - k, "%s%d", i ? "," : "", w->pg->world_ranks[i]);
  if (k + 16 >= sizeof ranks) snprintf(ranks + k, sizeof ranks - k, ",...");
  lt_dist_buf *b1 = w->out.data ? &w->out : &w->in;
  if (w->kind == LT_DIST_SEND || w->kind == LT_DIST_RECV)
    snprintf(b, n, "%s %s rank %d (%s, %lld elements, tag %d)", lt_dist_kind_name(w->kind),
             w->kind == LT_DIST_SEND ? "to" : "from",
             w->root >= 0 ? w->pg->world_ranks[w->root] : -1, lt_dist_dtype_name(b1->dtype),
             (long long)b1->count, w->tag);
  else if (w->kind == LT_DIST_BARRIER || w->kind == LT_DIST_NEW_GROUP)
    snprintf(b, n, "%s #%llu on ranks {%s}", lt_dist_kind_name(w->kind), (unsigned long long)w->seq, ranks);
  else
    snprintf(b, n, "%s #%llu (%s, %lld elements) on ranks {%s}", lt_dist_kind_name(w->kind),
             (unsigned long long)w->seq, lt_dist_dtype_name(b1->dtype), (long long)b1->count, ranks);
}

/* with mu held */
static void mark_broken(const char *msg) {
  if (broken_msg[0]) return;
  snprintf(broken_msg, sizeof broken_msg, "%.399s", msg);
  broken_at = lt_dist_clock();
  pthread_cond_broadcast(&done_cond);
  pthread_cond_broadcast(&wd_cond);
}

const char *lt_dist_broken(void) {
  pthread_mutex_lock(&mu);
  const char *m = broken_msg[0] ? broken_msg : NULL;
  pthread_mutex_unlock(&mu);
  return m;
}

static bool is_p2p(const lt_dist_work *w) { return w->kind == LT_DIST_SEND || w->kind == LT_DIST_RECV; }
/* point to point started and polled on the caller's thread (MPI), not queued */
static bool direct_p2p(const lt_dist_work *w) { return is_p2p(w) && !w->backend->queue_p2p; }

/* with mu held: w timed out, which breaks the job; the message goes into w->err too when the
   caller is w's waiter (w->err is the runner's while a run is under way) */
static void timed_out_locked(lt_dist_work *w, const char *where, bool set_err) {
  char d[200], m[400];
  describe(w, d, sizeof d);
  snprintf(m, sizeof m, "lutorch.distributed: %s timed out after %.1f s on rank %d%s: "
           "a peer is dead, stuck, or waiting in a different collective", d, timeout_s, my_rank, where);
  if (set_err) snprintf(w->err, sizeof w->err, "%.399s", m);
  mark_broken(m);
}

/* with mu held: whether w, issued by a backend with `pending`, has finished on the device:
   1 done, 0 not yet, -1 failed (the job is then broken, as for a collective failing in run) */
static int dev_poll_locked(lt_dist_work *w) {
  int st = atomic_load(&w->dev_state);
  if (st) return st;
  int r = w->backend->pending(w);
  if (r > 0) return 0;
  if (r < 0) {
    char d[200], m[700];
    describe(w, d, sizeof d);
    snprintf(m, sizeof m, "lutorch.distributed: %s failed on rank %d: %.200s", d, my_rank, w->err);
    snprintf(w->err, sizeof w->err, "%.399s", m);
    mark_broken(m);
  } else {
    w->t_end = lt_dist_clock();      /* when the device was seen done */
  }
  atomic_store(&w->dev_state, r < 0 ? -1 : 1);
  return r < 0 ? -1 : 1;
}

static void backoff(int *spins) {
  if (++*spins < 200) sched_yield();
  else { struct timespec ts = {0, 20000}; nanosleep(&ts, NULL); }
}

/* with mu held: the end of w's run, on whichever thread ran it */
static void finish_locked(lt_dist_work *w, int rc) {
  w->t_end = lt_dist_clock();
  running = NULL;
  if (rc < 0) {
    /* a collective that failed on one rank leaves the others inconsistent: the job goes down */
    char d[200], m[700];
    describe(w, d, sizeof d);
    snprintf(m, sizeof m, "lutorch.distributed: %s failed on rank %d: %.200s", d, my_rank, w->err);
    snprintf(w->err, sizeof w->err, "%.399s", m);
    mark_broken(m);
  }
  if (rc == 0 && w->backend->pending) {
    atomic_fetch_add(&w->refcount, 1);
    w->inflight_next = inflight;
    inflight = w;
  }
  atomic_store(&w->state, rc < 0 ? LT_DIST_FAILED : LT_DIST_DONE);
  pthread_cond_broadcast(&done_cond);
}

/* with mu held: drop the in-flight items the device has finished (or failed); time out the
   others. Returns how many are left. */
static int sweep_inflight_locked(double now, bool check_timeout) {
  int left = 0;
  for (lt_dist_work **pp = &inflight; *pp;) {
    lt_dist_work *w = *pp;
    if (dev_poll_locked(w) != 0) {
      *pp = w->inflight_next;
      lt_dist_work_release(w);
      continue;
    }
    if (check_timeout && !broken_msg[0] && now - w->t_start > timeout_s) timed_out_locked(w, " (on the device)", false);
    left++;
    pp = &w->inflight_next;
  }
  return left;
}

/* with mu held: w becomes the running collective, numbered in program order */
static void begin_locked(lt_dist_work *w, bool on_caller) {
  running = w;
  running_on_caller = on_caller;
  w->t_start = lt_dist_clock();
  atomic_store(&w->state, LT_DIST_RUNNING);
}

static void *comm_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&mu);
  for (;;) {
    while (!q_head && !stopping) pthread_cond_wait(&q_cond, &mu);
    if (!q_head) break;
    lt_dist_work *w = q_head;
    q_head = w->next;
    if (!q_head) q_tail = NULL;
    begin_locked(w, false);
    pthread_mutex_unlock(&mu);
    int rc = w->backend->run(w);
    pthread_mutex_lock(&mu);
    finish_locked(w, rc);
    pthread_mutex_unlock(&mu);
    lt_dist_work_release(w);
    pthread_mutex_lock(&mu);
  }
  pthread_mutex_unlock(&mu);
  return NULL;
}

static void *watchdog_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&mu);
  while (!stopping) {
    struct timespec ts;
    double step = timeout_s / 20;
    deadline_in(&ts, step < 0.05 ? 0.05 : step > 0.5 ? 0.5 : step);
    pthread_cond_timedwait(&wd_cond, &mu, &ts);
    if (stopping) break;
    double now = lt_dist_clock();
    if (running && !broken_msg[0] && now - running->t_start > timeout_s) {
      timed_out_locked(running, "", false);
      /* a synchronous collective runs on the caller's thread, which cannot come back from
         MPI to raise the error: say it here and end the job now */
      if (running_on_caller) broken_at -= grace_s;
    }
    if (inflight) sweep_inflight_locked(now, true);
    if (broken_msg[0] && now - broken_at >= grace_s) {
      fprintf(stderr, "[rank %d] %s; aborting the job\n", my_rank, broken_msg);
      fflush(stderr);
      pthread_mutex_unlock(&mu);
      lt_dist_mpi_backend.abort(1);
      return NULL;
    }
  }
  pthread_mutex_unlock(&mu);
  return NULL;
}

int lt_dist_start(double timeout, int world_rank) {
  if (started) return 0;
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&q_cond, &ca);
  pthread_cond_init(&done_cond, &ca);
  pthread_cond_init(&wd_cond, &ca);
  pthread_condattr_destroy(&ca);
  if (timeout > 0) timeout_s = timeout;
  my_rank = world_rank;
  stopping = false;
  if (pthread_create(&comm_thread, NULL, comm_main, NULL) != 0) return -1;
  if (pthread_create(&wd_thread, NULL, watchdog_main, NULL) != 0) return -1;
  started = true;
  return 0;
}

void lt_dist_set_timeout(double t) { pthread_mutex_lock(&mu); if (t > 0) timeout_s = t; pthread_mutex_unlock(&mu); }
double lt_dist_get_timeout(void) { return timeout_s; }

lt_dist_work *lt_dist_work_new(lt_dist_pg *pg, lt_dist_kind kind) {
  lt_dist_work *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  atomic_init(&w->refcount, 1);
  atomic_init(&w->state, LT_DIST_QUEUED);
  w->kind = kind;
  w->pg = pg;
  w->backend = pg->backend;
  w->root = -1;
  w->source = -1;
  return w;
}

void lt_dist_work_release(lt_dist_work *w) {
  if (!w || atomic_fetch_sub(&w->refcount, 1) != 1) return;
  if (w->backend_req && w->backend->release) w->backend->release(w);
  free(w->counts);
  free(w->rcounts);
  free(w);
}

int lt_dist_submit(lt_dist_work *w) {
  w->t_queued = lt_dist_clock();
  if (direct_p2p(w)) {
    w->t_start = w->t_queued;
    atomic_store(&w->state, LT_DIST_RUNNING);
    if (w->backend->start_p2p(w) < 0) { atomic_store(&w->state, LT_DIST_FAILED); return -1; }
    return 0;
  }
  pthread_mutex_lock(&mu);
  if (!is_p2p(w)) w->seq = ++w->pg->seq;
  atomic_fetch_add(&w->refcount, 1);
  w->next = NULL;
  if (q_tail) q_tail->next = w; else q_head = w;
  q_tail = w;
  pthread_cond_signal(&q_cond);
  pthread_mutex_unlock(&mu);
  return 0;
}

static int p2p_poll(lt_dist_work *w, bool block) {
  int spins = 0;
  for (;;) {
    int st = atomic_load(&w->state);
    if (st == LT_DIST_DONE) return 1;
    if (st == LT_DIST_FAILED) return -1;
    int r = w->backend->test_p2p(w);
    if (r < 0) {
      char d[200], m[700];
      describe(w, d, sizeof d);
      snprintf(m, sizeof m, "lutorch.distributed: %s failed on rank %d: %.200s", d, my_rank, w->err);
      snprintf(w->err, sizeof w->err, "%.399s", m);
    }
    if (r != 0) {
      w->t_end = lt_dist_clock();
      atomic_store(&w->state, r > 0 ? LT_DIST_DONE : LT_DIST_FAILED);
      return r;
    }
    if (!block) return 0;
    double now = lt_dist_clock();
    if (now - w->t_start > timeout_s) {
      char d[200], m[400];
      describe(w, d, sizeof d);
      snprintf(m, sizeof m, "lutorch.distributed: %s timed out after %.1f s on rank %d: "
               "the peer is dead, stuck, or never posted the matching operation", d, timeout_s, my_rank);
      snprintf(w->err, sizeof w->err, "%.399s", m);
      pthread_mutex_lock(&mu);
      mark_broken(m);
      pthread_mutex_unlock(&mu);
      return -1;
    }
    if (lt_dist_broken()) { snprintf(w->err, sizeof w->err, "%s", lt_dist_broken()); return -1; }
    backoff(&spins);
  }
}

int lt_dist_run(lt_dist_work *w) {
  pthread_mutex_lock(&mu);
  if (q_head || running || broken_msg[0] || !started) {
    pthread_mutex_unlock(&mu);
    if (lt_dist_submit(w) < 0) return -1;
    return lt_dist_wait(w);
  }
  /* nothing ahead of it: every earlier collective has finished, so running it here keeps
     program order, and saves the two thread wake-ups of a hand-off (tens of µs) */
  w->seq = ++w->pg->seq;
  begin_locked(w, true);
  w->t_queued = w->t_start;
  pthread_mutex_unlock(&mu);
  int rc = w->backend->run(w);
  pthread_mutex_lock(&mu);
  finish_locked(w, rc);
  pthread_mutex_unlock(&mu);
  return rc < 0 ? -1 : 0;
}

int lt_dist_wait(lt_dist_work *w) {
  if (direct_p2p(w)) return p2p_poll(w, true) > 0 ? 0 : -1;
  pthread_mutex_lock(&mu);
  while (atomic_load(&w->state) < LT_DIST_DONE && !broken_msg[0]) {
    struct timespec ts;
    deadline_in(&ts, 0.5);
    pthread_cond_timedwait(&done_cond, &mu, &ts);
  }
  int st = atomic_load(&w->state);
  if (st != LT_DIST_DONE && st != LT_DIST_FAILED && broken_msg[0])
    snprintf(w->err, sizeof w->err, "%s", broken_msg);
  /* issued on a device: wait for the device too (the op ran on the caller's stream, so this
     also orders the stream after it); the same timeout as a running collective */
  int spins = 0;
  while (st == LT_DIST_DONE && w->backend->pending) {
    int r = dev_poll_locked(w);
    if (r > 0) break;
    if (r < 0) st = LT_DIST_FAILED;
    else if (broken_msg[0]) { snprintf(w->err, sizeof w->err, "%s", broken_msg); st = LT_DIST_FAILED; }
    else if (lt_dist_clock() - w->t_start > timeout_s) { timed_out_locked(w, " (on the device)", true); st = LT_DIST_FAILED; }
    if (st != LT_DIST_DONE) break;
    pthread_mutex_unlock(&mu);
    backoff(&spins);
    pthread_mutex_lock(&mu);
  }
  pthread_mutex_unlock(&mu);
  return st == LT_DIST_DONE ? 0 : -1;
}

int lt_dist_test(lt_dist_work *w) {
  if (direct_p2p(w)) return p2p_poll(w, false);
  int st = atomic_load(&w->state);
  if (st != LT_DIST_DONE) return st == LT_DIST_FAILED ? -1 : 0;
  if (!w->backend->pending) return 1;
  pthread_mutex_lock(&mu);
  int r = dev_poll_locked(w);
  pthread_mutex_unlock(&mu);
  return r;
}

bool lt_dist_idle(void) {
  pthread_mutex_lock(&mu);
  bool idle = !q_head && !running && !inflight;
  pthread_mutex_unlock(&mu);
  return idle;
}

int lt_dist_stop(void) {
  if (!started) return 0;
  pthread_mutex_lock(&mu);
  /* a stuck collective never returns: leave the threads to the abort that follows */
  if (broken_msg[0] || running) { pthread_mutex_unlock(&mu); return -1; }
  stopping = true;
  pthread_cond_broadcast(&q_cond);
  pthread_cond_broadcast(&wd_cond);
  pthread_mutex_unlock(&mu);
  pthread_join(comm_thread, NULL);
  pthread_join(wd_thread, NULL);
  started = false;
  /* what the device still runs must end before its communicators go */
  double t0 = lt_dist_clock();
  int spins = 0;
  pthread_mutex_lock(&mu);
  while (sweep_inflight_locked(0, false) > 0) {
    if (broken_msg[0] || lt_dist_clock() - t0 > timeout_s) { pthread_mutex_unlock(&mu); return -1; }
    pthread_mutex_unlock(&mu);
    backoff(&spins);
    pthread_mutex_lock(&mu);
  }
  pthread_mutex_unlock(&mu);
  return 0;
}
