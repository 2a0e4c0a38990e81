/*
** lmeta.c — the binding's half of the meta device: the default device of
** factory functions (torch.set_default_device, torch.get_default_device),
** which the argument parser reads (lt_vm_default_device, largs.h), so that
** nn.Linear(4096, 4096) built under torch.set_default_device("meta")
** allocates nothing. The guard and function forms are Lua (lua/meta.lua).
*/
#include "lutorch_vm.h"
#include "ltensor.h"
#include "largs.h"
#include "core/backend.h"

/* torch.set_default_device(device): nil or "cpu" restores the default */
static int l_set_default_device(lua_State *L) {
  if (lua_isnoneornil(L, 1)) { lt_vm_default_device.type = -1; lt_vm_default_device.index = 0; return 0; }
  lt_device d;
  if (lt_vm_todevice(L, 1, &d) < 0) return luaL_error(L, "set_default_device: argument 'device': %s", lt_error_message());
  if (lt_vm_device_usable(d) < 0) return luaL_error(L, "set_default_device: argument 'device': %s", lt_error_message());
  if (d.type == LT_DEV_CPU) d.type = -1;
  lt_vm_default_device = d;
  return 0;
}

/* torch.get_default_device(): the device factories use now */
static int l_get_default_device(lua_State *L) {
  lt_vm_push_device(L, lt_vm_default_device.type >= 0 ? lt_vm_default_device : lt_device_cpu());
  return 1;
}

static const luaL_Reg meta_functions[] = {
  {"set_default_device", l_set_default_device},
  {"get_default_device", l_get_default_device},
  {NULL, NULL}
};

void lt_vm_open_meta(lua_State *L) {
  luaL_setfuncs(L, meta_functions, 0);
}
