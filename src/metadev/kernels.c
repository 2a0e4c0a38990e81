/*
** kernels.c — the meta kernels written by hand (src/ops/meta.lua's
** meta_kernels): ops outside the generated families. The matrix products and
** einsum run the device-neutral halves the CPU runs (meta/linalg.h) with a
** product that computes nothing; the sequences take their length from the
** CPU's rules (meta/creation.h); ops whose result shape depends on the data
** refuse meta tensors, as PyTorch's do.
*/
#include <string.h>
#include "kernels_meta.h"   /* generated: the prototypes */
#include "metadev/metadev.h"
#include "meta/meta.h"
#include "meta/linalg.h"
#include "meta/creation.h"
#include "meta/norm.h"
#include "meta/index.h"

/* the batched product on meta: the result's geometry is made; there is nothing to multiply */
static int no_gemm(const char *op, lt_tensor *C, lt_tensor *A, lt_tensor *B, lt_scalar alpha, lt_scalar beta,
                   bool reduce) {
  (void)op; (void)C; (void)A; (void)B; (void)alpha; (void)beta; (void)reduce;
  return 0;
}

lt_tensor *lt_metadev_dot(lt_tensor *self, lt_tensor *tensor, lt_tensor *out) { return lt_meta_dot(no_gemm, self, tensor, out); }
lt_tensor *lt_metadev_inner(lt_tensor *self, lt_tensor *other, lt_tensor *out) { return lt_meta_inner(no_gemm, self, other, out); }
lt_tensor *lt_metadev_mv(lt_tensor *self, lt_tensor *vec, lt_tensor *out) { return lt_meta_mv(no_gemm, self, vec, out); }
lt_tensor *lt_metadev_mm(lt_tensor *self, lt_tensor *mat2, lt_tensor *out) { return lt_meta_mm(no_gemm, self, mat2, out); }
lt_tensor *lt_metadev_bmm(lt_tensor *self, lt_tensor *mat2, lt_tensor *out) { return lt_meta_bmm(no_gemm, self, mat2, out); }
lt_tensor *lt_metadev_matmul(lt_tensor *self, lt_tensor *other, lt_tensor *out) { return lt_meta_matmul(no_gemm, self, other, out); }
lt_tensor *lt_metadev_outer(lt_tensor *self, lt_tensor *vec2, lt_tensor *out) { return lt_meta_outer(no_gemm, self, vec2, out); }
lt_tensor *lt_metadev_kron(lt_tensor *self, lt_tensor *other, lt_tensor *out) { return lt_meta_kron(no_gemm, self, other, out); }
lt_tensor *lt_metadev_addmm(lt_tensor *self, lt_tensor *mat1, lt_tensor *mat2, lt_scalar beta, lt_scalar alpha, lt_tensor *out) {
  return lt_meta_addmm(no_gemm, self, mat1, mat2, beta, alpha, out);
}
lt_tensor *lt_metadev_addmv(lt_tensor *self, lt_tensor *mat, lt_tensor *vec, lt_scalar beta, lt_scalar alpha, lt_tensor *out) {
  return lt_meta_addmv(no_gemm, self, mat, vec, beta, alpha, out);
}
lt_tensor *lt_metadev_addbmm(lt_tensor *self, lt_tensor *batch1, lt_tensor *batch2, lt_scalar beta, lt_scalar alpha, lt_tensor *out) {
  return lt_meta_addbmm(no_gemm, self, batch1, batch2, beta, alpha, out);
}
lt_tensor *lt_metadev_baddbmm(lt_tensor *self, lt_tensor *batch1, lt_tensor *batch2, lt_scalar beta, lt_scalar alpha, lt_tensor *out) {
  return lt_meta_baddbmm(no_gemm, self, batch1, batch2, beta, alpha, out);
}
lt_tensor *lt_metadev_addr(lt_tensor *self, lt_tensor *vec1, lt_tensor *vec2, lt_scalar beta, lt_scalar alpha, lt_tensor *out) {
  return lt_meta_addr(no_gemm, self, vec1, vec2, beta, alpha, out);
}
lt_tensor *lt_metadev_einsum(const char *equation, lt_tensor *const *tensors, int tensors_n) {
  return lt_meta_einsum(no_gemm, equation, tensors, tensors_n);
}

lt_tensor *lt_metadev_trace(lt_tensor *self) {
  if (lt_meta_trace(self) < 0) return NULL;
  lt_dtype dt = lt_dtype_is_float((lt_dtype)self->dtype) ? (lt_dtype)self->dtype : LT_INT64;
  return lt_tensor_new(dt, lt_metadev_device(), 0, NULL);
}

