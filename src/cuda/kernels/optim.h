/*
** optim.h — the CUDA kernels of the foreach and fused optimizer ops
** (src/ops/optim.lua) as C entry points, in both builds (kernels.h explains
** the two): lt_ck_optim / lt_ck_host_optim and friends.
**
** Multi-tensor apply: one launch updates up to LT_CK_MT_MAX tensors. Their
** pointers and element ranges travel in the launch's arguments (a
** lt_ck_mt_list passed by value, about 2.5 KB, under the 4 KB kernel
** parameter limit), and the grid strides over the concatenated elements of
** all of them, so a group of many small parameters is one launch rather than
** one per tensor. The caller cuts longer lists into batches of one dtype.
**
** Step counts stay on the device: the update reads each tensor's float64
** step (and NAdam's mu product), computes the bias corrections from step + 1
** in double as the CPU does, and a second, one-thread-per-tensor launch on
** the same stream then stores the new step (and mu product). Nothing is
** copied to the host, so a step does not synchronize.
**
** _foreach_norm is two passes: partial results into `slots` (per tensor,
** lt_ck_norm_slots(numel) of them, each slot a strided walk over the tensor,
** coalesced across neighbouring slots), then one thread per tensor combines
** its slots and writes the norm. Both passes are plain grid-stride kernels,
** the same code in both builds (no shared memory or shuffles).
**
** The device build has not run on a GPU; the host build is tested under the
** fake driver (tests/lua/cuda/test_optim.lua).
*/
#ifndef LT_CUDA_KERNELS_OPTIM_H
#define LT_CUDA_KERNELS_OPTIM_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LT_CK_MT_MAX 32      /* tensors per launch */
#define LT_CK_MT_BUFS 5      /* buffers per tensor: param, grad, up to 3 states */

typedef enum lt_ck_optim_op {
  LT_CK_OPT_MUL,        /* p0 *= a */
  LT_CK_OPT_ADD,        /* p0 += a * p1 */
  LT_CK_OPT_ZERO,       /* p0 = 0 */
  LT_CK_OPT_SGD,        /* p0 param, p1 grad, p2 momentum buffer (momentum != 0) */
  LT_CK_OPT_ADAM,       /* p2 exp_avg, p3 exp_avg_sq, p4 max_exp_avg_sq (amsgrad); step */
  LT_CK_OPT_ADAMAX,     /* p2 exp_avg, p3 exp_inf; step */
  LT_CK_OPT_NADAM,      /* p2 exp_avg, p3 exp_avg_sq; step, mu_product */
  LT_CK_OPT_RADAM,      /* p2 exp_avg, p3 exp_avg_sq; step */
  LT_CK_OPT_RMSPROP,    /* p2 square_avg, p3 momentum buffer (momentum != 0), p4 grad_avg (centered) */
  LT_CK_OPT_ADAGRAD,    /* p2 state_sum; step */
  LT_CK_OPT_ADADELTA,   /* p2 square_avg, p3 acc_delta */
  LT_CK_NUM_OPT
} lt_ck_optim_op;

/* the optimizer's constants (the op's arguments; a: beta1, alpha, rho or the
** foreach number, b: beta2) */
typedef struct lt_ck_optim_cfg {
  int op;
  double lr, a, b, eps, wd, momentum, dampening, lr_decay, momentum_decay;
  int nesterov, maximize, first, amsgrad, decoupled, centered;
} lt_ck_optim_cfg;

/* one launch's tensors, all contiguous and of one dtype */
typedef struct lt_ck_mt_list {
  int n;                                  /* tensors, 1..LT_CK_MT_MAX */
  void *p[LT_CK_MT_MAX][LT_CK_MT_BUFS];   /* each tensor's buffers (unused ones NULL) */
  double *step[LT_CK_MT_MAX];             /* its float64 step count, or NULL (ops without one) */
  double *mu_product[LT_CK_MT_MAX];       /* NAdam's float64 mu product */
  int64_t start[LT_CK_MT_MAX + 1];        /* tensor t holds elements [start[t], start[t+1]) */
} lt_ck_mt_list;

/* _foreach_norm: the CPU's kinds of ord */
enum { LT_CK_NORM_P, LT_CK_NORM_2, LT_CK_NORM_1, LT_CK_NORM_INF, LT_CK_NORM_NINF, LT_CK_NORM_0 };

typedef struct lt_ck_norm_list {
  int n;                                  /* tensors, 1..LT_CK_MT_MAX */
  const void *x[LT_CK_MT_MAX];            /* contiguous, of one dtype */
  int64_t numel[LT_CK_MT_MAX];
  int64_t slot[LT_CK_MT_MAX + 1];         /* tensor t's partials: [slot[t], slot[t+1]) */
} lt_ck_norm_list;

/* the partial results a tensor of numel elements is reduced into: one per
** 256 elements, at most 32768 (so pass 2 sums at most that many per tensor) */
static inline int64_t lt_ck_norm_slots(int64_t numel) {
  int64_t s = (numel + 255) / 256;
  return s > 32768 ? 32768 : s;
}

/* Entries return LT_CK_OK, LT_CK_EINVAL (bad op, dtype or list), or a
** positive cudaError_t (device build). dtype: LT_CK_FLOAT32 or FLOAT64.
** optim: the update of op over l, then (ops with a step) the step bump.
** foreach_norm: partials (device memory, l->slot[l->n] doubles) and out[t]
** (out_dtype, contiguous) = the kind/ord norm of tensor t. */
typedef int (*lt_ck_optim_fn)(const lt_ck_optim_cfg *cfg, int dtype, const lt_ck_mt_list *l, void *stream);
typedef int (*lt_ck_norm_fn)(int kind, double ord, int dtype, const lt_ck_norm_list *l, double *partials,
                             void *out, int out_dtype, void *stream);

typedef struct lt_ck_optim_kernels {
  const char *name;                  /* "sm_90" or "host" */
  lt_ck_optim_fn optim;
  lt_ck_norm_fn norm;
} lt_ck_optim_kernels;

int lt_ck_optim(const lt_ck_optim_cfg *cfg, int dtype, const lt_ck_mt_list *l, void *stream);
int lt_ck_foreach_norm(int kind, double ord, int dtype, const lt_ck_norm_list *l, double *partials, void *out,
                       int out_dtype, void *stream);
const lt_ck_optim_kernels *lt_ck_optim_device_kernels(void);

int lt_ck_host_optim(const lt_ck_optim_cfg *cfg, int dtype, const lt_ck_mt_list *l, void *stream);
int lt_ck_host_foreach_norm(int kind, double ord, int dtype, const lt_ck_norm_list *l, double *partials, void *out,
                            int out_dtype, void *stream);
const lt_ck_optim_kernels *lt_ck_host_optim_kernels(void);

#ifdef __cplusplus
}
#endif
#endif
