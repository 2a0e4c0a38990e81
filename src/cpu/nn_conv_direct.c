/*
** nn_conv_direct.c — the forward pass of stride-1 convolutions with one input channel per
** group (LeNet's first layer, depthwise layers) as a direct vector loop.
**
** With one input channel the gemm of im2col is O x (kh*kw) by (kh*kw) x OH*OW: a handful
** of rows, which OpenBLAS runs far below peak, after writing kh*kw copies of the input.
** Here two output rows at a time are held in vector accumulators (up to four vectors a
** row; the last vector overlaps the one before when the row is not a whole number of
** them, recomputing the same values) and every kernel tap adds its weight times the
** shifted input rows: no copies, and the taps' loads hit L1.
*/
/* the vector helpers are static: the AVX argument-passing ABI note does not concern them */
#pragma GCC diagnostic ignored "-Wpsabi"
#include <string.h>
#include <stdatomic.h>
#include "cpu/nn_conv_shift.h"
#include "cpu/parallel.h"

bool lt_conv_direct_ok(const lt_conv_shift *s) {
  if (s->g < 1 || s->C != s->g || s->O % s->g) return false;
  int64_t OW = s->W + 2 * s->pw - s->dw * (s->kw - 1), OH = s->H + 2 * s->ph - s->dh * (s->kh - 1);
  return OH >= 1 && OW >= (s->f32 ? 8 : 4);   /* a row fills one vector */
}

typedef struct direct_job {
  const lt_conv_shift *s;
  const void *x, *w, *b;
  void *y;
  const int64_t *off;          /* the taps' offsets in a padded plane */
  int64_t Hp, Wp, OH, OW;
  atomic_int failed;
} direct_job;

