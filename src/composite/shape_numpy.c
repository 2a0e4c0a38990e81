/*
** shape_numpy.c — the composites of src/ops/shape_numpy.lua: PyTorch's
** broadcast_to, hstack, tensor_split, rot90, repeat_interleave, meshgrid,
** tril_indices, diag_embed, take_along_dim, select/slice_scatter, diff, vander, ...
** Each is written with the dispatched entry points of other ops (views, cat,
** flip, index_select, gather, copy_ into a view), so autograd records every step
** and nothing here needs a derivative of its own. An inner op's error is passed
** on under this op's name (fail_as), so the message names the op the user called.
*/
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include "lt_ops.h"
#include "core/backend.h"
#include "composite/composite.h"

/* 0-based C index -> how Lua shows it */
static long long lua_index(int64_t i) { return (long long)(i >= 0 ? i + 1 : i); }

static void *fail_as(const char *op) { return lt_composite_fail_as(op); }

static lt_tensor_list list_error(void) { lt_tensor_list l = {NULL, -1}; return l; }
static lt_tensor_list list_fail_as(const char *op) { fail_as(op); return list_error(); }

static void release_array(lt_tensor **ts, int n) {
  if (!ts) return;
  for (int i = 0; i < n; i++) lt_tensor_release(ts[i]);
  free(ts);
}

static bool is_index_dtype(const lt_tensor *t) { return t->dtype == LT_INT64 || t->dtype == LT_INT32; }

/* ---- broadcasting ---- */

lt_tensor *lt_composite_broadcast_to(lt_tensor *self, lt_intlist size) {
  lt_tensor *r = lt_expand(self, size);
  return r ? r : fail_as("broadcast_to");
}

lt_tensor_list lt_composite_broadcast_tensors(lt_tensor *const *tensors, int tensors_n) {
  int64_t shape[LT_MAX_DIMS], next[LT_MAX_DIMS];
  int nd = 0;
  for (int i = 0; i < tensors_n; i++) {
    const lt_tensor *t = tensors[i];
    int k = lt_broadcast_shapes("broadcast_tensors", nd, shape, t->ndim, t->sizes, next);
    if (k < 0) {
      char b1[128], b2[128];
      lt_error("broadcast_tensors: entry %d has shape %s, which cannot be broadcast with shape %s of the entries before it",
               i + 1, lt_shape_str(t->ndim, t->sizes, b1, sizeof b1), lt_shape_str(nd, shape, b2, sizeof b2));
      return list_error();
    }
    nd = k;
    memcpy(shape, next, sizeof(int64_t) * (size_t)nd);
  }
  lt_tensor_list l = lt_tensor_list_new(tensors_n);
  if (l.n < 0) return l;
  for (int i = 0; i < tensors_n; i++)
    if (!(l.v[i] = lt_expand(tensors[i], lt_intlist_make(shape, nd)))) {
      lt_tensor_list_release(l);
      return list_fail_as("broadcast_tensors");
    }
  return l;
}

/* ---- stacking ---- */

/* New references to the tensors with at least nd dims, numpy's way: a 0-d one
** becomes [1] / [1, 1] / [1, 1, 1], [n] becomes [1, n] or [1, n, 1], [m, n] [m, n, 1]. */
static lt_tensor **at_least(const char *op, lt_tensor *const *ts, int n, int nd) {
  if (n == 0) return lt_error_null("%s: argument 'tensors' must be a non-empty list of tensors", op);
  lt_tensor **vs = calloc((size_t)n, sizeof *vs);
  if (!vs) return lt_error_null("%s: out of memory", op);
  for (int i = 0; i < n; i++) {
    lt_tensor *t = ts[i];
    if (t->ndim >= nd) { lt_tensor_retain(t); vs[i] = t; continue; }
    int64_t s[3] = {1, 1, 1};
    if (t->ndim == 1) s[1] = t->sizes[0];
    else if (t->ndim == 2) { s[0] = t->sizes[0]; s[1] = t->sizes[1]; }
    if (!(vs[i] = lt_reshape(t, lt_intlist_make(s, nd)))) {
      release_array(vs, n);
      return fail_as(op);
    }
  }
  return vs;
}

static lt_tensor *join(const char *op, lt_tensor **vs, int n, int d, lt_tensor *out) {
  lt_tensor *r = out ? lt_cat_out(vs, n, d, out) : lt_cat(vs, n, d);
  release_array(vs, n);
  return r ? r : fail_as(op);
}

lt_tensor *lt_composite_hstack(lt_tensor *const *tensors, int tensors_n, lt_tensor *out) {
  lt_tensor **vs = at_least("hstack", tensors, tensors_n, 1);
  if (!vs) return NULL;
  return join("hstack", vs, tensors_n, vs[0]->ndim == 1 ? 0 : 1, out);
}

lt_tensor *lt_composite_vstack(lt_tensor *const *tensors, int tensors_n, lt_tensor *out) {
  lt_tensor **vs = at_least("vstack", tensors, tensors_n, 2);
  return vs ? join("vstack", vs, tensors_n, 0, out) : NULL;
}

lt_tensor *lt_composite_dstack(lt_tensor *const *tensors, int tensors_n, lt_tensor *out) {
  lt_tensor **vs = at_least("dstack", tensors, tensors_n, 3);
  return vs ? join("dstack", vs, tensors_n, 2, out) : NULL;
}

