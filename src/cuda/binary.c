/*
** binary.c — the CUDA kernels of the pointwise ops of two and three inputs:
** arithmetic, division, remainders, pow, the extrema, bits and shifts,
** comparisons and logic, isclose, math.lua's binary ops, where, clamp,
** lerp, addcmul, addcdiv, prelu and _activation_backward; each lt_cuda_NAME
** has its op's kernel type and is named in the op's declaration. In-place
** forms are the generated defaults (a comparison's keeps self's dtype: the
** bool result is copied in).
**
** Each works out the CPU kernel's result dtype (lt_result_type; integer
** inputs of true division and of the math ops give the default dtype, bool
** ones of the integer divisions int64) and its errors, then runs the
** family's kernel (pointwise.h); integer division by zero is the CPU's
** error through the kernel's flag. Nothing here has run on a GPU.
*/
#include <string.h>
#include "core/error.h"
#include "cuda/launch.h"
#include "cuda/pointwise.h"
#include "dispatch/dispatch.h"
#include "meta/meta.h"
#include "kernels_cuda.h"   /* generated: lt_ops.h, the kernel types */

static lt_dtype rtype(int n, lt_tensor *a, lt_tensor *b, lt_tensor *c) {
  lt_tensor *ts[3] = {a, b, c};
  return (lt_dtype)lt_result_type(n, ts);
}

static void setup2(lt_cuda_pw *w, const char *op, int kop, lt_dtype dt, lt_tensor *a, lt_tensor *b) {
  lt_cuda_pw_init(w, op, kop, dt);
  w->in[0] = a;
  w->in[1] = b;
}

/* NAME(self, other, out) in dtype DT after CHECK (which may return an error) */
#define BINARY(NAME, KOP, DT, CHECK) \
  lt_tensor *lt_cuda_##NAME(lt_tensor *self, lt_tensor *other, lt_tensor *out) { \
    LT_CUDA_OPNAME(#NAME); \
    lt_dtype dt = DT; \
    CHECK \
    lt_cuda_pw w; \
    setup2(&w, op, KOP, dt, self, other); \
    LT_CUDA_PW_RETURN(NAME, &w, out, self, other, out); \
  }

/* ---- arithmetic ---- */

