/*
** nn_act.c — the activations of torch.nn.functional that ew_unary.c does
** not have (mish, hardsigmoid, hardswish, softsign, logsigmoid, threshold,
** the shrinks, selu, celu, prelu), and one fused backward kernel for the
** elementwise activations, `_activation_backward`, that the derivative
** helpers use when no graph of the backward pass is wanted.
**
** The loops are ew.h's templates, run by lt_ew_run: vectorised contiguous
** runs, strided and broadcast operands, threads above the elementwise grain.
*/
/* no-trapping-math: lutorch never enables FP traps, and without it GCC will not
** if-convert (vectorise) the piecewise activations */
#include <tgmath.h>
#include "cpu/ew.h"
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */

/* glibc's vector variants (libmvec), so GCC vectorises these calls
** without -ffast-math (as in ew_unary.c) */
#if defined(__x86_64__) && defined(__GLIBC__) && !defined(__FAST_MATH__) && !defined(__SANITIZE_ADDRESS__)
#define ACT_SIMD __attribute__((__simd__("notinbranch")))
ACT_SIMD float (expf)(float); ACT_SIMD double (exp)(double);
ACT_SIMD float (tanhf)(float); ACT_SIMD double (tanh)(double);
ACT_SIMD float (log1pf)(float); ACT_SIMD double (log1p)(double);
ACT_SIMD float (erff)(float); ACT_SIMD double (erf)(double);
#endif

#define TY(x) __typeof__(x)
#define K(v) ((TY(x))(v))
#define CF(k) ((TY(x))c_->f[k])

/* ---- forward loops: expressions in x; scalars in c_->f[] ---- */
#define AF_DEF(E, T, CT, N, OP) EW_UNARY(OP##_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, AF_##OP)
#define ACT_FWD(OP) EW_FLOATS(AF_DEF, OP) \
  static const lt_ew_loop OP##_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, OP) };

/* mish: with n = exp(x), tanh(log1p(n)) = n (n + 2) / (n (n + 2) + 2): one exp instead
** of exp, log1p and tanh; above 20 it is x to rounding (and n^2 would overflow later) */
#define AF_mish ({ TY(x) n_ = exp(x), m_ = n_ * (n_ + K(2)); x > K(20) ? x : x * m_ / (m_ + K(2)); })
#define AF_hardsigmoid (x <= K(-3) ? K(0) : x >= K(3) ? K(1) : x * K(1.0 / 6) + K(0.5))
#define AF_hardswish (x <= K(-3) ? K(0) : x >= K(3) ? x : x * (x + K(3)) * K(1.0 / 6))
#define AF_softsign (x / (K(1) + fabs(x)))
/* min(x, 0) - log1p(exp(-|x|)): no overflow at either end */
#define AF_logsigmoid ((x < K(0) ? x : K(0)) - log1p(exp(-fabs(x))))
#define AF_threshold (x > CF(0) ? x : CF(1))
#define AF_hardshrink ((x >= -CF(0) && x <= CF(0)) ? K(0) : x)
#define AF_softshrink (x > CF(0) ? x - CF(0) : x < -CF(0) ? x + CF(0) : K(0))
#define AF_tanhshrink (x - tanh(x))
ACT_FWD(mish) ACT_FWD(hardsigmoid) ACT_FWD(hardswish) ACT_FWD(softsign) ACT_FWD(logsigmoid)
ACT_FWD(threshold) ACT_FWD(hardshrink) ACT_FWD(softshrink) ACT_FWD(tanhshrink)

/* threshold also runs on integer tensors, as in PyTorch */
#define TI_DEF(E, T, CT, N, X) EW_UNARY(thresholdi_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, \
  (x > EW_C(CT, 0) ? x : EW_C(CT, 1)))
EW_INTS(TI_DEF, _)
static const lt_ew_loop thresholdi_tbl[LT_NUM_DTYPES] = { EW_INTS(EW_TBL, thresholdi) };

/* prelu: x = input, y = the weight broadcast to it */
#define PR_DEF(E, T, CT, N, X) EW_BINARY(prelu_##N, T, CT, LD_##N, T, ST_##N, EW_NODECL, (x > 0 ? x : y * x))
EW_FLOATS(PR_DEF, _)
static const lt_ew_loop prelu_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, prelu) };

