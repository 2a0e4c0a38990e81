/*
** lbackends.c — torch.backends.cpu: what the CPU backend picked for this
** machine (man/tensor.md, "16-bit floats"). The 16-bit float conversions are
** chosen once at start-up (cpu/cvt.h); _set_half_path lets the tests run
** each path this CPU has against the others.
*/
#include "lutorch_vm.h"
#include "core/error.h"
#include "cpu/cvt.h"

/* PyTorch's name: the widest vector ISA the kernels use here */
static int l_capability(lua_State *L) {
  __builtin_cpu_init();
  lua_pushstring(L, __builtin_cpu_supports("avx512f") ? "AVX512" : __builtin_cpu_supports("avx2") ? "AVX2" : "DEFAULT");
  return 1;
}

/* { convert = path, gemm = how 16-bit matrix products run, avx512_bf16 = bool } */
static int l_half_paths(lua_State *L) {
  lua_createtable(L, 0, 3);
  lua_pushstring(L, lt_cvt_path());
  lua_setfield(L, -2, "convert");
  lua_pushstring(L, "float32 sgemm (operands converted by the convert path)");
  lua_setfield(L, -2, "gemm");
  lua_pushboolean(L, lt_cvt_cpu_has_bf16());
  lua_setfield(L, -2, "avx512_bf16");
  return 1;
}

static int l_set_half_path(lua_State *L) {
  const char *p = luaL_checkstring(L, 1);
  if (lt_cvt_select(p) < 0) return luaL_error(L, "torch.backends.cpu._set_half_path: %s", lt_error_message());
  return 0;
}

static const luaL_Reg cpu_fns[] = {
  {"get_cpu_capability", l_capability}, {"half_paths", l_half_paths}, {"_set_half_path", l_set_half_path},
  {NULL, NULL}
};

void lt_vm_open_backends(lua_State *L) {
  if (lua_getfield(L, -1, "backends") != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "backends");
  }
  lua_newtable(L);
  luaL_setfuncs(L, cpu_fns, 0);
  lua_setfield(L, -2, "cpu");
  lua_pop(L, 1);
}
