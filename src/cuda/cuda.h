/*
** cuda.h — the CUDA backend's public face inside its module (lutorch_cuda.so):
** opening the backend, the devices and their current streams, and the hook
** through which kernels are registered.
**
** The module is loaded at run time, by the binding (src/vm/lbackend_load.c)
** the first time something asks for a CUDA device, or by
** require "lutorch_cuda". It resolves the core's symbols (lt_backend_register,
** lt_op_table, ...) against the program or library that holds the core, so
** nothing of it is linked into liblutorch.
**
** Nothing here has run on a GPU: it is built and tested against the fake
** driver (cuda/driver.h).
*/
#ifndef LT_CUDA_H
#define LT_CUDA_H

#include <stdbool.h>
#include "core/backend.h"
#include "cuda/driver.h"

#define LT_CUDA_MAX_DEVICES 64

/* Open the backend, once per process: the driver (lt_cu_driver_open), then
** the backend registered for LT_DEV_CUDA and its kernel table at
** LT_KEY_CUDA. 0, or -1 with *why (when why is not NULL) a static sentence
** saying why CUDA is unavailable ("libcuda.so.1 not found (no NVIDIA
** driver)"); then nothing is registered. Thread-safe; later calls give the
** first answer. The binding finds it by this name with dlsym. */
int lt_cuda_backend_open(const char **why);

/* ---- devices (device.c): valid once the backend is open ---- */
/* called once by the open, with the driver and its device count */
void lt_cuda_device_setup(const lt_cu_driver *d, int count);
const lt_cu_driver *lt_cuda_driver(void);
int lt_cuda_device_count(void);
/* true under the fake driver: device memory is host memory, so host code
** (the CPU's kernels, its copy and fill) may run on device pointers */
bool lt_cuda_host_device_memory(void);

/* Make device dev's primary context current on this thread (retaining it the
** first time) until lt_cuda_leave; op names the caller in errors. 0 or -1. */
typedef struct lt_cuda_guard { lt_cu_ctx prev; bool switched; } lt_cuda_guard;
int lt_cuda_enter(int dev, lt_cuda_guard *g, const char *op);
void lt_cuda_leave(lt_cuda_guard *g);
/* whether dev's context was ever retained (no work can be queued before) */
bool lt_cuda_device_started(int dev);

/* The stream work for device dev is queued on, per thread: the default
** stream (NULL) until set. Allocations are tied to it (cuda/alloc.h). */
lt_cu_stream lt_cuda_current_stream(int dev);
void lt_cuda_set_current_stream(int dev, lt_cu_stream s);

/* -1 with "OP: cuda:DEV: WHAT failed: CUDA_ERROR_..." in the error slot */
int lt_cuda_fail(const char *op, int dev, const char *what, lt_cu_result r);

/* ---- the backend (backend.c) ---- */
/* the caching allocator of dev (cuda/alloc.h), made on first use; NULL with
** the error set when it cannot be */
struct lt_cuda_alloc *lt_cuda_caching_allocator(int dev);

/* The kernel hook. The generated table (build/gen/kernels_cuda.c, from the
** `cuda = "fn"` kernels of src/ops, whose objects the Makefile links in as
** CUDA_KERNEL_OBJ) is registered when the backend opens; a table given here
** (LT_NUM_OPS entries indexed by LT_OP_*, NULL where it has no kernel) adds
** kernels to it, before the open or after (then they are registered at once).
** Under the fake driver, an op with no CUDA kernel runs the CPU's (see
** backend.c); under a real one it stays empty, and the dispatcher's "not
** implemented for cuda tensors" names the op. 0 or -1. */
int lt_cuda_register_kernels(void *const *table);

/* ---- pinned host memory (pinned.c): the backend's pinned_storage,
** is_pinned and copy_from_pinned_async (core/backend.h) ---- */
lt_storage *lt_cuda_pinned_storage(size_t nbytes);
bool lt_cuda_is_pinned(const lt_storage *s);
int lt_cuda_copy_from_pinned_async(lt_storage *dst, size_t offset, lt_storage *src, size_t src_offset, size_t nbytes);
/* release the sources of the non-blocking copies that have run; how many
** are still pending */
long lt_cuda_reap_pinned_copies(void);

/* ---- the CUDA kernels (elementwise.c, over src/cuda/kernels; launching: launch.h) ---- */
/* Same-device copy (dst = src, src's strides expanded to dst's shape in
** src_st) and fill, by the copy and fill kernels: the host build under the
** fake driver, the nvcc build on the current stream under a real one. 0, -1
** with the error set, or 1 when the kernels do not cover it (more than 8 dims
** after merging): the caller falls back or reports. */
int lt_cuda_ck_copy(const char *op, lt_tensor *dst, const lt_tensor *src, const int64_t *src_st);
int lt_cuda_ck_fill(const char *op, lt_tensor *dst, lt_scalar v);
/* For tests: [0] launches of the host build, [1] of the nvcc build, [2] ops
** or copies that ran the CPU's kernel instead (fake driver), since the last
** reset; lt_cuda_count_fallback counts one of the last. */
void lt_cuda_kernel_counts(long out[3], bool reset);
void lt_cuda_count_fallback(void);

#endif