/* two output rows (from input rows x0, x1) by NV vectors starting at columns st[]: 2*NV
** independent accumulators, enough to keep the FMA units busy through their latency */
#define KERN(T, X, NV)                                                                       \
static void kern_##X##NV(const T *x0, const T *x1, const int64_t *off, const T *w, int64_t nt, \
                         T b, const int64_t *st, T *y0, T *y1) {                             \
  vec_##X a0[NV], a1[NV];                                                                    \
  for (int j = 0; j < NV; j++) a0[j] = a1[j] = (vec_##X){0} + b;                             \
  for (int64_t t = 0; t < nt; t++) {                                                         \
    const T *r0 = x0 + off[t], *r1 = x1 + off[t];                                            \
    for (int j = 0; j < NV; j++) {   /* scalar times vector: a broadcast load, no add of 0 */ \
      a0[j] += w[t] * load_##X(r0 + st[j]);                                                  \
      a1[j] += w[t] * load_##X(r1 + st[j]);                                                  \
    }                                                                                        \
  }                                                                                          \
  for (int j = 0; j < NV; j++) { store_##X(y0 + st[j], a0[j]); store_##X(y1 + st[j], a1[j]); } \
}

/* four output channels (filters w + wo[i]*K) by two rows by one vector at column st: eight
** accumulators, each input load feeding four of them. The taps u run over channel and
** kernel offset alike (off[u] reaches into the channel's plane). */
#define KERNC(T, X)                                                                          \
static void kernc_##X(const T *x0, const T *x1, const int64_t *off, const T *w, const int64_t *wo, \
                      int64_t nt, const T *b4, int64_t st, T *const *y0, T *const *y1) {     \
  vec_##X a[4][2];                                                                           \
  for (int i = 0; i < 4; i++) a[i][0] = a[i][1] = (vec_##X){0} + b4[i];                      \
  const T *w0 = w + wo[0], *w1 = w + wo[1], *w2 = w + wo[2], *w3 = w + wo[3];                \
  for (int64_t u = 0; u < nt; u++) {                                                         \
    vec_##X l0 = load_##X(x0 + off[u] + st), l1 = load_##X(x1 + off[u] + st);               \
    a[0][0] += w0[u] * l0; a[0][1] += w0[u] * l1; a[1][0] += w1[u] * l0; a[1][1] += w1[u] * l1; \
    a[2][0] += w2[u] * l0; a[2][1] += w2[u] * l1; a[3][0] += w3[u] * l0; a[3][1] += w3[u] * l1; \
  }                                                                                          \
  for (int i = 0; i < 4; i++) { store_##X(y0[i] + st, a[i][0]); store_##X(y1[i] + st, a[i][1]); } \
}                                                                                            \
/* image n, group g: its og output planes from its cg input planes (padded in xp when pad) */ \
static void group_##X(const direct_job *j, int64_t n, int64_t g, T *xp) {                    \
  const lt_conv_shift *s = j->s;                                                             \
  int64_t cg = s->C / s->g, og = s->O / s->g, Wp = j->Wp, OH = j->OH, OW = j->OW;            \
  int64_t K = cg * s->kh * s->kw, HW = s->H * s->W;                                          \
  const T *plane = (const T *)j->x + (n * s->C + g * cg) * HW;                               \
  if (xp) {                                                                                  \
    for (int64_t c = 0; c < cg; c++)                                                         \
      for (int64_t h = 0; h < s->H; h++)                                                     \
        memcpy(xp + (c * j->Hp + h + s->ph) * Wp + s->pw, plane + c * HW + h * s->W, (size_t)s->W * sizeof(T)); \
    plane = xp;                                                                              \
  }                                                                                          \
  const T *w = (const T *)j->w + g * og * K, *b = j->b;                                      \
  T *y = (T *)j->y + (n * s->O + g * og) * OH * OW;                                          \
  for (int64_t o0 = 0; o0 < og; o0 += 4) {                                                   \
    int64_t wo[4];                                                                           \
    T b4[4];                                                                                 \
    for (int i = 0; i < 4; i++) {   /* a short last block repeats its last filter */         \
      int64_t o = o0 + i < og ? o0 + i : og - 1;                                             \
      wo[i] = o * K; b4[i] = b ? b[g * og + o] : (T)0;                                       \
    }                                                                                        \
    for (int64_t oh = 0; oh < OH; oh += 2) {                                                 \
      int64_t oh1 = oh + 1 < OH ? oh + 1 : oh;                                               \
      T *y0[4], *y1[4];                                                                      \
      for (int i = 0; i < 4; i++) {                                                          \
        y0[i] = y + wo[i] / K * OH * OW + oh * OW; y1[i] = y + wo[i] / K * OH * OW + oh1 * OW; \
      }                                                                                      \
      for (int64_t ow = 0; ow < OW; ow += V_##X) {                                           \
        int64_t st = ow < OW - V_##X ? ow : OW - V_##X;                                      \
        kernc_##X(plane + oh * Wp, plane + oh1 * Wp, j->off, w, wo, K, b4, st, y0, y1);      \
      }                                                                                      \
    }                                                                                        \
  }                                                                                          \
}

#define DIRECT(T, X, V)                                                                      \
typedef T vec_##X __attribute__((vector_size(32)));                                         \
static inline vec_##X load_##X(const T *p) { vec_##X v; memcpy(&v, p, sizeof v); return v; } \
static inline void store_##X(T *p, vec_##X v) { memcpy(p, &v, sizeof v); }                  \
enum { V_##X = V };                                                                          \
KERN(T, X, 1) KERN(T, X, 2) KERN(T, X, 3) KERN(T, X, 4) KERNC(T, X)                          \
/* y (OH x OW) = b + the taps w over the plane xp (Wp wide, padded); off: the taps' offsets */ \
static void plane_##X(const T *xp, int64_t Wp, const int64_t *off, const T *w, int64_t nt, T b, \
                      T *y, int64_t OH, int64_t OW) {                                        \
  for (int64_t oh = 0; oh < OH; oh += 2) {                                                   \
    int64_t oh1 = oh + 1 < OH ? oh + 1 : oh;   /* an odd last row is computed twice */       \
    const T *x0 = xp + oh * Wp, *x1 = xp + oh1 * Wp;                                         \
    T *y0 = y + oh * OW, *y1 = y + oh1 * OW;                                                 \
    for (int64_t ow0 = 0; ow0 < OW; ow0 += 4 * V) {                                          \
      int64_t st[4], nv = (OW - ow0 + V - 1) / V;                                            \
      if (nv > 4) nv = 4;                                                                    \
      for (int j = 0; j < 4; j++) st[j] = ow0 + j * V < OW - V ? ow0 + j * V : OW - V;       \
      switch (nv) {                                                                          \
        case 1: kern_##X##1(x0, x1, off, w, nt, b, st, y0, y1); break;                       \
        case 2: kern_##X##2(x0, x1, off, w, nt, b, st, y0, y1); break;                       \
        case 3: kern_##X##3(x0, x1, off, w, nt, b, st, y0, y1); break;                       \
        default: kern_##X##4(x0, x1, off, w, nt, b, st, y0, y1); break;                      \
      }                                                                                      \
    }                                                                                        \
  }                                                                                          \
}                                                                                            \
/* the planes [p0, p1) of the N x C input, each through its group's og filters */      \
static int planes_##X(const direct_job *j, int64_t p0, int64_t p1) {                         \
  const lt_conv_shift *s = j->s;                                                             \
  const T *x = j->x, *w = j->w, *b = j->b;                                                   \
  T *y = j->y;                                                                               \
  int64_t Wp = j->Wp, nt = s->kh * s->kw, og = s->O / s->g, OH = j->OH, OW = j->OW;          \
  bool pad = s->ph > 0 || s->pw > 0;                                                         \
  size_t xpb = pad ? (size_t)(j->Hp * Wp) * sizeof(T) : 0;                                   \
  T *xp = pad ? lt_conv_scratch(xpb) : NULL;                                                 \
  if (pad && !xp) return -1;                                                                 \
  if (pad) memset(xp, 0, xpb);   /* the border stays zero */                                 \
  for (int64_t p = p0; p < p1; p++) {                                                        \
    int64_t n = p / s->C, c = p % s->C;                                                      \
    const T *plane = x + p * s->H * s->W;                                                    \
    if (pad) {                                                                               \
      for (int64_t h = 0; h < s->H; h++)                                                     \
        memcpy(xp + (h + s->ph) * Wp + s->pw, plane + h * s->W, (size_t)s->W * sizeof(T));   \
      plane = xp;                                                                            \
    }                                                                                        \
    for (int64_t o = c * og; o < (c + 1) * og; o++)                                          \
      plane_##X(plane, Wp, j->off, w + o * nt, nt, b ? b[o] : (T)0, y + (n * s->O + o) * OH * OW, OH, OW); \
  }                                                                                          \
  lt_conv_unscratch(xp, xpb);                                                                \
  return 0;                                                                                  \
}
DIRECT(float, s, 8)
DIRECT(double, d, 4)

static void planes(void *ctx, int64_t p0, int64_t p1) {
  direct_job *j = ctx;
  if ((j->s->f32 ? planes_s(j, p0, p1) : planes_d(j, p0, p1)) < 0) atomic_store(&j->failed, 1);
}

int lt_conv_direct_forward(const lt_conv_shift *s, const void *x, const void *w, const void *b, void *y) {
  direct_job j = {s, x, w, b, y, NULL, s->H + 2 * s->ph, s->W + 2 * s->pw, 0, 0, 0};
  j.OH = j.Hp - s->dh * (s->kh - 1);
  j.OW = j.Wp - s->dw * (s->kw - 1);
  int64_t nt = s->kh * s->kw, *off = lt_conv_scratch((size_t)nt * sizeof(int64_t));
  if (!off) return -1;
  for (int64_t t = 0; t < nt; t++) off[t] = (t / s->kw) * s->dh * j.Wp + (t % s->kw) * s->dw;
  j.off = off;
  atomic_init(&j.failed, 0);
  /* a task of at least ~64k multiply-adds */
  int64_t per = (s->O / s->g) * j.OH * j.OW * nt, grain = per > 0 ? 65536 / per + 1 : 1;
  lt_parallel_for(s->N * s->C, grain, planes, &j);
  lt_conv_unscratch(off, (size_t)nt * sizeof(int64_t));
  return atomic_load(&j.failed) ? -1 : 0;
}

bool lt_conv_direct_multi_ok(const lt_conv_shift *s) {
  if (s->g < 1 || s->C % s->g || s->O % s->g) return false;
  int64_t OW = s->W + 2 * s->pw - s->dw * (s->kw - 1), OH = s->H + 2 * s->ph - s->dh * (s->kh - 1);
  /* few input channels: a thin product that OpenBLAS runs below peak after im2col's copies */
  return OH >= 1 && OW >= (s->f32 ? 8 : 4) && s->C / s->g < 16;
}

static void groups(void *ctx, int64_t p0, int64_t p1) {
  direct_job *j = ctx;
  const lt_conv_shift *s = j->s;
  size_t es = s->f32 ? 4 : 8;
  bool pad = s->ph > 0 || s->pw > 0;
  size_t xpb = pad ? (size_t)(s->C / s->g * j->Hp * j->Wp) * es : 0;
  char *xp = pad ? lt_conv_scratch(xpb) : NULL;
  if (pad && !xp) { atomic_store(&j->failed, 1); return; }
  if (pad) memset(xp, 0, xpb);   /* the border stays zero */
  for (int64_t p = p0; p < p1; p++) {
    if (s->f32) group_s(j, p / s->g, p % s->g, (float *)xp);
    else group_d(j, p / s->g, p % s->g, (double *)xp);
  }
  lt_conv_unscratch(xp, xpb);
}

int lt_conv_direct_multi_forward(const lt_conv_shift *s, const void *x, const void *w, const void *b, void *y) {
  direct_job j = {s, x, w, b, y, NULL, s->H + 2 * s->ph, s->W + 2 * s->pw, 0, 0, 0};
  j.OH = j.Hp - s->dh * (s->kh - 1);
  j.OW = j.Wp - s->dw * (s->kw - 1);
  int64_t T = s->kh * s->kw, nt = s->C / s->g * T;
  int64_t *off = lt_conv_scratch((size_t)nt * sizeof(int64_t));
  if (!off) return -1;
  for (int64_t u = 0; u < nt; u++)
    off[u] = u / T * j.Hp * j.Wp + (u % T / s->kw) * s->dh * j.Wp + (u % s->kw) * s->dw;
  j.off = off;
  atomic_init(&j.failed, 0);
  int64_t per = (s->O / s->g) * j.OH * j.OW * nt, grain = per > 0 ? 65536 / per + 1 : 1;
  lt_parallel_for(s->N * s->g, grain, groups, &j);
  lt_conv_unscratch(off, (size_t)nt * sizeof(int64_t));
  return atomic_load(&j.failed) ? -1 : 0;
}
