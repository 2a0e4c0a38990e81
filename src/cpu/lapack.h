/*
** lapack.h — the LAPACK routines the CPU's linear algebra calls, as the
** Fortran symbols OpenBLAS exports (libopenblas carries LAPACK, so no
** further library is linked). Fortran passes every argument by reference,
** stores matrices column-major, and appends the length of each CHARACTER
** argument after the others (gfortran's ABI: size_t, one per char argument);
** the prototypes declare those lengths so calls match the callee exactly.
** Complex arrays are C99 complex: a pair (re, im) in memory, as Fortran has.
*/
#ifndef LT_CPU_LAPACK_H
#define LT_CPU_LAPACK_H

#include <stddef.h>
#include <complex.h>

typedef int lt_lapack_int;           /* OpenBLAS's LAPACK: 32-bit integers */
typedef float _Complex lt_cfloat;
typedef double _Complex lt_cdouble;

#define LT_LAPACK_INT lt_lapack_int
#define LT_CHARLEN size_t

/* ---- LU: getrf (factor), getrs (solve with it), getri (inverse from it) ---- */
#define LT_LAPACK_LU(P, T) \
  void P##getrf_(const LT_LAPACK_INT *m, const LT_LAPACK_INT *n, T *a, const LT_LAPACK_INT *lda, \
                 LT_LAPACK_INT *ipiv, LT_LAPACK_INT *info); \
  void P##getrs_(const char *trans, const LT_LAPACK_INT *n, const LT_LAPACK_INT *nrhs, const T *a, \
                 const LT_LAPACK_INT *lda, const LT_LAPACK_INT *ipiv, T *b, const LT_LAPACK_INT *ldb, \
                 LT_LAPACK_INT *info, LT_CHARLEN trans_len); \
  void P##getri_(const LT_LAPACK_INT *n, T *a, const LT_LAPACK_INT *lda, const LT_LAPACK_INT *ipiv, \
                 T *work, const LT_LAPACK_INT *lwork, LT_LAPACK_INT *info);

/* ---- Cholesky: potrf, potrs, potri; pstrf (pivoted, semi-definite) ---- */
#define LT_LAPACK_CHOL(P, T, R) \
  void P##potrf_(const char *uplo, const LT_LAPACK_INT *n, T *a, const LT_LAPACK_INT *lda, \
                 LT_LAPACK_INT *info, LT_CHARLEN uplo_len); \
  void P##potrs_(const char *uplo, const LT_LAPACK_INT *n, const LT_LAPACK_INT *nrhs, const T *a, \
                 const LT_LAPACK_INT *lda, T *b, const LT_LAPACK_INT *ldb, LT_LAPACK_INT *info, \
                 LT_CHARLEN uplo_len); \
  void P##potri_(const char *uplo, const LT_LAPACK_INT *n, T *a, const LT_LAPACK_INT *lda, \
                 LT_LAPACK_INT *info, LT_CHARLEN uplo_len); \
  void P##pstrf_(const char *uplo, const LT_LAPACK_INT *n, T *a, const LT_LAPACK_INT *lda, \
                 LT_LAPACK_INT *piv, LT_LAPACK_INT *rank, const R *tol, R *work, LT_LAPACK_INT *info, \
                 LT_CHARLEN uplo_len);

/* ---- triangular solve: trtrs ---- */
#define LT_LAPACK_TRI(P, T) \
  void P##trtrs_(const char *uplo, const char *trans, const char *diag, const LT_LAPACK_INT *n, \
                 const LT_LAPACK_INT *nrhs, const T *a, const LT_LAPACK_INT *lda, T *b, \
                 const LT_LAPACK_INT *ldb, LT_LAPACK_INT *info, LT_CHARLEN uplo_len, \
                 LT_CHARLEN trans_len, LT_CHARLEN diag_len);

