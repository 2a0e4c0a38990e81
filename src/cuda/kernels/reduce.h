/*
** reduce.h — the CUDA backend's reduction and scan kernels as C entry
** points (sum, prod, mean, max/min with indices, all/any/count, var/std,
** norm, logsumexp; cumsum, cumprod, cummax, cummin, logcumsumexp), in both
** builds, as kernels.h has them for the elementwise family: lt_ck_reduce
** (nvcc, queued on a stream) and lt_ck_host_reduce (the host build, run at
** once on host memory: what the fake driver and the tests run).
**
** A reduction is a geometry: the output's elements (the kept dims, with the
** input's strides and the outputs' strides over them) and, for each output
** element, the reduced dims with their own input strides, walked in logical
** (row-major) order, so argmax of a flattened tensor sees elements in order
** and the first of equal maxima wins. When outputs are few and slices long
** (lt_ck_red_chunks > 1) the slices are cut into chunks reduced by one thread
** each into a temporary buffer of partials (`work`, LT_CK_RED_PARTIAL bytes a
** chunk), and a second pass combines each output's chunks in order; else one
** thread reduces each output element's slice serially. Both builds run the
** same code (no shared memory, shuffles or barriers), so the host build that
** the tests run computes what the device build does.
**
** C, no CUDA header; pointers are device pointers (host ones for the host build).
*/
#ifndef LT_CUDA_REDUCE_H
#define LT_CUDA_REDUCE_H
#include <stdint.h>
#include "cuda/kernels/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* the ops, and what each writes (T the input dtype):
**   SUM, NANSUM, PROD, MEAN, NANMEAN: out in the accumulation dtype, as the
**     CPU's: float64 for float64, float32 for the other floats, int64 (wrapping)
**     for integers and bool; MEAN and NANMEAN floating inputs only;
**   COUNT_NZ: out int64; ALL, ANY: out one byte 0/1 (bool or uint8);
**   MAX, MIN: out (may be NULL) the extreme in T, out2 (may be NULL) its
**     1-based index in the slice as int64; NaN wins, the first of equals wins;
**   VAR, STD: floating inputs; out float64, p the correction; out2 (may be
**     NULL) the mean, float64; two-pass per chunk, chunks merged (Chan et al.);
**   NORM: floating inputs; out float64; p the order (0, 1, 2, any real, +-inf);
**   LOGSUMEXP: out float64 (any input dtype), max-shifted.
** Statistics (VAR .. LOGSUMEXP) compute in double, as the CPU's do. */
typedef enum lt_ck_red_op {
  LT_CK_RED_SUM, LT_CK_RED_NANSUM, LT_CK_RED_PROD, LT_CK_RED_MEAN, LT_CK_RED_NANMEAN,
  LT_CK_RED_COUNT_NZ, LT_CK_RED_ALL, LT_CK_RED_ANY,
  LT_CK_RED_MAX, LT_CK_RED_MIN,
  LT_CK_RED_VAR, LT_CK_RED_STD, LT_CK_RED_NORM, LT_CK_RED_LOGSUMEXP,
  LT_CK_RED_NUM_OPS
} lt_ck_red_op;

/* kept dims (ndim, sizes; input, out and out2 strides over them) and reduced
** dims (rdim, rsizes, rstrides), outermost first; at most LT_CK_KERNEL_DIMS
** of each after size-1 dims are dropped and contiguous runs merged (more:
** LT_CK_EINVAL). A reduced dim of size 0 makes empty slices (the identity:
** 0 for sums, 1 for products, NaN for means; MAX and MIN refuse them). */
typedef struct lt_ck_red_geom {
  int ndim;
  int64_t sizes[LT_CK_MAX_DIMS];
  int64_t in_strides[LT_CK_MAX_DIMS], out_strides[LT_CK_MAX_DIMS], out2_strides[LT_CK_MAX_DIMS];
  int rdim;
  int64_t rsizes[LT_CK_MAX_DIMS], rstrides[LT_CK_MAX_DIMS];
} lt_ck_red_geom;

#define LT_CK_RED_PARTIAL 32          /* bytes of one chunk's partial result */
#define LT_CK_RED_CHUNK_MIN 4096      /* elements a chunk reduces at least */
#define LT_CK_RED_THREADS 65536       /* threads the split aims at */

/* how many chunks each of nout slices of r elements is cut into (1: no split) */
static inline int64_t lt_ck_red_chunks(int64_t nout, int64_t r) {
  if (nout <= 0 || r < 2 * LT_CK_RED_CHUNK_MIN || nout >= LT_CK_RED_THREADS / 4) return 1;
  int64_t n = (r + LT_CK_RED_CHUNK_MIN - 1) / LT_CK_RED_CHUNK_MIN, cap = LT_CK_RED_THREADS / nout;
  return n < cap ? n : cap;
}

/* work: lt_ck_red_chunks(nout, R) * nout * LT_CK_RED_PARTIAL bytes of device
** memory when that is > 1 chunk, else ignored (NULL) */
typedef int (*lt_ck_reduce_fn)(int op, int dtype, void *out, void *out2, const void *in, double p,
                               const lt_ck_red_geom *g, void *work, void *stream);

/* Scans along one dim: lines of n elements (stride `stride` in both in and
** out), `nlines` lines whose starts are given by the kept geometry g (its
** in_strides and out_strides; out2_strides for the index output). One
** thread per line, serially.
**   CUMSUM, CUMPROD: out in the accumulation dtype of SUM (above);
**   CUMMAX, CUMMIN: out in T, out2 the int64 1-based index (the last of equals);
**   LOGCUMSUMEXP: floating T, out in T, computed in double as the CPU's. */
typedef enum lt_ck_scan_op {
  LT_CK_SCAN_CUMSUM, LT_CK_SCAN_CUMPROD, LT_CK_SCAN_CUMMAX, LT_CK_SCAN_CUMMIN, LT_CK_SCAN_LOGCUMSUMEXP,
  LT_CK_SCAN_NUM_OPS
} lt_ck_scan_op;
typedef int (*lt_ck_scan_fn)(int op, int dtype, void *out, void *out2, const void *in, int64_t n,
                             int64_t in_stride, int64_t out_stride, int64_t out2_stride, const lt_ck_red_geom *g,
                             void *stream);

typedef struct lt_ck_reduce_kernels {
  const char *name;                  /* "sm_90" or "host" */
  lt_ck_reduce_fn reduce;
  lt_ck_scan_fn scan;
  const char *(*error_string)(int code);
} lt_ck_reduce_kernels;

int lt_ck_reduce(int op, int dtype, void *out, void *out2, const void *in, double p, const lt_ck_red_geom *g,
                 void *work, void *stream);
int lt_ck_scan(int op, int dtype, void *out, void *out2, const void *in, int64_t n, int64_t in_stride,
               int64_t out_stride, int64_t out2_stride, const lt_ck_red_geom *g, void *stream);
const lt_ck_reduce_kernels *lt_ck_reduce_device_kernels(void);

int lt_ck_host_reduce(int op, int dtype, void *out, void *out2, const void *in, double p, const lt_ck_red_geom *g,
                      void *work, void *stream);
int lt_ck_host_scan(int op, int dtype, void *out, void *out2, const void *in, int64_t n, int64_t in_stride,
                    int64_t out_stride, int64_t out2_stride, const lt_ck_red_geom *g, void *stream);
const lt_ck_reduce_kernels *lt_ck_host_reduce_kernels(void);

#ifdef __cplusplus
}
#endif
#endif
