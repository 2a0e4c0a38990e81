/*
** lautograd.c — autograd from Lua: backward, torch.autograd.grad, grad
** modes, .grad / .grad_fn / .is_leaf, detach, hooks, and grad_fn objects.
*/
#include <stdlib.h>
#include <string.h>
#include "lutorch_vm.h"
#include "ltensor.h"
#include "largs.h"
#include "autograd/autograd.h"
#include "lt_ops.h"

#define NODE_MT "lutorch.Node"

static lt_tensor *self_tensor(lua_State *L, const char *op) {
  return lt_vm_checktensor(L, 1, op, "self");
}

/* ---- grad_fn objects ---- */

static void push_node(lua_State *L, lt_node *n) {
  if (!n) { lua_pushnil(L); return; }
  lt_node **u = lua_newuserdatauv(L, sizeof(lt_node *), 0);
  lt_node_retain(n);
  *u = n;
  luaL_setmetatable(L, NODE_MT);
}

static lt_node *check_node(lua_State *L, int idx) {
  return *(lt_node **)luaL_checkudata(L, idx, NODE_MT);
}

static int node_gc(lua_State *L) {
  lt_node **u = luaL_checkudata(L, 1, NODE_MT);
  if (*u) { lt_node_release(*u); *u = NULL; }
  return 0;
}

static int node_name(lua_State *L) {
  lua_pushstring(L, check_node(L, 1)->ops->name);
  return 1;
}

static int node_tostring(lua_State *L) {
  lua_pushfstring(L, "<%s>", check_node(L, 1)->ops->name);
  return 1;
}

static int node_eq(lua_State *L) {
  lt_node **a = luaL_testudata(L, 1, NODE_MT), **b = luaL_testudata(L, 2, NODE_MT);
  lua_pushboolean(L, a && b && *a == *b);
  return 1;
}

static int node_index(lua_State *L) {
  lt_node *n = check_node(L, 1);
  const char *k = luaL_checkstring(L, 2);
  if (strcmp(k, "next_functions") == 0) {
    lua_createtable(L, n->num_next, 0);
    for (int i = 0; i < n->num_next; i++) {
      lua_createtable(L, 2, 0);
      push_node(L, n->next[i].fn);
      lua_rawseti(L, -2, 1);
      lua_pushinteger(L, (lua_Integer)n->next[i].input_nr + 1);
      lua_rawseti(L, -2, 2);
      lua_rawseti(L, -2, i + 1);
    }
    return 1;
  }
  if (strcmp(k, "name") == 0) { lua_pushcfunction(L, node_name); return 1; }
  return 0;
}

/* ---- tensor fields and methods ---- */

static int f_grad(lua_State *L) {
  lt_tensor *t = self_tensor(L, "grad");
  if (!t->grad) { lua_pushnil(L); return 1; }
  lt_tensor_retain(t->grad);
  lt_vm_push_tensor(L, t->grad);
  return 1;
}

static int set_grad(lua_State *L) {
  lt_tensor *t = self_tensor(L, "grad");
  if (lua_isnil(L, 2)) { lt_tensor_release(t->grad); t->grad = NULL; return 0; }
  lt_tensor *g = lt_vm_checktensor(L, 2, "grad", "value");
  if (!lt_tensor_same_shape(g, t)) return luaL_error(L, "grad: assigned grad has a different shape than the tensor");
  if (g->dtype != t->dtype) return luaL_error(L, "grad: assigned grad has dtype %s, the tensor %s",
                                              lt_dtype_name((lt_dtype)g->dtype), lt_dtype_name((lt_dtype)t->dtype));
  lt_tensor_retain(g);
  lt_tensor_release(t->grad);
  t->grad = g;
  return 0;
}

static int f_grad_fn(lua_State *L) {
  push_node(L, self_tensor(L, "grad_fn")->grad_fn);
  return 1;
}

static int f_is_leaf(lua_State *L) {
  lua_pushboolean(L, self_tensor(L, "is_leaf")->grad_fn == NULL);
  return 1;
}

static int f_retains_grad(lua_State *L) {
  lt_tensor *t = self_tensor(L, "retains_grad");
  lua_pushboolean(L, t->autograd && t->autograd->retains_grad);
  return 1;
}

/* PyTorch's x._version: the version counter in-place ops bump (shared by views) */
static int f_version(lua_State *L) {
  lua_pushinteger(L, atomic_load(&self_tensor(L, "_version")->storage->version));
  return 1;
}

