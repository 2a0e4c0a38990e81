/*
** sort.c — the CUDA kernels of sort, argsort, topk, kthvalue, median and
** nanmedian (along a dim and of everything), mode and unique (flat), over
** src/cuda/kernels/sort.cu.
**
** Every op sorts rows: the input with the dim moved last, copied contiguous
** (the copy kernel), is sorted row by row (stable, NaN largest, the CPU's
** order), and the result is either copied back through a permuted view
** (sort, argsort, topk: the first k of a row sorted descending for the
** largest) or picked per row (kthvalue, median, nanmedian, mode). unique
** sorts the flattened input, marks where runs of equal values start and
** compacts them with the index kernels' chunk counts; the count of unique
** values is read back (a sync: it is the output's size). unique along a dim
** is not written for CUDA: the CPU's kernel runs under the fake driver, and
** under a real one it is an error naming the op.
**
** The searches: searchsorted and bucketize are a binary search per value in
** the promoted type (float64 when either side is floating, else int64, as on
** the CPU), a sorter's values checked on the device first; isin sorts the
** test values once (the same row sort) and searches each element.
**
** Nothing here has run on a GPU: it is tested with the host build under the
** fake driver (tests/lua/cuda/test_sort.lua).
*/
#include <stdint.h>
#include <string.h>
#include "core/error.h"
#include "cuda/cuda.h"
#include "cuda/cuda_index.h"
#include "cuda/kernels/sort.h"
#include "cuda/launch.h"
#include "dispatch/dispatch.h"
#include "meta/index.h"
#include "meta/reduce.h"
#include "kernels_cuda.h"   /* generated: lt_ops.h, the kernel types */

extern const lt_ck_sort_kernels *lt_ck_sort_device_kernels(void) __attribute__((weak));

typedef struct sort_launch {
  lt_cuda_launch l;
  const lt_ck_sort_kernels *k;
  const char *op;
} sort_launch;

static int sl_begin(sort_launch *x, const lt_tensor *on, const char *op) {
  x->op = op;
  if (lt_cuda_launch_begin(&x->l, lt_tensor_device(on).index, lt_ck_sort_device_kernels != NULL, op) < 0) return -1;
  x->k = x->l.host ? lt_ck_host_sort_kernels() : lt_ck_sort_device_kernels();
  return 0;
}

static int sl_end(sort_launch *x, int rc) {
  lt_cuda_launch_end(&x->l);
  const lt_ck_kernels *ck = lt_cuda_ck_kernels(&x->l);
  rc = lt_cuda_launch_result(&x->l, x->op, rc, ck ? ck->error_string : NULL);
  if (rc > 0) return lt_error("%s: the CUDA sort kernels refused the arguments", x->op);
  return rc;
}

/* sizes and strides of t with dim d moved last */
static void dim_last(const lt_tensor *t, int d, int64_t *sz, int64_t *st) {
  for (int i = 0, k = 0; i < t->ndim; i++)
    if (i != d) { sz[k] = t->sizes[i]; st[k] = t->strides[i]; k++; }
  if (t->ndim) { sz[t->ndim - 1] = t->sizes[d]; st[t->ndim - 1] = t->strides[d]; }
}

/* The rows of self along d (every element's line), sorted: *vals of self's
** dtype and *idx (1-based), both [nrows, R] contiguous. 0 or -1. */
static int sort_lines(const char *op, lt_tensor *self, int d, bool desc, int64_t nrows, int64_t R, lt_tensor **vals,
                      lt_tensor **idx) {
  int64_t sz[LT_MAX_DIMS], st[LT_MAX_DIMS], rs[2] = {nrows, R};
  dim_last(self, d, sz, st);
  lt_tensor *p = lt_tensor_alias(self, self->offset, self->ndim, sz, st);
  lt_tensor *keys = p ? lt_tensor_contiguous(p) : NULL;
  lt_tensor_release(p);
  lt_tensor *v = keys ? lt_tensor_new((lt_dtype)self->dtype, lt_tensor_device(self), 2, rs) : NULL;
  lt_tensor *ix = v ? lt_tensor_new(LT_INT64, lt_tensor_device(self), 2, rs) : NULL;
  lt_tensor *tmp = NULL;
  int rc = ix ? 0 : -1;
  if (rc == 0 && nrows * R > 0) {
    sort_launch x;
    rc = sl_begin(&x, self, op);
    if (rc == 0) {
      int64_t nb = (int64_t)x.k->tmp_bytes(self->dtype, nrows, R);
      lt_cuda_launch_end(&x.l);
      tmp = lt_tensor_new(LT_UINT8, lt_tensor_device(self), 1, &nb);
      rc = tmp ? sl_begin(&x, self, op) : -1;
      if (rc == 0)
        rc = sl_end(&x, x.k->sort_rows(self->dtype, lt_tensor_data(keys), lt_tensor_data(v), lt_tensor_data(ix), nrows,
                                       R, desc, lt_tensor_data(tmp), (size_t)nb, x.l.stream));
    }
  }
  lt_tensor_release(tmp);
  lt_tensor_release(keys);
  if (rc < 0) { lt_tensor_release(v); lt_tensor_release(ix); return -1; }
  *vals = v;
  *idx = ix;
  return 0;
}

