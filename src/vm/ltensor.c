/*
** ltensor.c — the tensor userdata: metatable, fields, operators, GC
** accounting, and dtype/device values.
*/
#include <string.h>
#include <ctype.h>
#include <stdlib.h>
#include "ltensor.h"
#include "lcomplex.h"
#include "largs.h"
#include "lt_ops.h"
#include "core/backend.h"
#include "lt7.h"

int (*lt_vm_index_hook)(lua_State *L) = NULL;
int (*lt_vm_newindex_hook)(lua_State *L) = NULL;
int (*lt_vm_tostring_hook)(lua_State *L) = NULL;

/* Registry keys of the metatable and the method table: the addresses of these
** two variables, the same in every lua_State (a luaL_ref number would be valid
** in the state that made it only, and an embedding program may open several). */
static char tensor_mt_key;
static char methods_key;

/* ---- GC accounting: the collector cannot see storage bytes on its own ---- */

static atomic_llong external_bytes;       /* live storage bytes */
static atomic_llong allocated_since_step; /* bytes allocated since the last GC step */
static int64_t gc_threshold = 64 << 20;   /* full collection when live bytes pass this */
#define GC_MIN_THRESHOLD ((int64_t)64 << 20)
#define GC_STEP_BYTES ((int64_t)4 << 20)

static void storage_bytes(int64_t delta) {
  atomic_fetch_add_explicit(&external_bytes, delta, memory_order_relaxed);
  if (delta > 0) atomic_fetch_add_explicit(&allocated_since_step, delta, memory_order_relaxed);
}

void lt_vm_gc_account(lua_State *L) {
  int64_t since = atomic_load_explicit(&allocated_since_step, memory_order_relaxed);
  if (since < GC_STEP_BYTES) return;
  atomic_store_explicit(&allocated_since_step, 0, memory_order_relaxed);
  int64_t live = atomic_load_explicit(&external_bytes, memory_order_relaxed);
  if (live > gc_threshold) {
    lua_gc(L, LUA_GCCOLLECT);
    live = atomic_load_explicit(&external_bytes, memory_order_relaxed);
    /* the next full collection once a quarter of the live bytes (at least
    ** 64 MiB) has piled up: a big temporary that is still an argument when the
    ** next one is made survives two young collections and turns old, so only a
    ** full collection frees it; letting twice the live bytes pile up first
    ** doubled a training script's peak memory */
    gc_threshold = live + (live / 4 > GC_MIN_THRESHOLD ? live / 4 : GC_MIN_THRESHOLD);
  } else {
    /* advance the incremental collector as if the bytes were Lua's own */
    lua_gc(L, LUA_GCSTEP, (int)(since >> 10));
  }
}

/* ---- userdata ---- */

lt_ud *lt_vm_toud(lua_State *L, int idx) {
  if (lua_type(L, idx) != LUA_TUSERDATA || lua_rawlen(L, idx) != sizeof(lt_ud)) return NULL;
  lt_ud *u = lua_touserdata(L, idx);
  return u->magic == LT_TENSOR_MAGIC ? u : NULL;
}

lt_tensor *lt_vm_totensor(lua_State *L, int idx) {
  lt_ud *u = lt_vm_toud(L, idx);
  return u ? u->t : NULL;
}

/* A result whose userdata Lua could not allocate: lua_newuserdatauv raised
** "not enough memory" with the only reference still in C. It is parked here
** as the allocation is tried and released by the next push on this thread,
** so a failed push costs at most one tensor for a while, not a leak; a pcall
** around every push would cost each small op. */
static _Thread_local lt_tensor *unowned;

static void release_unowned(void) {
  lt_tensor *t = unowned;
  unowned = NULL;
  if (t) lt_tensor_release(t);
}

void lt_vm_push_tensor(lua_State *L, lt_tensor *t) {
  if (!t) { lt_vm_raise(L, NULL); return; }
  if (unowned) release_unowned();
  unowned = t;
  lt_ud *u = lua_newuserdatauv(L, sizeof(lt_ud), 0);
  unowned = NULL;
  u->magic = LT_TENSOR_MAGIC;
  u->t = t;
  lt_vm_tensor_made = 1;   /* Torch7 mode cannot be chosen after this (lt7.c) */
  lua_rawgetp(L, LUA_REGISTRYINDEX, &tensor_mt_key);
  lua_setmetatable(L, -2);
  lt_vm_gc_account(L);
}

int lt_vm_raise(lua_State *L, const char *op) {
  const char *msg = lt_error_message();
  if (op) {
    size_t n = strlen(op);
    if (!(strncmp(msg, op, n) == 0 && msg[n] == ':')) return luaL_error(L, "%s: %s", op, msg);
  }
  return luaL_error(L, "%s", msg);
}

