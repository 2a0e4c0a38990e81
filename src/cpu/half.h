/*
** half.h — running a float32 kernel for float16 / bfloat16 tensors: the
** inputs converted to float32 (cvt.h's vector conversions), the kernel run,
** the result rounded back once. For the convolutions, whose im2col and GEMM
** plumbing is float32/float64 only: float32 accumulation, as PyTorch's CPU
** kernels do for bfloat16. (Pooling and resampling get the same from the
** generated wrappers of src/ops/lowp.lua.) Internal to src/cpu.
*/
#ifndef LT_CPU_HALF_H
#define LT_CPU_HALF_H

#include "core/tensor.h"

static inline bool lt_half_dtype(lt_dtype d) { return d == LT_FLOAT16 || d == LT_BFLOAT16; }

/* float32 copies of n tensors (NULLs stay NULL): 0, or -1 with nothing held */
int lt_half_in(lt_tensor **dst, lt_tensor *const *src, int n);
void lt_half_release(lt_tensor **t, int n);
/* r (float32; the reference is consumed) converted to dt; NULL passes through */
lt_tensor *lt_half_out(lt_tensor *r, lt_dtype dt);

#endif
