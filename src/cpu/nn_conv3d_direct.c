/*
** nn_conv3d_direct.c — conv3d's direct vector loops (nn_conv3d.h): the forward pass
** (also the input gradient, as the forward pass of the transposed conv) and the
** weight gradient of stride-1 layers with few channels a group, read in place out
** of the zero-padded volume. nn_conv3d.c chooses them (lt_conv3d_direct_ok).
*/
/* the vector helpers are static: the AVX argument-passing ABI note does not concern them */
#pragma GCC diagnostic ignored "-Wpsabi"
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include "cpu/parallel.h"
#include "cpu/nn_conv3d.h"
#include "cpu/nn_conv_shift.h"   /* lt_conv_scratch */

typedef lt_conv3_geom geom;
typedef lt_conv3_padded padded;

/* the direct loops take stride-1 layers with at most this many input channels a group
** (measured on the Xeon of bench/README.md, 3x3x3 layers: at 64 channels the gemm was
** 5% faster, at 8 to 48 the loops 15-170%) */
#define DIRECT_MAX_CG 48
/* the forward loop takes this many input channels at a time, so that their input rows
** stay in L1 */
#define DIRECT_CHANNELS 32
/* the weight gradient's loop: filters by taps a block (measured on the bench layer: 4 x 4
** 15.5 ms, 8 x 2 17.5, 8 x 3 17.4, 4 x 6 18.7), and bytes of gradient rows a chunk of
** output rows (in L1) */
#define DW_F 4
#define DW_T 4
#define DIRECT_WEIGHT_BYTES (32 << 10)

static inline bool is_f32(const geom *q) { return q->dtype == LT_FLOAT32; }
static inline size_t esize(const geom *q) { return is_f32(q) ? 4 : 8; }

/* The forward pass. The gemm of nn_conv3d.c multiplies og x K by K x m: with the few
** channels of video layers (og = 16) OpenBLAS runs it well below peak, after the columns
** were copied twice (by vol2col, then by its packing). Here four filters by two output
** rows by one vector of columns are held in eight accumulators, and every tap u (input channel and kernel
** offset alike: off[u] reaches into its channel's padded volume) adds the four weights
** times the two shifted input rows, read in place. A row that is not a whole number of
** vectors ends with a vector overlapping the one before (recomputing the same values),
** as do the last rows and filters. */
/* whole AVX-512 registers where the variant has them (measured: the bench layer's forward
** pass 14.3 ms with 32-byte vectors, 11.1 with 64; the weight gradient within 4%) */
#if defined(__AVX512F__)
#define VBYTES 64
#else
#define VBYTES 32
#endif
/* output rows a block: four filters by DROWS rows of accumulators (AVX2, 16 registers: 3
** rows, 12 accumulators; measured on a Zen 3, the bench layer's forward pass 12.6-19.8 ms
** against 14.1-20.7 with 2; the AVX-512 variant keeps the 2 it was measured with) */
#if defined(__AVX512F__)
#define DROWS 2
#else
#define DROWS 3
#endif

