/*
** lcuda.c — the module's Lua face: luaopen_lutorch_cuda opens the backend
** (registering it, when a driver is found) and returns a table that says
** whether CUDA is available, why not, and the functions of torch.cuda that
** need the driver itself (device names and properties, the allocator's full
** statistics, the kernels made at run time of rtc.h). torch.cuda (src/vm/ltorch.c) loads the module lazily and
** looks these up in it; the module is the one file of src/cuda that knows
** Lua, as src/dist/ldist.c is for the distributed module.
*/
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <lua.h>
#include <lauxlib.h>
#include "core/error.h"
#include "cuda/alloc.h"
#include "cuda/blas.h"
#include "cuda/cuda.h"
#include "cuda/rtc.h"
#include "cuda/trace.h"
#include "vm/ltensor.h"

int luaopen_lutorch_cuda(lua_State *L);

static int device_arg(lua_State *L, int idx, const char *op) {
  const char *why = NULL;
  if (lt_cuda_backend_open(&why) < 0) return luaL_error(L, "%s: CUDA is not available: %s", op, why);
  int dev = lt_device_current(LT_DEV_CUDA);   /* none given: the current device */
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

/* ---- streams and events ----
** A Stream is a driver stream of one device; the default stream is NULL.
** Streams made here live as long as the process (as PyTorch's pooled streams
** do): blocks of the caching allocator stay tied to them after the Lua value
** is collected. An Event is made on first record, on the recording stream's
** device. */

typedef struct lstream { lt_cu_stream s; int dev; } lstream;
typedef struct levent { lt_cu_event e; int dev; bool timing, made; } levent;
#define STREAM_MT "lutorch.cuda.Stream"
#define EVENT_MT "lutorch.cuda.Event"

static void push_stream(lua_State *L, lt_cu_stream s, int dev) {
  lstream *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->s = s;
  u->dev = dev;
  luaL_setmetatable(L, STREAM_MT);
}

static lstream *check_stream(lua_State *L, int idx) { return luaL_checkudata(L, idx, STREAM_MT); }
static levent *check_event(lua_State *L, int idx) { return luaL_checkudata(L, idx, EVENT_MT); }

/* run a driver call for stream work on dev's context, raising on failure */
#define ON_DEVICE(L, dev, op, what, call) do { \
    lt_cuda_guard g_; \
    if (lt_cuda_enter((dev), &g_, (op)) < 0) return luaL_error((L), "%s", lt_error_message()); \
    lt_cu_result r_ = (call); \
    lt_cuda_leave(&g_); \
    check((L), r_, (op), (what), (dev)); \
  } while (0)

/* torch.cuda.Stream([device]) */
static int l_stream_new(lua_State *L) {
  static const char op[] = "torch.cuda.Stream";
  int dev = device_arg(L, 1, op);
  lt_cu_stream s = NULL;
  ON_DEVICE(L, dev, op, "stream_create", lt_cuda_driver()->stream_create(&s, LT_CU_STREAM_NON_BLOCKING));
  push_stream(L, s, dev);
  return 1;
}

static int l_current_stream(lua_State *L) {
  int dev = device_arg(L, 1, "torch.cuda.current_stream");
  push_stream(L, lt_cuda_current_stream(dev), dev);
  return 1;
}

static int l_default_stream(lua_State *L) {
  int dev = device_arg(L, 1, "torch.cuda.default_stream");
  push_stream(L, NULL, dev);
  return 1;
}

static int l_set_stream(lua_State *L) {
  lstream *u = check_stream(L, 1);
  lt_cuda_set_current_stream(u->dev, u->s);
  return 0;
}

/* the guard's restore: upvalues device, previous stream */
static int stream_restore(lua_State *L) {
  lstream *prev = check_stream(L, lua_upvalueindex(1));
  lt_cuda_set_current_stream(prev->dev, prev->s);
  return 0;
}

/* What a guard does once it has switched (the restore closure at index
** restore, the function, if any, at 2): without fn, a value whose __close
** runs the restore; with fn, fn()'s results, the restore run also when fn
** raises. */
static int guarded(lua_State *L, int restore, bool has_fn) {
  if (!has_fn) {
    lua_createtable(L, 0, 0);
    lua_createtable(L, 0, 1);
    lua_pushvalue(L, restore);
    lua_setfield(L, -2, "__close");
    lua_setmetatable(L, -2);
    return 1;
  }
  lua_pushvalue(L, 2);
  int base = lua_gettop(L);
  int st = lua_pcall(L, 0, LUA_MULTRET, 0);
  lua_pushvalue(L, restore);
  lua_call(L, 0, 0);
  if (st != LUA_OK) return lua_error(L);
  return lua_gettop(L) - base + 1;
}

