/*
** test_cuda_driver.c — the driver seam (src/cuda/driver.h): every entry of
** the fake driver and its knobs, then lt_cu_driver_open.
**
** The fake: devices, contexts (per thread, released to zero resets the
** device), memory (tags, bounds, bad and double frees, pinned memory, the
** nth allocation failing), streams (FIFO order, held streams, the legacy
** default stream, destroying a stream with queued work), events (records on
** held streams, timing, waits across streams), modules, counters, reset,
** threads and fork.
**
** lt_cu_driver_open decides once per process, so each case runs in a child:
** the program runs itself again (--open CASE) with the environment the case
** needs and adds the child's checks to its own. The dlopen path runs against
** stand-ins for libcuda.so.1 (tests/fake/libcuda_stub.c, built into
** cudastub/ beside this program): a complete one, one missing a symbol, one
** of an older driver; and, without them, against this machine: here no
** driver is installed and the reason must say libcuda.so.1 was not found (on
** a machine with a driver, the real one is opened or its failure reported).
*/
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ctest.h"
#include "cuda/driver.h"

extern char **environ;

#define OK LT_CU_SUCCESS
#define EQ(call, want) CHECK_EQ_INT((call), (want))
#define MiB ((size_t)1 << 20)

static const lt_cu_driver *D;
static lt_cu_ctx ctx0, ctx1;

/* a fresh fake with both primary contexts retained and device 0's current */
static void fresh(void) {
  lt_cu_fake_reset();
  D = lt_cu_fake_driver();
  EQ(D->primary_ctx_retain(&ctx0, 0), OK);
  EQ(D->primary_ctx_retain(&ctx1, 1), OK);
  EQ(D->ctx_set_current(ctx0), OK);
}

static void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static void check_str(const char *file, int line, const char *got, const char *want) {
  if (got && strcmp(got, want) == 0) {
    atomic_fetch_add(&ctest_passed, 1);
  } else {
    ctest_fail(file, line);
    fprintf(stderr, "\"%s\" == \"%s\"\n", got ? got : "(null)", want);
  }
}
#define CHECK_STR(got, want) check_str(__FILE__, __LINE__, (got), (want))
#define CHECK_HAS(s, part) do { \
    const char *ctest_s = (s); \
    if (ctest_s && strstr(ctest_s, part)) atomic_fetch_add(&ctest_passed, 1); \
    else { ctest_fail(__FILE__, __LINE__); \
      fprintf(stderr, "\"%s\" contains \"%s\"\n", ctest_s ? ctest_s : "(null)", part); } \
  } while (0)

/* ---------------------------------------------------------------- names */

static void *name_thread(void *arg) {
  return (void *)(strcmp(lt_cu_result_name(4242), "CUDA_ERROR_4242") == 0 ? arg : NULL);
}

TEST(result_names) {
  CHECK_STR(lt_cu_result_name(LT_CU_SUCCESS), "CUDA_SUCCESS");
  CHECK_STR(lt_cu_result_name(LT_CU_ERROR_OUT_OF_MEMORY), "CUDA_ERROR_OUT_OF_MEMORY");
  CHECK_STR(lt_cu_result_name(LT_CU_ERROR_NO_DEVICE), "CUDA_ERROR_NO_DEVICE");
  CHECK_STR(lt_cu_result_name(LT_CU_ERROR_NOT_READY), "CUDA_ERROR_NOT_READY");
  CHECK_STR(lt_cu_result_name(LT_CU_ERROR_UNKNOWN), "CUDA_ERROR_UNKNOWN");
  CHECK_STR(lt_cu_result_name(12345), "CUDA_ERROR_12345");
  CHECK_STR(lt_cu_result_name(-1), "CUDA_ERROR_-1");
  /* the buffer for unnamed values is per thread */
  const char *mine = lt_cu_result_name(777);
  pthread_t t;
  void *r = NULL;
  pthread_create(&t, NULL, name_thread, (void *)1);
  pthread_join(t, &r);
  CHECK(r != NULL);
  CHECK_STR(mine, "CUDA_ERROR_777");
}

/* ---------------------------------------------------------------- devices */

TEST(fake_table) {
  D = lt_cu_fake_driver();
  CHECK(D != NULL);
  CHECK(D == lt_cu_fake_driver());
  CHECK_STR(D->name, "fake");
  /* every entry is filled */
  const char *p = (const char *)&D->init, *end = (const char *)(D + 1);
  int n = 0;
  for (; p < end; p += sizeof(void *), n++) {
    void *f;
    memcpy(&f, p, sizeof f);
    CHECK(f != NULL);
  }
  CHECK_EQ_INT(n, 35);
}

TEST(fake_devices) {
  lt_cu_fake_reset();
  D = lt_cu_fake_driver();
  int n = -1, v = 0;
  size_t total = 0;
  char name[64];
  EQ(D->init(0), OK);
  EQ(D->init(1), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->driver_version(&v), OK);
  CHECK_EQ_INT(v, 13000);
  EQ(D->driver_version(NULL), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->device_count(&n), OK);
  CHECK_EQ_INT(n, 2);
  EQ(D->device_count(NULL), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->device_name(name, sizeof name, 1), OK);
  CHECK_HAS(name, "fake");
  CHECK_HAS(name, "1");
  EQ(D->device_name(name, 5, 0), OK);          /* cut to fit, terminated */
  CHECK_EQ_INT(strlen(name), 4);
  EQ(D->device_name(name, 0, 0), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->device_name(NULL, 8, 0), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->device_name(name, sizeof name, 2), LT_CU_ERROR_INVALID_DEVICE);
  EQ(D->device_name(name, sizeof name, -1), LT_CU_ERROR_INVALID_DEVICE);
  EQ(D->device_total_mem(&total, 0), OK);
  CHECK_EQ_INT(total, (size_t)1 << 30);
  EQ(D->device_total_mem(&total, 2), LT_CU_ERROR_INVALID_DEVICE);
  EQ(D->device_total_mem(NULL, 0), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->device_attribute(&v, LT_CU_ATTR_COMPUTE_CAPABILITY_MAJOR, 0), OK);
  CHECK_EQ_INT(v, 9);
  EQ(D->device_attribute(&v, LT_CU_ATTR_COMPUTE_CAPABILITY_MINOR, 1), OK);
  CHECK_EQ_INT(v, 0);
  EQ(D->device_attribute(&v, LT_CU_ATTR_MAX_THREADS_PER_BLOCK, 0), OK);
  CHECK_EQ_INT(v, 1024);
  EQ(D->device_attribute(&v, LT_CU_ATTR_MULTIPROCESSOR_COUNT, 0), OK);
  CHECK(v > 0);
  EQ(D->device_attribute(&v, 9999, 0), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->device_attribute(&v, LT_CU_ATTR_MULTIPROCESSOR_COUNT, 5), LT_CU_ERROR_INVALID_DEVICE);
  EQ(D->device_attribute(NULL, LT_CU_ATTR_MULTIPROCESSOR_COUNT, 0), LT_CU_ERROR_INVALID_VALUE);
  /* the knobs */
  lt_cu_fake_set_device_count(5);
  EQ(D->device_count(&n), OK);
  CHECK_EQ_INT(n, 5);
  EQ(D->device_name(name, sizeof name, 4), OK);
  lt_cu_fake_set_device_count(0);
  EQ(D->device_count(&n), OK);
  CHECK_EQ_INT(n, 0);
  EQ(D->device_name(name, sizeof name, 0), LT_CU_ERROR_INVALID_DEVICE);
  lt_cu_ctx c;
  EQ(D->primary_ctx_retain(&c, 0), LT_CU_ERROR_INVALID_DEVICE);
  lt_cu_fake_set_device_count(99);               /* clamped to 16 */
  EQ(D->device_count(&n), OK);
  CHECK_EQ_INT(n, 16);
  lt_cu_fake_set_total_mem(1, 3 * MiB);
  EQ(D->device_total_mem(&total, 1), OK);
  CHECK_EQ_INT(total, 3 * MiB);
  EQ(D->device_total_mem(&total, 0), OK);
  CHECK_EQ_INT(total, (size_t)1 << 30);
}

/* ---------------------------------------------------------------- contexts */