/* ---- fused backward loops: x = grad, y = the op's input ---- */
#define AB_DEF(E, T, CT, N, OP) EW_BINARY(OP##_##N, T, CT, LD_##N, T, ST_##N, EW_CTXDECL, AB_##OP)
#define ACT_BWD(OP) EW_FLOATS(AB_DEF, OP) \
  static const lt_ew_loop OP##_tbl[LT_NUM_DTYPES] = { EW_FLOATS(EW_TBL, OP) };

#define SIG(v) (K(1) / (K(1) + exp(-(v))))
/* mish' = t + y sigmoid(y) (1 - t^2), t = tanh(softplus(y)), both from n = exp(y) as above */
#define AB_bmish ({ TY(x) n_ = exp(y), m_ = n_ * (n_ + K(2)), t_ = m_ / (m_ + K(2)); \
  y > K(20) ? x : x * (t_ + y * (n_ / (n_ + K(1))) * (K(1) - t_ * t_)); })
#define AB_bhardsigmoid ((y > K(-3) && y < K(3)) ? x * K(1.0 / 6) : K(0))
#define AB_bhardswish (y < K(-3) ? K(0) : y <= K(3) ? x * (y * K(1.0 / 3) + K(0.5)) : x)
#define AB_bsoftsign ({ TY(x) d_ = K(1) + fabs(y); x / (d_ * d_); })
#define AB_blogsigmoid (x / (K(1) + exp(y)))
#define AB_bthreshold (y > CF(0) ? x : K(0))
#define AB_bshrink ((y >= -CF(0) && y <= CF(0)) ? K(0) : x)
#define AB_btanhshrink ({ TY(x) t_ = tanh(y); x * t_ * t_; })
/* elu family: f[0] alpha, f[1] scale, f[2] input_scale */
#define AB_belu (y > K(0) ? x * CF(1) : x * CF(1) * CF(0) * CF(2) * exp(y * CF(2)))
#define AB_bsilu ({ TY(x) s_ = SIG(y); x * s_ * (K(1) + y * (K(1) - s_)); })
#define AB_bgelu (x * (K(0.5) * (K(1) + GELU_ERF(y * K(0.70710678118654752440))) \
                       + y * K(0.39894228040143267794) * exp(K(-0.5) * y * y)))
#define AB_bgelut ({ TY(x) y2_ = y * y, t_ = tanh(K(0.79788456080286535588) * y * (K(1) + K(0.044715) * y2_)); \
  x * (K(0.5) * (K(1) + t_) + K(0.5) * y * (K(1) - t_ * t_) * K(0.79788456080286535588) \
       * (K(1) + K(3 * 0.044715) * y2_)); })
#define AB_bsoftplus ({ TY(x) z_ = y * CF(0); z_ > CF(1) ? x : x * SIG(z_); })
ACT_BWD(bmish) ACT_BWD(bhardsigmoid) ACT_BWD(bhardswish) ACT_BWD(bsoftsign) ACT_BWD(blogsigmoid)
ACT_BWD(bthreshold) ACT_BWD(bshrink) ACT_BWD(btanhshrink) ACT_BWD(belu) ACT_BWD(bsilu)
ACT_BWD(bgelu) ACT_BWD(bgelut) ACT_BWD(bsoftplus)

/* ---- drivers ---- */

static lt_tensor *act(const char *op, lt_tensor *self, lt_tensor *out, const lt_ew_loop *tbl, ew_ctx *c) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (!lt_dtype_is_float(dt))
    return lt_error_null("%s: argument 'self' must be a floating point tensor, got %s", op, lt_dtype_name(dt));
  lt_ew_loop fn = lt_ew_pick(op, tbl, dt);
  if (!fn) return NULL;
  lt_ew e;
  e.op = op; e.nin = 1; e.in[0] = self; e.in_dt[0] = dt; e.out_dt = dt;
  e.fn = fn; e.ctx = c; e.grain = 0;
  return lt_ew_run(&e, out);
}

