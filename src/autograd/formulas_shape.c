/*
** formulas_shape.c — derivative helpers for the view and shape ops, and the
** autograd side of cat.
**
** Helpers use the ops' entry points (narrow, cat, index_add, movedim, ...)
** rather than writing into buffers, so that a backward run with create_graph
** is itself recorded (double backward). Temporaries go into a small pool
** released on every exit path.
*/
#include <stdlib.h>
#include <string.h>
#include "formulas_shape.h"
#include "lt_ops.h"
#include "core/tpool.h"

typedef lt_tpool pool;

static lt_tensor *keep(pool *p, lt_tensor *t) { return lt_tpool_keep(p, t); }

static void drain(pool *p) { lt_tpool_drop(p); }

/* r (a new reference) after releasing the pool */
static lt_tensor *done(pool *p, lt_tensor *r) {
  drain(p);
  return r;
}

static int wrap(int64_t d, int ndim) { return lt_wrap_dim("backward", d, ndim > 0 ? ndim : 1); }

static lt_tensor *zeros_of(lt_dtype dt, lt_device dev, int ndim, const int64_t *sizes) {
  return lt_zeros(lt_intlist_make(sizes, ndim), dt, dev);
}

/* a 1-D int64 index tensor holding v[0..n) */
static lt_tensor *index_tensor(const int64_t *v, int64_t n) {
  lt_tensor *t = lt_tensor_new(LT_INT64, lt_device_cpu(), 1, &n);
  if (t && n > 0) memcpy(lt_tensor_data(t), v, sizeof(int64_t) * (size_t)n);
  return t;
}

lt_tensor *lt_grad_reshape_to(lt_tensor *grad, const lt_input_meta *self_meta) {
  return lt_reshape(grad, lt_intlist_make(self_meta->sizes, self_meta->ndim));
}

lt_tensor *lt_grad_permute_back(lt_tensor *grad, lt_intlist dims) {
  int64_t inv[LT_MAX_DIMS];
  for (int i = 0; i < dims.n; i++) {
    int d = wrap(dims.v[i], grad->ndim);
    if (d < 0) return NULL;
    inv[d] = i;
  }
  return lt_permute(grad, lt_intlist_make(inv, dims.n));
}

/* grad padded with zeros along d: `before` zeros ahead of it, `after` behind */
static lt_tensor *pad_dim(lt_tensor *grad, int d, int64_t before, int64_t after) {
  if (before == 0 && after == 0) { lt_tensor_retain(grad); return grad; }
  pool p = {{0}, 0};
  lt_tensor *parts[3];
  int n = 0;
  int64_t zs[LT_MAX_DIMS];
  memcpy(zs, grad->sizes, sizeof(int64_t) * (size_t)grad->ndim);
  if (before > 0) {
    zs[d] = before;
    if (!(parts[n++] = keep(&p, zeros_of((lt_dtype)grad->dtype, lt_tensor_device(grad), grad->ndim, zs))))
      return done(&p, NULL);
  }
  parts[n++] = grad;
  if (after > 0) {
    zs[d] = after;
    if (!(parts[n++] = keep(&p, zeros_of((lt_dtype)grad->dtype, lt_tensor_device(grad), grad->ndim, zs))))
      return done(&p, NULL);
  }
  return done(&p, lt_cat(parts, n, d));
}

lt_tensor *lt_grad_narrow_back(lt_tensor *grad, const lt_input_meta *self_meta, int64_t dim, int64_t start,
                               int64_t length) {
  int d = wrap(dim, self_meta->ndim);
  if (d < 0) return NULL;
  int64_t n = self_meta->sizes[d], s = start < 0 ? start + n : start;
  return pad_dim(grad, d, s, n - s - length);
}

lt_tensor *lt_grad_select_back(lt_tensor *grad, const lt_input_meta *self_meta, int64_t dim, int64_t index) {
  int d = wrap(dim, self_meta->ndim);
  if (d < 0) return NULL;
  int64_t n = self_meta->sizes[d], i = index < 0 ? index + n : index;
  lt_tensor *u = lt_unsqueeze(grad, d);
  if (!u) return NULL;
  lt_tensor *r = pad_dim(u, d, i, n - i - 1);
  lt_tensor_release(u);
  return r;
}

