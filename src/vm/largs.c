/*
** largs.c — parsing Lua arguments against an op's schema, and pushing results.
**
** Positional arguments fill the schema in order; a trailing table whose first
** key is a string holds options by name (kw-only arguments, out=, and any
** positional one left out). Nothing here raises until every temporary made for
** the call (numbers wrapped as tensors, tensor-list arrays) has been released.
*/
#include <stdlib.h>
#include <ctype.h>
#include <string.h>
#include <stdio.h>
#include <math.h>
#include "largs.h"
#include "ltensor.h"
#include "lcomplex.h"

struct lt_generator *(*lt_vm_togenerator)(lua_State *L, int idx) = NULL;

static const char *kind_name(int k) {
  switch (k) {
    case LT_ARG_TENSOR: return "a tensor or number";
    case LT_ARG_TENSOR_OPT: return "a tensor, number or nil";
    case LT_ARG_TENSOR_LIST: return "a table of tensors";
    case LT_ARG_SCALAR: case LT_ARG_SCALAR_OPT: return "a number";
    case LT_ARG_INT: case LT_ARG_INT_OPT: case LT_ARG_DIM: case LT_ARG_DIM_OPT: case LT_ARG_INDEX: return "an integer";
    case LT_ARG_INTLIST: case LT_ARG_INTLIST_OPT: return "a size (integers or a table of integers)";
    case LT_ARG_DIMLIST: case LT_ARG_DIMLIST_OPT: return "a dim or a table of dims";
    case LT_ARG_FLOAT: return "a number";
    case LT_ARG_BOOL: case LT_ARG_BOOL_OPT: return "a boolean";
    case LT_ARG_STR: case LT_ARG_STR_OPT: return "a string";
    case LT_ARG_DTYPE: case LT_ARG_DTYPE_OPT: return "a dtype";
    case LT_ARG_DEVICE_OPT: return "a device";
    case LT_ARG_GENERATOR_OPT: return "a generator";
    default: return "?";
  }
}

static const char *lua_typename_of(lua_State *L, int idx) {
  if (lt_vm_toud(L, idx)) return lt_vm_totensor(L, idx) ? "tensor" : "freed tensor";
  return luaL_typename(L, idx);
}

typedef struct pctx {
  lua_State *L;
  const lt_opspec *spec;
  lt_parse_error *err;
  int argi;
  bool definite;   /* the overload matched and the value is wrong: its message wins */
  char msg[256];
} pctx;

_Thread_local lt_device lt_vm_default_device = {-1, 0};

static bool spec_has_tensor(const lt_opspec *spec) {
  for (int i = 0; i < spec->nargs; i++) {
    int k = spec->args[i].kind;
    if (k == LT_ARG_TENSOR || k == LT_ARG_TENSOR_OPT || k == LT_ARG_TENSOR_LIST) return true;
  }
  return false;
}

static int fail(pctx *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(pctx *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->msg, sizeof p->msg, fmt, ap);
  va_end(ap);
  return -1;
}

static int mismatch(pctx *p, int idx) {
  const lt_argspec *s = &p->spec->args[p->argi];
  const char *want = p->argi == 0 && s->kind == LT_ARG_TENSOR ? "a tensor" : kind_name(s->kind);
  return fail(p, "%s: argument '%s' (#%d) must be %s, got %s", p->spec->name, s->name, p->argi + 1,
              want, lua_typename_of(p->L, idx));
}

static int to_int(lua_State *L, int idx, int64_t *out) {
  if (lua_type(L, idx) != LUA_TNUMBER) return -1;
  if (lua_isinteger(L, idx)) { *out = lua_tointeger(L, idx); return 0; }
  double d = lua_tonumber(L, idx);
  if (d != floor(d) || !(d > -9.2e18 && d < 9.2e18)) return -1;
  *out = (int64_t)d;
  return 0;
}

