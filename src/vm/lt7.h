/*
** lt7.h — Torch7 mode: the switch (one per Lua state, made before any
** tensor is used) and the helpers of the generated Torch7 binding
** (build/gen/lua_t7_ops.c, from tools/gen_t7.lua).
*/
#ifndef LT_LT7_H
#define LT_LT7_H

#include <lua.h>
#include <lauxlib.h>
#include "vm/largs.h"

extern const luaL_Reg lt_gen_t7_functions[];
extern const luaL_Reg lt_gen_t7_methods[];
extern const luaL_Reg lt_gen_t7_fmethods[];

/* set by lt_vm_push_tensor: a tensor has been handed to Lua in this process */
extern int lt_vm_tensor_made;

/* true when the state runs in Torch7 mode */
bool lt_vm_torch7(lua_State *L);
/* Ask for Torch7 mode before the torch module is opened (the registry
** remembers it; luaopen_torch installs it), or switch a state whose module
** is open and which has made no tensor yet. 0, or -1 with the reason in the
** error slot. */
int lt_vm_set_torch7(lua_State *L);
/* luaopen_torch: with the module at the top, install Torch7 mode when the
** state asked for it or LUTORCH_COMPAT=torch7 */
void lt_vm_t7_open(lua_State *L);

/* ---- helpers of the generated binding ---- */
/* the values at stack 1..n are tensors and something follows them */
int lt_vm_t7_restensors(lua_State *L, int n);
/* copy a parse made with a form's spec into the op's argument order */
void lt_vm_t7_permute(lt_args *from, lt_args *to, const int *perm, int n);
/* r was written into the tensor at stack 1 (out=): push that value */
int lt_vm_t7_pushres(lua_State *L, lt_tensor *r, lt_args *a);
/* copy rs[0..n-1] into the tensors at stack 1..n (resizing them), push them */
int lt_vm_t7_into(lua_State *L, lt_tensor **rs, int n, lt_args *a);
/* a one-element result as a Lua number (boolean for bool) */
int lt_vm_t7_number(lua_State *L, lt_tensor *r, lt_args *a);
/* r converted to dt (r released); NULL passes through */
lt_tensor *lt_vm_t7_cast(lt_tensor *r, int dt);
/* other viewed in self's shape when they differ in shape, not in numel, and
** do not broadcast (Torch7's cmul of a 10x10 and a 100) */
int lt_vm_t7_numel(lt_argval *self, lt_argval *other);
/* a uint8 mask argument as bool (owned by the parse) */
int lt_vm_t7_mask(lt_argval *v);

#endif
