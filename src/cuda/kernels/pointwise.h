/*
** pointwise.h — the pointwise kernel family as C entry points: every unary,
** binary and ternary elementwise op of the CUDA backend (math, rounding,
** predicates, comparisons, logic and bits, activations and their fused
** backward, where, clamp, lerp, addcmul, addcdiv) behind one entry that takes
** an op code and a call record.
**
** The ops are listed once below, in X-macro tables by the .cu file that holds
** their functors: X(name, inputs, dtypes, bool_out). `dtypes` is the mask of
** the input dtypes the kernel is built for (LT_CK_PW_F floating, _I integer,
** _B bool); `bool_out` 1 when the result is bool (predicates, comparisons),
** else the result has the inputs' dtype. The kernels instantiate exactly the
** masked dtypes and answer LT_CK_EUNSUPPORTED for the others; the backend
** (src/cuda/unary.c, ...) reads the same masks, so what it launches always
** has a kernel. What each op computes, with its numbers p[] and mode, is
** said where its functor is (unary.cu, special.cu, activation.cu, binary.cu,
** compare.cu, ternary.cu); the semantics are the CPU backend's.
**
** Built twice like the rest of src/cuda/kernels (kernels.h): lt_ck_pointwise
** by nvcc, lt_ck_host_pointwise by the host compiler for the fake driver.
** Nothing in the device build has run on a GPU.
*/
#ifndef LT_CUDA_KERNELS_POINTWISE_H
#define LT_CUDA_KERNELS_POINTWISE_H
#include <stdint.h>
#include "cuda/kernels/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dtype masks: bit LT_CK_<dtype> */
#define LT_CK_PW_F 0x00fu          /* float64, float32, float16, bfloat16 */
#define LT_CK_PW_F64_32 0x003u     /* float64, float32 */
#define LT_CK_PW_I 0x1f0u          /* int64 ... uint8 */
#define LT_CK_PW_B 0x200u          /* bool */
#define LT_CK_PW_FI (LT_CK_PW_F | LT_CK_PW_I)
#define LT_CK_PW_IB (LT_CK_PW_I | LT_CK_PW_B)
#define LT_CK_PW_ALL (LT_CK_PW_FI | LT_CK_PW_B)

/* unary.cu: math, rounding, predicates and bits of one input */
#define LT_CK_PW_UNARY(X) \
  X(neg, 1, LT_CK_PW_FI, 0) X(abs, 1, LT_CK_PW_ALL, 0) X(exp, 1, LT_CK_PW_F, 0) \
  X(relu, 1, LT_CK_PW_FI, 0) X(sigmoid, 1, LT_CK_PW_F, 0) X(tanh, 1, LT_CK_PW_F, 0) \
  X(sqrt, 1, LT_CK_PW_F, 0) X(rsqrt, 1, LT_CK_PW_F, 0) X(exp2, 1, LT_CK_PW_F, 0) \
  X(expm1, 1, LT_CK_PW_F, 0) X(log, 1, LT_CK_PW_F, 0) X(log2, 1, LT_CK_PW_F, 0) \
  X(log10, 1, LT_CK_PW_F, 0) X(log1p, 1, LT_CK_PW_F, 0) X(sin, 1, LT_CK_PW_F, 0) \
  X(cos, 1, LT_CK_PW_F, 0) X(tan, 1, LT_CK_PW_F, 0) X(asin, 1, LT_CK_PW_F, 0) \
  X(acos, 1, LT_CK_PW_F, 0) X(atan, 1, LT_CK_PW_F, 0) X(sinh, 1, LT_CK_PW_F, 0) \
  X(cosh, 1, LT_CK_PW_F, 0) X(erf, 1, LT_CK_PW_F, 0) X(erfc, 1, LT_CK_PW_F, 0) \
  X(reciprocal, 1, LT_CK_PW_F, 0) X(floor, 1, LT_CK_PW_F, 0) X(ceil, 1, LT_CK_PW_F, 0) \
  X(trunc, 1, LT_CK_PW_F, 0) X(round, 1, LT_CK_PW_F, 0) X(frac, 1, LT_CK_PW_F, 0) \
  X(round_dec, 1, LT_CK_PW_F, 0) X(logit, 1, LT_CK_PW_F, 0) X(nan_to_num, 1, LT_CK_PW_F, 0) \
  X(sign, 1, LT_CK_PW_FI, 0) X(square, 1, LT_CK_PW_FI, 0) X(cube, 1, LT_CK_PW_FI, 0) \
  X(pow_scalar, 1, LT_CK_PW_F, 0) X(hardtanh, 1, LT_CK_PW_FI, 0) X(bitwise_not, 1, LT_CK_PW_IB, 0) \
  X(logical_not, 1, LT_CK_PW_ALL, 1) X(isnan, 1, LT_CK_PW_F, 1) X(isinf, 1, LT_CK_PW_F, 1) \
  X(isfinite, 1, LT_CK_PW_F, 1) X(isposinf, 1, LT_CK_PW_F, 1) X(isneginf, 1, LT_CK_PW_F, 1) \
  X(signbit, 1, LT_CK_PW_FI, 1) X(asinh, 1, LT_CK_PW_F, 0) X(acosh, 1, LT_CK_PW_F, 0) \
  X(atanh, 1, LT_CK_PW_F, 0)

