/*
** formulas_complex.h — derivative helpers of the ops in src/ops/complex.lua,
** in PyTorch's convention for complex gradients: a gradient is dL/d(conj z)
** (conjugate Wirtinger), and a real input of a complex function gets the
** real part. Each returns a new reference, or NULL with the error set.
*/
#ifndef LT_FORMULAS_COMPLEX_H
#define LT_FORMULAS_COMPLEX_H

#include "autograd.h"

lt_tensor *lt_grad_real(lt_tensor *grad, const lt_input_meta *self_meta);   /* grad + 0j (complex self) */
lt_tensor *lt_grad_imag(lt_tensor *grad);                                   /* 0 + grad j */
lt_tensor *lt_grad_view_as_real(lt_tensor *grad);                           /* view_as_complex(grad) */
lt_tensor *lt_grad_real_part(lt_tensor *grad);                              /* real(grad), a copy */
lt_tensor *lt_grad_imag_part(lt_tensor *grad);                              /* imag(grad), a copy */
lt_tensor *lt_grad_angle(lt_tensor *grad, lt_tensor *self);
lt_tensor *lt_grad_polar_abs(lt_tensor *grad, lt_tensor *angle);
lt_tensor *lt_grad_polar_angle(lt_tensor *grad, lt_tensor *result);
/* conj(t) of a complex t; t itself (a new reference) for a real one */
lt_tensor *lt_grad_conj(lt_tensor *t);

#endif
