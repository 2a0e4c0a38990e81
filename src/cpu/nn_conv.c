/*
** nn_conv.c — convolutions (src/ops/nn_conv.lua): conv2d, its two backward
** products and conv_transpose2d (conv1d and padding="same" are composites:
** src/composite/nn_conv.c).
**
** Every product is im2col + one BLAS gemm per group. Batch items are taken in
** chunks laid side by side in the columns matrix, so that small images (LeNet)
** make one wide gemm instead of many thin ones: for a chunk of nb items the
** columns are (C/g * kh * kw) x (nb * OH * OW). The gemm operands are raw
** strided buffers, so cblas is called directly, with la_gemm.c's rule for
** threads: chunks go to our pool only when each product is small enough that
** OpenBLAS runs it on the calling thread, so the two pools never nest.
** Stride-1 layers skip im2col where it pays: one input channel per group or a few
** (LeNet, depthwise) run a direct vector loop forward (nn_conv_direct.c), and layers
** with many channels (ResNet) run all three products as shifted gemms straight out
** of the padded planes (nn_conv_shift.c).
*/
/* the short copy and add loops of im2col/col2im need the vectorizer at full strength */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <cblas.h>
#include "core/tensor.h"
#include "core/error.h"
#include "cpu/parallel.h"
#include "cpu/conv_args.h"
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "cpu/la_gemm.h"
#include "cpu/nn_conv_shift.h"
#include "cpu/nn_conv_vec.h"

/* as in la_gemm.c: OpenBLAS threads products above this many multiply-adds */
#define CONV_SMALL_GEMM 262144
/* bytes of one chunk's columns matrix */
#define CONV_CHUNK_BYTES (256 << 10)

#include "meta/conv.h"

/* the geometry and its checks are device-neutral (meta/conv.h); this file adds the
** CPU's layouts of the products below */
typedef lt_conv_geom conv_geom;

/* stride 1 (but not pointwise): columns are whole padded rows (the wide layout, below) */
static inline bool is_wide(const conv_geom *q) {
  return q->sh == 1 && q->sw == 1 && !(q->kh == 1 && q->kw == 1 && q->ph == 0 && q->pw == 0);
}
/* columns of one image in the wide layout: OH padded rows */
static inline int64_t wide_len(const conv_geom *q) { return q->OH * q->Wp; }
static inline bool is_f32(const conv_geom *q) { return q->dtype == LT_FLOAT32; }
static inline size_t elem_size(const conv_geom *q) { return is_f32(q) ? 4 : 8; }

/* the output rows ow with 0 <= ow*s + off < in: [*lo, *hi) */
static void valid_range(int64_t out, int64_t s, int64_t off, int64_t in, int64_t *lo, int64_t *hi) {
  int64_t a = off >= 0 ? 0 : (-off + s - 1) / s;
  int64_t b = in - 1 - off >= 0 ? (in - 1 - off) / s + 1 : 0;
  if (a > out) a = out;
  if (b > out) b = out;
  if (b < a) b = a;
  *lo = a; *hi = b;
}

/* ---- im2col / col2im for one image and group: cg planes -> K rows of ld elements ---- */

/* plain loops, not libc calls: the rows are short (OW of a few dozen) and many. A row
** goes in whole 32-byte moves, the last one overlapping (LeNet's rows are 8 floats) */
#define COPY_ROW(T, X)                                                                       \
static inline void copy_row_##X(T *restrict d, const T *restrict s, int64_t n) {             \
  enum { V = 32 / sizeof(T) };                                                               \
  if (n < V) { for (int64_t i = 0; i < n; i++) d[i] = s[i]; return; }                        \
  int64_t i = 0;                                                                             \
  for (; i + V <= n; i += V) for (int j = 0; j < V; j++) d[i + j] = s[i + j];                \
  if (i < n) for (int j = 0; j < V; j++) d[n - V + j] = s[n - V + j];                        \
}
COPY_ROW(float, s)
COPY_ROW(double, d)

/* the geometry in locals: stores through T pointers must not make the compiler reload q */
#define IM2COL(T, X)                                                                         \
static void im2col_##X(const conv_geom *q, const T *x, T *col, int64_t ld) {                 \
  const int64_t OH = q->OH, OW = q->OW, H = q->H, W = q->W, sw = q->sw, sh = q->sh;         \
  const int64_t ph = q->ph, pw = q->pw, dh = q->dh, dw = q->dw, kh = q->kh, kw = q->kw;     \
  const int64_t cg = q->cg;                                                                  \
  for (int64_t c = 0; c < cg; c++) {                                                         \
    const T *plane = x + c * H * W;                                                          \
    for (int64_t ki = 0; ki < kh; ki++)                                                      \
      for (int64_t kj = 0; kj < kw; kj++) {                                                  \
        T *row = col + ((c * kh + ki) * kw + kj) * ld;                                       \
        int64_t w0, w1, off = kj * dw - pw;                                                  \
        valid_range(OW, sw, off, W, &w0, &w1);                                               \
        for (int64_t oh = 0; oh < OH; oh++) {                                                \
          T *restrict d = row + oh * OW;                                                     \
          int64_t ih = oh * sh - ph + ki * dh;                                               \
          if (ih < 0 || ih >= H) { for (int64_t ow = 0; ow < OW; ow++) d[ow] = 0; continue; } \
          const T *restrict s = plane + ih * W + off;                                        \
          for (int64_t ow = 0; ow < w0; ow++) d[ow] = 0;                                     \
          if (sw == 1) copy_row_##X(d + w0, s + w0, w1 - w0);                                \
          else for (int64_t ow = w0; ow < w1; ow++) d[ow] = s[ow * sw];                      \
          for (int64_t ow = w1; ow < OW; ow++) d[ow] = 0;                                    \
        }                                                                                    \
      }                                                                                      \
  }                                                                                          \
}
IM2COL(float, s)
IM2COL(double, d)

