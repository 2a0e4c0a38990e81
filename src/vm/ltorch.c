/*
** ltorch.c — luaopen_torch: the `torch` module. Registers the generated op
** bindings, the hand-written module functions of each binding file, and runs
** the Lua parts of the module embedded at build time (src/vm/lua/).
*/
#include <string.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <limits.h>
#include <unistd.h>
#include "lutorch_vm.h"
#include "ltensor.h"
#include "largs.h"
#include "lt_ops.h"
#include "cpu/parallel.h"
#include "core/backend.h"
#include "lt7.h"

/* embedded Lua sources (build/gen/embedded.c) */
typedef struct lt_embedded { const char *name; const char *src; size_t len; } lt_embedded;
extern const lt_embedded lt_embedded_lua[];

static int l_set_default_dtype(lua_State *L) {
  int dt = lt_vm_todtype(L, 1);
  if (dt < 0) return luaL_error(L, "set_default_dtype: argument 'd' must be a dtype");
  if (lt_set_default_dtype((lt_dtype)dt) < 0) return lt_vm_raise(L, "set_default_dtype");
  return 0;
}

static int l_get_default_dtype(lua_State *L) {
  lt_vm_push_dtype(L, lt_get_default_dtype());
  return 1;
}

static int l_is_tensor(lua_State *L) {
  lua_pushboolean(L, lt_vm_toud(L, 1) != NULL);
  return 1;
}

static int l_promote_types(lua_State *L) {
  int a = lt_vm_todtype(L, 1), b = lt_vm_todtype(L, 2);
  if (a < 0 || b < 0) return luaL_error(L, "promote_types: arguments must be dtypes");
  lt_vm_push_dtype(L, lt_promote_types((lt_dtype)a, (lt_dtype)b));
  return 1;
}

static int l_set_num_threads(lua_State *L) {
  lua_Integer n = luaL_checkinteger(L, 1);
  if (n < 1) return luaL_error(L, "set_num_threads: argument 'n' must be at least 1");
  lt_set_num_threads((int)n);
  return 0;
}

static int l_get_num_threads(lua_State *L) {
  lua_pushinteger(L, lt_get_num_threads());
  return 1;
}

/* the backend of the device at idx (default cpu); raises "no CUDA device is present" */
static const lt_backend *arg_backend(lua_State *L, int idx, const char *op, lt_device *dev) {
  *dev = lt_device_cpu();
  if (!lua_isnoneornil(L, idx) && lt_vm_todevice(L, idx, dev) < 0) {
    luaL_error(L, "%s: argument 'device': %s", op, lt_error_message());
    return NULL;
  }
  if (lt_vm_device_usable(*dev) < 0) luaL_error(L, "%s: argument 'device': %s", op, lt_error_message());
  return lt_backend_of(*dev);
}

/* torch.memory_stats([device]) (torch.cpu_memory_stats() for the cpu) */
static int l_memory_stats(lua_State *L) {
  lt_device d;
  const lt_backend *b = arg_backend(L, 1, "memory_stats", &d);
  lt_memory_stats s = {0};
  if (b->memory_stats) b->memory_stats(d.index, &s);
  lua_createtable(L, 0, 5);
  lua_pushinteger(L, s.allocated); lua_setfield(L, -2, "allocated");
  lua_pushinteger(L, s.cached); lua_setfield(L, -2, "cached");
  lua_pushinteger(L, s.peak); lua_setfield(L, -2, "peak");
  lua_pushinteger(L, s.num_allocs); lua_setfield(L, -2, "num_allocs");
  lua_pushinteger(L, s.cache_hits); lua_setfield(L, -2, "cache_hits");
  return 1;
}

/* torch.empty_cache([device]) (torch.cpu_empty_cache() for the cpu) */
static int l_empty_cache(lua_State *L) {
  lt_device d;
  const lt_backend *b = arg_backend(L, 1, "empty_cache", &d);
  if (b->empty_cache) b->empty_cache();
  return 0;
}

/* torch.synchronize([device]): wait for the device's queued work */
static int l_synchronize(lua_State *L) {
  lt_device d;
  const lt_backend *b = arg_backend(L, 1, "synchronize", &d);
  if (b->synchronize && b->synchronize(d.index) < 0) return lt_vm_raise(L, "synchronize");
  return 0;
}