/* ---- sequences: the length is known from the arguments ---- */

static lt_tensor *seq(const char *op, lt_scalar start, lt_scalar end, lt_scalar step, int dtype, bool inclusive) {
  lt_meta_seq m;
  if (lt_meta_range(op, start, end, step, inclusive, &m) < 0) return NULL;
  return lt_meta_creation_new(op, 1, &m.n, dtype, (int)m.dflt, lt_metadev_device());
}

lt_tensor *lt_metadev_arange(lt_scalar start, lt_scalar end, lt_scalar step, int dtype, lt_device device) {
  (void)device;
  if (lt_scalar_is_none(end)) { end = start; start = lt_scalar_int(0); }
  return seq("arange", start, end, step, dtype, false);
}

lt_tensor *lt_metadev_range(lt_scalar start, lt_scalar end, lt_scalar step, int dtype, lt_device device) {
  (void)device;
  return seq("range", start, end, step, dtype, true);
}

lt_tensor *lt_metadev_linspace(lt_scalar start, lt_scalar end, int64_t steps, int dtype, lt_device device) {
  (void)start; (void)end; (void)device;
  if (lt_meta_check_steps("linspace", steps) < 0) return NULL;
  return lt_meta_creation_new("linspace", 1, &steps, dtype, (int)lt_get_default_dtype(), lt_metadev_device());
}

lt_tensor *lt_metadev_logspace(lt_scalar start, lt_scalar end, int64_t steps, double base, int dtype, lt_device device) {
  (void)start; (void)end; (void)base; (void)device;
  if (lt_meta_check_steps("logspace", steps) < 0) return NULL;
  return lt_meta_creation_new("logspace", 1, &steps, dtype, (int)lt_get_default_dtype(), lt_metadev_device());
}

lt_tensor *lt_metadev_eye(int64_t n, int64_t m, int dtype, lt_device device) {
  (void)device;
  int64_t sizes[2];
  if (lt_meta_eye_shape(n, m, sizes) < 0) return NULL;
  return lt_meta_creation_new("eye", 2, sizes, dtype, (int)lt_get_default_dtype(), lt_metadev_device());
}

lt_tensor *lt_metadev_randperm(int64_t n, struct lt_generator *generator, int dtype, lt_device device) {
  (void)generator; (void)device;
  return lt_meta_randperm_new(n, dtype, lt_metadev_device());
}

lt_tensor *lt_metadev_multinomial(lt_tensor *self, int64_t num_samples, bool replacement, struct lt_generator *generator) {
  (void)generator;   /* nothing is drawn */
  int64_t sz[2];
  int nd = lt_meta_multinomial("multinomial", self, num_samples, replacement, sz);
  return nd < 0 ? NULL : lt_tensor_new(LT_INT64, lt_metadev_device(), nd, sz);
}

/* ---- ops with their own dtype rule ---- */

lt_tensor *lt_metadev_where(lt_tensor *condition, lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  if (condition->dtype != LT_BOOL && condition->dtype != LT_UINT8)
    return lt_error_null("where: argument 'condition' must be a bool tensor, got %s",
                         lt_dtype_name((lt_dtype)condition->dtype));
  lt_tensor *ts[2] = {self, other};
  lt_tensor *all[3] = {condition, self, other};
  return lt_metadev_pointwise("where", all, 3, LT_MD_PROMOTE, lt_result_type(2, ts), out);
}

static lt_tensor *softmax_like(const char *op, lt_tensor *self, int64_t dim, int dtype, lt_tensor *out) {
  lt_dtype odt;
  int d;
  if (lt_meta_softmax(op, self, dtype, dim, &odt, &d) < 0) return NULL;
  return lt_metadev_result(op, out, odt, self->ndim, self->sizes);
}

lt_tensor *lt_metadev_softmax(lt_tensor *self, int64_t dim, int dtype, lt_tensor *out) {
  return softmax_like("softmax", self, dim, dtype, out);
}

lt_tensor *lt_metadev_log_softmax(lt_tensor *self, int64_t dim, int dtype, lt_tensor *out) {
  return softmax_like("log_softmax", self, dim, dtype, out);
}

static lt_tensor *softmax_back(const char *op, lt_tensor *grad_output, lt_tensor *output, int64_t dim) {
  int d;
  if (lt_meta_softmax_backward(op, grad_output, output, dim, &d) < 0) return NULL;
  return lt_tensor_new((lt_dtype)output->dtype, lt_metadev_device(), output->ndim, output->sizes);
}

