/*
** nn_loss.c — the losses written with other ops (mse, l1, smooth_l1, huber,
** binary cross entropy with and without logits, kl_div, cross_entropy and
** nll_loss's front): their derivatives, w.r.t. input and target, and double
** backward come from the ops they call. nll_loss's own kernels are the
** backend's (src/cpu/nn_loss.c). Class indices in targets are 1-based.
*/
#include <math.h>
#include <string.h>
#include "lt_ops.h"
#include "core/tpool.h"
#include "meta/loss.h"

typedef lt_tpool pool;
typedef lt_nll_geom nll_geom;
#define TRY(var, e) do { if (!((var) = keep(&P, (e)))) goto out; } while (0)

static const lt_scalar ONE = { LT_SCALAR_INT, { 1 } };

/* shapes and dtypes (lt_meta_nll_loss), then the class indices; fills the (N, C, S) view of self */
static int nll_check(const char *op, lt_tensor *self, lt_tensor *target, lt_tensor *weight, int64_t ignore_index,
                     nll_geom *g) {
  if (lt_meta_nll_loss(op, self, target, weight, g) < 0) return -1;
  return lt_meta_nll_targets(op, target, g->C, ignore_index);
}

lt_tensor *lt_nll_loss_impl(lt_tensor *self, lt_tensor *target, lt_tensor *weight, const char *reduction,
                            int64_t ignore_index) {
  lt_tensor *o, *tw;
  if (lt_nll_loss_forward(self, target, weight, reduction, ignore_index, &o, &tw) < 0) return NULL;
  lt_tensor_release(tw);
  return o;
}

static lt_tensor *keep(pool *p, lt_tensor *t) { return lt_tpool_keep(p, t); }

static lt_tensor *ret(pool *p, lt_tensor *r) { return lt_tpool_give(p, r); }

static lt_tensor *num(double v) { return lt_tensor_wrapped_number(lt_scalar_float(v)); }

static lt_tensor *reduce(lt_tensor *l, int red) {
  lt_intlist all = lt_intlist_none();
  switch (red) {
    case LT_LOSS_MEAN: return lt_mean(l, all, false, -1);
    case LT_LOSS_SUM: return lt_sum(l, all, false, -1);
    case LT_LOSS_BATCHMEAN: {
      lt_tensor *s = lt_sum(l, all, false, -1), *d, *r;
      if (!s) return NULL;
      d = num(l->ndim ? (double)l->sizes[0] : 1.0);
      r = d ? lt_div(s, d, NULL) : NULL;
      lt_tensor_release(s), lt_tensor_release(d);
      return r;
    }
    default: lt_tensor_retain(l); return l;
  }
}

lt_tensor *lt_mse_loss_impl(lt_tensor *self, lt_tensor *target, const char *reduction) {
  int red = lt_meta_loss_reduction("mse_loss", reduction, false);
  if (red < 0 || lt_meta_check_float("mse_loss", "input", self) < 0) return NULL;
  pool P = {0};
  lt_tensor *d, *sq, *r = NULL;
  TRY(d, lt_sub(self, target, ONE));
  TRY(sq, lt_mul(d, d));
  TRY(r, reduce(sq, red));
out:
  return ret(&P, r);
}

lt_tensor *lt_l1_loss_impl(lt_tensor *self, lt_tensor *target, const char *reduction) {
  int red = lt_meta_loss_reduction("l1_loss", reduction, false);
  if (red < 0 || lt_meta_check_float("l1_loss", "input", self) < 0) return NULL;
  pool P = {0};
  lt_tensor *d, *a, *r = NULL;
  TRY(d, lt_sub(self, target, ONE));
  TRY(a, lt_abs(d));
  TRY(r, reduce(a, red));
out:
  return ret(&P, r);
}

