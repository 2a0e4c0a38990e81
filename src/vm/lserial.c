/*
** lserial.c — torch.save / torch.load in lutorch's own format: walking a Lua
** value graph into the metadata and back. The walk is breadth-first over an
** explicit queue, both ways, so a value nested a million deep costs memory
** in proportion to the file, never C stack. Classes go through the Lua side
** (src/vm/lua/serial.lua): only registered classes are named in a file or
** rebuilt from one, and loading never runs code from the file.
**
** The C functions here are the private halves (torch.serialization._save,
** ...); serial.lua parses arguments and adds the Torch7 fallback.
*/
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include "lutorch_vm.h"
#include "ltensor.h"
#include "core/backend.h"
#include "serial/serial.h"

#define STATE_MT "lutorch.serial.state"

/* Everything a save or load holds outside Lua, in a to-be-closed userdata so
** a Lua error anywhere (a class hook, a bad value) frees it and removes a
** half-written temporary file at once. */
typedef struct sstate {
  lt_io_sink body, root, meta, out;
  int body_open, root_open, meta_open, out_open;
  /* save: storages seen */
  lt_storage **st;
  uint64_t *lo, *hi;
  lt_serial_blob *blobs;
  size_t nst, capst;
  /* load */
  lt_serial_reader r;
  int r_open;
  unsigned char *buf;    /* a stream read into memory */
  lt_io_map *map;
  int fd;
} sstate;

static int state_close(lua_State *L) {
  sstate *s = luaL_checkudata(L, 1, STATE_MT);
  if (s->body_open) { lt_io_sink_close(&s->body); s->body_open = 0; }
  if (s->root_open) { lt_io_sink_close(&s->root); s->root_open = 0; }
  if (s->meta_open) { lt_io_sink_close(&s->meta); s->meta_open = 0; }
  if (s->out_open) { lt_io_sink_close(&s->out); s->out_open = 0; }
  free(s->st); free(s->lo); free(s->hi); free(s->blobs);
  s->st = NULL; s->lo = s->hi = NULL; s->blobs = NULL; s->nst = s->capst = 0;
  if (s->r_open) { lt_serial_reader_close(&s->r); s->r_open = 0; }
  free(s->buf); s->buf = NULL;
  if (s->map) { lt_io_map_release(s->map); s->map = NULL; }
  if (s->fd >= 0) { close(s->fd); s->fd = -1; }
  return 0;
}

static sstate *new_state(lua_State *L) {
  sstate *s = lua_newuserdatauv(L, sizeof *s, 0);
  memset(s, 0, sizeof *s);
  s->fd = -1;
  if (luaL_newmetatable(L, STATE_MT)) {
    lua_pushcfunction(L, state_close); lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, state_close); lua_setfield(L, -2, "__close");
  }
  lua_setmetatable(L, -2);
  lua_toclose(L, -1);
  return s;
}

/* an error without a position: the message names the function and the file */
static int lerror(lua_State *L, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  return lua_error(L);
}

static int raise(lua_State *L, const char *fn) {
  return lerror(L, "%s: %s", fn, lt_error_message());
}

/* torch.serialization (the Lua side's table) onto the stack */
static void push_ser(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, "lutorch.module");
  lua_getfield(L, -1, "serialization");
  lua_remove(L, -2);
}

/* ======================================================================
** saving
** ====================================================================== */

/* stack slots of a save (absolute indices) */
typedef struct saver {
  lua_State *L;
  sstate *s;
  const char *fn;
  int tabids, tq, tpar, tkey;   /* table -> id; id -> table; id -> parent id; id -> key */
  int tenids, tens;             /* tensor -> id; id -> tensor */
  int stids;                    /* storage lightuserdata -> index */
  int clsids, clsnames;         /* class name -> id; id -> name */
  int ser;                      /* torch.serialization */
  lua_Integer ntables, ntensors, nclasses;
} saver;

