/*
** math_special.c — elementwise kernels of src/ops/math.lua and
** src/ops/special.lua: special functions (lgamma, digamma, polygamma, i0,
** i1, sinc; torch.special's erfcx, i0e, i1e, ndtr, ndtri, log_ndtr, entr,
** the Bessel functions, xlog1py, zeta, igamma, igammac), binary math
** (logaddexp, xlogy, fmax, gcd, nextafter, heaviside, ...) and predicates.
** Loops come from the templates in ew.h; lt_ew_run does broadcasting,
** promotion and out=. Special functions are computed in double, by the
** scalar code that the CUDA kernels share (meta/special_math.h), and stored
** in the tensor's dtype.
*/
#include <stdlib.h>
#include <tgmath.h>
#include "cpu/ew.h"
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "cpu/parallel.h"
#include "meta/index.h"
#include "meta/special_math.h"

#define TY(x) __typeof__(x)

/* ---- loops ------------------------------------------------------------------ */

/* float unary through a double function; ctx i[0] carries polygamma's n */
#define SF_DEF(E, T, CT, N, OP) EW_UNARY(OP##_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, (CT)SF_##OP)
#define SF_UNARY(OP) EW_FLOATS(SF_DEF, OP) \
  static const lt_ew_loop OP##_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, OP) };
#define SF_lgamma lt_sm_lgamma((double)x)
#define SF_digamma lt_sm_digamma((double)x)
#define SF_polygamma lt_sm_polygamma(c_->i[0], (double)x)
#define SF_i0 lt_sm_bessel_i(0, (double)x, 0)
#define SF_i1 lt_sm_bessel_i(1, (double)x, 0)
#define SF_sinc lt_sm_sinc((double)x)
SF_UNARY(lgamma) SF_UNARY(digamma) SF_UNARY(polygamma) SF_UNARY(i0) SF_UNARY(i1) SF_UNARY(sinc)
/* torch.special's own (src/ops/special.lua) */
#define SF_erfcx lt_sm_erfcx((double)x)
#define SF_i0e lt_sm_bessel_i(0, (double)x, 1)
#define SF_i1e lt_sm_bessel_i(1, (double)x, 1)
#define SF_ndtr lt_sm_ndtr((double)x)
#define SF_ndtri lt_sm_ndtri((double)x)
#define SF_log_ndtr lt_sm_log_ndtr((double)x)
#define SF_entr lt_sm_entr((double)x)
#define SF_bessel_j0 lt_sm_bessel_j0((double)x)
#define SF_bessel_j1 lt_sm_bessel_j1((double)x)
#define SF_bessel_y0 lt_sm_bessel_y0((double)x)
#define SF_bessel_y1 lt_sm_bessel_y1((double)x)
SF_UNARY(erfcx) SF_UNARY(i0e) SF_UNARY(i1e) SF_UNARY(ndtr) SF_UNARY(ndtri) SF_UNARY(log_ndtr) SF_UNARY(entr)
#define SF_modified_bessel_k0 lt_sm_bessel_k(0, (double)x, 0)
#define SF_modified_bessel_k1 lt_sm_bessel_k(1, (double)x, 0)
#define SF_scaled_modified_bessel_k0 lt_sm_bessel_k(0, (double)x, 1)
#define SF_scaled_modified_bessel_k1 lt_sm_bessel_k(1, (double)x, 1)
SF_UNARY(bessel_j0) SF_UNARY(bessel_j1) SF_UNARY(bessel_y0) SF_UNARY(bessel_y1)
SF_UNARY(modified_bessel_k0) SF_UNARY(modified_bessel_k1) SF_UNARY(scaled_modified_bessel_k0)
SF_UNARY(scaled_modified_bessel_k1)

/* special functions of two arguments, through double */
#define SB_DEF(E, T, CT, N, OP) EW_BINARY(OP##_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, (CT)SB_##OP)
#define SB_TABLE(OP) EW_FLOATS(SB_DEF, OP) \
  static const lt_ew_loop OP##_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, OP) };