lt_tensor *lt_composite_column_stack(lt_tensor *const *tensors, int tensors_n, lt_tensor *out) {
  if (tensors_n == 0) return lt_error_null("column_stack: argument 'tensors' must be a non-empty list of tensors");
  lt_tensor **vs = calloc((size_t)tensors_n, sizeof *vs);
  if (!vs) return lt_error_null("column_stack: out of memory");
  for (int i = 0; i < tensors_n; i++) {
    lt_tensor *t = tensors[i];
    if (t->ndim >= 2) { lt_tensor_retain(t); vs[i] = t; continue; }
    int64_t s[2] = {t->numel, 1};
    if (!(vs[i] = lt_reshape(t, lt_intlist_make(s, 2)))) {
      release_array(vs, tensors_n);
      return fail_as("column_stack");
    }
  }
  return join("column_stack", vs, tensors_n, 1, out);
}

/* ---- splitting ---- */

/* The pieces [b[i-1], b[i]) of dim d, with b[-1] = 0 and b[nb] = the size, each bound
** already in [0, size]. When they tile the dim they come from one split (one node for
** autograd, as PyTorch); bounds out of order make overlapping or empty pieces, which
** are narrowed one by one. */
static lt_tensor_list pieces(const char *op, lt_tensor *self, int d, const int64_t *b, int64_t nb) {
  int64_t size = self->sizes[d], np = nb + 1;
  if (np > (1 << 24)) { lt_error("%s: too many pieces (%lld)", op, (long long)np); return list_error(); }
  int64_t *start = malloc(sizeof(int64_t) * (size_t)np), *len = malloc(sizeof(int64_t) * (size_t)np);
  if (!start || !len) {
    free(start); free(len);
    lt_error("%s: out of memory", op);
    return list_error();
  }
  bool tiled = true;
  int64_t prev = 0;
  for (int64_t i = 0; i < np; i++) {
    int64_t e = i < nb ? b[i] : size;
    start[i] = prev;
    len[i] = e > prev ? e - prev : 0;
    if (e < prev) tiled = false;
    prev = e;
  }
  lt_tensor_list l;
  if (tiled) {
    l = lt_split_with_sizes(self, lt_intlist_make(len, (int)np), d);
    if (l.n < 0) fail_as(op);
  } else {
    l = lt_tensor_list_new((int)np);
    for (int64_t i = 0; l.n >= 0 && i < np; i++)
      if (!(l.v[i] = lt_narrow(self, d, start[i], len[i]))) {
        lt_tensor_list_release(l);
        l = list_fail_as(op);
      }
  }
  free(start);
  free(len);
  return l;
}

static int split_dim(const char *op, lt_tensor *self, int64_t dim) {
  if (self->ndim == 0) return lt_error("%s: expects a tensor with at least 1 dim, got a 0-d tensor", op);
  return lt_wrap_dim(op, dim, self->ndim);
}

static lt_tensor_list split_sections(const char *op, lt_tensor *self, int64_t sections, int d) {
  if (sections <= 0) {
    lt_error("%s: argument 'sections' must be positive, got %lld", op, (long long)sections);
    return list_error();
  }
  if (sections > (1 << 24)) { lt_error("%s: argument 'sections' is too large (%lld)", op, (long long)sections); return list_error(); }
  int64_t n = self->sizes[d], q = n / sections, rem = n % sections;
  int64_t *b = malloc(sizeof(int64_t) * (size_t)sections);
  if (!b) { lt_error("%s: out of memory", op); return list_error(); }
  /* the first rem pieces are one longer */
  for (int64_t i = 0; i < sections - 1; i++) b[i] = (i + 1) * q + (i + 1 < rem ? i + 1 : rem);
  lt_tensor_list l = pieces(op, self, d, b, sections - 1);
  free(b);
  return l;
}

/* 1-based split positions (negative from the end) -> bounds clamped to [0, size] */
static lt_tensor_list split_positions(const char *op, const char *arg, lt_tensor *self, int d, const int64_t *v,
                                      int64_t n) {
  int64_t size = self->sizes[d];
  int64_t *b = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  if (!b) { lt_error("%s: out of memory", op); return list_error(); }
  for (int64_t i = 0; i < n; i++) {
    if (v[i] == 0) {
      free(b);
      lt_error("%s: argument '%s' entry %lld is 0 (split positions are 1-based; -1 is the last element)", op, arg,
               (long long)(i + 1));
      return list_error();
    }
    int64_t x = v[i] > 0 ? v[i] - 1 : v[i] + size;
    b[i] = x < 0 ? 0 : x > size ? size : x;
  }
  lt_tensor_list l = pieces(op, self, d, b, n);
  free(b);
  return l;
}

lt_tensor_list lt_composite_tensor_split(lt_tensor *self, int64_t sections, int64_t dim) {
  int d = split_dim("tensor_split", self, dim);
  return d < 0 ? list_error() : split_sections("tensor_split", self, sections, d);
}

lt_tensor_list lt_composite_tensor_split_indices(lt_tensor *self, lt_intlist indices, int64_t dim) {
  int d = split_dim("tensor_split", self, dim);
  return d < 0 ? list_error() : split_positions("tensor_split", "indices", self, d, indices.v, indices.n);
}

lt_tensor_list lt_composite_tensor_split_tensor(lt_tensor *self, lt_tensor *tensor_indices_or_sections, int64_t dim) {
  const char *op = "tensor_split";
  lt_tensor *t = tensor_indices_or_sections;
  int d = split_dim(op, self, dim);
  if (d < 0) return list_error();
  if (!is_index_dtype(t)) {
    lt_error("%s: argument 'tensor_indices_or_sections' must be an int64 tensor, got %s", op,
             t->is_wrapped_number ? "a number that is not an integer" : lt_dtype_name((lt_dtype)t->dtype));
    return list_error();
  }
  if (t->ndim > 1) {
    lt_error("%s: argument 'tensor_indices_or_sections' must be 0-d (sections) or 1-D (positions), got %d dims", op,
             t->ndim);
    return list_error();
  }
  if (lt_tensor_device(t).type != LT_DEV_CPU) {
    lt_error("%s: argument 'tensor_indices_or_sections' must be on the CPU", op);
    return list_error();
  }
  if (t->ndim == 0) return split_sections(op, self, lt_tensor_get_int64(t, 0), d);
  lt_tensor *c = lt_tensor_to_dtype_contig(t, LT_INT64);
  if (!c) return list_fail_as(op);
  lt_tensor_list l = split_positions(op, "tensor_indices_or_sections", self, d, lt_tensor_data(c), c->numel);
  lt_tensor_release(c);
  return l;
}

