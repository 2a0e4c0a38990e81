/*
** test_linalg_eig.c — the geev plumbing of src/cpu/linalg_eig.c under
** torch.linalg.eig and torch._eig_real: eigenvalues of known matrices, complex
** conjugate pairs unpacked into complex vectors, LAPACK's real form, and the
** residual A v - w v of random real and complex matrices in complex arithmetic.
*/
#include <complex.h>
#include <stdlib.h>
#include <string.h>
#include "ctest.h"
#include "dispatch/dispatch.h"
#include "cpu/linalg_eig.h"

/* max over columns j of |A v_j - w_j v_j|, A column-major real, w and v (re, im) pairs */
static double residual(int n, const double *a, const double *w, const double *v) {
  double worst = 0;
  for (int j = 0; j < n; j++) {
    double complex wj = w[2 * j] + I * w[2 * j + 1];
    for (int i = 0; i < n; i++) {
      double complex s = 0;
      for (int k = 0; k < n; k++) s += a[k * n + i] * (v[2 * (j * n + k)] + I * v[2 * (j * n + k) + 1]);
      s -= wj * (v[2 * (j * n + i)] + I * v[2 * (j * n + i) + 1]);
      if (cabs(s) > worst) worst = cabs(s);
    }
  }
  return worst;
}

TEST(rotation_block_and_real_eigenvalues) {
  /* [[0, -1], [1, 0]] (eigenvalues +-i) beside diag(2, 3), column-major */
  double a[16] = {0}, keep[16];
  a[0 * 4 + 1] = 1; a[1 * 4 + 0] = -1; a[2 * 4 + 2] = 2; a[3 * 4 + 3] = 3;
  memcpy(keep, a, sizeof a);
  double w[8], v[32];
  CHECK_EQ_INT(lt_cpu_geev_f64(4, a, w, v), 0);
  int pairs = 0, reals = 0;
  for (int j = 0; j < 4; j++) {
    if (fabs(w[2 * j + 1]) > 0.5) { pairs++; CHECK_NEAR(w[2 * j], 0, 1e-14); CHECK_NEAR(fabs(w[2 * j + 1]), 1, 1e-14); }
    else { reals++; CHECK(fabs(w[2 * j] - 2) < 1e-14 || fabs(w[2 * j] - 3) < 1e-14); }
  }
  CHECK_EQ_INT(pairs, 2);
  CHECK_EQ_INT(reals, 2);
  CHECK(residual(4, keep, w, v) < 1e-13);
  /* the pair is conjugate: w[j+1] = conj(w[j]) for the first one with positive imaginary part */
  for (int j = 0; j < 3; j++)
    if (w[2 * j + 1] > 0.5) { CHECK_NEAR(w[2 * (j + 1) + 1], -w[2 * j + 1], 1e-14); break; }
}

TEST(random_matrices_residual_and_unit_vectors) {
  srand(7);
  for (int n = 1; n <= 9; n += 4) {
    double *a = malloc(sizeof(double) * n * n), *keep = malloc(sizeof(double) * n * n);
    double *w = malloc(sizeof(double) * 2 * n), *v = malloc(sizeof(double) * 2 * n * n);
    for (int i = 0; i < n * n; i++) a[i] = keep[i] = rand() / (double)RAND_MAX - 0.5;
    CHECK_EQ_INT(lt_cpu_geev_f64(n, a, w, v), 0);
    CHECK(residual(n, keep, w, v) < 1e-12);
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int i = 0; i < 2 * n; i++) s += v[2 * n * j + i] * v[2 * n * j + i];
      CHECK_NEAR(s, 1, 1e-12);
    }
    /* values only: the same eigenvalues */
    double *w2 = malloc(sizeof(double) * 2 * n);
    memcpy(a, keep, sizeof(double) * n * n);
    CHECK_EQ_INT(lt_cpu_geev_f64(n, a, w2, NULL), 0);
    for (int i = 0; i < 2 * n; i++) CHECK_NEAR(w2[i], w[i], 1e-10);
    free(a); free(keep); free(w); free(v); free(w2);
  }
}

