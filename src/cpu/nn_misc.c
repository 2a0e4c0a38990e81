/*
** nn_misc.c — the CPU kernels of torch.nn.functional that are neither
** convolutions nor normalisations: dropout (drawing from the global Philox
** generator), embedding and its backward, one_hot and the fused _linear.
** The ops written with other ops (linear, dropout, glu, rrelu,
** scaled_dot_product_attention, ...) are in src/composite/nn.c.
*/
#include <math.h>
#include <string.h>
#include "core/tensor.h"
#include "cpu/parallel.h"
#include "core/rng.h"
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "meta/meta.h"
#include "meta/creation.h"
#include "meta/index.h"

#define NN_ERR_LEN 200

/* ---- dropout ------------------------------------------------------------ */

/* Element i keeps its value when the 24-bit uniform of word i % 4 of Philox
** block base + i / 4 is >= p, so the mask depends only on (seed, offset),
** not on how the loop is split across threads. */
#define DROP_CHUNK (4 * LT_PHILOX_LANES)   /* elements per lt_philox8 call */
typedef struct drop_ctx {
  lt_philox_key key;
  uint64_t base;
  uint32_t thr;          /* keep when (w >> 8) >= thr */
  int64_t n;
  lt_dtype dt;
  double scale;
  const void *x;         /* input (contiguous), or NULL: write the scaled mask */
  void *out;             /* output values (dtype dt) */
  bool *mask;            /* bool mask, or NULL */
} drop_ctx;

#define DROP_APPLY(T, LD, ST) do { \
    const T *x_ = (const T *)c->x; T *o_ = (T *)c->out; \
    if (x_) { for (int k = 0; k < m; k++) o_[i0 + k] = keep[k] ? ST(LD(x_[i0 + k]) * sc) : ST(0); } \
    else { for (int k = 0; k < m; k++) o_[i0 + k] = keep[k] ? ST(sc) : ST(0); } \
  } while (0)
#define ID(v) (v)
#define TO_F(v) ((float)(v))

static void drop_chunk(void *ctx, int64_t b, int64_t e) {
  drop_ctx *c = ctx;
  uint32_t w[4][LT_PHILOX_LANES];
  bool keep[DROP_CHUNK];
  for (int64_t ch = b; ch < e; ch++) {
    lt_philox8(c->key, c->base + (uint64_t)ch * LT_PHILOX_LANES, 0, w);
    int64_t i0 = ch * DROP_CHUNK;
    int m = (int)(c->n - i0 < DROP_CHUNK ? c->n - i0 : DROP_CHUNK);
    for (int k = 0; k < DROP_CHUNK; k++) keep[k] = (w[k & 3][k >> 2] >> 8) >= c->thr;
    if (c->mask) memcpy(c->mask + i0, keep, (size_t)m);
    switch (c->dt) {
      case LT_FLOAT64: { double sc = c->scale; DROP_APPLY(double, ID, ID); break; }
      case LT_FLOAT32: { float sc = (float)c->scale; DROP_APPLY(float, ID, TO_F); break; }
      case LT_FLOAT16: { float sc = (float)c->scale; DROP_APPLY(lt_half, lt_half_to_float, lt_float_to_half); break; }
      default: { float sc = (float)c->scale; DROP_APPLY(lt_bfloat16, lt_bf16_to_float, lt_float_to_bf16); break; }
    }
  }
}

/* draw the mask of n elements with drop probability p (0 < p < 1) */
static void drop_run(drop_ctx *c, double p) {
  lt_generator *g = lt_default_generator();
  int64_t nch = (c->n + DROP_CHUNK - 1) / DROP_CHUNK;
  c->key = lt_philox_key_of(g->seed);
  c->base = lt_generator_reserve(g, (uint64_t)nch * LT_PHILOX_LANES);
  double t = ceil(p * 16777216.0);
  c->thr = (uint32_t)(t > 16777216.0 ? 16777216.0 : t);
  c->scale = 1.0 / (1.0 - p);
  lt_parallel_for(nch, LT_GRAIN_ELEMENTWISE / DROP_CHUNK, drop_chunk, c);
}