/* hsplit, vsplit, dsplit: tensor_split along a fixed dim of a tensor with at least min_nd dims */
static int xsplit_dim(const char *op, lt_tensor *self, int min_nd, int d) {
  if (self->ndim < min_nd)
    return lt_error("%s: expects a tensor with at least %d dim%s, got %d", op, min_nd, min_nd == 1 ? "" : "s",
                    self->ndim);
  return d;
}

static lt_tensor_list xsplit_sections(const char *op, lt_tensor *self, int64_t sections, int min_nd, int d) {
  if (xsplit_dim(op, self, min_nd, d) < 0) return list_error();
  if (sections <= 0) {
    lt_error("%s: argument 'sections' must be positive, got %lld", op, (long long)sections);
    return list_error();
  }
  if (self->sizes[d] % sections != 0) {
    lt_error("%s: dim %d has size %lld, which argument 'sections' (%lld) does not divide", op, d + 1,
             (long long)self->sizes[d], (long long)sections);
    return list_error();
  }
  return split_sections(op, self, sections, d);
}

static lt_tensor_list xsplit_positions(const char *op, lt_tensor *self, lt_intlist indices, int min_nd, int d) {
  if (xsplit_dim(op, self, min_nd, d) < 0) return list_error();
  return split_positions(op, "indices", self, d, indices.v, indices.n);
}

lt_tensor_list lt_composite_hsplit(lt_tensor *self, int64_t sections) {
  return xsplit_sections("hsplit", self, sections, 1, self->ndim == 1 ? 0 : 1);
}
lt_tensor_list lt_composite_hsplit_indices(lt_tensor *self, lt_intlist indices) {
  return xsplit_positions("hsplit", self, indices, 1, self->ndim == 1 ? 0 : 1);
}
lt_tensor_list lt_composite_vsplit(lt_tensor *self, int64_t sections) {
  return xsplit_sections("vsplit", self, sections, 2, 0);
}
lt_tensor_list lt_composite_vsplit_indices(lt_tensor *self, lt_intlist indices) {
  return xsplit_positions("vsplit", self, indices, 2, 0);
}
lt_tensor_list lt_composite_dsplit(lt_tensor *self, int64_t sections) {
  return xsplit_sections("dsplit", self, sections, 3, 2);
}
lt_tensor_list lt_composite_dsplit_indices(lt_tensor *self, lt_intlist indices) {
  return xsplit_positions("dsplit", self, indices, 3, 2);
}

/* ---- flips and rotations ---- */

static lt_tensor *flip1(lt_tensor *self, int64_t d) { return lt_flip(self, lt_intlist_make(&d, 1)); }

lt_tensor *lt_composite_rot90(lt_tensor *self, int64_t k, lt_intlist dims) {
  const char *op = "rot90";
  if (dims.n != 2) return lt_error_null("%s: argument 'dims' must have 2 entries, got %d", op, dims.n);
  if (self->ndim < 2) return lt_error_null("%s: expects a tensor with at least 2 dims, got %d", op, self->ndim);
  int a = lt_wrap_dim(op, dims.v[0], self->ndim), b = lt_wrap_dim(op, dims.v[1], self->ndim);
  if (a < 0 || b < 0) return NULL;
  if (a == b) return lt_error_null("%s: argument 'dims' must name two different dims (both are %d)", op, a + 1);
  int q = (int)(((k % 4) + 4) % 4);
  lt_tensor *r = NULL;
  if (q == 0) r = lt_clone(self);
  else if (q == 2) {
    int64_t both[2] = {a, b};
    r = lt_flip(self, lt_intlist_make(both, 2));
  } else {
    /* a quarter turn from a towards b: reverse b then swap; three quarters: reverse a */
    lt_tensor *f = flip1(self, q == 1 ? b : a);
    if (f) r = lt_transpose(f, a, b);
    lt_tensor_release(f);
  }
  return r ? r : fail_as(op);
}

lt_tensor *lt_composite_fliplr(lt_tensor *self) {
  if (self->ndim < 2) return lt_error_null("fliplr: expects a tensor with at least 2 dims, got %d", self->ndim);
  lt_tensor *r = flip1(self, 1);
  return r ? r : fail_as("fliplr");
}

lt_tensor *lt_composite_flipud(lt_tensor *self) {
  if (self->ndim < 1) return lt_error_null("flipud: expects a tensor with at least 1 dim, got a 0-d tensor");
  lt_tensor *r = flip1(self, 0);
  return r ? r : fail_as("flipud");
}

lt_tensor *lt_composite_ravel(lt_tensor *self) {
  int64_t all = -1;
  lt_tensor *r = lt_reshape(self, lt_intlist_make(&all, 1));
  return r ? r : fail_as("ravel");
}

/* ---- repeat_interleave ---- */

/* r itself, or a copy of it when it still shares self's memory (a result that must be new) */
static lt_tensor *fresh(lt_tensor *r, const lt_tensor *self) {
  if (!r || r->storage != self->storage) return r;
  lt_tensor *c = lt_clone(r);
  lt_tensor_release(r);
  return c;
}

