/*
** nn_softmax.c — softmax, log_softmax and their backward kernels.
**
** The input is viewed as (outer, n, inner) around the softmax dim. When
** inner == 1 (the last dim, the common case) each row is contiguous and is
** done in passes a vector unit likes: max, exp, sum, scale, with LANES
** independent accumulators so the reductions vectorise without fast-math.
** Otherwise a block of up to BLK adjacent columns is done at once: every
** pass runs along contiguous memory and keeps BLK running values.
** Stability: the maximum is subtracted before exponentiating.
*/
#include <math.h>
#include <string.h>
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "cpu/parallel.h"
#include "meta/norm.h"

/* glibc's vector exp/log (libmvec) so the exp loops vectorise; see ew_unary.c */
#if defined(__x86_64__) && defined(__GLIBC__) && !defined(__FAST_MATH__) && !defined(__SANITIZE_ADDRESS__)
#define SM_SIMD __attribute__((__simd__("notinbranch")))
SM_SIMD float (expf)(float); SM_SIMD double (exp)(double);
#endif

#define BLK 64

enum { SM_FWD, LSM_FWD, SM_BWD, LSM_BWD };

/*
** Row kernels: x (or y, the forward's output, for the backward), g the
** incoming gradient (backward only), o the output; n elements each.
*/
/* GCC vector types (32 bytes): the reductions below are written with them
** because the vectoriser leaves lane-array reductions scalar */
typedef float vf_t __attribute__((vector_size(32)));
typedef int32_t vfi_t __attribute__((vector_size(32)));
typedef double vd_t __attribute__((vector_size(32)));
typedef int64_t vdi_t __attribute__((vector_size(32)));