/* special.cu: special functions, computed in double (meta/special_math.h) */
#define LT_CK_PW_SPECIAL(X) \
  X(erfinv, 1, LT_CK_PW_F, 0) X(lgamma, 1, LT_CK_PW_F, 0) X(digamma, 1, LT_CK_PW_F, 0) \
  X(polygamma, 1, LT_CK_PW_F, 0) X(i0, 1, LT_CK_PW_F, 0) X(i1, 1, LT_CK_PW_F, 0) \
  X(sinc, 1, LT_CK_PW_F, 0) X(erfcx, 1, LT_CK_PW_F, 0) X(i0e, 1, LT_CK_PW_F, 0) X(i1e, 1, LT_CK_PW_F, 0) \
  X(ndtr, 1, LT_CK_PW_F, 0) X(ndtri, 1, LT_CK_PW_F, 0) X(log_ndtr, 1, LT_CK_PW_F, 0) \
  X(entr, 1, LT_CK_PW_F, 0) X(bessel_j0, 1, LT_CK_PW_F, 0) X(bessel_j1, 1, LT_CK_PW_F, 0) \
  X(bessel_y0, 1, LT_CK_PW_F, 0) X(bessel_y1, 1, LT_CK_PW_F, 0) X(xlog1py, 2, LT_CK_PW_F, 0) \
  X(zeta, 2, LT_CK_PW_F, 0) X(k0, 1, LT_CK_PW_F, 0) X(k1, 1, LT_CK_PW_F, 0) X(k0e, 1, LT_CK_PW_F, 0) \
  X(k1e, 1, LT_CK_PW_F, 0) X(igamma, 2, LT_CK_PW_F, 0) X(igammac, 2, LT_CK_PW_F, 0)

/* activation.cu: activations (one input) and their fused backward (grad, input) */
#define LT_CK_PW_ACT(X) \
  X(silu, 1, LT_CK_PW_F, 0) X(gelu, 1, LT_CK_PW_F, 0) X(gelu_tanh, 1, LT_CK_PW_F, 0) \
  X(softplus, 1, LT_CK_PW_F, 0) X(elu, 1, LT_CK_PW_F, 0) X(leaky_relu, 1, LT_CK_PW_F, 0) \
  X(mish, 1, LT_CK_PW_F, 0) X(hardsigmoid, 1, LT_CK_PW_F, 0) X(hardswish, 1, LT_CK_PW_F, 0) \
  X(softsign, 1, LT_CK_PW_F, 0) X(logsigmoid, 1, LT_CK_PW_F, 0) X(tanhshrink, 1, LT_CK_PW_F, 0) \
  X(threshold, 1, LT_CK_PW_FI, 0) X(hardshrink, 1, LT_CK_PW_F, 0) X(softshrink, 1, LT_CK_PW_F, 0) \
  X(prelu, 2, LT_CK_PW_F, 0) \
  X(b_mish, 2, LT_CK_PW_F, 0) X(b_hardsigmoid, 2, LT_CK_PW_F, 0) X(b_hardswish, 2, LT_CK_PW_F, 0) \
  X(b_softsign, 2, LT_CK_PW_F, 0) X(b_logsigmoid, 2, LT_CK_PW_F, 0) X(b_threshold, 2, LT_CK_PW_F, 0) \
  X(b_shrink, 2, LT_CK_PW_F, 0) X(b_tanhshrink, 2, LT_CK_PW_F, 0) X(b_elu, 2, LT_CK_PW_F, 0) \
  X(b_silu, 2, LT_CK_PW_F, 0) X(b_gelu, 2, LT_CK_PW_F, 0) X(b_gelu_tanh, 2, LT_CK_PW_F, 0) \
  X(b_softplus, 2, LT_CK_PW_F, 0)

