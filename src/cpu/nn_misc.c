/*
** nn_misc.c — the training ops of torch.nn.functional that are neither
** convolutions nor normalisations: dropout (kernels drawing from the global
** Philox generator), embedding and its backward, one_hot, and the ops
** written with other ops (linear, bilinear, the dropout wrappers, glu, rrelu,
** cosine_similarity, pairwise_distance, scaled_dot_product_attention), which
** are differentiable through the ops they call.
*/
#include <math.h>
#include <string.h>
#include "core/tensor.h"
#include "cpu/parallel.h"
#include "core/rng.h"
#include "lt_ops.h"

#define NN_ERR_LEN 200

static lt_tensor *release_ret(lt_tensor *keep, lt_tensor *a, lt_tensor *b) {
  lt_tensor_release(a);
  lt_tensor_release(b);
  return keep;
}

/* ---- dropout ------------------------------------------------------------ */

static int check_p(const char *op, double p) {
  if (!(p >= 0 && p <= 1)) { lt_error("%s: argument 'p' must be between 0 and 1, got %g", op, p); return -1; }
  return 0;
}

static int check_float(const char *op, const char *arg, const lt_tensor *t) {
  if (!lt_dtype_is_float((lt_dtype)t->dtype)) {
    lt_error("%s: argument '%s' must be a floating point tensor, got %s", op, arg, lt_dtype_name((lt_dtype)t->dtype));
    return -1;
  }
  return 0;
}

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
  if (check_p("native_dropout", p) < 0 || check_float("native_dropout", "input", input) < 0) return -1;
  lt_dtype dt = (lt_dtype)input->dtype;
  lt_tensor *o = lt_tensor_new_like(input, dt), *m = lt_tensor_new_like(input, LT_BOOL);
  if (!o || !m) goto fail;
  if (!train || p == 0 || p == 1 || input->numel == 0) {
    bool all = !train || p == 0;
    if (lt_tensor_fill_(m, lt_scalar_bool(all)) < 0) goto fail;
    if (all ? lt_tensor_copy_(o, input) < 0 : lt_tensor_fill_(o, lt_scalar_int(0)) < 0) goto fail;
  } else {
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
  if (check_p("_dropout_mask", p) < 0 || check_float("_dropout_mask", "self", self) < 0) return NULL;
  int nd = shape.n >= 0 ? shape.n : self->ndim;
  const int64_t *sz = shape.n >= 0 ? shape.v : self->sizes;
  if (nd > LT_MAX_DIMS) return lt_error_null("_dropout_mask: argument 'shape' has too many dims");
  for (int i = 0; i < nd; i++)
    if (sz[i] < 0) return lt_error_null("_dropout_mask: argument 'shape' has a negative size");
  lt_tensor *m = lt_tensor_new((lt_dtype)self->dtype, lt_tensor_device(self), nd, sz);
  if (!m) return NULL;
  if (p == 0 || p == 1 || m->numel == 0) {
    if (lt_tensor_fill_(m, lt_scalar_int(p == 1 ? 0 : 1)) < 0) { lt_tensor_release(m); return NULL; }
    return m;
  }
  drop_ctx c = { .n = m->numel, .dt = (lt_dtype)self->dtype, .x = NULL, .out = lt_tensor_data(m), .mask = NULL };
  drop_run(&c, p);
  return m;
}

lt_tensor *lt_composite_dropout(lt_tensor *input, double p, bool train) {
  if (check_p("dropout", p) < 0) return NULL;
  if (!train || p == 0 || input->numel == 0) { lt_tensor_retain(input); return input; }
  if (check_float("dropout", "input", input) < 0) return NULL;
  lt_tensor *o, *m;
  if (lt_native_dropout(input, p, train, &o, &m) < 0) return NULL;
  lt_tensor_release(m);
  return o;
}

/* self * mask in place, mask of the given shape (NULL: self's) */
static lt_tensor *dropout_inplace(const char *op, lt_tensor *self, double p, bool train, lt_intlist shape) {
  if (check_p(op, p) < 0) return NULL;
  if (!train || p == 0 || self->numel == 0) { lt_tensor_retain(self); return self; }
  if (check_float(op, "self", self) < 0) return NULL;
  lt_tensor *m = lt__dropout_mask(self, p, shape);
  if (!m) return NULL;
  lt_tensor *r = lt_mul_(self, m);
  lt_tensor_release(m);
  return r;
}

