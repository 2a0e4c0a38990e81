/*
** linalg_solve.c — the CPU kernels of the LU family (src/ops/linalg_solve.lua):
** linalg.solve_ex, linalg.lu_factor_ex, linalg.lu_solve, linalg.det,
** _linalg_slogdet and the permutation matrix of LU's pivots, for float32,
** float64, complex64 and complex128. Each copies its matrices into
** column-major blocks (lapack_batch.h), calls LAPACK's getrf / getrs of the
** dtype's letter on each, and returns the blocks as tensors; the checks and
** the failure messages are meta/linalg_solve.c's.
*/
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kernels_cpu.h"
#include "cpu/lapack.h"
#include "cpu/lapack_batch.h"
#include "meta/linalg_solve.h"
#include "core/views.h"

static lt_lapack_int ld(int64_t n) { return n > 1 ? (lt_lapack_int)n : 1; }

/* LAPACK's integers are 32-bit: refuse a matrix whose dims overflow them */
static int fits(const char *op, int64_t a, int64_t b) {
  if (a <= INT32_MAX && b <= INT32_MAX && a * b <= INT32_MAX) return 0;
  return lt_error("%s: a %lld x %lld matrix is too large for LAPACK's 32-bit indices", op, (long long)a, (long long)b);
}

/* t (*, n) seen as (*, n, 1) (left) or (*, 1, n): a view */
static lt_tensor *as_matrix(lt_tensor *t, bool left) { return lt_strided_unsqueeze(t, left ? t->ndim : t->ndim - 1); }

/* ---- solve: getrf then getrs on each matrix ---- */

typedef struct solve_ctx {
  lt_lapack_batch a, b;
  lt_lapack_int *ipiv;          /* count x n */
  int32_t *info;
  lt_lapack_int n, k;
  char trans;                   /* 'N': A X = B; 'T': A^T X = B (the right-hand form) */
  lt_lapack_kind kind;
} solve_ctx;

static int solve_one(void *p, int64_t i) {
  solve_ctx *c = p;
  lt_lapack_int n = c->n, k = c->k, lda = ld(n), info = 0;
  lt_lapack_int *ipiv = c->ipiv + i * n;
  void *A = lt_lapack_batch_at(&c->a, i), *B = lt_lapack_batch_at(&c->b, i);
  if (n == 0) { c->info[i] = 0; return 0; }
  LT_LAPACK_CALL(c->kind, getrf_, &n, &n, A, &lda, ipiv, &info);
  c->info[i] = info;
  if (info != 0 || k == 0) return 0;
  LT_LAPACK_CALL(c->kind, getrs_, &c->trans, &n, &k, A, &lda, ipiv, B, &lda, &info, 1);
  if (info) c->info[i] = info;
  return 0;
}

int lt_cpu_linalg_solve_ex(lt_tensor *A, lt_tensor *B, bool left, bool check_errors, lt_tensor **result,
                           lt_tensor **info) {
  const char *op = "linalg.solve_ex";
  lt_linalg_rhs g;
  if (lt_meta_linalg_rhs(op, "A", A, "B", B, left, false, &g) || fits(op, g.n, g.n) || fits(op, g.n, g.k)) return -1;
  lt_dtype dt = lt_tensor_dtype(A);
  solve_ctx c;
  memset(&c, 0, sizeof c);
  c.n = (lt_lapack_int)g.n;
  c.k = (lt_lapack_int)g.k;
  c.kind = lt_lapack_kind_of(dt);
  /* A's row-major memory is A^T in column-major order, so the block is a plain copy of it
  ** and getrf factors A^T; then A X = B is getrs with 'T', and X A = B (A^T X^T = B^T, B
  ** read transposed) getrs with 'N'. 'T' transposes without conjugating, so the same
  ** holds for complex A. */
  c.trans = left ? 'T' : 'N';
  lt_tensor *bm = g.vector ? as_matrix(B, left) : (lt_tensor_retain(B), B);
  lt_tensor *inf = lt_lapack_int_tensor(lt_tensor_device(A), g.nbatch, g.batch, 0, NULL);
  int rc = -1;
  if (!bm || !inf) goto done;
  if (lt_lapack_batch_from(&c.a, A, true, dt, g.nbatch, g.batch)) goto done;
  if (lt_lapack_batch_from(&c.b, bm, !left, dt, g.nbatch, g.batch)) goto done;
  c.info = lt_tensor_data(inf);
  c.ipiv = malloc(sizeof(lt_lapack_int) * (size_t)(c.a.count * g.n + 1));
  if (!c.ipiv) { lt_error("%s: out of memory for the pivots", op); goto done; }
  lt_lapack_batch_run(c.a.count, g.n, solve_one, &c);
  if (check_errors && lt_meta_linalg_info_error(op, LT_LINALG_SINGULAR, c.info, c.a.count, g.nbatch > 0)) goto done;
  if (g.vector) {
    /* buf is (batch, 1, n): the vectors without the unit dim */
    *result = lt_strided_squeeze(c.b.buf, g.nbatch);
  } else {
    *result = lt_lapack_batch_tensor(&c.b, !left);
  }
  if (!*result) goto done;
  *info = inf;
  inf = NULL;
  rc = 0;
done:
  free(c.ipiv);
  lt_lapack_batch_release(&c.a);
  lt_lapack_batch_release(&c.b);
  lt_tensor_release(bm);
  lt_tensor_release(inf);
  return rc;
}

