/*
** formulas_complex.c — derivatives of real, imag, the complex views, angle,
** polar and complex. PyTorch's convention: the gradient flowing into an op
** is dL/d(conj out) for a real loss L, so z -> conj-linear maps take the
** conjugate of their derivative, and a real input keeps the real part.
*/
#include "autograd/formulas_complex.h"
#include "lt_ops.h"
#include "core/tpool.h"

typedef lt_tpool pool;
static inline lt_tensor *keep(pool *p, lt_tensor *t) { return lt_tpool_keep(p, t); }

lt_tensor *lt_grad_conj(lt_tensor *t) {
  if (!lt_dtype_is_complex((lt_dtype)t->dtype)) { lt_tensor_retain(t); return t; }
  return lt_conj_physical(t);
}

lt_tensor *lt_grad_mul_conj(lt_tensor *grad, lt_tensor *t) {
  if (!lt_dtype_is_complex((lt_dtype)t->dtype)) return lt_mul(grad, t);
  lt_tensor *c = lt_conj(t);
  lt_tensor *r = c ? lt_mul(grad, c) : NULL;
  lt_tensor_release(c);
  return r;
}

lt_tensor *lt_grad_holomorphic(lt_tensor *grad, lt_tensor *z, lt_tensor *(*d)(lt_tensor *, lt_tensor *)) {
  if (!lt_dtype_is_complex((lt_dtype)z->dtype)) return d(grad, z);
  lt_tensor *gc = lt_grad_conj(grad);
  lt_tensor *r = gc ? d(gc, z) : NULL;
  lt_tensor *out = r ? lt_conj(r) : NULL;
  lt_tensor_release(gc);
  lt_tensor_release(r);
  return out;
}

/* complex(re, im) with either part zeros (NULL) of the other's shape */
static lt_tensor *from_parts(lt_tensor *re, lt_tensor *im) {
  pool p = {0};
  lt_tensor *z = keep(&p, lt_zeros_like(re ? re : im, -1, (lt_device){ -1, 0 }));
  lt_tensor *r = p.failed ? NULL : keep(&p, lt_complex(re ? re : z, im ? im : z));
  return lt_tpool_finish(&p, r);
}

lt_tensor *lt_grad_real(lt_tensor *grad, const lt_input_meta *self_meta) {
  if (!lt_dtype_is_complex((lt_dtype)self_meta->dtype)) return lt_grad_identity(grad);
  return from_parts(grad, NULL);
}

lt_tensor *lt_grad_imag(lt_tensor *grad) { return from_parts(NULL, grad); }

lt_tensor *lt_grad_view_as_real(lt_tensor *grad) {
  pool p = {0};
  lt_tensor *c = keep(&p, lt_contiguous(grad));
  return lt_tpool_finish(&p, p.failed ? NULL : keep(&p, lt_view_as_complex(c)));
}

lt_tensor *lt_grad_real_part(lt_tensor *grad) {
  if (!lt_dtype_is_complex((lt_dtype)grad->dtype)) return lt_grad_identity(grad);
  pool p = {0};
  lt_tensor *r = keep(&p, lt_real(grad));
  return lt_tpool_finish(&p, p.failed ? NULL : keep(&p, lt_contiguous(r)));
}

lt_tensor *lt_grad_imag_part(lt_tensor *grad) {
  if (!lt_dtype_is_complex((lt_dtype)grad->dtype)) return lt_zeros_like(grad, -1, (lt_device){ -1, 0 });
  pool p = {0};
  lt_tensor *r = keep(&p, lt_imag(grad));
  return lt_tpool_finish(&p, p.failed ? NULL : keep(&p, lt_contiguous(r)));
}

/* angle(z) = atan2(y, x): dL/d(conj z) = grad * i z / |z|^2 (0 at z = 0);
** a real self has a piecewise-constant angle, so zero */
lt_tensor *lt_grad_angle(lt_tensor *grad, lt_tensor *self) {
  if (!lt_dtype_is_complex((lt_dtype)self->dtype)) return lt_zeros_like(grad, -1, (lt_device){ -1, 0 });
  pool p = {0};
  lt_tensor *i = keep(&p, lt_complex(keep(&p, lt_zeros_like(grad, -1, (lt_device){ -1, 0 })),
                                     keep(&p, lt_ones_like(grad, -1, (lt_device){ -1, 0 }))));
  lt_tensor *a2 = p.failed ? NULL : keep(&p, lt_square(keep(&p, lt_abs(self))));
  lt_tensor *num = p.failed ? NULL : keep(&p, lt_mul(keep(&p, lt_mul(grad, i)), self));
  lt_tensor *q = p.failed ? NULL : keep(&p, lt_div(num, a2, NULL));
  /* |z| = 0: the quotient is nan there; PyTorch gives 0 */
  lt_tensor *r = NULL;
  if (!p.failed) {
    lt_tensor *bad = keep(&p, lt_isnan(q));
    lt_tensor *zero = keep(&p, lt_zeros_like(q, -1, (lt_device){ -1, 0 }));
    if (!p.failed) r = keep(&p, lt_where(bad, zero, q));
  }
  return lt_tpool_finish(&p, r);
}

/* out = abs * e^{i angle}: the real abs gets real(grad * conj(e^{i angle})) */
lt_tensor *lt_grad_polar_abs(lt_tensor *grad, lt_tensor *angle) {
  pool p = {0};
  lt_tensor *u = keep(&p, lt_polar(keep(&p, lt_ones_like(angle, -1, (lt_device){ -1, 0 })), angle));
  lt_tensor *g = p.failed ? NULL : keep(&p, lt_mul(grad, keep(&p, lt_grad_conj(u))));
  return lt_tpool_finish(&p, p.failed ? NULL : keep(&p, lt_grad_real_part(g)));
}

/* d out / d angle = i out: the real angle gets real(grad * conj(i out)) */
lt_tensor *lt_grad_polar_angle(lt_tensor *grad, lt_tensor *result) {
  pool p = {0};
  int rdt = (int)lt_dtype_to_real((lt_dtype)result->dtype);
  lt_tensor *i = keep(&p, lt_complex(keep(&p, lt_zeros_like(result, rdt, (lt_device){ -1, 0 })),
                                     keep(&p, lt_ones_like(result, rdt, (lt_device){ -1, 0 }))));
  lt_tensor *d = p.failed ? NULL : keep(&p, lt_mul(i, result));
  lt_tensor *g = p.failed ? NULL : keep(&p, lt_mul(grad, keep(&p, lt_grad_conj(d))));
  return lt_tpool_finish(&p, p.failed ? NULL : keep(&p, lt_grad_real_part(g)));
}
