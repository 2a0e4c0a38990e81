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
#include "core/tpool.h"

typedef lt_tpool pool;

static lt_tensor *keep(pool *p, lt_tensor *t) { return lt_tpool_keep(p, t); }


/* the result out of the pool: retained before the pool is drained */
static lt_tensor *ret(pool *p, lt_tensor *r) { return lt_tpool_give(p, r); }

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

/* ---- normalisation layers with create_graph ----
** A plain backward (grad mode off) runs the fused *_backward kernels. With
** create_graph the gradient is built from differentiable ops instead, and the
** statistics are recomputed from the input: the saved mean and 1/std are
** outputs of the forward node, whose gradients it drops, so a backward that
** read them would lose their dependence on the input. Temporaries go into a
** pool released on every exit. */
typedef lt_tpool gpool;
static inline lt_tensor *gkeep(gpool *p, lt_tensor *t) { return lt_tpool_keep(p, t); }
static inline lt_tensor *gfinish(gpool *p, lt_tensor *r) { return lt_tpool_finish(p, r); }

/* the wrappers pass a failed (NULL) operand straight through */
static lt_tensor *gmul(gpool *p, lt_tensor *a, lt_tensor *b) { return a && b ? gkeep(p, lt_mul(a, b)) : NULL; }
static lt_tensor *gsub(gpool *p, lt_tensor *a, lt_tensor *b) {
  return a && b ? gkeep(p, lt_sub(a, b, lt_scalar_int(1))) : NULL;
}
static lt_tensor *gmean(gpool *p, lt_tensor *a, const int64_t *dims, int nd) {
  return a ? gkeep(p, lt_mean(a, lt_intlist_make(dims, nd), true, -1)) : NULL;
}
static lt_tensor *gsum(gpool *p, lt_tensor *a, const int64_t *dims, int nd) {
  return a ? gkeep(p, lt_sum(a, lt_intlist_make(dims, nd), false, -1)) : NULL;
}

/* xhat = (x - mean) / sqrt(var + eps) and r = 1 / sqrt(var + eps) over dims
** (biased variance), recorded */
static lt_tensor *norm_xhat(gpool *p, lt_tensor *x, const int64_t *dims, int nd, double eps, lt_tensor **r) {
  lt_tensor *xc = gsub(p, x, gmean(p, x, dims, nd));
  lt_tensor *var = gmean(p, gmul(p, xc, xc), dims, nd);
  lt_tensor *e = gkeep(p, lt_tensor_wrapped_number(lt_scalar_float(eps)));
  lt_tensor *ve = var && e ? gkeep(p, lt_add(var, e, lt_scalar_int(1))) : NULL;
  *r = ve ? gkeep(p, lt_rsqrt(ve)) : NULL;
  return gmul(p, xc, *r);
}

/* the input gradient of a normalisation over dims given gw = grad * weight:
** r (gw - mean(gw) - xhat mean(gw xhat)) */
static lt_tensor *norm_input_grad(gpool *p, lt_tensor *gw, lt_tensor *xhat, lt_tensor *r, const int64_t *dims,
                                  int nd) {
  lt_tensor *a = gsub(p, gw, gmean(p, gw, dims, nd));
  lt_tensor *b = gmul(p, xhat, gmean(p, gmul(p, gw, xhat), dims, nd));
  return gmul(p, r, gsub(p, a, b));
}

/* saved statistics read as constants: no history back into the forward node */
static lt_tensor *gconst(gpool *p, lt_tensor *t) { return t ? gkeep(p, lt_detach(t)) : NULL; }

static int trailing_dims(const lt_tensor *x, lt_intlist normalized_shape, int64_t *dims) {
  int nd = (int)normalized_shape.n;
  for (int i = 0; i < nd; i++) dims[i] = x->ndim - nd + i;
  return nd;
}

lt_tensor *lt_grad_layer_norm_input(lt_tensor *grad, lt_tensor *input, lt_tensor *mean, lt_tensor *rstd,
                                    lt_tensor *weight, lt_intlist normalized_shape, double eps) {
  if (!lt_grad_enabled()) return lt_layer_norm_backward(grad, input, mean, rstd, weight, normalized_shape);
  gpool P = {0}, *p = &P;
  int64_t dims[LT_MAX_DIMS];
  int nd = trailing_dims(input, normalized_shape, dims);
  lt_tensor *r, *xhat = norm_xhat(p, input, dims, nd, eps, &r);
  lt_tensor *gw = weight ? gmul(p, grad, weight) : grad;
  return gfinish(p, norm_input_grad(p, gw, xhat, r, dims, nd));
}

