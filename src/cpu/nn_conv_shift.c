/*
** nn_conv_shift.c — stride-1 conv2d and its two gradients as sums of shifted gemms.
**
** With stride 1, the input plane zero-padded to Hp x Wp and read as whole rows
** (Wp wide, of which OW are valid outputs), the input taps under kernel offset
** (ki, kj) for all outputs of channel c are one contiguous run of that plane,
** starting at c*Hp*Wp + ki*dh*Wp + kj*dw. So for a fixed offset the taps of all
** channels form a matrix with leading dimension Hp*Wp, and the convolution is
**   ywide[O, OH*Wp] = sum over the kh*kw offsets t of Wt[t][O, C] @ xp_t[C, OH*Wp]
** — kh*kw gemms straight out of the padded input, with no columns matrix (im2col
** would write and re-read kh*kw copies of the input, 7.5 MB per ResNet image).
** The Wp - OW junk columns per output row are computed and dropped. The input
** gradient is the same forward pass over the padded output gradient with the
** flipped, transposed kernel; the weight gradient is one gemm per offset against
** the gradient rows widened with zero junk columns. The path pays when there
** are enough channels for each gemm's inner dimension (lt_conv_shift_ok).
*/
#include <string.h>
#include <cblas.h>
#include "cpu/cpu.h"
#include "cpu/nn_conv_shift.h"
#include "cpu/la_gemm.h"

void *lt_conv_scratch(size_t nbytes) {
  lt_allocator *a = lt_cpu_allocator();
  return a->alloc(a, nbytes);
}

void lt_conv_unscratch(void *p, size_t nbytes) {
  lt_allocator *a = lt_cpu_allocator();
  if (p) a->free(a, p, nbytes);
}

/* the derived sizes of a stride-1 conv */
typedef struct shape {
  int64_t cg, og, T, Hp, Wp, HW, OH, OW, Lw;
  size_t es;
} shape;

static shape shape_of(const lt_conv_shift *s) {
  shape d;
  d.cg = s->C / s->g; d.og = s->O / s->g; d.T = s->kh * s->kw;
  d.Hp = s->H + 2 * s->ph; d.Wp = s->W + 2 * s->pw; d.HW = d.Hp * d.Wp;
  d.OH = d.Hp - s->dh * (s->kh - 1); d.OW = d.Wp - s->dw * (s->kw - 1);
  d.Lw = d.OH * d.Wp;
  d.es = s->f32 ? 4 : 8;
  return d;
}

bool lt_conv_shift_ok(const lt_conv_shift *s) {
  if (s->g < 1 || s->C % s->g || s->O % s->g) return false;
  shape d = shape_of(s);
  if (d.OH < 1 || d.OW < 1 || d.T < 2) return false;   /* 1x1: nn_conv.c's direct path */
  /* each gemm's inner dimension is cg (forward) or OH*Wp (weight): small ones go to im2col */
  return d.cg >= 16 && d.og >= 16 && d.Lw >= 256;
}

/* the conv whose forward pass is s's input gradient: over the output gradient, padded
** by the dilated kernel's reach minus the padding, channels swapped */
static lt_conv_shift transposed(const lt_conv_shift *s) {
  shape d = shape_of(s);
  lt_conv_shift t = *s;
  t.C = s->O; t.O = s->C; t.H = d.OH; t.W = d.OW;
  t.ph = s->dh * (s->kh - 1) - s->ph; t.pw = s->dw * (s->kw - 1) - s->pw;
  return t;
}

bool lt_conv_shift_backward_input_ok(const lt_conv_shift *s) {
  lt_conv_shift t = transposed(s);
  return t.ph >= 0 && t.pw >= 0 && lt_conv_shift_ok(s) && lt_conv_shift_ok(&t);
}

static void gemm(bool f32, bool tb, int64_t m, int64_t n, int64_t k, const void *A, int64_t lda, const void *B,
                 int64_t ldb, bool acc, void *C, int64_t ldc) {
  lt_la_blas_gemm(f32, false, tb, m, n, k, 1.0, A, lda, B, ldb, acc ? 1.0 : 0.0, C, ldc);
}