lt_tensor *lt_cpu_mish(lt_tensor *self, lt_tensor *out) { return act("mish", self, out, mish_tbl, NULL); }
lt_tensor *lt_cpu_hardsigmoid(lt_tensor *self, lt_tensor *out) { return act("hardsigmoid", self, out, hardsigmoid_tbl, NULL); }
lt_tensor *lt_cpu_hardswish(lt_tensor *self, lt_tensor *out) { return act("hardswish", self, out, hardswish_tbl, NULL); }
lt_tensor *lt_cpu_softsign(lt_tensor *self, lt_tensor *out) { return act("softsign", self, out, softsign_tbl, NULL); }
lt_tensor *lt_cpu_logsigmoid(lt_tensor *self, lt_tensor *out) { return act("logsigmoid", self, out, logsigmoid_tbl, NULL); }
lt_tensor *lt_cpu_tanhshrink(lt_tensor *self, lt_tensor *out) { return act("tanhshrink", self, out, tanhshrink_tbl, NULL); }

lt_tensor *lt_cpu_threshold(lt_tensor *self, lt_scalar threshold, lt_scalar value, lt_tensor *out) {
  ew_ctx c = {0};
  ew_ctx_set(&c, 0, threshold);
  ew_ctx_set(&c, 1, value);
  lt_dtype dt = (lt_dtype)self->dtype;
  if (dt != LT_BOOL && !lt_dtype_is_float(dt)) {
    if (value.type == LT_SCALAR_FLOAT && value.v.f != floor(value.v.f))
      return lt_error_null("threshold: argument 'value' must be an integer for %s tensors, got %g",
                           lt_dtype_name(dt), value.v.f);
    /* x > 2.5 is x > 2 for integers */
    if (threshold.type == LT_SCALAR_FLOAT) {
      double t = floor(threshold.v.f);
      c.i[0] = t < -9.2e18 ? INT64_MIN : t > 9.2e18 ? INT64_MAX : (int64_t)t;
    }
    lt_ew_loop fn = lt_ew_pick("threshold", thresholdi_tbl, dt);
    if (!fn) return NULL;
    lt_ew e;
    e.op = "threshold"; e.nin = 1; e.in[0] = self; e.in_dt[0] = dt; e.out_dt = dt;
    e.fn = fn; e.ctx = &c; e.grain = 0;
    return lt_ew_run(&e, out);
  }
  return act("threshold", self, out, threshold_tbl, &c);
}

static int check_lambd(const char *op, lt_scalar lambd, double *l) {
  *l = lt_scalar_to_double(lambd);
  if (!(*l >= 0)) { lt_error("%s: argument 'lambd' must be non-negative, got %g", op, *l); return -1; }
  return 0;
}

lt_tensor *lt_cpu_hardshrink(lt_tensor *self, lt_scalar lambd, lt_tensor *out) {
  ew_ctx c = {0};
  if (check_lambd("hardshrink", lambd, &c.f[0]) < 0) return NULL;
  return act("hardshrink", self, out, hardshrink_tbl, &c);
}

lt_tensor *lt_cpu_softshrink(lt_tensor *self, lt_scalar lambd, lt_tensor *out) {
  ew_ctx c = {0};
  if (check_lambd("softshrink", lambd, &c.f[0]) < 0) return NULL;
  return act("softshrink", self, out, softshrink_tbl, &c);
}

/* selu and celu are elu with fixed or derived constants */
#define SELU_ALPHA 1.6732632423543772848170429916717
#define SELU_SCALE 1.0507009873554804934193349852946
lt_tensor *lt_cpu_selu(lt_tensor *self, lt_tensor *out) {
  if (!lt_dtype_is_float((lt_dtype)self->dtype))
    return lt_error_null("selu: argument 'self' must be a floating point tensor, got %s",
                         lt_dtype_name((lt_dtype)self->dtype));
  return lt_cpu_elu(self, lt_scalar_float(SELU_ALPHA), lt_scalar_float(SELU_SCALE), lt_scalar_int(1), out);
}

lt_tensor *lt_cpu_celu(lt_tensor *self, lt_scalar alpha, lt_tensor *out) {
  double a = lt_scalar_to_double(alpha);
  if (a == 0) return lt_error_null("celu: argument 'alpha' must not be zero (ZeroDivisionError)");
  if (!lt_dtype_is_float((lt_dtype)self->dtype))
    return lt_error_null("celu: argument 'self' must be a floating point tensor, got %s",
                         lt_dtype_name((lt_dtype)self->dtype));
  return lt_cpu_elu(self, alpha, lt_scalar_int(1), lt_scalar_float(1.0 / a), out);
}

