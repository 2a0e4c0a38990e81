/*
** ldcp.c — the C half of torch.distributed.checkpoint (lib/distributed/
** checkpoint.lua): moving a tensor's bytes between its memory and a file
** offset, checksummed in fixed-size blocks (two-lane CRC-32C, src/serial/
** crc32c.h), plus the three file-system calls Lua lacks (fsync, mkdir -p,
** listing a directory).
**
** Why C: going through Lua strings copies every byte twice and hashes it in
** a third pass; here each block is read or written straight from the
** tensor's memory and hashed while it is still in cache, the blocks spread
** over lutorch's threads (they are independent), and a save starts the disk
** writing each run as soon as it is in the page cache (sync_file_range), so a
** save is bounded by the disk and a load by the page-cache copy, as `dd` is.
**
** Added to torch.serialization as private functions (torch.serialization._dcp_*).
** Failures that come from the file (short read, I/O error) return nil and a
** message, so the Lua side can name the checkpoint file and the tensor key;
** bad arguments raise.
*/
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lutorch_vm.h"
#include "ltensor.h"
#include "cpu/parallel.h"
#include "serial/crc32c.h"

#define DCP "torch.distributed.checkpoint"

static int fail(lua_State *L, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  lua_pushnil(L);
  lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  return 2;
}

/* the descriptor of an open Lua file at idx */
static int checkfd(lua_State *L, int idx) {
  luaL_Stream *p = (luaL_Stream *)luaL_checkudata(L, idx, LUA_FILEHANDLE);
  if (p->closef == NULL) luaL_error(L, DCP ": the file is closed");
  return fileno(p->f);
}

/* tensor at idx: CPU, contiguous, and [off, off+n) inside its bytes; its first byte */
static unsigned char *tensor_bytes(lua_State *L, int idx, int64_t off, int64_t n) {
  lt_tensor *t = lt_vm_checktensor(L, idx, DCP, "tensor");
  if (lt_tensor_device(t).type != LT_DEV_CPU) luaL_error(L, DCP ": the tensor must be on the CPU");
  if (!lt_tensor_is_contiguous(t)) luaL_error(L, DCP ": the tensor must be contiguous");
  int64_t nbytes = t->numel * (int64_t)lt_dtype_size(lt_tensor_dtype(t));
  if (off < 0 || n < 0 || off > nbytes || n > nbytes - off)
    luaL_error(L, DCP ": bytes %I..%I are outside the tensor's %I", (lua_Integer)off, (lua_Integer)(off + n),
               (lua_Integer)nbytes);
  return nbytes ? (unsigned char *)lt_tensor_data(t) : NULL;
}

static int64_t checkcount(lua_State *L, int idx, const char *what) {
  lua_Integer v = luaL_checkinteger(L, idx);
  if (v < 0) luaL_error(L, DCP ": '%s' must be >= 0", what);
  return (int64_t)v;
}

/* ---- blocks over the thread pool ---- */

typedef struct job {
  int fd, writing;
  unsigned char *mem;        /* the tensor's bytes at the first block */
  int64_t pos, n, block;     /* file offset of the first block, bytes, block size */
  uint64_t *hash;            /* one per block */
  atomic_int err;            /* first errno; -1: end of file on a read */
  atomic_llong err_at;       /* file offset of that failure */
} job;

static void set_err(job *j, int e, int64_t at) {
  int zero = 0;
  if (atomic_compare_exchange_strong(&j->err, &zero, e)) atomic_store(&j->err_at, at);
}

/* pread/pwrite all of [p, p+n) at file offset at: 0, errno, or -1 at end of file */
static int xfer(int fd, int writing, unsigned char *p, int64_t n, int64_t at, int64_t *where) {
  while (n > 0) {
    size_t k = n > (1 << 30) ? (size_t)1 << 30 : (size_t)n;
    ssize_t r = writing ? pwrite(fd, p, k, (off_t)at) : pread(fd, p, k, (off_t)at);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) { *where = at; return r < 0 ? errno : -1; }
    p += r; at += r; n -= r;
  }
  return 0;
}

/* Bytes per write call: blocks are written in runs of about this size, so a
** small checksum block does not mean small system calls. Reads go in runs of
** about READ_RUN_BYTES (at least a block): small enough that the bytes a read
** just brought in are still in the core's cache when they are checksummed. */
#define RUN_BYTES ((int64_t)8 << 20)
#define READ_RUN_BYTES ((int64_t)256 << 10)

/* the hashes of blocks [b, be), which end at byte hi */
static void hash_blocks(job *j, int64_t b, int64_t be, int64_t hi) {
  for (int64_t k = b; k < be; k++) {
    int64_t o = k * j->block;
    j->hash[k] = lt_crc32c_x2(j->mem + o, (size_t)(hi - o < j->block ? hi - o : j->block));
  }
}

