/*
** norm.c — normalisation geometry and checks (norm.h).
*/
#include "meta/norm.h"

/* NULL, or floating point */
static int check_float(const char *op, const char *arg, const lt_tensor *t) {
  return t ? lt_meta_check_float(op, arg, t) : 0;
}

/* a per-feature tensor: NULL, or n floating point elements */
static int feature(const char *op, const char *arg, const lt_tensor *t, int64_t n) {
  if (!t) return 0;
  char b[96];
  if (t->numel != n)
    return lt_error("%s: argument '%s' must have %lld elements, got shape %s", op, arg, (long long)n,
                    lt_shape_str(t->ndim, t->sizes, b, sizeof b));
  return check_float(op, arg, t);
}

/* the input's trailing dims are normalized_shape: M rows of D */
static int ln_geom(const char *op, const lt_tensor *input, lt_intlist ns, int64_t *M, int64_t *D) {
  char a[96], b[96];
  if (ns.n < 1 || ns.n > input->ndim)
    return lt_error("%s: argument 'normalized_shape' must name 1 to %d trailing dims of the input, got %d", op,
                    input->ndim, ns.n < 0 ? 0 : ns.n);
  int k = input->ndim - ns.n;
  *D = 1;
  for (int i = 0; i < ns.n; i++) {
    if (ns.v[i] != input->sizes[k + i])
      return lt_error("%s: argument 'normalized_shape' is %s but the input's trailing dims are %s", op,
                      lt_shape_str(ns.n, ns.v, a, sizeof a), lt_shape_str(ns.n, input->sizes + k, b, sizeof b));
    *D *= ns.v[i];
  }
  *M = 1;
  for (int i = 0; i < k; i++) *M *= input->sizes[i];
  return 0;
}

int lt_meta_layer_norm(const char *op, const lt_tensor *input, lt_intlist normalized_shape, const lt_tensor *weight,
                       const lt_tensor *bias, int64_t *M, int64_t *D) {
  if (check_float(op, "input", input) < 0 || ln_geom(op, input, normalized_shape, M, D) < 0) return -1;
  if (feature(op, "weight", weight, *D) < 0 || feature(op, "bias", bias, *D) < 0) return -1;
  return 0;
}

int lt_meta_layer_norm_backward(const char *op, const lt_tensor *grad_output, const lt_tensor *input,
                                const lt_tensor *mean, const lt_tensor *rstd, const lt_tensor *weight,
                                lt_intlist normalized_shape, int64_t *M, int64_t *D) {
  if (ln_geom(op, input, normalized_shape, M, D) < 0) return -1;
  if (!lt_tensor_same_shape(grad_output, input) || mean->numel != *M || rstd->numel != *M)
    return lt_error("%s: arguments 'grad_output', 'mean' and 'rstd' do not match the input", op);
  return feature(op, "weight", weight, *D);
}

/* input (N, C, ...) as (N, C, S) */
static int bn_geom(const char *op, const lt_tensor *input, int64_t *N, int64_t *C, int64_t *S) {
  char a[96];
  if (input->ndim < 2)
    return lt_error("%s: argument 'input' must have at least 2 dims (N, C, ...), got shape %s", op,
                    lt_shape_str(input->ndim, input->sizes, a, sizeof a));
  *N = input->sizes[0], *C = input->sizes[1], *S = 1;
  for (int d = 2; d < input->ndim; d++) *S *= input->sizes[d];
  return 0;
}

