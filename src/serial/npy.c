/*
** npy.c — NumPy's .npy format. The header is a Python dict literal; it is
** parsed by a small recursive reader of exactly the literals numpy writes
** (strings, True/False, tuples of integers), never by searching for keys.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "serial/npy.h"
#include "core/backend.h"

static int host_little(void) { const uint16_t one = 1; return *(const unsigned char *)&one == 1; }

static void byteswap(void *p, int64_t n, size_t es) {
  unsigned char *b = (unsigned char *)p;
  if (es <= 1) return;
  for (int64_t i = 0; i < n; i++, b += es)
    for (size_t k = 0; k < es / 2; k++) { unsigned char t = b[k]; b[k] = b[es - 1 - k]; b[es - 1 - k] = t; }
}

int lt_npy_preamble(const unsigned char *p, size_t n, size_t *pre_len, size_t *hdr_len, const char *what) {
  if (n < 8 || memcmp(p, "\x93NUMPY", 6) != 0)
    return lt_error("%s is not a .npy file (bad magic)", what);
  int major = p[6];
  if (major != 1 && major != 2 && major != 3)
    return lt_error("%s has unsupported .npy version %d.%d", what, major, p[7]);
  size_t pre = major == 1 ? 10 : 12;
  if (n < pre) return lt_error("%s is truncated (the preamble needs %zu bytes, %zu left)", what, pre, n);
  size_t h = major == 1 ? (size_t)(p[8] | (p[9] << 8)) : (size_t)lt_io_le32(p + 8);
  if (h == 0) return lt_error("%s has an empty header", what);
  if (h > LT_NPY_MAX_HEADER) return lt_error("%s has an absurd header length (%zu bytes)", what, h);
  *pre_len = pre;
  *hdr_len = h;
  return 0;
}

/* ---- the dict literal ---- */

typedef struct lit { const char *p, *end; const char *what; } lit;

