/*
** index.c — indexing kernels: index_select, gather, scatter, index_add,
** masked ops, nonzero, take, put. Index tensors hold 1-based values
** (negative count from the end) and are validated before any write, so a bad
** index never leaves a half-modified tensor.
**
** Moving elements does not depend on the dtype, only on its size: those loops
** are instantiated per element width (1, 2, 4, 8, 16 bytes: complex128 moves
** as a pair of words). Only the accumulating ops (scatter_add, index_add, put
** with accumulate) are per dtype, the complex ones included.
*/
#include <complex.h>
#include <string.h>
#include <stdlib.h>
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "cpu/parallel.h"
#include "meta/meta.h"
#include "meta/index.h"

/* a 16-byte element (complex128), moved whole */
typedef struct el16 { uint64_t w[2]; } el16;
/* one element's bytes, of any dtype: a fill value converted to self's dtype */
typedef struct elbits { _Alignas(16) uint64_t w[2]; } elbits;

/* the complex dtypes of the accumulating loops: _(ENUM, C complex type) */
#define IX_COMPLEX(_) _(LT_COMPLEX64, float _Complex) _(LT_COMPLEX128, double _Complex)

/* run BODY with E the unsigned type of the element width `es` */
#define BY_WIDTH(es, ...) do { \
    switch (es) { \
      case 1: { typedef uint8_t E; __VA_ARGS__ } break; \
      case 2: { typedef uint16_t E; __VA_ARGS__ } break; \
      case 4: { typedef uint32_t E; __VA_ARGS__ } break; \
      case 16: { typedef el16 E; __VA_ARGS__ } break; \
      default: { typedef uint64_t E; __VA_ARGS__ } break; \
    } } while (0)

/* int64 contiguous copy of an index argument (int32 accepted), or NULL. The dispatcher
** put the index on self's backend (it is in the call's keyset), so its data is readable here. */
static lt_tensor *index_arg(const char *op, const char *name, lt_tensor *index) {
  if (lt_meta_check_index_dtype(op, name, index) < 0) return NULL;
  return lt_tensor_to_dtype_contig(index, LT_INT64);
}

/* every value a valid 1-based index into a dim of `size` (dim < 0: a flat index) */
static int check_indices(const char *op, const int64_t *v, int64_t n, int64_t size, int dim) {
  for (int64_t i = 0; i < n; i++)
    if (!lt_meta_index_ok(v[i], size)) return lt_meta_index_range(op, v[i], size, dim);
  return 0;
}

static inline int64_t norm_index(int64_t x, int64_t size) { return x > 0 ? x - 1 : x + size; }

/* The buffer a kernel writes into: r itself when contiguous and of dtype dt,
** else a contiguous scratch tensor that finish() copies into r. */
static lt_tensor *work_buffer(lt_tensor *r, lt_dtype dt) {
  if (r->dtype == dt && lt_tensor_is_contiguous(r)) { lt_tensor_retain(r); return r; }
  return lt_tensor_new(dt, lt_tensor_device(r), r->ndim, r->sizes);
}

/* copy w into r when they differ, release w; returns r or NULL (r released) */
static lt_tensor *finish(lt_tensor *r, lt_tensor *w) {
  int rc = 0;
  if (w != r) rc = lt_tensor_copy_(r, w);
  lt_tensor_release(w);
  if (rc < 0) { lt_tensor_release(r); return NULL; }
  return r;
}

/*
** For ops that return a modified copy of self (or modify self in place, when
** the generated in-place kernel passes out == self): *rp gets the result
** (shape `ndim/sizes`, usually self's), *wp a contiguous buffer of self's dtype
** holding self's values (broadcast) that the op modifies; finish(*rp, *wp).
*/
static int begin_update(const char *op, lt_tensor *self, lt_tensor *out, int ndim, const int64_t *sizes,
                        lt_tensor **rp, lt_tensor **wp) {
  lt_tensor *r;
  if (out == self && lt_tensor_same_shape(self, out) && ndim == self->ndim &&
      memcmp(sizes, self->sizes, sizeof(int64_t) * (size_t)ndim) == 0) {
    r = self;
    lt_tensor_retain(r);
  } else {
    r = lt_meta_result(op, out == self ? NULL : out, out && out != self ? (lt_dtype)out->dtype : (lt_dtype)self->dtype,
                       lt_tensor_device(self), ndim, sizes);
    if (out == self && r) {
      lt_tensor_release(r);
      (void)lt_meta_check_inplace_shape(op, self, ndim, sizes);   /* the shapes differ: the error */
      return -1;
    }
    if (!r) return -1;
  }
  lt_tensor *w = work_buffer(r, (lt_dtype)self->dtype);
  if (!w || (w != self && lt_tensor_copy_(w, self) < 0)) {
    lt_tensor_release(w);
    lt_tensor_release(r);
    return -1;
  }
  *rp = r;
  *wp = w;
  return 0;
}