TEST(fake_contexts) {
  lt_cu_fake_reset();
  D = lt_cu_fake_driver();
  lt_cu_ctx c = (lt_cu_ctx)1, a, b, a2;
  lt_cu_ptr p;
  lt_cu_stream s;
  lt_cu_event e;
  size_t fr, tot;
  void *h;
  /* nothing is current at first: what needs a context says so */
  EQ(D->ctx_get_current(&c), OK);
  CHECK(c == NULL);
  EQ(D->mem_alloc(&p, 16), LT_CU_ERROR_INVALID_CONTEXT);
  EQ(D->mem_get_info(&fr, &tot), LT_CU_ERROR_INVALID_CONTEXT);
  EQ(D->mem_host_alloc(&h, 16, 0), LT_CU_ERROR_INVALID_CONTEXT);
  EQ(D->stream_create(&s, 0), LT_CU_ERROR_INVALID_CONTEXT);
  EQ(D->event_create(&e, 0), LT_CU_ERROR_INVALID_CONTEXT);
  EQ(D->ctx_synchronize(), LT_CU_ERROR_INVALID_CONTEXT);
  EQ(D->stream_synchronize(NULL), LT_CU_ERROR_INVALID_CONTEXT);
  EQ(D->ctx_get_current(NULL), LT_CU_ERROR_INVALID_VALUE);
  /* a primary context is one per device: retained twice, the same */
  EQ(D->primary_ctx_retain(&a, 0), OK);
  EQ(D->primary_ctx_retain(&a2, 0), OK);
  EQ(D->primary_ctx_retain(&b, 1), OK);
  CHECK(a != NULL && a == a2 && a != b);
  EQ(D->primary_ctx_retain(NULL, 0), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->primary_ctx_retain(&c, 7), LT_CU_ERROR_INVALID_DEVICE);
  EQ(D->ctx_set_current(a), OK);
  EQ(D->ctx_get_current(&c), OK);
  CHECK(c == a);
  EQ(D->mem_get_info(&fr, &tot), OK);
  EQ(D->ctx_synchronize(), OK);
  EQ(D->ctx_set_current((lt_cu_ctx)(uintptr_t)0x1234), LT_CU_ERROR_INVALID_CONTEXT);
  EQ(D->ctx_set_current((lt_cu_ctx)&c), LT_CU_ERROR_INVALID_CONTEXT);
  EQ(D->ctx_get_current(&c), OK);
  CHECK(c == a);                                  /* a failed set changes nothing */
  EQ(D->ctx_set_current(NULL), OK);
  EQ(D->ctx_get_current(&c), OK);
  CHECK(c == NULL);
  /* release: an unretained device's is an error */
  EQ(D->primary_ctx_release(1), OK);
  EQ(D->primary_ctx_release(1), LT_CU_ERROR_INVALID_CONTEXT);
  EQ(D->primary_ctx_release(9), LT_CU_ERROR_INVALID_DEVICE);
  EQ(D->ctx_set_current(b), LT_CU_ERROR_INVALID_CONTEXT);   /* released to zero */
  EQ(D->primary_ctx_release(0), OK);              /* one of two */
  EQ(D->ctx_set_current(a), OK);
  EQ(D->mem_alloc(&p, 16), OK);
  EQ(D->mem_free(p), OK);
  EQ(D->primary_ctx_release(0), OK);              /* the last: current but gone */
  EQ(D->mem_alloc(&p, 16), LT_CU_ERROR_INVALID_CONTEXT);
  EQ(D->primary_ctx_retain(&a2, 0), OK);          /* retained again: the same handle works */
  CHECK(a2 == a);
  EQ(D->mem_alloc(&p, 16), OK);
  EQ(D->mem_free(p), OK);
  EQ(D->primary_ctx_release(0), OK);
}

/* releasing the last reference resets the device as the driver does */
TEST(fake_context_reset_frees) {
  fresh();
  lt_cu_ptr p0, p1;
  lt_cu_stream s1;
  lt_cu_event e1;
  EQ(D->mem_alloc(&p0, 1000), OK);
  EQ(D->ctx_set_current(ctx1), OK);
  EQ(D->mem_alloc(&p1, 2000), OK);
  EQ(D->stream_create(&s1, 0), OK);
  EQ(D->event_create(&e1, 0), OK);
  lt_cu_fake_hold_stream(s1, true);
  EQ(D->memset_d8_async(p1, 7, 2000, s1), OK);
  EQ(D->event_record(e1, s1), OK);
  CHECK_EQ_INT(lt_cu_fake_live_allocations(), 2);
  CHECK_EQ_INT(lt_cu_fake_allocated_bytes(1), 2000);
  EQ(D->primary_ctx_release(1), OK);
  CHECK_EQ_INT(lt_cu_fake_live_allocations(), 1);
  CHECK_EQ_INT(lt_cu_fake_allocated_bytes(1), 0);
  CHECK_EQ_INT(lt_cu_fake_allocated_bytes(0), 1000);
  EQ(D->mem_free(p1), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->stream_query(s1), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->event_query(e1), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->ctx_set_current(ctx0), OK);
  EQ(D->mem_free(p0), OK);
  CHECK_EQ_INT(lt_cu_fake_live_allocations(), 0);
}

struct ctx_arg { lt_cu_ctx ctx; lt_cu_ctx seen; lt_cu_result r; };

static void *ctx_thread(void *v) {
  struct ctx_arg *a = v;
  lt_cu_ptr p;
  D->ctx_get_current(&a->seen);                /* a new thread has none */
  a->r = D->mem_alloc(&p, 64);
  if (a->r != LT_CU_ERROR_INVALID_CONTEXT) return NULL;
  if (D->ctx_set_current(a->ctx) != OK) return NULL;
  a->r = D->mem_alloc(&p, 4096);
  if (a->r == OK) a->r = D->mem_free(p) == OK ? D->mem_alloc(&p, 4096) : 1;
  return NULL;                                 /* leaves 4096 bytes on the thread's device */
}

TEST(fake_context_per_thread) {
  fresh();
  struct ctx_arg a = {ctx1, (lt_cu_ctx)1, -1};
  pthread_t t;
  pthread_create(&t, NULL, ctx_thread, &a);
  pthread_join(t, NULL);
  CHECK(a.seen == NULL);
  EQ(a.r, OK);
  CHECK_EQ_INT(lt_cu_fake_allocated_bytes(1), 4096);
  CHECK_EQ_INT(lt_cu_fake_allocated_bytes(0), 0);
  lt_cu_ctx c;
  EQ(D->ctx_get_current(&c), OK);
  CHECK(c == ctx0);                             /* this thread's is unchanged */
  lt_cu_fake_reset();
  CHECK_EQ_INT(lt_cu_fake_live_allocations(), 0);
}

/* ---------------------------------------------------------------- memory */

TEST(fake_memory) {
  fresh();
  lt_cu_ptr p, q, big;
  size_t fr, tot;
  EQ(D->mem_alloc(&p, 1000), OK);
  CHECK(p != 0 && p % 256 == 0);
  EQ(D->mem_alloc(&q, 3), OK);
  CHECK(q != 0 && q % 256 == 0 && q != p);
  CHECK_EQ_INT(lt_cu_fake_live_allocations(), 2);
  CHECK_EQ_INT(lt_cu_fake_allocated_bytes(0), 1003);
  EQ(D->mem_get_info(&fr, &tot), OK);
  CHECK_EQ_INT(tot, (size_t)1 << 30);
  CHECK_EQ_INT(fr, ((size_t)1 << 30) - 1003);
  EQ(D->mem_get_info(NULL, &tot), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->mem_alloc(&p, 0), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->mem_alloc(NULL, 8), LT_CU_ERROR_INVALID_VALUE);
  /* more than the device has left */
  EQ(D->mem_alloc(&big, ((size_t)1 << 30) - 1000), LT_CU_ERROR_OUT_OF_MEMORY);
  EQ(D->mem_alloc(&big, SIZE_MAX), LT_CU_ERROR_OUT_OF_MEMORY);
  CHECK_EQ_INT(lt_cu_fake_live_allocations(), 2);
  /* bad frees are errors, not crashes */
  EQ(D->mem_free(p + 8), LT_CU_ERROR_INVALID_VALUE);        /* inside, not the start */
  EQ(D->mem_free(0), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->mem_free(0x1234), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->mem_free((lt_cu_ptr)(uintptr_t)&fr), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->mem_free_host((void *)(uintptr_t)p), LT_CU_ERROR_INVALID_VALUE);   /* device memory */
  EQ(D->mem_free(p), OK);
  EQ(D->mem_free(p), LT_CU_ERROR_INVALID_VALUE);            /* double free */
  EQ(D->mem_free(q), OK);
  CHECK_EQ_INT(lt_cu_fake_live_allocations(), 0);
  CHECK_EQ_INT(lt_cu_fake_allocated_bytes(0), 0);
  /* a smaller device: filled exactly, then full */
  lt_cu_fake_set_total_mem(0, 1 * MiB);
  EQ(D->mem_alloc(&p, MiB / 2), OK);
  EQ(D->mem_alloc(&q, MiB / 2), OK);
  EQ(D->mem_alloc(&big, 1), LT_CU_ERROR_OUT_OF_MEMORY);
  EQ(D->mem_get_info(&fr, &tot), OK);
  CHECK_EQ_INT(fr, 0);
  CHECK_EQ_INT(tot, MiB);
  EQ(D->mem_free(q), OK);
  EQ(D->mem_alloc(&big, 1), OK);
  /* device 1 counts on its own */
  EQ(D->ctx_set_current(ctx1), OK);
  EQ(D->mem_alloc(&q, MiB), OK);
  CHECK_EQ_INT(lt_cu_fake_allocated_bytes(1), MiB);
  CHECK_EQ_INT(lt_cu_fake_allocated_bytes(0), MiB / 2 + 1);
  CHECK_EQ_INT(lt_cu_fake_allocated_bytes(-1), 0);
  CHECK_EQ_INT(lt_cu_fake_allocated_bytes(99), 0);
  EQ(D->mem_free(p), OK);                       /* freed from another device's context */
  EQ(D->mem_free(big), OK);
  EQ(D->mem_free(q), OK);
  CHECK_EQ_INT(lt_cu_fake_live_allocations(), 0);
}

