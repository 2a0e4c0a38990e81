/*
** reduce.cu — the reductions and scans of reduce.h, written once for both
** builds.
**
** Each reduction is a functor R over one input dtype T with a partial state
** S (at most LT_CK_RED_PARTIAL bytes):
**   S slice(base, rg, r0, r1)   the state of slice elements [r0, r1)
**   S combine(S a, S b)         a's elements come before b's
**   void finish(S, R, out, out2) writes one output element
** run by three grid-stride kernels: red_direct (one thread per output
** element over its whole slice), and red_part + red_comb (one thread per
** chunk into the partials buffer, then one per output combining its chunks
** in order). Only these paths exist, in both builds: a shared-memory or
** warp-shuffle block reduction for the device build is not written yet, so
** what the host build runs under the tests is exactly the device build's
** algorithm. Nothing here has run on a GPU.
*/
#include "cuda/kernels/ck.h"
#include "cuda/kernels/ck_red.h"

namespace CK_NS {

/* ---- the three kernels ---- */
template<class Op> struct red_direct {
  LT_COLD;
  Op op;
  ck_rgeom g;
  const typename Op::in_t *in;
  void *out, *out2;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t o = tid; o < g.nout; o += nt) {
      int64_t io, oo, o2;
      g.offsets(o, &io, &oo, &o2);
      op.finish(op.slice(in + io, g, 0, g.R), g.R, out, oo, out2, o2);
    }
  }
};

template<class Op> struct red_part {
  LT_COLD;
  Op op;
  ck_rgeom g;
  const typename Op::in_t *in;
  typename Op::S *part;
  int64_t nch, len;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t t = tid; t < g.nout * nch; t += nt) {
      int64_t o = t / nch, c = t - o * nch, io, oo, o2;
      g.offsets(o, &io, &oo, &o2);
      int64_t r0 = c * len, r1 = r0 + len < g.R ? r0 + len : g.R;
      part[t] = op.slice(in + io, g, r0, r1);
    }
  }
};

template<class Op> struct red_comb {
  LT_COLD;
  Op op;
  ck_rgeom g;
  const typename Op::S *part;
  int64_t nch;
  void *out, *out2;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t o = tid; o < g.nout; o += nt) {
      int64_t io, oo, o2;
      g.offsets(o, &io, &oo, &o2);
      typename Op::S s = part[o * nch];
      for (int64_t c = 1; c < nch; c++) s = op.combine(s, part[o * nch + c]);
      op.finish(s, g.R, out, oo, out2, o2);
    }
  }
};

template<class Op>
static int red_run(const Op &op, const void *in, void *out, void *out2, const lt_ck_red_geom *gg, void *work,
                   void *stream) {
  static_assert(sizeof(typename Op::S) <= LT_CK_RED_PARTIAL, "partial too large");
  ck_rgeom g;
  int rc = ck_red_prepare(gg, &g);
  if (rc != LT_CK_OK || g.nout == 0) return rc;
  const int64_t nch = lt_ck_red_chunks(g.nout, g.R);
  if (nch <= 1) {
    red_direct<Op> k;
    k.op = op; k.g = g; k.in = (const typename Op::in_t *)in; k.out = out; k.out2 = out2;
    return ck_launch(k, (uint64_t)g.nout, stream);
  }
  if (!work) return LT_CK_EINVAL;
  red_part<Op> k1;
  k1.op = op; k1.g = g; k1.in = (const typename Op::in_t *)in; k1.part = (typename Op::S *)work;
  k1.len = (g.R + nch - 1) / nch;
  k1.nch = (g.R + k1.len - 1) / k1.len;     /* <= nch: no empty chunk */
  rc = ck_launch(k1, (uint64_t)(g.nout * k1.nch), stream);
  if (rc != LT_CK_OK) return rc;
  red_comb<Op> k2;
  k2.op = op; k2.g = g; k2.part = k1.part; k2.nch = k1.nch; k2.out = out; k2.out2 = out2;
  return ck_launch(k2, (uint64_t)g.nout, stream);
}

/* ---- the ops ---- */

