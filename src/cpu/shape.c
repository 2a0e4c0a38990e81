/*
** shape.c — views (new geometry over the same storage) and the shape ops
** built from them. View kernels never copy: they compute sizes, strides and
** an offset and call lt_tensor_alias, always returning a fresh tensor header
** (autograd hangs a node on the result, so it must never be self).
** Composites call the dispatched entry points so autograd sees every step.
*/
#include <string.h>
#include <stdlib.h>
#include "lt_ops.h"
#include "autograd/autograd.h"

/* 0-based C index -> how Lua shows it */
static long long lua_index(int64_t i) { return (long long)(i >= 0 ? i + 1 : i); }

static lt_tensor *same_view(const lt_tensor *t) {
  return lt_tensor_alias(t, t->offset, t->ndim, t->sizes, t->strides);
}

/* Resolve a requested shape (one entry may be -1) against numel. Returns ndim or -1. */
static int infer_shape(const char *op, lt_intlist size, int64_t numel, int64_t *out) {
  if (size.n > LT_MAX_DIMS) return lt_error("%s: at most %d dims, got %d", op, LT_MAX_DIMS, size.n);
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < size.n; i++) {
    int64_t s = size.v[i];
    if (s == -1) {
      if (infer >= 0) return lt_error("%s: only one dimension can be inferred (-1)", op);
      infer = i;
    } else if (s < 0) {
      return lt_error("%s: invalid size %lld in dim %d", op, (long long)s, i + 1);
    } else {
      if (s && known > INT64_MAX / s) return lt_error("%s: the shape is too large", op);
      known *= s;
    }
    out[i] = s;
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0) goto bad;
    out[infer] = numel / known;
  } else if (known != numel) {
    goto bad;
  }
  return size.n;
bad: {
    char b[160];
    return lt_error("%s: shape %s is invalid for input of size %lld", op, lt_shape_str(size.n, size.v, b, sizeof b),
                    (long long)numel);
  }
}

/*
** Strides for viewing t with shape `ns`, or false when no strides exist. Old
** dims are grouped into runs that are contiguous with each other; every run
** must be covered exactly by consecutive new dims, which then step through the
** run with strides derived from its innermost stride.
*/
static bool view_strides(const lt_tensor *t, int nn, const int64_t *ns, int64_t *nst) {
  if (t->numel == 0 || t->ndim == 0) {
    lt_contiguous_strides(nn, ns, nst);
    return true;
  }
  int vd = nn - 1;
  int64_t base = t->strides[t->ndim - 1], run = 1, vrun = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    run *= t->sizes[d];
    bool end = d == 0 || (t->sizes[d - 1] != 1 && t->strides[d - 1] != run * base);
    if (!end) continue;
    while (vd >= 0 && (vrun < run || ns[vd] == 1)) {
      nst[vd] = vrun * base;
      vrun *= ns[vd];
      vd--;
    }
    if (vrun != run) return false;
    if (d > 0) { base = t->strides[d - 1]; run = 1; vrun = 1; }
  }
  return vd == -1;
}

lt_tensor *lt_cpu_view(lt_tensor *self, lt_intlist size) {
  int64_t ns[LT_MAX_DIMS], nst[LT_MAX_DIMS];
  int nn = infer_shape("view", size, self->numel, ns);
  if (nn < 0) return NULL;
  if (!view_strides(self, nn, ns, nst))
    return lt_error_null("view: the new shape is not compatible with the input's sizes and strides "
                         "(a dim to merge spans non-contiguous memory); use reshape instead");
  return lt_tensor_alias(self, self->offset, nn, ns, nst);
}

lt_tensor *lt_composite_reshape(lt_tensor *self, lt_intlist shape) {
  int64_t ns[LT_MAX_DIMS], nst[LT_MAX_DIMS];
  int nn = infer_shape("reshape", shape, self->numel, ns);
  if (nn < 0) return NULL;
  lt_intlist l = lt_intlist_make(ns, nn);
  if (view_strides(self, nn, ns, nst)) return lt_view(self, l);
  lt_tensor *c = lt_contiguous(self);
  if (!c) return NULL;
  lt_tensor *r = lt_view(c, l);
  lt_tensor_release(c);
  return r;
}

lt_tensor *lt_composite_flatten(lt_tensor *self, int64_t start_dim, int64_t end_dim) {
  if (self->ndim == 0) {
    int64_t one = 1;
    return lt_reshape(self, lt_intlist_make(&one, 1));
  }
  int s = lt_wrap_dim("flatten", start_dim, self->ndim), e = lt_wrap_dim("flatten", end_dim, self->ndim);
  if (s < 0 || e < 0) return NULL;
  if (s > e) return lt_error_null("flatten: start_dim %d comes after end_dim %d", s + 1, e + 1);
  int64_t ns[LT_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < s; i++) ns[n++] = self->sizes[i];
  int64_t m = 1;
  for (int i = s; i <= e; i++) m *= self->sizes[i];
  ns[n++] = m;
  for (int i = e + 1; i < self->ndim; i++) ns[n++] = self->sizes[i];
  return lt_reshape(self, lt_intlist_make(ns, n));
}

