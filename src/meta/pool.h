/*
** pool.h — the geometry of 2-D pooling over the last two dims (src/ops/nn_conv.lua):
** max, average and adaptive pools and their backward ops. Every dim before the
** last two is a plane. The window functions below are what each output element
** reads, the same on every device.
*/
#ifndef LT_META_POOL_H
#define LT_META_POOL_H

#include "meta/meta.h"

typedef struct lt_pool_geom {
  int64_t P, H, W, OH, OW;      /* planes, input and output plane sizes */
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool adaptive;
  bool ceil_mode, count_include_pad;
  int64_t divisor;              /* 0: none */
} lt_pool_geom;

/* output size of one dim; with ceil_mode the last window must start inside the input
** or its left padding */
int64_t lt_meta_pool_out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode);

/* max_pool2d: input (C, H, W) or (N, C, H, W), float32/64; kernel_size, stride (absent:
** kernel_size), padding, dilation (1 or 2 entries each) */
int lt_meta_max_pool2d(const char *op, const lt_tensor *input, lt_intlist kernel_size, lt_intlist stride,
                       lt_intlist padding, lt_intlist dilation, bool ceil_mode, lt_pool_geom *g);
/* avg_pool2d: as max_pool2d without dilation; divisor_override LT_NOINT or non-zero */
int lt_meta_avg_pool2d(const char *op, const lt_tensor *input, lt_intlist kernel_size, lt_intlist stride,
                       lt_intlist padding, bool ceil_mode, bool count_include_pad, int64_t divisor_override,
                       lt_pool_geom *g);
/* adaptive pools: output_size of 1 or 2 positive entries */
int lt_meta_adaptive_pool2d(const char *op, const lt_tensor *input, lt_intlist output_size, lt_pool_geom *g);

/* max_pool2d_backward: indices (int64, grad_output's shape) into an input of input_size */
int lt_meta_max_pool2d_backward(const char *op, const lt_tensor *grad_output, const lt_tensor *indices,
                                lt_intlist input_size, lt_pool_geom *g);
/* avg_pool2d_backward: grad_output must be the output of that pooling of input_size */
int lt_meta_avg_pool2d_backward(const char *op, const lt_tensor *grad_output, lt_intlist input_size,
                                lt_intlist kernel_size, lt_intlist stride, lt_intlist padding, bool ceil_mode,
                                bool count_include_pad, int64_t divisor_override, lt_pool_geom *g);
int lt_meta_adaptive_avg_pool2d_backward(const char *op, const lt_tensor *grad_output, lt_intlist input_size,
                                         lt_pool_geom *g);

/* sizes (ndim of them) with the last two replaced by g's output plane, into out */
void lt_meta_pool_out_sizes(const lt_pool_geom *g, int ndim, const int64_t *sizes, int64_t *out);

/* adaptive windows: [floor(o*in/out), ceil((o+1)*in/out)) */
static inline int64_t lt_meta_adaptive_start(int64_t o, int64_t out, int64_t in) { return (o * in) / out; }
static inline int64_t lt_meta_adaptive_end(int64_t o, int64_t out, int64_t in) { return ((o + 1) * in + out - 1) / out; }

/* the window of output (oh, ow): rows [*h0, *h1) step dh, cols [*w0, *w1) step dw, clipped */
static inline void lt_meta_pool_window(const lt_pool_geom *q, int64_t oh, int64_t ow, int64_t *h0, int64_t *h1,
                                       int64_t *w0, int64_t *w1) {
  if (q->adaptive) {
    *h0 = lt_meta_adaptive_start(oh, q->OH, q->H); *h1 = lt_meta_adaptive_end(oh, q->OH, q->H);
    *w0 = lt_meta_adaptive_start(ow, q->OW, q->W); *w1 = lt_meta_adaptive_end(ow, q->OW, q->W);
    return;
  }
  int64_t hs = oh * q->sh - q->ph, ws = ow * q->sw - q->pw;
  int64_t he = hs + (q->kh - 1) * q->dh + 1, we = ws + (q->kw - 1) * q->dw + 1;
  while (hs < 0) hs += q->dh;
  while (ws < 0) ws += q->dw;
  *h0 = hs; *h1 = he < q->H ? he : q->H;
  *w0 = ws; *w1 = we < q->W ? we : q->W;
}

/* an average pool's window (step 1) and its divisor, as PyTorch counts them */
static inline void lt_meta_avg_pool_window(const lt_pool_geom *q, int64_t oh, int64_t ow, int64_t *h0, int64_t *h1,
                                           int64_t *w0, int64_t *w1, double *div) {
  if (q->adaptive) {
    lt_meta_pool_window(q, oh, ow, h0, h1, w0, w1);
    *div = (double)((*h1 - *h0) * (*w1 - *w0));
    return;
  }
  int64_t hs = oh * q->sh - q->ph, ws = ow * q->sw - q->pw;
  int64_t he = hs + q->kh, we = ws + q->kw;
  if (he > q->H + q->ph) he = q->H + q->ph;
  if (we > q->W + q->pw) we = q->W + q->pw;
  int64_t area = (he - hs) * (we - ws);
  if (hs < 0) hs = 0;
  if (ws < 0) ws = 0;
  if (he > q->H) he = q->H;
  if (we > q->W) we = q->W;
  *h0 = hs; *h1 = he; *w0 = ws; *w1 = we;
  *div = q->divisor ? (double)q->divisor : q->count_include_pad ? (double)area : (double)((he - hs) * (we - ws));
}

#endif