lt_tensor *lt_vm_checktensor(lua_State *L, int idx, const char *op, const char *name) {
  lt_tensor *t = lt_vm_totensor(L, idx);
  if (t) return t;
  if (lt_vm_toud(L, idx)) luaL_error(L, "%s: argument '%s' is a freed tensor", op, name);
  luaL_error(L, "%s: argument '%s' must be a tensor, got %s", op, name, luaL_typename(L, idx));
  return NULL;
}

static lt_tensor *self_tensor(lua_State *L, const char *op) {
  return lt_vm_checktensor(L, 1, op, "self");
}

static int t_gc(lua_State *L) {
  lt_ud *u = lt_vm_toud(L, 1);
  if (u && u->t) { lt_tensor_release(u->t); u->t = NULL; }
  return 0;
}

/* ---- dtype and device values ---- */

static char dtype_key;   /* registry (by address): table dtype index -> dtype value */

void lt_vm_push_dtype(lua_State *L, lt_dtype dt) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &dtype_key);
  lua_rawgeti(L, -1, (lua_Integer)dt + 1);
  lua_remove(L, -2);
}

int lt_vm_todtype(lua_State *L, int idx) {
  int t = lua_type(L, idx);
  if (t == LUA_TSTRING) return lt_dtype_from_name(lua_tostring(L, idx));
  if (t == LUA_TTABLE) {
    int r = -1;
    if (lua_getfield(L, idx, "_dtype_id") == LUA_TNUMBER) r = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    return r;
  }
  return -1;
}

static int dtype_tostring(lua_State *L) {
  lua_getfield(L, 1, "name");
  lua_pushfstring(L, "torch.%s", lua_tostring(L, -1));
  return 1;
}

static void open_dtypes(lua_State *L) {
  lua_createtable(L, LT_NUM_DTYPES, 0);            /* by index */
  lua_createtable(L, 0, 2);                         /* shared metatable */
  lua_pushcfunction(L, dtype_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pushstring(L, "dtype");
  lua_setfield(L, -2, "__name");
  for (int i = 0; i < LT_NUM_DTYPES; i++) {
    lua_createtable(L, 0, 4);
    lua_pushinteger(L, i);
    lua_setfield(L, -2, "_dtype_id");
    lua_pushstring(L, lt_dtype_name((lt_dtype)i));
    lua_setfield(L, -2, "name");
    lua_pushboolean(L, lt_dtype_is_float((lt_dtype)i));
    lua_setfield(L, -2, "is_floating_point");
    lua_pushboolean(L, lt_dtype_is_complex((lt_dtype)i));
    lua_setfield(L, -2, "is_complex");
    lua_pushinteger(L, (lua_Integer)lt_dtype_size((lt_dtype)i));
    lua_setfield(L, -2, "itemsize");
    lua_pushvalue(L, -2);
    lua_setmetatable(L, -2);
    lua_rawseti(L, -3, i + 1);
  }
  lua_pop(L, 1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &dtype_key);
}

static char device_key;   /* registry: "cpu"/"cuda:0" -> interned device value */

/* the device object of text key (cached per text); index < 0: none (a bare
** "cuda", which means the current device wherever it is used) */
static void push_device_obj(lua_State *L, const char *key, const char *type, int index) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &device_key);
  if (lua_getfield(L, -1, key) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_createtable(L, 0, 3);
    lua_pushstring(L, type);
    lua_setfield(L, -2, "type");
    if (index >= 0) {
      lua_pushinteger(L, index);
      lua_setfield(L, -2, "index");
    }
    lua_pushstring(L, key);
    lua_setfield(L, -2, "_str");
    if (luaL_getmetatable(L, "lutorch.device") == LUA_TTABLE) lua_setmetatable(L, -2);
    else lua_pop(L, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, key);
  }
  lua_remove(L, -2);
}

void lt_vm_push_device(lua_State *L, lt_device d) {
  char buf[32];
  lt_device_format(d, buf, sizeof buf);
  /* the meta device has no index (PyTorch's torch.device("meta").index is None) */
  push_device_obj(L, buf, lt_device_type_name(d.type), d.type == LT_DEV_META ? -1 : d.index);
}

int lt_vm_todevice(lua_State *L, int idx, lt_device *out) {
  int t = lua_type(L, idx);
  if (t == LUA_TSTRING) return lt_device_parse(lua_tostring(L, idx), out);
  if (t == LUA_TTABLE) {
    int r = lua_getfield(L, idx, "_str") == LUA_TSTRING ? lt_device_parse(lua_tostring(L, -1), out)
                                                        : lt_error("expected a device, got a table that is not one");
    lua_pop(L, 1);
    return r;
  }
  return lt_error("expected a device, got %s", luaL_typename(L, idx));
}