#define SB_xlog1py lt_sm_xlog1py((double)x, (double)y)
#define SB_zeta lt_sm_zeta((double)x, (double)y)
#define SB_igamma lt_sm_gammainc((double)x, (double)y, 0)
#define SB_igammac lt_sm_gammainc((double)x, (double)y, 1)
SB_TABLE(xlog1py) SB_TABLE(zeta) SB_TABLE(igamma) SB_TABLE(igammac)

/* predicates, bool out */
#define PB_DEF(E, T, CT, N, OP) EW_UNARY(OP##_##N, T, CT, LD_##N, bool, ST_BOOL, EW_NODECL, PB_##OP)
#define PB_signbit_f signbit(x)
#define PB_signbit_i EW_LT0(x)
#define PB_posinf (x == (TY(x))INFINITY)
#define PB_neginf (x == -(TY(x))INFINITY)
EW_FLOATS(PB_DEF, signbit_f) EW_INTS(PB_DEF, signbit_i) EW_FLOATS(PB_DEF, posinf) EW_FLOATS(PB_DEF, neginf)
static const lt_ew_loop signbit_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, signbit_f) EW_INTS(EW_TBL, signbit_i) };
static const lt_ew_loop posinf_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, posinf) };
static const lt_ew_loop neginf_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, neginf) };

/* binary, floating point */
#define BF_DEF(E, T, CT, N, OP) EW_BINARY(OP##_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, BF_##OP)
#define BF_TABLE(OP) EW_FLOATS(BF_DEF, OP) \
  static const lt_ew_loop OP##_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, OP) };
/* equal infinities would give inf - inf = NaN: the result is that infinity */
#define BF_logaddexp ((x == y && isinf(x)) ? x : (x > y ? x : y) + log1p(exp(-fabs(x - y))))
#define BF_logaddexp2 ((x == y && isinf(x)) ? x : \
  (x > y ? x : y) + log1p(exp2(-fabs(x - y))) * (TY(x))1.44269504088896340736)
#define BF_xlogy ((y != y) ? y : (x == 0) ? (TY(x))0 : x * log(y))
BF_TABLE(logaddexp) BF_TABLE(logaddexp2) BF_TABLE(xlogy)

#define NA_DEF(E, T, CT, N, OP) EW_BINARY(nextafter_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, nextafter(x, y))
NA_DEF(LT_FLOAT64, double, double, f64, _) NA_DEF(LT_FLOAT32, float, float, f32, _)
static const lt_ew_loop nextafter_tbl[LT_NUM_DTYPES] = { [LT_FLOAT64] = nextafter_f64, [LT_FLOAT32] = nextafter_f32 };

/* fmax / fmin: NaN loses */
#define FM_DEF_F(E, T, CT, N, OP) EW_BINARY(OP##_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, \
  (x != x) ? y : (y != y) ? x : (x CMP_##OP y ? x : y))
#define FM_DEF_I(E, T, CT, N, OP) EW_BINARY(OP##_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, (x CMP_##OP y ? x : y))
#define CMP_fmax >
#define CMP_fmin <
EW_FLOATS(FM_DEF_F, fmax) EW_INTS(FM_DEF_I, fmax) EW_BOOL(FM_DEF_I, fmax)
EW_FLOATS(FM_DEF_F, fmin) EW_INTS(FM_DEF_I, fmin) EW_BOOL(FM_DEF_I, fmin)
static const lt_ew_loop fmax_tbl[LT_NUM_DTYPES] = { EW_ALL(EW_TBL, fmax) };
static const lt_ew_loop fmin_tbl[LT_NUM_DTYPES] = { EW_ALL(EW_TBL, fmin) };

/* gcd / lcm on magnitudes (unsigned, so |INT64_MIN| does not overflow) */
static inline uint64_t ugcd(uint64_t a, uint64_t b) {
  while (b) { uint64_t t = a % b; a = b; b = t; }
  return a;
}
static inline uint64_t uabs(int64_t v) { return v < 0 ? 0 - (uint64_t)v : (uint64_t)v; }
static inline int64_t igcd(int64_t a, int64_t b) { return (int64_t)ugcd(uabs(a), uabs(b)); }
static inline int64_t ilcm(int64_t a, int64_t b) {
  uint64_t g = ugcd(uabs(a), uabs(b));
  return g == 0 ? 0 : (int64_t)(uabs(a) / g * uabs(b));
}
#define GL_DEF(E, T, CT, N, OP) EW_BINARY(OP##_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, \
  (CT)i##OP((int64_t)x, (int64_t)y))
EW_INTS(GL_DEF, gcd) EW_INTS(GL_DEF, lcm)
static const lt_ew_loop gcd_tbl[LT_NUM_DTYPES] = { EW_INTS(EW_TBL, gcd) };
static const lt_ew_loop lcm_tbl[LT_NUM_DTYPES] = { EW_INTS(EW_TBL, lcm) };

#define HV_DEF(E, T, CT, N, OP) EW_BINARY(heavi_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, \
  (x == 0) ? y : (CT)(x > 0))
