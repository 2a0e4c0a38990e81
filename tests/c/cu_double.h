/*
** cu_double.h — A TEST DOUBLE of the CUDA driver table (cuda/driver.h), made
** for the caching allocator's test (test_cuda_alloc.c) and benchmark
** (bench/cuda_alloc_bench.c) while the project's fake driver
** (src/cuda/fake_driver.c) was being written beside it. It is not that fake:
** once the fake lands, these two programs should use lt_cu_fake_driver() and
** its knobs, and this file goes away (lt_cu_result_name comes from driver.c).
**
** Only what the allocator calls is here: devices with a total-memory cap,
** mem_alloc/mem_free on host memory (aligned_alloc, never touched) with a
** fail switch, primary contexts with a thread-local current one, streams as
** distinct pointers, and events as records the test completes by hand.
** Every entry takes one mutex, so allocators on two threads may share it.
** Include it in one file per program.
*/
#ifndef CU_DOUBLE_H
#define CU_DOUBLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda/driver.h"

#define DBL_DEVICES 2
#define DBL_ALLOCS 4096
#define DBL_EVENTS 1024
#define DBL_RECORDS (1 << 16)
#define DBL_STREAMS 4

typedef struct { lt_cu_ptr p; size_t size; int dev; int tag; } dbl_alloc;
/* one event_record: which event, on which stream, and whether it completed */
typedef struct { int event; lt_cu_stream stream; bool done; } dbl_record;