lt_tensor *lt_composite_unflatten(lt_tensor *self, int64_t dim, lt_intlist sizes) {
  int d = lt_wrap_dim("unflatten", dim, self->ndim);
  if (d < 0) return NULL;
  if (self->ndim == 0) return lt_error_null("unflatten: a 0-d tensor has no dim to split");
  if (sizes.n < 1) return lt_error_null("unflatten: argument 'sizes' must not be empty");
  if (self->ndim - 1 + sizes.n > LT_MAX_DIMS) return lt_error_null("unflatten: too many dims");
  int64_t part[LT_MAX_DIMS];
  if (infer_shape("unflatten", sizes, self->sizes[d], part) < 0) return NULL;
  int64_t ns[LT_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < d; i++) ns[n++] = self->sizes[i];
  for (int i = 0; i < sizes.n; i++) ns[n++] = part[i];
  for (int i = d + 1; i < self->ndim; i++) ns[n++] = self->sizes[i];
  return lt_view(self, lt_intlist_make(ns, n));
}

lt_tensor *lt_cpu_squeeze(lt_tensor *self, int64_t dim) {
  int64_t ns[LT_MAX_DIMS], nst[LT_MAX_DIMS];
  int n = 0;
  if (dim == LT_NOINT) {
    for (int i = 0; i < self->ndim; i++)
      if (self->sizes[i] != 1) { ns[n] = self->sizes[i]; nst[n++] = self->strides[i]; }
    return lt_tensor_alias(self, self->offset, n, ns, nst);
  }
  int d = lt_wrap_dim("squeeze", dim, self->ndim);
  if (d < 0) return NULL;
  if (self->ndim == 0 || self->sizes[d] != 1) return same_view(self);
  for (int i = 0; i < self->ndim; i++)
    if (i != d) { ns[n] = self->sizes[i]; nst[n++] = self->strides[i]; }
  return lt_tensor_alias(self, self->offset, n, ns, nst);
}

lt_tensor *lt_cpu_unsqueeze(lt_tensor *self, int64_t dim) {
  if (self->ndim >= LT_MAX_DIMS) return lt_error_null("unsqueeze: tensors have at most %d dims", LT_MAX_DIMS);
  int d = lt_wrap_dim("unsqueeze", dim, self->ndim + 1);
  if (d < 0) return NULL;
  int64_t ns[LT_MAX_DIMS], nst[LT_MAX_DIMS];
  int n = 0;
  for (int i = 0; i <= self->ndim; i++) {
    if (i == d) {
      ns[n] = 1;
      nst[n++] = i < self->ndim ? self->sizes[i] * self->strides[i] : 1;
    }
    if (i < self->ndim) { ns[n] = self->sizes[i]; nst[n++] = self->strides[i]; }
  }
  return lt_tensor_alias(self, self->offset, n, ns, nst);
}

lt_tensor *lt_cpu_transpose(lt_tensor *self, int64_t dim0, int64_t dim1) {
  int a = lt_wrap_dim("transpose", dim0, self->ndim), b = lt_wrap_dim("transpose", dim1, self->ndim);
  if (a < 0 || b < 0) return NULL;
  if (self->ndim == 0) return same_view(self);
  int64_t ns[LT_MAX_DIMS], nst[LT_MAX_DIMS];
  memcpy(ns, self->sizes, sizeof(int64_t) * self->ndim);
  memcpy(nst, self->strides, sizeof(int64_t) * self->ndim);
  ns[a] = self->sizes[b]; nst[a] = self->strides[b];
  ns[b] = self->sizes[a]; nst[b] = self->strides[a];
  return lt_tensor_alias(self, self->offset, self->ndim, ns, nst);
}

lt_tensor *lt_composite_t(lt_tensor *self) {
  if (self->ndim > 2) return lt_error_null("t: expects a tensor with at most 2 dims, got %d (use transpose)", self->ndim);
  if (self->ndim < 2) return lt_transpose(self, 0, 0);
  return lt_transpose(self, 0, 1);
}

lt_tensor *lt_cpu_permute(lt_tensor *self, lt_intlist dims) {
  if (dims.n != self->ndim)
    return lt_error_null("permute: argument 'dims' has %d entries but the tensor has %d dims", dims.n, self->ndim);
  int64_t ns[LT_MAX_DIMS], nst[LT_MAX_DIMS];
  bool seen[LT_MAX_DIMS] = {0};
  for (int i = 0; i < dims.n; i++) {
    int d = lt_wrap_dim("permute", dims.v[i], self->ndim);
    if (d < 0) return NULL;
    if (seen[d]) return lt_error_null("permute: dim %d appears twice in argument 'dims'", d + 1);
    seen[d] = true;
    ns[i] = self->sizes[d];
    nst[i] = self->strides[d];
  }
  return lt_tensor_alias(self, self->offset, self->ndim, ns, nst);
}

lt_tensor *lt_cpu_expand(lt_tensor *self, lt_intlist size) {
  if (size.n > LT_MAX_DIMS) return lt_error_null("expand: at most %d dims", LT_MAX_DIMS);
  if (size.n < self->ndim)
    return lt_error_null("expand: argument 'size' has %d entries, fewer than the tensor's %d dims", size.n, self->ndim);
  int64_t ns[LT_MAX_DIMS], nst[LT_MAX_DIMS];
  int lead = size.n - self->ndim;
  for (int i = 0; i < size.n; i++) {
    int64_t want = size.v[i];
    if (i < lead) {
      if (want < 0) return lt_error_null("expand: size %lld is invalid for the new leading dim %d", (long long)want, i + 1);
      ns[i] = want; nst[i] = 0;
      continue;
    }
    int64_t have = self->sizes[i - lead];
    if (want == -1) want = have;
    if (want < 0) return lt_error_null("expand: invalid size %lld in dim %d", (long long)want, i + 1);
    if (want == have) { ns[i] = have; nst[i] = self->strides[i - lead]; }
    else if (have == 1) { ns[i] = want; nst[i] = 0; }
    else return lt_error_null("expand: the size %lld must match the existing size %lld at non-singleton dim %d",
                              (long long)want, (long long)have, i + 1);
  }
  return lt_tensor_alias(self, self->offset, size.n, ns, nst);
}