EW_ALL(HV_DEF, _)
static const lt_ew_loop heavi_tbl[LT_NUM_DTYPES] = { EW_ALL(EW_TBL, heavi) };

/* ---- drivers ---------------------------------------------------------------- */

static lt_tensor *run_ew(const char *op, int nin, lt_tensor *a, lt_tensor *b, lt_tensor *out,
                         const lt_ew_loop *tbl, lt_dtype ct, lt_dtype odt, ew_ctx *c) {
  lt_ew_loop fn = lt_ew_pick(op, tbl, ct);
  if (!fn) return NULL;
  lt_ew e;
  e.op = op; e.nin = nin; e.in[0] = a; e.in[1] = b; e.in_dt[0] = e.in_dt[1] = ct;
  e.out_dt = odt; e.fn = fn; e.ctx = c; e.grain = 0;
  return lt_ew_run(&e, out);
}

static lt_dtype promote_float(lt_tensor *self) {
  lt_dtype dt = (lt_dtype)self->dtype;
  return lt_dtype_is_float(dt) ? dt : lt_get_default_dtype();
}

static lt_dtype rtype2(lt_tensor *a, lt_tensor *b) {
  lt_tensor *ts[2] = {a, b};
  return (lt_dtype)lt_result_type(2, ts);
}

#define SPECIAL(NAME) \
lt_tensor *lt_cpu_##NAME(lt_tensor *self, lt_tensor *out) { \
  return run_ew(#NAME, 1, self, NULL, out, NAME##_tbl, promote_float(self), promote_float(self), NULL); }
SPECIAL(lgamma) SPECIAL(digamma) SPECIAL(i0) SPECIAL(sinc)

lt_tensor *lt_cpu__i1(lt_tensor *self) {
  return run_ew("_i1", 1, self, NULL, NULL, i1_tbl, promote_float(self), promote_float(self), NULL);
}

/* torch.special's: the op's name in errors is its Lua name, special.NAME */
#define SPECIAL_NS(NAME) \
lt_tensor *lt_cpu_special_##NAME(lt_tensor *self, lt_tensor *out) { \
  return run_ew("special." #NAME, 1, self, NULL, out, NAME##_tbl, promote_float(self), promote_float(self), NULL); }
SPECIAL_NS(erfcx) SPECIAL_NS(i0e) SPECIAL_NS(i1e) SPECIAL_NS(ndtr) SPECIAL_NS(ndtri) SPECIAL_NS(log_ndtr)
SPECIAL_NS(entr) SPECIAL_NS(bessel_j0) SPECIAL_NS(bessel_j1) SPECIAL_NS(bessel_y0) SPECIAL_NS(bessel_y1)
SPECIAL_NS(modified_bessel_k0) SPECIAL_NS(modified_bessel_k1) SPECIAL_NS(scaled_modified_bessel_k0)
SPECIAL_NS(scaled_modified_bessel_k1)

lt_tensor *lt_cpu_polygamma(int64_t n, lt_tensor *self, lt_tensor *out) {
  if (n < 0) return lt_error_null("polygamma: argument 'n' must be non-negative, got %lld", (long long)n);
  ew_ctx c = {0};
  c.i[0] = n;
  return run_ew("polygamma", 1, self, NULL, out, polygamma_tbl, promote_float(self), promote_float(self), &c);
}

/* a bool tensor of self's shape filled with v (predicates of integer tensors) */
static lt_tensor *bool_const(const char *op, lt_tensor *self, lt_tensor *out, bool v) {
  lt_tensor *r = lt_meta_result(op, out, LT_BOOL, lt_tensor_device(self), self->ndim, self->sizes);
  if (!r) return NULL;
  if (lt_tensor_fill_(r, lt_scalar_bool(v)) < 0) { lt_tensor_release(r); return NULL; }
  return r;
}

lt_tensor *lt_cpu_signbit(lt_tensor *self, lt_tensor *out) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (dt == LT_BOOL || dt == LT_UINT8) return bool_const("signbit", self, out, false);
  return run_ew("signbit", 1, self, NULL, out, signbit_tbl, dt, LT_BOOL, NULL);
}
lt_tensor *lt_cpu_isposinf(lt_tensor *self, lt_tensor *out) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (!lt_dtype_is_float(dt)) return bool_const("isposinf", self, out, false);
  return run_ew("isposinf", 1, self, NULL, out, posinf_tbl, dt, LT_BOOL, NULL);
}
lt_tensor *lt_cpu_isneginf(lt_tensor *self, lt_tensor *out) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (!lt_dtype_is_float(dt)) return bool_const("isneginf", self, out, false);
  return run_ew("isneginf", 1, self, NULL, out, neginf_tbl, dt, LT_BOOL, NULL);
}