/* torch._device_count(type): devices of a backend, 0 when it is not loaded */
static int l_device_count(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  int type = strcmp(name, "cpu") == 0 ? LT_DEV_CPU : strcmp(name, "cuda") == 0 ? LT_DEV_CUDA : -1;
  if (type < 0) return luaL_error(L, "device_count: unknown device type '%s'", name);
  const lt_backend *b = lt_backend_get(type);
  lua_pushinteger(L, b ? b->device_count() : 0);
  return 1;
}

/* ---- torch.cuda: PyTorch's device functions over the backend registry. They
** exist in every build. The first call that needs CUDA loads the backend
** module, lutorch_cuda.so (lbackend_load.c); where that finds no driver,
** is_available() is false, unavailable_reason() says why, the memory figures
** are 0 and seeding is ignored (as in PyTorch), and what needs a device
** (current_device, synchronize, init) raises with the reason. What needs the
** driver itself (get_device_name, get_device_properties, the allocator's full
** statistics) lives in the module's table (src/cuda/lcuda.c), which
** torch.cuda's __index looks in. ---- */

static const lt_backend *cuda_backend(void) {
  const lt_backend *b = lt_backend_get(LT_DEV_CUDA);
  if (!b && lt_vm_backend_load(LT_DEV_CUDA) == 0) b = lt_backend_get(LT_DEV_CUDA);
  return b;
}

static int cuda_count(void) {
  const lt_backend *b = cuda_backend();
  return b ? b->device_count() : 0;
}

/* the module's Lua table (luaopen_lutorch_cuda), kept in the registry; nil
** when the module was not loaded (a backend registered otherwise, as the
** tests' fake is, has none) */
static int push_cuda_module(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, "lutorch.cuda_module") != LUA_TNIL) return 1;
  lua_pop(L, 1);
  lua_CFunction open = (lua_CFunction)lt_vm_backend_symbol(LT_DEV_CUDA, "luaopen_lutorch_cuda");
  if (!open) { lua_pushnil(L); return 1; }
  lua_pushcfunction(L, open);
  lua_call(L, 0, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, "lutorch.cuda_module");
  return 1;
}

/* pushes the module's table and says true when the registered backend is the
** module's (not a test's) */
static bool cuda_module_serves(lua_State *L) {
  push_cuda_module(L);
  if (!lua_istable(L, -1)) return false;
  bool ok = lua_getfield(L, -1, "available") == LUA_TBOOLEAN && lua_toboolean(L, -1);
  lua_pop(L, 1);
  return ok;
}

/* torch.cuda.X for an X torch.cuda does not define itself: the module's */
static int cuda_index(lua_State *L) {
  push_cuda_module(L);
  if (!lua_istable(L, -1)) return 0;
  lua_pushvalue(L, 2);
  lua_rawget(L, -2);
  return lua_isfunction(L, -1) ? 1 : 0;
}

/* why CUDA is not available (nil when it is) */
static int cuda_unavailable_reason(lua_State *L) {
  const char *why = cuda_backend() ? NULL : lt_vm_backend_unavailable(LT_DEV_CUDA);
  if (why) lua_pushstring(L, why);
  else lua_pushnil(L);
  return 1;
}

/* torch.cuda.init(): PyTorch's explicit initialisation, which raises the reason */
static int cuda_init(lua_State *L) {
  if (cuda_count() > 0) return 0;
  return luaL_error(L, "torch.cuda.init: CUDA is not available: %s", lt_vm_backend_unavailable(LT_DEV_CUDA));
}

static int cuda_is_initialized(lua_State *L) {
  lua_pushboolean(L, lt_backend_get(LT_DEV_CUDA) != NULL);
  return 1;
}

