/*
** nn_conv3d.c — conv3d and its two backward products on the CPU
** (src/ops/nn_conv.lua; the geometry and checks: src/meta/conv3d.c).
**
** Stride-1 layers with up to DIRECT_MAX_CG input channels a group (video and
** volume layers: 16-48) run direct vector loops over the zero-padded volume: the
** forward pass holds four filters by two output rows by one vector in registers
** and adds every tap's weight times the shifted input rows, read in place; the
** input gradient is the same loop over the transposed conv (the output gradient
** padded by the dilated kernel's reach minus the padding, kernel flipped, channels
** swapped); the weight gradient holds four filters by four taps and reduces over
** the output positions. With few channels the gemm below runs far below peak
** after its columns were copied twice (by vol2col, then by OpenBLAS's packing):
** on the bench layer (16 channels, 3x3x3) the loops were twice as fast.
**
** Everything else is vol2col + one BLAS gemm per group with all the kernel taps in
** its inner dimension (cg*kD*kH*kW), over chunks of output rows so that a chunk's
** columns matrix stays in cache (COL_BYTES), the gemm writing straight into the
** output. Stride 1 copies its columns out of the padded volume (the row of tap
** (kd, kh, kw) for output row (od, oh) is the run of OW elements at kd*dD*Hp*Wp +
** kh*dH*Wp + kw*dW + od*Hp*Wp + oh*Wp, no bounds to test); strided layers gather
** them with bounds (vol2col) and scatter the input gradient back (col2vol). A
** pointwise layer (1x1x1) is one gemm per item and group, its input being its
** columns.
*/
/* the vector helpers are static: the AVX argument-passing ABI note does not concern them */
#pragma GCC diagnostic ignored "-Wpsabi"
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include "core/tensor.h"
#include "core/error.h"
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "cpu/la_gemm.h"
#include "cpu/parallel.h"
#include "cpu/nn_conv_shift.h"   /* lt_conv_scratch */
#include "meta/conv.h"

typedef lt_conv3_geom geom;

/* bytes of one chunk's columns matrix: well inside the L2 cache */
#define COL_BYTES (512 << 10)
/* but at least this many positions per chunk, so that each gemm is wide enough */
#define COL_MIN 256
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

/* ---- stride 1: columns out of the zero-padded volume ---- */

typedef struct padded {
  int64_t Hp, Wp, P, V;         /* the padded volume: planes of P = Hp*Wp, V = Dp*P */
  int64_t off[];                /* [T]: each tap's start in the padded volume */
} padded;

static padded *padded_new(const geom *q) {
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

/* the interior of xp (cg padded volumes) from x's cg channels; the border was zeroed
** once and stays zero */
static void pad_group(const geom *q, const padded *pv, const char *x, char *xp) {
  size_t es = esize(q);
  const int64_t D = q->in[0], H = q->in[1], W = q->in[2];
  for (int64_t c = 0; c < q->cg; c++)
    for (int64_t d = 0; d < D; d++)
      for (int64_t h = 0; h < H; h++)
        memcpy(xp + (size_t)(c * pv->V + (d + q->p[0]) * pv->P + (h + q->p[1]) * pv->Wp + q->p[2]) * es,
               x + (size_t)(((c * D + d) * H + h) * W) * es, (size_t)W * es);
}

/* the columns of output rows [r0, r1) (r = od*OH + oh) from the padded volumes xp: each
** row of a tap is one contiguous run of OW. Plain loops, not memcpy calls: the runs are a
** few dozen elements and many */
#define PCOLS(E, X)                                                                          \
static void pcols_##X(const geom *q, const padded *pv, const E *xp, int64_t r0, int64_t r1, E *col) { \
  const int64_t nt = taps(q), OH = q->out[1], OW = q->out[2], m = (r1 - r0) * OW;            \
  for (int64_t c = 0; c < q->cg; c++)                                                        \
    for (int64_t t = 0; t < nt; t++) {                                                       \
      const E *base = xp + c * pv->V + pv->off[t];                                           \
      E *restrict d = col + (c * nt + t) * m;                                                \
      for (int64_t r = r0; r < r1; r++, d += OW) {                                           \
        const E *restrict s = base + (r / OH) * pv->P + (r % OH) * pv->Wp;                   \
        for (int64_t ow = 0; ow < OW; ow++) d[ow] = s[ow];                                   \
      }                                                                                      \
    }                                                                                        \
}
PCOLS(float, s)
PCOLS(double, d)

