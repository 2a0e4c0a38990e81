/*
** optim_foreach.c — ops over lists of tensors for the optimizers: one call
** updates every parameter of a group (PyTorch's foreach/fused idea).
**
** Every fused update is a single pass over each parameter's elements: it
** reads the parameter, its gradient and its state once and writes them back
** once, so a step costs what moving those bytes costs. The element ranges of
** all tensors of a call are cut into chunks and the chunks run in parallel,
** so a list of many small tensors is as parallel as one big one.
**
** Tensors must be float32 or float64 (a list may mix the two), and a
** parameter's gradient and state must have its shape and dtype. Non-contiguous tensors work through
** contiguous copies written back afterwards (a slow path, correct).
*/
#include <tgmath.h>
#include <stdlib.h>
#include <string.h>
#include "core/tensor.h"
#include "core/error.h"
#include "cpu/parallel.h"
#include "meta/foreach.h"
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */

#define FE_MAXBUF 6          /* tensors per parameter: param, grad, up to 4 states */
#define FE_CHUNK 32768       /* elements per parallel work item */
#define FE_NCOEF 4           /* per-tensor coefficients (bias corrections, ...) */

typedef struct { char *p[FE_MAXBUF]; int64_t n; int t; } fe_chunk;

/* the optimizer's constants; every kernel reads what it needs */
typedef struct {
  double lr, a, b, c, d, eps, wd, momentum, dampening, ord;
  bool nesterov, maximize, first, amsgrad, decoupled, centered;
} fe_cfg;

typedef void (*fe_fn)(const fe_cfg *cfg, const double *tc, char **p, int64_t n);

typedef struct {
  const char *op;
  int nbuf, ntensors;
  lt_tensor **work;   /* [ntensors * nbuf] contiguous tensors computed on (owned) */
  lt_tensor **orig;   /* [ntensors * nbuf] what the caller passed (borrowed) */
  unsigned mut;       /* bit b: buffer b is written */
  fe_chunk *chunks;
  int64_t nchunks, total;
  double *tc;         /* [ntensors * FE_NCOEF] */
  const fe_cfg *cfg;
  fe_fn f32, f64;
  double *partial;    /* per chunk results of reductions */
} fe_job;

static void fe_free(fe_job *j) {
  if (j->work) for (int i = 0; i < j->ntensors * j->nbuf; i++) lt_tensor_release(j->work[i]);
  free(j->work); free(j->orig); free(j->chunks); free(j->tc); free(j->partial);
  memset(j, 0, sizeof *j);
}

/* Check the lists (names[b], lists[b], counts[b]) and cut them into chunks.
** Buffer 0 fixes the count, shape and dtype. */
static int fe_prepare(fe_job *j, const char *op, int nbuf, lt_tensor *const *const *lists,
                      const int *counts, const char *const *names, unsigned mut) {
  memset(j, 0, sizeof *j);
  j->op = op; j->nbuf = nbuf; j->mut = mut;
  if (lt_meta_foreach_lists(op, nbuf, lists, counts, names) < 0) return -1;
  int n = counts[0];
  j->ntensors = n;
  if (n == 0) return 0;
  j->work = calloc((size_t)n * nbuf, sizeof *j->work);
  j->orig = calloc((size_t)n * nbuf, sizeof *j->orig);
  j->tc = calloc((size_t)n * FE_NCOEF, sizeof *j->tc);
  if (!j->work || !j->orig || !j->tc) { fe_free(j); return lt_error("%s: out of memory", op); }
  int64_t nchunks = 0;
  for (int i = 0; i < n; i++) {
    lt_tensor *p = lists[0][i];
    for (int b = 0; b < nbuf; b++) {
      lt_tensor *t = lists[b][i];
      j->orig[i * nbuf + b] = t;
      j->work[i * nbuf + b] = lt_tensor_contiguous(t);
      if (!j->work[i * nbuf + b]) { fe_free(j); return -1; }
    }
    nchunks += (p->numel + FE_CHUNK - 1) / FE_CHUNK;
    j->total += p->numel;
  }
  j->chunks = calloc((size_t)(nchunks ? nchunks : 1), sizeof *j->chunks);
  if (!j->chunks) { fe_free(j); return lt_error("%s: out of memory", op); }
  int64_t c = 0;
  for (int i = 0; i < n; i++) {
    int64_t numel = j->work[i * nbuf]->numel;
    size_t es = j->work[i * nbuf]->dtype == LT_FLOAT64 ? 8 : 4;   /* lists may mix float32 and float64 */
    for (int64_t s = 0; s < numel; s += FE_CHUNK) {
      fe_chunk *ch = &j->chunks[c++];
      ch->n = numel - s < FE_CHUNK ? numel - s : FE_CHUNK;
      ch->t = i;
      for (int b = 0; b < nbuf; b++) ch->p[b] = (char *)lt_tensor_data(j->work[i * nbuf + b]) + (size_t)s * es;
    }
  }
  j->nchunks = c;
  return 0;
}

