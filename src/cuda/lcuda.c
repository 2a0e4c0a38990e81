/*
** lcuda.c — the module's Lua face: luaopen_lutorch_cuda opens the backend
** (registering it, when a driver is found) and returns a table that says
** whether CUDA is available, why not, and the functions of torch.cuda that
** need the driver itself (device names and properties, the allocator's full
** statistics). torch.cuda (src/vm/ltorch.c) loads the module lazily and
** looks these up in it; the module is the one file of src/cuda that knows
** Lua, as src/dist/ldist.c is for the distributed module.
*/
#include <stddef.h>
#include <stdio.h>
#include <lua.h>
#include <lauxlib.h>
#include "core/error.h"
#include "cuda/alloc.h"
#include "cuda/cuda.h"

int luaopen_lutorch_cuda(lua_State *L);

static int device_arg(lua_State *L, int idx, const char *op) {
  const char *why = NULL;
  if (lt_cuda_backend_open(&why) < 0) return luaL_error(L, "%s: CUDA is not available: %s", op, why);
  int dev = 0;
  if (lua_isinteger(L, idx)) dev = (int)lua_tointeger(L, idx);
  else if (lua_type(L, idx) == LUA_TSTRING || lua_istable(L, idx)) {
    const char *s = NULL;
    if (lua_istable(L, idx)) {
      lua_getfield(L, idx, "_str");
      s = lua_tostring(L, -1);
      lua_pop(L, 1);
    } else {
      s = lua_tostring(L, idx);
    }
    lt_device d;
    if (!s || lt_device_parse(s, &d) < 0 || d.type != LT_DEV_CUDA)
      return luaL_error(L, "%s: argument 'device': expected a cuda device, got %s", op, s ? s : luaL_typename(L, idx));
    dev = d.index;
  } else if (!lua_isnoneornil(L, idx)) {
    return luaL_error(L, "%s: argument 'device': expected a cuda device, got %s", op, luaL_typename(L, idx));
  }
  int n = lt_cuda_device_count();
  if (dev < 0 || dev >= n)
    return luaL_error(L, "%s: argument 'device': device cuda:%d does not exist (%d device%s)", op, dev, n,
                      n == 1 ? "" : "s");
  return dev;
}

static void check(lua_State *L, lt_cu_result r, const char *op, const char *what, int dev) {
  if (r != LT_CU_SUCCESS) luaL_error(L, "%s: cuda:%d: %s failed: %s", op, dev, what, lt_cu_result_name(r));
}

static int l_get_device_name(lua_State *L) {
  static const char op[] = "torch.cuda.get_device_name";
  int dev = device_arg(L, 1, op);
  char name[256] = {0};
  check(L, lt_cuda_driver()->device_name(name, (int)sizeof name - 1, dev), op, "device_name", dev);
  lua_pushstring(L, name);
  return 1;
}

static int attribute(lua_State *L, int attr, int dev, const char *op) {
  int v = 0;
  check(L, lt_cuda_driver()->device_attribute(&v, attr, dev), op, "device_attribute", dev);
  return v;
}

/* PyTorch's _CudaDeviceProperties fields that the driver answers */
static int l_get_device_properties(lua_State *L) {
  static const char op[] = "torch.cuda.get_device_properties";
  int dev = device_arg(L, 1, op);
  const lt_cu_driver *drv = lt_cuda_driver();
  char name[256] = {0};
  size_t total = 0;
  check(L, drv->device_name(name, (int)sizeof name - 1, dev), op, "device_name", dev);
  check(L, drv->device_total_mem(&total, dev), op, "device_total_mem", dev);
  lua_createtable(L, 0, 6);
  lua_pushstring(L, name); lua_setfield(L, -2, "name");
  lua_pushinteger(L, (lua_Integer)total); lua_setfield(L, -2, "total_memory");
  lua_pushinteger(L, attribute(L, LT_CU_ATTR_COMPUTE_CAPABILITY_MAJOR, dev, op)); lua_setfield(L, -2, "major");
  lua_pushinteger(L, attribute(L, LT_CU_ATTR_COMPUTE_CAPABILITY_MINOR, dev, op)); lua_setfield(L, -2, "minor");
  lua_pushinteger(L, attribute(L, LT_CU_ATTR_MULTIPROCESSOR_COUNT, dev, op));
  lua_setfield(L, -2, "multi_processor_count");
  lua_pushinteger(L, attribute(L, LT_CU_ATTR_MAX_THREADS_PER_BLOCK, dev, op));
  lua_setfield(L, -2, "max_threads_per_block");
  return 1;
}

static int l_get_device_capability(lua_State *L) {
  static const char op[] = "torch.cuda.get_device_capability";
  int dev = device_arg(L, 1, op);
  lua_pushinteger(L, attribute(L, LT_CU_ATTR_COMPUTE_CAPABILITY_MAJOR, dev, op));
  lua_pushinteger(L, attribute(L, LT_CU_ATTR_COMPUTE_CAPABILITY_MINOR, dev, op));
  return 2;
}

