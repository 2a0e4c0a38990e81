/*
** lbackends.c — torch.backends.cpu: what the CPU backend picked for this
** machine (man/tensor.md, "16-bit floats"). The 16-bit float conversions are
** chosen once at start-up (cpu/cvt.h); _set_half_path lets the tests run
** each path this CPU has against the others. get_cpu_capability names the
** build of the CPU kernels chosen at start-up (cpu/capability.h). gemm_library
** names the library of float32 matrix products (cpu/gemm_lib.h).
*/
#include "lutorch_vm.h"
#include "core/error.h"
#include "cpu/capability.h"
#include "cpu/cvt.h"
#include "cpu/gemm_lib.h"

static void push_upper(lua_State *L, const char *s) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (; *s; s++) luaL_addchar(&b, (char)(*s >= 'a' && *s <= 'z' ? *s - 32 : *s));
  luaL_pushresult(&b);
}

/* PyTorch's name ("DEFAULT", "AVX2", "AVX512"): the build of the kernels in use */
static int l_capability(lua_State *L) {
  push_upper(L, lt_capability_name(lt_capability_level()));
  return 1;
}

/* the builds this program has and this CPU runs, lowest first, as
** $LUTORCH_CPU_CAPABILITY spells them (the tests run each) */
static int l_capabilities(lua_State *L) {
  lua_newtable(L);
  int n = 0;
  for (int l = 0; l < LT_CAP_NLEVELS; l++)
    if (lt_capability_runnable((lt_cap_level)l)) {
      lua_pushstring(L, lt_capability_name((lt_cap_level)l));
      lua_rawseti(L, -2, ++n);
    }
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

/* "onednn" or "openblas": the library of float32 matrix products; and why not oneDNN */
static int l_gemm_library(lua_State *L) {
  lua_pushstring(L, lt_gemm_lib_name());
  const char *why = lt_gemm_lib_why();
  if (why) lua_pushstring(L, why);
  else lua_pushnil(L);
  return 2;
}

static int l_set_gemm_library(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  if (lt_gemm_lib_select(name) < 0) return luaL_error(L, "torch.backends.cpu.%s", lt_error_message());
  return 0;
}

static const luaL_Reg cpu_fns[] = {
  {"gemm_library", l_gemm_library}, {"set_gemm_library", l_set_gemm_library},
  {"get_cpu_capability", l_capability}, {"_capabilities", l_capabilities}, {"half_paths", l_half_paths}, {"_set_half_path", l_set_half_path},
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
