/*
** crc32c.h — CRC-32C (Castagnoli), and the 64-bit block checksum of
** distributed checkpoints (lib/distributed/checkpoint.lua, src/vm/ldcp.c)
** built from two CRC-32C lanes.
**
** Why not XXH64 (serial_hash.h), which torch.save uses: a checkpoint load is
** a page-cache copy plus a checksum on every byte, and XXH64 runs at about
** the speed of that copy, so it halves the load's bandwidth; the CPU's CRC-32C
** instruction (SSE4.2, ARMv8 CRC) on two independent lanes runs 3-4 times
** faster on data in cache. On a CPU without it, a table version computes the
** same values (checkpoints are portable).
*/
#ifndef LT_SERIAL_CRC32C_H
#define LT_SERIAL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* the standard CRC-32C of n bytes (initial value and final xor 0xFFFFFFFF):
** "123456789" gives 0xE3069283 */
uint32_t lt_crc32c(const void *p, size_t n);

/* The two-lane checksum: the bytes as 8-byte words w0 w1 w2 ...; lane 0 is the
** CRC-32C of the even words w0 w2 ... followed by the last n mod 16 bytes,
** lane 1 the CRC-32C of the odd words w1 w3 ... (of the first n - n mod 16
** bytes). Result: lane0 | lane1 << 32. */
uint64_t lt_crc32c_x2(const void *p, size_t n);
/* the same, by the table, whatever the CPU (for tests) */
uint64_t lt_crc32c_x2_table(const void *p, size_t n);

#endif