/* Window w, element k of the unfolded dim came from position w*step + k: the
** windows, laid out along the dim, are index_add'ed into zeros. */
lt_tensor *lt_grad_unfold_back(lt_tensor *grad, const lt_input_meta *self_meta, int64_t dimension, int64_t size,
                               int64_t step) {
  if (self_meta->ndim == 0) {   /* every window element is the one element */
    lt_tensor *s = lt_sum(grad, lt_intlist_none(), false, -1);
    if (!s) return NULL;
    lt_tensor *r = lt_reshape(s, lt_intlist_make(NULL, 0));
    lt_tensor_release(s);
    return r;
  }
  int d = wrap(dimension, self_meta->ndim);
  if (d < 0) return NULL;
  pool p = {{0}, 0};
  int last = grad->ndim - 1;
  int64_t nwin = grad->sizes[d], src = last, dst = d + 1;
  lt_tensor *m = keep(&p, lt_movedim(grad, lt_intlist_make(&src, 1), lt_intlist_make(&dst, 1)));
  if (!m) return done(&p, NULL);
  int64_t ms[LT_MAX_DIMS];
  int k = 0;
  for (int i = 0; i < m->ndim; i++) {
    if (i == d) { ms[k++] = nwin * size; i++; }
    else ms[k++] = m->sizes[i];
  }
  lt_tensor *merged = keep(&p, lt_reshape(m, lt_intlist_make(ms, k)));
  if (!merged) return done(&p, NULL);
  int64_t cnt = nwin * size;
  int64_t *pos = malloc(sizeof(int64_t) * (size_t)(cnt > 0 ? cnt : 1));
  if (!pos) return done(&p, lt_error_null("unfold: out of memory in backward"));
  for (int64_t w = 0; w < nwin; w++)
    for (int64_t j = 0; j < size; j++) pos[w * size + j] = w * step + j + 1;
  lt_tensor *idx = keep(&p, index_tensor(pos, cnt));
  free(pos);
  lt_tensor *z = idx ? keep(&p, zeros_of((lt_dtype)grad->dtype, self_meta->device, self_meta->ndim, self_meta->sizes))
                     : NULL;
  if (!z) return done(&p, NULL);
  return done(&p, lt_index_add(z, d, idx, merged, lt_scalar_int(1)));
}

/* the storage elements [lo, hi) a geometry reaches (hi = lo when empty) */
static void span_of(int n, const int64_t *sz, const int64_t *st, int64_t off, int64_t *lo, int64_t *hi) {
  int64_t last = off;
  *lo = off;
  for (int i = 0; i < n; i++) {
    if (sz[i] == 0) { *hi = off; return; }
    last += (sz[i] - 1) * st[i];
  }
  *hi = last + 1;
}

