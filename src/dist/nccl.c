/*
** nccl.c — the nccl backend: CUDA tensors through NCCL.
**
** NCCL comes from a table of entry points (nccl.h): libnccl.so.2 opened with
** dlopen (never -lnccl: lutorch_dist.so must load where NCCL is absent), or
** the fake NCCL over MPI (nccl_fake.c), chosen by LUTORCH_NCCL=fake and
** chosen by itself when the CUDA backend runs on the fake driver.
**
** Bootstrap. MPI stays the launcher: rank 0 of the MPI group makes an
** ncclUniqueId, the group broadcasts it (mpi.c's broadcast), and every rank
** calls ncclCommInitRank(size, id, rank) with its device's context current.
** new_group splits the MPI group the same way and bootstraps the members.
**
** Streams and completion. A collective is queued on the caller's current
** stream of the group's device, as the caller left it when it called (the
** stream is per thread in the CUDA module, so ldist.c reads it on the caller's
** thread into the work item); the communication thread issues it there, then
** records a CUDA event. `run` returns once the op is issued; work.c keeps it
** in flight and polls `pending` (the event, and NCCL's asynchronous error)
** to finish waits and to time out a collective stuck on the device. Send and
** recv are queued like collectives: on one stream, NCCL ops must be issued in
** program order on every rank.
**
** The CUDA module. lutorch_dist.so links nothing of the core or of
** lutorch_cuda.so (see ldist.c): the module's functions (its driver table,
** the current stream, the context guard) are looked up at run time through
** the core's lt_vm_backend_symbol, itself found with dlsym(RTLD_DEFAULT). That
** is the narrowest seam that works whichever way lutorch was loaded: the
** program exports the core's symbols, liblutorch.so has them global, and
** torch.so in a stock lua5.4 is made global when the CUDA module loads (which
** lib/distributed makes happen before the nccl backend starts). The CUDA
** module itself is opened RTLD_LOCAL, so its symbols are not found directly.
*/
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/tensor.h"
#include "cuda/cuda.h"
#include "dist.h"
#include "nccl.h"

/* ---- the CUDA module, found at run time ---- */

static struct {
  const lt_cu_driver *(*driver)(void);
  int (*device_count)(void);
  lt_cu_stream (*current_stream)(int dev);
  int (*enter)(int dev, lt_cuda_guard *g, const char *op);
  void (*leave)(lt_cuda_guard *g);
  const char *(*error_message)(void);
  const char *(*unavailable)(int device_type);
  const char *(*result_name)(lt_cu_result r);
  const lt_cu_driver *drv;      /* NULL: no CUDA here (no driver, or the module is not loaded) */
} cu;
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

static void find_cuda(void) {
  void *(*sym)(int, const char *) = (void *(*)(int, const char *))dlsym(RTLD_DEFAULT, "lt_vm_backend_symbol");
  cu.unavailable = (const char *(*)(int))dlsym(RTLD_DEFAULT, "lt_vm_backend_unavailable");
  cu.error_message = (const char *(*)(void))dlsym(RTLD_DEFAULT, "lt_error_message");
  if (!sym) return;
  cu.driver = (const lt_cu_driver *(*)(void))sym(LT_DEV_CUDA, "lt_cuda_driver");
  cu.device_count = (int (*)(void))sym(LT_DEV_CUDA, "lt_cuda_device_count");
  cu.current_stream = (lt_cu_stream (*)(int))sym(LT_DEV_CUDA, "lt_cuda_current_stream");
  cu.enter = (int (*)(int, lt_cuda_guard *, const char *))sym(LT_DEV_CUDA, "lt_cuda_enter");
  cu.leave = (void (*)(lt_cuda_guard *))sym(LT_DEV_CUDA, "lt_cuda_leave");
  cu.result_name = (const char *(*)(lt_cu_result))sym(LT_DEV_CUDA, "lt_cu_result_name");
  if (cu.driver && cu.device_count && cu.current_stream && cu.enter && cu.leave) cu.drv = cu.driver();
}

