/*
** formulas_special.c — derivative helpers of torch.special's own ops
** (src/ops/special.lua), written with the ops' entry points so that
** create_graph records them (double backward). Intermediates go into a pool;
** the call macros pass a NULL (an earlier failure, error already set) straight
** through, so each helper checks once, in finish.
*/
#include "formulas_special.h"
#include "lt_ops.h"
#include "core/error.h"
#include "core/tpool.h"

#define SP_1_SQRT_2PI 0.39894228040143267794   /* 1 / sqrt(2 pi) */
#define SP_SQRT_2PI 2.50662827463100050242
#define SP_2_SQRTPI 1.12837916709551257390     /* 2 / sqrt(pi) */

/* f(a, ...) kept in the pool, or NULL when an argument is NULL; each
** argument is evaluated once */
typedef lt_tensor *(*fn1)(lt_tensor *);
typedef lt_tensor *(*fn2)(lt_tensor *, lt_tensor *);
typedef lt_tensor *(*fn3)(lt_tensor *, lt_tensor *, lt_tensor *);
static lt_tensor *c1(lt_tpool *p, fn1 f, lt_tensor *a) { return a ? lt_tpool_keep(p, f(a)) : NULL; }
static lt_tensor *c2(lt_tpool *p, fn2 f, lt_tensor *a, lt_tensor *b) {
  return (a && b) ? lt_tpool_keep(p, f(a, b)) : NULL;
}
static lt_tensor *c3(lt_tpool *p, fn3 f, lt_tensor *a, lt_tensor *b, lt_tensor *c) {
  return (a && b && c) ? lt_tpool_keep(p, f(a, b, c)) : NULL;
}
#define C1(f, a) c1(p, f, a)
#define C2(f, a, b) c2(p, f, a, b)
#define C3(f, a, b, c) c3(p, f, a, b, c)

static lt_tensor *num(lt_tpool *p, double v) { return lt_tpool_keep(p, lt_tensor_wrapped_number(lt_scalar_float(v))); }
static lt_tensor *sp_sub(lt_tensor *a, lt_tensor *b) { return lt_sub(a, b, lt_scalar_int(1)); }
static lt_tensor *sp_add(lt_tensor *a, lt_tensor *b) { return lt_add(a, b, lt_scalar_int(1)); }
static lt_tensor *sp_div(lt_tensor *a, lt_tensor *b) { return lt_div(a, b, NULL); }

/* erfcx'(x) = 2 x erfcx(x) - 2 / sqrt(pi) */
lt_tensor *lt_sp_grad_erfcx(lt_tensor *grad, lt_tensor *self, lt_tensor *result) {
  lt_tpool pp = {0}, *p = &pp;
  lt_tensor *xr = C2(lt_mul, C2(lt_mul, self, result), num(p, 2));
  return lt_tpool_finish(p, C2(lt_mul, grad, C2(sp_sub, xr, num(p, SP_2_SQRTPI))));
}

/* i0e'(x) = i1e(x) - sign(x) i0e(x) */
lt_tensor *lt_sp_grad_i0e(lt_tensor *grad, lt_tensor *self, lt_tensor *result) {
  lt_tpool pp = {0}, *p = &pp;
  lt_tensor *d = C2(sp_sub, C1(lt_special_i1e, self), C2(lt_mul, C1(lt_sign, self), result));
  return lt_tpool_finish(p, C2(lt_mul, grad, d));
}

/* f'(x) = g(x) - f(x) (s(x) + 1/x), 1/2 at 0 (where g(0) = 1 and f(x) ~ x / 2):
** i1e with g = i0e, s = sign; J1 and Y1 with g = J0, Y0 and s = 0 */
static lt_tensor *order1_grad(lt_tpool *p, lt_tensor *grad, lt_tensor *self, lt_tensor *result,
                              lt_tensor *g, lt_tensor *s) {
  lt_tensor *z = C2(lt_eq, self, num(p, 0));
  lt_tensor *xs = C3(lt_where, z, num(p, 1), self);
  lt_tensor *k = C1(lt_reciprocal, xs);
  if (s) k = C2(sp_add, k, s);
  lt_tensor *d = C2(sp_sub, g, C2(lt_mul, result, k));
  return lt_tpool_finish(p, C2(lt_mul, grad, C3(lt_where, z, num(p, 0.5), d)));
}