/* self flattened when dim is absent, with the dim to repeat along */
static lt_tensor *interleave_input(const char *op, lt_tensor *self, int64_t dim, int *d) {
  if (dim != LT_NOINT) {
    if (self->ndim == 0) return lt_error_null("%s: a 0-d tensor has no dim to repeat along (leave out dim)", op);
    if ((*d = lt_wrap_dim(op, dim, self->ndim)) < 0) return NULL;
    lt_tensor_retain(self);
    return self;
  }
  *d = 0;
  int64_t all = -1;
  lt_tensor *r = lt_reshape(self, lt_intlist_make(&all, 1));
  return r ? r : fail_as(op);
}

static int check_output_size(const char *op, int64_t output_size, int64_t total) {
  if (output_size != LT_NOINT && output_size != total)
    return lt_error("%s: argument 'output_size' is %lld but the result has %lld elements along the repeated dim", op,
                    (long long)output_size, (long long)total);
  return 0;
}

/* each slice of x along d repeated `times` times: a view [.., n, times, ..] of x broadcast, then merged */
static lt_tensor *interleave_const(const char *op, lt_tensor *self, lt_tensor *x, int d, int64_t times,
                                   int64_t output_size) {
  if (times < 0) return lt_error_null("%s: argument 'repeats' must be non-negative, got %lld", op, (long long)times);
  int64_t n = x->sizes[d], total;
  if (__builtin_mul_overflow(n, times, &total)) return lt_error_null("%s: the result is too large", op);
  if (check_output_size(op, output_size, total) < 0) return NULL;
  if (x->ndim >= LT_MAX_DIMS) return lt_error_null("%s: tensors have at most %d dims", op, LT_MAX_DIMS);
  int64_t es[LT_MAX_DIMS], rs[LT_MAX_DIMS];
  int k = 0;
  for (int i = 0; i < x->ndim; i++) {
    es[k++] = x->sizes[i];
    if (i == d) es[k++] = times;
    rs[i] = i == d ? total : x->sizes[i];
  }
  lt_tensor *u = lt_unsqueeze(x, d + 1);
  lt_tensor *e = u ? lt_expand(u, lt_intlist_make(es, k)) : NULL;
  lt_tensor *r = e ? lt_reshape(e, lt_intlist_make(rs, x->ndim)) : NULL;
  lt_tensor_release(u);
  lt_tensor_release(e);
  r = fresh(r, self);
  return r ? r : fail_as(op);
}

/* int64 [sum(repeats)]: the 1-based index i repeated repeats[i] times */
static lt_tensor *interleave_index(const char *op, lt_tensor *repeats, int64_t output_size) {
  if (!lt_dtype_is_integral((lt_dtype)repeats->dtype) || repeats->dtype == LT_BOOL)
    return lt_error_null("%s: argument 'repeats' must be an integer tensor, got %s", op,
                         repeats->is_wrapped_number ? "a number that is not an integer" : lt_dtype_name((lt_dtype)repeats->dtype));
  if (repeats->ndim > 1) return lt_error_null("%s: argument 'repeats' must be 0-d or 1-D, got %d dims", op, repeats->ndim);
  /* the counts are read on the host; the index goes back to repeats' device */
  lt_tensor *h = lt_tensor_to_host(repeats);
  lt_tensor *c = h ? lt_tensor_to_dtype_contig(h, LT_INT64) : NULL;
  lt_tensor_release(h);
  if (!c) return fail_as(op);
  const int64_t *v = lt_tensor_data(c);
  int64_t total = 0;
  for (int64_t i = 0; i < c->numel; i++) {
    if (v[i] < 0) {
      lt_tensor_release(c);
      return lt_error_null("%s: argument 'repeats' entry %lld is negative (%lld)", op, (long long)(i + 1), (long long)v[i]);
    }
    if (__builtin_add_overflow(total, v[i], &total)) {
      lt_tensor_release(c);
      return lt_error_null("%s: argument 'repeats' adds up to more than an int64 holds", op);
    }
  }
  if (check_output_size(op, output_size, total) < 0) { lt_tensor_release(c); return NULL; }
  lt_tensor *r = lt_tensor_new(LT_INT64, lt_device_cpu(), 1, &total);
  if (!r) { lt_tensor_release(c); return fail_as(op); }
  int64_t *o = lt_tensor_data(r), at = 0;
  for (int64_t i = 0; i < c->numel; i++)
    for (int64_t j = 0; j < v[i]; j++) o[at++] = i + 1;
  lt_tensor_release(c);
  lt_tensor *d = lt_tensor_to_device(r, lt_tensor_device(repeats));
  lt_tensor_release(r);
  return d ? d : fail_as(op);
}

lt_tensor *lt_composite_repeat_interleave(lt_tensor *self, int64_t repeats, int64_t dim, int64_t output_size) {
  const char *op = "repeat_interleave";
  int d;
  if (repeats < 0) return lt_error_null("%s: argument 'repeats' must be non-negative, got %lld", op, (long long)repeats);
  lt_tensor *x = interleave_input(op, self, dim, &d);
  if (!x) return NULL;
  lt_tensor *r = interleave_const(op, self, x, d, repeats, output_size);
  lt_tensor_release(x);
  return r;
}

lt_tensor *lt_composite_repeat_interleave_t(lt_tensor *self, lt_tensor *repeats, int64_t dim, int64_t output_size) {
  const char *op = "repeat_interleave";
  int d;
  if (!lt_dtype_is_integral((lt_dtype)repeats->dtype) || repeats->dtype == LT_BOOL)
    return lt_error_null("%s: argument 'repeats' must be an integer or an integer tensor, got %s", op,
                         repeats->is_wrapped_number ? "a number that is not an integer" : lt_dtype_name((lt_dtype)repeats->dtype));
  if (repeats->ndim > 1) return lt_error_null("%s: argument 'repeats' must be 0-d or 1-D, got %d dims", op, repeats->ndim);
  lt_tensor *x = interleave_input(op, self, dim, &d);
  if (!x) return NULL;
  lt_tensor *r = NULL;
  if (repeats->numel == 1) {
    /* one count for every slice */
    r = interleave_const(op, self, x, d, lt_tensor_get_int64(repeats, 0), output_size);
  } else if (repeats->sizes[0] != x->sizes[d]) {
    lt_error("%s: argument 'repeats' has %lld entries but dim %d has size %lld (one count per slice, or a single count)",
             op, (long long)repeats->sizes[0], d + 1, (long long)x->sizes[d]);
  } else {
    lt_tensor *idx = interleave_index(op, repeats, output_size);
    if (idx) {
      r = lt_index_select(x, d, idx);
      if (!r) fail_as(op);
    }
    lt_tensor_release(idx);
  }
  lt_tensor_release(x);
  return r;
}

