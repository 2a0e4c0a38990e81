/*
** ck_math.h — the per-element math of the CUDA kernels, written once as
** __host__ __device__ inline functions: dtype storage and compute types, the
** 16-bit float conversions, the dtype conversions of copy, and the unary and
** binary ops. The same text compiles
**   - under nvcc (device and host side): 16-bit floats are __half and
**     __nv_bfloat16, converted with cuda_fp16.h / cuda_bf16.h;
**   - under NVRTC (__CUDACC_RTC__), for kernels made at run time;
**   - under a host C++ compiler (the host build, ck_host.h): the 16-bit
**     floats are bit patterns converted in software, rounding to nearest
**     even, so results agree with the device's and the CPU's bit for bit
**     (NaN payloads aside: a NaN stays a NaN, its bits may differ).
** Semantics are the CPU backend's (integer arithmetic wraps, float -> integer
** saturates through int64 with NaN -> 0, 16-bit floats compute in float), and
** tests/c/test_cuda_kernels_host.c checks them against it. Everything lives
** in namespace CK_NS, one per build, so the two builds can be linked into one
** module without their inline functions merging.
*/
#ifndef LT_CUDA_CK_MATH_H
#define LT_CUDA_CK_MATH_H

#if defined(__CUDACC_RTC__)
/* NVRTC has no C library headers */
typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long long int64_t;
typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#define INT64_MAX 9223372036854775807LL
#define INT64_MIN (-INT64_MAX - 1)
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define CK_NS ck_rtc
#elif defined(__CUDACC__)
#include <stdint.h>
#include <math.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define CK_NS ck_dev
#else
#include "cuda/kernels/ck_host.h"
#define CK_NS ck_host
#endif

