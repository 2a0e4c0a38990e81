/*
** ew_binary.c — binary elementwise kernels: arithmetic, comparisons,
** logical and bitwise ops. Loops come from the templates in ew.h, one per
** dtype; the driver (iter.c) does broadcasting, promotion and out=.
*/
#include <tgmath.h>
#include "cpu/ew.h"
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */

lt_ew_loop lt_ew_pick(const char *op, const lt_ew_loop *tbl, lt_dtype dt) {
  lt_ew_loop fn = tbl[dt];
  if (!fn) lt_error("%s: not implemented for %s tensors", op, lt_dtype_name(dt));
  return fn;
}

/* ---- loops ---------------------------------------------------------------- */

#define WRAP(N, op, x, y) ((__typeof__(x))((UT_##N)(x) op (UT_##N)(y)))

/* add / sub with alpha (ctx f[0]/i[0]) */
#define DEF_ADD_F(E, T, CT, N, X) EW_BINARY(add_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, x + EW_C(CT, 0) * y)
#define DEF_ADD_I(E, T, CT, N, X) \
  EW_BINARY(add_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, (CT)((UT_##N)x + (UT_##N)EW_C(CT, 0) * (UT_##N)y))
#define DEF_ADD_B(E, T, CT, N, X) EW_BINARY(add_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, x | (c_->i[0] != 0 && y))
/* complex: alpha may be complex, f[0] + i f[1] (f[1] is 0 for a real alpha) */
#define EW_CALPHA(CT) ((CT)c_->f[0] + (CT)c_->f[1] * (CT)_Complex_I)
#define DEF_ADD_C(E, T, CT, N, X) EW_BINARY(add_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, x + EW_CALPHA(CT) * y)
EW_FLOATS(DEF_ADD_F, _) EW_INTS(DEF_ADD_I, _) EW_BOOL(DEF_ADD_B, _) EW_COMPLEX(DEF_ADD_C, _)
static const lt_ew_loop add_tbl[LT_NUM_DTYPES] = { EW_ALL(EW_TBL, add) EW_COMPLEX(EW_TBL, add) };

#define DEF_SUB_F(E, T, CT, N, X) EW_BINARY(sub_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, x - EW_C(CT, 0) * y)
#define DEF_SUB_I(E, T, CT, N, X) \
  EW_BINARY(sub_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, (CT)((UT_##N)x - (UT_##N)EW_C(CT, 0) * (UT_##N)y))
#define DEF_SUB_C(E, T, CT, N, X) EW_BINARY(sub_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, x - EW_CALPHA(CT) * y)
EW_FLOATS(DEF_SUB_F, _) EW_INTS(DEF_SUB_I, _) EW_COMPLEX(DEF_SUB_C, _)
static const lt_ew_loop sub_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, sub) EW_INTS(EW_TBL, sub) EW_COMPLEX(EW_TBL, sub) };

#define DEF_MUL_F(E, T, CT, N, X) EW_BINARY(mul_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, x * y)
#define DEF_MUL_I(E, T, CT, N, X) EW_BINARY(mul_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, (CT)((UT_##N)x * (UT_##N)y))
#define DEF_MUL_B(E, T, CT, N, X) EW_BINARY(mul_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, x & y)
EW_FLOATS(DEF_MUL_F, _) EW_INTS(DEF_MUL_I, _) EW_BOOL(DEF_MUL_B, _) EW_COMPLEX(DEF_MUL_F, _)
static const lt_ew_loop mul_tbl[LT_NUM_DTYPES] = { EW_ALL(EW_TBL, mul) EW_COMPLEX(EW_TBL, mul) };

#define DEF_DIV_F(E, T, CT, N, X) EW_BINARY(div_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, x / y)
EW_FLOATS(DEF_DIV_F, _) EW_COMPLEX(DEF_DIV_F, _)
static const lt_ew_loop div_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, div) EW_COMPLEX(EW_TBL, div) };

/* integer quotient and remainder: division by zero flags the context (the
** caller raises); x / -1 is negation, done wrapping (INT_MIN / -1 overflows) */
#define IDIV(N, x, y) ((y) == 0 ? (EW_SETERR(c_), (__typeof__(x))0) : \
  EW_EQM1(y) ? (__typeof__(x))(0 - (UT_##N)(x)) : (__typeof__(x))((x) / (y)))
#define IMOD(x, y) ((y) == 0 ? (EW_SETERR(c_), (__typeof__(x))0) : EW_EQM1(y) ? (__typeof__(x))0 : \
  (__typeof__(x))((x) % (y)))
static inline int64_t ifloordiv(int64_t q, int64_t x, int64_t y) {
  return (x % (y == 0 ? 1 : y) != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}
static inline int64_t ipymod(int64_t m, int64_t y) { return (m != 0 && ((m < 0) != (y < 0))) ? m + y : m; }

/* Python's floor division for floats: through fmod, so 1 // 0.1 is 9 */
static inline double pyfloordiv_d(double a, double b) {
  if (b == 0) return a / b;
  double m = fmod(a, b), d = (a - m) / b;
  if (m != 0 && ((b < 0) != (m < 0))) d -= 1;
  double f = floor(d);
  if (d - f > 0.5) f += 1;
  return f == 0 ? copysign(0.0, a / b) : f;
}
static inline float pyfloordiv_f(float a, float b) {
  if (b == 0) return a / b;
  float m = fmod(a, b), d = (a - m) / b;
  if (m != 0 && ((b < 0) != (m < 0))) d -= 1;
  float f = floor(d);
  if (d - f > 0.5f) f += 1;
  return f == 0 ? copysign(0.0f, a / b) : f;
}
#define PYFLOORDIV(x, y) _Generic((x), double: pyfloordiv_d, default: pyfloordiv_f)(x, y)
#define PYMOD(x, y) ({ __typeof__(x) m_ = fmod(x, y); (m_ != 0 && ((y < 0) != (m_ < 0))) ? m_ + y : m_; })

#define DEF_DIVT_F(E, T, CT, N, X) EW_BINARY(divt_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, trunc(x / y))
#define DEF_DIVT_I(E, T, CT, N, X) EW_BINARY(divt_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, IDIV(N, x, y))
EW_FLOATS(DEF_DIVT_F, _) EW_INTS(DEF_DIVT_I, _)
static const lt_ew_loop divt_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, divt) EW_INTS(EW_TBL, divt) };

#define DEF_DIVF_F(E, T, CT, N, X) EW_BINARY(divf_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, PYFLOORDIV(x, y))
#define DEF_DIVF_I(E, T, CT, N, X) \
  EW_BINARY(divf_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, (CT)ifloordiv(IDIV(N, x, y), x, y))
EW_FLOATS(DEF_DIVF_F, _) EW_INTS(DEF_DIVF_I, _)
static const lt_ew_loop divf_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, divf) EW_INTS(EW_TBL, divf) };