int lt_vm_device_usable(lt_device d) {
  if (!lt_backend_get(d.type)) (void)lt_vm_backend_load(d.type);
  if (lt_backend_of(d)) return 0;
  if (lt_backend_get(d.type)) return -1;     /* a bad index: the core's message says which */
  char up[16];
  const char *name = lt_device_type_name(d.type);
  size_t i = 0;
  for (; name[i] && i + 1 < sizeof up; i++) up[i] = (char)toupper((unsigned char)name[i]);
  up[i] = 0;
  const char *why = lt_vm_backend_unavailable(d.type);
  if (why) return lt_error("no %s device is present (%s: backend not loaded: %s)", up, name, why);
  return lt_error("no %s device is present (%s: backend not loaded)", up, name);
}

static int device_tostring(lua_State *L) {
  lua_getfield(L, 1, "_str");
  return 1;
}

static int l_device(lua_State *L) {
  lt_device d;
  const char *s = luaL_checkstring(L, 1);
  if (lt_device_parse(s, &d) < 0) return lt_vm_raise(L, "device");
  if (lua_type(L, 2) == LUA_TNUMBER) {
    lua_Integer i = luaL_checkinteger(L, 2);
    if (i < 0 || i > 127) return luaL_error(L, "device: argument 'index' must be in 0..127, got %d", (int)i);
    d.index = (int8_t)i;
  } else if (strcmp(s, "cuda") == 0) {
    /* PyTorch's torch.device("cuda"): no index; the current device when used */
    push_device_obj(L, "cuda", "cuda", -1);
    return 1;
  }
  lt_vm_push_device(L, d);
  return 1;
}

/* ---- fields ---- */

/* a sequence of sizes with a metatable that prints like torch.Size */
static void push_size(lua_State *L, const lt_tensor *t) {
  lua_createtable(L, t->ndim, 0);
  for (int i = 0; i < t->ndim; i++) {
    lua_pushinteger(L, t->sizes[i]);
    lua_rawseti(L, -2, i + 1);
  }
  luaL_setmetatable(L, "lutorch.Size");
}

static int size_tostring(lua_State *L) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "torch.Size([");
  lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, 1, i);
    if (i > 1) luaL_addstring(&b, ", ");
    luaL_addvalue(&b);
  }
  luaL_addstring(&b, "])");
  luaL_pushresult(&b);
  return 1;
}

static int size_eq(lua_State *L) {
  lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
  if (n != (lua_Integer)lua_rawlen(L, 2)) { lua_pushboolean(L, 0); return 1; }
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, 1, i);
    lua_rawgeti(L, 2, i);
    int eq = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    if (!eq) { lua_pushboolean(L, 0); return 1; }
  }
  lua_pushboolean(L, 1);
  return 1;
}

static int size_numel(lua_State *L) {
  lua_Integer n = (lua_Integer)lua_rawlen(L, 1), p = 1;
  for (lua_Integer i = 1; i <= n; i++) { lua_rawgeti(L, 1, i); p *= lua_tointeger(L, -1); lua_pop(L, 1); }
  lua_pushinteger(L, p);
  return 1;
}

/* fields read here; the "_fields" table of the method table holds the ones
** other files compute (grad, grad_fn, is_leaf, data, T, mT) */
static const char *const tensor_fields[] = {
  "shape", "dtype", "device", "requires_grad", "ndim", "is_cuda", "is_cpu", "is_sparse", "is_quantized",
  "is_meta", "itemsize", "nbytes", NULL
};