/* rows [nrows, R] (their first n columns) as a new tensor of self's shape with n along d */
static lt_tensor *put_back(lt_tensor *rows, const lt_tensor *self, int d, int64_t n) {
  int nd = self->ndim;
  int64_t osz[LT_MAX_DIMS], sz[LT_MAX_DIMS], st[LT_MAX_DIMS], rst[LT_MAX_DIMS];
  memcpy(osz, self->sizes, sizeof(int64_t) * (size_t)nd);
  if (nd) osz[d] = n;
  lt_tensor *r = lt_tensor_new((lt_dtype)rows->dtype, lt_tensor_device(rows), nd, osz);
  if (!r || r->numel == 0) return r;
  dim_last(r, d, sz, st);
  /* the rows as the permuted shape: contiguous but for the row stride R */
  int64_t R = rows->sizes[1];
  if (nd) {
    rst[nd - 1] = 1;
    int64_t acc = R;
    for (int i = nd - 2; i >= 0; i--) { rst[i] = acc; acc *= sz[i]; }
  }
  lt_tensor *dst = lt_tensor_alias(r, r->offset, nd, sz, st);
  lt_tensor *src = dst ? lt_tensor_alias(rows, rows->offset, nd, sz, rst) : NULL;
  int rc = src ? lt_tensor_copy_(dst, src) : -1;
  lt_tensor_release(dst);
  lt_tensor_release(src);
  if (rc < 0) { lt_tensor_release(r); return NULL; }
  return r;
}

static int sort_common(const char *op, lt_tensor *self, int64_t dim, bool desc, int64_t n, bool want_values,
                       lt_tensor **values, lt_tensor **indices) {
  lt_line_geom g;
  if (lt_meta_line(op, self->ndim, self->sizes, dim, &g) < 0) return -1;
  lt_tensor *v = NULL, *ix = NULL;
  if (sort_lines(op, self, g.d, desc, g.O * g.I, g.R, &v, &ix) < 0) return -1;
  lt_tensor *rv = want_values ? put_back(v, self, g.d, n) : NULL;
  lt_tensor *ri = (rv || !want_values) ? put_back(ix, self, g.d, n) : NULL;
  lt_tensor_release(v);
  lt_tensor_release(ix);
  if (!ri) { lt_tensor_release(rv); return -1; }
  if (values) *values = rv;
  *indices = ri;
  return 0;
}

int lt_cuda_sort(lt_tensor *self, int64_t dim, bool descending, bool stable, lt_tensor **values, lt_tensor **indices) {
  (void)stable;   /* always stable */
  return sort_common("sort", self, dim, descending, lt_meta_dim_size(self->ndim, self->sizes, dim), true, values,
                     indices);
}

lt_tensor *lt_cuda_argsort(lt_tensor *self, int64_t dim, bool descending, bool stable) {
  (void)stable;
  lt_tensor *ix = NULL;
  return sort_common("argsort", self, dim, descending, lt_meta_dim_size(self->ndim, self->sizes, dim), false, NULL,
                     &ix) < 0 ? NULL : ix;
}

int lt_cuda_topk(lt_tensor *self, int64_t k, int64_t dim, bool largest, bool sorted, lt_tensor **values,
                 lt_tensor **indices) {
  (void)sorted;   /* always sorted, as the CPU's */
  if (lt_meta_topk_check(self->ndim, self->sizes, k, dim) < 0) return -1;
  return sort_common("topk", self, dim, largest, k, true, values, indices);
}

