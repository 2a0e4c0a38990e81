/*
** shm.c — storages over memfd_create + mmap(MAP_SHARED).
** The release callback unmaps (and closes the fd of a storage that owns one),
** so the last view of a batch gives its pages back wherever it dies.
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "cpu/shm.h"

typedef struct shm_ctx { int fd; size_t maplen; uint64_t serial; } shm_ctx;   /* fd -1: mapping only */

static _Atomic uint64_t next_serial = 1;

/* The bytes are reported through the storage hook like allocator memory, so
** the Lua collector feels the pressure of batches it has not freed yet. */

static void shm_release(void *data, void *ctx) {
  shm_ctx *c = ctx;
  if (data && c->maplen) munmap(data, c->maplen);
  if (lt_storage_bytes_hook && c->maplen) lt_storage_bytes_hook(-(int64_t)c->maplen);
  if (c->fd >= 0) close(c->fd);
  free(c);
}

int lt_shm_create(size_t nbytes) {
  int fd = memfd_create("lutorch-shm", MFD_CLOEXEC);
  if (fd < 0) return lt_error("shared memory: memfd_create failed: %s", strerror(errno));
  if (ftruncate(fd, (off_t)nbytes) < 0) {
    int e = errno;
    close(fd);
    return lt_error("shared memory: cannot size a segment of %zu bytes: %s", nbytes, strerror(e));
  }
  return fd;
}

static lt_storage *map_storage(int fd, size_t nbytes, int64_t offset, int own_fd) {
  shm_ctx *c = malloc(sizeof *c);
  if (!c) return lt_error_null("shared memory: out of memory");
  void *p = NULL;
  c->maplen = nbytes;
  if (nbytes) {
    p = mmap(NULL, nbytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)offset);
    if (p == MAP_FAILED) {
      int e = errno;
      free(c);
      return lt_error_null("shared memory: mmap of %zu bytes failed: %s", nbytes, strerror(e));
    }
  }
  c->fd = own_fd ? fd : -1;
  c->serial = atomic_fetch_add(&next_serial, 1);
  lt_storage *s = lt_storage_from_blob(p, nbytes, lt_device_cpu(), shm_release, c);
  if (!s) { if (p) munmap(p, nbytes); free(c); return NULL; }
  if (lt_storage_bytes_hook && nbytes) lt_storage_bytes_hook((int64_t)nbytes);
  return s;
}

lt_tensor *lt_shm_tensor_new(lt_dtype dt, int ndim, const int64_t *sizes) {
  int64_t n = lt_shape_numel(ndim, sizes);
  size_t nbytes = (size_t)n * lt_dtype_size(dt);
  int fd = lt_shm_create(nbytes);
  if (fd < 0) return NULL;
  lt_storage *s = map_storage(fd, nbytes, 0, 1);
  if (!s) { close(fd); return NULL; }
  lt_tensor *t = lt_tensor_new_view(s, dt, 0, ndim, sizes, NULL);
  lt_storage_release(s);
  return t;
}

int lt_shm_storage_fd(const lt_storage *s) {
  if (s->kind != LT_STORAGE_EXTERNAL || s->release != shm_release) return -1;
  return ((shm_ctx *)s->release_ctx)->fd;
}

uint64_t lt_shm_storage_serial(const lt_storage *s) {
  return lt_shm_storage_is_shared(s) ? ((shm_ctx *)s->release_ctx)->serial : 0;
}

uint64_t lt_shm_next_serial(void) { return atomic_load(&next_serial); }

bool lt_shm_storage_is_shared(const lt_storage *s) {
  return s->kind == LT_STORAGE_EXTERNAL && s->release == shm_release;
}

lt_storage *lt_shm_storage_map(int fd, size_t nbytes, int64_t offset) {
  return map_storage(fd, nbytes, offset, 0);
}
