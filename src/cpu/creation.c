/*
** creation.c — CPU kernels of the creation ops: constants, ranges, eye,
** and the *_like / new_* forms.
*/
#include <string.h>
#include <math.h>
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "core/tensor.h"
#include "cpu/parallel.h"
#include "core/rng.h"
#include "cpu/creation.h"
#include "meta/creation.h"

lt_tensor *lt_creation_new(const char *op, int ndim, const int64_t *sizes, int dtype, int dflt, lt_device dev) {
  return lt_meta_creation_new(op, ndim, sizes, dtype, dflt, dev);
}

/* ---- filling contiguous memory with one value ---- */

typedef struct fill_ctx { lt_dtype dt; void *p; unsigned char elem[16]; } fill_ctx;

static void fill_range(void *vctx, int64_t b, int64_t e) {
  fill_ctx *c = vctx;
  switch (c->dt) {
#define FILL(E, ST, CT, NAME) \
    case E: { ST x; memcpy(&x, c->elem, sizeof x); ST *q = (ST *)c->p; for (int64_t i = b; i < e; i++) q[i] = x; } break;
    LT_FORALL_DTYPES(FILL)
    LT_FORALL_COMPLEX(FILL)
#undef FILL
    default: break;
  }
}

static void fill_contig(lt_dtype dt, void *p, int64_t n, const void *elem) {
  fill_ctx c = { dt, p, {0} };
  memcpy(c.elem, elem, lt_dtype_size(dt));
  bool zero = true;
  for (size_t i = 0; i < lt_dtype_size(dt); i++) zero = zero && c.elem[i] == 0;
  if (zero) { memset(p, 0, (size_t)n * lt_dtype_size(dt)); return; }
  lt_parallel_for(n, LT_GRAIN_ELEMENTWISE, fill_range, &c);
}

static lt_tensor *make_filled(const char *op, int ndim, const int64_t *sizes, lt_scalar v, int dtype, int dflt,
                              lt_device dev) {
  lt_tensor *t = lt_creation_new(op, ndim, sizes, dtype, dflt, dev);
  if (!t) return NULL;
  unsigned char elem[16];   /* the widest element: complex128 */
  if (lt_meta_fill_value(op, v, (lt_dtype)t->dtype, elem) < 0) { lt_tensor_release(t); return NULL; }
  fill_contig((lt_dtype)t->dtype, lt_tensor_data(t), t->numel, elem);
  return t;
}

#define DFLT ((int)lt_get_default_dtype())

lt_tensor *lt_cpu_zeros(lt_intlist size, int dtype, lt_device device) {
  return make_filled("zeros", size.n, size.v, lt_scalar_int(0), dtype, DFLT, device);
}
lt_tensor *lt_cpu_ones(lt_intlist size, int dtype, lt_device device) {
  return make_filled("ones", size.n, size.v, lt_scalar_int(1), dtype, DFLT, device);
}
lt_tensor *lt_cpu_empty(lt_intlist size, int dtype, lt_device device) {
  return lt_creation_new("empty", size.n, size.v, dtype, DFLT, device);
}
lt_tensor *lt_cpu_full(lt_intlist size, lt_scalar fill_value, int dtype, lt_device device) {
  return make_filled("full", size.n, size.v, fill_value, dtype, (int)lt_scalar_dtype(fill_value), device);
}