static void run_blocks(void *ctx, int64_t b0, int64_t b1) {
  job *j = (job *)ctx;
  int64_t run = j->writing ? RUN_BYTES : READ_RUN_BYTES;
  int64_t per = j->block >= run ? 1 : run / j->block;
  for (int64_t b = b0; b < b1 && atomic_load(&j->err) == 0; b += per) {
    int64_t be = b + per < b1 ? b + per : b1;
    int64_t lo = b * j->block, hi = be * j->block < j->n ? be * j->block : j->n, at;
    /* writing: hash, then write the bytes just read; reading: read, then hash while cached */
    if (j->writing) hash_blocks(j, b, be, hi);
    int e = xfer(j->fd, j->writing, j->mem + lo, hi - lo, j->pos + lo, &at);
    if (e) { set_err(j, e, at); return; }
    if (!j->writing) hash_blocks(j, b, be, hi);
#ifdef SYNC_FILE_RANGE_WRITE
    /* start writing these pages to the disk now, so the fsync that ends the file
    ** waits for the last runs only, not for all of them (advice: an error shows again at fsync) */
    if (j->writing) sync_file_range(j->fd, (off_t)(j->pos + lo), (off_t)(hi - lo), SYNC_FILE_RANGE_WRITE);
#endif
  }
}

static int push_hashes(lua_State *L, const uint64_t *h, int64_t nb) {
  lua_createtable(L, (int)nb, 0);
  for (int64_t b = 0; b < nb; b++) {
    lua_pushinteger(L, (lua_Integer)h[b]);
    lua_rawseti(L, -2, (lua_Integer)b + 1);
  }
  return 1;
}

static int blocks(lua_State *L, int fd, int writing, unsigned char *mem, int64_t pos, int64_t n, int64_t block) {
  if (block <= 0) return luaL_error(L, DCP ": the block size must be > 0");
  int64_t nb = (n + block - 1) / block;
  if (nb > INT32_MAX) return luaL_error(L, DCP ": too many blocks (%I)", (lua_Integer)nb);
  /* the hashes in Lua-owned memory: an error anywhere below leaks nothing */
  uint64_t *hash = lua_newuserdatauv(L, (size_t)(nb ? nb : 1) * sizeof *hash, 0);
  job j = { .fd = fd, .writing = writing, .mem = mem, .pos = pos, .n = n, .block = block, .hash = hash };
  atomic_init(&j.err, 0);
  atomic_init(&j.err_at, 0);
  lt_parallel_for(nb, 1, run_blocks, &j);
  int e = atomic_load(&j.err);
  if (e < 0) return fail(L, "the file ends before byte %I (truncated)", (lua_Integer)atomic_load(&j.err_at) + 1);
  if (e) return fail(L, "%s at byte %I: %s", writing ? "write" : "read", (lua_Integer)atomic_load(&j.err_at), strerror(e));
  return push_hashes(L, hash, nb);
}

/* _dcp_pwrite(file, pos, t, byte_off, nbytes, block) -> {hash per block} | nil, msg:
** bytes [byte_off, byte_off+nbytes) of t (CPU, contiguous) to the file at pos */
static int l_pwrite(lua_State *L) {
  int fd = checkfd(L, 1);
  int64_t pos = checkcount(L, 2, "pos"), off = checkcount(L, 4, "byte_off"), n = checkcount(L, 5, "nbytes");
  unsigned char *mem = tensor_bytes(L, 3, off, n);
  return blocks(L, fd, 1, mem ? mem + off : NULL, pos, n, (int64_t)luaL_checkinteger(L, 6));
}

/* _dcp_pread(file, pos, nbytes, block, t, byte_off) -> {hash per block} | nil, msg:
** nbytes at pos into t's memory from byte byte_off */
static int l_pread(lua_State *L) {
  int fd = checkfd(L, 1);
  int64_t pos = checkcount(L, 2, "pos"), n = checkcount(L, 3, "nbytes"), off = checkcount(L, 6, "byte_off");
  unsigned char *mem = tensor_bytes(L, 5, off, n);
  lt_tensor *t = lt_vm_totensor(L, 5);
  int r = blocks(L, fd, 0, mem ? mem + off : NULL, pos, n, (int64_t)luaL_checkinteger(L, 4));
  lt_tensor_bump_version(t);
  return r;
}