static bool push_field(lua_State *L, lt_tensor *t, const char *k) {
  switch (k[0]) {
    case 's': if (strcmp(k, "shape") == 0) { push_size(L, t); return true; } break;
    case 'd':
      if (strcmp(k, "dtype") == 0) { lt_vm_push_dtype(L, (lt_dtype)t->dtype); return true; }
      if (strcmp(k, "device") == 0) { lt_vm_push_device(L, lt_tensor_device(t)); return true; }
      break;
    case 'r': if (strcmp(k, "requires_grad") == 0) { lua_pushboolean(L, t->requires_grad); return true; } break;
    case 'n':
      if (strcmp(k, "ndim") == 0) { lua_pushinteger(L, t->ndim); return true; }
      if (strcmp(k, "nbytes") == 0) {
        lua_pushinteger(L, t->numel * (lua_Integer)lt_dtype_size((lt_dtype)t->dtype));
        return true;
      }
      break;
    case 'i':
      if (strcmp(k, "is_cuda") == 0) { lua_pushboolean(L, lt_tensor_device(t).type == LT_DEV_CUDA); return true; }
      if (strcmp(k, "is_cpu") == 0) { lua_pushboolean(L, lt_tensor_device(t).type == LT_DEV_CPU); return true; }
      if (strcmp(k, "itemsize") == 0) { lua_pushinteger(L, (lua_Integer)lt_dtype_size((lt_dtype)t->dtype)); return true; }
      /* what lutorch has no kind of: code that asks gets a true answer */
      if (strcmp(k, "is_meta") == 0) { lua_pushboolean(L, lt_tensor_device(t).type == LT_DEV_META); return true; }
      if (strcmp(k, "is_sparse") == 0 || strcmp(k, "is_quantized") == 0) {
        lua_pushboolean(L, 0);
        return true;
      }
      break;
  }
  return false;
}

/* "tensor has no field or method 'k'": reading a misspelt field must not give
** nil, which reads as false or as a missing grad much later */
static int no_field(lua_State *L, const char *k, int methods) {
  lt_nearest n;
  lt_nearest_init(&n, k);
  n.ties_by_name = true;
  for (const char *const *f = tensor_fields; *f; f++) lt_nearest_add(&n, *f);
  for (int tbl = 0; tbl < 2; tbl++) {
    if (tbl == 1 && lua_getfield(L, methods, "_fields") != LUA_TTABLE) break;
    int at = tbl == 0 ? methods : lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, at)) {
      lua_pop(L, 1);
      /* the method table keeps these strings alive */
      if (lua_type(L, -1) == LUA_TSTRING && lua_tostring(L, -1)[0] != '_') lt_nearest_add(&n, lua_tostring(L, -1));
    }
  }
  if (strcmp(k, "values") == 0 || strcmp(k, "indices") == 0)
    return luaL_error(L, "tensor has no field or method '%s' (ops with several results, such as x:max(dim), "
                      "return them as several values: local values, indices = x:max(2))", k);
  if (n.best) return luaL_error(L, "tensor has no field or method '%s' (did you mean '%s'?)", k, n.best);
  return luaL_error(L, "tensor has no field or method '%s'", k);
}

/* __index: methods first, then fields, then indexing by number/table/tensor */
static int t_index(lua_State *L) {
  if (lua_type(L, 2) == LUA_TSTRING) {
    lua_rawgetp(L, LUA_REGISTRYINDEX, &methods_key);
    int methods = lua_gettop(L);
    lua_pushvalue(L, 2);
    if (lua_rawget(L, methods) != LUA_TNIL) return 1;
    lua_pop(L, 1);
    lt_ud *u = lt_vm_toud(L, 1);
    const char *k = lua_tostring(L, 2);
    bool known = false;
    for (const char *const *f = tensor_fields; *f && !known; f++) known = strcmp(*f, k) == 0;
    if (!known && lua_getfield(L, methods, "_fields") == LUA_TTABLE) {
      /* computed by helpers of other files, registered in the "_fields" table */
      if (lua_getfield(L, -1, k) == LUA_TFUNCTION) {
        if (!u->t) return luaL_error(L, "tensor.%s: the tensor has been freed", k);
        lua_pushvalue(L, 1);
        lua_call(L, 1, 1);
        return 1;
      }
    }
    if (!known) return no_field(L, k, methods);
    if (!u->t) return luaL_error(L, "tensor.%s: the tensor has been freed", k);
    if (push_field(L, u->t, k)) return 1;
    return no_field(L, k, methods);
  }
  if (lt_vm_index_hook) return lt_vm_index_hook(L);
  return luaL_error(L, "tensor indexing is not available");
}

static int t_newindex(lua_State *L) {
  if (lua_type(L, 2) == LUA_TSTRING) {
    const char *k = lua_tostring(L, 2);
    lt_tensor *t = self_tensor(L, k);
    lua_rawgetp(L, LUA_REGISTRYINDEX, &methods_key);
    if (lua_getfield(L, -1, "_setters") == LUA_TTABLE && lua_getfield(L, -1, k) == LUA_TFUNCTION) {
      lua_pushvalue(L, 1);
      lua_pushvalue(L, 3);
      lua_call(L, 2, 0);
      return 0;
    }
    if (strcmp(k, "requires_grad") == 0) {
      if (lua_type(L, 3) != LUA_TBOOLEAN) return luaL_error(L, "requires_grad: expected a boolean");
      bool rg = lua_toboolean(L, 3);
      if (rg && !lt_dtype_is_differentiable((lt_dtype)t->dtype))
        return luaL_error(L, "requires_grad: only floating point or complex tensors can require gradients (got %s)",
                          lt_dtype_name((lt_dtype)t->dtype));
      t->requires_grad = rg;
      return 0;
    }
    return luaL_error(L, "tensor: cannot set field '%s'", k);
  }
  if (lt_vm_newindex_hook) return lt_vm_newindex_hook(L);
  return luaL_error(L, "tensor index assignment is not available");
}

