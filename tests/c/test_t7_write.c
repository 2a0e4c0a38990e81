/*
** test_t7_write.c — Torch7's typed File primitives of serial/t7.h
** (t7_write.c): the bytes of each element type in binary and ascii, auto
** spacing, 4-byte longs, writes over existing bytes, and reads that stop at
** the end or at text that is not a number. The object layer over them is
** tested from Lua (tests/lua/torch7/test_t7file.lua).
*/
#include <string.h>
#include "ctest.h"
#include "dispatch/dispatch.h"
#include "serial/t7.h"

static const lt_t7_codec BIN = {false, true, 8}, TXT = {true, true, 8}, TXT_TIGHT = {true, false, 8},
                         BIN4 = {false, true, 4, false}, BIG = {false, true, 8, true}, BIG4 = {false, true, 4, true};

static bool bytes_are(const lt_t7_bytes *b, const char *s, size_t n) {
  return b->len == n && memcmp(b->p, s, n) == 0;
}

TEST(binary_elements) {
  lt_t7_bytes b = {0};
  size_t pos = 0;
  int32_t i[2] = {1, -2};
  CHECK_EQ_INT(lt_t7_encode(&b, &pos, LT_INT32, i, 2, &BIN), 0);
  CHECK(bytes_are(&b, "\1\0\0\0\376\377\377\377", 8));
  int64_t l = 3;
  CHECK_EQ_INT(lt_t7_encode(&b, &pos, LT_INT64, &l, 1, &BIN), 0);
  CHECK_EQ_INT(pos, 16);
  double d = 0.5;
  lt_t7_encode(&b, &pos, LT_FLOAT64, &d, 1, &BIN);
  size_t rp = 0;
  int32_t ri[2];
  int64_t rl;
  double rd;
  CHECK_EQ_INT(lt_t7_decode(b.p, b.len, &rp, LT_INT32, ri, 2, &BIN), 2);
  CHECK_EQ_INT(ri[1], -2);
  CHECK_EQ_INT(lt_t7_decode(b.p, b.len, &rp, LT_INT64, &rl, 1, &BIN), 1);
  CHECK_EQ_INT(rl, 3);
  CHECK_EQ_INT(lt_t7_decode(b.p, b.len, &rp, LT_FLOAT64, &rd, 1, &BIN), 1);
  CHECK_NEAR(rd, 0.5, 0);
  /* at the end: nothing more */
  CHECK_EQ_INT(lt_t7_decode(b.p, b.len, &rp, LT_FLOAT64, &rd, 1, &BIN), 0);
  lt_t7_bytes_free(&b);
}

TEST(long_size_4) {
  lt_t7_bytes b = {0};
  size_t pos = 0;
  int64_t l[2] = {5, -6};
  lt_t7_encode(&b, &pos, LT_INT64, l, 2, &BIN4);
  CHECK(bytes_are(&b, "\5\0\0\0\372\377\377\377", 8));
  size_t rp = 0;
  int64_t r[2] = {0, 0};
  CHECK_EQ_INT(lt_t7_decode(b.p, b.len, &rp, LT_INT64, r, 2, &BIN4), 2);
  CHECK_EQ_INT(r[0], 5);
  CHECK_EQ_INT(r[1], -6);
  lt_t7_bytes_free(&b);
}

TEST(big_endian) {
  lt_t7_bytes b = {0};
  size_t pos = 0;
  int32_t i = 0x01020304;
  int64_t l = 5;
  lt_t7_encode(&b, &pos, LT_INT32, &i, 1, &BIG);
  lt_t7_encode(&b, &pos, LT_INT64, &l, 1, &BIG4);
  lt_t7_encode(&b, &pos, LT_INT64, &l, 1, &BIG);
  CHECK(bytes_are(&b, "\1\2\3\4\0\0\0\5\0\0\0\0\0\0\0\5", 16));
  size_t rp = 0;
  int32_t ri = 0;
  int64_t rl[2] = {0, 0};
  lt_t7_decode(b.p, b.len, &rp, LT_INT32, &ri, 1, &BIG);
  lt_t7_decode(b.p, b.len, &rp, LT_INT64, &rl[0], 1, &BIG4);
  lt_t7_decode(b.p, b.len, &rp, LT_INT64, &rl[1], 1, &BIG);
  CHECK_EQ_INT(ri, 0x01020304);
  CHECK_EQ_INT(rl[0], 5);
  CHECK_EQ_INT(rl[1], 5);
  lt_t7_bytes_free(&b);
}

