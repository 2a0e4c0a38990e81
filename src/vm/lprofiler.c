/*
** lprofiler.c — the C half of torch.profiler (the API is src/vm/lua/profiler.lua):
** the clock, one event buffer and one stack of open ranges per thread, and the
** hooks that fill them while a session records: the dispatcher's (every op,
** with its inputs' shapes and dtypes and the Lua stack when asked), the
** autograd engine's (each backward node's apply), the storage allocator's
** (allocations and frees with their bytes, device and the live total),
** record_function ranges pushed from Lua, and events added from Lua
** (DataLoader fetches and workers, CUDA kernels read back from CUDA events).
**
** Off, nothing of this runs: the hooks are NULL function pointers and the
** dispatcher's Profile key is not in any keyset. On, each thread appends to
** its own buffer under its own (uncontended) lock, so the allocator hook may
** run on any thread; collecting takes every buffer's lock in turn.
**
** Nesting: an event is opened (enter) and closed (exit) on its thread's stack,
** so every event records its parent, and parents' intervals contain their
** children's. Ops are seen on the thread that started the session only (see
** lt_dispatch_set_hook); memory events on every thread.
*/
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "lutorch_vm.h"
#include "autograd/autograd.h"
#include "core/backend.h"
#include "lt_ops.h"

enum { EV_OP, EV_BACKWARD, EV_RANGE, EV_MEMORY, EV_EXTERNAL };
static const char *const kind_names[] = { "op", "backward", "user_annotation", "memory", "external" };

#define MAX_DEPTH 256
#define MAX_FRAMES 32

typedef struct pf_event {
  const char *name;       /* static (op and node names) unless owns_name */
  char *shapes;           /* "[[2, 3], []]" with record_shapes; owned */
  char *dtypes;           /* "[float32, None]": inside shapes' allocation */
  char *stack;            /* frames "file:line function" separated by '\n'; owned */
  int64_t t0, t1;         /* ns, CLOCK_MONOTONIC */
  int64_t self_mem;       /* bytes allocated minus freed while this was the innermost event */
  int64_t bytes, total;   /* memory events: the change and the device's live total after it */
  uint64_t seq0, seq1;    /* ops: autograd node seq before and after (nodes made: [seq0, seq1)) */
  uint64_t seq;           /* backward: the node's seq */
  int64_t id, parent;     /* parent: the enclosing event's id, -1 at top level */
  uintptr_t addr;         /* memory events: the storage */
  long ext_pid, ext_tid;  /* external events: where they ran (0: here) */
  int op;                 /* op id, -1 for others */
  int depth;
  int kind;
  int dev_type, dev_index;
  bool owns_name;
} pf_event;

typedef struct pf_thread {
  pthread_mutex_t mu;
  pf_event *ev;
  size_t n, cap;
  int64_t open[MAX_DEPTH];    /* indices into ev of the open events */
  int depth;                  /* may exceed MAX_DEPTH: deeper events are not recorded */
  long tid;
  struct pf_thread *next;
} pf_thread;

/* the session */
static pthread_mutex_t threads_mu = PTHREAD_MUTEX_INITIALIZER;
static pf_thread *threads = NULL;
static atomic_uint session = 0;         /* bumped at each start: threads re-register */
static atomic_bool recording = false;
static atomic_llong next_id = 0;
static bool opt_shapes, opt_memory, opt_stack;
static lua_State *stack_state = NULL;   /* the state whose stack with_stack reads */
static pthread_t owner;                 /* the thread that started the session */
#define MAX_DEVICES 16
static atomic_llong live[2][MAX_DEVICES];

static _Thread_local pf_thread *tls_thread = NULL;
static _Thread_local unsigned tls_session = 0;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* this thread's buffer in the current session, made on first use */
static pf_thread *this_thread(void) {
  unsigned s = atomic_load_explicit(&session, memory_order_acquire);
  if (tls_thread && tls_session == s) return tls_thread;
  pf_thread *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  pthread_mutex_init(&t->mu, NULL);
  t->tid = (long)syscall(SYS_gettid);
  pthread_mutex_lock(&threads_mu);
  t->next = threads;
  threads = t;
  pthread_mutex_unlock(&threads_mu);
  tls_thread = t;
  tls_session = s;
  return t;
}

