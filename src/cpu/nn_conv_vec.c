/*
** nn_conv_vec.c — float32 conv2d with few channels and any stride, as direct loops with
** the channels in vector lanes (nn_conv_vec.h).
**
** A layer like the nn_tutorial CNN's (16 -> 16 channels, 3x3, stride 2, 14x14 -> 7x7)
** went through im2col: kh*kw strided copies of the input in rows of 7 elements, whose
** loop overhead cost twice the gemm that followed. Here nothing is copied but the input,
** once, into zero-padded planes, and every product is a vector FMA:
**   forward        acc[pixel][o-lanes]  += w[c,tap][o-lanes] * x[c][pixel+tap]
**   weight grad    acc[tap][o-lanes]    += gy[pixel][o-lanes] * x[c][pixel+tap]
**   input grad     gx[pixel+tap][c-lanes] += w[tap,o][c-lanes] * gy[o][pixel]
** with a block of pixels (or taps) in registers so that each loaded vector feeds several
** FMAs. The input gradient accumulates in a channels-last padded image, converted back
** at the end. Pixels are numbered over the whole output plane, so rows of a few
** elements cost nothing extra.
*/
#pragma GCC diagnostic ignored "-Wpsabi"
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include "cpu/nn_conv_vec.h"
#include "cpu/parallel.h"

/* 8 lanes in the AVX-512 build too: with 16 the nn_tutorial layer ran 1.3x slower on the
** Ice Lake Xeon (16 channels then fill one vector, so each loaded input feeds one FMA, not
** two; and the 512-bit clock is lower) */
#if defined(__AVX2__)
#define VL 8
#else
#define VL 4
#endif
#define MAXNV 4   /* channels handled: up to MAXNV vectors of them */

typedef float vf __attribute__((vector_size(VL * sizeof(float))));
static inline vf vload(const float *p) { vf v; memcpy(&v, p, sizeof v); return v; }
static inline void vstore(float *p, vf v) { memcpy(p, &v, sizeof v); }
/* a broadcast: lane 0 shuffled into every lane ((vf){0} + s is an add the compiler may
** not drop, since +0 + -0 is +0) */
typedef int32_t vi __attribute__((vector_size(VL * sizeof(int32_t))));
static inline vf vsplat(float s) { return __builtin_shuffle((vf){s}, (vi){0}); }

static int64_t nvec(int64_t ch) { return (ch + VL - 1) / VL; }

/* Under 8 products per output the per-pixel cost of writing O outputs comes first (the
** nn_tutorial's first layer, one input channel and 3x3 taps, is 1.4x faster here than
** through im2col; nn_conv.c asks for more before taking stride-1 layers). */
bool lt_conv_vec_ok(const lt_conv_vec *v) {
  return v->O >= 1 && v->O <= MAXNV * VL && v->C >= 1 && v->C * v->kh * v->kw >= 8 &&
         v->OH >= 1 && v->OW >= 1 && v->kh * v->kw >= 1;
}

/* the input gradient holds input channels in the lanes: too few of them waste the vectors */
bool lt_conv_vec_backward_input_ok(const lt_conv_vec *v) {
  return lt_conv_vec_ok(v) && v->C <= MAXNV * VL && 2 * v->C >= VL;
}

/* the geometry shared by the three products: padded planes, pixel and tap offsets */
typedef struct geom {
  const lt_conv_vec *v;
  int64_t Hp, Wp, plane, L, T;
  int64_t *po;   /* L: offset of output pixel p's window in a padded plane */
  int64_t *to;   /* T: offset of tap t within the window */
} geom;

static int geom_init(geom *g, const lt_conv_vec *v, int64_t unit) {
  g->v = v;
  g->Hp = v->H + 2 * v->ph; g->Wp = v->W + 2 * v->pw;
  g->plane = g->Hp * g->Wp;
  g->L = v->OH * v->OW; g->T = v->kh * v->kw;
  g->po = malloc((size_t)(g->L + g->T) * sizeof(int64_t));
  if (!g->po) return -1;
  g->to = g->po + g->L;
  for (int64_t oh = 0, p = 0; oh < v->OH; oh++)
    for (int64_t ow = 0; ow < v->OW; ow++) g->po[p++] = (oh * v->sh * g->Wp + ow * v->sw) * unit;
  for (int64_t ki = 0, t = 0; ki < v->kh; ki++)
    for (int64_t kj = 0; kj < v->kw; kj++) g->to[t++] = (ki * v->dh * g->Wp + kj * v->dw) * unit;
  return 0;
}

