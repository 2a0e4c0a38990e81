/*
** lt7file.c — the byte-level half of Torch7's File classes (DiskFile,
** MemoryFile, PipeFile; their Lua half is src/vm/lua/t7file.lua): a
** growable byte buffer as a Lua value, with the typed reads and writes of
** src/serial/t7_write.c over it, so writing or reading a storage of
** millions of elements is one C loop. Also the two tensor helpers the
** object writer and reader need: a storage's identity (shared storages are
** written once) and a view of given geometry over a read storage.
**
** Positions are 0-based byte offsets here; the Lua half shows Torch7's
** 1-based ones. Element types are named by Torch7's stems ("Int", "Double").
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ltensor.h"
#include "lutorch_vm.h"
#include "core/backend.h"
#include "serial/t7.h"
#include "serial/io.h"

#define BYTES_MT "lutorch.t7bytes"

static const struct { const char *stem; lt_dtype dt; } stems[] = {
  {"Byte", LT_UINT8}, {"Char", LT_INT8}, {"Short", LT_INT16}, {"Int", LT_INT32},
  {"Long", LT_INT64}, {"Float", LT_FLOAT32}, {"Double", LT_FLOAT64}, {"Half", LT_FLOAT16},
};

static lt_dtype check_stem(lua_State *L, int idx) {
  const char *s = luaL_checkstring(L, idx);
  for (size_t i = 0; i < sizeof stems / sizeof stems[0]; i++)
    if (strcmp(s, stems[i].stem) == 0) return stems[i].dt;
  luaL_error(L, "File: unknown element type '%s'", s);
  return LT_FLOAT64;
}

static lt_t7_bytes *checkbytes(lua_State *L, int idx) {
  return (lt_t7_bytes *)luaL_checkudata(L, idx, BYTES_MT);
}

static size_t checkpos(lua_State *L, int idx, const lt_t7_bytes *b) {
  lua_Integer p = luaL_checkinteger(L, idx);
  if (p < 0 || (size_t)p > b->len) luaL_error(L, "File: position %d is outside the file (%d bytes)", (int)p + 1, (int)b->len);
  return (size_t)p;
}

/* codec options at idx (ascii), idx+1 (autospacing), idx+2 (long size), idx+3 (big-endian) */
static lt_t7_codec checkcodec(lua_State *L, int idx) {
  lt_t7_codec c;
  c.ascii = lua_toboolean(L, idx);
  c.autospacing = lua_toboolean(L, idx + 1);
  c.long_size = (int)luaL_optinteger(L, idx + 2, 8) == 4 ? 4 : 8;
  c.big_endian = lua_toboolean(L, idx + 3);
  return c;
}

/* the arguments every typed call starts with: the buffer, a position, a stem */
static lt_t7_bytes *typed_args(lua_State *L, size_t *pos, lt_dtype *dt) {
  lt_t7_bytes *b = checkbytes(L, 1);
  *pos = checkpos(L, 2, b);
  *dt = check_stem(L, 3);
  return b;
}

/* push the new position and the element count; returns how many values are pushed */
static int push_pos_count(lua_State *L, size_t pos, int64_t n) {
  lua_pushinteger(L, (lua_Integer)pos);
  lua_pushinteger(L, (lua_Integer)n);
  return 2;
}

static lt_t7_bytes *newbytes(lua_State *L) {
  lt_t7_bytes *b = (lt_t7_bytes *)lua_newuserdatauv(L, sizeof *b, 0);
  memset(b, 0, sizeof *b);
  luaL_setmetatable(L, BYTES_MT);
  return b;
}

/* a tensor's bytes, on the host and contiguous (a new reference) */
static lt_tensor *host_contig(lua_State *L, lt_tensor *t, const char *op) {
  lt_tensor *h = lt_tensor_to_host(t);
  if (!h) { lt_vm_raise(L, op); return NULL; }
  lt_tensor *c = lt_tensor_contiguous(h);
  lt_tensor_release(h);
  if (!c) lt_vm_raise(L, op);
  return c;
}

/* torch._t7bytes([string | tensor]): a buffer holding a copy of those bytes */
static int l_bytes_new(lua_State *L) {
  lua_settop(L, 1);
  lt_t7_bytes *b = newbytes(L);
  size_t pos = 0;
  if (lua_type(L, 1) == LUA_TSTRING) {
    size_t n;
    const char *s = lua_tolstring(L, 1, &n);
    if (lt_t7_bytes_put(b, &pos, s, n) < 0) return lt_vm_raise(L, "MemoryFile");
  } else if (!lua_isnoneornil(L, 1)) {
    lt_tensor *t = lt_vm_checktensor(L, 1, "MemoryFile", "storage");
    lt_tensor *c = host_contig(L, t, "MemoryFile");
    int rc = lt_t7_bytes_put(b, &pos, lt_tensor_data(c), (size_t)c->numel * lt_dtype_size((lt_dtype)c->dtype));
    lt_tensor_release(c);
    if (rc < 0) return lt_vm_raise(L, "MemoryFile");
  }
  return 1;
}