/* the cuda device an optional argument names: nil (the current device), an
** index, "cuda:1" or a device object; NULL when no CUDA device is present */
static const lt_backend *cuda_arg(lua_State *L, int idx, const char *op, lt_device *d) {
  d->type = LT_DEV_CUDA;
  d->index = (int8_t)lt_device_current(LT_DEV_CUDA);
  if (lua_isinteger(L, idx)) {
    lua_Integer i = lua_tointeger(L, idx);
    if (i < 0 || i > 127) luaL_error(L, "%s: argument 'device': device index must be in 0..127, got %d", op, (int)i);
    d->index = (int8_t)i;
  } else if (!lua_isnoneornil(L, idx)) {
    if (lt_vm_todevice(L, idx, d) < 0) luaL_error(L, "%s: argument 'device': %s", op, lt_error_message());
    if (d->type != LT_DEV_CUDA) {
      char buf[32];
      lt_device_format(*d, buf, sizeof buf);
      luaL_error(L, "%s: argument 'device': expected a cuda device, got %s", op, buf);
    }
  }
  if (!cuda_backend()) return NULL;
  if (lt_vm_device_usable(*d) < 0) luaL_error(L, "%s: argument 'device': %s", op, lt_error_message());
  return lt_backend_of(*d);
}

/* the same, raising when no CUDA device is present */
static const lt_backend *cuda_need(lua_State *L, int idx, const char *op, lt_device *d) {
  const lt_backend *b = cuda_arg(L, idx, op, d);
  if (!b && lt_vm_device_usable(*d) < 0) luaL_error(L, "%s: %s", op, lt_error_message());
  return b;
}

static int cuda_is_available(lua_State *L) { lua_pushboolean(L, cuda_count() > 0); return 1; }
static int cuda_device_count(lua_State *L) { lua_pushinteger(L, cuda_count()); return 1; }

/* the current device (per thread, core/tensor.h): what "cuda" means */
static int cuda_current_device(lua_State *L) {
  lt_device d;
  cuda_need(L, lua_gettop(L) + 1, "torch.cuda.current_device", &d);
  lua_pushinteger(L, lt_device_current(LT_DEV_CUDA));
  return 1;
}

static int cuda_synchronize(lua_State *L) {
  lt_device d;
  const lt_backend *b = cuda_need(L, 1, "torch.cuda.synchronize", &d);
  if (b->synchronize && b->synchronize(d.index) < 0) return lt_vm_raise(L, "torch.cuda.synchronize");
  return 0;
}

static int cuda_empty_cache(lua_State *L) {
  lt_device d;
  const lt_backend *b = cuda_arg(L, 1, "torch.cuda.empty_cache", &d);
  if (b && b->empty_cache) b->empty_cache();
  return 0;
}

static lt_memory_stats cuda_stats(lua_State *L, const char *op, bool *have) {
  lt_device d;
  lt_memory_stats s = {0};
  const lt_backend *b = cuda_arg(L, 1, op, &d);
  if (b && b->memory_stats) b->memory_stats(d.index, &s);
  *have = b != NULL;
  return s;
}

static int cuda_memory_allocated(lua_State *L) {
  bool have;
  lua_pushinteger(L, cuda_stats(L, "torch.cuda.memory_allocated", &have).allocated);
  return 1;
}

static int cuda_max_memory_allocated(lua_State *L) {
  bool have;
  lua_pushinteger(L, cuda_stats(L, "torch.cuda.max_memory_allocated", &have).peak);
  return 1;
}

/* reserved: what the caching allocator holds, handed out or cached */
static int cuda_memory_reserved(lua_State *L) {
  bool have;
  lt_memory_stats s = cuda_stats(L, "torch.cuda.memory_reserved", &have);
  lua_pushinteger(L, s.allocated + s.cached);
  return 1;
}

/* torch.memory_stats's fields, and the PyTorch names of the same figures */
static int cuda_memory_stats(lua_State *L) {
  bool have;
  lt_memory_stats s = cuda_stats(L, "torch.cuda.memory_stats", &have);
  /* the caching allocator's full table, PyTorch's keys, with the summary's five fields added */
  int top = lua_gettop(L);
  if (have && cuda_module_serves(L) && lua_getfield(L, -1, "memory_stats") == LUA_TFUNCTION) {
    if (top >= 1) lua_pushvalue(L, 1);
    else lua_pushnil(L);
    lua_call(L, 1, 1);
  } else {
    lua_settop(L, top);
    lua_createtable(L, 0, 8);
  }
  if (!have) return 1;
  lua_pushinteger(L, s.allocated); lua_setfield(L, -2, "allocated");
  lua_pushinteger(L, s.cached); lua_setfield(L, -2, "cached");
  lua_pushinteger(L, s.peak); lua_setfield(L, -2, "peak");
  lua_pushinteger(L, s.num_allocs); lua_setfield(L, -2, "num_allocs");
  lua_pushinteger(L, s.cache_hits); lua_setfield(L, -2, "cache_hits");
  lua_pushinteger(L, s.allocated); lua_setfield(L, -2, "allocated_bytes.all.current");
  lua_pushinteger(L, s.peak); lua_setfield(L, -2, "allocated_bytes.all.peak");
  lua_pushinteger(L, s.allocated + s.cached); lua_setfield(L, -2, "reserved_bytes.all.current");
  return 1;
}

