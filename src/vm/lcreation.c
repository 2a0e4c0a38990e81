/*
** lcreation.c — hand-written constructors: torch.tensor (nested Lua tables
** to tensors, with shape and dtype inference), torch.as_tensor, and Torch7's
** torch.Tensor / torch.FloatTensor / ... typed constructors.
*/
#include <string.h>
#include "lutorch_vm.h"
#include "ltensor.h"
#include "lcomplex.h"
#include "core/backend.h"
#include "largs.h"
#include "core/rng.h"

/* ---- reading nested tables ---- */

enum { SEEN_INT = 1, SEEN_FLOAT = 2, SEEN_BOOL = 4, SEEN_COMPLEX = 8 };

typedef struct nest {
  const char *op;
  int ndim;
  int64_t sizes[LT_MAX_DIMS];
  int seen;
} nest;

/* shape from the first element at every level */
static int nest_shape(lua_State *L, int idx, nest *n) {
  n->ndim = 0;
  lua_pushvalue(L, idx);
  while (lua_type(L, -1) == LUA_TTABLE) {
    if (n->ndim == LT_MAX_DIMS) {
      lua_pop(L, 1);
      return luaL_error(L, "%s: too many dims (at most %d)", n->op, LT_MAX_DIMS);
    }
    int64_t len = (int64_t)lua_rawlen(L, -1);
    n->sizes[n->ndim++] = len;
    if (len == 0) break;
    lua_rawgeti(L, -1, 1);
    lua_remove(L, -2);
  }
  lua_pop(L, 1);
  return 0;
}

/* check every level has the inferred length and every leaf is a number or a boolean.
** Raises (nothing is allocated yet). */
static void nest_check(lua_State *L, int idx, nest *n, int dim) {
  int64_t len = (int64_t)lua_rawlen(L, idx);
  if (len != n->sizes[dim])
    luaL_error(L, "%s: expected sequence of length %d at dim %d (got %d)", n->op, (int)n->sizes[dim], dim + 1,
               (int)len);
  luaL_checkstack(L, 4, NULL);
  for (int64_t i = 1; i <= len; i++) {
    int t = lua_rawgeti(L, idx, i);
    if (dim + 1 < n->ndim) {
      if (t != LUA_TTABLE)
        luaL_error(L, "%s: expected a sequence at dim %d, index %d (got %s)", n->op, dim + 2, (int)i,
                   luaL_typename(L, -1));
      nest_check(L, lua_gettop(L), n, dim + 1);
    } else if (t == LUA_TNUMBER) {
      n->seen |= lua_isinteger(L, -1) ? SEEN_INT : SEEN_FLOAT;
    } else if (t == LUA_TBOOLEAN) {
      n->seen |= SEEN_BOOL;
    } else if (lt_vm_tocomplex(L, -1, &(double){0}, &(double){0})) {
      n->seen |= SEEN_COMPLEX;
    } else if (t == LUA_TTABLE) {
      luaL_error(L, "%s: expected sequence of length %d at dim %d (got a sequence)", n->op, 0, dim + 2);
    } else {
      luaL_error(L, "%s: element %d at dim %d must be a number or a boolean (or a complex number), got %s", n->op, (int)i, dim + 1,
                 luaL_typename(L, -1));
    }
    lua_pop(L, 1);
  }
}

/* write the leaves in row-major order; the shape was checked */
static void nest_fill(lua_State *L, int idx, const nest *n, int dim, lt_dtype dt, char **p) {
  int64_t len = n->sizes[dim];
  size_t es = lt_dtype_size(dt);
  for (int64_t i = 1; i <= len; i++) {
    int t = lua_rawgeti(L, idx, i);
    if (dim + 1 < n->ndim) nest_fill(L, lua_gettop(L), n, dim + 1, dt, p);
    else {
      double re, im;
      if (lt_vm_tocomplex(L, -1, &re, &im)) lt_dtype_store_complex(dt, *p, re, im);
      else if (t == LUA_TBOOLEAN) lt_dtype_store_int64(dt, *p, lua_toboolean(L, -1));
      else if (lua_isinteger(L, -1)) lt_dtype_store_int64(dt, *p, lua_tointeger(L, -1));
      else lt_dtype_store_double(dt, *p, lua_tonumber(L, -1));
      *p += es;
    }
    lua_pop(L, 1);
  }
}