static bool cuda_ready(void) {
  pthread_once(&cu_once, find_cuda);
  return cu.drv != NULL && cu.device_count() > 0;
}

/* why there is no CUDA, for messages */
static const char *cuda_why(void) {
  pthread_once(&cu_once, find_cuda);
  const char *w = cu.unavailable ? cu.unavailable(LT_DEV_CUDA) : NULL;
  return w ? w : "the CUDA backend is not loaded";
}

/* "CUDA_ERROR_OUT_OF_MEMORY" (the module's names) */
static const char *cu_name(lt_cu_result r) {
  static _Thread_local char b[32];
  if (cu.result_name) return cu.result_name(r);
  snprintf(b, sizeof b, "CUDA error %d", r);
  return b;
}

int lt_dist_nccl_device_count(void) { return cuda_ready() ? cu.device_count() : 0; }
void *lt_dist_nccl_current_stream(int dev) { return cuda_ready() ? (void *)cu.current_stream(dev) : NULL; }

/* make dev's context current on this thread; 0, or -1 with err */
static int enter(int dev, lt_cuda_guard *g, char *err, size_t n) {
  if (!cuda_ready()) { snprintf(err, n, "no CUDA device: %s", cuda_why()); return -1; }
  if (cu.enter(dev, g, "nccl") == 0) return 0;
  snprintf(err, n, "%s", cu.error_message ? cu.error_message() : "cannot make the device current");
  return -1;
}

/* ---- the NCCL library ---- */

static const lt_nccl_api *api;
static const char *api_why = "NCCL was not looked for";
static char why_buf[600];
static lt_nccl_api real;
static int nccl_version;
static pthread_once_t api_once = PTHREAD_ONCE_INIT;

static bool fill_real(void *h, const char *path) {
#define SYM(field, name) if (!(*(void **)&real.field = dlsym(h, name))) { \
    snprintf(why_buf, sizeof why_buf, "%s has no %s", path, name); return false; }
  SYM(get_version, "ncclGetVersion") SYM(get_unique_id, "ncclGetUniqueId")
  SYM(comm_init_rank, "ncclCommInitRank") SYM(comm_destroy, "ncclCommDestroy")
  SYM(comm_abort, "ncclCommAbort") SYM(comm_get_async_error, "ncclCommGetAsyncError")
  SYM(get_error_string, "ncclGetErrorString") SYM(all_reduce, "ncclAllReduce")
  SYM(broadcast, "ncclBroadcast") SYM(reduce, "ncclReduce") SYM(all_gather, "ncclAllGather")
  SYM(reduce_scatter, "ncclReduceScatter") SYM(send, "ncclSend") SYM(recv, "ncclRecv")
  SYM(group_start, "ncclGroupStart") SYM(group_end, "ncclGroupEnd")
#undef SYM
  *(void **)&real.get_last_error = dlsym(h, "ncclGetLastError");    /* NCCL 2.13 and later */
  real.name = path;
  return true;
}