/* The gradient of a view with any geometry: the buffer stands for the storage
** elements [base, base + M) that the input or the view reaches; the view's
** gradient is added into it at the view's positions (index_add, so overlapping
** view elements accumulate) and read back at the input's. Positions come from
** as_strided over an arange, which applies the same geometry to the numbers
** 1..M. An input whose own elements overlap (a stride 0 over a dim of size > 1)
** shares each location's gradient among its aliases, as PyTorch does. */
lt_tensor *lt_grad_as_strided(lt_tensor *grad, lt_tensor *self, lt_intlist size, lt_intlist stride,
                              int64_t storage_offset) {
  int n = size.n < 0 ? 0 : size.n;
  int64_t off = storage_offset == LT_NOINT ? self->offset : storage_offset;
  for (int i = 0; i < self->ndim; i++)
    if (self->strides[i] < 0) return lt_error_null("as_strided: backward of an input with negative strides is not supported");
  int64_t ilo, ihi, olo, ohi;
  span_of(self->ndim, self->sizes, self->strides, self->offset, &ilo, &ihi);
  span_of(n, size.v, stride.v, off, &olo, &ohi);
  int64_t base = ilo < olo ? ilo : olo, end = ihi > ohi ? ihi : ohi;
  if (ihi == ilo) base = olo, end = ohi > olo ? ohi : olo + 1;
  else if (ohi == olo) base = ilo, end = ihi;
  int64_t m = end - base, flat = -1;
  lt_device dev = lt_tensor_device(grad);
  lt_dtype dt = (lt_dtype)grad->dtype;
  pool p = {{0}, 0};
  lt_tensor *pos = keep(&p, lt_arange(lt_scalar_int(1), lt_scalar_int(m + 1), lt_scalar_int(1), LT_INT64, dev));
  lt_tensor *po = pos ? keep(&p, lt_as_strided(pos, lt_intlist_make(size.v, n), lt_intlist_make(stride.v, n), off - base)) : NULL;
  lt_tensor *pof = po ? keep(&p, lt_reshape(po, lt_intlist_make(&flat, 1))) : NULL;
  lt_tensor *gf = pof ? keep(&p, lt_reshape(grad, lt_intlist_make(&flat, 1))) : NULL;
  lt_tensor *z = gf ? keep(&p, lt_zeros(lt_intlist_make(&m, 1), dt, dev)) : NULL;
  lt_tensor *buf = z ? keep(&p, lt_index_add(z, 0, pof, gf, lt_scalar_int(1))) : NULL;
  lt_tensor *pi = buf ? keep(&p, lt_as_strided(pos, lt_intlist_make(self->sizes, self->ndim),
                                               lt_intlist_make(self->strides, self->ndim), self->offset - base)) : NULL;
  lt_tensor *pif = pi ? keep(&p, lt_reshape(pi, lt_intlist_make(&flat, 1))) : NULL;
  lt_tensor *g = pif ? keep(&p, lt_index_select(buf, 0, pif)) : NULL;
  if (!g) return done(&p, NULL);
  bool aliased = false;
  for (int i = 0; i < self->ndim; i++) aliased |= self->strides[i] == 0 && self->sizes[i] > 1;
  if (aliased) {
    int64_t ni = pif->sizes[0];
    lt_tensor *one = keep(&p, lt_ones(lt_intlist_make(&ni, 1), dt, dev));
    lt_tensor *cz = one ? keep(&p, lt_zeros(lt_intlist_make(&m, 1), dt, dev)) : NULL;
    lt_tensor *cnt = cz ? keep(&p, lt_index_add(cz, 0, pif, one, lt_scalar_int(1))) : NULL;
    lt_tensor *c = cnt ? keep(&p, lt_index_select(cnt, 0, pif)) : NULL;
    g = c ? keep(&p, lt_div(g, c, NULL)) : NULL;
  }
  if (!g) return done(&p, NULL);
  return lt_tpool_finish(&p, keep(&p, lt_reshape(g, lt_intlist_make(self->sizes, self->ndim))));
}

/* The diagonal of dims a, b goes back into a [rest..., na*nb] buffer at the
** flat positions of the diagonal, which is then unflattened and the two dims
** moved to a and b. */
lt_tensor *lt_grad_diagonal_back(lt_tensor *grad, const lt_input_meta *self_meta, int64_t offset, int64_t dim1,
                                 int64_t dim2) {
  int nd = self_meta->ndim;
  int a = wrap(dim1, nd), b = wrap(dim2, nd);
  if (a < 0 || b < 0) return NULL;
  int64_t na = self_meta->sizes[a], nb = self_meta->sizes[b], len = grad->sizes[grad->ndim - 1];
  int64_t rs[LT_MAX_DIMS];
  int k = 0;
  for (int i = 0; i < nd; i++)
    if (i != a && i != b) rs[k++] = self_meta->sizes[i];
  pool p = {{0}, 0};
  int64_t *pos = malloc(sizeof(int64_t) * (size_t)(len > 0 ? len : 1));
  if (!pos) return lt_error_null("diagonal: out of memory in backward");
  int64_t r0 = offset < 0 ? -offset : 0, c0 = offset > 0 ? offset : 0;
  for (int64_t i = 0; i < len; i++) pos[i] = (i + r0) * nb + (i + c0) + 1;
  lt_tensor *idx = keep(&p, index_tensor(pos, len));
  free(pos);
  if (!idx) return done(&p, NULL);
  rs[k] = na * nb;
  lt_tensor *z = keep(&p, zeros_of((lt_dtype)grad->dtype, self_meta->device, k + 1, rs));
  lt_tensor *f = z ? keep(&p, lt_index_copy(z, k, idx, grad)) : NULL;
  if (!f) return done(&p, NULL);
  rs[k] = na;
  rs[k + 1] = nb;
  lt_tensor *u = keep(&p, lt_view(f, lt_intlist_make(rs, k + 2)));
  if (!u) return done(&p, NULL);
  int64_t src[2] = {k, k + 1}, dst[2] = {a, b};
  return done(&p, lt_movedim(u, lt_intlist_make(src, 2), lt_intlist_make(dst, 2)));
}

