/*
** lutorch_vm.h — how the binding files plug into the torch module.
** Each binding file exports `void lt_vm_open_NAME(lua_State *L)`, called with
** the module table on top of the stack; list it in LT_VM_OPENERS.
*/
#ifndef LT_LUTORCH_VM_H
#define LT_LUTORCH_VM_H

#include <lua.h>
#include <lauxlib.h>

typedef void (*lt_vm_open_fn)(lua_State *L);

#define LT_VM_OPENERS_LIST(_) \
  _(complex) _(index) _(print) _(creation) _(rng) _(autograd) _(data) _(serial) _(dcp) _(interchange) _(torch7) _(t7file) _(profiler) _(library) _(meta) _(autocast) \
  _(backends) _(compile) _(image)

#define LT_VM_DECLARE_OPENER(n) void lt_vm_open_##n(lua_State *L);
LT_VM_OPENERS_LIST(LT_VM_DECLARE_OPENER)
#define LT_VM_OPENER_ENTRY(n) lt_vm_open_##n,
#define LT_VM_OPENERS LT_VM_OPENERS_LIST(LT_VM_OPENER_ENTRY)

int luaopen_torch(lua_State *L);
/* the version string (vm/lembed.c): LUTORCH_VERSION of include/lutorch.h, its one definition */
const char *lutorch_version(void);

#endif
