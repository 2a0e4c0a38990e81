/*
** nccl_fake.c — the fake NCCL: NCCL's entry points done with MPI on host
** memory, for the fake CUDA driver, whose device pointers are host addresses.
** Under it the nccl backend, and DDP on cuda tensors above it, run in CI on
** machines without a GPU.
**
** A communicator is a duplicate of the MPI communicator the backend
** bootstrapped the group over (handed over through fake_bootstrap, nccl.h);
** ncclCommInitRank checks, as the real one would by failing to connect, that
** every rank was given the same unique id, rank and size, and all ranks fail
** together when one is wrong.
**
** Collectives are the MPI backend's own (mpi.c's run on a group wrapping the
** duplicate: the same 16-bit float reductions, bool as bytes, avg), done
** when the call returns: a stuck peer leaves the caller inside MPI, where the
** watchdog finds it, as for the mpi backend. Point-to-point ops are
** MPI_Isend/MPI_Irecv, finished later: inside ncclGroupStart/End they are
** waited for at ncclGroupEnd (all_to_all, gather, scatter: the group is the
** collective; collectives in a group run at once, in the order every rank
** issues them); alone they stay queued, and fake_mark/fake_reached stand in for
** the CUDA event a real stream would give (an op is done when it and every
** op issued before it on the communicator have finished, as on one stream).
** The stream argument is not used: the fake CUDA driver runs work at once.
*/
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "dist.h"
#include "nccl.h"

typedef struct preq { MPI_Request req; uint64_t seq; } preq;

struct lt_nccl_comm_ {
  MPI_Comm mpi;
  lt_dist_pg pg;                /* the duplicate as an MPI group, for mpi.c's run */
  pthread_mutex_t mu;           /* guards the queue below */
  preq *q; int nq, capq;        /* point-to-point ops not yet seen finished, in issue order */
  uint64_t issued;
  lt_nccl_result async_err;
};

static _Thread_local char last_err[300];
static _Thread_local int group_depth;
static _Thread_local MPI_Request *group_reqs;
static _Thread_local int group_n, group_cap;
static _Thread_local lt_nccl_comm group_comm;   /* the communicator of the group's ops */
static void *boot_comm;                         /* MPI_Comm *, for the next comm_init_rank */
static long id_counter;

static lt_nccl_result fail(lt_nccl_result r, const char *fmt, const char *a) {
  snprintf(last_err, sizeof last_err, fmt, a);
  return r;
}

static lt_nccl_result f_get_version(int *v) { if (!v) return LT_NCCL_INVALID_ARGUMENT; *v = 22800; return LT_NCCL_SUCCESS; }

static const char *f_error_string(lt_nccl_result r) {
  switch (r) {
  case LT_NCCL_SUCCESS: return "no error";
  case LT_NCCL_UNHANDLED_CUDA_ERROR: return "unhandled cuda error";
  case LT_NCCL_SYSTEM_ERROR: return "unhandled system error";
  case LT_NCCL_INTERNAL_ERROR: return "internal error";
  case LT_NCCL_INVALID_ARGUMENT: return "invalid argument";
  case LT_NCCL_INVALID_USAGE: return "invalid usage";
  case LT_NCCL_REMOTE_ERROR: return "remote process exited or there was a network error";
  case LT_NCCL_IN_PROGRESS: return "NCCL operation in progress";
  default: return "unknown result code";
  }
}

static const char *f_last_error(lt_nccl_comm c) { (void)c; return last_err; }

static lt_nccl_result f_get_unique_id(lt_nccl_id *id) {
  if (!id) return fail(LT_NCCL_INVALID_ARGUMENT, "%s", "ncclGetUniqueId: id is NULL");
  memset(id, 0, sizeof *id);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  long n = __atomic_add_fetch(&id_counter, 1, __ATOMIC_RELAXED);
  snprintf(id->internal, sizeof id->internal, "lutorch fake nccl id: pid %ld, %lld.%09ld, #%ld",
           (long)getpid(), (long long)ts.tv_sec, ts.tv_nsec, n);
  return LT_NCCL_SUCCESS;
}

static void f_bootstrap(void *mpi_comm) { boot_comm = mpi_comm; }

