/*
** llibrary.c — the C half of torch.library and torch.ops: Lua values to and
** from the boxed values of ops defined at run time (dispatch/registry.h),
** Lua functions as their kernels, fake kernels and derivatives, and the
** callable that torch.ops.<ns>.<name> is. The public API (define, impl,
** register_autograd, Library, opcheck) is src/vm/lua/library.lua over the
** torch.library._* functions here.
**
** A Lua kernel runs on the Lua thread that called the op when there is one
** (running_L), else — a backward started from C, say — on a thread the state
** keeps for callbacks. When the state closes, the kernels it registered are
** taken out of the registry, so a C caller afterwards gets "no kernel" rather
** than a dangling function.
*/
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ltensor.h"
#include "lutorch_vm.h"
#include "autograd/custom_autograd.h"

static _Thread_local lua_State *running_L;

/* The Lua call in progress (l_call), so that a Lua kernel it reaches hands the
** caller's own tensor values to the function and leaves the function's results on
** the stack for l_call to return, instead of wrapping each tensor in a new userdata
** twice: a call costs about a third less. Matched by state, op and tensor pointer;
** anything else (a kernel reached from C, a backward) converts as usual. */
typedef struct call_frame {
  lua_State *L;
  const lt_custom_op *op;
  bool used;                 /* one kernel per call takes it */
  int arg_idx[LT_CUSTOM_MAX_ARGS];   /* each argument's stack index in l_call (0: none) */
  int ret_base;              /* where the kernel's results were left (0: not left) */
} call_frame;
static _Thread_local call_frame *cur_frame;

/* what every Lua-side registration holds: the state it belongs to and a function */
typedef struct lua_fn {
  lua_State *owner;     /* the state's main thread */
  lua_State *cb;        /* its callback thread (anchored in the registry) */
  int ref;              /* the function */
  int ref2;             /* a second function (a derivative's backward), or LUA_NOREF */
  char what[48];        /* "cpu kernel", "fake kernel" ... for errors */
} lua_fn;

static const char *const CB_KEY = "lutorch.library.cb";

static lua_State *main_thread(lua_State *L) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  lua_State *m = lua_tothread(L, -1);
  lua_pop(L, 1);
  return m;
}

static lua_fn *new_fn(lua_State *L, int idx, int idx2, const char *what) {
  lua_fn *f = malloc(sizeof *f);
  if (!f) { luaL_error(L, "torch.library: out of memory"); return NULL; }
  f->owner = main_thread(L);
  lua_getfield(L, LUA_REGISTRYINDEX, CB_KEY);
  f->cb = lua_tothread(L, -1);
  lua_pop(L, 1);
  lua_pushvalue(L, idx);
  f->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  f->ref2 = LUA_NOREF;
  if (idx2) { lua_pushvalue(L, idx2); f->ref2 = luaL_ref(L, LUA_REGISTRYINDEX); }
  snprintf(f->what, sizeof f->what, "%s", what);
  return f;
}

static void free_fn(lua_fn *f) {
  if (!f) return;
  luaL_unref(f->owner, LUA_REGISTRYINDEX, f->ref);
  luaL_unref(f->owner, LUA_REGISTRYINDEX, f->ref2);
  free(f);
}

static lua_State *state_for(lua_fn *f) { return running_L ? running_L : f->cb; }

/* ---- values ---- */

static const char *ivalue_lua_name(lua_State *L, int idx) {
  if (lt_vm_totensor(L, idx)) return "Tensor";
  if (lua_isinteger(L, idx)) return "int";
  if (lua_type(L, idx) == LUA_TNUMBER) return "float";
  return luaL_typename(L, idx);
}

/* scratch memory that lives as long as the value at the top of the stack is kept */
static void *scratch(lua_State *L, size_t n) { return lua_newuserdatauv(L, n ? n : 1, 0); }