/* ---- QR: geqrf; orgqr/ungqr (form Q); ormqr/unmqr (apply Q) ---- */
#define LT_LAPACK_QR(P, T, Q) \
  void P##geqrf_(const LT_LAPACK_INT *m, const LT_LAPACK_INT *n, T *a, const LT_LAPACK_INT *lda, \
                 T *tau, T *work, const LT_LAPACK_INT *lwork, LT_LAPACK_INT *info); \
  void P##Q##gqr_(const LT_LAPACK_INT *m, const LT_LAPACK_INT *n, const LT_LAPACK_INT *k, T *a, \
                  const LT_LAPACK_INT *lda, const T *tau, T *work, const LT_LAPACK_INT *lwork, \
                  LT_LAPACK_INT *info); \
  void P##Q##mqr_(const char *side, const char *trans, const LT_LAPACK_INT *m, const LT_LAPACK_INT *n, \
                  const LT_LAPACK_INT *k, const T *a, const LT_LAPACK_INT *lda, const T *tau, T *c, \
                  const LT_LAPACK_INT *ldc, T *work, const LT_LAPACK_INT *lwork, LT_LAPACK_INT *info, \
                  LT_CHARLEN side_len, LT_CHARLEN trans_len);

/* ---- least squares: gels (QR, full rank), gelsd (SVD), gelsy (pivoted QR) ---- */
#define LT_LAPACK_LSQ_REAL(P, T) \
  void P##gels_(const char *trans, const LT_LAPACK_INT *m, const LT_LAPACK_INT *n, \
                const LT_LAPACK_INT *nrhs, T *a, const LT_LAPACK_INT *lda, T *b, const LT_LAPACK_INT *ldb, \
                T *work, const LT_LAPACK_INT *lwork, LT_LAPACK_INT *info, LT_CHARLEN trans_len); \
  void P##gelsd_(const LT_LAPACK_INT *m, const LT_LAPACK_INT *n, const LT_LAPACK_INT *nrhs, T *a, \
                 const LT_LAPACK_INT *lda, T *b, const LT_LAPACK_INT *ldb, T *s, const T *rcond, \
                 LT_LAPACK_INT *rank, T *work, const LT_LAPACK_INT *lwork, LT_LAPACK_INT *iwork, \
                 LT_LAPACK_INT *info); \
  void P##gelsy_(const LT_LAPACK_INT *m, const LT_LAPACK_INT *n, const LT_LAPACK_INT *nrhs, T *a, \
                 const LT_LAPACK_INT *lda, T *b, const LT_LAPACK_INT *ldb, LT_LAPACK_INT *jpvt, \
                 const T *rcond, LT_LAPACK_INT *rank, T *work, const LT_LAPACK_INT *lwork, \
                 LT_LAPACK_INT *info);
#define LT_LAPACK_LSQ_COMPLEX(P, T, R) \
  void P##gels_(const char *trans, const LT_LAPACK_INT *m, const LT_LAPACK_INT *n, \
                const LT_LAPACK_INT *nrhs, T *a, const LT_LAPACK_INT *lda, T *b, const LT_LAPACK_INT *ldb, \
                T *work, const LT_LAPACK_INT *lwork, LT_LAPACK_INT *info, LT_CHARLEN trans_len); \
  void P##gelsd_(const LT_LAPACK_INT *m, const LT_LAPACK_INT *n, const LT_LAPACK_INT *nrhs, T *a, \
                 const LT_LAPACK_INT *lda, T *b, const LT_LAPACK_INT *ldb, R *s, const R *rcond, \
                 LT_LAPACK_INT *rank, T *work, const LT_LAPACK_INT *lwork, R *rwork, \
                 LT_LAPACK_INT *iwork, LT_LAPACK_INT *info); \
  void P##gelsy_(const LT_LAPACK_INT *m, const LT_LAPACK_INT *n, const LT_LAPACK_INT *nrhs, T *a, \
                 const LT_LAPACK_INT *lda, T *b, const LT_LAPACK_INT *ldb, LT_LAPACK_INT *jpvt, \
                 const R *rcond, LT_LAPACK_INT *rank, T *work, const LT_LAPACK_INT *lwork, R *rwork, \
                 LT_LAPACK_INT *info);