static void open_nccl(void) {
  const char *env = getenv("LUTORCH_NCCL");
  pthread_once(&cu_once, find_cuda);
  bool fake_cuda = cu.drv && strcmp(cu.drv->name, "fake") == 0;
  if (env && strcmp(env, "fake") == 0 && cu.drv && !fake_cuda) {
    /* its "device" pointers would be a GPU's: it cannot touch them */
    api_why = "the fake NCCL (LUTORCH_NCCL=fake) needs the fake CUDA driver (LUTORCH_CUDA_DRIVER=fake), not a real one";
    return;
  }
  if ((env && strcmp(env, "fake") == 0) || ((!env || !env[0]) && fake_cuda)) {
    api = lt_nccl_fake();
    api_why = "the fake NCCL (MPI on the fake CUDA driver's host memory)";
  } else {
    static const char *const paths[] = {"libnccl.so.2", "/usr/local/cuda/lib64/libnccl.so.2"};
    const char *tried = env && env[0] ? env : NULL;
    void *h = NULL;
    const char *path = NULL;
    if (tried) { path = tried; h = dlopen(path, RTLD_NOW | RTLD_LOCAL); }
    for (size_t i = 0; !h && !tried && i < sizeof paths / sizeof paths[0]; i++) {
      path = paths[i];
      h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (!h) {
      const char *e = dlerror();
      snprintf(why_buf, sizeof why_buf, "%s could not be opened: %s", path, e ? e : "?");
      api_why = why_buf;
      return;
    }
    if (!fill_real(h, path)) { dlclose(h); api_why = why_buf; return; }
    if (fake_cuda) {
      snprintf(why_buf, sizeof why_buf, "%s cannot run on the fake CUDA driver's memory (LUTORCH_NCCL=fake, or unset it)", path);
      dlclose(h);
      api_why = why_buf;
      return;
    }
    api = &real;
    api_why = path;
  }
  if (api->get_version(&nccl_version) != LT_NCCL_SUCCESS) nccl_version = 0;
}

bool lt_dist_nccl_available(const char **why) {
  pthread_once(&api_once, open_nccl);
  if (why) *why = api_why;
  return api != NULL;
}

int lt_dist_nccl_version(void) { return lt_dist_nccl_available(NULL) ? nccl_version : 0; }

/* "ncclAllReduce: unhandled cuda error (...): NCCL's last message" */
static void nccl_err(char *err, size_t n, const char *fn, lt_nccl_result r, lt_nccl_comm comm) {
  const char *s = api->get_error_string(r);
  const char *last = api->get_last_error ? api->get_last_error(comm) : NULL;
  snprintf(err, n, "%s failed: %s%s%.200s", fn, s ? s : "unknown NCCL error", last && last[0] ? ": " : "",
           last ? last : "");
}

/* ---- types ---- */

/* lutorch's dtypes in NCCL's; -1: none (int16; bool is handled by the callers) */
static const lt_nccl_dtype nccl_types[LT_DIST_NUM_DTYPES] = {
  LT_NCCL_FLOAT64, LT_NCCL_FLOAT32, LT_NCCL_FLOAT16, LT_NCCL_BFLOAT16, LT_NCCL_INT64, LT_NCCL_INT32,
  -1, LT_NCCL_INT8, LT_NCCL_UINT8, LT_NCCL_UINT8,
};

/* a type to move count elements of dt (bytes where NCCL has no such type) */
static lt_nccl_dtype move_type(lt_dist_dtype dt, size_t *count) {
  if (nccl_types[dt] >= 0) return nccl_types[dt];
  *count *= lt_dist_dtype_size(dt);
  return LT_NCCL_INT8;
}

const char *lt_dist_nccl_check_reduce(lt_dist_dtype dt, lt_dist_redop op) {
  if (nccl_types[dt] < 0) return "NCCL has no 16-bit integer type to reduce int16 tensors in";
  if (op == LT_DIST_AVG && lt_dist_nccl_available(NULL) && nccl_version && nccl_version < 21000)
    return "op avg needs NCCL 2.10 or later";
  return NULL;
}

/* dt and op in NCCL's terms: bool is bytes, sum/max an or, product/min an and */
static void reduce_type(lt_dist_dtype dt, lt_dist_redop op, lt_nccl_dtype *t, lt_nccl_redop *o) {
  static const lt_nccl_redop ops[] = {LT_NCCL_SUM, LT_NCCL_AVG, LT_NCCL_MAX, LT_NCCL_MIN, LT_NCCL_PROD};
  *t = nccl_types[dt];
  *o = ops[op];
  if (dt == LT_DIST_BOOL) *o = (op == LT_DIST_SUM || op == LT_DIST_MAX) ? LT_NCCL_MAX : LT_NCCL_MIN;
}

/* ---- groups ---- */

typedef struct ncomm {
  lt_nccl_comm comm;
  lt_dist_pg *boot;             /* the MPI group it was bootstrapped over */
  bool own_boot;                /* new_group's: freed with this one (the world's is ldist.c's) */
  lt_cu_ptr scratch;            /* one float on the device: barrier's all_reduce */
} ncomm;

/* completion of one issued op */
typedef struct nreq {
  lt_cu_event ev;
  uint64_t mark;                /* the fake's point in its queue */
} nreq;

static uint64_t last_id_hash;

uint64_t lt_dist_nccl_last_id_hash(void) { return last_id_hash; }

static uint64_t fnv1a(const void *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) { h ^= ((const unsigned char *)p)[i]; h *= 1099511628211ull; }
  return h;
}