/* Lua value at idx -> v for schema argument a; pushes at most one scratch value
** (keep it until the call is done). 0, or -1 with *why set. */
static int to_ivalue(lua_State *L, int idx, const lt_schema_arg *a, lt_ivalue *v) {
  int t = lua_type(L, idx);
  *v = lt_iv_none();
  if (t == LUA_TNIL || t == LUA_TNONE) return 0;   /* checked against optional/default later */
  switch (a->type) {
  case LT_ARG_TENSOR: {
    lt_tensor *x = lt_vm_totensor(L, idx);
    if (!x) return -1;
    *v = lt_iv_tensor(x);
    return 0;
  }
  case LT_ARG_INT:
    if (lua_isinteger(L, idx)) { *v = lt_iv_int(lua_tointeger(L, idx)); return 0; }
    if (t == LUA_TNUMBER) {
      lua_Number n = lua_tonumber(L, idx);
      if (n == (lua_Number)(int64_t)n) { *v = lt_iv_int((int64_t)n); return 0; }
    }
    return -1;
  case LT_ARG_FLOAT:
    if (t != LUA_TNUMBER) return -1;
    *v = lt_iv_float(lua_tonumber(L, idx));
    return 0;
  case LT_ARG_BOOL:
    if (t != LUA_TBOOLEAN) return -1;
    *v = lt_iv_bool(lua_toboolean(L, idx));
    return 0;
  case LT_ARG_STR:
    if (t != LUA_TSTRING) return -1;
    v->tag = LT_ARG_STR;
    v->u.s = lua_tostring(L, idx);
    return 0;
  case LT_ARG_SCALAR:
    v->tag = LT_ARG_SCALAR;
    if (lua_isinteger(L, idx)) v->u.sc = lt_scalar_int(lua_tointeger(L, idx));
    else if (t == LUA_TNUMBER) v->u.sc = lt_scalar_float(lua_tonumber(L, idx));
    else if (t == LUA_TBOOLEAN) v->u.sc = lt_scalar_bool(lua_toboolean(L, idx));
    else { *v = lt_iv_none(); return -1; }
    return 0;
  case LT_ARG_TENSOR_LIST: case LT_ARG_INT_LIST: case LT_ARG_FLOAT_LIST: {
    if (a->type == LT_ARG_INT_LIST && lua_isinteger(L, idx)) {   /* one int stands for a list of one */
      int64_t *p = scratch(L, sizeof(int64_t));
      p[0] = lua_tointeger(L, idx);
      v->tag = LT_ARG_INT_LIST; v->u.il.v = p; v->u.il.n = 1;
      return 0;
    }
    if (t != LUA_TTABLE || lt_vm_totensor(L, idx)) return -1;
    idx = lua_absindex(L, idx);
    int n = (int)lua_rawlen(L, idx);
    size_t elt = a->type == LT_ARG_TENSOR_LIST ? sizeof(lt_tensor *) : sizeof(int64_t);
    void *p = scratch(L, elt * (size_t)n);
    for (int i = 0; i < n; i++) {
      lua_rawgeti(L, idx, i + 1);
      bool ok = true;
      if (a->type == LT_ARG_TENSOR_LIST) ok = (((lt_tensor **)p)[i] = lt_vm_totensor(L, -1)) != NULL;
      else if (a->type == LT_ARG_INT_LIST) { ok = lua_isinteger(L, -1); ((int64_t *)p)[i] = lua_tointeger(L, -1); }
      else { ok = lua_type(L, -1) == LUA_TNUMBER; ((double *)p)[i] = lua_tonumber(L, -1); }
      lua_pop(L, 1);
      if (!ok) { lua_pop(L, 1); return -1; }
    }
    v->tag = a->type;
    if (a->type == LT_ARG_TENSOR_LIST) { v->u.tl.v = p; v->u.tl.n = n; }
    else if (a->type == LT_ARG_INT_LIST) { v->u.il.v = p; v->u.il.n = n; }
    else { v->u.fl.v = p; v->u.fl.n = n; }
    return 0;
  }
  default:
    return -1;
  }
}

