/*
** red_stats.c — var, std, var_mean, std_mean, norm, logsumexp.
**
** These compute in double: the input is converted once to a float64 block
** (no copy when it already is one), so one set of kernels serves every dtype
** and float32 variances do not lose digits to cancellation. var is two-pass
** (mean, then squared deviations), logsumexp subtracts the maximum before
** exponentiating. A contiguous line is processed as rows of LANES columns so
** the adds stay independent and vectorise.
*/
/* -O2's "very cheap" vectoriser skips loops of unknown trip count, which is
** every row loop here; the dynamic cost model vectorises them. */
#if defined(__GNUC__) && !defined(__clang__)
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "core/complex_views.h"
#include "cpu/red.h"

#define LANES 8

enum { F_ID, F_SQ, F_ABS, F_NZ, F_POW };
enum { S_VAR, S_NORM, S_LSE };
enum { N_SUM, N_MAX, N_MIN };   /* how a norm combines |x| */

/* ---- column primitives: nr rows of nc columns, row stride st ---- */

static void col_sum(const double *b, int64_t nr, int64_t st, int64_t nc, int f, double p, double *acc) {
  for (int64_t r = 0; r < nr; r++) {
    const double *row = b + r * st;
    switch (f) {
      case F_ID: for (int64_t j = 0; j < nc; j++) acc[j] += row[j]; break;
      case F_SQ: for (int64_t j = 0; j < nc; j++) acc[j] += row[j] * row[j]; break;
      case F_ABS: for (int64_t j = 0; j < nc; j++) acc[j] += fabs(row[j]); break;
      case F_NZ: for (int64_t j = 0; j < nc; j++) acc[j] += row[j] != 0; break;
      default: for (int64_t j = 0; j < nc; j++) acc[j] += pow(fabs(row[j]), p); break;
    }
  }
}

/* NaN sticks: once acc is NaN neither test replaces it */
static void col_max(const double *b, int64_t nr, int64_t st, int64_t nc, bool absv, bool is_min, double *acc) {
  for (int64_t r = 0; r < nr; r++) {
    const double *row = b + r * st;
    for (int64_t j = 0; j < nc; j++) {
      double v = absv ? fabs(row[j]) : row[j];
      bool t = is_min ? (v < acc[j] || v != v) : (v > acc[j] || v != v);
      acc[j] = t ? v : acc[j];
    }
  }
}

static void col_dev(const double *b, int64_t nr, int64_t st, int64_t nc, const double *m, double *acc) {
  for (int64_t r = 0; r < nr; r++) {
    const double *row = b + r * st;
    for (int64_t j = 0; j < nc; j++) { double d = row[j] - m[j]; acc[j] += d * d; }
  }
}

static void col_exp(const double *b, int64_t nr, int64_t st, int64_t nc, const double *m, double *acc) {
  for (int64_t r = 0; r < nr; r++) {
    const double *row = b + r * st;
    for (int64_t j = 0; j < nc; j++) acc[j] += exp(row[j] - m[j]);
  }
}

/* ---- a region: nc columns of R rows (stride I), or one contiguous line (nc == 0) ---- */
typedef struct region { const double *b; int64_t R, I, nc; } region;

static double fold_sum(const double *l) {
  double a = l[0] + l[1], b = l[2] + l[3], c = l[4] + l[5], d = l[6] + l[7];
  return (a + b) + (c + d);
}

static void rg_sum(const region *g, int f, double p, double *res) {
  if (g->nc) { memset(res, 0, sizeof(double) * (size_t)g->nc); col_sum(g->b, g->R, g->I, g->nc, f, p, res); return; }
  double l[LANES] = {0}, t = 0;
  int64_t nr = g->R / LANES;
  col_sum(g->b, nr, LANES, LANES, f, p, l);
  col_sum(g->b + nr * LANES, g->R - nr * LANES, 1, 1, f, p, &t);
  res[0] = fold_sum(l) + t;
}

