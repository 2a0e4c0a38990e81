/*
** ew_unary.c — unary elementwise kernels (math functions, rounding,
** activations, predicates) and pow, whose number exponents map to unary
** loops (x^2 is square, x^0.5 is sqrt, ...).
**
** Math functions on integer tensors compute in the default float dtype, as
** in PyTorch. The float loops call the C library through <tgmath.h>, and
** GCC vectorises those calls with glibc's libmvec variants declared below.
*/
#include <tgmath.h>
#include "cpu/ew.h"
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "meta/special_math.h"

/* glibc's vector variants (libmvec) of the functions the loops call; with
** these declarations GCC vectorises the calls without -ffast-math */
#if defined(__x86_64__) && defined(__GLIBC__) && !defined(__FAST_MATH__) && !defined(__SANITIZE_ADDRESS__)
#define EW_SIMD __attribute__((__simd__("notinbranch")))
EW_SIMD float (expf)(float); EW_SIMD double (exp)(double);
EW_SIMD float (logf)(float); EW_SIMD double (log)(double);
EW_SIMD float (sinf)(float); EW_SIMD double (sin)(double);
EW_SIMD float (cosf)(float); EW_SIMD double (cos)(double);
EW_SIMD float (tanf)(float); EW_SIMD double (tan)(double);
EW_SIMD float (tanhf)(float); EW_SIMD double (tanh)(double);
EW_SIMD float (expm1f)(float); EW_SIMD double (expm1)(double);
EW_SIMD float (log1pf)(float); EW_SIMD double (log1p)(double);
EW_SIMD float (log2f)(float); EW_SIMD double (log2)(double);
EW_SIMD float (log10f)(float); EW_SIMD double (log10)(double);
EW_SIMD float (exp2f)(float); EW_SIMD double (exp2)(double);
EW_SIMD float (asinf)(float); EW_SIMD double (asin)(double);
EW_SIMD float (acosf)(float); EW_SIMD double (acos)(double);
EW_SIMD float (atanf)(float); EW_SIMD double (atan)(double);
EW_SIMD float (sinhf)(float); EW_SIMD double (sinh)(double);
EW_SIMD float (coshf)(float); EW_SIMD double (cosh)(double);
EW_SIMD float (erff)(float); EW_SIMD double (erf)(double);
EW_SIMD float (erfcf)(float); EW_SIMD double (erfc)(double);
EW_SIMD float (powf)(float, float); EW_SIMD double (pow)(double, double);
#endif

#define TY(x) __typeof__(x)

/* ---- loops ---------------------------------------------------------------- */

/* float-only unary ops: FU_<op> is the expression in x (compute type) */
#define FU_DEF(E, T, CT, N, OP) EW_UNARY(OP##_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, FU_##OP)
#define FLOAT_UNARY(OP) EW_FLOATS(FU_DEF, OP) \
  static const lt_ew_loop OP##_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, OP) };

#define FU_sqrt sqrt(x)
#define FU_rsqrt ((TY(x))1 / sqrt(x))
#define FU_exp exp(x)
#define FU_exp2 exp2(x)
#define FU_log log(x)
#define FU_log2 log2(x)
#define FU_log10 log10(x)
#define FU_log1p log1p(x)
#define FU_expm1 expm1(x)
#define FU_sin sin(x)
#define FU_cos cos(x)
#define FU_tan tan(x)
#define FU_asin asin(x)
#define FU_acos acos(x)
#define FU_atan atan(x)
#define FU_sinh sinh(x)
#define FU_cosh cosh(x)
#define FU_tanh tanh(x)
#define FU_sigmoid ((TY(x))1 / ((TY(x))1 + exp(-x)))
#define FU_erf erf(x)
#define FU_erfc erfc(x)
#define FU_erfinv ((TY(x))lt_sm_erfinv((double)x))
#define FU_reciprocal ((TY(x))1 / x)
#define FU_floor floor(x)
#define FU_ceil ceil(x)
#define FU_trunc trunc(x)
#define FU_round nearbyint(x)
#define FU_frac (x - trunc(x))
/* round(decimals): f[0] = 10^|decimals|, mode 1 when decimals < 0 */
#define FU_roundd (c_->mode ? nearbyint(x / (TY(x))c_->f[0]) * (TY(x))c_->f[0] \
                            : nearbyint(x * (TY(x))c_->f[0]) / (TY(x))c_->f[0])
