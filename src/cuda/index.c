/*
** index.c — the CUDA kernels of the indexing ops, over src/cuda/kernels/index.cu:
** index_select, gather, scatter (tensor and value), scatter_add, index_add,
** index_copy, index_fill, take, put, masked_fill, masked_select,
** masked_scatter, nonzero, embedding, its backward and one_hot. Advanced
** indexing from Lua (x[idx], x[mask]: src/vm/lindex_adv.c) reaches them
** through these ops.
**
** Arguments are checked with the CPU's messages (meta/index.h). Index values
** are data on the device: a check kernel finds the first one out of range and
** one synchronizing read-back of 8 bytes (16 when one is bad) raises the
** CPU's error naming the op before anything is written. That sync is the
** price of a clear error; PyTorch asserts on the device instead. Likewise
** masked_select and nonzero read their result's length back (their output
** shape depends on the data), and masked_scatter the count of true entries.
**
** Results are written through their strides (no contiguous work buffer);
** out= of another dtype than self goes through a temporary. Accumulation
** (scatter_add, index_add, put with accumulate, the embedding backward) uses
** atomics on the device, so duplicate indices add up; the host build runs
** the same kernel serially under the fake driver.
**
** Nothing here has run on a GPU: it is tested with the host build under the
** fake driver (tests/lua/cuda/test_index.lua).
*/
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "core/error.h"
#include "cuda/cuda.h"
#include "cuda/kernels/index.h"
#include "cuda/launch.h"
#include "cuda/cuda_index.h"
#include "dispatch/dispatch.h"
#include "meta/index.h"
#include "meta/meta.h"
#include "kernels_cuda.h"   /* generated: lt_ops.h, the kernel types */

extern const lt_ck_index_kernels *lt_ck_index_device_kernels(void) __attribute__((weak));

/* ---- launching ---- */

int lt_cuda_ix_begin(lt_cuda_ix *x, const lt_tensor *on, const char *op) {
  x->op = op;
  if (lt_cuda_launch_begin(&x->l, lt_tensor_device(on).index, lt_ck_index_device_kernels != NULL, op) < 0) return -1;
  x->k = x->l.host ? lt_ck_host_index_kernels() : lt_ck_index_device_kernels();
  return 0;
}

int lt_cuda_ix_end(lt_cuda_ix *x, int rc) {
  lt_cuda_launch_end(&x->l);
  const lt_ck_kernels *ck = lt_cuda_ck_kernels(&x->l);
  rc = lt_cuda_launch_result(&x->l, x->op, rc, ck ? ck->error_string : NULL);
  if (rc > 0) return lt_error("%s: the CUDA index kernels refused the arguments", x->op);
  return rc;
}

/* one int64 of device memory read back (synchronizing); -1 on error */
int lt_cuda_read_i64(const lt_tensor *t, int64_t linear, int64_t *v) {
  lt_tensor *e = lt_tensor_alias(t, t->offset + linear, 0, NULL, NULL);
  lt_tensor *h = e ? lt_tensor_to_host(e) : NULL;
  lt_tensor_release(e);
  if (!h) return -1;
  *v = *(const int64_t *)lt_tensor_data(h);
  lt_tensor_release(h);
  return 0;
}

/* value as one element of dtype dt in host memory, as the CPU converts it (fill_'s rules) */
void lt_cuda_scalar_bits(lt_scalar v, lt_dtype dt, void *bits) {
  memset(bits, 0, 8);
  if (v.type == LT_SCALAR_FLOAT) lt_dtype_store_double(dt, bits, v.v.f);
  else lt_dtype_store_int64(dt, bits, v.v.i);
}

/* Check every value of idx (contiguous int64 on the device) against size:
** kind 0 a 1-based index of dim `dim` (negative from the end; dim < 0 flat),
** kind 1 embedding's 1..size, kind 2 a sorter's 1..size, kind 3 bincount's
** values plus one, 1..size. 0, or -1 with the CPU's message. */
int lt_cuda_check_index(const char *op, const lt_tensor *idx, int64_t size, int dim, int kind) {
  if (idx->numel == 0) return 0;
  lt_tensor *flag = lt_tensor_new(LT_INT64, lt_tensor_device(idx), 0, NULL);
  if (!flag) return -1;
  int64_t pos = INT64_MAX;
  int rc = lt_tensor_fill_(flag, lt_scalar_int(INT64_MAX));
  if (rc == 0) {
    lt_cuda_ix x;
    rc = lt_cuda_ix_begin(&x, idx, op);
    if (rc == 0)
      rc = lt_cuda_ix_end(&x, x.k->check(lt_tensor_data(idx), idx->numel, size, kind == 0, lt_tensor_data(flag),
                                         x.l.stream));
  }
  if (rc == 0) rc = lt_cuda_read_i64(flag, 0, &pos);
  lt_tensor_release(flag);
  if (rc < 0 || pos == INT64_MAX) return rc;
  int64_t bad;
  if (lt_cuda_read_i64(idx, pos, &bad) < 0) return -1;
  if (kind == 0) return lt_meta_index_range(op, bad, size, dim);
  if (kind == 3) return lt_meta_bincount_negative(bad - 1);
  return kind == 1 ? lt_meta_embedding_range(op, bad, size) : lt_meta_sorter_range(op, bad, size);
}

