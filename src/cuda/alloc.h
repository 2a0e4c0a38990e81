/*
** alloc.h — the CUDA caching allocator: one per device, plain C over the
** driver seam (cuda/driver.h), with PyTorch's policy.
**
** Device memory is taken from the driver in segments and never given back
** except by empty_cache, an out-of-memory retry or lt_cuda_alloc_delete; a
** freed block goes back to the allocator's cache, where the next request of
** its stream finds it without a driver call.
**
**   - A request is rounded up to 512 bytes. Requests of up to 1 MiB come from
**     the small pool, carved out of 2 MiB segments; larger ones from the
**     large pool, whose segments are 20 MiB for requests under 10 MiB and the
**     request rounded up to 2 MiB from there on.
**   - Within a pool the smallest free block of the request's stream that is
**     big enough is taken (best fit), and split when the rest is worth
**     keeping (small pool: any rest, which is >= 512 bytes; large pool: a
**     rest over 1 MiB). A freed block merges with free neighbours of its
**     segment.
**   - A block belongs to the stream it was allocated on and is reused only
**     by requests on that stream. A block used on other streams as well
**     (lt_cuda_alloc_record_stream) is, when freed, kept out of the cache
**     until events recorded on those streams at the free have completed; the
**     next allocation polls them.
**   - When the driver (or the memory fraction) refuses a segment, cached
**     segments that are not split are released (the smallest big enough, or
**     the largest ones until enough) and the segment is asked for again; then
**     every cached segment that is not split is released, after waiting for
**     the pending events, and it is asked for a last time; then the request
**     fails with "cuda: out of memory allocating ..." naming the request,
**     the device, the reserved and allocated bytes and the device's free and
**     total memory.
**
** Every function takes the allocator's mutex: the allocator may be shared by
** threads. Errors go to lutorch's error slot (core/error.h); the functions
** that can fail return 0 or -1. No host memory is allocated per request once
** the allocator has seen as many blocks as it will hold at once: block
** records, stream-use records and events are pooled.
**
** This has only run against a test double of the driver (tests/c/), not on
** a GPU.
*/
#ifndef LT_CUDA_ALLOC_H
#define LT_CUDA_ALLOC_H

#include <stddef.h>
#include <stdint.h>
#include "core/alloc.h"
#include "cuda/driver.h"

typedef struct lt_cuda_alloc lt_cuda_alloc;

/* PyTorch's statistic: the current value, its high-water mark, and the
** running totals of what was added and taken away */
typedef struct lt_cuda_stat {
  int64_t current, peak, allocated, freed;
} lt_cuda_stat;

/* each statistic is kept for both pools together and for each pool (PyTorch's
** StatType: "all", "small_pool", "large_pool") */
enum { LT_CUDA_POOL_ALL, LT_CUDA_POOL_SMALL, LT_CUDA_POOL_LARGE, LT_CUDA_POOL_KINDS };

/* torch.cuda.memory_stats(): the fields have PyTorch's names and meanings */
typedef struct lt_cuda_memory_stats {
  lt_cuda_stat allocation[LT_CUDA_POOL_KINDS];       /* blocks handed out */
  lt_cuda_stat segment[LT_CUDA_POOL_KINDS];          /* segments taken from the driver */
  lt_cuda_stat active[LT_CUDA_POOL_KINDS];           /* handed out, or freed and waiting on events */
  lt_cuda_stat inactive_split[LT_CUDA_POOL_KINDS];   /* cached blocks in split segments */
  lt_cuda_stat allocated_bytes[LT_CUDA_POOL_KINDS];  /* sizes of the blocks handed out */
  lt_cuda_stat reserved_bytes[LT_CUDA_POOL_KINDS];   /* sizes of the segments */
  lt_cuda_stat active_bytes[LT_CUDA_POOL_KINDS];
  lt_cuda_stat inactive_split_bytes[LT_CUDA_POOL_KINDS];
  lt_cuda_stat requested_bytes[LT_CUDA_POOL_KINDS];  /* bytes asked for, before rounding */
  int64_t num_alloc_retries;     /* segment requests retried after releasing the whole cache */
  int64_t num_ooms;              /* requests that failed with out of memory */
  int64_t num_sync_all_streams;  /* waits on every pending event (release of the whole cache) */
  int64_t num_device_alloc;      /* mem_alloc calls that succeeded */
  int64_t num_device_free;       /* mem_free calls */
  int64_t num_allocs;            /* requests (of more than 0 bytes) */
  int64_t cache_hits;            /* requests served without a driver call */
  int64_t allowed_bytes;         /* the memory fraction's cap on reserved bytes; 0: none */
} lt_cuda_memory_stats;

/* The allocator of device `dev` of driver `drv` (which must outlive it). It
** retains the device's primary context and makes it current around its own
** driver calls, so any thread may use it. NULL with the error set. */
lt_cuda_alloc *lt_cuda_alloc_new(const lt_cu_driver *drv, int dev);
/* Waits for pending events and gives every segment back to the driver,
** blocks still handed out included; NULL is ignored. */
void lt_cuda_alloc_delete(lt_cuda_alloc *a);
int lt_cuda_alloc_device(const lt_cuda_alloc *a);

/* nbytes of device memory for work on `stream`: *out is its address, 512-byte
** aligned (0 for 0 bytes, which counts for nothing). 0 or -1 (out of memory
** or a driver failure, *out = 0). */
int lt_cuda_alloc_malloc(lt_cuda_alloc *a, size_t nbytes, lt_cu_stream stream, lt_cu_ptr *out);
/* Give back a block lt_cuda_alloc_malloc handed out (0 is ignored); -1 for an
** address it did not hand out. */
int lt_cuda_alloc_free(lt_cuda_alloc *a, lt_cu_ptr p);
/* The block at p is also used by work queued on `stream`: when it is freed, it
** is reused only after that work (queued by then) is done. Its own stream
** needs no record. -1 when p is not a block handed out. */
int lt_cuda_alloc_record_stream(lt_cuda_alloc *a, lt_cu_ptr p, lt_cu_stream stream);
/* the size of the block handed out at p (the rounded request, or more when a
** large block's rest was not worth splitting off); 0 when p is not one */
size_t lt_cuda_alloc_block_size(lt_cuda_alloc *a, lt_cu_ptr p);

/* Give every cached segment that is not split back to the driver, after
** waiting for the events that keep freed blocks out of the cache. */
int lt_cuda_alloc_empty_cache(lt_cuda_alloc *a);
/* Cap reserved bytes at fraction (0 < fraction <= 1) of the device's total
** memory: a segment past the cap is refused as if the device were full. */
int lt_cuda_alloc_set_memory_fraction(lt_cuda_alloc *a, double fraction);

void lt_cuda_alloc_stats(lt_cuda_alloc *a, lt_cuda_memory_stats *out);
/* the core's summary (backend memory_stats): allocated, cached = reserved -
** allocated, peak of allocated, requests, cache hits */
void lt_cuda_alloc_memory_stats(lt_cuda_alloc *a, lt_memory_stats *out);
void lt_cuda_alloc_reset_peak(lt_cuda_alloc *a);          /* every peak := current */
void lt_cuda_alloc_reset_accumulated(lt_cuda_alloc *a);   /* totals and counters := 0 */

/* Walk every structure and recompute every current statistic: 0, or -1 with
** the first inconsistency in the error slot. For tests; takes time linear in
** the number of blocks. */
int lt_cuda_alloc_check(lt_cuda_alloc *a);

#endif
