/*
** alloc.c — the CUDA caching allocator (policy in alloc.h).
**
** A segment is one mem_alloc; its blocks are a doubly linked list by address
** (prev/next), each either handed out (ALLOCATED, found by address in the
** `live` hash table), cached (FREE, in its pool's tree), or freed but waiting
** on events recorded on the streams that also used it (PENDING, reached from
** the pending list). Neighbouring FREE blocks never stay apart: freeing merges.
**
** A pool's tree is a treap ordered by (stream, size, address), so the best fit
** for a request is the first block at or after (stream, size, 0) — PyTorch's
** std::set with the same key, which is why a cached block only serves its own
** stream. Every record the allocator needs per request (blocks, stream uses,
** events) comes from a free list that only grows, and the hash table only
** grows, so a request served from the cache allocates no host memory.
**
** The driver works on the current context's device; the allocator makes its
** device's primary context current around the calls that need it (mem_alloc,
** mem_free, mem_get_info, event_create), which only happen off the cached
** path.
*/
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda/alloc.h"
#include "core/error.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

/* PyTorch's constants (c10/cuda/CUDACachingAllocator.cpp) */
#define MIN_BLOCK     ((size_t)512)   /* every size is a multiple of this */
#define SMALL_SIZE    (1 * MiB)       /* largest request of the small pool */
#define SMALL_BUFFER  (2 * MiB)       /* the small pool's segments */
#define MIN_LARGE     (10 * MiB)      /* from here a segment is the request rounded... */
#define ROUND_LARGE   (2 * MiB)       /* ...to this */
#define LARGE_BUFFER  (20 * MiB)      /* the segment of a request between 1 and 10 MiB */
/* larger requests are refused at once, so rounding can never overflow */
#define MAX_REQUEST   ((size_t)1 << 56)

#define CHUNK 64    /* records per host allocation of a free list */

enum { FREE, ALLOCATED, PENDING };

typedef struct block block;
typedef struct use use;

struct block {
  lt_cu_ptr ptr;
  size_t size;
  size_t requested;       /* bytes asked for, while handed out */
  lt_cu_stream stream;    /* the stream it serves (its segment's) */
  block *prev, *next;     /* neighbours in the segment; next also links the free list */
  block *left, *right;    /* the pool's treap, while FREE */
  use *uses;              /* other streams recorded while ALLOCATED */
  block *link;            /* a scratch list (release, check) */
  uint32_t prio;          /* treap priority, fixed when the record is made */
  int event_count;        /* pending uses, while PENDING */
  unsigned char state;
  unsigned char small;    /* of the small pool */
};

/* a stream that used a block: on the block's list while it is handed out,
** then, with an event recorded on that stream at the free, on the pending
** list until the event completes. event NULL (no event could be made): wait
** for the whole stream instead. */
struct use {
  lt_cu_stream stream;
  lt_cu_event event;
  block *block;
  use *next;
};

typedef struct { lt_cu_ptr key; block *b; } slot;

typedef struct chunk { struct chunk *next; } chunk;

struct lt_cuda_alloc {
  pthread_mutex_t lock;
  const lt_cu_driver *drv;
  int dev;
  lt_cu_ctx ctx;
  block *small_root, *large_root;   /* the pools */
  slot *live;                       /* blocks handed out, by address; 0 keys are empty */
  size_t live_cap, live_count;      /* live_cap: 0 or a power of two */
  unsigned live_bits;
  use *pending;
  block *spare_blocks;
  use *spare_uses;
  lt_cu_event *events;              /* made and idle */
  size_t nevents, events_cap;
  chunk *chunks;
  uint64_t seed;
  size_t total_mem;
  size_t allowed;                   /* cap on reserved bytes, 0: none */
  double fraction;
  bool capped;                      /* the last segment refused was refused by the cap */
  lt_cuda_memory_stats st;
};


/* ---- statistics ---------------------------------------------------------- */

static void stat_add(lt_cuda_stat *s, int64_t n) {
  s->current += n;
  if (n >= 0) s->allocated += n; else s->freed -= n;
  if (s->current > s->peak) s->peak = s->current;
}

/* the aggregate and the block's pool */
static void stat2(lt_cuda_stat *s, const block *b, int64_t n) {
  stat_add(&s[LT_CUDA_POOL_ALL], n);
  stat_add(&s[b->small ? LT_CUDA_POOL_SMALL : LT_CUDA_POOL_LARGE], n);
}

static void count_allocated(lt_cuda_alloc *a, const block *b, int sign) {
  stat2(a->st.allocation, b, sign);
  stat2(a->st.allocated_bytes, b, sign * (int64_t)b->size);
  stat2(a->st.requested_bytes, b, sign * (int64_t)b->requested);
}

static void count_active(lt_cuda_alloc *a, const block *b, int sign) {
  stat2(a->st.active, b, sign);
  stat2(a->st.active_bytes, b, sign * (int64_t)b->size);
}

