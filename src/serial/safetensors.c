/*
** safetensors.c — reading and writing the safetensors format with jansson.
*/
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "serial/safetensors.h"
#include "core/backend.h"
#include "serial/io.h"

static const struct { const char *name; int dtype; } st_dtypes[] = {
  {"F64", LT_FLOAT64}, {"F32", LT_FLOAT32}, {"F16", LT_FLOAT16}, {"BF16", LT_BFLOAT16},
  {"I64", LT_INT64}, {"I32", LT_INT32}, {"I16", LT_INT16}, {"I8", LT_INT8},
  {"U8", LT_UINT8}, {"BOOL", LT_BOOL}, {"C64", LT_COMPLEX64},   /* C64: two float32, as complex64 */
  /* named by the format, absent from lutorch */
  {"U16", -1}, {"U32", -1}, {"U64", -1}, {"F8_E5M2", -1}, {"F8_E4M3", -1}, {"F8_E8M0", -1},
  {"E8M0", -1}, {"F6_E2M3", -1}, {"F6_E3M2", -1}, {"F4", -1},
};
#define N_ST_DTYPES (sizeof st_dtypes / sizeof st_dtypes[0])

int lt_st_dtype_from_name(const char *name) {
  for (size_t i = 0; i < N_ST_DTYPES; i++)
    if (strcmp(st_dtypes[i].name, name) == 0) return st_dtypes[i].dtype;
  return -2;   /* not a dtype the format names */
}

const char *lt_st_dtype_name(lt_dtype dt) {
  for (size_t i = 0; i < N_ST_DTYPES; i++)
    if (st_dtypes[i].dtype == (int)dt) return st_dtypes[i].name;
  return NULL;
}

void lt_st_header_free(lt_st_header *h) {
  for (int i = 0; i < h->n; i++) free(h->entries[i].name);
  free(h->entries);
  for (int i = 0; i < h->nmeta; i++) { free(h->meta_keys[i]); free(h->meta_vals[i]); }
  free(h->meta_keys);
  free(h->meta_vals);
  memset(h, 0, sizeof *h);
}

/* a non-negative JSON integer */
static int json_u64(json_t *v, uint64_t *out) {
  if (!json_is_integer(v)) return -1;
  json_int_t i = json_integer_value(v);
  if (i < 0) return -1;
  *out = (uint64_t)i;
  return 0;
}

static int by_offset(const void *a, const void *b) {
  const lt_st_entry *x = (const lt_st_entry *)a, *y = (const lt_st_entry *)b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return 0;
}

static int parse_entry(const char *name, json_t *info, lt_st_entry *e, const char *what) {
  if (!json_is_object(info)) return lt_error("%s: entry '%s' is not an object", what, name);
  json_t *dt = json_object_get(info, "dtype"), *sh = json_object_get(info, "shape"),
         *off = json_object_get(info, "data_offsets");
  if (!json_is_string(dt) || !json_is_array(sh) || !json_is_array(off))
    return lt_error("%s: entry '%s' needs a string dtype, a shape array and a data_offsets array", what, name);
  const char *dn = json_string_value(dt);
  int d = lt_st_dtype_from_name(dn);
  if (d == -2) return lt_error("%s: tensor '%s' has unknown dtype '%s'", what, name, dn);
  if (d < 0) return lt_error("%s: tensor '%s' has dtype %s, which lutorch has no equivalent for", what, name, dn);
  e->dtype = (lt_dtype)d;
  size_t nd = json_array_size(sh);
  if (nd > LT_MAX_DIMS) return lt_error("%s: tensor '%s' has %zu dimensions, more than %d", what, name, nd, LT_MAX_DIMS);
  e->ndim = (int)nd;
  uint64_t numel = 1;
  for (size_t i = 0; i < nd; i++) {
    uint64_t s;
    if (json_u64(json_array_get(sh, i), &s) < 0)
      return lt_error("%s: tensor '%s' has a shape entry that is not a non-negative integer", what, name);
    if (lt_io_mul_ok(numel, s, &numel) < 0 || numel > (uint64_t)INT64_MAX)
      return lt_error("%s: tensor '%s' has a shape whose element count overflows", what, name);
    e->sizes[i] = (int64_t)s;
  }
  if (json_array_size(off) != 2 || json_u64(json_array_get(off, 0), &e->begin) < 0 ||
      json_u64(json_array_get(off, 1), &e->end) < 0)
    return lt_error("%s: tensor '%s' needs data_offsets [begin, end] of non-negative integers", what, name);
  if (e->end < e->begin) return lt_error("%s: tensor '%s' has data_offsets that end before they begin", what, name);
  uint64_t nbytes;
  if (lt_io_mul_ok(numel, lt_dtype_size(e->dtype), &nbytes) < 0 || nbytes != e->end - e->begin)
    return lt_error("%s: tensor '%s' has shape x dtype size that does not match its %llu data bytes", what, name,
                    (unsigned long long)(e->end - e->begin));
  return 0;
}