static lt_nccl_result mpi_fail(const char *what, int rc) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, s, &len);
  snprintf(last_err, sizeof last_err, "fake NCCL: %s: MPI error: %s", what, s);
  return LT_NCCL_SYSTEM_ERROR;
}

static lt_nccl_result f_comm_init_rank(lt_nccl_comm *out, int nranks, lt_nccl_id id, int rank) {
  if (!out) return fail(LT_NCCL_INVALID_ARGUMENT, "%s", "ncclCommInitRank: comm is NULL");
  *out = NULL;
  MPI_Comm *boot = boot_comm;
  boot_comm = NULL;
  if (!boot) return fail(LT_NCCL_INVALID_USAGE, "%s", "fake NCCL: no bootstrap communicator was handed over");
  int size = 0, me = 0;
  MPI_Comm_size(*boot, &size);
  MPI_Comm_rank(*boot, &me);
  /* every rank checks what it was given; then all agree, so none is left half-made */
  lt_nccl_id first = id;
  int rc = MPI_Bcast(first.internal, LT_NCCL_UNIQUE_ID_BYTES, MPI_BYTE, 0, *boot);
  if (rc != MPI_SUCCESS) return mpi_fail("ncclCommInitRank", rc);
  int bad = nranks != size ? 1 : rank != me ? 2 : memcmp(first.internal, id.internal, sizeof id.internal) ? 3 : 0;
  int any = 0;
  rc = MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, *boot);
  if (rc != MPI_SUCCESS) return mpi_fail("ncclCommInitRank", rc);
  if (any) {
    static const char *why[] = {"", "nranks is not the bootstrap group's size", "rank is not this process's rank in the bootstrap group",
                                "the ranks were given different unique ids"};
    return fail(LT_NCCL_INVALID_ARGUMENT, "fake NCCL: ncclCommInitRank: %s", bad ? why[bad] : "another rank's arguments were wrong");
  }
  lt_nccl_comm c = calloc(1, sizeof *c);
  if (!c) return fail(LT_NCCL_SYSTEM_ERROR, "%s", "fake NCCL: out of memory");
  rc = MPI_Comm_dup(*boot, &c->mpi);
  if (rc != MPI_SUCCESS) { free(c); return mpi_fail("ncclCommInitRank", rc); }
  MPI_Comm_set_errhandler(c->mpi, MPI_ERRORS_RETURN);
  pthread_mutex_init(&c->mu, NULL);
  c->pg.backend = &lt_dist_mpi_backend;
  c->pg.comm = &c->mpi;
  c->pg.rank = me;
  c->pg.size = size;
  c->pg.device = -1;
  *out = c;
  return LT_NCCL_SUCCESS;
}

static lt_nccl_result free_comm(lt_nccl_comm c, bool cancel) {
  if (!c) return LT_NCCL_INVALID_ARGUMENT;
  for (int i = 0; i < c->nq; i++) {
    if (cancel) MPI_Cancel(&c->q[i].req);
    MPI_Request_free(&c->q[i].req);
  }
  free(c->q);
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) MPI_Comm_free(&c->mpi);
  pthread_mutex_destroy(&c->mu);
  free(c);
  return LT_NCCL_SUCCESS;
}
static lt_nccl_result f_comm_destroy(lt_nccl_comm c) { return free_comm(c, false); }
static lt_nccl_result f_comm_abort(lt_nccl_comm c) { return free_comm(c, true); }

static lt_nccl_result f_async_error(lt_nccl_comm c, lt_nccl_result *e) {
  if (!c || !e) return LT_NCCL_INVALID_ARGUMENT;
  pthread_mutex_lock(&c->mu);
  *e = c->async_err;
  pthread_mutex_unlock(&c->mu);
  return LT_NCCL_SUCCESS;
}

/* ---- collectives: mpi.c's run on the duplicate ---- */

static int lt_type(lt_nccl_dtype dt, lt_dist_dtype *out) {
  switch (dt) {
  case LT_NCCL_INT8: *out = LT_DIST_I8; return 0;
  case LT_NCCL_UINT8: *out = LT_DIST_U8; return 0;
  case LT_NCCL_INT32: *out = LT_DIST_I32; return 0;
  case LT_NCCL_INT64: *out = LT_DIST_I64; return 0;
  case LT_NCCL_FLOAT16: *out = LT_DIST_F16; return 0;
  case LT_NCCL_FLOAT32: *out = LT_DIST_F32; return 0;
  case LT_NCCL_FLOAT64: *out = LT_DIST_F64; return 0;
  case LT_NCCL_BFLOAT16: *out = LT_DIST_BF16; return 0;
  default: return -1;          /* the unsigned 32/64-bit types: lutorch has none */
  }
}