static void count_segment(lt_cuda_alloc *a, const block *b, int sign) {
  stat2(a->st.segment, b, sign);
  stat2(a->st.reserved_bytes, b, sign * (int64_t)b->size);
}

static const char *fmt_size(char *buf, size_t len, size_t n) {
  if (n < KiB) snprintf(buf, len, "%zu bytes", n);
  else if (n < MiB) snprintf(buf, len, "%.2f KiB", (double)n / KiB);
  else if (n < 1024 * MiB) snprintf(buf, len, "%.2f MiB", (double)n / MiB);
  else snprintf(buf, len, "%.2f GiB", (double)n / (1024 * MiB));
  return buf;
}


/* ---- records: blocks, uses and events from free lists --------------------- */

static void *chunk_new(lt_cuda_alloc *a, size_t bytes) {
  chunk *c = malloc(sizeof(chunk) + bytes);
  if (!c) return NULL;
  c->next = a->chunks;
  a->chunks = c;
  return c + 1;
}

/* keep at least n block records and one use record spare, so a request
** cannot fail half-way for want of host memory */
static int reserve_records(lt_cuda_alloc *a, int nblocks, int nuses) {
  int have = 0;
  for (block *b = a->spare_blocks; b && have < nblocks; b = b->next) have++;
  if (have < nblocks) {
    block *blocks = chunk_new(a, CHUNK * sizeof(block));
    if (!blocks) return lt_error("cuda: out of host memory for the caching allocator's records");
    for (int i = 0; i < CHUNK; i++) {
      a->seed = a->seed * 6364136223846793005ull + 1442695040888963407ull;
      blocks[i].prio = (uint32_t)(a->seed >> 32);
      blocks[i].next = a->spare_blocks;
      a->spare_blocks = &blocks[i];
    }
  }
  if (nuses && !a->spare_uses) {
    use *uses = chunk_new(a, CHUNK * sizeof(use));
    if (!uses) return lt_error("cuda: out of host memory for the caching allocator's records");
    for (int i = 0; i < CHUNK; i++) {
      uses[i].next = a->spare_uses;
      a->spare_uses = &uses[i];
    }
  }
  return 0;
}

static block *block_take(lt_cuda_alloc *a) {   /* reserve_records first */
  block *b = a->spare_blocks;
  a->spare_blocks = b->next;
  uint32_t prio = b->prio;
  memset(b, 0, sizeof *b);
  b->prio = prio;
  return b;
}

static void block_put(lt_cuda_alloc *a, block *b) {
  b->next = a->spare_blocks;
  a->spare_blocks = b;
}

static void use_put(lt_cuda_alloc *a, use *u) {
  u->next = a->spare_uses;
  a->spare_uses = u;
}

static void event_put(lt_cuda_alloc *a, lt_cu_event e) {
  if (a->nevents == a->events_cap) {
    size_t cap = a->events_cap ? 2 * a->events_cap : 16;
    lt_cu_event *ev = realloc(a->events, cap * sizeof *ev);
    if (!ev) { a->drv->event_destroy(e); return; }   /* no room to keep it: let it go */
    a->events = ev;
    a->events_cap = cap;
  }
  a->events[a->nevents++] = e;
}


/* ---- the device's context around driver calls that need it --------------- */

typedef struct { lt_cu_ctx prev; bool switched; } ctx_guard;

static lt_cu_result ctx_enter(lt_cuda_alloc *a, ctx_guard *g) {
  g->switched = false;
  lt_cu_ctx cur = NULL;
  lt_cu_result r = a->drv->ctx_get_current(&cur);
  if (r != LT_CU_SUCCESS || cur == a->ctx) return r;
  r = a->drv->ctx_set_current(a->ctx);
  if (r == LT_CU_SUCCESS) { g->prev = cur; g->switched = true; }
  return r;
}

static void ctx_leave(lt_cuda_alloc *a, ctx_guard *g) {
  if (g->switched) a->drv->ctx_set_current(g->prev);
}

static lt_cu_result event_get(lt_cuda_alloc *a, lt_cu_event *e) {
  if (a->nevents) { *e = a->events[--a->nevents]; return LT_CU_SUCCESS; }
  ctx_guard g;
  lt_cu_result r = ctx_enter(a, &g);
  if (r == LT_CU_SUCCESS) r = a->drv->event_create(e, LT_CU_EVENT_DISABLE_TIMING);
  ctx_leave(a, &g);
  return r;
}


/* ---- the pools: treaps by (stream, size, address) ------------------------- */

static bool before(const block *x, const block *y) {
  if (x->stream != y->stream) return (uintptr_t)x->stream < (uintptr_t)y->stream;
  if (x->size != y->size) return x->size < y->size;
  return x->ptr < y->ptr;
}

static block *rot_right(block *t) { block *l = t->left; t->left = l->right; l->right = t; return l; }
static block *rot_left(block *t) { block *r = t->right; t->right = r->left; r->left = t; return r; }