static void im2col(const conv_geom *q, const char *x, char *col, int64_t ld) {
  if (is_f32(q)) im2col_s(q, (const float *)x, (float *)col, ld);
  else im2col_d(q, (const double *)x, (double *)col, ld);
}

#define COL2IM(T, X)                                                                         \
static void col2im_##X(const conv_geom *q, const T *col, T *x, int64_t ld) {                 \
  for (int64_t c = 0; c < q->cg; c++) {                                                      \
    T *plane = x + c * q->H * q->W;                                                          \
    for (int64_t ki = 0; ki < q->kh; ki++)                                                   \
      for (int64_t kj = 0; kj < q->kw; kj++) {                                               \
        const T *row = col + ((c * q->kh + ki) * q->kw + kj) * ld;                           \
        int64_t w0, w1, off = kj * q->dw - q->pw;                                            \
        valid_range(q->OW, q->sw, off, q->W, &w0, &w1);                                      \
        for (int64_t oh = 0; oh < q->OH; oh++) {                                             \
          int64_t ih = oh * q->sh - q->ph + ki * q->dh;                                      \
          if (ih < 0 || ih >= q->H) continue;                                                \
          const T *s = row + oh * q->OW;                                                     \
          T *d = plane + ih * q->W + off;                                                    \
          int64_t sw = q->sw;                                                                \
          for (int64_t ow = w0; ow < w1; ow++) d[ow * sw] += s[ow];                          \
        }                                                                                    \
      }                                                                                      \
  }                                                                                          \
}
COL2IM(float, s)
COL2IM(double, d)

static void col2im(const conv_geom *q, const char *col, char *x, int64_t ld) {
  if (is_f32(q)) col2im_s(q, (const float *)col, (float *)x, ld);
  else col2im_d(q, (const double *)col, (double *)x, ld);
}

/* row-major C (m x n) = A B + beta C, A stored transposed when ta (la_gemm.h) */
static void gemm(const conv_geom *q, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *A,
                 int64_t lda, const void *B, int64_t ldb, double beta, void *C, int64_t ldc) {
  lt_la_blas_gemm(is_f32(q), ta, tb, m, n, k, 1.0, A, lda, B, ldb, beta, C, ldc);
}

static bool is_pointwise(const conv_geom *q) {
  return q->kh == 1 && q->kw == 1 && q->sh == 1 && q->sw == 1 && q->ph == 0 && q->pw == 0;
}

/* q as a stride-1 shifted-gemm problem (nn_conv_shift.c); false when q is strided */
static bool as_shift(const conv_geom *q, lt_conv_shift *s) {
  if (q->sh != 1 || q->sw != 1) return false;
  *s = (lt_conv_shift){q->N, q->C, q->H, q->W, q->O, q->kh, q->kw, q->ph, q->pw, q->dh, q->dw, q->g, is_f32(q)};
  return true;
}

static bool as_shift(const conv_geom *q, lt_conv_shift *s);

/* q for the direct vector path (nn_conv_vec.c): float32 layers with few channels and one
** group. Strided ones, which im2col served with rows of a few elements, take it for all
** three products; stride-1 ones for the two gradients where the shifted gemms do not
** apply (LeNet's second layer: its gradients 1.2x faster than through im2col, its
** forward 1.1x slower than nn_conv_direct.c's, which it keeps) */
static bool as_vec(const conv_geom *q, lt_conv_vec *v, bool gradient) {
  if (!is_f32(q) || q->g != 1 || q->K == 0) return false;
  if (q->sh == 1 && q->sw == 1) {   /* LeNet's first layer (K = 25) gains nothing */
    lt_conv_shift sh;
    if (!gradient || q->K < 32 || (as_shift(q, &sh) && lt_conv_shift_ok(&sh))) return false;
  }
  *v = (lt_conv_vec){q->N, q->C, q->H, q->W, q->O, q->kh, q->kw, q->sh, q->sw, q->ph, q->pw, q->dh, q->dw,
                     q->OH, q->OW};
  return lt_conv_vec_ok(v);
}

/* items per chunk: the columns fit CONV_CHUNK_BYTES, and with threads there are enough chunks */
static int64_t chunk_items(const conv_geom *q, bool threaded) {
  int64_t per = q->K * (is_wide(q) ? wide_len(q) : q->L) * (int64_t)elem_size(q);
  int64_t nb = per > 0 ? CONV_CHUNK_BYTES / per : q->N;
  if (nb < 1) nb = 1;
  if (nb > q->N) nb = q->N;
  if (threaded) {
    int64_t nt = lt_get_num_threads();
    int64_t cap = (q->N + nt - 1) / nt;
    if (nb > cap) nb = cap;
  }
  return nb;
}

/* whether chunks go to the pool: only products OpenBLAS keeps on the calling thread */
static bool use_pool(const conv_geom *q, int64_t nb) {
  return lt_get_num_threads() > 1 && q->N > 1 && q->og * q->K * (is_wide(q) ? wide_len(q) : q->L) * nb < CONV_SMALL_GEMM;
}

/* ---- the wide layout for stride 1 ----
** With stride 1 the row (c, ki, kj) of the columns matrix, taken over whole rows of the
** zero-padded input plane (Wp wide, OW of them valid), is one contiguous run of that
** plane starting at ki*dh*Wp + kj*dw. So the columns are K long memcpys instead of
** K*OH short ones; the gemm computes Wp - OW junk columns per output row, dropped when
** the result is copied out (and zero in the gradients fed back). */

/* the padded planes of one image's group, with (kw-1)*dw zeros of slack at the end */
static size_t padded_elems(const conv_geom *q) {
  return (size_t)(q->cg * q->Hp * q->Wp + (q->kw - 1) * q->dw + 1);
}

