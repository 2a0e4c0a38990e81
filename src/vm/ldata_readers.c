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
#include <sys/stat.h>
#include <zlib.h>
#include "ltensor.h"
#include "ldata.h"
#include "serial/npy.h"

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
    /* checked before the product, which could overflow past 2^63 */
    if (sizes[i] > 0 && numel > ((int64_t)1 << 40) / sizes[i])
      return rerror(L, "read_idx: '%s' declares an absurd size", path);
    numel *= sizes[i];
  }
  /* the data must fit in the file (deflate expands at most about 1032 times) before the
  ** tensor is allocated: a 20-byte header must not cost gigabytes */
  size_t es0 = lt_dtype_size(dt);
  struct stat st;
  if (stat(path, &st) == 0 && st.st_size >= 0) {
    uint64_t room = (uint64_t)st.st_size * (gzdirect(f) ? 1 : 1100);
    if ((uint64_t)numel * es0 > room)
      return rerror(L, "read_idx: '%s' is truncated (its dims need %I data bytes, the file has %I bytes)", path,
                    (lua_Integer)((uint64_t)numel * es0), (lua_Integer)st.st_size);
  }
  lt_tensor *t = lt_tensor_new(dt, lt_device_cpu(), nd, sizes);
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
  lt_tensor *t = lt_tensor_new(LT_FLOAT64, lt_device_cpu(), 2, sizes);
  if (!t) return lt_vm_raise(L, "read_csv");
  if (nv) memcpy(lt_tensor_data(t), vals, nv * sizeof(double));
  lt_vm_push_tensor(L, t);
  if (names) lua_pushvalue(L, names); else lua_pushnil(L);
  return 2;
}

/* ---- npy ---- */
/* The format lives in src/serial/npy.c (shared with torch.load_npy); this
** reader only feeds it from a gzip or plain stream. */

/* read_npy(path) -> tensor */
static int l_read_npy(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  gzFile f = open_gz(L, "read_npy", path);
  char what[512];
  snprintf(what, sizeof what, "'%s'", path);
  unsigned char pre[LT_NPY_PREAMBLE_MAX];
  size_t n = read_gz(L, f, pre, LT_NPY_PREAMBLE_MIN, "read_npy", path);
  if (n < 6 || memcmp(pre, "\x93NUMPY", 6) != 0) return rerror(L, "read_npy: '%s' is not a .npy file (bad magic)", path);
  if (n < LT_NPY_PREAMBLE_MIN) return rerror(L, "read_npy: '%s' is truncated (header)", path);
  if (pre[6] == 2 || pre[6] == 3) n += read_gz(L, f, pre + n, 2, "read_npy", path);
  size_t pl, hl;
  if (lt_npy_preamble(pre, n, &pl, &hl, what) < 0) return lt_vm_raise(L, "read_npy");
  char *hdr = lua_newuserdatauv(L, hl, 0);
  if (read_gz(L, f, hdr, hl, "read_npy", path) < hl) return rerror(L, "read_npy: '%s' is truncated (header)", path);
  lt_npy_info info;
  if (lt_npy_parse_header(hdr, hl, &info, what) < 0) return lt_vm_raise(L, "read_npy");
  /* refuse sizes the file cannot hold before allocating them: a plain file
  ** has its size; gzip expands at most 1032:1 */
  struct stat st;
  if (stat(path, &st) == 0) {
    uint64_t size = (uint64_t)st.st_size, cap = gzdirect(f) ? size : size * 1032u + 4096u;
    uint64_t used = pl + hl;
    if (info.data_bytes > (cap > used ? cap - used : 0))
      return rerror(L, "read_npy: '%s' is truncated (expected %I data bytes, the file holds at most %I)", path,
                    (lua_Integer)info.data_bytes, (lua_Integer)(cap > used ? cap - used : 0));
  }
  lt_tensor *raw = lt_npy_new_raw(&info);
  if (!raw) return lt_vm_raise(L, "read_npy");
  lt_vm_push_tensor(L, raw);           /* Lua owns it until the end (freed on error) */
  size_t got = read_gz(L, f, lt_tensor_data(raw), (size_t)info.data_bytes, "read_npy", path);
  if (got < info.data_bytes)
    return rerror(L, "read_npy: '%s' is truncated (expected %I data bytes, got %I)", path,
                  (lua_Integer)info.data_bytes, (lua_Integer)got);
  lt_tensor_retain(raw);
  lt_tensor *t = lt_npy_finish(raw, &info, what);
  if (!t) return lt_vm_raise(L, "read_npy");
  lt_vm_push_tensor(L, t);
  return 1;
}

/* write_npy(path, tensor): version 1.0, C order (Fortran order for transposed tensors), atomic */
static int l_write_npy(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lt_tensor *t = lt_vm_checktensor(L, 2, "write_npy", "tensor");
  if (lt_npy_save(path, t) < 0) return lt_vm_raise(L, "write_npy");
  return 0;
}

static const luaL_Reg reader_functions[] = {
  {"read_idx", l_read_idx}, {"read_csv", l_read_csv}, {"read_npy", l_read_npy}, {"write_npy", l_write_npy},
  {NULL, NULL}
};

void lt_vm_data_readers(lua_State *L) { luaL_setfuncs(L, reader_functions, 0); }
