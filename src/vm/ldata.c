/*
** ldata.c — torch._data: what lib/data needs from the system to run
** DataLoader workers: fork, socketpairs, poll, waitpid, and a wire format
** that moves a batch (nested tables of tensors, numbers, strings, booleans)
** from a worker to the parent without copying tensor bytes.
**
** Wire format: one SOCK_SEQPACKET message per value. The bytes are a header,
** a stream (the value, with each tensor replaced by a slot number) and a slot
** table (dtype, shape, strides, and where the bytes are: which passed fd, at
** which file offset). Tensor bytes never travel in the message: a tensor made
** by the worker in shared memory (lt_shm_tensor_new, as the default collate
** does) passes its memfd over SCM_RIGHTS and the parent maps the same pages;
** any other tensor is first copied into a fresh memfd. A message too large
** for the socket travels in a memfd itself.
*/
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lutorch_vm.h"
#include "ltensor.h"
#include "ldata.h"
#include "cpu/shm.h"

#define WIRE_MAGIC 0x3144544cu      /* "LTD1" */
#define WIRE_INLINE_MAX 60000       /* larger messages go through a memfd */
#define MAX_TENSOR_FDS 200          /* more distinct storages: pack them in one memfd */
#define MAX_FDS (MAX_TENSOR_FDS + 2)
#define MAX_DEPTH 64
#define RECV_BUF 65536
#define FLAG_BODY_IN_FD 1u

/* ---- small system calls ---------------------------------------------------- */

static int push_errno(lua_State *L, const char *what) {
  lua_pushnil(L);
  lua_pushfstring(L, "%s: %s", what, strerror(errno));
  return 2;
}

/* fork(): the child ignores SIGINT (the parent shuts it down), dies with its
** parent, and starts with empty stdio buffers (the parent flushed them) */
static int l_fork(lua_State *L) {
  fflush(NULL);
  pid_t parent = getpid();
  pid_t p = fork();
  if (p < 0) return push_errno(L, "fork");
  if (p == 0) {
    signal(SIGINT, SIG_IGN);
    signal(SIGPIPE, SIG_DFL);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);   /* the parent died before prctl */
  }
  lua_pushinteger(L, p);
  return 1;
}

/* _exit: a worker must not run the parent's finalizers (lua_close would) */
static int l_exit(lua_State *L) {
  int code = (int)luaL_optinteger(L, 1, 0);
  fflush(NULL);
  _exit(code);
  return 0;
}

static int l_getpid(lua_State *L) { lua_pushinteger(L, getpid()); return 1; }

static int l_socketpair(lua_State *L) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) return push_errno(L, "socketpair");
  int sz = 1 << 20;
  for (int i = 0; i < 2; i++) {
    setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
    setsockopt(sv[i], SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
  }
  lua_pushinteger(L, sv[0]);
  lua_pushinteger(L, sv[1]);
  return 2;
}

static int l_close(lua_State *L) {
  int fd = (int)luaL_checkinteger(L, 1);
  lua_pushboolean(L, fd >= 0 && close(fd) == 0);
  return 1;
}

/* poll({fd...}, timeout_ms) -> list of 1-based positions readable or hung up */
static int l_poll(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int timeout = (int)luaL_optinteger(L, 2, -1);
  int n = (int)luaL_len(L, 1);
  struct pollfd pf[256];
  if (n > 256) return luaL_error(L, "poll: at most 256 descriptors");
  for (int i = 0; i < n; i++) {
    lua_geti(L, 1, i + 1);
    pf[i].fd = (int)lua_tointeger(L, -1);
    pf[i].events = POLLIN;
    pf[i].revents = 0;
    lua_pop(L, 1);
  }
  int r = poll(pf, (nfds_t)n, timeout);
  if (r < 0 && errno != EINTR) return luaL_error(L, "poll: %s", strerror(errno));
  lua_createtable(L, r > 0 ? r : 0, 0);
  int k = 0;
  for (int i = 0; r > 0 && i < n; i++)
    if (pf[i].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) {
      lua_pushinteger(L, i + 1);
      lua_rawseti(L, -2, ++k);
    }
  return 1;
}

