/*
** nn_conv3d.c — the volumetric ops (conv3d, conv_transpose3d, the 3-D pools,
** max_unpool, fractional max pooling, 3-D upsampling) and conv_transpose1d,
** written with other ops' entry points: any backend runs them and autograd
** differentiates them through the ops they call.
**
** The window ops see every window through views: the input padded (pad), then
** unfold along each spatial dim gives (N, C, O1..On, k1..kn) without a copy
** (dilated taps by a second unfold of size 1 that keeps every d-th tap). A
** convolution is then one reshape (the im2col copy) and one matmul per group;
** a pool is a max or sum over the window. The few host-side tables (index
** offsets, divisors, interpolation weights) depend on sizes only, except the
** fractional pool's regions, which come from random_samples' values.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lt_ops.h"
#include "core/backend.h"
#include "core/tpool.h"
#include "meta/meta.h"
#include "meta/conv.h"
#include "composite/conv3d_generic.h"
#include "meta/pool.h"
#include "meta/resample.h"

typedef lt_tpool pool;
#define KEEP(p, x) lt_tpool_keep((p), (x))
static lt_intlist IL(const int64_t *v, int n) { return lt_intlist_make(v, n); }

/* an inner op's error under the name of the op the user called */
static void rename_error(const char *from, const char *to) {
  const char *m = lt_error_message();
  size_t n = strlen(from);
  if (m && strncmp(m, from, n) == 0 && m[n] == ':') {
    char msg[512];
    snprintf(msg, sizeof msg, "%s%s", to, m + n);
    lt_error("%s", msg);
  }
}

/* a host tensor moved to dev (consumes t); the meta device keeps only its shape */
static lt_tensor *to_dev(lt_tensor *t, lt_device dev) {
  if (!t || dev.type == LT_DEV_CPU) return t;
  lt_tensor *r = lt__to_device(t, dev, false);
  lt_tensor_release(t);
  return r;
}

/* int64 table v (sizes) on dev */
static lt_tensor *i64_table(lt_device dev, int ndim, const int64_t *sizes, const int64_t *v) {
  lt_tensor *t = lt_tensor_new(LT_INT64, lt_device_cpu(), ndim, sizes);
  if (!t) return NULL;
  int64_t n = lt_shape_numel(ndim, sizes);
  if (n > 0) memcpy(lt_tensor_data(t), v, sizeof(int64_t) * (size_t)n);
  return to_dev(t, dev);
}

/* double table v (sizes) as dtype dt on dev */
static lt_tensor *f_table(lt_device dev, lt_dtype dt, int ndim, const int64_t *sizes, const double *v) {
  lt_tensor *t = lt_tensor_new(LT_FLOAT64, lt_device_cpu(), ndim, sizes);
  if (!t) return NULL;
  int64_t n = lt_shape_numel(ndim, sizes);
  if (n > 0) memcpy(lt_tensor_data(t), v, sizeof(double) * (size_t)n);
  if (dt != LT_FLOAT64) {
    lt_tensor *c = lt__to_copy(t, dt);
    lt_tensor_release(t);
    t = c;
  }
  return to_dev(t, dev);
}

/* (C, S...) is unbatched for n spatial dims: seen as (1, C, S...) */
static int check_input(const char *op, const lt_tensor *x, int n, const char *shape) {
  if (x->ndim != n + 1 && x->ndim != n + 2)
    return lt_error("%s: argument 'input' must be %d-D (C, %s) or %d-D (N, C, %s), got %d-D", op, n + 1, shape,
                    n + 2, shape, x->ndim);
  return 0;
}

static lt_tensor *batch(pool *p, lt_tensor *x, int n) {
  return x->ndim == n + 1 ? KEEP(p, lt_unsqueeze(x, 0)) : x;
}

static lt_tensor *unbatch(pool *p, lt_tensor *y, bool unb) {
  return (y && unb) ? KEEP(p, lt_squeeze(y, 0)) : y;
}

/* x (N, C, S1..Sn), padded: the windows (N, C, O1..On, k1..kn), taps d apart, windows
** s apart, O of them in each dim (a view) */
static lt_tensor *windows(pool *p, lt_tensor *x, int n, const int64_t *k, const int64_t *s, const int64_t *d,
                          const int64_t *o) {
  lt_tensor *u = x;
  for (int i = 0; i < n && u; i++) {
    u = KEEP(p, lt_unfold(u, 2 + i, (k[i] - 1) * d[i] + 1, s[i]));
    if (u && u->sizes[2 + i] != o[i]) u = KEEP(p, lt_narrow(u, 2 + i, 0, o[i]));
    if (u && d[i] > 1) {
      u = KEEP(p, lt_unfold(u, -1, 1, d[i]));
      if (u) u = KEEP(p, lt_squeeze(u, -1));
    }
  }
  return u;
}

/* pad the last n dims of x: lo[i] before, hi[i] after (negative crops); x itself when all 0 */
static lt_tensor *pad_n(pool *p, lt_tensor *x, int n, const int64_t *lo, const int64_t *hi, double value) {
  int64_t pl[2 * LT_MAX_DIMS];
  bool any = false;
  for (int i = 0; i < n; i++) {
    pl[2 * i] = lo[n - 1 - i];
    pl[2 * i + 1] = hi[n - 1 - i];
    any |= lo[i] != 0 || hi[i] != 0;
  }
  return any ? KEEP(p, lt_pad(x, IL(pl, 2 * n), "constant", value)) : x;
}

static int check_same_dtype(const char *op, const char *arg, const lt_tensor *t, const lt_tensor *input) {
  if (t->dtype != input->dtype)
    return lt_error("%s: argument '%s' (%s) must have the dtype of input (%s)", op, arg, lt_dtype_name((lt_dtype)t->dtype),
                    lt_dtype_name((lt_dtype)input->dtype));
  return 0;
}