/* push a value; takes the tensor references of a result value (owned) */
static void push_ivalue(lua_State *L, lt_ivalue *v, bool owned) {
  switch (v->tag) {
  case LT_ARG_TENSOR:
    if (!owned) lt_tensor_retain(v->u.t);
    lt_vm_push_tensor(L, v->u.t);
    if (owned) v->tag = LT_ARG_NONE;   /* the reference went to Lua */
    break;
  case LT_ARG_TENSOR_LIST:
    lua_createtable(L, v->u.tl.n, 0);
    for (int i = 0; i < v->u.tl.n; i++) {
      if (!owned) lt_tensor_retain(v->u.tl.v[i]);
      lt_vm_push_tensor(L, v->u.tl.v[i]);
      lua_rawseti(L, -2, i + 1);
    }
    if (owned) { free(v->u.tl.v); v->tag = LT_ARG_NONE; }
    break;
  case LT_ARG_INT: lua_pushinteger(L, v->u.i); break;
  case LT_ARG_FLOAT: lua_pushnumber(L, v->u.f); break;
  case LT_ARG_BOOL: lua_pushboolean(L, v->u.b); break;
  case LT_ARG_STR: lua_pushstring(L, v->u.s); break;
  case LT_ARG_SCALAR:
    if (v->u.sc.type == LT_SCALAR_FLOAT) lua_pushnumber(L, v->u.sc.v.f);
    else if (v->u.sc.type == LT_SCALAR_BOOL) lua_pushboolean(L, v->u.sc.v.i != 0);
    else lua_pushinteger(L, v->u.sc.v.i);
    break;
  case LT_ARG_INT_LIST:
    lua_createtable(L, v->u.il.n, 0);
    for (int i = 0; i < v->u.il.n; i++) { lua_pushinteger(L, v->u.il.v[i]); lua_rawseti(L, -2, i + 1); }
    break;
  case LT_ARG_FLOAT_LIST:
    lua_createtable(L, v->u.fl.n, 0);
    for (int i = 0; i < v->u.fl.n; i++) { lua_pushnumber(L, v->u.fl.v[i]); lua_rawseti(L, -2, i + 1); }
    break;
  default: lua_pushnil(L); break;
  }
}

/* a kernel's Lua result at idx -> an owned result value for r; 0 or -1 (error set) */
static int result_from_lua(lua_State *L, int idx, const lt_custom_op *op, const lt_schema_arg *r, int k,
                           const char *what, lt_ivalue *out) {
  lt_ivalue v;
  if (lua_isnil(L, idx)) { *out = lt_iv_none(); return 0; }   /* check_results decides */
  int top = lua_gettop(L);
  int rc = to_ivalue(L, idx, r, &v);
  if (rc < 0) {
    lua_settop(L, top);
    return lt_error("%s: the %s returned %s for result %d, expected %s", op->schema.qualname, what,
                    ivalue_lua_name(L, idx), k + 1, lt_arg_type_name(r));
  }
  *out = v;
  /* make it owned: scratch arrays and borrowed tensors become the caller's */
  if (v.tag == LT_ARG_TENSOR) lt_tensor_retain(v.u.t);
  else if (v.tag == LT_ARG_TENSOR_LIST || v.tag == LT_ARG_INT_LIST || v.tag == LT_ARG_FLOAT_LIST) {
    size_t elt = v.tag == LT_ARG_TENSOR_LIST ? sizeof(lt_tensor *) : v.tag == LT_ARG_INT_LIST ? sizeof(int64_t) : sizeof(double);
    int n = v.tag == LT_ARG_TENSOR_LIST ? v.u.tl.n : v.tag == LT_ARG_INT_LIST ? v.u.il.n : v.u.fl.n;
    void *p = malloc(elt * (size_t)(n ? n : 1));
    if (!p) { lua_settop(L, top); *out = lt_iv_none(); return lt_error("%s: out of memory", op->schema.qualname); }
    memcpy(p, v.tag == LT_ARG_TENSOR_LIST ? (void *)v.u.tl.v : v.tag == LT_ARG_INT_LIST ? (void *)v.u.il.v : (void *)v.u.fl.v,
           elt * (size_t)n);
    if (v.tag == LT_ARG_TENSOR_LIST) { out->u.tl.v = p; for (int i = 0; i < n; i++) lt_tensor_retain(out->u.tl.v[i]); }
    else if (v.tag == LT_ARG_INT_LIST) out->u.il.v = p;
    else out->u.fl.v = p;
  } else if (v.tag == LT_ARG_STR) {
    out->tag = LT_ARG_NONE;   /* a str result would dangle once popped: not supported */
    lua_settop(L, top);
    return lt_error("%s: str results are not supported", op->schema.qualname);
  }
  lua_settop(L, top);
  return 0;
}

/* push the call's arguments as Lua values */
static void push_args(lua_State *L, const lt_custom_op *op, const lt_ivalue *args) {
  for (int i = 0; i < op->schema.nargs; i++) push_ivalue(L, (lt_ivalue *)&args[i], false);
}

static int pcall_error(lua_State *L, int top, const lt_custom_op *op, const char *what) {
  const char *msg = lua_tostring(L, -1);
  lt_error("%s: %s failed: %s", op->schema.qualname, what, msg ? msg : "(error object is not a string)");
  lua_settop(L, top);
  return -1;
}

/* ---- Lua functions as kernels ---- */

