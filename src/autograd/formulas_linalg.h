/*
** formulas_linalg.h — derivative helpers for the linalg ops (see src/ops/README.md, "Derivatives").
** Each returns a new reference (the gradient, possibly in a broadcast shape that
** lt_grad_to_meta reduces) or NULL with the error set.
*/
#ifndef LT_FORMULAS_LINALG_H
#define LT_FORMULAS_LINALG_H

#include "autograd.h"

/* alpha = 1, for the formulas of mm, bmm, mv and outer that share the add* helpers */
#define LT_GRAD_ONE lt_scalar_int(1)

/* mm / addmm: alpha * grad @ mat2^T and alpha * mat1^T @ grad */
lt_tensor *lt_grad_mm_mat1(lt_tensor *grad, lt_tensor *mat2, lt_scalar alpha);
lt_tensor *lt_grad_mm_mat2(lt_tensor *grad, lt_tensor *mat1, lt_scalar alpha);
/* bmm / baddbmm: the same per batch */
lt_tensor *lt_grad_bmm_batch1(lt_tensor *grad, lt_tensor *batch2, lt_scalar alpha);
lt_tensor *lt_grad_bmm_batch2(lt_tensor *grad, lt_tensor *batch1, lt_scalar alpha);
/* addbmm: grad (n x p) is shared by every batch */
lt_tensor *lt_grad_addbmm_batch1(lt_tensor *grad, lt_tensor *batch2, lt_scalar alpha);
lt_tensor *lt_grad_addbmm_batch2(lt_tensor *grad, lt_tensor *batch1, lt_scalar alpha);
/* mv / addmv: alpha * outer(grad, vec) and alpha * mat^T @ grad */
lt_tensor *lt_grad_mv_mat(lt_tensor *grad, lt_tensor *vec, lt_scalar alpha);
lt_tensor *lt_grad_mv_vec(lt_tensor *grad, lt_tensor *mat, lt_scalar alpha);
/* outer / addr: alpha * grad @ vec2 and alpha * grad^T @ vec1 */
lt_tensor *lt_grad_outer_vec1(lt_tensor *grad, lt_tensor *vec2, lt_scalar alpha);
lt_tensor *lt_grad_outer_vec2(lt_tensor *grad, lt_tensor *vec1, lt_scalar alpha);
/* matmul, every case of operand ranks; batch broadcasting is summed by lt_grad_to_meta */
lt_tensor *lt_grad_matmul_self(lt_tensor *grad, lt_tensor *other, const lt_input_meta *self_meta);
lt_tensor *lt_grad_matmul_other(lt_tensor *grad, lt_tensor *self, const lt_input_meta *other_meta);
/* inner: contraction over the last dims */
lt_tensor *lt_grad_inner_self(lt_tensor *grad, lt_tensor *other, const lt_input_meta *self_meta);
lt_tensor *lt_grad_inner_other(lt_tensor *grad, lt_tensor *self, const lt_input_meta *other_meta);
/* trace: grad on the main diagonal */
lt_tensor *lt_grad_trace(lt_tensor *grad, const lt_input_meta *self_meta);
/* kron */
lt_tensor *lt_grad_kron_self(lt_tensor *grad, lt_tensor *other, const lt_input_meta *self_meta);
lt_tensor *lt_grad_kron_other(lt_tensor *grad, lt_tensor *self, const lt_input_meta *other_meta);

/* einsum (composite): the BLAS kernel when no operand needs a gradient, else the same
** contraction written with differentiable ops (diagonal, sum, permute, reshape, bmm) */
lt_tensor *lt_la_einsum_autograd(const char *equation, lt_tensor *const *tensors, int tensors_n);

#endif
