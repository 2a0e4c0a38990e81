/*
** conv.h — the CUDA kernels of convolutions and pooling as C entry points,
** in both builds (kernels.h explains the two): im2col and its gathering
** inverse col2im (conv2d and its backwards run a GEMM through cuBLAS between
** them, src/cuda/conv.c), and the max and average pools with their backward
** kernels.
**
** Every kernel runs one thread per output element (max_pool_backward: per
** plane) and only gathers, so none needs atomics, shared memory or barriers and the host build runs the very
** code nvcc compiles. Operands are contiguous, float32 or float64
** (LT_CK_FLOAT32/64); other dtypes give LT_CK_EUNSUPPORTED. This header is C.
*/
#ifndef LT_CUDA_KERNELS_CONV_H
#define LT_CUDA_KERNELS_CONV_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* a batch of N images of C planes H x W, a kernel kh x kw with stride,
** padding and dilation, and the output plane OH x OW */
typedef struct lt_ck_conv_geom {
  int64_t N, C, H, W;
  int64_t kh, kw, OH, OW;
  int64_t sh, sw, ph, pw, dh, dw;
} lt_ck_conv_geom;

/* pooling over P planes H x W into OH x OW: the fields of meta/pool.h's
** lt_pool_geom, whose window rules the kernels follow */
typedef struct lt_ck_pool_geom {
  int64_t P, H, W, OH, OW;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t divisor;                 /* avg: 0 none, else divisor_override */
  int adaptive, count_include_pad;
} lt_ck_pool_geom;

/* pad over the last k of ndim dims (meta/resample.h's lt_pad_geom) */
typedef struct lt_ck_pad_geom {
  int ndim, k, mode;               /* mode: 0 constant, 1 reflect, 2 replicate */
  int64_t in[16], out[16], left[16];
  int64_t outer;                   /* product of the unpadded dims */
} lt_ck_pad_geom;

/* 2-D upsampling of P planes H x W to OH x OW (meta/resample.h's rules) */
typedef struct lt_ck_up_geom {
  int64_t P, H, W, OH, OW;
  int align_corners;
  double scale_h, scale_w;         /* the caller's scale factors, or <= 0 */
  float ratio_h, ratio_w;          /* nearest: lt_meta_nearest_ratio of each dim */
} lt_ck_up_geom;

/*
** im2col: col (N, C*kh*kw, OH*OW) from x (N, C, H, W): col[n][(c*kh + i)*kw + j][oh*OW + ow] =
**   x[n][c][oh*sh - ph + i*dh][ow*sw - pw + j*dw], 0 outside the plane.
** col2im: x (N, C, H, W) = the sum over every col entry that im2col reads x's
**   element from (the adjoint of im2col), gathered by one thread per x element.
** max_pool: y and ix (P, OH, OW; ix int64, 1-based flat positions in the
**   input plane) from x (P, H, W); NaN wins, ties keep the first, as the CPU.
** max_pool_backward: gx (P, H, W) = the sum of gy at every output whose ix
**   names the element, one thread per plane (the op knows no windows); an ix
**   outside the plane sets *bad (device memory, one int, the caller zeroes it).
** avg_pool / avg_pool_backward: meta/pool.h's windows and divisors.
** pad: y (the padded shape) from x (contiguous) for any dtype of elem_size
**   bytes (1, 2, 4, 8), fill one element in host memory; pad_backward:
**   gx = the sum of gy at the outputs that read each element, one thread per
**   slab of the unpadded dims adding in output order (the CPU's).
** upsample (nearest, or bilinear when bilinear): one thread per output;
**   upsample_backward: one thread per plane adding in output order.
*/
typedef struct lt_ck_conv_kernels {
  const char *name;
  int (*im2col)(int dtype, const void *x, void *col, const lt_ck_conv_geom *g, void *stream);
  int (*col2im)(int dtype, const void *col, void *x, const lt_ck_conv_geom *g, void *stream);
  int (*max_pool)(int dtype, const void *x, void *y, int64_t *ix, const lt_ck_pool_geom *g, void *stream);
  int (*max_pool_backward)(int dtype, const void *gy, const int64_t *ix, void *gx, int *bad,
                           const lt_ck_pool_geom *g, void *stream);
  int (*avg_pool)(int dtype, const void *x, void *y, const lt_ck_pool_geom *g, void *stream);
  int (*avg_pool_backward)(int dtype, const void *gy, void *gx, const lt_ck_pool_geom *g, void *stream);
  int (*pad)(int elem_size, const void *x, void *y, const void *fill, const lt_ck_pad_geom *g, void *stream);
  int (*pad_backward)(int dtype, const void *gy, void *gx, const lt_ck_pad_geom *g, void *stream);
  int (*upsample)(int dtype, int bilinear, const void *x, void *y, const lt_ck_up_geom *g, void *stream);
  int (*upsample_backward)(int dtype, int bilinear, const void *gy, void *gx, const lt_ck_up_geom *g, void *stream);
} lt_ck_conv_kernels;

const lt_ck_conv_kernels *lt_ck_conv_device_kernels(void);   /* the nvcc build */
const lt_ck_conv_kernels *lt_ck_host_conv_kernels(void);     /* the host build */

#ifdef __cplusplus
}
#endif
#endif
