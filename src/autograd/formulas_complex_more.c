/*
** formulas_complex_more.c — derivatives of asinh, acosh, atanh (real and
** complex: the real formula through lt_grad_holomorphic) and of sgn of a
** complex tensor. Written with entry points, so double backward works.
*/
#include "formulas_complex_more.h"
#include "formulas_complex.h"
#include "formulas_reduce.h"
#include "lt_ops.h"
#include "core/tpool.h"

typedef lt_tpool pool;
static inline lt_tensor *keep(pool *p, lt_tensor *t) { return lt_tpool_keep(p, t); }
static lt_tensor *num(pool *p, double v) { return keep(p, lt_tensor_wrapped_number(lt_scalar_float(v))); }
#define OK2(a, b) ((a) && (b))
static lt_tensor *mul(pool *p, lt_tensor *a, lt_tensor *b) { return OK2(a, b) ? keep(p, lt_mul(a, b)) : NULL; }
static lt_tensor *dv(pool *p, lt_tensor *a, lt_tensor *b) { return OK2(a, b) ? keep(p, lt_div(a, b, NULL)) : NULL; }
static lt_tensor *add(pool *p, lt_tensor *a, lt_tensor *b) { return OK2(a, b) ? keep(p, lt_add(a, b, lt_scalar_int(1))) : NULL; }
static lt_tensor *sub(pool *p, lt_tensor *a, lt_tensor *b) { return OK2(a, b) ? keep(p, lt_sub(a, b, lt_scalar_int(1))) : NULL; }
static lt_tensor *sqrt_(pool *p, lt_tensor *a) { return a ? keep(p, lt_sqrt(a)) : NULL; }

/* the real formulas grad * f'(z); lt_grad_holomorphic conjugates for complex z */
static lt_tensor *asinh_hd(lt_tensor *grad, lt_tensor *z) {
  pool P = {0}, *p = &P;
  return lt_tpool_finish(p, dv(p, grad, sqrt_(p, add(p, mul(p, z, z), num(p, 1)))));
}
static lt_tensor *acosh_hd(lt_tensor *grad, lt_tensor *z) {
  pool P = {0}, *p = &P;
  /* sqrt(z - 1) sqrt(z + 1), not sqrt(z^2 - 1): the two differ in sign off the real line (left
  ** half-plane), and acosh's principal branch follows the product */
  return lt_tpool_finish(p, dv(p, grad, mul(p, sqrt_(p, sub(p, z, num(p, 1))), sqrt_(p, add(p, z, num(p, 1))))));
}
static lt_tensor *atanh_hd(lt_tensor *grad, lt_tensor *z) {
  pool P = {0}, *p = &P;
  return lt_tpool_finish(p, dv(p, grad, sub(p, num(p, 1), mul(p, z, z))));
}

lt_tensor *lt_grad_asinh(lt_tensor *grad, lt_tensor *self) { return lt_grad_holomorphic(grad, self, asinh_hd); }
lt_tensor *lt_grad_acosh(lt_tensor *grad, lt_tensor *self) { return lt_grad_holomorphic(grad, self, acosh_hd); }
lt_tensor *lt_grad_atanh(lt_tensor *grad, lt_tensor *self) { return lt_grad_holomorphic(grad, self, atanh_hd); }

lt_tensor *lt_grad_cumprod_cx(lt_tensor *grad, lt_tensor *self, lt_tensor *result, int64_t dim) {
  if (!lt_dtype_is_complex((lt_dtype)self->dtype)) return lt_grad_cumprod(grad, self, result, dim);
  pool P = {0}, *p = &P;
  lt_tensor *gc = keep(p, lt_grad_conj(grad));
  lt_tensor *d = gc ? keep(p, lt_grad_cumprod(gc, self, result, dim)) : NULL;
  return lt_tpool_finish(p, d ? keep(p, lt_conj(d)) : NULL);
}

/* With s = z/|z| = z^(1/2) conj(z)^(-1/2): ds/dz = 1/(2|z|) and
** ds/dconj(z) = -s^2/(2|z|), so the gradient grad * conj(ds/dz) +
** conj(grad) * ds/dconj(z) is (grad - conj(grad) s^2) / (2|z|). At z = 0 sgn
** has no derivative; 0 there, as PyTorch. */
lt_tensor *lt_grad_sgn(lt_tensor *grad, lt_tensor *self, lt_tensor *result) {
  pool P = {0}, *p = &P;
  lt_tensor *a = keep(p, lt_abs(self));
  lt_tensor *gc = keep(p, lt_grad_conj(grad));
  lt_tensor *num_ = sub(p, grad, mul(p, gc, mul(p, result, result)));
  lt_tensor *g = dv(p, num_, mul(p, a, num(p, 2)));
  lt_tensor *zero = a ? keep(p, lt_eq(a, num(p, 0))) : NULL;
  lt_tensor *r = (g && zero) ? keep(p, lt_where(zero, num(p, 0), g)) : NULL;
  return lt_tpool_finish(p, r);
}
