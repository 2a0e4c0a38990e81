/*
** test_ck_optim.c — the host build of the optimizer kernels (src/cuda/kernels/optim.cu),
** called directly: the update of one op over a batch of several tensors (elements split
** at their boundaries), the step bump after it, NAdam's mu product, the refusals (no
** tensors, too many, a bad dtype or op), and _foreach_norm's two passes, including an
** empty tensor and the slot rule. The ops as a whole (checks, batching, the CPU's numbers)
** are tests/lua/cuda/test_optim.lua's.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#ifdef CK_NO_HOST_BUILD
int main(void) {
  printf("SKIP the optim kernels' host build: no C++ compiler was found\n0 passed, 0 failed\n");
  return 0;
}
#else
#include "ctest.h"
#include "cuda/kernels/kernels.h"
#include "cuda/kernels/optim.h"

TEST(test_foreach_add_over_a_batch) {
  float a[5] = {1, 2, 3, 4, 5}, b[3] = {10, 20, 30}, o1[5] = {1, 1, 1, 1, 1}, o2[3] = {2, 2, 2};
  lt_ck_mt_list l;
  memset(&l, 0, sizeof l);
  l.n = 3;                       /* a, an empty one, b */
  l.p[0][0] = a; l.p[0][1] = o1;
  l.p[1][0] = a; l.p[1][1] = o1;
  l.p[2][0] = b; l.p[2][1] = o2;
  l.start[1] = 5; l.start[2] = 5; l.start[3] = 8;
  lt_ck_optim_cfg c = {.op = LT_CK_OPT_ADD, .a = -0.5};
  CHECK_EQ_INT(lt_ck_host_optim(&c, LT_CK_FLOAT32, &l, NULL), LT_CK_OK);
  CHECK_NEAR(a[0], 0.5, 0); CHECK_NEAR(a[4], 4.5, 0);
  CHECK_NEAR(b[0], 9, 0); CHECK_NEAR(b[2], 29, 0);
}

TEST(test_adam_bumps_the_step) {
  double p[2] = {1, -1}, g[2] = {0.5, 0.5}, m[2] = {0, 0}, v[2] = {0, 0}, step = 0;
  lt_ck_mt_list l;
  memset(&l, 0, sizeof l);
  l.n = 1;
  l.p[0][0] = p; l.p[0][1] = g; l.p[0][2] = m; l.p[0][3] = v;
  l.step[0] = &step;
  l.start[1] = 2;
  lt_ck_optim_cfg c = {.op = LT_CK_OPT_ADAM, .lr = 0.1, .a = 0.9, .b = 0.999, .eps = 1e-8};
  CHECK_EQ_INT(lt_ck_host_optim(&c, LT_CK_FLOAT64, &l, NULL), LT_CK_OK);
  CHECK_NEAR(step, 1, 0);
  /* the first Adam step moves by lr * sign(g) (bias-corrected m / sqrt(v) = 1) */
  CHECK_NEAR(p[0], 0.9, 1e-7);
  CHECK_NEAR(p[1], -1.1, 1e-7);
  CHECK_NEAR(m[0], 0.05, 1e-15);
  CHECK_EQ_INT(lt_ck_host_optim(&c, LT_CK_FLOAT64, &l, NULL), LT_CK_OK);
  CHECK_NEAR(step, 2, 0);
}

TEST(test_nadam_mu_product) {
  double p[1] = {1}, g[1] = {1}, m[1] = {0}, v[1] = {0}, step = 0, mp = 1;
  lt_ck_mt_list l;
  memset(&l, 0, sizeof l);
  l.n = 1;
  l.p[0][0] = p; l.p[0][1] = g; l.p[0][2] = m; l.p[0][3] = v;
  l.step[0] = &step; l.mu_product[0] = &mp;
  l.start[1] = 1;
  lt_ck_optim_cfg c = {.op = LT_CK_OPT_NADAM, .lr = 0.01, .a = 0.9, .b = 0.999, .eps = 1e-8, .momentum_decay = 0.004};
  CHECK_EQ_INT(lt_ck_host_optim(&c, LT_CK_FLOAT64, &l, NULL), LT_CK_OK);
  CHECK_NEAR(step, 1, 0);
  CHECK_NEAR(mp, 0.9 * (1 - 0.5 * pow(0.96, 0.004)), 1e-15);
  CHECK(p[0] < 1);
}

