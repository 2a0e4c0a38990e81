/*
** nn_resample.c — pad (constant / reflect / replicate), nearest and bilinear
** 2-D upsampling with their backward kernels (src/ops/nn_conv.lua);
** pixel_(un)shuffle is a composite (src/composite/nn_conv.c).
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

#include "meta/resample.h"

/* ---- pad ---- */

/* the shapes and checks are device-neutral (meta/resample.h); the CPU adds an index map
** per padded dim i (dim ndim-k+i, outermost first): output index -> input index or -1 */
typedef struct pad_plan {
  lt_pad_geom g;
  int64_t *map[LT_MAX_DIMS];
} pad_plan;

static void plan_free(pad_plan *p) { for (int i = 0; i < p->g.k; i++) free(p->map[i]); }

static int plan_maps(const char *op, pad_plan *p) {
  const lt_pad_geom *g = &p->g;
  memset(p->map, 0, sizeof p->map);
  for (int i = 0; i < g->k; i++) {
    int d = g->ndim - g->k + i;
    int64_t m = g->out[d];
    p->map[i] = malloc(sizeof(int64_t) * (size_t)(m > 0 ? m : 1));
    if (!p->map[i]) { plan_free(p); return lt_error("%s: out of memory", op); }
    for (int64_t o = 0; o < m; o++) p->map[i][o] = lt_meta_pad_source(g->mode, o, g->left[d], g->in[d]);
  }
  return 0;
}

typedef struct pad_job {
  const pad_plan *p;
  const char *src;
  char *dst;
  size_t es;
  const char *fill;             /* es bytes */
  bool backward, f32;
} pad_job;

/* one outer slab: walk the output rows (all padded dims but the last) with a counter */
static void pad_slabs(void *ctx, int64_t s0, int64_t s1) {
  pad_job *j = ctx;
  const lt_pad_geom *g = &j->p->g;
  int64_t *const *map = j->p->map;
  int k = g->k, nd = g->ndim;
  size_t es = j->es;
  int64_t in_slab = 1, out_slab = 1, rows = 1;
  for (int i = 0; i < k; i++) { in_slab *= g->in[nd - k + i]; out_slab *= g->out[nd - k + i]; }
  for (int i = 0; i + 1 < k; i++) rows *= g->out[nd - k + i];
  int64_t ow = k > 0 ? g->out[nd - 1] : 1, iw = k > 0 ? g->in[nd - 1] : 1;
  const int64_t *lastmap = k > 0 ? map[k - 1] : NULL;
  for (int64_t s = s0; s < s1; s++) {
    for (int64_t r = 0; r < rows; r++) {
      /* source row of output row r, or -1 when it is padding */
      int64_t rem = r, src_row = 0, mul = 1;
      bool pad_row = false;
      for (int i = k - 2; i >= 0; i--) {
        int64_t sz = g->out[nd - k + i], o = rem % sz;
        rem /= sz;
        int64_t si = map[i][o];
        if (si < 0) pad_row = true;
        src_row += si * mul;
        mul *= g->in[nd - k + i];
      }
      int64_t ooff = s * out_slab + r * ow, ioff = s * in_slab + src_row * iw;
      if (!j->backward) {
        char *d = j->dst + (size_t)ooff * es;
        if (k == 0) { memcpy(d, j->src + (size_t)(s * in_slab) * es, es); continue; }
        for (int64_t o = 0; o < ow; o++) {
          int64_t si = lastmap[o];
          if (pad_row || si < 0) memcpy(d + (size_t)o * es, j->fill, es);
          else memcpy(d + (size_t)o * es, j->src + (size_t)(ioff + si) * es, es);
        }
      } else {
        if (pad_row) continue;
        if (k == 0) {
          if (j->f32) ((float *)j->dst)[s * in_slab] += ((const float *)j->src)[ooff];
          else ((double *)j->dst)[s * in_slab] += ((const double *)j->src)[ooff];
          continue;
        }
        if (j->f32) {
          float *gx = (float *)j->dst + ioff; const float *gy = (const float *)j->src + ooff;
          for (int64_t o = 0; o < ow; o++) if (lastmap[o] >= 0) gx[lastmap[o]] += gy[o];
        } else {
          double *gx = (double *)j->dst + ioff; const double *gy = (const double *)j->src + ooff;
          for (int64_t o = 0; o < ow; o++) if (lastmap[o] >= 0) gx[lastmap[o]] += gy[o];
        }
      }
    }
  }
}

