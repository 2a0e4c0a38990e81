/*
** reduce.c — the CUDA kernels of the reductions (sum, nansum, mean, nanmean,
** prod, max, min, amax, amin, argmax, argmin, all, any, count_nonzero, var,
** std, var_mean, std_mean, norm, logsumexp) over src/cuda/kernels/reduce.cu.
**
** Each op does what the CPU's does around its loop, in the same order: the
** checks of meta/reduce.h (dims, dtype, correction, empty max/min), dtype=
** converting the input first, the kernel writing a buffer of the result's
** shape in the CPU's accumulation dtype (float32 for float16 sums, float64
** for statistics, int64 for integer sums), and that buffer converted into
** the result dtype or written into out= by copy_. The input is read in place
** through its strides (no contiguous copy); the reduced elements are walked
** in logical order, so argmax of a flattened tensor and ties come out as on
** the CPU.
**
** The build that runs is launch.h's choice (the host build under the fake
** driver). What the kernels refuse (more than 8 kept or reduced dims after
** merging) runs the CPU's kernel under the fake driver and is an error naming
** the op under a real one. Nothing here has run on a GPU.
*/
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "cuda/cuda.h"
#include "cuda/kernels/reduce.h"
#include "cuda/launch.h"
#include "cuda/reduce_launch.h"
#include "dispatch/dispatch.h"
#include "meta/reduce.h"
#include "kernels_cuda.h"   /* generated: lt_ops.h, the kernel types */

/* ---- planning and launching (reduce_launch.h) ---- */

int lt_cuda_red_plan(lt_cuda_red *p, const char *op, const lt_tensor *x, lt_intlist dims, bool keepdim) {
  bool mask[LT_MAX_DIMS] = {0};
  memset(p, 0, sizeof *p);
  p->op = op;
  p->dev = lt_tensor_device(x).index;
  if (lt_meta_reduce(op, x->ndim, x->sizes, dims, keepdim, mask, &p->nd, p->sizes) < 0) return -1;
  int k = 0, r = 0;
  p->nout = 1;
  p->R = 1;
  for (int d = 0; d < x->ndim; d++) {
    if (!mask[d]) {
      p->g.sizes[k] = x->sizes[d];
      p->g.in_strides[k++] = x->strides[d];
      p->nout *= x->sizes[d];
    } else {
      p->g.rsizes[r] = x->sizes[d];
      p->g.rstrides[r++] = x->strides[d];
      p->R *= x->sizes[d];
    }
  }
  p->g.ndim = k;
  p->g.rdim = r;
  /* the result buffer is contiguous in the result's shape: over the kept dims too */
  lt_contiguous_strides(k, p->g.sizes, p->g.out_strides);
  memcpy(p->g.out2_strides, p->g.out_strides, sizeof(int64_t) * (size_t)k);
  return 0;
}

void lt_cuda_line_geom(lt_ck_red_geom *g, const lt_tensor *x, int d, const lt_tensor *out, const lt_tensor *out2) {
  memset(g, 0, sizeof *g);
  int k = 0;
  for (int i = 0; i < x->ndim; i++) {
    if (i == d) continue;
    g->sizes[k] = x->sizes[i];
    g->in_strides[k] = x->strides[i];
    g->out_strides[k] = out->strides[i];
    g->out2_strides[k] = out2 ? out2->strides[i] : 0;
    k++;
  }
  g->ndim = k;
}

extern const lt_ck_reduce_kernels *lt_ck_reduce_device_kernels(void) __attribute__((weak));

int lt_cuda_red_begin(lt_cuda_launch *l, int dev, const char *op, const lt_ck_reduce_kernels **k) {
  if (lt_cuda_launch_begin(l, dev, lt_ck_reduce_device_kernels != NULL, op) < 0) return -1;
  *k = l->host ? lt_ck_host_reduce_kernels() : lt_ck_reduce_device_kernels();
  return 0;
}

