/*
** image.c — what the PNG and JPEG codecs share: recognising a format by its
** signature, the size checks made before any pixel memory is allocated, and
** the conversion of a decoder's interleaved rows into a [C, H, W] tensor
** with the channel count the caller asked for.
*/
#include <string.h>
#include "core/error.h"
#include "serial/image.h"

lt_image_format lt_image_sniff(const unsigned char *p, size_t n) {
  static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (n >= 8 && memcmp(p, png_sig, 8) == 0) return LT_IMAGE_PNG;
  if (n >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff) return LT_IMAGE_JPEG;
  return LT_IMAGE_UNKNOWN;
}

int lt_image_check_size(int64_t w, int64_t h, int channels, size_t n, int64_t ratio, const char *what) {
  if (w <= 0 || h <= 0) return lt_error("%s has an empty image (%lld x %lld)", what, (long long)w, (long long)h);
  if (w > LT_IMAGE_MAX_SIDE || h > LT_IMAGE_MAX_SIDE)
    return lt_error("%s claims %lld x %lld pixels: more than %d on a side is refused", what, (long long)w,
                    (long long)h, LT_IMAGE_MAX_SIDE);
  int64_t px = w * h;
  if (px > LT_IMAGE_MAX_PIXELS)
    return lt_error("%s claims %lld x %lld pixels: more than %lld in all is refused", what, (long long)w,
                    (long long)h, (long long)LT_IMAGE_MAX_PIXELS);
  /* n bytes of compressed data cannot describe more than about ratio * n samples;
  ** the floor keeps every small legitimate image acceptable whatever its size */
  int64_t cap = (int64_t)n * ratio;
  if (cap < ((int64_t)1 << 24)) cap = (int64_t)1 << 24;
  if (px * channels > cap)
    return lt_error("%s claims %lld x %lld pixels, more than its %zu bytes can hold (corrupt or hostile header)",
                    what, (long long)w, (long long)h, n);
  return 0;
}

/* ITU-R 601-2 luma in 16-bit fixed point, rounded: Pillow's convert("L") */
static inline uint32_t luma(uint32_t r, uint32_t g, uint32_t b) {
  return (uint32_t)(((uint64_t)r * 19595 + (uint64_t)g * 38470 + (uint64_t)b * 7471 + 0x8000) >> 16);
}

#define PLANAR_LOOP(T_IN, T_OUT, MAXV)                                                          \
  do {                                                                                          \
    const T_IN *s = (const T_IN *)hwc;                                                          \
    T_OUT *d = (T_OUT *)lt_tensor_data(t);                                                      \
    for (int64_t i = 0; i < plane; i++, s += c) {                                               \
      uint32_t r, g, b, a = (MAXV);                                                             \
      if (c <= 2) { r = g = b = s[0]; if (c == 2) a = s[1]; }                                   \
      else { r = s[0]; g = s[1]; b = s[2]; if (c == 4) a = s[3]; }                              \
      switch (out_c) {                                                                          \
      case 1: d[i] = (T_OUT)(c <= 2 ? r : luma(r, g, b)); break;                               \
      case 2: d[i] = (T_OUT)(c <= 2 ? r : luma(r, g, b)); d[plane + i] = (T_OUT)a; break;      \
      case 3: d[i] = (T_OUT)r; d[plane + i] = (T_OUT)g; d[2 * plane + i] = (T_OUT)b; break;     \
      default:                                                                                  \
        d[i] = (T_OUT)r; d[plane + i] = (T_OUT)g; d[2 * plane + i] = (T_OUT)b;                  \
        d[3 * plane + i] = (T_OUT)a;                                                            \
      }                                                                                         \
    }                                                                                           \
  } while (0)

lt_tensor *lt_image_planar(const void *hwc, int64_t h, int64_t w, int c, int bytes, int out_c) {
  int64_t sizes[3] = {out_c, h, w}, plane = h * w;
  lt_tensor *t = lt_tensor_new(bytes == 2 ? LT_INT32 : LT_UINT8, lt_device_cpu(), 3, sizes);
  if (!t) return NULL;
  if (bytes == 2) PLANAR_LOOP(uint16_t, int32_t, 65535);
  else PLANAR_LOOP(uint8_t, uint8_t, 255);
  return t;
}
