/*
** shape.c — the shape ops written with other ops' entry points: reshape,
** flatten, t, expand_as, Torch7's sub, chunk/split/unbind, stack, repeat,
** tile, roll over one dim and movedim. They call the dispatched views and
** copies, so autograd records every step and any backend runs them.
*/
#include <string.h>
#include <stdlib.h>
#include "lt_ops.h"
#include "core/views.h"
#include "autograd/autograd.h"   /* lt_split_begin/end: one node for a split's views */

lt_tensor *lt_composite_reshape(lt_tensor *self, lt_intlist shape) {
  int64_t ns[LT_MAX_DIMS], nst[LT_MAX_DIMS];
  int nn = lt_shape_infer("reshape", shape, self->numel, ns);
  if (nn < 0) return NULL;
  lt_intlist l = lt_intlist_make(ns, nn);
  if (lt_view_strides(self, nn, ns, nst)) return lt_view(self, l);
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
  if (lt_shape_infer("unflatten", sizes, self->sizes[d], part) < 0) return NULL;
  int64_t ns[LT_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < d; i++) ns[n++] = self->sizes[i];
  for (int i = 0; i < sizes.n; i++) ns[n++] = part[i];
  for (int i = d + 1; i < self->ndim; i++) ns[n++] = self->sizes[i];
  return lt_view(self, lt_intlist_make(ns, n));
}

lt_tensor *lt_composite_t(lt_tensor *self) {
  if (self->ndim > 2) return lt_error_null("t: expects a tensor with at most 2 dims, got %d (use transpose)", self->ndim);
  if (self->ndim < 2) return lt_transpose(self, 0, 0);
  return lt_transpose(self, 0, 1);
}

lt_tensor *lt_composite_expand_as(lt_tensor *self, lt_tensor *other) {
  return lt_expand(self, lt_intlist_make(other->sizes, other->ndim));
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

lt_tensor *lt_composite_roll1(lt_tensor *self, int64_t shifts, int64_t dim) {
  int64_t d = dim;
  return lt_roll(self, lt_intlist_make(&shifts, 1), dim == LT_NOINT ? lt_intlist_none() : lt_intlist_make(&d, 1));
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