int lt_cuda_red_run(const lt_cuda_red *p, int kop, const lt_tensor *x, lt_tensor *out, lt_tensor *out2, double par) {
  if (p->nout == 0) return 0;
  lt_tensor *work = NULL;
  int64_t nch = lt_ck_red_chunks(p->nout, p->R);
  if (nch > 1) {
    int64_t bytes = nch * p->nout * LT_CK_RED_PARTIAL;
    if (!(work = lt_tensor_new(LT_UINT8, lt_tensor_device(x), 1, &bytes))) return -1;
  }
  lt_cuda_launch l;
  const lt_ck_reduce_kernels *k;
  if (lt_cuda_red_begin(&l, p->dev, p->op, &k) < 0) { lt_tensor_release(work); return -1; }
  int rc = k->reduce(kop, x->dtype, out ? lt_tensor_data(out) : NULL, out2 ? lt_tensor_data(out2) : NULL,
                     lt_tensor_data(x), par, &p->g, work ? lt_tensor_data(work) : NULL, l.stream);
  lt_cuda_launch_end(&l);
  lt_tensor_release(work);
  return lt_cuda_launch_result(&l, p->op, rc, k->error_string);
}

lt_tensor *lt_cuda_red_finish(const char *op, lt_tensor *buf, lt_dtype rdt, lt_tensor *out) {
  if (!buf) return NULL;
  if (!out && buf->dtype == rdt) return buf;
  lt_tensor *r = lt_meta_result(op, out, rdt, lt_tensor_device(buf), buf->ndim, buf->sizes);
  if (r && lt_tensor_copy_(r, buf) < 0) { lt_tensor_release(r); r = NULL; }
  lt_tensor_release(buf);
  return r;
}

/* ---- sum, nansum, mean, nanmean, prod ---- */

static lt_dtype acc_dtype(lt_dtype dt) {
  if (dt == LT_FLOAT64) return LT_FLOAT64;
  return lt_dtype_is_float(dt) ? LT_FLOAT32 : LT_INT64;
}

/* 0 with *res, 1 refused, -1 error */
static int fold(const char *op, int kop, lt_tensor *self, lt_intlist dim, bool keepdim, int dtype, lt_tensor *out,
                lt_tensor **res) {
  lt_dtype in = (lt_dtype)self->dtype, rdt;
  if (lt_meta_reduce_dtype(op, in, dtype, kop == LT_CK_RED_MEAN || kop == LT_CK_RED_NANMEAN, &rdt) < 0) return -1;
  lt_tensor *x = self, *own = NULL;
  if (dtype >= 0 && dtype != (int)in) {
    bool refused = false;
    if (!(x = own = lt_cuda_converted(op, self, (lt_dtype)dtype, &refused))) return refused ? 1 : -1;
  }
  lt_cuda_red p;
  int rc = -1;
  lt_tensor *buf = NULL;
  if (lt_cuda_red_plan(&p, op, x, dim, keepdim) == 0 &&
      (buf = lt_tensor_new(acc_dtype((lt_dtype)x->dtype), lt_tensor_device(x), p.nd, p.sizes)))
    rc = lt_cuda_red_run(&p, kop, x, buf, NULL, 0);
  if (rc == 0) { *res = lt_cuda_red_finish(op, buf, rdt, out); rc = *res ? 0 : -1; }
  else lt_tensor_release(buf);
  lt_tensor_release(own);
  return rc;
}

