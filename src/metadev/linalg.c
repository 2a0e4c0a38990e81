/*
** linalg.c — the meta kernels of the LAPACK-backed linear algebra
** (src/ops/linalg_solve.lua, linalg_spectral.lua): the solvers, the
** factorizations, determinants, least squares, QR, the eigen and singular
** value decompositions. Each runs the checks the CPU kernel runs (the shared
** functions of meta/linalg_solve.h and meta/linalg_spectral.h) and makes the
** results the CPU makes, laid out as the CPU lays them: a matrix that LAPACK
** wrote is a column-major block per matrix (cpu/lapack_batch.h), so its meta
** result has the same strides; the rest are contiguous.
**
** What only the data decides is not checked: a singular or non-positive-
** definite matrix (check_errors), pivots' values, NaNs, the rank that
** lstsq's SVD drivers find (full rank is assumed, as for random input).
*/
#include <string.h>
#include "kernels_meta.h"   /* generated: the prototypes */
#include "metadev/metadev.h"
#include "meta/meta.h"
#include "meta/linalg_solve.h"
#include "meta/linalg_spectral.h"

static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

/* a new contiguous meta tensor of the batch dims batch[0..nb) followed by `extra` dims tail */
static lt_tensor *batched(lt_dtype dt, int nb, const int64_t *batch, int extra, const int64_t *tail) {
  int64_t sz[LT_MAX_DIMS];
  if (nb + extra > LT_MAX_DIMS) return lt_error_null("linalg: too many dims");
  for (int i = 0; i < nb; i++) sz[i] = batch[i];   /* batch may be NULL when nb is 0 */
  for (int i = 0; i < extra; i++) sz[nb + i] = tail[i];
  return lt_tensor_new(dt, lt_metadev_device(), nb + extra, sz);
}

/* The r x c top left corner of each matrix of a batch of rows x cols column-major blocks,
** as the CPU's lt_lapack_batch_view sees its block: storage (batch..., cols, rows)
** contiguous, the view (batch..., r, c) with strides (..., 1, rows). */
static lt_tensor *block(lt_dtype dt, int nb, const int64_t *batch, int64_t rows, int64_t cols, int64_t r, int64_t c) {
  int64_t rc[2] = {cols, rows};
  lt_tensor *buf = batched(dt, nb, batch, 2, rc);
  if (!buf) return NULL;
  int64_t sz[LT_MAX_DIMS], st[LT_MAX_DIMS];
  for (int i = 0; i < nb; i++) { sz[i] = buf->sizes[i]; st[i] = buf->strides[i]; }
  sz[nb] = r; st[nb] = 1;
  sz[nb + 1] = c; st[nb + 1] = rows;
  lt_tensor *v = lt_tensor_alias(buf, buf->offset, nb + 2, sz, st);
  lt_tensor_release(buf);
  return v;
}

/* a whole block: (batch..., rows, cols), column-major */
static lt_tensor *colmajor(lt_dtype dt, int nb, const int64_t *batch, int64_t rows, int64_t cols) {
  return block(dt, nb, batch, rows, cols, rows, cols);
}

/* an empty 1-D tensor: the parts an op was asked not to compute */
static lt_tensor *empty1(lt_dtype dt) {
  int64_t z = 0;
  return lt_tensor_new(dt, lt_metadev_device(), 1, &z);
}

/* the results of a multi-result kernel: 0 when all were made, else all released and -1 */
static int all_made(lt_tensor **r[], int n) {
  bool ok = true;
  for (int i = 0; i < n; i++) ok = ok && *r[i];
  if (ok) return 0;
  for (int i = 0; i < n; i++) { lt_tensor_release(*r[i]); *r[i] = NULL; }
  return -1;
}

/* ---- the LU family, Cholesky, triangular solves ---- */

int lt_metadev_linalg_solve_ex(lt_tensor *A, lt_tensor *B, bool left, bool check_errors, lt_tensor **result,
                               lt_tensor **info) {
  (void)check_errors;   /* singularity is the data's */
  lt_linalg_rhs g;
  *result = *info = NULL;
  if (lt_meta_linalg_rhs("linalg.solve_ex", "A", A, "B", B, left, false, &g)) return -1;
  lt_dtype dt = (lt_dtype)A->dtype;
  int64_t kn[2] = {g.k, g.n};
  if (g.vector) *result = batched(dt, g.nbatch, g.batch, 1, &g.n);
  else if (left) *result = colmajor(dt, g.nbatch, g.batch, g.n, g.k);
  else *result = batched(dt, g.nbatch, g.batch, 2, kn);   /* X^T's block seen transposed: row-major */
  *info = batched(LT_INT32, g.nbatch, g.batch, 0, NULL);
  lt_tensor **r[] = {result, info};
  return all_made(r, 2);
}

