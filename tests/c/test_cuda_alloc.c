/*
** test_cuda_alloc.c — the CUDA caching allocator (src/cuda/alloc.c) against a
** test double of the driver (cu_double.h, not the project's fake driver):
** rounding and pools, splitting and merging, reuse and best fit, stream ties
** and record_stream events, every out-of-memory path and its message, the
** memory fraction, statistics, empty_cache, two devices, threads, and seeded
** random sequences checked step by step against a reference model.
*/
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ctest.h"
#include "cu_double.h"
#include "cuda/alloc.h"
#include "core/error.h"

#define KB ((size_t)1 << 10)
#define MB ((size_t)1 << 20)
#define S1 DBL_STREAM(1)
#define S2 DBL_STREAM(2)
#define S3 DBL_STREAM(3)
#define S4 DBL_STREAM(4)
enum { ALL = LT_CUDA_POOL_ALL, SMALL = LT_CUDA_POOL_SMALL, LARGE = LT_CUDA_POOL_LARGE };

static lt_cuda_alloc *A;

static void fresh(size_t total) {
  dbl_reset(total);
  A = lt_cuda_alloc_new(&dbl_driver, 0);
  if (!A) fprintf(stderr, "%s\n", lt_error_message());
}

#define CHECK_CONSISTENT(a) do { \
    int ck_rc = lt_cuda_alloc_check(a); \
    if (ck_rc) fprintf(stderr, "  %s\n", lt_error_message()); \
    CHECK(ck_rc == 0); \
  } while (0)

/* the allocator is consistent, and gives every segment back when deleted */
static void finish(void) {
  CHECK_CONSISTENT(A);
  lt_cuda_alloc_delete(A);
  A = NULL;
  CHECK_EQ_INT(dbl.nallocs, 0);
  CHECK_EQ_INT(dbl.ctx_refs[0], 0);
  if (dbl.misuse) fprintf(stderr, "  driver misuse: %s\n", dbl.misuse);
  CHECK(dbl.misuse == NULL);
}

static lt_cu_ptr get(size_t n, lt_cu_stream s) {
  lt_cu_ptr p = 0;
  if (lt_cuda_alloc_malloc(A, n, s, &p) < 0) fprintf(stderr, "  unexpected: %s\n", lt_error_message());
  return p;
}

static void put(lt_cu_ptr p) {
  if (lt_cuda_alloc_free(A, p) < 0) fprintf(stderr, "  unexpected: %s\n", lt_error_message());
}

/* the failure of a request that should fail, its message */
static const char *refused(size_t n, lt_cu_stream s) {
  lt_cu_ptr p = 123;
  int rc = lt_cuda_alloc_malloc(A, n, s, &p);
  CHECK_EQ_INT(rc, -1);
  CHECK_EQ_INT(p, 0);
  return rc < 0 ? lt_error_message() : "";
}

#define CHECK_MSG(got, want) do { \
    const char *m_got = (got), *m_want = (want); \
    if (strcmp(m_got, m_want) == 0) atomic_fetch_add(&ctest_passed, 1); \
    else { ctest_fail(__FILE__, __LINE__); fprintf(stderr, "message\n  got  %s\n  want %s\n", m_got, m_want); } \
  } while (0)

static lt_cuda_memory_stats stats(void) {
  lt_cuda_memory_stats s;
  lt_cuda_alloc_stats(A, &s);
  return s;
}

static size_t last_segment(void) { return dbl.nallocs ? dbl.allocs[dbl.nallocs - 1].size : 0; }

static bool has_segment(size_t size) {
  for (int i = 0; i < dbl.nallocs; i++)
    if (dbl.allocs[i].size == size) return true;
  return false;
}


TEST(test_rounding_and_pools) {
  fresh(256 * MB);
  lt_cu_ptr z = 77;
  CHECK_EQ_INT(lt_cuda_alloc_malloc(A, 0, NULL, &z), 0);   /* 0 bytes: no block, no count */
  CHECK_EQ_INT(z, 0);
  CHECK_EQ_INT(stats().num_allocs, 0);

  lt_cu_ptr p = get(1, NULL);
  CHECK(p != 0);
  CHECK_EQ_INT(p % 512, 0);
  CHECK_EQ_INT(lt_cuda_alloc_block_size(A, p), 512);
  CHECK_EQ_INT(last_segment(), 2 * MB);                   /* small: a 2 MiB segment */
  lt_cuda_memory_stats st = stats();
  CHECK_EQ_INT(st.segment[SMALL].current, 1);
  CHECK_EQ_INT(st.segment[LARGE].current, 0);
  CHECK_EQ_INT(st.allocated_bytes[ALL].current, 512);
  CHECK_EQ_INT(st.requested_bytes[ALL].current, 1);
  CHECK_EQ_INT(st.reserved_bytes[SMALL].current, 2 * MB);

  lt_cu_ptr q = get(MB, NULL);                            /* 1 MiB is still small */
  CHECK_EQ_INT(q, p + 512);                               /* from the same segment */
  CHECK_EQ_INT(lt_cuda_alloc_block_size(A, q), MB);
  CHECK_EQ_INT(dbl.n_mem_alloc, 1);

  lt_cu_ptr r = get(MB + 1, NULL);                        /* large: a 20 MiB segment */
  CHECK_EQ_INT(lt_cuda_alloc_block_size(A, r), MB + 512);
  CHECK_EQ_INT(last_segment(), 20 * MB);
  st = stats();
  CHECK_EQ_INT(st.allocation[SMALL].current, 2);
  CHECK_EQ_INT(st.allocation[LARGE].current, 1);
  CHECK_EQ_INT(st.reserved_bytes[LARGE].current, 20 * MB);

  /* another stream each, so that each request takes a segment of its own */
  lt_cu_ptr a = get(10 * MB - 512, S1);                   /* under 10 MiB: 20 MiB */
  CHECK_EQ_INT(last_segment(), 20 * MB);
  lt_cu_ptr b = get(10 * MB, S2);                         /* 10 MiB: itself */
  CHECK_EQ_INT(last_segment(), 10 * MB);
  CHECK_EQ_INT(lt_cuda_alloc_block_size(A, b), 10 * MB);
  lt_cu_ptr c = get(11 * MB + 1, S3);                     /* rounded up to 2 MiB: 12 MiB */
  CHECK_EQ_INT(last_segment(), 12 * MB);
  /* the rest, 1 MiB - 512, is not worth a block of its own */
  CHECK_EQ_INT(lt_cuda_alloc_block_size(A, c), 12 * MB);
  lt_cu_ptr d = get(19 * MB, S4);                         /* rest of exactly 1 MiB: not split */
  CHECK_EQ_INT(lt_cuda_alloc_block_size(A, d), 20 * MB);
  st = stats();
  CHECK_EQ_INT(st.allocated_bytes[LARGE].current, (MB + 512) + (10 * MB - 512) + 10 * MB + 12 * MB + 20 * MB);
  CHECK_EQ_INT(st.requested_bytes[LARGE].current, (MB + 1) + (10 * MB - 512) + 10 * MB + (11 * MB + 1) + 19 * MB);
  CHECK_EQ_INT(st.num_device_alloc, 6);
  CHECK_CONSISTENT(A);
  put(p); put(q); put(r); put(a); put(b); put(c); put(d);
  finish();
}

