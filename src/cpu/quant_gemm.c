/*
** quant_gemm.c — the CPU's quantized linear kernels (src/ops/quant.lua):
**
**   _int8_weight_only_linear  y = x @ (s * Wq)^T + b, Wq int8 [N, K], s [N]
**   _int4_weight_only_linear  the same with Wq int4 in groups (meta/quant.h)
**   _int8_dynamic_linear      x quantized per row to int8 at run time, int8 x
**                             int8 -> int32 dot products, rescaled
**   _int8_gemm_int32          the int32 product alone (tests of the paths)
**
** Small batches (M <= GEMV_MAX_M rows) read the quantized weights directly:
** a row of W is loaded once per block of 4 input rows and converted in
** registers. Batch 1 is memory bound, so reading 1 (int8) or 1/2 (int4)
** byte a weight instead of 4 is what makes it faster than float32. Larger
** batches are compute bound: the weight-only kernels dequantize tiles of W
** to float32 and hand them to OpenBLAS's sgemm (lt_la_blas_gemm); the
** dynamic one stays in int8 for every batch.
**
** Paths (cpu/quant.h): portable C, AVX2 and AVX-512 for every kernel, and
** AVX-512 VNNI (vpdpbusd) for the int8 dot products. vpdpbusd multiplies
** unsigned by signed bytes, so the activation is offset to a + 128 (a byte
** xor 0x80) and 128 * sum_k w[k] (counted by a second vpdpbusd against
** ones) is subtracted: exact, so every path gives the same int32 sums. The
** AVX2 and AVX-512BW paths sign-extend to int16 and use vpmaddwd (no
** saturation, unlike vpmaddubsw on a + 128). The float paths accumulate in
** another order than the portable one: results agree to float32 rounding.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/tensor.h"
#include "core/error.h"
#include "cpu/parallel.h"
#include "cpu/la_gemm.h"
#include "cpu/quant.h"
#include "kernels_cpu.h"
#include "meta/quant.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define QX86 1
#else
#define QX86 0
#endif

#define GEMV_MAX_M 8      /* rows up to which the weights are read directly */
#define TILE_N 64         /* weight rows dequantized at once for sgemm (64 x K floats) */
#define MB 4              /* input rows sharing one pass over a weight row (float kernels) */
#define MB8 8             /* the same for the int8 dot products (one accumulator a row) */

void lt_quant_int4_rows(const uint8_t *p, const float *s, const float *z, int64_t K, int64_t gs, int64_t n0,
                        int64_t n1, float *out);   /* quant.c */

#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* ---- the float-weight kernels' shared context ---------------------------- */

typedef struct wctx {
  const float *x;          /* [M, K] float32 */
  const float *xe, *xo;    /* int4: the even and odd columns of x, [M, K/2] each */
  const float *xs;         /* int4: x's sums over each group, [M, G] */
  const int8_t *w8;        /* int8 [N, K] */
  const uint8_t *w4;       /* int4 packed [N, K/2] */
  const float *s, *z, *b;  /* scales [N] or [N, G]; zeros [N, G]; bias [N] or NULL */
  float *y;                /* [M, N] */
  int64_t M, K, N, gs;
  lt_qisa isa;
  int failed;
} wctx;

static void store_row(const wctx *c, int64_t m, int64_t n, float dot) {
  c->y[m * c->N + n] = dot + (c->b ? c->b[n] : 0.0f);
}

/* ---- int8 weight-only: direct kernels ------------------------------------ */

static void w8_portable(const wctx *c, int64_t n0, int64_t n1) {
  int64_t K = c->K;
  for (int64_t n = n0; n < n1; n++) {
    const int8_t *w = c->w8 + n * K;
    for (int64_t m = 0; m < c->M; m++) {
      const float *x = c->x + m * K;
      float acc = 0;
      for (int64_t k = 0; k < K; k++) acc += (float)w[k] * x[k];
      store_row(c, m, n, acc * c->s[n]);
    }
  }
}

#if QX86
__attribute__((target("avx2,fma"))) static inline float hsum256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