static int f_data(lua_State *L) {
  lt_tensor *r = lt_detach(self_tensor(L, "data"));
  lt_vm_push_tensor(L, r);
  return 1;
}

/* t.data = source: t keeps its identity (and its grad and hooks) with new contents */
static int set_data(lua_State *L) {
  lt_tensor *t = self_tensor(L, "data");
  lt_tensor *src = lt_vm_totensor(L, 2);
  if (!src) return luaL_error(L, "data: argument 'value' must be a tensor, got %s", luaL_typename(L, 2));
  lt_tensor *r = lt__set_data(t, src);
  if (!r) return lt_vm_raise(L, "data");
  lt_tensor_release(r);
  return 0;
}

/* torch.utils.swap_tensors(t1, t2): the two Lua values exchange the tensors they are (data,
** autograd history, grad, hooks), each keeping its identity. torch.compile hands a value that
** the traced code stored away (a meta tensor standing for it) its real tensor this way. */
static int l_swap_tensors(lua_State *L) {
  lt_ud *a = lt_vm_toud(L, 1), *b = lt_vm_toud(L, 2);
  if (!a) return luaL_error(L, "swap_tensors: argument 't1' must be a tensor, got %s", luaL_typename(L, 1));
  if (!b) return luaL_error(L, "swap_tensors: argument 't2' must be a tensor, got %s", luaL_typename(L, 2));
  if (!a->t || !b->t) return luaL_error(L, "swap_tensors: argument '%s' is a freed tensor", a->t ? "t2" : "t1");
  lt_tensor *t = a->t;
  a->t = b->t;
  b->t = t;
  return 0;
}

/* torch._share_tensor(dst, src): the Lua value dst becomes a second name of src's tensor (the
** same data, autograd history and grad), src unchanged. torch.compile makes a meta tensor that
** the traced code stored away its real value this way: src may be held elsewhere (an autograd
** Function's saved tensors), so it must not change, as a swap would change it. */
static int l_share_tensor(lua_State *L) {
  lt_ud *dst = lt_vm_toud(L, 1), *src = lt_vm_toud(L, 2);
  if (!dst) return luaL_error(L, "_share_tensor: argument 'dst' must be a tensor, got %s", luaL_typename(L, 1));
  if (!src) return luaL_error(L, "_share_tensor: argument 'src' must be a tensor, got %s", luaL_typename(L, 2));
  if (!src->t) return luaL_error(L, "_share_tensor: argument 'src' is a freed tensor");
  if (dst->t == src->t) return 0;
  lt_tensor_retain(src->t);
  if (dst->t) lt_tensor_release(dst->t);
  dst->t = src->t;
  return 0;
}

static int set_requires_grad(lua_State *L) {
  lt_tensor *t = self_tensor(L, "requires_grad");
  if (!lua_isboolean(L, 2))
    return luaL_error(L, "requires_grad: argument 'value' must be a boolean, got %s", luaL_typename(L, 2));
  if (lt_requires_grad_(t, lua_toboolean(L, 2)) < 0) return lt_vm_raise(L, "requires_grad");
  return 0;
}

static int m_requires_grad_(lua_State *L) {
  lt_tensor *t = self_tensor(L, "requires_grad_");
  bool on = lua_isnoneornil(L, 2) ? true : lua_toboolean(L, 2);
  if (lt_requires_grad_(t, on) < 0) return lt_vm_raise(L, "requires_grad_");
  lua_settop(L, 1);
  return 1;
}

static int m_detach(lua_State *L) {
  lt_vm_push_tensor(L, lt_detach(self_tensor(L, "detach")));
  return 1;
}

static int m_detach_(lua_State *L) {
  if (lt_detach_(self_tensor(L, "detach_")) < 0) return lt_vm_raise(L, "detach_");
  lua_settop(L, 1);
  return 1;
}

static int m_retain_grad(lua_State *L) {
  if (lt_retain_grad(self_tensor(L, "retain_grad")) < 0) return lt_vm_raise(L, "retain_grad");
  return 0;
}

/* Lua hooks: the function lives in the registry while the hook lives */
typedef struct lua_hook {
  lt_grad_hook h;
  lua_State *L;      /* for unref; calls go through the state running backward */
  int ref;
} lua_hook;

/* the Lua state that is running backward on this thread */
static _Thread_local lua_State *backward_L = NULL;

