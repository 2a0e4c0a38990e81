/*
** formulas_elementwise.h — derivative helpers for the elementwise ops, activations and
** conversions (see src/ops/README.md, "Derivatives"). Each returns a new reference, or NULL
** with the error set; the generated code reduces it to the input's shape and dtype.
*/
#ifndef LT_FORMULAS_ELEMENTWISE_H
#define LT_FORMULAS_ELEMENTWISE_H

#include "autograd.h"

lt_tensor *lt_ew_grad_zeros(lt_tensor *grad);
lt_tensor *lt_ew_grad_neg_scale(lt_tensor *grad, lt_scalar alpha);
lt_tensor *lt_ew_grad_div_self(lt_tensor *grad, lt_tensor *other, const char *rounding_mode);
lt_tensor *lt_ew_grad_div_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other, const char *rounding_mode);
lt_tensor *lt_ew_grad_remainder_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other);
lt_tensor *lt_ew_grad_fmod_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other);
lt_tensor *lt_ew_grad_pow_self(lt_tensor *grad, lt_tensor *self, lt_tensor *exponent);
lt_tensor *lt_ew_grad_pow_exponent(lt_tensor *grad, lt_tensor *self, lt_tensor *exponent, lt_tensor *result);
lt_tensor *lt_ew_grad_maximum(lt_tensor *grad, lt_tensor *self, lt_tensor *other);
lt_tensor *lt_ew_grad_minimum(lt_tensor *grad, lt_tensor *self, lt_tensor *other);
lt_tensor *lt_ew_grad_atan2_self(lt_tensor *grad, lt_tensor *self, lt_tensor *other);
lt_tensor *lt_ew_grad_atan2_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other);
lt_tensor *lt_ew_grad_hypot(lt_tensor *grad, lt_tensor *x, lt_tensor *result);
lt_tensor *lt_ew_grad_lerp_self(lt_tensor *grad, lt_tensor *weight);
lt_tensor *lt_ew_grad_lerp_weight(lt_tensor *grad, lt_tensor *self, lt_tensor *end);
lt_tensor *lt_ew_grad_addcmul(lt_tensor *grad, lt_tensor *other, lt_scalar value);
lt_tensor *lt_ew_grad_addcdiv_tensor1(lt_tensor *grad, lt_tensor *tensor2, lt_scalar value);
lt_tensor *lt_ew_grad_addcdiv_tensor2(lt_tensor *grad, lt_tensor *tensor1, lt_tensor *tensor2, lt_scalar value);
lt_tensor *lt_ew_grad_clamp_self(lt_tensor *grad, lt_tensor *self, lt_tensor *min, lt_tensor *max);
lt_tensor *lt_ew_grad_clamp_min(lt_tensor *grad, lt_tensor *self, lt_tensor *min, lt_tensor *max);
lt_tensor *lt_ew_grad_clamp_max(lt_tensor *grad, lt_tensor *self, lt_tensor *min, lt_tensor *max);
lt_tensor *lt_ew_grad_where_self(lt_tensor *grad, lt_tensor *condition);
lt_tensor *lt_ew_grad_where_other(lt_tensor *grad, lt_tensor *condition);
lt_tensor *lt_ew_grad_nan_to_num(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_abs(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_square(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_sqrt(lt_tensor *grad, lt_tensor *result);
lt_tensor *lt_ew_grad_rsqrt(lt_tensor *grad, lt_tensor *result);
lt_tensor *lt_ew_grad_reciprocal(lt_tensor *grad, lt_tensor *result);
lt_tensor *lt_ew_grad_exp2(lt_tensor *grad, lt_tensor *result);
lt_tensor *lt_ew_grad_expm1(lt_tensor *grad, lt_tensor *result);
lt_tensor *lt_ew_grad_log(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_log2(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_log10(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_log1p(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_sin(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_cos(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_tan(lt_tensor *grad, lt_tensor *result);
lt_tensor *lt_ew_grad_asin(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_acos(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_atan(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_sinh(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_cosh(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_tanh(lt_tensor *grad, lt_tensor *result);
lt_tensor *lt_ew_grad_sigmoid(lt_tensor *grad, lt_tensor *result);
lt_tensor *lt_ew_grad_logit(lt_tensor *grad, lt_tensor *self, lt_scalar eps);
lt_tensor *lt_ew_grad_erf(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_erfc(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_erfinv(lt_tensor *grad, lt_tensor *result);
lt_tensor *lt_ew_grad_relu(lt_tensor *grad, lt_tensor *result);
lt_tensor *lt_ew_grad_hardtanh(lt_tensor *grad, lt_tensor *self, lt_scalar min_val, lt_scalar max_val);
lt_tensor *lt_ew_grad_relu6(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_leaky_relu(lt_tensor *grad, lt_tensor *self, lt_scalar negative_slope);
lt_tensor *lt_ew_grad_elu(lt_tensor *grad, lt_tensor *self, lt_scalar alpha, lt_scalar scale, lt_scalar input_scale);
lt_tensor *lt_ew_grad_gelu(lt_tensor *grad, lt_tensor *self, const char *approximate);
lt_tensor *lt_ew_grad_silu(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_ew_grad_softplus(lt_tensor *grad, lt_tensor *self, lt_scalar beta, lt_scalar threshold);

#endif
