/*
** conv.cu — im2col, col2im, the 2-D pools, pad and 2-D upsampling (conv.h),
** one thread per output element in grid-stride loops (ck.h's kernel
** structs), float and double. No kernel needs atomics: col2im and the
** average pools' backward gather (one thread per input element, over the
** outputs that read it, in output order); the backwards that know no window
** (max_pool2d_backward has only indices, pad and upsampling map outputs to
** inputs) run one thread per plane or slab, adding in output order, so every
** sum is added in the CPU's order. The windows and source rules are
** meta/pool.h's and meta/resample.h's, written again here because the
** kernels cannot include lutorch's C headers: tests/lua/cuda/test_conv.lua
** compares every case with the CPU.
*/
#include "cuda/kernels/ck.h"
#include "cuda/kernels/conv.h"

namespace CK_NS {

/* ---- im2col / col2im ---- */

template<class T> struct k_im2col {
  LT_COLD;
  const T *x;
  T *col;
  lt_ck_conv_geom g;
  int64_t n;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    const int64_t L = g.OH * g.OW, KK = g.kh * g.kw;
    for (int64_t e = tid; e < n; e += nt) {
      /* e = ((b * C + c) * KK + i * kw + j) * L + oh * OW + ow */
      int64_t l = e % L, r = e / L;
      int64_t kk = r % KK, bc = r / KK;
      int64_t oh = l / g.OW, ow = l % g.OW, i = kk / g.kw, j = kk % g.kw;
      int64_t h = oh * g.sh - g.ph + i * g.dh, w = ow * g.sw - g.pw + j * g.dw;
      col[e] = h >= 0 && h < g.H && w >= 0 && w < g.W ? x[(bc * g.H + h) * g.W + w] : T(0);
    }
  }
};

/* the output positions o in [0, out) whose tap t (o*s - p + t*d == x) reads
** input position x, for each tap: lo..hi of o, stepping one tap at a time */
template<class T> struct k_col2im {
  LT_COLD;
  const T *col;
  T *x;
  lt_ck_conv_geom g;
  int64_t n;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    const int64_t L = g.OH * g.OW, KK = g.kh * g.kw;
    for (int64_t e = tid; e < n; e += nt) {
      int64_t w = e % g.W, r = e / g.W;
      int64_t h = r % g.H, bc = r / g.H;
      const T *cb = col + bc * KK * L;
      T s = T(0);
      for (int64_t i = 0; i < g.kh; i++) {
        int64_t hh = h + g.ph - i * g.dh;               /* = oh * sh */
        if (hh < 0 || hh % g.sh) continue;
        int64_t oh = hh / g.sh;
        if (oh >= g.OH) continue;
        for (int64_t j = 0; j < g.kw; j++) {
          int64_t ww = w + g.pw - j * g.dw;
          if (ww < 0 || ww % g.sw) continue;
          int64_t ow = ww / g.sw;
          if (ow >= g.OW) continue;
          s += cb[(i * g.kw + j) * L + oh * g.OW + ow];
        }
      }
      x[e] = s;
    }
  }
};

/* ---- pooling windows (meta/pool.h) ---- */

__host__ __device__ __forceinline__ int64_t ad_start(int64_t o, int64_t out, int64_t in) { return (o * in) / out; }
__host__ __device__ __forceinline__ int64_t ad_end(int64_t o, int64_t out, int64_t in) {
  return ((o + 1) * in + out - 1) / out;
}

__host__ __device__ __forceinline__ void max_window(const lt_ck_pool_geom &q, int64_t oh, int64_t ow, int64_t *h0,
                                                    int64_t *h1, int64_t *w0, int64_t *w1) {
  if (q.adaptive) {
    *h0 = ad_start(oh, q.OH, q.H); *h1 = ad_end(oh, q.OH, q.H);
    *w0 = ad_start(ow, q.OW, q.W); *w1 = ad_end(ow, q.OW, q.W);
    return;
  }
  int64_t hs = oh * q.sh - q.ph, ws = ow * q.sw - q.pw;
  int64_t he = hs + (q.kh - 1) * q.dh + 1, we = ws + (q.kw - 1) * q.dw + 1;
  while (hs < 0) hs += q.dh;
  while (ws < 0) ws += q.dw;
  *h0 = hs; *h1 = he < q.H ? he : q.H;
  *w0 = ws; *w1 = we < q.W ? we : q.W;
}

