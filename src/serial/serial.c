/*
** serial.c — header, layout, storage table, tensor records and data
** reading for lutorch's format. Every number taken from a file is checked
** against what the file can hold before it is used or allocated.
*/
#include "serial/serial.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CHUNK ((size_t)1 << 20)   /* hash a piece while it is still in cache */
/* Reads from a file go in pieces of this size. Measured cold on a virtual disk
** (bench/README.md, issue 27): 8 MiB preads were the steadiest, near dd's time;
** 1 MiB ones took 3x as long, 32 MiB ones and WILLNEED hints ahead of the reads
** up to 3x, erratically. */
#define READ_CHUNK ((size_t)8 << 20)
#define PAGE_BYTES ((uint64_t)4096)   /* read pieces end on these boundaries of the file */

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

/* ---- header ---- */

void lt_serial_header_encode(const lt_serial_header *h, unsigned char out[LT_SERIAL_HEADER_SIZE]) {
  memcpy(out, LT_SERIAL_MAGIC, 8);
  lt_io_st32(out + 8, h->version);
  lt_io_st32(out + 12, h->flags);
  lt_io_st64(out + 16, h->total_len);
  lt_io_st64(out + 24, h->meta_len);
  lt_io_st64(out + 32, h->data_offset);
  lt_io_st64(out + 40, h->data_len);
  lt_io_st64(out + 48, h->meta_hash);
  lt_io_st64(out + 56, lt_xxh64(out, 56));
}

int lt_serial_is_ours(const unsigned char *p, size_t n) {
  return n >= 8 && memcmp(p, LT_SERIAL_MAGIC, 8) == 0;
}

int lt_serial_header_decode(const unsigned char *in, size_t n, uint64_t avail, lt_serial_header *h) {
  if (n < 8 || memcmp(in, LT_SERIAL_MAGIC, n < 8 ? n : 8) != 0) {
    if (n == 0) return lt_error("empty: not a lutorch file");
    if (memcmp(in, LT_SERIAL_MAGIC, n < 8 ? n : 8) != 0) return lt_error("not a lutorch file (bad magic)");
  }
  if (n < LT_SERIAL_HEADER_SIZE)
    return lt_error("truncated: the header needs %d bytes, %zu present", LT_SERIAL_HEADER_SIZE, n);
  h->version = lt_io_le32(in + 8);
  if (h->version != LT_SERIAL_VERSION)
    return lt_error("unsupported format version %u (this lutorch reads version %u)", h->version, LT_SERIAL_VERSION);
  if (lt_io_le64(in + 56) != lt_xxh64(in, 56)) return lt_error("corrupt: header checksum mismatch");
  h->flags = lt_io_le32(in + 12);
  h->total_len = lt_io_le64(in + 16);
  h->meta_len = lt_io_le64(in + 24);
  h->data_offset = lt_io_le64(in + 32);
  h->data_len = lt_io_le64(in + 40);
  h->meta_hash = lt_io_le64(in + 48);
  if (h->flags != 0) return lt_error("unsupported format flags 0x%x", h->flags);
  uint64_t meta_end, data_end, min_total;
  if (lt_io_add_ok(LT_SERIAL_HEADER_SIZE, h->meta_len, &meta_end) < 0 || h->data_offset < meta_end ||
      h->data_offset % LT_SERIAL_ALIGN != 0 ||
      lt_io_add_ok(h->data_offset, h->data_len, &data_end) < 0 ||
      lt_io_add_ok(data_end, 8, &min_total) < 0 || h->total_len < min_total ||
      (h->total_len - data_end) % 8 != 0)
    return lt_error("corrupt: inconsistent section sizes in the header (metadata %llu bytes, data %llu bytes at %llu, total %llu)",
                    (unsigned long long)h->meta_len, (unsigned long long)h->data_len,
                    (unsigned long long)h->data_offset, (unsigned long long)h->total_len);
  if (h->total_len > avail)
    return lt_error("truncated: the header says %llu bytes, only %llu present",
                    (unsigned long long)h->total_len, (unsigned long long)avail);
  return 0;
}

/* ---- writing ---- */

uint64_t lt_serial_layout(lt_serial_blob *blobs, size_t n) {
  uint64_t end = 0;
  for (size_t i = 0; i < n; i++) {
    blobs[i].rel_offset = align_up(end, LT_SERIAL_ALIGN);
    end = blobs[i].rel_offset + blobs[i].nbytes;
  }
  return end;
}