static void ws(lit *l) { while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' || *l->p == '\r')) l->p++; }
static int peek(lit *l) { ws(l); return l->p < l->end ? (unsigned char)*l->p : -1; }
static int expect(lit *l, char c) {
  if (peek(l) != c) return lt_error("%s has a malformed header (expected '%c')", l->what, c);
  l->p++;
  return 0;
}

/* a quoted string without escapes (numpy's keys and descr never need them) */
static int str(lit *l, char *out, size_t cap) {
  int q = peek(l);
  if (q != '\'' && q != '"') return lt_error("%s has a malformed header (expected a string)", l->what);
  const char *s = ++l->p;
  while (l->p < l->end && *l->p != q) {
    if (*l->p == '\\') return lt_error("%s has a malformed header (escape in a string)", l->what);
    l->p++;
  }
  if (l->p >= l->end) return lt_error("%s has a malformed header (unterminated string)", l->what);
  size_t n = (size_t)(l->p - s);
  l->p++;
  if (n >= cap) return lt_error("%s has a malformed header (string too long)", l->what);
  memcpy(out, s, n);
  out[n] = 0;
  return 0;
}

static int word(lit *l, const char *w) {
  size_t n = strlen(w);
  ws(l);
  if ((size_t)(l->end - l->p) >= n && memcmp(l->p, w, n) == 0) { l->p += n; return 1; }
  return 0;
}

static int shape(lit *l, lt_npy_info *info) {
  if (expect(l, '(') < 0) return -1;
  info->ndim = 0;
  for (;;) {
    int c = peek(l);
    if (c == ')') { l->p++; break; }
    if (c < '0' || c > '9') return lt_error("%s has a malformed shape", l->what);
    uint64_t v = 0;
    while (l->p < l->end && *l->p >= '0' && *l->p <= '9') {
      if (v > (uint64_t)INT64_MAX / 10) return lt_error("%s has a dimension too large", l->what);
      v = v * 10 + (uint64_t)(*l->p++ - '0');
    }
    if (l->p < l->end && (*l->p == 'L' || *l->p == 'l')) l->p++;   /* Python 2 longs */
    if (v > (uint64_t)INT64_MAX) return lt_error("%s has a dimension too large", l->what);
    if (info->ndim == LT_MAX_DIMS) return lt_error("%s has more than %d dimensions", l->what, LT_MAX_DIMS);
    info->sizes[info->ndim++] = (int64_t)v;
    c = peek(l);
    if (c == ',') l->p++;
    else if (c != ')') return lt_error("%s has a malformed shape", l->what);
  }
  return 0;
}

static int descr_dtype(lt_npy_info *info, const char *what) {
  const char *d = info->descr;
  char order = '=';
  if (*d == '<' || *d == '>' || *d == '|' || *d == '=') order = *d++;
  char kind = *d ? *d++ : 0;
  const char *why = kind == 'c' ? " (complex numbers: c8 and c16 only)" : kind == 'O' ? " (Python objects)" :
                    (kind == 'S' || kind == 'U' || kind == 'a') ? " (strings)" :
                    (kind == 'M' || kind == 'm') ? " (dates)" : kind == 'V' ? " (raw records)" : "";
  char *e;
  long size = strtol(d, &e, 10);
  if (e == d || *e != 0 || size <= 0 || size > 16)
    return lt_error("%s has dtype '%s', which lutorch cannot hold%s", what, info->descr, why);
  int little = host_little();
  info->swap = size > 1 && ((order == '>' && little) || (order == '<' && !little));
  info->src_kind = kind;
  info->src_size = (int)size;
  int dt = -1;
  switch (kind) {
    case 'f': dt = size == 2 ? LT_FLOAT16 : size == 4 ? LT_FLOAT32 : size == 8 ? LT_FLOAT64 : -1; break;
    case 'i': dt = size == 1 ? LT_INT8 : size == 2 ? LT_INT16 : size == 4 ? LT_INT32 : size == 8 ? LT_INT64 : -1; break;
    /* lutorch has no uint16/32/64: widen to the next signed type that holds every value */
    case 'u': dt = size == 1 ? LT_UINT8 : size == 2 ? LT_INT32 : (size == 4 || size == 8) ? LT_INT64 : -1; break;
    case 'b': case '?': dt = size == 1 ? LT_BOOL : -1; break;
    case 'c': dt = size == 8 ? LT_COMPLEX64 : size == 16 ? LT_COMPLEX128 : -1; break;
    default: break;
  }
  if (dt < 0) return lt_error("%s has dtype '%s', which lutorch cannot hold%s", what, info->descr, why);
  info->dtype = (lt_dtype)dt;
  return 0;
}

int lt_npy_parse_header(const char *text, size_t n, lt_npy_info *info, const char *what) {
  lit l = {text, text + n, what};
  int have_descr = 0, have_fo = 0, have_shape = 0;
  memset(info, 0, sizeof *info);
  if (expect(&l, '{') < 0) return -1;
  for (;;) {
    if (peek(&l) == '}') { l.p++; break; }
    char key[32];
    if (str(&l, key, sizeof key) < 0 || expect(&l, ':') < 0) return -1;
    if (strcmp(key, "descr") == 0) {
      if (peek(&l) == '[') return lt_error("%s has a structured dtype (record arrays are not supported)", what);
      if (str(&l, info->descr, sizeof info->descr) < 0) return -1;
      have_descr++;
    } else if (strcmp(key, "fortran_order") == 0) {
      if (word(&l, "True")) info->fortran = true;
      else if (word(&l, "False")) info->fortran = false;
      else return lt_error("%s has a malformed header (fortran_order is not True or False)", what);
      have_fo++;
    } else if (strcmp(key, "shape") == 0) {
      if (shape(&l, info) < 0) return -1;
      have_shape++;
    } else {
      return lt_error("%s has an unexpected header key '%s'", what, key);
    }
    int c = peek(&l);
    if (c == ',') l.p++;
    else if (c != '}') return lt_error("%s has a malformed header (expected ',' or '}')", what);
  }
  ws(&l);
  while (l.p < l.end && *l.p == 0) l.p++;   /* some writers pad with NULs */
  ws(&l);
  if (l.p != l.end) return lt_error("%s has a malformed header (text after the dict)", what);
  if (have_descr != 1 || have_fo != 1 || have_shape != 1)
    return lt_error("%s has a malformed header (needs descr, fortran_order and shape once each)", what);
  if (descr_dtype(info, what) < 0) return -1;
  uint64_t numel = 1;
  for (int i = 0; i < info->ndim; i++)
    if (lt_io_mul_ok(numel, (uint64_t)info->sizes[i], &numel) < 0 || numel > (uint64_t)INT64_MAX)
      return lt_error("%s has a shape whose element count overflows", what);
  info->numel = (int64_t)numel;
  if (lt_io_mul_ok(numel, (uint64_t)info->src_size, &info->data_bytes) < 0 || info->data_bytes > (uint64_t)INT64_MAX)
    return lt_error("%s has a shape whose byte count overflows", what);
  return 0;
}

/* ---- raw bytes -> tensor ---- */

static bool direct(const lt_npy_info *info) { return (size_t)info->src_size == lt_dtype_size(info->dtype); }

/* the shape the bytes are laid out in: reversed for Fortran order */
static void file_shape(const lt_npy_info *info, int64_t *rs) {
  for (int i = 0; i < info->ndim; i++) rs[i] = info->fortran ? info->sizes[info->ndim - 1 - i] : info->sizes[i];
}

lt_tensor *lt_npy_new_raw(const lt_npy_info *info) {
  if (direct(info)) {
    int64_t rs[LT_MAX_DIMS];
    file_shape(info, rs);
    return lt_tensor_new(info->dtype, lt_device_cpu(), info->ndim, rs);
  }
  int64_t nb = (int64_t)info->data_bytes;
  return lt_tensor_new(LT_UINT8, lt_device_cpu(), 1, &nb);
}

static uint64_t load_uint(const unsigned char *b, int size, bool swap) {
  uint64_t v = 0;
  /* bytes in the file's order; native order is little-endian on every host we build for */
  for (int k = 0; k < size; k++) {
    int idx = swap ? size - 1 - k : k;
    v |= (uint64_t)b[idx] << (8 * (host_little() ? k : size - 1 - k));
  }
  return v;
}

lt_tensor *lt_npy_finish(lt_tensor *raw, const lt_npy_info *info, const char *what) {
  lt_tensor *t = raw;
  int64_t rs[LT_MAX_DIMS];
  file_shape(info, rs);
  if (direct(info)) {
    /* a complex element is two reals, each in the file's byte order */
    if (info->swap && lt_dtype_is_complex(info->dtype)) byteswap(lt_tensor_data(t), 2 * t->numel, lt_dtype_size(info->dtype) / 2);
    else if (info->swap) byteswap(lt_tensor_data(t), t->numel, lt_dtype_size(info->dtype));
    if (info->dtype == LT_BOOL) {
      /* a C bool must hold 0 or 1; any other byte would be undefined behaviour later */
      unsigned char *b = (unsigned char *)lt_tensor_data(t);
      for (int64_t i = 0; i < t->numel; i++) b[i] = b[i] != 0;
    }
  } else {
    t = lt_tensor_new(info->dtype, lt_device_cpu(), info->ndim, rs);
    if (!t) { lt_tensor_release(raw); return NULL; }
    const unsigned char *b = (const unsigned char *)lt_tensor_data(raw);
    int sz = info->src_size;
    for (int64_t i = 0; i < t->numel; i++) {
      uint64_t v = load_uint(b + (size_t)i * (size_t)sz, sz, info->swap);
      if (info->dtype == LT_INT32) ((int32_t *)lt_tensor_data(t))[i] = (int32_t)v;
      else {
        if (v > (uint64_t)INT64_MAX) {
          lt_tensor_release(t); lt_tensor_release(raw);
          return (lt_tensor *)lt_error_null("%s holds uint64 values above 2^63-1, which int64 cannot hold", what);
        }
        ((int64_t *)lt_tensor_data(t))[i] = (int64_t)v;
      }
    }
    lt_tensor_release(raw);
  }
  if (info->fortran && info->ndim > 1) {
    int64_t cs[LT_MAX_DIMS], st[LT_MAX_DIMS];
    lt_contiguous_strides(info->ndim, rs, cs);
    for (int i = 0; i < info->ndim; i++) st[i] = cs[info->ndim - 1 - i];
    lt_tensor *v = lt_tensor_alias(t, 0, info->ndim, info->sizes, st);
    lt_tensor *c = v ? lt_tensor_clone_as(v, info->dtype) : NULL;
    lt_tensor_release(v);
    lt_tensor_release(t);
    return c;
  }
  return t;
}

lt_tensor *lt_npy_load(const char *path) {
  char what[512];
  snprintf(what, sizeof what, "'%s'", path);
  int fd;
  uint64_t size;
  if (lt_io_open_read(path, &fd, &size) < 0) return NULL;
  lt_tensor *r = NULL;
  unsigned char pre[LT_NPY_PREAMBLE_MAX];
  size_t take = size < sizeof pre ? (size_t)size : sizeof pre, pl, hl;
  if (lt_io_pread_full(fd, pre, take, 0, path) < 0) goto done;
  if (take < LT_NPY_PREAMBLE_MIN) {
    if (take < 6 || memcmp(pre, "\x93NUMPY", 6) != 0) lt_error("%s is not a .npy file (bad magic)", what);
    else lt_error("%s is truncated (the preamble needs 10 bytes, %zu left)", what, take);
    goto done;
  }
  if (lt_npy_preamble(pre, take, &pl, &hl, what) < 0) goto done;
  if (hl > size - pl) {
    lt_error("%s is truncated (the header needs %zu bytes, %llu left)", what, hl, (unsigned long long)(size - pl));
    goto done;
  }
  char *hdr = (char *)malloc(hl);
  if (!hdr) { lt_error("out of memory reading %s", what); goto done; }
  lt_npy_info info;
  int rc = lt_io_pread_full(fd, hdr, hl, pl, path) < 0 ? -1 : lt_npy_parse_header(hdr, hl, &info, what);
  free(hdr);
  if (rc < 0) goto done;
  uint64_t off = pl + hl;
  if (info.data_bytes > size - off) {
    lt_error("%s is truncated (the data needs %llu bytes, %llu left)", what,
             (unsigned long long)info.data_bytes, (unsigned long long)(size - off));
    goto done;
  }
  lt_tensor *raw = lt_npy_new_raw(&info);
  if (!raw) goto done;
  if (info.data_bytes && lt_io_pread_full(fd, lt_tensor_data(raw), (size_t)info.data_bytes, off, path) < 0) {
    lt_tensor_release(raw);
    goto done;
  }
  r = lt_npy_finish(raw, &info, what);
done:
  close(fd);
  return r;
}

/* ---- writing ---- */

static const char *descr_of(lt_dtype dt) {
  int little = host_little();
  switch (dt) {
    case LT_FLOAT64: return little ? "<f8" : ">f8";
    case LT_FLOAT32: return little ? "<f4" : ">f4";
    case LT_FLOAT16: return little ? "<f2" : ">f2";
    case LT_INT64: return little ? "<i8" : ">i8";
    case LT_INT32: return little ? "<i4" : ">i4";
    case LT_INT16: return little ? "<i2" : ">i2";
    case LT_INT8: return "|i1";
    case LT_UINT8: return "|u1";
    case LT_BOOL: return "|b1";
    case LT_COMPLEX64: return little ? "<c8" : ">c8";
    case LT_COMPLEX128: return little ? "<c16" : ">c16";
    default: return NULL;
  }
}

/* dense in Fortran order: the reversed dims are C-contiguous (size-1 dims ignored) */
static bool f_contiguous(const lt_tensor *t) {
  int64_t expect = 1;
  for (int i = 0; i < t->ndim; i++) {
    if (t->sizes[i] == 1) continue;
    if (t->strides[i] != expect) return false;
    expect *= t->sizes[i];
  }
  return true;
}

lt_tensor *lt_npy_prepare(lt_tensor *t, char *hdr, size_t *hdr_len, const char *what) {
  const char *descr = descr_of((lt_dtype)t->dtype);
  if (!descr)
    return (lt_tensor *)lt_error_null("dtype %s has no .npy equivalent (convert it, e.g. :float())", lt_dtype_name((lt_dtype)t->dtype));
  bool fortran = false;
  lt_tensor *c;
  if (lt_tensor_device(t).type != LT_DEV_CPU) { if (!(c = lt_tensor_to_host((lt_tensor *)t))) return NULL; }
  else if (lt_tensor_is_contiguous(t)) { lt_tensor_retain(t); c = t; }
  else if (t->ndim > 1 && f_contiguous(t)) { lt_tensor_retain(t); c = t; fortran = true; }
  else if (!(c = lt_tensor_contiguous(t))) return NULL;
  char dict[LT_NPY_HEADER_CAP];
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': (", descr, fortran ? "True" : "False");
  for (int i = 0; i < t->ndim; i++)
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld%s", (long long)t->sizes[i],
                  t->ndim == 1 ? "," : (i + 1 < t->ndim ? ", " : ""));
  n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
  /* numpy pads so that the data starts at a multiple of 64 and the header ends in '\n' */
  size_t total = 10 + (size_t)n + 1;
  size_t pad = (64 - total % 64) % 64;
  size_t hl = (size_t)n + pad + 1;
  memcpy(hdr, "\x93NUMPY\x01\x00", 8);
  hdr[8] = (char)(hl & 0xff);
  hdr[9] = (char)(hl >> 8);
  memcpy(hdr + 10, dict, (size_t)n);
  memset(hdr + 10 + n, ' ', pad);
  hdr[10 + n + pad] = '\n';
  *hdr_len = 10 + hl;
  return c;
}

int lt_npy_write(lt_io_sink *s, lt_tensor *t, const char *what) {
  char hdr[LT_NPY_HEADER_CAP + 128];
  size_t hl;
  lt_tensor *c = lt_npy_prepare(t, hdr, &hl, what);
  if (!c) return -1;
  int rc = lt_io_put(s, hdr, hl);
  if (rc == 0) rc = lt_io_put(s, lt_tensor_data(c), lt_npy_data_bytes(c));
  lt_tensor_release(c);
  return rc;
}

int lt_npy_save(const char *path, lt_tensor *t) {
  char what[512];
  snprintf(what, sizeof what, "'%s'", path);
  lt_io_sink s;
  if (lt_io_sink_open_file(&s, path) < 0) return -1;
  int rc = lt_npy_write(&s, t, what);
  if (rc == 0) rc = lt_io_sink_commit(&s);
  lt_io_sink_close(&s);
  return rc;
}
