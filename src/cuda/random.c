/*
** random.c — the CUDA kernels of the random ops: rand, randn, normal,
** rand_like, randn_like, randint (all forms), bernoulli (all forms),
** uniform_, normal_, exponential_, random_, native_dropout, _dropout_mask.
**
** Each device has its default generator (core/rng.h:
** lt_device_default_generator(LT_DEV_CUDA, i)); an op draws from it, or from
** a cuda torch.Generator given to it. A draw reserves ceil(n / per) Philox
** blocks from the generator as the CPU's kernels do, and the sampler kernels
** (kernels/random.cu) give element i block base + i / per, word i % per,
** with the CPU's arithmetic: the same seed and offset give the CPU's numbers
** (bit for bit in the host build; see random.h for the nvcc build). Strided
** in-place targets are drawn into a contiguous temporary and copied in, as
** on the CPU, so a view draws the numbers its contiguous copy would.
** Checks are the CPU's messages (meta/creation.h and the lines below).
**
** Nothing here has run on a GPU: the host build runs under the fake driver.
*/
#include <math.h>
#include <string.h>
#include "core/backend.h"
#include "core/error.h"
#include "core/rng.h"
#include "cuda/creation.h"
#include "dispatch/dispatch.h"
#include "meta/creation.h"
#include "meta/meta.h"
#include "kernels_cuda.h"   /* generated: lt_ops.h, the kernel types */

/* the generator an op on device dev draws from */
static lt_generator *device_gen(const char *op, lt_generator *g, int dev) {
  if (!g) {
    g = lt_device_default_generator(LT_DEV_CUDA, dev);
    if (!g) lt_error("%s: cuda:%d has no default generator (at most %d devices)", op, dev, LT_RNG_MAX_DEVICES);
    return g;
  }
  if (g->device_type != LT_DEV_CUDA)
    return lt_error_null("%s: expected a cuda generator for cuda tensors, got a cpu one", op);
  return g;
}

static int per_for(int kind, lt_dtype dt) {
  switch (kind) {
    case LT_CK_RNG_UNIFORM: case LT_CK_RNG_NORMAL: case LT_CK_RNG_EXPONENTIAL: return dt == LT_FLOAT64 ? 2 : 4;
    case LT_CK_RNG_INT_BIG: return 1;
    default: return 4;
  }
}

/* draw a (kind and parameters set) into t, contiguous; 0 or -1 */
static int draw(const char *op, lt_tensor *t, lt_ck_rng_args *a, lt_generator *g) {
  int dev = lt_tensor_device(t).index;
  if (!(g = device_gen(op, g, dev))) return -1;
  a->dtype = t->dtype;
  a->out = lt_tensor_data(t);
  a->n = t->numel;
  if (!a->per) a->per = per_for(a->kind, (lt_dtype)t->dtype);
  if (a->n == 0) return 0;
  lt_philox_key key = lt_philox_key_of(g->seed);
  a->k0 = key.k0;
  a->k1 = key.k1;
  a->base = lt_generator_reserve(g, (uint64_t)((a->n + a->per - 1) / a->per));
  int rc = lt_cuda_run_random(op, dev, a);
  if (rc > 0)
    return lt_error("%s: not implemented for cuda %s tensors (the CUDA kernels refuse it)", op,
                    lt_dtype_name((lt_dtype)t->dtype));
  return rc;
}

static int need_float(const char *op, lt_dtype dt) {
  if (!lt_dtype_is_float(dt)) return lt_error("%s: expected a floating point dtype, got %s", op, lt_dtype_name(dt));
  return 0;
}

/* draw into self, through a contiguous temporary when self is strided */
static lt_tensor *fill_inplace(const char *op, lt_tensor *self, lt_ck_rng_args *a, lt_generator *g) {
  if (lt_tensor_is_contiguous(self)) {
    if (draw(op, self, a, g) < 0) return NULL;
  } else {
    lt_tensor *tmp = lt_tensor_new_like(self, (lt_dtype)self->dtype);
    if (!tmp) return NULL;
    int rc = draw(op, tmp, a, g);
    if (rc == 0) rc = lt_tensor_copy_(self, tmp);
    lt_tensor_release(tmp);
    if (rc < 0) return NULL;
  }
  lt_tensor_retain(self);
  return self;
}