TEST(fake_fail_nth_alloc) {
  fresh();
  lt_cu_ptr p[6];
  lt_cu_fake_fail_alloc(3);
  EQ(D->mem_alloc(&p[0], 8), OK);
  EQ(D->mem_alloc(&p[1], 8), OK);
  EQ(D->mem_alloc(&p[2], 8), LT_CU_ERROR_OUT_OF_MEMORY);
  EQ(D->mem_alloc(&p[2], 8), OK);               /* once only */
  lt_cu_fake_fail_alloc(1);
  EQ(D->mem_alloc(&p[3], 8), LT_CU_ERROR_OUT_OF_MEMORY);
  lt_cu_fake_fail_alloc(2);                     /* calls with bad arguments do not count */
  EQ(D->mem_alloc(&p[3], 0), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->mem_alloc(&p[3], 8), OK);
  EQ(D->mem_alloc(&p[4], 8), LT_CU_ERROR_OUT_OF_MEMORY);
  EQ(D->mem_free(p[3]), OK);
  lt_cu_fake_fail_alloc(2);
  lt_cu_fake_fail_alloc(0);                     /* disarmed */
  EQ(D->mem_alloc(&p[3], 8), OK);
  EQ(D->mem_alloc(&p[4], 8), OK);
  CHECK_EQ_INT(lt_cu_fake_live_allocations(), 5);
  CHECK_EQ_INT(lt_cu_fake_calls("mem_alloc"), 10);
  for (int i = 0; i < 5; i++) EQ(D->mem_free(p[i]), OK);
  CHECK_EQ_INT(lt_cu_fake_live_allocations(), 0);
}

TEST(fake_pinned) {
  fresh();
  void *h, *h2;
  lt_cu_ptr d;
  EQ(D->mem_host_alloc(&h, 5000, LT_CU_MEMHOSTALLOC_PORTABLE), OK);
  CHECK(h != NULL && (uintptr_t)h % 4096 == 0);
  EQ(D->mem_host_alloc(&h2, 10, 0), OK);
  CHECK_EQ_INT(lt_cu_fake_live_allocations(), 0);   /* not device memory */
  CHECK_EQ_INT(lt_cu_fake_allocated_bytes(0), 0);
  EQ(D->mem_host_alloc(&h2, 0, 0), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->mem_host_alloc(NULL, 8, 0), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->mem_host_alloc(&h2, 8, 0x100), LT_CU_ERROR_INVALID_VALUE);
  memset(h, 0x5a, 5000);
  EQ(D->mem_alloc(&d, 5000), OK);
  EQ(D->memcpy_htod_async(d, h, 5000, NULL), OK);
  memset(h, 0, 5000);
  EQ(D->memcpy_dtoh_async(h, d, 5000, NULL), OK);
  EQ(D->stream_synchronize(NULL), OK);
  CHECK(((unsigned char *)h)[4999] == 0x5a);
  /* past the end of the pinned block */
  EQ(D->memcpy_dtoh_async((char *)h + 4000, d, 2000, NULL), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->mem_free((lt_cu_ptr)(uintptr_t)h), LT_CU_ERROR_INVALID_VALUE);   /* pinned, not device */
  EQ(D->mem_free_host((char *)h + 1), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->mem_free_host(h), OK);
  EQ(D->mem_free_host(h), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->mem_free_host(NULL), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->mem_free_host(h2), OK);
  EQ(D->mem_free(d), OK);
}

/* ---------------------------------------------------------------- copies */

TEST(fake_copies) {
  fresh();
  enum { N = 4096 };
  unsigned char src[N], dst[N];
  for (int i = 0; i < N; i++) src[i] = (unsigned char)(i * 7 + 3);
  lt_cu_ptr a, b;
  lt_cu_stream s;
  EQ(D->mem_alloc(&a, N), OK);
  EQ(D->mem_alloc(&b, N), OK);
  EQ(D->stream_create(&s, 0), OK);
  /* host -> device -> device -> host, on a stream and on the default one */
  EQ(D->memcpy_htod_async(a, src, N, s), OK);
  EQ(D->memcpy_dtod_async(b, a, N, s), OK);
  memset(dst, 0, N);
  EQ(D->memcpy_dtoh_async(dst, b, N, s), OK);
  EQ(D->stream_synchronize(s), OK);
  CHECK(memcmp(src, dst, N) == 0);
  EQ(D->memset_d8_async(a, 0xee, N, NULL), OK);
  EQ(D->memcpy_dtoh_async(dst, a, N, NULL), OK);
  EQ(D->stream_synchronize(NULL), OK);
  CHECK(dst[0] == 0xee && dst[N - 1] == 0xee);
  /* inside an allocation, at an offset */
  EQ(D->memset_d8_async(a + 100, 1, 10, s), OK);
  EQ(D->memcpy_dtoh_async(dst, a + 98, 14, s), OK);
  EQ(D->stream_synchronize(s), OK);
  CHECK(dst[0] == 0xee && dst[1] == 0xee && dst[2] == 1 && dst[11] == 1 && dst[12] == 0xee);
  /* overlapping device ranges move */
  EQ(D->memcpy_htod_async(a, src, N, s), OK);
  EQ(D->memcpy_dtod_async(a + 1, a, 100, s), OK);
  EQ(D->memcpy_dtoh_async(dst, a, 101, s), OK);
  CHECK(dst[0] == src[0] && dst[1] == src[0] && dst[100] == src[99]);
  /* zero bytes: nothing to check, nothing done */
  EQ(D->memcpy_htod_async(0, NULL, 0, s), OK);
  EQ(D->memset_d8_async(0, 0, 0, s), OK);
  /* ranges outside an allocation, host pointers that are not */
  EQ(D->memcpy_htod_async(a, src, N + 1, s), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->memcpy_htod_async(a + N - 4, src, 8, s), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->memcpy_htod_async(a + N, src, 1, s), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->memcpy_htod_async(0x1000, src, 1, s), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->memcpy_htod_async((lt_cu_ptr)(uintptr_t)src, src, 1, s), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->memcpy_htod_async(a, NULL, 8, s), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->memcpy_dtoh_async(NULL, a, 8, s), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->memcpy_dtoh_async((void *)(uintptr_t)b, a, 8, s), LT_CU_ERROR_INVALID_VALUE);  /* device as host */
  EQ(D->memcpy_htod_async(a, (void *)(uintptr_t)(b + 8), 8, s), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->memcpy_dtod_async(a, b, N + 1, s), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->memset_d8_async(b + 1, 0, N, s), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->memcpy_htod_async(a, src, 8, (lt_cu_stream)(uintptr_t)0x52), LT_CU_ERROR_INVALID_HANDLE);
  /* memory of the other device on this device's stream */
  lt_cu_ptr c;
  EQ(D->ctx_set_current(ctx1), OK);
  EQ(D->mem_alloc(&c, N), OK);
  EQ(D->memcpy_htod_async(c, src, 8, s), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->memcpy_dtod_async(a, c, 8, s), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->memcpy_htod_async(a, src, 8, NULL), LT_CU_ERROR_INVALID_VALUE);  /* device 1's default */
  EQ(D->memcpy_htod_async(c, src, N, NULL), OK);
  EQ(D->memcpy_dtoh_async(dst, c, N, NULL), OK);
  CHECK(memcmp(src, dst, N) == 0);
  /* a freed allocation */
  EQ(D->mem_free(c), OK);
  EQ(D->memcpy_htod_async(c, src, 8, NULL), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->ctx_set_current(ctx0), OK);
  EQ(D->stream_destroy(s), OK);
  EQ(D->mem_free(a), OK);
  EQ(D->mem_free(b), OK);
  CHECK_EQ_INT(lt_cu_fake_live_allocations(), 0);
}

/* ---------------------------------------------------------------- streams */