/* "value.a.b[1]" for a child `key` (at stack index kidx, or 0 for none) of table `id` */
static void push_path(saver *sv, lua_Integer id, int kidx) {
  lua_State *L = sv->L;
  luaL_Buffer b;
  /* collect the chain root..id */
  int n = 0;
  lua_newtable(L);             /* chain of key values, innermost first */
  int chain = lua_gettop(L);
  if (kidx) { lua_pushvalue(L, kidx); lua_rawseti(L, chain, ++n); }
  for (lua_Integer i = id; i > 1 && n < 64;) {
    lua_rawgeti(L, sv->tkey, i); lua_rawseti(L, chain, ++n);
    lua_rawgeti(L, sv->tpar, i); i = lua_tointeger(L, -1); lua_pop(L, 1);
  }
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "value");
  for (int k = n; k >= 1; k--) {
    lua_rawgeti(L, chain, k);
    int t = lua_type(L, -1);
    if (t == LUA_TSTRING) {
      size_t len; const char *s = lua_tolstring(L, -1, &len);
      int ident = len > 0 && (s[0] == '_' || ((s[0] | 32) >= 'a' && (s[0] | 32) <= 'z'));
      for (size_t j = 1; j < len && ident; j++)
        ident = s[j] == '_' || ((s[j] | 32) >= 'a' && (s[j] | 32) <= 'z') || (s[j] >= '0' && s[j] <= '9');
      if (ident) { lua_pushfstring(L, ".%s", s); }
      else lua_pushfstring(L, "[\"%s\"]", s);
    } else if (t == LUA_TNUMBER) {
      lua_pushfstring(L, "[%s]", lua_tostring(L, -1));
    } else {
      lua_pushfstring(L, "[<%s key>]", luaL_typename(L, -1));
    }
    lua_remove(L, -2);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  lua_remove(L, chain);
}

static int save_error(saver *sv, lua_Integer parent, int kidx, const char *what) {
  lua_State *L = sv->L;
  push_path(sv, parent, kidx);
  return lerror(L, "%s: cannot save %s (at %s)", sv->fn, what, lua_tostring(L, -1));
}

/* dtypes and devices are interned objects (torch.float32 == x.dtype): they are
** saved by name and load back as the same objects, not as copies. 1 if v was one. */
static int put_interned(lua_State *L, lt_io_sink *o, int v) {
  if (!lua_getmetatable(L, v)) return 0;
  lt_vm_push_dtype(L, LT_FLOAT32);
  lua_getmetatable(L, -1);
  lua_remove(L, -2);
  luaL_getmetatable(L, "lutorch.device");
  int kind = lua_rawequal(L, -3, -2) ? LT_SV_DTYPE : lua_rawequal(L, -3, -1) ? LT_SV_DEVICE : 0;
  lua_pop(L, 3);
  if (!kind) return 0;
  lua_pushstring(L, kind == LT_SV_DTYPE ? "name" : "_str");
  lua_rawget(L, v);
  size_t len;
  const char *name = lua_tolstring(L, -1, &len);
  if (!name) { lua_pop(L, 1); return 0; }
  lt_io_put_u8(o, (uint8_t)kind); lt_io_put_varint(o, len); lt_io_put(o, name, len);
  lua_pop(L, 1);
  return 1;
}

/* the value at stack index v, a child of table `parent` under key kidx (0 for none) */
static void put_value(saver *sv, lt_io_sink *o, int v, lua_Integer parent, int kidx) {
  lua_State *L = sv->L;
  switch (lua_type(L, v)) {
  case LUA_TNIL: lt_io_put_u8(o, LT_SV_NIL); break;
  case LUA_TBOOLEAN: lt_io_put_u8(o, lua_toboolean(L, v) ? LT_SV_TRUE : LT_SV_FALSE); break;
  case LUA_TNUMBER:
    if (lua_isinteger(L, v)) {
      lt_io_put_u8(o, LT_SV_INT);
      lt_serial_put_svarint(o, (int64_t)lua_tointeger(L, v));
    } else {
      double d = lua_tonumber(L, v);
      uint64_t bits; memcpy(&bits, &d, 8);
      lt_io_put_u8(o, LT_SV_FLOAT);
      lt_io_put_u64(o, bits);
    }
    break;
  case LUA_TSTRING: {
    size_t len; const char *s = lua_tolstring(L, v, &len);
    lt_io_put_u8(o, LT_SV_STRING); lt_io_put_varint(o, len); lt_io_put(o, s, len);
    break;
  }
  case LUA_TTABLE: {
    if (put_interned(L, o, lua_absindex(L, v))) break;
    lua_pushvalue(L, v);
    lua_rawget(L, sv->tabids);
    lua_Integer id = lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (id == 0) {
      id = ++sv->ntables;
      lua_pushvalue(L, v); lua_pushinteger(L, id); lua_rawset(L, sv->tabids);
      lua_pushvalue(L, v); lua_rawseti(L, sv->tq, id);
      lua_pushinteger(L, parent); lua_rawseti(L, sv->tpar, id);
      if (kidx) { lua_pushvalue(L, kidx); lua_rawseti(L, sv->tkey, id); }
    }
    lt_io_put_u8(o, LT_SV_TABLE); lt_io_put_varint(o, (uint64_t)(id - 1));
    break;
  }
  case LUA_TUSERDATA: {
    lt_ud *u = lt_vm_toud(L, v);
    if (!u) { save_error(sv, parent, kidx, "a userdata"); return; }
    if (!u->t) { save_error(sv, parent, kidx, "a freed tensor"); return; }
    lua_pushvalue(L, v);
    lua_rawget(L, sv->tenids);
    lua_Integer id = lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (id == 0) {
      id = ++sv->ntensors;
      lua_pushvalue(L, v); lua_pushinteger(L, id); lua_rawset(L, sv->tenids);
      lua_pushvalue(L, v); lua_rawseti(L, sv->tens, id);
    }
    lt_io_put_u8(o, LT_SV_TENSOR); lt_io_put_varint(o, (uint64_t)(id - 1));
    break;
  }
  case LUA_TFUNCTION: save_error(sv, parent, kidx, "a function"); return;
  case LUA_TTHREAD: save_error(sv, parent, kidx, "a thread (coroutine)"); return;
  default: save_error(sv, parent, kidx, luaL_typename(L, v)); return;
  }
}