/* torch.cuda.stream(s, fn): fn() with s current on its device, then the
** previous stream again; without fn, a value to close (`local _ <close> =
** torch.cuda.stream(s)`). */
static int l_stream_guard(lua_State *L) {
  lstream *u = check_stream(L, 1);
  bool has_fn = !lua_isnoneornil(L, 2);
  if (has_fn) luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_settop(L, 2);
  push_stream(L, lt_cuda_current_stream(u->dev), u->dev);
  lua_pushcclosure(L, stream_restore, 1);
  lt_cuda_set_current_stream(u->dev, u->s);
  return guarded(L, lua_gettop(L), has_fn);
}

/* the device guard's restore: upvalue the previous index */
static int device_restore(lua_State *L) {
  lt_device_set_current(LT_DEV_CUDA, (int)lua_tointeger(L, lua_upvalueindex(1)));
  return 0;
}

/* torch.cuda.device(d, fn): fn() with d the current device (core/tensor.h:
** what "cuda" means), then the previous one again; without fn, a value to
** close, as torch.cuda.stream */
static int l_device_guard(lua_State *L) {
  luaL_checkany(L, 1);
  int dev = device_arg(L, 1, "torch.cuda.device");
  bool has_fn = !lua_isnoneornil(L, 2);
  if (has_fn) luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_settop(L, 2);
  lua_pushinteger(L, lt_device_current(LT_DEV_CUDA));
  lua_pushcclosure(L, device_restore, 1);
  lt_device_set_current(LT_DEV_CUDA, dev);
  return guarded(L, lua_gettop(L), has_fn);
}

static int s_synchronize(lua_State *L) {
  lstream *u = check_stream(L, 1);
  ON_DEVICE(L, u->dev, "Stream:synchronize", "stream_synchronize", lt_cuda_driver()->stream_synchronize(u->s));
  return 0;
}

static int s_query(lua_State *L) {
  lstream *u = check_stream(L, 1);
  lt_cuda_guard g;
  if (lt_cuda_enter(u->dev, &g, "Stream:query") < 0) return luaL_error(L, "%s", lt_error_message());
  lt_cu_result r = lt_cuda_driver()->stream_query(u->s);
  lt_cuda_leave(&g);
  if (r != LT_CU_SUCCESS && r != LT_CU_ERROR_NOT_READY) check(L, r, "Stream:query", "stream_query", u->dev);
  lua_pushboolean(L, r == LT_CU_SUCCESS);
  return 1;
}

static void event_record(lua_State *L, levent *e, lstream *s) {
  static const char op[] = "Event:record";
  if (e->made && e->dev != s->dev)
    luaL_error(L, "%s: the event was recorded on cuda:%d, the stream is on cuda:%d", op, e->dev, s->dev);
  if (!e->made) {
    unsigned flags = e->timing ? 0 : LT_CU_EVENT_DISABLE_TIMING;
    lt_cu_event ev = NULL;
    lt_cuda_guard g;
    if (lt_cuda_enter(s->dev, &g, op) < 0) luaL_error(L, "%s", lt_error_message());
    lt_cu_result r = lt_cuda_driver()->event_create(&ev, flags);
    lt_cuda_leave(&g);
    check(L, r, op, "event_create", s->dev);
    e->e = ev;
    e->dev = s->dev;
    e->made = true;
  }
  lt_cuda_guard g;
  if (lt_cuda_enter(s->dev, &g, op) < 0) luaL_error(L, "%s", lt_error_message());
  lt_cu_result r = lt_cuda_driver()->event_record(e->e, s->s);
  lt_cuda_leave(&g);
  check(L, r, op, "event_record", s->dev);
}

