/*
** quant.h — the CPU's quantized kernels' instruction-set paths. Private to
** src/cpu (quant.c, quant_gemm.c).
**
** One binary runs everywhere: the AVX2 and AVX-512 loops are compiled with
** __attribute__((target(...))) and picked at run time from
** __builtin_cpu_supports, so a build for an AVX2-only machine (or with
** -march=x86-64) still has them and never runs them where they would fault.
*/
#ifndef LT_CPU_QUANT_H
#define LT_CPU_QUANT_H

typedef enum {
  LT_QISA_PORTABLE = 0,  /* plain C (the compiler may vectorise it for -march) */
  LT_QISA_AVX2,          /* AVX2 + FMA */
  LT_QISA_AVX512,        /* AVX-512 F + BW */
  LT_QISA_VNNI,          /* AVX-512 F + BW + VNNI: vpdpbusd for the int8 dot products */
} lt_qisa;

/*
** The path an op runs: `isa` NULL or "auto" takes $LUTORCH_QUANT_ISA when set,
** else the best this CPU has; a named path this CPU lacks is an error naming
** op and argument. -1 on error.
*/
int lt_quant_pick_isa(const char *op, const char *isa);
/* the best path this CPU has */
lt_qisa lt_quant_best_isa(void);
const char *lt_quant_isa_name(lt_qisa i);

#endif