/* the body of table `id`: class, pairs, extra */
static void put_table(saver *sv, lua_Integer id) {
  lua_State *L = sv->L;
  lt_io_sink *o = &sv->s->body;
  int top = lua_gettop(L);
  lua_rawgeti(L, sv->tq, id);
  int t = lua_gettop(L);
  int src = t, extra = 0;
  lua_Integer cls = 0;
  if (lua_getmetatable(L, t)) {
    lua_pop(L, 1);
    /* name, fields, extra = ser._class_info(t) */
    lua_getfield(L, sv->ser, "_class_info");
    lua_pushvalue(L, t);
    lua_call(L, 1, 3);
    if (!lua_isstring(L, -3)) {
      const char *why = lua_isstring(L, -2) ? lua_tostring(L, -2) : "a table with a metatable that is not a registered class";
      save_error(sv, id, 0, why);
    }
    const char *name = lua_tostring(L, -3);
    lua_pushvalue(L, -3); lua_rawget(L, sv->clsids);
    cls = lua_tointeger(L, -1); lua_pop(L, 1);
    if (cls == 0) {
      cls = ++sv->nclasses;
      lua_pushvalue(L, -3); lua_pushinteger(L, cls); lua_rawset(L, sv->clsids);
      lua_pushstring(L, name); lua_rawseti(L, sv->clsnames, cls);
    }
    if (lua_istable(L, -2)) src = lua_gettop(L) - 1;
    extra = lua_gettop(L);
  }
  lt_io_put_varint(o, (uint64_t)cls);
  uint64_t npairs = 0;
  lua_pushnil(L);
  while (lua_next(L, src)) { npairs++; lua_pop(L, 1); }
  lt_io_put_varint(o, npairs);
  lua_pushnil(L);
  while (lua_next(L, src)) {
    int k = lua_gettop(L) - 1;
    put_value(sv, o, k, id, k);
    put_value(sv, o, k + 1, id, k);
    lua_pop(L, 1);
  }
  if (cls) put_value(sv, o, extra, id, 0);
  lua_settop(L, top);
  if (o->failed) lerror(L, "%s: %s", sv->fn, lt_error_message());
}

static size_t storage_index(saver *sv, lt_storage *st) {
  lua_State *L = sv->L;
  sstate *s = sv->s;
  lua_pushlightuserdata(L, st);
  lua_rawget(L, sv->stids);
  lua_Integer i = lua_tointeger(L, -1);
  lua_pop(L, 1);
  if (i) return (size_t)(i - 1);
  if (s->nst == s->capst) {
    size_t cap = s->capst ? 2 * s->capst : 16;
    lt_storage **a = realloc(s->st, cap * sizeof *a);
    if (a) s->st = a;
    uint64_t *b = realloc(s->lo, cap * sizeof *b);
    if (b) s->lo = b;
    uint64_t *c = realloc(s->hi, cap * sizeof *c);
    if (c) s->hi = c;
    if (!a || !b || !c) lerror(L, "%s: out of memory", sv->fn);
    s->capst = cap;
  }
  s->st[s->nst] = st;
  s->lo[s->nst] = UINT64_MAX; s->hi[s->nst] = 0;
  lua_pushlightuserdata(L, st); lua_pushinteger(L, (lua_Integer)++s->nst); lua_rawset(L, sv->stids);
  return s->nst - 1;
}