int lt_cpu_native_dropout(lt_tensor *input, double p, bool train, lt_tensor **output, lt_tensor **mask) {
  *output = *mask = NULL;
  if (lt_meta_check_prob("native_dropout", "p", p) < 0 || lt_meta_check_float("native_dropout", "input", input) < 0) return -1;
  lt_dtype dt = (lt_dtype)input->dtype;
  lt_tensor *o = lt_tensor_new_like(input, dt), *m = lt_tensor_new_like(input, LT_BOOL);
  if (!o || !m) goto fail;
  int triv = lt_meta_dropout_trivial(input, p, train, o, m);
  if (triv < 0) goto fail;
  if (triv == 0) {
    lt_tensor *x = lt_tensor_contiguous(input);
    if (!x) goto fail;
    drop_ctx c = { .n = input->numel, .dt = dt, .x = lt_tensor_data(x), .out = lt_tensor_data(o),
                   .mask = lt_tensor_data(m) };
    drop_run(&c, p);
    lt_tensor_release(x);
  }
  *output = o;
  *mask = m;
  return 0;
fail:
  lt_tensor_release(o);
  lt_tensor_release(m);
  return -1;
}

lt_tensor *lt_cpu__dropout_mask(lt_tensor *self, double p, lt_intlist shape) {
  bool done;
  lt_tensor *m = lt_meta_dropout_mask_new("_dropout_mask", self, p, shape, &done);
  if (!m || done) return m;
  drop_ctx c = { .n = m->numel, .dt = (lt_dtype)self->dtype, .x = NULL, .out = lt_tensor_data(m), .mask = NULL };
  drop_run(&c, p);
  return m;
}

/* ---- embedding ---------------------------------------------------------- */

#define padding_row lt_meta_padding_row

/* the indices as contiguous int64, checked against [1, rows] */
static lt_tensor *checked_indices(const char *op, lt_tensor *indices, int64_t rows) {
  if (lt_meta_check_embedding_indices(op, indices) < 0) return NULL;
  lt_tensor *idx = lt_tensor_to_dtype_contig(indices, LT_INT64);
  if (!idx) return NULL;
  const int64_t *v = lt_tensor_data(idx);
  for (int64_t i = 0; i < idx->numel; i++)
    if (v[i] < 1 || v[i] > rows) {
      int64_t bad = v[i];
      lt_tensor_release(idx);
      lt_meta_embedding_range(op, bad, rows);
      return NULL;
    }
  return idx;
}

typedef struct emb_ctx { const int64_t *idx; const char *w; char *o; size_t row; } emb_ctx;

/* The rows are scattered over a table bigger than the caches: each copy would wait for
** its first line from memory. The rows EMB_AHEAD indices on are prefetched (whole, up to
** 4 KiB) while this one is copied, so several rows are in flight at once. */
#define EMB_AHEAD 8
static void emb_rows(void *ctx, int64_t b, int64_t e) {
  emb_ctx *c = ctx;
  size_t pf = c->row < 4096 ? c->row : 4096;
  for (int64_t i = b; i < e && i < b + EMB_AHEAD; i++)
    for (size_t k = 0; k < pf; k += 64) __builtin_prefetch(c->w + (size_t)(c->idx[i] - 1) * c->row + k);
  for (int64_t i = b; i < e; i++) {
    if (i + EMB_AHEAD < e) {
      const char *nx = c->w + (size_t)(c->idx[i + EMB_AHEAD] - 1) * c->row;
      for (size_t k = 0; k < pf; k += 64) __builtin_prefetch(nx + k);
    }
    memcpy(c->o + (size_t)i * c->row, c->w + (size_t)(c->idx[i] - 1) * c->row, c->row);
  }
}