static block *treap_insert(block *t, block *b) {
  if (!t) return b;
  if (before(b, t)) {
    t->left = treap_insert(t->left, b);
    if (t->left->prio > t->prio) t = rot_right(t);
  } else {
    t->right = treap_insert(t->right, b);
    if (t->right->prio > t->prio) t = rot_left(t);
  }
  return t;
}

static block *treap_join(block *l, block *r) {
  if (!l) return r;
  if (!r) return l;
  if (l->prio > r->prio) { l->right = treap_join(l->right, r); return l; }
  r->left = treap_join(l, r->left);
  return r;
}

static block *treap_remove(block *t, block *b) {   /* b is in t */
  if (t == b) return treap_join(t->left, t->right);
  if (before(b, t)) t->left = treap_remove(t->left, b);
  else t->right = treap_remove(t->right, b);
  return t;
}

static block **pool_of(lt_cuda_alloc *a, const block *b) {
  return b->small ? &a->small_root : &a->large_root;
}

static bool is_split(const block *b) { return b->prev || b->next; }

static void pool_insert(lt_cuda_alloc *a, block *b) {
  block **root = pool_of(a, b);
  b->state = FREE;
  b->left = b->right = NULL;
  *root = treap_insert(*root, b);
  if (is_split(b)) {
    stat2(a->st.inactive_split, b, 1);
    stat2(a->st.inactive_split_bytes, b, (int64_t)b->size);
  }
}

/* a FREE block's neighbours do not change while it is cached, so it is
** split now exactly when it was at pool_insert */
static void pool_remove(lt_cuda_alloc *a, block *b) {
  block **root = pool_of(a, b);
  *root = treap_remove(*root, b);
  b->left = b->right = NULL;
  if (is_split(b)) {
    stat2(a->st.inactive_split, b, -1);
    stat2(a->st.inactive_split_bytes, b, -(int64_t)b->size);
  }
}

/* the smallest cached block of `stream` with at least size bytes */
static block *best_fit(block *t, lt_cu_stream stream, size_t size) {
  block *best = NULL;
  while (t) {
    if ((uintptr_t)t->stream < (uintptr_t)stream || (t->stream == stream && t->size < size))
      t = t->right;
    else { best = t; t = t->left; }
  }
  return best && best->stream == stream ? best : NULL;
}


/* ---- blocks handed out: open addressing by address ------------------------ */

static size_t live_home(const lt_cuda_alloc *a, lt_cu_ptr p) {
  return (size_t)(((uint64_t)(p >> 9) * 0x9E3779B97F4A7C15ull) >> (64 - a->live_bits));
}

static void live_place(lt_cuda_alloc *a, block *b) {
  size_t mask = a->live_cap - 1, i = live_home(a, b->ptr);
  while (a->live[i].key) i = (i + 1) & mask;
  a->live[i].key = b->ptr;
  a->live[i].b = b;
  a->live_count++;
}

/* room for one more, the load kept under 1/2 */
static int live_reserve(lt_cuda_alloc *a) {
  if (2 * (a->live_count + 1) <= a->live_cap) return 0;
  size_t oldcap = a->live_cap, cap = oldcap ? 2 * oldcap : 64;
  slot *old = a->live, *fresh = calloc(cap, sizeof *fresh);
  if (!fresh) return lt_error("cuda: out of host memory for the caching allocator's table");
  a->live = fresh;
  a->live_cap = cap;
  a->live_bits = 0;
  while (((size_t)1 << a->live_bits) < cap) a->live_bits++;
  a->live_count = 0;
  for (size_t i = 0; i < oldcap; i++)
    if (old[i].key) live_place(a, old[i].b);
  free(old);
  return 0;
}

static size_t live_find(const lt_cuda_alloc *a, lt_cu_ptr p) {   /* slot index or live_cap */
  if (!a->live_cap || !p) return a->live_cap;
  size_t mask = a->live_cap - 1, i = live_home(a, p);
  while (a->live[i].key) {
    if (a->live[i].key == p) return i;
    i = (i + 1) & mask;
  }
  return a->live_cap;
}

/* remove slot i, shifting the rest of its probe run back (no tombstones) */
static void live_delete(lt_cuda_alloc *a, size_t i) {
  size_t mask = a->live_cap - 1, j = i;
  for (;;) {
    j = (j + 1) & mask;
    if (!a->live[j].key) break;
    size_t home = live_home(a, a->live[j].key);
    /* the entry at j may move to i when its home is not in (i, j] cyclically */
    if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
      a->live[i] = a->live[j];
      i = j;
    }
  }
  a->live[i].key = 0;
  a->live[i].b = NULL;
  a->live_count--;
}


/* ---- freeing into the cache, and events ---------------------------------- */

/* merge b with free neighbours and cache it */
static void free_block(lt_cuda_alloc *a, block *b) {
  block *q = b->prev;
  if (q && q->state == FREE) {
    pool_remove(a, q);
    b->ptr = q->ptr;
    b->size += q->size;
    b->prev = q->prev;
    if (b->prev) b->prev->next = b;
    block_put(a, q);
  }
  q = b->next;
  if (q && q->state == FREE) {
    pool_remove(a, q);
    b->size += q->size;
    b->next = q->next;
    if (b->next) b->next->prev = b;
    block_put(a, q);
  }
  pool_insert(a, b);
}

