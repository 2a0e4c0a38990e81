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
** Lua reaches these through lcuda.c (torch.cuda._rtc_*).
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

int lt_cuda_rtc_nvrtc(const char **version, const char **path, const char **include, const char **why) {
  static char ver[32];
  if (!nv_ready()) {
    if (why) *why = nv.why;
    return -1;
  }
  snprintf(ver, sizeof ver, "%d.%d", nv.major, nv.minor);
  if (version) *version = ver;
  if (path) *path = nv.path;
  if (include) *include = nv.include;
  return 0;
}

/* the program's log, malloc'd ("" when there is none) */
static char *program_log(nvrtc_prog p) {
  size_t n = 0;
  if (nv.log_size(p, &n) != 0) n = 0;
  char *s = malloc(n > 1 ? n : 1);
  if (!s) return NULL;
  if (n <= 1 || nv.log(p, s) != 0) s[0] = 0;
  return s;
}

static char *message(const char *fmt, const char *a, const char *b) {
  size_t n = strlen(fmt) + strlen(a) + (b ? strlen(b) : 0) + 64;
  char *s = malloc(n);
  if (s) snprintf(s, n, fmt, a, b ? b : "");
  return s;
}

char *lt_cuda_rtc_compile(const char *src, const char *arch, int nopt, const char *const *opts, size_t *n,
                          char **log) {
  *n = 0;
  *log = NULL;
  int cubin = strncmp(arch, "sm_", 3) == 0;
  if (!nv_ready()) { *log = message("%s%s", nv.why, NULL); return NULL; }
  if (nopt < 0 || nopt > LT_RTC_MAX_ARGS - 2) { *log = message("%s%s", "too many NVRTC options", NULL); return NULL; }
  char archopt[96], incopt[PATH_MAX + 32];
  const char *all[LT_RTC_MAX_ARGS];
  int k = 0;
  snprintf(archopt, sizeof archopt, "--gpu-architecture=%.64s", arch);
  all[k++] = archopt;
  if (nv.include[0]) {
    snprintf(incopt, sizeof incopt, "--include-path=%s", nv.include);
    all[k++] = incopt;
  }
  for (int i = 0; i < nopt; i++) all[k++] = opts[i];
  const char *hdr_text[8], *hdr_name[8];
  int nh = 0;
  for (const lt_text_file *f = lt_cuda_rtc_headers; f->name && nh < 8; f++, nh++) {
    hdr_text[nh] = f->text;
    hdr_name[nh] = f->name;
  }
  nvrtc_prog p = NULL;
  nvrtc_result r = nv.create(&p, src, "lt_fused.cu", nh, hdr_text, hdr_name);
  if (r != 0) { *log = message("nvrtcCreateProgram failed: %s%s", nv.error_string(r), NULL); return NULL; }
  r = nv.compile(p, k, all);
  char *plog = program_log(p);
  if (r != 0) {
    char head[128];
    snprintf(head, sizeof head, "NVRTC %d.%d (%.32s) failed: %s\n", nv.major, nv.minor, arch, nv.error_string(r));
    *log = message("%s%s", head, plog ? plog : "");
    free(plog);
    nv.destroy(&p);
    return NULL;
  }
  size_t size = 0;
  r = cubin ? nv.cubin_size(p, &size) : nv.ptx_size(p, &size);
  char *image = r == 0 && size > 0 ? malloc(size) : NULL;
  /* PTX comes with its NUL, which cuModuleLoadData wants: it is kept */
  if (image && (cubin ? nv.cubin(p, image) : nv.ptx(p, image)) != 0) { free(image); image = NULL; }
  nv.destroy(&p);
  if (!image) {
    free(plog);
    *log = message("NVRTC gave no %s%s", cubin ? "cubin" : "PTX", NULL);
    return NULL;
  }
  *n = size;
  *log = plog;
  return image;
}