int lt_st_parse_header(const char *text, size_t len, uint64_t data_len, lt_st_header *h, const char *what) {
  memset(h, 0, sizeof *h);
  if (len == 0 || text[0] != '{') return lt_error("%s: the header is not a JSON object", what);
  json_error_t jerr;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
  if (!root) return lt_error("%s: the JSON header is invalid: %s (at byte %d)", what, jerr.text, jerr.position);
  if (!json_is_object(root)) { json_decref(root); return lt_error("%s: the header is not a JSON object", what); }
  size_t cap = json_object_size(root);
  h->entries = (lt_st_entry *)calloc(cap ? cap : 1, sizeof(lt_st_entry));
  if (!h->entries) { json_decref(root); return lt_error("out of memory reading %s", what); }
  const char *key;
  json_t *val;
  int rc = 0;
  json_object_foreach(root, key, val) {
    if (strcmp(key, "__metadata__") == 0) {
      if (json_is_null(val)) continue;
      if (!json_is_object(val)) { rc = lt_error("%s: __metadata__ is not an object", what); break; }
      size_t nm = json_object_size(val);
      h->has_meta = true;
      h->meta_keys = (char **)calloc(nm ? nm : 1, sizeof(char *));
      h->meta_vals = (char **)calloc(nm ? nm : 1, sizeof(char *));
      if (!h->meta_keys || !h->meta_vals) { rc = lt_error("out of memory reading %s", what); break; }
      const char *mk;
      json_t *mv;
      json_object_foreach(val, mk, mv) {
        if (!json_is_string(mv)) { rc = lt_error("%s: __metadata__ value '%s' is not a string", what, mk); break; }
        h->meta_keys[h->nmeta] = strdup(mk);
        h->meta_vals[h->nmeta] = strndup(json_string_value(mv), json_string_length(mv));
        h->nmeta++;
        if (!h->meta_keys[h->nmeta - 1] || !h->meta_vals[h->nmeta - 1]) { rc = lt_error("out of memory reading %s", what); break; }
      }
      if (rc < 0) break;
      continue;
    }
    lt_st_entry *e = &h->entries[h->n];
    if (parse_entry(key, val, e, what) < 0) { rc = -1; break; }
    if (!(e->name = strdup(key))) { rc = lt_error("out of memory reading %s", what); break; }
    h->n++;
  }
  json_decref(root);
  if (rc < 0) { lt_st_header_free(h); return -1; }
  qsort(h->entries, (size_t)h->n, sizeof(lt_st_entry), by_offset);
  uint64_t at = 0;
  for (int i = 0; i < h->n; i++) {
    lt_st_entry *e = &h->entries[i];
    if (e->begin != at) {
      if (e->begin < at) rc = lt_error("%s: tensor '%s' overlaps the tensor before it (bytes %llu..%llu)", what, e->name,
                                       (unsigned long long)e->begin, (unsigned long long)e->end);
      else rc = lt_error("%s: there is a hole in the data buffer before tensor '%s' (byte %llu, expected %llu)", what,
                         e->name, (unsigned long long)e->begin, (unsigned long long)at);
      break;
    }
    if (e->end > data_len) {
      rc = lt_error("%s is truncated: tensor '%s' ends at byte %llu of a %llu-byte data buffer", what, e->name,
                    (unsigned long long)e->end, (unsigned long long)data_len);
      break;
    }
    at = e->end;
  }
  if (rc == 0 && at != data_len)
    rc = lt_error("%s: the tensors cover %llu bytes of a %llu-byte data buffer", what, (unsigned long long)at,
                  (unsigned long long)data_len);
  if (rc < 0) { lt_st_header_free(h); return -1; }
  return 0;
}