/* the interior of image n's padded planes (the border was zeroed once and stays zero) */
static void pad_image(const lt_conv_shift *s, const shape *d, const char *x, char *xp, int64_t n) {
  size_t es = d->es;
  for (int64_t c = 0; c < s->C; c++) {
    const char *src = x + (size_t)((n * s->C + c) * s->H * s->W) * es;
    char *dst = xp + (size_t)(c * d->HW + s->ph * d->Wp + s->pw) * es;
    for (int64_t h = 0; h < s->H; h++)
      memcpy(dst + (size_t)(h * d->Wp) * es, src + (size_t)(h * s->W) * es, (size_t)s->W * es);
  }
}

/* padded planes plus the slack the last channel's junk columns read past its plane */
static size_t padded_bytes(const lt_conv_shift *s, const shape *d) {
  return (size_t)(s->C * d->HW + s->dw * (s->kw - 1) + 1) * d->es;
}

#define UNWIDEN(T, X)                                                                        \
static void unwiden_##X(const lt_conv_shift *s, const shape *d, const T *yw, const T *b, T *y) { \
  for (int64_t o = 0; o < s->O; o++) {                                                       \
    T bv = b ? b[o] : (T)0;                                                                  \
    for (int64_t oh = 0; oh < d->OH; oh++) {                                                 \
      const T *restrict src = yw + o * d->Lw + oh * d->Wp;                                   \
      T *restrict dst = y + (o * d->OH + oh) * d->OW;                                        \
      for (int64_t ow = 0; ow < d->OW; ow++) dst[ow] = src[ow] + bv;                         \
    }                                                                                        \
  }                                                                                          \
}
UNWIDEN(float, s)
UNWIDEN(double, d)

/* y = conv(x) + b with the kernel already laid out as wt[g][t][og][cg] */
static int run_forward(const lt_conv_shift *s, const char *x, const char *wt, const void *b, char *y) {
  shape d = shape_of(s);
  size_t es = d.es, xpb = padded_bytes(s, &d), ywb = (size_t)(s->O * d.Lw) * es;
  char *xp = lt_conv_scratch(xpb), *yw = lt_conv_scratch(ywb);
  if (!xp || !yw) { lt_conv_unscratch(xp, xpb); lt_conv_unscratch(yw, ywb); return -1; }
  memset(xp, 0, xpb);
  for (int64_t n = 0; n < s->N; n++) {
    pad_image(s, &d, x, xp, n);
    for (int64_t g = 0; g < s->g; g++)
      for (int64_t t = 0; t < d.T; t++) {
        int64_t off = (t / s->kw) * s->dh * d.Wp + (t % s->kw) * s->dw;
        gemm(s->f32, false, d.og, d.Lw, d.cg, wt + (size_t)((g * d.T + t) * d.og * d.cg) * es, d.cg,
             xp + (size_t)(g * d.cg * d.HW + off) * es, d.HW, t > 0, yw + (size_t)(g * d.og * d.Lw) * es, d.Lw);
      }
    char *yn = y + (size_t)(n * s->O * d.OH * d.OW) * es;
    if (s->f32) unwiden_s(s, &d, (const float *)yw, b, (float *)yn);
    else unwiden_d(s, &d, (const double *)yw, b, (double *)yn);
  }
  lt_conv_unscratch(xp, xpb); lt_conv_unscratch(yw, ywb);
  return 0;
}

/* w (O x cg x T) as wt[g][t][og][cg], the taps in reverse and in/out swapped when flip */
static void lay_out(const lt_conv_shift *s, const shape *d, const char *w, char *wt, bool flip) {
  size_t es = d->es;
  for (int64_t g = 0; g < s->g; g++)
    for (int64_t o = 0; o < d->og; o++)
      for (int64_t c = 0; c < d->cg; c++)
        for (int64_t t = 0; t < d->T; t++) {
          const char *src = w + (size_t)(((g * d->og + o) * d->cg + c) * d->T + t) * es;
          size_t at = flip ? (size_t)(((g * d->T + (d->T - 1 - t)) * d->cg + c) * d->og + o)
                           : (size_t)(((g * d->T + t) * d->og + o) * d->cg + c);
          memcpy(wt + at * es, src, es);
        }
}

