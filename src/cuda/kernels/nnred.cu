/*
** nnred.cu — the kernels of nnred.h (softmax family, layer_norm, batch_norm,
** nll_loss),
** written once for both builds: one thread per line, row, column or target
** element, serial within it (the only path, in both builds). Nothing here has
** run on a GPU.
*/
#include "cuda/kernels/ck_red.h"
#include "cuda/kernels/nnred.h"

namespace CK_NS {

__host__ __device__ __forceinline__ float nn_log(float x) { return logf(x); }
__host__ __device__ __forceinline__ double nn_log(double x) { return log(x); }

/* ---- softmax ---- */
template<class T> struct k_softmax {
  LT_COLD;
  ck_rgeom L;
  const T *x, *g;
  T *out;
  int64_t n, xst, gst, ost;
  int op;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    typedef typename ck_type<T>::C C;
    for (int64_t l = tid; l < L.nout; l += nt) {
      int64_t xo, oo, go;
      L.offsets(l, &xo, &oo, &go);
      const T *xp = x + xo;
      T *op_ = out + oo;
      if (op == LT_CK_SOFTMAX || op == LT_CK_LOG_SOFTMAX) {
        C m = -INFINITY, s = 0;
        for (int64_t k = 0; k < n; k++) { C v = ck_load(xp[k * xst]); m = v > m ? v : m; }   /* NaN never wins */
        for (int64_t k = 0; k < n; k++) s += ck_exp(ck_load(xp[k * xst]) - m);
        if (op == LT_CK_SOFTMAX) {
          C inv = (C)1 / s;
          for (int64_t k = 0; k < n; k++) op_[k * ost] = ck_store<T>(ck_exp(ck_load(xp[k * xst]) - m) * inv);
        } else {
          C lse = m + nn_log(s);
          for (int64_t k = 0; k < n; k++) op_[k * ost] = ck_store<T>(ck_load(xp[k * xst]) - lse);
        }
      } else {
        const T *gp = g + go;
        C s = 0;
        if (op == LT_CK_SOFTMAX_BWD) {
          for (int64_t k = 0; k < n; k++) s += ck_load(gp[k * gst]) * ck_load(xp[k * xst]);
          for (int64_t k = 0; k < n; k++) {
            C y = ck_load(xp[k * xst]);
            op_[k * ost] = ck_store<T>(y * (ck_load(gp[k * gst]) - s));
          }
        } else {
          for (int64_t k = 0; k < n; k++) s += ck_load(gp[k * gst]);
          for (int64_t k = 0; k < n; k++)
            op_[k * ost] = ck_store<T>(ck_load(gp[k * gst]) - ck_exp(ck_load(xp[k * xst])) * s);
        }
      }
    }
  }
};

static int softmax(int op, int dtype, void *out, const void *x, const void *g, int64_t n, int64_t xst, int64_t gst,
                   int64_t ost, const lt_ck_red_geom *lines, void *stream) {
  if (!out || !x || op < 0 || op >= LT_CK_NUM_SOFTMAX || n < 0) return LT_CK_EINVAL;
  if (op >= LT_CK_SOFTMAX_BWD && !g) return LT_CK_EINVAL;
  return ck_dispatch(dtype, [&](auto tag) -> int {
    typedef typename decltype(tag)::type T;
    if constexpr (!ck_type<T>::is_float) return LT_CK_EUNSUPPORTED;
    else {
      k_softmax<T> k;
      int rc = ck_red_prepare(lines, &k.L);
      if (rc != LT_CK_OK || k.L.nout == 0 || n == 0) return rc;
      k.x = (const T *)x; k.g = (const T *)g; k.out = (T *)out;
      k.n = n; k.xst = xst; k.gst = gst; k.ost = ost; k.op = op;
      return ck_launch(k, (uint64_t)k.L.nout, stream);
    }
  });
}