/* grad * xhat at the input's shape; the generated code sums the leading dims */
lt_tensor *lt_grad_layer_norm_weight(lt_tensor *grad, lt_tensor *input, lt_tensor *mean, lt_tensor *rstd,
                                     lt_intlist normalized_shape, double eps) {
  if (!lt_grad_enabled()) return lt_layer_norm_backward_weight(grad, input, mean, rstd, normalized_shape);
  gpool P = {0}, *p = &P;
  int64_t dims[LT_MAX_DIMS];
  int nd = trailing_dims(input, normalized_shape, dims);
  lt_tensor *r, *xhat = norm_xhat(p, input, dims, nd, eps, &r);
  return gfinish(p, gmul(p, grad, xhat));
}

/* batch_norm reduces over every dim but the channels (dim 1); per-channel
** tensors are viewed as (C, 1, ...) to broadcast against (N, C, ...) */
static int channel_dims(const lt_tensor *x, int64_t *dims) {
  int nd = 0;
  for (int d = 0; d < x->ndim; d++) if (d != 1) dims[nd++] = d;
  return nd;
}

static lt_tensor *per_channel(gpool *p, lt_tensor *v, const lt_tensor *x) {
  if (!v) return NULL;
  int64_t sh[LT_MAX_DIMS];
  sh[0] = -1;
  for (int d = 2; d < x->ndim; d++) sh[d - 1] = 1;
  return gkeep(p, lt_reshape(v, lt_intlist_make(sh, x->ndim > 1 ? x->ndim - 1 : 1)));
}

/* xhat and 1/std of batch_norm: recomputed from the input when training, the
** saved (running) statistics as constants otherwise */
static lt_tensor *bn_xhat(gpool *p, lt_tensor *input, lt_tensor *save_mean, lt_tensor *save_invstd, bool training,
                          double eps, const int64_t *dims, int nd, lt_tensor **r) {
  if (training) return norm_xhat(p, input, dims, nd, eps, r);
  lt_tensor *m = per_channel(p, gconst(p, save_mean), input);
  *r = per_channel(p, gconst(p, save_invstd), input);
  return gmul(p, gsub(p, input, m), *r);
}

lt_tensor *lt_grad_batch_norm_input(lt_tensor *grad, lt_tensor *input, lt_tensor *weight, lt_tensor *save_mean,
                                    lt_tensor *save_invstd, bool training, double eps) {
  if (!lt_grad_enabled())
    return lt_batch_norm_backward(grad, input, weight, save_mean, save_invstd, training);
  gpool P = {0}, *p = &P;
  int64_t dims[LT_MAX_DIMS];
  int nd = channel_dims(input, dims);
  lt_tensor *gw = weight ? gmul(p, grad, per_channel(p, weight, input)) : grad;
  lt_tensor *r = NULL, *gi;
  if (training) {
    lt_tensor *xhat = norm_xhat(p, input, dims, nd, eps, &r);
    gi = norm_input_grad(p, gw, xhat, r, dims, nd);
  } else {
    /* eval: an affine map with constant statistics */
    gi = gmul(p, gw, per_channel(p, gconst(p, save_invstd), input));
  }
  return gfinish(p, gi);
}

lt_tensor *lt_grad_batch_norm_weight(lt_tensor *grad, lt_tensor *input, lt_tensor *save_mean, lt_tensor *save_invstd,
                                     bool training, double eps) {
  if (!lt_grad_enabled()) return lt_batch_norm_backward_weight(grad, input, save_mean, save_invstd);
  gpool P = {0}, *p = &P;
  int64_t dims[LT_MAX_DIMS];
  int nd = channel_dims(input, dims);
  lt_tensor *r, *xhat = bn_xhat(p, input, save_mean, save_invstd, training, eps, dims, nd, &r);
  return gfinish(p, gsum(p, gmul(p, grad, xhat), dims, nd));
}