lt_tensor *lt_composite_expand_as(lt_tensor *self, lt_tensor *other) {
  return lt_expand(self, lt_intlist_make(other->sizes, other->ndim));
}

lt_tensor *lt_cpu_narrow(lt_tensor *self, int64_t dim, int64_t start, int64_t length) {
  if (self->ndim == 0) return lt_error_null("narrow: cannot narrow a 0-d tensor");
  int d = lt_wrap_dim("narrow", dim, self->ndim);
  if (d < 0) return NULL;
  int64_t n = self->sizes[d], s = start < 0 ? start + n : start;
  if (s < 0 || s > n)
    return lt_error_null("narrow: start %lld is out of range for dim %d with size %lld", lua_index(start), d + 1, (long long)n);
  if (length < 0 || length > n - s)
    return lt_error_null("narrow: start %lld + length %lld exceeds the size %lld of dim %d", (long long)(s + 1),
                         (long long)length, (long long)n, d + 1);
  int64_t ns[LT_MAX_DIMS];
  memcpy(ns, self->sizes, sizeof(int64_t) * self->ndim);
  ns[d] = length;
  return lt_tensor_alias(self, self->offset + (length ? s * self->strides[d] : 0), self->ndim, ns, self->strides);
}

lt_tensor *lt_cpu_select(lt_tensor *self, int64_t dim, int64_t index) {
  if (self->ndim == 0) return lt_error_null("select: cannot select on a 0-d tensor");
  int d = lt_wrap_dim("select", dim, self->ndim);
  if (d < 0) return NULL;
  int64_t n = self->sizes[d], i = index < 0 ? index + n : index;
  if (i < 0 || i >= n)
    return lt_error_null("select: index %lld is out of range for dim %d with size %lld", lua_index(index), d + 1,
                         (long long)n);
  int64_t ns[LT_MAX_DIMS], nst[LT_MAX_DIMS];
  int k = 0;
  for (int j = 0; j < self->ndim; j++)
    if (j != d) { ns[k] = self->sizes[j]; nst[k++] = self->strides[j]; }
  return lt_tensor_alias(self, self->offset + i * self->strides[d], k, ns, nst);
}

lt_tensor *lt_composite_t7sub(lt_tensor *self, int64_t d1s, int64_t d1e, int64_t d2s, int64_t d2e, int64_t d3s,
                              int64_t d3e, int64_t d4s, int64_t d4e) {
  int64_t r[4][2] = {{d1s, d1e}, {d2s, d2e}, {d3s, d3e}, {d4s, d4e}};
  lt_tensor *cur = self;
  lt_tensor_retain(cur);
  for (int d = 0; d < 4; d++) {
    if (r[d][0] == LT_NOINT && r[d][1] == LT_NOINT) continue;
    if (r[d][0] == LT_NOINT || r[d][1] == LT_NOINT) {
      lt_tensor_release(cur);
      return lt_error_null("sub: dim %d needs both a start and an end", d + 1);
    }
    if (d >= self->ndim) {
      lt_tensor_release(cur);
      return lt_error_null("sub: a range for dim %d but the tensor has %d dims", d + 1, self->ndim);
    }
    int64_t n = self->sizes[d], s = r[d][0], e = r[d][1];
    s = s < 0 ? s + n : s - 1;
    e = e < 0 ? e + n : e - 1;
    if (r[d][0] == 0 || r[d][1] == 0 || s < 0 || s >= n || e < s || e >= n) {
      lt_tensor_release(cur);
      return lt_error_null("sub: range %lld..%lld is out of range for dim %d with size %lld", (long long)r[d][0],
                           (long long)r[d][1], d + 1, (long long)n);
    }
    lt_tensor *nx = lt_narrow(cur, d, s, e - s + 1);
    lt_tensor_release(cur);
    if (!nx) return NULL;
    cur = nx;
  }
  if (cur == self) {   /* no ranges given: still a new view */
    lt_tensor_release(cur);
    return lt_narrow(self, 0, 0, self->sizes[0]);
  }
  return cur;
}

lt_tensor *lt_cpu_unfold(lt_tensor *self, int64_t dimension, int64_t size, int64_t step) {
  if (self->ndim >= LT_MAX_DIMS) return lt_error_null("unfold: tensors have at most %d dims", LT_MAX_DIMS);
  int d = lt_wrap_dim("unfold", dimension, self->ndim);
  if (d < 0) return NULL;
  int64_t n = self->ndim ? self->sizes[d] : 1, st = self->ndim ? self->strides[d] : 1;
  if (step <= 0) return lt_error_null("unfold: argument 'step' must be positive, got %lld", (long long)step);
  if (size < 0 || size > n)
    return lt_error_null("unfold: argument 'size' (%lld) must be between 0 and the size %lld of dim %d", (long long)size,
                         (long long)n, d + 1);
  int64_t ns[LT_MAX_DIMS], nst[LT_MAX_DIMS];
  memcpy(ns, self->sizes, sizeof(int64_t) * self->ndim);
  memcpy(nst, self->strides, sizeof(int64_t) * self->ndim);
  int k = self->ndim;
  if (k == 0) { ns[0] = (n - size) / step + 1; nst[0] = step; k = 1; }
  else { ns[d] = (n - size) / step + 1; nst[d] = st * step; }
  ns[k] = size;
  nst[k] = st;
  return lt_tensor_alias(self, self->offset, k + 1, ns, nst);
}

