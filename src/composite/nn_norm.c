/*
** nn_norm.c — batch_norm, layer_norm and group_norm as their users call them:
** argument handling and the training/eval choice over the backend kernels of
** the forward and backward passes.
*/
#include <math.h>
#include <string.h>
#include "lt_ops.h"
#include "meta/norm.h"

lt_tensor *lt_batch_norm_impl(lt_tensor *input, lt_tensor *weight, lt_tensor *bias, lt_tensor *running_mean,
                              lt_tensor *running_var, bool training, double momentum, double eps) {
  lt_tensor *o, *m, *s;
  if (lt_native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, &o, &m, &s) < 0)
    return NULL;
  lt_tensor_release(m), lt_tensor_release(s);
  return o;
}

lt_tensor *lt_layer_norm_impl(lt_tensor *input, lt_intlist normalized_shape, lt_tensor *weight, lt_tensor *bias,
                              double eps) {
  lt_tensor *o, *m, *s;
  if (lt_native_layer_norm(input, normalized_shape, weight, bias, eps, &o, &m, &s) < 0) return NULL;
  lt_tensor_release(m), lt_tensor_release(s);
  return o;
}

/* group_norm: layer_norm over (N, G, C/G * spatial), then the per-channel affine */
lt_tensor *lt_group_norm_impl(lt_tensor *input, int64_t num_groups, lt_tensor *weight, lt_tensor *bias, double eps) {
  const char *op = "group_norm";
  if (lt_meta_group_norm(op, input, num_groups, weight, bias) < 0) return NULL;
  int64_t N = input->sizes[0], C = input->sizes[1];
  int64_t K = N ? input->numel / (N * num_groups) : 0;
  int64_t g3[3] = { N, num_groups, K }, wsh[LT_MAX_DIMS], orig[LT_MAX_DIMS];
  for (int d = 0; d < input->ndim; d++) wsh[d] = d == 1 ? C : 1, orig[d] = input->sizes[d];
  lt_tensor *x3 = NULL, *o3 = NULL, *m = NULL, *s = NULL, *o = NULL, *t = NULL, *r = NULL;
  if (!(x3 = lt_reshape(input, lt_intlist_make(g3, 3)))) goto done;
  if (lt_native_layer_norm(x3, lt_intlist_make(&K, 1), NULL, NULL, eps, &o3, &m, &s) < 0) goto done;
  if (!(o = lt_reshape(o3, lt_intlist_make(orig, input->ndim)))) goto done;
  if (weight) {
    if (!(t = lt_reshape(weight, lt_intlist_make(wsh, input->ndim)))) goto done;
    lt_tensor *p = lt_mul(o, t);
    lt_tensor_release(t), t = NULL;
    if (!p) goto done;
    lt_tensor_release(o), o = p;
  }
  if (bias) {
    if (!(t = lt_reshape(bias, lt_intlist_make(wsh, input->ndim)))) goto done;
    lt_tensor *p = lt_add(o, t, lt_scalar_int(1));
    lt_tensor_release(t), t = NULL;
    if (!p) goto done;
    lt_tensor_release(o), o = p;
  }
  r = o, o = NULL;
done:
  lt_tensor_release(x3), lt_tensor_release(o3), lt_tensor_release(m), lt_tensor_release(s), lt_tensor_release(o);
  return r;
}
