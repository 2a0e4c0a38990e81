/*
** linterchange.c — the Lua face of the interchange formats (src/serial):
** torch.load_safetensors / save_safetensors, load_npy / save_npy,
** load_npz / save_npz, load_t7. C resources held across Lua calls live in
** userdata boxes whose __gc frees them, so an error raised halfway (a bad
** key, a module that cannot be rebuilt) leaks nothing.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ltensor.h"
#include "largs.h"
#include "lutorch_vm.h"
#include "serial/safetensors.h"
#include "serial/npy.h"
#include "serial/npz.h"
#include "serial/t7.h"

/* ---- boxes ---- */

typedef struct box {
  void (*fin)(struct box *b);
  lt_st_header st;
  lt_tensor **ts;
  int n;
  char **names;
  lt_t7_doc doc;
} box;

static int box_gc(lua_State *L) {
  box *b = (box *)lua_touserdata(L, 1);
  if (b && b->fin) { b->fin(b); b->fin = NULL; }
  return 0;
}

static box *new_box(lua_State *L) {
  box *b = (box *)lua_newuserdatauv(L, sizeof(box), 0);
  memset(b, 0, sizeof *b);
  if (luaL_newmetatable(L, "lutorch.interchange.box")) {
    lua_pushcfunction(L, box_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return b;
}

static void fin_st(box *b) { lt_st_free_tensors(b->ts, b->st.n); lt_st_header_free(&b->st); b->ts = NULL; }
static void fin_npz(box *b) { lt_npz_free(b->n, b->names, b->ts); b->names = NULL; b->ts = NULL; b->n = 0; }
static void fin_t7(box *b) { lt_t7_doc_free(&b->doc); }

/* ---- argument helpers ---- */

static const char *check_path(lua_State *L, int idx, const char *fn) {
  if (lua_type(L, idx) != LUA_TSTRING)
    luaL_error(L, "%s: argument 'path' must be a string, got %s", fn, luaL_typename(L, idx));
  return lua_tostring(L, idx);
}

/* opts at idx: nil or a table of the names given (NULL-terminated) */
static void check_opts(lua_State *L, int idx, const char *fn, const char *const *names) {
  if (!lua_isnoneornil(L, idx) && !lua_istable(L, idx))
    luaL_error(L, "%s: argument 'opts' must be a table, got %s", fn, luaL_typename(L, idx));
  lt_vm_check_options(L, idx, fn, names);
}
static const char *const ST_LOAD_OPTS[] = {"mmap", NULL};
static const char *const NPZ_SAVE_OPTS[] = {"compressed", NULL};
static const char *const T7_LOAD_OPTS[] = {"format", "long_size", NULL};

static int opt_bool(lua_State *L, int idx, const char *key) {
  if (!lua_istable(L, idx)) return 0;
  lua_getfield(L, idx, key);
  int v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

/* A name -> tensor table at idx into arrays kept in a userdata (so Lua frees
** them on error); names borrow the table's strings. Leaves the userdata on
** the stack. */
static int collect_tensors(lua_State *L, int idx, const char *fn, const char ***names, lt_tensor ***ts) {
  if (!lua_istable(L, idx)) luaL_error(L, "%s: argument 'tensors' must be a table of name = tensor, got %s", fn, luaL_typename(L, idx));
  int n = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) { n++; lua_pop(L, 1); }
  void *mem = lua_newuserdatauv(L, (size_t)(n ? n : 1) * (sizeof(char *) + sizeof(lt_tensor *)), 0);
  *names = (const char **)mem;
  *ts = (lt_tensor **)((char *)mem + (size_t)(n ? n : 1) * sizeof(char *));
  int i = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "%s: every key of 'tensors' must be a string, got a %s key", fn, luaL_typename(L, -2));
    size_t kl;
    const char *k = lua_tolstring(L, -2, &kl);
    if (strlen(k) != kl) luaL_error(L, "%s: tensor name '%s...' contains a NUL byte", fn, k);
    lt_tensor *t = lt_vm_totensor(L, -1);
    if (!t) luaL_error(L, "%s: '%s' is not a tensor (got %s)", fn, k, luaL_typename(L, -1));
    (*names)[i] = k;
    (*ts)[i] = t;
    i++;
    lua_pop(L, 1);
  }
  return n;
}