static void fe_range(void *ctx, int64_t begin, int64_t end) {
  fe_job *j = ctx;
  for (int64_t c = begin; c < end; c++) {
    fe_chunk *ch = &j->chunks[c];
    fe_fn fn = j->work[(size_t)ch->t * j->nbuf]->dtype == LT_FLOAT64 ? j->f64 : j->f32;
    fn(j->cfg, j->tc + (size_t)ch->t * FE_NCOEF, ch->p, ch->n);
  }
}

/* run the kernel over every chunk, copy results back into non-contiguous
** originals, release everything */
static int fe_run(fe_job *j, fe_fn f32, fe_fn f64, const fe_cfg *cfg) {
  j->cfg = cfg;
  j->f32 = f32; j->f64 = f64;
  if (j->total < 2 * LT_GRAIN_ELEMENTWISE) fe_range(j, 0, j->nchunks);
  else lt_parallel_for(j->nchunks, 1, fe_range, j);
  int rc = 0;
  for (int i = 0; i < j->ntensors * j->nbuf && rc == 0; i++)
    if ((j->mut >> (i % j->nbuf) & 1) && j->work[i] != j->orig[i])
      rc = lt_tensor_copy_(j->orig[i], j->work[i]);
  fe_free(j);
  return rc;
}

/* one element-type instance of a kernel body; the body sees T, n, cfg, tc,
** and p0..p5 as T pointers */
#define FE_KERNEL(NAME, ...) \
  FE_KERNEL_T(NAME##_f32, float, __VA_ARGS__) \
  FE_KERNEL_T(NAME##_f64, double, __VA_ARGS__)
#define FE_KERNEL_T(FN, TY, ...) \
static void FN(const fe_cfg *cfg, const double *tc, char **p, int64_t n) { \
  typedef TY T; \
  T *restrict p0 = (T *)p[0]; T *restrict p1 = (T *)p[1]; T *restrict p2 = (T *)p[2]; \
  T *restrict p3 = (T *)p[3]; T *restrict p4 = (T *)p[4]; T *restrict p5 = (T *)p[5]; \
  (void)p0; (void)p1; (void)p2; (void)p3; (void)p4; (void)p5; (void)tc; (void)cfg; \
  __VA_ARGS__ \
}

/* steps: 1-element tensors (meta/foreach.h), incremented here; returns the new step */
static int fe_check_steps(const char *op, lt_tensor *const *steps, int steps_n, int n) {
  return lt_meta_foreach_scalars(op, "state_steps", steps, steps_n, n);
}
static double fe_bump_step(lt_tensor *s) {
  double v = lt_tensor_get_double(s, 0) + 1;
  lt_tensor_fill_(s, lt_scalar_float(v));
  return v;
}

/* ---- foreach primitives ---- */

FE_KERNEL(mul_scalar, { const T s = (T)cfg->a; for (int64_t i = 0; i < n; i++) p0[i] *= s; })
FE_KERNEL(add_list, { const T s = (T)cfg->a; for (int64_t i = 0; i < n; i++) p0[i] += s * p1[i]; })
FE_KERNEL(zero, { memset(p0, 0, (size_t)n * sizeof(T)); })

int lt_cpu__foreach_mul_(lt_tensor *const *self, int self_n, lt_scalar scalar) {
  fe_job j; const char *names[] = { "self" };
  lt_tensor *const *lists[] = { self }; int counts[] = { self_n };
  if (fe_prepare(&j, "_foreach_mul_", 1, lists, counts, names, 1u) < 0) return -1;
  fe_cfg cfg = { .a = lt_scalar_to_double(scalar) };
  return fe_run(&j, mul_scalar_f32, mul_scalar_f64, &cfg);
}

int lt_cpu__foreach_add_(lt_tensor *const *self, int self_n, lt_tensor *const *other, int other_n, lt_scalar alpha) {
  fe_job j; const char *names[] = { "self", "other" };
  lt_tensor *const *lists[] = { self, other }; int counts[] = { self_n, other_n };
  if (fe_prepare(&j, "_foreach_add_", 2, lists, counts, names, 1u) < 0) return -1;
  fe_cfg cfg = { .a = lt_scalar_to_double(alpha) };
  return fe_run(&j, add_list_f32, add_list_f64, &cfg);
}

int lt_cpu__foreach_zero_(lt_tensor *const *self, int self_n) {
  fe_job j; const char *names[] = { "self" };
  lt_tensor *const *lists[] = { self }; int counts[] = { self_n };
  if (fe_prepare(&j, "_foreach_zero_", 1, lists, counts, names, 1u) < 0) return -1;
  fe_cfg cfg = { 0 };
  return fe_run(&j, zero_f32, zero_f64, &cfg);
}

/* ---- norms: a partial result per chunk, combined per tensor ---- */

typedef struct { fe_job *j; int kind; double p; } norm_ctx;
enum { NORM_P, NORM_2, NORM_1, NORM_INF, NORM_NINF, NORM_0 };

#define NORM_LOOP(T) do { \
  const T *x = (const T *)ch->p[0]; double acc = 0; \
  switch (nc->kind) { \
  case NORM_2: { double a0 = 0, a1 = 0, a2 = 0, a3 = 0; int64_t i = 0; \
    for (; i + 4 <= ch->n; i += 4) { a0 += (double)x[i] * x[i]; a1 += (double)x[i+1] * x[i+1]; \
      a2 += (double)x[i+2] * x[i+2]; a3 += (double)x[i+3] * x[i+3]; } \
    for (; i < ch->n; i++) a0 += (double)x[i] * x[i]; \
    acc = (a0 + a1) + (a2 + a3); break; } \
  case NORM_1: for (int64_t i = 0; i < ch->n; i++) acc += fabs((double)x[i]); break; \
  case NORM_INF: for (int64_t i = 0; i < ch->n; i++) { double v = fabs((double)x[i]); acc = v > acc || v != v ? v : acc; } break; \
  case NORM_NINF: acc = INFINITY; for (int64_t i = 0; i < ch->n; i++) { double v = fabs((double)x[i]); acc = v < acc || v != v ? v : acc; } break; \
  case NORM_0: for (int64_t i = 0; i < ch->n; i++) acc += x[i] != 0; break; \
  default: for (int64_t i = 0; i < ch->n; i++) acc += pow(fabs((double)x[i]), nc->p); break; \
  } \
  nc->j->partial[c] = acc; } while (0)

static void norm_range(void *ctx, int64_t begin, int64_t end) {
  norm_ctx *nc = ctx;
  for (int64_t c = begin; c < end; c++) {
    fe_chunk *ch = &nc->j->chunks[c];
    if (nc->j->work[ch->t]->dtype == LT_FLOAT64) NORM_LOOP(double); else NORM_LOOP(float);
  }
}

lt_tensor *lt_cpu__foreach_norm(lt_tensor *const *self, int self_n, double ord) {
  fe_job j; const char *names[] = { "tensors" };
  lt_dtype dt;
  if (lt_meta_foreach_norm(self, self_n, &dt) < 0) return NULL;
  int64_t sz = self_n;
  lt_tensor *res = lt_tensor_new(dt, lt_tensor_device(self[0]), 1, &sz);
  if (!res) return NULL;
  norm_ctx nc = { &j, NORM_P, ord };
  if (ord == 2) nc.kind = NORM_2; else if (ord == 1) nc.kind = NORM_1;
  else if (ord == INFINITY) nc.kind = NORM_INF; else if (ord == -INFINITY) nc.kind = NORM_NINF;
  else if (ord == 0) nc.kind = NORM_0;
  lt_tensor *const *lists[] = { self }; int counts[] = { self_n };
  if (fe_prepare(&j, "_foreach_norm", 1, lists, counts, names, 0u) < 0) { lt_tensor_release(res); return NULL; }
  j.partial = malloc((size_t)(j.nchunks ? j.nchunks : 1) * sizeof *j.partial);
  if (!j.partial) { fe_free(&j); lt_tensor_release(res); return lt_error_null("_foreach_norm: out of memory"); }
  if (j.total < 2 * LT_GRAIN_ELEMENTWISE) norm_range(&nc, 0, j.nchunks);
  else lt_parallel_for(j.nchunks, 1, norm_range, &nc);
  int64_t c = 0;
  for (int t = 0; t < self_n; t++) {
    double acc = nc.kind == NORM_NINF ? INFINITY : 0;
    for (; c < j.nchunks && j.chunks[c].t == t; c++) {
      double v = j.partial[c];
      if (nc.kind == NORM_INF) acc = v > acc || v != v ? v : acc;
      else if (nc.kind == NORM_NINF) acc = v < acc || v != v ? v : acc;
      else acc += v;
    }
    if (j.work[t]->numel == 0 && nc.kind == NORM_NINF) acc = 0;
    double r = nc.kind == NORM_2 ? sqrt(acc) : nc.kind == NORM_P ? pow(acc, 1.0 / ord) : acc;
    if (dt == LT_FLOAT64) ((double *)lt_tensor_data(res))[t] = r;
    else ((float *)lt_tensor_data(res))[t] = (float)r;
  }
  fe_free(&j);
  return res;
}

/* ---- fused optimizer steps ---- */

/* the gradient as the update sees it: negated for maximize, plus L2 decay */
#define GRAD_IN(x, g) (cfg->maximize ? -(T)(g) : (T)(g)) + (T)cfg->wd * (x)

/* SGD: p0 param, p1 grad, p2 momentum buffer */
FE_KERNEL(sgd, {
  const T lr = (T)cfg->lr, mom = (T)cfg->momentum, damp = (T)(1 - cfg->dampening);
  if (cfg->momentum == 0) {
    for (int64_t i = 0; i < n; i++) p0[i] -= lr * (GRAD_IN(p0[i], p1[i]));
  } else {
    for (int64_t i = 0; i < n; i++) {
      T d = GRAD_IN(p0[i], p1[i]);
      T b = cfg->first ? d : mom * p2[i] + damp * d;
      p2[i] = b;
      p0[i] -= lr * (cfg->nesterov ? d + mom * b : b);
    }
  }
})

int lt_cpu__fused_sgd_(lt_tensor *const *params, int params_n, lt_tensor *const *grads, int grads_n,
                       lt_tensor *const *momentum_buffers, int momentum_buffers_n, double lr, double momentum,
                       double dampening, double weight_decay, bool nesterov, bool maximize, bool momentum_init) {
  const char *op = "_fused_sgd_";
  const char *names[] = { "params", "grads", "momentum_buffers" };
  lt_tensor *const *lists[] = { params, grads, momentum_buffers };
  int counts[] = { params_n, grads_n, momentum_buffers_n };
  fe_job j;
  if (fe_prepare(&j, op, momentum != 0 ? 3 : 2, lists, counts, names, 5u) < 0) return -1;
  fe_cfg cfg = { .lr = lr, .momentum = momentum, .dampening = dampening, .wd = weight_decay,
                 .nesterov = nesterov, .maximize = maximize, .first = momentum_init };
  return fe_run(&j, sgd_f32, sgd_f64, &cfg);
}

/* Adam / AdamW: p0 param, p1 grad, p2 exp_avg, p3 exp_avg_sq, p4 max_exp_avg_sq;
** tc: 0 step size lr/bc1, 1 1/sqrt(bc2) */
FE_KERNEL(adam, {
  const T b1 = (T)cfg->a, b2 = (T)cfg->b, ob1 = (T)(1 - cfg->a), ob2 = (T)(1 - cfg->b), eps = (T)cfg->eps;
  const T keep = (T)(cfg->decoupled ? 1 - cfg->lr * cfg->wd : 1), wd = (T)(cfg->decoupled ? 0 : cfg->wd);
  const T step = (T)tc[0], rbc2 = (T)tc[1];
  for (int64_t i = 0; i < n; i++) {
    T x = p0[i] * keep;
    T g = (cfg->maximize ? -p1[i] : p1[i]) + wd * x;
    T m = b1 * p2[i] + ob1 * g;
    T v = b2 * p3[i] + ob2 * g * g;
    p2[i] = m; p3[i] = v;
    if (cfg->amsgrad) { v = p4[i] > v ? p4[i] : v; p4[i] = v; }
    p0[i] = x - step * m / (sqrt(v) * rbc2 + eps);
  }
})

int lt_cpu__fused_adam_(lt_tensor *const *params, int params_n, lt_tensor *const *grads, int grads_n,
                        lt_tensor *const *exp_avgs, int exp_avgs_n, lt_tensor *const *exp_avg_sqs, int exp_avg_sqs_n,
                        lt_tensor *const *max_exp_avg_sqs, int max_exp_avg_sqs_n,
                        lt_tensor *const *state_steps, int state_steps_n, double lr, double beta1, double beta2,
                        double eps, double weight_decay, bool amsgrad, bool maximize, bool decoupled) {
  const char *op = "_fused_adam_";
  const char *names[] = { "params", "grads", "exp_avgs", "exp_avg_sqs", "max_exp_avg_sqs" };
  lt_tensor *const *lists[] = { params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs };
  int counts[] = { params_n, grads_n, exp_avgs_n, exp_avg_sqs_n, max_exp_avg_sqs_n };
  if (fe_check_steps(op, state_steps, state_steps_n, params_n) < 0) return -1;
  fe_job j;
  if (fe_prepare(&j, op, amsgrad ? 5 : 4, lists, counts, names, 0x1Du) < 0) return -1;
  for (int i = 0; i < params_n; i++) {
    double s = fe_bump_step(state_steps[i]);
    j.tc[i * FE_NCOEF + 0] = lr / (1 - pow(beta1, s));
    j.tc[i * FE_NCOEF + 1] = 1 / sqrt(1 - pow(beta2, s));
  }
  fe_cfg cfg = { .lr = lr, .a = beta1, .b = beta2, .eps = eps, .wd = weight_decay,
                 .amsgrad = amsgrad, .maximize = maximize, .decoupled = decoupled };
  return fe_run(&j, adam_f32, adam_f64, &cfg);
}

/* Adamax: p0 param, p1 grad, p2 exp_avg, p3 exp_inf; tc 0: lr/bc1 */
FE_KERNEL(adamax, {
  const T b1 = (T)cfg->a, b2 = (T)cfg->b, ob1 = (T)(1 - cfg->a), ob2 = (T)(1 - cfg->b), eps = (T)cfg->eps, clr = (T)tc[0]; (void)ob2;
  for (int64_t i = 0; i < n; i++) {
    T g = GRAD_IN(p0[i], p1[i]);
    T m = b1 * p2[i] + ob1 * g;
    T u = b2 * p3[i], a = fabs(g) + eps;
    u = u > a ? u : a;
    p2[i] = m; p3[i] = u;
    p0[i] -= clr * m / u;
  }
})

int lt_cpu__fused_adamax_(lt_tensor *const *params, int params_n, lt_tensor *const *grads, int grads_n,
                          lt_tensor *const *exp_avgs, int exp_avgs_n, lt_tensor *const *exp_infs, int exp_infs_n,
                          lt_tensor *const *state_steps, int state_steps_n, double lr, double beta1, double beta2,
                          double eps, double weight_decay, bool maximize) {
  const char *op = "_fused_adamax_";
  const char *names[] = { "params", "grads", "exp_avgs", "exp_infs" };
  lt_tensor *const *lists[] = { params, grads, exp_avgs, exp_infs };
  int counts[] = { params_n, grads_n, exp_avgs_n, exp_infs_n };
  if (fe_check_steps(op, state_steps, state_steps_n, params_n) < 0) return -1;
  fe_job j;
  if (fe_prepare(&j, op, 4, lists, counts, names, 0xDu) < 0) return -1;
  for (int i = 0; i < params_n; i++) {
    double s = fe_bump_step(state_steps[i]);
    j.tc[i * FE_NCOEF] = lr / (1 - pow(beta1, s));
  }
  fe_cfg cfg = { .lr = lr, .a = beta1, .b = beta2, .eps = eps, .wd = weight_decay, .maximize = maximize };
  return fe_run(&j, adamax_f32, adamax_f64, &cfg);
}

/* NAdam: p0 param, p1 grad, p2 exp_avg, p3 exp_avg_sq;
** tc: 0 lr*(1-mu)/(1-mu_prod), 1 lr*mu_next/(1-mu_prod*mu_next), 2 1/sqrt(bc2) */
FE_KERNEL(nadam, {
  const T b1 = (T)cfg->a, b2 = (T)cfg->b, ob1 = (T)(1 - cfg->a), ob2 = (T)(1 - cfg->b), eps = (T)cfg->eps;
  const T keep = (T)(cfg->decoupled ? 1 - cfg->lr * cfg->wd : 1), wd = (T)(cfg->decoupled ? 0 : cfg->wd);
  const T cg = (T)tc[0], cm = (T)tc[1], rbc2 = (T)tc[2];
  for (int64_t i = 0; i < n; i++) {
    T x = p0[i] * keep;
    T g = (cfg->maximize ? -p1[i] : p1[i]) + wd * x;
    T m = b1 * p2[i] + ob1 * g;
    T v = b2 * p3[i] + ob2 * g * g;
    p2[i] = m; p3[i] = v;
    T denom = sqrt(v) * rbc2 + eps;
    p0[i] = x - (cg * g + cm * m) / denom;
  }
})

int lt_cpu__fused_nadam_(lt_tensor *const *params, int params_n, lt_tensor *const *grads, int grads_n,
                         lt_tensor *const *exp_avgs, int exp_avgs_n, lt_tensor *const *exp_avg_sqs, int exp_avg_sqs_n,
                         lt_tensor *const *mu_products, int mu_products_n, lt_tensor *const *state_steps, int state_steps_n,
                         double lr, double beta1, double beta2, double eps, double weight_decay,
                         double momentum_decay, bool maximize, bool decoupled) {
  const char *op = "_fused_nadam_";
  const char *names[] = { "params", "grads", "exp_avgs", "exp_avg_sqs" };
  lt_tensor *const *lists[] = { params, grads, exp_avgs, exp_avg_sqs };
  int counts[] = { params_n, grads_n, exp_avgs_n, exp_avg_sqs_n };
  if (fe_check_steps(op, state_steps, state_steps_n, params_n) < 0) return -1;
  if (fe_check_steps(op, mu_products, mu_products_n, params_n) < 0)
    return lt_error("_fused_nadam_: argument 'mu_products' must hold a 1-element tensor per parameter");
  fe_job j;
  if (fe_prepare(&j, op, 4, lists, counts, names, 0xDu) < 0) return -1;
  for (int i = 0; i < params_n; i++) {
    double s = fe_bump_step(state_steps[i]);
    double mu = beta1 * (1 - 0.5 * pow(0.96, s * momentum_decay));
    double mu_next = beta1 * (1 - 0.5 * pow(0.96, (s + 1) * momentum_decay));
    double mp = lt_tensor_get_double(mu_products[i], 0) * mu;
    lt_tensor_fill_(mu_products[i], lt_scalar_float(mp));
    j.tc[i * FE_NCOEF + 0] = lr * (1 - mu) / (1 - mp);
    j.tc[i * FE_NCOEF + 1] = lr * mu_next / (1 - mp * mu_next);
    j.tc[i * FE_NCOEF + 2] = 1 / sqrt(1 - pow(beta2, s));
  }
  fe_cfg cfg = { .lr = lr, .a = beta1, .b = beta2, .eps = eps, .wd = weight_decay,
                 .maximize = maximize, .decoupled = decoupled };
  return fe_run(&j, nadam_f32, nadam_f64, &cfg);
}

/* RAdam: p0 param, p1 grad, p2 exp_avg, p3 exp_avg_sq;
** tc: 0 lr/bc1 * rect (or lr/bc1 unrectified), 1 sqrt(bc2), 2 rectified? */
FE_KERNEL(radam, {
  const T b1 = (T)cfg->a, b2 = (T)cfg->b, ob1 = (T)(1 - cfg->a), ob2 = (T)(1 - cfg->b), eps = (T)cfg->eps;
  const T keep = (T)(cfg->decoupled ? 1 - cfg->lr * cfg->wd : 1), wd = (T)(cfg->decoupled ? 0 : cfg->wd);
  const T step = (T)tc[0], sbc2 = (T)tc[1];
  const bool rect = tc[2] != 0;
  for (int64_t i = 0; i < n; i++) {
    T x = p0[i] * keep;
    T g = (cfg->maximize ? -p1[i] : p1[i]) + wd * x;
    T m = b1 * p2[i] + ob1 * g;
    T v = b2 * p3[i] + ob2 * g * g;
    p2[i] = m; p3[i] = v;
    p0[i] = rect ? x - step * m * sbc2 / (sqrt(v) + eps) : x - step * m;
  }
})

int lt_cpu__fused_radam_(lt_tensor *const *params, int params_n, lt_tensor *const *grads, int grads_n,
                         lt_tensor *const *exp_avgs, int exp_avgs_n, lt_tensor *const *exp_avg_sqs, int exp_avg_sqs_n,
                         lt_tensor *const *state_steps, int state_steps_n, double lr, double beta1, double beta2,
                         double eps, double weight_decay, bool maximize, bool decoupled) {
  const char *op = "_fused_radam_";
  const char *names[] = { "params", "grads", "exp_avgs", "exp_avg_sqs" };
  lt_tensor *const *lists[] = { params, grads, exp_avgs, exp_avg_sqs };
  int counts[] = { params_n, grads_n, exp_avgs_n, exp_avg_sqs_n };
  if (fe_check_steps(op, state_steps, state_steps_n, params_n) < 0) return -1;
  fe_job j;
  if (fe_prepare(&j, op, 4, lists, counts, names, 0xDu) < 0) return -1;
  double rho_inf = 2 / (1 - beta2) - 1;
  for (int i = 0; i < params_n; i++) {
    double s = fe_bump_step(state_steps[i]);
    double bc1 = 1 - pow(beta1, s), bc2 = 1 - pow(beta2, s);
    double rho_t = rho_inf - 2 * s * pow(beta2, s) / bc2;
    double *tc = j.tc + i * FE_NCOEF;
    if (rho_t > 5) {
      double rect = sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
      tc[0] = lr / bc1 * rect; tc[1] = sqrt(bc2); tc[2] = 1;
    } else {
      tc[0] = lr / bc1; tc[1] = 1; tc[2] = 0;
    }
  }
  fe_cfg cfg = { .lr = lr, .a = beta1, .b = beta2, .eps = eps, .wd = weight_decay,
                 .maximize = maximize, .decoupled = decoupled };
  return fe_run(&j, radam_f32, radam_f64, &cfg);
}

/* RMSprop: p0 param, p1 grad, p2 square_avg, then momentum_buffer (if
** momentum) and grad_avg (if centered) in the next slots */
FE_KERNEL(rmsprop, {
  const T alpha = (T)cfg->a, oa = (T)(1 - cfg->a), eps = (T)cfg->eps, lr = (T)cfg->lr, mom = (T)cfg->momentum;
  T *restrict buf = cfg->momentum != 0 ? p3 : NULL;
  T *restrict gavg = cfg->centered ? (cfg->momentum != 0 ? p4 : p3) : NULL;
  for (int64_t i = 0; i < n; i++) {
    T g = GRAD_IN(p0[i], p1[i]);
    T sq = alpha * p2[i] + oa * g * g;
    p2[i] = sq;
    T avg;
    if (gavg) { T ga = alpha * gavg[i] + oa * g; gavg[i] = ga; avg = sqrt(sq - ga * ga) + eps; }
    else avg = sqrt(sq) + eps;
    if (buf) { T b = mom * buf[i] + g / avg; buf[i] = b; p0[i] -= lr * b; }
    else p0[i] -= lr * g / avg;
  }
})

int lt_cpu__fused_rmsprop_(lt_tensor *const *params, int params_n, lt_tensor *const *grads, int grads_n,
                           lt_tensor *const *square_avgs, int square_avgs_n, lt_tensor *const *momentum_buffers,
                           int momentum_buffers_n, lt_tensor *const *grad_avgs, int grad_avgs_n, double lr,
                           double alpha, double eps, double weight_decay, double momentum, bool centered, bool maximize) {
  const char *op = "_fused_rmsprop_";
  const char *names[5] = { "params", "grads", "square_avgs" };
  lt_tensor *const *lists[5] = { params, grads, square_avgs };
  int counts[5] = { params_n, grads_n, square_avgs_n };
  int nb = 3;
  if (momentum != 0) { names[nb] = "momentum_buffers"; lists[nb] = momentum_buffers; counts[nb++] = momentum_buffers_n; }
  if (centered) { names[nb] = "grad_avgs"; lists[nb] = grad_avgs; counts[nb++] = grad_avgs_n; }
  fe_job j;
  if (fe_prepare(&j, op, nb, lists, counts, names, 0x1Du) < 0) return -1;
  fe_cfg cfg = { .lr = lr, .a = alpha, .eps = eps, .wd = weight_decay, .momentum = momentum,
                 .centered = centered, .maximize = maximize };
  return fe_run(&j, rmsprop_f32, rmsprop_f64, &cfg);
}

/* Adagrad: p0 param, p1 grad, p2 sum; tc 0: lr / (1 + (step-1) lr_decay) */
FE_KERNEL(adagrad, {
  const T eps = (T)cfg->eps, clr = (T)tc[0];
  for (int64_t i = 0; i < n; i++) {
    T g = GRAD_IN(p0[i], p1[i]);
    T s = p2[i] + g * g;
    p2[i] = s;
    p0[i] -= clr * g / (sqrt(s) + eps);
  }
})

int lt_cpu__fused_adagrad_(lt_tensor *const *params, int params_n, lt_tensor *const *grads, int grads_n,
                           lt_tensor *const *state_sums, int state_sums_n, lt_tensor *const *state_steps,
                           int state_steps_n, double lr, double lr_decay, double weight_decay, double eps, bool maximize) {
  const char *op = "_fused_adagrad_";
  const char *names[] = { "params", "grads", "state_sums" };
  lt_tensor *const *lists[] = { params, grads, state_sums };
  int counts[] = { params_n, grads_n, state_sums_n };
  if (fe_check_steps(op, state_steps, state_steps_n, params_n) < 0) return -1;
  fe_job j;
  if (fe_prepare(&j, op, 3, lists, counts, names, 5u) < 0) return -1;
  for (int i = 0; i < params_n; i++) {
    double s = fe_bump_step(state_steps[i]);
    j.tc[i * FE_NCOEF] = lr / (1 + (s - 1) * lr_decay);
  }
  fe_cfg cfg = { .lr = lr, .eps = eps, .wd = weight_decay, .maximize = maximize };
  return fe_run(&j, adagrad_f32, adagrad_f64, &cfg);
}

/* Adadelta: p0 param, p1 grad, p2 square_avg, p3 acc_delta */
FE_KERNEL(adadelta, {
  const T rho = (T)cfg->a, orho = (T)(1 - cfg->a), eps = (T)cfg->eps, lr = (T)cfg->lr;
  for (int64_t i = 0; i < n; i++) {
    T g = GRAD_IN(p0[i], p1[i]);
    T sq = rho * p2[i] + orho * g * g;
    T d = sqrt(p3[i] + eps) / sqrt(sq + eps) * g;
    p2[i] = sq;
    p3[i] = rho * p3[i] + orho * d * d;
    p0[i] -= lr * d;
  }
})

int lt_cpu__fused_adadelta_(lt_tensor *const *params, int params_n, lt_tensor *const *grads, int grads_n,
                            lt_tensor *const *square_avgs, int square_avgs_n, lt_tensor *const *acc_deltas,
                            int acc_deltas_n, double lr, double rho, double eps, double weight_decay, bool maximize) {
  const char *op = "_fused_adadelta_";
  const char *names[] = { "params", "grads", "square_avgs", "acc_deltas" };
  lt_tensor *const *lists[] = { params, grads, square_avgs, acc_deltas };
  int counts[] = { params_n, grads_n, square_avgs_n, acc_deltas_n };
  fe_job j;
  if (fe_prepare(&j, op, 4, lists, counts, names, 0xDu) < 0) return -1;
  fe_cfg cfg = { .lr = lr, .a = rho, .eps = eps, .wd = weight_decay, .maximize = maximize };
  return fe_run(&j, adadelta_f32, adadelta_f64, &cfg);
}
