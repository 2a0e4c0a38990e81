/*
** lindex.c — Lua's indexing syntax on tensors: x[i], x[{i, {a, b}, ":"}],
** x[mask], x[idx], and assignment through each; the x.T and x.mT fields; the
** varargs forms x:permute(2, 1) and x:flip(1, 2); Torch7's method names for
** the in-place index ops.
**
** Reads go through the dispatched ops (lt_select, lt_narrow, ...) so autograd
** sees them. Writes that autograd must record (grad mode on, and the tensor or
** the assigned value takes part in a graph) build their target view with the
** dispatched view ops and write with in-place ops that have derivatives
** (masked_fill_, masked_scatter_, index_copy_, index_fill_): an in-place op on
** a view rewrites the base's history (CopySlices). Other writes build the view
** with the CPU view kernels, which record nothing, copy or fill into it and
** bump the version counter.
** Every helper here returns -1 with the error slot set instead of raising, so
** the callers can release their temporaries before the Lua error.
*/
#include <string.h>
#include <math.h>
#include "lutorch_vm.h"
#include "ltensor.h"
#include "lcomplex.h"
#include "lt_ops.h"
#include "core/views.h"
#include "core/overlap.h"
#include "autograd/autograd.h"
#include "lindex.h"

/* a read that ends on one element gives a Lua value, unless the graph must be kept */
static bool keeps_graph(const lt_tensor *t) { return t->requires_grad || t->grad_fn != NULL; }

/* must writing v (stack index; a number or a tensor) into x be recorded by autograd? */
static bool records_write(lua_State *L, lt_tensor *x, int vidx) {
  if (!lt_grad_enabled()) return false;
  if (keeps_graph(x)) return true;
  lt_tensor *b = x->autograd ? x->autograd->view_base : NULL;
  if (b && keeps_graph(b)) return true;
  lt_tensor *v = lua_type(L, vidx) == LUA_TUSERDATA ? lt_vm_totensor(L, vidx) : NULL;
  return v && v->requires_grad;
}

int lt_vm_index_int(lua_State *L, int idx, int64_t *out) {
  if (lua_type(L, idx) != LUA_TNUMBER) return -1;
  if (lua_isinteger(L, idx)) { *out = lua_tointeger(L, idx); return 0; }
  double d = lua_tonumber(L, idx);
  if (d != floor(d) || !(d > -9.2e18 && d < 9.2e18)) return -1;
  *out = (int64_t)d;
  return 0;
}

int lt_vm_index_norm(int64_t v, int dim, int64_t size, int64_t *out) {
  int64_t i = v > 0 ? v - 1 : v + size;
  if (v == 0 || i < 0 || i >= size)
    return lt_error("index: index %lld is out of range for dim %d with size %lld%s", (long long)v, dim + 1,
                    (long long)size, v == 0 ? " (indices are 1-based)" : "");
  *out = i;
  return 0;
}

static void push_element(lua_State *L, const lt_tensor *t, int64_t off) {
  lt_dtype dt = (lt_dtype)t->dtype;
  /* a meta tensor has no data (torch.compile's trace: a graph break, not a read of NULL) */
  if (LT_IS_META(t)) luaL_error(L, "index: cannot run on meta tensors: its result is a value read from the data");
  lt_vm_push_element(L, dt, (const char *)t->storage->data + off * (int64_t)lt_dtype_size(dt));
}

int lt_vm_index_scalar(lua_State *L, int vidx, lt_scalar *s) {
  int ty = lua_type(L, vidx);
  if (ty == LUA_TBOOLEAN) { *s = lt_scalar_bool(lua_toboolean(L, vidx)); return 0; }
  if (ty != LUA_TNUMBER) return -1;
  *s = lua_isinteger(L, vidx) ? lt_scalar_int(lua_tointeger(L, vidx)) : lt_scalar_float(lua_tonumber(L, vidx));
  return 0;
}

