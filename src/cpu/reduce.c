/*
** reduce.c — reduction planning, and the sum/prod/count and max/min
** families (sum, nansum, mean, nanmean, prod, max, min, amax, amin, argmax,
** argmin, all, any, count_nonzero).
**
** Float sums accumulate in their own precision (float for float32/16/bf16)
** in 32 independent lanes, so the loop vectorises and keeps several adds in
** flight; blocks of at most FOLD_BLOCK elements are combined pairwise, which
** bounds the rounding error by O(log n) instead of O(n). A long line is cut
** into fixed RBLK blocks that run in parallel; the split does not depend on
** the thread count, so results are reproducible across machines.
*/
/* -O2's "very cheap" vectoriser skips loops of unknown trip count, which is
** every row loop here; the dynamic cost model vectorises them. */
#if defined(__GNUC__) && !defined(__clang__)
#endif
#include <stdlib.h>
#include <string.h>
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "cpu/red.h"
#include "cpu/cvt.h"

/* ---- planning ------------------------------------------------------------ */

lt_tensor *lt_red_buffer(lt_dtype dt, int64_t n, lt_device dev) {
  return lt_tensor_new(dt, dev, 1, &n);
}

void lt_red_free(lt_red *g) {
  lt_tensor_release(g->src);
  g->src = NULL;
}

int lt_red_plan(lt_red *g, const char *op, lt_tensor *x, lt_intlist dims, bool keepdim, bool logical) {
  int nd = x->ndim;
  bool mask[LT_MAX_DIMS] = {0};
  memset(g, 0, sizeof *g);
  g->op = op;
  /* the reduced dims and the result's shape (meta/reduce.h); the rest is the CPU's layout */
  if (lt_meta_reduce(op, nd, x->sizes, dims, keepdim, mask, &g->ndim_out, g->osizes) < 0) return -1;
  /* dims that matter (size != 1), in memory order, outermost first */
  int md[LT_MAX_DIMS], mn = 0;
  for (int d = 0; d < nd; d++) if (x->sizes[d] != 1) md[mn++] = d;
  lt_tensor *y = NULL;
  if (x->numel == 0) {
    lt_tensor_retain(x);   /* never read: only the geometry matters */
    y = x;
  } else {
    bool ok = !logical;
    if (ok) {
      /* a permuted-contiguous input (a transpose) is reduced in place */
      for (int i = 1; i < mn; i++)
        for (int j = i; j > 0 && x->strides[md[j]] > x->strides[md[j - 1]]; j--) {
          int t = md[j]; md[j] = md[j - 1]; md[j - 1] = t;
        }
      int64_t expect = 1;
      for (int k = mn - 1; k >= 0 && ok; k--) {
        if (x->strides[md[k]] != expect) ok = false;
        expect *= x->sizes[md[k]];
      }
    }
    if (ok) { lt_tensor_retain(x); y = x; }
    else {
      mn = 0;
      for (int d = 0; d < nd; d++) if (x->sizes[d] != 1) md[mn++] = d;
      y = lt_tensor_contiguous(x);
      if (!y) return -1;
    }
  }
  /* more than one reduced run in memory: copy with the kept dims first */
  int runs = 0;
  for (int k = 0; k < mn; k++) if (mask[md[k]] && (k == 0 || !mask[md[k - 1]])) runs++;
  if (runs > 1) {
    int pm[LT_MAX_DIMS], pn = 0;
    int64_t ps[LT_MAX_DIMS], pst[LT_MAX_DIMS];
    for (int k = 0; k < mn; k++) if (!mask[md[k]]) pm[pn++] = md[k];
    for (int k = 0; k < mn; k++) if (mask[md[k]]) pm[pn++] = md[k];
    for (int k = 0; k < pn; k++) { ps[k] = y->sizes[pm[k]]; pst[k] = y->strides[pm[k]]; }
    lt_tensor *v = lt_tensor_alias(y, y->offset, pn, ps, pst);
    lt_tensor_release(y);
    if (!v) return -1;
    y = lt_tensor_clone_as(v, (lt_dtype)v->dtype);
    lt_tensor_release(v);
    if (!y) return -1;
    memcpy(md, pm, sizeof(int) * (size_t)pn);
    /* y is now [kept..., reduced...] with its own dim numbering; keep the
       logical numbering in md for the output layout */
  }
  g->src = y;
  g->O = g->R = g->I = 1;
  int k = 0;
  for (; k < mn && !mask[md[k]]; k++) g->O *= x->sizes[md[k]];
  for (; k < mn && mask[md[k]]; k++) g->R *= x->sizes[md[k]];
  for (; k < mn; k++) g->I *= x->sizes[md[k]];
  /* where each kept logical dim lives in the [O, I] buffer */
  int64_t bstride[LT_MAX_DIMS] = {0};
  int64_t st = 1;
  g->ordered = true;
  int last = nd;
  for (int j = mn - 1; j >= 0; j--) {
    int d = md[j];
    if (mask[d]) continue;
    bstride[d] = st;
    st *= x->sizes[d];
    if (d > last) g->ordered = false;
    last = d;
  }
  if (g->ordered) lt_contiguous_strides(g->ndim_out, g->osizes, g->ostrides);
  else {
    int o = 0;
    for (int d = 0; d < nd; d++) {
      if (!mask[d]) g->ostrides[o++] = bstride[d];
      else if (keepdim) g->ostrides[o++] = 0;
    }
  }
  return 0;
}

