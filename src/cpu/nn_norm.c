/*
** nn_norm.c — batch_norm, layer_norm (and group_norm through it) forward and
** backward kernels.
**
** layer_norm normalises rows of D contiguous elements; batch_norm views its
** input as (N, C, S) and normalises each channel over N*S elements. Statistics
** are two-pass (mean, then squared deviations) and accumulate in double, so
** float32 inputs keep their digits; the element loops run in the data's type.
** float64 stays float64; other floating dtypes compute in float32.
*/
#include <math.h>
#include <string.h>
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "cpu/parallel.h"
#include "meta/norm.h"

#define LANES 8

static lt_dtype cdt_of(lt_dtype dt) { return dt == LT_FLOAT64 ? LT_FLOAT64 : LT_FLOAT32; }

/* a float64 contiguous copy of an optional per-feature tensor (NULL stays NULL; checked) */
static int vec64(lt_tensor *t, lt_tensor **out) {
  *out = NULL;
  if (!t) return 0;
  *out = lt_tensor_to_dtype_contig(t, LT_FLOAT64);
  return *out ? 0 : -1;
}

/* converted result in dtype dt (consumes r) */
static lt_tensor *as_dtype(lt_tensor *r, lt_dtype dt) {
  if (!r || lt_tensor_dtype(r) == dt) return r;
  lt_tensor *c = lt_tensor_clone_as(r, dt);
  lt_tensor_release(r);
  return c;
}

/* ------------------------------------------------------------ sum helpers */
#define SUMS(T, S)                                                                          \
  static double sum_##S(const T *x, int64_t n) {                                            \
    double acc[LANES] = {0}, s = 0;                                                          \
    int64_t j = 0;                                                                           \
    for (; j + LANES <= n; j += LANES)                                                       \
      for (int l = 0; l < LANES; l++) acc[l] += x[j + l];                                    \
    for (; j < n; j++) s += x[j];                                                            \
    for (int l = 0; l < LANES; l++) s += acc[l];                                             \
    return s;                                                                                \
  }                                                                                          \
  static double sqdev_##S(const T *x, int64_t n, double m) {                                \
    double acc[LANES] = {0}, s = 0;                                                          \
    int64_t j = 0;                                                                           \
    for (; j + LANES <= n; j += LANES)                                                       \
      for (int l = 0; l < LANES; l++) { double d = x[j + l] - m; acc[l] += d * d; }          \
    for (; j < n; j++) { double d = x[j] - m; s += d * d; }                                  \
    for (int l = 0; l < LANES; l++) s += acc[l];                                             \
    return s;                                                                                \
  }                                                                                          \
  /* sum(g) and sum(g * (x - m)) */                                                          \
  static void gsums_##S(const T *g, const T *x, int64_t n, double m, double *sg, double *sgx) { \
    double a[LANES] = {0}, b[LANES] = {0}, s1 = 0, s2 = 0;                                   \
    int64_t j = 0;                                                                           \
    for (; j + LANES <= n; j += LANES)                                                       \
      for (int l = 0; l < LANES; l++) { a[l] += g[j + l]; b[l] += g[j + l] * (x[j + l] - m); } \
    for (; j < n; j++) { s1 += g[j]; s2 += g[j] * (x[j] - m); }                              \
    for (int l = 0; l < LANES; l++) { s1 += a[l]; s2 += b[l]; }                              \
    *sg += s1, *sgx += s2;                                                                   \
  }
SUMS(float, f)
SUMS(double, d)

/* ================================================================ layer_norm */

typedef struct ln_job {
  bool f32;
  const void *x, *g;
  void *o;
  const double *w, *b;
  void *mean, *rstd;   /* compute dtype, one per row */
  int64_t D;
  double eps;
} ln_job;

#define LN_ROWS(T, S)                                                                       \
  static void ln_fwd_##S(const ln_job *j, int64_t r0, int64_t r1) {                          \
    int64_t D = j->D;                                                                        \
    for (int64_t r = r0; r < r1; r++) {                                                      \
      const T *x = (const T *)j->x + r * D;                                                  \
      T *o = (T *)j->o + r * D;                                                              \
      double m = D ? sum_##S(x, D) / D : 0;                                                  \
      double v = D ? sqdev_##S(x, D, m) / D : 0;                                             \
      double rs = 1 / sqrt(v + j->eps);                                                      \
      ((T *)j->mean)[r] = (T)m, ((T *)j->rstd)[r] = (T)rs;                                   \
      T tm = (T)m, trs = (T)rs;                                                              \
      if (j->w && j->b)                                                                      \
        for (int64_t k = 0; k < D; k++) o[k] = (x[k] - tm) * trs * (T)j->w[k] + (T)j->b[k];  \
      else if (j->w)                                                                         \
        for (int64_t k = 0; k < D; k++) o[k] = (x[k] - tm) * trs * (T)j->w[k];               \
      else if (j->b)                                                                         \
        for (int64_t k = 0; k < D; k++) o[k] = (x[k] - tm) * trs + (T)j->b[k];               \
      else                                                                                   \
        for (int64_t k = 0; k < D; k++) o[k] = (x[k] - tm) * trs;                            \
    }                                                                                        \
  }
LN_ROWS(float, f)
LN_ROWS(double, d)

