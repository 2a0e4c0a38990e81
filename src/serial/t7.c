/*
** t7.c — Torch7's object serialization, read from memory.
**
** Binary files hold native little-endian ints (4 bytes), longs (8, or 4 when
** written with longSize(4)), doubles, and raw chars. Ascii files hold each
** call's numbers as text separated by spaces and closed by one '\n'; chars
** are raw bytes followed by '\n' (Torch7's "auto spacing"). A reader must
** consume that one '\n' after each call, because a string may itself begin
** with white space.
**
** Every count read from the file is checked against the bytes left before
** anything is allocated for it, so a hostile file costs at most a small
** multiple of its own size.
*/
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "serial/t7.h"
#include "serial/io.h"

enum { TAG_NIL = 0, TAG_NUMBER = 1, TAG_STRING = 2, TAG_TABLE = 3, TAG_TORCH = 4,
       TAG_BOOLEAN = 5, TAG_FUNCTION = 6, TAG_LEGACY_RECUR = 7, TAG_RECUR = 8 };

static const struct { const char *stem; lt_dtype dt; } t7_types[] = {
  {"Double", LT_FLOAT64}, {"Float", LT_FLOAT32}, {"Half", LT_FLOAT16}, {"Long", LT_INT64},
  {"Int", LT_INT32}, {"Short", LT_INT16}, {"Char", LT_INT8}, {"Byte", LT_UINT8},
};

int lt_t7_tensor_class(const char *name, bool *is_storage) {
  if (strncmp(name, "torch.", 6) != 0) return -1;
  const char *s = name + 6;
  if (strncmp(s, "Cuda", 4) == 0) {
    s += 4;
    /* cutorch's float type has no stem: torch.CudaTensor / torch.CudaStorage */
    if (strcmp(s, "Tensor") == 0) { *is_storage = false; return LT_FLOAT32; }
    if (strcmp(s, "Storage") == 0) { *is_storage = true; return LT_FLOAT32; }
  }
  for (size_t i = 0; i < sizeof t7_types / sizeof t7_types[0]; i++) {
    size_t l = strlen(t7_types[i].stem);
    if (strncmp(s, t7_types[i].stem, l) != 0) continue;
    if (strcmp(s + l, "Tensor") == 0) { *is_storage = false; return t7_types[i].dt; }
    if (strcmp(s + l, "Storage") == 0) { *is_storage = true; return t7_types[i].dt; }
  }
  return -1;
}

typedef struct rd {
  const unsigned char *p;
  size_t n, pos;
  bool ascii;
  int long_size;
  int depth;
  const char *what;
  const lt_t7_options *opt;
  lt_t7_doc *doc;
} rd;

static size_t left(const rd *r) { return r->n - r->pos; }

static int truncated(rd *r, const char *item, uint64_t need) {
  return lt_error("%s is truncated (%s needs %llu bytes at byte %zu, %zu left)", r->what, item,
                  (unsigned long long)need, r->pos, left(r));
}

/* ---- primitive reads ---- */

/* ascii: the next white-space separated token into tok (NUL-terminated) */
static int token(rd *r, char *tok, size_t cap, const char *item) {
  while (r->pos < r->n && isspace(r->p[r->pos])) r->pos++;
  size_t k = 0;
  while (r->pos < r->n && !isspace(r->p[r->pos])) {
    if (k + 1 >= cap) return lt_error("%s is corrupt (%s at byte %zu is not a number)", r->what, item, r->pos);
    tok[k++] = (char)r->p[r->pos++];
  }
  if (k == 0) return truncated(r, item, 1);
  tok[k] = 0;
  return 0;
}

/* ascii auto spacing: one '\n' closes each call */
static void end_call(rd *r) {
  if (r->ascii && r->pos < r->n && r->p[r->pos] == '\n') r->pos++;
}

static int get_i64_text(rd *r, int64_t *v, const char *item) {
  char tok[64], *e;
  if (token(r, tok, sizeof tok, item) < 0) return -1;
  errno = 0;
  long long x = strtoll(tok, &e, 10);
  if (*e != 0 || errno) return lt_error("%s is corrupt (%s '%s' at byte %zu is not an integer)", r->what, item, tok, r->pos);
  *v = x;
  return 0;
}

static int get_f64_text(rd *r, double *v, const char *item) {
  char tok[64], *e;
  if (token(r, tok, sizeof tok, item) < 0) return -1;
  *v = strtod(tok, &e);
  if (*e != 0) return lt_error("%s is corrupt (%s '%s' at byte %zu is not a number)", r->what, item, tok, r->pos);
  return 0;
}

