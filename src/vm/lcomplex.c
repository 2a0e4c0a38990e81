/*
** lcomplex.c — the complex number value type of the binding. A complex value
** is a userdata of two doubles with arithmetic (+ - * / ^, unary minus, ==),
** tostring as Python writes complex numbers ("(1+2j)", "2j"), the fields
** .real and .imag and the methods conj(), abs() and angle(). torch.j is the
** imaginary unit, so 1 + 2*torch.j reads like Python's 1+2j. Arithmetic with
** a tensor on either side is the tensor's (the value is a wrapped number).
*/
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lauxlib.h>
#include "lcomplex.h"
#include "ltensor.h"
#include "lutorch_vm.h"

#define CX_MT "lutorch.complex"

typedef struct cxval { double re, im; } cxval;

void lt_vm_push_complex(lua_State *L, double re, double im) {
  cxval *z = lua_newuserdatauv(L, sizeof *z, 0);
  z->re = re; z->im = im;
  luaL_setmetatable(L, CX_MT);
}

bool lt_vm_tocomplex(lua_State *L, int idx, double *re, double *im) {
  cxval *z = luaL_testudata(L, idx, CX_MT);
  if (!z) return false;
  *re = z->re; *im = z->im;
  return true;
}

void lt_vm_push_element(lua_State *L, lt_dtype dt, const void *p) {
  if (lt_dtype_is_complex(dt)) {
    double re, im;
    lt_dtype_load_complex(dt, p, &re, &im);
    lt_vm_push_complex(L, re, im);
  } else if (dt == LT_BOOL) lua_pushboolean(L, *(const bool *)p);
  else if (lt_dtype_is_integral(dt)) lua_pushinteger(L, lt_dtype_load_int64(dt, p));
  else lua_pushnumber(L, lt_dtype_load_double(dt, p));
}

lt_tensor *lt_vm_complex_wrapped(double re, double im) {
  lt_tensor *t = lt_tensor_new(LT_COMPLEX128, lt_device_cpu(), 0, NULL);
  if (!t) return NULL;
  lt_dtype_store_complex(LT_COMPLEX128, lt_tensor_data(t), re, im);
  /* like a Lua number: no backend key, so it goes with tensors on any device */
  t->is_wrapped_number = true;
  t->keys &= ~LT_BACKEND_KEYS;
  return t;
}

/* a number or a complex value at idx as a C complex; false for anything else */
static bool operand(lua_State *L, int idx, double complex *z) {
  double re, im;
  if (lua_type(L, idx) == LUA_TNUMBER) { *z = lua_tonumber(L, idx); return true; }
  if (lt_vm_tocomplex(L, idx, &re, &im)) { *z = CMPLX(re, im); return true; }
  return false;
}

/* a tensor on either side: the tensor metatable's own metamethod does it */
static int tensor_operand(lua_State *L, const char *event) {
  if (!lt_vm_totensor(L, 1) && !lt_vm_totensor(L, 2)) return 0;
  lt_vm_push_tensor_mt(L);
  lua_getfield(L, -1, event);
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_call(L, 2, 1);
  return 1;
}

static int arith(lua_State *L, const char *event, char op) {
  if (tensor_operand(L, event)) return 1;
  double complex a, b, r = 0;
  if (!operand(L, 1, &a) || !operand(L, 2, &b))
    return luaL_error(L, "complex: cannot combine a complex number with a %s",
                      luaL_typename(L, operand(L, 1, &a) ? 2 : 1));
  switch (op) {
    case '+': r = a + b; break;
    case '-': r = a - b; break;
    case '*': r = a * b; break;
    case '/': r = a / b; break;
    case '^': r = cpow(a, b); break;
  }
  lt_vm_push_complex(L, creal(r), cimag(r));
  return 1;
}
static int cx_add(lua_State *L) { return arith(L, "__add", '+'); }
static int cx_sub(lua_State *L) { return arith(L, "__sub", '-'); }
static int cx_mul(lua_State *L) { return arith(L, "__mul", '*'); }
static int cx_div(lua_State *L) { return arith(L, "__div", '/'); }
static int cx_pow(lua_State *L) { return arith(L, "__pow", '^'); }

static cxval *check_cx(lua_State *L, int idx) { return luaL_checkudata(L, idx, CX_MT); }

