/*
** shape.cu — tril/triu's kernel (shape.h): one thread per element, its row
** and column from the linear index, kept or zeroed.
*/
#include "cuda/kernels/ck.h"
#include "cuda/kernels/shape.h"

namespace CK_NS {

template<class U> struct ck_triangle {
  LT_COLD;
  U *out;
  const U *in;
  int ndim;
  int64_t size[LT_CK_MAX_DIMS], ost[LT_CK_MAX_DIMS], ist[LT_CK_MAX_DIMS];
  int64_t k;
  bool lower;
  uint64_t n;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (uint64_t i = tid; i < n; i += nt) {
      uint64_t r = i;
      int64_t oo = 0, io = 0, row = 0, col = 0;
      for (int d = ndim - 1; d >= 0; d--) {
        uint64_t s = (uint64_t)size[d], q = r / s;
        int64_t c = (int64_t)(r - q * s);
        if (d == ndim - 1) col = c;
        else if (d == ndim - 2) row = c;
        oo += c * ost[d];
        io += c * ist[d];
        r = q;
      }
      bool keep = lower ? col - row <= k : col - row >= k;
      out[oo] = keep ? in[io] : (U)0;
    }
  }
};

template<class U> static int triangle_as(void *out, const void *in, const lt_ck_geom *g, int64_t k, bool lower,
                                         uint64_t n, void *stream) {
  ck_triangle<U> t;
  t.out = (U *)out;
  t.in = (const U *)in;
  t.ndim = g->ndim;
  for (int d = 0; d < g->ndim; d++) {
    t.size[d] = g->sizes[d];
    t.ost[d] = g->strides[0][d];
    t.ist[d] = g->strides[1][d];
  }
  t.k = k;
  t.lower = lower;
  t.n = n;
  return ck_launch(t, n, stream);
}

static int triangle(int es, void *out, const void *in, const lt_ck_geom *g, int64_t k, int lower, void *stream) {
  if (!g || g->ndim < 2 || g->ndim > LT_CK_MAX_DIMS) return LT_CK_EINVAL;
  uint64_t n = 1;
  for (int d = 0; d < g->ndim; d++) {
    if (g->sizes[d] < 0) return LT_CK_EINVAL;
    n *= (uint64_t)g->sizes[d];
  }
  if (n == 0) return LT_CK_OK;
  if (!out || !in) return LT_CK_EINVAL;
  switch (es) {
    case 8: return triangle_as<uint64_t>(out, in, g, k, lower != 0, n, stream);
    case 4: return triangle_as<uint32_t>(out, in, g, k, lower != 0, n, stream);
    case 2: return triangle_as<uint16_t>(out, in, g, k, lower != 0, n, stream);
    case 1: return triangle_as<uint8_t>(out, in, g, k, lower != 0, n, stream);
    default: return LT_CK_EINVAL;
  }
}

} /* namespace CK_NS */

#if defined(__CUDACC__)
#define CK_SHAPE_NAME "sm_90"
#define CK_SHAPE_TABLE lt_ck_shape_device_kernels
#else
#define CK_SHAPE_NAME "host"
#define CK_SHAPE_TABLE lt_ck_host_shape_kernels
#endif

static const lt_ck_shape_kernels ck_shape_table = { CK_SHAPE_NAME, CK_NS::triangle };

extern "C" const lt_ck_shape_kernels *CK_SHAPE_TABLE(void) { return &ck_shape_table; }