/* one weight row against nb input rows; U accumulators a row hide the FMA latency */
__attribute__((target("avx2,fma"))) ALWAYS_INLINE void w8_block_avx2(const int8_t *w, const float *x, int64_t K,
                                                                      int nb, int U, float *out) {
  __m256 acc[MB][4];
  for (int i = 0; i < nb; i++) for (int u = 0; u < U; u++) acc[i][u] = _mm256_setzero_ps();
  int64_t step = 8 * U, kv = K - K % step, k = 0;
  for (; k < kv; k += step)
    for (int u = 0; u < U; u++) {
      __m256 wv = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(w + k + 8 * u))));
      for (int i = 0; i < nb; i++) acc[i][u] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x + i * K + k + 8 * u), acc[i][u]);
    }
  for (int i = 0; i < nb; i++) {
    for (int u = 1; u < U; u++) acc[i][0] = _mm256_add_ps(acc[i][0], acc[i][u]);
    float t = hsum256(acc[i][0]);
    for (int64_t kk = k; kk < K; kk++) t += (float)w[kk] * x[i * K + kk];
    out[i] = t;
  }
}

__attribute__((target("avx2,fma"))) static void w8_avx2(const wctx *c, int64_t n0, int64_t n1) {
  float out[MB];
  for (int64_t n = n0; n < n1; n++) {
    const int8_t *w = c->w8 + n * c->K;
    for (int64_t m = 0; m < c->M; m += MB) {
      int64_t nb = c->M - m < MB ? c->M - m : MB;
      const float *x = c->x + m * c->K;
      switch (nb) {
      case 1: w8_block_avx2(w, x, c->K, 1, 4, out); break;
      case 2: w8_block_avx2(w, x, c->K, 2, 2, out); break;
      case 3: w8_block_avx2(w, x, c->K, 3, 2, out); break;
      default: w8_block_avx2(w, x, c->K, 4, 2, out); break;
      }
      for (int64_t i = 0; i < nb; i++) store_row(c, m + i, n, out[i] * c->s[n]);
    }
  }
}

__attribute__((target("avx512f,avx512bw,fma"))) ALWAYS_INLINE void w8_block_avx512(const int8_t *w, const float *x,
                                                                                   int64_t K, int nb, float *out) {
  __m512 acc[MB][4];
  for (int i = 0; i < nb; i++) for (int u = 0; u < 4; u++) acc[i][u] = _mm512_setzero_ps();
  int64_t kv = K - K % 64, k = 0;
  for (; k < kv; k += 64)
    for (int u = 0; u < 4; u++) {
      __m512 wv = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(w + k + 16 * u))));
      for (int i = 0; i < nb; i++) acc[i][u] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(x + i * K + k + 16 * u), acc[i][u]);
    }
  for (int i = 0; i < nb; i++) {
    __m512 a = _mm512_add_ps(_mm512_add_ps(acc[i][0], acc[i][1]), _mm512_add_ps(acc[i][2], acc[i][3]));
    float t = _mm512_reduce_add_ps(a);
    for (int64_t kk = k; kk < K; kk++) t += (float)w[kk] * x[i * K + kk];
    out[i] = t;
  }
}

__attribute__((target("avx512f,avx512bw,fma"))) static void w8_avx512(const wctx *c, int64_t n0, int64_t n1) {
  float out[MB];
  for (int64_t n = n0; n < n1; n++) {
    const int8_t *w = c->w8 + n * c->K;
    for (int64_t m = 0; m < c->M; m += MB) {
      int64_t nb = c->M - m < MB ? c->M - m : MB;
      const float *x = c->x + m * c->K;
      switch (nb) {
      case 1: w8_block_avx512(w, x, c->K, 1, out); break;
      case 2: w8_block_avx512(w, x, c->K, 2, out); break;
      case 3: w8_block_avx512(w, x, c->K, 3, out); break;
      default: w8_block_avx512(w, x, c->K, 4, out); break;
      }
      for (int64_t i = 0; i < nb; i++) store_row(c, m + i, n, out[i] * c->s[n]);
    }
  }
}
#endif

static void w8_range(void *vctx, int64_t n0, int64_t n1) {
  wctx *c = vctx;
#if QX86
  if (c->isa >= LT_QISA_AVX512) { w8_avx512(c, n0, n1); return; }
  if (c->isa == LT_QISA_AVX2) { w8_avx2(c, n0, n1); return; }
#endif
  w8_portable(c, n0, n1);
}

/* ---- int4 weight-only: direct kernels ------------------------------------ */
/* dot(x, w) over a row = sum_g s_g * sum_{k in g} x_k q_k + sum_g (z_g - 8 s_g) * xs_g:
** the inner loop multiplies the 4-bit values as they are; the zero points
** cost one term a group, from the group sums of x computed once a call. */

static float int4_offsets(const wctx *c, int64_t m, int64_t n) {
  int64_t G = c->K / c->gs;
  const float *s = c->s + n * G, *z = c->z + n * G, *xs = c->xs + m * G;
  float t = 0;
  for (int64_t g = 0; g < G; g++) t += (z[g] - 8.0f * s[g]) * xs[g];
  return t;
}