/* ---- stride 1 with few channels: the forward pass as a direct vector loop ----
** The gemm (product, below) multiplies og x K by K x m: with the few channels of video
** layers (og = 16) OpenBLAS runs it well below peak, after the columns were copied twice
** (by vol2col, then by its packing). Here four filters by two output rows by one vector of
** columns are held in eight accumulators, and every tap u (input channel and kernel
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

#define DIRECT(E, X)                                                                         \
typedef E dvec_##X __attribute__((vector_size(VBYTES)));                                     \
enum { VL_##X = VBYTES / sizeof(E) };                                                        \
static inline dvec_##X dload_##X(const E *p) { dvec_##X v; memcpy(&v, p, sizeof v); return v; } \
static inline void dstore_##X(E *p, dvec_##X v) { memcpy(p, &v, sizeof v); }                 \
/* filters w + wo[i] (i < 4) at column st of the output rows from input rows x0, x1 */       \
static void dkern_##X(const E *x0, const E *x1, const int64_t *off, const E *w, const int64_t *wo, \
                      int64_t nu, const E *b4, bool acc, int64_t st, E *const *y0, E *const *y1) { \
  dvec_##X a[4][2];                                                                          \
  for (int i = 0; i < 4; i++)                                                                \
    if (acc) { a[i][0] = dload_##X(y0[i] + st); a[i][1] = dload_##X(y1[i] + st); }           \
    else a[i][0] = a[i][1] = (dvec_##X){0} + b4[i];                                          \
  const E *w0 = w + wo[0], *w1 = w + wo[1], *w2 = w + wo[2], *w3 = w + wo[3];                \
  x0 += st; x1 += st;                                                                        \
  for (int64_t u = 0; u < nu; u++) {                                                         \
    dvec_##X l0 = dload_##X(x0 + off[u]), l1 = dload_##X(x1 + off[u]);                       \
    dvec_##X v0 = (dvec_##X){0} + w0[u], v1 = (dvec_##X){0} + w1[u];                        \
    dvec_##X v2 = (dvec_##X){0} + w2[u], v3 = (dvec_##X){0} + w3[u];                        \
    a[0][0] += v0 * l0; a[0][1] += v0 * l1; a[1][0] += v1 * l0; a[1][1] += v1 * l1;          \
    a[2][0] += v2 * l0; a[2][1] += v2 * l1; a[3][0] += v3 * l0; a[3][1] += v3 * l1;          \
  }                                                                                          \
  for (int i = 0; i < 4; i++) { dstore_##X(y0[i] + st, a[i][0]); dstore_##X(y1[i] + st, a[i][1]); } \
}                                                                                            \
/* output row pairs [p0, p1) of item n, group g, from its padded volumes xp */               \
static void drows_##X(const geom *q, const padded *pv, const int64_t *off, const E *xp, const E *w, \
                      const E *b, E *y, int64_t p0, int64_t p1) {                            \
  const int64_t OH = q->out[1], OW = q->out[2], rows = q->out[0] * OH, og = q->og, K = q->K; \
  const int64_t ub = DIRECT_CHANNELS * q->T;   /* taps of a channel block */                \
  E zero4[4] = {0, 0, 0, 0};                                                                 \
  for (int64_t pr = p0; pr < p1; pr++) {                                                     \
    int64_t r0 = 2 * pr, r1 = r0 + 1 < rows ? r0 + 1 : r0;                                   \
    const E *x0 = xp + (r0 / OH) * pv->P + (r0 % OH) * pv->Wp;                               \
    const E *x1 = xp + (r1 / OH) * pv->P + (r1 % OH) * pv->Wp;                               \
    for (int64_t u0 = 0; u0 < K; u0 += ub)   /* a block of input channels at a time */     \
      for (int64_t o = 0; o < og; o += 4) {                                                  \
        int64_t ob = o + 4 <= og ? o : og - 4, nu = K - u0 < ub ? K - u0 : ub;               \
        int64_t wo[4];                                                                       \
        E *y0[4], *y1[4];                                                                    \
        for (int i = 0; i < 4; i++) {                                                        \
          wo[i] = (ob + i) * K + u0;                                                         \
          y0[i] = y + (ob + i) * q->L + r0 * OW;                                             \
          y1[i] = y + (ob + i) * q->L + r1 * OW;                                             \
        }                                                                                    \
        const E *b4 = b ? b + ob : zero4;                                                    \
        for (int64_t st = 0; st < OW; st += VL_##X) {                                        \
          int64_t c = st + VL_##X <= OW ? st : OW - VL_##X;                                  \
          dkern_##X(x0, x1, off + u0, w, wo, nu, b4, u0 > 0, c, y0, y1);                     \
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
static bool direct_ok(const geom *q) {
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
static int forward_direct(const geom *q, const char *x, const char *w, const char *b, char *y) {
  size_t es = esize(q);
  padded *pv = padded_new(q);
  int64_t *off = malloc(sizeof(int64_t) * (size_t)(q->K > 0 ? q->K : 1));
  /* no slack: a vector never starts past OW - VL, so every read stays in the padded volume */
  size_t xpb = pv ? (size_t)(q->cg * pv->V) * es : 0;
  char *xp = pv ? lt_conv_scratch(xpb) : NULL;
  int rc = -1;
  if (!pv || !off || !xp) goto done;
  for (int64_t c = 0; c < q->cg; c++)
    for (int64_t t = 0; t < q->T; t++) off[c * q->T + t] = c * pv->V + pv->off[t];
  memset(xp, 0, xpb);
  int64_t pairs = (q->out[0] * q->out[1] + 1) / 2, vol = q->in[0] * q->in[1] * q->in[2];
  for (int64_t n = 0; n < q->N; n++)
    for (int64_t g = 0; g < q->g; g++) {
      pad_group(q, pv, x + (size_t)((n * q->C + g * q->cg) * vol) * es, xp);
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
static bool direct_weight_ok(const geom *q) { return direct_ok(q) && q->cg >= 8 && q->og >= DW_F && q->K >= DW_T; }

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
static int backward_weight_direct(const geom *q, const char *x, const char *gy, char *gw) {
  size_t es = esize(q);
  padded *pv = padded_new(q);
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
      pad_group(q, pv, x + (size_t)((n * q->C + g * q->cg) * vol) * es, xp);
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

/* ---- strided layers: columns gathered row by row ---- */

/* the columns of output rows [r0, r1) (r = od*OH + oh) of one item's group x (cg unpadded
** volumes): K rows of (r1 - r0)*OW */
#define VOL2COL(T, X)                                                                        \
static void vol2col_##X(const geom *q, const T *x, int64_t r0, int64_t r1, T *col) {         \
  const int64_t D = q->in[0], H = q->in[1], W = q->in[2], OH = q->out[1], OW = q->out[2];    \
  const int64_t n = (r1 - r0) * OW, sw = q->s[2];                                            \
  int64_t row = 0;                                                                           \
  for (int64_t c = 0; c < q->cg; c++)                                                        \
    for (int64_t kd = 0; kd < q->k[0]; kd++)                                                 \
      for (int64_t kh = 0; kh < q->k[1]; kh++)                                               \
        for (int64_t kw = 0; kw < q->k[2]; kw++, row++) {                                    \
          int64_t w0, w1, off = kw * q->d[2] - q->p[2];                                      \
          valid_range(OW, sw, off, W, &w0, &w1);                                             \
          T *restrict dst = col + row * n;                                                   \
          for (int64_t r = r0; r < r1; r++, dst += OW) {                                     \
            int64_t id = (r / OH) * q->s[0] - q->p[0] + kd * q->d[0];                        \
            int64_t ih = (r % OH) * q->s[1] - q->p[1] + kh * q->d[1];                        \
            if (id < 0 || id >= D || ih < 0 || ih >= H) {                                    \
              for (int64_t ow = 0; ow < OW; ow++) dst[ow] = 0;                               \
              continue;                                                                      \
            }                                                                                \
            const T *restrict src = x + ((c * D + id) * H + ih) * W + off;                   \
            for (int64_t ow = 0; ow < w0; ow++) dst[ow] = 0;                                 \
            for (int64_t ow = w0; ow < w1; ow++) dst[ow] = src[ow * sw];                     \
            for (int64_t ow = w1; ow < OW; ow++) dst[ow] = 0;                                \
          }                                                                                  \
        }                                                                                    \
}                                                                                            \
/* x += the columns of output rows [r0, r1), scattered back (the transpose of vol2col) */    \
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
VOL2COL(float, s)
VOL2COL(double, d)

static void vol2col(const geom *q, const char *x, int64_t r0, int64_t r1, char *col) {
  if (is_f32(q)) vol2col_s(q, (const float *)x, r0, r1, (float *)col);
  else vol2col_d(q, (const double *)x, r0, r1, (double *)col);
}

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
** b = gy, out = gw. Stride 1 takes its columns out of the padded volume, strided layers
** gather them from the input (vol2col) */
static int product(const geom *q, enum product pr, const char *a, const char *b, char *out) {
  size_t es = esize(q);
  int64_t nr = chunk_rows(q), rows = q->out[0] * q->out[1], vol = q->in[0] * q->in[1] * q->in[2];
  bool direct = is_pointwise(q) && pr != BACKWARD_INPUT, pad = is_s1(q) && !direct && pr != BACKWARD_INPUT;
  padded *pv = pad ? padded_new(q) : NULL;
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
      if (pad) pad_group(q, pv, a + xo, xp);
      for (int64_t r0 = 0; r0 < rows; r0 += nr) {
        int64_t r1 = rows - r0 < nr ? rows : r0 + nr, m = (r1 - r0) * q->out[2], p0 = r0 * q->out[2];
        if (pr == BACKWARD_INPUT) {
          gemm(q, true, false, q->K, m, q->og, b + (size_t)(g * q->og * q->K) * es, q->K, a + yo + (size_t)p0 * es,
               q->L, 0.0, col, m);
          col2vol(q, col, r0, r1, out + xo);
          continue;
        }
        if (pad && is_f32(q)) pcols_s(q, pv, (const float *)xp, r0, r1, (float *)col);
        else if (pad) pcols_d(q, pv, (const double *)xp, r0, r1, (double *)col);
        else vol2col(q, a + xo, r0, r1, col);
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

/* contiguous copies (or new references) of up to three tensors; NULLs stay NULL */
static int contig(lt_tensor **dst, lt_tensor *const *src, int n) {
  for (int i = 0; i < n; i++) {
    dst[i] = NULL;
    if (src[i] && !(dst[i] = lt_tensor_contiguous(src[i]))) {
      for (int k = 0; k < i; k++) lt_tensor_release(dst[k]);
      return -1;
    }
  }
  return 0;
}

static void release_n(lt_tensor **t, int n) { for (int i = 0; i < n; i++) lt_tensor_release(t[i]); }

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
  if (contig(c, src, 3)) return NULL;
  int64_t sz[5];
  int nd = lt_meta_conv3d_sizes(&q, q.O, q.out, sz);
  lt_tensor *y = lt_tensor_new(q.dtype, lt_tensor_device(input), nd, sz);
  if (y && q.N * q.O * q.L > 0) {
    char *yd = lt_tensor_data(y), *b = data_or_null(c[2]);
    int rc = 0;
    if (q.K == 0) memset(yd, 0, (size_t)(q.N * q.O * q.L) * esize(&q));
    else if (direct_ok(&q)) { rc = forward_direct(&q, lt_tensor_data(c[0]), lt_tensor_data(c[1]), b, yd); b = NULL; }
    else rc = product(&q, FORWARD, lt_tensor_data(c[0]), lt_tensor_data(c[1]), yd);
    if (rc) { lt_tensor_release(y); y = lt_error_null("%s: out of memory", op); }
    else if (b && is_f32(&q)) add_bias_s(&q, (const float *)b, (float *)yd);
    else if (b) add_bias_d(&q, (const double *)b, (double *)yd);
  }
  release_n(c, 3);
  return y;
}

lt_tensor *lt_cpu_conv3d_backward_input(lt_tensor *grad_output, lt_tensor *weight, lt_intlist input_size,
                                        lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups) {
  const char *op = "conv3d_backward_input";
  geom q, t;
  if (lt_meta_conv3d_backward_input(op, grad_output, weight, input_size, stride, padding, dilation, groups, &q))
    return NULL;
  lt_tensor *src[2] = {grad_output, weight}, *c[2];
  if (contig(c, src, 2)) return NULL;
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
        rc = direct_ok(&t) ? forward_direct(&t, lt_tensor_data(c[0]), wt, NULL, gxd)
                           : product(&t, FORWARD, lt_tensor_data(c[0]), wt, gxd);
        lt_conv_unscratch(wt, wb);
      }
    } else rc = product(&q, BACKWARD_INPUT, lt_tensor_data(c[0]), lt_tensor_data(c[1]), gxd);
    if (rc) { lt_tensor_release(gx); gx = lt_error_null("%s: out of memory", op); }
  }
  release_n(c, 2);
  return gx;
}

lt_tensor *lt_cpu_conv3d_backward_weight(lt_tensor *grad_output, lt_tensor *input, lt_intlist weight_size,
                                         lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups) {
  const char *op = "conv3d_backward_weight";
  geom q;
  if (lt_meta_conv3d_backward_weight(op, grad_output, input, weight_size, stride, padding, dilation, groups, &q))
    return NULL;
  lt_tensor *src[2] = {grad_output, input}, *c[2];
  if (contig(c, src, 2)) return NULL;
  lt_tensor *gw = lt_tensor_new(q.dtype, lt_tensor_device(input), 5, weight_size.v);
  if (gw && q.O * q.K > 0) {
    char *gwd = lt_tensor_data(gw);
    int rc = 0;
    if (q.N == 0 || q.L == 0) memset(gwd, 0, (size_t)(q.O * q.K) * esize(&q));
    else if (direct_weight_ok(&q)) rc = backward_weight_direct(&q, lt_tensor_data(c[1]), lt_tensor_data(c[0]), gwd);
    else rc = product(&q, BACKWARD_WEIGHT, lt_tensor_data(c[1]), lt_tensor_data(c[0]), gwd);
    if (rc) { lt_tensor_release(gw); gw = lt_error_null("%s: out of memory", op); }
  }
  release_n(c, 2);
  return gw;
}