/* one value and index per line: the pick of sorted rows */
static int pick_common(const char *op, int kind, lt_tensor *self, int64_t dim, int64_t k, bool keepdim,
                       lt_tensor **values, lt_tensor **indices) {
  lt_line_geom g;
  if (lt_meta_line(op, self->ndim, self->sizes, dim, &g) < 0) return -1;
  int64_t osz[LT_MAX_DIMS];
  int on = lt_meta_line_shape(self->ndim, self->sizes, g.d, 1, keepdim, osz);
  lt_tensor *v = NULL, *ix = NULL;
  if (sort_lines(op, self, g.d, false, g.O * g.I, g.R, &v, &ix) < 0) return -1;
  lt_tensor *rv = lt_tensor_new((lt_dtype)self->dtype, lt_tensor_device(self), on, osz);
  lt_tensor *ri = rv ? lt_tensor_new(LT_INT64, lt_tensor_device(self), on, osz) : NULL;
  int rc = ri ? 0 : -1;
  if (rc == 0 && rv->numel > 0 && g.R > 0) {
    sort_launch x;
    rc = sl_begin(&x, self, op);
    if (rc == 0)
      rc = sl_end(&x, x.k->pick(kind, self->dtype, lt_tensor_data(v), lt_tensor_data(ix), g.O * g.I, g.R, k,
                                lt_tensor_data(rv), lt_tensor_data(ri), x.l.stream));
  }
  lt_tensor_release(v);
  lt_tensor_release(ix);
  if (rc < 0) { lt_tensor_release(rv); lt_tensor_release(ri); return -1; }
  *values = rv;
  *indices = ri;
  return 0;
}

int lt_cuda_kthvalue(lt_tensor *self, int64_t k, int64_t dim, bool keepdim, lt_tensor **values, lt_tensor **indices) {
  if (lt_meta_kthvalue_check(self->ndim, self->sizes, k, dim) < 0) return -1;
  return pick_common("kthvalue", LT_CK_PICK_KTH, self, dim, k - 1, keepdim, values, indices);
}

static int select_line(const char *op, int kind, lt_tensor *self, int64_t dim, bool keepdim, lt_tensor **values,
                       lt_tensor **indices) {
  if (lt_meta_line_select_check(op, self->ndim, self->sizes, dim) < 0) return -1;
  return pick_common(op, kind, self, dim, 0, keepdim, values, indices);
}

int lt_cuda_median_dim(lt_tensor *self, int64_t dim, bool keepdim, lt_tensor **values, lt_tensor **indices) {
  return select_line("median", LT_CK_PICK_MEDIAN, self, dim, keepdim, values, indices);
}

int lt_cuda_nanmedian_dim(lt_tensor *self, int64_t dim, bool keepdim, lt_tensor **values, lt_tensor **indices) {
  return select_line("nanmedian", LT_CK_PICK_NANMEDIAN, self, dim, keepdim, values, indices);
}

int lt_cuda_mode(lt_tensor *self, int64_t dim, bool keepdim, lt_tensor **values, lt_tensor **indices) {
  return select_line("mode", LT_CK_PICK_MODE, self, dim, keepdim, values, indices);
}

/* the flattened tensor as one contiguous row */
static lt_tensor *flat(lt_tensor *self) {
  int64_t n = self->numel;
  lt_tensor *c = lt_tensor_contiguous(self);
  lt_tensor *f = c ? lt_tensor_alias(c, c->offset, 1, &n, NULL) : NULL;
  lt_tensor_release(c);
  return f;
}

static lt_tensor *median_all(const char *op, int kind, lt_tensor *self) {
  if (self->numel == 0) return lt_error_null("%s: cannot compute the median of an empty tensor", op);
  lt_tensor *f = flat(self), *v = NULL, *ix = NULL;
  int rc = f ? pick_common(op, kind, f, 0, 0, false, &v, &ix) : -1;
  lt_tensor_release(f);
  lt_tensor_release(ix);
  return rc < 0 ? NULL : v;
}

lt_tensor *lt_cuda_median(lt_tensor *self) { return median_all("median", LT_CK_PICK_MEDIAN, self); }
lt_tensor *lt_cuda_nanmedian(lt_tensor *self) { return median_all("nanmedian", LT_CK_PICK_NANMEDIAN, self); }

/* ---- unique ---- */