/* a new event at the end of t's buffer (t->mu held); NULL when out of memory */
static pf_event *append(pf_thread *t, int kind, const char *name) {
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 1024;
    pf_event *ev = realloc(t->ev, cap * sizeof *ev);
    if (!ev) return NULL;
    t->ev = ev;
    t->cap = cap;
  }
  pf_event *e = &t->ev[t->n++];
  memset(e, 0, sizeof *e);
  e->kind = kind;
  e->name = name;
  e->op = -1;
  e->id = atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed);
  e->parent = (t->depth > 0 && t->depth <= MAX_DEPTH) ? t->ev[t->open[t->depth - 1]].id : -1;
  e->depth = t->depth;
  e->dev_type = -1;
  return e;
}

/* open an event on this thread's stack; returns it (t->mu held) or NULL */
static pf_event *enter(pf_thread *t, int kind, const char *name) {
  if (t->depth >= MAX_DEPTH) { t->depth++; return NULL; }
  pf_event *e = append(t, kind, name);
  if (!e) return NULL;
  t->open[t->depth++] = (int64_t)(e - t->ev);
  return e;
}

static pf_event *leave(pf_thread *t) {
  if (t->depth <= 0) return NULL;
  t->depth--;
  if (t->depth >= MAX_DEPTH) return NULL;
  pf_event *e = &t->ev[t->open[t->depth]];
  e->t1 = now_ns();
  return e;
}

/* ---- what record_shapes and with_stack keep ---- */

typedef struct strbuf { char *s; size_t n, cap; } strbuf;
static void sb_add(strbuf *b, const char *s, size_t len) {
  if (b->n + len + 1 > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 64;
    while (cap < b->n + len + 1) cap *= 2;
    char *p = realloc(b->s, cap);
    if (!p) return;
    b->s = p;
    b->cap = cap;
  }
  memcpy(b->s + b->n, s, len);
  b->n += len;
  b->s[b->n] = 0;
}

/* appending to a fixed buffer, truncating (no snprintf: this runs at every op) */
typedef struct fixbuf { char *s; size_t n, cap; } fixbuf;
static void fb_str(fixbuf *b, const char *s) {
  while (*s && b->n + 1 < b->cap) b->s[b->n++] = *s++;
  b->s[b->n] = 0;
}
static void fb_int(fixbuf *b, int64_t v) {
  char tmp[24];
  int k = 0;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do { tmp[k++] = (char)('0' + u % 10); u /= 10; } while (u);
  if (v < 0) tmp[k++] = '-';
  while (k > 0 && b->n + 1 < b->cap) b->s[b->n++] = tmp[--k];
  b->s[b->n] = 0;
}

/* "[[2, 3], []]" and "[float32, None]" in one allocation (dtypes points into
** shapes' block), built on the stack first */
static void record_inputs(pf_event *e, const lt_tensor *const *in, int n) {
  char shb[1024], dtb[512];
  fixbuf sh = { shb, 0, sizeof shb }, dt = { dtb, 0, sizeof dtb };
  fb_str(&sh, "[");
  fb_str(&dt, "[");
  for (int i = 0; i < n; i++) {
    const lt_tensor *x = in[i];
    fb_str(&sh, i ? ", [" : "[");
    for (int d = 0; x && d < x->ndim; d++) {
      if (d) fb_str(&sh, ", ");
      fb_int(&sh, x->sizes[d]);
    }
    fb_str(&sh, "]");
    if (i) fb_str(&dt, ", ");
    fb_str(&dt, x ? lt_dtype_name(x->dtype) : "None");
  }
  fb_str(&sh, "]");
  fb_str(&dt, "]");
  char *block = malloc(sh.n + dt.n + 2);
  if (!block) return;
  memcpy(block, shb, sh.n + 1);
  memcpy(block + sh.n + 1, dtb, dt.n + 1);
  e->shapes = block;
  e->dtypes = block + sh.n + 1;
}

/* the Lua frames of the state that started the session, innermost first */
static char *lua_stack(void) {
  lua_State *L = stack_state;
  if (!L || !pthread_equal(pthread_self(), owner)) return NULL;
  strbuf b = {0};
  lua_Debug ar;
  int frames = 0;
  for (int level = 0; frames < MAX_FRAMES && lua_getstack(L, level, &ar); level++) {
    if (!lua_getinfo(L, "Sln", &ar) || ar.currentline <= 0) continue;   /* C functions */
    if (strstr(ar.short_src, "vm/lua/profiler.lua")) continue;          /* the API's own frames */
    char line[512];
    int k = snprintf(line, sizeof line, "%s%s:%d %s", frames ? "\n" : "", ar.short_src, ar.currentline,
                     ar.name ? ar.name : (*ar.what == 'm' ? "main chunk" : "?"));
    sb_add(&b, line, (size_t)(k < (int)sizeof line ? k : (int)sizeof line - 1));
    frames++;
  }
  return b.s;
}

/* ---- the hooks ---- */