static int cuda_reset_peak_memory_stats(lua_State *L) {
  lt_device d;
  const lt_backend *b = cuda_arg(L, 1, "torch.cuda.reset_peak_memory_stats", &d);
  if (b && b->reset_peak) b->reset_peak(d.index);
  return 0;
}

/* torch.cuda.set_device(device): the current device of this thread */
static int cuda_set_device(lua_State *L) {
  lt_device d;
  luaL_checkany(L, 1);
  cuda_need(L, 1, "torch.cuda.set_device", &d);
  lt_device_set_current(LT_DEV_CUDA, d.index);
  return 0;
}

static const luaL_Reg cuda_functions[] = {
  {"is_available", cuda_is_available}, {"device_count", cuda_device_count},
  {"current_device", cuda_current_device}, {"synchronize", cuda_synchronize},
  {"empty_cache", cuda_empty_cache}, {"memory_allocated", cuda_memory_allocated},
  {"max_memory_allocated", cuda_max_memory_allocated}, {"memory_reserved", cuda_memory_reserved},
  {"memory_stats", cuda_memory_stats}, {"reset_peak_memory_stats", cuda_reset_peak_memory_stats},
  {"set_device", cuda_set_device},
  {"unavailable_reason", cuda_unavailable_reason}, {"init", cuda_init},
  {"is_initialized", cuda_is_initialized},
  {NULL, NULL}
};

/* torch._check_options(fname, opts, {names...}): the C check, for the Lua
** parts of the module (src/vm/lua), which cannot use lib/torch_class.lua */
static int l_check_options(lua_State *L) {
  const char *fname = luaL_checkstring(L, 1);
  luaL_checktype(L, 3, LUA_TTABLE);
  const char *names[65];
  int n = (int)lua_rawlen(L, 3);
  if (n > 64) return luaL_error(L, "_check_options: at most 64 names");
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, 3, i + 1);
    names[i] = lua_tostring(L, -1);     /* the table keeps the string alive */
    lua_pop(L, 1);
    if (!names[i]) return luaL_error(L, "_check_options: names must be strings");
  }
  names[n] = NULL;
  lt_vm_check_options(L, 2, fname, names);
  return 0;
}

static int l_live_tensors(lua_State *L) {
  lua_pushinteger(L, lt_tensor_live_count());
  return 1;
}