/* ---- layer_norm ---- */
template<class T> struct k_layer_norm {
  LT_COLD;
  T *out, *mean, *rstd;
  const T *x, *g;
  const double *w, *b;
  int64_t M, D;
  double eps;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    typedef typename ck_type<T>::C C;
    for (int64_t r = tid; r < M; r += nt) {
      const T *xr = x + r * D;
      T *o = out + r * D;
      if (!g) {
        double s = 0, q = 0;
        for (int64_t k = 0; k < D; k++) s += (double)ck_load(xr[k]);
        double m = D ? s / (double)D : 0;
        for (int64_t k = 0; k < D; k++) { double d = (double)ck_load(xr[k]) - m; q += d * d; }
        double v = D ? q / (double)D : 0, rs = 1 / sqrt(v + eps);
        mean[r] = ck_cvt<T>::from((C)m);
        rstd[r] = ck_cvt<T>::from((C)rs);
        const C tm = (C)m, trs = (C)rs;
        for (int64_t k = 0; k < D; k++) {
          C y = (ck_load(xr[k]) - tm) * trs;
          if (w) y = y * (C)w[k];
          if (b) y = y + (C)b[k];
          o[k] = ck_store<T>(y);
        }
      } else {
        const T *gr = g + r * D;
        const double m = (double)ck_load(mean[r]), rs = (double)ck_load(rstd[r]);
        double sg = 0, sgx = 0;
        for (int64_t k = 0; k < D; k++) {
          C gw = w ? ck_load(gr[k]) * (C)w[k] : ck_load(gr[k]);
          sg += (double)gw;
          sgx += (double)gw * ((double)ck_load(xr[k]) - m);
        }
        const C a = (C)(sg / (double)D), c = (C)(sgx * rs * rs / (double)D), trs = (C)rs, tm = (C)m;
        for (int64_t k = 0; k < D; k++) {
          C gw = w ? ck_load(gr[k]) * (C)w[k] : ck_load(gr[k]);
          o[k] = ck_store<T>(trs * (gw - a - (ck_load(xr[k]) - tm) * c));
        }
      }
    }
  }
};

static int layer_norm(int dtype, void *out, void *mean, void *rstd, const void *x, const void *g, const double *w,
                      const double *b, int64_t M, int64_t D, double eps, void *stream) {
  if (!out || !mean || !rstd || !x || M < 0 || D < 0) return LT_CK_EINVAL;
  return ck_dispatch(dtype, [&](auto tag) -> int {
    typedef typename decltype(tag)::type T;
    if constexpr (!ck_type<T>::is_float) return LT_CK_EUNSUPPORTED;
    else {
      if (M == 0) return LT_CK_OK;
      k_layer_norm<T> k;
      k.out = (T *)out; k.mean = (T *)mean; k.rstd = (T *)rstd; k.x = (const T *)x; k.g = (const T *)g;
      k.w = w; k.b = b; k.M = M; k.D = D; k.eps = eps;
      return ck_launch(k, (uint64_t)M, stream);
    }
  });
}

template<class T> struct k_ln_wgrad {
  LT_COLD;
  double *acc;
  const T *x, *g, *mean, *rstd;
  int64_t M, D;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t c = tid; c < D; c += nt) {
      double s = 0;
      for (int64_t r = 0; r < M; r++) {
        double m = (double)ck_load(mean[r]), rs = (double)ck_load(rstd[r]);
        s += (double)ck_load(g[r * D + c]) * (((double)ck_load(x[r * D + c]) - m) * rs);
      }
      acc[c] = s;
    }
  }
};

static int layer_norm_wgrad(int dtype, double *wgrad, const void *x, const void *g, const void *mean,
                            const void *rstd, int64_t M, int64_t D, void *stream) {
  if (!wgrad || !x || !g || !mean || !rstd || M < 0 || D < 0) return LT_CK_EINVAL;
  return ck_dispatch(dtype, [&](auto tag) -> int {
    typedef typename decltype(tag)::type T;
    if constexpr (!ck_type<T>::is_float) return LT_CK_EUNSUPPORTED;
    else {
      if (D == 0) return LT_CK_OK;
      k_ln_wgrad<T> k;
      k.acc = wgrad; k.x = (const T *)x; k.g = (const T *)g; k.mean = (const T *)mean; k.rstd = (const T *)rstd;
      k.M = M; k.D = D;
      return ck_launch(k, (uint64_t)D, stream);
    }
  });
}