lt_tensor *lt_composite_dropout_(lt_tensor *self, double p, bool train) {
  return dropout_inplace("dropout_", self, p, train, lt_intlist_none());
}

/* feature dropout zeroes whole channels: the mask is [N, C, 1, ...] */
static int feature_shape(const char *op, const lt_tensor *t, int64_t *sz) {
  if (t->ndim < 2) {
    lt_error("%s: argument 'input' must have at least 2 dims ([N, C, ...]), got %d", op, t->ndim);
    return -1;
  }
  for (int i = 0; i < t->ndim; i++) sz[i] = i < 2 ? t->sizes[i] : 1;
  return t->ndim;
}

lt_tensor *lt_composite_feature_dropout(lt_tensor *input, double p, bool train) {
  if (check_p("feature_dropout", p) < 0) return NULL;
  int64_t sz[LT_MAX_DIMS];
  int nd = feature_shape("feature_dropout", input, sz);
  if (nd < 0) return NULL;
  if (!train || p == 0 || input->numel == 0) { lt_tensor_retain(input); return input; }
  if (check_float("feature_dropout", "input", input) < 0) return NULL;
  lt_tensor *m = lt__dropout_mask(input, p, lt_intlist_make(sz, nd));
  if (!m) return NULL;
  return release_ret(lt_mul(input, m), m, NULL);
}

lt_tensor *lt_composite_feature_dropout_(lt_tensor *self, double p, bool train) {
  int64_t sz[LT_MAX_DIMS];
  int nd = feature_shape("feature_dropout_", self, sz);
  if (nd < 0) return NULL;
  return dropout_inplace("feature_dropout_", self, p, train, lt_intlist_make(sz, nd));
}

/* ---- embedding ---------------------------------------------------------- */

/* padding_idx (1-based, negative from the end, LT_NOINT absent) as a 0-based
** row, -1 when absent; -2 with an error when out of range */
static int64_t padding_row(const char *op, int64_t padding_idx, int64_t rows) {
  if (padding_idx == LT_NOINT) return -1;
  int64_t r = padding_idx > 0 ? padding_idx - 1 : rows + padding_idx;
  if (padding_idx == 0 || r < 0 || r >= rows) {
    lt_error("%s: argument 'padding_idx' must be within 1..%lld or -%lld..-1 (1-based), got %lld", op,
             (long long)rows, (long long)rows, (long long)padding_idx);
    return -2;
  }
  return r;
}

/* the indices as contiguous int64, checked against [1, rows] */
static lt_tensor *checked_indices(const char *op, lt_tensor *indices, int64_t rows) {
  lt_dtype it = (lt_dtype)indices->dtype;
  if (it != LT_INT64 && it != LT_INT32 && it != LT_INT16 && it != LT_INT8 && it != LT_UINT8)
    return lt_error_null("%s: argument 'indices' must be an integer tensor, got %s", op, lt_dtype_name(it));
  lt_tensor *idx = lt_tensor_to_dtype_contig(indices, LT_INT64);
  if (!idx) return NULL;
  const int64_t *v = lt_tensor_data(idx);
  for (int64_t i = 0; i < idx->numel; i++)
    if (v[i] < 1 || v[i] > rows) {
      long long bad = (long long)v[i];
      lt_tensor_release(idx);
      return lt_error_null("%s: argument 'indices' holds %lld, out of range for a weight of %lld rows "
                           "(indices are 1-based)", op, bad, (long long)rows);
    }
  return idx;
}

typedef struct emb_ctx { const int64_t *idx; const char *w; char *o; size_t row; } emb_ctx;