static lt_dtype infer_dtype(int seen) {
  if (seen & SEEN_COMPLEX) return lt_dtype_to_complex(lt_get_default_dtype());
  if (seen & SEEN_FLOAT) return lt_get_default_dtype();
  if (seen & SEEN_INT) return LT_INT64;
  if (seen & SEEN_BOOL) return LT_BOOL;
  return lt_get_default_dtype();
}

/* a tensor from the table at idx; dtype < 0 infers. Returns a new reference. */
static lt_tensor *from_table(lua_State *L, int idx, int dtype, const char *op) {
  nest n;
  n.op = op;
  n.seen = 0;
  idx = lua_absindex(L, idx);
  nest_shape(L, idx, &n);
  nest_check(L, idx, &n, 0);
  lt_dtype dt = dtype >= 0 ? (lt_dtype)dtype : infer_dtype(n.seen);
  if ((n.seen & SEEN_COMPLEX) && !lt_dtype_is_complex(dt))
    luaL_error(L, "%s: complex values given for dtype %s (use a complex dtype: torch.cfloat, torch.cdouble)",
               op, lt_dtype_name(dt));
  lt_tensor *t = lt_tensor_new(dt, lt_device_cpu(), n.ndim, n.sizes);
  if (!t) lt_vm_raise(L, op);
  char *p = lt_tensor_data(t);
  nest_fill(L, idx, &n, 0, dt, &p);
  return t;
}

static lt_tensor *from_scalar(lua_State *L, int idx, int dtype, const char *op) {
  lt_scalar s;
  double re, im;
  if (lt_vm_tocomplex(L, idx, &re, &im)) {
    lt_dtype dt = dtype >= 0 ? (lt_dtype)dtype : lt_dtype_to_complex(lt_get_default_dtype());
    if (!lt_dtype_is_complex(dt))
      luaL_error(L, "%s: a complex value given for dtype %s (use a complex dtype)", op, lt_dtype_name(dt));
    lt_tensor *t = lt_tensor_new(dt, lt_device_cpu(), 0, NULL);
    if (!t) lt_vm_raise(L, op);
    lt_dtype_store_complex(dt, lt_tensor_data(t), re, im);
    return t;
  }
  if (lua_type(L, idx) == LUA_TBOOLEAN) s = lt_scalar_bool(lua_toboolean(L, idx));
  else if (lua_isinteger(L, idx)) s = lt_scalar_int(lua_tointeger(L, idx));
  else s = lt_scalar_float(lua_tonumber(L, idx));
  lt_tensor *t = lt_tensor_from_scalar(s, dtype >= 0 ? (lt_dtype)dtype : lt_scalar_dtype(s));
  if (!t) lt_vm_raise(L, op);
  return t;
}

/* ---- the options table of torch.tensor ---- */

typedef struct topts { int dtype; bool requires_grad; lt_device device; } topts;

static void read_opts(lua_State *L, int idx, const char *op, topts *o) {
  o->dtype = -1;
  o->requires_grad = false;
  o->device.type = -1;      /* absent: where the data is (the host for Lua values) */
  o->device.index = 0;
  if (lua_isnoneornil(L, idx)) return;
  if (lua_type(L, idx) != LUA_TTABLE) luaL_error(L, "%s: argument 'options' must be a table, got %s", op, luaL_typename(L, idx));
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
    if (!k) luaL_error(L, "%s: the options table may only have string keys", op);
    if (strcmp(k, "dtype") == 0) {
      o->dtype = lt_vm_todtype(L, -1);
      if (o->dtype < 0) {
        if (lua_type(L, -1) == LUA_TSTRING) luaL_error(L, "%s: argument 'dtype': unknown dtype '%s'", op, lua_tostring(L, -1));
        luaL_error(L, "%s: argument 'dtype' must be a dtype, got %s", op, luaL_typename(L, -1));
      }
    } else if (strcmp(k, "device") == 0) {
      lt_device d;
      if (lt_vm_todevice(L, -1, &d) < 0 || lt_vm_device_usable(d) < 0)
        luaL_error(L, "%s: argument 'device': %s", op, lt_error_message());
      o->device = d;
    } else if (strcmp(k, "requires_grad") == 0) {
      if (lua_type(L, -1) != LUA_TBOOLEAN) luaL_error(L, "%s: argument 'requires_grad' must be a boolean", op);
      o->requires_grad = lua_toboolean(L, -1);
    } else {
      static const char *const names[] = {"dtype", "device", "requires_grad", NULL};
      lt_vm_unknown_option(L, op, -2, names);
    }
    lua_pop(L, 1);
  }
}