__host__ __device__ __forceinline__ void avg_window(const lt_ck_pool_geom &q, int64_t oh, int64_t ow, int64_t *h0,
                                                    int64_t *h1, int64_t *w0, int64_t *w1, double *div) {
  if (q.adaptive) {
    max_window(q, oh, ow, h0, h1, w0, w1);
    *div = (double)((*h1 - *h0) * (*w1 - *w0));
    return;
  }
  int64_t hs = oh * q.sh - q.ph, ws = ow * q.sw - q.pw;
  int64_t he = hs + q.kh, we = ws + q.kw;
  if (he > q.H + q.ph) he = q.H + q.ph;
  if (we > q.W + q.pw) we = q.W + q.pw;
  int64_t area = (he - hs) * (we - ws);
  if (hs < 0) hs = 0;
  if (ws < 0) ws = 0;
  if (he > q.H) he = q.H;
  if (we > q.W) we = q.W;
  *h0 = hs; *h1 = he; *w0 = ws; *w1 = we;
  *div = q.divisor ? (double)q.divisor : q.count_include_pad ? (double)area : (double)((he - hs) * (we - ws));
}

/* the outputs o whose window (of either kind) can hold input position x:
** a superset, [lo, hi), each then checked against its window */
__host__ __device__ __forceinline__ void candidates(bool adaptive, int64_t x, int64_t in, int64_t out, int64_t k,
                                                    int64_t s, int64_t p, int64_t d, int64_t *lo, int64_t *hi) {
  if (adaptive) {
    int64_t a = (x * out) / in - 1, b = ((x + 1) * out + in - 1) / in + 1;
    *lo = a > 0 ? a : 0;
    *hi = b < out ? b : out;
    return;
  }
  /* o*s - p <= x <= o*s - p + (k-1)*d: a window of k taps d apart */
  int64_t reach = (k - 1) * (d > 1 ? d : 1);
  int64_t a = x + p - reach;
  int64_t l = a <= 0 ? 0 : (a + s - 1) / s;
  int64_t h = (x + p) / s + 1;
  *lo = l;
  *hi = h < out ? h : out;
}

/* ---- max ---- */

template<class T> struct k_max_pool {
  LT_COLD;
  const T *x;
  T *y;
  int64_t *ix;
  lt_ck_pool_geom q;
  int64_t n;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t e = tid; e < n; e += nt) {
      int64_t ow = e % q.OW, r = e / q.OW;
      int64_t oh = r % q.OH, p = r / q.OH;
      const T *xp = x + p * q.H * q.W;
      int64_t h0, h1, w0, w1;
      max_window(q, oh, ow, &h0, &h1, &w0, &w1);
      int64_t bi = h0 * q.W + w0;
      T best = xp[bi];
      for (int64_t h = h0; h < h1; h += q.dh)
        for (int64_t w = w0; w < w1; w += q.dw) {
          T v = xp[h * q.W + w];
          if (v > best || v != v) { best = v; bi = h * q.W + w; }
        }
      y[e] = best;
      ix[e] = bi + 1;
    }
  }
};

/* max_pool2d_backward knows the indices, not the windows (its op has no
** kernel size or stride), so it scatters: one thread per plane zeroes its
** input plane and adds the plane's outputs in order, the CPU's order; the
** planes are independent, so nothing races */
template<class T> struct k_max_back {
  LT_COLD;
  const T *gy;
  const int64_t *ix;
  T *gx;
  lt_ck_pool_geom q;
  int64_t n;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    const int64_t hw = q.H * q.W, o = q.OH * q.OW;
    for (int64_t p = tid; p < n; p += nt) {
      T *g = gx + p * hw;
      for (int64_t i = 0; i < hw; i++) g[i] = T(0);
      for (int64_t i = 0; i < o; i++) {
        int64_t k = ix[p * o + i] - 1;
        if (k >= 0 && k < hw) g[k] += gy[p * o + i];
      }
    }
  }
};