static int lua_kernel(void *ud, const lt_custom_op *op, lt_keyset ks, const lt_ivalue *args, lt_ivalue *rets) {
  (void)ks;
  lua_fn *f = ud;
  lua_State *L = state_for(f);
  int top = lua_gettop(L);
  int nr = op->schema.nrets;
  if (!lua_checkstack(L, op->schema.nargs + nr + 8)) return lt_error("%s: Lua stack overflow", op->schema.qualname);
  call_frame *fr = cur_frame;
  bool reuse = fr && fr->L == L && fr->op == op && !fr->used;
  if (reuse) fr->used = true;
  lua_rawgeti(L, LUA_REGISTRYINDEX, f->ref);
  for (int i = 0; i < op->schema.nargs; i++) {
    int idx = reuse ? fr->arg_idx[i] : 0;
    if (idx && args[i].tag == LT_ARG_TENSOR && lt_vm_totensor(L, idx) == args[i].u.t) lua_pushvalue(L, idx);
    else push_ivalue(L, (lt_ivalue *)&args[i], false);
  }
  lua_State *saved = running_L;
  running_L = L;
  int st = lua_pcall(L, op->schema.nargs, nr, 0);
  running_L = saved;
  if (st != LUA_OK) return pcall_error(L, top, op, f->what);
  for (int i = 0; i < nr; i++)
    if (result_from_lua(L, top + 1 + i, op, &op->schema.rets[i], i, f->what, &rets[i]) < 0) {
      for (int k = 0; k < i; k++) lt_ivalue_clear(&rets[k]);
      lua_settop(L, top);
      return -1;
    }
  if (reuse) fr->ret_base = top + 1;   /* left for l_call */
  else lua_settop(L, top);
  return 0;
}

static lt_custom_op *check_op(lua_State *L, int idx, const char *who) {
  const char *q = luaL_checkstring(L, idx);
  lt_custom_op *op = lt_custom_find(q);
  if (!op) luaL_error(L, "%s: no op named %s (define it first with torch.library.define)", who, q);
  return op;
}

/* torch.library._define(schema, doc) -> qualname */
static int l_define(lua_State *L) {
  const char *schema = luaL_checkstring(L, 1);
  const char *doc = luaL_optstring(L, 2, NULL);
  int id = lt_custom_define(schema, doc, "torch.library.define", false);
  if (id < 0 || lt_custom_autograd_defaults(lt_custom_get(id)) < 0) return luaL_error(L, "%s", lt_error_message());
  lua_pushstring(L, lt_op_table[id].name);
  return 1;
}

static void free_fn_ud(void *ud) { free_fn(ud); }

/* torch.library._impl(qualname, device, fn|nil) */
static int l_impl(lua_State *L) {
  lt_custom_op *op = check_op(L, 1, "torch.library.impl");
  const char *dev = luaL_checkstring(L, 2);
  if (!lua_isnil(L, 3)) luaL_checktype(L, 3, LUA_TFUNCTION);
  lt_boxed_kernel old[LT_NUM_KEYS + 1];
  memcpy(old, op->kernels, sizeof op->kernels);
  old[LT_NUM_KEYS] = op->fake;
  char what[48];
  snprintf(what, sizeof what, "%s kernel", dev);
  lua_fn *f = lua_isnil(L, 3) ? NULL : new_fn(L, 3, 0, what);
  if (lt_custom_impl(op, dev, f ? lua_kernel : NULL, f, "torch.library.impl") < 0) {
    free_fn(f);
    return luaL_error(L, "%s", lt_error_message());
  }
  /* a function replaced everywhere it was registered is dropped */
  lt_custom_release_unused(op, old, LT_NUM_KEYS + 1, lua_kernel, free_fn_ud);
  return 0;
}

/* torch.library._register_fake(qualname, fn) */
static int l_register_fake(lua_State *L) {
  lt_custom_op *op = check_op(L, 1, "torch.library.register_fake");
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lt_boxed_kernel old = op->fake;
  lua_fn *f = new_fn(L, 2, 0, "fake kernel");
  lt_custom_set_fake(op, lua_kernel, f);
  lt_custom_release_unused(op, &old, 1, lua_kernel, free_fn_ud);
  return 0;
}

/* ---- Lua derivatives: setup(needs, nargs, args..., results...) -> ctx;
** backward(ctx, grads...) -> one gradient per argument (library.lua's wrappers) ---- */

typedef struct lua_ctx { lua_State *owner; int ref; } lua_ctx;