/* value converted to dtype dt, as raw bits in *bits */
/* (converted as fill_ does: integers saturate from floats) */
static int scalar_bits(const char *op, lt_scalar v, lt_dtype dt, elbits *bits) {
  memset(bits, 0, sizeof *bits);
  if (v.type == LT_SCALAR_COMPLEX) {
    if (!lt_dtype_is_complex(dt))
      return lt_error("%s: argument 'value' is complex but self is %s (its imaginary part would be lost)", op,
                      lt_dtype_name(dt));
    lt_dtype_store_complex(dt, bits->w, v.v.f, v.im);
  } else if (v.type == LT_SCALAR_FLOAT) lt_dtype_store_double(dt, bits->w, v.v.f);
  else lt_dtype_store_int64(dt, bits->w, v.v.i);
  return 0;
}

static inline void put_bits(char *p, elbits bits, size_t es) {
  memcpy(p, bits.w, es);   /* scalar_bits stored the value at the start of `bits` */
}

/* ---- index_select ---- */

typedef struct sel_ctx {
  const char *src; char *dst;
  const int64_t *idx;
  int64_t n, S, inner;      /* index length, self's size along dim, elements after dim */
  size_t es;
} sel_ctx;

static void sel_rows(void *vc, int64_t begin, int64_t end) {
  sel_ctx *c = vc;
  int64_t rb = c->inner * (int64_t)c->es;
  if (c->inner == 1) {   /* single elements: a typed move beats memcpy of 1-8 bytes */
    BY_WIDTH(c->es, const E *s = (const E *)c->src; E *d = (E *)c->dst;
             for (int64_t r = begin; r < end; r++)
               d[r] = s[(r / c->n) * c->S + norm_index(c->idx[r % c->n], c->S)];);
    return;
  }
  for (int64_t r = begin; r < end; r++) {
    int64_t o = r / c->n, k = r % c->n;
    int64_t v = norm_index(c->idx[k], c->S);
    memcpy(c->dst + r * rb, c->src + (o * c->S + v) * rb, (size_t)rb);
  }
}

lt_tensor *lt_cpu_index_select(lt_tensor *self, int64_t dim, lt_tensor *index, lt_tensor *out) {
  int d = lt_wrap_dim("index_select", dim, self->ndim);
  if (d < 0) return NULL;
  if (index->ndim > 1) return lt_error_null("index_select: argument 'index' must be 1-D, got %d dims", index->ndim);
  lt_tensor *idx = index_arg("index_select", "index", index);
  if (!idx) return NULL;
  int64_t S = self->ndim ? self->sizes[d] : 1, n = idx->numel;
  if (check_indices("index_select", lt_tensor_data(idx), n, S, d) < 0) { lt_tensor_release(idx); return NULL; }
  int64_t ns[LT_MAX_DIMS];
  int nd = self->ndim;
  memcpy(ns, self->sizes, sizeof(int64_t) * (size_t)nd);
  if (nd) ns[d] = n;
  else if (index->ndim == 1) { ns[0] = n; nd = 1; }
  lt_tensor *r = lt_meta_result("index_select", out, out ? (lt_dtype)out->dtype : (lt_dtype)self->dtype,
                                lt_tensor_device(self), nd, ns);
  lt_tensor *src = r ? lt_tensor_contiguous(self) : NULL;
  lt_tensor *w = src ? work_buffer(r, (lt_dtype)self->dtype) : NULL;
  if (!w) { lt_tensor_release(src); lt_tensor_release(r); lt_tensor_release(idx); return NULL; }
  sel_ctx c;
  c.src = lt_tensor_data(src); c.dst = lt_tensor_data(w); c.idx = lt_tensor_data(idx);
  c.n = n; c.S = S; c.es = lt_dtype_size((lt_dtype)self->dtype);
  c.inner = 1;
  for (int i = d + 1; i < self->ndim; i++) c.inner *= self->sizes[i];
  int64_t outer = 1;
  for (int i = 0; i < d; i++) outer *= self->sizes[i];
  if (n > 0 && c.inner > 0) lt_parallel_for(outer * n, LT_GRAIN_ELEMENTWISE / c.inner + 1, sel_rows, &c);
  lt_tensor_release(src);
  lt_tensor_release(idx);
  return finish(r, w);
}

