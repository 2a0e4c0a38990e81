/*
** sort.c — sort, argsort, topk, kthvalue, median, nanmedian, mode, unique.
**
** Every op sorts (value, index) pairs of one line at a time with a stable
** merge sort (insertion sort on short runs), instantiated per dtype and per
** direction so the comparison is inlined. NaN orders as the largest value:
** last ascending, first descending, as in PyTorch. Lines run in parallel;
** each task allocates its own scratch and reports failure through the context.
*/
/* -O2's "very cheap" vectoriser skips loops of unknown trip count, which is
** every row loop here; the dynamic cost model vectorises them. */
#if defined(__GNUC__) && !defined(__clang__)
#endif
#include <stdlib.h>
#include <string.h>
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "cpu/red.h"

enum { Q_SORT, Q_TOPK, Q_KTH, Q_MEDIAN, Q_NANMEDIAN, Q_MODE };

typedef struct sort_ctx {
  const void *x;
  int64_t O, R, I;
  int kind;
  bool desc;
  int64_t k;            /* topk count, or the 0-based rank for kthvalue */
  void *val;            /* values out: [O, R or k, I], or [O, I] for one per line */
  int64_t *idx;
  atomic_int failed;
} sort_ctx;

#define ASC(a, b) ((a) < (b) || ((a) == (a) && (b) != (b)))
#define DESC(a, b) ((a) > (b) || ((a) != (a) && (b) == (b)))
#define RUN 32

#define DEF_MSORT(NAME, CT, DIR, BEFORE) \
static void msort_##DIR##_##NAME(pair_##NAME *a, pair_##NAME *tmp, int64_t n) { \
  for (int64_t s = 0; s < n; s += RUN) { \
    int64_t e = s + RUN < n ? s + RUN : n; \
    for (int64_t i = s + 1; i < e; i++) { \
      pair_##NAME p = a[i]; int64_t j = i; \
      while (j > s && BEFORE(p.v, a[j - 1].v)) { a[j] = a[j - 1]; j--; } \
      a[j] = p; \
    } \
  } \
  pair_##NAME *src = a, *dst = tmp; \
  for (int64_t w = RUN; w < n; w *= 2) { \
    for (int64_t s = 0; s < n; s += 2 * w) { \
      int64_t m = s + w < n ? s + w : n, e = s + 2 * w < n ? s + 2 * w : n; \
      int64_t i = s, j = m, k = s; \
      while (i < m && j < e) dst[k++] = BEFORE(src[j].v, src[i].v) ? src[j++] : src[i++]; \
      while (i < m) dst[k++] = src[i++]; \
      while (j < e) dst[k++] = src[j++]; \
    } \
    pair_##NAME *t = src; src = dst; dst = t; \
  } \
  if (src != a) memcpy(a, src, sizeof(pair_##NAME) * (size_t)n); \
}

/* one level of indirection so `bool` arrives as _Bool everywhere */
#define DEF_SORT(ENUM, T, CT, NAME) DEF_SORT2(ENUM, T, CT, NAME)
#define DEF_SORT2(ENUM, T, CT, NAME) \
typedef struct { CT v; int64_t i; } pair_##NAME; \
DEF_MSORT(NAME, CT, asc, ASC) \
DEF_MSORT(NAME, CT, desc, DESC) \
static void sortline_##NAME(sort_ctx *c, int64_t line, pair_##NAME *a, pair_##NAME *tmp) { \
  int64_t o = line / c->I, i = line % c->I, R = c->R, I = c->I; \
  const T *x = (const T *)c->x + o * R * I + i; \
  for (int64_t r = 0; r < R; r++) { a[r].v = LT_TOC_##NAME(x[r * I]); a[r].i = r; } \
  bool desc = c->kind == Q_SORT ? c->desc : c->kind == Q_TOPK ? c->desc : false; \
  if (desc) msort_desc_##NAME(a, tmp, R); else msort_asc_##NAME(a, tmp, R); \
  T *val = c->val; \
  if (c->kind == Q_SORT || c->kind == Q_TOPK) { \
    int64_t n = c->kind == Q_SORT ? R : c->k; \
    for (int64_t r = 0; r < n; r++) { \
      int64_t q = (o * n + r) * I + i; \
      if (val) val[q] = LT_FROMC_##NAME(a[r].v); \
      c->idx[q] = a[r].i + 1; \
    } \
    return; \
  } \
  int64_t pick = 0, q = o * I + i; \
  if (c->kind == Q_KTH) pick = c->k; \
  else if (c->kind == Q_MEDIAN || c->kind == Q_NANMEDIAN) { \
    int64_t nn = R; \
    while (nn > 0 && a[nn - 1].v != a[nn - 1].v) nn--; \
    if (nn < R && (c->kind == Q_MEDIAN || nn == 0)) pick = nn;  /* the first NaN */ \
    else pick = (nn - 1) / 2; \
  } else { /* mode: the longest run; the smallest value on ties; its last index */ \
    int64_t best = 0, blen = 0; \
    for (int64_t s = 0; s < R;) { \
      int64_t e = s + 1, last = a[s].i; \
      while (e < R && a[e].v == a[s].v) { if (a[e].i > last) last = a[e].i; e++; } \
      if (e - s > blen) { blen = e - s; best = s; a[s].i = last; } \
      s = e; \
    } \
    pick = best; \
  } \
  val[q] = LT_FROMC_##NAME(a[pick].v); \
  c->idx[q] = a[pick].i + 1; \
} \
static void sorttask_##NAME(void *vc, int64_t b, int64_t e) { \
  sort_ctx *c = vc; \
  size_t n = (size_t)(c->R > 0 ? c->R : 1); \
  pair_##NAME *a = malloc(sizeof(pair_##NAME) * n), *tmp = malloc(sizeof(pair_##NAME) * n); \
  if (!a || !tmp) { atomic_store(&c->failed, 1); free(a); free(tmp); return; } \
  for (int64_t l = b; l < e; l++) sortline_##NAME(c, l, a, tmp); \
  free(a); free(tmp); \
}

