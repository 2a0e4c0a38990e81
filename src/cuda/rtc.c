/*
** rtc.c — kernels made at run time (rtc.h): NVRTC opened with dlopen, the
** compiled images loaded and launched through the driver seam, and the host
** builds of the same sources run over the fake driver's memory.
**
** Finding NVRTC. As the driver is (driver.c), the library is opened at run
** time and never linked: LUTORCH_NVRTC names it (a path, or "none" to do
** without); else the loader's search for libnvrtc.so.13, .so.12 and .so,
** then those names under $CUDA_HOME/lib64, $CUDA_PATH/lib64 and
** /usr/local/cuda/lib64. The toolkit's include directory (cuda_fp16.h, which
** ck_math.h includes under NVRTC) is the library's ../include, else
** $CUDA_HOME/include, else /usr/local/cuda/include. The library stays open.
**
** Nothing here has run on a GPU: under the fake driver the images are
** compiled and loaded (the fake checks them and finds the entry) and the
** host builds run; tools/gpu_check.sh has the stage that launches them.
*/
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/error.h"
#include "cuda/cuda.h"
#include "cuda/launch.h"
#include "cuda/rtc.h"
#include "vm/ltensor.h"

/* the embedded headers (tools/embed_text.lua, made by the Makefile) */
typedef struct lt_text_file { const char *name; const char *text; size_t len; } lt_text_file;
extern const lt_text_file lt_cuda_rtc_headers[];

#define KERNEL_MT "lutorch.cuda.rtc_kernel"
#define HOST_MT "lutorch.cuda.rtc_host_kernel"
#define MAX_ARGS 64

/* ---- NVRTC ---- */
typedef int nvrtc_result;                 /* nvrtcResult: 0 is NVRTC_SUCCESS */
typedef struct nvrtc_prog_ *nvrtc_prog;   /* nvrtcProgram */

static struct {
  nvrtc_result (*version)(int *, int *);
  nvrtc_result (*create)(nvrtc_prog *, const char *, const char *, int, const char *const *, const char *const *);
  nvrtc_result (*destroy)(nvrtc_prog *);
  nvrtc_result (*compile)(nvrtc_prog, int, const char *const *);
  nvrtc_result (*log_size)(nvrtc_prog, size_t *);
  nvrtc_result (*log)(nvrtc_prog, char *);
  nvrtc_result (*cubin_size)(nvrtc_prog, size_t *);
  nvrtc_result (*cubin)(nvrtc_prog, char *);
  nvrtc_result (*ptx_size)(nvrtc_prog, size_t *);
  nvrtc_result (*ptx)(nvrtc_prog, char *);
  const char *(*error_string)(nvrtc_result);
  int major, minor;
  char path[PATH_MAX], include[PATH_MAX];
  const char *why;                        /* NULL once opened */
  char why_buf[PATH_MAX + 128];
} nv;
static pthread_once_t nv_once = PTHREAD_ONCE_INIT;

/* out = a + b when it fits in PATH_MAX (else 0: such a path is not tried) */
static int path_join(char *out, const char *a, const char *b) {
  size_t na = strlen(a), nb = strlen(b);
  if (na + nb + 1 > PATH_MAX) return 0;
  memcpy(out, a, na);
  memcpy(out + na, b, nb + 1);
  return 1;
}

static void *try_open(const char *dir, const char *name) {
  char p[PATH_MAX], d[PATH_MAX];
  if (!dir) return dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!path_join(d, dir, "/") || !path_join(p, d, name)) return NULL;
  return dlopen(p, RTLD_NOW | RTLD_LOCAL);
}

static int has_fp16(const char *dir) {
  char p[PATH_MAX];
  return path_join(p, dir, "/cuda_fp16.h") && access(p, R_OK) == 0;
}

static void find_include(void) {
  char dir[PATH_MAX], real[PATH_MAX];
  /* the library's ../include (lib64 -> include; targets/x86_64-linux/lib -> include) */
  memcpy(dir, nv.path, sizeof dir);
  char *slash = strrchr(dir, '/');
  if (slash) {
    *slash = 0;
    if (path_join(real, dir, "/../include") && realpath(real, dir) && has_fp16(dir)) {
      memcpy(nv.include, dir, sizeof nv.include);
      return;
    }
  }
  const char *envs[] = {"CUDA_HOME", "CUDA_PATH"};
  for (int i = 0; i < 2; i++) {
    const char *h = getenv(envs[i]);
    if (!h || !*h) continue;
    if (path_join(dir, h, "/include") && has_fp16(dir)) { memcpy(nv.include, dir, sizeof nv.include); return; }
  }
  if (has_fp16("/usr/local/cuda/include")) memcpy(nv.include, "/usr/local/cuda/include", sizeof "/usr/local/cuda/include");
}

