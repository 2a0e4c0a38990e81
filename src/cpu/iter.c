/*
** iter.c — broadcasting and the elementwise driver (promotion: src/core/promote.c).
**
** The common call (inputs contiguous, of the loop's dtype, same shape or
** one element) takes a short path: one allocation for the result and one
** call of the loop. Everything else goes through lt_iter: strides in bytes,
** dims ordered by the output's strides and merged where every operand is
** contiguous across them, runs of the innermost dim handed to the loop.
*/
#include <stdio.h>
#include <string.h>
#include "cpu/iter.h"
#include "cpu/parallel.h"
#include "meta/ew.h"

/* ---- raw iteration ------------------------------------------------------ */

void lt_iter_init(lt_iter *it, int nt, int ndim, const int64_t *sizes,
                  char *const *data, const int64_t (*strides)[LT_MAX_DIMS]) {
  int perm[LT_MAX_DIMS], n = 0;
  it->nt = nt;
  it->numel = lt_shape_numel(ndim, sizes);
  for (int k = 0; k < nt; k++) it->data[k] = data[k];
  for (int d = ndim - 1; d >= 0; d--)
    if (sizes[d] != 1) perm[n++] = d;
  /* innermost = smallest output stride, so a permuted output is still
  ** walked in memory order (insertion sort: dims are few and mostly sorted) */
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && strides[0][perm[j - 1]] > strides[0][perm[j]]; j--) {
      int t = perm[j]; perm[j] = perm[j - 1]; perm[j - 1] = t;
    }
  int m = 0;
  for (int i = 0; i < n; i++) {
    int d = perm[i];
    if (m > 0) {
      bool merge = true;
      for (int k = 0; k < nt && merge; k++)
        merge = strides[k][d] == it->st[m - 1][k] * it->shape[m - 1];
      if (merge) { it->shape[m - 1] *= sizes[d]; continue; }
    }
    it->shape[m] = sizes[d];
    for (int k = 0; k < nt; k++) it->st[m][k] = strides[k][d];
    m++;
  }
  if (m == 0) {
    it->shape[0] = 1;
    for (int k = 0; k < nt; k++) it->st[0][k] = 0;
    m = 1;
  }
  it->ndim = m;
}

/* Elements per loop call at most: Ctrl-C (lt_interrupt_flag) is seen between calls, so
** one long op on a big tensor (4e7 erfinv: seconds) stops within a few ms of work. A
** slice is long enough that the check costs nothing; loops are elementwise, so any split
** gives the same result (the pool splits them by thread already). */
#define INTERRUPT_SLICE ((int64_t)1 << 18)

/* fn over n elements from d (not changed), a slice at a time */
static void run_sliced(lt_ew_loop fn, char *const *d, const int64_t *st, int nt, int64_t n, void *ctx) {
  if (n <= INTERRUPT_SLICE) { fn((char **)d, st, n, ctx); return; }
  char *p[LT_ITER_MAX_OPERANDS];
  for (int k = 0; k < nt; k++) p[k] = d[k];
  for (int64_t done = 0; done < n && !lt_interrupt_flag; done += INTERRUPT_SLICE) {
    int64_t m = n - done < INTERRUPT_SLICE ? n - done : INTERRUPT_SLICE;
    fn(p, st, m, ctx);
    for (int k = 0; k < nt; k++) p[k] += m * st[k];
  }
}

/* elements [begin, end) in the merged row-major order, innermost runs at a time */
static void iter_chunk(void *p, int64_t begin, int64_t end) {
  lt_iter *it = p;
  const int nt = it->nt, nd = it->ndim;
  char *d[LT_ITER_MAX_OPERANDS];
  if (nd == 1) {
    for (int k = 0; k < nt; k++) d[k] = it->data[k] + begin * it->st[0][k];
    run_sliced(it->fn, d, it->st[0], nt, end - begin, it->ctx);
    return;
  }
  int64_t idx[LT_MAX_DIMS], rem = begin;
  for (int k = 0; k < nt; k++) d[k] = it->data[k];
  for (int i = 0; i < nd; i++) {
    idx[i] = rem % it->shape[i];
    rem /= it->shape[i];
    for (int k = 0; k < nt; k++) d[k] += idx[i] * it->st[i][k];
  }
  int64_t pos = begin;
  while (pos < end) {
    int64_t n = it->shape[0] - idx[0];
    if (n > end - pos) n = end - pos;
    run_sliced(it->fn, d, it->st[0], nt, n, it->ctx);
    if (lt_interrupt_flag) return;
    pos += n;
    if (pos >= end) break;
    idx[0] += n;
    for (int k = 0; k < nt; k++) d[k] += n * it->st[0][k];
    for (int i = 0; i < nd - 1 && idx[i] == it->shape[i]; i++) {
      idx[i] = 0;
      idx[i + 1]++;
      for (int k = 0; k < nt; k++) d[k] += it->st[i + 1][k] - it->shape[i] * it->st[i][k];
    }
  }
}

