/*
** capability.c — the choice of the CPU kernels' build (capability.h): the
** widest one this build has and this CPU runs, or the one
** $LUTORCH_CPU_CAPABILITY names when the CPU runs it.
*/
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include "cpu/capability.h"

/* The descriptors of the builds made here: the default one always; the
** others where the Makefile built them (CPU_VARIANTS says which; it defines
** LT_CAP_HAVE_<name> for each), referenced strongly so that a program linking
** the static library gets them too. */
extern const lt_cap_variant lt_cap_variant_self;
#ifdef LT_CAP_HAVE_avx2
extern const lt_cap_variant lt_cap_variant_self__avx2;
#endif
#ifdef LT_CAP_HAVE_avx512
extern const lt_cap_variant lt_cap_variant_self__avx512;
#endif

static const char *const NAMES[LT_CAP_NLEVELS] = {"default", "avx2", "avx512"};

/* the build for each level, or NULL; the default build sits at the level its
** own flags give it (a -march=native build may be avx512) */
static const lt_cap_variant *built[LT_CAP_NLEVELS];
static const lt_cap_variant *chosen;

static void collect(void) {
  built[lt_cap_variant_self.level] = &lt_cap_variant_self;
#ifdef LT_CAP_HAVE_avx2
  if (!built[LT_CAP_AVX2]) built[LT_CAP_AVX2] = &lt_cap_variant_self__avx2;
#endif
#ifdef LT_CAP_HAVE_avx512
  if (!built[LT_CAP_AVX512]) built[LT_CAP_AVX512] = &lt_cap_variant_self__avx512;
#endif
}

/* whether the CPU (and the OS: libgcc checks that XSAVE enables the
** registers) runs the instructions of a level: the x86-64 psABI levels the
** variants are compiled for */
static int cpu_runs(lt_cap_level level) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  switch (level) {
  case LT_CAP_DEFAULT: return 1;
  case LT_CAP_AVX2: return __builtin_cpu_supports("x86-64-v3") != 0;
  case LT_CAP_AVX512: return __builtin_cpu_supports("x86-64-v4") != 0;
  }
  return 0;
#else
  return level == LT_CAP_DEFAULT;
#endif
}

int lt_capability_runnable(lt_cap_level level) {
  if ((unsigned)level >= LT_CAP_NLEVELS) return 0;
  if (!built[LT_CAP_DEFAULT] && !built[LT_CAP_AVX2] && !built[LT_CAP_AVX512]) collect();
  return built[level] && cpu_runs(level);
}

static const lt_cap_variant *best_below(int top) {
  for (int l = top; l >= 0; l--)
    if (lt_capability_runnable((lt_cap_level)l)) return built[l];
  /* the default build's own flags outrun this CPU (a -march=native build
  ** carried elsewhere): nothing better to run */
  return &lt_cap_variant_self;
}

void lt_capability_init(void) {
  if (chosen) return;
  collect();
  const lt_cap_variant *best = best_below(LT_CAP_NLEVELS - 1);
  const char *want = getenv("LUTORCH_CPU_CAPABILITY");
  if (want && *want) {
    int l = -1;
    for (int k = 0; k < LT_CAP_NLEVELS; k++)
      if (!strcasecmp(want, NAMES[k])) l = k;
    if (l < 0)
      fprintf(stderr, "lutorch: warning: LUTORCH_CPU_CAPABILITY=%s is not one of default, avx2, avx512; "
              "using %s\n", want, NAMES[best->level]);
    else if (!built[l])
      fprintf(stderr, "lutorch: warning: LUTORCH_CPU_CAPABILITY=%s, but this build has no %s kernels "
              "(built with CPU_VARIANTS empty, as make OPT=-march=native does); using %s\n",
              want, NAMES[l], NAMES[best->level]);
    else if (!cpu_runs((lt_cap_level)l))
      fprintf(stderr, "lutorch: warning: LUTORCH_CPU_CAPABILITY=%s, but this CPU lacks %s; using %s\n", want,
              l == LT_CAP_AVX512 ? "AVX-512 (F, BW, CD, DQ, VL)" : "AVX2, FMA, F16C or BMI2",
              NAMES[best_below(l)->level]);
    if (l >= 0) best = best_below(l);
  }
  chosen = best;
}

lt_cap_level lt_capability_level(void) { return chosen ? chosen->level : lt_cap_variant_self.level; }

const char *lt_capability_name(lt_cap_level level) {
  return (unsigned)level < LT_CAP_NLEVELS ? NAMES[level] : "?";
}

const lt_cap_variant *lt_capability_variant(void) { return chosen; }
