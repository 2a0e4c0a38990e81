/*
** pool.c — the CUDA kernels of the 2-D pools (max_pool2d_with_indices,
** adaptive_max_pool2d, max_pool2d_backward, avg_pool2d and its backward,
** adaptive_avg_pool2d and its backward) over src/cuda/kernels/conv.cu, with
** the CPU's checks and windows (meta/pool.h). Every kernel is one thread
** per output element; the backwards gather (one thread per input element,
** over the outputs whose windows can hold it), so they need no atomics and
** add in the CPU's order.
**
** Nothing here has run on a GPU: tested with the host build under the fake
** driver (tests/lua/cuda/test_conv.lua).
*/
#include <string.h>
#include "core/error.h"
#include "cuda/conv.h"
#include "dispatch/dispatch.h"
#include "meta/pool.h"
#include "kernels_cuda.h"   /* generated: lt_ops.h, the kernel types */

static lt_ck_pool_geom kgeom(const lt_pool_geom *q) {
  lt_ck_pool_geom g = {q->P, q->H, q->W, q->OH, q->OW, q->kh, q->kw, q->sh, q->sw, q->ph, q->pw, q->dh, q->dw,
                       q->divisor, q->adaptive, q->count_include_pad};
  return g;
}

/* a tensor of x's shape with q's output plane */
static lt_tensor *new_planes(const lt_pool_geom *q, const lt_tensor *x, lt_dtype dt) {
  int64_t sz[LT_MAX_DIMS];
  lt_meta_pool_out_sizes(q, x->ndim, x->sizes, sz);
  return lt_tensor_new(dt, lt_tensor_device(x), x->ndim, sz);
}

enum { K_MAX, K_MAX_BACK, K_AVG, K_AVG_BACK };

/* run one pool kernel; 0, -1 set, 1 refused */
static int run(const char *op, int which, const lt_pool_geom *q, const lt_tensor *on, int dtype, const void *a,
               const int64_t *ix_in, void *out, int64_t *ix_out, int *bad) {
  lt_ck_pool_geom g = kgeom(q);
  lt_cuda_launch l;
  if (lt_cuda_conv_launch_begin(&l, on, op) < 0) return -1;
  const lt_ck_conv_kernels *k = lt_cuda_conv_kernels(&l);
  int rc;
  switch (which) {
    case K_MAX: rc = k->max_pool(dtype, a, out, ix_out, &g, l.stream); break;
    case K_MAX_BACK: rc = k->max_pool_backward(dtype, a, ix_in, out, bad, &g, l.stream); break;
    case K_AVG: rc = k->avg_pool(dtype, a, out, &g, l.stream); break;
    default: rc = k->avg_pool_backward(dtype, a, out, &g, l.stream); break;
  }
  lt_cuda_launch_end(&l);
  return lt_cuda_launch_result(&l, op, rc, lt_cuda_ck_kernels(&l)->error_string);
}

/* values and indices of a max pool; 0, -1, or 1 refused */
static int max_run(const char *op, const lt_pool_geom *q, lt_tensor *self, lt_tensor **values, lt_tensor **indices) {
  lt_tensor *x = lt_tensor_contiguous(self);
  if (!x) return -1;
  *values = new_planes(q, x, (lt_dtype)x->dtype);
  *indices = *values ? new_planes(q, x, LT_INT64) : NULL;
  int rc = -1;
  if (*indices)
    rc = q->P * q->OH * q->OW == 0 ? 0
         : run(op, K_MAX, q, x, x->dtype, lt_tensor_data(x), NULL, lt_tensor_data(*values), lt_tensor_data(*indices), NULL);
  lt_tensor_release(x);
  if (rc != 0) {
    lt_tensor_release(*values); lt_tensor_release(*indices);
    *values = *indices = NULL;
  }
  return rc;
}