int lt_metadev_linalg_lu_factor_ex(lt_tensor *A, bool pivot, bool check_errors, lt_tensor **LU, lt_tensor **pivots,
                                   lt_tensor **info) {
  const char *op = "linalg.lu_factor_ex";
  (void)check_errors;
  *LU = *pivots = *info = NULL;
  if (lt_meta_lu_factor(op, A, pivot)) return -1;
  int nb = A->ndim - 2;
  int64_t m = A->sizes[nb], n = A->sizes[nb + 1], k = imin(m, n);
  *LU = colmajor((lt_dtype)A->dtype, nb, A->sizes, m, n);
  *pivots = batched(LT_INT32, nb, A->sizes, 1, &k);
  *info = batched(LT_INT32, nb, A->sizes, 0, NULL);
  lt_tensor **r[] = {LU, pivots, info};
  return all_made(r, 3);
}

lt_tensor *lt_metadev_linalg_lu_solve(lt_tensor *LU, lt_tensor *pivots, lt_tensor *B, bool left, bool adjoint) {
  const char *op = "linalg.lu_solve";
  (void)adjoint;
  lt_linalg_rhs g;
  if (lt_meta_linalg_rhs(op, "LU", LU, "B", B, left, true, &g) || lt_meta_linalg_pivots(op, pivots, g.n)) return NULL;
  int64_t batch[LT_MAX_DIMS];
  int nb = lt_meta_linalg_batch(op, "pivots", pivots, 1, g.nbatch, g.batch, batch);
  if (nb < 0) return NULL;
  int64_t kn[2] = {g.k, g.n};
  if (left) return colmajor((lt_dtype)LU->dtype, nb, batch, g.n, g.k);
  return batched((lt_dtype)LU->dtype, nb, batch, 2, kn);
}

int lt_metadev_linalg_cholesky_ex(lt_tensor *A, bool upper, bool check_errors, lt_tensor **L, lt_tensor **info) {
  (void)upper; (void)check_errors;
  *L = *info = NULL;
  if (lt_meta_linalg_matrix("linalg.cholesky_ex", "A", A, true)) return -1;
  int nb = A->ndim - 2;
  *L = colmajor((lt_dtype)A->dtype, nb, A->sizes, A->sizes[nb], A->sizes[nb]);
  *info = batched(LT_INT32, nb, A->sizes, 0, NULL);
  lt_tensor **r[] = {L, info};
  return all_made(r, 2);
}

lt_tensor *lt_metadev_linalg_solve_triangular(lt_tensor *A, lt_tensor *B, bool upper, bool left, bool unitriangular) {
  (void)upper; (void)unitriangular;
  lt_linalg_rhs g;
  if (lt_meta_linalg_rhs("linalg.solve_triangular", "A", A, "B", B, left, true, &g)) return NULL;
  /* the result is B's block: (n, k) on the left, (k, n) on the right */
  return colmajor((lt_dtype)A->dtype, g.nbatch, g.batch, left ? g.n : g.k, left ? g.k : g.n);
}

lt_tensor *lt_metadev_linalg_det(lt_tensor *A) {
  if (lt_meta_linalg_matrix("linalg.det", "A", A, true)) return NULL;
  return batched((lt_dtype)A->dtype, A->ndim - 2, A->sizes, 0, NULL);
}

int lt_metadev__linalg_slogdet(lt_tensor *A, lt_tensor **logabsdet, lt_tensor **sign) {
  *logabsdet = *sign = NULL;
  if (lt_meta_linalg_matrix("linalg.slogdet", "A", A, true)) return -1;
  lt_dtype dt = (lt_dtype)A->dtype;
  *logabsdet = batched(lt_dtype_to_real(dt), A->ndim - 2, A->sizes, 0, NULL);
  *sign = batched(dt, A->ndim - 2, A->sizes, 0, NULL);
  lt_tensor **r[] = {logabsdet, sign};
  return all_made(r, 2);
}

lt_tensor *lt_metadev__lu_permutation(lt_tensor *LU, lt_tensor *pivots) {
  const char *op = "lu_unpack";
  if (lt_meta_linalg_matrix(op, "LU_data", LU, false)) return NULL;
  int nb = LU->ndim - 2;
  int64_t m = LU->sizes[nb], n = LU->sizes[nb + 1];
  if (lt_meta_linalg_pivots(op, pivots, imin(m, n))) return NULL;
  if (pivots->ndim != nb + 1 || memcmp(pivots->sizes, LU->sizes, sizeof(int64_t) * (size_t)nb) != 0)
    return lt_error_null("%s: argument 'LU_pivots' must have the batch dims of 'LU_data'", op);
  int64_t mm[2] = {m, m};
  return batched((lt_dtype)LU->dtype, nb, LU->sizes, 2, mm);
}