/* ops defined for floating point results only: integer operands are an error */
static lt_tensor *float_binary(const char *op, lt_tensor *a, lt_tensor *b, lt_tensor *out, const lt_ew_loop *tbl) {
  lt_dtype dt = rtype2(a, b);
  if (!lt_dtype_is_float(dt))
    return lt_error_null("%s: arguments 'self' and 'other' must include a floating point tensor, got %s",
                         op, lt_dtype_name(dt));
  return run_ew(op, 2, a, b, out, tbl, dt, dt, NULL);
}

/* integer and bool operands compute in the default float dtype (PyTorch 1.13
** has no integer kernel; this is the superset the other math ops follow) */
static lt_tensor *promoting_binary(const char *op, lt_tensor *a, lt_tensor *b, lt_tensor *out, const lt_ew_loop *tbl) {
  lt_dtype dt = rtype2(a, b);
  if (!lt_dtype_is_float(dt)) dt = lt_get_default_dtype();
  return run_ew(op, 2, a, b, out, tbl, dt, dt, NULL);
}
lt_tensor *lt_cpu_logaddexp(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  return promoting_binary("logaddexp", self, other, out, logaddexp_tbl);
}
lt_tensor *lt_cpu_logaddexp2(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  return promoting_binary("logaddexp2", self, other, out, logaddexp2_tbl);
}
lt_tensor *lt_cpu_nextafter(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  return float_binary("nextafter", self, other, out, nextafter_tbl);
}

lt_tensor *lt_cpu_xlogy(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  return promoting_binary("xlogy", self, other, out, xlogy_tbl);
}

/* the special functions of two arguments: lt_cpu_FN, the op LUA in errors */
#define SPECIAL2(FN, LUA, TBL) \
lt_tensor *lt_cpu_##FN(lt_tensor *self, lt_tensor *other, lt_tensor *out) { \
  return promoting_binary(LUA, self, other, out, TBL); }
SPECIAL2(special_xlog1py, "special.xlog1py", xlog1py_tbl) SPECIAL2(special_zeta, "special.zeta", zeta_tbl)
SPECIAL2(igamma, "igamma", igamma_tbl) SPECIAL2(igammac, "igammac", igammac_tbl)

lt_tensor *lt_cpu_fmax(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  lt_dtype dt = rtype2(self, other);
  return run_ew("fmax", 2, self, other, out, fmax_tbl, dt, dt, NULL);
}
lt_tensor *lt_cpu_fmin(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  lt_dtype dt = rtype2(self, other);
  return run_ew("fmin", 2, self, other, out, fmin_tbl, dt, dt, NULL);
}

