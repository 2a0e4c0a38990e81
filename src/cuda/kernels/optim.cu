/*
** optim.cu — the foreach and fused optimizer kernels (optim.h): one
** multi-tensor launch per batch of up to LT_CK_MT_MAX tensors, the per-element
** update the CPU's (src/cpu/optim_foreach.c: the same arithmetic in the
** parameter's type, the constants in double), and _foreach_norm's two passes.
*/
#include "cuda/kernels/ck.h"
#include "cuda/kernels/optim.h"

namespace CK_NS {

/* the per-tensor coefficients, in double from step s (the new step) as the CPU
** computes them; mp: NAdam's mu product before this step */
__host__ __device__ __forceinline__ void ck_optim_coefs(const lt_ck_optim_cfg &c, double s, double mp, double *tc) {
  switch (c.op) {
    case LT_CK_OPT_ADAM:
      tc[0] = c.lr / (1 - pow(c.a, s));
      tc[1] = 1 / sqrt(1 - pow(c.b, s));
      break;
    case LT_CK_OPT_ADAMAX: tc[0] = c.lr / (1 - pow(c.a, s)); break;
    case LT_CK_OPT_NADAM: {
      double mu = c.a * (1 - 0.5 * pow(0.96, s * c.momentum_decay));
      double mu_next = c.a * (1 - 0.5 * pow(0.96, (s + 1) * c.momentum_decay));
      mp *= mu;
      tc[0] = c.lr * (1 - mu) / (1 - mp);
      tc[1] = c.lr * mu_next / (1 - mp * mu_next);
      tc[2] = 1 / sqrt(1 - pow(c.b, s));
      break;
    }
    case LT_CK_OPT_RADAM: {
      double rho_inf = 2 / (1 - c.b) - 1;
      double bc1 = 1 - pow(c.a, s), bc2 = 1 - pow(c.b, s);
      double rho_t = rho_inf - 2 * s * pow(c.b, s) / bc2;
      if (rho_t > 5) {
        tc[0] = c.lr / bc1 * sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
        tc[1] = sqrt(bc2);
        tc[2] = 1;
      } else {
        tc[0] = c.lr / bc1; tc[1] = 1; tc[2] = 0;
      }
      break;
    }
    case LT_CK_OPT_ADAGRAD: tc[0] = c.lr / (1 + (s - 1) * c.lr_decay); break;
    default: break;
  }
}

/* element k of tensor t's buffers: the update of op OP in type T */
template<class T, int OP>
__host__ __device__ __forceinline__ void ck_optim_elem(const lt_ck_optim_cfg &c, const double *tc, T *p0, T *p1, T *p2,
                                                        T *p3, T *p4, int64_t k) {
#define CK_GRAD_IN(x, g) (c.maximize ? -(T)(g) : (T)(g)) + (T)c.wd * (x)
  if constexpr (OP == LT_CK_OPT_MUL) p0[k] *= (T)c.a;
  else if constexpr (OP == LT_CK_OPT_ADD) p0[k] += (T)c.a * p1[k];
  else if constexpr (OP == LT_CK_OPT_ZERO) p0[k] = (T)0;
  else if constexpr (OP == LT_CK_OPT_SGD) {
    const T lr = (T)c.lr, mom = (T)c.momentum, damp = (T)(1 - c.dampening);
    T d = CK_GRAD_IN(p0[k], p1[k]);
    if (c.momentum == 0) { p0[k] -= lr * d; return; }
    T b = c.first ? d : mom * p2[k] + damp * d;
    p2[k] = b;
    p0[k] -= lr * (c.nesterov ? d + mom * b : b);
  } else if constexpr (OP == LT_CK_OPT_ADAM || OP == LT_CK_OPT_NADAM || OP == LT_CK_OPT_RADAM) {
    const T b1 = (T)c.a, b2 = (T)c.b, ob1 = (T)(1 - c.a), ob2 = (T)(1 - c.b), eps = (T)c.eps;
    const T keep = (T)(c.decoupled ? 1 - c.lr * c.wd : 1), wd = (T)(c.decoupled ? 0 : c.wd);
    T x = p0[k] * keep;
    T g = (c.maximize ? -p1[k] : p1[k]) + wd * x;
    T m = b1 * p2[k] + ob1 * g;
    T v = b2 * p3[k] + ob2 * g * g;
    p2[k] = m; p3[k] = v;
    if constexpr (OP == LT_CK_OPT_ADAM) {
      if (c.amsgrad) { v = p4[k] > v ? p4[k] : v; p4[k] = v; }
      p0[k] = x - (T)tc[0] * m / (sqrt(v) * (T)tc[1] + eps);
    } else if constexpr (OP == LT_CK_OPT_NADAM) {
      T denom = sqrt(v) * (T)tc[2] + eps;
      p0[k] = x - ((T)tc[0] * g + (T)tc[1] * m) / denom;
    } else {
      p0[k] = tc[2] != 0 ? x - (T)tc[0] * m * (T)tc[1] / (sqrt(v) + eps) : x - (T)tc[0] * m;
    }
  } else if constexpr (OP == LT_CK_OPT_ADAMAX) {
    const T b1 = (T)c.a, b2 = (T)c.b, ob1 = (T)(1 - c.a), eps = (T)c.eps;
    T g = CK_GRAD_IN(p0[k], p1[k]);
    T m = b1 * p2[k] + ob1 * g;
    T u = b2 * p3[k], a = fabs(g) + eps;
    u = u > a ? u : a;
    p2[k] = m; p3[k] = u;
    p0[k] -= (T)tc[0] * m / u;
  } else if constexpr (OP == LT_CK_OPT_RMSPROP) {
    const T alpha = (T)c.a, oa = (T)(1 - c.a), eps = (T)c.eps, lr = (T)c.lr, mom = (T)c.momentum;
    T g = CK_GRAD_IN(p0[k], p1[k]);
    T sq = alpha * p2[k] + oa * g * g;
    p2[k] = sq;
    T avg;
    if (c.centered) { T ga = alpha * p4[k] + oa * g; p4[k] = ga; avg = sqrt(sq - ga * ga) + eps; }
    else avg = sqrt(sq) + eps;
    if (c.momentum != 0) { T b = mom * p3[k] + g / avg; p3[k] = b; p0[k] -= lr * b; }
    else p0[k] -= lr * g / avg;
  } else if constexpr (OP == LT_CK_OPT_ADAGRAD) {
    T g = CK_GRAD_IN(p0[k], p1[k]);
    T s = p2[k] + g * g;
    p2[k] = s;
    p0[k] -= (T)tc[0] * g / (sqrt(s) + (T)c.eps);
  } else if constexpr (OP == LT_CK_OPT_ADADELTA) {
    const T rho = (T)c.a, orho = (T)(1 - c.a), eps = (T)c.eps, lr = (T)c.lr;
    T g = CK_GRAD_IN(p0[k], p1[k]);
    T sq = rho * p2[k] + orho * g * g;
    T d = sqrt(p3[k] + eps) / sqrt(sq + eps) * g;
    p2[k] = sq;
    p3[k] = rho * p3[k] + orho * d * d;
    p0[k] -= lr * d;
  }
#undef CK_GRAD_IN
}

static inline bool ck_has_step(int op) {
  return op == LT_CK_OPT_ADAM || op == LT_CK_OPT_ADAMAX || op == LT_CK_OPT_NADAM || op == LT_CK_OPT_RADAM ||
         op == LT_CK_OPT_ADAGRAD;
}

/* The update: the grid strides over the batch's concatenated elements; a
** thread's index only grows, so it finds its tensor by walking forward, and
** computes that tensor's coefficients once per visit. */
template<class T, int OP> struct ck_optim_step {
  LT_COLD;
  lt_ck_optim_cfg c;
  lt_ck_mt_list l;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    const uint64_t total = (uint64_t)l.start[l.n];
    int t = 0, tc_t = -1;
    double tc[4] = {0, 0, 0, 0};
    for (uint64_t i = tid; i < total; i += nt) {
      while (i >= (uint64_t)l.start[t + 1]) t++;
      if (t != tc_t) {
        if (l.step[t]) ck_optim_coefs(c, *l.step[t] + 1, l.mu_product[t] ? *l.mu_product[t] : 1, tc);
        tc_t = t;
      }
      const int64_t k = (int64_t)i - l.start[t];
      ck_optim_elem<T, OP>(c, tc, (T *)l.p[t][0], (T *)l.p[t][1], (T *)l.p[t][2], (T *)l.p[t][3], (T *)l.p[t][4], k);
    }
  }
};

