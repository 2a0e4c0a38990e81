/*
** fake_driver.c — the fake CUDA driver: devices on host memory, so that
** everything above the seam is tested on machines without a GPU. driver.h
** states what it promises; this says how, and where it is stricter or
** simpler than the real driver.
**
** State. One mutex guards everything (each entry takes it once); it is taken
** around fork, so a child never inherits it locked. lt_cu_fake_reset (run
** lazily before the first use) frees every allocation, stream, event and
** module and returns the knobs to their defaults.
**
** Handles. Streams, events, contexts, modules and functions are ids, not
** addresses: a handle is id << 4 | kind, ids come from one counter that
** reset does not rewind, so a destroyed handle, a handle from before a reset,
** or a stream passed as an event is never mistaken for a live one
** (INVALID_HANDLE; INVALID_CONTEXT for contexts).
**
** Contexts. Each device has one primary context; retain counts up, release
** down, and when the count reaches zero the context is reset as the real one
** is: the device's allocations, streams, events and modules are destroyed.
** The current context is per thread. Allocating, creating streams, events
** and modules, the NULL stream, mem_get_info and ctx_synchronize need a
** current, retained context (INVALID_CONTEXT otherwise); freeing does not.
**
** Memory. mem_alloc is posix_memalign(256) of host memory, registered with
** its device and size; pointers are host addresses, so host builds of the
** kernels can run on them. Copies and sets check that every device range lies
** inside one live allocation of the stream's device and that a host range is
** not device memory (the fake cannot fault, so it checks); otherwise
** INVALID_VALUE. Freeing something that is not the start of a live allocation
** of the right kind (device memory for mem_free, pinned for mem_free_host),
** 0 included, is INVALID_VALUE. A copy or set of zero bytes succeeds without
** looking at its pointers (only its stream). mem_free of memory that queued work still
** uses (on a held stream) returns at once, and the memory is released when
** that work has run (the real driver would wait). Pinned host memory is
** posix_memalign(4096), tracked the same way; it is not device memory and
** does not count against a device; it survives context resets (only
** lt_cu_fake_reset frees it). Memory is not cleared: like cuMemAlloc's, it
** holds whatever the host allocator gave.
**
** Streams. A stream is a FIFO of operations (copies, sets, event records,
** waits). An operation runs as soon as it is at the head of its stream, the
** stream is not held, and the points it waits for have been reached: on an
** unheld stream with nothing to wait for, before the entry returns. A wait is
** a point (stream, sequence number): stream_wait_event makes one from the
** event's latest record at the time of the call (none when the event was
** never recorded). The NULL stream is the legacy default stream: work on it
** waits for the work already queued on the device's blocking streams, and
** work on a blocking stream (flags 0) waits for the work already queued on
** the NULL stream; LT_CU_STREAM_NON_BLOCKING streams do neither. Synchronize
** and query never block: work that cannot run yet makes them NOT_READY.
** Destroying a stream with queued work returns at once; the work still runs
** (the held stream can still be released through its old handle), then the
** stream goes.
**
** Knobs. lt_cu_fake_fail_alloc counts the mem_alloc calls that get past the
** argument checks. lt_cu_fake_hold_stream(NULL, ...) holds the current
** device's default stream, device 0's when no context is current; a destroyed
** stream's old handle still releases the work it has queued.
**
** Events. An event is the point of its latest record: complete once its
** stream's work up to that point has run; never recorded counts as complete.
** elapsed_time uses CLOCK_MONOTONIC at the time the record ran.
**
** Modules. module_load_data accepts an ELF (cubin), a fatbin or a PTX text
** image, copies it, and module_get_function finds a name in it (a PTX
** ".entry name", or the name as a NUL-delimited string of the ELF or fatbin),
** else NOT_FOUND; anything else is CUDA_ERROR_INVALID_IMAGE. launch_kernel
** checks its handles and returns NOT_SUPPORTED: kernels run under the fake
** through their host builds.
*/
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cuda/driver.h"

#define MAXDEV 16
#define DEV_ALIGN 256
#define HOST_ALIGN 4096
#define DEFAULT_TOTAL ((size_t)1 << 30)
#define INVALID_IMAGE 200             /* CUDA_ERROR_INVALID_IMAGE */

/* the entries, by their table names, for lt_cu_fake_calls */
#define FAKE_ENTRIES(X) \
  X(init) X(driver_version) X(device_count) X(device_name) X(device_total_mem) \
  X(device_attribute) X(primary_ctx_retain) X(primary_ctx_release) X(ctx_set_current) \
  X(ctx_get_current) X(ctx_synchronize) X(mem_alloc) X(mem_free) X(mem_get_info) \
  X(mem_host_alloc) X(mem_free_host) X(memcpy_htod_async) X(memcpy_dtoh_async) \
  X(memcpy_dtod_async) X(memset_d8_async) X(stream_create) X(stream_destroy) \
  X(stream_synchronize) X(stream_query) X(stream_wait_event) X(event_create) \
  X(event_destroy) X(event_record) X(event_query) X(event_synchronize) \
  X(event_elapsed_time) X(module_load_data) X(module_unload) X(module_get_function) \
  X(launch_kernel)
enum {
#define X(n) E_##n,
  FAKE_ENTRIES(X)
#undef X
  E_COUNT
};
static const char *const entry_names[E_COUNT] = {
#define X(n) #n,
  FAKE_ENTRIES(X)
#undef X
};

enum { TAG_CTX = 1, TAG_STREAM, TAG_EVENT, TAG_MODULE, TAG_FUNC };

/* an allocation: device memory (dev >= 0) or pinned host memory (dev -1) */
typedef struct frec {
  uintptr_t base;
  size_t size;
  int dev;
  int refs;          /* queued operations that use it */
  int dead;          /* freed by the caller, released when refs reaches 0 */
} frec;

typedef struct fpoint { uint64_t stream, seq; } fpoint;

enum { OP_COPY, OP_SET, OP_RECORD, OP_WAIT };
typedef struct fop {
  struct fop *next;
  int kind;
  uint64_t seq;                 /* its place in its stream */
  void *dst;
  const void *src;
  size_t n;
  unsigned char value;
  frec *uses[2];
  uint64_t event, gen;          /* OP_RECORD: which record of which event */
  int nwait;
  fpoint *waits;
} fop;

