/*
** linalg_eig.h — the general (non-symmetric) eigendecomposition of one real
** matrix through LAPACK's geev, with the results laid out as complex numbers
** ((re, im) pairs, the layout of C99 complex and of the complex64/complex128
** dtypes), ready for torch.linalg.eig / eigvals, which are not wired to it yet:
** their kernel is then a batch loop over this (linalg_spectral_batch.h).
*/
#ifndef LT_CPU_LINALG_EIG_H
#define LT_CPU_LINALG_EIG_H

#include <stdint.h>

/* The info of a call that could not allocate its workspace. */
#define LT_GEEV_NO_MEMORY (-1000)

/* a: n x n column-major (leading dimension n), overwritten. w: 2n numbers, the eigenvalues
** as (re, im) pairs, complex conjugate pairs adjacent with the positive imaginary part first.
** v (NULL: not computed): 2 n^2 numbers, the right eigenvectors as complex columns
** (column j at v + 2 n j), each of unit 2-norm, matching w[j].
** Returns LAPACK's info: 0, > 0 when the QR algorithm failed to converge, < 0 for a bad
** argument or LT_GEEV_NO_MEMORY. */
int lt_cpu_geev_f64(int n, double *a, double *w, double *v);
int lt_cpu_geev_f32(int n, float *a, float *w, float *v);

#endif
