/*
** lrng.c — generators as Lua values: torch.Generator(), torch.manual_seed,
** torch.seed, torch.initial_seed, get/set_rng_state, and the hook that lets
** `Generator?` op arguments accept them.
*/
#include <string.h>
#include "lutorch_vm.h"
#include "ltensor.h"
#include "largs.h"
#include "core/rng.h"
#include "core/backend.h"

#define GEN_MT "lutorch.Generator"

typedef struct lgen { lt_generator *g; } lgen;   /* owns a reference (the default one is never freed) */

static lt_generator *togen(lua_State *L, int idx) {
  lgen *u = luaL_testudata(L, idx, GEN_MT);
  return u ? u->g : NULL;
}

static lt_generator *checkgen(lua_State *L, int idx, const char *op) {
  lt_generator *g = togen(L, idx);
  if (!g) luaL_error(L, "%s: argument 'self' must be a torch.Generator, got %s", op, luaL_typename(L, idx));
  return g;
}

static void push_gen(lua_State *L, lt_generator *g) {
  lgen *u = lua_newuserdatauv(L, sizeof(lgen), 0);
  u->g = NULL;
  luaL_setmetatable(L, GEN_MT);
  lt_generator_retain(g);
  u->g = g;
}

/* seeds are 64-bit: Lua integers as their two's complement bits, integral floats too */
static uint64_t checkseed(lua_State *L, int idx, const char *op) {
  if (lua_isinteger(L, idx)) return (uint64_t)lua_tointeger(L, idx);
  if (lua_type(L, idx) == LUA_TNUMBER) {
    double d = lua_tonumber(L, idx);
    if (d >= 0 && d < 18446744073709551616.0 && d == (double)(uint64_t)d) return (uint64_t)d;
    if (d < 0 && d >= -9.2233720368547758e18 && d == (double)(int64_t)d) return (uint64_t)(int64_t)d;
  }
  luaL_error(L, "%s: argument 'seed' must be an integer, got %s", op, luaL_typename(L, idx));
  return 0;
}

static void push_state(lua_State *L, lt_generator *g) {
  int64_t n = LT_RNG_STATE_BYTES;
  lt_tensor *t = lt_tensor_new(LT_UINT8, lt_device_cpu(), 1, &n);
  if (!t) { lt_vm_raise(L, "get_state"); return; }
  lt_generator_get_state(g, lt_tensor_data(t));
  lt_vm_push_tensor(L, t);
}

/* a state as a Lua string or a uint8 tensor */
static void set_state(lua_State *L, lt_generator *g, int idx, const char *op) {
  int rc;
  if (lua_type(L, idx) == LUA_TSTRING) {
    size_t n;
    const char *s = lua_tolstring(L, idx, &n);
    rc = lt_generator_set_state(g, (const uint8_t *)s, n);
  } else {
    lt_tensor *t = lt_vm_totensor(L, idx);
    if (!t || t->dtype != LT_UINT8 || t->ndim != 1)
      luaL_error(L, "%s: argument 'state' must be a 1-D uint8 tensor or a string", op);
    lt_tensor *c = lt_tensor_contiguous(t);
    if (!c) { lt_vm_raise(L, op); return; }
    rc = lt_generator_set_state(g, lt_tensor_data(c), (size_t)c->numel);
    lt_tensor_release(c);
  }
  if (rc < 0) {
    /* the core names it set_state; say which function the user called */
    const char *m = lt_error_message();
    if (strncmp(m, "set_state: ", 11) == 0) m += 11;
    luaL_error(L, "%s: %s", op, m);
  }
}

/* ---- torch.Generator methods ---- */

static int g_gc(lua_State *L) {
  lgen *u = luaL_checkudata(L, 1, GEN_MT);
  if (u->g) { lt_generator_release(u->g); u->g = NULL; }
  return 0;
}

static int g_manual_seed(lua_State *L) {
  lt_generator *g = checkgen(L, 1, "manual_seed");
  lt_generator_manual_seed(g, checkseed(L, 2, "manual_seed"));
  lua_settop(L, 1);
  return 1;
}

static int g_seed(lua_State *L) {
  lt_generator *g = checkgen(L, 1, "seed");
  lua_pushinteger(L, (lua_Integer)lt_generator_seed_random(g));
  return 1;
}

static int g_initial_seed(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)lt_generator_initial_seed(checkgen(L, 1, "initial_seed")));
  return 1;
}

static int g_get_state(lua_State *L) {
  push_state(L, checkgen(L, 1, "get_state"));
  return 1;
}