#define FOLD(NAME, KOP)                                                                           \
  lt_tensor *lt_cuda_##NAME(lt_tensor *self, lt_intlist dim, bool keepdim, int dtype, lt_tensor *out) { \
    lt_tensor *r = NULL;                                                                          \
    int rc = fold(#NAME, KOP, self, dim, keepdim, dtype, out, &r);                                \
    if (rc <= 0) return r;                                                                        \
    LT_CUDA_FALLBACK(NAME, #NAME, (lt_dtype)self->dtype, self, dim, keepdim, dtype, out);         \
  }
FOLD(sum, LT_CK_RED_SUM)
FOLD(nansum, LT_CK_RED_NANSUM)
FOLD(mean, LT_CK_RED_MEAN)
FOLD(nanmean, LT_CK_RED_NANMEAN)

lt_tensor *lt_cuda_prod(lt_tensor *self, int64_t dim, bool keepdim, int dtype, lt_tensor *out) {
  lt_intlist l = dim == LT_NOINT ? lt_intlist_none() : lt_intlist_make(&dim, 1);
  lt_tensor *r = NULL;
  int rc = fold("prod", LT_CK_RED_PROD, self, l, keepdim, dtype, out, &r);
  if (rc <= 0) return r;
  LT_CUDA_FALLBACK(prod, "prod", (lt_dtype)self->dtype, self, dim, keepdim, dtype, out);
}

/* ---- all, any, count_nonzero ---- */

static int count_op(const char *op, int kop, lt_tensor *self, lt_intlist dim, bool keepdim, lt_tensor *out,
                    lt_tensor **res) {
  lt_dtype rdt = kop == LT_CK_RED_COUNT_NZ ? LT_INT64 : self->dtype == LT_UINT8 ? LT_UINT8 : LT_BOOL;
  lt_cuda_red p;
  if (lt_cuda_red_plan(&p, op, self, dim, keepdim) < 0) return -1;
  lt_tensor *buf = lt_tensor_new(rdt, lt_tensor_device(self), p.nd, p.sizes);
  if (!buf) return -1;
  int rc = lt_cuda_red_run(&p, kop, self, buf, NULL, 0);
  if (rc != 0) { lt_tensor_release(buf); return rc; }
  *res = lt_cuda_red_finish(op, buf, rdt, out);
  return *res ? 0 : -1;
}

lt_tensor *lt_cuda_all(lt_tensor *self, lt_intlist dim, bool keepdim, lt_tensor *out) {
  lt_tensor *r = NULL;
  if (count_op("all", LT_CK_RED_ALL, self, dim, keepdim, out, &r) <= 0) return r;
  LT_CUDA_FALLBACK(all, "all", (lt_dtype)self->dtype, self, dim, keepdim, out);
}
lt_tensor *lt_cuda_any(lt_tensor *self, lt_intlist dim, bool keepdim, lt_tensor *out) {
  lt_tensor *r = NULL;
  if (count_op("any", LT_CK_RED_ANY, self, dim, keepdim, out, &r) <= 0) return r;
  LT_CUDA_FALLBACK(any, "any", (lt_dtype)self->dtype, self, dim, keepdim, out);
}
lt_tensor *lt_cuda_count_nonzero(lt_tensor *self, lt_intlist dim) {
  lt_tensor *r = NULL;
  if (count_op("count_nonzero", LT_CK_RED_COUNT_NZ, self, dim, false, NULL, &r) <= 0) return r;
  LT_CUDA_FALLBACK(count_nonzero, "count_nonzero", (lt_dtype)self->dtype, self, dim);
}

/* ---- max, min, amax, amin, argmax, argmin ---- */

/* values (*val, input dtype) and/or indices (*idx, int64, 1-based) as asked */
static int select_op(const char *op, bool is_max, lt_tensor *self, lt_intlist dims, bool keepdim, lt_tensor *vout,
                     lt_tensor *iout, lt_tensor **val, lt_tensor **idx) {
  lt_cuda_red p;
  if (lt_cuda_red_plan(&p, op, self, dims, keepdim) < 0) return -1;
  if (lt_meta_reduce_nonempty(op, p.R, p.nout, dims.n <= 0) < 0) return -1;
  lt_dtype dt = (lt_dtype)self->dtype;
  lt_tensor *vb = val ? lt_tensor_new(dt, lt_tensor_device(self), p.nd, p.sizes) : NULL;
  lt_tensor *ib = idx ? lt_tensor_new(LT_INT64, lt_tensor_device(self), p.nd, p.sizes) : NULL;
  int rc = -1;
  if ((!val || vb) && (!idx || ib)) rc = lt_cuda_red_run(&p, is_max ? LT_CK_RED_MAX : LT_CK_RED_MIN, self, vb, ib, 0);
  if (rc != 0) { lt_tensor_release(vb); lt_tensor_release(ib); return rc; }
  if (val && !(*val = lt_cuda_red_finish(op, vb, dt, vout))) { lt_tensor_release(ib); return -1; }
  if (idx && !(*idx = lt_cuda_red_finish(op, ib, LT_INT64, iout))) {
    if (val) { lt_tensor_release(*val); *val = NULL; }
    return -1;
  }
  return 0;
}


int lt_cuda_max_dim(lt_tensor *self, int64_t dim, bool keepdim, lt_tensor **values, lt_tensor **indices) {
  int rc = select_op("max", true, self, lt_intlist_make(&dim, 1), keepdim, NULL, NULL, values, indices);
  if (rc <= 0) return rc;
  LT_CUDA_FALLBACK_INT(max_dim, "max", (lt_dtype)self->dtype, self, dim, keepdim, values, indices);
}
int lt_cuda_min_dim(lt_tensor *self, int64_t dim, bool keepdim, lt_tensor **values, lt_tensor **indices) {
  int rc = select_op("min", false, self, lt_intlist_make(&dim, 1), keepdim, NULL, NULL, values, indices);
  if (rc <= 0) return rc;
  LT_CUDA_FALLBACK_INT(min_dim, "min", (lt_dtype)self->dtype, self, dim, keepdim, values, indices);
}
lt_tensor *lt_cuda_max(lt_tensor *self) {
  lt_tensor *v = NULL;
  int rc = select_op("max", true, self, lt_intlist_none(), false, NULL, NULL, &v, NULL);
  if (rc <= 0) return v;
  LT_CUDA_FALLBACK(max, "max", (lt_dtype)self->dtype, self);
}
lt_tensor *lt_cuda_min(lt_tensor *self) {
  lt_tensor *v = NULL;
  int rc = select_op("min", false, self, lt_intlist_none(), false, NULL, NULL, &v, NULL);
  if (rc <= 0) return v;
  LT_CUDA_FALLBACK(min, "min", (lt_dtype)self->dtype, self);
}
lt_tensor *lt_cuda_amax(lt_tensor *self, lt_intlist dim, bool keepdim, lt_tensor *out) {
  lt_tensor *v = NULL;
  int rc = select_op("amax", true, self, dim, keepdim, out, NULL, &v, NULL);
  if (rc <= 0) return v;
  LT_CUDA_FALLBACK(amax, "amax", (lt_dtype)self->dtype, self, dim, keepdim, out);
}
lt_tensor *lt_cuda_amin(lt_tensor *self, lt_intlist dim, bool keepdim, lt_tensor *out) {
  lt_tensor *v = NULL;
  int rc = select_op("amin", false, self, dim, keepdim, out, NULL, &v, NULL);
  if (rc <= 0) return v;
  LT_CUDA_FALLBACK(amin, "amin", (lt_dtype)self->dtype, self, dim, keepdim, out);
}
lt_tensor *lt_cuda_argmax(lt_tensor *self, int64_t dim, bool keepdim, lt_tensor *out) {
  lt_tensor *i = NULL;
  lt_intlist l = dim == LT_NOINT ? lt_intlist_none() : lt_intlist_make(&dim, 1);
  int rc = select_op("argmax", true, self, l, keepdim, NULL, out, NULL, &i);
  if (rc <= 0) return i;
  LT_CUDA_FALLBACK(argmax, "argmax", (lt_dtype)self->dtype, self, dim, keepdim, out);
}
lt_tensor *lt_cuda_argmin(lt_tensor *self, int64_t dim, bool keepdim, lt_tensor *out) {
  lt_tensor *i = NULL;
  lt_intlist l = dim == LT_NOINT ? lt_intlist_none() : lt_intlist_make(&dim, 1);
  int rc = select_op("argmin", false, self, l, keepdim, NULL, out, NULL, &i);
  if (rc <= 0) return i;
  LT_CUDA_FALLBACK(argmin, "argmin", (lt_dtype)self->dtype, self, dim, keepdim, out);
}

/* ---- var, std, var_mean, std_mean, norm, logsumexp: float64 buffers ---- */

static int stats(const char *op, int kop, double par, lt_tensor *self, lt_intlist dim, bool keepdim, lt_dtype rdt,
                 lt_tensor *out, lt_tensor **r1, lt_tensor **r2) {
  lt_cuda_red p;
  if (lt_cuda_red_plan(&p, op, self, dim, keepdim) < 0) return -1;
  lt_tensor *b1 = lt_tensor_new(LT_FLOAT64, lt_tensor_device(self), p.nd, p.sizes);
  lt_tensor *b2 = r2 && b1 ? lt_tensor_new(LT_FLOAT64, lt_tensor_device(self), p.nd, p.sizes) : NULL;
  int rc = -1;
  if (b1 && (!r2 || b2)) rc = lt_cuda_red_run(&p, kop, self, b1, b2, par);
  if (rc != 0) { lt_tensor_release(b1); lt_tensor_release(b2); return rc; }
  if (!(*r1 = lt_cuda_red_finish(op, b1, rdt, out))) { lt_tensor_release(b2); return -1; }
  if (r2 && !(*r2 = lt_cuda_red_finish(op, b2, rdt, NULL))) { lt_tensor_release(*r1); *r1 = NULL; return -1; }
  return 0;
}

static int var_impl(const char *op, bool sq, lt_tensor *self, lt_intlist dim, int unbiased, bool keepdim,
                    lt_scalar correction, lt_tensor *out, lt_tensor **r1, lt_tensor **r2) {
  double corr;
  if (lt_meta_var_correction(op, (lt_dtype)self->dtype, unbiased, correction, &corr) < 0) return -1;
  return stats(op, sq ? LT_CK_RED_STD : LT_CK_RED_VAR, corr, self, dim, keepdim, (lt_dtype)self->dtype, out, r1, r2);
}

lt_tensor *lt_cuda_var(lt_tensor *self, lt_intlist dim, int unbiased, bool keepdim, lt_scalar correction,
                       lt_tensor *out) {
  lt_tensor *r = NULL;
  if (var_impl("var", false, self, dim, unbiased, keepdim, correction, out, &r, NULL) <= 0) return r;
  LT_CUDA_FALLBACK(var, "var", (lt_dtype)self->dtype, self, dim, unbiased, keepdim, correction, out);
}
lt_tensor *lt_cuda_std(lt_tensor *self, lt_intlist dim, int unbiased, bool keepdim, lt_scalar correction,
                       lt_tensor *out) {
  lt_tensor *r = NULL;
  if (var_impl("std", true, self, dim, unbiased, keepdim, correction, out, &r, NULL) <= 0) return r;
  LT_CUDA_FALLBACK(std, "std", (lt_dtype)self->dtype, self, dim, unbiased, keepdim, correction, out);
}
int lt_cuda_var_mean(lt_tensor *self, lt_intlist dim, int unbiased, bool keepdim, lt_scalar correction,
                     lt_tensor **var, lt_tensor **mean) {
  int rc = var_impl("var_mean", false, self, dim, unbiased, keepdim, correction, NULL, var, mean);
  if (rc <= 0) return rc;
  LT_CUDA_FALLBACK_INT(var_mean, "var_mean", (lt_dtype)self->dtype, self, dim, unbiased, keepdim, correction, var, mean);
}
int lt_cuda_std_mean(lt_tensor *self, lt_intlist dim, int unbiased, bool keepdim, lt_scalar correction,
                     lt_tensor **std, lt_tensor **mean) {
  int rc = var_impl("std_mean", true, self, dim, unbiased, keepdim, correction, NULL, std, mean);
  if (rc <= 0) return rc;
  LT_CUDA_FALLBACK_INT(std_mean, "std_mean", (lt_dtype)self->dtype, self, dim, unbiased, keepdim, correction, std, mean);
}

static int norm_impl(const char *op, double p, lt_tensor *self, lt_intlist dim, bool keepdim, int dtype,
                     lt_tensor *out, lt_tensor **r) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (lt_meta_norm_check(op, dt, dtype, p) < 0) return -1;
  return stats(op, LT_CK_RED_NORM, p, self, dim, keepdim, dtype >= 0 ? (lt_dtype)dtype : dt, out, r, NULL);
}