/* waitpid(pid, block) -> "running" | "exited", code | "signaled", sig | "gone" */
static int l_waitpid(lua_State *L) {
  pid_t pid = (pid_t)luaL_checkinteger(L, 1);
  int block = lua_toboolean(L, 2);
  int st;
  pid_t r;
  do r = waitpid(pid, &st, block ? 0 : WNOHANG); while (r < 0 && errno == EINTR);
  if (r == 0) { lua_pushliteral(L, "running"); return 1; }
  if (r < 0) { lua_pushliteral(L, "gone"); return 1; }
  if (WIFSIGNALED(st)) {
    lua_pushliteral(L, "signaled");
    lua_pushinteger(L, WTERMSIG(st));
    lua_pushstring(L, strsignal(WTERMSIG(st)));
    return 3;
  }
  lua_pushliteral(L, "exited");
  lua_pushinteger(L, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  return 2;
}

static int l_kill(lua_State *L) {
  pid_t pid = (pid_t)luaL_checkinteger(L, 1);
  int sig = (int)luaL_optinteger(L, 2, SIGKILL);
  if (pid <= 0) return luaL_error(L, "kill: bad pid %d", (int)pid);
  lua_pushboolean(L, kill(pid, sig) == 0);
  return 1;
}

static int l_isatty(lua_State *L) {
  int fd = 1;
  if (lua_isinteger(L, 1)) fd = (int)lua_tointeger(L, 1);
  else if (lua_isuserdata(L, 1)) {   /* a Lua file handle */
    luaL_Stream *p = luaL_testudata(L, 1, LUA_FILEHANDLE);
    if (!p || !p->f) { lua_pushboolean(L, 0); return 1; }
    fd = fileno(p->f);
  }
  lua_pushboolean(L, isatty(fd));
  return 1;
}

static int l_now(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  lua_pushnumber(L, (double)ts.tv_sec + ts.tv_nsec * 1e-9);
  return 1;
}

static int l_sleep(lua_State *L) {
  double s = luaL_checknumber(L, 1);
  if (s > 0) {
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
  }
  return 0;
}

/* count_fds([dir [, prefix]]): entries of a directory (those whose names start
** with prefix, when given), by default this process's open descriptors. Tests
** check that loaders leak no descriptor, and nothing of lutorch's in /dev/shm:
** other programs' entries there (OpenMPI's, a test running beside) are not ours. */
static int l_count_fds(lua_State *L) {
  const char *dir = luaL_optstring(L, 1, "/proc/self/fd");
  const char *prefix = luaL_optstring(L, 2, "");
  size_t plen = strlen(prefix);
  int self = lua_isnoneornil(L, 1);
  DIR *d = opendir(dir);
  if (!d) return push_errno(L, "count_fds");
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] != '.' && strncmp(e->d_name, prefix, plen) == 0) n++;
  closedir(d);
  lua_pushinteger(L, self ? n - 1 : n);   /* not the directory's own descriptor */
  return 1;
}

/* ---- shared-memory tensors ------------------------------------------------ */

static int check_sizes(lua_State *L, int idx, int64_t *sizes) {
  luaL_checktype(L, idx, LUA_TTABLE);
  int n = (int)luaL_len(L, idx);
  if (n > LT_MAX_DIMS) luaL_error(L, "shm_empty: too many dims");
  for (int i = 0; i < n; i++) {
    lua_geti(L, idx, i + 1);
    sizes[i] = lua_tointeger(L, -1);
    if (sizes[i] < 0) luaL_error(L, "shm_empty: negative size");
    lua_pop(L, 1);
  }
  return n;
}

/* shm_empty(dtype, sizes) */
static int l_shm_empty(lua_State *L) {
  int dt = lt_vm_todtype(L, 1);
  if (dt < 0) return luaL_error(L, "shm_empty: argument 'dtype' must be a dtype");
  int64_t sizes[LT_MAX_DIMS];
  int nd = check_sizes(L, 2, sizes);
  lt_vm_push_tensor(L, lt_shm_tensor_new((lt_dtype)dt, nd, sizes));
  return 1;
}

