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

#endif