/* logit: f[0] = eps, mode 1 when eps is given */
#define FU_logit ({ TY(x) z_ = x; if (c_->mode) { TY(x) lo_ = (TY(x))c_->f[0], hi_ = 1 - lo_; \
                     z_ = z_ < lo_ ? lo_ : z_ > hi_ ? hi_ : z_; } log(z_ / ((TY(x))1 - z_)); })
#define FU_silu (x / ((TY(x))1 + exp(-x)))
#ifdef __AVX512F__
/* the float32 GELU loop is FMAs and a division, no library call: 512-bit vectors run it 1.6x
** faster in the AVX-512 build, where this file otherwise keeps 256-bit ones (Makefile,
** KFLAGS_nn_act_avx512). A declaration's target attribute carries to the definition that
** FLOAT_UNARY(gelu) makes below (called through the table, so never inlined elsewhere). */
static void gelu_f32(char **, const int64_t *, int64_t, void *) __attribute__((target("prefer-vector-width=512")));
#endif
#define FU_gelu ((TY(x))0.5 * x * ((TY(x))1 + GELU_ERF(x * (TY(x))0.70710678118654752440)))
#define FU_gelut ((TY(x))0.5 * x * ((TY(x))1 + tanh((TY(x))0.79788456080286535588 * (x + (TY(x))0.044715 * x * x * x))))
/* softplus: f[0] = beta, f[1] = threshold */
#define FU_softplus ((x * (TY(x))c_->f[0] > (TY(x))c_->f[1]) ? x : log1p(exp(x * (TY(x))c_->f[0])) / (TY(x))c_->f[0])
/* elu: f[0] = alpha, f[1] = scale, f[2] = input_scale */
#define FU_elu (x > 0 ? (TY(x))c_->f[1] * x \
                      : (TY(x))c_->f[1] * (TY(x))c_->f[0] * (exp(x * (TY(x))c_->f[2]) - (TY(x))1))
#define FU_leaky (x > 0 ? x : x * (TY(x))c_->f[0])
/* nan_to_num: f[0] nan, f[1] posinf, f[2] neginf (already in range of the dtype) */
#define FU_nan2num (x != x ? (TY(x))c_->f[0] : x == (TY(x))INFINITY ? (TY(x))c_->f[1] \
                    : x == -(TY(x))INFINITY ? (TY(x))c_->f[2] : x)
#define FU_cube (x * x * x)
#define FU_powsc pow(x, (TY(x))c_->f[0])

FLOAT_UNARY(exp2) FLOAT_UNARY(log1p) FLOAT_UNARY(expm1)
FLOAT_UNARY(erf) FLOAT_UNARY(erfc) FLOAT_UNARY(erfinv) FLOAT_UNARY(floor) FLOAT_UNARY(ceil)
FLOAT_UNARY(trunc) FLOAT_UNARY(round) FLOAT_UNARY(frac) FLOAT_UNARY(roundd) FLOAT_UNARY(logit)
FLOAT_UNARY(silu) FLOAT_UNARY(gelu) FLOAT_UNARY(gelut) FLOAT_UNARY(softplus) FLOAT_UNARY(elu)
FLOAT_UNARY(leaky) FLOAT_UNARY(nan2num)

/* The functions with a complex form (tgmath.h picks csqrt, cexp, ...): their
** tables also hold the complex dtypes. PyTorch's principal branches are C's
** (Annex G). */
#define CX_UNARY(OP) EW_FLOATS(FU_DEF, OP) EW_COMPLEX(FU_DEF, OP) \
  static const lt_ew_loop OP##_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, OP) EW_COMPLEX(EW_TBL, OP) };
CX_UNARY(sqrt) CX_UNARY(rsqrt) CX_UNARY(exp) CX_UNARY(log) CX_UNARY(sin) CX_UNARY(cos) CX_UNARY(tan)
CX_UNARY(asin) CX_UNARY(acos) CX_UNARY(atan) CX_UNARY(sinh) CX_UNARY(cosh) CX_UNARY(tanh)
CX_UNARY(sigmoid) CX_UNARY(reciprocal) CX_UNARY(cube) CX_UNARY(powsc)
/* log2 and log10: C has no complex forms, so complex z takes log(z) / log(base),
** as PyTorch; the real loops keep the C library's exact functions */
#define CXL_DEF(E, T, CT, N, OP) EW_UNARY(OP##_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, CXL_##OP)
#define CXL_log2 (log(x) * (__typeof__(creal(x)))1.44269504088896340736)
#define CXL_log10 (log(x) * (__typeof__(creal(x)))0.43429448190325182765)
#define CX_LOGB(OP) EW_FLOATS(FU_DEF, OP) EW_COMPLEX(CXL_DEF, OP) \
  static const lt_ew_loop OP##_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, OP) EW_COMPLEX(EW_TBL, OP) };