static void w4_portable(const wctx *c, int64_t n0, int64_t n1) {
  int64_t K = c->K, H = K / 2, G = K / c->gs, hg = c->gs / 2;
  for (int64_t n = n0; n < n1; n++) {
    const uint8_t *p = c->w4 + n * H;
    for (int64_t m = 0; m < c->M; m++) {
      const float *xe = c->xe + m * H, *xo = c->xo + m * H;
      float acc = 0;
      for (int64_t g = 0; g < G; g++) {
        float d = 0;
        for (int64_t j = g * hg; j < (g + 1) * hg; j++) d += (float)(p[j] & 15) * xe[j] + (float)(p[j] >> 4) * xo[j];
        acc += c->s[n * G + g] * d;
      }
      store_row(c, m, n, acc + int4_offsets(c, m, n));
    }
  }
}

#if QX86
__attribute__((target("avx2,fma"))) ALWAYS_INLINE void w4_block_avx2(const wctx *c, const uint8_t *p, int64_t n,
                                                                      int64_t m, int nb, float *out) {
  int64_t H = c->K / 2, G = c->K / c->gs, hg = c->gs / 2;
  const float *s = c->s + n * G;
  __m256 acc[MB];
  const __m256i mask = _mm256_set1_epi32(15);
  for (int i = 0; i < nb; i++) acc[i] = _mm256_setzero_ps();
  for (int64_t g = 0; g < G; g++) {
    __m256 dl[MB], dh[MB];
    for (int i = 0; i < nb; i++) dl[i] = dh[i] = _mm256_setzero_ps();
    for (int64_t j = g * hg; j < (g + 1) * hg; j += 8) {
      __m256i bb = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(p + j)));
      __m256 lo = _mm256_cvtepi32_ps(_mm256_and_si256(bb, mask));
      __m256 hi = _mm256_cvtepi32_ps(_mm256_srli_epi32(bb, 4));
      for (int i = 0; i < nb; i++) {
        dl[i] = _mm256_fmadd_ps(lo, _mm256_loadu_ps(c->xe + (m + i) * H + j), dl[i]);
        dh[i] = _mm256_fmadd_ps(hi, _mm256_loadu_ps(c->xo + (m + i) * H + j), dh[i]);
      }
    }
    __m256 sv = _mm256_set1_ps(s[g]);
    for (int i = 0; i < nb; i++) acc[i] = _mm256_fmadd_ps(sv, _mm256_add_ps(dl[i], dh[i]), acc[i]);
  }
  for (int i = 0; i < nb; i++) out[i] = hsum256(acc[i]);
}

__attribute__((target("avx2,fma"))) static void w4_avx2(const wctx *c, int64_t n0, int64_t n1) {
  float out[MB];
  for (int64_t n = n0; n < n1; n++) {
    const uint8_t *p = c->w4 + n * (c->K / 2);
    for (int64_t m = 0; m < c->M; m += MB) {
      int64_t nb = c->M - m < MB ? c->M - m : MB;
      switch (nb) {
      case 1: w4_block_avx2(c, p, n, m, 1, out); break;
      case 2: w4_block_avx2(c, p, n, m, 2, out); break;
      case 3: w4_block_avx2(c, p, n, m, 3, out); break;
      default: w4_block_avx2(c, p, n, m, 4, out); break;
      }
      for (int64_t i = 0; i < nb; i++) store_row(c, m + i, n, out[i] + int4_offsets(c, m + i, n));
    }
  }
}

/* AVX-512: 16 bytes (32 values) a step. The 16 values a group's 4-bit codes stand for,
** (q - 8) * scale + zero, are one vector (made once a group), and vpermps looks each code
** up in it (it reads the low 4 bits of each lane): the weights come out dequantized, with no
** int-to-float conversion and no zero-point term. Two steps at a time (one group of 64 or
** 128, or two groups of 32), for four FMA chains at batch 1. */
#define W4_STEP(T, J, A0, A1)                                                                    \
  do {                                                                                           \
    __m512i b_ = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p + (J))));            \
    __m512 lo_ = _mm512_permutexvar_ps(b_, T), hi_ = _mm512_permutexvar_ps(_mm512_srli_epi32(b_, 4), T); \
    for (int i = 0; i < nb; i++) {                                                               \
      acc[i][A0] = _mm512_fmadd_ps(lo_, _mm512_loadu_ps(xe[i] + (J)), acc[i][A0]);              \
      acc[i][A1] = _mm512_fmadd_ps(hi_, _mm512_loadu_ps(xo[i] + (J)), acc[i][A1]);              \
    }                                                                                            \
  } while (0)