/* ---- least squares by the full SVD: gelss (complex: a real work array rwork) ---- */
#define LT_LAPACK_GELSS_REAL(P, T) \
  void P##gelss_(const LT_LAPACK_INT *m, const LT_LAPACK_INT *n, const LT_LAPACK_INT *nrhs, T *a, \
                 const LT_LAPACK_INT *lda, T *b, const LT_LAPACK_INT *ldb, T *s, const T *rcond, \
                 LT_LAPACK_INT *rank, T *work, const LT_LAPACK_INT *lwork, LT_LAPACK_INT *info);
#define LT_LAPACK_GELSS_COMPLEX(P, T, R) \
  void P##gelss_(const LT_LAPACK_INT *m, const LT_LAPACK_INT *n, const LT_LAPACK_INT *nrhs, T *a, \
                 const LT_LAPACK_INT *lda, T *b, const LT_LAPACK_INT *ldb, R *s, const R *rcond, \
                 LT_LAPACK_INT *rank, T *work, const LT_LAPACK_INT *lwork, R *rwork, LT_LAPACK_INT *info);

/* ---- eigen and singular values, real: syevd, geev, gesdd ---- */
#define LT_LAPACK_EIG_REAL(P, T) \
  void P##syevd_(const char *jobz, const char *uplo, const LT_LAPACK_INT *n, T *a, \
                 const LT_LAPACK_INT *lda, T *w, T *work, const LT_LAPACK_INT *lwork, \
                 LT_LAPACK_INT *iwork, const LT_LAPACK_INT *liwork, LT_LAPACK_INT *info, \
                 LT_CHARLEN jobz_len, LT_CHARLEN uplo_len); \
  void P##geev_(const char *jobvl, const char *jobvr, const LT_LAPACK_INT *n, T *a, \
                const LT_LAPACK_INT *lda, T *wr, T *wi, T *vl, const LT_LAPACK_INT *ldvl, T *vr, \
                const LT_LAPACK_INT *ldvr, T *work, const LT_LAPACK_INT *lwork, LT_LAPACK_INT *info, \
                LT_CHARLEN jobvl_len, LT_CHARLEN jobvr_len); \
  void P##gesdd_(const char *jobz, const LT_LAPACK_INT *m, const LT_LAPACK_INT *n, T *a, \
                 const LT_LAPACK_INT *lda, T *s, T *u, const LT_LAPACK_INT *ldu, T *vt, \
                 const LT_LAPACK_INT *ldvt, T *work, const LT_LAPACK_INT *lwork, LT_LAPACK_INT *iwork, \
                 LT_LAPACK_INT *info, LT_CHARLEN jobz_len);

/* ---- the same, complex: heevd, geev, gesdd (real work arrays of type R) ---- */
#define LT_LAPACK_EIG_COMPLEX(P, T, R) \
  void P##heevd_(const char *jobz, const char *uplo, const LT_LAPACK_INT *n, T *a, \
                 const LT_LAPACK_INT *lda, R *w, T *work, const LT_LAPACK_INT *lwork, R *rwork, \
                 const LT_LAPACK_INT *lrwork, LT_LAPACK_INT *iwork, const LT_LAPACK_INT *liwork, \
                 LT_LAPACK_INT *info, LT_CHARLEN jobz_len, LT_CHARLEN uplo_len); \
  void P##geev_(const char *jobvl, const char *jobvr, const LT_LAPACK_INT *n, T *a, \
                const LT_LAPACK_INT *lda, T *w, T *vl, const LT_LAPACK_INT *ldvl, T *vr, \
                const LT_LAPACK_INT *ldvr, T *work, const LT_LAPACK_INT *lwork, R *rwork, \
                LT_LAPACK_INT *info, LT_CHARLEN jobvl_len, LT_CHARLEN jobvr_len); \
  void P##gesdd_(const char *jobz, const LT_LAPACK_INT *m, const LT_LAPACK_INT *n, T *a, \
                 const LT_LAPACK_INT *lda, R *s, T *u, const LT_LAPACK_INT *ldu, T *vt, \
                 const LT_LAPACK_INT *ldvt, T *work, const LT_LAPACK_INT *lwork, R *rwork, \
                 LT_LAPACK_INT *iwork, LT_LAPACK_INT *info, LT_CHARLEN jobz_len);