static int lua_hook_fn(lt_grad_hook *h, lt_tensor *grad, lt_tensor **replacement) {
  lua_hook *lh = (lua_hook *)h;
  lua_State *L = backward_L ? backward_L : lh->L;
  int top = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, lh->ref);
  lt_tensor_retain(grad);
  lt_vm_push_tensor(L, grad);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    lt_error("hook: %s", lua_tostring(L, -1));
    lua_settop(L, top);
    return -1;
  }
  if (!lua_isnil(L, -1)) {
    lt_tensor *r = lt_vm_totensor(L, -1);
    if (!r) { lua_settop(L, top); return lt_error("hook: a hook must return nil or a tensor"); }
    if (!lt_tensor_same_shape(r, grad)) { lua_settop(L, top); return lt_error("hook: the returned gradient has the wrong shape"); }
    lt_tensor_retain(r);
    *replacement = r;
  }
  lua_settop(L, top);
  return 0;
}

static void lua_hook_free(lt_grad_hook *h) {
  lua_hook *lh = (lua_hook *)h;
  luaL_unref(lh->L, LUA_REGISTRYINDEX, lh->ref);
  free(lh);
}

static int m_register_hook(lua_State *L) {
  lt_tensor *t = self_tensor(L, "register_hook");
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_hook *h = calloc(1, sizeof(lua_hook));
  if (!h) return luaL_error(L, "register_hook: out of memory");
  h->h.fn = lua_hook_fn;
  h->h.free = lua_hook_free;
  h->L = L;
  lua_pushvalue(L, 2);
  h->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  if (lt_register_hook(t, &h->h) < 0) return lt_vm_raise(L, "register_hook");
  return 0;
}

/* post-accumulate-grad hooks and end-of-backward callbacks: fn(leaf) / fn() */
static int lua_plain_hook_fn(lt_grad_hook *h, lt_tensor *leaf, lt_tensor **replacement) {
  (void)replacement;
  lua_hook *lh = (lua_hook *)h;
  lua_State *L = backward_L ? backward_L : lh->L;
  int top = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, lh->ref);
  int nargs = 0;
  if (leaf) { lt_tensor_retain(leaf); lt_vm_push_tensor(L, leaf); nargs = 1; }
  if (lua_pcall(L, nargs, 0, 0) != LUA_OK) {
    lt_error("%s: %s", leaf ? "post accumulate grad hook" : "backward callback", lua_tostring(L, -1));
    lua_settop(L, top);
    return -1;
  }
  lua_settop(L, top);
  return 0;
}

static lua_hook *new_plain_hook(lua_State *L, int fn_idx, const char *op) {
  luaL_checktype(L, fn_idx, LUA_TFUNCTION);
  lua_hook *h = calloc(1, sizeof(lua_hook));
  if (!h) { luaL_error(L, "%s: out of memory", op); return NULL; }
  h->h.fn = lua_plain_hook_fn;
  h->h.free = lua_hook_free;
  h->L = L;
  lua_pushvalue(L, fn_idx);
  h->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return h;
}

/* p:register_post_accumulate_grad_hook(fn): fn(p) after p.grad was accumulated in backward */
static int m_register_post_accumulate_grad_hook(lua_State *L) {
  lt_tensor *t = self_tensor(L, "register_post_accumulate_grad_hook");
  lua_hook *h = new_plain_hook(L, 2, "register_post_accumulate_grad_hook");
  if (lt_register_post_accumulate_grad_hook(t, &h->h) < 0) return lt_vm_raise(L, "register_post_accumulate_grad_hook");
  return 0;
}

/* torch.autograd.queue_callback(fn): fn() once the running backward has finished */
static int l_queue_callback(lua_State *L) {
  lua_hook *h = new_plain_hook(L, 1, "queue_callback");
  if (lt_autograd_queue_callback(&h->h) < 0) return lt_vm_raise(L, "queue_callback");
  return 0;
}

/* tensors from a tensor or a table of tensors at idx (borrowed, kept alive by the stack) */
static int tensor_list(lua_State *L, int idx, lt_tensor **out, int max, const char *op, const char *what) {
  if (lt_vm_totensor(L, idx)) { out[0] = lt_vm_totensor(L, idx); return 1; }
  if (!lua_istable(L, idx)) return luaL_error(L, "%s: argument '%s' must be a tensor or a table of tensors", op, what);
  int n = (int)lua_rawlen(L, idx);
  if (n > max) return luaL_error(L, "%s: too many tensors in '%s' (at most %d)", op, what, max);
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, idx, i + 1);
    out[i] = lt_vm_totensor(L, -1);
    lua_pop(L, 1);
    if (!out[i]) return luaL_error(L, "%s: entry %d of '%s' is not a tensor", op, i + 1, what);
  }
  return n;
}

