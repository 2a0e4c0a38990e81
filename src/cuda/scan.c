/*
** scan.c — the CUDA kernels of the scans along one dim: cumsum, cumprod,
** cummax, cummin, logcumsumexp, over the scan kernel of
** src/cuda/kernels/reduce.cu (one thread per line, serially, in both builds).
**
** As on the CPU: cumsum and cumprod give int64 for integer and bool inputs
** (dtype= converts the input first) and accumulate in float32 for 16-bit
** floats; cummax and cummin give the input dtype and the 1-based index of the
** last of equal extremes (NaN wins); logcumsumexp runs in double. The input
** is read through its strides; results are contiguous. What the kernels
** refuse (more than 8 dims after merging) runs the CPU's kernel under the
** fake driver and is an error naming the op under a real one. Nothing here
** has run on a GPU.
*/
#include <string.h>
#include "core/error.h"
#include "cuda/cuda.h"
#include "cuda/reduce_launch.h"
#include "dispatch/dispatch.h"
#include "meta/reduce.h"
#include "kernels_cuda.h"   /* generated: lt_ops.h, the kernel types */

/* kop over the lines of x along dim into out (and out2, indices), both
** contiguous in x's shape: 0, 1 refused, -1 error */
static int scan_run(const char *op, int kop, const lt_tensor *x, int d, lt_tensor *out, lt_tensor *out2) {
  if (x->numel == 0) return 0;
  lt_ck_red_geom g;
  lt_cuda_line_geom(&g, x, d, out, out);
  int64_t n = x->ndim ? x->sizes[d] : 1, ist = x->ndim ? x->strides[d] : 0, ost = x->ndim ? out->strides[d] : 0;
  lt_cuda_launch l;
  const lt_ck_reduce_kernels *kk;
  if (lt_cuda_red_begin(&l, lt_tensor_device(x).index, op, &kk) < 0) return -1;
  int rc = kk->scan(kop, x->dtype, lt_tensor_data(out), out2 ? lt_tensor_data(out2) : NULL, lt_tensor_data(x), n, ist,
                    ost, ost, &g, l.stream);
  lt_cuda_launch_end(&l);
  return lt_cuda_launch_result(&l, op, rc, kk->error_string);
}

static int accum(const char *op, bool prod, lt_tensor *self, int64_t dim, int dtype, lt_tensor *out, lt_tensor **res) {
  lt_dtype in = (lt_dtype)self->dtype, rdt;
  (void)lt_meta_reduce_dtype(op, in, dtype, false, &rdt);   /* the sum's rule; fails only for mean */
  lt_line_geom lg;
  if (lt_meta_line(op, self->ndim, self->sizes, dim, &lg) < 0) return -1;
  lt_tensor *x = self, *own = NULL;
  if (dtype >= 0 && dtype != (int)in) {
    bool refused = false;
    if (!(x = own = lt_cuda_converted(op, self, (lt_dtype)dtype, &refused))) return refused ? 1 : -1;
  }
  lt_dtype xdt = (lt_dtype)x->dtype;
  lt_dtype adt = xdt == LT_FLOAT64 ? LT_FLOAT64 : lt_dtype_is_float(xdt) ? LT_FLOAT32 : LT_INT64;
  lt_tensor *y = lt_tensor_new(adt, lt_tensor_device(x), x->ndim, x->sizes);
  int rc = y ? scan_run(op, prod ? LT_CK_SCAN_CUMPROD : LT_CK_SCAN_CUMSUM, x, lg.d, y, NULL) : -1;
  lt_tensor_release(own);
  if (rc != 0) { lt_tensor_release(y); return rc; }
  *res = lt_cuda_red_finish(op, y, rdt, out);
  return *res ? 0 : -1;
}

lt_tensor *lt_cuda_cumsum(lt_tensor *self, int64_t dim, int dtype, lt_tensor *out) {
  lt_tensor *r = NULL;
  if (accum("cumsum", false, self, dim, dtype, out, &r) <= 0) return r;
  LT_CUDA_FALLBACK(cumsum, "cumsum", (lt_dtype)self->dtype, self, dim, dtype, out);
}
lt_tensor *lt_cuda_cumprod(lt_tensor *self, int64_t dim, int dtype, lt_tensor *out) {
  lt_tensor *r = NULL;
  if (accum("cumprod", true, self, dim, dtype, out, &r) <= 0) return r;
  LT_CUDA_FALLBACK(cumprod, "cumprod", (lt_dtype)self->dtype, self, dim, dtype, out);
}

static int sel(const char *op, bool is_max, lt_tensor *self, int64_t dim, lt_tensor **values, lt_tensor **indices) {
  lt_line_geom lg;
  if (lt_meta_line(op, self->ndim, self->sizes, dim, &lg) < 0) return -1;
  lt_tensor *v = lt_tensor_new((lt_dtype)self->dtype, lt_tensor_device(self), self->ndim, self->sizes);
  lt_tensor *ix = v ? lt_tensor_new(LT_INT64, lt_tensor_device(self), self->ndim, self->sizes) : NULL;
  int rc = ix ? scan_run(op, is_max ? LT_CK_SCAN_CUMMAX : LT_CK_SCAN_CUMMIN, self, lg.d, v, ix) : -1;
  if (rc != 0) { lt_tensor_release(v); lt_tensor_release(ix); return rc; }
  *values = v;
  *indices = ix;
  return 0;
}

int lt_cuda_cummax(lt_tensor *self, int64_t dim, lt_tensor **values, lt_tensor **indices) {
  int rc = sel("cummax", true, self, dim, values, indices);
  if (rc <= 0) return rc;
  LT_CUDA_FALLBACK_INT(cummax, "cummax", (lt_dtype)self->dtype, self, dim, values, indices);
}
int lt_cuda_cummin(lt_tensor *self, int64_t dim, lt_tensor **values, lt_tensor **indices) {
  int rc = sel("cummin", false, self, dim, values, indices);
  if (rc <= 0) return rc;
  LT_CUDA_FALLBACK_INT(cummin, "cummin", (lt_dtype)self->dtype, self, dim, values, indices);
}

lt_tensor *lt_cuda_logcumsumexp(lt_tensor *self, int64_t dim) {
  const char *op = "logcumsumexp";
  if (lt_meta_check_float(op, "self", self) < 0) return NULL;
  lt_line_geom lg;
  if (lt_meta_line(op, self->ndim, self->sizes, dim, &lg) < 0) return NULL;
  lt_tensor *y = lt_tensor_new((lt_dtype)self->dtype, lt_tensor_device(self), self->ndim, self->sizes);
  int rc = y ? scan_run(op, LT_CK_SCAN_LOGCUMSUMEXP, self, lg.d, y, NULL) : -1;
  if (rc == 0) return y;
  lt_tensor_release(y);
  if (rc < 0) return NULL;
  LT_CUDA_FALLBACK(logcumsumexp, op, (lt_dtype)self->dtype, self, dim);
}
