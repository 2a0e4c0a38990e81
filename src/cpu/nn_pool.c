/*
** nn_pool.c — pooling over the last two dims (src/ops/nn_conv.lua): max, average
** and adaptive pools, their backward kernels, and the 1-D composites. Every dim
** before the last two is a plane; planes are independent, so they are spread
** over the pool. Max-pool indices are 1-based flat positions in the input plane.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include "core/tensor.h"
#include "core/error.h"
#include "cpu/parallel.h"
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */

typedef struct pool_geom {
  int64_t P, H, W, OH, OW;      /* planes, input and output plane sizes */
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool adaptive;
  bool ceil_mode, count_include_pad;
  int64_t divisor;              /* 0: none */
} pool_geom;

static int dtype_ok(const char *op, const char *arg, const lt_tensor *t) {
  lt_dtype d = lt_tensor_dtype(t);
  if (d != LT_FLOAT32 && d != LT_FLOAT64)
    return lt_error("%s: argument '%s' must be float32 or float64, got %s", op, arg, lt_dtype_name(d));
  return 0;
}

static int pair(const char *op, const char *arg, lt_intlist l, int64_t dflt_from_n, const int64_t *dflt,
                int64_t lo, int64_t *v) {
  if (l.n <= 0 && dflt) { v[0] = dflt[0]; v[1] = dflt[1]; (void)dflt_from_n; return 0; }
  if (l.n != 1 && l.n != 2)
    return lt_error("%s: argument '%s' must have 1 or 2 entries, got %d", op, arg, l.n < 0 ? 0 : l.n);
  for (int i = 0; i < 2; i++) {
    v[i] = l.v[l.n == 1 ? 0 : i];
    if (v[i] < lo) return lt_error("%s: argument '%s' must be %s, got %lld", op, arg,
                                   lo > 0 ? "positive" : "non-negative", (long long)v[i]);
  }
  return 0;
}

static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  if (num < 0) return 0;
  int64_t o = num / s + 1;
  /* the last window must start inside the input or its left padding */
  if (ceil_mode && (o - 1) * s >= in + p) o--;
  return o;
}

static int plane_dims(const char *op, const lt_tensor *x, pool_geom *q) {
  if (x->ndim != 3 && x->ndim != 4)
    return lt_error("%s: argument 'input' must be 3-D (C, H, W) or 4-D (N, C, H, W), got %d-D", op, x->ndim);
  q->H = x->sizes[x->ndim - 2]; q->W = x->sizes[x->ndim - 1];
  q->P = lt_shape_numel(x->ndim - 2, x->sizes);
  if (q->H < 1 || q->W < 1) return lt_error("%s: argument 'input' has an empty plane", op);
  return 0;
}

/* kernel_size, stride (default kernel_size), padding, dilation (NULL: 1), output size */
static int window_geom(const char *op, pool_geom *q, lt_intlist kernel_size, lt_intlist stride,
                       lt_intlist padding, lt_intlist dilation, bool ceil_mode, bool dilated_half) {
  int64_t k[2] = {0, 0}, s[2] = {0, 0}, p[2] = {0, 0}, d[2] = {1, 1};
  if (pair(op, "kernel_size", kernel_size, 0, NULL, 1, k)) return -1;
  if (pair(op, "stride", stride, 0, k, 1, s) || pair(op, "padding", padding, 0, NULL, 0, p)) return -1;
  if (dilation.n >= 0 && pair(op, "dilation", dilation, 0, NULL, 1, d)) return -1;
  for (int i = 0; i < 2; i++) {
    int64_t span = dilated_half ? (k[i] - 1) * d[i] + 1 : k[i];
    if (p[i] > span / 2)
      return lt_error("%s: argument 'padding' (%lld) must be at most half of the kernel size (%lld)", op,
                      (long long)p[i], (long long)span);
  }
  q->kh = k[0]; q->kw = k[1]; q->sh = s[0]; q->sw = s[1]; q->ph = p[0]; q->pw = p[1]; q->dh = d[0]; q->dw = d[1];
  q->ceil_mode = ceil_mode;
  q->adaptive = false;
  q->OH = out_size(q->H, q->kh, q->sh, q->ph, q->dh, ceil_mode);
  q->OW = out_size(q->W, q->kw, q->sw, q->pw, q->dw, ceil_mode);
  if (q->OH < 1 || q->OW < 1)
    return lt_error("%s: argument 'input' (%lld x %lld) is too small for the kernel: output %lld x %lld", op,
                    (long long)q->H, (long long)q->W, (long long)q->OH, (long long)q->OW);
  return 0;
}