__attribute__((target("avx512f,avx512bw,fma"))) ALWAYS_INLINE void w4_block_avx512(const wctx *c, const uint8_t *p,
                                                                                   int64_t n, int64_t m, int nb,
                                                                                   float *out) {
  int64_t H = c->K / 2, G = c->K / c->gs, hg = c->gs / 2;
  const float *s = c->s + n * G, *z = c->z + n * G;
  const __m512 iota = _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
  const float *xe[MB], *xo[MB];
  __m512 acc[MB][4];
  for (int i = 0; i < nb; i++) {
    xe[i] = c->xe + (m + i) * H;
    xo[i] = c->xo + (m + i) * H;
    for (int u = 0; u < 4; u++) acc[i][u] = _mm512_setzero_ps();
  }
  if (hg >= 32) {            /* group size 64 or 128: whole pairs of steps in a group */
    for (int64_t g = 0; g < G; g++) {
      __m512 t = _mm512_fmadd_ps(iota, _mm512_set1_ps(s[g]), _mm512_set1_ps(z[g]));
      for (int64_t j = g * hg; j < (g + 1) * hg; j += 32) {
        W4_STEP(t, j, 0, 1);
        W4_STEP(t, j + 16, 2, 3);
      }
    }
  } else {                   /* group size 32: one step a group, two groups at a time */
    int64_t g = 0;
    for (; g + 2 <= G; g += 2) {
      __m512 t0 = _mm512_fmadd_ps(iota, _mm512_set1_ps(s[g]), _mm512_set1_ps(z[g]));
      __m512 t1 = _mm512_fmadd_ps(iota, _mm512_set1_ps(s[g + 1]), _mm512_set1_ps(z[g + 1]));
      W4_STEP(t0, g * 16, 0, 1);
      W4_STEP(t1, g * 16 + 16, 2, 3);
    }
    if (g < G) {
      __m512 t0 = _mm512_fmadd_ps(iota, _mm512_set1_ps(s[g]), _mm512_set1_ps(z[g]));
      W4_STEP(t0, g * 16, 0, 1);
    }
  }
  for (int i = 0; i < nb; i++)
    out[i] = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[i][0], acc[i][1]), _mm512_add_ps(acc[i][2], acc[i][3])));
}

__attribute__((target("avx512f,avx512bw,fma"))) static void w4_avx512(const wctx *c, int64_t n0, int64_t n1) {
  float out[MB];
  for (int64_t n = n0; n < n1; n++) {
    const uint8_t *p = c->w4 + n * (c->K / 2);
    for (int64_t m = 0; m < c->M; m += MB) {
      int64_t nb = c->M - m < MB ? c->M - m : MB;
      switch (nb) {
      case 1: w4_block_avx512(c, p, n, m, 1, out); break;
      case 2: w4_block_avx512(c, p, n, m, 2, out); break;
      case 3: w4_block_avx512(c, p, n, m, 3, out); break;
      default: w4_block_avx512(c, p, n, m, 4, out); break;
      }
      for (int64_t i = 0; i < nb; i++) store_row(c, m + i, n, out[i]);   /* zero points in the table */
    }
  }
}
#endif

static void w4_range(void *vctx, int64_t n0, int64_t n1) {
  wctx *c = vctx;
#if QX86
  if (c->isa >= LT_QISA_AVX512) { w4_avx512(c, n0, n1); return; }
  if (c->isa == LT_QISA_AVX2) { w4_avx2(c, n0, n1); return; }
#endif
  w4_portable(c, n0, n1);
}

/* ---- large batches: tiles of W dequantized to float32, then sgemm -------- */

static void tiles_range(void *vctx, int64_t t0, int64_t t1) {
  wctx *c = vctx;
  float *buf = malloc(sizeof(float) * (size_t)(TILE_N * c->K + 1));
  if (!buf) { c->failed = 1; return; }
  for (int64_t t = t0; t < t1; t++) {
    int64_t n0 = t * TILE_N, n1 = n0 + TILE_N < c->N ? n0 + TILE_N : c->N, nt = n1 - n0;
    if (c->w8) {
      for (int64_t n = n0; n < n1; n++) {
        const int8_t *w = c->w8 + n * c->K;
        float sc = c->s[n], *o = buf + (n - n0) * c->K;
        for (int64_t k = 0; k < c->K; k++) o[k] = (float)w[k] * sc;
      }
    } else {
      lt_quant_int4_rows(c->w4, c->s, c->z, c->K, c->gs, n0, n1, buf);
    }
    float *y = c->y + n0;
    if (c->b)
      for (int64_t m = 0; m < c->M; m++) memcpy(y + m * c->N, c->b + n0, sizeof(float) * (size_t)nt);
    if (c->K == 0) {   /* an empty product: the bias (or zeros) alone */
      if (!c->b) for (int64_t m = 0; m < c->M; m++) memset(y + m * c->N, 0, sizeof(float) * (size_t)nt);
      continue;
    }
    lt_la_blas_gemm(true, false, true, c->M, nt, c->K, 1.0, c->x, c->K, buf, c->K, c->b ? 1.0 : 0.0, y, c->N);
  }
  free(buf);
}