/* ---- operators ---- */

/* operands of a binary metamethod: either side may be a number */
static int binop(lua_State *L, const char *op, int which) {
  lt_tensor *a = lt_vm_totensor(L, 1), *b = lt_vm_totensor(L, 2);
  lt_tensor *wa = NULL, *wb = NULL;
  for (int i = 1; i <= 2; i++) {
    lt_tensor **slot = i == 1 ? &a : &b, **w = i == 1 ? &wa : &wb;
    if (*slot) continue;
    int t = lua_type(L, i);
    double re, im;
    if (lt_vm_tocomplex(L, i, &re, &im)) {
      *w = *slot = lt_vm_complex_wrapped(re, im);
      if (!*slot) { lt_tensor_release(wa); return lt_vm_raise(L, op); }
    } else if (t == LUA_TNUMBER || t == LUA_TBOOLEAN) {
      lt_scalar s = t == LUA_TBOOLEAN ? lt_scalar_bool(lua_toboolean(L, i))
                  : lua_isinteger(L, i) ? lt_scalar_int(lua_tointeger(L, i)) : lt_scalar_float(lua_tonumber(L, i));
      *w = *slot = lt_tensor_wrapped_number(s);
      if (!*slot) { lt_tensor_release(wa); return lt_vm_raise(L, op); }
    } else {
      lt_tensor_release(wa);
      if (lt_vm_toud(L, i)) return luaL_error(L, "%s: operand %d is a freed tensor", op, i);
      return luaL_error(L, "%s: cannot combine a tensor with a %s", op, luaL_typename(L, i));
    }
  }
  lt_tensor *r = NULL;
  switch (which) {
    case 0: r = lt_add(a, b, lt_scalar_int(1)); break;
    case 1: r = lt_sub(a, b, lt_scalar_int(1)); break;
    case 2: r = lt_mul(a, b); break;
    case 3: r = lt_div(a, b, NULL); break;
    case 4: r = lt_remainder(a, b); break;
    case 5: r = lt_pow(a, b); break;
    case 6: r = lt_div(a, b, "floor"); break;
  }
  lt_tensor_release(wa);
  lt_tensor_release(wb);
  if (!r) return lt_vm_raise(L, op);
  lt_vm_push_tensor(L, r);
  return 1;
}

static int t_add(lua_State *L) { return binop(L, "add", 0); }
static int t_sub(lua_State *L) { return binop(L, "sub", 1); }
static int t_mul(lua_State *L) { return binop(L, "mul", 2); }
static int t_div(lua_State *L) { return binop(L, "div", 3); }
static int t_mod(lua_State *L) { return binop(L, "remainder", 4); }
static int t_pow(lua_State *L) { return binop(L, "pow", 5); }
static int t_idiv(lua_State *L) { return binop(L, "floor_divide", 6); }

static int t_unm(lua_State *L) {
  lt_tensor *r = lt_neg(self_tensor(L, "neg"));
  if (!r) return lt_vm_raise(L, "neg");
  lt_vm_push_tensor(L, r);
  return 1;
}

static int t_len(lua_State *L) {
  lt_tensor *t = self_tensor(L, "__len");
  if (t->ndim == 0) return luaL_error(L, "len: a 0-d tensor has no length");
  lua_pushinteger(L, t->sizes[0]);
  return 1;
}

/* Lua turns what __eq returns into one boolean, so `a == b` cannot be
** elementwise; answering identity would make PyTorch's `(preds == y)` and
** `grad == 2 * x` a silent false. Lua calls this only for two distinct
** userdata (a == a is true without it); for identity there is rawequal. */
static int t_eq(lua_State *L) {
  if (!lt_vm_toud(L, 1) || !lt_vm_toud(L, 2)) { lua_pushboolean(L, 0); return 1; }
  return luaL_error(L, "==: comparing two tensors with == or ~= is not elementwise in Lua; use x:eq(y) (or "
                    "x:ne(y)) for elementwise comparison, torch.equal(x, y) for whole tensors, rawequal(x, y) "
                    "for the same tensor object");
}

