/*
** nnred.c — the CUDA kernels of softmax, log_softmax and their backwards,
** native_layer_norm and its backwards, native_batch_norm and its backwards,
** and nll_loss forward and backward,
** over src/cuda/kernels/nnred.cu (and the reduction kernel for nll_loss's
** sums).
**
** As on the CPU: the checks of meta/ (norm.h, loss.h; the same messages),
** float64 computing in double and the other floating dtypes in float32
** (16-bit inputs are read as floats exactly, so no converted copy is needed
** for them), statistics in double, results in the input's dtype (softmax:
** dtype= when given). softmax reads its input through its strides; the
** others take contiguous copies where the input is not contiguous. The
** kernels run one thread per line, row, channel, element or target (nnred.h);
** batch_norm's running statistics are updated in place in their own dtype
** (their version bumped), as the CPU's. Nothing
** here has run on a GPU.
*/
#include <string.h>
#include "core/error.h"
#include "cuda/cuda.h"
#include "cuda/kernels/nnred.h"
#include "cuda/reduce_launch.h"
#include "dispatch/dispatch.h"
#include "meta/loss.h"
#include "meta/norm.h"
#include "kernels_cuda.h"   /* generated: lt_ops.h, the kernel types */

extern const lt_ck_nnred_kernels *lt_ck_nnred_device_kernels(void) __attribute__((weak));

static int nn_begin(lt_cuda_launch *l, int dev, const char *op, const lt_ck_nnred_kernels **k) {
  if (lt_cuda_launch_begin(l, dev, lt_ck_nnred_device_kernels != NULL, op) < 0) return -1;
  *k = l->host ? lt_ck_host_nnred_kernels() : lt_ck_nnred_device_kernels();
  return 0;
}

/* the kernels' compute dtype of a floating dtype */
static lt_dtype cdt_of(lt_dtype dt) { return dt == LT_FLOAT64 ? LT_FLOAT64 : LT_FLOAT32; }

/* t, or a contiguous copy of t in dt (*own, released by the caller) when t is
** not contiguous or of another dtype; NULL with the error set (*refused when
** the copy kernel refused) */
static const lt_tensor *as_contig(const char *op, const lt_tensor *t, lt_dtype dt, lt_tensor **own, bool *refused) {
  *own = NULL;
  if (!t) return NULL;
  if (t->dtype == dt && lt_tensor_is_contiguous(t)) return t;
  return *own = lt_cuda_converted(op, t, dt, refused);
}

/* r (consumed) in dtype dt */
static lt_tensor *as_dtype(const char *op, lt_tensor *r, lt_dtype dt) {
  return r ? lt_cuda_red_finish(op, r, dt, NULL) : NULL;
}

/* ---- softmax, log_softmax and their backwards ---- */

/* kop over the lines along d of x (and g) into o, all of one dtype: 0, 1 refused, -1 */
static int softmax_run(const char *op, int kop, const lt_tensor *x, const lt_tensor *g, lt_tensor *o, int d) {
  if (x->numel == 0) return 0;
  lt_ck_red_geom lines;
  lt_cuda_line_geom(&lines, x, d, o, g);
  bool nd = x->ndim > 0;
  int64_t n = nd ? x->sizes[d] : 1;
  lt_cuda_launch l;
  const lt_ck_nnred_kernels *kk;
  if (nn_begin(&l, lt_tensor_device(x).index, op, &kk) < 0) return -1;
  int rc = kk->softmax(kop, x->dtype, lt_tensor_data(o), lt_tensor_data(x), g ? lt_tensor_data(g) : NULL, n,
                       nd ? x->strides[d] : 0, g && nd ? g->strides[d] : 0, nd ? o->strides[d] : 0, &lines, l.stream);
  lt_cuda_launch_end(&l);
  return lt_cuda_launch_result(&l, op, rc, kk->error_string);
}

/* the dtype the kernel reads: x's own when its compute dtype is cdt (16-bit floats are read as floats) */
static lt_dtype read_dtype(lt_dtype xdt, lt_dtype cdt) {
  return lt_dtype_is_float(xdt) && cdt_of(xdt) == cdt ? xdt : cdt;
}