namespace CK_NS {

/* ---- 16-bit floats ---- */
#if defined(__CUDACC__)
typedef __half ck_half;
typedef __nv_bfloat16 ck_bf16;
__host__ __device__ __forceinline__ float ck_h2f(ck_half h) { return __half2float(h); }
__host__ __device__ __forceinline__ ck_half ck_f2h(float f) { return __float2half_rn(f); }
__host__ __device__ __forceinline__ float ck_bf2f(ck_bf16 b) { return __bfloat162float(b); }
__host__ __device__ __forceinline__ ck_bf16 ck_f2bf(float f) { return __float2bfloat16_rn(f); }
#else
/* distinct types (not uint16_t) so templates tell them apart from each other */
struct ck_half { uint16_t bits; };
struct ck_bf16 { uint16_t bits; };
static inline uint32_t ck_fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float ck_bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
/* exact: every half is a float */
static inline float ck_h2f(ck_half h) {
  uint32_t sign = (uint32_t)(h.bits & 0x8000u) << 16, e = (h.bits >> 10) & 0x1fu, m = h.bits & 0x3ffu;
  if (e == 0) {                       /* zero or subnormal: m * 2^-24, exact in float */
    float v = (float)m * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  if (e == 31) return ck_bitsf(sign | 0x7f800000u | m << 13);      /* inf, NaN (payload kept) */
  return ck_bitsf(sign | (e + 112) << 23 | m << 13);               /* rebias 15 -> 127 */
}
/* round to nearest, ties to even */
static inline ck_half ck_f2h(float f) {
  uint32_t u = ck_fbits(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  ck_half h;
  if (a > 0x7f800000u) { h.bits = (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu)); return h; } /* quiet NaN */
  if (a >= 0x477ff000u) { h.bits = (uint16_t)(sign | 0x7c00u); return h; }  /* >= 65520: inf */
  if (a < 0x38800000u) {                                    /* below 2^-14: a subnormal half */
    if (a < 0x33000000u) { h.bits = (uint16_t)sign; return h; }   /* <= 2^-25 rounds to 0 */
    uint32_t m = (a & 0x7fffffu) | 0x800000u, shift = 126 - (a >> 23);   /* 14 .. 24 */
    uint32_t q = m >> shift, rest = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    q += rest > halfway || (rest == halfway && (q & 1u));
    h.bits = (uint16_t)(sign | q);
    return h;
  }
  /* normal: drop 13 mantissa bits rounding to even, rebias 127 -> 15 (a
  ** carry into the exponent is the right result, up to inf) */
  uint32_t r = a + 0xfffu + ((a >> 13) & 1u) - (112u << 23);
  h.bits = (uint16_t)(sign | (r >> 13));
  return h;
}
static inline float ck_bf2f(ck_bf16 b) { return ck_bitsf((uint32_t)b.bits << 16); }
static inline ck_bf16 ck_f2bf(float f) {
  uint32_t u = ck_fbits(f);
  ck_bf16 b;
  if ((u & 0x7fffffffu) > 0x7f800000u) b.bits = (uint16_t)((u >> 16) | 0x40u);   /* quiet NaN */
  else b.bits = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  return b;
}
#endif

/* ---- storage and compute types ---- */
/* ck_type<T>: C, the type arithmetic happens in (float for 16-bit floats) */
template<class T> struct ck_type { typedef T C; static constexpr bool is_float = false, is_bool = false, is_signed = true; };
template<> struct ck_type<double> { typedef double C; static constexpr bool is_float = true, is_bool = false, is_signed = true; };
template<> struct ck_type<float> { typedef float C; static constexpr bool is_float = true, is_bool = false, is_signed = true; };
template<> struct ck_type<ck_half> { typedef float C; static constexpr bool is_float = true, is_bool = false, is_signed = true; };
template<> struct ck_type<ck_bf16> { typedef float C; static constexpr bool is_float = true, is_bool = false, is_signed = true; };
template<> struct ck_type<uint8_t> { typedef uint8_t C; static constexpr bool is_float = false, is_bool = false, is_signed = false; };
template<> struct ck_type<bool> { typedef bool C; static constexpr bool is_float = false, is_bool = true, is_signed = false; };

/* integer arithmetic wraps in an unsigned type at least int-wide (signed
** overflow is undefined; uint8 * uint8 would promote to int) */
template<class C> struct ck_wrap { typedef uint32_t U; };
template<> struct ck_wrap<int64_t> { typedef uint64_t U; };

/* storage -> compute */
template<class T> __host__ __device__ __forceinline__ T ck_load(T v) { return v; }
__host__ __device__ __forceinline__ float ck_load(ck_half v) { return ck_h2f(v); }
__host__ __device__ __forceinline__ float ck_load(ck_bf16 v) { return ck_bf2f(v); }

/* ---- conversions: ck_cvt<D>::from(x), x a compute value of any dtype ---- */
/* float -> int64 saturates, NaN -> 0 (C leaves out-of-range conversions undefined) */
__host__ __device__ __forceinline__ int64_t ck_sat_i64(double x) {
  return x != x ? 0 : x <= -9223372036854775808.0 ? INT64_MIN
       : x >= 9223372036854775808.0 ? INT64_MAX : (int64_t)x;
}
__host__ __device__ __forceinline__ int64_t ck_sat_i64(float x) {
  return x != x ? 0 : x <= -9223372036854775808.0f ? INT64_MIN
       : x >= 9223372036854775808.0f ? INT64_MAX : (int64_t)x;
}
template<class D> struct ck_cvt {            /* double, float; integers from integers */
  template<class C> __host__ __device__ static __forceinline__ D from(C x) { return (D)x; }
};
template<> struct ck_cvt<ck_half> {          /* double and integers go through float */
  template<class C> __host__ __device__ static __forceinline__ ck_half from(C x) { return ck_f2h((float)x); }
};
template<> struct ck_cvt<ck_bf16> {
  template<class C> __host__ __device__ static __forceinline__ ck_bf16 from(C x) { return ck_f2bf((float)x); }
};
template<> struct ck_cvt<bool> {
  template<class C> __host__ __device__ static __forceinline__ bool from(C x) { return x != 0; }
};
template<> struct ck_cvt<int64_t> {
  __host__ __device__ static __forceinline__ int64_t from(double x) { return ck_sat_i64(x); }
  __host__ __device__ static __forceinline__ int64_t from(float x) { return ck_sat_i64(x); }
  template<class C> __host__ __device__ static __forceinline__ int64_t from(C x) { return (int64_t)x; }
};
/* int32 and narrower from floats: a direct conversion in range, else the
** saturated int64 wrapped */
template<> struct ck_cvt<int32_t> {
  __host__ __device__ static __forceinline__ int32_t from(double x) {
    return (x > -2147483649.0 && x < 2147483648.0) ? (int32_t)x : (int32_t)ck_sat_i64(x);
  }
  __host__ __device__ static __forceinline__ int32_t from(float x) {
    return (x > -2147483648.0f && x < 2147483648.0f) ? (int32_t)x : (int32_t)ck_sat_i64(x);
  }
  template<class C> __host__ __device__ static __forceinline__ int32_t from(C x) { return (int32_t)x; }
};
template<> struct ck_cvt<int16_t> {
  template<class C> __host__ __device__ static __forceinline__ int16_t from(C x) { return (int16_t)ck_cvt<int32_t>::from(x); }
};
template<> struct ck_cvt<int8_t> {
  template<class C> __host__ __device__ static __forceinline__ int8_t from(C x) { return (int8_t)ck_cvt<int32_t>::from(x); }
};
template<> struct ck_cvt<uint8_t> {
  template<class C> __host__ __device__ static __forceinline__ uint8_t from(C x) { return (uint8_t)ck_cvt<int32_t>::from(x); }
};

/* compute -> storage of the same dtype */
template<class T> __host__ __device__ __forceinline__ T ck_store(typename ck_type<T>::C x) { return ck_cvt<T>::from(x); }

/* a number in the compute type of T: floats take f, the others i */
template<class T> __host__ __device__ __forceinline__ typename ck_type<T>::C ck_number(double f, int64_t i) {
  typedef typename ck_type<T>::C C;
  if constexpr (ck_type<T>::is_float) return (C)f;
  else if constexpr (ck_type<T>::is_bool) return i != 0;
  else return (C)i;
}

/* ---- libm by compute type ---- */
__host__ __device__ __forceinline__ float ck_exp(float x) { return expf(x); }
__host__ __device__ __forceinline__ double ck_exp(double x) { return exp(x); }
__host__ __device__ __forceinline__ float ck_tanh(float x) { return tanhf(x); }
__host__ __device__ __forceinline__ double ck_tanh(double x) { return tanh(x); }
__host__ __device__ __forceinline__ float ck_fabs(float x) { return fabsf(x); }
__host__ __device__ __forceinline__ double ck_fabs(double x) { return fabs(x); }
/* the rest of the C library the pointwise family calls (pw.h), one pair each */
#define CK_LIBM1(name) \
  __host__ __device__ __forceinline__ float ck_##name(float x) { return name##f(x); } \
  __host__ __device__ __forceinline__ double ck_##name(double x) { return name(x); }
#define CK_LIBM2(name) \
  __host__ __device__ __forceinline__ float ck_##name(float x, float y) { return name##f(x, y); } \
  __host__ __device__ __forceinline__ double ck_##name(double x, double y) { return name(x, y); }
CK_LIBM1(sqrt) CK_LIBM1(exp2) CK_LIBM1(expm1) CK_LIBM1(log) CK_LIBM1(log2) CK_LIBM1(log10)
CK_LIBM1(log1p) CK_LIBM1(sin) CK_LIBM1(cos) CK_LIBM1(tan) CK_LIBM1(asin) CK_LIBM1(acos)
CK_LIBM1(atan) CK_LIBM1(sinh) CK_LIBM1(cosh) CK_LIBM1(erf) CK_LIBM1(erfc) CK_LIBM1(floor)
CK_LIBM1(ceil) CK_LIBM1(trunc) CK_LIBM1(nearbyint) CK_LIBM1(asinh) CK_LIBM1(acosh) CK_LIBM1(atanh)
CK_LIBM2(pow) CK_LIBM2(atan2) CK_LIBM2(hypot) CK_LIBM2(fmod) CK_LIBM2(nextafter) CK_LIBM2(copysign)
#undef CK_LIBM1
#undef CK_LIBM2

/* ---- the ops: functors over compute type C ----
** ok<T>: whether the op is defined for dtype T (the launchers return
** LT_CK_EUNSUPPORTED, and instantiate nothing, where it is not) */
template<class C> struct ck_op_neg {
  template<class T> static constexpr bool ok = !ck_type<T>::is_bool;
  __host__ __device__ __forceinline__ C operator()(C x) const {
    if constexpr (ck_type<C>::is_float) return -x;
    else return (C)(0 - (typename ck_wrap<C>::U)x);
  }
};
template<class C> struct ck_op_abs {
  template<class T> static constexpr bool ok = true;
  __host__ __device__ __forceinline__ C operator()(C x) const {
    if constexpr (ck_type<C>::is_float) return ck_fabs(x);
    else if constexpr (!ck_type<C>::is_signed) return x;     /* uint8, bool */
    else return x < 0 ? (C)(0 - (typename ck_wrap<C>::U)x) : x;
  }
};
template<class C> struct ck_op_relu {            /* NaN stays NaN */
  template<class T> static constexpr bool ok = !ck_type<T>::is_bool;
  __host__ __device__ __forceinline__ C operator()(C x) const {
    if constexpr (!ck_type<C>::is_signed) return x;
    else return x < 0 ? (C)0 : x;
  }
};
template<class C> struct ck_op_exp {
  template<class T> static constexpr bool ok = ck_type<T>::is_float;
  __host__ __device__ __forceinline__ C operator()(C x) const { return ck_exp(x); }
};
template<class C> struct ck_op_sigmoid {
  template<class T> static constexpr bool ok = ck_type<T>::is_float;
  __host__ __device__ __forceinline__ C operator()(C x) const { return (C)1 / ((C)1 + ck_exp(-x)); }
};
template<class C> struct ck_op_tanh {
  template<class T> static constexpr bool ok = ck_type<T>::is_float;
  __host__ __device__ __forceinline__ C operator()(C x) const { return ck_tanh(x); }
};

/* binary ops carry alpha (the others ignore it) */
template<class C> struct ck_op_add {
  template<class T> static constexpr bool ok = true;
  C alpha;
  __host__ __device__ __forceinline__ C operator()(C x, C y) const {
    if constexpr (ck_type<C>::is_float) return x + alpha * y;
    else if constexpr (ck_type<C>::is_bool) return x || (alpha && y);
    else { typedef typename ck_wrap<C>::U U; return (C)((U)x + (U)alpha * (U)y); }
  }
};
template<class C> struct ck_op_sub {
  template<class T> static constexpr bool ok = !ck_type<T>::is_bool;
  C alpha;
  __host__ __device__ __forceinline__ C operator()(C x, C y) const {
    if constexpr (ck_type<C>::is_float) return x - alpha * y;
    else { typedef typename ck_wrap<C>::U U; return (C)((U)x - (U)alpha * (U)y); }
  }
};
template<class C> struct ck_op_mul {
  template<class T> static constexpr bool ok = true;
  C alpha;
  __host__ __device__ __forceinline__ C operator()(C x, C y) const {
    if constexpr (ck_type<C>::is_float) return x * y;
    else if constexpr (ck_type<C>::is_bool) return x && y;
    else { typedef typename ck_wrap<C>::U U; return (C)((U)x * (U)y); }
  }
};
template<class C> struct ck_op_div {
  template<class T> static constexpr bool ok = ck_type<T>::is_float;
  C alpha;
  __host__ __device__ __forceinline__ C operator()(C x, C y) const { return x / y; }
};

} /* namespace CK_NS */
#endif
