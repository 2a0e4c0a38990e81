/*
** conv.c — the CUDA kernels of conv2d, its two backward products and
** conv_transpose2d: im2col (src/cuda/kernels/conv.cu) and one GEMM through
** cuBLAS (blas.h) per chunk of images, with the CPU's checks and geometry
** (meta/conv.h).
**
**   forward:         col = im2col(x[n]);  y[n]_g = W_g (og x K) @ col_g (K x L)
**   backward input:  col_g = W_g^T (K x og) @ gy[n]_g (og x L);  gx[n] = col2im(col)
**   backward weight: gW_g = sum_n gy[n]_g (og x L) @ col_g^T (L x K)
**   conv_transpose2d: the input gradient of the conv its geometry describes
**
** (K = C/g * kh * kw, L = OH * OW, og = O/g.) The groups and the images of
** a chunk are the batch dims of one strided-batched product (the weight's
** image stride is 0); the weight gradient sums the images of a chunk in one
** reduced product per group. col2im gathers (one thread per input element),
** so the backward needs no atomics. A chunk's columns are at most
** CONV_COL_ELEMS elements. The bias is added by the binary add kernel with
** the bias broadcast over the plane.
**
** cuDNN is not used: nothing here could test it (it has no host
** implementation and no GPU was lent), while im2col + cuBLAS runs the same
** code path under the fake driver as on a device. Nothing here has run on a
** GPU.
*/
#include <string.h>
#include "core/error.h"
#include "cuda/blas.h"
#include "cuda/conv.h"
#include "cuda/launch.h"
#include "dispatch/dispatch.h"
#include "meta/conv.h"
#include "kernels_cuda.h"   /* generated: lt_ops.h, the kernel types */

#define CONV_COL_ELEMS ((int64_t)1 << 25)

extern const lt_ck_conv_kernels *lt_ck_conv_device_kernels(void) __attribute__((weak));

bool lt_cuda_have_conv_kernels(void) { return lt_ck_conv_device_kernels != NULL; }

const lt_ck_conv_kernels *lt_cuda_conv_kernels(const lt_cuda_launch *l) {
  return l->host ? lt_ck_host_conv_kernels() : lt_ck_conv_device_kernels ? lt_ck_conv_device_kernels() : NULL;
}

int lt_cuda_conv_launch_begin(lt_cuda_launch *l, const lt_tensor *t, const char *op) {
  return lt_cuda_launch_begin(l, lt_tensor_device(t).index, lt_cuda_have_conv_kernels(), op);
}

static lt_ck_conv_geom kgeom(const lt_conv_geom *q, int64_t nb) {
  lt_ck_conv_geom g = {nb, q->C, q->H, q->W, q->kh, q->kw, q->OH, q->OW, q->sh, q->sw, q->ph, q->pw, q->dh, q->dw};
  return g;
}

/* im2col (col2im when back) of nb images at x; 0, -1 set, 1 refused */
static int cols(const char *op, bool back, const lt_conv_geom *q, int64_t nb, lt_tensor *x, int64_t xoff,
                lt_tensor *col) {
  lt_ck_conv_geom g = kgeom(q, nb);
  size_t es = lt_dtype_size((lt_dtype)col->dtype);
  char *xp = (char *)lt_tensor_data(x) + xoff * (int64_t)es;
  lt_cuda_launch l;
  if (lt_cuda_conv_launch_begin(&l, x, op) < 0) return -1;
  const lt_ck_conv_kernels *k = lt_cuda_conv_kernels(&l);
  int rc = back ? k->col2im(col->dtype, lt_tensor_data(col), xp, &g, l.stream)
                : k->im2col(col->dtype, xp, lt_tensor_data(col), &g, l.stream);
  lt_cuda_launch_end(&l);
  return lt_cuda_launch_result(&l, op, rc, lt_cuda_ck_kernels(&l) ? lt_cuda_ck_kernels(&l)->error_string : NULL);
}

/* a view of t at element offset off (from t's own) */
static lt_tensor *at(lt_tensor *t, int64_t off, int nd, const int64_t *sz, const int64_t *st) {
  return lt_tensor_alias(t, t->offset + off, nd, sz, st);
}

