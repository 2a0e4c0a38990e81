/*
** formulas_linalg_solve.h — derivative helpers of src/ops/linalg_solve.lua
** (the solvers, Cholesky, determinants, least squares). Each returns a new
** reference (the gradient, possibly in a broadcast shape that lt_grad_to_meta
** reduces) or NULL with the error set; all are written with entry points, so
** create_graph records them and double backward works.
*/
#ifndef LT_FORMULAS_LINALG_SOLVE_H
#define LT_FORMULAS_LINALG_SOLVE_H

#include "autograd.h"


/* linalg.solve_ex: X = A^-1 B (left) or B A^-1 */
lt_tensor *lt_grad_linalg_solve_A(lt_tensor *grad, lt_tensor *A, lt_tensor *result, bool left);
lt_tensor *lt_grad_linalg_solve_B(lt_tensor *grad, lt_tensor *A, bool left);
/* linalg.lu_solve with respect to B: the solve with the adjoint flipped */
lt_tensor *lt_grad_lu_solve_B(lt_tensor *grad, lt_tensor *LU, lt_tensor *pivots, bool left, bool adjoint);
/* ... and with respect to LU: the gradient of the A = P L U it stands for, mapped onto L and U */
lt_tensor *lt_grad_lu_solve_LU(lt_tensor *grad, lt_tensor *LU, lt_tensor *pivots, lt_tensor *result, bool left,
                               bool adjoint);
/* linalg.lu_factor_ex, any m x n A: for square A gA = P L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H;
** a wide or tall A adds the terms of U's extra columns or L's extra rows */
lt_tensor *lt_grad_lu_factor(lt_tensor *grad, lt_tensor *LU, lt_tensor *pivots);
/* linalg.cholesky_ex: the symmetric gradient of A = L L^T (Murray 2016) */
lt_tensor *lt_grad_cholesky(lt_tensor *grad, lt_tensor *L, bool upper);
/* linalg.solve_triangular */
lt_tensor *lt_grad_solve_triangular_A(lt_tensor *grad, lt_tensor *A, lt_tensor *result, bool upper, bool left,
                                      bool unitriangular);
lt_tensor *lt_grad_solve_triangular_B(lt_tensor *grad, lt_tensor *A, bool upper, bool left, bool unitriangular);
/* det: grad * conj(det) * A^-H; logabsdet: grad * A^-H (non-singular A) */
lt_tensor *lt_grad_det(lt_tensor *grad, lt_tensor *A, lt_tensor *det);
/* slogdet: (g_logabsdet + i Im(g_sign conj(sign))) * A^-H; either gradient may be NULL */
lt_tensor *lt_grad_slogdet(lt_tensor *grad_logabsdet, lt_tensor *grad_sign, lt_tensor *A, lt_tensor *sign);
/* linalg.lstsq for A of full column rank: X = (A^T A)^-1 A^T B */
lt_tensor *lt_grad_lstsq_A(lt_tensor *grad, lt_tensor *A, lt_tensor *B, lt_tensor *solution);
lt_tensor *lt_grad_lstsq_B(lt_tensor *grad, lt_tensor *A);

#endif
