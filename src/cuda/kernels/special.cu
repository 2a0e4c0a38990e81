/*
** special.cu — the special functions of the pointwise family (pointwise.h,
** LT_CK_PW_SPECIAL): erfinv, lgamma, digamma, polygamma (n in mode), i0, i1,
** sinc, and torch.special's erfcx, i0e, i1e, ndtr, ndtri, log_ndtr, entr,
** bessel_j0/j1/y0/y1, the modified K0, K1 (k0 .. k1e), xlog1py, zeta,
** igamma and igammac. Each is computed in double whatever
** the dtype and rounded to it, by the scalar functions of
** meta/special_math.h, which the CPU's loops call too: one text, so the
** backends agree to the rounding of the library calls underneath (the
** device's erfc, lgamma, j0, ... are CUDA's).
*/
#include "cuda/kernels/pw.h"
#include "meta/special_math.h"

namespace CK_NS {

#define PW_SPECIAL(name, expr) \
  template<class C> struct pw_##name { PW_PARAMS; PW_FN C operator()(C x) const { double v = (double)x; return (C)(expr); } };
/* the same for a function whose loops and library calls spill registers under the hot
** kernels' launch bound (ptxas's report, tools/ptxas_spills.sh): its kernels are cold */
#define PW_SPECIAL_COLD(name, expr) \
  template<class C> struct pw_##name { PW_PARAMS; PW_COLD; \
    PW_FN C operator()(C x) const { double v = (double)x; return (C)(expr); } };
PW_SPECIAL(erfinv, lt_sm_erfinv(v))
PW_SPECIAL(lgamma, lt_sm_lgamma(v))
PW_SPECIAL(digamma, lt_sm_digamma(v))
PW_SPECIAL_COLD(polygamma, lt_sm_polygamma(mode, v))
PW_SPECIAL(i0, lt_sm_bessel_i(0, v, 0))
PW_SPECIAL(i1, lt_sm_bessel_i(1, v, 0))
PW_SPECIAL(sinc, lt_sm_sinc(v))
PW_SPECIAL_COLD(erfcx, lt_sm_erfcx(v))
PW_SPECIAL(i0e, lt_sm_bessel_i(0, v, 1))
PW_SPECIAL(i1e, lt_sm_bessel_i(1, v, 1))
PW_SPECIAL_COLD(ndtr, lt_sm_ndtr(v))
PW_SPECIAL_COLD(ndtri, lt_sm_ndtri(v))
PW_SPECIAL_COLD(log_ndtr, lt_sm_log_ndtr(v))
PW_SPECIAL(entr, lt_sm_entr(v))
PW_SPECIAL(bessel_j0, lt_sm_bessel_j0(v))
PW_SPECIAL(bessel_j1, lt_sm_bessel_j1(v))
PW_SPECIAL(bessel_y0, lt_sm_bessel_y0(v))
PW_SPECIAL(bessel_y1, lt_sm_bessel_y1(v))
PW_SPECIAL_COLD(k0, lt_sm_bessel_k(0, v, 0))
PW_SPECIAL_COLD(k1, lt_sm_bessel_k(1, v, 0))
PW_SPECIAL_COLD(k0e, lt_sm_bessel_k(0, v, 1))
PW_SPECIAL_COLD(k1e, lt_sm_bessel_k(1, v, 1))

/* two arguments: zeta's sums and igamma's series and continued fraction spill, so all are cold */
#define PW_SPECIAL2(name, expr) \
  template<class C> struct pw_##name { PW_PARAMS; PW_COLD; PW_FN C operator()(C x, C y) const { \
    double u = (double)x, v = (double)y; return (C)(expr); } };
PW_SPECIAL2(xlog1py, lt_sm_xlog1py(u, v))
PW_SPECIAL2(zeta, lt_sm_zeta(u, v))
PW_SPECIAL2(igamma, lt_sm_gammainc(u, v, 0))
PW_SPECIAL2(igammac, lt_sm_gammainc(u, v, 1))

int pw_run_special(const lt_ck_pw_call *c, const lt_ck_geom *g, void *stream) {
  switch (c->op) {
    LT_CK_PW_SPECIAL(PW_CASE)
    default: return LT_CK_EINVAL;
  }
}

} /* namespace CK_NS */
