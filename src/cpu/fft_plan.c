/*
** fft_plan.c — FFT plans and their cache. A plan is what a length needs before any
** data comes: its factorisation into passes with their twiddles, or Bluestein's chirp
** and the transform of its conjugate, or (real data) the half-length complex plan and
** its unpacking roots. Every table is computed in double and, for a float32 plan,
** rounded once. Plans are reference-counted and immutable, so threads share them.
*/
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "cpu/fft_impl.h"

/* e^{-2 pi i t/N}, reduced to the first octant by symmetry so that the angle given to
** sin and cos is at most pi/4 and every reduction is exact integer arithmetic */
static void root(int64_t t, int64_t N, double *re, double *im) {
  t %= N; if (t < 0) t += N;
  bool conj = false, negc = false, swap = false;
  int64_t num = t, den = N;               /* angle 2 pi num/den */
  if (2*num > den) { num = den - num; conj = true; }           /* 2pi - a */
  if (4*num > den) { num = den - 2*num; den *= 2; negc = true; } /* pi - a */
  if (8*num > den) { num = den - 4*num; den *= 4; swap = true; } /* pi/2 - a */
  double a = 2.0 * M_PI * (double)num / (double)den, c = cos(a), s = sin(a);
  if (swap) { double u = c; c = s; s = u; }
  if (negc) c = -c;
  if (conj) s = -s;
  *re = c; *im = -s;
}

static double *alloc_doubles(int64_t n) {
  return malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
}

/* a table made in double, kept in the plan's precision */
static void *to_prec(double *d, int64_t n, int prec) {
  if (!d || prec == LT_FFT_F64) return d;
  float *f = (float *)d;
  for (int64_t i = 0; i < n; i++) f[i] = (float)d[i];   /* forward: f[i] lies below d[i] */
  void *g = realloc(d, (size_t)(n > 0 ? n : 1) * sizeof(float));
  return g ? g : d;
}

static void plan_free(lt_fft_plan *p) {
  for (int i = 0; i < p->npass; i++) { free(p->pass[i].tw); free(p->pass[i].rt); }
  free(p->chirp); free(p->bfft); free(p->rtw);
  if (p->sub) lt_fft_plan_release(p->sub);
  if (p->cplx) lt_fft_plan_release(p->cplx);
  free(p);
}

void lt_fft_plan_release(lt_fft_plan *p) {
  if (p && atomic_fetch_sub(&p->refs, 1) == 1) plan_free(p);
}

/* the smallest 2^a 3^b 5^c >= n */
static int64_t smooth_above(int64_t n) {
  int64_t best = 1;
  while (best < n) best *= 2;
  for (int64_t f5 = 1; f5 < best; f5 *= 5)
    for (int64_t f35 = f5; f35 < best; f35 *= 3) {
      int64_t v = f35;
      while (v < n) v *= 2;
      if (v < best) best = v;
    }
  return best;
}

/* factors in pass order: fours first, a two, then odd primes up; 0 when a prime
** factor is above LT_FFT_MAX_RADIX */
static int factorise(int64_t n, int *f) {
  int k = 0;
  while (n % 4 == 0) { f[k++] = 4; n /= 4; }
  if (n % 2 == 0) { f[k++] = 2; n /= 2; }
  for (int64_t p = 3; p * p <= n; p += 2)
    while (n % p == 0) {
      if (p > LT_FFT_MAX_RADIX) return 0;
      f[k++] = (int)p; n /= p;
    }
  if (n > 1) {
    if (n > LT_FFT_MAX_RADIX) return 0;
    f[k++] = (int)n;
  }
  return k;
}

static bool plan_mixed(lt_fft_plan *p, const int *f, int nf) {
  int64_t N = p->n, s = 1;
  p->nwork = p->n;
  for (int i = 0; i < nf; i++) {
    lt_fft_pass *ps = &p->pass[p->npass++];
    int r = f[i];
    int64_t m = N / r;
    ps->p = r; ps->m = m; ps->s = s;
    double *tw = alloc_doubles(2 * (r - 1) * m);
    if (!tw) return false;
    for (int64_t j = 0; j < m; j++)
      for (int k = 1; k < r; k++)
        root(j * k, N, &tw[2*((r - 1)*j + k - 1)], &tw[2*((r - 1)*j + k - 1) + 1]);
    ps->tw = to_prec(tw, 2 * (r - 1) * m, p->prec);
    if (r % 2 == 1) {
      double *rt = alloc_doubles(2 * r);
      if (!rt) return false;
      for (int t = 0; t < r; t++) root(t, r, &rt[2*t], &rt[2*t + 1]);
      ps->rt = to_prec(rt, 2 * r, p->prec);
    }
    s *= r; N = m;
  }
  return true;
}

static bool plan_bluestein(lt_fft_plan *p) {
  const int64_t n = p->n, m = smooth_above(2 * n - 1);
  p->m = m;
  p->nwork = 2 * m;
  p->sub = lt_fft_plan_new(m, p->prec, LT_FFT_C2C);
  lt_fft_plan *dsub = p->prec == LT_FFT_F64 ? p->sub : lt_fft_plan_new(m, LT_FFT_F64, LT_FFT_C2C);
  double *c = alloc_doubles(2 * n), *b = alloc_doubles(2 * m), *w = alloc_doubles(2 * m);
  bool ok = p->sub && dsub && c && b && w;
  if (ok) {
    int64_t q = 0;                         /* k^2 mod 2n, kept exact */
    for (int64_t k = 0; k < n; k++) {
      root(q, 2 * n, &c[2*k], &c[2*k + 1]);
      q += 2 * k + 1; q %= 2 * n;
    }
    memset(b, 0, (size_t)(2 * m) * sizeof(double));
    for (int64_t k = 0; k < n; k++) {
      b[2*k] = c[2*k]; b[2*k + 1] = -c[2*k + 1];
      if (k > 0) { b[2*(m - k)] = c[2*k]; b[2*(m - k) + 1] = -c[2*k + 1]; }
    }
    double *r = lt_fft_exec_f64(dsub, b, w);
    for (int64_t k = 0; k < 2 * m; k++) b[k] = r[k] / (double)m;
    p->chirp = to_prec(c, 2 * n, p->prec); c = NULL;
    p->bfft = to_prec(b, 2 * m, p->prec); b = NULL;
  }
  if (dsub && dsub != p->sub) lt_fft_plan_release(dsub);
  free(c); free(b); free(w);
  return ok;
}

