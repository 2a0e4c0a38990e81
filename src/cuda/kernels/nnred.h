/*
** nnred.h — the CUDA backend's kernels for the nn ops that reduce: softmax,
** log_softmax and their backwards, layer_norm and batch_norm forward and
** backward, and nll_loss's gather and scatter, as C entry points in both builds
** (lt_ck_nnred_* for nvcc, lt_ck_host_nnred_* for the host build that the
** fake driver and the tests run), with their own table as reduce.h has.
**
** Every kernel here runs one thread per line (softmax), per row (layer_norm),
** per column (layer_norm's weight gradient), per channel (batch_norm's
** statistics and sums) or per element (batch_norm's apply, nll_loss's
** targets), each serial over its elements, in both builds: no shared memory, shuffles
** or barriers, so the host build computes what the device build does.
** Elementwise math is in the compute type of T (float for 16-bit floats and
** float32, double for float64) and statistics in double, as on the CPU.
** Nothing here has run on a GPU.
*/
#ifndef LT_CUDA_NNRED_H
#define LT_CUDA_NNRED_H
#include <stdint.h>
#include "cuda/kernels/reduce.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lt_ck_softmax_op {
  LT_CK_SOFTMAX,          /* out = exp(x - max) / sum(exp(x - max)) */
  LT_CK_LOG_SOFTMAX,      /* out = x - max - log(sum(exp(x - max))) */
  LT_CK_SOFTMAX_BWD,      /* x the forward's output y: out = y * (g - sum(g * y)) */
  LT_CK_LOG_SOFTMAX_BWD,  /* x the forward's output y: out = g - exp(y) * sum(g) */
  LT_CK_NUM_SOFTMAX
} lt_ck_softmax_op;

/* Lines of n elements along the softmax dim: x (and g for the backwards)
** and out, all of floating dtype, with strides xst, gst, ost along the
** line; the lines' starts by the kept geometry `lines` (in_strides x,
** out_strides out, out2_strides g). */
typedef int (*lt_ck_softmax_fn)(int op, int dtype, void *out, const void *x, const void *g, int64_t n, int64_t xst,
                                int64_t gst, int64_t ost, const lt_ck_red_geom *lines, void *stream);

/* layer_norm over M contiguous rows of D elements of dtype T (floating):
** forward: out = (x - mean) * rstd * w + b (w, b: D float64 or NULL), mean
**   and rstd (M elements, T) written;
** backward (g != NULL): out = rstd * (g w - mean(g w) - xhat mean(g w xhat)),
**   mean and rstd read;
** weight gradient: wgrad[D] (float64) = sum over rows of g * xhat. */
typedef int (*lt_ck_layer_norm_fn)(int dtype, void *out, void *mean, void *rstd, const void *x, const void *g,
                                   const double *w, const double *b, int64_t M, int64_t D, double eps, void *stream);
typedef int (*lt_ck_layer_norm_wgrad_fn)(int dtype, double *wgrad, const void *x, const void *g, const void *mean,
                                         const void *rstd, int64_t M, int64_t D, void *stream);

/* nll_loss over an (N, C, S) contiguous input of dtype T and N*S int64
** 1-based targets; w: C float64 or NULL; ignore: the ignored index.
** gather: loss[i] (float64) = -w[c] x[n, c, s] and wsum[i] = w[c] (0 where
**   ignored); out (T, or NULL) the loss as T for reduction "none";
** total: one thread: out[0] (T) = mean ? sum / wsum : sum, tw[0] (T) = wsum,
**   from float64 sums;
** scatter: gi (T, zeroed by the caller) at [n, c, s] = -w[c] * (none ? go[i]
**   : go[0] / (mean ? tw[0] : 1)), go and tw float64. */
typedef int (*lt_ck_nll_gather_fn)(int dtype, double *loss, double *wsum, void *out, const void *x,
                                   const int64_t *target, const double *w, int64_t N, int64_t C, int64_t S,
                                   int64_t ignore, void *stream);
typedef int (*lt_ck_nll_total_fn)(int dtype, void *out, void *tw, const double *sum, const double *wsum, int mean,
                                  void *stream);
typedef int (*lt_ck_nll_scatter_fn)(int dtype, void *gi, const double *go, const int64_t *target, const double *w,
                                    const double *tw, int none, int mean, int64_t N, int64_t C, int64_t S,
                                    int64_t ignore, void *stream);

/* batch_norm over an (N, C, S) contiguous input x of dtype T (floating);
** per-channel float64 vectors of C elements: st = [mean | invstd | var];
** stats: training (rm, rv: the running stats or NULL): mean and biased var
**   of each channel over N*S (two passes, double), invstd = 1/sqrt(var +
**   eps), and new_rm = (1 - momentum) rm + momentum mean, new_rv likewise
**   with the unbiased var; eval: mean = rm, invstd = 1/sqrt(rv + eps);
** apply: out = x * (w invstd) + (b - mean w invstd) (w, b NULL: 1, 0), mean
**   and invstd given (st and st + C after stats);
** bsums (g the gradient, T): sg[c] = sum g, sgx[c] = sum g (x - mean),
**   wgrad[c] = sgx invstd (each output may be NULL);
** bapply: out = w invstd (g - sg/cnt - (x - mean) sgx invstd^2/cnt) when
**   training, w invstd g when not. */
typedef int (*lt_ck_bn_stats_fn)(int dtype, double *st, double *new_rm, double *new_rv, const void *x,
                                 const double *rm, const double *rv, int training, double momentum, double eps,
                                 int64_t N, int64_t C, int64_t S, void *stream);
typedef int (*lt_ck_bn_apply_fn)(int dtype, void *out, const void *x, const void *g, const double *mean,
                                 const double *invstd, const double *w, const double *b, const double *sg,
                                 const double *sgx, int training, int64_t N, int64_t C, int64_t S, void *stream);
typedef int (*lt_ck_bn_bsums_fn)(int dtype, double *sg, double *sgx, double *wgrad, const void *x, const void *g,
                                 const double *mean, const double *invstd, int64_t N, int64_t C, int64_t S,
                                 void *stream);

typedef struct lt_ck_nnred_kernels {
  const char *name;                  /* "sm_90" or "host" */
  lt_ck_softmax_fn softmax;
  lt_ck_layer_norm_fn layer_norm;
  lt_ck_layer_norm_wgrad_fn layer_norm_wgrad;
  lt_ck_nll_gather_fn nll_gather;
  lt_ck_nll_total_fn nll_total;
  lt_ck_nll_scatter_fn nll_scatter;
  lt_ck_bn_stats_fn bn_stats;
  lt_ck_bn_apply_fn bn_apply;       /* g NULL: the forward; else the backward (bapply) */
  lt_ck_bn_bsums_fn bn_bsums;
  const char *(*error_string)(int code);
} lt_ck_nnred_kernels;

const lt_ck_nnred_kernels *lt_ck_nnred_device_kernels(void);
const lt_ck_nnred_kernels *lt_ck_host_nnred_kernels(void);

#ifdef __cplusplus
}
#endif
#endif