lt_tensor *lt_cpu_embedding(lt_tensor *weight, lt_tensor *indices, int64_t padding_idx) {
  if (weight->ndim != 2)
    return lt_error_null("embedding: argument 'weight' must be 2-D ([num_embeddings, embedding_dim]), got %d-D",
                         weight->ndim);
  if (indices->ndim + 1 > LT_MAX_DIMS) return lt_error_null("embedding: argument 'indices' has too many dims");
  int64_t rows = weight->sizes[0], d = weight->sizes[1];
  if (padding_row("embedding", padding_idx, rows) < -1) return NULL;
  lt_tensor *idx = checked_indices("embedding", indices, rows);
  if (!idx) return NULL;
  int64_t sz[LT_MAX_DIMS];
  memcpy(sz, indices->sizes, sizeof(int64_t) * (size_t)indices->ndim);
  sz[indices->ndim] = d;
  lt_tensor *w = lt_tensor_contiguous(weight);
  lt_tensor *o = w ? lt_tensor_new((lt_dtype)weight->dtype, lt_tensor_device(weight), indices->ndim + 1, sz) : NULL;
  if (o && idx->numel > 0 && d > 0) {
    emb_ctx c = { lt_tensor_data(idx), lt_tensor_data(w), lt_tensor_data(o), (size_t)d * lt_dtype_size((lt_dtype)w->dtype) };
    int64_t grain = LT_GRAIN_ELEMENTWISE / d;
    lt_parallel_for(idx->numel, grain < 1 ? 1 : grain, emb_rows, &c);
  }
  lt_tensor_release(w);
  lt_tensor_release(idx);
  return o;
}

/* Threads own ranges of weight rows: each zeroes its rows, then walks all
** the indices and adds the gradient rows that land in its range. No two
** threads write one row, and each row sums in index order (deterministic). */
typedef struct embb_ctx {
  const int64_t *idx; int64_t n, d, pad;
  const void *g; void *o; bool f64;
} embb_ctx;

static void embb_rows(void *ctx, int64_t b, int64_t e) {
  embb_ctx *c = ctx;
  int64_t d = c->d;
  if (c->f64) {
    double *o = c->o; const double *g = c->g;
    memset(o + b * d, 0, sizeof(double) * (size_t)((e - b) * d));
    for (int64_t i = 0; i < c->n; i++) {
      int64_t r = c->idx[i] - 1;
      if (r < b || r >= e || r == c->pad) continue;
      double *orow = o + r * d; const double *grow = g + i * d;
      for (int64_t j = 0; j < d; j++) orow[j] += grow[j];
    }
  } else {
    float *o = c->o; const float *g = c->g;
    memset(o + b * d, 0, sizeof(float) * (size_t)((e - b) * d));
    for (int64_t i = 0; i < c->n; i++) {
      int64_t r = c->idx[i] - 1;
      if (r < b || r >= e || r == c->pad) continue;
      float *orow = o + r * d; const float *grow = g + i * d;
      for (int64_t j = 0; j < d; j++) orow[j] += grow[j];
    }
  }
}

