/*
** test_fft.c — the FFT engine (src/cpu/fft.h) against a naive DFT in long double:
** complex, real-to-complex and complex-to-real transforms of every small length and of
** awkward ones (primes, Bluestein lengths, products of odd radices), both precisions,
** strided batches, zero padding and cutting, and the plan cache (bounded, shared,
** thread-safe).
*/
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "ctest.h"
#include "dispatch/dispatch.h"
#include "cpu/fft.h"

static uint64_t rng = 88172645463325252ull;
static double urand(void) {
  rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* X = DFT(x) (sign -1) or its unnormalised inverse (sign +1), n complex, long double */
static void naive(const double *x, long double *X, int64_t n, int sign) {
  long double *c = malloc(sizeof(long double) * 2 * (size_t)n);
  for (int64_t t = 0; t < n; t++) {
    long double a = 2.0L * 3.14159265358979323846264338327950288L * t / n;
    c[2*t] = cosl(a); c[2*t + 1] = sign * sinl(a);
  }
  for (int64_t k = 0; k < n; k++) {
    long double re = 0, im = 0;
    for (int64_t t = 0; t < n; t++) {
      int64_t i = (t * k) % n;
      re += x[2*t] * c[2*i] - x[2*t + 1] * c[2*i + 1];
      im += x[2*t] * c[2*i + 1] + x[2*t + 1] * c[2*i];
    }
    X[2*k] = re; X[2*k + 1] = im;
  }
  free(c);
}

/* max |a - b| over max |b|, for nc values of a (doubles or floats) */
static double relerr(const void *a, int f32, const long double *b, int64_t nc) {
  long double e = 0, m = 1e-300L;
  for (int64_t i = 0; i < nc; i++) {
    long double v = f32 ? ((const float *)a)[i] : ((const double *)a)[i];
    long double d = fabsl(v - b[i]);
    if (d > e) e = d;
    if (fabsl(b[i]) > m) m = fabsl(b[i]);
  }
  return (double)(e / m);
}

static void *in_prec(const double *x, int64_t n, int f32) {
  if (!f32) { double *d = malloc(8 * (size_t)n); memcpy(d, x, 8 * (size_t)n); return d; }
  float *f = malloc(4 * (size_t)n);
  for (int64_t i = 0; i < n; i++) f[i] = (float)x[i];
  return f;
}

static double x_as(const double *x, int64_t i, int f32) { return f32 ? (float)x[i] : x[i]; }

/* c2c forward and inverse, r2c and c2r of length n against the naive DFT */
static void check_length(int64_t n, int f32) {
  double tol = (f32 ? 3e-7 : 2e-16) * (4 + 2 * log2((double)n));
  double *x = malloc(16 * (size_t)n), *xr = malloc(16 * (size_t)n);
  long double *X = malloc(sizeof(long double) * 2 * (size_t)n);
  for (int64_t i = 0; i < 2 * n; i++) x[i] = urand();
  for (int64_t i = 0; i < 2 * n; i++) xr[i] = x_as(x, i, f32);
  void *in = in_prec(x, 2 * n, f32), *out = malloc(16 * (size_t)n + 16);
  lt_fft_plan *p = lt_fft_plan_get(n, f32 ? LT_FFT_F32 : LT_FFT_F64, LT_FFT_C2C);
  CHECK(p != NULL);
  for (int sign = -1; sign <= 1; sign += 2) {
    naive(xr, X, n, sign);
    CHECK(lt_fft_c2c(p, in, out, sign > 0) == 0);
    double e = relerr(out, f32, X, 2 * n);
    if (e > tol) fprintf(stderr, "  c2c n=%lld f32=%d sign=%d err %g\n", (long long)n, f32, sign, e);
    CHECK(e <= tol);
  }
  lt_fft_plan_release(p);
  /* real input: the imaginary parts zero */
  for (int64_t i = 0; i < n; i++) { xr[2*i] = x_as(x, i, f32); xr[2*i + 1] = 0; }
  naive(xr, X, n, -1);
  void *rin = in_prec(x, n, f32);
  lt_fft_plan *rp = lt_fft_plan_get(n, f32 ? LT_FFT_F32 : LT_FFT_F64, LT_FFT_R2C);
  CHECK(rp != NULL);
  CHECK(lt_fft_r2c(rp, rin, out) == 0);
  double e = relerr(out, f32, X, 2 * (n / 2 + 1));
  if (e > tol) fprintf(stderr, "  r2c n=%lld f32=%d err %g\n", (long long)n, f32, e);
  CHECK(e <= tol);
  /* c2r of a Hermitian half spectrum: its inverse is n times the real signal */
  void *half = in_prec(x, 2 * (n / 2 + 1), f32);
  for (int64_t i = 0; i < 2 * (n / 2 + 1); i++) xr[i] = x_as(x, i, f32);
  xr[1] = 0;
  if (n % 2 == 0) xr[n + 1] = 0;
  for (int64_t k = n / 2 + 1; k < n; k++) { xr[2*k] = xr[2*(n - k)]; xr[2*k + 1] = -xr[2*(n - k) + 1]; }
  naive(xr, X, n, 1);
  long double *Xre = malloc(sizeof(long double) * (size_t)n);
  for (int64_t t = 0; t < n; t++) Xre[t] = X[2*t];
  CHECK(lt_fft_c2r(rp, half, out) == 0);
  e = relerr(out, f32, Xre, n);
  if (e > tol) fprintf(stderr, "  c2r n=%lld f32=%d err %g\n", (long long)n, f32, e);
  CHECK(e <= tol);
  lt_fft_plan_release(rp);
  free(x); free(xr); free(X); free(in); free(out); free(rin); free(half); free(Xre);
}

TEST(every_small_length) {
  for (int f32 = 0; f32 <= 1; f32++)
    for (int64_t n = 1; n <= 130; n++) check_length(n, f32);
}

TEST(awkward_lengths) {
  /* primes (Bluestein above LT_FFT_MAX_RADIX), odd radix products, mixed */
  static const int64_t ns[] = { 67, 97, 121, 127, 134, 143, 210, 243, 256, 343, 625, 1000,
                                1009, 1024, 2 * 1009, 3 * 5 * 7 * 11, 61 * 59, 4096 };
  for (int f32 = 0; f32 <= 1; f32++)
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) check_length(ns[i], f32);
}