lt_tensor *lt_grad_batch_norm_bias(lt_tensor *grad, lt_tensor *input) {
  if (!lt_grad_enabled()) return lt_batch_norm_backward_bias(grad, input);
  gpool P = {0}, *p = &P;
  int64_t dims[LT_MAX_DIMS];
  int nd = channel_dims(input, dims);
  return gfinish(p, gsum(p, grad, dims, nd));
}

/* the fused kernels are the CPU's; the inputs' gradients become grads[0..2] where needed */
static int joint_done(int rc, const bool *needs, lt_tensor **grads, lt_tensor *g3[3]) {
  for (int i = 0; i < 3; i++) {
    if (rc == 0 && needs[i]) grads[i] = g3[i];
    else lt_tensor_release(g3[i]);
  }
  return rc < 0 ? -1 : 1;
}

int lt_grad_layer_norm_joint(lt_tensor *grad, lt_tensor *input, lt_tensor *mean, lt_tensor *rstd, lt_tensor *weight,
                             lt_intlist normalized_shape, const bool *needs, lt_tensor **grads) {
  if (lt_grad_enabled() || lt_tensor_device(input).type != LT_DEV_CPU) return 0;
  lt_tensor *g3[3] = { NULL, NULL, NULL };
  int rc = lt_native_layer_norm_backward(grad, input, mean, rstd, weight, normalized_shape, needs[0], needs[1],
                                         needs[2], &g3[0], &g3[1], &g3[2]);
  return joint_done(rc, needs, grads, g3);
}

int lt_grad_batch_norm_joint(lt_tensor *grad, lt_tensor *input, lt_tensor *weight, lt_tensor *save_mean,
                             lt_tensor *save_invstd, bool training, const bool *needs, lt_tensor **grads) {
  if (lt_grad_enabled() || lt_tensor_device(input).type != LT_DEV_CPU) return 0;
  lt_tensor *g3[3] = { NULL, NULL, NULL };
  int rc = lt_native_batch_norm_backward(grad, input, weight, save_mean, save_invstd, training, needs[0], needs[1],
                                         needs[2], &g3[0], &g3[1], &g3[2]);
  return joint_done(rc, needs, grads, g3);
}

/* ---- nll_loss: out = -sum_n s_n x[n, t_n] with s_n = weight[t_n] (1 without weights, 0
** where t_n is ignore_index), summed, divided by W = sum_n s_n ("mean") or per sample.
** The mean's W is the forward's second output, which carries no gradient back to the
** weights, so under create_graph it is recomputed from them. */
typedef struct nll_parts {
  int cdim;          /* the class dim of self: 0 unbatched, else 1 */
  lt_tensor *ts;     /* targets with the ignored ones replaced by class 1 (a valid index) */
  lt_tensor *ign;    /* bool: the target is ignore_index */
  lt_tensor *s;      /* s_n, the targets' shape */
} nll_parts;

static int nll_split(gpool *p, lt_tensor *self, lt_tensor *target, lt_tensor *weight, int64_t ignore_index,
                     nll_parts *q) {
  q->cdim = self->ndim == 1 ? 0 : 1;
  lt_tensor *iv = gkeep(p, lt_tensor_wrapped_number(lt_scalar_int(ignore_index)));
  q->ign = iv ? gkeep(p, lt_eq(target, iv)) : NULL;
  lt_tensor *one = gkeep(p, lt_tensor_wrapped_number(lt_scalar_int(1)));
  q->ts = q->ign && one ? gkeep(p, lt_where(q->ign, one, target)) : NULL;
  lt_tensor *zero = gkeep(p, lt_tensor_wrapped_number(lt_scalar_float(0)));
  lt_tensor *sw;
  if (weight) {
    int64_t flat = -1;
    lt_tensor *tf = q->ts ? gkeep(p, lt_reshape(q->ts, lt_intlist_make(&flat, 1))) : NULL;
    lt_tensor *wf = tf ? gkeep(p, lt_index_select(weight, 0, tf)) : NULL;
    sw = wf ? gkeep(p, lt_reshape(wf, lt_intlist_make(target->sizes, target->ndim))) : NULL;
  } else {
    lt_tensor *o = gkeep(p, lt_tensor_wrapped_number(lt_scalar_float(1)));
    sw = o && q->ign ? gkeep(p, lt_where(q->ign, zero, o)) : NULL;   /* 1 where kept */
    if (sw && sw->dtype != self->dtype) sw = gkeep(p, lt_to(sw, (lt_dtype)self->dtype, false));
  }
  q->s = sw && q->ign && zero ? gkeep(p, lt_where(q->ign, zero, sw)) : NULL;
  return q->s ? 0 : -1;
}

