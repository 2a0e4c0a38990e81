/*
** test_image.c — serial/image.h from C: PNG and JPEG round trips through the
** codecs, the channel conversions, and hostile input (a header that claims
** more pixels than its bytes can hold, every truncation, bytes flipped
** anywhere) failing with a message in the error slot, never a crash; run
** under ASan by `make asan` this also checks that the longjmp error exits
** free what the codecs allocated.
*/
#include <stdlib.h>
#include <string.h>
#include "ctest.h"
#include "dispatch/dispatch.h"
#include "core/error.h"
#include "core/tensor.h"
#include "serial/image.h"

static lt_tensor *pattern(int c, int h, int w) {
  int64_t sizes[3] = {c, h, w};
  lt_tensor *t = lt_tensor_new(LT_UINT8, lt_device_cpu(), 3, sizes);
  uint8_t *p = (uint8_t *)lt_tensor_data(t);
  for (int64_t i = 0; i < t->numel; i++) p[i] = (uint8_t)(i * 37 + (i >> 5) * 11);
  return t;
}

static int same_bytes(const lt_tensor *a, const lt_tensor *b) {
  if (a->numel != b->numel || a->ndim != b->ndim) return 0;
  for (int d = 0; d < a->ndim; d++) if (a->sizes[d] != b->sizes[d]) return 0;
  return memcmp(lt_tensor_data(a), lt_tensor_data(b), (size_t)a->numel) == 0;
}

TEST(png_round_trip) {
  for (int c = 1; c <= 4; c++) {
    lt_tensor *t = pattern(c, 7, 13);
    unsigned char *png = NULL;
    size_t n = 0;
    CHECK_EQ_INT(lt_image_encode_png(t, 6, &png, &n), 0);
    CHECK_EQ_INT(lt_image_sniff(png, n), LT_IMAGE_PNG);
    int bits = 0;
    lt_tensor *back = lt_image_decode_png(png, n, 0, 1, &bits, "png");
    CHECK(back && same_bytes(back, t));
    CHECK_EQ_INT(bits, 8);
    lt_tensor_release(back);
    free(png);
    lt_tensor_release(t);
  }
}

TEST(channel_conversions) {
  /* one RGBA pixel (200, 100, 50, 9): gray is Pillow's luma, RGB drops alpha */
  int64_t sizes[3] = {4, 1, 1};
  lt_tensor *t = lt_tensor_new(LT_UINT8, lt_device_cpu(), 3, sizes);
  uint8_t *p = (uint8_t *)lt_tensor_data(t);
  p[0] = 200; p[1] = 100; p[2] = 50; p[3] = 9;
  unsigned char *png = NULL;
  size_t n = 0;
  CHECK_EQ_INT(lt_image_encode_png(t, 1, &png, &n), 0);
  lt_tensor *g = lt_image_decode_png(png, n, 1, 0, NULL, "png");
  CHECK(g && ((uint8_t *)lt_tensor_data(g))[0] == (200 * 19595 + 100 * 38470 + 50 * 7471 + 32768) >> 16);
  lt_tensor *ga = lt_image_decode_png(png, n, 2, 0, NULL, "png");
  CHECK(ga && ((uint8_t *)lt_tensor_data(ga))[1] == 9);
  lt_tensor *rgb = lt_image_decode_png(png, n, 3, 0, NULL, "png");
  CHECK(rgb && rgb->sizes[0] == 3 && ((uint8_t *)lt_tensor_data(rgb))[2] == 50);
  lt_tensor_release(g);
  lt_tensor_release(ga);
  lt_tensor_release(rgb);
  free(png);
  lt_tensor_release(t);
}

