/*
** test_registry.c — ops defined at run time, from C alone (no Lua): the schema
** parser's accepted forms and errors, definition in the op table after the
** generated ops (lt_dispatch_find, the profiling hook), argument checks and
** defaults, a kernel through lt_ext_call, a C derivative recorded by autograd,
** the fake kernel, and Tensor(a!) results and version bumps.
*/
#include <string.h>
#include "ctest.h"
#include "lt_ops.h"
#include "autograd/extension.h"

static bool msg_has(const char *s) { return strstr(lt_error_message(), s) != NULL; }

TEST(schema_forms) {
  lt_schema s;
  CHECK(lt_schema_parse(&s, "ns::f.out(Tensor x, Tensor? w=None, int[2] k=1, *, float eps=1e-5, bool b=True, "
                            "str m='sum', Scalar a=2) -> (Tensor y, Tensor[])", "t") == 0);
  CHECK_EQ_INT(s.nargs, 7);
  CHECK_EQ_INT(s.nrets, 2);
  CHECK(strcmp(s.qualname, "ns::f.out") == 0);
  CHECK(s.args[1].optional && s.args[1].has_default && s.args[1].def.tag == LT_ARG_NONE);
  CHECK(s.args[2].type == LT_ARG_INT_LIST && s.args[2].def.u.il.n == 1 && s.args[2].def.u.il.v[0] == 1);
  CHECK(s.args[3].kwonly && s.args[3].def.u.f == 1e-5);
  CHECK(s.args[5].def.tag == LT_ARG_STR && strcmp(s.args[5].def.u.s, "sum") == 0);
  CHECK(s.rets[1].type == LT_ARG_TENSOR_LIST && strcmp(s.rets[0].name, "y") == 0);
  lt_schema_free(&s);
  CHECK(lt_schema_parse(&s, "ns::g(Tensor(a!) x, Tensor(b) y) -> (Tensor(a!), Tensor(b))", "t") == 0);
  CHECK(s.mutates && s.args[0].is_mutable && s.args[1].alias == 'b' && !s.args[1].is_mutable);
  lt_schema_free(&s);
  CHECK(lt_schema_parse(&s, "ns::h() -> ()", "t") == 0 && s.nargs == 0 && s.nrets == 0);
  lt_schema_free(&s);
}

TEST(schema_errors) {
  static const struct { const char *schema, *msg; } bad[] = {
    { "f(Tensor x) -> Tensor", "qualified with its namespace" },
    { "ns::f(Tensor x, Tensor x) -> Tensor", "appears twice" },
    { "ns::f(Complex x) -> Tensor", "unknown type 'Complex'" },
    { "ns::f(Tensor x) -> Tensor(a)", "names no argument" },
    { "ns::f(Tensor(a!) x) -> Tensor(a)", "must match argument 'x'" },
    { "ns::f(Tensor(a) x, Tensor(a) y) -> Tensor", "used by two arguments" },
    { "ns::f(float(a) x) -> Tensor", "only a Tensor" },
    { "ns::f(bool b=1) -> Tensor", "True or False" },
    { "ns::f(Tensor x) -> Tensor?", "cannot be optional" },
    { "ns::f(Tensor x -> Tensor", "expected ',' or ')'" },
    { "ns::f(Tensor x) -> Tensor y z", "unexpected text" },
    { NULL, "must be a string" },
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    lt_schema s;
    CHECK(lt_schema_parse(&s, bad[i].schema, "who") < 0);
    if (!msg_has(bad[i].msg)) fprintf(stderr, "  [%s] -> %s\n", bad[i].schema ? bad[i].schema : "NULL", lt_error_message());
    CHECK(msg_has(bad[i].msg));
    CHECK(bad[i].schema == NULL || msg_has("who: bad schema"));
  }
}

