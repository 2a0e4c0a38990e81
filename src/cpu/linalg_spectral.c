/*
** linalg_spectral.c — the CPU kernels of src/ops/linalg_spectral.lua: QR
** (geqrf, orgqr, ormqr), the symmetric eigendecomposition (syevd), the SVD
** (gesdd) and a triangular solve (trtrs), one LAPACK call per matrix of the
** batch over the column buffers of linalg_spectral_batch.h. Each worker is
** written once for a LAPACK precision prefix P (s, d) and element type T.
*/
#include <stdlib.h>
#include <string.h>
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "cpu/lapack.h"
#include "cpu/linalg_spectral_batch.h"
#include "meta/linalg_spectral.h"
#include "core/error.h"

typedef lt_lapack_int lint;

/* an info of a worker that could not allocate its workspace */
#define NO_MEMORY (-1000)

/* the error of a failed batch: LAPACK's info for matrix `bad` (0-based) */
static int lapack_failed(const char *op, lint info, int64_t bad, const char *positive) {
  if (info == NO_MEMORY) return lt_error("%s: out of memory for LAPACK's workspace", op);
  if (info < 0) return lt_error("%s: LAPACK rejected argument %d (an internal error)", op, (int)-info);
  return lt_error("%s: %s for batch element %lld (1-based, of the matrices flattened over the batch dims; LAPACK info %d)",
                  op, positive, (long long)bad + 1, (int)info);
}

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

/* an error naming the first matrix of buf with a NaN or inf, -1; 0 when all are finite */
static int check_finite(const char *op, lt_tensor *buf) {
  int64_t b = lt_lsb_first_nonfinite(buf);
  if (b < 0) return 0;
  return lt_error("%s: argument 'A' holds NaN or inf in batch element %lld (1-based, of the matrices flattened over the batch dims)",
                  op, (long long)b + 1);
}

/* ---- QR ---- */

typedef struct qr_ctx {
  lt_tensor *a, *r, *tau;        /* column buffers; tau (batch..., k) or NULL (kept inside) */
  lint m, n, k, qcols;           /* qcols: Q's columns to form (0: none) */
  int64_t rrows;                 /* R's rows (0: no R) */
} qr_ctx;

#define DEF_QR(P, T)                                                                            \
  static lint P##qr_one(void *vc, int64_t b) {                                                  \
    qr_ctx *c = vc;                                                                             \
    T *a = lt_lsb_at(c->a, b), q, *tau, *work;                                                  \
    lint info = 0, lw = -1, lwo = -1, lda = c->m > 0 ? c->m : 1;                                \
    T tauk[1];                                                                                  \
    tau = c->tau ? (T *)lt_tensor_data(c->tau) + b * c->k : NULL;                               \
    if (!tau) { tau = malloc(sizeof(T) * (size_t)(c->k > 0 ? c->k : 1)); if (!tau) return NO_MEMORY; } \
    P##geqrf_(&c->m, &c->n, a, &lda, tauk, &q, &lw, &info);                                    \
    lw = (lint)q;                                                                               \
    if (c->qcols > 0) { P##orgqr_(&c->m, &c->qcols, &c->k, a, &lda, tauk, &q, &lwo, &info); if ((lint)q > lw) lw = (lint)q; } \
    if (lw < 1) lw = 1;                                                                         \
    work = malloc(sizeof(T) * (size_t)lw);                                                      \
    if (!work) { if (!c->tau) free(tau); return NO_MEMORY; }                                    \
    P##geqrf_(&c->m, &c->n, a, &lda, tau, work, &lw, &info);                                   \
    if (!info && c->rrows > 0) { /* R: the upper triangle of a's leading rrows rows */         \
      T *r = lt_lsb_at(c->r, b);                                                                \
      for (int64_t j = 0; j < c->n; j++)                                                        \
        for (int64_t i = 0; i <= j && i < c->rrows; i++) r[j * c->rrows + i] = a[j * lda + i];  \
    }                                                                                           \
    if (!info && c->qcols > 0) P##orgqr_(&c->m, &c->qcols, &c->k, a, &lda, tau, work, &lw, &info); \
    free(work);                                                                                 \
    if (!c->tau) free(tau);                                                                     \
    return info;                                                                                \
  }
