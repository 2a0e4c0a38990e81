/*
** ldist.c — the C half of torch.distributed: the Lua module `lutorch_dist`.
**
** This is a shared object of its own, linked against libmpi and loaded only
** by lib/distributed: the lutorch program starts without MPI and runs where
** the MPI libraries are absent. It reads tensors through the userdata layout
** (vm/ltensor.h) and inline accessors only, so it needs no symbol from the
** core and loads the same into the lutorch program, a stock lua5.4 with
** torch.so, or an embedding application.
**
** Functions here take contiguous tensors and group ranks; the Lua half
** (lib/distributed) makes tensors contiguous, translates global ranks, splits
** lists, and turns handles into torch.distributed's Work objects. A group's
** backend decides where its tensors live: the mpi backend takes CPU tensors,
** the nccl backend CUDA tensors on its device (pg->device), whose storage
** holds the device pointer; its ops are queued on the caller's current
** stream, read here, on the caller's thread (nccl.c).
*/
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lua.h>
#include <lauxlib.h>
#include "vm/ltensor.h"
#include "dist.h"

#define PG_MT "lutorch.dist.pg"
#define WORK_MT "lutorch.dist.work"

typedef struct pg_ud { lt_dist_pg *pg; bool is_world; bool freed; } pg_ud;
typedef struct work_ud { lt_dist_work *w; } work_ud;

static lt_dist_pg *world;         /* the default group: mpi_world, or the nccl group made over it */
static lt_dist_pg *mpi_world;     /* MPI's world: the mpi backend, and the nccl backend's bootstrap */
static bool exit_registered, destroyed;

/* ---- arguments ---- */

static lt_dist_pg *check_pg(lua_State *L, int idx) {
  pg_ud *u = luaL_checkudata(L, idx, PG_MT);
  if (u->freed || !u->pg) luaL_error(L, "torch.distributed: the process group was destroyed");
  if (destroyed) luaL_error(L, "torch.distributed: the default process group was destroyed");
  return u->pg;
}

static bool is_contiguous(const lt_tensor *t) {
  int64_t expect = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    if (t->sizes[d] == 1) continue;
    if (t->strides[d] != expect) return false;
    expect *= t->sizes[d];
  }
  return true;
}

/* a tensor argument as a buffer: live, contiguous, on the CPU (mpi) or pg's CUDA device (nccl) */
static lt_dist_buf check_buf(lua_State *L, lt_dist_pg *pg, int idx, const char *op, const char *name) {
  lt_dist_buf b = {0};
  lt_ud *u = NULL;
  if (lua_type(L, idx) == LUA_TUSERDATA && lua_rawlen(L, idx) == sizeof(lt_ud)) {
    u = lua_touserdata(L, idx);
    if (u->magic != LT_TENSOR_MAGIC) u = NULL;
  }
  if (!u) luaL_error(L, "%s: argument '%s' must be a tensor, got %s", op, name, luaL_typename(L, idx));
  if (!u->t) luaL_error(L, "%s: argument '%s' is a freed tensor", op, name);
  lt_tensor *t = u->t;
  lt_device d = t->storage->device;
  if (pg->device < 0 && d.type != LT_DEV_CPU)
    luaL_error(L, "%s: argument '%s' is not on the CPU: the %s backend takes CPU tensors", op, name, pg->backend->name);
  if (pg->device >= 0 && d.type != LT_DEV_CUDA)
    luaL_error(L, "%s: argument '%s' is on the %s: the %s backend takes CUDA tensors (cuda:%d on this rank)", op, name,
               d.type == LT_DEV_CPU ? "CPU" : "meta device", pg->backend->name, pg->device);
  if (pg->device >= 0 && d.index != pg->device)
    luaL_error(L, "%s: argument '%s' is on cuda:%d; this rank's %s communicator is on cuda:%d", op, name, d.index,
               pg->backend->name, pg->device);
  if (!is_contiguous(t)) luaL_error(L, "%s: argument '%s' must be contiguous", op, name);
  if (t->dtype >= LT_DIST_NUM_DTYPES) luaL_error(L, "%s: argument '%s' has an unsupported dtype", op, name);
  b.dtype = (lt_dist_dtype)t->dtype;
  b.count = t->numel;
  b.data = (char *)t->storage->data + t->offset * (int64_t)lt_dist_dtype_size(b.dtype);
  return b;
}

