/*
** formulas_linalg_spectral.h — derivative helpers of src/ops/linalg_spectral.lua
** (QR, eigh, eig, SVD and the triangular solve the QR derivative uses), real or complex. The
** gradients of a multi-output op (grad_Q, grad_R, ...) may each be NULL: that
** output got no gradient. Each returns a new reference or NULL with the error set.
*/
#ifndef LT_FORMULAS_LINALG_SPECTRAL_H
#define LT_FORMULAS_LINALG_SPECTRAL_H

#include "autograd.h"

/* A = Q R: reduced, or complete with m <= n; mode "r" and complete with m > n are errors */
lt_tensor *lt_grad_linalg_qr(lt_tensor *grad_Q, lt_tensor *grad_R, lt_tensor *Q, lt_tensor *R, const char *mode);
/* A = V diag(L) V^H (Hermitian A): Hermitian gradient; unstable near repeated eigenvalues;
** for complex A an error when the loss depends on the vectors' phases */
lt_tensor *lt_grad_linalg_eigh(lt_tensor *grad_L, lt_tensor *grad_V, lt_tensor *L, lt_tensor *V);
/* A V = V diag(L) (general A, complex L and V): undefined at repeated eigenvalues, and an
** error when the loss depends on the vectors' phases */
lt_tensor *lt_grad_linalg_eig(lt_tensor *grad_L, lt_tensor *grad_V, lt_tensor *L, lt_tensor *V);
/* A = U diag(S) Vh; with full_matrices only the first min(m, n) vectors carry gradient;
** complex: an error when the loss depends on the vectors' phases */
lt_tensor *lt_grad_linalg_svd(lt_tensor *grad_U, lt_tensor *grad_S, lt_tensor *grad_Vh, lt_tensor *U,
                              lt_tensor *S, lt_tensor *Vh, bool full_matrices);
/* X = A^-1 B, A triangular: the gradients of A (its triangle) and of B */
lt_tensor *lt_grad_spectral_trsolve_A(lt_tensor *grad, lt_tensor *A, lt_tensor *X, bool upper);
lt_tensor *lt_grad_spectral_trsolve_B(lt_tensor *grad, lt_tensor *A, bool upper);

#endif