DEF_QR(s, float)
DEF_QR(d, double)

static lint run_qr(lt_dtype dt, qr_ctx *c, int64_t batch, int64_t *bad) {
  double w = (double)c->m * c->n * (c->n + c->qcols);
  return lt_lsb_each(batch, w, dt == LT_FLOAT64 ? dqr_one : sqr_one, c, bad);
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
  if (lt_lsb_dim(op, m, &c.m) < 0 || lt_lsb_dim(op, imax(n, qc), &c.n) < 0) return -1;
  c.n = (lint)n; c.k = (lint)k; c.qcols = (lint)qc; c.rrows = rr;
  /* complete with m > n forms an m x m Q in place: the buffer has m columns */
  c.a = lt_lsb_load(A, dt, m, imax(n, qc));
  c.r = c.a ? lt_lsb_new(dt, A, 2, rr, n, true) : NULL;
  int64_t bad = 0;
  lint info = c.r ? run_qr(dt, &c, lt_lsb_batch(A, 2), &bad) : 0;
  int rc = -1;
  if (!c.r) goto done;
  if (info) { lapack_failed(op, info, bad, "QR failed"); goto done; }
  *Q = qc > 0 ? lt_lsb_view(c.a, m, qc) : empty_like_dtype(A);
  *R = lt_lsb_view(c.r, rr, n);
  if (!*Q || !*R) { lt_tensor_release(*Q); lt_tensor_release(*R); *Q = *R = NULL; goto done; }
  rc = 0;
done:
  lt_tensor_release(c.a);
  lt_tensor_release(c.r);
  return rc;
}

int lt_cpu_geqrf(lt_tensor *self, lt_tensor **a, lt_tensor **tau) {
  const char *op = "geqrf";
  if (lt_meta_spectral_matrix(op, "self", self, false) < 0) return -1;
  lt_dtype dt = lt_tensor_dtype(self);
  int64_t m = self->sizes[self->ndim - 2], n = self->sizes[self->ndim - 1], k = imin(m, n);
  qr_ctx c = {0};
  if (lt_lsb_dim(op, m, &c.m) < 0 || lt_lsb_dim(op, n, &c.n) < 0) return -1;
  c.k = (lint)k;
  c.a = lt_lsb_load(self, dt, m, n);
  c.tau = c.a ? batch_vector(dt, self, 2, k) : NULL;
  int64_t bad = 0;
  lint info = c.tau ? run_qr(dt, &c, lt_lsb_batch(self, 2), &bad) : 0;
  if (!c.tau || info) {
    if (c.tau) lapack_failed(op, info, bad, "QR failed");
    lt_tensor_release(c.a); lt_tensor_release(c.tau);
    return -1;
  }
  *a = lt_lsb_view(c.a, m, n);
  lt_tensor_release(c.a);
  *tau = c.tau;
  return *a ? 0 : (lt_tensor_release(c.tau), -1);
}

/* ---- householder_product (orgqr) and ormqr ---- */

typedef struct hh_ctx {
  lt_tensor *a, *tau, *c;        /* reflectors' buffer, scales (contiguous), ormqr's C buffer */
  lint m, n, k, lda;             /* orgqr: Q m x n from k reflectors; ormqr: C m x n */
  char side, trans;
} hh_ctx;