static lt_tensor *sample_new(const char *op, int ndim, const int64_t *sizes, int dtype, int dflt, lt_device dev,
                             lt_ck_rng_args *a, lt_generator *g, bool float_only) {
  lt_tensor *t = lt_meta_creation_new(op, ndim, sizes, dtype, dflt, dev);
  if (!t) return NULL;
  if ((float_only && need_float(op, (lt_dtype)t->dtype) < 0) || draw(op, t, a, g) < 0) {
    lt_tensor_release(t);
    return NULL;
  }
  return t;
}

#define DFLT ((int)lt_get_default_dtype())
static lt_device like(const lt_tensor *self, lt_device d) { return d.type >= 0 ? d : lt_tensor_device(self); }

lt_tensor *lt_cuda_rand(lt_intlist size, struct lt_generator *generator, int dtype, lt_device device) {
  lt_ck_rng_args a = { .kind = LT_CK_RNG_UNIFORM, .a = 0, .b = 1 };
  return sample_new("rand", size.n, size.v, dtype, DFLT, device, &a, generator, true);
}

lt_tensor *lt_cuda_randn(lt_intlist size, struct lt_generator *generator, int dtype, lt_device device) {
  lt_ck_rng_args a = { .kind = LT_CK_RNG_NORMAL, .a = 0, .b = 1 };
  return sample_new("randn", size.n, size.v, dtype, DFLT, device, &a, generator, true);
}

lt_tensor *lt_cuda_rand_like(lt_tensor *self, struct lt_generator *generator, int dtype, lt_device device) {
  lt_ck_rng_args a = { .kind = LT_CK_RNG_UNIFORM, .a = 0, .b = 1 };
  return sample_new("rand_like", self->ndim, self->sizes, dtype, self->dtype, like(self, device), &a, generator, true);
}

lt_tensor *lt_cuda_randn_like(lt_tensor *self, struct lt_generator *generator, int dtype, lt_device device) {
  lt_ck_rng_args a = { .kind = LT_CK_RNG_NORMAL, .a = 0, .b = 1 };
  return sample_new("randn_like", self->ndim, self->sizes, dtype, self->dtype, like(self, device), &a, generator, true);
}

lt_tensor *lt_cuda_normal(lt_scalar mean, lt_scalar std, lt_intlist size, struct lt_generator *generator, int dtype,
                          lt_device device) {
  lt_ck_rng_args a = { .kind = LT_CK_RNG_NORMAL, .a = lt_scalar_to_double(mean), .b = lt_scalar_to_double(std) };
  if (!(a.b >= 0)) return lt_error_null("normal: argument 'std' must be non-negative, got %g", a.b);
  return sample_new("normal", size.n, size.v, dtype, DFLT, device, &a, generator, true);
}

/* ---- integers ---- */

static void set_int_range(lt_ck_rng_args *a, int64_t low, uint64_t range) {
  a->low = low;
  a->range = range;
  a->kind = range != 0 && range <= UINT32_MAX ? LT_CK_RNG_INT : LT_CK_RNG_INT_BIG;
}

static lt_tensor *randint_new(const char *op, int ndim, const int64_t *sizes, int64_t low, int64_t high,
                              lt_generator *g, int dtype, int dflt, lt_device dev) {
  lt_tensor *t = lt_meta_creation_new(op, ndim, sizes, dtype, dflt, dev);
  if (!t) return NULL;
  lt_ck_rng_args a = {0};
  set_int_range(&a, low, (uint64_t)high - (uint64_t)low);
  if (lt_meta_int_bounds(op, (lt_dtype)t->dtype, low, high) < 0 || draw(op, t, &a, g) < 0) {
    lt_tensor_release(t);
    return NULL;
  }
  return t;
}

lt_tensor *lt_cuda_randint(int64_t low, int64_t high, lt_intlist size, struct lt_generator *generator, int dtype,
                           lt_device device) {
  return randint_new("randint", size.n, size.v, low, high, generator, dtype, LT_INT64, device);
}