#define DEF_REM_F(E, T, CT, N, X) EW_BINARY(rem_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, PYMOD(x, y))
#define DEF_REM_I(E, T, CT, N, X) EW_BINARY(rem_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, (CT)ipymod(IMOD(x, y), y))
EW_FLOATS(DEF_REM_F, _) EW_INTS(DEF_REM_I, _)
static const lt_ew_loop rem_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, rem) EW_INTS(EW_TBL, rem) };

#define DEF_FMOD_F(E, T, CT, N, X) EW_BINARY(fmod_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, fmod(x, y))
#define DEF_FMOD_I(E, T, CT, N, X) EW_BINARY(fmod_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, IMOD(x, y))
EW_FLOATS(DEF_FMOD_F, _) EW_INTS(DEF_FMOD_I, _)
static const lt_ew_loop fmod_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, fmod) EW_INTS(EW_TBL, fmod) };

#define DEF_ATAN2(E, T, CT, N, X) EW_BINARY(atan2_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, atan2(x, y))
EW_FLOATS(DEF_ATAN2, _)
static const lt_ew_loop atan2_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, atan2) };

#define DEF_HYPOT(E, T, CT, N, X) EW_BINARY(hypot_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, hypot(x, y))
EW_FLOATS(DEF_HYPOT, _)
static const lt_ew_loop hypot_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, hypot) };

/* NaN wins, as in PyTorch; x + y is the NaN when either is one */
#define DEF_MAX_F(E, T, CT, N, X) EW_BINARY(max_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, \
  (x != x || y != y) ? x + y : (x > y ? x : y))
