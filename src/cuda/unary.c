/*
** unary.c — the CUDA kernels of the pointwise ops of one input: math
** (src/ops/elementwise.lua's unary table, math.lua's special functions),
** rounding, predicates, bits and the activations of elementwise.lua and
** nn_misc.lua; each lt_cuda_NAME has its op's kernel type and is named in the
** op's declaration. In-place forms are the generated defaults.
**
** Each works out what the CPU kernel does (src/cpu/ew_unary.c,
** math_special.c, nn_act.c): the result dtype (integer inputs of the math
** functions give the default dtype; the activations want floating inputs),
** the cases that are a copy (floor of an integer tensor, abs of uint8) or a
** constant (isnan of an integer tensor), the numbers, and the CPU's errors;
** then runs the family's kernel (pointwise.h). Nothing here has run on a GPU.
*/
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "cuda/launch.h"
#include "cuda/pointwise.h"
#include "dispatch/dispatch.h"
#include "meta/meta.h"
#include "kernels_cuda.h"   /* generated: lt_ops.h, the kernel types */


/* a copy of self (what a rounding op does to integers), into out when given */
static lt_tensor *identity(const char *op, lt_tensor *self, lt_tensor *out) {
  if (!out) return lt_tensor_clone_as(self, (lt_dtype)self->dtype);
  if (out == self) { lt_tensor_retain(out); return out; }
  if (!lt_can_cast((lt_dtype)self->dtype, (lt_dtype)out->dtype))
    return lt_error_null("%s: result type %s can't be cast to the desired output type %s", op,
                         lt_dtype_traits_table[self->dtype].t7name, lt_dtype_traits_table[out->dtype].t7name);
  if (lt_tensor_resize_out(op, out, self->ndim, self->sizes) < 0 || lt_tensor_copy_(out, self) < 0) return NULL;
  lt_tensor_retain(out);
  return out;
}

/* a bool tensor of self's shape holding v (the predicates of integer tensors) */
static lt_tensor *bool_constant(const char *op, lt_tensor *self, lt_tensor *out, bool v) {
  lt_tensor *r = lt_meta_result(op, out, LT_BOOL, lt_tensor_device(self), self->ndim, self->sizes);
  if (r && lt_tensor_fill_(r, lt_scalar_bool(v)) < 0) { lt_tensor_release(r); return NULL; }
  return r;
}

static lt_tensor *not_float(const char *op, lt_tensor *self) {
  (void)lt_meta_check_float(op, "self", self);
  return NULL;
}

/* ---- math: integer inputs compute in the default dtype ---- */