TEST(fake_stream_fifo_and_hold) {
  fresh();
  lt_cu_stream s, t;
  lt_cu_ptr a;
  unsigned char src[64], dst[64];
  memset(src, 9, sizeof src);
  EQ(D->stream_create(&s, 0), OK);
  EQ(D->stream_create(&t, LT_CU_STREAM_NON_BLOCKING), OK);
  CHECK(s != NULL && t != NULL && s != t);
  EQ(D->stream_create(&t, 2), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->stream_create(NULL, 0), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->mem_alloc(&a, 64), OK);
  EQ(D->stream_query(s), OK);
  lt_cu_fake_hold_stream(s, true);
  EQ(D->memset_d8_async(a, 1, 64, s), OK);
  EQ(D->memset_d8_async(a, 2, 64, s), OK);
  EQ(D->memcpy_htod_async(a + 32, src, 32, s), OK);
  memset(dst, 0, sizeof dst);
  EQ(D->memcpy_dtoh_async(dst, a, 64, s), OK);
  /* queued, not run: not ready, and synchronize does not block */
  CHECK(dst[0] == 0);
  EQ(D->stream_query(s), LT_CU_ERROR_NOT_READY);
  EQ(D->stream_synchronize(s), LT_CU_ERROR_NOT_READY);
  EQ(D->ctx_synchronize(), LT_CU_ERROR_NOT_READY);
  /* a source changed before the copy runs is read when it runs */
  memset(src, 5, sizeof src);
  lt_cu_fake_hold_stream(s, false);
  EQ(D->stream_query(s), OK);
  EQ(D->stream_synchronize(s), OK);
  EQ(D->ctx_synchronize(), OK);
  CHECK(dst[0] == 2 && dst[31] == 2);            /* in order: the second set wins */
  CHECK(dst[32] == 5 && dst[63] == 5);
  /* the non-blocking stream is independent of a held one */
  lt_cu_fake_hold_stream(s, true);
  EQ(D->memset_d8_async(a, 3, 1, s), OK);
  EQ(D->memcpy_dtoh_async(dst, a, 1, t), OK);
  EQ(D->stream_query(t), OK);
  CHECK(dst[0] == 2);
  lt_cu_fake_hold_stream(s, false);
  EQ(D->memcpy_dtoh_async(dst, a, 1, t), OK);
  CHECK(dst[0] == 3);
  EQ(D->stream_destroy(s), OK);
  EQ(D->stream_destroy(t), OK);
  EQ(D->mem_free(a), OK);
}

/* the NULL stream is the legacy default stream: it and the blocking streams wait on each other */
TEST(fake_default_stream) {
  fresh();
  lt_cu_stream blocking, nonblocking;
  lt_cu_ptr a;
  unsigned char b = 0, nb = 0, d = 0;
  EQ(D->stream_create(&blocking, 0), OK);
  EQ(D->stream_create(&nonblocking, LT_CU_STREAM_NON_BLOCKING), OK);
  EQ(D->mem_alloc(&a, 16), OK);
  EQ(D->memset_d8_async(a, 4, 16, NULL), OK);
  /* work held on a blocking stream holds the default stream's later work */
  lt_cu_fake_hold_stream(blocking, true);
  EQ(D->memset_d8_async(a, 5, 1, blocking), OK);
  EQ(D->memcpy_dtoh_async(&d, a, 1, NULL), OK);
  EQ(D->memcpy_dtoh_async(&nb, a, 1, nonblocking), OK);
  CHECK(d == 0);
  CHECK(nb == 4);
  EQ(D->stream_query(NULL), LT_CU_ERROR_NOT_READY);
  EQ(D->stream_query(nonblocking), OK);
  lt_cu_fake_hold_stream(blocking, false);
  CHECK(d == 5);
  EQ(D->stream_query(NULL), OK);
  /* and the default stream, held, holds the blocking stream's later work, not the other's */
  lt_cu_fake_hold_stream(NULL, true);
  EQ(D->memset_d8_async(a, 6, 1, NULL), OK);
  EQ(D->memcpy_dtoh_async(&b, a, 1, blocking), OK);
  EQ(D->memcpy_dtoh_async(&nb, a, 1, nonblocking), OK);
  CHECK(b == 0);
  CHECK(nb == 5);
  EQ(D->stream_query(blocking), LT_CU_ERROR_NOT_READY);
  lt_cu_fake_hold_stream(NULL, false);
  CHECK(b == 6);
  EQ(D->stream_query(blocking), OK);
  /* device 1's default stream is another stream */
  lt_cu_fake_hold_stream(NULL, true);
  EQ(D->ctx_set_current(ctx1), OK);
  EQ(D->stream_query(NULL), OK);
  EQ(D->ctx_set_current(ctx0), OK);
  EQ(D->stream_query(NULL), OK);                 /* held, but nothing queued */
  lt_cu_fake_hold_stream(NULL, false);
  EQ(D->stream_destroy(blocking), OK);
  EQ(D->stream_destroy(nonblocking), OK);
  EQ(D->mem_free(a), OK);
}

/* a stream destroyed with work queued: the work still runs; memory freed under queued work stays */
TEST(fake_destroy_and_free_with_work_queued) {
  fresh();
  lt_cu_stream s;
  lt_cu_ptr a;
  unsigned char src[256], dst[256];
  memset(src, 0x11, sizeof src);
  memset(dst, 0, sizeof dst);
  EQ(D->stream_create(&s, LT_CU_STREAM_NON_BLOCKING), OK);
  EQ(D->mem_alloc(&a, 256), OK);
  lt_cu_fake_hold_stream(s, true);
  EQ(D->memcpy_htod_async(a, src, 256, s), OK);
  EQ(D->memcpy_dtoh_async(dst, a, 256, s), OK);
  EQ(D->mem_free(a), OK);                        /* released once the copies have run */
  CHECK_EQ_INT(lt_cu_fake_live_allocations(), 0);
  CHECK_EQ_INT(lt_cu_fake_allocated_bytes(0), 0);
  EQ(D->memcpy_htod_async(a, src, 1, s), LT_CU_ERROR_INVALID_VALUE);   /* gone for new work */
  EQ(D->stream_destroy(s), OK);
  EQ(D->stream_query(s), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->stream_destroy(s), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->ctx_synchronize(), LT_CU_ERROR_NOT_READY);
  CHECK(dst[0] == 0);
  lt_cu_fake_hold_stream(s, false);               /* the old handle still releases it */
  CHECK(dst[0] == 0x11 && dst[255] == 0x11);
  EQ(D->ctx_synchronize(), OK);
  lt_cu_fake_hold_stream(s, false);               /* now it is gone: a warning, nothing else */
  /* pinned memory under queued work, freed */
  void *h;
  EQ(D->stream_create(&s, 0), OK);
  EQ(D->mem_alloc(&a, 64), OK);
  EQ(D->mem_host_alloc(&h, 64, 0), OK);
  memset(h, 0x22, 64);
  lt_cu_fake_hold_stream(s, true);
  EQ(D->memcpy_htod_async(a, h, 64, s), OK);
  EQ(D->mem_free_host(h), OK);
  lt_cu_fake_hold_stream(s, false);
  EQ(D->memcpy_dtoh_async(dst, a, 64, s), OK);
  CHECK(dst[63] == 0x22);
  EQ(D->stream_destroy(s), OK);
  EQ(D->mem_free(a), OK);
}

/* ---------------------------------------------------------------- events */

TEST(fake_event_on_held_stream) {
  fresh();
  lt_cu_stream s, t;
  lt_cu_event e, never, a;
  float ms = -1;
  EQ(D->stream_create(&s, LT_CU_STREAM_NON_BLOCKING), OK);
  EQ(D->stream_create(&t, LT_CU_STREAM_NON_BLOCKING), OK);
  EQ(D->event_create(&e, 0), OK);
  EQ(D->event_create(&never, 0), OK);
  EQ(D->event_create(&a, 0), OK);
  EQ(D->event_create(NULL, 0), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->event_create(&a, 8), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->event_create(&a, 4), LT_CU_ERROR_INVALID_VALUE);    /* interprocess needs disable-timing */
  EQ(D->event_query(never), OK);                  /* never recorded: complete */
  EQ(D->event_synchronize(never), OK);
  lt_cu_fake_hold_stream(s, true);
  EQ(D->event_record(a, s), OK);
  EQ(D->event_record(e, s), OK);
  EQ(D->event_query(e), LT_CU_ERROR_NOT_READY);
  EQ(D->event_synchronize(e), LT_CU_ERROR_NOT_READY);
  EQ(D->event_elapsed_time(&ms, a, e), LT_CU_ERROR_NOT_READY);
  EQ(D->event_elapsed_time(&ms, never, e), LT_CU_ERROR_INVALID_HANDLE);
  lt_cu_fake_hold_stream(s, false);
  EQ(D->event_query(e), OK);
  EQ(D->event_synchronize(e), OK);
  EQ(D->event_elapsed_time(&ms, a, e), OK);
  CHECK(ms >= 0 && ms < 1000);
  EQ(D->event_elapsed_time(NULL, a, e), LT_CU_ERROR_INVALID_VALUE);
  /* the latest record is the one that counts */
  lt_cu_fake_hold_stream(s, true);
  EQ(D->event_record(e, s), OK);
  EQ(D->event_query(e), LT_CU_ERROR_NOT_READY);
  EQ(D->event_record(e, t), OK);
  EQ(D->event_query(e), OK);
  lt_cu_fake_hold_stream(s, false);
  EQ(D->event_query(e), OK);
  /* an event of device 0 on device 1's stream */
  lt_cu_stream s1;
  EQ(D->ctx_set_current(ctx1), OK);
  EQ(D->stream_create(&s1, 0), OK);
  EQ(D->event_record(e, s1), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->event_record(e, NULL), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->ctx_set_current(ctx0), OK);
  EQ(D->event_record(e, NULL), OK);
  EQ(D->event_destroy(e), OK);
  EQ(D->event_destroy(e), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->event_query(e), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->event_record(e, s), LT_CU_ERROR_INVALID_HANDLE);
  /* an event destroyed while its record is queued */
  lt_cu_fake_hold_stream(s, true);
  EQ(D->event_record(a, s), OK);
  EQ(D->event_destroy(a), OK);
  lt_cu_fake_hold_stream(s, false);
  EQ(D->stream_query(s), OK);
  EQ(D->event_destroy(never), OK);
  EQ(D->stream_destroy(s), OK);
  EQ(D->stream_destroy(t), OK);
  EQ(D->stream_destroy(s1), OK);
}