static void emb_rows(void *ctx, int64_t b, int64_t e) {
  emb_ctx *c = ctx;
  for (int64_t i = b; i < e; i++) memcpy(c->o + (size_t)i * c->row, c->w + (size_t)(c->idx[i] - 1) * c->row, c->row);
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
  if (check_float(op, "grad", grad) < 0) return NULL;
  if (num_weights < 0) return lt_error_null("%s: argument 'num_weights' must be non-negative", op);
  if (grad->ndim != indices->ndim + 1)
    return lt_error_null("%s: argument 'grad' must have one more dim than 'indices' (%d), got %d", op,
                         indices->ndim, grad->ndim);
  for (int i = 0; i < indices->ndim; i++)
    if (grad->sizes[i] != indices->sizes[i])
      return lt_error_null("%s: argument 'grad' does not match the shape of 'indices'", op);
  int64_t pad = padding_row(op, padding_idx, num_weights);
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

/* ---- composites --------------------------------------------------------- */

static const char *shape_s(const lt_tensor *t, char *buf) { return lt_shape_str(t->ndim, t->sizes, buf, 96); }

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

lt_tensor *lt_composite_linear(lt_tensor *input, lt_tensor *weight, lt_tensor *bias) {
  char b1[96], b2[96];
  if (weight->ndim != 2)
    return lt_error_null("linear: argument 'weight' must be 2-D ([out_features, in_features]), got %s",
                         shape_s(weight, b1));
  int64_t out_f = weight->sizes[0], in_f = weight->sizes[1];
  if (input->ndim < 1 || input->sizes[input->ndim - 1] != in_f)
    return lt_error_null("linear: argument 'input' must end in in_features = %lld (weight is %s), got %s",
                         (long long)in_f, shape_s(weight, b1), shape_s(input, b2));
  if (bias && !(bias->ndim <= 1 && (bias->numel == out_f || bias->numel == 1)))
    return lt_error_null("linear: argument 'bias' must have out_features = %lld elements, got %s",
                         (long long)out_f, shape_s(bias, b1));
  if (input->dtype != weight->dtype || (bias && bias->dtype != weight->dtype))
    return lt_error_null("linear: argument '%s' has dtype %s, weight has %s",
                         input->dtype != weight->dtype ? "input" : "bias",
                         lt_dtype_name((lt_dtype)(input->dtype != weight->dtype ? input->dtype : bias->dtype)),
                         lt_dtype_name((lt_dtype)weight->dtype));
  if (input->ndim == 2) return lt__linear(input, weight, bias);
  int64_t two[2] = { -1, in_f };
  lt_tensor *x = lt_reshape(input, lt_intlist_make(two, 2));
  if (!x) return NULL;
  lt_tensor *y = lt__linear(x, weight, bias);
  lt_tensor_release(x);
  if (!y) return NULL;
  int64_t sz[LT_MAX_DIMS];
  memcpy(sz, input->sizes, sizeof(int64_t) * (size_t)input->ndim);
  sz[input->ndim - 1] = out_f;
  return release_ret(lt_view(y, lt_intlist_make(sz, input->ndim)), y, NULL);
}

lt_tensor *lt_composite_bilinear(lt_tensor *input1, lt_tensor *input2, lt_tensor *weight, lt_tensor *bias) {
  char b1[96], b2[96];
  if (weight->ndim != 3)
    return lt_error_null("bilinear: argument 'weight' must be 3-D ([out_features, in1_features, in2_features]), got %s",
                         shape_s(weight, b1));
  int64_t o = weight->sizes[0], i1 = weight->sizes[1], i2 = weight->sizes[2];
  if (input1->ndim < 1 || input1->sizes[input1->ndim - 1] != i1)
    return lt_error_null("bilinear: argument 'input1' must end in in1_features = %lld, got %s", (long long)i1,
                         shape_s(input1, b1));
  if (input2->ndim != input1->ndim || input2->sizes[input2->ndim - 1] != i2)
    return lt_error_null("bilinear: argument 'input2' must have input1's leading dims and end in in2_features = %lld, got %s",
                         (long long)i2, shape_s(input2, b1));
  for (int k = 0; k + 1 < input1->ndim; k++)
    if (input1->sizes[k] != input2->sizes[k])
      return lt_error_null("bilinear: argument 'input2' has leading dims %s, input1 has %s", shape_s(input2, b1),
                           shape_s(input1, b2));
  if (bias && !(bias->ndim <= 1 && (bias->numel == o || bias->numel == 1)))
    return lt_error_null("bilinear: argument 'bias' must have out_features = %lld elements, got %s", (long long)o,
                         shape_s(bias, b1));
  /* y[n, o] = sum_ij x1[n, i] W[o, i, j] x2[n, j]: t = x1 @ W' with W' [i1, o * i2],
  ** then each row's [o, i2] block times x2[n] (a batched matrix-vector product) */
  int64_t s1[2] = { -1, i1 }, s2[3] = { -1, i2, 1 }, sw[2] = { i1, o * i2 }, st[3] = { -1, o, i2 };
  int64_t perm[3] = { 1, 0, 2 };
  lt_tensor *x1 = lt_reshape(input1, lt_intlist_make(s1, 2));
  lt_tensor *x2 = lt_reshape(input2, lt_intlist_make(s2, 3));
  lt_tensor *wp = lt_permute(weight, lt_intlist_make(perm, 3));
  lt_tensor *w2 = wp ? lt_reshape(wp, lt_intlist_make(sw, 2)) : NULL;
  lt_tensor *t = x1 && w2 ? lt_mm(x1, w2) : NULL;
  lt_tensor *t3 = t ? lt_view(t, lt_intlist_make(st, 3)) : NULL;
  lt_tensor *y3 = t3 && x2 ? lt_bmm(t3, x2) : NULL;       /* [n, o, 1] */
  lt_tensor_release(x1); lt_tensor_release(x2); lt_tensor_release(wp); lt_tensor_release(w2);
  lt_tensor_release(t); lt_tensor_release(t3);
  if (!y3) return NULL;
  int64_t sz[LT_MAX_DIMS];
  memcpy(sz, input1->sizes, sizeof(int64_t) * (size_t)input1->ndim);
  sz[input1->ndim - 1] = o;
  lt_tensor *y = lt_reshape(y3, lt_intlist_make(sz, input1->ndim));
  lt_tensor_release(y3);
  if (!y || !bias) return y;
  return release_ret(lt_add(y, bias, lt_scalar_int(1)), y, NULL);
}

lt_tensor *lt_composite_glu(lt_tensor *self, int64_t dim) {
  int d = lt_wrap_dim("glu", dim, self->ndim);
  if (d < 0) return NULL;
  if (self->ndim == 0) return lt_error_null("glu: argument 'self' must have at least 1 dim (glu does not support 0-d tensors)");
  int64_t n = self->sizes[d];
  if (n % 2)
    return lt_error_null("glu: argument 'self' must have an even size along dim %d (it is halved), got %lld", d + 1,
                         (long long)n);
  lt_tensor *a = lt_narrow(self, d, 0, n / 2), *b = lt_narrow(self, d, n / 2, n / 2);
  lt_tensor *s = b ? lt_sigmoid(b) : NULL;
  lt_tensor *r = a && s ? lt_mul(a, s) : NULL;
  lt_tensor_release(a); lt_tensor_release(b); lt_tensor_release(s);
  return r;
}

/* rrelu: slopes uniform in [lower, upper] for the negative elements when
** training, their mean otherwise */
static lt_tensor *rrelu_slopes(const char *op, lt_tensor *self, double lo, double hi) {
  lt_tensor *u = lt_tensor_new_like(self, (lt_dtype)self->dtype);
  if (!u) return NULL;
  lt_tensor *r = lt_uniform_(u, lo, hi, NULL);
  lt_tensor_release(r);
  if (!r) return release_ret(NULL, u, NULL);
  lt_tensor *zero = lt_tensor_wrapped_number(lt_scalar_int(0)), *one = lt_tensor_wrapped_number(lt_scalar_int(1));
  lt_tensor *pos = zero ? lt_ge(self, zero) : NULL;
  lt_tensor *s = pos && one ? lt_where(pos, one, u) : NULL;
  lt_tensor_release(zero); lt_tensor_release(one); lt_tensor_release(pos); lt_tensor_release(u);
  return s;
}

static int rrelu_check(const char *op, lt_tensor *self, double lo, double hi) {
  if (check_float(op, "self", self) < 0) return -1;
  if (!(lo <= hi)) { lt_error("%s: argument 'lower' (%g) must not exceed 'upper' (%g)", op, lo, hi); return -1; }
  return 0;
}

lt_tensor *lt_composite_rrelu(lt_tensor *self, lt_scalar lower, lt_scalar upper, bool training) {
  double lo = lt_scalar_to_double(lower), hi = lt_scalar_to_double(upper);
  if (rrelu_check("rrelu", self, lo, hi) < 0) return NULL;
  if (!training) return lt_leaky_relu(self, lt_scalar_float((lo + hi) / 2));
  lt_tensor *s = rrelu_slopes("rrelu", self, lo, hi);
  if (!s) return NULL;
  return release_ret(lt_mul(self, s), s, NULL);
}

lt_tensor *lt_composite_rrelu_(lt_tensor *self, lt_scalar lower, lt_scalar upper, bool training) {
  double lo = lt_scalar_to_double(lower), hi = lt_scalar_to_double(upper);
  if (rrelu_check("rrelu_", self, lo, hi) < 0) return NULL;
  if (!training) return lt_leaky_relu_(self, lt_scalar_float((lo + hi) / 2));
  lt_tensor *s = rrelu_slopes("rrelu_", self, lo, hi);
  if (!s) return NULL;
  return release_ret(lt_mul_(self, s), s, NULL);
}

/* integer inputs of the distance ops compute in the default float dtype */
static lt_tensor *as_float(lt_tensor *t) {
  if (lt_dtype_is_float((lt_dtype)t->dtype)) { lt_tensor_retain(t); return t; }
  return lt_to(t, lt_get_default_dtype(), false);
}

lt_tensor *lt_composite_cosine_similarity(lt_tensor *x1, lt_tensor *x2, int64_t dim, double eps) {
  int64_t sz[LT_MAX_DIMS];
  int nd = lt_broadcast_shapes("cosine_similarity", x1->ndim, x1->sizes, x2->ndim, x2->sizes, sz);
  if (nd < 0) return NULL;
  int d = lt_wrap_dim("cosine_similarity", dim, nd);
  if (d < 0) return NULL;
  lt_tensor *f1 = as_float(x1), *f2 = as_float(x2);
  lt_tensor *a = f1 ? lt_expand(f1, lt_intlist_make(sz, nd)) : NULL;
  lt_tensor *b = f2 ? lt_expand(f2, lt_intlist_make(sz, nd)) : NULL;
  lt_tensor_release(f1); lt_tensor_release(f2);
  int64_t dd = d;
  lt_intlist dl = lt_intlist_make(&dd, 1);
  /* each operand divided by its norm (clamped to eps) first: the result stays in [-1, 1] */
  lt_tensor *e = lt_tensor_wrapped_number(lt_scalar_float(eps));
  lt_tensor *na = a ? lt_norm(a, lt_scalar_int(2), dl, true, -1) : NULL;
  lt_tensor *nb = b ? lt_norm(b, lt_scalar_int(2), dl, true, -1) : NULL;
  lt_tensor *ca = na && e ? lt_clamp_min(na, e) : NULL, *cb = nb && e ? lt_clamp_min(nb, e) : NULL;
  lt_tensor *ua = ca ? lt_div(a, ca, NULL) : NULL, *ub = cb ? lt_div(b, cb, NULL) : NULL;
  lt_tensor *p = ua && ub ? lt_mul(ua, ub) : NULL;
  lt_tensor *r = p ? lt_sum(p, dl, false, -1) : NULL;
  lt_tensor *tmp[] = { a, b, e, na, nb, ca, cb, ua, ub, p };
  for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) lt_tensor_release(tmp[i]);
  return r;
}