/* |d| < k ? 0.5 d^2 * qs : |d| * ls - lc (smooth_l1: qs = 1/beta, ls = 1, lc = beta/2;
** huber: qs = 1, ls = delta, lc = delta^2/2) */
static lt_tensor *piecewise(const char *op, lt_tensor *self, lt_tensor *target, const char *reduction, double k,
                            double qs, double ls, double lc) {
  int red = lt_meta_loss_reduction(op, reduction, false);
  if (red < 0 || lt_meta_check_float(op, "input", self) < 0) return NULL;
  pool P = {0};
  lt_tensor *d, *a, *sq, *q, *lin, *cond, *kk, *l, *r = NULL;
  TRY(d, lt_sub(self, target, ONE));
  TRY(a, lt_abs(d));
  if (k <= 0) {   /* beta = 0: plain L1 */
    TRY(r, reduce(a, red));
    goto out;
  }
  TRY(sq, lt_mul(d, d));
  TRY(kk, num(0.5 * qs));
  TRY(q, lt_mul(sq, kk));
  TRY(kk, num(ls));
  TRY(lin, lt_mul(a, kk));
  TRY(kk, num(lc));
  TRY(lin, lt_sub(lin, kk, ONE));
  TRY(kk, num(k));
  TRY(cond, lt_lt(a, kk));
  TRY(l, lt_where(cond, q, lin));
  TRY(r, reduce(l, red));
out:
  return ret(&P, r);
}

lt_tensor *lt_smooth_l1_loss_impl(lt_tensor *self, lt_tensor *target, const char *reduction, double beta) {
  if (beta < 0) return lt_error_null("smooth_l1_loss: argument 'beta' must be non-negative, got %g", beta);
  return piecewise("smooth_l1_loss", self, target, reduction, beta, beta > 0 ? 1 / beta : 0, 1, beta / 2);
}

lt_tensor *lt_huber_loss_impl(lt_tensor *self, lt_tensor *target, const char *reduction, double delta) {
  if (!(delta > 0)) return lt_error_null("huber_loss: argument 'delta' must be positive, got %g", delta);
  return piecewise("huber_loss", self, target, reduction, delta, 1, delta, delta * delta / 2);
}

lt_tensor *lt_binary_cross_entropy_impl(lt_tensor *self, lt_tensor *target, lt_tensor *weight,
                                        const char *reduction) {
  const char *op = "binary_cross_entropy";
  int red = lt_meta_loss_reduction(op, reduction, false);
  if (red < 0 || lt_meta_check_float(op, "input", self) < 0 || lt_meta_check_float(op, "target", target) < 0 ||
      lt_meta_loss_same_shape(op, self, target) < 0)
    return NULL;
  pool P = {0};
  lt_tensor *lo, *hi, *bad, *lx, *om, *l1x, *lim, *a, *b, *omt, *s, *l, *r = NULL;
  /* PyTorch refuses inputs outside [0, 1] */
  TRY(lo, num(0)); TRY(hi, num(1));
  TRY(a, lt_lt(self, lo)); TRY(b, lt_gt(self, hi));
  TRY(bad, lt_logical_or(a, b));
  TRY(a, lt_any(bad, lt_intlist_none(), false));
  if (lt_tensor_get_int64(a, 0)) { lt_error("%s: argument 'input' must hold values between 0 and 1", op); goto out; }
  /* logs clamped at -100 so that 0 * log(0) stays finite, as PyTorch does */
  TRY(lim, num(-100));
  TRY(lx, lt_log(self));
  TRY(lx, lt_clamp_min(lx, lim));
  TRY(om, lt_sub(hi, self, ONE));
  TRY(l1x, lt_log(om));
  TRY(l1x, lt_clamp_min(l1x, lim));
  TRY(a, lt_mul(target, lx));
  TRY(omt, lt_sub(hi, target, ONE));
  TRY(b, lt_mul(omt, l1x));
  TRY(s, lt_add(a, b, ONE));
  TRY(l, lt_neg(s));
  if (weight) TRY(l, lt_mul(l, weight));
  TRY(r, reduce(l, red));
out:
  return ret(&P, r);
}

