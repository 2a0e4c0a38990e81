/*
** kernel.c — the Jupyter kernel's connection: the connection file, the five
** sockets (shell, control and stdin are ROUTERs, iopub a PUB, the heartbeat a
** REP echoed by a thread of its own), receiving and sending signed messages,
** and the loop that answers shell and control requests one at a time.
**
** Interrupts come as SIGINT (the kernelspec's interrupt_mode "signal"): while a
** cell runs, call.c's handler stops it; between cells a no-op handler keeps the
** signal from killing the kernel.
*/
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <limits.h>
#include <zmq.h>
#include <lua.h>
#include <lauxlib.h>
#include "kernel.h"
#include "repl.h"


void lt_kernel_log(lt_kernel *k, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n > sizeof buf - 2) n = (int)sizeof buf - 2;
  buf[n++] = '\n';
  const char pre[] = "lutorch kernel: ";
  ssize_t w = write(k->log_fd, pre, sizeof pre - 1);
  w = write(k->log_fd, buf, (size_t)n);
  (void)w;
}


/* ---- frames --------------------------------------------------------------- */

void lt_kernel_free_frames(lt_jframe *frames, size_t n) {
  for (size_t i = 0; i < n; i++) free((void *)frames[i].data);
  free(frames);
}

/* every frame of the next multipart message, copied */
static int recv_frames(void *sock, int flags, lt_jframe **out, size_t *nout) {
  lt_jframe *fr = NULL;
  size_t n = 0, cap = 0;
  int more = 1;
  while (more) {
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    if (zmq_msg_recv(&msg, sock, n == 0 ? flags : 0) < 0) {
      int e = errno;
      zmq_msg_close(&msg);
      if (n == 0) { free(fr); errno = e; return -1; }
      if (e == EINTR) continue;   /* the rest of a message already here */
      lt_kernel_free_frames(fr, n);
      errno = e;
      return -1;
    }
    size_t len = zmq_msg_size(&msg);
    void *copy = malloc(len ? len : 1);
    if (n == cap) {
      cap = cap ? 2 * cap : 8;
      lt_jframe *g = realloc(fr, cap * sizeof *fr);
      if (!g) { free(copy); copy = NULL; } else fr = g;
    }
    if (!copy) {
      zmq_msg_close(&msg);
      lt_kernel_free_frames(fr, n);
      errno = ENOMEM;
      return -1;
    }
    memcpy(copy, zmq_msg_data(&msg), len);
    fr[n].data = copy;
    fr[n].len = len;
    n++;
    more = zmq_msg_more(&msg);
    zmq_msg_close(&msg);
  }
  *out = fr;
  *nout = n;
  return 0;
}

int lt_kernel_recv(lt_kernel *k, void *sock, int timeout_ms, lt_jmsg *m, lt_jframe **frames, size_t *nframes) {
  zmq_pollitem_t item = { sock, 0, ZMQ_POLLIN, 0 };
  int r = zmq_poll(&item, 1, timeout_ms);
  if (r < 0) return -1;
  if (r == 0) return 0;
  if (recv_frames(sock, ZMQ_DONTWAIT, frames, nframes) < 0) return errno == EAGAIN ? 0 : -1;
  int st = lt_jmsg_parse(&k->key, *frames, *nframes, m);
  if (st != LT_JMSG_OK) {
    lt_kernel_log(k, "dropped a message: %s", lt_jmsg_strerror(st));
    lt_kernel_free_frames(*frames, *nframes);
    *frames = NULL;
    *nframes = 0;
    return 0;
  }
  return 1;
}


/* ---- sending -------------------------------------------------------------- */

static int send_part(void *sock, const void *data, size_t len, bool more) {
  for (;;) {
    if (zmq_send(sock, data, len, more ? ZMQ_SNDMORE : 0) >= 0) return 0;
    if (errno != EINTR) return -1;
  }
}

