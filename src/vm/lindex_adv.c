/*
** lindex_adv.c — index tensors and masks inside index tables (PyTorch's
** advanced indexing): x[{":", idx}], x[{rows, cols}], x[{mask, {2, 3}}],
** reading and writing, recorded by autograd.
**
** The basic entries (numbers, ranges, ":") apply first, as views; what is left
** is a tensor `cur` and the advanced indices, each naming one dim of cur (a
** mask of k dims gives k of them, its nonzero coordinates; a boolean adds a dim
** of size 1 and indexes it with {1} or with nothing). Their shapes broadcast
** to one shape B. The result has B in place of the indexed dims when those are
** adjacent, else B first and then cur's other dims: PyTorch's rule.
**
** A read flattens the indexed dims into one (moved to the front first when
** they are not adjacent) and calls index_select on it with the row-major
** position of each B element inside that block: one differentiable op, whose
** backward (index_add) accumulates duplicated indices. A write computes the
** row-major position in cur of each element of the indexed shape and calls
** put_ on cur, a view of x: the write lands in x and, when recorded, rewrites
** x's history as every in-place op on a view does.
**
** Index values are read on the host, where they must be to be validated.
*/
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include "lutorch_vm.h"
#include "ltensor.h"
#include "lt_ops.h"
#include "core/views.h"
#include "core/backend.h"
#include "lindex.h"

typedef struct adv_index {
  int dim;          /* the dim of cur it indexes */
  int entry;        /* the entry of the index table, for messages */
  int xdim;         /* the dim of x it names, for messages */
  lt_tensor *idx;   /* int64 on the host, 1-based (negative from the end) */
} adv_index;

typedef struct adv_plan {
  lt_tensor *cur;                /* x after the basic entries */
  int m;                         /* advanced indices */
  adv_index a[LT_MAX_DIMS];      /* in the order of cur's dims */
  int bn;                        /* the broadcast shape of the indices */
  int64_t b[LT_MAX_DIMS];
  bool adjacent;                 /* indexed dims next to each other: B goes in their place */
} adv_plan;

static void plan_free(adv_plan *p) {
  lt_tensor_release(p->cur);
  for (int j = 0; j < p->m; j++) lt_tensor_release(p->a[j].idx);
  p->cur = NULL;
  p->m = 0;
}

bool lt_vm_index_is_advanced(lua_State *L, int kidx) {
  int n = (int)lua_rawlen(L, kidx);
  bool adv = false;
  for (int i = 1; i <= n && !adv; i++) {
    int ty = lua_rawgeti(L, kidx, i);
    adv = ty == LUA_TBOOLEAN || (ty == LUA_TUSERDATA && lt_vm_toud(L, -1));
    lua_pop(L, 1);
  }
  return adv;
}

static bool is_mask(const lt_tensor *k) { return k->dtype == LT_BOOL || k->dtype == LT_UINT8; }

/* how many dims of x the value on the top of the stack consumes */
static int entry_dims(lua_State *L) {
  int ty = lua_type(L, -1);
  if (ty == LUA_TBOOLEAN) return 0;
  lt_tensor *k = ty == LUA_TUSERDATA ? lt_vm_totensor(L, -1) : NULL;
  return k && is_mask(k) ? k->ndim : 1;
}

static int add_index(adv_plan *p, int entry, int xdim, int dim, lt_tensor *host) {
  adv_index *a = &p->a[p->m++];
  a->dim = dim;
  a->entry = entry;
  a->xdim = xdim;
  a->idx = host;
  return 0;
}

/* a boolean (Lua or 0-d): a new dim of size 1, indexed by {1} (true) or by nothing (false) */
static int add_bool(adv_plan *p, int entry, bool v, bool grad, int *d) {
  if (p->cur->ndim >= LT_MAX_DIMS) return lt_error("index: entry %d: the result would have too many dims", entry);
  lt_tensor *u = grad ? lt_unsqueeze(p->cur, *d) : lt_strided_unsqueeze(p->cur, *d);
  if (!u) return -1;
  lt_tensor_release(p->cur);
  p->cur = u;
  int64_t n = v ? 1 : 0;
  lt_tensor *idx = lt_tensor_new(LT_INT64, lt_device_cpu(), 1, &n);
  if (!idx) return -1;
  if (v) *(int64_t *)lt_tensor_data(idx) = 1;
  add_index(p, entry, -1, (*d)++, idx);
  return 0;
}