static int get_int(rd *r, int32_t *v, const char *item) {
  if (r->ascii) {
    int64_t x;
    if (get_i64_text(r, &x, item) < 0) return -1;
    if (x < INT32_MIN || x > INT32_MAX) return lt_error("%s is corrupt (%s %lld is out of range)", r->what, item, (long long)x);
    *v = (int32_t)x;
    end_call(r);
    return 0;
  }
  if (left(r) < 4) return truncated(r, item, 4);
  *v = (int32_t)lt_io_le32(r->p + r->pos);
  r->pos += 4;
  return 0;
}

/* n longs in one call */
static int get_longs(rd *r, int64_t *v, int n, const char *item) {
  for (int i = 0; i < n; i++) {
    if (r->ascii) {
      if (get_i64_text(r, &v[i], item) < 0) return -1;
    } else if (r->long_size == 4) {
      if (left(r) < 4) return truncated(r, item, 4);
      v[i] = (int32_t)lt_io_le32(r->p + r->pos);
      r->pos += 4;
    } else {
      if (left(r) < 8) return truncated(r, item, 8);
      v[i] = (int64_t)lt_io_le64(r->p + r->pos);
      r->pos += 8;
    }
  }
  if (n > 0) end_call(r);
  return 0;
}

static int get_double(rd *r, double *v, const char *item) {
  if (r->ascii) {
    if (get_f64_text(r, v, item) < 0) return -1;
    end_call(r);
    return 0;
  }
  if (left(r) < 8) return truncated(r, item, 8);
  uint64_t u = lt_io_le64(r->p + r->pos);
  memcpy(v, &u, 8);
  r->pos += 8;
  return 0;
}

/* raw chars (both formats), borrowed from the buffer */
static int get_chars(rd *r, size_t n, const char **s, const char *item) {
  if (left(r) < n) return truncated(r, item, n);
  *s = (const char *)r->p + r->pos;
  r->pos += n;
  if (n > 0) end_call(r);
  return 0;
}

/* a length-prefixed string (writeInt(#s); writeChar(s)) */
static int get_string(rd *r, const char **s, size_t *len, const char *item) {
  int32_t n;
  if (get_int(r, &n, item) < 0) return -1;
  if (n < 0) return lt_error("%s is corrupt (%s has negative length %d at byte %zu)", r->what, item, n, r->pos);
  *len = (size_t)n;
  return get_chars(r, (size_t)n, s, item);
}

/* ---- the reference index ---- */

static int32_t map_find(lt_t7_doc *d, int32_t key) {
  if (!d->hcap) return -1;
  for (uint32_t i = ((uint32_t)key * 2654435761u) & (d->hcap - 1);; i = (i + 1) & (d->hcap - 1)) {
    if (d->hslot[i] < 0) return -1;
    if (d->hkey[i] == key) return d->hslot[i];
  }
}

static int map_put(lt_t7_doc *d, int32_t key, int32_t slot) {
  if ((uint32_t)(d->nobjs + 1) * 2 > d->hcap) {
    uint32_t nc = d->hcap ? d->hcap * 2 : 64;
    int32_t *nk = (int32_t *)malloc(nc * sizeof(int32_t)), *ns = (int32_t *)malloc(nc * sizeof(int32_t));
    if (!nk || !ns) { free(nk); free(ns); return lt_error("out of memory"); }
    for (uint32_t i = 0; i < nc; i++) ns[i] = -1;
    for (uint32_t i = 0; i < d->hcap; i++) {
      if (d->hslot[i] < 0) continue;
      uint32_t j = ((uint32_t)d->hkey[i] * 2654435761u) & (nc - 1);
      while (ns[j] >= 0) j = (j + 1) & (nc - 1);
      nk[j] = d->hkey[i];
      ns[j] = d->hslot[i];
    }
    free(d->hkey); free(d->hslot);
    d->hkey = nk; d->hslot = ns; d->hcap = nc;
  }
  uint32_t i = ((uint32_t)key * 2654435761u) & (d->hcap - 1);
  while (d->hslot[i] >= 0) i = (i + 1) & (d->hcap - 1);
  d->hkey[i] = key;
  d->hslot[i] = slot;
  return 0;
}

