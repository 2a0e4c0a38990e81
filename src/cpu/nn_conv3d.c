/*
** nn_conv3d.c — conv3d and its two backward products on the CPU
** (src/ops/nn_conv.lua; the geometry and checks: src/meta/conv3d.c).
**
** Stride-1 layers with up to 48 input channels a group (video and volume layers)
** run direct vector loops over the zero-padded volume (nn_conv3d_direct.c): the
** forward pass holds four filters by two output rows by one vector in registers
** and adds every tap's weight times the shifted input rows, read in place; the
** input gradient is the same loop over the transposed conv (the output gradient
** padded by the dilated kernel's reach minus the padding, kernel flipped, channels
** swapped); the weight gradient holds four filters by four taps and reduces over
** the output positions. With few channels the gemm here runs far below peak
** after its columns were copied twice (by vol2col, then by OpenBLAS's packing):
** on the bench layer (16 channels, 3x3x3) the loops were twice as fast.
**
** Everything else is vol2col + one BLAS gemm per group with all the kernel taps in
** its inner dimension (cg*kD*kH*kW), over chunks of output rows so that a chunk's
** columns matrix stays in cache (COL_BYTES), the gemm writing straight into the
** output. The columns are copied out of the zero-padded volume, with no bounds to
** test: the row of tap (kd, kh, kw) for output row (od, oh) is the run of OW
** elements sW apart at kd*dD*Hp*Wp + kh*dH*Wp + kw*dW + od*sD*Hp*Wp + oh*sH*Wp
** (with stride 1 contiguous). The input gradient of strided layers scatters its
** columns back (col2vol); with stride 1 it is the forward pass of the transposed
** conv. A pointwise layer (1x1x1) is one gemm per item and group, its input being
** its columns.
*/
#include <stdlib.h>
#include <string.h>
#include "core/tensor.h"
#include "core/error.h"
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "cpu/la_gemm.h"
#include "cpu/nn_conv_shift.h"   /* lt_conv_scratch */
#include "cpu/nn_conv3d.h"
#include "cpu/conv_args.h"

typedef lt_conv3_geom geom;
typedef lt_conv3_padded padded;

/* bytes of one chunk's columns matrix: well inside the L2 cache */
#define COL_BYTES (512 << 10)
/* but at least this many positions per chunk, so that each gemm is wide enough */
#define COL_MIN 256

static inline bool is_f32(const geom *q) { return q->dtype == LT_FLOAT32; }
static inline size_t esize(const geom *q) { return is_f32(q) ? 4 : 8; }
/* q->T, for the loops below whose element type is named T */
static inline int64_t taps(const geom *q) { return q->T; }

/* row-major C (m x n) = A B + beta C, A or B stored transposed when ta, tb (la_gemm.h) */
static void gemm(const geom *q, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *A, int64_t lda,
                 const void *B, int64_t ldb, double beta, void *C, int64_t ldc) {
  lt_la_blas_gemm(is_f32(q), ta, tb, m, n, k, 1.0, A, lda, B, ldb, beta, C, ldc);
}

/* positions per chunk of the columns: a multiple of 16, at most n */
static int64_t chunk_len(const geom *q, int64_t n) {
  int64_t c = COL_BYTES / (q->K * (int64_t)esize(q));
  c = c < COL_MIN ? COL_MIN : c & ~(int64_t)15;
  return c < n ? c : n;
}

/* the output positions ow with 0 <= ow*s + off < in: [*lo, *hi) */
static void valid_range(int64_t out, int64_t s, int64_t off, int64_t in, int64_t *lo, int64_t *hi) {
  int64_t a = off >= 0 ? 0 : (-off + s - 1) / s;
  int64_t b = in - 1 - off >= 0 ? (in - 1 - off) / s + 1 : 0;
  if (a > out) a = out;
  if (b > out) b = out;
  if (b < a) b = a;
  *lo = a; *hi = b;
}

/* ---- columns out of the zero-padded volume ---- */

