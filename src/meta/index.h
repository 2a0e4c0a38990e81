/*
** index.h — the argument checks of the indexing ops (index_select, gather,
** scatter, index_add/copy/fill, masked ops, take, put, embedding), shared by
** the CPU and CUDA kernels so both reject bad input with one message. Index
** values are 1-based, negative counting from the end. The values themselves
** are data: a backend finds the first bad one its own way (the CPU by a loop,
** CUDA by a kernel and a read-back) and words it with lt_meta_index_range.
*/
#ifndef LT_META_INDEX_H
#define LT_META_INDEX_H

#include "core/tensor.h"

/* an index argument must be int64 (int32 accepted) */
int lt_meta_check_index_dtype(const char *op, const char *arg, const lt_tensor *index);
/* the error for index value x, out of range for dim (0-based; < 0 a flat
** index into `size` elements) of `size`: always -1 */
int lt_meta_index_range(const char *op, int64_t x, int64_t size, int dim);
/* whether x is a valid 1-based index (negative from the end) into size */
static inline bool lt_meta_index_ok(int64_t x, int64_t size) { return x != 0 && x <= size && x >= -size; }
/* gather/scatter: index has t's ndim and fits inside t outside dim d (every dim when d < 0) */
int lt_meta_check_index_shape(const char *op, const lt_tensor *index, const lt_tensor *t, int d, const char *tname);
/* index_add/index_copy: source has self's shape with n along dim d */
int lt_meta_check_slice_source(const char *op, const lt_tensor *self, int d, int64_t n, const lt_tensor *source);
/* in place (out == self): the result's shape nd/sizes must be self's */
int lt_meta_check_inplace_shape(const char *op, const lt_tensor *self, int nd, const int64_t *sizes);
/* a mask argument must be bool */
int lt_meta_check_mask(const char *op, const lt_tensor *mask);
/* embedding's indices: an integer dtype */
int lt_meta_check_embedding_indices(const char *op, const lt_tensor *indices);
/* the error for an embedding index out of [1, rows]: always -1 */
int lt_meta_embedding_range(const char *op, int64_t x, int64_t rows);
/* padding_idx (1-based, negative from the end, LT_NOINT absent) as a 0-based
** row, -1 when absent; -2 with the error set when out of range */
int64_t lt_meta_padding_row(const char *op, int64_t padding_idx, int64_t rows);
/* _embedding_backward's checks: a floating point grad of indices' shape plus one dim,
** num_weights >= 0; the padding row as lt_meta_padding_row gives it (< -1: error) */
int64_t lt_meta_embedding_backward(const lt_tensor *grad, const lt_tensor *indices, int64_t num_weights,
                                   int64_t padding_idx);

/* searchsorted/bucketize: the sequence (seq_name) and input shapes and dtypes, sorter's */
int lt_meta_search_check(const char *op, const char *seq_name, const lt_tensor *seq, const lt_tensor *input,
                         const lt_tensor *sorter);
/* searchsorted's side ("left", "right" or NULL) with right: *right set, 0 or -1 */
int lt_meta_search_side(const char *op, const char *side, bool *right);
/* the error for a sorter value x out of 1..n: always -1 */
int lt_meta_sorter_range(const char *op, int64_t x, int64_t n);
/* bincount: self a 1-D integer tensor, minlength >= 0, weights 1-D of self's length */
int lt_meta_bincount_check(const lt_tensor *self, const lt_tensor *weights, int64_t minlength);
/* the error for a negative value v of bincount's self: always -1 */
int lt_meta_bincount_negative(int64_t v);
/* histc: a floating self, bins > 0, min <= max */
int lt_meta_histc_check(const lt_tensor *self, int64_t bins, double lo, double hi);
/* the error for a range that is not finite: always -1 */
int lt_meta_histc_range(double lo, double hi);

#endif
