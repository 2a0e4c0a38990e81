/*
** cvt.c — float32 <-> bfloat16 / float16 over contiguous arrays, one version
** per instruction set, chosen at start-up (cvt.h says which and why).
**
** bfloat16 rounding in integer arithmetic, as lt_float_to_bf16: add 0x7fff
** plus the lowest kept bit and drop the low 16 bits; a NaN keeps its top
** half with the quiet bit (0x40) set. bfloat16 -> float32 is a shift.
*/
#include <string.h>
#include "cpu/capability.h"
#include "cpu/cvt.h"
#include "core/dtype.h"
#include "core/error.h"

#if defined(__x86_64__) || defined(__i386__)
#define CVT_X86 1
#include <immintrin.h>
#endif

/* ---- portable ------------------------------------------------------------- */

static void bf16_to_f32_c(float *dst, const uint16_t *src, int64_t n) {
  uint32_t *d = (uint32_t *)dst;
  for (int64_t i = 0; i < n; i++) d[i] = (uint32_t)src[i] << 16;
}

static void f32_to_bf16_c(uint16_t *dst, const float *src, int64_t n) {
  const uint32_t *s = (const uint32_t *)src;
  for (int64_t i = 0; i < n; i++) {
    uint32_t u = s[i];
    uint16_t r = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    dst[i] = (u & 0x7fffffffu) > 0x7f800000u ? (uint16_t)((u >> 16) | 0x40u) : r;
  }
}

static void f16_to_f32_c(float *dst, const uint16_t *src, int64_t n) {
  for (int64_t i = 0; i < n; i++) dst[i] = lt_half_to_float(src[i]);
}

static void f32_to_f16_c(uint16_t *dst, const float *src, int64_t n) {
  for (int64_t i = 0; i < n; i++) dst[i] = lt_float_to_half(src[i]);
}

#ifdef CVT_X86
/* ---- AVX2 + F16C: 8 lanes -------------------------------------------------- */

#define T_AVX2 __attribute__((target("avx2,f16c")))

T_AVX2 static void bf16_to_f32_avx2(float *dst, const uint16_t *src, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(src + i)));
    _mm256_storeu_si256((__m256i *)(dst + i), _mm256_slli_epi32(v, 16));
  }
  bf16_to_f32_c(dst + i, src + i, n - i);
}

/* 8 floats -> 8 bfloat16 in the low 16 bits of each 32-bit lane */
T_AVX2 static inline __m256i bf16_round8(__m256 x) {
  __m256i u = _mm256_castps_si256(x);
  __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
  __m256i q = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  return _mm256_blendv_epi8(r, q, _mm256_castps_si256(nan));
}

T_AVX2 static void f32_to_bf16_avx2(uint16_t *dst, const float *src, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256i a = bf16_round8(_mm256_loadu_ps(src + i)), b = bf16_round8(_mm256_loadu_ps(src + i + 8));
    /* packus interleaves the 128-bit halves: a0-3 b0-3 a4-7 b4-7; the permute restores order */
    __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xd8);
    _mm256_storeu_si256((__m256i *)(dst + i), p);
  }
  f32_to_bf16_c(dst + i, src + i, n - i);
}

T_AVX2 static void f16_to_f32_avx2(float *dst, const uint16_t *src, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
  f16_to_f32_c(dst + i, src + i, n - i);
}

T_AVX2 static void f32_to_f16_avx2(uint16_t *dst, const float *src, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  f32_to_f16_c(dst + i, src + i, n - i);
}

/* ---- AVX-512F: 16 lanes, masked tails --------------------------------------- */

#define T_AVX512 __attribute__((target("avx512f")))

T_AVX512 static void bf16_to_f32_avx512(float *dst, const uint16_t *src, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i v = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(src + i)));
    _mm512_storeu_si512(dst + i, _mm512_slli_epi32(v, 16));
  }
  bf16_to_f32_avx2(dst + i, src + i, n - i);
}

T_AVX512 static inline __m256i bf16_round16(__m512 x) {
  __m512i u = _mm512_castps_si512(x);
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
  __m512i q = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
  __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(nan, r, q));
}

T_AVX512 static void f32_to_bf16_avx512(uint16_t *dst, const float *src, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256((__m256i *)(dst + i), bf16_round16(_mm512_loadu_ps(src + i)));
  f32_to_bf16_c(dst + i, src + i, n - i);
}

T_AVX512 static void f16_to_f32_avx512(float *dst, const uint16_t *src, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + i))));
  f16_to_f32_avx2(dst + i, src + i, n - i);
}