/* ---- lu_factor_ex: getrf ---- */

typedef struct lu_ctx {
  lt_lapack_batch a;
  lt_lapack_int *piv;           /* count x min(m, n), LAPACK's 1-based swaps: PyTorch's too */
  int32_t *info;
  lt_lapack_int m, n, k;
  lt_lapack_kind kind;
} lu_ctx;

static int lu_one(void *p, int64_t i) {
  lu_ctx *c = p;
  lt_lapack_int m = c->m, n = c->n, lda = ld(m), info = 0;
  if (m > 0 && n > 0) LT_LAPACK_CALL(c->kind, getrf_, &m, &n, lt_lapack_batch_at(&c->a, i), &lda, c->piv + i * c->k, &info);
  c->info[i] = info;
  return 0;
}

int lt_cpu_linalg_lu_factor_ex(lt_tensor *A, bool pivot, bool check_errors, lt_tensor **LU, lt_tensor **pivots,
                               lt_tensor **info) {
  const char *op = "linalg.lu_factor_ex";
  if (lt_meta_lu_factor(op, A, pivot)) return -1;
  int nb = A->ndim - 2;
  int64_t m = A->sizes[nb], n = A->sizes[nb + 1], k = m < n ? m : n;
  if (fits(op, m, n)) return -1;
  lu_ctx c;
  memset(&c, 0, sizeof c);
  c.m = (lt_lapack_int)m; c.n = (lt_lapack_int)n; c.k = (lt_lapack_int)k;
  c.kind = lt_lapack_kind_of(lt_tensor_dtype(A));
  lt_device dev = lt_tensor_device(A);
  lt_tensor *piv = lt_lapack_int_tensor(dev, nb, A->sizes, 1, &k);
  lt_tensor *inf = lt_lapack_int_tensor(dev, nb, A->sizes, 0, NULL);
  if (!piv || !inf || lt_lapack_batch_from(&c.a, A, false, lt_tensor_dtype(A), nb, A->sizes)) goto fail;
  c.piv = lt_tensor_data(piv);
  c.info = lt_tensor_data(inf);
  lt_lapack_batch_run(c.a.count, k, lu_one, &c);
  if (check_errors && lt_meta_linalg_info_error(op, LT_LINALG_SINGULAR, c.info, c.a.count, nb > 0)) goto fail;
  if (!(*LU = lt_lapack_batch_tensor(&c.a, false))) goto fail;
  lt_lapack_batch_release(&c.a);
  *pivots = piv;
  *info = inf;
  return 0;
fail:
  lt_lapack_batch_release(&c.a);
  lt_tensor_release(piv);
  lt_tensor_release(inf);
  return -1;
}

/* ---- lu_solve: getrs with a given factorization ---- */

typedef struct lus_ctx {
  lt_lapack_batch lu, b;
  const lt_lapack_int *piv;     /* count x n */
  lt_lapack_int n, k;
  char trans;
  bool conj;                    /* conjugate B before and X after: X A^H = B as A X^H = B^H */
  lt_lapack_kind kind;
} lus_ctx;