#define PROMOTING(NAME) \
  lt_tensor *lt_cuda_##NAME(lt_tensor *self, lt_tensor *out) { \
    LT_CUDA_OPNAME(#NAME); \
    lt_cuda_pw w; \
    lt_cuda_pw_init(&w, op, LT_CK_PW_##NAME, lt_cuda_float_type((lt_dtype)self->dtype)); \
    w.in[0] = self; \
    LT_CUDA_PW_RETURN(NAME, &w, out, self, out); \
  }
PROMOTING(exp) PROMOTING(sigmoid) PROMOTING(tanh) PROMOTING(sqrt) PROMOTING(rsqrt) PROMOTING(exp2)
PROMOTING(expm1) PROMOTING(log) PROMOTING(log2) PROMOTING(log10) PROMOTING(log1p) PROMOTING(sin)
PROMOTING(cos) PROMOTING(tan) PROMOTING(asin) PROMOTING(acos) PROMOTING(atan) PROMOTING(sinh)
PROMOTING(cosh) PROMOTING(erf) PROMOTING(erfc) PROMOTING(erfinv) PROMOTING(reciprocal)
PROMOTING(lgamma) PROMOTING(digamma) PROMOTING(i0) PROMOTING(sinc)
PROMOTING(asinh) PROMOTING(acosh) PROMOTING(atanh)

lt_tensor *lt_cuda__i1(lt_tensor *self) {
  lt_cuda_pw w;
  lt_cuda_pw_init(&w, "_i1", LT_CK_PW_i1, lt_cuda_float_type((lt_dtype)self->dtype));
  w.in[0] = self;
  LT_CUDA_PW_RETURN(_i1, &w, NULL, self);
}

lt_tensor *lt_cuda_polygamma(int64_t n, lt_tensor *self, lt_tensor *out) {
  LT_CUDA_OPNAME("polygamma");
  if (n < 0) return lt_error_null("%s: argument 'n' must be non-negative, got %lld", op, (long long)n);
  lt_cuda_pw w;
  lt_cuda_pw_init(&w, op, LT_CK_PW_polygamma, lt_cuda_float_type((lt_dtype)self->dtype));
  w.in[0] = self;
  w.mode = n > 0x7fffffff ? 0x7fffffff : (int)n;
  LT_CUDA_PW_RETURN(polygamma, &w, out, n, self, out);
}

lt_tensor *lt_cuda_logit(lt_tensor *self, lt_scalar eps, lt_tensor *out) {
  LT_CUDA_OPNAME("logit");
  lt_cuda_pw w;
  lt_cuda_pw_init(&w, op, LT_CK_PW_logit, lt_cuda_float_type((lt_dtype)self->dtype));
  w.in[0] = self;
  if (!lt_scalar_is_none(eps)) { w.mode = 1; lt_cuda_pw_paramf(&w, 0, lt_scalar_to_double(eps)); }
  LT_CUDA_PW_RETURN(logit, &w, out, self, eps, out);
}

/* ---- floating inputs only ---- */

#define FLOATING(NAME) \
  lt_tensor *lt_cuda_##NAME(lt_tensor *self, lt_tensor *out) { \
    LT_CUDA_OPNAME(#NAME); \
    if (!lt_dtype_is_float((lt_dtype)self->dtype)) return not_float(op, self); \
    lt_cuda_pw w; \
    lt_cuda_pw_init(&w, op, LT_CK_PW_##NAME, (lt_dtype)self->dtype); \
    w.in[0] = self; \
    LT_CUDA_PW_RETURN(NAME, &w, out, self, out); \
  }
FLOATING(frac) FLOATING(silu) FLOATING(mish) FLOATING(hardsigmoid) FLOATING(hardswish)
FLOATING(softsign) FLOATING(logsigmoid) FLOATING(tanhshrink)

/* a floating-only op with numbers p[] */
static int floating_setup(lt_cuda_pw *w, const char *op, int kop, lt_tensor *self) {
  if (!lt_dtype_is_float((lt_dtype)self->dtype)) { not_float(op, self); return -1; }
  lt_cuda_pw_init(w, op, kop, (lt_dtype)self->dtype);
  w->in[0] = self;
  return 0;
}

lt_tensor *lt_cuda_gelu(lt_tensor *self, const char *approximate, lt_tensor *out) {
  LT_CUDA_OPNAME("gelu");
  int kop;
  if (!approximate || strcmp(approximate, "none") == 0) kop = LT_CK_PW_gelu;
  else if (strcmp(approximate, "tanh") == 0) kop = LT_CK_PW_gelu_tanh;
  else return lt_error_null("%s: argument 'approximate' must be \"none\" or \"tanh\", got \"%s\"", op, approximate);
  lt_cuda_pw w;
  if (floating_setup(&w, op, kop, self) < 0) return NULL;
  LT_CUDA_PW_RETURN(gelu, &w, out, self, approximate, out);
}

lt_tensor *lt_cuda_softplus(lt_tensor *self, lt_scalar beta, lt_scalar threshold, lt_tensor *out) {
  LT_CUDA_OPNAME("softplus");
  lt_cuda_pw w;
  if (floating_setup(&w, op, LT_CK_PW_softplus, self) < 0) return NULL;
  lt_cuda_pw_paramf(&w, 0, lt_scalar_to_double(beta));
  lt_cuda_pw_paramf(&w, 1, lt_scalar_to_double(threshold));
  LT_CUDA_PW_RETURN(softplus, &w, out, self, beta, threshold, out);
}

lt_tensor *lt_cuda_elu(lt_tensor *self, lt_scalar alpha, lt_scalar scale, lt_scalar input_scale, lt_tensor *out) {
  LT_CUDA_OPNAME("elu");
  lt_cuda_pw w;
  if (floating_setup(&w, op, LT_CK_PW_elu, self) < 0) return NULL;
  lt_cuda_pw_paramf(&w, 0, lt_scalar_to_double(alpha));
  lt_cuda_pw_paramf(&w, 1, lt_scalar_to_double(scale));
  lt_cuda_pw_paramf(&w, 2, lt_scalar_to_double(input_scale));
  LT_CUDA_PW_RETURN(elu, &w, out, self, alpha, scale, input_scale, out);
}

/* selu and celu: elu with fixed or derived constants */
lt_tensor *lt_cuda_selu(lt_tensor *self, lt_tensor *out) {
  LT_CUDA_OPNAME("selu");
  if (!lt_dtype_is_float((lt_dtype)self->dtype)) return not_float(op, self);
  return lt_cuda_elu(self, lt_scalar_float(1.6732632423543772848170429916717),
                     lt_scalar_float(1.0507009873554804934193349852946), lt_scalar_int(1), out);
}

lt_tensor *lt_cuda_celu(lt_tensor *self, lt_scalar alpha, lt_tensor *out) {
  LT_CUDA_OPNAME("celu");
  double a = lt_scalar_to_double(alpha);
  if (a == 0) return lt_error_null("%s: argument 'alpha' must not be zero (ZeroDivisionError)", op);
  if (!lt_dtype_is_float((lt_dtype)self->dtype)) return not_float(op, self);
  return lt_cuda_elu(self, alpha, lt_scalar_int(1), lt_scalar_float(1.0 / a), out);
}

lt_tensor *lt_cuda_leaky_relu(lt_tensor *self, lt_scalar negative_slope, lt_tensor *out) {
  LT_CUDA_OPNAME("leaky_relu");
  lt_cuda_pw w;
  if (floating_setup(&w, op, LT_CK_PW_leaky_relu, self) < 0) return NULL;
  lt_cuda_pw_paramf(&w, 0, lt_scalar_to_double(negative_slope));
  LT_CUDA_PW_RETURN(leaky_relu, &w, out, self, negative_slope, out);
}

/* the shrinks' lambd, checked before the dtype as on the CPU */
static int lambd_of(const char *op, lt_scalar lambd, double *l) {
  *l = lt_scalar_to_double(lambd);
  if (!(*l >= 0)) return lt_error("%s: argument 'lambd' must be non-negative, got %g", op, *l);
  return 0;
}

#define SHRINK(NAME) \
  lt_tensor *lt_cuda_##NAME(lt_tensor *self, lt_scalar lambd, lt_tensor *out) { \
    LT_CUDA_OPNAME(#NAME); \
    lt_cuda_pw w; \
    double l; \
    if (lambd_of(op, lambd, &l) < 0 || floating_setup(&w, op, LT_CK_PW_##NAME, self) < 0) return NULL; \
    lt_cuda_pw_paramf(&w, 0, l); \
    LT_CUDA_PW_RETURN(NAME, &w, out, self, lambd, out); \
  }
SHRINK(hardshrink) SHRINK(softshrink)

/* x > threshold ? x : value; integer tensors compare with the threshold's floor */
lt_tensor *lt_cuda_threshold(lt_tensor *self, lt_scalar threshold, lt_scalar value, lt_tensor *out) {
  LT_CUDA_OPNAME("threshold");
  lt_dtype dt = (lt_dtype)self->dtype;
  lt_cuda_pw w;
  lt_cuda_pw_init(&w, op, LT_CK_PW_threshold, dt);
  w.in[0] = self;
  lt_cuda_pw_param(&w, 0, threshold);
  lt_cuda_pw_param(&w, 1, value);
  if (dt != LT_BOOL && !lt_dtype_is_float(dt)) {
    if (value.type == LT_SCALAR_FLOAT && value.v.f != floor(value.v.f))
      return lt_error_null("%s: argument 'value' must be an integer for %s tensors, got %g", op, lt_dtype_name(dt),
                           value.v.f);
    if (threshold.type == LT_SCALAR_FLOAT) {
      double t = floor(threshold.v.f);
      w.p[0].i = t < -9.2e18 ? INT64_MIN : t > 9.2e18 ? INT64_MAX : (int64_t)t;
    }
  } else if (!lt_dtype_is_float(dt)) return not_float(op, self);
  LT_CUDA_PW_RETURN(threshold, &w, out, self, threshold, value, out);
}

/* ---- the same dtype ---- */

lt_tensor *lt_cuda_neg(lt_tensor *self, lt_tensor *out) {
  LT_CUDA_OPNAME("neg");
  if (self->dtype == LT_BOOL)
    return lt_error_null("%s: negation of a bool tensor is not supported; use logical_not() or bitwise_not()", op);
  lt_cuda_pw w;
  lt_cuda_pw_init(&w, op, LT_CK_PW_neg, (lt_dtype)self->dtype);
  w.in[0] = self;
  LT_CUDA_PW_RETURN(neg, &w, out, self, out);
}

lt_tensor *lt_cuda_relu(lt_tensor *self, lt_tensor *out) {
  LT_CUDA_OPNAME("relu");
  if (self->dtype == LT_BOOL) return lt_error_null("%s: not implemented for bool tensors", op);
  lt_cuda_pw w;   /* uint8: the kernel copies (the CPU copies too) */
  lt_cuda_pw_init(&w, op, LT_CK_PW_relu, (lt_dtype)self->dtype);
  w.in[0] = self;
  LT_CUDA_PW_RETURN(relu, &w, out, self, out);
}

/* ops that copy the tensors of some dtypes: ID is the condition on dt */
#define SAME_OR_COPY(NAME, ID) \
  lt_tensor *lt_cuda_##NAME(lt_tensor *self, lt_tensor *out) { \
    LT_CUDA_OPNAME(#NAME); \
    lt_dtype dt = (lt_dtype)self->dtype; \
    if (ID) return identity(op, self, out); \
    lt_cuda_pw w; \
    lt_cuda_pw_init(&w, op, LT_CK_PW_##NAME, dt); \
    w.in[0] = self; \
    LT_CUDA_PW_RETURN(NAME, &w, out, self, out); \
  }
SAME_OR_COPY(abs, false)   /* bool and uint8: the kernel copies (the CPU copies too) */
SAME_OR_COPY(sign, dt == LT_BOOL)
SAME_OR_COPY(floor, !lt_dtype_is_float(dt))
SAME_OR_COPY(ceil, !lt_dtype_is_float(dt))
SAME_OR_COPY(trunc, !lt_dtype_is_float(dt))

/* bool squares like pow(bool, 2): in int64 */
lt_tensor *lt_cuda_square(lt_tensor *self, lt_tensor *out) {
  LT_CUDA_OPNAME("square");
  lt_cuda_pw w;
  lt_cuda_pw_init(&w, op, LT_CK_PW_square, self->dtype == LT_BOOL ? LT_INT64 : (lt_dtype)self->dtype);
  w.in[0] = self;
  LT_CUDA_PW_RETURN(square, &w, out, self, out);
}

lt_tensor *lt_cuda_round(lt_tensor *self, int64_t decimals, lt_tensor *out) {
  LT_CUDA_OPNAME("round");
  lt_dtype dt = (lt_dtype)self->dtype;
  if (!lt_dtype_is_float(dt)) {
    if (decimals != 0)
      return lt_error_null("%s: argument 'decimals' is only supported for floating point tensors, got %s", op,
                           lt_dtype_name(dt));
    return identity(op, self, out);
  }
  lt_cuda_pw w;
  lt_cuda_pw_init(&w, op, decimals == 0 ? LT_CK_PW_round : LT_CK_PW_round_dec, dt);
  w.in[0] = self;
  lt_cuda_pw_paramf(&w, 0, pow(10.0, (double)(decimals < 0 ? -decimals : decimals)));
  w.mode = decimals < 0;
  LT_CUDA_PW_RETURN(round, &w, out, self, decimals, out);
}

lt_tensor *lt_cuda_nan_to_num(lt_tensor *self, lt_scalar nan, lt_scalar posinf, lt_scalar neginf, lt_tensor *out) {
  LT_CUDA_OPNAME("nan_to_num");
  lt_dtype dt = (lt_dtype)self->dtype;
  if (!lt_dtype_is_float(dt)) return identity(op, self, out);
  double v[3];
  lt_meta_nan_to_num_values(dt, nan, posinf, neginf, v);
  lt_cuda_pw w;
  lt_cuda_pw_init(&w, op, LT_CK_PW_nan_to_num, dt);
  w.in[0] = self;
  for (int k = 0; k < 3; k++) lt_cuda_pw_paramf(&w, k, v[k]);
  LT_CUDA_PW_RETURN(nan_to_num, &w, out, self, nan, posinf, neginf, out);
}

/* clamp to [lo, hi] by numbers; integer tensors take ceil(lo), floor(hi) */
static int hardtanh_setup(lt_cuda_pw *w, const char *op, lt_tensor *self, lt_scalar lo, lt_scalar hi) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (dt == LT_BOOL) return lt_error("%s: not implemented for bool tensors", op);
  lt_cuda_pw_init(w, op, LT_CK_PW_hardtanh, dt);
  w->in[0] = self;
  lt_cuda_pw_param(w, 0, lo);
  lt_cuda_pw_param(w, 1, hi);
  if (!lt_dtype_is_float(dt)) {
    double b[2] = {ceil(w->p[0].f), floor(w->p[1].f)};
    for (int k = 0; k < 2; k++) w->p[k].i = b[k] < -9.2e18 ? INT64_MIN : b[k] > 9.2e18 ? INT64_MAX : (int64_t)b[k];
  }
  return 0;
}

lt_tensor *lt_cuda_hardtanh(lt_tensor *self, lt_scalar min_val, lt_scalar max_val, lt_tensor *out) {
  LT_CUDA_OPNAME("hardtanh");
  lt_cuda_pw w;
  if (hardtanh_setup(&w, op, self, min_val, max_val) < 0) return NULL;
  LT_CUDA_PW_RETURN(hardtanh, &w, out, self, min_val, max_val, out);
}

lt_tensor *lt_cuda_relu6(lt_tensor *self, lt_tensor *out) {
  LT_CUDA_OPNAME("relu6");
  lt_cuda_pw w;
  if (hardtanh_setup(&w, op, self, lt_scalar_int(0), lt_scalar_int(6)) < 0) return NULL;
  LT_CUDA_PW_RETURN(relu6, &w, out, self, out);
}

lt_tensor *lt_cuda_bitwise_not(lt_tensor *self, lt_tensor *out) {
  LT_CUDA_OPNAME("bitwise_not");
  lt_dtype dt = (lt_dtype)self->dtype;
  if (lt_dtype_is_float(dt))
    return lt_error_null("%s: argument 'self' must be an integer or bool tensor, got %s", op, lt_dtype_name(dt));
  lt_cuda_pw w;
  lt_cuda_pw_init(&w, op, LT_CK_PW_bitwise_not, dt);
  w.in[0] = self;
  LT_CUDA_PW_RETURN(bitwise_not, &w, out, self, out);
}

lt_tensor *lt_cuda_logical_not(lt_tensor *self, lt_tensor *out) {
  LT_CUDA_OPNAME("logical_not");
  lt_cuda_pw w;
  lt_cuda_pw_init(&w, op, LT_CK_PW_logical_not, (lt_dtype)self->dtype);
  w.in[0] = self;
  LT_CUDA_PW_RETURN(logical_not, &w, out, self, out);
}

/* ---- predicates: bool results; non-floating tensors give a constant ---- */

static lt_tensor *predicate(lt_cuda_pw *w, const char *op, int kop, lt_tensor *self, lt_tensor *out, bool int_value) {
  if (!lt_dtype_is_float((lt_dtype)self->dtype)) return bool_constant(op, self, out, int_value);
  lt_cuda_pw_init(w, op, kop, (lt_dtype)self->dtype);
  w->in[0] = self;
  return lt_cuda_pw_run(w, out);
}

#define PREDICATE(NAME, KOP, INT_VALUE) \
  lt_tensor *lt_cuda_##NAME(lt_tensor *self) { \
    lt_cuda_pw w; \
    lt_tensor *r = predicate(&w, #NAME, KOP, self, NULL, INT_VALUE); \
    if (r != LT_CUDA_REFUSED) return r; \
    LT_CUDA_FALLBACK(NAME, #NAME, w.dt, self); \
  }
#define PREDICATE_OUT(NAME, KOP) \
  lt_tensor *lt_cuda_##NAME(lt_tensor *self, lt_tensor *out) { \
    lt_cuda_pw w; \
    lt_tensor *r = predicate(&w, #NAME, KOP, self, out, false); \
    if (r != LT_CUDA_REFUSED) return r; \
    LT_CUDA_FALLBACK(NAME, #NAME, w.dt, self, out); \
  }
PREDICATE(isnan, LT_CK_PW_isnan, false)
PREDICATE(isinf, LT_CK_PW_isinf, false)
PREDICATE(isfinite, LT_CK_PW_isfinite, true)
PREDICATE_OUT(isposinf, LT_CK_PW_isposinf)
PREDICATE_OUT(isneginf, LT_CK_PW_isneginf)

lt_tensor *lt_cuda_signbit(lt_tensor *self, lt_tensor *out) {
  lt_dtype dt = (lt_dtype)self->dtype;
  if (dt == LT_BOOL || dt == LT_UINT8) return bool_constant("signbit", self, out, false);
  lt_cuda_pw w;
  lt_cuda_pw_init(&w, "signbit", LT_CK_PW_signbit, dt);
  w.in[0] = self;
  LT_CUDA_PW_RETURN(signbit, &w, out, self, out);
}