/* ---- safetensors ---- */

/* torch.load_safetensors(path [, {mmap=true}]) -> {name = tensor}, metadata or nil */
static int l_load_safetensors(lua_State *L) {
  const char *fn = "torch.load_safetensors";
  const char *path = check_path(L, 1, fn);
  check_opts(L, 2, fn, ST_LOAD_OPTS);
  bool use_mmap = opt_bool(L, 2, "mmap");
  box *b = new_box(L);
  if (lt_st_load(path, use_mmap, &b->st, &b->ts) < 0) return lt_vm_raise(L, fn);
  b->fin = fin_st;
  lua_createtable(L, 0, b->st.n);
  for (int i = 0; i < b->st.n; i++) {
    lt_tensor *t = b->ts[i];
    b->ts[i] = NULL;
    lt_vm_push_tensor(L, t);
    lua_setfield(L, -2, b->st.entries[i].name);
  }
  lt_vm_gc_account(L);
  if (b->st.has_meta) {
    lua_createtable(L, 0, b->st.nmeta);
    for (int i = 0; i < b->st.nmeta; i++) {
      lua_pushstring(L, b->st.meta_vals[i]);
      lua_setfield(L, -2, b->st.meta_keys[i]);
    }
  } else {
    lua_pushnil(L);
  }
  return 2;
}

/* torch.save_safetensors(path, {name = tensor} [, {key = "value"}]) */
static int l_save_safetensors(lua_State *L) {
  const char *fn = "torch.save_safetensors";
  const char *path = check_path(L, 1, fn);
  lua_settop(L, 3);
  const char **names;
  lt_tensor **ts;
  int n = collect_tensors(L, 2, fn, &names, &ts);
  int nm = 0;
  const char **mk = NULL, **mv = NULL;
  if (!lua_isnoneornil(L, 3)) {
    if (!lua_istable(L, 3)) luaL_error(L, "%s: argument 'metadata' must be a table of strings, got %s", fn, luaL_typename(L, 3));
    lua_pushnil(L);
    while (lua_next(L, 3)) { nm++; lua_pop(L, 1); }
    mk = (const char **)lua_newuserdatauv(L, (size_t)(nm ? nm : 1) * 2 * sizeof(char *), 0);
    mv = mk + (nm ? nm : 1);
    lua_createtable(L, 2 * nm, 0);      /* keeps the string forms alive */
    int strs = lua_gettop(L), i = 0;
    lua_pushnil(L);
    while (lua_next(L, 3)) {
      if (lua_type(L, -2) != LUA_TSTRING || !(lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER))
        luaL_error(L, "%s: metadata must map strings to strings (got a %s key and a %s value)", fn,
                   luaL_typename(L, -2), luaL_typename(L, -1));
      luaL_tolstring(L, -1, NULL);      /* a number's string form, or the string itself */
      mv[i] = lua_tostring(L, -1);
      lua_rawseti(L, strs, 2 * i + 2);
      mk[i] = lua_tostring(L, -2);
      lua_pushvalue(L, -2);
      lua_rawseti(L, strs, 2 * i + 1);
      i++;
      lua_pop(L, 1);
    }
  }
  if (lt_st_save(path, n, names, ts, nm, mk, mv) < 0) return lt_vm_raise(L, fn);
  return 0;
}

/* ---- npy / npz ---- */

static int l_load_npy(lua_State *L) {
  const char *fn = "torch.load_npy";
  const char *path = check_path(L, 1, fn);
  lt_tensor *t = lt_npy_load(path);
  if (!t) return lt_vm_raise(L, fn);
  lt_vm_push_tensor(L, t);
  lt_vm_gc_account(L);
  return 1;
}