/* torch._ops(): the op table, for help, docs and tests */
static int l_ops(lua_State *L) {
  lua_createtable(L, 0, 0);
  int n = 0;
  for (const lt_op_help *h = lt_gen_help; h->name; h++) {
    lua_createtable(L, 0, 4);
    lua_pushstring(L, h->name); lua_setfield(L, -2, "name");
    lua_pushstring(L, h->signature); lua_setfield(L, -2, "signature");
    lua_pushstring(L, h->doc); lua_setfield(L, -2, "doc");
    lua_pushboolean(L, h->differentiable); lua_setfield(L, -2, "differentiable");
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

/* ---- clocks (torch.profile and torch.profiler are src/vm/lua/profiler.lua) ---- */
#include <time.h>

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* torch.reset_peak_memory_stats([device]): the peak restarts from what is allocated now */
static int l_reset_peak(lua_State *L) {
  lt_device d;
  const lt_backend *b = arg_backend(L, 1, "reset_peak_memory_stats", &d);
  if (b->reset_peak) b->reset_peak(d.index);
  return 0;
}

/* torch._resize_storage_(t, nbytes): t's storage gets a fresh, uninitialised block of
** nbytes, or none (0); every view of it, and every tensor autograd saved, keeps seeing
** that storage. Sharded training (lib/nn/fsdp.lua) frees gathered parameters with it.
** torch._storage_nbytes(t): the size of t's storage in bytes. */
static int l_resize_storage(lua_State *L) {
  lt_tensor *t = lt_vm_checktensor(L, 1, "torch._resize_storage_", "self");
  lua_Integer n = luaL_checkinteger(L, 2);
  if (n < 0) return luaL_error(L, "torch._resize_storage_: argument 'nbytes' must be >= 0, got %d", (int)n);
  if (lt_storage_reallocate(t->storage, (size_t)n) < 0) return lt_vm_raise(L, "torch._resize_storage_");
  return 0;
}

static int l_storage_nbytes(lua_State *L) {
  lt_tensor *t = lt_vm_checktensor(L, 1, "torch._storage_nbytes", "self");
  lua_pushinteger(L, (lua_Integer)t->storage->nbytes);
  return 1;
}

/* torch.time(): seconds on a monotonic wall clock (Python's perf_counter) */
static int l_time(lua_State *L) {
  lua_pushnumber(L, now_seconds());
  return 1;
}

static const luaL_Reg core_functions[] = {
  {"set_default_dtype", l_set_default_dtype}, {"get_default_dtype", l_get_default_dtype},
  {"is_tensor", l_is_tensor}, {"isTensor", l_is_tensor}, {"promote_types", l_promote_types},
  {"set_num_threads", l_set_num_threads}, {"get_num_threads", l_get_num_threads},
  {"setnumthreads", l_set_num_threads}, {"getnumthreads", l_get_num_threads},
  {"cpu_memory_stats", l_memory_stats}, {"cpu_empty_cache", l_empty_cache},
  {"memory_stats", l_memory_stats}, {"empty_cache", l_empty_cache}, {"synchronize", l_synchronize},
  {"reset_peak_memory_stats", l_reset_peak}, {"cpu_reset_peak_memory_stats", l_reset_peak},
  {"_resize_storage_", l_resize_storage}, {"_storage_nbytes", l_storage_nbytes},
  {"_device_count", l_device_count}, {"_check_options", l_check_options},
  {"_live_tensors", l_live_tensors}, {"time", l_time}, {"_ops", l_ops}, {"device", lt_vm_l_device},
  {NULL, NULL}
};

/* every binding file's registration; each adds functions to the module at -1 */
static lt_vm_open_fn const openers[] = {
  LT_VM_OPENERS
  NULL
};

/* Lua libraries (lib/) beside the binary or shared object that holds this
** module: the source tree (build/../lib) or an install prefix
** (PREFIX/share/lua/5.4, seen from PREFIX/bin, PREFIX/lib or, for torch.so,
** PREFIX/lib/lua/5.4). Only folders that hold nn are added, in front and
** once, so `require "nn"` works from lua5.4 with torch.so too, and an
** install found this way is relocatable. */
static void add_lib_paths(lua_State *L) {
  Dl_info info;
  char dir[PATH_MAX];
  if (!dladdr((void *)add_lib_paths, &info) || !info.dli_fname) return;
  if (!realpath(info.dli_fname, dir)) return;
  char *slash = strrchr(dir, '/');
  if (!slash) return;
  *slash = 0;
  size_t n = strlen(dir);
  const char *up = (n >= 12 && strcmp(dir + n - 12, "/lib/lua/5.4") == 0) ? "../../.." : "..";
  lua_getglobal(L, "package");
  if (!lua_istable(L, -1)) { lua_pop(L, 1); return; }
  static const char *const where[] = { "lib", "share/lua/5.4" };
  for (int i = 1; i >= 0; i--) {      /* the tree ends up first */
    char root[PATH_MAX + 32], probe[PATH_MAX + 64];
    snprintf(root, sizeof root, "%s/%s/%s", dir, up, where[i]);
    snprintf(probe, sizeof probe, "%s/nn/init.lua", root);
    if (access(probe, R_OK) != 0) continue;
    lua_getfield(L, -1, "path");
    const char *cur = lua_tostring(L, -1);
    snprintf(probe, sizeof probe, "%s/?.lua;", root);
    if (cur && !strstr(cur, probe)) {
      lua_pushfstring(L, "%s/?.lua;%s/?/init.lua;%s", root, root, cur);
      lua_setfield(L, -3, "path");
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* The generated functions into the module table at -1; a dotted name
** ("linalg.solve") goes into the namespace table it names (torch.linalg),
** made on first use, so an op's declaration alone puts it in torch.linalg,
** torch.special or torch.fft. */
static void register_functions(lua_State *L, const luaL_Reg *fns) {
  for (const luaL_Reg *r = fns; r->name; r++) {
    const char *dot = strchr(r->name, '.');
    if (!dot) {
      lua_pushcfunction(L, r->func);
      lua_setfield(L, -2, r->name);
      continue;
    }
    lua_pushlstring(L, r->name, (size_t)(dot - r->name));
    if (lua_rawget(L, -2) != LUA_TTABLE) {
      lua_pop(L, 1);
      lua_newtable(L);
      lua_pushlstring(L, r->name, (size_t)(dot - r->name));
      lua_pushvalue(L, -2);
      lua_rawset(L, -4);
    }
    lua_pushcfunction(L, r->func);
    lua_setfield(L, -2, dot + 1);
    lua_pop(L, 1);
  }
}

int luaopen_torch(lua_State *L) {
  luaL_checkversion(L);
  lt_init();              /* the built-in backends */
  lt_get_num_threads();   /* settles the thread count (and OpenBLAS's) before the first op */
  lua_getfield(L, LUA_REGISTRYINDEX, "lutorch.module");
  if (lua_istable(L, -1)) return 1;     /* one module per state */
  lua_pop(L, 1);
  add_lib_paths(L);
  lt_vm_open_tensor(L);
  lua_createtable(L, 0, 512);
  register_functions(L, lt_gen_functions);
  luaL_setfuncs(L, core_functions, 0);
  for (int i = 0; i < LT_NUM_DTYPES; i++) {
    lt_vm_push_dtype(L, (lt_dtype)i);
    lua_setfield(L, -2, lt_dtype_name((lt_dtype)i));
  }
  static const struct { const char *alias; lt_dtype dt; } dt_alias[] = {
    {"double", LT_FLOAT64}, {"float", LT_FLOAT32}, {"half", LT_FLOAT16}, {"long", LT_INT64},
    {"int", LT_INT32}, {"short", LT_INT16}, {"uint8", LT_UINT8},
    {"cfloat", LT_COMPLEX64}, {"cdouble", LT_COMPLEX128},
  };
  for (size_t i = 0; i < sizeof dt_alias / sizeof dt_alias[0]; i++) {
    lt_vm_push_dtype(L, dt_alias[i].dt);
    lua_setfield(L, -2, dt_alias[i].alias);
  }
  lua_createtable(L, 0, 16);
  luaL_setfuncs(L, cuda_functions, 0);
  luaL_setfuncs(L, lt_vm_cuda_rng_functions, 0);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, cuda_index);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  lua_setfield(L, -2, "cuda");
  lua_pushstring(L, lutorch_version());     /* one definition: include/lutorch.h */
  lua_setfield(L, -2, "__version__");
  lt_vm_push_methods(L);
  lua_setfield(L, -2, "_methods");
  lt_vm_push_tensor_mt(L);
  lua_setfield(L, -2, "_tensor_mt");
  for (int i = 0; openers[i]; i++) openers[i](L);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, "lutorch.module");
  /* Torch7's `require "torch"` made the global too; scripts written for it
  ** (and one-liners like lua5.4 -e 'require "torch"') expect it */
  if (lua_getglobal(L, "torch") == LUA_TNIL) {
    lua_pushvalue(L, -2);
    lua_setglobal(L, "torch");
  }
  lua_pop(L, 1);
  /* the Lua half of the module: each chunk gets the module table */
  for (const lt_embedded *e = lt_embedded_lua; e->name; e++) {
    if (luaL_loadbuffer(L, e->src, e->len, e->name) != LUA_OK) return lua_error(L);
    lua_pushvalue(L, -2);
    lua_call(L, 1, 0);
  }
  lt_vm_t7_open(L);     /* Torch7 mode, when this state asked for it */
  return 1;
}