/* <, <=, >, >= would raise Lua's own "attempt to compare" without saying
** what to write instead (and a > b reaches __lt as b < a) */
static int t_compare(lua_State *L) {
  return luaL_error(L, "comparing a tensor with <, <=, > or >= gives no tensor in Lua; use x:lt(y), x:le(y), "
                    "x:gt(y), x:ge(y) for elementwise comparison, or x:item() to compare a one-element tensor "
                    "as a number");
}

static int t_tostring(lua_State *L) {
  if (lt_vm_tostring_hook) return lt_vm_tostring_hook(L);
  lt_tensor *t = lt_vm_totensor(L, 1);
  if (!t) { lua_pushstring(L, "tensor (freed)"); return 1; }
  char buf[128];
  lua_pushfstring(L, "tensor of shape %s, dtype %s", lt_shape_str(t->ndim, t->sizes, buf, sizeof buf),
                  lt_dtype_name((lt_dtype)t->dtype));
  return 1;
}

/* ---- basic methods every binding relies on ---- */

static int m_size(lua_State *L) {
  lt_tensor *t = self_tensor(L, "size");
  if (lua_isnoneornil(L, 2)) { push_size(L, t); return 1; }
  lua_Integer d = luaL_checkinteger(L, 2);
  if (d == 0) return luaL_error(L, "size: dim 0 is invalid (dims are 1-based)");
  int w = lt_wrap_dim("size", d > 0 ? d - 1 : d, t->ndim);
  if (w < 0 || t->ndim == 0) return t->ndim == 0 ? luaL_error(L, "size: a 0-d tensor has no dims") : lt_vm_raise(L, "size");
  lua_pushinteger(L, t->sizes[w]);
  return 1;
}

static int m_stride(lua_State *L) {
  lt_tensor *t = self_tensor(L, "stride");
  if (lua_isnoneornil(L, 2)) {
    lua_createtable(L, t->ndim, 0);
    for (int i = 0; i < t->ndim; i++) { lua_pushinteger(L, t->strides[i]); lua_rawseti(L, -2, i + 1); }
    return 1;
  }
  lua_Integer d = luaL_checkinteger(L, 2);
  if (d == 0) return luaL_error(L, "stride: dim 0 is invalid (dims are 1-based)");
  int w = lt_wrap_dim("stride", d > 0 ? d - 1 : d, t->ndim);
  if (w < 0 || t->ndim == 0) return t->ndim == 0 ? luaL_error(L, "stride: a 0-d tensor has no dims") : lt_vm_raise(L, "stride");
  lua_pushinteger(L, t->strides[w]);
  return 1;
}

static int m_dim(lua_State *L) { lua_pushinteger(L, self_tensor(L, "dim")->ndim); return 1; }
static int m_numel(lua_State *L) { lua_pushinteger(L, self_tensor(L, "numel")->numel); return 1; }
static int m_is_contiguous(lua_State *L) { lua_pushboolean(L, lt_tensor_is_contiguous(self_tensor(L, "is_contiguous"))); return 1; }
static int m_element_size(lua_State *L) { lua_pushinteger(L, (lua_Integer)lt_dtype_size((lt_dtype)self_tensor(L, "element_size")->dtype)); return 1; }
static int m_storage_offset(lua_State *L) { lua_pushinteger(L, self_tensor(L, "storage_offset")->offset); return 1; }
static int m_is_floating_point(lua_State *L) { lua_pushboolean(L, lt_dtype_is_float((lt_dtype)self_tensor(L, "is_floating_point")->dtype)); return 1; }
static int m_is_complex(lua_State *L) { lua_pushboolean(L, lt_dtype_is_complex((lt_dtype)self_tensor(L, "is_complex")->dtype)); return 1; }

static void push_scalar(lua_State *L, lt_scalar s) {
  if (s.type == LT_SCALAR_FLOAT) lua_pushnumber(L, s.v.f);
  else if (s.type == LT_SCALAR_BOOL) lua_pushboolean(L, (int)s.v.i);
  else lua_pushinteger(L, s.v.i);
}

/* a complex tensor's one element, read through a host copy */
static int item_complex(lua_State *L, lt_tensor *t) {
  if (t->numel != 1)
    return luaL_error(L, "item: a tensor with %d elements cannot be converted to a number (need exactly 1)",
                      (int)t->numel);
  lt_tensor *h = lt_tensor_to_host(t);
  if (!h) return lt_vm_raise(L, "item");
  lt_vm_push_element(L, (lt_dtype)h->dtype, (const char *)h->storage->data + h->offset * (int64_t)lt_dtype_size((lt_dtype)h->dtype));
  lt_tensor_release(h);
  return 1;
}

