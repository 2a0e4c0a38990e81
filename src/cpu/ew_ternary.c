/*
** ew_ternary.c — elementwise ops of several tensors: where, clamp with
** tensor or number bounds, lerp, addcmul, addcdiv; and the closeness tests
** isclose, allclose, equal.
*/
#include <tgmath.h>
#include "cpu/ew.h"
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */

#define TY(x) __typeof__(x)

/* ---- where: selection only moves bytes, so one loop per element size ----
** SEL picks without a branch (a mask from the 0/1 condition) so the loops vectorise: a
** branch mispredicts on every other element of a random mask such as ReLU's backward. */
#define SEL_INT(T, c, a, b) ((T)(((a) & (T)-(T)(c)) | ((b) & (T)~(T)-(T)(c))))
#define SEL_ANY(T, c, a, b) ((c) ? (a) : (b))
#define WHERE_DEF(NAME, T, SEL) \
static void NAME(char **d_, const int64_t *s_, int64_t n_, void *ctx_) { \
  (void)ctx_; \
  const int64_t et_ = (int64_t)sizeof(T); \
  if (s_[0] == et_ && s_[1] == 1) { \
    T *o_ = (T *)d_[0]; const uint8_t *c_ = (const uint8_t *)d_[1];   /* bools: 0 or 1 */ \
    const T *a_ = (const T *)d_[2], *b_ = (const T *)d_[3]; \
    if (s_[2] == et_ && s_[3] == et_) { \
      EW_IVDEP for (int64_t i_ = 0; i_ < n_; i_++) o_[i_] = SEL(T, c_[i_], a_[i_], b_[i_]); return; } \
    if (s_[2] == et_ && s_[3] == 0) { const T b0_ = b_[0]; \
      EW_IVDEP for (int64_t i_ = 0; i_ < n_; i_++) o_[i_] = SEL(T, c_[i_], a_[i_], b0_); return; } \
    if (s_[2] == 0 && s_[3] == et_) { const T a0_ = a_[0]; \
      EW_IVDEP for (int64_t i_ = 0; i_ < n_; i_++) o_[i_] = SEL(T, c_[i_], a0_, b_[i_]); return; } \
    if (s_[2] == 0 && s_[3] == 0) { const T a0_ = a_[0], b0_ = b_[0]; \
      EW_IVDEP for (int64_t i_ = 0; i_ < n_; i_++) o_[i_] = SEL(T, c_[i_], a0_, b0_); return; } \
  } \
  for (int64_t i_ = 0; i_ < n_; i_++) { \
    bool c_ = *(const bool *)(d_[1] + i_ * s_[1]); \
    *(T *)(d_[0] + i_ * s_[0]) = *(const T *)(c_ ? d_[2] + i_ * s_[2] : d_[3] + i_ * s_[3]); \
  } \
}
typedef struct { uint64_t lo, hi; } where_bytes16;   /* complex128 */
WHERE_DEF(where16, where_bytes16, SEL_ANY) WHERE_DEF(where8, uint64_t, SEL_INT)
WHERE_DEF(where4, uint32_t, SEL_INT) WHERE_DEF(where2, uint16_t, SEL_INT) WHERE_DEF(where1, uint8_t, SEL_INT)

/* ---- clamp: NaN in the input or a bound gives NaN ---- */
#define CMIN_F(x, lo) ((x < lo || lo != lo) ? lo : x)
#define CMAX_F(x, hi) ((x > hi || hi != hi) ? hi : x)
#define CMIN_I(x, lo) (x < lo ? lo : x)
#define CMAX_I(x, hi) (x > hi ? hi : x)
#define CLAMP_F(E, T, CT, N, X) \
  EW_TERNARY(clamp_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, ({ CT t_ = CMIN_F(x, y); CMAX_F(t_, z); })) \
  EW_BINARY(cmin_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, CMIN_F(x, y)) \
  EW_BINARY(cmax_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, CMAX_F(x, y))
