/*
** nccl.h — NCCL as the nccl backend (nccl.c) sees it: one table of entry
** points, filled either from libnccl.so.2 by dlopen or by the fake NCCL
** (nccl_fake.c).
**
** lutorch_dist.so is never linked with -lnccl: it must load on machines
** without NCCL (every machine of this project but a lent GPU one), where the
** mpi backend still works. The types here are lutorch's own, so no NCCL
** header is needed to build; their values and sizes are nccl.h's (NCCL 2.x:
** ncclResult_t, ncclDataType_t, ncclRedOp_t, a 128-byte ncclUniqueId), which
** lets the dlsym'd entry points be stored directly. A communicator is an
** opaque pointer; a stream is a CUstream/cudaStream_t (the same handle).
**
** The fake runs each collective with MPI on host memory: it is what tests use
** with the fake CUDA driver (LUTORCH_CUDA_DRIVER=fake), whose device pointers
** are host addresses. It needs the MPI communicator of the group being made,
** which the backend hands it through fake_bootstrap just before
** ncclCommInitRank (the real library bootstraps over its own sockets from the
** unique id; the fake has no network of its own).
*/
#ifndef LT_DIST_NCCL_H
#define LT_DIST_NCCL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef int lt_nccl_result;                  /* ncclResult_t */
enum {
  LT_NCCL_SUCCESS = 0, LT_NCCL_UNHANDLED_CUDA_ERROR = 1, LT_NCCL_SYSTEM_ERROR = 2,
  LT_NCCL_INTERNAL_ERROR = 3, LT_NCCL_INVALID_ARGUMENT = 4, LT_NCCL_INVALID_USAGE = 5,
  LT_NCCL_REMOTE_ERROR = 6, LT_NCCL_IN_PROGRESS = 7,
};

typedef int lt_nccl_dtype;                   /* ncclDataType_t */
enum {
  LT_NCCL_INT8 = 0, LT_NCCL_UINT8 = 1, LT_NCCL_INT32 = 2, LT_NCCL_UINT32 = 3, LT_NCCL_INT64 = 4,
  LT_NCCL_UINT64 = 5, LT_NCCL_FLOAT16 = 6, LT_NCCL_FLOAT32 = 7, LT_NCCL_FLOAT64 = 8,
  LT_NCCL_BFLOAT16 = 9,
};

typedef int lt_nccl_redop;                   /* ncclRedOp_t */
enum { LT_NCCL_SUM = 0, LT_NCCL_PROD = 1, LT_NCCL_MAX = 2, LT_NCCL_MIN = 3, LT_NCCL_AVG = 4 };

#define LT_NCCL_UNIQUE_ID_BYTES 128
typedef struct lt_nccl_id { char internal[LT_NCCL_UNIQUE_ID_BYTES]; } lt_nccl_id;   /* ncclUniqueId */
typedef struct lt_nccl_comm_ *lt_nccl_comm;  /* ncclComm_t */
typedef void *lt_nccl_stream;                /* cudaStream_t */

typedef struct lt_nccl_api {
  const char *name;                          /* the library's path, or "fake" */
  lt_nccl_result (*get_version)(int *version);
  lt_nccl_result (*get_unique_id)(lt_nccl_id *id);
  lt_nccl_result (*comm_init_rank)(lt_nccl_comm *comm, int nranks, lt_nccl_id id, int rank);
  lt_nccl_result (*comm_destroy)(lt_nccl_comm comm);
  lt_nccl_result (*comm_abort)(lt_nccl_comm comm);
  lt_nccl_result (*comm_get_async_error)(lt_nccl_comm comm, lt_nccl_result *async_error);
  const char *(*get_error_string)(lt_nccl_result r);
  const char *(*get_last_error)(lt_nccl_comm comm);    /* NULL where the library lacks it */
  lt_nccl_result (*all_reduce)(const void *send, void *recv, size_t count, lt_nccl_dtype dt,
                               lt_nccl_redop op, lt_nccl_comm comm, lt_nccl_stream s);
  lt_nccl_result (*broadcast)(const void *send, void *recv, size_t count, lt_nccl_dtype dt, int root,
                              lt_nccl_comm comm, lt_nccl_stream s);
  lt_nccl_result (*reduce)(const void *send, void *recv, size_t count, lt_nccl_dtype dt,
                           lt_nccl_redop op, int root, lt_nccl_comm comm, lt_nccl_stream s);
  lt_nccl_result (*all_gather)(const void *send, void *recv, size_t sendcount, lt_nccl_dtype dt,
                               lt_nccl_comm comm, lt_nccl_stream s);
  lt_nccl_result (*reduce_scatter)(const void *send, void *recv, size_t recvcount, lt_nccl_dtype dt,
                                   lt_nccl_redop op, lt_nccl_comm comm, lt_nccl_stream s);
  lt_nccl_result (*send)(const void *buf, size_t count, lt_nccl_dtype dt, int peer,
                         lt_nccl_comm comm, lt_nccl_stream s);
  lt_nccl_result (*recv)(void *buf, size_t count, lt_nccl_dtype dt, int peer,
                         lt_nccl_comm comm, lt_nccl_stream s);
  lt_nccl_result (*group_start)(void);
  lt_nccl_result (*group_end)(void);
  /* the fake's own entries, NULL for the real library (see the head of the file):
     fake_bootstrap: the MPI_Comm * of the group the next comm_init_rank makes;
     fake_mark: a point in comm's queue after everything issued so far (like an event);
     fake_reached: 1 once everything issued before the mark has finished (it progresses MPI) */
  void (*fake_bootstrap)(void *mpi_comm);
  uint64_t (*fake_mark)(lt_nccl_comm comm);
  int (*fake_reached)(lt_nccl_comm comm, uint64_t mark);
} lt_nccl_api;

/* The fake NCCL (nccl_fake.c). */
const lt_nccl_api *lt_nccl_fake(void);

#endif
