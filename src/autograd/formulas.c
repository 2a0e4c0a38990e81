/*
** formulas.c — helpers for derivative formulas that are more than one call,
** and reducing a gradient to the shape and dtype of the input it is for.
*/
#include <string.h>
#include "autograd.h"
#include "lt_ops.h"

/* Broadcasting made the output bigger than the input: sum the gradient over
** the dims the input was stretched along, then match its dtype. */
lt_tensor *lt_grad_to_meta(lt_tensor *g, const lt_input_meta *meta) {
  bool same = g->ndim == meta->ndim;
  for (int i = 0; same && i < g->ndim; i++) same = g->sizes[i] == meta->sizes[i];
  if (same && g->dtype == meta->dtype) return g;
  if (!same) {
    int lead = g->ndim - meta->ndim;
    if (lead < 0) {
      lt_tensor_release(g);
      return lt_error_null("autograd: gradient has fewer dims than its input");
    }
    lt_tensor *r = lt_tensor_new_zeros((lt_dtype)g->dtype, lt_tensor_device(g), meta->ndim, meta->sizes);
    if (!r) { lt_tensor_release(g); return NULL; }
    /* accumulate every element of g into the input position it came from */
    int64_t idx[LT_MAX_DIMS] = {0};
    size_t es = lt_dtype_size((lt_dtype)g->dtype);
    char *gd = g->storage->data, *rd = r->storage->data;
    for (int64_t k = 0; k < g->numel; k++) {
      int64_t go = g->offset, ro = 0;
      for (int d = 0; d < g->ndim; d++) {
        go += idx[d] * g->strides[d];
        int md = d - lead;
        if (md >= 0 && meta->sizes[md] != 1) ro += idx[d] * r->strides[md];
      }
      double v = lt_dtype_load_double((lt_dtype)g->dtype, gd + go * (int64_t)es);
      double acc = lt_dtype_load_double((lt_dtype)g->dtype, rd + ro * (int64_t)es);
      lt_dtype_store_double((lt_dtype)g->dtype, rd + ro * (int64_t)es, acc + v);
      for (int d = g->ndim - 1; d >= 0; d--) {
        if (++idx[d] < g->sizes[d]) break;
        idx[d] = 0;
      }
    }
    lt_tensor_release(g);
    g = r;
  }
  if (g->dtype != meta->dtype) {
    lt_tensor *c = lt_tensor_clone_as(g, (lt_dtype)meta->dtype);
    lt_tensor_release(g);
    g = c;
  }
  return g;
}

/* d(self + alpha * other)/d other = alpha * grad */
lt_tensor *lt_grad_scale(lt_tensor *grad, lt_scalar alpha) {
  if (alpha.type != LT_SCALAR_FLOAT && alpha.v.i == 1) { lt_tensor_retain(grad); return grad; }
  lt_tensor *a = lt_tensor_wrapped_number(alpha);
  if (!a) return NULL;
  lt_tensor *r = lt_mul(grad, a);
  lt_tensor_release(a);
  return r;
}

lt_tensor *lt_grad_identity(lt_tensor *grad) {
  lt_tensor_retain(grad);
  return grad;
}