CX_LOGB(log2) CX_LOGB(log10)

/* ops on every numeric dtype: a float and an integer expression */
#define NU_DEF_F(E, T, CT, N, OP) EW_UNARY(OP##_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, NF_##OP)
#define NU_DEF_I(E, T, CT, N, OP) EW_UNARY(OP##_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, NI_##OP(N))
#define NUM_UNARY(OP) EW_FLOATS(NU_DEF_F, OP) EW_INTS(NU_DEF_I, OP) \
  static const lt_ew_loop OP##_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, OP) EW_INTS(EW_TBL, OP) };

#define NF_neg (-x)
#define NI_neg(N) ((TY(x))(0 - (UT_##N)x))
#define NF_abs fabs(x)
#define NI_abs(N) (EW_LT0(x) ? (TY(x))(0 - (UT_##N)x) : x)
#define NF_sign ((TY(x))((x > 0) - (x < 0)))
#define NI_sign(N) ((TY(x))((x > 0) - (EW_LT0(x))))
#define NF_square (x * x)
#define NI_square(N) ((TY(x))((UT_##N)x * (UT_##N)x))
#define NF_relu (x < 0 ? (TY(x))0 : x)
#define NI_relu(N) (EW_LT0(x) ? (TY(x))0 : x)
/* hardtanh / clamp with number bounds: f/i[0] = min, f/i[1] = max */
#define NF_hardtanh ({ TY(x) lo_ = EW_C(TY(x), 0), hi_ = EW_C(TY(x), 1); x < lo_ ? lo_ : x > hi_ ? hi_ : x; })
#define NI_hardtanh(N) NF_hardtanh
#define NF_icube (x * x * x)
#define NI_icube(N) ((TY(x))((UT_##N)x * (UT_##N)x * (UT_##N)x))
NUM_UNARY(abs) NUM_UNARY(sign) NUM_UNARY(relu) NUM_UNARY(hardtanh) NUM_UNARY(icube)
/* neg and square take complex too */
#define NUM_UNARY_CX(OP) EW_FLOATS(NU_DEF_F, OP) EW_INTS(NU_DEF_I, OP) EW_COMPLEX(NU_DEF_F, OP) \
  static const lt_ew_loop OP##_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, OP) EW_INTS(EW_TBL, OP) EW_COMPLEX(EW_TBL, OP) };
NUM_UNARY_CX(neg) NUM_UNARY_CX(square)

/* |z| of a complex z is real: its own loops, out in the real dtype */
#define CABS_DEF(E, T, CT, N, RT, RN) EW_UNARY(cabs_##N, T, CT, LD_##N, RT, ST_##RN, EW_NODECL, fabs(x))
CABS_DEF(LT_COMPLEX64, ew_cf, ew_cf, c64, float, f32) CABS_DEF(LT_COMPLEX128, ew_cd, ew_cd, c128, double, f64)
static const lt_ew_loop cabs_tbl[LT_NUM_DTYPES] = { EW_COMPLEX(EW_TBL, cabs) };

