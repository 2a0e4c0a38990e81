/*
** launch.c — choosing the build, entering the context, reading results and
** counting launches for every kernel wrapper of the CUDA backend (launch.h).
*/
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "cuda/launch.h"
#include "cuda/trace.h"
#include "dispatch/dispatch.h"

/* The nvcc build is linked into the module only where nvcc was found; a weak
** reference is NULL where it was not, so one object serves both builds. */
extern const lt_ck_kernels *lt_ck_device_kernels(void) __attribute__((weak));

static atomic_long counts[3];   /* host launches, device launches, CPU fallbacks */

void lt_cuda_kernel_counts(long out[3], bool reset) {
  for (int i = 0; i < 3; i++)
    out[i] = reset ? atomic_exchange(&counts[i], 0) : atomic_load(&counts[i]);
}

void lt_cuda_count_fallback(void) { atomic_fetch_add(&counts[2], 1); }

bool lt_cuda_have_device_kernels(void) { return lt_ck_device_kernels != NULL; }

const lt_ck_kernels *lt_cuda_ck_kernels(const lt_cuda_launch *l) {
  return l->host ? lt_ck_host_kernels() : lt_ck_device_kernels ? lt_ck_device_kernels() : NULL;
}

int lt_cuda_launch_begin(lt_cuda_launch *l, int dev, bool have_device_build, const char *op) {
  l->dev = dev;
  l->host = lt_cuda_host_device_memory();
  if (!l->host && !have_device_build)
    return lt_error("%s: the CUDA kernels are not in this build of lutorch_cuda.so (built without nvcc)", op);
  if (lt_cuda_enter(dev, &l->g, op) < 0) return -1;
  lt_cu_stream s = lt_cuda_current_stream(dev);
  l->stream = (void *)s;
  /* the host build runs now: what is queued before it must have run. A held
  ** stream (a test knob of the fake) answers NOT_READY; the kernel runs
  ** anyway, as the CPU's kernels do under the fake. */
  if (l->host) (void)lt_cuda_driver()->stream_synchronize(s);
  l->trace = lt_cuda_tracing ? lt_cuda_trace_begin(dev, l->stream, op, LT_CUDA_TRACE_KERNEL, 0) : -1;
  return 0;
}

void lt_cuda_launch_end(lt_cuda_launch *l) {
  if (l->trace >= 0) lt_cuda_trace_end(l->trace);
  lt_cuda_leave(&l->g);
}

int lt_cuda_launch_result(const lt_cuda_launch *l, const char *op, int rc, const char *(*errstr)(int)) {
  if (rc == LT_CK_OK) { atomic_fetch_add(&counts[l->host ? 0 : 1], 1); return 0; }
  if (rc == LT_CK_EUNSUPPORTED || rc == LT_CK_EINVAL) return 1;
  return lt_error("%s: cuda:%d: kernel launch failed: %s", op, l->dev, errstr ? errstr(rc) : "unknown error");
}

void lt_cuda_geom_init(lt_ck_geom *g, int nd, const int64_t *sizes) {
  memset(g, 0, sizeof *g);
  g->ndim = nd;
  if (nd > 0) memcpy(g->sizes, sizes, sizeof(int64_t) * (size_t)nd);
}

lt_tensor *lt_cuda_converted(const char *op, const lt_tensor *t, lt_dtype dt, bool *refused) {
  lt_tensor *r = lt_tensor_new(dt, lt_tensor_device(t), t->ndim, t->sizes);
  if (!r || t->numel == 0) return r;
  lt_ck_geom g;
  lt_cuda_geom_init(&g, t->ndim, t->sizes);
  memcpy(g.strides[0], r->strides, sizeof(int64_t) * (size_t)t->ndim);
  memcpy(g.strides[1], t->strides, sizeof(int64_t) * (size_t)t->ndim);
  lt_cuda_launch l;
  int rc = lt_cuda_launch_begin(&l, lt_tensor_device(t).index, lt_cuda_have_device_kernels(), op);
  if (rc == 0) {
    const lt_ck_kernels *k = lt_cuda_ck_kernels(&l);
    rc = k->copy(lt_tensor_data(r), dt, lt_tensor_data(t), t->dtype, &g, l.stream);
    lt_cuda_launch_end(&l);
    rc = lt_cuda_launch_result(&l, op, rc, k->error_string);
  }
  if (rc != 0) { lt_tensor_release(r); if (rc > 0) *refused = true; return NULL; }
  return r;
}

bool lt_cuda_on(const lt_tensor *t) { return lt_tensor_device(t).type == LT_DEV_CUDA; }

const char *lt_cuda_op_name(char *buf, size_t n, const char *op) {
  if (!lt_tls_inplace_op) return op;
  snprintf(buf, n, "%s_", op);
  return buf;
}
