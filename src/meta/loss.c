/*
** loss.c — loss function checks (loss.h).
*/
#include <string.h>
#include "meta/loss.h"
#include "core/backend.h"

int lt_meta_loss_reduction(const char *op, const char *r, bool batchmean) {
  if (!r || !strcmp(r, "mean")) return LT_LOSS_MEAN;
  if (!strcmp(r, "sum")) return LT_LOSS_SUM;
  if (!strcmp(r, "none")) return LT_LOSS_NONE;
  if (batchmean && !strcmp(r, "batchmean")) return LT_LOSS_BATCHMEAN;
  return lt_error("%s: argument 'reduction' must be 'mean', 'sum'%s or 'none', got '%s'", op,
                  batchmean ? ", 'batchmean'" : "", r);
}

int lt_meta_nll_loss(const char *op, const lt_tensor *self, const lt_tensor *target, const lt_tensor *weight,
                     lt_nll_geom *g) {
  char a[96], b[96];
  if (!lt_dtype_is_float(lt_tensor_dtype(self)))
    return lt_error("%s: argument 'input' must be a floating point tensor, got %s", op,
                    lt_dtype_name(lt_tensor_dtype(self)));
  lt_dtype tdt = lt_tensor_dtype(target);
  if (lt_dtype_is_float(tdt) || tdt == LT_BOOL)
    return lt_error("%s: argument 'target' must be an integer tensor of (1-based) class indices, got %s", op,
                    lt_dtype_name(tdt));
  if (self->ndim == 0) return lt_error("%s: argument 'input' must have at least 1 dim, got a 0-d tensor", op);
  if (self->ndim == 1) {
    g->N = 1, g->C = self->sizes[0], g->S = 1;
    if (target->ndim != 0)
      return lt_error("%s: argument 'target' must be 0-d for a 1-D input, got shape %s", op,
                      lt_shape_str(target->ndim, target->sizes, a, sizeof a));
  } else {
    g->N = self->sizes[0], g->C = self->sizes[1], g->S = 1;
    bool ok = target->ndim == self->ndim - 1 && target->sizes[0] == g->N;
    for (int d = 2; d < self->ndim; d++) {
      g->S *= self->sizes[d];
      if (ok && target->sizes[d - 1] != self->sizes[d]) ok = false;
    }
    if (!ok)
      return lt_error("%s: argument 'target' has shape %s, expected %s for input of shape %s (input without dim 2)", op,
                      lt_shape_str(target->ndim, target->sizes, a, sizeof a),
                      "the input's shape", lt_shape_str(self->ndim, self->sizes, b, sizeof b));
  }
  if (weight) {
    if (weight->ndim != 1 || weight->sizes[0] != g->C)
      return lt_error("%s: argument 'weight' must be 1-D with one value per class (%lld), got shape %s", op,
                      (long long)g->C, lt_shape_str(weight->ndim, weight->sizes, a, sizeof a));
    if (!lt_dtype_is_float(lt_tensor_dtype(weight)))
      return lt_error("%s: argument 'weight' must be a floating point tensor, got %s", op,
                      lt_dtype_name(lt_tensor_dtype(weight)));
  }
  return 0;
}

int lt_meta_loss_same_shape(const char *op, const lt_tensor *self, const lt_tensor *target) {
  char a[96], b[96];
  if (!lt_tensor_same_shape(self, target))
    return lt_error("%s: argument 'target' has shape %s, expected the input's shape %s", op,
                    lt_shape_str(target->ndim, target->sizes, a, sizeof a),
                    lt_shape_str(self->ndim, self->sizes, b, sizeof b));
  return 0;
}

int lt_meta_nll_targets(const char *op, const lt_tensor *target, int64_t C, int64_t ignore_index) {
  /* meta targets have no values to check: only their shape is known */
  if (target->numel == 0 || LT_IS_META(target)) return 0;
  lt_tensor *h = lt_tensor_to_host((lt_tensor *)target);
  lt_tensor *t = h ? lt_tensor_to_dtype_contig(h, LT_INT64) : NULL;
  lt_tensor_release(h);
  if (!t) return -1;
  const int64_t *tv = lt_tensor_data(t);
  int rc = 0;
  for (int64_t i = 0; i < t->numel && rc == 0; i++) {
    int64_t c = tv[i];
    if (c != ignore_index && (c < 1 || c > C))
      rc = lt_error("%s: argument 'target' holds class index %lld, out of range [1, %lld] (class indices are 1-based)",
                    op, (long long)c, (long long)C);
  }
  lt_tensor_release(t);
  return rc;
}
