/*
** formulas_math.h — derivative helpers of the ops in src/ops/math.lua.
** Each returns a new reference, or NULL with the error set; the generated code
** reduces it to the input's shape and dtype.
*/
#ifndef LT_FORMULAS_MATH_MORE_H
#define LT_FORMULAS_MATH_MORE_H

#include "autograd.h"

lt_tensor *lt_mm_grad_logaddexp(lt_tensor *grad, lt_tensor *x, lt_tensor *result);
lt_tensor *lt_mm_grad_logaddexp2(lt_tensor *grad, lt_tensor *x, lt_tensor *result);
lt_tensor *lt_mm_grad_xlogy_self(lt_tensor *grad, lt_tensor *self, lt_tensor *other);
lt_tensor *lt_mm_grad_xlogy_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other);
lt_tensor *lt_mm_grad_fmax_self(lt_tensor *grad, lt_tensor *self, lt_tensor *other);
lt_tensor *lt_mm_grad_fmax_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other);
lt_tensor *lt_mm_grad_fmin_self(lt_tensor *grad, lt_tensor *self, lt_tensor *other);
lt_tensor *lt_mm_grad_fmin_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other);
lt_tensor *lt_mm_grad_sinc(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_mm_grad_lgamma(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_mm_grad_digamma(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_mm_grad_polygamma(lt_tensor *grad, int64_t n, lt_tensor *self);
lt_tensor *lt_mm_grad_i0(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_mm_grad_i1(lt_tensor *grad, lt_tensor *self, lt_tensor *result);
lt_tensor *lt_mm_grad_logcumsumexp(lt_tensor *grad, lt_tensor *self, lt_tensor *result, int64_t dim);

#endif