/* ---- gather / scatter: walk the index tensor's coordinates ---- */

typedef struct walk {
  int nd, d;                      /* dims of the index (>= 1), the indexed dim */
  int64_t sizes[LT_MAX_DIMS];     /* the index's shape */
  int64_t dst_st[LT_MAX_DIMS];    /* strides of the tensor addressed by the index value along d */
  int64_t oth_st[LT_MAX_DIMS];    /* strides of the tensor addressed by the same coordinates */
  int64_t S;                      /* size of the indexed dim */
  const int64_t *idx;             /* contiguous over sizes */
  char *dst; char *oth;           /* element 0 of each */
  size_t es;
  int mode;                       /* 0 gather: oth = dst[idx]; 1 scatter: dst[idx] = oth; 2 value; 3 add */
  elbits bits;
  lt_dtype dt;
} walk;

/* set up the walk over index's shape; t0/t1 may be 0-d (treated as [1]) */
static void walk_init(walk *w, const lt_tensor *index, int d, const lt_tensor *dst, const lt_tensor *oth) {
  w->nd = index->ndim ? index->ndim : 1;
  w->d = d;
  for (int i = 0; i < w->nd; i++) {
    w->sizes[i] = index->ndim ? index->sizes[i] : 1;
    w->dst_st[i] = dst->ndim ? dst->strides[i] : 0;
    w->oth_st[i] = oth && oth->ndim ? oth->strides[i] : 0;
  }
  w->S = dst->ndim ? dst->sizes[d] : 1;
}

#define SCATTER_ADD_CASE(E_, T, CT, NAME) \
  case E_: { T *pd = (T *)db; const T *ps = (const T *)ob; \
    for (int64_t j = 0; j < inner; j++) { \
      T *q = pd + j * dst_in + norm_index(ix[j], w->S) * dst_d; \
      *q = LT_FROMC_##NAME((CT)LT_TOC_##NAME(*q) + (CT)LT_TOC_##NAME(ps[j * oth_in])); \
    } } break;
#define SCATTER_ADD_CX(E_, T) \
  case E_: { T *pd = (T *)db; const T *ps = (const T *)ob; \
    for (int64_t j = 0; j < inner; j++) pd[j * dst_in + norm_index(ix[j], w->S) * dst_d] += ps[j * oth_in]; } break;

static void walk_rows(void *vc, int64_t begin, int64_t end) {
  walk *w = vc;
  int last = w->nd - 1;
  int64_t inner = w->sizes[last];
  int64_t es = (int64_t)w->es;
  int64_t dst_in = last == w->d ? 0 : w->dst_st[last], oth_in = w->oth_st[last], dst_d = w->dst_st[w->d];
  for (int64_t r = begin; r < end; r++) {
    int64_t doff = 0, ooff = 0, rem = r;
    for (int i = last - 1; i >= 0; i--) {
      int64_t c = rem % w->sizes[i];
      rem /= w->sizes[i];
      if (i != w->d) doff += c * w->dst_st[i];
      ooff += c * w->oth_st[i];
    }
    const int64_t *ix = w->idx + r * inner;
    char *db = w->dst + doff * es, *ob = w->oth + ooff * es;
    switch (w->mode) {
      case 0:
        BY_WIDTH(w->es, for (int64_t j = 0; j < inner; j++)
          ((E *)ob)[j * oth_in] = ((const E *)db)[j * dst_in + norm_index(ix[j], w->S) * dst_d];);
        break;
      case 1:
        BY_WIDTH(w->es, for (int64_t j = 0; j < inner; j++)
          ((E *)db)[j * dst_in + norm_index(ix[j], w->S) * dst_d] = ((const E *)ob)[j * oth_in];);
        break;
      case 2:
        for (int64_t j = 0; j < inner; j++)
          put_bits(db + (j * dst_in + norm_index(ix[j], w->S) * dst_d) * es, w->bits, w->es);
        break;
      default:
        switch (w->dt) { LT_FORALL_DTYPES(SCATTER_ADD_CASE) IX_COMPLEX(SCATTER_ADD_CX) default: break; }
        break;
    }
  }
}

static int64_t walk_rows_count(const walk *w) {
  int64_t n = 1;
  for (int i = 0; i < w->nd - 1; i++) n *= w->sizes[i];
  return n;
}

#define check_index_shape lt_meta_check_index_shape