int lt_conv_shift_forward(const lt_conv_shift *s, const void *x, const void *w, const void *b, void *y) {
  shape d = shape_of(s);
  size_t wb = (size_t)(s->O * d.cg * d.T) * d.es;
  char *wt = lt_conv_scratch(wb);
  if (!wt) return -1;
  lay_out(s, &d, w, wt, false);
  int r = run_forward(s, x, wt, b, y);
  lt_conv_unscratch(wt, wb);
  return r;
}

int lt_conv_shift_backward_input(const lt_conv_shift *s, const void *gy, const void *w, void *gx) {
  shape d = shape_of(s);
  lt_conv_shift t = transposed(s);
  size_t wb = (size_t)(s->O * d.cg * d.T) * d.es;
  char *wt = lt_conv_scratch(wb);
  if (!wt) return -1;
  lay_out(s, &d, w, wt, true);
  int r = run_forward(&t, gy, wt, NULL, gx);
  lt_conv_unscratch(wt, wb);
  return r;
}

int lt_conv_shift_backward_weight(const lt_conv_shift *s, const void *x, const void *gy, void *gw) {
  shape d = shape_of(s);
  size_t es = d.es, xpb = padded_bytes(s, &d), gyb = (size_t)(s->O * d.Lw) * es;
  size_t wb = (size_t)(s->O * d.cg * d.T) * es;
  char *xp = lt_conv_scratch(xpb), *gyw = lt_conv_scratch(gyb), *gwt = lt_conv_scratch(wb);
  if (!xp || !gyw || !gwt) {
    lt_conv_unscratch(xp, xpb); lt_conv_unscratch(gyw, gyb); lt_conv_unscratch(gwt, wb);
    return -1;
  }
  memset(xp, 0, xpb);
  memset(gyw, 0, gyb);   /* the junk columns stay zero: they must add nothing */
  memset(gwt, 0, wb);
  for (int64_t n = 0; n < s->N; n++) {
    pad_image(s, &d, x, xp, n);
    for (int64_t o = 0; o < s->O; o++)
      for (int64_t oh = 0; oh < d.OH; oh++)
        memcpy(gyw + (size_t)(o * d.Lw + oh * d.Wp) * es,
               (const char *)gy + (size_t)(((n * s->O + o) * d.OH + oh) * d.OW) * es, (size_t)d.OW * es);
    for (int64_t g = 0; g < s->g; g++)
      for (int64_t t = 0; t < d.T; t++) {
        int64_t off = (t / s->kw) * s->dh * d.Wp + (t % s->kw) * s->dw;
        gemm(s->f32, true, d.og, d.cg, d.Lw, gyw + (size_t)(g * d.og * d.Lw) * es, d.Lw,
             xp + (size_t)(g * d.cg * d.HW + off) * es, d.HW, n > 0, gwt + (size_t)((g * d.T + t) * d.og * d.cg) * es,
             d.cg);
      }
  }
  /* back to O x cg x T */
  for (int64_t g = 0; g < s->g; g++)
    for (int64_t t = 0; t < d.T; t++)
      for (int64_t o = 0; o < d.og; o++)
        for (int64_t c = 0; c < d.cg; c++)
          memcpy((char *)gw + (size_t)(((g * d.og + o) * d.cg + c) * d.T + t) * es,
                 gwt + (size_t)(((g * d.T + t) * d.og + o) * d.cg + c) * es, es);
  lt_conv_unscratch(xp, xpb); lt_conv_unscratch(gyw, gyb); lt_conv_unscratch(gwt, wb);
  return 0;
}