/* Lua's 1-based dim/index to C's 0-based; negatives keep counting from the end */
static int lua_to_zero_based(pctx *p, int64_t v, int64_t *out, const char *what) {
  if (v == 0) return fail(p, "%s: %s 0 is invalid for argument '%s' (%ss are 1-based; -1 is the last)",
                          p->spec->name, what, p->spec->args[p->argi].name, what);
  *out = v > 0 ? v - 1 : v;
  return 0;
}

static int parse_scalar(lua_State *L, int idx, lt_scalar *s) {
  int t = lua_type(L, idx);
  if (t == LUA_TNUMBER) {
    if (lua_isinteger(L, idx)) *s = lt_scalar_int(lua_tointeger(L, idx));
    else *s = lt_scalar_float(lua_tonumber(L, idx));
    return 0;
  }
  if (t == LUA_TBOOLEAN) { *s = lt_scalar_bool(lua_toboolean(L, idx)); return 0; }
  /* a complex value (torch.complex_number) or a 1-element complex tensor gives a
  ** complex Scalar, which the entry points of ops not written for one refuse */
  double re, im;
  if (lt_vm_tocomplex(L, idx, &re, &im)) { *s = lt_scalar_complex(re, im); return 0; }
  lt_tensor *x = lt_vm_totensor(L, idx);
  if (x && x->numel == 1 && lt_tensor_device(x).type == LT_DEV_CPU) {
    *s = lt_tensor_item_complex(x);
    return 0;
  }
  return -1;
}

/* a size or dim list: a sequence table, or (when `varargs`) a run of numbers from idx.
** Returns the number of stack slots consumed, or -1. */
static int parse_list(pctx *p, int idx, int top, bool varargs, bool dims, lt_argval *v) {
  lua_State *L = p->L;
  int n = 0, used = 1;
  if (lua_type(L, idx) == LUA_TTABLE) {
    lua_Integer len = (lua_Integer)lua_rawlen(L, idx);
    if (len > LT_MAX_DIMS) return fail(p, "%s: argument '%s' has %lld entries (at most %d)", p->spec->name,
                                       p->spec->args[p->argi].name, (long long)len, LT_MAX_DIMS);
    for (lua_Integer k = 1; k <= len; k++) {
      lua_rawgeti(L, idx, k);
      int64_t x;
      int bad = to_int(L, -1, &x);
      lua_pop(L, 1);
      if (bad) return fail(p, "%s: argument '%s' entry %lld must be an integer", p->spec->name,
                           p->spec->args[p->argi].name, (long long)k);
      v->lbuf[n++] = x;
    }
  } else if (lua_type(L, idx) == LUA_TNUMBER) {
    int last = varargs ? top : idx;
    used = 0;
    for (int i = idx; i <= last && lua_type(L, i) == LUA_TNUMBER; i++) {
      int64_t x;
      if (to_int(L, i, &x)) return mismatch(p, i);
      if (n >= LT_MAX_DIMS) return fail(p, "%s: argument '%s' has too many entries (at most %d)",
                                        p->spec->name, p->spec->args[p->argi].name, LT_MAX_DIMS);
      v->lbuf[n++] = x;
      used++;
    }
  } else {
    return mismatch(p, idx);
  }
  if (dims)
    for (int i = 0; i < n; i++)
      if (lua_to_zero_based(p, v->lbuf[i], &v->lbuf[i], "dim") < 0) return -1;
  v->l.v = v->lbuf;
  v->l.n = n;
  return used;
}