#define DEF_HH(P, T)                                                                            \
  static lint P##orgqr_one(void *vc, int64_t b) {                                               \
    hh_ctx *c = vc;                                                                             \
    T *a = lt_lsb_at(c->a, b), *tau = (T *)lt_tensor_data(c->tau) + b * c->k, q, *work;         \
    lint info = 0, lw = -1;                                                                     \
    P##orgqr_(&c->m, &c->n, &c->k, a, &c->lda, tau, &q, &lw, &info);                           \
    lw = (lint)q > 1 ? (lint)q : 1;                                                             \
    if (!(work = malloc(sizeof(T) * (size_t)lw))) return NO_MEMORY;                             \
    P##orgqr_(&c->m, &c->n, &c->k, a, &c->lda, tau, work, &lw, &info);                         \
    free(work);                                                                                 \
    return info;                                                                                \
  }                                                                                             \
  static lint P##ormqr_one(void *vc, int64_t b) {                                               \
    hh_ctx *c = vc;                                                                             \
    T *a = lt_lsb_at(c->a, b), *tau = (T *)lt_tensor_data(c->tau) + b * c->k, q, *work;         \
    T *cc = lt_lsb_at(c->c, b);                                                                 \
    lint info = 0, lw = -1, ldc = c->m > 0 ? c->m : 1;                                          \
    P##ormqr_(&c->side, &c->trans, &c->m, &c->n, &c->k, a, &c->lda, tau, cc, &ldc, &q, &lw, &info, 1, 1); \
    lw = (lint)q > 1 ? (lint)q : 1;                                                             \
    if (!(work = malloc(sizeof(T) * (size_t)lw))) return NO_MEMORY;                             \
    P##ormqr_(&c->side, &c->trans, &c->m, &c->n, &c->k, a, &c->lda, tau, cc, &ldc, work, &lw, &info, 1, 1); \
    free(work);                                                                                 \
    return info;                                                                                \
  }
DEF_HH(s, float)
DEF_HH(d, double)

lt_tensor *lt_cpu_linalg_householder_product(lt_tensor *A, lt_tensor *tau) {
  const char *op = "linalg.householder_product";
  if (lt_meta_householder(op, A, tau) < 0) return NULL;
  lt_dtype dt = lt_tensor_dtype(A);
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = tau->sizes[tau->ndim - 1];
  hh_ctx c = {0};
  if (lt_lsb_dim(op, m, &c.m) < 0 || lt_lsb_dim(op, n, &c.n) < 0) return NULL;
  c.k = (lint)k; c.lda = c.m > 0 ? c.m : 1;
  c.a = lt_lsb_load(A, dt, m, n);
  c.tau = c.a ? lt_tensor_to_dtype_contig(tau, dt) : NULL;
  int64_t bad = 0;
  lint info = c.tau ? lt_lsb_each(lt_lsb_batch(A, 2), (double)m * n * n, dt == LT_FLOAT64 ? dorgqr_one : sorgqr_one, &c, &bad) : 0;
  lt_tensor *r = NULL;
  if (c.tau && info) lapack_failed(op, info, bad, "orgqr failed");
  else if (c.tau) r = lt_lsb_view(c.a, m, n);
  lt_tensor_release(c.a);
  lt_tensor_release(c.tau);
  return r;
}

lt_tensor *lt_cpu_ormqr(lt_tensor *self, lt_tensor *input2, lt_tensor *input3, bool left, bool transpose) {
  const char *op = "ormqr";
  if (lt_meta_ormqr(op, self, input2, input3, left) < 0) return NULL;
  lt_dtype dt = lt_tensor_dtype(self);
  int64_t mn = self->sizes[self->ndim - 2], k = input2->sizes[input2->ndim - 1];
  int64_t m = input3->sizes[input3->ndim - 2], n = input3->sizes[input3->ndim - 1];
  hh_ctx c = {0};
  if (lt_lsb_dim(op, m, &c.m) < 0 || lt_lsb_dim(op, n, &c.n) < 0 || lt_lsb_dim(op, mn, &c.lda) < 0) return NULL;
  c.k = (lint)k; if (c.lda < 1) c.lda = 1;
  c.side = left ? 'L' : 'R';
  c.trans = transpose ? 'T' : 'N';
  c.a = lt_lsb_load(self, dt, mn, self->sizes[self->ndim - 1]);
  c.tau = c.a ? lt_tensor_to_dtype_contig(input2, dt) : NULL;
  c.c = c.tau ? lt_lsb_load(input3, dt, m, n) : NULL;
  int64_t bad = 0;
  lint info = c.c ? lt_lsb_each(lt_lsb_batch(input3, 2), (double)m * n * k, dt == LT_FLOAT64 ? dormqr_one : sormqr_one, &c, &bad) : 0;
  lt_tensor *r = NULL;
  if (c.c && info) lapack_failed(op, info, bad, "ormqr failed");
  else if (c.c) r = lt_lsb_view(c.c, m, n);
  lt_tensor_release(c.a);
  lt_tensor_release(c.tau);
  lt_tensor_release(c.c);
  return r;
}