LT_LAPACK_LU(s, float)
LT_LAPACK_LU(d, double)
LT_LAPACK_LU(c, lt_cfloat)
LT_LAPACK_LU(z, lt_cdouble)
LT_LAPACK_CHOL(s, float, float)
LT_LAPACK_CHOL(d, double, double)
LT_LAPACK_CHOL(c, lt_cfloat, float)
LT_LAPACK_CHOL(z, lt_cdouble, double)
LT_LAPACK_TRI(s, float)
LT_LAPACK_TRI(d, double)
LT_LAPACK_TRI(c, lt_cfloat)
LT_LAPACK_TRI(z, lt_cdouble)
LT_LAPACK_QR(s, float, or)
LT_LAPACK_QR(d, double, or)
LT_LAPACK_QR(c, lt_cfloat, un)
LT_LAPACK_QR(z, lt_cdouble, un)
LT_LAPACK_LSQ_REAL(s, float)
LT_LAPACK_LSQ_REAL(d, double)
LT_LAPACK_LSQ_COMPLEX(c, lt_cfloat, float)
LT_LAPACK_LSQ_COMPLEX(z, lt_cdouble, double)
LT_LAPACK_GELSS_REAL(s, float)
LT_LAPACK_GELSS_REAL(d, double)
LT_LAPACK_GELSS_COMPLEX(c, lt_cfloat, float)
LT_LAPACK_GELSS_COMPLEX(z, lt_cdouble, double)
LT_LAPACK_EIG_REAL(s, float)
LT_LAPACK_EIG_REAL(d, double)
LT_LAPACK_EIG_COMPLEX(c, lt_cfloat, float)
LT_LAPACK_EIG_COMPLEX(z, lt_cdouble, double)


/* ---- complex: the solve family */
/* The kernels of src/ops/linalg_solve.lua pick one of LAPACK's four
** precisions from the dtype and call the routine of that letter with one
** argument list: matrix arguments are void * (any of the four element types
** converts), the integers and characters are the same for all four. */
#include "core/dtype.h"

typedef enum { LT_LAPACK_S, LT_LAPACK_D, LT_LAPACK_C, LT_LAPACK_Z } lt_lapack_kind;

static inline lt_lapack_kind lt_lapack_kind_of(lt_dtype dt) {
  return dt == LT_FLOAT64 ? LT_LAPACK_D : dt == LT_COMPLEX64 ? LT_LAPACK_C : dt == LT_COMPLEX128 ? LT_LAPACK_Z
                                                                                                  : LT_LAPACK_S;
}
static inline bool lt_lapack_kind_complex(lt_lapack_kind k) { return k == LT_LAPACK_C || k == LT_LAPACK_Z; }

/* ROUTINE_ of kind K: LT_LAPACK_CALL(k, getrf_, &m, &n, a, &lda, ipiv, &info) */
#define LT_LAPACK_CALL(K, ROUTINE, ...)               \
  do {                                                \
    switch (K) {                                      \
    case LT_LAPACK_S: s##ROUTINE(__VA_ARGS__); break; \
    case LT_LAPACK_D: d##ROUTINE(__VA_ARGS__); break; \
    case LT_LAPACK_C: c##ROUTINE(__VA_ARGS__); break; \
    default: z##ROUTINE(__VA_ARGS__); break;          \
    }                                                 \
  } while (0)

#endif