#define CLAMP_I(E, T, CT, N, X) \
  EW_TERNARY(clamp_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, ({ CT t_ = CMIN_I(x, y); CMAX_I(t_, z); })) \
  EW_BINARY(cmin_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, CMIN_I(x, y)) \
  EW_BINARY(cmax_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, CMAX_I(x, y))
EW_FLOATS(CLAMP_F, _) EW_INTS(CLAMP_I, _)
static const lt_ew_loop clamp_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, clamp) EW_INTS(EW_TBL, clamp) };
static const lt_ew_loop cmin_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, cmin) EW_INTS(EW_TBL, cmin) };
static const lt_ew_loop cmax_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, cmax) EW_INTS(EW_TBL, cmax) };

/* ---- lerp (the two-sided form keeps lerp(a, b, 1) == b exactly) ---- */
#define LERP_F(E, T, CT, N, X) EW_TERNARY(lerp_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, \
  fabs(z) < (CT)0.5 ? x + z * (y - x) : y - (y - x) * ((CT)1 - z))
EW_FLOATS(LERP_F, _)
static const lt_ew_loop lerp_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, lerp) };

/* ---- addcmul / addcdiv: value in ctx slot 0 ---- */
#define ADDC_F(E, T, CT, N, X) \
  EW_TERNARY(addcmul_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, x + EW_C(CT, 0) * y * z) \
  EW_TERNARY(addcdiv_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, x + EW_C(CT, 0) * y / z)
#define ADDC_I(E, T, CT, N, X) EW_TERNARY(addcmul_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, \
  (CT)((UT_##N)x + (UT_##N)EW_C(CT, 0) * (UT_##N)y * (UT_##N)z))
EW_FLOATS(ADDC_F, _) EW_INTS(ADDC_I, _)
static const lt_ew_loop addcmul_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, addcmul) EW_INTS(EW_TBL, addcmul) };
static const lt_ew_loop addcdiv_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, addcdiv) };

/* ---- isclose: f[0] rtol, f[1] atol, mode equal_nan ---- */
#define ISCLOSE_F(E, T, CT, N, X) EW_BINARY(isclose_##N, T, CT, LD_##N, bool, ST_BOOL, EW_CTXDECL, \
  x == y || (c_->mode && x != x && y != y) || \
  ({ CT d_ = fabs(x - y); d_ == d_ && d_ != (CT)INFINITY && d_ <= (CT)c_->f[1] + fabs((CT)c_->f[0] * y); }))
EW_FLOATS(ISCLOSE_F, _)
/* complex: |x - y| and |y| are moduli; NaN in either part makes an element NaN, and
** with equal_nan two such elements are close (PyTorch's rule) */
#define CX_ISNAN(v) (creal(v) != creal(v) || cimag(v) != cimag(v))
#define ISCLOSE_CX(E, T, CT, N, X) EW_BINARY(isclose_##N, T, CT, LD_##N, bool, ST_BOOL, EW_CTXDECL, \
  x == y || (c_->mode && CX_ISNAN(x) && CX_ISNAN(y)) || \
  ({ __typeof__(creal(x)) d_ = fabs(x - y); \
     d_ == d_ && d_ != INFINITY && d_ <= (__typeof__(d_))c_->f[1] + (__typeof__(d_))c_->f[0] * fabs(y); }))
EW_COMPLEX(ISCLOSE_CX, _)
static const lt_ew_loop isclose_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, isclose) EW_COMPLEX(EW_TBL, isclose) };

/* ---- drivers ------------------------------------------------------------ */

static lt_tensor *run(const char *op, int nin, lt_tensor **in, const lt_dtype *in_dt, lt_dtype odt,
                      lt_ew_loop fn, void *ctx, lt_tensor *out) {
  lt_ew e;
  e.op = op; e.nin = nin;
  for (int k = 0; k < nin; k++) { e.in[k] = in[k]; e.in_dt[k] = in_dt[k]; }
  e.out_dt = odt; e.fn = fn; e.ctx = ctx; e.grain = 0;
  return lt_ew_run(&e, out);
}