static void use_done(lt_cuda_alloc *a, use *u) {
  block *b = u->block;
  if (u->event) event_put(a, u->event);
  use_put(a, u);
  if (--b->event_count == 0) {
    count_active(a, b, -1);
    free_block(a, b);
  }
}

/* Settle the pending uses whose event has completed (wait: whose event has
** been waited for). NOT_READY leaves a use pending. */
static int settle_pending(lt_cuda_alloc *a, bool wait) {
  const lt_cu_driver *d = a->drv;
  use **pp = &a->pending;
  while (*pp) {
    use *u = *pp;
    lt_cu_result r = u->event ? (wait ? d->event_synchronize(u->event) : d->event_query(u->event))
                              : (wait ? d->stream_synchronize(u->stream) : d->stream_query(u->stream));
    if (r == LT_CU_ERROR_NOT_READY) { pp = &u->next; continue; }
    if (r != LT_CU_SUCCESS)
      return lt_error("cuda: %s the event that guards a freed block on cuda:%d failed: %s",
                      wait ? "waiting for" : "querying", a->dev, lt_cu_result_name(r));
    *pp = u->next;
    use_done(a, u);
  }
  return 0;
}

/* b was handed out and used on other streams: record an event on each, and
** keep b out of the cache until they complete */
static void free_with_uses(lt_cuda_alloc *a, block *b) {
  b->state = PENDING;
  use *u = b->uses, *next;
  b->uses = NULL;
  for (; u; u = next) {
    next = u->next;
    u->block = b;
    u->event = NULL;
    lt_cu_event e;
    if (event_get(a, &e) == LT_CU_SUCCESS) {
      if (a->drv->event_record(e, u->stream) == LT_CU_SUCCESS) u->event = e;
      else event_put(a, e);
    }
    /* no event: the use waits for its whole stream instead (stream_query) */
    u->next = a->pending;
    a->pending = u;
    b->event_count++;
  }
}


/* ---- segments: to and from the driver ------------------------------------ */

/* the segment a rounded request of `size` comes from */
static size_t segment_size(size_t size) {
  if (size <= SMALL_SIZE) return SMALL_BUFFER;
  if (size < MIN_LARGE) return LARGE_BUFFER;
  return (size + ROUND_LARGE - 1) & ~(ROUND_LARGE - 1);
}

static lt_cu_result device_alloc(lt_cuda_alloc *a, size_t size, lt_cu_ptr *p) {
  a->capped = a->allowed &&
              (size_t)a->st.reserved_bytes[LT_CUDA_POOL_ALL].current + size > a->allowed;
  if (a->capped) return LT_CU_ERROR_OUT_OF_MEMORY;
  ctx_guard g;
  lt_cu_result r = ctx_enter(a, &g);
  if (r == LT_CU_SUCCESS) r = a->drv->mem_alloc(p, size);
  ctx_leave(a, &g);
  return r;
}

/* give a cached, unsplit segment back to the driver */
static int release_segment(lt_cuda_alloc *a, block *b) {
  pool_remove(a, b);
  ctx_guard g;
  lt_cu_result r = ctx_enter(a, &g);
  if (r == LT_CU_SUCCESS) r = a->drv->mem_free(b->ptr);
  ctx_leave(a, &g);
  if (r != LT_CU_SUCCESS) {
    pool_insert(a, b);
    char s[32];
    return lt_error("cuda: giving a %s segment of cuda:%d back to the driver failed: %s",
                    fmt_size(s, sizeof s, b->size), a->dev, lt_cu_result_name(r));
  }
  count_segment(a, b, -1);
  a->st.num_device_free++;
  block_put(a, b);
  return 0;
}

/* the cached unsplit segments under t: the smallest with at least need bytes,
** and the largest */
static void scan_unsplit(block *t, size_t need, block **fit, block **largest) {
  for (; t; t = t->right) {
    scan_unsplit(t->left, need, fit, largest);
    if (is_split(t)) continue;
    if (t->size >= need && (!*fit || t->size < (*fit)->size)) *fit = t;
    if (!*largest || t->size > (*largest)->size) *largest = t;
  }
}

/* First retry: release the smallest cached unsplit segment of at least need
** bytes, or else the largest ones until need bytes are released. Returns how
** many were released, -1 on a driver failure. */
static int release_some(lt_cuda_alloc *a, size_t need) {
  int n = 0;
  size_t freed = 0;
  while (freed < need) {
    block *fit = NULL, *largest = NULL;
    scan_unsplit(a->small_root, need - freed, &fit, &largest);
    scan_unsplit(a->large_root, need - freed, &fit, &largest);
    block *b = fit ? fit : largest;
    if (!b) break;
    size_t size = b->size;
    if (release_segment(a, b) < 0) return -1;
    n++;
    freed += size;
  }
  return n;
}