/* image x (C x H x W) into zeroed padded planes xp (C x Hp x Wp) */
static void pad_image(const geom *g, const float *x, float *xp) {
  const lt_conv_vec *v = g->v;
  memset(xp, 0, (size_t)(v->C * g->plane) * sizeof(float));
  for (int64_t c = 0; c < v->C; c++)
    for (int64_t h = 0; h < v->H; h++)
      memcpy(xp + c * g->plane + (h + v->ph) * g->Wp + v->pw, x + (c * v->H + h) * v->W, (size_t)v->W * sizeof(float));
}

/* ---- forward: P pixels x NV vectors of output channels ---- */

#define FWD(NV, P)                                                                           \
static void fwd_##NV##_##P(const geom *g, const float *xp, const float *wr, const int64_t *po, \
                           float *out) {                                                     \
  vf acc[P][NV];                                                                             \
  for (int p = 0; p < P; p++) for (int u = 0; u < NV; u++) acc[p][u] = (vf){0};              \
  const int64_t T = g->T, C = g->v->C;                                                       \
  for (int64_t c = 0; c < C; c++) {                                                          \
    const float *xq[P];                                                                      \
    for (int p = 0; p < P; p++) xq[p] = xp + c * g->plane + po[p];                           \
    const float *wc = wr + c * T * NV * VL;                                                  \
    for (int64_t t = 0; t < T; t++) {                                                        \
      const int64_t o = g->to[t];                                                            \
      vf wv[NV];                                                                             \
      for (int u = 0; u < NV; u++) wv[u] = vload(wc + (t * NV + u) * VL);                    \
      for (int p = 0; p < P; p++) {                                                          \
        vf s = vsplat(xq[p][o]);                                                             \
        for (int u = 0; u < NV; u++) acc[p][u] += wv[u] * s;                                 \
      }                                                                                      \
    }                                                                                        \
  }                                                                                          \
  for (int p = 0; p < P; p++) for (int u = 0; u < NV; u++) vstore(out + (p * NV + u) * VL, acc[p][u]); \
}
FWD(1, 8) FWD(1, 1) FWD(2, 1) FWD(3, 1) FWD(4, 1)

typedef void (*fwd_fn)(const geom *, const float *, const float *, const int64_t *, float *);
static const fwd_fn fwd_one[MAXNV + 1] = {NULL, fwd_1_1, fwd_2_1, fwd_3_1, fwd_4_1};
/* P x NV accumulators, NV weight vectors and a broadcast must fit the register file:
** 32 vector registers with AVX-512, 16 with AVX2 (where 8 x 2 kept three accumulators on
** the stack, each FMA a load and a store more) */
#if defined(__AVX512F__)
FWD(2, 8) FWD(3, 4) FWD(4, 4)
static const fwd_fn fwd_block[MAXNV + 1] = {NULL, fwd_1_8, fwd_2_8, fwd_3_4, fwd_4_4};
static const int fwd_pixels[MAXNV + 1] = {0, 8, 8, 4, 4};
#else
FWD(2, 6) FWD(3, 3) FWD(4, 2)
static const fwd_fn fwd_block[MAXNV + 1] = {NULL, fwd_1_8, fwd_2_6, fwd_3_3, fwd_4_2};
static const int fwd_pixels[MAXNV + 1] = {0, 8, 6, 3, 2};
#endif

typedef struct job {
  const geom *g;
  const float *x, *w, *b, *gy;
  float *out;          /* y, gx, or the weight gradient's partial sums (one per job) */
  const float *wr;     /* repacked weights */
  int64_t NV, njobs;
  atomic_int failed;
} job;