static int sm_forward(const char *op, int kop, lt_tensor *self, int64_t dim, int dtype, lt_tensor *out,
                      lt_tensor **res) {
  lt_dtype odt;
  int d;
  if (lt_meta_softmax(op, self, dtype, dim, &odt, &d) < 0) return -1;
  lt_dtype kdt = read_dtype(lt_tensor_dtype(self), cdt_of(odt));
  lt_tensor *own = NULL;
  const lt_tensor *x = self;
  bool refused = false;
  if (self->dtype != kdt && !(x = own = lt_cuda_converted(op, self, kdt, &refused))) return refused ? 1 : -1;
  lt_tensor *o = lt_tensor_new(kdt, lt_tensor_device(self), self->ndim, self->sizes);
  int rc = o ? softmax_run(op, kop, x, NULL, o, d) : -1;
  lt_tensor_release(own);
  if (rc != 0) { lt_tensor_release(o); return rc; }
  *res = lt_cuda_red_finish(op, o, odt, out);
  return *res ? 0 : -1;
}

lt_tensor *lt_cuda_softmax(lt_tensor *self, int64_t dim, int dtype, lt_tensor *out) {
  lt_tensor *r = NULL;
  if (sm_forward("softmax", LT_CK_SOFTMAX, self, dim, dtype, out, &r) <= 0) return r;
  LT_CUDA_FALLBACK(softmax, "softmax", (lt_dtype)self->dtype, self, dim, dtype, out);
}
lt_tensor *lt_cuda_log_softmax(lt_tensor *self, int64_t dim, int dtype, lt_tensor *out) {
  lt_tensor *r = NULL;
  if (sm_forward("log_softmax", LT_CK_LOG_SOFTMAX, self, dim, dtype, out, &r) <= 0) return r;
  LT_CUDA_FALLBACK(log_softmax, "log_softmax", (lt_dtype)self->dtype, self, dim, dtype, out);
}

static int sm_backward(const char *op, int kop, lt_tensor *grad_output, lt_tensor *output, int64_t dim,
                       lt_tensor **res) {
  int d;
  if (lt_meta_softmax_backward(op, grad_output, output, dim, &d) < 0) return -1;
  lt_dtype odt = lt_tensor_dtype(output);
  /* both read in one dtype: the output's, unless the gradient's differs (then both in the compute dtype) */
  lt_dtype kdt = grad_output->dtype == output->dtype ? odt : cdt_of(odt);
  lt_tensor *oy = NULL, *og = NULL, *o = NULL;
  const lt_tensor *y = output, *g = grad_output;
  bool refused = false;
  int rc = -1;
  if ((y->dtype == kdt || (y = oy = lt_cuda_converted(op, output, kdt, &refused))) &&
      (g->dtype == kdt || (g = og = lt_cuda_converted(op, grad_output, kdt, &refused))) &&
      (o = lt_tensor_new(kdt, lt_tensor_device(output), output->ndim, output->sizes)))
    rc = softmax_run(op, kop, y, g, o, d);
  else if (refused) rc = 1;
  lt_tensor_release(oy);
  lt_tensor_release(og);
  if (rc != 0) { lt_tensor_release(o); return rc; }
  *res = as_dtype(op, o, odt);
  return *res ? 0 : -1;
}

lt_tensor *lt_cuda_softmax_backward(lt_tensor *grad_output, lt_tensor *output, int64_t dim) {
  lt_tensor *r = NULL;
  if (sm_backward("softmax_backward", LT_CK_SOFTMAX_BWD, grad_output, output, dim, &r) <= 0) return r;
  LT_CUDA_FALLBACK(softmax_backward, "softmax_backward", (lt_dtype)output->dtype, grad_output, output, dim);
}
lt_tensor *lt_cuda_log_softmax_backward(lt_tensor *grad_output, lt_tensor *output, int64_t dim) {
  lt_tensor *r = NULL;
  if (sm_backward("log_softmax_backward", LT_CK_LOG_SOFTMAX_BWD, grad_output, output, dim, &r) <= 0) return r;
  LT_CUDA_FALLBACK(log_softmax_backward, "log_softmax_backward", (lt_dtype)output->dtype, grad_output, output, dim);
}

/* ---- layer_norm ---- */