/* an index argument as contiguous int64, its values checked */
static lt_tensor *index_arg(const char *op, lt_tensor *index, int64_t size, int dim) {
  if (lt_meta_check_index_dtype(op, "index", index) < 0) return NULL;
  lt_tensor *idx = lt_tensor_to_dtype_contig(index, LT_INT64);
  if (idx && lt_cuda_check_index(op, idx, size, dim, 0) < 0) { lt_tensor_release(idx); return NULL; }
  return idx;
}

/* run the indexed kernel on geometry g */
int lt_cuda_ix_launch(const char *op, int mode, lt_tensor *w, const lt_tensor *in, const lt_tensor *idx,
                      const void *value, lt_scalar alpha, const lt_ck_ix_geom *g) {
  lt_ck_scalar al = {1, 1};
  if (alpha.type == LT_SCALAR_FLOAT) { al.f = alpha.v.f; al.i = 0; }
  else if (alpha.type != LT_SCALAR_NONE) { al.i = alpha.v.i; al.f = (double)alpha.v.i; }
  lt_cuda_ix x;
  if (lt_cuda_ix_begin(&x, w, op) < 0) return -1;
  return lt_cuda_ix_end(&x, x.k->run(mode, w->dtype, lt_tensor_data(w), in ? lt_tensor_data(in) : NULL,
                                     lt_tensor_data(idx), value, al, g, x.l.stream));
}

/* the indexed kernel into w (value converted to w's dtype for FILL): w, or
** NULL with w released */
static lt_tensor *ix_into(lt_tensor *w, const char *op, int mode, const lt_tensor *in, const lt_tensor *idx,
                          lt_scalar value, lt_scalar alpha, const lt_ck_ix_geom *g) {
  uint64_t bits = 0;
  if (mode == LT_CK_IX_FILL) lt_cuda_scalar_bits(value, (lt_dtype)w->dtype, &bits);
  if (lt_cuda_ix_launch(op, mode, w, in, idx, &bits, alpha, g) == 0) return w;
  lt_tensor_release(w);
  return NULL;
}

/* ---- results ---- */

/* where a kernel writes r's values: r when of dtype dt, else a new tensor of r's shape */
static lt_tensor *writable(lt_tensor *r, lt_dtype dt) {
  if (r->dtype == dt) { lt_tensor_retain(r); return r; }
  return lt_tensor_new(dt, lt_tensor_device(r), r->ndim, r->sizes);
}

/* w's values into r when they differ; releases w, and r on error */
static lt_tensor *finish(lt_tensor *r, lt_tensor *w) {
  int rc = w && w != r ? lt_tensor_copy_(r, w) : 0;
  lt_tensor_release(w);
  if (rc < 0 || !w) { lt_tensor_release(r); return NULL; }
  return r;
}

/* For ops that update a copy of self (or self, in place: out == self): *rp
** the result of shape nd/sizes, *wp where the kernel writes, holding self's
** values (broadcast). The caller ends with finish(*rp, *wp). */
static int begin_update(const char *op, lt_tensor *self, lt_tensor *out, int nd, const int64_t *sizes, lt_tensor **rp,
                        lt_tensor **wp) {
  lt_tensor *r;
  if (out == self) {
    if (lt_meta_check_inplace_shape(op, self, nd, sizes) < 0) return -1;
    r = self;
    lt_tensor_retain(r);
  } else {
    r = lt_meta_result(op, out, out ? (lt_dtype)out->dtype : (lt_dtype)self->dtype, lt_tensor_device(self), nd, sizes);
    if (!r) return -1;
  }
  lt_tensor *w = writable(r, (lt_dtype)self->dtype);
  if (!w || (w != self && lt_tensor_copy_(w, self) < 0)) {
    lt_tensor_release(w);
    lt_tensor_release(r);
    return -1;
  }
  *rp = r;
  *wp = w;
  return 0;
}

static lt_tensor *new_result(const char *op, lt_tensor *self, lt_tensor *out, int nd, const int64_t *sizes) {
  return lt_meta_result(op, out, out ? (lt_dtype)out->dtype : (lt_dtype)self->dtype, lt_tensor_device(self), nd, sizes);
}

static void geom_zero(lt_ck_ix_geom *g, int nd, const int64_t *sizes) {
  memset(g, 0, sizeof *g);
  g->ndim = nd;
  if (nd > 0) memcpy(g->sizes, sizes, sizeof(int64_t) * (size_t)nd);
  g->skip = -1;
}

/* strides of t over nd dims (a 0-d t as one element of stride 0) */
static void strides_of(const lt_tensor *t, int nd, int64_t *st) {
  for (int i = 0; i < nd; i++) st[i] = t->ndim ? t->strides[i] : 0;
}

static lt_dtype self_dtype(const lt_tensor *t) { return (lt_dtype)t->dtype; }

/* ---- index_select, gather, take ---- */

