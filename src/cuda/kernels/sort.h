/*
** sort.h — the CUDA backend's sorting kernels as C entry points, in both
** builds (nvcc: lt_ck_sort_device_kernels; host: lt_ck_host_sort_kernels),
** as kernels.h describes for the elementwise ones.
**
** Rows are contiguous: nrows lines of len elements, one after another (the
** caller moves the sorted dim last). The order is the CPU's: stable, NaN the
** largest value (last ascending, first descending), -0 equal to +0.
**
**   - sort_rows: values and 1-based int64 indices of every row sorted. Two
**     paths: one thread per row running a stable merge sort (insertion sort
**     on runs of 32, then bottom-up merges through a temporary), which the
**     host build always runs and the device build runs for short rows; and
**     in the device build for longer rows CUB's radix sort (stable;
**     DeviceRadixSort for one row, DeviceSegmentedRadixSort for several) on
**     canonical keys (every NaN made the positive quiet NaN, -0 made +0, so
**     the radix order is the comparison order), pairing each key with its
**     position and gathering the values after.
**   - pick: one value and index per sorted row: the k-th (kthvalue), the
**     lower median (NaN when the row has one), the nanmedian, or the mode
**     (the longest run, the smallest value on ties, its last index).
**   - unique_flags / unique_write / unique_counts: sorted unique values with
**     the 1-based inverse and the counts, over one sorted row, as a
**     compaction (with the index kernels' mask_count between).
**   - search: binary search of values in sorted rows (searchsorted,
**     bucketize, and isin over its sorted test values).
**
** Nothing in the device build has run on a GPU.
*/
#ifndef LT_CUDA_KERNELS_SORT_H
#define LT_CUDA_KERNELS_SORT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cuda/kernels/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { LT_CK_PICK_KTH, LT_CK_PICK_MEDIAN, LT_CK_PICK_NANMEDIAN, LT_CK_PICK_MODE };

/* device memory sort_rows needs as its temporary (at least 8 bytes) */
typedef size_t (*lt_ck_sort_tmp_fn)(int dtype, int64_t nrows, int64_t len);
typedef int (*lt_ck_sort_rows_fn)(int dtype, const void *keys, void *values, int64_t *indices, int64_t nrows,
                                  int64_t len, int descending, void *tmp, size_t tmp_bytes, void *stream);
/* out_values[r], out_indices[r] from sorted row r (values of dtype, indices 1-based); k for KTH (0-based) */
typedef int (*lt_ck_sort_pick_fn)(int kind, int dtype, const void *values, const int64_t *indices, int64_t nrows,
                                  int64_t len, int64_t k, void *out_values, int64_t *out_indices, void *stream);
/* flags[i]: sorted values[i] starts a run of equal values */
typedef int (*lt_ck_unique_flags_fn)(int dtype, const void *values, int64_t n, bool *flags, void *stream);
/* for the k-th flag (chunk offsets `counts` from mask_count over flags):
** out[k] = values[i], start[k] = i; inverse[indices[i] - 1] = the 1-based
** rank of i's run, for every i */
typedef int (*lt_ck_unique_write_fn)(int dtype, const void *values, const int64_t *indices, const bool *flags,
                                     int64_t n, const int64_t *counts, void *out, int64_t *start, int64_t *inverse,
                                     void *stream);
/* Binary search (searchsorted, bucketize, isin) over float64 or int64 (dtype):
** for each of the m values x[i], in the sorted row seq + (per ? i / per : 0) * n
** of n values (read through the 1-based permutation sorter of the same shape
** when given), the first position p with seq[p] >= x[i] (> with right), so NaNs
** go to the end. out_kind LT_CK_SEARCH_I64/I32: out[i] = p + 1; ISIN: out[i]
** (bool) = whether seq[p] == x[i], negated by invert. */
enum { LT_CK_SEARCH_I64, LT_CK_SEARCH_I32, LT_CK_SEARCH_ISIN };
typedef int (*lt_ck_search_fn)(int dtype, const void *seq, const int64_t *sorter, int64_t n, int64_t per,
                               const void *x, int64_t m, int right, int out_kind, int invert, void *out,
                               void *stream);
/* cnt[u] = start[u + 1] - start[u] (start[nu] taken as n) */
typedef int (*lt_ck_unique_counts_fn)(const int64_t *start, int64_t nu, int64_t n, int64_t *cnt, void *stream);

typedef struct lt_ck_sort_kernels {
  const char *name;
  lt_ck_sort_tmp_fn tmp_bytes;
  lt_ck_sort_rows_fn sort_rows;
  lt_ck_sort_pick_fn pick;
  lt_ck_unique_flags_fn unique_flags;
  lt_ck_unique_write_fn unique_write;
  lt_ck_unique_counts_fn unique_counts;
  lt_ck_search_fn search;
} lt_ck_sort_kernels;

const lt_ck_sort_kernels *lt_ck_sort_device_kernels(void);   /* nvcc build */
const lt_ck_sort_kernels *lt_ck_host_sort_kernels(void);     /* host build */

#ifdef __cplusplus
}
#endif
#endif
