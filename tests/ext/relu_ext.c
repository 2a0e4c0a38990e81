/*
** relu_ext.c — a built-in op re-declared through the C extension API, for
** tests/sh/test_extension.sh: relu's own declaration in src/ops/elementwise.lua is
**   { "relu(Tensor self) -> Tensor", derivatives = { self = "lt_ew_grad_relu(grad, result)" } }
** with the CPU kernel lt_cpu_relu; here the same schema, a CPU kernel, the same
** derivative (grad where the result is positive, from the saved result) and a shape
** function become builtin_ext::relu, which the test compares with torch.relu.
*/
#include <lutorch/extension.h>

#define RELU_LOOP(T, x, y, n) do { \
    const T *a = lt_tensor_data(x); T *b = lt_tensor_data(y); \
    for (int64_t i = 0; i < (n); i++) b[i] = a[i] > 0 ? a[i] : 0; \
  } while (0)

static int relu_cpu(const lt_ivalue *args, lt_ivalue *rets) {
  lt_tensor *self = lt_ext_tensor(args, 0);
  lt_dtype dt = lt_tensor_dtype(self);
  if (dt != LT_FLOAT32 && dt != LT_FLOAT64) {
    lt_error("builtin_ext::relu: expected float32 or float64, got %s", lt_dtype_name(dt));
    return -1;
  }
  lt_tensor *x = lt_tensor_contiguous(self);
  lt_tensor *y = x ? lt_tensor_new(dt, lt_device_cpu(), x->ndim, x->sizes) : NULL;
  if (!y) { lt_tensor_release(x); return -1; }
  if (dt == LT_FLOAT32) RELU_LOOP(float, x, y, x->numel);
  else RELU_LOOP(double, x, y, x->numel);
  lt_tensor_release(x);
  return lt_ext_return(rets, 0, y);
}

static int relu_meta(const lt_ivalue *args, lt_ivalue *rets) {
  lt_tensor *self = lt_ext_tensor(args, 0);
  return lt_ext_return(rets, 0, lt_tensor_new(lt_tensor_dtype(self), lt_tensor_device(self), self->ndim, self->sizes));
}

/* derivatives = { self = "grad where result > 0" }: the result is saved, as the built-in saves it */
static int relu_setup(lt_autograd_ctx *ctx, const lt_ivalue *args, const lt_ivalue *rets) {
  (void)args;
  return lt_ctx_save(ctx, rets[0].u.t);
}

/* written with entry points (lt_gt, lt_mul), so it is differentiable itself */
static int relu_backward(lt_autograd_ctx *ctx, lt_tensor *const *grad_outputs, lt_tensor **grad_inputs) {
  lt_tensor *result = lt_ctx_saved(ctx, 0);
  if (!result) return -1;
  lt_tensor *zero = lt_tensor_wrapped_number(lt_scalar_int(0));
  lt_tensor *mask = zero ? lt_gt(result, zero) : NULL;
  grad_inputs[0] = mask ? lt_mul(grad_outputs[0], mask) : NULL;
  lt_tensor_release(mask);
  lt_tensor_release(zero);
  lt_tensor_release(result);
  return grad_inputs[0] ? 0 : -1;
}

LT_EXTENSION(builtin_ext) {
  if (lt_ext_define("builtin_ext::relu(Tensor self) -> Tensor", "max(self, 0), as the built-in relu") < 0) return -1;
  if (lt_ext_impl("builtin_ext::relu", "cpu", relu_cpu) < 0) return -1;
  if (lt_ext_register_fake("builtin_ext::relu", relu_meta) < 0) return -1;
  return lt_ext_register_autograd("builtin_ext::relu", relu_setup, relu_backward);
}