static int g_set_state(lua_State *L) {
  lt_generator *g = checkgen(L, 1, "set_state");
  set_state(L, g, 2, "set_state");
  lua_settop(L, 1);
  return 1;
}

static int g_tostring(lua_State *L) {
  lt_generator *g = checkgen(L, 1, "tostring");
  lua_pushfstring(L, "torch.Generator(seed=%I)", (lua_Integer)g->seed);
  return 1;
}

static int g_index(lua_State *L) {
  const char *k = lua_tostring(L, 2);
  if (k && strcmp(k, "device") == 0) {
    lt_generator *g = checkgen(L, 1, "device");
    lt_vm_push_device(L, (lt_device){g->device_type, g->device_index});
    return 1;
  }
  luaL_getmetatable(L, GEN_MT);
  lua_getfield(L, -1, "_methods");
  lua_pushvalue(L, 2);
  lua_rawget(L, -2);
  return 1;
}

/* ---- module functions ---- */

/* torch.Generator([device]): a cuda generator feeds the ops of cuda tensors
** ("cuda" is the current device) */
static int l_generator(lua_State *L) {
  lt_device d = lt_device_cpu();
  if (!lua_isnoneornil(L, 1)) {
    if (lt_vm_todevice(L, 1, &d) < 0) return luaL_error(L, "Generator: argument 'device': %s", lt_error_message());
    if (lt_vm_device_usable(d) < 0) return luaL_error(L, "Generator: argument 'device': %s", lt_error_message());
  }
  lt_generator *g = lt_generator_new(LT_DEFAULT_SEED);
  if (!g) return lt_vm_raise(L, "Generator");
  g->device_type = d.type;
  g->device_index = d.index;
  push_gen(L, g);
  lt_generator_release(g);
  return 1;
}

static int l_manual_seed(lua_State *L) {
  lt_manual_seed(checkseed(L, 1, "manual_seed"));
  lua_getfield(L, LUA_REGISTRYINDEX, "lutorch.default_generator");
  return 1;
}

/* torch.seed(): a random seed for the cpu, which seeds every cuda device too (as in PyTorch) */
static int l_seed(lua_State *L) {
  uint64_t s = lt_generator_seed_random(lt_default_generator());
  lt_manual_seed(s);
  lua_pushinteger(L, (lua_Integer)s);
  return 1;
}

static int l_initial_seed(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)lt_generator_initial_seed(lt_default_generator()));
  return 1;
}

static int l_get_rng_state(lua_State *L) {
  push_state(L, lt_default_generator());
  return 1;
}

static int l_set_rng_state(lua_State *L) {
  set_state(L, lt_default_generator(), 1, "set_rng_state");
  return 0;
}

/* ---- torch.cuda's generators: one per device (core/rng.h) ----
** Without a CUDA device, seeding is ignored and the rest raise, as in PyTorch. */

static int cuda_devices(void) {
  const lt_backend *b = lt_backend_get(LT_DEV_CUDA);
  if (!b && lt_vm_backend_load(LT_DEV_CUDA) == 0) b = lt_backend_get(LT_DEV_CUDA);
  return b ? b->device_count() : 0;
}

/* the generator of the device at idx (nil: the current one); raises naming op */
static lt_generator *cuda_gen(lua_State *L, int idx, const char *op) {
  int n = cuda_devices();
  if (n == 0) {
    const char *why = lt_vm_backend_unavailable(LT_DEV_CUDA);
    luaL_error(L, "%s: CUDA is not available: %s", op, why ? why : "no CUDA device");
  }
  lt_device d = {LT_DEV_CUDA, (int8_t)lt_device_current(LT_DEV_CUDA)};
  if (lua_isinteger(L, idx)) {
    lua_Integer i = lua_tointeger(L, idx);
    if (i < 0 || i >= n) luaL_error(L, "%s: argument 'device': device cuda:%d does not exist (%d devices)", op, (int)i, n);
    d.index = (int8_t)i;
  } else if (!lua_isnoneornil(L, idx)) {
    if (lt_vm_todevice(L, idx, &d) < 0) luaL_error(L, "%s: argument 'device': %s", op, lt_error_message());
    if (d.type != LT_DEV_CUDA) luaL_error(L, "%s: argument 'device': expected a cuda device, got cpu", op);
    if (d.index >= n) luaL_error(L, "%s: argument 'device': device cuda:%d does not exist (%d devices)", op, d.index, n);
  }
  return lt_device_default_generator(LT_DEV_CUDA, d.index);
}