/* the accumulation type of sums and products: the CPU's */
template<class T> struct ck_acc { typedef uint64_t A; typedef int64_t O; };
template<> struct ck_acc<double> { typedef double A; typedef double O; };
template<> struct ck_acc<float> { typedef float A; typedef float O; };
template<> struct ck_acc<ck_half> { typedef float A; typedef float O; };
template<> struct ck_acc<ck_bf16> { typedef float A; typedef float O; };

enum { F_SUM, F_NANSUM, F_PROD };

/* Floating sums are compensated (Kahan): c carries what the running sum v
** lost, so a long serial slice and the chunks' combination stay accurate to
** a few ulps in the accumulation type (float for float32 and 16-bit floats,
** as the CPU's; its pairwise sum is as accurate), not O(n) ulps. */
template<class T, int K> struct red_fold {
  typedef T in_t;
  typedef typename ck_acc<T>::A A;
  typedef typename ck_acc<T>::O O;
  static constexpr bool kahan = ck_type<T>::is_float && K != F_PROD;
  struct S { A v, c; int64_t n; };          /* n: non-NaN elements (nanmean) */
  bool mean;                                /* divide by R (SUM) or by n (NANSUM) */
  __host__ __device__ static __forceinline__ void add(S &s, A x) {
    if constexpr (kahan) {
      A y = x - s.c, t = s.v + y;
      /* an infinite or NaN sum keeps no compensation (inf - inf would make it NaN) */
      s.c = t - t == (A)0 ? (t - s.v) - y : (A)0;
      s.v = t;
    } else s.v = s.v + x;
  }
  __host__ __device__ __forceinline__ S slice(const T *b, const ck_rgeom &g, int64_t r0, int64_t r1) const {
    S s = {K == F_PROD ? (A)1 : (A)0, (A)0, 0};
    ck_each(b, g, r0, r1, [&](T x, int64_t) {
      typename ck_type<T>::C v = ck_load(x);
      if constexpr (K == F_PROD) s.v = s.v * (A)v;
      else if constexpr (K == F_NANSUM) { if (v == v) { add(s, (A)v); s.n++; } }
      else add(s, (A)v);
    });
    return s;
  }
  __host__ __device__ __forceinline__ S combine(S a, S b) const {
    if constexpr (K == F_PROD) a.v = a.v * b.v;
    else add(a, b.v - b.c);
    a.n += b.n;
    return a;
  }
  __host__ __device__ __forceinline__ void finish(S s, int64_t R, void *out, int64_t oo, void *, int64_t) const {
    A v = s.v - s.c;
    if constexpr (ck_type<T>::is_float) {
      if (mean) v = v / (A)(K == F_NANSUM ? s.n : R);
    }
    ((O *)out)[oo] = (O)v;
  }
};

/* count of nonzero elements; all: count == R, any: count > 0 */
enum { C_COUNT, C_ALL, C_ANY };
template<class T> struct red_count {
  typedef T in_t;
  struct S { uint64_t n; };
  int mode;
  __host__ __device__ __forceinline__ S slice(const T *b, const ck_rgeom &g, int64_t r0, int64_t r1) const {
    S s = {0};
    ck_each(b, g, r0, r1, [&](T x, int64_t) { s.n += ck_load(x) != 0; });
    return s;
  }
  __host__ __device__ __forceinline__ S combine(S a, S b) const { a.n += b.n; return a; }
  __host__ __device__ __forceinline__ void finish(S s, int64_t R, void *out, int64_t oo, void *, int64_t) const {
    if (mode == C_COUNT) ((int64_t *)out)[oo] = (int64_t)s.n;
    else ((uint8_t *)out)[oo] = (uint8_t)(mode == C_ALL ? s.n == (uint64_t)R : s.n > 0);
  }
};

