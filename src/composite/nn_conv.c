/*
** nn_conv.c — the convolution, pooling and resampling ops written with other
** ops' entry points: conv1d and padding="same"/strings for conv2d, the 1-D
** pools over their 2-D kernels, max_pool2d without indices, and
** pixel_(un)shuffle as reshape/permute. Any backend runs them; autograd goes
** through the ops they call.
*/
#include <stdio.h>
#include <string.h>
#include "lt_ops.h"
#include "meta/conv.h"
#include "meta/pool.h"
#include "meta/resample.h"

/* conv2d with padding "valid" or "same" (stride 1; an odd total pads one more on the right, as PyTorch) */
lt_tensor *lt_conv2d_padstr_impl(lt_tensor *input, lt_tensor *weight, lt_tensor *bias, lt_intlist stride,
                                 const char *padding, lt_intlist dilation, int64_t groups) {
  const char *op = "conv2d";
  int64_t zero = 0, total[2];
  int mode = lt_meta_conv_padding_mode(op, padding);
  if (mode < 0) return NULL;
  if (mode == 0) return lt_conv2d(input, weight, bias, stride, lt_intlist_make(&zero, 1), dilation, groups);
  if (lt_meta_conv_same_padding(op, weight, stride, dilation, groups, total)) return NULL;
  int64_t th = total[0], tw = total[1];
  int64_t p[2] = {th / 2, tw / 2};
  if (th % 2 == 0 && tw % 2 == 0)
    return lt_conv2d(input, weight, bias, stride, lt_intlist_make(p, 2), dilation, groups);
  /* asymmetric: pad explicitly, the extra element on the right/bottom */
  int64_t pl[4] = {tw / 2, tw - tw / 2, th / 2, th - th / 2};
  lt_tensor *xp = lt_pad(input, lt_intlist_make(pl, 4), "constant", 0.0);
  if (!xp) return NULL;
  lt_tensor *y = lt_conv2d(xp, weight, bias, stride, lt_intlist_make(&zero, 1), dilation, groups);
  lt_tensor_release(xp);
  return y;
}

/* input (C, L) / (N, C, L) and weight (O, C/g, K) as 2-D with a height of 1 */
static int conv1d_views(const char *op, lt_tensor *input, lt_tensor *weight, lt_tensor **xi, lt_tensor **wi) {
  if (lt_meta_conv1d_check(op, input, weight)) return -1;
  if (!(*xi = lt_unsqueeze(input, input->ndim - 1))) return -1;
  if (!(*wi = lt_unsqueeze(weight, 2))) { lt_tensor_release(*xi); return -1; }
  return 0;
}

/* a conv2d error raised under conv1d names conv1d */
/* an inner op's error under the name of the op the user called ("conv2d: ..." -> "conv1d: ...") */
static void rename_error(const char *from, const char *to) {
  const char *m = lt_error_message();
  size_t n = strlen(from);
  if (m && strncmp(m, from, n) == 0 && m[n] == ':') {
    char msg[512];
    snprintf(msg, sizeof msg, "%s%s", to, m + n);
    lt_error("%s", msg);
  }
}

static lt_tensor *renamed(lt_tensor *y) {
  if (!y) rename_error("conv2d", "conv1d");
  return y;
}

static lt_tensor *squeeze_h(lt_tensor *y) {
  if (!y) return NULL;
  lt_tensor *r = lt_squeeze(y, y->ndim - 2);
  lt_tensor_release(y);
  return r;
}

lt_tensor *lt_conv1d_impl(lt_tensor *input, lt_tensor *weight, lt_tensor *bias, lt_intlist stride,
                          lt_intlist padding, lt_intlist dilation, int64_t groups) {
  const char *op = "conv1d";
  int64_t s[2] = {0, 0}, p[2] = {0, 0}, d[2] = {0, 0};
  if (lt_meta_widen_1d(op, "stride", stride, 1, false, s) || lt_meta_widen_1d(op, "padding", padding, 0, false, p) ||
      lt_meta_widen_1d(op, "dilation", dilation, 1, false, d)) return NULL;
  lt_tensor *xi, *wi;
  if (conv1d_views(op, input, weight, &xi, &wi)) return NULL;
  lt_conv_geom q;
  lt_tensor *y = NULL;
  if (lt_meta_conv_params(op, &q, lt_intlist_make(s, 2), lt_intlist_make(p, 2), lt_intlist_make(d, 2), groups) == 0 &&
      lt_meta_conv_shape(op, &q, xi->ndim, xi->sizes, wi->ndim, wi->sizes, "weight") == 0 &&
      lt_meta_conv_bias(op, bias, input, q.O) == 0)
    y = squeeze_h(lt_conv2d(xi, wi, bias, lt_intlist_make(s, 2), lt_intlist_make(p, 2), lt_intlist_make(d, 2), groups));
  lt_tensor_release(xi);
  lt_tensor_release(wi);
  return renamed(y);
}

lt_tensor *lt_conv1d_padstr_impl(lt_tensor *input, lt_tensor *weight, lt_tensor *bias, lt_intlist stride,
                                 const char *padding, lt_intlist dilation, int64_t groups) {
  const char *op = "conv1d";
  int64_t s[2], d[2];
  if (lt_meta_widen_1d(op, "stride", stride, 1, false, s) || lt_meta_widen_1d(op, "dilation", dilation, 1, false, d))
    return NULL;
  lt_tensor *xi, *wi;
  if (conv1d_views(op, input, weight, &xi, &wi)) return NULL;
  lt_tensor *y = squeeze_h(lt_conv2d_padstr(xi, wi, bias, lt_intlist_make(s, 2), padding, lt_intlist_make(d, 2), groups));
  lt_tensor_release(xi);
  lt_tensor_release(wi);
  return renamed(y);
}