int lt_cuda_native_layer_norm(lt_tensor *input, lt_intlist normalized_shape, lt_tensor *weight, lt_tensor *bias,
                              double eps, lt_tensor **output, lt_tensor **mean, lt_tensor **rstd) {
  const char *op = "layer_norm";
  *output = *mean = *rstd = NULL;
  int64_t M = 0, D = 0;
  if (lt_meta_layer_norm(op, input, normalized_shape, weight, bias, &M, &D) < 0) return -1;
  lt_dtype odt = lt_tensor_dtype(input);
  lt_tensor *ox = NULL, *ow = NULL, *ob = NULL, *o = NULL, *mt = NULL, *rt = NULL;
  bool refused = false;
  int rc = -1;
  const lt_tensor *x = as_contig(op, input, odt, &ox, &refused);
  const lt_tensor *w = weight ? as_contig(op, weight, LT_FLOAT64, &ow, &refused) : NULL;
  const lt_tensor *b = bias ? as_contig(op, bias, LT_FLOAT64, &ob, &refused) : NULL;
  int64_t ss[LT_MAX_DIMS];
  int k = input->ndim - normalized_shape.n;
  for (int i = 0; i < input->ndim; i++) ss[i] = i < k ? input->sizes[i] : 1;
  if (x && (!weight || w) && (!bias || b) &&
      (o = lt_tensor_new(odt, lt_tensor_device(input), input->ndim, input->sizes)) &&
      (mt = lt_tensor_new(odt, lt_tensor_device(input), input->ndim, ss)) &&
      (rt = lt_tensor_new(odt, lt_tensor_device(input), input->ndim, ss))) {
    lt_cuda_launch l;
    const lt_ck_nnred_kernels *kk;
    if (nn_begin(&l, lt_tensor_device(input).index, op, &kk) == 0) {
      rc = kk->layer_norm(odt, lt_tensor_data(o), lt_tensor_data(mt), lt_tensor_data(rt), lt_tensor_data(x), NULL,
                          w ? lt_tensor_data(w) : NULL, b ? lt_tensor_data(b) : NULL, M, D, eps, l.stream);
      lt_cuda_launch_end(&l);
      rc = lt_cuda_launch_result(&l, op, rc, kk->error_string);
    }
  } else if (refused) rc = 1;
  lt_tensor_release(ox), lt_tensor_release(ow), lt_tensor_release(ob);
  if (rc == 0) { *output = o, *mean = mt, *rstd = rt; return 0; }
  lt_tensor_release(o), lt_tensor_release(mt), lt_tensor_release(rt);
  if (rc < 0) return -1;
  LT_CUDA_FALLBACK_INT(native_layer_norm, op, odt, input, normalized_shape, weight, bias, eps, output, mean, rstd);
}

/* the layer_norm backwards' operands, contiguous in one dtype: the input's
** when all four have it, else the compute dtype (as the CPU converts them) */
typedef struct ln_ops { lt_tensor *own[4]; const lt_tensor *t[4]; lt_dtype dt; } ln_ops;

static int ln_operands(const char *op, lt_tensor *g, lt_tensor *x, lt_tensor *m, lt_tensor *r, ln_ops *p,
                       bool *refused) {
  lt_dtype xdt = lt_tensor_dtype(x);
  p->dt = g->dtype == x->dtype && m->dtype == x->dtype && r->dtype == x->dtype ? xdt : cdt_of(xdt);
  lt_tensor *in[4] = {g, x, m, r};
  int rc = 0;
  for (int i = 0; i < 4; i++) {
    p->t[i] = rc == 0 ? as_contig(op, in[i], p->dt, &p->own[i], refused) : NULL;
    if (rc == 0 && !p->t[i]) rc = -1;
    if (rc != 0) p->own[i] = NULL;
  }
  return rc;
}

static void ln_release(ln_ops *p) { for (int i = 0; i < 4; i++) lt_tensor_release(p->own[i]); }