#define DIRECT(E, X)                                                                         \
typedef E dvec_##X __attribute__((vector_size(VBYTES)));                                     \
enum { VL_##X = VBYTES / sizeof(E) };                                                        \
static inline dvec_##X dload_##X(const E *p) { dvec_##X v; memcpy(&v, p, sizeof v); return v; } \
static inline void dstore_##X(E *p, dvec_##X v) { memcpy(p, &v, sizeof v); }                 \
/* filters w + wo[i] (i < 4) at column st of DROWS output rows y[r] from input rows x[r] */ \
static void dkern_##X(const E *const *x, const int64_t *off, const E *w, const int64_t *wo,  \
                      int64_t nu, const E *b4, bool acc, int64_t st, E *const (*y)[DROWS]) { \
  dvec_##X a[4][DROWS];                                                                      \
  for (int i = 0; i < 4; i++)                                                                \
    for (int r = 0; r < DROWS; r++)                                                          \
      a[i][r] = acc ? dload_##X(y[i][r] + st) : (dvec_##X){0} + b4[i];                       \
  const E *w0 = w + wo[0], *w1 = w + wo[1], *w2 = w + wo[2], *w3 = w + wo[3];                \
  const E *xs[DROWS];                                                                        \
  for (int r = 0; r < DROWS; r++) xs[r] = x[r] + st;                                         \
  for (int64_t u = 0; u < nu; u++) {                                                         \
    dvec_##X l[DROWS];                                                                       \
    for (int r = 0; r < DROWS; r++) l[r] = dload_##X(xs[r] + off[u]);                        \
    for (int r = 0; r < DROWS; r++) a[0][r] += w0[u] * l[r];                                 \
    for (int r = 0; r < DROWS; r++) a[1][r] += w1[u] * l[r];                                 \
    for (int r = 0; r < DROWS; r++) a[2][r] += w2[u] * l[r];                                 \
    for (int r = 0; r < DROWS; r++) a[3][r] += w3[u] * l[r];                                 \
  }                                                                                          \
  for (int i = 0; i < 4; i++)                                                                \
    for (int r = 0; r < DROWS; r++) dstore_##X(y[i][r] + st, a[i][r]);                       \
}                                                                                            \
/* output row blocks [p0, p1) (DROWS rows each) of item n, group g, from its padded volumes xp */ \
static void drows_##X(const geom *q, const padded *pv, const int64_t *off, const E *xp, const E *w, \
                      const E *b, E *y, int64_t p0, int64_t p1) {                            \
  const int64_t OH = q->out[1], OW = q->out[2], rows = q->out[0] * OH, og = q->og, K = q->K; \
  const int64_t ub = DIRECT_CHANNELS * q->T;   /* taps of a channel block */                \
  E zero4[4] = {0, 0, 0, 0};                                                                 \
  for (int64_t pr = p0; pr < p1; pr++) {                                                     \
    const E *x[DROWS];                                                                       \
    int64_t rr[DROWS];                                                                       \
    for (int r = 0; r < DROWS; r++) {   /* the last block repeats the last row */            \
      rr[r] = DROWS * pr + r < rows ? DROWS * pr + r : rows - 1;                             \
      x[r] = xp + (rr[r] / OH) * pv->P + (rr[r] % OH) * pv->Wp;                              \
    }                                                                                        \
    for (int64_t u0 = 0; u0 < K; u0 += ub)   /* a block of input channels at a time */     \
      for (int64_t o = 0; o < og; o += 4) {                                                  \
        int64_t ob = o + 4 <= og ? o : og - 4, nu = K - u0 < ub ? K - u0 : ub;               \
        int64_t wo[4];                                                                       \
        E *yr[4][DROWS];                                                                     \
        for (int i = 0; i < 4; i++) {                                                        \
          wo[i] = (ob + i) * K + u0;                                                         \
          for (int r = 0; r < DROWS; r++) yr[i][r] = y + (ob + i) * q->L + rr[r] * OW;       \
        }                                                                                    \
        const E *b4 = b ? b + ob : zero4;                                                    \
        for (int64_t st = 0; st < OW; st += VL_##X) {                                        \
          int64_t c = st + VL_##X <= OW ? st : OW - VL_##X;                                  \
          dkern_##X(x, off + u0, w, wo, nu, b4, u0 > 0, c, yr);                              \
        }                                                                                    \
      }                                                                                      \
  }                                                                                          \
}
DIRECT(float, s)
DIRECT(double, d)

