/*
** lembed.c — the embedding API of include/lutorch.h: Lua states with the
** torch libraries, running code, tensors across the C/Lua boundary.
**
** Every entry point that touches Lua runs its work inside lua_pcall (a
** protected C function reached through a light userdata of arguments), so a
** Lua error, including out of memory, becomes a message in the error slot
** and a -1/NULL return: never a longjmp into the embedding program.
*/
#define LUTORCH_BUILDING
#include <string.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include "../../include/lutorch.h"
#include "lutorch_vm.h"
#include "lt7.h"
#include "ltensor.h"

const char *lutorch_version(void) { return LUTORCH_VERSION; }

const char *lutorch_last_error(void) { return lt_error_message(); }

/* message handler: the error text with a traceback, as lua.c prints it */
static int msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

/* lua_pcall of the function below nargs arguments, with the handler; the
** error message goes to the slot and is popped. 0 or -1. */
static int pcall(lua_State *L, int nargs, int nresults) {
  if (!lua_checkstack(L, 2)) return lt_error("lutorch: Lua stack overflow");
  int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, msghandler);
  lua_insert(L, base);
  int status = lua_pcall(L, nargs, nresults, base);
  lua_remove(L, base);
  if (status == LUA_OK) return 0;
  const char *msg = lua_tostring(L, -1);
  lt_error("%s", msg ? msg : "(error object is not a string)");
  lua_pop(L, 1);
  return -1;
}

/* run f(ud) protected */
static int protect(lua_State *L, lua_CFunction f, void *ud) {
  if (!L) return lt_error("lutorch: no Lua state (NULL)");
  if (!lua_checkstack(L, 3)) return lt_error("lutorch: Lua stack overflow");
  lua_pushcfunction(L, f);
  lua_pushlightuserdata(L, ud);
  return pcall(L, 1, 0);
}

static void *arg_ud(lua_State *L) { return lua_touserdata(L, 1); }

static void need_torch(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, "lutorch.module");
  if (!lua_istable(L, -1)) luaL_error(L, "lutorch: torch is not loaded in this state (call lutorch_openlibs)");
  lua_pop(L, 1);
}

/* a new reference to the tensor (or number/boolean, as a 0-d tensor) at idx;
** NULL for nil; raises otherwise */
static lt_tensor *to_ref(lua_State *L, int idx, const char *what) {
  lt_tensor *t = lt_vm_totensor(L, idx);
  if (t) { lt_tensor_retain(t); return t; }
  switch (lua_type(L, idx)) {
    case LUA_TNIL: case LUA_TNONE: return NULL;
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) t = lt_tensor_from_scalar(lt_scalar_int(lua_tointeger(L, idx)), LT_INT64);
      else t = lt_tensor_from_scalar(lt_scalar_float(lua_tonumber(L, idx)), LT_FLOAT64);
      break;
    case LUA_TBOOLEAN:
      t = lt_tensor_from_scalar(lt_scalar_bool(lua_toboolean(L, idx)), LT_BOOL);
      break;
    default:
      if (lt_vm_toud(L, idx)) luaL_error(L, "%s is a freed tensor", what);
      luaL_error(L, "%s is a %s, not a tensor", what, luaL_typename(L, idx));
  }
  if (!t) lt_vm_raise(L, NULL);
  return t;
}

/* ---- states ---- */

static const char *const libs[] = { "nn", "optim", "data", NULL };

static int p_openlibs(lua_State *L) {
  lua_getglobal(L, "package");
  if (!lua_istable(L, -1)) return luaL_error(L, "lutorch_openlibs: the standard libraries are not open (luaL_openlibs)");
  lua_pop(L, 1);
  luaL_requiref(L, "torch", luaopen_torch, 1);
  lua_pop(L, 1);
  for (int i = 0; libs[i]; i++) {
    lua_getglobal(L, "require");
    lua_pushstring(L, libs[i]);
    lua_call(L, 1, 1);
    lua_setglobal(L, libs[i]);
  }
  return 0;
}

int lutorch_openlibs(lua_State *L) {
  lt_init();   /* luaopen_torch does it too; here it is done before any Lua runs */
  return protect(L, p_openlibs, NULL);
}

static int p_openstd(lua_State *L) { luaL_openlibs(L); return 0; }

lua_State *lutorch_open(void) {
  lua_State *L = luaL_newstate();
  if (!L) { lt_error("lutorch_open: not enough memory for a Lua state"); return NULL; }
  if (protect(L, p_openstd, NULL) < 0 || lutorch_openlibs(L) < 0) { lua_close(L); return NULL; }
  /* most tensors die young: the generational collector frees them sooner */
  lua_gc(L, LUA_GCGEN, 0, 0);
  return L;
}

void lutorch_close(lua_State *L) { if (L) lua_close(L); }

static int p_set_torch7(lua_State *L) {
  if (lt_vm_set_torch7(L) < 0) return lt_vm_raise(L, "lutorch_set_compat");
  return 0;
}