/* max/min: v beats b when strictly better, or the first NaN */
template<class T, bool MIN> struct red_select {
  typedef T in_t;
  typedef typename ck_type<T>::C C;
  struct S { C v; int64_t i; };
  __host__ __device__ static __forceinline__ bool better(C v, C b) {
    if constexpr (MIN) return v < b || (v != v && b == b);
    else return v > b || (v != v && b == b);
  }
  __host__ __device__ __forceinline__ S slice(const T *b, const ck_rgeom &g, int64_t r0, int64_t r1) const {
    S s = {C(), -1};
    ck_each(b, g, r0, r1, [&](T x, int64_t r) {
      C v = ck_load(x);
      if (s.i < 0 || better(v, s.v)) { s.v = v; s.i = r; }
    });
    return s;
  }
  __host__ __device__ __forceinline__ S combine(S a, S b) const {
    return a.i < 0 || (b.i >= 0 && better(b.v, a.v)) ? b : a;
  }
  __host__ __device__ __forceinline__ void finish(S s, int64_t, void *out, int64_t oo, void *out2, int64_t o2) const {
    if (out) ((T *)out)[oo] = ck_store<T>(s.v);
    if (out2) ((int64_t *)out2)[o2] = s.i + 1;
  }
};

/* var/std: per chunk the count, mean and sum of squared deviations (two
** passes over the chunk); chunks merged with Chan, Golub and LeVeque's update */
template<class T> struct red_var {
  typedef T in_t;
  struct S { double n, mean, m2; };
  double corr;
  bool sq;
  __host__ __device__ __forceinline__ S slice(const T *b, const ck_rgeom &g, int64_t r0, int64_t r1) const {
    double sum = 0, m2 = 0, n = (double)(r1 - r0);
    ck_each(b, g, r0, r1, [&](T x, int64_t) { sum += (double)ck_load(x); });
    double mean = sum / n;
    ck_each(b, g, r0, r1, [&](T x, int64_t) { double d = (double)ck_load(x) - mean; m2 += d * d; });
    S s = {n, mean, m2};
    return s;
  }
  __host__ __device__ __forceinline__ S combine(S a, S b) const {
    double n = a.n + b.n, d = b.mean - a.mean;
    S s = {n, a.mean + d * (b.n / n), a.m2 + b.m2 + d * d * (a.n * b.n / n)};
    return s;
  }
  __host__ __device__ __forceinline__ void finish(S s, int64_t R, void *out, int64_t oo, void *out2, int64_t o2) const {
    double den = (double)R - corr;
    if (den < 0) den = 0;
    double v = s.m2 / den;
    ((double *)out)[oo] = sq ? sqrt(v) : v;
    if (out2) ((double *)out2)[o2] = s.mean;
  }
};

/* norms: sums of |x|^p (p = 2, 1, 0, other), or the max / min of |x| (NaN sticks) */
enum { N_L2, N_L1, N_L0, N_LP, N_MAX, N_MIN };
template<class T> struct red_norm {
  typedef T in_t;
  struct S { double a; };
  int kind;
  double p;
  __host__ __device__ __forceinline__ double pick(double a, double v) const {
    bool t = kind == N_MIN ? (v < a || v != v) : (v > a || v != v);
    return a != a ? a : t ? v : a;
  }
  __host__ __device__ __forceinline__ S slice(const T *b, const ck_rgeom &g, int64_t r0, int64_t r1) const {
    S s = {kind == N_MAX ? -INFINITY : kind == N_MIN ? INFINITY : 0.0};
    ck_each(b, g, r0, r1, [&](T x, int64_t) {
      double v = fabs((double)ck_load(x));
      switch (kind) {
        case N_L2: s.a += v * v; break;
        case N_L1: s.a += v; break;
        case N_L0: s.a += v != 0; break;
        case N_LP: s.a += pow(v, p); break;
        default: s.a = pick(s.a, v); break;
      }
    });
    return s;
  }
  __host__ __device__ __forceinline__ S combine(S a, S b) const {
    if (kind == N_MAX || kind == N_MIN) a.a = pick(a.a, b.a);
    else a.a += b.a;
    return a;
  }
  __host__ __device__ __forceinline__ void finish(S s, int64_t, void *out, int64_t oo, void *, int64_t) const {
    double r = kind == N_L2 ? sqrt(s.a) : kind == N_LP ? pow(s.a, 1.0 / p) : s.a;
    ((double *)out)[oo] = r;
  }
};