/* ---- conv3d: the generic kernels (conv3d_generic.h) ---- */

/* the columns of x (N, C, D, H, W) under q: (N, G, K, L), each group's rows contiguous */
static lt_tensor *columns(pool *p, lt_tensor *x, const lt_conv3_geom *q) {
  x = pad_n(p, x, 3, q->p, q->p, 0.0);
  lt_tensor *u = x ? windows(p, x, 3, q->k, q->s, q->d, q->out) : NULL;
  /* (N, C, kD, kH, kW, oD, oH, oW) */
  int64_t perm[8] = {0, 1, 5, 6, 7, 2, 3, 4}, cs[4] = {q->N, q->g, q->K, q->L};
  lt_tensor *up = u ? KEEP(p, lt_permute(u, IL(perm, 8))) : NULL;
  return up ? KEEP(p, lt_reshape(up, IL(cs, 4))) : NULL;
}

lt_tensor *lt_conv3d_generic(lt_tensor *input, lt_tensor *weight, lt_tensor *bias, lt_intlist stride,
                             lt_intlist padding, lt_intlist dilation, int64_t groups) {
  lt_conv3_geom q;
  if (lt_meta_conv3d("conv3d", input, weight, bias, stride, padding, dilation, groups, &q)) return NULL;
  pool p = {{0}, 0};
  lt_tensor *x = batch(&p, input, 3);
  int64_t ws[3] = {q.g, q.og, q.K}, ys[5] = {q.N, q.O, q.out[0], q.out[1], q.out[2]}, bs[4] = {q.O, 1, 1, 1};
  lt_tensor *cols = x ? columns(&p, x, &q) : NULL;
  lt_tensor *w = cols ? KEEP(&p, lt_reshape(weight, IL(ws, 3))) : NULL;
  lt_tensor *y = w ? KEEP(&p, lt_matmul(w, cols)) : NULL;   /* (N, G, O/G, L) */
  y = y ? KEEP(&p, lt_reshape(y, IL(ys, 5))) : NULL;
  if (y && bias) {
    lt_tensor *b = KEEP(&p, lt_reshape(bias, IL(bs, 4)));
    y = b ? KEEP(&p, lt_add(y, b, lt_scalar_int(1))) : NULL;
  }
  return lt_tpool_finish(&p, unbatch(&p, y, !q.batched));
}

/* the input gradient is conv_transpose3d of the output gradient, with the output
** padding that gives back the input's size */
lt_tensor *lt_conv3d_backward_input_generic(lt_tensor *grad_output, lt_tensor *weight, lt_intlist input_size,
                                            lt_intlist stride, lt_intlist padding, lt_intlist dilation,
                                            int64_t groups) {
  const char *op = "conv3d_backward_input";
  lt_conv3_geom q;
  if (lt_meta_conv3d_backward_input(op, grad_output, weight, input_size, stride, padding, dilation, groups, &q))
    return NULL;
  int64_t opad[3];
  for (int i = 0; i < 3; i++)
    opad[i] = q.in[i] - ((q.out[i] - 1) * q.s[i] - 2 * q.p[i] + q.d[i] * (q.k[i] - 1) + 1);
  lt_tensor *r = lt_conv_transpose3d(grad_output, weight, NULL, IL(q.s, 3), IL(q.p, 3), IL(opad, 3), groups,
                                     IL(q.d, 3));
  if (!r) rename_error("conv_transpose3d", op);
  return r;
}

/* gw = sum over the batch of gy columns(x)^T, one matmul per group */
lt_tensor *lt_conv3d_backward_weight_generic(lt_tensor *grad_output, lt_tensor *input, lt_intlist weight_size,
                                             lt_intlist stride, lt_intlist padding, lt_intlist dilation,
                                             int64_t groups) {
  lt_conv3_geom q;
  if (lt_meta_conv3d_backward_weight("conv3d_backward_weight", grad_output, input, weight_size, stride, padding,
                                     dilation, groups, &q))
    return NULL;
  pool p = {{0}, 0};
  int64_t gs[4] = {q.N, q.g, q.og, q.L}, zero = 0;
  lt_tensor *x = batch(&p, input, 3);
  lt_tensor *cols = x ? columns(&p, x, &q) : NULL;
  lt_tensor *gy = cols ? KEEP(&p, lt_reshape(grad_output, IL(gs, 4))) : NULL;
  lt_tensor *ct = gy ? KEEP(&p, lt_transpose(cols, 2, 3)) : NULL;
  lt_tensor *gw = ct ? KEEP(&p, lt_matmul(gy, ct)) : NULL;   /* (N, G, O/G, K) */
  gw = gw ? KEEP(&p, lt_sum(gw, IL(&zero, 1), false, -1)) : NULL;
  gw = gw ? KEEP(&p, lt_reshape(gw, weight_size)) : NULL;
  return lt_tpool_finish(&p, gw);
}