static int64_t slab_grain(const lt_pad_geom *p) {
  int64_t per = lt_shape_numel(p->k, p->out + p->ndim - p->k);
  int64_t g = LT_GRAIN_ELEMENTWISE / (per > 0 ? per : 1);
  return g > 0 ? g : 1;
}

lt_tensor *lt_cpu_pad(lt_tensor *self, lt_intlist pad, const char *mode, double value) {
  const char *op = "pad";
  pad_plan p;
  if (lt_meta_pad(op, self, pad, mode, &p.g) || plan_maps(op, &p)) return NULL;
  lt_tensor *x = lt_tensor_contiguous(self);
  lt_tensor *y = x ? lt_tensor_new(lt_tensor_dtype(x), lt_tensor_device(x), p.g.ndim, p.g.out) : NULL;
  lt_tensor *fill = y ? lt_tensor_from_scalar(lt_scalar_float(value), lt_tensor_dtype(x)) : NULL;
  if (fill && lt_shape_numel(p.g.ndim, p.g.out) > 0) {
    pad_job j = {&p, lt_tensor_data(x), lt_tensor_data(y), lt_dtype_size(lt_tensor_dtype(x)), lt_tensor_data(fill),
                 false, false};
    lt_parallel_for(p.g.outer, slab_grain(&p.g), pad_slabs, &j);
  }
  if (!fill) { lt_tensor_release(y); y = NULL; }
  lt_tensor_release(fill);
  lt_tensor_release(x);
  plan_free(&p);
  return y;
}

lt_tensor *lt_cpu_pad_backward(lt_tensor *grad_output, lt_intlist input_size, lt_intlist pad, const char *mode) {
  const char *op = "pad_backward";
  pad_plan p;
  if (lt_meta_pad_backward(op, grad_output, input_size, pad, mode, &p.g) || plan_maps(op, &p)) return NULL;
  lt_tensor *gy = lt_tensor_contiguous(grad_output);
  lt_tensor *gx = gy ? lt_tensor_new_zeros(lt_tensor_dtype(gy), lt_tensor_device(gy), p.g.ndim, p.g.in) : NULL;
  if (gx && lt_shape_numel(p.g.ndim, p.g.out) > 0 && lt_shape_numel(p.g.ndim, p.g.in) > 0) {
    pad_job j = {&p, lt_tensor_data(gy), lt_tensor_data(gx), lt_dtype_size(lt_tensor_dtype(gy)), NULL, true,
                 gy->dtype == LT_FLOAT32};
    lt_parallel_for(p.g.outer, slab_grain(&p.g), pad_slabs, &j);
  }
  lt_tensor_release(gy);
  plan_free(&p);
  return gx;
}

/* ---- upsampling (N, C, H, W) -> (N, C, OH, OW) ---- */

typedef lt_upsample_geom up_geom;

typedef struct up_job {
  const up_geom *q;
  const void *x;
  void *y;
} up_job;