lt_tensor *lt_cpu_diagonal(lt_tensor *self, int64_t offset, int64_t dim1, int64_t dim2) {
  if (self->ndim < 2) return lt_error_null("diagonal: expects a tensor with at least 2 dims, got %d", self->ndim);
  int a = lt_wrap_dim("diagonal", dim1, self->ndim), b = lt_wrap_dim("diagonal", dim2, self->ndim);
  if (a < 0 || b < 0) return NULL;
  if (a == b) return lt_error_null("diagonal: dim1 and dim2 must differ (both are %d)", a + 1);
  int64_t na = self->sizes[a], nb = self->sizes[b], len, off = self->offset;
  if (offset >= 0) {
    len = nb - offset < na ? nb - offset : na;
    if (len > 0) off += offset * self->strides[b];
  } else {
    len = na + offset < nb ? na + offset : nb;
    if (len > 0) off -= offset * self->strides[a];
  }
  if (len < 0) len = 0;
  int64_t ns[LT_MAX_DIMS], nst[LT_MAX_DIMS];
  int k = 0;
  for (int i = 0; i < self->ndim; i++)
    if (i != a && i != b) { ns[k] = self->sizes[i]; nst[k++] = self->strides[i]; }
  ns[k] = len;
  nst[k++] = self->strides[a] + self->strides[b];
  return lt_tensor_alias(self, off, k, ns, nst);
}

/* ---- lists of views ---- */

static lt_tensor_list narrow_list(const char *op, lt_tensor *self, int d, const int64_t *lens, int n) {
  lt_tensor_list l = lt_tensor_list_new(n);
  if (l.n < 0) return l;
  lt_keyset ex;
  bool began = lt_split_begin(self, &ex);
  int64_t at = 0;
  for (int i = 0; i < n; i++) {
    l.v[i] = lt_narrow(self, d, at, lens[i]);
    if (!l.v[i]) { lt_split_end(self, l, d, false, false, ex); lt_tensor_list_release(l); l.v = NULL; l.n = -1; return l; }
    at += lens[i];
  }
  if (lt_split_end(self, l, d, false, began, ex) < 0) { lt_tensor_list_release(l); l.v = NULL; l.n = -1; }
  (void)op;
  return l;
}

static lt_tensor_list list_error(void) { lt_tensor_list l = {NULL, -1}; return l; }

static lt_tensor_list split_even(const char *op, lt_tensor *self, int64_t piece, int d) {
  int64_t n = self->sizes[d];
  int64_t cnt = n == 0 ? 1 : (n + piece - 1) / piece;
  if (cnt > 1 << 24) { lt_error("%s: too many pieces", op); return list_error(); }
  int64_t *lens = malloc(sizeof(int64_t) * (size_t)cnt);
  if (!lens) { lt_error("%s: out of memory", op); return list_error(); }
  for (int64_t i = 0; i < cnt; i++) lens[i] = n - i * piece < piece ? n - i * piece : piece;
  lt_tensor_list l = narrow_list(op, self, d, lens, (int)cnt);
  free(lens);
  return l;
}

lt_tensor_list lt_composite_chunk(lt_tensor *self, int64_t chunks, int64_t dim) {
  if (self->ndim == 0) { lt_error("chunk: a 0-d tensor cannot be chunked"); return list_error(); }
  int d = lt_wrap_dim("chunk", dim, self->ndim);
  if (d < 0) return list_error();
  if (chunks <= 0) { lt_error("chunk: argument 'chunks' must be positive, got %lld", (long long)chunks); return list_error(); }
  int64_t n = self->sizes[d], piece = n / chunks + (n % chunks != 0);
  if (piece == 0) piece = 1;
  return split_even("chunk", self, piece, d);
}

lt_tensor_list lt_composite_split(lt_tensor *self, int64_t split_size, int64_t dim) {
  if (self->ndim == 0) { lt_error("split: a 0-d tensor cannot be split"); return list_error(); }
  int d = lt_wrap_dim("split", dim, self->ndim);
  if (d < 0) return list_error();
  if (split_size < 0 || (split_size == 0 && self->sizes[d] != 0)) {
    lt_error("split: argument 'split_size' must be positive, got %lld", (long long)split_size);
    return list_error();
  }
  return split_even("split", self, split_size ? split_size : 1, d);
}

lt_tensor_list lt_composite_split_with_sizes(lt_tensor *self, lt_intlist split_sizes, int64_t dim) {
  if (self->ndim == 0) { lt_error("split: a 0-d tensor cannot be split"); return list_error(); }
  int d = lt_wrap_dim("split", dim, self->ndim);
  if (d < 0) return list_error();
  int64_t sum = 0;
  for (int i = 0; i < split_sizes.n; i++) {
    if (split_sizes.v[i] < 0) {
      lt_error("split: argument 'split_sizes' entry %d is negative", i + 1);
      return list_error();
    }
    if (__builtin_add_overflow(sum, split_sizes.v[i], &sum)) {
      lt_error("split: argument 'split_sizes' adds up to more than any size");
      return list_error();
    }
  }
  if (sum != self->sizes[d]) {
    lt_error("split: argument 'split_sizes' adds up to %lld but dim %d has size %lld", (long long)sum, d + 1,
             (long long)self->sizes[d]);
    return list_error();
  }
  return narrow_list("split", self, d, split_sizes.v, split_sizes.n);
}