/* after the update, on the same stream: the new step count (and mu product) of each tensor */
struct ck_optim_bump {
  LT_COLD;
  lt_ck_optim_cfg c;
  lt_ck_mt_list l;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int t = (int)tid; t < l.n; t += (int)nt) {
      if (!l.step[t]) continue;
      double s = *l.step[t] + 1;
      *l.step[t] = s;
      if (l.mu_product[t]) *l.mu_product[t] *= c.a * (1 - 0.5 * pow(0.96, s * c.momentum_decay));
    }
  }
};

template<class T> static int ck_optim_as(const lt_ck_optim_cfg *cfg, const lt_ck_mt_list *l, void *stream) {
  auto go = [&](auto op) -> int {
    ck_optim_step<T, decltype(op)::value> k;
    k.c = *cfg;
    k.l = *l;
    return ck_launch(k, (uint64_t)l->start[l->n], stream);
  };
  switch (cfg->op) {
#define CK_CASE(OP) case OP: return go(std::integral_constant<int, OP>());
    CK_CASE(LT_CK_OPT_MUL) CK_CASE(LT_CK_OPT_ADD) CK_CASE(LT_CK_OPT_ZERO) CK_CASE(LT_CK_OPT_SGD)
    CK_CASE(LT_CK_OPT_ADAM) CK_CASE(LT_CK_OPT_ADAMAX) CK_CASE(LT_CK_OPT_NADAM) CK_CASE(LT_CK_OPT_RADAM)
    CK_CASE(LT_CK_OPT_RMSPROP) CK_CASE(LT_CK_OPT_ADAGRAD) CK_CASE(LT_CK_OPT_ADADELTA)
#undef CK_CASE
    default: return LT_CK_EINVAL;
  }
}