static int unique_flat(lt_tensor *self, lt_tensor **output, lt_tensor **inverse, lt_tensor **counts) {
  const char *op = "unique";
  int64_t n = self->numel, u = 0;
  lt_tensor *f = flat(self), *v = NULL, *ix = NULL, *flags = NULL, *chunks = NULL, *val = NULL, *start = NULL,
            *inv = NULL, *cnt = NULL;
  int rc = -1;
  if (!f || sort_lines(op, f, 0, false, 1, n, &v, &ix) < 0) goto done;
  if (!(flags = lt_tensor_new(LT_BOOL, lt_tensor_device(self), 1, &n))) goto done;
  sort_launch x;
  if (sl_begin(&x, self, op) < 0 || sl_end(&x, x.k->unique_flags(self->dtype, lt_tensor_data(v), n,
                                                                  lt_tensor_data(flags), x.l.stream)) < 0)
    goto done;
  int64_t nc = (n + LT_CK_MASK_CHUNK - 1) / LT_CK_MASK_CHUNK + 1;
  if (!(chunks = lt_tensor_new(LT_INT64, lt_tensor_device(self), 1, &nc))) goto done;
  lt_cuda_ix ixl;
  if (lt_cuda_ix_begin(&ixl, self, op) < 0 ||
      lt_cuda_ix_end(&ixl, ixl.k->mask_count(lt_tensor_data(flags), n, lt_tensor_data(chunks), ixl.l.stream)) < 0 ||
      lt_cuda_read_i64(chunks, nc - 1, &u) < 0)
    goto done;
  val = lt_tensor_new((lt_dtype)self->dtype, lt_tensor_device(self), 1, &u);
  start = lt_tensor_new(LT_INT64, lt_tensor_device(self), 1, &u);
  inv = lt_tensor_new(LT_INT64, lt_tensor_device(self), self->ndim, self->sizes);
  cnt = lt_tensor_new(LT_INT64, lt_tensor_device(self), 1, &u);
  if (!val || !start || !inv || !cnt) goto done;
  if (sl_begin(&x, self, op) < 0 ||
      sl_end(&x, x.k->unique_write(self->dtype, lt_tensor_data(v), lt_tensor_data(ix), lt_tensor_data(flags), n,
                                   lt_tensor_data(chunks), lt_tensor_data(val), lt_tensor_data(start),
                                   lt_tensor_data(inv), x.l.stream)) < 0)
    goto done;
  if (sl_begin(&x, self, op) < 0 ||
      sl_end(&x, x.k->unique_counts(lt_tensor_data(start), u, n, lt_tensor_data(cnt), x.l.stream)) < 0)
    goto done;
  *output = val;
  *inverse = inv;
  *counts = cnt;
  val = inv = cnt = NULL;
  rc = 0;
done:
  lt_tensor_release(f); lt_tensor_release(v); lt_tensor_release(ix); lt_tensor_release(flags);
  lt_tensor_release(chunks); lt_tensor_release(val); lt_tensor_release(start); lt_tensor_release(inv);
  lt_tensor_release(cnt);
  return rc;
}

int lt_cuda_unique(lt_tensor *self, bool sorted, bool return_inverse, bool return_counts, int64_t dim,
                   lt_tensor **output, lt_tensor **inverse_indices, lt_tensor **counts) {
  if (dim == LT_NOINT) return unique_flat(self, output, inverse_indices, counts);
  /* unique along a dim (rows compared whole) has no CUDA kernel */
  if (lt_cuda_host_device_memory()) {
    lt_cuda_count_fallback();
    return ((lt_unique_backend_fn)lt_op_table[LT_OP_unique].kernel[LT_KEY_CPU])(
        self, sorted, return_inverse, return_counts, dim, output, inverse_indices, counts);
  }
  return lt_error("unique: not implemented for cuda tensors with a dim (the CUDA kernels cover the flat form)");
}

/* ---- searchsorted, bucketize, isin ---- */

static int run_search(const char *op, const lt_tensor *seq, const lt_tensor *sorter, int64_t n, int64_t per,
                      const lt_tensor *x, bool right, int kind, bool invert, lt_tensor *r) {
  sort_launch sl;
  if (sl_begin(&sl, x, op) < 0) return -1;
  return sl_end(&sl, sl.k->search(x->dtype, lt_tensor_data(seq), sorter ? lt_tensor_data(sorter) : NULL, n, per,
                                  lt_tensor_data(x), x->numel, right, kind, invert, lt_tensor_data(r), sl.l.stream));
}

