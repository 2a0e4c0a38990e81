/*
** conv3d.c — the geometry of 3-D convolutions (conv.h): what conv3d and its two
** backward products check and compute before any data is touched, on every
** backend (the CPU's kernels, src/cpu/nn_conv3d.c; the generic ones of the other
** backends, src/composite/nn_conv3d.c).
*/
#include <string.h>
#include "meta/conv.h"

static int same_dtype(const char *op, const char *arg, const lt_tensor *t, const lt_tensor *ref) {
  if (t->dtype != ref->dtype)
    return lt_error("%s: argument '%s' (%s) must have the dtype of input (%s)", op, arg,
                    lt_dtype_name(lt_tensor_dtype(t)), lt_dtype_name(lt_tensor_dtype(ref)));
  return 0;
}

static int params(const char *op, lt_conv3_geom *g, lt_intlist stride, lt_intlist padding, lt_intlist dilation,
                  int64_t groups) {
  if (lt_meta_int_tuple(op, "stride", stride, 3, 1, NULL, g->s) ||
      lt_meta_int_tuple(op, "padding", padding, 3, 0, NULL, g->p) ||
      lt_meta_int_tuple(op, "dilation", dilation, 3, 1, NULL, g->d))
    return -1;
  if (groups < 1) return lt_error("%s: argument 'groups' must be positive, got %lld", op, (long long)groups);
  g->g = groups;
  return 0;
}

/* input shape in (C, D, H, W or N, C, D, H, W) against weight shape w (O, C/g, kD, kH, kW);
** wname names the weight in errors */
static int shape(const char *op, lt_conv3_geom *g, int in_ndim, const int64_t *in, int w_ndim, const int64_t *w,
                 const char *wname) {
  if (in_ndim != 4 && in_ndim != 5)
    return lt_error("%s: argument 'input' must be 4-D (C, D, H, W) or 5-D (N, C, D, H, W), got %d-D", op, in_ndim);
  if (w_ndim != 5)
    return lt_error("%s: argument '%s' must be 5-D (O, C/groups, kD, kH, kW), got %d-D", op, wname, w_ndim);
  g->batched = in_ndim == 5;
  int b = g->batched ? 1 : 0;
  g->N = g->batched ? in[0] : 1;
  g->C = in[b];
  g->O = w[0];
  if (w[1] * g->g != g->C)
    return lt_error("%s: argument '%s' takes %lld input channels (%lld per group x %lld groups), input has %lld", op,
                    wname, (long long)(w[1] * g->g), (long long)w[1], (long long)g->g, (long long)g->C);
  if (g->O % g->g != 0)
    return lt_error("%s: argument '%s' has %lld output channels, not divisible by groups (%lld)", op, wname,
                    (long long)g->O, (long long)g->g);
  for (int i = 0; i < 3; i++) {
    g->in[i] = in[b + 1 + i];
    g->k[i] = w[2 + i];
    if (g->k[i] < 1) return lt_error("%s: argument '%s' has an empty kernel", op, wname);
  }
  for (int i = 0; i < 3; i++) {
    g->out[i] = lt_meta_conv_out_size(g->in[i], g->k[i], g->s[i], g->p[i], g->d[i]);
    if (g->out[i] < 1)
      return lt_error("%s: argument 'input' (%lld x %lld x %lld, padded by %lld x %lld x %lld) is smaller than the "
                      "dilated kernel (%lld x %lld x %lld)", op, (long long)g->in[0], (long long)g->in[1],
                      (long long)g->in[2], (long long)g->p[0], (long long)g->p[1], (long long)g->p[2],
                      (long long)(g->d[0] * (g->k[0] - 1) + 1), (long long)(g->d[1] * (g->k[1] - 1) + 1),
                      (long long)(g->d[2] * (g->k[2] - 1) + 1));
  }
  g->cg = g->C / g->g; g->og = g->O / g->g;
  g->T = g->k[0] * g->k[1] * g->k[2];
  g->K = g->cg * g->T;
  g->L = g->out[0] * g->out[1] * g->out[2];
  return 0;
}

int lt_meta_conv3d_sizes(const lt_conv3_geom *g, int64_t ch, const int64_t *sp, int64_t *sizes) {
  int k = 0;
  if (g->batched) sizes[k++] = g->N;
  sizes[k++] = ch;
  for (int i = 0; i < 3; i++) sizes[k++] = sp[i];
  return k;
}

