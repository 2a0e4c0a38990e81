/*
** jpeg.c — JPEG through libjpeg-turbo, from and to memory.
**
** libjpeg's fatal errors call error_exit, which here longjmps back to the
** decoder or encoder with the library's message; the cleanup path destroys
** the codec object and frees the pixel buffer on both outcomes. libjpeg
** treats a truncated stream as a warning and pads the picture with gray:
** here that warning (and "corrupt data: premature end of segment") is an
** error, since a half-gray picture would be a silently wrong answer.
*/
#include <stdio.h>
#include <jpeglib.h>
#include <jerror.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "serial/image.h"

typedef struct jpeg_ctx {
  struct jpeg_error_mgr pub;   /* first: libjpeg's cinfo->err points here */
  jmp_buf jb;
  char msg[JMSG_LENGTH_MAX];
  unsigned char *buf;          /* decoding: interleaved pixels; encoding: one row */
  unsigned char *out;          /* encoding: libjpeg's output buffer (malloc'd by jpeg_mem_dest) */
  unsigned long len;
} jpeg_ctx;

static void on_error(j_common_ptr cinfo) {
  jpeg_ctx *c = (jpeg_ctx *)cinfo->err;
  (*cinfo->err->format_message)(cinfo, c->msg);
  longjmp(c->jb, 1);
}

/* warnings (level -1): the ones that mean the pixels are not all there are fatal */
static void on_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;
  int code = cinfo->err->msg_code;
  if (code == JWRN_JPEG_EOF || code == JWRN_HIT_MARKER) on_error(cinfo);
  cinfo->err->num_warnings++;
}

/* the most samples one byte of JPEG data is allowed to give: a flat baseline
** picture costs about a bit per 8x8 block and channel; this leaves a wide
** margin over what encoders produce (progressive end-of-band runs could claim
** more, and a file that does is refused rather than allocated for) */
#define JPEG_MAX_RATIO 4096

lt_tensor *lt_image_decode_jpeg(const unsigned char *p, size_t n, int channels, const char *what) {
  if (lt_image_sniff(p, n) != LT_IMAGE_JPEG) return lt_error_null("%s is not a JPEG file (bad signature)", what);
  if (channels < 0 || channels > 4) return lt_error_null("%s: channels must be 0..4, got %d", what, channels);
  struct jpeg_decompress_struct cinfo;
  jpeg_ctx c;
  memset(&c, 0, sizeof c);
  lt_tensor *volatile result = NULL;
  cinfo.err = jpeg_std_error(&c.pub);
  c.pub.error_exit = on_error;
  c.pub.emit_message = on_message;
  jpeg_create_decompress(&cinfo);
  if (setjmp(c.jb)) {
    lt_error("%s is not a valid JPEG: %s", what, c.msg);
    goto done;
  }
  jpeg_mem_src(&cinfo, p, (unsigned long)n);
  jpeg_read_header(&cinfo, TRUE);
  if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
    lt_error("%s is a CMYK JPEG, which is not supported", what);
    goto done;
  }
  if (cinfo.num_components != 1 && cinfo.num_components != 3) {
    lt_error("%s has %d components (1 or 3 are supported)", what, cinfo.num_components);
    goto done;
  }
  if (lt_image_check_size(cinfo.image_width, cinfo.image_height, cinfo.num_components, n, JPEG_MAX_RATIO,
                          what) < 0)
    goto done;
  cinfo.out_color_space = cinfo.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  cinfo.mem->max_memory_to_use = (long)1 << 30;
  jpeg_start_decompress(&cinfo);
  int nc = cinfo.output_components;
  size_t w = cinfo.output_width, h = cinfo.output_height, row = w * nc;
  c.buf = malloc(row * h);
  if (!c.buf) {
    lt_error("%s: out of memory for %zu x %zu pixels", what, w, h);
    goto done;
  }
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW r = c.buf + (size_t)cinfo.output_scanline * row;
    jpeg_read_scanlines(&cinfo, &r, 1);
  }
  jpeg_finish_decompress(&cinfo);
  result = lt_image_planar(c.buf, (int64_t)h, (int64_t)w, nc, 1, channels ? channels : nc);
done:
  jpeg_destroy_decompress(&cinfo);
  free(c.buf);
  return result;
}

int lt_image_encode_jpeg(const lt_tensor *t, int quality, unsigned char **out, size_t *len) {
  if (t->ndim != 3 || lt_tensor_dtype(t) != LT_UINT8 || !lt_tensor_is_contiguous(t))
    return lt_error("JPEG encoding takes a contiguous uint8 [C, H, W] tensor");
  int64_t nc = t->sizes[0], h = t->sizes[1], w = t->sizes[2];
  if (nc != 1 && nc != 3)
    return lt_error("JPEG holds 1 (gray) or 3 (RGB) channels, got %lld (drop the alpha channel)",
                    (long long)nc);
  if (h < 1 || w < 1 || h > LT_IMAGE_MAX_SIDE || w > LT_IMAGE_MAX_SIDE)
    return lt_error("%lld x %lld is not a size JPEG can have (1..%d a side)", (long long)w,
                    (long long)h, LT_IMAGE_MAX_SIDE);
  if (quality < 1 || quality > 100) return lt_error("JPEG quality must be 1..100, got %d", quality);
  struct jpeg_compress_struct cinfo;
  jpeg_ctx c;
  memset(&c, 0, sizeof c);
  int volatile rc = -1;
  cinfo.err = jpeg_std_error(&c.pub);
  c.pub.error_exit = on_error;
  jpeg_create_compress(&cinfo);
  if (setjmp(c.jb)) {
    lt_error("libjpeg: %s", c.msg);
    goto done;
  }
  jpeg_mem_dest(&cinfo, &c.out, &c.len);
  cinfo.image_width = (JDIMENSION)w;
  cinfo.image_height = (JDIMENSION)h;
  cinfo.input_components = (int)nc;
  cinfo.in_color_space = nc == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  c.buf = malloc((size_t)(w * nc));
  if (!c.buf) {
    lt_error("out of memory encoding a JPEG");
    goto done;
  }
  const uint8_t *px = (const uint8_t *)lt_tensor_data(t);
  int64_t plane = h * w;
  while (cinfo.next_scanline < cinfo.image_height) {
    int64_t y = cinfo.next_scanline;
    for (int64_t x = 0; x < w; x++)
      for (int64_t k = 0; k < nc; k++) c.buf[x * nc + k] = px[k * plane + y * w + x];
    JSAMPROW r = c.buf;
    jpeg_write_scanlines(&cinfo, &r, 1);
  }
  jpeg_finish_compress(&cinfo);
  *out = c.out;               /* jpeg_mem_dest's buffer is malloc'd: the caller frees it */
  *len = c.len;
  c.out = NULL;
  rc = 0;
done:
  jpeg_destroy_compress(&cinfo);
  free(c.buf);
  free(c.out);
  return rc;
}