/* one product of views: C = alpha A B + beta C */
static int product(const char *op, lt_tensor *C, lt_tensor *A, lt_tensor *B, double beta, bool reduce) {
  int rc = A && B && C ? lt_cuda_gemm(op, C, A, B, lt_scalar_int(1), lt_scalar_float(beta), reduce) : -1;
  lt_tensor_release(A); lt_tensor_release(B); lt_tensor_release(C);
  return rc > 0 ? lt_error("%s: no cuBLAS path for this dtype", op) : rc;
}

/* images per chunk: the columns of a chunk within CONV_COL_ELEMS */
static int64_t chunk(const lt_conv_geom *q) {
  int64_t per = q->g * q->K * q->L;
  int64_t nb = per > 0 ? CONV_COL_ELEMS / per : q->N;
  if (nb < 1) nb = 1;
  return nb < q->N ? nb : q->N;
}

static lt_tensor *new_cols(const lt_conv_geom *q, int64_t nb, const lt_tensor *like) {
  int64_t sz[4] = {nb, q->g, q->K, q->L};
  return lt_tensor_new((lt_dtype)like->dtype, lt_tensor_device(like), 4, sz);
}

/* y += bias over channel dim 1 of (N, ch, plane) */
int lt_cuda_add_bias(const char *op, lt_tensor *y, lt_tensor *bias, int64_t N, int64_t ch, int64_t plane) {
  if (!bias || N * ch * plane == 0) return 0;
  int64_t sz[3] = {N, ch, plane};
  lt_ck_geom g;
  lt_cuda_geom_init(&g, 3, sz);
  int64_t yst[3] = {ch * plane, plane, 1}, bst[3] = {0, bias->strides[0], 0};
  memcpy(g.strides[0], yst, sizeof yst);
  memcpy(g.strides[1], yst, sizeof yst);
  memcpy(g.strides[2], bst, sizeof bst);
  lt_cuda_launch l;
  if (lt_cuda_launch_begin(&l, lt_tensor_device(y).index, lt_cuda_have_device_kernels(), op) < 0) return -1;
  const lt_ck_kernels *k = lt_cuda_ck_kernels(&l);
  lt_ck_scalar one = {1, 1};
  int rc = k->binary(LT_CK_ADD, y->dtype, lt_tensor_data(y), lt_tensor_data(y), lt_tensor_data(bias), NULL, one, &g,
                     l.stream);
  lt_cuda_launch_end(&l);
  rc = lt_cuda_launch_result(&l, op, rc, k->error_string);
  return rc > 0 ? lt_error("%s: the CUDA kernels cannot add this bias", op) : rc;
}

static lt_tensor *new_out(const lt_conv_geom *q, const lt_tensor *like, int64_t ch, int64_t h, int64_t w) {
  int64_t sz[4];
  int nd = lt_meta_conv_sizes(q, ch, h, w, sz);
  return lt_tensor_new((lt_dtype)like->dtype, lt_tensor_device(like), nd, sz);
}

static int zero(lt_tensor *t) { return t->numel ? lt_tensor_fill_(t, lt_scalar_int(0)) : 0; }

/* y (new) = conv(x, w); x and w contiguous; 1 refused */
static int forward(const char *op, const lt_conv_geom *q, lt_tensor *x, lt_tensor *w, lt_tensor *y) {
  if (q->N * q->O * q->L == 0) return 0;
  if (q->K == 0) return zero(y);
  int64_t nbmax = chunk(q), og = q->og, K = q->K, L = q->L, G = q->g;
  lt_tensor *col = new_cols(q, nbmax, x);
  if (!col) return -1;
  int rc = 0;
  for (int64_t n0 = 0; n0 < q->N && rc == 0; n0 += nbmax) {
    int64_t nb = q->N - n0 < nbmax ? q->N - n0 : nbmax;
    if ((rc = cols(op, false, q, nb, x, n0 * q->C * q->H * q->W, col)) != 0) break;
    int64_t cs[4] = {nb, G, og, L}, cst[4] = {q->O * L, og * L, L, 1};
    int64_t as[4] = {nb, G, og, K}, ast[4] = {0, og * K, K, 1};
    int64_t bs[4] = {nb, G, K, L}, bst[4] = {G * K * L, K * L, L, 1};
    rc = product(op, at(y, n0 * q->O * L, 4, cs, cst), at(w, 0, 4, as, ast), at(col, 0, 4, bs, bst), 0, false);
  }
  lt_tensor_release(col);
  return rc;
}