int lt_meta_conv3d(const char *op, const lt_tensor *input, const lt_tensor *weight, const lt_tensor *bias,
                   lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups, lt_conv3_geom *g) {
  if (params(op, g, stride, padding, dilation, groups)) return -1;
  if (input->ndim != 4 && input->ndim != 5)
    return lt_error("%s: argument 'input' must be 4-D (C, D, H, W) or 5-D (N, C, D, H, W), got %d-D", op, input->ndim);
  if (lt_meta_check_float(op, "input", input)) return -1;
  if (weight->ndim != 5)
    return lt_error("%s: argument 'weight' must be 5-D (O, C/groups, kD, kH, kW), got %d-D", op, weight->ndim);
  if (same_dtype(op, "weight", weight, input)) return -1;
  if (shape(op, g, input->ndim, input->sizes, weight->ndim, weight->sizes, "weight")) return -1;
  g->dtype = lt_tensor_dtype(input);
  return lt_meta_conv_bias(op, bias, input, g->O);
}

/* grad_output must have the shape of the conv's output */
static int check_grad_output(const char *op, const lt_conv3_geom *g, const lt_tensor *gy) {
  int64_t want[5];
  int nd = lt_meta_conv3d_sizes(g, g->O, g->out, want);
  if (!(gy->ndim == nd && memcmp(gy->sizes, want, sizeof(int64_t) * (size_t)nd) == 0)) {
    char a[128], b[128];
    return lt_error("%s: argument 'grad_output' has shape %s, expected %s", op,
                    lt_shape_str(gy->ndim, gy->sizes, a, sizeof a), lt_shape_str(nd, want, b, sizeof b));
  }
  return 0;
}

static int check_size_list(const char *op, const char *arg, lt_intlist l, int n0, int n1) {
  if (l.n != n0 && l.n != n1) {
    if (n0 == n1) return lt_error("%s: argument '%s' must have %d entries, got %d", op, arg, n0, l.n);
    return lt_error("%s: argument '%s' must have %d or %d entries, got %d", op, arg, n0, n1, l.n);
  }
  for (int i = 0; i < l.n; i++)
    if (l.v[i] < 0) return lt_error("%s: argument '%s' has a negative entry", op, arg);
  return 0;
}

int lt_meta_conv3d_backward_input(const char *op, const lt_tensor *grad_output, const lt_tensor *weight,
                                  lt_intlist input_size, lt_intlist stride, lt_intlist padding,
                                  lt_intlist dilation, int64_t groups, lt_conv3_geom *g) {
  if (lt_meta_check_float(op, "grad_output", grad_output)) return -1;
  if (weight->dtype != grad_output->dtype)
    return lt_error("%s: argument 'weight' (%s) must have the dtype of grad_output (%s)", op,
                    lt_dtype_name(lt_tensor_dtype(weight)), lt_dtype_name(lt_tensor_dtype(grad_output)));
  if (params(op, g, stride, padding, dilation, groups) || check_size_list(op, "input_size", input_size, 4, 5)) return -1;
  if (shape(op, g, input_size.n, input_size.v, weight->ndim, weight->sizes, "weight")) return -1;
  g->dtype = lt_tensor_dtype(weight);
  return check_grad_output(op, g, grad_output);
}

int lt_meta_conv3d_backward_weight(const char *op, const lt_tensor *grad_output, const lt_tensor *input,
                                   lt_intlist weight_size, lt_intlist stride, lt_intlist padding,
                                   lt_intlist dilation, int64_t groups, lt_conv3_geom *g) {
  if (lt_meta_check_float(op, "grad_output", grad_output)) return -1;
  if (input->dtype != grad_output->dtype)
    return lt_error("%s: argument 'input' (%s) must have the dtype of grad_output (%s)", op,
                    lt_dtype_name(lt_tensor_dtype(input)), lt_dtype_name(lt_tensor_dtype(grad_output)));
  if (params(op, g, stride, padding, dilation, groups) || check_size_list(op, "weight_size", weight_size, 5, 5)) return -1;
  if (shape(op, g, input->ndim, input->sizes, 5, weight_size.v, "weight_size")) return -1;
  g->dtype = lt_tensor_dtype(input);
  return check_grad_output(op, g, grad_output);
}
