/*
** image.h — PNG (libpng) and JPEG (libjpeg-turbo) codecs over bytes in
** memory. No Lua here: lib/image (through src/vm/limage.c) reads and writes
** the files and converts dtypes; these functions only turn bytes into pixels
** and back.
**
** Pixels cross this interface as a contiguous tensor of shape [C, H, W]
** (channels first, as Torch7's image package and torchvision keep them):
** uint8, or int32 holding 16-bit samples (0..65535) when a 16-bit PNG is
** decoded with keep16. C is 1 (gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA).
**
** Hostile input: every decoder checks the header's dimensions before it
** allocates anything for the pixels (LT_IMAGE_MAX_SIDE, LT_IMAGE_MAX_PIXELS,
** and a cap that follows from the input's size, since a compressed stream of
** n bytes cannot hold more than a bounded multiple of n samples), and a
** truncated or corrupt stream is an error, not a half-gray picture. The
** libraries' longjmp error exits stay inside png.c / jpeg.c, which free what
** they allocated; callers see NULL / -1 and the error slot, as everywhere in
** the core. `what` names the source in messages ("'cat.png'", "bytes").
*/
#ifndef LT_SERIAL_IMAGE_H
#define LT_SERIAL_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include "core/tensor.h"

#define LT_IMAGE_MAX_SIDE 65535            /* JPEG's own limit; PNGs are held to it too */
#define LT_IMAGE_MAX_PIXELS ((int64_t)1 << 28)

typedef enum { LT_IMAGE_UNKNOWN = 0, LT_IMAGE_PNG, LT_IMAGE_JPEG } lt_image_format;

/* the format from the first bytes (the signature), LT_IMAGE_UNKNOWN when neither */
lt_image_format lt_image_sniff(const unsigned char *p, size_t n);

/* Decoding. channels: 0 keeps the file's own (palette -> RGB, or RGBA when the
** palette has transparency; a tRNS chunk becomes an alpha channel), 1..4
** converts (gray = ITU-R 601 luma, rounded as Pillow's convert("L") does;
** dropping alpha drops it; an added alpha is opaque). keep16: a 16-bit PNG
** gives int32 samples 0..65535; without it every image gives uint8 (16-bit
** samples keep their high byte, as libpng's strip_16 and Pillow do).
** *bits (may be NULL) receives the file's sample depth after expansion: 8 or 16. */
lt_tensor *lt_image_decode_png(const unsigned char *p, size_t n, int channels, int keep16, int *bits,
                               const char *what);
/* JPEG: gray or YCbCr/RGB files (CMYK is refused); always uint8. */
lt_tensor *lt_image_decode_jpeg(const unsigned char *p, size_t n, int channels, const char *what);

/* Encoding a contiguous uint8 [C, H, W] tensor (C in 1..4; JPEG: 1 or 3).
** On success *out is a malloc'd buffer of *len bytes that the caller frees.
** level: zlib compression 0..9 (-1 = libpng's default); quality 1..100. */
int lt_image_encode_png(const lt_tensor *t, int level, unsigned char **out, size_t *len);
int lt_image_encode_jpeg(const lt_tensor *t, int quality, unsigned char **out, size_t *len);

/* shared by the codecs: the header's dimensions are acceptable for an input
** of n bytes that expands at most `ratio` samples per byte; -1 with a message */
int lt_image_check_size(int64_t w, int64_t h, int channels, size_t n, int64_t ratio, const char *what);
/* [H, W, C] interleaved samples (8- or 16-bit, `bytes` per sample) into a new
** [C, H, W] tensor with `out_c` channels, converted as described above */
lt_tensor *lt_image_planar(const void *hwc, int64_t h, int64_t w, int c, int bytes, int out_c);

#endif