static void op_hook(void *ud, int op, int phase, const lt_tensor *const *in, int n) {
  (void)ud;
  pf_thread *t = this_thread();
  if (!t) return;
  pthread_mutex_lock(&t->mu);
  if (phase == 0) {
    pf_event *e = enter(t, EV_OP, lt_op_table[op].name);
    if (e) {
      e->op = op;
      if (opt_shapes) record_inputs(e, in, n);
      if (opt_stack) e->stack = lua_stack();
      e->seq0 = lt_node_seq_peek();
      e->t0 = now_ns();     /* last: the recording itself is not the op's time */
    }
  } else {
    pf_event *e = leave(t);
    if (e) e->seq1 = lt_node_seq_peek();
  }
  pthread_mutex_unlock(&t->mu);
}

static void node_hook(const lt_node *nd, int phase) {
  pf_thread *t = this_thread();
  if (!t) return;
  pthread_mutex_lock(&t->mu);
  if (phase == 0) {
    pf_event *e = enter(t, EV_BACKWARD, nd->ops->name);
    if (e) { e->seq = nd->seq; e->t0 = now_ns(); }
  } else {
    leave(t);
  }
  pthread_mutex_unlock(&t->mu);
}

static void storage_hook(const lt_storage *s, int64_t delta) {
  int type = s->device.type == LT_DEV_CUDA ? 1 : 0;
  int index = s->device.index >= 0 && s->device.index < MAX_DEVICES ? s->device.index : 0;
  int64_t total = atomic_fetch_add_explicit(&live[type][index], delta, memory_order_relaxed) + delta;
  pf_thread *t = this_thread();
  if (!t) return;
  pthread_mutex_lock(&t->mu);
  /* the innermost open event on this thread owns the change */
  if (t->depth > 0 && t->depth <= MAX_DEPTH) t->ev[t->open[t->depth - 1]].self_mem += delta;
  pf_event *e = append(t, EV_MEMORY, "[memory]");
  if (e) {
    e->t0 = e->t1 = now_ns();
    e->bytes = delta;
    e->total = total;
    e->dev_type = s->device.type;
    e->dev_index = s->device.index < 0 ? 0 : s->device.index;
    e->addr = (uintptr_t)s->data;
  }
  pthread_mutex_unlock(&t->mu);
}

/* ---- sessions ---- */

static void free_events(pf_thread *t) {
  for (size_t i = 0; i < t->n; i++) {
    pf_event *e = &t->ev[i];
    if (e->owns_name) free((char *)e->name);
    free(e->shapes);
    free(e->stack);
  }
  t->n = 0;
}

/* drop the recorded events; the open ones stay open (their parents' ids are gone) */
static void clear_events(void) {
  pthread_mutex_lock(&threads_mu);
  for (pf_thread *t = threads; t; t = t->next) {
    pthread_mutex_lock(&t->mu);
    /* keep the open events: move them to the front */
    pf_event keep[MAX_DEPTH];
    int nk = t->depth < MAX_DEPTH ? t->depth : MAX_DEPTH;
    for (int k = 0; k < nk; k++) {
      pf_event *e = &t->ev[t->open[k]];
      keep[k] = *e;
      e->owns_name = false;     /* what it owns moves with the copy */
      e->shapes = e->dtypes = e->stack = NULL;
    }
    free_events(t);
    for (int k = 0; k < nk; k++) { t->ev[k] = keep[k]; t->open[k] = k; }
    t->n = (size_t)nk;
    pthread_mutex_unlock(&t->mu);
  }
  pthread_mutex_unlock(&threads_mu);
}

static void free_threads(void) {
  pthread_mutex_lock(&threads_mu);
  pf_thread *t = threads;
  threads = NULL;
  pthread_mutex_unlock(&threads_mu);
  while (t) {
    pf_thread *next = t->next;
    pthread_mutex_lock(&t->mu);
    free_events(t);
    free(t->ev);
    pthread_mutex_unlock(&t->mu);
    pthread_mutex_destroy(&t->mu);
    free(t);
    t = next;
  }
}