lt_tensor *lt_cuda_layer_norm_backward(lt_tensor *grad_output, lt_tensor *input, lt_tensor *mean, lt_tensor *rstd,
                                       lt_tensor *weight, lt_intlist normalized_shape) {
  const char *op = "layer_norm_backward";
  int64_t M = 0, D = 0;
  if (lt_meta_layer_norm_backward(op, grad_output, input, mean, rstd, weight, normalized_shape, &M, &D) < 0)
    return NULL;
  lt_dtype odt = lt_tensor_dtype(input);
  ln_ops p;
  lt_tensor *ow = NULL, *o = NULL;
  bool refused = false;
  int rc = -1;
  const lt_tensor *w = NULL;
  if (ln_operands(op, grad_output, input, mean, rstd, &p, &refused) == 0 &&
      (!weight || (w = as_contig(op, weight, LT_FLOAT64, &ow, &refused))) &&
      (o = lt_tensor_new(p.dt, lt_tensor_device(input), input->ndim, input->sizes))) {
    lt_cuda_launch l;
    const lt_ck_nnred_kernels *kk;
    if (nn_begin(&l, lt_tensor_device(input).index, op, &kk) == 0) {
      rc = kk->layer_norm(p.dt, lt_tensor_data(o), (void *)lt_tensor_data(p.t[2]), (void *)lt_tensor_data(p.t[3]),
                          lt_tensor_data(p.t[1]), lt_tensor_data(p.t[0]), w ? lt_tensor_data(w) : NULL, NULL, M, D, 0,
                          l.stream);
      lt_cuda_launch_end(&l);
      rc = lt_cuda_launch_result(&l, op, rc, kk->error_string);
    }
  } else if (refused) rc = 1;
  ln_release(&p);
  lt_tensor_release(ow);
  if (rc == 0) return as_dtype(op, o, odt);
  lt_tensor_release(o);
  if (rc < 0) return NULL;
  LT_CUDA_FALLBACK(layer_norm_backward, op, odt, grad_output, input, mean, rstd, weight, normalized_shape);
}

lt_tensor *lt_cuda_layer_norm_backward_weight(lt_tensor *grad_output, lt_tensor *input, lt_tensor *mean,
                                              lt_tensor *rstd, lt_intlist normalized_shape) {
  const char *op = "layer_norm_backward_weight";
  int64_t M = 0, D = 0;
  if (lt_meta_layer_norm_backward(op, grad_output, input, mean, rstd, NULL, normalized_shape, &M, &D) < 0)
    return NULL;
  lt_dtype odt = lt_tensor_dtype(input);
  ln_ops p;
  lt_tensor *acc = NULL;
  bool refused = false;
  int rc = -1;
  if (ln_operands(op, grad_output, input, mean, rstd, &p, &refused) == 0 &&
      (acc = lt_tensor_new(LT_FLOAT64, lt_tensor_device(input), normalized_shape.n, normalized_shape.v))) {
    lt_cuda_launch l;
    const lt_ck_nnred_kernels *kk;
    if (nn_begin(&l, lt_tensor_device(input).index, op, &kk) == 0) {
      rc = kk->layer_norm_wgrad(p.dt, lt_tensor_data(acc), lt_tensor_data(p.t[1]), lt_tensor_data(p.t[0]),
                                lt_tensor_data(p.t[2]), lt_tensor_data(p.t[3]), M, D, l.stream);
      lt_cuda_launch_end(&l);
      rc = lt_cuda_launch_result(&l, op, rc, kk->error_string);
    }
  } else if (refused) rc = 1;
  ln_release(&p);
  if (rc == 0) return as_dtype(op, acc, odt);
  lt_tensor_release(acc);
  if (rc < 0) return NULL;
  LT_CUDA_FALLBACK(layer_norm_backward_weight, op, odt, grad_output, input, mean, rstd, normalized_shape);
}

/* ---- nll_loss ---- */

/* the sum of n float64 elements of t into the float64 scalar s (the reduce kernel) */
static int sum64(const char *op, lt_tensor *t, lt_tensor *s) {
  lt_cuda_red p;
  if (lt_cuda_red_plan(&p, op, t, lt_intlist_none(), false) < 0) return -1;
  return lt_cuda_red_run(&p, LT_CK_RED_SUM, t, s, NULL, 0);
}

