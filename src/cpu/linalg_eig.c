/*
** linalg_eig.c — linalg_eig.h: one geev call per matrix, then LAPACK's real
** storage of complex eigenvectors unpacked into complex columns. For a pair
** w[j], w[j+1] = a +- bi, geev keeps one vector's real part in column j and its
** imaginary part in column j+1; the partner is its conjugate.
*/
#include <stdlib.h>
#include "cpu/linalg_eig.h"
#include "cpu/lapack.h"

#define DEF_GEEV(NAME, P, T)                                                                    \
  int NAME(int n, T *a, T *w, T *v) {                                                           \
    lt_lapack_int nn = n, lda = n > 0 ? n : 1, ldvl = 1, ldvr = lda, lw = -1, info = 0;         \
    char jl = 'N', jr = v ? 'V' : 'N';                                                          \
    T q, dummy[1];                                                                              \
    size_t nz = (size_t)(n > 0 ? n : 1);                                                        \
    T *wr = malloc(sizeof(T) * nz), *wi = malloc(sizeof(T) * nz);                               \
    T *vr = v ? malloc(sizeof(T) * nz * nz) : NULL, *work = NULL;                               \
    if (!wr || !wi || (v && !vr)) { info = LT_GEEV_NO_MEMORY; goto done; }                      \
    P##geev_(&jl, &jr, &nn, a, &lda, wr, wi, dummy, &ldvl, vr ? vr : dummy, &ldvr, &q, &lw, &info, 1, 1); \
    lw = (lt_lapack_int)q > 1 ? (lt_lapack_int)q : 1;                                           \
    if (!(work = malloc(sizeof(T) * (size_t)lw))) { info = LT_GEEV_NO_MEMORY; goto done; }      \
    P##geev_(&jl, &jr, &nn, a, &lda, wr, wi, dummy, &ldvl, vr ? vr : dummy, &ldvr, work, &lw, &info, 1, 1); \
    if (info) goto done;                                                                        \
    for (int j = 0; j < n; j++) { w[2 * j] = wr[j]; w[2 * j + 1] = wi[j]; }                     \
    if (v) {                                                                                    \
      for (int j = 0; j < n; j++) {                                                             \
        T *out = v + 2 * (size_t)n * j;                                                         \
        const T *col = vr + (size_t)n * j;                                                      \
        if (wi[j] == 0) {                                      /* a real eigenvalue */          \
          for (int i = 0; i < n; i++) { out[2 * i] = col[i]; out[2 * i + 1] = 0; }              \
        } else if (wi[j] > 0 && j + 1 < n) {                   /* a pair: re + i im, re - i im */ \
          const T *im = col + n;                                                                \
          T *out2 = out + 2 * (size_t)n;                                                        \
          for (int i = 0; i < n; i++) {                                                         \
            out[2 * i] = col[i]; out[2 * i + 1] = im[i];                                        \
            out2[2 * i] = col[i]; out2[2 * i + 1] = -im[i];                                     \
          }                                                                                     \
          j++;                                                                                  \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
  done:                                                                                         \
    free(wr); free(wi); free(vr); free(work);                                                   \
    return (int)info;                                                                           \
  }
DEF_GEEV(lt_cpu_geev_f64, d, double)
DEF_GEEV(lt_cpu_geev_f32, s, float)