static void collect_unsplit(block *t, block **list) {
  for (; t; t = t->right) {
    collect_unsplit(t->left, list);
    if (!is_split(t)) { t->link = *list; *list = t; }
  }
}

/* Second retry, and empty_cache: wait for the pending events, then release
** every cached unsplit segment. */
static int release_all(lt_cuda_alloc *a) {
  if (a->pending) {
    a->st.num_sync_all_streams++;
    if (settle_pending(a, true) < 0) return -1;
  }
  block *list = NULL;
  collect_unsplit(a->small_root, &list);
  collect_unsplit(a->large_root, &list);
  int rc = 0;
  for (block *b = list, *next; b; b = next) {
    next = b->link;
    if (release_segment(a, b) < 0) rc = -1;
  }
  return rc;
}

static int out_of_memory(lt_cuda_alloc *a, size_t nbytes, size_t seg) {
  char req[32], sg[48] = "", res[32], al[32], fr[32], tot[32], cap[96] = "", info[96];
  const lt_cuda_memory_stats *st = &a->st;
  a->st.num_ooms++;
  fmt_size(req, sizeof req, nbytes);
  if (seg != nbytes) {
    char s[32];
    snprintf(sg, sizeof sg, " (a %s segment)", fmt_size(s, sizeof s, seg));
  }
  if (a->capped) {
    char s[32];
    snprintf(cap, sizeof cap, ": the memory fraction %g caps reserved memory at %s",
             a->fraction, fmt_size(s, sizeof s, a->allowed));
  }
  size_t free_b = 0, total_b = 0;
  ctx_guard g;
  lt_cu_result r = ctx_enter(a, &g);
  if (r == LT_CU_SUCCESS) r = a->drv->mem_get_info(&free_b, &total_b);
  ctx_leave(a, &g);
  if (r == LT_CU_SUCCESS)
    snprintf(info, sizeof info, "free %s of %s", fmt_size(fr, sizeof fr, free_b),
             fmt_size(tot, sizeof tot, total_b));
  else
    snprintf(info, sizeof info, "free memory unknown: mem_get_info failed: %s", lt_cu_result_name(r));
  return lt_error("cuda: out of memory allocating %s%s on cuda:%d%s (reserved %s, allocated %s, %s)",
                  req, sg, a->dev, cap,
                  fmt_size(res, sizeof res, (size_t)st->reserved_bytes[LT_CUDA_POOL_ALL].current),
                  fmt_size(al, sizeof al, (size_t)st->allocated_bytes[LT_CUDA_POOL_ALL].current),
                  info);
}

/* a new segment for a rounded request of `size`, with the retries of alloc.h */
static block *new_segment(lt_cuda_alloc *a, size_t nbytes, size_t size, lt_cu_stream stream) {
  size_t seg = segment_size(size);
  lt_cu_ptr p = 0;
  lt_cu_result r = device_alloc(a, seg, &p);
  if (r == LT_CU_ERROR_OUT_OF_MEMORY) {
    int n = release_some(a, seg);
    if (n < 0) return NULL;
    if (n > 0) r = device_alloc(a, seg, &p);
  }
  if (r == LT_CU_ERROR_OUT_OF_MEMORY) {
    if (release_all(a) < 0) return NULL;
    a->st.num_alloc_retries++;
    r = device_alloc(a, seg, &p);
  }
  if (r == LT_CU_ERROR_OUT_OF_MEMORY) { out_of_memory(a, nbytes, seg); return NULL; }
  if (r != LT_CU_SUCCESS) {
    char s[32];
    lt_error("cuda: allocating a %s segment on cuda:%d failed: %s", fmt_size(s, sizeof s, seg),
             a->dev, lt_cu_result_name(r));
    return NULL;
  }
  block *b = block_take(a);
  b->ptr = p;
  b->size = seg;
  b->stream = stream;
  b->small = size <= SMALL_SIZE;
  count_segment(a, b, 1);
  a->st.num_device_alloc++;
  return b;
}


/* ---- the public face ------------------------------------------------------ */

lt_cuda_alloc *lt_cuda_alloc_new(const lt_cu_driver *drv, int dev) {
  size_t total = 0;
  lt_cu_ctx ctx = NULL;
  lt_cu_result r = drv->device_total_mem(&total, dev);
  if (r != LT_CU_SUCCESS)
    return lt_error_null("cuda: the caching allocator of cuda:%d: device_total_mem failed: %s",
                         dev, lt_cu_result_name(r));
  r = drv->primary_ctx_retain(&ctx, dev);
  if (r != LT_CU_SUCCESS)
    return lt_error_null("cuda: the caching allocator of cuda:%d: primary_ctx_retain failed: %s",
                         dev, lt_cu_result_name(r));
  lt_cuda_alloc *a = calloc(1, sizeof *a);
  if (!a) {
    drv->primary_ctx_release(dev);
    return lt_error_null("cuda: out of host memory for the caching allocator of cuda:%d", dev);
  }
  pthread_mutex_init(&a->lock, NULL);
  a->drv = drv;
  a->dev = dev;
  a->ctx = ctx;
  a->total_mem = total;
  a->seed = 0x853c49e6748fea9bull ^ (uint64_t)dev;
  return a;
}