static lt_tensor *int_binary(const char *op, lt_tensor *a, lt_tensor *b, lt_tensor *out, const lt_ew_loop *tbl) {
  lt_dtype dt = rtype2(a, b);
  if (lt_dtype_is_float(dt) || dt == LT_BOOL) {
    const char *which = (lt_dtype_is_float((lt_dtype)a->dtype) || a->dtype == LT_BOOL) ? "self" : "other";
    return lt_error_null("%s: argument '%s' must be an integer tensor, got %s", op, which, lt_dtype_name(dt));
  }
  return run_ew(op, 2, a, b, out, tbl, dt, dt, NULL);
}
lt_tensor *lt_cpu_gcd(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  return int_binary("gcd", self, other, out, gcd_tbl);
}
lt_tensor *lt_cpu_lcm(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  return int_binary("lcm", self, other, out, lcm_tbl);
}

lt_tensor *lt_cpu_heaviside(lt_tensor *self, lt_tensor *values, lt_tensor *out) {
  lt_dtype dt = (lt_dtype)self->dtype;
  /* a Lua number takes self's dtype; tensors must match, as in PyTorch */
  if (!values->is_wrapped_number && values->dtype != self->dtype)
    return lt_error_null("heaviside: argument 'values' must have the dtype of 'self' (%s), got %s",
                         lt_dtype_name(dt), lt_dtype_name((lt_dtype)values->dtype));
  return run_ew("heaviside", 2, self, values, out, heavi_tbl, dt, dt, NULL);
}