static int store_scalar(const lt_tensor *t, int64_t off, lt_scalar s) {
  lt_dtype dt = (lt_dtype)t->dtype;
  if (LT_IS_META(t)) return 0;   /* no data: the store is checked, not done (torch.compile's trace) */
  char *p = (char *)t->storage->data + off * (int64_t)lt_dtype_size(dt);
  if (s.type == LT_SCALAR_FLOAT) {
    lt_dtype_store_double(dt, p, s.v.f);   /* saturates into integer dtypes, like fill_ */
  } else {
    lt_dtype_store_int64(dt, p, s.v.i);
  }
  return 0;
}

/*
** A {first, last} or {i} range (inclusive, 1-based, negatives from the end)
** on the top of the stack, over a dim of `size`: *start (0-based) and *len.
** The bounds clamp to the dim as Python's slices do, so {61, 64} on 62 rows
** gives the last two and a range past the end is empty; only 0 is an error.
*/
static int range_bounds(lua_State *L, int entry, int64_t size, int64_t *start, int64_t *len) {
  int m = (int)lua_rawlen(L, -1);
  int64_t a = 1, b = -1;
  if (m > 2)   /* Torch7 reads {a, b} as a range: a longer list must not be guessed at */
    return lt_error("index: entry %d is a table of %d values, but a table in an index table is a {first, last} "
                    "range; write a list of indices as torch.tensor{...}", entry, m);
  for (int j = 1; j <= m; j++) {
    lua_rawgeti(L, -1, j);
    bool number = lua_type(L, -1) == LUA_TNUMBER;
    const char *tname = luaL_typename(L, -1);
    int bad = lt_vm_index_int(L, -1, j == 1 ? &a : &b);
    lua_pop(L, 1);
    if (bad)
      return lt_error("index: entry %d: a range {first, last} holds integers, got a %s at position %d", entry,
                      number ? "non-integer number" : tname, j);
  }
  if (m == 1) b = a;
  if (a == 0 || b == 0)
    return lt_error("index: entry %d: range {%lld, %lld} holds 0 (indices are 1-based)", entry, (long long)a,
                    (long long)b);
  int64_t lo = a > 0 ? a - 1 : a + size, hi = b > 0 ? b : b + size + 1;   /* [lo, hi) */
  lo = lo < 0 ? 0 : lo > size ? size : lo;
  hi = hi < 0 ? 0 : hi > size ? size : hi;
  *start = lo;
  *len = hi > lo ? hi - lo : 0;
  return 0;
}

int lt_vm_index_basic(lua_State *L, int entry, int xdim, bool grad, lt_tensor **cur, int *d) {
  int ty = lua_type(L, -1);
  lt_tensor *c = *cur, *nx = NULL;
  if (ty == LUA_TSTRING && strcmp(lua_tostring(L, -1), ":") == 0) {
    if (*d >= c->ndim) return lt_error("index: too many indices at entry %d", entry);
    (*d)++;
    return 1;
  }
  if (ty != LUA_TNUMBER && ty != LUA_TTABLE) return 0;
  if (*d >= c->ndim) return lt_error("index: too many indices at entry %d", entry);
  if (ty == LUA_TNUMBER) {
    int64_t v, k;
    if (lt_vm_index_int(L, -1, &v) < 0) return lt_error("index: entry %d of the index table is not an integer", entry);
    if (lt_vm_index_norm(v, xdim, c->sizes[*d], &k) < 0) return -1;
    nx = grad ? lt_select(c, *d, k) : lt_strided_select(c, *d, k);
  } else {
    int64_t start = 0, len = 0;
    if (lua_rawlen(L, -1) == 0) { (*d)++; return 1; }   /* {}: the whole dim */
    if (range_bounds(L, entry, c->sizes[*d], &start, &len) < 0) return -1;
    nx = grad ? lt_narrow(c, *d, start, len) : lt_strided_narrow(c, *d, start, len);
    (*d)++;
  }
  if (!nx) return -1;
  lt_tensor_release(c);
  *cur = nx;
  return 1;
}

