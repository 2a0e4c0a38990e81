/*
** conv.c — convolution geometry (conv.h): what conv2d, its backward products,
** conv_transpose2d and the padding/1-D composites check and compute before any
** data is touched.
*/
#include <string.h>
#include "meta/conv.h"

static int same_dtype(const char *op, const char *arg, const lt_tensor *t, const lt_tensor *ref) {
  if (t->dtype != ref->dtype)
    return lt_error("%s: argument '%s' has dtype %s but input has dtype %s", op, arg,
                    lt_dtype_name(lt_tensor_dtype(t)), lt_dtype_name(lt_tensor_dtype(ref)));
  return 0;
}

int64_t lt_meta_conv_out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  int64_t span = in + 2 * p - d * (k - 1) - 1;
  return span < 0 ? -1 : span / s + 1;
}

int lt_meta_conv_params(const char *op, lt_conv_geom *g, lt_intlist stride, lt_intlist padding,
                        lt_intlist dilation, int64_t groups) {
  int64_t s[2] = {0, 0}, p[2] = {0, 0}, d[2] = {0, 0};
  if (lt_meta_int_tuple(op, "stride", stride, 2, 1, NULL, s) ||
      lt_meta_int_tuple(op, "padding", padding, 2, 0, NULL, p) ||
      lt_meta_int_tuple(op, "dilation", dilation, 2, 1, NULL, d)) return -1;
  if (groups < 1) return lt_error("%s: argument 'groups' must be positive, got %lld", op, (long long)groups);
  g->sh = s[0]; g->sw = s[1]; g->ph = p[0]; g->pw = p[1]; g->dh = d[0]; g->dw = d[1]; g->g = groups;
  return 0;
}

int lt_meta_conv_shape(const char *op, lt_conv_geom *q, int in_ndim, const int64_t *in, int w_ndim,
                       const int64_t *w, const char *wname) {
  if (in_ndim != 3 && in_ndim != 4)
    return lt_error("%s: argument 'input' must be 3-D (C, H, W) or 4-D (N, C, H, W), got %d-D", op, in_ndim);
  if (w_ndim != 4) {
    char buf[128];
    return lt_error("%s: argument '%s' must be 4-D ([out_channels, in_channels/groups, kH, kW]), got %s", op,
                    wname, lt_shape_str(w_ndim, w, buf, sizeof buf));
  }
  q->batched = in_ndim == 4;
  int b = q->batched ? 1 : 0;
  q->N = q->batched ? in[0] : 1;
  q->C = in[b]; q->H = in[b + 1]; q->W = in[b + 2];
  q->O = w[0]; q->kh = w[2]; q->kw = w[3];
  if (q->O % q->g)
    return lt_error("%s: argument '%s' has %lld output channels, not divisible by groups=%lld", op, wname,
                    (long long)q->O, (long long)q->g);
  if (q->C != w[1] * q->g)
    return lt_error("%s: argument 'input' has %lld channels but %s expects %lld (in_channels/groups=%lld x groups=%lld)",
                    op, (long long)q->C, wname, (long long)(w[1] * q->g), (long long)w[1], (long long)q->g);
  if (q->kh < 1 || q->kw < 1) return lt_error("%s: argument '%s' has an empty kernel", op, wname);
  q->OH = lt_meta_conv_out_size(q->H, q->kh, q->sh, q->ph, q->dh);
  q->OW = lt_meta_conv_out_size(q->W, q->kw, q->sw, q->pw, q->dw);
  if (q->OH < 1 || q->OW < 1)
    return lt_error("%s: argument 'input' (padded %lld x %lld) is smaller than the dilated kernel (%lld x %lld)", op,
                    (long long)(q->H + 2 * q->ph), (long long)(q->W + 2 * q->pw),
                    (long long)(q->dh * (q->kh - 1) + 1), (long long)(q->dw * (q->kw - 1) + 1));
  q->cg = q->C / q->g; q->og = q->O / q->g;
  q->K = q->cg * q->kh * q->kw; q->L = q->OH * q->OW;
  q->Hp = q->H + 2 * q->ph; q->Wp = q->W + 2 * q->pw;
  return 0;
}

