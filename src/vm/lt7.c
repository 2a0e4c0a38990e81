/*
** lt7.c — Torch7 mode. One switch per Lua state, made before any tensor is
** used: `lutorch --torch7`, LUTORCH_COMPAT=torch7, lutorch_set_compat() when
** embedding, `require "torch.torch7"` from a stock lua5.4, or torch.compat
** ("torch7") before the first tensor. It installs the generated Torch7
** binding (lua_t7_ops.c: x:add(y) in place, result-first forms, reductions
** to numbers, dims kept) over the PyTorch one, makes == identity on
** tensors and float64 the default dtype, and runs the Lua half
** (src/vm/lua/torch7.lua: torch.class, storages, Tester, ...).
*/
#include <string.h>
#include <stdlib.h>
#include "lt7.h"
#include "ltensor.h"
#include "lutorch_vm.h"
#include "lt_ops.h"

int lt_vm_tensor_made = 0;

static char compat_key;   /* registry: "torch7" once asked for or installed */
static char installed_key;

bool lt_vm_torch7(lua_State *L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &installed_key);
  bool on = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return on;
}

/* == on two distinct tensors: Torch7 compared the objects */
static int t7_eq(lua_State *L) {
  lua_pushboolean(L, lua_rawequal(L, 1, 2));
  return 1;
}

/* x:isSetTo(y): the same storage, offset, sizes and strides (Torch7's) */
static int m_is_set_to(lua_State *L) {
  lt_tensor *a = lt_vm_checktensor(L, 1, "isSetTo", "self");
  lt_tensor *b = lt_vm_checktensor(L, 2, "isSetTo", "tensor");
  bool same = a->storage == b->storage && a->offset == b->offset && a->ndim == b->ndim && a->numel > 0;
  for (int i = 0; same && i < a->ndim; i++) same = a->sizes[i] == b->sizes[i] && a->strides[i] == b->strides[i];
  lua_pushboolean(L, same);
  return 1;
}

/* x:_storage_view(): a 1-D tensor over the whole of x's storage (Torch7's x:storage()) */
static int m_storage_view(lua_State *L) {
  lt_tensor *t = lt_vm_checktensor(L, 1, "storage", "self");
  int64_t n = (int64_t)(t->storage->nbytes / lt_dtype_size((lt_dtype)t->dtype));
  lt_tensor *v = lt_tensor_new_view(t->storage, (lt_dtype)t->dtype, 0, 1, &n, NULL);
  if (!v) return lt_vm_raise(L, "storage");
  lt_vm_push_tensor(L, v);
  return 1;
}

static const luaL_Reg t7_base_methods[] = {
  {"isSetTo", m_is_set_to}, {"_storage_view", m_storage_view}, {NULL, NULL}
};

/* with the module at the top */
static void install(lua_State *L) {
  int mod = lua_gettop(L);
  lua_pushboolean(L, 1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &installed_key);
  lt_out_resize_detaches = true;   /* result tensors resize whatever views them, as in Torch7 */
  luaL_setfuncs(L, lt_gen_t7_functions, 0);
  lt_vm_add_methods(L, lt_gen_t7_methods);
  lt_vm_add_methods(L, t7_base_methods);
  lt_vm_push_methods(L);
  for (const luaL_Reg *r = lt_gen_t7_fmethods; r->name; r++) {
    if (lua_getfield(L, -1, r->name) == LUA_TNIL) {
      lua_pushcfunction(L, r->func);
      lua_setfield(L, -3, r->name);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  lt_vm_push_tensor_mt(L);
  lua_pushcfunction(L, t7_eq);
  lua_setfield(L, -2, "__eq");
  lua_pop(L, 1);
  (void)lt_set_default_dtype(LT_FLOAT64);
  /* the Lua half (src/vm/lua/torch7.lua) */
  if (lua_getfield(L, mod, "_t7_install") == LUA_TFUNCTION) {
    lua_pushvalue(L, mod);
    lua_call(L, 1, 0);
  } else {
    lua_pop(L, 1);
  }
  lua_settop(L, mod);
}

static bool env_asks(void) {
  const char *e = getenv("LUTORCH_COMPAT");
  return e && strcmp(e, "torch7") == 0;
}

void lt_vm_t7_open(lua_State *L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &compat_key);
  bool ask = lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (ask || env_asks()) install(L);
}

int lt_vm_set_torch7(lua_State *L) {
  if (lt_vm_torch7(L)) return 0;
  lua_getfield(L, LUA_REGISTRYINDEX, "lutorch.module");
  bool open = lua_istable(L, -1);
  if (!open) {
    lua_pop(L, 1);
    lua_pushboolean(L, 1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &compat_key);
    return 0;
  }
  if (lt_vm_tensor_made) {
    lua_pop(L, 1);
    return lt_error("compat: Torch7 mode must be chosen before any tensor is made (tensors already made "
                    "follow PyTorch's rules); start with lutorch --torch7, LUTORCH_COMPAT=torch7 or "
                    "require \"torch.torch7\"");
  }
  install(L);
  lua_pop(L, 1);
  return 0;
}

/* torch.compat() -> "pytorch" or "torch7"; torch.compat("torch7") switches */
static int l_compat(lua_State *L) {
  if (!lua_isnoneornil(L, 1)) {
    const char *m = luaL_checkstring(L, 1);
    if (strcmp(m, "torch7") == 0) {
      if (lt_vm_set_torch7(L) < 0) return lt_vm_raise(L, "compat");
    } else if (strcmp(m, "pytorch") == 0) {
      if (lt_vm_torch7(L))
        return luaL_error(L, "compat: this state runs in Torch7 mode, chosen before its first tensor; "
                          "it cannot switch back to PyTorch mode");
    } else {
      return luaL_error(L, "compat: argument 'mode' must be \"pytorch\" or \"torch7\", got '%s'", m);
    }
  }
  lua_pushstring(L, lt_vm_torch7(L) ? "torch7" : "pytorch");
  return 1;
}

/* require "torch.torch7" (stock lua5.4: torch.so's second entry point) */
int luaopen_torch_torch7(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, "lutorch.module");
  bool open = lua_istable(L, -1);
  lua_pop(L, 1);
  if (!open) {
    lua_pushboolean(L, 1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &compat_key);
    luaL_requiref(L, "torch", luaopen_torch, 1);
    return 1;
  }
  if (lt_vm_set_torch7(L) < 0) return lt_vm_raise(L, "require \"torch.torch7\"");
  lua_getfield(L, LUA_REGISTRYINDEX, "lutorch.module");
  return 1;
}