/* torch._t7bytes_load(path): the file's bytes, or nil and the reason */
static int l_bytes_load(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  size_t len;
  unsigned char *p = lt_io_read_file(path, &len, 0);
  if (!p) {
    lua_pushnil(L);
    lua_pushstring(L, lt_error_message());
    return 2;
  }
  lt_t7_bytes *b = newbytes(L);
  b->p = p;
  b->len = b->cap = len;
  return 1;
}

static int b_gc(lua_State *L) {
  lt_t7_bytes_free(checkbytes(L, 1));
  return 0;
}

static int b_size(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)checkbytes(L, 1)->len);
  return 1;
}

/* b:write(pos, str) -> new pos */
static int b_write(lua_State *L) {
  lt_t7_bytes *b = checkbytes(L, 1);
  size_t pos = checkpos(L, 2, b), n;
  const char *s = luaL_checklstring(L, 3, &n);
  if (lt_t7_bytes_put(b, &pos, s, n) < 0) return lt_vm_raise(L, "writeString");
  lua_pushinteger(L, (lua_Integer)pos);
  return 1;
}

/* b:read(pos [, n]) -> up to n bytes (all that is left without n) */
static int b_read(lua_State *L) {
  lt_t7_bytes *b = checkbytes(L, 1);
  size_t pos = checkpos(L, 2, b), left = b->len - pos;
  lua_Integer n = luaL_optinteger(L, 3, -1);
  size_t k = n < 0 || (size_t)n > left ? left : (size_t)n;
  lua_pushlstring(L, (const char *)b->p + pos, k);
  return 1;
}

/* b:line(pos) -> the line at pos without its '\n', and the position after
** it; nil at the end */
static int b_line(lua_State *L) {
  lt_t7_bytes *b = checkbytes(L, 1);
  size_t pos = checkpos(L, 2, b);
  if (pos >= b->len) { lua_pushnil(L); return 1; }
  const unsigned char *nl = (const unsigned char *)memchr(b->p + pos, '\n', b->len - pos);
  size_t end = nl ? (size_t)(nl - b->p) : b->len;
  lua_pushlstring(L, (const char *)b->p + pos, end - pos);
  lua_pushinteger(L, (lua_Integer)(nl ? end + 1 : end));
  return 2;
}

/* b:encode(pos, stem, src, ascii, autospacing, long_size, big_endian) -> new pos, count.
** src: a number, a table of numbers, or a tensor of the stem's dtype */
static int b_encode(lua_State *L) {
  size_t pos;
  lt_dtype dt;
  lt_t7_bytes *b = typed_args(L, &pos, &dt);
  lt_t7_codec c = checkcodec(L, 5);
  int rc;
  int64_t n;
  if (lua_type(L, 4) == LUA_TNUMBER || lua_type(L, 4) == LUA_TTABLE) {
    bool one = lua_type(L, 4) == LUA_TNUMBER;
    n = one ? 1 : (int64_t)luaL_len(L, 4);
    lt_tensor *t = lt_tensor_new(dt, lt_device_cpu(), 1, &n);
    if (!t) return lt_vm_raise(L, "write");
    char *d = (char *)lt_tensor_data(t);
    size_t es = lt_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) {
      if (!one) lua_geti(L, 4, (lua_Integer)i + 1);
      int at = one ? 4 : -1;
      if (!lua_isnumber(L, at)) {
        lt_tensor_release(t);
        return luaL_error(L, "write: element %d is a %s, not a number", (int)i + 1, luaL_typename(L, at));
      }
      if (lt_dtype_is_float(dt)) {
        lt_dtype_store_double(dt, d + (size_t)i * es, lua_tonumber(L, at));
      } else {
        lua_Integer v;
        if (lua_isinteger(L, at)) v = lua_tointeger(L, at);
        else v = (lua_Integer)lua_tonumber(L, at);   /* writeInt(3.14) writes 3, as Torch7's did */
        lt_dtype_store_int64(dt, d + (size_t)i * es, (int64_t)v);
      }
      if (!one) lua_pop(L, 1);
    }
    rc = lt_t7_encode(b, &pos, dt, d, n, &c);
    lt_tensor_release(t);
  } else {
    lt_tensor *t = lt_vm_checktensor(L, 4, "write", "storage");
    if ((lt_dtype)t->dtype != dt)
      return luaL_error(L, "write%s: expected a %s storage, got one of %s", lua_tostring(L, 3), lt_dtype_name(dt),
                        lt_dtype_name((lt_dtype)t->dtype));
    lt_tensor *h = host_contig(L, t, "write");
    n = h->numel;
    rc = lt_t7_encode(b, &pos, dt, lt_tensor_data(h), n, &c);
    lt_tensor_release(h);
  }
  if (rc < 0) return lt_vm_raise(L, "write");
  return push_pos_count(L, pos, n);
}

