/*
** formulas_elementwise.c — derivative helpers for the elementwise ops,
** activations and conversions.
**
** Every helper is written with the ops' entry points so that create_graph
** records the backward computation (double backward). Intermediates go into
** a pool; the wrappers below pass a NULL (an earlier failure, error already
** set) straight through, so a helper is one expression and one finish().
*/
#include <string.h>
#include "formulas_elementwise.h"
#include "formulas_complex.h"
#include "lt_ops.h"
#include "core/tpool.h"

typedef lt_tpool pool;
static inline lt_tensor *keep(pool *p, lt_tensor *t) { return lt_tpool_keep(p, t); }
static inline lt_tensor *finish(pool *p, lt_tensor *r) { return lt_tpool_finish(p, r); }

#define OK1(a) (a)
#define OK2(a, b) ((a) && (b))
#define OK3(a, b, c) ((a) && (b) && (c))
static lt_tensor *num(pool *p, double v) { return keep(p, lt_tensor_wrapped_number(lt_scalar_float(v))); }
static lt_tensor *mul(pool *p, lt_tensor *a, lt_tensor *b) { return OK2(a, b) ? keep(p, lt_mul(a, b)) : NULL; }
static lt_tensor *dv(pool *p, lt_tensor *a, lt_tensor *b) { return OK2(a, b) ? keep(p, lt_div(a, b, NULL)) : NULL; }
static lt_tensor *add(pool *p, lt_tensor *a, lt_tensor *b) { return OK2(a, b) ? keep(p, lt_add(a, b, lt_scalar_int(1))) : NULL; }
static lt_tensor *sub(pool *p, lt_tensor *a, lt_tensor *b) { return OK2(a, b) ? keep(p, lt_sub(a, b, lt_scalar_int(1))) : NULL; }
static lt_tensor *neg(pool *p, lt_tensor *a) { return OK1(a) ? keep(p, lt_neg(a)) : NULL; }
static lt_tensor *where(pool *p, lt_tensor *c, lt_tensor *a, lt_tensor *b) { return OK3(c, a, b) ? keep(p, lt_where(c, a, b)) : NULL; }
#define CMP(NAME) \
static lt_tensor *NAME(pool *p, lt_tensor *a, lt_tensor *b) { return OK2(a, b) ? keep(p, lt_##NAME(a, b)) : NULL; }
CMP(eq) CMP(lt) CMP(le) CMP(gt) CMP(ge) CMP(logical_and) CMP(logical_or) CMP(floor_divide)
static lt_tensor *pow_t(pool *p, lt_tensor *a, lt_tensor *b) { return OK2(a, b) ? keep(p, lt_pow(a, b)) : NULL; }
#define UN(NAME) \
static lt_tensor *NAME##_(pool *p, lt_tensor *a) { return OK1(a) ? keep(p, lt_##NAME(a)) : NULL; }
UN(exp) UN(log) UN(sin) UN(cos) UN(sinh) UN(cosh) UN(sqrt) UN(sigmoid) UN(tanh) UN(erf) UN(sign) UN(isfinite)

static lt_tensor *scal(pool *p, lt_scalar s) { return keep(p, lt_tensor_wrapped_number(s)); }
/* grad where mask, 0 elsewhere */
static lt_tensor *masked(pool *p, lt_tensor *mask, lt_tensor *g) { return where(p, mask, g, num(p, 0)); }

#define LN2 0.69314718055994530942
#define LN10 2.30258509299404568402
#define TWO_OVER_SQRTPI 1.12837916709551257390
#define SQRTPI_OVER_TWO 0.88622692545275801365
#define SQRT1_2 0.70710678118654752440
#define INV_SQRT_2PI 0.39894228040143267794
#define SQRT_2_OVER_PI 0.79788456080286535588

lt_tensor *lt_ew_grad_zeros(lt_tensor *grad) {
  return lt_tensor_new_zeros((lt_dtype)grad->dtype, lt_tensor_device(grad), grad->ndim, grad->sizes);
}

lt_tensor *lt_ew_grad_neg_scale(lt_tensor *grad, lt_scalar alpha) {
  if (alpha.type == LT_SCALAR_COMPLEX) return lt_grad_scale(grad, lt_scalar_complex(-alpha.v.f, -alpha.im));
  if (alpha.type != LT_SCALAR_FLOAT && alpha.v.i == 1) return lt_neg(grad);
  return lt_grad_scale(grad, lt_scalar_float(-lt_scalar_to_double(alpha)));
}

/* ---- arithmetic ---- */

lt_tensor *lt_ew_grad_div_self(lt_tensor *grad, lt_tensor *other, const char *rounding_mode) {
  if (rounding_mode) return lt_ew_grad_zeros(grad);   /* piecewise constant */
  if (lt_dtype_is_complex((lt_dtype)other->dtype)) {   /* grad / conj(other) */
    lt_tensor *c = lt_conj(other);
    lt_tensor *r = c ? lt_div(grad, c, NULL) : NULL;
    lt_tensor_release(c);
    return r;
  }
  return lt_div(grad, other, NULL);
}

static lt_tensor *div_other_d(lt_tensor *grad, lt_tensor *q) {   /* q = self / other^2 */
  pool P = {0}, *p = &P;
  return finish(p, neg(p, mul(p, grad, q)));
}

lt_tensor *lt_ew_grad_div_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other, const char *rounding_mode) {
  if (rounding_mode) return lt_ew_grad_zeros(grad);
  pool P = {0}, *p = &P;
  if (lt_dtype_is_complex((lt_dtype)self->dtype) || lt_dtype_is_complex((lt_dtype)other->dtype)) {
    lt_tensor *q = dv(p, self, mul(p, other, other));
    return finish(p, q ? keep(p, lt_grad_holomorphic(grad, q, div_other_d)) : NULL);
  }
  return finish(p, neg(p, dv(p, mul(p, grad, self), mul(p, other, other))));
}

/* remainder = self - other * floor(self / other) */
lt_tensor *lt_ew_grad_remainder_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other) {
  pool P = {0}, *p = &P;
  return finish(p, neg(p, mul(p, grad, floor_divide(p, self, other))));
}

