/*
** variant.c — the descriptor of one build of the CPU kernels (capability.h).
** It is compiled with the kernels, once per instruction set: in the build for
** AVX2 its name becomes lt_cap_variant_self__avx2 and its table, copy and
** fill are that build's (tools/cpu_variant.sh renames them together).
** capability.c picks one descriptor at start-up.
*/
#include "cpu/capability.h"
#include "cpu/cpu.h"
#include "kernels_cpu.h"   /* generated: lt_cpu_kernel_table */

/* the instruction sets this copy was compiled for, as its flags say (the
** Makefile's -march of the variant, or the build's own -march) */
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
#define LEVEL LT_CAP_AVX512
#elif defined(__AVX2__) && defined(__FMA__)
#define LEVEL LT_CAP_AVX2
#else
#define LEVEL LT_CAP_DEFAULT
#endif

const lt_cap_variant lt_cap_variant_self = {
  .level = LEVEL,
  .kernels = lt_cpu_kernel_table,
  .copy = lt_cpu_copy,
  .fill = lt_cpu_fill,
};