static void nv_open(void) {
  static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  const char *env = getenv("LUTORCH_NVRTC");
  void *h = NULL;
  if (env && strcmp(env, "none") == 0) { nv.why = "NVRTC turned off (LUTORCH_NVRTC=none)"; return; }
  if (env && *env) {
    h = try_open(NULL, env);
    if (!h) {
      snprintf(nv.why_buf, sizeof nv.why_buf, "LUTORCH_NVRTC=%.200s could not be loaded: %s", env, dlerror());
      nv.why = nv.why_buf;
      return;
    }
  }
  for (size_t i = 0; !h && i < sizeof names / sizeof names[0]; i++) h = try_open(NULL, names[i]);
  const char *dirs[3] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  for (int d = 0; !h && d < 3; d++) {
    if (!dirs[d] || !*dirs[d]) continue;
    char lib[PATH_MAX];
    if (!path_join(lib, dirs[d], "/lib64")) continue;
    for (size_t i = 0; !h && i < sizeof names / sizeof names[0]; i++) h = try_open(lib, names[i]);
  }
  if (!h) { nv.why = "libnvrtc not found (no CUDA toolkit: set LUTORCH_NVRTC or CUDA_HOME)"; return; }
  struct { void *slot; const char *name; } syms[] = {
    {&nv.version, "nvrtcVersion"}, {&nv.create, "nvrtcCreateProgram"}, {&nv.destroy, "nvrtcDestroyProgram"},
    {&nv.compile, "nvrtcCompileProgram"}, {&nv.log_size, "nvrtcGetProgramLogSize"},
    {&nv.log, "nvrtcGetProgramLog"}, {&nv.cubin_size, "nvrtcGetCUBINSize"}, {&nv.cubin, "nvrtcGetCUBIN"},
    {&nv.ptx_size, "nvrtcGetPTXSize"}, {&nv.ptx, "nvrtcGetPTX"}, {&nv.error_string, "nvrtcGetErrorString"},
  };
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    void *p = dlsym(h, syms[i].name);
    if (!p) {
      snprintf(nv.why_buf, sizeof nv.why_buf, "libnvrtc has no %s (older than CUDA 11.1?)", syms[i].name);
      nv.why = nv.why_buf;
      return;
    }
    memcpy(syms[i].slot, &p, sizeof p);
  }
  if (nv.version(&nv.major, &nv.minor) != 0) { nv.why = "nvrtcVersion failed"; return; }
  Dl_info info;
  if (dladdr((void *)nv.version, &info) && info.dli_fname) {
    if (!realpath(info.dli_fname, nv.path) && !path_join(nv.path, info.dli_fname, "")) nv.path[0] = 0;
  }
  find_include();
  nv.why = NULL;
}

static int nv_ready(void) {
  pthread_once(&nv_once, nv_open);
  return nv.why == NULL;
}

static int l_nvrtc(lua_State *L) {
  if (!nv_ready()) { lua_pushnil(L); lua_pushstring(L, nv.why); return 2; }
  lua_pushfstring(L, "%d.%d", nv.major, nv.minor);
  lua_pushstring(L, nv.path);
  if (nv.include[0]) lua_pushstring(L, nv.include); else lua_pushnil(L);
  return 3;
}

static int l_headers(lua_State *L) {
  lua_newtable(L);
  for (const lt_text_file *f = lt_cuda_rtc_headers; f->name; f++) {
    lua_pushlstring(L, f->text, f->len);
    lua_setfield(L, -2, f->name);
  }
  return 1;
}

/* the program's log, pushed (an empty string when there is none) */
static void push_log(lua_State *L, nvrtc_prog p) {
  size_t n = 0;
  if (nv.log_size(p, &n) != 0 || n <= 1) { lua_pushliteral(L, ""); return; }
  luaL_Buffer b;
  char *s = luaL_buffinitsize(L, &b, n);
  if (nv.log(p, s) != 0) n = 1;
  luaL_pushresultsize(&b, n - 1);
}