lt_tensor *lt_composite_pairwise_distance(lt_tensor *x1, lt_tensor *x2, double p, double eps, bool keepdim) {
  if (!(p >= 0)) return lt_error_null("pairwise_distance: argument 'p' must be non-negative, got %g", p);
  lt_tensor *f1 = as_float(x1), *f2 = as_float(x2);
  lt_tensor *df = f1 && f2 ? lt_sub(f1, f2, lt_scalar_int(1)) : NULL;
  lt_tensor *e = lt_tensor_wrapped_number(lt_scalar_float(eps));
  lt_tensor *de = df && e ? lt_add(df, e, lt_scalar_int(1)) : NULL;
  lt_tensor *r = NULL;
  if (de) {
    /* the last dim; 0-d operands have nothing to reduce */
    int64_t last = de->ndim - 1;
    lt_intlist dl = de->ndim > 0 ? lt_intlist_make(&last, 1) : lt_intlist_make(NULL, 0);
    r = lt_norm(de, lt_scalar_float(p), dl, keepdim, -1);
  }
  lt_tensor *tmp[] = { f1, f2, df, e, de };
  for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) lt_tensor_release(tmp[i]);
  return r;
}

/* ---- scaled_dot_product_attention --------------------------------------- */

/* [L, S] bool: true above the diagonal (the positions a causal query may not see) */
static lt_tensor *causal_block(int64_t l, int64_t s, lt_device dev) {
  int64_t sz[2] = { l, s };
  lt_tensor *m = lt_tensor_new(LT_BOOL, dev, 2, sz);
  if (!m) return NULL;
  bool *v = lt_tensor_data(m);
  for (int64_t i = 0; i < l; i++)
    for (int64_t j = 0; j < s; j++) v[i * s + j] = j > i;
  return m;
}