static void rg_max(const region *g, bool absv, bool is_min, double *res) {
  double init = is_min ? INFINITY : -INFINITY;
  if (g->nc) {
    for (int64_t j = 0; j < g->nc; j++) res[j] = init;
    col_max(g->b, g->R, g->I, g->nc, absv, is_min, res);
    return;
  }
  double l[LANES];
  for (int j = 0; j < LANES; j++) l[j] = init;
  int64_t nr = g->R / LANES;
  col_max(g->b, nr, LANES, LANES, absv, is_min, l);
  double a = init;
  col_max(l, LANES, 1, 1, false, is_min, &a);
  col_max(g->b + nr * LANES, g->R - nr * LANES, 1, 1, absv, is_min, &a);
  res[0] = a;
}

/* m: one value per column (or one for a line) */
static void rg_pass2(const region *g, bool dev, const double *m, double *res) {
  if (g->nc) {
    memset(res, 0, sizeof(double) * (size_t)g->nc);
    (dev ? col_dev : col_exp)(g->b, g->R, g->I, g->nc, m, res);
    return;
  }
  double l[LANES] = {0}, mm[LANES], t = 0;
  for (int j = 0; j < LANES; j++) mm[j] = m[0];
  int64_t nr = g->R / LANES;
  (dev ? col_dev : col_exp)(g->b, nr, LANES, LANES, mm, l);
  (dev ? col_dev : col_exp)(g->b + nr * LANES, g->R - nr * LANES, 1, 1, mm, &t);
  res[0] = fold_sum(l) + t;
}

typedef struct st_ctx {
  const double *x;
  int64_t O, R, I, ntile;
  int kind, f, comb;       /* S_*, F_* and N_* for norms */
  double p, corr;
  bool sqrt_out;
  double *out, *out2;      /* O*I results; out2: the mean of var_mean */
} st_ctx;

static void st_task(void *vc, int64_t b, int64_t e) {
  st_ctx *c = vc;
  double a[LT_RED_TILE], m[LT_RED_TILE];
  for (int64_t t = b; t < e; t++) {
    int64_t o = t / c->ntile, tile = t % c->ntile;
    region g;
    int64_t i0 = 0, nc = 1;
    if (c->I == 1) { g.b = c->x + o * c->R; g.R = c->R; g.I = 1; g.nc = 0; }
    else {
      i0 = tile * LT_RED_TILE;
      nc = c->I - i0 < LT_RED_TILE ? c->I - i0 : LT_RED_TILE;
      g.b = c->x + o * c->R * c->I + i0; g.R = c->R; g.I = c->I; g.nc = nc;
    }
    double *dst = c->out + o * c->I + i0;
    if (c->kind == S_VAR) {
      rg_sum(&g, F_ID, 0, m);
      for (int64_t j = 0; j < nc; j++) m[j] /= (double)c->R;
      rg_pass2(&g, true, m, a);
      double den = (double)c->R - c->corr;
      if (den < 0) den = 0;
      for (int64_t j = 0; j < nc; j++) { double v = a[j] / den; dst[j] = c->sqrt_out ? sqrt(v) : v; }
      if (c->out2) memcpy(c->out2 + o * c->I + i0, m, sizeof(double) * (size_t)nc);
    } else if (c->kind == S_LSE) {
      rg_max(&g, false, false, m);
      double mm[LT_RED_TILE];
      for (int64_t j = 0; j < nc; j++) mm[j] = isinf(m[j]) ? 0 : m[j];
      rg_pass2(&g, false, mm, a);
      for (int64_t j = 0; j < nc; j++) dst[j] = isinf(m[j]) || m[j] != m[j] ? m[j] : m[j] + log(a[j]);
    } else if (c->comb == N_SUM) {
      rg_sum(&g, c->f, c->p, a);
      for (int64_t j = 0; j < nc; j++)
        dst[j] = c->f == F_SQ ? sqrt(a[j]) : c->f == F_POW ? pow(a[j], 1.0 / c->p) : a[j];
    } else {
      rg_max(&g, true, c->comb == N_MIN, a);
      memcpy(dst, a, sizeof(double) * (size_t)nc);
    }
  }
}

