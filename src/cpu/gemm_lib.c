/*
** gemm_lib.c — the library of float32 matrix products (gemm_lib.h).
**
** OpenBLAS 0.3.21 runs products with few rows (a batch of 64 through a Linear layer,
** im2col convolutions with 16 filters) at 60-75% of the speed of oneDNN's sgemm, which
** JIT-compiles its kernels for the CPU it finds (bench/README.md has the table that
** decided it: Ice Lake Xeon, AVX-512). oneDNN is loaded with dlopen on first use, so
** start-up stays fast and a machine without libdnnl.so.2 runs on OpenBLAS alone.
**
** The choice ("auto" unless $LUTORCH_GEMM or torch.backends.cpu.set_gemm_library says
** otherwise): oneDNN where the kernels in use are the AVX-512 ones (where it was measured;
** $LUTORCH_CPU_CAPABILITY can lower them). With the AVX2 kernels only the products of
** training's few rows go there (AVX2_MAX_ROWS, AVX2_MAX_DEPTH, A not transposed): on a
** Zen 3 oneDNN's AVX2 sgemm took 0.85-0.94 of OpenBLAS's time on those (a batch of 64
** through Linear layers, 1x1 and shifted convolutions, attention) and 1.1-2.1 on square
** products, on K = 2048 and on the weight gradients' A-transposed ones. Products under
** SMALL_MACS multiply-adds or with fewer than MIN_SIDE rows or columns stay on OpenBLAS
** always, whose call costs less (8x8x8: 11x faster; 64x10x256, a classifier's last
** layer: 3.7x).
**
** Debian's oneDNN runs on OpenMP. lutorch splits big products over its own pool and
** calls the library once per chunk, so each calling thread sets its OpenMP thread count
** to 1 the first time (the count is per thread): the two pools never nest.
*/
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "cpu/capability.h"
#include "cpu/gemm_lib.h"

#define SMALL_MACS (1 << 18)
#define MIN_SIDE 16
/* the products oneDNN takes with the AVX2 kernels: at most this many rows (M) and this
** deep (K), A not transposed */
#define AVX2_MAX_ROWS 128
#define AVX2_MAX_DEPTH 1024

/* dnnl_sgemm: row-major, dims are dnnl_dim_t (int64_t); returns dnnl_status_t (0 = success) */
typedef int (*dnnl_sgemm_fn)(char transa, char transb, int64_t M, int64_t N, int64_t K, float alpha,
                             const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                             int64_t ldc);
typedef void (*omp_set_fn)(int);

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static dnnl_sgemm_fn sgemm;          /* NULL: oneDNN could not be loaded */
static omp_set_fn omp_set_num_threads_;
static char load_why[256];

static void load(void) {
  void *h = dlopen("libdnnl.so.2", RTLD_LAZY | RTLD_LOCAL);   /* lazy: binding its C++ symbols up front costs tens of ms */
  if (!h) {
    const char *e = dlerror();
    snprintf(load_why, sizeof load_why, "libdnnl.so.2 could not be opened: %s", e ? e : "?");
    return;
  }
  dnnl_sgemm_fn f = (dnnl_sgemm_fn)dlsym(h, "dnnl_sgemm");
  omp_set_fn o = (omp_set_fn)dlsym(h, "omp_set_num_threads");   /* its OpenMP runtime */
  if (!f || !o) {
    snprintf(load_why, sizeof load_why, "libdnnl.so.2 lacks %s", f ? "its OpenMP runtime (omp_set_num_threads)" : "dnnl_sgemm");
    dlclose(h);
    return;
  }
  omp_set_num_threads_ = o;
  sgemm = f;
}

enum { LIB_AUTO, LIB_OPENBLAS, LIB_ONEDNN };
static atomic_int chosen = -1;        /* -1: not yet read from $LUTORCH_GEMM */
static atomic_bool use_onednn;        /* the outcome of chosen on this CPU */
static atomic_bool few_rows_only;     /* auto with the AVX2 kernels: oneDNN for few rows only */
static const char *why_not = "not chosen yet";
static pthread_mutex_t choice_lock = PTHREAD_MUTEX_INITIALIZER;

static int parse(const char *s) {
  if (!s || !*s || strcmp(s, "auto") == 0) return LIB_AUTO;
  if (strcmp(s, "openblas") == 0) return LIB_OPENBLAS;
  if (strcmp(s, "onednn") == 0) return LIB_ONEDNN;
  return -1;
}

