/*
** test_tensor.c — storage and tensor headers: refcounts, views, version
** counters, from_blob release, geometry helpers, dtype promotion and the
** 16-bit float conversions.
*/
#include <string.h>
#include <math.h>
#include "ctest.h"
#include "core/tensor.h"

static int released;
static void on_release(void *data, void *ctx) { (void)data; released += *(int *)ctx; }

TEST(refcounts_and_views) {
  int64_t sizes[2] = {2, 3};
  int64_t live0 = lt_tensor_live_count();
  lt_tensor *t = lt_tensor_new_zeros(LT_FLOAT32, lt_cpu_device(), 2, sizes);
  CHECK(t != NULL);
  CHECK_EQ_INT(t->numel, 6);
  CHECK_EQ_INT(t->strides[0], 3);
  CHECK(lt_tensor_is_contiguous(t));
  int64_t vs[2] = {3, 2}, vst[2] = {1, 3};
  lt_tensor *v = lt_tensor_alias(t, 0, 2, vs, vst);   /* a transpose */
  CHECK(!lt_tensor_is_contiguous(v));
  CHECK(v->storage == t->storage);
  CHECK_EQ_INT(atomic_load(&t->storage->refcount), 2);
  ((float *)t->storage->data)[1] = 5.0f;               /* t[0][1] is v[1][0] */
  CHECK_NEAR(lt_tensor_get_double(v, 2), 5.0, 0);
  lt_tensor_bump_version(t);
  CHECK_EQ_INT(atomic_load(&v->storage->version), 1); /* shared by views */
  lt_tensor *c = lt_tensor_contiguous(v);
  CHECK(c != v && lt_tensor_is_contiguous(c));
  CHECK_NEAR(lt_tensor_get_double(c, 2), 5.0, 0);
  lt_tensor *same = lt_tensor_contiguous(t);
  CHECK(same == t);
  lt_tensor_release(same);
  lt_tensor_release(c);
  lt_tensor_release(t);
  CHECK_EQ_INT(atomic_load(&v->storage->refcount), 1);
  lt_tensor_release(v);
  CHECK_EQ_INT(lt_tensor_live_count(), live0);
}

TEST(from_blob_release) {
  double buf[6] = {1, 2, 3, 4, 5, 6};
  int64_t sizes[2] = {2, 3};
  int inc = 1;
  released = 0;
  lt_tensor *t = lt_tensor_from_blob(buf, LT_FLOAT64, 2, sizes, NULL, on_release, &inc);
  CHECK(t && lt_tensor_data(t) == (void *)buf);
  CHECK_NEAR(lt_tensor_get_double(t, 4), 5.0, 0);
  lt_tensor *v = lt_tensor_alias(t, 3, 1, sizes + 1, NULL);
  lt_tensor_release(t);
  CHECK_EQ_INT(released, 0);                 /* the view keeps the buffer */
  CHECK_NEAR(lt_tensor_get_double(v, 0), 4.0, 0);
  lt_tensor_release(v);
  CHECK_EQ_INT(released, 1);
}

TEST(copy_broadcast_and_cast) {
  int64_t s2[2] = {2, 3}, s1[1] = {3};
  lt_tensor *dst = lt_tensor_new(LT_INT32, lt_cpu_device(), 2, s2);
  lt_tensor *src = lt_tensor_new(LT_FLOAT64, lt_cpu_device(), 1, s1);
  double *p = lt_tensor_data(src);
  p[0] = 1.9; p[1] = -2.5; p[2] = 7;
  CHECK_EQ_INT(lt_tensor_copy_(dst, src), 0);
  CHECK_EQ_INT(lt_tensor_get_int64(dst, 0), 1);
  CHECK_EQ_INT(lt_tensor_get_int64(dst, 4), -2);
  CHECK_EQ_INT(lt_tensor_get_int64(dst, 5), 7);
  int64_t bad[1] = {4};
  lt_tensor *wrong = lt_tensor_new(LT_FLOAT64, lt_cpu_device(), 1, bad);
  CHECK_EQ_INT(lt_tensor_copy_(dst, wrong), -1);
  CHECK(strstr(lt_error_message(), "copy_") != NULL);
  CHECK_EQ_INT(lt_tensor_fill_(dst, lt_scalar_float(3.0)), 0);
  CHECK_EQ_INT(lt_tensor_get_int64(dst, 3), 3);
  lt_tensor_release(wrong);
  lt_tensor_release(src);
  lt_tensor_release(dst);
}

TEST(shapes) {
  int64_t a[2] = {2, 1}, b[3] = {4, 1, 3}, out[LT_MAX_DIMS];
  CHECK_EQ_INT(lt_broadcast_shapes("t", 2, a, 3, b, out), 3);
  CHECK_EQ_INT(out[0], 4); CHECK_EQ_INT(out[1], 2); CHECK_EQ_INT(out[2], 3);
  int64_t c[1] = {5};
  CHECK_EQ_INT(lt_broadcast_shapes("t", 2, a, 1, c, out), 2);
  int64_t d[1] = {4};
  CHECK_EQ_INT(lt_broadcast_shapes("myop", 3, b, 1, d, out), -1);
  CHECK(strncmp(lt_error_message(), "myop:", 5) == 0);
  CHECK_EQ_INT(lt_wrap_dim("t", -1, 3), 2);
  CHECK_EQ_INT(lt_wrap_dim("t", 3, 3), -1);
  CHECK_EQ_INT(lt_wrap_dim("t", 0, 0), 0);
  int64_t neg[1] = {-1};
  CHECK(lt_tensor_new(LT_FLOAT32, lt_cpu_device(), 1, neg) == NULL);
}

TEST(dtypes) {
  CHECK_EQ_INT(lt_promote_types(LT_UINT8, LT_INT8), LT_INT16);
  CHECK_EQ_INT(lt_promote_types(LT_INT32, LT_FLOAT16), LT_FLOAT16);
  CHECK_EQ_INT(lt_promote_types(LT_FLOAT16, LT_BFLOAT16), LT_FLOAT32);
  CHECK_EQ_INT(lt_promote_types(LT_BOOL, LT_INT64), LT_INT64);
  CHECK_EQ_INT(lt_promote_types(LT_INT64, LT_FLOAT32), LT_FLOAT32);
  CHECK_EQ_INT(lt_promote_types(LT_FLOAT32, LT_FLOAT64), LT_FLOAT64);
  CHECK_EQ_INT(lt_dtype_from_name("double"), LT_FLOAT64);
  CHECK_EQ_INT(lt_dtype_from_name("torch.long"), LT_INT64);
  CHECK_EQ_INT(lt_dtype_from_name("nope"), -1);
  /* every half value round-trips through float */
  int bad = 0;
  for (uint32_t h = 0; h < 0x10000; h++) {
    float f = lt_half_to_float((lt_half)h);
    if (f == f && lt_float_to_half(f) != h) bad++;
  }
  CHECK_EQ_INT(bad, 0);
  CHECK_NEAR(lt_half_to_float(lt_float_to_half(1.0f / 3)), 0.333251953125, 0);
  CHECK(lt_float_to_half(70000.0f) == 0x7c00);
  CHECK_NEAR(lt_bf16_to_float(lt_float_to_bf16(3.14159f)), 3.140625, 0);
  CHECK_EQ_INT(lt_set_default_dtype(LT_INT32), -1);
}

int main(void) {
  ctest_init();
  RUN(refcounts_and_views);
  RUN(from_blob_release);
  RUN(copy_broadcast_and_cast);
  RUN(shapes);
  RUN(dtypes);
  return ctest_summary();
}