static int l_save_npy(lua_State *L) {
  const char *fn = "torch.save_npy";
  const char *path = check_path(L, 1, fn);
  lt_tensor *t = lt_vm_checktensor(L, 2, fn, "tensor");
  if (lt_npy_save(path, t) < 0) return lt_vm_raise(L, fn);
  return 0;
}

static int l_load_npz(lua_State *L) {
  const char *fn = "torch.load_npz";
  const char *path = check_path(L, 1, fn);
  box *b = new_box(L);
  if (lt_npz_load(path, &b->n, &b->names, &b->ts) < 0) return lt_vm_raise(L, fn);
  b->fin = fin_npz;
  lua_createtable(L, 0, b->n);
  for (int i = 0; i < b->n; i++) {
    lt_tensor *t = b->ts[i];
    b->ts[i] = NULL;
    lt_vm_push_tensor(L, t);
    lua_setfield(L, -2, b->names[i]);
  }
  lt_vm_gc_account(L);
  return 1;
}

static int l_save_npz(lua_State *L) {
  const char *fn = "torch.save_npz";
  const char *path = check_path(L, 1, fn);
  lua_settop(L, 3);
  check_opts(L, 3, fn, NPZ_SAVE_OPTS);
  bool compressed = opt_bool(L, 3, "compressed");
  const char **names;
  lt_tensor **ts;
  int n = collect_tensors(L, 2, fn, &names, &ts);
  if (lt_npz_save(path, n, names, ts, compressed) < 0) return lt_vm_raise(L, fn);
  return 0;
}

/* ---- Torch7 ---- */


/* the class table of the nn mapping (loaded once per state) at the top of the stack */
static void push_t7map(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, "lutorch.t7map") == LUA_TTABLE) return;
  lua_pop(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, "lutorch.module");
  lua_getfield(L, -1, "_t7map");       /* src/vm/lua/t7map.lua */
  lua_remove(L, -2);
  lua_call(L, 0, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, "lutorch.t7map");
}

typedef struct class_ctx { lua_State *L; int map; } class_ctx;

static bool t7_class_ok(const char *name, void *ctx) {
  class_ctx *c = (class_ctx *)ctx;
  lua_getfield(c->L, c->map, "classes");
  lua_getfield(c->L, -1, name);
  bool ok = lua_toboolean(c->L, -1);
  lua_pop(c->L, 2);
  return ok;
}

typedef struct conv {
  lua_State *L;
  lt_t7_doc *doc;
  int memo, map;     /* stack indices */
  const char *fn, *path;
} conv;

static void push_value(conv *c, const lt_t7_value *v, int depth);

static void push_obj(conv *c, int32_t slot, int depth) {
  lua_State *L = c->L;
  if (lua_rawgeti(L, c->memo, slot + 1) != LUA_TNIL) {
    if (lua_type(L, -1) == LUA_TLIGHTUSERDATA)
      luaL_error(L, "%s: '%s' refers to a %s from inside its own fields, which lutorch cannot rebuild", c->fn, c->path,
                 c->doc->objs[slot].class_name);
    return;
  }
  lua_pop(L, 1);
  if (depth > LT_T7_MAX_DEPTH + 8) luaL_error(L, "%s: '%s' nests too deep", c->fn, c->path);
  luaL_checkstack(L, 8, "load_t7");
  lt_t7_object *o = &c->doc->objs[slot];
  switch (o->kind) {
    case LT_T7_TABLE: {
      lua_createtable(L, 0, 0);
      lua_pushvalue(L, -1);
      lua_rawseti(L, c->memo, slot + 1);
      for (int64_t i = 0; i < o->n; i++) {
        o = &c->doc->objs[slot];
        push_value(c, &o->keys[i], depth + 1);
        if (lua_isnil(L, -1) || (lua_type(L, -1) == LUA_TNUMBER && lua_tonumber(L, -1) != lua_tonumber(L, -1)))
          luaL_error(L, "%s: '%s' holds a table with a nil or NaN key", c->fn, c->path);
        push_value(c, &c->doc->objs[slot].vals[i], depth + 1);
        lua_rawset(L, -3);
      }
      return;
    }
    case LT_T7_TENSOR: case LT_T7_STORAGE:
      lt_tensor_retain(o->tensor);
      lt_vm_push_tensor(L, o->tensor);
      lua_pushvalue(L, -1);
      lua_rawseti(L, c->memo, slot + 1);
      return;
    case LT_T7_CLASS: {
      lua_pushlightuserdata(L, (void *)o);   /* in progress */
      lua_rawseti(L, c->memo, slot + 1);
      lua_getfield(L, c->map, "build");
      lua_pushstring(L, o->class_name);
      push_value(c, &o->fields, depth + 1);
      if (lua_pcall(L, 2, 1, 0) != LUA_OK)
        luaL_error(L, "%s: '%s': %s", c->fn, c->path, lua_tostring(L, -1));
      lua_pushvalue(L, -1);
      lua_rawseti(L, c->memo, slot + 1);
      return;
    }
  }
}

