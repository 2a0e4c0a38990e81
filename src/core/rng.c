/*
** rng.c — generators: seeding, state, counter reservation, unbiased ranges.
*/
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include <pthread.h>
#include <stdbool.h>
#include "core/rng.h"
#include "core/error.h"

static lt_generator default_gen = { LT_DEFAULT_SEED, 0, 1, 0, 0 };
/* the other device type's (cuda's) default generators, their device fields set once */
static lt_generator device_gens[LT_RNG_MAX_DEVICES] = {
  [0 ... LT_RNG_MAX_DEVICES - 1] = { LT_DEFAULT_SEED, 0, 1, 1, 0 }
};
static pthread_once_t device_gens_once = PTHREAD_ONCE_INIT;

static void device_gens_init(void) {
  for (int i = 0; i < LT_RNG_MAX_DEVICES; i++) device_gens[i].device_index = (int8_t)i;
}

static bool is_default(const lt_generator *g) {
  return g == &default_gen || (g >= device_gens && g < device_gens + LT_RNG_MAX_DEVICES);
}

lt_generator *lt_default_generator(void) { return &default_gen; }

lt_generator *lt_device_default_generator(int type, int index) {
  if (type == 0) return &default_gen;
  if (type != 1 || index < 0 || index >= LT_RNG_MAX_DEVICES) return NULL;
  pthread_once(&device_gens_once, device_gens_init);
  return &device_gens[index];
}

lt_generator *lt_generator_new(uint64_t seed) {
  lt_generator *g = malloc(sizeof *g);
  if (!g) return lt_error_null("Generator: out of memory");
  g->seed = seed;
  atomic_init(&g->offset, 0);
  atomic_init(&g->refcount, 1);
  g->device_type = 0;
  g->device_index = 0;
  return g;
}

void lt_generator_retain(lt_generator *g) {
  if (g && !is_default(g)) atomic_fetch_add(&g->refcount, 1);
}

void lt_generator_release(lt_generator *g) {
  if (!g || is_default(g)) return;
  if (atomic_fetch_sub(&g->refcount, 1) == 1) free(g);
}

void lt_generator_manual_seed(lt_generator *g, uint64_t seed) {
  g->seed = seed;
  atomic_store(&g->offset, 0);
}

void lt_manual_seed(uint64_t seed) {
  lt_generator_manual_seed(&default_gen, seed);
  pthread_once(&device_gens_once, device_gens_init);
  for (int i = 0; i < LT_RNG_MAX_DEVICES; i++) lt_generator_manual_seed(&device_gens[i], seed);
}

uint64_t lt_generator_seed_random(lt_generator *g) {
  uint64_t s = 0;
  FILE *f = fopen("/dev/urandom", "rb");
  if (!f || fread(&s, sizeof s, 1, f) != 1) {
    /* no entropy device: mix the clock and an address, which is enough for "not reproducible" */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    s = ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)&s;
  }
  if (f) fclose(f);
  /* PyTorch keeps seeds within 63 bits so they survive a round trip through signed integers */
  s &= (UINT64_C(1) << 63) - 1;
  lt_generator_manual_seed(g, s);
  return s;
}

static void put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static uint64_t get64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

void lt_generator_get_state(const lt_generator *g, uint8_t *buf) {
  memcpy(buf, "LTRN", 4);
  buf[4] = 1; buf[5] = buf[6] = buf[7] = 0;          /* format version */
  put64(buf + 8, g->seed);
  put64(buf + 16, atomic_load(&((lt_generator *)g)->offset));
}

int lt_generator_set_state(lt_generator *g, const uint8_t *buf, size_t n) {
  if (n != LT_RNG_STATE_BYTES)
    return lt_error("set_state: expected a state of %d bytes, got %zu", LT_RNG_STATE_BYTES, n);
  if (memcmp(buf, "LTRN", 4) != 0 || buf[4] != 1)
    return lt_error("set_state: not a lutorch generator state");
  g->seed = get64(buf + 8);
  atomic_store(&g->offset, get64(buf + 16));
  return 0;
}

uint64_t lt_generator_reserve(lt_generator *g, uint64_t n) {
  g = lt_generator_or_default(g);
  return atomic_fetch_add(&g->offset, n);
}

/* Lemire: the high word of x * range is uniform once the low word is outside
** the short first interval; words come two per block, then from further
** attempts at the same counter. */
uint64_t lt_rng_below(lt_philox_key key, uint64_t c, uint64_t range) {
  uint32_t w[4];
  for (uint32_t attempt = 0;; attempt++) {
    lt_philox(key, c, attempt, w);
    for (int h = 0; h < 4; h += 2) {
      uint64_t x = ((uint64_t)w[h + 1] << 32) | w[h];
      if (range == 0) return x;
      __uint128_t m = (__uint128_t)x * range;
      uint64_t lo = (uint64_t)m;
      if (lo >= range || lo >= (0 - range) % range) return (uint64_t)(m >> 64);
    }
  }
}

void lt_rng_stream_init(lt_rng_stream *s, lt_generator *g) {
  s->g = lt_generator_or_default(g);
  s->key = lt_philox_key_of(s->g->seed);
  s->used = 4;
}

uint32_t lt_rng_stream_u32(lt_rng_stream *s) {
  if (s->used == 4) {
    uint64_t c = lt_generator_reserve(s->g, 1);
    lt_philox(s->key, c, 0, s->buf);
    s->used = 0;
  }
  return s->buf[s->used++];
}

double lt_rng_stream_double(lt_rng_stream *s) {
  uint32_t lo = lt_rng_stream_u32(s), hi = lt_rng_stream_u32(s);
  return lt_u01d(lo, hi);
}

uint64_t lt_rng_stream_below(lt_rng_stream *s, uint64_t range) {
  if (range <= UINT32_MAX) {
    uint32_t r = (uint32_t)range;
    for (;;) {
      uint64_t m = (uint64_t)lt_rng_stream_u32(s) * r;
      uint32_t lo = (uint32_t)m;
      if (lo >= r || lo >= (0u - r) % r) return m >> 32;
    }
  }
  for (;;) {
    uint64_t x = ((uint64_t)lt_rng_stream_u32(s) << 32) | lt_rng_stream_u32(s);
    __uint128_t m = (__uint128_t)x * range;
    uint64_t lo = (uint64_t)m;
    if (lo >= range || lo >= (0 - range) % range) return (uint64_t)(m >> 64);
  }
}