/* a mask over cur's dims *d.. : one index per dim, its nonzero coordinates */
static int add_mask(adv_plan *p, int entry, lt_tensor *k, int *xdim, int *d) {
  const lt_tensor *c = p->cur;
  bool ok = *d + k->ndim <= c->ndim;
  for (int j = 0; ok && j < k->ndim; j++) ok = k->sizes[j] == c->sizes[*d + j];
  if (!ok) {
    char b1[128], b2[128], dims[48];
    int n = c->ndim - *d < k->ndim ? c->ndim - *d : k->ndim;
    if (k->ndim == 1) snprintf(dims, sizeof dims, "dim %d", *xdim + 1);
    else snprintf(dims, sizeof dims, "dims %d..%d", *xdim + 1, *xdim + k->ndim);
    return lt_error("index: entry %d is a mask of shape %s, which does not match the sizes %s of %s of the "
                    "indexed tensor", entry, lt_shape_str(k->ndim, k->sizes, b1, sizeof b1),
                    lt_shape_str(n, c->sizes + *d, b2, sizeof b2), dims);
  }
  lt_tensor *nz = lt_nonzero(k);
  lt_tensor *h = nz ? lt_tensor_to_host(nz) : NULL;
  lt_tensor_release(nz);
  if (!h) return -1;
  int64_t rows = h->sizes[0], stride = h->strides[0];
  for (int j = 0; j < k->ndim; j++) {
    lt_tensor *col = lt_tensor_alias(h, h->offset + j * h->strides[1], 1, &rows, &stride);
    if (!col) { lt_tensor_release(h); return -1; }
    add_index(p, entry, *xdim + j, *d + j, col);
  }
  lt_tensor_release(h);
  *d += k->ndim;
  *xdim += k->ndim;
  return 0;
}

/* an entry that lt_vm_index_basic left: a tensor or a boolean */
static int adv_entry(lua_State *L, int entry, bool grad, adv_plan *p, int *xdim, int *d) {
  int ty = lua_type(L, -1);
  if (ty == LUA_TBOOLEAN) return add_bool(p, entry, lua_toboolean(L, -1), grad, d);
  lt_tensor *k = ty == LUA_TUSERDATA ? lt_vm_totensor(L, -1) : NULL;
  if (!k) {
    if (lt_vm_toud(L, -1)) return lt_error("index: entry %d is a freed tensor", entry);
    return lt_error("index: entry %d of the index table must be a number, a {first, last} range, \":\", "
                    "an index tensor or a mask, got %s", entry, luaL_typename(L, -1));
  }
  if (is_mask(k) && k->ndim == 0) {
    lt_scalar s = lt_tensor_item(k);
    if (lt_scalar_is_none(s)) return -1;
    return add_bool(p, entry, s.v.i != 0, grad, d);
  }
  if (is_mask(k)) return add_mask(p, entry, k, xdim, d);
  if (k->dtype != LT_INT64 && k->dtype != LT_INT32)
    return lt_error("index: entry %d: an index tensor must be int64 (indices) or bool (a mask), got %s", entry,
                    lt_dtype_name((lt_dtype)k->dtype));
  if (*d >= p->cur->ndim) return lt_error("index: too many indices at entry %d", entry);
  if (k->ndim == 0) {   /* a 0-d index selects, like a number (as in PyTorch) */
    lt_scalar s = lt_tensor_item(k);
    int64_t pos;
    if (lt_scalar_is_none(s) || lt_vm_index_norm(s.v.i, *xdim, p->cur->sizes[*d], &pos) < 0) return -1;
    lt_tensor *nx = grad ? lt_select(p->cur, *d, pos) : lt_strided_select(p->cur, *d, pos);
    if (!nx) return -1;
    lt_tensor_release(p->cur);
    p->cur = nx;
    (*xdim)++;
    return 0;
  }
  lt_tensor *c = lt_tensor_to_dtype_contig(k, LT_INT64);
  lt_tensor *h = c ? lt_tensor_to_host(c) : NULL;
  lt_tensor_release(c);
  if (!h) return -1;
  add_index(p, entry, (*xdim)++, (*d)++, h);
  return 0;
}