int lt_serial_put_svarint(lt_io_sink *s, int64_t v) {
  return lt_io_put_varint(s, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

int lt_serial_get_svarint(lt_io_cursor *c, int64_t *v, const char *what) {
  uint64_t u;
  if (lt_io_get_varint(c, &u, what) < 0) return -1;
  *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
  return 0;
}

int lt_serial_write(lt_io_sink *s, const void *meta, size_t meta_len,
                    const lt_serial_blob *blobs, size_t n) {
  lt_serial_header h;
  memset(&h, 0, sizeof h);
  h.version = LT_SERIAL_VERSION;
  h.meta_len = meta_len;
  h.data_offset = align_up(LT_SERIAL_HEADER_SIZE + (uint64_t)meta_len, LT_SERIAL_ALIGN);
  h.data_len = n ? blobs[n - 1].rel_offset + blobs[n - 1].nbytes : 0;
  h.total_len = h.data_offset + h.data_len + 8 * (uint64_t)n + 8;
  h.meta_hash = lt_xxh64(meta, meta_len);
  unsigned char hdr[LT_SERIAL_HEADER_SIZE];
  lt_serial_header_encode(&h, hdr);
  uint64_t base = s->pos;
  uint64_t *hashes = (uint64_t *)malloc((n ? n : 1) * sizeof *hashes);
  if (!hashes) return lt_error("out of memory");
  int rc = lt_io_put(s, hdr, sizeof hdr) | lt_io_put(s, meta, meta_len);
  rc |= lt_io_put_zeros(s, (size_t)(base + h.data_offset - s->pos));
  for (size_t i = 0; i < n && rc == 0; i++) {
    rc |= lt_io_put_zeros(s, (size_t)(base + h.data_offset + blobs[i].rel_offset - s->pos));
    lt_xxh64_state st;
    lt_xxh64_init(&st);
    const unsigned char *p = (const unsigned char *)blobs[i].data;
    for (uint64_t left = blobs[i].nbytes; left > 0 && rc == 0;) {
      size_t k = left < CHUNK ? (size_t)left : CHUNK;
      lt_xxh64_update(&st, p, k);
      rc |= lt_io_put(s, p, k);
      p += k; left -= k;
    }
    hashes[i] = lt_xxh64_final(&st);
  }
  for (size_t i = 0; i < n && rc == 0; i++) rc |= lt_io_put_u64(s, hashes[i]);
  if (rc == 0) rc |= lt_io_put(s, LT_SERIAL_END_MAGIC, 8);
  free(hashes);
  return rc ? -1 : 0;
}

int lt_serial_put_tensor(lt_io_sink *s, const lt_tensor *t, uint64_t storage_index,
                         int64_t offset_elems, bool requires_grad) {
  char dev[32];
  lt_device_format(lt_tensor_device(t), dev, sizeof dev);
  size_t dl = strlen(dev);
  int rc = lt_io_put_u8(s, t->dtype) | lt_io_put_varint(s, dl) | lt_io_put(s, dev, dl) |
           lt_io_put_varint(s, storage_index) | lt_io_put_varint(s, (uint64_t)offset_elems) |
           lt_io_put_u8(s, (uint8_t)t->ndim);
  for (int d = 0; d < t->ndim; d++) rc |= lt_io_put_varint(s, (uint64_t)t->sizes[d]);
  for (int d = 0; d < t->ndim; d++) rc |= lt_serial_put_svarint(s, t->strides[d]);
  rc |= lt_io_put_u8(s, requires_grad ? 1 : 0);
  return rc ? -1 : 0;
}

/* ---- reading ---- */

static void reader_zero(lt_serial_reader *r, const char *name) {
  memset(r, 0, sizeof *r);
  r->fd = -1;
  r->name = name;
  r->verify_data = true;
}

static int check_meta(lt_serial_reader *r, const unsigned char *meta) {
  if (lt_xxh64(meta, (size_t)r->h.meta_len) != r->h.meta_hash)
    return lt_error("%s is corrupt: metadata checksum mismatch", r->name);
  lt_io_cursor_init(&r->meta, meta, (size_t)r->h.meta_len);
  return 0;
}

static int prefixed(lt_serial_reader *r) {
  char msg[512];
  snprintf(msg, sizeof msg, "%s", lt_error_message());
  return lt_error("%s: %s", r->name, msg);
}

int lt_serial_reader_mem(lt_serial_reader *r, const char *name, const void *p, size_t n, lt_io_map *map) {
  reader_zero(r, name);
  r->mem = (const unsigned char *)p;
  r->map = map;
  if (lt_serial_header_decode(r->mem, n, n, &r->h) < 0) return prefixed(r);
  return check_meta(r, r->mem + LT_SERIAL_HEADER_SIZE);
}

int lt_serial_reader_fd(lt_serial_reader *r, const char *name, int fd, uint64_t size) {
  reader_zero(r, name);
  r->fd = fd;
  unsigned char hdr[LT_SERIAL_HEADER_SIZE];
  size_t got = size < sizeof hdr ? (size_t)size : sizeof hdr;
  if (lt_io_pread_full(fd, hdr, got, 0, name) < 0) return -1;
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  if (lt_serial_header_decode(hdr, got, size, &r->h) < 0) return prefixed(r);
  /* meta_len <= total_len <= size: the file really holds this many bytes */
  r->meta_owned = (unsigned char *)malloc(r->h.meta_len ? (size_t)r->h.meta_len : 1);
  if (!r->meta_owned) return lt_error("out of memory");
  if (lt_io_pread_full(fd, r->meta_owned, (size_t)r->h.meta_len, LT_SERIAL_HEADER_SIZE, name) < 0) return -1;
  return check_meta(r, r->meta_owned);
}

int lt_serial_read_storages(lt_serial_reader *r) {
  uint64_t n;
  if (lt_io_get_varint(&r->meta, &n, "storage count") < 0) return prefixed(r);
  uint64_t trailer = r->h.total_len - (r->h.data_offset + r->h.data_len);
  if (n > lt_io_left(&r->meta) / 2 || trailer != 8 * n + 8)
    return lt_error("%s is corrupt: %llu storages do not fit the file", r->name, (unsigned long long)n);
  r->storages = (lt_serial_storage_rec *)calloc(n ? (size_t)n : 1, sizeof *r->storages);
  if (!r->storages) return lt_error("out of memory");
  r->nstorages = (size_t)n;
  uint64_t prev_end = 0;
  for (uint64_t i = 0; i < n; i++) {
    lt_serial_storage_rec *s = &r->storages[i];
    uint64_t end;
    if (lt_io_get_varint(&r->meta, &s->rel_offset, "storage offset") < 0 ||
        lt_io_get_varint(&r->meta, &s->nbytes, "storage size") < 0) return prefixed(r);
    /* in order and disjoint: the storages together never exceed the data section */
    if (s->rel_offset % LT_SERIAL_ALIGN != 0 || s->rel_offset < prev_end ||
        lt_io_add_ok(s->rel_offset, s->nbytes, &end) < 0 || end > r->h.data_len)
      return lt_error("%s is corrupt: storage %llu (%llu bytes at %llu) lies outside the data section (%llu bytes)",
                      r->name, (unsigned long long)i + 1, (unsigned long long)s->nbytes,
                      (unsigned long long)s->rel_offset, (unsigned long long)r->h.data_len);
    prev_end = end;
  }
  uint64_t toff = r->h.data_offset + r->h.data_len;
  unsigned char *tr = NULL;
  const unsigned char *tp;
  if (r->mem) tp = r->mem + toff;
  else {
    tr = (unsigned char *)malloc((size_t)trailer);
    if (!tr) return lt_error("out of memory");
    if (lt_io_pread_full(r->fd, tr, (size_t)trailer, toff, r->name) < 0) { free(tr); return -1; }
    tp = tr;
  }
  for (uint64_t i = 0; i < n; i++) r->storages[i].hash = lt_io_le64(tp + 8 * i);
  int bad = memcmp(tp + 8 * n, LT_SERIAL_END_MAGIC, 8) != 0;
  free(tr);
  if (bad) return lt_error("%s is corrupt: the trailer's end mark is missing", r->name);
  return 0;
}

/* Fresh memory that a file read will fill: small pages. The CPU allocator asks
** for transparent huge pages on big blocks (good for compute on them), but a
** load's time is mostly first-touch faults plus the copy, and in a VM whose
** host takes back freed memory (virtio free page reporting, as on the machine
** of bench/README.md) a huge page's first touch cost 1.8 s per GiB against
** 0.4 s for small pages; the load took 1.8-2.3 s instead of 0.85-0.9 s. Advice
** only: a block that is already faulted in keeps the pages it has. */
static void small_pages(void *p, size_t n) {
#ifdef MADV_NOHUGEPAGE
  uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)p;
  uintptr_t lo = (a + pg - 1) & ~(pg - 1), hi = (a + n) & ~(pg - 1);
  if (hi > lo && hi - lo >= ((size_t)2 << 20)) madvise((void *)lo, hi - lo, MADV_NOHUGEPAGE);
#else
  (void)p; (void)n;
#endif
}

static int verify(lt_serial_reader *r, uint64_t i, uint64_t got) {
  if (got != r->storages[i].hash)
    return lt_error("%s is corrupt: checksum mismatch in the data of storage %llu (%llu bytes)",
                    r->name, (unsigned long long)i + 1, (unsigned long long)r->storages[i].nbytes);
  return 0;
}

lt_storage *lt_serial_storage(lt_serial_reader *r, uint64_t i) {
  if (i >= r->nstorages)
    return (lt_storage *)lt_error_null("%s is corrupt: storage %llu does not exist (%zu storages)",
                                       r->name, (unsigned long long)i + 1, r->nstorages);
  lt_serial_storage_rec *rec = &r->storages[i];
  if (rec->loaded) { lt_storage_retain(rec->loaded); return rec->loaded; }
  uint64_t off = r->h.data_offset + rec->rel_offset;
  size_t nb = (size_t)rec->nbytes;
  lt_storage *s;
  if (r->map) {
    const unsigned char *p = r->mem + off;
    if (r->verify_data && verify(r, i, lt_xxh64(p, nb)) < 0) return NULL;
    lt_io_map_retain(r->map);
    s = lt_storage_from_blob((void *)p, nb, lt_device_cpu(), lt_io_map_release_cb, r->map);
    if (!s) { lt_io_map_release(r->map); return NULL; }
  } else {
    s = lt_storage_new(lt_device_cpu(), nb);
    if (!s) return NULL;
    lt_xxh64_state st;
    lt_xxh64_init(&st);
    unsigned char *dst = (unsigned char *)s->data;
    if (r->mem) {
      for (size_t done = 0; done < nb;) {
        size_t k = nb - done < CHUNK ? nb - done : CHUNK;
        memcpy(dst + done, r->mem + off + done, k);
        if (r->verify_data) lt_xxh64_update(&st, dst + done, k);
        done += k;
      }
    } else {
      small_pages(dst, nb);
      /* from a file: READ_CHUNK preads, each hashed at once while it is still in
      ** cache; meanwhile the kernel's readahead (doubled by the SEQUENTIAL hint)
      ** fetches the next ones, so hashing overlaps the disk. Pieces end on page
      ** boundaries of the file. */
      for (size_t done = 0; done < nb;) {
        size_t k = READ_CHUNK - (size_t)((off + done) & (PAGE_BYTES - 1));
        if (k > nb - done) k = nb - done;
        if (lt_io_pread_full(r->fd, dst + done, k, off + done, r->name) < 0) { lt_storage_release(s); return NULL; }
        if (r->verify_data) lt_xxh64_update(&st, dst + done, k);
        done += k;
      }
    }
    if (r->verify_data && verify(r, i, lt_xxh64_final(&st)) < 0) { lt_storage_release(s); return NULL; }
  }
  rec->loaded = s;
  lt_storage_retain(s);
  return s;
}

lt_tensor *lt_serial_get_tensor(lt_serial_reader *r) {
  lt_io_cursor *c = &r->meta;
  uint8_t dt, ndim, flags;
  uint64_t dl, sidx, off;
  int64_t sizes[LT_MAX_DIMS], strides[LT_MAX_DIMS];
  char dev[33];
  if (lt_io_get_u8(c, &dt, "tensor dtype") < 0 || lt_io_get_varint(c, &dl, "tensor device") < 0) goto trunc;
  if (dt >= LT_NUM_DTYPES) return (lt_tensor *)lt_error_null("%s is corrupt: unknown dtype code %u", r->name, dt);
  if (dl > 32) return (lt_tensor *)lt_error_null("%s is corrupt: device name of %llu bytes", r->name, (unsigned long long)dl);
  if (lt_io_get_bytes(c, dev, (size_t)dl, "tensor device") < 0) goto trunc;
  dev[dl] = 0;
  if (lt_io_get_varint(c, &sidx, "tensor storage") < 0 || lt_io_get_varint(c, &off, "tensor offset") < 0 ||
      lt_io_get_u8(c, &ndim, "tensor dims") < 0) goto trunc;
  if (ndim > LT_MAX_DIMS) return (lt_tensor *)lt_error_null("%s is corrupt: a tensor with %u dims (at most %d)", r->name, ndim, LT_MAX_DIMS);
  for (int d = 0; d < ndim; d++) {
    uint64_t v;
    if (lt_io_get_varint(c, &v, "tensor size") < 0) goto trunc;
    if (v > INT64_MAX) return (lt_tensor *)lt_error_null("%s is corrupt: tensor size %llu", r->name, (unsigned long long)v);
    sizes[d] = (int64_t)v;
  }
  for (int d = 0; d < ndim; d++)
    if (lt_serial_get_svarint(c, &strides[d], "tensor stride") < 0) goto trunc;
  if (lt_io_get_u8(c, &flags, "tensor flags") < 0) goto trunc;
  if (flags > 1 || (flags && !lt_dtype_is_float((lt_dtype)dt)))
    return (lt_tensor *)lt_error_null("%s is corrupt: bad tensor flags 0x%x", r->name, flags);
  if (sidx >= r->nstorages)
    return (lt_tensor *)lt_error_null("%s is corrupt: tensor refers to storage %llu of %zu", r->name, (unsigned long long)sidx + 1, r->nstorages);
  /* the view must lie inside its storage: offset + sum((size-1)*stride) < nbytes/elemsize */
  uint64_t es = lt_dtype_size((lt_dtype)dt), numel = 1, last = off, endb;
  for (int d = 0; d < ndim; d++) {
    if (strides[d] < 0) return (lt_tensor *)lt_error_null("%s is corrupt: negative stride", r->name);
    if (lt_io_mul_ok(numel, (uint64_t)sizes[d], &numel) < 0 || numel > INT64_MAX)
      return (lt_tensor *)lt_error_null("%s is corrupt: tensor element count overflows", r->name);
  }
  if (numel > 0) {
    for (int d = 0; d < ndim; d++) {
      uint64_t ext;
      if (lt_io_mul_ok((uint64_t)sizes[d] - 1, (uint64_t)strides[d], &ext) < 0 || lt_io_add_ok(last, ext, &last) < 0)
        return (lt_tensor *)lt_error_null("%s is corrupt: tensor extent overflows", r->name);
    }
    if (lt_io_add_ok(last, 1, &endb) < 0 || lt_io_mul_ok(endb, es, &endb) < 0 || endb > r->storages[sidx].nbytes || endb > INT64_MAX)
      return (lt_tensor *)lt_error_null("%s is corrupt: a %s tensor reaches byte %llu of a %llu-byte storage",
                                        r->name, lt_dtype_name((lt_dtype)dt), (unsigned long long)endb,
                                        (unsigned long long)r->storages[sidx].nbytes);
  } else if (off > r->storages[sidx].nbytes) {
    return (lt_tensor *)lt_error_null("%s is corrupt: tensor offset past its storage", r->name);
  }
  lt_device d;
  if (lt_device_parse(dev, &d) < 0) return (lt_tensor *)lt_error_null("%s is corrupt: bad device name", r->name);
  lt_storage *s = lt_serial_storage(r, sidx);
  if (!s) return NULL;
  lt_tensor *t = lt_tensor_new_view(s, (lt_dtype)dt, (int64_t)off, ndim, sizes, strides);
  lt_storage_release(s);
  if (t && flags) t->requires_grad = true;   /* the binding turns this into a proper leaf */
  return t;
trunc:
  return (lt_tensor *)lt_error_null("%s is corrupt: %s", r->name, lt_error_message());
}

void lt_serial_reader_close(lt_serial_reader *r) {
  for (size_t i = 0; i < r->nstorages; i++)
    if (r->storages[i].loaded) lt_storage_release(r->storages[i].loaded);
  free(r->storages); r->storages = NULL; r->nstorages = 0;
  free(r->meta_owned); r->meta_owned = NULL;
}

int lt_serial_fix_checksums(unsigned char *p, size_t n) {
  if (n < LT_SERIAL_HEADER_SIZE || !lt_serial_is_ours(p, n)) return lt_error("not a lutorch object");
  uint64_t meta_len = lt_io_le64(p + 24), doff = lt_io_le64(p + 32), dlen = lt_io_le64(p + 40);
  if (meta_len <= n - LT_SERIAL_HEADER_SIZE) {
    lt_io_st64(p + 48, lt_xxh64(p + LT_SERIAL_HEADER_SIZE, (size_t)meta_len));
    lt_io_cursor c;
    lt_io_cursor_init(&c, p + LT_SERIAL_HEADER_SIZE, (size_t)meta_len);
    uint64_t ns, ro, nb, end;
    if (lt_io_get_varint(&c, &ns, NULL) == 0 && doff <= n && dlen <= n - doff) {
      for (uint64_t i = 0; i < ns; i++) {
        if (lt_io_get_varint(&c, &ro, NULL) < 0 || lt_io_get_varint(&c, &nb, NULL) < 0) break;
        uint64_t toff = doff + dlen + 8 * i;
        if (ro > dlen || nb > dlen - ro || toff > n || n - toff < 8) break;
        lt_io_st64(p + toff, lt_xxh64(p + doff + ro, (size_t)nb));
        (void)end;
      }
    }
  }
  lt_io_st64(p + 56, lt_xxh64(p, 56));
  lt_error_clear();
  return 0;
}