int lt_meta_conv_bias(const char *op, const lt_tensor *bias, const lt_tensor *input, int64_t ch) {
  if (!bias) return 0;
  if (same_dtype(op, "bias", bias, input)) return -1;
  if (bias->ndim != 1 || bias->sizes[0] != ch) {
    char buf[128];
    return lt_error("%s: argument 'bias' must be 1-D of size %lld (out_channels), got %s", op, (long long)ch,
                    lt_shape_str(bias->ndim, bias->sizes, buf, sizeof buf));
  }
  return 0;
}

int lt_meta_conv2d(const char *op, const lt_tensor *input, const lt_tensor *weight, const lt_tensor *bias,
                   lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups, lt_conv_geom *g) {
  if (lt_meta_check_float(op, "input", input) || same_dtype(op, "weight", weight, input)) return -1;
  if (lt_meta_conv_params(op, g, stride, padding, dilation, groups)) return -1;
  if (lt_meta_conv_shape(op, g, input->ndim, input->sizes, weight->ndim, weight->sizes, "weight")) return -1;
  g->dtype = lt_tensor_dtype(weight);
  return lt_meta_conv_bias(op, bias, input, g->O);
}

int lt_meta_conv_sizes(const lt_conv_geom *g, int64_t ch, int64_t h, int64_t w, int64_t *sizes) {
  int k = 0;
  if (g->batched) sizes[k++] = g->N;
  sizes[k++] = ch; sizes[k++] = h; sizes[k++] = w;
  return k;
}

/* grad_output must have the shape of the conv's output */
static int check_grad_output(const char *op, const lt_conv_geom *q, const lt_tensor *gy) {
  int64_t want[4];
  int nd = lt_meta_conv_sizes(q, q->O, q->OH, q->OW, want);
  if (!(gy->ndim == nd && memcmp(gy->sizes, want, sizeof(int64_t) * (size_t)nd) == 0)) {
    char a[128], b[128];
    return lt_error("%s: argument 'grad_output' has shape %s, expected %s", op,
                    lt_shape_str(gy->ndim, gy->sizes, a, sizeof a), lt_shape_str(nd, want, b, sizeof b));
  }
  return 0;
}

int lt_meta_conv2d_backward_input(const char *op, const lt_tensor *grad_output, const lt_tensor *weight,
                                  lt_intlist input_size, lt_intlist stride, lt_intlist padding,
                                  lt_intlist dilation, int64_t groups, lt_conv_geom *g) {
  if (lt_meta_check_float(op, "grad_output", grad_output) || same_dtype(op, "weight", weight, grad_output))
    return -1;
  if (lt_meta_conv_params(op, g, stride, padding, dilation, groups)) return -1;
  if (lt_meta_conv_shape(op, g, input_size.n, input_size.v, weight->ndim, weight->sizes, "weight")) return -1;
  g->dtype = lt_tensor_dtype(weight);
  return check_grad_output(op, g, grad_output);
}

int lt_meta_conv2d_backward_weight(const char *op, const lt_tensor *grad_output, const lt_tensor *input,
                                   lt_intlist weight_size, lt_intlist stride, lt_intlist padding,
                                   lt_intlist dilation, int64_t groups, lt_conv_geom *g) {
  if (lt_meta_check_float(op, "grad_output", grad_output) || same_dtype(op, "input", input, grad_output))
    return -1;
  if (lt_meta_conv_params(op, g, stride, padding, dilation, groups)) return -1;
  if (weight_size.n != 4) return lt_error("%s: argument 'weight_size' must have 4 entries", op);
  for (int i = 0; i < 4; i++)
    if (weight_size.v[i] < 0) return lt_error("%s: argument 'weight_size' has a negative entry", op);
  if (lt_meta_conv_shape(op, g, input->ndim, input->sizes, 4, weight_size.v, "weight_size")) return -1;
  g->dtype = lt_tensor_dtype(input);
  return check_grad_output(op, g, grad_output);
}