/* a contiguous copy of t in shared memory (new reference) */
static lt_tensor *shm_copy(const lt_tensor *t) {
  lt_tensor *c = lt_shm_tensor_new((lt_dtype)t->dtype, t->ndim, t->sizes);
  if (c && lt_tensor_copy_(c, t) < 0) { lt_tensor_release(c); return NULL; }
  return c;
}

static int l_to_shm(lua_State *L) {
  lt_tensor *t = lt_vm_checktensor(L, 1, "to_shm", "tensor");
  lt_vm_push_tensor(L, shm_copy(t));
  return 1;
}

static int l_is_shm(lua_State *L) {
  lt_tensor *t = lt_vm_checktensor(L, 1, "is_shm", "tensor");
  lua_pushboolean(L, lt_shm_storage_is_shared(t->storage));
  return 1;
}

/* stack_shm(list) -> one new shared-memory tensor [n, ...], or nil when the
** items are not tensors of one dtype and shape (the caller then falls back to
** torch.stack, whose error messages say what is wrong) */
static int l_stack_shm(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int n = (int)luaL_len(L, 1);
  if (n < 1) { lua_pushnil(L); return 1; }
  lua_geti(L, 1, 1);
  lt_tensor *first = lt_vm_totensor(L, -1);
  lua_pop(L, 1);
  if (!first || first->ndim >= LT_MAX_DIMS) { lua_pushnil(L); return 1; }
  for (int i = 2; i <= n; i++) {
    lua_geti(L, 1, i);
    lt_tensor *t = lt_vm_totensor(L, -1);
    lua_pop(L, 1);
    if (!t || t->dtype != first->dtype || !lt_tensor_same_shape(t, first)) { lua_pushnil(L); return 1; }
  }
  int64_t sizes[LT_MAX_DIMS];
  sizes[0] = n;
  memcpy(sizes + 1, first->sizes, sizeof(int64_t) * (size_t)first->ndim);
  lt_tensor *out = lt_shm_tensor_new((lt_dtype)first->dtype, first->ndim + 1, sizes);
  if (!out) return lt_vm_raise(L, "collate");
  int64_t row = first->numel;
  for (int i = 0; i < n; i++) {
    lua_geti(L, 1, i + 1);
    lt_tensor *t = lt_vm_totensor(L, -1);
    lua_pop(L, 1);
    lt_tensor *dst = lt_tensor_alias(out, i * row, first->ndim, first->sizes, NULL);
    int rc = dst ? lt_tensor_copy_(dst, t) : -1;
    lt_tensor_release(dst);
    if (rc < 0) { lt_tensor_release(out); return lt_vm_raise(L, "collate"); }
  }
  lt_vm_push_tensor(L, out);
  return 1;
}

/* ---- encoding ---------------------------------------------------------------- */

typedef struct enc {
  unsigned char *buf;
  size_t n, cap;
  lt_tensor **slots;        /* retained */
  int nslots, capslots;
  char err[200];
} enc;

static int put(enc *e, const void *p, size_t n) {
  if (e->n + n > e->cap) {
    size_t cap = e->cap ? e->cap : 256;
    while (cap < e->n + n) cap *= 2;
    unsigned char *b = realloc(e->buf, cap);
    if (!b) { snprintf(e->err, sizeof e->err, "out of memory"); return -1; }
    e->buf = b;
    e->cap = cap;
  }
  memcpy(e->buf + e->n, p, n);
  e->n += n;
  return 0;
}
static int put_u8(enc *e, unsigned v) { unsigned char c = (unsigned char)v; return put(e, &c, 1); }
static int put_u32(enc *e, uint32_t v) { return put(e, &v, 4); }
static int put_i64(enc *e, int64_t v) { return put(e, &v, 8); }

