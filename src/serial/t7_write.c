/*
** t7_write.c — the typed primitives of Torch7's File (writeInt, readDouble,
** writeFloat(storage), ...) over a byte buffer, in Torch7's two encodings.
**
** Binary: each element as its little-endian bytes (Torch7 wrote native
** order; every machine it ran on was little-endian; big-endian files on
** request), longs in 8 bytes or, with longSize(4), 4. Ascii: each element as text ("%d" integers, "%.9g"
** floats and halves, "%.17g" doubles), with auto spacing a ' ' between the
** elements of one call and a '\n' after the last; Byte and Char are raw
** bytes in both encodings (and get the closing '\n' too). Reading mirrors
** it: text numbers are taken like scanf takes them (white space skipped, the
** longest numeral), and one '\n' after a call is consumed.
*/
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "serial/t7.h"
#include "serial/io.h"
#include "core/error.h"

void lt_t7_bytes_free(lt_t7_bytes *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

static int reserve(lt_t7_bytes *b, size_t need) {
  if (need <= b->cap) return 0;
  size_t nc = b->cap ? b->cap : 256;
  while (nc < need) {
    if (nc > SIZE_MAX / 2) return lt_error("out of memory (a file of %zu bytes)", need);
    nc *= 2;
  }
  unsigned char *np = (unsigned char *)realloc(b->p, nc);
  if (!np) return lt_error("out of memory (a file of %zu bytes)", need);
  b->p = np;
  b->cap = nc;
  return 0;
}

int lt_t7_bytes_put(lt_t7_bytes *b, size_t *pos, const void *src, size_t n) {
  if (*pos > b->len) return lt_error("write position %zu is past the end (%zu bytes)", *pos, b->len);
  if (n > SIZE_MAX - *pos) return lt_error("out of memory (a file too large)");
  if (reserve(b, *pos + n) < 0) return -1;
  if (n) memcpy(b->p + *pos, src, n);
  *pos += n;
  if (*pos > b->len) b->len = *pos;
  return 0;
}

bool lt_t7_codec_dtype(lt_dtype dt) {
  switch (dt) {
    case LT_UINT8: case LT_INT8: case LT_INT16: case LT_INT32: case LT_INT64:
    case LT_FLOAT32: case LT_FLOAT64: case LT_FLOAT16: return true;
    default: return false;
  }
}

static bool host_little(void) {
  const uint16_t one = 1;
  return *(const unsigned char *)&one == 1;
}

/* must the bytes of each element be reversed between memory and the file? */
static bool swapped(const lt_t7_codec *c) { return host_little() == c->big_endian; }

/* n elements of es bytes from s to d, reversing each one's bytes */
static void copy_swapped(unsigned char *d, const unsigned char *s, size_t es, size_t n) {
  for (size_t i = 0; i < n * es; i += es)
    for (size_t k = 0; k < es; k++) d[i + k] = s[i + es - 1 - k];
}

/* element i as ascii text into buf */
static int format_elem(char *buf, size_t cap, lt_dtype dt, const void *data, int64_t i) {
  switch (dt) {
    case LT_FLOAT64: return snprintf(buf, cap, "%.17g", ((const double *)data)[i]);
    case LT_FLOAT32: return snprintf(buf, cap, "%.9g", (double)((const float *)data)[i]);
    case LT_FLOAT16: return snprintf(buf, cap, "%.9g", (double)lt_half_to_float(((const lt_half *)data)[i]));
    case LT_INT64: return snprintf(buf, cap, "%lld", (long long)((const int64_t *)data)[i]);
    case LT_INT32: return snprintf(buf, cap, "%d", (int)((const int32_t *)data)[i]);
    case LT_INT16: return snprintf(buf, cap, "%d", (int)((const int16_t *)data)[i]);
    default: return -1;
  }
}

int lt_t7_encode(lt_t7_bytes *b, size_t *pos, lt_dtype dt, const void *data, int64_t n, const lt_t7_codec *c) {
  if (!lt_t7_codec_dtype(dt)) return lt_error("%s has no Torch7 file type", lt_dtype_name(dt));
  if (n <= 0) return 0;
  bool raw = dt == LT_UINT8 || dt == LT_INT8;
  if (raw) {
    if (lt_t7_bytes_put(b, pos, data, (size_t)n) < 0) return -1;
  } else if (!c->ascii) {
    size_t es = lt_dtype_size(dt);
    bool narrow = dt == LT_INT64 && c->long_size == 4;
    size_t out_es = narrow ? 4 : es;
    if ((uint64_t)n > (SIZE_MAX - *pos) / out_es) return lt_error("out of memory (a file too large)");
    size_t nbytes = (size_t)n * out_es;
    if (*pos > b->len) return lt_error("write position %zu is past the end (%zu bytes)", *pos, b->len);
    if (reserve(b, *pos + nbytes) < 0) return -1;
    unsigned char *dst = b->p + *pos;
    if (narrow) {
      for (int64_t i = 0; i < n; i++) {
        uint32_t v = (uint32_t)(int32_t)((const int64_t *)data)[i];
        for (int k = 0; k < 4; k++) dst[4 * i + (c->big_endian ? 3 - k : k)] = (unsigned char)(v >> (8 * k));
      }
    } else if (!swapped(c)) {
      memcpy(dst, data, nbytes);
    } else {
      copy_swapped(dst, (const unsigned char *)data, es, (size_t)n);
    }
    *pos += nbytes;
    if (*pos > b->len) b->len = *pos;
    return 0;
  } else {
    char tmp[64];
    for (int64_t i = 0; i < n; i++) {
      int k = format_elem(tmp, sizeof tmp - 1, dt, data, i);
      if (k < 0) return lt_error("cannot format a %s", lt_dtype_name(dt));
      if (c->autospacing && i < n - 1) tmp[k++] = ' ';
      if (lt_t7_bytes_put(b, pos, tmp, (size_t)k) < 0) return -1;
    }
  }
  if (c->ascii && c->autospacing) return lt_t7_bytes_put(b, pos, "\n", 1);
  return 0;
}

/* ascii: one numeral at *pos (white space first), as scanf would take it */
static bool scan_number(const unsigned char *p, size_t len, size_t *pos, bool is_float, double *d, int64_t *i) {
  size_t at = *pos;
  while (at < len && isspace(p[at])) at++;
  char tok[80];
  size_t k = 0;
  while (at + k < len && k < sizeof tok - 1 && !isspace(p[at + k])) { tok[k] = (char)p[at + k]; k++; }
  tok[k] = 0;
  if (k == 0) { *pos = at; return false; }
  char *e;
  errno = 0;
  if (is_float) *d = strtod(tok, &e);
  else *i = strtoll(tok, &e, 10);
  if (e == tok) { *pos = at; return false; }
  *pos = at + (size_t)(e - tok);
  return true;
}

int64_t lt_t7_decode(const unsigned char *p, size_t len, size_t *pos, lt_dtype dt, void *dst, int64_t n,
                     const lt_t7_codec *c) {
  if (!lt_t7_codec_dtype(dt) || n <= 0) return 0;
  size_t left = *pos < len ? len - *pos : 0;
  int64_t got = 0;
  if (dt == LT_UINT8 || dt == LT_INT8) {
    got = (uint64_t)n < left ? n : (int64_t)left;
    memcpy(dst, p + *pos, (size_t)got);
    *pos += (size_t)got;
  } else if (!c->ascii) {
    size_t es = lt_dtype_size(dt);
    bool narrow = dt == LT_INT64 && c->long_size == 4;
    size_t in_es = narrow ? 4 : es;
    got = (uint64_t)n < left / in_es ? n : (int64_t)(left / in_es);
    const unsigned char *s = p + *pos;
    if (narrow) {
      for (int64_t i = 0; i < got; i++) {
        const unsigned char *q = s + 4 * i;
        uint32_t v = c->big_endian ? (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3]
                                   : lt_io_le32(q);
        ((int64_t *)dst)[i] = (int32_t)v;
      }
    } else if (!swapped(c)) {
      memcpy(dst, s, (size_t)got * es);
    } else {
      copy_swapped((unsigned char *)dst, s, es, (size_t)got);
    }
    *pos += (size_t)got * in_es;
  } else {
    bool is_float = lt_dtype_is_float(dt);
    size_t es = lt_dtype_size(dt);
    for (; got < n; got++) {
      double d = 0;
      int64_t v = 0;
      if (!scan_number(p, len, pos, is_float, &d, &v)) break;
      if (is_float) lt_dtype_store_double(dt, (char *)dst + (size_t)got * es, d);
      else lt_dtype_store_int64(dt, (char *)dst + (size_t)got * es, v);
    }
  }
  if (c->ascii && c->autospacing && *pos < len && p[*pos] == '\n') (*pos)++;
  return got;
}
