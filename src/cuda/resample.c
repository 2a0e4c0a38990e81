/*
** resample.c — the CUDA kernels of pad (constant, reflect, replicate; any
** dtype forward) and of nearest and bilinear 2-D upsampling, with their
** backward ops, over src/cuda/kernels/conv.cu and the CPU's checks and
** source rules (meta/resample.h).
**
** Nothing here has run on a GPU: tested with the host build under the fake
** driver (tests/lua/cuda/test_conv.lua).
*/
#include <string.h>
#include "core/error.h"
#include "cuda/conv.h"
#include "dispatch/dispatch.h"
#include "meta/resample.h"
#include "kernels_cuda.h"   /* generated: lt_ops.h, the kernel types */

enum { K_PAD, K_PAD_BACK, K_UP, K_UP_BACK };

typedef struct job {
  int which, dtype, bilinear;
  const void *a, *fill;
  void *out;
  const lt_ck_pad_geom *pg;
  const lt_ck_up_geom *ug;
} job;

/* 0, -1 set, 1 refused */
static int run(const char *op, const lt_tensor *on, const job *j) {
  lt_cuda_launch l;
  if (lt_cuda_conv_launch_begin(&l, on, op) < 0) return -1;
  const lt_ck_conv_kernels *k = lt_cuda_conv_kernels(&l);
  int rc;
  switch (j->which) {
    case K_PAD: rc = k->pad(j->dtype, j->a, j->out, j->fill, j->pg, l.stream); break;
    case K_PAD_BACK: rc = k->pad_backward(j->dtype, j->a, j->out, j->pg, l.stream); break;
    case K_UP: rc = k->upsample(j->dtype, j->bilinear, j->a, j->out, j->ug, l.stream); break;
    default: rc = k->upsample_backward(j->dtype, j->bilinear, j->a, j->out, j->ug, l.stream); break;
  }
  lt_cuda_launch_end(&l);
  return lt_cuda_launch_result(&l, op, rc, lt_cuda_ck_kernels(&l)->error_string);
}

static lt_ck_pad_geom pad_geom(const lt_pad_geom *p) {
  lt_ck_pad_geom g;
  memset(&g, 0, sizeof g);
  g.ndim = p->ndim; g.k = p->k; g.mode = p->mode; g.outer = p->outer;
  memcpy(g.in, p->in, sizeof(int64_t) * (size_t)p->ndim);
  memcpy(g.out, p->out, sizeof(int64_t) * (size_t)p->ndim);
  memcpy(g.left, p->left, sizeof(int64_t) * (size_t)p->ndim);
  return g;
}

/* y = the result of running j over t into a new tensor of (nd, sizes); NULL, *refused */
static lt_tensor *apply(const char *op, lt_tensor *t, lt_dtype dt, int nd, const int64_t *sizes, job *j,
                        bool *refused) {
  lt_tensor *x = lt_tensor_contiguous(t);
  if (!x) return NULL;
  lt_tensor *y = lt_tensor_new(dt, lt_tensor_device(x), nd, sizes);
  int rc = y ? 0 : -1;
  if (y && y->numel > 0) {
    if (x->numel == 0) rc = lt_tensor_fill_(y, lt_scalar_int(0));
    else {
      j->a = lt_tensor_data(x);
      j->out = lt_tensor_data(y);
      rc = run(op, x, j);
    }
  }
  lt_tensor_release(x);
  if (rc != 0) { lt_tensor_release(y); y = NULL; }
  if (rc > 0) *refused = true;
  return y;
}

#define FALLBACK(NAME, DT, ...) LT_CUDA_FALLBACK(NAME, #NAME, DT, __VA_ARGS__)

lt_tensor *lt_cuda_pad(lt_tensor *self, lt_intlist pad, const char *mode, double value) {
  const char *op = "pad";
  lt_pad_geom p;
  if (lt_meta_pad(op, self, pad, mode, &p)) return NULL;
  lt_ck_pad_geom g = pad_geom(&p);
  /* the fill value in the input's dtype, converted as the copy kernel converts */
  _Alignas(16) unsigned char fill[16];
  lt_ck_geom g0;
  lt_cuda_geom_init(&g0, 0, NULL);
  (void)lt_ck_host_copy(fill, self->dtype, &value, LT_CK_FLOAT64, &g0, NULL);
  job j = {K_PAD, (int)lt_dtype_size((lt_dtype)self->dtype), 0, NULL, fill, NULL, &g, NULL};
  bool refused = false;
  lt_tensor *y = apply(op, self, (lt_dtype)self->dtype, p.ndim, p.out, &j, &refused);
  if (refused) FALLBACK(pad, (lt_dtype)self->dtype, self, pad, mode, value);
  return y;
}