static int encode(lua_State *L, enc *e, int idx, int depth) {
  switch (lua_type(L, idx)) {
    case LUA_TNIL: return put_u8(e, 'n');
    case LUA_TBOOLEAN: return put_u8(e, lua_toboolean(L, idx) ? 't' : 'f');
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) return put_u8(e, 'i') || put_i64(e, lua_tointeger(L, idx)) ? -1 : 0;
      else {
        double d = lua_tonumber(L, idx);
        return put_u8(e, 'd') || put(e, &d, 8) ? -1 : 0;
      }
    case LUA_TSTRING: {
      size_t n;
      const char *s = lua_tolstring(L, idx, &n);
      return put_u8(e, 's') || put_u32(e, (uint32_t)n) || put(e, s, n) ? -1 : 0;
    }
    case LUA_TTABLE: {
      if (depth > MAX_DEPTH) { snprintf(e->err, sizeof e->err, "tables nested too deeply (a cycle?)"); return -1; }
      luaL_checkstack(L, 6, "encode");
      idx = lua_absindex(L, idx);
      uint32_t count = 0;
      lua_pushnil(L);
      while (lua_next(L, idx)) { count++; lua_pop(L, 1); }
      if (put_u8(e, 'T') || put_u32(e, count)) return -1;
      lua_pushnil(L);
      while (lua_next(L, idx)) {
        if (encode(L, e, -2, depth + 1) || encode(L, e, -1, depth + 1)) { lua_pop(L, 2); return -1; }
        lua_pop(L, 1);
      }
      return 0;
    }
    case LUA_TUSERDATA: {
      lt_tensor *t = lt_vm_totensor(L, idx);
      if (!t) break;
      if (e->nslots == e->capslots) {
        int cap = e->capslots ? e->capslots * 2 : 8;
        lt_tensor **s = realloc(e->slots, sizeof(*s) * (size_t)cap);
        if (!s) { snprintf(e->err, sizeof e->err, "out of memory"); return -1; }
        e->slots = s;
        e->capslots = cap;
      }
      lt_tensor_retain(t);
      e->slots[e->nslots] = t;
      return put_u8(e, 'X') || put_u32(e, (uint32_t)e->nslots++) ? -1 : 0;
    }
    default: break;
  }
  snprintf(e->err, sizeof e->err, "cannot send a %s value between processes", luaL_typename(L, idx));
  return -1;
}

/* where one slot's bytes are */
typedef struct slot_loc { int fd_index; int64_t file_off; uint64_t map_bytes; int64_t elem_off; const int64_t *strides; } slot_loc;

static size_t page_size(void) { long p = sysconf(_SC_PAGESIZE); return p > 0 ? (size_t)p : 4096; }