void lt_cuda_alloc_delete(lt_cuda_alloc *a) {
  if (!a) return;
  /* hand everything back to the cache, then release the cache: blocks still
  ** handed out are the caller's leak, but their memory is not the driver's */
  settle_pending(a, true);
  for (size_t i = 0; i < a->live_cap; i++) {
    block *b = a->live[i].b;
    if (!b) continue;
    use *u = b->uses, *next;
    for (; u; u = next) { next = u->next; use_put(a, u); }
    b->uses = NULL;
    count_allocated(a, b, -1);
    count_active(a, b, -1);
    free_block(a, b);
  }
  /* uses whose stream never completes: their blocks go back all the same */
  while (a->pending) {
    use *u = a->pending;
    a->pending = u->next;
    use_done(a, u);
  }
  release_all(a);
  ctx_guard g;
  if (ctx_enter(a, &g) == LT_CU_SUCCESS) {
    for (size_t i = 0; i < a->nevents; i++) a->drv->event_destroy(a->events[i]);
    ctx_leave(a, &g);
  }
  a->drv->primary_ctx_release(a->dev);
  free(a->events);
  free(a->live);
  for (chunk *c = a->chunks, *next; c; c = next) { next = c->next; free(c); }
  pthread_mutex_destroy(&a->lock);
  free(a);
}

int lt_cuda_alloc_device(const lt_cuda_alloc *a) { return a->dev; }

int lt_cuda_alloc_malloc(lt_cuda_alloc *a, size_t nbytes, lt_cu_stream stream, lt_cu_ptr *out) {
  *out = 0;
  if (nbytes == 0) return 0;
  pthread_mutex_lock(&a->lock);
  int rc = -1;
  a->st.num_allocs++;
  if (nbytes > MAX_REQUEST) {
    a->capped = false;
    out_of_memory(a, nbytes, nbytes);
    goto done;
  }
  if (a->pending && settle_pending(a, false) < 0) goto done;
  if (reserve_records(a, 2, 0) < 0 || live_reserve(a) < 0) goto done;
  size_t size = nbytes < MIN_BLOCK ? MIN_BLOCK : (nbytes + MIN_BLOCK - 1) & ~(MIN_BLOCK - 1);
  bool small = size <= SMALL_SIZE;
  block *b = best_fit(small ? a->small_root : a->large_root, stream, size);
  if (b) {
    pool_remove(a, b);
    a->st.cache_hits++;
  } else if (!(b = new_segment(a, nbytes, size, stream))) {
    goto done;
  }
  size_t rest = b->size - size;
  if (small ? rest >= MIN_BLOCK : rest > SMALL_SIZE) {   /* split off the rest */
    block *r = block_take(a);
    r->ptr = b->ptr + size;
    r->size = rest;
    r->stream = stream;
    r->small = b->small;
    r->prev = b;
    r->next = b->next;
    if (b->next) b->next->prev = r;
    b->next = r;
    b->size = size;
    pool_insert(a, r);
  }
  b->state = ALLOCATED;
  b->requested = nbytes;
  b->uses = NULL;
  live_place(a, b);
  count_allocated(a, b, 1);
  count_active(a, b, 1);
  *out = b->ptr;
  rc = 0;
done:
  pthread_mutex_unlock(&a->lock);
  return rc;
}

int lt_cuda_alloc_free(lt_cuda_alloc *a, lt_cu_ptr p) {
  if (!p) return 0;
  pthread_mutex_lock(&a->lock);
  size_t i = live_find(a, p);
  if (i == a->live_cap) {
    pthread_mutex_unlock(&a->lock);
    return lt_error("cuda: freeing device memory at 0x%llx, which the caching allocator of "
                    "cuda:%d did not hand out (or has had back already)", p, a->dev);
  }
  block *b = a->live[i].b;
  live_delete(a, i);
  count_allocated(a, b, -1);
  if (b->uses) free_with_uses(a, b);
  else {
    count_active(a, b, -1);
    free_block(a, b);
  }
  pthread_mutex_unlock(&a->lock);
  return 0;
}

int lt_cuda_alloc_record_stream(lt_cuda_alloc *a, lt_cu_ptr p, lt_cu_stream stream) {
  pthread_mutex_lock(&a->lock);
  int rc = 0;
  size_t i = live_find(a, p);
  if (i == a->live_cap) {
    rc = lt_error("cuda: record_stream: 0x%llx is not device memory the caching allocator of "
                  "cuda:%d handed out", p, a->dev);
    goto done;
  }
  block *b = a->live[i].b;
  if (stream == b->stream) goto done;
  for (use *u = b->uses; u; u = u->next)
    if (u->stream == stream) goto done;
  if ((rc = reserve_records(a, 0, 1)) < 0) goto done;
  use *u = a->spare_uses;
  a->spare_uses = u->next;
  u->stream = stream;
  u->event = NULL;
  u->block = b;
  u->next = b->uses;
  b->uses = u;
done:
  pthread_mutex_unlock(&a->lock);
  return rc;
}

