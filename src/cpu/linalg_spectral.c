/*
** linalg_spectral.c — the CPU kernels of src/ops/linalg_spectral.lua: QR
** (geqrf, orgqr/ungqr, ormqr/unmqr), the Hermitian eigendecomposition
** (syevd/heevd), the SVD (gesdd) and a triangular solve (trtrs), one LAPACK
** call per matrix of the batch over the column-major blocks of lapack_batch.h
** (eig is in linalg_spectral_eig.c). Each worker is written once for a LAPACK
** precision prefix P (s, d, c, z), element type T and real type R; the real
** and complex drivers differ only where LAPACK's arguments do (the real work
** arrays of heevd and gesdd, the or/un names, 'T' or 'C' for Q's adjoint).
*/
#include <stdlib.h>
#include <string.h>
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "cpu/lapack.h"
#include "cpu/lapack_batch.h"
#include "meta/linalg_spectral.h"
#include "core/error.h"

typedef lt_lapack_int lint;

/* an info of a worker that could not allocate its workspace (lt_lapack_failed's) */
#define NO_MEMORY (-1000)

/* a workspace size from the first element of a query's answer (real or complex) */
#define WORK_SIZE(q) ((lint)creal(q) > 1 ? (lint)creal(q) : 1)

/* the worker `name` of dtype dt, defined as s##name ... z##name */
#define PICK(dt, name) ((dt) == LT_FLOAT64 ? d##name : (dt) == LT_FLOAT32 ? s##name : (dt) == LT_COMPLEX128 ? z##name : c##name)

static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

/* a new contiguous (batch..., last) tensor, the batch dims of like (all but `keep`) */
static lt_tensor *batch_vector(lt_dtype dt, const lt_tensor *like, int keep, int64_t last) {
  int64_t sz[LT_MAX_DIMS];
  int nb = like->ndim - keep;
  for (int i = 0; i < nb; i++) sz[i] = like->sizes[i];
  sz[nb] = last;
  return lt_tensor_new(dt, lt_tensor_device(like), nb + 1, sz);
}

static lt_tensor *empty_like_dtype(const lt_tensor *like) {
  int64_t z = 0;
  return lt_tensor_new((lt_dtype)like->dtype, lt_tensor_device(like), 1, &z);
}

/* a zeroed batch of rows x cols matrices over the batch dims of A (all but its last two) */
static int batch_zeros(lt_lapack_batch *b, lt_dtype dt, const lt_tensor *A, int64_t rows, int64_t cols) {
  return lt_lapack_batch_zeros(b, dt, lt_tensor_device(A), A->ndim - 2, A->sizes, rows, cols);
}

/* ---- QR ---- */

typedef struct qr_ctx {
  lt_lapack_batch a, r;          /* the input (Q formed in it), R (r.buf NULL: none) */
  lt_tensor *tau;                /* (batch..., k), or NULL: kept inside */
  lint m, n, k, qcols;           /* qcols: Q's columns to form (0: none) */
} qr_ctx;