/* Plans over a float64 copy of self, runs the kernel and finishes into rdt. */
static int stats_run(const char *op, st_ctx *c, lt_tensor *self, lt_intlist dim, bool keepdim, lt_dtype rdt,
                     lt_tensor *out, lt_tensor **r1, lt_tensor **r2) {
  lt_tensor *x = lt_tensor_to_dtype_contig(self, LT_FLOAT64);
  if (!x) return -1;
  lt_red g;
  int rc = lt_red_plan(&g, op, x, dim, keepdim, false);
  lt_tensor_release(x);
  if (rc < 0) return -1;
  int64_t n = g.O * g.I;
  lt_tensor *b1 = lt_red_buffer(LT_FLOAT64, n, lt_tensor_device(g.src)), *b2 = r2 ? lt_red_buffer(LT_FLOAT64, n, lt_tensor_device(g.src)) : NULL;
  if (!b1 || (r2 && !b2)) { lt_tensor_release(b1); lt_tensor_release(b2); lt_red_free(&g); return -1; }
  c->x = lt_red_data(&g); c->O = g.O; c->R = g.R; c->I = g.I;
  c->ntile = g.I == 1 ? 1 : (g.I + LT_RED_TILE - 1) / LT_RED_TILE;
  c->out = lt_tensor_data(b1);
  c->out2 = b2 ? lt_tensor_data(b2) : NULL;
  lt_parallel_for(g.O * c->ntile, lt_red_grain(g.R * (g.I < LT_RED_TILE ? g.I : LT_RED_TILE)), st_task, c);
  *r1 = lt_red_finish(&g, b1, rdt, out);
  if (r2) {
    *r2 = *r1 ? lt_red_finish(&g, b2, rdt, NULL) : (lt_tensor_release(b2), NULL);
    if (*r1 && !*r2) { lt_tensor_release(*r1); *r1 = NULL; }
  }
  lt_red_free(&g);
  return *r1 ? 0 : -1;
}

static int var_impl(const char *op, bool sq, lt_tensor *self, lt_intlist dim, int unbiased, bool keepdim,
                    lt_scalar correction, lt_tensor *out, lt_tensor **r1, lt_tensor **r2);

/* The variance of complex z is the mean of |z - mean z|^2, which is the sum of
** the variances of the real and imaginary parts: a real result, as PyTorch's.
** The mean of var_mean/std_mean stays complex. */
static int var_complex(const char *op, bool sq, lt_tensor *self, lt_intlist dim, int unbiased, bool keepdim,
                       lt_scalar correction, lt_tensor *out, lt_tensor **r1, lt_tensor **r2) {
  lt_tensor *re = lt_core_real(self), *im = re ? lt_core_imag(self) : NULL, *vr = NULL, *vi = NULL, *v = NULL;
  int rc = -1;
  if (!im || var_impl(op, false, re, dim, unbiased, keepdim, correction, NULL, &vr, NULL) < 0 ||
      var_impl(op, false, im, dim, unbiased, keepdim, correction, NULL, &vi, NULL) < 0) goto done;
  v = lt_cpu_add(vr, vi, lt_scalar_int(1), sq ? NULL : out);
  if (!v) goto done;
  if (sq) {
    lt_tensor *s = lt_cpu_sqrt(v, out);
    lt_tensor_release(v);
    if (!(v = s)) goto done;
  }
  if (r2 && !(*r2 = lt_cpu_mean(self, dim, keepdim, -1, NULL))) goto done;
  *r1 = v;
  v = NULL;
  rc = 0;
done:
  lt_tensor_release(v);
  lt_tensor_release(vi);
  lt_tensor_release(vr);
  lt_tensor_release(im);
  lt_tensor_release(re);
  return rc;
}