void lt_st_free_tensors(lt_tensor **ts, int n) {
  if (!ts) return;
  for (int i = 0; i < n; i++) lt_tensor_release(ts[i]);
  free(ts);
}

/* a C bool must hold 0 or 1 */
static bool bool_bytes_ok(const unsigned char *b, int64_t n) {
  for (int64_t i = 0; i < n; i++) if (b[i] > 1) return false;
  return true;
}

int lt_st_load(const char *path, bool use_mmap, lt_st_header *h, lt_tensor ***out) {
  char what[512];
  snprintf(what, sizeof what, "'%s'", path);
  memset(h, 0, sizeof *h);
  *out = NULL;
  int fd;
  uint64_t size;
  if (lt_io_open_read(path, &fd, &size) < 0) return -1;
  unsigned char pre[8];
  char *json = NULL;
  lt_tensor **ts = NULL;
  lt_io_map *map = NULL;
  int rc = -1;
  if (size < 8) { lt_error("%s is truncated (%llu bytes; the header length needs 8)", what, (unsigned long long)size); goto done; }
  if (lt_io_pread_full(fd, pre, 8, 0, path) < 0) goto done;
  uint64_t n = lt_io_le64(pre);
  if (n > LT_ST_MAX_HEADER) { lt_error("%s has an absurd header length (%llu bytes)", what, (unsigned long long)n); goto done; }
  if (n > size - 8) {
    lt_error("%s is truncated (the header needs %llu bytes, %llu left)", what, (unsigned long long)n, (unsigned long long)(size - 8));
    goto done;
  }
  json = (char *)malloc(n ? n : 1);
  if (!json) { lt_error("out of memory reading %s", what); goto done; }
  if (lt_io_pread_full(fd, json, n, 8, path) < 0) goto done;
  if (lt_st_parse_header(json, n, size - 8 - n, h, what) < 0) goto done;
  free(json);
  json = NULL;
  h->data_start = 8 + n;
  ts = (lt_tensor **)calloc(h->n ? (size_t)h->n : 1, sizeof(lt_tensor *));
  if (!ts) { lt_error("out of memory reading %s", what); goto done; }
  if (use_mmap && size > h->data_start && !(map = lt_io_map_fd(fd, size, path))) goto done;
  for (int i = 0; i < h->n; i++) {
    lt_st_entry *e = &h->entries[i];
    uint64_t off = h->data_start + e->begin, nb = e->end - e->begin;
    size_t es = lt_dtype_size(e->dtype);
    if (map && nb > 0 && off % es == 0 &&
        (e->dtype != LT_BOOL || bool_bytes_ok((const unsigned char *)map->addr + off, (int64_t)nb))) {
      lt_io_map_retain(map);
      ts[i] = lt_tensor_from_blob((char *)map->addr + off, e->dtype, e->ndim, e->sizes, NULL, lt_io_map_release_cb, map);
      if (!ts[i]) { lt_io_map_release(map); goto done; }
      continue;
    }
    ts[i] = lt_tensor_new(e->dtype, lt_device_cpu(), e->ndim, e->sizes);
    if (!ts[i]) goto done;
    if (nb == 0) continue;
    if (map) memcpy(lt_tensor_data(ts[i]), (const char *)map->addr + off, nb);
    else if (lt_io_pread_full(fd, lt_tensor_data(ts[i]), nb, off, path) < 0) goto done;
    if (e->dtype == LT_BOOL) {
      unsigned char *b = (unsigned char *)lt_tensor_data(ts[i]);
      for (uint64_t k = 0; k < nb; k++) b[k] = b[k] != 0;
    }
  }
  rc = 0;
done:
  free(json);
  if (map) lt_io_map_release(map);
  close(fd);
  if (rc < 0) {
    lt_st_free_tensors(ts, h->n);
    lt_st_header_free(h);
    return -1;
  }
  *out = ts;
  return 0;
}

/* ---- writing ---- */

typedef struct order { const char *name; lt_tensor *t; } order;

static int by_size_name(const void *a, const void *b) {
  const order *x = (const order *)a, *y = (const order *)b;
  size_t sx = lt_dtype_size((lt_dtype)x->t->dtype), sy = lt_dtype_size((lt_dtype)y->t->dtype);
  if (sx != sy) return sx > sy ? -1 : 1;
  return strcmp(x->name, y->name);
}