#define DEF_QR(P, T, Q)                                                                         \
  static int P##qr_one(void *vc, int64_t b) {                                                   \
    qr_ctx *c = vc;                                                                             \
    T *a = lt_lapack_batch_at(&c->a, b), q, *tau, *work, tauk[1];                               \
    lint info = 0, lw = -1, lwo = -1, lda = c->m > 0 ? c->m : 1;                                \
    tau = c->tau ? (T *)lt_tensor_data(c->tau) + b * c->k : NULL;                               \
    if (!tau) { tau = malloc(sizeof(T) * (size_t)(c->k > 0 ? c->k : 1)); if (!tau) return NO_MEMORY; } \
    P##geqrf_(&c->m, &c->n, a, &lda, tauk, &q, &lw, &info);                                    \
    lw = WORK_SIZE(q);                                                                          \
    if (c->qcols > 0) { P##Q##gqr_(&c->m, &c->qcols, &c->k, a, &lda, tauk, &q, &lwo, &info); if (WORK_SIZE(q) > lw) lw = WORK_SIZE(q); } \
    work = malloc(sizeof(T) * (size_t)lw);                                                      \
    if (!work) { if (!c->tau) free(tau); return NO_MEMORY; }                                    \
    P##geqrf_(&c->m, &c->n, a, &lda, tau, work, &lw, &info);                                   \
    if (!info && c->r.buf) { /* R: the upper triangle of a's leading rows */                   \
      T *r = lt_lapack_batch_at(&c->r, b);                                                      \
      int64_t rr = c->r.rows;                                                                   \
      for (int64_t j = 0; j < c->n; j++)                                                        \
        for (int64_t i = 0; i <= j && i < rr; i++) r[j * rr + i] = a[j * lda + i];              \
    }                                                                                           \
    if (!info && c->qcols > 0) P##Q##gqr_(&c->m, &c->qcols, &c->k, a, &lda, tau, work, &lw, &info); \
    free(work);                                                                                 \
    if (!c->tau) free(tau);                                                                     \
    return info;                                                                                \
  }
DEF_QR(s, float, or)
DEF_QR(d, double, or)
DEF_QR(c, lt_cfloat, un)
DEF_QR(z, lt_cdouble, un)

static int run_qr(lt_dtype dt, qr_ctx *c, int64_t *bad) {
  double w = (double)c->m * c->n * (c->n + c->qcols);
  return lt_lapack_batch_each(c->a.count, w, PICK(dt, qr_one), c, bad);
}

int lt_cpu_linalg_qr(lt_tensor *A, const char *mode, lt_tensor **Q, lt_tensor **R) {
  const char *op = "linalg.qr";
  int md = lt_meta_qr_mode(op, mode);
  if (md < 0 || lt_meta_spectral_matrix(op, "A", A, false) < 0) return -1;
  lt_dtype dt = lt_tensor_dtype(A);
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = imin(m, n);
  int64_t qc = md == 2 ? 0 : (md == 1 ? m : k);   /* Q's columns */
  int64_t rr = md == 1 ? m : k;                   /* R's rows */
  qr_ctx c = {0};
  if (lt_lapack_dim(op, m, &c.m) < 0 || lt_lapack_dim(op, imax(n, qc), &c.n) < 0) return -1;
  c.n = (lint)n; c.k = (lint)k; c.qcols = (lint)qc;
  int rc = -1;
  int64_t bad = 0;
  /* complete with m > n forms an m x m Q in place: the block has m columns */
  if (lt_lapack_batch_padded(&c.a, A, dt, m, imax(n, qc)) < 0 || batch_zeros(&c.r, dt, A, rr, n) < 0) goto done;
  int info = run_qr(dt, &c, &bad);
  if (info) { lt_lapack_failed(op, info, bad, "QR failed"); goto done; }
  *Q = qc > 0 ? lt_lapack_batch_view(&c.a, m, qc) : empty_like_dtype(A);
  *R = lt_lapack_batch_view(&c.r, rr, n);
  if (!*Q || !*R) { lt_tensor_release(*Q); lt_tensor_release(*R); *Q = *R = NULL; goto done; }
  rc = 0;
done:
  lt_lapack_batch_release(&c.a);
  lt_lapack_batch_release(&c.r);
  return rc;
}

int lt_cpu_geqrf(lt_tensor *self, lt_tensor **a, lt_tensor **tau) {
  const char *op = "geqrf";
  if (lt_meta_spectral_matrix(op, "self", self, false) < 0) return -1;
  lt_dtype dt = lt_tensor_dtype(self);
  int64_t m = self->sizes[self->ndim - 2], n = self->sizes[self->ndim - 1], k = imin(m, n), bad = 0;
  qr_ctx c = {0};
  if (lt_lapack_dim(op, m, &c.m) < 0 || lt_lapack_dim(op, n, &c.n) < 0) return -1;
  c.k = (lint)k;
  if (lt_lapack_batch_padded(&c.a, self, dt, m, n) < 0) return -1;
  int info = (c.tau = batch_vector(dt, self, 2, k)) ? run_qr(dt, &c, &bad) : 0;
  if (!c.tau || info) {
    if (c.tau) lt_lapack_failed(op, info, bad, "QR failed");
    lt_lapack_batch_release(&c.a); lt_tensor_release(c.tau);
    return -1;
  }
  *a = lt_lapack_batch_view(&c.a, m, n);
  lt_lapack_batch_release(&c.a);
  *tau = c.tau;
  return *a ? 0 : (lt_tensor_release(c.tau), -1);
}

