/*
** lprint.c — tostring(x) in PyTorch's layout, and torch.set_printoptions.
**
** The layout follows PyTorch's repr rule for rule (column width chosen over
** the elements that are shown, `...` summarisation past `threshold`, integer
** and scientific modes, footer suffixes inside the parentheses) so that a
** PyTorch user reads the same text. Elements are read through sizes/strides,
** so views print without a copy, and a summarised tensor only ever touches the
** (2*edgeitems)^ndim elements at its corners.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lutorch_vm.h"
#include "ltensor.h"
#include "largs.h"
#include "core/backend.h"
#include "autograd/autograd.h"

/* Process-wide, like PyTorch's PRINT_OPTS. sci_mode: -1 automatic. */
typedef struct lt_printopts {
  int precision;
  double threshold;
  int edgeitems;
  int linewidth;
  int sci_mode;
} lt_printopts;

static const lt_printopts default_opts = {4, 1000, 3, 80, -1};
static lt_printopts P = {4, 1000, 3, 80, -1};

/* ---- a growable string (no Lua stack use while recursing) ---- */

typedef struct sbuf { char *p; size_t n, cap; bool oom; } sbuf;

static void sb_add(sbuf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) { b->oom = true; return; }
    b->p = p; b->cap = cap;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}
static void sb_adds(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }
static void sb_spaces(sbuf *b, int n) {
  static const char sp[] = "                                ";
  while (n > 0) { int k = n < 32 ? n : 32; sb_add(b, sp, (size_t)k); n -= k; }
}

/* ---- reading elements through strides ---- */

typedef struct pctx {
  const lt_tensor *t;
  lt_dtype dt;
  const char *base;      /* storage data at offset 0 */
  size_t esz;
  bool summarize;
  int64_t edge;
  /* formatter */
  bool is_float, is_bool;
  bool int_mode, sci;
  int width;
  /* statistics pass */
  int pass;
  bool any;
  double amin, amax;
  /* complex: each part has its own format, as PyTorch's; part says which
  ** one the statistics read */
  bool is_complex;
  int part;
  struct pfmt { bool int_mode, sci; int width; } fre, fim;
} pctx;

static const void *elem_ptr(const pctx *c, int64_t off) {
  return c->base + (size_t)(c->t->offset + off) * c->esz;
}

/* PyTorch prints nan unsigned and never "-nan" */
static int fmt_float(char *buf, size_t n, double v, const pctx *c) {
  if (isnan(v)) return snprintf(buf, n, "nan");
  if (isinf(v)) return snprintf(buf, n, v < 0 ? "-inf" : "inf");
  if (c->sci) return snprintf(buf, n, "%.*e", P.precision, v);
  if (c->int_mode) return snprintf(buf, n, "%.0f.", v);
  return snprintf(buf, n, "%.*f", P.precision, v);
}

/* the value the formatter measures: the element, or one part of a complex one */
static double elem_value(const pctx *c, const void *p) {
  if (!c->is_complex) return lt_dtype_load_double(c->dt, p);
  double re, im;
  lt_dtype_load_complex(c->dt, p, &re, &im);
  return c->part ? im : re;
}

/* v in format f, padded on the left to f's width */
static int fmt_padded(char *buf, size_t n, double v, const pctx *c, const struct pfmt *f) {
  pctx k = *c;
  k.int_mode = f->int_mode;
  k.sci = f->sci;
  char tmp[256];
  int w = fmt_float(tmp, sizeof tmp, v, &k);
  if (w < 0) w = 0;
  if ((size_t)w >= sizeof tmp) w = (int)sizeof tmp - 1;
  int pad = f->width > w ? f->width - w : 0;
  if ((size_t)(pad + w) >= n) return 0;
  memset(buf, ' ', (size_t)pad);
  memcpy(buf + pad, tmp, (size_t)w + 1);
  return pad + w;
}

/* re+imj: each part padded in its format; the imaginary part's padding is
** dropped and a "+" put in when it has no sign (PyTorch's _val_formatter) */
static int fmt_complex(char *buf, size_t n, const pctx *c, const void *p) {
  double re, im;
  lt_dtype_load_complex(c->dt, p, &re, &im);
  char rs[256], is[256];
  fmt_padded(rs, sizeof rs, re, c, &c->fre);
  fmt_padded(is, sizeof is, im, c, &c->fim);
  const char *i = is;
  while (*i == ' ') i++;
  return snprintf(buf, n, "%s%s%sj", rs, (*i == '-' || *i == '+') ? "" : "+", i);
}