static int m_item(lua_State *L) {
  lt_tensor *self = self_tensor(L, "item");
  if (lt_dtype_is_complex((lt_dtype)self->dtype)) return item_complex(L, self);
  lt_scalar s = lt_tensor_item(self);
  if (lt_scalar_is_none(s)) return lt_vm_raise(L, "item");
  push_scalar(L, s);
  return 1;
}

/* nested Lua tables of numbers (booleans for bool tensors) */
static void totable_rec(lua_State *L, const lt_tensor *t, int dim, int64_t off) {
  lt_dtype dt = (lt_dtype)t->dtype;
  size_t es = lt_dtype_size(dt);
  const char *base = t->storage->data;
  luaL_checkstack(L, 4, "totable: nesting too deep");
  lua_createtable(L, (int)t->sizes[dim], 0);
  for (int64_t i = 0; i < t->sizes[dim]; i++) {
    int64_t o = off + i * t->strides[dim];
    if (dim == t->ndim - 1) {
      lt_vm_push_element(L, dt, base + o * (int64_t)es);
    } else {
      totable_rec(L, t, dim + 1, o);
    }
    lua_rawseti(L, -2, i + 1);
  }
}

static int m_totable(lua_State *L) {
  lt_tensor *t = self_tensor(L, "totable");
  if (lt_tensor_device(t).type != LT_DEV_CPU) return luaL_error(L, "totable: tensor must be on the cpu");
  if (t->ndim == 0) {
    if (lt_dtype_is_complex((lt_dtype)t->dtype)) return item_complex(L, t);
    push_scalar(L, lt_tensor_item(t));
    return 1;
  }
  totable_rec(L, t, 0, t->offset);
  return 1;
}

/* x:free() / __close: drop the storage reference now */
static int m_free(lua_State *L) {
  lt_ud *u = lt_vm_toud(L, 1);
  if (!u) return luaL_error(L, "free: argument 'self' must be a tensor");
  if (u->t) { lt_tensor_release(u->t); u->t = NULL; }
  return 0;
}

static int m_type(lua_State *L) {
  lt_tensor *t = self_tensor(L, "type");
  if (lua_isnoneornil(L, 2)) {
    lua_pushfstring(L, "torch.%sTensor", lt_dtype_traits_table[t->dtype].t7name);
    return 1;
  }
  /* x:type("torch.DoubleTensor") converts, as in Torch7 */
  const char *name = luaL_checkstring(L, 2);
  for (int i = 0; i < LT_NUM_DTYPES; i++) {
    char buf[64];
    snprintf(buf, sizeof buf, "torch.%sTensor", lt_dtype_traits_table[i].t7name);
    if (strcmp(buf, name) == 0 || strcmp(buf + 6, name) == 0) {
      lt_tensor *r = lt_tensor_to_dtype_contig(t, (lt_dtype)i);
      if (r == t) { lt_tensor_release(r); lua_pushvalue(L, 1); return 1; }
      if (!r) return lt_vm_raise(L, "type");
      lt_vm_push_tensor(L, r);
      return 1;
    }
  }
  return luaL_error(L, "type: unknown tensor type '%s'", name);
}

/* x:pin_memory(): a copy of a cpu tensor in page-locked host memory, from the
** CUDA backend (loaded on demand); x itself when already pinned */
static int m_pin_memory(lua_State *L) {
  static const char op[] = "pin_memory";
  lt_tensor *t = self_tensor(L, op);
  if (lt_tensor_device(t).type != LT_DEV_CPU) {
    char buf[32];
    lt_device_format(lt_tensor_device(t), buf, sizeof buf);
    return luaL_error(L, "%s: cannot pin a %s tensor: only cpu tensors can be pinned", op, buf);
  }
  if (lt_tensor_is_pinned(t)) { lua_settop(L, 1); return 1; }
  lt_device cuda = {LT_DEV_CUDA, (int8_t)lt_device_current(LT_DEV_CUDA)};
  if (lt_vm_device_usable(cuda) < 0)
    return luaL_error(L, "%s: pinned memory needs a CUDA device: %s", op, lt_error_message());
  const lt_backend *b = lt_backend_get(LT_DEV_CUDA);
  if (!b->pinned_storage) return luaL_error(L, "%s: the CUDA backend has no pinned memory", op);
  lt_storage *s = b->pinned_storage((size_t)t->numel * lt_dtype_size((lt_dtype)t->dtype));
  if (!s) return lt_vm_raise(L, op);
  int64_t st[LT_MAX_DIMS];
  lt_contiguous_strides(t->ndim, t->sizes, st);
  lt_tensor *r = lt_tensor_new_view(s, (lt_dtype)t->dtype, 0, t->ndim, t->sizes, st);
  lt_storage_release(s);
  if (!r) return lt_vm_raise(L, op);
  if (lt_tensor_copy_(r, t) < 0) { lt_tensor_release(r); return lt_vm_raise(L, op); }
  lt_vm_push_tensor(L, r);
  return 1;
}

