/*
** t7.h — Torch7's serialization (torch.save / torch.File:writeObject), binary
** and ascii: typed values (nil, number, string, boolean, table, torch object)
** where tables and torch objects carry a reference index so that shared
** objects and cycles survive. Torch objects are tensors and storages of the
** eight Torch7 types (and their Cuda spellings, loaded on the CPU), or
** classes (nn modules) whose fields are an ordinary serialized value.
**
** The parser builds a document: a graph of objects addressed by slot, which
** the Lua binding turns into Lua values. It never runs code from the file: a
** serialized function is an error, and a class must be accepted by the
** caller's class_ok before its payload is read. No Lua here.
*/
#ifndef LT_SERIAL_T7_H
#define LT_SERIAL_T7_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include "core/tensor.h"

#define LT_T7_MAX_DEPTH 400     /* nested tables / objects */

typedef enum lt_t7_kind {
  LT_T7_NIL, LT_T7_NUMBER, LT_T7_STRING, LT_T7_BOOLEAN, LT_T7_OBJ
} lt_t7_kind;

typedef struct lt_t7_value {
  uint8_t kind;               /* lt_t7_kind */
  bool boolean;
  double num;
  const char *str;            /* into the document's buffer (not NUL-terminated) */
  size_t len;
  int32_t obj;                /* LT_T7_OBJ: slot in doc->objs */
} lt_t7_value;

typedef enum lt_t7_okind { LT_T7_TABLE, LT_T7_TENSOR, LT_T7_STORAGE, LT_T7_CLASS } lt_t7_okind;

typedef struct lt_t7_object {
  uint8_t kind;               /* lt_t7_okind */
  char *class_name;           /* TENSOR / STORAGE / CLASS: "torch.FloatTensor", "nn.Linear" */
  int version;                /* from "V n"; 0 for files older than versioning */
  /* TABLE */
  lt_t7_value *keys, *vals;
  int64_t n;
  /* TENSOR (a view of its storage) / STORAGE (tensor: 1-D over the whole storage) */
  lt_tensor *tensor;          /* owned; NULL for a tensor with no storage */
  int32_t storage_obj;        /* TENSOR: slot of its storage, -1 if none */
  /* CLASS */
  lt_t7_value fields;
} lt_t7_object;

typedef struct lt_t7_doc {
  unsigned char *buf;         /* the file (owned) */
  size_t len;
  lt_t7_value root;
  lt_t7_object *objs;
  int32_t nobjs, cap;
  /* file reference index -> slot (open addressing) */
  int32_t *hkey, *hslot;
  uint32_t hcap;
} lt_t7_doc;

typedef struct lt_t7_options {
  int format;                 /* -1: detect, 0: binary, 1: ascii */
  int long_size;              /* bytes of a binary long: 8 (default) or 4 */
  /* may a class of this name be read? (tensors and storages are always read) */
  bool (*class_ok)(const char *name, void *ctx);
  void *ctx;
} lt_t7_options;

/* Parse `buf` (malloc'd; the document takes ownership, even on failure).
** `what` names the source in messages. */
int lt_t7_parse(unsigned char *buf, size_t len, const lt_t7_options *opt, lt_t7_doc *doc, const char *what);
/* Read and parse a file. */
int lt_t7_load(const char *path, const lt_t7_options *opt, lt_t7_doc *doc);
void lt_t7_doc_free(lt_t7_doc *doc);

/* "torch.FloatTensor" -> float32 etc.; is_storage tells which; -1 if neither */
int lt_t7_tensor_class(const char *name, bool *is_storage);

/* ---- writing (t7_write.c): the typed primitives of Torch7's File ----
** A growing byte buffer with a position, and the encoding of n elements of
** one Torch7 type (Byte Char Short Int Long Float Double Half, i.e. uint8
** int8 int16 int32 int64 float32 float64 float16) in binary or ascii, as
** THDiskFile and THMemoryFile wrote them, so files equal Torch7's byte for
** byte. The Lua File classes (src/vm/lua/t7file.lua) build writeObject and
** readObject on these. */
typedef struct lt_t7_bytes {
  unsigned char *p;           /* owned */
  size_t len, cap;
} lt_t7_bytes;

typedef struct lt_t7_codec {
  bool ascii;                 /* text numbers instead of native bytes */
  bool autospacing;           /* ascii: ' ' between elements, '\n' closing each call */
  int long_size;              /* bytes of a binary long: 8 or 4 */
  bool big_endian;            /* binary: most significant byte first (Torch7's bigEndianEncoding) */
} lt_t7_codec;

void lt_t7_bytes_free(lt_t7_bytes *b);
/* copy n bytes to *pos, overwriting what is there and growing the buffer;
** *pos moves past them */
int lt_t7_bytes_put(lt_t7_bytes *b, size_t *pos, const void *src, size_t n);
/* is dt one of Torch7's eight element types? */
bool lt_t7_codec_dtype(lt_dtype dt);
/* write n elements of dtype dt (contiguous at data) at *pos */
int lt_t7_encode(lt_t7_bytes *b, size_t *pos, lt_dtype dt, const void *data, int64_t n, const lt_t7_codec *c);
/* read up to n elements of dtype dt from p[*pos..len) into dst; returns how
** many were read (fewer at the end of the bytes or at text that is not a
** number: the caller decides whether that is an error) */
int64_t lt_t7_decode(const unsigned char *p, size_t len, size_t *pos, lt_dtype dt, void *dst, int64_t n,
                     const lt_t7_codec *c);

#endif