LT_FORALL_DTYPES(DEF_SORT)

static const lt_parallel_fn sort_tab[LT_NUM_DTYPES] = {
  sorttask_float64, sorttask_float32, sorttask_float16, sorttask_bfloat16, sorttask_int64,
  sorttask_int32, sorttask_int16, sorttask_int8, sorttask_uint8, sorttask__Bool };

/* Runs `kind` over every line of self along dim. The outputs have self's shape
** with dim resized to `n` (kept as 1 or removed for one-per-line kinds). */
static int sort_run(const char *op, int kind, lt_tensor *self, int64_t dim, bool desc, int64_t k, bool keepdim,
                    bool want_val, lt_tensor **values, lt_tensor **indices) {
  lt_line g;
  if (lt_line_plan(&g, op, self, dim) < 0) return -1;
  int64_t osz[LT_MAX_DIMS];
  bool per_line = kind != Q_SORT && kind != Q_TOPK;
  int64_t n = kind == Q_SORT ? g.R : kind == Q_TOPK ? k : 1;
  int on = lt_meta_line_shape(self->ndim, self->sizes, g.d, n, !per_line || keepdim, osz);
  lt_tensor *v = want_val ? lt_tensor_new((lt_dtype)self->dtype, lt_tensor_device(self), on, osz) : NULL;
  lt_tensor *ix = lt_tensor_new(LT_INT64, lt_tensor_device(self), on, osz);
  if ((want_val && !v) || !ix) goto fail;
  sort_ctx c;
  memset(&c, 0, sizeof c);
  c.x = lt_tensor_data(g.src); c.O = g.O; c.R = g.R; c.I = g.I;
  c.kind = kind; c.desc = desc; c.k = k;
  c.val = v ? lt_tensor_data(v) : NULL;
  c.idx = lt_tensor_data(ix);
  atomic_init(&c.failed, 0);
  if (g.R > 0 && (kind == Q_SORT || kind == Q_TOPK ? n > 0 : true))
    lt_parallel_for(g.O * g.I, lt_red_grain(g.R * 8), sort_tab[g.src->dtype], &c);
  if (atomic_load(&c.failed)) { lt_error("%s: out of memory", op); goto fail; }
  lt_tensor_release(g.src);
  if (values) *values = v;
  *indices = ix;
  return 0;
fail:
  lt_tensor_release(v);
  lt_tensor_release(ix);
  lt_tensor_release(g.src);
  return -1;
}