#define DEF_MAX_I(E, T, CT, N, X) EW_BINARY(max_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, x > y ? x : y)
EW_FLOATS(DEF_MAX_F, _) EW_INTS(DEF_MAX_I, _) EW_BOOL(DEF_MAX_I, _)
static const lt_ew_loop max_tbl[LT_NUM_DTYPES] = { EW_ALL(EW_TBL, max) };
#define DEF_MIN_F(E, T, CT, N, X) EW_BINARY(min_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, \
  (x != x || y != y) ? x + y : (x < y ? x : y))
#define DEF_MIN_I(E, T, CT, N, X) EW_BINARY(min_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, x < y ? x : y)
EW_FLOATS(DEF_MIN_F, _) EW_INTS(DEF_MIN_I, _) EW_BOOL(DEF_MIN_I, _)
static const lt_ew_loop min_tbl[LT_NUM_DTYPES] = { EW_ALL(EW_TBL, min) };

/* bitwise: integers and bool */
#define DEF_BAND(E, T, CT, N, X) EW_BINARY(band_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, x & y)
#define DEF_BOR(E, T, CT, N, X) EW_BINARY(bor_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, x | y)
#define DEF_BXOR(E, T, CT, N, X) EW_BINARY(bxor_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, x ^ y)
EW_INTS(DEF_BAND, _) EW_BOOL(DEF_BAND, _) EW_INTS(DEF_BOR, _) EW_BOOL(DEF_BOR, _)
EW_INTS(DEF_BXOR, _) EW_BOOL(DEF_BXOR, _)
static const lt_ew_loop band_tbl[LT_NUM_DTYPES] = { EW_INTS(EW_TBL, band) EW_BOOL(EW_TBL, band) };
static const lt_ew_loop bor_tbl[LT_NUM_DTYPES] = { EW_INTS(EW_TBL, bor) EW_BOOL(EW_TBL, bor) };
static const lt_ew_loop bxor_tbl[LT_NUM_DTYPES] = { EW_INTS(EW_TBL, bxor) EW_BOOL(EW_TBL, bxor) };