lt_tensor *lt_cuda_index_select(lt_tensor *self, int64_t dim, lt_tensor *index, lt_tensor *out) {
  const char *op = "index_select";
  int d = lt_wrap_dim(op, dim, self->ndim);
  if (d < 0) return NULL;
  if (index->ndim > 1) return lt_error_null("%s: argument 'index' must be 1-D, got %d dims", op, index->ndim);
  int64_t S = self->ndim ? self->sizes[d] : 1;
  lt_tensor *idx = index_arg(op, index, S, d);
  if (!idx) return NULL;
  int64_t n = idx->numel, ns[LT_MAX_DIMS];
  int nd = self->ndim;
  memcpy(ns, self->sizes, sizeof(int64_t) * (size_t)nd);
  if (nd) ns[d] = n;
  else if (index->ndim == 1) { ns[0] = n; nd = 1; }
  lt_tensor *r = new_result(op, self, out, nd, ns);
  lt_tensor *w = r ? writable(r, self_dtype(self)) : NULL;
  if (w && w->numel > 0) {
    lt_ck_ix_geom g;
    geom_zero(&g, nd, ns);
    memcpy(g.strides[0], w->strides, sizeof(int64_t) * (size_t)nd);
    if (self->ndim) {
      memcpy(g.strides[1], self->strides, sizeof(int64_t) * (size_t)nd);
      g.strides[1][d] = 0;
      g.in_ixstride = self->strides[d];
    }
    g.strides[2][self->ndim ? d : 0] = 1;
    g.ixsize = S;
    w = ix_into(w, op, LT_CK_IX_GATHER, self, idx, lt_scalar_none(), lt_scalar_none(), &g);
  }
  lt_tensor_release(idx);
  return r ? finish(r, w) : NULL;
}

lt_tensor *lt_cuda_gather(lt_tensor *self, int64_t dim, lt_tensor *index, lt_tensor *out) {
  const char *op = "gather";
  int d = lt_wrap_dim(op, dim, self->ndim);
  if (d < 0) return NULL;
  if (lt_meta_check_index_shape(op, index, self, d, "self") < 0) return NULL;
  int64_t S = self->ndim ? self->sizes[d] : 1;
  lt_tensor *idx = index_arg(op, index, S, d);
  if (!idx) return NULL;
  lt_tensor *r = new_result(op, self, out, index->ndim, index->sizes);
  lt_tensor *w = r ? writable(r, self_dtype(self)) : NULL;
  if (w && w->numel > 0) {
    int nd = index->ndim ? index->ndim : 1;
    lt_ck_ix_geom g;
    geom_zero(&g, nd, index->ndim ? index->sizes : (const int64_t[]){1});
    strides_of(w, nd, g.strides[0]);
    strides_of(self, nd, g.strides[1]);
    g.in_ixstride = g.strides[1][d];
    g.strides[1][d] = 0;
    lt_contiguous_strides(nd, g.sizes, g.strides[2]);
    g.ixsize = S;
    w = ix_into(w, op, LT_CK_IX_GATHER, self, idx, lt_scalar_none(), lt_scalar_none(), &g);
  }
  lt_tensor_release(idx);
  return r ? finish(r, w) : NULL;
}

lt_tensor *lt_cuda_take(lt_tensor *self, lt_tensor *index, lt_tensor *out) {
  const char *op = "take";
  lt_tensor *idx = index_arg(op, index, self->numel, -1);
  if (!idx) return NULL;
  lt_tensor *r = new_result(op, self, out, index->ndim, index->sizes);
  lt_tensor *s = r ? lt_tensor_contiguous(self) : NULL;
  lt_tensor *w = s ? writable(r, self_dtype(self)) : NULL;
  if (w && w->numel > 0) {
    int nd = index->ndim ? index->ndim : 1;
    lt_ck_ix_geom g;
    geom_zero(&g, nd, index->ndim ? index->sizes : (const int64_t[]){1});
    strides_of(w, nd, g.strides[0]);
    lt_contiguous_strides(nd, g.sizes, g.strides[2]);
    g.in_ixstride = 1;
    g.ixsize = self->numel;
    w = ix_into(w, op, LT_CK_IX_GATHER, s, idx, lt_scalar_none(), lt_scalar_none(), &g);
  }
  lt_tensor_release(s);
  lt_tensor_release(idx);
  return r ? finish(r, w) : NULL;
}

/* ---- scatter, scatter_add ---- */

static lt_tensor *scatter_common(const char *op, lt_tensor *self, int64_t dim, lt_tensor *index, lt_tensor *src,
                                 lt_scalar value, int mode, lt_tensor *out) {
  int d = lt_wrap_dim(op, dim, self->ndim);
  if (d < 0) return NULL;
  if (lt_meta_check_index_shape(op, index, self, d, "self") < 0) return NULL;
  if (src && src->ndim == 0 && index->ndim > 0 && mode == LT_CK_IX_SCATTER) {   /* a number as src */
    value = lt_tensor_item(src);
    if (lt_scalar_is_none(value)) return NULL;
    mode = LT_CK_IX_FILL;
    src = NULL;
  }
  if (src && lt_meta_check_index_shape(op, index, src, -1, "src") < 0) return NULL;
  int64_t S = self->ndim ? self->sizes[d] : 1;
  lt_tensor *idx = index_arg(op, index, S, d);
  if (!idx) return NULL;
  lt_tensor *s = NULL, *r = NULL, *w = NULL;
  if (src && !(s = src->dtype == self->dtype ? (lt_tensor_retain(src), src) : lt_tensor_clone_as(src, self_dtype(self))))
    goto done;
  if (begin_update(op, self, out, self->ndim, self->sizes, &r, &w) < 0) goto done;
  if (idx->numel > 0) {
    int nd = index->ndim ? index->ndim : 1;
    lt_ck_ix_geom g;
    geom_zero(&g, nd, index->ndim ? index->sizes : (const int64_t[]){1});
    strides_of(w, nd, g.strides[0]);
    g.out_ixstride = g.strides[0][d];
    g.strides[0][d] = 0;
    if (s) strides_of(s, nd, g.strides[1]);
    lt_contiguous_strides(nd, g.sizes, g.strides[2]);
    g.ixsize = S;
    w = ix_into(w, op, mode, s, idx, value, lt_scalar_none(), &g);
  }
  r = finish(r, w);
done:
  lt_tensor_release(s);
  lt_tensor_release(idx);
  return r;
}