TEST(test_split_and_coalesce) {
  fresh(256 * MB);
  lt_cu_ptr a = get(512 * KB, NULL), b = get(512 * KB, NULL), c = get(512 * KB, NULL);
  CHECK_EQ_INT(b, a + 512 * KB);
  CHECK_EQ_INT(c, b + 512 * KB);
  lt_cuda_memory_stats st = stats();
  CHECK_EQ_INT(st.inactive_split[SMALL].current, 1);      /* the last 512 KiB */
  CHECK_EQ_INT(st.inactive_split_bytes[SMALL].current, 512 * KB);
  put(b);                                                 /* a hole between a and c */
  st = stats();
  CHECK_EQ_INT(st.inactive_split[SMALL].current, 2);
  CHECK_EQ_INT(st.inactive_split_bytes[SMALL].current, MB);
  CHECK_CONSISTENT(A);
  put(a);                                                 /* merges with b's hole */
  st = stats();
  CHECK_EQ_INT(st.inactive_split[SMALL].current, 2);
  CHECK_EQ_INT(st.inactive_split_bytes[SMALL].current, MB + 512 * KB);
  lt_cu_ptr e = get(MB, NULL);                            /* exactly the merged hole */
  CHECK_EQ_INT(e, a);
  CHECK_EQ_INT(stats().inactive_split[SMALL].current, 1);
  put(e);
  put(c);                                                 /* everything merges: one block again */
  st = stats();
  CHECK_EQ_INT(st.inactive_split[SMALL].current, 0);
  CHECK_EQ_INT(st.inactive_split_bytes[SMALL].current, 0);
  CHECK_EQ_INT(st.segment[SMALL].current, 1);
  CHECK_CONSISTENT(A);

  /* the large pool splits only a rest over 1 MiB */
  lt_cu_ptr x = get(5 * MB, NULL), y = get(5 * MB, NULL);
  CHECK_EQ_INT(y, x + 5 * MB);                            /* from the 15 MiB rest */
  CHECK_EQ_INT(stats().segment[LARGE].current, 1);
  put(x);
  st = stats();
  CHECK_EQ_INT(st.inactive_split[LARGE].current, 2);
  CHECK_EQ_INT(st.inactive_split_bytes[LARGE].current, 15 * MB);
  put(y);
  CHECK_EQ_INT(stats().inactive_split[LARGE].current, 0);
  lt_cu_ptr w = get(19 * MB, NULL);                       /* the whole segment */
  CHECK_EQ_INT(w, x);
  CHECK_EQ_INT(lt_cuda_alloc_block_size(A, w), 20 * MB);
  put(w);
  lt_cu_ptr v = get(18 * MB + 512 * KB, NULL);            /* a 1.5 MiB rest: split */
  CHECK_EQ_INT(lt_cuda_alloc_block_size(A, v), 18 * MB + 512 * KB);
  CHECK_EQ_INT(stats().inactive_split_bytes[LARGE].current, MB + 512 * KB);
  lt_cu_ptr u = get(MB + 512 * KB, NULL);                 /* exactly the rest */
  CHECK_EQ_INT(u, v + 18 * MB + 512 * KB);
  CHECK_EQ_INT(dbl.n_mem_alloc, 2);
  put(v); put(u);
  finish();
}

TEST(test_reuse_and_best_fit) {
  fresh(256 * MB);
  lt_cu_ptr p = get(3 * MB, NULL);
  put(p);
  lt_cuda_memory_stats s0 = stats();
  lt_cu_ptr q = get(3 * MB, NULL);
  CHECK_EQ_INT(q, p);
  CHECK_EQ_INT(stats().cache_hits, s0.cache_hits + 1);
  CHECK_EQ_INT(dbl.n_mem_alloc, 1);
  put(q);

  /* three unsplit cached segments: a request takes the smallest that holds it */
  lt_cu_ptr a = get(12 * MB, S1), b = get(14 * MB, S1), c = get(16 * MB, S1);
  put(a); put(b); put(c);
  lt_cu_ptr x = get(13 * MB, S1), y = get(11 * MB, S1), z = get(15 * MB, S1);
  CHECK_EQ_INT(x, b);
  CHECK_EQ_INT(y, a);
  CHECK_EQ_INT(z, c);
  CHECK_EQ_INT(dbl.n_mem_alloc, 4);
  put(x); put(y); put(z);

  /* holes of 256, 128 and 512 KiB in one small segment */
  lt_cu_ptr h1 = get(256 * KB, S2), g1 = get(4 * KB, S2), h2 = get(128 * KB, S2), g2 = get(4 * KB, S2);
  lt_cu_ptr h3 = get(512 * KB, S2), g3 = get(4 * KB, S2);
  put(h1); put(h2); put(h3);
  CHECK_EQ_INT(get(100 * KB, S2), h2);
  CHECK_EQ_INT(get(200 * KB, S2), h1);
  CHECK_EQ_INT(get(300 * KB, S2), h3);
  CHECK_EQ_INT(dbl.n_mem_alloc, 5);
  CHECK_CONSISTENT(A);
  (void)g1; (void)g2; (void)g3;
  finish();   /* deleting with blocks handed out gives their segments back too */
}