/* *_like keep self's dtype and device unless told otherwise */
static lt_device like_device(const lt_tensor *self, lt_device d) {
  return d.type >= 0 ? d : lt_tensor_device(self);
}
lt_tensor *lt_cpu_zeros_like(lt_tensor *self, int dtype, lt_device device) {
  return make_filled("zeros_like", self->ndim, self->sizes, lt_scalar_int(0), dtype, self->dtype, like_device(self, device));
}
lt_tensor *lt_cpu_ones_like(lt_tensor *self, int dtype, lt_device device) {
  return make_filled("ones_like", self->ndim, self->sizes, lt_scalar_int(1), dtype, self->dtype, like_device(self, device));
}
lt_tensor *lt_cpu_empty_like(lt_tensor *self, int dtype, lt_device device) {
  return lt_creation_new("empty_like", self->ndim, self->sizes, dtype, self->dtype, like_device(self, device));
}
lt_tensor *lt_cpu_full_like(lt_tensor *self, lt_scalar fill_value, int dtype, lt_device device) {
  return make_filled("full_like", self->ndim, self->sizes, fill_value, dtype, self->dtype, like_device(self, device));
}
lt_tensor *lt_cpu_new_zeros(lt_tensor *self, lt_intlist size, int dtype, lt_device device) {
  return make_filled("new_zeros", size.n, size.v, lt_scalar_int(0), dtype, self->dtype, like_device(self, device));
}
lt_tensor *lt_cpu_new_ones(lt_tensor *self, lt_intlist size, int dtype, lt_device device) {
  return make_filled("new_ones", size.n, size.v, lt_scalar_int(1), dtype, self->dtype, like_device(self, device));
}
lt_tensor *lt_cpu_new_empty(lt_tensor *self, lt_intlist size, int dtype, lt_device device) {
  return lt_creation_new("new_empty", size.n, size.v, dtype, self->dtype, like_device(self, device));
}
lt_tensor *lt_cpu_new_full(lt_tensor *self, lt_intlist size, lt_scalar fill_value, int dtype, lt_device device) {
  return make_filled("new_full", size.n, size.v, fill_value, dtype, self->dtype, like_device(self, device));
}

/* ---- ranges ---- */

/* p[i] = start + i * step for i in [0, n), computed exactly in int64 or in double */
typedef struct seq_ctx {
  lt_dtype dt; void *p;
  bool is_int; int64_t istart, istep; double fstart, fstep;
} seq_ctx;

