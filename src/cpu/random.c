/*
** random.c — CPU kernels of the random ops.
**
** Elementwise samplers reserve ceil(n / per_block) Philox blocks from the
** generator and give element i block (base + i / per_block); loops run in
** parallel over blocks, so any thread count gives the same numbers. Values
** are made in a small double/int64 buffer and then stored in the output
** dtype, one dtype switch per buffer rather than per element.
*/
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "core/tensor.h"
#include "cpu/parallel.h"
#include "core/rng.h"
#include "cpu/creation.h"
#include "meta/creation.h"

#define BUF 256          /* elements per buffer: a multiple of every per_block */
#define TWO_PI 6.283185307179586476925286766559

enum { K_UNIFORM, K_NORMAL, K_EXPONENTIAL, K_BERNOULLI, K_BERNOULLI_T, K_INT_SMALL, K_INT_BIG };

typedef struct rnd_ctx {
  int kind;
  lt_dtype dt;
  void *p;                 /* contiguous output */
  int64_t n;
  int per;                 /* elements per Philox block */
  lt_philox_key key;
  uint64_t base;
  double a, b;             /* uniform [a, b); normal mean a std b; exponential rate a; bernoulli p a */
  const double *probs;     /* K_BERNOULLI_T: one probability per element */
  int64_t low;             /* integers: low + [0, range) */
  uint64_t range;          /* 0: 2^64 */
} rnd_ctx;