/* ---- the operands of a linear: float32 views of input, scales, bias ------ */

typedef struct lin_args {
  lt_tensor *x, *s, *z, *b, *w, *y;   /* new references (NULL where absent) */
  int64_t M, K, N;
} lin_args;

static void lin_release(lin_args *a) {
  lt_tensor_release(a->x); lt_tensor_release(a->s); lt_tensor_release(a->z);
  lt_tensor_release(a->b); lt_tensor_release(a->w); lt_tensor_release(a->y);
}

/* weight contiguous, input flattened to [M, K] float32, scales/zeros/bias float32, y [M, N] */
static int lin_prepare(lin_args *a, lt_tensor *input, lt_tensor *weight, lt_tensor *scales, lt_tensor *zeros,
                       lt_tensor *bias, int64_t N, int64_t K) {
  memset(a, 0, sizeof *a);
  a->N = N; a->K = K;
  a->M = 1;
  for (int i = 0; i < input->ndim - 1; i++) a->M *= input->sizes[i];
  a->x = lt_tensor_to_dtype_contig(input, LT_FLOAT32);
  a->w = a->x ? lt_tensor_contiguous(weight) : NULL;
  a->s = a->w ? lt_tensor_to_dtype_contig(scales, LT_FLOAT32) : NULL;
  if (a->s && zeros) a->z = lt_tensor_to_dtype_contig(zeros, LT_FLOAT32);
  if (a->s && bias) a->b = lt_tensor_to_dtype_contig(bias, LT_FLOAT32);
  if (!a->s || (zeros && !a->z) || (bias && !a->b)) { lin_release(a); return -1; }
  int64_t sz[2] = {a->M, N};
  a->y = lt_tensor_new(LT_FLOAT32, lt_tensor_device(input), 2, sz);
  if (!a->y) { lin_release(a); return -1; }
  return 0;
}

/* y [M, N] float32 as input's dtype in input's leading shape (new reference) */
static lt_tensor *lin_result(lin_args *a, lt_tensor *input) {
  int64_t sz[LT_MAX_DIMS];
  lt_meta_qlinear_sizes(input, a->N, sz);
  lt_tensor *r = NULL;
  lt_tensor *v = lt_tensor_new_view(a->y->storage, LT_FLOAT32, 0, input->ndim, sz, NULL);
  if (v) {
    r = input->dtype == LT_FLOAT32 ? (lt_tensor_retain(v), v) : lt_tensor_clone_as(v, (lt_dtype)input->dtype);
    lt_tensor_release(v);
  }
  lin_release(a);
  return r;
}

static int64_t n_grain(int64_t M, int64_t K) {
  int64_t per = (M ? M : 1) * (K ? K : 1);
  return per >= 16384 ? 1 : 16384 / per;
}

lt_tensor *lt_cpu__int8_weight_only_linear(lt_tensor *input, lt_tensor *weight, lt_tensor *scales, lt_tensor *bias,
                                           const char *isa) {
  const char *op = "_int8_weight_only_linear";
  int64_t N, K;
  if (lt_meta_qlinear_int8(op, weight, scales, bias, &N, &K) < 0) return NULL;
  if (lt_meta_qlinear_input(op, input, K) < 0) return NULL;
  int path = lt_quant_pick_isa(op, isa);
  if (path < 0) return NULL;
  lin_args a;
  if (lin_prepare(&a, input, weight, scales, NULL, bias, N, K) < 0) return NULL;
  wctx c = {.x = lt_tensor_data(a.x), .w8 = lt_tensor_data(a.w), .s = lt_tensor_data(a.s),
            .b = a.b ? lt_tensor_data(a.b) : NULL, .y = lt_tensor_data(a.y), .M = a.M, .K = K, .N = N,
            .isa = (lt_qisa)path};
  if (a.M <= GEMV_MAX_M) lt_parallel_for(N, n_grain(a.M, K), w8_range, &c);
  else lt_parallel_for((N + TILE_N - 1) / TILE_N, 1, tiles_range, &c);
  if (c.failed) { lin_release(&a); return lt_error_null("%s: out of memory", op); }
  return lin_result(&a, input);
}