/* Decide where each slot's bytes go; fills fds (borrowed or in owned[]) and
** the slot table. Returns the number of tensor fds, or -1. */
static int layout(enc *e, slot_loc *loc, int *fds, lt_tensor **copies, int *packfd) {
  int nfds = 0;
  const lt_storage *seen[MAX_TENSOR_FDS];
  /* count the distinct storages first: beyond MAX_TENSOR_FDS, pack */
  int distinct = 0, pack = 0;
  for (int i = 0; i < e->nslots && !pack; i++) {
    lt_tensor *t = e->slots[i];
    if (t->numel == 0) continue;
    int j;
    for (j = 0; j < distinct; j++) if (seen[j] == t->storage) break;
    if (j == distinct) {
      if (distinct == MAX_TENSOR_FDS) pack = 1;
      else seen[distinct++] = t->storage;
    }
  }
  if (!pack) {
    const lt_storage *st[MAX_TENSOR_FDS];
    for (int i = 0; i < e->nslots; i++) {
      lt_tensor *t = e->slots[i];
      loc[i].fd_index = -1; loc[i].file_off = 0; loc[i].map_bytes = 0; loc[i].elem_off = 0;
      loc[i].strides = t->strides;
      if (t->numel == 0) continue;
      if (lt_shm_storage_fd(t->storage) < 0) {
        copies[i] = shm_copy(t);
        if (!copies[i]) { snprintf(e->err, sizeof e->err, "%s", lt_error_message()); return -1; }
        t = copies[i];
        loc[i].strides = t->strides;
      }
      int j;
      for (j = 0; j < nfds; j++) if (st[j] == t->storage) break;
      if (j == nfds) { st[nfds] = t->storage; fds[nfds++] = lt_shm_storage_fd(t->storage); }
      loc[i].fd_index = j;
      loc[i].map_bytes = t->storage->nbytes;
      loc[i].elem_off = t->offset;
    }
    return nfds;
  }
  /* pack: every tensor contiguous, page-aligned, in one memfd */
  size_t ps = page_size(), total = 0;
  for (int i = 0; i < e->nslots; i++) {
    lt_tensor *t = e->slots[i];
    size_t nb = (size_t)t->numel * lt_dtype_size((lt_dtype)t->dtype);
    loc[i].fd_index = nb ? 0 : -1;
    loc[i].file_off = (int64_t)total;
    loc[i].map_bytes = nb;
    loc[i].elem_off = 0;
    loc[i].strides = NULL;
    total += (nb + ps - 1) / ps * ps;
  }
  int fd = lt_shm_create(total);
  if (fd < 0) { snprintf(e->err, sizeof e->err, "%s", lt_error_message()); return -1; }
  *packfd = fd;
  fds[0] = fd;
  if (total == 0) return 1;
  void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) { snprintf(e->err, sizeof e->err, "mmap: %s", strerror(errno)); return -1; }
  int rc = 0;
  for (int i = 0; i < e->nslots && rc == 0; i++) {
    lt_tensor *t = e->slots[i];
    if (!loc[i].map_bytes) continue;
    lt_tensor *dst = lt_tensor_from_blob((char *)p + loc[i].file_off, (lt_dtype)t->dtype, t->ndim, t->sizes, NULL, NULL, NULL);
    rc = dst ? lt_tensor_copy_(dst, t) : -1;
    lt_tensor_release(dst);
  }
  munmap(p, total);
  if (rc < 0) { snprintf(e->err, sizeof e->err, "%s", lt_error_message()); return -1; }
  return 1;
}

typedef struct wire_header { uint32_t magic, flags; uint64_t stream_len; uint32_t nslots, nfds; } wire_header;

static int send_fds(int sock, const void *buf, size_t n, const int *fds, int nfds) {
  struct iovec iov = {(void *)buf, n};
  struct msghdr m = {0};
  char ctrl[CMSG_SPACE(sizeof(int) * MAX_FDS)];
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  if (nfds > 0) {
    memset(ctrl, 0, sizeof ctrl);
    m.msg_control = ctrl;
    m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
  }
  ssize_t r;
  do r = sendmsg(sock, &m, MSG_NOSIGNAL); while (r < 0 && errno == EINTR);
  return r < 0 ? -1 : 0;
}