/*
** The view that a table key selects. `grad`: through the dispatched ops (a
** read, or a recorded write), else through the CPU kernels (a write target).
** With want_elem, when every entry is a number naming one element, *elem gets
** its storage offset and *res stays NULL, so single-element reads and writes
** allocate nothing.
*/
static int table_view(lua_State *L, lt_tensor *x, int kidx, bool grad, bool want_elem, lt_tensor **res,
                      int64_t *elem) {
  *res = NULL;
  int n = (int)lua_rawlen(L, kidx);
  if (n > x->ndim)
    return lt_error("index: too many indices (%d) for a tensor with %d dim%s", n, x->ndim, x->ndim == 1 ? "" : "s");
  /* fast path: all numbers */
  bool all_numbers = n == x->ndim && n > 0;
  for (int i = 1; i <= n && all_numbers; i++) {
    lua_rawgeti(L, kidx, i);
    all_numbers = lua_type(L, -1) == LUA_TNUMBER;
    lua_pop(L, 1);
  }
  if (all_numbers && want_elem) {
    int64_t off = x->offset;
    for (int i = 0; i < n; i++) {
      int64_t v, k;
      lua_rawgeti(L, kidx, i + 1);
      int bad = lt_vm_index_int(L, -1, &v);
      lua_pop(L, 1);
      if (bad) return lt_error("index: entry %d of the index table is not an integer", i + 1);
      if (lt_vm_index_norm(v, i, x->sizes[i], &k) < 0) return -1;
      off += k * x->strides[i];
    }
    *elem = off;
    return 0;
  }
  lt_tensor *cur = x;
  lt_tensor_retain(cur);
  int d = 0;   /* the dim of cur the next entry applies to */
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, kidx, i);
    int rc = lt_vm_index_basic(L, i, i - 1, grad, &cur, &d);
    if (rc == 0)
      rc = lt_error("index: entry %d of the index table must be a number, a {first, last} range, \":\", "
                    "an index tensor or a mask, got %s", i, luaL_typename(L, -1));
    lua_pop(L, 1);
    if (rc < 0) { lt_tensor_release(cur); return -1; }
  }
  if (cur == x) {   /* only whole dims: still a new view */
    lt_tensor_release(cur);
    cur = grad ? lt_narrow(x, 0, 0, x->sizes[0]) : lt_strided_narrow(x, 0, 0, x->sizes[0]);
    if (!cur) return -1;
  }
  *res = cur;
  return 0;
}

/* a uint8 mask (Torch7's ByteTensor masks) as bool; other tensors retained as they are */
static lt_tensor *mask_or_index(lt_tensor *k) {
  if (k->dtype == LT_UINT8) return lt_tensor_clone_as(k, LT_BOOL);
  lt_tensor_retain(k);
  return k;
}

static int check_key_dtype(const lt_tensor *k) {
  if (k->dtype == LT_BOOL || k->dtype == LT_INT64 || k->dtype == LT_INT32) return 0;
  return lt_error("index: an index tensor must be int64 (indices) or bool (a mask), got %s",
                  lt_dtype_name((lt_dtype)k->dtype));
}

/* mask over the leading dims of x: check the shape */
static int check_mask_shape(const lt_tensor *x, const lt_tensor *m) {
  bool ok = m->ndim <= x->ndim;
  for (int i = 0; ok && i < m->ndim; i++) ok = m->sizes[i] == x->sizes[i];
  if (!ok) {
    char b1[128], b2[128];
    return lt_error("index: mask of shape %s does not match the leading dims of the tensor's shape %s",
                    lt_shape_str(m->ndim, m->sizes, b1, sizeof b1), lt_shape_str(x->ndim, x->sizes, b2, sizeof b2));
  }
  return 0;
}

/* 1-D int64 positions (1-based) of the true entries of a mask, over its flattened shape */
static lt_tensor *mask_positions(lt_tensor *m) {
  int64_t all = -1;
  lt_tensor *flat = lt_reshape(m, lt_intlist_make(&all, 1));
  if (!flat) return NULL;
  lt_tensor *nz = lt_nonzero(flat);
  lt_tensor_release(flat);
  if (!nz) return NULL;
  lt_tensor *r = lt_reshape(nz, lt_intlist_make(&all, 1));
  lt_tensor_release(nz);
  return r;
}