static int var_impl(const char *op, bool sq, lt_tensor *self, lt_intlist dim, int unbiased, bool keepdim,
                    lt_scalar correction, lt_tensor *out, lt_tensor **r1, lt_tensor **r2) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (lt_dtype_is_complex(dt)) return var_complex(op, sq, self, dim, unbiased, keepdim, correction, out, r1, r2);
  st_ctx c;
  memset(&c, 0, sizeof c);
  if (lt_meta_var_correction(op, dt, unbiased, correction, &c.corr) < 0) return -1;
  c.kind = S_VAR;
  c.sqrt_out = sq;
  return stats_run(op, &c, self, dim, keepdim, dt, out, r1, r2);
}

lt_tensor *lt_cpu_var(lt_tensor *self, lt_intlist dim, int unbiased, bool keepdim, lt_scalar correction, lt_tensor *out) {
  lt_tensor *r = NULL;
  return var_impl("var", false, self, dim, unbiased, keepdim, correction, out, &r, NULL) < 0 ? NULL : r;
}
lt_tensor *lt_cpu_std(lt_tensor *self, lt_intlist dim, int unbiased, bool keepdim, lt_scalar correction, lt_tensor *out) {
  lt_tensor *r = NULL;
  return var_impl("std", true, self, dim, unbiased, keepdim, correction, out, &r, NULL) < 0 ? NULL : r;
}
int lt_cpu_var_mean(lt_tensor *self, lt_intlist dim, int unbiased, bool keepdim, lt_scalar correction,
                    lt_tensor **var, lt_tensor **mean) {
  return var_impl("var_mean", false, self, dim, unbiased, keepdim, correction, NULL, var, mean);
}
int lt_cpu_std_mean(lt_tensor *self, lt_intlist dim, int unbiased, bool keepdim, lt_scalar correction,
                    lt_tensor **std, lt_tensor **mean) {
  return var_impl("std_mean", true, self, dim, unbiased, keepdim, correction, NULL, std, mean);
}

static lt_tensor *norm_impl(const char *op, double p, lt_tensor *self, lt_intlist dim, bool keepdim, int dtype,
                            lt_tensor *out) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (lt_meta_norm_check(op, dt, dtype, p) < 0) return NULL;
  st_ctx c;
  memset(&c, 0, sizeof c);
  c.kind = S_NORM;
  c.p = p;
  if (isinf(p)) c.comb = p > 0 ? N_MAX : N_MIN;
  else { c.comb = N_SUM; c.f = p == 2 ? F_SQ : p == 1 ? F_ABS : p == 0 ? F_NZ : F_POW; }
  lt_tensor *r = NULL;
  return stats_run(op, &c, self, dim, keepdim, dtype >= 0 ? (lt_dtype)dtype : dt, out, &r, NULL) < 0 ? NULL : r;
}

lt_tensor *lt_cpu_norm(lt_tensor *self, lt_scalar p, lt_intlist dim, bool keepdim, int dtype, lt_tensor *out) {
  return norm_impl("norm", lt_scalar_is_none(p) ? 2.0 : lt_scalar_to_double(p), self, dim, keepdim, dtype, out);
}

lt_tensor *lt_cpu_norm_str(lt_tensor *self, const char *p, lt_intlist dim, bool keepdim, int dtype, lt_tensor *out) {
  if (strcmp(p, "fro") == 0) return norm_impl("norm", 2.0, self, dim, keepdim, dtype, out);
  return lt_error_null("norm: argument 'p' must be a number or \"fro\", got \"%s\"", p);
}

lt_tensor *lt_cpu_logsumexp(lt_tensor *self, lt_intlist dim, bool keepdim, lt_tensor *out) {
  lt_dtype dt = (lt_dtype)self->dtype;
  st_ctx c;
  memset(&c, 0, sizeof c);
  c.kind = S_LSE;
  lt_tensor *r = NULL;
  lt_dtype rdt = lt_dtype_is_float(dt) ? dt : lt_get_default_dtype();
  return stats_run("logsumexp", &c, self, dim, keepdim, rdt, out, &r, NULL) < 0 ? NULL : r;
}
