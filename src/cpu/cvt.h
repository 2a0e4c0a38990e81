/*
** cvt.h — contiguous conversions between the 16-bit floats and float32, the
** one helper the 16-bit kernels go through: the casts (ew_cast.c), the
** float16 elementwise loops (ew.h) and folds (reduce.c), the matrix products
** (la_gemm.c) and, through the casts, the nn kernels run in float32
** (src/ops/lowp.lua) convert a block to float32, run the float32 code and
** convert back. (bfloat16's elementwise
** loops and folds convert inline instead: ew.h says why.)
**
** Each conversion has one implementation per instruction set, picked once
** at start-up from what the CPU says it has (__builtin_cpu_supports), so
** one binary runs everywhere:
**   avx512bf16  float32 -> bfloat16 by VCVTNEPS2BF16 (denormal inputs, which
**               that instruction flushes to zero, are redone by the AVX-512F
**               code so every path gives the same bits); the rest as avx512
**   avx512      AVX-512F: 16 lanes, bfloat16 rounding in integer arithmetic,
**               float16 by VCVTPH2PS / VCVTPS2PH
**   avx2        AVX2 + F16C: 8 lanes, the same arithmetic
**   portable    plain C (the compiler vectorises what it can for -march)
** Rounding is to nearest even everywhere; a NaN stays a NaN (bfloat16: the
** top half with the quiet bit set, as PyTorch; float16: a quiet NaN).
** The pointers start on the portable path, so they work before lt_cpu_init.
*/
#ifndef LT_CPU_CVT_H
#define LT_CPU_CVT_H

#include <stdint.h>

/* dst[i] = src[i], i < n; dst and src do not overlap */
typedef void (*lt_cvt_to32_fn)(float *dst, const uint16_t *src, int64_t n);
typedef void (*lt_cvt_from32_fn)(uint16_t *dst, const float *src, int64_t n);

extern lt_cvt_to32_fn lt_cvt_bf16_to_f32, lt_cvt_f16_to_f32;
extern lt_cvt_from32_fn lt_cvt_f32_to_bf16, lt_cvt_f32_to_f16;

/* kind 1: float16, 2: bfloat16 (the codes of EW_HK_* in ew.h and red.h) */
static inline void lt_cvt_half_to_f32(int kind, float *dst, const uint16_t *src, int64_t n) {
  (kind == 2 ? lt_cvt_bf16_to_f32 : lt_cvt_f16_to_f32)(dst, src, n);
}
static inline void lt_cvt_f32_to_half(int kind, uint16_t *dst, const float *src, int64_t n) {
  (kind == 2 ? lt_cvt_f32_to_bf16 : lt_cvt_f32_to_f16)(dst, src, n);
}

/* Pick the best path this CPU runs (lt_cpu_init calls it). */
void lt_cvt_init(void);
/* The path in use: "avx512bf16", "avx512", "avx2" or "portable". */
const char *lt_cvt_path(void);
/* Use a named path (tests compare them); -1 with an error when this CPU
** lacks its instructions or the name is unknown. */
int lt_cvt_select(const char *path);
/* whether the CPU has AVX512_BF16 (the bfloat16 instructions) */
int lt_cvt_cpu_has_bf16(void);

#endif
