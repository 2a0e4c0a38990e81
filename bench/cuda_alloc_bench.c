/*
** cuda_alloc_bench.c — the CUDA caching allocator's cached path: ns per
** malloc + free pair of a block the cache already holds, against the test
** double of the driver (tests/c/cu_double.h), so no driver call is timed:
** what is measured is the allocator's own bookkeeping (lock, best fit,
** split, live table, merge). The target (<= PyTorch's allocation +
** free of a cached 1 MiB block) is for the lent GPU, where PyTorch's figure
** can be measured beside it; this program gives lutorch's side here.
**
**   make cuda-alloc-bench      (or build/bench/cuda_alloc_bench [pairs])
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cu_double.h"
#include "cuda/alloc.h"
#include "core/error.h"

#define KB ((size_t)1 << 10)
#define MB ((size_t)1 << 20)

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static void cpu_model(char *buf, size_t len) {
  snprintf(buf, len, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (strncmp(line, "model name", 10) == 0 && colon) {
      snprintf(buf, len, "%s", colon + 2);
      buf[strcspn(buf, "\n")] = 0;
      break;
    }
  }
  fclose(f);
}

static int die(void) {
  fprintf(stderr, "cuda_alloc_bench: %s\n", lt_error_message());
  exit(1);
}

/* median over 7 runs of `pairs` malloc + free of nbytes (with a record_stream
** on another stream, and its event completed by hand, when `record`) */
static double pair_ns(lt_cuda_alloc *a, size_t nbytes, long pairs, bool record) {
  double runs[7];
  lt_cu_ptr p;
  for (int r = 0; r < 7; r++) {
    double t0 = now();
    for (long i = 0; i < pairs; i++) {
      if (lt_cuda_alloc_malloc(a, nbytes, NULL, &p) < 0) die();
      if (record) lt_cuda_alloc_record_stream(a, p, DBL_STREAM(1));
      if (lt_cuda_alloc_free(a, p) < 0) die();
      if (record) dbl.records[dbl.nrecords - 1].done = true, dbl.nrecords = 0;
    }
    runs[r] = (now() - t0) * 1e9 / (double)pairs;
  }
  qsort(runs, 7, sizeof *runs, cmp_double);
  return runs[3];
}

int main(int argc, char **argv) {
  long pairs = argc > 1 ? atol(argv[1]) : 1000000;
  char cpu[128];
  cpu_model(cpu, sizeof cpu);
  dbl_reset((size_t)8 << 30);
  lt_cuda_alloc *a = lt_cuda_alloc_new(&dbl_driver, 0);
  if (!a) die();
  printf("CUDA caching allocator, cached malloc + free pairs (test double of the driver, no GPU)\n");
  printf("cpu: %s; %ld pairs per run, median of 7 runs\n", cpu, pairs);

  static const struct { size_t n; const char *what; } cases[] = {
    {MB, "1 MiB (small pool, split from a 2 MiB segment)"},
    {512, "512 B (small pool)"},
    {8 * MB, "8 MiB (large pool, split from a 20 MiB segment)"},
    {64 * MB, "64 MiB (large pool, a whole segment)"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    lt_cu_ptr p;   /* warm: the segment is in the cache before timing */
    if (lt_cuda_alloc_malloc(a, cases[c].n, NULL, &p) < 0 || lt_cuda_alloc_free(a, p) < 0) die();
    printf("  %-52s %7.1f ns/pair\n", cases[c].what, pair_ns(a, cases[c].n, pairs, false));
  }

  /* a busier cache: 200 blocks of assorted sizes held, 200 more cached */
  lt_cu_ptr held[400];
  for (int i = 0; i < 400; i++)
    if (lt_cuda_alloc_malloc(a, (size_t)(1 + (i * 7919) % 4000) * KB, DBL_STREAM(i % 3), &held[i]) < 0) die();
  for (int i = 0; i < 400; i += 2) lt_cuda_alloc_free(a, held[i]);
  printf("  %-52s %7.1f ns/pair\n", "1 MiB, with 200 blocks held and 200 cached",
         pair_ns(a, MB, pairs, false));
  printf("  %-52s %7.1f ns/pair\n", "1 MiB, record_stream + event (double's events)",
         pair_ns(a, MB, pairs / 4, true));
  for (int i = 1; i < 400; i += 2) lt_cuda_alloc_free(a, held[i]);
  lt_cuda_alloc_delete(a);
  return 0;
}