#define NEAREST(T, X)                                                                         \
static void nearest_##X(void *ctx, int64_t p0, int64_t p1) {                                  \
  up_job *j = ctx;                                                                            \
  const up_geom *q = j->q;                                                                    \
  float rh = lt_meta_nearest_ratio(q->H, q->OH, q->scale_h);                                  \
  float rw = lt_meta_nearest_ratio(q->W, q->OW, q->scale_w);                                  \
  for (int64_t p = p0; p < p1; p++) {                                                         \
    const T *x = (const T *)j->x + p * q->H * q->W;                                           \
    T *y = (T *)j->y + p * q->OH * q->OW;                                                     \
    for (int64_t oh = 0; oh < q->OH; oh++) {                                                  \
      const T *row = x + lt_meta_nearest_src(oh, q->H, rh) * q->W;                            \
      for (int64_t ow = 0; ow < q->OW; ow++) y[oh * q->OW + ow] = row[lt_meta_nearest_src(ow, q->W, rw)]; \
    }                                                                                         \
  }                                                                                           \
}                                                                                             \
static void nearest_back_##X(void *ctx, int64_t p0, int64_t p1) {                             \
  up_job *j = ctx;                                                                            \
  const up_geom *q = j->q;                                                                    \
  float rh = lt_meta_nearest_ratio(q->H, q->OH, q->scale_h);                                  \
  float rw = lt_meta_nearest_ratio(q->W, q->OW, q->scale_w);                                  \
  for (int64_t p = p0; p < p1; p++) {                                                         \
    const T *gy = (const T *)j->x + p * q->OH * q->OW;                                        \
    T *gx = (T *)j->y + p * q->H * q->W;                                                      \
    for (int64_t oh = 0; oh < q->OH; oh++) {                                                  \
      T *row = gx + lt_meta_nearest_src(oh, q->H, rh) * q->W;                                 \
      for (int64_t ow = 0; ow < q->OW; ow++) row[lt_meta_nearest_src(ow, q->W, rw)] += gy[oh * q->OW + ow]; \
    }                                                                                         \
  }                                                                                           \
}
NEAREST(float, s)
NEAREST(double, d)

/* bilinear: each output reads two source rows and columns (lt_meta_bilinear_src_*) */
#define BILINEAR(T, X)                                                                        \
static void bilinear_##X(void *ctx, int64_t p0, int64_t p1) {                                 \
  up_job *j = ctx;                                                                            \
  const up_geom *q = j->q;                                                                    \
  for (int64_t p = p0; p < p1; p++) {                                                         \
    const T *x = (const T *)j->x + p * q->H * q->W;                                           \
    T *y = (T *)j->y + p * q->OH * q->OW;                                                     \
    for (int64_t oh = 0; oh < q->OH; oh++) {                                                  \
      int64_t h0, h1; T lh;                                                                   \
      lt_meta_bilinear_src_##X(oh, q->H, q->OH, q->align_corners, q->scale_h, &h0, &h1, &lh); \
      for (int64_t ow = 0; ow < q->OW; ow++) {                                                \
        int64_t w0, w1; T lw;                                                                 \
        lt_meta_bilinear_src_##X(ow, q->W, q->OW, q->align_corners, q->scale_w, &w0, &w1, &lw); \
        const T *r0 = x + h0 * q->W, *r1 = x + h1 * q->W;                                     \
        y[oh * q->OW + ow] = ((T)1 - lh) * (((T)1 - lw) * r0[w0] + lw * r0[w1]) +             \
                             lh * (((T)1 - lw) * r1[w0] + lw * r1[w1]);                       \
      }                                                                                       \
    }                                                                                         \
  }                                                                                           \
}                                                                                             \
static void bilinear_back_##X(void *ctx, int64_t p0, int64_t p1) {                            \
  up_job *j = ctx;                                                                            \
  const up_geom *q = j->q;                                                                    \
  for (int64_t p = p0; p < p1; p++) {                                                         \
    const T *gy = (const T *)j->x + p * q->OH * q->OW;                                        \
    T *gx = (T *)j->y + p * q->H * q->W;                                                      \
    for (int64_t oh = 0; oh < q->OH; oh++) {                                                  \
      int64_t h0, h1; T lh;                                                                   \
      lt_meta_bilinear_src_##X(oh, q->H, q->OH, q->align_corners, q->scale_h, &h0, &h1, &lh); \
      for (int64_t ow = 0; ow < q->OW; ow++) {                                                \
        int64_t w0, w1; T lw;                                                                 \
        lt_meta_bilinear_src_##X(ow, q->W, q->OW, q->align_corners, q->scale_w, &w0, &w1, &lw); \
        T g = gy[oh * q->OW + ow];                                                            \
        T *r0 = gx + h0 * q->W, *r1 = gx + h1 * q->W;                                         \
        r0[w0] += ((T)1 - lh) * ((T)1 - lw) * g; r0[w1] += ((T)1 - lh) * lw * g;              \
        r1[w0] += lh * ((T)1 - lw) * g; r1[w1] += lh * lw * g;                                \
      }                                                                                       \
    }                                                                                         \
  }                                                                                           \
}
BILINEAR(float, s)
BILINEAR(double, d)

