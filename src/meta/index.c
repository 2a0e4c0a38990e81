/*
** index.c — the indexing ops' argument checks (meta/index.h).
*/
#include <string.h>
#include "meta/index.h"
#include "meta/meta.h"

int lt_meta_check_index_dtype(const char *op, const char *arg, const lt_tensor *index) {
  if (index->dtype != LT_INT64 && index->dtype != LT_INT32)
    return lt_error("%s: argument '%s' must be an int64 tensor, got %s", op, arg,
                    lt_dtype_name((lt_dtype)index->dtype));
  return 0;
}

int lt_meta_index_range(const char *op, int64_t x, int64_t size, int dim) {
  if (dim < 0)
    return lt_error("%s: index %lld is out of range for a tensor with %lld elements", op, (long long)x,
                    (long long)size);
  return lt_error("%s: index %lld is out of range for dim %lld with size %lld%s", op, (long long)x,
                  (long long)dim + 1, (long long)size, x == 0 ? " (indices are 1-based)" : "");
}

int lt_meta_check_index_shape(const char *op, const lt_tensor *index, const lt_tensor *t, int d, const char *tname) {
  int tn = t->ndim ? t->ndim : 1, in = index->ndim ? index->ndim : 1;
  if (tn != in)
    return lt_error("%s: argument 'index' has %d dims but '%s' has %d", op, index->ndim, tname, t->ndim);
  for (int i = 0; i < index->ndim; i++) {
    int64_t ts = t->ndim ? t->sizes[i] : 1;
    if (i != d && index->sizes[i] > ts)
      return lt_error("%s: argument 'index' has size %lld in dim %d, larger than %lld in '%s'", op,
                      (long long)index->sizes[i], i + 1, (long long)ts, tname);
  }
  return 0;
}

int lt_meta_check_slice_source(const char *op, const lt_tensor *self, int d, int64_t n, const lt_tensor *source) {
  int64_t want[LT_MAX_DIMS];
  int wn = self->ndim;
  memcpy(want, self->sizes, sizeof(int64_t) * (size_t)wn);
  if (wn) want[d] = n;
  bool ok = wn == 0 ? source->numel == n && source->ndim <= 1 : source->ndim == wn;
  for (int i = 0; ok && i < wn; i++) ok = source->sizes[i] == want[i];
  if (ok) return 0;
  char b1[128], b2[128];
  return lt_error("%s: argument 'source' has shape %s but expected %s (self's shape with index's length in dim %d)",
                  op, lt_shape_str(source->ndim, source->sizes, b1, sizeof b1), lt_shape_str(wn, want, b2, sizeof b2),
                  d + 1);
}

int lt_meta_check_inplace_shape(const char *op, const lt_tensor *self, int nd, const int64_t *sizes) {
  if (self->ndim == nd && memcmp(self->sizes, sizes, sizeof(int64_t) * (size_t)nd) == 0) return 0;
  char b1[128], b2[128];
  return lt_error("%s: output with shape %s doesn't match the broadcast shape %s", op,
                  lt_shape_str(self->ndim, self->sizes, b1, sizeof b1), lt_shape_str(nd, sizes, b2, sizeof b2));
}

int lt_meta_check_mask(const char *op, const lt_tensor *mask) {
  if (mask->dtype != LT_BOOL)
    return lt_error("%s: argument 'mask' must be a bool tensor, got %s", op, lt_dtype_name((lt_dtype)mask->dtype));
  return 0;
}

int lt_meta_check_embedding_indices(const char *op, const lt_tensor *indices) {
  lt_dtype it = (lt_dtype)indices->dtype;
  if (it != LT_INT64 && it != LT_INT32 && it != LT_INT16 && it != LT_INT8 && it != LT_UINT8)
    return lt_error("%s: argument 'indices' must be an integer tensor, got %s", op, lt_dtype_name(it));
  return 0;
}

int lt_meta_embedding_range(const char *op, int64_t x, int64_t rows) {
  return lt_error("%s: argument 'indices' holds %lld, out of range for a weight of %lld rows (indices are 1-based)", op,
                  (long long)x, (long long)rows);
}

int64_t lt_meta_padding_row(const char *op, int64_t padding_idx, int64_t rows) {
  if (padding_idx == LT_NOINT) return -1;
  int64_t r = padding_idx > 0 ? padding_idx - 1 : rows + padding_idx;
  if (padding_idx == 0 || r < 0 || r >= rows) {
    lt_error("%s: argument 'padding_idx' must be within 1..%lld or -%lld..-1 (1-based), got %lld", op,
             (long long)rows, (long long)rows, (long long)padding_idx);
    return -2;
  }
  return r;
}