/* ---- householder_product (orgqr/ungqr) and ormqr (ormqr/unmqr) ---- */

typedef struct hh_ctx {
  lt_lapack_batch a, c;          /* reflectors, ormqr's C */
  lt_tensor *tau;                /* scales, contiguous */
  lint m, n, k, lda;             /* orgqr: Q m x n from k reflectors; ormqr: C m x n */
  char side, trans;
} hh_ctx;

#define DEF_HH(P, T, Q)                                                                         \
  static int P##orgqr_one(void *vc, int64_t b) {                                                \
    hh_ctx *c = vc;                                                                             \
    T *a = lt_lapack_batch_at(&c->a, b), *tau = (T *)lt_tensor_data(c->tau) + b * c->k, q, *work; \
    lint info = 0, lw = -1;                                                                     \
    P##Q##gqr_(&c->m, &c->n, &c->k, a, &c->lda, tau, &q, &lw, &info);                          \
    lw = WORK_SIZE(q);                                                                          \
    if (!(work = malloc(sizeof(T) * (size_t)lw))) return NO_MEMORY;                             \
    P##Q##gqr_(&c->m, &c->n, &c->k, a, &c->lda, tau, work, &lw, &info);                        \
    free(work);                                                                                 \
    return info;                                                                                \
  }                                                                                             \
  static int P##ormqr_one(void *vc, int64_t b) {                                                \
    hh_ctx *c = vc;                                                                             \
    T *a = lt_lapack_batch_at(&c->a, b), *tau = (T *)lt_tensor_data(c->tau) + b * c->k, q, *work; \
    T *cc = lt_lapack_batch_at(&c->c, b);                                                       \
    lint info = 0, lw = -1, ldc = c->m > 0 ? c->m : 1;                                          \
    P##Q##mqr_(&c->side, &c->trans, &c->m, &c->n, &c->k, a, &c->lda, tau, cc, &ldc, &q, &lw, &info, 1, 1); \
    lw = WORK_SIZE(q);                                                                          \
    if (!(work = malloc(sizeof(T) * (size_t)lw))) return NO_MEMORY;                             \
    P##Q##mqr_(&c->side, &c->trans, &c->m, &c->n, &c->k, a, &c->lda, tau, cc, &ldc, work, &lw, &info, 1, 1); \
    free(work);                                                                                 \
    return info;                                                                                \
  }
DEF_HH(s, float, or)
DEF_HH(d, double, or)
DEF_HH(c, lt_cfloat, un)
DEF_HH(z, lt_cdouble, un)

lt_tensor *lt_cpu_linalg_householder_product(lt_tensor *A, lt_tensor *tau) {
  const char *op = "linalg.householder_product";
  if (lt_meta_householder(op, A, tau) < 0) return NULL;
  lt_dtype dt = lt_tensor_dtype(A);
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = tau->sizes[tau->ndim - 1], bad = 0;
  hh_ctx c = {0};
  if (lt_lapack_dim(op, m, &c.m) < 0 || lt_lapack_dim(op, n, &c.n) < 0) return NULL;
  c.k = (lint)k; c.lda = c.m > 0 ? c.m : 1;
  if (lt_lapack_batch_padded(&c.a, A, dt, m, n) < 0) return NULL;
  c.tau = lt_tensor_to_dtype_contig(tau, dt);
  int info = c.tau ? lt_lapack_batch_each(c.a.count, (double)m * n * n, PICK(dt, orgqr_one), &c, &bad) : 0;
  lt_tensor *r = NULL;
  if (c.tau && info) lt_lapack_failed(op, info, bad, "orgqr failed");
  else if (c.tau) r = lt_lapack_batch_view(&c.a, m, n);
  lt_lapack_batch_release(&c.a);
  lt_tensor_release(c.tau);
  return r;
}