lt_tensor *lt_cuda_pad_backward(lt_tensor *grad_output, lt_intlist input_size, lt_intlist pad, const char *mode) {
  const char *op = "pad_backward";
  lt_pad_geom p;
  if (lt_meta_pad_backward(op, grad_output, input_size, pad, mode, &p)) return NULL;
  lt_ck_pad_geom g = pad_geom(&p);
  job j = {K_PAD_BACK, grad_output->dtype, 0, NULL, NULL, NULL, &g, NULL};
  bool refused = false;
  lt_tensor *gx = apply(op, grad_output, (lt_dtype)grad_output->dtype, p.ndim, p.in, &j, &refused);
  if (refused) FALLBACK(pad_backward, (lt_dtype)grad_output->dtype, grad_output, input_size, pad, mode);
  return gx;
}

static lt_ck_up_geom up_geom(const lt_upsample_geom *q) {
  lt_ck_up_geom g = {q->P, q->H, q->W, q->OH, q->OW, q->align_corners, q->scale_h, q->scale_w,
                     lt_meta_nearest_ratio(q->H, q->OH, q->scale_h), lt_meta_nearest_ratio(q->W, q->OW, q->scale_w)};
  return g;
}

static lt_tensor *up(const char *op, bool back, bool bilinear, lt_tensor *t, const lt_upsample_geom *q,
                     bool *refused) {
  lt_ck_up_geom g = up_geom(q);
  job j = {back ? K_UP_BACK : K_UP, t->dtype, bilinear, NULL, NULL, NULL, NULL, &g};
  return apply(op, t, (lt_dtype)t->dtype, 4, back ? q->in_sizes : q->out_sizes, &j, refused);
}

lt_tensor *lt_cuda_upsample_nearest2d(lt_tensor *self, lt_intlist output_size, double scales_h, double scales_w) {
  const char *op = "upsample_nearest2d";
  lt_upsample_geom q;
  if (lt_meta_upsample2d(op, self, output_size, false, scales_h, scales_w, &q)) return NULL;
  bool refused = false;
  lt_tensor *y = up(op, false, false, self, &q, &refused);
  if (refused) FALLBACK(upsample_nearest2d, (lt_dtype)self->dtype, self, output_size, scales_h, scales_w);
  return y;
}

lt_tensor *lt_cuda_upsample_nearest2d_backward(lt_tensor *grad_output, lt_intlist output_size, lt_intlist input_size,
                                               double scales_h, double scales_w) {
  const char *op = "upsample_nearest2d_backward";
  lt_upsample_geom q;
  if (lt_meta_upsample2d_backward(op, grad_output, output_size, input_size, false, scales_h, scales_w, &q))
    return NULL;
  bool refused = false;
  lt_tensor *gx = up(op, true, false, grad_output, &q, &refused);
  if (refused)
    FALLBACK(upsample_nearest2d_backward, (lt_dtype)grad_output->dtype, grad_output, output_size, input_size,
             scales_h, scales_w);
  return gx;
}

lt_tensor *lt_cuda_upsample_bilinear2d(lt_tensor *self, lt_intlist output_size, bool align_corners, double scales_h,
                                       double scales_w) {
  const char *op = "upsample_bilinear2d";
  lt_upsample_geom q;
  if (lt_meta_upsample2d(op, self, output_size, align_corners, scales_h, scales_w, &q)) return NULL;
  bool refused = false;
  lt_tensor *y = up(op, false, true, self, &q, &refused);
  if (refused)
    FALLBACK(upsample_bilinear2d, (lt_dtype)self->dtype, self, output_size, align_corners, scales_h, scales_w);
  return y;
}

lt_tensor *lt_cuda_upsample_bilinear2d_backward(lt_tensor *grad_output, lt_intlist output_size,
                                                lt_intlist input_size, bool align_corners, double scales_h,
                                                double scales_w) {
  const char *op = "upsample_bilinear2d_backward";
  lt_upsample_geom q;
  if (lt_meta_upsample2d_backward(op, grad_output, output_size, input_size, align_corners, scales_h, scales_w, &q))
    return NULL;
  bool refused = false;
  lt_tensor *gx = up(op, true, true, grad_output, &q, &refused);
  if (refused)
    FALLBACK(upsample_bilinear2d_backward, (lt_dtype)grad_output->dtype, grad_output, output_size, input_size,
             align_corners, scales_h, scales_w);
  return gx;
}
