/*
** linalg_lstsq.c — the CPU kernel of linalg.lstsq: LAPACK's gels (QR, full
** rank), gelsy (column-pivoted QR), gelsd and gelss (SVD) on each matrix of a
** broadcast batch, and the residuals, ranks and singular values PyTorch
** returns for each driver. float32/float64 and complex64/complex128 (whose
** routines take a real work array more; the singular values and residuals
** are real).
*/
#include <complex.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>
#include "kernels_cpu.h"
#include "cpu/lapack.h"
#include "cpu/lapack_batch.h"
#include "meta/linalg_solve.h"
#include "core/views.h"

typedef lt_lstsq_driver driver_kind;   /* meta/linalg_solve.h */

typedef struct lsq_ctx {
  lt_lapack_batch a, b;         /* b has max(m, n) rows: the solution overwrites it */
  lt_lapack_int m, n, k;
  driver_kind drv;
  double rcond;
  lt_lapack_kind kind;
  int32_t *info;
  int64_t *rank;                /* NULL for gels */
  void *sv;                     /* count x min(m, n), gelsd/gelss only */
} lsq_ctx;

/* T the element type, R its real type. RW(x) passes the real workspace x to the
** complex routines and nothing to the real ones; HAS_RW says whether there is
** one: 2n for gelsy, 5 min(m, n) for gelss, what the query says for gelsd */
#define LSQ_ONE(NAME, T, R, P, RW, HAS_RW)                                                                     \
  static int NAME(lsq_ctx *c, int64_t i) {                                                                     \
    lt_lapack_int m = c->m, n = c->n, k = c->k, lda = m > 1 ? m : 1, ldb = c->b.rows > 1 ? (lt_lapack_int)c->b.rows : 1; \
    lt_lapack_int info = 0, rank = 0, lwork = -1, mn = m < n ? m : n;                                          \
    T *a = lt_lapack_batch_at(&c->a, i), *b = lt_lapack_batch_at(&c->b, i), q = 0;                             \
    R rc = (R)c->rcond, rq = 0;                                                                                \
    R *s = c->sv ? (R *)c->sv + i * mn : NULL;                                                                 \
    lt_lapack_int *iw = NULL, iq = 0;                                                                          \
    R *rw = NULL;                                                                                              \
    (void)rq;                                                                                                  \
    if (m == 0 || n == 0) { if (c->rank) c->rank[i] = 0; c->info[i] = 0; return 0; }                           \
    lt_lapack_int *jpvt = c->drv == LT_LSTSQ_GELSY ? calloc((size_t)n, sizeof *jpvt) : NULL;                            \
    if (c->drv == LT_LSTSQ_GELSY && !jpvt) return -1;                                                                   \
    /* a workspace query first, then the call */                                                               \
    switch (c->drv) {                                                                                          \
    case LT_LSTSQ_GELS: P##gels_("N", &m, &n, &k, a, &lda, b, &ldb, &q, &lwork, &info, 1); break;                       \
    case LT_LSTSQ_GELSY: P##gelsy_(&m, &n, &k, a, &lda, b, &ldb, jpvt, &rc, &rank, &q, &lwork RW(&rq), &info); break;   \
    case LT_LSTSQ_GELSD: P##gelsd_(&m, &n, &k, a, &lda, b, &ldb, s, &rc, &rank, &q, &lwork RW(&rq), &iq, &info); break; \
    case LT_LSTSQ_GELSS: P##gelss_(&m, &n, &k, a, &lda, b, &ldb, s, &rc, &rank, &q, &lwork RW(&rq), &info); break;      \
    }                                                                                                          \
    lwork = (lt_lapack_int)creal(q) > 1 ? (lt_lapack_int)creal(q) : 1;                                         \
    T *w = malloc(sizeof(T) * (size_t)lwork);                                                                  \
    if (c->drv == LT_LSTSQ_GELSD) iw = malloc(sizeof(lt_lapack_int) * (size_t)(iq > 1 ? iq : 1));                       \
    if (HAS_RW) {                                                                                              \
      int64_t nrw = c->drv == LT_LSTSQ_GELSY ? 2 * (int64_t)n : c->drv == LT_LSTSQ_GELSS ? 5 * (int64_t)mn : (int64_t)rq;        \
      rw = malloc(sizeof(R) * (size_t)(nrw > 1 ? nrw : 1));                                                    \
    }                                                                                                          \
    if (!w || (c->drv == LT_LSTSQ_GELSD && !iw) || (HAS_RW && !rw)) { free(w); free(iw); free(rw); free(jpvt); return -1; } \
    switch (c->drv) {                                                                                          \
    case LT_LSTSQ_GELS: P##gels_("N", &m, &n, &k, a, &lda, b, &ldb, w, &lwork, &info, 1); break;                        \
    case LT_LSTSQ_GELSY: P##gelsy_(&m, &n, &k, a, &lda, b, &ldb, jpvt, &rc, &rank, w, &lwork RW(rw), &info); break;     \
    case LT_LSTSQ_GELSD: P##gelsd_(&m, &n, &k, a, &lda, b, &ldb, s, &rc, &rank, w, &lwork RW(rw), iw, &info); break;    \
    case LT_LSTSQ_GELSS: P##gelss_(&m, &n, &k, a, &lda, b, &ldb, s, &rc, &rank, w, &lwork RW(rw), &info); break;        \
    }                                                                                                          \
    free(w); free(iw); free(rw); free(jpvt);                                                                   \
    c->info[i] = info;                                                                                         \
    if (c->rank) c->rank[i] = rank;                                                                            \
    return 0;                                                                                                  \
  }