TEST(test_refusals) {
  float x[1] = {1};
  lt_ck_mt_list l;
  memset(&l, 0, sizeof l);
  l.p[0][0] = x; l.start[1] = 1;
  lt_ck_optim_cfg c = {.op = LT_CK_OPT_ZERO};
  l.n = 0;
  CHECK_EQ_INT(lt_ck_host_optim(&c, LT_CK_FLOAT32, &l, NULL), LT_CK_EINVAL);
  l.n = LT_CK_MT_MAX + 1;
  CHECK_EQ_INT(lt_ck_host_optim(&c, LT_CK_FLOAT32, &l, NULL), LT_CK_EINVAL);
  l.n = 1;
  CHECK_EQ_INT(lt_ck_host_optim(&c, LT_CK_FLOAT16, &l, NULL), LT_CK_EINVAL);
  c.op = LT_CK_NUM_OPT;
  CHECK_EQ_INT(lt_ck_host_optim(&c, LT_CK_FLOAT32, &l, NULL), LT_CK_EINVAL);
  c.op = LT_CK_OPT_ZERO;
  CHECK_EQ_INT(lt_ck_host_optim(&c, LT_CK_FLOAT32, &l, NULL), LT_CK_OK);
  CHECK_NEAR(x[0], 0, 0);
  CHECK_EQ_INT(lt_ck_host_foreach_norm(99, 2, LT_CK_FLOAT32, NULL, NULL, x, LT_CK_FLOAT32, NULL), LT_CK_EINVAL);
}

TEST(test_norm_two_passes) {
  static float big[70000];
  for (int i = 0; i < 70000; i++) big[i] = (i % 7) - 3.0f;   /* squares sum: 10000 * 28 */
  float small[3] = {3, -4, 0};
  lt_ck_norm_list l;
  memset(&l, 0, sizeof l);
  l.n = 3;
  l.x[0] = big; l.numel[0] = 70000;
  l.x[1] = small; l.numel[1] = 0;                 /* empty */
  l.x[2] = small; l.numel[2] = 3;
  for (int t = 0; t < 3; t++) l.slot[t + 1] = l.slot[t] + lt_ck_norm_slots(l.numel[t]);
  CHECK_EQ_INT(lt_ck_norm_slots(0), 0);
  CHECK_EQ_INT(lt_ck_norm_slots(257), 2);
  CHECK_EQ_INT(lt_ck_norm_slots((int64_t)1 << 30), 32768);
  static double partials[400];
  double out[3];
  CHECK_EQ_INT(lt_ck_host_foreach_norm(LT_CK_NORM_2, 2, LT_CK_FLOAT32, &l, partials, out, LT_CK_FLOAT64, NULL), LT_CK_OK);
  CHECK_NEAR(out[0], sqrt(280000.0), 1e-9);
  CHECK_NEAR(out[1], 0, 0);
  CHECK_NEAR(out[2], 5, 1e-12);
  CHECK_EQ_INT(lt_ck_host_foreach_norm(LT_CK_NORM_NINF, -INFINITY, LT_CK_FLOAT32, &l, partials, out, LT_CK_FLOAT64, NULL),
               LT_CK_OK);
  CHECK_NEAR(out[0], 0, 0);
  CHECK_NEAR(out[1], 0, 0);                       /* -inf norm of nothing: 0, as on the CPU */
  CHECK_NEAR(out[2], 0, 0);
  float o32[3];
  CHECK_EQ_INT(lt_ck_host_foreach_norm(LT_CK_NORM_P, 3, LT_CK_FLOAT32, &l, partials, o32, LT_CK_FLOAT32, NULL), LT_CK_OK);
  CHECK_NEAR(o32[2], cbrt(27.0 + 64.0), 1e-5);
}

int main(void) {
  RUN(test_foreach_add_over_a_batch);
  RUN(test_adam_bumps_the_step);
  RUN(test_nadam_mu_product);
  RUN(test_refusals);
  RUN(test_norm_two_passes);
  return ctest_summary();
}
#endif