static lt_tensor *new_like_planes(const lt_tensor *x, int ndim, const int64_t *in_sizes, int64_t h, int64_t w,
                                  lt_dtype dt) {
  int64_t sz[LT_MAX_DIMS];
  memcpy(sz, in_sizes, sizeof(int64_t) * (size_t)ndim);
  sz[ndim - 2] = h; sz[ndim - 1] = w;
  return lt_tensor_new(dt, lt_tensor_device(x), ndim, sz);
}

/* adaptive windows: [floor(o*in/out), ceil((o+1)*in/out)) */
static inline int64_t ad_start(int64_t o, int64_t out, int64_t in) { return (o * in) / out; }
static inline int64_t ad_end(int64_t o, int64_t out, int64_t in) { return ((o + 1) * in + out - 1) / out; }

/* the window of output (oh, ow): rows [*h0, *h1) step dh, cols [*w0, *w1) step dw, clipped */
static inline void window(const pool_geom *q, int64_t oh, int64_t ow, int64_t *h0, int64_t *h1, int64_t *w0,
                          int64_t *w1) {
  if (q->adaptive) {
    *h0 = ad_start(oh, q->OH, q->H); *h1 = ad_end(oh, q->OH, q->H);
    *w0 = ad_start(ow, q->OW, q->W); *w1 = ad_end(ow, q->OW, q->W);
    return;
  }
  int64_t hs = oh * q->sh - q->ph, ws = ow * q->sw - q->pw;
  int64_t he = hs + (q->kh - 1) * q->dh + 1, we = ws + (q->kw - 1) * q->dw + 1;
  while (hs < 0) hs += q->dh;
  while (ws < 0) ws += q->dw;
  *h0 = hs; *h1 = he < q->H ? he : q->H;
  *w0 = ws; *w1 = we < q->W ? we : q->W;
}

typedef struct pool_job {
  const pool_geom *q;
  const void *x;
  void *y;
  int64_t *ix;
  const int64_t *cix;
  atomic_int bad;
} pool_job;

/* ---- max ---- */

#define MAXPOOL(T, X)                                                                         \
static void maxpool_##X(void *ctx, int64_t p0, int64_t p1) {                                  \
  pool_job *j = ctx;                                                                          \
  const pool_geom *q = j->q;                                                                  \
  for (int64_t p = p0; p < p1; p++) {                                                         \
    const T *x = (const T *)j->x + p * q->H * q->W;                                           \
    T *y = (T *)j->y + p * q->OH * q->OW;                                                     \
    int64_t *ix = j->ix + p * q->OH * q->OW;                                                  \
    for (int64_t oh = 0; oh < q->OH; oh++)                                                    \
      for (int64_t ow = 0; ow < q->OW; ow++) {                                                \
        int64_t h0, h1, w0, w1;                                                               \
        window(q, oh, ow, &h0, &h1, &w0, &w1);                                                \
        int64_t bi = h0 * q->W + w0;                                                          \
        T best = x[bi];                                                                       \
        for (int64_t h = h0; h < h1; h += q->dh) {                                            \
          const T *row = x + h * q->W;                                                        \
          for (int64_t w = w0; w < w1; w += q->dw) {                                          \
            T v = row[w];                                                                     \
            if (v > best || v != v) { best = v; bi = h * q->W + w; }                          \
          }                                                                                   \
        }                                                                                     \
        y[oh * q->OW + ow] = best;                                                            \
        ix[oh * q->OW + ow] = bi + 1;                                                         \
      }                                                                                       \
  }                                                                                           \
}
MAXPOOL(float, s)
MAXPOOL(double, d)