/* _rtc_compile(src, arch, {options}) -> image, log | nil, message */
static int l_compile(lua_State *L) {
  static const char op[] = "torch.cuda._rtc_compile";
  const char *src = luaL_checkstring(L, 1);
  const char *arch = luaL_checkstring(L, 2);
  if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
  lua_settop(L, 3);   /* what is pushed below comes after the options */
  int cubin = strncmp(arch, "sm_", 3) == 0;
  if (!cubin && strncmp(arch, "compute_", 8) != 0)
    return luaL_error(L, "%s: argument 'arch': expected sm_NN or compute_NN, got '%s'", op, arch);
  if (!nv_ready()) { lua_pushnil(L); lua_pushstring(L, nv.why); return 2; }
  const char *opts[MAX_ARGS];
  int nopt = 0;
  lua_pushfstring(L, "--gpu-architecture=%s", arch);
  opts[nopt++] = lua_tostring(L, -1);
  if (nv.include[0]) {
    lua_pushfstring(L, "--include-path=%s", nv.include);
    opts[nopt++] = lua_tostring(L, -1);
  }
  int extra = lua_isnil(L, 3) ? 0 : (int)lua_rawlen(L, 3);
  if (extra > MAX_ARGS - nopt) return luaL_error(L, "%s: argument 'options': %d options (at most %d)", op, extra, MAX_ARGS - nopt);
  for (int i = 1; i <= extra; i++) {
    lua_rawgeti(L, 3, i);
    if (lua_type(L, -1) != LUA_TSTRING) return luaL_error(L, "%s: argument 'options': option %d is not a string", op, i);
    opts[nopt++] = lua_tostring(L, -1);   /* kept on the stack until the end */
  }
  const char *hdr_text[8], *hdr_name[8];
  int nh = 0;
  for (const lt_text_file *f = lt_cuda_rtc_headers; f->name && nh < 8; f++, nh++) {
    hdr_text[nh] = f->text;
    hdr_name[nh] = f->name;
  }
  nvrtc_prog p = NULL;
  nvrtc_result r = nv.create(&p, src, "lt_fused.cu", nh, hdr_text, hdr_name);
  if (r != 0) {
    lua_pushnil(L);
    lua_pushfstring(L, "nvrtcCreateProgram failed: %s", nv.error_string(r));
    return 2;
  }
  r = nv.compile(p, nopt, opts);
  if (r != 0) {
    lua_pushnil(L);
    lua_pushfstring(L, "NVRTC %d.%d (%s) failed: %s\n", nv.major, nv.minor, arch, nv.error_string(r));
    push_log(L, p);
    lua_concat(L, 2);
    nv.destroy(&p);
    return 2;
  }
  size_t n = 0;
  r = cubin ? nv.cubin_size(p, &n) : nv.ptx_size(p, &n);
  if (r == 0 && n > 0) {
    luaL_Buffer b;
    char *s = luaL_buffinitsize(L, &b, n);
    r = cubin ? nv.cubin(p, s) : nv.ptx(p, s);
    /* PTX comes with its NUL, which cuModuleLoadData wants: the Lua string keeps it */
    luaL_pushresultsize(&b, n);
  }
  if (r != 0 || n == 0) {
    lua_pushnil(L);
    lua_pushfstring(L, "NVRTC gave no %s: %s", cubin ? "cubin" : "PTX", nv.error_string(r));
    nv.destroy(&p);
    return 2;
  }
  push_log(L, p);
  nv.destroy(&p);
  return 2;
}

/* ---- loaded images ---- */
typedef struct rtc_kernel {
  lt_cu_module module;
  lt_cu_function fn;
  int dev;
  int loaded;
} rtc_kernel;

static int kernel_gc(lua_State *L) {
  rtc_kernel *k = luaL_checkudata(L, 1, KERNEL_MT);
  if (k->loaded) {
    lt_cuda_guard g;
    if (lt_cuda_enter(k->dev, &g, "torch.cuda._rtc_load") == 0) {
      (void)lt_cuda_driver()->module_unload(k->module);
      lt_cuda_leave(&g);
    } else {
      lt_error_clear();
    }
    k->loaded = 0;
  }
  return 0;
}