lt_tensor *lt_metadev_softmax_backward(lt_tensor *grad_output, lt_tensor *output, int64_t dim) {
  return softmax_back("softmax_backward", grad_output, output, dim);
}

lt_tensor *lt_metadev_log_softmax_backward(lt_tensor *grad_output, lt_tensor *output, int64_t dim) {
  return softmax_back("log_softmax_backward", grad_output, output, dim);
}

/* conj_physical: elementwise for complex self (the result follows self's layout), a
** contiguous copy for a real one, as on the CPU */
lt_tensor *lt_metadev_conj_physical(lt_tensor *self, lt_tensor *out) {
  if (lt_dtype_is_complex((lt_dtype)self->dtype)) return lt_metadev_pointwise("conj_physical", &self, 1, LT_MD_SELF, -1, out);
  return lt_metadev_result("conj_physical", out, (lt_dtype)self->dtype, self->ndim, self->sizes);
}

/* ---- indexing: the shape is the index's; the indices' values are not checked (no data) ---- */

lt_tensor *lt_metadev_index_select(lt_tensor *self, int64_t dim, lt_tensor *index, lt_tensor *out) {
  int d = lt_wrap_dim("index_select", dim, self->ndim);
  if (d < 0) return NULL;
  if (index->ndim > 1) return lt_error_null("index_select: argument 'index' must be 1-D, got %d dims", index->ndim);
  if (lt_meta_check_index_dtype("index_select", "index", index) < 0) return NULL;
  int64_t ns[LT_MAX_DIMS];
  int nd = self->ndim;
  memcpy(ns, self->sizes, sizeof(int64_t) * (size_t)nd);
  if (nd) ns[d] = index->numel;
  else if (index->ndim == 1) { ns[0] = index->numel; nd = 1; }
  return lt_meta_result("index_select", out, out ? (lt_dtype)out->dtype : (lt_dtype)self->dtype, lt_metadev_device(), nd, ns);
}

lt_tensor *lt_metadev_gather(lt_tensor *self, int64_t dim, lt_tensor *index, lt_tensor *out) {
  int d = lt_wrap_dim("gather", dim, self->ndim);
  if (d < 0) return NULL;
  if (lt_meta_check_index_shape("gather", index, self, d, "self") < 0) return NULL;
  if (lt_meta_check_index_dtype("gather", "index", index) < 0) return NULL;
  return lt_meta_result("gather", out, out ? (lt_dtype)out->dtype : (lt_dtype)self->dtype, lt_metadev_device(),
                        index->ndim, index->sizes);
}

lt_tensor *lt_metadev_embedding(lt_tensor *weight, lt_tensor *indices, int64_t padding_idx) {
  if (weight->ndim != 2)
    return lt_error_null("embedding: argument 'weight' must be 2-D ([num_embeddings, embedding_dim]), got %d-D",
                         weight->ndim);
  if (indices->ndim + 1 > LT_MAX_DIMS) return lt_error_null("embedding: argument 'indices' has too many dims");
  if (lt_meta_padding_row("embedding", padding_idx, weight->sizes[0]) < -1) return NULL;
  if (lt_meta_check_embedding_indices("embedding", indices) < 0) return NULL;
  int64_t sz[LT_MAX_DIMS];
  memcpy(sz, indices->sizes, sizeof(int64_t) * (size_t)indices->ndim);
  sz[indices->ndim] = weight->sizes[1];
  return lt_tensor_new((lt_dtype)weight->dtype, lt_metadev_device(), indices->ndim + 1, sz);
}

/* ---- the result's shape (or value) depends on the data: refused ---- */

lt_tensor *lt_metadev_nonzero(lt_tensor *self, lt_tensor *out) {
  (void)self; (void)out;
  return lt_metadev_data_dependent("nonzero");
}

lt_tensor *lt_metadev_masked_select(lt_tensor *self, lt_tensor *mask, lt_tensor *out) {
  (void)self; (void)mask; (void)out;
  return lt_metadev_data_dependent("masked_select");
}

int lt_metadev_unique(lt_tensor *self, bool sorted, bool return_inverse, bool return_counts, int64_t dim,
                      lt_tensor **output, lt_tensor **inverse_indices, lt_tensor **counts) {
  (void)self; (void)sorted; (void)return_inverse; (void)return_counts; (void)dim;
  *output = *inverse_indices = *counts = NULL;
  lt_metadev_data_dependent("unique");
  return -1;
}