static void push_result(lua_State *L, lt_tensor *t, const topts *o, const char *op) {
  if (o->device.type >= 0 && !lt_device_eq(lt_tensor_device(t), o->device)) {   /* made here, moved once */
    lt_tensor *d = lt_tensor_to_device(t, o->device);
    lt_tensor_release(t);
    if (!d) lt_vm_raise(L, op);
    t = d;
  }
  if (o->requires_grad) {
    if (!lt_dtype_is_float((lt_dtype)t->dtype)) {
      lt_tensor_release(t);
      luaL_error(L, "%s: only tensors of floating point dtype can require gradients", op);
    }
    t->requires_grad = true;
  }
  lt_vm_push_tensor(L, t);
}

/* torch.tensor(data [, {dtype=, device=, requires_grad=}]) — always copies */
static int l_tensor(lua_State *L) {
  const char *op = "tensor";
  topts o;
  read_opts(L, 2, op, &o);
  lt_tensor *t = NULL;
  lt_tensor *src = lt_vm_totensor(L, 1);
  int ty = lua_type(L, 1);
  if (src) {
    if (o.dtype >= 0 && lt_dtype_is_complex((lt_dtype)src->dtype) && !lt_dtype_is_complex((lt_dtype)o.dtype))
      return luaL_error(L, "%s: casting %s to %s would discard the imaginary part", op,
                        lt_dtype_name((lt_dtype)src->dtype), lt_dtype_name((lt_dtype)o.dtype));
    t = lt_tensor_clone_as(src, o.dtype >= 0 ? (lt_dtype)o.dtype : (lt_dtype)src->dtype);
    if (!t) return lt_vm_raise(L, op);
  } else if (lt_vm_toud(L, 1)) {
    return luaL_error(L, "%s: argument 'data' is a freed tensor", op);
  } else if (ty == LUA_TTABLE) {
    t = from_table(L, 1, o.dtype, op);
  } else if (ty == LUA_TNUMBER || ty == LUA_TBOOLEAN || lt_vm_tocomplex(L, 1, &(double){0}, &(double){0})) {
    t = from_scalar(L, 1, o.dtype, op);
  } else {
    return luaL_error(L, "%s: argument 'data' must be a table, number, boolean or tensor, got %s", op,
                      luaL_typename(L, 1));
  }
  /* data from Lua goes where the factories go (torch.set_default_device), as in PyTorch; a
  ** tensor's copy stays on its device unless device= says otherwise */
  if (!src && o.device.type < 0 && lt_vm_default_device.type >= 0) o.device = lt_vm_default_device;
  push_result(L, t, &o, op);
  return 1;
}

/* torch.as_tensor(data [, opts]): data itself when it is a tensor of the wanted dtype */
static int l_as_tensor(lua_State *L) {
  lt_tensor *src = lt_vm_totensor(L, 1);
  if (src) {
    topts o;
    read_opts(L, 2, "as_tensor", &o);
    bool same_device = o.device.type < 0 || lt_device_eq(lt_tensor_device(src), o.device);
    if ((o.dtype < 0 || o.dtype == src->dtype) && same_device) { lua_settop(L, 1); return 1; }
    lt_tensor *t = lt_tensor_clone_as(src, o.dtype < 0 ? (lt_dtype)src->dtype : (lt_dtype)o.dtype);
    if (!t) return lt_vm_raise(L, "as_tensor");
    o.requires_grad = false;
    push_result(L, t, &o, "as_tensor");
    return 1;
  }
  return l_tensor(L);
}

/* ---- Torch7 constructors ---- */

static bool is_size_value(lua_State *L, int idx) {
  if (lua_type(L, idx) != LUA_TTABLE || !lua_getmetatable(L, idx)) return false;
  luaL_getmetatable(L, "lutorch.Size");
  bool r = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return r;
}

