/*
** serial_hash.h — XXH64 (Yann Collet's xxHash, 64-bit variant, seed 0),
** written from its published specification. The lutorch format checksums
** its header, metadata and every storage with it: it runs at memory speed
** (several times zlib's crc32 here, see bench/README.md), so verifying a
** load costs little next to reading the disk.
*/
#ifndef LT_SERIAL_HASH_H
#define LT_SERIAL_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct lt_xxh64 {
  uint64_t v[4];
  uint64_t total;
  unsigned char buf[32];
  size_t buflen;
} lt_xxh64_state;

void lt_xxh64_init(lt_xxh64_state *h);
void lt_xxh64_update(lt_xxh64_state *h, const void *p, size_t n);
uint64_t lt_xxh64_final(const lt_xxh64_state *h);
uint64_t lt_xxh64(const void *p, size_t n);

#endif
