/*
** conv.h — the geometry of 2-D and 3-D convolutions (src/ops/nn_conv.lua): argument
** checks and output sizes of conv2d, its two backward products and
** conv_transpose2d, padding="same", and conv1d's lists. Sizes and dtypes only;
** a backend fills an lt_conv_geom here and runs its products from it.
*/
#ifndef LT_META_CONV_H
#define LT_META_CONV_H

#include "meta/meta.h"

typedef struct lt_conv_geom {
  int64_t N, C, H, W;           /* input (N = 1 when unbatched) */
  int64_t O, kh, kw;            /* weight: O x C/g x kh x kw */
  int64_t OH, OW;
  int64_t sh, sw, ph, pw, dh, dw, g;
  int64_t cg, og, K, L;         /* C/g, O/g, cg*kh*kw, OH*OW */
  int64_t Hp, Wp;               /* the zero-padded input plane */
  bool batched;
  lt_dtype dtype;               /* of every operand (checked) */
} lt_conv_geom;

/* output size of one spatial dim; -1 when the dilated kernel does not fit */
int64_t lt_meta_conv_out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d);

/* stride, padding, dilation (1 or 2 entries each) and groups into g */
int lt_meta_conv_params(const char *op, lt_conv_geom *g, lt_intlist stride, lt_intlist padding,
                        lt_intlist dilation, int64_t groups);
/* after lt_meta_conv_params: an input of shape in (C,H,W or N,C,H,W) against a weight of
** shape w (O, C/g, kh, kw; wname names it in errors); fills the rest of g but dtype */
int lt_meta_conv_shape(const char *op, lt_conv_geom *g, int in_ndim, const int64_t *in, int w_ndim,
                       const int64_t *w, const char *wname);

/* conv2d: input and weight (dtypes, params, shapes) and the bias (1-D of O, or NULL) */
int lt_meta_conv2d(const char *op, const lt_tensor *input, const lt_tensor *weight, const lt_tensor *bias,
                   lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups, lt_conv_geom *g);
/* the input gradient of conv2d: input_size is the input's shape */
int lt_meta_conv2d_backward_input(const char *op, const lt_tensor *grad_output, const lt_tensor *weight,
                                  lt_intlist input_size, lt_intlist stride, lt_intlist padding,
                                  lt_intlist dilation, int64_t groups, lt_conv_geom *g);
/* the weight gradient of conv2d: weight_size is the weight's shape */
int lt_meta_conv2d_backward_weight(const char *op, const lt_tensor *grad_output, const lt_tensor *input,
                                   lt_intlist weight_size, lt_intlist stride, lt_intlist padding,
                                   lt_intlist dilation, int64_t groups, lt_conv_geom *g);
/* conv_transpose2d: g is the conv from the output back to input (so g->C, g->H, g->W
** are the output's channels and plane, g->OH, g->OW the input's); checks the bias too */
int lt_meta_conv_transpose2d(const char *op, const lt_tensor *input, const lt_tensor *weight,
                             const lt_tensor *bias, lt_intlist stride, lt_intlist padding,
                             lt_intlist output_padding, int64_t groups, lt_intlist dilation, lt_conv_geom *g);

/* the shape of an image batch like g's input with ch channels of h x w into sizes; its rank */
int lt_meta_conv_sizes(const lt_conv_geom *g, int64_t ch, int64_t h, int64_t w, int64_t *sizes);

/* bias: NULL, or 1-D of ch elements with input's dtype */
int lt_meta_conv_bias(const char *op, const lt_tensor *bias, const lt_tensor *input, int64_t ch);

/* a padding string: 0 "valid", 1 "same", -1 anything else (error) */
int lt_meta_conv_padding_mode(const char *op, const char *padding);
/* padding "same" (stride 1 only): the total padding of each spatial dim, total[0] rows and
** total[1] columns (an odd total pads one more on the bottom/right, as PyTorch) */
int lt_meta_conv_same_padding(const char *op, const lt_tensor *weight, lt_intlist stride, lt_intlist dilation,
                              int64_t groups, int64_t total[2]);

/* conv1d: input (C, L) or (N, C, L) and weight (O, C/g, K), their dtypes */
int lt_meta_conv1d_check(const char *op, const lt_tensor *input, const lt_tensor *weight);

/* ---- 3-D convolutions (conv3d.c): conv3d and its two backward products ---- */

typedef struct lt_conv3_geom {
  int64_t N, C, in[3];          /* input (N = 1 when unbatched); in = D, H, W */
  int64_t O, k[3], out[3];      /* weight O x C/g x kD x kH x kW; output OD, OH, OW */
  int64_t s[3], p[3], d[3], g;
  int64_t cg, og, T, K, L;      /* C/g, O/g, kD*kH*kW taps, cg*T, OD*OH*OW */
  bool batched;
  lt_dtype dtype;               /* of every operand (checked) */
} lt_conv3_geom;

/* conv3d: input (C, D, H, W) or (N, C, D, H, W), weight (O, C/g, kD, kH, kW), bias */
int lt_meta_conv3d(const char *op, const lt_tensor *input, const lt_tensor *weight, const lt_tensor *bias,
                   lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups, lt_conv3_geom *g);
/* the input gradient of conv3d: input_size is the input's shape */
int lt_meta_conv3d_backward_input(const char *op, const lt_tensor *grad_output, const lt_tensor *weight,
                                  lt_intlist input_size, lt_intlist stride, lt_intlist padding,
                                  lt_intlist dilation, int64_t groups, lt_conv3_geom *g);
/* the weight gradient of conv3d: weight_size is the weight's shape */
int lt_meta_conv3d_backward_weight(const char *op, const lt_tensor *grad_output, const lt_tensor *input,
                                   lt_intlist weight_size, lt_intlist stride, lt_intlist padding,
                                   lt_intlist dilation, int64_t groups, lt_conv3_geom *g);
/* the shape of a volume batch like g's input with ch channels of sp[0] x sp[1] x sp[2]; its rank */
int lt_meta_conv3d_sizes(const lt_conv3_geom *g, int64_t ch, const int64_t *sp, int64_t *sizes);

#endif
