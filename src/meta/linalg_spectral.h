/*
** linalg_spectral.h — device-neutral checks and result shapes of the spectral
** linear algebra (QR, eigh, SVD, householder_product, ormqr; src/ops/linalg_spectral.lua),
** so every backend rejects the same bad input with the same message.
** Functions return 0 / -1 (error slot set, naming the op and the argument).
*/
#ifndef LT_META_LINALG_SPECTRAL_H
#define LT_META_LINALG_SPECTRAL_H

#include "core/tensor.h"

/* t is a batch of matrices (ndim >= 2) of float32, float64, complex64 or complex128;
** square when asked */
int lt_meta_spectral_matrix(const char *op, const char *arg, const lt_tensor *t, bool square);
/* linalg.qr's mode: 0 reduced, 1 complete, 2 r; -1 and an error for another string */
int lt_meta_qr_mode(const char *op, const char *mode);
/* eigh's UPLO ("L"/"U", either case): 'L' or 'U'; 0 and an error otherwise */
char lt_meta_eigh_uplo(const char *op, const char *uplo);
/* b's leading dims (all but its last `keep`) equal a's (all but a's last `akeep`) */
int lt_meta_same_batch(const char *op, const char *aname, const lt_tensor *a, int akeep,
                       const char *bname, const lt_tensor *b, int bkeep);
/* householder_product(A, tau): A (..., m, n), m >= n, tau (..., k), k <= n */
int lt_meta_householder(const char *op, const lt_tensor *a, const lt_tensor *tau);
/* ormqr(A, tau, C, left): A (..., mn, k), tau (..., k'), k' <= k, mn the rows (left) or columns of C */
int lt_meta_ormqr(const char *op, const lt_tensor *a, const lt_tensor *tau, const lt_tensor *c, bool left);
/* _linalg_spectral_trsolve(A, B): A (..., n, n), B (..., n, r) of A's dtype and batch */
int lt_meta_spectral_trsolve(const char *op, const lt_tensor *a, const lt_tensor *b);

#endif