/* torch.cuda.Event({enable_timing = false}) */
static int l_event_new(lua_State *L) {
  bool timing = false;
  if (lua_istable(L, 1)) {
    lua_getfield(L, 1, "enable_timing");
    timing = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  levent *e = lua_newuserdatauv(L, sizeof *e, 0);
  *e = (levent){NULL, 0, timing, false};
  luaL_setmetatable(L, EVENT_MT);
  return 1;
}

/* the stream argument at idx, or the current stream of the current device (pushed at the top) */
static lstream *stream_or_current(lua_State *L, int idx) {
  if (!lua_isnoneornil(L, idx)) return check_stream(L, idx);
  int dev = device_arg(L, lua_gettop(L) + 1, "torch.cuda.Event");
  push_stream(L, lt_cuda_current_stream(dev), dev);
  return check_stream(L, -1);
}

static int e_record(lua_State *L) {
  levent *e = check_event(L, 1);
  event_record(L, e, stream_or_current(L, 2));
  return 0;
}

static int s_record_event(lua_State *L) {
  lstream *s = check_stream(L, 1);
  if (lua_isnoneornil(L, 2)) { lua_settop(L, 1); l_event_new(L); }
  else { check_event(L, 2); lua_settop(L, 2); }
  event_record(L, check_event(L, 2), s);
  return 1;
}

static int e_query(lua_State *L) {
  levent *e = check_event(L, 1);
  if (!e->made) { lua_pushboolean(L, 1); return 1; }
  lt_cu_result r = lt_cuda_driver()->event_query(e->e);
  if (r != LT_CU_SUCCESS && r != LT_CU_ERROR_NOT_READY) check(L, r, "Event:query", "event_query", e->dev);
  lua_pushboolean(L, r == LT_CU_SUCCESS);
  return 1;
}

static int e_synchronize(lua_State *L) {
  levent *e = check_event(L, 1);
  if (e->made) check(L, lt_cuda_driver()->event_synchronize(e->e), "Event:synchronize", "event_synchronize", e->dev);
  return 0;
}

/* milliseconds from this event to `end` */
static int e_elapsed_time(lua_State *L) {
  levent *a = check_event(L, 1), *b = check_event(L, 2);
  if (!a->timing || !b->timing) return luaL_error(L, "Event:elapsed_time: both events need enable_timing = true");
  if (!a->made || !b->made) return luaL_error(L, "Event:elapsed_time: both events must be recorded first");
  float ms = 0;
  check(L, lt_cuda_driver()->event_elapsed_time(&ms, a->e, b->e), "Event:elapsed_time", "event_elapsed_time", a->dev);
  lua_pushnumber(L, ms);
  return 1;
}

/* work queued on the stream after this waits for the event */
static void stream_wait(lua_State *L, lstream *s, levent *e) {
  if (!e->made) return;   /* never recorded: nothing to wait for */
  lt_cuda_guard g;
  if (lt_cuda_enter(s->dev, &g, "Stream:wait_event") < 0) luaL_error(L, "%s", lt_error_message());
  lt_cu_result r = lt_cuda_driver()->stream_wait_event(s->s, e->e, 0);
  lt_cuda_leave(&g);
  check(L, r, "Stream:wait_event", "stream_wait_event", s->dev);
}

static int e_wait(lua_State *L) {
  levent *e = check_event(L, 1);
  stream_wait(L, stream_or_current(L, 2), e);
  return 0;
}

static int s_wait_event(lua_State *L) {
  stream_wait(L, check_stream(L, 1), check_event(L, 2));
  return 0;
}

static int s_wait_stream(lua_State *L) {
  lstream *s = check_stream(L, 1);
  check_stream(L, 2);
  lua_settop(L, 2);
  l_event_new(L);
  event_record(L, check_event(L, 3), check_stream(L, 2));
  stream_wait(L, s, check_event(L, 3));
  return 0;
}

static int s_index(lua_State *L) {
  lstream *u = check_stream(L, 1);
  const char *k = luaL_checkstring(L, 2);
  if (strcmp(k, "device") == 0) {
    char buf[16];
    snprintf(buf, sizeof buf, "cuda:%d", u->dev);
    lua_pushstring(L, buf);
    return 1;
  }
  if (strcmp(k, "cuda_stream") == 0) { lua_pushinteger(L, (lua_Integer)(uintptr_t)u->s); return 1; }
  luaL_getmetatable(L, STREAM_MT);
  lua_getfield(L, -1, "methods");
  lua_getfield(L, -1, k);
  return 1;
}

static int s_eq(lua_State *L) {
  lstream *a = luaL_testudata(L, 1, STREAM_MT), *b = luaL_testudata(L, 2, STREAM_MT);
  lua_pushboolean(L, a && b && a->s == b->s && a->dev == b->dev);
  return 1;
}

static int s_tostring(lua_State *L) {
  lstream *u = check_stream(L, 1);
  lua_pushfstring(L, "torch.cuda.Stream(device=cuda:%d, cuda_stream=%p)", u->dev, (void *)u->s);
  return 1;
}

static int e_tostring(lua_State *L) {
  levent *e = check_event(L, 1);
  lua_pushfstring(L, "torch.cuda.Event(%s)", e->made ? "recorded" : "not recorded");
  return 1;
}

static int e_gc(lua_State *L) {
  levent *e = check_event(L, 1);
  if (e->made) {
    lt_cuda_guard g;
    if (lt_cuda_enter(e->dev, &g, "Event") == 0) {
      lt_cuda_driver()->event_destroy(e->e);
      lt_cuda_leave(&g);
    }
    e->made = false;
  }
  return 0;
}

static void open_stream_types(lua_State *L) {
  static const luaL_Reg smethods[] = {
    {"synchronize", s_synchronize}, {"query", s_query}, {"record_event", s_record_event},
    {"wait_event", s_wait_event}, {"wait_stream", s_wait_stream}, {NULL, NULL}
  };
  static const luaL_Reg emethods[] = {
    {"record", e_record}, {"query", e_query}, {"synchronize", e_synchronize},
    {"elapsed_time", e_elapsed_time}, {"wait", e_wait}, {NULL, NULL}
  };
  if (luaL_newmetatable(L, STREAM_MT)) {
    lua_newtable(L);
    luaL_setfuncs(L, smethods, 0);
    lua_setfield(L, -2, "methods");
    lua_pushcfunction(L, s_index); lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, s_eq); lua_setfield(L, -2, "__eq");
    lua_pushcfunction(L, s_tostring); lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, EVENT_MT)) {
    lua_newtable(L);
    luaL_setfuncs(L, emethods, 0);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, e_gc); lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, e_tostring); lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
}