static lt_dist_redop check_op(lua_State *L, int idx, const char *op) {
  const char *s = luaL_optstring(L, idx, "sum");
  int r = lt_dist_redop_from_name(s);
  if (r < 0) luaL_error(L, "%s: unknown reduce op '%s' (sum, avg, max, min, product)", op, s);
  return (lt_dist_redop)r;
}

/* what the backend cannot reduce is a Lua error here: failing in the communication thread
   would take the whole job down */
static void check_reduce(lua_State *L, lt_dist_pg *pg, lt_dist_buf b, lt_dist_redop r, const char *op) {
  if (r == LT_DIST_AVG && b.dtype > LT_DIST_BF16)
    luaL_error(L, "%s: avg needs a floating tensor, got %s", op, lt_dist_dtype_name(b.dtype));
  const char *why = pg->device >= 0 ? lt_dist_nccl_check_reduce(b.dtype, r) : NULL;
  if (why) luaL_error(L, "%s: the %s backend cannot reduce this %s tensor: %s", op, pg->backend->name,
                      lt_dist_dtype_name(b.dtype), why);
}

static int check_rank(lua_State *L, int idx, lt_dist_pg *pg, const char *op, const char *name) {
  lua_Integer r = luaL_checkinteger(L, idx);
  if (r < 0 || r >= pg->size)
    luaL_error(L, "%s: %s %d is not a rank of the group (0..%d)", op, name, (int)r, pg->size - 1);
  return (int)r;
}

static void check_same_dtype(lua_State *L, lt_dist_buf a, lt_dist_buf b, const char *op) {
  if (a.dtype != b.dtype)
    luaL_error(L, "%s: the output is %s and the input %s; they must match", op, lt_dist_dtype_name(a.dtype),
               lt_dist_dtype_name(b.dtype));
}

/* the whole buffer of all_gather, gather and scatter holds one part per rank */
static void check_per_rank(lua_State *L, lt_dist_pg *pg, lt_dist_buf whole, lt_dist_buf part,
                           const char *op, const char *which) {
  if (whole.count != part.count * pg->size)
    luaL_error(L, "%s: the %s has %lld elements; it needs %d x %lld", op, which, (long long)whole.count,
               pg->size, (long long)part.count);
}

/* per-rank counts from a table of size entries (or equal parts of total when absent) */
static int *check_counts(lua_State *L, int idx, lt_dist_pg *pg, int64_t total, const char *op, const char *what) {
  int *c = malloc(sizeof(int) * (size_t)pg->size);
  if (!c) luaL_error(L, "%s: out of memory", op);
  int64_t sum = 0;
  if (lua_isnoneornil(L, idx)) {
    if (total % pg->size) { free(c); luaL_error(L, "%s: %s has %lld elements, not divisible by the group size %d", op, what, (long long)total, pg->size); }
    for (int i = 0; i < pg->size; i++) c[i] = (int)(total / pg->size);
    return c;
  }
  if (!lua_istable(L, idx) || (int)lua_rawlen(L, idx) != pg->size) {
    free(c);
    luaL_error(L, "%s: %s counts must be a table of %d numbers", op, what, pg->size);
  }
  for (int i = 0; i < pg->size; i++) {
    lua_rawgeti(L, idx, i + 1);
    lua_Integer v = lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (v < 0 || v > INT32_MAX) { free(c); luaL_error(L, "%s: bad %s count %d", op, what, (int)v); }
    c[i] = (int)v;
    sum += v;
  }
  if (sum != total) { free(c); luaL_error(L, "%s: %s counts add up to %lld, the tensor has %lld elements", op, what, (long long)sum, (long long)total); }
  return c;
}