static void fwd_images(void *ctx, int64_t n0, int64_t n1) {
  job *j = ctx;
  const geom *g = j->g;
  const lt_conv_vec *v = g->v;
  const int64_t NV = j->NV, Op = NV * VL, L = g->L, P = fwd_pixels[NV];
  float *xp = malloc((size_t)(v->C * g->plane + P * Op) * sizeof(float));
  if (!xp) { atomic_store(&j->failed, 1); return; }
  float *blk = xp + v->C * g->plane;
  for (int64_t n = n0; n < n1; n++) {
    pad_image(g, j->x + n * v->C * v->H * v->W, xp);
    float *y = j->out + n * v->O * L;
    for (int64_t p0 = 0; p0 < L;) {
      int64_t np;
      if (p0 + P <= L) { fwd_block[NV](g, xp, j->wr, g->po + p0, blk); np = P; }
      else if (L >= P) { p0 = L - P; fwd_block[NV](g, xp, j->wr, g->po + p0, blk); np = P; }   /* overlap: same values */
      else { fwd_one[NV](g, xp, j->wr, g->po + p0, blk); np = 1; }
      for (int64_t o = 0; o < v->O; o++) {
        float bo = j->b ? j->b[o] : 0.0f, *yo = y + o * L + p0;
        for (int64_t p = 0; p < np; p++) yo[p] = blk[p * Op + o] + bo;
      }
      p0 += np;
    }
  }
  free(xp);
}

/* w (O x C x T) as C x T x Op, output channels padded with zeros to whole vectors */
static float *repack_out_lanes(const lt_conv_vec *v, const float *w, int64_t T, int64_t Op) {
  float *wr = calloc((size_t)(v->C * T * Op), sizeof(float));
  if (!wr) return NULL;
  for (int64_t o = 0; o < v->O; o++)
    for (int64_t c = 0; c < v->C; c++)
      for (int64_t t = 0; t < T; t++) wr[(c * T + t) * Op + o] = w[(o * v->C + c) * T + t];
  return wr;
}

static int run(job *j, int64_t n, lt_parallel_fn fn) {
  atomic_init(&j->failed, 0);
  if (lt_get_num_threads() > 1 && n > 1) lt_parallel_for(n, 1, fn, j);
  else fn(j, 0, n);
  return atomic_load(&j->failed) ? -1 : 0;
}

int lt_conv_vec_forward(const lt_conv_vec *v, const float *x, const float *w, const float *b, float *y) {
  geom g;
  if (geom_init(&g, v, 1)) return -1;
  job j = {.g = &g, .x = x, .b = b, .out = y, .NV = nvec(v->O)};
  float *wr = repack_out_lanes(v, w, g.T, j.NV * VL);
  int rc = -1;
  if (wr) { j.wr = wr; rc = run(&j, v->N, fwd_images); }
  free(wr); free(g.po);
  return rc;
}

/* ---- weight gradient: TB taps x NV vectors of output channels, summed over pixels ---- */

#define BWW(NV, TB)                                                                          \
static void bww_##NV##_##TB(const geom *g, const float *xc, const float *gyT, int64_t t0, float *acc_out) { \
  vf acc[TB][NV];                                                                            \
  for (int k = 0; k < TB; k++) for (int u = 0; u < NV; u++) acc[k][u] = (vf){0};             \
  const float *xt[TB];                                                                       \
  for (int k = 0; k < TB; k++) xt[k] = xc + g->to[t0 + k];                                   \
  const int64_t L = g->L;                                                                    \
  for (int64_t p = 0; p < L; p++) {                                                          \
    const int64_t o = g->po[p];                                                              \
    vf gv[NV];                                                                               \
    for (int u = 0; u < NV; u++) gv[u] = vload(gyT + (p * NV + u) * VL);                     \
    for (int k = 0; k < TB; k++) {                                                           \
      vf s = vsplat(xt[k][o]);                                                               \
      for (int u = 0; u < NV; u++) acc[k][u] += gv[u] * s;                                   \
    }                                                                                        \
  }                                                                                          \
  for (int k = 0; k < TB; k++)                                                               \
    for (int u = 0; u < NV; u++) {                                                           \
      float *d = acc_out + ((t0 + k) * NV + u) * VL;                                         \
      vstore(d, vload(d) + acc[k][u]);                                                       \
    }                                                                                        \
}
BWW(1, 1) BWW(1, 2) BWW(1, 3) BWW(1, 4) BWW(1, 5) BWW(1, 6) BWW(1, 7) BWW(1, 8)
BWW(2, 1) BWW(2, 2) BWW(2, 3) BWW(2, 4) BWW(2, 5) BWW(2, 6) BWW(2, 7) BWW(2, 8)
BWW(3, 1) BWW(3, 2) BWW(3, 3) BWW(3, 4) BWW(4, 1) BWW(4, 2) BWW(4, 3) BWW(4, 4)

