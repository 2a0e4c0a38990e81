/*
** optim.c — the foreach and fused optimizer ops on CUDA tensors
** (src/ops/optim.lua) over the multi-tensor kernels of kernels/optim.h.
**
** Each op checks its lists as the CPU's kernel does (meta/foreach.h), takes
** a contiguous copy of each non-contiguous tensor (written back afterwards,
** as the CPU does), cuts the lists into batches of up to LT_CK_MT_MAX
** consecutive tensors of one dtype, and makes one launch per batch (two
** with the step bump; _foreach_norm two passes) on the current stream.
** Step counts and NAdam's mu products are the float64 0-d tensors that
** lib/optim keeps beside each parameter on its device: the kernels read and
** increment them there, so a step never waits for the device. A step count
** of another dtype or device has no kernel: the CPU's under the fake driver,
** an error naming the op under a real one.
**
** Nothing here has run on a GPU: it is tested with the kernels' host build
** under the fake driver (tests/lua/cuda/test_optim.lua).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "cuda/cuda.h"
#include "cuda/kernels/optim.h"
#include "cuda/launch.h"
#include "dispatch/dispatch.h"
#include "meta/foreach.h"
#include "kernels_cuda.h"   /* generated: lt_ops.h, the kernel types */

/* the nvcc build, weakly: NULL where the module was built without nvcc */
extern const lt_ck_optim_kernels *lt_ck_optim_device_kernels(void) __attribute__((weak));

static const lt_ck_optim_kernels *okernels(const lt_cuda_launch *l) {
  return l->host ? lt_ck_host_optim_kernels() : lt_ck_optim_device_kernels ? lt_ck_optim_device_kernels() : NULL;
}

