/*
** formulas_fft.c — derivative helpers of src/ops/fft.lua, written with the primitives'
** entry points so that create_graph records the backward transforms too (and they are
** differentiable again: each adjoint's adjoint is the forward op).
*/
#include "formulas_fft.h"
#include "lt_ops.h"

lt_tensor *lt_grad_fft_c2c(lt_tensor *grad, lt_intlist dim, int64_t normalization, bool forward) {
  return lt__fft_c2c(grad, dim, normalization, !forward);
}

lt_tensor *lt_grad_fft_r2c(lt_tensor *grad, const lt_input_meta *self_meta, lt_intlist dim,
                           int64_t normalization, bool forward) {
  int last = lt_wrap_dim("_fft_r2c", dim.v[dim.n - 1], self_meta->ndim);
  if (last < 0) return NULL;
  int64_t n = self_meta->sizes[last];
  lt_tensor *h = lt__fft_halfweight(grad, last, n, 0.5);
  lt_tensor *r = h ? lt__fft_c2r(h, dim, normalization, n, !forward) : NULL;
  lt_tensor_release(h);
  return r;
}

lt_tensor *lt_grad_fft_c2r(lt_tensor *grad, lt_intlist dim, int64_t normalization,
                           int64_t last_dim_size, bool forward) {
  int last = lt_wrap_dim("_fft_c2r", dim.v[dim.n - 1], grad->ndim);
  if (last < 0) return NULL;
  lt_tensor *r = lt__fft_r2c(grad, dim, normalization, !forward);
  lt_tensor *h = r ? lt__fft_halfweight(r, last, last_dim_size, 2.0) : NULL;
  lt_tensor_release(r);
  return h;
}