TEST(float32) {
  float a[4] = {2, 0, 0, -1}, w[4], v[8];   /* diag(2, -1) */
  CHECK_EQ_INT(lt_cpu_geev_f32(2, a, w, v), 0);
  CHECK(fabs(w[0] - 2) < 1e-6 || fabs(w[0] + 1) < 1e-6);
  CHECK_NEAR(w[1], 0, 0);
  CHECK_NEAR(w[0] + w[2], 1, 1e-6);
}

TEST(empty_matrix) {
  double w[2], v[2], a[2];
  CHECK_EQ_INT(lt_cpu_geev_f64(0, a, w, v), 0);
  CHECK_EQ_INT(lt_cpu_geev_c128(0, a, w, v), 0);
}

TEST(real_form_matches_the_unpacked_one) {
  /* the rotation block: one pair, vector (re, im) in columns 0 and 1 */
  double a[4] = {0, 1, -1, 0}, b[4], wr[2], wi[2], vr[4], w[4], v[8];
  memcpy(b, a, sizeof a);
  CHECK_EQ_INT(lt_cpu_geev_real_f64(2, a, wr, wi, vr), 0);
  CHECK_EQ_INT(lt_cpu_geev_f64(2, b, w, v), 0);
  CHECK_NEAR(wi[0], 1, 1e-14);
  CHECK_NEAR(wi[1], -1, 1e-14);
  for (int i = 0; i < 2; i++) {
    CHECK_NEAR(v[2 * i], vr[i], 0);
    CHECK_NEAR(v[2 * i + 1], vr[2 + i], 0);
    CHECK_NEAR(v[4 + 2 * i + 1], -vr[2 + i], 0);
  }
}

/* max over j of |A v_j - w_j v_j| for complex column-major A */
static double residual_complex(int n, const double complex *a, const double complex *w, const double complex *v) {
  double worst = 0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double complex s = -w[j] * v[j * n + i];
      for (int k = 0; k < n; k++) s += a[k * n + i] * v[j * n + k];
      if (cabs(s) > worst) worst = cabs(s);
    }
  return worst;
}

TEST(complex_matrices_residual_and_unit_vectors) {
  srand(11);
  for (int n = 1; n <= 7; n += 3) {
    double complex *a = malloc(sizeof *a * n * n), *keep = malloc(sizeof *a * n * n);
    double complex *w = malloc(sizeof *w * n), *v = malloc(sizeof *v * n * n);
    for (int i = 0; i < n * n; i++) a[i] = keep[i] = (rand() / (double)RAND_MAX - 0.5) + I * (rand() / (double)RAND_MAX - 0.5);
    CHECK_EQ_INT(lt_cpu_geev_c128(n, (double *)a, (double *)w, (double *)v), 0);
    CHECK(residual_complex(n, keep, w, v) < 1e-12);
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int i = 0; i < n; i++) s += creal(v[j * n + i] * conj(v[j * n + i]));
      CHECK_NEAR(s, 1, 1e-12);
    }
    free(a); free(keep); free(w); free(v);
  }
  float complex fa[4] = {1, 0, 0, 2 * I}, fw[2];   /* diag(1, 2i) */
  CHECK_EQ_INT(lt_cpu_geev_c64(2, (float *)fa, (float *)fw, NULL), 0);
  CHECK(cabsf(fw[0] - 1) < 1e-6 || cabsf(fw[1] - 1) < 1e-6);
}

int main(void) {
  lt_init();
  RUN(rotation_block_and_real_eigenvalues);
  RUN(random_matrices_residual_and_unit_vectors);
  RUN(float32);
  RUN(empty_matrix);
  RUN(real_form_matches_the_unpacked_one);
  RUN(complex_matrices_residual_and_unit_vectors);
  return ctest_summary();
}
