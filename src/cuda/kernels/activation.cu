/*
** activation.cu — the activations of the pointwise family (pointwise.h,
** LT_CK_PW_ACT) and their fused backward, b_NAME(grad, input) = grad *
** NAME'(input), the kernels of _activation_backward. The CPU backend's
** expressions in the compute type; the call's numbers:
**   softplus, b_softplus    p0 beta, p1 threshold
**   elu, b_elu              p0 alpha, p1 scale, p2 input_scale
**   leaky_relu              p0 negative_slope
**   threshold               p0 threshold, p1 value (integer tensors: floor of
**                           the threshold); b_threshold p0 threshold
**   hardshrink, softshrink, b_shrink   p0 lambd
** prelu(x, w) takes the weight broadcast to x as its second input.
*/
#include "cuda/kernels/pw.h"

namespace CK_NS {

#define PW_ACT(name, expr) \
  template<class C> struct pw_##name { PW_PARAMS; PW_FN C operator()(C x) const { return expr; } };
/* x the gradient, y the activation's input */
#define PW_BWD(name, expr) \
  template<class C> struct pw_##name { PW_PARAMS; PW_FN C operator()(C x, C y) const { return expr; } };
#define K(v) ((C)(v))

template<class C> PW_FN C pw_sig(C v) { return K(1) / (K(1) + ck_exp(-v)); }
/* mish through n = exp(x): tanh(log1p(n)) = n (n + 2) / (n (n + 2) + 2) */
template<class C> PW_FN C pw_mish_m(C x) { C n = ck_exp(x); return n * (n + K(2)); }

PW_ACT(silu, x / (K(1) + ck_exp(-x)))
PW_ACT(gelu, K(0.5) * x * (K(1) + ck_erf(x * K(0.70710678118654752440))))
PW_ACT(gelu_tanh, K(0.5) * x * (K(1) + ck_tanh(K(0.79788456080286535588) * (x + K(0.044715) * x * x * x))))
PW_ACT(softplus, (x * p0 > p1) ? x : ck_log1p(ck_exp(x * p0)) / p0)
PW_ACT(elu, x > K(0) ? p1 * x : p1 * p0 * (ck_exp(x * p2) - K(1)))
PW_ACT(leaky_relu, x > K(0) ? x : x * p0)
PW_ACT(mish, x > K(20) ? x : x * pw_mish_m(x) / (pw_mish_m(x) + K(2)))
PW_ACT(hardsigmoid, x <= K(-3) ? K(0) : x >= K(3) ? K(1) : x * K(1.0 / 6) + K(0.5))
PW_ACT(hardswish, x <= K(-3) ? K(0) : x >= K(3) ? x : x * (x + K(3)) * K(1.0 / 6))
PW_ACT(softsign, x / (K(1) + ck_fabs(x)))
PW_ACT(logsigmoid, (x < K(0) ? x : K(0)) - ck_log1p(ck_exp(-ck_fabs(x))))
PW_ACT(tanhshrink, x - ck_tanh(x))
PW_ACT(threshold, x > p0 ? x : p1)
PW_ACT(hardshrink, (x >= -p0 && x <= p0) ? K(0) : x)
PW_ACT(softshrink, x > p0 ? x - p0 : x < -p0 ? x + p0 : K(0))
PW_BWD(prelu, x > K(0) ? x : y * x)

template<class C> struct pw_b_mish {
  PW_PARAMS;
  PW_FN C operator()(C x, C y) const {
    C n = ck_exp(y), m = n * (n + K(2)), t = m / (m + K(2));
    return y > K(20) ? x : x * (t + y * (n / (n + K(1))) * (K(1) - t * t));
  }
};
PW_BWD(b_hardsigmoid, (y > K(-3) && y < K(3)) ? x * K(1.0 / 6) : K(0))
PW_BWD(b_hardswish, y < K(-3) ? K(0) : y <= K(3) ? x * (y * K(1.0 / 3) + K(0.5)) : x)
PW_BWD(b_softsign, x / ((K(1) + ck_fabs(y)) * (K(1) + ck_fabs(y))))
PW_BWD(b_logsigmoid, x / (K(1) + ck_exp(y)))
PW_BWD(b_threshold, y > p0 ? x : K(0))
PW_BWD(b_shrink, (y >= -p0 && y <= p0) ? K(0) : x)
PW_BWD(b_tanhshrink, x * ck_tanh(y) * ck_tanh(y))
PW_BWD(b_elu, y > K(0) ? x * p1 : x * p1 * p0 * p2 * ck_exp(y * p2))
PW_BWD(b_silu, x * pw_sig(y) * (K(1) + y * (K(1) - pw_sig(y))))
PW_BWD(b_gelu, x * (K(0.5) * (K(1) + ck_erf(y * K(0.70710678118654752440)))
                    + y * K(0.39894228040143267794) * ck_exp(K(-0.5) * y * y)))
template<class C> struct pw_b_gelu_tanh {
  PW_PARAMS;
  PW_FN C operator()(C x, C y) const {
    C y2 = y * y, t = ck_tanh(K(0.79788456080286535588) * y * (K(1) + K(0.044715) * y2));
    return x * (K(0.5) * (K(1) + t) + K(0.5) * y * (K(1) - t * t) * K(0.79788456080286535588)
                * (K(1) + K(3 * 0.044715) * y2));
  }
};
PW_BWD(b_softplus, y * p0 > p1 ? x : x * pw_sig(y * p0))

int pw_run_act(const lt_ck_pw_call *c, const lt_ck_geom *g, void *stream) {
  switch (c->op) {
    LT_CK_PW_ACT(PW_CASE)
    default: return LT_CK_EINVAL;
  }
}

} /* namespace CK_NS */