static lt_tensor *up_run(const up_geom *q, lt_tensor *src, int ndim, const int64_t *out_sizes, bool zero,
                         lt_parallel_fn fs, lt_parallel_fn fd) {
  lt_tensor *x = lt_tensor_contiguous(src);
  if (!x) return NULL;
  lt_tensor *y = zero ? lt_tensor_new_zeros(lt_tensor_dtype(x), lt_tensor_device(x), ndim, out_sizes)
                      : lt_tensor_new(lt_tensor_dtype(x), lt_tensor_device(x), ndim, out_sizes);
  if (y && q->P > 0) {
    up_job j = {q, lt_tensor_data(x), lt_tensor_data(y)};
    int64_t g = LT_GRAIN_ELEMENTWISE / (q->OH * q->OW * 4);
    lt_parallel_for(q->P, g > 0 ? g : 1, x->dtype == LT_FLOAT32 ? fs : fd, &j);
  }
  lt_tensor_release(x);
  return y;
}

static lt_tensor *up_forward(const char *op, lt_tensor *self, lt_intlist output_size, bool ac, double sh,
                             double sw, lt_parallel_fn fs, lt_parallel_fn fd) {
  up_geom q;
  if (lt_meta_upsample2d(op, self, output_size, ac, sh, sw, &q)) return NULL;
  return up_run(&q, self, 4, q.out_sizes, false, fs, fd);
}

static lt_tensor *up_backward(const char *op, lt_tensor *grad_output, lt_intlist output_size, lt_intlist input_size,
                              bool ac, double sh, double sw, lt_parallel_fn fs, lt_parallel_fn fd) {
  up_geom q;
  if (lt_meta_upsample2d_backward(op, grad_output, output_size, input_size, ac, sh, sw, &q)) return NULL;
  return up_run(&q, grad_output, 4, q.in_sizes, true, fs, fd);
}

lt_tensor *lt_cpu_upsample_nearest2d(lt_tensor *self, lt_intlist output_size, double scales_h, double scales_w) {
  return up_forward("upsample_nearest2d", self, output_size, false, scales_h, scales_w, nearest_s, nearest_d);
}

lt_tensor *lt_cpu_upsample_nearest2d_backward(lt_tensor *grad_output, lt_intlist output_size, lt_intlist input_size,
                                              double scales_h, double scales_w) {
  return up_backward("upsample_nearest2d_backward", grad_output, output_size, input_size, false, scales_h, scales_w,
                     nearest_back_s, nearest_back_d);
}

lt_tensor *lt_cpu_upsample_bilinear2d(lt_tensor *self, lt_intlist output_size, bool align_corners, double scales_h,
                                      double scales_w) {
  return up_forward("upsample_bilinear2d", self, output_size, align_corners, scales_h, scales_w, bilinear_s,
                    bilinear_d);
}

lt_tensor *lt_cpu_upsample_bilinear2d_backward(lt_tensor *grad_output, lt_intlist output_size, lt_intlist input_size,
                                               bool align_corners, double scales_h, double scales_w) {
  return up_backward("upsample_bilinear2d_backward", grad_output, output_size, input_size, align_corners, scales_h,
                     scales_w, bilinear_back_s, bilinear_back_d);
}

/* ---- pixel shuffle: reshape, permute, reshape ---- */