lt_tensor *lt_grad_diag_back(lt_tensor *grad, const lt_input_meta *self_meta, int64_t diagonal) {
  if (self_meta->ndim == 1) return lt_diagonal(grad, diagonal, 0, 1);
  return lt_grad_diagonal_back(grad, self_meta, diagonal, 0, 1);
}

lt_tensor *lt_grad_roll_back(lt_tensor *grad, lt_intlist shifts, lt_intlist dims) {
  int64_t neg[LT_MAX_DIMS];
  for (int i = 0; i < shifts.n && i < LT_MAX_DIMS; i++) {
    /* reduced modulo the rolled length first, so that negating cannot overflow */
    int64_t n = grad->numel;
    if (dims.n > 0 && i < dims.n && grad->ndim > 0) {
      int d = wrap(dims.v[i], grad->ndim);
      if (d < 0) return NULL;
      n = grad->sizes[d];
    }
    neg[i] = n > 0 ? -(shifts.v[i] % n) : 0;
  }
  return lt_roll(grad, lt_intlist_make(neg, shifts.n), dims);
}

/* ---- cat ----
** The generator cannot record an op whose differentiable input is a Tensor[],
** so cat is a composite: the CPU kernel computes the result and, when an input
** requires grad, this node hands each input its slice of the gradient. The
** slices are taken with narrow, so double backward records them. */

typedef struct cat_ctx {
  int dim;
  int64_t *start, *len;   /* [num_next]; len < 0: a skipped 1-D empty input */
} cat_ctx;

static int cat_apply(lt_node *n, lt_tensor **grads_in, lt_tensor **grads_out) {
  cat_ctx *c = n->ctx;
  lt_tensor *grad = grads_in[0];
  if (!grad) return 0;
  for (int i = 0; i < n->num_next; i++) {
    if (!n->next[i].fn) continue;
    lt_tensor *g = c->len[i] < 0 ? lt_zeros_from_meta(&n->meta[i]) : lt_narrow(grad, c->dim, c->start[i], c->len[i]);
    if (!g || !(grads_out[i] = lt_grad_to_meta(g, &n->meta[i]))) return -1;
  }
  return 0;
}

static void cat_destroy(lt_node *n) {
  cat_ctx *c = n->ctx;
  free(c->start);
  free(c->len);
}

static const lt_node_ops cat_node_ops = {"CatBackward0", cat_apply, NULL, cat_destroy};

lt_tensor *lt_composite_cat(lt_tensor *const *tensors, int tensors_n, int64_t dim, lt_tensor *out) {
  bool record = lt_grad_enabled() && lt_any_requires_grad(tensors, tensors_n);
  if (record && out)
    return lt_error_null("cat: out= arguments don't support automatic differentiation, but one of the arguments "
                         "requires grad");
  lt_tensor *r = out ? lt__cat_out(tensors, tensors_n, dim, out) : lt__cat(tensors, tensors_n, dim);
  if (!r) return NULL;
  if (!record) return r;
  /* the kernel's layout: 1-D empty inputs are skipped unless one of them is the reference */
  const lt_tensor *ref = NULL;
  for (int i = 0; i < tensors_n && !ref; i++)
    if (!(tensors[i]->ndim == 1 && tensors[i]->sizes[0] == 0)) ref = tensors[i];
  if (!ref) ref = tensors[0];
  int d = lt_wrap_dim("cat", dim, ref->ndim);
  lt_node *n = lt_node_new(&cat_node_ops, tensors_n, 1, sizeof(cat_ctx));
  if (!n) { lt_tensor_release(r); return NULL; }
  cat_ctx *c = n->ctx;
  c->dim = d;
  c->start = malloc(sizeof(int64_t) * (size_t)tensors_n);
  c->len = malloc(sizeof(int64_t) * (size_t)tensors_n);
  if (!c->start || !c->len) {
    lt_node_release(n);
    lt_tensor_release(r);
    return lt_error_null("cat: out of memory");
  }
  int64_t at = 0;
  for (int i = 0; i < tensors_n; i++) {
    const lt_tensor *t = tensors[i];
    lt_node_set_next(n, i, tensors[i]);
    c->start[i] = at;
    if (t->ndim == 1 && t->sizes[0] == 0 && t != ref) { c->len[i] = -1; continue; }
    c->len[i] = t->sizes[d];
    at += t->sizes[d];
  }
  lt_set_history(r, n, 0);
  lt_node_release(n);
  return r;
}

