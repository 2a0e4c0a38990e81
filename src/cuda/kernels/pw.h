/*
** pw.h — how the pointwise family's .cu files turn a functor over compute
** types into launches (pointwise.h): the element wrapper that loads storage
** values, calls the op in the compute type and stores the result, and the
** dispatch from a call record's dtype to the instantiation its mask allows.
**
** A pointwise op is `template<class C> struct pw_NAME { PW_PARAMS; R
** operator()(C x[, C y[, C z]]) const; }`, C the compute type (float for the
** 16-bit floats), R C or bool. PW_PARAMS are the call's numbers in C, its
** mode and its error flag; an op uses the ones it needs. An op whose
** library call spills under the 256-thread launch bound says PW_COLD (ck.h,
** ck_is_cold): its kernels are cold.
*/
#ifndef LT_CUDA_PW_H
#define LT_CUDA_PW_H
#include "cuda/kernels/ck.h"
#include "cuda/kernels/pointwise.h"

#define PW_PARAMS C p0, p1, p2; int mode; int *err
#define PW_FN __host__ __device__ __forceinline__
#define PW_COLD static constexpr bool cold = true

namespace CK_NS {

template<bool B, class T, class F> struct ck_if { typedef T type; };
template<class T, class F> struct ck_if<false, T, F> { typedef F type; };

/* the dtype code of a storage type */
template<class T> struct ck_code;
template<> struct ck_code<double> { static constexpr int value = LT_CK_FLOAT64; };
template<> struct ck_code<float> { static constexpr int value = LT_CK_FLOAT32; };
template<> struct ck_code<ck_half> { static constexpr int value = LT_CK_FLOAT16; };
template<> struct ck_code<ck_bf16> { static constexpr int value = LT_CK_BFLOAT16; };
template<> struct ck_code<int64_t> { static constexpr int value = LT_CK_INT64; };
template<> struct ck_code<int32_t> { static constexpr int value = LT_CK_INT32; };
template<> struct ck_code<int16_t> { static constexpr int value = LT_CK_INT16; };
template<> struct ck_code<int8_t> { static constexpr int value = LT_CK_INT8; };
template<> struct ck_code<uint8_t> { static constexpr int value = LT_CK_UINT8; };
template<> struct ck_code<bool> { static constexpr int value = LT_CK_BOOL; };

/* the element functor ck_run calls: N inputs of storage type T, result TO */
template<class Op, class T, class TO, int N> struct pw_elem {
  typedef TO out_t;
  typedef T in0_t;
  typedef typename ck_if<(N >= 2), T, ck_none>::type in1_t;
  typedef typename ck_if<(N >= 3), T, ck_none>::type in2_t;
  static constexpr int arity = N;
  static constexpr bool cold = ck_is_cold<Op>::value;
  Op op;
  PW_FN TO operator()(T x) const { return ck_cvt<TO>::from(op(ck_load(x))); }
  PW_FN TO operator()(T x, T y) const { return ck_cvt<TO>::from(op(ck_load(x), ck_load(y))); }
  PW_FN TO operator()(T x, T y, T z) const { return ck_cvt<TO>::from(op(ck_load(x), ck_load(y), ck_load(z))); }
};

/* x < 0 that also compiles for unsigned types without -Wtype-limits */
template<class C> PW_FN bool ck_lt0(C x) {
  if constexpr (ck_type<C>::is_float) return x < (C)0;
  else return (int64_t)x < 0;
}
template<class C> PW_FN C ck_inf() { return (C)__builtin_inff(); }

/* the op's numbers in the compute type of T */
template<class T, class Op> static inline void pw_set(Op &op, const lt_ck_pw_call *c) {
  op.p0 = ck_number<T>(c->p[0].f, c->p[0].i);
  op.p1 = ck_number<T>(c->p[1].f, c->p[1].i);
  op.p2 = ck_number<T>(c->p[2].f, c->p[2].i);
  op.mode = c->mode;
  op.err = c->err;
}

/* run pw_NAME (as Op<C>) for the call's dtype when MASK has it */
template<template<class> class Op, int N, unsigned MASK, int BOOL_OUT>
static int pw_launch(const lt_ck_pw_call *c, const lt_ck_geom *g, void *stream) {
  return ck_dispatch(c->dtype, [&](auto tag) {
    typedef typename decltype(tag)::type T;
    if constexpr ((MASK >> ck_code<T>::value & 1u) != 0) {
      typedef typename ck_if<BOOL_OUT != 0, bool, T>::type TO;
      pw_elem<Op<typename ck_type<T>::C>, T, TO, N> e;
      pw_set<T>(e.op, c);
      return ck_run3(e, c->out, c->in[0], c->in[1], c->in[2], c->num[0].bytes, c->num[1].bytes,
                     c->num[2].bytes, g, stream);
    } else return (int)LT_CK_EUNSUPPORTED;
  });
}

/* the case of a group's switch for one op of its X-macro table */
#define PW_CASE(name, nin, mask, bout) \
  case LT_CK_PW_##name: return pw_launch<pw_##name, nin, mask, bout>(c, g, stream);

/* each .cu file's group: its ops' launches (pointwise.cu routes to them) */
int pw_run_unary(const lt_ck_pw_call *c, const lt_ck_geom *g, void *stream);
int pw_run_special(const lt_ck_pw_call *c, const lt_ck_geom *g, void *stream);
int pw_run_act(const lt_ck_pw_call *c, const lt_ck_geom *g, void *stream);
int pw_run_binary(const lt_ck_pw_call *c, const lt_ck_geom *g, void *stream);
int pw_run_compare(const lt_ck_pw_call *c, const lt_ck_geom *g, void *stream);
int pw_run_ternary(const lt_ck_pw_call *c, const lt_ck_geom *g, void *stream);

} /* namespace CK_NS */
#endif