int lutorch_set_compat(lua_State *L, const char *mode) {
  if (!L || !mode) return lt_error("lutorch_set_compat: arguments 'L' and 'mode' must not be NULL");
  if (strcmp(mode, "pytorch") == 0) {
    if (lt_vm_torch7(L)) return lt_error("lutorch_set_compat: the state is in Torch7 mode already; it cannot switch back");
    return 0;
  }
  if (strcmp(mode, "torch7") != 0)
    return lt_error("lutorch_set_compat: argument 'mode' must be \"pytorch\" or \"torch7\", got '%s'", mode);
  return protect(L, p_set_torch7, NULL);
}

/* ---- running code ---- */

typedef struct run_args { const char *code; int is_file; lt_tensor *result; } run_args;

static int p_run(lua_State *L) {
  run_args *a = arg_ud(L);
  int st = a->is_file ? luaL_loadfile(L, a->code) : luaL_loadbuffer(L, a->code, strlen(a->code), "=(lutorch_dostring)");
  if (st != LUA_OK) return lua_error(L);
  lua_call(L, 0, 0);
  return 0;
}

int lutorch_dostring(lua_State *L, const char *code) {
  if (!code) return lt_error("lutorch_dostring: code is NULL");
  run_args a = { code, 0, NULL };
  return protect(L, p_run, &a);
}

int lutorch_dofile(lua_State *L, const char *path) {
  if (!path) return lt_error("lutorch_dofile: path is NULL");
  run_args a = { path, 1, NULL };
  return protect(L, p_run, &a);
}

static int p_eval(lua_State *L) {
  run_args *a = arg_ud(L);
  need_torch(L);
  /* an expression first, as the REPL does; then the code as a chunk */
  lua_pushfstring(L, "return %s", a->code);
  size_t n;
  const char *ret = lua_tolstring(L, -1, &n);
  if (luaL_loadbuffer(L, ret, n, "=(lutorch_eval)") != LUA_OK) {
    lua_pop(L, 1);
    if (luaL_loadbuffer(L, a->code, strlen(a->code), "=(lutorch_eval)") != LUA_OK) return lua_error(L);
  }
  lua_call(L, 0, 1);
  a->result = to_ref(L, -1, "lutorch_eval: the result");
  if (!a->result) return luaL_error(L, "lutorch_eval: the code returned nil");
  return 0;
}

lt_tensor *lutorch_eval(lua_State *L, const char *code) {
  if (!code) return lt_error_null("lutorch_eval: code is NULL");
  run_args a = { code, 0, NULL };
  if (protect(L, p_eval, &a) < 0) { lt_tensor_release(a.result); return NULL; }
  return a.result;
}

/* ---- tensors in and out ---- */

typedef struct tensor_args { const char *name; lt_tensor *t; int idx; } tensor_args;

static int p_push(lua_State *L) {
  tensor_args *a = arg_ud(L);
  need_torch(L);
  if (!a->t) { lua_pushnil(L); return 1; }
  lt_tensor_retain(a->t);
  lt_vm_push_tensor(L, a->t);
  return 1;
}

int lutorch_push(lua_State *L, lt_tensor *t) {
  if (!L) return lt_error("lutorch: no Lua state (NULL)");
  if (!lua_checkstack(L, 3)) return lt_error("lutorch: Lua stack overflow");
  tensor_args a = { NULL, t, 0 };
  lua_pushcfunction(L, p_push);
  lua_pushlightuserdata(L, &a);
  return pcall(L, 1, 1);
}

static int p_setglobal(lua_State *L) {
  tensor_args *a = arg_ud(L);
  p_push(L);
  lua_setglobal(L, a->name);
  return 0;
}

int lutorch_setglobal(lua_State *L, const char *name, lt_tensor *t) {
  if (!name) return lt_error("lutorch_setglobal: name is NULL");
  tensor_args a = { name, t, 0 };
  return protect(L, p_setglobal, &a);
}

static int p_totensor(lua_State *L) {
  tensor_args *a = arg_ud(L);
  a->t = to_ref(L, 2, "lutorch_totensor: the value");
  if (!a->t) return luaL_error(L, "lutorch_totensor: the value is nil, not a tensor");
  return 0;
}

lt_tensor *lutorch_totensor(lua_State *L, int idx) {
  if (!L) return lt_error_null("lutorch: no Lua state (NULL)");
  if (!lua_checkstack(L, 4)) return lt_error_null("lutorch: Lua stack overflow");
  idx = lua_absindex(L, idx);
  tensor_args a = { NULL, NULL, idx };
  lua_pushcfunction(L, p_totensor);
  lua_pushlightuserdata(L, &a);
  lua_pushvalue(L, idx);
  if (pcall(L, 2, 0) < 0) { lt_tensor_release(a.t); return NULL; }
  return a.t;
}