#define NO_RWORK(x)
#define RWORK(x) , x
LSQ_ONE(lsq_one_d, double, double, d, NO_RWORK, 0)
LSQ_ONE(lsq_one_s, float, float, s, NO_RWORK, 0)
LSQ_ONE(lsq_one_z, lt_cdouble, double, z, RWORK, 1)
LSQ_ONE(lsq_one_c, lt_cfloat, float, c, RWORK, 1)

static int lsq_one(void *p, int64_t i) {
  lsq_ctx *c = p;
  switch (c->kind) {
  case LT_LAPACK_S: return lsq_one_s(c, i);
  case LT_LAPACK_D: return lsq_one_d(c, i);
  case LT_LAPACK_C: return lsq_one_c(c, i);
  default: return lsq_one_z(c, i);
  }
}

/* an empty 1-D tensor (the parts a driver does not compute) */
static lt_tensor *empty(lt_dtype dt, lt_device dev) {
  int64_t z = 0;
  return lt_tensor_new(dt, dev, 1, &z);
}

/* rows r0 .. r0+rows-1 of the batch's (batch..., ldb, cols) matrices: a view of buf */
static lt_tensor *rows_view(const lt_lapack_batch *b, int64_t r0, int64_t rows) {
  lt_tensor *all = lt_lapack_batch_tensor(b, false);
  lt_tensor *r = all ? lt_strided_narrow(all, -2, r0, rows) : NULL;
  lt_tensor_release(all);
  return r;
}