int lt_cpu_sort(lt_tensor *self, int64_t dim, bool descending, bool stable, lt_tensor **values, lt_tensor **indices) {
  return sort_run("sort", Q_SORT, self, dim, descending, 0, false, true, values, indices);
}

lt_tensor *lt_cpu_argsort(lt_tensor *self, int64_t dim, bool descending, bool stable) {
  lt_tensor *ix = NULL;
  return sort_run("argsort", Q_SORT, self, dim, descending, 0, false, false, NULL, &ix) < 0 ? NULL : ix;
}

int lt_cpu_topk(lt_tensor *self, int64_t k, int64_t dim, bool largest, bool sorted, lt_tensor **values,
                lt_tensor **indices) {
  if (lt_meta_topk_check(self->ndim, self->sizes, k, dim) < 0) return -1;
  return sort_run("topk", Q_TOPK, self, dim, largest, k, false, true, values, indices);
}

static int one_per_line(const char *op, int kind, lt_tensor *self, int64_t dim, int64_t k, bool keepdim,
                        lt_tensor **values, lt_tensor **indices) {
  if (lt_meta_line_select_check(op, self->ndim, self->sizes, dim) < 0) return -1;
  return sort_run(op, kind, self, dim, false, k, keepdim, true, values, indices);
}

int lt_cpu_kthvalue(lt_tensor *self, int64_t k, int64_t dim, bool keepdim, lt_tensor **values, lt_tensor **indices) {
  if (lt_meta_kthvalue_check(self->ndim, self->sizes, k, dim) < 0) return -1;
  return sort_run("kthvalue", Q_KTH, self, dim, false, k - 1, keepdim, true, values, indices);
}

int lt_cpu_median_dim(lt_tensor *self, int64_t dim, bool keepdim, lt_tensor **values, lt_tensor **indices) {
  return one_per_line("median", Q_MEDIAN, self, dim, 0, keepdim, values, indices);
}
int lt_cpu_nanmedian_dim(lt_tensor *self, int64_t dim, bool keepdim, lt_tensor **values, lt_tensor **indices) {
  return one_per_line("nanmedian", Q_NANMEDIAN, self, dim, 0, keepdim, values, indices);
}
int lt_cpu_mode(lt_tensor *self, int64_t dim, bool keepdim, lt_tensor **values, lt_tensor **indices) {
  return one_per_line("mode", Q_MODE, self, dim, 0, keepdim, values, indices);
}

/* the median of every element: over the flattened tensor */
static lt_tensor *median_all(const char *op, int kind, lt_tensor *self) {
  if (self->numel == 0) return lt_error_null("%s: cannot compute the median of an empty tensor", op);
  int64_t n = self->numel;
  lt_tensor *c = lt_tensor_contiguous(self);
  if (!c) return NULL;
  lt_tensor *flat = lt_tensor_alias(c, c->offset, 1, &n, NULL);
  lt_tensor_release(c);
  if (!flat) return NULL;
  lt_tensor *v = NULL, *ix = NULL;
  int rc = sort_run(op, kind, flat, 0, false, 0, false, true, &v, &ix);
  lt_tensor_release(flat);
  lt_tensor_release(ix);
  return rc < 0 ? NULL : v;
}

lt_tensor *lt_cpu_median(lt_tensor *self) { return median_all("median", Q_MEDIAN, self); }
lt_tensor *lt_cpu_nanmedian(lt_tensor *self) { return median_all("nanmedian", Q_NANMEDIAN, self); }

/* ---- unique ---- */

