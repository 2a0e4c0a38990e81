/*
** fill.cu — fill: every element of the view gets one value, given as the
** element's bits (the caller converts the number), so one kernel per element
** size serves every dtype.
*/
#include "cuda/kernels/ck.h"

namespace CK_NS {

template<class U> struct ck_const {
  typedef U out_t;
  typedef ck_none in0_t;
  typedef ck_none in1_t;
  static constexpr int arity = 0;
  U v;
  __host__ __device__ __forceinline__ U operator()() const { return v; }
};

template<class U> static int fill_bits(void *dst, const void *value, const lt_ck_geom *g, void *stream) {
  ck_const<U> e;
  memcpy(&e.v, value, sizeof(U));
  return ck_run(e, dst, nullptr, nullptr, nullptr, nullptr, g, stream);
}

} /* namespace CK_NS */

extern "C" int CK_API(fill)(void *dst, int dtype, const void *value, const lt_ck_geom *g, void *stream) {
  using namespace CK_NS;
  if (!dst || !value) return LT_CK_EINVAL;
  switch (ck_dtype_size(dtype)) {
    case 8: return fill_bits<uint64_t>(dst, value, g, stream);
    case 4: return fill_bits<uint32_t>(dst, value, g, stream);
    case 2: return fill_bits<uint16_t>(dst, value, g, stream);
    case 1: return fill_bits<uint8_t>(dst, value, g, stream);
    default: return LT_CK_EINVAL;
  }
}