TEST(fake_event_timing) {
  fresh();
  lt_cu_stream s;
  lt_cu_event a, b, nt;
  float ms = 0;
  EQ(D->stream_create(&s, 0), OK);
  EQ(D->event_create(&a, 0), OK);
  EQ(D->event_create(&b, 0), OK);
  EQ(D->event_create(&nt, LT_CU_EVENT_DISABLE_TIMING), OK);
  EQ(D->event_record(a, s), OK);
  sleep_ms(20);
  EQ(D->event_record(b, s), OK);
  EQ(D->event_elapsed_time(&ms, a, b), OK);
  CHECK(ms >= 19 && ms < 5000);
  EQ(D->event_elapsed_time(&ms, b, a), OK);      /* backwards: negative */
  CHECK(ms <= -19);
  /* the time is when the record ran, not when it was queued */
  EQ(D->event_record(a, s), OK);
  lt_cu_fake_hold_stream(s, true);
  EQ(D->event_record(b, s), OK);
  sleep_ms(30);
  lt_cu_fake_hold_stream(s, false);
  EQ(D->event_elapsed_time(&ms, a, b), OK);
  CHECK(ms >= 29);
  /* timing turned off */
  EQ(D->event_record(nt, s), OK);
  EQ(D->event_query(nt), OK);
  EQ(D->event_elapsed_time(&ms, a, nt), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->event_elapsed_time(&ms, (lt_cu_event)s, b), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->event_destroy(a), OK);
  EQ(D->event_destroy(b), OK);
  EQ(D->event_destroy(nt), OK);
  EQ(D->stream_destroy(s), OK);
}

/* stream_wait_event: the later work of one stream waits for another's record */
TEST(fake_wait_event) {
  fresh();
  lt_cu_stream s, t, u;
  lt_cu_event e, never;
  lt_cu_ptr x, y;
  unsigned char out = 0;
  EQ(D->stream_create(&s, LT_CU_STREAM_NON_BLOCKING), OK);
  EQ(D->stream_create(&t, LT_CU_STREAM_NON_BLOCKING), OK);
  EQ(D->stream_create(&u, LT_CU_STREAM_NON_BLOCKING), OK);
  EQ(D->event_create(&e, LT_CU_EVENT_DISABLE_TIMING), OK);
  EQ(D->event_create(&never, 0), OK);
  EQ(D->mem_alloc(&x, 8), OK);
  EQ(D->mem_alloc(&y, 8), OK);
  EQ(D->memset_d8_async(x, 0, 8, s), OK);
  EQ(D->memset_d8_async(y, 0, 8, s), OK);
  lt_cu_fake_hold_stream(s, true);
  EQ(D->memset_d8_async(x, 1, 8, s), OK);
  EQ(D->event_record(e, s), OK);
  EQ(D->memcpy_dtoh_async(&out, y, 1, t), OK);   /* before the wait: runs */
  EQ(D->stream_wait_event(t, e, 0), OK);
  EQ(D->memcpy_dtod_async(y, x, 8, t), OK);       /* after it: waits for s */
  EQ(D->memcpy_dtoh_async(&out, y, 1, t), OK);
  CHECK(out == 0);
  EQ(D->stream_query(t), LT_CU_ERROR_NOT_READY);
  EQ(D->stream_synchronize(t), LT_CU_ERROR_NOT_READY);
  /* the wait is on the record at the time of the call: recording e again elsewhere changes nothing */
  EQ(D->event_record(e, u), OK);
  EQ(D->event_query(e), OK);
  EQ(D->stream_query(t), LT_CU_ERROR_NOT_READY);
  /* waits on an event never recorded, or already reached, do not wait */
  EQ(D->stream_wait_event(u, never, 0), OK);
  EQ(D->stream_wait_event(u, e, 0), OK);
  EQ(D->stream_query(u), OK);
  lt_cu_fake_hold_stream(s, false);
  CHECK(out == 1);
  EQ(D->stream_query(t), OK);
  /* bad arguments */
  EQ(D->stream_wait_event(t, e, 1), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->stream_wait_event(t, (lt_cu_event)t, 0), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->stream_wait_event((lt_cu_stream)e, e, 0), LT_CU_ERROR_INVALID_HANDLE);
  /* across devices: device 1's stream waits on device 0's record */
  lt_cu_stream s1;
  lt_cu_ptr z;
  EQ(D->ctx_set_current(ctx1), OK);
  EQ(D->stream_create(&s1, 0), OK);
  EQ(D->mem_alloc(&z, 1), OK);
  lt_cu_fake_hold_stream(s, true);
  EQ(D->event_record(e, s), OK);
  EQ(D->stream_wait_event(s1, e, 0), OK);
  EQ(D->memset_d8_async(z, 9, 1, s1), OK);
  EQ(D->memcpy_dtoh_async(&out, z, 1, s1), OK);
  CHECK(out == 1);
  lt_cu_fake_hold_stream(s, false);
  CHECK(out == 9);
  EQ(D->mem_free(z), OK);
  EQ(D->stream_destroy(s1), OK);
  EQ(D->ctx_set_current(ctx0), OK);
  EQ(D->event_destroy(e), OK);
  EQ(D->event_destroy(never), OK);
  EQ(D->stream_destroy(s), OK);
  EQ(D->stream_destroy(t), OK);
  EQ(D->stream_destroy(u), OK);
  EQ(D->mem_free(x), OK);
  EQ(D->mem_free(y), OK);
  CHECK_EQ_INT(lt_cu_fake_live_allocations(), 0);
}

/* ---------------------------------------------------------------- handles */

TEST(fake_bad_handles) {
  fresh();
  lt_cu_stream s, bogus = (lt_cu_stream)(uintptr_t)0xdead0;
  lt_cu_event e;
  lt_cu_ptr a;
  char buf[8];
  EQ(D->stream_create(&s, 0), OK);
  EQ(D->event_create(&e, 0), OK);
  EQ(D->mem_alloc(&a, 8), OK);
  EQ(D->stream_query(bogus), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->stream_synchronize(bogus), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->stream_destroy(bogus), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->stream_destroy(NULL), LT_CU_ERROR_INVALID_HANDLE);   /* the default stream is not destroyed */
  EQ(D->stream_query((lt_cu_stream)e), LT_CU_ERROR_INVALID_HANDLE);  /* an event is not a stream */
  EQ(D->event_query((lt_cu_event)s), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->event_record((lt_cu_event)s, s), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->event_record(e, (lt_cu_stream)e), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->event_destroy(NULL), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->memset_d8_async(a, 0, 8, bogus), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->memcpy_dtoh_async(buf, a, 8, (lt_cu_stream)e), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->ctx_set_current((lt_cu_ctx)s), LT_CU_ERROR_INVALID_CONTEXT);
  EQ(D->stream_destroy(s), OK);
  EQ(D->stream_query(s), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->event_record(e, s), LT_CU_ERROR_INVALID_HANDLE);
  /* a new stream never takes a destroyed one's handle */
  lt_cu_stream s2;
  EQ(D->stream_create(&s2, 0), OK);
  CHECK(s2 != s);
  EQ(D->stream_destroy(s2), OK);
  EQ(D->event_destroy(e), OK);
  EQ(D->mem_free(a), OK);
}

/* ---------------------------------------------------------------- modules */

static const char ptx[] =
  "//\n.version 8.8\n.target sm_90\n.address_size 64\n\n"
  ".visible .entry lt_add_f32(\n\t.param .u64 a\n)\n{\n\tret;\n}\n"
  ".visible .entry\tlt_mul_f32 (\n)\n{\n\tret;\n}\n";