/* the C.now variants: run the collective to completion before returning, with no handle
** (the tensors are on the Lua stack meanwhile); what a synchronous call costs is then
** little more than MPI's own time */
static int run_now(lua_State *L, lt_dist_work *w, const char *op) {
  const char *b = lt_dist_broken();
  char m[sizeof w->err];
  if (b) {
    snprintf(m, sizeof m, "%s: %s", op, b);
  } else if (lt_dist_run(w) < 0 ||
             /* a barrier must be passed on the device too, not only issued */
             (w->kind == LT_DIST_BARRIER && w->backend->pending && lt_dist_wait(w) < 0)) {
    b = lt_dist_broken();
    snprintf(m, sizeof m, "%s", w->err[0] ? w->err : b ? b : "torch.distributed: the operation failed");
  } else {
    lt_dist_work_release(w);
    return 0;
  }
  lt_dist_work_release(w);
  return luaL_error(L, "%s", m);
}

/* w queued (or, for C.now, run to completion); its handle keeps the arguments 2..top alive */
static int submit(lua_State *L, lt_dist_work *w, const char *op) {
  if (lua_toboolean(L, lua_upvalueindex(1))) return run_now(L, w, op);
  int top = lua_gettop(L);
  work_ud *u = lua_newuserdatauv(L, sizeof(work_ud), 1);
  u->w = w;
  luaL_setmetatable(L, WORK_MT);
  lua_createtable(L, top, 0);
  for (int i = 1; i <= top; i++) { lua_pushvalue(L, i); lua_rawseti(L, -2, i); }
  lua_setiuservalue(L, -2, 1);
  const char *b = lt_dist_broken();
  if (b) return luaL_error(L, "%s: %s", op, b);
  if (lt_dist_submit(w) < 0) return luaL_error(L, "%s: %s", op, w->err);
  return 1;
}

static lt_dist_work *new_work(lua_State *L, lt_dist_pg *pg, lt_dist_kind k) {
  lt_dist_work *w = lt_dist_work_new(pg, k);
  if (!w) luaL_error(L, "torch.distributed: out of memory");
  if (pg->device >= 0) w->stream = lt_dist_nccl_current_stream(pg->device);
  return w;
}

/* ---- collectives ---- */

static int l_allreduce(lua_State *L) {
  lt_dist_pg *pg = check_pg(L, 1);
  lt_dist_buf b = check_buf(L, pg, 2, "all_reduce", "tensor");
  lt_dist_redop op = check_op(L, 3, "all_reduce");
  check_reduce(L, pg, b, op, "all_reduce");
  lt_dist_work *w = new_work(L, pg, LT_DIST_ALLREDUCE);
  w->out = b; w->op = op;
  return submit(L, w, "all_reduce");
}

static int l_reduce(lua_State *L) {
  lt_dist_pg *pg = check_pg(L, 1);
  lt_dist_buf b = check_buf(L, pg, 2, "reduce", "tensor");
  int root = check_rank(L, 3, pg, "reduce", "dst");
  lt_dist_redop op = check_op(L, 4, "reduce");
  check_reduce(L, pg, b, op, "reduce");
  lt_dist_work *w = new_work(L, pg, LT_DIST_REDUCE);
  w->out = b; w->op = op; w->root = root;
  return submit(L, w, "reduce");
}

static int l_broadcast(lua_State *L) {
  lt_dist_pg *pg = check_pg(L, 1);
  lt_dist_buf b = check_buf(L, pg, 2, "broadcast", "tensor");
  int root = check_rank(L, 3, pg, "broadcast", "src");
  lt_dist_work *w = new_work(L, pg, LT_DIST_BROADCAST);
  w->out = b; w->root = root;
  return submit(L, w, "broadcast");
}

static int l_allgather(lua_State *L) {
  lt_dist_pg *pg = check_pg(L, 1);
  lt_dist_buf o = check_buf(L, pg, 2, "all_gather", "output");
  lt_dist_buf i = check_buf(L, pg, 3, "all_gather", "input");
  check_same_dtype(L, o, i, "all_gather");
  check_per_rank(L, pg, o, i, "all_gather", "output");
  lt_dist_work *w = new_work(L, pg, LT_DIST_ALLGATHER);
  w->out = o; w->in = i;
  return submit(L, w, "all_gather");
}

