/*
** capability.h — which build of the CPU kernels this process runs.
**
** The library is compiled for a baseline x86-64 (-march=x86-64-v2: SSE4.2,
** POPCNT), so it starts on any 64-bit PC of the last fifteen years. The hot
** kernels (every src/cpu file in CPU_VARIANT_SRC, Makefile) are compiled
** once more per instruction set: "avx2" (-march=x86-64-v3: AVX2, FMA, F16C,
** BMI) and "avx512" (-march=x86-64-v4: AVX-512 F, BW, CD, DQ, VL), each copy
** with its global names suffixed (__avx2, __avx512) so the copies link side
** by side (tools/cpu_variant.sh). Each copy carries a descriptor
** (variant.c: its kernel table, its strided copy and fill); lt_cpu_init picks
** one once, from what the CPU says it has, as PyTorch's CPU capability and
** Torch7's THVector dispatch do. $LUTORCH_CPU_CAPABILITY
** (default, avx2 or avx512, PyTorch's ATEN_CPU_CAPABILITY) asks for one:
** asking for more than the CPU runs, or for a build that is absent, warns on
** stderr and falls back to the best one that runs; never an illegal
** instruction. The conversions of cvt.h and the quantized products of
** quant.h, which pick their own paths with target attributes, never go
** above the level chosen here.
**
** A build for one machine (make OPT=-march=native) has no variants: its one
** build of the kernels is named after the widest instruction set its flags
** enable.
*/
#ifndef LT_CPU_CAPABILITY_H
#define LT_CPU_CAPABILITY_H

#include "core/tensor.h"

/* levels in order: a higher one runs everything a lower one does */
typedef enum { LT_CAP_DEFAULT = 0, LT_CAP_AVX2 = 1, LT_CAP_AVX512 = 2 } lt_cap_level;
#define LT_CAP_NLEVELS 3

/* the descriptor each build of the kernels carries (variant.c) */
typedef struct {
  lt_cap_level level;         /* the instruction sets it was compiled for */
  void *const *kernels;       /* its generated kernel table (op id -> kernel) */
  int (*copy)(lt_tensor *dst, const lt_tensor *src);  /* lt_cpu_copy of that build */
  int (*fill)(lt_tensor *dst, lt_scalar v);           /* lt_cpu_fill of that build */
} lt_cap_variant;

/* choose the build (lt_cpu_init calls it first; once is enough) */
void lt_capability_init(void);
/* the level in use; before lt_capability_init, the default build's */
lt_cap_level lt_capability_level(void);
/* its name: "default", "avx2" or "avx512" */
const char *lt_capability_name(lt_cap_level level);
/* the descriptor in use (NULL before lt_capability_init) */
const lt_cap_variant *lt_capability_variant(void);
/* whether this build has kernels for LEVEL and this CPU runs them */
int lt_capability_runnable(lt_cap_level level);

#endif