static void ln_fwd_chunk(void *ctx, int64_t b, int64_t e) {
  const ln_job *j = ctx;
  if (j->f32) ln_fwd_f(j, b, e); else ln_fwd_d(j, b, e);
}

/* M rows of D elements: checks normalized_shape against input's trailing dims */
int lt_cpu_native_layer_norm(lt_tensor *input, lt_intlist normalized_shape, lt_tensor *weight, lt_tensor *bias,
                             double eps, lt_tensor **output, lt_tensor **mean, lt_tensor **rstd) {
  const char *op = "layer_norm";
  *output = *mean = *rstd = NULL;
  int64_t M = 0, D = 0;
  if (lt_meta_layer_norm(op, input, normalized_shape, weight, bias, &M, &D) < 0) return -1;
  lt_dtype odt = lt_tensor_dtype(input), cdt = cdt_of(odt);
  lt_tensor *w = NULL, *b = NULL, *x = NULL, *o = NULL, *mt = NULL, *rt = NULL;
  if (vec64(weight, &w) < 0 || vec64(bias, &b) < 0) goto fail;
  if (!(x = lt_tensor_to_dtype_contig(input, cdt))) goto fail;
  int64_t ss[LT_MAX_DIMS];
  int k = input->ndim - normalized_shape.n;
  for (int i = 0; i < input->ndim; i++) ss[i] = i < k ? input->sizes[i] : 1;
  o = lt_tensor_new(cdt, lt_tensor_device(input), input->ndim, input->sizes);
  mt = lt_tensor_new(cdt, lt_tensor_device(input), input->ndim, ss);
  rt = lt_tensor_new(cdt, lt_tensor_device(input), input->ndim, ss);
  if (!o || !mt || !rt) goto fail;
  ln_job j = { cdt == LT_FLOAT32, lt_tensor_data(x), NULL, lt_tensor_data(o), w ? lt_tensor_data(w) : NULL,
               b ? lt_tensor_data(b) : NULL, lt_tensor_data(mt), lt_tensor_data(rt), D, eps };
  int64_t grain = LT_GRAIN_ELEMENTWISE / (D > 0 ? D : 1);
  lt_parallel_for(M, grain > 0 ? grain : 1, ln_fwd_chunk, &j);
  lt_tensor_release(w), lt_tensor_release(b), lt_tensor_release(x);
  *output = as_dtype(o, odt), *mean = as_dtype(mt, odt), *rstd = as_dtype(rt, odt);
  if (!*output || !*mean || !*rstd) {
    lt_tensor_release(*output), lt_tensor_release(*mean), lt_tensor_release(*rstd);
    *output = *mean = *rstd = NULL;
    return -1;
  }
  return 0;
fail:
  lt_tensor_release(w), lt_tensor_release(b), lt_tensor_release(x);
  lt_tensor_release(o), lt_tensor_release(mt), lt_tensor_release(rt);
  return -1;
}

/* The gradients of layer_norm, all three in one pass over grad_output and input
** (the backward of a plain loss.backward()): each row's input gradient, and the
** weight and bias gradients as column sums. Rows go in blocks of a size that
** depends on M only; each block adds into its own float64 partial sums, which
** are then added in block order, so the result does not depend on the thread
** count. On (64, 128, 512) float32, one core: 8.9 ms for the three separate
** passes (input gradient, weight gradient, bias sum), 6.2 ms for this one. */
typedef struct lnb_job {
  bool f32;
  const void *x, *g, *mean, *rstd;
  void *o;                /* NULL: no input gradient */
  const void *w;          /* the weight in the compute dtype, or NULL */
  double *pw, *pb;        /* per block, D each; NULL: not wanted */
  int64_t M, D, rows;
} lnb_job;

/* columns summed in the data's type over runs of LNB_RUN rows (vectorised, no
** conversion per element), the runs into the block's float64 partial sums */
#define LNB_RUN 16
#define LNB_COLS 1024