int lt_kernel_send(lt_kernel *k, void *sock, const lt_jframe *ids, size_t nids, const char *msg_type, json_t *content) {
  json_t *header = lt_jmsg_header(k->session, msg_type);
  pthread_mutex_lock(&k->iopub_lock);   /* the stream thread sends too: k->parent may change under it */
  json_t *parent = k->parent ? json_incref(k->parent) : json_object();
  pthread_mutex_unlock(&k->iopub_lock);
  json_t *parts[4] = { header, parent, json_object(), content };
  char *text[4] = { NULL, NULL, NULL, NULL };
  int rc = -1;
  for (int i = 0; i < 4; i++) {
    if (!parts[i] || !(text[i] = json_dumps(parts[i], JSON_COMPACT))) {
      lt_kernel_log(k, "could not encode a %s message", msg_type);
      goto done;
    }
  }
  lt_jframe f[4];
  for (int i = 0; i < 4; i++) { f[i].data = text[i]; f[i].len = strlen(text[i]); }
  char sig[65];
  lt_jmsg_sign(&k->key, f, sig);
  bool pub = sock == k->iopub;
  if (pub) pthread_mutex_lock(&k->iopub_lock);
  rc = 0;
  if (pub) rc |= send_part(sock, msg_type, strlen(msg_type), true);
  for (size_t i = 0; i < nids && rc == 0; i++) rc |= send_part(sock, ids[i].data, ids[i].len, true);
  if (rc == 0) rc |= send_part(sock, LT_JMSG_DELIM, sizeof LT_JMSG_DELIM - 1, true);
  if (rc == 0) rc |= send_part(sock, sig, strlen(sig), true);
  for (int i = 0; i < 4 && rc == 0; i++) rc |= send_part(sock, f[i].data, f[i].len, i < 3);
  if (pub) pthread_mutex_unlock(&k->iopub_lock);
  if (rc != 0) lt_kernel_log(k, "could not send a %s message: %s", msg_type, zmq_strerror(errno));
done:
  for (int i = 0; i < 4; i++) { free(text[i]); json_decref(parts[i]); }
  return rc;
}


/* ---- the connection file and the sockets ---------------------------------- */

static void *hb_thread(void *arg) {
  void *sock = arg;
  for (;;) {   /* echo every ping until the context ends */
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    if (zmq_msg_recv(&msg, sock, 0) < 0) {
      zmq_msg_close(&msg);
      if (errno == EINTR) continue;
      break;
    }
    int r;
    do r = zmq_msg_send(&msg, sock, 0); while (r < 0 && errno == EINTR);
    if (r < 0) { zmq_msg_close(&msg); if (errno == ETERM) break; }
  }
  int zero = 0;
  zmq_setsockopt(sock, ZMQ_LINGER, &zero, sizeof zero);
  zmq_close(sock);
  return NULL;
}

static void *open_socket(lt_kernel *k, int type, const char *transport, const char *ip, json_t *conf, const char *port_key) {
  json_t *p = json_object_get(conf, port_key);
  if (!json_is_integer(p) || json_integer_value(p) <= 0 || json_integer_value(p) > 65535) {
    lt_kernel_log(k, "the connection file has no valid %s", port_key);
    return NULL;
  }
  char ep[512];
  if (strcmp(transport, "ipc") == 0) snprintf(ep, sizeof ep, "ipc://%s-%lld", ip, (long long)json_integer_value(p));
  else snprintf(ep, sizeof ep, "%s://%s:%lld", transport, ip, (long long)json_integer_value(p));
  void *s = zmq_socket(k->ctx, type);
  if (!s) return NULL;
  int linger = 1000;
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  if (zmq_bind(s, ep) != 0) {
    lt_kernel_log(k, "cannot bind %s: %s", ep, zmq_strerror(errno));
    zmq_close(s);
    return NULL;
  }
  return s;
}

static json_t *read_connection(lt_kernel *k, const char *path) {
  json_error_t err;
  json_t *conf = json_load_file(path, 0, &err);
  if (!conf || !json_is_object(conf)) {
    lt_kernel_log(k, "cannot read the connection file %s: %s (line %d)", path, conf ? "not a JSON object" : err.text, err.line);
    json_decref(conf);
    return NULL;
  }
  const char *scheme = json_string_value(json_object_get(conf, "signature_scheme"));
  const char *key = json_string_value(json_object_get(conf, "key"));
  if (key && *key && scheme && strcmp(scheme, "hmac-sha256") != 0) {
    lt_kernel_log(k, "signature_scheme '%s' is not supported (hmac-sha256 is)", scheme);
    json_decref(conf);
    return NULL;
  }
  if (key && *key) {
    k->key.len = strlen(key);
    k->key.bytes = (unsigned char *)strdup(key);
  } else {
    lt_kernel_log(k, "the connection file has no key: messages are not signed or checked");
  }
  return conf;
}


/* ---- the loop ------------------------------------------------------------- */

