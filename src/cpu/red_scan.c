/*
** red_scan.c — cumsum, cumprod, cummax, cummin.
** The input is made contiguous and seen as [O, R, I] around the scanned dim;
** with I > 1 a whole row is combined with the previous output row, so memory
** is walked in order instead of element by element down a column.
*/
/* -O2's "very cheap" vectoriser skips loops of unknown trip count, which is
** every row loop here; the dynamic cost model vectorises them. */
#if defined(__GNUC__) && !defined(__clang__)
#endif
#include <stdlib.h>
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "cpu/red.h"

typedef struct scan_ctx {
  const void *x;
  int64_t O, R, I, ntile;
  void *y;            /* values: the accumulator dtype (cumsum/cumprod) or the input dtype */
  int64_t *idx;       /* cummax/cummin: 0-based indices */
} scan_ctx;

#define SC_ADD(AT, a, v) ((a) + (AT)(v))
#define SC_MUL(AT, a, v) ((a) * (AT)(v))

#define DEF_SCAN(OPN, NAME, T, AT, INIT, STEP) \
static void OPN##_task_##NAME(void *vc, int64_t b, int64_t e) { \
  scan_ctx *c = vc; \
  for (int64_t t = b; t < e; t++) { \
    int64_t o = t / c->ntile, i0 = (t % c->ntile) * LT_RED_TILE; \
    int64_t nc = c->I - i0 < LT_RED_TILE ? c->I - i0 : LT_RED_TILE; \
    const T *x = (const T *)c->x + o * c->R * c->I + i0; \
    AT *y = (AT *)c->y + o * c->R * c->I + i0; \
    if (c->I == 1) { \
      AT a = INIT; \
      for (int64_t r = 0; r < c->R; r++) { a = STEP(AT, a, LT_TOC_##NAME(x[r])); y[r] = a; } \
      continue; \
    } \
    if (c->R == 0) continue; \
    for (int64_t j = 0; j < nc; j++) y[j] = STEP(AT, (AT)INIT, LT_TOC_##NAME(x[j])); \
    for (int64_t r = 1; r < c->R; r++) { \
      const T *xr = x + r * c->I; AT *yr = y + r * c->I, *yp = yr - c->I; \
      for (int64_t j = 0; j < nc; j++) yr[j] = STEP(AT, yp[j], LT_TOC_##NAME(xr[j])); \
    } \
  } \
}

/* v takes over when it is NaN, or ties or beats a non-NaN running value (last index on ties) */
#define CM_MAX(v, b) ((v) != (v) || ((b) == (b) && (v) >= (b)))
#define CM_MIN(v, b) ((v) != (v) || ((b) == (b) && (v) <= (b)))

#define DEF_CUMSEL(OPN, TAKE, NAME, T, CT) \
static void OPN##_task_##NAME(void *vc, int64_t b, int64_t e) { \
  scan_ctx *c = vc; \
  for (int64_t t = b; t < e; t++) { \
    int64_t o = t / c->ntile, i0 = (t % c->ntile) * LT_RED_TILE; \
    int64_t nc = c->I - i0 < LT_RED_TILE ? c->I - i0 : LT_RED_TILE; \
    int64_t base = o * c->R * c->I + i0; \
    const T *x = (const T *)c->x + base; T *y = (T *)c->y + base; int64_t *ix = c->idx + base; \
    if (c->R == 0) continue; \
    for (int64_t j = 0; j < nc; j++) { y[j] = x[j]; ix[j] = 0; } \
    for (int64_t r = 1; r < c->R; r++) { \
      const T *xr = x + r * c->I; T *yr = y + r * c->I, *yp = yr - c->I; \
      int64_t *ir = ix + r * c->I, *ip = ir - c->I; \
      for (int64_t j = 0; j < nc; j++) { \
        CT v = LT_TOC_##NAME(xr[j]), bv = LT_TOC_##NAME(yp[j]); \
        bool tk = TAKE(v, bv); \
        yr[j] = tk ? xr[j] : yp[j]; ir[j] = tk ? r : ip[j]; \
      } \
    } \
  } \
}

#define SCAN_FAMILY(ENUM, T, CT, NAME) \
  DEF_SCAN(csum, NAME, T, SCAN_AT_##NAME, 0, SC_ADD) \
  DEF_SCAN(cprod, NAME, T, SCAN_AT_##NAME, 1, SC_MUL) \
  DEF_CUMSEL(cmax, CM_MAX, NAME, T, CT) \
  DEF_CUMSEL(cmin, CM_MIN, NAME, T, CT)
#define SCAN_AT_float64 double
#define SCAN_AT_float32 float
#define SCAN_AT_float16 float
#define SCAN_AT_bfloat16 float
#define SCAN_AT_int64 uint64_t
#define SCAN_AT_int32 uint64_t
#define SCAN_AT_int16 uint64_t
#define SCAN_AT_int8 uint64_t
#define SCAN_AT_uint8 uint64_t
#define SCAN_AT_bool uint64_t
LT_FORALL_DTYPES(SCAN_FAMILY)
/* cumsum and cumprod of complex: the storage read as C's _Complex (one layout),
** accumulated in the input's own precision as PyTorch does; no cummax/cummin
** (no ordering) */
#define LT_TOC_cx64(v) (v)
#define LT_TOC_cx128(v) (v)
DEF_SCAN(csum, cx64, float _Complex, float _Complex, 0, SC_ADD)
DEF_SCAN(cprod, cx64, float _Complex, float _Complex, 1, SC_MUL)
DEF_SCAN(csum, cx128, double _Complex, double _Complex, 0, SC_ADD)
DEF_SCAN(cprod, cx128, double _Complex, double _Complex, 1, SC_MUL)

#define SCAN_ENTRY(OPN, ...) \
  static const lt_parallel_fn OPN##_tab[LT_NUM_DTYPES] = { \
    OPN##_task_float64, OPN##_task_float32, OPN##_task_float16, OPN##_task_bfloat16, OPN##_task_int64, \
    OPN##_task_int32, OPN##_task_int16, OPN##_task_int8, OPN##_task_uint8, OPN##_task__Bool, __VA_ARGS__ };
SCAN_ENTRY(csum, [LT_COMPLEX64] = csum_task_cx64, [LT_COMPLEX128] = csum_task_cx128)
SCAN_ENTRY(cprod, [LT_COMPLEX64] = cprod_task_cx64, [LT_COMPLEX128] = cprod_task_cx128)
SCAN_ENTRY(cmax)
SCAN_ENTRY(cmin)

static void scan_geom(scan_ctx *c, const lt_line *g) {
  c->x = lt_tensor_data(g->src);
  c->O = g->O; c->R = g->R; c->I = g->I;
  c->ntile = g->I == 1 ? 1 : (g->I + LT_RED_TILE - 1) / LT_RED_TILE;
}

static lt_tensor *accum_scan(const char *op, bool prod, lt_tensor *self, int64_t dim, int dtype, lt_tensor *out) {
  lt_dtype in = (lt_dtype)self->dtype;
  lt_dtype rdt;
  /* the sum's rule; it refuses a real dtype= for a complex input (the parts would be lost) */
  if (lt_meta_reduce_dtype(op, in, dtype, false, &rdt) < 0) return NULL;
  lt_tensor *x = self;
  if (dtype >= 0 && dtype != (int)in) { if (!(x = lt_tensor_clone_as(self, (lt_dtype)dtype))) return NULL; }
  else lt_tensor_retain(x);
  lt_line g;
  int rc = lt_line_plan(&g, op, x, dim);
  lt_tensor_release(x);
  if (rc < 0) return NULL;
  lt_dtype xdt = (lt_dtype)g.src->dtype;
  lt_dtype adt = xdt == LT_FLOAT64 || lt_dtype_is_complex(xdt) ? xdt : lt_dtype_is_float(xdt) ? LT_FLOAT32 : LT_INT64;
  lt_tensor *y = lt_tensor_new(adt, lt_tensor_device(g.src), g.src->ndim, g.src->sizes);
  if (!y) { lt_tensor_release(g.src); return NULL; }
  scan_ctx c = {0};
  scan_geom(&c, &g);
  c.y = lt_tensor_data(y);
  lt_parallel_for(g.O * c.ntile, lt_red_grain(g.R * (g.I < LT_RED_TILE ? g.I : LT_RED_TILE)),
                  (prod ? cprod_tab : csum_tab)[xdt], &c);
  lt_tensor_release(g.src);
  lt_tensor *r = y;
  if (out) {
    if (lt_tensor_resize_out(op, out, y->ndim, y->sizes) < 0 || lt_tensor_copy_(out, y) < 0) r = NULL;
    else { lt_tensor_retain(out); r = out; }
    lt_tensor_release(y);
  } else if (adt != rdt) {
    r = lt_tensor_clone_as(y, rdt);
    lt_tensor_release(y);
  }
  return r;
}

lt_tensor *lt_cpu_cumsum(lt_tensor *self, int64_t dim, int dtype, lt_tensor *out) {
  return accum_scan("cumsum", false, self, dim, dtype, out);
}
lt_tensor *lt_cpu_cumprod(lt_tensor *self, int64_t dim, int dtype, lt_tensor *out) {
  return accum_scan("cumprod", true, self, dim, dtype, out);
}

static int sel_scan(const char *op, bool is_max, lt_tensor *self, int64_t dim, lt_tensor **values, lt_tensor **indices) {
  lt_line g;
  if (lt_line_plan(&g, op, self, dim) < 0) return -1;
  lt_tensor *v = lt_tensor_new((lt_dtype)g.src->dtype, lt_tensor_device(g.src), g.src->ndim, g.src->sizes);
  lt_tensor *ix = lt_tensor_new(LT_INT64, lt_tensor_device(g.src), g.src->ndim, g.src->sizes);
  if (!v || !ix) { lt_tensor_release(v); lt_tensor_release(ix); lt_tensor_release(g.src); return -1; }
  scan_ctx c = {0};
  scan_geom(&c, &g);
  c.y = lt_tensor_data(v);
  c.idx = lt_tensor_data(ix);
  lt_parallel_for(g.O * c.ntile, lt_red_grain(g.R * (g.I < LT_RED_TILE ? g.I : LT_RED_TILE)),
                  (is_max ? cmax_tab : cmin_tab)[g.src->dtype], &c);
  lt_tensor_release(g.src);
  int64_t *p = c.idx;
  for (int64_t i = 0; i < ix->numel; i++) p[i] += 1;
  *values = v;
  *indices = ix;
  return 0;
}

int lt_cpu_cummax(lt_tensor *self, int64_t dim, lt_tensor **values, lt_tensor **indices) {
  return sel_scan("cummax", true, self, dim, values, indices);
}
int lt_cpu_cummin(lt_tensor *self, int64_t dim, lt_tensor **values, lt_tensor **indices) {
  return sel_scan("cummin", false, self, dim, values, indices);
}