#define LNB(T, S)                                                                           \
  static void lnb_row_##S(const lnb_job *j, int64_t r) {                                      \
    int64_t D = j->D;                                                                        \
    const T *x = (const T *)j->x + r * D, *g = (const T *)j->g + r * D, *w = j->w;           \
    T *o = (T *)j->o + r * D;                                                                \
    double m = ((const T *)j->mean)[r], rs = ((const T *)j->rstd)[r];                       \
    double sg = 0, sgx = 0;                                                                  \
    if (w) {                                                                                 \
      T tmp[256];                                                                            \
      for (int64_t k0 = 0; k0 < D; k0 += 256) {                                              \
        int64_t n = D - k0 < 256 ? D - k0 : 256;                                             \
        for (int64_t k = 0; k < n; k++) tmp[k] = g[k0 + k] * w[k0 + k];                     \
        gsums_##S(tmp, x + k0, n, m, &sg, &sgx);                                             \
      }                                                                                      \
    } else gsums_##S(g, x, D, m, &sg, &sgx);                                                 \
    T a = (T)(sg / D), c = (T)(sgx * rs * rs / D), trs = (T)rs, tm = (T)m;                   \
    if (w)                                                                                   \
      for (int64_t k = 0; k < D; k++) o[k] = trs * (g[k] * w[k] - a - (x[k] - tm) * c);     \
    else                                                                                     \
      for (int64_t k = 0; k < D; k++) o[k] = trs * (g[k] - a - (x[k] - tm) * c);            \
  }                                                                                          \
  static void lnb_##S(const lnb_job *j, int64_t b0, int64_t b1) {                            \
    int64_t D = j->D;                                                                        \
    T aw[LNB_COLS], ab[LNB_COLS];                                                            \
    for (int64_t blk = b0; blk < b1; blk++) {                                                \
      int64_t r0 = blk * j->rows, r1 = r0 + j->rows < j->M ? r0 + j->rows : j->M;            \
      double *pw = j->pw ? j->pw + blk * D : NULL, *pb = j->pb ? j->pb + blk * D : NULL;     \
      if (pw) memset(pw, 0, (size_t)D * sizeof *pw);                                         \
      if (pb) memset(pb, 0, (size_t)D * sizeof *pb);                                         \
      for (int64_t q0 = r0; q0 < r1; q0 += LNB_RUN) {                                        \
        int64_t q1 = q0 + LNB_RUN < r1 ? q0 + LNB_RUN : r1;                                  \
        if (j->o)                                                                            \
          for (int64_t r = q0; r < q1; r++) lnb_row_##S(j, r);                               \
        if (!pw && !pb) continue;                                                            \
        /* the run's rows are in cache now: their column sums, a band at a time */          \
        for (int64_t c0 = 0; c0 < D; c0 += LNB_COLS) {                                       \
          int64_t n = D - c0 < LNB_COLS ? D - c0 : LNB_COLS;                                 \
          for (int64_t k = 0; k < n; k++) aw[k] = 0, ab[k] = 0;                              \
          for (int64_t r = q0; r < q1; r++) {                                                \
            const T *x = (const T *)j->x + r * D + c0, *g = (const T *)j->g + r * D + c0;    \
            T m = ((const T *)j->mean)[r], rs = ((const T *)j->rstd)[r];                    \
            for (int64_t k = 0; k < n; k++) aw[k] += g[k] * ((x[k] - m) * rs);               \
            for (int64_t k = 0; k < n; k++) ab[k] += g[k];                                   \
          }                                                                                  \
          if (pw) for (int64_t k = 0; k < n; k++) pw[c0 + k] += aw[k];                       \
          if (pb) for (int64_t k = 0; k < n; k++) pb[c0 + k] += ab[k];                       \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
  }
LNB(float, f)
LNB(double, d)

static void lnb_chunk(void *ctx, int64_t b, int64_t e) {
  const lnb_job *j = ctx;
  if (j->f32) lnb_f(j, b, e); else lnb_d(j, b, e);
}

/* an empty tensor of input's dtype: a gradient that was not asked for */
static lt_tensor *not_wanted(const lt_tensor *input) {
  int64_t zero = 0;
  return lt_tensor_new(lt_tensor_dtype(input), lt_tensor_device(input), 1, &zero);
}

/* the partial sums of nb blocks added in block order, as a tensor of shape
** (ndim, sizes) in dtype dt */
static lt_tensor *block_sum(const double *p, int64_t nb, int64_t D, int ndim, const int64_t *sizes, lt_dtype dt) {
  lt_tensor *r = lt_tensor_new(LT_FLOAT64, lt_device_cpu(), ndim, sizes);
  if (!r) return NULL;
  double *v = lt_tensor_data(r);
  for (int64_t k = 0; k < D; k++) v[k] = 0;
  for (int64_t b = 0; b < nb; b++)
    for (int64_t k = 0; k < D; k++) v[k] += p[b * D + k];
  return as_dtype(r, dt);
}

/* the gradients asked for (the others empty), the errors naming op */
static int ln_grads(const char *op, lt_tensor *grad_output, lt_tensor *input, lt_tensor *mean, lt_tensor *rstd,
                    lt_tensor *weight, lt_intlist normalized_shape, bool input_grad, bool weight_grad,
                    bool bias_grad, lt_tensor **grad_input, lt_tensor **grad_weight, lt_tensor **grad_bias) {
  *grad_input = *grad_weight = *grad_bias = NULL;
  int64_t M = 0, D = 0;
  if (lt_meta_layer_norm_backward(op, grad_output, input, mean, rstd, weight, normalized_shape, &M, &D) < 0)
    return -1;
  lt_dtype odt = lt_tensor_dtype(input), cdt = cdt_of(odt);
  lt_tensor *w = NULL, *x = NULL, *g = NULL, *m = NULL, *r = NULL, *o = NULL, *part = NULL;
  int rc = -1;
  if (weight && !(w = lt_tensor_to_dtype_contig(weight, cdt))) goto done;
  if (!(x = lt_tensor_to_dtype_contig(input, cdt)) || !(g = lt_tensor_to_dtype_contig(grad_output, cdt)) ||
      !(m = lt_tensor_to_dtype_contig(mean, cdt)) || !(r = lt_tensor_to_dtype_contig(rstd, cdt)))
    goto done;
  if (input_grad && !(o = lt_tensor_new(cdt, lt_tensor_device(input), input->ndim, input->sizes))) goto done;
  /* at most 256 blocks of at least 32 rows: the partial sums stay small */
  int64_t rows = (M + 255) / 256;
  if (rows < 32) rows = 32;
  int64_t nb = M > 0 ? (M + rows - 1) / rows : 0, np = (int64_t)weight_grad + (int64_t)bias_grad;
  int64_t psz[1] = { nb * D * (np > 0 ? np : 1) };
  if (!(part = lt_tensor_new(LT_FLOAT64, lt_device_cpu(), 1, psz))) goto done;
  double *pv = lt_tensor_data(part);
  lnb_job j = { cdt == LT_FLOAT32, lt_tensor_data(x), lt_tensor_data(g), lt_tensor_data(m), lt_tensor_data(r),
                o ? lt_tensor_data(o) : NULL, w ? lt_tensor_data(w) : NULL,
                weight_grad ? pv : NULL, bias_grad ? pv + (weight_grad ? nb * D : 0) : NULL, M, D, rows };
  int64_t grain = LT_GRAIN_ELEMENTWISE / (rows * D > 0 ? rows * D : 1);
  lt_parallel_for(nb, grain > 0 ? grain : 1, lnb_chunk, &j);
  *grad_input = input_grad ? as_dtype(o, odt) : not_wanted(input);
  o = NULL;
  *grad_weight = weight_grad ? block_sum(j.pw, nb, D, normalized_shape.n, normalized_shape.v, odt) : not_wanted(input);
  *grad_bias = bias_grad ? block_sum(j.pb, nb, D, normalized_shape.n, normalized_shape.v, odt) : not_wanted(input);
  if (*grad_input && *grad_weight && *grad_bias) rc = 0;
  else {
    lt_tensor_release(*grad_input), lt_tensor_release(*grad_weight), lt_tensor_release(*grad_bias);
    *grad_input = *grad_weight = *grad_bias = NULL;
  }
done:
  lt_tensor_release(w), lt_tensor_release(x), lt_tensor_release(g), lt_tensor_release(m), lt_tensor_release(r);
  lt_tensor_release(o), lt_tensor_release(part);
  return rc;
}

int lt_cpu_native_layer_norm_backward(lt_tensor *grad_output, lt_tensor *input, lt_tensor *mean, lt_tensor *rstd,
                                      lt_tensor *weight, lt_intlist normalized_shape, bool input_grad,
                                      bool weight_grad, bool bias_grad, lt_tensor **grad_input,
                                      lt_tensor **grad_weight, lt_tensor **grad_bias) {
  return ln_grads("native_layer_norm_backward", grad_output, input, mean, rstd, weight, normalized_shape, input_grad,
                  weight_grad, bias_grad, grad_input, grad_weight, grad_bias);
}

/* gi = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), gw = g * w */
lt_tensor *lt_cpu_layer_norm_backward(lt_tensor *grad_output, lt_tensor *input, lt_tensor *mean, lt_tensor *rstd,
                                      lt_tensor *weight, lt_intlist normalized_shape) {
  lt_tensor *gi, *gw, *gb;
  if (ln_grads("layer_norm_backward", grad_output, input, mean, rstd, weight, normalized_shape, true, false, false,
               &gi, &gw, &gb) < 0)
    return NULL;
  lt_tensor_release(gw), lt_tensor_release(gb);
  return gi;
}

/* grad of weight: sum over rows of g * (x - mean) * rstd, per column */
lt_tensor *lt_cpu_layer_norm_backward_weight(lt_tensor *grad_output, lt_tensor *input, lt_tensor *mean,
                                             lt_tensor *rstd, lt_intlist normalized_shape) {
  lt_tensor *gi, *gw, *gb;
  if (ln_grads("layer_norm_backward_weight", grad_output, input, mean, rstd, NULL, normalized_shape, false, true,
               false, &gi, &gw, &gb) < 0)
    return NULL;
  lt_tensor_release(gi), lt_tensor_release(gb);
  return gw;
}

/* ================================================================ batch_norm */

typedef struct bn_job {
  bool f32, training;
  const void *x, *g;
  void *o;
  double *mean, *invstd, *var;   /* per channel, float64 */
  const double *w, *b;
  double *sg, *sgx;              /* backward sums per channel */
  int64_t N, C, S;
  double eps;
  int mode;
} bn_job;

enum { BN_STATS, BN_APPLY, BN_BSUMS, BN_BAPPLY };

#define BN_CHAN(T, S_)                                                                      \
  static void bn_chan_##S_(const bn_job *j, int64_t c) {                                      \
    int64_t N = j->N, C = j->C, S = j->S;                                                    \
    const T *x = j->x;                                                                       \
    switch (j->mode) {                                                                       \
      case BN_STATS: {                                                                       \
        double s = 0, q = 0;                                                                 \
        for (int64_t n = 0; n < N; n++) s += sum_##S_(x + (n * C + c) * S, S);               \
        double m = s / (double)(N * S);                                                      \
        for (int64_t n = 0; n < N; n++) q += sqdev_##S_(x + (n * C + c) * S, S, m);          \
        j->mean[c] = m, j->var[c] = q / (double)(N * S);                                     \
        j->invstd[c] = 1 / sqrt(j->var[c] + j->eps);                                         \
        break;                                                                               \
      }                                                                                      \
      case BN_APPLY: {                                                                       \
        double w = j->w ? j->w[c] : 1, b = j->b ? j->b[c] : 0;                               \
        T sc = (T)(w * j->invstd[c]), sh = (T)(b - j->mean[c] * w * j->invstd[c]);           \
        for (int64_t n = 0; n < N; n++) {                                                    \
          const T *xi = x + (n * C + c) * S;                                                 \
          T *o = (T *)j->o + (n * C + c) * S;                                                \
          for (int64_t s = 0; s < S; s++) o[s] = xi[s] * sc + sh;                            \
        }                                                                                    \
        break;                                                                               \
      }                                                                                      \
      case BN_BSUMS: {                                                                       \
        double sg = 0, sgx = 0;                                                              \
        const T *g = j->g;                                                                   \
        for (int64_t n = 0; n < N; n++)                                                      \
          gsums_##S_(g + (n * C + c) * S, x + (n * C + c) * S, S, j->mean[c], &sg, &sgx);    \
        j->sg[c] = sg, j->sgx[c] = sgx;                                                      \
        break;                                                                               \
      }                                                                                      \
      default: {                                                                             \
        /* gi = w*invstd*(g - mean(g) - xhat*mean(g*xhat)) in training, w*invstd*g in eval */ \
        double w = j->w ? j->w[c] : 1, is = j->invstd[c], cnt = (double)(N * S);             \
        T k = (T)(w * is), a = 0, q = 0, m = (T)j->mean[c];                                  \
        if (j->training) a = (T)(j->sg[c] / cnt), q = (T)(j->sgx[c] * is * is / cnt);         \
        const T *g = j->g;                                                                   \
        for (int64_t n = 0; n < N; n++) {                                                    \
          const T *xi = x + (n * C + c) * S, *gi = g + (n * C + c) * S;                      \
          T *o = (T *)j->o + (n * C + c) * S;                                                \
          if (j->training)                                                                   \
            for (int64_t s = 0; s < S; s++) o[s] = k * (gi[s] - a - (xi[s] - m) * q);        \
          else                                                                               \
            for (int64_t s = 0; s < S; s++) o[s] = k * gi[s];                                \
        }                                                                                    \
        break;                                                                               \
      }                                                                                      \
    }                                                                                        \
  }
BN_CHAN(float, f)
BN_CHAN(double, d)

/* (N, C) inputs (S = 1): a channel's values are C apart, so a block of
** adjacent channels is done at once, every loop running along a row */
#define BN_COLS 256
#define BN_RUN 64
#define BN_ROWS(T, S_)                                                                      \
  static void bn_cols_##S_(const bn_job *j, int64_t c0, int64_t c1) {                         \
    int64_t N = j->N, C = j->C, w = c1 - c0;                                                 \
    const T *x = (const T *)j->x + c0, *g = j->g ? (const T *)j->g + c0 : NULL;              \
    T *o = j->o ? (T *)j->o + c0 : NULL;                                                     \
    double a[BN_COLS], b[BN_COLS];                                                           \
    T k[BN_COLS], m[BN_COLS], q[BN_COLS], sh[BN_COLS];                                       \
    switch (j->mode) {                                                                       \
      case BN_STATS:                                                                         \
        for (int64_t c = 0; c < w; c++) a[c] = 0, b[c] = 0;                                  \
        /* runs of BN_RUN rows add up in T (vectorised), the runs in double */               \
        for (int64_t n0 = 0; n0 < N; n0 += BN_RUN) {                                         \
          int64_t n1 = n0 + BN_RUN < N ? n0 + BN_RUN : N;                                    \
          for (int64_t c = 0; c < w; c++) k[c] = 0;                                          \
          for (int64_t n = n0; n < n1; n++)                                                  \
            for (int64_t c = 0; c < w; c++) k[c] += x[n * C + c];                            \
          for (int64_t c = 0; c < w; c++) a[c] += k[c];                                      \
        }                                                                                    \
        for (int64_t c = 0; c < w; c++) a[c] /= (double)N, m[c] = (T)a[c];                   \
        for (int64_t n0 = 0; n0 < N; n0 += BN_RUN) {                                         \
          int64_t n1 = n0 + BN_RUN < N ? n0 + BN_RUN : N;                                    \
          for (int64_t c = 0; c < w; c++) k[c] = 0;                                          \
          for (int64_t n = n0; n < n1; n++)                                                  \
            for (int64_t c = 0; c < w; c++) { T d = x[n * C + c] - m[c]; k[c] += d * d; }    \
          for (int64_t c = 0; c < w; c++) b[c] += k[c];                                      \
        }                                                                                    \
        for (int64_t c = 0; c < w; c++) {                                                    \
          j->mean[c0 + c] = a[c], j->var[c0 + c] = b[c] / (double)N;                         \
          j->invstd[c0 + c] = 1 / sqrt(j->var[c0 + c] + j->eps);                             \
        }                                                                                    \
        break;                                                                               \
      case BN_APPLY:                                                                         \
        for (int64_t c = 0; c < w; c++) {                                                    \
          double wt = j->w ? j->w[c0 + c] : 1, bs = j->b ? j->b[c0 + c] : 0;                 \
          k[c] = (T)(wt * j->invstd[c0 + c]);                                                \
          sh[c] = (T)(bs - j->mean[c0 + c] * wt * j->invstd[c0 + c]);                        \
        }                                                                                    \
        for (int64_t n = 0; n < N; n++)                                                      \
          for (int64_t c = 0; c < w; c++) o[n * C + c] = x[n * C + c] * k[c] + sh[c];        \
        break;                                                                               \
      case BN_BSUMS:                                                                         \
        for (int64_t c = 0; c < w; c++) a[c] = 0, b[c] = 0, m[c] = (T)j->mean[c0 + c];       \
        for (int64_t n0 = 0; n0 < N; n0 += BN_RUN) {                                         \
          int64_t n1 = n0 + BN_RUN < N ? n0 + BN_RUN : N;                                    \
          for (int64_t c = 0; c < w; c++) k[c] = 0, q[c] = 0;                                \
          for (int64_t n = n0; n < n1; n++)                                                  \
            for (int64_t c = 0; c < w; c++) {                                                \
              k[c] += g[n * C + c];                                                          \
              q[c] += g[n * C + c] * (x[n * C + c] - m[c]);                                  \
            }                                                                                \
          for (int64_t c = 0; c < w; c++) a[c] += k[c], b[c] += q[c];                        \
        }                                                                                    \
        for (int64_t c = 0; c < w; c++) j->sg[c0 + c] = a[c], j->sgx[c0 + c] = b[c];         \
        break;                                                                               \
      default:                                                                               \
        for (int64_t c = 0; c < w; c++) {                                                    \
          double wt = j->w ? j->w[c0 + c] : 1, is = j->invstd[c0 + c];                       \
          k[c] = (T)(wt * is), m[c] = (T)j->mean[c0 + c];                                    \
          sh[c] = j->training ? (T)(j->sg[c0 + c] / N) : 0;                                  \
          q[c] = j->training ? (T)(j->sgx[c0 + c] * is * is / N) : 0;                        \
        }                                                                                    \
        for (int64_t n = 0; n < N; n++)                                                      \
          for (int64_t c = 0; c < w; c++)                                                    \
            o[n * C + c] = k[c] * (g[n * C + c] - sh[c] - (x[n * C + c] - m[c]) * q[c]);     \
        break;                                                                               \
    }                                                                                        \
  }
