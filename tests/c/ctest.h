/*
** ctest.h — a tiny unit-test harness for the C core.
**
**   TEST(name) { CHECK(x > 0); CHECK_EQ_INT(n, 3); CHECK_NEAR(y, 0.5, 1e-6); }
**   int main(void) { lt_init(); RUN(name); return ctest_summary(); }
**
** A failed check reports and carries on, so one run shows every failure.
** ctest_summary prints "N passed, N failed" and returns the exit status.
** The counters are atomic: checks may run on several threads at once.
** Include it in one file per test binary.
*/
#ifndef LT_CTEST_H
#define LT_CTEST_H

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int ctest_passed, ctest_failed;

static const char *ctest_current = "?";

static void ctest_fail(const char *file, int line) {
  atomic_fetch_add(&ctest_failed, 1);
  fprintf(stderr, "%s:%d: FAIL in %s: ", file, line, ctest_current);
}

#define CHECK(cond) do { \
    if (cond) atomic_fetch_add(&ctest_passed, 1); \
    else { ctest_fail(__FILE__, __LINE__); fprintf(stderr, "%s\n", #cond); } \
  } while (0)

#define CHECK_EQ_INT(a, b) do { \
    long long ctest_a = (long long)(a), ctest_b = (long long)(b); \
    if (ctest_a == ctest_b) atomic_fetch_add(&ctest_passed, 1); \
    else { ctest_fail(__FILE__, __LINE__); \
      fprintf(stderr, "%s == %s (%lld vs %lld)\n", #a, #b, ctest_a, ctest_b); } \
  } while (0)

#define CHECK_NEAR(a, b, tol) do { \
    double ctest_a = (double)(a), ctest_b = (double)(b); \
    if (fabs(ctest_a - ctest_b) <= (tol)) atomic_fetch_add(&ctest_passed, 1); \
    else { ctest_fail(__FILE__, __LINE__); \
      fprintf(stderr, "%s ~ %s (%g vs %g, tol %g)\n", #a, #b, ctest_a, ctest_b, \
              (double)(tol)); } \
  } while (0)

#define TEST(name) static void name(void)

#define RUN(name) do { \
    ctest_current = #name; \
    int ctest_before = atomic_load(&ctest_failed); \
    name(); \
    fprintf(stderr, "%-40s %s\n", #name, \
            atomic_load(&ctest_failed) == ctest_before ? "ok" : "FAILED"); \
  } while (0)

static int ctest_summary(void) {
  int p = atomic_load(&ctest_passed), f = atomic_load(&ctest_failed);
  printf("%d passed, %d failed\n", p, f);
  return f == 0 ? 0 : 1;
}

#endif