static void store_d(lt_dtype dt, void *p, int64_t off, const double *restrict v, int n) {
  switch (dt) {
#define ST_D(E, ST, CT, NAME) \
    case E: { ST *restrict q = (ST *)p + off; for (int i = 0; i < n; i++) q[i] = LT_FROMC_##NAME(v[i]); } break;
    LT_FORALL_DTYPES(ST_D)
#undef ST_D
    default: break;
  }
}

static void store_i(lt_dtype dt, void *p, int64_t off, const int64_t *v, int n) {
  switch (dt) {
#define ST_I(E, ST, CT, NAME) \
    case E: { ST *q = (ST *)p + off; for (int i = 0; i < n; i++) q[i] = LT_FROMC_##NAME(v[i]); } break;
    LT_FORALL_DTYPES(ST_I)
#undef ST_I
    default: break;
  }
}

/* run BODY for every block of [blk, blk + nb) with its words w0..w3 and its
** index j (0-based within the call); blocks are made eight at a time */
#define FOR_BLOCKS(...) \
  for (int j0 = 0; j0 < nb; j0 += LT_PHILOX_LANES) { \
    uint32_t W[4][LT_PHILOX_LANES]; \
    lt_philox8(c->key, blk + (uint64_t)j0, 0, W); \
    int lim = nb - j0 < LT_PHILOX_LANES ? nb - j0 : LT_PHILOX_LANES; \
    for (int l = 0; l < lim; l++) { \
      int j = j0 + l; \
      uint32_t w0 = W[0][l], w1 = W[1][l], w2 = W[2][l], w3 = W[3][l]; \
      (void)w0; (void)w1; (void)w2; (void)w3; \
      __VA_ARGS__ \
    } \
  }

/* values for elements [e0, e0 + cnt), e0 a multiple of per */
static void gen_d(const rnd_ctx *c, int64_t e0, int cnt, double *v) {
  uint64_t blk = c->base + (uint64_t)(e0 / c->per);
  int nb = (cnt + c->per - 1) / c->per;
  double a = c->a, b = c->b;
  switch (c->kind) {
    case K_UNIFORM:
      if (c->per == 4) {
        double d = b - a;
        FOR_BLOCKS(v[4 * j] = a + (double)lt_u01f(w0) * d; v[4 * j + 1] = a + (double)lt_u01f(w1) * d;
                   v[4 * j + 2] = a + (double)lt_u01f(w2) * d; v[4 * j + 3] = a + (double)lt_u01f(w3) * d;)
      } else {
        FOR_BLOCKS(v[2 * j] = a + lt_u01d(w0, w1) * (b - a); v[2 * j + 1] = a + lt_u01d(w2, w3) * (b - a);)
      }
      break;
    case K_NORMAL:
      /* Box-Muller; 32-bit radii for 32-bit-or-smaller floats, 53-bit for float64 */
      if (c->per == 4) {
        /* float math is plenty for float outputs: u1 >= 2^-32 keeps 6.66-sigma tails */
        float fa = (float)a, fb = (float)b;
        FOR_BLOCKS(
          float r0 = sqrtf(-2.0f * logf(((float)w0 + 1.0f) * 0x1p-32f)), t0 = (float)TWO_PI * ((float)w1 * 0x1p-32f);
          float r1 = sqrtf(-2.0f * logf(((float)w2 + 1.0f) * 0x1p-32f)), t1 = (float)TWO_PI * ((float)w3 * 0x1p-32f);
          float s0, c0, s1, c1;
          sincosf(t0, &s0, &c0); sincosf(t1, &s1, &c1);
          v[4 * j] = fa + fb * r0 * c0; v[4 * j + 1] = fa + fb * r0 * s0;
          v[4 * j + 2] = fa + fb * r1 * c1; v[4 * j + 3] = fa + fb * r1 * s1;)
      } else {
        FOR_BLOCKS(
          double r = sqrt(-2.0 * log(lt_u01d_open0(w0, w1)));
          double s0, c0;
          sincos(TWO_PI * lt_u01d(w2, w3), &s0, &c0);
          v[2 * j] = a + b * r * c0; v[2 * j + 1] = a + b * r * s0;)
      }
      break;
    case K_EXPONENTIAL:
      if (c->per == 4) {
        FOR_BLOCKS(v[4 * j] = -log(((double)w0 + 1.0) * 0x1p-32) / a; v[4 * j + 1] = -log(((double)w1 + 1.0) * 0x1p-32) / a;
                   v[4 * j + 2] = -log(((double)w2 + 1.0) * 0x1p-32) / a; v[4 * j + 3] = -log(((double)w3 + 1.0) * 0x1p-32) / a;)
      } else {
        FOR_BLOCKS(v[2 * j] = -log(lt_u01d_open0(w0, w1)) / a; v[2 * j + 1] = -log(lt_u01d_open0(w2, w3)) / a;)
      }
      break;
    case K_BERNOULLI:
      FOR_BLOCKS(v[4 * j] = (double)w0 * 0x1p-32 < a; v[4 * j + 1] = (double)w1 * 0x1p-32 < a;
                 v[4 * j + 2] = (double)w2 * 0x1p-32 < a; v[4 * j + 3] = (double)w3 * 0x1p-32 < a;)
      break;
    case K_BERNOULLI_T: {
      const double *pr = c->probs + e0;
      FOR_BLOCKS(
        uint32_t ws[4] = { w0, w1, w2, w3 };
        for (int k = 0; k < 4 && 4 * j + k < cnt; k++) v[4 * j + k] = (double)ws[k] * 0x1p-32 < pr[4 * j + k];)
      break;
    }
  }
}

static void gen_i(const rnd_ctx *c, int64_t e0, int cnt, int64_t *v) {
  uint64_t blk = c->base + (uint64_t)(e0 / c->per);
  if (c->kind == K_INT_BIG) {
    for (int j = 0; j < cnt; j++)
      v[j] = (int64_t)((uint64_t)c->low + lt_rng_below(c->key, blk + (uint64_t)j, c->range));
    return;
  }
  /* ranges up to 2^32: a word per element; a rejected word is redrawn from the
  ** same counter at the next attempt, same word position */
  uint32_t r = (uint32_t)c->range;
  uint32_t thresh = (0u - r) % r;
  uint64_t low = (uint64_t)c->low;
  int nb = (cnt + 3) / 4;
  FOR_BLOCKS(
    uint32_t ws[4] = { w0, w1, w2, w3 };
    for (int k = 0; k < 4; k++) {
      uint64_t m = (uint64_t)ws[k] * r;
      uint32_t attempt = 0;
      while ((uint32_t)m < thresh) {
        uint32_t w2b[4];
        lt_philox(c->key, blk + (uint64_t)j, ++attempt, w2b);
        m = (uint64_t)w2b[k] * r;
      }
      v[4 * j + k] = (int64_t)(low + (m >> 32));
    })
}

static void rnd_chunk(void *vctx, int64_t bb, int64_t be) {
  const rnd_ctx *c = vctx;
  int64_t e = be * c->per < c->n ? be * c->per : c->n;
  if (c->kind == K_INT_SMALL || c->kind == K_INT_BIG) {
    int64_t v[BUF];
    for (int64_t i = bb * c->per; i < e; i += BUF) {
      int cnt = (int)(e - i < BUF ? e - i : BUF);
      gen_i(c, i, cnt, v);
      store_i(c->dt, c->p, i, v, cnt);
    }
  } else {
    double v[BUF];
    for (int64_t i = bb * c->per; i < e; i += BUF) {
      int cnt = (int)(e - i < BUF ? e - i : BUF);
      gen_d(c, i, cnt, v);
      store_d(c->dt, c->p, i, v, cnt);
    }
  }
}

/* fill t (contiguous) according to c's kind and parameters */
static void run_fill(rnd_ctx *c, lt_tensor *t, lt_generator *g) {
  g = lt_generator_or_default(g);
  c->dt = (lt_dtype)t->dtype;
  c->p = lt_tensor_data(t);
  c->n = t->numel;
  if (c->n == 0) return;
  c->key = lt_philox_key_of(g->seed);
  uint64_t nblocks = (uint64_t)((c->n + c->per - 1) / c->per);
  c->base = lt_generator_reserve(g, nblocks);
  lt_parallel_for((int64_t)nblocks, LT_GRAIN_ELEMENTWISE / 4 / c->per + 1, rnd_chunk, c);
}

static int per_for(int kind, lt_dtype dt) {
  switch (kind) {
    case K_UNIFORM: case K_NORMAL: case K_EXPONENTIAL: return dt == LT_FLOAT64 ? 2 : 4;
    case K_INT_BIG: return 1;
    default: return 4;
  }
}

static int need_float(const char *op, lt_dtype dt) {
  if (!lt_dtype_is_float(dt))
    return lt_error("%s: expected a floating point dtype, got %s", op, lt_dtype_name(dt));
  return 0;
}

/* fill self in place, going through a contiguous temporary when self is strided */
static lt_tensor *fill_inplace(const char *op, lt_tensor *self, rnd_ctx *c, lt_generator *g) {
  c->per = per_for(c->kind, (lt_dtype)self->dtype);
  if (lt_tensor_is_contiguous(self)) {
    run_fill(c, self, g);
  } else {
    lt_tensor *tmp = lt_tensor_new_like(self, (lt_dtype)self->dtype);
    if (!tmp) return NULL;
    run_fill(c, tmp, g);
    int rc = lt_tensor_copy_(self, tmp);
    lt_tensor_release(tmp);
    if (rc < 0) return NULL;
  }
  lt_tensor_retain(self);
  return self;
}

static lt_tensor *sample_new(const char *op, int ndim, const int64_t *sizes, int dtype, int dflt, lt_device dev,
                             rnd_ctx *c, lt_generator *g, bool float_only) {
  lt_dtype want = (lt_dtype)(dtype >= 0 ? dtype : dflt);
  if (lt_dtype_is_complex(want)) {
    /* PyTorch's complex samples: the parts drawn independently, as a real
    ** [..., 2] tensor seen as complex; a normal's parts have variance 1/2 each,
    ** so that E|z|^2 is 1 */
    if (ndim + 1 > LT_MAX_DIMS) return lt_error_null("%s: too many dims for a complex tensor", op);
    int64_t rs[LT_MAX_DIMS], st[LT_MAX_DIMS];
    memcpy(rs, sizes, sizeof(int64_t) * (size_t)ndim);
    rs[ndim] = 2;
    if (c->kind == K_NORMAL) c->b *= sqrt(0.5);
    lt_tensor *r = sample_new(op, ndim + 1, rs, (int)lt_dtype_to_real(want), dflt, dev, c, g, float_only);
    if (!r) return NULL;
    int64_t acc = 1;
    for (int d = ndim - 1; d >= 0; d--) { st[d] = acc; acc *= sizes[d]; }
    lt_tensor *t = lt_tensor_new_view(r->storage, want, 0, ndim, sizes, st);
    lt_tensor_release(r);
    return t;
  }
  lt_tensor *t = lt_creation_new(op, ndim, sizes, dtype, dflt, dev);
  if (!t) return NULL;
  if (float_only && need_float(op, (lt_dtype)t->dtype) < 0) { lt_tensor_release(t); return NULL; }
  c->per = per_for(c->kind, (lt_dtype)t->dtype);
  run_fill(c, t, g);
  return t;
}

#define DFLT ((int)lt_get_default_dtype())
static lt_device like_dev(const lt_tensor *self, lt_device d) { return d.type >= 0 ? d : lt_tensor_device(self); }

lt_tensor *lt_cpu_rand(lt_intlist size, struct lt_generator *generator, int dtype, lt_device device) {
  rnd_ctx c = { .kind = K_UNIFORM, .a = 0, .b = 1 };
  return sample_new("rand", size.n, size.v, dtype, DFLT, device, &c, generator, true);
}

lt_tensor *lt_cpu_randn(lt_intlist size, struct lt_generator *generator, int dtype, lt_device device) {
  rnd_ctx c = { .kind = K_NORMAL, .a = 0, .b = 1 };
  return sample_new("randn", size.n, size.v, dtype, DFLT, device, &c, generator, true);
}

lt_tensor *lt_cpu_rand_like(lt_tensor *self, struct lt_generator *generator, int dtype, lt_device device) {
  rnd_ctx c = { .kind = K_UNIFORM, .a = 0, .b = 1 };
  return sample_new("rand_like", self->ndim, self->sizes, dtype, self->dtype, like_dev(self, device), &c, generator, true);
}

lt_tensor *lt_cpu_randn_like(lt_tensor *self, struct lt_generator *generator, int dtype, lt_device device) {
  rnd_ctx c = { .kind = K_NORMAL, .a = 0, .b = 1 };
  return sample_new("randn_like", self->ndim, self->sizes, dtype, self->dtype, like_dev(self, device), &c, generator, true);
}

lt_tensor *lt_cpu_normal(lt_scalar mean, lt_scalar std, lt_intlist size, struct lt_generator *generator, int dtype,
                         lt_device device) {
  rnd_ctx c = { .kind = K_NORMAL, .a = lt_scalar_to_double(mean), .b = lt_scalar_to_double(std) };
  if (!(c.b >= 0)) return lt_error_null("normal: argument 'std' must be non-negative, got %g", c.b);
  return sample_new("normal", size.n, size.v, dtype, DFLT, device, &c, generator, true);
}

/* ---- integers ---- */

static void set_int_range(rnd_ctx *c, int64_t low, uint64_t range) {
  c->low = low;
  c->range = range;
  c->kind = range != 0 && range <= UINT32_MAX ? K_INT_SMALL : K_INT_BIG;
}

static lt_tensor *randint_new(const char *op, int ndim, const int64_t *sizes, int64_t low, int64_t high,
                              lt_generator *g, int dtype, int dflt, lt_device dev) {
  lt_tensor *t = lt_creation_new(op, ndim, sizes, dtype, dflt, dev);
  if (!t) return NULL;
  if (lt_meta_int_bounds(op, (lt_dtype)t->dtype, low, high) < 0) { lt_tensor_release(t); return NULL; }
  rnd_ctx c;
  memset(&c, 0, sizeof c);
  set_int_range(&c, low, (uint64_t)high - (uint64_t)low);
  c.per = per_for(c.kind, (lt_dtype)t->dtype);
  run_fill(&c, t, g);
  return t;
}

lt_tensor *lt_cpu_randint(int64_t low, int64_t high, lt_intlist size, struct lt_generator *generator, int dtype,
                          lt_device device) {
  return randint_new("randint", size.n, size.v, low, high, generator, dtype, LT_INT64, device);
}

lt_tensor *lt_cpu_randint_high(int64_t high, lt_intlist size, struct lt_generator *generator, int dtype,
                               lt_device device) {
  return randint_new("randint", size.n, size.v, 0, high, generator, dtype, LT_INT64, device);
}

lt_tensor *lt_cpu_randint_like(lt_tensor *self, int64_t low, int64_t high, struct lt_generator *generator, int dtype,
                               lt_device device) {
  return randint_new("randint_like", self->ndim, self->sizes, low, high, generator, dtype, self->dtype,
                     like_dev(self, device));
}

lt_tensor *lt_cpu_randint_like_high(lt_tensor *self, int64_t high, struct lt_generator *generator, int dtype,
                                    lt_device device) {
  return randint_new("randint_like", self->ndim, self->sizes, 0, high, generator, dtype, self->dtype,
                     like_dev(self, device));
}

lt_tensor *lt_cpu_random_(lt_tensor *self, int64_t from, int64_t to, struct lt_generator *generator) {
  lt_dtype dt = (lt_dtype)self->dtype;
  int64_t low, high;
  rnd_ctx c;
  memset(&c, 0, sizeof c);
  if (from == LT_NOINT && to == LT_NOINT) {
    /* every integer the dtype holds exactly, from 0 */
    uint64_t range;
    switch (dt) {
      case LT_FLOAT64: range = (UINT64_C(1) << 53) + 1; break;
      case LT_FLOAT32: range = (UINT64_C(1) << 24) + 1; break;
      case LT_FLOAT16: range = (UINT64_C(1) << 11) + 1; break;
      case LT_BFLOAT16: range = (UINT64_C(1) << 8) + 1; break;
      case LT_INT64: range = UINT64_C(1) << 63; break;
      case LT_INT32: range = UINT64_C(1) << 31; break;
      case LT_INT16: range = UINT64_C(1) << 15; break;
      case LT_INT8: range = UINT64_C(1) << 7; break;
      case LT_UINT8: range = UINT64_C(1) << 8; break;
      default: range = 2; break;
    }
    set_int_range(&c, 0, range);
  } else {
    if (to == LT_NOINT) { low = 0; high = from; }
    else { low = from == LT_NOINT ? 0 : from; high = to; }
    if (lt_meta_int_bounds("random_", dt, low, high) < 0) return NULL;
    set_int_range(&c, low, (uint64_t)high - (uint64_t)low);
  }
  return fill_inplace("random_", self, &c, generator);
}

/* ---- in-place samplers ---- */

lt_tensor *lt_cpu_uniform_(lt_tensor *self, double from, double to, struct lt_generator *generator) {
  if (need_float("uniform_", (lt_dtype)self->dtype) < 0) return NULL;
  if (!(from <= to) || !isfinite(to - from))
    return lt_error_null("uniform_: expected from <= to, both finite, got from=%g to=%g", from, to);
  rnd_ctx c = { .kind = K_UNIFORM, .a = from, .b = to };
  return fill_inplace("uniform_", self, &c, generator);
}

lt_tensor *lt_cpu_normal_(lt_tensor *self, double mean, double std, struct lt_generator *generator) {
  if (need_float("normal_", (lt_dtype)self->dtype) < 0) return NULL;
  if (!(std >= 0)) return lt_error_null("normal_: argument 'std' must be non-negative, got %g", std);
  rnd_ctx c = { .kind = K_NORMAL, .a = mean, .b = std };
  return fill_inplace("normal_", self, &c, generator);
}

lt_tensor *lt_cpu_exponential_(lt_tensor *self, double lambd, struct lt_generator *generator) {
  if (need_float("exponential_", (lt_dtype)self->dtype) < 0) return NULL;
  if (!(lambd > 0)) return lt_error_null("exponential_: argument 'lambd' must be positive, got %g", lambd);
  rnd_ctx c = { .kind = K_EXPONENTIAL, .a = lambd };
  return fill_inplace("exponential_", self, &c, generator);
}

static int check_p(const char *op, double p) {
  if (!(p >= 0 && p <= 1)) return lt_error("%s: argument 'p' must be in [0, 1], got %g", op, p);
  return 0;
}

lt_tensor *lt_cpu_bernoulli_(lt_tensor *self, lt_scalar p, struct lt_generator *generator) {
  double pv = lt_scalar_to_double(p);
  if (check_p("bernoulli_", pv) < 0) return NULL;
  rnd_ctx c = { .kind = K_BERNOULLI, .a = pv };
  return fill_inplace("bernoulli_", self, &c, generator);
}

/* probabilities as a contiguous float64 tensor of `shape`, checked to lie in [0, 1] */
static lt_tensor *probs_of(const char *op, const lt_tensor *p, int ndim, const int64_t *sizes) {
  lt_tensor *pr = lt_tensor_new(LT_FLOAT64, lt_tensor_device(p), ndim, sizes);
  if (!pr) return NULL;
  if (lt_tensor_copy_(pr, p) < 0) {
    lt_tensor_release(pr);
    return lt_error_null("%s: argument 'p' %s", op, lt_error_message());
  }
  const double *q = lt_tensor_data(pr);
  for (int64_t i = 0; i < pr->numel; i++)
    if (!(q[i] >= 0 && q[i] <= 1)) {
      double bad = q[i];
      lt_tensor_release(pr);
      return lt_error_null("%s: probabilities must be in [0, 1], got %g", op, bad);
    }
  return pr;
}

lt_tensor *lt_cpu_bernoulli_tensor_(lt_tensor *self, lt_tensor *p, struct lt_generator *generator) {
  int64_t st[LT_MAX_DIMS];
  if (lt_expand_strides("bernoulli_", p, self->ndim, self->sizes, st) < 0) return NULL;
  lt_tensor *pr = probs_of("bernoulli_", p, self->ndim, self->sizes);
  if (!pr) return NULL;
  rnd_ctx c = { .kind = K_BERNOULLI_T, .probs = lt_tensor_data(pr) };
  lt_tensor *r = fill_inplace("bernoulli_", self, &c, generator);
  lt_tensor_release(pr);
  return r;
}

lt_tensor *lt_cpu_bernoulli(lt_tensor *self, struct lt_generator *generator) {
  lt_tensor *pr = probs_of("bernoulli", self, self->ndim, self->sizes);
  if (!pr) return NULL;
  lt_tensor *t = lt_tensor_new_like(self, (lt_dtype)self->dtype);
  if (!t) { lt_tensor_release(pr); return NULL; }
  rnd_ctx c = { .kind = K_BERNOULLI_T, .probs = lt_tensor_data(pr), .per = 4 };
  run_fill(&c, t, generator);
  lt_tensor_release(pr);
  return t;
}

lt_tensor *lt_cpu_bernoulli_p(lt_tensor *self, double p, struct lt_generator *generator) {
  if (check_p("bernoulli", p) < 0) return NULL;
  lt_tensor *t = lt_tensor_new_like(self, (lt_dtype)self->dtype);
  if (!t) return NULL;
  rnd_ctx c = { .kind = K_BERNOULLI, .a = p, .per = 4 };
  run_fill(&c, t, generator);
  return t;
}

/* ---- permutations and categorical sampling ---- */

lt_tensor *lt_cpu_randperm(int64_t n, struct lt_generator *generator, int dtype, lt_device device) {
  lt_tensor *t = lt_meta_randperm_new(n, dtype, device);
  if (!t) return NULL;
  lt_dtype dt = (lt_dtype)t->dtype;
  int64_t *perm = dt == LT_INT64 ? lt_tensor_data(t) : malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  if (!perm) { lt_tensor_release(t); return lt_error_null("randperm: out of memory"); }
  for (int64_t i = 0; i < n; i++) perm[i] = i + 1;
  lt_rng_stream s;
  lt_rng_stream_init(&s, generator);
  for (int64_t i = n - 1; i > 0; i--) {
    int64_t j = (int64_t)lt_rng_stream_below(&s, (uint64_t)i + 1);
    int64_t x = perm[i]; perm[i] = perm[j]; perm[j] = x;
  }
  if (dt != LT_INT64) {
    for (int64_t i = 0; i < n; i += BUF) store_i(dt, lt_tensor_data(t), i, perm + i, (int)(n - i < BUF ? n - i : BUF));
    free(perm);
  }
  return t;
}

typedef struct keyed { double key; int64_t idx; } keyed;
static int keyed_cmp(const void *a, const void *b) {
  double x = ((const keyed *)a)->key, y = ((const keyed *)b)->key;
  return x < y ? -1 : x > y ? 1 : 0;
}

lt_tensor *lt_cpu_multinomial(lt_tensor *self, int64_t num_samples, bool replacement, struct lt_generator *generator) {
  const char *op = "multinomial";
  int64_t osz[2];
  int ond = lt_meta_multinomial(op, self, num_samples, replacement, osz);
  if (ond < 0) return NULL;
  int64_t rows = self->ndim == 2 ? self->sizes[0] : 1, ncat = self->sizes[self->ndim - 1];
  lt_tensor *w = lt_tensor_to_dtype_contig(self, LT_FLOAT64);
  if (!w) return NULL;
  lt_tensor *out = lt_tensor_new(LT_INT64, lt_tensor_device(self), ond, osz);
  double *cum = malloc(sizeof(double) * (size_t)ncat);
  keyed *ks = replacement ? NULL : malloc(sizeof(keyed) * (size_t)ncat);
  if (!out || !cum || (!replacement && !ks)) {
    lt_tensor_release(w); lt_tensor_release(out); free(cum); free(ks);
    return lt_error_null("%s: out of memory", op);
  }
  const double *wd = lt_tensor_data(w);
  int64_t *od = lt_tensor_data(out);
  lt_rng_stream s;
  lt_rng_stream_init(&s, generator);
  const char *bad = NULL;
  for (int64_t r = 0; r < rows && !bad; r++) {
    const double *wr = wd + r * ncat;
    int64_t *orow = od + r * num_samples;
    double total = 0;
    int64_t nonzero = 0;
    for (int64_t k = 0; k < ncat; k++) {
      if (!(wr[k] >= 0) || isinf(wr[k])) { bad = "probabilities must be finite and non-negative"; break; }
      total += wr[k];
      nonzero += wr[k] > 0;
      cum[k] = total;
    }
    if (bad) break;
    if (!(total > 0)) { bad = "the weights of a row sum to zero"; break; }
    if (replacement) {
      for (int64_t i = 0; i < num_samples; i++) {
        double u = lt_rng_stream_double(&s) * total;
        int64_t lo = 0, hi = ncat - 1;          /* first k with cum[k] > u */
        while (lo < hi) {
          int64_t mid = lo + (hi - lo) / 2;
          if (cum[mid] > u) hi = mid; else lo = mid + 1;
        }
        while (lo > 0 && wr[lo] == 0) lo--;     /* rounding at the top end must not pick a zero weight */
        orow[i] = lo + 1;
      }
    } else {
      if (nonzero < num_samples) { bad = "not enough categories with non-zero weight to sample without replacement"; break; }
      /* exponential races: the k smallest E_i / w_i are a weighted sample without replacement */
      int64_t m = 0;
      for (int64_t k = 0; k < ncat; k++) {
        double u = lt_rng_stream_double(&s);
        if (wr[k] > 0) { ks[m].key = -log1p(-u) / wr[k]; ks[m].idx = k; m++; }
      }
      qsort(ks, (size_t)m, sizeof(keyed), keyed_cmp);
      for (int64_t i = 0; i < num_samples; i++) orow[i] = ks[i].idx + 1;
    }
  }
  lt_tensor_release(w);
  free(cum);
  free(ks);
  if (bad) { lt_tensor_release(out); return lt_error_null("%s: %s", op, bad); }
  return out;
}