lt_tensor *lt_cpu_gather(lt_tensor *self, int64_t dim, lt_tensor *index, lt_tensor *out) {
  int d = lt_wrap_dim("gather", dim, self->ndim);
  if (d < 0) return NULL;
  if (check_index_shape("gather", index, self, d, "self") < 0) return NULL;
  lt_tensor *idx = index_arg("gather", "index", index);
  if (!idx) return NULL;
  int64_t S = self->ndim ? self->sizes[d] : 1;
  if (check_indices("gather", lt_tensor_data(idx), idx->numel, S, d) < 0) { lt_tensor_release(idx); return NULL; }
  lt_tensor *r = lt_meta_result("gather", out, out ? (lt_dtype)out->dtype : (lt_dtype)self->dtype, lt_tensor_device(self),
                                index->ndim, index->sizes);
  lt_tensor *w = r ? work_buffer(r, (lt_dtype)self->dtype) : NULL;
  if (!w) { lt_tensor_release(r); lt_tensor_release(idx); return NULL; }
  if (idx->numel > 0) {
    walk k;
    walk_init(&k, idx, d, self, w);
    k.idx = lt_tensor_data(idx);
    k.dst = lt_tensor_data(self);
    k.oth = lt_tensor_data(w);
    k.es = lt_dtype_size((lt_dtype)self->dtype);
    k.mode = 0;
    lt_parallel_for(walk_rows_count(&k), LT_GRAIN_ELEMENTWISE / k.sizes[k.nd - 1] + 1, walk_rows, &k);
  }
  lt_tensor_release(idx);
  return finish(r, w);
}

/* scatter, scatter with a value, scatter_add: mode 1, 2, 3 */
static lt_tensor *scatter_common(const char *op, lt_tensor *self, int64_t dim, lt_tensor *index, lt_tensor *src,
                                 lt_scalar value, int mode, lt_tensor *out) {
  int d = lt_wrap_dim(op, dim, self->ndim);
  if (d < 0) return NULL;
  if (check_index_shape(op, index, self, d, "self") < 0) return NULL;
  if (src && src->ndim == 0 && index->ndim > 0 && mode == 1) {   /* a number as src */
    value = lt_tensor_item_complex(src);
    if (lt_scalar_is_none(value)) return NULL;
    mode = 2;
    src = NULL;
  }
  if (src && check_index_shape(op, index, src, -1, "src") < 0) return NULL;
  elbits bits = {{0, 0}};
  if (mode == 2 && scalar_bits(op, value, (lt_dtype)self->dtype, &bits) < 0) return NULL;
  lt_tensor *idx = index_arg(op, "index", index);
  if (!idx) return NULL;
  int64_t S = self->ndim ? self->sizes[d] : 1;
  if (check_indices(op, lt_tensor_data(idx), idx->numel, S, d) < 0) { lt_tensor_release(idx); return NULL; }
  lt_tensor *s = NULL;
  if (src && !(s = lt_tensor_to_dtype_contig(src, (lt_dtype)self->dtype))) { lt_tensor_release(idx); return NULL; }
  lt_tensor *r, *w;
  if (begin_update(op, self, out, self->ndim, self->sizes, &r, &w) < 0) {
    lt_tensor_release(s);
    lt_tensor_release(idx);
    return NULL;
  }
  if (idx->numel > 0) {
    walk k;
    walk_init(&k, idx, d, w, s);
    k.idx = lt_tensor_data(idx);
    k.dst = lt_tensor_data(w);
    k.oth = s ? lt_tensor_data(s) : NULL;
    k.es = lt_dtype_size((lt_dtype)self->dtype);
    k.mode = mode;
    k.bits = bits;
    k.dt = (lt_dtype)self->dtype;
    /* rows along dims other than d never collide; with d the last dim they are
    ** whole slices, but with d earlier two rows can hit one element: serial then */
    int64_t rows = walk_rows_count(&k);
    if (d == k.nd - 1)
      lt_parallel_for(rows, LT_GRAIN_ELEMENTWISE / k.sizes[k.nd - 1] + 1, walk_rows, &k);
    else
      walk_rows(&k, 0, rows);
  }
  lt_tensor_release(s);
  lt_tensor_release(idx);
  return finish(r, w);
}

lt_tensor *lt_cpu_scatter(lt_tensor *self, int64_t dim, lt_tensor *index, lt_tensor *src, lt_tensor *out) {
  return scatter_common("scatter", self, dim, index, src, lt_scalar_none(), 1, out);
}

lt_tensor *lt_cpu_scatter_value(lt_tensor *self, int64_t dim, lt_tensor *index, lt_scalar value, lt_tensor *out) {
  return scatter_common("scatter", self, dim, index, NULL, value, 2, out);
}