/* the complex conjugate of n elements in place: negate every imaginary part */
static void conj_inplace(void *p, int64_t n, lt_lapack_kind kind) {
  if (kind == LT_LAPACK_C)
    for (int64_t j = 0; j < n; j++) ((float *)p)[2 * j + 1] = -((float *)p)[2 * j + 1];
  else if (kind == LT_LAPACK_Z)
    for (int64_t j = 0; j < n; j++) ((double *)p)[2 * j + 1] = -((double *)p)[2 * j + 1];
}

static int lus_one(void *p, int64_t i) {
  lus_ctx *c = p;
  lt_lapack_int n = c->n, k = c->k, lda = ld(n), info = 0;
  void *B = lt_lapack_batch_at(&c->b, i);
  if (n == 0 || k == 0) return 0;
  if (c->conj) conj_inplace(B, (int64_t)n * k, c->kind);
  LT_LAPACK_CALL(c->kind, getrs_, &c->trans, &n, &k, lt_lapack_batch_at(&c->lu, i), &lda, c->piv + i * n, B, &lda,
                 &info, 1);
  if (c->conj) conj_inplace(B, (int64_t)n * k, c->kind);
  return 0;
}

/* pivots: int32 (*, n) (meta/linalg_solve.h) with 1 <= p <= rows (a bad one would make LAPACK read out of bounds) */
static int check_pivots(const char *op, const lt_tensor *piv, int64_t n, int64_t rows) {
  if (lt_meta_linalg_pivots(op, piv, n)) return -1;
  lt_tensor *pc = lt_tensor_contiguous((lt_tensor *)piv);
  if (!pc) return -1;
  const int32_t *p = lt_tensor_data(pc);
  for (int64_t i = 0; i < pc->numel; i++)
    if (p[i] < 1 || p[i] > rows) {
      lt_tensor_release(pc);
      return lt_error("%s: argument 'pivots' holds %d, outside 1..%lld", op, (int)p[i], (long long)rows);
    }
  lt_tensor_release(pc);
  return 0;
}


lt_tensor *lt_cpu_linalg_lu_solve(lt_tensor *LU, lt_tensor *pivots, lt_tensor *B, bool left, bool adjoint) {
  const char *op = "linalg.lu_solve";
  lt_linalg_rhs g;
  if (lt_meta_linalg_rhs(op, "LU", LU, "B", B, left, true, &g) || fits(op, g.n, g.n) || fits(op, g.n, g.k)) return NULL;
  if (check_pivots(op, pivots, g.n, g.n)) return NULL;
  int64_t batch[LT_MAX_DIMS];
  int nb = lt_meta_linalg_batch(op, "pivots", pivots, 1, g.nbatch, g.batch, batch);
  if (nb < 0) return NULL;
  lus_ctx c;
  memset(&c, 0, sizeof c);
  c.n = (lt_lapack_int)g.n;
  c.k = (lt_lapack_int)g.k;
  c.kind = lt_lapack_kind_of(lt_tensor_dtype(LU));
  bool cplx = lt_lapack_kind_complex(c.kind);
  /* X op(A) = B is op(A)^T X^T = B^T, with B^T in the block. Adjoint is A^H for complex
  ** A ('C'); X A^H = B is conj(A) X^T = B^T, which getrs cannot say, so it is solved as
  ** A conj(X^T) = conj(B^T) */
  if (left) c.trans = adjoint ? (cplx ? 'C' : 'T') : 'N';
  else c.trans = adjoint ? 'N' : 'T';
  c.conj = !left && adjoint && cplx;
  lt_tensor *r = NULL, *piv = NULL;
  int64_t psz[LT_MAX_DIMS];
  memcpy(psz, batch, sizeof(int64_t) * (size_t)nb);
  psz[nb] = g.n;
  if (lt_lapack_batch_from(&c.lu, LU, false, lt_tensor_dtype(LU), nb, batch)) goto done;
  if (lt_lapack_batch_from(&c.b, B, !left, lt_tensor_dtype(LU), nb, batch)) goto done;
  if (!(piv = lt_tensor_new(LT_INT32, lt_tensor_device(LU), nb + 1, psz)) || lt_tensor_copy_(piv, pivots)) goto done;
  c.piv = lt_tensor_data(piv);
  lt_lapack_batch_run(c.b.count, g.n, lus_one, &c);
  r = lt_lapack_batch_tensor(&c.b, !left);
done:
  lt_lapack_batch_release(&c.lu);
  lt_lapack_batch_release(&c.b);
  lt_tensor_release(piv);
  return r;
}

