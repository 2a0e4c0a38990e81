/*
** formulas_nn_norm.c — derivative helpers for softmax, normalisation and loss ops.
**
** Written with the ops' entry points so create_graph records them (double
** backward). Temporaries go into a small pool released on every exit path.
*/
#include <math.h>
#include <string.h>
#include "formulas_nn_norm.h"
#include "lt_ops.h"

typedef struct pool { lt_tensor *t[24]; int n; } pool;

static lt_tensor *keep(pool *p, lt_tensor *t) {
  if (t) {
    if (p->n == (int)(sizeof p->t / sizeof p->t[0])) {
      lt_tensor_release(t);
      return lt_error_null("autograd: too many temporaries in an nn derivative");
    }
    p->t[p->n++] = t;
  }
  return t;
}

static void drain(pool *p) {
  for (int i = 0; i < p->n; i++) lt_tensor_release(p->t[i]);
  p->n = 0;
}

/* the result out of the pool: retained before the pool is drained */
static lt_tensor *ret(pool *p, lt_tensor *r) {
  if (r) lt_tensor_retain(r);
  drain(p);
  return r;
}

#define TRY(var, e) do { if (!((var) = keep(&P, (e)))) goto out; } while (0)

static lt_tensor *one_dim_sum(lt_tensor *t, int64_t dim) {
  return lt_sum(t, lt_intlist_make(&dim, 1), true, -1);
}

/* softmax_backward: gi = y * (g - sum(g*y)). d/dy applied to gg:
** gg * (g - sum(g*y)) - g * sum(gg*y) */
lt_tensor *lt_grad_softmax_backward_output(lt_tensor *grad, lt_tensor *grad_output, lt_tensor *output, int64_t dim) {
  pool P = {0};
  lt_tensor *gy, *s, *d, *a, *ggy, *s2, *b, *r = NULL;
  TRY(gy, lt_mul(grad_output, output));
  TRY(s, one_dim_sum(gy, dim));
  TRY(d, lt_sub(grad_output, s, lt_scalar_int(1)));
  TRY(a, lt_mul(grad, d));
  TRY(ggy, lt_mul(grad, output));
  TRY(s2, one_dim_sum(ggy, dim));
  TRY(b, lt_mul(grad_output, s2));
  TRY(r, lt_sub(a, b, lt_scalar_int(1)));
out:
  return ret(&P, r);
}

/* log_softmax_backward: gi = g - exp(y) * sum(g). d/dg applied to gg: gg - sum(gg*exp(y)) */
lt_tensor *lt_grad_log_softmax_backward_grad(lt_tensor *grad, lt_tensor *output, int64_t dim) {
  pool P = {0};
  lt_tensor *e, *ge, *s, *r = NULL;
  TRY(e, lt_exp(output));
  TRY(ge, lt_mul(grad, e));
  TRY(s, one_dim_sum(ge, dim));
  TRY(r, lt_sub(grad, s, lt_scalar_int(1)));
out:
  return ret(&P, r);
}

/* d/dy applied to gg: -gg * exp(y) * sum(g) */
lt_tensor *lt_grad_log_softmax_backward_output(lt_tensor *grad, lt_tensor *grad_output, lt_tensor *output,
                                               int64_t dim) {
  pool P = {0};
  lt_tensor *e, *s, *a, *b, *r = NULL;
  TRY(e, lt_exp(output));
  TRY(s, one_dim_sum(grad_output, dim));
  TRY(a, lt_mul(grad, e));
  TRY(b, lt_mul(a, s));
  TRY(r, lt_neg(b));
out:
  return ret(&P, r);
}

lt_tensor *lt_grad_layer_norm_bias(lt_tensor *grad, lt_intlist normalized_shape) {
  int64_t dims[LT_MAX_DIMS];
  int k = grad->ndim - normalized_shape.n;
  for (int i = 0; i < k; i++) dims[i] = i;
  if (k <= 0) { lt_tensor_retain(grad); return grad; }
  return lt_sum(grad, lt_intlist_make(dims, k), false, -1);
}