/* conv3d with padding "valid" (none) or "same" (stride 1; an odd total pads one more
** at the end, as PyTorch) */
lt_tensor *lt_conv3d_padstr_impl(lt_tensor *input, lt_tensor *weight, lt_tensor *bias, lt_intlist stride,
                                 const char *padding, lt_intlist dilation, int64_t groups) {
  const char *op = "conv3d";
  int64_t zero = 0, s[3], d[3], lo[3], hi[3];
  int mode = lt_meta_conv_padding_mode(op, padding);
  if (mode < 0) return NULL;
  if (mode == 0) return lt_conv3d(input, weight, bias, stride, IL(&zero, 1), dilation, groups);
  if (lt_meta_int_tuple(op, "stride", stride, 3, 1, NULL, s) || lt_meta_int_tuple(op, "dilation", dilation, 3, 1, NULL, d))
    return NULL;
  if (weight->ndim != 5)
    return lt_error_null("%s: argument 'weight' must be 5-D (O, C/groups, kD, kH, kW), got %d-D", op, weight->ndim);
  bool even = true;
  for (int i = 0; i < 3; i++) {
    if (s[i] != 1) return lt_error_null("%s: padding='same' is not supported for strided convolutions", op);
    int64_t total = d[i] * (weight->sizes[2 + i] - 1);
    lo[i] = total / 2;
    hi[i] = total - lo[i];
    even &= lo[i] == hi[i];
  }
  if (even) return lt_conv3d(input, weight, bias, stride, IL(lo, 3), dilation, groups);
  if (check_input(op, input, 3, "D, H, W")) return NULL;
  pool p = {{0}, 0};
  lt_tensor *x = pad_n(&p, input, 3, lo, hi, 0.0);
  lt_tensor *y = x ? KEEP(&p, lt_conv3d(x, weight, bias, stride, IL(&zero, 1), dilation, groups)) : NULL;
  return lt_tpool_finish(&p, y);
}

/* ---- transposed convolutions ---- */

/* conv_transpose3d as the convolution it is the gradient of: the input with stride - 1
** zeros between its elements, padded by dilation * (k - 1) - padding (output_padding
** more at the end), convolved with the weight's kernels flipped and its in/out
** channels swapped within each group */
lt_tensor *lt_conv_transpose3d_impl(lt_tensor *input, lt_tensor *weight, lt_tensor *bias, lt_intlist stride,
                                    lt_intlist padding, lt_intlist output_padding, int64_t groups,
                                    lt_intlist dilation) {
  const char *op = "conv_transpose3d";
  int64_t s[3], pd[3], op_[3], d[3], k[3], in[3];
  if (lt_meta_int_tuple(op, "stride", stride, 3, 1, NULL, s) || lt_meta_int_tuple(op, "padding", padding, 3, 0, NULL, pd) ||
      lt_meta_int_tuple(op, "output_padding", output_padding, 3, 0, NULL, op_) ||
      lt_meta_int_tuple(op, "dilation", dilation, 3, 1, NULL, d))
    return NULL;
  if (groups < 1) return lt_error_null("%s: argument 'groups' must be positive, got %lld", op, (long long)groups);
  if (check_input(op, input, 3, "D, H, W") || lt_meta_check_float(op, "input", input)) return NULL;
  if (weight->ndim != 5)
    return lt_error_null("%s: argument 'weight' must be 5-D (C_in, C_out/groups, kD, kH, kW), got %d-D", op, weight->ndim);
  if (check_same_dtype(op, "weight", weight, input)) return NULL;
  int64_t C = input->sizes[input->ndim - 4], og = weight->sizes[1], O = og * groups;
  if (weight->sizes[0] != C)
    return lt_error_null("%s: argument 'weight' takes %lld input channels (its dim 1), input has %lld", op,
                         (long long)weight->sizes[0], (long long)C);
  if (C % groups != 0)
    return lt_error_null("%s: input channels (%lld) must be divisible by groups (%lld)", op, (long long)C, (long long)groups);
  if (lt_meta_conv_bias(op, bias, input, O)) return NULL;
  int64_t lo[3], hi[3];
  for (int i = 0; i < 3; i++) {
    k[i] = weight->sizes[2 + i];
    in[i] = input->sizes[input->ndim - 3 + i];
    if (k[i] < 1) return lt_error_null("%s: argument 'weight' has an empty kernel", op);
    if (op_[i] >= s[i] && op_[i] >= d[i])
      return lt_error_null("%s: argument 'output_padding' (%lld) must be smaller than stride (%lld) or dilation (%lld)", op,
                           (long long)op_[i], (long long)s[i], (long long)d[i]);
    int64_t out = (in[i] - 1) * s[i] - 2 * pd[i] + d[i] * (k[i] - 1) + op_[i] + 1;
    if (out < 1 || in[i] < 1)
      return lt_error_null("%s: the output size %lld of spatial dim %d is not positive (input %lld)", op, (long long)out,
                           i + 1, (long long)in[i]);
    lo[i] = d[i] * (k[i] - 1) - pd[i];
    hi[i] = lo[i] + op_[i] - (s[i] - 1);   /* the zeros after the last element count already */
  }
  pool p = {{0}, 0};
  bool unb = input->ndim == 4;
  lt_tensor *x = batch(&p, input, 3);
  if (x && (s[0] > 1 || s[1] > 1 || s[2] > 1)) {
    int64_t N = x->sizes[0];
    int64_t s8[8] = {N, C, in[0], 1, in[1], 1, in[2], 1}, z[3] = {0, 0, 0}, after[3] = {s[0] - 1, s[1] - 1, s[2] - 1};
    int64_t lo8[6] = {0, 0, 0, 0, 0, 0}, hi8[6] = {0, after[0], 0, after[1], 0, after[2]};
    int64_t s5[5] = {N, C, in[0] * s[0], in[1] * s[1], in[2] * s[2]};
    (void)z;
    lt_tensor *x8 = KEEP(&p, lt_reshape(x, IL(s8, 8)));
    x8 = x8 ? pad_n(&p, x8, 6, lo8, hi8, 0.0) : NULL;
    x = x8 ? KEEP(&p, lt_reshape(x8, IL(s5, 5))) : NULL;
  }
  x = x ? pad_n(&p, x, 3, lo, hi, 0.0) : NULL;
  int64_t w6[6] = {groups, C / groups, og, k[0], k[1], k[2]}, w5[5] = {O, C / groups, k[0], k[1], k[2]};
  int64_t fl[3] = {2, 3, 4}, one[3] = {1, 1, 1}, zero[3] = {0, 0, 0};
  lt_tensor *w = x ? KEEP(&p, lt_reshape(weight, IL(w6, 6))) : NULL;
  w = w ? KEEP(&p, lt_transpose(w, 1, 2)) : NULL;
  w = w ? KEEP(&p, lt_reshape(w, IL(w5, 5))) : NULL;
  w = w ? KEEP(&p, lt_flip(w, IL(fl, 3))) : NULL;
  lt_tensor *y = w ? KEEP(&p, lt_conv3d(x, w, bias, IL(one, 3), IL(zero, 3), IL(d, 3), groups)) : NULL;
  if (!y) rename_error("conv3d", op);
  return lt_tpool_finish(&p, unbatch(&p, y, unb));
}