#define REDUCERS(T, S, V, VI)                                                \
  enum { W_##S = (int)(sizeof(V) / sizeof(T)) };                                          \
  static inline V ld_##S(const T *p) { V v; memcpy(&v, p, sizeof v); return v; }          \
  static inline V splat_##S(T x) { V v; for (int l = 0; l < W_##S; l++) v[l] = x; return v; } \
  /* NaN never wins a comparison: a NaN row still comes out NaN through exp */           \
  static inline V vmax_##S(V a, V x) { VI m = x > a; return (V)(((VI)x & m) | ((VI)a & ~m)); } \
  static T rmax_##S(const T *x, int64_t n) {                                              \
    V a0 = splat_##S(-INFINITY), a1 = a0;                                                 \
    int64_t j = 0;                                                                        \
    for (; j + 2 * W_##S <= n; j += 2 * W_##S) {                                          \
      a0 = vmax_##S(a0, ld_##S(x + j));                                                   \
      a1 = vmax_##S(a1, ld_##S(x + j + W_##S));                                           \
    }                                                                                     \
    a0 = vmax_##S(a0, a1);                                                                \
    T m = -INFINITY;                                                                      \
    for (int l = 0; l < W_##S; l++) m = a0[l] > m ? a0[l] : m;                            \
    for (; j < n; j++) m = x[j] > m ? x[j] : m;                                           \
    return m;                                                                             \
  }                                                                                       \
  static T rsum_##S(const T *x, int64_t n) {                                              \
    V a0 = splat_##S(0), a1 = a0;                                                         \
    int64_t j = 0;                                                                        \
    for (; j + 2 * W_##S <= n; j += 2 * W_##S) {                                          \
      a0 += ld_##S(x + j);                                                                \
      a1 += ld_##S(x + j + W_##S);                                                        \
    }                                                                                     \
    a0 += a1;                                                                             \
    T s = 0;                                                                              \
    for (int l = 0; l < W_##S; l++) s += a0[l];                                           \
    for (; j < n; j++) s += x[j];                                                         \
    return s;                                                                             \
  }                                                                                       \
  static T rdot_##S(const T *x, const T *y, int64_t n) {                                  \
    V a0 = splat_##S(0), a1 = a0;                                                         \
    int64_t j = 0;                                                                        \
    for (; j + 2 * W_##S <= n; j += 2 * W_##S) {                                          \
      a0 += ld_##S(x + j) * ld_##S(y + j);                                                \
      a1 += ld_##S(x + j + W_##S) * ld_##S(y + j + W_##S);                                \
    }                                                                                     \
    a0 += a1;                                                                             \
    T s = 0;                                                                              \
    for (int l = 0; l < W_##S; l++) s += a0[l];                                           \
    for (; j < n; j++) s += x[j] * y[j];                                                  \
    return s;                                                                             \
  }
REDUCERS(float, f, vf_t, vfi_t)
REDUCERS(double, d, vd_t, vdi_t)

/*
** exp of 8 floats: x = k ln2 + r with |r| <= ln2/2, exp(r) by its Taylor
** polynomial to r^6 (relative error ~1e-7), 2^k built in the exponent bits.
** Below -87.3 the result is 0 (exp(-inf) = 0 for masked scores); NaN passes.
** Inline, it is several times cheaper than a libmvec call per vector.
*/
static inline vf_t vexpf(vf_t x) {
  const vf_t lo = splat_f(-87.33654f), hi = splat_f(88.72283f);
  vfi_t under = x < lo, nan = x != x;
  vfi_t m = x > hi;
  vf_t c = (vf_t)(((vfi_t)hi & m) | ((vfi_t)x & ~m));
  m = c < lo;
  c = (vf_t)(((vfi_t)lo & m) | ((vfi_t)c & ~m));
  const vf_t magic = splat_f(12582912.0f);   /* 1.5 * 2^23: adding it rounds to an integer */
  vf_t t = c * splat_f(1.44269504f) + magic;
  vf_t k = t - magic;
  vf_t r = c - k * splat_f(0.693145752f);
  r = r - k * splat_f(1.42860677e-06f);
  vf_t p = splat_f(1.0f / 720);
  p = p * r + splat_f(1.0f / 120);
  p = p * r + splat_f(1.0f / 24);
  p = p * r + splat_f(1.0f / 6);
  p = p * r + splat_f(0.5f);
  p = p * r + splat_f(1.0f);
  p = p * r + splat_f(1.0f);
  vfi_t ki = (vfi_t)t - (vfi_t)magic;        /* k as an integer, from t's low bits */
  vf_t scale = (vf_t)((ki + 127) << 23);
  vf_t e = p * scale;
  e = (vf_t)((vfi_t)e & ~under);
  return (vf_t)(((vfi_t)x & nan) | ((vfi_t)e & ~nan));
}

/* o[j] = exp(x[j] - m); returns their sum (one pass instead of two) */
static float exp_row_f(const float *x, float m, float *o, int64_t n) {
  int64_t j = 0;
  vf_t vm = splat_f(m), acc = splat_f(0);
  for (; j + W_f <= n; j += W_f) {
    vf_t e = vexpf(ld_f(x + j) - vm);
    acc += e;
    memcpy(o + j, &e, sizeof e);
  }
  float s = 0;
  for (int l = 0; l < W_f; l++) s += acc[l];
  for (; j < n; j++) s += o[j] = expf(x[j] - m);
  return s;
}
static double exp_row_d(const double *x, double m, double *o, int64_t n) {
  for (int64_t j = 0; j < n; j++) o[j] = exp(x[j] - m);
  return rsum_d(o, n);
}

#define ROW_KERNELS(T, S, EXP, LOG)                                                   \
  static void row_##S(int mode, const T *x, const T *g, T *o, int64_t n) {            \
    switch (mode) {                                                                   \
      case SM_FWD: {                                                                  \
        T m = rmax_##S(x, n);                                                         \
        T inv = (T)1 / exp_row_##S(x, m, o, n);                                       \
        for (int64_t j = 0; j < n; j++) o[j] *= inv;                                  \
        break;                                                                        \
      }                                                                               \
      case LSM_FWD: {                                                                 \
        T m = rmax_##S(x, n);                                                         \
        T lse = m + LOG(exp_row_##S(x, m, o, n));                                     \
        for (int64_t j = 0; j < n; j++) o[j] = x[j] - lse;                            \
        break;                                                                        \
      }                                                                               \
      case SM_BWD: {                                                                  \
        T s = rdot_##S(g, x, n);                                                      \
        for (int64_t j = 0; j < n; j++) o[j] = x[j] * (g[j] - s);                     \
        break;                                                                        \
      }                                                                               \
      default: {                                                                      \
        T s = rsum_##S(g, n);                                                         \
        for (int64_t j = 0; j < n; j++) o[j] = g[j] - EXP(x[j]) * s;                  \
        break;                                                                        \
      }                                                                               \
    }                                                                                 \
  }                                                                                   \
  /* w adjacent columns of n rows, row stride st */                                   \
  static void cols_##S(int mode, const T *x, const T *g, T *o, int64_t n, int64_t st, \
                       int64_t w) {                                                   \
    T a[BLK], b[BLK];                                                                 \
    switch (mode) {                                                                   \
      case SM_FWD: case LSM_FWD:                                                      \
        for (int64_t c = 0; c < w; c++) { a[c] = -INFINITY; b[c] = 0; }               \
        for (int64_t r = 0; r < n; r++)                                               \
          for (int64_t c = 0; c < w; c++) {                                           \
            T v = x[r * st + c];                                                      \
            a[c] = v > a[c] ? v : a[c];                                               \
          }                                                                           \
        for (int64_t r = 0; r < n; r++)                                               \
          for (int64_t c = 0; c < w; c++) {                                           \
            T e = EXP(x[r * st + c] - a[c]);                                          \
            if (mode == SM_FWD) o[r * st + c] = e;                                    \
            b[c] += e;                                                                \
          }                                                                           \
        if (mode == SM_FWD) {                                                         \
          for (int64_t c = 0; c < w; c++) b[c] = (T)1 / b[c];                         \
          for (int64_t r = 0; r < n; r++)                                             \
            for (int64_t c = 0; c < w; c++) o[r * st + c] *= b[c];                    \
        } else {                                                                      \
          for (int64_t c = 0; c < w; c++) b[c] = a[c] + LOG(b[c]);                    \
          for (int64_t r = 0; r < n; r++)                                             \
            for (int64_t c = 0; c < w; c++) o[r * st + c] = x[r * st + c] - b[c];     \
        }                                                                             \
        break;                                                                        \
      case SM_BWD:                                                                    \
        for (int64_t c = 0; c < w; c++) b[c] = 0;                                     \
        for (int64_t r = 0; r < n; r++)                                               \
          for (int64_t c = 0; c < w; c++) b[c] += g[r * st + c] * x[r * st + c];      \
        for (int64_t r = 0; r < n; r++)                                               \
          for (int64_t c = 0; c < w; c++)                                             \
            o[r * st + c] = x[r * st + c] * (g[r * st + c] - b[c]);                   \
        break;                                                                        \
      default:                                                                        \
        for (int64_t c = 0; c < w; c++) b[c] = 0;                                     \
        for (int64_t r = 0; r < n; r++)                                               \
          for (int64_t c = 0; c < w; c++) b[c] += g[r * st + c];                      \
        for (int64_t r = 0; r < n; r++)                                               \
          for (int64_t c = 0; c < w; c++)                                             \
            o[r * st + c] = g[r * st + c] - EXP(x[r * st + c]) * b[c];                \
        break;                                                                        \
    }                                                                                 \
  }