static void pad_planes(const conv_geom *q, const char *x, char *xp) {
  size_t es = elem_size(q);
  memset(xp, 0, padded_elems(q) * es);
  for (int64_t c = 0; c < q->cg; c++)
    for (int64_t h = 0; h < q->H; h++)
      memcpy(xp + (size_t)((c * q->Hp + h + q->ph) * q->Wp + q->pw) * es,
             x + (size_t)((c * q->H + h) * q->W) * es, (size_t)q->W * es);
}

/* inline copies, not memcpy calls: LeNet's rows are a few hundred bytes, and many */
#define IM2COL_WIDE(T, X)                                                                    \
static void im2col_wide_##X(const conv_geom *q, const T *xp, T *col, int64_t ld) {           \
  const int64_t kh = q->kh, kw = q->kw, HW = q->Hp * q->Wp, dhw = q->dh * q->Wp, dw = q->dw; \
  const int64_t Lw = wide_len(q), cg = q->cg;                                                \
  for (int64_t c = 0; c < cg; c++)                                                           \
    for (int64_t ki = 0; ki < kh; ki++)                                                      \
      for (int64_t kj = 0; kj < kw; kj++)                                                    \
        copy_row_##X(col + ((c * kh + ki) * kw + kj) * ld, xp + c * HW + ki * dhw + kj * dw, Lw); \
}
IM2COL_WIDE(float, s)
IM2COL_WIDE(double, d)

static void im2col_wide(const conv_geom *q, const char *xp, char *col, int64_t ld) {
  if (is_f32(q)) im2col_wide_s(q, (const float *)xp, (float *)col, ld);
  else im2col_wide_d(q, (const double *)xp, (double *)col, ld);
}

#define WIDE(T, X)                                                                           \
/* xp (padded planes) += the shifted rows of col */                                          \
static void col2im_wide_##X(const conv_geom *q, const T *col, T *xp, int64_t ld) {           \
  const int64_t Lw = wide_len(q);                                                            \
  for (int64_t c = 0; c < q->cg; c++)                                                        \
    for (int64_t ki = 0; ki < q->kh; ki++)                                                   \
      for (int64_t kj = 0; kj < q->kw; kj++) {                                               \
        const T *restrict s = col + ((c * q->kh + ki) * q->kw + kj) * ld;                    \
        T *restrict d = xp + c * q->Hp * q->Wp + ki * q->dh * q->Wp + kj * q->dw;            \
        for (int64_t i = 0; i < Lw; i++) d[i] += s[i];                                       \
      }                                                                                      \
}                                                                                            \
/* y rows (OH x OW) from a wide row set (OH x Wp), plus bias */                              \
static void unwiden_##X(const conv_geom *q, const T *src, T *dst, T bias) {                  \
  for (int64_t oh = 0; oh < q->OH; oh++) {                                                   \
    const T *restrict s = src + oh * q->Wp;                                                  \
    T *restrict d = dst + oh * q->OW;                                                        \
    for (int64_t ow = 0; ow < q->OW; ow++) d[ow] = s[ow] + bias;                             \
  }                                                                                          \
}
WIDE(float, s)
WIDE(double, d)

/* dst (OH x Wp, junk columns zero) from grad rows (OH x OW) */
static void widen_rows(const conv_geom *q, const char *src, char *dst) {
  size_t es = elem_size(q);
  for (int64_t oh = 0; oh < q->OH; oh++) {
    memcpy(dst + (size_t)(oh * q->Wp) * es, src + (size_t)(oh * q->OW) * es, (size_t)q->OW * es);
    memset(dst + (size_t)(oh * q->Wp + q->OW) * es, 0, (size_t)(q->Wp - q->OW) * es);
  }
}

/* the gradient rows of chunk items [n0, n0+nb), group g, side by side (og x nb*Lw) */
static void widen_grad(const conv_geom *q, const char *gy, char *tmp, int64_t n0, int64_t nb, int64_t g) {
  size_t es = elem_size(q);
  int64_t ld = nb * wide_len(q);
  for (int64_t i = 0; i < nb; i++)
    for (int64_t o = 0; o < q->og; o++)
      widen_rows(q, gy + (size_t)(((n0 + i) * q->O + g * q->og + o) * q->L) * es,
                 tmp + (size_t)(o * ld + i * wide_len(q)) * es);
}

/* the columns of chunk items [n0, n0+nb), group g (K x nb*Lw); xp is scratch */
static void wide_cols(const conv_geom *q, const char *x, char *xp, char *col, int64_t n0, int64_t nb, int64_t g) {
  size_t es = elem_size(q);
  int64_t ld = nb * wide_len(q);
  for (int64_t i = 0; i < nb; i++) {
    pad_planes(q, x + (size_t)(((n0 + i) * q->C + g * q->cg) * q->H * q->W) * es, xp);
    im2col_wide(q, xp, col + (size_t)(i * wide_len(q)) * es, ld);
  }
}

/* ---- the three products ---- */

typedef struct conv_job {
  const conv_geom *q;
  const char *x, *w, *b, *gy;   /* input, weight, bias, grad_output */
  char *y;                      /* output (forward, backward input) */
  int64_t nb;
  atomic_int failed;
} conv_job;

