/*
** nn_pool.c — pooling over the last two dims (src/ops/nn_conv.lua): max, average
** and adaptive pools and their backward kernels (the 1-D pools are composites:
** src/composite/nn_conv.c). Every dim
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

#include "meta/pool.h"

/* the geometry, its checks and the windows are device-neutral (meta/pool.h) */
typedef lt_pool_geom pool_geom;

/* a tensor of x's shape with g's output plane */
static lt_tensor *new_like_planes(const pool_geom *g, const lt_tensor *x, lt_dtype dt) {
  int64_t sz[LT_MAX_DIMS];
  lt_meta_pool_out_sizes(g, x->ndim, x->sizes, sz);
  return lt_tensor_new(dt, lt_tensor_device(x), x->ndim, sz);
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
        lt_meta_pool_window(q, oh, ow, &h0, &h1, &w0, &w1);                                   \
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

/* 2x2 windows, stride 2, no padding (LeNet's and most CNNs' pools): the four values in
** reading order, picked without branches so the loop vectorises (nn_pool.c is built
** with -fno-trapping-math, which lets a comparison become a select). Same rule as the
** general loop: a greater value or a NaN replaces the best so far. */
#define MAXPOOL22(T, X)                                                                       static void maxpool22_##X(void *ctx, int64_t p0, int64_t p1) {                                  pool_job *j = ctx;                                                                            const pool_geom *q = j->q;                                                                    const int64_t W = q->W, OW = q->OW;                                                           for (int64_t p = p0; p < p1; p++)                                                               for (int64_t oh = 0; oh < q->OH; oh++) {                                                        const T *restrict r0 = (const T *)j->x + (p * q->H + 2 * oh) * W, *restrict r1 = r0 + W;       T *restrict y = (T *)j->y + (p * q->OH + oh) * OW;                                            int64_t *restrict ix = j->ix + (p * q->OH + oh) * OW;                                         const int64_t base = 2 * oh * W + 1;   /* 1-based flat position of the row's start */         for (int64_t ow = 0; ow < OW; ow++) {                                                           T a = r0[2 * ow], b = r0[2 * ow + 1], c = r1[2 * ow], d = r1[2 * ow + 1];                     T best = a; int64_t bi = base + 2 * ow;                                                       bool t = b > best || b != b; best = t ? b : best; bi = t ? base + 2 * ow + 1 : bi;            t = c > best || c != c; best = t ? c : best; bi = t ? base + W + 2 * ow : bi;                 t = d > best || d != d; best = t ? d : best; bi = t ? base + W + 2 * ow + 1 : bi;             y[ow] = best; ix[ow] = bi;                                                                  }                                                                                           }                                                                                         }
MAXPOOL22(float, s)
MAXPOOL22(double, d)

static bool is_pool22(const pool_geom *q) {
  return !q->adaptive && q->kh == 2 && q->kw == 2 && q->sh == 2 && q->sw == 2 && q->ph == 0 && q->pw == 0 &&
         q->dh == 1 && q->dw == 1 && 2 * q->OH <= q->H && 2 * q->OW <= q->W;
}

static int64_t grain_for(const pool_geom *q, int64_t per_out) {
  int64_t work = q->OH * q->OW * per_out;
  int64_t g = LT_GRAIN_ELEMENTWISE / (work > 0 ? work : 1);
  return g > 0 ? g : 1;
}

static int max_run(const char *op, pool_geom *q, lt_tensor *self, lt_tensor **values, lt_tensor **indices) {
  lt_tensor *x = lt_tensor_contiguous(self);
  if (!x) return -1;
  *values = new_like_planes(q, x, lt_tensor_dtype(x));
  *indices = new_like_planes(q, x, LT_INT64);
  if (!*values || !*indices) {
    lt_tensor_release(x); lt_tensor_release(*values); lt_tensor_release(*indices);
    *values = *indices = NULL;
    return -1;
  }
  pool_job j = {q, lt_tensor_data(x), lt_tensor_data(*values), lt_tensor_data(*indices), NULL};
  int64_t per = q->adaptive ? (q->H / q->OH + 1) * (q->W / q->OW + 1) : q->kh * q->kw;
  bool f32 = x->dtype == LT_FLOAT32;
  lt_parallel_fn fn = is_pool22(q) ? (f32 ? maxpool22_s : maxpool22_d) : (f32 ? maxpool_s : maxpool_d);
  lt_parallel_for(q->P, grain_for(q, per), fn, &j);
  lt_tensor_release(x);
  (void)op;
  return 0;
}

int lt_cpu_max_pool2d_with_indices(lt_tensor *self, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                                   lt_intlist dilation, bool ceil_mode, lt_tensor **values, lt_tensor **indices) {
  const char *op = "max_pool2d";
  pool_geom q;
  *values = *indices = NULL;
  if (lt_meta_max_pool2d(op, self, kernel_size, stride, padding, dilation, ceil_mode, &q)) return -1;
  return max_run(op, &q, self, values, indices);
}

int lt_cpu_adaptive_max_pool2d(lt_tensor *self, lt_intlist output_size, lt_tensor **values, lt_tensor **indices) {
  const char *op = "adaptive_max_pool2d";
  pool_geom q;
  *values = *indices = NULL;
  if (lt_meta_adaptive_pool2d(op, self, output_size, &q)) return -1;
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

lt_tensor *lt_cpu_max_pool2d_backward(lt_tensor *grad_output, lt_tensor *indices, lt_intlist input_size) {
  const char *op = "max_pool2d_backward";
  pool_geom q;
  if (lt_meta_max_pool2d_backward(op, grad_output, indices, input_size, &q)) return NULL;
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
        lt_meta_avg_pool_window(q, oh, ow, &h0, &h1, &w0, &w1, &div);                         \
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
        lt_meta_avg_pool_window(q, oh, ow, &h0, &h1, &w0, &w1, &div);                         \
        T g = (T)(gy[oh * q->OW + ow] / (T)div);                                              \
        for (int64_t h = h0; h < h1; h++)                                                     \
          for (int64_t w = w0; w < w1; w++) gx[h * q->W + w] += g;                            \
      }                                                                                       \
  }                                                                                           \
}
AVGPOOL(float, s)
AVGPOOL(double, d)

lt_tensor *lt_cpu_avg_pool2d(lt_tensor *self, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                             bool ceil_mode, bool count_include_pad, int64_t divisor_override) {
  const char *op = "avg_pool2d";
  pool_geom q;
  if (lt_meta_avg_pool2d(op, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, &q))
    return NULL;
  lt_tensor *x = lt_tensor_contiguous(self);
  if (!x) return NULL;
  lt_tensor *y = new_like_planes(&q, x, lt_tensor_dtype(x));
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
  if (lt_meta_avg_pool2d_backward(op, grad_output, input_size, kernel_size, stride, padding, ceil_mode,
                                  count_include_pad, divisor_override, &q)) return NULL;
  return avg_backward(&q, grad_output, input_size);
}

lt_tensor *lt_cpu_adaptive_avg_pool2d(lt_tensor *self, lt_intlist output_size) {
  const char *op = "adaptive_avg_pool2d";
  pool_geom q;
  if (lt_meta_adaptive_pool2d(op, self, output_size, &q)) return NULL;
  lt_tensor *x = lt_tensor_contiguous(self);
  if (!x) return NULL;
  lt_tensor *y = new_like_planes(&q, x, lt_tensor_dtype(x));
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
  if (lt_meta_adaptive_avg_pool2d_backward(op, grad_output, input_size, &q)) return NULL;
  return avg_backward(&q, grad_output, input_size);
}
