/*
** lbackend_load.c — loading a device's backend module on first use. The CUDA
** backend is lutorch_cuda.so, beside the library (not in it: the core does
** not depend on it). The first time anything asks for a CUDA device
** (torch.cuda.is_available(), x:cuda(), a device argument), the binding
** looks for the module, opens it and calls its lt_cuda_backend_open, which
** registers the backend when a driver is found. The outcome is kept for the
** process, and so is the reason when there is no backend, which torch.cuda
** and the "no CUDA device is present" errors show.
**
** Where the module is looked for: $LUTORCH_CUDA_SO when set (alone), else
** beside the object that holds this code (the lutorch program, torch.so or
** liblutorch.so), in DIR/, DIR/../lib/lutorch/ (the program in bin/) and
** DIR/lutorch/ (liblutorch.so in lib/) — where `make install` puts it.
**
** The module's undefined symbols are the core's: they resolve against the
** holder when its symbols are global (the program exports them, -Wl,-E;
** liblutorch.so is linked normally). A stock lua5.4 opens torch.so with
** RTLD_LOCAL, so the holder is promoted to global scope first.
*/
#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/backend.h"
#include "ltensor.h"

static pthread_once_t cuda_once = PTHREAD_ONCE_INIT;
static void *cuda_handle;
static const char *cuda_reason = "the CUDA backend was not looked for";
static char reason_buf[2 * PATH_MAX + 256];

/* the path of the object holding this function, and whether it is the main program */
static int holder_path(char *out, size_t n, bool *is_main) {
  Dl_info info;
  struct link_map *lm = NULL;
  *is_main = false;
  if (!dladdr1((void *)lt_vm_backend_load, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm) return -1;
  const char *name = lm->l_name;
  if (!name || !name[0]) {
    *is_main = true;
    ssize_t k = readlink("/proc/self/exe", out, n - 1);
    if (k <= 0) return -1;
    out[k] = 0;
    return 0;
  }
  char real[PATH_MAX];
  snprintf(out, n, "%s", realpath(name, real) ? real : name);
  return 0;
}

typedef int (*open_fn)(const char **why);

static void set_reason(const char *fmt, const char *a, const char *b) {
  snprintf(reason_buf, sizeof reason_buf, fmt, a, b);
  cuda_reason = reason_buf;
}

/* 1: opened (backend registered or reason set), 0: no file there, -1: load failed (reason set) */
static int try_module(const char *path) {
  if (access(path, F_OK) != 0) return 0;
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) { set_reason("lutorch_cuda.so could not be loaded: %s%s", dlerror(), ""); return -1; }
  open_fn open = (open_fn)dlsym(h, "lt_cuda_backend_open");
  if (!open) { set_reason("%s has no lt_cuda_backend_open%s", path, ""); dlclose(h); return -1; }
  cuda_handle = h;          /* kept open for the process: the backend lives in it */
  const char *why = NULL;
  if (open(&why) < 0) cuda_reason = why ? why : "the CUDA backend did not open";
  else cuda_reason = NULL;
  return 1;
}

static void load_cuda(void) {
  const char *env = getenv("LUTORCH_CUDA_SO");
  if (env && env[0]) {
    if (try_module(env) == 0) set_reason("lutorch_cuda.so not found at LUTORCH_CUDA_SO=%s%s", env, "");
    return;
  }
  char self[PATH_MAX];
  bool is_main;
  if (holder_path(self, sizeof self, &is_main) < 0) {
    cuda_reason = "lutorch_cuda.so not found (the library's own path is unknown; set LUTORCH_CUDA_SO)";
    return;
  }
  /* make the core's symbols visible to the module (see the head of the file) */
  if (!is_main) {
    void *me = dlopen(self, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
    (void)me;   /* a reference that is never dropped: the holder stays loaded anyway */
  }
  char *slash = strrchr(self, '/');
  const char *dir = self;
  if (slash) *slash = 0;
  else dir = ".";
  static const char *const rel[] = {"/lutorch_cuda.so", "/../lib/lutorch/lutorch_cuda.so", "/lutorch/lutorch_cuda.so"};
  char path[PATH_MAX + 64];
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
    snprintf(path, sizeof path, "%s%s", dir, rel[i]);
    if (try_module(path) != 0) return;
  }
  set_reason("lutorch_cuda.so not found beside %s (set LUTORCH_CUDA_SO)%s", dir, "");
}

int lt_vm_backend_load(int device_type) {
  if (lt_backend_get(device_type)) return 0;
  if (device_type != LT_DEV_CUDA) return -1;
  pthread_once(&cuda_once, load_cuda);
  return lt_backend_get(device_type) ? 0 : -1;
}

const char *lt_vm_backend_unavailable(int device_type) {
  if (lt_vm_backend_load(device_type) == 0) return NULL;
  return device_type == LT_DEV_CUDA ? cuda_reason : "no such backend";
}

void *lt_vm_backend_symbol(int device_type, const char *name) {
  if (device_type != LT_DEV_CUDA) return NULL;
  pthread_once(&cuda_once, load_cuda);
  return cuda_handle ? dlsym(cuda_handle, name) : NULL;
}