lt_tensor *lt_cpu_ormqr(lt_tensor *self, lt_tensor *input2, lt_tensor *input3, bool left, bool transpose) {
  const char *op = "ormqr";
  if (lt_meta_ormqr(op, self, input2, input3, left) < 0) return NULL;
  lt_dtype dt = lt_tensor_dtype(self);
  int64_t mn = self->sizes[self->ndim - 2], k = input2->sizes[input2->ndim - 1];
  int64_t m = input3->sizes[input3->ndim - 2], n = input3->sizes[input3->ndim - 1], bad = 0;
  hh_ctx c = {0};
  if (lt_lapack_dim(op, m, &c.m) < 0 || lt_lapack_dim(op, n, &c.n) < 0 || lt_lapack_dim(op, mn, &c.lda) < 0) return NULL;
  c.k = (lint)k; if (c.lda < 1) c.lda = 1;
  c.side = left ? 'L' : 'R';
  c.trans = !transpose ? 'N' : lt_dtype_is_complex(dt) ? 'C' : 'T';   /* Q^H for complex, as PyTorch */
  lt_tensor *r = NULL;
  if (lt_lapack_batch_padded(&c.a, self, dt, mn, self->sizes[self->ndim - 1]) < 0) return NULL;
  if (!(c.tau = lt_tensor_to_dtype_contig(input2, dt)) || lt_lapack_batch_padded(&c.c, input3, dt, m, n) < 0) goto done;
  int info = lt_lapack_batch_each(c.c.count, (double)m * n * k, PICK(dt, ormqr_one), &c, &bad);
  if (info) lt_lapack_failed(op, info, bad, "ormqr failed");
  else r = lt_lapack_batch_view(&c.c, m, n);
done:
  lt_lapack_batch_release(&c.a);
  lt_tensor_release(c.tau);
  lt_lapack_batch_release(&c.c);
  return r;
}

/* ---- Hermitian eigendecomposition: syevd, heevd ---- */

typedef struct eigh_ctx {
  lt_lapack_batch a;
  lt_tensor *w;                  /* (batch..., n), the real dtype */
  lint n;
  char jobz, uplo;
} eigh_ctx;

#define DEF_EIGH_REAL(P, T)                                                                     \
  static int P##eigh_one(void *vc, int64_t b) {                                                 \
    eigh_ctx *c = vc;                                                                           \
    T *a = lt_lapack_batch_at(&c->a, b), *w = (T *)lt_tensor_data(c->w) + b * c->n, q, *work;   \
    lint info = 0, lw = -1, liw = -1, iq, lda = c->n > 0 ? c->n : 1, *iwork;                    \
    P##syevd_(&c->jobz, &c->uplo, &c->n, a, &lda, w, &q, &lw, &iq, &liw, &info, 1, 1);         \
    lw = WORK_SIZE(q);                                                                          \
    liw = iq > 1 ? iq : 1;                                                                      \
    work = malloc(sizeof(T) * (size_t)lw);                                                      \
    iwork = malloc(sizeof(lint) * (size_t)liw);                                                 \
    if (work && iwork) P##syevd_(&c->jobz, &c->uplo, &c->n, a, &lda, w, work, &lw, iwork, &liw, &info, 1, 1); \
    else info = NO_MEMORY;                                                                      \
    free(work);                                                                                 \
    free(iwork);                                                                                \
    return info;                                                                                \
  }
