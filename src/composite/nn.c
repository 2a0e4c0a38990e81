/*
** nn.c — the ops of torch.nn.functional written with other ops' entry points:
** linear, bilinear, the dropout wrappers, glu, rrelu, cosine_similarity,
** pairwise_distance and scaled_dot_product_attention. They are
** differentiable through the ops they call and run on any backend.
*/
#include <math.h>
#include <string.h>
#include "lt_ops.h"
#include "meta/meta.h"

#define NN_ERR_LEN 200

static lt_tensor *release_ret(lt_tensor *keep, lt_tensor *a, lt_tensor *b) {
  lt_tensor_release(a);
  lt_tensor_release(b);
  return keep;
}

lt_tensor *lt_composite_dropout(lt_tensor *input, double p, bool train) {
  if (lt_meta_check_prob("dropout", "p", p) < 0) return NULL;
  if (!train || p == 0 || input->numel == 0) { lt_tensor_retain(input); return input; }
  if (lt_meta_check_float("dropout", "input", input) < 0) return NULL;
  lt_tensor *o, *m;
  if (lt_native_dropout(input, p, train, &o, &m) < 0) return NULL;
  lt_tensor_release(m);
  return o;
}

/* self * mask in place, mask of the given shape (NULL: self's) */
static lt_tensor *dropout_inplace(const char *op, lt_tensor *self, double p, bool train, lt_intlist shape) {
  if (lt_meta_check_prob(op, "p", p) < 0) return NULL;
  if (!train || p == 0 || self->numel == 0) { lt_tensor_retain(self); return self; }
  if (lt_meta_check_float(op, "self", self) < 0) return NULL;
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
  if (lt_meta_check_prob("feature_dropout", "p", p) < 0) return NULL;
  int64_t sz[LT_MAX_DIMS];
  int nd = feature_shape("feature_dropout", input, sz);
  if (nd < 0) return NULL;
  if (!train || p == 0 || input->numel == 0) { lt_tensor_retain(input); return input; }
  if (lt_meta_check_float("feature_dropout", "input", input) < 0) return NULL;
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

static const char *shape_s(const lt_tensor *t, char *buf) { return lt_shape_str(t->ndim, t->sizes, buf, 96); }

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
  if (lt_meta_check_float(op, "self", self) < 0) return -1;
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

/* [L, S] bool: true above the diagonal (the positions a causal query may not see) */
static lt_tensor *causal_block(int64_t l, int64_t s, lt_device dev) {
  int64_t sz[2] = { l, s };
  lt_tensor *ones = lt_ones(lt_intlist_make(sz, 2), LT_BOOL, dev);
  lt_tensor *m = ones ? lt_triu(ones, 1) : NULL;
  lt_tensor_release(ones);
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
  if (lt_meta_check_prob(op, "p", dropout_p) < 0) return NULL;
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