/* ---- _foreach_norm ---- */

template<class T> struct ck_norm_partial {
  LT_COLD;
  int kind;
  double ord;
  lt_ck_norm_list l;
  double *partials;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    const uint64_t total = (uint64_t)l.slot[l.n];
    int t = 0;
    for (uint64_t s = tid; s < total; s += nt) {
      while (s >= (uint64_t)l.slot[t + 1]) t++;
      const T *x = (const T *)l.x[t];
      const int64_t ns = l.slot[t + 1] - l.slot[t], n = l.numel[t];
      double acc = kind == LT_CK_NORM_NINF ? INFINITY : 0;
      for (int64_t k = (int64_t)s - l.slot[t]; k < n; k += ns) {
        double v = fabs((double)x[k]);
        switch (kind) {
          case LT_CK_NORM_2: acc += v * v; break;
          case LT_CK_NORM_1: acc += v; break;
          case LT_CK_NORM_INF: acc = v > acc || v != v ? v : acc; break;
          case LT_CK_NORM_NINF: acc = v < acc || v != v ? v : acc; break;
          case LT_CK_NORM_0: acc += x[k] != 0; break;
          default: acc += pow(v, ord); break;
        }
      }
      partials[s] = acc;
    }
  }
};

template<class O> struct ck_norm_final {
  LT_COLD;
  int kind;
  double ord;
  lt_ck_norm_list l;
  const double *partials;
  O *out;
  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (int t = (int)tid; t < l.n; t += (int)nt) {
      double acc = kind == LT_CK_NORM_NINF ? INFINITY : 0;
      for (int64_t s = l.slot[t]; s < l.slot[t + 1]; s++) {
        double v = partials[s];
        if (kind == LT_CK_NORM_INF) acc = v > acc || v != v ? v : acc;
        else if (kind == LT_CK_NORM_NINF) acc = v < acc || v != v ? v : acc;
        else acc += v;
      }
      if (l.numel[t] == 0 && kind == LT_CK_NORM_NINF) acc = 0;
      out[t] = (O)(kind == LT_CK_NORM_2 ? sqrt(acc) : kind == LT_CK_NORM_P ? pow(acc, 1.0 / ord) : acc);
    }
  }
};