/* the text of one element, before padding */
static int fmt_elem(char *buf, size_t n, const pctx *c, int64_t off) {
  const void *p = elem_ptr(c, off);
  if (c->is_complex) return fmt_complex(buf, n, c, p);
  if (c->is_bool) return snprintf(buf, n, "%s", lt_dtype_load_int64(c->dt, p) ? "true" : "false");
  if (!c->is_float) return snprintf(buf, n, "%lld", (long long)lt_dtype_load_int64(c->dt, p));
  return fmt_float(buf, n, lt_dtype_load_double(c->dt, p), c);
}

/* One element's contribution to the column format (PyTorch's _Formatter):
** pass 0 gathers integrality and the range of nonzero finite magnitudes,
** pass 1 measures widths in the mode pass 0 chose. */
static void stat_elem(pctx *c, int64_t off) {
  const void *p = elem_ptr(c, off);
  char buf[512];
  if (!c->is_float) {
    int w = fmt_elem(buf, sizeof buf, c, off);
    if (w > c->width) c->width = w;
    return;
  }
  double v = elem_value(c, p);
  if (!isfinite(v) || v == 0) return;
  if (c->pass == 0) {
    double a = fabs(v);
    if (!c->any) { c->amin = c->amax = a; c->any = true; }
    else { if (a < c->amin) c->amin = a; if (a > c->amax) c->amax = a; }
    if (v != ceil(v)) c->int_mode = false;
    return;
  }
  int w;
  if (c->sci) w = snprintf(buf, sizeof buf, "%.*e", P.precision, v);
  else if (c->int_mode) w = snprintf(buf, sizeof buf, "%.0f", v) + 1;
  else w = snprintf(buf, sizeof buf, "%.*f", P.precision, v);
  if (w > c->width) c->width = w;
}

/* visit the elements that will be shown, in order */
static void walk_shown(pctx *c, int d, int64_t off) {
  const lt_tensor *t = c->t;
  if (d == t->ndim) { stat_elem(c, off); return; }
  int64_t n = t->sizes[d], s = t->strides[d];
  if (c->summarize && n > 2 * c->edge) {
    for (int64_t i = 0; i < c->edge; i++) walk_shown(c, d + 1, off + i * s);
    for (int64_t i = n - c->edge; i < n; i++) walk_shown(c, d + 1, off + i * s);
  } else {
    for (int64_t i = 0; i < n; i++) walk_shown(c, d + 1, off + i * s);
  }
}

static void build_part_formatter(pctx *c) {
  c->width = 1;
  c->int_mode = true;
  c->sci = false;
  c->any = false;
  c->pass = 0;
  walk_shown(c, 0, 0);
  if (c->is_float && c->any) {
    double ratio = c->amax / c->amin;
    if (c->int_mode) c->sci = ratio > 1000.0 || c->amax > 1.0e8;
    else c->sci = ratio > 1000.0 || c->amax > 1.0e8 || c->amin < 1.0e-4;
    c->pass = 1;
    walk_shown(c, 0, 0);
  }
  if (c->is_float && P.sci_mode >= 0) c->sci = P.sci_mode != 0;
}

static void build_formatter(pctx *c) {
  if (!c->is_complex) { build_part_formatter(c); return; }
  c->part = 0;
  build_part_formatter(c);
  c->fre = (struct pfmt){ c->int_mode, c->sci, c->width };
  c->part = 1;
  build_part_formatter(c);
  c->fim = (struct pfmt){ c->int_mode, c->sci, c->width };
  /* the width that lays out a line: both parts and the "j" */
  c->width = c->fre.width + c->fim.width + 1;
}

/* ---- layout ---- */

static void put_elem(sbuf *b, const pctx *c, int64_t off) {
  char buf[512];
  int n = fmt_elem(buf, sizeof buf, c, off);
  if (n < 0) n = 0;
  if ((size_t)n >= sizeof buf) n = (int)sizeof buf - 1;
  if (!c->is_complex) sb_spaces(b, c->width - n);   /* a complex element's parts are padded already */
  sb_add(b, buf, (size_t)n);
}