/* send(sock, value) -> true | nil, message */
static int l_send(lua_State *L) {
  int sock = (int)luaL_checkinteger(L, 1);
  luaL_checkany(L, 2);
  enc e = {0};
  wire_header h = {WIRE_MAGIC, 0, 0, 0, 0};
  if (put(&e, &h, sizeof h) < 0 || encode(L, &e, 2, 0) < 0) goto fail_enc;
  size_t stream_len = e.n - sizeof h;
  slot_loc *loc = calloc((size_t)e.nslots + 1, sizeof *loc);
  lt_tensor **copies = calloc((size_t)e.nslots + 1, sizeof *copies);
  int fds[MAX_FDS], packfd = -1, bodyfd = -1, ok = 0;
  if (!loc || !copies) { snprintf(e.err, sizeof e.err, "out of memory"); goto done; }
  int nfds = layout(&e, loc, fds, copies, &packfd);
  if (nfds < 0) goto done;
  for (int i = 0; i < e.nslots; i++) {
    lt_tensor *t = e.slots[i];
    int32_t fi = loc[i].fd_index;
    if (put(&e, &fi, 4) || put_i64(&e, loc[i].file_off) || put(&e, &loc[i].map_bytes, 8) ||
        put_u8(&e, t->dtype) || put_u8(&e, (unsigned)t->ndim) || put_i64(&e, loc[i].elem_off))
      goto done;
    int64_t cs[LT_MAX_DIMS];
    const int64_t *strides = loc[i].strides;
    if (!strides) { lt_contiguous_strides(t->ndim, t->sizes, cs); strides = cs; }
    if (put(&e, t->sizes, 8 * (size_t)t->ndim) || put(&e, strides, 8 * (size_t)t->ndim)) goto done;
  }
  h.stream_len = stream_len;
  h.nslots = (uint32_t)e.nslots;
  h.nfds = (uint32_t)nfds;
  int total_fds = nfds;
  if (e.n > WIRE_INLINE_MAX) {
    /* the body goes in a memfd; the message keeps only the header */
    bodyfd = lt_shm_create(e.n);
    if (bodyfd < 0) { snprintf(e.err, sizeof e.err, "%s", lt_error_message()); goto done; }
    if (pwrite(bodyfd, e.buf, e.n, 0) != (ssize_t)e.n) { snprintf(e.err, sizeof e.err, "write: %s", strerror(errno)); goto done; }
    h.flags |= FLAG_BODY_IN_FD;
    fds[total_fds++] = bodyfd;
    memcpy(e.buf, &h, sizeof h);
    if (send_fds(sock, e.buf, sizeof h, fds, total_fds) < 0) { snprintf(e.err, sizeof e.err, "%s", strerror(errno)); goto done; }
  } else {
    memcpy(e.buf, &h, sizeof h);
    if (send_fds(sock, e.buf, e.n, fds, total_fds) < 0) { snprintf(e.err, sizeof e.err, "%s", strerror(errno)); goto done; }
  }
  ok = 1;
done:
  if (packfd >= 0) close(packfd);
  if (bodyfd >= 0) close(bodyfd);
  for (int i = 0; copies && i < e.nslots; i++) lt_tensor_release(copies[i]);
  free(loc);
  free(copies);
  if (!ok) goto fail_enc;
  for (int i = 0; i < e.nslots; i++) lt_tensor_release(e.slots[i]);
  free(e.slots);
  free(e.buf);
  lua_pushboolean(L, 1);
  return 1;
fail_enc:
  for (int i = 0; i < e.nslots; i++) lt_tensor_release(e.slots[i]);
  free(e.slots);
  free(e.buf);
  lua_pushnil(L);
  lua_pushstring(L, e.err[0] ? e.err : "send failed");
  return 2;
}

/* ---- decoding ------------------------------------------------------------------ */

typedef struct dec { const unsigned char *p, *end; } dec;

static int get(dec *d, void *out, size_t n) {
  if ((size_t)(d->end - d->p) < n) return -1;
  memcpy(out, d->p, n);
  d->p += n;
  return 0;
}

/* push the value at d; slots table at index `slots` */
static void decode(lua_State *L, dec *d, int slots, int depth) {
  unsigned char tag = 0;
  if (get(d, &tag, 1) < 0 || depth > MAX_DEPTH) luaL_error(L, "recv: malformed message");
  luaL_checkstack(L, 4, "recv");
  switch (tag) {
    case 'n': lua_pushnil(L); return;
    case 't': lua_pushboolean(L, 1); return;
    case 'f': lua_pushboolean(L, 0); return;
    case 'i': { int64_t v; if (get(d, &v, 8) < 0) break; lua_pushinteger(L, v); return; }
    case 'd': { double v; if (get(d, &v, 8) < 0) break; lua_pushnumber(L, v); return; }
    case 's': {
      uint32_t n;
      if (get(d, &n, 4) < 0 || (size_t)(d->end - d->p) < n) break;
      lua_pushlstring(L, (const char *)d->p, n);
      d->p += n;
      return;
    }
    case 'T': {
      uint32_t n;
      if (get(d, &n, 4) < 0) break;
      lua_createtable(L, 0, 0);
      for (uint32_t i = 0; i < n; i++) {
        decode(L, d, slots, depth + 1);
        decode(L, d, slots, depth + 1);
        if (lua_isnil(L, -2)) luaL_error(L, "recv: malformed message");
        lua_rawset(L, -3);
      }
      return;
    }
    case 'X': {
      uint32_t k;
      if (get(d, &k, 4) < 0) break;
      lua_geti(L, slots, (lua_Integer)k + 1);
      if (lua_isnil(L, -1)) break;
      return;
    }
    default: break;
  }
  luaL_error(L, "recv: malformed message");
}