/* x[k] for a tensor k */
static lt_tensor *index_by_tensor(lt_tensor *x, lt_tensor *k) {
  if (check_key_dtype(k) < 0) return NULL;
  if (x->ndim == 0) return lt_error_null("index: a 0-d tensor cannot be indexed");
  if (k->dtype == LT_BOOL) {
    if (check_mask_shape(x, k) < 0) return NULL;
    if (k->ndim == x->ndim) return lt_masked_select(x, k);
    lt_tensor *pos = mask_positions(k);
    lt_tensor *xf = pos ? lt_flatten(x, 0, k->ndim - 1) : NULL;
    lt_tensor *r = xf ? lt_index_select(xf, 0, pos) : NULL;
    lt_tensor_release(xf);
    lt_tensor_release(pos);
    return r;
  }
  if (k->ndim <= 1) return lt_index_select(x, 0, k);
  /* an n-d index: the result has k's shape followed by x's other dims */
  int64_t all = -1, shape[LT_MAX_DIMS];
  if (k->ndim + x->ndim - 1 > LT_MAX_DIMS) return lt_error_null("index: the result would have too many dims");
  lt_tensor *kf = lt_reshape(k, lt_intlist_make(&all, 1));
  lt_tensor *sel = kf ? lt_index_select(x, 0, kf) : NULL;
  lt_tensor_release(kf);
  if (!sel) return NULL;
  int n = 0;
  for (int i = 0; i < k->ndim; i++) shape[n++] = k->sizes[i];
  for (int i = 1; i < x->ndim; i++) shape[n++] = x->sizes[i];
  lt_tensor *r = lt_view(sel, lt_intlist_make(shape, n));
  lt_tensor_release(sel);
  return r;
}

static int l_index(lua_State *L) {
  lt_tensor *x = lt_vm_totensor(L, 1);
  if (!x) return luaL_error(L, "index: the tensor has been freed");
  int ty = lua_type(L, 2);
  if (ty == LUA_TNUMBER) {
    int64_t v, k;
    if (lt_vm_index_int(L, 2, &v) < 0) return luaL_error(L, "index: index %s is not an integer", lua_tostring(L, 2));
    if (x->ndim == 0) return luaL_error(L, "index: a 0-d tensor cannot be indexed (use :item())");
    if (lt_vm_index_norm(v, 0, x->sizes[0], &k) < 0) return lt_vm_raise(L, NULL);
    if (x->ndim == 1 && !keeps_graph(x)) { push_element(L, x, x->offset + k * x->strides[0]); return 1; }
    lt_vm_push_tensor(L, lt_select(x, 0, k));
    return 1;
  }
  if (ty == LUA_TTABLE) {
    lt_tensor *r;
    int64_t elem;
    if (x->ndim == 0) return luaL_error(L, "index: a 0-d tensor cannot be indexed (use :item())");
    if (lt_vm_index_is_advanced(L, 2)) {
      r = lt_vm_index_adv_get(L, x, 2);
      if (!r) return lt_vm_raise(L, "index");
      lt_vm_push_tensor(L, r);
      return 1;
    }
    if (table_view(L, x, 2, true, !keeps_graph(x), &r, &elem) < 0) return lt_vm_raise(L, "index");
    if (!r) { push_element(L, x, elem); return 1; }
    lt_vm_push_tensor(L, r);
    return 1;
  }
  lt_tensor *kt = lt_vm_totensor(L, 2);
  if (kt) {
    if (kt->ndim == 0 && (kt->dtype == LT_INT64 || kt->dtype == LT_INT32)) {   /* like a number */
      int64_t v = lt_tensor_get_int64(kt, 0), k;
      if (x->ndim == 0) return luaL_error(L, "index: a 0-d tensor cannot be indexed (use :item())");
      if (lt_vm_index_norm(v, 0, x->sizes[0], &k) < 0) return lt_vm_raise(L, NULL);
      lt_vm_push_tensor(L, lt_select(x, 0, k));
      return 1;
    }
    lt_tensor *key = mask_or_index(kt);
    lt_tensor *r = key ? index_by_tensor(x, key) : NULL;
    lt_tensor_release(key);
    if (!r) return lt_vm_raise(L, "index");
    lt_vm_push_tensor(L, r);
    return 1;
  }
  if (lt_vm_toud(L, 2)) return luaL_error(L, "index: the index tensor has been freed");
  return luaL_error(L, "index: cannot index a tensor with a %s", luaL_typename(L, 2));
}

