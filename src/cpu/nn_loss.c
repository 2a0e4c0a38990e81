/*
** nn_loss.c — nll_loss's CPU kernels: a gather with class weights and an
** ignored index, and the matching scatter for the gradient. The other losses
** are composites (src/composite/nn_loss.c). Class indices in targets are
** 1-based.
*/
#include <math.h>
#include <string.h>
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "core/tpool.h"
#include "cpu/parallel.h"

/* the reduction argument and the shape checks are device-neutral (meta/loss.h) */
#include "meta/loss.h"

/* ---------------------------------------------------------------- nll_loss */

typedef lt_nll_geom nll_geom;

/* shapes and dtypes (lt_meta_nll_loss), then the class indices; fills the (N, C, S) view of self */
static int nll_check(const char *op, lt_tensor *self, lt_tensor *target, lt_tensor *weight, int64_t ignore_index,
                     nll_geom *g) {
  if (lt_meta_nll_loss(op, self, target, weight, g) < 0) return -1;
  return lt_meta_nll_targets(op, target, g->C, ignore_index);
}

/* contiguous float32/float64 copies of input and weight in a common compute dtype */
static lt_dtype nll_cdt(lt_tensor *self) { return lt_tensor_dtype(self) == LT_FLOAT64 ? LT_FLOAT64 : LT_FLOAT32; }

int lt_cpu_nll_loss_forward(lt_tensor *self, lt_tensor *target, lt_tensor *weight, const char *reduction,
                            int64_t ignore_index, lt_tensor **output, lt_tensor **total_weight) {
  const char *op = "nll_loss";
  *output = *total_weight = NULL;
  nll_geom g;
  int red = lt_meta_loss_reduction(op, reduction, false);
  if (red < 0 || nll_check(op, self, target, weight, ignore_index, &g) < 0) return -1;
  lt_dtype cdt = nll_cdt(self), odt = lt_tensor_dtype(self);
  lt_tensor *x = lt_tensor_to_dtype_contig(self, cdt);
  lt_tensor *t = x ? lt_tensor_to_dtype_contig(target, LT_INT64) : NULL;
  lt_tensor *w = t && weight ? lt_tensor_to_dtype_contig(weight, LT_FLOAT64) : NULL;
  lt_tensor *o = NULL, *tw = NULL;
  if (!x || !t || (weight && !w)) goto fail;
  o = red == LT_LOSS_NONE ? lt_tensor_new(cdt, lt_tensor_device(self), target->ndim, target->sizes)
                      : lt_tensor_new(cdt, lt_tensor_device(self), 0, NULL);
  tw = lt_tensor_new(cdt, lt_tensor_device(self), 0, NULL);
  if (!o || !tw) goto fail;
  {
    const int64_t *tv = lt_tensor_data(t);
    const double *wv = w ? lt_tensor_data(w) : NULL;
    const void *xv = lt_tensor_data(x);
    bool f32 = cdt == LT_FLOAT32;
    double sum = 0, wsum = 0;
    int64_t C = g.C, S = g.S;
    for (int64_t n = 0; n < g.N; n++)
      for (int64_t s = 0; s < S; s++) {
        int64_t i = n * S + s, c = tv[i];
        double l = 0, wc = 0;
        if (c != ignore_index) {
          wc = wv ? wv[c - 1] : 1.0;
          int64_t xi = (n * C + (c - 1)) * S + s;
          l = -wc * (f32 ? (double)((const float *)xv)[xi] : ((const double *)xv)[xi]);
        }
        if (red == LT_LOSS_NONE) {
          if (f32) ((float *)lt_tensor_data(o))[i] = (float)l;
          else ((double *)lt_tensor_data(o))[i] = l;
        }
        sum += l, wsum += wc;
      }
    double r = red == LT_LOSS_MEAN ? sum / wsum : sum;   /* every target ignored: 0/0, NaN as in PyTorch */
    if (f32) {
      if (red != LT_LOSS_NONE) *(float *)lt_tensor_data(o) = (float)r;
      *(float *)lt_tensor_data(tw) = (float)wsum;
    } else {
      if (red != LT_LOSS_NONE) *(double *)lt_tensor_data(o) = r;
      *(double *)lt_tensor_data(tw) = wsum;
    }
  }
  lt_tensor_release(x), lt_tensor_release(t), lt_tensor_release(w);
  if (cdt != odt) {
    lt_tensor *o2 = lt_tensor_clone_as(o, odt), *tw2 = o2 ? lt_tensor_clone_as(tw, odt) : NULL;
    lt_tensor_release(o), lt_tensor_release(tw);
    if (!o2 || !tw2) { lt_tensor_release(o2); return -1; }
    o = o2, tw = tw2;
  }
  *output = o, *total_weight = tw;
  return 0;
fail:
  lt_tensor_release(x), lt_tensor_release(t), lt_tensor_release(w);
  lt_tensor_release(o), lt_tensor_release(tw);
  return -1;
}

lt_tensor *lt_cpu_nll_loss_backward(lt_tensor *grad_output, lt_tensor *self, lt_tensor *target, lt_tensor *weight,
                                    const char *reduction, int64_t ignore_index, lt_tensor *total_weight) {
  const char *op = "nll_loss_backward";
  nll_geom g;
  int red = lt_meta_loss_reduction(op, reduction, false);
  if (red < 0 || nll_check(op, self, target, weight, ignore_index, &g) < 0) return NULL;
  if (red == LT_LOSS_NONE ? grad_output->numel != target->numel : grad_output->numel != 1)
    return lt_error_null("%s: argument 'grad_output' has %lld elements, expected %lld", op,
                         (long long)grad_output->numel, (long long)(red == LT_LOSS_NONE ? target->numel : 1));
  lt_dtype cdt = nll_cdt(self), odt = lt_tensor_dtype(self);
  lt_tensor *go = lt_tensor_to_dtype_contig(grad_output, LT_FLOAT64);
  lt_tensor *t = go ? lt_tensor_to_dtype_contig(target, LT_INT64) : NULL;
  lt_tensor *w = t && weight ? lt_tensor_to_dtype_contig(weight, LT_FLOAT64) : NULL;
  lt_tensor *gi = NULL;
  double twv = red == LT_LOSS_MEAN ? lt_tensor_get_double(total_weight, 0) : 1.0;
  if (!go || !t || (weight && !w)) goto done;
  gi = lt_tensor_new_zeros(cdt, lt_tensor_device(self), self->ndim, self->sizes);
  if (!gi) goto done;
  {
    const int64_t *tv = lt_tensor_data(t);
    const double *wv = w ? lt_tensor_data(w) : NULL, *gv = lt_tensor_data(go);
    bool f32 = cdt == LT_FLOAT32;
    void *o = lt_tensor_data(gi);
    int64_t C = g.C, S = g.S;
    for (int64_t n = 0; n < g.N; n++)
      for (int64_t s = 0; s < S; s++) {
        int64_t i = n * S + s, c = tv[i];
        if (c == ignore_index) continue;
        double v = -(wv ? wv[c - 1] : 1.0) * (red == LT_LOSS_NONE ? gv[i] : gv[0] / twv);
        int64_t xi = (n * C + (c - 1)) * S + s;
        if (f32) ((float *)o)[xi] = (float)v;
        else ((double *)o)[xi] = v;
      }
  }
  if (cdt != odt) {
    lt_tensor *c = lt_tensor_clone_as(gi, odt);
    lt_tensor_release(gi);
    gi = c;
  }
done:
  lt_tensor_release(go), lt_tensor_release(t), lt_tensor_release(w);
  return gi;
}