static struct {
  pthread_mutex_t lock;
  size_t total[DBL_DEVICES], used[DBL_DEVICES];
  int ctx_refs[DBL_DEVICES];
  dbl_alloc allocs[DBL_ALLOCS];
  int nallocs;
  long fail_alloc;               /* the nth mem_alloc from now fails (1: the next); 0: none */
  lt_cu_result fail_with;        /* ...with this result (OUT_OF_MEMORY unless set) */
  bool fail_event_create;
  bool sync_not_ready;           /* synchronizing does not complete anything: NOT_READY */
  bool stream_busy[DBL_STREAMS + 1];   /* stream_query NOT_READY ([0]: the default stream) */
  bool event_made[DBL_EVENTS];
  int event_last[DBL_EVENTS];    /* each event's latest record, -1 none */
  dbl_record records[DBL_RECORDS];
  int nrecords;
  long n_mem_alloc, n_mem_free, n_event_create, n_event_record, n_event_sync, n_stream_sync;
  const char *misuse;            /* the first misuse of the driver seen, or NULL */
} dbl = {.lock = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local int dbl_current = -1;    /* the current context's device */
static char dbl_ctx_tag[DBL_DEVICES], dbl_stream_tag[DBL_STREAMS], dbl_event_tag[DBL_EVENTS];

/* stream i (1 .. DBL_STREAMS); stream 0 is the default stream, NULL */
#define DBL_STREAM(i) ((i) ? (lt_cu_stream)(void *)&dbl_stream_tag[(i) - 1] : (lt_cu_stream)NULL)

static int dbl_stream_index(lt_cu_stream s) {
  if (!s) return 0;
  ptrdiff_t i = (char *)s - dbl_stream_tag;
  return i >= 0 && i < DBL_STREAMS ? (int)i + 1 : -1;
}

static int dbl_event_index(lt_cu_event e) {
  ptrdiff_t i = (char *)e - dbl_event_tag;
  return i >= 0 && i < DBL_EVENTS && dbl.event_made[i] ? (int)i : -1;
}

static void dbl_misuse(const char *what) { if (!dbl.misuse) dbl.misuse = what; }

#define DBL_LOCKED(body) do { pthread_mutex_lock(&dbl.lock); body; pthread_mutex_unlock(&dbl.lock); } while (0)

static lt_cu_result dbl_device_total_mem(size_t *bytes, int dev) {
  if (dev < 0 || dev >= DBL_DEVICES) return LT_CU_ERROR_INVALID_DEVICE;
  DBL_LOCKED(*bytes = dbl.total[dev]);
  return LT_CU_SUCCESS;
}

static lt_cu_result dbl_primary_ctx_retain(lt_cu_ctx *ctx, int dev) {
  if (dev < 0 || dev >= DBL_DEVICES) return LT_CU_ERROR_INVALID_DEVICE;
  DBL_LOCKED(dbl.ctx_refs[dev]++);
  *ctx = (lt_cu_ctx)(void *)&dbl_ctx_tag[dev];
  return LT_CU_SUCCESS;
}

static lt_cu_result dbl_primary_ctx_release(int dev) {
  if (dev < 0 || dev >= DBL_DEVICES) return LT_CU_ERROR_INVALID_DEVICE;
  DBL_LOCKED(if (--dbl.ctx_refs[dev] < 0) dbl_misuse("primary_ctx_release without retain"));
  return LT_CU_SUCCESS;
}

static lt_cu_result dbl_ctx_set_current(lt_cu_ctx ctx) {
  if (!ctx) { dbl_current = -1; return LT_CU_SUCCESS; }
  ptrdiff_t i = (char *)ctx - dbl_ctx_tag;
  if (i < 0 || i >= DBL_DEVICES) return LT_CU_ERROR_INVALID_CONTEXT;
  dbl_current = (int)i;
  return LT_CU_SUCCESS;
}

static lt_cu_result dbl_ctx_get_current(lt_cu_ctx *ctx) {
  *ctx = dbl_current < 0 ? NULL : (lt_cu_ctx)(void *)&dbl_ctx_tag[dbl_current];
  return LT_CU_SUCCESS;
}

static lt_cu_result dbl_mem_alloc(lt_cu_ptr *p, size_t bytes) {
  int dev = dbl_current;
  if (dev < 0) return LT_CU_ERROR_INVALID_CONTEXT;
  lt_cu_result r = LT_CU_SUCCESS;
  pthread_mutex_lock(&dbl.lock);
  dbl.n_mem_alloc++;
  if (dbl.fail_alloc && --dbl.fail_alloc == 0)
    r = dbl.fail_with ? dbl.fail_with : LT_CU_ERROR_OUT_OF_MEMORY;
  else if (bytes == 0) r = LT_CU_ERROR_INVALID_VALUE;
  else if (dbl.used[dev] + bytes > dbl.total[dev]) r = LT_CU_ERROR_OUT_OF_MEMORY;
  else if (dbl.nallocs == DBL_ALLOCS) r = LT_CU_ERROR_OUT_OF_MEMORY;
  else {
    void *h = aligned_alloc(512, (bytes + 511) & ~(size_t)511);
    if (!h) r = LT_CU_ERROR_OUT_OF_MEMORY;
    else {
      *p = (lt_cu_ptr)(uintptr_t)h;
      dbl.allocs[dbl.nallocs++] = (dbl_alloc){*p, bytes, dev, 0};
      dbl.used[dev] += bytes;
    }
  }
  pthread_mutex_unlock(&dbl.lock);
  return r;
}

static lt_cu_result dbl_mem_free(lt_cu_ptr p) {
  lt_cu_result r = LT_CU_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&dbl.lock);
  dbl.n_mem_free++;
  for (int i = 0; i < dbl.nallocs; i++) {
    if (dbl.allocs[i].p != p) continue;
    if (dbl.allocs[i].dev != dbl_current) { dbl_misuse("mem_free under another device's context"); break; }
    free((void *)(uintptr_t)p);
    dbl.used[dbl.allocs[i].dev] -= dbl.allocs[i].size;
    dbl.allocs[i] = dbl.allocs[--dbl.nallocs];
    r = LT_CU_SUCCESS;
    break;
  }
  if (r != LT_CU_SUCCESS) dbl_misuse("mem_free of memory the driver did not give");
  pthread_mutex_unlock(&dbl.lock);
  return r;
}