lt_tensor_list lt_composite_unbind(lt_tensor *self, int64_t dim) {
  if (self->ndim == 0) { lt_error("unbind: a 0-d tensor cannot be unbound"); return list_error(); }
  int d = lt_wrap_dim("unbind", dim, self->ndim);
  if (d < 0) return list_error();
  if (self->sizes[d] > 1 << 24) { lt_error("unbind: too many slices"); return list_error(); }
  int n = (int)self->sizes[d];
  lt_tensor_list l = lt_tensor_list_new(n);
  if (l.n < 0) return l;
  lt_keyset ex;
  bool began = lt_split_begin(self, &ex);
  for (int i = 0; i < n; i++) {
    l.v[i] = lt_select(self, d, i);
    if (!l.v[i]) { lt_split_end(self, l, d, true, false, ex); lt_tensor_list_release(l); return list_error(); }
  }
  if (lt_split_end(self, l, d, true, began, ex) < 0) { lt_tensor_list_release(l); return list_error(); }
  return l;
}

/* ---- copies ---- */

lt_tensor *lt_cpu_contiguous(lt_tensor *self) {
  if (lt_tensor_is_contiguous(self)) return same_view(self);
  return lt_tensor_clone_as(self, (lt_dtype)self->dtype);
}

/* the result of an op: `out` resized to the shape (retained), or a new tensor */
static lt_tensor *result_tensor(const char *op, lt_tensor *out, lt_dtype dt, lt_device dev, int ndim,
                                const int64_t *sizes) {
  if (!out) return lt_tensor_new(dt, dev, ndim, sizes);
  if (!lt_device_eq(lt_tensor_device(out), dev)) return lt_error_null("%s: argument 'out' is on another device", op);
  if (lt_tensor_resize_out(op, out, ndim, sizes) < 0) return NULL;
  lt_tensor_retain(out);
  return out;
}

lt_tensor *lt_cpu_cat(lt_tensor *const *tensors, int tensors_n, int64_t dim, lt_tensor *out) {
  if (tensors_n == 0) return lt_error_null("cat: argument 'tensors' must be a non-empty list of tensors");
  /* PyTorch's legacy rule: 1-D empty tensors are skipped whatever the other shapes */
  const lt_tensor *ref = NULL;
  lt_dtype dt = (lt_dtype)tensors[0]->dtype;
  for (int i = 0; i < tensors_n; i++) {
    const lt_tensor *t = tensors[i];
    dt = i ? lt_promote_types(dt, (lt_dtype)t->dtype) : dt;
    if (!lt_device_eq(lt_tensor_device(t), lt_tensor_device(tensors[0])))
      return lt_error_null("cat: tensors %d and 1 are on different devices", i + 1);
    if (!(t->ndim == 1 && t->sizes[0] == 0) && !ref) ref = t;
  }
  if (!ref) ref = tensors[0];
  if (ref->ndim == 0) return lt_error_null("cat: 0-d tensors cannot be concatenated (entry 1 is 0-d)");
  int d = lt_wrap_dim("cat", dim, ref->ndim);
  if (d < 0) return NULL;
  int64_t ns[LT_MAX_DIMS];
  memcpy(ns, ref->sizes, sizeof(int64_t) * ref->ndim);
  ns[d] = 0;
  for (int i = 0; i < tensors_n; i++) {
    const lt_tensor *t = tensors[i];
    if (t->ndim == 1 && t->sizes[0] == 0 && t != ref) continue;
    bool ok = t->ndim == ref->ndim;
    for (int j = 0; ok && j < ref->ndim; j++) ok = j == d || t->sizes[j] == ref->sizes[j];
    if (!ok) {
      char b1[128], b2[128];
      return lt_error_null("cat: entry %d has shape %s, which does not match %s outside dim %d", i + 1,
                           lt_shape_str(t->ndim, t->sizes, b1, sizeof b1), lt_shape_str(ref->ndim, ref->sizes, b2, sizeof b2),
                           d + 1);
    }
    ns[d] += t->sizes[d];
  }
  if (out && out->dtype != dt && !(lt_dtype_is_float((lt_dtype)out->dtype) || !lt_dtype_is_float(dt)))
    return lt_error_null("cat: argument 'out' has dtype %s, which cannot hold the result type %s",
                         lt_dtype_name((lt_dtype)out->dtype), lt_dtype_name(dt));
  lt_tensor *r = result_tensor("cat", out, out ? (lt_dtype)out->dtype : dt, lt_tensor_device(ref), ref->ndim, ns);
  if (!r) return NULL;
  int64_t at = 0, ps[LT_MAX_DIMS];
  memcpy(ps, ns, sizeof(int64_t) * ref->ndim);
  for (int i = 0; i < tensors_n; i++) {
    const lt_tensor *t = tensors[i];
    if (t->ndim == 1 && t->sizes[0] == 0 && t != ref) continue;
    ps[d] = t->sizes[d];
    if (ps[d] == 0) continue;
    lt_tensor *part = lt_tensor_alias(r, r->offset + at * r->strides[d], r->ndim, ps, r->strides);
    int rc = part ? lt_tensor_copy_(part, t) : -1;
    lt_tensor_release(part);
    if (rc < 0) { lt_tensor_release(r); return NULL; }
    at += ps[d];
  }
  return r;
}

lt_tensor *lt_composite_cat2(lt_tensor *self, lt_tensor *other, int64_t dim) {
  lt_tensor *ts[2] = {self, other};
  return lt_cat(ts, 2, dim);
}