/* What the kernels do not take: the CPU's kernel under the fake driver (its
** device memory is host memory), else an error naming the op and why. */
#define OPT_FALLBACK(NAME, WHY, ...) do { \
    if (lt_cuda_host_device_memory()) { \
      lt_cuda_count_fallback(); \
      return ((lt_##NAME##_backend_fn)lt_op_table[LT_OP_##NAME].kernel[LT_KEY_CPU])(__VA_ARGS__); \
    } \
    return lt_error("%s: not implemented for cuda tensors: %s", #NAME, WHY); \
  } while (0)

/* One call's tensors: nbuf lists of n; buffer b of tensor i goes to the
** kernel's slot slot[b]. work[i * nbuf + b] is what the kernel reads
** (contiguous, retained); buffer 1 (a gradient, foreach_add's other) is never
** written, every other one is copied back into a non-contiguous original. */
typedef struct mt_job {
  const char *op;
  int n, nbuf, dev;
  const int *slot;
  lt_tensor *const *const *orig;
  lt_tensor **work;
} mt_job;

static void mt_free(mt_job *j) {
  if (j->work)
    for (int i = 0; i < j->n * j->nbuf; i++) lt_tensor_release(j->work[i]);
  free(j->work);
  j->work = NULL;
}

/* 0, -1 (error set). Device checks first: the caller only gets CUDA tensors. */
static int mt_prepare(mt_job *j, const char *op, int nbuf, lt_tensor *const *const *lists, const int *counts,
                      const char *const *names, const int *slot) {
  memset(j, 0, sizeof *j);
  j->op = op; j->nbuf = nbuf; j->slot = slot; j->orig = lists;
  if (lt_meta_foreach_lists(op, nbuf, lists, counts, names) < 0) return -1;
  j->n = counts[0];
  if (j->n == 0) return 0;
  j->dev = lt_tensor_device(lists[0][0]).index;
  for (int i = 0; i < j->n; i++)
    if (!lt_cuda_on(lists[0][i]) || lt_tensor_device(lists[0][i]).index != j->dev)
      return lt_error("%s: expected all tensors to be on the same device, but '%s' element %d is on %s", op,
                      names[0], i + 1, lt_cuda_on(lists[0][i]) ? "another cuda device" : "the cpu");
  j->work = calloc((size_t)j->n * (size_t)nbuf, sizeof *j->work);
  if (!j->work) return lt_error("%s: out of memory", op);
  for (int i = 0; i < j->n; i++)
    for (int b = 0; b < nbuf; b++)
      if (!(j->work[i * nbuf + b] = lt_tensor_contiguous(lists[b][i]))) { mt_free(j); return -1; }
  return 0;
}

/* whether the kernels can keep ts (step counts, mu products) on the device:
** float64 on device dev, one element */
static bool scalars_ok(lt_tensor *const *ts, int n, int dev) {
  for (int i = 0; i < n; i++)
    if (ts[i]->dtype != LT_FLOAT64 || !lt_cuda_on(ts[i]) || lt_tensor_device(ts[i]).index != dev) return false;
  return true;
}

static void *scalar_ptr(lt_tensor *const *ts, int i) { return ts ? lt_tensor_data(ts[i]) : NULL; }

/* one launch of the optim kernel over tensors [t0, t1) */
static int mt_launch(mt_job *j, const lt_ck_optim_cfg *cfg, int t0, int t1, lt_tensor *const *steps,
                     lt_tensor *const *mus) {
  lt_ck_mt_list l;
  memset(&l, 0, sizeof l);
  l.n = t1 - t0;
  for (int t = t0; t < t1; t++) {
    int k = t - t0;
    for (int b = 0; b < j->nbuf; b++) l.p[k][j->slot[b]] = lt_tensor_data(j->work[t * j->nbuf + b]);
    l.step[k] = scalar_ptr(steps, t);
    l.mu_product[k] = scalar_ptr(mus, t);
    l.start[k + 1] = l.start[k] + j->work[t * j->nbuf]->numel;
  }
  lt_cuda_launch cl;
  if (lt_cuda_launch_begin(&cl, j->dev, lt_ck_optim_device_kernels != NULL, j->op) < 0) return -1;
  const lt_ck_optim_kernels *k = okernels(&cl);
  int rc = k->optim(cfg, j->work[t0 * j->nbuf]->dtype, &l, cl.stream);
  lt_cuda_launch_end(&cl);
  rc = lt_cuda_launch_result(&cl, j->op, rc, lt_cuda_ck_kernels(&cl)->error_string);
  return rc > 0 ? lt_error("%s: the CUDA kernel refused its arguments", j->op) : rc;
}

/* run cfg over every batch, write back the copies, release everything */
static int mt_run(mt_job *j, const lt_ck_optim_cfg *cfg, lt_tensor *const *steps, lt_tensor *const *mus) {
  int rc = 0;
  for (int t0 = 0; t0 < j->n && rc == 0;) {
    int t1 = t0 + 1;
    int dt = j->work[t0 * j->nbuf]->dtype;
    while (t1 < j->n && t1 - t0 < LT_CK_MT_MAX && j->work[t1 * j->nbuf]->dtype == dt) t1++;
    rc = mt_launch(j, cfg, t0, t1, steps, mus);
    t0 = t1;
  }
  for (int i = 0; i < j->n && rc == 0; i++)
    for (int b = 0; b < j->nbuf && rc == 0; b++) {
      lt_tensor *w = j->work[i * j->nbuf + b];
      if (b != 1 && w != j->orig[b][i]) rc = lt_tensor_copy_(j->orig[b][i], w);
    }
  mt_free(j);
  return rc;
}

static const int SLOTS[LT_CK_MT_BUFS] = {0, 1, 2, 3, 4};

/* ---- foreach primitives ---- */

int lt_cuda__foreach_mul_(lt_tensor *const *self, int self_n, lt_scalar scalar) {
  const char *names[] = {"self"};
  lt_tensor *const *lists[] = {self};
  int counts[] = {self_n};
  mt_job j;
  if (mt_prepare(&j, "_foreach_mul_", 1, lists, counts, names, SLOTS) < 0) return -1;
  lt_ck_optim_cfg cfg = {.op = LT_CK_OPT_MUL, .a = lt_scalar_to_double(scalar)};
  return mt_run(&j, &cfg, NULL, NULL);
}

int lt_cuda__foreach_add_(lt_tensor *const *self, int self_n, lt_tensor *const *other, int other_n, lt_scalar alpha) {
  const char *names[] = {"self", "other"};
  lt_tensor *const *lists[] = {self, other};
  int counts[] = {self_n, other_n};
  mt_job j;
  if (mt_prepare(&j, "_foreach_add_", 2, lists, counts, names, SLOTS) < 0) return -1;
  lt_ck_optim_cfg cfg = {.op = LT_CK_OPT_ADD, .a = lt_scalar_to_double(alpha)};
  return mt_run(&j, &cfg, NULL, NULL);
}

int lt_cuda__foreach_zero_(lt_tensor *const *self, int self_n) {
  const char *names[] = {"self"};
  lt_tensor *const *lists[] = {self};
  int counts[] = {self_n};
  mt_job j;
  if (mt_prepare(&j, "_foreach_zero_", 1, lists, counts, names, SLOTS) < 0) return -1;
  lt_ck_optim_cfg cfg = {.op = LT_CK_OPT_ZERO};
  return mt_run(&j, &cfg, NULL, NULL);
}

/* ---- _foreach_norm ---- */

/* pass 1 and 2 over tensors [t0, t1) of j (one dtype) into res[t0..t1) */
static int norm_batch(mt_job *j, int kind, double ord, int t0, int t1, lt_tensor *res) {
  lt_ck_norm_list l;
  memset(&l, 0, sizeof l);
  l.n = t1 - t0;
  for (int t = t0; t < t1; t++) {
    int k = t - t0;
    l.x[k] = lt_tensor_data(j->work[t]);
    l.numel[k] = j->work[t]->numel;
    l.slot[k + 1] = l.slot[k] + lt_ck_norm_slots(l.numel[k]);
  }
  int64_t nslots = l.slot[l.n];
  lt_tensor *partials = NULL;
  if (nslots > 0 && !(partials = lt_tensor_new(LT_FLOAT64, lt_tensor_device(res), 1, &nslots))) return -1;
  lt_cuda_launch cl;
  int rc = lt_cuda_launch_begin(&cl, j->dev, lt_ck_optim_device_kernels != NULL, j->op);
  if (rc == 0) {
    const lt_ck_optim_kernels *k = okernels(&cl);
    char *out = (char *)lt_tensor_data(res) + (size_t)t0 * lt_dtype_size((lt_dtype)res->dtype);
    rc = k->norm(kind, ord, j->work[t0]->dtype, &l, partials ? lt_tensor_data(partials) : NULL, out, res->dtype,
                 cl.stream);
    lt_cuda_launch_end(&cl);
    rc = lt_cuda_launch_result(&cl, j->op, rc, lt_cuda_ck_kernels(&cl)->error_string);
    if (rc > 0) rc = lt_error("%s: the CUDA kernel refused its arguments", j->op);
  }
  lt_tensor_release(partials);   /* the allocator keeps its block for this stream until the kernel ran */
  return rc;
}

lt_tensor *lt_cuda__foreach_norm(lt_tensor *const *tensors, int tensors_n, double ord) {
  lt_dtype dt;
  if (lt_meta_foreach_norm(tensors, tensors_n, &dt) < 0) return NULL;
  const char *names[] = {"tensors"};
  lt_tensor *const *lists[] = {tensors};
  int counts[] = {tensors_n};
  mt_job j;
  if (mt_prepare(&j, "_foreach_norm", 1, lists, counts, names, SLOTS) < 0) return NULL;
  int kind = ord == 2 ? LT_CK_NORM_2 : ord == 1 ? LT_CK_NORM_1 : ord == INFINITY ? LT_CK_NORM_INF
           : ord == -INFINITY ? LT_CK_NORM_NINF : ord == 0 ? LT_CK_NORM_0 : LT_CK_NORM_P;
  int64_t n = tensors_n;
  lt_tensor *res = lt_tensor_new(dt, lt_tensor_device(tensors[0]), 1, &n);
  int rc = res ? 0 : -1;
  for (int t0 = 0; t0 < j.n && rc == 0;) {
    int t1 = t0 + 1;
    while (t1 < j.n && t1 - t0 < LT_CK_MT_MAX && j.work[t1]->dtype == j.work[t0]->dtype) t1++;
    rc = norm_batch(&j, kind, ord, t0, t1, res);
    t0 = t1;
  }
  mt_free(&j);
  if (rc < 0) { lt_tensor_release(res); return NULL; }
  return res;
}

/* ---- fused optimizer steps ---- */

/* the step counts (and mu products) of an op that has them: 0 to run the
** kernels, 1 when they are not float64 tensors on the device (the caller
** falls back), -1 on error */
static int check_steps(const char *op, lt_tensor *const *steps, int steps_n, lt_tensor *const *params, int n) {
  if (lt_meta_foreach_scalars(op, "state_steps", steps, steps_n, n) < 0) return -1;
  return n == 0 || scalars_ok(steps, n, lt_cuda_on(params[0]) ? lt_tensor_device(params[0]).index : -1) ? 0 : 1;
}
#define STEPS_WHY "argument 'state_steps' must hold float64 tensors on the parameters' device"

int lt_cuda__fused_sgd_(lt_tensor *const *params, int params_n, lt_tensor *const *grads, int grads_n,
                        lt_tensor *const *momentum_buffers, int momentum_buffers_n, double lr, double momentum,
                        double dampening, double weight_decay, bool nesterov, bool maximize, bool momentum_init) {
  const char *names[] = {"params", "grads", "momentum_buffers"};
  lt_tensor *const *lists[] = {params, grads, momentum_buffers};
  int counts[] = {params_n, grads_n, momentum_buffers_n};
  mt_job j;
  if (mt_prepare(&j, "_fused_sgd_", momentum != 0 ? 3 : 2, lists, counts, names, SLOTS) < 0) return -1;
  lt_ck_optim_cfg cfg = {.op = LT_CK_OPT_SGD, .lr = lr, .momentum = momentum, .dampening = dampening,
                         .wd = weight_decay, .nesterov = nesterov, .maximize = maximize, .first = momentum_init};
  return mt_run(&j, &cfg, NULL, NULL);
}

int lt_cuda__fused_adam_(lt_tensor *const *params, int params_n, lt_tensor *const *grads, int grads_n,
                         lt_tensor *const *exp_avgs, int exp_avgs_n, lt_tensor *const *exp_avg_sqs, int exp_avg_sqs_n,
                         lt_tensor *const *max_exp_avg_sqs, int max_exp_avg_sqs_n, lt_tensor *const *state_steps,
                         int state_steps_n, double lr, double beta1, double beta2, double eps, double weight_decay,
                         bool amsgrad, bool maximize, bool decoupled) {
  const char *op = "_fused_adam_";
  int s = check_steps(op, state_steps, state_steps_n, params, params_n);
  if (s < 0) return -1;
  if (s > 0)
    OPT_FALLBACK(_fused_adam_, STEPS_WHY, params, params_n, grads, grads_n, exp_avgs, exp_avgs_n, exp_avg_sqs,
                 exp_avg_sqs_n, max_exp_avg_sqs, max_exp_avg_sqs_n, state_steps, state_steps_n, lr, beta1, beta2, eps,
                 weight_decay, amsgrad, maximize, decoupled);
  const char *names[] = {"params", "grads", "exp_avgs", "exp_avg_sqs", "max_exp_avg_sqs"};
  lt_tensor *const *lists[] = {params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs};
  int counts[] = {params_n, grads_n, exp_avgs_n, exp_avg_sqs_n, max_exp_avg_sqs_n};
  mt_job j;
  if (mt_prepare(&j, op, amsgrad ? 5 : 4, lists, counts, names, SLOTS) < 0) return -1;
  lt_ck_optim_cfg cfg = {.op = LT_CK_OPT_ADAM, .lr = lr, .a = beta1, .b = beta2, .eps = eps, .wd = weight_decay,
                         .amsgrad = amsgrad, .maximize = maximize, .decoupled = decoupled};
  return mt_run(&j, &cfg, state_steps, NULL);
}

int lt_cuda__fused_adamax_(lt_tensor *const *params, int params_n, lt_tensor *const *grads, int grads_n,
                           lt_tensor *const *exp_avgs, int exp_avgs_n, lt_tensor *const *exp_infs, int exp_infs_n,
                           lt_tensor *const *state_steps, int state_steps_n, double lr, double beta1, double beta2,
                           double eps, double weight_decay, bool maximize) {
  const char *op = "_fused_adamax_";
  int s = check_steps(op, state_steps, state_steps_n, params, params_n);
  if (s < 0) return -1;
  if (s > 0)
    OPT_FALLBACK(_fused_adamax_, STEPS_WHY, params, params_n, grads, grads_n, exp_avgs, exp_avgs_n, exp_infs,
                 exp_infs_n, state_steps, state_steps_n, lr, beta1, beta2, eps, weight_decay, maximize);
  const char *names[] = {"params", "grads", "exp_avgs", "exp_infs"};
  lt_tensor *const *lists[] = {params, grads, exp_avgs, exp_infs};
  int counts[] = {params_n, grads_n, exp_avgs_n, exp_infs_n};
  mt_job j;
  if (mt_prepare(&j, op, 4, lists, counts, names, SLOTS) < 0) return -1;
  lt_ck_optim_cfg cfg = {.op = LT_CK_OPT_ADAMAX, .lr = lr, .a = beta1, .b = beta2, .eps = eps, .wd = weight_decay,
                         .maximize = maximize};
  return mt_run(&j, &cfg, state_steps, NULL);
}

int lt_cuda__fused_nadam_(lt_tensor *const *params, int params_n, lt_tensor *const *grads, int grads_n,
                          lt_tensor *const *exp_avgs, int exp_avgs_n, lt_tensor *const *exp_avg_sqs, int exp_avg_sqs_n,
                          lt_tensor *const *mu_products, int mu_products_n, lt_tensor *const *state_steps,
                          int state_steps_n, double lr, double beta1, double beta2, double eps, double weight_decay,
                          double momentum_decay, bool maximize, bool decoupled) {
  const char *op = "_fused_nadam_";
  int s = check_steps(op, state_steps, state_steps_n, params, params_n);
  if (s < 0) return -1;
  if (lt_meta_foreach_scalars(op, "mu_products", mu_products, mu_products_n, params_n) < 0)
    return lt_error("_fused_nadam_: argument 'mu_products' must hold a 1-element tensor per parameter");
  if (s == 0 && params_n > 0 && !scalars_ok(mu_products, params_n, lt_tensor_device(params[0]).index)) s = 1;
  if (s > 0)
    OPT_FALLBACK(_fused_nadam_, STEPS_WHY " (and 'mu_products' likewise)", params, params_n, grads, grads_n,
                 exp_avgs, exp_avgs_n, exp_avg_sqs, exp_avg_sqs_n, mu_products, mu_products_n, state_steps,
                 state_steps_n, lr, beta1, beta2, eps, weight_decay, momentum_decay, maximize, decoupled);
  const char *names[] = {"params", "grads", "exp_avgs", "exp_avg_sqs"};
  lt_tensor *const *lists[] = {params, grads, exp_avgs, exp_avg_sqs};
  int counts[] = {params_n, grads_n, exp_avgs_n, exp_avg_sqs_n};
  mt_job j;
  if (mt_prepare(&j, op, 4, lists, counts, names, SLOTS) < 0) return -1;
  lt_ck_optim_cfg cfg = {.op = LT_CK_OPT_NADAM, .lr = lr, .a = beta1, .b = beta2, .eps = eps, .wd = weight_decay,
                         .momentum_decay = momentum_decay, .maximize = maximize, .decoupled = decoupled};
  return mt_run(&j, &cfg, state_steps, mu_products);
}

int lt_cuda__fused_radam_(lt_tensor *const *params, int params_n, lt_tensor *const *grads, int grads_n,
                          lt_tensor *const *exp_avgs, int exp_avgs_n, lt_tensor *const *exp_avg_sqs, int exp_avg_sqs_n,
                          lt_tensor *const *state_steps, int state_steps_n, double lr, double beta1, double beta2,
                          double eps, double weight_decay, bool maximize, bool decoupled) {
  const char *op = "_fused_radam_";
  int s = check_steps(op, state_steps, state_steps_n, params, params_n);
  if (s < 0) return -1;
  if (s > 0)
    OPT_FALLBACK(_fused_radam_, STEPS_WHY, params, params_n, grads, grads_n, exp_avgs, exp_avgs_n, exp_avg_sqs,
                 exp_avg_sqs_n, state_steps, state_steps_n, lr, beta1, beta2, eps, weight_decay, maximize, decoupled);
  const char *names[] = {"params", "grads", "exp_avgs", "exp_avg_sqs"};
  lt_tensor *const *lists[] = {params, grads, exp_avgs, exp_avg_sqs};
  int counts[] = {params_n, grads_n, exp_avgs_n, exp_avg_sqs_n};
  mt_job j;
  if (mt_prepare(&j, op, 4, lists, counts, names, SLOTS) < 0) return -1;
  lt_ck_optim_cfg cfg = {.op = LT_CK_OPT_RADAM, .lr = lr, .a = beta1, .b = beta2, .eps = eps, .wd = weight_decay,
                         .maximize = maximize, .decoupled = decoupled};
  return mt_run(&j, &cfg, state_steps, NULL);
}

int lt_cuda__fused_rmsprop_(lt_tensor *const *params, int params_n, lt_tensor *const *grads, int grads_n,
                            lt_tensor *const *square_avgs, int square_avgs_n, lt_tensor *const *momentum_buffers,
                            int momentum_buffers_n, lt_tensor *const *grad_avgs, int grad_avgs_n, double lr,
                            double alpha, double eps, double weight_decay, double momentum, bool centered,
                            bool maximize) {
  /* the lists present, in the CPU's order; slot 3 the momentum buffer, 4 the grad average */
  const char *names[5] = {"params", "grads", "square_avgs"};
  lt_tensor *const *lists[5] = {params, grads, square_avgs};
  int counts[5] = {params_n, grads_n, square_avgs_n};
  int slot[5] = {0, 1, 2};
  int nb = 3;
  if (momentum != 0) {
    names[nb] = "momentum_buffers"; lists[nb] = momentum_buffers; counts[nb] = momentum_buffers_n; slot[nb++] = 3;
  }
  if (centered) { names[nb] = "grad_avgs"; lists[nb] = grad_avgs; counts[nb] = grad_avgs_n; slot[nb++] = 4; }
  mt_job j;
  if (mt_prepare(&j, "_fused_rmsprop_", nb, lists, counts, names, slot) < 0) return -1;
  lt_ck_optim_cfg cfg = {.op = LT_CK_OPT_RMSPROP, .lr = lr, .a = alpha, .eps = eps, .wd = weight_decay,
                         .momentum = momentum, .centered = centered, .maximize = maximize};
  return mt_run(&j, &cfg, NULL, NULL);
}

int lt_cuda__fused_adagrad_(lt_tensor *const *params, int params_n, lt_tensor *const *grads, int grads_n,
                            lt_tensor *const *state_sums, int state_sums_n, lt_tensor *const *state_steps,
                            int state_steps_n, double lr, double lr_decay, double weight_decay, double eps,
                            bool maximize) {
  const char *op = "_fused_adagrad_";
  int s = check_steps(op, state_steps, state_steps_n, params, params_n);
  if (s < 0) return -1;
  if (s > 0)
    OPT_FALLBACK(_fused_adagrad_, STEPS_WHY, params, params_n, grads, grads_n, state_sums, state_sums_n, state_steps,
                 state_steps_n, lr, lr_decay, weight_decay, eps, maximize);
  const char *names[] = {"params", "grads", "state_sums"};
  lt_tensor *const *lists[] = {params, grads, state_sums};
  int counts[] = {params_n, grads_n, state_sums_n};
  mt_job j;
  if (mt_prepare(&j, op, 3, lists, counts, names, SLOTS) < 0) return -1;
  lt_ck_optim_cfg cfg = {.op = LT_CK_OPT_ADAGRAD, .lr = lr, .lr_decay = lr_decay, .eps = eps, .wd = weight_decay,
                         .maximize = maximize};
  return mt_run(&j, &cfg, state_steps, NULL);
}

int lt_cuda__fused_adadelta_(lt_tensor *const *params, int params_n, lt_tensor *const *grads, int grads_n,
                             lt_tensor *const *square_avgs, int square_avgs_n, lt_tensor *const *acc_deltas,
                             int acc_deltas_n, double lr, double rho, double eps, double weight_decay, bool maximize) {
  const char *names[] = {"params", "grads", "square_avgs", "acc_deltas"};
  lt_tensor *const *lists[] = {params, grads, square_avgs, acc_deltas};
  int counts[] = {params_n, grads_n, square_avgs_n, acc_deltas_n};
  mt_job j;
  if (mt_prepare(&j, "_fused_adadelta_", 4, lists, counts, names, SLOTS) < 0) return -1;
  lt_ck_optim_cfg cfg = {.op = LT_CK_OPT_ADADELTA, .lr = lr, .a = rho, .eps = eps, .wd = weight_decay,
                         .maximize = maximize};
  return mt_run(&j, &cfg, NULL, NULL);
}