/* Sorted unique values of a flat contiguous block; returns the count U, or -1. */
#define DEF_UNIQ(ENUM, T, CT, NAME) DEF_UNIQ2(ENUM, T, CT, NAME)
#define DEF_UNIQ2(ENUM, T, CT, NAME) \
static int64_t uniq_##NAME(const void *xv, int64_t n, void *valv, int64_t *inv, int64_t *cnt) { \
  const T *x = xv; T *val = valv; \
  pair_##NAME *a = malloc(sizeof(pair_##NAME) * (size_t)(n ? n : 1)); \
  pair_##NAME *tmp = malloc(sizeof(pair_##NAME) * (size_t)(n ? n : 1)); \
  if (!a || !tmp) { free(a); free(tmp); return lt_error("unique: out of memory"); } \
  for (int64_t i = 0; i < n; i++) { a[i].v = LT_TOC_##NAME(x[i]); a[i].i = i; } \
  msort_asc_##NAME(a, tmp, n); \
  int64_t u = -1; \
  for (int64_t i = 0; i < n; i++) { \
    if (i == 0 || !(a[i].v == a[i - 1].v)) { u++; val[u] = x[a[i].i]; cnt[u] = 0; } \
    cnt[u]++; \
    inv[a[i].i] = u + 1; \
  } \
  free(a); free(tmp); \
  return u + 1; \
}
LT_FORALL_DTYPES(DEF_UNIQ)
typedef int64_t (*uniq_fn)(const void *, int64_t, void *, int64_t *, int64_t *);
static const uniq_fn uniq_tab[LT_NUM_DTYPES] = {
  uniq_float64, uniq_float32, uniq_float16, uniq_bfloat16, uniq_int64,
  uniq_int32, uniq_int16, uniq_int8, uniq_uint8, uniq__Bool };

/* rows of a [n, m] block as exact keys: double for float dtypes, int64 otherwise */
typedef struct rows_ctx { const double *d; const int64_t *l; int64_t m; } rows_ctx;

static int row_cmp(const rows_ctx *c, int64_t a, int64_t b) {
  for (int64_t j = 0; j < c->m; j++) {
    if (c->d) {
      double x = c->d[a * c->m + j], y = c->d[b * c->m + j];
      if (ASC(x, y)) return -1;
      if (ASC(y, x)) return 1;
    } else {
      int64_t x = c->l[a * c->m + j], y = c->l[b * c->m + j];
      if (x != y) return x < y ? -1 : 1;
    }
  }
  return 0;
}

static void row_sort(const rows_ctx *c, int64_t *a, int64_t *tmp, int64_t n) {
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t s = 0; s < n; s += 2 * w) {
      int64_t m = s + w < n ? s + w : n, e = s + 2 * w < n ? s + 2 * w : n;
      int64_t i = s, j = m, k = s;
      while (i < m && j < e) tmp[k++] = row_cmp(c, a[j], a[i]) < 0 ? a[j++] : a[i++];
      while (i < m) tmp[k++] = a[i++];
      while (j < e) tmp[k++] = a[j++];
    }
    memcpy(a, tmp, sizeof(int64_t) * (size_t)n);
  }
}