/* y[n] = conv(x[n], w) + b for the items of chunks [c0, c1) */
static void fwd_chunks(void *ctx, int64_t c0, int64_t c1) {
  conv_job *j = ctx;
  const conv_geom *q = j->q;
  size_t es = elem_size(q);
  bool direct = is_pointwise(q);
  char *col = NULL, *tmp = NULL;
  size_t colb = (size_t)(q->K * q->L * j->nb) * es;
  if ((!direct || j->nb > 1) && !(col = lt_conv_scratch(colb))) goto oom;
  if (j->nb > 1 && !(tmp = malloc((size_t)(q->og * q->L * j->nb) * es))) goto oom;
  for (int64_t c = c0; c < c1; c++) {
    int64_t n0 = c * j->nb, nb = q->N - n0 < j->nb ? q->N - n0 : j->nb, ld = nb * q->L;
    for (int64_t g = 0; g < q->g; g++) {
      const char *wg = j->w + (size_t)(g * q->og * q->K) * es;
      if (nb == 1) {
        const char *xg = j->x + (size_t)((n0 * q->C + g * q->cg) * q->H * q->W) * es;
        const char *B = xg;
        if (!direct) { im2col(q, xg, col, q->L); B = col; }
        gemm(q, false, false, q->og, q->L, q->K, wg, q->K, B, q->L, 0.0,
             j->y + (size_t)((n0 * q->O + g * q->og) * q->L) * es, q->L);
        continue;
      }
      for (int64_t i = 0; i < nb; i++) {
        const char *xg = j->x + (size_t)(((n0 + i) * q->C + g * q->cg) * q->H * q->W) * es;
        if (direct)   /* pointwise: the columns are the input rows themselves */
          for (int64_t r = 0; r < q->K; r++)
            memcpy(col + (size_t)(r * ld + i * q->L) * es, xg + (size_t)(r * q->L) * es, (size_t)q->L * es);
        else im2col(q, xg, col + (size_t)(i * q->L) * es, ld);
      }
      gemm(q, false, false, q->og, ld, q->K, wg, q->K, col, ld, 0.0, tmp, ld);
      for (int64_t i = 0; i < nb; i++)
        for (int64_t o = 0; o < q->og; o++)
          memcpy(j->y + (size_t)(((n0 + i) * q->O + g * q->og + o) * q->L) * es,
                 tmp + (size_t)(o * ld + i * q->L) * es, (size_t)q->L * es);
    }
    if (j->b) {
      for (int64_t i = 0; i < nb; i++)
        for (int64_t o = 0; o < q->O; o++) {
          char *row = j->y + (size_t)(((n0 + i) * q->O + o) * q->L) * es;
          if (is_f32(q)) { float bv = ((const float *)j->b)[o]; float *r = (float *)row;
                        for (int64_t l = 0; l < q->L; l++) r[l] += bv; }
          else { double bv = ((const double *)j->b)[o]; double *r = (double *)row;
                 for (int64_t l = 0; l < q->L; l++) r[l] += bv; }
        }
    }
  }
  lt_conv_unscratch(col, colb); free(tmp);
  return;
oom:
  lt_conv_unscratch(col, colb); free(tmp);
  atomic_store(&j->failed, 1);
}

static void fwd_wide_chunks(void *ctx, int64_t c0, int64_t c1) {
  conv_job *j = ctx;
  const conv_geom *q = j->q;
  size_t es = elem_size(q);
  size_t colb = (size_t)(q->K * wide_len(q) * j->nb) * es, tmpb = (size_t)(q->og * wide_len(q) * j->nb) * es;
  char *col = lt_conv_scratch(colb), *tmp = lt_conv_scratch(tmpb);
  char *xp = malloc(padded_elems(q) * es);
  if (!col || !tmp || !xp) {
    lt_conv_unscratch(col, colb); lt_conv_unscratch(tmp, tmpb); free(xp);
    atomic_store(&j->failed, 1);
    return;
  }
  for (int64_t c = c0; c < c1; c++) {
    int64_t n0 = c * j->nb, nb = q->N - n0 < j->nb ? q->N - n0 : j->nb, ld = nb * wide_len(q);
    for (int64_t g = 0; g < q->g; g++) {
      wide_cols(q, j->x, xp, col, n0, nb, g);
      gemm(q, false, false, q->og, ld, q->K, j->w + (size_t)(g * q->og * q->K) * es, q->K, col, ld, 0.0, tmp, ld);
      for (int64_t i = 0; i < nb; i++)
        for (int64_t o = 0; o < q->og; o++) {
          int64_t oc = g * q->og + o;
          const char *src = tmp + (size_t)(o * ld + i * wide_len(q)) * es;
          char *dst = j->y + (size_t)(((n0 + i) * q->O + oc) * q->L) * es;
          if (is_f32(q)) unwiden_s(q, (const float *)src, (float *)dst, j->b ? ((const float *)j->b)[oc] : 0.0f);
          else unwiden_d(q, (const double *)src, (double *)dst, j->b ? ((const double *)j->b)[oc] : 0.0);
        }
    }
  }
  lt_conv_unscratch(col, colb); lt_conv_unscratch(tmp, tmpb); free(xp);
}

static void bwd_input_wide_chunks(void *ctx, int64_t c0, int64_t c1) {
  conv_job *j = ctx;
  const conv_geom *q = j->q;
  size_t es = elem_size(q);
  size_t colb = (size_t)(q->K * wide_len(q) * j->nb) * es, tmpb = (size_t)(q->og * wide_len(q) * j->nb) * es;
  char *col = lt_conv_scratch(colb), *tmp = lt_conv_scratch(tmpb);
  char *xp = malloc(padded_elems(q) * es);
  if (!col || !tmp || !xp) {
    lt_conv_unscratch(col, colb); lt_conv_unscratch(tmp, tmpb); free(xp);
    atomic_store(&j->failed, 1);
    return;
  }
  for (int64_t c = c0; c < c1; c++) {
    int64_t n0 = c * j->nb, nb = q->N - n0 < j->nb ? q->N - n0 : j->nb, ld = nb * wide_len(q);
    for (int64_t g = 0; g < q->g; g++) {
      widen_grad(q, j->gy, tmp, n0, nb, g);
      gemm(q, true, false, q->K, ld, q->og, j->w + (size_t)(g * q->og * q->K) * es, q->K, tmp, ld, 0.0, col, ld);
      for (int64_t i = 0; i < nb; i++) {
        memset(xp, 0, padded_elems(q) * es);
        if (is_f32(q)) col2im_wide_s(q, (const float *)col + i * wide_len(q), (float *)xp, ld);
        else col2im_wide_d(q, (const double *)col + i * wide_len(q), (double *)xp, ld);
        char *xg = j->y + (size_t)(((n0 + i) * q->C + g * q->cg) * q->H * q->W) * es;
        for (int64_t ch = 0; ch < q->cg; ch++)
          for (int64_t h = 0; h < q->H; h++)
            memcpy(xg + (size_t)((ch * q->H + h) * q->W) * es,
                   xp + (size_t)((ch * q->Hp + h + q->ph) * q->Wp + q->pw) * es, (size_t)q->W * es);
      }
    }
  }
  lt_conv_unscratch(col, colb); lt_conv_unscratch(tmp, tmpb); free(xp);
}