/* ctest::addc(Tensor x, float c=1.0) -> Tensor : x + c, with the derivative grad */
static int kernel_calls;
static int addc_cpu(const lt_ivalue *args, lt_ivalue *rets) {
  kernel_calls++;
  lt_tensor *c = lt_tensor_wrapped_number(lt_scalar_float(args[1].u.f));
  lt_tensor *r = c ? lt_add(args[0].u.t, c, lt_scalar_int(1)) : NULL;
  lt_tensor_release(c);
  if (!r) return -1;
  rets[0] = lt_iv_tensor(r);
  return 0;
}
static int setup_calls;
static int addc_setup(lt_autograd_ctx *ctx, const lt_ivalue *args, const lt_ivalue *rets) {
  (void)rets;
  setup_calls++;
  ctx->values[0] = args[1].u.f;
  return 0;
}
static int addc_backward(lt_autograd_ctx *ctx, lt_tensor *const *gout, lt_tensor **gin) {
  (void)ctx;
  lt_tensor_retain(gout[0]);
  gin[0] = gout[0];
  return 0;
}
static int addc_fake(const lt_ivalue *args, lt_ivalue *rets) {
  lt_tensor *x = args[0].u.t;
  rets[0] = lt_iv_tensor(lt_tensor_new(lt_tensor_dtype(x), lt_tensor_device(x), x->ndim, x->sizes));
  return rets[0].u.t ? 0 : -1;
}

static int hook_op = -1;
/* the first op entered: the custom op, before the add its kernel calls */
static void hook(void *ud, int op, int phase) { (void)ud; if (phase == 0 && hook_op < 0) hook_op = op; }

TEST(define_and_call) {
  int id = lt_ext_define("ctest::addc(Tensor x, float c=1.0) -> Tensor", "x + c");
  CHECK(id >= lt_num_ops && id < lt_dispatch_max_ops());
  CHECK_EQ_INT(lt_dispatch_find("ctest::addc"), id);
  CHECK(strcmp(lt_op_table[id].name, "ctest::addc") == 0);
  CHECK(lt_op_table[id].flags & LT_OPF_CUSTOM);
  /* the same schema again is the same op; another one under the name is an error */
  CHECK_EQ_INT(lt_ext_define("ctest::addc(Tensor x, float c=1.0) -> Tensor", NULL), id);
  CHECK(lt_ext_define("ctest::addc(Tensor x) -> Tensor", NULL) < 0 && msg_has("already defined"));
  lt_ivalue rets[1];
  lt_tensor *x = lt_tensor_new_zeros(LT_FLOAT64, lt_device_cpu(), 1, (int64_t[]){3});
  lt_ivalue args[2] = { lt_iv_tensor(x), lt_iv_none() };
  CHECK(lt_ext_call("ctest::addc", args, 1, rets) < 0 && msg_has("no kernel for cpu tensors"));
  CHECK(lt_ext_impl("ctest::addc", "cpu", addc_cpu) == 0);
  CHECK(lt_ext_call("ctest::addc", args, 1, rets) == 0);   /* c defaults to 1.0 */
  CHECK_NEAR(lt_tensor_get_double(rets[0].u.t, 2), 1.0, 0);
  lt_ivalue_clear(&rets[0]);
  args[1] = lt_iv_int(3);                                   /* an int where a float is declared */
  CHECK(lt_ext_call("ctest::addc", args, 2, rets) == 0);
  CHECK_NEAR(lt_tensor_get_double(rets[0].u.t, 0), 3.0, 0);
  lt_ivalue_clear(&rets[0]);
  args[1] = lt_iv_bool(true);
  CHECK(lt_ext_call("ctest::addc", args, 2, rets) < 0 && msg_has("ctest::addc: argument 'c' must be float, got bool"));
  args[0] = lt_iv_none();
  CHECK(lt_ext_call("ctest::addc", args, 1, rets) < 0 && msg_has("missing argument 'x'"));
  args[0] = lt_iv_tensor(x);
  CHECK(lt_ext_call("ctest::addc", args, 3, rets) < 0 && msg_has("at most 2 arguments"));
  CHECK(lt_ext_impl("ctest::addc", "tpu", addc_cpu) < 0 && msg_has("unknown device or dispatch key 'tpu'"));
  CHECK(lt_ext_impl("ctest::nope", "cpu", addc_cpu) < 0 && msg_has("no op named ctest::nope"));
  /* the profiling hook sees the op's id */
  lt_dispatch_set_hook(hook, NULL);
  args[1] = lt_iv_float(2);
  CHECK(lt_ext_call("ctest::addc", args, 2, rets) == 0);
  lt_dispatch_set_hook(NULL, NULL);
  CHECK_EQ_INT(hook_op, id);
  lt_ivalue_clear(&rets[0]);
  /* the fake kernel */
  CHECK(lt_custom_call_fake(lt_custom_find("ctest::addc"), args, rets) < 0 && msg_has("no fake kernel"));
  CHECK(lt_ext_register_fake("ctest::addc", addc_fake) == 0);
  CHECK(lt_custom_call_fake(lt_custom_find("ctest::addc"), args, rets) == 0);
  CHECK_EQ_INT(rets[0].u.t->sizes[0], 3);
  lt_ivalue_clear(&rets[0]);
  lt_tensor_release(x);
}