static int lua_setup(void *ud, const lt_custom_op *op, lt_node *node, const lt_ivalue *args, const lt_ivalue *rets,
                     const bool *needs_grad, void **ctx) {
  (void)node;
  lua_fn *f = ud;
  lua_State *L = state_for(f);
  int top = lua_gettop(L);
  const lt_schema *s = &op->schema;
  if (!lua_checkstack(L, s->nargs + s->nrets + 8)) return lt_error("%s: Lua stack overflow", s->qualname);
  lua_rawgeti(L, LUA_REGISTRYINDEX, f->ref);
  lua_createtable(L, s->nargs, 0);   /* needs_input_grad, per argument */
  for (int i = 0, k = 0; i < s->nargs; i++) {
    bool need = false;
    if (args[i].tag == LT_ARG_TENSOR) need = needs_grad[k++];
    else if (args[i].tag == LT_ARG_TENSOR_LIST)
      for (int j = 0; j < args[i].u.tl.n; j++) need |= needs_grad[k++];
    lua_pushboolean(L, need);
    lua_rawseti(L, -2, i + 1);
  }
  lua_pushinteger(L, s->nargs);
  push_args(L, op, args);
  for (int i = 0; i < s->nrets; i++) push_ivalue(L, (lt_ivalue *)&rets[i], false);
  if (lua_pcall(L, s->nargs + s->nrets + 2, 1, 0) != LUA_OK) return pcall_error(L, top, op, "setup_context");
  lua_ctx *c = malloc(sizeof *c);
  if (!c) { lua_settop(L, top); return lt_error("%s: out of memory", s->qualname); }
  c->owner = f->owner;
  c->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_settop(L, top);
  *ctx = c;
  return 0;
}

static int lua_backward(void *ud, const lt_custom_op *op, lt_node *node, void *ctx, lt_tensor *const *gout,
                        lt_tensor **gin) {
  lua_fn *f = ud;
  lua_ctx *c = ctx;
  lua_State *L = state_for(f);
  int top = lua_gettop(L);
  const lt_schema *s = &op->schema;
  int nout = node->num_outputs;
  if (!lua_checkstack(L, s->nargs + nout + 8)) return lt_error("%s: Lua stack overflow", s->qualname);
  lua_rawgeti(L, LUA_REGISTRYINDEX, f->ref2);
  lua_rawgeti(L, LUA_REGISTRYINDEX, c->ref);
  for (int i = 0; i < nout; i++) { lt_tensor_retain(gout[i]); lt_vm_push_tensor(L, gout[i]); }
  if (lua_pcall(L, nout + 1, s->nargs, 0) != LUA_OK) return pcall_error(L, top, op, "backward");
  /* one value per argument; a tensor argument's gradient is a tensor or nil */
  int k = 0;
  for (int i = 0; i < s->nargs; i++) {
    int idx = top + 1 + i;
    const lt_schema_arg *a = &s->args[i];
    if (a->type != LT_ARG_TENSOR && a->type != LT_ARG_TENSOR_LIST) continue;
    if (a->type == LT_ARG_TENSOR) {
      if (k >= node->num_next) break;
      if (!lua_isnil(L, idx)) {
        lt_tensor *g = lt_vm_totensor(L, idx);
        if (!g) {
          for (int j = 0; j < k; j++) { lt_tensor_release(gin[j]); gin[j] = NULL; }
          lt_error("%s: backward returned %s for argument '%s', expected a Tensor or nil", s->qualname,
                   luaL_typename(L, idx), a->name);
          lua_settop(L, top);
          return -1;
        }
        lt_tensor_retain(g);
        gin[k] = g;
      }
      k++;
    } else {
      int n = lua_istable(L, idx) && !lt_vm_toud(L, idx) ? (int)lua_rawlen(L, idx) : 0;
      for (int j = 0; j < n && k < node->num_next; j++, k++) {
        lua_rawgeti(L, idx, j + 1);
        lt_tensor *g = lt_vm_totensor(L, -1);
        if (g) { lt_tensor_retain(g); gin[k] = g; }
        lua_pop(L, 1);
      }
    }
  }
  lua_settop(L, top);
  return 0;
}

static void lua_free_ctx(void *ud, void *ctx) {
  (void)ud;
  lua_ctx *c = ctx;
  luaL_unref(c->owner, LUA_REGISTRYINDEX, c->ref);
  free(c);
}

