/*
** linalg_t7.c — the two LAPACK calls Torch7's names need and PyTorch has no
** op for (src/ops/linalg_t7.lua): pivoted Cholesky of a semi-definite matrix
** (?pstrf, Torch7's torch.pstrf) and the eigen decomposition of a general
** real matrix with real outputs (?geev through linalg_eig.h, as
** torch.linalg.eig: eigenvalues as (re, im) rows and LAPACK's real packing
** of the eigenvectors, Torch7's torch.eig and PyTorch 1.13's deprecated
** torch.eig). Both take one 2-D float32/float64 matrix, as
** Torch7 did; src/vm/lua/t7lapack.lua gives them Torch7's call forms.
*/
#include <stdlib.h>
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "cpu/lapack.h"
#include "cpu/lapack_batch.h"
#include "cpu/linalg_eig.h"
#include "meta/meta.h"
#include "meta/linalg_solve.h"

/* a square float32/float64 matrix, or an error naming op and argument (meta/linalg_solve.h's
** check, which the meta device runs too) */
static int check_square(const char *op, const lt_tensor *a) { return lt_meta_t7_square(op, a); }

/* self's one matrix in column-major order (lapack_batch.h), and its data */
static void *column_major(lt_tensor *self, lt_lapack_batch *b) {
  if (lt_lapack_batch_from(b, self, false, lt_tensor_dtype(self), 0, NULL) < 0) return NULL;
  return lt_lapack_batch_at(b, 0);
}

/* ---- pivoted Cholesky ---- */

#define PSTRF_BODY(T, P) { \
  T *a = buf, tolv = (T)tol; \
  T *work = malloc(sizeof(T) * (size_t)(2 * n > 0 ? 2 * n : 1)); \
  if (!work) { info = -1000; break; } \
  P##pstrf_(&uplo, &n, a, &n, piv, &rank, &tolv, work, &info, 1); \
  free(work); \
  T *f = lt_tensor_data(fac); \
  for (lt_lapack_int i = 0; i < n; i++) \
    for (lt_lapack_int j = 0; j < n; j++) { \
      /* row-major f[i][j] from column-major a; outside the triangle, and in \
      ** the block LAPACK left unfactored past the rank, zero */ \
      bool keep = upper ? j >= i : i >= j; \
      if (i >= rank && j >= rank) keep = false; \
      f[(size_t)i * n + j] = keep ? a[i + (size_t)j * n] : 0; \
    } \
}

int lt_cpu__pstrf(lt_tensor *self, bool upper, double tol, lt_tensor **factor, lt_tensor **pivots) {
  const char *op = "pstrf";
  *factor = *pivots = NULL;
  if (check_square(op, self) < 0) return -1;
  lt_dtype dt = lt_tensor_dtype(self);
  lt_lapack_int n = (lt_lapack_int)self->sizes[0], rank = 0, info = 0;
  char uplo = upper ? 'U' : 'L';
  int64_t sz[2] = { n, n }, pn = n;
  lt_lapack_batch b = {0};
  void *buf = column_major(self, &b);
  lt_tensor *fac = lt_tensor_new(dt, lt_tensor_device(self), 2, sz);
  lt_tensor *piv_t = lt_tensor_new(LT_INT32, lt_tensor_device(self), 1, &pn);
  if (!buf || !fac || !piv_t) goto fail;
  lt_lapack_int *piv = lt_tensor_data(piv_t);
  do {
    if (n == 0) break;
    if (dt == LT_FLOAT64) PSTRF_BODY(double, d) else PSTRF_BODY(float, s)
  } while (0);
  if (info == -1000) { lt_error("out of memory"); goto fail; }
  if (info < 0) { lt_error("%s: LAPACK ?pstrf rejected argument %d", op, -info); goto fail; }
  /* info > 0: the matrix is semi-definite of rank `rank`, which is the point */
  lt_lapack_batch_release(&b);
  *factor = fac;
  *pivots = piv_t;
  return 0;
fail:
  lt_lapack_batch_release(&b);
  lt_tensor_release(fac);
  lt_tensor_release(piv_t);
  return -1;
}

/* ---- eigen decomposition of a general real matrix ---- */

/* geev's real form (linalg_eig.h, shared with torch.linalg.eig) into Torch7's layout:
** eigenvalues as (re, im) rows, the packed vectors row-major */
#define GEEV_BODY(T, GEEV) { \
  T *wr = malloc(sizeof(T) * (size_t)n), *wi = malloc(sizeof(T) * (size_t)n); \
  T *vr = vectors ? malloc(sizeof(T) * (size_t)n * (size_t)n) : NULL; \
  info = wr && wi && (!vectors || vr) ? GEEV(n, buf, wr, wi, vr) : LT_GEEV_NO_MEMORY; \
  if (info == 0) { \
    T *e = lt_tensor_data(ev); \
    for (lt_lapack_int i = 0; i < n; i++) { e[2 * i] = wr[i]; e[2 * i + 1] = wi[i]; } \
    if (vectors) { \
      T *v = lt_tensor_data(vv); \
      for (lt_lapack_int i = 0; i < n; i++) \
        for (lt_lapack_int j = 0; j < n; j++) v[(size_t)i * n + j] = vr[i + (size_t)j * n]; \
    } \
  } \
  free(wr); free(wi); free(vr); \
}

int lt_cpu__eig_real(lt_tensor *self, bool eigenvectors, lt_tensor **eigenvalues, lt_tensor **vecs) {
  const char *op = "eig";
  *eigenvalues = *vecs = NULL;
  if (check_square(op, self) < 0) return -1;
  lt_dtype dt = lt_tensor_dtype(self);
  lt_lapack_int n = (lt_lapack_int)self->sizes[0], info = 0;
  bool vectors = eigenvectors;
  int64_t esz[2] = { n, 2 }, vsz[2] = { vectors ? n : 0, vectors ? n : 0 };
  lt_lapack_batch b = {0};
  void *buf = column_major(self, &b);
  lt_tensor *ev = lt_tensor_new(dt, lt_tensor_device(self), 2, esz);
  lt_tensor *vv = lt_tensor_new(dt, lt_tensor_device(self), 2, vsz);
  if (!buf || !ev || !vv) goto fail;
  do {
    if (n == 0) break;
    if (dt == LT_FLOAT64) GEEV_BODY(double, lt_cpu_geev_real_f64) else GEEV_BODY(float, lt_cpu_geev_real_f32)
  } while (0);
  if (info == LT_GEEV_NO_MEMORY) { lt_error("out of memory"); goto fail; }
  if (info < 0) { lt_error("%s: LAPACK ?geev rejected argument %d", op, -info); goto fail; }
  if (info > 0) {
    lt_error("%s: the QR algorithm did not converge (eigenvalues %d..%d were not computed)", op, 1, info);
    goto fail;
  }
  lt_lapack_batch_release(&b);
  *eigenvalues = ev;
  *vecs = vv;
  return 0;
fail:
  lt_lapack_batch_release(&b);
  lt_tensor_release(ev);
  lt_tensor_release(vv);
  return -1;
}