/* parse the value at idx; returns stack slots consumed (1, or more for size varargs), -1 on mismatch */
static int parse_value(pctx *p, int idx, int top, bool positional, lt_argval *v) {
  lua_State *L = p->L;
  const lt_argspec *s = &p->spec->args[p->argi];
  int t = lua_type(L, idx);
  int64_t x;
  switch (s->kind) {
    case LT_ARG_TENSOR_OPT:
      if (t == LUA_TNIL) { v->t = NULL; return 1; }
      /* fallthrough */
    case LT_ARG_TENSOR: {
      lt_tensor *ts = lt_vm_totensor(L, idx);
      if (ts) { v->t = ts; return 1; }
      if (lt_vm_toud(L, idx))
        return fail(p, "%s: argument '%s' (#%d) is a freed tensor", p->spec->name, s->name, p->argi + 1);
      double re, im;
      if (p->argi > 0 && lt_vm_tocomplex(L, idx, &re, &im)) {
        v->t = lt_vm_complex_wrapped(re, im);
        if (!v->t) return fail(p, "%s: %s", p->spec->name, lt_error_message());
        v->owned = true;
        return 1;
      }
      if ((t == LUA_TNUMBER || t == LUA_TBOOLEAN) && p->argi > 0) {
        lt_scalar sc;
        parse_scalar(L, idx, &sc);
        v->t = lt_tensor_wrapped_number(sc);
        if (!v->t) return fail(p, "%s: %s", p->spec->name, lt_error_message());
        v->owned = true;
        return 1;
      }
      return mismatch(p, idx);
    }
    case LT_ARG_TENSOR_LIST: {
      if (t != LUA_TTABLE) return mismatch(p, idx);
      int n = (int)lua_rawlen(L, idx);
      v->list.v = malloc(sizeof(lt_tensor *) * (size_t)(n > 0 ? n : 1));
      v->list.n = 0;
      if (!v->list.v) return fail(p, "%s: out of memory", p->spec->name);
      for (int k = 1; k <= n; k++) {
        lua_rawgeti(L, idx, k);
        lt_tensor *e = lt_vm_totensor(L, -1);
        lua_pop(L, 1);   /* the table keeps it alive */
        if (!e) return fail(p, "%s: argument '%s' entry %d must be a tensor", p->spec->name, s->name, k);
        v->list.v[v->list.n++] = e;
      }
      return 1;
    }
    case LT_ARG_SCALAR_OPT:
      if (t == LUA_TNIL) { v->s = lt_scalar_none(); return 1; }
      /* fallthrough */
    case LT_ARG_SCALAR:
      if (parse_scalar(L, idx, &v->s)) return mismatch(p, idx);
      return 1;
    case LT_ARG_INT_OPT:
      if (t == LUA_TNIL) { v->i = LT_NOINT; return 1; }
      /* fallthrough */
    case LT_ARG_INT:
      if (to_int(L, idx, &v->i)) return mismatch(p, idx);
      return 1;
    case LT_ARG_DIM_OPT:
      if (t == LUA_TNIL) { v->i = LT_NOINT; return 1; }
      /* fallthrough */
    case LT_ARG_DIM:
      if (to_int(L, idx, &x)) return mismatch(p, idx);
      return lua_to_zero_based(p, x, &v->i, "dim") < 0 ? -1 : 1;
    case LT_ARG_INDEX:
      if (to_int(L, idx, &x)) return mismatch(p, idx);
      return lua_to_zero_based(p, x, &v->i, "index") < 0 ? -1 : 1;
    case LT_ARG_INTLIST_OPT:
      if (t == LUA_TNIL) { v->l = lt_intlist_none(); return 1; }
      /* fallthrough */
    case LT_ARG_INTLIST:
      return parse_list(p, idx, top, positional, false, v);
    case LT_ARG_DIMLIST_OPT:
      if (t == LUA_TNIL) { v->l = lt_intlist_none(); return 1; }
      /* fallthrough */
    case LT_ARG_DIMLIST:
      return parse_list(p, idx, top, false, true, v);
    case LT_ARG_FLOAT:
      if (t != LUA_TNUMBER) return mismatch(p, idx);
      v->f = lua_tonumber(L, idx);
      return 1;
    case LT_ARG_BOOL:
      if (t != LUA_TBOOLEAN) return mismatch(p, idx);
      v->b = lua_toboolean(L, idx);
      return 1;
    case LT_ARG_BOOL_OPT:
      if (t == LUA_TNIL) { v->i = -1; return 1; }
      if (t != LUA_TBOOLEAN) return mismatch(p, idx);
      v->i = lua_toboolean(L, idx);
      return 1;
    case LT_ARG_STR_OPT:
      if (t == LUA_TNIL) { v->str = NULL; return 1; }
      /* fallthrough */
    case LT_ARG_STR:
      if (t != LUA_TSTRING) return mismatch(p, idx);
      v->str = lua_tostring(L, idx);
      return 1;
    case LT_ARG_DTYPE_OPT:
      if (t == LUA_TNIL) { v->i = -1; return 1; }
      /* fallthrough */
    case LT_ARG_DTYPE: {
      int dt = lt_vm_todtype(L, idx);
      if (dt < 0) {
        if (t == LUA_TSTRING)
          return fail(p, "%s: argument '%s': unknown dtype '%s'", p->spec->name, s->name, lua_tostring(L, idx));
        return mismatch(p, idx);
      }
      v->i = dt;
      return 1;
    }
    case LT_ARG_DEVICE_OPT:
      if (t == LUA_TNIL) {
        /* a factory (no tensor argument to take the device from) follows torch.set_default_device */
        v->dev.type = -1; v->dev.index = 0;
        if (lt_vm_default_device.type >= 0 && !spec_has_tensor(p->spec)) v->dev = lt_vm_default_device;
        return 1;
      }
      if (lt_vm_todevice(L, idx, &v->dev) < 0) {
        if (t == LUA_TSTRING) return fail(p, "%s: argument '%s': %s", p->spec->name, s->name, lt_error_message());
        return mismatch(p, idx);
      }
      /* a device whose backend is missing is no reason to try another overload:
      ** x:to("cuda") says there is no CUDA device, not that "cuda" is no dtype */
      if (lt_vm_device_usable(v->dev) < 0) {
        p->definite = true;
        return fail(p, "%s: argument '%s': %s", p->spec->name, s->name, lt_error_message());
      }
      return 1;
    case LT_ARG_GENERATOR_OPT:
      if (t == LUA_TNIL) { v->gen = NULL; return 1; }
      if (!lt_vm_togenerator || !(v->gen = lt_vm_togenerator(L, idx))) return mismatch(p, idx);
      return 1;
  }
  return mismatch(p, idx);
}