/* logsumexp: per chunk the max m (NaN sticks) and sum of exp(x - m') with m'
** = 0 where m is infinite; merged by rescaling to the larger max */
template<class T> struct red_lse {
  typedef T in_t;
  struct S { double m, s; };
  __host__ __device__ static __forceinline__ double shift(double m) { return isinf(m) ? 0.0 : m; }
  __host__ __device__ static __forceinline__ double maxn(double a, double v) { return a != a ? a : (v > a || v != v) ? v : a; }
  __host__ __device__ __forceinline__ S slice(const T *b, const ck_rgeom &g, int64_t r0, int64_t r1) const {
    double m = -INFINITY, s = 0;
    ck_each(b, g, r0, r1, [&](T x, int64_t) { m = maxn(m, (double)ck_load(x)); });
    const double sh = shift(m);
    ck_each(b, g, r0, r1, [&](T x, int64_t) { s += exp((double)ck_load(x) - sh); });
    S r = {m, s};
    return r;
  }
  __host__ __device__ __forceinline__ S combine(S a, S b) const {
    S r;
    r.m = maxn(a.m, b.m);
    if (isinf(r.m) || r.m != r.m) { r.s = 0; return r; }   /* the result is r.m */
    r.s = a.s * exp(shift(a.m) - r.m) + b.s * exp(shift(b.m) - r.m);
    return r;
  }
  __host__ __device__ __forceinline__ void finish(S s, int64_t, void *out, int64_t oo, void *, int64_t) const {
    ((double *)out)[oo] = isinf(s.m) || s.m != s.m ? s.m : s.m + log(s.s);
  }
};

/* ---- scans: one thread per line ---- */
template<class T> struct scan_line {
  LT_COLD;
  ck_rgeom g;
  const T *in;
  void *out, *out2;
  int64_t n, ist, ost, o2st;
  int op;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    typedef typename ck_type<T>::C C;
    typedef typename ck_acc<T>::A A;
    typedef typename ck_acc<T>::O O;
    for (int64_t l = tid; l < g.nout; l += nt) {
      int64_t io, oo, o2;
      g.offsets(l, &io, &oo, &o2);
      const T *x = in + io;
      if (op == LT_CK_SCAN_CUMSUM || op == LT_CK_SCAN_CUMPROD) {
        O *y = (O *)out + oo;
        A a = op == LT_CK_SCAN_CUMPROD ? (A)1 : (A)0;
        for (int64_t k = 0; k < n; k++) {
          C v = ck_load(x[k * ist]);
          a = op == LT_CK_SCAN_CUMPROD ? a * (A)v : a + (A)v;
          y[k * ost] = (O)a;
        }
      } else if (op == LT_CK_SCAN_LOGCUMSUMEXP) {
        T *y = (T *)out + oo;
        double acc = -INFINITY;
        for (int64_t k = 0; k < n; k++) {
          double v = (double)ck_load(x[k * ist]);
          if (v != v || acc != acc) acc = NAN;
          else if (!(acc == v && isinf(v))) {    /* equal infinities: inf - inf would be NaN */
            double mx = acc > v ? acc : v;
            acc = mx + log1p(exp(-fabs(acc - v)));
          }
          y[k * ost] = ck_cvt<T>::from(acc);
        }
      } else {
        /* v takes over when NaN, or when it ties or beats a non-NaN running value */
        const bool mx = op == LT_CK_SCAN_CUMMAX;
        T *y = (T *)out + oo;
        int64_t *ix = (int64_t *)out2 + o2;
        C b = C();
        T bs = T();
        int64_t bi = 0;
        for (int64_t k = 0; k < n; k++) {
          T xs = x[k * ist];
          C v = ck_load(xs);
          bool take = k == 0 || v != v || (b == b && (mx ? v >= b : v <= b));
          if (take) { b = v; bs = xs; bi = k; }
          y[k * ost] = bs;
          ix[k * o2st] = bi + 1;
        }
      }
    }
  }
};


} /* namespace CK_NS */