int lt_st_save(const char *path, int n, const char *const *names, lt_tensor *const *ts,
               int nmeta, const char *const *meta_keys, const char *const *meta_vals) {
  char what[512];
  snprintf(what, sizeof what, "'%s'", path);
  order *o = (order *)malloc((n ? (size_t)n : 1) * sizeof(order));
  json_t *root = json_object();
  char *text = NULL;
  int rc = -1;
  lt_io_sink s;
  bool sink_open = false;
  if (!o || !root) { lt_error("out of memory writing %s", what); goto done; }
  for (int i = 0; i < n; i++) {
    if (strcmp(names[i], "__metadata__") == 0) { lt_error("'__metadata__' cannot name a tensor"); goto done; }
    o[i].name = names[i];
    o[i].t = ts[i];
  }
  qsort(o, (size_t)n, sizeof(order), by_size_name);
  if (nmeta > 0) {
    json_t *m = json_object();
    if (!m || json_object_set_new(root, "__metadata__", m) < 0) { lt_error("out of memory writing %s", what); goto done; }
    for (int i = 0; i < nmeta; i++) {
      json_t *v = json_string(meta_vals[i]);
      if (!v) { lt_error("metadata value of '%s' is not valid UTF-8", meta_keys[i]); goto done; }
      if (json_object_set_new(m, meta_keys[i], v) < 0) { lt_error("metadata key '%s' is not valid UTF-8", meta_keys[i]); goto done; }
    }
  }
  uint64_t at = 0;
  for (int i = 0; i < n; i++) {
    lt_tensor *t = o[i].t;
    uint64_t nb = (uint64_t)t->numel * lt_dtype_size((lt_dtype)t->dtype);
    if (json_object_get(root, o[i].name)) { lt_error("tensor name '%s' appears twice", o[i].name); goto done; }
    if (!lt_st_dtype_name((lt_dtype)t->dtype)) {   /* complex128: the format has no such dtype */
      lt_error("tensor '%s' is %s, which the safetensors format cannot hold (it has C64 for complex64 only)",
               o[i].name, lt_dtype_name((lt_dtype)t->dtype));
      goto done;
    }
    json_t *e = json_object(), *sh = json_array(), *off = json_array();
    if (!e || !sh || !off) { json_decref(e); json_decref(sh); json_decref(off); lt_error("out of memory writing %s", what); goto done; }
    json_object_set_new(e, "dtype", json_string(lt_st_dtype_name((lt_dtype)t->dtype)));
    for (int d = 0; d < t->ndim; d++) json_array_append_new(sh, json_integer(t->sizes[d]));
    json_object_set_new(e, "shape", sh);
    json_array_append_new(off, json_integer((json_int_t)at));
    json_array_append_new(off, json_integer((json_int_t)(at + nb)));
    json_object_set_new(e, "data_offsets", off);
    if (json_object_set_new(root, o[i].name, e) < 0) { lt_error("tensor name '%s' is not valid UTF-8", o[i].name); goto done; }
    at += nb;
  }
  text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
  if (!text) { lt_error("out of memory writing %s", what); goto done; }
  size_t tl = strlen(text);
  size_t padded = (tl + 7) & ~(size_t)7;   /* the data buffer starts 8-aligned */
  if (lt_io_sink_open_file(&s, path) < 0) goto done;
  sink_open = true;
  lt_io_put_u64(&s, padded);
  lt_io_put(&s, text, tl);
  for (size_t k = tl; k < padded; k++) lt_io_put(&s, " ", 1);
  for (int i = 0; i < n; i++) {
    lt_tensor *h = lt_tensor_to_host(o[i].t);   /* device tensors are written from a host copy */
    lt_tensor *c = h ? lt_tensor_contiguous(h) : NULL;
    lt_tensor_release(h);
    if (!c) goto done;
    int r = lt_io_put(&s, lt_tensor_data(c), (size_t)c->numel * lt_dtype_size((lt_dtype)c->dtype));
    lt_tensor_release(c);
    if (r < 0) break;
  }
  rc = lt_io_sink_commit(&s);
done:
  if (sink_open) lt_io_sink_close(&s);
  free(text);
  json_decref(root);
  free(o);
  return rc;
}