/* predicates: bool out */
#define PB_DEF(E, T, CT, N, OP) EW_UNARY(OP##_##N, T, CT, LD_##N, bool, ST_BOOL, EW_NODECL, PB_##OP)
#define PB_isnan (x != x)
#define PB_isinf (fabs(x) == (TY(x))INFINITY)
#define PB_isfinite (x == x && fabs(x) != (TY(x))INFINITY)
#define PB_lnot (x == 0)
EW_FLOATS(PB_DEF, isnan) EW_FLOATS(PB_DEF, isinf) EW_FLOATS(PB_DEF, isfinite) EW_ALL(PB_DEF, lnot)
/* complex: by parts (|z| overflows for finite parts near the largest float) */
#define PB_cxisnan (creal(x) != creal(x) || cimag(x) != cimag(x))
#define PB_cxisinf (fabs(creal(x)) == INFINITY || fabs(cimag(x)) == INFINITY)
#define PB_cxisfinite (isfinite(creal(x)) && isfinite(cimag(x)))
#define PB_DEF_CX(E, T, CT, N, OP) EW_UNARY(OP##_##N, T, CT, LD_##N, bool, ST_BOOL, EW_NODECL, PB_cx##OP)
EW_COMPLEX(PB_DEF_CX, isnan) EW_COMPLEX(PB_DEF_CX, isinf) EW_COMPLEX(PB_DEF_CX, isfinite)
static const lt_ew_loop isnan_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, isnan) EW_COMPLEX(EW_TBL, isnan) };
static const lt_ew_loop isinf_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, isinf) EW_COMPLEX(EW_TBL, isinf) };
static const lt_ew_loop isfinite_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, isfinite) EW_COMPLEX(EW_TBL, isfinite) };
static const lt_ew_loop lnot_tbl[LT_NUM_DTYPES] = { EW_ALL(EW_TBL, lnot) };

#define BNOT_I(E, T, CT, N, X) EW_UNARY(bnot_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, (CT)~(UT_##N)x)
#define BNOT_B(E, T, CT, N, X) EW_UNARY(bnot_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, !x)
EW_INTS(BNOT_I, _) EW_BOOL(BNOT_B, _)
static const lt_ew_loop bnot_tbl[LT_NUM_DTYPES] = { EW_INTS(EW_TBL, bnot) EW_BOOL(EW_TBL, bnot) };

/* pow with tensor exponents */
static inline uint64_t ipow_u(uint64_t b, uint64_t e) {
  uint64_t r = 1;
  while (e) { if (e & 1) r *= b; b *= b; e >>= 1; }
  return r;
}
/* negative integer exponents: 1 and -1 stay finite, everything else truncates to 0 */
#define IPOW(x, y) (EW_LT0(y) ? ((int64_t)(x) == 1 ? (TY(x))1 : EW_EQM1(x) ? \
  (TY(x))(((int64_t)(y) & 1) ? -1 : 1) : (TY(x))0) : (TY(x))ipow_u((uint64_t)(int64_t)(x), (uint64_t)(y)))
#define POW_F(E, T, CT, N, X) EW_BINARY(pow_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, pow(x, y))
#define POW_I(E, T, CT, N, X) EW_BINARY(pow_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, IPOW(x, y))
EW_FLOATS(POW_F, _) EW_INTS(POW_I, _) EW_COMPLEX(POW_F, _)
static const lt_ew_loop pow_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, pow) EW_INTS(EW_TBL, pow) EW_COMPLEX(EW_TBL, pow) };

/* ---- drivers ------------------------------------------------------------ */

enum { UK_SAME, UK_PROMOTE, UK_FLOAT_ONLY, UK_BOOL_OUT };

static lt_tensor *run1(const char *op, lt_tensor *self, lt_tensor *out, lt_ew_loop fn,
                       lt_dtype in, lt_dtype odt, ew_ctx *c) {
  lt_ew e;
  e.op = op; e.nin = 1; e.in[0] = self; e.in_dt[0] = in; e.out_dt = odt;
  e.fn = fn; e.ctx = c; e.grain = 0;
  return lt_ew_run(&e, out);
}

static lt_tensor *unary(const char *op, lt_tensor *self, lt_tensor *out, const lt_ew_loop *tbl,
                        int kind, ew_ctx *c) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (kind == UK_PROMOTE && !lt_dtype_is_float(dt) && !lt_dtype_is_complex(dt)) dt = lt_get_default_dtype();
  if (kind == UK_FLOAT_ONLY && !lt_dtype_is_float(dt))
    return lt_error_null("%s: argument 'self' must be a floating point tensor, got %s", op, lt_dtype_name(dt));
  lt_ew_loop fn = lt_ew_pick(op, tbl, dt);
  if (!fn) return NULL;
  return run1(op, self, out, fn, dt, kind == UK_BOOL_OUT ? LT_BOOL : dt, c);
}