/* conv_transpose1d over conv_transpose2d with a height of 1 */
lt_tensor *lt_conv_transpose1d_impl(lt_tensor *input, lt_tensor *weight, lt_tensor *bias, lt_intlist stride,
                                    lt_intlist padding, lt_intlist output_padding, int64_t groups,
                                    lt_intlist dilation) {
  const char *op = "conv_transpose1d";
  int64_t s[2] = {0, 0}, pd[2] = {0, 0}, opd[2] = {0, 0}, d[2] = {0, 0};
  if (lt_meta_widen_1d(op, "stride", stride, 1, false, s) || lt_meta_widen_1d(op, "padding", padding, 0, false, pd) ||
      lt_meta_widen_1d(op, "output_padding", output_padding, 0, false, opd) ||
      lt_meta_widen_1d(op, "dilation", dilation, 1, false, d))
    return NULL;
  if (check_input(op, input, 1, "L")) return NULL;
  if (weight->ndim != 3)
    return lt_error_null("%s: argument 'weight' must be 3-D (C_in, C_out/groups, kW), got %d-D", op, weight->ndim);
  pool p = {{0}, 0};
  lt_tensor *x = KEEP(&p, lt_unsqueeze(input, input->ndim - 1));
  lt_tensor *w = x ? KEEP(&p, lt_unsqueeze(weight, 2)) : NULL;
  lt_tensor *y = w ? KEEP(&p, lt_conv_transpose2d(x, w, bias, IL(s, 2), IL(pd, 2), IL(opd, 2), groups, IL(d, 2))) : NULL;
  if (!y) rename_error("conv_transpose2d", op);
  y = y ? KEEP(&p, lt_squeeze(y, y->ndim - 2)) : NULL;
  return lt_tpool_finish(&p, y);
}

/* ---- 3-D pools ---- */

typedef struct pool3 {
  int64_t k[3], s[3], p[3], d[3], in[3], o[3];
  int64_t hi[3];   /* right padding: p, or more so that a ceil_mode window fits */
} pool3;

static int pool3_geom(const char *op, const lt_tensor *x, lt_intlist kernel_size, lt_intlist stride,
                      lt_intlist padding, lt_intlist dilation, bool ceil_mode, bool dilated_half, pool3 *g) {
  static const int64_t one[3] = {1, 1, 1};
  if (check_input(op, x, 3, "D, H, W") || lt_meta_check_f32_or_f64(op, "input", x)) return -1;
  if (lt_meta_int_tuple(op, "kernel_size", kernel_size, 3, 1, NULL, g->k) ||
      lt_meta_int_tuple(op, "stride", stride, 3, 1, g->k, g->s) ||
      lt_meta_int_tuple(op, "padding", padding, 3, 0, NULL, g->p) ||
      lt_meta_int_tuple(op, "dilation", dilation, 3, 1, one, g->d))
    return -1;
  for (int i = 0; i < 3; i++) {
    g->in[i] = x->sizes[x->ndim - 3 + i];
    if (g->in[i] < 1) return lt_error("%s: argument 'input' has an empty volume", op);
    int64_t span = dilated_half ? (g->k[i] - 1) * g->d[i] + 1 : g->k[i];
    if (g->p[i] > span / 2)
      return lt_error("%s: argument 'padding' (%lld) must be at most half of the kernel size (%lld)", op,
                      (long long)g->p[i], (long long)span);
    g->o[i] = lt_meta_pool_out_size(g->in[i], g->k[i], g->s[i], g->p[i], g->d[i], ceil_mode);
    if (g->o[i] < 1)
      return lt_error("%s: argument 'input' (%lld x %lld x %lld) is too small for the kernel", op, (long long)x->sizes[x->ndim - 3],
                      (long long)x->sizes[x->ndim - 2], (long long)x->sizes[x->ndim - 1]);
    int64_t need = (g->o[i] - 1) * g->s[i] + (g->k[i] - 1) * g->d[i] + 1 - (g->in[i] + g->p[i]);
    g->hi[i] = need > g->p[i] ? need : g->p[i];
  }
  return 0;
}

