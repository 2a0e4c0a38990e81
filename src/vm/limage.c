/*
** limage.c — the C half of the image library (lib/image): PNG and JPEG
** decoding and encoding between Lua strings and tensors, as private functions
** of torch._image. File reading, dtype conversion, options and the argument
** checks a user sees are lib/image's; here each function takes what it needs
** already checked, and the name of the calling Lua function (`op`), which
** prefixes every error.
**
**   decode(bytes, channels, keep16, what, op) -> tensor [C, H, W], bits, "png" | "jpeg"
**                                    (bytes: a string or a contiguous 1-D uint8 tensor)
**   encode_png(tensor, level, op)    -> string      (uint8, contiguous [C, H, W])
**   encode_jpeg(tensor, quality, op) -> string
**   sniff(bytes)                     -> "png" | "jpeg" | nil
*/
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "lutorch_vm.h"
#include "ltensor.h"
#include "serial/image.h"

/* raise the error slot's message prefixed with "op: ", without a source position: the
** message already names the function and the file, as lib/image's own errors do */
static int raise(lua_State *L, const char *op) {
  const char *msg = lt_error_message();
  size_t n = strlen(op);
  if (strncmp(msg, op, n) == 0 && msg[n] == ':') lua_pushstring(L, msg);
  else lua_pushfstring(L, "%s: %s", op, msg);
  return lua_error(L);
}

/* the encoded bytes at idx: a string, or a 1-D uint8 tensor on the CPU (torchvision's form) */
static const unsigned char *input_bytes(lua_State *L, int idx, size_t *n) {
  lt_tensor *t = lt_vm_totensor(L, idx);
  if (!t) return (const unsigned char *)luaL_checklstring(L, idx, n);
  if (lt_tensor_dtype(t) != LT_UINT8 || t->ndim != 1 || !lt_tensor_is_contiguous(t) ||
      lt_tensor_device(t).type != LT_DEV_CPU)
    luaL_error(L, "torch._image: the bytes must be a string or a contiguous 1-D uint8 CPU tensor");
  *n = (size_t)t->numel;
  return t->numel ? (const unsigned char *)lt_tensor_data(t) : (const unsigned char *)"";
}

static int l_sniff(lua_State *L) {
  size_t n;
  const unsigned char *p = input_bytes(L, 1, &n);
  switch (lt_image_sniff(p, n)) {
  case LT_IMAGE_PNG: lua_pushliteral(L, "png"); break;
  case LT_IMAGE_JPEG: lua_pushliteral(L, "jpeg"); break;
  default: lua_pushnil(L);
  }
  return 1;
}

static int l_decode(lua_State *L) {
  size_t n;
  const unsigned char *p = input_bytes(L, 1, &n);
  int channels = (int)luaL_checkinteger(L, 2);
  int keep16 = lua_toboolean(L, 3);
  const char *what = luaL_checkstring(L, 4);
  const char *op = luaL_checkstring(L, 5);
  int bits = 8;
  lt_tensor *t;
  const char *fmt;
  switch (lt_image_sniff(p, n)) {
  case LT_IMAGE_PNG: t = lt_image_decode_png(p, n, channels, keep16, &bits, what); fmt = "png"; break;
  case LT_IMAGE_JPEG: t = lt_image_decode_jpeg(p, n, channels, what); fmt = "jpeg"; break;
  default:
    lua_pushfstring(L, "%s: %s is neither a PNG nor a JPEG file (%s)", op, what,
                    n == 0 ? "it is empty" : "unknown signature");
    return lua_error(L);
  }
  if (!t) return raise(L, op);
  lt_vm_push_tensor(L, t);
  lua_pushinteger(L, bits);
  lua_pushstring(L, fmt);
  return 3;
}

/* an encoder's malloc'd output, owned by a userdata until it is a Lua string, so
** that a memory error while pushing it does not leak it */
static int buffer_gc(lua_State *L) {
  unsigned char **box = (unsigned char **)lua_touserdata(L, 1);
  free(*box);
  *box = NULL;
  return 0;
}

static int encode(lua_State *L, int jpeg) {
  const char *op = luaL_checkstring(L, 3);
  lt_tensor *t = lt_vm_checktensor(L, 1, op, "tensor");
  int arg = (int)luaL_checkinteger(L, 2);
  if (lt_tensor_device(t).type != LT_DEV_CPU) return luaL_error(L, "%s: the tensor must be on the CPU", op);
  unsigned char **box = (unsigned char **)lua_newuserdatauv(L, sizeof *box, 0);
  *box = NULL;
  if (luaL_newmetatable(L, "lutorch.image.buffer")) {
    lua_pushcfunction(L, buffer_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  size_t len = 0;
  int r = jpeg ? lt_image_encode_jpeg(t, arg, box, &len) : lt_image_encode_png(t, arg, box, &len);
  if (r < 0) return raise(L, op);
  lua_pushlstring(L, (const char *)*box, len);
  free(*box);
  *box = NULL;
  return 1;
}

static int l_encode_png(lua_State *L) { return encode(L, 0); }
static int l_encode_jpeg(lua_State *L) { return encode(L, 1); }

void lt_vm_open_image(lua_State *L) {
  static const luaL_Reg fns[] = {{"decode", l_decode}, {"encode_png", l_encode_png}, {"encode_jpeg", l_encode_jpeg},
                                 {"sniff", l_sniff}, {NULL, NULL}};
  luaL_newlib(L, fns);
  lua_setfield(L, -2, "_image");
}