/* ---- symmetric eigendecomposition: syevd ---- */

typedef struct eigh_ctx {
  lt_tensor *a, *w;
  lint n;
  char jobz, uplo;
} eigh_ctx;

#define DEF_EIGH(P, T)                                                                          \
  static lint P##eigh_one(void *vc, int64_t b) {                                                \
    eigh_ctx *c = vc;                                                                           \
    T *a = lt_lsb_at(c->a, b), *w = (T *)lt_tensor_data(c->w) + b * c->n, q, *work;             \
    lint info = 0, lw = -1, liw = -1, iq, lda = c->n > 0 ? c->n : 1, *iwork;                    \
    P##syevd_(&c->jobz, &c->uplo, &c->n, a, &lda, w, &q, &lw, &iq, &liw, &info, 1, 1);         \
    lw = (lint)q > 1 ? (lint)q : 1;                                                             \
    liw = iq > 1 ? iq : 1;                                                                      \
    work = malloc(sizeof(T) * (size_t)lw);                                                      \
    iwork = malloc(sizeof(lint) * (size_t)liw);                                                 \
    if (work && iwork) P##syevd_(&c->jobz, &c->uplo, &c->n, a, &lda, w, work, &lw, iwork, &liw, &info, 1, 1); \
    else info = NO_MEMORY;                                                                      \
    free(work);                                                                                 \
    free(iwork);                                                                                \
    return info;                                                                                \
  }
DEF_EIGH(s, float)
DEF_EIGH(d, double)

int lt_cpu__linalg_eigh(lt_tensor *A, const char *UPLO, bool compute_v, lt_tensor **eigenvalues,
                        lt_tensor **eigenvectors) {
  const char *op = compute_v ? "linalg.eigh" : "linalg.eigvalsh";
  char uplo = lt_meta_eigh_uplo(op, UPLO);
  if (!uplo || lt_meta_spectral_matrix(op, "A", A, true) < 0) return -1;
  lt_dtype dt = lt_tensor_dtype(A);
  int64_t n = A->sizes[A->ndim - 1];
  eigh_ctx c = {0};
  if (lt_lsb_dim(op, n, &c.n) < 0) return -1;
  c.jobz = compute_v ? 'V' : 'N';
  c.uplo = uplo;
  c.a = lt_lsb_load(A, dt, n, n);
  c.w = c.a && check_finite(op, c.a) == 0 ? batch_vector(dt, A, 2, n) : NULL;
  int64_t bad = 0;
  lint info = c.w ? lt_lsb_each(lt_lsb_batch(A, 2), (double)n * n * n, dt == LT_FLOAT64 ? deigh_one : seigh_one, &c, &bad) : 0;
  if (!c.w || info) {
    if (c.w) lapack_failed(op, info, bad, "the eigenvalue algorithm failed to converge (the input may hold NaN or inf)");
    lt_tensor_release(c.a); lt_tensor_release(c.w);
    return -1;
  }
  *eigenvectors = compute_v ? lt_lsb_view(c.a, n, n) : empty_like_dtype(A);
  lt_tensor_release(c.a);
  if (!*eigenvectors) { lt_tensor_release(c.w); return -1; }
  *eigenvalues = c.w;
  return 0;
}

/* ---- SVD: gesdd ---- */