#define DEF_EIGH_COMPLEX(P, T, R)                                                               \
  static int P##eigh_one(void *vc, int64_t b) {                                                 \
    eigh_ctx *c = vc;                                                                           \
    T *a = lt_lapack_batch_at(&c->a, b), q, *work;                                              \
    R *w = (R *)lt_tensor_data(c->w) + b * c->n, rq, *rwork;                                    \
    lint info = 0, lw = -1, lrw = -1, liw = -1, iq, lda = c->n > 0 ? c->n : 1, *iwork;          \
    P##heevd_(&c->jobz, &c->uplo, &c->n, a, &lda, w, &q, &lw, &rq, &lrw, &iq, &liw, &info, 1, 1); \
    lw = WORK_SIZE(q);                                                                          \
    lrw = (lint)rq > 1 ? (lint)rq : 1;                                                          \
    liw = iq > 1 ? iq : 1;                                                                      \
    work = malloc(sizeof(T) * (size_t)lw);                                                      \
    rwork = malloc(sizeof(R) * (size_t)lrw);                                                    \
    iwork = malloc(sizeof(lint) * (size_t)liw);                                                 \
    if (work && rwork && iwork)                                                                 \
      P##heevd_(&c->jobz, &c->uplo, &c->n, a, &lda, w, work, &lw, rwork, &lrw, iwork, &liw, &info, 1, 1); \
    else info = NO_MEMORY;                                                                      \
    free(work);                                                                                 \
    free(rwork);                                                                                \
    free(iwork);                                                                                \
    return info;                                                                                \
  }
DEF_EIGH_REAL(s, float)
DEF_EIGH_REAL(d, double)
DEF_EIGH_COMPLEX(c, lt_cfloat, float)
DEF_EIGH_COMPLEX(z, lt_cdouble, double)

int lt_cpu__linalg_eigh(lt_tensor *A, const char *UPLO, bool compute_v, lt_tensor **eigenvalues,
                        lt_tensor **eigenvectors) {
  const char *op = compute_v ? "linalg.eigh" : "linalg.eigvalsh";
  char uplo = lt_meta_eigh_uplo(op, UPLO);
  if (!uplo || lt_meta_spectral_matrix(op, "A", A, true) < 0) return -1;
  lt_dtype dt = lt_tensor_dtype(A);
  int64_t n = A->sizes[A->ndim - 1], bad = 0;
  eigh_ctx c = {0};
  if (lt_lapack_dim(op, n, &c.n) < 0) return -1;
  c.jobz = compute_v ? 'V' : 'N';
  c.uplo = uplo;
  if (lt_lapack_batch_padded(&c.a, A, dt, n, n) < 0) return -1;
  c.w = lt_lapack_check_finite(op, "A", &c.a) == 0 ? batch_vector(lt_dtype_to_real(dt), A, 2, n) : NULL;
  int info = c.w ? lt_lapack_batch_each(c.a.count, (double)n * n * n, PICK(dt, eigh_one), &c, &bad) : 0;
  if (!c.w || info) {
    if (c.w) lt_lapack_failed(op, info, bad, "the eigenvalue algorithm failed to converge");
    lt_lapack_batch_release(&c.a); lt_tensor_release(c.w);
    return -1;
  }
  *eigenvectors = compute_v ? lt_lapack_batch_tensor(&c.a, false) : empty_like_dtype(A);
  lt_lapack_batch_release(&c.a);
  if (!*eigenvectors) { lt_tensor_release(c.w); return -1; }
  *eigenvalues = c.w;
  return 0;
}

/* ---- SVD: gesdd ---- */

typedef struct svd_ctx {
  lt_lapack_batch a, u, vt;      /* u.buf, vt.buf NULL: no vectors */
  lt_tensor *s;                  /* (batch..., k), the real dtype */
  lint m, n, k, vtrows;
  char jobz;
} svd_ctx;