BN_ROWS(float, f)
BN_ROWS(double, d)

static void bn_chunk(void *ctx, int64_t b, int64_t e) {
  const bn_job *j = ctx;
  if (j->S == 1) {
    int64_t c0 = b * BN_COLS, c1 = e * BN_COLS < j->C ? e * BN_COLS : j->C;
    for (int64_t c = c0; c < c1; c += BN_COLS) {
      int64_t ce = c + BN_COLS < c1 ? c + BN_COLS : c1;
      if (j->f32) bn_cols_f(j, c, ce); else bn_cols_d(j, c, ce);
    }
    return;
  }
  for (int64_t c = b; c < e; c++) {
    if (j->f32) bn_chan_f(j, c); else bn_chan_d(j, c);
  }
}

static void bn_run(bn_job *j, int mode) {
  j->mode = mode;
  if (j->S == 1) {   /* tasks are blocks of BN_COLS channels */
    int64_t nb = (j->C + BN_COLS - 1) / BN_COLS, per = j->N * BN_COLS;
    int64_t grain = LT_GRAIN_ELEMENTWISE / (per > 0 ? per : 1);
    lt_parallel_for(nb, grain > 0 ? grain : 1, bn_chunk, j);
    return;
  }
  int64_t per = j->N * j->S, grain = LT_GRAIN_ELEMENTWISE / (per > 0 ? per : 1);
  lt_parallel_for(j->C, grain > 0 ? grain : 1, bn_chunk, j);
}