static int l_gather(lua_State *L) {
  lt_dist_pg *pg = check_pg(L, 1);
  lt_dist_buf i = check_buf(L, pg, 2, "gather", "tensor");
  int root = check_rank(L, 4, pg, "gather", "dst");
  lt_dist_buf o = {0};
  if (pg->rank == root) {
    o = check_buf(L, pg, 3, "gather", "gather_list");
    check_same_dtype(L, o, i, "gather");
    check_per_rank(L, pg, o, i, "gather", "output");
  }
  lt_dist_work *w = new_work(L, pg, LT_DIST_GATHER);
  w->out = o; w->in = i; w->root = root;
  if (!o.data) w->out.dtype = i.dtype;
  return submit(L, w, "gather");
}

static int l_scatter(lua_State *L) {
  lt_dist_pg *pg = check_pg(L, 1);
  lt_dist_buf o = check_buf(L, pg, 2, "scatter", "tensor");
  int root = check_rank(L, 4, pg, "scatter", "src");
  lt_dist_buf i = {0};
  if (pg->rank == root) {
    i = check_buf(L, pg, 3, "scatter", "scatter_list");
    check_same_dtype(L, o, i, "scatter");
    check_per_rank(L, pg, i, o, "scatter", "input");
  }
  lt_dist_work *w = new_work(L, pg, LT_DIST_SCATTER);
  w->out = o; w->in = i; w->root = root;
  return submit(L, w, "scatter");
}

static int l_reduce_scatter(lua_State *L) {
  lt_dist_pg *pg = check_pg(L, 1);
  lt_dist_buf o = check_buf(L, pg, 2, "reduce_scatter", "output");
  lt_dist_buf i = check_buf(L, pg, 3, "reduce_scatter", "input");
  check_same_dtype(L, o, i, "reduce_scatter");
  lt_dist_redop op = check_op(L, 4, "reduce_scatter");
  check_reduce(L, pg, o, op, "reduce_scatter");
  int *counts = check_counts(L, 5, pg, i.count, "reduce_scatter", "input");
  if (counts[pg->rank] != o.count) {
    int c = counts[pg->rank];
    free(counts);
    luaL_error(L, "reduce_scatter: the output has %lld elements; this rank's part of the input has %d", (long long)o.count, c);
  }
  lt_dist_work *w = lt_dist_work_new(pg, LT_DIST_REDUCE_SCATTER);
  if (!w) { free(counts); return luaL_error(L, "reduce_scatter: out of memory"); }
  w->out = o; w->in = i; w->op = op; w->counts = counts;
  return submit(L, w, "reduce_scatter");
}

static int l_alltoall(lua_State *L) {
  lt_dist_pg *pg = check_pg(L, 1);
  lt_dist_buf o = check_buf(L, pg, 2, "all_to_all", "output");
  lt_dist_buf i = check_buf(L, pg, 3, "all_to_all", "input");
  check_same_dtype(L, o, i, "all_to_all");
  int *sc = check_counts(L, 4, pg, i.count, "all_to_all", "input");
  int *rc = NULL;
  if (lua_isnoneornil(L, 5) && o.count % pg->size) { free(sc); return luaL_error(L, "all_to_all: the output size is not divisible by the group size"); }
  if (!lua_isnoneornil(L, 5) && (!lua_istable(L, 5) || (int)lua_rawlen(L, 5) != pg->size)) { free(sc); return luaL_error(L, "all_to_all: output counts must be a table of %d numbers", pg->size); }
  rc = malloc(sizeof(int) * (size_t)pg->size);
  if (!rc) { free(sc); return luaL_error(L, "all_to_all: out of memory"); }
  int64_t sum = 0;
  for (int k = 0; k < pg->size; k++) {
    if (lua_isnoneornil(L, 5)) rc[k] = (int)(o.count / pg->size);
    else { lua_rawgeti(L, 5, k + 1); rc[k] = (int)lua_tointeger(L, -1); lua_pop(L, 1); }
    sum += rc[k];
  }
  if (sum != o.count) { free(sc); free(rc); return luaL_error(L, "all_to_all: output counts add up to %lld, the output has %lld elements", (long long)sum, (long long)o.count); }
  lt_dist_work *w = lt_dist_work_new(pg, LT_DIST_ALLTOALL);
  if (!w) { free(sc); free(rc); return luaL_error(L, "all_to_all: out of memory"); }
  w->out = o; w->in = i; w->counts = sc; w->rcounts = rc;
  return submit(L, w, "all_to_all");
}