/* dst[...] = the Lua value at vidx (number, boolean or tensor, broadcast) */
static int assign_value(lua_State *L, lt_tensor *dst, int vidx) {
  lt_scalar s;
  if (lt_vm_index_scalar(L, vidx, &s) == 0) return lt_tensor_fill_(dst, s);
  double re, im;
  if (lt_vm_tocomplex(L, vidx, &re, &im)) {   /* a complex value: as a 0-d complex tensor */
    if (!lt_dtype_is_complex((lt_dtype)dst->dtype))
      return lt_error("index: cannot assign a complex value to a %s tensor", lt_dtype_name((lt_dtype)dst->dtype));
    lt_tensor *w = lt_vm_complex_wrapped(re, im);
    int rc = w ? lt_tensor_copy_(dst, w) : -1;
    lt_tensor_release(w);
    return rc;
  }
  lt_tensor *v = lt_vm_totensor(L, vidx);
  if (v && lt_dtype_is_complex((lt_dtype)v->dtype) && !lt_dtype_is_complex((lt_dtype)dst->dtype))
    return lt_error("index: cannot assign %s values to a %s tensor (it would discard the imaginary part)",
                    lt_dtype_name((lt_dtype)v->dtype), lt_dtype_name((lt_dtype)dst->dtype));
  /* as copy_ would: elements sharing a location (an expanded x) get whichever value lands last */
  if (v) return lt_check_overlap_dst("index", NULL, -1, dst) < 0 ? -1 : lt_tensor_copy_(dst, v);
  return lt_error("index: cannot assign a %s to tensor elements (expected a number, boolean or tensor)",
                  lt_vm_toud(L, vidx) ? "freed tensor" : luaL_typename(L, vidx));
}

/* a 0-d bool true: a mask that selects every element */
static lt_tensor *all_true(void) {
  lt_tensor *m = lt_tensor_new(LT_BOOL, lt_device_cpu(), 0, NULL);
  if (m) *(bool *)lt_tensor_data(m) = true;
  return m;
}

/* v broadcast to dst's shape with recorded ops (v's extra leading dims must be 1s) */
static lt_tensor *broadcast_recorded(lt_tensor *v, const lt_tensor *dst) {
  lt_tensor *src = v;
  lt_tensor_retain(src);
  if (v->ndim > dst->ndim) {
    int extra = v->ndim - dst->ndim;
    for (int i = 0; i < extra; i++) {
      if (v->sizes[i] != 1) {
        char b1[128], b2[128];
        lt_tensor_release(src);
        return lt_error_null("index: a tensor of shape %s cannot be assigned to elements of shape %s",
                             lt_shape_str(v->ndim, v->sizes, b1, sizeof b1), lt_shape_str(dst->ndim, dst->sizes, b2, sizeof b2));
      }
    }
    lt_tensor_release(src);
    src = lt_reshape(v, lt_intlist_make(v->sizes + extra, dst->ndim));
    if (!src) return NULL;
  }
  lt_tensor *e = lt_expand(src, lt_intlist_make(dst->sizes, dst->ndim));
  lt_tensor_release(src);
  if (e && e->storage == dst->storage && e->ndim > 0) {
    /* reading and writing one storage: copy the value first (cat records the copy) */
    lt_tensor *c = lt_cat(&e, 1, 0);
    lt_tensor_release(e);
    e = c;
  }
  return e;
}

/* dst[...] = the Lua value at vidx, recorded by autograd; dst comes from the dispatched view ops,
** so an in-place op on it rewrites its base's history */
static int assign_value_recorded(lua_State *L, lt_tensor *dst, int vidx) {
  lt_scalar s;
  bool scalar = lt_vm_index_scalar(L, vidx, &s) == 0;
  lt_tensor *v = scalar ? NULL : lt_vm_totensor(L, vidx);
  if (!scalar && !v)
    return lt_error("index: cannot assign a %s to tensor elements (expected a number, boolean or tensor)",
                    lt_vm_toud(L, vidx) ? "freed tensor" : luaL_typename(L, vidx));
  lt_tensor *m = all_true();
  if (!m) return -1;
  lt_tensor *r = NULL;
  if (scalar) {
    r = lt_masked_fill_(dst, m, s);
  } else {
    lt_tensor *e = broadcast_recorded(v, dst);
    r = e ? lt_masked_scatter_(dst, m, e) : NULL;
    lt_tensor_release(e);
  }
  lt_tensor_release(m);
  if (!r) return -1;
  lt_tensor_release(r);
  return 0;
}