/* the per-sample factor c_n with out = sum_n c_n x[n, t_n] (reduced), times grad:
** -grad s_n, divided by W for "mean" */
static lt_tensor *nll_coef(gpool *p, lt_tensor *grad, nll_parts *q, const char *reduction) {
  lt_tensor *c = gkeep(p, lt_neg(q->s));
  if (reduction && strcmp(reduction, "mean") == 0) {
    lt_tensor *W = c ? gkeep(p, lt_sum(q->s, lt_intlist_none(), false, -1)) : NULL;
    c = c && W ? gkeep(p, lt_div(c, W, NULL)) : NULL;
  }
  return gmul(p, c, grad);
}

lt_tensor *lt_grad_nll_loss_self(lt_tensor *grad, lt_tensor *self, const lt_input_meta *self_meta,
                                 lt_tensor *target, lt_tensor *weight, const char *reduction,
                                 int64_t ignore_index, lt_tensor *total_weight) {
  if (!lt_grad_enabled())
    return lt_nll_loss_backward(grad, self, target, weight, reduction, ignore_index, total_weight);
  gpool P = {0}, *p = &P;
  nll_parts q;
  lt_tensor *r = NULL;
  if (nll_split(p, self, target, weight, ignore_index, &q) == 0) {
    lt_tensor *c = nll_coef(p, grad, &q, reduction);
    lt_tensor *cu = c ? gkeep(p, lt_unsqueeze(c, q.cdim)) : NULL;
    lt_tensor *tu = gkeep(p, lt_unsqueeze(q.ts, q.cdim));
    lt_tensor *z = gkeep(p, lt_zeros_from_meta(self_meta));
    r = cu && tu && z ? gkeep(p, lt_scatter(z, q.cdim, tu, cu)) : NULL;
  }
  return gfinish(p, r);
}

/* d out / d weight[k] = sum over the samples of class k of -grad x[n, k] (sum, none), and
** for "mean" (-grad / W) (x[n, k] + out), the divisor W depending on the weights too:
** index_add of the per-sample terms */
lt_tensor *lt_grad_nll_loss_weight(lt_tensor *grad, lt_tensor *self, lt_tensor *target, lt_tensor *weight,
                                   const lt_input_meta *weight_meta, const char *reduction, int64_t ignore_index) {
  gpool P = {0}, *p = &P;
  nll_parts q;
  lt_tensor *r = NULL;
  if (nll_split(p, self, target, weight, ignore_index, &q) == 0) {
    lt_tensor *tu = gkeep(p, lt_unsqueeze(q.ts, q.cdim));
    lt_tensor *xg = tu ? gkeep(p, lt_gather(self, q.cdim, tu)) : NULL;
    lt_tensor *xs = xg ? gkeep(p, lt_squeeze(xg, q.cdim)) : NULL;   /* x[n, t_n] */
    lt_tensor *v = xs;
    if (reduction && strcmp(reduction, "mean") == 0) {
      /* x[n, t_n] + out, out = -sum(s x) / W */
      lt_tensor *W = gkeep(p, lt_sum(q.s, lt_intlist_none(), false, -1));
      lt_tensor *sx = gsum(p, gmul(p, q.s, xs), NULL, -1);
      lt_tensor *mo = sx && W ? gkeep(p, lt_div(sx, W, NULL)) : NULL;   /* -out */
      v = gsub(p, xs, mo);
      v = v && W ? gkeep(p, lt_div(v, W, NULL)) : NULL;
    }
    lt_tensor *nv = v ? gkeep(p, lt_neg(v)) : NULL;
    lt_tensor *zero = gkeep(p, lt_tensor_wrapped_number(lt_scalar_float(0)));
    lt_tensor *kv = nv && zero ? gkeep(p, lt_where(q.ign, zero, nv)) : NULL;
    lt_tensor *src = gmul(p, kv, grad);
    int64_t flat = -1;
    lt_tensor *sf = src ? gkeep(p, lt_reshape(src, lt_intlist_make(&flat, 1))) : NULL;
    lt_tensor *tf = gkeep(p, lt_reshape(q.ts, lt_intlist_make(&flat, 1)));
    lt_tensor *z = gkeep(p, lt_zeros_from_meta(weight_meta));
    r = sf && tf && z ? gkeep(p, lt_index_add(z, 0, tf, sf, lt_scalar_int(1))) : NULL;
  }
  return gfinish(p, r);
}