/* the MPI group's own broadcast, run here on a work item of our own (nothing else uses that
   group meanwhile: at init the threads are idle, in new_group we are the communication thread) */
static int mpi_bcast(lt_dist_pg *boot, void *buf, int64_t n, char *err, size_t errlen) {
  lt_dist_work w;
  memset(&w, 0, sizeof w);
  w.kind = LT_DIST_BROADCAST;
  w.pg = boot;
  w.root = 0;
  w.out = (lt_dist_buf){buf, n, LT_DIST_U8};
  if (lt_dist_mpi_backend.run(&w) == 0) return 0;
  snprintf(err, errlen, "broadcasting the NCCL unique id over MPI: %s", w.err);
  return -1;
}

static lt_dist_pg *make_group(lt_dist_pg *boot, bool own_boot, int device, char *err, size_t errlen) {
  const char *why;
  if (!lt_dist_nccl_available(&why)) { snprintf(err, errlen, "NCCL is not available: %s", why); return NULL; }
  /* rank 0's result code travels with the id, so every rank fails alike */
  struct { int32_t rc; lt_nccl_id id; } msg;
  memset(&msg, 0, sizeof msg);
  char e0[300] = "";
  if (boot->rank == 0) {
    msg.rc = api->get_unique_id(&msg.id);
    if (msg.rc != LT_NCCL_SUCCESS) nccl_err(e0, sizeof e0, "ncclGetUniqueId", msg.rc, NULL);
  }
  if (mpi_bcast(boot, &msg, (int64_t)sizeof msg, err, errlen) < 0) return NULL;
  if (msg.rc != LT_NCCL_SUCCESS) {
    if (boot->rank == 0) snprintf(err, errlen, "%s", e0);
    else snprintf(err, errlen, "ncclGetUniqueId failed on rank 0: %s", api->get_error_string(msg.rc));
    return NULL;
  }
  last_id_hash = fnv1a(msg.id.internal, sizeof msg.id.internal);
  /* without CUDA the real library still gets its call: its own error says what is missing */
  lt_cuda_guard g = {0};
  bool entered = false;
  char e1[300];
  if (cuda_ready()) {
    if (enter(device, &g, e1, sizeof e1) < 0) { snprintf(err, errlen, "cuda:%d: %s", device, e1); return NULL; }
    entered = true;
  } else if (api->fake_bootstrap) {
    snprintf(err, errlen, "the fake NCCL needs the fake CUDA driver (LUTORCH_CUDA_DRIVER=fake): %s", cuda_why());
    return NULL;
  }
  if (api->fake_bootstrap) api->fake_bootstrap(boot->comm);
  lt_nccl_comm comm = NULL;
  lt_nccl_result r = api->comm_init_rank(&comm, boot->size, msg.id, boot->rank);
  if (r != LT_NCCL_SUCCESS) {
    nccl_err(e1, sizeof e1, "ncclCommInitRank", r, NULL);
    snprintf(err, errlen, "%s (rank %d of %d, cuda:%d%s%s)", e1, boot->rank, boot->size, device,
             entered ? "" : "; lutorch's CUDA: ", entered ? "" : cuda_why());
    if (entered) cu.leave(&g);
    return NULL;
  }
  if (!entered) {                        /* a library that starts without a GPU: cannot be */
    api->comm_destroy(comm);
    snprintf(err, errlen, "no CUDA device for NCCL: %s", cuda_why());
    return NULL;
  }
  ncomm *c = calloc(1, sizeof *c);
  lt_dist_pg *pg = calloc(1, sizeof *pg);
  int *wr = malloc(sizeof(int) * (size_t)boot->size);
  lt_cu_result cr = c && pg && wr ? cu.drv->mem_alloc(&c->scratch, sizeof(float)) : LT_CU_ERROR_OUT_OF_MEMORY;
  if (cr == LT_CU_SUCCESS) {
    cr = cu.drv->memset_d8_async(c->scratch, 0, sizeof(float), NULL);
    if (cr == LT_CU_SUCCESS) cr = cu.drv->stream_synchronize(NULL);
    if (cr != LT_CU_SUCCESS) cu.drv->mem_free(c->scratch);
  }
  if (cr != LT_CU_SUCCESS) {
    api->comm_destroy(comm);
    cu.leave(&g);
    free(c); free(pg); free(wr);
    snprintf(err, errlen, "cuda:%d: allocating the barrier's scratch: %s", device, cu_name(cr));
    return NULL;
  }
  cu.leave(&g);
  c->comm = comm;
  c->boot = boot;
  c->own_boot = own_boot;
  memcpy(wr, boot->world_ranks, sizeof(int) * (size_t)boot->size);
  pg->backend = &lt_dist_nccl_backend;
  pg->comm = c;
  pg->rank = boot->rank;
  pg->size = boot->size;
  pg->world_ranks = wr;
  pg->device = device;
  return pg;
}

