/*
** test_ck_random.c — the host build of the CUDA random and sequence kernels
** (src/cuda/kernels/random.cu, creation.cu) against the CPU generator's
** definitions (core/rng.h): the Philox blocks, the word-to-number maps, the
** unbiased ranges, and that element i depends only on (seed, base + i / per),
** so a draw split in two at a block boundary gives the numbers of one draw.
** Built without a C++ compiler, it reports a skip.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#ifdef CK_NO_HOST_BUILD
int main(void) {
  printf("SKIP test_ck_random: no C++ compiler for the host build of the CUDA kernels\n");
  printf("0 passed, 0 failed\n");
  return 0;
}
#else
#include "ctest.h"
#include "core/rng.h"
#include "cuda/kernels/kernels.h"
#include "cuda/kernels/random.h"

static lt_ck_rng_args args(int kind, int dtype, void *out, int64_t n, uint64_t seed, uint64_t base, int per) {
  lt_ck_rng_args a;
  memset(&a, 0, sizeof a);
  a.kind = kind; a.dtype = dtype; a.out = out; a.n = n;
  a.k0 = (uint32_t)seed; a.k1 = (uint32_t)(seed >> 32); a.base = base; a.per = per;
  return a;
}

/* INT_BIG with range 0: the raw 64 bits of block base + i, which lt_rng_below(key, c, 0) gives */
TEST(philox_blocks_match_core) {
  enum { N = 1000 };
  int64_t *v = malloc(sizeof(int64_t) * N);
  uint64_t seeds[] = { 0, 1, LT_DEFAULT_SEED, UINT64_C(0xDEADBEEFCAFEF00D) };
  for (int s = 0; s < 4; s++) {
    uint64_t base = (UINT64_C(1) << 32) - 300 + (uint64_t)s;   /* crosses the counter's word boundary */
    lt_ck_rng_args a = args(LT_CK_RNG_INT_BIG, LT_CK_INT64, v, N, seeds[s], base, 1);
    a.range = 0;
    CHECK_EQ_INT(lt_ck_host_random(&a, NULL), LT_CK_OK);
    int bad = 0;
    for (int i = 0; i < N; i++)
      bad += (uint64_t)v[i] != lt_rng_below(lt_philox_key_of(seeds[s]), base + (uint64_t)i, 0);
    CHECK_EQ_INT(bad, 0);
    /* and a range that rejects: Lemire over further attempts, as the CPU */
    a.range = UINT64_C(3) << 62;
    a.low = -5;
    CHECK_EQ_INT(lt_ck_host_random(&a, NULL), LT_CK_OK);
    bad = 0;
    for (int i = 0; i < N; i++)
      bad += (uint64_t)v[i] != (uint64_t)-5 + lt_rng_below(lt_philox_key_of(seeds[s]), base + (uint64_t)i, a.range);
    CHECK_EQ_INT(bad, 0);
  }
  free(v);
}

TEST(uniform_words) {
  enum { N = 4099 };
  float *f = malloc(sizeof(float) * N);
  double *d = malloc(sizeof(double) * N);
  lt_philox_key key = lt_philox_key_of(77);
  lt_ck_rng_args a = args(LT_CK_RNG_UNIFORM, LT_CK_FLOAT32, f, N, 77, 10, 4);
  a.a = 0; a.b = 1;
  CHECK_EQ_INT(lt_ck_host_random(&a, NULL), LT_CK_OK);
  int bad = 0;
  for (int i = 0; i < N; i++) {
    uint32_t w[4];
    lt_philox(key, 10 + (uint64_t)(i / 4), 0, w);
    bad += f[i] != (float)(0 + (double)lt_u01f(w[i % 4]) * 1);
  }
  CHECK_EQ_INT(bad, 0);
  a = args(LT_CK_RNG_UNIFORM, LT_CK_FLOAT64, d, N, 77, 10, 2);
  a.a = -1; a.b = 3;
  CHECK_EQ_INT(lt_ck_host_random(&a, NULL), LT_CK_OK);
  bad = 0;
  for (int i = 0; i < N; i++) {
    uint32_t w[4];
    lt_philox(key, 10 + (uint64_t)(i / 2), 0, w);
    bad += d[i] != -1 + lt_u01d(w[2 * (i % 2)], w[2 * (i % 2) + 1]) * 4;
  }
  CHECK_EQ_INT(bad, 0);
  free(f);
  free(d);
}

/* two draws, the second starting where the first's blocks end, equal one draw */
TEST(draws_split_at_blocks) {
  enum { N = 1024, CUT = 256 };
  int kinds[] = { LT_CK_RNG_NORMAL, LT_CK_RNG_EXPONENTIAL, LT_CK_RNG_BERNOULLI, LT_CK_RNG_INT };
  for (int k = 0; k < 4; k++) {
    float one[N], two[N];
    lt_ck_rng_args a = args(kinds[k], LT_CK_FLOAT32, one, N, 5, 100, 4);
    a.a = 0.5; a.b = 2; a.range = 10;
    CHECK_EQ_INT(lt_ck_host_random(&a, NULL), LT_CK_OK);
    lt_ck_rng_args b = a;
    b.out = two; b.n = CUT;
    CHECK_EQ_INT(lt_ck_host_random(&b, NULL), LT_CK_OK);
    b.out = two + CUT; b.n = N - CUT; b.base = 100 + CUT / 4;
    CHECK_EQ_INT(lt_ck_host_random(&b, NULL), LT_CK_OK);
    CHECK(memcmp(one, two, sizeof one) == 0);
    /* another base: other numbers */
    b.out = two; b.n = N; b.base = 101;
    CHECK_EQ_INT(lt_ck_host_random(&b, NULL), LT_CK_OK);
    CHECK(memcmp(one, two, sizeof one) != 0);
  }
}

TEST(refusals) {
  float f[4];
  int64_t i[4];
  lt_ck_rng_args a = args(LT_CK_RNG_NORMAL, LT_CK_INT64, i, 4, 1, 0, 4);
  CHECK_EQ_INT(lt_ck_host_random(&a, NULL), LT_CK_EUNSUPPORTED);
  a = args(LT_CK_RNG_UNIFORM, LT_CK_FLOAT32, f, 4, 1, 0, 3);
  CHECK_EQ_INT(lt_ck_host_random(&a, NULL), LT_CK_EINVAL);
  a = args(LT_CK_RNG_INT, LT_CK_INT64, i, 4, 1, 0, 4);
  a.range = 0;
  CHECK_EQ_INT(lt_ck_host_random(&a, NULL), LT_CK_EINVAL);
  a = args(LT_CK_RNG_UNIFORM, LT_CK_FLOAT32, NULL, 0, 1, 0, 4);
  CHECK_EQ_INT(lt_ck_host_random(&a, NULL), LT_CK_OK);   /* nothing to draw */
  lt_ck_seq_args q;
  memset(&q, 0, sizeof q);
  q.kind = LT_CK_SEQ_EYE; q.dtype = LT_CK_FLOAT32; q.out = f; q.n = 4; q.cols = 0;
  CHECK_EQ_INT(lt_ck_host_seq(&q, NULL), LT_CK_EINVAL);
  q.cols = 2;
  CHECK_EQ_INT(lt_ck_host_seq(&q, NULL), LT_CK_OK);
  CHECK(f[0] == 1 && f[1] == 0 && f[2] == 0 && f[3] == 1);
}

int main(void) {
  RUN(philox_blocks_match_core);
  RUN(uniform_words);
  RUN(draws_split_at_blocks);
  RUN(refusals);
  return ctest_summary();
}
#endif