/* ---- nll_loss ---- */
template<class T> struct k_nll_gather {
  LT_COLD;
  double *loss, *wsum;
  T *out;
  const T *x;
  const int64_t *t;
  const double *w;
  int64_t N, C, S, ignore;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t i = tid; i < N * S; i += nt) {
      int64_t n = i / S, s = i - n * S, c = t[i];
      double l = 0, wc = 0;
      if (c != ignore) {
        wc = w ? w[c - 1] : 1.0;
        l = -wc * (double)ck_load(x[(n * C + (c - 1)) * S + s]);
      }
      if (loss) { loss[i] = l; wsum[i] = wc; }
      if (out) out[i] = ck_cvt<T>::from((typename ck_type<T>::C)l);
    }
  }
};

template<class T> struct k_nll_total {
  LT_COLD;
  T *out, *tw;
  const double *sum, *wsum;
  int mean;
  CK_BODY void run(uint32_t tid, uint32_t) const {
    typedef typename ck_type<T>::C C;
    if (tid != 0) return;
    double r = mean ? sum[0] / wsum[0] : sum[0];   /* every target ignored: 0/0, NaN as in PyTorch */
    out[0] = ck_cvt<T>::from((C)r);
    tw[0] = ck_cvt<T>::from((C)wsum[0]);
  }
};

template<class T> struct k_nll_scatter {
  LT_COLD;
  T *gi;
  const double *go, *w, *tw;
  const int64_t *t;
  int none, mean;
  int64_t N, C, S, ignore;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    typedef typename ck_type<T>::C Ct;
    for (int64_t i = tid; i < N * S; i += nt) {
      int64_t n = i / S, s = i - n * S, c = t[i];
      if (c == ignore) continue;
      double v = -(w ? w[c - 1] : 1.0) * (none ? go[i] : go[0] / (mean ? tw[0] : 1.0));
      gi[(n * C + (c - 1)) * S + s] = ck_cvt<T>::from((Ct)v);
    }
  }
};

static int nll_gather(int dtype, double *loss, double *wsum, void *out, const void *x, const int64_t *target,
                      const double *w, int64_t N, int64_t C, int64_t S, int64_t ignore, void *stream) {
  if (!x || !target || (!loss && !out) || (loss && !wsum)) return LT_CK_EINVAL;
  return ck_dispatch(dtype, [&](auto tag) -> int {
    typedef typename decltype(tag)::type T;
    if constexpr (!ck_type<T>::is_float) return LT_CK_EUNSUPPORTED;
    else {
      if (N * S == 0) return LT_CK_OK;
      k_nll_gather<T> k;
      k.loss = loss; k.wsum = wsum; k.out = (T *)out; k.x = (const T *)x; k.t = target; k.w = w;
      k.N = N; k.C = C; k.S = S; k.ignore = ignore;
      return ck_launch(k, (uint64_t)(N * S), stream);
    }
  });
}

static int nll_total(int dtype, void *out, void *tw, const double *sum, const double *wsum, int mean, void *stream) {
  if (!out || !tw || !sum || !wsum) return LT_CK_EINVAL;
  return ck_dispatch(dtype, [&](auto tag) -> int {
    typedef typename decltype(tag)::type T;
    if constexpr (!ck_type<T>::is_float) return LT_CK_EUNSUPPORTED;
    else {
      k_nll_total<T> k;
      k.out = (T *)out; k.tw = (T *)tw; k.sum = sum; k.wsum = wsum; k.mean = mean;
      return ck_launch(k, 1, stream);
    }
  });
}