/* _dcp_pread_part(file, pos, nbytes, t, byte_off, skip, take) -> hash | nil, msg:
** nbytes at pos (one block) into a buffer, whose bytes [skip, skip+take) go to t
** from byte byte_off: a block of which only a part is wanted is still read and
** hashed whole */
static int l_pread_part(lua_State *L) {
  int fd = checkfd(L, 1);
  int64_t pos = checkcount(L, 2, "pos"), n = checkcount(L, 3, "nbytes"), off = checkcount(L, 5, "byte_off");
  int64_t skip = checkcount(L, 6, "skip"), take = checkcount(L, 7, "take");
  if (skip > n || take > n - skip) return luaL_error(L, DCP ": bytes %I..%I are outside the block of %I",
                                                     (lua_Integer)skip, (lua_Integer)(skip + take), (lua_Integer)n);
  unsigned char *mem = tensor_bytes(L, 4, off, take);
  lt_tensor *t = lt_vm_totensor(L, 4);
  unsigned char *buf = lua_newuserdatauv(L, n ? (size_t)n : 1, 0);   /* Lua-owned: nothing to free */
  int64_t at;
  int e = xfer(fd, 0, buf, n, pos, &at);
  if (e) {
    if (e < 0) return fail(L, "the file ends before byte %I (truncated)", (lua_Integer)at + 1);
    return fail(L, "read at byte %I: %s", (lua_Integer)at, strerror(e));
  }
  uint64_t h = lt_crc32c_x2(buf, (size_t)n);
  if (take) memcpy(mem + off, buf + skip, (size_t)take);
  lt_tensor_bump_version(t);
  lua_pushinteger(L, (lua_Integer)h);
  return 1;
}

/* _dcp_fsync(file | directory path) -> true | nil, msg */
static int l_fsync(lua_State *L) {
  if (lua_type(L, 1) == LUA_TSTRING) {
    const char *path = lua_tostring(L, 1);
    int fd = open(path, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return fail(L, "cannot open '%s': %s", path, strerror(errno));
    /* some file systems refuse fsync on a directory (EINVAL): nothing to make durable there */
    int r = fsync(fd), e = errno;
    close(fd);
    if (r < 0 && e != EINVAL && e != EROFS) return fail(L, "fsync '%s': %s", path, strerror(e));
    lua_pushboolean(L, 1);
    return 1;
  }
  luaL_Stream *p = (luaL_Stream *)luaL_checkudata(L, 1, LUA_FILEHANDLE);
  if (p->closef == NULL) return luaL_error(L, DCP ": the file is closed");
  if (fflush(p->f) != 0 || fsync(fileno(p->f)) < 0) return fail(L, "fsync: %s", strerror(errno));
  lua_pushboolean(L, 1);
  return 1;
}

/* _dcp_mkdir(path) -> true | nil, msg: the directory and its missing parents */
static int l_mkdir(lua_State *L) {
  size_t len;
  const char *path = luaL_checklstring(L, 1, &len);
  char *p = lua_newuserdatauv(L, len + 1, 0);   /* a scratch copy, Lua-owned */
  memcpy(p, path, len + 1);
  for (size_t i = 1; i <= len; i++) {
    if (p[i] != '/' && p[i] != '\0') continue;
    char c = p[i];
    p[i] = '\0';
    struct stat st;
    if (mkdir(p, 0777) < 0 && errno != EEXIST) return fail(L, "cannot create '%s': %s", p, strerror(errno));
    if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode)) return fail(L, "'%s' is not a directory", p);
    p[i] = c;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* a DIR* that the collector closes if pushing a name raises */
static int dir_gc(lua_State *L) {
  DIR **d = (DIR **)lua_touserdata(L, 1);
  if (*d) { closedir(*d); *d = NULL; }
  return 0;
}

/* _dcp_listdir(path) -> {names} | nil, msg (without . and ..) */
static int l_listdir(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  DIR **d = (DIR **)lua_newuserdatauv(L, sizeof *d, 0);
  *d = NULL;
  if (luaL_newmetatable(L, "lutorch.dcp.dir")) { lua_pushcfunction(L, dir_gc); lua_setfield(L, -2, "__gc"); }
  lua_setmetatable(L, -2);
  lua_newtable(L);
  *d = opendir(path);
  if (!*d) return fail(L, "cannot list '%s': %s", path, strerror(errno));
  struct dirent *e;
  lua_Integer n = 0;
  while ((e = readdir(*d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    lua_pushstring(L, e->d_name);
    lua_rawseti(L, -2, ++n);
  }
  closedir(*d);
  *d = NULL;
  return 1;
}

void lt_vm_open_dcp(lua_State *L) {
  static const luaL_Reg fns[] = {
    {"_dcp_pwrite", l_pwrite}, {"_dcp_pread", l_pread}, {"_dcp_pread_part", l_pread_part},
    {"_dcp_fsync", l_fsync}, {"_dcp_mkdir", l_mkdir}, {"_dcp_listdir", l_listdir}, {NULL, NULL}};
  lua_getfield(L, -1, "serialization");   /* made by lt_vm_open_serial, which runs first */
  luaL_setfuncs(L, fns, 0);
  lua_pop(L, 1);
}