lt_tensor *lt_composite_repeat_interleave_idx(lt_tensor *repeats, int64_t output_size) {
  if (repeats->ndim != 1)
    return lt_error_null("repeat_interleave: argument 'repeats' must be a 1-D tensor of counts, got %d dims", repeats->ndim);
  return interleave_index("repeat_interleave", repeats, output_size);
}

/* ---- grids ---- */

/* every entry 0-d/1-D (or exactly 1-D), one dtype and one device */
static int check_grid_inputs(const char *op, lt_tensor *const *ts, int n, bool exactly_1d) {
  if (n == 0) return lt_error("%s: argument 'tensors' must be a non-empty list of tensors", op);
  if (n > LT_MAX_DIMS) return lt_error("%s: at most %d tensors (the result has one dim per tensor)", op, LT_MAX_DIMS);
  for (int i = 0; i < n; i++) {
    const lt_tensor *t = ts[i];
    if (exactly_1d ? t->ndim != 1 : t->ndim > 1)
      return lt_error("%s: argument 'tensors' entry %d must be %s, got %d dims", op, i + 1,
                      exactly_1d ? "1-D" : "0-d or 1-D", t->ndim);
    if (t->dtype != ts[0]->dtype)
      return lt_error("%s: argument 'tensors' entry %d has dtype %s but entry 1 has %s (they must match)", op, i + 1,
                      lt_dtype_name((lt_dtype)t->dtype), lt_dtype_name((lt_dtype)ts[0]->dtype));
    if (!lt_device_eq(lt_tensor_device(t), lt_tensor_device(ts[0])))
      return lt_error("%s: argument 'tensors' entries %d and 1 are on different devices", op, i + 1);
  }
  return 0;
}

static lt_tensor_list grid(const char *op, lt_tensor *const *ts, int n, bool xy) {
  if (check_grid_inputs(op, ts, n, false) < 0) return list_error();
  int pos[LT_MAX_DIMS];
  int64_t shape[LT_MAX_DIMS];
  for (int i = 0; i < n; i++) pos[i] = i;
  if (xy && n >= 2) { pos[0] = 1; pos[1] = 0; }   /* Cartesian: the first input runs along the columns */
  for (int i = 0; i < n; i++) shape[pos[i]] = ts[i]->numel;
  lt_tensor_list l = lt_tensor_list_new(n);
  if (l.n < 0) return l;
  for (int i = 0; i < n; i++) {
    int64_t vs[LT_MAX_DIMS];
    for (int j = 0; j < n; j++) vs[j] = j == pos[i] ? ts[i]->numel : 1;
    lt_tensor *v = lt_reshape(ts[i], lt_intlist_make(vs, n));
    l.v[i] = v ? lt_expand(v, lt_intlist_make(shape, n)) : NULL;
    lt_tensor_release(v);
    if (!l.v[i]) { lt_tensor_list_release(l); return list_fail_as(op); }
  }
  return l;
}

lt_tensor_list lt_composite_meshgrid(lt_tensor *const *tensors, int tensors_n, const char *indexing) {
  bool xy = strcmp(indexing, "xy") == 0;
  if (!xy && strcmp(indexing, "ij") != 0) {
    lt_error("meshgrid: argument 'indexing' must be \"ij\" or \"xy\", got \"%s\"", indexing);
    return list_error();
  }
  return grid("meshgrid", tensors, tensors_n, xy);
}

lt_tensor *lt_composite_cartesian_prod(lt_tensor *const *tensors, int tensors_n) {
  const char *op = "cartesian_prod";
  if (check_grid_inputs(op, tensors, tensors_n, true) < 0) return NULL;
  if (tensors_n == 1) { lt_tensor_retain(tensors[0]); return tensors[0]; }
  lt_tensor_list g = grid(op, tensors, tensors_n, false);
  if (g.n < 0) return NULL;
  int64_t all = -1;
  lt_tensor *r = NULL;
  int i;
  for (i = 0; i < g.n; i++) {
    lt_tensor *f = lt_reshape(g.v[i], lt_intlist_make(&all, 1));
    if (!f) break;
    lt_tensor_release(g.v[i]);
    g.v[i] = f;
  }
  if (i == g.n) r = lt_stack(g.v, g.n, 1);
  lt_tensor_list_release(g);
  return r ? r : fail_as(op);
}

/* sum over i in [0, rows) of clamp(i + c, 0, cols), without a loop over the rows */
static __int128 sum_clamped(int64_t rows, __int128 c, int64_t cols) {
  __int128 total = 0;
  /* rows where i + c >= cols give cols each */
  __int128 full_from = cols - c < 0 ? 0 : cols - c;
  if (full_from < rows) total += (rows - full_from) * (__int128)cols;
  /* rows where 0 < i + c < cols give i + c */
  __int128 a = 1 - c < 0 ? 0 : 1 - c, b = (full_from < rows ? full_from : rows) - 1;
  if (a <= b) total += (b - a + 1) * (a + c + b + c) / 2;
  return total;
}