lt_tensor *lt_cpu__int4_weight_only_linear(lt_tensor *input, lt_tensor *packed, lt_tensor *scales, lt_tensor *zeros,
                                           int64_t group_size, lt_tensor *bias, const char *isa) {
  const char *op = "_int4_weight_only_linear";
  int64_t N, K;
  if (lt_meta_qlinear_int4(op, packed, scales, zeros, group_size, bias, &N, &K) < 0) return NULL;
  if (lt_meta_qlinear_input(op, input, K) < 0) return NULL;
  int path = lt_quant_pick_isa(op, isa);
  if (path < 0) return NULL;
  lin_args a;
  if (lin_prepare(&a, input, packed, scales, zeros, bias, N, K) < 0) return NULL;
  wctx c = {.x = lt_tensor_data(a.x), .w4 = lt_tensor_data(a.w), .s = lt_tensor_data(a.s),
            .z = lt_tensor_data(a.z), .b = a.b ? lt_tensor_data(a.b) : NULL, .y = lt_tensor_data(a.y), .M = a.M,
            .K = K, .N = N, .gs = group_size, .isa = (lt_qisa)path};
  if (a.M <= GEMV_MAX_M) {
    /* x split into its even and odd columns (the low and high nibbles), and its group sums */
    int64_t H = K / 2, G = K / group_size;
    float *buf = malloc(sizeof(float) * (size_t)(a.M * (K + G) + 1));
    if (!buf) { lin_release(&a); return lt_error_null("%s: out of memory", op); }
    float *xe = buf, *xo = buf + a.M * H, *xs = buf + a.M * K;
    for (int64_t m = 0; m < a.M; m++) {
      const float *x = c.x + m * K;
      for (int64_t j = 0; j < H; j++) { xe[m * H + j] = x[2 * j]; xo[m * H + j] = x[2 * j + 1]; }
      for (int64_t g = 0; g < G; g++) {
        float t = 0;
        for (int64_t k = g * group_size; k < (g + 1) * group_size; k++) t += x[k];
        xs[m * G + g] = t;
      }
    }
    c.xe = xe; c.xo = xo; c.xs = xs;
    lt_parallel_for(N, n_grain(a.M, K / 2), w4_range, &c);
    free(buf);
  } else {
    lt_parallel_for((N + TILE_N - 1) / TILE_N, 1, tiles_range, &c);
  }
  if (c.failed) { lin_release(&a); return lt_error_null("%s: out of memory", op); }
  return lin_result(&a, input);
}

/* ---- int8 x int8 -> int32 dot products ----------------------------------- */

/* out[i] = sum_k a[i][k] * w[k] for i < nb; ua[i] = a[i] xor 0x80 (the VNNI path's, which
** also needs the sum of w's vector part: *wsum, computed when INT32_MIN, else reused) */
static void dots_portable(const int8_t *const *a, const uint8_t *const *ua, int nb, const int8_t *w, int64_t K,
                          int32_t *out, int32_t *wsum) {
  (void)ua; (void)wsum;
  for (int i = 0; i < nb; i++) {
    int32_t t = 0;
    for (int64_t k = 0; k < K; k++) t += (int32_t)a[i][k] * (int32_t)w[k];
    out[i] = t;
  }
}

#if QX86
__attribute__((target("avx2"))) static void dots_avx2(const int8_t *const *a, const uint8_t *const *ua, int nb,
                                                      const int8_t *w, int64_t K, int32_t *out, int32_t *wsum) {
  (void)ua; (void)wsum;
  __m256i acc[MB8];
  for (int i = 0; i < nb; i++) acc[i] = _mm256_setzero_si256();
  int64_t kv = K - K % 16, k = 0;
  for (; k < kv; k += 16) {
    __m256i wv = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + k)));
    for (int i = 0; i < nb; i++) {
      __m256i av = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a[i] + k)));
      acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(av, wv));
    }
  }
  for (int i = 0; i < nb; i++) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc[i]), _mm256_extracti128_si256(acc[i], 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    int32_t t = _mm_cvtsi128_si32(s);
    for (int64_t kk = k; kk < K; kk++) t += (int32_t)a[i][kk] * (int32_t)w[kk];
    out[i] = t;
  }
}

