/*
** formulas_fft.h — derivative helpers for torch.fft's primitives (src/ops/fft.lua).
** The gradient of a linear transform is its adjoint: the transform of the other sign
** with the same scale, and for the real ones the half spectrum's weighting (a
** frequency of a real signal's half spectrum stands for itself and its mirror image).
** Each returns a new reference or NULL with the error set.
*/
#ifndef LT_FORMULAS_FFT_H
#define LT_FORMULAS_FFT_H

#include "autograd.h"

lt_tensor *lt_grad_fft_c2c(lt_tensor *grad, lt_intlist dim, int64_t normalization, bool forward);
/* rfft's adjoint: c2r of the other sign of grad with its doubled frequencies halved */
lt_tensor *lt_grad_fft_r2c(lt_tensor *grad, const lt_input_meta *self_meta, lt_intlist dim,
                           int64_t normalization, bool forward);
/* irfft's adjoint: r2c of the other sign of grad, the doubled frequencies doubled */
lt_tensor *lt_grad_fft_c2r(lt_tensor *grad, lt_intlist dim, int64_t normalization,
                           int64_t last_dim_size, bool forward);

#endif