static lt_tensor *tri_indices(const char *op, int64_t row, int64_t col, int64_t offset, int dtype, lt_device device,
                              bool lower) {
  if (row < 0) return lt_error_null("%s: argument 'row' must be non-negative, got %lld", op, (long long)row);
  if (col < 0) return lt_error_null("%s: argument 'col' must be non-negative, got %lld", op, (long long)col);
  lt_dtype dt = dtype < 0 ? LT_INT64 : (lt_dtype)dtype;
  if (lt_dtype_is_float(dt) || dt == LT_BOOL)
    return lt_error_null("%s: argument 'dtype' must be an integer dtype, got %s", op, lt_dtype_name(dt));
  /* row i keeps columns j < i + offset + 1 (lower) or j >= i + offset (upper) */
  __int128 n128 = lower ? sum_clamped(row, (__int128)offset + 1, col)
                        : (__int128)row * col - sum_clamped(row, offset, col);
  if (n128 > ((__int128)1 << 40)) return lt_error_null("%s: the result is too large", op);
  int64_t n = (int64_t)n128, sz[2] = {2, n};
  lt_tensor *r = lt_tensor_new(LT_INT64, lt_device_cpu(), 2, sz);
  if (!r) return fail_as(op);
  int64_t *rr = lt_tensor_data(r), *cc = rr + n, k = 0;
  if (n > 0) {
    /* only rows with something to keep: a suffix (lower) or a prefix (upper), at most n rows */
    __int128 first = lower && offset < 0 ? -(__int128)offset : 0, last = lower ? row : (__int128)col - offset;
    if (first > row) first = row;
    if (last > row) last = row;
    for (int64_t i = (int64_t)first; i < (int64_t)last; i++) {
      __int128 lo = lower ? 0 : (__int128)i + offset, hi = lower ? (__int128)i + offset + 1 : col;
      if (lo < 0) lo = 0;
      if (hi > col) hi = col;
      for (int64_t j = (int64_t)lo; j < (int64_t)hi; j++) { rr[k] = i + 1; cc[k] = j + 1; k++; }
    }
  }
  if (dt != LT_INT64) {
    lt_tensor *c = lt_tensor_clone_as(r, dt);
    lt_tensor_release(r);
    if (!(r = c)) return fail_as(op);
  }
  if (device.type >= 0 && device.type != LT_DEV_CPU) {
    lt_tensor *dst = lt_empty(lt_intlist_make(sz, 2), dt, device);
    lt_tensor *c = dst ? lt_copy_(dst, r) : NULL;
    lt_tensor_release(c);
    lt_tensor_release(r);
    if (!c) { lt_tensor_release(dst); return fail_as(op); }
    r = dst;
  }
  return r;
}

lt_tensor *lt_composite_tril_indices(int64_t row, int64_t col, int64_t offset, int dtype, lt_device device) {
  return tri_indices("tril_indices", row, col, offset, dtype, device, true);
}

lt_tensor *lt_composite_triu_indices(int64_t row, int64_t col, int64_t offset, int dtype, lt_device device) {
  return tri_indices("triu_indices", row, col, offset, dtype, device, false);
}

/* ---- diagonals ---- */

/* int64 [n] holding first, first + step, ... as 1-based indices (index_copy's), on dev:
** written on the host, then moved (a cuda or meta self gets its indices there) */
static lt_tensor *index_run(const char *op, int64_t n, int64_t first, int64_t step, lt_device dev) {
  lt_tensor *r = lt_tensor_new(LT_INT64, lt_device_cpu(), 1, &n);
  if (!r) return fail_as(op);
  int64_t *v = lt_tensor_data(r);
  for (int64_t i = 0; i < n; i++) v[i] = first + i * step + 1;
  lt_tensor *d = lt_tensor_to_device(r, dev);
  lt_tensor_release(r);
  return d ? d : fail_as(op);
}