static void put_vector(sbuf *b, const pctx *c, int d, int64_t off, int indent) {
  int64_t n = c->t->sizes[d], s = c->t->strides[d];
  double per = floor((double)(P.linewidth - indent) / (double)(c->width + 2));
  int64_t per_line = per < 1 ? 1 : (int64_t)per;
  int64_t item = 0;
  sb_adds(b, "[");
#define NEXT_ITEM() do { \
    if (item > 0) { \
      if (item % per_line == 0) { sb_adds(b, ",\n"); sb_spaces(b, indent + 1); } \
      else sb_adds(b, ", "); \
    } \
    item++; \
  } while (0)
  if (c->summarize && c->edge == 0) {
    sb_adds(b, "...");
  } else if (c->summarize && n > 2 * c->edge) {
    for (int64_t i = 0; i < c->edge; i++) { NEXT_ITEM(); put_elem(b, c, off + i * s); }
    NEXT_ITEM(); sb_adds(b, " ...");
    for (int64_t i = n - c->edge; i < n; i++) { NEXT_ITEM(); put_elem(b, c, off + i * s); }
  } else {
    for (int64_t i = 0; i < n; i++) { NEXT_ITEM(); put_elem(b, c, off + i * s); }
  }
#undef NEXT_ITEM
  sb_adds(b, "]");
}

static void put_tensor(sbuf *b, const pctx *c, int d, int64_t off, int indent) {
  int rem = c->t->ndim - d;
  if (rem == 1) { put_vector(b, c, d, off, indent); return; }
  int64_t n = c->t->sizes[d], s = c->t->strides[d];
  int64_t item = 0;
  sb_adds(b, "[");
#define SEP() do { \
    if (item++ > 0) { sb_adds(b, ","); for (int k = 1; k < rem; k++) sb_adds(b, "\n"); sb_spaces(b, indent + 1); } \
  } while (0)
  if (c->summarize && n > 2 * c->edge) {
    for (int64_t i = 0; i < c->edge; i++) { SEP(); put_tensor(b, c, d + 1, off + i * s, indent + 1); }
    SEP(); sb_adds(b, "...");
    for (int64_t i = n - c->edge; i < n; i++) { SEP(); put_tensor(b, c, d + 1, off + i * s, indent + 1); }
  } else {
    for (int64_t i = 0; i < n; i++) { SEP(); put_tensor(b, c, d + 1, off + i * s, indent + 1); }
  }
#undef SEP
  sb_adds(b, "]");
}

/* a suffix goes on the same line unless that would pass linewidth */
static void add_suffix(sbuf *b, const char *suffix, int indent, int64_t *last_len) {
  int64_t len = (int64_t)strlen(suffix);
  if (*last_len + len + 2 > P.linewidth) {
    sb_adds(b, ",\n");
    sb_spaces(b, indent);
    *last_len = indent + len;
  } else {
    sb_adds(b, ", ");
    *last_len += len + 2;
  }
  sb_adds(b, suffix);
}