TEST(test_stream_tie) {
  fresh(256 * MB);
  lt_cu_ptr a = get(MB, S1);
  put(a);
  lt_cu_ptr b = get(MB, S2);                              /* S1's cached block is not S2's */
  CHECK(b != a);
  CHECK_EQ_INT(dbl.n_mem_alloc, 2);
  lt_cu_ptr c = get(MB, S1);
  CHECK_EQ_INT(c, a);
  lt_cu_ptr d = get(MB, NULL);                            /* nor the default stream's */
  CHECK(d != a && d != b);
  CHECK_EQ_INT(dbl.n_mem_alloc, 3);
  put(b); put(c); put(d);
  finish();
}

TEST(test_record_stream) {
  fresh(256 * MB);
  lt_cu_ptr a = get(20 * MB, NULL);                       /* a segment of its own */
  CHECK_EQ_INT(lt_cuda_alloc_record_stream(A, a, S1), 0);
  CHECK_EQ_INT(lt_cuda_alloc_record_stream(A, a, S1), 0);  /* once is enough */
  CHECK_EQ_INT(lt_cuda_alloc_record_stream(A, a, NULL), 0); /* its own stream: nothing to wait for */
  int r0 = dbl_nrecords();
  put(a);
  CHECK_EQ_INT(dbl_nrecords(), r0 + 1);
  CHECK(dbl.records[r0].stream == S1);
  lt_cuda_memory_stats st = stats();
  CHECK_EQ_INT(st.allocated_bytes[ALL].current, 0);
  CHECK_EQ_INT(st.active[ALL].current, 1);                /* freed, but waiting */
  CHECK_EQ_INT(st.active_bytes[ALL].current, 20 * MB);
  CHECK_CONSISTENT(A);

  lt_cu_ptr b = get(20 * MB, NULL);                       /* the event is NOT_READY: not a */
  CHECK(b != a);
  CHECK_EQ_INT(dbl.n_mem_alloc, 2);
  put(b);
  dbl_complete(r0);
  lt_cu_ptr c = get(20 * MB, NULL);                       /* the next request sees it done */
  CHECK(c == a || c == b);
  CHECK_EQ_INT(stats().active[ALL].current, 1);
  CHECK_EQ_INT(stats().segment[ALL].current, 2);
  lt_cu_ptr d = get(20 * MB, NULL);
  CHECK((c == a && d == b) || (c == b && d == a));
  CHECK_EQ_INT(dbl.n_mem_alloc, 2);

  /* two other streams: reusable only when both events have completed */
  long made = dbl.n_event_create;
  CHECK_EQ_INT(lt_cuda_alloc_record_stream(A, c, S1), 0);
  CHECK_EQ_INT(lt_cuda_alloc_record_stream(A, c, S2), 0);
  int r1 = dbl_nrecords();
  put(c);
  CHECK_EQ_INT(dbl_nrecords(), r1 + 2);
  CHECK_EQ_INT(dbl.n_event_create, made + 1);             /* the first event came back to the pool */
  dbl_complete(r1);
  lt_cu_ptr e = get(20 * MB, NULL);
  CHECK(e != c);
  dbl_complete(r1 + 1);
  lt_cu_ptr f = get(20 * MB, NULL);
  CHECK_EQ_INT(f, c);
  CHECK_CONSISTENT(A);

  CHECK_EQ_INT(lt_cuda_alloc_record_stream(A, 4096, S1), -1);
  CHECK(strstr(lt_error_message(), "record_stream: 0x1000 is not device memory") != NULL);
  put(d); put(e); put(f);
  finish();
}

/* where no event can be made, a freed block waits for its whole stream */
TEST(test_record_stream_without_events) {
  fresh(256 * MB);
  lt_cu_ptr a = get(20 * MB, NULL);
  CHECK_EQ_INT(lt_cuda_alloc_record_stream(A, a, S1), 0);
  dbl.fail_event_create = true;
  dbl_set_busy(S1, true);
  put(a);
  lt_cu_ptr b = get(20 * MB, NULL);
  CHECK(b != a);
  dbl_set_busy(S1, false);
  lt_cu_ptr c = get(20 * MB, NULL);
  CHECK_EQ_INT(c, a);
  put(b); put(c);
  dbl.fail_event_create = false;
  finish();
}

/* the driver refuses: the cached unsplit segments go first, one big enough, or
** else the largest until enough */
TEST(test_oom_release_some) {
  fresh(64 * MB);
  lt_cu_ptr a = get(20 * MB, NULL), b = get(20 * MB, NULL), c = get(20 * MB, NULL);
  put(a); put(b); put(c);
  lt_cu_ptr d = get(30 * MB, NULL);
  CHECK(d != 0);
  lt_cuda_memory_stats st = stats();
  CHECK_EQ_INT(st.num_device_free, 2);                    /* two 20 MiB segments for 30 */
  CHECK_EQ_INT(st.num_alloc_retries, 0);
  CHECK_EQ_INT(st.num_ooms, 0);
  CHECK_EQ_INT(st.reserved_bytes[ALL].current, 50 * MB);
  put(d);
  finish();

  fresh(64 * MB);
  a = get(12 * MB, NULL); b = get(24 * MB, S1); c = get(26 * MB, S2);
  put(a); put(b); put(c);
  d = get(22 * MB, S3);                                   /* the smallest that is enough: 24 */
  CHECK(d != 0);
  CHECK_EQ_INT(stats().num_device_free, 1);
  CHECK(has_segment(12 * MB) && has_segment(26 * MB) && has_segment(22 * MB) && !has_segment(24 * MB));
  put(d);
  finish();

  /* an allocation the driver fails once is retried after releasing the cache */
  fresh(64 * MB);
  dbl.fail_alloc = 1;
  a = get(MB, NULL);
  CHECK(a != 0);
  CHECK_EQ_INT(stats().num_alloc_retries, 1);
  CHECK_EQ_INT(stats().num_ooms, 0);
  put(a);
  finish();
}

