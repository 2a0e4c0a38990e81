/*
** ck_red.h — the prepared geometry of the reduction-like kernels (reduce.cu,
** nnred.cu): the kept dims of an lt_ck_red_geom with up to three offset rows
** (input, out, out2), the reduced dims walked in logical order, and ck_each
** over a slice. Both builds, as ck.h.
*/
#ifndef LT_CUDA_CK_RED_H
#define LT_CUDA_CK_RED_H
#include "cuda/kernels/ck.h"
#include "cuda/kernels/reduce.h"

namespace CK_NS {

/* ---- geometry, prepared: size-1 dims dropped, contiguous runs merged ---- */
struct ck_rgeom {
  int nd;                                     /* kept dims, innermost first */
  int64_t size[LT_CK_KERNEL_DIMS], ist[LT_CK_KERNEL_DIMS], ost[LT_CK_KERNEL_DIMS], o2st[LT_CK_KERNEL_DIMS];
  int rd;                                     /* reduced dims, innermost first */
  int64_t rsize[LT_CK_KERNEL_DIMS], rst[LT_CK_KERNEL_DIMS];
  int64_t nout, R;

  __host__ __device__ __forceinline__ void offsets(int64_t o, int64_t *io, int64_t *oo, int64_t *o2) const {
    int64_t a = 0, b = 0, c = 0;
    for (int d = 0; d < nd; d++) {
      int64_t q = o / size[d], k = o - q * size[d];
      a += k * ist[d]; b += k * ost[d]; c += k * o2st[d];
      o = q;
    }
    *io = a; *oo = b; *o2 = c;
  }
  /* the input offset of slice element r (logical order) */
  __host__ __device__ __forceinline__ int64_t roff(int64_t r) const {
    int64_t a = 0;
    for (int d = 0; d < rd; d++) {
      int64_t q = r / rsize[d];
      a += (r - q * rsize[d]) * rst[d];
      r = q;
    }
    return a;
  }
};

/* f(x, r) for the slice elements r0 <= r < r1 of base, in order */
template<class T, class F>
__host__ __device__ __forceinline__ void ck_each(const T *base, const ck_rgeom &g, int64_t r0, int64_t r1, F &&f) {
  if (r0 >= r1) return;
  if (g.rd <= 1) {
    const int64_t st = g.rd ? g.rst[0] : 0;
    for (int64_t r = r0; r < r1; r++) f(base[r * st], r);
    return;
  }
  /* a counter per dim, carried, instead of a division per element */
  int64_t c[LT_CK_KERNEL_DIMS], off = 0, rem = r0;
  for (int d = 0; d < g.rd; d++) {
    int64_t q = rem / g.rsize[d];
    c[d] = rem - q * g.rsize[d];
    off += c[d] * g.rst[d];
    rem = q;
  }
  for (int64_t r = r0; r < r1; r++) {
    f(base[off], r);
    for (int d = 0; d < g.rd; d++) {
      off += g.rst[d];
      if (++c[d] < g.rsize[d]) break;
      off -= c[d] * g.rst[d];
      c[d] = 0;
    }
  }
}

static inline int ck_red_prepare(const lt_ck_red_geom *g, ck_rgeom *s) {
  if (!g || g->ndim < 0 || g->ndim > LT_CK_MAX_DIMS || g->rdim < 0 || g->rdim > LT_CK_MAX_DIMS) return LT_CK_EINVAL;
  s->nd = 0; s->rd = 0; s->nout = 1; s->R = 1;
  for (int d = g->ndim - 1; d >= 0; d--) {
    int64_t n = g->sizes[d];
    if (n < 0) return LT_CK_EINVAL;
    s->nout *= n;
    if (n == 1) continue;
    int m = s->nd;
    if (m > 0 && g->in_strides[d] == s->ist[m - 1] * s->size[m - 1] &&
        g->out_strides[d] == s->ost[m - 1] * s->size[m - 1] && g->out2_strides[d] == s->o2st[m - 1] * s->size[m - 1]) {
      s->size[m - 1] *= n;
      continue;
    }
    if (m == LT_CK_KERNEL_DIMS) return LT_CK_EINVAL;
    s->size[m] = n; s->ist[m] = g->in_strides[d]; s->ost[m] = g->out_strides[d]; s->o2st[m] = g->out2_strides[d];
    s->nd = m + 1;
  }
  for (int d = g->rdim - 1; d >= 0; d--) {
    int64_t n = g->rsizes[d];
    if (n < 0) return LT_CK_EINVAL;
    s->R *= n;
    if (n == 1) continue;
    int m = s->rd;
    if (m > 0 && g->rstrides[d] == s->rst[m - 1] * s->rsize[m - 1]) { s->rsize[m - 1] *= n; continue; }
    if (m == LT_CK_KERNEL_DIMS) return LT_CK_EINVAL;
    s->rsize[m] = n; s->rst[m] = g->rstrides[d];
    s->rd = m + 1;
  }
  return LT_CK_OK;
}

} /* namespace CK_NS */
#endif