lt_tensor *lt_red_finish(lt_red *g, lt_tensor *buf, lt_dtype rdt, lt_tensor *out) {
  if (!buf) return NULL;
  lt_tensor *v = lt_tensor_alias(buf, 0, g->ndim_out, g->osizes, g->ostrides);
  lt_tensor_release(buf);
  if (!v) return NULL;
  if (out) {
    if (lt_tensor_resize_out(g->op, out, g->ndim_out, g->osizes) < 0 || lt_tensor_copy_(out, v) < 0) {
      lt_tensor_release(v);
      return NULL;
    }
    lt_tensor_release(v);
    lt_tensor_retain(out);
    return out;
  }
  if (g->ordered && v->dtype == rdt) return v;
  lt_tensor *r = lt_tensor_new(rdt, lt_tensor_device(v), g->ndim_out, g->osizes);
  if (r && lt_tensor_copy_(r, v) < 0) { lt_tensor_release(r); r = NULL; }
  lt_tensor_release(v);
  return r;
}

int lt_line_plan(lt_line *g, const char *op, lt_tensor *x, int64_t dim) {
  memset(g, 0, sizeof *g);
  lt_line_geom lg;
  if (lt_meta_line(op, x->ndim, x->sizes, dim, &lg) < 0) return -1;
  g->d = lg.d; g->O = lg.O; g->R = lg.R; g->I = lg.I;
  g->src = lt_tensor_contiguous(x);
  return g->src ? 0 : -1;
}

/* ---- the fold family: sum, nansum, prod, count nonzero, count non-NaN ------ */

#define FOLD_LANES 32
#define FOLD_BLOCK 2048      /* pairwise leaves */
#define RBLK 65536           /* parallel block of a long line */
#define ROWS_CASCADE 64      /* rows added into a partial before it joins the total */

typedef struct fold_ctx {
  const void *x;
  int64_t O, R, I, nblk, ntile, nrb, rlen;
  void *out;       /* O*I accumulators */
  void *part;      /* partials when a line or the rows are split */
} fold_ctx;

#define ADD(a, b) ((a) + (b))
#define MUL(a, b) ((a) * (b))
/* STEP(accumulator type, accumulator, value in the compute type) */
#define ST_SUM(AT, a, v) ((a) + (AT)(v))
#define ST_NANSUM(AT, a, v) ((v) != (v) ? (a) : (a) + (AT)(v))
#define ST_PROD(AT, a, v) ((a) * (AT)(v))
#define ST_CNZ(AT, a, v) ((a) + (AT)((v) != 0))
#define ST_CNN(AT, a, v) ((a) + (AT)((v) == (v)))