static lt_cu_result dbl_mem_get_info(size_t *free_bytes, size_t *total_bytes) {
  int dev = dbl_current;
  if (dev < 0) return LT_CU_ERROR_INVALID_CONTEXT;
  DBL_LOCKED(*free_bytes = dbl.total[dev] - dbl.used[dev]; *total_bytes = dbl.total[dev]);
  return LT_CU_SUCCESS;
}

/* the stream's work is done: no incomplete record on it, and not held busy */
static bool dbl_stream_idle(int si, lt_cu_stream s) {
  if (dbl.stream_busy[si]) return false;
  for (int i = 0; i < dbl.nrecords; i++)
    if (!dbl.records[i].done && dbl.records[i].stream == s) return false;
  return true;
}

static lt_cu_result dbl_stream_query(lt_cu_stream s) {
  int si = dbl_stream_index(s);
  if (si < 0) return LT_CU_ERROR_INVALID_HANDLE;
  bool idle;
  DBL_LOCKED(idle = dbl_stream_idle(si, s));
  return idle ? LT_CU_SUCCESS : LT_CU_ERROR_NOT_READY;
}

static lt_cu_result dbl_stream_synchronize(lt_cu_stream s) {
  int si = dbl_stream_index(s);
  if (si < 0) return LT_CU_ERROR_INVALID_HANDLE;
  lt_cu_result r = LT_CU_SUCCESS;
  pthread_mutex_lock(&dbl.lock);
  dbl.n_stream_sync++;
  if (dbl.sync_not_ready) r = dbl_stream_idle(si, s) ? LT_CU_SUCCESS : LT_CU_ERROR_NOT_READY;
  else {
    dbl.stream_busy[si] = false;
    for (int i = 0; i < dbl.nrecords; i++)
      if (dbl.records[i].stream == s) dbl.records[i].done = true;
  }
  pthread_mutex_unlock(&dbl.lock);
  return r;
}

static lt_cu_result dbl_event_create(lt_cu_event *e, unsigned flags) {
  lt_cu_result r = LT_CU_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock(&dbl.lock);
  dbl.n_event_create++;
  if (dbl_current < 0) r = LT_CU_ERROR_INVALID_CONTEXT;
  else if (!dbl.fail_event_create)
    for (int i = 0; i < DBL_EVENTS; i++)
      if (!dbl.event_made[i]) {
        dbl.event_made[i] = true;
        dbl.event_last[i] = -1;
        *e = (lt_cu_event)(void *)&dbl_event_tag[i];
        r = LT_CU_SUCCESS;
        break;
      }
  pthread_mutex_unlock(&dbl.lock);
  return r;
}

static lt_cu_result dbl_event_destroy(lt_cu_event e) {
  lt_cu_result r = LT_CU_SUCCESS;
  pthread_mutex_lock(&dbl.lock);
  int i = dbl_event_index(e);
  if (i < 0) r = LT_CU_ERROR_INVALID_HANDLE;
  else dbl.event_made[i] = false;
  pthread_mutex_unlock(&dbl.lock);
  return r;
}

static lt_cu_result dbl_event_record(lt_cu_event e, lt_cu_stream s) {
  lt_cu_result r = LT_CU_SUCCESS;
  pthread_mutex_lock(&dbl.lock);
  dbl.n_event_record++;
  int i = dbl_event_index(e);
  if (i < 0 || dbl_stream_index(s) < 0) r = LT_CU_ERROR_INVALID_HANDLE;
  else if (dbl.nrecords == DBL_RECORDS) r = LT_CU_ERROR_UNKNOWN;
  else {
    int last = dbl.event_last[i];
    if (last >= 0 && !dbl.records[last].done) dbl_misuse("an event re-recorded before it completed");
    dbl.records[dbl.nrecords] = (dbl_record){i, s, false};
    dbl.event_last[i] = dbl.nrecords++;
  }
  pthread_mutex_unlock(&dbl.lock);
  return r;
}