static int m_is_pinned(lua_State *L) {
  lua_pushboolean(L, lt_tensor_is_pinned(self_tensor(L, "is_pinned")));
  return 1;
}

static const luaL_Reg base_methods[] = {
  {"pin_memory", m_pin_memory}, {"is_pinned", m_is_pinned},
  {"size", m_size}, {"stride", m_stride}, {"dim", m_dim}, {"nDimension", m_dim},
  {"numel", m_numel}, {"nElement", m_numel}, {"is_contiguous", m_is_contiguous},
  {"isContiguous", m_is_contiguous}, {"element_size", m_element_size},
  {"storage_offset", m_storage_offset}, {"is_floating_point", m_is_floating_point},
  {"is_complex", m_is_complex},
  {"item", m_item}, {"totable", m_totable}, {"tolist", m_totable}, {"free", m_free}, {"type", m_type},
  {NULL, NULL}
};

/* x:cuda() with no device means the current cuda device, which the schema
** cannot check while parsing: say here, naming the op, when there is no CUDA
** device at all */
static int m_cuda(lua_State *L) {
  if (lua_isnoneornil(L, 2) && lt_vm_totensor(L, 1)) {
    lt_device d = {LT_DEV_CUDA, (int8_t)lt_device_current(LT_DEV_CUDA)};
    if (lt_vm_device_usable(d) < 0) return lt_vm_raise(L, "cuda");
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

void lt_vm_add_methods(lua_State *L, const luaL_Reg *fns) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &methods_key);
  luaL_setfuncs(L, fns, 0);
  lua_pop(L, 1);
}

void lt_vm_open_tensor(lua_State *L) {
  lt_storage_bytes_hook = storage_bytes;
  open_dtypes(L);

  if (luaL_newmetatable(L, "lutorch.Size")) {
    lua_pushcfunction(L, size_tostring); lua_setfield(L, -2, "__tostring");
    lua_pushcfunction(L, size_eq); lua_setfield(L, -2, "__eq");
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, size_numel); lua_setfield(L, -2, "numel");
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, "lutorch.device")) {
    lua_pushcfunction(L, device_tostring); lua_setfield(L, -2, "__tostring");
    lua_pushstring(L, "device"); lua_setfield(L, -2, "__name");
  }
  lua_pop(L, 1);
  lua_newtable(L);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &device_key);

  lua_createtable(L, 0, 512);
  lua_createtable(L, 0, 8); lua_setfield(L, -2, "_fields");
  lua_createtable(L, 0, 8); lua_setfield(L, -2, "_setters");
  lua_rawsetp(L, LUA_REGISTRYINDEX, &methods_key);
  lt_vm_add_methods(L, base_methods);
  lt_vm_add_methods(L, lt_gen_methods);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &methods_key);
  if (lua_getfield(L, -1, "cuda") == LUA_TFUNCTION) {
    lua_pushcclosure(L, m_cuda, 1);
    lua_setfield(L, -2, "cuda");
    lua_pop(L, 1);
  } else {
    lua_pop(L, 2);
  }

  luaL_newmetatable(L, "lutorch.Tensor");
  static const luaL_Reg mm[] = {
    {"__index", t_index}, {"__newindex", t_newindex}, {"__gc", t_gc}, {"__close", t_gc},
    {"__add", t_add}, {"__sub", t_sub}, {"__mul", t_mul}, {"__div", t_div}, {"__mod", t_mod},
    {"__pow", t_pow}, {"__idiv", t_idiv}, {"__unm", t_unm}, {"__len", t_len},
    {"__tostring", t_tostring}, {"__eq", t_eq}, {"__lt", t_compare}, {"__le", t_compare}, {NULL, NULL}
  };
  luaL_setfuncs(L, mm, 0);
  lua_pushstring(L, "Tensor");
  lua_setfield(L, -2, "__name");
  lua_rawsetp(L, LUA_REGISTRYINDEX, &tensor_mt_key);
}

/* for the module: torch.device, the method table, dtype values */
int lt_vm_l_device(lua_State *L) { return l_device(L); }

void lt_vm_push_methods(lua_State *L) { lua_rawgetp(L, LUA_REGISTRYINDEX, &methods_key); }
void lt_vm_push_tensor_mt(lua_State *L) { lua_rawgetp(L, LUA_REGISTRYINDEX, &tensor_mt_key); }