static void close_fds(int *fds, int n) { for (int i = 0; i < n; i++) if (fds[i] >= 0) close(fds[i]); }

/* map the slots into tensors (pushed as a table); 0 or -1 (error slot set) */
static int map_slots(lua_State *L, dec *d, uint32_t nslots, const int *fds, int nfds) {
  lua_createtable(L, (int)nslots, 0);
  for (uint32_t i = 0; i < nslots; i++) {
    int32_t fi;
    int64_t foff, eoff;
    uint64_t mb;
    unsigned char dt, nd;
    int64_t sizes[LT_MAX_DIMS], strides[LT_MAX_DIMS];
    if (get(d, &fi, 4) || get(d, &foff, 8) || get(d, &mb, 8) || get(d, &dt, 1) || get(d, &nd, 1) ||
        get(d, &eoff, 8) || dt >= LT_NUM_DTYPES || nd > LT_MAX_DIMS ||
        get(d, sizes, 8 * (size_t)nd) || get(d, strides, 8 * (size_t)nd) || fi >= nfds)
      return lt_error("recv: malformed message");
    lt_tensor *t;
    if (fi < 0) {
      t = lt_tensor_new((lt_dtype)dt, lt_device_cpu(), nd, sizes);
    } else {
      /* bounds: the furthest element must lie inside the mapping */
      int64_t hi = eoff, es = (int64_t)lt_dtype_size((lt_dtype)dt);
      for (int k = 0; k < nd; k++) {
        if (sizes[k] < 0 || strides[k] < 0) return lt_error("recv: malformed message");
        if (sizes[k] > 0) hi += (sizes[k] - 1) * strides[k];
      }
      if (eoff < 0 || (uint64_t)((hi + 1) * es) > mb) return lt_error("recv: malformed message");
      lt_storage *s = lt_shm_storage_map(fds[fi], (size_t)mb, foff);
      if (!s) return -1;
      t = lt_tensor_new_view(s, (lt_dtype)dt, eoff, nd, sizes, strides);
      lt_storage_release(s);
    }
    if (!t) return -1;
    lt_vm_push_tensor(L, t);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 0;
}

/* recv(sock) -> true, value | false, "eof"; raises on a malformed message */
static int l_recv(lua_State *L) {
  int sock = (int)luaL_checkinteger(L, 1);
  unsigned char *buf = malloc(RECV_BUF);
  if (!buf) return luaL_error(L, "recv: out of memory");
  char ctrl[CMSG_SPACE(sizeof(int) * MAX_FDS)];
  struct iovec iov = {buf, RECV_BUF};
  struct msghdr m = {0};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = ctrl;
  m.msg_controllen = sizeof ctrl;
  ssize_t r;
  do r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC); while (r < 0 && errno == EINTR);
  int fds[MAX_FDS], nfds = 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      for (int i = 0; i < k && nfds < MAX_FDS; i++) memcpy(&fds[nfds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
    }
  if (r <= 0) {
    int e = errno;
    free(buf);
    close_fds(fds, nfds);
    if (r == 0 || e == ECONNRESET) { lua_pushboolean(L, 0); lua_pushliteral(L, "eof"); return 2; }
    return luaL_error(L, "recv: %s", strerror(e));
  }
  wire_header h;
  const char *bad = NULL;
  unsigned char *body = buf, *mapped = NULL;
  size_t body_len = (size_t)r, maplen = 0;
  if (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) bad = "recv: message truncated";
  else if ((size_t)r < sizeof h) bad = "recv: malformed message";
  else {
    memcpy(&h, buf, sizeof h);
    if (h.magic != WIRE_MAGIC || h.nfds + ((h.flags & FLAG_BODY_IN_FD) ? 1u : 0u) != (uint32_t)nfds)
      bad = "recv: malformed message";
    else if (h.flags & FLAG_BODY_IN_FD) {
      struct stat st;
      int bfd = fds[nfds - 1];
      if (fstat(bfd, &st) < 0 || (size_t)st.st_size < sizeof h) bad = "recv: malformed message";
      else {
        maplen = (size_t)st.st_size;
        mapped = mmap(NULL, maplen, PROT_READ, MAP_SHARED, bfd, 0);
        if (mapped == MAP_FAILED) { mapped = NULL; bad = "recv: cannot map the message"; }
        else { body = mapped; body_len = maplen; }
      }
    }
  }
  if (!bad && sizeof h + h.stream_len > body_len) bad = "recv: malformed message";
  if (bad) {
    if (mapped) munmap(mapped, maplen);
    free(buf);
    close_fds(fds, nfds);
    return luaL_error(L, "%s", bad);
  }
  /* copy the stream into a Lua string, map the slots, then release everything C holds */
  lua_pushlstring(L, (const char *)body + sizeof h, (size_t)h.stream_len);
  int stream_idx = lua_gettop(L);
  dec sd = {body + sizeof h + h.stream_len, body + body_len};
  int rc = map_slots(L, &sd, h.nslots, fds, (int)h.nfds);
  if (mapped) munmap(mapped, maplen);
  free(buf);
  close_fds(fds, nfds);
  if (rc < 0) return lt_vm_raise(L, "recv");
  int slots = lua_gettop(L);
  size_t sl;
  const char *s = lua_tolstring(L, stream_idx, &sl);
  dec d = {(const unsigned char *)s, (const unsigned char *)s + sl};
  lua_pushboolean(L, 1);
  decode(L, &d, slots, 0);
  return 2;
}

/* free_shm(value, since): release now the shared-memory tensors inside value
** that own their memfd and were made at or after serial `since` (a worker
** drops its side of a sent batch at once, the parent's mapping keeps it; the
** serial keeps it from touching tensors that existed before the fork) */
static void free_shm(lua_State *L, int idx, uint64_t since, int depth) {
  if (depth > MAX_DEPTH) return;
  lt_ud *u = lt_vm_toud(L, idx);
  if (u) {
    if (u->t && lt_shm_storage_fd(u->t->storage) >= 0 && lt_shm_storage_serial(u->t->storage) >= since) {
      lt_tensor_release(u->t);
      u->t = NULL;
    }
    return;
  }
  if (!lua_istable(L, idx)) return;
  luaL_checkstack(L, 4, "free_shm");
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) { free_shm(L, -1, since, depth + 1); lua_pop(L, 1); }
}