lt_tensor *lt_cuda_randint_high(int64_t high, lt_intlist size, struct lt_generator *generator, int dtype,
                                lt_device device) {
  return randint_new("randint", size.n, size.v, 0, high, generator, dtype, LT_INT64, device);
}

lt_tensor *lt_cuda_randint_like(lt_tensor *self, int64_t low, int64_t high, struct lt_generator *generator, int dtype,
                                lt_device device) {
  return randint_new("randint_like", self->ndim, self->sizes, low, high, generator, dtype, self->dtype,
                     like(self, device));
}

lt_tensor *lt_cuda_randint_like_high(lt_tensor *self, int64_t high, struct lt_generator *generator, int dtype,
                                     lt_device device) {
  return randint_new("randint_like", self->ndim, self->sizes, 0, high, generator, dtype, self->dtype,
                     like(self, device));
}

/* random_() with no bounds: every integer the dtype holds exactly, from 0 */
static uint64_t full_range(lt_dtype dt) {
  switch (dt) {
    case LT_FLOAT64: return (UINT64_C(1) << 53) + 1;
    case LT_FLOAT32: return (UINT64_C(1) << 24) + 1;
    case LT_FLOAT16: return (UINT64_C(1) << 11) + 1;
    case LT_BFLOAT16: return (UINT64_C(1) << 8) + 1;
    case LT_INT64: return UINT64_C(1) << 63;
    case LT_INT32: return UINT64_C(1) << 31;
    case LT_INT16: return UINT64_C(1) << 15;
    case LT_INT8: return UINT64_C(1) << 7;
    case LT_UINT8: return UINT64_C(1) << 8;
    default: return 2;
  }
}

lt_tensor *lt_cuda_random_(lt_tensor *self, int64_t from, int64_t to, struct lt_generator *generator) {
  lt_dtype dt = (lt_dtype)self->dtype;
  lt_ck_rng_args a = {0};
  if (from == LT_NOINT && to == LT_NOINT) {
    set_int_range(&a, 0, full_range(dt));
  } else {
    int64_t low = to == LT_NOINT ? 0 : from == LT_NOINT ? 0 : from;
    int64_t high = to == LT_NOINT ? from : to;
    if (lt_meta_int_bounds("random_", dt, low, high) < 0) return NULL;
    set_int_range(&a, low, (uint64_t)high - (uint64_t)low);
  }
  return fill_inplace("random_", self, &a, generator);
}

/* ---- in-place samplers ---- */

lt_tensor *lt_cuda_uniform_(lt_tensor *self, double from, double to, struct lt_generator *generator) {
  if (need_float("uniform_", (lt_dtype)self->dtype) < 0) return NULL;
  if (!(from <= to) || !isfinite(to - from))
    return lt_error_null("uniform_: expected from <= to, both finite, got from=%g to=%g", from, to);
  lt_ck_rng_args a = { .kind = LT_CK_RNG_UNIFORM, .a = from, .b = to };
  return fill_inplace("uniform_", self, &a, generator);
}

lt_tensor *lt_cuda_normal_(lt_tensor *self, double mean, double std, struct lt_generator *generator) {
  if (need_float("normal_", (lt_dtype)self->dtype) < 0) return NULL;
  if (!(std >= 0)) return lt_error_null("normal_: argument 'std' must be non-negative, got %g", std);
  lt_ck_rng_args a = { .kind = LT_CK_RNG_NORMAL, .a = mean, .b = std };
  return fill_inplace("normal_", self, &a, generator);
}

lt_tensor *lt_cuda_exponential_(lt_tensor *self, double lambd, struct lt_generator *generator) {
  if (need_float("exponential_", (lt_dtype)self->dtype) < 0) return NULL;
  if (!(lambd > 0)) return lt_error_null("exponential_: argument 'lambd' must be positive, got %g", lambd);
  lt_ck_rng_args a = { .kind = LT_CK_RNG_EXPONENTIAL, .a = lambd };
  return fill_inplace("exponential_", self, &a, generator);
}