/* ---- isin ------------------------------------------------------------------- */

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  if (x != x || y != y) return (x != x) - (y != y);   /* NaN last: the order must be total */
  return (x > y) - (x < y);
}
static int cmp_i(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

typedef struct isin_ctx { void *tv, *ev; bool *o; int64_t m; bool invert, isf; } isin_ctx;

static void isin_range(void *ctx, int64_t begin, int64_t end) {
  isin_ctx *c = (isin_ctx *)ctx;
  int64_t m = c->m;
  for (int64_t i = begin; i < end; i++) {
    int64_t lo = 0, hi = m;
    bool found;
    if (c->isf) {
      const double *tv = (const double *)c->tv, v = ((const double *)c->ev)[i];
      while (lo < hi) { int64_t mid = lo + (hi - lo) / 2; if (tv[mid] < v) lo = mid + 1; else hi = mid; }
      found = lo < m && tv[lo] == v;
    } else {
      const int64_t *tv = (const int64_t *)c->tv, v = ((const int64_t *)c->ev)[i];
      while (lo < hi) { int64_t mid = lo + (hi - lo) / 2; if (tv[mid] < v) lo = mid + 1; else hi = mid; }
      found = lo < m && tv[lo] == v;
    }
    c->o[i] = found != c->invert;
  }
}

/* Compares in the promoted dtype: floating types through double (exact for
** every float dtype), integer types through int64. The test values are sorted
** once and every element is a binary search. */
lt_tensor *lt_cpu_isin(lt_tensor *elements, lt_tensor *test_elements, bool assume_unique, bool invert) {
  lt_dtype dt = rtype2(elements, test_elements);
  bool isf = lt_dtype_is_float(dt);
  lt_dtype wd = isf ? LT_FLOAT64 : LT_INT64;
  lt_tensor *e = lt_tensor_clone_as(elements, wd);
  lt_tensor *t = e ? lt_tensor_clone_as(test_elements, wd) : NULL;
  lt_tensor *r = t ? lt_tensor_new(LT_BOOL, lt_tensor_device(elements), elements->ndim, elements->sizes) : NULL;
  if (!r) { lt_tensor_release(e); lt_tensor_release(t); return NULL; }
  isin_ctx c;
  c.m = t->numel; c.invert = invert; c.isf = isf;
  c.tv = lt_tensor_data(t); c.ev = lt_tensor_data(e); c.o = (bool *)lt_tensor_data(r);
  /* NaN never matches: where it sorts does not matter */
  qsort(c.tv, (size_t)c.m, isf ? sizeof(double) : sizeof(int64_t), isf ? cmp_d : cmp_i);
  lt_parallel_for(e->numel, LT_GRAIN_ELEMENTWISE / 8, isin_range, &c);
  lt_tensor_release(e);
  lt_tensor_release(t);
  return r;
}

/* ---- logcumsumexp ----------------------------------------------------------- */

typedef struct lcse_ctx { double *p; int64_t len, inner; } lcse_ctx;

/* lines [begin, end) of the (outer * inner) lines along the scanned dim */
static void lcse_range(void *ctx, int64_t begin, int64_t end) {
  lcse_ctx *c = (lcse_ctx *)ctx;
  for (int64_t line = begin; line < end; line++) {
    int64_t o = line / c->inner, in = line % c->inner;
    double *q = c->p + o * c->len * c->inner + in, acc = -INFINITY;
    for (int64_t k = 0; k < c->len; k++) {
      double v = q[k * c->inner];
      if (v != v || acc != acc) acc = NAN;
      else if (!(acc == v && isinf(v))) {   /* equal infinities: inf - inf would be NaN */
        double mx = acc > v ? acc : v;
        acc = mx + log1p(exp(-fabs(acc - v)));
      }
      q[k * c->inner] = acc;
    }
  }
}

/* running logaddexp along dim, in double, over a contiguous copy */
lt_tensor *lt_cpu_logcumsumexp(lt_tensor *self, int64_t dim) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (!lt_dtype_is_float(dt))
    return lt_error_null("logcumsumexp: argument 'self' must be a floating point tensor, got %s", lt_dtype_name(dt));
  int d = lt_wrap_dim("logcumsumexp", dim, self->ndim);
  if (d < 0) return NULL;
  lt_tensor *x = lt_tensor_clone_as(self, LT_FLOAT64);
  if (!x) return NULL;
  int64_t len = self->ndim ? self->sizes[d] : 1, inner = 1, outer = 1;
  for (int i = 0; i < self->ndim; i++) {
    if (i < d) outer *= self->sizes[i];
    else if (i > d) inner *= self->sizes[i];
  }
  lcse_ctx c = { (double *)lt_tensor_data(x), len, inner };
  int64_t grain = LT_GRAIN_ELEMENTWISE / (len > 0 ? len : 1);
  lt_parallel_for(outer * inner, grain > 0 ? grain : 1, lcse_range, &c);
  if (dt == LT_FLOAT64) return x;
  lt_tensor *r = lt_tensor_clone_as(x, dt);
  lt_tensor_release(x);
  return r;
}

/* ---- searchsorted, bucketize ------------------------------------------------ */

/* first position in v[0..n) (read through the 1-based permutation srt when
** given) where v >= x (v > x when right); written as "move right while not",
** so NaN values (sorted last) and a NaN x go to the end */
#define SEARCH(T, v, n, x, right, srt) ({ \
  int64_t lo_ = 0, hi_ = (n); \
  while (lo_ < hi_) { \
    int64_t mid_ = lo_ + (hi_ - lo_) / 2; \
    T m_ = (v)[(srt) ? (srt)[mid_] - 1 : mid_]; \
    if ((right) ? !(m_ > (x)) : !(m_ >= (x))) lo_ = mid_ + 1; else hi_ = mid_; \
  } lo_; })

typedef struct search_ctx {
  const void *s, *x;
  void *r;
  const int64_t *srt;
  int64_t n, per;   /* per: values per row of a batched sequence, 0 for a 1-D sequence */
  bool isf, right, out_int32;
} search_ctx;