lt_dist_pg *lt_dist_nccl_init(lt_dist_pg *boot, int device, char *err, size_t errlen) {
  return make_group(boot, false, device, err, errlen);
}

lt_dist_pg *lt_dist_nccl_boot(lt_dist_pg *pg) { return ((ncomm *)pg->comm)->boot; }

static void free_group(lt_dist_pg *pg) {
  ncomm *c = pg->comm;
  if (!c) return;
  lt_cuda_guard g = {0};
  char e[200];
  bool entered = enter(pg->device, &g, e, sizeof e) == 0;
  if (c->scratch) cu.drv->mem_free(c->scratch);
  api->comm_destroy(c->comm);
  if (entered) cu.leave(&g);
  if (c->own_boot) lt_dist_pg_free(c->boot);
  free(c);
  pg->comm = NULL;
}

/* new_group: every rank of the parent splits its MPI group; the members bootstrap on the part */
static int new_group(lt_dist_work *w) {
  ncomm *c = w->pg->comm;
  lt_dist_work split;
  memset(&split, 0, sizeof split);
  split.kind = LT_DIST_NEW_GROUP;
  split.pg = c->boot;
  split.new_ranks = w->new_ranks;
  split.new_nranks = w->new_nranks;
  if (lt_dist_mpi_backend.run(&split) < 0) { snprintf(w->err, sizeof w->err, "%s", split.err); return -1; }
  if (!split.new_pg) return 0;                  /* not a member */
  w->new_pg = make_group(split.new_pg, true, w->pg->device, w->err, sizeof w->err);
  if (!w->new_pg) { lt_dist_pg_free(split.new_pg); return -1; }
  return 0;
}

/* ---- running ops ---- */

#define CALL(fn, expr) do { lt_nccl_result r_ = (expr); if (r_ != LT_NCCL_SUCCESS && !rc) { \
    nccl_err(w->err, sizeof w->err, fn, r_, comm); rc = -1; } } while (0)