lt_conv3_padded *lt_conv3_padded_new(const geom *q) {
  padded *pv = malloc(sizeof(padded) + sizeof(int64_t) * (size_t)q->T);
  if (!pv) return NULL;
  pv->Hp = q->in[1] + 2 * q->p[1]; pv->Wp = q->in[2] + 2 * q->p[2];
  pv->P = pv->Hp * pv->Wp; pv->V = (q->in[0] + 2 * q->p[0]) * pv->P;
  int64_t t = 0;
  for (int64_t a = 0; a < q->k[0]; a++)
    for (int64_t b = 0; b < q->k[1]; b++)
      for (int64_t c = 0; c < q->k[2]; c++)
        pv->off[t++] = a * q->d[0] * pv->P + b * q->d[1] * pv->Wp + c * q->d[2];
  return pv;
}

void lt_conv3_pad_group(const geom *q, const padded *pv, const char *x, char *xp) {
  size_t es = esize(q);
  const int64_t D = q->in[0], H = q->in[1], W = q->in[2];
  for (int64_t c = 0; c < q->cg; c++)
    for (int64_t d = 0; d < D; d++)
      for (int64_t h = 0; h < H; h++)
        memcpy(xp + (size_t)(c * pv->V + (d + q->p[0]) * pv->P + (h + q->p[1]) * pv->Wp + q->p[2]) * es,
               x + (size_t)(((c * D + d) * H + h) * W) * es, (size_t)W * es);
}

/* the columns of output rows [r0, r1) (r = od*OH + oh) from the padded volumes xp: each
** row of a tap is a run of OW elements sw apart, with no bounds to test (with stride 1
** contiguous). Plain loops, not memcpy calls: the runs are a few dozen elements and many */
#define PCOLS(E, X)                                                                          \
static void pcols_##X(const geom *q, const padded *pv, const E *xp, int64_t r0, int64_t r1, E *col) { \
  const int64_t nt = taps(q), OH = q->out[1], OW = q->out[2], m = (r1 - r0) * OW;            \
  const int64_t sd = q->s[0] * pv->P, sh = q->s[1] * pv->Wp, sw = q->s[2];                   \
  for (int64_t c = 0; c < q->cg; c++)                                                        \
    for (int64_t t = 0; t < nt; t++) {                                                       \
      const E *base = xp + c * pv->V + pv->off[t];                                           \
      E *restrict d = col + (c * nt + t) * m;                                                \
      for (int64_t r = r0; r < r1; r++, d += OW) {                                           \
        const E *restrict s = base + (r / OH) * sd + (r % OH) * sh;                          \
        if (sw == 1) for (int64_t ow = 0; ow < OW; ow++) d[ow] = s[ow];                      \
        else if (sw == 2) for (int64_t ow = 0; ow < OW; ow++) d[ow] = s[2 * ow];             \
        else for (int64_t ow = 0; ow < OW; ow++) d[ow] = s[ow * sw];                         \
      }                                                                                      \
    }                                                                                        \
}
PCOLS(float, s)
PCOLS(double, d)

/* the conv whose stride-1 forward pass is q's input gradient: over the output gradient,
** padded by the dilated kernel's reach minus the padding, channels swapped; false when
** that padding would be negative (the scattering path takes it) */
static bool transposed(const geom *q, geom *t) {
  *t = *q;
  t->C = q->O; t->O = q->C; t->cg = q->og; t->og = q->cg; t->K = t->cg * q->T;
  for (int i = 0; i < 3; i++) {
    t->in[i] = q->out[i];
    t->out[i] = q->in[i];
    t->p[i] = q->d[i] * (q->k[i] - 1) - q->p[i];
    if (t->p[i] < 0) return false;
  }
  t->L = q->in[0] * q->in[1] * q->in[2];
  return true;
}

/* the weight w (g groups of og x cg x T) as the transposed conv's: g groups of cg x og x T,
** the taps reversed */
static void flip_weight(const geom *q, const char *w, char *wt) {
  size_t es = esize(q);
  for (int64_t g = 0; g < q->g; g++)
    for (int64_t o = 0; o < q->og; o++)
      for (int64_t c = 0; c < q->cg; c++)
        for (int64_t t = 0; t < q->T; t++)
          memcpy(wt + (size_t)(((g * q->cg + c) * q->og + o) * q->T + (q->T - 1 - t)) * es,
                 w + (size_t)(((g * q->og + o) * q->cg + c) * q->T + t) * es, es);
}