/* bytes [lo, hi) of its storage a non-empty view touches; 0 when empty */
static int tensor_span(const lt_tensor *t, uint64_t *lo, uint64_t *hi) {
  if (t->numel == 0) return 0;
  int64_t last = t->offset;
  for (int d = 0; d < t->ndim; d++) last += (t->sizes[d] - 1) * t->strides[d];
  uint64_t es = lt_dtype_size((lt_dtype)t->dtype);
  *lo = (uint64_t)t->offset * es;
  *hi = (uint64_t)(last + 1) * es;
  return 1;
}

/* emit everything and write it; the object graph has been walked */
static void save_finish(saver *sv, lt_io_sink *out) {
  lua_State *L = sv->L;
  sstate *s = sv->s;
  /* tensors with negative strides are saved as contiguous copies, and device
  ** tensors as host copies (they load on the cpu) */
  for (lua_Integer i = 1; i <= sv->ntensors; i++) {
    lua_rawgeti(L, sv->tens, i);
    lt_tensor *t = lt_vm_totensor(L, -1);
    int neg = 0;
    for (int d = 0; d < t->ndim; d++) neg |= t->strides[d] < 0;
    if (neg || lt_tensor_device(t).type != LT_DEV_CPU) {
      lt_tensor *c = neg ? lt_tensor_clone_as(t, (lt_dtype)t->dtype) : lt_tensor_to_host(t);
      if (!c) raise(L, sv->fn);
      c->requires_grad = t->requires_grad;
      lt_vm_push_tensor(L, c);
      lua_rawseti(L, sv->tens, i);
    }
    lua_pop(L, 1);
  }
  for (lua_Integer i = 1; i <= sv->ntensors; i++) {
    lua_rawgeti(L, sv->tens, i);
    lt_tensor *t = lt_vm_totensor(L, -1);
    size_t k = storage_index(sv, t->storage);
    uint64_t lo, hi;
    if (tensor_span(t, &lo, &hi)) {
      if (lo < s->lo[k]) s->lo[k] = lo;
      if (hi > s->hi[k]) s->hi[k] = hi;
    }
    lua_pop(L, 1);
  }
  s->blobs = calloc(s->nst ? s->nst : 1, sizeof *s->blobs);
  if (!s->blobs) lerror(L, "%s: out of memory", sv->fn);
  for (size_t k = 0; k < s->nst; k++) {
    if (s->lo[k] == UINT64_MAX) { s->lo[k] = s->hi[k] = 0; }
    s->lo[k] &= ~(uint64_t)7;          /* a multiple of every element size */
    s->blobs[k].data = (char *)s->st[k]->data + s->lo[k];
    s->blobs[k].nbytes = s->hi[k] - s->lo[k];
  }
  lt_serial_layout(s->blobs, s->nst);
  lt_io_sink *m = &s->meta;
  lt_io_put_varint(m, s->nst);
  for (size_t k = 0; k < s->nst; k++) { lt_io_put_varint(m, s->blobs[k].rel_offset); lt_io_put_varint(m, s->blobs[k].nbytes); }
  lt_io_put_varint(m, (uint64_t)sv->nclasses);
  for (lua_Integer i = 1; i <= sv->nclasses; i++) {
    size_t len;
    lua_rawgeti(L, sv->clsnames, i);
    const char *n = lua_tolstring(L, -1, &len);
    lt_io_put_varint(m, len); lt_io_put(m, n, len);
    lua_pop(L, 1);
  }
  lt_io_put_varint(m, (uint64_t)sv->ntensors);
  for (lua_Integer i = 1; i <= sv->ntensors; i++) {
    lua_rawgeti(L, sv->tens, i);
    lt_tensor *t = lt_vm_totensor(L, -1);
    size_t k = storage_index(sv, t->storage);
    uint64_t es = lt_dtype_size((lt_dtype)t->dtype);
    int64_t off = t->numel ? (int64_t)(((uint64_t)t->offset * es - s->lo[k]) / es) : 0;
    lt_serial_put_tensor(m, t, k, off, t->requires_grad);
    lua_pop(L, 1);
  }
  lt_io_put_varint(m, (uint64_t)sv->ntables);
  if (lt_io_sink_commit(&s->body) < 0 || lt_io_sink_commit(&s->root) < 0) raise(L, sv->fn);
  lt_io_put(m, s->body.mem, s->body.memlen);
  lt_io_put(m, s->root.mem, s->root.memlen);
  if (lt_io_sink_commit(m) < 0) raise(L, sv->fn);
  if (lt_serial_write(out, m->mem, m->memlen, s->blobs, s->nst) < 0 || lt_io_sink_commit(out) < 0) raise(L, sv->fn);
}