/* issue w's NCCL calls on stream s; 0 or -1 with w->err */
static int issue(lt_dist_work *w, lt_nccl_comm comm, lt_nccl_stream s, ncomm *c) {
  lt_dist_buf *o = &w->out, *in = &w->in;
  int size = w->pg->size, rank = w->pg->rank, rc = 0;
  lt_dist_dtype dt = o->data ? o->dtype : in->dtype;
  size_t es = lt_dist_dtype_size(dt);
  lt_nccl_dtype t;
  lt_nccl_redop op;
  switch (w->kind) {
  case LT_DIST_ALLREDUCE:
    reduce_type(dt, w->op, &t, &op);
    CALL("ncclAllReduce", api->all_reduce(o->data, o->data, (size_t)o->count, t, op, comm, s));
    return rc;
  case LT_DIST_REDUCE:
    reduce_type(dt, w->op, &t, &op);
    CALL("ncclReduce", api->reduce(o->data, o->data, (size_t)o->count, t, op, w->root, comm, s));
    return rc;
  case LT_DIST_BROADCAST: {
    size_t n = (size_t)o->count;
    t = move_type(dt, &n);
    CALL("ncclBroadcast", api->broadcast(o->data, o->data, n, t, w->root, comm, s));
    return rc;
  }
  case LT_DIST_ALLGATHER: {
    size_t n = (size_t)in->count;
    t = move_type(dt, &n);
    CALL("ncclAllGather", api->all_gather(in->data, o->data, n, t, comm, s));
    return rc;
  }
  case LT_DIST_REDUCE_SCATTER: {
    reduce_type(dt, w->op, &t, &op);
    bool equal = true;
    for (int i = 1; i < size; i++) equal = equal && w->counts[i] == w->counts[0];
    if (equal) {
      CALL("ncclReduceScatter", api->reduce_scatter(in->data, o->data, (size_t)o->count, t, op, comm, s));
      return rc;
    }
    /* parts of different sizes: one reduce per part, to its rank (NCCL's needs equal parts) */
    CALL("ncclGroupStart", api->group_start());
    size_t off = 0;
    for (int r = 0; r < size && !rc; r++) {
      const char *src = (const char *)in->data + off * es;
      CALL("ncclReduce", api->reduce(src, r == rank ? o->data : (void *)src, (size_t)w->counts[r], t, op, r, comm, s));
      off += (size_t)w->counts[r];
    }
    CALL("ncclGroupEnd", api->group_end());
    return rc;
  }
  case LT_DIST_ALLTOALL: {
    CALL("ncclGroupStart", api->group_start());
    size_t so = 0, ro = 0;
    for (int r = 0; r < size && !rc; r++) {
      size_t ns = (size_t)w->counts[r], nr = (size_t)w->rcounts[r];
      lt_nccl_dtype ts = move_type(dt, &ns), tr = move_type(dt, &nr);
      if (ns) CALL("ncclSend", api->send((const char *)in->data + so * es, ns, ts, r, comm, s));
      if (nr) CALL("ncclRecv", api->recv((char *)o->data + ro * es, nr, tr, r, comm, s));
      so += (size_t)w->counts[r];
      ro += (size_t)w->rcounts[r];
    }
    CALL("ncclGroupEnd", api->group_end());
    return rc;
  }
  case LT_DIST_GATHER:
  case LT_DIST_SCATTER: {
    /* the root sends (scatter) or receives (gather) one part per rank, its own included */
    bool gather = w->kind == LT_DIST_GATHER;
    size_t part = (size_t)(gather ? in->count : o->count);
    size_t n = part;
    t = move_type(dt, &n);
    CALL("ncclGroupStart", api->group_start());
    if (rank == w->root) {
      for (int r = 0; r < size && !rc; r++) {
        if (!n) break;
        if (gather) CALL("ncclRecv", api->recv((char *)o->data + (size_t)r * part * es, n, t, r, comm, s));
        else CALL("ncclSend", api->send((const char *)in->data + (size_t)r * part * es, n, t, r, comm, s));
      }
    }
    if (n) {
      if (gather) CALL("ncclSend", api->send(in->data, n, t, w->root, comm, s));
      else CALL("ncclRecv", api->recv(o->data, n, t, w->root, comm, s));
    }
    CALL("ncclGroupEnd", api->group_end());
    return rc;
  }
  case LT_DIST_BARRIER:
    /* NCCL has no barrier: a one-element all_reduce that every rank must reach; ldist.c
       waits for it on the device */
    CALL("ncclAllReduce", api->all_reduce((void *)(uintptr_t)c->scratch, (void *)(uintptr_t)c->scratch, 1,
                                          LT_NCCL_FLOAT32, LT_NCCL_SUM, comm, s));
    return rc;
  case LT_DIST_SEND:
  case LT_DIST_RECV: {
    size_t n = (size_t)o->count;
    t = move_type(dt, &n);
    if (w->kind == LT_DIST_SEND) CALL("ncclSend", api->send(o->data, n, t, w->root, comm, s));
    else CALL("ncclRecv", api->recv(o->data, n, t, w->root, comm, s));
    w->source = w->kind == LT_DIST_RECV ? w->root : -1;
    return rc;
  }
  default:
    snprintf(w->err, sizeof w->err, "%s is not an op of the nccl backend", lt_dist_kind_name(w->kind));
    return -1;
  }
}
#undef CALL