lt_tensor *lt_metadev_bincount(lt_tensor *self, lt_tensor *weights, int64_t minlength) {
  (void)self; (void)weights; (void)minlength;
  return lt_metadev_data_dependent("bincount");
}

lt_tensor *lt_metadev_one_hot(lt_tensor *self, int64_t num_classes) {
  if (num_classes > 0) {   /* the class count given: the shape is known */
    lt_dtype it = (lt_dtype)self->dtype;
    if (lt_dtype_is_float(it) || it == LT_BOOL)
      return lt_error_null("one_hot: argument 'self' must be an integer (index) tensor, got %s", lt_dtype_name(it));
    if (self->ndim + 1 > LT_MAX_DIMS) return lt_error_null("one_hot: argument 'self' has too many dims");
    int64_t sz[LT_MAX_DIMS];
    memcpy(sz, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    sz[self->ndim] = num_classes;
    return lt_tensor_new(LT_INT64, lt_metadev_device(), self->ndim + 1, sz);
  }
  return lt_metadev_data_dependent("one_hot");
}

int lt_metadev_equal(lt_tensor *self, lt_tensor *other) {
  (void)self; (void)other;
  lt_error("equal: cannot run on meta tensors: its result is a value read from the data");
  return -1;
}

int lt_metadev_allclose(lt_tensor *self, lt_tensor *other, double rtol, double atol, bool equal_nan) {
  (void)self; (void)other; (void)rtol; (void)atol; (void)equal_nan;
  lt_error("allclose: cannot run on meta tensors: its result is a value read from the data");
  return -1;
}

lt_tensor *lt_metadev_histc(lt_tensor *self, int64_t bins, lt_scalar min, lt_scalar max, lt_tensor *out) {
  double lo = lt_scalar_to_double(min), hi = lt_scalar_to_double(max);
  if (lt_meta_histc_check(self, bins, lo, hi) < 0) return NULL;
  return lt_metadev_result("histc", out, (lt_dtype)self->dtype, 1, &bins);
}

/* _linear: input [N, in] times weight [out, in] transposed, plus bias: [N, out] in the promoted dtype */
lt_tensor *lt_metadev__linear(lt_tensor *input, lt_tensor *weight, lt_tensor *bias) {
  if (input->ndim != 2 || weight->ndim != 2 || input->sizes[1] != weight->sizes[1])
    return lt_error_null("_linear: arguments 'input' [N, in] and 'weight' [out, in] do not match");
  lt_tensor *ts[3] = {input, weight, bias};
  int64_t sz[2] = {input->sizes[0], weight->sizes[0]};
  return lt_tensor_new((lt_dtype)lt_result_type(bias ? 3 : 2, ts), lt_metadev_device(), 2, sz);
}

/* ---- searches and takes: the input's (index's) shape; the values are not looked at ---- */

lt_tensor *lt_metadev_searchsorted(lt_tensor *sorted_sequence, lt_tensor *input, bool out_int32, bool right,
                                   const char *side, lt_tensor *sorter) {
  if (lt_meta_search_side("searchsorted", side, &right) < 0) return NULL;
  if (lt_meta_search_check("searchsorted", "sorted_sequence", sorted_sequence, input, sorter) < 0) return NULL;
  return lt_tensor_new(out_int32 ? LT_INT32 : LT_INT64, lt_metadev_device(), input->ndim, input->sizes);
}

lt_tensor *lt_metadev_bucketize(lt_tensor *self, lt_tensor *boundaries, bool out_int32, bool right) {
  (void)right;
  if (boundaries->ndim != 1)
    return lt_error_null("bucketize: argument 'boundaries' must be 1-D, got %d dims", boundaries->ndim);
  if (lt_meta_search_check("bucketize", "boundaries", boundaries, self, NULL) < 0) return NULL;
  return lt_tensor_new(out_int32 ? LT_INT32 : LT_INT64, lt_metadev_device(), self->ndim, self->sizes);
}

lt_tensor *lt_metadev_take(lt_tensor *self, lt_tensor *index, lt_tensor *out) {
  if (lt_meta_check_index_dtype("take", "index", index) < 0) return NULL;
  return lt_meta_result("take", out, out ? (lt_dtype)out->dtype : (lt_dtype)self->dtype, lt_metadev_device(),
                        index->ndim, index->sizes);
}

lt_tensor *lt_metadev_isin(lt_tensor *elements, lt_tensor *test_elements, bool assume_unique, bool invert) {
  (void)test_elements; (void)assume_unique; (void)invert;
  return lt_tensor_new(LT_BOOL, lt_metadev_device(), elements->ndim, elements->sizes);
}