/* the real work array of complex gesdd, as LAPACK 3.7 sizes it */
static size_t svd_rwork(const svd_ctx *c) {
  size_t mn = (size_t)c->k, mx = (size_t)imax(c->m, c->n);
  size_t r = c->jobz == 'N' ? 7 * mn : mn * (5 * mn + 7 > 2 * mx + 2 * mn + 1 ? 5 * mn + 7 : 2 * mx + 2 * mn + 1);
  return r > 1 ? r : 1;
}

/* the call of each driver: the complex ones take the real work array rwork too */
#define SVD_CALL_REAL(P) P##gesdd_(&c->jobz, &c->m, &c->n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lw, iwork, &info, 1)
#define SVD_CALL_COMPLEX(P) P##gesdd_(&c->jobz, &c->m, &c->n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lw, rwork, iwork, &info, 1)
#define DEF_SVD(P, T, R, CALL, NRWORK)                                                          \
  static int P##svd_one(void *vc, int64_t b) {                                                  \
    svd_ctx *c = vc;                                                                            \
    T *a = lt_lapack_batch_at(&c->a, b), q, *work = &q, udummy[1], vdummy[1];                   \
    R *s = (R *)lt_tensor_data(c->s) + b * c->k;                                                \
    T *u = c->u.buf ? (T *)lt_lapack_batch_at(&c->u, b) : udummy;                               \
    T *vt = c->vt.buf ? (T *)lt_lapack_batch_at(&c->vt, b) : vdummy;                            \
    lint info = 0, lw = -1, lda = c->m > 0 ? c->m : 1;                                          \
    lint ldu = c->m > 0 ? c->m : 1, ldvt = c->vtrows > 0 ? c->vtrows : 1;                       \
    R *rwork = malloc(sizeof(R) * (NRWORK));                                                    \
    lint *iwork = malloc(sizeof(lint) * (size_t)(8 * (c->k > 0 ? c->k : 1)));                   \
    if (rwork && iwork) {                                                                       \
      CALL(P);                                                     /* the workspace query */    \
      lw = WORK_SIZE(q);                                                                        \
      if ((work = malloc(sizeof(T) * (size_t)lw))) CALL(P);                                     \
      else info = NO_MEMORY;                                                                    \
      free(work);                                                                               \
    } else info = NO_MEMORY;                                                                    \
    free(rwork);                                                                                \
    free(iwork);                                                                                \
    return info;                                                                                \
  }
DEF_SVD(s, float, float, SVD_CALL_REAL, 1)
DEF_SVD(d, double, double, SVD_CALL_REAL, 1)
DEF_SVD(c, lt_cfloat, float, SVD_CALL_COMPLEX, svd_rwork(c))
DEF_SVD(z, lt_cdouble, double, SVD_CALL_COMPLEX, svd_rwork(c))

/* an identity in each matrix of a batch (the vectors of an empty SVD) */
static void set_identity(lt_lapack_batch *b) {
  lt_dtype dt = (lt_dtype)b->buf->dtype;
  size_t es = lt_dtype_size(dt);
  for (int64_t i = 0; i < b->count; i++)
    for (int64_t j = 0; j < imin(b->rows, b->cols); j++)
      lt_dtype_store_complex(dt, (char *)lt_lapack_batch_at(b, i) + (size_t)(j * b->rows + j) * es, 1.0, 0.0);
}