static void seq_range(void *vctx, int64_t b, int64_t e) {
  seq_ctx *c = vctx;
  if (c->is_int) {
    switch (c->dt) {
#define SEQI(E, ST, CT, NAME) \
      case E: { ST *q = (ST *)c->p; for (int64_t i = b; i < e; i++) q[i] = LT_FROMC_##NAME((int64_t)((uint64_t)c->istart + (uint64_t)i * (uint64_t)c->istep)); } break;
      LT_FORALL_DTYPES(SEQI)
#undef SEQI
      default: break;
    }
  } else if (lt_dtype_is_float(c->dt)) {
    switch (c->dt) {
      case LT_FLOAT64: { double *q = c->p; for (int64_t i = b; i < e; i++) q[i] = c->fstart + (double)i * c->fstep; } break;
      case LT_FLOAT32: { float *q = c->p; for (int64_t i = b; i < e; i++) q[i] = (float)(c->fstart + (double)i * c->fstep); } break;
      case LT_FLOAT16: { lt_half *q = c->p; for (int64_t i = b; i < e; i++) q[i] = lt_float_to_half((float)(c->fstart + (double)i * c->fstep)); } break;
      default: { lt_bfloat16 *q = c->p; for (int64_t i = b; i < e; i++) q[i] = lt_float_to_bf16((float)(c->fstart + (double)i * c->fstep)); } break;
    }
  } else {
    /* float bounds into an integer dtype: saturating conversion, no UB */
    size_t es = lt_dtype_size(c->dt);
    for (int64_t i = b; i < e; i++)
      lt_dtype_store_double(c->dt, (char *)c->p + i * (int64_t)es, c->fstart + (double)i * c->fstep);
  }
}

/* inclusive: Torch7's range; else PyTorch's arange */
static lt_tensor *make_range(const char *op, lt_scalar start, lt_scalar end, lt_scalar step, int dtype,
                             lt_device device, bool inclusive) {
  lt_meta_seq m;
  if (lt_meta_range(op, start, end, step, inclusive, &m) < 0) return NULL;
  int64_t n = m.n;
  seq_ctx c = { .is_int = m.is_int, .istart = m.istart, .istep = m.istep, .fstart = m.fstart, .fstep = m.fstep };
  int dflt = (int)m.dflt;
  lt_tensor *t = lt_creation_new(op, 1, &n, dtype, dflt, device);
  if (!t) return NULL;
  c.dt = (lt_dtype)t->dtype;
  c.p = lt_tensor_data(t);
  /* int sequences into float dtypes go through double: exact up to 2^53 */
  if (c.is_int && lt_dtype_is_float(c.dt)) c.is_int = false;
  lt_parallel_for(n, LT_GRAIN_ELEMENTWISE, seq_range, &c);
  return t;
}

lt_tensor *lt_cpu_arange(lt_scalar start, lt_scalar end, lt_scalar step, int dtype, lt_device device) {
  if (lt_scalar_is_none(end)) { end = start; start = lt_scalar_int(0); }
  return make_range("arange", start, end, step, dtype, device, false);
}

lt_tensor *lt_cpu_range(lt_scalar start, lt_scalar end, lt_scalar step, int dtype, lt_device device) {
  return make_range("range", start, end, step, dtype, device, true);
}

/* linspace values: from both ends toward the middle, so the last value is exactly `end` */
typedef struct lin_ctx { lt_dtype dt; void *p; double s, e, step; int64_t n; double base; bool log; } lin_ctx;

static inline double lin_at(const lin_ctx *c, int64_t i) {
  double v = i < c->n / 2 ? c->s + (double)i * c->step : c->e - (double)(c->n - 1 - i) * c->step;
  return c->log ? pow(c->base, v) : v;
}

static void lin_range(void *vctx, int64_t b, int64_t e) {
  lin_ctx *c = vctx;
  switch (c->dt) {
    case LT_FLOAT64: { double *q = c->p; for (int64_t i = b; i < e; i++) q[i] = lin_at(c, i); } break;
    case LT_FLOAT32: { float *q = c->p; for (int64_t i = b; i < e; i++) q[i] = (float)lin_at(c, i); } break;
    default: {
      size_t es = lt_dtype_size(c->dt);
      for (int64_t i = b; i < e; i++) lt_dtype_store_double(c->dt, (char *)c->p + i * (int64_t)es, lin_at(c, i));
    }
  }
}

static lt_tensor *make_lin(const char *op, lt_scalar start, lt_scalar end, int64_t steps, int dtype,
                           lt_device device, bool log, double base) {
  if (lt_meta_check_steps(op, steps) < 0) return NULL;
  lt_tensor *t = lt_creation_new(op, 1, &steps, dtype, DFLT, device);
  if (!t) return NULL;
  lin_ctx c;
  c.dt = (lt_dtype)t->dtype; c.p = lt_tensor_data(t);
  c.s = lt_scalar_to_double(start); c.e = lt_scalar_to_double(end); c.n = steps;
  c.step = steps > 1 ? (c.e - c.s) / (double)(steps - 1) : 0.0;
  c.log = log; c.base = base;
  if (steps == 1) c.e = c.s;   /* one step gives start, as in PyTorch */
  lt_parallel_for(steps, LT_GRAIN_ELEMENTWISE / 8, lin_range, &c);
  return t;
}

lt_tensor *lt_cpu_linspace(lt_scalar start, lt_scalar end, int64_t steps, int dtype, lt_device device) {
  return make_lin("linspace", start, end, steps, dtype, device, false, 0);
}

lt_tensor *lt_cpu_logspace(lt_scalar start, lt_scalar end, int64_t steps, double base, int dtype, lt_device device) {
  return make_lin("logspace", start, end, steps, dtype, device, true, base);
}

lt_tensor *lt_cpu_eye(int64_t n, int64_t m, int dtype, lt_device device) {
  int64_t sizes[2];
  if (lt_meta_eye_shape(n, m, sizes) < 0) return NULL;
  m = sizes[1];
  lt_tensor *t = make_filled("eye", 2, sizes, lt_scalar_int(0), dtype, DFLT, device);
  if (!t) return NULL;
  lt_dtype dt = (lt_dtype)t->dtype;
  size_t es = lt_dtype_size(dt);
  char *p = lt_tensor_data(t);
  int64_t k = n < m ? n : m;
  for (int64_t i = 0; i < k; i++) lt_dtype_store_int64(dt, p + (i * m + i) * (int64_t)es, 1);
  return t;
}
