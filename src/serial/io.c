/*
** io.c — atomic file writer, output sinks, bounded cursor, file reads and
** mappings shared by the serialization formats.
*/
#include "serial/io.h"
#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SINK_BUFCAP ((size_t)1 << 20)

/* ---- sinks ---- */

static int write_fd_all(int fd, const void *p, size_t n, const char *path) {
  const char *b = (const char *)p;
  while (n > 0) {
    /* write() caps a single call near 2 GiB on Linux; keep chunks well under */
    size_t chunk = n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n;
    ssize_t w = write(fd, b, chunk);
    if (w < 0) {
      if (errno == EINTR) continue;
      return lt_error("cannot write '%s': %s", path, strerror(errno));
    }
    b += w; n -= (size_t)w;
  }
  return 0;
}

static int file_write(lt_io_sink *s, const void *p, size_t n) {
  return write_fd_all(s->fd, p, n, s->tmp_path);
}

static int fp_write(lt_io_sink *s, const void *p, size_t n) {
  if (n && fwrite(p, 1, n, s->fp) != n)
    return lt_error("cannot write to file handle: %s", strerror(errno));
  return 0;
}

static int mem_write(lt_io_sink *s, const void *p, size_t n) {
  if (n > s->memcap - s->memlen) {
    size_t cap = s->memcap ? s->memcap : 4096;
    while (cap - s->memlen < n) {
      if (cap > SIZE_MAX / 2) return lt_error("out of memory");
      cap *= 2;
    }
    unsigned char *m = (unsigned char *)realloc(s->mem, cap);
    if (!m) return lt_error("out of memory (%zu bytes)", cap);
    s->mem = m; s->memcap = cap;
  }
  if (n) memcpy(s->mem + s->memlen, p, n);
  s->memlen += n;
  return 0;
}

static void sink_zero(lt_io_sink *s) {
  memset(s, 0, sizeof *s);
  s->fd = -1;
}

static int sink_alloc_buf(lt_io_sink *s) {
  s->buf = (unsigned char *)malloc(SINK_BUFCAP);
  if (!s->buf) return lt_error("out of memory");
  s->bufcap = SINK_BUFCAP;
  return 0;
}

int lt_io_sink_open_file(lt_io_sink *s, const char *path) {
  static atomic_uint counter;
  sink_zero(s);
  size_t n = strlen(path) + 64;
  s->path = strdup(path);
  s->tmp_path = (char *)malloc(n);
  if (!s->path || !s->tmp_path) { lt_io_sink_close(s); return lt_error("out of memory"); }
  snprintf(s->tmp_path, n, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&counter, 1));
  s->fd = open(s->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (s->fd < 0) {
    int e = errno;
    free(s->tmp_path); s->tmp_path = NULL;   /* nothing to remove */
    lt_io_sink_close(s);
    return lt_error("cannot create '%s': %s", path, strerror(e));
  }
  s->write = file_write;
  if (sink_alloc_buf(s) < 0) { lt_io_sink_close(s); return -1; }
  return 0;
}

int lt_io_sink_open_fp(lt_io_sink *s, FILE *fp) {
  sink_zero(s);
  s->fp = fp;
  s->write = fp_write;
  if (sink_alloc_buf(s) < 0) { lt_io_sink_close(s); return -1; }
  return 0;
}

int lt_io_sink_open_mem(lt_io_sink *s) {
  sink_zero(s);
  s->write = mem_write;   /* unbuffered: the memory is the buffer */
  return 0;
}

static int sink_flush(lt_io_sink *s) {
  if (s->buflen) {
    if (s->write(s, s->buf, s->buflen) < 0) { s->failed = 1; return -1; }
    s->buflen = 0;
  }
  return 0;
}

