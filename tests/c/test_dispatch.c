/*
** test_dispatch.c — the dispatcher: kernel selection by keyset, fallthrough,
** wrapper keys receiving the keyset below them, thread-local exclusion, the
** profiling hook, the missing-kernel error, backends registering their
** kernel tables, and copy_ dispatching across devices.
*/
#include <string.h>
#include "ctest.h"
#include "lt_ops.h"

static int backend_calls, wrapper_calls;
static lt_keyset wrapper_saw;

static lt_tensor *fake_neg(lt_tensor *self, lt_tensor *out) {
  backend_calls++;
  lt_tensor_retain(self);
  return self;
}

static lt_tensor *fake_autograd_neg(lt_keyset ks, lt_tensor *self, lt_tensor *out) {
  wrapper_calls++;
  wrapper_saw = ks;
  return lt_neg_redispatch(ks, self, out);
}

static int hook_enter, hook_exit, hook_last_op;
static int hook_inputs = -1;
static void hook(void *ud, int op, int phase, const lt_tensor *const *in, int n) {
  (void)ud; (void)in;
  if (phase == 0) { hook_enter++; hook_inputs = n; } else hook_exit++;
  hook_last_op = op;
}

TEST(select_and_fallthrough) {
  void *saved_cpu = lt_op_table[LT_OP_neg].kernel[LT_KEY_CPU];
  lt_dispatch_register(LT_OP_neg, LT_KEY_CPU, (void *)fake_neg);
  int64_t n = 3;
  lt_tensor *t = lt_tensor_new_zeros(LT_FLOAT32, lt_device_cpu(), 1, &n);
  CHECK(t->keys & LT_KEYBIT(LT_KEY_AUTOGRAD));
  /* no Autograd kernel: the key falls through to CPU */
  lt_tensor *r = lt_neg(t);
  CHECK(r == t);
  CHECK_EQ_INT(backend_calls, 1);
  lt_tensor_release(r);
  /* a wrapper kernel runs first and sees only the keys below itself */
  lt_dispatch_register(LT_OP_neg, LT_KEY_AUTOGRAD, (void *)fake_autograd_neg);
  r = lt_neg(t);
  CHECK_EQ_INT(wrapper_calls, 1);
  CHECK_EQ_INT(backend_calls, 2);
  CHECK(!(wrapper_saw & LT_KEYBIT(LT_KEY_AUTOGRAD)) && (wrapper_saw & LT_KEYBIT(LT_KEY_CPU)));
  lt_tensor_release(r);
  /* excluded thread-locally: skipped */
  lt_tls_excluded |= LT_KEYBIT(LT_KEY_AUTOGRAD);
  r = lt_neg(t);
  lt_tls_excluded &= ~LT_KEYBIT(LT_KEY_AUTOGRAD);
  CHECK_EQ_INT(wrapper_calls, 1);
  CHECK_EQ_INT(backend_calls, 3);
  lt_tensor_release(r);
  /* the profiling hook observes calls through the Profile key */
  lt_dispatch_set_hook(hook, NULL);
  r = lt_neg(t);
  lt_dispatch_set_hook(NULL, NULL);
  CHECK_EQ_INT(hook_enter, 1);
  CHECK_EQ_INT(hook_exit, 1);
  CHECK_EQ_INT(hook_last_op, LT_OP_neg);
  CHECK_EQ_INT(hook_inputs, 1);     /* neg's one tensor argument, for record_shapes */
  lt_tensor_release(r);
  lt_dispatch_register(LT_OP_neg, LT_KEY_AUTOGRAD, NULL);
  /* no kernel at all */
  lt_dispatch_register(LT_OP_neg, LT_KEY_CPU, NULL);
  r = lt_neg(t);
  CHECK(r == NULL);
  CHECK(strstr(lt_error_message(), "neg: not implemented for cpu") != NULL);
  lt_dispatch_register(LT_OP_neg, LT_KEY_CPU, saved_cpu);
  /* in-place entry points bump the version counter */
  unsigned v0 = atomic_load(&t->storage->version);
  lt_dispatch_register(LT_OP_neg_, LT_KEY_CPU, (void *)fake_neg);
  r = lt_neg_(t);
  CHECK_EQ_INT(atomic_load(&t->storage->version), v0 + 1);
  lt_tensor_release(r);
  lt_tensor_release(t);
  CHECK_EQ_INT(lt_dispatch_find("neg"), LT_OP_neg);
  CHECK_EQ_INT(lt_dispatch_find("no_such_op"), -1);
}