T_AVX512 static void f32_to_f16_avx512(uint16_t *dst, const float *src, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256((__m256i *)(dst + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  f32_to_f16_avx2(dst + i, src + i, n - i);
}

/* ---- AVX512_BF16 ---------------------------------------------------------------
** VCVTNEPS2BF16 rounds to nearest even and quiets NaNs as the code above does,
** but treats denormal inputs as zero. A block holding any (|x| below FLT_MIN and
** not zero) is rounded by the AVX-512F code instead, so the result does not
** depend on the CPU. Not run on the machine this was written on (no AVX512_BF16
** there, and qemu 7.2 emulates no AVX-512): man/tensor.md says so. */

#define T_BF16 __attribute__((target("avx512f,avx512bf16")))

T_BF16 static void f32_to_bf16_avx512bf16(uint16_t *dst, const float *src, int64_t n) {
  const __m512i absm = _mm512_set1_epi32(0x7fffffff), minn = _mm512_set1_epi32(0x00800000);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 x = _mm512_loadu_ps(src + i);
    __m512i a = _mm512_and_si512(_mm512_castps_si512(x), absm);
    __mmask16 den = _mm512_cmplt_epi32_mask(a, minn) & _mm512_cmpneq_epi32_mask(a, _mm512_setzero_si512());
    __m256i r;
    if (den) r = bf16_round16(x);
    else r = (__m256i)_mm512_cvtneps_pbh(x);
    _mm256_storeu_si256((__m256i *)(dst + i), r);
  }
  f32_to_bf16_c(dst + i, src + i, n - i);
}
#endif

/* ---- selection ------------------------------------------------------------- */

lt_cvt_to32_fn lt_cvt_bf16_to_f32 = bf16_to_f32_c, lt_cvt_f16_to_f32 = f16_to_f32_c;
lt_cvt_from32_fn lt_cvt_f32_to_bf16 = f32_to_bf16_c, lt_cvt_f32_to_f16 = f32_to_f16_c;
static const char *cur_path = "portable";

typedef struct cvt_path {
  const char *name;
  lt_cvt_to32_fn bf16_to, f16_to;
  lt_cvt_from32_fn to_bf16, to_f16;
} cvt_path;

static const cvt_path paths[] = {
#ifdef CVT_X86
  {"avx512bf16", bf16_to_f32_avx512, f16_to_f32_avx512, f32_to_bf16_avx512bf16, f32_to_f16_avx512},
  {"avx512", bf16_to_f32_avx512, f16_to_f32_avx512, f32_to_bf16_avx512, f32_to_f16_avx512},
  {"avx2", bf16_to_f32_avx2, f16_to_f32_avx2, f32_to_bf16_avx2, f32_to_f16_avx2},
#endif
  {"portable", bf16_to_f32_c, f16_to_f32_c, f32_to_bf16_c, f32_to_f16_c},
};

/* the CPU has the instructions and the CPU capability in use (capability.h:
** $LUTORCH_CPU_CAPABILITY may lower it) reaches them */
static int supported(const char *name) {
#ifdef CVT_X86
  __builtin_cpu_init();
  lt_cap_level cap = lt_capability_level();
  if (!strncmp(name, "avx512", 6) && cap < LT_CAP_AVX512) return 0;
  if (!strcmp(name, "avx2") && cap < LT_CAP_AVX2) return 0;
  if (!strcmp(name, "avx512bf16")) return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
  if (!strcmp(name, "avx512")) return __builtin_cpu_supports("avx512f");
  if (!strcmp(name, "avx2")) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
#endif
  return !strcmp(name, "portable");
}

int lt_cvt_cpu_has_bf16(void) { return supported("avx512bf16"); }

int lt_cvt_select(const char *path) {
  for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++) {
    const cvt_path *p = &paths[k];
    if (strcmp(p->name, path)) continue;
    if (!supported(p->name)) return lt_error("this CPU cannot run the %s conversions (or the CPU capability in use, '%s', is below them)",
                                             path, lt_capability_name(lt_capability_level()));
    lt_cvt_bf16_to_f32 = p->bf16_to; lt_cvt_f16_to_f32 = p->f16_to;
    lt_cvt_f32_to_bf16 = p->to_bf16; lt_cvt_f32_to_f16 = p->to_f16;
    cur_path = p->name;
    return 0;
  }
  return lt_error("unknown conversion path '%s' (avx512bf16, avx512, avx2 or portable)", path);
}

void lt_cvt_init(void) {
  for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++)
    if (supported(paths[k].name)) { (void)lt_cvt_select(paths[k].name); return; }
}

const char *lt_cvt_path(void) { return cur_path; }
