/*
** test_kernels_load.c — the nvcc build of the kernels links into a shared
** object with the static CUDA runtime (CK_DEV_LIBS in the Makefile), and that
** object loads with every symbol resolved on a machine without a driver: the
** runtime finds the driver itself, at the first launch, and a launch then
** fails cleanly with cudaErrorInsufficientDriver (35) instead of the process
** failing to start. Where a driver is present, only the loading is checked
** (the GPU script runs the kernels for real).
** Run by make cuda-check: test_kernels_load SO; prints "N passed, N failed".
*/
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "cuda/kernels/kernels.h"

static int passed, failed;
#define CHECK(c) do { if (c) passed++; else { failed++; fprintf(stderr, "%s:%d: FAIL %s\n", __FILE__, __LINE__, #c); } } while (0)

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s KERNELS.so\n", argv[0]); return 2; }
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
  CHECK(h != NULL);
  if (!h) { printf("%d passed, %d failed\n", passed, failed); return 1; }
  const lt_ck_kernels *(*table)(void) = (const lt_ck_kernels *(*)(void))dlsym(h, "lt_ck_device_kernels");
  CHECK(table != NULL);
  const lt_ck_kernels *k = table ? table() : NULL;
  CHECK(k && strcmp(k->name, "sm_90") == 0);
  CHECK(k && k->copy == (lt_ck_copy_fn)dlsym(h, "lt_ck_copy"));
  CHECK(dlsym(h, "lt_ck_host_copy") == NULL);          /* the host build is not in it */
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (k && !driver) {
    lt_ck_geom g;
    memset(&g, 0, sizeof g);
    g.ndim = 1; g.sizes[0] = 4; g.strides[0][0] = 1;
    float v = 1;
    int r = k->fill((void *)(uintptr_t)0x1000, LT_CK_FLOAT32, &v, &g, NULL);
    CHECK(r == 35);                                     /* cudaErrorInsufficientDriver */
    CHECK(strstr(k->error_string(r), "driver") != NULL);
    /* argument errors are found before the runtime is asked */
    CHECK(k->fill(NULL, LT_CK_FLOAT32, &v, &g, NULL) == LT_CK_EINVAL);
  } else if (driver) {
    printf("SKIP launch without a driver: this machine has libcuda.so.1\n");
    dlclose(driver);
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