/* B, the broadcast shape of the indices, and whether the indexed dims are adjacent */
static int plan_shape(adv_plan *p) {
  p->bn = 0;
  p->adjacent = true;
  for (int j = 0; j < p->m; j++) {
    const lt_tensor *k = p->a[j].idx;
    int64_t out[LT_MAX_DIMS];
    int n = lt_broadcast_shapes("index", p->bn, p->b, k->ndim, k->sizes, out);
    if (n < 0) {
      char b1[128], b2[128];
      return lt_error("index: shape mismatch: the index tensor of entry %d has shape %s, which does not broadcast "
                      "with the shape %s of the indices before it", p->a[j].entry,
                      lt_shape_str(k->ndim, k->sizes, b1, sizeof b1), lt_shape_str(p->bn, p->b, b2, sizeof b2));
    }
    p->bn = n;
    memcpy(p->b, out, sizeof(int64_t) * (size_t)n);
    if (j > 0 && p->a[j].dim != p->a[j - 1].dim + 1) p->adjacent = false;
  }
  return 0;
}

/*
** Parses the index table at kidx against x. `grad`: the basic entries through
** the dispatched view ops (a read or a recorded write), else the stride-only
** ones.
*/
static int plan_build(lua_State *L, lt_tensor *x, int kidx, bool grad, adv_plan *p) {
  memset(p, 0, sizeof *p);
  int n = (int)lua_rawlen(L, kidx), need = 0;
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, kidx, i);
    need += entry_dims(L);
    lua_pop(L, 1);
  }
  if (need > x->ndim)
    return lt_error("index: too many indices: the index table names %d dims, the tensor has %d", need, x->ndim);
  p->cur = x;
  lt_tensor_retain(x);
  int d = 0, xdim = 0;   /* the dim of cur the next entry applies to; the dim of x it names */
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, kidx, i);
    int rc = lt_vm_index_basic(L, i, xdim, grad, &p->cur, &d);
    if (rc == 1) xdim++;
    else if (rc == 0) rc = adv_entry(L, i, grad, p, &xdim, &d);
    lua_pop(L, 1);
    if (rc < 0) { plan_free(p); return -1; }
  }
  if (plan_shape(p) < 0) { plan_free(p); return -1; }
  return 0;
}

/*
** base + sum over the indices of (0-based index) * w[j], for each element of
** B in row-major order: an int64 host tensor [numel(B)]. Checks every index.
*/
static lt_tensor *weighted_positions(adv_plan *p, const int64_t *w, int64_t base) {
  int64_t nb = lt_shape_numel(p->bn, p->b);
  lt_tensor *pos = lt_tensor_new(LT_INT64, lt_device_cpu(), 1, &nb);
  if (!pos) return NULL;
  int64_t *pv = lt_tensor_data(pos);
  for (int64_t i = 0; i < nb; i++) pv[i] = base;
  for (int j = 0; j < p->m; j++) {
    const adv_index *a = &p->a[j];
    lt_tensor *e = lt_strided_expand(a->idx, lt_intlist_make(p->b, p->bn));
    lt_tensor *c = e ? lt_tensor_to_dtype_contig(e, LT_INT64) : NULL;
    lt_tensor_release(e);
    if (!c) { lt_tensor_release(pos); return NULL; }
    const int64_t *kv = lt_tensor_data(c);
    int64_t size = p->cur->sizes[a->dim];
    for (int64_t i = 0; i < nb; i++) {
      int64_t v = kv[i], k = v > 0 ? v - 1 : v + size;
      if (v == 0 || k < 0 || k >= size) {
        lt_tensor_release(c);
        lt_tensor_release(pos);
        return lt_error_null("index: entry %d: index %lld is out of range for dim %d with size %lld%s", a->entry,
                             (long long)v, a->xdim + 1, (long long)size, v == 0 ? " (indices are 1-based)" : "");
      }
      pv[i] += k * w[j];
    }
    lt_tensor_release(c);
  }
  return pos;
}

/* the host tensor t on dev (released either way) */
static lt_tensor *on_device(lt_tensor *t, lt_device dev) {
  if (!t) return NULL;
  lt_tensor *r = lt_tensor_to_device(t, dev);
  lt_tensor_release(t);
  return r;
}

/* where B goes in the result: at the first indexed dim when adjacent, else first */
static int b_position(const adv_plan *p) { return p->adjacent && p->m > 0 ? p->a[0].dim : 0; }