static int32_t new_obj(rd *r, int32_t index, uint8_t kind) {
  lt_t7_doc *d = r->doc;
  if (d->nobjs == d->cap) {
    if (d->cap >= INT32_MAX / 2) return lt_error("%s has too many objects", r->what);
    int32_t nc = d->cap ? d->cap * 2 : 16;
    lt_t7_object *no = (lt_t7_object *)realloc(d->objs, (size_t)nc * sizeof(lt_t7_object));
    if (!no) return lt_error("out of memory reading %s", r->what);
    d->objs = no;
    d->cap = nc;
  }
  int32_t slot = d->nobjs;
  if (map_put(d, index, slot) < 0) return -1;
  memset(&d->objs[slot], 0, sizeof(lt_t7_object));
  d->objs[slot].kind = kind;
  d->objs[slot].storage_obj = -1;
  d->nobjs++;
  return slot;
}

/* ---- objects ---- */

static int read_value(rd *r, lt_t7_value *out);

static int read_storage(rd *r, int32_t slot, lt_dtype dt) {
  int64_t size;
  if (get_longs(r, &size, 1, "a storage size") < 0) return -1;
  if (size < 0) return lt_error("%s is corrupt (negative storage size %lld at byte %zu)", r->what, (long long)size, r->pos);
  size_t es = lt_dtype_size(dt);
  bool raw = dt == LT_UINT8 || dt == LT_INT8;
  /* the fewest bytes `size` elements can take in this file */
  if ((uint64_t)size > left(r)) return truncated(r, "a storage's data", (uint64_t)size);
  uint64_t need;
  if (!r->ascii) need = (uint64_t)size * (uint64_t)(dt == LT_INT64 ? (size_t)r->long_size : es);
  else need = raw ? (uint64_t)size : (uint64_t)size * 2 - (size > 0);
  if (need > left(r)) return truncated(r, "a storage's data", need);
  lt_tensor *t = lt_tensor_new(dt, lt_device_cpu(), 1, &size);
  if (!t) return -1;
  r->doc->objs[slot].tensor = t;
  void *dst = lt_tensor_data(t);
  if (size == 0) return 0;
  if (raw) {
    memcpy(dst, r->p + r->pos, (size_t)size);
    r->pos += (size_t)size;
    end_call(r);
    return 0;
  }
  if (!r->ascii) {
    if (dt == LT_INT64 && r->long_size == 4) {
      for (int64_t i = 0; i < size; i++) ((int64_t *)dst)[i] = (int32_t)lt_io_le32(r->p + r->pos + 4 * (size_t)i);
    } else {
      memcpy(dst, r->p + r->pos, (size_t)need);
    }
    r->pos += (size_t)need;
    return 0;
  }
  for (int64_t i = 0; i < size; i++) {
    if (lt_dtype_is_float(dt)) {
      double v;
      if (get_f64_text(r, &v, "a storage element") < 0) return -1;
      lt_dtype_store_double(dt, (char *)dst + (size_t)i * es, v);
    } else {
      int64_t v;
      if (get_i64_text(r, &v, "a storage element") < 0) return -1;
      lt_dtype_store_int64(dt, (char *)dst + (size_t)i * es, v);
    }
  }
  end_call(r);
  return 0;
}