int lt_max_pool3d_with_indices_impl(lt_tensor *self, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                                    lt_intlist dilation, bool ceil_mode, lt_tensor **values, lt_tensor **indices) {
  const char *op = "max_pool3d";
  pool3 g;
  *values = *indices = NULL;
  if (pool3_geom(op, self, kernel_size, stride, padding, dilation, ceil_mode, true, &g)) return -1;
  pool p = {{0}, 0};
  bool unb = self->ndim == 4;
  lt_device dev = lt_tensor_device(self);
  lt_tensor *x = batch(&p, self, 3);
  x = x ? pad_n(&p, x, 3, g.p, g.hi, -INFINITY) : NULL;
  lt_tensor *u = x ? windows(&p, x, 3, g.k, g.s, g.d, g.o) : NULL;
  int64_t K = g.k[0] * g.k[1] * g.k[2], HW = g.in[1] * g.in[2], W = g.in[2];
  lt_tensor *v = NULL, *a = NULL;
  if (u) {
    int64_t ws[6] = {u->sizes[0], u->sizes[1], g.o[0], g.o[1], g.o[2], K};
    lt_tensor *w = KEEP(&p, lt_reshape(u, IL(ws, 6)));
    if (w && lt_max_dim(w, -1, false, &v, &a) == 0) { KEEP(&p, v); KEEP(&p, a); }
    else v = a = NULL;
  }
  /* the 1-based input position of each maximum: its window's first tap plus the
  ** tap's offset, the window's tap number a (1-based) picked from a table */
  lt_tensor *idx = NULL;
  if (a) {
    int64_t *off = malloc(sizeof(int64_t) * (size_t)K);
    int64_t L = g.o[0] * g.o[1] * g.o[2];
    int64_t *base = malloc(sizeof(int64_t) * (size_t)L);
    if (off && base) {
      for (int64_t i = 0, kd = 0; kd < g.k[0]; kd++)
        for (int64_t kh = 0; kh < g.k[1]; kh++)
          for (int64_t kw = 0; kw < g.k[2]; kw++) off[i++] = kd * g.d[0] * HW + kh * g.d[1] * W + kw * g.d[2];
      for (int64_t i = 0, od = 0; od < g.o[0]; od++)
        for (int64_t oh = 0; oh < g.o[1]; oh++)
          for (int64_t ow = 0; ow < g.o[2]; ow++)
            base[i++] = (od * g.s[0] - g.p[0]) * HW + (oh * g.s[1] - g.p[1]) * W + (ow * g.s[2] - g.p[2]) + 1;
      int64_t flat = -1;
      lt_tensor *offt = KEEP(&p, i64_table(dev, 1, &K, off));
      lt_tensor *baset = offt ? KEEP(&p, i64_table(dev, 3, g.o, base)) : NULL;
      lt_tensor *af = baset ? KEEP(&p, lt_reshape(a, IL(&flat, 1))) : NULL;
      lt_tensor *sel = af ? KEEP(&p, lt_index_select(offt, 0, af)) : NULL;
      sel = sel ? KEEP(&p, lt_reshape(sel, IL(a->sizes, a->ndim))) : NULL;
      idx = sel ? KEEP(&p, lt_add(sel, baset, lt_scalar_int(1))) : NULL;
    } else lt_error("%s: out of memory", op);
    free(off);
    free(base);
  }
  v = unbatch(&p, idx ? v : NULL, unb);
  idx = unbatch(&p, idx, unb);
  if (!v || !idx || p.failed) { lt_tpool_drop(&p); return -1; }
  lt_tensor_retain(v);
  lt_tensor_retain(idx);
  lt_tpool_drop(&p);
  *values = v;
  *indices = idx;
  return 0;
}

lt_tensor *lt_max_pool3d_impl(lt_tensor *self, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                              lt_intlist dilation, bool ceil_mode) {
  lt_tensor *v, *i;
  if (lt_max_pool3d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode, &v, &i) < 0) return NULL;
  lt_tensor_release(i);
  return v;
}

/* the divisor of each output window, as PyTorch counts it: the window clipped to the
** padded input (count_include_pad) or to the input; per dim, so a product of three */
static void avg_counts(const pool3 *g, int i, bool count_include_pad, int64_t *cnt) {
  for (int64_t o = 0; o < g->o[i]; o++) {
    int64_t a = o * g->s[i] - g->p[i], b = a + g->k[i];
    if (b > g->in[i] + g->p[i]) b = g->in[i] + g->p[i];
    int64_t padded = b - a;
    if (a < 0) a = 0;
    if (b > g->in[i]) b = g->in[i];
    cnt[o] = count_include_pad ? padded : b - a;
  }
}

lt_tensor *lt_avg_pool3d_impl(lt_tensor *self, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                              bool ceil_mode, bool count_include_pad, int64_t divisor_override) {
  const char *op = "avg_pool3d";
  pool3 g;
  if (pool3_geom(op, self, kernel_size, stride, padding, lt_intlist_none(), ceil_mode, false, &g)) return NULL;
  if (divisor_override != LT_NOINT && divisor_override == 0)
    return lt_error_null("%s: argument 'divisor_override' must not be zero", op);
  int64_t L = g.o[0] * g.o[1] * g.o[2];
  double *div = malloc(sizeof(double) * (size_t)L);
  int64_t *c = malloc(sizeof(int64_t) * (size_t)(g.o[0] + g.o[1] + g.o[2]));
  if (!div || !c) { free(div); free(c); return lt_error_null("%s: out of memory", op); }
  int64_t *cd = c, *ch = c + g.o[0], *cw = ch + g.o[1];
  avg_counts(&g, 0, count_include_pad, cd);
  avg_counts(&g, 1, count_include_pad, ch);
  avg_counts(&g, 2, count_include_pad, cw);
  for (int64_t i = 0, a = 0; a < g.o[0]; a++)
    for (int64_t b = 0; b < g.o[1]; b++)
      for (int64_t e = 0; e < g.o[2]; e++)
        div[i++] = divisor_override != LT_NOINT ? (double)divisor_override : (double)(cd[a] * ch[b] * cw[e]);
  pool p = {{0}, 0};
  bool unb = self->ndim == 4;
  lt_tensor *x = batch(&p, self, 3);
  x = x ? pad_n(&p, x, 3, g.p, g.hi, 0.0) : NULL;
  lt_tensor *u = x ? windows(&p, x, 3, g.k, g.s, g.d, g.o) : NULL;
  int64_t dims[3] = {5, 6, 7};
  lt_tensor *sum = u ? KEEP(&p, lt_sum(u, IL(dims, 3), false, -1)) : NULL;
  lt_tensor *dt = sum ? KEEP(&p, f_table(lt_tensor_device(self), (lt_dtype)self->dtype, 3, g.o, div)) : NULL;
  lt_tensor *y = dt ? KEEP(&p, lt_div(sum, dt, NULL)) : NULL;
  free(div);
  free(c);
  return lt_tpool_finish(&p, unbatch(&p, y, unb));
}