/* x[k] = v for a tensor k */
static int assign_by_tensor(lua_State *L, lt_tensor *x, lt_tensor *k, int vidx, bool rec) {
  if (check_key_dtype(k) < 0) return -1;
  if (x->ndim == 0) return lt_error("index: a 0-d tensor cannot be indexed");
  lt_scalar s;
  bool scalar = lt_vm_index_scalar(L, vidx, &s) == 0;
  lt_tensor *v = scalar ? NULL : lt_vm_totensor(L, vidx);
  if (!scalar && !v)
    return lt_error("index: cannot assign a %s to tensor elements (expected a number, boolean or tensor)",
                    luaL_typename(L, vidx));
  if (v && v->numel == 1 && k->dtype == LT_BOOL && !(rec && v->requires_grad)) {
    s = lt_tensor_item(v);
    if (lt_scalar_is_none(s)) return -1;
    scalar = true;
  }
  lt_tensor *r = NULL;
  if (k->dtype == LT_BOOL) {
    if (check_mask_shape(x, k) < 0) return -1;
    if (scalar || v->numel == 1) {
      /* a mask over leading dims broadcasts over the trailing ones */
      int64_t shape[LT_MAX_DIMS];
      for (int i = 0; i < x->ndim; i++) shape[i] = i < k->ndim ? k->sizes[i] : 1;
      lt_tensor *mk = lt_strided_view(k, lt_intlist_make(shape, x->ndim));
      /* a one-element value that requires grad goes as a tensor, to get its gradient */
      r = !mk ? NULL : scalar ? lt_masked_fill_(x, mk, s) : lt_masked_fill_t_(x, mk, v);
      lt_tensor_release(mk);
    } else if (k->ndim == x->ndim) {
      r = lt_masked_scatter_(x, k, v);
    } else {
      lt_tensor *pos = mask_positions(k);
      if (!pos) return -1;
      int64_t shape[LT_MAX_DIMS];
      int n = 0;
      shape[n++] = pos->numel;
      for (int i = k->ndim; i < x->ndim; i++) shape[n++] = x->sizes[i];
      int64_t fs[LT_MAX_DIMS];
      fs[0] = -1;
      for (int i = 1; i < n; i++) fs[i] = shape[i];
      /* recorded: a tracked view, so that index_copy_ on it rewrites x's history */
      lt_tensor *xf = rec ? lt_view(x, lt_intlist_make(fs, n)) : lt_strided_view(x, lt_intlist_make(fs, n));
      lt_tensor *ve = xf ? lt_expand(v, lt_intlist_make(shape, n)) : NULL;
      lt_tensor *rr = ve ? lt_index_copy_(xf, 0, pos, ve) : NULL;
      if (rr) { lt_tensor_release(rr); r = x; lt_tensor_retain(r); }
      lt_tensor_release(ve);
      lt_tensor_release(xf);
      lt_tensor_release(pos);
    }
  } else if (k->ndim == 0) {
    int64_t pos;
    if (lt_vm_index_norm(lt_tensor_get_int64(k, 0), 0, x->sizes[0], &pos) < 0) return -1;
    lt_tensor *view = rec ? lt_select(x, 0, pos) : lt_strided_select(x, 0, pos);
    if (!view) return -1;
    int rc = rec ? assign_value_recorded(L, view, vidx) : assign_value(L, view, vidx);
    lt_tensor_release(view);
    if (rc == 0 && !rec) lt_tensor_bump_version(x);
    return rc;
  } else {
    int64_t all = -1;
    lt_tensor *kf = lt_reshape(k, lt_intlist_make(&all, 1));
    if (!kf) return -1;
    if (scalar) {
      r = lt_index_fill_(x, 0, kf, s);
    } else {
      /* v broadcast to [k's shape..., x's other dims], then rows for index_copy_ */
      int64_t shape[LT_MAX_DIMS], rows[LT_MAX_DIMS];
      int n = 0, m = 0;
      if (k->ndim + x->ndim - 1 > LT_MAX_DIMS) { lt_tensor_release(kf); return lt_error("index: too many dims"); }
      for (int i = 0; i < k->ndim; i++) shape[n++] = k->sizes[i];
      rows[m++] = kf->numel;
      for (int i = 1; i < x->ndim; i++) { shape[n++] = x->sizes[i]; rows[m++] = x->sizes[i]; }
      lt_tensor *ve = lt_expand(v, lt_intlist_make(shape, n));
      lt_tensor *vr = ve ? lt_reshape(ve, lt_intlist_make(rows, m)) : NULL;
      r = vr ? lt_index_copy_(x, 0, kf, vr) : NULL;
      lt_tensor_release(vr);
      lt_tensor_release(ve);
    }
    lt_tensor_release(kf);
  }
  if (!r) return -1;
  lt_tensor_release(r);
  return 0;
}