/* gx (new) = the input gradient of conv(x, w) given gy; gy and w contiguous */
static int backward_input(const char *op, const lt_conv_geom *q, lt_tensor *gy, lt_tensor *w, lt_tensor *gx) {
  if (q->N * q->C * q->H * q->W == 0) return 0;
  if (q->og == 0 || q->L == 0 || q->K == 0) return zero(gx);
  int64_t nbmax = chunk(q), og = q->og, K = q->K, L = q->L, G = q->g;
  lt_tensor *col = new_cols(q, nbmax, gy);
  if (!col) return -1;
  int rc = 0;
  for (int64_t n0 = 0; n0 < q->N && rc == 0; n0 += nbmax) {
    int64_t nb = q->N - n0 < nbmax ? q->N - n0 : nbmax;
    int64_t cs[4] = {nb, G, K, L}, cst[4] = {G * K * L, K * L, L, 1};
    int64_t as[4] = {nb, G, K, og}, ast[4] = {0, og * K, 1, K};
    int64_t bs[4] = {nb, G, og, L}, bst[4] = {q->O * L, og * L, L, 1};
    rc = product(op, at(col, 0, 4, cs, cst), at(w, 0, 4, as, ast), at(gy, n0 * q->O * L, 4, bs, bst), 0, false);
    if (rc == 0) rc = cols(op, true, q, nb, gx, n0 * q->C * q->H * q->W, col);
  }
  lt_tensor_release(col);
  return rc;
}

/* gw (new, O x C/g x kh x kw) = the weight gradient; gy and x contiguous */
static int backward_weight(const char *op, const lt_conv_geom *q, lt_tensor *gy, lt_tensor *x, lt_tensor *gw) {
  if (q->O * q->K == 0) return 0;
  if (q->N == 0 || q->L == 0) return zero(gw);
  int64_t nbmax = chunk(q), og = q->og, K = q->K, L = q->L, G = q->g;
  lt_tensor *col = new_cols(q, nbmax, x);
  if (!col) return -1;
  int rc = 0;
  for (int64_t n0 = 0; n0 < q->N && rc == 0; n0 += nbmax) {
    int64_t nb = q->N - n0 < nbmax ? q->N - n0 : nbmax;
    if ((rc = cols(op, false, q, nb, x, n0 * q->C * q->H * q->W, col)) != 0) break;
    for (int64_t gi = 0; gi < G && rc == 0; gi++) {
      int64_t cs[2] = {og, K}, cst[2] = {K, 1};
      int64_t as[3] = {nb, og, L}, ast[3] = {q->O * L, L, 1};
      int64_t bs[3] = {nb, L, K}, bst[3] = {G * K * L, 1, L};
      rc = product(op, at(gw, gi * og * K, 2, cs, cst), at(gy, n0 * q->O * L + gi * og * L, 3, as, ast),
                   at(col, gi * K * L, 3, bs, bst), n0 == 0 ? 0 : 1, true);
    }
  }
  lt_tensor_release(col);
  return rc;
}

/* contiguous forms of a and b (new references); -1 when out of memory */
static int contig2(lt_tensor *a, lt_tensor *b, lt_tensor **ca, lt_tensor **cb) {
  *ca = lt_tensor_contiguous(a);
  *cb = *ca ? lt_tensor_contiguous(b) : NULL;
  if (*cb) return 0;
  lt_tensor_release(*ca);
  *ca = NULL;
  return -1;
}

/* the result r of a step that returned rc: r, or NULL (released) on failure;
** *refused when the kernels refused */
static lt_tensor *settle(lt_tensor *r, int rc, bool *refused) {
  if (rc == 0) return r;
  lt_tensor_release(r);
  if (rc > 0) *refused = true;
  return NULL;
}

#define FALLBACK(NAME, DT, ...) LT_CUDA_FALLBACK(NAME, #NAME, DT, __VA_ARGS__)