/* x[n] = col2im(w^T gy[n]) (the input gradient, or conv_transpose2d) */
static void bwd_input_chunks(void *ctx, int64_t c0, int64_t c1) {
  conv_job *j = ctx;
  const conv_geom *q = j->q;
  size_t es = elem_size(q);
  bool direct = is_pointwise(q);
  char *col = NULL, *tmp = NULL;
  size_t colb = (size_t)(q->K * q->L * j->nb) * es;
  if (!(direct && j->nb == 1) && !(col = lt_conv_scratch(colb))) goto oom;
  if (j->nb > 1 && !(tmp = malloc((size_t)(q->og * q->L * j->nb) * es))) goto oom;
  for (int64_t c = c0; c < c1; c++) {
    int64_t n0 = c * j->nb, nb = q->N - n0 < j->nb ? q->N - n0 : j->nb, ld = nb * q->L;
    if (!direct) memset(j->y + (size_t)(n0 * q->C * q->H * q->W) * es, 0, (size_t)(nb * q->C * q->H * q->W) * es);
    for (int64_t g = 0; g < q->g; g++) {
      const char *wg = j->w + (size_t)(g * q->og * q->K) * es;
      const char *A;
      if (nb == 1) A = j->gy + (size_t)((n0 * q->O + g * q->og) * q->L) * es;
      else {
        for (int64_t i = 0; i < nb; i++)
          for (int64_t o = 0; o < q->og; o++)
            memcpy(tmp + (size_t)(o * ld + i * q->L) * es,
                   j->gy + (size_t)(((n0 + i) * q->O + g * q->og + o) * q->L) * es, (size_t)q->L * es);
        A = tmp;
      }
      if (direct && nb == 1) {
        gemm(q, true, false, q->K, q->L, q->og, wg, q->K, A, q->L, 0.0,
             j->y + (size_t)((n0 * q->C + g * q->cg) * q->H * q->W) * es, q->L);
        continue;
      }
      gemm(q, true, false, q->K, ld, q->og, wg, q->K, A, ld, 0.0, col, ld);
      for (int64_t i = 0; i < nb; i++) {
        char *xg = j->y + (size_t)(((n0 + i) * q->C + g * q->cg) * q->H * q->W) * es;
        if (direct)
          for (int64_t r = 0; r < q->K; r++)
            memcpy(xg + (size_t)(r * q->L) * es, col + (size_t)(r * ld + i * q->L) * es, (size_t)q->L * es);
        else col2im(q, col + (size_t)(i * q->L) * es, xg, ld);
      }
    }
  }
  lt_conv_unscratch(col, colb); free(tmp);
  return;
oom:
  lt_conv_unscratch(col, colb); free(tmp);
  atomic_store(&j->failed, 1);
}

/* gw = sum_n gy[n] col(x[n])^T, one gemm per group and chunk (serial: it accumulates) */
static int bwd_weight_wide(const conv_geom *q, const char *x, const char *gy, char *gw) {
  size_t es = elem_size(q);
  int64_t nbmax = chunk_items(q, false);
  size_t colb = (size_t)(q->K * wide_len(q) * nbmax) * es, tmpb = (size_t)(q->og * wide_len(q) * nbmax) * es;
  char *col = lt_conv_scratch(colb), *tmp = lt_conv_scratch(tmpb);
  char *xp = malloc(padded_elems(q) * es);
  if (!col || !tmp || !xp) { lt_conv_unscratch(col, colb); lt_conv_unscratch(tmp, tmpb); free(xp); return -1; }
  for (int64_t n0 = 0; n0 < q->N; n0 += nbmax) {
    int64_t nb = q->N - n0 < nbmax ? q->N - n0 : nbmax, ld = nb * wide_len(q);
    for (int64_t g = 0; g < q->g; g++) {
      widen_grad(q, gy, tmp, n0, nb, g);
      wide_cols(q, x, xp, col, n0, nb, g);
      gemm(q, false, true, q->og, q->K, ld, tmp, ld, col, ld, n0 == 0 ? 0.0 : 1.0,
           gw + (size_t)(g * q->og * q->K) * es, q->K);
    }
  }
  lt_conv_unscratch(col, colb); lt_conv_unscratch(tmp, tmpb); free(xp);
  return 0;
}

/* One input and one output channel a group (depthwise): each tap's gradient is the dot
** product of the output-gradient plane with the input plane shifted under the tap, read
** from a zero-padded copy of the plane. Columns and a 1 x K product per plane cost more
** in copies and calls than the arithmetic (perf, depthwise 3x3 128 on 8 x 56^2: im2col,
** memmove and OpenBLAS's packing were 60% of its backward on the AVX2 code path). Groups
** go to the pool, each over every image, so the sums do not depend on the thread count. */
typedef struct dwg_job {
  const conv_geom *q;
  const char *x, *gy;
  char *gw;
  atomic_int failed;
} dwg_job;