#define ADD_SUB(NAME, CHECK) \
  lt_tensor *lt_cuda_##NAME(lt_tensor *self, lt_tensor *other, lt_scalar alpha, lt_tensor *out) { \
    LT_CUDA_OPNAME(#NAME); \
    lt_dtype dt = lt_cuda_rtype2(self, other); \
    CHECK \
    if (lt_meta_check_alpha(op, dt, alpha) < 0) return NULL; \
    lt_cuda_pw w; \
    setup2(&w, op, LT_CK_PW_##NAME, dt, self, other); \
    lt_cuda_pw_param(&w, 0, lt_scalar_is_none(alpha) ? lt_scalar_int(1) : alpha); \
    LT_CUDA_PW_RETURN(NAME, &w, out, self, other, alpha, out); \
  }
ADD_SUB(add, )
ADD_SUB(sub, if (dt == LT_BOOL) return lt_error_null(
  "%s: subtracting bool tensors is not supported; use logical_xor() or the ~ of a mask", op);)

BINARY(mul, LT_CK_PW_mul, lt_cuda_rtype2(self, other), )

/* true division (mode NULL) in a floating dtype, or trunc / floor */
static int div_setup(lt_cuda_pw *w, const char *op, lt_tensor *a, lt_tensor *b, const char *mode) {
  lt_dtype dt = lt_cuda_rtype2(a, b);
  int kop = LT_CK_PW_div;
  if (!mode) dt = lt_cuda_float_type(dt);
  else if (strcmp(mode, "trunc") == 0) kop = LT_CK_PW_div_trunc;
  else if (strcmp(mode, "floor") == 0) kop = LT_CK_PW_div_floor;
  else return lt_error("%s: argument 'rounding_mode' must be nil, \"trunc\" or \"floor\", got \"%s\"", op, mode);
  if (mode && dt == LT_BOOL) dt = LT_INT64;
  setup2(w, op, kop, dt, a, b);
  w->div_check = true;
  return 0;
}

lt_tensor *lt_cuda_div(lt_tensor *self, lt_tensor *other, const char *rounding_mode, lt_tensor *out) {
  LT_CUDA_OPNAME("div");
  lt_cuda_pw w;
  if (div_setup(&w, op, self, other, rounding_mode) < 0) return NULL;
  LT_CUDA_PW_RETURN(div, &w, out, self, other, rounding_mode, out);
}

lt_tensor *lt_cuda_floor_divide(lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  LT_CUDA_OPNAME("floor_divide");
  lt_cuda_pw w;
  if (div_setup(&w, op, self, other, "floor") < 0) return NULL;
  LT_CUDA_PW_RETURN(floor_divide, &w, out, self, other, out);
}

#define REMAINDER(NAME) \
  lt_tensor *lt_cuda_##NAME(lt_tensor *self, lt_tensor *other, lt_tensor *out) { \
    LT_CUDA_OPNAME(#NAME); \
    lt_dtype dt = lt_cuda_rtype2(self, other); \
    lt_cuda_pw w; \
    setup2(&w, op, LT_CK_PW_##NAME, dt == LT_BOOL ? LT_INT64 : dt, self, other); \
    w.div_check = true; \
    LT_CUDA_PW_RETURN(NAME, &w, out, self, other, out); \
  }
REMAINDER(remainder) REMAINDER(fmod)

/* ---- pow: a number exponent maps to the cheaper ops, as on the CPU ---- */

/* element 0 of t as a double, read back from the device when t is there */
static int first_value(lt_tensor *t, double *v) {
  lt_tensor *h = lt_tensor_new(LT_FLOAT64, lt_device_cpu(), t->ndim, t->sizes);
  if (!h) return -1;
  int rc = lt_tensor_copy_(h, t);
  if (rc == 0) *v = *(const double *)lt_tensor_data(h);
  lt_tensor_release(h);
  return rc;
}

lt_tensor *lt_cuda_pow(lt_tensor *self, lt_tensor *exponent, lt_tensor *out) {
  LT_CUDA_OPNAME("pow");
  lt_dtype dt = rtype(2, self, exponent, NULL);
  if (dt == LT_BOOL) dt = LT_INT64;
  lt_cuda_pw w;
  setup2(&w, op, LT_CK_PW_pow, dt, self, exponent);
  if (exponent->numel == 1 && self->numel != 1) {
    double e = 0;
    if (first_value(exponent, &e) < 0) return NULL;
    bool isf = lt_dtype_is_float(dt);
    if (!isf && e < 0)
      return lt_error_null("%s: integers to negative integer powers are not allowed (exponent %g)", op, e);
    int kop = e == 2 ? LT_CK_PW_square : e == 3 ? LT_CK_PW_cube : !isf ? -1 : e == 0.5 ? LT_CK_PW_sqrt
            : e == -0.5 ? LT_CK_PW_rsqrt : e == -1 ? LT_CK_PW_reciprocal : LT_CK_PW_pow_scalar;
    if (kop >= 0) {
      lt_cuda_pw_init(&w, op, kop, dt);
      w.in[0] = self;
      lt_cuda_pw_paramf(&w, 0, e);
    }
  }
  LT_CUDA_PW_RETURN(pow, &w, out, self, exponent, out);
}

/* ---- math of two inputs ---- */

BINARY(atan2, LT_CK_PW_atan2, lt_cuda_float_type(lt_cuda_rtype2(self, other)), )
BINARY(hypot, LT_CK_PW_hypot, lt_cuda_float_type(lt_cuda_rtype2(self, other)), )
BINARY(logaddexp, LT_CK_PW_logaddexp, lt_cuda_float_type(lt_cuda_rtype2(self, other)), )
BINARY(logaddexp2, LT_CK_PW_logaddexp2, lt_cuda_float_type(lt_cuda_rtype2(self, other)), )
BINARY(xlogy, LT_CK_PW_xlogy, lt_cuda_float_type(lt_cuda_rtype2(self, other)), )
BINARY(maximum, LT_CK_PW_maximum, lt_cuda_rtype2(self, other), )
BINARY(minimum, LT_CK_PW_minimum, lt_cuda_rtype2(self, other), )
BINARY(fmax, LT_CK_PW_fmax, lt_cuda_rtype2(self, other), )
BINARY(fmin, LT_CK_PW_fmin, lt_cuda_rtype2(self, other), )
BINARY(nextafter, LT_CK_PW_nextafter, lt_cuda_rtype2(self, other),
  if (!lt_dtype_is_float(dt)) return lt_error_null(
    "%s: arguments 'self' and 'other' must include a floating point tensor, got %s", op, lt_dtype_name(dt));)

/* gcd, lcm: integer tensors only */
#define INTEGER_CHECK \
  if (lt_dtype_is_float(dt) || dt == LT_BOOL) \
    return lt_error_null("%s: argument '%s' must be an integer tensor, got %s", op, \
                         (lt_dtype_is_float((lt_dtype)self->dtype) || self->dtype == LT_BOOL) ? "self" : "other", \
                         lt_dtype_name(dt));
BINARY(gcd, LT_CK_PW_gcd, lt_cuda_rtype2(self, other), INTEGER_CHECK)
BINARY(lcm, LT_CK_PW_lcm, lt_cuda_rtype2(self, other), INTEGER_CHECK)

/* a Lua number takes self's dtype; a tensor must have it */
BINARY(heaviside, LT_CK_PW_heaviside, (lt_dtype)self->dtype,
  if (!other->is_wrapped_number && other->dtype != self->dtype)
    return lt_error_null("%s: argument 'values' must have the dtype of 'self' (%s), got %s", op, lt_dtype_name(dt),
                         lt_dtype_name((lt_dtype)other->dtype));)

/* ---- bits ---- */

static lt_tensor *bits_error(const char *op, lt_tensor *a, lt_tensor *b, lt_dtype dt, bool shift) {
  bool af = lt_dtype_is_float((lt_dtype)a->dtype);
  lt_dtype bad = af ? (lt_dtype)a->dtype : (lt_dtype)b->dtype;
  if (!lt_dtype_is_float(bad)) bad = dt;
  return lt_error_null("%s: argument '%s' must be an integer%s tensor, got %s", op, af ? "self" : "other",
                       shift ? "" : " or bool", lt_dtype_name(bad));
}
#define BITWISE(NAME, KOP, SHIFT) \
  BINARY(NAME, KOP, lt_cuda_rtype2(self, other), \
    if (lt_dtype_is_float(dt) || (SHIFT && dt == LT_BOOL)) return bits_error(op, self, other, dt, SHIFT);)
BITWISE(bitwise_and, LT_CK_PW_bitwise_and, false)
BITWISE(bitwise_or, LT_CK_PW_bitwise_or, false)
BITWISE(bitwise_xor, LT_CK_PW_bitwise_xor, false)
BITWISE(bitwise_left_shift, LT_CK_PW_shift_left, true)
BITWISE(bitwise_right_shift, LT_CK_PW_shift_right, true)

/* ---- comparisons and logic: bool results ---- */

BINARY(eq, LT_CK_PW_eq, lt_cuda_rtype2(self, other), )
BINARY(ne, LT_CK_PW_ne, lt_cuda_rtype2(self, other), )
BINARY(lt, LT_CK_PW_lt, lt_cuda_rtype2(self, other), )
BINARY(le, LT_CK_PW_le, lt_cuda_rtype2(self, other), )
BINARY(gt, LT_CK_PW_gt, lt_cuda_rtype2(self, other), )
BINARY(ge, LT_CK_PW_ge, lt_cuda_rtype2(self, other), )
BINARY(logical_and, LT_CK_PW_logical_and, lt_cuda_rtype2(self, other), )
BINARY(logical_or, LT_CK_PW_logical_or, lt_cuda_rtype2(self, other), )
BINARY(logical_xor, LT_CK_PW_logical_xor, lt_cuda_rtype2(self, other), )

/* isclose under the name op (isclose, allclose); integers compare exactly in
** float64. LT_CUDA_REFUSED when the kernels refuse. */
static lt_tensor *isclose_as(const char *op, lt_tensor *self, lt_tensor *other, double rtol, double atol,
                             bool equal_nan) {
  if (rtol < 0) return lt_error_null("%s: argument 'rtol' must be non-negative, got %g", op, rtol);
  if (atol < 0) return lt_error_null("%s: argument 'atol' must be non-negative, got %g", op, atol);
  lt_dtype dt = rtype(2, self, other, NULL);
  lt_cuda_pw w;
  setup2(&w, op, LT_CK_PW_isclose, lt_dtype_is_float(dt) ? dt : LT_FLOAT64, self, other);
  lt_cuda_pw_paramf(&w, 0, rtol);
  lt_cuda_pw_paramf(&w, 1, atol);
  w.mode = equal_nan;
  return lt_cuda_pw_run(&w, NULL);
}

lt_tensor *lt_cuda_isclose(lt_tensor *self, lt_tensor *other, double rtol, double atol, bool equal_nan) {
  lt_tensor *r = isclose_as("isclose", self, other, rtol, atol, equal_nan);
  if (r != LT_CUDA_REFUSED) return r;
  lt_dtype dt = rtype(2, self, other, NULL);
  LT_CUDA_FALLBACK(isclose, "isclose", dt, self, other, rtol, atol, equal_nan);
}

/* equal and allclose: the bool tensor of the comparison, then all() over it
** on the device (the reduce family's kernel) and one byte read back: 1, 0, or
** -1 with the error set. b is released. */
static int all_true(lt_tensor *b) {
  if (!b) return -1;
  if (b->numel == 0) { lt_tensor_release(b); return 1; }
  lt_tensor *a = lt_all(b, lt_intlist_none(), false);
  lt_tensor_release(b);
  if (!a) return -1;
  lt_scalar v = lt_tensor_item(a);
  lt_tensor_release(a);
  if (v.type == LT_SCALAR_NONE) return -1;
  return (v.type == LT_SCALAR_FLOAT ? v.v.f != 0 : v.v.i != 0) ? 1 : 0;
}

int lt_cuda_allclose(lt_tensor *self, lt_tensor *other, double rtol, double atol, bool equal_nan) {
  lt_tensor *r = isclose_as("allclose", self, other, rtol, atol, equal_nan);
  if (r != LT_CUDA_REFUSED) return all_true(r);
  if (!lt_cuda_host_device_memory())
    return lt_error("allclose: not implemented for these cuda tensors (the CUDA kernels refuse it)");
  lt_cuda_count_fallback();
  return ((lt_allclose_backend_fn)lt_op_table[LT_OP_allclose].kernel[LT_KEY_CPU])(self, other, rtol, atol, equal_nan);
}

int lt_cuda_equal(lt_tensor *self, lt_tensor *other) {
  if (!lt_tensor_same_shape(self, other)) return 0;
  lt_cuda_pw w;
  setup2(&w, "equal", LT_CK_PW_eq, lt_cuda_rtype2(self, other), self, other);
  lt_tensor *r = lt_cuda_pw_run(&w, NULL);
  if (r != LT_CUDA_REFUSED) return all_true(r);
  if (!lt_cuda_host_device_memory())
    return lt_error("equal: not implemented for these cuda tensors (the CUDA kernels refuse it)");
  lt_cuda_count_fallback();
  return ((lt_equal_backend_fn)lt_op_table[LT_OP_equal].kernel[LT_KEY_CPU])(self, other);
}

/* ---- clamp ---- */

static int clamp_dtype(const char *op, lt_dtype dt) {
  return dt == LT_BOOL ? lt_error("%s: not implemented for bool tensors", op) : 0;
}

lt_tensor *lt_cuda_clamp(lt_tensor *self, lt_tensor *min, lt_tensor *max, lt_tensor *out) {
  LT_CUDA_OPNAME("clamp");
  if (!min && !max) return lt_error_null("%s: at least one of 'min' and 'max' must be given", op);
  lt_dtype dt = rtype(3, self, min, max);
  if (clamp_dtype(op, dt) < 0) return NULL;
  lt_cuda_pw w;
  setup2(&w, op, min && max ? LT_CK_PW_clamp : min ? LT_CK_PW_clamp_min : LT_CK_PW_clamp_max, dt, self,
         min ? min : max);
  w.in[2] = max;
  LT_CUDA_PW_RETURN(clamp, &w, out, self, min, max, out);
}

#define CLAMP_ONE(NAME) \
  BINARY(NAME, LT_CK_PW_##NAME, rtype(2, self, other, NULL), if (clamp_dtype(op, dt) < 0) return NULL;)
CLAMP_ONE(clamp_min) CLAMP_ONE(clamp_max)

/* ---- three inputs ---- */

lt_tensor *lt_cuda_where(lt_tensor *condition, lt_tensor *self, lt_tensor *other, lt_tensor *out) {
  const char *op = "where";
  if (condition->dtype != LT_BOOL && condition->dtype != LT_UINT8)
    return lt_error_null("%s: argument 'condition' must be a bool tensor, got %s", op,
                         lt_dtype_name((lt_dtype)condition->dtype));
  lt_cuda_pw w;
  lt_cuda_pw_init(&w, op, LT_CK_PW_where, rtype(2, self, other, NULL));
  w.in[0] = condition;
  w.in[1] = self;
  w.in[2] = other;
  w.in_dt[0] = LT_BOOL;
  LT_CUDA_PW_RETURN(where, &w, out, condition, self, other, out);
}

lt_tensor *lt_cuda_lerp(lt_tensor *self, lt_tensor *end, lt_tensor *weight, lt_tensor *out) {
  LT_CUDA_OPNAME("lerp");
  lt_dtype dt = rtype(3, self, end, weight);
  if (!lt_dtype_is_float(dt))
    return lt_error_null("%s: arguments must be floating point tensors, got %s", op, lt_dtype_name(dt));
  lt_cuda_pw w;
  setup2(&w, op, LT_CK_PW_lerp, dt, self, end);
  w.in[2] = weight;
  LT_CUDA_PW_RETURN(lerp, &w, out, self, end, weight, out);
}

#define ADDC(NAME, CHECK) \
  lt_tensor *lt_cuda_##NAME(lt_tensor *self, lt_tensor *tensor1, lt_tensor *tensor2, lt_scalar value, lt_tensor *out) { \
    LT_CUDA_OPNAME(#NAME); \
    lt_dtype dt = rtype(3, self, tensor1, tensor2); \
    CHECK \
    if (!lt_dtype_is_float(dt) && value.type == LT_SCALAR_FLOAT) \
      return lt_error_null("%s: argument 'value' must be an integer for integral tensors, got %g", op, value.v.f); \
    lt_cuda_pw w; \
    setup2(&w, op, LT_CK_PW_##NAME, dt, self, tensor1); \
    w.in[2] = tensor2; \
    lt_cuda_pw_param(&w, 0, value); \
    LT_CUDA_PW_RETURN(NAME, &w, out, self, tensor1, tensor2, value, out); \
  }
ADDC(addcmul, )
ADDC(addcdiv, if (!lt_dtype_is_float(dt)) return lt_error_null(
  "%s: integer division is not supported (got %s tensors); use floor_divide", op, lt_dtype_name(dt));)

/* ---- activations of two inputs ---- */

/* prelu's weight as a view that broadcasts against self: one slope (0-d), or
** one per channel, dim 2 ([C] -> [C, 1, ...]) */
static lt_tensor *prelu_weight(const char *op, lt_tensor *self, lt_tensor *weight) {
  if (weight->ndim > 1)
    return lt_error_null("%s: argument 'weight' must be 1-D (or 0-D), got %d-D", op, weight->ndim);
  int64_t c = weight->numel, sz[LT_MAX_DIMS] = {0}, st[LT_MAX_DIMS] = {0};
  if (c == 1) return lt_tensor_alias(weight, weight->offset, 0, sz, st);
  int64_t ch = self->ndim >= 2 ? self->sizes[1] : 1;
  if (c != ch)
    return lt_error_null("%s: argument 'weight' has %lld elements, but the input has %lld channels (dim 2)", op,
                         (long long)c, (long long)ch);
  int nd = self->ndim - 1;
  for (int i = 0; i < nd; i++) { sz[i] = 1; st[i] = 0; }
  sz[0] = c;
  st[0] = weight->strides[0];
  return lt_tensor_alias(weight, weight->offset, nd, sz, st);
}

lt_tensor *lt_cuda_prelu(lt_tensor *self, lt_tensor *weight, lt_tensor *out) {
  const char *op = "prelu";
  lt_dtype dt = (lt_dtype)self->dtype;
  if (!lt_dtype_is_float(dt))
    return lt_error_null("%s: argument 'self' must be a floating point tensor, got %s", op, lt_dtype_name(dt));
  if (weight->dtype != self->dtype)
    return lt_error_null("%s: argument 'weight' must have the dtype of self (%s), got %s", op, lt_dtype_name(dt),
                         lt_dtype_name((lt_dtype)weight->dtype));
  lt_tensor *wv = prelu_weight(op, self, weight);
  if (!wv) return NULL;
  lt_cuda_pw w;
  setup2(&w, op, LT_CK_PW_prelu, dt, self, wv);
  lt_tensor *r = lt_cuda_pw_run(&w, out);
  lt_tensor_release(wv);
  if (r != LT_CUDA_REFUSED) return r;
  LT_CUDA_FALLBACK(prelu, op, dt, self, weight, out);
}

/* grad * act'(self); a, b, c the activation's numbers */
lt_tensor *lt_cuda__activation_backward(lt_tensor *grad, lt_tensor *self, const char *act, double a, double b,
                                        double c) {
  static const struct { const char *name; int kop; } acts[] = {
    {"mish", LT_CK_PW_b_mish}, {"hardsigmoid", LT_CK_PW_b_hardsigmoid}, {"hardswish", LT_CK_PW_b_hardswish},
    {"softsign", LT_CK_PW_b_softsign}, {"logsigmoid", LT_CK_PW_b_logsigmoid}, {"threshold", LT_CK_PW_b_threshold},
    {"hardshrink", LT_CK_PW_b_shrink}, {"softshrink", LT_CK_PW_b_shrink}, {"tanhshrink", LT_CK_PW_b_tanhshrink},
    {"elu", LT_CK_PW_b_elu}, {"silu", LT_CK_PW_b_silu}, {"gelu", LT_CK_PW_b_gelu},
    {"gelu_tanh", LT_CK_PW_b_gelu_tanh}, {"softplus", LT_CK_PW_b_softplus},
  };
  const char *op = "_activation_backward";
  int kop = -1;
  for (size_t i = 0; i < sizeof acts / sizeof acts[0] && kop < 0; i++)
    if (strcmp(acts[i].name, act) == 0) kop = acts[i].kop;
  if (kop < 0) return lt_error_null("%s: argument 'act' names no activation: \"%s\"", op, act);
  lt_dtype dt = (lt_dtype)self->dtype;
  if (!lt_dtype_is_float(dt))
    return lt_error_null("%s: argument 'self' must be a floating point tensor, got %s", op, lt_dtype_name(dt));
  lt_cuda_pw w;
  setup2(&w, op, kop, dt, grad, self);
  lt_cuda_pw_paramf(&w, 0, a);
  lt_cuda_pw_paramf(&w, 1, b);
  lt_cuda_pw_paramf(&w, 2, c);
  LT_CUDA_PW_RETURN(_activation_backward, &w, NULL, grad, self, act, a, b, c);
}
