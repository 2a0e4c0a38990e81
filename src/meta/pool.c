/*
** pool.c — pooling geometry (pool.h): the checks and output plane of every
** 2-D pool and of its backward op.
*/
#include <string.h>
#include "meta/pool.h"

int64_t lt_meta_pool_out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  if (num < 0) return 0;
  int64_t o = num / s + 1;
  /* the last window must start inside the input or its left padding */
  if (ceil_mode && (o - 1) * s >= in + p) o--;
  return o;
}

/* input (C, H, W) or (N, C, H, W) with non-empty planes: P, H, W */
static int planes(const char *op, const lt_tensor *x, lt_pool_geom *q) {
  if (x->ndim != 3 && x->ndim != 4)
    return lt_error("%s: argument 'input' must be 3-D (C, H, W) or 4-D (N, C, H, W), got %d-D", op, x->ndim);
  q->H = x->sizes[x->ndim - 2]; q->W = x->sizes[x->ndim - 1];
  q->P = lt_shape_numel(x->ndim - 2, x->sizes);
  if (q->H < 1 || q->W < 1) return lt_error("%s: argument 'input' has an empty plane", op);
  return 0;
}

/* a float32/64 input's planes */
static int input_planes(const char *op, const lt_tensor *x, lt_pool_geom *q) {
  memset(q, 0, sizeof *q);
  if (lt_meta_check_f32_or_f64(op, "input", x) || planes(op, x, q)) return -1;
  return 0;
}

/* kernel_size, stride (default kernel_size), padding, dilation (absent: 1), output size;
** dilated_half: the padding limit is half the dilated kernel (max), else of the kernel */
static int window_geom(const char *op, lt_pool_geom *q, lt_intlist kernel_size, lt_intlist stride,
                       lt_intlist padding, lt_intlist dilation, bool ceil_mode, bool dilated_half) {
  int64_t k[2] = {0, 0}, s[2] = {0, 0}, p[2] = {0, 0}, d[2] = {1, 1};
  if (lt_meta_int_tuple(op, "kernel_size", kernel_size, 2, 1, NULL, k)) return -1;
  if (lt_meta_int_tuple(op, "stride", stride, 2, 1, k, s) || lt_meta_int_tuple(op, "padding", padding, 2, 0, NULL, p))
    return -1;
  if (dilation.n >= 0 && lt_meta_int_tuple(op, "dilation", dilation, 2, 1, NULL, d)) return -1;
  for (int i = 0; i < 2; i++) {
    int64_t span = dilated_half ? (k[i] - 1) * d[i] + 1 : k[i];
    if (p[i] > span / 2)
      return lt_error("%s: argument 'padding' (%lld) must be at most half of the kernel size (%lld)", op,
                      (long long)p[i], (long long)span);
  }
  q->kh = k[0]; q->kw = k[1]; q->sh = s[0]; q->sw = s[1]; q->ph = p[0]; q->pw = p[1]; q->dh = d[0]; q->dw = d[1];
  q->ceil_mode = ceil_mode;
  q->adaptive = false;
  q->OH = lt_meta_pool_out_size(q->H, q->kh, q->sh, q->ph, q->dh, ceil_mode);
  q->OW = lt_meta_pool_out_size(q->W, q->kw, q->sw, q->pw, q->dw, ceil_mode);
  if (q->OH < 1 || q->OW < 1)
    return lt_error("%s: argument 'input' (%lld x %lld) is too small for the kernel: output %lld x %lld", op,
                    (long long)q->H, (long long)q->W, (long long)q->OH, (long long)q->OW);
  return 0;
}

/* the average pool's window and divisor */
static int avg_geom(const char *op, lt_pool_geom *q, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                    bool ceil_mode, bool count_include_pad, int64_t divisor_override) {
  if (window_geom(op, q, kernel_size, stride, padding, lt_intlist_none(), ceil_mode, false)) return -1;
  q->count_include_pad = count_include_pad;
  q->divisor = 0;
  if (divisor_override != LT_NOINT) {
    if (divisor_override == 0) return lt_error("%s: argument 'divisor_override' must not be zero", op);
    q->divisor = divisor_override;
  }
  return 0;
}

int lt_meta_max_pool2d(const char *op, const lt_tensor *input, lt_intlist kernel_size, lt_intlist stride,
                       lt_intlist padding, lt_intlist dilation, bool ceil_mode, lt_pool_geom *g) {
  if (input_planes(op, input, g)) return -1;
  return window_geom(op, g, kernel_size, stride, padding, dilation, ceil_mode, true);
}