lt_tensor *lt_cuda_conv2d(lt_tensor *input, lt_tensor *weight, lt_tensor *bias, lt_intlist stride,
                          lt_intlist padding, lt_intlist dilation, int64_t groups) {
  const char *op = "conv2d";
  lt_conv_geom q;
  if (lt_meta_conv2d(op, input, weight, bias, stride, padding, dilation, groups, &q)) return NULL;
  lt_tensor *x, *w, *y = NULL;
  bool refused = false;
  if (contig2(input, weight, &x, &w) < 0) return NULL;
  if ((y = new_out(&q, x, q.O, q.OH, q.OW))) {
    int rc = forward(op, &q, x, w, y);
    if (rc == 0) rc = lt_cuda_add_bias(op, y, bias, q.N, q.O, q.L);
    y = settle(y, rc, &refused);
  }
  lt_tensor_release(x); lt_tensor_release(w);
  if (refused) FALLBACK(conv2d, (lt_dtype)input->dtype, input, weight, bias, stride, padding, dilation, groups);
  return y;
}

lt_tensor *lt_cuda_conv2d_backward_input(lt_tensor *grad_output, lt_tensor *weight, lt_intlist input_size,
                                         lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups) {
  const char *op = "conv2d_backward_input";
  lt_conv_geom q;
  if (lt_meta_conv2d_backward_input(op, grad_output, weight, input_size, stride, padding, dilation, groups, &q))
    return NULL;
  lt_tensor *gy, *w, *gx = NULL;
  bool refused = false;
  if (contig2(grad_output, weight, &gy, &w) < 0) return NULL;
  if ((gx = new_out(&q, w, q.C, q.H, q.W))) gx = settle(gx, backward_input(op, &q, gy, w, gx), &refused);
  lt_tensor_release(gy); lt_tensor_release(w);
  if (refused)
    FALLBACK(conv2d_backward_input, (lt_dtype)weight->dtype, grad_output, weight, input_size, stride, padding,
             dilation, groups);
  return gx;
}

lt_tensor *lt_cuda_conv2d_backward_weight(lt_tensor *grad_output, lt_tensor *input, lt_intlist weight_size,
                                          lt_intlist stride, lt_intlist padding, lt_intlist dilation, int64_t groups) {
  const char *op = "conv2d_backward_weight";
  lt_conv_geom q;
  if (lt_meta_conv2d_backward_weight(op, grad_output, input, weight_size, stride, padding, dilation, groups, &q))
    return NULL;
  lt_tensor *gy, *x, *gw = NULL;
  bool refused = false;
  if (contig2(grad_output, input, &gy, &x) < 0) return NULL;
  if ((gw = lt_tensor_new((lt_dtype)x->dtype, lt_tensor_device(x), 4, weight_size.v)))
    gw = settle(gw, backward_weight(op, &q, gy, x, gw), &refused);
  lt_tensor_release(gy); lt_tensor_release(x);
  if (refused)
    FALLBACK(conv2d_backward_weight, (lt_dtype)input->dtype, grad_output, input, weight_size, stride, padding,
             dilation, groups);
  return gw;
}

lt_tensor *lt_cuda_conv_transpose2d(lt_tensor *input, lt_tensor *weight, lt_tensor *bias, lt_intlist stride,
                                    lt_intlist padding, lt_intlist output_padding, int64_t groups,
                                    lt_intlist dilation) {
  const char *op = "conv_transpose2d";
  lt_conv_geom q;
  if (lt_meta_conv_transpose2d(op, input, weight, bias, stride, padding, output_padding, groups, dilation, &q))
    return NULL;
  lt_tensor *x, *w, *y = NULL;
  bool refused = false;
  if (contig2(input, weight, &x, &w) < 0) return NULL;
  if ((y = new_out(&q, w, q.C, q.H, q.W))) {
    int rc = backward_input(op, &q, x, w, y);
    if (rc == 0) rc = lt_cuda_add_bias(op, y, bias, q.N, q.C, q.H * q.W);
    y = settle(y, rc, &refused);
  }
  lt_tensor_release(x); lt_tensor_release(w);
  if (refused)
    FALLBACK(conv_transpose2d, (lt_dtype)input->dtype, input, weight, bias, stride, padding, output_padding, groups,
             dilation);
  return y;
}