lt_tensor *lt_sp_grad_i1e(lt_tensor *grad, lt_tensor *self, lt_tensor *result) {
  lt_tpool pp = {0}, *p = &pp;
  return order1_grad(p, grad, self, result, C1(lt_special_i0e, self), C1(lt_sign, self));
}

/* the Gaussian density e^(-x^2/2) / sqrt(2 pi) */
static lt_tensor *density(lt_tpool *p, lt_tensor *x) {
  return C2(lt_mul, C1(lt_exp, C2(lt_mul, C1(lt_square, x), num(p, -0.5))), num(p, SP_1_SQRT_2PI));
}

lt_tensor *lt_sp_grad_ndtr(lt_tensor *grad, lt_tensor *self) {
  lt_tpool pp = {0}, *p = &pp;
  return lt_tpool_finish(p, C2(lt_mul, grad, density(p, self)));
}

/* ndtri'(p) = sqrt(2 pi) e^(x^2/2), x = ndtri(p) */
lt_tensor *lt_sp_grad_ndtri(lt_tensor *grad, lt_tensor *result) {
  lt_tpool pp = {0}, *p = &pp;
  lt_tensor *e = C1(lt_exp, C2(lt_mul, C1(lt_square, result), num(p, 0.5)));
  return lt_tpool_finish(p, C2(lt_mul, grad, C2(lt_mul, e, num(p, SP_SQRT_2PI))));
}

/* log_ndtr'(x) = density(x) / ndtr(x) = e^(-x^2/2 - log_ndtr(x)) / sqrt(2 pi), which
** stays finite in the lower tail where both factors underflow */
lt_tensor *lt_sp_grad_log_ndtr(lt_tensor *grad, lt_tensor *self, lt_tensor *result) {
  lt_tpool pp = {0}, *p = &pp;
  lt_tensor *a = C2(sp_sub, C2(lt_mul, C1(lt_square, self), num(p, -0.5)), result);
  lt_tensor *d = C2(lt_mul, C1(lt_exp, a), num(p, SP_1_SQRT_2PI));
  return lt_tpool_finish(p, C2(lt_mul, grad, d));
}

/* entr'(x) = -(1 + log x) */
lt_tensor *lt_sp_grad_entr(lt_tensor *grad, lt_tensor *self) {
  lt_tpool pp = {0}, *p = &pp;
  lt_tensor *d = C1(lt_neg, C2(sp_add, C1(lt_log, self), num(p, 1)));
  return lt_tpool_finish(p, C2(lt_mul, grad, d));
}

/* J0' = -J1, Y0' = -Y1; J1' = J0 - J1 / x (1/2 at 0), Y1' = Y0 - Y1 / x */
lt_tensor *lt_sp_grad_bessel_j0(lt_tensor *grad, lt_tensor *self) {
  lt_tpool pp = {0}, *p = &pp;
  return lt_tpool_finish(p, C2(lt_mul, grad, C1(lt_neg, C1(lt_special_bessel_j1, self))));
}
lt_tensor *lt_sp_grad_bessel_y0(lt_tensor *grad, lt_tensor *self) {
  lt_tpool pp = {0}, *p = &pp;
  return lt_tpool_finish(p, C2(lt_mul, grad, C1(lt_neg, C1(lt_special_bessel_y1, self))));
}
lt_tensor *lt_sp_grad_bessel_j1(lt_tensor *grad, lt_tensor *self, lt_tensor *result) {
  lt_tpool pp = {0}, *p = &pp;
  return order1_grad(p, grad, self, result, C1(lt_special_bessel_j0, self), NULL);
}
/* Y1 has a pole at 0: there the 1/2 of order1_grad is replaced by Y1's NaN */
lt_tensor *lt_sp_grad_bessel_y1(lt_tensor *grad, lt_tensor *self, lt_tensor *result) {
  lt_tpool pp = {0}, *p = &pp;
  lt_tensor *d = C2(sp_sub, C1(lt_special_bessel_y0, self), C2(sp_div, result, self));
  return lt_tpool_finish(p, C2(lt_mul, grad, d));
}