static int nll_scatter(int dtype, void *gi, const double *go, const int64_t *target, const double *w,
                       const double *tw, int none, int mean, int64_t N, int64_t C, int64_t S, int64_t ignore,
                       void *stream) {
  if (!gi || !go || !target || (mean && !tw)) return LT_CK_EINVAL;
  return ck_dispatch(dtype, [&](auto tag) -> int {
    typedef typename decltype(tag)::type T;
    if constexpr (!ck_type<T>::is_float) return LT_CK_EUNSUPPORTED;
    else {
      if (N * S == 0) return LT_CK_OK;
      k_nll_scatter<T> k;
      k.gi = (T *)gi; k.go = go; k.w = w; k.tw = tw; k.t = target; k.none = none; k.mean = mean;
      k.N = N; k.C = C; k.S = S; k.ignore = ignore;
      return ck_launch(k, (uint64_t)(N * S), stream);
    }
  });
}

/* ---- batch_norm ---- */
template<class T> struct k_bn_stats {
  LT_COLD;
  double *st, *nrm, *nrv;
  const T *x;
  const double *rm, *rv;
  int training;
  double momentum, eps;
  int64_t N, C, S;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t c = tid; c < C; c += nt) {
      double m, v;
      if (training) {
        const double cnt = (double)(N * S);
        double s = 0, q = 0;
        for (int64_t n = 0; n < N; n++)
          for (int64_t k = 0; k < S; k++) s += (double)ck_load(x[(n * C + c) * S + k]);
        m = s / cnt;
        for (int64_t n = 0; n < N; n++)
          for (int64_t k = 0; k < S; k++) { double d = (double)ck_load(x[(n * C + c) * S + k]) - m; q += d * d; }
        v = q / cnt;
        if (nrm) nrm[c] = (1 - momentum) * rm[c] + momentum * m;
        if (nrv) nrv[c] = (1 - momentum) * rv[c] + momentum * (v * (cnt / (cnt - 1)));   /* unbiased */
      } else {
        m = rm[c];
        v = rv[c];
      }
      st[c] = m;
      st[C + c] = 1 / sqrt(v + eps);
      st[2 * C + c] = v;
    }
  }
};

template<class T> struct k_bn_apply {
  LT_COLD;
  T *out;
  const T *x, *g;
  const double *mean, *invstd, *w, *b, *sg, *sgx;
  int training;
  int64_t N, C, S;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    typedef typename ck_type<T>::C Ct;
    const int64_t total = N * C * S;
    const double cnt = (double)(N * S);
    for (int64_t i = tid; i < total; i += nt) {
      int64_t c = (i / S) % C;
      double wc = w ? w[c] : 1, is = invstd[c], m = mean[c];
      if (!g) {
        double bc = b ? b[c] : 0;
        Ct sc = (Ct)(wc * is), sh = (Ct)(bc - m * wc * is);
        out[i] = ck_store<T>(ck_load(x[i]) * sc + sh);
      } else if (training) {
        Ct k = (Ct)(wc * is), a = (Ct)(sg[c] / cnt), q = (Ct)(sgx[c] * is * is / cnt), tm = (Ct)m;
        out[i] = ck_store<T>(k * (ck_load(g[i]) - a - (ck_load(x[i]) - tm) * q));
      } else {
        out[i] = ck_store<T>((Ct)(wc * is) * ck_load(g[i]));
      }
    }
  }
};

template<class T> struct k_bn_bsums {
  LT_COLD;
  double *sg, *sgx, *wgrad;
  const T *x, *g;
  const double *mean, *invstd;
  int64_t N, C, S;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int64_t c = tid; c < C; c += nt) {
      double a = 0, q = 0, m = mean ? mean[c] : 0;
      for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < S; k++) {
          int64_t i = (n * C + c) * S + k;
          double gv = (double)ck_load(g[i]);
          a += gv;
          if (x) q += gv * ((double)ck_load(x[i]) - m);
        }
      if (sg) sg[c] = a;
      if (sgx) sgx[c] = q;
      if (wgrad) wgrad[c] = q * invstd[c];
    }
  }
};