/* running = (1 - momentum) running + momentum v, in place in running's dtype */
static int bn_update(lt_tensor *running, const double *v, int64_t C, double momentum) {
  lt_tensor *old = lt_tensor_to_dtype_contig(running, LT_FLOAT64);
  if (!old) return -1;
  lt_tensor *nw = lt_tensor_new(LT_FLOAT64, lt_tensor_device(running), 1, &C);
  if (!nw) { lt_tensor_release(old); return -1; }
  const double *ov = lt_tensor_data(old);
  double *nv = lt_tensor_data(nw);
  for (int64_t c = 0; c < C; c++) nv[c] = (1 - momentum) * ov[c] + momentum * v[c];
  lt_tensor *src = lt_tensor_alias(nw, 0, running->ndim, running->sizes, NULL);
  int rc = src ? lt_tensor_copy_(running, src) : -1;
  if (rc == 0) lt_tensor_bump_version(running);
  lt_tensor_release(src), lt_tensor_release(nw), lt_tensor_release(old);
  return rc;
}

int lt_cpu_native_batch_norm(lt_tensor *input, lt_tensor *weight, lt_tensor *bias, lt_tensor *running_mean,
                             lt_tensor *running_var, bool training, double momentum, double eps,
                             lt_tensor **output, lt_tensor **save_mean, lt_tensor **save_invstd) {
  const char *op = "batch_norm";
  *output = *save_mean = *save_invstd = NULL;
  int64_t N = 0, C = 0, S = 0;
  if (lt_meta_batch_norm(op, input, weight, bias, running_mean, running_var, training, &N, &C, &S) < 0) return -1;
  lt_dtype odt = lt_tensor_dtype(input), cdt = cdt_of(odt);
  lt_tensor *w = NULL, *b = NULL, *rm = NULL, *rv = NULL, *x = NULL, *o = NULL, *st = NULL;
  if (vec64(weight, &w) < 0 || vec64(bias, &b) < 0 || vec64(running_mean, &rm) < 0 || vec64(running_var, &rv) < 0)
    goto fail;
  if (!(x = lt_tensor_to_dtype_contig(input, cdt))) goto fail;
  int64_t c3[2] = { 3, C };
  if (!(o = lt_tensor_new(cdt, lt_tensor_device(input), input->ndim, input->sizes)) ||
      !(st = lt_tensor_new(LT_FLOAT64, lt_tensor_device(input), 2, c3)))
    goto fail;
  double *mean = lt_tensor_data(st), *invstd = mean + C, *var = mean + 2 * C;
  bn_job j = { cdt == LT_FLOAT32, training, lt_tensor_data(x), NULL, lt_tensor_data(o), mean, invstd, var,
               w ? lt_tensor_data(w) : NULL, b ? lt_tensor_data(b) : NULL, NULL, NULL, N, C, S, eps, 0 };
  if (training) {
    bn_run(&j, BN_STATS);
    if (running_mean && bn_update(running_mean, mean, C, momentum) < 0) goto fail;
    if (running_var) {
      double k = (double)(N * S) / (double)(N * S - 1);   /* the running variance is unbiased */
      for (int64_t c = 0; c < C; c++) var[c] *= k;
      if (bn_update(running_var, var, C, momentum) < 0) goto fail;
    }
  } else {
    const double *mv = lt_tensor_data(rm), *vv = lt_tensor_data(rv);
    for (int64_t c = 0; c < C; c++) mean[c] = mv[c], invstd[c] = 1 / sqrt(vv[c] + eps);
  }
  bn_run(&j, BN_APPLY);
  {
    lt_tensor *sm = lt_tensor_alias(st, 0, 1, &C, NULL), *si = lt_tensor_alias(st, C, 1, &C, NULL);
    *save_mean = sm ? lt_tensor_clone_as(sm, odt) : NULL;
    *save_invstd = si ? lt_tensor_clone_as(si, odt) : NULL;
    lt_tensor_release(sm), lt_tensor_release(si);
  }
  lt_tensor_release(w), lt_tensor_release(b), lt_tensor_release(rm), lt_tensor_release(rv);
  lt_tensor_release(x), lt_tensor_release(st);
  *output = as_dtype(o, odt);
  if (!*output || !*save_mean || !*save_invstd) {
    lt_tensor_release(*output), lt_tensor_release(*save_mean), lt_tensor_release(*save_invstd);
    *output = *save_mean = *save_invstd = NULL;
    return -1;
  }
  return 0;
fail:
  lt_tensor_release(w), lt_tensor_release(b), lt_tensor_release(rm), lt_tensor_release(rv);
  lt_tensor_release(x), lt_tensor_release(o), lt_tensor_release(st);
  return -1;
}

