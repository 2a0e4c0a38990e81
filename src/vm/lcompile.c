/*
** lcompile.c — the C half of torch.compile (lib/compile): loading the kernels it
** generates and running them over the thread pool.
**
** A generated kernel is a C function in a shared object the machine's compiler
** built, `void k(int64_t begin, int64_t end, char *const *ptr)`: it computes
** elements begin .. end-1 of its iteration space, reading and writing through
** the data pointers in ptr (one per tensor, in the order lib/compile passes
** them). Its shapes and strides are constants in its source, or (a dynamic
** graph's kernel) read from an int64 tensor passed last: lib/compile guards that
** the tensors match them before it calls. Because a stale guard
** would make the kernel read past a tensor, the call checks here, for each
** tensor, that the elements the kernel reaches (the extent lib/compile gives)
** lie inside its storage, and that outputs are not the inputs' memory.
**
**   torch._compiled_load(path, symbol) -> kernel | nil, message
**   torch._compiled_run(kernel, n, grain, {tensors}, {extents})
**   torch._compiled_storage(t) -> the identity of t's storage (a light userdata)
**   torch._compiled_bump_version(t, n)   (n more in-place writes of t's storage)
**
** The last two serve the functionalization of in-place ops (lib/compile/functional.lua):
** an input changed in place by a fused run gets its new values from the kernel or by one
** copy_ at the end, its version counter then advanced as far as eager's in-place ops would
** have taken it, and the run falls back to the ops where two inputs share a storage.
*/
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include "vm/ltensor.h"
#include "vm/lutorch_vm.h"
#include "cpu/parallel.h"

#define KERNEL_MT "lutorch.compiled_kernel"
#define MAX_ARGS 64

typedef void (*kernel_fn)(int64_t begin, int64_t end, char *const *ptr);

typedef struct kernel_ud { void *handle; kernel_fn fn; } kernel_ud;

static int kernel_gc(lua_State *L) {
  kernel_ud *k = luaL_checkudata(L, 1, KERNEL_MT);
  /* nothing else holds the function pointer: closing keeps the mappings bounded over
  ** many recompiles */
  if (k->handle) dlclose(k->handle);
  k->handle = NULL;
  k->fn = NULL;
  return 0;
}

static int l_load(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  const char *sym = luaL_checkstring(L, 2);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    lua_pushnil(L);
    lua_pushfstring(L, "torch._compiled_load: %s", dlerror());
    return 2;
  }
  void *f = dlsym(h, sym);
  if (!f) {
    lua_pushnil(L);
    lua_pushfstring(L, "torch._compiled_load: %s has no symbol '%s'", path, sym);
    dlclose(h);
    return 2;
  }
  kernel_ud *k = lua_newuserdatauv(L, sizeof *k, 0);
  k->handle = h;
  k->fn = (kernel_fn)f;
  luaL_setmetatable(L, KERNEL_MT);
  return 1;
}

typedef struct run_ctx { kernel_fn fn; char *ptr[MAX_ARGS]; } run_ctx;

static void run_chunk(void *c, int64_t begin, int64_t end) {
  run_ctx *r = c;
  r->fn(begin, end, r->ptr);
}

static int l_run(lua_State *L) {
  kernel_ud *k = luaL_testudata(L, 1, KERNEL_MT);
  if (!k) return luaL_error(L, "torch._compiled_run: argument 'kernel' must be a compiled kernel, got %s", luaL_typename(L, 1));
  if (!k->fn) return luaL_error(L, "torch._compiled_run: the kernel was unloaded");
  lua_Integer n = luaL_checkinteger(L, 2);
  lua_Integer grain = luaL_checkinteger(L, 3);
  luaL_checktype(L, 4, LUA_TTABLE);
  luaL_checktype(L, 5, LUA_TTABLE);
  int nt = (int)lua_rawlen(L, 4);
  if (nt > MAX_ARGS) return luaL_error(L, "torch._compiled_run: %d tensors (at most %d)", nt, MAX_ARGS);
  if ((int)lua_rawlen(L, 5) != nt) return luaL_error(L, "torch._compiled_run: one extent per tensor");
  if (n < 0 || grain < 1) return luaL_error(L, "torch._compiled_run: bad size %d or grain %d", (int)n, (int)grain);
  run_ctx r;
  r.fn = k->fn;
  for (int i = 0; i < nt; i++) {
    lua_rawgeti(L, 4, i + 1);
    lt_tensor *t = lt_vm_checktensor(L, -1, "torch._compiled_run", "tensors");
    lua_pop(L, 1);
    lua_rawgeti(L, 5, i + 1);
    lua_Integer extent = luaL_checkinteger(L, -1);
    lua_pop(L, 1);
    if (t->storage->device.type != LT_DEV_CPU)
      return luaL_error(L, "torch._compiled_run: tensor %d is not on the CPU", i + 1);
    size_t es = lt_dtype_size((lt_dtype)t->dtype);
    if (extent < 0 || (size_t)(t->offset + extent) * es > t->storage->nbytes)
      return luaL_error(L, "torch._compiled_run: tensor %d: the kernel reaches %d elements past offset %d, "
                        "its storage holds %d (a guard let through a tensor the kernel was not made for)",
                        i + 1, (int)extent, (int)t->offset, (int)(t->storage->nbytes / es));
    r.ptr[i] = (char *)t->storage->data + (size_t)t->offset * es;
  }
  if (n > 0) lt_parallel_for(n, grain, run_chunk, &r);
  return 0;
}

static int l_storage(lua_State *L) {
  lt_tensor *t = lt_vm_checktensor(L, 1, "torch._compiled_storage", "t");
  lua_pushlightuserdata(L, t->storage);
  return 1;
}

static int l_bump_version(lua_State *L) {
  lt_tensor *t = lt_vm_checktensor(L, 1, "torch._compiled_bump_version", "t");
  lua_Integer n = luaL_checkinteger(L, 2);
  if (n < 0) return luaL_error(L, "torch._compiled_bump_version: argument 'n' must be >= 0, got %d", (int)n);
  for (lua_Integer i = 0; i < n; i++) lt_tensor_bump_version(t);
  return 0;
}

static const luaL_Reg functions[] = {
  {"_compiled_load", l_load}, {"_compiled_run", l_run}, {"_compiled_storage", l_storage},
  {"_compiled_bump_version", l_bump_version}, {NULL, NULL}
};

void lt_vm_open_compile(lua_State *L) {
  if (luaL_newmetatable(L, KERNEL_MT)) {
    lua_pushcfunction(L, kernel_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  luaL_setfuncs(L, functions, 0);
}