__attribute__((target("avx512f,avx512bw"))) static void dots_avx512(const int8_t *const *a, const uint8_t *const *ua,
                                                                    int nb, const int8_t *w, int64_t K, int32_t *out,
                                                                    int32_t *wsum) {
  (void)ua; (void)wsum;
  __m512i acc[MB8];
  for (int i = 0; i < nb; i++) acc[i] = _mm512_setzero_si512();
  int64_t kv = K - K % 32, k = 0;
  for (; k < kv; k += 32) {
    __m512i wv = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(w + k)));
    for (int i = 0; i < nb; i++) {
      __m512i av = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(a[i] + k)));
      acc[i] = _mm512_add_epi32(acc[i], _mm512_madd_epi16(av, wv));
    }
  }
  for (int i = 0; i < nb; i++) {
    int32_t t = _mm512_reduce_add_epi32(acc[i]);
    for (int64_t kk = k; kk < K; kk++) t += (int32_t)a[i][kk] * (int32_t)w[kk];
    out[i] = t;
  }
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void dots_vnni(const int8_t *const *a,
                                                                             const uint8_t *const *ua, int nb,
                                                                             const int8_t *w, int64_t K,
                                                                             int32_t *out, int32_t *wsum) {
  __m512i acc[MB8];
  for (int i = 0; i < nb; i++) acc[i] = _mm512_setzero_si512();
  int64_t kv = K - K % 64, k = 0;
  if (*wsum == INT32_MIN) {   /* the first block of rows: w's sum too, for the +128 offset */
    __m512i ws = _mm512_setzero_si512();
    const __m512i ones = _mm512_set1_epi8(1);
    for (; k < kv; k += 64) {
      __m512i wv = _mm512_loadu_si512((const void *)(w + k));
      ws = _mm512_dpbusd_epi32(ws, ones, wv);
      for (int i = 0; i < nb; i++)
        acc[i] = _mm512_dpbusd_epi32(acc[i], _mm512_loadu_si512((const void *)(ua[i] + k)), wv);
    }
    *wsum = _mm512_reduce_add_epi32(ws);
  } else {
    for (; k < kv; k += 64) {
      __m512i wv = _mm512_loadu_si512((const void *)(w + k));
      for (int i = 0; i < nb; i++)
        acc[i] = _mm512_dpbusd_epi32(acc[i], _mm512_loadu_si512((const void *)(ua[i] + k)), wv);
    }
  }
  for (int i = 0; i < nb; i++) {
    int32_t t = _mm512_reduce_add_epi32(acc[i]) - 128 * *wsum;
    for (int64_t kk = k; kk < K; kk++) t += (int32_t)a[i][kk] * (int32_t)w[kk];
    out[i] = t;
  }
}
#endif

typedef void (*dots_fn)(const int8_t *const *, const uint8_t *const *, int, const int8_t *, int64_t, int32_t *,
                        int32_t *);

typedef struct i8ctx {
  const int8_t *a;      /* [M, K] */
  const uint8_t *ua;    /* [M, K] a xor 0x80, or NULL */
  const int8_t *w;      /* [N, K] */
  int64_t M, K, N;
  dots_fn dots;
  int32_t *acc;         /* [M, N] int32 out, or NULL: */
  const float *sa, *sw, *b;   /* ... y[m, n] = acc * sa[m] * sw[n] + b[n] */
  float *y;
} i8ctx;

static void i8_range(void *vctx, int64_t n0, int64_t n1) {
  i8ctx *c = vctx;
  int32_t out[MB8];
  const int8_t *a[MB8];
  const uint8_t *ua[MB8];
  for (int64_t n = n0; n < n1; n++) {
    const int8_t *w = c->w + n * c->K;
    int32_t wsum = INT32_MIN;   /* w's sum, made by the first block (VNNI) */
    for (int64_t m = 0; m < c->M; m += MB8) {
      int nb = (int)(c->M - m < MB8 ? c->M - m : MB8);
      for (int i = 0; i < nb; i++) {
        a[i] = c->a + (m + i) * c->K;
        ua[i] = c->ua ? c->ua + (m + i) * c->K : NULL;
      }
      c->dots(a, ua, nb, w, c->K, out, &wsum);
      for (int i = 0; i < nb; i++) {
        if (c->acc) c->acc[(m + i) * c->N + n] = out[i];
        else c->y[(m + i) * c->N + n] = (float)out[i] * (c->sa[m + i] * c->sw[n]) + (c->b ? c->b[n] : 0.0f);
      }
    }
  }
}