ROW_KERNELS(float, f, expf, logf)
ROW_KERNELS(double, d, exp, log)

typedef struct sm_job {
  int mode;
  bool f32;
  const void *x, *g;
  void *o;
  int64_t n, inner, nblk;
} sm_job;

static void sm_chunk(void *vctx, int64_t begin, int64_t end) {
  const sm_job *j = vctx;
  for (int64_t t = begin; t < end; t++) {
    int64_t off, w = 0;
    if (j->inner == 1) off = t * j->n;
    else {
      int64_t ob = t / j->nblk, cb = t % j->nblk;
      off = ob * j->n * j->inner + cb * BLK;
      w = j->inner - cb * BLK < BLK ? j->inner - cb * BLK : BLK;
    }
    if (j->f32) {
      const float *x = (const float *)j->x + off, *g = j->g ? (const float *)j->g + off : NULL;
      float *o = (float *)j->o + off;
      if (j->inner == 1) row_f(j->mode, x, g, o, j->n);
      else cols_f(j->mode, x, g, o, j->n, j->inner, w);
    } else {
      const double *x = (const double *)j->x + off, *g = j->g ? (const double *)j->g + off : NULL;
      double *o = (double *)j->o + off;
      if (j->inner == 1) row_d(j->mode, x, g, o, j->n);
      else cols_d(j->mode, x, g, o, j->n, j->inner, w);
    }
  }
}

