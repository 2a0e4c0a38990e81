/*
** trace.c — the CUDA events behind torch.profiler's CUDA activity (trace.h):
** records of kernel launches and copies, each a pair of events, and the
** reference event per device that places them on the host's timeline.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "cuda/cuda.h"
#include "cuda/trace.h"

bool lt_cuda_tracing = false;

typedef struct trace_rec {
  lt_cuda_trace_event e;
  lt_cu_event start, end;
  bool ended;
} trace_rec;

/* a device's reference: an event and the host time at which it completed */
typedef struct trace_ref { lt_cu_event ev; int64_t host_ns; bool have; } trace_ref;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static trace_rec *recs;
static size_t nrecs, caprecs;
static trace_ref refs[LT_CUDA_MAX_DEVICES];

static int64_t host_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void lt_cuda_trace_set(bool on) { lt_cuda_tracing = on; }

/* the reference of dev, made at its first record (mu held, dev's context current) */
static bool have_ref(int dev, lt_cu_stream s) {
  trace_ref *r = &refs[dev];
  if (r->have) return true;
  const lt_cu_driver *drv = lt_cuda_driver();
  if (drv->event_create(&r->ev, 0) != LT_CU_SUCCESS) return false;
  if (drv->event_record(r->ev, s) != LT_CU_SUCCESS || drv->event_synchronize(r->ev) != LT_CU_SUCCESS) {
    drv->event_destroy(r->ev);
    return false;
  }
  r->host_ns = host_ns();     /* the record has run: now is its time, within the wait's latency */
  r->have = true;
  return true;
}

int lt_cuda_trace_begin(int dev, void *stream, const char *name, int kind, size_t bytes) {
  if (!lt_cuda_tracing || dev < 0 || dev >= LT_CUDA_MAX_DEVICES) return -1;
  const lt_cu_driver *drv = lt_cuda_driver();
  lt_cu_stream s = (lt_cu_stream)stream;
  pthread_mutex_lock(&mu);
  int r = -1;
  if (!have_ref(dev, s)) goto done;
  if (nrecs == caprecs) {
    size_t cap = caprecs ? caprecs * 2 : 256;
    trace_rec *v = realloc(recs, cap * sizeof *v);
    if (!v) goto done;
    recs = v;
    caprecs = cap;
  }
  trace_rec *t = &recs[nrecs];
  memset(t, 0, sizeof *t);
  if (drv->event_create(&t->start, 0) != LT_CU_SUCCESS) goto done;
  if (drv->event_create(&t->end, 0) != LT_CU_SUCCESS) { drv->event_destroy(t->start); goto done; }
  /* a kernel is named after its op ("mul kernel"), so its row is not the op's */
  snprintf(t->e.name, sizeof t->e.name, kind == LT_CUDA_TRACE_KERNEL ? "%s kernel" : "%s", name ? name : "cuda");
  t->e.kind = kind;
  t->e.dev = dev;
  t->e.stream = (uintptr_t)stream;
  t->e.bytes = bytes;
  t->e.tid = (long)syscall(SYS_gettid);
  t->e.launch_ns = host_ns();
  drv->event_record(t->start, s);
  r = (int)nrecs++;
done:
  pthread_mutex_unlock(&mu);
  return r;
}

void lt_cuda_trace_end(int r) {
  if (r < 0) return;
  pthread_mutex_lock(&mu);
  if ((size_t)r < nrecs && !recs[r].ended) {
    lt_cuda_driver()->event_record(recs[r].end, (lt_cu_stream)recs[r].e.stream);
    recs[r].ended = true;
  }
  pthread_mutex_unlock(&mu);
}

static int64_t at(const trace_ref *ref, lt_cu_event ev) {
  const lt_cu_driver *drv = lt_cuda_driver();
  float ms = 0;
  if (drv->event_synchronize(ev) != LT_CU_SUCCESS || drv->event_elapsed_time(&ms, ref->ev, ev) != LT_CU_SUCCESS)
    return INT64_MIN;
  return ref->host_ns + (int64_t)((double)ms * 1e6);
}

int lt_cuda_trace_collect(void (*fn)(void *ud, const lt_cuda_trace_event *e), void *ud) {
  pthread_mutex_lock(&mu);
  const lt_cu_driver *drv = lt_cuda_driver();
  /* read under the lock into a list of our own; fn runs after it is released */
  lt_cuda_trace_event *out = malloc((nrecs ? nrecs : 1) * sizeof *out);
  int n = 0;
  for (size_t i = 0; i < nrecs; i++) {
    trace_rec *t = &recs[i];
    lt_cuda_guard g;
    if (lt_cuda_enter(t->e.dev, &g, "profiler") < 0) continue;
    t->e.t0 = at(&refs[t->e.dev], t->start);
    t->e.t1 = t->ended ? at(&refs[t->e.dev], t->end) : INT64_MIN;
    if (out && t->e.t0 != INT64_MIN && t->e.t1 != INT64_MIN) out[n++] = t->e;
    drv->event_destroy(t->start);
    drv->event_destroy(t->end);
    lt_cuda_leave(&g);
  }
  nrecs = 0;
  /* the references go too: the next session measures from fresh ones */
  for (int d = 0; d < LT_CUDA_MAX_DEVICES; d++) {
    if (!refs[d].have) continue;
    lt_cuda_guard g;
    if (lt_cuda_enter(d, &g, "profiler") == 0) {
      drv->event_destroy(refs[d].ev);
      lt_cuda_leave(&g);
    }
    refs[d].have = false;
  }
  pthread_mutex_unlock(&mu);
  for (int i = 0; i < n; i++) fn(ud, &out[i]);
  free(out);
  return n;
}