/* a minimal ELF64 image: header, one section holding "\0kern_a\0kern_b\0", the section table */
static void make_elf(unsigned char *im, size_t size) {
  memset(im, 0, size);
  memcpy(im, "\177ELF", 4);
  im[4] = 2, im[5] = 1, im[6] = 1;
  const char strs[] = "\0kern_a\0kern_b\0";
  memcpy(im + 64, strs, sizeof strs);
  uint64_t shoff = 128;
  memcpy(im + 0x28, &shoff, 8);
  im[0x3A] = 64, im[0x3C] = 2;                   /* 2 section headers of 64 bytes */
  unsigned char *sh = im + 128 + 64;             /* the second: SHT_STRTAB at 64, 16 bytes */
  sh[4] = 3;
  uint64_t off = 64, sz = sizeof strs;
  memcpy(sh + 0x18, &off, 8);
  memcpy(sh + 0x20, &sz, 8);
}

TEST(fake_modules) {
  fresh();
  lt_cu_module m, m2;
  lt_cu_function f, f2, g;
  void *params[1] = {NULL};
  EQ(D->module_load_data(&m, ptx), OK);
  EQ(D->module_get_function(&f, m, "lt_add_f32"), OK);
  EQ(D->module_get_function(&f2, m, "lt_add_f32"), OK);
  CHECK(f != NULL && f == f2);
  EQ(D->module_get_function(&g, m, "lt_mul_f32"), OK);
  CHECK(g != f);
  EQ(D->module_get_function(&g, m, "lt_add"), LT_CU_ERROR_NOT_FOUND);
  EQ(D->module_get_function(&g, m, "sm_90"), LT_CU_ERROR_NOT_FOUND);
  EQ(D->module_get_function(&g, m, ""), LT_CU_ERROR_NOT_FOUND);
  EQ(D->module_get_function(NULL, m, "lt_add_f32"), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->module_get_function(&g, m, NULL), LT_CU_ERROR_INVALID_VALUE);
  /* launches: checked, then not supported */
  EQ(D->launch_kernel(f, 1, 1, 1, 128, 1, 1, 0, NULL, params, NULL), LT_CU_ERROR_NOT_SUPPORTED);
  EQ(D->launch_kernel(f, 0, 1, 1, 128, 1, 1, 0, NULL, params, NULL), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->launch_kernel(f, 1, 1, 1, 128, 1, 1, 0, (lt_cu_stream)(uintptr_t)0x70, params, NULL),
     LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->launch_kernel((lt_cu_function)m, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL),
     LT_CU_ERROR_INVALID_HANDLE);
  /* an ELF image (a cubin), copied at load */
  unsigned char im[320];
  make_elf(im, sizeof im);
  EQ(D->module_load_data(&m2, im), OK);
  memset(im, 0, sizeof im);
  EQ(D->module_get_function(&g, m2, "kern_b"), OK);
  EQ(D->module_get_function(&g, m2, "kern"), LT_CU_ERROR_NOT_FOUND);
  EQ(D->module_get_function(&g, m2, "lt_add_f32"), LT_CU_ERROR_NOT_FOUND);
  /* what is not an image */
  EQ(D->module_load_data(&m2, "hello"), 200);    /* CUDA_ERROR_INVALID_IMAGE */
  EQ(D->module_load_data(&m2, ""), 200);
  EQ(D->module_load_data(&m2, NULL), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->module_load_data(NULL, ptx), LT_CU_ERROR_INVALID_VALUE);
  /* unloading ends its functions */
  EQ(D->module_unload(m), OK);
  EQ(D->module_unload(m), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->module_get_function(&g, m, "lt_add_f32"), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->launch_kernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->module_unload(NULL), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->ctx_set_current(NULL), OK);
  EQ(D->module_load_data(&m, ptx), LT_CU_ERROR_INVALID_CONTEXT);
  /* module m2 is left loaded: reset frees it (ASan would see a leak otherwise) */
  lt_cu_fake_reset();
}

/* ---------------------------------------------------------------- knobs */

static const char *const entries[] = {
  "init", "driver_version", "device_count", "device_name", "device_total_mem", "device_attribute",
  "primary_ctx_retain", "primary_ctx_release", "ctx_set_current", "ctx_get_current",
  "ctx_synchronize", "mem_alloc", "mem_free", "mem_get_info", "mem_host_alloc", "mem_free_host",
  "memcpy_htod_async", "memcpy_dtoh_async", "memcpy_dtod_async", "memset_d8_async",
  "stream_create", "stream_destroy", "stream_synchronize", "stream_query", "stream_wait_event",
  "event_create", "event_destroy", "event_record", "event_query", "event_synchronize",
  "event_elapsed_time", "module_load_data", "module_unload", "module_get_function", "launch_kernel",
};

TEST(fake_counters) {
  lt_cu_fake_reset();
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) CHECK_EQ_INT(lt_cu_fake_calls(entries[i]), 0);
  CHECK_EQ_INT(lt_cu_fake_calls("mem_allocate"), -1);
  CHECK_EQ_INT(lt_cu_fake_calls("cuMemAlloc"), -1);
  CHECK_EQ_INT(lt_cu_fake_calls(NULL), -1);
  fresh();
  CHECK_EQ_INT(lt_cu_fake_calls("primary_ctx_retain"), 2);
  CHECK_EQ_INT(lt_cu_fake_calls("ctx_set_current"), 1);
  lt_cu_ptr p;
  lt_cu_stream s;
  EQ(D->mem_alloc(&p, 8), OK);
  EQ(D->mem_alloc(&p, 0), LT_CU_ERROR_INVALID_VALUE);   /* failed calls count too */
  EQ(D->stream_create(&s, 0), OK);
  for (int i = 0; i < 3; i++) EQ(D->stream_synchronize(s), OK);
  EQ(D->mem_free(p), OK);
  CHECK_EQ_INT(lt_cu_fake_calls("mem_alloc"), 2);
  CHECK_EQ_INT(lt_cu_fake_calls("mem_free"), 1);
  CHECK_EQ_INT(lt_cu_fake_calls("stream_synchronize"), 3);
  CHECK_EQ_INT(lt_cu_fake_calls("stream_create"), 1);
  CHECK_EQ_INT(lt_cu_fake_calls("launch_kernel"), 0);
  /* the knobs themselves are not entries */
  lt_cu_fake_live_allocations();
  lt_cu_fake_hold_stream(s, false);
  CHECK_EQ_INT(lt_cu_fake_calls("stream_synchronize"), 3);
  EQ(D->stream_destroy(s), OK);
}

/* reset: nothing live, handles and pointers from before are invalid, the knobs at their defaults */
TEST(fake_reset) {
  fresh();
  lt_cu_ptr a, b;
  lt_cu_stream s;
  lt_cu_event e;
  lt_cu_module m;
  void *h;
  EQ(D->mem_alloc(&a, 100), OK);
  EQ(D->mem_host_alloc(&h, 100, 0), OK);
  EQ(D->stream_create(&s, 0), OK);
  EQ(D->event_create(&e, 0), OK);
  EQ(D->module_load_data(&m, ptx), OK);
  lt_cu_fake_hold_stream(s, true);
  EQ(D->memcpy_htod_async(a, h, 100, s), OK);
  EQ(D->event_record(e, s), OK);
  EQ(D->ctx_set_current(ctx1), OK);
  EQ(D->mem_alloc(&b, 200), OK);
  lt_cu_fake_set_device_count(4);
  lt_cu_fake_set_total_mem(0, 1000);
  lt_cu_fake_fail_alloc(1);
  lt_cu_fake_reset();
  CHECK_EQ_INT(lt_cu_fake_live_allocations(), 0);
  CHECK_EQ_INT(lt_cu_fake_allocated_bytes(0), 0);
  CHECK_EQ_INT(lt_cu_fake_allocated_bytes(1), 0);
  CHECK_EQ_INT(lt_cu_fake_calls("mem_alloc"), 0);
  int n;
  size_t total;
  EQ(D->device_count(&n), OK);
  CHECK_EQ_INT(n, 2);
  EQ(D->device_total_mem(&total, 0), OK);
  CHECK_EQ_INT(total, (size_t)1 << 30);
  lt_cu_ctx c;
  EQ(D->ctx_get_current(&c), OK);
  CHECK(c == NULL);                               /* no context is current after a reset */
  EQ(D->ctx_set_current(ctx1), LT_CU_ERROR_INVALID_CONTEXT);   /* a context from before */
  EQ(D->mem_free(a), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->mem_free(b), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->mem_free_host(h), LT_CU_ERROR_INVALID_VALUE);
  EQ(D->stream_query(s), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->event_query(e), LT_CU_ERROR_INVALID_HANDLE);
  EQ(D->module_unload(m), LT_CU_ERROR_INVALID_HANDLE);
  fresh();
  EQ(D->mem_alloc(&a, 8), OK);                    /* the failure was disarmed */
  EQ(D->stream_query(NULL), OK);                  /* and the default stream not held */
  EQ(D->mem_free(a), OK);
  CHECK_EQ_INT(lt_cu_fake_live_allocations(), 0);
}

/* ---------------------------------------------------------------- threads and fork */

enum { NTHREADS = 4, ROUNDS = 300 };

