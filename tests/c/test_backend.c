/*
** test_backend.c — the backend interface with no GPU: a fake "cuda" device
** (tests/fake/fake_backend.h) registered through lt_backend_register, its
** kernels the CPU's at the CUDA key. Checks the "backend not loaded" error,
** device indices, routing by key, device-mismatch errors, copies in and out
** of the device through the byte copies, item() and printing's host copy,
** engine seeding, and the backend's memory statistics.
*/
#include <string.h>
#include "ctest.h"
#include "lt_ops.h"
#include "autograd/autograd.h"
#include "../fake/fake_backend.h"

static lt_device cuda(int i) { lt_device d = {LT_DEV_CUDA, (int8_t)i}; return d; }

static lt_tensor *host_range(int64_t n) {
  lt_tensor *t = lt_arange(lt_scalar_int(0), lt_scalar_int(n), lt_scalar_int(1), LT_FLOAT32, lt_device_cpu());
  return t;
}

TEST(not_loaded) {
  int64_t n = 4;
  CHECK(lt_backend_of(cuda(0)) == NULL);
  CHECK(strstr(lt_error_message(), "cuda: backend not loaded") != NULL);
  lt_tensor *t = lt_tensor_new(LT_FLOAT32, cuda(0), 1, &n);
  CHECK(t == NULL);
  CHECK(strstr(lt_error_message(), "cuda: backend not loaded") != NULL);
  lt_tensor *z = lt_zeros(lt_intlist_make(&n, 1), LT_FLOAT32, cuda(0));
  CHECK(z == NULL);
  CHECK(lt_backend_get(LT_DEV_CPU) != NULL);
  CHECK(lt_backend_get(LT_DEV_CPU)->host_memory);
}

TEST(install_and_indices) {
  CHECK_EQ_INT(fake_backend_install(), 0);
  CHECK(lt_backend_of(cuda(0)) == &fake_backend);
  CHECK(lt_backend_of(cuda(1)) == &fake_backend);
  CHECK(lt_backend_of(cuda(2)) == NULL);
  CHECK(strstr(lt_error_message(), "device cuda:2 does not exist (2 devices)") != NULL);
}

TEST(creation_and_routing) {
  int64_t n = 5;
  long long allocs = atomic_load(&fake_count.num_allocs);
  lt_tensor *z = lt_zeros(lt_intlist_make(&n, 1), LT_FLOAT32, cuda(0));
  CHECK(z != NULL);
  CHECK_EQ_INT(lt_tensor_device(z).type, LT_DEV_CUDA);
  CHECK(z->keys & LT_KEYBIT(LT_KEY_CUDA));
  CHECK(!(z->keys & LT_KEYBIT(LT_KEY_CPU)));
  CHECK(atomic_load(&fake_count.num_allocs) > allocs);
  lt_tensor *h = host_range(n);
  lt_tensor *d = lt_tensor_to_device(h, cuda(0));
  CHECK(d && lt_tensor_device(d).type == LT_DEV_CUDA);
  /* an elementwise op, a Lua-number operand, a reduction input and a view, all on the device */
  lt_tensor *two = lt_tensor_wrapped_number(lt_scalar_int(2));
  lt_tensor *s = lt_mul(d, two);
  CHECK(s && lt_tensor_device(s).type == LT_DEV_CUDA);
  lt_tensor *v = lt_narrow(s, 0, 1, 3);
  CHECK(v && lt_tensor_device(v).type == LT_DEV_CUDA && v->storage == s->storage);
  long long th = atomic_load(&fake_count.to_host);
  lt_tensor *back = lt_tensor_to_host(v);
  CHECK(atomic_load(&fake_count.to_host) == th + 1);
  CHECK(back && lt_tensor_device(back).type == LT_DEV_CPU);
  for (int i = 0; i < 3; i++) CHECK_NEAR(lt_tensor_get_double(back, i), 2.0 * (i + 1), 0);
  /* item() reads through the host */
  lt_tensor *e = lt_select(s, 0, 4);
  lt_scalar it = lt_tensor_item(e);
  CHECK(it.type == LT_SCALAR_FLOAT);
  CHECK_NEAR(lt_scalar_to_double(it), 8.0, 0);
  lt_tensor *list[] = {z, two, h, d, s, v, back, e};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) lt_tensor_release(list[i]);
}

