/*
** special.c — the CUDA kernels of torch.special's own ops (src/ops/special.lua):
** erfcx, i0e, i1e, ndtr, ndtri, log_ndtr, entr, bessel_j0/j1/y0/y1, the
** modified Bessel functions K of one input and xlog1py, zeta, igamma,
** igammac of two. Like the CPU's (src/cpu/math_special.c)
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

/* lt_cuda_NAME, the op called LUA in errors, on the family's kernel KOP */
#define UNARY_AS(NAME, LUA, KOP) \
  lt_tensor *lt_cuda_##NAME(lt_tensor *self, lt_tensor *out) { \
    LT_CUDA_OPNAME(LUA); \
    lt_cuda_pw w; \
    lt_cuda_pw_init(&w, op, KOP, lt_cuda_float_type((lt_dtype)self->dtype)); \
    w.in[0] = self; \
    LT_CUDA_PW_RETURN(NAME, &w, out, self, out); \
  }
#define BINARY_AS(NAME, LUA, KOP) \
  lt_tensor *lt_cuda_##NAME(lt_tensor *self, lt_tensor *other, lt_tensor *out) { \
    LT_CUDA_OPNAME(LUA); \
    lt_cuda_pw w; \
    lt_cuda_pw_init(&w, op, KOP, lt_cuda_float_type(lt_cuda_rtype2(self, other))); \
    w.in[0] = self; \
    w.in[1] = other; \
    LT_CUDA_PW_RETURN(NAME, &w, out, self, other, out); \
  }

#define SPECIAL1(NAME) UNARY_AS(special_##NAME, "special." #NAME, LT_CK_PW_##NAME)
SPECIAL1(erfcx) SPECIAL1(i0e) SPECIAL1(i1e) SPECIAL1(ndtr) SPECIAL1(ndtri) SPECIAL1(log_ndtr) SPECIAL1(entr)
SPECIAL1(bessel_j0) SPECIAL1(bessel_j1) SPECIAL1(bessel_y0) SPECIAL1(bessel_y1)
/* the modified Bessel functions K: the C names are PyTorch's, the kernels' short */
UNARY_AS(special_modified_bessel_k0, "special.modified_bessel_k0", LT_CK_PW_k0)
UNARY_AS(special_modified_bessel_k1, "special.modified_bessel_k1", LT_CK_PW_k1)
UNARY_AS(special_scaled_modified_bessel_k0, "special.scaled_modified_bessel_k0", LT_CK_PW_k0e)
UNARY_AS(special_scaled_modified_bessel_k1, "special.scaled_modified_bessel_k1", LT_CK_PW_k1e)

BINARY_AS(special_xlog1py, "special.xlog1py", LT_CK_PW_xlog1py)
BINARY_AS(special_zeta, "special.zeta", LT_CK_PW_zeta)
/* torch.special.gammainc and gammaincc: top-level ops */
BINARY_AS(igamma, "igamma", LT_CK_PW_igamma)
BINARY_AS(igammac, "igammac", LT_CK_PW_igammac)