/* torch.cuda.mem_get_info(device): free and total bytes of the device */
static int l_mem_get_info(lua_State *L) {
  static const char op[] = "torch.cuda.mem_get_info";
  int dev = device_arg(L, 1, op);
  lt_cuda_guard g;
  if (lt_cuda_enter(dev, &g, op) < 0) return luaL_error(L, "%s", lt_error_message());
  size_t fr = 0, total = 0;
  lt_cu_result r = lt_cuda_driver()->mem_get_info(&fr, &total);
  lt_cuda_leave(&g);
  check(L, r, op, "mem_get_info", dev);
  lua_pushinteger(L, (lua_Integer)fr);
  lua_pushinteger(L, (lua_Integer)total);
  return 2;
}

static void set_stat(lua_State *L, const char *name, const lt_cuda_stat *st) {
  static const char *const pools[LT_CUDA_POOL_KINDS] = {"all", "small_pool", "large_pool"};
  static const char *const fields[4] = {"current", "peak", "allocated", "freed"};
  char key[96];
  for (int p = 0; p < LT_CUDA_POOL_KINDS; p++) {
    const int64_t v[4] = {st[p].current, st[p].peak, st[p].allocated, st[p].freed};
    for (int f = 0; f < 4; f++) {
      snprintf(key, sizeof key, "%s.%s.%s", name, pools[p], fields[f]);
      lua_pushinteger(L, v[f]);
      lua_setfield(L, -2, key);
    }
  }
}

/* torch.cuda.memory_stats(device): PyTorch's flat table ("allocated_bytes.all.current", ...) */
static int l_memory_stats(lua_State *L) {
  static const char op[] = "torch.cuda.memory_stats";
  int dev = device_arg(L, 1, op);
  lt_cuda_alloc *a = lt_cuda_caching_allocator(dev);
  if (!a) return luaL_error(L, "%s: %s", op, lt_error_message());
  lt_cuda_memory_stats s;
  lt_cuda_alloc_stats(a, &s);
  lua_createtable(L, 0, 120);
  set_stat(L, "allocation", s.allocation);
  set_stat(L, "segment", s.segment);
  set_stat(L, "active", s.active);
  set_stat(L, "inactive_split", s.inactive_split);
  set_stat(L, "allocated_bytes", s.allocated_bytes);
  set_stat(L, "reserved_bytes", s.reserved_bytes);
  set_stat(L, "active_bytes", s.active_bytes);
  set_stat(L, "inactive_split_bytes", s.inactive_split_bytes);
  set_stat(L, "requested_bytes", s.requested_bytes);
  static const struct { const char *name; size_t off; } counters[] = {
    {"num_alloc_retries", offsetof(lt_cuda_memory_stats, num_alloc_retries)},
    {"num_ooms", offsetof(lt_cuda_memory_stats, num_ooms)},
    {"num_sync_all_streams", offsetof(lt_cuda_memory_stats, num_sync_all_streams)},
    {"num_device_alloc", offsetof(lt_cuda_memory_stats, num_device_alloc)},
    {"num_device_free", offsetof(lt_cuda_memory_stats, num_device_free)},
    {"num_allocs", offsetof(lt_cuda_memory_stats, num_allocs)},
    {"cache_hits", offsetof(lt_cuda_memory_stats, cache_hits)},
    {"allowed_bytes", offsetof(lt_cuda_memory_stats, allowed_bytes)},
  };
  for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++) {
    lua_pushinteger(L, *(const int64_t *)((const char *)&s + counters[i].off));
    lua_setfield(L, -2, counters[i].name);
  }
  return 1;
}

/* torch.cuda.set_per_process_memory_fraction(fraction, device) */
static int l_set_memory_fraction(lua_State *L) {
  static const char op[] = "torch.cuda.set_per_process_memory_fraction";
  double f = luaL_checknumber(L, 1);
  int dev = device_arg(L, 2, op);
  lt_cuda_alloc *a = lt_cuda_caching_allocator(dev);
  if (!a || lt_cuda_alloc_set_memory_fraction(a, f) < 0) return luaL_error(L, "%s: %s", op, lt_error_message());
  return 0;
}

static const luaL_Reg functions[] = {
  {"get_device_name", l_get_device_name}, {"get_device_properties", l_get_device_properties},
  {"get_device_capability", l_get_device_capability}, {"mem_get_info", l_mem_get_info},
  {"memory_stats", l_memory_stats}, {"set_per_process_memory_fraction", l_set_memory_fraction},
  {NULL, NULL}
};

int luaopen_lutorch_cuda(lua_State *L) {
  const char *why = NULL;
  bool ok = lt_cuda_backend_open(&why) == 0;
  lua_createtable(L, 0, 16);
  luaL_setfuncs(L, functions, 0);
  lua_pushboolean(L, ok); lua_setfield(L, -2, "available");
  if (ok) {
    lua_pushstring(L, lt_cuda_driver()->name); lua_setfield(L, -2, "driver");
    lua_pushinteger(L, lt_cuda_device_count()); lua_setfield(L, -2, "device_count");
  } else {
    lua_pushstring(L, why); lua_setfield(L, -2, "reason");
  }
  return 1;
}