/* ---- max_unpool ---- */

/* values of input go to the 1-based positions indices gives in each output plane */
static lt_tensor *unpool(const char *op, int n, lt_tensor *input, lt_tensor *indices, lt_intlist output_size) {
  const char *shape = n == 2 ? "H, W" : "D, H, W";
  int64_t os[3];
  if (check_input(op, input, n, shape)) return NULL;
  if (indices->dtype != LT_INT64)
    return lt_error_null("%s: argument 'indices' must be int64, got %s", op, lt_dtype_name((lt_dtype)indices->dtype));
  if (!lt_tensor_same_shape(input, indices))
    return lt_error_null("%s: argument 'indices' must have the shape of input", op);
  if (output_size.n != n)
    return lt_error_null("%s: argument 'output_size' must have %d entries, got %d", op, n, output_size.n < 0 ? 0 : output_size.n);
  int64_t M = 1;
  for (int i = 0; i < n; i++) {
    os[i] = output_size.v[i];
    if (os[i] < 1) return lt_error_null("%s: argument 'output_size' must be positive, got %lld", op, (long long)os[i]);
    M *= os[i];
  }
  int64_t flat = -1;
  pool p = {{0}, 0};
  bool unb = input->ndim == n + 1;
  lt_tensor *x = batch(&p, input, n), *ix = batch(&p, indices, n);
  if (!x || !ix) return lt_tpool_finish(&p, NULL);
  int64_t N = x->sizes[0], C = x->sizes[1], fs[3] = {N, C, flat}, zs[3] = {N, C, M}, ys[5] = {N, C, os[0], os[1], os[2]};
  /* out-of-range indices are the caller's error, named here rather than by scatter */
  if (!LT_IS_META(indices) && indices->numel > 0) {
    lt_tensor *mn = KEEP(&p, lt_min(indices)), *mx = mn ? KEEP(&p, lt_max(indices)) : NULL;
    if (!mx) return lt_tpool_finish(&p, NULL);
    int64_t lo = lt_tensor_item(mn).v.i, hi = lt_tensor_item(mx).v.i;
    if (lo < 1 || hi > M) {
      lt_tpool_drop(&p);
      return lt_error_null("%s: argument 'indices' holds %lld, out of range 1..%lld for an output plane of %lld elements",
                           op, (long long)(lo < 1 ? lo : hi), (long long)M, (long long)M);
    }
  }
  lt_tensor *xf = KEEP(&p, lt_reshape(x, IL(fs, 3)));
  lt_tensor *iff = xf ? KEEP(&p, lt_reshape(ix, IL(fs, 3))) : NULL;
  lt_tensor *z = iff ? KEEP(&p, lt_zeros(IL(zs, 3), (lt_dtype)input->dtype, lt_tensor_device(input))) : NULL;
  lt_tensor *y = z ? KEEP(&p, lt_scatter(z, 2, iff, xf)) : NULL;
  y = y ? KEEP(&p, lt_reshape(y, IL(ys, n + 2))) : NULL;
  if (!y) rename_error("scatter", op);
  return lt_tpool_finish(&p, unbatch(&p, y, unb));
}

lt_tensor *lt_max_unpool2d_impl(lt_tensor *self, lt_tensor *indices, lt_intlist output_size) {
  return unpool("max_unpool2d", 2, self, indices, output_size);
}

lt_tensor *lt_max_unpool3d_impl(lt_tensor *self, lt_tensor *indices, lt_intlist output_size, lt_intlist stride,
                                lt_intlist padding) {
  const char *op = "max_unpool3d";
  int64_t s[3], pd[3];
  /* PyTorch checks these but the positions come from indices alone */
  if (lt_meta_int_tuple(op, "stride", stride, 3, 1, NULL, s) || lt_meta_int_tuple(op, "padding", padding, 3, 0, NULL, pd))
    return NULL;
  return unpool(op, 3, self, indices, output_size);
}

/* ---- fractional max pooling ---- */

/* The pseudo-random pooling regions of Graham's fractional max-pooling, by PyTorch's
** rule: with alpha = (in - k) / (out - 1), region i starts at
** trunc((i + u) * alpha) - trunc(u * alpha), the last at in - k; computed in the
** samples' precision (float for float32) so the starts agree with PyTorch's. */
static void frac_starts(double u, bool single, int64_t in, int64_t out, int64_t k, int64_t *seq) {
  if (out > 1) {
    if (single) {
      float a = (float)(in - k) / (float)(out - 1), fu = (float)u;
      for (int64_t i = 0; i < out - 1; i++) seq[i] = (int64_t)(((float)i + fu) * a) - (int64_t)(fu * a);
    } else {
      double a = (double)(in - k) / (double)(out - 1);
      for (int64_t i = 0; i < out - 1; i++) seq[i] = (int64_t)(((double)i + u) * a) - (int64_t)(u * a);
    }
  }
  seq[out - 1] = in - k;
}