/* a copy of self (integer inputs of rounding ops, ...), into out when given */
static lt_tensor *identity(const char *op, lt_tensor *self, lt_tensor *out) {
  if (!out) return lt_tensor_clone_as(self, (lt_dtype)self->dtype);
  if (out == self) { lt_tensor_retain(out); return out; }
  if (!lt_can_cast((lt_dtype)self->dtype, (lt_dtype)out->dtype))
    return lt_error_null("%s: result type %s can't be cast to the desired output type %s", op,
                         lt_dtype_traits_table[self->dtype].t7name, lt_dtype_traits_table[out->dtype].t7name);
  if (lt_tensor_resize_out(op, out, self->ndim, self->sizes) < 0 || lt_tensor_copy_(out, self) < 0) return NULL;
  lt_tensor_retain(out);
  return out;
}

/* a tensor of self's shape filled with a constant (isnan of integers, ...) */
static lt_tensor *constant(const char *op, lt_tensor *self, lt_tensor *out, lt_dtype dt, lt_scalar v) {
  lt_tensor *r = lt_meta_result(op, out, dt, lt_tensor_device(self), self->ndim, self->sizes);
  if (!r) return NULL;
  if (lt_tensor_fill_(r, v) < 0) { lt_tensor_release(r); return NULL; }
  return r;
}

#define PROMOTING(NAME) \
lt_tensor *lt_cpu_##NAME(lt_tensor *self, lt_tensor *out) { \
  return unary(#NAME, self, out, NAME##_tbl, UK_PROMOTE, NULL); }
PROMOTING(sqrt) PROMOTING(rsqrt) PROMOTING(exp) PROMOTING(exp2) PROMOTING(log) PROMOTING(log2)
PROMOTING(log10) PROMOTING(log1p) PROMOTING(expm1) PROMOTING(sin) PROMOTING(cos) PROMOTING(tan)
PROMOTING(asin) PROMOTING(acos) PROMOTING(atan) PROMOTING(sinh) PROMOTING(cosh) PROMOTING(tanh)
PROMOTING(sigmoid) PROMOTING(erf) PROMOTING(erfc) PROMOTING(erfinv) PROMOTING(reciprocal)

lt_tensor *lt_cpu_neg(lt_tensor *self, lt_tensor *out) {
  if (self->dtype == LT_BOOL)
    return lt_error_null("neg: negation of a bool tensor is not supported; use logical_not() or bitwise_not()");
  return unary("neg", self, out, neg_tbl, UK_SAME, NULL);
}

lt_tensor *lt_cpu_abs(lt_tensor *self, lt_tensor *out) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (lt_dtype_is_complex(dt)) return run1("abs", self, out, cabs_tbl[dt], dt, lt_dtype_to_real(dt), NULL);
  if (self->dtype == LT_BOOL || self->dtype == LT_UINT8) return identity("abs", self, out);
  return unary("abs", self, out, abs_tbl, UK_SAME, NULL);
}

lt_tensor *lt_cpu_sign(lt_tensor *self, lt_tensor *out) {
  if (self->dtype == LT_BOOL) return identity("sign", self, out);
  return unary("sign", self, out, sign_tbl, UK_SAME, NULL);
}

lt_tensor *lt_cpu_square(lt_tensor *self, lt_tensor *out) {
  if (self->dtype == LT_BOOL) {   /* like pow(bool, 2): int64 */
    lt_ew_loop fn = square_tbl[LT_INT64];
    return run1("square", self, out, fn, LT_INT64, LT_INT64, NULL);
  }
  return unary("square", self, out, square_tbl, UK_SAME, NULL);
}