/* the indexed shape: cur's dims that are not indexed, with B at b_position */
static int indexed_shape(const adv_plan *p, int64_t *shape) {
  bool indexed[LT_MAX_DIMS] = {false};
  for (int j = 0; j < p->m; j++) indexed[p->a[j].dim] = true;
  int n = 0, at = b_position(p), others = 0;
  bool placed = false;
  if (p->cur->ndim - p->m + p->bn > LT_MAX_DIMS)
    return lt_error("index: the result would have %d dims, more than %d", p->cur->ndim - p->m + p->bn, LT_MAX_DIMS);
  for (int i = 0; i <= p->cur->ndim; i++) {
    if (!placed && others == at) {
      memcpy(shape + n, p->b, sizeof(int64_t) * (size_t)p->bn);
      n += p->bn;
      placed = true;
    }
    if (i < p->cur->ndim && !indexed[i]) { shape[n++] = p->cur->sizes[i]; others++; }
  }
  return n;
}

static lt_tensor *read_plan(adv_plan *p) {
  lt_tensor *cur = p->cur;
  int m = p->m, at = b_position(p);
  int64_t shape[LT_MAX_DIMS];
  int rn = indexed_shape(p, shape);
  if (rn < 0) return NULL;
  lt_tensor *src;
  if (p->adjacent) {
    src = cur;
    lt_tensor_retain(src);
  } else {   /* the indexed dims first, in order, then the others */
    int64_t perm[LT_MAX_DIMS];
    bool indexed[LT_MAX_DIMS] = {false};
    int n = 0;
    for (int j = 0; j < m; j++) { perm[n++] = p->a[j].dim; indexed[p->a[j].dim] = true; }
    for (int i = 0; i < cur->ndim; i++) if (!indexed[i]) perm[n++] = i;
    src = lt_permute(cur, lt_intlist_make(perm, n));
    if (!src) return NULL;
  }
  int64_t w[LT_MAX_DIMS];   /* row-major weights inside the block of indexed dims */
  for (int j = m - 1; j >= 0; j--) w[j] = j == m - 1 ? 1 : w[j + 1] * src->sizes[at + j + 1];
  lt_tensor *pos = on_device(weighted_positions(p, w, 1), lt_tensor_device(cur));
  lt_tensor *flat = !pos ? NULL : m > 1 ? lt_flatten(src, at, at + m - 1) : src;
  if (flat == src) lt_tensor_retain(flat);
  lt_tensor_release(src);
  lt_tensor *sel = flat ? lt_index_select(flat, at, pos) : NULL;
  lt_tensor_release(flat);
  lt_tensor_release(pos);
  lt_tensor *r = sel ? lt_reshape(sel, lt_intlist_make(shape, rn)) : NULL;
  lt_tensor_release(sel);
  return r;
}

lt_tensor *lt_vm_index_adv_get(lua_State *L, lt_tensor *x, int kidx) {
  adv_plan p;
  if (plan_build(L, x, kidx, true, &p) < 0) return NULL;
  lt_tensor *r;
  if (p.m == 0) {   /* only 0-d indices besides basic entries: a view */
    r = p.cur;
    lt_tensor_retain(r);
  } else {
    r = read_plan(&p);
  }
  plan_free(&p);
  return r;
}

/* offsets (sum of coordinate * rs) of the row-major walk over `n` of cur's dims */
static int64_t *walk_offsets(const lt_tensor *cur, const int *dims, int n, const int64_t *rs, int64_t *count) {
  int64_t total = 1;
  for (int i = 0; i < n; i++) total *= cur->sizes[dims[i]];
  *count = total;
  int64_t *off = malloc(sizeof(int64_t) * (size_t)(total > 0 ? total : 1));
  if (!off) { lt_error("index: out of memory"); return NULL; }
  int64_t coord[LT_MAX_DIMS] = {0}, o = 0;
  for (int64_t e = 0; e < total; e++) {
    off[e] = o;
    for (int i = n - 1; i >= 0; i--) {   /* next coordinate, updating o incrementally */
      int dm = dims[i];
      if (++coord[i] < cur->sizes[dm]) { o += rs[dm]; break; }
      o -= (coord[i] - 1) * rs[dm];
      coord[i] = 0;
    }
  }
  return off;
}