/* then everything cached is released, after waiting for pending events */
TEST(test_oom_release_all) {
  fresh(64 * MB);
  lt_cu_ptr a = get(40 * MB, NULL);
  CHECK_EQ_INT(lt_cuda_alloc_record_stream(A, a, S1), 0);
  put(a);                                                 /* pending: no first-retry candidate */
  lt_cu_ptr b = get(40 * MB, NULL);
  CHECK(b != 0);
  lt_cuda_memory_stats st = stats();
  CHECK_EQ_INT(st.num_sync_all_streams, 1);
  CHECK_EQ_INT(st.num_alloc_retries, 1);
  CHECK_EQ_INT(st.num_device_free, 1);
  CHECK_EQ_INT(st.reserved_bytes[ALL].current, 40 * MB);
  CHECK(dbl.n_event_sync >= 1);
  CHECK_EQ_INT(st.active[ALL].current, 1);
  put(b);

  /* a stream that never finishes keeps its block, and the request fails */
  lt_cu_ptr c = get(40 * MB, NULL);
  CHECK_EQ_INT(c, b);
  CHECK_EQ_INT(lt_cuda_alloc_record_stream(A, c, S2), 0);
  put(c);
  dbl.sync_not_ready = true;
  CHECK_MSG(refused(40 * MB, S1),
            "cuda: out of memory allocating 40.00 MiB on cuda:0 (reserved 40.00 MiB, allocated 0 bytes, "
            "free 24.00 MiB of 64.00 MiB)");
  CHECK_EQ_INT(stats().num_ooms, 1);
  CHECK_EQ_INT(stats().active[ALL].current, 1);
  CHECK_CONSISTENT(A);
  dbl.sync_not_ready = false;
  finish();
}

TEST(test_oom_message) {
  fresh(256 * MB);
  lt_cu_ptr a = get(20 * MB, NULL);
  CHECK_MSG(refused(300 * MB, NULL),
            "cuda: out of memory allocating 300.00 MiB on cuda:0 (reserved 20.00 MiB, "
            "allocated 20.00 MiB, free 236.00 MiB of 256.00 MiB)");
  lt_cuda_memory_stats st = stats();
  CHECK_EQ_INT(st.num_ooms, 1);
  CHECK_EQ_INT(st.num_alloc_retries, 1);
  CHECK_EQ_INT(st.reserved_bytes[ALL].current, 20 * MB);  /* a is handed out: kept */
  lt_cu_ptr b = get(200 * MB, NULL);                      /* and the allocator carries on */
  CHECK(b != 0);
  put(a); put(b);
  finish();

  fresh(16 * MB);   /* the segment is what did not fit: the message says so */
  CHECK_MSG(refused(5 * MB, NULL),
            "cuda: out of memory allocating 5.00 MiB (a 20.00 MiB segment) on cuda:0 (reserved 0 bytes, "
            "allocated 0 bytes, free 16.00 MiB of 16.00 MiB)");
  lt_cu_ptr c = get(15 * MB, NULL);                       /* a 16 MiB segment, whole */
  CHECK_MSG(refused(1000, NULL),
            "cuda: out of memory allocating 1000 bytes (a 2.00 MiB segment) on cuda:0 (reserved 16.00 MiB, "
            "allocated 16.00 MiB, free 0 bytes of 16.00 MiB)");
  put(c);
  finish();

  fresh((size_t)1 << 30);
  CHECK_MSG(refused((size_t)2 << 30, S1),
            "cuda: out of memory allocating 2.00 GiB on cuda:0 (reserved 0 bytes, allocated 0 bytes, "
            "free 1.00 GiB of 1.00 GiB)");
  CHECK(strncmp(refused(SIZE_MAX, NULL), "cuda: out of memory allocating ", 31) == 0);
  CHECK_EQ_INT(stats().num_ooms, 2);
  finish();

  /* a driver failure that is not out of memory is reported as itself */
  fresh(64 * MB);
  dbl.fail_alloc = 1;
  dbl.fail_with = LT_CU_ERROR_UNKNOWN;
  CHECK_MSG(refused(4 * KB, NULL), "cuda: allocating a 2.00 MiB segment on cuda:0 failed: CUDA_ERROR_UNKNOWN");
  CHECK_EQ_INT(stats().num_ooms, 0);
  finish();
}

TEST(test_memory_fraction) {
  fresh(256 * MB);
  CHECK_EQ_INT(lt_cuda_alloc_set_memory_fraction(A, 0.25), 0);
  CHECK_EQ_INT(stats().allowed_bytes, 64 * MB);
  lt_cu_ptr a = get(40 * MB, NULL);
  CHECK(a != 0);
  CHECK_MSG(refused(30 * MB, NULL),
            "cuda: out of memory allocating 30.00 MiB on cuda:0: the memory fraction 0.25 caps reserved "
            "memory at 64.00 MiB (reserved 40.00 MiB, allocated 40.00 MiB, free 216.00 MiB of 256.00 MiB)");
  put(a);
  lt_cu_ptr b = get(30 * MB, S1);                         /* releasing the cached 40 MiB makes room */
  CHECK(b != 0);
  CHECK_EQ_INT(stats().reserved_bytes[ALL].current, 30 * MB);
  CHECK_EQ_INT(stats().num_device_free, 1);
  static const double bad[] = {0, -1, 1.5, NAN};
  for (int i = 0; i < 4; i++) {
    CHECK_EQ_INT(lt_cuda_alloc_set_memory_fraction(A, bad[i]), -1);
    CHECK(strstr(lt_error_message(), "fraction must be in (0, 1]") != NULL);
  }
  CHECK_EQ_INT(lt_cuda_alloc_set_memory_fraction(A, 1), 0);
  lt_cu_ptr c = get(200 * MB, NULL);
  CHECK(c != 0);
  put(b); put(c);
  finish();
}