int lt_cuda_nll_loss_forward(lt_tensor *self, lt_tensor *target, lt_tensor *weight, const char *reduction,
                             int64_t ignore_index, lt_tensor **output, lt_tensor **total_weight) {
  const char *op = "nll_loss";
  *output = *total_weight = NULL;
  lt_nll_geom g;
  int red = lt_meta_loss_reduction(op, reduction, false);
  if (red < 0 || lt_meta_nll_loss(op, self, target, weight, &g) < 0 ||
      lt_meta_nll_targets(op, target, g.C, ignore_index) < 0)
    return -1;
  lt_dtype odt = lt_tensor_dtype(self);
  lt_device dev = lt_tensor_device(self);
  lt_tensor *ox = NULL, *ot = NULL, *ow = NULL, *o = NULL, *tw = NULL, *ls = NULL, *ws = NULL, *s0 = NULL, *s1 = NULL;
  bool refused = false;
  int rc = -1;
  int64_t NS = g.N * g.S;
  const lt_tensor *x = as_contig(op, self, odt, &ox, &refused);
  const lt_tensor *t = x ? as_contig(op, target, LT_INT64, &ot, &refused) : NULL;
  const lt_tensor *w = t && weight ? as_contig(op, weight, LT_FLOAT64, &ow, &refused) : NULL;
  if (!t || (weight && !w)) { rc = refused ? 1 : -1; goto done; }
  /* the per-element losses ("none": also as the result) and weights, their float64 sums, then the total */
  o = red == LT_LOSS_NONE ? lt_tensor_new(odt, dev, target->ndim, target->sizes) : lt_tensor_new(odt, dev, 0, NULL);
  tw = lt_tensor_new(odt, dev, 0, NULL);
  if (!o || !tw || !(ls = lt_tensor_new(LT_FLOAT64, dev, 1, &NS)) || !(ws = lt_tensor_new(LT_FLOAT64, dev, 1, &NS)) ||
      !(s0 = lt_tensor_new_zeros(LT_FLOAT64, dev, 0, NULL)) || !(s1 = lt_tensor_new_zeros(LT_FLOAT64, dev, 0, NULL)))
    goto done;
  lt_cuda_launch l;
  const lt_ck_nnred_kernels *kk;
  if (NS > 0) {
    if (nn_begin(&l, dev.index, op, &kk) < 0) goto done;
    rc = kk->nll_gather(odt, lt_tensor_data(ls), lt_tensor_data(ws), red == LT_LOSS_NONE ? lt_tensor_data(o) : NULL,
                        lt_tensor_data(x), lt_tensor_data(t), w ? lt_tensor_data(w) : NULL, g.N, g.C, g.S,
                        ignore_index, l.stream);
    lt_cuda_launch_end(&l);
    if ((rc = lt_cuda_launch_result(&l, op, rc, kk->error_string)) != 0) goto done;
    if ((rc = sum64(op, ls, s0)) != 0 || (rc = sum64(op, ws, s1)) != 0) goto done;
  }
  {
    lt_tensor *scratch = red == LT_LOSS_NONE ? lt_tensor_new(odt, dev, 0, NULL) : NULL;
    rc = -1;
    if (red == LT_LOSS_NONE && !scratch) goto done;
    if (nn_begin(&l, dev.index, op, &kk) < 0) { lt_tensor_release(scratch); goto done; }
    rc = kk->nll_total(odt, lt_tensor_data(scratch ? scratch : o), lt_tensor_data(tw), lt_tensor_data(s0),
                       lt_tensor_data(s1), red == LT_LOSS_MEAN, l.stream);
    lt_cuda_launch_end(&l);
    lt_tensor_release(scratch);
    rc = lt_cuda_launch_result(&l, op, rc, kk->error_string);
  }
done:
  lt_tensor_release(ox), lt_tensor_release(ot), lt_tensor_release(ow);
  lt_tensor_release(ls), lt_tensor_release(ws), lt_tensor_release(s0), lt_tensor_release(s1);
  if (rc == 0) { *output = o, *total_weight = tw; return 0; }
  lt_tensor_release(o), lt_tensor_release(tw);
  if (rc < 0) return -1;
  LT_CUDA_FALLBACK_INT(nll_loss_forward, op, odt, self, target, weight, reduction, ignore_index, output, total_weight);
}