/* the 1-based row-major position in cur of every element of the indexed shape */
static lt_tensor *write_positions(adv_plan *p, const int64_t *shape, int rn) {
  const lt_tensor *cur = p->cur;
  int64_t rs[LT_MAX_DIMS], w[LT_MAX_DIMS];
  lt_contiguous_strides(cur->ndim, cur->sizes, rs);
  bool indexed[LT_MAX_DIMS] = {false};
  for (int j = 0; j < p->m; j++) { w[j] = rs[p->a[j].dim]; indexed[p->a[j].dim] = true; }
  int outer[LT_MAX_DIMS], inner[LT_MAX_DIMS], no = 0, ni = 0, at = b_position(p);
  for (int i = 0; i < cur->ndim; i++) {
    if (indexed[i]) continue;
    if (no < at) outer[no++] = i;
    else inner[ni++] = i;
  }
  lt_tensor *bpos = weighted_positions(p, w, 1);
  if (!bpos) return NULL;
  int64_t n_out, n_in;
  int64_t *oo = walk_offsets(cur, outer, no, rs, &n_out);
  int64_t *io = oo ? walk_offsets(cur, inner, ni, rs, &n_in) : NULL;
  lt_tensor *r = io ? lt_tensor_new(LT_INT64, lt_device_cpu(), rn, shape) : NULL;
  if (r) {
    const int64_t *bv = lt_tensor_data(bpos);
    int64_t *rv = lt_tensor_data(r), nb = bpos->numel, e = 0;
    for (int64_t a = 0; a < n_out; a++)
      for (int64_t b = 0; b < nb; b++)
        for (int64_t c = 0; c < n_in; c++) rv[e++] = oo[a] + bv[b] + io[c];
  }
  free(oo);
  free(io);
  lt_tensor_release(bpos);
  return r;
}

/* the value at vidx as a tensor of cur's dtype and the indexed shape (broadcast) */
static lt_tensor *write_source(lua_State *L, int vidx, const lt_tensor *cur, const int64_t *shape, int rn) {
  lt_scalar s;
  lt_intlist to = lt_intlist_make(shape, rn);
  char b1[128], b2[128];
  if (lt_vm_index_scalar(L, vidx, &s) == 0) {
    lt_tensor *t = on_device(lt_tensor_from_scalar(s, (lt_dtype)cur->dtype), lt_tensor_device(cur));
    lt_tensor *e = t ? lt_strided_expand(t, to) : NULL;
    lt_tensor_release(t);
    return e;
  }
  lt_tensor *v = lt_vm_totensor(L, vidx);
  if (!v)
    return lt_error_null("index: cannot assign a %s to tensor elements (expected a number, boolean or tensor)",
                         lt_vm_toud(L, vidx) ? "freed tensor" : luaL_typename(L, vidx));
  /* right-aligned broadcast; extra leading dims of v must be 1s */
  bool ok = true;
  int extra = v->ndim > rn ? v->ndim - rn : 0;
  for (int i = 0; i < v->ndim && ok; i++) {
    int r = i - (v->ndim - rn);
    ok = i < extra ? v->sizes[i] == 1 : (v->sizes[i] == 1 || v->sizes[i] == shape[r]);
  }
  if (!ok)
    return lt_error_null("index: a tensor of shape %s cannot be assigned to the indexed elements, of shape %s",
                         lt_shape_str(v->ndim, v->sizes, b1, sizeof b1), lt_shape_str(rn, shape, b2, sizeof b2));
  lt_tensor *src = v;
  lt_tensor_retain(src);
  if (extra > 0) {
    lt_tensor *r = lt_reshape(src, lt_intlist_make(v->sizes + extra, v->ndim - extra));
    lt_tensor_release(src);
    if (!(src = r)) return NULL;
  }
  if (src->dtype != cur->dtype || src->storage == cur->storage) {
    /* converted, or copied so that put_ does not read what it overwrites */
    lt_tensor *c = src->dtype != cur->dtype ? lt__to_copy(src, cur->dtype) : lt_clone(src);
    lt_tensor_release(src);
    if (!(src = c)) return NULL;
  }
  lt_tensor *e = lt_expand(src, to);
  lt_tensor_release(src);
  return e;
}

int lt_vm_index_adv_set(lua_State *L, lt_tensor *x, int kidx, int vidx, bool rec) {
  adv_plan p;
  if (plan_build(L, x, kidx, rec, &p) < 0) return -1;
  int64_t shape[LT_MAX_DIMS];
  int rn = indexed_shape(&p, shape);
  lt_tensor *src = rn < 0 ? NULL : write_source(L, vidx, p.cur, shape, rn);
  lt_tensor *pos = src ? on_device(write_positions(&p, shape, rn), lt_tensor_device(p.cur)) : NULL;
  lt_tensor *r = pos ? lt_put_(p.cur, pos, src, false) : NULL;
  lt_tensor_release(pos);
  lt_tensor_release(src);
  plan_free(&p);
  if (!r) return -1;
  lt_tensor_release(r);
  return 0;
}