static int frac_pool(const char *op, int n, lt_tensor *self, lt_intlist kernel_size, lt_intlist output_size,
                     lt_tensor *random_samples, lt_tensor **output, lt_tensor **indices) {
  int64_t k[3], o[3], in[3], st[3];
  *output = *indices = NULL;
  if (check_input(op, self, n, n == 2 ? "H, W" : "D, H, W") || lt_meta_check_f32_or_f64(op, "input", self) ||
      lt_meta_int_tuple(op, "kernel_size", kernel_size, n, 1, NULL, k) ||
      lt_meta_int_tuple(op, "output_size", output_size, n, 1, NULL, o))
    return -1;
  bool unb = self->ndim == n + 1;
  int64_t N = unb ? 1 : self->sizes[0], C = self->sizes[self->ndim - n - 1];
  for (int i = 0; i < n; i++) {
    in[i] = self->sizes[self->ndim - n + i];
    if (o[i] + k[i] - 1 > in[i])
      return lt_error("%s: argument 'output_size' (%lld) + kernel_size (%lld) - 1 is larger than the input (%lld) in "
                      "spatial dim %d", op, (long long)o[i], (long long)k[i], (long long)in[i], i + 1);
  }
  for (int64_t i = n - 1, a = 1; i >= 0; i--) { st[i] = a; a *= in[i]; }
  if (lt_meta_check_float(op, "random_samples", random_samples)) return -1;
  if (random_samples->ndim != 3 || random_samples->sizes[0] != N || random_samples->sizes[1] != C ||
      random_samples->sizes[2] != n) {
    char got[128];
    return lt_error("%s: argument 'random_samples' must have shape [%lld, %lld, %d] (N, C, %d), got %s", op, (long long)N,
                    (long long)C, n, n, lt_shape_str(random_samples->ndim, random_samples->sizes, got, sizeof got));
  }
  int64_t P = N * C, K = 1, L = 1;
  for (int i = 0; i < n; i++) { K *= k[i]; L *= o[i]; }
  double *u = calloc((size_t)(P * n), sizeof(double));
  int64_t *seq = malloc(sizeof(int64_t) * (size_t)(o[0] + o[1] + (n == 3 ? o[2] : 0)));
  int64_t *tab = malloc(sizeof(int64_t) * (size_t)(P * L * K));
  if (!u || !seq || !tab) { free(u); free(seq); free(tab); return lt_error("%s: out of memory", op); }
  if (!LT_IS_META(random_samples)) {   /* the meta device has no values: any regions give the shapes */
    lt_tensor *h = lt_tensor_to_host(random_samples);
    if (!h) { free(u); free(seq); free(tab); return -1; }
    for (int64_t i = 0; i < P * n; i++) u[i] = lt_tensor_get_double(h, i);
    lt_tensor_release(h);
    for (int64_t i = 0; i < P * n; i++)
      if (!(u[i] >= 0 && u[i] < 1)) {
        double bad = u[i];
        free(u); free(seq); free(tab);
        return lt_error("%s: argument 'random_samples' must lie in [0, 1), got %g", op, bad);
      }
  }
  /* which sample places which dim, as PyTorch pairs them: in 2-D the first places the
  ** columns (W) and the second the rows; in 3-D they go in order (D, H, W) */
  bool single = random_samples->dtype != LT_FLOAT64;
  int64_t *sq[3] = {seq, seq + o[0], seq + o[0] + o[1]};
  int64_t t = 0;
  for (int64_t pl = 0; pl < P; pl++) {
    for (int i = 0; i < n; i++) frac_starts(u[pl * n + (n == 2 ? 1 - i : i)], single, in[i], o[i], k[i], sq[i]);
    if (n == 2) {
      for (int64_t a = 0; a < o[0]; a++)
        for (int64_t b = 0; b < o[1]; b++)
          for (int64_t ka = 0; ka < k[0]; ka++)
            for (int64_t kb = 0; kb < k[1]; kb++) tab[t++] = (sq[0][a] + ka) * st[0] + (sq[1][b] + kb) + 1;
    } else {
      for (int64_t a = 0; a < o[0]; a++)
        for (int64_t b = 0; b < o[1]; b++)
          for (int64_t c = 0; c < o[2]; c++)
            for (int64_t ka = 0; ka < k[0]; ka++)
              for (int64_t kb = 0; kb < k[1]; kb++)
                for (int64_t kc = 0; kc < k[2]; kc++)
                  tab[t++] = (sq[0][a] + ka) * st[0] + (sq[1][b] + kb) * st[1] + (sq[2][c] + kc) + 1;
    }
  }
  free(u);
  free(seq);
  pool p = {{0}, 0};
  int64_t ts[6] = {N, C, o[0], o[1], o[2], K}, fl[3] = {N, C, -1};
  if (n == 2) { ts[4] = K; }
  lt_tensor *idx = KEEP(&p, i64_table(lt_tensor_device(self), n + 3, ts, tab));
  free(tab);
  lt_tensor *x = idx ? batch(&p, self, n) : NULL;
  lt_tensor *xf = x ? KEEP(&p, lt_reshape(x, IL(fl, 3))) : NULL;
  lt_tensor *idf = xf ? KEEP(&p, lt_reshape(idx, IL(fl, 3))) : NULL;
  lt_tensor *w = idf ? KEEP(&p, lt_gather(xf, 2, idf)) : NULL;
  w = w ? KEEP(&p, lt_reshape(w, IL(ts, n + 3))) : NULL;
  lt_tensor *v = NULL, *a = NULL, *pos = NULL;
  if (w && lt_max_dim(w, -1, true, &v, &a) == 0) {
    KEEP(&p, v); KEEP(&p, a);
    pos = KEEP(&p, lt_gather(idx, -1, a));
    v = KEEP(&p, lt_squeeze(v, -1));
    pos = pos ? KEEP(&p, lt_squeeze(pos, -1)) : NULL;
  }
  v = unbatch(&p, pos ? v : NULL, unb);
  pos = unbatch(&p, pos, unb);
  if (!v || !pos || p.failed) { lt_tpool_drop(&p); return -1; }
  lt_tensor_retain(v);
  lt_tensor_retain(pos);
  lt_tpool_drop(&p);
  *output = v;
  *indices = pos;
  return 0;
}