/* fmod = self - other * trunc(self / other) */
lt_tensor *lt_ew_grad_fmod_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other) {
  pool P = {0}, *p = &P;
  lt_tensor *q = keep(p, lt_div(self, other, "trunc"));
  return finish(p, neg(p, mul(p, grad, q)));
}

/* exponent * self^(exponent - 1), and 0 where the exponent is 0 (even at self == 0) */
/* conj(t) for a complex derivative factor (grad * conj(f'(z)), PyTorch's convention) */
static lt_tensor *cj(pool *p, lt_tensor *t) { return t ? keep(p, lt_grad_conj(t)) : NULL; }

lt_tensor *lt_ew_grad_pow_self(lt_tensor *grad, lt_tensor *self, lt_tensor *exponent) {
  pool P = {0}, *p = &P;
  lt_tensor *d = mul(p, exponent, pow_t(p, self, sub(p, exponent, num(p, 1))));
  return finish(p, where(p, eq(p, exponent, num(p, 0)), num(p, 0), mul(p, grad, cj(p, d))));
}

/* result * log(self); 0 where self == 0 and exponent >= 0 (the limit of 0^e) */
lt_tensor *lt_ew_grad_pow_exponent(lt_tensor *grad, lt_tensor *self, lt_tensor *exponent, lt_tensor *result) {
  pool P = {0}, *p = &P;
  lt_tensor *z = num(p, 0);
  lt_tensor *c = logical_and(p, eq(p, self, z), ge(p, exponent, z));
  return finish(p, mul(p, grad, cj(p, where(p, c, z, mul(p, result, log_(p, self))))));
}

lt_tensor *lt_ew_grad_maximum(lt_tensor *grad, lt_tensor *self, lt_tensor *other) {
  pool P = {0}, *p = &P;   /* ties: half to each */
  lt_tensor *t = where(p, eq(p, self, other), mul(p, grad, num(p, 0.5)), grad);
  return finish(p, where(p, lt(p, self, other), num(p, 0), t));
}

