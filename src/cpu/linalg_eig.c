/*
** linalg_eig.c — linalg_eig.h: one geev call per matrix (a workspace query,
** then the call), and LAPACK's real storage of complex eigenvectors unpacked
** into complex columns. For a pair w[j], w[j+1] = a +- bi, geev keeps one
** vector's real part in column j and its imaginary part in column j+1; the
** partner is its conjugate.
*/
#include <stdlib.h>
#include <string.h>
#include "cpu/linalg_eig.h"
#include "cpu/lapack.h"

typedef lt_lapack_int lint;

#define DEF_GEEV_REAL(NAME, P, T)                                                               \
  int NAME(int n, T *a, T *wr, T *wi, T *vr) {                                                  \
    lint nn = n, lda = n > 0 ? n : 1, ldvl = 1, ldvr = vr ? lda : 1, lw = -1, info = 0;         \
    char jl = 'N', jr = vr ? 'V' : 'N';                                                         \
    T q, dummy[1], *work;                                                                       \
    if (n == 0) return 0;                                                                       \
    P##geev_(&jl, &jr, &nn, a, &lda, wr, wi, dummy, &ldvl, vr ? vr : dummy, &ldvr, &q, &lw, &info, 1, 1); \
    lw = (lint)q > 1 ? (lint)q : 1;                                                             \
    if (!(work = malloc(sizeof(T) * (size_t)lw))) return LT_GEEV_NO_MEMORY;                     \
    P##geev_(&jl, &jr, &nn, a, &lda, wr, wi, dummy, &ldvl, vr ? vr : dummy, &ldvr, work, &lw, &info, 1, 1); \
    free(work);                                                                                 \
    return (int)info;                                                                           \
  }
DEF_GEEV_REAL(lt_cpu_geev_real_f64, d, double)
DEF_GEEV_REAL(lt_cpu_geev_real_f32, s, float)

#define DEF_GEEV(NAME, REAL, T)                                                                 \
  int NAME(int n, T *a, T *w, T *v) {                                                           \
    size_t nz = (size_t)(n > 0 ? n : 1);                                                        \
    T *wr = malloc(sizeof(T) * nz), *wi = malloc(sizeof(T) * nz);                               \
    T *vr = v ? malloc(sizeof(T) * nz * nz) : NULL;                                             \
    int info = LT_GEEV_NO_MEMORY;                                                               \
    if (wr && wi && (!v || vr)) info = REAL(n, a, wr, wi, vr);                                  \
    if (info) goto done;                                                                        \
    for (int j = 0; j < n; j++) { w[2 * j] = wr[j]; w[2 * j + 1] = wi[j]; }                     \
    for (int j = 0; v && j < n; j++) {                                                          \
      T *out = v + 2 * (size_t)n * j;                                                           \
      const T *col = vr + (size_t)n * j;                                                        \
      if (wi[j] == 0) {                                      /* a real eigenvalue */            \
        for (int i = 0; i < n; i++) { out[2 * i] = col[i]; out[2 * i + 1] = 0; }                \
      } else if (wi[j] > 0 && j + 1 < n) {                   /* a pair: re + i im, re - i im */ \
        const T *im = col + n;                                                                  \
        T *out2 = out + 2 * (size_t)n;                                                          \
        for (int i = 0; i < n; i++) {                                                           \
          out[2 * i] = col[i]; out[2 * i + 1] = im[i];                                          \
          out2[2 * i] = col[i]; out2[2 * i + 1] = -im[i];                                       \
        }                                                                                       \
        j++;                                                                                    \
      }                                                                                         \
    }                                                                                           \
  done:                                                                                         \
    free(wr); free(wi); free(vr);                                                               \
    return info;                                                                                \
  }
DEF_GEEV(lt_cpu_geev_f64, lt_cpu_geev_real_f64, double)
DEF_GEEV(lt_cpu_geev_f32, lt_cpu_geev_real_f32, float)

/* complex: w and v are written by LAPACK directly; rwork is 2n reals */
#define DEF_GEEV_COMPLEX(NAME, P, C, R)                                                         \
  int NAME(int n, R *a, R *w, R *v) {                                                           \
    lint nn = n, lda = n > 0 ? n : 1, ldvl = 1, ldvr = v ? lda : 1, lw = -1, info = 0;          \
    char jl = 'N', jr = v ? 'V' : 'N';                                                          \
    C q, dummy[1], *work;                                                                       \
    R *rwork;                                                                                   \
    if (n == 0) return 0;                                                                       \
    if (!(rwork = malloc(sizeof(R) * 2 * (size_t)n))) return LT_GEEV_NO_MEMORY;                 \
    P##geev_(&jl, &jr, &nn, (C *)a, &lda, (C *)w, dummy, &ldvl, v ? (C *)v : dummy, &ldvr, &q, &lw, rwork, &info, 1, 1); \
    lw = (lint)creal(q) > 1 ? (lint)creal(q) : 1;                                               \
    if (!(work = malloc(sizeof(C) * (size_t)lw))) { free(rwork); return LT_GEEV_NO_MEMORY; }    \
    P##geev_(&jl, &jr, &nn, (C *)a, &lda, (C *)w, dummy, &ldvl, v ? (C *)v : dummy, &ldvr, work, &lw, rwork, &info, 1, 1); \
    free(work);                                                                                 \
    free(rwork);                                                                                \
    return (int)info;                                                                           \
  }
DEF_GEEV_COMPLEX(lt_cpu_geev_c128, z, lt_cdouble, double)
DEF_GEEV_COMPLEX(lt_cpu_geev_c64, c, lt_cfloat, float)
