/*
** special.c — the CUDA kernels of torch.special's own ops (src/ops/special.lua):
** erfcx, i0e, i1e, ndtr, ndtri, log_ndtr, entr, bessel_j0/j1/y0/y1 of one
** input and xlog1py, zeta of two. Like the CPU's (src/cpu/math_special.c)
** integer and bool inputs give the default float dtype; the values come from
** the pointwise family's special group (kernels/special.cu), which computes
** them by the CPU's scalar code (meta/special_math.h). Nothing here has run
** on a GPU.
*/
#include "core/error.h"
#include "cuda/launch.h"
#include "cuda/pointwise.h"
#include "dispatch/dispatch.h"
#include "meta/meta.h"
#include "kernels_cuda.h"   /* generated: lt_ops.h, the kernel types */

#define SPECIAL1(NAME) \
  lt_tensor *lt_cuda_special_##NAME(lt_tensor *self, lt_tensor *out) { \
    LT_CUDA_OPNAME("special." #NAME); \
    lt_cuda_pw w; \
    lt_cuda_pw_init(&w, op, LT_CK_PW_##NAME, lt_cuda_float_type((lt_dtype)self->dtype)); \
    w.in[0] = self; \
    LT_CUDA_PW_RETURN(special_##NAME, &w, out, self, out); \
  }
SPECIAL1(erfcx) SPECIAL1(i0e) SPECIAL1(i1e) SPECIAL1(ndtr) SPECIAL1(ndtri) SPECIAL1(log_ndtr) SPECIAL1(entr)
SPECIAL1(bessel_j0) SPECIAL1(bessel_j1) SPECIAL1(bessel_y0) SPECIAL1(bessel_y1)

#define SPECIAL2(NAME) \
  lt_tensor *lt_cuda_special_##NAME(lt_tensor *self, lt_tensor *other, lt_tensor *out) { \
    LT_CUDA_OPNAME("special." #NAME); \
    lt_cuda_pw w; \
    lt_cuda_pw_init(&w, op, LT_CK_PW_##NAME, lt_cuda_float_type(lt_cuda_rtype2(self, other))); \
    w.in[0] = self; \
    w.in[1] = other; \
    LT_CUDA_PW_RETURN(special_##NAME, &w, out, self, other, out); \
  }
SPECIAL2(xlog1py) SPECIAL2(zeta)
