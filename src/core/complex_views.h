/*
** complex_views.h — the views between complex tensors and their real parts
** (real, imag, view_as_real, view_as_complex): stride-only, shared by every
** backend like core/views.h, declared as `any` kernels in src/ops/complex.lua.
** Each returns a new reference, NULL with the error slot set.
*/
#ifndef LT_COMPLEX_VIEWS_H
#define LT_COMPLEX_VIEWS_H

#include "core/tensor.h"

lt_tensor *lt_core_real(lt_tensor *self);             /* a real self: self's own view */
lt_tensor *lt_core_imag(lt_tensor *self);             /* complex only */
lt_tensor *lt_core_view_as_real(lt_tensor *self);     /* [..., 2] of the real dtype */
lt_tensor *lt_core_view_as_complex(lt_tensor *self);  /* float32/float64 [..., 2], last stride 1 */

#endif