static int lt_op(lt_nccl_redop op, lt_dist_redop *out) {
  switch (op) {
  case LT_NCCL_SUM: *out = LT_DIST_SUM; return 0;
  case LT_NCCL_PROD: *out = LT_DIST_PROD; return 0;
  case LT_NCCL_MAX: *out = LT_DIST_MAX; return 0;
  case LT_NCCL_MIN: *out = LT_DIST_MIN; return 0;
  case LT_NCCL_AVG: *out = LT_DIST_AVG; return 0;
  default: return -1;
  }
}

/* a work item for mpi.c's run over c's duplicate; LT_NCCL_SUCCESS, or the result code of bad arguments */
static lt_nccl_result setup(lt_dist_work *w, lt_nccl_comm c, lt_dist_kind kind, lt_nccl_dtype dt, const char *fn) {
  memset(w, 0, sizeof *w);
  if (!c) return fail(LT_NCCL_INVALID_ARGUMENT, "%s: comm is NULL", fn);
  w->kind = kind;
  w->pg = &c->pg;
  w->root = -1;
  if (lt_type(dt, &w->out.dtype) < 0) return fail(LT_NCCL_INVALID_ARGUMENT, "%s: a data type the fake does not have", fn);
  w->in.dtype = w->out.dtype;
  return LT_NCCL_SUCCESS;
}

static lt_nccl_result run_mpi(lt_dist_work *w, const char *fn) {
  int rc = lt_dist_mpi_backend.run(w);
  free(w->counts);
  w->counts = NULL;
  if (rc == 0) return LT_NCCL_SUCCESS;
  snprintf(last_err, sizeof last_err, "fake NCCL: %s: %.250s", fn, w->err);
  return LT_NCCL_SYSTEM_ERROR;
}

static size_t esize(const lt_dist_work *w) { return lt_dist_dtype_size(w->out.dtype); }

static lt_nccl_result f_all_reduce(const void *send, void *recv, size_t count, lt_nccl_dtype dt, lt_nccl_redop op,
                                   lt_nccl_comm c, lt_nccl_stream s) {
  (void)s;
  lt_dist_work w;
  lt_nccl_result r = setup(&w, c, LT_DIST_ALLREDUCE, dt, "ncclAllReduce");
  if (r) return r;
  if (lt_op(op, &w.op) < 0) return fail(LT_NCCL_INVALID_ARGUMENT, "%s", "ncclAllReduce: bad op");
  if (send != recv) memmove(recv, send, count * esize(&w));
  w.out.data = recv;
  w.out.count = (int64_t)count;
  return run_mpi(&w, "ncclAllReduce");
}

static lt_nccl_result f_broadcast(const void *send, void *recv, size_t count, lt_nccl_dtype dt, int root,
                                  lt_nccl_comm c, lt_nccl_stream s) {
  (void)s;
  lt_dist_work w;
  lt_nccl_result r = setup(&w, c, LT_DIST_BROADCAST, dt, "ncclBroadcast");
  if (r) return r;
  if (root < 0 || root >= c->pg.size) return fail(LT_NCCL_INVALID_ARGUMENT, "%s", "ncclBroadcast: bad root");
  if (c->pg.rank == root && send != recv) memmove(recv, send, count * esize(&w));
  w.out.data = recv;
  w.out.count = (int64_t)count;
  w.root = root;
  return run_mpi(&w, "ncclBroadcast");
}