/* torch.library._register_autograd(qualname, setup_wrapper, backward_wrapper) */
static int l_register_autograd(lua_State *L) {
  lt_custom_op *op = check_op(L, 1, "torch.library.register_autograd");
  luaL_checktype(L, 2, LUA_TFUNCTION);
  luaL_checktype(L, 3, LUA_TFUNCTION);
  lua_fn *f = new_fn(L, 2, 3, "backward");
  lt_custom_autograd old = op->autograd;
  bool had = op->has_autograd;
  lt_custom_autograd ag = { lua_setup, lua_backward, lua_free_ctx, f };
  if (lt_custom_register_autograd(op, &ag, "torch.library.register_autograd") < 0) {
    free_fn(f);
    return luaL_error(L, "%s", lt_error_message());
  }
  /* nodes recorded before run the op's current derivative (op->autograd), so the old
  ** functions can go */
  if (had && old.setup == lua_setup && old.ud) free_fn(old.ud);
  return 0;
}

/* ---- calling ---- */

/* the call binding: torch.ops.ns.name(...) with the op as upvalue 1 */
static int l_call(lua_State *L) {
  lt_custom_op *op = lua_touserdata(L, lua_upvalueindex(1));
  const lt_schema *s = &op->schema;
  int n = lua_gettop(L);
  int opts = 0;
  /* a trailing table that is not a tensor, past the positional arguments or with
  ** names in it, holds arguments by name (keyword-only ones after `*`) */
  int npos = 0;
  while (npos < s->nargs && !s->args[npos].kwonly) npos++;
  if (n > 0 && lua_type(L, n) == LUA_TTABLE && !lt_vm_toud(L, n)) {
    bool named = n > npos;
    if (!named) {
      lua_pushnil(L);
      if (lua_next(L, n)) { named = lua_type(L, -2) == LUA_TSTRING; lua_pop(L, 2); }
    }
    if (named) { opts = n; n--; }
  }
  if (n > npos) return luaL_error(L, "%s: expected at most %d positional argument%s, got %d", s->qualname, npos,
                                  npos == 1 ? "" : "s", n);
  lt_ivalue args[LT_CUSTOM_MAX_ARGS];
  int base = lua_gettop(L);
  for (int i = 0; i < s->nargs; i++) {
    const lt_schema_arg *a = &s->args[i];
    int idx;
    if (i < n) idx = i + 1;
    else if (opts) {
      lua_getfield(L, opts, a->name);
      idx = lua_gettop(L);
    } else { args[i] = lt_iv_none(); continue; }
    if (to_ivalue(L, idx, a, &args[i]) < 0)
      return luaL_error(L, "%s: argument '%s' must be %s, got %s", s->qualname, a->name, lt_arg_type_name(a),
                        ivalue_lua_name(L, idx));
  }
  if (opts) {   /* every name in the table must be an argument's */
    lua_pushnil(L);
    while (lua_next(L, opts)) {
      lua_pop(L, 1);
      bool known = false;
      if (lua_type(L, -1) == LUA_TSTRING)
        for (int i = 0; i < s->nargs && !known; i++) known = strcmp(s->args[i].name, lua_tostring(L, -1)) == 0;
      if (!known) return luaL_error(L, "%s: unexpected argument '%s'", s->qualname, luaL_tolstring(L, -1, NULL));
    }
  }
  (void)base;
  lt_ivalue rets[LT_CUSTOM_MAX_RETS];
  call_frame fr;
  fr.L = L; fr.op = op; fr.used = false; fr.ret_base = 0;
  for (int i = 0; i < s->nargs; i++) fr.arg_idx[i] = i < n ? i + 1 : 0;
  call_frame *outer = cur_frame;
  cur_frame = &fr;
  lua_State *saved = running_L;
  running_L = L;
  int rc = lt_custom_call(op, args, s->nargs, rets);
  running_L = saved;
  cur_frame = outer;
  if (rc < 0) return lt_vm_raise(L, s->qualname);
  for (int i = 0; i < s->nrets; i++) {
    const lt_schema_arg *r = &s->rets[i];
    int from = -1;   /* a written-to argument comes back as the caller's own value */
    if (r->is_mutable)
      for (int k = 0; k < s->nargs; k++) if (s->args[k].alias == r->alias) from = k;
    if (from >= 0 && from < n && rets[i].tag == LT_ARG_TENSOR) {
      lt_ivalue_clear(&rets[i]);
      lua_pushvalue(L, from + 1);
    } else if (fr.ret_base && rets[i].tag == LT_ARG_TENSOR && lt_vm_totensor(L, fr.ret_base + i) == rets[i].u.t) {
      lt_ivalue_clear(&rets[i]);   /* the kernel's own value, left on the stack */
      lua_pushvalue(L, fr.ret_base + i);
    } else push_ivalue(L, &rets[i], true);
  }
  return s->nrets;
}