/* For tests: {host = n, device = n, cpu = n}, the CUDA kernels' launches by
** build and the ops that ran the CPU's kernel instead since the last reset
** (reset when the argument is true). */
static int l_kernel_counts(lua_State *L) {
  long c[3];
  lt_cuda_kernel_counts(c, lua_toboolean(L, 1));
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, c[0]); lua_setfield(L, -2, "host");
  lua_pushinteger(L, c[1]); lua_setfield(L, -2, "device");
  lua_pushinteger(L, c[2]); lua_setfield(L, -2, "cpu");
  return 1;
}

/* For tests: the non-blocking copies from pinned memory not yet complete
** (their sources are held), after releasing those that are */
static int l_pending_pinned(lua_State *L) {
  lua_pushinteger(L, lt_cuda_reap_pinned_copies());
  return 1;
}

/* For tests under the fake driver (nil under a real one): the calls made to
** a driver entry (lt_cu_fake_calls), and holding or releasing the current
** device's default stream (lt_cu_fake_hold_stream) */
static int l_fake_calls(lua_State *L) {
  if (!lt_cuda_host_device_memory()) return 0;
  lua_pushinteger(L, lt_cu_fake_calls(luaL_checkstring(L, 1)));
  return 1;
}

static int l_fake_hold_stream(lua_State *L) {
  if (!lt_cuda_host_device_memory()) return 0;
  int dev = lt_device_current(LT_DEV_CUDA);
  lt_cuda_guard g;
  if (lt_cuda_enter(dev, &g, "_fake_hold_stream") < 0) return luaL_error(L, "%s", lt_error_message());
  lt_cu_fake_hold_stream(lt_cuda_current_stream(dev), lua_toboolean(L, 1));
  lt_cuda_leave(&g);
  lua_pushboolean(L, 1);
  return 1;
}

/* torch.profiler's CUDA activity (cuda/trace.h): _trace(true|false) starts or
** stops the events around launches and copies; _trace_collect() returns them
** as {name, kind = "kernel"|"memcpy", t0, t1, launch_ns (host ns), tid,
** device, stream, bytes} */
static int l_trace(lua_State *L) {
  lt_cuda_trace_set(lua_toboolean(L, 1));
  return 0;
}