/* shifts by at least the width give 0 (left) or the sign (right), as in PyTorch */
#define NBITS(x) ((int64_t)sizeof(x) * 8)
#define DEF_SHL(E, T, CT, N, X) EW_BINARY(shl_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, \
  (EW_LT0(y) || (int64_t)y >= NBITS(x)) ? (CT)0 : (CT)((UT_##N)x << (int64_t)y))
#define DEF_SHR(E, T, CT, N, X) EW_BINARY(shr_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, \
  (EW_LT0(y) || (int64_t)y >= NBITS(x)) ? (CT)(EW_LT0(x) ? -1 : 0) : (CT)(x >> (int64_t)y))
EW_INTS(DEF_SHL, _) EW_INTS(DEF_SHR, _)
static const lt_ew_loop shl_tbl[LT_NUM_DTYPES] = { EW_INTS(EW_TBL, shl) };
static const lt_ew_loop shr_tbl[LT_NUM_DTYPES] = { EW_INTS(EW_TBL, shr) };

/* comparisons and logical ops: any dtype in, bool out */
#define DEF_CMP(E, T, CT, N, OP) EW_BINARY(OP##_##N, T, CT, LD_##N, bool, ST_BOOL, EW_NODECL, CMP_##OP(x, y))
#define CMP_eq(x, y) (x == y)
#define CMP_ne(x, y) (x != y)
#define CMP_lt(x, y) (x < y)
#define CMP_le(x, y) (x <= y)
#define CMP_gt(x, y) (x > y)
#define CMP_ge(x, y) (x >= y)
#define CMP_land(x, y) ((x != 0) & (y != 0))
#define CMP_lor(x, y) ((x != 0) | (y != 0))
#define CMP_lxor(x, y) ((x != 0) ^ (y != 0))
#define CMP_TABLE(OP) EW_ALL(DEF_CMP, OP) static const lt_ew_loop OP##_tbl[LT_NUM_DTYPES] = { EW_ALL(EW_TBL, OP) };
/* complex numbers have equality, and no order */
#define CMP_TABLE_CX(OP) EW_ALL(DEF_CMP, OP) EW_COMPLEX(DEF_CMP, OP) \
  static const lt_ew_loop OP##_tbl[LT_NUM_DTYPES] = { EW_ALL(EW_TBL, OP) EW_COMPLEX(EW_TBL, OP) };
CMP_TABLE_CX(eq) CMP_TABLE_CX(ne) CMP_TABLE(lt) CMP_TABLE(le) CMP_TABLE(gt) CMP_TABLE(ge)
CMP_TABLE(land) CMP_TABLE(lor) CMP_TABLE(lxor)

/* ---- drivers ------------------------------------------------------------ */

static lt_tensor *binary(const char *op, lt_tensor *a, lt_tensor *b, lt_tensor *out,
                         const lt_ew_loop *tbl, lt_dtype ct, lt_dtype odt, ew_ctx *c) {
  lt_ew_loop fn = lt_ew_pick(op, tbl, ct);
  if (!fn) return NULL;
  lt_ew e;
  e.op = op; e.nin = 2; e.in[0] = a; e.in[1] = b; e.in_dt[0] = e.in_dt[1] = ct;
  e.out_dt = odt; e.fn = fn; e.ctx = c; e.grain = 0;
  lt_tensor *r = lt_ew_run(&e, out);
  if (r && c && c->err) {
    lt_tensor_release(r);
    return lt_error_null("%s: integer division by zero", op);
  }
  return r;
}

static lt_dtype rtype2(lt_tensor *a, lt_tensor *b) {
  if (a->dtype == b->dtype && !(a->is_wrapped_number && b->is_wrapped_number)) return (lt_dtype)a->dtype;
  lt_tensor *ts[2] = {a, b};
  return (lt_dtype)lt_result_type(2, ts);
}

lt_tensor *lt_cpu_add(lt_tensor *self, lt_tensor *other, lt_scalar alpha, lt_tensor *out) {
  lt_dtype dt = rtype2(self, other);
  if (lt_meta_check_alpha("add", dt, alpha) < 0) return NULL;
  ew_ctx c; c.err = 0;
  ew_ctx_set(&c, 0, alpha);
  c.f[1] = alpha.type == LT_SCALAR_COMPLEX ? alpha.im : 0;
  return binary("add", self, other, out, add_tbl, dt, dt, &c);
}

lt_tensor *lt_cpu_sub(lt_tensor *self, lt_tensor *other, lt_scalar alpha, lt_tensor *out) {
  lt_dtype dt = rtype2(self, other);
  if (dt == LT_BOOL)
    return lt_error_null("sub: subtracting bool tensors is not supported; use logical_xor() or the ~ of a mask");
  if (lt_meta_check_alpha("sub", dt, alpha) < 0) return NULL;
  ew_ctx c; c.err = 0;
  ew_ctx_set(&c, 0, alpha);
  c.f[1] = alpha.type == LT_SCALAR_COMPLEX ? alpha.im : 0;
  return binary("sub", self, other, out, sub_tbl, dt, dt, &c);
}

lt_tensor *lt_cpu_mul(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  lt_dtype dt = rtype2(self, other);
  return binary("mul", self, other, out, mul_tbl, dt, dt, NULL);
}

static lt_tensor *div_impl(const char *op, lt_tensor *self, lt_tensor *other, const char *mode, lt_tensor *out) {
  lt_dtype dt = rtype2(self, other);
  ew_ctx c; c.err = 0;
  if (!mode) {
    if (!lt_dtype_is_float(dt) && !lt_dtype_is_complex(dt)) dt = lt_get_default_dtype();
    return binary(op, self, other, out, div_tbl, dt, dt, NULL);
  }
  if (dt == LT_BOOL) dt = LT_INT64;
  if (strcmp(mode, "trunc") == 0) return binary(op, self, other, out, divt_tbl, dt, dt, &c);
  if (strcmp(mode, "floor") == 0) return binary(op, self, other, out, divf_tbl, dt, dt, &c);
  return lt_error_null("%s: argument 'rounding_mode' must be nil, \"trunc\" or \"floor\", got \"%s\"", op, mode);
}

lt_tensor *lt_cpu_div(lt_tensor *self, lt_tensor *other, const char *rounding_mode, lt_tensor *out) {
  return div_impl("div", self, other, rounding_mode, out);
}

lt_tensor *lt_cpu_floor_divide(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  return div_impl("floor_divide", self, other, "floor", out);
}

lt_tensor *lt_cpu_remainder(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  lt_dtype dt = rtype2(self, other);
  if (dt == LT_BOOL) dt = LT_INT64;
  ew_ctx c; c.err = 0;
  return binary("remainder", self, other, out, rem_tbl, dt, dt, &c);
}

lt_tensor *lt_cpu_fmod(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  lt_dtype dt = rtype2(self, other);
  if (dt == LT_BOOL) dt = LT_INT64;
  ew_ctx c; c.err = 0;
  return binary("fmod", self, other, out, fmod_tbl, dt, dt, &c);
}

static lt_dtype float_type(lt_dtype dt) { return lt_dtype_is_float(dt) ? dt : lt_get_default_dtype(); }

lt_tensor *lt_cpu_atan2(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  lt_dtype dt = float_type(rtype2(self, other));
  return binary("atan2", self, other, out, atan2_tbl, dt, dt, NULL);
}

lt_tensor *lt_cpu_hypot(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  lt_dtype dt = float_type(rtype2(self, other));
  return binary("hypot", self, other, out, hypot_tbl, dt, dt, NULL);
}

lt_tensor *lt_cpu_maximum(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  lt_dtype dt = rtype2(self, other);
  return binary("maximum", self, other, out, max_tbl, dt, dt, NULL);
}

lt_tensor *lt_cpu_minimum(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  lt_dtype dt = rtype2(self, other);
  return binary("minimum", self, other, out, min_tbl, dt, dt, NULL);
}

static lt_tensor *bitwise(const char *op, lt_tensor *a, lt_tensor *b, lt_tensor *out, const lt_ew_loop *tbl, bool shift) {
  lt_dtype dt = rtype2(a, b);
  if (lt_dtype_is_float(dt) || (shift && dt == LT_BOOL)) {
    const char *which = lt_dtype_is_float((lt_dtype)a->dtype) ? "self" : "other";
    lt_dtype bad = lt_dtype_is_float((lt_dtype)a->dtype) ? (lt_dtype)a->dtype : (lt_dtype)b->dtype;
    if (!lt_dtype_is_float(bad)) bad = dt;
    return lt_error_null("%s: argument '%s' must be an integer%s tensor, got %s", op, which,
                         shift ? "" : " or bool", lt_dtype_name(bad));
  }
  return binary(op, a, b, out, tbl, dt, dt, NULL);
}

lt_tensor *lt_cpu_bitwise_and(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  return bitwise("bitwise_and", self, other, out, band_tbl, false);
}
lt_tensor *lt_cpu_bitwise_or(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  return bitwise("bitwise_or", self, other, out, bor_tbl, false);
}
lt_tensor *lt_cpu_bitwise_xor(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  return bitwise("bitwise_xor", self, other, out, bxor_tbl, false);
}
lt_tensor *lt_cpu_bitwise_left_shift(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  return bitwise("bitwise_left_shift", self, other, out, shl_tbl, true);
}
lt_tensor *lt_cpu_bitwise_right_shift(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  return bitwise("bitwise_right_shift", self, other, out, shr_tbl, true);
}

#define CMP_KERNEL(NAME, TBL) \
lt_tensor *lt_cpu_##NAME(lt_tensor *self, lt_tensor *other, lt_tensor *out) { \
  return binary(#NAME, self, other, out, TBL, rtype2(self, other), LT_BOOL, NULL); \
}
CMP_KERNEL(eq, eq_tbl) CMP_KERNEL(ne, ne_tbl) CMP_KERNEL(lt, lt_tbl)
CMP_KERNEL(le, le_tbl) CMP_KERNEL(gt, gt_tbl) CMP_KERNEL(ge, ge_tbl)
CMP_KERNEL(logical_and, land_tbl) CMP_KERNEL(logical_or, lor_tbl) CMP_KERNEL(logical_xor, lxor_tbl)

/* used by equal(): elementwise == with promotion, into a bool tensor */
lt_tensor *lt_ew_eq_bool(const char *op, lt_tensor *a, lt_tensor *b) {
  return binary(op, a, b, NULL, eq_tbl, rtype2(a, b), LT_BOOL, NULL);
}