/* The weight gradient the same way: gw[o][u] = sum over the output positions of gy[o]
** times the input under tap u, DW_F filters by DW_T taps held in vector accumulators over
** a chunk of output rows (the chunk's gradient rows of all filters stay in L1 while every
** tap pair passes over them, its input rows reused by every filter block), added into a
** vector per weight (acc) that is summed across its lanes once at the end. The last
** vector of a row overlaps the one before: its gradient lanes already counted are masked
** to zero. Overlapping filter or tap blocks skip what the block before wrote. */
#define DIRECTW(E, X)                                                                        \
static void dwrows_##X(const geom *q, const int64_t *rowoff, const int64_t *off, const E *xp, const E *gyc, \
                       E *acc, int64_t o0, int64_t o1, int64_t nr) {                         \
  const int64_t OW = q->out[2], og = q->og, K = q->K, L = nr * OW;                           \
  const int64_t vl = VL_##X, nv = (OW + vl - 1) / vl, fresh = OW - (nv - 1) * vl;            \
  const bool masked = fresh < vl;                                                            \
  dvec_##X mask;                                                                             \
  for (int64_t i = 0; i < vl; i++) mask[i] = i >= vl - fresh ? 1 : 0;                        \
  for (int64_t u = 0; u < K; u += DW_T) {                                                    \
    int64_t ub = u + DW_T <= K ? u : K - DW_T;                                               \
    for (int64_t o = o0; o < o1; o += DW_F) {                                                \
      int64_t ob = o + DW_F <= og ? o : og - DW_F;                                           \
      dvec_##X a[DW_F][DW_T];                                                                \
      for (int i = 0; i < DW_F; i++)                                                         \
        for (int k = 0; k < DW_T; k++) a[i][k] = (dvec_##X){0};                              \
      for (int64_t r = 0; r < nr; r++) {                                                     \
        const E *xr = xp + rowoff[r], *xt[DW_T];                                             \
        for (int k = 0; k < DW_T; k++) xt[k] = xr + off[ub + k];                             \
        const E *gr = gyc + ob * L + r * OW;                                                 \
        for (int64_t v = 0; v < nv; v++) {                                                   \
          int64_t c = v < nv - 1 ? v * vl : OW - vl;                                         \
          dvec_##X l[DW_T];                                                                  \
          for (int k = 0; k < DW_T; k++) l[k] = dload_##X(xt[k] + c);                        \
          for (int i = 0; i < DW_F; i++) {                                                   \
            dvec_##X gv = dload_##X(gr + i * L + c);                                         \
            if (masked && v == nv - 1) gv *= mask;                                           \
            for (int k = 0; k < DW_T; k++) a[i][k] += gv * l[k];                             \
          }                                                                                  \
        }                                                                                    \
      }                                                                                      \
      for (int i = 0; i < DW_F; i++) {                                                       \
        if (ob + i < o) continue;   /* the block before wrote it */                          \
        for (int k = 0; k < DW_T; k++) {                                                     \
          if (ub + k < u) continue;                                                          \
          E *at = acc + ((ob + i) * K + ub + k) * vl;                                        \
          dstore_##X(at, dload_##X(at) + a[i][k]);                                           \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
  }                                                                                          \
}
DIRECTW(float, s)
DIRECTW(double, d)

/* whether the direct loop takes q's forward pass: stride 1, rows of a whole vector or more,
** four filters or more a group, and few enough channels that the gemm runs below its best */
bool lt_conv3d_direct_ok(const geom *q) {
  int64_t vl = VBYTES / (int64_t)esize(q);
  return q->s[0] == 1 && q->s[1] == 1 && q->s[2] == 1 && q->out[2] >= vl && q->og >= 4 && q->K > 0 &&
         q->cg <= DIRECT_MAX_CG;
}

typedef struct direct_job {
  const geom *q;
  const padded *pv;
  const int64_t *off;
  const char *xp, *w, *b;
  char *y;
} direct_job;

static void direct_rows(void *ctx, int64_t p0, int64_t p1) {
  const direct_job *j = ctx;
  if (is_f32(j->q)) drows_s(j->q, j->pv, j->off, (const float *)j->xp, (const float *)j->w, (const float *)j->b,
                            (float *)j->y, p0, p1);
  else drows_d(j->q, j->pv, j->off, (const double *)j->xp, (const double *)j->w, (const double *)j->b,
               (double *)j->y, p0, p1);
}

/* y = conv(x, w) + b (b may be NULL), w laid out as g groups of og x K */
int lt_conv3d_direct_forward(const geom *q, const char *x, const char *w, const char *b, char *y) {
  size_t es = esize(q);
  padded *pv = lt_conv3_padded_new(q);
  int64_t *off = malloc(sizeof(int64_t) * (size_t)(q->K > 0 ? q->K : 1));
  /* no slack: a vector never starts past OW - VL, so every read stays in the padded volume */
  size_t xpb = pv ? (size_t)(q->cg * pv->V) * es : 0;
  char *xp = pv ? lt_conv_scratch(xpb) : NULL;
  int rc = -1;
  if (!pv || !off || !xp) goto done;
  for (int64_t c = 0; c < q->cg; c++)
    for (int64_t t = 0; t < q->T; t++) off[c * q->T + t] = c * pv->V + pv->off[t];
  memset(xp, 0, xpb);
  int64_t pairs = (q->out[0] * q->out[1] + DROWS - 1) / DROWS, vol = q->in[0] * q->in[1] * q->in[2];
  for (int64_t n = 0; n < q->N; n++)
    for (int64_t g = 0; g < q->g; g++) {
      lt_conv3_pad_group(q, pv, x + (size_t)((n * q->C + g * q->cg) * vol) * es, xp);
      direct_job j = {q, pv, off, xp, w + (size_t)(g * q->og * q->K) * es, b ? b + (size_t)(g * q->og) * es : NULL,
                      y + (size_t)((n * q->O + g * q->og) * q->L) * es};
      if (lt_get_num_threads() > 1) lt_parallel_for(pairs, 1, direct_rows, &j);
      else direct_rows(&j, 0, pairs);
    }
  rc = 0;
done:
  lt_conv_unscratch(xp, xpb);
  free(pv); free(off);
  return rc;
}

/* whether the direct loop takes q's weight gradient: as direct_ok, with a block of filters
** and enough input channels (measured: with 3 the gemm was faster) */
bool lt_conv3d_direct_weight_ok(const geom *q) { return lt_conv3d_direct_ok(q) && q->cg >= 8 && q->og >= DW_F && q->K >= DW_T; }

typedef struct dweight_job {
  const geom *q;
  const padded *pv;
  const int64_t *off;
  const char *xp, *gy;
  char *acc;   /* the group's og x K vectors */
  atomic_int *failed;
} dweight_job;

/* filter blocks [b0, b1) over every chunk of output rows: each block owns its rows of gw */
static void dweight_blocks(void *ctx, int64_t b0, int64_t b1) {
  const dweight_job *j = ctx;
  const geom *q = j->q;
  int64_t rows = q->out[0] * q->out[1], nr = DIRECT_WEIGHT_BYTES / (q->og * q->out[2] * (int64_t)esize(q));
  if (nr < 1) nr = 1;
  if (nr > rows) nr = rows;
  int64_t o0 = DW_F * b0, o1 = DW_F * b1 < q->og ? DW_F * b1 : q->og;
  /* the chunk's gradient rows, side by side: in place they would be planes apart, and a
  ** power-of-two plane sends every filter's row to the same L1 sets */
  size_t es = esize(q), gcb = ((size_t)(q->og * nr * q->out[2]) * es + 63) & ~(size_t)63;
  char *gyc = aligned_alloc(64, gcb);   /* whole vectors: a load split across lines costs two */
  int64_t *rowoff = malloc(sizeof(int64_t) * (size_t)nr);   /* each row's start in xp */
  if (!gyc || !rowoff) { free(gyc); free(rowoff); atomic_store(j->failed, 1); return; }
  for (int64_t r0 = 0; r0 < rows; r0 += nr) {
    int64_t r1 = rows - r0 < nr ? rows : r0 + nr, m = (r1 - r0) * q->out[2];
    for (int64_t o = o0 - (o1 - o0 < DW_F ? DW_F - (o1 - o0) : 0); o < o1; o++)
      memcpy(gyc + (size_t)(o * m) * es, j->gy + (size_t)(o * q->L + r0 * q->out[2]) * es, (size_t)m * es);
    for (int64_t r = r0; r < r1; r++) rowoff[r - r0] = (r / q->out[1]) * j->pv->P + (r % q->out[1]) * j->pv->Wp;
    if (is_f32(q)) dwrows_s(q, rowoff, j->off, (const float *)j->xp, (const float *)gyc, (float *)j->acc, o0, o1, r1 - r0);
    else dwrows_d(q, rowoff, j->off, (const double *)j->xp, (const double *)gyc, (double *)j->acc, o0, o1, r1 - r0);
  }
  free(gyc); free(rowoff);
}

/* gw = the weight gradient from x and gy (stride 1) */
int lt_conv3d_direct_backward_weight(const geom *q, const char *x, const char *gy, char *gw) {
  size_t es = esize(q);
  padded *pv = lt_conv3_padded_new(q);
  int64_t *off = malloc(sizeof(int64_t) * (size_t)q->K);
  size_t xpb = pv ? (size_t)(q->cg * pv->V) * es : 0, accb = (size_t)(q->O * q->K) * VBYTES;
  char *xp = pv ? lt_conv_scratch(xpb) : NULL, *acc = lt_conv_scratch(accb);
  int rc = -1;
  if (!pv || !off || !xp || !acc) goto done;
  for (int64_t c = 0; c < q->cg; c++)
    for (int64_t t = 0; t < q->T; t++) off[c * q->T + t] = c * pv->V + pv->off[t];
  memset(xp, 0, xpb);
  memset(acc, 0, accb);
  atomic_int failed;
  atomic_init(&failed, 0);
  int64_t blocks = (q->og + DW_F - 1) / DW_F, vol = q->in[0] * q->in[1] * q->in[2];
  for (int64_t n = 0; n < q->N; n++)
    for (int64_t g = 0; g < q->g; g++) {
      lt_conv3_pad_group(q, pv, x + (size_t)((n * q->C + g * q->cg) * vol) * es, xp);
      dweight_job j = {q, pv, off, xp, gy + (size_t)((n * q->O + g * q->og) * q->L) * es,
                       acc + (size_t)(g * q->og * q->K) * VBYTES, &failed};
      if (lt_get_num_threads() > 1) lt_parallel_for(blocks, 1, dweight_blocks, &j);
      else dweight_blocks(&j, 0, blocks);
    }
  if (atomic_load(&failed)) goto done;
  int64_t vl = VBYTES / (int64_t)es;
  for (int64_t i = 0; i < q->O * q->K; i++)   /* each weight: the lanes of its vector */
    if (is_f32(q)) {
      const float *a = (const float *)acc + i * vl;
      float sum = 0;
      for (int64_t l = 0; l < vl; l++) sum += a[l];
      ((float *)gw)[i] = sum;
    } else {
      const double *a = (const double *)acc + i * vl;
      double sum = 0;
      for (int64_t l = 0; l < vl; l++) sum += a[l];
      ((double *)gw)[i] = sum;
    }
  rc = 0;
done:
  lt_conv_unscratch(xp, xpb); lt_conv_unscratch(acc, accb);
  free(pv); free(off);
  return rc;
}