static int l_newindex(lua_State *L) {
  lt_tensor *x = lt_vm_totensor(L, 1);
  if (!x) return luaL_error(L, "index: the tensor has been freed");
  if (x->ndim == 0) return luaL_error(L, "index: a 0-d tensor cannot be indexed (use :fill_())");
  int ty = lua_type(L, 2);
  bool rec = records_write(L, x, 3);
  if (rec && lt_check_inplace("index", x) < 0) return lt_vm_raise(L, NULL);
  if (ty == LUA_TNUMBER) {
    int64_t v, k;
    if (lt_vm_index_int(L, 2, &v) < 0) return luaL_error(L, "index: index %s is not an integer", lua_tostring(L, 2));
    if (lt_vm_index_norm(v, 0, x->sizes[0], &k) < 0) return lt_vm_raise(L, NULL);
    lt_scalar s;
    if (rec) {
      lt_tensor *view = lt_select(x, 0, k);
      int rc = view ? assign_value_recorded(L, view, 3) : -1;
      lt_tensor_release(view);
      return rc < 0 ? lt_vm_raise(L, "index") : 0;
    }
    if (x->ndim == 1 && lt_vm_index_scalar(L, 3, &s) == 0) {
      if (store_scalar(x, x->offset + k * x->strides[0], s) < 0) return lt_vm_raise(L, NULL);
      lt_tensor_bump_version(x);
      return 0;
    }
    lt_tensor *view = lt_strided_select(x, 0, k);
    if (!view) return lt_vm_raise(L, "index");
    int rc = assign_value(L, view, 3);
    lt_tensor_release(view);
    if (rc < 0) return lt_vm_raise(L, "index");
    lt_tensor_bump_version(x);
    return 0;
  }
  if (ty == LUA_TTABLE && lt_vm_index_is_advanced(L, 2)) {
    if (lt_vm_index_adv_set(L, x, 2, 3, rec) < 0) return lt_vm_raise(L, "index");
    return 0;
  }
  if (ty == LUA_TTABLE) {
    lt_tensor *view;
    int64_t elem;
    if (table_view(L, x, 2, rec, !rec, &view, &elem) < 0) return lt_vm_raise(L, "index");
    int rc;
    lt_scalar s;
    if (rec) {
      rc = assign_value_recorded(L, view, 3);
      lt_tensor_release(view);
      return rc < 0 ? lt_vm_raise(L, "index") : 0;
    }
    if (!view) {
      rc = lt_vm_index_scalar(L, 3, &s) == 0 ? store_scalar(x, elem, s) : -2;
      if (rc == -2) {   /* a tensor into one element */
        int64_t one = 1;
        view = lt_tensor_alias(x, elem, 0, &one, NULL);
        rc = view ? assign_value(L, view, 3) : -1;
      }
    } else {
      rc = assign_value(L, view, 3);
    }
    lt_tensor_release(view);
    if (rc < 0) return lt_vm_raise(L, "index");
    lt_tensor_bump_version(x);
    return 0;
  }
  lt_tensor *kt = lt_vm_totensor(L, 2);
  if (kt) {
    lt_tensor *key = mask_or_index(kt);
    int rc = key ? assign_by_tensor(L, x, key, 3, rec) : -1;
    lt_tensor_release(key);
    if (rc < 0) return lt_vm_raise(L, "index");
    return 0;
  }
  if (lt_vm_toud(L, 2)) return luaL_error(L, "index: the index tensor has been freed");
  return luaL_error(L, "index: cannot index a tensor with a %s", luaL_typename(L, 2));
}

