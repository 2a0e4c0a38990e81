/*
** dist.h — process groups: the backend-neutral layer under torch.distributed.
**
** A process group is a set of ranks that run collectives together. Every
** collective becomes a work item: the calling thread fills it in and queues it,
** one communication thread per process runs the queue in order (so every rank
** issues its collectives in program order, which is what keeps them matched),
** and the caller keeps the work as a handle (async_op) or waits for it. A
** synchronous op that finds the queue empty runs on the calling thread instead:
** that is still program order, and it saves the two thread wake-ups of a
** hand-off, which cost more than a small collective itself. A watchdog thread checks the running item against the
** timeout and takes the whole job down when a peer is stuck or dead.
**
** Backends plug in as a table of functions (lt_dist_backend). MPI (mpi.c) does
** CPU tensors. NCCL (nccl.c) does CUDA tensors: its `run` only queues the
** collective on the caller's current CUDA stream and records an event, so a
** work item it ran is "issued", and finishes on the device later; `pending`
** says when, and this layer keeps issued items in an in-flight list that
** waiters poll and the watchdog times out like running ones. Its communicator
** is bootstrapped by broadcasting ncclUniqueId over the MPI world group.
**
** Nothing here knows about Lua or lutorch tensors: buffers are (pointer, count,
** element type). The Lua binding (ldist.c) turns tensors into buffers.
*/
#ifndef LT_DIST_H
#define LT_DIST_H

#include <stdint.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stddef.h>

/* element types, in lutorch's dtype order (tensor/dtype.h) */
typedef enum lt_dist_dtype {
  LT_DIST_F64, LT_DIST_F32, LT_DIST_F16, LT_DIST_BF16,
  LT_DIST_I64, LT_DIST_I32, LT_DIST_I16, LT_DIST_I8, LT_DIST_U8, LT_DIST_BOOL,
  LT_DIST_NUM_DTYPES
} lt_dist_dtype;
size_t lt_dist_dtype_size(lt_dist_dtype dt);
const char *lt_dist_dtype_name(lt_dist_dtype dt);

typedef enum lt_dist_redop { LT_DIST_SUM, LT_DIST_AVG, LT_DIST_MAX, LT_DIST_MIN, LT_DIST_PROD } lt_dist_redop;
int lt_dist_redop_from_name(const char *s);     /* -1 if unknown */
const char *lt_dist_redop_name(lt_dist_redop op);

typedef enum lt_dist_kind {
  LT_DIST_ALLREDUCE, LT_DIST_BROADCAST, LT_DIST_REDUCE, LT_DIST_ALLGATHER, LT_DIST_REDUCE_SCATTER,
  LT_DIST_ALLTOALL, LT_DIST_GATHER, LT_DIST_SCATTER, LT_DIST_BARRIER, LT_DIST_SEND, LT_DIST_RECV,
  LT_DIST_NEW_GROUP
} lt_dist_kind;
const char *lt_dist_kind_name(lt_dist_kind k);

typedef struct lt_dist_pg lt_dist_pg;
typedef struct lt_dist_work lt_dist_work;
typedef struct lt_dist_backend lt_dist_backend;

/* a contiguous buffer */
typedef struct lt_dist_buf { void *data; int64_t count; lt_dist_dtype dtype; } lt_dist_buf;

enum { LT_DIST_QUEUED, LT_DIST_RUNNING, LT_DIST_DONE, LT_DIST_FAILED };

struct lt_dist_work {
  atomic_int refcount;
  atomic_int state;
  lt_dist_kind kind;
  lt_dist_pg *pg;
  const lt_dist_backend *backend;   /* pg's, kept: handles can outlive their group */
  uint64_t seq;                 /* the group's collective number: same on every rank */
  lt_dist_buf in, out;          /* in-place ops use `out` only */
  int root;                     /* group rank: broadcast/reduce/gather/scatter source or target; p2p peer */
  int tag;
  lt_dist_redop op;
  int *counts;                  /* per-rank element counts (reduce_scatter, all_to_all), owned */
  int *rcounts;
  int source;                   /* recv: the rank the message came from */
  double t_queued, t_start, t_end;   /* lt_dist_clock() times, for instrumentation */
  void *backend_req;            /* p2p: the backend's pending request; nccl: its event (every op) */
  void *stream;                 /* nccl: the caller's current CUDA stream on pg->device at submit */
  atomic_int dev_state;         /* backends with `pending`: 0 on the device (or not issued), 1 done, -1 failed */
  lt_dist_work *inflight_next;  /* work.c's in-flight list */
  lt_dist_pg *new_pg;           /* new_group: the result (NULL where this rank is not a member) */
  const int *new_ranks; int new_nranks;
  char err[400];
  lt_dist_work *next;           /* the queue */
};