/* a schema default, written as Lua would see it */
static int parse_default(pctx *p, lt_argval *v) {
  const lt_argspec *s = &p->spec->args[p->argi];
  const char *d = s->def;
  lua_State *L = p->L;
  if (strcmp(d, "None") == 0) { lua_pushnil(L); }
  else if (strcmp(d, "True") == 0 || strcmp(d, "False") == 0) { lua_pushboolean(L, d[0] == 'T'); }
  else if (d[0] == '"' || d[0] == '\'') {
    size_t n = strlen(d) - 2;
    if (n >= sizeof v->sbuf) n = sizeof v->sbuf - 1;
    memcpy(v->sbuf, d + 1, n);
    v->sbuf[n] = 0;
    if (s->kind == LT_ARG_STR || s->kind == LT_ARG_STR_OPT) { v->str = v->sbuf; return 0; }
    lua_pushstring(L, v->sbuf);
  } else if (d[0] == '[') {
    int n = 0;
    const char *q = d + 1;
    while (*q && *q != ']') {
      char *end;
      long long x = strtoll(q, &end, 10);
      if (end == q) break;
      v->lbuf[n++] = x;
      q = end;
      while (*q == ',' || *q == ' ') q++;
    }
    if (s->kind == LT_ARG_DIMLIST || s->kind == LT_ARG_DIMLIST_OPT)
      for (int i = 0; i < n; i++) if (v->lbuf[i] > 0) v->lbuf[i]--;
    v->l.v = v->lbuf;
    v->l.n = n;
    return 0;
  } else {
    char *end;
    long long ix = strtoll(d, &end, 10);
    if (*end == 0) lua_pushinteger(L, ix);
    else lua_pushnumber(L, strtod(d, NULL));
  }
  int top = lua_gettop(L);
  int r = parse_value(p, top, top, false, v);
  lua_pop(L, 1);
  return r < 0 ? -1 : 0;
}