/* binary.cu: arithmetic, division and remainders, powers, extrema, bits */
#define LT_CK_PW_BINARY(X) \
  X(add, 2, LT_CK_PW_ALL, 0) X(sub, 2, LT_CK_PW_FI, 0) X(mul, 2, LT_CK_PW_ALL, 0) \
  X(div, 2, LT_CK_PW_F, 0) X(div_trunc, 2, LT_CK_PW_FI, 0) X(div_floor, 2, LT_CK_PW_FI, 0) \
  X(remainder, 2, LT_CK_PW_FI, 0) X(fmod, 2, LT_CK_PW_FI, 0) X(pow, 2, LT_CK_PW_FI, 0) \
  X(atan2, 2, LT_CK_PW_F, 0) X(hypot, 2, LT_CK_PW_F, 0) X(maximum, 2, LT_CK_PW_ALL, 0) \
  X(minimum, 2, LT_CK_PW_ALL, 0) X(fmax, 2, LT_CK_PW_ALL, 0) X(fmin, 2, LT_CK_PW_ALL, 0) \
  X(logaddexp, 2, LT_CK_PW_F, 0) X(logaddexp2, 2, LT_CK_PW_F, 0) X(xlogy, 2, LT_CK_PW_F, 0) \
  X(nextafter, 2, LT_CK_PW_F64_32, 0) X(gcd, 2, LT_CK_PW_I, 0) X(lcm, 2, LT_CK_PW_I, 0) \
  X(heaviside, 2, LT_CK_PW_ALL, 0) X(bitwise_and, 2, LT_CK_PW_IB, 0) X(bitwise_or, 2, LT_CK_PW_IB, 0) \
  X(bitwise_xor, 2, LT_CK_PW_IB, 0) X(shift_left, 2, LT_CK_PW_I, 0) X(shift_right, 2, LT_CK_PW_I, 0) \
  X(clamp_min, 2, LT_CK_PW_FI, 0) X(clamp_max, 2, LT_CK_PW_FI, 0)

/* compare.cu: comparisons and logic, bool results */
#define LT_CK_PW_COMPARE(X) \
  X(eq, 2, LT_CK_PW_ALL, 1) X(ne, 2, LT_CK_PW_ALL, 1) X(lt, 2, LT_CK_PW_ALL, 1) \
  X(le, 2, LT_CK_PW_ALL, 1) X(gt, 2, LT_CK_PW_ALL, 1) X(ge, 2, LT_CK_PW_ALL, 1) \
  X(logical_and, 2, LT_CK_PW_ALL, 1) X(logical_or, 2, LT_CK_PW_ALL, 1) \
  X(logical_xor, 2, LT_CK_PW_ALL, 1) X(isclose, 2, LT_CK_PW_F, 1)

/* ternary.cu: three inputs (where's first is a bool condition) */
#define LT_CK_PW_TERNARY(X) \
  X(where, 3, LT_CK_PW_ALL, 0) X(clamp, 3, LT_CK_PW_FI, 0) X(lerp, 3, LT_CK_PW_F, 0) \
  X(addcmul, 3, LT_CK_PW_FI, 0) X(addcdiv, 3, LT_CK_PW_F, 0)

#define LT_CK_PW_ALL_OPS(X) \
  LT_CK_PW_UNARY(X) LT_CK_PW_SPECIAL(X) LT_CK_PW_ACT(X) LT_CK_PW_BINARY(X) LT_CK_PW_COMPARE(X) \
  LT_CK_PW_TERNARY(X)

typedef enum lt_ck_pw_op {
#define LT_CK_PW_ENUM_(name, nin, mask, bout) LT_CK_PW_##name,
  LT_CK_PW_ALL_OPS(LT_CK_PW_ENUM_)
#undef LT_CK_PW_ENUM_
  LT_CK_PW_NUM_OPS
} lt_ck_pw_op;

/* a number given by value for an input (one element of the input's dtype) */
typedef union lt_ck_pw_number { double f; int64_t i; unsigned char bytes[16]; } lt_ck_pw_number;

/* One launch: out[i] = op(in[0][i], ...) over the geometry (row 0 out, rows
** 1 .. nin the inputs). Inputs are of `dtype` (where's condition: bool); an
** input whose pointer is NULL is the number num[k]. p[] and mode are the op's
** numbers (floating compute types read .f, the others .i). err, when not NULL,
** is a device int the integer division ops set to 1 on a zero divisor (the
** caller reads it back and raises, as the CPU does). */
typedef struct lt_ck_pw_call {
  int op;
  int dtype;
  void *out;
  const void *in[3];
  lt_ck_pw_number num[3];
  lt_ck_scalar p[3];
  int mode;
  int *err;
} lt_ck_pw_call;

typedef int (*lt_ck_pw_fn)(const lt_ck_pw_call *c, const lt_ck_geom *g, void *stream);

/* one build's entry, for a backend that picks a build at run time */
typedef struct lt_ck_pw_kernels {
  const char *name;             /* "sm_90" or "host" */
  lt_ck_pw_fn run;
} lt_ck_pw_kernels;

int lt_ck_pointwise(const lt_ck_pw_call *c, const lt_ck_geom *g, void *stream);
const lt_ck_pw_kernels *lt_ck_pw_device_kernels(void);
int lt_ck_host_pointwise(const lt_ck_pw_call *c, const lt_ck_geom *g, void *stream);
const lt_ck_pw_kernels *lt_ck_host_pw_kernels(void);

#ifdef __cplusplus
}
#endif
#endif