/* push the value at a path: globals, then fields split at '.' (numbers index
** sequences) and one optional ':' before the last part (a method: self is
** pushed after it). Returns 1 + (method ? 1 : 0) values pushed. */
static int push_path(lua_State *L, const char *path) {
  const char *p = path;
  int first = 1, method = 0;
  for (;;) {
    size_t n = strcspn(p, ".:");
    if (n == 0) luaL_error(L, "bad name '%s'", path);
    lua_pushlstring(L, p, n);
    const char *part = lua_tostring(L, -1);
    if (first) {
      lua_getglobal(L, part);
      lua_remove(L, -2);
      first = 0;
    } else {
      if (lua_isnil(L, -2)) {
        lua_pushlstring(L, path, (size_t)(p - path - 1));
        luaL_error(L, "'%s': '%s' is nil", path, lua_tostring(L, -1));
      }
      int isnum = lua_stringtonumber(L, part) != 0;
      if (isnum && lua_isinteger(L, -1)) {
        lua_Integer k = lua_tointeger(L, -1);
        lua_pop(L, 2);
        lua_geti(L, -1, k);
      } else {
        if (isnum) lua_pop(L, 1);
        lua_gettable(L, -2);
      }
      if (method) {            /* t:name -> t.name, t */
        lua_insert(L, -2);
        return 2;
      }
      lua_remove(L, -2);
    }
    p += n;
    if (*p == 0) return 1;
    if (*p == ':') method = 1;
    p++;
    if (method && strpbrk(p, ".:")) luaL_error(L, "bad name '%s' (':' must come before the last part)", path);
  }
}

static int p_getglobal(lua_State *L) {
  tensor_args *a = arg_ud(L);
  need_torch(L);
  push_path(L, a->name);
  a->t = to_ref(L, -1, a->name);
  if (!a->t) return luaL_error(L, "lutorch_getglobal: '%s' is nil, not a tensor", a->name);
  return 0;
}

lt_tensor *lutorch_getglobal(lua_State *L, const char *path) {
  if (!path) return lt_error_null("lutorch_getglobal: path is NULL");
  tensor_args a = { path, NULL, 0 };
  if (protect(L, p_getglobal, &a) < 0) { lt_tensor_release(a.t); return NULL; }
  return a.t;
}

/* ---- calling Lua ---- */

typedef struct call_args {
  const char *fn;
  int nargs;
  lt_tensor *const *args;
  int nresults;
  lt_tensor **results;
} call_args;

static int p_call(lua_State *L) {
  call_args *a = arg_ud(L);
  need_torch(L);
  int nself = 0;
  if (a->fn) nself = push_path(L, a->fn) - 1;
  else lua_pushvalue(L, 2);                /* the caller's function, below us */
  int fi = lua_gettop(L) - nself;
  if (!lua_isfunction(L, fi)) {
    if (luaL_getmetafield(L, fi, "__call") == LUA_TNIL)
      return luaL_error(L, "lutorch_call: '%s' is %s%s, not a function", a->fn ? a->fn : "(stack value)",
                        lua_isnil(L, fi) ? "" : "a ", luaL_typename(L, fi));
    lua_pop(L, 1);
  }
  luaL_checkstack(L, a->nargs + 1, "lutorch_call: too many arguments");
  for (int i = 0; i < a->nargs; i++) {
    if (a->args[i]) { lt_tensor_retain(a->args[i]); lt_vm_push_tensor(L, a->args[i]); }
    else lua_pushnil(L);
  }
  int base = lua_gettop(L) - a->nargs - nself;  /* the function */
  lua_call(L, a->nargs + nself, a->nresults);
  for (int i = 0; i < a->nresults; i++) {
    char what[96];
    snprintf(what, sizeof what, "lutorch_call: result %d of '%s'", i + 1, a->fn ? a->fn : "(function)");
    a->results[i] = to_ref(L, base + i, what);
  }
  return 0;
}

int lutorch_call(lua_State *L, const char *fn, int nargs, lt_tensor *const *args,
                 int nresults, lt_tensor **results) {
  for (int i = 0; i < nresults; i++) results[i] = NULL;
  if (!L) return lt_error("lutorch: no Lua state (NULL)");
  if (nargs < 0 || nresults < 0 || (nargs && !args) || (nresults && !results))
    return lt_error("lutorch_call: bad argument counts or arrays");
  call_args a = { fn, nargs, args, nresults, results };
  if (!lua_checkstack(L, 4)) return lt_error("lutorch: Lua stack overflow");
  int st;
  if (fn) st = protect(L, p_call, &a);
  else {
    if (lua_gettop(L) < 1) return lt_error("lutorch_call: no function on the stack");
    lua_pushcfunction(L, p_call);
    lua_insert(L, -2);                       /* p_call, fn */
    lua_pushlightuserdata(L, &a);
    lua_insert(L, -2);                       /* p_call, ud, fn */
    st = pcall(L, 2, 0);
  }
  if (st < 0) {
    for (int i = 0; i < nresults; i++) { lt_tensor_release(results[i]); results[i] = NULL; }
    return -1;
  }
  return 0;
}

int lutorch_pcall(lua_State *L, int nargs, int nresults) {
  if (!L) return lt_error("lutorch: no Lua state (NULL)");
  if (nargs < 0 || lua_gettop(L) < nargs + 1) return lt_error("lutorch_pcall: no function below %d arguments", nargs);
  return pcall(L, nargs, nresults);
}