struct lt_dist_backend {
  const char *name;
  /* run one collective to completion on the communication thread; 0 or -1 with w->err set */
  int (*run)(lt_dist_work *w);
  /* point to point runs on the caller's thread: start, then poll (1 done, 0 not yet, -1 failed) */
  int (*start_p2p)(lt_dist_work *w);
  int (*test_p2p)(lt_dist_work *w);
  void (*free_group)(lt_dist_pg *pg);
  void (*abort)(int code);
  /* Optional (NULL/false for MPI). queue_p2p: send and recv go through the queue like
     collectives (NCCL: one stream, so program order must hold for them too), run by `run`.
     pending: after `run` succeeded, whether the op is still running on the device (1), done
     (0) or failed (-1, w->err set); thread-safe, never blocks. release: frees w->backend_req
     when the last reference goes. */
  bool queue_p2p;
  int (*pending)(lt_dist_work *w);
  void (*release)(lt_dist_work *w);
};

struct lt_dist_pg {
  const lt_dist_backend *backend;
  void *comm;                   /* the backend's communicator */
  int rank, size;               /* in this group */
  int *world_ranks;             /* [size]: group rank -> world rank */
  uint64_t seq;                 /* collectives issued so far */
  int device;                   /* the CUDA device of the group's tensors; -1: CPU tensors */
};

/* ---- the process-wide layer (work.c) ---- */
double lt_dist_clock(void);                     /* monotonic seconds */
/* start the communication and watchdog threads; timeout in seconds for every collective */
int lt_dist_start(double timeout, int world_rank);
void lt_dist_set_timeout(double timeout);
double lt_dist_get_timeout(void);
/* a new work item for pg (refcount 1, for the caller) */
lt_dist_work *lt_dist_work_new(lt_dist_pg *pg, lt_dist_kind kind);
void lt_dist_work_release(lt_dist_work *w);
/* queue w for the communication thread (takes a reference of its own); p2p starts here */
int lt_dist_submit(lt_dist_work *w);
/* run a synchronous collective to completion: on the calling thread when nothing is queued
   or running (a stuck one is then reported and the job ended by the watchdog), else queued
   behind the others and waited for; 0 done, -1 failed (message in w->err) */
int lt_dist_run(lt_dist_work *w);
/* wait for w: 0 done, -1 failed or timed out (message in w->err or lt_dist_broken()) */
int lt_dist_wait(lt_dist_work *w);
/* 1 done, 0 still running, -1 failed */
int lt_dist_test(lt_dist_work *w);
/* non-NULL once a collective timed out or failed: the job is going down */
const char *lt_dist_broken(void);
/* drain the queue and stop the threads (0), or -1 when work is stuck */
int lt_dist_stop(void);
bool lt_dist_idle(void);

/* ---- MPI (mpi.c) ---- */
extern const lt_dist_backend lt_dist_mpi_backend;
/* MPI_Init_thread with MPI_THREAD_MULTIPLE; the world group; NULL + message on failure */
lt_dist_pg *lt_dist_mpi_init(char *err, size_t errlen);
int lt_dist_mpi_finalize(void);
bool lt_dist_mpi_initialized(void);
void lt_dist_pg_free(lt_dist_pg *pg);

/* ---- NCCL (nccl.c; nccl.h has its API table and the fake) ---- */
extern const lt_dist_backend lt_dist_nccl_backend;
/* whether a NCCL can be had (the fake, or libnccl.so.2 by dlopen); *why says which or why not */
bool lt_dist_nccl_available(const char **why);
/* the NCCL world group over the MPI world group `boot` (which stays the bootstrap: ncclUniqueId
   travels over it); device: the CUDA device of this rank. NULL + message on failure. */
lt_dist_pg *lt_dist_nccl_init(lt_dist_pg *boot, int device, char *err, size_t errlen);
/* the MPI group a nccl group was bootstrapped over (same ranks, in the same order) */
lt_dist_pg *lt_dist_nccl_boot(lt_dist_pg *pg);
/* the caller's current CUDA stream on dev (per thread, from the CUDA module), NULL when none */
void *lt_dist_nccl_current_stream(int dev);
/* the number of CUDA devices (0 without a driver) */
int lt_dist_nccl_device_count(void);
/* NULL when the nccl backend can reduce dt with op, else why not (int16; avg on NCCL < 2.10) */
const char *lt_dist_nccl_check_reduce(lt_dist_dtype dt, lt_dist_redop op);
/* for tests and messages: NCCL's version code (0 when none), and a hash of the last unique id
   this process bootstrapped with (the same on every rank of the group, 0 before any) */
int lt_dist_nccl_version(void);
uint64_t lt_dist_nccl_last_id_hash(void);

#endif
