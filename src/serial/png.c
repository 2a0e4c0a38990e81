/*
** png.c — PNG through libpng, from and to memory.
**
** libpng reports errors by longjmp to the setjmp in the function that called
** it. Everything those functions allocate is reached from a context struct
** whose address libpng holds (so its fields live in memory, not in registers
** that longjmp would restore), and the one cleanup path frees it, on success
** and on error alike. The dimensions are checked right after the header is
** read, before any pixel memory exists.
*/
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "serial/image.h"

typedef struct png_ctx {
  const unsigned char *src;    /* decoding: the input and the read position */
  size_t n, pos;
  unsigned char *buf;          /* the interleaved pixels (decoding) or one row (encoding) */
  png_bytep *rows;
  unsigned char *out;          /* encoding: the growing output */
  size_t len, cap;
  char msg[256];
} png_ctx;

static void on_error(png_structp png, png_const_charp msg) {
  png_ctx *c = (png_ctx *)png_get_error_ptr(png);
  snprintf(c->msg, sizeof c->msg, "%s", msg);
  png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg) { (void)png; (void)msg; }

static void read_bytes(png_structp png, png_bytep dst, png_size_t k) {
  png_ctx *c = (png_ctx *)png_get_io_ptr(png);
  if (k > c->n - c->pos) png_error(png, "the data is truncated");
  memcpy(dst, c->src + c->pos, k);
  c->pos += k;
}

/* a deflate stream expands at most about 1032:1; samples narrower than a byte
** pack 8 / depth to the byte */
#define DEFLATE_MAX_RATIO 1032

lt_tensor *lt_image_decode_png(const unsigned char *p, size_t n, int channels, int keep16, int *bits,
                               const char *what) {
  if (lt_image_sniff(p, n) != LT_IMAGE_PNG) return lt_error_null("%s is not a PNG file (bad signature)", what);
  if (channels < 0 || channels > 4) return lt_error_null("%s: channels must be 0..4, got %d", what, channels);
  png_ctx c = {.src = p, .n = n};
  lt_tensor *volatile result = NULL;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &c, on_error, on_warning);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!info) {
    png_destroy_read_struct(&png, NULL, NULL);
    return lt_error_null("%s: out of memory starting libpng", what);
  }
  if (setjmp(png_jmpbuf(png))) {
    lt_error("%s is not a valid PNG: %s", what, c.msg);
    goto done;
  }
  png_set_read_fn(png, &c, read_bytes);
  png_set_user_limits(png, LT_IMAGE_MAX_SIDE, LT_IMAGE_MAX_SIDE);
  png_set_chunk_cache_max(png, 1000);
  png_set_chunk_malloc_max(png, (png_alloc_size_t)8 << 20);
  png_read_info(png, info);

  png_uint_32 w, h;
  int depth, color, interlace;
  png_get_IHDR(png, info, &w, &h, &depth, &color, &interlace, NULL, NULL);
  int native = png_get_channels(png, info);
  if (lt_image_check_size(w, h, native, n, (int64_t)DEFLATE_MAX_RATIO * 8 / depth, what) < 0) goto done;

  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
  int wide = depth == 16 && keep16;
  if (depth == 16) {
    if (keep16) png_set_swap(png);      /* the file is big-endian; hosts we build for are not */
    else png_set_strip_16(png);
  }
  png_set_interlace_handling(png);
  png_read_update_info(png, info);

  int nc = png_get_channels(png, info);
  size_t rowbytes = png_get_rowbytes(png, info);
  if (rowbytes != (size_t)w * nc * (wide ? 2 : 1)) {
    lt_error("%s: unexpected row layout after libpng's transforms", what);
    goto done;
  }
  c.buf = malloc(rowbytes * h);
  c.rows = malloc(sizeof(png_bytep) * h);
  if (!c.buf || !c.rows) {
    lt_error("%s: out of memory for %u x %u pixels", what, (unsigned)w, (unsigned)h);
    goto done;
  }
  for (png_uint_32 y = 0; y < h; y++) c.rows[y] = c.buf + (size_t)y * rowbytes;
  png_read_image(png, c.rows);
  if (bits) *bits = depth == 16 ? 16 : 8;
  result = lt_image_planar(c.buf, h, w, nc, wide ? 2 : 1, channels ? channels : nc);
done:
  png_destroy_read_struct(&png, &info, NULL);
  free(c.buf);
  free(c.rows);
  return result;
}

static void write_bytes(png_structp png, png_bytep src, png_size_t k) {
  png_ctx *c = (png_ctx *)png_get_io_ptr(png);
  if (k > c->cap - c->len) {
    size_t cap = c->cap ? c->cap : 4096;
    while (k > cap - c->len) {
      if (cap > SIZE_MAX / 2) png_error(png, "output too large");
      cap *= 2;
    }
    unsigned char *q = realloc(c->out, cap);
    if (!q) png_error(png, "out of memory");
    c->out = q;
    c->cap = cap;
  }
  memcpy(c->out + c->len, src, k);
  c->len += k;
}

static void flush_bytes(png_structp png) { (void)png; }

int lt_image_encode_png(const lt_tensor *t, int level, unsigned char **out, size_t *len) {
  static const int types[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                               PNG_COLOR_TYPE_RGB_ALPHA};
  if (t->ndim != 3 || lt_tensor_dtype(t) != LT_UINT8 || !lt_tensor_is_contiguous(t))
    return lt_error("PNG encoding takes a contiguous uint8 [C, H, W] tensor");
  int64_t nc = t->sizes[0], h = t->sizes[1], w = t->sizes[2];
  if (nc < 1 || nc > 4) return lt_error("a PNG image has 1 to 4 channels, got %lld", (long long)nc);
  if (h < 1 || w < 1 || h > LT_IMAGE_MAX_SIDE || w > LT_IMAGE_MAX_SIDE)
    return lt_error("%lld x %lld is not a size PNG files here can have (1..%d a side)", (long long)w,
                    (long long)h, LT_IMAGE_MAX_SIDE);
  if (level < -1 || level > 9) return lt_error("PNG compression level must be 0..9, got %d", level);
  png_ctx c = {0};
  int volatile rc = -1;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &c, on_error, on_warning);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!info) {
    png_destroy_write_struct(&png, NULL);
    return lt_error("out of memory starting libpng");
  }
  if (setjmp(png_jmpbuf(png))) {
    lt_error("libpng: %s", c.msg);
    goto done;
  }
  png_set_write_fn(png, &c, write_bytes, flush_bytes);
  if (level >= 0) png_set_compression_level(png, level);
  png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, types[nc], PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  c.buf = malloc((size_t)(w * nc));
  if (!c.buf) png_error(png, "out of memory");
  const uint8_t *px = (const uint8_t *)lt_tensor_data(t);
  int64_t plane = h * w;
  for (int64_t y = 0; y < h; y++) {
    for (int64_t x = 0; x < w; x++)
      for (int64_t k = 0; k < nc; k++) c.buf[x * nc + k] = px[k * plane + y * w + x];
    png_write_row(png, c.buf);
  }
  png_write_end(png, info);
  *out = c.out;
  *len = c.len;
  c.out = NULL;
  rc = 0;
done:
  png_destroy_write_struct(&png, &info);
  free(c.buf);
  free(c.out);
  return rc;
}