int lt_io_put(lt_io_sink *s, const void *p, size_t n) {
  if (s->failed) return -1;
  if (n == 0) return 0;
  if (s->bufcap && n < s->bufcap) {
    if (n > s->bufcap - s->buflen && sink_flush(s) < 0) return -1;
    memcpy(s->buf + s->buflen, p, n);
    s->buflen += n;
  } else {
    /* big blocks (tensor data) go straight through, no extra copy */
    if (sink_flush(s) < 0) return -1;
    if (s->write(s, p, n) < 0) { s->failed = 1; return -1; }
  }
  s->pos += n;
  return 0;
}

int lt_io_put_zeros(lt_io_sink *s, size_t n) {
  static const unsigned char z[256];
  while (n > 0) {
    size_t k = n < sizeof z ? n : sizeof z;
    if (lt_io_put(s, z, k) < 0) return -1;
    n -= k;
  }
  return 0;
}

int lt_io_pad_to(lt_io_sink *s, size_t align) {
  size_t r = (size_t)(s->pos & (uint64_t)(align - 1));
  return r ? lt_io_put_zeros(s, align - r) : (s->failed ? -1 : 0);
}

int lt_io_put_u8(lt_io_sink *s, uint8_t v) { return lt_io_put(s, &v, 1); }
int lt_io_put_u32(lt_io_sink *s, uint32_t v) { unsigned char b[4]; lt_io_st32(b, v); return lt_io_put(s, b, 4); }
int lt_io_put_u64(lt_io_sink *s, uint64_t v) { unsigned char b[8]; lt_io_st64(b, v); return lt_io_put(s, b, 8); }
int lt_io_put_varint(lt_io_sink *s, uint64_t v) {
  unsigned char b[10]; int n = 0;
  do { unsigned char c = v & 0x7f; v >>= 7; b[n++] = c | (v ? 0x80 : 0); } while (v);
  return lt_io_put(s, b, (size_t)n);
}

static int fsync_dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  char *dir;
  if (!slash) dir = strdup(".");
  else if (slash == path) dir = strdup("/");
  else dir = strndup(path, (size_t)(slash - path));
  if (!dir) return lt_error("out of memory");
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    /* some filesystems refuse fsync on directories (EINVAL): the rename is done, not an error */
    if (fsync(fd) < 0 && errno != EINVAL && errno != EROFS) {
      int e = errno; close(fd); free(dir);
      return lt_error("cannot sync directory of '%s': %s", path, strerror(e));
    }
    close(fd);
  }
  free(dir);
  return 0;
}

int lt_io_sink_commit(lt_io_sink *s) {
  if (s->failed || sink_flush(s) < 0) { s->failed = 1; lt_io_sink_close(s); return -1; }
  if (s->fp) {
    if (fflush(s->fp) != 0) { s->failed = 1; return lt_error("cannot write to file handle: %s", strerror(errno)); }
    return 0;
  }
  if (s->fd >= 0) {
    int rc = 0;
    if (fsync(s->fd) < 0)
      rc = lt_error("cannot sync '%s': %s", s->path, strerror(errno));
    else {
      int r = close(s->fd);
      s->fd = -1;
      if (r < 0) rc = lt_error("cannot write '%s': %s", s->path, strerror(errno));
    }
    if (rc == 0 && rename(s->tmp_path, s->path) < 0)
      rc = lt_error("cannot rename '%s' to '%s': %s", s->tmp_path, s->path, strerror(errno));
    if (rc < 0) { s->failed = 1; lt_io_sink_close(s); return -1; }
    free(s->tmp_path); s->tmp_path = NULL;    /* renamed: nothing to remove any more */
    return fsync_dir_of(s->path);
  }
  return 0;
}

void lt_io_sink_close(lt_io_sink *s) {
  if (s->fd >= 0) { close(s->fd); s->fd = -1; }
  if (s->tmp_path) { unlink(s->tmp_path); free(s->tmp_path); s->tmp_path = NULL; }
  free(s->path); s->path = NULL;
  free(s->buf); s->buf = NULL; s->buflen = s->bufcap = 0;
  free(s->mem); s->mem = NULL; s->memlen = s->memcap = 0;
}