int lt_cpu_linalg_lstsq(lt_tensor *A, lt_tensor *B, lt_scalar rcond, const char *driver, lt_tensor **solution,
                        lt_tensor **residuals, lt_tensor **rank, lt_tensor **singular_values) {
  const char *op = "linalg.lstsq";
  driver_kind drv = LT_LSTSQ_GELSY;
  int64_t batch[LT_MAX_DIMS];
  int nb = lt_meta_lstsq_shape(op, A, B, batch);
  if (nb < 0 || lt_meta_lstsq_driver(op, driver, &drv)) return -1;
  int na = A->ndim - 2;
  int64_t m = A->sizes[na], n = A->sizes[na + 1], k = B->sizes[B->ndim - 1], mn = m < n ? m : n;
  int64_t mx = m > n ? m : n;
  if (mx * (n > k ? n : k) > INT32_MAX || m * n > INT32_MAX)
    return lt_error("%s: the matrices are too large for LAPACK's 32-bit indices", op);
  lt_dtype dt = lt_tensor_dtype(A);
  lt_device dev = lt_tensor_device(A);
  lsq_ctx c;
  memset(&c, 0, sizeof c);
  c.m = (lt_lapack_int)m; c.n = (lt_lapack_int)n; c.k = (lt_lapack_int)k;
  c.drv = drv;
  c.kind = lt_lapack_kind_of(dt);
  lt_dtype rdt = lt_dtype_to_real(dt);   /* of the singular values and residuals */
  double eps = rdt == LT_FLOAT64 ? DBL_EPSILON : FLT_EPSILON;
  c.rcond = lt_scalar_is_none(rcond) ? eps * (double)mx : lt_scalar_to_double(rcond);
  lt_tensor *inf = lt_lapack_int_tensor(dev, nb, batch, 0, NULL), *bv = NULL, *rk = NULL, *sv = NULL, *res = NULL;
  int rc = -1;
  if (!inf || lt_lapack_batch_from(&c.a, A, false, dt, nb, batch)) goto done;
  if (lt_lapack_batch_new(&c.b, dt, dev, nb, batch, mx, k) || lt_tensor_fill_(c.b.buf, lt_scalar_int(0))) goto done;
  if (!(bv = rows_view(&c.b, 0, m)) || lt_tensor_copy_(bv, B)) goto done;
  lt_tensor_release(bv);
  bv = NULL;
  c.info = lt_tensor_data(inf);
  if (drv != LT_LSTSQ_GELS) {
    if (!(rk = lt_tensor_new(LT_INT64, dev, nb, batch))) goto done;
    c.rank = lt_tensor_data(rk);
  }
  if (drv == LT_LSTSQ_GELSD || drv == LT_LSTSQ_GELSS) {
    int64_t ssz[LT_MAX_DIMS];
    memcpy(ssz, batch, sizeof(int64_t) * (size_t)nb);
    ssz[nb] = mn;
    if (!(sv = lt_tensor_new(rdt, dev, nb + 1, ssz))) goto done;
    c.sv = lt_tensor_data(sv);
  }
  if (lt_lapack_batch_run(c.a.count, mn, lsq_one, &c)) { lt_error("%s: out of memory for LAPACK's workspace", op); goto done; }
  for (int64_t i = 0; i < c.a.count; i++) {
    if (c.info[i] == 0) continue;
    if (drv == LT_LSTSQ_GELS)
      lt_error("%s: the solution could not be computed: the matrix%s does not have full rank (gels needs it; "
               "use driver \"gelsy\", \"gelsd\" or \"gelss\")", op, nb > 0 ? " at a batch index" : "");
    else
      lt_error("%s: the SVD of the matrix did not converge (LAPACK info %d)", op, (int)c.info[i]);
    goto done;
  }
  /* residuals: the squared norms of rows n.. of each column, when m > n, the driver
  ** is not gelsy and (for the SVD drivers) every matrix has full rank */
  bool full = true;
  for (int64_t i = 0; c.rank && i < c.a.count; i++) full = full && c.rank[i] == n;
  if (m > n && drv != LT_LSTSQ_GELSY && full) {
    lt_tensor *tail = rows_view(&c.b, n, m - n);
    if (!tail) goto done;
    lt_tensor *mag = lt_abs(tail);   /* |r|^2: real for complex r */
    lt_tensor_release(tail);
    lt_tensor *sq = mag ? lt_mul(mag, mag) : NULL;
    lt_tensor_release(mag);
    if (!sq) goto done;
    int64_t d = -2;
    res = lt_sum(sq, lt_intlist_make(&d, 1), false, -1);
    lt_tensor_release(sq);
    if (!res) goto done;
  } else if (!(res = empty(rdt, dev))) goto done;
  if (!rk && !(rk = empty(LT_INT64, dev))) goto done;
  if (!sv && !(sv = empty(rdt, dev))) goto done;
  if (!(*solution = rows_view(&c.b, 0, n))) goto done;
  *residuals = res; *rank = rk; *singular_values = sv;
  res = rk = sv = NULL;
  rc = 0;
done:
  lt_tensor_release(bv);
  lt_tensor_release(inf);
  lt_tensor_release(rk);
  lt_tensor_release(sv);
  lt_tensor_release(res);
  lt_lapack_batch_release(&c.a);
  lt_lapack_batch_release(&c.b);
  return rc;
}