/* whether every index names an element of the plane (any bad one sets *bad) */
struct k_max_check {
  LT_COLD;
  const int64_t *ix;
  int *bad;
  int64_t hw, n;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t e = tid; e < n; e += nt)
      if (ix[e] < 1 || ix[e] > hw) *bad = 1;
  }
};

/* ---- average ---- */

template<class T> struct k_avg_pool {
  LT_COLD;
  const T *x;
  T *y;
  lt_ck_pool_geom q;
  int64_t n;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t e = tid; e < n; e += nt) {
      int64_t ow = e % q.OW, r = e / q.OW;
      int64_t oh = r % q.OH, p = r / q.OH;
      const T *xp = x + p * q.H * q.W;
      int64_t h0, h1, w0, w1;
      double div;
      avg_window(q, oh, ow, &h0, &h1, &w0, &w1, &div);
      T s = T(0);
      for (int64_t h = h0; h < h1; h++)
        for (int64_t w = w0; w < w1; w++) s += xp[h * q.W + w];
      y[e] = h1 > h0 && w1 > w0 ? (T)(s / (T)div) : T(0);
    }
  }
};

template<class T> struct k_avg_back {
  LT_COLD;
  const T *gy;
  T *gx;
  lt_ck_pool_geom q;
  int64_t n;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t e = tid; e < n; e += nt) {
      int64_t w = e % q.W, r = e / q.W;
      int64_t h = r % q.H, p = r / q.H;
      int64_t oh0, oh1, ow0, ow1;
      candidates(q.adaptive, h, q.H, q.OH, q.kh, q.sh, q.ph, 1, &oh0, &oh1);
      candidates(q.adaptive, w, q.W, q.OW, q.kw, q.sw, q.pw, 1, &ow0, &ow1);
      T s = T(0);
      for (int64_t oh = oh0; oh < oh1; oh++)
        for (int64_t ow = ow0; ow < ow1; ow++) {
          int64_t h0, h1, w0, w1;
          double div;
          avg_window(q, oh, ow, &h0, &h1, &w0, &w1, &div);
          if (h < h0 || h >= h1 || w < w0 || w >= w1) continue;
          s += (T)(gy[(p * q.OH + oh) * q.OW + ow] / (T)div);
        }
      gx[e] = s;
    }
  }
};

/* ---- pad (meta/resample.h's lt_meta_pad_source) ---- */

__host__ __device__ __forceinline__ int64_t pad_source(int mode, int64_t o, int64_t left, int64_t n) {
  int64_t s = o - left;
  if (mode == 0) return s >= 0 && s < n ? s : -1;
  if (mode == 1) {
    if (s < 0) s = -s;
    if (s >= n) s = 2 * (n - 1) - s;
    return s;
  }
  return s < 0 ? 0 : s >= n ? n - 1 : s;
}

/* the input offset that output element e reads, -1 for a fill element */
__host__ __device__ __forceinline__ int64_t pad_read(const lt_ck_pad_geom &g, int64_t e) {
  int64_t off = 0, mul = 1;
  for (int d = g.ndim - 1; d >= 0; d--) {
    int64_t o = e % g.out[d];
    e /= g.out[d];
    int64_t s = d >= g.ndim - g.k ? pad_source(g.mode, o, g.left[d], g.in[d]) : o;
    if (s < 0) return -1;
    off += s * mul;
    mul *= g.in[d];
  }
  return off;
}

template<class T> struct k_pad {
  LT_COLD;
  const T *x;
  T *y;
  T fill;
  lt_ck_pad_geom g;
  int64_t n;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t e = tid; e < n; e += nt) {
      int64_t s = pad_read(g, e);
      y[e] = s < 0 ? fill : x[s];
    }
  }
};

