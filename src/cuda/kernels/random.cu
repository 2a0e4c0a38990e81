/*
** random.cu — the samplers of the random ops (random.h): one CUDA thread per
** Philox block of the output, in a grid-stride loop, each computing its
** block from (key, base + block) alone, so every grid (and the host build's
** serial loop) gives the same numbers, and the same as the CPU's kernels
** (src/cpu/random.c, src/cpu/nn_misc.c's dropout): the arithmetic below is
** theirs, operation for operation.
*/
#include "cuda/kernels/ck.h"
#include "cuda/kernels/random.h"

namespace CK_NS {

#define CK_TWO_PI 6.283185307179586476925286766559

/* Philox4x32-10 (core/rng.h's lt_philox, for both builds): block (c, attempt) */
struct ck_philox_out { uint32_t w[4]; };

__host__ __device__ __forceinline__ void ck_mulhilo(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo) {
#if defined(__CUDA_ARCH__)
  *hi = __umulhi(a, b);
  *lo = a * b;
#else
  uint64_t p = (uint64_t)a * b;
  *hi = (uint32_t)(p >> 32);
  *lo = (uint32_t)p;
#endif
}

__host__ __device__ __forceinline__ ck_philox_out ck_philox(uint32_t k0, uint32_t k1, uint64_t c, uint32_t attempt) {
  uint32_t x0 = (uint32_t)c, x1 = (uint32_t)(c >> 32), x2 = attempt, x3 = 0;
  CK_UNROLL for (int r = 0; r < 10; r++) {
    uint32_t h0, l0, h1, l1;
    ck_mulhilo(x0, 0xD2511F53u, &h0, &l0);
    ck_mulhilo(x2, 0xCD9E8D57u, &h1, &l1);
    uint32_t y0 = h1 ^ x1 ^ k0, y2 = h0 ^ x3 ^ k1;
    x0 = y0; x1 = l1; x2 = y2; x3 = l0;
    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
  }
  ck_philox_out o = {{x0, x1, x2, x3}};
  return o;
}

/* core/rng.h's word-to-number maps */
__host__ __device__ __forceinline__ float ck_u01f(uint32_t w) { return (float)(w >> 8) * 0x1p-24f; }
__host__ __device__ __forceinline__ double ck_u01d(uint32_t lo, uint32_t hi) {
  return (double)((((uint64_t)hi << 32) | lo) >> 11) * 0x1p-53;
}
__host__ __device__ __forceinline__ double ck_u01d_open0(uint32_t lo, uint32_t hi) {
  return ((double)((((uint64_t)hi << 32) | lo) >> 11) + 1.0) * 0x1p-53;
}

__host__ __device__ __forceinline__ void ck_mul64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo) {
#if defined(__CUDA_ARCH__)
  *hi = __umul64hi(a, b);
  *lo = a * b;
#else
  unsigned __int128 m = (unsigned __int128)a * b;
  *hi = (uint64_t)(m >> 64);
  *lo = (uint64_t)m;
#endif
}

/* core/rng.c's lt_rng_below: [0, range) from block c, Lemire's rejection over
** further attempts at the same counter; range 0 is 2^64 */
__host__ __device__ __forceinline__ uint64_t ck_below(uint32_t k0, uint32_t k1, uint64_t c, uint64_t range) {
  for (uint32_t attempt = 0;; attempt++) {
    ck_philox_out o = ck_philox(k0, k1, c, attempt);
    for (int h = 0; h < 4; h += 2) {
      uint64_t x = ((uint64_t)o.w[h + 1] << 32) | o.w[h];
      if (range == 0) return x;
      uint64_t hi, lo;
      ck_mul64(x, range, &hi, &lo);
      if (lo >= range || lo >= (0 - range) % range) return hi;
    }
  }
}

__host__ __device__ __forceinline__ float ck_logf(float x) { return logf(x); }
__host__ __device__ __forceinline__ void ck_sincosf(float t, float *s, float *c) { sincosf(t, s, c); }
__host__ __device__ __forceinline__ void ck_sincos(double t, double *s, double *c) { sincos(t, s, c); }