/* b:decode(pos, stem, n | tensor, ascii, autospacing, long_size, big_endian)
**   -> tensor of the elements read (or, into a given tensor, nil), new pos, count */
static int b_decode(lua_State *L) {
  size_t pos;
  lt_dtype dt;
  lt_t7_bytes *b = typed_args(L, &pos, &dt);
  lt_t7_codec c = checkcodec(L, 5);
  if (lua_type(L, 4) == LUA_TNUMBER) {
    lua_Integer n = luaL_checkinteger(L, 4);
    if (n < 0) return luaL_error(L, "read: argument 'n' must not be negative, got %d", (int)n);
    /* never more than the bytes left could hold (a text number takes one byte at least) */
    size_t left = b->len - pos;
    int64_t cap = (uint64_t)n > left ? (int64_t)left : (int64_t)n;
    lt_tensor *t = lt_tensor_new(dt, lt_device_cpu(), 1, &cap);
    if (!t) return lt_vm_raise(L, "read");
    int64_t got = lt_t7_decode(b->p, b->len, &pos, dt, lt_tensor_data(t), cap, &c);
    lt_tensor *r = t;
    if (got < cap) {
      r = lt_tensor_new(dt, lt_device_cpu(), 1, &got);
      if (r && got) memcpy(lt_tensor_data(r), lt_tensor_data(t), (size_t)got * lt_dtype_size(dt));
      lt_tensor_release(t);
      if (!r) return lt_vm_raise(L, "read");
    }
    lt_vm_push_tensor(L, r);
    return 1 + push_pos_count(L, pos, got);
  }
  lt_tensor *into = lt_vm_checktensor(L, 4, "read", "storage");
  if ((lt_dtype)into->dtype != dt || !lt_tensor_is_contiguous(into) || lt_tensor_device(into).type != LT_DEV_CPU)
    return luaL_error(L, "read%s: expected a %s storage", lua_tostring(L, 3), lt_dtype_name(dt));
  int64_t got = lt_t7_decode(b->p, b->len, &pos, dt, lt_tensor_data(into), into->numel, &c);
  lt_tensor_bump_version(into);
  lua_pushnil(L);
  return 1 + push_pos_count(L, pos, got);
}

/* b:decode1(pos, stem, ascii, autospacing, long_size, big_endian) -> number or nil, new pos */
static int b_decode1(lua_State *L) {
  size_t pos;
  lt_dtype dt;
  lt_t7_bytes *b = typed_args(L, &pos, &dt);
  lt_t7_codec c = checkcodec(L, 4);
  union { double d; int64_t i; unsigned char raw[8]; } v;
  if (lt_t7_decode(b->p, b->len, &pos, dt, v.raw, 1, &c) != 1) lua_pushnil(L);
  else if (lt_dtype_is_float(dt)) lua_pushnumber(L, lt_dtype_load_double(dt, v.raw));
  else lua_pushinteger(L, (lua_Integer)lt_dtype_load_int64(dt, v.raw));
  lua_pushinteger(L, (lua_Integer)pos);
  return 2;
}

/* b:tensor(stem) -> a 1-D tensor holding a copy of the bytes (Char or Byte) */
static int b_tensor(lua_State *L) {
  lt_t7_bytes *b = checkbytes(L, 1);
  lt_dtype dt = lua_isnoneornil(L, 2) ? LT_INT8 : check_stem(L, 2);
  if (dt != LT_INT8 && dt != LT_UINT8) return luaL_error(L, "File: the bytes are a Char or Byte storage");
  int64_t n = (int64_t)b->len;
  lt_tensor *t = lt_tensor_new(dt, lt_device_cpu(), 1, &n);
  if (!t) return lt_vm_raise(L, "storage");
  if (n) memcpy(lt_tensor_data(t), b->p, b->len);
  lt_vm_push_tensor(L, t);
  return 1;
}