static int l_barrier(lua_State *L) {
  lt_dist_pg *pg = check_pg(L, 1);
  return submit(L, new_work(L, pg, LT_DIST_BARRIER), "barrier");
}

/* NCCL matches the messages between two ranks in order: it has no tags to tell them apart */
static void check_p2p(lua_State *L, lt_dist_pg *pg, int tag_idx, const char *op) {
  if (pg->device >= 0 && luaL_optinteger(L, tag_idx, 0) != 0)
    luaL_error(L, "%s: the %s backend has no message tags (tag must be 0); messages between two ranks "
               "arrive in the order they were sent", op, pg->backend->name);
}

static int l_send(lua_State *L) {
  lt_dist_pg *pg = check_pg(L, 1);
  lt_dist_buf b = check_buf(L, pg, 2, "send", "tensor");
  int peer = check_rank(L, 3, pg, "send", "dst");
  if (peer == pg->rank) luaL_error(L, "send: dst %d is this rank", peer);
  check_p2p(L, pg, 4, "send");
  lt_dist_work *w = new_work(L, pg, LT_DIST_SEND);
  w->out = b; w->root = peer; w->tag = (int)luaL_optinteger(L, 4, 0);
  return submit(L, w, "send");
}

static int l_recv(lua_State *L) {
  lt_dist_pg *pg = check_pg(L, 1);
  lt_dist_buf b = check_buf(L, pg, 2, "recv", "tensor");
  int peer = lua_isnoneornil(L, 3) ? -1 : check_rank(L, 3, pg, "recv", "src");
  if (peer == pg->rank) luaL_error(L, "recv: src %d is this rank", peer);
  if (peer < 0 && pg->device >= 0)
    luaL_error(L, "recv: the %s backend needs src (NCCL cannot receive from any rank)", pg->backend->name);
  check_p2p(L, pg, 4, "recv");
  lt_dist_work *w = new_work(L, pg, LT_DIST_RECV);
  w->out = b; w->root = peer; w->tag = (int)luaL_optinteger(L, 4, 0);
  return submit(L, w, "recv");
}

static void push_pg(lua_State *L, lt_dist_pg *pg, bool is_world) {
  pg_ud *u = lua_newuserdatauv(L, sizeof(pg_ud), 0);
  u->pg = pg; u->is_world = is_world; u->freed = false;
  luaL_setmetatable(L, PG_MT);
}

/* new_group(pg, {world ranks, sorted}[, backend]): every rank of pg calls it; backend "mpi"
   on a nccl group splits the MPI group under it (its bootstrap) instead */
static int l_new_group(lua_State *L) {
  lt_dist_pg *pg = check_pg(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  const char *backend = luaL_optstring(L, 3, pg->backend->name);
  if (strcmp(backend, pg->backend->name) != 0) {
    if (strcmp(backend, "mpi") != 0 || pg->device < 0)
      return luaL_error(L, "new_group: a %s group cannot be made from a %s group", backend, pg->backend->name);
    pg = lt_dist_nccl_boot(pg);
  }
  int n = (int)lua_rawlen(L, 2);
  if (n < 1) return luaL_error(L, "new_group: ranks must not be empty");
  int *ranks = lua_newuserdatauv(L, sizeof(int) * (size_t)n, 0);   /* kept alive by the handle */
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, 2, i + 1);
    ranks[i] = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
  }
  lt_dist_work *w = new_work(L, pg, LT_DIST_NEW_GROUP);
  w->new_ranks = ranks; w->new_nranks = n;
  return submit(L, w, "new_group");
}

/* ---- work handles ---- */