/* every handle struct starts with its id (the tables are sorted by it) */
typedef struct fstream {
  uint64_t id;
  int dev;
  unsigned flags;
  int is_default, held, destroyed;
  fop *head, *tail;
  uint64_t enq, done;           /* sequence numbers queued and run */
} fstream;

typedef struct fevent {
  uint64_t id;
  int dev;
  unsigned flags;
  int recorded, timed;
  fpoint at;                    /* the latest record */
  uint64_t gen;                 /* counts records */
  uint64_t t_ns;
} fevent;

typedef struct fmodule {
  uint64_t id;
  int dev;
  unsigned char *image;
  size_t size;
  int ptx;
} fmodule;

typedef struct ffunc {
  uint64_t id;
  uint64_t module;
  char *name;
} ffunc;

typedef struct idtab { void **v; size_t n, cap; } idtab;

static struct {
  pthread_mutex_t lock;
  int ready;
  int ndev;
  size_t total[MAXDEV], allocated[MAXDEV];
  uint64_t ctx_id[MAXDEV];
  int ctx_refs[MAXDEV];
  fstream *defstream[MAXDEV];
  frec **recs;                  /* live allocations, sorted by base */
  size_t nrec, caprec;
  long live;                    /* device allocations */
  idtab streams, events, modules, funcs;
  long fail_in;                 /* the nth mem_alloc from now fails; 0: none */
  long calls[E_COUNT];
  uint64_t gen;                 /* counts resets: a thread's current context is of one */
} F = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t next_id = 1;    /* never rewound */
static _Thread_local struct { uint64_t ctx, gen; } cur;

static void reset_locked(void);

static void enter(int e) {
  pthread_mutex_lock(&F.lock);
  if (!F.ready) reset_locked();
  F.calls[e]++;
}
static lt_cu_result leave(lt_cu_result r) {
  pthread_mutex_unlock(&F.lock);
  return r;
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* ---- handles and id tables ---- */
static void *handle(uint64_t id, int tag) { return (void *)(uintptr_t)(id << 4 | (uint64_t)tag); }
static uint64_t handle_id(const void *h, int tag) {
  uintptr_t v = (uintptr_t)h;
  return (v & 15) == (uintptr_t)tag ? (uint64_t)(v >> 4) : 0;
}

static size_t idtab_index(const idtab *t, uint64_t id) {   /* first entry with id >= id */
  size_t lo = 0, hi = t->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (*(const uint64_t *)t->v[mid] < id) lo = mid + 1; else hi = mid;
  }
  return lo;
}
static void *idtab_find(const idtab *t, uint64_t id) {
  if (!id) return NULL;
  size_t i = idtab_index(t, id);
  return i < t->n && *(const uint64_t *)t->v[i] == id ? t->v[i] : NULL;
}
static int idtab_add(idtab *t, void *p) {       /* ids only grow: appending keeps the order */
  if (t->n == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 16;
    void **v = realloc(t->v, cap * sizeof *v);
    if (!v) return -1;
    t->v = v, t->cap = cap;
  }
  t->v[t->n++] = p;
  return 0;
}
static void idtab_remove_at(idtab *t, size_t i) {
  memmove(t->v + i, t->v + i + 1, (t->n - i - 1) * sizeof *t->v);
  t->n--;
}
static void idtab_remove(idtab *t, uint64_t id) {
  size_t i = idtab_index(t, id);
  if (i < t->n && *(const uint64_t *)t->v[i] == id) idtab_remove_at(t, i);
}

/* ---- the current context ---- */
static int ctx_dev(uint64_t id) {               /* the device whose primary context id is, or -1 */
  for (int d = 0; d < MAXDEV; d++)
    if (F.ctx_id[d] == id) return d;
  return -1;
}
static int cur_dev(void) {                      /* -1: none current, or it was reset */
  if (cur.gen != F.gen || !cur.ctx) return -1;
  int d = ctx_dev(cur.ctx);
  return d >= 0 && F.ctx_refs[d] > 0 ? d : -1;
}

/* ---- the allocation registry ---- */
static size_t rec_upper(uintptr_t p) {          /* index of the first allocation above p */
  size_t lo = 0, hi = F.nrec;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (F.recs[mid]->base <= p) lo = mid + 1; else hi = mid;
  }
  return lo;
}
static frec *rec_at(uintptr_t p) {              /* the allocation that holds byte p */
  size_t i = rec_upper(p);
  if (i == 0) return NULL;
  frec *r = F.recs[i - 1];
  return p - r->base < r->size ? r : NULL;
}
static int rec_insert(frec *r) {
  if (F.nrec == F.caprec) {
    size_t cap = F.caprec ? 2 * F.caprec : 64;
    frec **v = realloc(F.recs, cap * sizeof *v);
    if (!v) return -1;
    F.recs = v, F.caprec = cap;
  }
  size_t i = rec_upper(r->base);
  memmove(F.recs + i + 1, F.recs + i, (F.nrec - i) * sizeof *F.recs);
  F.recs[i] = r;
  F.nrec++;
  return 0;
}
static frec *rec_take(uintptr_t base, int host) {   /* unregister the allocation starting at base */
  size_t i = rec_upper(base);
  if (i == 0) return NULL;
  frec *r = F.recs[i - 1];
  if (r->base != base || (r->dev < 0) != host) return NULL;
  memmove(F.recs + i - 1, F.recs + i, (F.nrec - i) * sizeof *F.recs);
  F.nrec--;
  if (!host) F.allocated[r->dev] -= r->size, F.live--;
  return r;
}
static void rec_release(frec *r) {              /* the caller is done with it */
  r->dead = 1;
  if (r->refs == 0) free((void *)r->base), free(r);
}
static void rec_unuse(frec *r) {
  if (r && --r->refs == 0 && r->dead) free((void *)r->base), free(r);
}

