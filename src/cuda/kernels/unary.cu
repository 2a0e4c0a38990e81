/*
** unary.cu — the pointwise ops of one input (pointwise.h, LT_CK_PW_UNARY):
** math, rounding, predicates and bits; and kernels.h's older unary entry
** (neg, abs, exp, relu, sigmoid, tanh), which runs the same functors.
**
** Each functor is the CPU backend's expression in the compute type C; the
** numbers p0..p2 and mode are the call's, as the backend sets them:
**   round_dec   p0 = 10^|decimals|, mode 1 when decimals < 0
**   logit       p0 = eps, mode 1 when eps is given
**   nan_to_num  p0, p1, p2 the replacements of NaN, +inf, -inf (in range)
**   hardtanh    p0, p1 the bounds (integer tensors: ceil/floor of them)
**   pow_scalar  p0 the exponent
*/
#include "cuda/kernels/pw.h"

namespace CK_NS {


#define PW_UNARY(name, expr) \
  template<class C> struct pw_##name { PW_PARAMS; PW_FN auto operator()(C x) const { return expr; } };
#define PW_WRAP1(name) PW_UNARY(name, ck_op_##name<C>()(x))
#define PW_FLOAT1(name) PW_UNARY(name, ck_##name(x))
/* libdevice's double atan spills 8 bytes under the launch bound: cold in double */
template<class C> struct pw_atan {
  PW_PARAMS;
  static constexpr bool cold = ck_same<C, double>::value;
  PW_FN C operator()(C x) const { return ck_atan(x); }
};

PW_WRAP1(neg) PW_WRAP1(abs) PW_WRAP1(exp) PW_WRAP1(relu) PW_WRAP1(sigmoid) PW_WRAP1(tanh)
PW_FLOAT1(sqrt) PW_FLOAT1(exp2) PW_FLOAT1(expm1) PW_FLOAT1(log) PW_FLOAT1(log2) PW_FLOAT1(log10)
PW_FLOAT1(log1p) PW_FLOAT1(sin) PW_FLOAT1(cos) PW_FLOAT1(tan) PW_FLOAT1(asin) PW_FLOAT1(acos)
PW_FLOAT1(sinh) PW_FLOAT1(cosh) PW_FLOAT1(erf) PW_FLOAT1(erfc) PW_FLOAT1(floor)
PW_FLOAT1(ceil) PW_FLOAT1(trunc) PW_FLOAT1(asinh) PW_FLOAT1(acosh) PW_FLOAT1(atanh)
PW_UNARY(rsqrt, (C)1 / ck_sqrt(x))
PW_UNARY(reciprocal, (C)1 / x)
PW_UNARY(round, ck_nearbyint(x))   /* half to even */
PW_UNARY(frac, x - ck_trunc(x))
PW_UNARY(round_dec, mode ? ck_nearbyint(x / p0) * p0 : ck_nearbyint(x * p0) / p0)
PW_UNARY(nan_to_num, x != x ? p0 : x == ck_inf<C>() ? p1 : x == -ck_inf<C>() ? p2 : x)
PW_UNARY(sign, (C)((x > (C)0) - ck_lt0(x)))
PW_UNARY(pow_scalar, ck_pow(x, p0))
PW_UNARY(hardtanh, x < p0 ? p0 : x > p1 ? p1 : x)
PW_UNARY(logical_not, x == (C)0)
PW_UNARY(isnan, x != x)
PW_UNARY(isinf, ck_fabs(x) == ck_inf<C>())
PW_UNARY(isfinite, x == x && ck_fabs(x) != ck_inf<C>())
PW_UNARY(isposinf, x == ck_inf<C>())
PW_UNARY(isneginf, x == -ck_inf<C>())

/* integer forms wrap in an unsigned type */
template<class C> struct pw_square {
  PW_PARAMS;
  PW_FN C operator()(C x) const {
    if constexpr (ck_type<C>::is_float) return x * x;
    else { typedef typename ck_wrap<C>::U U; return (C)((U)x * (U)x); }
  }
};
template<class C> struct pw_cube {
  PW_PARAMS;
  PW_FN C operator()(C x) const {
    if constexpr (ck_type<C>::is_float) return x * x * x;
    else { typedef typename ck_wrap<C>::U U; return (C)((U)x * (U)x * (U)x); }
  }
};
template<class C> struct pw_bitwise_not {
  PW_PARAMS;
  PW_FN C operator()(C x) const {
    if constexpr (ck_type<C>::is_bool) return !x;
    else return (C)~(typename ck_wrap<C>::U)x;
  }
};
template<class C> struct pw_logit {
  PW_PARAMS;
  PW_FN C operator()(C x) const {
    if (mode) { C hi = (C)1 - p0; x = x < p0 ? p0 : x > hi ? hi : x; }
    return ck_log(x / ((C)1 - x));
  }
};
template<class C> struct pw_signbit {
  PW_PARAMS;
  PW_FN bool operator()(C x) const {
    if constexpr (ck_type<C>::is_float) return ck_copysign((C)1, x) < (C)0;
    else return ck_lt0(x);
  }
};

int pw_run_unary(const lt_ck_pw_call *c, const lt_ck_geom *g, void *stream) {
  switch (c->op) {
    LT_CK_PW_UNARY(PW_CASE)
    default: return LT_CK_EINVAL;
  }
}

} /* namespace CK_NS */

/* kernels.h's unary entry: the same kernels */
extern "C" int CK_API(unary)(int op, int dtype, void *out, const void *a, const lt_ck_geom *g,
                             void *stream) {
  static const int pw[LT_CK_NUM_UNARY] = {
    LT_CK_PW_neg, LT_CK_PW_abs, LT_CK_PW_exp, LT_CK_PW_relu, LT_CK_PW_sigmoid, LT_CK_PW_tanh,
  };
  if (!a || op < 0 || op >= LT_CK_NUM_UNARY) return LT_CK_EINVAL;
  lt_ck_pw_call c = {};
  c.op = pw[op];
  c.dtype = dtype;
  c.out = out;
  c.in[0] = a;
  return CK_NS::pw_run_unary(&c, g, stream);
}