lt_tensor *lt_binary_cross_entropy_with_logits_impl(lt_tensor *self, lt_tensor *target, lt_tensor *weight,
                                                    lt_tensor *pos_weight, const char *reduction) {
  const char *op = "binary_cross_entropy_with_logits";
  int red = lt_meta_loss_reduction(op, reduction, false);
  if (red < 0 || lt_meta_check_float(op, "input", self) < 0 || lt_meta_check_float(op, "target", target) < 0 ||
      lt_meta_loss_same_shape(op, self, target) < 0)
    return NULL;
  pool P = {0};
  lt_tensor *one, *nx, *sp, *omt, *a, *lw, *l, *r = NULL;
  /* (1 - t) x + lw log(1 + exp(-x)), lw = 1 + (pos_weight - 1) t; softplus keeps it stable */
  TRY(one, num(1));
  TRY(nx, lt_neg(self));
  TRY(sp, lt_softplus(nx, lt_scalar_int(1), lt_scalar_int(20)));
  if (pos_weight) {
    TRY(a, lt_sub(pos_weight, one, ONE));
    TRY(a, lt_mul(a, target));
    TRY(lw, lt_add(a, one, ONE));
    TRY(sp, lt_mul(sp, lw));
  }
  TRY(omt, lt_sub(one, target, ONE));
  TRY(a, lt_mul(omt, self));
  TRY(l, lt_add(a, sp, ONE));
  if (weight) TRY(l, lt_mul(l, weight));
  TRY(r, reduce(l, red));
out:
  return ret(&P, r);
}

lt_tensor *lt_kl_div_impl(lt_tensor *self, lt_tensor *target, const char *reduction, bool log_target) {
  const char *op = "kl_div";
  int red = lt_meta_loss_reduction(op, reduction, true);
  if (red < 0 || lt_meta_check_float(op, "input", self) < 0 || lt_meta_check_float(op, "target", target) < 0)
    return NULL;
  pool P = {0};
  lt_tensor *a, *b, *l, *zero, *pos, *safe, *lt_, *r = NULL;
  if (log_target) {   /* exp(t) (t - x) */
    TRY(a, lt_exp(target));
    TRY(b, lt_sub(target, self, ONE));
    TRY(l, lt_mul(a, b));
  } else {            /* t (log t - x), 0 where t = 0 (log of 1 there keeps the gradient finite) */
    TRY(zero, num(0));
    TRY(pos, lt_gt(target, zero));
    TRY(a, num(1));
    TRY(safe, lt_where(pos, target, a));
    TRY(lt_, lt_log(safe));
    TRY(b, lt_sub(lt_, self, ONE));
    TRY(l, lt_mul(target, b));
  }
  TRY(r, reduce(l, red));
out:
  return ret(&P, r);
}

