/*
** rtc.h — kernels made at run time for the CUDA backend (rtc.c): torch.compile's
** fused pointwise kernels (lib/compile/cuda.lua writes their CUDA C source).
**
** A source is compiled two ways:
**   - by NVRTC (libnvrtc, opened with dlopen like libcuda.so.1: never linked)
**     into a cubin for the device's architecture, loaded with
**     cuModuleLoadData and launched with cuLaunchKernel on the device's
**     current stream: what runs under a real driver;
**   - by the host C++ compiler, as the kernels of src/cuda/kernels are in
**     their host build (ck_host.h), into a shared object that runs over the
**     fake driver's device memory (host memory): what runs under the fake.
** The kernels include cuda/kernels/ck_math.h; the module carries that header
** and ck_host.h (embedded at build time by tools/embed.lua --text).
**
** A kernel takes n (int64) and then one pointer per tensor; its host build,
** `void lt_kernel_host(int64_t nthreads, int64_t n, void *const *ptr)`, runs
** the launch's grid (lt_cuda_rtc_threads(n) threads) thread by thread. The
** Lua face, torch.cuda._rtc_*, is in lcuda.c.
*/
#ifndef LT_CUDA_RTC_H
#define LT_CUDA_RTC_H
#include <stddef.h>
#include <stdint.h>
#include "cuda/driver.h"

/* the threads of one block, and the most blocks a launch has (a grid-stride
** loop covers the rest) */
enum { LT_RTC_BLOCK = 256, LT_RTC_MAX_BLOCKS = 65536, LT_RTC_MAX_ARGS = 64 };

/* the embedded headers, ended by {NULL, NULL, 0} */
typedef struct lt_text_file { const char *name; const char *text; size_t len; } lt_text_file;
extern const lt_text_file lt_cuda_rtc_headers[];

/* NVRTC, opened once: 0 with its version "major.minor", the library's path
** and the toolkit's include directory ("" when none is found); -1 with *why
** a static sentence ("libnvrtc not found ...", "NVRTC turned off ..."). */
int lt_cuda_rtc_nvrtc(const char **version, const char **path, const char **include, const char **why);

/* Compile src for arch ("sm_90": a cubin, "compute_90": PTX, NUL included)
** with the extra options: the image (malloc'd, *n bytes) and the log in *log
** (malloc'd, maybe empty), or NULL with the reason in *log. */
char *lt_cuda_rtc_compile(const char *src, const char *arch, int nopt, const char *const *opts, size_t *n,
                          char **log);

/* an image loaded on a device */
typedef struct lt_cuda_rtc_kernel {
  lt_cu_module module;
  lt_cu_function fn;
  int dev;
  int loaded;
} lt_cuda_rtc_kernel;

/* Load image on device dev and find its function name: 0, or -1 with the
** error set (naming op). The module stays loaded until lt_cuda_rtc_unload
** (k->loaded says whether it is, also after a failure to find the name). */
int lt_cuda_rtc_load(lt_cuda_rtc_kernel *k, const void *image, const char *name, int dev, const char *op);
void lt_cuda_rtc_unload(lt_cuda_rtc_kernel *k);

/* the threads a launch over n elements has (and its host build runs) */
int64_t lt_cuda_rtc_threads(int64_t n);

/* Launch k over n elements with nptr device pointers, on the current stream
** of k's device; 0, or -1 with the error set. */
int lt_cuda_rtc_launch(const lt_cuda_rtc_kernel *k, int64_t n, int nptr, void *const *ptr, const char *op);

/* a host build's entry */
typedef void (*lt_cuda_rtc_host_fn)(int64_t nthreads, int64_t n, void *const *ptr);

/* Run a host build over device dev's memory (host memory: the fake driver),
** after the work queued on its current stream; 0, or -1 with the error set. */
int lt_cuda_rtc_host_run(lt_cuda_rtc_host_fn fn, int dev, int64_t n, void *const *ptr, const char *op);

#endif