static bool is_options(lua_State *L, int idx) {
  if (lua_type(L, idx) != LUA_TTABLE) return false;
  if (lua_getmetatable(L, idx)) { lua_pop(L, 1); return false; }
  lua_pushnil(L);
  if (!lua_next(L, idx)) return false;
  bool str = lua_type(L, -2) == LUA_TSTRING;
  lua_pop(L, 2);
  return str;
}

void lt_parse_release(lt_args *a) {
  for (int i = 0; i < a->n; i++) {
    lt_argval *v = &a->v[i];
    if (v->owned) { lt_tensor_release(v->t); v->owned = false; }
    if (v->list.v) { free(v->list.v); v->list.v = NULL; }
  }
  a->n = 0;
}

static bool is_empty_table(lua_State *L, int idx) {
  if (lua_type(L, idx) != LUA_TTABLE) return false;
  if (lua_getmetatable(L, idx)) { lua_pop(L, 1); return false; }
  lua_pushnil(L);
  if (!lua_next(L, idx)) return true;
  lua_pop(L, 2);
  return false;
}

static int parse_with(lua_State *L, const lt_opspec *spec, lt_args *a, lt_parse_error *err, int top, int opts,
                      int base);

/* Trailing nils are absent arguments (`f(x, nil)` is `f(x)`). A trailing empty
** table is a size or list where one fits (`x:view({})`, `torch.zeros({})`),
** otherwise an empty options table (`torch.empty(2, 3, {})`). */
int lt_parse_args(lua_State *L, const lt_opspec *spec, lt_args *a, lt_parse_error *err) {
  return lt_parse_args_at(L, spec, a, err, 1);
}

/* the same with the positional arguments starting at stack index base (the
** Torch7 mode's result-first forms: torch.add(res, a, b) parses from 2) */
int lt_parse_args_at(lua_State *L, const lt_opspec *spec, lt_args *a, lt_parse_error *err, int base) {
  int top = lua_gettop(L);
  while (top >= base && lua_isnil(L, top)) top--;
  if (top >= base && is_options(L, top)) return parse_with(L, spec, a, err, top - 1, top, base);
  if (top > base && is_empty_table(L, top)) {
    if (parse_with(L, spec, a, err, top, 0, base) == 0) return 0;
    return parse_with(L, spec, a, err, top - 1, top, base);
  }
  return parse_with(L, spec, a, err, top, 0, base);
}

/* The first name of the options table at opts that spec does not know: the message in p->msg
** ("unknown option 'x' (did you mean 'y'?)") and true; false when every name is known. */
static bool unknown_option(pctx *p, int opts) {
  lua_State *L = p->L;
  const lt_opspec *spec = p->spec;
  lua_pushnil(L);
  while (lua_next(L, opts)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING) {
      snprintf(p->msg, sizeof p->msg, "%s: the options table may only have string keys", spec->name);
      lua_pop(L, 1);
      return true;
    }
    const char *k = lua_tostring(L, -1);
    bool known = false;
    for (int i = 0; i < spec->nargs && !known; i++) known = strcmp(spec->args[i].name, k) == 0;
    if (!known) {
      lt_nearest n;
      lt_nearest_init(&n, k);
      for (int i = 0; i < spec->nargs; i++) lt_nearest_add(&n, spec->args[i].name);
      if (n.best) snprintf(p->msg, sizeof p->msg, "%s: unknown option '%s' (did you mean '%s'?)", spec->name, k, n.best);
      else snprintf(p->msg, sizeof p->msg, "%s: unknown option '%s'", spec->name, k);
      lua_pop(L, 1);
      return true;
    }
  }
  return false;
}