static int64_t grain_for(const pool_geom *q, int64_t per_out) {
  int64_t work = q->OH * q->OW * per_out;
  int64_t g = LT_GRAIN_ELEMENTWISE / (work > 0 ? work : 1);
  return g > 0 ? g : 1;
}

static int max_run(const char *op, pool_geom *q, lt_tensor *self, lt_tensor **values, lt_tensor **indices) {
  lt_tensor *x = lt_tensor_contiguous(self);
  if (!x) return -1;
  *values = new_like_planes(x, x->ndim, x->sizes, q->OH, q->OW, lt_tensor_dtype(x));
  *indices = new_like_planes(x, x->ndim, x->sizes, q->OH, q->OW, LT_INT64);
  if (!*values || !*indices) {
    lt_tensor_release(x); lt_tensor_release(*values); lt_tensor_release(*indices);
    *values = *indices = NULL;
    return -1;
  }
  pool_job j = {q, lt_tensor_data(x), lt_tensor_data(*values), lt_tensor_data(*indices), NULL};
  int64_t per = q->adaptive ? (q->H / q->OH + 1) * (q->W / q->OW + 1) : q->kh * q->kw;
  lt_parallel_for(q->P, grain_for(q, per), x->dtype == LT_FLOAT32 ? maxpool_s : maxpool_d, &j);
  lt_tensor_release(x);
  (void)op;
  return 0;
}

int lt_cpu_max_pool2d_with_indices(lt_tensor *self, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                                   lt_intlist dilation, bool ceil_mode, lt_tensor **values, lt_tensor **indices) {
  const char *op = "max_pool2d";
  pool_geom q;
  *values = *indices = NULL;
  if (dtype_ok(op, "input", self) || plane_dims(op, self, &q)) return -1;
  if (window_geom(op, &q, kernel_size, stride, padding, dilation, ceil_mode, true)) return -1;
  return max_run(op, &q, self, values, indices);
}

static int adaptive_sizes(const char *op, const lt_tensor *self, lt_intlist output_size, pool_geom *q) {
  if (dtype_ok(op, "input", self) || plane_dims(op, self, q)) return -1;
  if (output_size.n != 1 && output_size.n != 2)
    return lt_error("%s: argument 'output_size' must have 1 or 2 entries, got %d", op,
                    output_size.n < 0 ? 0 : output_size.n);
  q->OH = output_size.v[0]; q->OW = output_size.v[output_size.n - 1];
  if (q->OH < 1 || q->OW < 1)
    return lt_error("%s: argument 'output_size' must be positive, got %lld x %lld", op, (long long)q->OH,
                    (long long)q->OW);
  q->adaptive = true;
  q->dh = q->dw = 1;
  return 0;
}

int lt_cpu_adaptive_max_pool2d(lt_tensor *self, lt_intlist output_size, lt_tensor **values, lt_tensor **indices) {
  const char *op = "adaptive_max_pool2d";
  pool_geom q;
  *values = *indices = NULL;
  if (adaptive_sizes(op, self, output_size, &q)) return -1;
  return max_run(op, &q, self, values, indices);
}

/* scatter-add of grad_output at the 1-based plane positions in indices */
#define MAXBACK(T, X)                                                                         \
static void maxback_##X(void *ctx, int64_t p0, int64_t p1) {                                  \
  pool_job *j = ctx;                                                                          \
  const pool_geom *q = j->q;                                                                  \
  int64_t hw = q->H * q->W, o = q->OH * q->OW;                                                \
  for (int64_t p = p0; p < p1; p++) {                                                         \
    const T *gy = (const T *)j->x + p * o;                                                    \
    const int64_t *ix = j->cix + p * o;                                                       \
    T *gx = (T *)j->y + p * hw;                                                               \
    for (int64_t i = 0; i < o; i++) {                                                         \
      int64_t k = ix[i] - 1;                                                                  \
      if (k < 0 || k >= hw) { atomic_store(&j->bad, 1); return; }                             \
      gx[k] += gy[i];                                                                         \
    }                                                                                         \
  }                                                                                           \
}
MAXBACK(float, s)
MAXBACK(double, d)