static void push_op(lua_State *L, lt_custom_op *op) {
  lua_pushlightuserdata(L, op);
  lua_pushcclosure(L, l_call, 1);
}

/* torch.library._op(qualname) -> the callable, or nil when there is no such op */
static int l_op(lua_State *L) {
  lt_custom_op *op = lt_custom_find(luaL_checkstring(L, 1));
  if (!op) { lua_pushnil(L); return 1; }
  push_op(L, op);
  return 1;
}

/* torch.library._call_fake(qualname, args...) -> the fake kernel's results */
static int l_call_fake(lua_State *L) {
  lt_custom_op *op = check_op(L, 1, "torch.library._call_fake");
  const lt_schema *s = &op->schema;
  lt_ivalue args[LT_CUSTOM_MAX_ARGS];
  int n = lua_gettop(L) - 1;
  for (int i = 0; i < s->nargs; i++) {
    if (i >= n) { args[i] = lt_iv_none(); continue; }
    if (to_ivalue(L, i + 2, &s->args[i], &args[i]) < 0)
      return luaL_error(L, "%s: argument '%s' must be %s, got %s", s->qualname, s->args[i].name,
                        lt_arg_type_name(&s->args[i]), ivalue_lua_name(L, i + 2));
  }
  lt_ivalue rets[LT_CUSTOM_MAX_RETS];
  lua_State *saved = running_L;
  running_L = L;
  int rc = lt_custom_call_fake(op, args, rets);
  running_L = saved;
  if (rc < 0) return lt_vm_raise(L, s->qualname);
  for (int i = 0; i < s->nrets; i++) push_ivalue(L, &rets[i], true);
  return s->nrets;
}

static void push_arg_info(lua_State *L, const lt_schema_arg *a) {
  lua_createtable(L, 0, 8);
  if (a->name) { lua_pushstring(L, a->name); lua_setfield(L, -2, "name"); }
  lua_pushstring(L, lt_arg_type_name(a)); lua_setfield(L, -2, "type");
  lua_pushboolean(L, a->optional); lua_setfield(L, -2, "optional");
  lua_pushboolean(L, a->kwonly); lua_setfield(L, -2, "kwonly");
  lua_pushboolean(L, a->is_mutable); lua_setfield(L, -2, "mutable");
  if (a->alias) { lua_pushlstring(L, &a->alias, 1); lua_setfield(L, -2, "alias"); }
  lua_pushboolean(L, a->has_default); lua_setfield(L, -2, "has_default");
  if (a->has_default) { push_ivalue(L, (lt_ivalue *)&a->def, false); lua_setfield(L, -2, "default"); }
}

/* torch.library._schema(qualname) -> {name, ns, text, args = {...}, rets = {...}, has_fake, has_autograd} */
static int l_schema(lua_State *L) {
  lt_custom_op *op = lt_custom_find(luaL_checkstring(L, 1));
  if (!op) { lua_pushnil(L); return 1; }
  const lt_schema *s = &op->schema;
  lua_createtable(L, 0, 10);
  lua_pushstring(L, s->qualname); lua_setfield(L, -2, "qualname");
  lua_pushstring(L, s->ns); lua_setfield(L, -2, "ns");
  lua_pushstring(L, s->name); lua_setfield(L, -2, "name");
  lua_pushstring(L, s->text); lua_setfield(L, -2, "text");
  lua_pushboolean(L, s->mutates); lua_setfield(L, -2, "mutates");
  lua_pushboolean(L, op->has_fake); lua_setfield(L, -2, "has_fake");
  lua_pushboolean(L, op->has_autograd); lua_setfield(L, -2, "has_autograd");
  lua_pushboolean(L, op->composite); lua_setfield(L, -2, "composite");
  lua_createtable(L, s->nargs, 0);
  for (int i = 0; i < s->nargs; i++) { push_arg_info(L, &s->args[i]); lua_rawseti(L, -2, i + 1); }
  lua_setfield(L, -2, "args");
  lua_createtable(L, s->nrets, 0);
  for (int i = 0; i < s->nrets; i++) { push_arg_info(L, &s->rets[i]); lua_rawseti(L, -2, i + 1); }
  lua_setfield(L, -2, "rets");
  lua_createtable(L, 0, 4);
  static const char *const keys[] = { [LT_KEY_CPU] = "cpu", [LT_KEY_CUDA] = "cuda", [LT_KEY_META] = "meta", [LT_KEY_AUTOGRAD] = "autograd" };
  for (int k = 0; k <= LT_KEY_AUTOGRAD; k++) {
    lua_pushboolean(L, lt_op_table[op->id].kernel[k] != NULL);
    lua_setfield(L, -2, keys[k]);
  }
  lua_setfield(L, -2, "kernels");
  return 1;
}