/* ---- strided layers: the input gradient scattered back ---- */

#define COL2VOL(T, X)                                                                        \
/* x += the columns of output rows [r0, r1) (r = od*OH + oh), scattered back with bounds */    \
static void col2vol_##X(const geom *q, const T *col, int64_t r0, int64_t r1, T *x) {         \
  const int64_t D = q->in[0], H = q->in[1], W = q->in[2], OH = q->out[1], OW = q->out[2];    \
  const int64_t n = (r1 - r0) * OW, sw = q->s[2];                                            \
  int64_t row = 0;                                                                           \
  for (int64_t c = 0; c < q->cg; c++)                                                        \
    for (int64_t kd = 0; kd < q->k[0]; kd++)                                                 \
      for (int64_t kh = 0; kh < q->k[1]; kh++)                                               \
        for (int64_t kw = 0; kw < q->k[2]; kw++, row++) {                                    \
          int64_t w0, w1, off = kw * q->d[2] - q->p[2];                                      \
          valid_range(OW, sw, off, W, &w0, &w1);                                             \
          const T *src = col + row * n;                                                      \
          for (int64_t r = r0; r < r1; r++, src += OW) {                                     \
            int64_t id = (r / OH) * q->s[0] - q->p[0] + kd * q->d[0];                        \
            int64_t ih = (r % OH) * q->s[1] - q->p[1] + kh * q->d[1];                        \
            if (id < 0 || id >= D || ih < 0 || ih >= H) continue;                            \
            T *dst = x + ((c * D + id) * H + ih) * W + off;                                  \
            for (int64_t ow = w0; ow < w1; ow++) dst[ow * sw] += src[ow];                    \
          }                                                                                  \
        }                                                                                    \
}
COL2VOL(float, s)
COL2VOL(double, d)

static void col2vol(const geom *q, const char *col, int64_t r0, int64_t r1, char *x) {
  if (is_f32(q)) col2vol_s(q, (const float *)col, r0, r1, (float *)x);
  else col2vol_d(q, (const double *)col, r0, r1, (double *)x);
}

/* output rows per chunk */
static int64_t chunk_rows(const geom *q) {
  int64_t rows = q->out[0] * q->out[1], r = chunk_len(q, q->L) / q->out[2];
  if (r < 1) r = 1;
  return r < rows ? r : rows;
}

enum product { FORWARD, BACKWARD_INPUT, BACKWARD_WEIGHT };

static bool is_s1(const geom *q) { return q->s[0] == 1 && q->s[1] == 1 && q->s[2] == 1; }

/* a pointwise layer (1x1x1, stride 1, no padding): each group's input is its columns */
static bool is_pointwise(const geom *q) {
  return q->T == 1 && is_s1(q) && q->p[0] == 0 && q->p[1] == 0 && q->p[2] == 0;
}

