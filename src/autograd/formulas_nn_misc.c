/*
** formulas_nn_misc.c — derivative helpers for the ops of src/ops/nn_misc.lua.
**
** The activations have two forms. A plain backward (grad mode off: no
** create_graph) runs one fused pass, _activation_backward (nn_act.c). With
** create_graph the derivative is written with ops, so that the backward is
** itself recorded. Intermediates go into a pool (as in
** formulas_elementwise.c): the wrappers pass a NULL straight through and
** finish() drops everything but the result.
*/
#include <math.h>
#include "formulas_nn_misc.h"
#include "formulas_elementwise.h"
#include "lt_ops.h"
#include "core/tpool.h"

typedef lt_tpool pool;
static inline lt_tensor *keep(pool *p, lt_tensor *t) { return lt_tpool_keep(p, t); }
static inline lt_tensor *finish(pool *p, lt_tensor *r) { return lt_tpool_finish(p, r); }

static lt_tensor *num(pool *p, double v) { return keep(p, lt_tensor_wrapped_number(lt_scalar_float(v))); }
static lt_tensor *mul(pool *p, lt_tensor *a, lt_tensor *b) { return a && b ? keep(p, lt_mul(a, b)) : NULL; }
static lt_tensor *dv(pool *p, lt_tensor *a, lt_tensor *b) { return a && b ? keep(p, lt_div(a, b, NULL)) : NULL; }
static lt_tensor *add(pool *p, lt_tensor *a, lt_tensor *b) { return a && b ? keep(p, lt_add(a, b, lt_scalar_int(1))) : NULL; }
static lt_tensor *sub(pool *p, lt_tensor *a, lt_tensor *b) { return a && b ? keep(p, lt_sub(a, b, lt_scalar_int(1))) : NULL; }
static lt_tensor *where(pool *p, lt_tensor *c, lt_tensor *a, lt_tensor *b) {
  return c && a && b ? keep(p, lt_where(c, a, b)) : NULL;
}
#define CMP(NAME) \
static lt_tensor *NAME(pool *p, lt_tensor *a, lt_tensor *b) { return a && b ? keep(p, lt_##NAME(a, b)) : NULL; }
CMP(lt) CMP(le) CMP(gt) CMP(logical_and)
#define UN(NAME) \
static lt_tensor *NAME##_(pool *p, lt_tensor *a) { return a ? keep(p, lt_##NAME(a)) : NULL; }
UN(sigmoid) UN(tanh) UN(abs) UN(neg)
/* grad where m, 0 elsewhere */
static lt_tensor *masked(pool *p, lt_tensor *m, lt_tensor *g) { return where(p, m, g, num(p, 0)); }

static lt_tensor *fused(lt_tensor *grad, lt_tensor *self, const char *act, double a, double b, double c) {
  return lt__activation_backward(grad, self, act, a, b, c);
}

lt_tensor *lt_nn_grad_linear_weight(lt_tensor *grad, lt_tensor *input) {
  pool P = {0}, *p = &P;
  lt_tensor *gt_ = keep(p, lt_t(grad));
  return finish(p, gt_ ? keep(p, lt_mm(gt_, input)) : NULL);
}

/* tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2), sp = softplus(x) */
lt_tensor *lt_nn_grad_mish(lt_tensor *grad, lt_tensor *self) {
  if (!lt_grad_enabled()) return fused(grad, self, "mish", 0, 0, 0);
  pool P = {0}, *p = &P;
  lt_tensor *t = tanh_(p, keep(p, lt_softplus(self, lt_scalar_int(1), lt_scalar_int(20))));
  lt_tensor *d = add(p, t, mul(p, mul(p, self, sigmoid_(p, self)), sub(p, num(p, 1), mul(p, t, t))));
  return finish(p, mul(p, grad, d));
}

/* 1/6 strictly inside (-3, 3) */
lt_tensor *lt_nn_grad_hardsigmoid(lt_tensor *grad, lt_tensor *self) {
  if (!lt_grad_enabled()) return fused(grad, self, "hardsigmoid", 0, 0, 0);
  pool P = {0}, *p = &P;
  lt_tensor *m = logical_and(p, gt(p, self, num(p, -3)), lt(p, self, num(p, 3)));
  return finish(p, masked(p, m, mul(p, grad, num(p, 1.0 / 6))));
}

/* 0 below -3, x/3 + 1/2 up to 3, 1 above */
lt_tensor *lt_nn_grad_hardswish(lt_tensor *grad, lt_tensor *self) {
  if (!lt_grad_enabled()) return fused(grad, self, "hardswish", 0, 0, 0);
  pool P = {0}, *p = &P;
  lt_tensor *mid = mul(p, grad, add(p, mul(p, self, num(p, 1.0 / 3)), num(p, 0.5)));
  lt_tensor *hi = where(p, le(p, self, num(p, 3)), mid, grad);
  return finish(p, where(p, lt(p, self, num(p, -3)), num(p, 0), hi));
}

/* 1 / (1 + |x|)^2 */
lt_tensor *lt_nn_grad_softsign(lt_tensor *grad, lt_tensor *self) {
  if (!lt_grad_enabled()) return fused(grad, self, "softsign", 0, 0, 0);
  pool P = {0}, *p = &P;
  lt_tensor *d = add(p, abs_(p, self), num(p, 1));
  return finish(p, dv(p, grad, mul(p, d, d)));
}

/* sigmoid(-x) */
lt_tensor *lt_nn_grad_logsigmoid(lt_tensor *grad, lt_tensor *self) {
  if (!lt_grad_enabled()) return fused(grad, self, "logsigmoid", 0, 0, 0);
  pool P = {0}, *p = &P;
  return finish(p, mul(p, grad, sigmoid_(p, neg_(p, self))));
}

lt_tensor *lt_nn_grad_threshold(lt_tensor *grad, lt_tensor *self, lt_scalar threshold) {
  if (!lt_grad_enabled()) return fused(grad, self, "threshold", lt_scalar_to_double(threshold), 0, 0);
  pool P = {0}, *p = &P;
  return finish(p, masked(p, gt(p, self, keep(p, lt_tensor_wrapped_number(threshold))), grad));
}

/* hardshrink and softshrink: the gradient passes where |x| > lambd */
lt_tensor *lt_nn_grad_shrink(lt_tensor *grad, lt_tensor *self, lt_scalar lambd) {
  double l = lt_scalar_to_double(lambd);
  if (!lt_grad_enabled()) return fused(grad, self, "hardshrink", l, 0, 0);
  pool P = {0}, *p = &P;
  return finish(p, masked(p, gt(p, abs_(p, self), num(p, l)), grad));
}

/* tanh(x)^2 */
lt_tensor *lt_nn_grad_tanhshrink(lt_tensor *grad, lt_tensor *self) {
  if (!lt_grad_enabled()) return fused(grad, self, "tanhshrink", 0, 0, 0);
  pool P = {0}, *p = &P;
  lt_tensor *t = tanh_(p, self);
  return finish(p, mul(p, grad, mul(p, t, t)));
}

#define SELU_ALPHA 1.6732632423543772848170429916717
#define SELU_SCALE 1.0507009873554804934193349852946
static lt_tensor *elu_grad(lt_tensor *grad, lt_tensor *self, double alpha, double scale, double input_scale) {
  if (!lt_grad_enabled()) return fused(grad, self, "elu", alpha, scale, input_scale);
  return lt_ew_grad_elu(grad, self, lt_scalar_float(alpha), lt_scalar_float(scale), lt_scalar_float(input_scale));
}

lt_tensor *lt_nn_grad_selu(lt_tensor *grad, lt_tensor *self) {
  return elu_grad(grad, self, SELU_ALPHA, SELU_SCALE, 1);
}

lt_tensor *lt_nn_grad_celu(lt_tensor *grad, lt_tensor *self, lt_scalar alpha) {
  double a = lt_scalar_to_double(alpha);
  return elu_grad(grad, self, a, 1, 1 / a);
}

/* prelu's weight shaped to broadcast against self: [C] -> [C, 1, ...], or a
** one-element weight as 0-d; a differentiable view so double backward works */
static lt_tensor *prelu_w(pool *p, lt_tensor *self, lt_tensor *weight) {
  int64_t sz[LT_MAX_DIMS];
  int nd = 0;
  if (weight->numel != 1) {
    nd = self->ndim - 1;
    for (int i = 0; i < nd; i++) sz[i] = 1;
    sz[0] = weight->numel;
  }
  return keep(p, lt_reshape(weight, lt_intlist_make(sz, nd)));
}

lt_tensor *lt_nn_grad_prelu_self(lt_tensor *grad, lt_tensor *self, lt_tensor *weight) {
  pool P = {0}, *p = &P;
  lt_tensor *w = prelu_w(p, self, weight);
  return finish(p, where(p, gt(p, self, num(p, 0)), grad, mul(p, grad, w)));
}

/* sum of grad * x over the non-positive x of each channel */
lt_tensor *lt_nn_grad_prelu_weight(lt_tensor *grad, lt_tensor *self, lt_tensor *weight) {
  pool P = {0}, *p = &P;
  lt_tensor *s = masked(p, le(p, self, num(p, 0)), mul(p, grad, self));
  int64_t dims[LT_MAX_DIMS];
  int nd = 0;
  for (int i = 0; i < self->ndim; i++)
    if (weight->numel == 1 || i != 1) dims[nd++] = i;
  lt_tensor *r = s ? keep(p, lt_sum(s, lt_intlist_make(dims, nd), false, -1)) : NULL;
  return finish(p, r ? keep(p, lt_reshape(r, lt_intlist_make(weight->sizes, weight->ndim))) : NULL);
}

lt_tensor *lt_nn_grad_dropout(lt_tensor *grad, lt_tensor *mask, double p_, bool train) {
  if (!train) return lt_grad_identity(grad);
  pool P = {0}, *p = &P;
  double scale = p_ >= 1 ? 0 : 1 / (1 - p_);
  return finish(p, where(p, mask, mul(p, grad, num(p, scale)), num(p, 0)));
}

lt_tensor *lt_nn_grad_embedding(lt_tensor *grad, lt_tensor *indices, const lt_input_meta *weight_meta,
                                int64_t padding_idx) {
  if (!lt_grad_enabled()) return lt__embedding_backward(grad, indices, weight_meta->sizes[0], padding_idx);
  /* with create_graph: index_add of the gradient rows, the padding rows masked out first */
  pool P = {0}, *p = &P;
  int64_t d = weight_meta->sizes[1], s2[2] = { -1, d }, s1 = -1;
  lt_tensor *g = keep(p, lt_reshape(grad, lt_intlist_make(s2, 2)));
  lt_tensor *idx = keep(p, lt_reshape(indices, lt_intlist_make(&s1, 1)));
  if (g && idx && padding_idx != LT_NOINT) {
    int64_t rows = weight_meta->sizes[0];
    int64_t pad1 = padding_idx > 0 ? padding_idx : rows + padding_idx + 1;   /* 1-based */
    lt_tensor *m = idx ? keep(p, lt_ne(idx, keep(p, lt_tensor_wrapped_number(lt_scalar_int(pad1))))) : NULL;
    lt_tensor *m2 = m ? keep(p, lt_unsqueeze(m, 1)) : NULL;
    g = masked(p, m2, g);
  }
  lt_tensor *z = keep(p, lt_zeros_from_meta(weight_meta));
  return finish(p, z && idx && g ? keep(p, lt_index_add(z, 0, idx, g, lt_scalar_int(1))) : NULL);
}