extern "C" int CK_API(reduce)(int op, int dtype, void *out, void *out2, const void *in, double p,
                              const lt_ck_red_geom *g, void *work, void *stream) {
  using namespace CK_NS;
  if (!in || (!out && !out2)) return LT_CK_EINVAL;
  return ck_dispatch(dtype, [&](auto tag) -> int {
    typedef typename decltype(tag)::type T;
    constexpr bool fl = ck_type<T>::is_float;
    switch (op) {
      case LT_CK_RED_SUM: case LT_CK_RED_MEAN: {
        if (op == LT_CK_RED_MEAN && !fl) return LT_CK_EUNSUPPORTED;
        red_fold<T, F_SUM> f; f.mean = op == LT_CK_RED_MEAN;
        return red_run(f, in, out, out2, g, work, stream);
      }
      case LT_CK_RED_NANSUM: case LT_CK_RED_NANMEAN: {
        if (op == LT_CK_RED_NANMEAN && !fl) return LT_CK_EUNSUPPORTED;
        red_fold<T, F_NANSUM> f; f.mean = op == LT_CK_RED_NANMEAN;
        return red_run(f, in, out, out2, g, work, stream);
      }
      case LT_CK_RED_PROD: {
        red_fold<T, F_PROD> f; f.mean = false;
        return red_run(f, in, out, out2, g, work, stream);
      }
      case LT_CK_RED_COUNT_NZ: case LT_CK_RED_ALL: case LT_CK_RED_ANY: {
        red_count<T> f; f.mode = op == LT_CK_RED_COUNT_NZ ? C_COUNT : op == LT_CK_RED_ALL ? C_ALL : C_ANY;
        return red_run(f, in, out, out2, g, work, stream);
      }
      case LT_CK_RED_MAX: return red_run(red_select<T, false>(), in, out, out2, g, work, stream);
      case LT_CK_RED_MIN: return red_run(red_select<T, true>(), in, out, out2, g, work, stream);
      case LT_CK_RED_VAR: case LT_CK_RED_STD:
        if constexpr (fl) {
          red_var<T> f; f.corr = p; f.sq = op == LT_CK_RED_STD;
          return red_run(f, in, out, out2, g, work, stream);
        } else return LT_CK_EUNSUPPORTED;
      case LT_CK_RED_NORM:
        if constexpr (fl) {
          red_norm<T> f;
          f.p = p;
          f.kind = isinf(p) ? (p > 0 ? N_MAX : N_MIN) : p == 2 ? N_L2 : p == 1 ? N_L1 : p == 0 ? N_L0 : N_LP;
          return red_run(f, in, out, nullptr, g, work, stream);
        } else return LT_CK_EUNSUPPORTED;
      case LT_CK_RED_LOGSUMEXP: return red_run(red_lse<T>(), in, out, nullptr, g, work, stream);
      default: return LT_CK_EINVAL;
    }
  });
}

extern "C" int CK_API(scan)(int op, int dtype, void *out, void *out2, const void *in, int64_t n, int64_t in_stride,
                            int64_t out_stride, int64_t out2_stride, const lt_ck_red_geom *g, void *stream) {
  using namespace CK_NS;
  if (!in || !out || op < 0 || op >= LT_CK_SCAN_NUM_OPS || n < 0) return LT_CK_EINVAL;
  if ((op == LT_CK_SCAN_CUMMAX || op == LT_CK_SCAN_CUMMIN) && !out2) return LT_CK_EINVAL;
  return ck_dispatch(dtype, [&](auto tag) -> int {
    typedef typename decltype(tag)::type T;
    if (op == LT_CK_SCAN_LOGCUMSUMEXP && !ck_type<T>::is_float) return LT_CK_EUNSUPPORTED;
    scan_line<T> k;
    int rc = ck_red_prepare(g, &k.g);
    if (rc != LT_CK_OK || k.g.nout == 0 || n == 0) return rc;
    k.in = (const T *)in; k.out = out; k.out2 = out2;
    k.n = n; k.ist = in_stride; k.ost = out_stride; k.o2st = out2_stride; k.op = op;
    return ck_launch(k, (uint64_t)k.g.nout, stream);
  });
}

#if defined(__CUDACC__)
#define CK_RED_TABLE_NAME "sm_90"
#define CK_RED_TABLE_FN lt_ck_reduce_device_kernels
#else
#define CK_RED_TABLE_NAME "host"
#define CK_RED_TABLE_FN lt_ck_host_reduce_kernels
#endif

static const lt_ck_reduce_kernels ck_red_table = {
  CK_RED_TABLE_NAME, CK_API(reduce), CK_API(scan), CK_API(error_string),
};

extern "C" const lt_ck_reduce_kernels *CK_RED_TABLE_FN(void) { return &ck_red_table; }
