/*
** nn_conv_shift.h — stride-1 convolutions as sums of shifted gemms (nn_conv_shift.c),
** the fast path of nn_conv.c for layers with many channels. Private to the CPU backend.
*/
#ifndef LT_NN_CONV_SHIFT_H
#define LT_NN_CONV_SHIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* a stride-1 conv2d: input N x C x H x W, weight O x C/g x kh x kw */
typedef struct lt_conv_shift {
  int64_t N, C, H, W, O, kh, kw, ph, pw, dh, dw, g;
  bool f32;
} lt_conv_shift;

/* whether the shifted-gemm path pays for this layer (and handles it) */
bool lt_conv_shift_ok(const lt_conv_shift *s);
/* y = conv(x, w) + b (b may be NULL); all contiguous. 0, or -1 when out of memory */
int lt_conv_shift_forward(const lt_conv_shift *s, const void *x, const void *w, const void *b, void *y);
/* gx = the input gradient from gy; -1 also when padding exceeds the dilated kernel (not handled) */
bool lt_conv_shift_backward_input_ok(const lt_conv_shift *s);
int lt_conv_shift_backward_input(const lt_conv_shift *s, const void *gy, const void *w, void *gx);
/* gw = the weight gradient from x and gy */
int lt_conv_shift_backward_weight(const lt_conv_shift *s, const void *x, const void *gy, void *gw);

/* stride 1 with one input channel per group (nn_conv_direct.c): the forward pass as a
** direct vector loop over each output plane */
bool lt_conv_direct_ok(const lt_conv_shift *s);
int lt_conv_direct_forward(const lt_conv_shift *s, const void *x, const void *w, const void *b, void *y);
/* the same for a few input channels per group, four filters at a time */
bool lt_conv_direct_multi_ok(const lt_conv_shift *s);
int lt_conv_direct_multi_forward(const lt_conv_shift *s, const void *x, const void *w, const void *b, void *y);

/* scratch memory from the CPU allocator (cached, so large blocks do not fault pages in each call) */
void *lt_conv_scratch(size_t nbytes);
void lt_conv_unscratch(void *p, size_t nbytes);

#endif