static void ignore_sigint(int sig) { (void)sig; }

static void set_parent(lt_kernel *k, const lt_jmsg *m, const lt_jframe *frames) {
  pthread_mutex_lock(&k->iopub_lock);
  json_t *old = k->parent;
  k->parent = m ? json_incref(m->header) : NULL;
  pthread_mutex_unlock(&k->iopub_lock);
  json_decref(old);
  lt_kernel_free_frames(k->ids, k->nids);
  k->ids = NULL;
  k->nids = 0;
  if (m && m->nids > 0 && (k->ids = calloc(m->nids, sizeof *k->ids))) {
    for (size_t i = 0; i < m->nids; i++) {
      void *c = malloc(frames[i].len ? frames[i].len : 1);
      if (!c) break;
      memcpy(c, frames[i].data, frames[i].len);
      k->ids[i].data = c;
      k->ids[i].len = frames[i].len;
      k->nids = i + 1;
    }
  }
}

static void status(lt_kernel *k, const char *state) {
  lt_kernel_send(k, k->iopub, NULL, 0, "status", json_pack("{s:s}", "execution_state", state));
}

/* torch._repl.kernel_install(api): display(), io.read through the notebook */
static void install_lua(lt_kernel *k) {
  lua_State *L = k->L;
  int top = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, "lutorch.module");
  if (lua_istable(L, -1) && lua_getfield(L, -1, "_repl") == LUA_TTABLE) {
    if (lua_getfield(L, -1, "install") == LUA_TFUNCTION && lua_pcall(L, 0, 0, 0) != LUA_OK)
      lt_kernel_log(k, "%s", lua_tostring(L, -1));
    lua_settop(L, top + 2);
    if (lua_getfield(L, -1, "kernel_install") == LUA_TFUNCTION) {
      lt_kernel_io_push_api(k, L);
      if (lua_pcall(L, 1, 0, 0) != LUA_OK) lt_kernel_log(k, "%s", lua_tostring(L, -1));
    }
  }
  lua_settop(L, top);
}

int lt_kernel_main(lua_State *L, const char *connection_file) {
  lt_kernel kern, *k = &kern;
  memset(k, 0, sizeof *k);
  k->L = L;
  k->log_fd = dup(STDERR_FILENO);
  if (k->log_fd < 0) k->log_fd = STDERR_FILENO;
  pthread_mutex_init(&k->iopub_lock, NULL);
  lt_jmsg_uuid(k->session);
  json_t *conf = read_connection(k, connection_file);
  if (!conf) return EXIT_FAILURE;
  const char *transport = json_string_value(json_object_get(conf, "transport"));
  const char *ip = json_string_value(json_object_get(conf, "ip"));
  if (!transport) transport = "tcp";
  if (!ip) ip = "127.0.0.1";
  if (strcmp(transport, "tcp") != 0 && strcmp(transport, "ipc") != 0) {
    lt_kernel_log(k, "transport '%s' is not supported (tcp or ipc)", transport);
    json_decref(conf);
    return EXIT_FAILURE;
  }
  /* SIGINT is the main thread's (call.c's handler stops the cell there): the
  ** threads started from here on (ZeroMQ's, the heartbeat, the stream reader)
  ** inherit a mask that blocks it */
  sigset_t block, old_mask;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  pthread_sigmask(SIG_BLOCK, &block, &old_mask);
  k->ctx = zmq_ctx_new();
  k->shell = open_socket(k, ZMQ_ROUTER, transport, ip, conf, "shell_port");
  k->control = k->shell ? open_socket(k, ZMQ_ROUTER, transport, ip, conf, "control_port") : NULL;
  k->stdin_sock = k->control ? open_socket(k, ZMQ_ROUTER, transport, ip, conf, "stdin_port") : NULL;
  k->iopub = k->stdin_sock ? open_socket(k, ZMQ_PUB, transport, ip, conf, "iopub_port") : NULL;
  k->hb = k->iopub ? open_socket(k, ZMQ_REP, transport, ip, conf, "hb_port") : NULL;
  json_decref(conf);
  pthread_t hb;
  bool hb_running = k->hb && pthread_create(&hb, NULL, hb_thread, k->hb) == 0;
  int rc = EXIT_FAILURE;
  bool io_ok = hb_running && lt_kernel_io_start(k) == 0;
  pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
  if (!io_ok) goto out;
  struct sigaction sa, old_sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = ignore_sigint;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &old_sa);
  lt_repl_kernel_mode = true;
  install_lua(k);
  status(k, "starting");
  rc = EXIT_SUCCESS;
  while (!k->quit) {
    zmq_pollitem_t items[3] = {
      { k->control, 0, ZMQ_POLLIN, 0 }, { k->shell, 0, ZMQ_POLLIN, 0 }, { k->stdin_sock, 0, ZMQ_POLLIN, 0 },
    };
    if (zmq_poll(items, 3, -1) < 0) {
      if (errno == EINTR) continue;
      lt_kernel_log(k, "poll: %s", zmq_strerror(errno));
      rc = EXIT_FAILURE;
      break;
    }
    /* control first: a shutdown or an interrupt goes before queued cells */
    for (int i = 0; i < 3 && !k->quit; i++) {
      if (!(items[i].revents & ZMQ_POLLIN)) continue;
      lt_jmsg m;
      lt_jframe *frames = NULL;
      size_t n = 0;
      if (lt_kernel_recv(k, items[i].socket, 0, &m, &frames, &n) != 1) continue;
      if (i == 2) {   /* an input_reply after its request gave up waiting */
        lt_kernel_log(k, "dropped a %s on stdin outside an input request", m.msg_type);
      } else {
        set_parent(k, &m, frames);
        status(k, "busy");
        lt_kernel_handle(k, items[i].socket, &m, frames);
        status(k, "idle");
        set_parent(k, NULL, NULL);
      }
      lt_jmsg_free(&m);
      lt_kernel_free_frames(frames, n);
    }
  }
  sigaction(SIGINT, &old_sa, NULL);