int lt_meta_search_check(const char *op, const char *seq_name, const lt_tensor *seq, const lt_tensor *input,
                         const lt_tensor *sorter) {
  if (seq->ndim == 0) return lt_error("%s: argument '%s' must have at least one dimension", op, seq_name);
  if (input->is_wrapped_number && seq->ndim != 1)
    return lt_error("%s: argument 'input' can be a number only when '%s' is 1-D", op, seq_name);
  if (seq->ndim > 1) {
    bool ok = input->ndim == seq->ndim;
    for (int i = 0; ok && i < seq->ndim - 1; i++) ok = input->sizes[i] == seq->sizes[i];
    if (!ok) {
      char b1[128], b2[128];
      return lt_error("%s: the leading dims of '%s' %s and 'input' %s must match", op, seq_name,
                      lt_shape_str(seq->ndim, seq->sizes, b1, sizeof b1),
                      lt_shape_str(input->ndim, input->sizes, b2, sizeof b2));
    }
  }
  if (seq->dtype == LT_BOOL || input->dtype == LT_BOOL)
    return lt_error("%s: arguments '%s' and 'input' must be number tensors, not bool", op, seq_name);
  if (sorter) {
    if (sorter->dtype != LT_INT64)
      return lt_error("%s: argument 'sorter' must be an int64 tensor, got %s", op, lt_dtype_name((lt_dtype)sorter->dtype));
    if (!lt_tensor_same_shape(sorter, seq)) return lt_error("%s: argument 'sorter' must have the shape of '%s'", op, seq_name);
  }
  return 0;
}

int lt_meta_search_side(const char *op, const char *side, bool *right) {
  if (!side) return 0;
  bool sr = strcmp(side, "right") == 0;
  if (!sr && strcmp(side, "left") != 0)
    return lt_error("%s: argument 'side' must be \"left\" or \"right\", got \"%s\"", op, side);
  if (*right && !sr) return lt_error("%s: arguments 'side' (\"left\") and 'right' (true) contradict each other", op);
  *right = sr;
  return 0;
}

int lt_meta_sorter_range(const char *op, int64_t x, int64_t n) {
  return lt_error("%s: argument 'sorter' holds index %lld, out of range 1..%lld", op, (long long)x, (long long)n);
}

int lt_meta_bincount_check(const lt_tensor *self, const lt_tensor *weights, int64_t minlength) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (self->ndim != 1 || lt_dtype_is_float(dt) || dt == LT_BOOL)
    return lt_error("bincount: argument 'self' must be a 1-D tensor of non-negative integers, got a %d-D %s tensor",
                    self->ndim, lt_dtype_name(dt));
  if (minlength < 0) return lt_error("bincount: argument 'minlength' must be non-negative, got %lld", (long long)minlength);
  if (weights && (weights->ndim != 1 || weights->sizes[0] != self->sizes[0]))
    return lt_error("bincount: argument 'weights' must be 1-D with the length of 'self' (%lld)", (long long)self->sizes[0]);
  return 0;
}

int lt_meta_bincount_negative(int64_t v) {
  return lt_error("bincount: argument 'self' must be non-negative, got %lld", (long long)v);
}

int lt_meta_histc_check(const lt_tensor *self, int64_t bins, double lo, double hi) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (!lt_dtype_is_float(dt))
    return lt_error("histc: argument 'self' must be a floating point tensor, got %s", lt_dtype_name(dt));
  if (bins <= 0) return lt_error("histc: argument 'bins' must be positive, got %lld", (long long)bins);
  if (lo > hi) return lt_error("histc: argument 'max' (%g) must be at least 'min' (%g)", hi, lo);
  return 0;
}

int lt_meta_histc_range(double lo, double hi) {
  return lt_error("histc: range of [%g, %g] is not finite", lo, hi);
}

int64_t lt_meta_embedding_backward(const lt_tensor *grad, const lt_tensor *indices, int64_t num_weights,
                                   int64_t padding_idx) {
  const char *op = "embedding_backward";
  if (lt_meta_check_float(op, "grad", grad) < 0) return -2;
  if (num_weights < 0) { lt_error("%s: argument 'num_weights' must be non-negative", op); return -2; }
  if (grad->ndim != indices->ndim + 1) {
    lt_error("%s: argument 'grad' must have one more dim than 'indices' (%d), got %d", op, indices->ndim, grad->ndim);
    return -2;
  }
  for (int i = 0; i < indices->ndim; i++)
    if (grad->sizes[i] != indices->sizes[i]) {
      lt_error("%s: argument 'grad' does not match the shape of 'indices'", op);
      return -2;
    }
  return lt_meta_padding_row(op, padding_idx, num_weights);
}