int lt_metadev_linalg_lstsq(lt_tensor *A, lt_tensor *B, lt_scalar rcond, const char *driver, lt_tensor **solution,
                            lt_tensor **residuals, lt_tensor **rank, lt_tensor **singular_values) {
  const char *op = "linalg.lstsq";
  (void)rcond;
  *solution = *residuals = *rank = *singular_values = NULL;
  lt_lstsq_driver drv;
  int64_t batch[LT_MAX_DIMS];
  int nb = lt_meta_lstsq_shape(op, A, B, batch);
  if (nb < 0 || lt_meta_lstsq_driver(op, driver, &drv)) return -1;
  lt_dtype dt = (lt_dtype)A->dtype, rdt = lt_dtype_to_real(dt);
  int na = A->ndim - 2;
  int64_t m = A->sizes[na], n = A->sizes[na + 1], k = B->sizes[B->ndim - 1], mn = imin(m, n);
  /* the solution is the first n rows of B's block, which has room for max(m, n) */
  *solution = block(dt, nb, batch, imax(m, n), k, n, k);
  *residuals = m > n && drv != LT_LSTSQ_GELSY ? batched(rdt, nb, batch, 1, &k) : empty1(rdt);
  *rank = drv != LT_LSTSQ_GELS ? batched(LT_INT64, nb, batch, 0, NULL) : empty1(LT_INT64);
  *singular_values = drv == LT_LSTSQ_GELSD || drv == LT_LSTSQ_GELSS ? batched(rdt, nb, batch, 1, &mn) : empty1(rdt);
  lt_tensor **r[] = {solution, residuals, rank, singular_values};
  return all_made(r, 4);
}

/* ---- QR and Householder products ---- */

int lt_metadev_geqrf(lt_tensor *self, lt_tensor **a, lt_tensor **tau) {
  *a = *tau = NULL;
  if (lt_meta_spectral_matrix("geqrf", "self", self, false) < 0) return -1;
  int nb = self->ndim - 2;
  int64_t m = self->sizes[nb], n = self->sizes[nb + 1], k = imin(m, n);
  *a = colmajor((lt_dtype)self->dtype, nb, self->sizes, m, n);
  *tau = batched((lt_dtype)self->dtype, nb, self->sizes, 1, &k);
  lt_tensor **r[] = {a, tau};
  return all_made(r, 2);
}

lt_tensor *lt_metadev_linalg_householder_product(lt_tensor *A, lt_tensor *tau) {
  if (lt_meta_householder("linalg.householder_product", A, tau) < 0) return NULL;
  int nb = A->ndim - 2;
  return colmajor((lt_dtype)A->dtype, nb, A->sizes, A->sizes[nb], A->sizes[nb + 1]);
}

lt_tensor *lt_metadev_ormqr(lt_tensor *self, lt_tensor *input2, lt_tensor *input3, bool left, bool transpose) {
  (void)transpose;
  if (lt_meta_ormqr("ormqr", self, input2, input3, left) < 0) return NULL;
  int nb = input3->ndim - 2;
  return colmajor((lt_dtype)self->dtype, nb, input3->sizes, input3->sizes[nb], input3->sizes[nb + 1]);
}

int lt_metadev_linalg_qr(lt_tensor *A, const char *mode, lt_tensor **Q, lt_tensor **R) {
  const char *op = "linalg.qr";
  *Q = *R = NULL;
  int md = lt_meta_qr_mode(op, mode);
  if (md < 0 || lt_meta_spectral_matrix(op, "A", A, false) < 0) return -1;
  lt_dtype dt = (lt_dtype)A->dtype;
  int nb = A->ndim - 2;
  int64_t m = A->sizes[nb], n = A->sizes[nb + 1], k = imin(m, n);
  int64_t qc = md == 2 ? 0 : (md == 1 ? m : k);   /* Q's columns; mode "r": no Q */
  int64_t rr = md == 1 ? m : k;                   /* R's rows */
  /* Q is formed in A's block, which has room for m x max(n, qc) */
  *Q = qc > 0 ? block(dt, nb, A->sizes, m, imax(n, qc), m, qc) : empty1(dt);
  *R = colmajor(dt, nb, A->sizes, rr, n);
  lt_tensor **r[] = {Q, R};
  return all_made(r, 2);
}

/* ---- eigen and singular values ---- */