static int input_size_ok(const char *op, lt_intlist input_size, const lt_tensor *gy, pool_geom *q) {
  char a[128], b[128];
  if (input_size.n < 2 || input_size.n != gy->ndim)
    return lt_error("%s: argument 'input_size' (%d entries) must match the rank of grad_output (%d)", op,
                    input_size.n < 0 ? 0 : input_size.n, gy->ndim);
  for (int i = 0; i < input_size.n; i++)
    if (input_size.v[i] < 0 || (i < input_size.n - 2 && input_size.v[i] != gy->sizes[i]))
      return lt_error("%s: argument 'input_size' %s does not fit grad_output %s", op,
                      lt_shape_str(input_size.n, input_size.v, a, sizeof a), lt_shape_str(gy->ndim, gy->sizes, b, sizeof b));
  q->P = lt_shape_numel(gy->ndim - 2, gy->sizes);
  q->H = input_size.v[input_size.n - 2]; q->W = input_size.v[input_size.n - 1];
  q->OH = gy->sizes[gy->ndim - 2]; q->OW = gy->sizes[gy->ndim - 1];
  return 0;
}

lt_tensor *lt_cpu_max_pool2d_backward(lt_tensor *grad_output, lt_tensor *indices, lt_intlist input_size) {
  const char *op = "max_pool2d_backward";
  pool_geom q;
  if (dtype_ok(op, "grad_output", grad_output)) return NULL;
  if (indices->dtype != LT_INT64) return lt_error_null("%s: argument 'indices' must be int64", op);
  if (!lt_tensor_same_shape(grad_output, indices))
    return lt_error_null("%s: argument 'indices' must have the shape of grad_output", op);
  if (input_size_ok(op, input_size, grad_output, &q)) return NULL;
  lt_tensor *gy = lt_tensor_contiguous(grad_output), *ix = lt_tensor_contiguous(indices);
  lt_tensor *gx = gy && ix ? lt_tensor_new_zeros(lt_tensor_dtype(gy), lt_tensor_device(gy), input_size.n, input_size.v) : NULL;
  if (gx && q.P * q.OH * q.OW > 0) {
    pool_job j = {&q, lt_tensor_data(gy), lt_tensor_data(gx), NULL, lt_tensor_data(ix)};
    atomic_init(&j.bad, 0);
    lt_parallel_for(q.P, grain_for(&q, 1), gy->dtype == LT_FLOAT32 ? maxback_s : maxback_d, &j);
    if (atomic_load(&j.bad)) {
      lt_tensor_release(gx);
      gx = lt_error_null("%s: argument 'indices' holds a position outside the input plane", op);
    }
  }
  lt_tensor_release(gy);
  lt_tensor_release(ix);
  return gx;
}

/* ---- average ---- */

/* the window and its divisor, as PyTorch counts them */
static inline void avg_window(const pool_geom *q, int64_t oh, int64_t ow, int64_t *h0, int64_t *h1, int64_t *w0,
                              int64_t *w1, double *div) {
  if (q->adaptive) {
    window(q, oh, ow, h0, h1, w0, w1);
    *div = (double)((*h1 - *h0) * (*w1 - *w0));
    return;
  }
  int64_t hs = oh * q->sh - q->ph, ws = ow * q->sw - q->pw;
  int64_t he = hs + q->kh, we = ws + q->kw;
  if (he > q->H + q->ph) he = q->H + q->ph;
  if (we > q->W + q->pw) we = q->W + q->pw;
  int64_t area = (he - hs) * (we - ws);
  if (hs < 0) hs = 0;
  if (ws < 0) ws = 0;
  if (he > q->H) he = q->H;
  if (we > q->W) we = q->W;
  *h0 = hs; *h1 = he; *w0 = ws; *w1 = we;
  *div = q->divisor ? (double)q->divisor : q->count_include_pad ? (double)area : (double)((he - hs) * (we - ws));
}

