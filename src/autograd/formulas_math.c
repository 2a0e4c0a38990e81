/*
** formulas_math.c — derivative helpers of the ops in src/ops/math.lua,
** written with the ops' entry points so that create_graph records them.
** Intermediates go into a pool; the wrappers pass a NULL (an earlier failure,
** error already set) straight through.
*/
#include "formulas_math.h"
#include "lt_ops.h"
#include "core/tpool.h"

typedef lt_tpool pool;
static inline lt_tensor *keep(pool *p, lt_tensor *t) { return lt_tpool_keep(p, t); }
static inline lt_tensor *finish(pool *p, lt_tensor *r) { return lt_tpool_finish(p, r); }

#define OK2(a, b) ((a) && (b))
static lt_tensor *num(pool *p, double v) { return keep(p, lt_tensor_wrapped_number(lt_scalar_float(v))); }
static lt_tensor *mul(pool *p, lt_tensor *a, lt_tensor *b) { return OK2(a, b) ? keep(p, lt_mul(a, b)) : NULL; }
static lt_tensor *dv(pool *p, lt_tensor *a, lt_tensor *b) { return OK2(a, b) ? keep(p, lt_div(a, b, NULL)) : NULL; }
static lt_tensor *sub(pool *p, lt_tensor *a, lt_tensor *b) { return OK2(a, b) ? keep(p, lt_sub(a, b, lt_scalar_int(1))) : NULL; }
static lt_tensor *add(pool *p, lt_tensor *a, lt_tensor *b) { return OK2(a, b) ? keep(p, lt_add(a, b, lt_scalar_int(1))) : NULL; }
static lt_tensor *where(pool *p, lt_tensor *c, lt_tensor *a, lt_tensor *b) {
  return (c && a && b) ? keep(p, lt_where(c, a, b)) : NULL;
}
#define BIN(NAME) \
static lt_tensor *NAME(pool *p, lt_tensor *a, lt_tensor *b) { return OK2(a, b) ? keep(p, lt_##NAME(a, b)) : NULL; }
BIN(eq) BIN(ne) BIN(ge) BIN(le) BIN(logical_or)
#define UN(NAME) \
static lt_tensor *NAME##_(pool *p, lt_tensor *a) { return a ? keep(p, lt_##NAME(a)) : NULL; }
UN(exp) UN(exp2) UN(log) UN(cos) UN(sinc) UN(isnan) UN(digamma) UN(i0) UN(_i1) UN(relu) UN(neg)

#define PI_D 3.14159265358979323846

/* d/dx logaddexp(x, y) = exp(x - result) */
lt_tensor *lt_mm_grad_logaddexp(lt_tensor *grad, lt_tensor *x, lt_tensor *result) {
  pool p = {0};
  return finish(&p, mul(&p, grad, exp_(&p, sub(&p, x, result))));
}
lt_tensor *lt_mm_grad_logaddexp2(lt_tensor *grad, lt_tensor *x, lt_tensor *result) {
  pool p = {0};
  return finish(&p, mul(&p, grad, exp2_(&p, sub(&p, x, result))));
}

/* log(other) where self != 0, 0 elsewhere (xlogy of the mask keeps NaN of other) */
lt_tensor *lt_mm_grad_xlogy_self(lt_tensor *grad, lt_tensor *self, lt_tensor *other) {
  pool p = {0};
  lt_tensor *nz = ne(&p, self, num(&p, 0));
  lt_tensor *l = OK2(nz, other) ? keep(&p, lt_xlogy(nz, other)) : NULL;
  return finish(&p, mul(&p, grad, l));
}
lt_tensor *lt_mm_grad_xlogy_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other) {
  pool p = {0};
  return finish(&p, dv(&p, mul(&p, grad, self), other));
}

/* fmax picks self on ties and where other is NaN */
static lt_tensor *fm_grad(lt_tensor *grad, lt_tensor *self, lt_tensor *other, bool is_max, bool for_self) {
  pool p = {0};
  lt_tensor *pick = logical_or(&p, is_max ? ge(&p, self, other) : le(&p, self, other), isnan_(&p, other));
  lt_tensor *z = num(&p, 0);
  return finish(&p, for_self ? where(&p, pick, grad, z) : where(&p, pick, z, grad));
}
lt_tensor *lt_mm_grad_fmax_self(lt_tensor *grad, lt_tensor *self, lt_tensor *other) {
  return fm_grad(grad, self, other, true, true);
}
lt_tensor *lt_mm_grad_fmax_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other) {
  return fm_grad(grad, self, other, true, false);
}
lt_tensor *lt_mm_grad_fmin_self(lt_tensor *grad, lt_tensor *self, lt_tensor *other) {
  return fm_grad(grad, self, other, false, true);
}
lt_tensor *lt_mm_grad_fmin_other(lt_tensor *grad, lt_tensor *self, lt_tensor *other) {
  return fm_grad(grad, self, other, false, false);
}