/* torch.library._parse(schema) -> true, or false and the error: the schema check alone */
static int l_parse(lua_State *L) {
  lt_schema s;
  if (lt_schema_parse(&s, luaL_checkstring(L, 1), "torch.library") < 0) {
    lua_pushboolean(L, 0);
    lua_pushstring(L, lt_error_message());
    return 2;
  }
  lt_schema_free(&s);
  lua_pushboolean(L, 1);
  return 1;
}

/* torch.library._list() -> the qualified names of every custom op */
static int l_list(lua_State *L) {
  int n = lt_custom_count();
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, lt_op_table[lt_num_ops + i].name);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* When the state closes, what it registered leaves the registry. */
static int state_closing(lua_State *L) {
  lua_State *me = main_thread(L);
  int n = lt_custom_count();
  for (int i = 0; i < n; i++) {
    lt_custom_op *op = lt_custom_get(lt_num_ops + i);
    if (!op) continue;
    lua_fn *gone[LT_NUM_KEYS + 1];
    int ng = 0;
    for (int k = 0; k < LT_NUM_KEYS; k++)
      if (op->kernels[k].fn == lua_kernel && ((lua_fn *)op->kernels[k].ud)->owner == me) {
        gone[ng++] = op->kernels[k].ud;
        lt_custom_set_kernel(op, (lt_dispatch_key)k, NULL, NULL);
      }
    if (op->fake.fn == lua_kernel && ((lua_fn *)op->fake.ud)->owner == me) {
      gone[ng++] = op->fake.ud;
      lt_custom_set_fake(op, NULL, NULL);
    }
    for (int k = 0; k < ng; k++) {   /* one function may have sat at several keys */
      bool seen = false;
      for (int j = 0; j < k; j++) seen |= gone[j] == gone[k];
      if (!seen) free_fn(gone[k]);
    }
    if (op->has_autograd && op->autograd.setup == lua_setup && ((lua_fn *)op->autograd.ud)->owner == me) {
      lt_custom_set_kernel(op, LT_KEY_AUTOGRAD, NULL, NULL);
      op->has_autograd = false;
      free_fn(op->autograd.ud);
      op->autograd.ud = NULL;
    }
  }
  return 0;
}

/* torch.library._same_storage(a, b): whether two tensors share memory (opcheck's alias test) */
static int l_same_storage(lua_State *L) {
  lt_tensor *a = lt_vm_checktensor(L, 1, "torch.library._same_storage", "a");
  lt_tensor *b = lt_vm_checktensor(L, 2, "torch.library._same_storage", "b");
  lua_pushboolean(L, a->storage == b->storage);
  return 1;
}

static const luaL_Reg library_functions[] = {
  {"_same_storage", l_same_storage},
  {"_define", l_define}, {"_impl", l_impl}, {"_register_fake", l_register_fake},
  {"_register_autograd", l_register_autograd}, {"_op", l_op}, {"_call_fake", l_call_fake},
  {"_schema", l_schema}, {"_parse", l_parse}, {"_list", l_list}, {NULL, NULL}
};

/* a C extension's luaopen_* whose registration failed (include/lutorch/extension.h) */
int lt_ext_lua_error(lua_State *L);
int lt_ext_lua_error(lua_State *L) { return luaL_error(L, "%s", lt_error_message()); }

/* C extensions loaded by a stock lua5.4 resolve the core's symbols against the
** object holding it, which lua5.4 opened with RTLD_LOCAL: promote it to global. */
static void export_core_symbols(void) {
  Dl_info info;
  if (!dladdr((void *)export_core_symbols, &info) || !info.dli_fname) return;
  void *self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  (void)self;   /* never closed: the holder stays loaded for the process anyway */
}

void lt_vm_open_library(lua_State *L) {
  export_core_symbols();
  lua_newthread(L);
  lua_setfield(L, LUA_REGISTRYINDEX, CB_KEY);
  /* a sentinel whose finalizer runs when the state closes */
  lua_newuserdatauv(L, 1, 0);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, state_closing);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, "lutorch.library.sentinel");
  lua_newtable(L);
  luaL_setfuncs(L, library_functions, 0);
  lua_setfield(L, -2, "library");
}