size_t lt_cuda_alloc_block_size(lt_cuda_alloc *a, lt_cu_ptr p) {
  pthread_mutex_lock(&a->lock);
  size_t i = live_find(a, p), n = i == a->live_cap ? 0 : a->live[i].b->size;
  pthread_mutex_unlock(&a->lock);
  return n;
}

int lt_cuda_alloc_empty_cache(lt_cuda_alloc *a) {
  pthread_mutex_lock(&a->lock);
  int rc = release_all(a);
  pthread_mutex_unlock(&a->lock);
  return rc;
}

int lt_cuda_alloc_set_memory_fraction(lt_cuda_alloc *a, double fraction) {
  if (!(fraction > 0 && fraction <= 1))
    return lt_error("cuda: set_per_process_memory_fraction: fraction must be in (0, 1], got %g",
                    fraction);
  pthread_mutex_lock(&a->lock);
  a->fraction = fraction;
  a->allowed = (size_t)(fraction * (double)a->total_mem);
  a->st.allowed_bytes = (int64_t)a->allowed;
  pthread_mutex_unlock(&a->lock);
  return 0;
}

void lt_cuda_alloc_stats(lt_cuda_alloc *a, lt_cuda_memory_stats *out) {
  pthread_mutex_lock(&a->lock);
  *out = a->st;
  pthread_mutex_unlock(&a->lock);
}

void lt_cuda_alloc_memory_stats(lt_cuda_alloc *a, lt_memory_stats *out) {
  pthread_mutex_lock(&a->lock);
  const lt_cuda_memory_stats *st = &a->st;
  out->allocated = st->allocated_bytes[LT_CUDA_POOL_ALL].current;
  out->cached = st->reserved_bytes[LT_CUDA_POOL_ALL].current - out->allocated;
  out->peak = st->allocated_bytes[LT_CUDA_POOL_ALL].peak;
  out->num_allocs = st->num_allocs;
  out->cache_hits = st->cache_hits;
  pthread_mutex_unlock(&a->lock);
}

/* every lt_cuda_stat of the struct, in order */
#define STAT_ARRAYS 9
static lt_cuda_stat *stat_array(lt_cuda_memory_stats *st, int k) {
  lt_cuda_stat *all[STAT_ARRAYS] = {
    st->allocation, st->segment, st->active, st->inactive_split, st->allocated_bytes,
    st->reserved_bytes, st->active_bytes, st->inactive_split_bytes, st->requested_bytes,
  };
  return all[k];
}

void lt_cuda_alloc_reset_peak(lt_cuda_alloc *a) {
  pthread_mutex_lock(&a->lock);
  for (int k = 0; k < STAT_ARRAYS; k++)
    for (int t = 0; t < LT_CUDA_POOL_KINDS; t++) {
      lt_cuda_stat *s = &stat_array(&a->st, k)[t];
      s->peak = s->current;
    }
  pthread_mutex_unlock(&a->lock);
}

void lt_cuda_alloc_reset_accumulated(lt_cuda_alloc *a) {
  pthread_mutex_lock(&a->lock);
  for (int k = 0; k < STAT_ARRAYS; k++)
    for (int t = 0; t < LT_CUDA_POOL_KINDS; t++) {
      lt_cuda_stat *s = &stat_array(&a->st, k)[t];
      s->allocated = s->freed = 0;
    }
  lt_cuda_memory_stats *st = &a->st;
  st->num_alloc_retries = st->num_ooms = st->num_sync_all_streams = 0;
  st->num_device_alloc = st->num_device_free = st->num_allocs = st->cache_hits = 0;
  pthread_mutex_unlock(&a->lock);
}


/* ---- the consistency check ----------------------------------------------- */

typedef struct {
  lt_cuda_alloc *a;
  block **heads;                /* each segment's first block, once */
  size_t nheads, cap;
  int64_t cur[STAT_ARRAYS][LT_CUDA_POOL_KINDS];
  const char *bad;
} checker;

static void add_head(checker *c, block *b) {
  while (b->prev) b = b->prev;
  for (size_t i = 0; i < c->nheads; i++)
    if (c->heads[i] == b) return;
  if (c->nheads == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 64;
    block **h = realloc(c->heads, cap * sizeof *h);
    if (!h) { c->bad = "out of host memory"; return; }
    c->heads = h;
    c->cap = cap;
  }
  c->heads[c->nheads++] = b;
}