/* a boolean argument at stack index idx (0: absent) */
static bool arg_bool(lua_State *L, int idx, const char *op, const char *name, bool def) {
  if (!idx) return def;
  if (!lua_isboolean(L, idx))
    luaL_error(L, "%s: argument '%s' must be a boolean, got %s", op, name, luaL_typename(L, idx));
  return lua_toboolean(L, idx);
}

/* a tensor argument at stack index idx (0: absent, NULL) */
static lt_tensor *arg_tensor(lua_State *L, int idx, const char *op, const char *name) {
  if (!idx) return NULL;
  lt_tensor *t = lt_vm_totensor(L, idx);
  if (!t) {
    if (lt_vm_toud(L, idx)) luaL_error(L, "%s: argument '%s' is a freed tensor", op, name);
    luaL_error(L, "%s: argument '%s' must be a tensor, got %s", op, name, luaL_typename(L, idx));
  }
  return t;
}

#define MAX_GRAD_TENSORS 4096

/* x:backward([gradient], [retain_graph], [create_graph], [inputs]), each also by name:
** x:backward({gradient = g, retain_graph = true}), x:backward(nil, {retain_graph = true}) */
static int m_backward(lua_State *L) {
  static const char *const params[] = {"gradient", "retain_graph", "create_graph", "inputs", NULL};
  const char *op = "backward";
  lt_tensor *t = self_tensor(L, op);
  int a[4];
  lt_vm_kwargs(L, op, 2, params, a);
  lt_tensor *g = arg_tensor(L, a[0], op, "gradient");
  lt_backward_opts o = {0};
  o.create_graph = arg_bool(L, a[2], op, "create_graph", false);
  o.retain_graph = arg_bool(L, a[1], op, "retain_graph", o.create_graph);
  o.accumulate = true;
  lt_tensor *inputs[MAX_GRAD_TENSORS];
  if (a[3]) {
    o.num_inputs = tensor_list(L, a[3], inputs, MAX_GRAD_TENSORS, op, "inputs");
    o.inputs = inputs;
  }
  lt_tensor *const roots[1] = {t};
  lt_tensor *const grads[1] = {g};
  backward_L = L;
  int rc = lt_run_backward(roots, grads, 1, &o, NULL);
  backward_L = NULL;
  if (rc < 0) return lt_vm_raise(L, op);
  return 0;
}

/* torch.autograd.grad(outputs, inputs, [grad_outputs], [retain_graph], [create_graph],
** [only_inputs], [allow_unused], [is_grads_batched]), each after inputs also by name */
static int l_grad(lua_State *L) {
  static const char *const params[] = {"outputs", "inputs", "grad_outputs", "retain_graph", "create_graph",
                                       "only_inputs", "allow_unused", "is_grads_batched", NULL};
  const char *op = "torch.autograd.grad";
  static lt_tensor *outs[MAX_GRAD_TENSORS], *ins[MAX_GRAD_TENSORS], *gos[MAX_GRAD_TENSORS];
  int a[8];
  lt_vm_kwargs(L, op, 1, params, a);
  if (!a[0]) return luaL_error(L, "%s: missing argument 'outputs' (#1)", op);
  if (!a[1]) return luaL_error(L, "%s: missing argument 'inputs' (#2)", op);
  int no = tensor_list(L, a[0], outs, MAX_GRAD_TENSORS, op, "outputs");
  int ni = tensor_list(L, a[1], ins, MAX_GRAD_TENSORS, op, "inputs");
  bool single = lt_vm_totensor(L, a[1]) != NULL;
  for (int i = 0; i < no; i++) gos[i] = NULL;
  if (a[2]) {
    int ng = tensor_list(L, a[2], gos, MAX_GRAD_TENSORS, op, "grad_outputs");
    if (ng != no) return luaL_error(L, "%s: grad_outputs has %d tensors, outputs has %d", op, ng, no);
  }
  lt_backward_opts o = {0};
  o.create_graph = arg_bool(L, a[4], op, "create_graph", false);
  o.retain_graph = arg_bool(L, a[3], op, "retain_graph", o.create_graph);
  arg_bool(L, a[5], op, "only_inputs", true);   /* deprecated in PyTorch, which ignores it */
  o.allow_unused = arg_bool(L, a[6], op, "allow_unused", false);
  if (arg_bool(L, a[7], op, "is_grads_batched", false))
    return luaL_error(L, "%s: argument 'is_grads_batched' = true is not supported", op);
  o.accumulate = false;
  o.inputs = ins;
  o.num_inputs = ni;
  lt_tensor **results = calloc((size_t)(ni > 0 ? ni : 1), sizeof(lt_tensor *));
  if (!results) return luaL_error(L, "%s: out of memory", op);
  backward_L = L;
  int rc = lt_run_backward(outs, gos, no, &o, results);
  backward_L = NULL;
  if (rc < 0) {
    free(results);
    return lt_vm_raise(L, "grad");     /* the engine's messages say "grad:" */
  }
  /* results become Lua values one by one; none may leak if that raises */
  lua_createtable(L, ni, 0);
  for (int i = 0; i < ni; i++) {
    lt_tensor *r = results[i];
    results[i] = NULL;
    if (r) lt_vm_push_tensor(L, r); else lua_pushnil(L);
    lua_rawseti(L, -2, i + 1);
  }
  free(results);
  if (single) lua_rawgeti(L, -1, 1);
  return 1;
}