/* the samples of block j into v (up to 4), as doubles (the CPU's buffer
** type); the integers as int64 into iv */
template<class T> struct ck_sampler {
  LT_COLD;
  lt_ck_rng_args a;
  uint64_t nblocks;

  CK_BODY void store(int64_t i, double v) const { ((T *)a.out)[i] = ck_cvt<T>::from(v); }
  CK_BODY void store_i(int64_t i, int64_t v) const { ((T *)a.out)[i] = ck_cvt<T>::from(v); }

  CK_BODY void block(uint64_t j) const {
    const int per = a.per;
    const int64_t e0 = (int64_t)j * per;
    const int cnt = a.n - e0 < per ? (int)(a.n - e0) : per;
    const uint64_t blk = a.base + j;
    if (a.kind == LT_CK_RNG_INT_BIG) {
      store_i(e0, (int64_t)((uint64_t)a.low + ck_below(a.k0, a.k1, blk, a.range)));
      return;
    }
    ck_philox_out o = ck_philox(a.k0, a.k1, blk, 0);
    const uint32_t *w = o.w;
    double v[4] = {0, 0, 0, 0};
    switch (a.kind) {
      case LT_CK_RNG_UNIFORM:
        if (per == 4) {
          double d = a.b - a.a;
          for (int k = 0; k < 4; k++) v[k] = a.a + (double)ck_u01f(w[k]) * d;
        } else {
          v[0] = a.a + ck_u01d(w[0], w[1]) * (a.b - a.a);
          v[1] = a.a + ck_u01d(w[2], w[3]) * (a.b - a.a);
        }
        break;
      case LT_CK_RNG_NORMAL:
        if (per == 4) {
          float fa = (float)a.a, fb = (float)a.b;
          float r0 = sqrtf(-2.0f * ck_logf(((float)w[0] + 1.0f) * 0x1p-32f)), t0 = (float)CK_TWO_PI * ((float)w[1] * 0x1p-32f);
          float r1 = sqrtf(-2.0f * ck_logf(((float)w[2] + 1.0f) * 0x1p-32f)), t1 = (float)CK_TWO_PI * ((float)w[3] * 0x1p-32f);
          float s0, c0, s1, c1;
          ck_sincosf(t0, &s0, &c0);
          ck_sincosf(t1, &s1, &c1);
          v[0] = fa + fb * r0 * c0; v[1] = fa + fb * r0 * s0;
          v[2] = fa + fb * r1 * c1; v[3] = fa + fb * r1 * s1;
        } else {
          double r = sqrt(-2.0 * log(ck_u01d_open0(w[0], w[1])));
          double s0, c0;
          ck_sincos(CK_TWO_PI * ck_u01d(w[2], w[3]), &s0, &c0);
          v[0] = a.a + a.b * r * c0; v[1] = a.a + a.b * r * s0;
        }
        break;
      case LT_CK_RNG_EXPONENTIAL:
        if (per == 4) for (int k = 0; k < 4; k++) v[k] = -log(((double)w[k] + 1.0) * 0x1p-32) / a.a;
        else {
          v[0] = -log(ck_u01d_open0(w[0], w[1])) / a.a;
          v[1] = -log(ck_u01d_open0(w[2], w[3])) / a.a;
        }
        break;
      case LT_CK_RNG_BERNOULLI:
        for (int k = 0; k < 4; k++) v[k] = (double)w[k] * 0x1p-32 < a.a;
        break;
      case LT_CK_RNG_BERNOULLI_T:
        for (int k = 0; k < cnt; k++) {
          double p = a.probs[e0 + k];
          if (!(p >= 0 && p <= 1)) { a.bad[1] = p; a.bad[0] = 1; }   /* racing stores: any bad p will do */
          v[k] = (double)w[k] * 0x1p-32 < p;
        }
        break;
      case LT_CK_RNG_INT: {
        /* a rejected word is redrawn from the same counter at the next
        ** attempt, same word position */
        uint32_t r = (uint32_t)a.range, thresh = (0u - r) % r;
        for (int k = 0; k < cnt; k++) {
          uint64_t m = (uint64_t)w[k] * r;
          uint32_t attempt = 0;
          while ((uint32_t)m < thresh) m = (uint64_t)ck_philox(a.k0, a.k1, blk, ++attempt).w[k] * r;
          store_i(e0 + k, (int64_t)((uint64_t)a.low + (m >> 32)));
        }
        return;
      }
      case LT_CK_RNG_DROPOUT: {
        typedef typename ck_type<T>::C C;
        const C sc = (C)a.scale;
        for (int k = 0; k < cnt; k++) {
          bool keep = (w[k] >> 8) >= a.thr;
          if (a.mask) a.mask[e0 + k] = keep;
          if (!a.out) continue;
          C val = a.x ? ck_load(((const T *)a.x)[e0 + k]) * sc : sc;
          ((T *)a.out)[e0 + k] = keep ? ck_store<T>(val) : ck_store<T>((C)0);
        }
        return;
      }
      default: return;
    }
    for (int k = 0; k < cnt; k++) store(e0 + k, v[k]);
  }

  CK_BODY void run(uint32_t tid, uint32_t nt) const {
    for (uint64_t j = tid; j < nblocks; j += nt) block(j);
  }
};

} /* namespace CK_NS */

extern "C" int CK_API(random)(const lt_ck_rng_args *args, void *stream) {
  using namespace CK_NS;
  if (!args || args->n < 0 || (args->per != 1 && args->per != 2 && args->per != 4) || args->kind < 0 ||
      args->kind >= LT_CK_RNG_NUM_KINDS)
    return LT_CK_EINVAL;
  if (args->n == 0) return LT_CK_OK;
  if (!args->out && !(args->kind == LT_CK_RNG_DROPOUT && args->mask)) return LT_CK_EINVAL;
  if (args->kind == LT_CK_RNG_BERNOULLI_T && (!args->probs || !args->bad)) return LT_CK_EINVAL;
  if ((args->kind == LT_CK_RNG_INT && (args->range == 0 || args->range > UINT32_MAX)) ||
      (args->kind == LT_CK_RNG_INT_BIG && args->per != 1))
    return LT_CK_EINVAL;
  return ck_dispatch(args->dtype, [&](auto tag) {
    typedef typename decltype(tag)::type T;
    if constexpr (!ck_type<T>::is_float) {
      if (args->kind == LT_CK_RNG_DROPOUT || args->kind == LT_CK_RNG_UNIFORM || args->kind == LT_CK_RNG_NORMAL ||
          args->kind == LT_CK_RNG_EXPONENTIAL)
        return (int)LT_CK_EUNSUPPORTED;
    }
    ck_sampler<T> k;
    k.a = *args;
    k.nblocks = (uint64_t)((args->n + args->per - 1) / args->per);
    return ck_launch(k, k.nblocks, stream);
  });
}