static int unique_dim(lt_tensor *self, int64_t dim, lt_tensor **output, lt_tensor **inverse, lt_tensor **counts) {
  int nd = self->ndim;
  int d = lt_wrap_dim("unique", dim, nd);
  if (d < 0) return -1;
  if (nd == 0) return lt_error("unique: argument 'dim' needs a tensor with at least 1 dim");
  /* move dim to the front: [n, m] rows */
  int64_t ps[LT_MAX_DIMS], pst[LT_MAX_DIMS];
  ps[0] = self->sizes[d]; pst[0] = self->strides[d];
  for (int i = 0, k = 1; i < nd; i++) if (i != d) { ps[k] = self->sizes[i]; pst[k] = self->strides[i]; k++; }
  lt_tensor *pv = lt_tensor_alias(self, self->offset, nd, ps, pst);
  if (!pv) return -1;
  lt_tensor *rows = lt_tensor_clone_as(pv, (lt_dtype)self->dtype);
  lt_tensor *keys = lt_tensor_clone_as(pv, lt_dtype_is_float((lt_dtype)self->dtype) ? LT_FLOAT64 : LT_INT64);
  lt_tensor_release(pv);
  int64_t n = ps[0], m = n ? self->numel / n : 0;
  int64_t *ord = malloc(sizeof(int64_t) * (size_t)(n + 1)), *tmp = malloc(sizeof(int64_t) * (size_t)(n + 1));
  lt_tensor *inv = lt_tensor_new(LT_INT64, lt_tensor_device(self), 1, &n);
  lt_tensor *cnt = lt_tensor_new(LT_INT64, lt_tensor_device(self), 1, &n);
  lt_tensor *outp = NULL, *res = NULL;
  int rc = -1;
  if (!rows || !keys || !ord || !tmp || !inv || !cnt) { if (!ord || !tmp) lt_error("unique: out of memory"); goto done; }
  rows_ctx rc_ = { keys->dtype == LT_FLOAT64 ? lt_tensor_data(keys) : NULL,
                   keys->dtype == LT_INT64 ? lt_tensor_data(keys) : NULL, m };
  for (int64_t i = 0; i < n; i++) ord[i] = i;
  row_sort(&rc_, ord, tmp, n);
  int64_t *iv = lt_tensor_data(inv), *cv = lt_tensor_data(cnt), u = 0;
  for (int64_t i = 0; i < n; i++) {
    if (i == 0 || row_cmp(&rc_, ord[i], ord[i - 1]) != 0) { tmp[u] = ord[i]; cv[u] = 0; u++; }
    cv[u - 1]++;
    iv[ord[i]] = u;
  }
  /* gather the unique rows, then move dim back into place */
  int64_t us[LT_MAX_DIMS];
  memcpy(us, ps, sizeof(int64_t) * (size_t)nd);
  us[0] = u;
  outp = lt_tensor_new((lt_dtype)self->dtype, lt_tensor_device(self), nd, us);
  if (!outp) goto done;
  size_t rb = (size_t)m * lt_dtype_size((lt_dtype)self->dtype);
  for (int64_t i = 0; i < u; i++)
    memcpy((char *)lt_tensor_data(outp) + (size_t)i * rb, (const char *)lt_tensor_data(rows) + (size_t)tmp[i] * rb, rb);
  int64_t os[LT_MAX_DIMS], ost[LT_MAX_DIMS];
  for (int i = 0, k = 1; i < nd; i++) {
    if (i == d) { os[i] = u; ost[i] = outp->strides[0]; }
    else { os[i] = outp->sizes[k]; ost[i] = outp->strides[k]; k++; }
  }
  lt_tensor *back = lt_tensor_alias(outp, 0, nd, os, ost);
  if (!back) goto done;
  res = lt_tensor_contiguous(back);
  lt_tensor_release(back);
  if (!res) goto done;
  lt_tensor *cu = lt_tensor_alias(cnt, 0, 1, &u, NULL);
  if (!cu) { lt_tensor_release(res); res = NULL; goto done; }
  *output = res; *inverse = inv; *counts = cu;
  inv = NULL;
  rc = 0;
done:
  free(ord); free(tmp);
  lt_tensor_release(rows); lt_tensor_release(keys);
  lt_tensor_release(inv); lt_tensor_release(cnt); lt_tensor_release(outp);
  return rc;
}

int lt_cpu_unique(lt_tensor *self, bool sorted, bool return_inverse, bool return_counts, int64_t dim,
                  lt_tensor **output, lt_tensor **inverse_indices, lt_tensor **counts) {
  if (dim != LT_NOINT) return unique_dim(self, dim, output, inverse_indices, counts);
  int64_t n = self->numel;
  lt_tensor *c = lt_tensor_contiguous(self);
  lt_tensor *val = lt_tensor_new((lt_dtype)self->dtype, lt_tensor_device(self), 1, &n);
  lt_tensor *inv = lt_tensor_new(LT_INT64, lt_tensor_device(self), self->ndim, self->sizes);
  lt_tensor *cnt = lt_tensor_new(LT_INT64, lt_tensor_device(self), 1, &n);
  int64_t u = -1;
  if (c && val && inv && cnt)
    u = uniq_tab[self->dtype](lt_tensor_data(c), n, lt_tensor_data(val), lt_tensor_data(inv), lt_tensor_data(cnt));
  lt_tensor *vu = NULL, *cu = NULL;
  if (u >= 0) {
    vu = lt_tensor_alias(val, 0, 1, &u, NULL);
    cu = lt_tensor_alias(cnt, 0, 1, &u, NULL);
  }
  lt_tensor_release(c); lt_tensor_release(val); lt_tensor_release(cnt);
  if (!vu || !cu) { lt_tensor_release(vu); lt_tensor_release(cu); lt_tensor_release(inv); return -1; }
  *output = vu; *inverse_indices = inv; *counts = cu;
  return 0;
}
