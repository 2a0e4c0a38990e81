/*
** rng.h — random number generators.
**
** A generator is Philox4x32-10 (Salmon et al., "Parallel random numbers: as
** easy as 1, 2, 3"): a counter-based generator whose output block for counter
** c is a pure function of (seed, c). An op that needs k blocks reserves the
** counter range [offset, offset + k) and element i always uses block
** offset + i / per_block, so results do not depend on how the loop is split
** across threads, and get/set state is just (seed, offset).
**
** Rejection sampling (integers in a range) that needs more than one block for
** an element draws extra blocks from the same counter with a different
** "attempt" word, so it never disturbs its neighbours' streams.
*/
#ifndef LT_RNG_H
#define LT_RNG_H

#include <stdint.h>
#include <stddef.h>
#include <stdatomic.h>

typedef struct lt_generator {
  uint64_t seed;
  _Atomic uint64_t offset;     /* next unused block counter */
  atomic_int refcount;
  int8_t device_type;          /* the device type (LT_DEV_*) whose ops draw from it: 0 the cpu */
  int8_t device_index;
} lt_generator;

/* PyTorch's default seed, so initial_seed() reads the same in both */
#define LT_DEFAULT_SEED UINT64_C(67280421310721)

/* bytes of a serialised state (see lt_generator_get_state) */
#define LT_RNG_STATE_BYTES 24

lt_generator *lt_generator_new(uint64_t seed);        /* refcount 1 */
void lt_generator_retain(lt_generator *g);
void lt_generator_release(lt_generator *g);

/* the process-wide generator of the cpu (borrowed; never freed) */
lt_generator *lt_default_generator(void);
/* The default generator of device (type, index), as PyTorch keeps one per
** CUDA device: the cpu's for LT_DEV_CPU, else one of LT_RNG_MAX_DEVICES per
** other device type, made with the default seed (borrowed; never freed).
** NULL for an index out of range. The numbers of a device's generator are
** the same function of (seed, offset) as the cpu's; each has its own offset. */
#define LT_RNG_MAX_DEVICES 64
lt_generator *lt_device_default_generator(int type, int index);
/* seed every device's default generator (the cpu's too), as torch.manual_seed does */
void lt_manual_seed(uint64_t seed);

void lt_generator_manual_seed(lt_generator *g, uint64_t seed);
/* reseed from the OS entropy source; returns the new seed */
uint64_t lt_generator_seed_random(lt_generator *g);
static inline uint64_t lt_generator_initial_seed(const lt_generator *g) { return g->seed; }

/* state: magic "LTRN", version, seed, offset; little-endian, LT_RNG_STATE_BYTES long */
void lt_generator_get_state(const lt_generator *g, uint8_t *buf);
int lt_generator_set_state(lt_generator *g, const uint8_t *buf, size_t n);   /* -1 + error on bad bytes */

/* reserve n blocks; returns the first counter. NULL means the default generator. */
uint64_t lt_generator_reserve(lt_generator *g, uint64_t n);
static inline lt_generator *lt_generator_or_default(lt_generator *g) { return g ? g : lt_default_generator(); }

/* ---- Philox4x32-10 ---- */
typedef struct lt_philox_key { uint32_t k0, k1; } lt_philox_key;
static inline lt_philox_key lt_philox_key_of(uint64_t seed) {
  lt_philox_key k = { (uint32_t)seed, (uint32_t)(seed >> 32) };
  return k;
}

/* one block: counter (c, attempt), 4 words out */
static inline void lt_philox(lt_philox_key key, uint64_t c, uint32_t attempt, uint32_t out[4]) {
  uint32_t x0 = (uint32_t)c, x1 = (uint32_t)(c >> 32), x2 = attempt, x3 = 0;
  uint32_t k0 = key.k0, k1 = key.k1;
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)x0 * 0xD2511F53u, p1 = (uint64_t)x2 * 0xCD9E8D57u;
    uint32_t y0 = (uint32_t)(p1 >> 32) ^ x1 ^ k0, y1 = (uint32_t)p1;
    uint32_t y2 = (uint32_t)(p0 >> 32) ^ x3 ^ k1, y3 = (uint32_t)p0;
    x0 = y0; x1 = y1; x2 = y2; x3 = y3;
    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
  }
  out[0] = x0; out[1] = x1; out[2] = x2; out[3] = x3;
}

/* eight consecutive blocks c..c+7 at once, word-major (out[w][lane]); the
** lane loops are what the compiler vectorises. Same numbers as lt_philox. */
#define LT_PHILOX_LANES 8
static inline void lt_philox8(lt_philox_key key, uint64_t c, uint32_t attempt, uint32_t out[4][LT_PHILOX_LANES]) {
  uint32_t x0[LT_PHILOX_LANES], x1[LT_PHILOX_LANES], x2[LT_PHILOX_LANES], x3[LT_PHILOX_LANES];
  for (int l = 0; l < LT_PHILOX_LANES; l++) {
    uint64_t cc = c + (uint64_t)l;
    x0[l] = (uint32_t)cc; x1[l] = (uint32_t)(cc >> 32); x2[l] = attempt; x3[l] = 0;
  }
  uint32_t k0 = key.k0, k1 = key.k1;
  for (int r = 0; r < 10; r++) {
    for (int l = 0; l < LT_PHILOX_LANES; l++) {
      uint64_t p0 = (uint64_t)x0[l] * 0xD2511F53u, p1 = (uint64_t)x2[l] * 0xCD9E8D57u;
      uint32_t y0 = (uint32_t)(p1 >> 32) ^ x1[l] ^ k0, y1 = (uint32_t)p1;
      uint32_t y2 = (uint32_t)(p0 >> 32) ^ x3[l] ^ k1, y3 = (uint32_t)p0;
      x0[l] = y0; x1[l] = y1; x2[l] = y2; x3[l] = y3;
    }
    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
  }
  for (int l = 0; l < LT_PHILOX_LANES; l++) {
    out[0][l] = x0[l]; out[1][l] = x1[l]; out[2][l] = x2[l]; out[3][l] = x3[l];
  }
}

/* ---- turning words into numbers ---- */
/* [0, 1) with 24 / 53 random bits */
static inline float lt_u01f(uint32_t w) { return (float)(w >> 8) * 0x1p-24f; }
static inline double lt_u01d(uint32_t lo, uint32_t hi) {
  return (double)((((uint64_t)hi << 32) | lo) >> 11) * 0x1p-53;
}
/* (0, 1]: safe for log() */
static inline double lt_u01d_open0(uint32_t lo, uint32_t hi) {
  return ((double)((((uint64_t)hi << 32) | lo) >> 11) + 1.0) * 0x1p-53;
}

/* uniform integer in [0, range) without bias (Lemire's multiply-and-reject);
** `range` 0 means the full 2^64. Element `c` of a reserved range. */
uint64_t lt_rng_below(lt_philox_key key, uint64_t c, uint64_t range);

/* ---- a sequential stream, for ops that consume an unknown number of
** values (randperm, multinomial). It reserves blocks as it goes. ---- */
typedef struct lt_rng_stream {
  lt_generator *g;
  lt_philox_key key;
  uint32_t buf[4];
  int used;
} lt_rng_stream;
void lt_rng_stream_init(lt_rng_stream *s, lt_generator *g);
uint32_t lt_rng_stream_u32(lt_rng_stream *s);
double lt_rng_stream_double(lt_rng_stream *s);         /* [0, 1) */
uint64_t lt_rng_stream_below(lt_rng_stream *s, uint64_t range);  /* [0, range), unbiased; range > 0 */

#endif