static lt_nccl_result f_reduce(const void *send, void *recv, size_t count, lt_nccl_dtype dt, lt_nccl_redop op,
                               int root, lt_nccl_comm c, lt_nccl_stream s) {
  (void)s;
  lt_dist_work w;
  lt_nccl_result r = setup(&w, c, LT_DIST_REDUCE, dt, "ncclReduce");
  if (r) return r;
  if (lt_op(op, &w.op) < 0) return fail(LT_NCCL_INVALID_ARGUMENT, "%s", "ncclReduce: bad op");
  if (root < 0 || root >= c->pg.size) return fail(LT_NCCL_INVALID_ARGUMENT, "%s", "ncclReduce: bad root");
  /* mpi.c reduces in place on the root and sends out.data from the others */
  if (c->pg.rank == root) {
    if (send != recv) memmove(recv, send, count * esize(&w));
    w.out.data = recv;
  } else {
    w.out.data = (void *)send;
  }
  w.out.count = (int64_t)count;
  w.root = root;
  return run_mpi(&w, "ncclReduce");
}

static lt_nccl_result f_all_gather(const void *send, void *recv, size_t count, lt_nccl_dtype dt, lt_nccl_comm c,
                                   lt_nccl_stream s) {
  (void)s;
  lt_dist_work w;
  lt_nccl_result r = setup(&w, c, LT_DIST_ALLGATHER, dt, "ncclAllGather");
  if (r) return r;
  size_t bytes = count * esize(&w);
  void *tmp = NULL;
  /* NCCL's in place (send is this rank's slot of recv): MPI wants distinct buffers */
  if ((const char *)send >= (char *)recv && (const char *)send < (char *)recv + bytes * (size_t)c->pg.size) {
    tmp = malloc(bytes ? bytes : 1);
    if (!tmp) return fail(LT_NCCL_SYSTEM_ERROR, "%s", "fake NCCL: out of memory");
    memcpy(tmp, send, bytes);
    send = tmp;
  }
  w.in.data = (void *)send;
  w.in.count = (int64_t)count;
  w.out.data = recv;
  w.out.count = (int64_t)count * c->pg.size;
  r = run_mpi(&w, "ncclAllGather");
  free(tmp);
  return r;
}

static lt_nccl_result f_reduce_scatter(const void *send, void *recv, size_t count, lt_nccl_dtype dt,
                                       lt_nccl_redop op, lt_nccl_comm c, lt_nccl_stream s) {
  (void)s;
  lt_dist_work w;
  lt_nccl_result r = setup(&w, c, LT_DIST_REDUCE_SCATTER, dt, "ncclReduceScatter");
  if (r) return r;
  if (lt_op(op, &w.op) < 0) return fail(LT_NCCL_INVALID_ARGUMENT, "%s", "ncclReduceScatter: bad op");
  w.counts = malloc(sizeof(int) * (size_t)c->pg.size);
  if (!w.counts) return fail(LT_NCCL_SYSTEM_ERROR, "%s", "fake NCCL: out of memory");
  for (int i = 0; i < c->pg.size; i++) w.counts[i] = (int)count;
  w.in.data = (void *)send;
  w.in.count = (int64_t)count * c->pg.size;
  w.out.data = recv;
  w.out.count = (int64_t)count;
  return run_mpi(&w, "ncclReduceScatter");
}

/* ---- point to point ---- */