static int parse_with(lua_State *L, const lt_opspec *spec, lt_args *a, lt_parse_error *err, int top, int opts,
                      int base) {
  pctx p;
  p.L = L; p.spec = spec; p.err = err; p.msg[0] = 0; p.definite = false;
  int pos = base;
  a->n = 0;
  for (int i = 0; i < spec->nargs; i++) {
    const lt_argspec *s = &spec->args[i];
    lt_argval *v = &a->v[i];
    v->owned = false; v->list.v = NULL; v->lua_idx = 0; v->t = NULL;
    a->n = i + 1;
    p.argi = i;
    int r = 0;
    if (!s->kwonly && pos <= top) {
      v->lua_idx = pos;
      /* a list takes the numbers after it (x:view(2, 3)) only when no positional
      ** argument follows it: max_pool2d(x, 3, 2) is kernel 3, stride 2 */
      bool spread = true;
      for (int j = i + 1; j < spec->nargs && spread; j++) spread = spec->args[j].kwonly;
      r = parse_value(&p, pos, top, spread, v);
      if (r >= 0) pos += r > 0 ? r : 1;
    } else {
      int have = 0;
      if (opts) {
        lua_getfield(L, opts, s->name);
        if (!lua_isnil(L, -1)) {
          int t = lua_gettop(L);
          r = parse_value(&p, t, t, false, v);
          have = 1;
        }
        lua_pop(L, 1);
      }
      if (!have) {
        if (s->def) r = parse_default(&p, v);
        /* x:softmax({dimm = 1}): the misspelt name says more than the missing one */
        else if (opts && unknown_option(&p, opts)) r = -1;
        else r = fail(&p, "%s: missing argument '%s' (#%d)", spec->name, s->name, i + 1);
      }
    }
    if (r < 0) {
      int score = p.definite ? LT_MAX_ARGS * 4 : i * 2 + (pos > base);
      if (score > err->score) { err->score = score; memcpy(err->msg, p.msg, sizeof err->msg); }
      lt_parse_release(a);
      return -1;
    }
  }
  const char *bad = NULL;
  if (pos <= top) {
    bad = "x";
    snprintf(p.msg, sizeof p.msg, "%s: too many arguments (%d given, at most %d expected)", spec->name,
             top - base + 1, pos - base);
  } else if (opts && unknown_option(&p, opts)) {
    bad = "x";
  }
  if (bad) {
    int score = spec->nargs * 2 + 1;
    if (score > err->score) { err->score = score; memcpy(err->msg, p.msg, sizeof err->msg); }
    lt_parse_release(a);
    return -1;
  }
  return 0;
}

int lt_parse_raise(lua_State *L, lt_parse_error *err) {
  return luaL_error(L, "%s", err->score >= 0 ? err->msg : "invalid arguments");
}

/* ---- results ---- */

static int raise_for(lua_State *L, lt_args *a, const char *op) {
  lt_parse_release(a);
  return lt_vm_raise(L, op);
}

/* the op name is not at hand here; the error slot's message names it */
int lt_vm_return_tensor(lua_State *L, lt_tensor *r, lt_args *a) {
  lt_parse_release(a);
  if (!r) return lt_vm_raise(L, NULL);
  lt_vm_push_tensor(L, r);
  return 1;
}

int lt_vm_return_arg(lua_State *L, lt_tensor *r, lt_args *a, int which) {
  int idx = a->v[which].lua_idx;
  if (idx > 0) {
    lt_parse_release(a);
    lt_tensor_release(r);
    lua_pushvalue(L, idx);
    return 1;
  }
  return lt_vm_return_tensor(L, r, a);
}