static int l_free_shm(lua_State *L) {
  free_shm(L, 1, (uint64_t)luaL_checkinteger(L, 2), 0);
  return 0;
}

/* shm_serial(): the serial the next shared-memory storage will get */
static int l_shm_serial(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)lt_shm_next_serial());
  return 1;
}

static const luaL_Reg data_functions[] = {
  {"fork", l_fork}, {"exit", l_exit}, {"getpid", l_getpid}, {"socketpair", l_socketpair},
  {"close", l_close}, {"poll", l_poll}, {"waitpid", l_waitpid}, {"kill", l_kill},
  {"isatty", l_isatty}, {"now", l_now}, {"sleep", l_sleep}, {"count_fds", l_count_fds},
  {"shm_empty", l_shm_empty}, {"to_shm", l_to_shm}, {"is_shm", l_is_shm}, {"stack_shm", l_stack_shm},
  {"send", l_send}, {"recv", l_recv}, {"free_shm", l_free_shm}, {"shm_serial", l_shm_serial},
  {NULL, NULL}
};

void lt_vm_open_data(lua_State *L) {
  lua_createtable(L, 0, 32);
  luaL_setfuncs(L, data_functions, 0);
  lt_vm_data_readers(L);
  lua_setfield(L, -2, "_data");
}