#define AVGPOOL(T, X)                                                                         \
static void avgpool_##X(void *ctx, int64_t p0, int64_t p1) {                                  \
  pool_job *j = ctx;                                                                          \
  const pool_geom *q = j->q;                                                                  \
  for (int64_t p = p0; p < p1; p++) {                                                         \
    const T *x = (const T *)j->x + p * q->H * q->W;                                           \
    T *y = (T *)j->y + p * q->OH * q->OW;                                                     \
    for (int64_t oh = 0; oh < q->OH; oh++)                                                    \
      for (int64_t ow = 0; ow < q->OW; ow++) {                                                \
        int64_t h0, h1, w0, w1;                                                               \
        double div;                                                                           \
        avg_window(q, oh, ow, &h0, &h1, &w0, &w1, &div);                                      \
        T s = 0;                                                                              \
        for (int64_t h = h0; h < h1; h++)                                                     \
          for (int64_t w = w0; w < w1; w++) s += x[h * q->W + w];                             \
        y[oh * q->OW + ow] = h1 > h0 && w1 > w0 ? (T)(s / (T)div) : (T)0;                     \
      }                                                                                       \
  }                                                                                           \
}                                                                                             \
static void avgback_##X(void *ctx, int64_t p0, int64_t p1) {                                  \
  pool_job *j = ctx;                                                                          \
  const pool_geom *q = j->q;                                                                  \
  for (int64_t p = p0; p < p1; p++) {                                                         \
    const T *gy = (const T *)j->x + p * q->OH * q->OW;                                        \
    T *gx = (T *)j->y + p * q->H * q->W;                                                      \
    for (int64_t oh = 0; oh < q->OH; oh++)                                                    \
      for (int64_t ow = 0; ow < q->OW; ow++) {                                                \
        int64_t h0, h1, w0, w1;                                                               \
        double div;                                                                           \
        avg_window(q, oh, ow, &h0, &h1, &w0, &w1, &div);                                      \
        T g = (T)(gy[oh * q->OW + ow] / (T)div);                                              \
        for (int64_t h = h0; h < h1; h++)                                                     \
          for (int64_t w = w0; w < w1; w++) gx[h * q->W + w] += g;                            \
      }                                                                                       \
  }                                                                                           \
}
AVGPOOL(float, s)
AVGPOOL(double, d)

static int avg_geom(const char *op, pool_geom *q, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                    bool ceil_mode, bool count_include_pad, int64_t divisor_override) {
  if (window_geom(op, q, kernel_size, stride, padding, lt_intlist_none(), ceil_mode, false)) return -1;
  q->count_include_pad = count_include_pad;
  q->divisor = 0;
  if (divisor_override != LT_NOINT) {
    if (divisor_override == 0) return lt_error("%s: argument 'divisor_override' must not be zero", op);
    q->divisor = divisor_override;
  }
  return 0;
}

lt_tensor *lt_cpu_avg_pool2d(lt_tensor *self, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                             bool ceil_mode, bool count_include_pad, int64_t divisor_override) {
  const char *op = "avg_pool2d";
  pool_geom q;
  if (dtype_ok(op, "input", self) || plane_dims(op, self, &q)) return NULL;
  if (avg_geom(op, &q, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)) return NULL;
  lt_tensor *x = lt_tensor_contiguous(self);
  if (!x) return NULL;
  lt_tensor *y = new_like_planes(x, x->ndim, x->sizes, q.OH, q.OW, lt_tensor_dtype(x));
  if (y) {
    pool_job j = {&q, lt_tensor_data(x), lt_tensor_data(y), NULL, NULL};
    lt_parallel_for(q.P, grain_for(&q, q.kh * q.kw), x->dtype == LT_FLOAT32 ? avgpool_s : avgpool_d, &j);
  }
  lt_tensor_release(x);
  return y;
}