/* which: 0 grad_input, 1 grad_weight (sum g * xhat per channel), 2 grad_bias (sum g) */
static lt_tensor *bn_backward(const char *op, int which, lt_tensor *grad_output, lt_tensor *input,
                              lt_tensor *weight, lt_tensor *save_mean, lt_tensor *save_invstd, bool training) {
  int64_t N = 0, C = 0, S = 0;
  if (lt_meta_batch_norm_backward(op, grad_output, input, weight, save_mean, save_invstd, &N, &C, &S) < 0)
    return NULL;
  lt_dtype odt = lt_tensor_dtype(input), cdt = cdt_of(odt);
  lt_tensor *w = NULL, *m = NULL, *is = NULL, *x = NULL, *g = NULL, *st = NULL, *r = NULL;
  if (vec64(weight, &w) < 0 || vec64(save_mean, &m) < 0 || vec64(save_invstd, &is) < 0) goto done;
  /* the bias needs only sum(g): g stands in for x, so no second tensor is read */
  if (!(g = lt_tensor_to_dtype_contig(grad_output, cdt))) goto done;
  if (which == 2) lt_tensor_retain(g), x = g;
  else if (!(x = lt_tensor_to_dtype_contig(input, cdt))) goto done;
  if (!m && !(m = lt_tensor_new_zeros(LT_FLOAT64, lt_tensor_device(input), 1, &C))) goto done;   /* bias: unused */
  int64_t c2[2] = { 2, C };
  if (!(st = lt_tensor_new(LT_FLOAT64, lt_tensor_device(input), 2, c2))) goto done;
  double *sg = lt_tensor_data(st), *sgx = sg + C;
  bn_job j = { cdt == LT_FLOAT32, training, lt_tensor_data(x), lt_tensor_data(g), NULL, (double *)lt_tensor_data(m),
               is ? (double *)lt_tensor_data(is) : NULL, NULL, w ? lt_tensor_data(w) : NULL, NULL, sg, sgx, N, C, S, 0, 0 };
  if (which != 0 || training) bn_run(&j, BN_BSUMS);
  if (which == 0) {
    if (!(r = lt_tensor_new(cdt, lt_tensor_device(input), input->ndim, input->sizes))) goto done;
    j.o = lt_tensor_data(r);
    bn_run(&j, BN_BAPPLY);
  } else {
    if (!(r = lt_tensor_new(LT_FLOAT64, lt_tensor_device(input), 1, &C))) goto done;
    double *rv = lt_tensor_data(r);
    const double *iv = is ? lt_tensor_data(is) : NULL;
    for (int64_t c = 0; c < C; c++) rv[c] = which == 1 ? sgx[c] * iv[c] : sg[c];
  }
done:
  lt_tensor_release(w), lt_tensor_release(m), lt_tensor_release(is), lt_tensor_release(x);
  lt_tensor_release(g), lt_tensor_release(st);
  return as_dtype(r, odt);
}