static lt_nccl_result p2p(bool is_send, void *buf, size_t count, lt_nccl_dtype dt, int peer, lt_nccl_comm c) {
  const char *fn = is_send ? "ncclSend" : "ncclRecv";
  lt_dist_dtype t;
  if (!c) return fail(LT_NCCL_INVALID_ARGUMENT, "%s: comm is NULL", fn);
  if (lt_type(dt, &t) < 0) return fail(LT_NCCL_INVALID_ARGUMENT, "%s: a data type the fake does not have", fn);
  if (peer < 0 || peer >= c->pg.size) return fail(LT_NCCL_INVALID_ARGUMENT, "%s: bad peer", fn);
  size_t bytes = count * lt_dist_dtype_size(t);
  if (bytes > INT32_MAX) return fail(LT_NCCL_INVALID_ARGUMENT, "%s: more than 2 GiB in one message", fn);
  if (group_depth > 0 && group_comm && group_comm != c)
    return fail(LT_NCCL_INVALID_USAGE, "fake NCCL: %s: one group spans two communicators", fn);
  MPI_Request req;
  int rc = is_send ? MPI_Isend(buf, (int)bytes, MPI_BYTE, peer, 0, c->mpi, &req)
                   : MPI_Irecv(buf, (int)bytes, MPI_BYTE, peer, 0, c->mpi, &req);
  if (rc != MPI_SUCCESS) return mpi_fail(fn, rc);
  if (group_depth > 0) {
    if (group_n == group_cap) {
      int cap = group_cap ? 2 * group_cap : 16;
      MPI_Request *n = realloc(group_reqs, sizeof *n * (size_t)cap);
      if (!n) { MPI_Cancel(&req); MPI_Request_free(&req); return fail(LT_NCCL_SYSTEM_ERROR, "%s", "fake NCCL: out of memory"); }
      group_reqs = n; group_cap = cap;
    }
    group_reqs[group_n++] = req;
    group_comm = c;
    return LT_NCCL_SUCCESS;
  }
  pthread_mutex_lock(&c->mu);
  if (c->nq == c->capq) {
    int cap = c->capq ? 2 * c->capq : 16;
    preq *n = realloc(c->q, sizeof *n * (size_t)cap);
    if (!n) {
      pthread_mutex_unlock(&c->mu);
      MPI_Cancel(&req); MPI_Request_free(&req);
      return fail(LT_NCCL_SYSTEM_ERROR, "%s", "fake NCCL: out of memory");
    }
    c->q = n; c->capq = cap;
  }
  c->q[c->nq].req = req;
  c->q[c->nq].seq = ++c->issued;
  c->nq++;
  pthread_mutex_unlock(&c->mu);
  return LT_NCCL_SUCCESS;
}

static lt_nccl_result f_send(const void *buf, size_t count, lt_nccl_dtype dt, int peer, lt_nccl_comm c, lt_nccl_stream s) {
  (void)s;
  return p2p(true, (void *)buf, count, dt, peer, c);
}
static lt_nccl_result f_recv(void *buf, size_t count, lt_nccl_dtype dt, int peer, lt_nccl_comm c, lt_nccl_stream s) {
  (void)s;
  return p2p(false, buf, count, dt, peer, c);
}

static lt_nccl_result f_group_start(void) { group_depth++; return LT_NCCL_SUCCESS; }

/* the group's sends and receives finish here, as one collective */
static lt_nccl_result f_group_end(void) {
  if (group_depth <= 0) return fail(LT_NCCL_INVALID_USAGE, "%s", "ncclGroupEnd without ncclGroupStart");
  if (--group_depth > 0) return LT_NCCL_SUCCESS;
  int n = group_n, rc = MPI_SUCCESS;
  group_n = 0;
  group_comm = NULL;
  if (n) rc = MPI_Waitall(n, group_reqs, MPI_STATUSES_IGNORE);
  free(group_reqs);
  group_reqs = NULL;
  group_cap = 0;
  return rc == MPI_SUCCESS ? LT_NCCL_SUCCESS : mpi_fail("ncclGroupEnd", rc);
}

/* ---- completion ---- */

static uint64_t f_mark(lt_nccl_comm c) {
  pthread_mutex_lock(&c->mu);
  uint64_t m = c->issued;
  pthread_mutex_unlock(&c->mu);
  return m;
}

static int f_reached(lt_nccl_comm c, uint64_t mark) {
  pthread_mutex_lock(&c->mu);
  int k = 0;
  for (int i = 0; i < c->nq; i++) {          /* test them all: testing is what moves MPI on */
    int done = 0;
    int rc = MPI_Test(&c->q[i].req, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      mpi_fail("a point-to-point op", rc);
      c->async_err = LT_NCCL_SYSTEM_ERROR;
      done = 1;
    }
    if (!done) c->q[k++] = c->q[i];
  }
  c->nq = k;
  bool reached = k == 0 || c->q[0].seq > mark;
  pthread_mutex_unlock(&c->mu);
  return reached;
}

static const lt_nccl_api fake = {
  "fake", f_get_version, f_get_unique_id, f_comm_init_rank, f_comm_destroy, f_comm_abort, f_async_error,
  f_error_string, f_last_error, f_all_reduce, f_broadcast, f_reduce, f_all_gather, f_reduce_scatter,
  f_send, f_recv, f_group_start, f_group_end, f_bootstrap, f_mark, f_reached,
};

const lt_nccl_api *lt_nccl_fake(void) { return &fake; }