/* ---- grad modes: torch.no_grad(fn) or `local _ <close> = torch.no_grad()` ---- */

#define MODE_MT "lutorch.GradMode"
typedef struct mode_guard { bool prev_grad, prev_inference; bool closed; } mode_guard;

static int mode_close(lua_State *L) {
  mode_guard *g = luaL_checkudata(L, 1, MODE_MT);
  if (!g->closed) {
    lt_tls_grad_enabled = g->prev_grad;
    lt_tls_inference_mode = g->prev_inference;
    g->closed = true;
  }
  return 0;
}

static int with_mode(lua_State *L, bool grad, bool inference) {
  mode_guard *g = lua_newuserdatauv(L, sizeof(mode_guard), 0);
  g->prev_grad = lt_tls_grad_enabled;
  g->prev_inference = lt_tls_inference_mode;
  g->closed = false;
  luaL_setmetatable(L, MODE_MT);
  lt_tls_grad_enabled = grad;
  lt_tls_inference_mode = inference;
  if (lua_isfunction(L, 1)) {
    /* run fn in the mode, restoring it even when fn raises */
    int base = lua_gettop(L);
    lua_pushvalue(L, 1);
    int st = lua_pcall(L, 0, LUA_MULTRET, 0);
    lt_tls_grad_enabled = g->prev_grad;
    lt_tls_inference_mode = g->prev_inference;
    g->closed = true;
    if (st != LUA_OK) return lua_error(L);
    return lua_gettop(L) - base;
  }
  return 1;
}

static int l_no_grad(lua_State *L) { return with_mode(L, false, lt_tls_inference_mode); }
static int l_enable_grad(lua_State *L) { return with_mode(L, true, lt_tls_inference_mode); }
static int l_inference_mode(lua_State *L) {
  bool on = lua_isboolean(L, 1) ? lua_toboolean(L, 1) : true;
  if (lua_isboolean(L, 1)) lua_remove(L, 1);
  return with_mode(L, on ? false : lt_tls_grad_enabled, on);
}
static int l_set_grad_enabled(lua_State *L) {
  luaL_checktype(L, 1, LUA_TBOOLEAN);
  bool on = lua_toboolean(L, 1);
  lua_remove(L, 1);
  if (lua_isfunction(L, 1)) return with_mode(L, on, lt_tls_inference_mode);
  mode_guard *g = lua_newuserdatauv(L, sizeof(mode_guard), 0);
  g->prev_grad = lt_tls_grad_enabled;
  g->prev_inference = lt_tls_inference_mode;
  g->closed = false;
  luaL_setmetatable(L, MODE_MT);
  lt_tls_grad_enabled = on;
  return 1;
}
static int l_is_grad_enabled(lua_State *L) { lua_pushboolean(L, lt_tls_grad_enabled); return 1; }
static int l_is_inference_mode_enabled(lua_State *L) { lua_pushboolean(L, lt_tls_inference_mode); return 1; }

static int m_is_inference(lua_State *L) {
  lua_pushboolean(L, !(self_tensor(L, "is_inference")->keys & LT_KEYBIT(LT_KEY_AUTOGRAD)));
  return 1;
}