int lt_vm_return_tensors(lua_State *L, int rc, lt_tensor **rs, int n, lt_args *a) {
  if (rc < 0) {
    for (int i = 0; i < n; i++) lt_tensor_release(rs[i]);
    return raise_for(L, a, NULL);
  }
  lt_parse_release(a);
  luaL_checkstack(L, n, NULL);
  for (int i = 0; i < n; i++) lt_vm_push_tensor(L, rs[i]);
  return n;
}

int lt_vm_return_list(lua_State *L, lt_tensor_list r, lt_args *a) {
  if (r.n < 0) return raise_for(L, a, NULL);
  lt_parse_release(a);
  /* the list's tensors must not leak if creating the table raises */
  lua_createtable(L, r.n, 0);
  for (int i = 0; i < r.n; i++) {
    lt_tensor *t = r.v[i];
    r.v[i] = NULL;
    lt_vm_push_tensor(L, t);
    lua_rawseti(L, -2, i + 1);
  }
  free(r.v);
  return 1;
}

int lt_vm_return_none(lua_State *L, int r, lt_args *a) {
  if (r < 0) return raise_for(L, a, NULL);
  lt_parse_release(a);
  return 0;
}

int lt_vm_return_bool(lua_State *L, int r, lt_args *a) {
  if (r < 0) return raise_for(L, a, NULL);
  lt_parse_release(a);
  lua_pushboolean(L, r);
  return 1;
}

int lt_vm_return_scalar(lua_State *L, lt_scalar r, lt_args *a) {
  if (lt_scalar_is_none(r)) return raise_for(L, a, NULL);
  lt_parse_release(a);
  if (r.type == LT_SCALAR_FLOAT) lua_pushnumber(L, r.v.f);
  else if (r.type == LT_SCALAR_BOOL) lua_pushboolean(L, (int)r.v.i);
  else lua_pushinteger(L, r.v.i);
  return 1;
}

/* ---- names: "did you mean", options tables, keyword arguments ---- */

/* optimal string alignment distance of a and b, case ignored (ASCII, as
** Lua's string.lower in the C locale) */
int lt_vm_edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  int stack[3][64];
  int *heap = NULL, *prev2 = stack[0], *prev = stack[1], *cur = stack[2];
  if (lb + 1 > 64) {
    heap = malloc(3 * (lb + 1) * sizeof(int));
    if (!heap) return (int)(la > lb ? la : lb);   /* no memory: as far as can be */
    prev2 = heap; prev = heap + lb + 1; cur = heap + 2 * (lb + 1);
  }
  for (size_t j = 0; j <= lb; j++) prev[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    int ca = tolower((unsigned char)a[i - 1]);
    cur[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int cb = tolower((unsigned char)b[j - 1]);
      int d = prev[j] + 1;
      if (cur[j - 1] + 1 < d) d = cur[j - 1] + 1;
      if (prev[j - 1] + (ca != cb) < d) d = prev[j - 1] + (ca != cb);
      if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) && tolower((unsigned char)a[i - 2]) == cb &&
          prev2[j - 2] + 1 < d)
        d = prev2[j - 2] + 1;
      cur[j] = d;
    }
    int *t = prev2; prev2 = prev; prev = cur; cur = t;
  }
  int r = prev[lb];
  free(heap);
  return r;
}

void lt_nearest_init(lt_nearest *n, const char *name) {
  n->name = name;
  n->best = NULL;
  n->best_d = 0;
  n->ties_by_name = false;
}

void lt_nearest_add(lt_nearest *n, const char *c) {
  if (!n->name || !c) return;
  int len = (int)strlen(n->name);
  int d = lt_vm_edit_distance(n->name, c);
  if (!((d <= 2 || d <= len / 3) && d < len)) return;
  if (!n->best || d < n->best_d || (d == n->best_d && n->ties_by_name && strcmp(c, n->best) < 0)) {
    n->best = c;
    n->best_d = d;
  }
}

