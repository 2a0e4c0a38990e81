/*
** creation.cu — the sequences of the creation ops (random.h): arange and
** range (int64 or double steps), linspace and logspace, eye. One thread per
** element in a grid-stride loop, with the CPU kernels' arithmetic
** (src/cpu/creation.c), so both builds give the CPU's values.
*/
#include "cuda/kernels/ck.h"
#include "cuda/kernels/random.h"

namespace CK_NS {

template<class T> struct ck_seq {
  LT_COLD;
  lt_ck_seq_args a;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    T *out = (T *)a.out;
    for (uint64_t u = tid; u < (uint64_t)a.n; u += nt) {
      int64_t i = (int64_t)u;
      switch (a.kind) {
        case LT_CK_SEQ_INT:
          out[i] = ck_cvt<T>::from((int64_t)((uint64_t)a.istart + (uint64_t)i * (uint64_t)a.istep));
          break;
        case LT_CK_SEQ_FLOAT:
          out[i] = ck_cvt<T>::from(a.fstart + (double)i * a.fstep);
          break;
        case LT_CK_SEQ_LINSPACE: {
          double v = i < a.n / 2 ? a.fstart + (double)i * a.fstep : a.fend - (double)(a.n - 1 - i) * a.fstep;
          out[i] = ck_cvt<T>::from(a.log ? pow(a.base, v) : v);
          break;
        }
        default:
          out[i] = ck_cvt<T>::from((int64_t)(i / a.cols == i % a.cols));
          break;
      }
    }
  }
};

} /* namespace CK_NS */

extern "C" int CK_API(seq)(const lt_ck_seq_args *args, void *stream) {
  using namespace CK_NS;
  if (!args || args->n < 0 || args->kind < 0 || args->kind >= LT_CK_SEQ_NUM_KINDS ||
      (args->kind == LT_CK_SEQ_EYE && args->cols <= 0))
    return LT_CK_EINVAL;
  if (args->n == 0) return LT_CK_OK;
  if (!args->out) return LT_CK_EINVAL;
  return ck_dispatch(args->dtype, [&](auto tag) {
    typedef typename decltype(tag)::type T;
    ck_seq<T> k;
    k.a = *args;
    return ck_launch(k, (uint64_t)args->n, stream);
  });
}

#if defined(__CUDACC__)
#define CK_RANDOM_TABLE_NAME "sm_90"
#define CK_RANDOM_TABLE_FN lt_ck_random_device_kernels
#else
#define CK_RANDOM_TABLE_NAME "host"
#define CK_RANDOM_TABLE_FN lt_ck_host_random_kernels
#endif

static const lt_ck_random_kernels ck_random_table = {
  CK_RANDOM_TABLE_NAME, CK_API(random), CK_API(seq), CK_API(error_string),
};

extern "C" const lt_ck_random_kernels *CK_RANDOM_TABLE_FN(void) { return &ck_random_table; }
