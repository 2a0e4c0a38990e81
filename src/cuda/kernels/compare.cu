/*
** compare.cu — comparisons and logic of the pointwise family (pointwise.h,
** LT_CK_PW_COMPARE): bool results from two inputs of one dtype (the backend
** promotes them first). isclose: |x - y| <= p1 + |p0 y| (p0 rtol, p1 atol),
** equal infinities close, NaNs close to each other when mode (equal_nan).
*/
#include "cuda/kernels/pw.h"

namespace CK_NS {

#define PW_CMP(name, expr) \
  template<class C> struct pw_##name { PW_PARAMS; PW_FN bool operator()(C x, C y) const { return expr; } };
PW_CMP(eq, x == y) PW_CMP(ne, x != y) PW_CMP(lt, x < y) PW_CMP(le, x <= y) PW_CMP(gt, x > y)
PW_CMP(ge, x >= y)
PW_CMP(logical_and, (x != (C)0) & (y != (C)0))
PW_CMP(logical_or, (x != (C)0) | (y != (C)0))
PW_CMP(logical_xor, (x != (C)0) ^ (y != (C)0))

template<class C> struct pw_isclose {
  PW_PARAMS;
  PW_FN bool operator()(C x, C y) const {
    if (x == y || (mode && x != x && y != y)) return true;
    C d = ck_fabs(x - y);
    return d == d && d != ck_inf<C>() && d <= p1 + ck_fabs(p0 * y);
  }
};

int pw_run_compare(const lt_ck_pw_call *c, const lt_ck_geom *g, void *stream) {
  switch (c->op) {
    LT_CK_PW_COMPARE(PW_CASE)
    default: return LT_CK_EINVAL;
  }
}

} /* namespace CK_NS */