static int cx_unm(lua_State *L) {
  cxval *z = check_cx(L, 1);
  lt_vm_push_complex(L, -z->re, -z->im);
  return 1;
}

static int cx_eq(lua_State *L) {
  double ar, ai, br, bi;
  lua_pushboolean(L, lt_vm_tocomplex(L, 1, &ar, &ai) && lt_vm_tocomplex(L, 2, &br, &bi) && ar == br && ai == bi);
  return 1;
}

/* Python's repr of a float inside a complex: the shortest digits that read
** back, without a trailing ".0" */
static void fmt_part(char *buf, size_t n, double v) {
  if (isnan(v)) { snprintf(buf, n, "nan"); return; }
  if (isinf(v)) { snprintf(buf, n, "%sinf", v < 0 ? "-" : ""); return; }
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, n, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  /* %g writes 1e+20 where Python writes 1e+20 too; only the exponent's zero padding differs */
  char *e = strchr(buf, 'e');
  if (e && (e[1] == '+' || e[1] == '-') && e[2] == '0' && e[3]) memmove(e + 2, e + 3, strlen(e + 3) + 1);
}

static int cx_tostring(lua_State *L) {
  cxval *z = check_cx(L, 1);
  char re[40], im[40];
  fmt_part(im, sizeof im, z->im);
  if (z->re == 0 && !signbit(z->re)) {
    lua_pushfstring(L, "%sj", im);
  } else {
    fmt_part(re, sizeof re, z->re);
    lua_pushfstring(L, "(%s%s%sj)", re, (z->im >= 0 || isnan(z->im)) ? "+" : "", im);
  }
  return 1;
}

static int cx_conj(lua_State *L) { cxval *z = check_cx(L, 1); lt_vm_push_complex(L, z->re, -z->im); return 1; }
static int cx_abs(lua_State *L) { cxval *z = check_cx(L, 1); lua_pushnumber(L, hypot(z->re, z->im)); return 1; }
static int cx_angle(lua_State *L) { cxval *z = check_cx(L, 1); lua_pushnumber(L, atan2(z->im, z->re)); return 1; }

static int cx_index(lua_State *L) {
  cxval *z = check_cx(L, 1);
  const char *k = lua_tostring(L, 2);
  if (!k) return 0;
  if (strcmp(k, "real") == 0) { lua_pushnumber(L, z->re); return 1; }
  if (strcmp(k, "imag") == 0) { lua_pushnumber(L, z->im); return 1; }
  luaL_getmetatable(L, CX_MT);
  lua_getfield(L, -1, "_methods");
  lua_getfield(L, -1, k);
  return 1;
}

/* torch.complex_number(re [, im]) */
static int l_complex_number(lua_State *L) {
  double re, im;
  if (lt_vm_tocomplex(L, 1, &re, &im) && lua_isnoneornil(L, 2)) { lua_settop(L, 1); return 1; }
  re = luaL_checknumber(L, 1);
  im = luaL_optnumber(L, 2, 0);
  lt_vm_push_complex(L, re, im);
  return 1;
}

/* torch.is_complex_number(v) */
static int l_is_complex_number(lua_State *L) {
  lua_pushboolean(L, luaL_testudata(L, 1, CX_MT) != NULL);
  return 1;
}

void lt_vm_open_complex(lua_State *L) {
  static const luaL_Reg meta[] = {
    {"__add", cx_add}, {"__sub", cx_sub}, {"__mul", cx_mul}, {"__div", cx_div}, {"__pow", cx_pow},
    {"__unm", cx_unm}, {"__eq", cx_eq}, {"__tostring", cx_tostring}, {"__index", cx_index},
    {NULL, NULL}
  };
  static const luaL_Reg methods[] = { {"conj", cx_conj}, {"abs", cx_abs}, {"angle", cx_angle}, {NULL, NULL} };
  luaL_newmetatable(L, CX_MT);
  luaL_setfuncs(L, meta, 0);
  lua_pushstring(L, "complex");
  lua_setfield(L, -2, "__name");
  luaL_newlib(L, methods);
  lua_setfield(L, -2, "_methods");
  lua_pop(L, 1);
  static const luaL_Reg fns[] = {
    {"complex_number", l_complex_number}, {"is_complex_number", l_is_complex_number}, {NULL, NULL}
  };
  luaL_setfuncs(L, fns, 0);
  lt_vm_push_complex(L, 0, 1);
  lua_setfield(L, -2, "j");
}