lt_tensor *lt_cuda_norm(lt_tensor *self, lt_scalar p, lt_intlist dim, bool keepdim, int dtype, lt_tensor *out) {
  lt_tensor *r = NULL;
  double pv = lt_scalar_is_none(p) ? 2.0 : lt_scalar_to_double(p);
  if (norm_impl("norm", pv, self, dim, keepdim, dtype, out, &r) <= 0) return r;
  LT_CUDA_FALLBACK(norm, "norm", (lt_dtype)self->dtype, self, p, dim, keepdim, dtype, out);
}
lt_tensor *lt_cuda_norm_str(lt_tensor *self, const char *p, lt_intlist dim, bool keepdim, int dtype, lt_tensor *out) {
  if (strcmp(p, "fro") != 0) return lt_error_null("norm: argument 'p' must be a number or \"fro\", got \"%s\"", p);
  lt_tensor *r = NULL;
  if (norm_impl("norm", 2.0, self, dim, keepdim, dtype, out, &r) <= 0) return r;
  LT_CUDA_FALLBACK(norm_str, "norm", (lt_dtype)self->dtype, self, p, dim, keepdim, dtype, out);
}

lt_tensor *lt_cuda_logsumexp(lt_tensor *self, lt_intlist dim, bool keepdim, lt_tensor *out) {
  lt_dtype dt = (lt_dtype)self->dtype;
  lt_tensor *r = NULL;
  lt_dtype rdt = lt_dtype_is_float(dt) ? dt : lt_get_default_dtype();
  if (stats("logsumexp", LT_CK_RED_LOGSUMEXP, 0, self, dim, keepdim, rdt, out, &r, NULL) <= 0) return r;
  LT_CUDA_FALLBACK(logsumexp, "logsumexp", dt, self, dim, keepdim, out);
}