/* sinc'(x) = (cos(pi x) - sinc(x)) / x, 0 at 0 (the division by a safe x keeps
** double backward free of NaN) */
lt_tensor *lt_mm_grad_sinc(lt_tensor *grad, lt_tensor *self) {
  pool p = {0};
  lt_tensor *z = eq(&p, self, num(&p, 0));
  lt_tensor *xs = where(&p, z, num(&p, 1), self);
  lt_tensor *d = dv(&p, sub(&p, cos_(&p, mul(&p, self, num(&p, PI_D))), sinc_(&p, self)), xs);
  return finish(&p, mul(&p, grad, where(&p, z, num(&p, 0), d)));
}

lt_tensor *lt_mm_grad_lgamma(lt_tensor *grad, lt_tensor *self) {
  pool p = {0};
  return finish(&p, mul(&p, grad, digamma_(&p, self)));
}
lt_tensor *lt_mm_grad_digamma(lt_tensor *grad, lt_tensor *self) {
  pool p = {0};
  return finish(&p, mul(&p, grad, keep(&p, lt_polygamma(1, self))));
}
lt_tensor *lt_mm_grad_polygamma(lt_tensor *grad, int64_t n, lt_tensor *self) {
  pool p = {0};
  return finish(&p, mul(&p, grad, keep(&p, lt_polygamma(n + 1, self))));
}
lt_tensor *lt_mm_grad_i0(lt_tensor *grad, lt_tensor *self) {
  pool p = {0};
  return finish(&p, mul(&p, grad, _i1_(&p, self)));
}
/* i1'(x) = i0(x) - i1(x) / x, 1/2 at 0 */
lt_tensor *lt_mm_grad_i1(lt_tensor *grad, lt_tensor *self, lt_tensor *result) {
  pool p = {0};
  lt_tensor *z = eq(&p, self, num(&p, 0));
  lt_tensor *xs = where(&p, z, num(&p, 1), self);
  lt_tensor *d = sub(&p, i0_(&p, self), dv(&p, result, xs));
  return finish(&p, mul(&p, grad, where(&p, z, num(&p, 0.5), d)));
}

/* d result_i / d x_j = exp(x_j - result_i) for i >= j: the gradient is
** exp(x_j) * (reverse cumulative sum of grad_i exp(-result_i)), done in log space
** on the positive and the negative parts of grad separately so nothing overflows */
lt_tensor *lt_mm_grad_logcumsumexp(lt_tensor *grad, lt_tensor *self, lt_tensor *result, int64_t dim) {
  pool p = {0};
  lt_intlist fd = lt_intlist_make(&dim, 1);
  lt_tensor *parts[2];
  for (int k = 0; k < 2; k++) {
    lt_tensor *g = k == 0 ? relu_(&p, grad) : relu_(&p, neg_(&p, grad));
    lt_tensor *lg = sub(&p, log_(&p, g), result);
    lt_tensor *f = lg ? keep(&p, lt_flip(lg, fd)) : NULL;
    lt_tensor *c = f ? keep(&p, lt_logcumsumexp(f, dim)) : NULL;
    lt_tensor *b = c ? keep(&p, lt_flip(c, fd)) : NULL;
    parts[k] = exp_(&p, add(&p, self, b));
  }
  return finish(&p, sub(&p, parts[0], parts[1]));
}