TEST(jpeg_round_trip) {
  int64_t sizes[3] = {3, 16, 24};
  lt_tensor *t = lt_tensor_new(LT_UINT8, lt_device_cpu(), 3, sizes);
  uint8_t *p = (uint8_t *)lt_tensor_data(t);
  for (int c = 0; c < 3; c++)      /* smooth ramps: what JPEG keeps well */
    for (int y = 0; y < 16; y++)
      for (int x = 0; x < 24; x++) p[(c * 16 + y) * 24 + x] = (uint8_t)(c * 40 + y * 4 + x * 3);
  unsigned char *jpg = NULL;
  size_t n = 0;
  CHECK_EQ_INT(lt_image_encode_jpeg(t, 95, &jpg, &n), 0);
  CHECK_EQ_INT(lt_image_sniff(jpg, n), LT_IMAGE_JPEG);
  lt_tensor *back = lt_image_decode_jpeg(jpg, n, 0, "jpg");
  CHECK(back && back->sizes[0] == 3 && back->sizes[1] == 16 && back->sizes[2] == 24);
  if (back) {
    const uint8_t *q = (const uint8_t *)lt_tensor_data(back);
    int worst = 0;
    for (int64_t i = 0; i < t->numel; i++) {
      int d = abs((int)q[i] - (int)p[i]);
      if (d > worst) worst = d;
    }
    CHECK(worst <= 8);
  }
  lt_tensor_release(back);
  /* every truncation is an error with a message */
  int all_failed = 1;
  for (size_t k = 0; k < n; k++) {
    lt_error_clear();
    lt_tensor *r = lt_image_decode_jpeg(jpg, k, 0, "jpg");
    if (r) { all_failed = 0; lt_tensor_release(r); }
    else if (lt_error_message()[0] == '\0') all_failed = 0;
  }
  CHECK(all_failed);
  /* flipped bytes: an error or a picture, never a crash */
  for (size_t k = 2; k < n; k++) {
    jpg[k] ^= 0xA5;
    lt_tensor_release(lt_image_decode_jpeg(jpg, n, 0, "jpg"));
    jpg[k] ^= 0xA5;
  }
  free(jpg);
  lt_tensor_release(t);
}

TEST(png_hostile) {
  lt_tensor *t = pattern(3, 9, 11);
  unsigned char *png = NULL;
  size_t n = 0;
  CHECK_EQ_INT(lt_image_encode_png(t, 9, &png, &n), 0);
  /* truncations that cut into the pixels fail (the trailing IEND chunk is 12 bytes) */
  int all_failed = 1;
  for (size_t k = 0; k + 12 < n; k++) {
    lt_tensor *r = lt_image_decode_png(png, k, 0, 0, NULL, "png");
    if (r) { all_failed = 0; lt_tensor_release(r); }
  }
  CHECK(all_failed);
  for (size_t k = 8; k < n; k++) {
    png[k] ^= 0x5A;
    lt_tensor_release(lt_image_decode_png(png, n, 0, 1, NULL, "png"));
    png[k] ^= 0x5A;
  }
  free(png);
  lt_tensor_release(t);
  /* the size checks, before anything is allocated */
  CHECK(lt_image_check_size(10000, 10000, 3, 1000, 1032, "x") < 0);
  CHECK(strstr(lt_error_message(), "more than its 1000 bytes") != NULL);
  CHECK(lt_image_check_size(70000, 10, 1, 1 << 30, 1032, "x") < 0);
  CHECK(lt_image_check_size(20000, 20000, 1, 1 << 30, 1032, "x") < 0);   /* > 2^28 pixels */
  CHECK_EQ_INT(lt_image_check_size(1000, 1000, 3, 10, 1032, "x"), 0);   /* under the floor */
  CHECK(lt_image_check_size(0, 10, 1, 100, 1032, "x") < 0);
}

TEST(encode_refuses) {
  lt_tensor *t = pattern(5, 2, 2);
  unsigned char *out = NULL;
  size_t n = 0;
  CHECK(lt_image_encode_png(t, 6, &out, &n) < 0);
  CHECK(lt_image_encode_jpeg(t, 75, &out, &n) < 0);
  lt_tensor_release(t);
  t = pattern(3, 2, 2);
  CHECK(lt_image_encode_png(t, 10, &out, &n) < 0);
  CHECK(lt_image_encode_jpeg(t, 0, &out, &n) < 0);
  CHECK(out == NULL);
  lt_tensor_release(t);
}

int main(void) {
  lt_init();
  RUN(png_round_trip);
  RUN(channel_conversions);
  RUN(jpeg_round_trip);
  RUN(png_hostile);
  RUN(encode_refuses);
  return ctest_summary();
}
