/*
** index.h — the CUDA backend's indexing kernels as C entry points, in both
** builds (nvcc: lt_ck_ix_*, queued on a stream; host: lt_ck_host_ix_*, run
** at once), as kernels.h describes for the elementwise ones:
**
**   - check: the first position of an index value out of range, so the
**     caller can raise the CPU's "index out of range" before anything is
**     written. The result lands in device memory and is read back with a
**     synchronizing copy (the one sync an indexing op costs; PyTorch asserts
**     on the device instead, which loses the message).
**   - indexed: one kernel for every op that moves elements through an index
**     (index_select, gather, scatter, scatter_add, index_add/copy/fill, take,
**     put, embedding and its backward, one_hot): over an iteration shape, the
**     index value (1-based, negative from the end) replaces one coordinate of
**     the input (GATHER) or of the output (SCATTER, FILL, ADD). ADD
**     accumulates with atomics on the device (atomicAdd for float, double,
**     int32 and int64; a compare-and-swap loop on the enclosing 32-bit word
**     for 16-bit floats, whose sum must round once as on the CPU, and for
**     the narrow integers and bool), so duplicate indices add up; the host
**     build runs the same body serially with plain loads and stores.
**   - mask_where: out = mask ? value : in (masked_fill), over a geometry.
**   - mask_count / mask_compact: stream compaction in two passes that the
**     host build can run: per-chunk counts of a bool mask, an exclusive scan
**     of the counts (the total after the last chunk), then a write pass per
**     chunk (masked_select, masked_scatter, nonzero).
**   - histc: a histogram by atomic adds (bincount is the indexed ADD).
**
** Nothing in the device build has run on a GPU.
*/
#ifndef LT_CUDA_KERNELS_INDEX_H
#define LT_CUDA_KERNELS_INDEX_H
#include <stdbool.h>
#include <stdint.h>
#include "cuda/kernels/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { LT_CK_IX_GATHER, LT_CK_IX_SCATTER, LT_CK_IX_FILL, LT_CK_IX_ADD, LT_CK_IX_NUM_MODES };
enum { LT_CK_MASK_SELECT, LT_CK_MASK_SCATTER, LT_CK_MASK_NONZERO };
enum { LT_CK_MASK_CHUNK = 4096 };   /* mask elements per counting thread */

/* The geometry of an indexed launch: the iteration shape, and per operand
** ([0] out, [1] in, [2] the int64 index) its strides over it, in elements.
** The index value v (normalised to 0-based against ixsize) moves the input
** by v * in_ixstride (GATHER) or the output by v * out_ixstride (the
** others). A normalised value equal to skip is left out (embedding's
** padding row; -1 none). */
typedef struct lt_ck_ix_geom {
  int ndim;
  int64_t sizes[LT_CK_MAX_DIMS];
  int64_t strides[3][LT_CK_MAX_DIMS];
  int64_t out_ixstride, in_ixstride;
  int64_t ixsize;
  int64_t skip;
} lt_ck_ix_geom;

/* *first_bad (one int64 of device memory, set to INT64_MAX by the caller)
** becomes the least position i < n whose idx[i] is out of range: for
** negative_ok, lt_meta_index_ok(idx[i], size); else 1 <= idx[i] <= size. */
typedef int (*lt_ck_ix_check_fn)(const int64_t *idx, int64_t n, int64_t size, int negative_ok, int64_t *first_bad,
                                 void *stream);
/* mode LT_CK_IX_*; out, in of dtype (in unused by FILL); value: one element
** of dtype in host memory (FILL); alpha: ADD adds alpha * in. */
typedef int (*lt_ck_ix_run_fn)(int mode, int dtype, void *out, const void *in, const int64_t *idx, const void *value,
                               lt_ck_scalar alpha, const lt_ck_ix_geom *g, void *stream);
/* out = mask ? *value : in over g (rows 0 out, 1 in, 2 the bool mask) */
typedef int (*lt_ck_mask_where_fn)(int dtype, void *out, const void *in, const bool *mask, const void *value,
                                   const lt_ck_geom *g, void *stream);
/* counts[c] for the chunks of a contiguous bool mask of n elements, then
** scanned in place: counts[c] the trues before chunk c, counts[nchunks] the
** total (nchunks = ceil(n / LT_CK_MASK_CHUNK); counts has nchunks + 1) */
typedef int (*lt_ck_mask_count_fn)(const bool *mask, int64_t n, int64_t *counts, void *stream);
/* SELECT: out[k] = src[i]; SCATTER: out[i] = src[k]; NONZERO: out[k][j] =
** coordinate j + 1 of i in a row-major shape of ndim sizes (int64) — for the
** k-th true mask[i]; es the element size (SELECT, SCATTER); all contiguous */
typedef int (*lt_ck_mask_compact_fn)(int mode, int es, void *out, const void *src, const bool *mask, int64_t n,
                                     const int64_t *counts, int ndim, const int64_t *sizes, void *stream);

/* histc: counts[b] += 1 for every x[i] in [lo, hi] (a NaN in bin 0, as the
** CPU), b = (x - lo) * bins / (hi - lo) capped at bins - 1; x contiguous, the
** counts (zeroed by the caller) on the device, atomics there */
typedef int (*lt_ck_histc_fn)(const double *x, int64_t n, double lo, double hi, int64_t bins, double *counts,
                              void *stream);

typedef struct lt_ck_index_kernels {
  const char *name;
  lt_ck_ix_check_fn check;
  lt_ck_ix_run_fn run;
  lt_ck_mask_where_fn mask_where;
  lt_ck_mask_count_fn mask_count;
  lt_ck_mask_compact_fn mask_compact;
  lt_ck_histc_fn histc;
} lt_ck_index_kernels;

const lt_ck_index_kernels *lt_ck_index_device_kernels(void);   /* nvcc build */
const lt_ck_index_kernels *lt_ck_host_index_kernels(void);     /* host build */

#ifdef __cplusplus
}
#endif
#endif