static work_ud *check_work(lua_State *L) { return luaL_checkudata(L, 1, WORK_MT); }

static void raise_failed(lua_State *L, work_ud *u) {
  const char *m = u->w->err[0] ? u->w->err : lt_dist_broken();
  luaL_error(L, "%s", m ? m : "torch.distributed: the operation failed");
}

static int w_wait(lua_State *L) {
  work_ud *u = check_work(L);
  if (lt_dist_wait(u->w) < 0) raise_failed(L, u);
  lua_pushboolean(L, 1);
  return 1;
}

static int w_is_completed(lua_State *L) {
  work_ud *u = check_work(L);
  int r = lt_dist_test(u->w);
  if (r < 0) return luaL_error(L, "%s", u->w->err[0] ? u->w->err : "torch.distributed: the operation failed");
  lua_pushboolean(L, r > 0);
  return 1;
}

static int w_times(lua_State *L) {
  work_ud *u = check_work(L);
  lua_pushnumber(L, u->w->t_queued);
  lua_pushnumber(L, u->w->t_start);
  lua_pushnumber(L, u->w->t_end);
  return 3;
}

static int w_source(lua_State *L) {
  work_ud *u = check_work(L);
  if (u->w->source < 0) return 0;
  lua_pushinteger(L, u->w->source);
  return 1;
}

static int w_group(lua_State *L) {
  work_ud *u = check_work(L);
  if (!u->w->new_pg) return 0;
  push_pg(L, u->w->new_pg, false);
  u->w->new_pg = NULL;        /* the Lua value owns it now */
  return 1;
}

static int w_gc(lua_State *L) {
  work_ud *u = luaL_checkudata(L, 1, WORK_MT);
  if (!u->w) return 0;
  /* MPI may still be writing into the tensors this handle keeps alive */
  if (!lt_dist_broken() && lt_dist_test(u->w) == 0) lt_dist_wait(u->w);
  if (lt_dist_test(u->w) == 0) return 0;   /* stuck: leak rather than free under MPI's feet */
  if (u->w->new_pg) lt_dist_pg_free(u->w->new_pg);
  lt_dist_work_release(u->w);
  u->w = NULL;
  return 0;
}

/* ---- groups ---- */

static int pg_rank(lua_State *L) { lua_pushinteger(L, check_pg(L, 1)->rank); return 1; }
static int pg_size(lua_State *L) { lua_pushinteger(L, check_pg(L, 1)->size); return 1; }
static int pg_ranks(lua_State *L) {
  lt_dist_pg *pg = check_pg(L, 1);
  lua_createtable(L, pg->size, 0);
  for (int i = 0; i < pg->size; i++) { lua_pushinteger(L, pg->world_ranks[i]); lua_rawseti(L, -2, i + 1); }
  return 1;
}
static int pg_backend(lua_State *L) { lua_pushstring(L, check_pg(L, 1)->backend->name); return 1; }
/* the CUDA device of the group's tensors, or nothing (CPU) */
static int pg_device(lua_State *L) {
  lt_dist_pg *pg = check_pg(L, 1);
  if (pg->device < 0) return 0;
  lua_pushinteger(L, pg->device);
  return 1;
}

static int pg_free(lua_State *L) {
  pg_ud *u = luaL_checkudata(L, 1, PG_MT);
  if (u->freed || u->is_world || !u->pg) { u->freed = true; return 0; }
  if (lt_dist_idle()) lt_dist_pg_free(u->pg);   /* a group still in use by queued work is leaked */
  u->pg = NULL;
  u->freed = true;
  return 0;
}

/* ---- process lifetime ---- */

/* the default group, and MPI's world under it */
static void free_worlds(void) {
  if (world && world != mpi_world) lt_dist_pg_free(world);
  lt_dist_pg_free(mpi_world);
  world = mpi_world = NULL;
}