/*
** T(): an empty 1-D tensor; T(2, 3) or T(x.shape): zeros of that size (Torch7
** left them uninitialised); T({1, 2, 3}) or T({{1, 2}, {3, 4}}): the values;
** T(tensor): a view of the same storage when the dtype matches (Torch7's
** sharing constructor), else a converted copy.
*/
static int typed_ctor(lua_State *L, int dtype, const char *op) {
  int top = lua_gettop(L);
  lt_dtype dt = dtype >= 0 ? (lt_dtype)dtype : lt_get_default_dtype();
  lt_tensor *t;
  if (top == 0) {
    int64_t z = 0;
    t = lt_tensor_new(dt, lt_device_cpu(), 1, &z);
  } else if (lt_vm_totensor(L, 1)) {
    lt_tensor *src = lt_vm_totensor(L, 1);
    if (src->dtype == dt) t = lt_tensor_alias(src, src->offset, src->ndim, src->sizes, src->strides);
    else t = lt_tensor_clone_as(src, dt);
  } else if (lua_type(L, 1) == LUA_TNUMBER || is_size_value(L, 1)) {
    int64_t sizes[LT_MAX_DIMS];
    int n = 0;
    if (lua_type(L, 1) == LUA_TNUMBER) {
      for (int i = 1; i <= top; i++) {
        if (!lua_isinteger(L, i) && !(lua_type(L, i) == LUA_TNUMBER && lua_tonumber(L, i) == (double)(int64_t)lua_tonumber(L, i)))
          return luaL_error(L, "%s: size argument #%d must be an integer, got %s", op, i, luaL_typename(L, i));
        if (n == LT_MAX_DIMS) return luaL_error(L, "%s: at most %d dims", op, LT_MAX_DIMS);
        sizes[n++] = (int64_t)lua_tonumber(L, i);
        if (lua_isinteger(L, i)) sizes[n - 1] = lua_tointeger(L, i);
      }
    } else {
      n = (int)lua_rawlen(L, 1);
      if (n > LT_MAX_DIMS) return luaL_error(L, "%s: at most %d dims", op, LT_MAX_DIMS);
      for (int i = 0; i < n; i++) {
        lua_rawgeti(L, 1, i + 1);
        sizes[i] = lua_tointeger(L, -1);
        lua_pop(L, 1);
      }
    }
    for (int i = 0; i < n; i++)
      if (sizes[i] < 0) return luaL_error(L, "%s: negative size %d in dim %d", op, (int)sizes[i], i + 1);
    t = lt_tensor_new_zeros(dt, lt_device_cpu(), n, sizes);
  } else if (lua_type(L, 1) == LUA_TTABLE) {
    t = from_table(L, 1, (int)dt, op);
  } else {
    return luaL_error(L, "%s: expected sizes, a table of values or a tensor, got %s", op, luaL_typename(L, 1));
  }
  if (!t) return lt_vm_raise(L, op);
  lt_vm_push_tensor(L, t);
  return 1;
}

static int l_Tensor(lua_State *L) { return typed_ctor(L, -1, "Tensor"); }

static int l_typed(lua_State *L) {
  int dt = (int)lua_tointeger(L, lua_upvalueindex(1));
  return typed_ctor(L, dt, lua_tostring(L, lua_upvalueindex(2)));
}

/* torch.setdefaulttensortype("torch.FloatTensor") / getdefaulttensortype() */
static int l_setdefaulttensortype(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  for (int i = 0; i < LT_NUM_DTYPES; i++) {
    char buf[64];
    snprintf(buf, sizeof buf, "torch.%sTensor", lt_dtype_traits_table[i].t7name);
    if (strcmp(buf, name) == 0 || strcmp(buf + 6, name) == 0) {
      if (lt_set_default_dtype((lt_dtype)i) < 0) return lt_vm_raise(L, "setdefaulttensortype");
      return 0;
    }
  }
  return luaL_error(L, "setdefaulttensortype: unknown tensor type '%s'", name);
}

static int l_getdefaulttensortype(lua_State *L) {
  lua_pushfstring(L, "torch.%sTensor", lt_dtype_traits_table[lt_get_default_dtype()].t7name);
  return 1;
}

static const luaL_Reg creation_functions[] = {
  {"tensor", l_tensor}, {"as_tensor", l_as_tensor}, {"from_table", l_tensor},
  {"Tensor", l_Tensor},
  {"setdefaulttensortype", l_setdefaulttensortype}, {"getdefaulttensortype", l_getdefaulttensortype},
  {NULL, NULL}
};

void lt_vm_open_creation(lua_State *L) {
  luaL_setfuncs(L, creation_functions, 0);
  for (int i = 0; i < LT_NUM_DTYPES; i++) {
    char name[64];
    snprintf(name, sizeof name, "%sTensor", lt_dtype_traits_table[i].t7name);
    lua_pushinteger(L, i);
    lua_pushstring(L, name);
    lua_pushcclosure(L, l_typed, 2);
    lua_setfield(L, -2, name);
  }
}