TEST(test_stats) {
  fresh(256 * MB);
  lt_cu_ptr a = get(1000, NULL), b = get(3 * MB, NULL);
  lt_cuda_memory_stats st = stats();
  CHECK_EQ_INT(st.allocation[ALL].current, 2);
  CHECK_EQ_INT(st.allocation[SMALL].current, 1);
  CHECK_EQ_INT(st.allocation[LARGE].current, 1);
  CHECK_EQ_INT(st.allocated_bytes[SMALL].current, 1024);
  CHECK_EQ_INT(st.allocated_bytes[LARGE].current, 3 * MB);
  CHECK_EQ_INT(st.requested_bytes[ALL].current, 1000 + 3 * MB);
  CHECK_EQ_INT(st.reserved_bytes[ALL].current, 22 * MB);
  CHECK_EQ_INT(st.segment[ALL].current, 2);
  CHECK_EQ_INT(st.active[ALL].current, 2);
  CHECK_EQ_INT(st.num_allocs, 2);
  CHECK_EQ_INT(st.cache_hits, 0);
  put(b);
  st = stats();
  CHECK_EQ_INT(st.allocated_bytes[ALL].current, 1024);
  CHECK_EQ_INT(st.allocated_bytes[ALL].peak, 1024 + 3 * MB);
  CHECK_EQ_INT(st.allocated_bytes[ALL].allocated, 1024 + 3 * MB);
  CHECK_EQ_INT(st.allocated_bytes[ALL].freed, 3 * MB);
  CHECK_EQ_INT(st.allocation[LARGE].peak, 1);
  CHECK_EQ_INT(st.inactive_split[LARGE].current, 0);      /* merged back whole */
  CHECK_EQ_INT(st.inactive_split[SMALL].current, 1);
  CHECK_EQ_INT(st.inactive_split_bytes[SMALL].current, 2 * MB - 1024);
  lt_memory_stats ms;
  lt_cuda_alloc_memory_stats(A, &ms);
  CHECK_EQ_INT(ms.allocated, 1024);
  CHECK_EQ_INT(ms.cached, 22 * MB - 1024);
  CHECK_EQ_INT(ms.peak, 1024 + 3 * MB);
  CHECK_EQ_INT(ms.num_allocs, 2);
  CHECK_EQ_INT(ms.cache_hits, 0);

  lt_cuda_alloc_reset_peak(A);
  st = stats();
  CHECK_EQ_INT(st.allocated_bytes[ALL].peak, 1024);
  CHECK_EQ_INT(st.reserved_bytes[ALL].peak, 22 * MB);
  CHECK_EQ_INT(st.allocation[LARGE].peak, 0);
  b = get(2 * MB, NULL);                                  /* from the cache */
  lt_cuda_alloc_memory_stats(A, &ms);
  CHECK_EQ_INT(ms.cache_hits, 1);
  CHECK_EQ_INT(ms.peak, 1024 + 2 * MB);
  lt_cuda_alloc_reset_accumulated(A);
  st = stats();
  CHECK_EQ_INT(st.num_allocs, 0);
  CHECK_EQ_INT(st.num_device_alloc, 0);
  CHECK_EQ_INT(st.allocated_bytes[ALL].allocated, 0);
  CHECK_EQ_INT(st.allocated_bytes[ALL].freed, 0);
  CHECK_EQ_INT(st.allocated_bytes[ALL].current, 1024 + 2 * MB);   /* currents stay */
  CHECK_EQ_INT(st.allocated_bytes[ALL].peak, 1024 + 2 * MB);
  put(a); put(b);
  finish();
}

TEST(test_empty_cache) {
  fresh(256 * MB);
  lt_cu_ptr a = get(MB, NULL), b = get(20 * MB, NULL), c = get(5 * MB, S1), d = get(30 * MB, S2);
  put(b);                                                 /* cached whole: released */
  CHECK_EQ_INT(lt_cuda_alloc_record_stream(A, d, S3), 0);
  put(d);                                                 /* pending: waited for, released */
  CHECK_EQ_INT(stats().reserved_bytes[ALL].current, 2 * MB + 20 * MB + 20 * MB + 30 * MB);
  CHECK_EQ_INT(lt_cuda_alloc_empty_cache(A), 0);
  lt_cuda_memory_stats st = stats();
  CHECK_EQ_INT(st.reserved_bytes[ALL].current, 2 * MB + 20 * MB);   /* a's and c's: split */
  CHECK_EQ_INT(st.num_device_free, 2);
  CHECK_EQ_INT(st.num_sync_all_streams, 1);
  CHECK_EQ_INT(st.active[ALL].current, 2);
  CHECK_EQ_INT(dbl.nallocs, 2);
  CHECK_CONSISTENT(A);

  /* a pending block whose stream never finishes stays */
  lt_cu_ptr e = get(40 * MB, S2);
  CHECK_EQ_INT(lt_cuda_alloc_record_stream(A, e, S3), 0);
  put(e);
  dbl.sync_not_ready = true;
  CHECK_EQ_INT(lt_cuda_alloc_empty_cache(A), 0);
  CHECK_EQ_INT(stats().reserved_bytes[ALL].current, 2 * MB + 20 * MB + 40 * MB);
  dbl.sync_not_ready = false;

  put(a); put(c);
  CHECK_EQ_INT(lt_cuda_alloc_empty_cache(A), 0);
  st = stats();
  CHECK_EQ_INT(st.reserved_bytes[ALL].current, 0);
  CHECK_EQ_INT(st.segment[ALL].current, 0);
  CHECK_EQ_INT(st.active[ALL].current, 0);
  CHECK_EQ_INT(dbl.nallocs, 0);
  finish();
}

