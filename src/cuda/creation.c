/*
** creation.c — the CUDA kernels of the creation ops: zeros, ones, full,
** empty and their _like / new_ forms (a new tensor and the backend's fill:
** a memset or the fill kernel), arange, range, linspace, logspace and eye
** (the sequence kernels of creation.cu). Checks and lengths are the CPU's,
** from meta/creation.h. `empty` runs no kernel, but has a CUDA entry so the
** CPU's never runs on a device tensor.
**
** Nothing here has run on a GPU: the host build runs under the fake driver.
*/
#include <string.h>
#include "core/error.h"
#include "cuda/creation.h"
#include "dispatch/dispatch.h"
#include "meta/creation.h"
#include "kernels_cuda.h"   /* generated: lt_ops.h, the kernel types */

/* weak: NULL where the module was built without nvcc (launch.c) */
extern const lt_ck_random_kernels *lt_ck_random_device_kernels(void) __attribute__((weak));

bool lt_cuda_have_random_device_kernels(void) { return lt_ck_random_device_kernels != NULL; }

const lt_ck_random_kernels *lt_cuda_random_kernels(const lt_cuda_launch *l) {
  return l->host ? lt_ck_host_random_kernels() : lt_ck_random_device_kernels ? lt_ck_random_device_kernels() : NULL;
}

/* one launch of the sampler (r) or the sequence (q) kernel */
static int run(const char *op, int dev, const lt_ck_rng_args *r, const lt_ck_seq_args *q) {
  lt_cuda_launch l;
  if (lt_cuda_launch_begin(&l, dev, lt_cuda_have_random_device_kernels(), op) < 0) return -1;
  const lt_ck_random_kernels *k = lt_cuda_random_kernels(&l);
  int rc = r ? k->random(r, l.stream) : k->seq(q, l.stream);
  lt_cuda_launch_end(&l);
  return lt_cuda_launch_result(&l, op, rc, k->error_string);
}

int lt_cuda_run_random(const char *op, int dev, const lt_ck_rng_args *a) { return run(op, dev, a, NULL); }
int lt_cuda_run_seq(const char *op, int dev, const lt_ck_seq_args *a) { return run(op, dev, NULL, a); }

/* ---- constants ---- */

static lt_tensor *filled(const char *op, int ndim, const int64_t *sizes, lt_scalar v, int dtype, int dflt,
                         lt_device dev) {
  lt_tensor *t = lt_meta_creation_new(op, ndim, sizes, dtype, dflt, dev);
  if (!t) return NULL;
  unsigned char elem[8];
  if (lt_meta_fill_value(op, v, (lt_dtype)t->dtype, elem) < 0 || lt_tensor_fill_(t, v) < 0) {
    lt_tensor_release(t);
    return NULL;
  }
  return t;
}

#define DFLT ((int)lt_get_default_dtype())
static lt_device like(const lt_tensor *self, lt_device d) { return d.type >= 0 ? d : lt_tensor_device(self); }

lt_tensor *lt_cuda_zeros(lt_intlist size, int dtype, lt_device device) {
  return filled("zeros", size.n, size.v, lt_scalar_int(0), dtype, DFLT, device);
}
lt_tensor *lt_cuda_ones(lt_intlist size, int dtype, lt_device device) {
  return filled("ones", size.n, size.v, lt_scalar_int(1), dtype, DFLT, device);
}
lt_tensor *lt_cuda_empty(lt_intlist size, int dtype, lt_device device) {
  return lt_meta_creation_new("empty", size.n, size.v, dtype, DFLT, device);
}
lt_tensor *lt_cuda_full(lt_intlist size, lt_scalar fill_value, int dtype, lt_device device) {
  return filled("full", size.n, size.v, fill_value, dtype, (int)lt_scalar_dtype(fill_value), device);
}
lt_tensor *lt_cuda_zeros_like(lt_tensor *self, int dtype, lt_device device) {
  return filled("zeros_like", self->ndim, self->sizes, lt_scalar_int(0), dtype, self->dtype, like(self, device));
}
lt_tensor *lt_cuda_ones_like(lt_tensor *self, int dtype, lt_device device) {
  return filled("ones_like", self->ndim, self->sizes, lt_scalar_int(1), dtype, self->dtype, like(self, device));
}
lt_tensor *lt_cuda_empty_like(lt_tensor *self, int dtype, lt_device device) {
  return lt_meta_creation_new("empty_like", self->ndim, self->sizes, dtype, self->dtype, like(self, device));
}
lt_tensor *lt_cuda_full_like(lt_tensor *self, lt_scalar fill_value, int dtype, lt_device device) {
  return filled("full_like", self->ndim, self->sizes, fill_value, dtype, self->dtype, like(self, device));
}
lt_tensor *lt_cuda_new_zeros(lt_tensor *self, lt_intlist size, int dtype, lt_device device) {
  return filled("new_zeros", size.n, size.v, lt_scalar_int(0), dtype, self->dtype, like(self, device));
}
lt_tensor *lt_cuda_new_ones(lt_tensor *self, lt_intlist size, int dtype, lt_device device) {
  return filled("new_ones", size.n, size.v, lt_scalar_int(1), dtype, self->dtype, like(self, device));
}
lt_tensor *lt_cuda_new_empty(lt_tensor *self, lt_intlist size, int dtype, lt_device device) {
  return lt_meta_creation_new("new_empty", size.n, size.v, dtype, self->dtype, like(self, device));
}
lt_tensor *lt_cuda_new_full(lt_tensor *self, lt_intlist size, lt_scalar fill_value, int dtype, lt_device device) {
  return filled("new_full", size.n, size.v, fill_value, dtype, self->dtype, like(self, device));
}