#define DW_GRAD(T, S)                                                                        \
static void dw_grad_##S(const conv_geom *q, const T *x, const T *gy, T *gw, T *xp, double *acc, \
                        int64_t g0, int64_t g1) {                                            \
  for (int64_t g = g0; g < g1; g++) {                                                        \
    for (int64_t k = 0; k < q->K; k++) acc[k] = 0;                                           \
    for (int64_t n = 0; n < q->N; n++) {                                                     \
      const T *xs = x + (n * q->C + g) * q->H * q->W;                                        \
      const T *gs = gy + (n * q->O + g) * q->OH * q->OW;                                     \
      memset(xp, 0, (size_t)(q->Hp * q->Wp) * sizeof(T));                                    \
      for (int64_t h = 0; h < q->H; h++)                                                     \
        memcpy(xp + (h + q->ph) * q->Wp + q->pw, xs + h * q->W, (size_t)q->W * sizeof(T));   \
      for (int64_t i = 0; i < q->kh; i++)                                                    \
        for (int64_t j = 0; j < q->kw; j++) {                                                \
          double s = 0;                                                                      \
          for (int64_t oh = 0; oh < q->OH; oh++) {                                           \
            const T *row = xp + (oh * q->sh + i * q->dh) * q->Wp + j * q->dw;                \
            const T *gr = gs + oh * q->OW;                                                   \
            T a[8] = {0}, r = 0;                                                             \
            int64_t ow = 0;                                                                  \
            if (q->sw == 1)                                                                  \
              for (; ow + 8 <= q->OW; ow += 8)                                               \
                for (int l = 0; l < 8; l++) a[l] += gr[ow + l] * row[ow + l];                \
            for (; ow < q->OW; ow++) r += gr[ow] * row[ow * q->sw];                          \
            for (int l = 0; l < 8; l++) r += a[l];                                           \
            s += r;                                                                          \
          }                                                                                  \
          acc[i * q->kw + j] += s;                                                           \
        }                                                                                    \
    }                                                                                        \
    for (int64_t k = 0; k < q->K; k++) gw[g * q->K + k] = (T)acc[k];                         \
  }                                                                                          \
}
DW_GRAD(float, s)
DW_GRAD(double, d)

static void dw_grad_chunk(void *ctx, int64_t g0, int64_t g1) {
  dwg_job *j = ctx;
  const conv_geom *q = j->q;
  size_t es = elem_size(q);
  void *xp = malloc((size_t)(q->Hp * q->Wp) * es);
  double *acc = malloc((size_t)q->K * sizeof *acc);
  if (!xp || !acc) { free(xp); free(acc); atomic_store(&j->failed, 1); return; }
  if (is_f32(q)) dw_grad_s(q, (const float *)j->x, (const float *)j->gy, (float *)j->gw, xp, acc, g0, g1);
  else dw_grad_d(q, (const double *)j->x, (const double *)j->gy, (double *)j->gw, xp, acc, g0, g1);
  free(xp); free(acc);
}

static int bwd_weight_depthwise(const conv_geom *q, const char *x, const char *gy, char *gw) {
  dwg_job j = { q, x, gy, gw, 0 };
  int64_t per = q->N * q->OH * q->OW * q->K;
  int64_t grain = LT_GRAIN_ELEMENTWISE / (per > 0 ? per : 1);
  lt_parallel_for(q->g, grain > 0 ? grain : 1, dw_grad_chunk, &j);
  return atomic_load(&j.failed) ? -1 : 0;   /* the caller names the op */
}

static int bwd_weight(const conv_geom *q, const char *x, const char *gy, char *gw) {
  size_t es = elem_size(q);
  lt_conv_shift sh;
  lt_conv_vec vv;
  if (as_vec(q, &vv, true)) return lt_conv_vec_backward_weight(&vv, (const float *)x, (const float *)gy, (float *)gw);
  if (as_shift(q, &sh) && lt_conv_shift_ok(&sh)) return lt_conv_shift_backward_weight(&sh, x, gy, gw);
  if (q->cg == 1 && q->og == 1 && q->g > 1) return bwd_weight_depthwise(q, x, gy, gw);
  if (is_wide(q)) return bwd_weight_wide(q, x, gy, gw);
  int64_t nbmax = chunk_items(q, false);
  bool direct = is_pointwise(q);
  size_t colb = (size_t)(q->K * q->L * nbmax) * es;
  char *col = lt_conv_scratch(colb);
  char *tmp = nbmax > 1 ? malloc((size_t)(q->og * q->L * nbmax) * es) : NULL;
  if (!col || (nbmax > 1 && !tmp)) { lt_conv_unscratch(col, colb); free(tmp); return -1; }
  for (int64_t n0 = 0; n0 < q->N; n0 += nbmax) {
    int64_t nb = q->N - n0 < nbmax ? q->N - n0 : nbmax, ld = nb * q->L;
    for (int64_t g = 0; g < q->g; g++) {
      const char *A, *B;
      if (nb == 1) {
        A = gy + (size_t)((n0 * q->O + g * q->og) * q->L) * es;
        const char *xg = x + (size_t)((n0 * q->C + g * q->cg) * q->H * q->W) * es;
        if (direct) B = xg;
        else { im2col(q, xg, col, q->L); B = col; }
      } else {
        for (int64_t i = 0; i < nb; i++) {
          for (int64_t o = 0; o < q->og; o++)
            memcpy(tmp + (size_t)(o * ld + i * q->L) * es,
                   gy + (size_t)(((n0 + i) * q->O + g * q->og + o) * q->L) * es, (size_t)q->L * es);
          const char *xg = x + (size_t)(((n0 + i) * q->C + g * q->cg) * q->H * q->W) * es;
          if (direct)
            for (int64_t r = 0; r < q->K; r++)
              memcpy(col + (size_t)(r * ld + i * q->L) * es, xg + (size_t)(r * q->L) * es, (size_t)q->L * es);
          else im2col(q, xg, col + (size_t)(i * q->L) * es, ld);
        }
        A = tmp; B = col;
      }
      gemm(q, false, true, q->og, q->K, ld, A, ld, B, ld, n0 == 0 ? 0.0 : 1.0,
           gw + (size_t)(g * q->og * q->K) * es, q->K);
    }
  }
  lt_conv_unscratch(col, colb); free(tmp);
  return 0;
}