int lt_fractional_max_pool2d_impl(lt_tensor *self, lt_intlist kernel_size, lt_intlist output_size,
                                  lt_tensor *random_samples, lt_tensor **output, lt_tensor **indices) {
  return frac_pool("fractional_max_pool2d", 2, self, kernel_size, output_size, random_samples, output, indices);
}

int lt_fractional_max_pool3d_impl(lt_tensor *self, lt_intlist kernel_size, lt_intlist output_size,
                                  lt_tensor *random_samples, lt_tensor **output, lt_tensor **indices) {
  return frac_pool("fractional_max_pool3d", 3, self, kernel_size, output_size, random_samples, output, indices);
}

/* ---- 3-D upsampling: separable, one spatial dim at a time ---- */

static int upsample3d_check(const char *op, const lt_tensor *x, lt_intlist output_size, int64_t *o) {
  if (x->ndim != 5)
    return lt_error("%s: argument 'input' must be 5-D (N, C, D, H, W), got %d-D", op, x->ndim);
  if (lt_meta_check_f32_or_f64(op, "input", x)) return -1;
  if (lt_meta_int_tuple(op, "output_size", output_size, 3, 1, NULL, o)) return -1;
  for (int i = 0; i < 3; i++)
    if (x->sizes[2 + i] < 1) return lt_error("%s: argument 'input' has an empty volume", op);
  return 0;
}

lt_tensor *lt_upsample_nearest3d_impl(lt_tensor *self, lt_intlist output_size, double scales_d, double scales_h,
                                      double scales_w) {
  const char *op = "upsample_nearest3d";
  int64_t o[3];
  double sc[3] = {scales_d, scales_h, scales_w};
  if (upsample3d_check(op, self, output_size, o)) return NULL;
  pool p = {{0}, 0};
  lt_tensor *y = self;
  for (int i = 0; i < 3 && y; i++) {
    int64_t in = self->sizes[2 + i];
    if (in == o[i]) continue;   /* PyTorch copies a dim of unchanged size, whatever the scale */
    int64_t *src = malloc(sizeof(int64_t) * (size_t)o[i]);
    if (!src) { lt_tpool_drop(&p); return lt_error_null("%s: out of memory", op); }
    float r = lt_meta_nearest_ratio(in, o[i], sc[i]);
    /* and doubles a dim of twice the size, whatever the scale (o / 2) */
    for (int64_t j = 0; j < o[i]; j++) src[j] = (o[i] == 2 * in ? j / 2 : lt_meta_nearest_src(j, in, r)) + 1;
    lt_tensor *it = KEEP(&p, i64_table(lt_tensor_device(self), 1, &o[i], src));
    free(src);
    y = it ? KEEP(&p, lt_index_select(y, 2 + i, it)) : NULL;
  }
  if (y == self) return lt_tpool_finish(&p, KEEP(&p, lt_contiguous(self)));
  return lt_tpool_finish(&p, y);
}

lt_tensor *lt_upsample_trilinear3d_impl(lt_tensor *self, lt_intlist output_size, bool align_corners, double scales_d,
                                        double scales_h, double scales_w) {
  const char *op = "upsample_trilinear3d";
  int64_t o[3];
  double sc[3] = {scales_d, scales_h, scales_w};
  if (upsample3d_check(op, self, output_size, o)) return NULL;
  pool p = {{0}, 0};
  lt_device dev = lt_tensor_device(self);
  lt_dtype dt = (lt_dtype)self->dtype;
  lt_tensor *y = self;
  for (int i = 0; i < 3 && y; i++) {
    int64_t in = self->sizes[2 + i], n = o[i];
    int64_t *i0 = malloc(sizeof(int64_t) * (size_t)n * 2);
    double *l = malloc(sizeof(double) * (size_t)n * 2);
    if (!i0 || !l) { free(i0); free(l); lt_tpool_drop(&p); return lt_error_null("%s: out of memory", op); }
    int64_t *i1 = i0 + n;
    for (int64_t j = 0; j < n; j++) {
      int64_t a, b;
      if (dt == LT_FLOAT64) {
        double lam;
        lt_meta_bilinear_src_d(j, in, n, align_corners, sc[i], &a, &b, &lam);
        l[j] = 1.0 - lam; l[n + j] = lam;
      } else {
        float lam;
        lt_meta_bilinear_src_s(j, in, n, align_corners, sc[i], &a, &b, &lam);
        l[j] = (double)(1.0f - lam); l[n + j] = (double)lam;
      }
      i0[j] = a + 1; i1[j] = b + 1;
    }
    int64_t ls[5] = {1, 1, 1, 1, 1};
    ls[2 + i] = n;
    lt_tensor *t0 = KEEP(&p, i64_table(dev, 1, &n, i0)), *t1 = t0 ? KEEP(&p, i64_table(dev, 1, &n, i1)) : NULL;
    lt_tensor *l0 = t1 ? KEEP(&p, f_table(dev, dt, 5, ls, l)) : NULL;
    lt_tensor *l1 = l0 ? KEEP(&p, f_table(dev, dt, 5, ls, l + n)) : NULL;
    free(i0);
    free(l);
    lt_tensor *a = l1 ? KEEP(&p, lt_index_select(y, 2 + i, t0)) : NULL;
    lt_tensor *b = a ? KEEP(&p, lt_index_select(y, 2 + i, t1)) : NULL;
    lt_tensor *wa = b ? KEEP(&p, lt_mul(a, l0)) : NULL;
    lt_tensor *wb = wa ? KEEP(&p, lt_mul(b, l1)) : NULL;
    y = wb ? KEEP(&p, lt_add(wa, wb, lt_scalar_int(1))) : NULL;
  }
  return lt_tpool_finish(&p, y);
}