TEST(backend_tables) {
  /* the CPU backend's table is in: own kernels, default in-place ones, device-neutral ones */
  CHECK(lt_op_table[LT_OP_add].kernel[LT_KEY_CPU] != NULL);
  CHECK(lt_op_table[LT_OP_add_].kernel[LT_KEY_CPU] != NULL);
  CHECK(lt_op_table[LT_OP_view].kernel[LT_KEY_CPU] != NULL);
  CHECK(lt_op_table[LT_OP_copy_].kernel[LT_KEY_CPU] != NULL);
  CHECK(lt_op_table[LT_OP_cat].kernel[LT_KEY_CPU] == NULL);   /* composite */
  CHECK(lt_op_table[LT_OP_add].kernel[LT_KEY_CUDA] == NULL);  /* nothing registered it */
  /* a table's NULL entries leave the kernels as they are */
  static void *table[LT_NUM_OPS];
  void *saved_neg = lt_op_table[LT_OP_neg].kernel[LT_KEY_CPU];
  void *saved_add = lt_op_table[LT_OP_add].kernel[LT_KEY_CPU];
  table[LT_OP_neg] = (void *)fake_neg;
  CHECK_EQ_INT(lt_dispatch_register_backend(LT_KEY_CPU, table), 0);
  CHECK(lt_op_table[LT_OP_neg].kernel[LT_KEY_CPU] == (void *)fake_neg);
  CHECK(lt_op_table[LT_OP_add].kernel[LT_KEY_CPU] == saved_add);
  lt_dispatch_register(LT_OP_neg, LT_KEY_CPU, saved_neg);
  /* only backend keys take a table */
  CHECK_EQ_INT(lt_dispatch_register_backend(LT_KEY_AUTOGRAD, table), -1);
  CHECK(strstr(lt_error_message(), "not a backend's key") != NULL);
  CHECK_EQ_INT(lt_dispatch_register_backend((lt_dispatch_key)-1, table), -1);
  CHECK_EQ_INT(lt_dispatch_register_backend(LT_KEY_CPU, NULL), -1);
  /* lt_device_keys: an absent device is the CPU's */
  lt_device none = {-1, -1}, cpu = {LT_DEV_CPU, 0}, cuda = {LT_DEV_CUDA, 0};
  CHECK(lt_device_keys(none) == LT_KEYBIT(LT_KEY_CPU));
  CHECK(lt_device_keys(cpu) == LT_KEYBIT(LT_KEY_CPU));
  CHECK(lt_device_keys(cuda) == LT_KEYBIT(LT_KEY_CUDA));
}

static int copy_calls;
static lt_tensor *fake_copy_(lt_tensor *self, lt_tensor *src) {
  copy_calls++;
  lt_tensor_retain(self);
  return self;
}

/* copy_ is cross_device: it runs self's backend's kernel whatever src's device;
** other ops refuse tensors of two backends */
TEST(cross_device_copy) {
  int64_t n = 2;
  lt_device cpu = {LT_DEV_CPU, 0};
  lt_tensor *dst = lt_tensor_new_zeros(LT_FLOAT32, cpu, 1, &n);
  lt_tensor *src = lt_tensor_new_zeros(LT_FLOAT32, cpu, 1, &n);
  lt_keyset saved_keys = src->keys;
  src->keys = (src->keys & ~LT_KEYBIT(LT_KEY_CPU)) | LT_KEYBIT(LT_KEY_CUDA);   /* as if on cuda */
  void *saved = lt_op_table[LT_OP_copy_].kernel[LT_KEY_CPU];
  lt_dispatch_register(LT_OP_copy_, LT_KEY_CPU, (void *)fake_copy_);
  lt_tensor *r = lt_copy_(dst, src);
  CHECK(r == dst);
  CHECK_EQ_INT(copy_calls, 1);
  lt_tensor_release(r);
  lt_dispatch_register(LT_OP_copy_, LT_KEY_CPU, saved);
  r = lt_add(dst, src, lt_scalar_int(1));
  CHECK(r == NULL);
  CHECK(strstr(lt_error_message(), "expected all tensors to be on the same device") != NULL);
  src->keys = saved_keys;
  lt_tensor_release(src);
  lt_tensor_release(dst);
}

TEST(inference_mode_tensors) {
  int64_t n = 2;
  lt_tls_inference_mode = true;
  lt_tensor *t = lt_tensor_new_zeros(LT_FLOAT32, lt_device_cpu(), 1, &n);
  lt_tls_inference_mode = false;
  CHECK(!(t->keys & LT_KEYBIT(LT_KEY_AUTOGRAD)));
  lt_tensor_release(t);
}

int main(void) {
  lt_init();
  RUN(select_and_fallthrough);
  RUN(backend_tables);
  RUN(cross_device_copy);
  RUN(inference_mode_tensors);
  return ctest_summary();
}