static void search_range(void *ctx, int64_t begin, int64_t end) {
  search_ctx *c = (search_ctx *)ctx;
  int64_t n = c->n;
  for (int64_t i = begin; i < end; i++) {
    int64_t row = c->per ? i / c->per : 0, pos;
    const int64_t *srt = c->srt ? c->srt + row * n : NULL;
    if (c->isf) {
      const double *v = (const double *)c->s + row * n;
      double xv = ((const double *)c->x)[i];
      pos = SEARCH(double, v, n, xv, c->right, srt);
    } else {
      const int64_t *v = (const int64_t *)c->s + row * n;
      int64_t xv = ((const int64_t *)c->x)[i];
      pos = SEARCH(int64_t, v, n, xv, c->right, srt);
    }
    if (c->out_int32) ((int32_t *)c->r)[i] = (int32_t)(pos + 1);
    else ((int64_t *)c->r)[i] = pos + 1;
  }
}

static lt_tensor *search_impl(const char *op, const char *seq_name, lt_tensor *seq, lt_tensor *input,
                              bool out_int32, bool right, lt_tensor *sorter) {
  if (lt_meta_search_check(op, seq_name, seq, input, sorter) < 0) return NULL;
  int64_t n = seq->sizes[seq->ndim - 1];
  /* compared in the promoted type: double when either side is floating */
  bool isf = lt_dtype_is_float((lt_dtype)seq->dtype) || lt_dtype_is_float((lt_dtype)input->dtype);
  lt_dtype wd = isf ? LT_FLOAT64 : LT_INT64;
  lt_tensor *s = lt_tensor_clone_as(seq, wd);
  lt_tensor *x = s ? lt_tensor_clone_as(input, wd) : NULL;
  lt_tensor *so = (x && sorter) ? lt_tensor_contiguous(sorter) : NULL;
  lt_tensor *r = (x && (!sorter || so)) ?
    lt_tensor_new(out_int32 ? LT_INT32 : LT_INT64, lt_tensor_device(input), input->ndim, input->sizes) : NULL;
  if (!r) { lt_tensor_release(s); lt_tensor_release(x); lt_tensor_release(so); return NULL; }
  const int64_t *sv = so ? (const int64_t *)lt_tensor_data(so) : NULL;
  int64_t per = input->ndim == 0 ? 1 : input->sizes[input->ndim - 1];
  if (sv) {   /* sorter values index the sequence: check them once */
    for (int64_t i = 0; i < sorter->numel; i++)
      if (sv[i] < 1 || sv[i] > n) {
        int64_t bad = sv[i];
        lt_tensor_release(s); lt_tensor_release(x); lt_tensor_release(so); lt_tensor_release(r);
        lt_meta_sorter_range(op, bad, n);
        return NULL;
      }
  }
  search_ctx c = { lt_tensor_data(s), lt_tensor_data(x), lt_tensor_data(r), sv, n, seq->ndim == 1 ? 0 : (per ? per : 1),
                    isf, right, out_int32 };
  lt_parallel_for(x->numel, LT_GRAIN_ELEMENTWISE / 8, search_range, &c);
  lt_tensor_release(s); lt_tensor_release(x); lt_tensor_release(so);
  return r;
}

lt_tensor *lt_cpu_searchsorted(lt_tensor *sorted_sequence, lt_tensor *input, bool out_int32, bool right,
                               const char *side, lt_tensor *sorter) {
  if (lt_meta_search_side("searchsorted", side, &right) < 0) return NULL;
  return search_impl("searchsorted", "sorted_sequence", sorted_sequence, input, out_int32, right, sorter);
}

lt_tensor *lt_cpu_bucketize(lt_tensor *self, lt_tensor *boundaries, bool out_int32, bool right) {
  if (boundaries->ndim != 1)
    return lt_error_null("bucketize: argument 'boundaries' must be 1-D, got %d dims", boundaries->ndim);
  return search_impl("bucketize", "boundaries", boundaries, self, out_int32, right, NULL);
}

/* ---- bincount, histc -------------------------------------------------------- */

