/*
** nn.c — the meta kernels of the neural network ops (convolution, pooling,
** normalization, losses, dropout, scans): the argument checks and output
** geometry of src/meta that the CPU's kernels run, then results with no data.
** Checks that read values (targets in range, indices) cannot run here.
*/
#include <string.h>
#include "kernels_meta.h"   /* generated: the prototypes */
#include "metadev/metadev.h"
#include "meta/meta.h"
#include "meta/conv.h"
#include "meta/pool.h"
#include "meta/norm.h"
#include "meta/loss.h"
#include "meta/reduce.h"
#include "meta/creation.h"
#include "meta/resample.h"
#include "meta/index.h"
#include "meta/foreach.h"

static lt_tensor *new_meta(lt_dtype dt, int nd, const int64_t *sz) {
  return lt_tensor_new(dt, lt_metadev_device(), nd, sz);
}

/* two new results or none: 0, or -1 with both NULL */
static int pair(lt_tensor **a, lt_tensor *va, lt_tensor **b, lt_tensor *vb) {
  *a = va, *b = vb;
  if (va && vb) return 0;
  lt_tensor_release(va), lt_tensor_release(vb);
  *a = *b = NULL;
  return -1;
}

/* ---- convolution ---- */

static lt_tensor *conv_out(const lt_conv_geom *g, lt_dtype dt, int64_t ch, int64_t h, int64_t w) {
  int64_t sz[LT_MAX_DIMS];
  int nd = lt_meta_conv_sizes(g, ch, h, w, sz);
  return new_meta(dt, nd, sz);
}

lt_tensor *lt_metadev_conv2d(lt_tensor *input, lt_tensor *weight, lt_tensor *bias, lt_intlist stride,
                             lt_intlist padding, lt_intlist dilation, int64_t groups) {
  lt_conv_geom g;
  if (lt_meta_conv2d("conv2d", input, weight, bias, stride, padding, dilation, groups, &g)) return NULL;
  return conv_out(&g, (lt_dtype)input->dtype, g.O, g.OH, g.OW);
}

lt_tensor *lt_metadev_conv2d_backward_input(lt_tensor *grad_output, lt_tensor *weight, lt_intlist input_size,
                                            lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups) {
  lt_conv_geom g;
  if (lt_meta_conv2d_backward_input("conv2d_backward_input", grad_output, weight, input_size, stride, padding,
                                    dilation, groups, &g))
    return NULL;
  return conv_out(&g, (lt_dtype)weight->dtype, g.C, g.H, g.W);
}

lt_tensor *lt_metadev_conv2d_backward_weight(lt_tensor *grad_output, lt_tensor *input, lt_intlist weight_size,
                                             lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups) {
  lt_conv_geom g;
  if (lt_meta_conv2d_backward_weight("conv2d_backward_weight", grad_output, input, weight_size, stride, padding,
                                     dilation, groups, &g))
    return NULL;
  int64_t sz[4] = { g.O, g.cg, g.kh, g.kw };
  return new_meta((lt_dtype)input->dtype, 4, sz);
}

/* ---- pooling ---- */

static lt_tensor *planes_out(const lt_pool_geom *g, const lt_tensor *x, lt_dtype dt) {
  int64_t sz[LT_MAX_DIMS];
  lt_meta_pool_out_sizes(g, x->ndim, x->sizes, sz);
  return new_meta(dt, x->ndim, sz);
}

int lt_metadev_max_pool2d_with_indices(lt_tensor *self, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                                       lt_intlist dilation, bool ceil_mode, lt_tensor **values, lt_tensor **indices) {
  lt_pool_geom g;
  *values = *indices = NULL;
  if (lt_meta_max_pool2d("max_pool2d", self, kernel_size, stride, padding, dilation, ceil_mode, &g)) return -1;
  return pair(values, planes_out(&g, self, (lt_dtype)self->dtype), indices, planes_out(&g, self, LT_INT64));
}