/* anomaly mode: nodes remember the Lua traceback of the forward call */
static lua_State *anomaly_L = NULL;
static char *anomaly_trace(void) {
  if (!anomaly_L) return NULL;
  luaL_traceback(anomaly_L, anomaly_L, NULL, 1);
  char *s = strdup(lua_tostring(anomaly_L, -1));
  lua_pop(anomaly_L, 1);
  return s;
}

static int l_set_detect_anomaly(lua_State *L) {
  luaL_checktype(L, 1, LUA_TBOOLEAN);
  lt_anomaly_enabled = lua_toboolean(L, 1);
  anomaly_L = L;
  lt_anomaly_trace_hook = anomaly_trace;
  return 0;
}

static int l_is_anomaly_enabled(lua_State *L) { lua_pushboolean(L, lt_anomaly_enabled); return 1; }

static int l_live_nodes(lua_State *L) { lua_pushinteger(L, lt_node_live_count()); return 1; }

/* ---- primitives for Lua-defined Functions and gradcheck ---- */

static int traceback_handler(lua_State *L) {
  luaL_traceback(L, L, lua_tostring(L, 1), 1);
  return 1;
}

/* a node whose backward is a Lua function: fn(grad1, grad2, ...) -> grads per input */
typedef struct lua_node_ctx { lua_State *L; int ref; } lua_node_ctx;

static int lua_node_apply(lt_node *n, lt_tensor **grads_in, lt_tensor **grads_out) {
  lua_node_ctx *c = n->ctx;
  lua_State *L = backward_L ? backward_L : c->L;
  int top = lua_gettop(L);
  if (!lua_checkstack(L, n->num_outputs + 4)) return lt_error("%s: Lua stack overflow", n->ops->name);
  lua_pushcfunction(L, traceback_handler);
  lua_rawgeti(L, LUA_REGISTRYINDEX, c->ref);
  for (int i = 0; i < n->num_outputs; i++) {
    if (grads_in[i]) { lt_tensor_retain(grads_in[i]); lt_vm_push_tensor(L, grads_in[i]); }
    else lua_pushnil(L);
  }
  if (lua_pcall(L, n->num_outputs, n->num_next, top + 1) != LUA_OK) {
    lt_error("%s", lua_tostring(L, -1));
    lua_settop(L, top);
    return -1;
  }
  for (int i = 0; i < n->num_next; i++) {
    int idx = top + 2 + i;
    if (lua_isnil(L, idx)) continue;
    lt_tensor *g = lt_vm_totensor(L, idx);
    if (!g) {
      lua_settop(L, top);
      for (int k = 0; k < i; k++) { lt_tensor_release(grads_out[k]); grads_out[k] = NULL; }
      return lt_error("%s: backward must return tensors or nil (got a %s for input %d)", n->ops->name,
                      luaL_typename(L, idx), i + 1);
    }
    lt_tensor_retain(g);
    grads_out[i] = lt_grad_to_meta(g, &n->meta[i]);
  }
  lua_settop(L, top);
  return 0;
}

static void lua_node_destroy(lt_node *n) {
  lua_node_ctx *c = n->ctx;
  if (c && c->L) luaL_unref(c->L, LUA_REGISTRYINDEX, c->ref);
}

#define MAX_LUA_NODE_TYPES 64
/* node names live as long as the process: one ops record per Function name */
static lt_node_ops lua_node_types[MAX_LUA_NODE_TYPES];
static char lua_node_names[MAX_LUA_NODE_TYPES][64];
static int num_lua_node_types;

static const lt_node_ops *lua_node_ops_for(const char *name) {
  for (int i = 0; i < num_lua_node_types; i++)
    if (strcmp(lua_node_names[i], name) == 0) return &lua_node_types[i];
  int i = num_lua_node_types < MAX_LUA_NODE_TYPES ? num_lua_node_types++ : MAX_LUA_NODE_TYPES - 1;
  snprintf(lua_node_names[i], sizeof lua_node_names[i], "%s", name);
  lua_node_types[i].name = lua_node_names[i];
  lua_node_types[i].apply = lua_node_apply;
  lua_node_types[i].release_saved = NULL;
  lua_node_types[i].destroy = lua_node_destroy;
  return &lua_node_types[i];
}