TEST(c_derivative) {
  CHECK(lt_ext_register_autograd("ctest::addc", addc_setup, addc_backward) == 0);
  lt_tensor *x = lt_tensor_new_zeros(LT_FLOAT64, lt_device_cpu(), 1, (int64_t[]){4});
  lt_requires_grad_(x, true);
  lt_ivalue args[2] = { lt_iv_tensor(x), lt_iv_float(5) }, rets[1];
  CHECK(lt_ext_call("ctest::addc", args, 2, rets) == 0);
  lt_tensor *y = rets[0].u.t;
  CHECK(y->grad_fn && strcmp(y->grad_fn->ops->name, "ctest::addcBackward") == 0);
  CHECK_EQ_INT(setup_calls, 1);
  lt_tensor *s = lt_sum(y, lt_intlist_none(), false, -1);
  CHECK(lt_backward(s, NULL, false, false) == 0);
  CHECK(x->grad && lt_tensor_get_double(x->grad, 3) == 1.0);
  lt_tensor_release(s);
  lt_tensor_release(y);
  /* under no_grad: no node, no setup */
  lt_tls_grad_enabled = false;
  CHECK(lt_ext_call("ctest::addc", args, 2, rets) == 0);
  CHECK(rets[0].u.t->grad_fn == NULL && setup_calls == 1);
  lt_tls_grad_enabled = true;
  lt_ivalue_clear(&rets[0]);
  lt_tensor_release(x);
}

/* ctest::fill_(Tensor(a!) x, float v) -> Tensor(a!): returns nothing, gets x back */
static int fill_cpu(const lt_ivalue *args, lt_ivalue *rets) {
  (void)rets;
  lt_tensor *r = lt_fill_(args[0].u.t, lt_scalar_float(args[1].u.f));   /* a new reference to x */
  lt_tensor_release(r);
  return r ? 0 : -1;
}
static int fill_new(const lt_ivalue *args, lt_ivalue *rets) {
  rets[0] = lt_iv_tensor(lt_tensor_new_zeros(LT_FLOAT32, lt_device_cpu(), 0, NULL));
  (void)args;
  return 0;
}

TEST(mutation) {
  CHECK(lt_ext_define("ctest::fill_(Tensor(a!) x, float v) -> Tensor(a!)", NULL) >= 0);
  CHECK(lt_ext_impl("ctest::fill_", "cpu", fill_cpu) == 0);
  lt_tensor *x = lt_tensor_new_zeros(LT_FLOAT32, lt_device_cpu(), 1, (int64_t[]){2});
  uint32_t v0 = atomic_load(&x->storage->version);
  lt_ivalue args[2] = { lt_iv_tensor(x), lt_iv_float(4) }, rets[1];
  CHECK(lt_ext_call("ctest::fill_", args, 2, rets) == 0);
  CHECK(rets[0].u.t == x && lt_tensor_get_double(x, 1) == 4.0);
  CHECK(atomic_load(&x->storage->version) > v0);
  lt_ivalue_clear(&rets[0]);
  CHECK(lt_ext_impl("ctest::fill_", "cpu", fill_new) == 0);
  CHECK(lt_ext_call("ctest::fill_", args, 2, rets) < 0 && msg_has("must return argument 'x' itself"));
  CHECK(lt_ext_register_autograd("ctest::fill_", addc_setup, addc_backward) < 0 && msg_has("writes into an input"));
  lt_tensor_release(x);
}

int main(void) {
  lt_init();
  lt_autograd_init();
  RUN(schema_forms);
  RUN(schema_errors);
  RUN(define_and_call);
  RUN(c_derivative);
  RUN(mutation);
  return ctest_summary();
}