/* ---- sequences ---- */

/* run a into a new 1-D or 2-D tensor t (already made); t released on failure */
static lt_tensor *run_seq(const char *op, lt_tensor *t, lt_ck_seq_args *a) {
  a->dtype = t->dtype;
  a->out = lt_tensor_data(t);
  a->n = t->numel;
  int rc = t->numel ? lt_cuda_run_seq(op, lt_tensor_device(t).index, a) : 0;
  if (rc == 0) return t;
  if (rc > 0) lt_error("%s: not implemented for cuda %s tensors (the CUDA kernels refuse it)", op,
                       lt_dtype_name((lt_dtype)t->dtype));
  lt_tensor_release(t);
  return NULL;
}

static lt_tensor *make_range(const char *op, lt_scalar start, lt_scalar end, lt_scalar step, int dtype,
                             lt_device device, bool inclusive) {
  lt_meta_seq m;
  if (lt_meta_range(op, start, end, step, inclusive, &m) < 0) return NULL;
  lt_tensor *t = lt_meta_creation_new(op, 1, &m.n, dtype, (int)m.dflt, device);
  if (!t) return NULL;
  /* int sequences into float dtypes go through double: exact up to 2^53 */
  bool is_int = m.is_int && !lt_dtype_is_float((lt_dtype)t->dtype);
  lt_ck_seq_args a = { .kind = is_int ? LT_CK_SEQ_INT : LT_CK_SEQ_FLOAT, .istart = m.istart, .istep = m.istep,
                       .fstart = m.fstart, .fstep = m.fstep };
  return run_seq(op, t, &a);
}

lt_tensor *lt_cuda_arange(lt_scalar start, lt_scalar end, lt_scalar step, int dtype, lt_device device) {
  if (lt_scalar_is_none(end)) { end = start; start = lt_scalar_int(0); }
  return make_range("arange", start, end, step, dtype, device, false);
}

lt_tensor *lt_cuda_range(lt_scalar start, lt_scalar end, lt_scalar step, int dtype, lt_device device) {
  return make_range("range", start, end, step, dtype, device, true);
}

static lt_tensor *make_lin(const char *op, lt_scalar start, lt_scalar end, int64_t steps, int dtype,
                           lt_device device, bool log, double base) {
  if (steps < 0) return lt_error_null("%s: argument 'steps' must be non-negative, got %lld", op, (long long)steps);
  lt_tensor *t = lt_meta_creation_new(op, 1, &steps, dtype, DFLT, device);
  if (!t) return NULL;
  lt_ck_seq_args a = { .kind = LT_CK_SEQ_LINSPACE, .fstart = lt_scalar_to_double(start),
                       .fend = lt_scalar_to_double(end), .base = base, .log = log };
  a.fstep = steps > 1 ? (a.fend - a.fstart) / (double)(steps - 1) : 0.0;
  if (steps == 1) a.fend = a.fstart;   /* one step gives start, as in PyTorch */
  return run_seq(op, t, &a);
}

lt_tensor *lt_cuda_linspace(lt_scalar start, lt_scalar end, int64_t steps, int dtype, lt_device device) {
  return make_lin("linspace", start, end, steps, dtype, device, false, 0);
}

lt_tensor *lt_cuda_logspace(lt_scalar start, lt_scalar end, int64_t steps, double base, int dtype, lt_device device) {
  return make_lin("logspace", start, end, steps, dtype, device, true, base);
}

lt_tensor *lt_cuda_eye(int64_t n, int64_t m, int dtype, lt_device device) {
  if (m == LT_NOINT) m = n;
  if (n < 0) return lt_error_null("eye: argument 'n' must be non-negative, got %lld", (long long)n);
  if (m < 0) return lt_error_null("eye: argument 'm' must be non-negative, got %lld", (long long)m);
  int64_t sizes[2] = { n, m };
  lt_tensor *t = lt_meta_creation_new("eye", 2, sizes, dtype, DFLT, device);
  if (!t) return NULL;
  lt_ck_seq_args a = { .kind = LT_CK_SEQ_EYE, .cols = m > 0 ? m : 1 };
  return run_seq("eye", t, &a);
}