static bool opt(lua_State *L, const char *name) {
  lua_getfield(L, 1, name);
  bool v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

/* _start{record_shapes=, profile_memory=, with_stack=}: the hooks on */
static int l_start(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  if (atomic_load(&recording) || lt_dispatch_hook)
    return luaL_error(L, "profiler: a profiler is already running");
  free_threads();
  opt_shapes = opt(L, "record_shapes");
  opt_memory = opt(L, "profile_memory");
  opt_stack = opt(L, "with_stack");
  lua_State *main;
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  main = lua_tothread(L, -1);
  lua_pop(L, 1);
  stack_state = main ? main : L;
  owner = pthread_self();
  for (int i = 0; i < 2; i++)
    for (int d = 0; d < MAX_DEVICES; d++) atomic_store(&live[i][d], 0);
  atomic_fetch_add(&session, 1);
  atomic_store(&recording, true);
  lt_dispatch_set_hook(op_hook, NULL);
  lt_autograd_node_hook = node_hook;
  if (opt_memory) lt_storage_trace_hook = storage_hook;
  lua_pushinteger(L, now_ns());
  return 1;
}

/* _stop(): the hooks off; the events stay until collected */
static int l_stop(lua_State *L) {
  (void)L;
  if (!atomic_load(&recording)) return 0;
  lt_storage_trace_hook = NULL;
  lt_autograd_node_hook = NULL;
  lt_dispatch_set_hook(NULL, NULL);
  atomic_store(&recording, false);
  stack_state = NULL;
  return 0;
}

static int l_recording(lua_State *L) {
  lua_pushboolean(L, atomic_load_explicit(&recording, memory_order_relaxed));
  return 1;
}

static int l_clear(lua_State *L) {
  (void)L;
  clear_events();
  return 0;
}

/* _range_push(name) / _range_pop(): a record_function range on this thread */
static int l_range_push(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  if (!atomic_load_explicit(&recording, memory_order_relaxed)) return 0;
  pf_thread *t = this_thread();
  if (!t) return 0;
  char *own = strdup(name);
  if (!own) return luaL_error(L, "record_function: out of memory");
  pthread_mutex_lock(&t->mu);
  pf_event *e = enter(t, EV_RANGE, own);
  if (e) {
    e->owns_name = true;
    if (opt_stack) e->stack = lua_stack();
    e->t0 = now_ns();
  } else {
    free(own);
  }
  pthread_mutex_unlock(&t->mu);
  return 0;
}

static int l_range_pop(lua_State *L) {
  (void)L;
  if (!atomic_load_explicit(&recording, memory_order_relaxed)) return 0;
  pf_thread *t = this_thread();
  if (!t) return 0;
  pthread_mutex_lock(&t->mu);
  /* a range closes the ops left open inside it too (none should be) */
  while (t->depth > 0) {
    int d = t->depth - 1;
    bool range = d >= MAX_DEPTH || t->ev[t->open[d]].kind == EV_RANGE;
    leave(t);
    if (range) break;
  }
  pthread_mutex_unlock(&t->mu);
  return 0;
}

/* _add_event{name=, t0=, t1= (ns, this machine's monotonic clock), tid=, pid=,
** kind = "external"}: an event measured elsewhere (a DataLoader worker, a CUDA
** stream); it nests under nothing */
static int l_add_event(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  if (!atomic_load_explicit(&recording, memory_order_relaxed)) return 0;
  lua_getfield(L, 1, "name");
  char *own = strdup(luaL_checkstring(L, -1));
  lua_pop(L, 1);
  if (!own) return luaL_error(L, "profiler: out of memory");
  pf_thread *t = this_thread();
  if (!t) { free(own); return 0; }
  lua_getfield(L, 1, "t0"); int64_t t0 = (int64_t)luaL_checkinteger(L, -1); lua_pop(L, 1);
  lua_getfield(L, 1, "t1"); int64_t t1 = (int64_t)luaL_checkinteger(L, -1); lua_pop(L, 1);
  lua_getfield(L, 1, "pid"); long epid = (long)luaL_optinteger(L, -1, 0); lua_pop(L, 1);
  lua_getfield(L, 1, "tid"); long etid = (long)luaL_optinteger(L, -1, 0); lua_pop(L, 1);
  pthread_mutex_lock(&t->mu);
  pf_event *e = append(t, EV_EXTERNAL, own);
  if (e) {
    e->owns_name = true;
    e->t0 = t0;
    e->t1 = t1;
    e->parent = -1;
    e->depth = 0;
    e->ext_pid = epid;
    e->ext_tid = etid;
  } else {
    free(own);
  }
  pthread_mutex_unlock(&t->mu);
  lua_pushinteger(L, e ? e->id : -1);
  return 1;
}

static void set_int(lua_State *L, const char *k, int64_t v) { lua_pushinteger(L, v); lua_setfield(L, -2, k); }
static void set_str(lua_State *L, const char *k, const char *v) {
  if (v) { lua_pushstring(L, v); lua_setfield(L, -2, k); }
}

static void push_stack(lua_State *L, const char *s) {
  lua_newtable(L);
  int i = 0;
  while (s && *s) {
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    lua_pushlstring(L, s, len);
    lua_rawseti(L, -2, ++i);
    s += len + (nl ? 1 : 0);
  }
}

/* _collect(): every recorded, closed event as a list of tables, and clears
** them (open ones stay for the next collection) */
static int l_collect(lua_State *L) {
  lua_newtable(L);
  int n = 0;
  int pid = (int)getpid();
  pthread_mutex_lock(&threads_mu);
  for (pf_thread *t = threads; t; t = t->next) {
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->n; i++) {
      const pf_event *e = &t->ev[i];
      bool open = false;
      for (int d = 0; d < t->depth && d < MAX_DEPTH; d++) if (t->open[d] == (int64_t)i) open = true;
      if (open) continue;
      lua_createtable(L, 0, 16);
      set_str(L, "name", e->name);
      set_str(L, "kind", kind_names[e->kind]);
      set_int(L, "t0", e->t0);
      set_int(L, "t1", e->t1);
      set_int(L, "id", e->id);
      set_int(L, "parent", e->parent);
      set_int(L, "depth", e->depth);
      set_int(L, "tid", e->ext_tid ? e->ext_tid : t->tid);
      set_int(L, "pid", e->ext_pid ? e->ext_pid : pid);
      if (e->kind == EV_OP || e->kind == EV_BACKWARD || e->kind == EV_RANGE) set_int(L, "self_mem", e->self_mem);
      if (e->kind == EV_OP) {
        set_int(L, "seq0", (int64_t)e->seq0);
        set_int(L, "seq1", (int64_t)e->seq1);
        set_str(L, "input_shapes", e->shapes);
        set_str(L, "input_dtypes", e->dtypes);
      }
      if (e->kind == EV_BACKWARD) set_int(L, "seq", (int64_t)e->seq);
      if (e->kind == EV_MEMORY) {
        set_int(L, "bytes", e->bytes);
        set_int(L, "total", e->total);
        set_str(L, "device_type", lt_device_type_name(e->dev_type));
        set_int(L, "device_index", e->dev_index);
        set_int(L, "addr", (int64_t)e->addr);
      }
      if (e->stack) { push_stack(L, e->stack); lua_setfield(L, -2, "stack"); }
      lua_rawseti(L, -2, ++n);
    }
    pthread_mutex_unlock(&t->mu);
  }
  pthread_mutex_unlock(&threads_mu);
  clear_events();
  return 1;
}