typedef struct svd_ctx {
  lt_tensor *a, *s, *u, *vt;
  lint m, n, k, ucols, vtrows;
  char jobz;
} svd_ctx;

#define DEF_SVD(P, T)                                                                           \
  static lint P##svd_one(void *vc, int64_t b) {                                                 \
    svd_ctx *c = vc;                                                                            \
    T *a = lt_lsb_at(c->a, b), *s = (T *)lt_tensor_data(c->s) + b * c->k, q, *work;             \
    T udummy[1], vdummy[1];                                                                     \
    T *u = c->u ? (T *)lt_lsb_at(c->u, b) : udummy, *vt = c->vt ? (T *)lt_lsb_at(c->vt, b) : vdummy; \
    lint info = 0, lw = -1, lda = c->m > 0 ? c->m : 1, *iwork;                                  \
    lint ldu = c->m > 0 ? c->m : 1, ldvt = c->vtrows > 0 ? c->vtrows : 1;                       \
    P##gesdd_(&c->jobz, &c->m, &c->n, a, &lda, s, u, &ldu, vt, &ldvt, &q, &lw, NULL, &info, 1); \
    lw = (lint)q > 1 ? (lint)q : 1;                                                             \
    work = malloc(sizeof(T) * (size_t)lw);                                                      \
    iwork = malloc(sizeof(lint) * (size_t)(8 * (c->k > 0 ? c->k : 1)));                         \
    if (work && iwork) P##gesdd_(&c->jobz, &c->m, &c->n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lw, iwork, &info, 1); \
    else info = NO_MEMORY;                                                                      \
    free(work);                                                                                 \
    free(iwork);                                                                                \
    return info;                                                                                \
  }
DEF_SVD(s, float)
DEF_SVD(d, double)

/* an identity in each matrix of a column buffer (the vectors of an empty SVD) */
static int set_identity(lt_tensor *buf) {
  int64_t r = buf->sizes[buf->ndim - 1], c = buf->sizes[buf->ndim - 2], batch = lt_lsb_batch(buf, 2);
  size_t es = lt_dtype_size((lt_dtype)buf->dtype);
  for (int64_t b = 0; b < batch; b++)
    for (int64_t i = 0; i < imin(r, c); i++) {
      char *p = (char *)lt_lsb_at(buf, b) + (size_t)(i * r + i) * es;
      if (es == sizeof(double)) *(double *)p = 1.0; else *(float *)p = 1.0f;
    }
  return 0;
}

int lt_cpu__linalg_svd(lt_tensor *A, bool full_matrices, bool compute_uv, lt_tensor **U, lt_tensor **S,
                       lt_tensor **Vh) {
  const char *op = compute_uv ? "linalg.svd" : "linalg.svdvals";
  if (lt_meta_spectral_matrix(op, "A", A, false) < 0) return -1;
  lt_dtype dt = lt_tensor_dtype(A);
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = imin(m, n);
  svd_ctx c = {0};
  if (lt_lsb_dim(op, m, &c.m) < 0 || lt_lsb_dim(op, n, &c.n) < 0) return -1;
  c.k = (lint)k;
  c.jobz = !compute_uv ? 'N' : (full_matrices ? 'A' : 'S');
  c.ucols = (lint)(full_matrices ? m : k);
  c.vtrows = (lint)(full_matrices ? n : k);
  int rc = -1;
  c.a = lt_lsb_load(A, dt, m, n);
  c.s = c.a && check_finite(op, c.a) == 0 ? batch_vector(dt, A, 2, k) : NULL;
  if (!c.s) goto done;
  if (compute_uv) {
    bool empty = k == 0;   /* LAPACK is not called: full vectors are identities */
    c.u = lt_lsb_new(dt, A, 2, m, c.ucols, empty);
    c.vt = c.u ? lt_lsb_new(dt, A, 2, c.vtrows, n, empty) : NULL;
    if (!c.vt) goto done;
    if (empty) { set_identity(c.u); set_identity(c.vt); }
  }
  int64_t bad = 0;
  lint info = k == 0 ? 0 : lt_lsb_each(lt_lsb_batch(A, 2), (double)m * n * k, dt == LT_FLOAT64 ? dsvd_one : ssvd_one, &c, &bad);
  if (info) { lapack_failed(op, info, bad, "the SVD failed to converge (the input may hold NaN or inf)"); goto done; }
  if (compute_uv) {
    *U = lt_lsb_view(c.u, m, c.ucols);
    *Vh = lt_lsb_view(c.vt, c.vtrows, n);
  } else {
    *U = empty_like_dtype(A);
    *Vh = empty_like_dtype(A);
  }
  if (!*U || !*Vh) { lt_tensor_release(*U); lt_tensor_release(*Vh); *U = *Vh = NULL; goto done; }
  *S = c.s;
  c.s = NULL;
  rc = 0;
done:
  lt_tensor_release(c.a);
  lt_tensor_release(c.s);
  lt_tensor_release(c.u);
  lt_tensor_release(c.vt);
  return rc;
}