int lt_meta_conv_transpose2d(const char *op, const lt_tensor *input, const lt_tensor *weight,
                             const lt_tensor *bias, lt_intlist stride, lt_intlist padding,
                             lt_intlist output_padding, int64_t groups, lt_intlist dilation, lt_conv_geom *q) {
  if (lt_meta_check_float(op, "input", input) || same_dtype(op, "weight", weight, input)) return -1;
  if (lt_meta_conv_params(op, q, stride, padding, dilation, groups)) return -1;
  int64_t op2[2] = {0, 0};
  if (lt_meta_int_tuple(op, "output_padding", output_padding, 2, 0, NULL, op2)) return -1;
  if (input->ndim != 3 && input->ndim != 4)
    return lt_error("%s: argument 'input' must be 3-D (C, H, W) or 4-D (N, C, H, W), got %d-D", op, input->ndim);
  if (weight->ndim != 4) {
    char buf[128];
    return lt_error("%s: argument 'weight' must be 4-D ([in_channels, out_channels/groups, kH, kW]), got %s", op,
                    lt_shape_str(weight->ndim, weight->sizes, buf, sizeof buf));
  }
  if (op2[0] >= (q->sh > q->dh ? q->sh : q->dh) || op2[1] >= (q->sw > q->dw ? q->sw : q->dw))
    return lt_error("%s: argument 'output_padding' must be smaller than stride or dilation", op);
  int b = input->ndim == 4;
  int64_t cin = input->sizes[b], h = input->sizes[b + 1], w = input->sizes[b + 2];
  if (cin != weight->sizes[0])
    return lt_error("%s: argument 'input' has %lld channels but weight expects %lld (weight is [in_channels, out_channels/groups, kH, kW])",
                    op, (long long)cin, (long long)weight->sizes[0]);
  int64_t oh = (h - 1) * q->sh - 2 * q->ph + q->dh * (weight->sizes[2] - 1) + op2[0] + 1;
  int64_t ow = (w - 1) * q->sw - 2 * q->pw + q->dw * (weight->sizes[3] - 1) + op2[1] + 1;
  if (oh < 1 || ow < 1)
    return lt_error("%s: the output size (%lld x %lld) is not positive", op, (long long)oh, (long long)ow);
  int64_t s[4];
  int k = 0;
  if (b) s[k++] = input->sizes[0];
  s[k++] = weight->sizes[1] * groups; s[k++] = oh; s[k++] = ow;
  /* the conv from the output (s) back to input */
  if (lt_meta_conv_shape(op, q, input->ndim, s, weight->ndim, weight->sizes, "weight")) return -1;
  if (q->OH != h || q->OW != w) return lt_error("%s: inconsistent output size", op);
  q->dtype = lt_tensor_dtype(weight);
  return lt_meta_conv_bias(op, bias, input, q->C);
}

int lt_meta_conv_padding_mode(const char *op, const char *padding) {
  if (strcmp(padding, "valid") == 0) return 0;
  if (strcmp(padding, "same") == 0) return 1;
  return lt_error("%s: argument 'padding' must be \"same\", \"valid\" or integers, got \"%s\"", op, padding);
}

int lt_meta_conv_same_padding(const char *op, const lt_tensor *weight, lt_intlist stride, lt_intlist dilation,
                              int64_t groups, int64_t total[2]) {
  lt_conv_geom q;
  int64_t zero = 0;
  if (lt_meta_conv_params(op, &q, stride, lt_intlist_make(&zero, 1), dilation, groups)) return -1;
  if (q.sh != 1 || q.sw != 1)
    return lt_error("%s: argument 'padding' \"same\" is not supported for strided convolutions", op);
  if (weight->ndim != 4) {
    char buf[128];
    return lt_error("%s: argument 'weight' must be 4-D ([out_channels, in_channels/groups, kH, kW]), got %s",
                    op, lt_shape_str(weight->ndim, weight->sizes, buf, sizeof buf));
  }
  total[0] = q.dh * (weight->sizes[2] - 1);
  total[1] = q.dw * (weight->sizes[3] - 1);
  return 0;
}

int lt_meta_conv1d_check(const char *op, const lt_tensor *input, const lt_tensor *weight) {
  char buf[128];
  if (lt_meta_check_1d_input(op, input->ndim)) return -1;
  if (weight->ndim != 3)
    return lt_error("%s: argument 'weight' must be 3-D ([out_channels, in_channels/groups, kW]), got %s", op,
                    lt_shape_str(weight->ndim, weight->sizes, buf, sizeof buf));
  if (lt_meta_check_float(op, "input", input) || same_dtype(op, "weight", weight, input)) return -1;
  return 0;
}