/* _rtc_load(image, name, device) -> kernel | nil, message */
static int l_load(lua_State *L) {
  static const char op[] = "torch.cuda._rtc_load";
  size_t n = 0;
  const char *image = luaL_checklstring(L, 1, &n);
  const char *name = luaL_checkstring(L, 2);
  lua_Integer dev = luaL_checkinteger(L, 3);
  const char *why = NULL;
  if (lt_cuda_backend_open(&why) < 0) return luaL_error(L, "%s: CUDA is not available: %s", op, why);
  if (dev < 0 || dev >= lt_cuda_device_count()) return luaL_error(L, "%s: argument 'device': no cuda:%d", op, (int)dev);
  if (n == 0) return luaL_error(L, "%s: argument 'image' is empty", op);
  rtc_kernel *k = lua_newuserdatauv(L, sizeof *k, 0);
  memset(k, 0, sizeof *k);
  luaL_setmetatable(L, KERNEL_MT);
  lt_cuda_guard g;
  if (lt_cuda_enter((int)dev, &g, op) < 0) return luaL_error(L, "%s", lt_error_message());
  const lt_cu_driver *d = lt_cuda_driver();
  lt_cu_result r = d->module_load_data(&k->module, image);
  if (r == LT_CU_SUCCESS) {
    k->loaded = 1;
    k->dev = (int)dev;
    r = d->module_get_function(&k->fn, k->module, name);
  }
  lt_cuda_leave(&g);
  if (r != LT_CU_SUCCESS) {
    lua_pushnil(L);
    lua_pushfstring(L, "%s: cuda:%d: %s %s failed: %s", op, (int)dev, k->loaded ? "cuModuleGetFunction" : "cuModuleLoadData",
                    name, lt_cu_result_name(r));
    return 2;
  }
  return 1;
}

/* ---- the tensors of a run ---- */
typedef struct run_args {
  int dev;
  int nt;
  int64_t n;
  void *ptr[MAX_ARGS];
} run_args;

/* arguments 2..4 of _rtc_launch and _rtc_host_run: every tensor on one cuda
** device (dev, or the first one's when dev < 0), reaching only its storage */
static void collect(lua_State *L, const char *op, int dev, run_args *a) {
  a->n = luaL_checkinteger(L, 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  luaL_checktype(L, 4, LUA_TTABLE);
  a->nt = (int)lua_rawlen(L, 3);
  if (a->n < 0) luaL_error(L, "%s: argument 'n' must be >= 0, got %d", op, (int)a->n);
  if (a->nt < 1 || a->nt > MAX_ARGS) luaL_error(L, "%s: %d tensors (1 to %d)", op, a->nt, MAX_ARGS);
  if ((int)lua_rawlen(L, 4) != a->nt) luaL_error(L, "%s: one extent per tensor", op);
  a->dev = dev;
  for (int i = 0; i < a->nt; i++) {
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
    if (a->dev < 0) a->dev = d.index;
    if (d.index != a->dev) luaL_error(L, "%s: tensor %d is on cuda:%d, the kernel runs on cuda:%d", op, i + 1, d.index, a->dev);
    lua_rawgeti(L, 4, i + 1);
    lua_Integer extent = luaL_checkinteger(L, -1);
    lua_pop(L, 1);
    size_t es = lt_dtype_size((lt_dtype)t->dtype);
    if (extent < 0 || (size_t)(t->offset + extent) * es > t->storage->nbytes)
      luaL_error(L, "%s: tensor %d: the kernel reaches %d elements past offset %d, its storage holds %d "
                 "(a guard let through a tensor the kernel was not made for)", op, i + 1, (int)extent,
                 (int)t->offset, (int)(t->storage->nbytes / es));
    a->ptr[i] = (char *)t->storage->data + (size_t)t->offset * es;
  }
}

static unsigned blocks_for(int64_t n) {
  int64_t b = (n + LT_RTC_BLOCK - 1) / LT_RTC_BLOCK;
  return (unsigned)(b < 1 ? 1 : b > LT_RTC_MAX_BLOCKS ? LT_RTC_MAX_BLOCKS : b);
}

/* _rtc_launch(kernel, n, {tensors}, {extents}): queued on the device's current stream */
static int l_launch(lua_State *L) {
  static const char op[] = "torch.cuda._rtc_launch";
  rtc_kernel *k = luaL_testudata(L, 1, KERNEL_MT);
  if (!k || !k->loaded) return luaL_error(L, "%s: argument 'kernel' must be a loaded kernel", op);
  run_args a;
  collect(L, op, k->dev, &a);
  if (a.n == 0) return 0;
  void *params[MAX_ARGS + 1];
  lt_cu_ptr ptrs[MAX_ARGS];
  params[0] = &a.n;
  for (int i = 0; i < a.nt; i++) {
    ptrs[i] = (lt_cu_ptr)(uintptr_t)a.ptr[i];
    params[i + 1] = &ptrs[i];
  }
  lt_cuda_launch l;
  if (lt_cuda_launch_begin(&l, k->dev, true, op) < 0) return luaL_error(L, "%s", lt_error_message());
  lt_cu_result r = lt_cuda_driver()->launch_kernel(k->fn, blocks_for(a.n), 1, 1, LT_RTC_BLOCK, 1, 1, 0,
                                                   (lt_cu_stream)l.stream, params, NULL);
  lt_cuda_launch_end(&l);
  if (r != LT_CU_SUCCESS) return luaL_error(L, "%s: cuda:%d: cuLaunchKernel failed: %s", op, k->dev, lt_cu_result_name(r));
  lt_cuda_launch_result(&l, op, 0, NULL);
  return 0;
}

/* ---- host builds ---- */
typedef void (*host_fn)(int64_t nthreads, int64_t n, void *const *ptr);
typedef struct host_kernel { void *handle; host_fn fn; } host_kernel;

static int host_gc(lua_State *L) {
  host_kernel *k = luaL_checkudata(L, 1, HOST_MT);
  if (k->handle) dlclose(k->handle);
  k->handle = NULL;
  k->fn = NULL;
  return 0;
}

static int l_host_load(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  const char *sym = luaL_checkstring(L, 2);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    lua_pushnil(L);
    lua_pushfstring(L, "torch.cuda._rtc_host_load: %s", dlerror());
    return 2;
  }
  void *f = dlsym(h, sym);
  if (!f) {
    dlclose(h);
    lua_pushnil(L);
    lua_pushfstring(L, "torch.cuda._rtc_host_load: %s has no symbol '%s'", path, sym);
    return 2;
  }
  host_kernel *k = lua_newuserdatauv(L, sizeof *k, 0);
  k->handle = h;
  memcpy(&k->fn, &f, sizeof f);
  luaL_setmetatable(L, HOST_MT);
  return 1;
}