lt_fft_plan *lt_fft_plan_new(int64_t n, int prec, int kind) {
  if (n < 1) return NULL;
  lt_fft_plan *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  atomic_init(&p->refs, 1);
  p->n = n; p->prec = prec; p->kind = kind == LT_FFT_C2C ? LT_FFT_C2C : LT_FFT_R2C;
  bool ok;
  if (p->kind == LT_FFT_C2C) {
    int f[LT_FFT_MAX_PASSES];
    int nf = factorise(n, f);
    ok = nf > 0 || n == 1 ? plan_mixed(p, f, nf) : plan_bluestein(p);
    if (n == 1) p->nwork = 1;
  } else {
    p->cplx = lt_fft_plan_new(n % 2 == 0 ? n / 2 : n, prec, LT_FFT_C2C);
    ok = p->cplx != NULL;
    if (ok && n % 2 == 0) {
      double *w = alloc_doubles(2 * (n / 2 + 1));
      ok = w != NULL;
      if (ok) for (int64_t k = 0; k <= n / 2; k++) root(k, n, &w[2*k], &w[2*k + 1]);
      p->rtw = to_prec(w, 2 * (n / 2 + 1), prec);
    }
    if (ok) p->nwork = p->cplx->nwork;
  }
  if (!ok) { plan_free(p); return NULL; }
  return p;
}

bool lt_fft_plan_bluestein(const lt_fft_plan *p) {
  return p->cplx ? p->cplx->sub != NULL : p->sub != NULL;
}

int64_t lt_fft_row_work(const lt_fft_plan *p) { return p->nwork; }

/* ---- the cache: LT_FFT_CACHE_SIZE plans, least recently used evicted ---- */

typedef struct { lt_fft_plan *plan; uint64_t used; } cache_slot;
static cache_slot cache[LT_FFT_CACHE_SIZE];
static uint64_t cache_clock;
static pthread_mutex_t cache_mtx = PTHREAD_MUTEX_INITIALIZER;

/* under cache_mtx: the cached plan for (n, prec, kind), retained, or NULL */
static lt_fft_plan *cache_find(int64_t n, int prec, int kind) {
  for (int i = 0; i < LT_FFT_CACHE_SIZE; i++) {
    lt_fft_plan *p = cache[i].plan;
    if (p && p->n == n && p->prec == prec && p->kind == kind) {
      cache[i].used = ++cache_clock;
      atomic_fetch_add(&p->refs, 1);
      return p;
    }
  }
  return NULL;
}

lt_fft_plan *lt_fft_plan_get(int64_t n, int prec, int kind) {
  if (n < 1) return NULL;
  kind = kind == LT_FFT_C2C ? LT_FFT_C2C : LT_FFT_R2C;
  pthread_mutex_lock(&cache_mtx);
  lt_fft_plan *p = cache_find(n, prec, kind);
  pthread_mutex_unlock(&cache_mtx);
  if (p) return p;
  /* made outside the lock: a large plan takes a while, and others may want theirs */
  lt_fft_plan *made = lt_fft_plan_new(n, prec, kind);
  if (!made) return NULL;
  pthread_mutex_lock(&cache_mtx);
  p = cache_find(n, prec, kind);           /* another thread may have been quicker */
  if (!p) {
    int victim = 0;
    for (int i = 0; i < LT_FFT_CACHE_SIZE; i++) {
      if (!cache[i].plan) { victim = i; break; }
      if (cache[i].used < cache[victim].used) victim = i;
    }
    lt_fft_plan *old = cache[victim].plan;
    cache[victim].plan = made; cache[victim].used = ++cache_clock;
    atomic_fetch_add(&made->refs, 1);      /* the cache's reference and the caller's */
    p = made; made = NULL;
    pthread_mutex_unlock(&cache_mtx);
    lt_fft_plan_release(old);
  } else {
    pthread_mutex_unlock(&cache_mtx);
  }
  lt_fft_plan_release(made);
  return p;
}

void lt_fft_cache_clear(void) {
  lt_fft_plan *old[LT_FFT_CACHE_SIZE];
  pthread_mutex_lock(&cache_mtx);
  for (int i = 0; i < LT_FFT_CACHE_SIZE; i++) { old[i] = cache[i].plan; cache[i].plan = NULL; }
  pthread_mutex_unlock(&cache_mtx);
  for (int i = 0; i < LT_FFT_CACHE_SIZE; i++) lt_fft_plan_release(old[i]);
}

int lt_fft_cache_count(void) {
  int k = 0;
  pthread_mutex_lock(&cache_mtx);
  for (int i = 0; i < LT_FFT_CACHE_SIZE; i++) k += cache[i].plan != NULL;
  pthread_mutex_unlock(&cache_mtx);
  return k;
}