/* the weight of prelu as a view that broadcasts against self: [C] -> [C, 1, ...] */
lt_tensor *lt_nn_prelu_weight_view(const char *op, lt_tensor *self, lt_tensor *weight) {
  if (weight->ndim > 1)
    return lt_error_null("%s: argument 'weight' must be 1-D (or 0-D), got %d-D", op, weight->ndim);
  int64_t c = weight->numel;
  if (c == 1) {   /* one slope for every element: a 0-d view */
    int64_t one = 1, st = 0;
    return lt_tensor_alias(weight, weight->offset, 0, &one, &st);
  }
  /* the channels are dim 2; inputs of fewer dims have one channel */
  int64_t ch = self->ndim >= 2 ? self->sizes[1] : 1;
  if (c != ch)
    return lt_error_null("%s: argument 'weight' has %lld elements, but the input has %lld channels (dim 2)",
                         op, (long long)c, (long long)ch);
  int nd = self->ndim - 1;
  int64_t sz[LT_MAX_DIMS], st[LT_MAX_DIMS];
  for (int i = 0; i < nd; i++) { sz[i] = 1; st[i] = 0; }
  sz[0] = c; st[0] = weight->strides[0];
  return lt_tensor_alias(weight, weight->offset, nd, sz, st);
}

lt_tensor *lt_cpu_prelu(lt_tensor *self, lt_tensor *weight, lt_tensor *out) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (!lt_dtype_is_float(dt))
    return lt_error_null("prelu: argument 'self' must be a floating point tensor, got %s", lt_dtype_name(dt));
  if (weight->dtype != self->dtype)
    return lt_error_null("prelu: argument 'weight' must have the dtype of self (%s), got %s",
                         lt_dtype_name(dt), lt_dtype_name((lt_dtype)weight->dtype));
  lt_tensor *w = lt_nn_prelu_weight_view("prelu", self, weight);
  if (!w) return NULL;
  lt_ew e;
  e.op = "prelu"; e.nin = 2; e.in[0] = self; e.in[1] = w; e.in_dt[0] = e.in_dt[1] = dt;
  e.out_dt = dt; e.fn = prelu_tbl[dt]; e.ctx = NULL; e.grain = 0;
  lt_tensor *r = lt_ew_run(&e, out);
  lt_tensor_release(w);
  return r;
}

/* grad * act'(self) in one pass. act names the activation; a, b, c are its
** scalars (threshold: a = threshold; shrinks: a = lambd; elu: alpha, scale,
** input_scale; softplus: beta, threshold). */
lt_tensor *lt_cpu__activation_backward(lt_tensor *grad, lt_tensor *self, const char *act_name,
                                       double a, double b, double c) {
  static const struct { const char *name; const lt_ew_loop *tbl; } acts[] = {
    { "mish", bmish_tbl }, { "hardsigmoid", bhardsigmoid_tbl }, { "hardswish", bhardswish_tbl },
    { "softsign", bsoftsign_tbl }, { "logsigmoid", blogsigmoid_tbl }, { "threshold", bthreshold_tbl },
    { "hardshrink", bshrink_tbl }, { "softshrink", bshrink_tbl }, { "tanhshrink", btanhshrink_tbl },
    { "elu", belu_tbl }, { "silu", bsilu_tbl }, { "gelu", bgelu_tbl }, { "gelu_tanh", bgelut_tbl },
    { "softplus", bsoftplus_tbl },
  };
  const lt_ew_loop *tbl = NULL;
  for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
    if (strcmp(acts[i].name, act_name) == 0) { tbl = acts[i].tbl; break; }
  if (!tbl) return lt_error_null("_activation_backward: argument 'act' names no activation: \"%s\"", act_name);
  lt_dtype dt = (lt_dtype)self->dtype;
  if (!lt_dtype_is_float(dt))
    return lt_error_null("_activation_backward: argument 'self' must be a floating point tensor, got %s",
                         lt_dtype_name(dt));
  ew_ctx cx = {0};
  cx.f[0] = a; cx.f[1] = b; cx.f[2] = c;
  lt_ew e;
  e.op = "_activation_backward"; e.nin = 2; e.in[0] = grad; e.in[1] = self;
  e.in_dt[0] = e.in_dt[1] = dt; e.out_dt = dt; e.fn = tbl[dt]; e.ctx = &cx; e.grain = 0;
  return lt_ew_run(&e, NULL);
}
