/*
** binary.cu — out = op(a, b) for add and sub (with alpha), mul and div over
** one dtype; either input may be a number (a wrapped Lua number) passed by
** value instead of a device pointer.
*/
#include "cuda/kernels/ck.h"

namespace CK_NS {

template<template<class> class Op, class T> struct ck_binary {
  typedef T out_t;
  typedef T in0_t;
  typedef T in1_t;
  static constexpr int arity = 2;
  Op<typename ck_type<T>::C> op;
  __host__ __device__ __forceinline__ T operator()(T x, T y) const {
    return ck_store<T>(op(ck_load(x), ck_load(y)));
  }
};

template<template<class> class Op>
static int binary_as(int dtype, void *out, const void *a, const void *b, const void *number,
                     lt_ck_scalar alpha, const lt_ck_geom *g, void *stream) {
  return ck_dispatch(dtype, [&](auto tag) {
    typedef typename decltype(tag)::type T;
    if constexpr (Op<typename ck_type<T>::C>::template ok<T>) {
      ck_binary<Op, T> e;
      e.op.alpha = ck_number<T>(alpha.f, alpha.i);
      return ck_run(e, out, a, b, a ? nullptr : number, b ? nullptr : number, g, stream);
    } else return (int)LT_CK_EUNSUPPORTED;
  });
}

} /* namespace CK_NS */

extern "C" int CK_API(binary)(int op, int dtype, void *out, const void *a, const void *b,
                              const void *number, lt_ck_scalar alpha, const lt_ck_geom *g,
                              void *stream) {
  using namespace CK_NS;
  if (!a && !b) return LT_CK_EINVAL;
  switch (op) {
    case LT_CK_ADD: return binary_as<ck_op_add>(dtype, out, a, b, number, alpha, g, stream);
    case LT_CK_SUB: return binary_as<ck_op_sub>(dtype, out, a, b, number, alpha, g, stream);
    case LT_CK_MUL: return binary_as<ck_op_mul>(dtype, out, a, b, number, alpha, g, stream);
    case LT_CK_DIV: return binary_as<ck_op_div>(dtype, out, a, b, number, alpha, g, stream);
    default: return LT_CK_EINVAL;
  }
}