/* t gives the footer (device, autograd), data the elements (a host copy for device tensors) */
static void tensor_text(sbuf *b, const lt_tensor *t, const lt_tensor *data) {
  const char *prefix = "tensor(";
  int indent = 7;
  lt_dtype dt = (lt_dtype)t->dtype;
  sb_adds(b, prefix);
  if (t->numel == 0) {
    sb_adds(b, "[]");
  } else {
    pctx c;
    memset(&c, 0, sizeof c);
    c.t = data;
    c.dt = dt;
    c.base = (const char *)data->storage->data;
    c.esz = lt_dtype_size(dt);
    c.summarize = (double)t->numel > P.threshold;
    c.edge = P.edgeitems;
    c.is_complex = lt_dtype_is_complex(dt);
    c.is_float = lt_dtype_is_float(dt) || c.is_complex;
    c.is_bool = dt == LT_BOOL;
    build_formatter(&c);
    if (t->ndim == 0) put_elem(b, &c, 0);
    else put_tensor(b, &c, 0, 0, indent);
  }
  if (b->oom) return;
  /* PyTorch measures the last line as len - rfind('\n') + 1 */
  const char *nl = strrchr(b->p, '\n');
  int64_t last_len = nl ? (int64_t)(b->n - (size_t)(nl - b->p)) + 1 : (int64_t)b->n + 2;
  char sfx[160], tmp[96];
  lt_device dev = lt_tensor_device(t);
  if (dev.type != LT_DEV_CPU) {
    lt_device_format(dev, tmp, sizeof tmp);
    snprintf(sfx, sizeof sfx, "device='%s'", tmp);
    add_suffix(b, sfx, indent, &last_len);
  }
  if (t->numel == 0) {
    if (t->ndim != 1) {
      size_t k = 0;
      k += (size_t)snprintf(sfx, sizeof sfx, "size=(");
      for (int i = 0; i < t->ndim && k < sizeof sfx; i++)
        k += (size_t)snprintf(sfx + k, sizeof sfx - k, i ? ", %lld" : "%lld", (long long)t->sizes[i]);
      if (k < sizeof sfx) snprintf(sfx + k, sizeof sfx - k, ")");
      add_suffix(b, sfx, indent, &last_len);
    }
    if (dt != lt_get_default_dtype()) {
      snprintf(sfx, sizeof sfx, "dtype=torch.%s", lt_dtype_name(dt));
      add_suffix(b, sfx, indent, &last_len);
    }
  } else if (dt != lt_get_default_dtype() && dt != LT_INT64 && dt != LT_BOOL &&
             dt != lt_dtype_to_complex(lt_get_default_dtype())) {   /* the default's complex, as PyTorch */
    snprintf(sfx, sizeof sfx, "dtype=torch.%s", lt_dtype_name(dt));
    add_suffix(b, sfx, indent, &last_len);
  }
  const char *gf = t->grad_fn && t->grad_fn->ops ? t->grad_fn->ops->name : NULL;
  if (gf) {
    snprintf(sfx, sizeof sfx, "grad_fn=<%s>", gf);
    add_suffix(b, sfx, indent, &last_len);
  } else if (t->requires_grad) {
    add_suffix(b, "requires_grad=True", indent, &last_len);
  }
  sb_adds(b, ")");
}

/* a meta tensor has no values to print: PyTorch's tensor(..., device='meta', size=(2, 3)) */
static int meta_text(lua_State *L, const lt_tensor *t) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "tensor(..., device='meta', size=(");
  for (int d = 0; d < t->ndim; d++) {
    lua_pushfstring(L, d ? ", %I" : "%I", (lua_Integer)t->sizes[d]);
    luaL_addvalue(&b);
  }
  luaL_addstring(&b, t->ndim == 1 ? ",)" : ")");
  if (t->dtype != lt_get_default_dtype()) {
    lua_pushfstring(L, ", dtype=torch.%s", lt_dtype_name((lt_dtype)t->dtype));
    luaL_addvalue(&b);
  }
  const char *gf = t->grad_fn && t->grad_fn->ops ? t->grad_fn->ops->name : NULL;
  if (gf) { lua_pushfstring(L, ", grad_fn=<%s>", gf); luaL_addvalue(&b); }
  else if (t->requires_grad) luaL_addstring(&b, ", requires_grad=True");
  luaL_addstring(&b, ")");
  luaL_pushresult(&b);
  return 1;
}

/* __tostring of tensors (and x:__tostring for the REPL) */
static int l_tostring(lua_State *L) {
  lt_ud *u = lt_vm_toud(L, 1);
  if (!u) return luaL_error(L, "tostring: argument 'self' must be a tensor");
  if (!u->t) { lua_pushstring(L, "tensor (freed)"); return 1; }
  if (lt_tensor_device(u->t).type == LT_DEV_META) return meta_text(L, u->t);
  lt_tensor *t = u->t, *host = NULL;
  if (lt_tensor_device(t).type != LT_DEV_CPU && t->numel > 0) {
    /* device memory is not readable here: print a host copy with t's identity */
    host = lt_tensor_to_host(t);
    if (!host) return lt_vm_raise(L, "tostring");
  }
  sbuf b = {NULL, 0, 0, false};
  tensor_text(&b, t, host ? host : t);
  lt_tensor_release(host);
  if (b.oom) { free(b.p); return luaL_error(L, "tostring: out of memory"); }
  lua_pushlstring(L, b.p, b.n);
  free(b.p);
  return 1;
}

