/*
** test_crc32c.c — serial/crc32c.h: CRC-32C's check value, the instruction
** path against the table path on every length and alignment, and the
** two-lane checksum against its definition (two CRC-32Cs of the even and odd
** 8-byte words, the tail in lane 0).
*/
#include <stdlib.h>
#include <string.h>
#include "ctest.h"
#include "serial/crc32c.h"

TEST(check_value) {
  CHECK_EQ_INT(lt_crc32c("123456789", 9), 0xE3069283u);
  CHECK_EQ_INT(lt_crc32c("", 0), 0);
  /* 32 zero bytes: the iSCSI test vector (RFC 3720 B.4) */
  unsigned char z[32] = {0};
  CHECK_EQ_INT(lt_crc32c(z, 32), 0x8A9136AAu);
}

TEST(x2_by_definition) {
  unsigned char buf[300 + 8], lane0[300], lane1[300];
  for (int i = 0; i < (int)sizeof buf; i++) buf[i] = (unsigned char)(i * 131 + 7);
  for (size_t off = 0; off < 8; off++)
    for (size_t n = 0; n <= 300; n++) {
      const unsigned char *p = buf + off;
      size_t full = n - n % 16, l0 = 0, l1 = 0;
      for (size_t w = 0; w < full / 8; w++) {
        if (w % 2 == 0) { memcpy(lane0 + l0, p + 8 * w, 8); l0 += 8; }
        else { memcpy(lane1 + l1, p + 8 * w, 8); l1 += 8; }
      }
      memcpy(lane0 + l0, p + full, n - full);
      l0 += n - full;
      uint64_t want = (uint64_t)lt_crc32c(lane0, l0) | (uint64_t)lt_crc32c(lane1, l1) << 32;
      if (lt_crc32c_x2(p, n) != want || lt_crc32c_x2_table(p, n) != want) {
        CHECK(lt_crc32c_x2(p, n) == want);
        CHECK(lt_crc32c_x2_table(p, n) == want);
        return;
      }
    }
  CHECK(1);
}

TEST(x2_large_and_sensitive) {
  size_t n = (1 << 20) + 13;
  unsigned char *b = malloc(n);
  for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(i * 2654435761u >> 13);
  uint64_t h = lt_crc32c_x2(b, n);
  CHECK(h == lt_crc32c_x2_table(b, n));
  for (size_t i = 0; i < n; i += 99991) {   /* any flipped bit changes it */
    b[i] ^= 4;
    CHECK(lt_crc32c_x2(b, n) != h);
    b[i] ^= 4;
  }
  free(b);
}

int main(void) {
  RUN(check_value);
  RUN(x2_by_definition);
  RUN(x2_large_and_sensitive);
  return ctest_summary();
}