/* a device range [p, p + n) inside one live allocation of device dev */
static lt_cu_result dev_range(lt_cu_ptr p, size_t n, int dev, frec **out) {
  frec *r = rec_at((uintptr_t)p);
  if (!r || r->dev != dev || n > r->size - ((uintptr_t)p - r->base)) return LT_CU_ERROR_INVALID_VALUE;
  *out = r;
  return LT_CU_SUCCESS;
}
/* a host range: not device memory; inside pinned memory it is used like device memory */
static lt_cu_result host_range(const void *p, size_t n, frec **out) {
  *out = NULL;
  if (!p) return LT_CU_ERROR_INVALID_VALUE;
  uintptr_t a = (uintptr_t)p;
  if (n > UINTPTR_MAX - a) return LT_CU_ERROR_INVALID_VALUE;
  frec *r = rec_at(a);
  if (!r) {                                     /* does an allocation start inside it? */
    size_t i = rec_upper(a);
    if (i < F.nrec && F.recs[i]->base < a + n) return LT_CU_ERROR_INVALID_VALUE;
    return LT_CU_SUCCESS;
  }
  if (r->dev >= 0 || n > r->size - (a - r->base)) return LT_CU_ERROR_INVALID_VALUE;
  *out = r;
  return LT_CU_SUCCESS;
}

/* ---- streams: queues and progress ---- */
static int reached(fpoint p) {
  fstream *t = idtab_find(&F.streams, p.stream);
  return !t || t->done >= p.seq;
}
static int op_ready(const fop *o) {
  for (int i = 0; i < o->nwait; i++)
    if (!reached(o->waits[i])) return 0;
  return 1;
}
static void op_free(fop *o) {
  rec_unuse(o->uses[0]);
  rec_unuse(o->uses[1]);
  free(o->waits);
  free(o);
}
static void op_run(fop *o) {
  switch (o->kind) {
  case OP_COPY: memmove(o->dst, o->src, o->n); break;
  case OP_SET: memset(o->dst, o->value, o->n); break;
  case OP_RECORD: {
    fevent *e = idtab_find(&F.events, o->event);
    if (e && e->gen == o->gen) e->t_ns = now_ns(), e->timed = 1;
    break;
  }
  default: break;
  }
}

static void progress(void) {
  for (int again = 1; again;) {
    again = 0;
    for (size_t i = 0; i < F.streams.n;) {
      fstream *s = F.streams.v[i];
      while (s->head && !s->held && op_ready(s->head)) {
        fop *o = s->head;
        s->head = o->next;
        if (!s->head) s->tail = NULL;
        op_run(o);
        s->done = o->seq;
        op_free(o);
        again = 1;
      }
      if (s->destroyed && !s->head) {
        idtab_remove_at(&F.streams, i);
        free(s);
      } else {
        i++;
      }
    }
  }
}

static int op_wait(fop *o, uint64_t stream, uint64_t seq) {
  fpoint *w = realloc(o->waits, (size_t)(o->nwait + 1) * sizeof *w);
  if (!w) return -1;
  o->waits = w;
  w[o->nwait++] = (fpoint){stream, seq};
  return 0;
}

/* queue o on s (o is s's from now on, or freed on failure), then run what can run */
static lt_cu_result enqueue(fstream *s, fop *o) {
  int bad = 0;
  if (s->is_default) {
    for (size_t i = 0; i < F.streams.n; i++) {
      fstream *t = F.streams.v[i];
      if (t->dev == s->dev && !t->is_default && !(t->flags & LT_CU_STREAM_NON_BLOCKING) && t->enq > t->done)
        bad |= op_wait(o, t->id, t->enq);
    }
  } else if (!(s->flags & LT_CU_STREAM_NON_BLOCKING)) {
    fstream *d = F.defstream[s->dev];
    if (d->enq > d->done) bad |= op_wait(o, d->id, d->enq);
  }
  if (bad) {
    op_free(o);
    return LT_CU_ERROR_OUT_OF_MEMORY;
  }
  o->seq = ++s->enq;
  if (s->tail) s->tail->next = o; else s->head = o;
  s->tail = o;
  progress();
  return LT_CU_SUCCESS;
}

static fop *op_new(int kind, frec *a, frec *b) {
  fop *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  o->kind = kind;
  if ((o->uses[0] = a)) a->refs++;
  if ((o->uses[1] = b)) b->refs++;
  return o;
}

static void drop_queue(fstream *s) {
  while (s->head) {
    fop *o = s->head;
    s->head = o->next;
    op_free(o);
  }
  s->tail = NULL;
  s->done = s->enq;
}

/* the stream h names: NULL is the current context's default stream */
static lt_cu_result get_stream(lt_cu_stream h, fstream **out) {
  if (!h) {
    int d = cur_dev();
    if (d < 0) return LT_CU_ERROR_INVALID_CONTEXT;
    *out = F.defstream[d];
    return LT_CU_SUCCESS;
  }
  fstream *s = idtab_find(&F.streams, handle_id(h, TAG_STREAM));
  if (!s || s->destroyed || s->is_default) return LT_CU_ERROR_INVALID_HANDLE;
  *out = s;
  return LT_CU_SUCCESS;
}
static fevent *get_event(lt_cu_event h) { return idtab_find(&F.events, handle_id(h, TAG_EVENT)); }
static int event_done(const fevent *e) { return !e->recorded || reached(e->at); }

/* ---- freeing everything of a device, or everything ---- */
static void free_module(fmodule *m) {
  for (size_t i = 0; i < F.funcs.n;) {
    ffunc *f = F.funcs.v[i];
    if (f->module == m->id) {
      idtab_remove_at(&F.funcs, i);
      free(f->name);
      free(f);
    } else {
      i++;
    }
  }
  free(m->image);
  free(m);
}