TEST(test_two_devices) {
  dbl_reset(64 * MB);
  lt_cuda_alloc *a0 = lt_cuda_alloc_new(&dbl_driver, 0), *a1 = lt_cuda_alloc_new(&dbl_driver, 1);
  CHECK(a0 && a1);
  CHECK_EQ_INT(lt_cuda_alloc_device(a1), 1);
  dbl_ctx_set_current((lt_cu_ctx)(void *)&dbl_ctx_tag[0]);   /* the caller works on device 0 */
  lt_cu_ptr p = 0, q = 0;
  CHECK_EQ_INT(lt_cuda_alloc_malloc(a1, 3 * MB, NULL, &p), 0);
  CHECK_EQ_INT(dbl.used[1], 20 * MB);
  CHECK_EQ_INT(dbl.used[0], 0);
  CHECK_EQ_INT(dbl_current, 0);                           /* the caller's context is back */
  CHECK_EQ_INT(lt_cuda_alloc_malloc(a0, 3 * MB, NULL, &q), 0);
  CHECK_EQ_INT(dbl.used[0], 20 * MB);
  CHECK_EQ_INT(lt_cuda_alloc_free(a1, q), -1);            /* not a1's */
  CHECK(strstr(lt_error_message(), "cuda:1 did not hand out") != NULL);
  CHECK_EQ_INT(lt_cuda_alloc_malloc(a1, 60 * MB, NULL, &q), -1);
  CHECK(strstr(lt_error_message(), "on cuda:1 (reserved 20.00 MiB") != NULL);
  CHECK_EQ_INT(lt_cuda_alloc_free(a1, p), 0);
  CHECK_EQ_INT(lt_cuda_alloc_empty_cache(a1), 0);         /* mem_free under device 1's context */
  CHECK_EQ_INT(dbl.used[1], 0);
  CHECK_EQ_INT(dbl_current, 0);
  lt_cuda_alloc_delete(a0);
  lt_cuda_alloc_delete(a1);
  CHECK_EQ_INT(dbl.nallocs, 0);
  CHECK_EQ_INT(dbl.ctx_refs[0] + dbl.ctx_refs[1], 0);
  CHECK(dbl.misuse == NULL);
  dbl_ctx_set_current(NULL);
}

TEST(test_bad_free) {
  fresh(64 * MB);
  CHECK_EQ_INT(lt_cuda_alloc_free(A, 0), 0);
  CHECK_EQ_INT(lt_cuda_alloc_free(A, 0x12345600), -1);
  CHECK_MSG(lt_error_message(), "cuda: freeing device memory at 0x12345600, which the caching allocator "
                                "of cuda:0 did not hand out (or has had back already)");
  lt_cu_ptr p = get(100, NULL);
  CHECK_EQ_INT(lt_cuda_alloc_free(A, p + 512), -1);       /* inside a segment, not a block */
  CHECK_EQ_INT(lt_cuda_alloc_free(A, p), 0);
  CHECK_EQ_INT(lt_cuda_alloc_free(A, p), -1);             /* twice */
  CHECK_EQ_INT(lt_cuda_alloc_block_size(A, p), 0);
  finish();
}

/* a cached request allocates no host memory (mallinfo2; under ASan it reads
** glibc's unused heap and proves nothing, but does not fail) */
TEST(test_steady_state_host_memory) {
  fresh(256 * MB);
  lt_cu_ptr keep = get(300 * KB, NULL);
  for (int i = 0; i < 100; i++) {
    lt_cu_ptr p = get(MB, NULL), q = get(5 * MB, S1);
    lt_cuda_alloc_record_stream(A, q, S2);
    put(p); put(q);
    dbl_complete_all();
  }
  size_t before = mallinfo2().uordblks;
  long events = dbl.n_event_create, segs = dbl.n_mem_alloc;
  for (int i = 0; i < 10000 && dbl_nrecords() < DBL_RECORDS - 10; i++) {
    lt_cu_ptr p = get(MB, NULL), q = get(5 * MB, S1);
    lt_cuda_alloc_record_stream(A, q, S2);
    put(p); put(q);
    dbl_complete(dbl_nrecords() - 1);
  }
  CHECK_EQ_INT(mallinfo2().uordblks, before);
  CHECK_EQ_INT(dbl.n_event_create, events);
  CHECK_EQ_INT(dbl.n_mem_alloc, segs);
  put(keep);
  finish();
}

/* ---- threads -------------------------------------------------------------- */

typedef struct { int id; int failures; } worker_arg;

static void *worker(void *p) {
  worker_arg *w = p;
  unsigned seed = 1234u + (unsigned)w->id;
  lt_cu_stream s = DBL_STREAM(1 + w->id % DBL_STREAMS);
  lt_cu_ptr held[8] = {0};
  for (int i = 0; i < 20000; i++) {
    int k = rand_r(&seed) % 8;
    if (held[k]) {
      if (lt_cuda_alloc_free(A, held[k]) < 0) w->failures++;
      held[k] = 0;
    } else {
      size_t n = rand_r(&seed) % 4 ? 1 + (size_t)rand_r(&seed) % MB : MB + (size_t)rand_r(&seed) % (12 * MB);
      if (lt_cuda_alloc_malloc(A, n, s, &held[k]) < 0) w->failures++;
    }
  }
  for (int k = 0; k < 8; k++)
    if (held[k] && lt_cuda_alloc_free(A, held[k]) < 0) w->failures++;
  return NULL;
}

TEST(test_threads) {
  fresh(1024 * MB);
  enum { N = 4 };
  pthread_t t[N];
  worker_arg w[N];
  for (int i = 0; i < N; i++) {
    w[i] = (worker_arg){i, 0};
    pthread_create(&t[i], NULL, worker, &w[i]);
  }
  for (int i = 0; i < N; i++) {
    pthread_join(t[i], NULL);
    CHECK_EQ_INT(w[i].failures, 0);
  }
  lt_cuda_memory_stats st = stats();
  CHECK_EQ_INT(st.allocation[ALL].current, 0);
  CHECK_EQ_INT(st.allocated_bytes[ALL].current, 0);
  CHECK_EQ_INT(st.num_allocs, st.allocation[ALL].allocated);
  CHECK_EQ_INT(st.reserved_bytes[ALL].current, (int64_t)dbl.used[0]);
  finish();
}