/* torch.autograd._make_node(name, inputs, num_outputs, backward_fn) -> node */
static int l_make_node(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  int nout = (int)luaL_checkinteger(L, 3);
  luaL_checktype(L, 4, LUA_TFUNCTION);
  int nin = (int)lua_rawlen(L, 2);
  lt_node *n = lt_node_new(lua_node_ops_for(name), nin, nout, sizeof(lua_node_ctx));
  if (!n) return lt_vm_raise(L, name);
  for (int i = 0; i < nin; i++) {
    lua_rawgeti(L, 2, i + 1);
    lt_tensor *t = lt_vm_totensor(L, -1);
    if (t && t->requires_grad) lt_node_set_next(n, i, t);
    else if (t) {   /* record the shape even without an edge */
      n->meta[i].ndim = t->ndim; n->meta[i].dtype = t->dtype; n->meta[i].device = lt_tensor_device(t);
      for (int d = 0; d < t->ndim; d++) n->meta[i].sizes[d] = t->sizes[d];
    }
    lua_pop(L, 1);
  }
  lua_node_ctx *c = n->ctx;
  c->L = L;
  lua_pushvalue(L, 4);
  c->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  push_node(L, n);
  lt_node_release(n);
  return 1;
}

/* torch.autograd._set_history(tensor, node, k): tensor becomes output k of node */
static int l_set_history(lua_State *L) {
  lt_tensor *t = lt_vm_checktensor(L, 1, "_set_history", "tensor");
  lt_node *n = check_node(L, 2);
  lua_Integer k = luaL_checkinteger(L, 3);
  if (k < 1 || k > n->num_outputs) return luaL_error(L, "_set_history: output %d out of range", (int)k);
  if (!lt_dtype_is_differentiable((lt_dtype)t->dtype)) return 0;   /* integer outputs carry no history */
  lt_set_history(t, n, (uint32_t)(k - 1));
  return 0;
}

static int l_version(lua_State *L) {
  lt_tensor *t = lt_vm_checktensor(L, 1, "_version", "tensor");
  lua_pushinteger(L, atomic_load(&t->storage->version));
  return 1;
}

/* flat element access through strides (1-based), for gradcheck */
static int l_flat_get(lua_State *L) {
  lt_tensor *t = lt_vm_checktensor(L, 1, "_flat_get", "tensor");
  lua_Integer i = luaL_checkinteger(L, 2);
  if (i < 1 || i > t->numel) return luaL_error(L, "_flat_get: index %d out of range", (int)i);
  lua_pushnumber(L, lt_tensor_get_double(t, i - 1));
  return 1;
}

static int l_flat_set(lua_State *L) {
  lt_tensor *t = lt_vm_checktensor(L, 1, "_flat_set", "tensor");
  lua_Integer i = luaL_checkinteger(L, 2);
  double v = luaL_checknumber(L, 3);
  if (i < 1 || i > t->numel) return luaL_error(L, "_flat_set: index %d out of range", (int)i);
  int64_t lin = i - 1, off = t->offset;
  for (int d = t->ndim - 1; d >= 0; d--) { off += (lin % t->sizes[d]) * t->strides[d]; lin /= t->sizes[d]; }
  lt_dtype_store_double((lt_dtype)t->dtype, (char *)t->storage->data + off * (int64_t)lt_dtype_size((lt_dtype)t->dtype), v);
  return 0;
}

static const luaL_Reg tensor_methods[] = {
  {"backward", m_backward}, {"requires_grad_", m_requires_grad_}, {"detach", m_detach},
  {"detach_", m_detach_}, {"retain_grad", m_retain_grad}, {"register_hook", m_register_hook},
  {"is_inference", m_is_inference},
  {"register_post_accumulate_grad_hook", m_register_post_accumulate_grad_hook}, {NULL, NULL}
};

static const luaL_Reg autograd_functions[] = {
  {"grad", l_grad}, {"backward", NULL}, {"set_detect_anomaly", l_set_detect_anomaly},
  {"is_anomaly_enabled", l_is_anomaly_enabled}, {"_live_nodes", l_live_nodes},
  {"_make_node", l_make_node}, {"_set_history", l_set_history}, {"_version", l_version},
  {"_flat_get", l_flat_get}, {"_flat_set", l_flat_set}, {"queue_callback", l_queue_callback}, {NULL, NULL}
};