lt_tensor *lt_composite_stack(lt_tensor *const *tensors, int tensors_n, int64_t dim, lt_tensor *out) {
  if (tensors_n == 0) return lt_error_null("stack: argument 'tensors' must be a non-empty list of tensors");
  const lt_tensor *t0 = tensors[0];
  for (int i = 1; i < tensors_n; i++)
    if (!lt_tensor_same_shape(t0, tensors[i])) {
      char b1[128], b2[128];
      return lt_error_null("stack: every tensor must have the same shape, but entry 1 is %s and entry %d is %s",
                           lt_shape_str(t0->ndim, t0->sizes, b1, sizeof b1), i + 1,
                           lt_shape_str(tensors[i]->ndim, tensors[i]->sizes, b2, sizeof b2));
    }
  int d = lt_wrap_dim("stack", dim, t0->ndim + 1);
  if (d < 0) return NULL;
  lt_tensor **us = calloc((size_t)tensors_n, sizeof(lt_tensor *));
  if (!us) return lt_error_null("stack: out of memory");
  lt_tensor *r = NULL;
  int i;
  for (i = 0; i < tensors_n; i++)
    if (!(us[i] = lt_unsqueeze(tensors[i], d))) break;
  if (i == tensors_n) r = out ? lt_cat_out(us, tensors_n, d, out) : lt_cat(us, tensors_n, d);
  for (int j = 0; j < tensors_n; j++) lt_tensor_release(us[j]);
  free(us);
  return r;
}

lt_tensor *lt_composite_repeat(lt_tensor *self, lt_intlist repeats) {
  int m = repeats.n, n = self->ndim;
  if (m < n)
    return lt_error_null("repeat: argument 'repeats' has %d entries, fewer than the tensor's %d dims", m, n);
  if (2 * m > LT_MAX_DIMS) return lt_error_null("repeat: at most %d repeat counts", LT_MAX_DIMS / 2);
  /* view as [1, s1, 1, s2, ...], broadcast to [r1, s1, r2, s2, ...], collapse pairs */
  int64_t vs[LT_MAX_DIMS], es[LT_MAX_DIMS], rs[LT_MAX_DIMS];
  for (int i = 0; i < m; i++) {
    int64_t s = i < m - n ? 1 : self->sizes[i - (m - n)];
    if (repeats.v[i] < 0)
      return lt_error_null("repeat: argument 'repeats' entry %d is negative (%lld)", i + 1, (long long)repeats.v[i]);
    vs[2 * i] = 1; vs[2 * i + 1] = s;
    es[2 * i] = repeats.v[i]; es[2 * i + 1] = s;
    if (__builtin_mul_overflow(repeats.v[i], s, &rs[i]))
      return lt_error_null("repeat: repeating dim %d of size %lld %lld times overflows", i + 1,
                           (long long)s, (long long)repeats.v[i]);
  }
  lt_tensor *v = lt_view(self, lt_intlist_make(vs, 2 * m));
  if (!v) return NULL;
  lt_tensor *e = lt_expand(v, lt_intlist_make(es, 2 * m));
  lt_tensor_release(v);
  if (!e) return NULL;
  lt_tensor *c = lt_contiguous(e);   /* expanded: always a real copy */
  lt_tensor_release(e);
  if (!c) return NULL;
  lt_tensor *r = lt_view(c, lt_intlist_make(rs, m));
  lt_tensor_release(c);
  return r;
}

lt_tensor *lt_composite_tile(lt_tensor *self, lt_intlist dims) {
  if (dims.n >= self->ndim) return lt_repeat(self, dims);
  int64_t rs[LT_MAX_DIMS];
  int pad = self->ndim - dims.n;
  for (int i = 0; i < self->ndim; i++) rs[i] = i < pad ? 1 : dims.v[i - pad];
  return lt_repeat(self, lt_intlist_make(rs, self->ndim));
}

lt_tensor *lt_cpu_flip(lt_tensor *self, lt_intlist dims) {
  int64_t st[LT_MAX_DIMS];
  bool seen[LT_MAX_DIMS] = {0};
  memcpy(st, self->strides, sizeof(int64_t) * self->ndim);
  int64_t off = self->offset;
  for (int i = 0; i < dims.n; i++) {
    int d = lt_wrap_dim("flip", dims.v[i], self->ndim);
    if (d < 0) return NULL;
    if (self->ndim == 0) continue;
    if (seen[d]) return lt_error_null("flip: dim %d appears twice in argument 'dims'", d + 1);
    seen[d] = true;
    if (self->sizes[d] > 0) off += (self->sizes[d] - 1) * st[d];
    st[d] = -st[d];
  }
  /* a negative-stride view, never handed out: the copy is the result */
  lt_tensor *v = lt_tensor_alias(self, off, self->ndim, self->sizes, st);
  if (!v) return NULL;
  lt_tensor *r = lt_tensor_clone_as(v, (lt_dtype)self->dtype);
  lt_tensor_release(v);
  return r;
}