TEST(ascii_formats) {
  lt_t7_bytes b = {0};
  size_t pos = 0;
  int16_t s[3] = {1, -2, 300};
  lt_t7_encode(&b, &pos, LT_INT16, s, 3, &TXT);
  float f = 0.1f;
  lt_t7_encode(&b, &pos, LT_FLOAT32, &f, 1, &TXT);
  double d = 0.1;
  lt_t7_encode(&b, &pos, LT_FLOAT64, &d, 1, &TXT);
  lt_t7_encode(&b, &pos, LT_UINT8, "ab", 2, &TXT);
  const char want[] = "1 -2 300\n0.100000001\n0.10000000000000001\nab\n";
  CHECK(bytes_are(&b, want, sizeof want - 1));
  size_t rp = 0;
  int16_t rs[3];
  float rf;
  double rd;
  unsigned char rc[2];
  CHECK_EQ_INT(lt_t7_decode(b.p, b.len, &rp, LT_INT16, rs, 3, &TXT), 3);
  CHECK_EQ_INT(rs[2], 300);
  CHECK_EQ_INT(lt_t7_decode(b.p, b.len, &rp, LT_FLOAT32, &rf, 1, &TXT), 1);
  CHECK(rf == 0.1f);
  CHECK_EQ_INT(lt_t7_decode(b.p, b.len, &rp, LT_FLOAT64, &rd, 1, &TXT), 1);
  CHECK(rd == 0.1);
  CHECK_EQ_INT(lt_t7_decode(b.p, b.len, &rp, LT_UINT8, rc, 2, &TXT), 2);
  CHECK(rc[0] == 'a' && rc[1] == 'b');
  CHECK_EQ_INT(rp, b.len);            /* the closing '\n' of each call is consumed */
  lt_t7_bytes_free(&b);
}

TEST(ascii_without_spacing) {
  lt_t7_bytes b = {0};
  size_t pos = 0;
  int32_t i[2] = {1, 2};
  lt_t7_encode(&b, &pos, LT_INT32, i, 2, &TXT_TIGHT);
  CHECK(bytes_are(&b, "12", 2));
  lt_t7_bytes_free(&b);
}

TEST(text_that_is_not_a_number) {
  const unsigned char s[] = "7 x 9";
  size_t rp = 0;
  int32_t r[3] = {0, 0, 0};
  CHECK_EQ_INT(lt_t7_decode(s, sizeof s - 1, &rp, LT_INT32, r, 3, &TXT), 1);
  CHECK_EQ_INT(r[0], 7);
  double d;
  rp = 0;
  CHECK_EQ_INT(lt_t7_decode((const unsigned char *)"   ", 3, &rp, LT_FLOAT64, &d, 1, &TXT), 0);
}

TEST(overwrite_and_errors) {
  lt_t7_bytes b = {0};
  size_t pos = 0;
  lt_t7_bytes_put(&b, &pos, "hello", 5);
  pos = 1;
  lt_t7_bytes_put(&b, &pos, "EL", 2);
  CHECK(bytes_are(&b, "hELlo", 5));
  pos = 9;
  CHECK_EQ_INT(lt_t7_bytes_put(&b, &pos, "x", 1), -1);     /* past the end */
  pos = 0;
  bool v = true;
  CHECK_EQ_INT(lt_t7_encode(&b, &pos, LT_BOOL, &v, 1, &BIN), -1);
  CHECK(strstr(lt_error_message(), "no Torch7 file type") != NULL);
  CHECK(!lt_t7_codec_dtype(LT_BFLOAT16));
  CHECK(lt_t7_codec_dtype(LT_FLOAT16));
  lt_t7_bytes_free(&b);
}

int main(void) {
  lt_init();
  RUN(binary_elements);
  RUN(long_size_4);
  RUN(big_endian);
  RUN(ascii_formats);
  RUN(ascii_without_spacing);
  RUN(text_that_is_not_a_number);
  RUN(overwrite_and_errors);
  return ctest_summary();
}