int lt_meta_avg_pool2d(const char *op, const lt_tensor *input, lt_intlist kernel_size, lt_intlist stride,
                       lt_intlist padding, bool ceil_mode, bool count_include_pad, int64_t divisor_override,
                       lt_pool_geom *g) {
  if (input_planes(op, input, g)) return -1;
  return avg_geom(op, g, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
}

int lt_meta_adaptive_pool2d(const char *op, const lt_tensor *input, lt_intlist output_size, lt_pool_geom *q) {
  if (input_planes(op, input, q)) return -1;
  if (output_size.n != 1 && output_size.n != 2)
    return lt_error("%s: argument 'output_size' must have 1 or 2 entries, got %d", op,
                    output_size.n < 0 ? 0 : output_size.n);
  q->OH = output_size.v[0]; q->OW = output_size.v[output_size.n - 1];
  if (q->OH < 1 || q->OW < 1)
    return lt_error("%s: argument 'output_size' must be positive, got %lld x %lld", op, (long long)q->OH,
                    (long long)q->OW);
  q->adaptive = true;
  q->dh = q->dw = 1;
  return 0;
}

/* a backward op's planes: input_size against grad_output (same rank and leading dims) */
static int backward_planes(const char *op, lt_intlist input_size, const lt_tensor *gy, lt_pool_geom *q) {
  char a[128], b[128];
  memset(q, 0, sizeof *q);
  if (input_size.n < 2 || input_size.n != gy->ndim)
    return lt_error("%s: argument 'input_size' (%d entries) must match the rank of grad_output (%d)", op,
                    input_size.n < 0 ? 0 : input_size.n, gy->ndim);
  for (int i = 0; i < input_size.n; i++)
    if (input_size.v[i] < 0 || (i < input_size.n - 2 && input_size.v[i] != gy->sizes[i]))
      return lt_error("%s: argument 'input_size' %s does not fit grad_output %s", op,
                      lt_shape_str(input_size.n, input_size.v, a, sizeof a), lt_shape_str(gy->ndim, gy->sizes, b, sizeof b));
  q->P = lt_shape_numel(gy->ndim - 2, gy->sizes);
  q->H = input_size.v[input_size.n - 2]; q->W = input_size.v[input_size.n - 1];
  q->OH = gy->sizes[gy->ndim - 2]; q->OW = gy->sizes[gy->ndim - 1];
  return 0;
}

int lt_meta_max_pool2d_backward(const char *op, const lt_tensor *grad_output, const lt_tensor *indices,
                                lt_intlist input_size, lt_pool_geom *g) {
  if (lt_meta_check_f32_or_f64(op, "grad_output", grad_output)) return -1;
  if (indices->dtype != LT_INT64) return lt_error("%s: argument 'indices' must be int64", op);
  if (!lt_tensor_same_shape(grad_output, indices))
    return lt_error("%s: argument 'indices' must have the shape of grad_output", op);
  return backward_planes(op, input_size, grad_output, g);
}

int lt_meta_avg_pool2d_backward(const char *op, const lt_tensor *grad_output, lt_intlist input_size,
                                lt_intlist kernel_size, lt_intlist stride, lt_intlist padding, bool ceil_mode,
                                bool count_include_pad, int64_t divisor_override, lt_pool_geom *q) {
  if (lt_meta_check_f32_or_f64(op, "grad_output", grad_output) || backward_planes(op, input_size, grad_output, q))
    return -1;
  int64_t oh = q->OH, ow = q->OW;
  if (q->H < 1 || q->W < 1) return lt_error("%s: argument 'input_size' has an empty plane", op);
  if (avg_geom(op, q, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)) return -1;
  if (q->OH != oh || q->OW != ow) return lt_error("%s: argument 'grad_output' does not fit the pooling", op);
  return 0;
}

int lt_meta_adaptive_avg_pool2d_backward(const char *op, const lt_tensor *grad_output, lt_intlist input_size,
                                         lt_pool_geom *q) {
  if (lt_meta_check_f32_or_f64(op, "grad_output", grad_output) || backward_planes(op, input_size, grad_output, q))
    return -1;
  if (q->H < 1 || q->W < 1 || q->OH < 1 || q->OW < 1) return lt_error("%s: empty planes", op);
  q->adaptive = true;
  q->dh = q->dw = 1;
  return 0;
}

void lt_meta_pool_out_sizes(const lt_pool_geom *g, int ndim, const int64_t *sizes, int64_t *out) {
  memcpy(out, sizes, sizeof(int64_t) * (size_t)ndim);
  out[ndim - 2] = g->OH; out[ndim - 1] = g->OW;
}