lt_tensor *lt_ew_grad_minimum(lt_tensor *grad, lt_tensor *self, lt_tensor *other) {
  pool P = {0}, *p = &P;
  lt_tensor *t = where(p, eq(p, self, other), mul(p, grad, num(p, 0.5)), grad);
  return finish(p, where(p, gt(p, self, other), num(p, 0), t));
}

lt_tensor *lt_ew_grad_atan2_self(lt_tensor *grad, lt_tensor *self, lt_tensor *other) {
  pool P = {0}, *p = &P;
  lt_tensor *den = add(p, mul(p, self, self), mul(p, other, other));
  return finish(p, mul(p, grad, dv(p, other, den)));
}

lt_tensor *lt_ew_grad_atan2_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other) {
  pool P = {0}, *p = &P;
  lt_tensor *den = add(p, mul(p, self, self), mul(p, other, other));
  return finish(p, neg(p, mul(p, grad, dv(p, self, den))));
}

/* d hypot / d x = x / hypot */
lt_tensor *lt_ew_grad_hypot(lt_tensor *grad, lt_tensor *x, lt_tensor *result) {
  pool P = {0}, *p = &P;
  return finish(p, mul(p, grad, dv(p, x, result)));
}

/* ---- lerp, addcmul, addcdiv ---- */

lt_tensor *lt_ew_grad_lerp_self(lt_tensor *grad, lt_tensor *weight) {
  pool P = {0}, *p = &P;
  return finish(p, mul(p, grad, sub(p, num(p, 1), weight)));
}

lt_tensor *lt_ew_grad_lerp_weight(lt_tensor *grad, lt_tensor *self, lt_tensor *end) {
  pool P = {0}, *p = &P;
  return finish(p, mul(p, grad, sub(p, end, self)));
}

lt_tensor *lt_ew_grad_addcmul(lt_tensor *grad, lt_tensor *other, lt_scalar value) {
  pool P = {0}, *p = &P;
  return finish(p, mul(p, mul(p, grad, other), scal(p, value)));
}

lt_tensor *lt_ew_grad_addcdiv_tensor1(lt_tensor *grad, lt_tensor *tensor2, lt_scalar value) {
  pool P = {0}, *p = &P;
  return finish(p, mul(p, dv(p, grad, tensor2), scal(p, value)));
}

lt_tensor *lt_ew_grad_addcdiv_tensor2(lt_tensor *grad, lt_tensor *tensor1, lt_tensor *tensor2, lt_scalar value) {
  pool P = {0}, *p = &P;
  lt_tensor *q = dv(p, mul(p, grad, tensor1), mul(p, tensor2, tensor2));
  return finish(p, neg(p, mul(p, q, scal(p, value))));
}

/* ---- selection: clamp, where, nan_to_num ---- */

/* clamp(x, lo, hi) = min(max(x, lo), hi): x passes where lo <= x <= hi; lo is
** selected where x < lo < hi; hi where x > hi or hi < lo */
lt_tensor *lt_ew_grad_clamp_self(lt_tensor *grad, lt_tensor *self, lt_tensor *min, lt_tensor *max) {
  pool P = {0}, *p = &P;
  lt_tensor *m = NULL;
  if (min && max) m = logical_and(p, ge(p, self, min), le(p, self, max));
  else if (min) m = ge(p, self, min);
  else if (max) m = le(p, self, max);
  else { lt_tensor_retain(grad); return grad; }
  return finish(p, masked(p, m, grad));
}

lt_tensor *lt_ew_grad_clamp_min(lt_tensor *grad, lt_tensor *self, lt_tensor *min, lt_tensor *max) {
  pool P = {0}, *p = &P;
  lt_tensor *m = lt(p, self, min);
  if (max) m = logical_and(p, m, lt(p, min, max));
  return finish(p, masked(p, m, grad));
}

lt_tensor *lt_ew_grad_clamp_max(lt_tensor *grad, lt_tensor *self, lt_tensor *min, lt_tensor *max) {
  pool P = {0}, *p = &P;
  lt_tensor *m = gt(p, self, max);
  if (min) m = logical_or(p, m, lt(p, max, min));
  return finish(p, masked(p, m, grad));
}

