/*
** linalg.cu — trace (linalg.h): one thread adds the diagonal in order, in
** double (floating dtypes) or wrapping int64, so the sum is the CPU's.
*/
#include "cuda/kernels/ck.h"
#include "cuda/kernels/linalg.h"

namespace CK_NS {

template<class T, bool FLOAT> struct k_trace {
  LT_COLD;
  const T *x;
  int64_t n, stride;
  void *out;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    (void)nt;
    if (tid != 0) return;
    if constexpr (FLOAT) {
      double s = 0;
      for (int64_t i = 0; i < n; i++) s += (double)ck_load(x[i * stride]);
      *(T *)out = ck_store<T>((typename ck_type<T>::C)s);
    } else {
      uint64_t s = 0;
      for (int64_t i = 0; i < n; i++) s += (uint64_t)(int64_t)x[i * stride];
      *(int64_t *)out = (int64_t)s;
    }
  }
};

} /* namespace CK_NS */

using namespace CK_NS;

static int CK_API(linalg_trace)(int dtype, const void *x, int64_t n, int64_t stride, void *out, void *stream) {
  if (!out || (n > 0 && !x) || n < 0) return LT_CK_EINVAL;
  return ck_dispatch(dtype, [&](auto tag) {
    typedef typename decltype(tag)::type T;
    constexpr bool F = ck_same<T, float>::value || ck_same<T, double>::value || ck_same<T, ck_half>::value ||
                       ck_same<T, ck_bf16>::value;
    k_trace<T, F> k{(const T *)x, n, stride, out};
    return ck_launch(k, 1, stream);
  });
}

#if defined(__CUDACC__)
#define LINALG_TABLE_NAME "sm_90"
#define LINALG_TABLE_FN lt_ck_linalg_device_kernels
#else
#define LINALG_TABLE_NAME "host"
#define LINALG_TABLE_FN lt_ck_host_linalg_kernels
#endif

static const lt_ck_linalg_kernels linalg_table = {LINALG_TABLE_NAME, CK_API(linalg_trace)};

extern "C" const lt_ck_linalg_kernels *LINALG_TABLE_FN(void) { return &linalg_table; }
