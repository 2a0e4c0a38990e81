/*
** ternary.cu — the pointwise ops of three inputs (pointwise.h,
** LT_CK_PW_TERNARY): where(condition, x, y), clamp(x, lo, hi) (a NaN input or
** bound gives NaN), lerp(x, end, weight) (the two-sided form, so that weight 1
** gives end exactly), addcmul and addcdiv (x + p0 * t1 * t2, x + p0 * t1 / t2).
** where only moves elements: it is built once per element size.
*/
#include "cuda/kernels/pw.h"

namespace CK_NS {

template<class C> struct pw_clamp {
  PW_PARAMS;
  PW_FN C operator()(C x, C lo, C hi) const {
    if constexpr (ck_type<C>::is_float) {
      C t = (x < lo || lo != lo) ? lo : x;
      return (t > hi || hi != hi) ? hi : t;
    } else {
      C t = x < lo ? lo : x;
      return t > hi ? hi : t;
    }
  }
};
template<class C> struct pw_lerp {
  PW_PARAMS;
  PW_FN C operator()(C x, C y, C w) const {
    return ck_fabs(w) < (C)0.5 ? x + w * (y - x) : y - (y - x) * ((C)1 - w);
  }
};
template<class C> struct pw_addcmul {
  PW_PARAMS;
  PW_FN C operator()(C x, C y, C z) const {
    if constexpr (ck_type<C>::is_float) return x + p0 * y * z;
    else { typedef typename ck_wrap<C>::U U; return (C)((U)x + (U)p0 * (U)y * (U)z); }
  }
};
template<class C> struct pw_addcdiv {
  PW_PARAMS;
  PW_FN C operator()(C x, C y, C z) const { return x + p0 * y / z; }
};

template<class T> struct pw_where_elem {
  typedef T out_t;
  typedef bool in0_t;
  typedef T in1_t;
  typedef T in2_t;
  static constexpr int arity = 3;
  PW_FN T operator()(bool c, T x, T y) const { return c ? x : y; }
};
template<int SIZE> struct pw_bits;
template<> struct pw_bits<1> { typedef uint8_t type; };
template<> struct pw_bits<2> { typedef uint16_t type; };
template<> struct pw_bits<4> { typedef uint32_t type; };
template<> struct pw_bits<8> { typedef uint64_t type; };

template<int SIZE> static int pw_where_as(const lt_ck_pw_call *c, const lt_ck_geom *g, void *stream) {
  return ck_run3(pw_where_elem<typename pw_bits<SIZE>::type>(), c->out, c->in[0], c->in[1], c->in[2],
                 c->num[0].bytes, c->num[1].bytes, c->num[2].bytes, g, stream);
}

int pw_run_ternary(const lt_ck_pw_call *c, const lt_ck_geom *g, void *stream) {
  switch (c->op) {
    case LT_CK_PW_where:
      switch (ck_dtype_size(c->dtype)) {
        case 1: return pw_where_as<1>(c, g, stream);
        case 2: return pw_where_as<2>(c, g, stream);
        case 4: return pw_where_as<4>(c, g, stream);
        case 8: return pw_where_as<8>(c, g, stream);
        default: return LT_CK_EINVAL;
      }
    PW_CASE(clamp, 3, LT_CK_PW_FI, 0) PW_CASE(lerp, 3, LT_CK_PW_F, 0) PW_CASE(addcmul, 3, LT_CK_PW_FI, 0)
    PW_CASE(addcdiv, 3, LT_CK_PW_F, 0)
    default: return LT_CK_EINVAL;
  }
}

} /* namespace CK_NS */