/* ---- fields ---- */

static int field_T(lua_State *L) {
  lt_tensor *x = lt_vm_checktensor(L, 1, "T", "self");
  int64_t perm[LT_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) perm[i] = x->ndim - 1 - i;
  lt_vm_push_tensor(L, lt_permute(x, lt_intlist_make(perm, x->ndim)));
  return 1;
}

static int field_mT(lua_State *L) {
  lt_tensor *x = lt_vm_checktensor(L, 1, "mT", "self");
  if (x->ndim < 2) return luaL_error(L, "mT: the tensor must have at least 2 dims, got %d", x->ndim);
  lt_vm_push_tensor(L, lt_transpose(x, -2, -1));
  return 1;
}

/* x.mH: the conjugate transpose of the last two dims (adjoint) */
static int field_mH(lua_State *L) {
  lt_tensor *x = lt_vm_checktensor(L, 1, "mH", "self");
  if (x->ndim < 2) return luaL_error(L, "mH: the tensor must have at least 2 dims, got %d", x->ndim);
  lt_vm_push_tensor(L, lt_adjoint(x));   /* raises the error on NULL */
  return 1;
}

/* x:permute(2, 1): pack trailing numbers into the table the generated binding expects */
static int dims_varargs(lua_State *L) {
  int top = lua_gettop(L);
  if (top >= 3) {
    bool numbers = true;
    for (int i = 2; i <= top && numbers; i++) numbers = lua_type(L, i) == LUA_TNUMBER;
    if (numbers) {
      lua_createtable(L, top - 1, 0);
      for (int i = 2; i <= top; i++) { lua_pushvalue(L, i); lua_rawseti(L, -2, i - 1); }
      lua_replace(L, 2);
      lua_settop(L, 2);
    }
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

static void wrap_varargs(lua_State *L, int tbl, const char *name) {
  if (lua_getfield(L, tbl, name) != LUA_TFUNCTION) { lua_pop(L, 1); return; }
  lua_pushcclosure(L, dims_varargs, 1);
  lua_setfield(L, tbl, name);
}

void lt_vm_open_index(lua_State *L) {
  int mod = lua_gettop(L);
  lt_vm_index_hook = l_index;
  lt_vm_newindex_hook = l_newindex;
  lt_vm_push_methods(L);
  int methods = lua_gettop(L);
  lua_getfield(L, methods, "_fields");
  lua_pushcfunction(L, field_T); lua_setfield(L, -2, "T");
  lua_pushcfunction(L, field_mT); lua_setfield(L, -2, "mT");
  lua_pushcfunction(L, field_mH); lua_setfield(L, -2, "mH");
  lua_pop(L, 1);
  static const char *const varargs_ops[] = {"permute", "flip", NULL};
  for (int i = 0; varargs_ops[i]; i++) {
    wrap_varargs(L, methods, varargs_ops[i]);
    wrap_varargs(L, mod, varargs_ops[i]);
  }
  /* Torch7 names of in-place ops (its x:indexCopy(...) modifies x) */
  static const char *const t7[][2] = {
    {"indexCopy", "index_copy_"}, {"indexAdd", "index_add_"}, {"indexFill", "index_fill_"},
    {"maskedFill", "masked_fill_"}, {"maskedCopy", "masked_scatter_"}, {"maskedSelect", "masked_select"},
    {"scatterAdd", "scatter_add_"}, {NULL, NULL}
  };
  for (int i = 0; t7[i][0]; i++) {
    if (lua_getfield(L, methods, t7[i][1]) == LUA_TFUNCTION) lua_setfield(L, methods, t7[i][0]);
    else lua_pop(L, 1);
  }
  lua_pop(L, 1);
}