/* b:save(path [, atomic]) -> true, or nil and the reason. The file is
** rewritten whole; atomic (torch.save) writes a temporary file and renames
** it over path, so a reader never sees half a file */
static int b_save(lua_State *L) {
  lt_t7_bytes *b = checkbytes(L, 1);
  const char *path = luaL_checkstring(L, 2);
  if (lua_toboolean(L, 3)) {
    if (lt_io_write_file_atomic(path, b->p ? (const void *)b->p : (const void *)"", b->len) < 0) {
      lua_pushnil(L);
      lua_pushstring(L, lt_error_message());
      return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
  }
  FILE *f = fopen(path, "wb");
  if (!f || (b->len && fwrite(b->p, 1, b->len, f) != b->len) || fclose(f) != 0) {
    if (f) fclose(f);
    lua_pushnil(L);
    lua_pushfstring(L, "cannot write '%s'", path);
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* torch._t7storage_id(t): one light userdata per storage (the writer's
** reference key, so tensors sharing a storage write it once) */
static int l_storage_id(lua_State *L) {
  lt_tensor *t = lt_vm_checktensor(L, 1, "writeObject", "tensor");
  lua_pushlightuserdata(L, t->storage);
  return 1;
}

/* torch._t7view(storage_tensor, offset0, sizes, strides): the tensor a file
** describes over a storage it read; its extent is checked against the storage */
static int l_view(lua_State *L) {
  lt_tensor *st = lt_vm_checktensor(L, 1, "readObject", "storage");
  lua_Integer off = luaL_checkinteger(L, 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  luaL_checktype(L, 4, LUA_TTABLE);
  int nd = (int)luaL_len(L, 3);
  if (nd < 1 || nd > LT_MAX_DIMS || luaL_len(L, 4) != nd)
    return luaL_error(L, "readObject: a tensor with %d dimensions (at most %d)", nd, LT_MAX_DIMS);
  int64_t sizes[LT_MAX_DIMS], strides[LT_MAX_DIMS];
  uint64_t last = (uint64_t)(off < 0 ? 0 : off);
  bool empty = false;
  for (int i = 0; i < nd; i++) {
    lua_geti(L, 3, i + 1);
    lua_geti(L, 4, i + 1);
    sizes[i] = (int64_t)lua_tointeger(L, -2);
    strides[i] = (int64_t)lua_tointeger(L, -1);
    lua_pop(L, 2);
    if (sizes[i] < 0 || strides[i] < 0) return luaL_error(L, "readObject: a tensor with a negative size or stride");
    if (sizes[i] == 0) empty = true;
  }
  if (empty) {
    lt_tensor *t = lt_tensor_new((lt_dtype)st->dtype, lt_device_cpu(), nd, sizes);
    if (!t) return lt_vm_raise(L, "readObject");
    lt_vm_push_tensor(L, t);
    return 1;
  }
  if (off < 0) return luaL_error(L, "readObject: a tensor with storage offset %d", (int)off + 1);
  for (int i = 0; i < nd; i++) {
    uint64_t span;
    if (lt_io_mul_ok((uint64_t)(sizes[i] - 1), (uint64_t)strides[i], &span) < 0 || lt_io_add_ok(last, span, &last) < 0)
      return luaL_error(L, "readObject: a tensor whose extent overflows");
  }
  int64_t n = (int64_t)(st->storage->nbytes / lt_dtype_size((lt_dtype)st->dtype));
  if (last >= (uint64_t)n)
    return luaL_error(L, "readObject: a tensor reaches element %d of a storage of %d", (int)last + 1, (int)n);
  lt_tensor *t = lt_tensor_new_view(st->storage, (lt_dtype)st->dtype, off, nd, sizes, strides);
  if (!t) return lt_vm_raise(L, "readObject");
  lt_vm_push_tensor(L, t);
  return 1;
}

void lt_vm_open_t7file(lua_State *L) {
  static const luaL_Reg methods[] = {
    {"size", b_size}, {"write", b_write}, {"read", b_read}, {"line", b_line}, {"encode", b_encode},
    {"decode", b_decode}, {"decode1", b_decode1}, {"tensor", b_tensor}, {"save", b_save}, {NULL, NULL}};
  if (luaL_newmetatable(L, BYTES_MT)) {
    lua_pushcfunction(L, b_gc);
    lua_setfield(L, -2, "__gc");
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  static const luaL_Reg fns[] = {
    {"_t7bytes", l_bytes_new}, {"_t7bytes_load", l_bytes_load}, {"_t7storage_id", l_storage_id},
    {"_t7view", l_view}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