static int bn_stats(int dtype, double *st, double *new_rm, double *new_rv, const void *x, const double *rm,
                    const double *rv, int training, double momentum, double eps, int64_t N, int64_t C, int64_t S,
                    void *stream) {
  if (!st || (training && !x) || (!training && (!rm || !rv)) || (new_rm && !rm) || (new_rv && !rv)) return LT_CK_EINVAL;
  return ck_dispatch(dtype, [&](auto tag) -> int {
    typedef typename decltype(tag)::type T;
    if constexpr (!ck_type<T>::is_float) return LT_CK_EUNSUPPORTED;
    else {
      if (C == 0) return LT_CK_OK;
      k_bn_stats<T> k;
      k.st = st; k.nrm = new_rm; k.nrv = new_rv; k.x = (const T *)x; k.rm = rm; k.rv = rv; k.training = training;
      k.momentum = momentum; k.eps = eps; k.N = N; k.C = C; k.S = S;
      return ck_launch(k, (uint64_t)C, stream);
    }
  });
}

static int bn_apply(int dtype, void *out, const void *x, const void *g, const double *mean, const double *invstd,
                    const double *w, const double *b, const double *sg, const double *sgx, int training, int64_t N,
                    int64_t C, int64_t S, void *stream) {
  if (!out || !mean || !invstd || (!x && (!g || training)) || (g && training && (!sg || !sgx))) return LT_CK_EINVAL;
  return ck_dispatch(dtype, [&](auto tag) -> int {
    typedef typename decltype(tag)::type T;
    if constexpr (!ck_type<T>::is_float) return LT_CK_EUNSUPPORTED;
    else {
      if (N * C * S == 0) return LT_CK_OK;
      k_bn_apply<T> k;
      k.out = (T *)out; k.x = (const T *)x; k.g = (const T *)g; k.mean = mean; k.invstd = invstd; k.w = w; k.b = b; k.sg = sg; k.sgx = sgx;
      k.training = training; k.N = N; k.C = C; k.S = S;
      return ck_launch(k, (uint64_t)(N * C * S), stream);
    }
  });
}

static int bn_bsums(int dtype, double *sg, double *sgx, double *wgrad, const void *x, const void *g,
                    const double *mean, const double *invstd, int64_t N, int64_t C, int64_t S, void *stream) {
  if (!g || ((sgx || wgrad) && (!x || !mean)) || (wgrad && !invstd)) return LT_CK_EINVAL;
  return ck_dispatch(dtype, [&](auto tag) -> int {
    typedef typename decltype(tag)::type T;
    if constexpr (!ck_type<T>::is_float) return LT_CK_EUNSUPPORTED;
    else {
      if (C == 0) return LT_CK_OK;
      k_bn_bsums<T> k;
      k.sg = sg; k.sgx = sgx; k.wgrad = wgrad; k.x = (sgx || wgrad) ? (const T *)x : nullptr; k.g = (const T *)g;
      k.mean = mean; k.invstd = invstd; k.N = N; k.C = C; k.S = S;
      return ck_launch(k, (uint64_t)C, stream);
    }
  });
}

} /* namespace CK_NS */

#if defined(__CUDACC__)
#define CK_NN_TABLE_NAME "sm_90"
#define CK_NN_TABLE_FN lt_ck_nnred_device_kernels
#else
#define CK_NN_TABLE_NAME "host"
#define CK_NN_TABLE_FN lt_ck_host_nnred_kernels
#endif

static const lt_ck_nnred_kernels ck_nn_table = {
  CK_NN_TABLE_NAME, CK_NS::softmax, CK_NS::layer_norm, CK_NS::layer_norm_wgrad,
  CK_NS::nll_gather, CK_NS::nll_total, CK_NS::nll_scatter, CK_NS::bn_stats, CK_NS::bn_apply, CK_NS::bn_bsums,
  CK_API(error_string),
};

extern "C" const lt_ck_nnred_kernels *CK_NN_TABLE_FN(void) { return &ck_nn_table; }