/* ---- derivatives of the normalisation *_backward ops themselves, for direct calls:
** every tensor argument is independent here (mean and 1/std too). `which` names the
** argument; meta is its metadata. Per-slice / per-channel results are summed over the
** reduced dims and reshaped to the argument's shape. */
static lt_tensor *gsum_to(gpool *p, lt_tensor *a, const int64_t *dims, int nd, const lt_input_meta *meta) {
  lt_tensor *s = a ? gkeep(p, lt_sum(a, lt_intlist_make(dims, nd), true, -1)) : NULL;
  return s ? gkeep(p, lt_reshape(s, lt_intlist_make(meta->sizes, meta->ndim))) : NULL;
}

/* gi = r (u - mean(u) - xh mean(u xh)), u = go w, xh = (x - m) r, means over dims:
** its vector-Jacobian product with gg for argument which (0 go, 1 x, 2 m, 3 r, 4 w) */
static lt_tensor *norm_backward_vjp(gpool *p, lt_tensor *gg, int which, lt_tensor *go, lt_tensor *x, lt_tensor *m,
                                    lt_tensor *r, lt_tensor *w, const int64_t *dims, int nd,
                                    const lt_input_meta *meta) {
  lt_tensor *u = w ? gmul(p, go, w) : go;
  lt_tensor *xc = gsub(p, x, m), *xh = gmul(p, xc, r);
  lt_tensor *ggr = gmul(p, gg, r);
  lt_tensor *c = gmean(p, gmul(p, ggr, xh), dims, nd);           /* mean(gg r xh) */
  if (which == 0 || which == 4) {
    /* gi is linear in u and of the same form in gg */
    lt_tensor *du = gsub(p, gsub(p, ggr, gmean(p, ggr, dims, nd)), gmul(p, xh, c));
    return which == 0 ? (w ? gmul(p, du, w) : du) : gmul(p, du, go);   /* w: the caller reduces */
  }
  lt_tensor *B = gmean(p, gmul(p, u, xh), dims, nd);
  lt_tensor *dxh = gkeep(p, lt_neg(gkeep(p, lt_add(gmul(p, ggr, B), gmul(p, u, c), lt_scalar_int(1)))));
  if (which == 1) return gmul(p, dxh, r);
  if (which == 2) return gsum_to(p, gkeep(p, lt_neg(gmul(p, dxh, r))), dims, nd, meta);
  /* r: directly (gi / r) and through xh */
  lt_tensor *inner = gsub(p, gsub(p, u, gmean(p, u, dims, nd)), gmul(p, xh, B));
  lt_tensor *dr = gkeep(p, lt_add(gmul(p, gg, inner), gmul(p, dxh, xc), lt_scalar_int(1)));
  return gsum_to(p, dr, dims, nd, meta);
}

lt_tensor *lt_grad_layer_norm_backward(lt_tensor *grad, int which, lt_tensor *grad_output, lt_tensor *input,
                                       lt_tensor *mean, lt_tensor *rstd, lt_tensor *weight,
                                       lt_intlist normalized_shape, const lt_input_meta *meta) {
  gpool P = {0}, *p = &P;
  int64_t dims[LT_MAX_DIMS];
  int nd = trailing_dims(input, normalized_shape, dims);
  return gfinish(p, norm_backward_vjp(p, grad, which, grad_output, input, mean, rstd, weight, dims, nd, meta));
}