int lt_cpu__linalg_svd(lt_tensor *A, bool full_matrices, bool compute_uv, lt_tensor **U, lt_tensor **S,
                       lt_tensor **Vh) {
  const char *op = compute_uv ? "linalg.svd" : "linalg.svdvals";
  if (lt_meta_spectral_matrix(op, "A", A, false) < 0) return -1;
  lt_dtype dt = lt_tensor_dtype(A);
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = imin(m, n), bad = 0;
  svd_ctx c = {0};
  if (lt_lapack_dim(op, m, &c.m) < 0 || lt_lapack_dim(op, n, &c.n) < 0) return -1;
  c.k = (lint)k;
  c.jobz = !compute_uv ? 'N' : (full_matrices ? 'A' : 'S');
  int64_t ucols = full_matrices ? m : k;
  c.vtrows = (lint)(full_matrices ? n : k);
  int rc = -1;
  if (lt_lapack_batch_padded(&c.a, A, dt, m, n) < 0) return -1;
  if (lt_lapack_check_finite(op, "A", &c.a) < 0 || !(c.s = batch_vector(lt_dtype_to_real(dt), A, 2, k))) goto done;
  if (compute_uv) {
    /* LAPACK is not called on an empty matrix: full vectors are identities */
    if (batch_zeros(&c.u, dt, A, m, ucols) < 0 || batch_zeros(&c.vt, dt, A, c.vtrows, n) < 0) goto done;
    if (k == 0) { set_identity(&c.u); set_identity(&c.vt); }
  }
  int info = k == 0 ? 0 : lt_lapack_batch_each(c.a.count, (double)m * n * k, PICK(dt, svd_one), &c, &bad);
  if (info) { lt_lapack_failed(op, info, bad, "the SVD failed to converge"); goto done; }
  if (compute_uv) {
    *U = lt_lapack_batch_tensor(&c.u, false);
    *Vh = lt_lapack_batch_tensor(&c.vt, false);
  } else {
    *U = empty_like_dtype(A);
    *Vh = empty_like_dtype(A);
  }
  if (!*U || !*Vh) { lt_tensor_release(*U); lt_tensor_release(*Vh); *U = *Vh = NULL; goto done; }
  *S = c.s;
  c.s = NULL;
  rc = 0;
done:
  lt_lapack_batch_release(&c.a);
  lt_tensor_release(c.s);
  lt_lapack_batch_release(&c.u);
  lt_lapack_batch_release(&c.vt);
  return rc;
}

/* ---- triangular solve: trtrs ---- */

typedef struct tr_ctx {
  lt_lapack_batch a, b;
  lint n, nrhs;
  char uplo;
} tr_ctx;

#define DEF_TR(P)                                                                               \
  static int P##tr_one(void *vc, int64_t i) {                                                   \
    tr_ctx *c = vc;                                                                             \
    lint info = 0, ld = c->n > 0 ? c->n : 1;                                                    \
    char tr = 'N', dg = 'N';                                                                    \
    P##trtrs_(&c->uplo, &tr, &dg, &c->n, &c->nrhs, lt_lapack_batch_at(&c->a, i), &ld, lt_lapack_batch_at(&c->b, i), &ld, &info, 1, 1, 1); \
    return info;                                                                                \
  }
DEF_TR(s)
DEF_TR(d)
DEF_TR(c)
DEF_TR(z)

lt_tensor *lt_cpu__linalg_spectral_trsolve(lt_tensor *A, lt_tensor *B, bool upper) {
  const char *op = "_linalg_spectral_trsolve";
  if (lt_meta_spectral_trsolve(op, A, B) < 0) return NULL;
  int64_t n = A->sizes[A->ndim - 1], r = B->sizes[B->ndim - 1], bad = 0;
  lt_dtype dt = lt_tensor_dtype(A);
  tr_ctx c = {0};
  if (lt_lapack_dim(op, n, &c.n) < 0 || lt_lapack_dim(op, r, &c.nrhs) < 0) return NULL;
  c.uplo = upper ? 'U' : 'L';
  lt_tensor *res = NULL;
  if (lt_lapack_batch_padded(&c.a, A, dt, n, n) < 0 || lt_lapack_batch_padded(&c.b, B, dt, n, r) < 0) goto done;
  int info = n > 0 && r > 0 ? lt_lapack_batch_each(c.a.count, (double)n * n * r, PICK(dt, tr_one), &c, &bad) : 0;
  if (info) lt_lapack_failed(op, info, bad, "the triangular matrix A is singular (a zero on its diagonal)");
  else res = lt_lapack_batch_tensor(&c.b, false);
done:
  lt_lapack_batch_release(&c.a);
  lt_lapack_batch_release(&c.b);
  return res;
}