lt_tensor *lt_cpu__embedding_backward(lt_tensor *grad, lt_tensor *indices, int64_t num_weights, int64_t padding_idx) {
  const char *op = "embedding_backward";
  int64_t pad = lt_meta_embedding_backward(grad, indices, num_weights, padding_idx);
  if (pad < -1) return NULL;
  lt_dtype dt = (lt_dtype)grad->dtype, ct = dt == LT_FLOAT64 ? LT_FLOAT64 : LT_FLOAT32;
  int64_t d = grad->sizes[grad->ndim - 1];
  lt_tensor *idx = checked_indices(op, indices, num_weights);
  if (!idx) return NULL;
  lt_tensor *g = lt_tensor_to_dtype_contig(grad, ct);
  int64_t sz[2] = { num_weights, d };
  lt_tensor *o = g ? lt_tensor_new(ct, lt_tensor_device(grad), 2, sz) : NULL;
  if (o && o->numel > 0) {
    embb_ctx c = { lt_tensor_data(idx), idx->numel, d, pad, lt_tensor_data(g), lt_tensor_data(o), ct == LT_FLOAT64 };
    int64_t grain = d > 0 ? LT_GRAIN_ELEMENTWISE / d : 1;
    lt_parallel_for(num_weights, grain < 1 ? 1 : grain, embb_rows, &c);
  }
  lt_tensor_release(g);
  lt_tensor_release(idx);
  if (o && ct != dt) {   /* 16-bit floats accumulate in float32 */
    lt_tensor *r = lt_tensor_clone_as(o, dt);
    lt_tensor_release(o);
    o = r;
  }
  return o;
}

/* ---- one_hot ------------------------------------------------------------ */

lt_tensor *lt_cpu_one_hot(lt_tensor *self, int64_t num_classes) {
  lt_dtype it = (lt_dtype)self->dtype;
  if (lt_dtype_is_float(it) || it == LT_BOOL)
    return lt_error_null("one_hot: argument 'self' must be an integer (index) tensor, got %s", lt_dtype_name(it));
  if (self->ndim + 1 > LT_MAX_DIMS) return lt_error_null("one_hot: argument 'self' has too many dims");
  if (num_classes < -1 || num_classes == 0)
    return lt_error_null("one_hot: argument 'num_classes' must be positive or -1, got %lld", (long long)num_classes);
  lt_tensor *v = lt_tensor_to_dtype_contig(self, LT_INT64);
  if (!v) return NULL;
  const int64_t *x = lt_tensor_data(v);
  int64_t n = v->numel, lo = INT64_MAX, hi = 0;
  for (int64_t i = 0; i < n; i++) { if (x[i] < lo) lo = x[i]; if (x[i] > hi) hi = x[i]; }
  if (num_classes == -1) {
    if (n == 0) {
      lt_tensor_release(v);
      return lt_error_null("one_hot: can not infer the number of classes from an empty tensor; pass 'num_classes'");
    }
    num_classes = hi;
  }
  if (n > 0 && (lo < 1 || hi > num_classes)) {
    lt_tensor_release(v);
    return lt_error_null("one_hot: argument 'self' holds %lld, out of range for %lld classes (class values are 1-based)",
                         (long long)(lo < 1 ? lo : hi), (long long)num_classes);
  }
  int64_t sz[LT_MAX_DIMS];
  memcpy(sz, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
  sz[self->ndim] = num_classes;
  lt_tensor *o = lt_tensor_new_zeros(LT_INT64, lt_tensor_device(self), self->ndim + 1, sz);
  if (o) {
    int64_t *d = lt_tensor_data(o);
    for (int64_t i = 0; i < n; i++) d[i * num_classes + x[i] - 1] = 1;
  }
  lt_tensor_release(v);
  return o;
}

/* the 2-D product behind linear; its own op so that the weight's gradient is
** computed as grad^T @ input, already [out, in] (through addmm's derivative it
** would come out transposed and cost a strided copy) */
lt_tensor *lt_cpu__linear(lt_tensor *input, lt_tensor *weight, lt_tensor *bias) {
  if (input->ndim != 2 || weight->ndim != 2 || input->sizes[1] != weight->sizes[1])
    return lt_error_null("_linear: arguments 'input' [N, in] and 'weight' [out, in] do not match");
  lt_tensor *wt = lt_t(weight);
  if (!wt) return NULL;
  /* one gemm: the bias is broadcast into the result, then beta = 1 adds the product */
  lt_tensor *y = bias ? lt_addmm(bias, input, wt, lt_scalar_int(1), lt_scalar_int(1)) : lt_mm(input, wt);
  lt_tensor_release(wt);
  return y;
}