static void *worker(void *arg) {
  long id = (long)arg, bad = 0;
  lt_cu_stream s;
  lt_cu_event e;
  if (D->ctx_set_current(id % 2 ? ctx1 : ctx0) || D->stream_create(&s, LT_CU_STREAM_NON_BLOCKING) ||
      D->event_create(&e, 0))
    return (void *)1;
  unsigned char src[512], dst[512];
  for (int r = 0; r < ROUNDS; r++) {
    lt_cu_ptr p;
    memset(src, (int)(id * 31 + r), sizeof src);
    if (D->mem_alloc(&p, sizeof src) != OK) { bad++; continue; }
    bad += D->memcpy_htod_async(p, src, sizeof src, s) != OK;
    bad += D->memcpy_dtoh_async(dst, p, sizeof dst, s) != OK;
    bad += D->event_record(e, s) != OK;
    bad += D->event_synchronize(e) != OK;
    bad += memcmp(src, dst, sizeof src) != 0;
    bad += D->mem_free(p) != OK;
  }
  bad += D->event_destroy(e) != OK;
  bad += D->stream_destroy(s) != OK;
  return (void *)bad;
}

TEST(fake_threads) {
  fresh();
  pthread_t t[NTHREADS];
  for (long i = 0; i < NTHREADS; i++) pthread_create(&t[i], NULL, worker, (void *)i);
  long bad = 0;
  for (int i = 0; i < NTHREADS; i++) {
    void *r;
    pthread_join(t[i], &r);
    bad += (long)r;
  }
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(lt_cu_fake_calls("mem_alloc"), NTHREADS * ROUNDS);
  CHECK_EQ_INT(lt_cu_fake_live_allocations(), 0);
}

static atomic_int forking;

static void *churn(void *arg) {
  D->ctx_set_current(ctx0);
  while (atomic_load(&forking)) {
    lt_cu_ptr p;
    if (D->mem_alloc(&p, 64) == OK) D->mem_free(p);
  }
  return NULL;
}

/* fork while another thread is inside the fake: the child is never left with its lock taken */
TEST(fake_fork) {
  fresh();
  lt_cu_ptr kept;
  EQ(D->mem_alloc(&kept, 32), OK);
  EQ(D->memset_d8_async(kept, 0x3c, 32, NULL), OK);
  atomic_store(&forking, 1);
  pthread_t t;
  pthread_create(&t, NULL, churn, NULL);
  int good = 0;
  for (int i = 0; i < 20; i++) {
    pid_t pid = fork();
    if (pid == 0) {
      alarm(10);                                  /* a deadlock shows as a failure, not a hang */
      unsigned char b = 0;
      lt_cu_ptr p;
      int ok = D->mem_alloc(&p, 16) == OK && D->mem_free(p) == OK &&
               D->memcpy_dtoh_async(&b, kept, 1, NULL) == OK && b == 0x3c;
      _exit(ok ? 0 : 1);
    }
    int st = -1;
    waitpid(pid, &st, 0);
    good += WIFEXITED(st) && WEXITSTATUS(st) == 0;
  }
  atomic_store(&forking, 0);
  pthread_join(t, NULL);
  CHECK_EQ_INT(good, 20);
  EQ(D->mem_free(kept), OK);
  CHECK_EQ_INT(lt_cu_fake_live_allocations(), 0);
}

/* ---------------------------------------------------------------- lt_cu_driver_open, in children */

static char exe_dir[PATH_MAX];

static void *open_thread(void *arg) {
  const char *why = "unset";
  const lt_cu_driver *d = lt_cu_driver_open(&why);
  return (void *)d;
}

/* many threads open at once: one answer */
static const lt_cu_driver *open_from_threads(void) {
  pthread_t t[8];
  void *r[8];
  for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, open_thread, NULL);
  for (int i = 0; i < 8; i++) pthread_join(t[i], &r[i]);
  for (int i = 1; i < 8; i++) CHECK(r[i] == r[0]);
  return r[0];
}

/* in a child of this process: does lt_cu_driver_open give NULL with a reason containing part? */
static int child_sees_null(const char *part) {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(10);
    const char *why = NULL;
    const lt_cu_driver *d = lt_cu_driver_open(&why);
    _exit(!d && why && strstr(why, part) ? 0 : 1);
  }
  int st = -1;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void open_none_here(void) {
  const char *why = NULL;
  const lt_cu_driver *d = lt_cu_driver_open(&why);
  void *probe = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!probe) {                                   /* this machine: no driver */
    CHECK(d == NULL);
    CHECK_STR(why, "libcuda.so.1 not found (no NVIDIA driver)");
  } else if (d) {                                 /* a machine with a driver and a GPU */
    CHECK_STR(d->name, "libcuda.so.1");
    CHECK(d != lt_cu_fake_driver());
    printf("note: libcuda.so.1 opened\n");
  } else {                                        /* a driver, but no usable device */
    CHECK(why != NULL);
    printf("note: libcuda.so.1 present: %s\n", why ? why : "?");
  }
  /* asked again: the same answer, the same reason */
  const char *why2 = NULL;
  CHECK(lt_cu_driver_open(&why2) == d);
  CHECK(why2 == why);
  CHECK(lt_cu_driver_open(NULL) == d);
  CHECK(open_from_threads() == d);
}