/* a primary context's last release: its device's streams, events, modules and memory go */
static void destroy_device(int d) {
  for (size_t i = 0; i < F.streams.n;) {
    fstream *s = F.streams.v[i];
    if (s->dev != d) { i++; continue; }
    drop_queue(s);
    s->held = 0;
    if (s->is_default) { i++; continue; }
    idtab_remove_at(&F.streams, i);
    free(s);
  }
  for (size_t i = 0; i < F.events.n;) {
    fevent *e = F.events.v[i];
    if (e->dev == d) idtab_remove_at(&F.events, i), free(e); else i++;
  }
  for (size_t i = 0; i < F.modules.n;) {
    fmodule *m = F.modules.v[i];
    if (m->dev == d) idtab_remove_at(&F.modules, i), free_module(m); else i++;
  }
  for (size_t i = 0; i < F.nrec;) {
    frec *r = F.recs[i];
    if (r->dev == d) {
      memmove(F.recs + i, F.recs + i + 1, (F.nrec - i - 1) * sizeof *F.recs);
      F.nrec--;
      F.live--;
      rec_release(r);
    } else {
      i++;
    }
  }
  F.allocated[d] = 0;
  progress();                 /* work elsewhere may have waited on the device's streams */
}

static void die(const char *what) {
  fprintf(stderr, "lutorch fake CUDA driver: out of memory %s\n", what);
  abort();
}

static void reset_locked(void) {
  for (size_t i = 0; i < F.streams.n; i++) {     /* queued work first: it holds allocations */
    fstream *s = F.streams.v[i];
    drop_queue(s);
    free(s);
  }
  F.streams.n = 0;
  for (size_t i = 0; i < F.events.n; i++) free(F.events.v[i]);
  F.events.n = 0;
  while (F.modules.n) {
    fmodule *m = F.modules.v[F.modules.n - 1];
    F.modules.n--;
    free_module(m);
  }
  for (size_t i = 0; i < F.funcs.n; i++) {
    ffunc *f = F.funcs.v[i];
    free(f->name);
    free(f);
  }
  F.funcs.n = 0;
  for (size_t i = 0; i < F.nrec; i++) rec_release(F.recs[i]);
  F.nrec = 0;
  F.live = 0;
  F.ndev = 2;
  F.fail_in = 0;
  memset(F.calls, 0, sizeof F.calls);
  F.gen++;
  for (int d = 0; d < MAXDEV; d++) {
    F.total[d] = DEFAULT_TOTAL;
    F.allocated[d] = 0;
    F.ctx_id[d] = next_id++;
    F.ctx_refs[d] = 0;
    fstream *s = calloc(1, sizeof *s);
    if (!s) die("resetting");
    s->id = next_id++;
    s->dev = d;
    s->is_default = 1;
    if (idtab_add(&F.streams, s)) die("resetting");
    F.defstream[d] = s;
  }
  F.ready = 1;
}

/* ---- devices ---- */
static int bad_dev(int dev) { return dev < 0 || dev >= F.ndev; }

static lt_cu_result f_init(unsigned flags) {
  enter(E_init);
  return leave(flags ? LT_CU_ERROR_INVALID_VALUE : LT_CU_SUCCESS);
}

static lt_cu_result f_driver_version(int *v) {
  enter(E_driver_version);
  if (!v) return leave(LT_CU_ERROR_INVALID_VALUE);
  *v = 13000;
  return leave(LT_CU_SUCCESS);
}

static lt_cu_result f_device_count(int *n) {
  enter(E_device_count);
  if (!n) return leave(LT_CU_ERROR_INVALID_VALUE);
  *n = F.ndev;
  return leave(LT_CU_SUCCESS);
}

static lt_cu_result f_device_name(char *name, int len, int dev) {
  enter(E_device_name);
  if (!name || len <= 0) return leave(LT_CU_ERROR_INVALID_VALUE);
  if (bad_dev(dev)) return leave(LT_CU_ERROR_INVALID_DEVICE);
  snprintf(name, (size_t)len, "lutorch fake device %d (host memory)", dev);
  return leave(LT_CU_SUCCESS);
}

static lt_cu_result f_device_total_mem(size_t *bytes, int dev) {
  enter(E_device_total_mem);
  if (!bytes) return leave(LT_CU_ERROR_INVALID_VALUE);
  if (bad_dev(dev)) return leave(LT_CU_ERROR_INVALID_DEVICE);
  *bytes = F.total[dev];
  return leave(LT_CU_SUCCESS);
}

static lt_cu_result f_device_attribute(int *value, int attribute, int dev) {
  enter(E_device_attribute);
  if (!value) return leave(LT_CU_ERROR_INVALID_VALUE);
  if (bad_dev(dev)) return leave(LT_CU_ERROR_INVALID_DEVICE);
  switch (attribute) {              /* an sm_90 device of 4 multiprocessors */
  case LT_CU_ATTR_MAX_THREADS_PER_BLOCK: *value = 1024; break;
  case LT_CU_ATTR_MULTIPROCESSOR_COUNT: *value = 4; break;
  case LT_CU_ATTR_COMPUTE_CAPABILITY_MAJOR: *value = 9; break;
  case LT_CU_ATTR_COMPUTE_CAPABILITY_MINOR: *value = 0; break;
  default: return leave(LT_CU_ERROR_INVALID_VALUE);
  }
  return leave(LT_CU_SUCCESS);
}

/* ---- contexts ---- */
static lt_cu_result f_primary_ctx_retain(lt_cu_ctx *ctx, int dev) {
  enter(E_primary_ctx_retain);
  if (!ctx) return leave(LT_CU_ERROR_INVALID_VALUE);
  if (bad_dev(dev)) return leave(LT_CU_ERROR_INVALID_DEVICE);
  F.ctx_refs[dev]++;
  *ctx = handle(F.ctx_id[dev], TAG_CTX);
  return leave(LT_CU_SUCCESS);
}

static lt_cu_result f_primary_ctx_release(int dev) {
  enter(E_primary_ctx_release);
  if (bad_dev(dev)) return leave(LT_CU_ERROR_INVALID_DEVICE);
  if (F.ctx_refs[dev] == 0) return leave(LT_CU_ERROR_INVALID_CONTEXT);
  if (--F.ctx_refs[dev] == 0) destroy_device(dev);
  return leave(LT_CU_SUCCESS);
}

static lt_cu_result f_ctx_set_current(lt_cu_ctx ctx) {
  enter(E_ctx_set_current);
  if (!ctx) {
    cur.ctx = 0, cur.gen = F.gen;
    return leave(LT_CU_SUCCESS);
  }
  uint64_t id = handle_id(ctx, TAG_CTX);
  int d = id ? ctx_dev(id) : -1;
  if (d < 0 || F.ctx_refs[d] == 0) return leave(LT_CU_ERROR_INVALID_CONTEXT);
  cur.ctx = id, cur.gen = F.gen;
  return leave(LT_CU_SUCCESS);
}