/* in order, priorities a heap, every block FREE and of the pool; returns the
** last block visited */
static block *check_tree(checker *c, block *t, bool small, block *last, int depth) {
  for (; t && !c->bad; t = t->right) {
    if (depth > 10000) { c->bad = "a pool's tree is too deep"; return last; }
    last = check_tree(c, t->left, small, last, depth + 1);
    if (t->state != FREE) c->bad = "a block in a pool is not free";
    if (t->small != small) c->bad = "a block is in the other pool";
    if (last && !before(last, t)) c->bad = "a pool's tree is out of order";
    if ((t->left && t->left->prio > t->prio) || (t->right && t->right->prio > t->prio))
      c->bad = "a pool's tree breaks the heap order";
    last = t;
    add_head(c, t);
    depth++;
  }
  return last;
}

static bool in_tree(block *t, block *b) {
  while (t && t != b) t = before(b, t) ? t->left : t->right;
  return t == b;
}

int lt_cuda_alloc_check(lt_cuda_alloc *a) {
  pthread_mutex_lock(&a->lock);
  checker c = {.a = a};
  check_tree(&c, a->small_root, true, NULL, 0);
  check_tree(&c, a->large_root, false, NULL, 0);
  size_t nlive = 0;
  for (size_t i = 0; i < a->live_cap && !c.bad; i++) {
    block *b = a->live[i].b;
    if (!a->live[i].key) { if (b) c.bad = "an empty slot holds a block"; continue; }
    nlive++;
    if (b->ptr != a->live[i].key) c.bad = "a live slot's key is not its block's address";
    else if (b->state != ALLOCATED) c.bad = "a block handed out is not marked so";
    else if (live_find(a, b->ptr) != i) c.bad = "a live block cannot be found by its address";
    add_head(&c, b);
  }
  if (!c.bad && nlive != a->live_count) c.bad = "the live table's count is wrong";
  for (use *u = a->pending; u && !c.bad; u = u->next) {
    if (u->block->state != PENDING) c.bad = "a pending use's block is not pending";
    add_head(&c, u->block);
  }
  for (size_t h = 0; h < c.nheads && !c.bad; h++) {
    block *head = c.heads[h];
    size_t seg = 0;
    for (block *b = head; b && !c.bad; b = b->next) {
      int k = b->small ? LT_CUDA_POOL_SMALL : LT_CUDA_POOL_LARGE;
      seg += b->size;
      if (b->size == 0 || b->size % MIN_BLOCK) c.bad = "a block's size is not a multiple of 512";
      if (b->next && b->next->prev != b) c.bad = "a segment's links disagree";
      if (b->next && b->ptr + b->size != b->next->ptr) c.bad = "a segment's blocks are not contiguous";
      if (b->next && (b->next->stream != b->stream || b->next->small != b->small))
        c.bad = "a segment's blocks differ in stream or pool";
      if (b->next && b->state == FREE && b->next->state == FREE) c.bad = "two free neighbours were not merged";
      if (b->state == FREE && !in_tree(*pool_of(a, b), b)) c.bad = "a free block is not in its pool";
      if (b->state == ALLOCATED && live_find(a, b->ptr) == a->live_cap) c.bad = "a block handed out is not in the live table";
      if (b->state == PENDING) {
        int n = 0;
        for (use *u = a->pending; u; u = u->next) n += u->block == b;
        if (n != b->event_count || n == 0) c.bad = "a pending block's event count is wrong";
      }
      for (int t = 0; t < 2; t++) {
        int kind = t ? k : LT_CUDA_POOL_ALL;
        if (b->state == ALLOCATED) {
          c.cur[0][kind] += 1;
          c.cur[4][kind] += (int64_t)b->size;
          c.cur[8][kind] += (int64_t)b->requested;
        }
        if (b->state != FREE) { c.cur[2][kind] += 1; c.cur[6][kind] += (int64_t)b->size; }
        if (b->state == FREE && is_split(b)) { c.cur[3][kind] += 1; c.cur[7][kind] += (int64_t)b->size; }
      }
    }
    for (int t = 0; t < 2; t++) {
      int kind = t ? (head->small ? LT_CUDA_POOL_SMALL : LT_CUDA_POOL_LARGE) : LT_CUDA_POOL_ALL;
      c.cur[1][kind] += 1;
      c.cur[5][kind] += (int64_t)seg;
    }
  }
  static const char *names[STAT_ARRAYS] = {
    "allocation", "segment", "active", "inactive_split", "allocated_bytes", "reserved_bytes",
    "active_bytes", "inactive_split_bytes", "requested_bytes",
  };
  char msg[160];
  for (int k = 0; k < STAT_ARRAYS && !c.bad; k++)
    for (int t = 0; t < LT_CUDA_POOL_KINDS && !c.bad; t++) {
      int64_t have = stat_array(&a->st, k)[t].current;
      if (have != c.cur[k][t]) {
        snprintf(msg, sizeof msg, "statistic %s[%d] is %lld, the blocks say %lld", names[k], t,
                 (long long)have, (long long)c.cur[k][t]);
        c.bad = msg;
      }
    }
  free(c.heads);
  int rc = c.bad ? lt_error("cuda: caching allocator of cuda:%d is inconsistent: %s", a->dev, c.bad) : 0;
  pthread_mutex_unlock(&a->lock);
  return rc;
}