/* the dot products of c (a, w, M, K, N set) on path isa; ua made here for VNNI. 0 / -1 */
static int i8_run(const char *op, i8ctx *c, lt_qisa isa) {
  c->dots = dots_portable;
  uint8_t *ua = NULL;
#if QX86
  if (isa == LT_QISA_AVX2) c->dots = dots_avx2;
  if (isa == LT_QISA_AVX512) c->dots = dots_avx512;
  if (isa == LT_QISA_VNNI) {
    ua = malloc((size_t)(c->M * c->K + 1));
    if (!ua) return lt_error("%s: out of memory", op);
    for (int64_t i = 0; i < c->M * c->K; i++) ua[i] = (uint8_t)c->a[i] ^ 0x80;
    c->dots = dots_vnni;
  }
#else
  (void)isa;
#endif
  c->ua = ua;
  lt_parallel_for(c->N, n_grain(c->M, c->K), i8_range, c);
  free(ua);
  return 0;
}

lt_tensor *lt_cpu__int8_gemm_int32(lt_tensor *a, lt_tensor *b, const char *isa) {
  const char *op = "_int8_gemm_int32";
  if (lt_meta_int8_gemm(op, a, b) < 0) return NULL;
  int path = lt_quant_pick_isa(op, isa);
  if (path < 0) return NULL;
  lt_tensor *ac = lt_tensor_contiguous(a), *bc = ac ? lt_tensor_contiguous(b) : NULL;
  int64_t sz[2] = {a->sizes[0], b->sizes[0]};
  lt_tensor *y = bc ? lt_tensor_new(LT_INT32, lt_tensor_device(a), 2, sz) : NULL;
  if (y) {
    i8ctx c = {.a = lt_tensor_data(ac), .w = lt_tensor_data(bc), .M = sz[0], .K = a->sizes[1], .N = sz[1],
               .acc = lt_tensor_data(y)};
    if (i8_run(op, &c, (lt_qisa)path) < 0) { lt_tensor_release(y); y = NULL; }
  }
  lt_tensor_release(ac);
  lt_tensor_release(bc);
  return y;
}

lt_tensor *lt_cpu__int8_dynamic_linear(lt_tensor *input, lt_tensor *weight, lt_tensor *scales, lt_tensor *bias,
                                       const char *isa) {
  const char *op = "_int8_dynamic_linear";
  int64_t N, K;
  if (lt_meta_qlinear_int8(op, weight, scales, bias, &N, &K) < 0) return NULL;
  if (lt_meta_qlinear_input(op, input, K) < 0) return NULL;
  int path = lt_quant_pick_isa(op, isa);
  if (path < 0) return NULL;
  lin_args a;
  if (lin_prepare(&a, input, weight, scales, NULL, bias, N, K) < 0) return NULL;
  /* each row of x quantized symmetrically to [-127, 127]: scale = max|x| / 127 (torchao's per-token
  ** activation quantization); an all-zero row gets scale 1 */
  int8_t *q = malloc((size_t)(a.M * K + 1));
  float *sa = malloc(sizeof(float) * (size_t)(a.M + 1));
  if (!q || !sa) { free(q); free(sa); lin_release(&a); return lt_error_null("%s: out of memory", op); }
  const float *x = lt_tensor_data(a.x);
  for (int64_t m = 0; m < a.M; m++) {
    const float *xr = x + m * K;
    float amax = 0;
    bool finite = true;
    for (int64_t k = 0; k < K; k++) {
      amax = fmaxf(amax, fabsf(xr[k]));
      finite &= isfinite(xr[k]) != 0;
    }
    if (!finite) {
      free(q); free(sa); lin_release(&a);
      return lt_error_null("%s: argument 'input' holds a non-finite value (row %lld)", op, (long long)m + 1);
    }
    float s = amax > 0 ? amax / 127.0f : 1.0f, inv = 1.0f / s;
    sa[m] = s;
    for (int64_t k = 0; k < K; k++) {
      float r = nearbyintf(xr[k] * inv);
      q[m * K + k] = (int8_t)(r > 127 ? 127 : r < -127 ? -127 : r);
    }
  }
  i8ctx c = {.a = q, .w = lt_tensor_data(a.w), .M = a.M, .K = K, .N = N, .sa = sa, .sw = lt_tensor_data(a.s),
             .b = a.b ? lt_tensor_data(a.b) : NULL, .y = lt_tensor_data(a.y)};
  int rc = i8_run(op, &c, (lt_qisa)path);
  free(q);
  free(sa);
  if (rc < 0) { lin_release(&a); return NULL; }
  return lin_result(&a, input);
}