/* copy src rolled by `shift` along d into dst (same shape, distinct memory) */
static int roll_dim(lt_tensor *dst, const lt_tensor *src, int d, int64_t shift) {
  int64_t n = src->sizes[d];
  int64_t s = n ? ((shift % n) + n) % n : 0;
  int64_t ps[LT_MAX_DIMS];
  memcpy(ps, src->sizes, sizeof(int64_t) * src->ndim);
  int rc = 0;
  for (int part = 0; part < 2 && rc == 0; part++) {
    /* part 0: src[0, n-s) -> dst[s, n); part 1: src[n-s, n) -> dst[0, s) */
    int64_t len = part == 0 ? n - s : s, so = part == 0 ? 0 : n - s, dof = part == 0 ? s : 0;
    if (len == 0) continue;
    ps[d] = len;
    lt_tensor *a = lt_tensor_alias(dst, dst->offset + dof * dst->strides[d], dst->ndim, ps, dst->strides);
    lt_tensor *b = lt_tensor_alias(src, src->offset + so * src->strides[d], src->ndim, ps, src->strides);
    rc = a && b ? lt_tensor_copy_(a, b) : -1;
    lt_tensor_release(a);
    lt_tensor_release(b);
  }
  return rc;
}

lt_tensor *lt_cpu_roll(lt_tensor *self, lt_intlist shifts, lt_intlist dims) {
  if (dims.n < 0 || dims.n == 0) {
    if (shifts.n != 1)
      return lt_error_null("roll: without dims, argument 'shifts' must have one entry (got %d)", shifts.n);
    lt_tensor *c = lt_tensor_contiguous(self);
    if (!c) return NULL;
    int64_t n = self->numel;
    lt_tensor *flat = lt_tensor_alias(c, c->offset, 1, &n, NULL);
    lt_tensor *r = lt_tensor_new((lt_dtype)self->dtype, lt_tensor_device(self), self->ndim, self->sizes);
    lt_tensor *rf = r ? lt_tensor_alias(r, 0, 1, &n, NULL) : NULL;
    int rc = flat && rf ? roll_dim(rf, flat, 0, shifts.v[0]) : -1;
    lt_tensor_release(flat);
    lt_tensor_release(rf);
    lt_tensor_release(c);
    if (rc < 0) { lt_tensor_release(r); return NULL; }
    return r;
  }
  if (shifts.n != dims.n)
    return lt_error_null("roll: arguments 'shifts' (%d entries) and 'dims' (%d entries) must have the same length",
                         shifts.n, dims.n);
  int ds[LT_MAX_DIMS];
  for (int i = 0; i < dims.n; i++)
    if ((ds[i] = lt_wrap_dim("roll", dims.v[i], self->ndim)) < 0) return NULL;
  if (self->ndim == 0) return lt_tensor_clone_as(self, (lt_dtype)self->dtype);
  lt_tensor *cur = self;
  lt_tensor_retain(cur);
  for (int i = 0; i < dims.n; i++) {
    lt_tensor *nx = lt_tensor_new((lt_dtype)self->dtype, lt_tensor_device(self), self->ndim, self->sizes);
    int rc = nx ? roll_dim(nx, cur, ds[i], shifts.v[i]) : -1;
    lt_tensor_release(cur);
    if (rc < 0) { lt_tensor_release(nx); return NULL; }
    cur = nx;
  }
  return cur;
}

lt_tensor *lt_composite_roll1(lt_tensor *self, int64_t shifts, int64_t dim) {
  int64_t d = dim;
  return lt_roll(self, lt_intlist_make(&shifts, 1), dim == LT_NOINT ? lt_intlist_none() : lt_intlist_make(&d, 1));
}

/* zero n elements of size es, `stride` elements apart (zero bits are 0 in every dtype) */
static void zero_run(char *p, int64_t stride, int64_t n, size_t es) {
  if (n <= 0) return;
  if (stride == 1) { memset(p, 0, (size_t)n * es); return; }
  int64_t sb = stride * (int64_t)es;
  switch (es) {
    case 1: for (int64_t i = 0; i < n; i++) p[i * sb] = 0; break;
    case 2: for (int64_t i = 0; i < n; i++) *(uint16_t *)(p + i * sb) = 0; break;
    case 4: for (int64_t i = 0; i < n; i++) *(uint32_t *)(p + i * sb) = 0; break;
    default: for (int64_t i = 0; i < n; i++) *(uint64_t *)(p + i * sb) = 0; break;
  }
}

static lt_tensor *triangle(const char *op, lt_tensor *self, int64_t k, lt_tensor *out, bool lower) {
  if (self->ndim < 2) return lt_error_null("%s: expects a tensor with at least 2 dims, got %d", op, self->ndim);
  lt_tensor *r;
  if (out == self) { r = self; lt_tensor_retain(r); }
  else {
    r = result_tensor(op, out, out ? (lt_dtype)out->dtype : (lt_dtype)self->dtype, lt_tensor_device(self), self->ndim,
                      self->sizes);
    if (!r) return NULL;
    if (lt_tensor_copy_(r, self) < 0) { lt_tensor_release(r); return NULL; }
  }
  int nd = r->ndim;
  int64_t rows = r->sizes[nd - 2], cols = r->sizes[nd - 1], rst = r->strides[nd - 2], cst = r->strides[nd - 1];
  int64_t batch = r->numel ? r->numel / (rows * cols) : 0;
  size_t es = lt_dtype_size((lt_dtype)r->dtype);
  char *base = lt_tensor_data(r);
  /* past the matrix a diagonal keeps all or nothing: clamp, so i + k cannot overflow */
  if (k > cols) k = cols;
  if (k < -rows - 1) k = -rows - 1;
  for (int64_t b = 0; b < batch; b++) {
    int64_t off = 0, rem = b;
    for (int i = nd - 3; i >= 0; i--) { off += (rem % r->sizes[i]) * r->strides[i]; rem /= r->sizes[i]; }
    for (int64_t i = 0; i < rows; i++) {
      char *row = base + (off + i * rst) * (int64_t)es;
      /* keep column j when j - i <= k (lower) or j - i >= k (upper) */
      int64_t lo, hi;   /* the zeroed columns [lo, hi) */
      if (lower) { lo = i + k + 1; hi = cols; if (lo < 0) lo = 0; }
      else { lo = 0; hi = i + k; if (hi > cols) hi = cols; }
      if (lo < hi) zero_run(row + lo * cst * (int64_t)es, cst, hi - lo, es);
    }
  }
  return r;
}