lt_tensor *lt_cuda_nll_loss_backward(lt_tensor *grad_output, lt_tensor *self, lt_tensor *target, lt_tensor *weight,
                                     const char *reduction, int64_t ignore_index, lt_tensor *total_weight) {
  const char *op = "nll_loss_backward";
  lt_nll_geom g;
  int red = lt_meta_loss_reduction(op, reduction, false);
  if (red < 0 || lt_meta_nll_loss(op, self, target, weight, &g) < 0 ||
      lt_meta_nll_targets(op, target, g.C, ignore_index) < 0)
    return NULL;
  if (red == LT_LOSS_NONE ? grad_output->numel != target->numel : grad_output->numel != 1)
    return lt_error_null("%s: argument 'grad_output' has %lld elements, expected %lld", op,
                         (long long)grad_output->numel, (long long)(red == LT_LOSS_NONE ? target->numel : 1));
  lt_dtype odt = lt_tensor_dtype(self);
  lt_device dev = lt_tensor_device(self);
  lt_tensor *ogo = NULL, *ot = NULL, *ow = NULL, *otw = NULL, *gi = NULL;
  bool refused = false;
  int rc = -1;
  const lt_tensor *go = as_contig(op, grad_output, LT_FLOAT64, &ogo, &refused);
  const lt_tensor *t = go ? as_contig(op, target, LT_INT64, &ot, &refused) : NULL;
  const lt_tensor *w = t && weight ? as_contig(op, weight, LT_FLOAT64, &ow, &refused) : NULL;
  const lt_tensor *tw = t && red == LT_LOSS_MEAN ? as_contig(op, total_weight, LT_FLOAT64, &otw, &refused) : NULL;
  if (!t || (weight && !w) || (red == LT_LOSS_MEAN && !tw)) { rc = refused ? 1 : -1; goto done; }
  if (!(gi = lt_tensor_new_zeros(odt, dev, self->ndim, self->sizes))) goto done;
  lt_cuda_launch l;
  const lt_ck_nnred_kernels *kk;
  if (nn_begin(&l, dev.index, op, &kk) < 0) goto done;
  rc = kk->nll_scatter(odt, lt_tensor_data(gi), lt_tensor_data(go), lt_tensor_data(t), w ? lt_tensor_data(w) : NULL,
                       tw ? lt_tensor_data(tw) : NULL, red == LT_LOSS_NONE, red == LT_LOSS_MEAN, g.N, g.C, g.S,
                       ignore_index, l.stream);
  lt_cuda_launch_end(&l);
  rc = lt_cuda_launch_result(&l, op, rc, kk->error_string);
done:
  lt_tensor_release(ogo), lt_tensor_release(ot), lt_tensor_release(ow), lt_tensor_release(otw);
  if (rc == 0) return gi;
  lt_tensor_release(gi);
  if (rc < 0) return NULL;
  LT_CUDA_FALLBACK(nll_loss_backward, op, odt, grad_output, self, target, weight, reduction, ignore_index,
                   total_weight);
}

/* ---- batch_norm ---- */

/* a new contiguous tensor of dt holding the C elements of v from element `at`, shaped [C] */
static lt_tensor *slice_as(const char *op, lt_tensor *v, int64_t at, int64_t C, lt_dtype dt) {
  lt_tensor *a = lt_tensor_alias(v, v->offset + at, 1, &C, NULL);
  bool refused = false;
  lt_tensor *r = a ? lt_cuda_converted(op, a, dt, &refused) : NULL;
  lt_tensor_release(a);
  return r;
}

/* running = new (C float64 values), in place in running's dtype and shape */
static int bn_update(lt_tensor *running, lt_tensor *nw) {
  lt_tensor *src = lt_tensor_alias(nw, nw->offset, running->ndim, running->sizes, NULL);
  int rc = src ? lt_tensor_copy_(running, src) : -1;
  if (rc == 0) lt_tensor_bump_version(running);
  lt_tensor_release(src);
  return rc;
}

