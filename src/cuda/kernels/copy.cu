/*
** copy.cu — the strided N-d copy with dtype conversion: contiguous(), copy_
** between layouts and devices' same-device half, and every cast. Same dtype
** moves bits (one kernel per element size); a conversion is one kernel per
** (destination, source) pair, with the CPU's semantics (ck_math.h ck_cvt).
*/
#include "cuda/kernels/ck.h"

namespace CK_NS {

template<class D, class S> struct ck_cast {
  typedef D out_t;
  typedef S in0_t;
  typedef ck_none in1_t;
  static constexpr int arity = 1;
  __host__ __device__ __forceinline__ D operator()(S x) const { return ck_cvt<D>::from(ck_load(x)); }
};

template<class U> struct ck_move {
  typedef U out_t;
  typedef U in0_t;
  typedef ck_none in1_t;
  static constexpr int arity = 1;
  __host__ __device__ __forceinline__ U operator()(U x) const { return x; }
};

} /* namespace CK_NS */

extern "C" int CK_API(copy)(void *dst, int dst_dtype, const void *src, int src_dtype,
                            const lt_ck_geom *g, void *stream) {
  using namespace CK_NS;
  if (!dst || !src || ck_dtype_size(dst_dtype) == 0 || ck_dtype_size(src_dtype) == 0) return LT_CK_EINVAL;
  if (dst_dtype == src_dtype) {
    switch (ck_dtype_size(dst_dtype)) {
      case 8: return ck_run(ck_move<uint64_t>(), dst, src, nullptr, nullptr, nullptr, g, stream);
      case 4: return ck_run(ck_move<uint32_t>(), dst, src, nullptr, nullptr, nullptr, g, stream);
      case 2: return ck_run(ck_move<uint16_t>(), dst, src, nullptr, nullptr, nullptr, g, stream);
      default: return ck_run(ck_move<uint8_t>(), dst, src, nullptr, nullptr, nullptr, g, stream);
    }
  }
  return ck_dispatch(dst_dtype, [&](auto dtag) {
    return ck_dispatch(src_dtype, [&](auto stag) {
      typedef typename decltype(dtag)::type D;
      typedef typename decltype(stag)::type S;
      if constexpr (ck_same<D, S>::value) return LT_CK_EINVAL;   /* moved above */
      else return ck_run(ck_cast<D, S>(), dst, src, nullptr, nullptr, nullptr, g, stream);
    });
  });
}