lt_tensor *lt_cpu_tril(lt_tensor *self, int64_t diagonal, lt_tensor *out) { return triangle("tril", self, diagonal, out, true); }
lt_tensor *lt_cpu_triu(lt_tensor *self, int64_t diagonal, lt_tensor *out) { return triangle("triu", self, diagonal, out, false); }

lt_tensor *lt_cpu_diag(lt_tensor *self, int64_t diagonal, lt_tensor *out) {
  if (diagonal > INT32_MAX || diagonal < -(int64_t)INT32_MAX)
    return lt_error_null("diag: argument 'diagonal' (%lld) is out of range", (long long)diagonal);
  if (self->ndim == 1) {
    int64_t n = self->sizes[0] + (diagonal < 0 ? -diagonal : diagonal);
    int64_t sz[2] = {n, n};
    lt_tensor *r = result_tensor("diag", out, out ? (lt_dtype)out->dtype : (lt_dtype)self->dtype, lt_tensor_device(self), 2, sz);
    if (!r) return NULL;
    lt_tensor *dg = NULL;
    int rc = lt_tensor_fill_(r, lt_scalar_int(0));
    if (rc == 0) dg = lt_cpu_diagonal(r, diagonal, 0, 1);
    if (rc < 0 || !dg || lt_tensor_copy_(dg, self) < 0) { lt_tensor_release(dg); lt_tensor_release(r); return NULL; }
    lt_tensor_release(dg);
    return r;
  }
  if (self->ndim == 2) {
    lt_tensor *dg = lt_cpu_diagonal(self, diagonal, 0, 1);
    if (!dg) return NULL;
    lt_tensor *r = result_tensor("diag", out, out ? (lt_dtype)out->dtype : (lt_dtype)self->dtype, lt_tensor_device(self), 1, dg->sizes);
    if (!r || lt_tensor_copy_(r, dg) < 0) { lt_tensor_release(r); lt_tensor_release(dg); return NULL; }
    lt_tensor_release(dg);
    return r;
  }
  return lt_error_null("diag: expects a 1-D or 2-D tensor, got %d dims", self->ndim);
}

lt_tensor *lt_composite_movedim(lt_tensor *self, lt_intlist source, lt_intlist destination) {
  int n = self->ndim;
  if (source.n != destination.n)
    return lt_error_null("movedim: arguments 'source' (%d entries) and 'destination' (%d entries) must have the same length",
                         source.n, destination.n);
  int64_t perm[LT_MAX_DIMS];
  bool used_src[LT_MAX_DIMS] = {0}, used_dst[LT_MAX_DIMS] = {0};
  for (int i = 0; i < n; i++) perm[i] = -1;
  for (int i = 0; i < source.n; i++) {
    int s = lt_wrap_dim("movedim", source.v[i], n), d = lt_wrap_dim("movedim", destination.v[i], n);
    if (s < 0 || d < 0) return NULL;
    if (n == 0) continue;
    if (used_src[s]) return lt_error_null("movedim: dim %d appears twice in argument 'source'", s + 1);
    if (used_dst[d]) return lt_error_null("movedim: dim %d appears twice in argument 'destination'", d + 1);
    used_src[s] = used_dst[d] = true;
    perm[d] = s;
  }
  int next = 0;
  for (int i = 0; i < n; i++) {
    if (perm[i] >= 0) continue;
    while (used_src[next]) next++;
    perm[i] = next++;
  }
  return lt_permute(self, lt_intlist_make(perm, n));
}

/* self takes source's storage and geometry: both then see the same memory.
** Modules use it to keep a parameter's identity while its data moves (Torch7's
** getParameters, `p.data = q`). */
static lt_tensor *set_geometry(lt_tensor *self, lt_tensor *source) {
  if (self == source) { lt_tensor_retain(self); return self; }
  lt_storage_retain(source->storage);
  lt_storage_release(self->storage);
  self->storage = source->storage;
  self->dtype = source->dtype;
  self->offset = source->offset;
  self->ndim = source->ndim;
  self->numel = source->numel;
  for (int d = 0; d < source->ndim; d++) {
    self->sizes[d] = source->sizes[d];
    self->strides[d] = source->strides[d];
  }
  lt_tensor_retain(self);
  return self;
}

lt_tensor *lt_cpu_set_(lt_tensor *self, lt_tensor *source) {
  if (self->dtype != source->dtype)
    return lt_error_null("set_: argument 'source' has dtype %s but self is %s",
                         lt_dtype_name((lt_dtype)source->dtype), lt_dtype_name((lt_dtype)self->dtype));
  return set_geometry(self, source);
}

lt_tensor *lt_cpu__set_data(lt_tensor *self, lt_tensor *source) {
  if (self->requires_grad && !lt_dtype_is_float((lt_dtype)source->dtype))
    return lt_error_null("data: a tensor that requires grad cannot take %s data",
                         lt_dtype_name((lt_dtype)source->dtype));
  return set_geometry(self, source);
}