static lt_tensor *unsq(const char *op, lt_tensor *self) {
  if (lt_meta_check_1d_input(op, self->ndim)) return NULL;
  return lt_unsqueeze(self, self->ndim - 1);
}

static lt_tensor *sq(lt_tensor *y) {
  if (!y) return NULL;
  lt_tensor *r = lt_squeeze(y, y->ndim - 2);
  lt_tensor_release(y);
  return r;
}

/* errors of the 2-D op carry its name; the user called the 1-D one */

int lt_max_pool1d_with_indices_impl(lt_tensor *self, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                                    lt_intlist dilation, bool ceil_mode, lt_tensor **values, lt_tensor **indices) {
  const char *op = "max_pool1d";
  int64_t k[2] = {0, 0}, s[2] = {0, 0}, p[2] = {0, 0}, d[2] = {1, 1};
  *values = *indices = NULL;
  if (lt_meta_widen_1d(op, "kernel_size", kernel_size, 1, false, k) || lt_meta_widen_1d(op, "stride", stride, 1, true, s) ||
      lt_meta_widen_1d(op, "padding", padding, 0, false, p) || lt_meta_widen_1d(op, "dilation", dilation, 1, false, d))
    return -1;
  lt_tensor *x = unsq(op, self);
  if (!x) return -1;
  lt_tensor *v, *i;
  int rc = lt_max_pool2d_with_indices(x, lt_intlist_make(k, 2), stride.n > 0 ? lt_intlist_make(s, 2) : stride,
                                      lt_intlist_make(p, 2), lt_intlist_make(d, 2), ceil_mode, &v, &i);
  lt_tensor_release(x);
  if (rc < 0) { rename_error("max_pool2d", op); return -1; }
  *values = sq(v);
  *indices = sq(i);
  if (!*values || !*indices) {
    lt_tensor_release(*values); lt_tensor_release(*indices);
    *values = *indices = NULL;
    return -1;
  }
  return 0;
}

lt_tensor *lt_max_pool1d_impl(lt_tensor *self, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                              lt_intlist dilation, bool ceil_mode) {
  lt_tensor *v, *i;
  if (lt_max_pool1d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode, &v, &i) < 0) return NULL;
  lt_tensor_release(i);
  return v;
}

lt_tensor *lt_max_pool2d_impl(lt_tensor *self, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                              lt_intlist dilation, bool ceil_mode) {
  lt_tensor *v, *i;
  if (lt_max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode, &v, &i) < 0) return NULL;
  lt_tensor_release(i);
  return v;
}

lt_tensor *lt_avg_pool1d_impl(lt_tensor *self, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                              bool ceil_mode, bool count_include_pad) {
  const char *op = "avg_pool1d";
  int64_t k[2] = {0, 0}, s[2] = {0, 0}, p[2] = {0, 0};
  if (lt_meta_widen_1d(op, "kernel_size", kernel_size, 1, false, k) || lt_meta_widen_1d(op, "stride", stride, 1, true, s) ||
      lt_meta_widen_1d(op, "padding", padding, 0, false, p))
    return NULL;
  lt_tensor *x = unsq(op, self);
  if (!x) return NULL;
  lt_tensor *y = lt_avg_pool2d(x, lt_intlist_make(k, 2), stride.n > 0 ? lt_intlist_make(s, 2) : stride,
                               lt_intlist_make(p, 2), ceil_mode, count_include_pad, LT_NOINT);
  lt_tensor_release(x);
  if (!y) rename_error("avg_pool2d", op);
  return sq(y);
}

static lt_tensor *reshape_permute_reshape(lt_tensor *self, int n1, const int64_t *s1, const int64_t *perm,
                                          int n2, const int64_t *s2) {
  lt_tensor *a = lt_reshape(self, lt_intlist_make(s1, n1));
  if (!a) return NULL;
  lt_tensor *b = lt_permute(a, lt_intlist_make(perm, n1));
  lt_tensor_release(a);
  if (!b) return NULL;
  lt_tensor *c = lt_reshape(b, lt_intlist_make(s2, n2));
  lt_tensor_release(b);
  return c;
}

static lt_tensor *shuffle(const char *op, lt_tensor *self, int64_t r, bool un) {
  int64_t s1[LT_MAX_DIMS], s2[LT_MAX_DIMS], perm[LT_MAX_DIMS];
  int n1, n2;
  if (lt_meta_pixel_shuffle(op, self->ndim, self->sizes, r, un, &n1, s1, perm, &n2, s2)) return NULL;
  return reshape_permute_reshape(self, n1, s1, perm, n2, s2);
}

lt_tensor *lt_pixel_shuffle_impl(lt_tensor *self, int64_t upscale_factor) {
  return shuffle("pixel_shuffle", self, upscale_factor, false);
}

lt_tensor *lt_pixel_unshuffle_impl(lt_tensor *self, int64_t downscale_factor) {
  return shuffle("pixel_unshuffle", self, downscale_factor, true);
}