/* one thread per slab of the unpadded dims: zero its input, add its outputs in order */
template<class T> struct k_pad_back {
  LT_COLD;
  const T *gy;
  T *gx;
  lt_ck_pad_geom g;
  int64_t n;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    int64_t in_slab = 1, out_slab = 1;
    for (int d = g.ndim - g.k; d < g.ndim; d++) { in_slab *= g.in[d]; out_slab *= g.out[d]; }
    for (int64_t sl = tid; sl < n; sl += nt) {
      T *x = gx + sl * in_slab;
      const T *y = gy + sl * out_slab;
      for (int64_t i = 0; i < in_slab; i++) x[i] = T(0);
      for (int64_t o = 0; o < out_slab; o++) {
        /* the source inside the slab: the padded dims only */
        int64_t e = o, off = 0, mul = 1;
        bool fill = false;
        for (int d = g.ndim - 1; d >= g.ndim - g.k; d--) {
          int64_t c = e % g.out[d];
          e /= g.out[d];
          int64_t s = pad_source(g.mode, c, g.left[d], g.in[d]);
          if (s < 0) { fill = true; break; }
          off += s * mul;
          mul *= g.in[d];
        }
        if (!fill) x[off] += y[o];
      }
    }
  }
};

/* ---- upsampling (meta/resample.h) ---- */

__host__ __device__ __forceinline__ int64_t nearest_src(int64_t o, int64_t in, float ratio) {
  int64_t s = (int64_t)floorf((float)o * ratio);
  return s < in - 1 ? s : in - 1;
}

template<class T>
__host__ __device__ __forceinline__ void bilinear_src(int64_t o, int64_t in, int64_t out, bool ac, double sf,
                                                      int64_t *i0, int64_t *i1, T *lam) {
  T scale = ac ? (out > 1 ? (T)(in - 1) / (T)(out - 1) : (T)0) : sf > 0 ? (T)(1.0 / sf) : (T)in / (T)out;
  T s = ac ? scale * (T)o : scale * ((T)o + (T)0.5) - (T)0.5;
  if (s < 0) s = 0;
  int64_t a = (int64_t)s;
  if (a > in - 1) a = in - 1;
  *i0 = a; *i1 = a < in - 1 ? a + 1 : a;
  *lam = s - (T)a;
  if (*lam < 0) *lam = 0;
}

template<class T> struct k_up {
  LT_COLD;
  const T *x;
  T *y;
  lt_ck_up_geom g;
  bool bilinear;
  int64_t n;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t e = tid; e < n; e += nt) {
      int64_t ow = e % g.OW, r = e / g.OW;
      int64_t oh = r % g.OH, p = r / g.OH;
      const T *xp = x + p * g.H * g.W;
      if (!bilinear) {
        y[e] = xp[nearest_src(oh, g.H, g.ratio_h) * g.W + nearest_src(ow, g.W, g.ratio_w)];
        continue;
      }
      int64_t h0, h1, w0, w1;
      T lh, lw;
      bilinear_src<T>(oh, g.H, g.OH, g.align_corners, g.scale_h, &h0, &h1, &lh);
      bilinear_src<T>(ow, g.W, g.OW, g.align_corners, g.scale_w, &w0, &w1, &lw);
      const T *r0 = xp + h0 * g.W, *r1 = xp + h1 * g.W;
      y[e] = ((T)1 - lh) * (((T)1 - lw) * r0[w0] + lw * r0[w1]) + lh * (((T)1 - lw) * r1[w0] + lw * r1[w1]);
    }
  }
};