/* ---- a seeded random walk against a reference model ----------------------- */

typedef struct { lt_cu_ptr p; size_t req, size; int stream, uses; } mblock;   /* uses: a stream bit set */
typedef struct { lt_cu_ptr lo, hi; int rec[DBL_STREAMS + 1], n; } mguard;     /* freed, guarded by records */

#define MAXLIVE 512
#define MAXGUARD 4096

static mblock live[MAXLIVE];
static int nlive;
static mguard guards[MAXGUARD];
static int nguards;

static size_t round512(size_t n) { return n < 512 ? 512 : (n + 511) & ~(size_t)511; }

static size_t model_segment(size_t r) {
  return r <= MB ? 2 * MB : r < 10 * MB ? 20 * MB : (r + 2 * MB - 1) & ~(2 * MB - 1);
}

static size_t random_size(unsigned *seed) {
  int k = rand_r(seed) % 10;
  if (k < 6) return 1 + (size_t)rand_r(seed) % ((size_t)1 << (rand_r(seed) % 21));
  if (k < 9) return MB + 1 + (size_t)rand_r(seed) % (9 * MB);
  return 10 * MB + (size_t)rand_r(seed) % (30 * MB);
}

static bool guard_active(const mguard *g) {
  for (int i = 0; i < g->n; i++)
    if (!dbl_record_done(g->rec[i])) return true;
  return false;
}

static int cmp_block(const void *x, const void *y) {
  lt_cu_ptr a = ((const mblock *)x)->p, b = ((const mblock *)y)->p;
  return a < b ? -1 : a > b;
}

static int cmp_alloc(const void *x, const void *y) {
  lt_cu_ptr a = ((const dbl_alloc *)x)->p, b = ((const dbl_alloc *)y)->p;
  return a < b ? -1 : a > b;
}

static int model_failures;
#define MODEL_CHECK(cond, ...) do { if (!(cond)) { \
    if (model_failures++ < 5) { fprintf(stderr, "  seed %u step %d: ", seed, step); \
      fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } } while (0)

/* everything the model knows, after each step */
static void model_verify(unsigned seed, int step) {
  int rc = lt_cuda_alloc_check(A);
  MODEL_CHECK(rc == 0, "%s", lt_error_message());
  MODEL_CHECK(dbl.misuse == NULL, "driver misuse: %s", dbl.misuse);
  lt_cuda_memory_stats st = stats();
  int64_t bytes = 0, req = 0;
  for (int i = 0; i < nlive; i++) { bytes += (int64_t)live[i].size; req += (int64_t)live[i].req; }
  MODEL_CHECK(st.allocation[ALL].current == nlive, "allocation %lld, live %d",
              (long long)st.allocation[ALL].current, nlive);
  MODEL_CHECK(st.allocated_bytes[ALL].current == bytes, "allocated_bytes %lld, blocks %lld",
              (long long)st.allocated_bytes[ALL].current, (long long)bytes);
  MODEL_CHECK(st.requested_bytes[ALL].current == req, "requested_bytes");
  MODEL_CHECK(st.reserved_bytes[ALL].current == (int64_t)dbl.used[0], "reserved %lld, driver %zu",
              (long long)st.reserved_bytes[ALL].current, dbl.used[0]);
  MODEL_CHECK(st.segment[ALL].current == dbl.nallocs, "segments %lld, driver %d",
              (long long)st.segment[ALL].current, dbl.nallocs);
  MODEL_CHECK(st.allocated_bytes[ALL].peak >= bytes && st.reserved_bytes[ALL].peak >= (int64_t)dbl.used[0],
              "a peak under its current");
  MODEL_CHECK(st.active_bytes[ALL].current >= bytes, "active under allocated");
  MODEL_CHECK(!st.allowed_bytes || st.reserved_bytes[ALL].current <= st.allowed_bytes, "over the cap");

  /* no two live blocks overlap, each lies in a segment of its own stream */
  static mblock sorted[MAXLIVE];
  static dbl_alloc segs[DBL_ALLOCS];
  memcpy(sorted, live, (size_t)nlive * sizeof *live);
  qsort(sorted, (size_t)nlive, sizeof *sorted, cmp_block);
  memcpy(segs, dbl.allocs, (size_t)dbl.nallocs * sizeof *segs);
  qsort(segs, (size_t)dbl.nallocs, sizeof *segs, cmp_alloc);
  int j = 0;
  for (int i = 0; i < nlive; i++) {
    const mblock *b = &sorted[i];
    if (i + 1 < nlive)
      MODEL_CHECK(b->p + b->size <= sorted[i + 1].p, "blocks at 0x%llx and 0x%llx overlap", b->p, sorted[i + 1].p);
    while (j < dbl.nallocs && segs[j].p + segs[j].size <= b->p) j++;
    bool inside = j < dbl.nallocs && segs[j].p <= b->p && b->p + b->size <= segs[j].p + segs[j].size;
    MODEL_CHECK(inside, "block at 0x%llx (%zu bytes) is in no segment", b->p, b->size);
    if (inside) MODEL_CHECK(segs[j].tag == b->stream + 1, "block of stream %d in a segment of stream %d",
                            b->stream, segs[j].tag - 1);
  }
}