TEST(bluestein_is_used) {
  lt_fft_plan *p = lt_fft_plan_new(1009, LT_FFT_F64, LT_FFT_C2C);
  CHECK(p && lt_fft_plan_bluestein(p));
  lt_fft_plan_release(p);
  p = lt_fft_plan_new(61 * 7, LT_FFT_F64, LT_FFT_C2C);
  CHECK(p && !lt_fft_plan_bluestein(p));
  lt_fft_plan_release(p);
  CHECK(lt_fft_plan_new(0, LT_FFT_F64, LT_FFT_C2C) == NULL);
}

/* large lengths: forward then inverse gives n x back */
static void roundtrip(int64_t n, int f32, double tol) {
  double *x = malloc(16 * (size_t)n);
  for (int64_t i = 0; i < 2 * n; i++) x[i] = urand();
  void *in = in_prec(x, 2 * n, f32), *mid = malloc(16 * (size_t)n), *back = malloc(16 * (size_t)n);
  lt_fft_plan *p = lt_fft_plan_get(n, f32 ? LT_FFT_F32 : LT_FFT_F64, LT_FFT_C2C);
  CHECK(lt_fft_c2c(p, in, mid, false) == 0);
  CHECK(lt_fft_c2c(p, mid, back, true) == 0);
  double e = 0;
  for (int64_t i = 0; i < 2 * n; i++) {
    double v = f32 ? ((float *)back)[i] : ((double *)back)[i];
    double d = fabs(v / (double)n - x_as(x, i, f32));
    if (d > e) e = d;
  }
  if (e > tol) fprintf(stderr, "  roundtrip n=%lld f32=%d err %g\n", (long long)n, f32, e);
  CHECK(e <= tol);
  lt_fft_plan_release(p);
  free(x); free(in); free(mid); free(back);
}

