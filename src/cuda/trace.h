/*
** trace.h — CUDA activity for torch.profiler: while tracing is on, a pair of
** CUDA events on the current stream brackets each kernel launch
** (lt_cuda_launch_begin/end) and each copy through the driver, and collecting
** turns them into intervals on the host's CLOCK_MONOTONIC timeline (each
** device's times are measured from a reference event whose host time is read
** when it completes). Off, each site costs one load and branch.
**
** Under the fake driver an event's time is the host clock when its record ran
** (cuda/fake_driver.c), so the whole path runs in make test; nothing of it has
** run on a GPU.
*/
#ifndef LT_CUDA_TRACE_H
#define LT_CUDA_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { LT_CUDA_TRACE_KERNEL, LT_CUDA_TRACE_MEMCPY };

extern bool lt_cuda_tracing;

/* start or stop tracing; stopping keeps the records until collected */
void lt_cuda_trace_set(bool on);

/* A record for work about to be queued on stream of device dev (its context
** current): the start event is recorded now. Returns its number, or -1 when
** tracing is off or the events cannot be made (then nothing is recorded). */
int lt_cuda_trace_begin(int dev, void *stream, const char *name, int kind, size_t bytes);
/* the end event of record r (-1: nothing) */
void lt_cuda_trace_end(int r);

typedef struct lt_cuda_trace_event {
  char name[64];
  int kind, dev;
  uintptr_t stream;
  int64_t t0, t1;         /* ns on the host's CLOCK_MONOTONIC; t1 < t0 when unreadable */
  int64_t launch_ns;      /* when the host queued it */
  long tid;               /* the host thread that queued it */
  size_t bytes;           /* copies */
} lt_cuda_trace_event;

/* Waits for every record, converts them, drops them (and their events), then
** hands each to fn (outside the lock; fn must not raise a Lua error, or the
** list it is read from leaks). Returns how many. */
int lt_cuda_trace_collect(void (*fn)(void *ud, const lt_cuda_trace_event *e), void *ud);

#endif