static lt_tensor *search_impl(const char *op, const char *seq_name, lt_tensor *seq, lt_tensor *input, bool out_int32,
                              bool right, lt_tensor *sorter) {
  if (lt_meta_search_check(op, seq_name, seq, input, sorter) < 0) return NULL;
  int64_t n = seq->sizes[seq->ndim - 1];
  bool isf = lt_dtype_is_float((lt_dtype)seq->dtype) || lt_dtype_is_float((lt_dtype)input->dtype);
  lt_dtype wd = isf ? LT_FLOAT64 : LT_INT64;
  /* a number input (a wrapped Lua number) is on no device: bring it to seq's */
  lt_tensor *in = lt_tensor_to_device(input, lt_tensor_device(seq));
  lt_tensor *s = in ? lt_tensor_to_dtype_contig(seq, wd) : NULL;
  lt_tensor *x = s ? lt_tensor_to_dtype_contig(in, wd) : NULL;
  lt_tensor *so = x && sorter ? lt_tensor_contiguous(sorter) : NULL;
  lt_tensor *r = NULL;
  if (!x || (sorter && !so)) goto done;
  if (so && lt_cuda_check_index(op, so, n, 0, 2) < 0) goto done;
  if (!(r = lt_tensor_new(out_int32 ? LT_INT32 : LT_INT64, lt_tensor_device(seq), input->ndim, input->sizes))) goto done;
  int64_t per = input->ndim == 0 ? 1 : input->sizes[input->ndim - 1];
  if (run_search(op, s, so, n, seq->ndim == 1 ? 0 : (per ? per : 1), x, right,
                 out_int32 ? LT_CK_SEARCH_I32 : LT_CK_SEARCH_I64, false, r) < 0) {
    lt_tensor_release(r);
    r = NULL;
  }
done:
  lt_tensor_release(in); lt_tensor_release(s); lt_tensor_release(x); lt_tensor_release(so);
  return r;
}

lt_tensor *lt_cuda_searchsorted(lt_tensor *sorted_sequence, lt_tensor *input, bool out_int32, bool right,
                                const char *side, lt_tensor *sorter) {
  if (lt_meta_search_side("searchsorted", side, &right) < 0) return NULL;
  return search_impl("searchsorted", "sorted_sequence", sorted_sequence, input, out_int32, right, sorter);
}

lt_tensor *lt_cuda_bucketize(lt_tensor *self, lt_tensor *boundaries, bool out_int32, bool right) {
  if (boundaries->ndim != 1)
    return lt_error_null("bucketize: argument 'boundaries' must be 1-D, got %d dims", boundaries->ndim);
  return search_impl("bucketize", "boundaries", boundaries, self, out_int32, right, NULL);
}

lt_tensor *lt_cuda_isin(lt_tensor *elements, lt_tensor *test_elements, bool assume_unique, bool invert) {
  (void)assume_unique;
  const char *op = "isin";
  lt_tensor *ts[2] = {elements, test_elements};
  lt_dtype wd = lt_dtype_is_float((lt_dtype)lt_result_type(2, ts)) ? LT_FLOAT64 : LT_INT64;
  lt_device dev = lt_cuda_on(elements) ? lt_tensor_device(elements) : lt_tensor_device(test_elements);
  lt_tensor *ed = lt_tensor_to_device(elements, dev), *td = ed ? lt_tensor_to_device(test_elements, dev) : NULL;
  lt_tensor *e = td ? lt_tensor_to_dtype_contig(ed, wd) : NULL, *t = e ? flat(td) : NULL;
  lt_tensor *tw = t ? lt_tensor_to_dtype_contig(t, wd) : NULL, *sv = NULL, *si = NULL, *r = NULL;
  if (!tw || sort_lines(op, tw, 0, false, 1, tw->numel, &sv, &si) < 0) goto done;
  /* NaN never matches: where it sorts does not matter */
  if ((r = lt_tensor_new(LT_BOOL, dev, elements->ndim, elements->sizes)) &&
      run_search(op, sv, NULL, tw->numel, 0, e, false, LT_CK_SEARCH_ISIN, invert, r) < 0) {
    lt_tensor_release(r);
    r = NULL;
  }
done:
  lt_tensor_release(ed); lt_tensor_release(td); lt_tensor_release(e); lt_tensor_release(t);
  lt_tensor_release(tw); lt_tensor_release(sv); lt_tensor_release(si);
  return r;
}