lt_tensor *lt_cpu_scatter_add(lt_tensor *self, int64_t dim, lt_tensor *index, lt_tensor *src, lt_tensor *out) {
  if (src->ndim == 0 && index->ndim > 0)
    return lt_error_null("scatter_add: argument 'src' must be a tensor with index's dims, got a 0-d tensor");
  return scatter_common("scatter_add", self, dim, index, src, lt_scalar_none(), 3, out);
}

/* ---- index_add / index_copy / index_fill: slices along dim ---- */

typedef struct slice_ctx {
  char *dst; const char *src;
  const int64_t *idx;
  int64_t n, S, inner;
  size_t es;
  int mode;             /* 0 copy, 1 fill, 2 add */
  elbits bits;
  lt_dtype dt;
  double alpha_f; int64_t alpha_i;
  double alpha_im;      /* a complex alpha's imaginary part (complex self only) */
} slice_ctx;

#define AXPY_CASE(E_, T, CT, NAME) \
  case E_: { T *pd = (T *)d; const T *ps = (const T *)s; \
    CT a = lt_dtype_is_float(E_) ? (CT)c->alpha_f : (CT)c->alpha_i; \
    for (int64_t j = 0; j < c->inner; j++) \
      pd[j] = LT_FROMC_##NAME((CT)LT_TOC_##NAME(pd[j]) + a * (CT)LT_TOC_##NAME(ps[j])); } break;
#define AXPY_CX(E_, T) \
  case E_: { T *pd = (T *)d; const T *ps = (const T *)s; \
    T a = (T)(c->alpha_f + c->alpha_im * _Complex_I); \
    for (int64_t j = 0; j < c->inner; j++) pd[j] += a * ps[j]; } break;

/* one outer block at a time: slices of one outer block never collide with another's */
static void slice_outer(void *vc, int64_t begin, int64_t end) {
  slice_ctx *c = vc;
  int64_t rb = c->inner * (int64_t)c->es;
  for (int64_t o = begin; o < end; o++) {
    for (int64_t k = 0; k < c->n; k++) {
      int64_t v = norm_index(c->idx[k], c->S);
      char *d = c->dst + (o * c->S + v) * rb;
      const char *s = c->src ? c->src + (o * c->n + k) * rb : NULL;
      if (c->mode == 0) memcpy(d, s, (size_t)rb);
      else if (c->mode == 1) {
        BY_WIDTH(c->es, E val; memcpy(&val, &c->bits, sizeof val);
                 for (int64_t j = 0; j < c->inner; j++) ((E *)d)[j] = val;);
      } else {
        switch (c->dt) { LT_FORALL_DTYPES(AXPY_CASE) IX_COMPLEX(AXPY_CX) default: break; }
      }
    }
  }
}

static lt_tensor *index_slices(const char *op, lt_tensor *self, int64_t dim, lt_tensor *index, lt_tensor *source,
                               lt_scalar value, lt_scalar alpha, int mode, lt_tensor *out) {
  int d = lt_wrap_dim(op, dim, self->ndim);
  if (d < 0) return NULL;
  if (index->ndim > 1) return lt_error_null("%s: argument 'index' must be 1-D, got %d dims", op, index->ndim);
  lt_dtype dt = (lt_dtype)self->dtype;
  slice_ctx c;
  memset(&c, 0, sizeof c);
  c.mode = mode;
  c.dt = dt;
  if (mode == 1 && scalar_bits(op, value, dt, &c.bits) < 0) return NULL;
  if (mode == 2) {
    if (!lt_dtype_is_float(dt) && alpha.type == LT_SCALAR_FLOAT)
      return lt_error_null("%s: argument 'alpha' must be an integer for %s tensors", op, lt_dtype_name(dt));
    if (alpha.type == LT_SCALAR_COMPLEX && !lt_dtype_is_complex(dt))
      return lt_error_null("%s: argument 'alpha' is complex but self is %s", op, lt_dtype_name(dt));
    c.alpha_f = lt_scalar_to_double(alpha);
    c.alpha_i = alpha.type == LT_SCALAR_FLOAT || alpha.type == LT_SCALAR_COMPLEX ? 0 : alpha.v.i;
    c.alpha_im = alpha.type == LT_SCALAR_COMPLEX ? alpha.im : 0;
  }
  lt_tensor *idx = index_arg(op, "index", index);
  if (!idx) return NULL;
  int64_t S = self->ndim ? self->sizes[d] : 1, n = idx->numel;
  if (check_indices(op, lt_tensor_data(idx), n, S, d) < 0) { lt_tensor_release(idx); return NULL; }
  lt_tensor *src = NULL;
  if (source) {
    if (lt_meta_check_slice_source(op, self, d, n, source) < 0) { lt_tensor_release(idx); return NULL; }
    if (!(src = lt_tensor_to_dtype_contig(source, dt))) { lt_tensor_release(idx); return NULL; }
  }
  lt_tensor *r, *w;
  if (begin_update(op, self, out, self->ndim, self->sizes, &r, &w) < 0) {
    lt_tensor_release(src);
    lt_tensor_release(idx);
    return NULL;
  }
  c.dst = lt_tensor_data(w);
  c.src = src ? lt_tensor_data(src) : NULL;
  c.idx = lt_tensor_data(idx);
  c.n = n; c.S = S; c.es = lt_dtype_size(dt);
  c.inner = 1;
  for (int i = d + 1; i < self->ndim; i++) c.inner *= self->sizes[i];
  int64_t outer = 1;
  for (int i = 0; i < d; i++) outer *= self->sizes[i];
  if (n > 0 && c.inner > 0)
    lt_parallel_for(outer, LT_GRAIN_ELEMENTWISE / (n * c.inner) + 1, slice_outer, &c);
  lt_tensor_release(src);
  lt_tensor_release(idx);
  return finish(r, w);
}

lt_tensor *lt_cpu_index_add(lt_tensor *self, int64_t dim, lt_tensor *index, lt_tensor *source, lt_scalar alpha,
                            lt_tensor *out) {
  return index_slices("index_add", self, dim, index, source, lt_scalar_none(), alpha, 2, out);
}

lt_tensor *lt_cpu_index_copy(lt_tensor *self, int64_t dim, lt_tensor *index, lt_tensor *source, lt_tensor *out) {
  return index_slices("index_copy", self, dim, index, source, lt_scalar_none(), lt_scalar_none(), 0, out);
}

lt_tensor *lt_cpu_index_fill(lt_tensor *self, int64_t dim, lt_tensor *index, lt_scalar value, lt_tensor *out) {
  return index_slices("index_fill", self, dim, index, NULL, value, lt_scalar_none(), 1, out);
}

/* ---- masked ops ---- */

#define check_mask lt_meta_check_mask

/* t broadcast to the shape, as a contiguous tensor (t itself, retained, when it already is) */
static lt_tensor *expand_contig(const char *op, lt_tensor *t, int nd, const int64_t *sizes) {
  int64_t st[LT_MAX_DIMS];
  if (lt_expand_strides(op, t, nd, sizes, st) < 0) return NULL;
  lt_tensor *e = lt_tensor_alias(t, t->offset, nd, sizes, st);
  if (!e) return NULL;
  lt_tensor *c = lt_tensor_contiguous(e);
  lt_tensor_release(e);
  return c;
}

typedef struct mfill_ctx { char *dst; const bool *m; elbits bits; size_t es; } mfill_ctx;

static void mfill_range(void *vc, int64_t begin, int64_t end) {
  mfill_ctx *c = vc;
  BY_WIDTH(c->es, E val; memcpy(&val, &c->bits, sizeof val); E *p = (E *)c->dst;
           for (int64_t i = begin; i < end; i++) if (c->m[i]) p[i] = val;);
}

lt_tensor *lt_cpu_masked_fill(lt_tensor *self, lt_tensor *mask, lt_scalar value, lt_tensor *out) {
  if (check_mask("masked_fill", mask) < 0) return NULL;
  elbits bits;
  if (scalar_bits("masked_fill", value, (lt_dtype)self->dtype, &bits) < 0) return NULL;
  int64_t bs[LT_MAX_DIMS];
  int nd = lt_broadcast_shapes("masked_fill", self->ndim, self->sizes, mask->ndim, mask->sizes, bs);
  if (nd < 0) return NULL;
  lt_tensor *m = expand_contig("masked_fill", mask, nd, bs);
  if (!m) return NULL;
  lt_tensor *r, *w;
  if (begin_update("masked_fill", self, out, nd, bs, &r, &w) < 0) { lt_tensor_release(m); return NULL; }
  mfill_ctx c = {lt_tensor_data(w), lt_tensor_data(m), bits, lt_dtype_size((lt_dtype)self->dtype)};
  lt_parallel_for(w->numel, LT_GRAIN_ELEMENTWISE, mfill_range, &c);
  lt_tensor_release(m);
  return finish(r, w);
}

static int64_t count_true(const bool *m, int64_t n) {
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) k += m[i];
  return k;
}

