/*
** linalg_solve_chol.c — the CPU kernels of linalg.cholesky_ex (LAPACK's
** potrf: A = L L^H for Hermitian complex A) and linalg.solve_triangular
** (BLAS's trsm, which, as PyTorch's kernel, divides by a zero diagonal rather
** than refusing it), over the column-major batches of lapack_batch.h, for the
** four dtypes LAPACK has.
*/
#include <string.h>
#include <cblas.h>
#include "kernels_cpu.h"
#include "cpu/lapack.h"
#include "cpu/lapack_batch.h"
#include "meta/linalg_solve.h"

/* ---- Cholesky ---- */

typedef struct chol_ctx {
  lt_lapack_batch a;
  int32_t *info;
  lt_lapack_int n;
  size_t es;                    /* element size */
  lt_lapack_kind kind;
  bool upper;
} chol_ctx;

static int chol_one(void *p, int64_t i) {
  chol_ctx *c = p;
  lt_lapack_int n = c->n, lda = n > 1 ? n : 1, info = 0;
  char uplo = c->upper ? 'U' : 'L';
  char *a = lt_lapack_batch_at(&c->a, i);
  if (n > 0) LT_LAPACK_CALL(c->kind, potrf_, &uplo, &n, (void *)a, &lda, &info, 1);
  c->info[i] = info;
  /* potrf leaves the other triangle as it was: the factor has zeros there.
  ** Column-major: element (r, col) is at col * n + r; the zeroed part of a
  ** column is one run: rows col+1.. (upper) or rows ..col-1 (lower) */
  for (lt_lapack_int col = 0; col < n; col++) {
    int64_t r0 = c->upper ? col + 1 : 0, r1 = c->upper ? n : col;
    if (r1 > r0) memset(a + ((int64_t)col * n + r0) * (int64_t)c->es, 0, (size_t)(r1 - r0) * c->es);
  }
  return 0;
}

int lt_cpu_linalg_cholesky_ex(lt_tensor *A, bool upper, bool check_errors, lt_tensor **L, lt_tensor **info) {
  const char *op = "linalg.cholesky_ex";
  if (lt_meta_linalg_matrix(op, "A", A, true)) return -1;
  int nb = A->ndim - 2;
  int64_t n = A->sizes[nb];
  if (n > 46340) return lt_error("%s: the matrix is too large for LAPACK's 32-bit indices", op);
  chol_ctx c;
  memset(&c, 0, sizeof c);
  c.n = (lt_lapack_int)n;
  c.upper = upper;
  c.kind = lt_lapack_kind_of(lt_tensor_dtype(A));
  c.es = lt_dtype_size(lt_tensor_dtype(A));
  lt_tensor *inf = lt_lapack_int_tensor(lt_tensor_device(A), nb, A->sizes, 0, NULL);
  if (!inf || lt_lapack_batch_from(&c.a, A, false, lt_tensor_dtype(A), nb, A->sizes)) goto fail;
  c.info = lt_tensor_data(inf);
  lt_lapack_batch_run(c.a.count, n, chol_one, &c);
  if (check_errors && lt_meta_linalg_info_error(op, LT_LINALG_NOT_PD, c.info, c.a.count, nb > 0)) goto fail;
  if (!(*L = lt_lapack_batch_tensor(&c.a, false))) goto fail;
  lt_lapack_batch_release(&c.a);
  *info = inf;
  return 0;
fail:
  lt_lapack_batch_release(&c.a);
  lt_tensor_release(inf);
  return -1;
}

/* ---- triangular solve ---- */

typedef struct tri_ctx {
  lt_lapack_batch a, b;
  bool upper, left, unit;
  lt_lapack_kind kind;
} tri_ctx;

static int tri_one(void *p, int64_t i) {
  tri_ctx *c = p;
  blasint m = (blasint)c->b.rows, n = (blasint)c->b.cols, lda = (blasint)c->a.rows;
  if (m == 0 || n == 0) return 0;
  enum CBLAS_SIDE side = c->left ? CblasLeft : CblasRight;
  enum CBLAS_UPLO uplo = c->upper ? CblasUpper : CblasLower;
  enum CBLAS_DIAG diag = c->unit ? CblasUnit : CblasNonUnit;
  void *a = lt_lapack_batch_at(&c->a, i), *b = lt_lapack_batch_at(&c->b, i);
  static const float one_c[2] = { 1, 0 };
  static const double one_z[2] = { 1, 0 };
  switch (c->kind) {
  case LT_LAPACK_S: cblas_strsm(CblasColMajor, side, uplo, CblasNoTrans, diag, m, n, 1.0f, a, lda, b, m); break;
  case LT_LAPACK_D: cblas_dtrsm(CblasColMajor, side, uplo, CblasNoTrans, diag, m, n, 1.0, a, lda, b, m); break;
  case LT_LAPACK_C: cblas_ctrsm(CblasColMajor, side, uplo, CblasNoTrans, diag, m, n, one_c, a, lda, b, m); break;
  default: cblas_ztrsm(CblasColMajor, side, uplo, CblasNoTrans, diag, m, n, one_z, a, lda, b, m); break;
  }
  return 0;
}

lt_tensor *lt_cpu_linalg_solve_triangular(lt_tensor *A, lt_tensor *B, bool upper, bool left, bool unitriangular) {
  const char *op = "linalg.solve_triangular";
  lt_linalg_rhs g;
  if (lt_meta_linalg_rhs(op, "A", A, "B", B, left, true, &g)) return NULL;
  if (g.n > 46340 || g.k > 46340 || g.n * g.k > INT32_MAX)
    return lt_error_null("%s: the matrices are too large for BLAS's 32-bit indices", op);
  tri_ctx c;
  memset(&c, 0, sizeof c);
  c.upper = upper;
  c.left = left;
  c.unit = unitriangular;
  c.kind = lt_lapack_kind_of(lt_tensor_dtype(A));
  lt_tensor *r = NULL;
  if (!lt_lapack_batch_from(&c.a, A, false, lt_tensor_dtype(A), g.nbatch, g.batch) &&
      !lt_lapack_batch_from(&c.b, B, false, lt_tensor_dtype(A), g.nbatch, g.batch)) {
    lt_lapack_batch_run(c.b.count, g.n, tri_one, &c);
    r = lt_lapack_batch_tensor(&c.b, false);
  }
  lt_lapack_batch_release(&c.a);
  lt_lapack_batch_release(&c.b);
  return r;
}
