/*
** launch.h — what every CUDA kernel wrapper of the backend does around a
** launch (elementwise.c and the other families' files): choose the build that
** runs, enter the device's context, queue on its current stream, read the
** kernels' result, count launches, and the small tensor helpers they share.
**
** The build that runs: under the fake driver, whose device memory is host
** memory, the host build of src/cuda/kernels (lt_ck_host_*), after
** synchronizing the stream, since it runs at once and ignores streams; under
** a real driver the nvcc build (lt_ck_*), queued on the current stream, where
** the module was linked with it (nvcc found at build time: each family
** references its device table weakly, NULL without nvcc).
**
** Nothing here has run on a GPU.
*/
#ifndef LT_CUDA_LAUNCH_H
#define LT_CUDA_LAUNCH_H

#include <stdbool.h>
#include "core/tensor.h"
#include "cuda/cuda.h"
#include "cuda/kernels/kernels.h"

typedef struct lt_cuda_launch {
  void *stream;       /* the device's current stream (a CUstream) */
  int dev;
  bool host;          /* the host build runs (fake driver) */
  int trace;          /* torch.profiler's record of this launch (cuda/trace.h), -1: none */
  lt_cuda_guard g;
} lt_cuda_launch;

/* Begin a launch on device dev: 0, or -1 with the error set (no build for a
** real driver: have_device_build false; no context). op names the caller. */
int lt_cuda_launch_begin(lt_cuda_launch *l, int dev, bool have_device_build, const char *op);
void lt_cuda_launch_end(lt_cuda_launch *l);
/* A kernel entry's result rc: 0 done (counted), 1 refused (LT_CK_EUNSUPPORTED,
** LT_CK_EINVAL: the caller falls back or reports), -1 a launch error (set,
** worded by errstr, the build's error_string). */
int lt_cuda_launch_result(const lt_cuda_launch *l, const char *op, int rc, const char *(*errstr)(int));

/* the elementwise kernels of the build l runs (kernels.h) */
const lt_ck_kernels *lt_cuda_ck_kernels(const lt_cuda_launch *l);
/* whether the nvcc build of the elementwise kernels is linked in */
bool lt_cuda_have_device_kernels(void);

/* a geometry of nd dims of these sizes, every stride 0 */
void lt_cuda_geom_init(lt_ck_geom *g, int nd, const int64_t *sizes);

/* A new contiguous tensor on t's device holding t converted to dt, by the
** copy kernel: NULL with the error set, or NULL with *refused set when the
** kernels refused (more than 8 dims after merging). */
lt_tensor *lt_cuda_converted(const char *op, const lt_tensor *t, lt_dtype dt, bool *refused);

/* t is on a cuda device */
bool lt_cuda_on(const lt_tensor *t);
/* the op's name in errors: NAME_ while the in-place form runs (as the CPU's) */
const char *lt_cuda_op_name(char *buf, size_t n, const char *op);

/* In a kernel lt_cuda_NAME whose own kernels refused: the CPU's kernel of the
** op under the fake driver (its device memory is host memory), an error
** naming the op under a real one. */
#define LT_CUDA_FALLBACK(NAME, OPSTR, DT, ...) do { \
    if (lt_cuda_host_device_memory()) { \
      lt_cuda_count_fallback(); \
      return ((lt_##NAME##_backend_fn)lt_op_table[LT_OP_##NAME].kernel[LT_KEY_CPU])(__VA_ARGS__); \
    } \
    return lt_error_null("%s: not implemented for cuda %s tensors (the CUDA kernels refuse it)", OPSTR, \
                         lt_dtype_name(DT)); \
  } while (0)

#endif