/* _rtc_host_run(kernel, n, {tensors}, {extents}): the host build over device memory that is
** host memory (the fake driver), after the stream's earlier work, on the launch's grid */
static int l_host_run(lua_State *L) {
  static const char op[] = "torch.cuda._rtc_host_run";
  host_kernel *k = luaL_testudata(L, 1, HOST_MT);
  if (!k || !k->fn) return luaL_error(L, "%s: argument 'kernel' must be a loaded host kernel", op);
  if (!lt_cuda_host_device_memory())
    return luaL_error(L, "%s: the host build runs only where device memory is host memory (the fake driver)", op);
  run_args a;
  collect(L, op, -1, &a);
  if (a.n == 0) return 0;
  lt_cuda_launch l;
  if (lt_cuda_launch_begin(&l, a.dev, true, op) < 0) return luaL_error(L, "%s", lt_error_message());
  k->fn((int64_t)blocks_for(a.n) * LT_RTC_BLOCK, a.n, a.ptr);
  lt_cuda_launch_end(&l);
  lt_cuda_launch_result(&l, op, 0, NULL);
  return 0;
}

/* _rtc_host_memory() -> whether device memory is host memory (the fake driver): host builds run */
static int l_host_memory(lua_State *L) {
  const char *why = NULL;
  lua_pushboolean(L, lt_cuda_backend_open(&why) == 0 && lt_cuda_host_device_memory());
  return 1;
}

const luaL_Reg lt_cuda_rtc_functions[] = {
  {"_rtc_nvrtc", l_nvrtc}, {"_rtc_host_memory", l_host_memory}, {"_rtc_headers", l_headers}, {"_rtc_compile", l_compile},
  {"_rtc_load", l_load}, {"_rtc_launch", l_launch},
  {"_rtc_host_load", l_host_load}, {"_rtc_host_run", l_host_run},
  {NULL, NULL}
};

void lt_cuda_rtc_open(lua_State *L) {
  if (luaL_newmetatable(L, KERNEL_MT)) {
    lua_pushcfunction(L, kernel_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, HOST_MT)) {
    lua_pushcfunction(L, host_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
}