lt_tensor *lt_cpu_where(lt_tensor *condition, lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  if (condition->dtype != LT_BOOL && condition->dtype != LT_UINT8)
    return lt_error_null("where: argument 'condition' must be a bool tensor, got %s",
                         lt_dtype_name((lt_dtype)condition->dtype));
  lt_tensor *ts[2] = {self, other};
  lt_dtype dt = (lt_dtype)lt_result_type(2, ts);
  lt_ew_loop fn;
  switch (lt_dtype_size(dt)) {
    case 16: fn = where16; break;
    case 8: fn = where8; break;
    case 4: fn = where4; break;
    case 2: fn = where2; break;
    default: fn = where1; break;
  }
  lt_tensor *in[3] = {condition, self, other};
  lt_dtype idt[3] = {LT_BOOL, dt, dt};
  return run("where", 3, in, idt, dt, fn, NULL, out);
}

lt_tensor *lt_cpu_clamp(lt_tensor *self, lt_tensor *min, lt_tensor *max, lt_tensor *out) {
  if (!min && !max) return lt_error_null("clamp: at least one of 'min' and 'max' must be given");
  lt_tensor *ts[3] = {self, min, max};
  lt_dtype dt = (lt_dtype)lt_result_type(3, ts);
  if (dt == LT_BOOL) return lt_error_null("clamp: not implemented for bool tensors");
  const lt_ew_loop *tbl = min && max ? clamp_tbl : min ? cmin_tbl : cmax_tbl;
  lt_ew_loop fn = lt_ew_pick("clamp", tbl, dt);
  if (!fn) return NULL;
  lt_tensor *in[3] = {self, min ? min : max, max};
  lt_dtype idt[3] = {dt, dt, dt};
  return run("clamp", min && max ? 3 : 2, in, idt, dt, fn, NULL, out);
}

static lt_tensor *clamp_one(const char *op, lt_tensor *self, lt_tensor *bound, const lt_ew_loop *tbl, lt_tensor *out) {
  lt_tensor *ts[2] = {self, bound};
  lt_dtype dt = (lt_dtype)lt_result_type(2, ts);
  if (dt == LT_BOOL) return lt_error_null("%s: not implemented for bool tensors", op);
  lt_ew_loop fn = lt_ew_pick(op, tbl, dt);
  if (!fn) return NULL;
  lt_tensor *in[2] = {self, bound};
  lt_dtype idt[2] = {dt, dt};
  return run(op, 2, in, idt, dt, fn, NULL, out);
}

lt_tensor *lt_cpu_clamp_min(lt_tensor *self, lt_tensor *min, lt_tensor *out) {
  return clamp_one("clamp_min", self, min, cmin_tbl, out);
}

lt_tensor *lt_cpu_clamp_max(lt_tensor *self, lt_tensor *max, lt_tensor *out) {
  return clamp_one("clamp_max", self, max, cmax_tbl, out);
}

lt_tensor *lt_cpu_lerp(lt_tensor *self, lt_tensor *end, lt_tensor *weight, lt_tensor *out) {
  lt_tensor *ts[3] = {self, end, weight};
  lt_dtype dt = (lt_dtype)lt_result_type(3, ts);
  if (!lt_dtype_is_float(dt))
    return lt_error_null("lerp: arguments must be floating point tensors, got %s", lt_dtype_name(dt));
  lt_tensor *in[3] = {self, end, weight};
  lt_dtype idt[3] = {dt, dt, dt};
  return run("lerp", 3, in, idt, dt, lerp_tbl[dt], NULL, out);
}

