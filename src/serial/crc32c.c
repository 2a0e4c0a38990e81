/*
** crc32c.c — CRC-32C by the CPU's instruction where there is one (x86
** SSE4.2, picked at run time; ARMv8 CRC where the build targets it), else by
** slicing-by-8 tables; and the two-lane checksum of crc32c.h. The
** instruction has a latency of several cycles and a throughput of one per
** cycle, so two independent lanes nearly double its speed.
*/
#include "serial/crc32c.h"
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define HW_X86 1      /* compiled with target("sse4.2"), used where the CPU has it */
#elif defined(__ARM_FEATURE_CRC32) && defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <arm_acle.h>
#define HW_ARM 1      /* the build targets it: always there */
#endif

/* ---- tables (reflected polynomial 0x82F63B78) ---- */

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void make_table(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[0][i] = c;
  }
  for (int t = 1; t < 8; t++)
    for (uint32_t i = 0; i < 256; i++) table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
}

/* c: the running (inverted) value */
static uint32_t tab_bytes(uint32_t c, const unsigned char *p, size_t n) {
  while (n >= 8) {
    uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    c = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^
        table[3][p[4]] ^ table[2][p[5]] ^ table[1][p[6]] ^ table[0][p[7]];
    p += 8; n -= 8;
  }
  while (n--) c = table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
  return c;
}

static uint64_t x2_table(const unsigned char *p, size_t n) {
  pthread_once(&table_once, make_table);
  uint32_t a = 0xFFFFFFFFu, b = 0xFFFFFFFFu;
  for (; n >= 16; p += 16, n -= 16) {
    a = tab_bytes(a, p, 8);
    b = tab_bytes(b, p + 8, 8);
  }
  a = tab_bytes(a, p, n);
  return (uint64_t)~a | (uint64_t)~b << 32;
}

static uint32_t one_table(const unsigned char *p, size_t n) {
  pthread_once(&table_once, make_table);
  return ~tab_bytes(0xFFFFFFFFu, p, n);
}

uint64_t lt_crc32c_x2_table(const void *p, size_t n) { return x2_table((const unsigned char *)p, n); }

/* ---- the instruction ---- */

#if defined(HW_X86) || defined(HW_ARM)
#ifdef HW_X86
#define HW_FN __attribute__((target("sse4.2")))
#define CRC64(c, w) _mm_crc32_u64((c), (w))
#define CRC8(c, v) _mm_crc32_u8((uint32_t)(c), (v))
typedef unsigned long long lane_t;
static int have_hw(void) {
  static atomic_int have = -1;   /* threads racing here all store the same value */
  int h = atomic_load_explicit(&have, memory_order_relaxed);
  if (h < 0) {
    __builtin_cpu_init();
    h = __builtin_cpu_supports("sse4.2") ? 1 : 0;
    atomic_store_explicit(&have, h, memory_order_relaxed);
  }
  return h;
}
#else
#define HW_FN
#define CRC64(c, w) __crc32cd((c), (w))
#define CRC8(c, v) __crc32cb((c), (v))
typedef uint32_t lane_t;
static int have_hw(void) { return 1; }
#endif

HW_FN static uint64_t x2_hw(const unsigned char *p, size_t n) {
  lane_t a = 0xFFFFFFFFu, b = 0xFFFFFFFFu;
  for (; n >= 16; p += 16, n -= 16) {
    uint64_t x, y;
    memcpy(&x, p, 8);          /* the instruction takes a word's bytes in memory order (little-endian) */
    memcpy(&y, p + 8, 8);
    a = CRC64(a, x);
    b = CRC64(b, y);
  }
  while (n--) a = CRC8(a, *p++);
  return (uint64_t)(uint32_t)~a | (uint64_t)(uint32_t)~b << 32;
}

HW_FN static uint32_t one_hw(const unsigned char *p, size_t n) {
  lane_t c = 0xFFFFFFFFu;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t x;
    memcpy(&x, p, 8);
    c = CRC64(c, x);
  }
  while (n--) c = CRC8(c, *p++);
  return ~(uint32_t)c;
}

uint64_t lt_crc32c_x2(const void *p, size_t n) {
  return have_hw() ? x2_hw((const unsigned char *)p, n) : x2_table((const unsigned char *)p, n);
}
uint32_t lt_crc32c(const void *p, size_t n) {
  return have_hw() ? one_hw((const unsigned char *)p, n) : one_table((const unsigned char *)p, n);
}
#else
uint64_t lt_crc32c_x2(const void *p, size_t n) { return x2_table((const unsigned char *)p, n); }
uint32_t lt_crc32c(const void *p, size_t n) { return one_table((const unsigned char *)p, n); }
#endif