TEST(large_roundtrip) {
  roundtrip(1 << 20, 0, 1e-14);
  roundtrip(1000003, 0, 1e-14);
  roundtrip(1 << 20, 1, 2e-6);
  roundtrip(1000003, 1, 4e-6);
}

/* a strided batch along the first axis of a 9 x 12 matrix equals the columns done one
** by one; ilen shorter than n pads with zeros, longer cuts */
TEST(strided_batch) {
  const int64_t R = 9, C = 12;
  double *a = malloc(sizeof(double) * 2 * R * C), *o = malloc(sizeof(double) * 2 * 16 * C);
  for (int64_t i = 0; i < 2 * R * C; i++) a[i] = urand();
  for (int64_t n = 5; n <= 16; n += 11) {   /* 5 cuts the 9 rows, 16 pads them */
    lt_fft_plan *p = lt_fft_plan_get(n, LT_FFT_F64, LT_FFT_C2C);
    lt_fft_geom g = { 0 };
    g.ilen = R; g.istride = C; g.ostride = C;
    g.nbatch = 1; g.bsize[0] = C; g.bistride[0] = 1; g.bostride[0] = 1;
    CHECK(lt_fft_run(p, LT_FFT_C2C, false, a, o, &g, 0.5) == 0);
    double *col = calloc(2 * (size_t)n, sizeof(double));
    long double *X = malloc(sizeof(long double) * 2 * (size_t)n);
    double e = 0;
    for (int64_t c = 0; c < C; c++) {
      for (int64_t r = 0; r < n; r++) {
        col[2*r] = r < R ? a[2*(r*C + c)] : 0; col[2*r + 1] = r < R ? a[2*(r*C + c) + 1] : 0;
      }
      naive(col, X, n, -1);
      for (int64_t k = 0; k < n; k++) {
        e = fmax(e, fabs(o[2*(k*C + c)] - 0.5 * (double)X[2*k]));
        e = fmax(e, fabs(o[2*(k*C + c) + 1] - 0.5 * (double)X[2*k + 1]));
      }
    }
    CHECK(e < 1e-13);
    free(col); free(X);
    lt_fft_plan_release(p);
  }
  free(a); free(o);
}

/* many rows, enough for the pool to split them: each equals its own transform */
TEST(parallel_rows) {
  const int64_t n = 64, rows = 4096;
  double *a = malloc(sizeof(double) * 2 * n * rows), *o = malloc(sizeof(double) * 2 * n * rows);
  double *one = malloc(sizeof(double) * 2 * n);
  for (int64_t i = 0; i < 2 * n * rows; i++) a[i] = urand();
  lt_fft_plan *p = lt_fft_plan_get(n, LT_FFT_F64, LT_FFT_C2C);
  lt_fft_geom g = { 0 };
  g.ilen = n; g.istride = 1; g.ostride = 1;
  g.nbatch = 2; g.bsize[0] = 64; g.bsize[1] = rows / 64;
  g.bistride[0] = g.bostride[0] = n * (rows / 64); g.bistride[1] = g.bostride[1] = n;
  CHECK(lt_fft_run(p, LT_FFT_C2C, true, a, o, &g, 1.0) == 0);
  int bad = 0;
  for (int64_t r = 0; r < rows; r += 97) {
    lt_fft_c2c(p, a + 2 * n * r, one, true);
    bad += memcmp(one, o + 2 * n * r, sizeof(double) * 2 * n) != 0;
  }
  CHECK_EQ_INT(bad, 0);
  lt_fft_plan_release(p);
  free(a); free(o); free(one);
}

static void *get_many(void *arg) {
  for (int i = 0; i < 200; i++) {
    lt_fft_plan *p = lt_fft_plan_get(1 + (i * 7 + (int)(intptr_t)arg) % 50, LT_FFT_F32, LT_FFT_C2C);
    if (!p) return (void *)1;
    lt_fft_plan_release(p);
  }
  return NULL;
}

