/*
** fake_cuda.c — `require "fake_cuda"` from a Lua test run by the lutorch
** program: registers the fake "cuda" backend of fake_backend.h and returns a
** table whose counters() reports its byte copies and allocations. The lutorch
** program exports the library's symbols (-Wl,-E), so this module links
** against nothing.
*/
#include <lua.h>
#include <lauxlib.h>
#include "fake_backend.h"

static int l_counters(lua_State *L) {
  lua_createtable(L, 0, 6);
  lua_pushinteger(L, atomic_load(&fake_count.to_host)); lua_setfield(L, -2, "to_host");
  lua_pushinteger(L, atomic_load(&fake_count.to_host_bytes)); lua_setfield(L, -2, "to_host_bytes");
  lua_pushinteger(L, atomic_load(&fake_count.from_host)); lua_setfield(L, -2, "from_host");
  lua_pushinteger(L, atomic_load(&fake_count.allocated)); lua_setfield(L, -2, "allocated");
  lua_pushinteger(L, atomic_load(&fake_count.num_allocs)); lua_setfield(L, -2, "num_allocs");
  return 1;
}

int luaopen_fake_cuda(lua_State *L) {
  if (fake_backend_install() < 0) return luaL_error(L, "fake_cuda: %s", lt_error_message());
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, l_counters);
  lua_setfield(L, -2, "counters");
  return 1;
}