static void push_trace_event(void *ud, const lt_cuda_trace_event *e) {
  lua_State *L = ud;
  lua_createtable(L, 0, 10);
  lua_pushstring(L, e->name); lua_setfield(L, -2, "name");
  lua_pushstring(L, e->kind == LT_CUDA_TRACE_MEMCPY ? "memcpy" : "kernel"); lua_setfield(L, -2, "kind");
  lua_pushinteger(L, e->t0); lua_setfield(L, -2, "t0");
  lua_pushinteger(L, e->t1 >= e->t0 ? e->t1 : e->t0); lua_setfield(L, -2, "t1");
  lua_pushinteger(L, e->launch_ns); lua_setfield(L, -2, "launch_ns");
  lua_pushinteger(L, e->tid); lua_setfield(L, -2, "tid");
  lua_pushinteger(L, e->dev); lua_setfield(L, -2, "device");
  lua_pushinteger(L, (lua_Integer)e->stream); lua_setfield(L, -2, "stream");
  lua_pushinteger(L, (lua_Integer)e->bytes); lua_setfield(L, -2, "bytes");
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
}

static int l_trace_collect(lua_State *L) {
  lua_newtable(L);
  lt_cuda_trace_collect(push_trace_event, L);
  return 1;
}

/* For tests: the cuBLAS GEMM calls made since the last reset (cuda/blas.h) */
static int l_blas_calls(lua_State *L) {
  lua_pushinteger(L, lt_cuda_blas_calls(lua_toboolean(L, 1)));
  return 1;
}

/* ---- kernels made at run time (rtc.h), for torch.compile (lib/compile/cuda.lua) ----
**   _rtc_nvrtc() -> "major.minor", path, include dir | nil, why
**   _rtc_headers() -> {name = text}: the headers the kernels include
**   _rtc_host_memory() -> whether device memory is host memory (the fake driver)
**   _rtc_compile(src, arch, {options}) -> image, log | nil, message
**   _rtc_load(image, name, device) -> kernel | nil, message
**   _rtc_launch(kernel, n, {tensors}, {extents})
**   _rtc_host_load(path, symbol) -> host kernel | nil, message
**   _rtc_host_run(host kernel, n, {tensors}, {extents})
** The extents are the elements each tensor's pointer must reach, checked
** against its storage (as torch._compiled_run does for the CPU's kernels). */
#define RTC_KERNEL_MT "lutorch.cuda.rtc_kernel"
#define RTC_HOST_MT "lutorch.cuda.rtc_host_kernel"

static int l_rtc_nvrtc(lua_State *L) {
  const char *v, *path, *inc, *why;
  if (lt_cuda_rtc_nvrtc(&v, &path, &inc, &why) < 0) { lua_pushnil(L); lua_pushstring(L, why); return 2; }
  lua_pushstring(L, v);
  lua_pushstring(L, path);
  if (inc[0]) lua_pushstring(L, inc); else lua_pushnil(L);
  return 3;
}

static int l_rtc_headers(lua_State *L) {
  lua_newtable(L);
  for (const lt_text_file *f = lt_cuda_rtc_headers; f->name; f++) {
    lua_pushlstring(L, f->text, f->len);
    lua_setfield(L, -2, f->name);
  }
  return 1;
}

static int l_rtc_host_memory(lua_State *L) {
  const char *why = NULL;
  lua_pushboolean(L, lt_cuda_backend_open(&why) == 0 && lt_cuda_host_device_memory());
  return 1;
}

static int l_rtc_compile(lua_State *L) {
  static const char op[] = "torch.cuda._rtc_compile";
  const char *src = luaL_checkstring(L, 1);
  const char *arch = luaL_checkstring(L, 2);
  if (strncmp(arch, "sm_", 3) != 0 && strncmp(arch, "compute_", 8) != 0)
    return luaL_error(L, "%s: argument 'arch': expected sm_NN or compute_NN, got '%s'", op, arch);
  const char *opts[LT_RTC_MAX_ARGS];
  int nopt = 0;
  if (!lua_isnoneornil(L, 3)) {
    luaL_checktype(L, 3, LUA_TTABLE);
    nopt = (int)lua_rawlen(L, 3);
    if (nopt > LT_RTC_MAX_ARGS - 2) return luaL_error(L, "%s: argument 'options': %d options (at most %d)", op, nopt, LT_RTC_MAX_ARGS - 2);
    for (int i = 0; i < nopt; i++) {
      if (lua_rawgeti(L, 3, i + 1) != LUA_TSTRING)
        return luaL_error(L, "%s: argument 'options': option %d is not a string", op, i + 1);
      opts[i] = lua_tostring(L, -1);   /* the table holds it */
      lua_pop(L, 1);
    }
  }
  size_t n = 0;
  char *log = NULL;
  char *image = lt_cuda_rtc_compile(src, arch, nopt, opts, &n, &log);
  if (image) lua_pushlstring(L, image, n); else lua_pushnil(L);
  lua_pushstring(L, log ? log : "out of memory");
  free(image);
  free(log);
  return 2;
}