/* one thread per plane: zero its gradient, add the plane's outputs in order */
template<class T> struct k_up_back {
  LT_COLD;
  const T *gy;
  T *gx;
  lt_ck_up_geom g;
  bool bilinear;
  int64_t n;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t p = tid; p < n; p += nt) {
      T *x = gx + p * g.H * g.W;
      const T *y = gy + p * g.OH * g.OW;
      for (int64_t i = 0; i < g.H * g.W; i++) x[i] = T(0);
      for (int64_t oh = 0; oh < g.OH; oh++)
        for (int64_t ow = 0; ow < g.OW; ow++) {
          T v = y[oh * g.OW + ow];
          if (!bilinear) {
            x[nearest_src(oh, g.H, g.ratio_h) * g.W + nearest_src(ow, g.W, g.ratio_w)] += v;
            continue;
          }
          int64_t h0, h1, w0, w1;
          T lh, lw;
          bilinear_src<T>(oh, g.H, g.OH, g.align_corners, g.scale_h, &h0, &h1, &lh);
          bilinear_src<T>(ow, g.W, g.OW, g.align_corners, g.scale_w, &w0, &w1, &lw);
          T *r0 = x + h0 * g.W, *r1 = x + h1 * g.W;
          r0[w0] += ((T)1 - lh) * ((T)1 - lw) * v; r0[w1] += ((T)1 - lh) * lw * v;
          r1[w0] += lh * ((T)1 - lw) * v; r1[w1] += lh * lw * v;
        }
    }
  }
};

/* f(T()) for float32 and float64, else EUNSUPPORTED */
template<class F> static inline int float_dispatch(int dtype, F &&f) {
  if (dtype == LT_CK_FLOAT32) return f(float());
  if (dtype == LT_CK_FLOAT64) return f(double());
  return LT_CK_EUNSUPPORTED;
}

template<class K> static inline int launch_n(K &k, int64_t n, void *stream) {
  k.n = n;
  return n > 0 ? ck_launch(k, (uint64_t)n, stream) : (int)LT_CK_OK;
}

} /* namespace CK_NS */

using namespace CK_NS;

static int CK_API(conv_im2col)(int dtype, const void *x, void *col, const lt_ck_conv_geom *g, void *stream) {
  if (!x || !col || !g) return LT_CK_EINVAL;
  return float_dispatch(dtype, [&](auto t) {
    typedef decltype(t) T;
    k_im2col<T> k{(const T *)x, (T *)col, *g, 0};
    return launch_n(k, g->N * g->C * g->kh * g->kw * g->OH * g->OW, stream);
  });
}

static int CK_API(conv_col2im)(int dtype, const void *col, void *x, const lt_ck_conv_geom *g, void *stream) {
  if (!x || !col || !g || g->sh <= 0 || g->sw <= 0) return LT_CK_EINVAL;
  return float_dispatch(dtype, [&](auto t) {
    typedef decltype(t) T;
    k_col2im<T> k{(const T *)col, (T *)x, *g, 0};
    return launch_n(k, g->N * g->C * g->H * g->W, stream);
  });
}

static int CK_API(max_pool)(int dtype, const void *x, void *y, int64_t *ix, const lt_ck_pool_geom *g, void *stream) {
  if (!x || !y || !ix || !g) return LT_CK_EINVAL;
  return float_dispatch(dtype, [&](auto t) {
    typedef decltype(t) T;
    k_max_pool<T> k{(const T *)x, (T *)y, ix, *g, 0};
    return launch_n(k, g->P * g->OH * g->OW, stream);
  });
}

static int CK_API(max_pool_backward)(int dtype, const void *gy, const int64_t *ix, void *gx, int *bad,
                                     const lt_ck_pool_geom *g, void *stream) {
  if (!gy || !ix || !gx || !bad || !g) return LT_CK_EINVAL;
  k_max_check c{ix, bad, g->H * g->W, 0};
  int rc = launch_n(c, g->P * g->OH * g->OW, stream);
  if (rc != LT_CK_OK) return rc;
  return float_dispatch(dtype, [&](auto t) {
    typedef decltype(t) T;
    k_max_back<T> k{(const T *)gy, ix, (T *)gx, *g, 0};
    return launch_n(k, g->P, stream);
  });
}