static void model_alloc(unsigned *seedp, unsigned seed, int step, size_t cap) {
  size_t n = random_size(seedp);
  int si = rand_r(seedp) % (DBL_STREAMS + 1);
  lt_cu_ptr p = 0;
  long armed = dbl.fail_alloc;
  int rc = lt_cuda_alloc_malloc(A, n, DBL_STREAM(si), &p);
  for (int i = 0; i < dbl.nallocs; i++)          /* the segment this request made, if any */
    if (!dbl.allocs[i].tag) dbl.allocs[i].tag = si + 1;
  size_t r = round512(n);
  if (rc < 0) {
    const char *m = lt_error_message();
    MODEL_CHECK(strncmp(m, "cuda: out of memory allocating ", 31) == 0, "unexpected failure: %s", m);
    /* out of memory only when the segment truly does not fit, or when the armed
    ** failure hit the last try (the earlier ones were refused by the cap) */
    MODEL_CHECK(dbl.used[0] + model_segment(r) > cap || (armed && !dbl.fail_alloc), "refused %zu bytes with %zu of %zu used: %s", n,
                dbl.used[0], cap, m);
    return;
  }
  size_t size = lt_cuda_alloc_block_size(A, p);
  MODEL_CHECK(p % 512 == 0, "misaligned");
  MODEL_CHECK(size >= r && (r <= MB ? size == r : size - r <= MB), "a %zu-byte request got %zu", n, size);
  for (int g = 0; g < nguards; g++) {
    if (p < guards[g].hi && guards[g].lo < p + size)
      MODEL_CHECK(!guard_active(&guards[g]), "0x%llx handed out while an event guarding it is incomplete", p);
  }
  if (nlive < MAXLIVE) live[nlive++] = (mblock){p, n, size, si, 0};
  else lt_cuda_alloc_free(A, p);
}

static void model_free(unsigned *seedp, unsigned seed, int step) {
  int i = rand_r(seedp) % nlive;
  mblock b = live[i];
  live[i] = live[--nlive];
  int r0 = dbl_nrecords();
  int rc = lt_cuda_alloc_free(A, b.p);
  MODEL_CHECK(rc == 0, "free failed: %s", lt_error_message());
  int r1 = dbl_nrecords(), want = __builtin_popcount((unsigned)b.uses);
  MODEL_CHECK(r1 - r0 == want, "%d events recorded for %d other streams", r1 - r0, want);
  int seen = 0;
  for (int r = r0; r < r1; r++) {
    int si = dbl_stream_index(dbl.records[r].stream);
    MODEL_CHECK(si >= 0 && (b.uses >> si & 1) && !(seen >> si & 1), "an event on stream %d", si);
    seen |= 1 << si;
  }
  if (r1 > r0 && nguards < MAXGUARD) {
    mguard *g = &guards[nguards++];
    g->lo = b.p;
    g->hi = b.p + b.size;
    g->n = 0;
    for (int r = r0; r < r1 && g->n <= DBL_STREAMS; r++) g->rec[g->n++] = r;
  }
}

static void model_run(unsigned seed, int steps, double fraction) {
  const size_t total = 160 * MB;
  fresh(total);
  size_t cap = total;
  if (fraction > 0) {
    lt_cuda_alloc_set_memory_fraction(A, fraction);
    cap = (size_t)(fraction * (double)total);
  }
  nlive = nguards = 0;
  unsigned s = seed;
  static int incomplete[DBL_RECORDS];
  for (int step = 0; step < steps && model_failures < 5; step++) {
    /* allocations outnumber frees until the device is three quarters full */
    int k = rand_r(&s) % 100, alloc_below = dbl.used[0] < cap / 4 * 3 ? 40 : 25;
    if (k < alloc_below || nlive == 0) model_alloc(&s, seed, step, cap);
    else if (k < 66) model_free(&s, seed, step);
    else if (k < 78) {
      int i = rand_r(&s) % nlive, si = rand_r(&s) % (DBL_STREAMS + 1);
      MODEL_CHECK(lt_cuda_alloc_record_stream(A, live[i].p, DBL_STREAM(si)) == 0, "record_stream");
      if (si != live[i].stream) live[i].uses |= 1 << si;
    } else if (k < 96) {
      int n = 0, total_records = dbl_nrecords();
      for (int r = 0; r < total_records; r++)
        if (!dbl.records[r].done) incomplete[n++] = r;
      if (n) dbl_complete(incomplete[rand_r(&s) % n]);
    } else if (k < 97) {
      MODEL_CHECK(lt_cuda_alloc_empty_cache(A) == 0, "empty_cache: %s", lt_error_message());
    } else if (k < 99) {
      dbl.fail_alloc = 1;   /* the next mem_alloc fails once: the retries hide it */
    } else {
      dbl_complete_all();
    }
    /* guards whose events have all completed are history */
    for (int g = 0; g < nguards; )
      if (!guard_active(&guards[g])) guards[g] = guards[--nguards]; else g++;
    model_verify(seed, step);
  }
  lt_cuda_memory_stats st = stats();
  fprintf(stderr, "  seed %u: %d steps, %lld requests (%lld from the cache), %lld segments made, "
          "%lld out of memory, %lld retries, %d events, %lld peak reserved MiB\n", seed, steps,
          (long long)st.num_allocs, (long long)st.cache_hits, (long long)st.num_device_alloc,
          (long long)st.num_ooms, (long long)st.num_alloc_retries, dbl_nrecords(),
          (long long)(st.reserved_bytes[ALL].peak >> 20));
  while (nlive) lt_cuda_alloc_free(A, live[--nlive].p);
  dbl.fail_alloc = 0;
  dbl_complete_all();
  CHECK_EQ_INT(lt_cuda_alloc_empty_cache(A), 0);
  CHECK_EQ_INT(stats().reserved_bytes[ALL].current, 0);
  CHECK_EQ_INT(dbl.nallocs, 0);
  finish();
}

TEST(test_random_model) {
  model_failures = 0;
  for (unsigned seed = 1; seed <= 8; seed++) model_run(seed, 5000, seed % 3 == 0 ? 0.6 : 0);
  CHECK_EQ_INT(model_failures, 0);
}

int main(void) {
  RUN(test_rounding_and_pools);
  RUN(test_split_and_coalesce);
  RUN(test_reuse_and_best_fit);
  RUN(test_stream_tie);
  RUN(test_record_stream);
  RUN(test_record_stream_without_events);
  RUN(test_oom_release_some);
  RUN(test_oom_release_all);
  RUN(test_oom_message);
  RUN(test_memory_fraction);
  RUN(test_stats);
  RUN(test_empty_cache);
  RUN(test_two_devices);
  RUN(test_bad_free);
  RUN(test_steady_state_host_memory);
  RUN(test_threads);
  RUN(test_random_model);
  return ctest_summary();
}
