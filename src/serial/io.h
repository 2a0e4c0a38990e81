/*
** io.h — the file plumbing every on-disk format shares: an atomic file
** writer, output sinks (file, FILE*, memory), a bounded read cursor over
** memory, whole-file reads and read-only file mappings. No Lua here.
**
** Errors follow the core's rule: functions return -1 (or NULL) and leave a
** message in the error slot (src/core/error.h); they never abort.
** Messages name the path but not the calling function; callers prefix it.
*/
#ifndef LT_SERIAL_IO_H
#define LT_SERIAL_IO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>

/* ---- output sinks ----
** One interface for "bytes go somewhere": an atomically replaced file, an open
** FILE* (a Lua file handle), or a growing memory buffer (torch.serialize).
** Writes are buffered; `pos` counts every byte accepted so far, which is
** what alignment padding is computed from. After the first failure every
** later call fails too, so a writer may check only at the end. */
typedef struct lt_io_sink lt_io_sink;
struct lt_io_sink {
  int (*write)(lt_io_sink *s, const void *p, size_t n);   /* unbuffered, all or -1 */
  uint64_t pos;          /* bytes accepted (buffered or written) */
  int failed;
  /* buffering */
  unsigned char *buf;
  size_t buflen, bufcap;
  /* kind-specific */
  int fd;                /* atomic file: the temporary file */
  char *path, *tmp_path; /* atomic file */
  FILE *fp;              /* FILE* sink */
  unsigned char *mem;    /* memory sink: the bytes */
  size_t memlen, memcap;
};

/* Atomic file: bytes go to a temporary file in the same directory as `path`
** ("<path>.tmp.<pid>.<n>"); lt_io_sink_commit flushes, fsyncs, renames over
** `path` and fsyncs the directory, so a reader sees the old file or the new
** one, never a half-written one. lt_io_sink_close without commit removes the
** temporary file. */
int lt_io_sink_open_file(lt_io_sink *s, const char *path);
/* Buffered writes to an open FILE* (not closed by us; commit fflushes it). */
int lt_io_sink_open_fp(lt_io_sink *s, FILE *fp);
/* Memory: lt_io_sink_take_mem hands over the bytes after commit. */
int lt_io_sink_open_mem(lt_io_sink *s);

int lt_io_put(lt_io_sink *s, const void *p, size_t n);
int lt_io_put_zeros(lt_io_sink *s, size_t n);
/* pad with zeros until pos is a multiple of align (a power of two) */
int lt_io_pad_to(lt_io_sink *s, size_t align);
int lt_io_put_u8(lt_io_sink *s, uint8_t v);
int lt_io_put_u32(lt_io_sink *s, uint32_t v);   /* little-endian */
int lt_io_put_u64(lt_io_sink *s, uint64_t v);   /* little-endian */
int lt_io_put_varint(lt_io_sink *s, uint64_t v); /* LEB128 */
/* Finish: flush buffers; atomic file: fsync + rename + fsync dir. 0 or -1
** (on -1 the temporary file is gone and the old file is untouched). */
int lt_io_sink_commit(lt_io_sink *s);
/* Free everything; removes an uncommitted temporary file. Safe to call twice. */
void lt_io_sink_close(lt_io_sink *s);
/* Memory sink after commit: the bytes (caller frees with free()). */
unsigned char *lt_io_sink_take_mem(lt_io_sink *s, size_t *len);

/* Write a whole buffer to `path` atomically (one call of the above). */
int lt_io_write_file_atomic(const char *path, const void *data, size_t n);

/* ---- bounded read cursor ----
** Every read checks `n <= size - pos` (never `pos + n <= size`, which can
** wrap), so a hostile length can never read outside [base, base+size).
** Failed reads set the error slot ("truncated: <what> needs N bytes, M left")
** and return -1; the cursor does not move. */
typedef struct lt_io_cursor {
  const unsigned char *base;
  size_t size;
  size_t pos;
} lt_io_cursor;

