/*
** binary.cu — the pointwise ops of two inputs (pointwise.h, LT_CK_PW_BINARY):
** arithmetic (add and sub with alpha in p0), division with rounding and the
** remainders, pow, atan2, hypot, the extrema, logaddexp, xlogy, nextafter,
** gcd, lcm, heaviside, bits and shifts, clamp by one tensor bound; and
** kernels.h's older binary entry (add, sub, mul, div), which runs the same
** functors. Either input may be a number passed by value.
**
** Integer division by zero (div_trunc, div_floor, remainder, fmod) gives 0
** and sets the call's error flag, which the backend reads to raise the CPU's
** error; x / -1 is negation done wrapping (INT_MIN / -1 overflows).
*/
#include "cuda/kernels/pw.h"

namespace CK_NS {

#define PW_BIN(name, expr) \
  template<class C> struct pw_##name { PW_PARAMS; PW_FN C operator()(C x, C y) const { return expr; } };
#define PW_WRAP2(name) PW_BIN(name, ck_op_##name<C>{p0}(x, y))
#define PW_FLOAT2(name) PW_BIN(name, ck_##name(x, y))

PW_WRAP2(add) PW_WRAP2(sub) PW_WRAP2(mul) PW_WRAP2(div)
PW_FLOAT2(atan2) PW_FLOAT2(hypot) PW_FLOAT2(nextafter)

/* integer quotient and remainder as the CPU computes them */
template<class C> PW_FN C pw_idiv(C x, C y, int *err) {
  if (y == 0) { if (err) *err = 1; return 0; }
  if constexpr (ck_type<C>::is_signed) if (y == (C)-1) return (C)(0 - (typename ck_wrap<C>::U)x);
  return (C)(x / y);
}
template<class C> PW_FN C pw_imod(C x, C y, int *err) {
  if (y == 0) { if (err) *err = 1; return 0; }
  if constexpr (ck_type<C>::is_signed) if (y == (C)-1) return 0;
  return (C)(x % y);
}

template<class C> struct pw_div_trunc {
  PW_PARAMS;
  PW_FN C operator()(C x, C y) const {
    if constexpr (ck_type<C>::is_float) return ck_trunc(x / y);
    else return pw_idiv(x, y, err);
  }
};
/* floats: Python's floor division, through fmod so that 1 // 0.1 is 9 */
template<class C> struct pw_div_floor {
  PW_PARAMS;
  PW_FN C operator()(C x, C y) const {
    if constexpr (ck_type<C>::is_float) {
      if (y == 0) return x / y;
      C m = ck_fmod(x, y), d = (x - m) / y;
      if (m != 0 && ((y < 0) != (m < 0))) d -= 1;
      C f = ck_floor(d);
      if (d - f > (C)0.5) f += 1;
      return f == 0 ? ck_copysign((C)0, x / y) : f;
    } else {
      C q = pw_idiv(x, y, err);
      int64_t a = (int64_t)x, b = (int64_t)y;
      return (a % (b == 0 ? 1 : b) != 0 && ((a < 0) != (b < 0))) ? (C)(q - 1) : q;
    }
  }
};
template<class C> struct pw_remainder {
  PW_PARAMS;
  PW_FN C operator()(C x, C y) const {
    if constexpr (ck_type<C>::is_float) {
      C m = ck_fmod(x, y);
      return (m != 0 && ((y < 0) != (m < 0))) ? m + y : m;
    } else {
      int64_t m = (int64_t)pw_imod(x, y, err), b = (int64_t)y;
      return (C)((m != 0 && ((m < 0) != (b < 0))) ? m + b : m);
    }
  }
};
template<class C> struct pw_fmod {
  PW_PARAMS;
  PW_FN C operator()(C x, C y) const {
    if constexpr (ck_type<C>::is_float) return ck_fmod(x, y);
    else return pw_imod(x, y, err);
  }
};

/* integers: negative exponents give 0 but for bases 1 and -1 */
template<class C> struct pw_pow {
  PW_PARAMS;
  PW_FN C operator()(C x, C y) const {
    if constexpr (ck_type<C>::is_float) return ck_pow(x, y);
    else {
      if (ck_lt0(y)) return (int64_t)x == 1 ? (C)1 : (int64_t)x == -1 ? (C)(((int64_t)y & 1) ? -1 : 1) : (C)0;
      uint64_t b = (uint64_t)(int64_t)x, e = (uint64_t)y, r = 1;
      while (e) { if (e & 1) r *= b; b *= b; e >>= 1; }
      return (C)r;
    }
  }
};

/* maximum and minimum: NaN wins (x + y is the NaN); fmax and fmin: NaN loses */
template<class C> struct pw_maximum {
  PW_PARAMS;
  PW_FN C operator()(C x, C y) const {
    if constexpr (ck_type<C>::is_float) if (x != x || y != y) return x + y;
    return x > y ? x : y;
  }
};
template<class C> struct pw_minimum {
  PW_PARAMS;
  PW_FN C operator()(C x, C y) const {
    if constexpr (ck_type<C>::is_float) if (x != x || y != y) return x + y;
    return x < y ? x : y;
  }
};
template<class C> struct pw_fmax {
  PW_PARAMS;
  PW_FN C operator()(C x, C y) const {
    if constexpr (ck_type<C>::is_float) if (x != x || y != y) return x != x ? y : x;
    return x > y ? x : y;
  }
};
template<class C> struct pw_fmin {
  PW_PARAMS;
  PW_FN C operator()(C x, C y) const {
    if constexpr (ck_type<C>::is_float) if (x != x || y != y) return x != x ? y : x;
    return x < y ? x : y;
  }
};

/* equal infinities would give inf - inf: the result is that infinity */
PW_BIN(logaddexp, (x == y && ck_fabs(x) == ck_inf<C>()) ? x : (x > y ? x : y) + ck_log1p(ck_exp(-ck_fabs(x - y))))
PW_BIN(logaddexp2, (x == y && ck_fabs(x) == ck_inf<C>()) ? x
       : (x > y ? x : y) + ck_log1p(ck_exp2(-ck_fabs(x - y))) * (C)1.44269504088896340736)
PW_BIN(xlogy, y != y ? y : x == 0 ? (C)0 : x * ck_log(y))
PW_BIN(heaviside, x == 0 ? y : (C)(x > 0))

/* gcd and lcm of the magnitudes, in uint64 (|INT64_MIN| fits) */
PW_FN uint64_t pw_uabs(int64_t v) { return v < 0 ? 0 - (uint64_t)v : (uint64_t)v; }
PW_FN uint64_t pw_ugcd(uint64_t a, uint64_t b) {
  while (b) { uint64_t t = a % b; a = b; b = t; }
  return a;
}
PW_BIN(gcd, (C)(int64_t)pw_ugcd(pw_uabs((int64_t)x), pw_uabs((int64_t)y)))
template<class C> struct pw_lcm {
  PW_PARAMS;
  PW_FN C operator()(C x, C y) const {
    uint64_t a = pw_uabs((int64_t)x), b = pw_uabs((int64_t)y), g = pw_ugcd(a, b);
    return g == 0 ? (C)0 : (C)(int64_t)(a / g * b);
  }
};

PW_BIN(bitwise_and, (C)(x & y))
PW_BIN(bitwise_or, (C)(x | y))
PW_BIN(bitwise_xor, (C)(x ^ y))
/* shifts by at least the width give 0 (left) or the sign (right) */
template<class C> struct pw_shift_left {
  PW_PARAMS;
  PW_FN C operator()(C x, C y) const {
    if (ck_lt0(y) || (int64_t)y >= (int64_t)sizeof(C) * 8) return 0;
    return (C)((typename ck_wrap<C>::U)x << (int64_t)y);
  }
};
template<class C> struct pw_shift_right {
  PW_PARAMS;
  PW_FN C operator()(C x, C y) const {
    if (ck_lt0(y) || (int64_t)y >= (int64_t)sizeof(C) * 8) return (C)(ck_lt0(x) ? -1 : 0);
    return (C)(x >> (int64_t)y);
  }
};

/* clamp by one bound: a NaN bound gives NaN */
template<class C> PW_FN C pw_cmin(C x, C lo) {
  if constexpr (ck_type<C>::is_float) return (x < lo || lo != lo) ? lo : x;
  else return x < lo ? lo : x;
}
template<class C> PW_FN C pw_cmax(C x, C hi) {
  if constexpr (ck_type<C>::is_float) return (x > hi || hi != hi) ? hi : x;
  else return x > hi ? hi : x;
}
PW_BIN(clamp_min, pw_cmin(x, y))
PW_BIN(clamp_max, pw_cmax(x, y))

int pw_run_binary(const lt_ck_pw_call *c, const lt_ck_geom *g, void *stream) {
  switch (c->op) {
    LT_CK_PW_BINARY(PW_CASE)
    default: return LT_CK_EINVAL;
  }
}

} /* namespace CK_NS */

/* kernels.h's binary entry: the same kernels */
extern "C" int CK_API(binary)(int op, int dtype, void *out, const void *a, const void *b,
                              const void *number, lt_ck_scalar alpha, const lt_ck_geom *g,
                              void *stream) {
  static const int pw[LT_CK_NUM_BINARY] = { LT_CK_PW_add, LT_CK_PW_sub, LT_CK_PW_mul, LT_CK_PW_div };
  if ((!a && !b) || op < 0 || op >= LT_CK_NUM_BINARY) return LT_CK_EINVAL;
  int sz = CK_NS::ck_dtype_size(dtype);
  if (sz == 0) return LT_CK_EINVAL;
  lt_ck_pw_call c = {};
  c.op = pw[op];
  c.dtype = dtype;
  c.out = out;
  c.in[0] = a;
  c.in[1] = b;
  if (number) memcpy(a ? c.num[1].bytes : c.num[0].bytes, number, (size_t)sz);
  else if (!a || !b) return LT_CK_EINVAL;
  c.p[0] = alpha;
  return CK_NS::pw_run_binary(&c, g, stream);
}