#define DEF_FOLD(OPN, NAME, T, AT, INIT, STEP, COMB) \
static AT OPN##_line_##NAME(const T *p, int64_t n) { \
  if (n > FOLD_BLOCK) { \
    int64_t h = (n / 2 + FOLD_LANES - 1) / FOLD_LANES * FOLD_LANES; \
    AT a = OPN##_line_##NAME(p, h), b = OPN##_line_##NAME(p + h, n - h); \
    return COMB(a, b); \
  } \
  AT acc[FOLD_LANES]; \
  for (int j = 0; j < FOLD_LANES; j++) acc[j] = INIT; \
  int64_t i = 0; \
  if (RED_HK_##NAME) {   /* 16-bit floats: the leaf converted to float32 at once (cvt.h) */ \
    float f_[FOLD_BLOCK]; \
    lt_cvt_half_to_f32(RED_HK_##NAME, f_, (const uint16_t *)(const void *)p, n); \
    for (; i + FOLD_LANES <= n; i += FOLD_LANES) \
      for (int j = 0; j < FOLD_LANES; j++) acc[j] = STEP(AT, acc[j], f_[i + j]); \
    for (; i < n; i++) acc[0] = STEP(AT, acc[0], f_[i]); \
  } \
  for (; i + FOLD_LANES <= n; i += FOLD_LANES) \
    for (int j = 0; j < FOLD_LANES; j++) acc[j] = STEP(AT, acc[j], LT_TOC_##NAME(p[i + j])); \
  for (; i < n; i++) acc[0] = STEP(AT, acc[0], LT_TOC_##NAME(p[i])); \
  for (int w = FOLD_LANES / 2; w > 0; w /= 2) \
    for (int j = 0; j < w; j++) acc[j] = COMB(acc[j], acc[j + w]); \
  return acc[0]; \
} \
/* nr rows of nc columns (row stride I) into acc[nc] */ \
static void OPN##_rows_##NAME(const T *x, int64_t nr, int64_t I, int64_t nc, AT *acc) { \
  AT tmp[LT_RED_TILE]; \
  for (int64_t j = 0; j < nc; j++) acc[j] = INIT; \
  for (int64_t r0 = 0; r0 < nr; r0 += ROWS_CASCADE) { \
    int64_t r1 = r0 + ROWS_CASCADE < nr ? r0 + ROWS_CASCADE : nr; \
    for (int64_t j = 0; j < nc; j++) tmp[j] = INIT; \
    for (int64_t r = r0; r < r1; r++) { \
      const T *row = x + r * I; \
      if (RED_HK_##NAME) { \
        float f_[LT_RED_TILE]; \
        lt_cvt_half_to_f32(RED_HK_##NAME, f_, (const uint16_t *)(const void *)row, nc); \
        for (int64_t j = 0; j < nc; j++) tmp[j] = STEP(AT, tmp[j], f_[j]); \
        continue; \
      } \
      for (int64_t j = 0; j < nc; j++) tmp[j] = STEP(AT, tmp[j], LT_TOC_##NAME(row[j])); \
    } \
    for (int64_t j = 0; j < nc; j++) acc[j] = COMB(acc[j], tmp[j]); \
  } \
} \
static void OPN##_tinner_##NAME(void *vc, int64_t b, int64_t e) { \
  fold_ctx *c = vc; const T *x = c->x; AT *out = c->out; \
  for (int64_t o = b; o < e; o++) out[o] = OPN##_line_##NAME(x + o * c->R, c->R); \
} \
static void OPN##_tblk_##NAME(void *vc, int64_t b, int64_t e) { \
  fold_ctx *c = vc; const T *x = c->x; AT *part = c->part; \
  for (int64_t t = b; t < e; t++) { \
    int64_t o = t / c->nblk, k = t % c->nblk, s = k * RBLK; \
    int64_t n = c->R - s < RBLK ? c->R - s : RBLK; \
    part[t] = OPN##_line_##NAME(x + o * c->R + s, n); \
  } \
} \
static void OPN##_touter_##NAME(void *vc, int64_t b, int64_t e) { \
  fold_ctx *c = vc; const T *x = c->x; \
  for (int64_t t = b; t < e; t++) { \
    int64_t rb = t % c->nrb, rest = t / c->nrb, tile = rest % c->ntile, o = rest / c->ntile; \
    int64_t i0 = tile * LT_RED_TILE, nc = c->I - i0 < LT_RED_TILE ? c->I - i0 : LT_RED_TILE; \
    int64_t r0 = rb * c->rlen, nr = c->R - r0 < c->rlen ? c->R - r0 : c->rlen; \
    AT *dst = c->nrb == 1 ? (AT *)c->out + o * c->I + i0 : (AT *)c->part + (rb * c->O + o) * c->I + i0; \
    OPN##_rows_##NAME(x + (o * c->R + r0) * c->I + i0, nr, c->I, nc, dst); \
  } \
} \
static int OPN##_run_##NAME(const void *xv, int64_t O, int64_t R, int64_t I, void *outv) { \
  fold_ctx c = {xv, O, R, I, 1, 1, 1, R, outv, NULL}; \
  AT *out = outv; \
  if (I == 1) { \
    c.nblk = R > RBLK ? (R + RBLK - 1) / RBLK : 1; \
    if (c.nblk == 1) { lt_parallel_for(O, lt_red_grain(R), OPN##_tinner_##NAME, &c); return 0; } \
    AT *part = malloc(sizeof(AT) * (size_t)(O * c.nblk)); \
    if (!part) return lt_error("out of memory"); \
    c.part = part; \
    lt_parallel_for(O * c.nblk, 1, OPN##_tblk_##NAME, &c); \
    for (int64_t o = 0; o < O; o++) { \
      AT *p = part + o * c.nblk; \
      for (int64_t w = 1; w < c.nblk; w *= 2) \
        for (int64_t k = 0; k + w < c.nblk; k += 2 * w) p[k] = COMB(p[k], p[k + w]); \
      out[o] = p[0]; \
    } \
    free(part); \
    return 0; \
  } \
  c.ntile = (I + LT_RED_TILE - 1) / LT_RED_TILE; \
  int nth = lt_get_num_threads(); \
  if (O * c.ntile < 4 * nth && R >= 1024 && O * R * I >= 4 * LT_GRAIN_ELEMENTWISE) { \
    c.nrb = (R + 511) / 512; \
    if (c.nrb > 4 * nth) c.nrb = 4 * nth; \
    c.rlen = (R + c.nrb - 1) / c.nrb; \
    c.nrb = (R + c.rlen - 1) / c.rlen; \
  } \
  if (c.nrb > 1) { \
    c.part = malloc(sizeof(AT) * (size_t)(c.nrb * O * I)); \
    if (!c.part) return lt_error("out of memory"); \
  } \
  int64_t w = c.rlen * (I < LT_RED_TILE ? I : LT_RED_TILE); \
  lt_parallel_for(O * c.ntile * c.nrb, lt_red_grain(w), OPN##_touter_##NAME, &c); \
  if (c.nrb > 1) { \
    AT *part = c.part; \
    for (int64_t q = 0; q < O * I; q++) { \
      AT a = part[q]; \
      for (int64_t rb = 1; rb < c.nrb; rb++) a = COMB(a, part[rb * O * I + q]); \
      out[q] = a; \
    } \
    free(c.part); \
  } \
  return 0; \
}

typedef int (*fold_fn)(const void *x, int64_t O, int64_t R, int64_t I, void *out);

/* accumulator: double for float64, float for the other floats, uint64 for integers */
#define FOLD_FAMILY(ENUM, T, CT, NAME) \
  DEF_FOLD(sum, NAME, T, FOLD_AT_##NAME, 0, ST_SUM, ADD) \
  DEF_FOLD(nansum, NAME, T, FOLD_AT_##NAME, 0, ST_NANSUM, ADD) \
  DEF_FOLD(prod, NAME, T, FOLD_AT_##NAME, 1, ST_PROD, MUL) \
  DEF_FOLD(cnz, NAME, T, uint64_t, 0, ST_CNZ, ADD) \
  DEF_FOLD(cnn, NAME, T, uint64_t, 0, ST_CNN, ADD)
/* which leaves convert a block first: cvt.h's kind (1 float16, 2 bfloat16).
** float16 only: bfloat16's load is a shift the fold loop vectorises inline, which
** measured faster (16M sum 4.1 ms against 4.6 ms through blocks; a column sum of
** 4096x4096, 3.8 against 5.7 ms; 1 thread, Xeon AVX-512). */
#define RED_HK_float64 0
#define RED_HK_float32 0
#define RED_HK_float16 1
#define RED_HK_bfloat16 0
#define RED_HK_int64 0
#define RED_HK_int32 0
#define RED_HK_int16 0
#define RED_HK_int8 0
#define RED_HK_uint8 0
#define RED_HK_bool 0
#define RED_HK__Bool 0
#define RED_HK_complex64 0
#define RED_HK_complex128 0
#define FOLD_AT_float64 double
#define FOLD_AT_float32 float
#define FOLD_AT_float16 float
#define FOLD_AT_bfloat16 float
#define FOLD_AT_int64 uint64_t
#define FOLD_AT_int32 uint64_t
#define FOLD_AT_int16 uint64_t
#define FOLD_AT_int8 uint64_t
#define FOLD_AT_uint8 uint64_t
#define FOLD_AT_bool uint64_t
#define FOLD_AT__Bool uint64_t
LT_FORALL_DTYPES(FOLD_FAMILY)

/* complex: sum and prod accumulate in the element's own _Complex type (the
** storage is read as it: dtype.h's structs have its layout) */
typedef float _Complex red_cf;
typedef double _Complex red_cd;
#define LT_TOC_complex64(v) (v)
#define LT_TOC_complex128(v) (v)
DEF_FOLD(sum, complex64, red_cf, red_cf, 0, ST_SUM, ADD)
DEF_FOLD(sum, complex128, red_cd, red_cd, 0, ST_SUM, ADD)
DEF_FOLD(prod, complex64, red_cf, red_cf, 1, ST_PROD, MUL)
DEF_FOLD(prod, complex128, red_cd, red_cd, 1, ST_PROD, MUL)
/* nonzero: either part (all, any, count_nonzero) */
DEF_FOLD(cnz, complex64, red_cf, uint64_t, 0, ST_CNZ, ADD)
DEF_FOLD(cnz, complex128, red_cd, uint64_t, 0, ST_CNZ, ADD)

#define FOLD_ENTRY(OPN) \
  static const fold_fn OPN##_tab[LT_NUM_DTYPES] = { \
    OPN##_run_float64, OPN##_run_float32, OPN##_run_float16, OPN##_run_bfloat16, OPN##_run_int64, \
    OPN##_run_int32, OPN##_run_int16, OPN##_run_int8, OPN##_run_uint8, OPN##_run__Bool };
#define FOLD_ENTRY_CX(OPN) \
  static const fold_fn OPN##_tab[LT_NUM_DTYPES] = { \
    OPN##_run_float64, OPN##_run_float32, OPN##_run_float16, OPN##_run_bfloat16, OPN##_run_int64, \
    OPN##_run_int32, OPN##_run_int16, OPN##_run_int8, OPN##_run_uint8, OPN##_run__Bool, \
    [LT_COMPLEX64] = OPN##_run_complex64, [LT_COMPLEX128] = OPN##_run_complex128 };
FOLD_ENTRY_CX(sum)
FOLD_ENTRY(nansum)
FOLD_ENTRY_CX(prod)
FOLD_ENTRY_CX(cnz)
FOLD_ENTRY(cnn)

static lt_dtype acc_dtype(lt_dtype dt) {
  if (dt == LT_FLOAT64 || lt_dtype_is_complex(dt)) return dt;
  return lt_dtype_is_float(dt) ? LT_FLOAT32 : LT_INT64;
}

enum { K_SUM, K_NANSUM, K_PROD, K_MEAN, K_NANMEAN };

static lt_tensor *fold_op(const char *op, int kind, lt_tensor *self, lt_intlist dim, bool keepdim, int dtype,
                          lt_tensor *out) {
  lt_dtype in = (lt_dtype)self->dtype;
  lt_dtype rdt;
  if (lt_meta_reduce_dtype(op, in, dtype, kind == K_MEAN || kind == K_NANMEAN, &rdt) < 0) return NULL;
  lt_tensor *x = self;
  if (dtype >= 0 && dtype != (int)in) {
    x = lt_tensor_clone_as(self, (lt_dtype)dtype);
    if (!x) return NULL;
  } else lt_tensor_retain(x);
  lt_red g;
  int rc = lt_red_plan(&g, op, x, dim, keepdim, false);
  lt_tensor_release(x);
  if (rc < 0) return NULL;
  lt_dtype xdt = (lt_dtype)g.src->dtype, adt = acc_dtype(xdt);
  int64_t n = g.O * g.I;
  lt_tensor *buf = lt_red_buffer(adt, n, lt_tensor_device(g.src));
  if (!buf) { lt_red_free(&g); return NULL; }
  const fold_fn *tab = kind == K_SUM || kind == K_MEAN ? sum_tab : kind == K_PROD ? prod_tab : nansum_tab;
  if (!tab[xdt]) { lt_error("%s: not implemented for %s tensors", op, lt_dtype_name(xdt)); goto fail; }
  if (tab[xdt](lt_red_data(&g), g.O, g.R, g.I, lt_tensor_data(buf)) < 0) goto fail;
  if (kind == K_MEAN && lt_dtype_is_complex(adt)) {   /* both parts of each accumulator */
    if (adt == LT_COMPLEX128) { double *p = lt_tensor_data(buf); for (int64_t i = 0; i < 2 * n; i++) p[i] /= (double)g.R; }
    else { float *p = lt_tensor_data(buf); for (int64_t i = 0; i < 2 * n; i++) p[i] /= (float)g.R; }
  } else if (kind == K_MEAN) {
    if (adt == LT_FLOAT64) { double *p = lt_tensor_data(buf); for (int64_t i = 0; i < n; i++) p[i] /= (double)g.R; }
    else { float *p = lt_tensor_data(buf); for (int64_t i = 0; i < n; i++) p[i] /= (float)g.R; }
  } else if (kind == K_NANMEAN) {
    lt_tensor *cnt = lt_red_buffer(LT_INT64, n, lt_tensor_device(g.src));
    if (!cnt) goto fail;
    if (cnn_tab[xdt](lt_red_data(&g), g.O, g.R, g.I, lt_tensor_data(cnt)) < 0) { lt_tensor_release(cnt); goto fail; }
    const int64_t *c = lt_tensor_data(cnt);
    if (adt == LT_FLOAT64) { double *p = lt_tensor_data(buf); for (int64_t i = 0; i < n; i++) p[i] /= (double)c[i]; }
    else { float *p = lt_tensor_data(buf); for (int64_t i = 0; i < n; i++) p[i] /= (float)c[i]; }
    lt_tensor_release(cnt);
  }
  lt_tensor *r = lt_red_finish(&g, buf, rdt, out);
  lt_red_free(&g);
  return r;
fail:
  lt_tensor_release(buf);
  lt_red_free(&g);
  return NULL;
}

lt_tensor *lt_cpu_sum(lt_tensor *self, lt_intlist dim, bool keepdim, int dtype, lt_tensor *out) {
  return fold_op("sum", K_SUM, self, dim, keepdim, dtype, out);
}
lt_tensor *lt_cpu_nansum(lt_tensor *self, lt_intlist dim, bool keepdim, int dtype, lt_tensor *out) {
  return fold_op("nansum", K_NANSUM, self, dim, keepdim, dtype, out);
}
lt_tensor *lt_cpu_mean(lt_tensor *self, lt_intlist dim, bool keepdim, int dtype, lt_tensor *out) {
  return fold_op("mean", K_MEAN, self, dim, keepdim, dtype, out);
}
lt_tensor *lt_cpu_nanmean(lt_tensor *self, lt_intlist dim, bool keepdim, int dtype, lt_tensor *out) {
  return fold_op("nanmean", K_NANMEAN, self, dim, keepdim, dtype, out);
}
lt_tensor *lt_cpu_prod(lt_tensor *self, int64_t dim, bool keepdim, int dtype, lt_tensor *out) {
  lt_intlist l = dim == LT_NOINT ? lt_intlist_none() : lt_intlist_make(&dim, 1);
  return fold_op("prod", K_PROD, self, l, keepdim, dtype, out);
}

/* count of nonzero elements into an int64 buffer */
static lt_tensor *count_nz(lt_red *g) {
  lt_tensor *buf = lt_red_buffer(LT_INT64, g->O * g->I, lt_tensor_device(g->src));
  if (buf && cnz_tab[g->src->dtype](lt_red_data(g), g->O, g->R, g->I, lt_tensor_data(buf)) < 0) {
    lt_tensor_release(buf);
    return NULL;
  }
  return buf;
}

static lt_tensor *allany(const char *op, bool all, lt_tensor *self, lt_intlist dim, bool keepdim, lt_tensor *out) {
  lt_red g;
  if (lt_red_plan(&g, op, self, dim, keepdim, false) < 0) return NULL;
  lt_dtype rdt = self->dtype == LT_UINT8 ? LT_UINT8 : LT_BOOL;
  lt_tensor *cnt = count_nz(&g), *buf = NULL;
  if (cnt) buf = lt_red_buffer(rdt, g.O * g.I, lt_tensor_device(g.src));
  if (buf) {
    const int64_t *c = lt_tensor_data(cnt);
    uint8_t *b = lt_tensor_data(buf);   /* bool and uint8 are both one byte */
    for (int64_t i = 0; i < g.O * g.I; i++) b[i] = (uint8_t)(all ? c[i] == g.R : c[i] > 0);
  }
  lt_tensor_release(cnt);
  lt_tensor *r = lt_red_finish(&g, buf, rdt, out);
  lt_red_free(&g);
  return r;
}

lt_tensor *lt_cpu_all(lt_tensor *self, lt_intlist dim, bool keepdim, lt_tensor *out) {
  return allany("all", true, self, dim, keepdim, out);
}
lt_tensor *lt_cpu_any(lt_tensor *self, lt_intlist dim, bool keepdim, lt_tensor *out) {
  return allany("any", false, self, dim, keepdim, out);
}
lt_tensor *lt_cpu_count_nonzero(lt_tensor *self, lt_intlist dim) {
  lt_red g;
  if (lt_red_plan(&g, "count_nonzero", self, dim, false, false) < 0) return NULL;
  lt_tensor *r = lt_red_finish(&g, count_nz(&g), LT_INT64, NULL);
  lt_red_free(&g);
  return r;
}

/* ---- the select family: max/min with the index of the first extreme ------- */

/* v replaces the best b: strictly better, or the first NaN (NaN propagates) */
#define GT_NAN(v, b) ((v) > (b) || ((v) != (v) && (b) == (b)))
#define LT_NAN(v, b) ((v) < (b) || ((v) != (v) && (b) == (b)))
#define SAME(a, b) ((a) == (b) || ((a) != (a) && (b) != (b)))
#define SEL_LANES 16

typedef struct sel_ctx {
  const void *x;
  int64_t O, R, I, nblk, ntile;
  void *val;         /* O*I values in the input dtype, or NULL */
  int64_t *idx;      /* O*I 0-based indices */
  void *pval; int64_t *pidx;   /* partials of split lines */
} sel_ctx;

#define DEF_SEL(OPN, BETTER, NAME, T, CT) \
static void OPN##_line_##NAME(const T *p, int64_t n, CT *bv, int64_t *bi) { \
  CT b = LT_TOC_##NAME(p[0]); int64_t k = 0, i = 1; \
  if (n >= 2 * SEL_LANES) { \
    CT lv[SEL_LANES]; int64_t li[SEL_LANES]; \
    for (int j = 0; j < SEL_LANES; j++) { lv[j] = LT_TOC_##NAME(p[j]); li[j] = j; } \
    for (i = SEL_LANES; i + SEL_LANES <= n; i += SEL_LANES) \
      for (int j = 0; j < SEL_LANES; j++) { \
        CT v = LT_TOC_##NAME(p[i + j]); bool t = BETTER(v, lv[j]); \
        lv[j] = t ? v : lv[j]; li[j] = t ? i + j : li[j]; \
      } \
    b = lv[0]; k = li[0]; \
    for (int j = 1; j < SEL_LANES; j++) \
      if (BETTER(lv[j], b) || (SAME(lv[j], b) && li[j] < k)) { b = lv[j]; k = li[j]; } \
  } \
  for (; i < n; i++) { CT v = LT_TOC_##NAME(p[i]); if (BETTER(v, b)) { b = v; k = i; } } \
  *bv = b; *bi = k; \
} \
static void OPN##_rows_##NAME(const T *x, int64_t R, int64_t I, int64_t nc, CT *bv, int64_t *bi) { \
  for (int64_t j = 0; j < nc; j++) { bv[j] = LT_TOC_##NAME(x[j]); if (bi) bi[j] = 0; } \
  if (!bi) { /* values only (amax): no index lanes, so the loop vectorises */ \
    for (int64_t r = 1; r < R; r++) { \
      const T *row = x + r * I; \
      for (int64_t j = 0; j < nc; j++) { CT v = LT_TOC_##NAME(row[j]); bv[j] = BETTER(v, bv[j]) ? v : bv[j]; } \
    } \
    return; \
  } \
  for (int64_t r = 1; r < R; r++) { \
    const T *row = x + r * I; \
    for (int64_t j = 0; j < nc; j++) { \
      CT v = LT_TOC_##NAME(row[j]); bool t = BETTER(v, bv[j]); \
      bv[j] = t ? v : bv[j]; bi[j] = t ? r : bi[j]; \
    } \
  } \
} \
static void OPN##_tinner_##NAME(void *vc, int64_t b, int64_t e) { \
  sel_ctx *c = vc; const T *x = c->x; T *val = c->val; \
  for (int64_t o = b; o < e; o++) { \
    CT v; OPN##_line_##NAME(x + o * c->R, c->R, &v, &c->idx[o]); \
    if (val) val[o] = LT_FROMC_##NAME(v); \
  } \
} \
static void OPN##_tblk_##NAME(void *vc, int64_t b, int64_t e) { \
  sel_ctx *c = vc; const T *x = c->x; CT *pv = c->pval; \
  for (int64_t t = b; t < e; t++) { \
    int64_t o = t / c->nblk, s = (t % c->nblk) * RBLK; \
    int64_t n = c->R - s < RBLK ? c->R - s : RBLK; \
    OPN##_line_##NAME(x + o * c->R + s, n, &pv[t], &c->pidx[t]); \
    c->pidx[t] += s; \
  } \
} \
static void OPN##_touter_##NAME(void *vc, int64_t b, int64_t e) { \
  sel_ctx *c = vc; const T *x = c->x; T *val = c->val; \
  CT bv[LT_RED_TILE]; \
  for (int64_t t = b; t < e; t++) { \
    int64_t tile = t % c->ntile, o = t / c->ntile; \
    int64_t i0 = tile * LT_RED_TILE, nc = c->I - i0 < LT_RED_TILE ? c->I - i0 : LT_RED_TILE; \
    OPN##_rows_##NAME(x + o * c->R * c->I + i0, c->R, c->I, nc, bv, c->idx ? c->idx + o * c->I + i0 : NULL); \
    if (val) for (int64_t j = 0; j < nc; j++) val[o * c->I + i0 + j] = LT_FROMC_##NAME(bv[j]); \
  } \
} \
static int OPN##_run_##NAME(const void *xv, int64_t O, int64_t R, int64_t I, void *val, int64_t *idx) { \
  sel_ctx c = {xv, O, R, I, 1, 1, val, idx, NULL, NULL}; \
  if (I == 1) { \
    c.nblk = R > RBLK ? (R + RBLK - 1) / RBLK : 1; \
    if (c.nblk == 1) { lt_parallel_for(O, lt_red_grain(R), OPN##_tinner_##NAME, &c); return 0; } \
    c.pval = malloc(sizeof(CT) * (size_t)(O * c.nblk)); \
    c.pidx = malloc(sizeof(int64_t) * (size_t)(O * c.nblk)); \
    if (!c.pval || !c.pidx) { free(c.pval); free(c.pidx); return lt_error("out of memory"); } \
    lt_parallel_for(O * c.nblk, 1, OPN##_tblk_##NAME, &c); \
    CT *pv = c.pval; T *vo = val; \
    for (int64_t o = 0; o < O; o++) { \
      CT b = pv[o * c.nblk]; int64_t k = c.pidx[o * c.nblk]; \
      for (int64_t q = 1; q < c.nblk; q++) \
        if (BETTER(pv[o * c.nblk + q], b)) { b = pv[o * c.nblk + q]; k = c.pidx[o * c.nblk + q]; } \
      idx[o] = k; \
      if (vo) vo[o] = LT_FROMC_##NAME(b); \
    } \
    free(c.pval); free(c.pidx); \
    return 0; \
  } \
  c.ntile = (I + LT_RED_TILE - 1) / LT_RED_TILE; \
  lt_parallel_for(O * c.ntile, lt_red_grain(R * (I < LT_RED_TILE ? I : LT_RED_TILE)), OPN##_touter_##NAME, &c); \
  return 0; \
}

typedef int (*sel_fn)(const void *x, int64_t O, int64_t R, int64_t I, void *val, int64_t *idx);
#define SEL_FAMILY(ENUM, T, CT, NAME) DEF_SEL(smax, GT_NAN, NAME, T, CT) DEF_SEL(smin, LT_NAN, NAME, T, CT)
LT_FORALL_DTYPES(SEL_FAMILY)
#define SEL_ENTRY(OPN) \
  static const sel_fn OPN##_tab[LT_NUM_DTYPES] = { \
    OPN##_run_float64, OPN##_run_float32, OPN##_run_float16, OPN##_run_bfloat16, OPN##_run_int64, \
    OPN##_run_int32, OPN##_run_int16, OPN##_run_int8, OPN##_run_uint8, OPN##_run__Bool };
SEL_ENTRY(smax)
SEL_ENTRY(smin)

/* Runs the max/min search; *val (input dtype) and/or *idx (int64, 1-based) as asked. */
static int select_op(const char *op, bool is_max, lt_tensor *self, lt_intlist dims, bool keepdim, bool logical,
                     lt_tensor *vout, lt_tensor *iout, lt_tensor **val, lt_tensor **idx) {
  lt_red g;
  if (lt_red_plan(&g, op, self, dims, keepdim, logical) < 0) return -1;
  int64_t n = g.O * g.I;
  if (lt_meta_reduce_nonempty(op, g.R, n, dims.n <= 0) < 0) {
    lt_red_free(&g);
    return -1;
  }
  lt_dtype dt = (lt_dtype)g.src->dtype;
  lt_tensor *vb = val ? lt_red_buffer(dt, n, lt_tensor_device(g.src)) : NULL;
  lt_tensor *ib = lt_red_buffer(LT_INT64, n, lt_tensor_device(g.src));
  if ((val && !vb) || !ib) goto fail;
  /* the outer (I > 1) kernel skips the index rows when only values are asked for */
  int64_t *ipass = idx || g.I == 1 ? lt_tensor_data(ib) : NULL;
  if (n > 0 && g.R > 0 &&
      (is_max ? smax_tab : smin_tab)[dt](lt_red_data(&g), g.O, g.R, g.I, vb ? lt_tensor_data(vb) : NULL, ipass) < 0)
    goto fail;
  int64_t *ip = lt_tensor_data(ib);
  if (idx) for (int64_t i = 0; i < n; i++) ip[i] += 1;
  if (val) {
    *val = lt_red_finish(&g, vb, dt, vout);
    vb = NULL;
    if (!*val) goto fail;
  }
  if (idx) {
    *idx = lt_red_finish(&g, ib, LT_INT64, iout);
    ib = NULL;
    if (!*idx) { if (val) { lt_tensor_release(*val); *val = NULL; } goto fail; }
  }
  lt_tensor_release(ib);
  lt_red_free(&g);
  return 0;
fail:
  lt_tensor_release(vb);
  lt_tensor_release(ib);
  lt_red_free(&g);
  return -1;
}

int lt_cpu_max_dim(lt_tensor *self, int64_t dim, bool keepdim, lt_tensor **values, lt_tensor **indices) {
  return select_op("max", true, self, lt_intlist_make(&dim, 1), keepdim, false, NULL, NULL, values, indices);
}
int lt_cpu_min_dim(lt_tensor *self, int64_t dim, bool keepdim, lt_tensor **values, lt_tensor **indices) {
  return select_op("min", false, self, lt_intlist_make(&dim, 1), keepdim, false, NULL, NULL, values, indices);
}
lt_tensor *lt_cpu_max(lt_tensor *self) {
  lt_tensor *v = NULL;
  return select_op("max", true, self, lt_intlist_none(), false, false, NULL, NULL, &v, NULL) < 0 ? NULL : v;
}
lt_tensor *lt_cpu_min(lt_tensor *self) {
  lt_tensor *v = NULL;
  return select_op("min", false, self, lt_intlist_none(), false, false, NULL, NULL, &v, NULL) < 0 ? NULL : v;
}
lt_tensor *lt_cpu_amax(lt_tensor *self, lt_intlist dim, bool keepdim, lt_tensor *out) {
  lt_tensor *v = NULL;
  return select_op("amax", true, self, dim, keepdim, false, out, NULL, &v, NULL) < 0 ? NULL : v;
}
lt_tensor *lt_cpu_amin(lt_tensor *self, lt_intlist dim, bool keepdim, lt_tensor *out) {
  lt_tensor *v = NULL;
  return select_op("amin", false, self, dim, keepdim, false, out, NULL, &v, NULL) < 0 ? NULL : v;
}
lt_tensor *lt_cpu_argmax(lt_tensor *self, int64_t dim, bool keepdim, lt_tensor *out) {
  lt_tensor *i = NULL;
  bool all = dim == LT_NOINT;
  int rc = select_op("argmax", true, self, all ? lt_intlist_none() : lt_intlist_make(&dim, 1), keepdim, all,
                     NULL, out, NULL, &i);
  return rc < 0 ? NULL : i;
}
lt_tensor *lt_cpu_argmin(lt_tensor *self, int64_t dim, bool keepdim, lt_tensor *out) {
  lt_tensor *i = NULL;
  bool all = dim == LT_NOINT;
  int rc = select_op("argmin", false, self, all ? lt_intlist_none() : lt_intlist_make(&dim, 1), keepdim, all,
                     NULL, out, NULL, &i);
  return rc < 0 ? NULL : i;
}
