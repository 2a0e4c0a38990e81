/*
** special.cu — the special functions of the pointwise family (pointwise.h,
** LT_CK_PW_SPECIAL): erfinv, lgamma, digamma, polygamma (n in mode), i0, i1,
** sinc. Each is computed in double whatever the dtype and rounded to it, by
** the same methods as the CPU backend, so the host build agrees with it to
** rounding; the device's lgamma and tgamma are CUDA's.
*/
#include "cuda/kernels/pw.h"

namespace CK_NS {

#define PW_PI 3.14159265358979323846

/* a rational first guess (Giles' single-precision approximation) and two
** Newton steps on erf */
PW_FN double pw_erfinv_d(double y) {
  if (y != y || y < -1 || y > 1) return ck_inf<double>() - ck_inf<double>();
  if (y == 1) return ck_inf<double>();
  if (y == -1) return -ck_inf<double>();
  double w = -ck_log((1.0 - y) * (1.0 + y)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w; p = -3.5233877e-06 + p * w; p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w; p = -0.00125372503 + p * w; p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w; p = 1.50140941 + p * w;
  } else {
    w = ck_sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w; p = 0.00134934322 + p * w; p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w; p = -0.0076224613 + p * w; p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w; p = 2.83297682 + p * w;
  }
  double x = p * y;
  for (int i = 0; i < 2; i++) {
    double d = 1.1283791670955126 * ck_exp(-x * x);   /* erf'(x): 2/sqrt(pi) e^-x^2 */
    if (d == 0) break;
    x -= (ck_erf(x) - y) / d;
  }
  return x;
}

PW_FN double pw_lgamma_d(double x) {
#if defined(__CUDACC__)
  return lgamma(x);
#else
  int sign;
  return lgamma_r(x, &sign);
#endif
}

PW_FN double pw_tgamma_d(double x) { return tgamma(x); }

/* digamma of x > 0: the recurrence up to 10, then the asymptotic series */
PW_FN double pw_digamma_pos(double x) {
  if (x == ck_inf<double>()) return x;
  double r = 0;
  while (x < 10) { r -= 1 / x; x += 1; }
  double z = 1 / (x * x);
  return r + ck_log(x) - 0.5 / x
         - z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132
           - z * (691.0 / 32760 - z / 12))))));
}

/* digamma: the reflection formula below 0 */
PW_FN double pw_digamma_d(double x) {
  if (x != x) return x;
  if (x == 0) return ck_copysign(ck_inf<double>(), -x);
  if (x > 0) return pw_digamma_pos(x);
  if (x == ck_floor(x)) return ck_inf<double>() - ck_inf<double>();
  /* tan(pi x) has period 1: reduce x first so that large |x| keep their precision */
  return pw_digamma_pos(1 - x) - PW_PI / ck_tan(PW_PI * (x - ck_floor(x)));
}

/* Hurwitz zeta(s, q), s > 1: a direct sum up to max(16, s), then Euler-Maclaurin
** with B2..B16; for s > 64 the direct sum alone */
PW_FN double pw_hzeta_d(double s, double q) {
  const double B[8] = { 1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730, 7.0 / 6,
                        -3617.0 / 510 };
  if (q != q) return q;
  if (q <= 0 && q == ck_floor(q)) return ck_inf<double>();
  if (q < -1e7) return ck_inf<double>() - ck_inf<double>();
  double sum = 0;
  if (s > 64) {
    for (;;) {
      double t = ck_pow(q, -s);
      sum += t;
      if (q > 0 && (t == 0 || ck_fabs(t) < 1e-17 * ck_fabs(sum) || sum != sum || ck_fabs(sum) == ck_inf<double>()))
        return sum;
      q += 1;
    }
  }
  double lim = s > 16 ? s : 16;
  while (q < lim) { sum += ck_pow(q, -s); q += 1; }
  double a = ck_pow(q, -s);
  double res = sum + q * a / (s - 1) + 0.5 * a;
  double tf = s * a / q, fact = 1;
  for (int j = 1; j <= 8; j++) {
    fact *= (2.0 * j - 1) * (2.0 * j);
    double t = B[j - 1] / fact * tf;
    res += t;
    if (ck_fabs(t) < 1e-17 * ck_fabs(res)) break;
    tf *= (s + 2.0 * j - 1) * (s + 2.0 * j) / (q * q);
  }
  return res;
}

PW_FN double pw_polygamma_d(int n, double x) {
  if (n == 0) return pw_digamma_d(x);
  return ((n & 1) ? 1.0 : -1.0) * pw_tgamma_d((double)n + 1) * pw_hzeta_d((double)n + 1, x);
}

/* I0 and I1: the power series up to |x| = 30, the asymptotic expansion beyond */
PW_FN double pw_bessel_i_d(int order, double x) {
  double ax = ck_fabs(x), r;
  if (x != x) return x;
  if (ax <= 30) {
    double q = ax * ax / 4, t = order ? ax / 2 : 1, s = t;
    for (int k = 1; k < 500; k++) {
      t *= q / ((double)k * (double)(k + order));
      s += t;
      if (t < 1e-17 * s) break;
    }
    r = s;
  } else {
    double mu = order ? 4 : 0, t = 1, s = 1;
    for (int k = 1; k < 30; k++) {
      double nt = t * -(mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8 * ax);
      if (ck_fabs(nt) > ck_fabs(t)) break;   /* asymptotic: stop at the smallest term */
      t = nt;
      s += t;
      if (ck_fabs(t) < 1e-17 * ck_fabs(s)) break;
    }
    double e = ck_exp(ax / 2);   /* two halves: overflows only when the value does */
    r = e * (e / ck_sqrt(2 * PW_PI * ax) * s);
  }
  return (order && x < 0) ? -r : r;
}

PW_FN double pw_sinc_d(double x) {
  if (x == 0) return 1;
  double px = PW_PI * x;
  return ck_sin(px) / px;
}

#define PW_SPECIAL(name, expr) \
  template<class C> struct pw_##name { PW_PARAMS; PW_FN C operator()(C x) const { double v = (double)x; return (C)(expr); } };
PW_SPECIAL(erfinv, pw_erfinv_d(v))
PW_SPECIAL(lgamma, pw_lgamma_d(v))
PW_SPECIAL(digamma, pw_digamma_d(v))
PW_SPECIAL(polygamma, pw_polygamma_d(mode, v))
PW_SPECIAL(i0, pw_bessel_i_d(0, v))
PW_SPECIAL(i1, pw_bessel_i_d(1, v))
PW_SPECIAL(sinc, pw_sinc_d(v))

int pw_run_special(const lt_ck_pw_call *c, const lt_ck_geom *g, void *stream) {
  switch (c->op) {
    LT_CK_PW_SPECIAL(PW_CASE)
    default: return LT_CK_EINVAL;
  }
}

} /* namespace CK_NS */