static lt_cu_result f_ctx_get_current(lt_cu_ctx *ctx) {
  enter(E_ctx_get_current);
  if (!ctx) return leave(LT_CU_ERROR_INVALID_VALUE);
  *ctx = cur.gen == F.gen && cur.ctx ? handle(cur.ctx, TAG_CTX) : NULL;
  return leave(LT_CU_SUCCESS);
}

static lt_cu_result f_ctx_synchronize(void) {
  enter(E_ctx_synchronize);
  int d = cur_dev();
  if (d < 0) return leave(LT_CU_ERROR_INVALID_CONTEXT);
  progress();
  for (size_t i = 0; i < F.streams.n; i++) {
    fstream *s = F.streams.v[i];
    if (s->dev == d && s->head) return leave(LT_CU_ERROR_NOT_READY);
  }
  return leave(LT_CU_SUCCESS);
}

/* ---- memory ---- */
static lt_cu_result f_mem_alloc(lt_cu_ptr *p, size_t bytes) {
  enter(E_mem_alloc);
  int d = cur_dev();
  if (d < 0) return leave(LT_CU_ERROR_INVALID_CONTEXT);
  if (!p || bytes == 0) return leave(LT_CU_ERROR_INVALID_VALUE);
  if (F.fail_in > 0 && --F.fail_in == 0) return leave(LT_CU_ERROR_OUT_OF_MEMORY);
  if (bytes > F.total[d] || F.allocated[d] > F.total[d] - bytes) return leave(LT_CU_ERROR_OUT_OF_MEMORY);
  void *m = NULL;
  frec *r = malloc(sizeof *r);
  if (!r || posix_memalign(&m, DEV_ALIGN, bytes) != 0) {
    free(r);
    return leave(LT_CU_ERROR_OUT_OF_MEMORY);
  }
  *r = (frec){(uintptr_t)m, bytes, d, 0, 0};
  if (rec_insert(r)) {
    free(m), free(r);
    return leave(LT_CU_ERROR_OUT_OF_MEMORY);
  }
  F.allocated[d] += bytes;
  F.live++;
  *p = (lt_cu_ptr)(uintptr_t)m;
  return leave(LT_CU_SUCCESS);
}

static lt_cu_result f_mem_free(lt_cu_ptr p) {
  enter(E_mem_free);
  frec *r = rec_take((uintptr_t)p, 0);
  if (!r) return leave(LT_CU_ERROR_INVALID_VALUE);
  rec_release(r);
  return leave(LT_CU_SUCCESS);
}

static lt_cu_result f_mem_get_info(size_t *free_bytes, size_t *total_bytes) {
  enter(E_mem_get_info);
  int d = cur_dev();
  if (d < 0) return leave(LT_CU_ERROR_INVALID_CONTEXT);
  if (!free_bytes || !total_bytes) return leave(LT_CU_ERROR_INVALID_VALUE);
  *total_bytes = F.total[d];
  *free_bytes = F.allocated[d] < F.total[d] ? F.total[d] - F.allocated[d] : 0;
  return leave(LT_CU_SUCCESS);
}

static lt_cu_result f_mem_host_alloc(void **p, size_t bytes, unsigned flags) {
  enter(E_mem_host_alloc);
  if (cur_dev() < 0) return leave(LT_CU_ERROR_INVALID_CONTEXT);
  if (!p || bytes == 0 || (flags & ~7u)) return leave(LT_CU_ERROR_INVALID_VALUE);
  void *m = NULL;
  frec *r = malloc(sizeof *r);
  if (!r || posix_memalign(&m, HOST_ALIGN, bytes) != 0) {
    free(r);
    return leave(LT_CU_ERROR_OUT_OF_MEMORY);
  }
  *r = (frec){(uintptr_t)m, bytes, -1, 0, 0};
  if (rec_insert(r)) {
    free(m), free(r);
    return leave(LT_CU_ERROR_OUT_OF_MEMORY);
  }
  *p = m;
  return leave(LT_CU_SUCCESS);
}

static lt_cu_result f_mem_free_host(void *p) {
  enter(E_mem_free_host);
  frec *r = rec_take((uintptr_t)p, 1);
  if (!r) return leave(LT_CU_ERROR_INVALID_VALUE);
  rec_release(r);
  return leave(LT_CU_SUCCESS);
}

/* ---- copies and sets ---- */
static lt_cu_result queue_op(fstream *s, int kind, void *dst, const void *src, size_t n,
                             unsigned char value, frec *a, frec *b) {
  fop *o = op_new(kind, a, b);
  if (!o) return LT_CU_ERROR_OUT_OF_MEMORY;
  o->dst = dst, o->src = src, o->n = n, o->value = value;
  return enqueue(s, o);
}

static lt_cu_result f_memcpy_htod_async(lt_cu_ptr dst, const void *src, size_t n, lt_cu_stream h) {
  enter(E_memcpy_htod_async);
  fstream *s;
  frec *a, *b;
  lt_cu_result r = get_stream(h, &s);
  if (r || n == 0) return leave(r);
  if ((r = dev_range(dst, n, s->dev, &a)) || (r = host_range(src, n, &b))) return leave(r);
  return leave(queue_op(s, OP_COPY, (void *)(uintptr_t)dst, src, n, 0, a, b));
}

static lt_cu_result f_memcpy_dtoh_async(void *dst, lt_cu_ptr src, size_t n, lt_cu_stream h) {
  enter(E_memcpy_dtoh_async);
  fstream *s;
  frec *a, *b;
  lt_cu_result r = get_stream(h, &s);
  if (r || n == 0) return leave(r);
  if ((r = host_range(dst, n, &a)) || (r = dev_range(src, n, s->dev, &b))) return leave(r);
  return leave(queue_op(s, OP_COPY, dst, (const void *)(uintptr_t)src, n, 0, a, b));
}