/* walk the value at index v; out must be open in s->out */
static void save_value(lua_State *L, sstate *s, int v, const char *fn) {
  saver sv;
  memset(&sv, 0, sizeof sv);
  sv.L = L; sv.s = s; sv.fn = fn;
  luaL_checkstack(L, 40, "torch.save");
  lua_newtable(L); sv.tabids = lua_gettop(L);
  lua_newtable(L); sv.tq = lua_gettop(L);
  lua_newtable(L); sv.tpar = lua_gettop(L);
  lua_newtable(L); sv.tkey = lua_gettop(L);
  lua_newtable(L); sv.tenids = lua_gettop(L);
  lua_newtable(L); sv.tens = lua_gettop(L);
  lua_newtable(L); sv.stids = lua_gettop(L);
  lua_newtable(L); sv.clsids = lua_gettop(L);
  lua_newtable(L); sv.clsnames = lua_gettop(L);
  push_ser(L); sv.ser = lua_gettop(L);
  lt_io_sink_open_mem(&s->body); s->body_open = 1;
  lt_io_sink_open_mem(&s->root); s->root_open = 1;
  lt_io_sink_open_mem(&s->meta); s->meta_open = 1;
  put_value(&sv, &s->root, v, 0, 0);
  for (lua_Integer id = 1; id <= sv.ntables; id++) put_table(&sv, id);
  save_finish(&sv, &s->out);
}

/* _save(path, value) */
static int l_save_path(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  luaL_checkany(L, 2);
  sstate *s = new_state(L);
  if (lt_io_sink_open_file(&s->out, path) < 0) return raise(L, "torch.save");
  s->out_open = 1;
  save_value(L, s, 2, "torch.save");
  return 0;
}

/* _save_file(fh, value) */
static int l_save_file(lua_State *L) {
  luaL_Stream *p = luaL_checkudata(L, 1, LUA_FILEHANDLE);
  if (!p->closef) return lerror(L, "torch.save: the file handle is closed");
  luaL_checkany(L, 2);
  sstate *s = new_state(L);
  lt_io_sink_open_fp(&s->out, p->f);
  s->out_open = 1;
  save_value(L, s, 2, "torch.save");
  return 0;
}

/* _serialize(value) -> string */
static int l_serialize(lua_State *L) {
  luaL_checkany(L, 1);
  sstate *s = new_state(L);
  lt_io_sink_open_mem(&s->out);
  s->out_open = 1;
  save_value(L, s, 1, "torch.serialize");
  lua_pushlstring(L, (const char *)s->out.mem, s->out.memlen);
  return 1;
}

/* ======================================================================
** loading
** ====================================================================== */

typedef struct loader {
  lua_State *L;
  lt_serial_reader *r;
  const char *fn;
  int tabs, tens;
  uint64_t ntables, ntensors;
} loader;

static int corrupt(loader *ld, const char *fmt, const char *arg) {
  lua_State *L = ld->L;
  lua_pushfstring(L, fmt, arg);
  return lerror(L, "%s: %s is corrupt: %s", ld->fn, ld->r->name, lua_tostring(L, -1));
}

static int trunc_error(loader *ld) {
  return lerror(ld->L, "%s: %s is corrupt: %s", ld->fn, ld->r->name, lt_error_message());
}

