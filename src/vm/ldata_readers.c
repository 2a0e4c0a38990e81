/*
** ldata_readers.c — file readers for lib/data: idx (MNIST, Fashion-MNIST),
** CSV and .npy. Files go through zlib's gzread, which reads gzipped and plain
** files alike. Every failure is a Lua error naming the reader and the file.
*/
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "ltensor.h"
#include "ldata.h"

/* raise without luaL_error's position prefix: the message names reader and file */
#define rerror(L, ...) (lua_pushfstring(L, __VA_ARGS__), lua_error(L))

/* ---- a gz file that closes itself when the Lua stack unwinds ---- */

typedef struct gzbox { gzFile f; } gzbox;

static int gzbox_gc(lua_State *L) {
  gzbox *b = lua_touserdata(L, 1);
  if (b->f) { gzclose(b->f); b->f = NULL; }
  return 0;
}

static gzFile open_gz(lua_State *L, const char *reader, const char *path) {
  gzbox *b = lua_newuserdatauv(L, sizeof(gzbox), 0);
  b->f = NULL;
  if (luaL_newmetatable(L, "lutorch.data.gzbox")) {
    lua_pushcfunction(L, gzbox_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  b->f = gzopen(path, "rb");
  if (!b->f) rerror(L, "%s: cannot open '%s': %s", reader, path, errno ? strerror(errno) : "out of memory");
  gzbuffer(b->f, 1 << 17);
  return b->f;
}

/* read exactly n bytes; returns the count actually read (raises on a zlib error) */
static size_t read_gz(lua_State *L, gzFile f, void *dst, size_t n, const char *reader, const char *path) {
  size_t got = 0;
  while (got < n) {
    unsigned chunk = n - got > (1u << 30) ? (1u << 30) : (unsigned)(n - got);
    int r = gzread(f, (char *)dst + got, chunk);
    if (r < 0) {
      int err;
      const char *m = gzerror(f, &err);
      rerror(L, "%s: '%s' is corrupt: %s", reader, path, m ? m : "read error");
    }
    if (r == 0) break;
    got += (size_t)r;
  }
  /* a gzip stream cut short reads as a short count with Z_BUF_ERROR */
  if (got < n) {
    int err;
    const char *m = gzerror(f, &err);
    if (err != Z_OK && err != Z_STREAM_END && err != Z_BUF_ERROR) rerror(L, "%s: '%s' is corrupt: %s", reader, path, m);
  }
  return got;
}

static void byteswap(void *p, int64_t n, size_t es) {
  unsigned char *b = p;
  if (es == 1) return;
  for (int64_t i = 0; i < n; i++, b += es)
    for (size_t k = 0; k < es / 2; k++) { unsigned char t = b[k]; b[k] = b[es - 1 - k]; b[es - 1 - k] = t; }
}

static int host_little(void) { const uint16_t one = 1; return *(const unsigned char *)&one == 1; }

/* ---- idx ---- */

/* read_idx(path) -> tensor with the file's dtype and shape */
static int l_read_idx(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  gzFile f = open_gz(L, "read_idx", path);
  unsigned char magic[4];
  if (read_gz(L, f, magic, 4, "read_idx", path) < 4)
    return rerror(L, "read_idx: '%s' is truncated (no idx header)", path);
  if (magic[0] != 0 || magic[1] != 0)
    return rerror(L, "read_idx: '%s' is not an idx file (bad magic: first bytes %d %d, expected 0 0)", path,
                      (int)magic[0], (int)magic[1]);
  lt_dtype dt;
  switch (magic[2]) {
    case 0x08: dt = LT_UINT8; break;
    case 0x09: dt = LT_INT8; break;
    case 0x0B: dt = LT_INT16; break;
    case 0x0C: dt = LT_INT32; break;
    case 0x0D: dt = LT_FLOAT32; break;
    case 0x0E: dt = LT_FLOAT64; break;
    default: return rerror(L, "read_idx: '%s' has an unknown element type (code %d)", path, (int)magic[2]);
  }
  int nd = magic[3];
  if (nd < 1 || nd > LT_MAX_DIMS) return rerror(L, "read_idx: '%s' has a bad number of dims (%d)", path, nd);
  int64_t sizes[LT_MAX_DIMS];
  unsigned char dims[4 * LT_MAX_DIMS];
  if (read_gz(L, f, dims, 4 * (size_t)nd, "read_idx", path) < 4 * (size_t)nd)
    return rerror(L, "read_idx: '%s' is truncated (in the dims)", path);
  int64_t numel = 1;
  for (int i = 0; i < nd; i++) {
    sizes[i] = ((int64_t)dims[4 * i] << 24) | (dims[4 * i + 1] << 16) | (dims[4 * i + 2] << 8) | dims[4 * i + 3];
    numel *= sizes[i];
    if (numel > ((int64_t)1 << 40)) return rerror(L, "read_idx: '%s' declares an absurd size", path);
  }
  lt_tensor *t = lt_tensor_new(dt, lt_cpu_device(), nd, sizes);
  if (!t) return lt_vm_raise(L, "read_idx");
  lt_vm_push_tensor(L, t);   /* Lua owns it now: errors below free it */
  size_t es = lt_dtype_size(dt), want = (size_t)numel * es;
  size_t got = read_gz(L, f, lt_tensor_data(t), want, "read_idx", path);
  if (got < want)
    return rerror(L, "read_idx: '%s' is truncated (expected %I data bytes, got %I)", path,
                      (lua_Integer)want, (lua_Integer)got);
  unsigned char extra;
  if (read_gz(L, f, &extra, 1, "read_idx", path) != 0)
    return rerror(L, "read_idx: '%s' has bytes after the data (corrupt or wrong shape)", path);
  if (host_little()) byteswap(lt_tensor_data(t), numel, es);   /* idx is big-endian */
  return 1;
}

/* ---- CSV ---- */

/* malloc'ed memory that a Lua error cannot leak: freed by the collector */
typedef struct membox { void *p; } membox;
static int membox_gc(lua_State *L) {
  membox *m = lua_touserdata(L, 1);
  free(m->p);
  m->p = NULL;
  return 0;
}
static membox *new_membox(lua_State *L) {
  membox *m = lua_newuserdatauv(L, sizeof(membox), 0);
  m->p = NULL;
  if (luaL_newmetatable(L, "lutorch.data.membox")) {
    lua_pushcfunction(L, membox_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return m;
}
static void *membox_grow(lua_State *L, membox *m, size_t bytes) {
  void *p = realloc(m->p, bytes ? bytes : 1);
  if (!p) rerror(L, "read_csv: out of memory");
  m->p = p;
  return p;
}

/* trim spaces and one pair of double quotes */
static char *trim(char *s, char **end) {
  while (s < *end && isspace((unsigned char)*s)) s++;
  while (*end > s && isspace((unsigned char)(*end)[-1])) (*end)--;
  if (*end - s >= 2 && s[0] == '"' && (*end)[-1] == '"') { s++; (*end)--; }
  return s;
}

/* read_csv(path, header, delimiter) -> data (float64 [rows, cols]), names | nil */
static int l_read_csv(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int header = lua_toboolean(L, 2);
  const char *delim_s = luaL_optstring(L, 3, ",");
  if (strlen(delim_s) != 1) return rerror(L, "read_csv: delimiter must be one character");
  char delim = delim_s[0];
  gzFile f = open_gz(L, "read_csv", path);
  /* the whole text, then the values */
  membox *tb = new_membox(L), *vb = new_membox(L);
  size_t tl = 0, tcap = 1 << 16;
  char *text = membox_grow(L, tb, tcap);
  for (;;) {
    if (tcap - tl < (1 << 15)) text = membox_grow(L, tb, tcap *= 2);
    size_t want = tcap - tl - 1;
    size_t n = read_gz(L, f, text + tl, want, "read_csv", path);
    tl += n;
    if (n < want) break;
  }
  text[tl] = 0;
  int names = 0;
  if (header) { lua_newtable(L); names = lua_gettop(L); }
  size_t nv = 0, vcap = 1024;
  double *vals = membox_grow(L, vb, vcap * sizeof(double));
  int64_t cols = -1, lineno = 0;
  int need_header = header;
  char *p = text, *end = text + tl;
  while (p < end) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) nl = end;
    char *le = nl;
    if (le > p && le[-1] == '\r') le--;
    char *ls = p;
    p = nl < end ? nl + 1 : end;
    lineno++;
    char *te = le;
    if (trim(ls, &te) == te) continue;   /* blank line */
    int64_t k = 0;
    char *q = ls;
    for (;;) {
      char *fe = memchr(q, delim, (size_t)(le - q));
      if (!fe) fe = le;
      char *fend = fe;
      char *fs = trim(q, &fend);
      if (need_header) {
        lua_pushlstring(L, fs, (size_t)(fend - fs));
        lua_rawseti(L, names, ++k);
      } else {
        double v = NAN;
        if (fs != fend) {
          char save = *fend, *ep;
          *fend = 0;
          v = strtod(fs, &ep);
          *fend = save;
          if (ep != fend)
            return rerror(L, "read_csv: '%s' line %I field %I: '%s' is not a number", path,
                              (lua_Integer)lineno, (lua_Integer)(k + 1),
                              lua_pushlstring(L, fs, (size_t)(fend - fs) > 40 ? 40 : (size_t)(fend - fs)));
        }
        if (nv == vcap) vals = membox_grow(L, vb, (vcap *= 2) * sizeof(double));
        vals[nv++] = v;
        k++;
      }
      if (fe == le) break;
      q = fe + 1;
    }
    if (cols < 0) cols = k;
    else if (k != cols)
      return rerror(L, "read_csv: '%s' line %I has %I fields, expected %I", path,
                        (lua_Integer)lineno, (lua_Integer)k, (lua_Integer)cols);
    need_header = 0;
  }
  if (cols < 0) return rerror(L, "read_csv: '%s' is empty", path);
  int64_t sizes[2] = {cols ? (int64_t)nv / cols : 0, cols};
  lt_tensor *t = lt_tensor_new(LT_FLOAT64, lt_cpu_device(), 2, sizes);
  if (!t) return lt_vm_raise(L, "read_csv");
  if (nv) memcpy(lt_tensor_data(t), vals, nv * sizeof(double));
  lt_vm_push_tensor(L, t);
  if (names) lua_pushvalue(L, names); else lua_pushnil(L);
  return 2;
}

/* ---- npy ---- */

static int npy_dtype(const char *descr, lt_dtype *dt, int *swap) {
  char order = descr[0], kind = descr[1];
  int size = atoi(descr + 2);
  if (order != '<' && order != '>' && order != '|' && order != '=') return -1;
  *swap = (order == '>' && host_little()) || (order == '<' && !host_little());
  switch (kind) {
    case 'f': *dt = size == 2 ? LT_FLOAT16 : size == 4 ? LT_FLOAT32 : size == 8 ? LT_FLOAT64 : LT_NUM_DTYPES; break;
    case 'i': *dt = size == 1 ? LT_INT8 : size == 2 ? LT_INT16 : size == 4 ? LT_INT32 : size == 8 ? LT_INT64 : LT_NUM_DTYPES; break;
    case 'u': *dt = size == 1 ? LT_UINT8 : LT_NUM_DTYPES; break;
    case 'b': *dt = size == 1 ? LT_BOOL : LT_NUM_DTYPES; break;
    default: return -1;
  }
  return *dt == LT_NUM_DTYPES ? -1 : 0;
}

/* read_npy(path) -> tensor */
static int l_read_npy(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  gzFile f = open_gz(L, "read_npy", path);
  unsigned char pre[10];
  if (read_gz(L, f, pre, 10, "read_npy", path) < 10 || memcmp(pre, "\x93NUMPY", 6) != 0)
    return rerror(L, "read_npy: '%s' is not a .npy file (bad magic)", path);
  size_t hlen;
  if (pre[6] == 1) hlen = pre[8] | (pre[9] << 8);
  else if (pre[6] == 2 || pre[6] == 3) {
    unsigned char more[2];
    if (read_gz(L, f, more, 2, "read_npy", path) < 2) return rerror(L, "read_npy: '%s' is truncated (header)", path);
    hlen = (size_t)pre[8] | ((size_t)pre[9] << 8) | ((size_t)more[0] << 16) | ((size_t)more[1] << 24);
  } else return rerror(L, "read_npy: '%s' has unsupported version %d", path, pre[6]);
  if (hlen > (1 << 20)) return rerror(L, "read_npy: '%s' has an absurd header length", path);
  char *hdr = lua_newuserdatauv(L, hlen + 1, 0);
  if (read_gz(L, f, hdr, hlen, "read_npy", path) < hlen) return rerror(L, "read_npy: '%s' is truncated (header)", path);
  hdr[hlen] = 0;
  char *d = strstr(hdr, "'descr'"), *fo = strstr(hdr, "'fortran_order'"), *sh = strstr(hdr, "'shape'");
  if (!d || !fo || !sh) return rerror(L, "read_npy: '%s' has a malformed header", path);
  char descr[16] = {0};
  char *q = strchr(d + 7, '\'');
  if (!q) return rerror(L, "read_npy: '%s' has a malformed header", path);
  char *qe = strchr(q + 1, '\'');
  if (!qe || qe - q - 1 >= (int)sizeof descr) return rerror(L, "read_npy: '%s' has a malformed header", path);
  memcpy(descr, q + 1, (size_t)(qe - q - 1));
  lt_dtype dt;
  int swap;
  if (npy_dtype(descr, &dt, &swap) < 0) return rerror(L, "read_npy: '%s' has unsupported dtype '%s'", path, descr);
  char *fv = fo + 15;
  while (*fv == ':' || *fv == ' ') fv++;
  int fortran = strncmp(fv, "True", 4) == 0;
  char *s = strchr(sh, '(');
  if (!s) return rerror(L, "read_npy: '%s' has a malformed shape", path);
  int64_t sizes[LT_MAX_DIMS];
  int nd = 0;
  s++;
  for (;;) {
    while (*s == ' ' || *s == ',') s++;
    if (*s == ')') break;
    char *e;
    long long v = strtoll(s, &e, 10);
    if (e == s || v < 0 || nd == LT_MAX_DIMS) return rerror(L, "read_npy: '%s' has a malformed shape", path);
    sizes[nd++] = v;
    s = e;
  }
  /* Fortran order: read the transposed shape, then permute back */
  int64_t rs[LT_MAX_DIMS];
  for (int i = 0; i < nd; i++) rs[i] = fortran ? sizes[nd - 1 - i] : sizes[i];
  lt_tensor *t = lt_tensor_new(dt, lt_cpu_device(), nd, rs);
  if (!t) return lt_vm_raise(L, "read_npy");
  lt_vm_push_tensor(L, t);
  size_t es = lt_dtype_size(dt), want = (size_t)t->numel * es;
  size_t got = read_gz(L, f, lt_tensor_data(t), want, "read_npy", path);
  if (got < want)
    return rerror(L, "read_npy: '%s' is truncated (expected %I data bytes, got %I)", path,
                      (lua_Integer)want, (lua_Integer)got);
  if (swap) byteswap(lt_tensor_data(t), t->numel, es);
  if (fortran && nd > 1) {
    int64_t st[LT_MAX_DIMS], cs[LT_MAX_DIMS];
    lt_contiguous_strides(nd, rs, cs);
    for (int i = 0; i < nd; i++) st[i] = cs[nd - 1 - i];
    lt_tensor *v = lt_tensor_alias(t, 0, nd, sizes, st);
    lt_tensor *c = v ? lt_tensor_clone_as(v, dt) : NULL;
    lt_tensor_release(v);
    lt_vm_push_tensor(L, c);
  }
  return 1;
}

static const char *npy_descr(lt_dtype dt) {
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
    default: return NULL;
  }
}

/* write_npy(path, tensor): version 1.0, C order */
static int l_write_npy(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lt_tensor *t = lt_vm_checktensor(L, 2, "write_npy", "tensor");
  const char *descr = npy_descr((lt_dtype)t->dtype);
  if (!descr) return rerror(L, "write_npy: dtype %s has no .npy equivalent", lt_dtype_name((lt_dtype)t->dtype));
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  lua_pushfstring(L, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  luaL_addvalue(&b);
  for (int i = 0; i < t->ndim; i++) {
    lua_pushfstring(L, "%I%s", (lua_Integer)t->sizes[i], t->ndim == 1 ? "," : (i + 1 < t->ndim ? ", " : ""));
    luaL_addvalue(&b);
  }
  luaL_addstring(&b, "), }");
  luaL_pushresult(&b);
  size_t hl;
  const char *h = lua_tolstring(L, -1, &hl);
  size_t total = 10 + hl + 1;
  size_t pad = (64 - total % 64) % 64;
  lt_tensor *c = lt_tensor_contiguous(t);
  if (!c) return lt_vm_raise(L, "write_npy");
  FILE *f = fopen(path, "wb");
  if (!f) { lt_tensor_release(c); return rerror(L, "write_npy: cannot open '%s': %s", path, strerror(errno)); }
  size_t full = hl + pad + 1;
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(full & 0xff), (unsigned char)(full >> 8)};
  int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(h, 1, hl, f) == hl;
  for (size_t i = 0; ok && i < pad; i++) ok = fputc(' ', f) != EOF;
  ok = ok && fputc('\n', f) != EOF;
  size_t nb = (size_t)c->numel * lt_dtype_size((lt_dtype)c->dtype);
  ok = ok && (nb == 0 || fwrite(lt_tensor_data(c), 1, nb, f) == nb);
  lt_tensor_release(c);
  if (fclose(f) != 0) ok = 0;
  if (!ok) return rerror(L, "write_npy: writing '%s' failed: %s", path, strerror(errno));
  return 0;
}

static const luaL_Reg reader_functions[] = {
  {"read_idx", l_read_idx}, {"read_csv", l_read_csv}, {"read_npy", l_read_npy}, {"write_npy", l_write_npy},
  {NULL, NULL}
};

void lt_vm_data_readers(lua_State *L) { luaL_setfuncs(L, reader_functions, 0); }
