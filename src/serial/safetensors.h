/*
** safetensors.h — the safetensors format: an 8-byte little-endian header
** length N, N bytes of JSON ({"name": {"dtype", "shape", "data_offsets"},
** "__metadata__": {string: string}}), then the byte buffer the offsets point
** into. No Lua here. The header is parsed with jansson and checked the way
** the format's specification requires: a bounded header, offsets inside the
** buffer, tensors contiguous, non-overlapping and covering the buffer
** exactly, shape x dtype size equal to each byte range, names unique.
*/
#ifndef LT_SERIAL_SAFETENSORS_H
#define LT_SERIAL_SAFETENSORS_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include "core/tensor.h"

#define LT_ST_MAX_HEADER 100000000u   /* the reference implementation's bound */

typedef struct lt_st_entry {
  char *name;
  lt_dtype dtype;
  int ndim;
  int64_t sizes[LT_MAX_DIMS];
  uint64_t begin, end;   /* byte range in the data buffer */
} lt_st_entry;

typedef struct lt_st_header {
  lt_st_entry *entries;  /* sorted by offset */
  int n;
  char **meta_keys, **meta_vals;
  int nmeta;
  bool has_meta;         /* a __metadata__ object was present (possibly empty) */
  uint64_t data_start;   /* 8 + N */
} lt_st_header;

/* dtype name in the format ("F32") <-> lt_dtype; -1 for names lutorch lacks */
int lt_st_dtype_from_name(const char *name);
const char *lt_st_dtype_name(lt_dtype dt);

/* Parse and check the JSON header; data_len is the size of the byte buffer
** that follows it. `what` names the source ("'x.safetensors'"). */
int lt_st_parse_header(const char *json, size_t len, uint64_t data_len, lt_st_header *h, const char *what);
void lt_st_header_free(lt_st_header *h);

/* Read a whole file: the header into h and one tensor per entry into *out
** (array of h->n new references, freed with lt_st_free_tensors). With
** use_mmap the tensors borrow a private copy-on-write mapping of the file
** (tensors whose bytes are misaligned for their dtype are copied). */
int lt_st_load(const char *path, bool use_mmap, lt_st_header *h, lt_tensor ***out);
void lt_st_free_tensors(lt_tensor **ts, int n);

/* Write tensors (any strides: written contiguously; views of one storage
** become separate entries) and string metadata, atomically. Entries are
** ordered by decreasing element size, then name, so that every tensor is
** aligned for its dtype in a mapped file. */
int lt_st_save(const char *path, int n, const char *const *names, lt_tensor *const *ts,
               int nmeta, const char *const *meta_keys, const char *const *meta_vals);

#endif