lt_tensor *lt_cpu_masked_select(lt_tensor *self, lt_tensor *mask, lt_tensor *out) {
  if (check_mask("masked_select", mask) < 0) return NULL;
  int64_t bs[LT_MAX_DIMS];
  int nd = lt_broadcast_shapes("masked_select", self->ndim, self->sizes, mask->ndim, mask->sizes, bs);
  if (nd < 0) return NULL;
  lt_tensor *m = expand_contig("masked_select", mask, nd, bs);
  lt_tensor *s = m ? expand_contig("masked_select", self, nd, bs) : NULL;
  if (!s) { lt_tensor_release(m); return NULL; }
  const bool *mb = lt_tensor_data(m);
  int64_t n = count_true(mb, m->numel);
  lt_tensor *r = lt_meta_result("masked_select", out, out ? (lt_dtype)out->dtype : (lt_dtype)self->dtype,
                                lt_tensor_device(self), 1, &n);
  lt_tensor *w = r ? work_buffer(r, (lt_dtype)self->dtype) : NULL;
  if (!w) { lt_tensor_release(r); lt_tensor_release(s); lt_tensor_release(m); return NULL; }
  const char *sp = lt_tensor_data(s);
  char *dp = lt_tensor_data(w);
  int64_t total = m->numel;
  BY_WIDTH(lt_dtype_size((lt_dtype)self->dtype), int64_t k = 0;
           for (int64_t i = 0; i < total; i++) if (mb[i]) ((E *)dp)[k++] = ((const E *)sp)[i];);
  lt_tensor_release(s);
  lt_tensor_release(m);
  return finish(r, w);
}