/* one of the three products. FORWARD: a = x, b = w, out = y (no bias); BACKWARD_INPUT:
** a = gy, b = w, out = gx (the scattering path: strided layers); BACKWARD_WEIGHT: a = x,
** b = gy, out = gw. The forward and weight products take their columns out of the padded
** volume */
static int product(const geom *q, enum product pr, const char *a, const char *b, char *out) {
  size_t es = esize(q);
  int64_t nr = chunk_rows(q), rows = q->out[0] * q->out[1], vol = q->in[0] * q->in[1] * q->in[2];
  bool direct = is_pointwise(q) && pr != BACKWARD_INPUT, pad = !direct && pr != BACKWARD_INPUT;
  padded *pv = pad ? lt_conv3_padded_new(q) : NULL;
  size_t colb = direct ? 0 : (size_t)(q->K * nr * q->out[2]) * es, xpb = pv ? (size_t)(q->cg * pv->V) * es : 0;
  char *col = direct ? NULL : lt_conv_scratch(colb), *xp = pv ? lt_conv_scratch(xpb) : NULL;
  int rc = -1;
  if ((pad && (!pv || !xp)) || (!direct && !col)) goto done;
  if (xp) memset(xp, 0, xpb);
  if (pr == BACKWARD_INPUT) memset(out, 0, (size_t)(q->N * q->C * vol) * es);
  for (int64_t n = 0; n < q->N; n++)
    for (int64_t g = 0; g < q->g; g++) {
      size_t xo = (size_t)((n * q->C + g * q->cg) * vol) * es, yo = (size_t)((n * q->O + g * q->og) * q->L) * es;
      if (direct) {   /* one gemm over the whole group */
        if (pr == FORWARD)
          gemm(q, false, false, q->og, q->L, q->K, b + (size_t)(g * q->og * q->K) * es, q->K, a + xo, q->L, 0.0,
               out + yo, q->L);
        else
          gemm(q, false, true, q->og, q->K, q->L, b + yo, q->L, a + xo, q->L, n == 0 ? 0.0 : 1.0,
               out + (size_t)(g * q->og * q->K) * es, q->K);
        continue;
      }
      if (pad) lt_conv3_pad_group(q, pv, a + xo, xp);
      for (int64_t r0 = 0; r0 < rows; r0 += nr) {
        int64_t r1 = rows - r0 < nr ? rows : r0 + nr, m = (r1 - r0) * q->out[2], p0 = r0 * q->out[2];
        if (pr == BACKWARD_INPUT) {
          gemm(q, true, false, q->K, m, q->og, b + (size_t)(g * q->og * q->K) * es, q->K, a + yo + (size_t)p0 * es,
               q->L, 0.0, col, m);
          col2vol(q, col, r0, r1, out + xo);
          continue;
        }
        if (is_f32(q)) pcols_s(q, pv, (const float *)xp, r0, r1, (float *)col);
        else pcols_d(q, pv, (const double *)xp, r0, r1, (double *)col);
        if (pr == FORWARD)
          gemm(q, false, false, q->og, m, q->K, b + (size_t)(g * q->og * q->K) * es, q->K, col, m, 0.0,
               out + yo + (size_t)p0 * es, q->L);
        else
          gemm(q, false, true, q->og, q->K, m, b + yo + (size_t)p0 * es, q->L, col, m, n == 0 && r0 == 0 ? 0.0 : 1.0,
               out + (size_t)(g * q->og * q->K) * es, q->K);
      }
    }
  rc = 0;
done:
  lt_conv_unscratch(col, colb); lt_conv_unscratch(xp, xpb);
  free(pv);
  return rc;
}

/* ---- ops ---- */

static void *data_or_null(lt_tensor *t) { return t ? lt_tensor_data(t) : NULL; }

/* y's planes += the bias of their channel */
#define ADD_BIAS(T, X)                                                                       \
static void add_bias_##X(const geom *q, const T *b, T *y) {                                  \
  for (int64_t n = 0; n < q->N; n++)                                                         \
    for (int64_t o = 0; o < q->O; o++) {                                                     \
      T *restrict r = y + (n * q->O + o) * q->L, bv = b[o];                                  \
      for (int64_t i = 0; i < q->L; i++) r[i] += bv;                                         \
    }                                                                                        \
}
ADD_BIAS(float, s)
ADD_BIAS(double, d)

lt_tensor *lt_cpu_conv3d(lt_tensor *input, lt_tensor *weight, lt_tensor *bias, lt_intlist stride,
                         lt_intlist padding, lt_intlist dilation, int64_t groups) {
  const char *op = "conv3d";
  geom q;
  if (lt_meta_conv3d(op, input, weight, bias, stride, padding, dilation, groups, &q)) return NULL;
  lt_tensor *src[3] = {input, weight, bias}, *c[3];
  if (lt_conv_contig(c, src, 3)) return NULL;
  int64_t sz[5];
  int nd = lt_meta_conv3d_sizes(&q, q.O, q.out, sz);
  lt_tensor *y = lt_tensor_new(q.dtype, lt_tensor_device(input), nd, sz);
  if (y && q.N * q.O * q.L > 0) {
    char *yd = lt_tensor_data(y), *b = data_or_null(c[2]);
    int rc = 0;
    if (q.K == 0) memset(yd, 0, (size_t)(q.N * q.O * q.L) * esize(&q));
    else if (lt_conv3d_direct_ok(&q)) { rc = lt_conv3d_direct_forward(&q, lt_tensor_data(c[0]), lt_tensor_data(c[1]), b, yd); b = NULL; }
    else rc = product(&q, FORWARD, lt_tensor_data(c[0]), lt_tensor_data(c[1]), yd);
    if (rc) { lt_tensor_release(y); y = lt_error_null("%s: out of memory", op); }
    else if (b && is_f32(&q)) add_bias_s(&q, (const float *)b, (float *)yd);
    else if (b) add_bias_d(&q, (const double *)b, (double *)yd);
  }
  lt_conv_release(c, 3);
  return y;
}