static lt_tensor *avg_backward(const pool_geom *q, lt_tensor *grad_output, lt_intlist input_size) {
  lt_tensor *gy = lt_tensor_contiguous(grad_output);
  if (!gy) return NULL;
  lt_tensor *gx = lt_tensor_new_zeros(lt_tensor_dtype(gy), lt_tensor_device(gy), input_size.n, input_size.v);
  if (gx) {
    pool_job j = {q, lt_tensor_data(gy), lt_tensor_data(gx), NULL, NULL};
    int64_t per = q->adaptive ? (q->H / q->OH + 1) * (q->W / q->OW + 1) : q->kh * q->kw;
    lt_parallel_for(q->P, grain_for(q, per), gy->dtype == LT_FLOAT32 ? avgback_s : avgback_d, &j);
  }
  lt_tensor_release(gy);
  return gx;
}

lt_tensor *lt_cpu_avg_pool2d_backward(lt_tensor *grad_output, lt_intlist input_size, lt_intlist kernel_size,
                                      lt_intlist stride, lt_intlist padding, bool ceil_mode, bool count_include_pad,
                                      int64_t divisor_override) {
  const char *op = "avg_pool2d_backward";
  pool_geom q;
  if (dtype_ok(op, "grad_output", grad_output) || input_size_ok(op, input_size, grad_output, &q)) return NULL;
  int64_t oh = q.OH, ow = q.OW;
  if (q.H < 1 || q.W < 1) return lt_error_null("%s: argument 'input_size' has an empty plane", op);
  if (avg_geom(op, &q, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)) return NULL;
  if (q.OH != oh || q.OW != ow) return lt_error_null("%s: argument 'grad_output' does not fit the pooling", op);
  return avg_backward(&q, grad_output, input_size);
}

lt_tensor *lt_cpu_adaptive_avg_pool2d(lt_tensor *self, lt_intlist output_size) {
  const char *op = "adaptive_avg_pool2d";
  pool_geom q;
  if (adaptive_sizes(op, self, output_size, &q)) return NULL;
  lt_tensor *x = lt_tensor_contiguous(self);
  if (!x) return NULL;
  lt_tensor *y = new_like_planes(x, x->ndim, x->sizes, q.OH, q.OW, lt_tensor_dtype(x));
  if (y) {
    pool_job j = {&q, lt_tensor_data(x), lt_tensor_data(y), NULL, NULL};
    int64_t per = (q.H / q.OH + 1) * (q.W / q.OW + 1);
    lt_parallel_for(q.P, grain_for(&q, per), x->dtype == LT_FLOAT32 ? avgpool_s : avgpool_d, &j);
  }
  lt_tensor_release(x);
  return y;
}

lt_tensor *lt_cpu_adaptive_avg_pool2d_backward(lt_tensor *grad_output, lt_intlist input_size) {
  const char *op = "adaptive_avg_pool2d_backward";
  pool_geom q;
  if (dtype_ok(op, "grad_output", grad_output) || input_size_ok(op, input_size, grad_output, &q)) return NULL;
  if (q.H < 1 || q.W < 1 || q.OH < 1 || q.OW < 1) return lt_error_null("%s: empty planes", op);
  q.adaptive = true;
  q.dh = q.dw = 1;
  return avg_backward(&q, grad_output, input_size);
}

/* ---- 1-D composites: a height of 1 ---- */

static int widen(const char *op, const char *arg, lt_intlist l, int64_t fill, int64_t *v, bool optional) {
  if (optional && l.n <= 0) return 0;
  if (l.n != 1) return lt_error("%s: argument '%s' must have 1 entry, got %d", op, arg, l.n < 0 ? 0 : l.n);
  v[0] = fill; v[1] = l.v[0];
  return 0;
}