/* ---- triangular solve: trtrs ---- */

typedef struct tr_ctx {
  lt_tensor *a, *b;
  lint n, nrhs;
  char uplo;
} tr_ctx;

#define DEF_TR(P, T)                                                                            \
  static lint P##tr_one(void *vc, int64_t b) {                                                  \
    tr_ctx *c = vc;                                                                             \
    lint info = 0, ld = c->n > 0 ? c->n : 1;                                                    \
    char tr = 'N', dg = 'N';                                                                    \
    P##trtrs_(&c->uplo, &tr, &dg, &c->n, &c->nrhs, lt_lsb_at(c->a, b), &ld, lt_lsb_at(c->b, b), &ld, &info, 1, 1, 1); \
    return info;                                                                                \
  }
DEF_TR(s, float)
DEF_TR(d, double)

lt_tensor *lt_cpu__linalg_spectral_trsolve(lt_tensor *A, lt_tensor *B, bool upper) {
  const char *op = "_linalg_spectral_trsolve";
  if (lt_meta_spectral_matrix(op, "A", A, true) < 0 || lt_meta_spectral_matrix(op, "B", B, false) < 0) return NULL;
  if (A->dtype != B->dtype)
    return lt_error_null("%s: argument 'B' must have A's dtype (%s), got %s", op, lt_dtype_name(lt_tensor_dtype(A)),
                         lt_dtype_name(lt_tensor_dtype(B)));
  if (lt_meta_same_batch(op, "A", A, 2, "B", B, 2) < 0) return NULL;
  int64_t n = A->sizes[A->ndim - 1], r = B->sizes[B->ndim - 1];
  if (B->sizes[B->ndim - 2] != n)
    return lt_error_null("%s: argument 'B' must have %lld rows (A's size), got %lld", op, (long long)n,
                         (long long)B->sizes[B->ndim - 2]);
  lt_dtype dt = lt_tensor_dtype(A);
  tr_ctx c = {0};
  if (lt_lsb_dim(op, n, &c.n) < 0 || lt_lsb_dim(op, r, &c.nrhs) < 0) return NULL;
  c.uplo = upper ? 'U' : 'L';
  c.a = lt_lsb_load(A, dt, n, n);
  c.b = c.a ? lt_lsb_load(B, dt, n, r) : NULL;
  int64_t bad = 0;
  lint info = c.b && n > 0 && r > 0 ? lt_lsb_each(lt_lsb_batch(A, 2), (double)n * n * r, dt == LT_FLOAT64 ? dtr_one : str_one, &c, &bad) : 0;
  lt_tensor *res = NULL;
  if (c.b && info) lapack_failed(op, info, bad, "the triangular matrix A is singular (a zero on its diagonal)");
  else if (c.b) res = lt_lsb_view(c.b, n, r);
  lt_tensor_release(c.a);
  lt_tensor_release(c.b);
  return res;
}