static int opt_int(lua_State *L, const char *key, int lo, int *out) {
  int ty = lua_getfield(L, 1, key);
  if (ty != LUA_TNIL) {
    if (!lua_isinteger(L, -1) && !(ty == LUA_TNUMBER && lua_tonumber(L, -1) == floor(lua_tonumber(L, -1))))
      return luaL_error(L, "set_printoptions: argument '%s' must be an integer", key);
    lua_Number v = lua_tonumber(L, -1);
    if (v < lo || v > 1000000000) return luaL_error(L, "set_printoptions: argument '%s' must be at least %d", key, lo);
    *out = (int)v;
  }
  lua_pop(L, 1);
  return 0;
}

/* torch.set_printoptions{precision=, threshold=, edgeitems=, linewidth=,
** sci_mode=, profile="default"|"short"|"full"}. As in PyTorch, a missing
** sci_mode means automatic. */
static int l_set_printoptions(lua_State *L) {
  if (lua_isnoneornil(L, 1)) { P = default_opts; return 0; }
  if (!lua_istable(L, 1)) return luaL_error(L, "set_printoptions: argument 'opts' must be a table");
  static const char *const names[] = {"precision", "threshold", "edgeitems", "linewidth", "sci_mode", "profile", NULL};
  lt_vm_check_options(L, 1, "set_printoptions", names);
  lt_printopts o = P;
  if (lua_getfield(L, 1, "profile") != LUA_TNIL) {
    const char *p = lua_tostring(L, -1);
    o = default_opts;
    if (!p) return luaL_error(L, "set_printoptions: argument 'profile' must be a string");
    if (strcmp(p, "short") == 0) { o.precision = 2; o.edgeitems = 2; }
    else if (strcmp(p, "full") == 0) o.threshold = HUGE_VAL;
    else if (strcmp(p, "default") != 0)
      return luaL_error(L, "set_printoptions: argument 'profile' must be 'default', 'short' or 'full' (got '%s')", p);
  }
  lua_pop(L, 1);
  opt_int(L, "precision", 0, &o.precision);
  if (o.precision > 60) return luaL_error(L, "set_printoptions: argument 'precision' must be at most 60");
  opt_int(L, "edgeitems", 0, &o.edgeitems);
  opt_int(L, "linewidth", 1, &o.linewidth);
  int ty = lua_getfield(L, 1, "threshold");
  if (ty != LUA_TNIL) {
    if (ty != LUA_TNUMBER || lua_tonumber(L, -1) != lua_tonumber(L, -1))
      return luaL_error(L, "set_printoptions: argument 'threshold' must be a number");
    o.threshold = lua_tonumber(L, -1);
  }
  lua_pop(L, 1);
  ty = lua_getfield(L, 1, "sci_mode");
  if (ty != LUA_TNIL && ty != LUA_TBOOLEAN)
    return luaL_error(L, "set_printoptions: argument 'sci_mode' must be a boolean or nil");
  o.sci_mode = ty == LUA_TNIL ? -1 : lua_toboolean(L, -1);
  lua_pop(L, 1);
  P = o;
  return 0;
}

static int l_get_printoptions(lua_State *L) {
  lua_createtable(L, 0, 5);
  lua_pushinteger(L, P.precision); lua_setfield(L, -2, "precision");
  if (P.threshold == floor(P.threshold) && fabs(P.threshold) < 9e15) lua_pushinteger(L, (lua_Integer)P.threshold);
  else lua_pushnumber(L, P.threshold);
  lua_setfield(L, -2, "threshold");
  lua_pushinteger(L, P.edgeitems); lua_setfield(L, -2, "edgeitems");
  lua_pushinteger(L, P.linewidth); lua_setfield(L, -2, "linewidth");
  if (P.sci_mode >= 0) { lua_pushboolean(L, P.sci_mode); lua_setfield(L, -2, "sci_mode"); }
  return 1;
}

void lt_vm_open_print(lua_State *L) {
  static const luaL_Reg fns[] = {
    {"set_printoptions", l_set_printoptions}, {"get_printoptions", l_get_printoptions},
    {NULL, NULL}
  };
  luaL_setfuncs(L, fns, 0);
  static const luaL_Reg methods[] = {{"__tostring", l_tostring}, {NULL, NULL}};
  lt_vm_add_methods(L, methods);
  lt_vm_tostring_hook = l_tostring;
}