int lt_cuda_native_batch_norm(lt_tensor *input, lt_tensor *weight, lt_tensor *bias, lt_tensor *running_mean,
                              lt_tensor *running_var, bool training, double momentum, double eps,
                              lt_tensor **output, lt_tensor **save_mean, lt_tensor **save_invstd) {
  const char *op = "batch_norm";
  *output = *save_mean = *save_invstd = NULL;
  int64_t N = 0, C = 0, S = 0;
  if (lt_meta_batch_norm(op, input, weight, bias, running_mean, running_var, training, &N, &C, &S) < 0) return -1;
  lt_dtype odt = lt_tensor_dtype(input);
  lt_device dev = lt_tensor_device(input);
  lt_tensor *own[5] = {0}, *o = NULL, *st = NULL, *nrm = NULL, *nrv = NULL;
  bool refused = false;
  int rc = -1;
  const lt_tensor *x = as_contig(op, input, odt, &own[0], &refused);
  const lt_tensor *w = weight ? as_contig(op, weight, LT_FLOAT64, &own[1], &refused) : NULL;
  const lt_tensor *b = bias ? as_contig(op, bias, LT_FLOAT64, &own[2], &refused) : NULL;
  const lt_tensor *rm = running_mean ? as_contig(op, running_mean, LT_FLOAT64, &own[3], &refused) : NULL;
  const lt_tensor *rv = running_var ? as_contig(op, running_var, LT_FLOAT64, &own[4], &refused) : NULL;
  int64_t c3 = 3 * C;
  if (!x || (weight && !w) || (bias && !b) || (running_mean && !rm) || (running_var && !rv)) {
    rc = refused ? 1 : -1;
    goto done;
  }
  if (!(o = lt_tensor_new(odt, dev, input->ndim, input->sizes)) || !(st = lt_tensor_new(LT_FLOAT64, dev, 1, &c3)) ||
      (training && rm && !(nrm = lt_tensor_new(LT_FLOAT64, dev, 1, &C))) ||
      (training && rv && !(nrv = lt_tensor_new(LT_FLOAT64, dev, 1, &C))))
    goto done;
  lt_cuda_launch l;
  const lt_ck_nnred_kernels *kk;
  if (nn_begin(&l, dev.index, op, &kk) < 0) goto done;
  double *sv = lt_tensor_data(st);
  rc = kk->bn_stats(odt, sv, nrm ? lt_tensor_data(nrm) : NULL, nrv ? lt_tensor_data(nrv) : NULL, lt_tensor_data(x),
                    rm ? lt_tensor_data(rm) : NULL, rv ? lt_tensor_data(rv) : NULL, training, momentum, eps, N, C, S,
                    l.stream);
  if (rc == LT_CK_OK)
    rc = kk->bn_apply(odt, lt_tensor_data(o), lt_tensor_data(x), NULL, sv, sv + C, w ? lt_tensor_data(w) : NULL,
                      b ? lt_tensor_data(b) : NULL, NULL, NULL, training, N, C, S, l.stream);
  lt_cuda_launch_end(&l);
  if ((rc = lt_cuda_launch_result(&l, op, rc, kk->error_string)) != 0) goto done;
  rc = -1;
  if ((nrm && bn_update(running_mean, nrm) < 0) || (nrv && bn_update(running_var, nrv) < 0)) goto done;
  if (!(*save_mean = slice_as(op, st, 0, C, odt)) || !(*save_invstd = slice_as(op, st, C, C, odt))) goto done;
  rc = 0;
done:
  for (int i = 0; i < 5; i++) lt_tensor_release(own[i]);
  lt_tensor_release(st), lt_tensor_release(nrm), lt_tensor_release(nrv);
  if (rc == 0) { *output = o; return 0; }
  lt_tensor_release(o), lt_tensor_release(*save_mean), lt_tensor_release(*save_invstd);
  *save_mean = *save_invstd = NULL;
  if (rc < 0) return -1;
  LT_CUDA_FALLBACK_INT(native_batch_norm, op, odt, input, weight, bias, running_mean, running_var, training, momentum,
                       eps, output, save_mean, save_invstd);
}