/* run a chunked product over the batch, on the pool when that pays */
static int run_chunks(const char *op, conv_job *j, lt_parallel_fn fn) {
  const conv_geom *q = j->q;
  bool pool = use_pool(q, chunk_items(q, false));
  j->nb = chunk_items(q, pool);
  int64_t nchunks = (q->N + j->nb - 1) / j->nb;
  atomic_init(&j->failed, 0);
  if (pool) lt_parallel_for(nchunks, 1, fn, j);
  else fn(j, 0, nchunks);
  if (atomic_load(&j->failed)) return lt_error("%s: out of memory", op);
  return 0;
}

/* ---- ops ---- */

/* on the device the kernel was dispatched for (a borrowed CPU kernel runs on host-memory devices) */
static lt_tensor *new_out(const conv_geom *q, lt_dtype dt, lt_device dev, int64_t ch, int64_t h, int64_t w) {
  int64_t sz[4];
  int nd = lt_meta_conv_sizes(q, ch, h, w, sz);
  return lt_tensor_new(dt, dev, nd, sz);
}

static lt_tensor *conv_forward(const char *op, conv_geom *q, lt_tensor *input, lt_tensor *weight, lt_tensor *bias) {
  lt_tensor *src[3] = {input, weight, bias}, *c[3];
  if (lt_conv_contig(c, src, 3)) return NULL;
  lt_tensor *y = new_out(q, lt_tensor_dtype(input), lt_tensor_device(input), q->O, q->OH, q->OW);
  if (y && q->N > 0 && q->O > 0 && q->L > 0) {
    lt_conv_shift sh;
    if (q->K > 0 && as_shift(q, &sh) && !lt_conv_direct_ok(&sh) && lt_conv_direct_multi_ok(&sh)) {
      if (lt_conv_direct_multi_forward(&sh, lt_tensor_data(c[0]), lt_tensor_data(c[1]), c[2] ? lt_tensor_data(c[2]) : NULL,
                                       lt_tensor_data(y))) { lt_tensor_release(y); y = lt_error_null("%s: out of memory", op); }
      lt_conv_release(c, 3);
      return y;
    }
    if (q->K > 0 && as_shift(q, &sh) && lt_conv_direct_ok(&sh)) {
      if (lt_conv_direct_forward(&sh, lt_tensor_data(c[0]), lt_tensor_data(c[1]), c[2] ? lt_tensor_data(c[2]) : NULL,
                                 lt_tensor_data(y))) { lt_tensor_release(y); y = lt_error_null("%s: out of memory", op); }
      lt_conv_release(c, 3);
      return y;
    }
    if (q->K > 0 && as_shift(q, &sh) && lt_conv_shift_ok(&sh)) {
      if (lt_conv_shift_forward(&sh, lt_tensor_data(c[0]), lt_tensor_data(c[1]), c[2] ? lt_tensor_data(c[2]) : NULL,
                                lt_tensor_data(y))) { lt_tensor_release(y); y = lt_error_null("%s: out of memory", op); }
      lt_conv_release(c, 3);
      return y;
    }
    lt_conv_vec vv;
    if (as_vec(q, &vv, false)) {
      if (lt_conv_vec_forward(&vv, lt_tensor_data(c[0]), lt_tensor_data(c[1]), c[2] ? lt_tensor_data(c[2]) : NULL,
                              lt_tensor_data(y))) { lt_tensor_release(y); y = lt_error_null("%s: out of memory", op); }
      lt_conv_release(c, 3);
      return y;
    }
    if (q->K == 0) memset(lt_tensor_data(y), 0, (size_t)(q->N * q->O * q->L) * elem_size(q));
    conv_job j = {q, lt_tensor_data(c[0]), lt_tensor_data(c[1]), c[2] ? lt_tensor_data(c[2]) : NULL, NULL,
                  lt_tensor_data(y), 1};
    if (q->K > 0 && run_chunks(op, &j, is_wide(q) ? fwd_wide_chunks : fwd_chunks)) { lt_tensor_release(y); y = NULL; }
  }
  lt_conv_release(c, 3);
  return y;
}

lt_tensor *lt_cpu_conv2d(lt_tensor *input, lt_tensor *weight, lt_tensor *bias, lt_intlist stride,
                         lt_intlist padding, lt_intlist dilation, int64_t groups) {
  conv_geom q;
  if (lt_meta_conv2d("conv2d", input, weight, bias, stride, padding, dilation, groups, &q)) return NULL;
  return conv_forward("conv2d", &q, input, weight, bias);
}

/* A stride-1 depthwise layer's input gradient is the forward pass of the depthwise conv
** of the output gradient with each channel's kernel turned 180 degrees, padded by the
** dilated kernel's reach minus the padding: the direct forward loop (nn_conv_direct.c)
** then serves it, where the columns path spent 60% of the backward in copies (on 8 x 56^2,
** 3x3, 128 channels). true when q is such a layer; t is that forward conv. */
static bool depthwise_as_forward(const conv_geom *q, lt_conv_shift *t) {
  if (q->sh != 1 || q->sw != 1 || q->cg != 1 || q->og != 1 || q->g < 2) return false;
  *t = (lt_conv_shift){q->N, q->O, q->OH, q->OW, q->C, q->kh, q->kw, q->dh * (q->kh - 1) - q->ph,
                       q->dw * (q->kw - 1) - q->pw, q->dh, q->dw, q->g, is_f32(q)};
  return t->ph >= 0 && t->pw >= 0 && lt_conv_direct_ok(t);
}