lt_tensor *lt_cpu_conv3d_backward_input(lt_tensor *grad_output, lt_tensor *weight, lt_intlist input_size,
                                        lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups) {
  const char *op = "conv3d_backward_input";
  geom q, t;
  if (lt_meta_conv3d_backward_input(op, grad_output, weight, input_size, stride, padding, dilation, groups, &q))
    return NULL;
  lt_tensor *src[2] = {grad_output, weight}, *c[2];
  if (lt_conv_contig(c, src, 2)) return NULL;
  lt_tensor *gx = lt_tensor_new(q.dtype, lt_tensor_device(weight), input_size.n, input_size.v);
  int64_t vol = q.in[0] * q.in[1] * q.in[2];
  if (gx && q.N * q.C * vol > 0) {
    size_t es = esize(&q), wb = (size_t)(q.O * q.K) * es;
    char *gxd = lt_tensor_data(gx), *wt = NULL;
    int rc = 0;
    if (q.og == 0 || q.L == 0) memset(gxd, 0, (size_t)(q.N * q.C * vol) * es);
    else if (is_s1(&q) && transposed(&q, &t)) {
      if (!(wt = lt_conv_scratch(wb))) rc = -1;
      else {
        flip_weight(&q, lt_tensor_data(c[1]), wt);
        rc = lt_conv3d_direct_ok(&t) ? lt_conv3d_direct_forward(&t, lt_tensor_data(c[0]), wt, NULL, gxd)
                           : product(&t, FORWARD, lt_tensor_data(c[0]), wt, gxd);
        lt_conv_unscratch(wt, wb);
      }
    } else rc = product(&q, BACKWARD_INPUT, lt_tensor_data(c[0]), lt_tensor_data(c[1]), gxd);
    if (rc) { lt_tensor_release(gx); gx = lt_error_null("%s: out of memory", op); }
  }
  lt_conv_release(c, 2);
  return gx;
}

lt_tensor *lt_cpu_conv3d_backward_weight(lt_tensor *grad_output, lt_tensor *input, lt_intlist weight_size,
                                         lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups) {
  const char *op = "conv3d_backward_weight";
  geom q;
  if (lt_meta_conv3d_backward_weight(op, grad_output, input, weight_size, stride, padding, dilation, groups, &q))
    return NULL;
  lt_tensor *src[2] = {grad_output, input}, *c[2];
  if (lt_conv_contig(c, src, 2)) return NULL;
  lt_tensor *gw = lt_tensor_new(q.dtype, lt_tensor_device(input), 5, weight_size.v);
  if (gw && q.O * q.K > 0) {
    char *gwd = lt_tensor_data(gw);
    int rc = 0;
    if (q.N == 0 || q.L == 0) memset(gwd, 0, (size_t)(q.O * q.K) * esize(&q));
    else if (lt_conv3d_direct_weight_ok(&q)) rc = lt_conv3d_direct_backward_weight(&q, lt_tensor_data(c[1]), lt_tensor_data(c[0]), gwd);
    else rc = product(&q, BACKWARD_WEIGHT, lt_tensor_data(c[1]), lt_tensor_data(c[0]), gwd);
    if (rc) { lt_tensor_release(gw); gw = lt_error_null("%s: out of memory", op); }
  }
  lt_conv_release(c, 2);
  return gw;
}
