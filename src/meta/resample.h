/*
** resample.h — the geometry of pad, 2-D upsampling and pixel_(un)shuffle
** (src/ops/nn_conv.lua): argument checks, output shapes, and the source index
** of every output element (PyTorch's rules, the same on every device).
*/
#ifndef LT_META_RESAMPLE_H
#define LT_META_RESAMPLE_H

#include <math.h>
#include "meta/meta.h"

/* ---- pad ---- */

enum { LT_PAD_CONSTANT, LT_PAD_REFLECT, LT_PAD_REPLICATE };

typedef struct lt_pad_geom {
  int ndim, k;                  /* rank; padded dims are the last k */
  int64_t in[LT_MAX_DIMS], out[LT_MAX_DIMS];
  int64_t left[LT_MAX_DIMS];    /* padding before each dim (0 for the unpadded ones) */
  int64_t outer;                /* product of the unpadded dims */
  int mode;                     /* LT_PAD_* */
} lt_pad_geom;

/* shapes from F.pad's list (last dim first) and mode (NULL: "constant") for an input of
** shape sizes */
int lt_meta_pad_geometry(const char *op, lt_pad_geom *p, int ndim, const int64_t *sizes, lt_intlist pad,
                         const char *mode);
/* pad: a bool input pads only in mode "constant" */
int lt_meta_pad(const char *op, const lt_tensor *self, lt_intlist pad, const char *mode, lt_pad_geom *p);
/* pad_backward: grad_output (float) must have the padded shape of input_size */
int lt_meta_pad_backward(const char *op, const lt_tensor *grad_output, lt_intlist input_size, lt_intlist pad,
                         const char *mode, lt_pad_geom *p);

/* the input index that output index o of a dim reads (n long, padded by left before);
** -1: a constant pad element */
static inline int64_t lt_meta_pad_source(int mode, int64_t o, int64_t left, int64_t n) {
  int64_t s = o - left;
  if (mode == LT_PAD_CONSTANT) return s >= 0 && s < n ? s : -1;
  if (mode == LT_PAD_REFLECT) {
    if (s < 0) s = -s;
    if (s >= n) s = 2 * (n - 1) - s;
    return s;
  }
  return s < 0 ? 0 : s >= n ? n - 1 : s;
}

/* ---- upsampling (N, C, H, W) -> (N, C, OH, OW) ---- */

typedef struct lt_upsample_geom {
  int64_t P, H, W, OH, OW;      /* planes (N * C), input and output planes */
  int64_t in_sizes[4], out_sizes[4];
  bool align_corners;
  double scale_h, scale_w;      /* the caller's scale factors, or <= 0: from the sizes */
} lt_upsample_geom;

/* upsample_*2d: a float 4-D input to output_size (1 or 2 positive entries) */
int lt_meta_upsample2d(const char *op, const lt_tensor *self, lt_intlist output_size, bool align_corners,
                       double scale_h, double scale_w, lt_upsample_geom *g);
/* upsample_*2d_backward: grad_output must be the output of that upsampling of input_size */
int lt_meta_upsample2d_backward(const char *op, const lt_tensor *grad_output, lt_intlist output_size,
                                lt_intlist input_size, bool align_corners, double scale_h, double scale_w,
                                lt_upsample_geom *g);

/* source steps per output step: 1/scale when the caller gave the scale factor (a
** scale of 1.7 maps output 1 to source 1/1.7, not to 5/8 after flooring the size to 8),
** else in/out; PyTorch's rule, in float for nearest as it computes it */
static inline float lt_meta_nearest_ratio(int64_t in, int64_t out, double scale) {
  return scale > 0 ? (float)(1.0 / scale) : (float)in / (float)out;
}

/* nearest: source floor(o * ratio) */
static inline int64_t lt_meta_nearest_src(int64_t o, int64_t in, float ratio) {
  int64_t s = (int64_t)floorf((float)o * ratio);
  return s < in - 1 ? s : in - 1;
}

/* bilinear: the two source rows/cols of output o and the weight of the second, computed
** in T (float for float32, double for float64): lt_meta_bilinear_src_s / _d */
#define LT_META_BILINEAR_SRC(T, X)                                                           \
static inline void lt_meta_bilinear_src_##X(int64_t o, int64_t in, int64_t out, bool ac, double sf, \
                                            int64_t *i0, int64_t *i1, T *lam) {              \
  T scale = ac ? (out > 1 ? (T)(in - 1) / (T)(out - 1) : (T)0) : sf > 0 ? (T)(1.0 / sf) : (T)in / (T)out; \
  T s = ac ? scale * (T)o : scale * ((T)o + (T)0.5) - (T)0.5;                                 \
  if (s < 0) s = 0;                                                                           \
  int64_t a = (int64_t)s;                                                                     \
  if (a > in - 1) a = in - 1;                                                                 \
  *i0 = a; *i1 = a < in - 1 ? a + 1 : a;                                                      \
  *lam = s - (T)a;                                                                            \
  if (*lam < 0) *lam = 0;                                                                     \
}
LT_META_BILINEAR_SRC(float, s)
LT_META_BILINEAR_SRC(double, d)

/* ---- pixel_shuffle / pixel_unshuffle ---- */

/* The reshape (n1 dims s1), permute (perm) and reshape (n2 dims s2) that shuffle an
** input of shape sizes by factor r (un: pixel_unshuffle); arrays of LT_MAX_DIMS. */
int lt_meta_pixel_shuffle(const char *op, int ndim, const int64_t *sizes, int64_t r, bool un, int *n1,
                          int64_t *s1, int64_t *perm, int *n2, int64_t *s2);

#endif