/* ---- det and slogdet: the product of U's diagonal and the parity of the swaps ---- */

typedef struct det_ctx {
  lt_lapack_batch a;
  lt_lapack_int *ipiv;
  lt_lapack_int n;
  lt_lapack_kind kind;
  void *det;                    /* det[i], or logabsdet[i] (real) with sign[i] */
  void *sign;
} det_ctx;

/* T the element type, R its real type; SIGN(u) is u / |u| (a real u: its sign) */
#define DET_ONE(NAME, T, R, LOG, ABS, SIGN)                                                                  \
  static void NAME(det_ctx *c, int64_t i) {                                                                  \
    lt_lapack_int n = c->n, lda = ld(n), info = 0, *ipiv = c->ipiv + i * n;                                  \
    T *a = lt_lapack_batch_at(&c->a, i);                                                                     \
    if (n > 0) LT_LAPACK_CALL(c->kind, getrf_, &n, &n, (void *)a, &lda, ipiv, &info);                       \
    /* info > 0 leaves a zero on U's diagonal, which makes the product zero: no special case */              \
    T prod = 1, sgn = 1;                                                                                     \
    R logabs = 0;                                                                                            \
    for (lt_lapack_int j = 0; j < n; j++) {                                                                  \
      T u = a[(int64_t)j * lda + j];                                                                         \
      R au = ABS(u);                                                                                         \
      if (ipiv[j] != j + 1) { prod = -prod; sgn = -sgn; }                                                    \
      prod *= u;                                                                                             \
      logabs += LOG(au);                                                                                     \
      sgn = au == 0 ? 0 : sgn * SIGN(u, au);                                                                 \
    }                                                                                                        \
    if (c->sign) {                                                                                           \
      /* a product of many unit numbers drifts off the unit circle: put it back */                          \
      R as = ABS(sgn);                                                                                       \
      ((R *)c->det)[i] = logabs;                                                                             \
      ((T *)c->sign)[i] = as == 0 ? 0 : sgn / as;                                                            \
    } else ((T *)c->det)[i] = prod;                                                                          \
  }
#define REAL_SIGN(u, au) ((u) < 0 ? -1 : 1)
#define COMPLEX_SIGN(u, au) ((u) / (au))
DET_ONE(det_one_d, double, double, log, fabs, REAL_SIGN)
DET_ONE(det_one_s, float, float, logf, fabsf, REAL_SIGN)
DET_ONE(det_one_z, lt_cdouble, double, log, cabs, COMPLEX_SIGN)
DET_ONE(det_one_c, lt_cfloat, float, logf, cabsf, COMPLEX_SIGN)

static int det_one(void *p, int64_t i) {
  det_ctx *c = p;
  switch (c->kind) {
  case LT_LAPACK_S: det_one_s(c, i); break;
  case LT_LAPACK_D: det_one_d(c, i); break;
  case LT_LAPACK_C: det_one_c(c, i); break;
  default: det_one_z(c, i); break;
  }
  return 0;
}