void lt_iter_run(lt_iter *it, lt_ew_loop fn, void *ctx, int64_t grain) {
  it->fn = fn;
  it->ctx = ctx;
  if (grain <= 0) grain = LT_GRAIN_ELEMENTWISE;
  if (it->numel < 2 * grain) iter_chunk(it, 0, it->numel);
  else lt_parallel_for(it->numel, grain, iter_chunk, it);
}

/* ---- the elementwise driver -------------------------------------------- */

typedef struct run1d {
  char *data[LT_ITER_MAX_OPERANDS];
  int64_t st[LT_ITER_MAX_OPERANDS];
  int nt;
  lt_ew_loop fn;
  void *ctx;
} run1d;

static void run1d_chunk(void *p, int64_t begin, int64_t end) {
  run1d *r = p;
  char *d[LT_ITER_MAX_OPERANDS];
  for (int k = 0; k < r->nt; k++) d[k] = r->data[k] + begin * r->st[k];
  run_sliced(r->fn, d, r->st, r->nt, end - begin, r->ctx);
}

static int broadcast_all(const lt_ew *e, int64_t *shape) {
  return lt_meta_ew_shape(e->op, e->in, e->nin, shape);
}

/* the result's geometry is the meta layer's (meta/ew.h), which the meta device shares */
static lt_tensor *new_result(const lt_ew *e, lt_dtype dt, int nd, const int64_t *shape) {
  return lt_meta_ew_new(dt, nd, shape, e->in, e->nin);
}

static lt_tensor *alloc_result(lt_dtype dt, int nd, const int64_t *shape, const lt_ew *e) {
  return lt_meta_ew_result(dt, nd, shape, e->in, e->nin);
}

/* 16-byte slots for inputs read once (one element broadcast everywhere) */
typedef union ew_slot { double d; int64_t i; char b[16]; } ew_slot;

static bool same_geometry(const lt_tensor *out, const int64_t *st, const char *data) {
  if ((const char *)lt_tensor_data(out) != data) return false;
  for (int d = 0; d < out->ndim; d++)
    if (out->sizes[d] != 1 && out->strides[d] != st[d]) return false;
  return true;
}