/* torch.autograd.backward(tensors, [grad_tensors], [retain_graph], [create_graph],
** [grad_variables], [inputs]): backward from several roots at once, summing */
static int l_autograd_backward(lua_State *L) {
  static const char *const params[] = {"tensors", "grad_tensors", "retain_graph", "create_graph",
                                       "grad_variables", "inputs", NULL};
  const char *op = "torch.autograd.backward";
  static lt_tensor *roots[MAX_GRAD_TENSORS], *grads[MAX_GRAD_TENSORS], *inputs[MAX_GRAD_TENSORS];
  int a[6];
  lt_vm_kwargs(L, op, 1, params, a);
  if (!a[0]) return luaL_error(L, "%s: missing argument 'tensors' (#1)", op);
  if (a[1] && a[4]) return luaL_error(L, "%s: give grad_tensors or its old name grad_variables, not both", op);
  int gi = a[1] ? a[1] : a[4];
  int n = tensor_list(L, a[0], roots, MAX_GRAD_TENSORS, op, "tensors");
  for (int i = 0; i < n; i++) grads[i] = NULL;
  if (gi) {
    int ng = tensor_list(L, gi, grads, MAX_GRAD_TENSORS, op, "grad_tensors");
    if (ng != n) return luaL_error(L, "%s: grad_tensors has %d tensors, tensors has %d", op, ng, n);
  }
  lt_backward_opts o = {0};
  o.create_graph = arg_bool(L, a[3], op, "create_graph", false);
  o.retain_graph = arg_bool(L, a[2], op, "retain_graph", o.create_graph);
  o.accumulate = true;
  if (a[5]) {
    o.num_inputs = tensor_list(L, a[5], inputs, MAX_GRAD_TENSORS, op, "inputs");
    o.inputs = inputs;
  }
  backward_L = L;
  int rc = lt_run_backward(roots, grads, n, &o, NULL);
  backward_L = NULL;
  if (rc < 0) return lt_vm_raise(L, "backward");
  return 0;
}

void lt_vm_open_autograd(lua_State *L) {
  lt_autograd_init();
  if (luaL_newmetatable(L, NODE_MT)) {
    static const luaL_Reg mm[] = {{"__gc", node_gc}, {"__index", node_index}, {"__tostring", node_tostring},
                                  {"__eq", node_eq}, {NULL, NULL}};
    luaL_setfuncs(L, mm, 0);
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, MODE_MT)) {
    lua_pushcfunction(L, mode_close);
    lua_setfield(L, -2, "__close");
  }
  lua_pop(L, 1);
  lt_vm_add_methods(L, tensor_methods);
  lt_vm_push_methods(L);
  lua_getfield(L, -1, "_fields");
  lua_pushcfunction(L, f_grad); lua_setfield(L, -2, "grad");
  lua_pushcfunction(L, f_grad_fn); lua_setfield(L, -2, "grad_fn");
  lua_pushcfunction(L, f_is_leaf); lua_setfield(L, -2, "is_leaf");
  lua_pushcfunction(L, f_data); lua_setfield(L, -2, "data");
  lua_pushcfunction(L, f_retains_grad); lua_setfield(L, -2, "retains_grad");
  lua_pushcfunction(L, f_version); lua_setfield(L, -2, "_version");
  lua_pop(L, 1);
  lua_getfield(L, -1, "_setters");
  lua_pushcfunction(L, set_grad); lua_setfield(L, -2, "grad");
  lua_pushcfunction(L, set_requires_grad); lua_setfield(L, -2, "requires_grad");
  lua_pushcfunction(L, set_data); lua_setfield(L, -2, "data");
  lua_pop(L, 2);
  /* module functions (the module table is on top) */
  static const luaL_Reg mode_fns[] = {
    {"no_grad", l_no_grad}, {"enable_grad", l_enable_grad}, {"inference_mode", l_inference_mode},
    {"set_grad_enabled", l_set_grad_enabled}, {"is_grad_enabled", l_is_grad_enabled}, {"_swap_tensors", l_swap_tensors},
    {"_share_tensor", l_share_tensor},
    {"is_inference_mode_enabled", l_is_inference_mode_enabled}, {NULL, NULL}
  };
  luaL_setfuncs(L, mode_fns, 0);
  lua_createtable(L, 0, 8);
  for (const luaL_Reg *r = autograd_functions; r->name; r++) {
    if (!r->func) continue;
    lua_pushcfunction(L, r->func);
    lua_setfield(L, -2, r->name);
  }
  lua_pushcfunction(L, l_autograd_backward);
  lua_setfield(L, -2, "backward");
  lua_setfield(L, -2, "autograd");
}