const char *lt_vm_closest(const char *name, const char *const *candidates) {
  lt_nearest n;
  lt_nearest_init(&n, name);
  for (; candidates && *candidates; candidates++) lt_nearest_add(&n, *candidates);
  return n.best;
}

int lt_vm_unknown_option(lua_State *L, const char *fname, int key_idx, const char *const *allowed) {
  if (lua_type(L, key_idx) != LUA_TSTRING)
    return luaL_error(L, "%s: unknown option [%s] (options are named: {name = value})", fname,
                      luaL_tolstring(L, key_idx, NULL));
  const char *k = lua_tostring(L, key_idx);
  const char *best = lt_vm_closest(k, allowed);
  if (best) return luaL_error(L, "%s: unknown option '%s' (did you mean '%s'?)", fname, k, best);
  return luaL_error(L, "%s: unknown option '%s'", fname, k);
}

static bool in_list(const char *k, const char *const *names) {
  for (; names && *names; names++) if (strcmp(*names, k) == 0) return true;
  return false;
}

void lt_vm_check_options(lua_State *L, int idx, const char *fname, const char *const *allowed) {
  if (lua_isnoneornil(L, idx)) return;
  if (lua_type(L, idx) != LUA_TTABLE)
    luaL_error(L, "%s: options must be a table {name = value, ...}, got %s", fname,
               lt_vm_toud(L, idx) ? "a tensor" : luaL_typename(L, idx));
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING || !in_list(lua_tostring(L, -1), allowed))
      lt_vm_unknown_option(L, fname, lua_gettop(L), allowed);
  }
}

/* what the last argument of a call is: as options_kind in lib/torch_class.lua */
enum { LAST_VALUE, LAST_OPTIONS, LAST_MIXED };
static int last_kind(lua_State *L, int idx) {
  if (lua_type(L, idx) != LUA_TTABLE) return LAST_VALUE;
  if (lua_getmetatable(L, idx)) { lua_pop(L, 1); return LAST_VALUE; }
  bool names = false, list = false;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING) names = true; else list = true;
  }
  if (names && list) return LAST_MIXED;
  return list ? LAST_VALUE : LAST_OPTIONS;
}

void lt_vm_kwargs(lua_State *L, const char *fname, int first, const char *const *params, int *slot) {
  int np = 0;
  while (params[np]) np++;
  int top = lua_gettop(L), opts = 0;
  while (top >= first && lua_isnil(L, top)) top--;
  if (top >= first) {
    int k = last_kind(L, top);
    if (k == LAST_MIXED)
      luaL_error(L, "%s: the last argument mixes list entries and named options; give a list and the options "
                 "as two tables", fname);
    if (k == LAST_OPTIONS) opts = top--;
  }
  int given = top - first + 1;
  if (given > np) luaL_error(L, "%s: too many arguments (%d given, at most %d)", fname, given, np);
  for (int i = 0; i < np; i++) slot[i] = i < given && !lua_isnil(L, first + i) ? first + i : 0;
  if (!opts) return;
  lua_pushnil(L);
  while (lua_next(L, opts)) {       /* every name known, none given twice */
    lua_pop(L, 1);
    const char *k = lua_tostring(L, -1);
    int i = 0;
    while (i < np && strcmp(params[i], k) != 0) i++;
    if (i == np) lt_vm_unknown_option(L, fname, lua_gettop(L), params);
    if (slot[i])
      luaL_error(L, "%s: argument '%s' given twice, as argument #%d and by name", fname, k, i + 1);
  }
  luaL_checkstack(L, np, fname);
  for (int i = 0; i < np; i++) {
    if (slot[i]) continue;
    if (lua_getfield(L, opts, params[i]) == LUA_TNIL) lua_pop(L, 1);
    else slot[i] = lua_gettop(L);
  }
}