static bool ck_list_ok(int n, int dtype) {
  return n >= 1 && n <= LT_CK_MT_MAX && (dtype == LT_CK_FLOAT32 || dtype == LT_CK_FLOAT64);
}

} /* namespace CK_NS */

extern "C" int CK_API(optim)(const lt_ck_optim_cfg *cfg, int dtype, const lt_ck_mt_list *l, void *stream) {
  using namespace CK_NS;
  if (!cfg || !l || !ck_list_ok(l->n, dtype)) return LT_CK_EINVAL;
  int rc = l->start[l->n] == 0 ? LT_CK_OK
           : dtype == LT_CK_FLOAT64 ? ck_optim_as<double>(cfg, l, stream) : ck_optim_as<float>(cfg, l, stream);
  if (rc != LT_CK_OK || !ck_has_step(cfg->op)) return rc;
  ck_optim_bump b;
  b.c = *cfg;
  b.l = *l;
  return ck_launch(b, (uint64_t)l->n, stream);
}

extern "C" int CK_API(foreach_norm)(int kind, double ord, int dtype, const lt_ck_norm_list *l, double *partials,
                                    void *out, int out_dtype, void *stream) {
  using namespace CK_NS;
  if (!l || !out || !ck_list_ok(l->n, dtype) || (out_dtype != LT_CK_FLOAT32 && out_dtype != LT_CK_FLOAT64))
    return LT_CK_EINVAL;
  if (kind < LT_CK_NORM_P || kind > LT_CK_NORM_0) return LT_CK_EINVAL;
  const uint64_t slots = (uint64_t)l->slot[l->n];
  if (slots > 0) {
    if (!partials) return LT_CK_EINVAL;
    auto pass1 = [&](auto tag) -> int {
      ck_norm_partial<typename decltype(tag)::type> k;
      k.kind = kind; k.ord = ord; k.l = *l; k.partials = partials;
      return ck_launch(k, slots, stream);
    };
    int rc = dtype == LT_CK_FLOAT64 ? pass1(ck_tag<double>()) : pass1(ck_tag<float>());
    if (rc != LT_CK_OK) return rc;
  }
  auto pass2 = [&](auto tag) -> int {
    typedef typename decltype(tag)::type O;
    ck_norm_final<O> k;
    k.kind = kind; k.ord = ord; k.l = *l; k.partials = partials; k.out = (O *)out;
    return ck_launch(k, (uint64_t)l->n, stream);
  };
  return out_dtype == LT_CK_FLOAT64 ? pass2(ck_tag<double>()) : pass2(ck_tag<float>());
}

#if defined(__CUDACC__)
#define CK_OPT_TABLE_NAME "sm_90"
#define CK_OPT_TABLE_FN lt_ck_optim_device_kernels
#else
#define CK_OPT_TABLE_NAME "host"
#define CK_OPT_TABLE_FN lt_ck_host_optim_kernels
#endif

static const lt_ck_optim_kernels ck_optim_table = { CK_OPT_TABLE_NAME, CK_API(optim), CK_API(foreach_norm) };

extern "C" const lt_ck_optim_kernels *CK_OPT_TABLE_FN(void) { return &ck_optim_table; }
