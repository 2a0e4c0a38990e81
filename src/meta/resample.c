/*
** resample.c — pad, upsampling and pixel shuffle geometry (resample.h).
*/
#include <string.h>
#include "meta/resample.h"

int lt_meta_pad_geometry(const char *op, lt_pad_geom *p, int ndim, const int64_t *sizes, lt_intlist pad,
                         const char *mode) {
  memset(p, 0, sizeof *p);
  if (!mode || strcmp(mode, "constant") == 0) p->mode = LT_PAD_CONSTANT;
  else if (strcmp(mode, "reflect") == 0) p->mode = LT_PAD_REFLECT;
  else if (strcmp(mode, "replicate") == 0) p->mode = LT_PAD_REPLICATE;
  else return lt_error("%s: argument 'mode' must be \"constant\", \"reflect\" or \"replicate\", got \"%s\"", op, mode);
  if (pad.n < 0 || pad.n % 2)
    return lt_error("%s: argument 'pad' must have an even number of entries, got %d", op, pad.n < 0 ? 0 : pad.n);
  int k = pad.n / 2;
  if (k > ndim) return lt_error("%s: argument 'pad' pads %d dims but input has %d", op, k, ndim);
  if (p->mode != LT_PAD_CONSTANT) {
    if (k > 3) return lt_error("%s: argument 'pad' may pad at most 3 dims in mode \"%s\"", op, mode);
    if (ndim < k + 1 || ndim > k + 2)
      return lt_error("%s: argument 'input' must be %d-D or %d-D to pad %d dims in mode \"%s\", got %d-D", op, k + 1,
                      k + 2, k, mode, ndim);
  }
  p->ndim = ndim; p->k = k;
  memcpy(p->in, sizes, sizeof(int64_t) * (size_t)ndim);
  memcpy(p->out, sizes, sizeof(int64_t) * (size_t)ndim);
  p->outer = lt_shape_numel(ndim - k, sizes);
  for (int i = 0; i < k; i++) {
    int d = ndim - 1 - i;
    int64_t l = pad.v[2 * i], r = pad.v[2 * i + 1], n = sizes[d];
    p->left[d] = l;
    p->out[d] = n + l + r;
    if (p->out[d] < 0)
      return lt_error("%s: argument 'pad' makes dim %d negative (%lld)", op, d + 1, (long long)p->out[d]);
    if (p->mode == LT_PAD_REFLECT && (l >= n || r >= n || l < 0 || r < 0))
      return lt_error("%s: argument 'pad' (%lld, %lld) must be non-negative and smaller than dim %d (%lld) in mode \"reflect\"",
                      op, (long long)l, (long long)r, d + 1, (long long)n);
    if (p->mode == LT_PAD_REPLICATE && (n == 0 || l < 0 || r < 0))
      return lt_error("%s: argument 'pad' must be non-negative and dim %d non-empty in mode \"replicate\"", op, d + 1);
  }
  return 0;
}

int lt_meta_pad(const char *op, const lt_tensor *self, lt_intlist pad, const char *mode, lt_pad_geom *p) {
  if (lt_tensor_dtype(self) == LT_BOOL && mode && strcmp(mode, "constant") != 0)
    return lt_error("%s: argument 'input' of dtype bool is only padded in mode \"constant\"", op);
  return lt_meta_pad_geometry(op, p, self->ndim, self->sizes, pad, mode);
}

int lt_meta_pad_backward(const char *op, const lt_tensor *grad_output, lt_intlist input_size, lt_intlist pad,
                         const char *mode, lt_pad_geom *p) {
  char a[128], b[128];
  if (lt_meta_check_f32_or_f64(op, "grad_output", grad_output)) return -1;
  if (input_size.n < 0 || input_size.n > LT_MAX_DIMS) return lt_error("%s: bad argument 'input_size'", op);
  for (int i = 0; i < input_size.n; i++)
    if (input_size.v[i] < 0) return lt_error("%s: argument 'input_size' has a negative entry", op);
  if (lt_meta_pad_geometry(op, p, input_size.n, input_size.v, pad, mode)) return -1;
  if (grad_output->ndim != p->ndim || memcmp(grad_output->sizes, p->out, sizeof(int64_t) * (size_t)p->ndim))
    return lt_error("%s: argument 'grad_output' has shape %s, expected %s", op,
                    lt_shape_str(grad_output->ndim, grad_output->sizes, a, sizeof a),
                    lt_shape_str(p->ndim, p->out, b, sizeof b));
  return 0;
}