unsigned char *lt_io_sink_take_mem(lt_io_sink *s, size_t *len) {
  unsigned char *m = s->mem;
  *len = s->memlen;
  s->mem = NULL; s->memlen = s->memcap = 0;
  if (!m) m = (unsigned char *)malloc(1);   /* an empty result is still a pointer */
  return m;
}

int lt_io_write_file_atomic(const char *path, const void *data, size_t n) {
  lt_io_sink s;
  if (lt_io_sink_open_file(&s, path) < 0) return -1;
  if (lt_io_put(&s, data, n) < 0 || lt_io_sink_commit(&s) < 0) { lt_io_sink_close(&s); return -1; }
  lt_io_sink_close(&s);
  return 0;
}

/* ---- cursor ---- */

int lt_io_need(const lt_io_cursor *c, uint64_t n, const char *what) {
  if (n > (uint64_t)(c->size - c->pos))
    return lt_error("truncated: %s needs %llu bytes, %zu left", what ? what : "data",
                    (unsigned long long)n, c->size - c->pos);
  return 0;
}

const void *lt_io_take(lt_io_cursor *c, uint64_t n, const char *what) {
  if (lt_io_need(c, n, what) < 0) return NULL;
  const void *p = c->base + c->pos;
  c->pos += (size_t)n;
  return p;
}

int lt_io_get_bytes(lt_io_cursor *c, void *out, size_t n, const char *what) {
  const void *p = lt_io_take(c, n, what);
  if (!p) return -1;
  if (n) memcpy(out, p, n);
  return 0;
}

int lt_io_get_u8(lt_io_cursor *c, uint8_t *v, const char *what) {
  const unsigned char *p = (const unsigned char *)lt_io_take(c, 1, what);
  if (!p) return -1;
  *v = p[0];
  return 0;
}

int lt_io_get_u32(lt_io_cursor *c, uint32_t *v, const char *what) {
  const void *p = lt_io_take(c, 4, what);
  if (!p) return -1;
  *v = lt_io_le32(p);
  return 0;
}

int lt_io_get_u64(lt_io_cursor *c, uint64_t *v, const char *what) {
  const void *p = lt_io_take(c, 8, what);
  if (!p) return -1;
  *v = lt_io_le64(p);
  return 0;
}

int lt_io_get_varint(lt_io_cursor *c, uint64_t *v, const char *what) {
  uint64_t r = 0;
  size_t pos = c->pos;
  for (int shift = 0; shift < 70; shift += 7) {
    if (pos >= c->size)
      return lt_error("truncated: %s ends inside a number", what ? what : "data");
    unsigned char b = c->base[pos++];
    if (shift == 63 && (b & 0x7e))
      return lt_error("corrupt: %s is a number above 2^64", what ? what : "data");
    r |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) { c->pos = pos; *v = r; return 0; }
  }
  return lt_error("corrupt: %s is a number longer than 10 bytes", what ? what : "data");
}

int lt_io_seek(lt_io_cursor *c, uint64_t pos, const char *what) {
  if (pos > c->size)
    return lt_error("corrupt: %s at offset %llu is past the end (%zu bytes)", what ? what : "data",
                    (unsigned long long)pos, c->size);
  c->pos = (size_t)pos;
  return 0;
}

/* ---- files ---- */

int lt_io_open_read(const char *path, int *fd, uint64_t *size) {
  int f = open(path, O_RDONLY | O_CLOEXEC);
  if (f < 0) return lt_error("cannot open '%s': %s", path, strerror(errno));
  struct stat st;
  if (fstat(f, &st) < 0) { int e = errno; close(f); return lt_error("cannot stat '%s': %s", path, strerror(e)); }
  if (S_ISDIR(st.st_mode)) { close(f); return lt_error("'%s' is a directory", path); }
  *fd = f;
  *size = (uint64_t)st.st_size;
  return 0;
}