static lt_cu_result f_memcpy_dtod_async(lt_cu_ptr dst, lt_cu_ptr src, size_t n, lt_cu_stream h) {
  enter(E_memcpy_dtod_async);
  fstream *s;
  frec *a, *b;
  lt_cu_result r = get_stream(h, &s);
  if (r || n == 0) return leave(r);
  if ((r = dev_range(dst, n, s->dev, &a)) || (r = dev_range(src, n, s->dev, &b))) return leave(r);
  return leave(queue_op(s, OP_COPY, (void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n, 0, a, b));
}

static lt_cu_result f_memset_d8_async(lt_cu_ptr dst, unsigned char value, size_t n, lt_cu_stream h) {
  enter(E_memset_d8_async);
  fstream *s;
  frec *a;
  lt_cu_result r = get_stream(h, &s);
  if (r || n == 0) return leave(r);
  if ((r = dev_range(dst, n, s->dev, &a))) return leave(r);
  return leave(queue_op(s, OP_SET, (void *)(uintptr_t)dst, NULL, n, value, a, NULL));
}

/* ---- streams ---- */
static lt_cu_result f_stream_create(lt_cu_stream *out, unsigned flags) {
  enter(E_stream_create);
  int d = cur_dev();
  if (d < 0) return leave(LT_CU_ERROR_INVALID_CONTEXT);
  if (!out || (flags & ~(unsigned)LT_CU_STREAM_NON_BLOCKING)) return leave(LT_CU_ERROR_INVALID_VALUE);
  fstream *s = calloc(1, sizeof *s);
  if (!s) return leave(LT_CU_ERROR_OUT_OF_MEMORY);
  s->id = next_id++;
  s->dev = d;
  s->flags = flags;
  if (idtab_add(&F.streams, s)) {
    free(s);
    return leave(LT_CU_ERROR_OUT_OF_MEMORY);
  }
  *out = handle(s->id, TAG_STREAM);
  return leave(LT_CU_SUCCESS);
}

static lt_cu_result f_stream_destroy(lt_cu_stream h) {
  enter(E_stream_destroy);
  fstream *s;
  if (!h || get_stream(h, &s)) return leave(LT_CU_ERROR_INVALID_HANDLE);
  s->destroyed = 1;               /* progress frees it once its queue is empty */
  progress();
  return leave(LT_CU_SUCCESS);
}

static lt_cu_result f_stream_synchronize(lt_cu_stream h) {
  enter(E_stream_synchronize);
  fstream *s;
  lt_cu_result r = get_stream(h, &s);
  if (r) return leave(r);
  progress();
  return leave(s->head ? LT_CU_ERROR_NOT_READY : LT_CU_SUCCESS);
}

static lt_cu_result f_stream_query(lt_cu_stream h) {
  enter(E_stream_query);
  fstream *s;
  lt_cu_result r = get_stream(h, &s);
  if (r) return leave(r);
  return leave(s->head ? LT_CU_ERROR_NOT_READY : LT_CU_SUCCESS);
}

static lt_cu_result f_stream_wait_event(lt_cu_stream h, lt_cu_event eh, unsigned flags) {
  enter(E_stream_wait_event);
  fstream *s;
  lt_cu_result r = get_stream(h, &s);
  if (r) return leave(r);
  fevent *e = get_event(eh);
  if (!e) return leave(LT_CU_ERROR_INVALID_HANDLE);
  if (flags) return leave(LT_CU_ERROR_INVALID_VALUE);
  if (!e->recorded) return leave(LT_CU_SUCCESS);
  fop *o = op_new(OP_WAIT, NULL, NULL);
  if (!o || op_wait(o, e->at.stream, e->at.seq)) {
    if (o) op_free(o);
    return leave(LT_CU_ERROR_OUT_OF_MEMORY);
  }
  return leave(enqueue(s, o));
}

/* ---- events ---- */
static lt_cu_result f_event_create(lt_cu_event *out, unsigned flags) {
  enter(E_event_create);
  int d = cur_dev();
  if (d < 0) return leave(LT_CU_ERROR_INVALID_CONTEXT);
  /* default 0, blocking sync 1, disable timing 2, interprocess 4 (which needs 2) */
  if (!out || (flags & ~7u) || ((flags & 4) && !(flags & LT_CU_EVENT_DISABLE_TIMING)))
    return leave(LT_CU_ERROR_INVALID_VALUE);
  fevent *e = calloc(1, sizeof *e);
  if (!e) return leave(LT_CU_ERROR_OUT_OF_MEMORY);
  e->id = next_id++;
  e->dev = d;
  e->flags = flags;
  if (idtab_add(&F.events, e)) {
    free(e);
    return leave(LT_CU_ERROR_OUT_OF_MEMORY);
  }
  *out = handle(e->id, TAG_EVENT);
  return leave(LT_CU_SUCCESS);
}

static lt_cu_result f_event_destroy(lt_cu_event h) {
  enter(E_event_destroy);
  fevent *e = get_event(h);
  if (!e) return leave(LT_CU_ERROR_INVALID_HANDLE);
  idtab_remove(&F.events, e->id);
  free(e);
  return leave(LT_CU_SUCCESS);
}

static lt_cu_result f_event_record(lt_cu_event eh, lt_cu_stream h) {
  enter(E_event_record);
  fevent *e = get_event(eh);
  if (!e) return leave(LT_CU_ERROR_INVALID_HANDLE);
  fstream *s;
  lt_cu_result r = get_stream(h, &s);
  if (r) return leave(r);
  if (s->dev != e->dev) return leave(LT_CU_ERROR_INVALID_HANDLE);
  fop *o = op_new(OP_RECORD, NULL, NULL);
  if (!o) return leave(LT_CU_ERROR_OUT_OF_MEMORY);
  fevent before = *e;
  e->gen++;
  e->recorded = 1, e->timed = 0;
  e->at = (fpoint){s->id, s->enq + 1};    /* the place enqueue gives o */
  o->event = e->id, o->gen = e->gen;
  r = enqueue(s, o);
  if (r) *e = before;
  return leave(r);
}

static lt_cu_result f_event_query(lt_cu_event h) {
  enter(E_event_query);
  fevent *e = get_event(h);
  if (!e) return leave(LT_CU_ERROR_INVALID_HANDLE);
  return leave(event_done(e) ? LT_CU_SUCCESS : LT_CU_ERROR_NOT_READY);
}

static lt_cu_result f_event_synchronize(lt_cu_event h) {
  enter(E_event_synchronize);
  fevent *e = get_event(h);
  if (!e) return leave(LT_CU_ERROR_INVALID_HANDLE);
  progress();
  return leave(event_done(e) ? LT_CU_SUCCESS : LT_CU_ERROR_NOT_READY);
}

static lt_cu_result f_event_elapsed_time(float *ms, lt_cu_event start, lt_cu_event end) {
  enter(E_event_elapsed_time);
  if (!ms) return leave(LT_CU_ERROR_INVALID_VALUE);
  fevent *a = get_event(start), *b = get_event(end);
  if (!a || !b || !a->recorded || !b->recorded ||
      ((a->flags | b->flags) & LT_CU_EVENT_DISABLE_TIMING))
    return leave(LT_CU_ERROR_INVALID_HANDLE);
  if (!event_done(a) || !event_done(b)) return leave(LT_CU_ERROR_NOT_READY);
  if (!a->timed || !b->timed) return leave(LT_CU_ERROR_INVALID_HANDLE);   /* its record was dropped */
  *ms = (float)(((double)b->t_ns - (double)a->t_ns) / 1e6);
  return leave(LT_CU_SUCCESS);
}

/* ---- modules ---- */
static uint64_t rd(const unsigned char *p, int bytes) {          /* little-endian */
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* the size of an ELF64 image: its headers and every section with contents */
static size_t elf_size(const unsigned char *im) {
  if (im[4] != 2 || im[5] != 1) return 0;         /* ELFCLASS64, little-endian */
  uint64_t phoff = rd(im + 0x20, 8), shoff = rd(im + 0x28, 8);
  uint64_t phsz = rd(im + 0x36, 2), phn = rd(im + 0x38, 2);
  uint64_t shsz = rd(im + 0x3A, 2), shn = rd(im + 0x3C, 2);
  const uint64_t lim = (uint64_t)1 << 32;
  if (phoff > lim || shoff > lim || (shn && shsz < 64)) return 0;
  uint64_t size = 64;
  if (phoff + phsz * phn > size) size = phoff + phsz * phn;
  if (shoff + shsz * shn > size) size = shoff + shsz * shn;
  for (uint64_t i = 0; i < shn; i++) {
    const unsigned char *sh = im + shoff + i * shsz;
    uint64_t type = rd(sh + 4, 4), off = rd(sh + 0x18, 8), sz = rd(sh + 0x20, 8);
    if (type == 8) continue;                      /* SHT_NOBITS */
    if (off > lim || sz > lim) return 0;
    if (off + sz > size) size = off + sz;
  }
  return (size_t)size;
}

/* does the image begin with magic? byte by byte, so a short text image is not read past its end */
static int starts(const unsigned char *im, const char *magic) {
  for (size_t i = 0; magic[i]; i++)
    if (im[i] != (unsigned char)magic[i]) return 0;
  return 1;
}

static int looks_ptx(const char *s) { return strstr(s, ".version") && strstr(s, ".target"); }

static lt_cu_result f_module_load_data(lt_cu_module *out, const void *image) {
  enter(E_module_load_data);
  int d = cur_dev();
  if (d < 0) return leave(LT_CU_ERROR_INVALID_CONTEXT);
  if (!out || !image) return leave(LT_CU_ERROR_INVALID_VALUE);
  const unsigned char *im = image;
  size_t size = 0;
  int ptx = 0;
  if (starts(im, "\177ELF")) {
    size = elf_size(im);
  } else if (starts(im, "\x50\xED\x55\xBA")) {   /* fatbin: magic, version, header size, body size */
    uint64_t hs = rd(im + 6, 2), body = rd(im + 8, 8);
    if (hs >= 16 && body < ((uint64_t)1 << 32)) size = (size_t)(hs + body);
  } else if (looks_ptx(image)) {
    size = strlen(image) + 1, ptx = 1;
  }
  if (size == 0) return leave(INVALID_IMAGE);
  fmodule *m = calloc(1, sizeof *m);
  unsigned char *copy = malloc(size);
  if (!m || !copy) {
    free(m), free(copy);
    return leave(LT_CU_ERROR_OUT_OF_MEMORY);
  }
  memcpy(copy, im, size);
  *m = (fmodule){next_id++, d, copy, size, ptx};
  if (idtab_add(&F.modules, m)) {
    free(copy), free(m);
    return leave(LT_CU_ERROR_OUT_OF_MEMORY);
  }
  *out = handle(m->id, TAG_MODULE);
  return leave(LT_CU_SUCCESS);
}

static lt_cu_result f_module_unload(lt_cu_module h) {
  enter(E_module_unload);
  fmodule *m = idtab_find(&F.modules, handle_id(h, TAG_MODULE));
  if (!m) return leave(LT_CU_ERROR_INVALID_HANDLE);
  idtab_remove(&F.modules, m->id);
  free_module(m);
  return leave(LT_CU_SUCCESS);
}

/* is name an entry of m: ".entry name" in PTX, a NUL-delimited string in a binary */
static int has_function(const fmodule *m, const char *name) {
  size_t n = strlen(name);
  if (n == 0) return 0;
  if (m->ptx) {
    for (const char *p = (const char *)m->image; (p = strstr(p, ".entry")); p += 6) {
      const char *q = p + 6;
      if (*q != ' ' && *q != '\t') continue;
      while (*q == ' ' || *q == '\t') q++;
      if (strncmp(q, name, n) == 0 && (q[n] == '(' || q[n] == ' ' || q[n] == '\t' || q[n] == '\n' ||
                                       q[n] == '\r'))
        return 1;
    }
    return 0;
  }
  for (size_t i = 1; i + n < m->size; i++)
    if (m->image[i - 1] == 0 && m->image[i + n] == 0 && memcmp(m->image + i, name, n) == 0) return 1;
  return 0;
}

static lt_cu_result f_module_get_function(lt_cu_function *out, lt_cu_module h, const char *name) {
  enter(E_module_get_function);
  fmodule *m = idtab_find(&F.modules, handle_id(h, TAG_MODULE));
  if (!m) return leave(LT_CU_ERROR_INVALID_HANDLE);
  if (!out || !name) return leave(LT_CU_ERROR_INVALID_VALUE);
  for (size_t i = 0; i < F.funcs.n; i++) {        /* one handle per name, as the driver does */
    ffunc *f = F.funcs.v[i];
    if (f->module == m->id && strcmp(f->name, name) == 0) {
      *out = handle(f->id, TAG_FUNC);
      return leave(LT_CU_SUCCESS);
    }
  }
  if (!has_function(m, name)) return leave(LT_CU_ERROR_NOT_FOUND);
  ffunc *f = calloc(1, sizeof *f);
  char *copy = strdup(name);
  if (f && copy) *f = (ffunc){next_id++, m->id, copy};
  if (!f || !copy || idtab_add(&F.funcs, f)) {
    free(f), free(copy);
    return leave(LT_CU_ERROR_OUT_OF_MEMORY);
  }
  *out = handle(f->id, TAG_FUNC);
  return leave(LT_CU_SUCCESS);
}

static lt_cu_result f_launch_kernel(lt_cu_function fh, unsigned gx, unsigned gy, unsigned gz,
                                    unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                    lt_cu_stream h, void **params, void **extra) {
  enter(E_launch_kernel);
  if (!idtab_find(&F.funcs, handle_id(fh, TAG_FUNC))) return leave(LT_CU_ERROR_INVALID_HANDLE);
  fstream *s;
  lt_cu_result r = get_stream(h, &s);
  if (r) return leave(r);
  if (!gx || !gy || !gz || !bx || !by || !bz) return leave(LT_CU_ERROR_INVALID_VALUE);
  return leave(LT_CU_ERROR_NOT_SUPPORTED);
}

static const lt_cu_driver fake = {
  .name = "fake",
  .init = f_init,
  .driver_version = f_driver_version,
  .device_count = f_device_count,
  .device_name = f_device_name,
  .device_total_mem = f_device_total_mem,
  .device_attribute = f_device_attribute,
  .primary_ctx_retain = f_primary_ctx_retain,
  .primary_ctx_release = f_primary_ctx_release,
  .ctx_set_current = f_ctx_set_current,
  .ctx_get_current = f_ctx_get_current,
  .ctx_synchronize = f_ctx_synchronize,
  .mem_alloc = f_mem_alloc,
  .mem_free = f_mem_free,
  .mem_get_info = f_mem_get_info,
  .mem_host_alloc = f_mem_host_alloc,
  .mem_free_host = f_mem_free_host,
  .memcpy_htod_async = f_memcpy_htod_async,
  .memcpy_dtoh_async = f_memcpy_dtoh_async,
  .memcpy_dtod_async = f_memcpy_dtod_async,
  .memset_d8_async = f_memset_d8_async,
  .stream_create = f_stream_create,
  .stream_destroy = f_stream_destroy,
  .stream_synchronize = f_stream_synchronize,
  .stream_query = f_stream_query,
  .stream_wait_event = f_stream_wait_event,
  .event_create = f_event_create,
  .event_destroy = f_event_destroy,
  .event_record = f_event_record,
  .event_query = f_event_query,
  .event_synchronize = f_event_synchronize,
  .event_elapsed_time = f_event_elapsed_time,
  .module_load_data = f_module_load_data,
  .module_unload = f_module_unload,
  .module_get_function = f_module_get_function,
  .launch_kernel = f_launch_kernel,
};

const lt_cu_driver *lt_cu_fake_driver(void) { return &fake; }

/* ---- knobs ---- */
static void knob_enter(void) {
  pthread_mutex_lock(&F.lock);
  if (!F.ready) reset_locked();
}
static void knob_leave(void) { pthread_mutex_unlock(&F.lock); }

void lt_cu_fake_reset(void) {
  pthread_mutex_lock(&F.lock);
  reset_locked();
  pthread_mutex_unlock(&F.lock);
}

void lt_cu_fake_set_device_count(int n) {
  knob_enter();
  F.ndev = n < 0 ? 0 : n > MAXDEV ? MAXDEV : n;
  knob_leave();
}

void lt_cu_fake_set_total_mem(int dev, size_t bytes) {
  knob_enter();
  if (dev >= 0 && dev < MAXDEV) F.total[dev] = bytes;
  knob_leave();
}

void lt_cu_fake_fail_alloc(long nth) {
  knob_enter();
  F.fail_in = nth > 0 ? nth : 0;
  knob_leave();
}

void lt_cu_fake_hold_stream(lt_cu_stream h, bool hold) {
  knob_enter();
  fstream *s = NULL;
  if (!h) {
    int d = cur_dev();
    s = F.defstream[d < 0 ? 0 : d];
  } else {
    s = idtab_find(&F.streams, handle_id(h, TAG_STREAM));   /* a destroyed one too */
    if (s && s->is_default) s = NULL;
  }
  if (!s) {
    fprintf(stderr, "lt_cu_fake_hold_stream: %p is not a stream of the fake\n", (void *)h);
  } else {
    s->held = hold;
    if (!hold) progress();
  }
  knob_leave();
}

long lt_cu_fake_live_allocations(void) {
  knob_enter();
  long n = F.live;
  knob_leave();
  return n;
}

size_t lt_cu_fake_allocated_bytes(int dev) {
  knob_enter();
  size_t n = dev >= 0 && dev < MAXDEV ? F.allocated[dev] : 0;
  knob_leave();
  return n;
}

long lt_cu_fake_calls(const char *entry) {
  long n = -1;                     /* not an entry's name: -1, so a test's typo shows */
  knob_enter();
  for (int i = 0; entry && i < E_COUNT; i++)
    if (strcmp(entry, entry_names[i]) == 0) n = F.calls[i];
  knob_leave();
  return n;
}

/* ---- fork: the child never inherits the lock held by another thread ---- */
static void fork_prepare(void) { pthread_mutex_lock(&F.lock); }
static void fork_after(void) { pthread_mutex_unlock(&F.lock); }
__attribute__((constructor)) static void fake_atfork(void) {
  pthread_atfork(fork_prepare, fork_after, fork_after);
}