/* which: 0 grad_input, 1 grad_weight (sum g * xhat per channel), 2 grad_bias (sum g): 0 with *res, 1, -1 */
static int bn_backward(const char *op, int which, lt_tensor *grad_output, lt_tensor *input, lt_tensor *weight,
                       lt_tensor *save_mean, lt_tensor *save_invstd, bool training, lt_tensor **res) {
  int64_t N = 0, C = 0, S = 0;
  if (lt_meta_batch_norm_backward(op, grad_output, input, weight, save_mean, save_invstd, &N, &C, &S) < 0) return -1;
  lt_dtype odt = lt_tensor_dtype(input);
  lt_device dev = lt_tensor_device(input);
  /* g and x read in one dtype: the input's, or both in the compute dtype when g's differs */
  lt_dtype kdt = grad_output->dtype == input->dtype ? odt : cdt_of(odt);
  lt_tensor *own[5] = {0}, *sums = NULL, *r = NULL;
  bool refused = false;
  int rc = -1;
  const lt_tensor *g = as_contig(op, grad_output, kdt, &own[0], &refused);
  const lt_tensor *x = g && which != 2 ? as_contig(op, input, kdt, &own[1], &refused) : NULL;
  const lt_tensor *w = g && weight ? as_contig(op, weight, LT_FLOAT64, &own[2], &refused) : NULL;
  const lt_tensor *m = g && save_mean ? as_contig(op, save_mean, LT_FLOAT64, &own[3], &refused) : NULL;
  const lt_tensor *is = g && save_invstd ? as_contig(op, save_invstd, LT_FLOAT64, &own[4], &refused) : NULL;
  int64_t c2 = 2 * C;
  if (!g || (which != 2 && !x) || (weight && !w) || (save_mean && !m) || (save_invstd && !is)) {
    rc = refused ? 1 : -1;
    goto done;
  }
  if (which != 2 && (!m || !is)) { lt_error("%s: arguments 'save_mean' and 'save_invstd' are required", op); goto done; }
  if (!(sums = lt_tensor_new(LT_FLOAT64, dev, 1, &c2))) goto done;
  double *sg = lt_tensor_data(sums), *sgx = sg + C;
  lt_cuda_launch l;
  const lt_ck_nnred_kernels *kk;
  if (!(r = which == 0 ? lt_tensor_new(kdt, dev, input->ndim, input->sizes) : lt_tensor_new(LT_FLOAT64, dev, 1, &C)))
    goto done;
  if (nn_begin(&l, dev.index, op, &kk) < 0) goto done;
  rc = LT_CK_OK;
  if (which != 0 || training)
    rc = kk->bn_bsums(kdt, which == 2 ? lt_tensor_data(r) : sg, which == 0 ? sgx : NULL,
                      which == 1 ? lt_tensor_data(r) : NULL, x ? lt_tensor_data(x) : NULL, lt_tensor_data(g),
                      m ? lt_tensor_data(m) : NULL, is ? lt_tensor_data(is) : NULL, N, C, S, l.stream);
  if (rc == LT_CK_OK && which == 0)
    rc = kk->bn_apply(kdt, lt_tensor_data(r), lt_tensor_data(x), lt_tensor_data(g), lt_tensor_data(m),
                      lt_tensor_data(is), w ? lt_tensor_data(w) : NULL, NULL, sg, sgx, training, N, C, S, l.stream);
  lt_cuda_launch_end(&l);
  rc = lt_cuda_launch_result(&l, op, rc, kk->error_string);
done:
  for (int i = 0; i < 5; i++) lt_tensor_release(own[i]);
  lt_tensor_release(sums);
  if (rc == 0) { *res = as_dtype(op, r, odt); return *res ? 0 : -1; }
  lt_tensor_release(r);
  return rc;
}

lt_tensor *lt_cuda_batch_norm_backward(lt_tensor *grad_output, lt_tensor *input, lt_tensor *weight,
                                       lt_tensor *save_mean, lt_tensor *save_invstd, bool training) {
  lt_tensor *r = NULL;
  if (bn_backward("batch_norm_backward", 0, grad_output, input, weight, save_mean, save_invstd, training, &r) <= 0)
    return r;
  LT_CUDA_FALLBACK(batch_norm_backward, "batch_norm_backward", (lt_dtype)input->dtype, grad_output, input, weight,
                   save_mean, save_invstd, training);
}
lt_tensor *lt_cuda_batch_norm_backward_weight(lt_tensor *grad_output, lt_tensor *input, lt_tensor *save_mean,
                                              lt_tensor *save_invstd) {
  lt_tensor *r = NULL;
  if (bn_backward("batch_norm_backward_weight", 1, grad_output, input, NULL, save_mean, save_invstd, true, &r) <= 0)
    return r;
  LT_CUDA_FALLBACK(batch_norm_backward_weight, "batch_norm_backward_weight", (lt_dtype)input->dtype, grad_output,
                   input, save_mean, save_invstd);
}
lt_tensor *lt_cuda_batch_norm_backward_bias(lt_tensor *grad_output, lt_tensor *input) {
  lt_tensor *r = NULL;
  if (bn_backward("batch_norm_backward_bias", 2, grad_output, input, NULL, NULL, NULL, true, &r) <= 0) return r;
  LT_CUDA_FALLBACK(batch_norm_backward_bias, "batch_norm_backward_bias", (lt_dtype)input->dtype, grad_output, input);
}