static int check_p(const char *op, double p) {
  if (!(p >= 0 && p <= 1)) return lt_error("%s: argument 'p' must be in [0, 1], got %g", op, p);
  return 0;
}

lt_tensor *lt_cuda_bernoulli_(lt_tensor *self, lt_scalar p, struct lt_generator *generator) {
  double pv = lt_scalar_to_double(p);
  if (check_p("bernoulli_", pv) < 0) return NULL;
  lt_ck_rng_args a = { .kind = LT_CK_RNG_BERNOULLI, .a = pv };
  return fill_inplace("bernoulli_", self, &a, generator);
}

lt_tensor *lt_cuda_bernoulli_p(lt_tensor *self, double p, struct lt_generator *generator) {
  if (check_p("bernoulli", p) < 0) return NULL;
  lt_tensor *t = lt_tensor_new_like(self, (lt_dtype)self->dtype);
  lt_ck_rng_args a = { .kind = LT_CK_RNG_BERNOULLI, .a = p };
  if (t && draw("bernoulli", t, &a, generator) < 0) { lt_tensor_release(t); t = NULL; }
  return t;
}

/* Bernoulli draws with the probabilities p (broadcast to sizes) into t (NULL:
** self, in place); the kernel flags a probability outside [0, 1], read back
** after the draw (the CPU's message, which a GPU cannot say before it runs:
** the draw is made, then refused). */
static lt_tensor *bernoulli_probs(const char *op, lt_tensor *self, lt_tensor *p, lt_generator *g, bool inplace) {
  int64_t st[LT_MAX_DIMS];
  if (lt_expand_strides(op, p, self->ndim, self->sizes, st) < 0) return NULL;
  if (!lt_cuda_on(p)) return lt_error_null("%s: argument 'p' must be on the device of self (cuda), got cpu", op);
  lt_tensor *pr = lt_tensor_new(LT_FLOAT64, lt_tensor_device(self), self->ndim, self->sizes);
  int64_t two = 2;
  lt_tensor *bad = lt_tensor_new(LT_FLOAT64, lt_tensor_device(self), 1, &two);
  lt_tensor *r = NULL;
  if (!pr || !bad) goto done;
  if (lt_tensor_copy_(pr, p) < 0) { lt_error("%s: argument 'p' %s", op, lt_error_message()); goto done; }
  if (lt_tensor_fill_(bad, lt_scalar_int(0)) < 0) goto done;
  lt_ck_rng_args a = { .kind = LT_CK_RNG_BERNOULLI_T, .probs = lt_tensor_data(pr), .bad = lt_tensor_data(bad) };
  r = inplace ? fill_inplace(op, self, &a, g) : lt_tensor_new_like(self, (lt_dtype)self->dtype);
  if (r && !inplace && draw(op, r, &a, g) < 0) { lt_tensor_release(r); r = NULL; }
  if (!r) goto done;
  double flag[2];
  if (lt_backend_of(lt_tensor_device(bad))->copy_to_host(flag, bad->storage, (size_t)bad->offset * 8, sizeof flag) < 0) {
    lt_tensor_release(r);
    r = NULL;
  } else if (flag[0] != 0) {
    lt_tensor_release(r);
    r = lt_error_null("%s: probabilities must be in [0, 1], got %g", op, flag[1]);
  }
done:
  lt_tensor_release(pr);
  lt_tensor_release(bad);
  return r;
}

lt_tensor *lt_cuda_bernoulli_tensor_(lt_tensor *self, lt_tensor *p, struct lt_generator *generator) {
  return bernoulli_probs("bernoulli_", self, p, generator, true);
}

lt_tensor *lt_cuda_bernoulli(lt_tensor *self, struct lt_generator *generator) {
  return bernoulli_probs("bernoulli", self, self, generator, false);
}

/* ---- dropout: the CPU's mask (src/cpu/nn_misc.c): keep element i when the
** 24-bit uniform of word i % 4 of block base + i / 4 is >= p; the CPU
** reserves blocks 32 elements (8 blocks) at a time, and so does this ---- */