/* bww[NV][TB]: each pass over the pixels serves TB taps; the taps are cut into passes of
** even size (3x3: 5 + 4, not 8 + 1, whose last pass would load a pixel's gradient for
** two FMAs) */
typedef void (*bww_fn)(const geom *, const float *, const float *, int64_t, float *);
static const bww_fn bww[MAXNV + 1][9] = {
  {NULL},
  {NULL, bww_1_1, bww_1_2, bww_1_3, bww_1_4, bww_1_5, bww_1_6, bww_1_7, bww_1_8},
  {NULL, bww_2_1, bww_2_2, bww_2_3, bww_2_4, bww_2_5, bww_2_6, bww_2_7, bww_2_8},
  {NULL, bww_3_1, bww_3_2, bww_3_3, bww_3_4},
  {NULL, bww_4_1, bww_4_2, bww_4_3, bww_4_4},
};
/* taps a pass, by the forward pass's register budget: on AVX2 2 x 6, 3 x 3 and 4 x 2 fit */
#if defined(__AVX512F__)
static const int bww_taps[MAXNV + 1] = {0, 8, 8, 4, 4};
#else
static const int bww_taps[MAXNV + 1] = {0, 8, 6, 3, 2};
#endif

/* job k of njobs: images [N*k/njobs, N*(k+1)/njobs) into partial sums out + k*(C*T*Op) */
static void bww_jobs(void *ctx, int64_t k0, int64_t k1) {
  job *j = ctx;
  const geom *g = j->g;
  const lt_conv_vec *v = g->v;
  const int64_t NV = j->NV, Op = NV * VL, L = g->L, T = g->T, TB = bww_taps[NV];
  float *xp = malloc((size_t)(v->C * g->plane + L * Op) * sizeof(float));
  if (!xp) { atomic_store(&j->failed, 1); return; }
  float *gyT = xp + v->C * g->plane;
  for (int64_t k = k0; k < k1; k++) {
    float *part = j->out + k * v->C * T * Op;
    memset(part, 0, (size_t)(v->C * T * Op) * sizeof(float));
    for (int64_t n = v->N * k / j->njobs; n < v->N * (k + 1) / j->njobs; n++) {
      pad_image(g, j->x + n * v->C * v->H * v->W, xp);
      const float *gy = j->gy + n * v->O * L;
      memset(gyT, 0, (size_t)(L * Op) * sizeof(float));
      for (int64_t o = 0; o < v->O; o++)
        for (int64_t p = 0; p < L; p++) gyT[p * Op + o] = gy[o * L + p];
      int64_t passes = (T + TB - 1) / TB;
      for (int64_t c = 0; c < v->C; c++) {
        const float *xc = xp + c * g->plane;
        float *pc = part + c * T * Op;
        for (int64_t k = 0, t = 0; k < passes; k++) {
          int64_t nt = (T - t) / (passes - k) + ((T - t) % (passes - k) != 0);   /* even cuts */
          bww[NV][nt](g, xc, gyT, t, pc);
          t += nt;
        }
      }
    }
  }
  free(xp);
}

int lt_conv_vec_backward_weight(const lt_conv_vec *v, const float *x, const float *gy, float *gw) {
  geom g;
  if (geom_init(&g, v, 1)) return -1;
  int64_t NV = nvec(v->O), Op = NV * VL, T = g.T, CT = v->C * T;
  int64_t njobs = lt_get_num_threads();
  if (njobs > v->N) njobs = v->N;
  if (njobs < 1) njobs = 1;
  job j = {.g = &g, .x = x, .gy = gy, .NV = NV, .njobs = njobs};
  j.out = malloc((size_t)(njobs * CT * Op) * sizeof(float));
  int rc = -1;
  if (j.out && run(&j, njobs, bww_jobs) == 0) {
    for (int64_t o = 0; o < v->O; o++)
      for (int64_t ct = 0; ct < CT; ct++) {
        float s = 0;
        for (int64_t k = 0; k < njobs; k++) s += j.out[(k * CT + ct) * Op + o];
        gw[o * CT + ct] = s;
      }
    rc = 0;
  }
  free(j.out); free(g.po);
  return rc;
}

/* ---- input gradient: P pixels x NV vectors of input channels, channels last ----
** gy is the image's gradient (O x L) from the block's first pixel on */