lt_tensor *lt_composite_scaled_dot_product_attention(lt_tensor *query, lt_tensor *key, lt_tensor *value,
                                                     lt_tensor *attn_mask, double dropout_p, bool is_causal,
                                                     lt_scalar scale) {
  const char *op = "scaled_dot_product_attention";
  char b1[96], b2[96];
  if (query->ndim < 2) return lt_error_null("%s: argument 'query' must have at least 2 dims ([..., L, E]), got %s", op, shape_s(query, b1));
  if (key->ndim < 2) return lt_error_null("%s: argument 'key' must have at least 2 dims ([..., S, E]), got %s", op, shape_s(key, b1));
  if (value->ndim < 2) return lt_error_null("%s: argument 'value' must have at least 2 dims ([..., S, Ev]), got %s", op, shape_s(value, b1));
  int64_t l = query->sizes[query->ndim - 2], e = query->sizes[query->ndim - 1];
  int64_t s = key->sizes[key->ndim - 2];
  if (key->sizes[key->ndim - 1] != e)
    return lt_error_null("%s: argument 'key' must end in E = %lld like query %s, got %s", op, (long long)e,
                         shape_s(query, b1), shape_s(key, b2));
  if (value->sizes[value->ndim - 2] != s)
    return lt_error_null("%s: argument 'value' must have S = %lld rows like key %s, got %s", op, (long long)s,
                         shape_s(key, b1), shape_s(value, b2));
  if (check_p(op, dropout_p) < 0) return NULL;
  if (is_causal && attn_mask)
    return lt_error_null("%s: argument 'attn_mask' must be None when is_causal is true", op);
  if (attn_mask && attn_mask->dtype != LT_BOOL && !lt_dtype_is_float((lt_dtype)attn_mask->dtype))
    return lt_error_null("%s: argument 'attn_mask' must be a bool or floating point tensor, got %s", op,
                         lt_dtype_name((lt_dtype)attn_mask->dtype));
  double sc = lt_scalar_is_none(scale) ? 1.0 / sqrt((double)e) : lt_scalar_to_double(scale);
  /* scaling the query costs L * E multiplications instead of L * S */
  lt_tensor *scn = lt_tensor_wrapped_number(lt_scalar_float(sc));
  lt_tensor *qs = scn ? lt_mul(query, scn) : NULL;
  lt_tensor *kt = lt_transpose(key, -2, -1);
  lt_tensor *att = qs && kt ? lt_matmul(qs, kt) : NULL;
  lt_tensor_release(scn); lt_tensor_release(qs); lt_tensor_release(kt);
  if (!att) return NULL;
  lt_tensor *t = NULL;
  if (is_causal) {
    lt_tensor *cm = causal_block(l, s, lt_tensor_device(query));
    t = cm ? lt_masked_fill(att, cm, lt_scalar_float(-INFINITY)) : NULL;
    lt_tensor_release(cm);
  } else if (attn_mask && attn_mask->dtype == LT_BOOL) {   /* true: takes part */
    lt_tensor *nm = lt_logical_not(attn_mask);
    t = nm ? lt_masked_fill(att, nm, lt_scalar_float(-INFINITY)) : NULL;
    lt_tensor_release(nm);
  } else if (attn_mask) {
    t = lt_add(att, attn_mask, lt_scalar_int(1));
  }
  if (t || is_causal || attn_mask) { lt_tensor_release(att); att = t; }
  if (!att) return NULL;
  lt_tensor *w = lt_softmax(att, -1, -1);
  lt_tensor_release(att);
  if (w && dropout_p > 0) {
    lt_tensor *wd = lt_dropout(w, dropout_p, true);
    lt_tensor_release(w);
    w = wd;
  }
  if (!w) return NULL;
  return release_ret(lt_matmul(w, value), w, NULL);
}
