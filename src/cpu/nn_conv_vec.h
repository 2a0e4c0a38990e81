/*
** nn_conv_vec.h — float32 convolutions with few channels and any stride, as direct loops
** with channels in vector lanes (nn_conv_vec.c): the path of nn_conv.c for small strided
** layers, where im2col writes kh*kw copies of the input in rows a few elements long.
** Private to the CPU backend.
*/
#ifndef LT_NN_CONV_VEC_H
#define LT_NN_CONV_VEC_H

#include <stdbool.h>
#include <stdint.h>

/* a float32 conv2d with one group: input N x C x H x W, weight O x C x kh x kw, output
** N x O x OH x OW */
typedef struct lt_conv_vec {
  int64_t N, C, H, W, O, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW;
} lt_conv_vec;

/* whether this path handles the layer's forward and weight gradient (few output
** channels), and its input gradient (few input channels) */
bool lt_conv_vec_ok(const lt_conv_vec *v);
bool lt_conv_vec_backward_input_ok(const lt_conv_vec *v);
/* y = conv(x, w) + b (b may be NULL); all contiguous. 0, or -1 when out of memory */
int lt_conv_vec_forward(const lt_conv_vec *v, const float *x, const float *w, const float *b, float *y);
/* gx = the input gradient from gy and w */
int lt_conv_vec_backward_input(const lt_conv_vec *v, const float *gy, const float *w, float *gx);
/* gw = the weight gradient from x and gy */
int lt_conv_vec_backward_weight(const lt_conv_vec *v, const float *x, const float *gy, float *gw);

#endif