static void at_exit(int status, void *arg) {
  (void)arg;
  if (!mpi_world || destroyed || !lt_dist_mpi_initialized()) return;
  const char *b = lt_dist_broken();
  if (status != 0 || b) {
    /* one rank going down with an error takes the job with it: peers must not hang */
    if (b) fprintf(stderr, "[rank %d] %s; aborting the job\n", mpi_world->rank, b);
    else fprintf(stderr, "[rank %d] lutorch.distributed: the script ended with an error (above); aborting the job\n", mpi_world->rank);
    fflush(stderr);
    lt_dist_mpi_backend.abort(status ? status : 1);
    return;
  }
  if (lt_dist_stop() < 0) { lt_dist_mpi_backend.abort(1); return; }
  free_worlds();
  lt_dist_mpi_finalize();
}

/* the CUDA device of this rank's NCCL communicator: its rank among the ranks on this machine,
   modulo the devices the machine has */
static int local_device(void) {
  const char *names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_RANK", "MPI_LOCALRANKID"};
  int local = 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const char *v = getenv(names[i]);
    if (v && v[0]) { local = atoi(v); break; }
  }
  int n = lt_dist_nccl_device_count();
  return n > 0 ? local % n : local < 0 ? 0 : local;
}

/* init(timeout, backend): the default group ("mpi" or "nccl"); MPI's world comes first either
   way, and stays when the nccl group cannot be made (the error says why; init can be called again) */
static int l_init(lua_State *L) {
  double timeout = luaL_optnumber(L, 1, 600.0);
  const char *backend = luaL_optstring(L, 2, "mpi");
  bool nccl = strcmp(backend, "nccl") == 0;
  if (!nccl && strcmp(backend, "mpi") != 0) return luaL_error(L, "init_process_group: unknown backend '%s'", backend);
  if (timeout <= 0) return luaL_error(L, "init_process_group: timeout must be positive");
  if (destroyed) return luaL_error(L, "init_process_group: MPI cannot be started again after destroy_process_group");
  if (world && strcmp(world->backend->name, backend) != 0)
    return luaL_error(L, "init_process_group: the default group is already a %s group", world->backend->name);
  if (!world) {
    char err[700];
    if (!mpi_world) {
      mpi_world = lt_dist_mpi_init(err, sizeof err);
      if (!mpi_world) return luaL_error(L, "init_process_group: %s", err);
      if (lt_dist_start(timeout, mpi_world->rank) < 0) return luaL_error(L, "init_process_group: cannot start the communication thread");
      if (!exit_registered) { on_exit(at_exit, NULL); exit_registered = true; }
    }
    lt_dist_set_timeout(timeout);
    if (nccl) {
      world = lt_dist_nccl_init(mpi_world, local_device(), err, sizeof err);
      if (!world) return luaL_error(L, "init_process_group: backend nccl: %s", err);
    } else {
      world = mpi_world;
    }
  }
  lt_dist_set_timeout(timeout);
  push_pg(L, world, true);
  return 1;
}

static int l_destroy(lua_State *L) {
  if (!mpi_world || destroyed) return 0;
  if (lt_dist_broken()) return luaL_error(L, "destroy_process_group: %s", lt_dist_broken());
  if (lt_dist_stop() < 0) return luaL_error(L, "destroy_process_group: collectives are still running");
  free_worlds();
  destroyed = true;
  lt_dist_mpi_finalize();
  return 0;
}

static int l_abort(lua_State *L) {
  const char *msg = luaL_optstring(L, 1, "aborted");
  int code = (int)luaL_optinteger(L, 2, 1);
  fprintf(stderr, "[rank %d] lutorch.distributed: %s; aborting the job\n", mpi_world ? mpi_world->rank : -1, msg);
  fflush(stderr);
  if (lt_dist_mpi_initialized()) lt_dist_mpi_backend.abort(code);
  exit(code);
}

static int l_set_timeout(lua_State *L) {
  double t = luaL_checknumber(L, 1);
  if (t <= 0) return luaL_error(L, "set_timeout: timeout must be positive");
  lt_dist_set_timeout(t);
  return 0;
}
static int l_get_timeout(lua_State *L) { lua_pushnumber(L, lt_dist_get_timeout()); return 1; }
static int l_clock(lua_State *L) { lua_pushnumber(L, lt_dist_clock()); return 1; }
static int l_broken(lua_State *L) { const char *b = lt_dist_broken(); if (!b) return 0; lua_pushstring(L, b); return 1; }
static int l_initialized(lua_State *L) { lua_pushboolean(L, world != NULL && !destroyed); return 1; }