lt_tensor *lt_cpu_masked_scatter(lt_tensor *self, lt_tensor *mask, lt_tensor *source, lt_tensor *out) {
  if (check_mask("masked_scatter", mask) < 0) return NULL;
  int64_t bs[LT_MAX_DIMS];
  int nd = lt_broadcast_shapes("masked_scatter", self->ndim, self->sizes, mask->ndim, mask->sizes, bs);
  if (nd < 0) return NULL;
  lt_tensor *m = expand_contig("masked_scatter", mask, nd, bs);
  if (!m) return NULL;
  const bool *mb = lt_tensor_data(m);
  int64_t need = count_true(mb, m->numel);
  if (source->numel < need) {
    lt_tensor_release(m);
    return lt_error_null("masked_scatter: argument 'source' has %lld elements but the mask has %lld true entries",
                         (long long)source->numel, (long long)need);
  }
  lt_tensor *src = lt_tensor_to_dtype_contig(source, (lt_dtype)self->dtype);
  if (!src) { lt_tensor_release(m); return NULL; }
  lt_tensor *r, *w;
  if (begin_update("masked_scatter", self, out, nd, bs, &r, &w) < 0) {
    lt_tensor_release(src);
    lt_tensor_release(m);
    return NULL;
  }
  const char *sp = lt_tensor_data(src);
  char *dp = lt_tensor_data(w);
  int64_t total = m->numel;
  BY_WIDTH(lt_dtype_size((lt_dtype)self->dtype), int64_t k = 0;
           for (int64_t i = 0; i < total; i++) if (mb[i]) ((E *)dp)[i] = ((const E *)sp)[k++];);
  lt_tensor_release(src);
  lt_tensor_release(m);
  return finish(r, w);
}

/* ---- nonzero ---- */