#define ROUNDING(NAME) \
lt_tensor *lt_cpu_##NAME(lt_tensor *self, lt_tensor *out) { \
  if (!lt_dtype_is_float((lt_dtype)self->dtype)) return identity(#NAME, self, out); \
  return unary(#NAME, self, out, NAME##_tbl, UK_SAME, NULL); }
ROUNDING(floor) ROUNDING(ceil) ROUNDING(trunc)

lt_tensor *lt_cpu_round(lt_tensor *self, int64_t decimals, lt_tensor *out) {
  if (!lt_dtype_is_float((lt_dtype)self->dtype)) {
    if (decimals != 0)
      return lt_error_null("round: argument 'decimals' is only supported for floating point tensors, got %s",
                           lt_dtype_name((lt_dtype)self->dtype));
    return identity("round", self, out);
  }
  if (decimals == 0) return unary("round", self, out, round_tbl, UK_SAME, NULL);
  ew_ctx c = {0};
  c.f[0] = pow(10.0, (double)(decimals < 0 ? -decimals : decimals));
  c.mode = decimals < 0;
  return unary("round", self, out, roundd_tbl, UK_SAME, &c);
}

lt_tensor *lt_cpu_frac(lt_tensor *self, lt_tensor *out) {
  return unary("frac", self, out, frac_tbl, UK_FLOAT_ONLY, NULL);
}

lt_tensor *lt_cpu_logit(lt_tensor *self, lt_scalar eps, lt_tensor *out) {
  ew_ctx c = {0};
  if (!lt_scalar_is_none(eps)) { c.mode = 1; c.f[0] = lt_scalar_to_double(eps); }
  return unary("logit", self, out, logit_tbl, UK_PROMOTE, &c);
}

lt_tensor *lt_cpu_relu(lt_tensor *self, lt_tensor *out) {
  if (self->dtype == LT_BOOL) return lt_error_null("relu: not implemented for bool tensors");
  if (self->dtype == LT_UINT8) return identity("relu", self, out);
  return unary("relu", self, out, relu_tbl, UK_SAME, NULL);
}

static lt_tensor *hardtanh_impl(const char *op, lt_tensor *self, lt_scalar lo, lt_scalar hi, lt_tensor *out) {
  if (self->dtype == LT_BOOL) return lt_error_null("%s: not implemented for bool tensors", op);
  ew_ctx c = {0};
  ew_ctx_set(&c, 0, lo);
  ew_ctx_set(&c, 1, hi);
  if (!lt_dtype_is_float((lt_dtype)self->dtype)) {   /* integer bounds for integer tensors */
    double lo_f = ceil(c.f[0]), hi_f = floor(c.f[1]);
    if (isnan(lo_f) || isnan(hi_f))   /* no integer is one: (int64_t)NaN is undefined */
      return lt_error_null("%s: a bound is NaN, which an integer tensor cannot be clamped to", op);
    c.i[0] = lo_f < -9.2e18 ? INT64_MIN : lo_f > 9.2e18 ? INT64_MAX : (int64_t)lo_f;
    c.i[1] = hi_f < -9.2e18 ? INT64_MIN : hi_f > 9.2e18 ? INT64_MAX : (int64_t)hi_f;
  }
  return unary(op, self, out, hardtanh_tbl, UK_SAME, &c);
}

lt_tensor *lt_cpu_hardtanh(lt_tensor *self, lt_scalar min_val, lt_scalar max_val, lt_tensor *out) {
  return hardtanh_impl("hardtanh", self, min_val, max_val, out);
}

lt_tensor *lt_cpu_relu6(lt_tensor *self, lt_tensor *out) {
  return hardtanh_impl("relu6", self, lt_scalar_int(0), lt_scalar_int(6), out);
}

lt_tensor *lt_cpu_gelu(lt_tensor *self, const char *approximate, lt_tensor *out) {
  if (!approximate || strcmp(approximate, "none") == 0)
    return unary("gelu", self, out, gelu_tbl, UK_FLOAT_ONLY, NULL);
  if (strcmp(approximate, "tanh") == 0)
    return unary("gelu", self, out, gelut_tbl, UK_FLOAT_ONLY, NULL);
  return lt_error_null("gelu: argument 'approximate' must be \"none\" or \"tanh\", got \"%s\"", approximate);
}

lt_tensor *lt_cpu_silu(lt_tensor *self, lt_tensor *out) {
  return unary("silu", self, out, silu_tbl, UK_FLOAT_ONLY, NULL);
}

lt_tensor *lt_cpu_softplus(lt_tensor *self, lt_scalar beta, lt_scalar threshold, lt_tensor *out) {
  ew_ctx c = {0};
  c.f[0] = lt_scalar_to_double(beta);
  c.f[1] = lt_scalar_to_double(threshold);
  return unary("softplus", self, out, softplus_tbl, UK_FLOAT_ONLY, &c);
}

lt_tensor *lt_cpu_elu(lt_tensor *self, lt_scalar alpha, lt_scalar scale, lt_scalar input_scale, lt_tensor *out) {
  ew_ctx c = {0};
  c.f[0] = lt_scalar_to_double(alpha);
  c.f[1] = lt_scalar_to_double(scale);
  c.f[2] = lt_scalar_to_double(input_scale);
  return unary("elu", self, out, elu_tbl, UK_FLOAT_ONLY, &c);
}

lt_tensor *lt_cpu_leaky_relu(lt_tensor *self, lt_scalar negative_slope, lt_tensor *out) {
  ew_ctx c = {0};
  c.f[0] = lt_scalar_to_double(negative_slope);
  return unary("leaky_relu", self, out, leaky_tbl, UK_FLOAT_ONLY, &c);
}

lt_tensor *lt_cpu_nan_to_num(lt_tensor *self, lt_scalar nan, lt_scalar posinf, lt_scalar neginf, lt_tensor *out) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (!lt_dtype_is_float(dt)) return identity("nan_to_num", self, out);
  ew_ctx c = {0};
  lt_meta_nan_to_num_values(dt, nan, posinf, neginf, c.f);
  return unary("nan_to_num", self, out, nan2num_tbl, UK_SAME, &c);
}

static lt_tensor *predicate(const char *op, lt_tensor *self, lt_tensor *out, const lt_ew_loop *tbl, bool int_value) {
  if (!lt_dtype_is_float((lt_dtype)self->dtype) && !lt_dtype_is_complex((lt_dtype)self->dtype)) return constant(op, self, out, LT_BOOL, lt_scalar_bool(int_value));
  return unary(op, self, out, tbl, UK_BOOL_OUT, NULL);
}
lt_tensor *lt_cpu_isnan(lt_tensor *self) { return predicate("isnan", self, NULL, isnan_tbl, false); }
lt_tensor *lt_cpu_isinf(lt_tensor *self) { return predicate("isinf", self, NULL, isinf_tbl, false); }
lt_tensor *lt_cpu_isfinite(lt_tensor *self) { return predicate("isfinite", self, NULL, isfinite_tbl, true); }

lt_tensor *lt_cpu_logical_not(lt_tensor *self, lt_tensor *out) {
  return unary("logical_not", self, out, lnot_tbl, UK_BOOL_OUT, NULL);
}

lt_tensor *lt_cpu_bitwise_not(lt_tensor *self, lt_tensor *out) {
  if (lt_dtype_is_float((lt_dtype)self->dtype))
    return lt_error_null("bitwise_not: argument 'self' must be an integer or bool tensor, got %s",
                         lt_dtype_name((lt_dtype)self->dtype));
  return unary("bitwise_not", self, out, bnot_tbl, UK_SAME, NULL);
}

/* ---- pow ------------------------------------------------------------------ */

lt_tensor *lt_cpu_pow(lt_tensor *self, lt_tensor *exponent, lt_tensor *out) {
  lt_tensor *ts[2] = {self, exponent};
  lt_dtype dt = (lt_dtype)lt_result_type(2, ts);
  if (dt == LT_BOOL) dt = LT_INT64;
  if (exponent->numel == 1 && self->numel != 1 && !lt_dtype_is_complex((lt_dtype)exponent->dtype)) {
    /* a number exponent: the common powers are cheaper loops */
    double e = lt_tensor_get_double(exponent, 0);
    bool isf = lt_dtype_is_float(dt) || lt_dtype_is_complex(dt);
    if (!isf && e < 0)
      return lt_error_null("pow: integers to negative integer powers are not allowed (exponent %g)", e);
    const lt_ew_loop *tbl = NULL;
    ew_ctx c = {0};
    if (e == 2) tbl = square_tbl;
    else if (e == 3) tbl = isf ? cube_tbl : icube_tbl;
    else if (isf && e == 0.5) tbl = sqrt_tbl;
    else if (isf && e == -0.5) tbl = rsqrt_tbl;
    else if (isf && e == -1) tbl = reciprocal_tbl;
    else if (isf) { tbl = powsc_tbl; c.f[0] = e; }
    if (tbl) {
      lt_ew_loop fn = lt_ew_pick("pow", tbl, dt);
      if (!fn) return NULL;
      return run1("pow", self, out, fn, dt, dt, &c);
    }
  }
  lt_ew_loop fn = lt_ew_pick("pow", pow_tbl, dt);
  if (!fn) return NULL;
  lt_ew e;
  e.op = "pow"; e.nin = 2; e.in[0] = self; e.in[1] = exponent; e.in_dt[0] = e.in_dt[1] = dt;
  e.out_dt = dt; e.fn = fn; e.ctx = NULL; e.grain = 0;
  return lt_ew_run(&e, out);
}