static int CK_API(avg_pool)(int dtype, const void *x, void *y, const lt_ck_pool_geom *g, void *stream) {
  if (!x || !y || !g) return LT_CK_EINVAL;
  return float_dispatch(dtype, [&](auto t) {
    typedef decltype(t) T;
    k_avg_pool<T> k{(const T *)x, (T *)y, *g, 0};
    return launch_n(k, g->P * g->OH * g->OW, stream);
  });
}

static int CK_API(avg_pool_backward)(int dtype, const void *gy, void *gx, const lt_ck_pool_geom *g, void *stream) {
  if (!gy || !gx || !g || (!g->adaptive && (g->sh <= 0 || g->sw <= 0))) return LT_CK_EINVAL;
  return float_dispatch(dtype, [&](auto t) {
    typedef decltype(t) T;
    k_avg_back<T> k{(const T *)gy, (T *)gx, *g, 0};
    return launch_n(k, g->P * g->H * g->W, stream);
  });
}

static int CK_API(pad)(int elem_size, const void *x, void *y, const void *fill, const lt_ck_pad_geom *g,
                       void *stream) {
  if (!x || !y || !fill || !g || g->ndim < 0 || g->ndim > 16 || g->k < 0 || g->k > g->ndim) return LT_CK_EINVAL;
  int64_t n = 1;
  for (int d = 0; d < g->ndim; d++) n *= g->out[d];
  auto go = [&](auto t) {
    typedef decltype(t) T;
    k_pad<T> k{(const T *)x, (T *)y, T(), *g, 0};
    memcpy((void *)&k.fill, fill, sizeof(T));
    return launch_n(k, n, stream);
  };
  switch (elem_size) {
    case 1: return go(uint8_t());
    case 2: return go(uint16_t());
    case 4: return go(uint32_t());
    case 8: return go(uint64_t());
    default: return LT_CK_EINVAL;
  }
}

static int CK_API(pad_backward)(int dtype, const void *gy, void *gx, const lt_ck_pad_geom *g, void *stream) {
  if (!gy || !gx || !g || g->ndim < 0 || g->ndim > 16 || g->k < 0 || g->k > g->ndim) return LT_CK_EINVAL;
  return float_dispatch(dtype, [&](auto t) {
    typedef decltype(t) T;
    k_pad_back<T> k{(const T *)gy, (T *)gx, *g, 0};
    return launch_n(k, g->outer, stream);
  });
}

static int CK_API(upsample)(int dtype, int bilinear, const void *x, void *y, const lt_ck_up_geom *g, void *stream) {
  if (!x || !y || !g) return LT_CK_EINVAL;
  return float_dispatch(dtype, [&](auto t) {
    typedef decltype(t) T;
    k_up<T> k{(const T *)x, (T *)y, *g, bilinear != 0, 0};
    return launch_n(k, g->P * g->OH * g->OW, stream);
  });
}

static int CK_API(upsample_backward)(int dtype, int bilinear, const void *gy, void *gx, const lt_ck_up_geom *g,
                                     void *stream) {
  if (!gy || !gx || !g) return LT_CK_EINVAL;
  return float_dispatch(dtype, [&](auto t) {
    typedef decltype(t) T;
    k_up_back<T> k{(const T *)gy, (T *)gx, *g, bilinear != 0, 0};
    return launch_n(k, g->P, stream);
  });
}

#if defined(__CUDACC__)
#define CONV_TABLE_NAME "sm_90"
#define CONV_TABLE_FN lt_ck_conv_device_kernels
#else
#define CONV_TABLE_NAME "host"
#define CONV_TABLE_FN lt_ck_host_conv_kernels
#endif

static const lt_ck_conv_kernels conv_table = {
  CONV_TABLE_NAME, CK_API(conv_im2col), CK_API(conv_col2im), CK_API(max_pool), CK_API(max_pool_backward),
  CK_API(avg_pool), CK_API(avg_pool_backward), CK_API(pad), CK_API(pad_backward), CK_API(upsample),
  CK_API(upsample_backward),
};

extern "C" const lt_ck_conv_kernels *CONV_TABLE_FN(void) { return &conv_table; }