int lt_meta_batch_norm(const char *op, const lt_tensor *input, const lt_tensor *weight, const lt_tensor *bias,
                       const lt_tensor *running_mean, const lt_tensor *running_var, bool training, int64_t *N,
                       int64_t *C, int64_t *S) {
  char a[96];
  if (check_float(op, "input", input) < 0 || bn_geom(op, input, N, C, S) < 0) return -1;
  if (training && *N * *S <= 1)
    return lt_error("%s: expected more than 1 value per channel when training, got input of shape %s", op,
                    lt_shape_str(input->ndim, input->sizes, a, sizeof a));
  if (!training && (!running_mean || !running_var))
    return lt_error("%s: arguments 'running_mean' and 'running_var' are required when not training", op);
  if (feature(op, "weight", weight, *C) < 0 || feature(op, "bias", bias, *C) < 0 ||
      feature(op, "running_mean", running_mean, *C) < 0 || feature(op, "running_var", running_var, *C) < 0)
    return -1;
  return 0;
}

int lt_meta_batch_norm_backward(const char *op, const lt_tensor *grad_output, const lt_tensor *input,
                                const lt_tensor *weight, const lt_tensor *save_mean, const lt_tensor *save_invstd,
                                int64_t *N, int64_t *C, int64_t *S) {
  if (bn_geom(op, input, N, C, S) < 0) return -1;
  if (!lt_tensor_same_shape(grad_output, input))
    return lt_error("%s: argument 'grad_output' does not match the input's shape", op);
  if (feature(op, "weight", weight, *C) < 0 || feature(op, "save_mean", save_mean, *C) < 0 ||
      feature(op, "save_invstd", save_invstd, *C) < 0)
    return -1;
  return 0;
}

int lt_meta_group_norm(const char *op, const lt_tensor *input, int64_t num_groups, const lt_tensor *weight,
                       const lt_tensor *bias) {
  char a[96];
  if (input->ndim < 2)
    return lt_error("%s: argument 'input' must have at least 2 dims (N, C, ...), got shape %s", op,
                    lt_shape_str(input->ndim, input->sizes, a, sizeof a));
  int64_t C = input->sizes[1];
  if (num_groups <= 0 || C % num_groups)
    return lt_error("%s: argument 'num_groups' (%lld) must divide the number of channels (%lld)", op,
                    (long long)num_groups, (long long)C);
  if (weight && (weight->ndim != 1 || weight->sizes[0] != C))
    return lt_error("%s: argument 'weight' must be 1-D with %lld elements, got shape %s", op, (long long)C,
                    lt_shape_str(weight->ndim, weight->sizes, a, sizeof a));
  if (bias && (bias->ndim != 1 || bias->sizes[0] != C))
    return lt_error("%s: argument 'bias' must be 1-D with %lld elements, got shape %s", op, (long long)C,
                    lt_shape_str(bias->ndim, bias->sizes, a, sizeof a));
  return 0;
}

int lt_meta_softmax(const char *op, const lt_tensor *self, int dtype, int64_t dim, lt_dtype *odt, int *d) {
  *odt = dtype >= 0 ? (lt_dtype)dtype : lt_tensor_dtype(self);
  if (!lt_dtype_is_float(*odt))
    return lt_error("%s: argument 'self' must be a floating point tensor (or pass dtype=), got %s", op,
                    lt_dtype_name(*odt));
  *d = lt_wrap_dim(op, dim, self->ndim);
  return *d < 0 ? -1 : 0;
}

int lt_meta_softmax_backward(const char *op, const lt_tensor *grad_output, const lt_tensor *output, int64_t dim,
                             int *d) {
  if (!lt_tensor_same_shape(grad_output, output)) {
    char a[96], b[96];
    return lt_error("%s: argument 'grad_output' has shape %s but 'output' has shape %s", op,
                    lt_shape_str(grad_output->ndim, grad_output->sizes, a, sizeof a),
                    lt_shape_str(output->ndim, output->sizes, b, sizeof b));
  }
  lt_dtype odt = lt_tensor_dtype(output);
  if (!lt_dtype_is_float(odt))
    return lt_error("%s: argument 'output' must be a floating point tensor, got %s", op, lt_dtype_name(odt));
  *d = lt_wrap_dim(op, dim, output->ndim);
  return *d < 0 ? -1 : 0;
}