TEST(plan_cache) {
  lt_fft_cache_clear();
  CHECK_EQ_INT(lt_fft_cache_count(), 0);
  lt_fft_plan *a = lt_fft_plan_get(360, LT_FFT_F64, LT_FFT_C2C);
  lt_fft_plan *b = lt_fft_plan_get(360, LT_FFT_F64, LT_FFT_C2C);
  lt_fft_plan *c = lt_fft_plan_get(360, LT_FFT_F32, LT_FFT_C2C);
  lt_fft_plan *d = lt_fft_plan_get(360, LT_FFT_F64, LT_FFT_C2R);
  lt_fft_plan *e = lt_fft_plan_get(360, LT_FFT_F64, LT_FFT_R2C);
  CHECK(a == b); CHECK(a != c); CHECK(d != a); CHECK(d == e);
  CHECK_EQ_INT(lt_fft_cache_count(), 3);
  /* more lengths than the cache holds: it stays bounded, and held plans stay usable */
  for (int n = 1; n <= 2 * LT_FFT_CACHE_SIZE; n++) lt_fft_plan_release(lt_fft_plan_get(n, LT_FFT_F64, LT_FFT_C2C));
  CHECK_EQ_INT(lt_fft_cache_count(), LT_FFT_CACHE_SIZE);
  double x[720] = { 1 }, y[720];
  CHECK(lt_fft_c2c(a, x, y, false) == 0);
  CHECK(y[0] == 1 && y[718] == 1 && y[719] == 0);
  lt_fft_plan_release(a); lt_fft_plan_release(b); lt_fft_plan_release(c);
  lt_fft_plan_release(d); lt_fft_plan_release(e);
  pthread_t th[8];
  for (intptr_t i = 0; i < 8; i++) pthread_create(&th[i], NULL, get_many, (void *)i);
  int bad = 0;
  for (int i = 0; i < 8; i++) { void *r; pthread_join(th[i], &r); bad += r != NULL; }
  CHECK_EQ_INT(bad, 0);
  CHECK(lt_fft_cache_count() <= LT_FFT_CACHE_SIZE);
  lt_fft_cache_clear();
}

/* the other signs: r2c inverse is the conjugate of r2c; c2r forward is c2r of the
** conjugate input */
TEST(real_signs) {
  for (int64_t n = 1; n <= 40; n++) {
    double x[80], half[82], a[82], b[82], ra[40], rb[40];
    for (int i = 0; i < 2 * n + 2; i++) half[i] = urand();
    for (int i = 0; i < n; i++) x[i] = urand();
    lt_fft_plan *p = lt_fft_plan_get(n, LT_FFT_F64, LT_FFT_R2C);
    lt_fft_geom g = { 0 };
    g.ilen = n; g.istride = g.ostride = 1;
    CHECK(lt_fft_r2c(p, x, a) == 0);
    CHECK(lt_fft_run(p, LT_FFT_R2C, true, x, b, &g, 1.0) == 0);
    double e = 0;
    for (int64_t k = 0; k <= n / 2; k++) e = fmax(e, fabs(a[2*k] - b[2*k]) + fabs(a[2*k + 1] + b[2*k + 1]));
    CHECK(e == 0);
    g.ilen = n / 2 + 1;
    CHECK(lt_fft_run(p, LT_FFT_C2R, false, half, ra, &g, 1.0) == 0);
    for (int64_t k = 0; k <= n / 2; k++) half[2*k + 1] = -half[2*k + 1];
    CHECK(lt_fft_c2r(p, half, rb) == 0);
    e = 0;
    for (int64_t t = 0; t < n; t++) e = fmax(e, fabs(ra[t] - rb[t]));
    CHECK(e == 0);
    lt_fft_plan_release(p);
  }
}

int main(void) {
  lt_init();
  RUN(every_small_length);
  RUN(awkward_lengths);
  RUN(bluestein_is_used);
  RUN(large_roundtrip);
  RUN(strided_batch);
  RUN(parallel_rows);
  RUN(real_signs);
  RUN(plan_cache);
  return ctest_summary();
}