static int rtc_kernel_gc(lua_State *L) {
  lt_cuda_rtc_unload(luaL_checkudata(L, 1, RTC_KERNEL_MT));
  return 0;
}

static int l_rtc_load(lua_State *L) {
  static const char op[] = "torch.cuda._rtc_load";
  size_t n = 0;
  const char *image = luaL_checklstring(L, 1, &n);
  const char *name = luaL_checkstring(L, 2);
  int dev = device_arg(L, 3, op);
  if (n == 0) return luaL_error(L, "%s: argument 'image' is empty", op);
  lt_cuda_rtc_kernel *k = lua_newuserdatauv(L, sizeof *k, 0);
  memset(k, 0, sizeof *k);
  luaL_setmetatable(L, RTC_KERNEL_MT);
  if (lt_cuda_rtc_load(k, image, name, dev, op) < 0) {
    lua_pushnil(L);
    lua_pushstring(L, lt_error_message());
    return 2;     /* the userdata unloads what was loaded when collected */
  }
  return 1;
}

/* arguments 2..4 of _rtc_launch and _rtc_host_run: n, every tensor on one cuda device (dev, or
** the first one's when dev < 0) reaching only its storage; their pointers into ptr */
static int64_t rtc_tensors(lua_State *L, const char *op, int *dev, void **ptr) {
  lua_Integer n = luaL_checkinteger(L, 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  luaL_checktype(L, 4, LUA_TTABLE);
  int nt = (int)lua_rawlen(L, 3);
  if (n < 0) luaL_error(L, "%s: argument 'n' must be >= 0, got %d", op, (int)n);
  if (nt < 1 || nt > LT_RTC_MAX_ARGS) luaL_error(L, "%s: %d tensors (1 to %d)", op, nt, LT_RTC_MAX_ARGS);
  if ((int)lua_rawlen(L, 4) != nt) luaL_error(L, "%s: one extent per tensor", op);
  for (int i = 0; i < nt; i++) {
    lua_rawgeti(L, 3, i + 1);
    lt_ud *u = NULL;
    if (lua_type(L, -1) == LUA_TUSERDATA && lua_rawlen(L, -1) == sizeof(lt_ud)) {
      u = lua_touserdata(L, -1);
      if (u->magic != LT_TENSOR_MAGIC || !u->t) u = NULL;
    }
    if (!u) luaL_error(L, "%s: tensor %d is not a live tensor", op, i + 1);
    lua_pop(L, 1);
    const lt_tensor *t = u->t;
    lt_device d = t->storage->device;
    if (d.type != LT_DEV_CUDA) luaL_error(L, "%s: tensor %d is not on a cuda device", op, i + 1);
    if (*dev < 0) *dev = d.index;
    if (d.index != *dev) luaL_error(L, "%s: tensor %d is on cuda:%d, the kernel runs on cuda:%d", op, i + 1, d.index, *dev);
    lua_rawgeti(L, 4, i + 1);
    lua_Integer extent = luaL_checkinteger(L, -1);
    lua_pop(L, 1);
    size_t es = lt_dtype_size((lt_dtype)t->dtype);
    if (extent < 0 || (size_t)(t->offset + extent) * es > t->storage->nbytes)
      luaL_error(L, "%s: tensor %d: the kernel reaches %d elements past offset %d, its storage holds %d "
                 "(a guard let through a tensor the kernel was not made for)", op, i + 1, (int)extent,
                 (int)t->offset, (int)(t->storage->nbytes / es));
    ptr[i] = (char *)t->storage->data + (size_t)t->offset * es;
  }
  return n;
}

static int l_rtc_launch(lua_State *L) {
  static const char op[] = "torch.cuda._rtc_launch";
  lt_cuda_rtc_kernel *k = luaL_testudata(L, 1, RTC_KERNEL_MT);
  if (!k || !k->loaded) return luaL_error(L, "%s: argument 'kernel' must be a loaded kernel", op);
  void *ptr[LT_RTC_MAX_ARGS];
  int dev = k->dev;
  int64_t n = rtc_tensors(L, op, &dev, ptr);
  if (lt_cuda_rtc_launch(k, n, (int)lua_rawlen(L, 3), ptr, op) < 0) return luaL_error(L, "%s", lt_error_message());
  return 0;
}

typedef struct rtc_host { void *handle; lt_cuda_rtc_host_fn fn; } rtc_host;

static int rtc_host_gc(lua_State *L) {
  rtc_host *h = luaL_checkudata(L, 1, RTC_HOST_MT);
  if (h->handle) dlclose(h->handle);
  h->handle = NULL;
  h->fn = NULL;
  return 0;
}

static int l_rtc_host_load(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  const char *sym = luaL_checkstring(L, 2);
  void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!so) {
    lua_pushnil(L);
    lua_pushfstring(L, "torch.cuda._rtc_host_load: %s", dlerror());
    return 2;
  }
  void *f = dlsym(so, sym);
  if (!f) {
    dlclose(so);
    lua_pushnil(L);
    lua_pushfstring(L, "torch.cuda._rtc_host_load: %s has no symbol '%s'", path, sym);
    return 2;
  }
  rtc_host *h = lua_newuserdatauv(L, sizeof *h, 0);
  h->handle = so;
  memcpy(&h->fn, &f, sizeof f);   /* POSIX: dlsym's object pointer is the function's */
  luaL_setmetatable(L, RTC_HOST_MT);
  return 1;
}

