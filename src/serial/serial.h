/*
** serial.h — lutorch's own file format (man/serialization.md describes it
** byte by byte): a 64-byte header, a metadata block (storages, tensors,
** tables and values), 64-byte aligned storage data, and a trailer of
** per-storage checksums. This part is the C side: header, layout, storage
** and tensor records, reading and verifying data. The value graph (tables,
** classes) is walked by the Lua binding (src/vm/lserial.c) with the cursor
** and sink primitives of io.h. No Lua here.
*/
#ifndef LT_SERIAL_H
#define LT_SERIAL_H

#include "serial/io.h"
#include "serial/serial_hash.h"
#include "core/tensor.h"

#define LT_SERIAL_MAGIC "\x89LTS\r\n\x1a\n"   /* 8 bytes, PNG-style: catches text-mode mangling */
#define LT_SERIAL_END_MAGIC "LTS-END\n"
#define LT_SERIAL_VERSION 1u
#define LT_SERIAL_HEADER_SIZE 64
#define LT_SERIAL_ALIGN 64
#define LT_SERIAL_MAX_DEPTH_NONE 0

/* value tags in the metadata */
enum {
  LT_SV_NIL = 0, LT_SV_FALSE = 1, LT_SV_TRUE = 2, LT_SV_INT = 3, LT_SV_FLOAT = 4,
  LT_SV_STRING = 5, LT_SV_TABLE = 6, LT_SV_TENSOR = 7,
  LT_SV_DTYPE = 8, LT_SV_DEVICE = 9,   /* interned values, by name */
  LT_SV_NTAGS
};

typedef struct lt_serial_header {
  uint32_t version, flags;
  uint64_t total_len;    /* bytes of the whole object, header to trailer */
  uint64_t meta_len;     /* metadata starts at byte 64 */
  uint64_t data_offset;  /* multiple of 64, >= 64 + meta_len */
  uint64_t data_len;
  uint64_t meta_hash;    /* XXH64 of the metadata */
} lt_serial_header;

void lt_serial_header_encode(const lt_serial_header *h, unsigned char out[LT_SERIAL_HEADER_SIZE]);
/* Validate magic, version, header checksum and the layout's arithmetic.
** `avail` is how many bytes the source holds from the header on (UINT64_MAX:
** unknown, as for a stream); total_len must fit in it. -1 with an error. */
int lt_serial_header_decode(const unsigned char *in, size_t n, uint64_t avail, lt_serial_header *h);
/* 1 when the first bytes are our magic */
int lt_serial_is_ours(const unsigned char *p, size_t n);

/* ---- writing ---- */
/* One storage's bytes to write: [data, data + nbytes). */
typedef struct lt_serial_blob { const void *data; uint64_t nbytes; uint64_t rel_offset; } lt_serial_blob;
/* Give each blob its offset inside the data section (64-aligned, in order); data_len out. */
uint64_t lt_serial_layout(lt_serial_blob *blobs, size_t n);
/* Write header, metadata, data and trailer. 0 or -1 (the sink reports). */
int lt_serial_write(lt_io_sink *s, const void *meta, size_t meta_len,
                    const lt_serial_blob *blobs, size_t n);

/* tensor record in the metadata: dtype, device, storage index, offset,
** sizes and strides (relative to the saved storage bytes) and flags */
int lt_serial_put_tensor(lt_io_sink *s, const lt_tensor *t, uint64_t storage_index,
                         int64_t offset_elems, bool requires_grad);
/* zigzag varints for signed numbers */
int lt_serial_put_svarint(lt_io_sink *s, int64_t v);
int lt_serial_get_svarint(lt_io_cursor *c, int64_t *v, const char *what);

/* ---- reading ---- */
typedef struct lt_serial_storage_rec { uint64_t rel_offset, nbytes, hash; lt_storage *loaded; } lt_serial_storage_rec;

typedef struct lt_serial_reader {
  const char *name;            /* for messages: "'x.pt'", "string", "file handle" */
  lt_serial_header h;
  /* the source: memory (a string, a read stream, or a whole-file mapping) or a file descriptor */
  const unsigned char *mem;    /* NULL: read through fd */
  uint64_t base;               /* offset of the header in the fd (0) */
  int fd;
  lt_io_map *map;              /* mmap loads: storages borrow pieces of it */
  bool verify_data;            /* check storage checksums as data is read */
  unsigned char *meta_owned;   /* metadata read from fd */
  lt_io_cursor meta;           /* cursor over the metadata */
  size_t nstorages;
  lt_serial_storage_rec *storages;
} lt_serial_reader;

/* Set up over memory [p, p+n) holding one object from its header on (the
** memory must outlive the reader; with map != NULL storages borrow it). */
int lt_serial_reader_mem(lt_serial_reader *r, const char *name, const void *p, size_t n, lt_io_map *map);
/* Set up over an open file (pread; storages are read into fresh memory). */
int lt_serial_reader_fd(lt_serial_reader *r, const char *name, int fd, uint64_t size);
/* After setup: read the storage table from the metadata cursor and the trailer. */
int lt_serial_read_storages(lt_serial_reader *r);
/* Storage i (0-based): read (or borrow from the mapping) and verify. New reference. */
lt_storage *lt_serial_storage(lt_serial_reader *r, uint64_t i);
/* Parse one tensor record at the metadata cursor. New reference. */
lt_tensor *lt_serial_get_tensor(lt_serial_reader *r);
void lt_serial_reader_close(lt_serial_reader *r);

/* Recompute every checksum of an object in memory (the hostile-input tests
** use it to get past the checksums and reach the parser). 0 or -1. */
int lt_serial_fix_checksums(unsigned char *p, size_t n);

#endif