static int run(lt_dist_work *w) {
  if (w->kind == LT_DIST_NEW_GROUP) return new_group(w);
  ncomm *c = w->pg->comm;
  lt_cuda_guard g;
  char e[300];
  if (enter(w->pg->device, &g, e, sizeof e) < 0) {
    snprintf(w->err, sizeof w->err, "cuda:%d: %s", w->pg->device, e);
    return -1;
  }
  lt_cu_stream s = (lt_cu_stream)w->stream;
  int rc = issue(w, c->comm, (lt_nccl_stream)s, c);
  nreq *q = NULL;
  if (rc == 0) {
    q = calloc(1, sizeof *q);
    lt_cu_result cr = q ? cu.drv->event_create(&q->ev, LT_CU_EVENT_DISABLE_TIMING) : LT_CU_ERROR_OUT_OF_MEMORY;
    if (cr == LT_CU_SUCCESS) {
      cr = cu.drv->event_record(q->ev, s);
      if (cr != LT_CU_SUCCESS) cu.drv->event_destroy(q->ev);
    }
    if (cr != LT_CU_SUCCESS) {
      free(q);
      q = NULL;
      snprintf(w->err, sizeof w->err, "cuda:%d: recording the completion event failed: %s", w->pg->device,
               cu_name(cr));
      rc = -1;
    } else if (api->fake_mark) {
      q->mark = api->fake_mark(c->comm);
    }
  }
  w->backend_req = q;
  cu.leave(&g);
  return rc;
}

static int pending(lt_dist_work *w) {
  nreq *q = w->backend_req;
  if (!q) return 0;                      /* nothing went to the device (new_group) */
  ncomm *c = w->pg->comm;
  lt_nccl_result ae = LT_NCCL_SUCCESS;
  lt_nccl_result r = api->comm_get_async_error(c->comm, &ae);
  if (r == LT_NCCL_SUCCESS && ae != LT_NCCL_SUCCESS && ae != LT_NCCL_IN_PROGRESS) {
    char e[300];
    nccl_err(e, sizeof e, "the communicator", ae, c->comm);
    snprintf(w->err, sizeof w->err, "NCCL reported an asynchronous error: %s", e);
    return -1;
  }
  lt_cuda_guard g;
  char e[300];
  if (enter(w->pg->device, &g, e, sizeof e) < 0) { snprintf(w->err, sizeof w->err, "%s", e); return -1; }
  lt_cu_result cr = cu.drv->event_query(q->ev);
  cu.leave(&g);
  if (cr == LT_CU_ERROR_NOT_READY) return 1;
  if (cr != LT_CU_SUCCESS) {
    snprintf(w->err, sizeof w->err, "cuda:%d: querying the completion event failed: %s", w->pg->device,
             cu_name(cr));
    return -1;
  }
  if (api->fake_reached && !api->fake_reached(c->comm, q->mark)) return 1;
  return 0;
}

static void release(lt_dist_work *w) {
  nreq *q = w->backend_req;
  w->backend_req = NULL;
  if (!q) return;
  if (cuda_ready()) cu.drv->event_destroy(q->ev);
  free(q);
}

static int no_p2p(lt_dist_work *w) {
  snprintf(w->err, sizeof w->err, "internal: the nccl backend queues point-to-point ops");
  return -1;
}

static void nccl_abort(int code) { lt_dist_mpi_backend.abort(code); }

const lt_dist_backend lt_dist_nccl_backend = {
  "nccl", run, no_p2p, no_p2p, free_group, nccl_abort, true, pending, release,
};