int lt_io_pread_full(int fd, void *buf, size_t n, uint64_t off, const char *path) {
  char *b = (char *)buf;
  while (n > 0) {
    size_t chunk = n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n;
    ssize_t r = pread(fd, b, chunk, (off_t)off);
    if (r < 0) {
      if (errno == EINTR) continue;
      return lt_error("cannot read '%s': %s", path, strerror(errno));
    }
    if (r == 0) return lt_error("'%s' is truncated (file ended while reading)", path);
    b += r; n -= (size_t)r; off += (uint64_t)r;
  }
  return 0;
}

unsigned char *lt_io_read_file(const char *path, size_t *len, uint64_t limit) {
  int fd; uint64_t size;
  if (lt_io_open_read(path, &fd, &size) < 0) return NULL;
  if ((limit && size > limit) || size >= SIZE_MAX) {
    close(fd);
    return (unsigned char *)lt_error_null("'%s' is too large (%llu bytes)", path, (unsigned long long)size);
  }
  unsigned char *buf = (unsigned char *)malloc((size_t)size + 1);
  if (!buf) { close(fd); return (unsigned char *)lt_error_null("out of memory reading '%s'", path); }
  if (lt_io_pread_full(fd, buf, (size_t)size, 0, path) < 0) { free(buf); close(fd); return NULL; }
  close(fd);
  buf[size] = 0;
  *len = (size_t)size;
  return buf;
}

unsigned char *lt_io_read_fp(FILE *fp, size_t *len) {
  size_t cap = 65536, n = 0;
  unsigned char *buf = (unsigned char *)malloc(cap + 1);
  if (!buf) return (unsigned char *)lt_error_null("out of memory");
  for (;;) {
    if (n == cap) {
      if (cap > SIZE_MAX / 4) { free(buf); return (unsigned char *)lt_error_null("out of memory"); }
      unsigned char *b = (unsigned char *)realloc(buf, cap * 2 + 1);
      if (!b) { free(buf); return (unsigned char *)lt_error_null("out of memory"); }
      buf = b; cap *= 2;
    }
    size_t r = fread(buf + n, 1, cap - n, fp);
    n += r;
    if (r == 0) {
      if (ferror(fp)) { free(buf); return (unsigned char *)lt_error_null("cannot read file handle: %s", strerror(errno)); }
      break;
    }
  }
  buf[n] = 0;
  *len = n;
  return buf;
}

lt_io_map *lt_io_map_fd(int fd, size_t len, const char *path) {
  if (len == 0) return (lt_io_map *)lt_error_null("cannot map '%s': the file is empty", path);
  lt_io_map *m = (lt_io_map *)malloc(sizeof *m);
  if (!m) return (lt_io_map *)lt_error_null("out of memory");
  /* private and writable: in-place ops on a mapped tensor copy the page
  ** (copy-on-write) instead of faulting, and never reach the file */
  void *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (a == MAP_FAILED) {
    int e = errno; free(m);
    return (lt_io_map *)lt_error_null("cannot map '%s': %s", path, strerror(e));
  }
  m->refcount = 1; m->addr = a; m->len = len;
  return m;
}

lt_io_map *lt_io_map_file(const char *path) {
  int fd; uint64_t size;
  if (lt_io_open_read(path, &fd, &size) < 0) return NULL;
  if (size >= SIZE_MAX) { close(fd); return (lt_io_map *)lt_error_null("'%s' is too large", path); }
  lt_io_map *m = lt_io_map_fd(fd, (size_t)size, path);
  close(fd);   /* the mapping keeps the file alive */
  return m;
}

void lt_io_map_retain(lt_io_map *m) {
  __atomic_fetch_add(&m->refcount, 1, __ATOMIC_RELAXED);
}

void lt_io_map_release(lt_io_map *m) {
  if (!m) return;
  if (__atomic_sub_fetch(&m->refcount, 1, __ATOMIC_ACQ_REL) == 0) {
    munmap(m->addr, m->len);
    free(m);
  }
}

void lt_io_map_release_cb(void *data, void *ctx) {
  (void)data;
  lt_io_map_release((lt_io_map *)ctx);
}
