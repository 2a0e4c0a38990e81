/*
** nn_resample.c — pad (constant / reflect / replicate), nearest and bilinear
** 2-D upsampling with their backward kernels, and pixel_(un)shuffle as
** composites of reshape and permute (src/ops/nn_conv.lua).
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

static int float_ok(const char *op, const char *arg, const lt_tensor *t) {
  lt_dtype d = lt_tensor_dtype(t);
  if (d != LT_FLOAT32 && d != LT_FLOAT64)
    return lt_error("%s: argument '%s' must be float32 or float64, got %s", op, arg, lt_dtype_name(d));
  return 0;
}

/* ---- pad ---- */

enum { PAD_CONSTANT, PAD_REFLECT, PAD_REPLICATE };

typedef struct pad_plan {
  int ndim, k;                  /* rank; padded dims are the last k */
  int64_t in[LT_MAX_DIMS], out[LT_MAX_DIMS];
  int64_t *map[LT_MAX_DIMS];    /* per padded dim: output index -> input index or -1 */
  int64_t outer;                /* product of the unpadded dims */
  int mode;
} pad_plan;

static void plan_free(pad_plan *p) { for (int i = 0; i < p->k; i++) free(p->map[i]); }

/* shapes and index maps from F.pad's list (last dim first) */
static int pad_plan_make(const char *op, pad_plan *p, int ndim, const int64_t *sizes, lt_intlist pad,
                         const char *mode) {
  memset(p, 0, sizeof *p);
  if (!mode || strcmp(mode, "constant") == 0) p->mode = PAD_CONSTANT;
  else if (strcmp(mode, "reflect") == 0) p->mode = PAD_REFLECT;
  else if (strcmp(mode, "replicate") == 0) p->mode = PAD_REPLICATE;
  else return lt_error("%s: argument 'mode' must be \"constant\", \"reflect\" or \"replicate\", got \"%s\"", op, mode);
  if (pad.n < 0 || pad.n % 2)
    return lt_error("%s: argument 'pad' must have an even number of entries, got %d", op, pad.n < 0 ? 0 : pad.n);
  int k = pad.n / 2;
  if (k > ndim) return lt_error("%s: argument 'pad' pads %d dims but input has %d", op, k, ndim);
  if (p->mode != PAD_CONSTANT) {
    if (k > 3) return lt_error("%s: argument 'pad' may pad at most 3 dims in mode \"%s\"", op, mode);
    if (ndim < k + 1 || ndim > k + 2)
      return lt_error("%s: argument 'input' must be %d-D or %d-D to pad %d dims in mode \"%s\", got %d-D", op, k + 1,
                      k + 2, k, mode, ndim);
  }
  p->ndim = ndim; p->k = k;
  memcpy(p->in, sizes, sizeof(int64_t) * (size_t)ndim);
  memcpy(p->out, sizes, sizeof(int64_t) * (size_t)ndim);
  p->outer = lt_shape_numel(ndim - k, sizes);
  for (int i = 0; i < k; i++) {
    int d = ndim - 1 - i;
    int64_t l = pad.v[2 * i], r = pad.v[2 * i + 1], n = sizes[d];
    p->out[d] = n + l + r;
    if (p->out[d] < 0)
      return lt_error("%s: argument 'pad' makes dim %d negative (%lld)", op, d + 1, (long long)p->out[d]);
    if (p->mode == PAD_REFLECT && (l >= n || r >= n || l < 0 || r < 0))
      return lt_error("%s: argument 'pad' (%lld, %lld) must be non-negative and smaller than dim %d (%lld) in mode \"reflect\"",
                      op, (long long)l, (long long)r, d + 1, (long long)n);
    if (p->mode == PAD_REPLICATE && (n == 0 || l < 0 || r < 0))
      return lt_error("%s: argument 'pad' must be non-negative and dim %d non-empty in mode \"replicate\"", op, d + 1);
  }
  for (int i = 0; i < k; i++) {
    int d = ndim - k + i;             /* map[i] is for dim ndim-k+i (outermost padded first) */
    int64_t l = pad.v[2 * (ndim - 1 - d)], n = sizes[d], m = p->out[d];
    p->map[i] = malloc(sizeof(int64_t) * (size_t)(m > 0 ? m : 1));
    if (!p->map[i]) { plan_free(p); return lt_error("%s: out of memory", op); }
    for (int64_t o = 0; o < m; o++) {
      int64_t s = o - l;
      if (p->mode == PAD_CONSTANT) s = s >= 0 && s < n ? s : -1;
      else if (p->mode == PAD_REFLECT) { if (s < 0) s = -s; if (s >= n) s = 2 * (n - 1) - s; }
      else s = s < 0 ? 0 : s >= n ? n - 1 : s;
      p->map[i][o] = s;
    }
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
  const pad_plan *p = j->p;
  int k = p->k, nd = p->ndim;
  size_t es = j->es;
  int64_t in_slab = 1, out_slab = 1, rows = 1;
  for (int i = 0; i < k; i++) { in_slab *= p->in[nd - k + i]; out_slab *= p->out[nd - k + i]; }
  for (int i = 0; i + 1 < k; i++) rows *= p->out[nd - k + i];
  int64_t ow = k > 0 ? p->out[nd - 1] : 1, iw = k > 0 ? p->in[nd - 1] : 1;
  const int64_t *lastmap = k > 0 ? p->map[k - 1] : NULL;
  for (int64_t s = s0; s < s1; s++) {
    for (int64_t r = 0; r < rows; r++) {
      /* source row of output row r, or -1 when it is padding */
      int64_t rem = r, src_row = 0, mul = 1;
      bool pad_row = false;
      for (int i = k - 2; i >= 0; i--) {
        int64_t sz = p->out[nd - k + i], o = rem % sz;
        rem /= sz;
        int64_t si = p->map[i][o];
        if (si < 0) pad_row = true;
        src_row += si * mul;
        mul *= p->in[nd - k + i];
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

static int64_t slab_grain(const pad_plan *p) {
  int64_t per = lt_shape_numel(p->k, p->out + p->ndim - p->k);
  int64_t g = LT_GRAIN_ELEMENTWISE / (per > 0 ? per : 1);
  return g > 0 ? g : 1;
}

lt_tensor *lt_cpu_pad(lt_tensor *self, lt_intlist pad, const char *mode, double value) {
  const char *op = "pad";
  pad_plan p;
  if (lt_tensor_dtype(self) == LT_BOOL && mode && strcmp(mode, "constant") != 0)
    return lt_error_null("%s: argument 'input' of dtype bool is only padded in mode \"constant\"", op);
  if (pad_plan_make(op, &p, self->ndim, self->sizes, pad, mode)) return NULL;
  lt_tensor *x = lt_tensor_contiguous(self);
  lt_tensor *y = x ? lt_tensor_new(lt_tensor_dtype(x), lt_device_cpu(), p.ndim, p.out) : NULL;
  lt_tensor *fill = y ? lt_tensor_from_scalar(lt_scalar_float(value), lt_tensor_dtype(x)) : NULL;
  if (fill && lt_shape_numel(p.ndim, p.out) > 0) {
    pad_job j = {&p, lt_tensor_data(x), lt_tensor_data(y), lt_dtype_size(lt_tensor_dtype(x)), lt_tensor_data(fill),
                 false, false};
    lt_parallel_for(p.outer, slab_grain(&p), pad_slabs, &j);
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
  char a[128], b[128];
  if (float_ok(op, "grad_output", grad_output)) return NULL;
  if (input_size.n < 0 || input_size.n > LT_MAX_DIMS) return lt_error_null("%s: bad argument 'input_size'", op);
  for (int i = 0; i < input_size.n; i++)
    if (input_size.v[i] < 0) return lt_error_null("%s: argument 'input_size' has a negative entry", op);
  if (pad_plan_make(op, &p, input_size.n, input_size.v, pad, mode)) return NULL;
  if (grad_output->ndim != p.ndim || memcmp(grad_output->sizes, p.out, sizeof(int64_t) * (size_t)p.ndim)) {
    plan_free(&p);
    return lt_error_null("%s: argument 'grad_output' has shape %s, expected %s", op,
                         lt_shape_str(grad_output->ndim, grad_output->sizes, a, sizeof a), lt_shape_str(p.ndim, p.out, b, sizeof b));
  }
  lt_tensor *gy = lt_tensor_contiguous(grad_output);
  lt_tensor *gx = gy ? lt_tensor_new_zeros(lt_tensor_dtype(gy), lt_device_cpu(), p.ndim, p.in) : NULL;
  if (gx && lt_shape_numel(p.ndim, p.out) > 0 && lt_shape_numel(p.ndim, p.in) > 0) {
    pad_job j = {&p, lt_tensor_data(gy), lt_tensor_data(gx), lt_dtype_size(lt_tensor_dtype(gy)), NULL, true,
                 gy->dtype == LT_FLOAT32};
    lt_parallel_for(p.outer, slab_grain(&p), pad_slabs, &j);
  }
  lt_tensor_release(gy);
  plan_free(&p);
  return gx;
}

/* ---- upsampling (N, C, H, W) -> (N, C, OH, OW) ---- */

typedef struct up_geom {
  int64_t P, H, W, OH, OW;
  bool align_corners;
  double scale_h, scale_w;   /* the caller's scale factors, or <= 0: from the sizes */
} up_geom;

typedef struct up_job {
  const up_geom *q;
  const void *x;
  void *y;
} up_job;

static int up_sizes(const char *op, int ndim, const int64_t *in, lt_intlist output_size, up_geom *q) {
  if (ndim != 4) return lt_error("%s: argument 'input' must be 4-D (N, C, H, W), got %d-D", op, ndim);
  if (output_size.n != 2 && output_size.n != 1)
    return lt_error("%s: argument 'output_size' must have 2 entries, got %d", op, output_size.n < 0 ? 0 : output_size.n);
  q->P = in[0] * in[1]; q->H = in[2]; q->W = in[3];
  q->OH = output_size.v[0]; q->OW = output_size.v[output_size.n - 1];
  if (q->OH < 1 || q->OW < 1)
    return lt_error("%s: argument 'output_size' must be positive, got %lld x %lld", op, (long long)q->OH, (long long)q->OW);
  if (q->H < 1 || q->W < 1) return lt_error("%s: argument 'input' has an empty plane", op);
  return 0;
}

/* source steps per output step: 1/scale when the caller gave the scale factor (a
** scale of 1.7 maps output 1 to source 1/1.7, not to 5/8 after flooring the size to 8),
** else in/out; PyTorch's rule, in float for nearest as it computes it */
static inline float nearest_ratio(int64_t in, int64_t out, double scale) {
  return scale > 0 ? (float)(1.0 / scale) : (float)in / (float)out;
}

/* nearest: source floor(o * ratio) */
static inline int64_t nearest_src(int64_t o, int64_t in, float ratio) {
  int64_t s = (int64_t)floorf((float)o * ratio);
  return s < in - 1 ? s : in - 1;
}

#define NEAREST(T, X)                                                                         \
static void nearest_##X(void *ctx, int64_t p0, int64_t p1) {                                  \
  up_job *j = ctx;                                                                            \
  const up_geom *q = j->q;                                                                    \
  float rh = nearest_ratio(q->H, q->OH, q->scale_h), rw = nearest_ratio(q->W, q->OW, q->scale_w); \
  for (int64_t p = p0; p < p1; p++) {                                                         \
    const T *x = (const T *)j->x + p * q->H * q->W;                                           \
    T *y = (T *)j->y + p * q->OH * q->OW;                                                     \
    for (int64_t oh = 0; oh < q->OH; oh++) {                                                  \
      const T *row = x + nearest_src(oh, q->H, rh) * q->W;                                    \
      for (int64_t ow = 0; ow < q->OW; ow++) y[oh * q->OW + ow] = row[nearest_src(ow, q->W, rw)]; \
    }                                                                                         \
  }                                                                                           \
}                                                                                             \
static void nearest_back_##X(void *ctx, int64_t p0, int64_t p1) {                             \
  up_job *j = ctx;                                                                            \
  const up_geom *q = j->q;                                                                    \
  float rh = nearest_ratio(q->H, q->OH, q->scale_h), rw = nearest_ratio(q->W, q->OW, q->scale_w); \
  for (int64_t p = p0; p < p1; p++) {                                                         \
    const T *gy = (const T *)j->x + p * q->OH * q->OW;                                        \
    T *gx = (T *)j->y + p * q->H * q->W;                                                      \
    for (int64_t oh = 0; oh < q->OH; oh++) {                                                  \
      T *row = gx + nearest_src(oh, q->H, rh) * q->W;                                         \
      for (int64_t ow = 0; ow < q->OW; ow++) row[nearest_src(ow, q->W, rw)] += gy[oh * q->OW + ow]; \
    }                                                                                         \
  }                                                                                           \
}
NEAREST(float, s)
NEAREST(double, d)

/* bilinear: the two source rows/cols of an output and the weight of the second */
#define BILINEAR(T, X)                                                                        \
static void bl_src_##X(int64_t o, int64_t in, int64_t out, bool ac, double sf, int64_t *i0, int64_t *i1, T *lam) { \
  T scale = ac ? (out > 1 ? (T)(in - 1) / (T)(out - 1) : (T)0) : sf > 0 ? (T)(1.0 / sf) : (T)in / (T)out; \
  T s = ac ? scale * (T)o : scale * ((T)o + (T)0.5) - (T)0.5;                                 \
  if (s < 0) s = 0;                                                                           \
  int64_t a = (int64_t)s;                                                                     \
  if (a > in - 1) a = in - 1;                                                                 \
  *i0 = a; *i1 = a < in - 1 ? a + 1 : a;                                                      \
  *lam = s - (T)a;                                                                            \
  if (*lam < 0) *lam = 0;                                                                     \
}                                                                                             \
static void bilinear_##X(void *ctx, int64_t p0, int64_t p1) {                                 \
  up_job *j = ctx;                                                                            \
  const up_geom *q = j->q;                                                                    \
  for (int64_t p = p0; p < p1; p++) {                                                         \
    const T *x = (const T *)j->x + p * q->H * q->W;                                           \
    T *y = (T *)j->y + p * q->OH * q->OW;                                                     \
    for (int64_t oh = 0; oh < q->OH; oh++) {                                                  \
      int64_t h0, h1; T lh;                                                                   \
      bl_src_##X(oh, q->H, q->OH, q->align_corners, q->scale_h, &h0, &h1, &lh);                           \
      for (int64_t ow = 0; ow < q->OW; ow++) {                                                \
        int64_t w0, w1; T lw;                                                                 \
        bl_src_##X(ow, q->W, q->OW, q->align_corners, q->scale_w, &w0, &w1, &lw);                         \
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
      bl_src_##X(oh, q->H, q->OH, q->align_corners, q->scale_h, &h0, &h1, &lh);                           \
      for (int64_t ow = 0; ow < q->OW; ow++) {                                                \
        int64_t w0, w1; T lw;                                                                 \
        bl_src_##X(ow, q->W, q->OW, q->align_corners, q->scale_w, &w0, &w1, &lw);                         \
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
  lt_tensor *y = zero ? lt_tensor_new_zeros(lt_tensor_dtype(x), lt_device_cpu(), ndim, out_sizes)
                      : lt_tensor_new(lt_tensor_dtype(x), lt_device_cpu(), ndim, out_sizes);
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
  if (float_ok(op, "input", self) || up_sizes(op, self->ndim, self->sizes, output_size, &q)) return NULL;
  q.align_corners = ac;
  q.scale_h = sh; q.scale_w = sw;
  int64_t sz[4] = {self->sizes[0], self->sizes[1], q.OH, q.OW};
  return up_run(&q, self, 4, sz, false, fs, fd);
}

static lt_tensor *up_backward(const char *op, lt_tensor *grad_output, lt_intlist output_size, lt_intlist input_size,
                              bool ac, double sh, double sw, lt_parallel_fn fs, lt_parallel_fn fd) {
  up_geom q;
  if (float_ok(op, "grad_output", grad_output)) return NULL;
  if (input_size.n != 4) return lt_error_null("%s: argument 'input_size' must have 4 entries", op);
  if (up_sizes(op, 4, input_size.v, output_size, &q)) return NULL;
  int64_t want[4] = {input_size.v[0], input_size.v[1], q.OH, q.OW};
  if (grad_output->ndim != 4 || memcmp(grad_output->sizes, want, sizeof want)) {
    char a[128], b[128];
    return lt_error_null("%s: argument 'grad_output' has shape %s, expected %s", op,
                         lt_shape_str(grad_output->ndim, grad_output->sizes, a, sizeof a), lt_shape_str(4, want, b, sizeof b));
  }
  q.align_corners = ac;
  q.scale_h = sh; q.scale_w = sw;
  return up_run(&q, grad_output, 4, input_size.v, true, fs, fd);
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

static lt_tensor *reshape_permute_reshape(lt_tensor *self, int n1, const int64_t *s1, const int64_t *perm,
                                          int n2, const int64_t *s2) {
  lt_tensor *a = lt_reshape(self, lt_intlist_make(s1, n1));
  if (!a) return NULL;
  lt_tensor *b = lt_permute(a, lt_intlist_make(perm, n1));
  lt_tensor_release(a);
  if (!b) return NULL;
  lt_tensor *c = lt_reshape(b, lt_intlist_make(s2, n2));
  lt_tensor_release(b);
  return c;
}

static lt_tensor *shuffle(const char *op, lt_tensor *self, int64_t r, bool un) {
  if (self->ndim < 3)
    return lt_error_null("%s: argument 'input' must have at least 3 dims (*, C, H, W), got %d-D", op, self->ndim);
  if (r < 1) return lt_error_null("%s: argument '%s' must be positive, got %lld", op,
                                  un ? "downscale_factor" : "upscale_factor", (long long)r);
  if (self->ndim + 3 > LT_MAX_DIMS) return lt_error_null("%s: argument 'input' has too many dims", op);
  if (r > (int64_t)1 << 31)    /* r * r and the new sizes stay far from overflowing */
    return lt_error_null("%s: argument '%s' is too large (%lld)", op, un ? "downscale_factor" : "upscale_factor",
                         (long long)r);
  int nb = self->ndim - 3;
  int64_t c = self->sizes[nb], h = self->sizes[nb + 1], w = self->sizes[nb + 2];
  int64_t s1[LT_MAX_DIMS], s2[LT_MAX_DIMS], perm[LT_MAX_DIMS];
  for (int i = 0; i < nb; i++) { s1[i] = s2[i] = self->sizes[i]; perm[i] = i; }
  if (!un) {
    if (c % (r * r))
      return lt_error_null("%s: argument 'input' has %lld channels, not divisible by upscale_factor^2 (%lld)", op,
                           (long long)c, (long long)(r * r));
    /* (*, C, r, r, H, W) -> (*, C, H, r, W, r) */
    int64_t a[6] = {c / (r * r), r, r, h, w}, pm[6] = {0, 3, 1, 4, 2};
    s1[nb] = a[0]; s1[nb + 1] = r; s1[nb + 2] = r; s1[nb + 3] = h; s1[nb + 4] = w;
    for (int i = 0; i < 5; i++) perm[nb + i] = nb + pm[i];
    s2[nb] = a[0]; s2[nb + 1] = h * r; s2[nb + 2] = w * r;
  } else {
    if (h % r || w % r)
      return lt_error_null("%s: argument 'input' height %lld and width %lld must be divisible by downscale_factor %lld",
                           op, (long long)h, (long long)w, (long long)r);
    /* (*, C, H/r, r, W/r, r) -> (*, C, r, r, H/r, W/r) */
    int64_t pm[5] = {0, 2, 4, 1, 3};
    s1[nb] = c; s1[nb + 1] = h / r; s1[nb + 2] = r; s1[nb + 3] = w / r; s1[nb + 4] = r;
    for (int i = 0; i < 5; i++) perm[nb + i] = nb + pm[i];
    s2[nb] = c * r * r; s2[nb + 1] = h / r; s2[nb + 2] = w / r;
  }
  return reshape_permute_reshape(self, nb + 5, s1, perm, nb + 3, s2);
}

lt_tensor *lt_pixel_shuffle_impl(lt_tensor *self, int64_t upscale_factor) {
  return shuffle("pixel_shuffle", self, upscale_factor, false);
}

lt_tensor *lt_pixel_unshuffle_impl(lt_tensor *self, int64_t downscale_factor) {
  return shuffle("pixel_unshuffle", self, downscale_factor, true);
}