/* cross_entropy = nll_loss(log_softmax(x, 2)); label smoothing mixes in the
** mean of -log p over the classes; floating targets of the input's shape are
** class probabilities */
lt_tensor *lt_cross_entropy_impl(lt_tensor *self, lt_tensor *target, lt_tensor *weight, const char *reduction,
                                 int64_t ignore_index, double label_smoothing) {
  const char *op = "cross_entropy";
  char a_[96], b_[96];
  int red = lt_meta_loss_reduction(op, reduction, false);
  if (red < 0 || lt_meta_check_float(op, "input", self) < 0) return NULL;
  if (!(label_smoothing >= 0 && label_smoothing <= 1))
    return lt_error_null("%s: argument 'label_smoothing' must be in [0, 1], got %g", op, label_smoothing);
  if (self->ndim == 0) return lt_error_null("%s: argument 'input' must have at least 1 dim, got a 0-d tensor", op);
  int cdim = self->ndim == 1 ? 0 : 1;
  int64_t C = self->sizes[cdim];
  pool P = {0};
  lt_tensor *ls, *r = NULL, *k, *wv, *s, *l, *nll, *tw;
  int64_t one_c[LT_MAX_DIMS];
  for (int d = 0; d < self->ndim; d++) one_c[d] = d == cdim ? C : 1;
  lt_intlist wshape = lt_intlist_make(one_c, self->ndim);
  int64_t cd = cdim;
  lt_intlist cdl = lt_intlist_make(&cd, 1);
  if (weight && (weight->ndim != 1 || weight->sizes[0] != C)) {
    lt_error("%s: argument 'weight' must be 1-D with one value per class (%lld), got shape %s", op, (long long)C,
             lt_shape_str(weight->ndim, weight->sizes, a_, sizeof a_));
    goto out;
  }
  if (lt_dtype_is_float(lt_tensor_dtype(target))) {
    /* class probabilities */
    if (!lt_tensor_same_shape(self, target)) {
      lt_error("%s: argument 'target' holds probabilities of shape %s, expected the input's shape %s", op,
               lt_shape_str(target->ndim, target->sizes, a_, sizeof a_),
               lt_shape_str(self->ndim, self->sizes, b_, sizeof b_));
      goto out;
    }
    lt_tensor *t = target;
    if (label_smoothing > 0) {
      TRY(k, num(1 - label_smoothing));
      TRY(t, lt_mul(target, k));
      TRY(k, num(label_smoothing / (double)C));
      TRY(t, lt_add(t, k, ONE));
    }
    TRY(ls, lt_log_softmax(self, cdim, -1));
    TRY(l, lt_mul(ls, t));
    if (weight) {
      TRY(wv, lt_view(weight, wshape));
      TRY(l, lt_mul(l, wv));
    }
    TRY(s, lt_sum(l, cdl, false, -1));
    TRY(s, lt_neg(s));
    if (red == LT_LOSS_MEAN) {   /* over the batch elements, weights or not */
      TRY(s, lt_sum(s, lt_intlist_none(), false, -1));
      TRY(k, num((double)(self->numel / (C ? C : 1))));
      TRY(r, lt_div(s, k, NULL));
    } else {
      TRY(r, reduce(s, red));
    }
    goto out;
  }
  nll_geom g;
  if (nll_check(op, self, target, weight, ignore_index, &g) < 0) goto out;
  TRY(ls, lt_log_softmax(self, cdim, -1));
  if (lt_nll_loss_forward(ls, target, weight, reduction, ignore_index, &nll, &tw) < 0) goto out;
  keep(&P, nll), keep(&P, tw);
  if (label_smoothing <= 0) { r = nll; goto out; }
  {
    lt_tensor *sm, *ign, *tt, *zero;
    l = ls;
    if (weight) {
      TRY(wv, lt_view(weight, wshape));
      TRY(l, lt_mul(ls, wv));
    }
    TRY(sm, lt_sum(l, cdl, false, -1));
    TRY(sm, lt_neg(sm));
    TRY(tt, lt_tensor_wrapped_number(lt_scalar_int(ignore_index)));
    TRY(ign, lt_eq(target, tt));
    TRY(sm, lt_masked_fill(sm, ign, lt_scalar_int(0)));
    if (red == LT_LOSS_MEAN) {   /* normalised like nll_loss: by the total weight of the targets kept */
      lt_tensor *den = tw;
      if (weight && weight->requires_grad) {
        /* tw carries no gradient back to the weights: sum weight[target] over the kept
        ** targets with ops instead (an ignored target reads class 1, then counts 0) */
        lt_tensor *tsafe, *tflat, *wt, *iflat;
        TRY(tsafe, lt_masked_fill(target, ign, lt_scalar_int(1)));
        TRY(tflat, lt_flatten(tsafe, 0, -1));
        TRY(wt, lt_index_select(weight, 0, tflat));
        TRY(iflat, lt_flatten(ign, 0, -1));
        TRY(wt, lt_masked_fill(wt, iflat, lt_scalar_int(0)));
        TRY(den, lt_sum(wt, lt_intlist_none(), false, -1));
      }
      TRY(sm, lt_sum(sm, lt_intlist_none(), false, -1));
      TRY(sm, lt_div(sm, den, NULL));
    } else {
      TRY(sm, reduce(sm, red));
    }
    (void)zero;
    TRY(k, num(label_smoothing / (double)C));
    TRY(sm, lt_mul(sm, k));
    TRY(k, num(1 - label_smoothing));
    TRY(nll, lt_mul(nll, k));
    TRY(r, lt_add(nll, sm, ONE));
  }
out:
  return ret(&P, r);
}