/* The diagonal is written with index_copy into zeros seen as [..., m * m], then the two
** new dims are moved into place. Not a copy_ into a diagonal view: the gradient of an
** in-place write into a view is not differentiable again, index_copy's is. */
lt_tensor *lt_composite_diag_embed(lt_tensor *self, int64_t offset, int64_t dim1, int64_t dim2) {
  const char *op = "diag_embed";
  if (self->ndim < 1) return lt_error_null("%s: expects a tensor with at least 1 dim, got a 0-d tensor", op);
  int nd = self->ndim + 1;
  if (nd > LT_MAX_DIMS) return lt_error_null("%s: tensors have at most %d dims", op, LT_MAX_DIMS);
  int a = lt_wrap_dim(op, dim1, nd), b = lt_wrap_dim(op, dim2, nd);
  if (a < 0 || b < 0) return NULL;
  if (a == b) return lt_error_null("%s: arguments 'dim1' and 'dim2' must differ (both are %d)", op, a + 1);
  int64_t n = self->sizes[self->ndim - 1], m, mm;
  if (offset == INT64_MIN || __builtin_add_overflow(n, offset < 0 ? -offset : offset, &m) ||
      __builtin_mul_overflow(m, m, &mm))
    return lt_error_null("%s: argument 'offset' is too large", op);
  int64_t sz[LT_MAX_DIMS];
  memcpy(sz, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
  sz[self->ndim - 1] = mm;
  /* element k goes to row k, column k + offset (offset >= 0) or row k - offset, column k */
  lt_tensor *idx = index_run(op, n, offset >= 0 ? offset : -offset * m, m + 1, lt_tensor_device(self));
  lt_tensor *z = idx ? lt_zeros(lt_intlist_make(sz, self->ndim), self->dtype, lt_tensor_device(self)) : NULL;
  lt_tensor *w = z ? lt_index_copy(z, self->ndim - 1, idx, self) : NULL;
  sz[self->ndim - 1] = m;
  sz[self->ndim] = m;
  lt_tensor *v = w ? lt_view(w, lt_intlist_make(sz, nd)) : NULL;
  int64_t src[2] = {nd - 2, nd - 1}, dst[2] = {a, b};
  lt_tensor *r = v ? lt_movedim(v, lt_intlist_make(src, 2), lt_intlist_make(dst, 2)) : NULL;
  lt_tensor_release(idx);
  lt_tensor_release(z);
  lt_tensor_release(w);
  lt_tensor_release(v);
  return r ? r : fail_as(op);
}

lt_tensor *lt_composite_diagflat(lt_tensor *self, int64_t offset) {
  int64_t all = -1;
  lt_tensor *f = lt_reshape(self, lt_intlist_make(&all, 1));
  lt_tensor *r = f ? lt_diag(f, offset) : NULL;
  lt_tensor_release(f);
  return r ? r : fail_as("diagflat");
}

/* ---- gathers and scatters ---- */

lt_tensor *lt_composite_take_along_dim(lt_tensor *self, lt_tensor *indices, int64_t dim) {
  const char *op = "take_along_dim";
  if (!is_index_dtype(indices))
    return lt_error_null("%s: argument 'indices' must be an int64 tensor, got %s", op,
                         indices->is_wrapped_number ? "a number" : lt_dtype_name((lt_dtype)indices->dtype));
  lt_tensor *r = NULL;
  if (dim == LT_NOINT) {
    int64_t all = -1;
    lt_tensor *f = lt_reshape(self, lt_intlist_make(&all, 1));
    lt_tensor *i = f ? lt_reshape(indices, lt_intlist_make(&all, 1)) : NULL;
    if (i) r = lt_gather(f, 0, i);
    lt_tensor_release(f);
    lt_tensor_release(i);
    return r ? r : fail_as(op);
  }
  if (self->ndim != indices->ndim)
    return lt_error_null("%s: argument 'indices' must have as many dims as self (%d), got %d", op, self->ndim,
                         indices->ndim);
  int d = lt_wrap_dim(op, dim, self->ndim);
  if (d < 0) return NULL;
  if (self->ndim == 0) {
    r = lt_gather(self, 0, indices);
    return r ? r : fail_as(op);
  }
  /* broadcast both against each other outside d; each keeps its own size in d */
  int64_t a[LT_MAX_DIMS], b[LT_MAX_DIMS], s[LT_MAX_DIMS];
  for (int i = 0; i < self->ndim; i++) {
    a[i] = i == d ? 1 : self->sizes[i];
    b[i] = i == d ? 1 : indices->sizes[i];
  }
  if (lt_broadcast_shapes(op, self->ndim, a, indices->ndim, b, s) < 0) {
    char b1[128], b2[128];
    return lt_error_null("%s: argument 'indices' has shape %s, which does not broadcast with self's %s outside dim %d",
                         op, lt_shape_str(indices->ndim, indices->sizes, b1, sizeof b1),
                         lt_shape_str(self->ndim, self->sizes, b2, sizeof b2), d + 1);
  }
  s[d] = self->sizes[d];
  lt_tensor *xe = lt_expand(self, lt_intlist_make(s, self->ndim));
  s[d] = indices->sizes[d];
  lt_tensor *ie = xe ? lt_expand(indices, lt_intlist_make(s, self->ndim)) : NULL;
  if (ie) r = lt_gather(xe, d, ie);
  lt_tensor_release(xe);
  lt_tensor_release(ie);
  return r ? r : fail_as(op);
}

/* A copy of self with the slices at `count` positions first, first + step, ... along d
** replaced by src, which must have self's shape with `count` in d (`drop`: without d).
** index_copy rather than copy_ into a view: its gradient is differentiable again. */
static lt_tensor *scatter_run(const char *op, lt_tensor *self, lt_tensor *src, int d, int64_t first, int64_t count,
                              int64_t step, bool drop) {
  int64_t sz[LT_MAX_DIMS];
  int k = 0;
  for (int i = 0; i < self->ndim; i++)
    if (i != d || !drop) sz[k++] = i == d ? count : self->sizes[i];
  bool ok = src->ndim == k;
  for (int i = 0; ok && i < k; i++) ok = src->sizes[i] == sz[i];
  if (!ok) {
    char b1[128], b2[128];
    return lt_error_null("%s: argument 'src' has shape %s but the slice it replaces has shape %s", op,
                         lt_shape_str(src->ndim, src->sizes, b1, sizeof b1), lt_shape_str(k, sz, b2, sizeof b2));
  }
  lt_tensor *idx = index_run(op, count, first, step, lt_tensor_device(self));
  if (!idx) return NULL;
  lt_tensor *s = drop ? lt_unsqueeze(src, d) : src;
  lt_tensor *r = s ? lt_index_copy(self, d, idx, s) : NULL;
  if (drop) lt_tensor_release(s);
  lt_tensor_release(idx);
  return r ? r : fail_as(op);
}

lt_tensor *lt_composite_select_scatter(lt_tensor *self, lt_tensor *src, int64_t dim, int64_t index) {
  const char *op = "select_scatter";
  if (self->ndim == 0) return lt_error_null("%s: expects a tensor with at least 1 dim, got a 0-d tensor", op);
  int d = lt_wrap_dim(op, dim, self->ndim);
  if (d < 0) return NULL;
  int64_t n = self->sizes[d], i = index < 0 ? index + n : index;
  if (i < 0 || i >= n)
    return lt_error_null("%s: argument 'index' %lld is out of range for dim %d with size %lld", op, lua_index(index),
                         d + 1, (long long)n);
  return scatter_run(op, self, src, d, i, 1, 1, true);
}

lt_tensor *lt_composite_slice_scatter(lt_tensor *self, lt_tensor *src, int64_t dim, int64_t start, int64_t end,
                                      int64_t step) {
  const char *op = "slice_scatter";
  if (self->ndim == 0) return lt_error_null("%s: expects a tensor with at least 1 dim, got a 0-d tensor", op);
  int d = lt_wrap_dim(op, dim, self->ndim);
  if (d < 0) return NULL;
  if (step <= 0) return lt_error_null("%s: argument 'step' must be positive, got %lld", op, (long long)step);
  if (start == 0 || end == 0)
    return lt_error_null("%s: argument '%s' is 0 (positions are 1-based; -1 is the last element)", op,
                         start == 0 ? "start" : "end");
  int64_t n = self->sizes[d];
  /* 1-based inclusive [start, end] -> 0-based [s, e), clamped as Python slices are */
  int64_t s = start == LT_NOINT ? 0 : start > 0 ? start - 1 : (start < -n ? 0 : start + n);
  int64_t e = end == LT_NOINT ? n : end > 0 ? end : (end < -n ? 0 : end + n + 1);
  if (s > n) s = n;
  if (e > n) e = n;
  int64_t count = e > s ? (e - s - 1) / step + 1 : 0;
  return scatter_run(op, self, src, d, s, count, step, false);
}

/* ---- differences and powers ---- */

static int check_edge(const char *op, const char *arg, const lt_tensor *t, const lt_tensor *self, int d) {
  if (!t) return 0;
  char b1[128], b2[128];
  if (t->ndim != self->ndim)
    return lt_error("%s: argument '%s' must have as many dims as self (%d), got %d", op, arg, self->ndim, t->ndim);
  for (int i = 0; i < self->ndim; i++)
    if (i != d && t->sizes[i] != self->sizes[i])
      return lt_error("%s: argument '%s' has shape %s, which does not match self's %s outside dim %d", op, arg,
                      lt_shape_str(t->ndim, t->sizes, b1, sizeof b1), lt_shape_str(self->ndim, self->sizes, b2, sizeof b2),
                      d + 1);
  return 0;
}

lt_tensor *lt_composite_diff(lt_tensor *self, int64_t n, int64_t dim, lt_tensor *prepend, lt_tensor *append) {
  const char *op = "diff";
  if (self->ndim == 0) return lt_error_null("%s: expects a tensor with at least 1 dim, got a 0-d tensor", op);
  if (n < 0) return lt_error_null("%s: argument 'n' must be non-negative, got %lld", op, (long long)n);
  int d = lt_wrap_dim(op, dim, self->ndim);
  if (d < 0) return NULL;
  if (check_edge(op, "prepend", prepend, self, d) < 0 || check_edge(op, "append", append, self, d) < 0) return NULL;
  lt_tensor *cur;
  if (prepend || append) {
    lt_tensor *parts[3];
    int k = 0;
    if (prepend) parts[k++] = prepend;
    parts[k++] = self;
    if (append) parts[k++] = append;
    if (!(cur = lt_cat(parts, k, d))) return fail_as(op);
  } else {
    lt_tensor_retain(self);
    cur = self;
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t len = cur->sizes[d];
    if (len == 0) break;
    lt_tensor *hi = lt_narrow(cur, d, 1, len - 1), *lo = hi ? lt_narrow(cur, d, 0, len - 1) : NULL;
    lt_tensor *nx = NULL;
    if (lo) nx = cur->dtype == LT_BOOL ? lt_logical_xor(hi, lo) : lt_sub(hi, lo, lt_scalar_int(1));
    lt_tensor_release(hi);
    lt_tensor_release(lo);
    lt_tensor_release(cur);
    if (!(cur = nx)) return fail_as(op);
  }
  cur = fresh(cur, self);   /* n = 0: a copy, as PyTorch */
  return cur ? cur : fail_as(op);
}

lt_tensor *lt_composite_vander(lt_tensor *x, int64_t N, bool increasing) {
  const char *op = "vander";
  if (x->ndim != 1) return lt_error_null("%s: argument 'x' must be a 1-D tensor, got %d dims", op, x->ndim);
  int64_t len = x->sizes[0];
  if (N == LT_NOINT) N = len;
  if (N < 0) return lt_error_null("%s: argument 'N' must be non-negative, got %lld", op, (long long)N);
  lt_dtype dt = lt_promote_types((lt_dtype)x->dtype, LT_INT64);
  int64_t sz[2] = {len, N};
  if (N == 0) {
    lt_tensor *r = lt_empty(lt_intlist_make(sz, 2), dt, lt_tensor_device(x));
    return r ? r : fail_as(op);
  }
  /* cumprod over [1, x, x, ..., x] gives the powers 0 .. N-1 (differentiable, exact for integers) */
  int64_t one[2] = {len, 1}, rest[2] = {len, N - 1};
  lt_tensor *xc = lt_to(x, dt, false);
  lt_tensor *ones = xc ? lt_ones(lt_intlist_make(one, 2), dt, lt_tensor_device(x)) : NULL;
  lt_tensor *u = ones ? lt_unsqueeze(xc, 1) : NULL;
  lt_tensor *e = u ? lt_expand(u, lt_intlist_make(rest, 2)) : NULL;
  lt_tensor *parts[2] = {ones, e};
  lt_tensor *c = e ? lt_cat(parts, 2, 1) : NULL;
  lt_tensor *r = c ? lt_cumprod(c, 1, -1) : NULL;
  lt_tensor_release(xc);
  lt_tensor_release(ones);
  lt_tensor_release(u);
  lt_tensor_release(e);
  lt_tensor_release(c);
  if (r && !increasing) {
    lt_tensor *f = flip1(r, 1);
    lt_tensor_release(r);
    r = f;
  }
  return r ? r : fail_as(op);
}

lt_scalar lt_composite_numel(lt_tensor *self) { return lt_scalar_int(self->numel); }