/* ---- loaded images ---- */
int lt_cuda_rtc_load(lt_cuda_rtc_kernel *k, const void *image, const char *name, int dev, const char *op) {
  memset(k, 0, sizeof *k);
  lt_cuda_guard g;
  if (lt_cuda_enter(dev, &g, op) < 0) return -1;
  const lt_cu_driver *d = lt_cuda_driver();
  lt_cu_result r = d->module_load_data(&k->module, image);
  if (r == LT_CU_SUCCESS) {
    k->loaded = 1;
    k->dev = dev;
    r = d->module_get_function(&k->fn, k->module, name);
  }
  lt_cuda_leave(&g);
  if (r != LT_CU_SUCCESS)
    return lt_error("%s: cuda:%d: %s %s failed: %s", op, dev, k->loaded ? "cuModuleGetFunction" : "cuModuleLoadData",
                    name, lt_cu_result_name(r));
  return 0;
}

void lt_cuda_rtc_unload(lt_cuda_rtc_kernel *k) {
  if (!k->loaded) return;
  lt_cuda_guard g;
  if (lt_cuda_enter(k->dev, &g, "lt_cuda_rtc_unload") == 0) {
    (void)lt_cuda_driver()->module_unload(k->module);
    lt_cuda_leave(&g);
  } else {
    lt_error_clear();
  }
  k->loaded = 0;
}

static unsigned blocks_for(int64_t n) {
  int64_t b = (n + LT_RTC_BLOCK - 1) / LT_RTC_BLOCK;
  return (unsigned)(b < 1 ? 1 : b > LT_RTC_MAX_BLOCKS ? LT_RTC_MAX_BLOCKS : b);
}

int64_t lt_cuda_rtc_threads(int64_t n) { return (int64_t)blocks_for(n) * LT_RTC_BLOCK; }

int lt_cuda_rtc_launch(const lt_cuda_rtc_kernel *k, int64_t n, int nptr, void *const *ptr, const char *op) {
  if (!k->loaded) return lt_error("%s: the kernel is not loaded", op);
  if (nptr < 0 || nptr > LT_RTC_MAX_ARGS) return lt_error("%s: %d tensors (at most %d)", op, nptr, LT_RTC_MAX_ARGS);
  if (n <= 0) return 0;
  void *params[LT_RTC_MAX_ARGS + 1];
  lt_cu_ptr ptrs[LT_RTC_MAX_ARGS];
  params[0] = &n;
  for (int i = 0; i < nptr; i++) {
    ptrs[i] = (lt_cu_ptr)(uintptr_t)ptr[i];
    params[i + 1] = &ptrs[i];
  }
  lt_cuda_launch l;
  if (lt_cuda_launch_begin(&l, k->dev, true, op) < 0) return -1;
  lt_cu_result r = lt_cuda_driver()->launch_kernel(k->fn, blocks_for(n), 1, 1, LT_RTC_BLOCK, 1, 1, 0,
                                                   (lt_cu_stream)l.stream, params, NULL);
  lt_cuda_launch_end(&l);
  if (r != LT_CU_SUCCESS) return lt_error("%s: cuda:%d: cuLaunchKernel failed: %s", op, k->dev, lt_cu_result_name(r));
  return lt_cuda_launch_result(&l, op, LT_CK_OK, NULL);
}

int lt_cuda_rtc_host_run(lt_cuda_rtc_host_fn fn, int dev, int64_t n, void *const *ptr, const char *op) {
  if (!lt_cuda_host_device_memory())
    return lt_error("%s: the host build runs only where device memory is host memory (the fake driver)", op);
  if (n <= 0) return 0;
  lt_cuda_launch l;
  if (lt_cuda_launch_begin(&l, dev, true, op) < 0) return -1;
  fn(lt_cuda_rtc_threads(n), n, ptr);
  lt_cuda_launch_end(&l);
  return lt_cuda_launch_result(&l, op, LT_CK_OK, NULL);
}
