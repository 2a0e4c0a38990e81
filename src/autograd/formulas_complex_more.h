/*
** formulas_complex_more.h — derivative helpers of the ops added for the
** breadth of complex support: the inverse hyperbolic functions
** (src/ops/hyperbolic.lua) and sgn of a complex tensor. Conjugate Wirtinger
** convention, as formulas_complex.h. Each returns a new reference, or NULL
** with the error set.
*/
#ifndef LT_FORMULAS_COMPLEX_MORE_H
#define LT_FORMULAS_COMPLEX_MORE_H

#include "autograd.h"

lt_tensor *lt_grad_asinh(lt_tensor *grad, lt_tensor *self);   /* grad * conj(1 / sqrt(z^2 + 1)) */
lt_tensor *lt_grad_acosh(lt_tensor *grad, lt_tensor *self);   /* grad * conj(1 / (sqrt(z - 1) sqrt(z + 1))) */
lt_tensor *lt_grad_atanh(lt_tensor *grad, lt_tensor *self);   /* grad * conj(1 / (1 - z^2)) */
/* cumprod's derivative for real or complex self: a complex one takes
** conj(lt_grad_cumprod(conj(grad), ...)), the real formula being linear in grad
** with holomorphic partial derivatives */
lt_tensor *lt_grad_cumprod_cx(lt_tensor *grad, lt_tensor *self, lt_tensor *result, int64_t dim);
/* sgn(z) = z / |z|, not holomorphic: (grad - conj(grad) sgn^2) / (2 |z|), 0 at z = 0 */
lt_tensor *lt_grad_sgn(lt_tensor *grad, lt_tensor *self, lt_tensor *result);

#endif
