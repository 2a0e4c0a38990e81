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
    /* through the sum op, so create_graph records it too */
    int64_t dims[LT_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < lead; d++) dims[n++] = d;
    if (n > 0) {
      lt_tensor *r = lt_sum(g, lt_intlist_make(dims, n), false, -1);
      lt_tensor_release(g);
      if (!r) return NULL;
      g = r;
    }
    n = 0;
    for (int d = 0; d < meta->ndim; d++)
      if (meta->sizes[d] == 1 && g->sizes[d] != 1) dims[n++] = d;
    if (n > 0) {
      lt_tensor *r = lt_sum(g, lt_intlist_make(dims, n), true, -1);
      lt_tensor_release(g);
      if (!r) return NULL;
      g = r;
    }
  }
  if (lt_dtype_is_complex((lt_dtype)g->dtype) && !lt_dtype_is_complex((lt_dtype)meta->dtype)) {
    /* a real input of a complex computation gets the real part (PyTorch's rule) */
    lt_tensor *re = lt_real(g);
    lt_tensor *c = re ? lt_contiguous(re) : NULL;
    lt_tensor_release(re);
    lt_tensor_release(g);
    g = c;
    if (!g) return NULL;
  }
  if (g->dtype != meta->dtype) {
    lt_tensor *c = lt_to(g, meta->dtype, false);
    lt_tensor_release(g);
    g = c;
  }
  return g;
}

/* d(self + alpha * other)/d other = alpha * grad */
lt_tensor *lt_grad_scale(lt_tensor *grad, lt_scalar alpha) {
  if (alpha.type != LT_SCALAR_FLOAT && alpha.type != LT_SCALAR_COMPLEX && alpha.v.i == 1) {
    lt_tensor_retain(grad);
    return grad;
  }
  /* a complex alpha: the gradient is grad * conj(alpha) (conjugate Wirtinger) */
  if (alpha.type == LT_SCALAR_COMPLEX) alpha = lt_scalar_complex(alpha.v.f, -alpha.im);
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

lt_tensor *lt_grad_to_dtype(lt_tensor *grad, const lt_input_meta *self_meta) {
  lt_dtype want = (lt_dtype)self_meta->dtype;
  if (grad->dtype == want) return lt_grad_identity(grad);
  if (!lt_dtype_is_complex((lt_dtype)grad->dtype) || lt_dtype_is_complex(want)) return lt__to_copy(grad, want);
  lt_tensor *re = lt_real(grad);
  if (!re || re->dtype == want) return re;
  lt_tensor *r = lt__to_copy(re, want);
  lt_tensor_release(re);
  return r;
}

lt_tensor *lt_grad_to_device(lt_tensor *grad, const lt_input_meta *self_meta) {
  if (lt_device_eq(lt_tensor_device(grad), self_meta->device)) { lt_tensor_retain(grad); return grad; }
  return lt__to_device(grad, self_meta->device, false);
}
