/* SPDX-License-Identifier: MIT -- Copyright (c) 2026 the lutorch authors (LICENSE) */
/*
** lutorch/extension.h — writing ops in C: the C extension API.
**
** An extension declares each op once, the way lutorch's own ops are declared
** and the way torch.library declares them from Lua:
**
**   - a schema string in PyTorch's syntax:
**       "myext::swish(Tensor x) -> Tensor"
**       "myext::scale_(Tensor(a!) x, float s=2.0) -> Tensor(a!)"
**     (types Tensor, Tensor?, Tensor[], int, float, bool, str, Scalar, int[],
**     float[]; defaults; keyword-only arguments after `*`; Tensor(a) for a
**     result that aliases an argument, Tensor(a!) for one the op writes into);
**   - kernels per backend ("cpu", "cuda", "default" = both,
**     "CompositeImplicitAutograd" = written with other ops, autograd for free);
**   - a derivative: setup saves what backward needs, backward computes the
**     gradient of each tensor input from the gradients of the results;
**   - a fake (meta) function: results of the right shape and dtype, data
**     untouched, for shape inference (opcheck compares it with the kernel).
**
** The op goes through the dispatcher like a built-in one: torch.profile and
** the profiler see it, autograd records a node ("myext::swishBackward"), and
** Lua calls it as torch.ops.myext.swish(x) once the extension is loaded.
**
** Kernels take their arguments as an array of tagged values (lt_ivalue, from
** lutorch/dispatch/registry.h) in schema order, defaults filled in and types
** already checked against the schema, and fill rets[] with NEW references.
** Return 0, or -1 after lt_error("myext::swish: ...").
**
** The module: a shared object whose luaopen_NAME registers the ops, so
** require "NAME" loads it from lutorch, from a stock lua5.4 (after
** require "torch") and from a program embedding lutorch (lutorch.h):
**
**   LT_EXTENSION(myext) {
**     if (lt_ext_define("myext::swish(Tensor x) -> Tensor", "x * sigmoid(x)") < 0) return -1;
**     return lt_ext_impl("myext::swish", "cpu", swish_cpu);
**   }
**
** Build it with `pkg-config --cflags lutorch` and link it WITHOUT -llutorch
** (cc -shared -fPIC ...): the core's symbols resolve against the process that
** loads it (the lutorch program, torch.so, or an embedding program's
** liblutorch), so there is one op registry. examples/extension/ is a complete
** extension; man/extension.md walks through it.
*/
#ifndef LUTORCH_EXTENSION_H
#define LUTORCH_EXTENSION_H

#include "lutorch.h"
#include "lutorch/autograd/extension.h"   /* lt_ext_*; registry.h's lt_ivalue; the ctx */

/* ---- reading arguments (args[i] follows the schema's i-th argument) ---- */
static inline lt_tensor *lt_ext_tensor(const lt_ivalue *args, int i) {
  return args[i].tag == LT_ARG_TENSOR ? args[i].u.t : NULL;   /* NULL: an absent Tensor? */
}
static inline double lt_ext_float(const lt_ivalue *args, int i) {
  return args[i].tag == LT_ARG_INT ? (double)args[i].u.i
       : args[i].tag == LT_ARG_SCALAR ? lt_scalar_to_double(args[i].u.sc) : args[i].u.f;
}
static inline int64_t lt_ext_int(const lt_ivalue *args, int i) { return args[i].u.i; }
static inline bool lt_ext_bool(const lt_ivalue *args, int i) { return args[i].u.b; }

/* ---- results: rets[i] = t (a new reference the caller now owns); -1 when t is NULL ---- */
static inline int lt_ext_return(lt_ivalue *rets, int i, lt_tensor *t) {
  if (!t) return -1;
  rets[i] = lt_iv_tensor(t);
  return 0;
}

/* raise the error slot's message as a Lua error (for luaopen_*; in the binding) */
int lt_ext_lua_error(lua_State *L);

/* LT_EXTENSION(name) { ...register ops...; return 0; } defines luaopen_name, which
** require "name" calls; a registration that fails raises its error in Lua. */
#define LT_EXTENSION(name)                                            \
  static int lt_ext_register_##name(void);                            \
  int luaopen_##name(lua_State *L);                                   \
  int luaopen_##name(lua_State *L) {                                  \
    return lt_ext_register_##name() < 0 ? lt_ext_lua_error(L) : 0;    \
  }                                                                   \
  static int lt_ext_register_##name(void)

#endif