static int read_tensor(rd *r, int32_t slot, lt_dtype dt) {
  int32_t nd;
  if (get_int(r, &nd, "a tensor's dimension count") < 0) return -1;
  if (nd < 0 || nd > LT_MAX_DIMS)
    return lt_error("%s is corrupt (a tensor with %d dimensions at byte %zu; at most %d)", r->what, nd, r->pos, LT_MAX_DIMS);
  int64_t sizes[LT_MAX_DIMS], strides[LT_MAX_DIMS], offset;
  if (get_longs(r, sizes, nd, "a tensor's sizes") < 0 || get_longs(r, strides, nd, "a tensor's strides") < 0 ||
      get_longs(r, &offset, 1, "a tensor's offset") < 0)
    return -1;
  lt_t7_value sv;
  if (read_value(r, &sv) < 0) return -1;
  lt_t7_object *o = &r->doc->objs[slot];
  lt_tensor *st = NULL;
  if (sv.kind == LT_T7_OBJ) {
    lt_t7_object *so = &r->doc->objs[sv.obj];
    if (so->kind != LT_T7_STORAGE || !so->tensor)
      return lt_error("%s is corrupt (a %s's storage is not a storage)", r->what, o->class_name);
    if (so->tensor->dtype != dt)
      return lt_error("%s is corrupt (a %s over a %s)", r->what, o->class_name, so->class_name);
    st = so->tensor;
    o->storage_obj = sv.obj;
  } else if (sv.kind != LT_T7_NIL) {
    return lt_error("%s is corrupt (a %s's storage is not a storage)", r->what, o->class_name);
  }
  /* Torch7's empty tensor has no dimensions; lutorch's has one of size 0 */
  if (nd == 0) { nd = 1; sizes[0] = 0; strides[0] = 1; }
  uint64_t numel = 1, last = 0;
  for (int i = 0; i < nd; i++) {
    if (sizes[i] < 0 || strides[i] < 0)
      return lt_error("%s is corrupt (a %s with a negative size or stride)", r->what, o->class_name);
    if (lt_io_mul_ok(numel, (uint64_t)sizes[i], &numel) < 0 || numel > (uint64_t)INT64_MAX)
      return lt_error("%s is corrupt (a %s whose element count overflows)", r->what, o->class_name);
  }
  if (numel > 0) {
    if (offset < 1) return lt_error("%s is corrupt (a %s with storage offset %lld)", r->what, o->class_name, (long long)offset);
    last = (uint64_t)offset - 1;
    for (int i = 0; i < nd; i++) {
      uint64_t span;
      if (lt_io_mul_ok((uint64_t)(sizes[i] - 1), (uint64_t)strides[i], &span) < 0 || lt_io_add_ok(last, span, &last) < 0)
        return lt_error("%s is corrupt (a %s whose extent overflows)", r->what, o->class_name);
    }
    if (!st || last >= (uint64_t)st->numel)
      return lt_error("%s is corrupt (a %s reaches element %llu of a storage of %lld)", r->what, o->class_name,
                      (unsigned long long)last + 1, st ? (long long)st->numel : 0LL);
    o->tensor = lt_tensor_new_view(st->storage, dt, offset - 1, nd, sizes, strides);
  } else {
    o->tensor = lt_tensor_new(dt, lt_device_cpu(), nd, sizes);
  }
  return o->tensor ? 0 : -1;
}

static int read_torch(rd *r, int32_t index, lt_t7_value *out) {
  const char *v, *c;
  size_t vl, cl;
  if (get_string(r, &v, &vl, "a class version") < 0) return -1;
  int version = 0;
  if (vl >= 2 && v[0] == 'V' && v[1] == ' ') {
    char num[32];
    size_t k = vl - 2 < sizeof num - 1 ? vl - 2 : sizeof num - 1;
    memcpy(num, v + 2, k);
    num[k] = 0;
    version = atoi(num);
    if (get_string(r, &c, &cl, "a class name") < 0) return -1;
  } else {
    c = v; cl = vl;          /* written before Torch7 versioned its classes */
  }
  if (cl == 0 || cl > 255 || memchr(c, 0, cl))
    return lt_error("%s is corrupt (a class name of %zu bytes at byte %zu)", r->what, cl, r->pos);
  char name[256];
  memcpy(name, c, cl);
  name[cl] = 0;
  bool is_storage = false;
  int dt = lt_t7_tensor_class(name, &is_storage);
  if (dt < 0 && !(r->opt->class_ok && r->opt->class_ok(name, r->opt->ctx)))
    return lt_error("%s holds an object of class '%s', which has no lutorch equivalent", r->what, name);
  int32_t slot = new_obj(r, index, dt < 0 ? LT_T7_CLASS : is_storage ? LT_T7_STORAGE : LT_T7_TENSOR);
  if (slot < 0) return -1;
  out->kind = LT_T7_OBJ;
  out->obj = slot;
  lt_t7_object *o = &r->doc->objs[slot];
  o->version = version;
  if (!(o->class_name = strdup(name))) return lt_error("out of memory");
  if (dt >= 0) return is_storage ? read_storage(r, slot, (lt_dtype)dt) : read_tensor(r, slot, (lt_dtype)dt);
  lt_t7_value f;
  if (read_value(r, &f) < 0) return -1;
  r->doc->objs[slot].fields = f;
  return 0;
}

static int read_table(rd *r, int32_t index, lt_t7_value *out) {
  int32_t n;
  if (get_int(r, &n, "a table size") < 0) return -1;
  /* each entry is at least two type tags */
  uint64_t min = r->ascii ? 4 : 8;
  if (n < 0 || (uint64_t)n * min > left(r) + (r->ascii ? 1 : 0))
    return lt_error("%s is corrupt (a table of %d entries at byte %zu, with %zu bytes left)", r->what, n, r->pos, left(r));
  int32_t slot = new_obj(r, index, LT_T7_TABLE);
  if (slot < 0) return -1;
  out->kind = LT_T7_OBJ;
  out->obj = slot;
  lt_t7_value *k = (lt_t7_value *)calloc(n ? (size_t)n : 1, sizeof(lt_t7_value));
  lt_t7_value *v = (lt_t7_value *)calloc(n ? (size_t)n : 1, sizeof(lt_t7_value));
  r->doc->objs[slot].keys = k;
  r->doc->objs[slot].vals = v;
  if (!k || !v) return lt_error("out of memory reading %s", r->what);
  for (int32_t i = 0; i < n; i++) {
    /* the arrays stay put: only doc->objs moves as objects are added */
    if (read_value(r, &k[i]) < 0 || read_value(r, &v[i]) < 0) return -1;
    r->doc->objs[slot].n = i + 1;
  }
  return 0;
}