/* an input of shape in (ndim dims) to output_size */
static int up_sizes(const char *op, int ndim, const int64_t *in, lt_intlist output_size, lt_upsample_geom *q) {
  if (ndim != 4) return lt_error("%s: argument 'input' must be 4-D (N, C, H, W), got %d-D", op, ndim);
  if (output_size.n != 2 && output_size.n != 1)
    return lt_error("%s: argument 'output_size' must have 2 entries, got %d", op, output_size.n < 0 ? 0 : output_size.n);
  q->P = in[0] * in[1]; q->H = in[2]; q->W = in[3];
  q->OH = output_size.v[0]; q->OW = output_size.v[output_size.n - 1];
  if (q->OH < 1 || q->OW < 1)
    return lt_error("%s: argument 'output_size' must be positive, got %lld x %lld", op, (long long)q->OH, (long long)q->OW);
  if (q->H < 1 || q->W < 1) return lt_error("%s: argument 'input' has an empty plane", op);
  memcpy(q->in_sizes, in, sizeof q->in_sizes);
  q->out_sizes[0] = in[0]; q->out_sizes[1] = in[1]; q->out_sizes[2] = q->OH; q->out_sizes[3] = q->OW;
  return 0;
}

int lt_meta_upsample2d(const char *op, const lt_tensor *self, lt_intlist output_size, bool align_corners,
                       double scale_h, double scale_w, lt_upsample_geom *g) {
  memset(g, 0, sizeof *g);
  if (lt_meta_check_f32_or_f64(op, "input", self) || up_sizes(op, self->ndim, self->sizes, output_size, g))
    return -1;
  g->align_corners = align_corners;
  g->scale_h = scale_h; g->scale_w = scale_w;
  return 0;
}

int lt_meta_upsample2d_backward(const char *op, const lt_tensor *grad_output, lt_intlist output_size,
                                lt_intlist input_size, bool align_corners, double scale_h, double scale_w,
                                lt_upsample_geom *g) {
  memset(g, 0, sizeof *g);
  if (lt_meta_check_f32_or_f64(op, "grad_output", grad_output)) return -1;
  if (input_size.n != 4) return lt_error("%s: argument 'input_size' must have 4 entries", op);
  if (up_sizes(op, 4, input_size.v, output_size, g)) return -1;
  if (grad_output->ndim != 4 || memcmp(grad_output->sizes, g->out_sizes, sizeof g->out_sizes)) {
    char a[128], b[128];
    return lt_error("%s: argument 'grad_output' has shape %s, expected %s", op,
                    lt_shape_str(grad_output->ndim, grad_output->sizes, a, sizeof a),
                    lt_shape_str(4, g->out_sizes, b, sizeof b));
  }
  g->align_corners = align_corners;
  g->scale_h = scale_h; g->scale_w = scale_w;
  return 0;
}

int lt_meta_pixel_shuffle(const char *op, int ndim, const int64_t *sizes, int64_t r, bool un, int *n1,
                          int64_t *s1, int64_t *perm, int *n2, int64_t *s2) {
  if (ndim < 3)
    return lt_error("%s: argument 'input' must have at least 3 dims (*, C, H, W), got %d-D", op, ndim);
  if (r < 1) return lt_error("%s: argument '%s' must be positive, got %lld", op,
                             un ? "downscale_factor" : "upscale_factor", (long long)r);
  if (ndim + 3 > LT_MAX_DIMS) return lt_error("%s: argument 'input' has too many dims", op);
  if (r > (int64_t)1 << 31)    /* r * r and the new sizes stay far from overflowing */
    return lt_error("%s: argument '%s' is too large (%lld)", op, un ? "downscale_factor" : "upscale_factor",
                    (long long)r);
  int nb = ndim - 3;
  int64_t c = sizes[nb], h = sizes[nb + 1], w = sizes[nb + 2];
  for (int i = 0; i < nb; i++) { s1[i] = s2[i] = sizes[i]; perm[i] = i; }
  if (!un) {
    if (c % (r * r))
      return lt_error("%s: argument 'input' has %lld channels, not divisible by upscale_factor^2 (%lld)", op,
                      (long long)c, (long long)(r * r));
    /* (*, C, r, r, H, W) -> (*, C, H, r, W, r) */
    int64_t a[6] = {c / (r * r), r, r, h, w}, pm[6] = {0, 3, 1, 4, 2};
    s1[nb] = a[0]; s1[nb + 1] = r; s1[nb + 2] = r; s1[nb + 3] = h; s1[nb + 4] = w;
    for (int i = 0; i < 5; i++) perm[nb + i] = nb + pm[i];
    s2[nb] = a[0]; s2[nb + 1] = h * r; s2[nb + 2] = w * r;
  } else {
    if (h % r || w % r)
      return lt_error("%s: argument 'input' height %lld and width %lld must be divisible by downscale_factor %lld",
                      op, (long long)h, (long long)w, (long long)r);
    /* (*, C, H/r, r, W/r, r) -> (*, C, r, r, H/r, W/r) */
    int64_t pm[5] = {0, 2, 4, 1, 3};
    s1[nb] = c; s1[nb + 1] = h / r; s1[nb + 2] = r; s1[nb + 3] = w / r; s1[nb + 4] = r;
    for (int i = 0; i < 5; i++) perm[nb + i] = nb + pm[i];
    s2[nb] = c * r * r; s2[nb + 1] = h / r; s2[nb + 2] = w / r;
  }
  *n1 = nb + 5;
  *n2 = nb + 3;
  return 0;
}