#define BWI(NV, P)                                                                           \
static void bwi_##NV##_##P(const geom *g, float *gxp, const float *wT, const float *gy,      \
                           const int64_t *po, int64_t O) {                                   \
  const int64_t T = g->T;                                                                    \
  for (int64_t t = 0; t < T; t++) {                                                          \
    float *d[P];                                                                             \
    vf acc[P][NV];                                                                           \
    for (int p = 0; p < P; p++) {                                                            \
      d[p] = gxp + po[p] + g->to[t];                                                         \
      for (int u = 0; u < NV; u++) acc[p][u] = vload(d[p] + u * VL);                         \
    }                                                                                        \
    const float *wt = wT + t * O * NV * VL;                                                  \
    for (int64_t o = 0; o < O; o++) {                                                        \
      vf wv[NV];                                                                             \
      for (int u = 0; u < NV; u++) wv[u] = vload(wt + (o * NV + u) * VL);                    \
      for (int p = 0; p < P; p++) {                                                          \
        vf s = vsplat(gy[o * g->L + p]);                                                     \
        for (int u = 0; u < NV; u++) acc[p][u] += wv[u] * s;                                 \
      }                                                                                      \
    }                                                                                        \
    for (int p = 0; p < P; p++) for (int u = 0; u < NV; u++) vstore(d[p] + u * VL, acc[p][u]); \
  }                                                                                          \
}
BWI(1, 4) BWI(2, 4) BWI(3, 4) BWI(4, 2) BWI(1, 1) BWI(2, 1) BWI(3, 1) BWI(4, 1)

typedef void (*bwi_fn)(const geom *, float *, const float *, const float *, const int64_t *, int64_t);
static const bwi_fn bwi_block[MAXNV + 1] = {NULL, bwi_1_4, bwi_2_4, bwi_3_4, bwi_4_2};
static const bwi_fn bwi_one[MAXNV + 1] = {NULL, bwi_1_1, bwi_2_1, bwi_3_1, bwi_4_1};
static const int bwi_pixels[MAXNV + 1] = {0, 4, 4, 4, 2};

static void bwi_images(void *ctx, int64_t n0, int64_t n1) {
  job *j = ctx;
  const geom *g = j->g;
  const lt_conv_vec *v = g->v;
  const int64_t NV = j->NV, Cp = NV * VL, L = g->L, O = v->O, P = bwi_pixels[NV];
  float *gxp = malloc((size_t)(g->plane * Cp) * sizeof(float));
  if (!gxp) { atomic_store(&j->failed, 1); return; }
  for (int64_t n = n0; n < n1; n++) {
    memset(gxp, 0, (size_t)(g->plane * Cp) * sizeof(float));
    const float *gy = j->gy + n * O * L;
    /* pixels in blocks of P: one tap's P windows are P distinct positions */
    int64_t p = 0;
    for (; p + P <= L; p += P) bwi_block[NV](g, gxp, j->wr, gy + p, g->po + p, O);
    for (; p < L; p++) bwi_one[NV](g, gxp, j->wr, gy + p, g->po + p, O);
    float *gx = j->out + n * v->C * v->H * v->W;
    for (int64_t c = 0; c < v->C; c++)
      for (int64_t h = 0; h < v->H; h++) {
        const float *s = gxp + ((h + v->ph) * g->Wp + v->pw) * Cp + c;
        float *dr = gx + (c * v->H + h) * v->W;
        for (int64_t w = 0; w < v->W; w++) dr[w] = s[w * Cp];
      }
  }
  free(gxp);
}

int lt_conv_vec_backward_input(const lt_conv_vec *v, const float *gy, const float *w, float *gx) {
  int64_t NV = nvec(v->C), Cp = NV * VL;
  geom g;
  if (geom_init(&g, v, Cp)) return -1;   /* offsets in channels-last elements */
  int64_t T = g.T;
  /* w (O x C x T) as T x O x Cp */
  float *wT = calloc((size_t)(T * v->O * Cp), sizeof(float));
  int rc = -1;
  if (wT) {
    for (int64_t o = 0; o < v->O; o++)
      for (int64_t c = 0; c < v->C; c++)
        for (int64_t t = 0; t < T; t++) wT[(t * v->O + o) * Cp + c] = w[(o * v->C + c) * T + t];
    job j = {.g = &g, .gy = gy, .out = gx, .wr = wT, .NV = NV};
    rc = run(&j, v->N, bwi_images);
  }
  free(wT); free(g.po);
  return rc;
}