static void push_value(conv *c, const lt_t7_value *v, int depth) {
  lua_State *L = c->L;
  switch (v->kind) {
    case LT_T7_NIL: lua_pushnil(L); break;
    case LT_T7_BOOLEAN: lua_pushboolean(L, v->boolean); break;
    case LT_T7_STRING: lua_pushlstring(L, v->str, v->len); break;
    case LT_T7_NUMBER:
      /* Torch7 numbers are doubles; whole ones become integers (sizes, counts, indices) */
      if (v->num == floor(v->num) && fabs(v->num) < 9007199254740992.0) lua_pushinteger(L, (lua_Integer)v->num);
      else lua_pushnumber(L, v->num);
      break;
    case LT_T7_OBJ: push_obj(c, v->obj, depth); break;
  }
}

/* torch.load_t7(path [, {format="binary"|"ascii", long_size=8|4}]) -> value */
static int l_load_t7(lua_State *L) {
  const char *fn = "torch.load_t7";
  const char *path = check_path(L, 1, fn);
  check_opts(L, 2, fn, T7_LOAD_OPTS);
  lt_t7_options opt = {-1, 8, t7_class_ok, NULL};
  if (lua_istable(L, 2)) {
    lua_getfield(L, 2, "format");
    if (!lua_isnil(L, -1)) {
      const char *f = lua_tostring(L, -1);
      if (f && strcmp(f, "binary") == 0) opt.format = 0;
      else if (f && strcmp(f, "ascii") == 0) opt.format = 1;
      else luaL_error(L, "%s: option 'format' must be \"binary\" or \"ascii\"", fn);
    }
    lua_getfield(L, 2, "long_size");
    if (!lua_isnil(L, -1)) {
      lua_Integer ls = lua_tointeger(L, -1);
      if (ls != 4 && ls != 8) luaL_error(L, "%s: option 'long_size' must be 4 or 8", fn);
      opt.long_size = (int)ls;
    }
    lua_pop(L, 2);
  }
  lua_settop(L, 2);
  push_t7map(L);                       /* 3 */
  class_ctx cc = {L, 3};
  opt.ctx = &cc;
  box *b = new_box(L);                 /* 4 */
  if (lt_t7_load(path, &opt, &b->doc) < 0) return lt_vm_raise(L, fn);
  b->fin = fin_t7;
  lua_createtable(L, b->doc.nobjs, 0);   /* 5: memo, slot + 1 -> value */
  conv c = {L, &b->doc, 5, 3, fn, path};
  push_value(&c, &b->doc.root, 0);
  lt_vm_gc_account(L);
  return 1;
}

static const luaL_Reg interchange_functions[] = {
  {"load_safetensors", l_load_safetensors}, {"save_safetensors", l_save_safetensors},
  {"load_npy", l_load_npy}, {"save_npy", l_save_npy},
  {"load_npz", l_load_npz}, {"save_npz", l_save_npz},
  {"load_t7", l_load_t7},
  {NULL, NULL}
};

void lt_vm_open_interchange(lua_State *L) { luaL_setfuncs(L, interchange_functions, 0); }