/* the CPU's kernel under the fake driver, an error under a real one (for the int-returning ops) */
#define FALLBACK_INT(NAME, OPSTR, DT, ...) do { \
    if (lt_cuda_host_device_memory()) { \
      lt_cuda_count_fallback(); \
      return ((lt_##NAME##_backend_fn)lt_op_table[LT_OP_##NAME].kernel[LT_KEY_CPU])(__VA_ARGS__); \
    } \
    return lt_error("%s: not implemented for cuda %s tensors (the CUDA kernels refuse it)", OPSTR, lt_dtype_name(DT)); \
  } while (0)
#define FALLBACK(NAME, DT, ...) LT_CUDA_FALLBACK(NAME, #NAME, DT, __VA_ARGS__)

int lt_cuda_max_pool2d_with_indices(lt_tensor *self, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                                    lt_intlist dilation, bool ceil_mode, lt_tensor **values, lt_tensor **indices) {
  const char *op = "max_pool2d";
  lt_pool_geom q;
  *values = *indices = NULL;
  if (lt_meta_max_pool2d(op, self, kernel_size, stride, padding, dilation, ceil_mode, &q)) return -1;
  int rc = max_run(op, &q, self, values, indices);
  if (rc > 0)
    FALLBACK_INT(max_pool2d_with_indices, op, (lt_dtype)self->dtype, self, kernel_size, stride, padding, dilation,
                 ceil_mode, values, indices);
  return rc;
}

int lt_cuda_adaptive_max_pool2d(lt_tensor *self, lt_intlist output_size, lt_tensor **values, lt_tensor **indices) {
  const char *op = "adaptive_max_pool2d";
  lt_pool_geom q;
  *values = *indices = NULL;
  if (lt_meta_adaptive_pool2d(op, self, output_size, &q)) return -1;
  int rc = max_run(op, &q, self, values, indices);
  if (rc > 0) FALLBACK_INT(adaptive_max_pool2d, op, (lt_dtype)self->dtype, self, output_size, values, indices);
  return rc;
}

lt_tensor *lt_cuda_max_pool2d_backward(lt_tensor *grad_output, lt_tensor *indices, lt_intlist input_size) {
  const char *op = "max_pool2d_backward";
  lt_pool_geom q;
  if (lt_meta_max_pool2d_backward(op, grad_output, indices, input_size, &q)) return NULL;
  lt_tensor *gy = lt_tensor_contiguous(grad_output), *ix = gy ? lt_tensor_contiguous(indices) : NULL;
  int64_t one = 1;
  lt_tensor *bad = ix ? lt_tensor_new(LT_INT32, lt_tensor_device(gy), 1, &one) : NULL;
  if (bad && lt_tensor_fill_(bad, lt_scalar_int(0)) < 0) { lt_tensor_release(bad); bad = NULL; }
  lt_tensor *gx = bad ? lt_tensor_new((lt_dtype)gy->dtype, lt_tensor_device(gy), input_size.n, input_size.v) : NULL;
  int rc = gx ? 0 : -1;
  if (gx && gx->numel > 0) {
    if (q.P * q.OH * q.OW == 0) rc = lt_tensor_fill_(gx, lt_scalar_int(0));
    else rc = run(op, K_MAX_BACK, &q, gy, gy->dtype, lt_tensor_data(gy), lt_tensor_data(ix), lt_tensor_data(gx), NULL,
                  lt_tensor_data(bad));
    if (rc == 0 && lt_tensor_item(bad).v.i) rc = lt_error("%s: argument 'indices' holds a position outside the input plane", op);
  }
  lt_tensor_release(gy); lt_tensor_release(ix); lt_tensor_release(bad);
  if (rc != 0) { lt_tensor_release(gx); gx = NULL; }
  if (rc > 0) FALLBACK(max_pool2d_backward, (lt_dtype)grad_output->dtype, grad_output, indices, input_size);
  return gx;
}

/* y = the average pool (or its backward when back) of x under q */
static lt_tensor *avg(const char *op, bool back, const lt_pool_geom *q, lt_tensor *t, lt_intlist input_size,
                      bool *refused) {
  lt_tensor *x = lt_tensor_contiguous(t);
  if (!x) return NULL;
  lt_tensor *y = back ? lt_tensor_new((lt_dtype)x->dtype, lt_tensor_device(x), input_size.n, input_size.v)
                      : new_planes(q, x, (lt_dtype)x->dtype);
  int rc = y ? 0 : -1;
  if (y && y->numel > 0) {
    if (x->numel == 0) rc = lt_tensor_fill_(y, lt_scalar_int(0));
    else rc = run(op, back ? K_AVG_BACK : K_AVG, q, x, x->dtype, lt_tensor_data(x), NULL, lt_tensor_data(y), NULL, NULL);
  }
  lt_tensor_release(x);
  if (rc != 0) { lt_tensor_release(y); y = NULL; }
  if (rc > 0) *refused = true;
  return y;
}

lt_tensor *lt_cuda_avg_pool2d(lt_tensor *self, lt_intlist kernel_size, lt_intlist stride, lt_intlist padding,
                              bool ceil_mode, bool count_include_pad, int64_t divisor_override) {
  const char *op = "avg_pool2d";
  lt_pool_geom q;
  if (lt_meta_avg_pool2d(op, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, &q))
    return NULL;
  bool refused = false;
  lt_tensor *y = avg(op, false, &q, self, lt_intlist_none(), &refused);
  if (refused)
    FALLBACK(avg_pool2d, (lt_dtype)self->dtype, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
             divisor_override);
  return y;
}

lt_tensor *lt_cuda_avg_pool2d_backward(lt_tensor *grad_output, lt_intlist input_size, lt_intlist kernel_size,
                                       lt_intlist stride, lt_intlist padding, bool ceil_mode, bool count_include_pad,
                                       int64_t divisor_override) {
  const char *op = "avg_pool2d_backward";
  lt_pool_geom q;
  if (lt_meta_avg_pool2d_backward(op, grad_output, input_size, kernel_size, stride, padding, ceil_mode,
                                  count_include_pad, divisor_override, &q)) return NULL;
  bool refused = false;
  lt_tensor *gx = avg(op, true, &q, grad_output, input_size, &refused);
  if (refused)
    FALLBACK(avg_pool2d_backward, (lt_dtype)grad_output->dtype, grad_output, input_size, kernel_size, stride, padding,
             ceil_mode, count_include_pad, divisor_override);
  return gx;
}

lt_tensor *lt_cuda_adaptive_avg_pool2d(lt_tensor *self, lt_intlist output_size) {
  const char *op = "adaptive_avg_pool2d";
  lt_pool_geom q;
  if (lt_meta_adaptive_pool2d(op, self, output_size, &q)) return NULL;
  bool refused = false;
  lt_tensor *y = avg(op, false, &q, self, lt_intlist_none(), &refused);
  if (refused) FALLBACK(adaptive_avg_pool2d, (lt_dtype)self->dtype, self, output_size);
  return y;
}

lt_tensor *lt_cuda_adaptive_avg_pool2d_backward(lt_tensor *grad_output, lt_intlist input_size) {
  const char *op = "adaptive_avg_pool2d_backward";
  lt_pool_geom q;
  if (lt_meta_adaptive_avg_pool2d_backward(op, grad_output, input_size, &q)) return NULL;
  bool refused = false;
  lt_tensor *gx = avg(op, true, &q, grad_output, input_size, &refused);
  if (refused) FALLBACK(adaptive_avg_pool2d_backward, (lt_dtype)grad_output->dtype, grad_output, input_size);
  return gx;
}