/* push one value from the metadata */
static void get_value(loader *ld) {
  lua_State *L = ld->L;
  lt_io_cursor *c = &ld->r->meta;
  uint8_t tag;
  if (lt_io_get_u8(c, &tag, "value") < 0) trunc_error(ld);
  switch (tag) {
  case LT_SV_NIL: lua_pushnil(L); break;
  case LT_SV_FALSE: lua_pushboolean(L, 0); break;
  case LT_SV_TRUE: lua_pushboolean(L, 1); break;
  case LT_SV_INT: {
    int64_t v;
    if (lt_serial_get_svarint(c, &v, "integer") < 0) trunc_error(ld);
    lua_pushinteger(L, (lua_Integer)v);
    break;
  }
  case LT_SV_FLOAT: {
    uint64_t bits; double d;
    if (lt_io_get_u64(c, &bits, "float") < 0) trunc_error(ld);
    memcpy(&d, &bits, 8);
    lua_pushnumber(L, d);
    break;
  }
  case LT_SV_STRING: {
    uint64_t len;
    if (lt_io_get_varint(c, &len, "string length") < 0) trunc_error(ld);
    const char *p = lt_io_take(c, len, "string");
    if (!p) trunc_error(ld);
    lua_pushlstring(L, p, (size_t)len);
    break;
  }
  case LT_SV_TABLE: case LT_SV_TENSOR: {
    uint64_t id;
    if (lt_io_get_varint(c, &id, "reference") < 0) trunc_error(ld);
    uint64_t n = tag == LT_SV_TABLE ? ld->ntables : ld->ntensors;
    if (id >= n) {
      char buf[96];
      snprintf(buf, sizeof buf, "%s %llu of %llu", tag == LT_SV_TABLE ? "table" : "tensor",
               (unsigned long long)id + 1, (unsigned long long)n);
      corrupt(ld, "a reference to %s", buf);
    }
    lua_rawgeti(L, tag == LT_SV_TABLE ? ld->tabs : ld->tens, (lua_Integer)id + 1);
    break;
  }
  case LT_SV_DTYPE: case LT_SV_DEVICE: {
    uint64_t len;
    if (lt_io_get_varint(c, &len, "name length") < 0) trunc_error(ld);
    const char *p = len <= 64 ? lt_io_take(c, len, "name") : NULL;
    if (len > 64) corrupt(ld, "a %s name longer than 64 bytes", tag == LT_SV_DTYPE ? "dtype" : "device");
    if (!p) trunc_error(ld);
    char name[65];
    memcpy(name, p, (size_t)len);
    name[len] = 0;
    if (tag == LT_SV_DTYPE) {
      int dt = lt_dtype_from_name(name);
      if (dt < 0) corrupt(ld, "unknown dtype '%s'", name);
      lt_vm_push_dtype(L, (lt_dtype)dt);
    } else {
      lt_device d;
      if (lt_device_parse(name, &d) < 0) corrupt(ld, "unknown device '%s'", name);
      lt_vm_push_device(L, d);
    }
    break;
  }
  default: {
    char buf[16]; snprintf(buf, sizeof buf, "%u", tag);
    corrupt(ld, "unknown value tag %s", buf);
  }
  }
}