/* d/dx x log1p(y) = log1p(y), taken as 0 where x is 0 and y <= -1 (as PyTorch)
** and where grad is 0 (xlog1py(grad, y)) */
lt_tensor *lt_sp_grad_xlog1py_self(lt_tensor *grad, lt_tensor *self, lt_tensor *other) {
  lt_tpool pp = {0}, *p = &pp;
  lt_tensor *mask = C2(lt_logical_and, C2(lt_eq, self, num(p, 0)), C2(lt_le, other, num(p, -1)));
  lt_tensor *g = C2(lt_special_xlog1py, grad, other);
  return lt_tpool_finish(p, C3(lt_where, mask, num(p, 0), g));
}
/* d/dy x log1p(y) = x / (1 + y) */
lt_tensor *lt_sp_grad_xlog1py_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other) {
  lt_tpool pp = {0}, *p = &pp;
  lt_tensor *d = C2(sp_div, self, C2(sp_add, other, num(p, 1)));
  return lt_tpool_finish(p, C2(lt_mul, grad, d));
}

lt_tensor *lt_sp_grad_zeta_self(lt_tensor *grad) {
  (void)grad;
  return lt_error_null("special.zeta: the derivative with respect to argument 'self' (the exponent) is not implemented");
}
/* d/dq zeta(s, q) = -s zeta(s + 1, q) */
lt_tensor *lt_sp_grad_zeta_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other) {
  lt_tpool pp = {0}, *p = &pp;
  lt_tensor *z = C2(lt_special_zeta, C2(sp_add, self, num(p, 1)), other);
  return lt_tpool_finish(p, C2(lt_mul, grad, C1(lt_neg, C2(lt_mul, self, z))));
}

/* K0' = -K1; K1' = -K0 - K1 / x; (e^x K0)' = e^x K0 - e^x K1; (e^x K1)' = e^x K1 (1 - 1/x) - e^x K0 */
lt_tensor *lt_sp_grad_bessel_k0(lt_tensor *grad, lt_tensor *self) {
  lt_tpool pp = {0}, *p = &pp;
  return lt_tpool_finish(p, C2(lt_mul, grad, C1(lt_neg, C1(lt_special_modified_bessel_k1, self))));
}
lt_tensor *lt_sp_grad_bessel_k1(lt_tensor *grad, lt_tensor *self, lt_tensor *result) {
  lt_tpool pp = {0}, *p = &pp;
  lt_tensor *d = C2(sp_add, C1(lt_special_modified_bessel_k0, self), C2(sp_div, result, self));
  return lt_tpool_finish(p, C2(lt_mul, grad, C1(lt_neg, d)));
}
lt_tensor *lt_sp_grad_bessel_k0e(lt_tensor *grad, lt_tensor *self, lt_tensor *result) {
  lt_tpool pp = {0}, *p = &pp;
  lt_tensor *d = C2(sp_sub, result, C1(lt_special_scaled_modified_bessel_k1, self));
  return lt_tpool_finish(p, C2(lt_mul, grad, d));
}
lt_tensor *lt_sp_grad_bessel_k1e(lt_tensor *grad, lt_tensor *self, lt_tensor *result) {
  lt_tpool pp = {0}, *p = &pp;
  lt_tensor *d = C2(sp_sub, C2(sp_sub, result, C2(sp_div, result, self)),
                    C1(lt_special_scaled_modified_bessel_k0, self));
  return lt_tpool_finish(p, C2(lt_mul, grad, d));
}

lt_tensor *lt_sp_grad_igamma_self(lt_tensor *grad) {
  (void)grad;
  return lt_error_null("igamma: the derivative with respect to argument 'self' (a) is not implemented");
}
/* d/dx P(a, x) = x^(a-1) e^-x / Gamma(a) = e^((a - 1) log x - x - lgamma(a)); Q's is its negative */
static lt_tensor *igamma_density(lt_tpool *p, lt_tensor *a, lt_tensor *x) {
  lt_tensor *l = C2(lt_xlogy, C2(sp_sub, a, num(p, 1)), x);
  return C1(lt_exp, C2(sp_sub, C2(sp_sub, l, x), C1(lt_lgamma, a)));
}
lt_tensor *lt_sp_grad_igamma_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other) {
  lt_tpool pp = {0}, *p = &pp;
  return lt_tpool_finish(p, C2(lt_mul, grad, igamma_density(p, self, other)));
}
lt_tensor *lt_sp_grad_igammac_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other) {
  lt_tpool pp = {0}, *p = &pp;
  return lt_tpool_finish(p, C2(lt_mul, grad, C1(lt_neg, igamma_density(p, self, other))));
}
