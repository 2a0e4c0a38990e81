/*
** la_einsum.c — einsum's CPU kernel: meta/einsum_gemm.c's contraction
** (operands as strided views over the labels, contracted two at a time as
** batched products) over lt_la_gemm.
*/
#include "kernels_cpu.h"   /* generated: lt_ops.h and the CPU kernels */
#include "cpu/la_gemm.h"
#include "meta/linalg.h"

lt_tensor *lt_cpu_einsum(const char *equation, lt_tensor *const *tensors, int n) {
  return lt_meta_einsum(lt_la_gemm, equation, tensors, n);
}