int lt_metadev_adaptive_max_pool2d(lt_tensor *self, lt_intlist output_size, lt_tensor **values, lt_tensor **indices) {
  lt_pool_geom g;
  *values = *indices = NULL;
  if (lt_meta_adaptive_pool2d("adaptive_max_pool2d", self, output_size, &g)) return -1;
  return pair(values, planes_out(&g, self, (lt_dtype)self->dtype), indices, planes_out(&g, self, LT_INT64));
}

lt_tensor *lt_metadev_avg_pool2d(lt_tensor *self, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                                 bool ceil_mode, bool count_include_pad, int64_t divisor_override) {
  lt_pool_geom g;
  if (lt_meta_avg_pool2d("avg_pool2d", self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                         divisor_override, &g))
    return NULL;
  return planes_out(&g, self, (lt_dtype)self->dtype);
}

lt_tensor *lt_metadev_adaptive_avg_pool2d(lt_tensor *self, lt_intlist output_size) {
  lt_pool_geom g;
  if (lt_meta_adaptive_pool2d("adaptive_avg_pool2d", self, output_size, &g)) return NULL;
  return planes_out(&g, self, (lt_dtype)self->dtype);
}

/* ---- normalization ---- */

int lt_metadev_native_layer_norm(lt_tensor *input, lt_intlist normalized_shape, lt_tensor *weight, lt_tensor *bias,
                                 double eps, lt_tensor **output, lt_tensor **mean, lt_tensor **rstd) {
  (void)eps;
  int64_t M, D, ss[LT_MAX_DIMS];
  *output = *mean = *rstd = NULL;
  if (lt_meta_layer_norm("layer_norm", input, normalized_shape, weight, bias, &M, &D) < 0) return -1;
  /* the statistics keep input's rank, 1 in each normalized dim */
  int k = input->ndim - normalized_shape.n;
  for (int i = 0; i < input->ndim; i++) ss[i] = i < k ? input->sizes[i] : 1;
  lt_dtype dt = (lt_dtype)input->dtype;
  *output = new_meta(dt, input->ndim, input->sizes);
  if (pair(mean, new_meta(dt, input->ndim, ss), rstd, new_meta(dt, input->ndim, ss)) < 0 || !*output) {
    lt_tensor_release(*output), lt_tensor_release(*mean), lt_tensor_release(*rstd);
    *output = *mean = *rstd = NULL;
    return -1;
  }
  return 0;
}


/* ---- losses ---- */

int lt_metadev_nll_loss_forward(lt_tensor *self, lt_tensor *target, lt_tensor *weight, const char *reduction,
                                int64_t ignore_index, lt_tensor **output, lt_tensor **total_weight) {
  (void)ignore_index;   /* the targets' range is the data's: not checked on meta */
  lt_nll_geom g;
  *output = *total_weight = NULL;
  int red = lt_meta_loss_reduction("nll_loss", reduction, false);
  if (red < 0 || lt_meta_nll_loss("nll_loss", self, target, weight, &g) < 0) return -1;
  lt_dtype dt = (lt_dtype)self->dtype;
  lt_tensor *o = red == LT_LOSS_NONE ? new_meta(dt, target->ndim, target->sizes) : new_meta(dt, 0, NULL);
  return pair(output, o, total_weight, new_meta(dt, 0, NULL));
}

/* ---- dropout ---- */

int lt_metadev_native_dropout(lt_tensor *input, double p, bool train, lt_tensor **output, lt_tensor **mask) {
  (void)train;
  *output = *mask = NULL;
  if (lt_meta_check_prob("native_dropout", "p", p) < 0 || lt_meta_check_float("native_dropout", "input", input) < 0)
    return -1;
  return pair(output, new_meta((lt_dtype)input->dtype, input->ndim, input->sizes), mask,
              new_meta(LT_BOOL, input->ndim, input->sizes));
}

lt_tensor *lt_metadev__dropout_mask(lt_tensor *self, double p, lt_intlist shape) {
  bool done;
  return lt_meta_dropout_mask_new("_dropout_mask", self, p, shape, &done);
}

