/*
** formulas_special.h — derivative helpers of the ops in src/ops/special.lua.
** Each returns a new reference, or NULL with the error set; the generated code
** reduces it to the input's shape and dtype.
*/
#ifndef LT_FORMULAS_SPECIAL_H
#define LT_FORMULAS_SPECIAL_H

#include "autograd.h"

lt_tensor *lt_sp_grad_erfcx(lt_tensor *grad, lt_tensor *self, lt_tensor *result);
lt_tensor *lt_sp_grad_i0e(lt_tensor *grad, lt_tensor *self, lt_tensor *result);
lt_tensor *lt_sp_grad_i1e(lt_tensor *grad, lt_tensor *self, lt_tensor *result);
lt_tensor *lt_sp_grad_ndtr(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_sp_grad_ndtri(lt_tensor *grad, lt_tensor *result);
lt_tensor *lt_sp_grad_log_ndtr(lt_tensor *grad, lt_tensor *self, lt_tensor *result);
lt_tensor *lt_sp_grad_entr(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_sp_grad_bessel_j0(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_sp_grad_bessel_j1(lt_tensor *grad, lt_tensor *self, lt_tensor *result);
lt_tensor *lt_sp_grad_bessel_y0(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_sp_grad_bessel_y1(lt_tensor *grad, lt_tensor *self, lt_tensor *result);
lt_tensor *lt_sp_grad_xlog1py_self(lt_tensor *grad, lt_tensor *self, lt_tensor *other);
lt_tensor *lt_sp_grad_xlog1py_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other);
lt_tensor *lt_sp_grad_bessel_k0(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_sp_grad_bessel_k1(lt_tensor *grad, lt_tensor *self, lt_tensor *result);
lt_tensor *lt_sp_grad_bessel_k0e(lt_tensor *grad, lt_tensor *self, lt_tensor *result);
lt_tensor *lt_sp_grad_bessel_k1e(lt_tensor *grad, lt_tensor *self, lt_tensor *result);
/* igamma's and igammac's derivative in a is not implemented (as in PyTorch): an error */
lt_tensor *lt_sp_grad_igamma_self(lt_tensor *grad);
lt_tensor *lt_sp_grad_igamma_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other);
lt_tensor *lt_sp_grad_igammac_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other);
/* zeta's derivative in s is not implemented (as in PyTorch): an error */
lt_tensor *lt_sp_grad_zeta_self(lt_tensor *grad);
lt_tensor *lt_sp_grad_zeta_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other);

#endif