/* the outcome of choice c; 0, or -1 when c is LIB_ONEDNN and oneDNN cannot load */
static int apply(int c) {
  /* the kernels' level, not the CPU's flags: $LUTORCH_CPU_CAPABILITY=avx2 on an AVX-512 CPU
  ** then runs what an AVX2 machine runs, products included */
  lt_capability_init();
  lt_cap_level level = lt_capability_level();
  bool avx512 = level >= LT_CAP_AVX512;
  if (c == LIB_OPENBLAS) { use_onednn = false; why_not = "OpenBLAS chosen"; chosen = c; return 0; }
#ifdef __SANITIZE_ADDRESS__
  /* an AddressSanitizer build (make asan): oneDNN's JIT code is not instrumented, and
  ** LeakSanitizer's scan at exit faults among its threads; "onednn" by name still loads it */
  if (c == LIB_AUTO) {
    use_onednn = false; why_not = "an AddressSanitizer build: OpenBLAS unless \"onednn\" is chosen by name";
    chosen = c; return 0;
  }
#endif
  if (c == LIB_AUTO && level < LT_CAP_AVX2) {
    use_onednn = false; why_not = "no AVX2 kernels (this CPU or $LUTORCH_CPU_CAPABILITY): OpenBLAS (oneDNN was measured with AVX2 and AVX-512 only)";
    chosen = c; return 0;
  }
  few_rows_only = c == LIB_AUTO && !avx512;
  pthread_once(&load_once, load);
  if (!sgemm) {
    if (c == LIB_ONEDNN) return -1;
    use_onednn = false; why_not = load_why; chosen = c; return 0;
  }
  use_onednn = true; why_not = NULL; chosen = c;
  return 0;
}

static void choose_from_env(void) {
  pthread_mutex_lock(&choice_lock);
  if (chosen < 0) {
    const char *env = getenv("LUTORCH_GEMM");
    int c = parse(env);
    if (c < 0) {
      fprintf(stderr, "lutorch: LUTORCH_GEMM=%s is not auto, openblas or onednn: using auto\n", env);
      c = LIB_AUTO;
    }
    if (apply(c) < 0) {
      fprintf(stderr, "lutorch: LUTORCH_GEMM=onednn: %s; using OpenBLAS\n", load_why);
      use_onednn = false; why_not = load_why; chosen = LIB_OPENBLAS;
    }
  }
  pthread_mutex_unlock(&choice_lock);
}

int lt_gemm_lib_select(const char *name) {
  int c = parse(name);
  if (c < 0) return lt_error("set_gemm_library: argument 'name' must be \"auto\", \"openblas\" or \"onednn\", got \"%s\"", name);
  pthread_mutex_lock(&choice_lock);
  int rc = apply(c);
  pthread_mutex_unlock(&choice_lock);
  if (rc < 0) return lt_error("set_gemm_library: oneDNN is not available: %s", load_why);
  return 0;
}

const char *lt_gemm_lib_name(void) {
  if (chosen < 0) choose_from_env();
  return use_onednn ? "onednn" : "openblas";
}

const char *lt_gemm_lib_why(void) {
  if (chosen < 0) choose_from_env();
  return why_not;
}

static _Thread_local bool omp_single;   /* this thread's OpenMP count set to 1 */

bool lt_gemm_lib_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *A,
                       int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  if (chosen < 0) choose_from_env();
  if (!use_onednn || m < MIN_SIDE || n < MIN_SIDE || m * n * k < SMALL_MACS) return false;
  /* B transposed (both operands contiguous along K, as in the convolutions' weight
  ** gradients): oneDNN 2.6 lost to OpenBLAS on narrow products (n < 128: 1.2-5.9x slower)
  ** and wherever K is over 1024 and not a multiple of 512 (1.1-2.3x slower; ResNet's 3x3
  ** weight gradient has K = 3248); it won elsewhere (bench/README.md, the B-transposed grid).
  ** "onednn" chosen by name runs them there anyway: that is how the grid is measured */
  if (chosen == LIB_AUTO && tb && !ta && (n < 128 || (k > 1024 && k % 512 != 0))) return false;
  if (few_rows_only && (ta || m > AVX2_MAX_ROWS || k > AVX2_MAX_DEPTH)) return false;
  if (!omp_single) { omp_set_num_threads_(1); omp_single = true; }
  return sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, A, lda, B, ldb, beta, C, ldc) == 0;
}