static int l_rtc_host_run(lua_State *L) {
  static const char op[] = "torch.cuda._rtc_host_run";
  rtc_host *h = luaL_testudata(L, 1, RTC_HOST_MT);
  if (!h || !h->fn) return luaL_error(L, "%s: argument 'kernel' must be a loaded host kernel", op);
  void *ptr[LT_RTC_MAX_ARGS];
  int dev = -1;
  int64_t n = rtc_tensors(L, op, &dev, ptr);
  if (lt_cuda_rtc_host_run(h->fn, dev, n, ptr, op) < 0) return luaL_error(L, "%s", lt_error_message());
  return 0;
}

static void open_rtc_types(lua_State *L) {
  if (luaL_newmetatable(L, RTC_KERNEL_MT)) {
    lua_pushcfunction(L, rtc_kernel_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, RTC_HOST_MT)) {
    lua_pushcfunction(L, rtc_host_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
}

static const luaL_Reg functions[] = {
  {"_rtc_nvrtc", l_rtc_nvrtc}, {"_rtc_headers", l_rtc_headers}, {"_rtc_host_memory", l_rtc_host_memory},
  {"_rtc_compile", l_rtc_compile}, {"_rtc_load", l_rtc_load}, {"_rtc_launch", l_rtc_launch},
  {"_rtc_host_load", l_rtc_host_load}, {"_rtc_host_run", l_rtc_host_run},
  {"_kernel_counts", l_kernel_counts}, {"_pending_pinned_copies", l_pending_pinned},
  {"_fake_calls", l_fake_calls}, {"_fake_hold_stream", l_fake_hold_stream}, {"_blas_calls", l_blas_calls},
  {"_trace", l_trace}, {"_trace_collect", l_trace_collect},
  {"Stream", l_stream_new}, {"Event", l_event_new}, {"current_stream", l_current_stream},
  {"default_stream", l_default_stream}, {"set_stream", l_set_stream}, {"stream", l_stream_guard},
  {"device", l_device_guard},
  {"get_device_name", l_get_device_name}, {"get_device_properties", l_get_device_properties},
  {"get_device_capability", l_get_device_capability}, {"mem_get_info", l_mem_get_info},
  {"memory_stats", l_memory_stats}, {"set_per_process_memory_fraction", l_set_memory_fraction},
  {NULL, NULL}
};

int luaopen_lutorch_cuda(lua_State *L) {
  const char *why = NULL;
  bool ok = lt_cuda_backend_open(&why) == 0;
  open_stream_types(L);
  lua_createtable(L, 0, 24);
  luaL_setfuncs(L, functions, 0);
  open_rtc_types(L);
  lua_pushboolean(L, ok); lua_setfield(L, -2, "available");
  if (ok) {
    lua_pushstring(L, lt_cuda_driver()->name); lua_setfield(L, -2, "driver");
    lua_pushinteger(L, lt_cuda_device_count()); lua_setfield(L, -2, "device_count");
  } else {
    lua_pushstring(L, why); lua_setfield(L, -2, "reason");
  }
  return 1;
}
