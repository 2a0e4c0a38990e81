/*
** linalg_eig.h — the general (non-symmetric) eigendecomposition of one
** matrix through LAPACK's geev: real matrices (s/dgeev) in LAPACK's own real
** form (Torch7's torch.eig) or unpacked into complex numbers, and complex
** matrices (c/zgeev). Complex results are (re, im) pairs, the layout of C99
** complex and of the complex64/complex128 dtypes. torch.linalg.eig's kernel
** (linalg_spectral_eig.c) and torch._eig_real (linalg_t7.c) are batch loops
** over these.
*/
#ifndef LT_CPU_LINALG_EIG_H
#define LT_CPU_LINALG_EIG_H

#include <stdint.h>

/* The info of a call that could not allocate its workspace. */
#define LT_GEEV_NO_MEMORY (-1000)

/* LAPACK's real form. a: n x n column-major (leading dimension n), overwritten. wr, wi:
** n numbers each, the real and imaginary parts of the eigenvalues, a complex conjugate
** pair adjacent with the positive imaginary part first. vr (NULL: not computed): n x n
** column-major; a real eigenvalue's vector is its column, a pair's vector has its real
** part in the first column and its imaginary part in the second.
** Returns LAPACK's info: 0, > 0 when the QR algorithm failed to converge, < 0 for a bad
** argument or LT_GEEV_NO_MEMORY. */
int lt_cpu_geev_real_f64(int n, double *a, double *wr, double *wi, double *vr);
int lt_cpu_geev_real_f32(int n, float *a, float *wr, float *wi, float *vr);

/* A real a as above; w: 2n numbers, the eigenvalues as (re, im) pairs in LAPACK's order.
** v (NULL: not computed): 2 n^2 numbers, the right eigenvectors as complex columns
** (column j at v + 2 n j), each of unit 2-norm, matching w[j]. Returns as above. */
int lt_cpu_geev_f64(int n, double *a, double *w, double *v);
int lt_cpu_geev_f32(int n, float *a, float *w, float *v);

/* A complex a (2 n^2 numbers, column-major), overwritten; w and v as above. */
int lt_cpu_geev_c128(int n, double *a, double *w, double *v);
int lt_cpu_geev_c64(int n, float *a, float *w, float *v);

#endif