lt_tensor *lt_cuda_scatter(lt_tensor *self, int64_t dim, lt_tensor *index, lt_tensor *src, lt_tensor *out) {
  return scatter_common("scatter", self, dim, index, src, lt_scalar_none(), LT_CK_IX_SCATTER, out);
}

lt_tensor *lt_cuda_scatter_value(lt_tensor *self, int64_t dim, lt_tensor *index, lt_scalar value, lt_tensor *out) {
  return scatter_common("scatter", self, dim, index, NULL, value, LT_CK_IX_FILL, out);
}

lt_tensor *lt_cuda_scatter_add(lt_tensor *self, int64_t dim, lt_tensor *index, lt_tensor *src, lt_tensor *out) {
  if (src->ndim == 0 && index->ndim > 0)
    return lt_error_null("scatter_add: argument 'src' must be a tensor with index's dims, got a 0-d tensor");
  return scatter_common("scatter_add", self, dim, index, src, lt_scalar_none(), LT_CK_IX_ADD, out);
}

/* ---- index_add, index_copy, index_fill: slices along dim ---- */

static lt_tensor *index_slices(const char *op, lt_tensor *self, int64_t dim, lt_tensor *index, lt_tensor *source,
                               lt_scalar value, lt_scalar alpha, int mode, lt_tensor *out) {
  int d = lt_wrap_dim(op, dim, self->ndim);
  if (d < 0) return NULL;
  if (index->ndim > 1) return lt_error_null("%s: argument 'index' must be 1-D, got %d dims", op, index->ndim);
  lt_dtype dt = self_dtype(self);
  if (mode == LT_CK_IX_ADD && !lt_dtype_is_float(dt) && alpha.type == LT_SCALAR_FLOAT)
    return lt_error_null("%s: argument 'alpha' must be an integer for %s tensors", op, lt_dtype_name(dt));
  int64_t S = self->ndim ? self->sizes[d] : 1;
  lt_tensor *idx = index_arg(op, index, S, d);
  if (!idx) return NULL;
  int64_t n = idx->numel;
  lt_tensor *s = NULL, *r = NULL, *w = NULL;
  if (source) {
    if (lt_meta_check_slice_source(op, self, d, n, source) < 0) goto done;
    if (!(s = source->dtype == dt ? (lt_tensor_retain(source), source) : lt_tensor_clone_as(source, dt))) goto done;
  }
  if (begin_update(op, self, out, self->ndim, self->sizes, &r, &w) < 0) goto done;
  if (n > 0 && w->numel > 0) {
    /* iterate over source's shape: self's with n along dim */
    int nd = self->ndim ? self->ndim : 1;
    int64_t sz[LT_MAX_DIMS];
    memcpy(sz, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    sz[self->ndim ? d : 0] = n;
    lt_ck_ix_geom g;
    geom_zero(&g, nd, sz);
    strides_of(w, nd, g.strides[0]);
    g.out_ixstride = g.strides[0][d];
    g.strides[0][d] = 0;
    if (s) {
      if (s->ndim == self->ndim) strides_of(s, nd, g.strides[1]);
      else g.strides[1][0] = s->ndim ? s->strides[0] : 0;   /* 0-d self, 1-D source */
    }
    g.strides[2][self->ndim ? d : 0] = 1;
    g.ixsize = S;
    w = ix_into(w, op, mode, s, idx, value, alpha, &g);
  }
  r = finish(r, w);
done:
  lt_tensor_release(s);
  lt_tensor_release(idx);
  return r;
}

lt_tensor *lt_cuda_index_add(lt_tensor *self, int64_t dim, lt_tensor *index, lt_tensor *source, lt_scalar alpha,
                             lt_tensor *out) {
  return index_slices("index_add", self, dim, index, source, lt_scalar_none(), alpha, LT_CK_IX_ADD, out);
}

lt_tensor *lt_cuda_index_copy(lt_tensor *self, int64_t dim, lt_tensor *index, lt_tensor *source, lt_tensor *out) {
  return index_slices("index_copy", self, dim, index, source, lt_scalar_none(), lt_scalar_none(), LT_CK_IX_SCATTER, out);
}

lt_tensor *lt_cuda_index_fill(lt_tensor *self, int64_t dim, lt_tensor *index, lt_scalar value, lt_tensor *out) {
  return index_slices("index_fill", self, dim, index, NULL, value, lt_scalar_none(), LT_CK_IX_FILL, out);
}

/* ---- put ---- */

lt_tensor *lt_cuda_put(lt_tensor *self, lt_tensor *index, lt_tensor *source, bool accumulate, lt_tensor *out) {
  const char *op = "put";
  if (source->numel != index->numel)
    return lt_error_null("put: argument 'source' has %lld elements but 'index' has %lld", (long long)source->numel,
                         (long long)index->numel);
  lt_tensor *idx = index_arg(op, index, self->numel, -1);
  if (!idx) return NULL;
  lt_tensor *r = NULL, *w = NULL, *s = lt_tensor_to_dtype_contig(source, self_dtype(self));
  if (!s) goto done;
  if (begin_update(op, self, out, self->ndim, self->sizes, &r, &w) < 0) goto done;
  if (idx->numel > 0) {
    /* flat positions of a contiguous w; else through a contiguous copy */
    lt_tensor *c = lt_tensor_is_contiguous(w) ? (lt_tensor_retain(w), w) : lt_tensor_contiguous(w);
    int64_t m = idx->numel;
    lt_ck_ix_geom g;
    geom_zero(&g, 1, &m);
    g.strides[1][0] = 1;
    g.strides[2][0] = 1;
    g.out_ixstride = 1;
    g.ixsize = self->numel;
    int rc = c ? lt_cuda_ix_launch(op, accumulate ? LT_CK_IX_ADD : LT_CK_IX_SCATTER, c, s, idx, NULL,
                                   lt_scalar_none(), &g) : -1;
    if (rc == 0 && c != w) rc = lt_tensor_copy_(w, c);
    lt_tensor_release(c);
    if (rc < 0) { lt_tensor_release(w); w = NULL; }
  }
  r = finish(r, w);
done:
  lt_tensor_release(s);
  lt_tensor_release(idx);
  return r;
}

/* ---- masked ops ---- */

/* t broadcast to nd/sizes as a contiguous tensor */
static lt_tensor *expand_contig(const char *op, lt_tensor *t, int nd, const int64_t *sizes) {
  int64_t st[LT_MAX_DIMS];
  if (lt_expand_strides(op, t, nd, sizes, st) < 0) return NULL;
  lt_tensor *e = lt_tensor_alias(t, t->offset, nd, sizes, st);
  lt_tensor *c = e ? lt_tensor_contiguous(e) : NULL;
  lt_tensor_release(e);
  return c;
}

lt_tensor *lt_cuda_masked_fill(lt_tensor *self, lt_tensor *mask, lt_scalar value, lt_tensor *out) {
  const char *op = "masked_fill";
  if (lt_meta_check_mask(op, mask) < 0) return NULL;
  int64_t bs[LT_MAX_DIMS], sst[LT_MAX_DIMS], mst[LT_MAX_DIMS];
  int nd = lt_broadcast_shapes(op, self->ndim, self->sizes, mask->ndim, mask->sizes, bs);
  if (nd < 0) return NULL;
  if (out == self && lt_meta_check_inplace_shape(op, self, nd, bs) < 0) return NULL;
  if (lt_expand_strides(op, self, nd, bs, sst) < 0 || lt_expand_strides(op, mask, nd, bs, mst) < 0) return NULL;
  lt_tensor *r = out == self ? (lt_tensor_retain(self), self) : new_result(op, self, out, nd, bs);
  lt_tensor *w = r ? writable(r, self_dtype(self)) : NULL;
  if (!w) { lt_tensor_release(r); return NULL; }
  if (w->numel > 0) {
    uint64_t bits;
    lt_cuda_scalar_bits(value, self_dtype(self), &bits);
    lt_ck_geom g;
    lt_cuda_geom_init(&g, nd, bs);
    memcpy(g.strides[0], w->strides, sizeof(int64_t) * (size_t)nd);
    memcpy(g.strides[1], sst, sizeof(int64_t) * (size_t)nd);
    memcpy(g.strides[2], mst, sizeof(int64_t) * (size_t)nd);
    lt_cuda_ix x;
    int rc = lt_cuda_ix_begin(&x, self, op);
    if (rc == 0)
      rc = lt_cuda_ix_end(&x, x.k->mask_where(w->dtype, lt_tensor_data(w), lt_tensor_data(self), lt_tensor_data(mask),
                                              &bits, &g, x.l.stream));
    if (rc < 0) { lt_tensor_release(w); w = NULL; }
  }
  return finish(r, w);
}

/* the chunk offsets of a contiguous bool mask and its count of trues: the
** scanned counts (a new tensor), NULL on error */
static lt_tensor *mask_counts(const char *op, lt_tensor *m, int64_t *total) {
  int64_t nc = (m->numel + LT_CK_MASK_CHUNK - 1) / LT_CK_MASK_CHUNK + 1;
  lt_tensor *c = lt_tensor_new(LT_INT64, lt_tensor_device(m), 1, &nc);
  if (!c) return NULL;
  lt_cuda_ix x;
  int rc = lt_cuda_ix_begin(&x, m, op);
  if (rc == 0) rc = lt_cuda_ix_end(&x, x.k->mask_count(lt_tensor_data(m), m->numel, lt_tensor_data(c), x.l.stream));
  if (rc == 0) rc = lt_cuda_read_i64(c, nc - 1, total);
  if (rc < 0) { lt_tensor_release(c); return NULL; }
  return c;
}

static int compact(const char *op, int mode, lt_tensor *w, const lt_tensor *src, lt_tensor *m, const lt_tensor *counts,
                   int ndim, const int64_t *sizes) {
  lt_cuda_ix x;
  if (lt_cuda_ix_begin(&x, m, op) < 0) return -1;
  int es = src ? (int)lt_dtype_size((lt_dtype)src->dtype) : 8;
  return lt_cuda_ix_end(&x, x.k->mask_compact(mode, es, lt_tensor_data(w), src ? lt_tensor_data(src) : NULL,
                                              lt_tensor_data(m), m->numel, lt_tensor_data(counts), ndim, sizes,
                                              x.l.stream));
}

lt_tensor *lt_cuda_masked_select(lt_tensor *self, lt_tensor *mask, lt_tensor *out) {
  const char *op = "masked_select";
  if (lt_meta_check_mask(op, mask) < 0) return NULL;
  int64_t bs[LT_MAX_DIMS], n = 0;
  int nd = lt_broadcast_shapes(op, self->ndim, self->sizes, mask->ndim, mask->sizes, bs);
  if (nd < 0) return NULL;
  lt_tensor *m = expand_contig(op, mask, nd, bs);
  lt_tensor *s = m ? expand_contig(op, self, nd, bs) : NULL;
  lt_tensor *counts = s ? mask_counts(op, m, &n) : NULL;
  lt_tensor *r = counts ? new_result(op, self, out, 1, &n) : NULL;
  lt_tensor *w = r ? lt_tensor_new(self_dtype(self), lt_tensor_device(self), 1, &n) : NULL;
  if (w && n > 0 && compact(op, LT_CK_MASK_SELECT, w, s, m, counts, 0, NULL) < 0) { lt_tensor_release(w); w = NULL; }
  lt_tensor_release(counts);
  lt_tensor_release(s);
  lt_tensor_release(m);
  return r ? finish(r, w) : NULL;
}

lt_tensor *lt_cuda_masked_scatter(lt_tensor *self, lt_tensor *mask, lt_tensor *source, lt_tensor *out) {
  const char *op = "masked_scatter";
  if (lt_meta_check_mask(op, mask) < 0) return NULL;
  int64_t bs[LT_MAX_DIMS], need = 0;
  int nd = lt_broadcast_shapes(op, self->ndim, self->sizes, mask->ndim, mask->sizes, bs);
  if (nd < 0) return NULL;
  lt_tensor *m = expand_contig(op, mask, nd, bs);
  lt_tensor *counts = m ? mask_counts(op, m, &need) : NULL;
  lt_tensor *src = NULL, *r = NULL, *w = NULL;
  if (!counts) goto done;
  if (source->numel < need) {
    lt_error("masked_scatter: argument 'source' has %lld elements but the mask has %lld true entries",
             (long long)source->numel, (long long)need);
    goto done;
  }
  if (!(src = lt_tensor_to_dtype_contig(source, self_dtype(self)))) goto done;
  if (begin_update(op, self, out, nd, bs, &r, &w) < 0) goto done;
  if (need > 0) {
    lt_tensor *c = lt_tensor_is_contiguous(w) ? (lt_tensor_retain(w), w) : lt_tensor_contiguous(w);
    int rc = c ? compact(op, LT_CK_MASK_SCATTER, c, src, m, counts, 0, NULL) : -1;
    if (rc == 0 && c != w) rc = lt_tensor_copy_(w, c);
    lt_tensor_release(c);
    if (rc < 0) { lt_tensor_release(w); w = NULL; }
  }
  r = finish(r, w);
done:
  lt_tensor_release(src);
  lt_tensor_release(counts);
  lt_tensor_release(m);
  return r;
}

lt_tensor *lt_cuda_nonzero(lt_tensor *self, lt_tensor *out) {
  const char *op = "nonzero";
  bool refused = false;
  int64_t k = 0;
  lt_tensor *m = lt_cuda_converted(op, self, LT_BOOL, &refused);   /* x != 0, as the copy to bool */
  if (!m && refused) lt_error("%s: the CUDA copy kernel refused the input", op);
  lt_tensor *counts = m ? mask_counts(op, m, &k) : NULL;
  int64_t sz[2] = {k, self->ndim};
  lt_tensor *r = counts ? lt_meta_result(op, out, out ? (lt_dtype)out->dtype : LT_INT64, lt_tensor_device(self), 2, sz)
                        : NULL;
  lt_tensor *w = r ? lt_tensor_new(LT_INT64, lt_tensor_device(self), 2, sz) : NULL;
  if (w && k > 0 && self->ndim > 0 && compact(op, LT_CK_MASK_NONZERO, w, NULL, m, counts, self->ndim, self->sizes) < 0) {
    lt_tensor_release(w);
    w = NULL;
  }
  lt_tensor_release(counts);
  lt_tensor_release(m);
  return r ? finish(r, w) : NULL;
}

/* ---- embedding, its backward, one_hot ---- */

lt_tensor *lt_cuda_embedding(lt_tensor *weight, lt_tensor *indices, int64_t padding_idx) {
  const char *op = "embedding";
  if (weight->ndim != 2)
    return lt_error_null("embedding: argument 'weight' must be 2-D ([num_embeddings, embedding_dim]), got %d-D",
                         weight->ndim);
  if (indices->ndim + 1 > LT_MAX_DIMS) return lt_error_null("embedding: argument 'indices' has too many dims");
  int64_t rows = weight->sizes[0], dd = weight->sizes[1];
  if (lt_meta_padding_row(op, padding_idx, rows) < -1) return NULL;
  if (lt_meta_check_embedding_indices(op, indices) < 0) return NULL;
  lt_tensor *idx = lt_tensor_to_dtype_contig(indices, LT_INT64);
  if (!idx || lt_cuda_check_index(op, idx, rows, 0, 1) < 0) { lt_tensor_release(idx); return NULL; }
  int nd = indices->ndim + 1;
  int64_t sz[LT_MAX_DIMS];
  memcpy(sz, indices->sizes, sizeof(int64_t) * (size_t)indices->ndim);
  sz[nd - 1] = dd;
  lt_tensor *o = lt_tensor_new(self_dtype(weight), lt_tensor_device(weight), nd, sz);
  if (o && o->numel > 0) {
    lt_ck_ix_geom g;
    geom_zero(&g, nd, sz);
    lt_contiguous_strides(nd, sz, g.strides[0]);
    g.strides[1][nd - 1] = weight->strides[1];
    g.in_ixstride = weight->strides[0];
    lt_contiguous_strides(nd - 1, sz, g.strides[2]);
    g.ixsize = rows;
    o = ix_into(o, op, LT_CK_IX_GATHER, weight, idx, lt_scalar_none(), lt_scalar_none(), &g);
  }
  lt_tensor_release(idx);
  return o;
}

lt_tensor *lt_cuda__embedding_backward(lt_tensor *grad, lt_tensor *indices, int64_t num_weights, int64_t padding_idx) {
  const char *op = "embedding_backward";
  if (lt_meta_check_float(op, "grad", grad) < 0) return NULL;
  if (num_weights < 0) return lt_error_null("%s: argument 'num_weights' must be non-negative", op);
  if (grad->ndim != indices->ndim + 1)
    return lt_error_null("%s: argument 'grad' must have one more dim than 'indices' (%d), got %d", op, indices->ndim,
                         grad->ndim);
  for (int i = 0; i < indices->ndim; i++)
    if (grad->sizes[i] != indices->sizes[i])
      return lt_error_null("%s: argument 'grad' does not match the shape of 'indices'", op);
  int64_t pad = lt_meta_padding_row(op, padding_idx, num_weights);
  if (pad < -1) return NULL;
  if (lt_meta_check_embedding_indices(op, indices) < 0) return NULL;
  /* 16-bit floats accumulate in float32, as on the CPU */
  lt_dtype dt = self_dtype(grad), ct = dt == LT_FLOAT64 ? LT_FLOAT64 : LT_FLOAT32;
  int nd = grad->ndim;
  int64_t dd = grad->sizes[nd - 1], sz[2] = {num_weights, dd};
  lt_tensor *idx = lt_tensor_to_dtype_contig(indices, LT_INT64);
  if (!idx || lt_cuda_check_index(op, idx, num_weights, 0, 1) < 0) { lt_tensor_release(idx); return NULL; }
  lt_tensor *g = dt == ct ? (lt_tensor_retain(grad), grad) : lt_tensor_clone_as(grad, ct);
  lt_tensor *o = g ? lt_tensor_new_zeros(ct, lt_tensor_device(grad), 2, sz) : NULL;
  if (o && o->numel > 0 && idx->numel > 0) {
    lt_ck_ix_geom ge;
    geom_zero(&ge, nd, grad->sizes);
    ge.strides[0][nd - 1] = 1;
    ge.out_ixstride = dd;
    memcpy(ge.strides[1], g->strides, sizeof(int64_t) * (size_t)nd);
    lt_contiguous_strides(nd - 1, grad->sizes, ge.strides[2]);
    ge.ixsize = num_weights;
    ge.skip = pad;
    o = ix_into(o, op, LT_CK_IX_ADD, g, idx, lt_scalar_none(), lt_scalar_none(), &ge);
  }
  lt_tensor_release(g);
  lt_tensor_release(idx);
  if (o && ct != dt) {
    lt_tensor *r = lt_tensor_clone_as(o, dt);
    lt_tensor_release(o);
    o = r;
  }
  return o;
}

static int host_int(lt_tensor *t, int64_t *v) {   /* a 0-d integer result, read back */
  if (!t) return -1;
  lt_scalar s = lt_tensor_item(t);
  lt_tensor_release(t);
  if (lt_scalar_is_none(s)) return -1;
  *v = lt_scalar_to_int64(s);
  return 0;
}

lt_tensor *lt_cuda_one_hot(lt_tensor *self, int64_t num_classes) {
  const char *op = "one_hot";
  lt_dtype it = self_dtype(self);
  if (lt_dtype_is_float(it) || it == LT_BOOL)
    return lt_error_null("one_hot: argument 'self' must be an integer (index) tensor, got %s", lt_dtype_name(it));
  if (self->ndim + 1 > LT_MAX_DIMS) return lt_error_null("one_hot: argument 'self' has too many dims");
  if (num_classes < -1 || num_classes == 0)
    return lt_error_null("one_hot: argument 'num_classes' must be positive or -1, got %lld", (long long)num_classes);
  int64_t n = self->numel, lo = 0, hi = 0;
  if (num_classes == -1 && n == 0)
    return lt_error_null("one_hot: can not infer the number of classes from an empty tensor; pass 'num_classes'");
  /* the least and greatest class, through the reductions (a read-back each) */
  if (n > 0 && (host_int(lt_min(self), &lo) < 0 || host_int(lt_max(self), &hi) < 0)) return NULL;
  if (num_classes == -1) num_classes = hi;
  if (n > 0 && (lo < 1 || hi > num_classes))
    return lt_error_null("one_hot: argument 'self' holds %lld, out of range for %lld classes (class values are 1-based)",
                         (long long)(lo < 1 ? lo : hi), (long long)num_classes);
  lt_tensor *v = lt_tensor_to_dtype_contig(self, LT_INT64);
  if (!v) return NULL;
  int nd = self->ndim;
  int64_t sz[LT_MAX_DIMS];
  memcpy(sz, self->sizes, sizeof(int64_t) * (size_t)nd);
  sz[nd] = num_classes;
  lt_tensor *o = lt_tensor_new_zeros(LT_INT64, lt_tensor_device(self), nd + 1, sz);
  if (o && n > 0) {
    int gn = nd ? nd : 1;
    lt_ck_ix_geom g;
    geom_zero(&g, gn, nd ? self->sizes : (const int64_t[]){1});
    lt_contiguous_strides(gn, g.sizes, g.strides[2]);
    for (int i = 0; i < gn; i++) g.strides[0][i] = g.strides[2][i] * num_classes;
    g.out_ixstride = 1;
    g.ixsize = num_classes;
    o = ix_into(o, op, LT_CK_IX_FILL, NULL, v, lt_scalar_int(1), lt_scalar_none(), &g);
  }
  lt_tensor_release(v);
  return o;
}

/* ---- bincount, histc ---- */

lt_tensor *lt_cuda_bincount(lt_tensor *self, lt_tensor *weights, int64_t minlength) {
  const char *op = "bincount";
  if (lt_meta_bincount_check(self, weights, minlength) < 0) return NULL;
  int64_t n = self->numel, mx = -1;
  /* the values as 1-based indices, checked >= 1 on the device (the first negative named) */
  lt_tensor *xi = lt_tensor_clone_as(self, LT_INT64), *one = lt_tensor_wrapped_number(lt_scalar_int(1));
  lt_tensor *x1 = xi && one ? lt_add(xi, one, lt_scalar_int(1)) : NULL;
  lt_tensor *w = NULL, *r = NULL;
  if (!x1 || lt_cuda_check_index(op, x1, INT64_MAX, 0, 3) < 0) goto done;
  /* the length: the greatest value, through the reduction (a read-back) */
  if (n > 0 && host_int(lt_max(xi), &mx) < 0) goto done;
  int64_t len = mx + 1 > minlength ? mx + 1 : minlength;
  /* float32 weights count in float32, every other weight dtype in float64 (as the CPU) */
  lt_dtype odt = !weights ? LT_INT64 : weights->dtype == LT_FLOAT32 ? LT_FLOAT32 : LT_FLOAT64;
  if (!(w = weights ? lt_tensor_clone_as(weights, odt) : lt_tensor_new(LT_INT64, lt_tensor_device(self), 1, &n)))
    goto done;
  if (!weights && lt_tensor_fill_(w, lt_scalar_int(1)) < 0) goto done;
  if ((r = lt_tensor_new_zeros(odt, lt_tensor_device(self), 1, &len)) && n > 0) {
    lt_ck_ix_geom g;
    geom_zero(&g, 1, &n);
    g.strides[1][0] = 1;
    g.strides[2][0] = 1;
    g.out_ixstride = 1;
    g.ixsize = len;
    r = ix_into(r, op, LT_CK_IX_ADD, w, x1, lt_scalar_none(), lt_scalar_none(), &g);
  }
done:
  lt_tensor_release(xi);
  lt_tensor_release(one);
  lt_tensor_release(x1);
  lt_tensor_release(w);
  return r;
}

static int host_double(lt_tensor *t, double *v) {   /* a 0-d result, read back */
  if (!t) return -1;
  lt_scalar s = lt_tensor_item(t);
  lt_tensor_release(t);
  if (lt_scalar_is_none(s)) return -1;
  *v = lt_scalar_to_double(s);
  return 0;
}

lt_tensor *lt_cuda_histc(lt_tensor *self, int64_t bins, lt_scalar min, lt_scalar max, lt_tensor *out) {
  const char *op = "histc";
  lt_dtype dt = self_dtype(self);
  double lo = lt_scalar_to_double(min), hi = lt_scalar_to_double(max);
  if (lt_meta_histc_check(self, bins, lo, hi) < 0) return NULL;
  lt_tensor *x = lt_tensor_clone_as(self, LT_FLOAT64);
  if (!x) return NULL;
  int64_t n = x->numel;
  /* the data's range through the reductions (NaN when one is NaN, as the CPU's) */
  if (lo == hi && n > 0 && (host_double(lt_min(x), &lo) < 0 || host_double(lt_max(x), &hi) < 0)) {
    lt_tensor_release(x);
    return NULL;
  }
  if (lo != lo || hi != hi) lo = hi = NAN;
  if (lo == hi) { lo -= 1; hi += 1; }
  if (!isfinite(lo) || !isfinite(hi)) { lt_tensor_release(x); lt_meta_histc_range(lo, hi); return NULL; }
  lt_tensor *cnt = lt_tensor_new_zeros(LT_FLOAT64, lt_tensor_device(self), 1, &bins);
  int rc = cnt ? 0 : -1;
  if (rc == 0 && n > 0) {
    lt_cuda_ix k;
    rc = lt_cuda_ix_begin(&k, x, op);
    if (rc == 0) rc = lt_cuda_ix_end(&k, k.k->histc(lt_tensor_data(x), n, lo, hi, bins, lt_tensor_data(cnt), k.l.stream));
  }
  lt_tensor_release(x);
  lt_tensor *res = NULL;
  if (rc == 0) {
    if (out) {
      res = lt_tensor_resize_out(op, out, 1, &bins) < 0 || lt_tensor_copy_(out, cnt) < 0 ? NULL : out;
      if (res) lt_tensor_retain(res);
    } else {
      res = lt_tensor_clone_as(cnt, dt);
    }
  }
  lt_tensor_release(cnt);
  return res;
}