/* nccl_available(): whether a NCCL can be had here, and which (or why not) */
static int l_nccl_available(lua_State *L) {
  const char *why = NULL;
  lua_pushboolean(L, lt_dist_nccl_available(&why));
  lua_pushstring(L, why ? why : "");
  return 2;
}

/* _nccl_info(): {library=, version=, id_hash=} (id_hash: the last unique id bootstrapped with,
   as 16 hex digits, for the tests that check every rank got the same) */
static int l_nccl_info(lua_State *L) {
  const char *why = NULL;
  bool ok = lt_dist_nccl_available(&why);
  lua_createtable(L, 0, 4);
  lua_pushboolean(L, ok); lua_setfield(L, -2, "available");
  lua_pushstring(L, why ? why : ""); lua_setfield(L, -2, "library");
  lua_pushinteger(L, lt_dist_nccl_version()); lua_setfield(L, -2, "version");
  uint64_t h = lt_dist_nccl_last_id_hash();
  if (h) {
    char hex[20];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    lua_pushstring(L, hex);
    lua_setfield(L, -2, "id_hash");
  }
  return 1;
}

/* Lua unloads C modules when the state closes, but the exit handler runs after
** that: pin this object in memory for the life of the process */
static void pin_self(void) {
  Dl_info info;
  if (dladdr((void *)pin_self, &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

int luaopen_lutorch_dist(lua_State *L) {
  pin_self();
  static const luaL_Reg pg_methods[] = {
    {"rank", pg_rank}, {"size", pg_size}, {"ranks", pg_ranks}, {"backend", pg_backend}, {"device", pg_device},
    {"free", pg_free},
    {NULL, NULL}
  };
  static const luaL_Reg work_methods[] = {
    {"wait", w_wait}, {"is_completed", w_is_completed}, {"times", w_times}, {"source", w_source},
    {"group", w_group}, {NULL, NULL}
  };
  static const luaL_Reg fns[] = {
    {"init", l_init}, {"destroy", l_destroy}, {"abort", l_abort}, {"initialized", l_initialized},
    {"set_timeout", l_set_timeout}, {"get_timeout", l_get_timeout}, {"clock", l_clock}, {"broken", l_broken},
    {"all_reduce", l_allreduce}, {"reduce", l_reduce}, {"broadcast", l_broadcast},
    {"all_gather", l_allgather}, {"gather", l_gather}, {"scatter", l_scatter},
    {"reduce_scatter", l_reduce_scatter}, {"all_to_all", l_alltoall}, {"barrier", l_barrier},
    {"send", l_send}, {"recv", l_recv}, {"new_group", l_new_group},
    {"nccl_available", l_nccl_available}, {"_nccl_info", l_nccl_info},
    {NULL, NULL}
  };
  if (luaL_newmetatable(L, PG_MT)) {
    luaL_newlib(L, pg_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, pg_free);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, WORK_MT)) {
    luaL_newlib(L, work_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, w_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  static const luaL_Reg now_fns[] = {
    {"all_reduce", l_allreduce}, {"reduce", l_reduce}, {"broadcast", l_broadcast},
    {"all_gather", l_allgather}, {"gather", l_gather}, {"scatter", l_scatter},
    {"reduce_scatter", l_reduce_scatter}, {"all_to_all", l_alltoall}, {"barrier", l_barrier},
    {NULL, NULL}
  };
  luaL_newlib(L, fns);
  lua_createtable(L, 0, sizeof now_fns / sizeof now_fns[0] - 1);
  lua_pushboolean(L, 1);
  luaL_setfuncs(L, now_fns, 1);    /* the upvalue marks them synchronous (submit) */
  lua_setfield(L, -2, "now");
  lua_pushstring(L, "mpi nccl");
  lua_setfield(L, -2, "backends");
  return 1;
}