/* det (sign NULL) or slogdet into new batch-shaped tensors: det and sign of A's
** dtype, logabsdet of its real dtype (as PyTorch: a complex sign of modulus 1) */
static int determinant(const char *op, lt_tensor *A, lt_tensor **det, lt_tensor **sign) {
  if (lt_meta_linalg_matrix(op, "A", A, true)) return -1;
  int nb = A->ndim - 2;
  int64_t n = A->sizes[nb];
  if (fits(op, n, n)) return -1;
  lt_dtype dt = lt_tensor_dtype(A);
  det_ctx c;
  memset(&c, 0, sizeof c);
  c.n = (lt_lapack_int)n;
  c.kind = lt_lapack_kind_of(dt);
  lt_tensor *d = lt_tensor_new(sign ? lt_dtype_to_real(dt) : dt, lt_tensor_device(A), nb, A->sizes);
  lt_tensor *s = sign ? lt_tensor_new(dt, lt_tensor_device(A), nb, A->sizes) : NULL;
  /* det A^T = det A: the block is a plain copy of A's row-major memory */
  if (!d || (sign && !s) || lt_lapack_batch_from(&c.a, A, true, dt, nb, A->sizes)) goto fail;
  c.det = lt_tensor_data(d);
  c.sign = s ? lt_tensor_data(s) : NULL;
  c.ipiv = malloc(sizeof(lt_lapack_int) * (size_t)(c.a.count * n + 1));
  if (!c.ipiv) { lt_error("%s: out of memory for the pivots", op); goto fail; }
  lt_lapack_batch_run(c.a.count, n, det_one, &c);
  free(c.ipiv);
  lt_lapack_batch_release(&c.a);
  *det = d;
  if (sign) *sign = s;
  return 0;
fail:
  lt_lapack_batch_release(&c.a);
  lt_tensor_release(d);
  lt_tensor_release(s);
  return -1;
}

lt_tensor *lt_cpu_linalg_det(lt_tensor *A) {
  lt_tensor *d = NULL;
  return determinant("linalg.det", A, &d, NULL) ? NULL : d;
}

int lt_cpu__linalg_slogdet(lt_tensor *A, lt_tensor **logabsdet, lt_tensor **sign) {
  return determinant("linalg.slogdet", A, logabsdet, sign);
}

/* ---- the permutation matrix of LU's pivots ---- */

lt_tensor *lt_cpu__lu_permutation(lt_tensor *LU, lt_tensor *pivots) {
  const char *op = "lu_unpack";
  if (lt_meta_linalg_matrix(op, "LU_data", LU, false)) return NULL;
  int nb = LU->ndim - 2;
  int64_t m = LU->sizes[nb], n = LU->sizes[nb + 1], k = m < n ? m : n;
  if (check_pivots(op, pivots, k, m)) return NULL;
  if (pivots->ndim != nb + 1 || memcmp(pivots->sizes, LU->sizes, sizeof(int64_t) * (size_t)nb) != 0)
    return lt_error_null("%s: argument 'LU_pivots' must have the batch dims of 'LU_data'", op);
  int64_t sz[LT_MAX_DIMS];
  memcpy(sz, LU->sizes, sizeof(int64_t) * (size_t)nb);
  sz[nb] = sz[nb + 1] = m;
  lt_dtype dt = lt_tensor_dtype(LU);
  lt_tensor *P = lt_tensor_new_zeros(dt, lt_tensor_device(LU), nb + 2, sz);
  lt_tensor *pc = lt_tensor_contiguous(pivots);
  int64_t *perm = malloc(sizeof(int64_t) * (size_t)(m + 1));
  if (!P || !pc || !perm) {
    if (P && pc) lt_error("%s: out of memory", op);
    free(perm); lt_tensor_release(P); lt_tensor_release(pc);
    return NULL;
  }
  const int32_t *piv = lt_tensor_data(pc);
  int64_t count = lt_shape_numel(nb, LU->sizes);
  for (int64_t b = 0; b < count; b++) {
    for (int64_t j = 0; j < m; j++) perm[j] = j;
    /* the swaps in order: row perm[j] of A is row j of L U */
    for (int64_t j = 0; j < k; j++) {
      int64_t t = perm[j], o = piv[b * k + j] - 1;
      perm[j] = perm[o];
      perm[o] = t;
    }
    /* a one: the real part of a complex element */
    for (int64_t j = 0; j < m; j++) {
      int64_t at = b * m * m + perm[j] * m + j;
      switch (dt) {
      case LT_FLOAT64: ((double *)lt_tensor_data(P))[at] = 1; break;
      case LT_COMPLEX128: ((double *)lt_tensor_data(P))[2 * at] = 1; break;
      case LT_COMPLEX64: ((float *)lt_tensor_data(P))[2 * at] = 1; break;
      default: ((float *)lt_tensor_data(P))[at] = 1; break;
      }
    }
  }
  free(perm);
  lt_tensor_release(pc);
  return P;
}
