/*
** serial_hash.c — XXH64 from the xxHash specification: four accumulators
** over 32-byte stripes, then a merge, a tail and an avalanche.
*/
#include "serial/serial_hash.h"
#include <string.h>

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t rd64(const unsigned char *p) {
  uint64_t v; memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}
static inline uint32_t rd32(const unsigned char *p) {
  uint32_t v; memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  return v;
}
static inline uint64_t round64(uint64_t acc, uint64_t in) {
  acc += in * P2;
  acc = rotl(acc, 31);
  return acc * P1;
}
static inline uint64_t merge(uint64_t acc, uint64_t v) {
  acc ^= round64(0, v);
  return acc * P1 + P4;
}

void lt_xxh64_init(lt_xxh64_state *h) {
  h->v[0] = P1 + P2; h->v[1] = P2; h->v[2] = 0; h->v[3] = (uint64_t)0 - P1;
  h->total = 0; h->buflen = 0;
}

static const unsigned char *stripes(uint64_t v[4], const unsigned char *p, const unsigned char *end) {
  uint64_t a = v[0], b = v[1], c = v[2], d = v[3];
  while (end - p >= 32) {
    a = round64(a, rd64(p)); b = round64(b, rd64(p + 8));
    c = round64(c, rd64(p + 16)); d = round64(d, rd64(p + 24));
    p += 32;
  }
  v[0] = a; v[1] = b; v[2] = c; v[3] = d;
  return p;
}

void lt_xxh64_update(lt_xxh64_state *h, const void *data, size_t n) {
  const unsigned char *p = (const unsigned char *)data, *end = p + n;
  h->total += n;
  if (h->buflen) {
    size_t k = 32 - h->buflen;
    if (k > n) k = n;
    memcpy(h->buf + h->buflen, p, k);
    h->buflen += k; p += k;
    if (h->buflen < 32) return;
    stripes(h->v, h->buf, h->buf + 32);
    h->buflen = 0;
  }
  p = stripes(h->v, p, end);
  if (p < end) { memcpy(h->buf, p, (size_t)(end - p)); h->buflen = (size_t)(end - p); }
}

uint64_t lt_xxh64_final(const lt_xxh64_state *h) {
  uint64_t acc;
  if (h->total >= 32) {
    acc = rotl(h->v[0], 1) + rotl(h->v[1], 7) + rotl(h->v[2], 12) + rotl(h->v[3], 18);
    for (int i = 0; i < 4; i++) acc = merge(acc, h->v[i]);
  } else {
    acc = h->v[2] + P5;   /* v[2] holds the seed */
  }
  acc += h->total;
  const unsigned char *p = h->buf, *end = h->buf + h->buflen;
  while (end - p >= 8) { acc ^= round64(0, rd64(p)); acc = rotl(acc, 27) * P1 + P4; p += 8; }
  if (end - p >= 4) { acc ^= (uint64_t)rd32(p) * P1; acc = rotl(acc, 23) * P2 + P3; p += 4; }
  while (p < end) { acc ^= (uint64_t)(*p) * P5; acc = rotl(acc, 11) * P1; p++; }
  acc ^= acc >> 33; acc *= P2; acc ^= acc >> 29; acc *= P3; acc ^= acc >> 32;
  return acc;
}

uint64_t lt_xxh64(const void *p, size_t n) {
  lt_xxh64_state h;
  lt_xxh64_init(&h);
  lt_xxh64_update(&h, p, n);
  return lt_xxh64_final(&h);
}