static int l_now(lua_State *L) {
  lua_pushinteger(L, now_ns());
  return 1;
}

/* milliseconds of the wall clock (file names of tensorboard_trace_handler) */
static int l_wall_ms(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  lua_pushinteger(L, (lua_Integer)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
  return 1;
}

static int l_hostname(lua_State *L) {
  char h[256];
  if (gethostname(h, sizeof h) != 0) strcpy(h, "localhost");
  h[sizeof h - 1] = 0;
  lua_pushstring(L, h);
  return 1;
}

static int l_getpid(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)getpid());
  return 1;
}

static int l_gettid(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)syscall(SYS_gettid));
  return 1;
}

/* _mkdir(path): makes path and its missing parents; true, or nil and the reason */
static int l_mkdir(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  char buf[4096];
  size_t len = strlen(path);
  if (len == 0 || len >= sizeof buf) { lua_pushnil(L); lua_pushstring(L, "bad directory name"); return 2; }
  memcpy(buf, path, len + 1);
  for (size_t i = 1; i <= len; i++) {
    if (buf[i] != '/' && buf[i] != 0) continue;
    char c = buf[i];
    buf[i] = 0;
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
      lua_pushnil(L);
      lua_pushfstring(L, "%s: %s", buf, strerror(errno));
      return 2;
    }
    buf[i] = c;
  }
  lua_pushboolean(L, 1);
  return 1;
}

static const luaL_Reg functions[] = {
  {"start", l_start}, {"stop", l_stop}, {"recording", l_recording}, {"clear", l_clear},
  {"collect", l_collect}, {"range_push", l_range_push}, {"range_pop", l_range_pop},
  {"add_event", l_add_event}, {"now_ns", l_now}, {"wall_ms", l_wall_ms}, {"hostname", l_hostname}, {"getpid", l_getpid},
  {"gettid", l_gettid}, {"mkdir", l_mkdir},
  {NULL, NULL}
};

/* torch._profiler: the primitives profiler.lua builds torch.profiler from */
void lt_vm_open_profiler(lua_State *L) {
  lua_newtable(L);
  luaL_setfuncs(L, functions, 0);
  lua_setfield(L, -2, "_profiler");
}