static lt_tensor *unsq(const char *op, lt_tensor *self) {
  if (self->ndim != 2 && self->ndim != 3)
    return lt_error_null("%s: argument 'input' must be 2-D (C, L) or 3-D (N, C, L), got %d-D", op, self->ndim);
  return lt_unsqueeze(self, self->ndim - 1);
}

static lt_tensor *sq(lt_tensor *y) {
  if (!y) return NULL;
  lt_tensor *r = lt_squeeze(y, y->ndim - 2);
  lt_tensor_release(y);
  return r;
}

/* errors of the 2-D op carry its name; the user called the 1-D one */
static void rename_error(const char *from, const char *to) {
  const char *m = lt_error_message();
  size_t n = strlen(from);
  if (m && strncmp(m, from, n) == 0 && m[n] == ':') {
    char msg[512];
    snprintf(msg, sizeof msg, "%s%s", to, m + n);
    lt_error("%s", msg);
  }
}

int lt_max_pool1d_with_indices_impl(lt_tensor *self, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                                    lt_intlist dilation, bool ceil_mode, lt_tensor **values, lt_tensor **indices) {
  const char *op = "max_pool1d";
  int64_t k[2] = {0, 0}, s[2] = {0, 0}, p[2] = {0, 0}, d[2] = {1, 1};
  *values = *indices = NULL;
  if (widen(op, "kernel_size", kernel_size, 1, k, false) || widen(op, "stride", stride, 1, s, true) ||
      widen(op, "padding", padding, 0, p, false) || widen(op, "dilation", dilation, 1, d, false)) return -1;
  lt_tensor *x = unsq(op, self);
  if (!x) return -1;
  lt_tensor *v, *i;
  int rc = lt_max_pool2d_with_indices(x, lt_intlist_make(k, 2), stride.n > 0 ? lt_intlist_make(s, 2) : stride,
                                      lt_intlist_make(p, 2), lt_intlist_make(d, 2), ceil_mode, &v, &i);
  lt_tensor_release(x);
  if (rc < 0) { rename_error("max_pool2d", op); return -1; }
  *values = sq(v);
  *indices = sq(i);
  if (!*values || !*indices) {
    lt_tensor_release(*values); lt_tensor_release(*indices);
    *values = *indices = NULL;
    return -1;
  }
  return 0;
}

lt_tensor *lt_max_pool1d_impl(lt_tensor *self, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                              lt_intlist dilation, bool ceil_mode) {
  lt_tensor *v, *i;
  if (lt_max_pool1d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode, &v, &i) < 0) return NULL;
  lt_tensor_release(i);
  return v;
}

lt_tensor *lt_max_pool2d_impl(lt_tensor *self, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                              lt_intlist dilation, bool ceil_mode) {
  lt_tensor *v, *i;
  if (lt_max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode, &v, &i) < 0) return NULL;
  lt_tensor_release(i);
  return v;
}

lt_tensor *lt_avg_pool1d_impl(lt_tensor *self, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                              bool ceil_mode, bool count_include_pad) {
  const char *op = "avg_pool1d";
  int64_t k[2] = {0, 0}, s[2] = {0, 0}, p[2] = {0, 0};
  if (widen(op, "kernel_size", kernel_size, 1, k, false) || widen(op, "stride", stride, 1, s, true) ||
      widen(op, "padding", padding, 0, p, false)) return NULL;
  lt_tensor *x = unsq(op, self);
  if (!x) return NULL;
  lt_tensor *y = lt_avg_pool2d(x, lt_intlist_make(k, 2), stride.n > 0 ? lt_intlist_make(s, 2) : stride,
                               lt_intlist_make(p, 2), ceil_mode, count_include_pad, LT_NOINT);
  lt_tensor_release(x);
  if (!y) rename_error("avg_pool2d", op);
  return sq(y);
}