static int depthwise_backward_input(const conv_geom *q, const lt_conv_shift *t, const char *gy, const char *w,
                                    char *gx) {
  size_t es = elem_size(q), wb = (size_t)(q->C * q->K) * es;
  char *wf = malloc(wb);
  if (!wf) return -1;
  for (int64_t c = 0; c < q->C; c++)
    for (int64_t k = 0; k < q->K; k++)
      memcpy(wf + (size_t)(c * q->K + k) * es, w + (size_t)(c * q->K + q->K - 1 - k) * es, es);
  int rc = lt_conv_direct_forward(t, gy, wf, NULL, gx);
  free(wf);
  return rc;
}

/* the input gradient of conv2d; input_size is the input's full shape */
static lt_tensor *backward_input(const char *op, conv_geom *q, lt_tensor *grad_output, lt_tensor *weight) {
  lt_tensor *src[2] = {grad_output, weight}, *c[2];
  if (lt_conv_contig(c, src, 2)) return NULL;
  lt_tensor *x = new_out(q, lt_tensor_dtype(weight), lt_tensor_device(weight), q->C, q->H, q->W);
  lt_conv_shift sh;
  lt_conv_vec vv;
  if (x && q->N > 0 && q->C * q->H * q->W > 0) {
    if (q->og == 0 || q->L == 0) memset(lt_tensor_data(x), 0, (size_t)(q->N * q->C * q->H * q->W) * elem_size(q));
    else if (as_vec(q, &vv, true) && lt_conv_vec_backward_input_ok(&vv)) {
      if (lt_conv_vec_backward_input(&vv, lt_tensor_data(c[0]), lt_tensor_data(c[1]), lt_tensor_data(x))) {
        lt_tensor_release(x);
        x = lt_error_null("%s: out of memory", op);
      }
    }
    else if (depthwise_as_forward(q, &sh)) {
      if (depthwise_backward_input(q, &sh, lt_tensor_data(c[0]), lt_tensor_data(c[1]), lt_tensor_data(x))) {
        lt_tensor_release(x);
        x = lt_error_null("%s: out of memory", op);
      }
    }
    else if (as_shift(q, &sh) && lt_conv_shift_backward_input_ok(&sh)) {
      if (lt_conv_shift_backward_input(&sh, lt_tensor_data(c[0]), lt_tensor_data(c[1]), lt_tensor_data(x))) {
        lt_tensor_release(x);
        x = lt_error_null("%s: out of memory", op);
      }
    } else {
      conv_job j = {q, NULL, lt_tensor_data(c[1]), NULL, lt_tensor_data(c[0]), lt_tensor_data(x), 1};
      if (run_chunks(op, &j, is_wide(q) ? bwd_input_wide_chunks : bwd_input_chunks)) { lt_tensor_release(x); x = NULL; }
    }
  }
  lt_conv_release(c, 2);
  return x;
}

lt_tensor *lt_cpu_conv2d_backward_input(lt_tensor *grad_output, lt_tensor *weight, lt_intlist input_size,
                                        lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups) {
  const char *op = "conv2d_backward_input";
  conv_geom q;
  if (lt_meta_conv2d_backward_input(op, grad_output, weight, input_size, stride, padding, dilation, groups, &q))
    return NULL;
  return backward_input(op, &q, grad_output, weight);
}

static lt_tensor *backward_weight(const char *op, conv_geom *q, lt_tensor *grad_output, lt_tensor *input,
                                  const int64_t *wsize) {
  lt_tensor *src[2] = {grad_output, input}, *c[2];
  if (lt_conv_contig(c, src, 2)) return NULL;
  lt_tensor *gw = lt_tensor_new(lt_tensor_dtype(input), lt_tensor_device(input), 4, wsize);
  if (gw && q->O * q->K > 0) {
    if (q->N == 0 || q->L == 0) memset(lt_tensor_data(gw), 0, (size_t)(q->O * q->K) * elem_size(q));
    else if (bwd_weight(q, lt_tensor_data(c[1]), lt_tensor_data(c[0]), lt_tensor_data(gw)) < 0) {
      lt_tensor_release(gw);
      gw = lt_error_null("%s: out of memory", op);
    }
  }
  lt_conv_release(c, 2);
  return gw;
}

lt_tensor *lt_cpu_conv2d_backward_weight(lt_tensor *grad_output, lt_tensor *input, lt_intlist weight_size,
                                         lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups) {
  const char *op = "conv2d_backward_weight";
  conv_geom q;
  if (lt_meta_conv2d_backward_weight(op, grad_output, input, weight_size, stride, padding, dilation, groups, &q))
    return NULL;
  return backward_weight(op, &q, grad_output, input, weight_size.v);
}

/* ---- conv_transpose2d: the input gradient of the conv that maps its output to its input ---- */

lt_tensor *lt_cpu_conv_transpose2d(lt_tensor *input, lt_tensor *weight, lt_tensor *bias, lt_intlist stride,
                                   lt_intlist padding, lt_intlist output_padding, int64_t groups,
                                   lt_intlist dilation) {
  const char *op = "conv_transpose2d";
  conv_geom q;
  if (lt_meta_conv_transpose2d(op, input, weight, bias, stride, padding, output_padding, groups, dilation, &q))
    return NULL;
  lt_tensor *y = backward_input(op, &q, input, weight);
  if (!y || !bias || q.N * q.C * q.H * q.W == 0) return y;
  lt_tensor *b = lt_tensor_contiguous(bias);
  if (!b) { lt_tensor_release(y); return NULL; }
  int64_t hw = q.H * q.W;
  for (int64_t n = 0; n < q.N; n++)
    for (int64_t c = 0; c < q.C; c++) {
      if (is_f32(&q)) { float *r = (float *)lt_tensor_data(y) + (n * q.C + c) * hw, bv = ((float *)lt_tensor_data(b))[c];
                   for (int64_t i = 0; i < hw; i++) r[i] += bv; }
      else { double *r = (double *)lt_tensor_data(y) + (n * q.C + c) * hw, bv = ((double *)lt_tensor_data(b))[c];
             for (int64_t i = 0; i < hw; i++) r[i] += bv; }
    }
  lt_tensor_release(b);
  return y;
}
