/*
** swish.c — a complete lutorch C extension: the fused op swish(x) = x * sigmoid(x)
** with a fused backward, a fake (shape) function and a CPU kernel, declared with
** one schema string. Build: make (see the Makefile); use: require "swish_ext",
** then torch.ops.swish_ext.swish(x). man/extension.md walks through this file.
*/
#include <math.h>
#include <lutorch/extension.h>

/* the input as a contiguous float32/float64 tensor (a new reference), or NULL */
static lt_tensor *float_input(lt_tensor *x, const char *op) {
  lt_dtype dt = lt_tensor_dtype(x);
  if (dt != LT_FLOAT32 && dt != LT_FLOAT64)
    return lt_error_null("%s: expected a float32 or float64 tensor, got %s", op, lt_dtype_name(dt));
  if (lt_tensor_device(x).type != LT_DEV_CPU) return lt_error_null("%s: the cpu kernel got a tensor on another device", op);
  return lt_tensor_contiguous(x);
}

/* forward: one pass over x, one allocation (the unfused x * sigmoid(x) makes two) */
static int swish_cpu(const lt_ivalue *args, lt_ivalue *rets) {
  lt_tensor *x = float_input(lt_ext_tensor(args, 0), "swish_ext::swish");
  if (!x) return -1;
  lt_tensor *y = lt_tensor_new(lt_tensor_dtype(x), lt_device_cpu(), x->ndim, x->sizes);
  if (!y) { lt_tensor_release(x); return -1; }
  int64_t n = x->numel;
  if (lt_tensor_dtype(x) == LT_FLOAT32) {
    const float *a = lt_tensor_data(x);
    float *b = lt_tensor_data(y);
    for (int64_t i = 0; i < n; i++) b[i] = a[i] / (1.0f + expf(-a[i]));
  } else {
    const double *a = lt_tensor_data(x);
    double *b = lt_tensor_data(y);
    for (int64_t i = 0; i < n; i++) b[i] = a[i] / (1.0 + exp(-a[i]));
  }
  lt_tensor_release(x);
  return lt_ext_return(rets, 0, y);
}

/* the fake kernel: the result's shape and dtype, without computing it */
static int swish_fake(const lt_ivalue *args, lt_ivalue *rets) {
  lt_tensor *x = lt_ext_tensor(args, 0);
  return lt_ext_return(rets, 0, lt_tensor_new(lt_tensor_dtype(x), lt_tensor_device(x), x->ndim, x->sizes));
}

/* the derivative: d/dx x*s(x) = s + x*s*(1-s) = s * (1 + x * (1 - s)); setup saves x */
static int swish_setup(lt_autograd_ctx *ctx, const lt_ivalue *args, const lt_ivalue *rets) {
  (void)rets;
  return lt_ctx_save(ctx, lt_ext_tensor(args, 0));
}

static int swish_backward(lt_autograd_ctx *ctx, lt_tensor *const *grad_outputs, lt_tensor **grad_inputs) {
  if (!ctx->needs_input_grad[0]) return 0;
  lt_tensor *saved = lt_ctx_saved(ctx, 0);
  if (!saved) return -1;
  lt_tensor *x = float_input(saved, "swish_ext::swish backward");
  lt_tensor_release(saved);
  if (!x) return -1;
  /* the incoming gradient in x's dtype and layout */
  lt_tensor *g = lt_to(grad_outputs[0], lt_tensor_dtype(x), false);
  lt_tensor *gcont = g ? lt_tensor_contiguous(g) : NULL;
  lt_tensor_release(g);
  lt_tensor *gx = gcont ? lt_tensor_new(lt_tensor_dtype(x), lt_device_cpu(), x->ndim, x->sizes) : NULL;
  if (!gx) { lt_tensor_release(gcont); lt_tensor_release(x); return -1; }
  int64_t n = x->numel;
  if (lt_tensor_dtype(x) == LT_FLOAT32) {
    const float *a = lt_tensor_data(x), *go = lt_tensor_data(gcont);
    float *r = lt_tensor_data(gx);
    for (int64_t i = 0; i < n; i++) { float s = 1.0f / (1.0f + expf(-a[i])); r[i] = go[i] * s * (1.0f + a[i] * (1.0f - s)); }
  } else {
    const double *a = lt_tensor_data(x), *go = lt_tensor_data(gcont);
    double *r = lt_tensor_data(gx);
    for (int64_t i = 0; i < n; i++) { double s = 1.0 / (1.0 + exp(-a[i])); r[i] = go[i] * s * (1.0 + a[i] * (1.0 - s)); }
  }
  lt_tensor_release(gcont);
  lt_tensor_release(x);
  grad_inputs[0] = gx;
  return 0;
}

/* require "swish_ext" runs this once per Lua state (a second definition with the same
** schema is the first one, so several states in one process share the op) */
LT_EXTENSION(swish_ext) {
  if (lt_ext_define("swish_ext::swish(Tensor x) -> Tensor", "x * sigmoid(x), fused, with a fused backward") < 0) return -1;
  if (lt_ext_impl("swish_ext::swish", "cpu", swish_cpu) < 0) return -1;
  if (lt_ext_register_fake("swish_ext::swish", swish_fake) < 0) return -1;
  return lt_ext_register_autograd("swish_ext::swish", swish_setup, swish_backward);
}