static void open_fake(void) {
  const lt_cu_driver *d = open_from_threads();
  CHECK(d == lt_cu_fake_driver());
  const char *why = "unset";
  CHECK(lt_cu_driver_open(&why) == d);
  CHECK(why == NULL);                             /* no reason when there is a driver */
  if (!d) return;
  CHECK_STR(d->name, "fake");
  lt_cu_fake_reset();
  lt_cu_ctx c;
  lt_cu_ptr p;
  int n = 0;
  EQ(d->init(0), OK);
  EQ(d->device_count(&n), OK);
  CHECK_EQ_INT(n, 2);
  EQ(d->primary_ctx_retain(&c, 0), OK);
  EQ(d->ctx_set_current(c), OK);
  EQ(d->mem_alloc(&p, 8), OK);
  EQ(d->mem_free(p), OK);
  /* the fake is host memory: a forked child keeps it */
  pid_t pid = fork();
  if (pid == 0) {
    alarm(10);
    lt_cu_ptr q;
    _exit(lt_cu_driver_open(NULL) == d && d->mem_alloc(&q, 8) == OK && d->mem_free(q) == OK ? 0 : 1);
  }
  int st = -1;
  waitpid(pid, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void open_refused(const char *part) {
  const char *why = NULL;
  CHECK(lt_cu_driver_open(&why) == NULL);
  CHECK_HAS(why, part);
}

/* the stand-in libcuda.so.1: each entry reaches its symbol */
static void open_stub(const char *elapsed_symbol) {
  const lt_cu_driver *d = open_from_threads();
  const char *why = NULL;
  CHECK(lt_cu_driver_open(&why) == d);
  if (!d) {
    fprintf(stderr, "open failed: %s\n", why ? why : "?");
    CHECK(d != NULL);
    return;
  }
  CHECK(d != lt_cu_fake_driver());
  CHECK_STR(d->name, "libcuda.so.1");
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  const char *volatile *last = h ? dlsym(h, "lt_stub_last") : NULL;
  atomic_int *inits = h ? dlsym(h, "lt_stub_init_calls") : NULL;
  CHECK(last != NULL && inits != NULL);
  if (!last || !inits) return;
  CHECK_EQ_INT(atomic_load(inits), 1);            /* cuInit once, for all the threads */
  int i = 0;
  size_t a, b;
  char buf[8];
  void *vp;
  float ms;
  lt_cu_ctx c;
  lt_cu_ptr p;
  lt_cu_stream s;
  lt_cu_event e;
  lt_cu_module m;
  lt_cu_function f;
  const int NS = LT_CU_ERROR_NOT_SUPPORTED;
#define MAPS(call, want, result) do { *last = ""; EQ((call), (result)); CHECK_STR(*last, want); } while (0)
  MAPS(d->init(0), "cuInit", OK);
  MAPS(d->driver_version(&i), "cuDriverGetVersion", OK);
  CHECK_EQ_INT(i, 13000);
  MAPS(d->device_count(&i), "cuDeviceGetCount", OK);
  CHECK_EQ_INT(i, 1);
  MAPS(d->device_name(buf, 8, 0), "cuDeviceGetName", NS);
  MAPS(d->device_total_mem(&a, 0), "cuDeviceTotalMem_v2", NS);
  MAPS(d->device_attribute(&i, 1, 0), "cuDeviceGetAttribute", NS);
  MAPS(d->primary_ctx_retain(&c, 0), "cuDevicePrimaryCtxRetain", NS);
  MAPS(d->primary_ctx_release(0), "cuDevicePrimaryCtxRelease_v2", NS);
  MAPS(d->ctx_set_current(NULL), "cuCtxSetCurrent", NS);
  MAPS(d->ctx_get_current(&c), "cuCtxGetCurrent", NS);
  MAPS(d->ctx_synchronize(), "cuCtxSynchronize", NS);
  MAPS(d->mem_alloc(&p, 1), "cuMemAlloc_v2", NS);
  MAPS(d->mem_free(0), "cuMemFree_v2", NS);
  MAPS(d->mem_get_info(&a, &b), "cuMemGetInfo_v2", NS);
  MAPS(d->mem_host_alloc(&vp, 1, 0), "cuMemHostAlloc", NS);
  MAPS(d->mem_free_host(NULL), "cuMemFreeHost", NS);
  MAPS(d->memcpy_htod_async(0, buf, 1, NULL), "cuMemcpyHtoDAsync_v2", NS);
  MAPS(d->memcpy_dtoh_async(buf, 0, 1, NULL), "cuMemcpyDtoHAsync_v2", NS);
  MAPS(d->memcpy_dtod_async(0, 0, 1, NULL), "cuMemcpyDtoDAsync_v2", NS);
  MAPS(d->memset_d8_async(0, 0, 1, NULL), "cuMemsetD8Async", NS);
  MAPS(d->stream_create(&s, 0), "cuStreamCreate", NS);
  MAPS(d->stream_destroy(NULL), "cuStreamDestroy_v2", NS);
  MAPS(d->stream_synchronize(NULL), "cuStreamSynchronize", NS);
  MAPS(d->stream_query(NULL), "cuStreamQuery", NS);
  MAPS(d->stream_wait_event(NULL, NULL, 0), "cuStreamWaitEvent", NS);
  MAPS(d->event_create(&e, 0), "cuEventCreate", NS);
  MAPS(d->event_destroy(NULL), "cuEventDestroy_v2", NS);
  MAPS(d->event_record(NULL, NULL), "cuEventRecord", NS);
  MAPS(d->event_query(NULL), "cuEventQuery", NS);
  MAPS(d->event_synchronize(NULL), "cuEventSynchronize", NS);
  MAPS(d->event_elapsed_time(&ms, NULL, NULL), elapsed_symbol, NS);
  MAPS(d->module_load_data(&m, buf), "cuModuleLoadData", NS);
  MAPS(d->module_unload(NULL), "cuModuleUnload", NS);
  MAPS(d->module_get_function(&f, NULL, "k"), "cuModuleGetFunction", NS);
  MAPS(d->launch_kernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), "cuLaunchKernel", NS);
#undef MAPS
  /* a forked child cannot use a driver its parent initialised; the parent still can */
  CHECK(child_sees_null("forked"));
  CHECK(lt_cu_driver_open(NULL) == d);
}

static int open_child(const char *which) {
  alarm(30);
  ctest_current = which;
  if (strcmp(which, "here") == 0) open_none_here();
  else if (strcmp(which, "fake") == 0) open_fake();
  else if (strcmp(which, "none") == 0) open_refused("LUTORCH_CUDA_DRIVER=none");
  else if (strcmp(which, "bogus") == 0) open_refused("LUTORCH_CUDA_DRIVER=bogus");
  else if (strcmp(which, "stub") == 0) open_stub("cuEventElapsedTime_v2");
  else if (strcmp(which, "stub-old") == 0) open_stub("cuEventElapsedTime");
  else if (strcmp(which, "stub-nodevice") == 0) open_refused("cuInit failed: CUDA_ERROR_NO_DEVICE");
  else if (strcmp(which, "stub-zero") == 0) open_refused("no CUDA device");
  else if (strcmp(which, "stub-nolaunch") == 0) open_refused("libcuda.so.1 has no cuLaunchKernel");
  else CHECK(!"an --open case");
  fflush(stderr);
  printf("child-result %d %d\n", atomic_load(&ctest_passed), atomic_load(&ctest_failed));
  fflush(stdout);
  return 0;
}

/* run this program as `--open which` with the environment changed: set holds NAME=VALUE
** strings, unset names (and the names set) are removed; the child's checks add to ours */
static void run_open_child(const char *which, const char *const *set, const char *const *unset) {
  char *env[512];
  int n = 0;
  for (char **e = environ; *e && n < 500; e++) {
    int drop = 0;
    for (const char *const *u = unset; u && *u && !drop; u++)
      drop = strncmp(*e, *u, strlen(*u)) == 0 && (*e)[strlen(*u)] == '=';
    for (const char *const *s = set; s && *s && !drop; s++)
      drop = strncmp(*e, *s, (size_t)(strchr(*s, '=') - *s + 1)) == 0;
    if (!drop) env[n++] = *e;
  }
  for (const char *const *s = set; s && *s; s++) env[n++] = (char *)*s;
  env[n] = NULL;
  int fd[2];
  if (pipe(fd) != 0) {
    CHECK(!"pipe");
    return;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], 1);
    close(fd[0]);
    close(fd[1]);
    char *argv[] = {"test_cuda_driver", "--open", (char *)which, NULL};
    execve("/proc/self/exe", argv, env);
    _exit(127);
  }
  close(fd[1]);
  char out[4096];
  size_t len = 0;
  ssize_t k;
  while (len < sizeof out - 1 && (k = read(fd[0], out + len, sizeof out - 1 - len)) > 0) len += (size_t)k;
  out[len] = 0;
  close(fd[0]);
  int st = -1;
  waitpid(pid, &st, 0);
  int p = 0, f = 0;
  const char *line = strstr(out, "child-result ");
  int parsed = line && sscanf(line, "child-result %d %d", &p, &f) == 2;
  for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n"))
    if (strncmp(l, "child-result", 12) != 0) printf("  [%s] %s\n", which, l);
  atomic_fetch_add(&ctest_passed, p);
  atomic_fetch_add(&ctest_failed, f);
  if (!parsed || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    ctest_fail(__FILE__, __LINE__);
    fprintf(stderr, "the child for --open %s did not finish (status %d)\n", which, st);
  }
}

static const char *const unset_all[] = {"LUTORCH_CUDA_DRIVER", "LT_STUB_CUDA_MODE", NULL};

static void run_stub_child(const char *which, const char *lib, const char *mode, const char *driver_env) {
  static char ld[PATH_MAX + 32], md[64], de[64];
  snprintf(ld, sizeof ld, "LD_LIBRARY_PATH=%s/cudastub/%s", exe_dir, lib);
  snprintf(md, sizeof md, "LT_STUB_CUDA_MODE=%s", mode);
  snprintf(de, sizeof de, "LUTORCH_CUDA_DRIVER=%s", driver_env ? driver_env : "");
  const char *set[] = {ld, md, driver_env ? de : NULL, NULL};
  run_open_child(which, set, unset_all);
}

TEST(open_this_machine) { run_open_child("here", NULL, unset_all); }

TEST(open_fake_by_env) {
  const char *set[] = {"LUTORCH_CUDA_DRIVER=fake", NULL};
  run_open_child("fake", set, unset_all);
}

TEST(open_refused_by_env) {
  const char *none[] = {"LUTORCH_CUDA_DRIVER=none", NULL};
  run_open_child("none", none, unset_all);
  const char *bogus[] = {"LUTORCH_CUDA_DRIVER=bogus", NULL};
  run_open_child("bogus", bogus, unset_all);
}

TEST(open_stub_libcuda) {
  run_stub_child("stub", "full", "", NULL);
  run_stub_child("stub", "full", "", "libcuda.so.1");   /* asked for by name */
  run_stub_child("stub-old", "nov2", "", NULL);
  run_stub_child("stub-nodevice", "full", "nodevice", NULL);
  run_stub_child("stub-zero", "full", "zero", NULL);
  run_stub_child("stub-nolaunch", "nolaunch", "", NULL);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--open") == 0) return open_child(argv[2]);
  ssize_t k = readlink("/proc/self/exe", exe_dir, sizeof exe_dir - 1);
  exe_dir[k > 0 ? k : 0] = 0;
  char *slash = strrchr(exe_dir, '/');
  if (slash) *slash = 0;
  RUN(result_names);
  RUN(fake_table);
  RUN(fake_devices);
  RUN(fake_contexts);
  RUN(fake_context_reset_frees);
  RUN(fake_context_per_thread);
  RUN(fake_memory);
  RUN(fake_fail_nth_alloc);
  RUN(fake_pinned);
  RUN(fake_copies);
  RUN(fake_stream_fifo_and_hold);
  RUN(fake_default_stream);
  RUN(fake_destroy_and_free_with_work_queued);
  RUN(fake_event_on_held_stream);
  RUN(fake_event_timing);
  RUN(fake_wait_event);
  RUN(fake_bad_handles);
  RUN(fake_modules);
  RUN(fake_counters);
  RUN(fake_reset);
  RUN(fake_threads);
  RUN(fake_fork);
  lt_cu_fake_reset();
  CHECK_EQ_INT(lt_cu_fake_live_allocations(), 0);
  RUN(open_this_machine);
  RUN(open_fake_by_env);
  RUN(open_refused_by_env);
  RUN(open_stub_libcuda);
  return ctest_summary();
}