static lt_cu_result dbl_event_query(lt_cu_event e) {
  lt_cu_result r;
  pthread_mutex_lock(&dbl.lock);
  int i = dbl_event_index(e);
  if (i < 0) r = LT_CU_ERROR_INVALID_HANDLE;
  else {
    int last = dbl.event_last[i];
    r = last < 0 || dbl.records[last].done ? LT_CU_SUCCESS : LT_CU_ERROR_NOT_READY;
  }
  pthread_mutex_unlock(&dbl.lock);
  return r;
}

/* waiting completes the event, unless sync_not_ready */
static lt_cu_result dbl_event_synchronize(lt_cu_event e) {
  lt_cu_result r = LT_CU_SUCCESS;
  pthread_mutex_lock(&dbl.lock);
  dbl.n_event_sync++;
  int i = dbl_event_index(e);
  if (i < 0) r = LT_CU_ERROR_INVALID_HANDLE;
  else {
    int last = dbl.event_last[i];
    if (last >= 0 && !dbl.records[last].done) {
      if (dbl.sync_not_ready) r = LT_CU_ERROR_NOT_READY;
      else dbl.records[last].done = true;
    }
  }
  pthread_mutex_unlock(&dbl.lock);
  return r;
}

/* the test's hands: complete one record, every record, or what is on a stream */
__attribute__((unused)) static void dbl_complete(int record) { DBL_LOCKED(dbl.records[record].done = true); }
__attribute__((unused)) static void dbl_complete_all(void) {
  DBL_LOCKED(for (int i = 0; i < dbl.nrecords; i++) dbl.records[i].done = true);
}
__attribute__((unused)) static bool dbl_record_done(int record) { bool d; DBL_LOCKED(d = dbl.records[record].done); return d; }
__attribute__((unused)) static int dbl_nrecords(void) { int n; DBL_LOCKED(n = dbl.nrecords); return n; }
__attribute__((unused)) static void dbl_set_busy(lt_cu_stream s, bool busy) { DBL_LOCKED(dbl.stream_busy[dbl_stream_index(s)] = busy); }

/* the entries the allocator does not call are left NULL */
static lt_cu_driver dbl_driver = {
  .name = "test double",
  .device_total_mem = dbl_device_total_mem,
  .primary_ctx_retain = dbl_primary_ctx_retain,
  .primary_ctx_release = dbl_primary_ctx_release,
  .ctx_set_current = dbl_ctx_set_current,
  .ctx_get_current = dbl_ctx_get_current,
  .mem_alloc = dbl_mem_alloc,
  .mem_free = dbl_mem_free,
  .mem_get_info = dbl_mem_get_info,
  .stream_synchronize = dbl_stream_synchronize,
  .stream_query = dbl_stream_query,
  .event_create = dbl_event_create,
  .event_destroy = dbl_event_destroy,
  .event_record = dbl_event_record,
  .event_query = dbl_event_query,
  .event_synchronize = dbl_event_synchronize,
};

/* back to the start: 2 devices of `total` bytes, nothing allocated, armed or held */
static void dbl_reset(size_t total) {
  pthread_mutex_lock(&dbl.lock);
  for (int i = 0; i < dbl.nallocs; i++) free((void *)(uintptr_t)dbl.allocs[i].p);
  dbl.nallocs = 0;
  for (int d = 0; d < DBL_DEVICES; d++) { dbl.total[d] = total; dbl.used[d] = 0; dbl.ctx_refs[d] = 0; }
  dbl.fail_alloc = 0;
  dbl.fail_with = 0;
  dbl.fail_event_create = dbl.sync_not_ready = false;
  memset(dbl.stream_busy, 0, sizeof dbl.stream_busy);
  memset(dbl.event_made, 0, sizeof dbl.event_made);
  dbl.nrecords = 0;
  dbl.n_mem_alloc = dbl.n_mem_free = dbl.n_event_create = dbl.n_event_record = 0;
  dbl.n_event_sync = dbl.n_stream_sync = 0;
  dbl.misuse = NULL;
  pthread_mutex_unlock(&dbl.lock);
  dbl_current = -1;
}


#endif