/* the object in the reader, onto the stack */
static void load_value(lua_State *L, sstate *s, const char *fn) {
  loader ld;
  memset(&ld, 0, sizeof ld);
  ld.L = L; ld.r = &s->r; ld.fn = fn;
  lt_serial_reader *r = &s->r;
  lt_io_cursor *c = &r->meta;
  luaL_checkstack(L, 40, "torch.load");
  if (lt_serial_read_storages(r) < 0) raise(L, fn);
  /* classes: resolved up front, so an unknown class fails before any work */
  uint64_t ncls;
  if (lt_io_get_varint(c, &ncls, "class count") < 0) trunc_error(&ld);
  if (ncls > lt_io_left(c)) corrupt(&ld, "%s", "more classes than the file holds");
  push_ser(L);
  int ser = lua_gettop(L);
  lua_createtable(L, (int)(ncls < 65536 ? ncls : 65536), 0);
  int classes = lua_gettop(L);
  for (uint64_t i = 1; i <= ncls; i++) {
    uint64_t len;
    if (lt_io_get_varint(c, &len, "class name") < 0) trunc_error(&ld);
    const char *p = lt_io_take(c, len, "class name");
    if (!p) trunc_error(&ld);
    lua_getfield(L, ser, "_resolve_class");
    lua_pushlstring(L, p, (size_t)len);
    lua_pushstring(L, fn);
    lua_pushstring(L, r->name);
    lua_call(L, 3, 1);
    lua_rawseti(L, classes, (lua_Integer)i);
  }
  /* tensors */
  if (lt_io_get_varint(c, &ld.ntensors, "tensor count") < 0) trunc_error(&ld);
  if (ld.ntensors > lt_io_left(c) / 7) corrupt(&ld, "%s", "more tensors than the file holds");
  lua_createtable(L, (int)(ld.ntensors < 65536 ? ld.ntensors : 65536), 0);
  ld.tens = lua_gettop(L);
  for (uint64_t i = 1; i <= ld.ntensors; i++) {
    lt_tensor *t = lt_serial_get_tensor(r);
    if (!t) raise(L, fn);
    lt_vm_push_tensor(L, t);
    lua_rawseti(L, ld.tens, (lua_Integer)i);
    if (i % 64 == 0) lt_vm_gc_account(L);
  }
  lt_vm_gc_account(L);
  /* tables: all made first (references may point forward), then filled */
  if (lt_io_get_varint(c, &ld.ntables, "table count") < 0) trunc_error(&ld);
  if (ld.ntables > lt_io_left(c) / 2) corrupt(&ld, "%s", "more tables than the file holds");
  lua_createtable(L, (int)(ld.ntables < (1u << 24) ? ld.ntables : (1u << 24)), 0);
  ld.tabs = lua_gettop(L);
  for (uint64_t i = 1; i <= ld.ntables; i++) { lua_createtable(L, 0, 0); lua_rawseti(L, ld.tabs, (lua_Integer)i); }
  lua_newtable(L);                      /* fixups: {table, class, extra} triples */
  int fix = lua_gettop(L);
  lua_Integer nfix = 0;
  for (uint64_t i = 1; i <= ld.ntables; i++) {
    uint64_t cls, npairs;
    lua_rawgeti(L, ld.tabs, (lua_Integer)i);
    int t = lua_gettop(L);
    if (lt_io_get_varint(c, &cls, "table class") < 0 || lt_io_get_varint(c, &npairs, "table size") < 0) trunc_error(&ld);
    if (cls > ncls) corrupt(&ld, "%s", "a table names a class that is not listed");
    if (npairs > lt_io_left(c) / 2) corrupt(&ld, "%s", "a table has more entries than the file holds");
    for (uint64_t k = 0; k < npairs; k++) {
      get_value(&ld);
      if (lua_isnil(L, -1)) corrupt(&ld, "%s", "a table key is nil");
      if (lua_type(L, -1) == LUA_TNUMBER && !lua_isinteger(L, -1) && isnan(lua_tonumber(L, -1)))
        corrupt(&ld, "%s", "a table key is NaN");
      get_value(&ld);
      lua_rawset(L, t);
    }
    if (cls) {
      lua_createtable(L, 3, 0);
      lua_pushvalue(L, t); lua_rawseti(L, -2, 1);
      lua_rawgeti(L, classes, (lua_Integer)cls); lua_rawseti(L, -2, 2);
      get_value(&ld); lua_rawseti(L, -2, 3);
      lua_rawseti(L, fix, ++nfix);
    }
    lua_settop(L, t - 1);
  }
  get_value(&ld);
  int root = lua_gettop(L);
  if (lt_io_left(c) != 0) corrupt(&ld, "%s", "unexpected bytes after the value");
  /* classes last, deepest first: hooks see finished children */
  lua_getfield(L, ser, "_finish");
  lua_pushvalue(L, fix);
  lua_call(L, 1, 0);
  lua_pushvalue(L, root);
}

static void state_reader_done(sstate *s) { s->r_open = 1; }

/* _load_path(path, mmap, verify) */
static int l_load_path(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int mmap_ = lua_toboolean(L, 2);
  sstate *s = new_state(L);
  lua_pushfstring(L, "'%s'", path);
  const char *name = lua_tostring(L, -1);
  uint64_t size;
  if (lt_io_open_read(path, &s->fd, &size) < 0) return raise(L, "torch.load");
  if (mmap_) {
    if (size >= SIZE_MAX) return lerror(L, "torch.load: %s is too large", name);
    s->map = lt_io_map_fd(s->fd, (size_t)size, path);
    if (!s->map) return raise(L, "torch.load");
    close(s->fd); s->fd = -1;
    state_reader_done(s);
    if (lt_serial_reader_mem(&s->r, name, s->map->addr, s->map->len, s->map) < 0) return raise(L, "torch.load");
    s->r.verify_data = lua_toboolean(L, 3);
  } else {
    state_reader_done(s);
    if (lt_serial_reader_fd(&s->r, name, s->fd, size) < 0) return raise(L, "torch.load");
  }
  load_value(L, s, "torch.load");
  return 1;
}