#define NZ_MARK(E_, T, CT, NAME) \
  case E_: { const T *p = (const T *)data; \
    for (int64_t i = 0; i < n; i++) flags[i] = (CT)LT_TOC_##NAME(p[i]) != (CT)0; } break;
#define NZ_MARK_CX(E_, T) \
  case E_: { const T *p = (const T *)data; for (int64_t i = 0; i < n; i++) flags[i] = p[i] != 0; } break;

lt_tensor *lt_cpu_nonzero(lt_tensor *self, lt_tensor *out) {
  lt_tensor *c = lt_tensor_contiguous(self);
  if (!c) return NULL;
  int64_t n = c->numel;
  bool *flags = malloc((size_t)(n > 0 ? n : 1));
  if (!flags) { lt_tensor_release(c); return lt_error_null("nonzero: out of memory"); }
  const void *data = lt_tensor_data(c);
  switch ((lt_dtype)c->dtype) { LT_FORALL_DTYPES(NZ_MARK) IX_COMPLEX(NZ_MARK_CX) default: break; }
  int64_t k = count_true(flags, n);
  int nd = self->ndim;
  int64_t sz[2] = {k, nd};
  lt_tensor *r = lt_meta_result("nonzero", out, out ? (lt_dtype)out->dtype : LT_INT64, lt_tensor_device(self), 2, sz);
  lt_tensor *w = r ? work_buffer(r, LT_INT64) : NULL;
  if (!w) { lt_tensor_release(r); free(flags); lt_tensor_release(c); return NULL; }
  int64_t *o = lt_tensor_data(w);
  int64_t coord[LT_MAX_DIMS] = {0};
  for (int64_t i = 0; i < n; i++) {
    if (flags[i]) {
      for (int j = 0; j < nd; j++) *o++ = coord[j] + 1;
    }
    for (int j = nd - 1; j >= 0; j--) {
      if (++coord[j] < self->sizes[j]) break;
      coord[j] = 0;
    }
  }
  free(flags);
  lt_tensor_release(c);
  return finish(r, w);
}

/* ---- take / put: flat row-major positions ---- */

lt_tensor *lt_cpu_take(lt_tensor *self, lt_tensor *index, lt_tensor *out) {
  lt_tensor *idx = index_arg("take", "index", index);
  if (!idx) return NULL;
  const int64_t *iv = lt_tensor_data(idx);
  int64_t N = self->numel;
  if (check_indices("take", iv, idx->numel, N, -1) < 0) { lt_tensor_release(idx); return NULL; }
  lt_tensor *r = lt_meta_result("take", out, out ? (lt_dtype)out->dtype : (lt_dtype)self->dtype, lt_tensor_device(self),
                                index->ndim, index->sizes);
  lt_tensor *s = r ? lt_tensor_contiguous(self) : NULL;
  lt_tensor *w = s ? work_buffer(r, (lt_dtype)self->dtype) : NULL;
  if (!w) { lt_tensor_release(s); lt_tensor_release(r); lt_tensor_release(idx); return NULL; }
  const char *sp = lt_tensor_data(s);
  char *dp = lt_tensor_data(w);
  int64_t m = idx->numel;
  BY_WIDTH(lt_dtype_size((lt_dtype)self->dtype),
           for (int64_t i = 0; i < m; i++) ((E *)dp)[i] = ((const E *)sp)[norm_index(iv[i], N)];);
  lt_tensor_release(s);
  lt_tensor_release(idx);
  return finish(r, w);
}

#define PUT_ADD_CASE(E_, T, CT, NAME) \
  case E_: { T *pd = (T *)dp; const T *ps = (const T *)sp; \
    for (int64_t i = 0; i < m; i++) { \
      T *q = pd + norm_index(iv[i], N); \
      *q = LT_FROMC_##NAME((CT)LT_TOC_##NAME(*q) + (CT)LT_TOC_##NAME(ps[i])); \
    } } break;
#define PUT_ADD_CX(E_, T) \
  case E_: { T *pd = (T *)dp; const T *ps = (const T *)sp; \
    for (int64_t i = 0; i < m; i++) pd[norm_index(iv[i], N)] += ps[i]; } break;

lt_tensor *lt_cpu_put(lt_tensor *self, lt_tensor *index, lt_tensor *source, bool accumulate, lt_tensor *out) {
  if (source->numel != index->numel)
    return lt_error_null("put: argument 'source' has %lld elements but 'index' has %lld", (long long)source->numel,
                         (long long)index->numel);
  lt_tensor *idx = index_arg("put", "index", index);
  if (!idx) return NULL;
  const int64_t *iv = lt_tensor_data(idx);
  int64_t N = self->numel;
  if (check_indices("put", iv, idx->numel, N, -1) < 0) { lt_tensor_release(idx); return NULL; }
  lt_tensor *src = lt_tensor_to_dtype_contig(source, (lt_dtype)self->dtype);
  if (!src) { lt_tensor_release(idx); return NULL; }
  lt_tensor *r, *w;
  if (begin_update("put", self, out, self->ndim, self->sizes, &r, &w) < 0) {
    lt_tensor_release(src);
    lt_tensor_release(idx);
    return NULL;
  }
  char *dp = lt_tensor_data(w);
  const char *sp = lt_tensor_data(src);
  int64_t m = idx->numel;
  size_t es = lt_dtype_size((lt_dtype)self->dtype);
  if (accumulate) {
    switch ((lt_dtype)self->dtype) { LT_FORALL_DTYPES(PUT_ADD_CASE) IX_COMPLEX(PUT_ADD_CX) default: break; }
  } else {
    BY_WIDTH(es, for (int64_t i = 0; i < m; i++) ((E *)dp)[norm_index(iv[i], N)] = ((const E *)sp)[i];);
  }
  lt_tensor_release(src);
  lt_tensor_release(idx);
  return finish(r, w);
}