static int read_value(rd *r, lt_t7_value *out) {
  int32_t tag;
  memset(out, 0, sizeof *out);
  size_t at = r->pos;
  if (get_int(r, &tag, "a type tag") < 0) return -1;
  switch (tag) {
    case TAG_NIL: out->kind = LT_T7_NIL; return 0;
    case TAG_NUMBER: out->kind = LT_T7_NUMBER; return get_double(r, &out->num, "a number");
    case TAG_BOOLEAN: {
      int32_t b;
      if (get_int(r, &b, "a boolean") < 0) return -1;
      out->kind = LT_T7_BOOLEAN;
      out->boolean = b == 1;
      return 0;
    }
    case TAG_STRING:
      out->kind = LT_T7_STRING;
      return get_string(r, &out->str, &out->len, "a string");
    case TAG_TABLE: case TAG_TORCH: {
      int32_t index;
      if (get_int(r, &index, "a reference index") < 0) return -1;
      int32_t slot = map_find(r->doc, index);
      if (slot >= 0) { out->kind = LT_T7_OBJ; out->obj = slot; return 0; }
      if (r->depth >= LT_T7_MAX_DEPTH)
        return lt_error("%s nests tables or objects more than %d deep (at byte %zu)", r->what, LT_T7_MAX_DEPTH, at);
      r->depth++;
      int rc = tag == TAG_TABLE ? read_table(r, index, out) : read_torch(r, index, out);
      r->depth--;
      return rc;
    }
    case TAG_FUNCTION: case TAG_LEGACY_RECUR: case TAG_RECUR:
      return lt_error("%s holds a Lua function (byte %zu); lutorch never loads code from a file", r->what, at);
    default:
      return lt_error("%s is corrupt (unknown type tag %d at byte %zu)", r->what, tag, at);
  }
}

void lt_t7_doc_free(lt_t7_doc *d) {
  for (int32_t i = 0; i < d->nobjs; i++) {
    lt_t7_object *o = &d->objs[i];
    free(o->class_name);
    free(o->keys);
    free(o->vals);
    lt_tensor_release(o->tensor);
  }
  free(d->objs);
  free(d->hkey);
  free(d->hslot);
  free(d->buf);
  memset(d, 0, sizeof *d);
}

int lt_t7_parse(unsigned char *buf, size_t len, const lt_t7_options *opt, lt_t7_doc *doc, const char *what) {
  memset(doc, 0, sizeof *doc);
  doc->buf = buf;
  doc->len = len;
  rd r = {buf, len, 0, false, opt->long_size == 4 ? 4 : 8, 0, what, opt, doc};
  if (opt->format < 0) {
    /* a binary file starts with a 4-byte tag 0..8; an ascii one with its digit */
    r.ascii = len > 0 && (isdigit(buf[0]) || isspace(buf[0]) || buf[0] == '-');
  } else {
    r.ascii = opt->format == 1;
  }
  if (len == 0) { lt_error("%s is empty", what); goto fail; }
  if (read_value(&r, &doc->root) < 0) goto fail;
  while (r.ascii && r.pos < r.n && isspace(r.p[r.pos])) r.pos++;
  if (r.pos != r.n) {
    lt_error("%s has %zu bytes after its object (at byte %zu)%s", what, r.n - r.pos, r.pos,
             r.ascii ? "" : " (an ascii file read as binary?)");
    goto fail;
  }
  return 0;
fail:
  lt_t7_doc_free(doc);
  return -1;
}

int lt_t7_load(const char *path, const lt_t7_options *opt, lt_t7_doc *doc) {
  char what[512];
  snprintf(what, sizeof what, "'%s'", path);
  size_t len;
  memset(doc, 0, sizeof *doc);
  unsigned char *buf = lt_io_read_file(path, &len, 0);
  if (!buf) return -1;
  return lt_t7_parse(buf, len, opt, doc, what);
}