lt_tensor *lt_ew_grad_where_self(lt_tensor *grad, lt_tensor *condition) {
  pool P = {0}, *p = &P;
  return finish(p, masked(p, condition, grad));
}

lt_tensor *lt_ew_grad_where_other(lt_tensor *grad, lt_tensor *condition) {
  pool P = {0}, *p = &P;
  return finish(p, where(p, condition, num(p, 0), grad));
}

lt_tensor *lt_ew_grad_nan_to_num(lt_tensor *grad, lt_tensor *self) {
  pool P = {0}, *p = &P;
  return finish(p, masked(p, isfinite_(p, self), grad));
}

/* ---- unary math ---- */

lt_tensor *lt_ew_grad_abs(lt_tensor *grad, lt_tensor *self) {
  pool P = {0}, *p = &P;
  if (lt_dtype_is_complex((lt_dtype)self->dtype)) return finish(p, mul(p, grad, keep(p, lt_sgn(self))));   /* grad z/|z| */
  return finish(p, mul(p, grad, sign_(p, self)));
}

static lt_tensor *square_hd(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_square(lt_tensor *grad, lt_tensor *self) { return lt_grad_holomorphic(grad, self, square_hd); }
static lt_tensor *square_hd(lt_tensor *grad, lt_tensor *self) {
  pool P = {0}, *p = &P;
  return finish(p, mul(p, grad, mul(p, self, num(p, 2))));
}

static lt_tensor *sqrt_hd(lt_tensor *grad, lt_tensor *result);
lt_tensor *lt_ew_grad_sqrt(lt_tensor *grad, lt_tensor *result) { return lt_grad_holomorphic(grad, result, sqrt_hd); }
static lt_tensor *sqrt_hd(lt_tensor *grad, lt_tensor *result) {
  pool P = {0}, *p = &P;
  return finish(p, dv(p, grad, mul(p, result, num(p, 2))));
}

/* d x^(-1/2) = -1/2 x^(-3/2) = -1/2 result^3 */
static lt_tensor *rsqrt_hd(lt_tensor *grad, lt_tensor *result);
lt_tensor *lt_ew_grad_rsqrt(lt_tensor *grad, lt_tensor *result) { return lt_grad_holomorphic(grad, result, rsqrt_hd); }
static lt_tensor *rsqrt_hd(lt_tensor *grad, lt_tensor *result) {
  pool P = {0}, *p = &P;
  lt_tensor *r3 = mul(p, mul(p, result, result), result);
  return finish(p, mul(p, grad, mul(p, r3, num(p, -0.5))));
}

static lt_tensor *reciprocal_hd(lt_tensor *grad, lt_tensor *result);
lt_tensor *lt_ew_grad_reciprocal(lt_tensor *grad, lt_tensor *result) { return lt_grad_holomorphic(grad, result, reciprocal_hd); }
static lt_tensor *reciprocal_hd(lt_tensor *grad, lt_tensor *result) {
  pool P = {0}, *p = &P;
  return finish(p, neg(p, mul(p, grad, mul(p, result, result))));
}

lt_tensor *lt_ew_grad_exp2(lt_tensor *grad, lt_tensor *result) {
  pool P = {0}, *p = &P;
  return finish(p, mul(p, grad, mul(p, result, num(p, LN2))));
}

lt_tensor *lt_ew_grad_expm1(lt_tensor *grad, lt_tensor *result) {
  pool P = {0}, *p = &P;
  return finish(p, mul(p, grad, add(p, result, num(p, 1))));
}

static lt_tensor *log_hd(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_log(lt_tensor *grad, lt_tensor *self) { return lt_grad_holomorphic(grad, self, log_hd); }
static lt_tensor *log_hd(lt_tensor *grad, lt_tensor *self) {
  return lt_div(grad, self, NULL);
}

static lt_tensor *log2_hd(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_log2(lt_tensor *grad, lt_tensor *self) { return lt_grad_holomorphic(grad, self, log2_hd); }
static lt_tensor *log2_hd(lt_tensor *grad, lt_tensor *self) {
  pool P = {0}, *p = &P;
  return finish(p, dv(p, grad, mul(p, self, num(p, LN2))));
}

static lt_tensor *log10_hd(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_log10(lt_tensor *grad, lt_tensor *self) { return lt_grad_holomorphic(grad, self, log10_hd); }
static lt_tensor *log10_hd(lt_tensor *grad, lt_tensor *self) {
  pool P = {0}, *p = &P;
  return finish(p, dv(p, grad, mul(p, self, num(p, LN10))));
}

lt_tensor *lt_ew_grad_log1p(lt_tensor *grad, lt_tensor *self) {
  pool P = {0}, *p = &P;
  return finish(p, dv(p, grad, add(p, self, num(p, 1))));
}

static lt_tensor *sin_hd(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_sin(lt_tensor *grad, lt_tensor *self) { return lt_grad_holomorphic(grad, self, sin_hd); }
static lt_tensor *sin_hd(lt_tensor *grad, lt_tensor *self) {
  pool P = {0}, *p = &P;
  return finish(p, mul(p, grad, cos_(p, self)));
}

static lt_tensor *cos_hd(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_cos(lt_tensor *grad, lt_tensor *self) { return lt_grad_holomorphic(grad, self, cos_hd); }
static lt_tensor *cos_hd(lt_tensor *grad, lt_tensor *self) {
  pool P = {0}, *p = &P;
  return finish(p, neg(p, mul(p, grad, sin_(p, self))));
}

/* 1 + tan^2 */
static lt_tensor *tan_hd(lt_tensor *grad, lt_tensor *result);
lt_tensor *lt_ew_grad_tan(lt_tensor *grad, lt_tensor *result) { return lt_grad_holomorphic(grad, result, tan_hd); }
static lt_tensor *tan_hd(lt_tensor *grad, lt_tensor *result) {
  pool P = {0}, *p = &P;
  return finish(p, mul(p, grad, add(p, mul(p, result, result), num(p, 1))));
}

static lt_tensor *asin_d(pool *p, lt_tensor *grad, lt_tensor *self) {
  return dv(p, grad, sqrt_(p, sub(p, num(p, 1), mul(p, self, self))));
}

static lt_tensor *asin_hd(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_asin(lt_tensor *grad, lt_tensor *self) { return lt_grad_holomorphic(grad, self, asin_hd); }
static lt_tensor *asin_hd(lt_tensor *grad, lt_tensor *self) {
  pool P = {0}, *p = &P;
  return finish(p, asin_d(p, grad, self));
}

static lt_tensor *acos_hd(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_acos(lt_tensor *grad, lt_tensor *self) { return lt_grad_holomorphic(grad, self, acos_hd); }
static lt_tensor *acos_hd(lt_tensor *grad, lt_tensor *self) {
  pool P = {0}, *p = &P;
  return finish(p, neg(p, asin_d(p, grad, self)));
}

static lt_tensor *atan_hd(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_atan(lt_tensor *grad, lt_tensor *self) { return lt_grad_holomorphic(grad, self, atan_hd); }
static lt_tensor *atan_hd(lt_tensor *grad, lt_tensor *self) {
  pool P = {0}, *p = &P;
  return finish(p, dv(p, grad, add(p, mul(p, self, self), num(p, 1))));
}

static lt_tensor *sinh_hd(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_sinh(lt_tensor *grad, lt_tensor *self) { return lt_grad_holomorphic(grad, self, sinh_hd); }
static lt_tensor *sinh_hd(lt_tensor *grad, lt_tensor *self) {
  pool P = {0}, *p = &P;
  return finish(p, mul(p, grad, cosh_(p, self)));
}

static lt_tensor *cosh_hd(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_cosh(lt_tensor *grad, lt_tensor *self) { return lt_grad_holomorphic(grad, self, cosh_hd); }
static lt_tensor *cosh_hd(lt_tensor *grad, lt_tensor *self) {
  pool P = {0}, *p = &P;
  return finish(p, mul(p, grad, sinh_(p, self)));
}

static lt_tensor *tanh_hd(lt_tensor *grad, lt_tensor *result);
lt_tensor *lt_ew_grad_tanh(lt_tensor *grad, lt_tensor *result) { return lt_grad_holomorphic(grad, result, tanh_hd); }
static lt_tensor *tanh_hd(lt_tensor *grad, lt_tensor *result) {
  pool P = {0}, *p = &P;
  return finish(p, mul(p, grad, sub(p, num(p, 1), mul(p, result, result))));
}

static lt_tensor *sigmoid_hd(lt_tensor *grad, lt_tensor *result);
lt_tensor *lt_ew_grad_sigmoid(lt_tensor *grad, lt_tensor *result) { return lt_grad_holomorphic(grad, result, sigmoid_hd); }
static lt_tensor *sigmoid_hd(lt_tensor *grad, lt_tensor *result) {
  pool P = {0}, *p = &P;
  return finish(p, mul(p, grad, mul(p, result, sub(p, num(p, 1), result))));
}

/* 1 / (p (1 - p)); with eps the input was clamped, so 0 outside [eps, 1 - eps] */
lt_tensor *lt_ew_grad_logit(lt_tensor *grad, lt_tensor *self, lt_scalar eps) {
  pool P = {0}, *p = &P;
  lt_tensor *g = dv(p, grad, mul(p, self, sub(p, num(p, 1), self)));
  if (!lt_scalar_is_none(eps)) {
    double e = lt_scalar_to_double(eps);
    lt_tensor *out = logical_or(p, lt(p, self, num(p, e)), gt(p, self, num(p, 1 - e)));
    g = where(p, out, num(p, 0), g);
  }
  return finish(p, g);
}

/* 2/sqrt(pi) exp(-x^2), with the sign for erfc */
static lt_tensor *erf_d(pool *p, lt_tensor *grad, lt_tensor *self, double c) {
  return mul(p, grad, mul(p, exp_(p, neg(p, mul(p, self, self))), num(p, c)));
}

lt_tensor *lt_ew_grad_erf(lt_tensor *grad, lt_tensor *self) {
  pool P = {0}, *p = &P;
  return finish(p, erf_d(p, grad, self, TWO_OVER_SQRTPI));
}

lt_tensor *lt_ew_grad_erfc(lt_tensor *grad, lt_tensor *self) {
  pool P = {0}, *p = &P;
  return finish(p, erf_d(p, grad, self, -TWO_OVER_SQRTPI));
}

lt_tensor *lt_ew_grad_erfinv(lt_tensor *grad, lt_tensor *result) {
  pool P = {0}, *p = &P;
  return finish(p, mul(p, grad, mul(p, exp_(p, mul(p, result, result)), num(p, SQRTPI_OVER_TWO))));
}

/* ---- activations ---- */

lt_tensor *lt_ew_grad_relu(lt_tensor *grad, lt_tensor *result) {
  pool P = {0}, *p = &P;
  return finish(p, masked(p, gt(p, result, num(p, 0)), grad));
}

/* hardtanh passes the gradient strictly inside (min_val, max_val) */
lt_tensor *lt_ew_grad_hardtanh(lt_tensor *grad, lt_tensor *self, lt_scalar min_val, lt_scalar max_val) {
  pool P = {0}, *p = &P;
  lt_tensor *m = logical_and(p, gt(p, self, scal(p, min_val)), lt(p, self, scal(p, max_val)));
  return finish(p, masked(p, m, grad));
}

lt_tensor *lt_ew_grad_relu6(lt_tensor *grad, lt_tensor *self) {
  return lt_ew_grad_hardtanh(grad, self, lt_scalar_int(0), lt_scalar_int(6));
}

lt_tensor *lt_ew_grad_leaky_relu(lt_tensor *grad, lt_tensor *self, lt_scalar negative_slope) {
  pool P = {0}, *p = &P;
  return finish(p, where(p, gt(p, self, num(p, 0)), grad, mul(p, grad, scal(p, negative_slope))));
}

/* x > 0: scale; else scale * alpha * input_scale * exp(x * input_scale) */
/* A plain backward (no create_graph) takes grad * act'(self) in one fused pass
** (nn_act.c); a recorded one builds the derivative from ops so it can be
** differentiated again. */
#define FUSED_OK(g, x) (!lt_grad_enabled() && (g)->dtype == (x)->dtype && lt_tensor_same_shape((g), (x)))

lt_tensor *lt_ew_grad_elu(lt_tensor *grad, lt_tensor *self, lt_scalar alpha, lt_scalar scale, lt_scalar input_scale) {
  pool P = {0}, *p = &P;
  double a = lt_scalar_to_double(alpha), s = lt_scalar_to_double(scale), is = lt_scalar_to_double(input_scale);
  if (FUSED_OK(grad, self)) return lt__activation_backward(grad, self, "elu", a, s, is);
  lt_tensor *e = exp_(p, mul(p, self, num(p, is)));
  lt_tensor *negpart = mul(p, grad, mul(p, e, num(p, s * a * is)));
  return finish(p, where(p, gt(p, self, num(p, 0)), mul(p, grad, num(p, s)), negpart));
}

lt_tensor *lt_ew_grad_gelu(lt_tensor *grad, lt_tensor *self, const char *approximate) {
  if (FUSED_OK(grad, self))
    return lt__activation_backward(grad, self, approximate && strcmp(approximate, "tanh") == 0 ? "gelu_tanh" : "gelu",
                                   0, 0, 0);
  pool P = {0}, *p = &P;
  lt_tensor *d;
  if (approximate && strcmp(approximate, "tanh") == 0) {
    /* y = x/2 (1 + tanh(u)), u = k (x + c x^3): y' = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3c x^2) */
    const double k = SQRT_2_OVER_PI, c = 0.044715;
    lt_tensor *x2 = mul(p, self, self);
    lt_tensor *u = mul(p, mul(p, self, add(p, mul(p, x2, num(p, c)), num(p, 1))), num(p, k));
    lt_tensor *t = tanh_(p, u);
    lt_tensor *du = mul(p, add(p, mul(p, x2, num(p, 3 * c)), num(p, 1)), num(p, k));
    lt_tensor *a = mul(p, add(p, t, num(p, 1)), num(p, 0.5));
    lt_tensor *b = mul(p, mul(p, mul(p, self, num(p, 0.5)), sub(p, num(p, 1), mul(p, t, t))), du);
    d = add(p, a, b);
  } else {
    /* y = x Phi(x): y' = Phi(x) + x phi(x) */
    lt_tensor *cdf = mul(p, add(p, erf_(p, mul(p, self, num(p, SQRT1_2))), num(p, 1)), num(p, 0.5));
    lt_tensor *pdf = mul(p, exp_(p, mul(p, mul(p, self, self), num(p, -0.5))), num(p, INV_SQRT_2PI));
    d = add(p, cdf, mul(p, self, pdf));
  }
  return finish(p, mul(p, grad, d));
}

/* s (1 + x (1 - s)), s = sigmoid(x) */
lt_tensor *lt_ew_grad_silu(lt_tensor *grad, lt_tensor *self) {
  if (FUSED_OK(grad, self)) return lt__activation_backward(grad, self, "silu", 0, 0, 0);
  pool P = {0}, *p = &P;
  lt_tensor *s = sigmoid_(p, self);
  lt_tensor *d = mul(p, s, add(p, mul(p, self, sub(p, num(p, 1), s)), num(p, 1)));
  return finish(p, mul(p, grad, d));
}

/* sigmoid(beta x), and 1 where the op is linear (beta x > threshold) */
lt_tensor *lt_ew_grad_softplus(lt_tensor *grad, lt_tensor *self, lt_scalar beta, lt_scalar threshold) {
  if (FUSED_OK(grad, self))
    return lt__activation_backward(grad, self, "softplus", lt_scalar_to_double(beta), lt_scalar_to_double(threshold), 0);
  pool P = {0}, *p = &P;
  lt_tensor *z = mul(p, self, scal(p, beta));
  return finish(p, where(p, gt(p, z, scal(p, threshold)), grad, mul(p, grad, sigmoid_(p, z))));
}