lt_tensor *lt_ew_run(lt_ew *e, lt_tensor *out) {
  const int nin = e->nin, nt = nin + 1;
  char inplace_name[64];
  if (out && lt_tls_inplace_op) {   /* errors of x:add_(y) name add_ (no printf: this is the hot path) */
    size_t n = strlen(e->op);
    if (n > sizeof inplace_name - 2) n = sizeof inplace_name - 2;
    memcpy(inplace_name, e->op, n);
    inplace_name[n] = '_';
    inplace_name[n + 1] = 0;
    e->op = inplace_name;
  }
  int64_t shape[LT_MAX_DIMS];
  int nd = broadcast_all(e, shape);
  if (nd < 0) return NULL;
  int64_t numel = lt_shape_numel(nd, shape);
  const int64_t grain = e->grain > 0 ? e->grain : LT_GRAIN_ELEMENTWISE;

  /* short path: a fresh contiguous result, inputs contiguous or single values */
  _Alignas(16) ew_slot slot[LT_EW_MAX_IN];
  if (!out) {
    run1d r;
    bool fast = true;
    for (int k = 0; k < nin && fast; k++) {
      const lt_tensor *t = e->in[k];
      r.data[k + 1] = lt_tensor_data(t);
      if (t->numel == 1) {
        r.st[k + 1] = 0;
        if (t->dtype != e->in_dt[k]) {   /* a number of another dtype: convert it once */
          char *cv[2] = {slot[k].b, r.data[k + 1]};
          int64_t cst[2] = {0, 0};
          lt_cast_loop(e->in_dt[k], (lt_dtype)t->dtype)(cv, cst, 1, NULL);
          r.data[k + 1] = slot[k].b;
        }
      } else if (t->dtype == e->in_dt[k] && t->ndim == nd &&
                 memcmp(t->sizes, shape, sizeof(int64_t) * (size_t)nd) == 0 && lt_tensor_is_contiguous(t)) {
        r.st[k + 1] = (int64_t)lt_dtype_size((lt_dtype)t->dtype);
      } else {
        fast = false;
      }
    }
    if (fast) {
      lt_tensor *res = new_result(e, e->out_dt, nd, shape);
      if (!res || numel == 0) return res;
      r.data[0] = lt_tensor_data(res);
      r.st[0] = (int64_t)lt_dtype_size(e->out_dt);
      r.nt = nt;
      r.fn = e->fn;
      r.ctx = e->ctx;
      if (numel < 2 * grain) run1d_chunk(&r, 0, numel);
      else lt_parallel_for(numel, grain, run1d_chunk, &r);
      return res;
    }
  }

  /* general path */
  lt_tensor *tmp[LT_EW_MAX_IN] = {0};
  char *data[LT_ITER_MAX_OPERANDS];
  int64_t st[LT_ITER_MAX_OPERANDS][LT_MAX_DIMS];
  lt_tensor *res = NULL, *tgt = NULL;
  bool need_temp = false, resize_later = false;

  if (out) {
    lt_dtype odt = (lt_dtype)out->dtype;
    if (!lt_can_cast(e->out_dt, odt)) {
      lt_error("%s: result type %s can't be cast to the desired output type %s", e->op,
               lt_dtype_traits_table[e->out_dt].t7name, lt_dtype_traits_table[odt].t7name);
      return NULL;
    }
    need_temp = odt != e->out_dt;
    bool same = out->ndim == nd && memcmp(out->sizes, shape, sizeof(int64_t) * (size_t)nd) == 0;
    if (!same) {
      bool shared = false;
      for (int k = 0; k < nin; k++) shared |= e->in[k]->storage == out->storage;
      if (shared && !lt_tls_inplace_op) { need_temp = true; resize_later = true; }
      else if (lt_tensor_resize_out(e->op, out, nd, shape) < 0) return NULL;
    }
  }

  for (int k = 0; k < nin; k++) {
    lt_tensor *t = e->in[k];
    lt_dtype want = e->in_dt[k];
    if (t->numel == 1 && numel != 0) {
      /* read once, converted; stride 0 in every dim */
      char *src[2] = {slot[k].b, lt_tensor_data(t)};
      int64_t sst[2] = {0, 0};
      lt_cast_loop(want, (lt_dtype)t->dtype)(src, sst, 1, NULL);
      data[k + 1] = slot[k].b;
      for (int d = 0; d < nd; d++) st[k + 1][d] = 0;
      continue;
    }
    if (t->dtype != want) {
      tmp[k] = lt_tensor_clone_as(t, want);
      if (!tmp[k]) goto fail;
      t = tmp[k];
    }
    if (lt_expand_strides(e->op, t, nd, shape, st[k + 1]) < 0) goto fail;
    data[k + 1] = lt_tensor_data(t);
    if (out && !need_temp && !tmp[k] && t->storage == out->storage &&
        !same_geometry(out, st[k + 1], data[k + 1]))
      need_temp = true;   /* out overlaps an input other than element for element */
  }

  if (out && !need_temp) {
    tgt = out;
  } else {
    tgt = alloc_result(e->out_dt, nd, shape, e);
    if (!tgt) goto fail;
  }
  if (numel > 0) {
    size_t es = lt_dtype_size(e->out_dt);
    data[0] = lt_tensor_data(tgt);
    for (int d = 0; d < nd; d++) st[0][d] = tgt->strides[d] * (int64_t)es;
    for (int k = 0; k < nin; k++) {
      if (data[k + 1] == slot[k].b) continue;
      size_t ies = lt_dtype_size(e->in_dt[k]);
      for (int d = 0; d < nd; d++) st[k + 1][d] *= (int64_t)ies;
    }
    lt_iter it;
    lt_iter_init(&it, nt, nd, shape, data, (const int64_t (*)[LT_MAX_DIMS])st);
    lt_iter_run(&it, e->fn, e->ctx, grain);
  }
  for (int k = 0; k < nin; k++) lt_tensor_release(tmp[k]);

  if (!out) return tgt;
  if (tgt != out) {
    int rc = resize_later ? lt_tensor_resize_out(e->op, out, nd, shape) : 0;
    if (rc == 0) rc = lt_tensor_copy_(out, tgt);
    lt_tensor_release(tgt);
    if (rc < 0) return NULL;
  }
  lt_tensor_retain(out);
  return out;

fail:
  for (int k = 0; k < nin; k++) lt_tensor_release(tmp[k]);
  lt_tensor_release(res);
  return NULL;
}