/* x (and g) contiguous in dtype cdt (float32 or float64), o contiguous of x's shape */
static void sm_run(int mode, const lt_tensor *x, const lt_tensor *g, lt_tensor *o, int d) {
  int64_t n = x->ndim ? x->sizes[d] : 1, inner = 1, outer = 1;
  for (int i = 0; i < d; i++) outer *= x->sizes[i];
  for (int i = d + 1; i < x->ndim; i++) inner *= x->sizes[i];
  if (x->numel == 0) return;
  sm_job j = { mode, x->dtype == LT_FLOAT32, lt_tensor_data(x), g ? lt_tensor_data(g) : NULL,
               lt_tensor_data(o), n, inner, (inner + BLK - 1) / BLK };
  int64_t tasks = inner == 1 ? outer : outer * j.nblk;
  int64_t per = inner == 1 ? n : n * (inner < BLK ? inner : BLK);
  int64_t grain = LT_GRAIN_ELEMENTWISE / (per > 0 ? per : 1);
  lt_parallel_for(tasks, grain > 0 ? grain : 1, sm_chunk, &j);
}

/* the dtype computed in: float64 stays, everything else floating goes through float32 */
static lt_dtype compute_dtype(lt_dtype dt) { return dt == LT_FLOAT64 ? LT_FLOAT64 : LT_FLOAT32; }

static lt_tensor *forward(const char *op, int mode, lt_tensor *self, int64_t dim, int dtype, lt_tensor *out) {
  lt_dtype odt;
  int d;
  if (lt_meta_softmax(op, self, dtype, dim, &odt, &d) < 0) return NULL;
  lt_dtype cdt = compute_dtype(odt);
  lt_tensor *x = lt_tensor_to_dtype_contig(self, cdt);
  if (!x) return NULL;
  lt_tensor *o = lt_tensor_new(cdt, lt_tensor_device(self), self->ndim, self->sizes);
  if (!o) { lt_tensor_release(x); return NULL; }
  sm_run(mode, x, NULL, o, d);
  lt_tensor_release(x);
  if (cdt != odt) {
    lt_tensor *c = lt_tensor_clone_as(o, odt);
    lt_tensor_release(o);
    if (!c) return NULL;
    o = c;
  }
  if (out) {
    int rc = lt_tensor_resize_out(op, out, self->ndim, self->sizes);
    if (rc == 0) rc = lt_tensor_copy_(out, o);
    lt_tensor_release(o);
    if (rc < 0) return NULL;
    lt_tensor_retain(out);
    return out;
  }
  return o;
}

lt_tensor *lt_cpu_softmax(lt_tensor *self, int64_t dim, int dtype, lt_tensor *out) {
  return forward("softmax", SM_FWD, self, dim, dtype, out);
}

lt_tensor *lt_cpu_log_softmax(lt_tensor *self, int64_t dim, int dtype, lt_tensor *out) {
  return forward("log_softmax", LSM_FWD, self, dim, dtype, out);
}

static lt_tensor *backward(const char *op, int mode, lt_tensor *grad_output, lt_tensor *output, int64_t dim) {
  int d;
  if (lt_meta_softmax_backward(op, grad_output, output, dim, &d) < 0) return NULL;
  lt_dtype odt = lt_tensor_dtype(output);
  lt_dtype cdt = compute_dtype(odt);
  lt_tensor *y = lt_tensor_to_dtype_contig(output, cdt);
  if (!y) return NULL;
  lt_tensor *g = lt_tensor_to_dtype_contig(grad_output, cdt);
  if (!g) { lt_tensor_release(y); return NULL; }
  lt_tensor *o = lt_tensor_new(cdt, lt_tensor_device(output), output->ndim, output->sizes);
  if (o) sm_run(mode, y, g, o, d);
  lt_tensor_release(y);
  lt_tensor_release(g);
  if (o && cdt != odt) {
    lt_tensor *c = lt_tensor_clone_as(o, odt);
    lt_tensor_release(o);
    o = c;
  }
  return o;
}

lt_tensor *lt_cpu_softmax_backward(lt_tensor *grad_output, lt_tensor *output, int64_t dim) {
  return backward("softmax_backward", SM_BWD, grad_output, output, dim);
}

lt_tensor *lt_cpu_log_softmax_backward(lt_tensor *grad_output, lt_tensor *output, int64_t dim) {
  return backward("log_softmax_backward", LSM_BWD, grad_output, output, dim);
}