/* ---- scans ---- */

static lt_tensor *accum(const char *op, lt_tensor *self, int64_t dim, int dtype, lt_tensor *out) {
  lt_dtype rdt;
  if (lt_wrap_dim(op, dim, self->ndim) < 0) return NULL;
  if (lt_meta_reduce_dtype(op, (lt_dtype)self->dtype, dtype, false, &rdt) < 0) return NULL;
  return lt_metadev_result(op, out, rdt, self->ndim, self->sizes);
}

lt_tensor *lt_metadev_cumsum(lt_tensor *self, int64_t dim, int dtype, lt_tensor *out) {
  return accum("cumsum", self, dim, dtype, out);
}

lt_tensor *lt_metadev_cumprod(lt_tensor *self, int64_t dim, int dtype, lt_tensor *out) {
  return accum("cumprod", self, dim, dtype, out);
}

lt_tensor *lt_metadev_argsort(lt_tensor *self, int64_t dim, bool descending, bool stable) {
  (void)descending; (void)stable;
  if (lt_wrap_dim("argsort", dim, self->ndim) < 0) return NULL;
  return new_meta(LT_INT64, self->ndim, self->sizes);
}

int lt_metadev_topk(lt_tensor *self, int64_t k, int64_t dim, bool largest, bool sorted, lt_tensor **values,
                    lt_tensor **indices) {
  (void)largest; (void)sorted;
  *values = *indices = NULL;
  if (lt_meta_topk_check(self->ndim, self->sizes, k, dim) < 0) return -1;
  int d = lt_wrap_dim("topk", dim, self->ndim);
  if (d < 0) return -1;
  int64_t sz[LT_MAX_DIMS];
  memcpy(sz, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
  if (self->ndim) sz[d] = k;
  return pair(values, new_meta((lt_dtype)self->dtype, self->ndim, sz), indices, new_meta(LT_INT64, self->ndim, sz));
}

/* the input's gradient has the input's shape and dtype */
lt_tensor *lt_metadev_nll_loss_backward(lt_tensor *grad_output, lt_tensor *self, lt_tensor *target, lt_tensor *weight,
                                        const char *reduction, int64_t ignore_index, lt_tensor *total_weight) {
  (void)grad_output; (void)target; (void)weight; (void)ignore_index; (void)total_weight;
  if (lt_meta_loss_reduction("nll_loss_backward", reduction, false) < 0) return NULL;
  return new_meta((lt_dtype)self->dtype, self->ndim, self->sizes);
}

/* ---- more backwards, batch norm, padding, resampling ---- */

lt_tensor *lt_metadev_conv_transpose2d(lt_tensor *input, lt_tensor *weight, lt_tensor *bias, lt_intlist stride,
                                       lt_intlist padding, lt_intlist output_padding, int64_t groups,
                                       lt_intlist dilation) {
  lt_conv_geom g;
  if (lt_meta_conv_transpose2d("conv_transpose2d", input, weight, bias, stride, padding, output_padding, groups,
                               dilation, &g))
    return NULL;
  return conv_out(&g, (lt_dtype)weight->dtype, g.C, g.H, g.W);
}

/* a gradient of the input's shape, input_size, in grad_output's dtype */
static lt_tensor *sized(lt_tensor *grad_output, lt_intlist input_size) {
  return new_meta((lt_dtype)grad_output->dtype, input_size.n, input_size.v);
}

lt_tensor *lt_metadev_max_pool2d_backward(lt_tensor *grad_output, lt_tensor *indices, lt_intlist input_size) {
  lt_pool_geom g;
  if (lt_meta_max_pool2d_backward("max_pool2d_backward", grad_output, indices, input_size, &g)) return NULL;
  return sized(grad_output, input_size);
}

lt_tensor *lt_metadev_avg_pool2d_backward(lt_tensor *grad_output, lt_intlist input_size, lt_intlist kernel_size,
                                          lt_intlist stride, lt_intlist padding, bool ceil_mode, bool count_include_pad,
                                          int64_t divisor_override) {
  lt_pool_geom g;
  if (lt_meta_avg_pool2d_backward("avg_pool2d_backward", grad_output, input_size, kernel_size, stride, padding,
                                  ceil_mode, count_include_pad, divisor_override, &g))
    return NULL;
  return sized(grad_output, input_size);
}

lt_tensor *lt_metadev_adaptive_avg_pool2d_backward(lt_tensor *grad_output, lt_intlist input_size) {
  lt_pool_geom g;
  if (lt_meta_adaptive_avg_pool2d_backward("adaptive_avg_pool2d_backward", grad_output, input_size, &g)) return NULL;
  return sized(grad_output, input_size);
}

lt_tensor *lt_metadev_pad(lt_tensor *self, lt_intlist pad, const char *mode, double value) {
  (void)value;
  lt_pad_geom p;
  if (lt_meta_pad("pad", self, pad, mode, &p)) return NULL;
  return new_meta((lt_dtype)self->dtype, p.ndim, p.out);
}

lt_tensor *lt_metadev_pad_backward(lt_tensor *grad_output, lt_intlist input_size, lt_intlist pad, const char *mode) {
  lt_pad_geom p;
  if (lt_meta_pad_backward("pad_backward", grad_output, input_size, pad, mode, &p)) return NULL;
  return sized(grad_output, input_size);
}

lt_tensor *lt_metadev_upsample_nearest2d(lt_tensor *self, lt_intlist output_size, double scales_h, double scales_w) {
  lt_upsample_geom g;
  if (lt_meta_upsample2d("upsample_nearest2d", self, output_size, false, scales_h, scales_w, &g)) return NULL;
  return new_meta((lt_dtype)self->dtype, 4, g.out_sizes);
}

lt_tensor *lt_metadev_upsample_bilinear2d(lt_tensor *self, lt_intlist output_size, bool align_corners, double scales_h,
                                          double scales_w) {
  lt_upsample_geom g;
  if (lt_meta_upsample2d("upsample_bilinear2d", self, output_size, align_corners, scales_h, scales_w, &g)) return NULL;
  return new_meta((lt_dtype)self->dtype, 4, g.out_sizes);
}

lt_tensor *lt_metadev_upsample_nearest2d_backward(lt_tensor *grad_output, lt_intlist output_size, lt_intlist input_size,
                                                  double scales_h, double scales_w) {
  lt_upsample_geom g;
  if (lt_meta_upsample2d_backward("upsample_nearest2d_backward", grad_output, output_size, input_size, false, scales_h,
                                  scales_w, &g))
    return NULL;
  return new_meta((lt_dtype)grad_output->dtype, 4, g.in_sizes);
}

lt_tensor *lt_metadev_upsample_bilinear2d_backward(lt_tensor *grad_output, lt_intlist output_size,
                                                   lt_intlist input_size, bool align_corners, double scales_h,
                                                   double scales_w) {
  lt_upsample_geom g;
  if (lt_meta_upsample2d_backward("upsample_bilinear2d_backward", grad_output, output_size, input_size, align_corners,
                                  scales_h, scales_w, &g))
    return NULL;
  return new_meta((lt_dtype)grad_output->dtype, 4, g.in_sizes);
}

int lt_metadev_native_batch_norm(lt_tensor *input, lt_tensor *weight, lt_tensor *bias, lt_tensor *running_mean,
                                 lt_tensor *running_var, bool training, double momentum, double eps,
                                 lt_tensor **output, lt_tensor **save_mean, lt_tensor **save_invstd) {
  (void)momentum; (void)eps;   /* the running statistics are updated in place: nothing to write */
  int64_t N, C, S;
  *output = *save_mean = *save_invstd = NULL;
  if (lt_meta_batch_norm("batch_norm", input, weight, bias, running_mean, running_var, training, &N, &C, &S) < 0)
    return -1;
  lt_dtype dt = (lt_dtype)input->dtype;
  *output = new_meta(dt, input->ndim, input->sizes);
  if (pair(save_mean, new_meta(dt, 1, &C), save_invstd, new_meta(dt, 1, &C)) < 0 || !*output) {
    lt_tensor_release(*output), lt_tensor_release(*save_mean), lt_tensor_release(*save_invstd);
    *output = *save_mean = *save_invstd = NULL;
    return -1;
  }
  return 0;
}

/* which: 0 the input's gradient, 1 the weight's, 2 the bias's (one value per channel) */
static lt_tensor *bn_backward(const char *op, int which, lt_tensor *grad_output, lt_tensor *input, lt_tensor *weight,
                              lt_tensor *save_mean, lt_tensor *save_invstd) {
  int64_t N, C, S;
  if (lt_meta_batch_norm_backward(op, grad_output, input, weight, save_mean, save_invstd, &N, &C, &S) < 0) return NULL;
  if (which == 0) return new_meta((lt_dtype)input->dtype, input->ndim, input->sizes);
  return new_meta((lt_dtype)input->dtype, 1, &C);
}

lt_tensor *lt_metadev_batch_norm_backward(lt_tensor *grad_output, lt_tensor *input, lt_tensor *weight,
                                          lt_tensor *save_mean, lt_tensor *save_invstd, bool training) {
  (void)training;
  return bn_backward("batch_norm_backward", 0, grad_output, input, weight, save_mean, save_invstd);
}

lt_tensor *lt_metadev_batch_norm_backward_weight(lt_tensor *grad_output, lt_tensor *input, lt_tensor *save_mean,
                                                 lt_tensor *save_invstd) {
  return bn_backward("batch_norm_backward_weight", 1, grad_output, input, NULL, save_mean, save_invstd);
}

lt_tensor *lt_metadev_batch_norm_backward_bias(lt_tensor *grad_output, lt_tensor *input) {
  return bn_backward("batch_norm_backward_bias", 2, grad_output, input, NULL, NULL, NULL);
}

lt_tensor *lt_metadev_layer_norm_backward(lt_tensor *grad_output, lt_tensor *input, lt_tensor *mean, lt_tensor *rstd,
                                          lt_tensor *weight, lt_intlist normalized_shape) {
  int64_t M, D;
  if (lt_meta_layer_norm_backward("layer_norm_backward", grad_output, input, mean, rstd, weight, normalized_shape, &M,
                                  &D) < 0)
    return NULL;
  return new_meta((lt_dtype)input->dtype, input->ndim, input->sizes);
}

lt_tensor *lt_metadev_layer_norm_backward_weight(lt_tensor *grad_output, lt_tensor *input, lt_tensor *mean,
                                                 lt_tensor *rstd, lt_intlist normalized_shape) {
  int64_t M, D;
  if (lt_meta_layer_norm_backward("layer_norm_backward_weight", grad_output, input, mean, rstd, NULL, normalized_shape,
                                  &M, &D) < 0)
    return NULL;
  return new_meta((lt_dtype)input->dtype, normalized_shape.n, normalized_shape.v);
}

lt_tensor *lt_metadev__embedding_backward(lt_tensor *grad, lt_tensor *indices, int64_t num_weights,
                                          int64_t padding_idx) {
  if (lt_meta_embedding_backward(grad, indices, num_weights, padding_idx) < -1) return NULL;
  int64_t sz[2] = {num_weights, grad->sizes[grad->ndim - 1]};
  return new_meta((lt_dtype)grad->dtype, 2, sz);
}

lt_tensor *lt_metadev__foreach_norm(lt_tensor *const *tensors, int tensors_n, double ord) {
  (void)ord;
  lt_dtype dt;
  if (lt_meta_foreach_norm(tensors, tensors_n, &dt) < 0) return NULL;
  int64_t n = tensors_n;
  return new_meta(dt, 1, &n);
}
