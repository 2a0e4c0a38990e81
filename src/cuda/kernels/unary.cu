/*
** unary.cu — out = op(a) for neg, abs, exp, relu, sigmoid, tanh over one
** dtype (ck_math.h has the math and which dtypes each op takes).
*/
#include "cuda/kernels/ck.h"

namespace CK_NS {

template<template<class> class Op, class T> struct ck_unary {
  typedef T out_t;
  typedef T in0_t;
  typedef ck_none in1_t;
  static constexpr int arity = 1;
  Op<typename ck_type<T>::C> op;
  __host__ __device__ __forceinline__ T operator()(T x) const { return ck_store<T>(op(ck_load(x))); }
};

template<template<class> class Op>
static int unary_as(int dtype, void *out, const void *a, const lt_ck_geom *g, void *stream) {
  return ck_dispatch(dtype, [&](auto tag) {
    typedef typename decltype(tag)::type T;
    if constexpr (Op<typename ck_type<T>::C>::template ok<T>)
      return ck_run(ck_unary<Op, T>(), out, a, nullptr, nullptr, nullptr, g, stream);
    else return (int)LT_CK_EUNSUPPORTED;
  });
}

} /* namespace CK_NS */

extern "C" int CK_API(unary)(int op, int dtype, void *out, const void *a, const lt_ck_geom *g,
                             void *stream) {
  using namespace CK_NS;
  if (!a) return LT_CK_EINVAL;
  switch (op) {
    case LT_CK_NEG: return unary_as<ck_op_neg>(dtype, out, a, g, stream);
    case LT_CK_ABS: return unary_as<ck_op_abs>(dtype, out, a, g, stream);
    case LT_CK_EXP: return unary_as<ck_op_exp>(dtype, out, a, g, stream);
    case LT_CK_RELU: return unary_as<ck_op_relu>(dtype, out, a, g, stream);
    case LT_CK_SIGMOID: return unary_as<ck_op_sigmoid>(dtype, out, a, g, stream);
    case LT_CK_TANH: return unary_as<ck_op_tanh>(dtype, out, a, g, stream);
    default: return LT_CK_EINVAL;
  }
}