/* ---- split, chunk, unbind ----
** One node for all the pieces: its backward puts the pieces' gradients back
** together with one cat (stack for unbind), zeros standing in for pieces that
** got none. A node per piece would pad each piece's gradient to the whole
** tensor and add them up: quadratic in the number of pieces, which is what a
** loop over the time steps of a sequence does. */

typedef struct split_ctx {
  int dim;
  bool stacked;          /* unbind: the pieces lost dim */
  int64_t *len;          /* [num_outputs] */
} split_ctx;

static int split_apply(lt_node *n, lt_tensor **grads_in, lt_tensor **grads_out) {
  split_ctx *c = n->ctx;
  if (!n->next[0].fn) return 0;
  const lt_input_meta *m = &n->meta[0];
  int k = n->num_outputs;
  lt_tensor **parts = calloc((size_t)(k > 0 ? k : 1), sizeof *parts);
  if (!parts) return lt_error("split: out of memory in backward");
  int rc = 0;
  for (int i = 0; i < k && rc == 0; i++) {
    if (grads_in[i]) { lt_tensor_retain(grads_in[i]); parts[i] = grads_in[i]; continue; }
    int64_t sizes[LT_MAX_DIMS];
    int nd = 0;
    for (int j = 0; j < m->ndim; j++) {
      if (j == c->dim) { if (c->stacked) continue; sizes[nd++] = c->len[i]; }
      else sizes[nd++] = m->sizes[j];
    }
    if (!(parts[i] = lt_tensor_new_zeros((lt_dtype)m->dtype, m->device, nd, sizes))) rc = -1;
  }
  if (rc == 0) {
    lt_tensor *g = c->stacked ? lt_stack(parts, k, c->dim) : lt_cat(parts, k, c->dim);
    if (!g) rc = -1;
    else grads_out[0] = g;
  }
  for (int i = 0; i < k; i++) lt_tensor_release(parts[i]);
  free(parts);
  return rc;
}

static void split_destroy(lt_node *n) { free(((split_ctx *)n->ctx)->len); }

static const lt_node_ops split_node_ops = {"SplitBackward0", split_apply, NULL, split_destroy};
static const lt_node_ops unbind_node_ops = {"UnbindBackward0", split_apply, NULL, split_destroy};

bool lt_split_begin(lt_tensor *self, lt_keyset *saved_excluded) {
  *saved_excluded = lt_tls_excluded;
  if (!(self->keys & LT_KEYBIT(LT_KEY_AUTOGRAD))) return false;
  lt_tls_excluded |= LT_KEYBIT(LT_KEY_AUTOGRAD);
  return true;
}

int lt_split_end(lt_tensor *self, lt_tensor_list l, int dim, bool stacked, bool began, lt_keyset saved_excluded) {
  lt_tls_excluded = saved_excluded;
  if (!began || l.n < 0) return 0;
  for (int i = 0; i < l.n; i++)
    if (lt_track_view(l.v[i], self) < 0) return -1;
  if (!lt_grad_enabled() || !lt_any_requires_grad(&self, 1)) return 0;
  lt_node *n = lt_node_new(stacked ? &unbind_node_ops : &split_node_ops, 1, l.n, sizeof(split_ctx));
  if (!n) return -1;
  split_ctx *c = n->ctx;
  c->dim = dim;
  c->stacked = stacked;
  c->len = malloc(sizeof(int64_t) * (size_t)(l.n > 0 ? l.n : 1));
  if (!c->len) { lt_node_release(n); return lt_error("split: out of memory"); }
  lt_node_set_next(n, 0, self);
  for (int i = 0; i < l.n; i++) {
    c->len[i] = stacked ? 1 : l.v[i]->sizes[dim];
    lt_set_history(l.v[i], n, (uint32_t)i);
  }
  lt_node_release(n);
  return 0;
}