out:
  lt_kernel_io_stop(k);
  void *socks[4] = { k->shell, k->control, k->stdin_sock, k->iopub };
  for (int i = 0; i < 4; i++) if (socks[i]) zmq_close(socks[i]);
  if (k->hb && !hb_running) zmq_close(k->hb);
  zmq_ctx_shutdown(k->ctx);   /* the heartbeat's recv returns ETERM */
  if (hb_running) pthread_join(hb, NULL);
  zmq_ctx_term(k->ctx);
  set_parent(k, NULL, NULL);
  free(k->key.bytes);
  if (k->log_fd != STDERR_FILENO) close(k->log_fd);
  return rc;
}


/* ---- the kernelspec ------------------------------------------------------- */

static int mkdirs(const char *path) {
  char buf[PATH_MAX];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return -1;
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

int lt_kernel_install(const char *exe, bool user, const char *prefix) {
  char dir[PATH_MAX];
  const char *data = getenv("JUPYTER_DATA_DIR"), *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
  int n;
  if (prefix) n = snprintf(dir, sizeof dir, "%s/share/jupyter/kernels/lutorch", prefix);
  else if (user && data && *data) n = snprintf(dir, sizeof dir, "%s/kernels/lutorch", data);
  else if (user && xdg && *xdg) n = snprintf(dir, sizeof dir, "%s/jupyter/kernels/lutorch", xdg);
  else if (user && home && *home) n = snprintf(dir, sizeof dir, "%s/.local/share/jupyter/kernels/lutorch", home);
  else if (user) { fprintf(stderr, "lutorch --install-kernel --user: HOME is not set\n"); return 1; }
  else n = snprintf(dir, sizeof dir, "/usr/local/share/jupyter/kernels/lutorch");
  if (n < 0 || n >= (int)sizeof dir) { fprintf(stderr, "lutorch --install-kernel: the path is too long\n"); return 1; }
  if (mkdirs(dir) != 0) { fprintf(stderr, "lutorch --install-kernel: cannot create %s: %s\n", dir, strerror(errno)); return 1; }
  json_t *spec = json_pack("{s:[s,s,s,s], s:s, s:s, s:s, s:{}}", "argv", exe, "--kernel", "-f", "{connection_file}",
                           "display_name", "Lutorch", "language", "lua", "interrupt_mode", "signal", "metadata");
  char path[PATH_MAX + 16];
  snprintf(path, sizeof path, "%s/kernel.json", dir);
  int rc = spec ? json_dump_file(spec, path, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : -1;
  json_decref(spec);
  if (rc != 0) { fprintf(stderr, "lutorch --install-kernel: cannot write %s: %s\n", path, strerror(errno)); return 1; }
  printf("installed the Lutorch kernel: %s\n", path);
  return 0;
}