/* _load_file(fh) */
static int l_load_file(lua_State *L) {
  luaL_Stream *p = luaL_checkudata(L, 1, LUA_FILEHANDLE);
  if (!p->closef) return lerror(L, "torch.load: the file handle is closed");
  sstate *s = new_state(L);
  unsigned char hdr[LT_SERIAL_HEADER_SIZE];
  size_t got = fread(hdr, 1, sizeof hdr, p->f);
  lt_serial_header h;
  if (lt_serial_header_decode(hdr, got, UINT64_MAX, &h) < 0)
    return lerror(L, "torch.load: file handle: %s", lt_error_message());
  /* read what the header promises, growing as bytes really arrive: a header
  ** claiming terabytes costs only what the stream holds */
  size_t cap = 1 << 16, n = sizeof hdr;
  if (h.total_len < cap) cap = (size_t)h.total_len;
  s->buf = malloc(cap);
  if (!s->buf) return lerror(L, "torch.load: out of memory");
  memcpy(s->buf, hdr, n);
  while (n < h.total_len) {
    if (n == cap) {
      size_t nc = cap * 2;
      if (nc > h.total_len) nc = (size_t)h.total_len;
      unsigned char *b = realloc(s->buf, nc);
      if (!b) return lerror(L, "torch.load: out of memory");
      s->buf = b; cap = nc;
    }
    size_t k = fread(s->buf + n, 1, cap - n, p->f);
    if (k == 0)
    {
      char msg[160];
      snprintf(msg, sizeof msg, "the header says %llu bytes, only %llu present",
               (unsigned long long)h.total_len, (unsigned long long)n);
      return lerror(L, "torch.load: file handle is truncated: %s", msg);
    }
    n += k;
  }
  state_reader_done(s);
  if (lt_serial_reader_mem(&s->r, "file handle", s->buf, n, NULL) < 0) return raise(L, "torch.load");
  load_value(L, s, "torch.load");
  return 1;
}

/* _deserialize(s) */
static int l_deserialize(lua_State *L) {
  size_t len;
  const char *str = luaL_checklstring(L, 1, &len);
  sstate *s = new_state(L);
  state_reader_done(s);
  if (lt_serial_reader_mem(&s->r, "string", str, len, NULL) < 0) return raise(L, "torch.deserialize");
  load_value(L, s, "torch.deserialize");
  return 1;
}

/* _fix_checksums(s) -> s with every checksum recomputed (for the hostile-input tests) */
static int l_fix_checksums(lua_State *L) {
  size_t len;
  const char *str = luaL_checklstring(L, 1, &len);
  luaL_Buffer b;
  unsigned char *p = (unsigned char *)luaL_buffinitsize(L, &b, len);
  memcpy(p, str, len);
  lt_serial_fix_checksums(p, len);
  luaL_pushresultsize(&b, len);
  return 1;
}

/* _is_ours(first bytes) */
static int l_is_ours(lua_State *L) {
  size_t len;
  const char *str = luaL_checklstring(L, 1, &len);
  lua_pushboolean(L, lt_serial_is_ours((const unsigned char *)str, len));
  return 1;
}

/* _storage_info(t) -> {data=address, nbytes=, kind="allocated"|"external"|"inline", mapped=bool} */
static int l_storage_info(lua_State *L) {
  lt_tensor *t = lt_vm_checktensor(L, 1, "storage_info", "self");
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, (lua_Integer)(uintptr_t)t->storage->data); lua_setfield(L, -2, "data");
  lua_pushinteger(L, (lua_Integer)t->storage->nbytes); lua_setfield(L, -2, "nbytes");
  static const char *kinds[] = {"inline", "allocated", "external"};
  lua_pushstring(L, t->storage->kind >= 0 && t->storage->kind <= 2 ? kinds[t->storage->kind] : "?");
  lua_setfield(L, -2, "kind");
  lua_pushboolean(L, t->storage->release == lt_io_map_release_cb); lua_setfield(L, -2, "mapped");
  return 1;
}

void lt_vm_open_serial(lua_State *L) {
  static const luaL_Reg fns[] = {
    {"_save", l_save_path}, {"_save_file", l_save_file}, {"_serialize", l_serialize},
    {"_load", l_load_path}, {"_load_file", l_load_file}, {"_deserialize", l_deserialize},
    {"_fix_checksums", l_fix_checksums}, {"_is_ours", l_is_ours}, {"_storage_info", l_storage_info},
    {NULL, NULL}};
  lua_newtable(L);
  luaL_setfuncs(L, fns, 0);
  lua_setfield(L, -2, "serialization");
  static const luaL_Reg methods[] = {{"storage_info", l_storage_info}, {NULL, NULL}};
  lt_vm_add_methods(L, methods);
}