lt_tensor *lt_grad_batch_norm_backward(lt_tensor *grad, int which, lt_tensor *grad_output, lt_tensor *input,
                                       lt_tensor *weight, lt_tensor *save_mean, lt_tensor *save_invstd,
                                       bool training, const lt_input_meta *meta) {
  gpool P = {0}, *p = &P;
  int64_t dims[LT_MAX_DIMS];
  int nd = channel_dims(input, dims);
  lt_tensor *w = weight ? per_channel(p, weight, input) : NULL;
  lt_tensor *m = per_channel(p, save_mean, input), *is = per_channel(p, save_invstd, input);
  lt_tensor *r = NULL;
  if (training) {
    /* which: 0 grad_output, 1 input, 2 weight, 3 save_mean, 4 save_invstd */
    static const int as_norm[] = { 0, 1, 4, 2, 3 };
    r = norm_backward_vjp(p, grad, as_norm[which], grad_output, input, m, is, w, dims, nd, meta);
    if (r && which == 2) r = gsum(p, r, dims, nd);
  } else {
    /* eval: gi = go w is, the mean unused */
    lt_tensor *wis = w ? gmul(p, w, is) : is;
    if (which == 0) r = gmul(p, grad, wis);
    else if (which == 1 || which == 3) r = gkeep(p, lt_zeros_from_meta(meta));
    else if (which == 2) r = gsum(p, gmul(p, gmul(p, grad, grad_output), is), dims, nd);
    else r = w ? gsum(p, gmul(p, gmul(p, grad, grad_output), w), dims, nd) : gsum(p, gmul(p, grad, grad_output), dims, nd);
  }
  return gfinish(p, r);
}

/* sum(go (x - m) r) over the dims not normalised: which 0 go, 1 x, 2 m, 3 r; gg has the
** weight's shape and broadcasts */
static lt_tensor *norm_weight_vjp(gpool *p, lt_tensor *gg, int which, lt_tensor *go, lt_tensor *x, lt_tensor *m,
                                  lt_tensor *r, const int64_t *dims, int nd, const lt_input_meta *meta) {
  lt_tensor *xc = gsub(p, x, m);
  if (which == 0) return gmul(p, gg, gmul(p, xc, r));
  lt_tensor *ggo = gmul(p, gg, go);
  if (which == 1) return gmul(p, ggo, r);
  if (which == 2) return gsum_to(p, gkeep(p, lt_neg(gmul(p, ggo, r))), dims, nd, meta);
  return gsum_to(p, gmul(p, ggo, xc), dims, nd, meta);
}

lt_tensor *lt_grad_layer_norm_backward_weight(lt_tensor *grad, int which, lt_tensor *grad_output, lt_tensor *input,
                                              lt_tensor *mean, lt_tensor *rstd, lt_intlist normalized_shape,
                                              const lt_input_meta *meta) {
  gpool P = {0}, *p = &P;
  int64_t dims[LT_MAX_DIMS];
  int nd = trailing_dims(input, normalized_shape, dims);
  return gfinish(p, norm_weight_vjp(p, grad, which, grad_output, input, mean, rstd, dims, nd, meta));
}

lt_tensor *lt_grad_batch_norm_backward_weight(lt_tensor *grad, int which, lt_tensor *grad_output, lt_tensor *input,
                                              lt_tensor *save_mean, lt_tensor *save_invstd,
                                              const lt_input_meta *meta) {
  gpool P = {0}, *p = &P;
  int64_t dims[LT_MAX_DIMS];
  int nd = channel_dims(input, dims);
  lt_tensor *gg = per_channel(p, grad, input);
  lt_tensor *m = per_channel(p, save_mean, input), *is = per_channel(p, save_invstd, input);
  return gfinish(p, norm_weight_vjp(p, gg, which, grad_output, input, m, is, dims, nd, meta));
}

/* batch_norm_backward_bias sums grad_output per channel: its derivative spreads grad back */
lt_tensor *lt_grad_batch_norm_backward_bias(lt_tensor *grad, const lt_input_meta *grad_output_meta) {
  gpool P = {0}, *p = &P;
  lt_tensor *z = gkeep(p, lt_zeros_from_meta(grad_output_meta));
  lt_tensor *gc = z ? per_channel(p, grad, z) : NULL;
  return gfinish(p, z && gc ? gkeep(p, lt_add(z, gc, lt_scalar_int(1))) : NULL);
}

/* nll_loss_backward called directly: its derivatives with respect to weight and
** total_weight are not written; an error rather than a silently missing gradient */
lt_tensor *lt_grad_nll_loss_backward_weight(lt_tensor *grad) {
  (void)grad;
  return lt_error_null("nll_loss_backward: the derivative with respect to 'weight' is not implemented");
}

lt_tensor *lt_grad_nll_loss_backward_total_weight(lt_tensor *grad) {
  (void)grad;
  return lt_error_null("nll_loss_backward: the derivative with respect to 'total_weight' is not implemented");
}