lt_tensor *lt_cpu_bincount(lt_tensor *self, lt_tensor *weights, int64_t minlength) {
  if (lt_meta_bincount_check(self, weights, minlength) < 0) return NULL;
  lt_tensor *xi = lt_tensor_clone_as(self, LT_INT64);
  if (!xi) return NULL;
  const int64_t *xv = (const int64_t *)lt_tensor_data(xi);
  int64_t n = xi->numel, mx = -1;
  for (int64_t i = 0; i < n; i++) {
    if (xv[i] < 0) {
      int64_t v = xv[i];
      lt_tensor_release(xi);
      lt_meta_bincount_negative(v);
      return NULL;
    }
    if (xv[i] > mx) mx = xv[i];
  }
  int64_t len = mx + 1 > minlength ? mx + 1 : minlength;
  /* float32 weights count in float32, every other weight dtype in float64 (as PyTorch) */
  lt_dtype odt = !weights ? LT_INT64 : weights->dtype == LT_FLOAT32 ? LT_FLOAT32 : LT_FLOAT64;
  lt_tensor *w = weights ? lt_tensor_clone_as(weights, odt) : NULL;
  lt_tensor *r = (!weights || w) ? lt_tensor_new_zeros(odt, lt_tensor_device(self), 1, &len) : NULL;
  if (r) {
    if (!weights) {
      int64_t *o = (int64_t *)lt_tensor_data(r);
      for (int64_t i = 0; i < n; i++) o[xv[i]] += 1;
    } else if (odt == LT_FLOAT32) {
      float *o = (float *)lt_tensor_data(r);
      const float *wv = (const float *)lt_tensor_data(w);
      for (int64_t i = 0; i < n; i++) o[xv[i]] += wv[i];
    } else {
      double *o = (double *)lt_tensor_data(r);
      const double *wv = (const double *)lt_tensor_data(w);
      for (int64_t i = 0; i < n; i++) o[xv[i]] += wv[i];
    }
  }
  lt_tensor_release(xi);
  lt_tensor_release(w);
  return r;
}

lt_tensor *lt_cpu_histc(lt_tensor *self, int64_t bins, lt_scalar min, lt_scalar max, lt_tensor *out) {
  lt_dtype dt = (lt_dtype)self->dtype;
  double lo = lt_scalar_to_double(min), hi = lt_scalar_to_double(max);
  if (lt_meta_histc_check(self, bins, lo, hi) < 0) return NULL;
  lt_tensor *x = lt_tensor_clone_as(self, LT_FLOAT64);
  if (!x) return NULL;
  const double *v = (const double *)lt_tensor_data(x);
  int64_t n = x->numel;
  if (lo == hi && n > 0) {   /* the data's range; a NaN makes it NaN (an error below), as in PyTorch */
    lo = hi = v[0];
    for (int64_t i = 0; i < n; i++) {
      if (v[i] != v[i]) { lo = hi = NAN; break; }
      if (v[i] < lo) lo = v[i];
      if (v[i] > hi) hi = v[i];
    }
  }
  if (lo == hi) { lo -= 1; hi += 1; }
  if (!isfinite(lo) || !isfinite(hi)) {
    lt_tensor_release(x);
    lt_meta_histc_range(lo, hi);
    return NULL;
  }
  double *cnt = calloc((size_t)bins, sizeof(double));
  if (!cnt) { lt_tensor_release(x); return lt_error_null("histc: out of memory"); }
  for (int64_t i = 0; i < n; i++) {
    double e = v[i];
    if (e < lo || e > hi) continue;
    /* NaN lands in the first bin, as PyTorch 1.13 counts it */
    int64_t b = e != e ? 0 : (int64_t)((e - lo) * (double)bins / (hi - lo));
    if (b >= bins) b = bins - 1;
    cnt[b] += 1;
  }
  lt_tensor_release(x);
  lt_tensor *r = lt_tensor_new(LT_FLOAT64, lt_tensor_device(self), 1, &bins);
  if (r) memcpy(lt_tensor_data(r), cnt, (size_t)bins * sizeof(double));
  free(cnt);
  if (!r) return NULL;
  lt_tensor *res;
  if (out) {
    res = (lt_tensor_resize_out("histc", out, 1, &bins) < 0 || lt_tensor_copy_(out, r) < 0) ? NULL : out;
    if (res) lt_tensor_retain(res);
  } else {
    res = lt_tensor_clone_as(r, dt);
  }
  lt_tensor_release(r);
  return res;
}