TEST(device_mismatch) {
  int64_t n = 3;
  lt_tensor *h = host_range(n), *d = lt_tensor_to_device(h, cuda(0)), *d1 = lt_tensor_to_device(h, cuda(1));
  lt_tensor *r = lt_add(h, d, lt_scalar_int(1));
  CHECK(r == NULL);
  CHECK(strstr(lt_error_message(), "add: expected all tensors to be on the same device") != NULL);
  lt_tensor *ts[2] = {h, d};
  CHECK(lt_cat(ts, 2, 0) == NULL);
  CHECK(strstr(lt_error_message(), "cat:") != NULL);
  /* the core's copy moves data between devices, shapes checked first */
  lt_tensor *h2 = lt_tensor_new_zeros(LT_FLOAT64, lt_device_cpu(), 1, &n);
  CHECK_EQ_INT(lt_tensor_copy_(h2, d1), 0);
  for (int i = 0; i < 3; i++) CHECK_NEAR(lt_tensor_get_double(h2, i), i, 0);
  int64_t m = 4;
  lt_tensor *wrong = lt_tensor_new_zeros(LT_FLOAT32, cuda(0), 1, &m);
  CHECK(lt_tensor_copy_(wrong, h) < 0);
  lt_tensor *list[] = {h, d, d1, h2, wrong};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) lt_tensor_release(list[i]);
}

TEST(engine_seeds_on_the_device) {
  int64_t n = 4;
  lt_tensor *h = host_range(n);
  lt_tensor *x = lt_tensor_to_device(h, cuda(0));
  x->requires_grad = true;
  lt_tensor *y = lt_mul(x, x);
  lt_tensor *l = lt_sum(y, lt_intlist_none(), false, -1);
  CHECK(l && lt_tensor_device(l).type == LT_DEV_CUDA);
  if (!l) { lt_tensor_release(y); lt_tensor_release(x); lt_tensor_release(h); return; }
  CHECK_EQ_INT(lt_backward(l, NULL, false, false), 0);
  CHECK(x->grad != NULL);
  if (x->grad) {
    CHECK_EQ_INT(lt_tensor_device(x->grad).type, LT_DEV_CUDA);
    lt_tensor *g = lt_tensor_to_host(x->grad);
    for (int i = 0; i < 4; i++) CHECK_NEAR(lt_tensor_get_double(g, i), 2.0 * i, 0);
    lt_tensor_release(g);
  }
  lt_tensor_release(l); lt_tensor_release(y); lt_tensor_release(x); lt_tensor_release(h);
}

TEST(memory_stats_through_the_backend) {
  const lt_backend *b = lt_backend_of(cuda(0));
  lt_memory_stats before, during, after;
  b->memory_stats(0, &before);
  int64_t n = 1 << 16;
  lt_tensor *t = lt_tensor_new(LT_FLOAT32, cuda(0), 1, &n);
  b->memory_stats(0, &during);
  CHECK_EQ_INT(during.allocated - before.allocated, (int64_t)n * 4);
  lt_tensor_release(t);
  b->memory_stats(0, &after);
  CHECK_EQ_INT(after.allocated, before.allocated);
}

int main(void) {
  lt_init();
  RUN(not_loaded);
  RUN(install_and_indices);
  RUN(creation_and_routing);
  RUN(device_mismatch);
  RUN(engine_seeds_on_the_device);
  RUN(memory_stats_through_the_backend);
  return ctest_summary();
}