static int c_manual_seed(lua_State *L) {
  uint64_t s = checkseed(L, 1, "torch.cuda.manual_seed");
  if (cuda_devices() > 0) lt_generator_manual_seed(cuda_gen(L, 2, "torch.cuda.manual_seed"), s);
  return 0;
}

static int c_manual_seed_all(lua_State *L) {
  uint64_t s = checkseed(L, 1, "torch.cuda.manual_seed_all");
  int n = cuda_devices();
  for (int i = 0; i < n; i++) lt_generator_manual_seed(lt_device_default_generator(LT_DEV_CUDA, i), s);
  return 0;
}

static int c_seed(lua_State *L) {
  if (cuda_devices() == 0) return 0;
  lua_pushinteger(L, (lua_Integer)lt_generator_seed_random(cuda_gen(L, 1, "torch.cuda.seed")));
  return 1;
}

static int c_seed_all(lua_State *L) {
  int n = cuda_devices();
  if (n == 0) return 0;
  uint64_t s = lt_generator_seed_random(lt_device_default_generator(LT_DEV_CUDA, 0));
  for (int i = 1; i < n; i++) lt_generator_manual_seed(lt_device_default_generator(LT_DEV_CUDA, i), s);
  return 0;
}

static int c_initial_seed(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)lt_generator_initial_seed(cuda_gen(L, 1, "torch.cuda.initial_seed")));
  return 1;
}

static int c_get_rng_state(lua_State *L) {
  push_state(L, cuda_gen(L, 1, "torch.cuda.get_rng_state"));
  return 1;
}

static int c_set_rng_state(lua_State *L) {
  lt_generator *g = cuda_gen(L, 2, "torch.cuda.set_rng_state");
  set_state(L, g, 1, "torch.cuda.set_rng_state");
  return 0;
}

static int c_get_rng_state_all(lua_State *L) {
  int n = cuda_devices();
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    push_state(L, lt_device_default_generator(LT_DEV_CUDA, i));
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static int c_set_rng_state_all(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int n = cuda_devices();
  for (int i = 0; i < n; i++) {
    if (lua_rawgeti(L, 1, i + 1) == LUA_TNIL)
      return luaL_error(L, "torch.cuda.set_rng_state_all: argument 'new_states' has no state for cuda:%d", i);
    set_state(L, lt_device_default_generator(LT_DEV_CUDA, i), lua_gettop(L), "torch.cuda.set_rng_state_all");
    lua_pop(L, 1);
  }
  return 0;
}

const luaL_Reg lt_vm_cuda_rng_functions[] = {
  {"manual_seed", c_manual_seed}, {"manual_seed_all", c_manual_seed_all}, {"seed", c_seed},
  {"seed_all", c_seed_all}, {"initial_seed", c_initial_seed}, {"get_rng_state", c_get_rng_state},
  {"set_rng_state", c_set_rng_state}, {"get_rng_state_all", c_get_rng_state_all},
  {"set_rng_state_all", c_set_rng_state_all},
  {NULL, NULL}
};

static struct lt_generator *vm_togenerator(lua_State *L, int idx) { return togen(L, idx); }

static const luaL_Reg gen_methods[] = {
  {"manual_seed", g_manual_seed}, {"seed", g_seed}, {"initial_seed", g_initial_seed},
  {"get_state", g_get_state}, {"set_state", g_set_state},
  {NULL, NULL}
};

static const luaL_Reg rng_functions[] = {
  {"Generator", l_generator}, {"manual_seed", l_manual_seed}, {"seed", l_seed},
  {"initial_seed", l_initial_seed}, {"get_rng_state", l_get_rng_state}, {"set_rng_state", l_set_rng_state},
  {"getRNGState", l_get_rng_state}, {"setRNGState", l_set_rng_state}, {"manualSeed", l_manual_seed},
  {NULL, NULL}
};

void lt_vm_open_rng(lua_State *L) {
  lt_vm_togenerator = vm_togenerator;
  if (luaL_newmetatable(L, GEN_MT)) {
    static const luaL_Reg mm[] = {
      {"__gc", g_gc}, {"__tostring", g_tostring}, {"__index", g_index}, {NULL, NULL}
    };
    luaL_setfuncs(L, mm, 0);
    lua_createtable(L, 0, 8);
    luaL_setfuncs(L, gen_methods, 0);
    lua_setfield(L, -2, "_methods");
    lua_pushstring(L, "Generator");
    lua_setfield(L, -2, "__name");
  }
  lua_pop(L, 1);
  luaL_setfuncs(L, rng_functions, 0);
  push_gen(L, lt_default_generator());
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, "lutorch.default_generator");
  lua_setfield(L, -2, "default_generator");
}
