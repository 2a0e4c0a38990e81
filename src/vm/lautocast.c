/*
** lautocast.c — the binding's half of torch.autocast: the thread's autocast
** state per device type (src/amp/autocast.h) as torch functions, and the
** policy lists for the functionals written in Lua. The region's guard and
** function forms, and the checks of their options, are Lua (lua/autocast.lua).
*/
#include <string.h>
#include "lutorch_vm.h"
#include "ltensor.h"
#include "amp/autocast.h"
#include "dispatch/dispatch.h"

/* "cpu" or "cuda" (a torch.device or its name, an index ignored), else an error naming fname */
static int check_device_type(lua_State *L, int idx, const char *fname) {
  lt_device d;
  if (lua_isstring(L, idx) || lua_isuserdata(L, idx)) {
    if (lt_vm_todevice(L, idx, &d) == 0) {
      if (d.type == LT_DEV_CPU) return LT_AC_DEV_CPU;
      if (d.type == LT_DEV_CUDA) return LT_AC_DEV_CUDA;
    }
  }
  return luaL_error(L, "%s: argument 'device_type' must be \"cpu\" or \"cuda\" (got %s)", fname,
                    lua_isstring(L, idx) ? lua_tostring(L, idx) : luaL_typename(L, idx));
}

/* torch.is_autocast_enabled([device_type="cpu"]) */
static int l_is_enabled(lua_State *L) {
  int dev = lua_isnoneornil(L, 1) ? LT_AC_DEV_CPU : check_device_type(L, 1, "is_autocast_enabled");
  lua_pushboolean(L, lt_autocast_enabled(dev));
  return 1;
}

/* torch.set_autocast_enabled(device_type, enabled) */
static int l_set_enabled(lua_State *L) {
  int dev = check_device_type(L, 1, "set_autocast_enabled");
  luaL_argexpected(L, lua_isboolean(L, 2), 2, "boolean (set_autocast_enabled: argument 'enabled')");
  lt_autocast_set_enabled(dev, lua_toboolean(L, 2));
  return 0;
}

/* torch.get_autocast_dtype([device_type="cpu"]) */
static int l_get_dtype(lua_State *L) {
  int dev = lua_isnoneornil(L, 1) ? LT_AC_DEV_CPU : check_device_type(L, 1, "get_autocast_dtype");
  lt_vm_push_dtype(L, lt_autocast_dtype(dev));
  return 1;
}

/* torch.set_autocast_dtype(device_type, dtype): float16 or bfloat16 */
static int l_set_dtype(lua_State *L) {
  int dev = check_device_type(L, 1, "set_autocast_dtype");
  int dt = lt_vm_todtype(L, 2);
  if (dt != LT_FLOAT16 && dt != LT_BFLOAT16)
    return luaL_error(L, "set_autocast_dtype: argument 'dtype' must be torch.bfloat16 or torch.float16 (got %s)",
                      dt >= 0 ? lt_dtype_name((lt_dtype)dt) : luaL_tolstring(L, 2, NULL));
  lt_autocast_set_dtype(dev, (lt_dtype)dt);
  return 0;
}

static int l_is_cache_enabled(lua_State *L) { lua_pushboolean(L, lt_autocast_cache_enabled()); return 1; }
static int l_set_cache_enabled(lua_State *L) {
  luaL_argexpected(L, lua_isboolean(L, 1), 1, "boolean (set_autocast_cache_enabled: argument 'enabled')");
  lt_autocast_set_cache_enabled(lua_toboolean(L, 1));
  return 0;
}
static int l_clear_cache(lua_State *L) { (void)L; lt_autocast_clear_cache(); return 0; }
static int l_enter(lua_State *L) { lua_pushinteger(L, lt_autocast_enter()); return 1; }
static int l_exit(lua_State *L) { lua_pushinteger(L, lt_autocast_exit()); return 1; }
static int l_cache_size(lua_State *L) { lua_pushinteger(L, lt_autocast_cache_size()); return 1; }

static const char *policy_name(int p) {
  switch (p) {
    case LT_AC_LOWER: return "lower";
    case LT_AC_FP32: return "fp32";
    case LT_AC_FP32_OPT_DTYPE: return "fp32_dtype";
    case LT_AC_PROMOTE: return "promote";
    case LT_AC_BANNED: return "banned";
    case LT_AC_KEEP: return "keep";
    default: return NULL;
  }
}

/* torch._autocast.lists(): { cpu = { [op name] = policy }, cuda = {...},
** functional = { cpu = {...}, cuda = {...} } } from src/ops/autocast.lua, by
** the ops' C names (conv2d_padstr, fft_rfft), as man/amp.md lists them. */
static int l_lists(lua_State *L) {
  lua_createtable(L, 0, 3);
  lua_createtable(L, 0, 2);   /* functional */
  static const char *const devs[] = { "cpu", "cuda" };
  for (int d = 0; d < 2; d++) {
    lua_createtable(L, 0, 64);
    lua_createtable(L, 0, 16);
    for (const lt_autocast_entry *e = lt_autocast_ops; e->name; e++) {
      const char *p = policy_name(d == 0 ? e->cpu : e->cuda);
      if (!p) continue;
      lua_pushstring(L, p);
      lua_setfield(L, e->functional ? -2 : -3, e->name);
    }
    lua_setfield(L, -3, devs[d]);    /* functional[dev] */
    lua_setfield(L, -3, devs[d]);    /* lists[dev] */
  }
  lua_setfield(L, -2, "functional");
  return 1;
}

static const luaL_Reg autocast_functions[] = {
  {"is_autocast_enabled", l_is_enabled},
  {"set_autocast_enabled", l_set_enabled},
  {"get_autocast_dtype", l_get_dtype},
  {"set_autocast_dtype", l_set_dtype},
  {"is_autocast_cache_enabled", l_is_cache_enabled},
  {"set_autocast_cache_enabled", l_set_cache_enabled},
  {"clear_autocast_cache", l_clear_cache},
  {NULL, NULL}
};

static const luaL_Reg autocast_private[] = {
  {"enter", l_enter}, {"exit", l_exit}, {"cache_size", l_cache_size}, {"lists", l_lists},
  {NULL, NULL}
};

void lt_vm_open_autocast(lua_State *L) {
  luaL_setfuncs(L, autocast_functions, 0);
  lua_createtable(L, 0, 4);
  luaL_setfuncs(L, autocast_private, 0);
  lua_setfield(L, -2, "_autocast");
}