lt_tensor *lt_cpu_batch_norm_backward(lt_tensor *grad_output, lt_tensor *input, lt_tensor *weight,
                                      lt_tensor *save_mean, lt_tensor *save_invstd, bool training) {
  return bn_backward("batch_norm_backward", 0, grad_output, input, weight, save_mean, save_invstd, training);
}

lt_tensor *lt_cpu_batch_norm_backward_weight(lt_tensor *grad_output, lt_tensor *input, lt_tensor *save_mean,
                                             lt_tensor *save_invstd) {
  return bn_backward("batch_norm_backward_weight", 1, grad_output, input, NULL, save_mean, save_invstd, true);
}

lt_tensor *lt_cpu_batch_norm_backward_bias(lt_tensor *grad_output, lt_tensor *input) {
  return bn_backward("batch_norm_backward_bias", 2, grad_output, input, NULL, NULL, NULL, true);
}

/* All three gradients from one reduction: the per-channel sums sum(g) and
** sum(g * (x - mean)) that the input gradient needs in training are the bias
** gradient and, times invstd, the weight gradient; computed once, not three
** times (the backward of a plain loss.backward()). */
int lt_cpu_native_batch_norm_backward(lt_tensor *grad_output, lt_tensor *input, lt_tensor *weight,
                                      lt_tensor *save_mean, lt_tensor *save_invstd, bool training, bool input_grad,
                                      bool weight_grad, bool bias_grad, lt_tensor **grad_input,
                                      lt_tensor **grad_weight, lt_tensor **grad_bias) {
  const char *op = "native_batch_norm_backward";
  *grad_input = *grad_weight = *grad_bias = NULL;
  int64_t N = 0, C = 0, S = 0;
  if (lt_meta_batch_norm_backward(op, grad_output, input, weight, save_mean, save_invstd, &N, &C, &S) < 0)
    return -1;
  lt_dtype odt = lt_tensor_dtype(input), cdt = cdt_of(odt);
  lt_tensor *w = NULL, *m = NULL, *is = NULL, *x = NULL, *g = NULL, *st = NULL, *o = NULL;
  int rc = -1;
  if (vec64(weight, &w) < 0 || vec64(save_mean, &m) < 0 || vec64(save_invstd, &is) < 0) goto done;
  if (!(g = lt_tensor_to_dtype_contig(grad_output, cdt)) || !(x = lt_tensor_to_dtype_contig(input, cdt))) goto done;
  int64_t c2[2] = { 2, C };
  if (!(st = lt_tensor_new(LT_FLOAT64, lt_tensor_device(input), 2, c2))) goto done;
  double *sg = lt_tensor_data(st), *sgx = sg + C;
  const double *iv = lt_tensor_data(is);
  bn_job j = { cdt == LT_FLOAT32, training, lt_tensor_data(x), lt_tensor_data(g), NULL, (double *)lt_tensor_data(m),
               (double *)iv, NULL, w ? lt_tensor_data(w) : NULL, NULL, sg, sgx, N, C, S, 0, 0 };
  if (weight_grad || bias_grad || (input_grad && training)) bn_run(&j, BN_BSUMS);
  if (input_grad) {
    if (!(o = lt_tensor_new(cdt, lt_tensor_device(input), input->ndim, input->sizes))) goto done;
    j.o = lt_tensor_data(o);
    bn_run(&j, BN_BAPPLY);
  }
  *grad_input = input_grad ? as_dtype(o, odt) : not_wanted(input);
  o = NULL;
  for (int k = 0; k < 2; k++) {
    bool want = k == 0 ? weight_grad : bias_grad;
    lt_tensor *t = want ? lt_tensor_new(LT_FLOAT64, lt_tensor_device(input), 1, &C) : not_wanted(input);
    if (t && want) {
      double *v = lt_tensor_data(t);
      for (int64_t c = 0; c < C; c++) v[c] = k == 0 ? sgx[c] * iv[c] : sg[c];
      t = as_dtype(t, odt);
    }
    *(k == 0 ? grad_weight : grad_bias) = t;
  }
  if (*grad_input && *grad_weight && *grad_bias) rc = 0;
  else {
    lt_tensor_release(*grad_input), lt_tensor_release(*grad_weight), lt_tensor_release(*grad_bias);
    *grad_input = *grad_weight = *grad_bias = NULL;
  }
done:
  lt_tensor_release(w), lt_tensor_release(m), lt_tensor_release(is), lt_tensor_release(x);
  lt_tensor_release(g), lt_tensor_release(st), lt_tensor_release(o);
  return rc;
}