static int drop(const char *op, lt_tensor *out, lt_tensor *mask, const lt_tensor *x, double p) {
  int dev = lt_tensor_device(out ? out : mask).index;
  lt_generator *g = device_gen(op, NULL, dev);
  if (!g) return -1;
  lt_tensor *t = out ? out : mask;
  lt_philox_key key = lt_philox_key_of(g->seed);
  double thr = ceil(p * 16777216.0);
  lt_ck_rng_args a = {
    .kind = LT_CK_RNG_DROPOUT, .dtype = (out ? out : x)->dtype, .out = out ? lt_tensor_data(out) : NULL,
    .n = t->numel, .k0 = key.k0, .k1 = key.k1, .per = 4, .x = x ? lt_tensor_data(x) : NULL,
    .mask = mask ? lt_tensor_data(mask) : NULL, .thr = (uint32_t)(thr > 16777216.0 ? 16777216.0 : thr),
    .scale = 1.0 / (1.0 - p),
  };
  a.base = lt_generator_reserve(g, (uint64_t)((t->numel + 31) / 32) * 8);
  int rc = lt_cuda_run_random(op, dev, &a);
  if (rc > 0)
    return lt_error("%s: not implemented for cuda %s tensors (the CUDA kernels refuse it)", op, lt_dtype_name((lt_dtype)a.dtype));
  return rc;
}

int lt_cuda_native_dropout(lt_tensor *input, double p, bool train, lt_tensor **output, lt_tensor **mask) {
  static const char op[] = "native_dropout";
  *output = *mask = NULL;
  if (lt_meta_check_prob(op, "p", p) < 0 || lt_meta_check_float(op, "input", input) < 0) return -1;
  lt_dtype dt = (lt_dtype)input->dtype;
  lt_tensor *o = lt_tensor_new_like(input, dt), *m = lt_tensor_new_like(input, LT_BOOL);
  if (!o || !m) goto fail;
  int triv = lt_meta_dropout_trivial(input, p, train, o, m);
  if (triv < 0) goto fail;
  if (triv == 0) {
    lt_tensor *x = lt_tensor_contiguous(input);
    if (!x) goto fail;
    int rc = drop(op, o, m, x, p);
    lt_tensor_release(x);
    if (rc < 0) goto fail;
  }
  *output = o;
  *mask = m;
  return 0;
fail:
  lt_tensor_release(o);
  lt_tensor_release(m);
  return -1;
}

lt_tensor *lt_cuda__dropout_mask(lt_tensor *self, double p, lt_intlist shape) {
  static const char op[] = "_dropout_mask";
  bool done;
  lt_tensor *m = lt_meta_dropout_mask_new(op, self, p, shape, &done);
  if (!m || done) return m;
  if (drop(op, m, NULL, NULL, p) < 0) { lt_tensor_release(m); return NULL; }
  return m;
}

/* ---- permutations ---- */

/* randperm: n random 64-bit keys on the device and their stable argsort (the
** sort family's kernel), whose indices are 1-based like the CPU's result. Two keys are equal
** with probability about n^2 / 2^65, and then keep their order, so the
** permutation is uniform to that bias. Not the CPU's numbers: it shuffles
** (Fisher-Yates) from its own stream. */
lt_tensor *lt_cuda_randperm(int64_t n, struct lt_generator *generator, int dtype, lt_device device) {
  lt_tensor *t = lt_meta_randperm_new(n, dtype, device);
  if (!t || n == 0) return t;
  lt_tensor *keys = lt_meta_creation_new("randperm", 1, &n, LT_INT64, LT_INT64, device), *idx = NULL;
  lt_ck_rng_args a = {0};
  set_int_range(&a, INT64_MIN, 0);   /* every int64 */
  int rc = -1;
  if (keys && draw("randperm", keys, &a, generator) == 0 && (idx = lt_argsort(keys, 0, false, true)))
    rc = lt_tensor_copy_(t, idx);
  lt_tensor_release(keys);
  lt_tensor_release(idx);
  if (rc < 0) { lt_tensor_release(t); return NULL; }
  return t;
}