int lt_metadev__linalg_eigh(lt_tensor *A, const char *UPLO, bool compute_v, lt_tensor **eigenvalues,
                            lt_tensor **eigenvectors) {
  const char *op = compute_v ? "linalg.eigh" : "linalg.eigvalsh";
  *eigenvalues = *eigenvectors = NULL;
  if (!lt_meta_eigh_uplo(op, UPLO) || lt_meta_spectral_matrix(op, "A", A, true) < 0) return -1;
  lt_dtype dt = (lt_dtype)A->dtype;
  int nb = A->ndim - 2;
  int64_t n = A->sizes[nb];
  *eigenvalues = batched(lt_dtype_to_real(dt), nb, A->sizes, 1, &n);   /* real, also for complex A */
  *eigenvectors = compute_v ? colmajor(dt, nb, A->sizes, n, n) : empty1(dt);
  lt_tensor **r[] = {eigenvalues, eigenvectors};
  return all_made(r, 2);
}

int lt_metadev__linalg_eig(lt_tensor *A, bool compute_v, lt_tensor **eigenvalues, lt_tensor **eigenvectors) {
  *eigenvalues = *eigenvectors = NULL;
  if (lt_meta_spectral_matrix(compute_v ? "linalg.eig" : "linalg.eigvals", "A", A, true) < 0) return -1;
  lt_dtype cdt = lt_dtype_to_complex((lt_dtype)A->dtype);   /* complex, also for real A */
  int nb = A->ndim - 2;
  int64_t n = A->sizes[nb];
  *eigenvalues = batched(cdt, nb, A->sizes, 1, &n);
  *eigenvectors = compute_v ? colmajor(cdt, nb, A->sizes, n, n) : empty1(cdt);
  lt_tensor **r[] = {eigenvalues, eigenvectors};
  return all_made(r, 2);
}

int lt_metadev__linalg_svd(lt_tensor *A, bool full_matrices, bool compute_uv, lt_tensor **U, lt_tensor **S,
                           lt_tensor **Vh) {
  *U = *S = *Vh = NULL;
  if (lt_meta_spectral_matrix(compute_uv ? "linalg.svd" : "linalg.svdvals", "A", A, false) < 0) return -1;
  lt_dtype dt = (lt_dtype)A->dtype;
  int nb = A->ndim - 2;
  int64_t m = A->sizes[nb], n = A->sizes[nb + 1], k = imin(m, n);
  *S = batched(lt_dtype_to_real(dt), nb, A->sizes, 1, &k);   /* real, also for complex A */
  if (compute_uv) {
    *U = colmajor(dt, nb, A->sizes, m, full_matrices ? m : k);
    *Vh = colmajor(dt, nb, A->sizes, full_matrices ? n : k, n);
  } else {
    *U = empty1(dt);
    *Vh = empty1(dt);
  }
  lt_tensor **r[] = {U, S, Vh};
  return all_made(r, 3);
}

lt_tensor *lt_metadev__linalg_spectral_trsolve(lt_tensor *A, lt_tensor *B, bool upper) {
  (void)upper;
  if (lt_meta_spectral_trsolve("_linalg_spectral_trsolve", A, B) < 0) return NULL;
  int nb = A->ndim - 2;
  return colmajor((lt_dtype)A->dtype, nb, A->sizes, A->sizes[nb], B->sizes[B->ndim - 1]);
}

/* ---- Torch7's pstrf and eig: one 2-D matrix, contiguous results ---- */

int lt_metadev__pstrf(lt_tensor *self, bool upper, double tol, lt_tensor **factor, lt_tensor **pivots) {
  (void)upper; (void)tol;
  *factor = *pivots = NULL;
  if (lt_meta_t7_square("pstrf", self) < 0) return -1;
  *factor = batched((lt_dtype)self->dtype, 0, NULL, 2, self->sizes);
  *pivots = batched(LT_INT32, 0, NULL, 1, self->sizes);
  lt_tensor **r[] = {factor, pivots};
  return all_made(r, 2);
}

int lt_metadev__eig_real(lt_tensor *self, bool eigenvectors, lt_tensor **eigenvalues, lt_tensor **vectors) {
  *eigenvalues = *vectors = NULL;
  if (lt_meta_t7_square("eig", self) < 0) return -1;
  int64_t n = self->sizes[0], esz[2] = {n, 2}, vsz[2] = {eigenvectors ? n : 0, eigenvectors ? n : 0};
  *eigenvalues = batched((lt_dtype)self->dtype, 0, NULL, 2, esz);   /* (real, imaginary) rows */
  *vectors = batched((lt_dtype)self->dtype, 0, NULL, 2, vsz);
  lt_tensor **r[] = {eigenvalues, vectors};
  return all_made(r, 2);
}