static inline void lt_io_cursor_init(lt_io_cursor *c, const void *p, size_t n) {
  c->base = (const unsigned char *)p; c->size = n; c->pos = 0;
}
static inline size_t lt_io_left(const lt_io_cursor *c) { return c->size - c->pos; }
/* 0 if n more bytes are available, else -1 with "<what> needs n bytes, m left" */
int lt_io_need(const lt_io_cursor *c, uint64_t n, const char *what);
/* borrow n bytes (pointer into the buffer) and advance */
const void *lt_io_take(lt_io_cursor *c, uint64_t n, const char *what);
int lt_io_get_bytes(lt_io_cursor *c, void *out, size_t n, const char *what);
int lt_io_get_u8(lt_io_cursor *c, uint8_t *v, const char *what);
int lt_io_get_u32(lt_io_cursor *c, uint32_t *v, const char *what);
int lt_io_get_u64(lt_io_cursor *c, uint64_t *v, const char *what);
/* LEB128, at most 10 bytes, no value above 2^64-1 */
int lt_io_get_varint(lt_io_cursor *c, uint64_t *v, const char *what);
int lt_io_seek(lt_io_cursor *c, uint64_t pos, const char *what);

/* little-endian helpers on raw bytes */
static inline uint32_t lt_io_le32(const void *p) {
  const unsigned char *b = (const unsigned char *)p;
  return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}
static inline uint64_t lt_io_le64(const void *p) {
  return (uint64_t)lt_io_le32(p) | (uint64_t)lt_io_le32((const unsigned char *)p + 4) << 32;
}
static inline void lt_io_st32(void *p, uint32_t v) {
  unsigned char *b = (unsigned char *)p;
  b[0] = (unsigned char)v; b[1] = (unsigned char)(v >> 8); b[2] = (unsigned char)(v >> 16); b[3] = (unsigned char)(v >> 24);
}
static inline void lt_io_st64(void *p, uint64_t v) {
  lt_io_st32(p, (uint32_t)v); lt_io_st32((unsigned char *)p + 4, (uint32_t)(v >> 32));
}

/* overflow-checked arithmetic for sizes read from files: 0 ok, -1 overflow */
static inline int lt_io_mul_ok(uint64_t a, uint64_t b, uint64_t *out) {
  return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}
static inline int lt_io_add_ok(uint64_t a, uint64_t b, uint64_t *out) {
  return __builtin_add_overflow(a, b, out) ? -1 : 0;
}

/* ---- files ---- */
/* Open for reading; size from fstat. -1 with "cannot open '<path>': <strerror>". */
int lt_io_open_read(const char *path, int *fd, uint64_t *size);
/* Read exactly n bytes at offset off (pread loop). -1 on error or short file. */
int lt_io_pread_full(int fd, void *buf, size_t n, uint64_t off, const char *path);
/* Whole file into malloc'd memory (+1 NUL byte not counted in *len). NULL on error.
** Refuses files larger than `limit` bytes (0: no limit) with a clear error. */
unsigned char *lt_io_read_file(const char *path, size_t *len, uint64_t limit);
/* Rest of an open FILE* (from its current position) into malloc'd memory;
** grows geometrically, so a hostile stream costs only what it really sends. */
unsigned char *lt_io_read_fp(FILE *fp, size_t *len);

/* Read-only private mapping of a whole file. A mapping is refcounted so that
** many storages can borrow pieces of it and the last one unmaps. */
typedef struct lt_io_map {
  int refcount;          /* atomic */
  void *addr;
  size_t len;
} lt_io_map;
lt_io_map *lt_io_map_file(const char *path);      /* NULL with error (empty file: error) */
lt_io_map *lt_io_map_fd(int fd, size_t len, const char *path);
void lt_io_map_retain(lt_io_map *m);
void lt_io_map_release(lt_io_map *m);
/* release callback with the signature lt_storage_from_blob wants: ctx is the map */
void lt_io_map_release_cb(void *data, void *ctx);

#endif