/* the module's torch.compat; the rest is in lt_vm_t7_open */
void lt_vm_open_torch7(lua_State *L) {
  lua_pushcfunction(L, l_compat);
  lua_setfield(L, -2, "compat");
}

/* ---- helpers of the generated binding ---- */

int lt_vm_t7_restensors(lua_State *L, int n) {
  if (lua_gettop(L) <= n) return 0;
  for (int i = 1; i <= n; i++)
    if (!lt_vm_totensor(L, i)) return 0;
  return 1;
}

void lt_vm_t7_permute(lt_args *from, lt_args *to, const int *perm, int n) {
  for (int j = 0; j < n; j++) {
    to->v[j] = from->v[perm[j]];
    /* a list parsed into the form's own buffer points there still: from lives
    ** as long as to is used */
  }
  to->n = n;
  from->n = 0;   /* what it owned belongs to `to` now */
}

int lt_vm_t7_pushres(lua_State *L, lt_tensor *r, lt_args *a) {
  lt_parse_release(a);
  if (!r) return lt_vm_raise(L, NULL);
  lt_tensor_release(r);
  lua_pushvalue(L, 1);
  return 1;
}

int lt_vm_t7_into(lua_State *L, lt_tensor **rs, int n, lt_args *a) {
  int rc = 0;
  for (int i = 0; i < n; i++) {
    if (!rs[i]) { rc = -1; break; }
    lt_tensor *dst = lt_vm_totensor(L, i + 1);
    if (rc == 0 && dst != rs[i]) {
      if (dst->numel == rs[i]->numel && !lt_tensor_same_shape(dst, rs[i]) && dst->numel > 0) {
        /* Torch7 keeps a result's shape when the count matches (y:range(0, 3) of a 2x2 view) */
        lt_intlist shape = { dst->sizes, dst->ndim };
        lt_tensor *v = lt_reshape(rs[i], shape);
        if (!v || lt_tensor_copy_(dst, v) < 0) rc = -1;
        lt_tensor_release(v);
      } else if (lt_tensor_resize_out("result", dst, rs[i]->ndim, rs[i]->sizes) < 0 || lt_tensor_copy_(dst, rs[i]) < 0) {
        rc = -1;
      }
    }
  }
  for (int i = 0; i < n; i++) lt_tensor_release(rs[i]);
  lt_parse_release(a);
  if (rc < 0) return lt_vm_raise(L, NULL);
  for (int i = 1; i <= n; i++) lua_pushvalue(L, i);
  return n;
}

int lt_vm_t7_number(lua_State *L, lt_tensor *r, lt_args *a) {
  lt_parse_release(a);
  if (!r) return lt_vm_raise(L, NULL);
  lt_scalar s = lt_tensor_item(r);
  lt_tensor_release(r);
  if (lt_scalar_is_none(s)) return lt_vm_raise(L, NULL);
  if (s.type == LT_SCALAR_FLOAT) lua_pushnumber(L, s.v.f);
  else if (s.type == LT_SCALAR_BOOL) lua_pushboolean(L, (int)s.v.i);
  else lua_pushinteger(L, s.v.i);
  return 1;
}

lt_tensor *lt_vm_t7_cast(lt_tensor *r, int dt) {
  if (!r || r->dtype == dt) return r;
  lt_tensor *c = lt_tensor_clone_as(r, (lt_dtype)dt);
  lt_tensor_release(r);
  return c;
}

int lt_vm_t7_mask(lt_argval *v) {
  if (!v->t || v->t->dtype != LT_UINT8) return 0;
  lt_tensor *b = lt_tensor_clone_as(v->t, LT_BOOL);
  if (!b) return -1;
  if (v->owned) lt_tensor_release(v->t);
  v->t = b;
  v->owned = true;
  return 0;
}

int lt_vm_t7_numel(lt_argval *self, lt_argval *other) {
  lt_tensor *a = self->t, *b = other->t;
  if (!a || !b || b->is_wrapped_number || a->numel != b->numel || lt_tensor_same_shape(a, b)) return 0;
  int64_t out[LT_MAX_DIMS];
  lt_error_clear();
  /* shapes that broadcast to self's keep broadcasting; any other pair of shapes with one
  ** element count (5 and 5x1, 2x3 and 3x2) goes element by element, as Torch7 did */
  int rc = lt_broadcast_shapes("t7", a->ndim, a->sizes, b->ndim, b->sizes, out);
  lt_error_clear();
  if (rc >= 0 && rc == a->ndim) {
    bool same = true;
    for (int i = 0; i < a->ndim; i++) same = same && out[i] == a->sizes[i];
    if (same) return 0;
  }
  lt_intlist shape = { a->sizes, a->ndim };
  lt_tensor *v = lt_reshape(b, shape);
  if (!v) return -1;
  if (other->owned) lt_tensor_release(b);
  other->t = v;
  other->owned = true;
  return 0;
}