static lt_tensor *addc(const char *op, lt_tensor *self, lt_tensor *t1, lt_tensor *t2, lt_scalar value,
                       const lt_ew_loop *tbl, lt_tensor *out) {
  lt_tensor *ts[3] = {self, t1, t2};
  lt_dtype dt = (lt_dtype)lt_result_type(3, ts);
  if (tbl == addcdiv_tbl && !lt_dtype_is_float(dt))
    return lt_error_null("addcdiv: integer division is not supported (got %s tensors); use floor_divide",
                         lt_dtype_name(dt));
  if (!lt_dtype_is_float(dt) && value.type == LT_SCALAR_FLOAT)
    return lt_error_null("%s: argument 'value' must be an integer for integral tensors, got %g", op, value.v.f);
  lt_ew_loop fn = lt_ew_pick(op, tbl, dt);
  if (!fn) return NULL;
  ew_ctx c = {0};
  ew_ctx_set(&c, 0, value);
  lt_tensor *in[3] = {self, t1, t2};
  lt_dtype idt[3] = {dt, dt, dt};
  return run(op, 3, in, idt, dt, fn, &c, out);
}

lt_tensor *lt_cpu_addcmul(lt_tensor *self, lt_tensor *tensor1, lt_tensor *tensor2, lt_scalar value, lt_tensor *out) {
  return addc("addcmul", self, tensor1, tensor2, value, addcmul_tbl, out);
}

lt_tensor *lt_cpu_addcdiv(lt_tensor *self, lt_tensor *tensor1, lt_tensor *tensor2, lt_scalar value, lt_tensor *out) {
  return addc("addcdiv", self, tensor1, tensor2, value, addcdiv_tbl, out);
}

static lt_tensor *isclose_impl(const char *op, lt_tensor *self, lt_tensor *other, double rtol, double atol,
                               bool equal_nan) {
  if (rtol < 0) return lt_error_null("%s: argument 'rtol' must be non-negative, got %g", op, rtol);
  if (atol < 0) return lt_error_null("%s: argument 'atol' must be non-negative, got %g", op, atol);
  lt_tensor *ts[2] = {self, other};
  lt_dtype dt = (lt_dtype)lt_result_type(2, ts);
  if (!lt_dtype_is_float(dt) && !lt_dtype_is_complex(dt)) dt = LT_FLOAT64;   /* integers compare exactly in float64 */
  ew_ctx c = {0};
  c.f[0] = rtol; c.f[1] = atol; c.mode = equal_nan;
  lt_tensor *in[2] = {self, other};
  lt_dtype idt[2] = {dt, dt};
  return run(op, 2, in, idt, LT_BOOL, isclose_tbl[dt], &c, NULL);
}

lt_tensor *lt_cpu_isclose(lt_tensor *self, lt_tensor *other, double rtol, double atol, bool equal_nan) {
  return isclose_impl("isclose", self, other, rtol, atol, equal_nan);
}

/* 1 when every element of a bool tensor is true */
static int all_true(lt_tensor *b) {
  lt_tensor *c = lt_tensor_contiguous(b);
  if (!c) return -1;
  int r = c->numel == 0 || memchr(lt_tensor_data(c), 0, (size_t)c->numel) == NULL;
  lt_tensor_release(c);
  return r;
}

int lt_cpu_allclose(lt_tensor *self, lt_tensor *other, double rtol, double atol, bool equal_nan) {
  lt_tensor *r = isclose_impl("allclose", self, other, rtol, atol, equal_nan);
  if (!r) return -1;
  int ok = all_true(r);
  lt_tensor_release(r);
  return ok;
}

lt_tensor *lt_ew_eq_bool(const char *op, lt_tensor *a, lt_tensor *b);

int lt_cpu_equal(lt_tensor *self, lt_tensor *other) {
  if (!lt_tensor_same_shape(self, other)) return 0;
  lt_tensor *r = lt_ew_eq_bool("equal", self, other);
  if (!r) return -1;
  int ok = all_true(r);
  lt_tensor_release(r);
  return ok;
}
