/*
** kernel_io.c — what a cell writes and asks for, as messages:
**  - stdout and stderr (file descriptors 1 and 2, so print, io.write, C code and
**    the commands of os.execute alike) are pipes; a thread reads them and sends
**    `stream` messages on iopub while the cell runs;
**  - torch._display_hook sends `display_data` (image/png and other bundles);
**  - io.read sends an `input_request` on stdin and waits for the reply.
*/
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>
#include <lua.h>
#include <lauxlib.h>
#include "kernel.h"
#include "core/error.h"       /* lt_interrupt_flag */


/* ---- the stream thread ---------------------------------------------------- */

typedef struct stream {
  int rd;               /* the pipe's read end */
  int saved;            /* the descriptor it replaced, restored at the end */
  const char *name;     /* "stdout" or "stderr" */
  char carry[4];        /* the start of a UTF-8 sequence cut by the last read */
  size_t ncarry;
} stream;

static struct {
  stream out[2];
  int wake[2];          /* main -> thread: sync now, or stop */
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cond;
  unsigned long asked, done;   /* sync requests made and served */
  bool stop, running;
  lt_kernel *k;
} io = { .wake = { -1, -1 } };

static void send_text(lt_kernel *k, stream *s, const char *buf, size_t n, bool final) {
  char *joined = NULL;
  if (s->ncarry > 0) {
    joined = malloc(s->ncarry + n);
    if (!joined) return;
    memcpy(joined, s->carry, s->ncarry);
    memcpy(joined + s->ncarry, buf, n);
    buf = joined;
    n += s->ncarry;
    s->ncarry = 0;
  }
  size_t whole = final ? n : lt_jmsg_utf8_whole(buf, n);
  if (whole < n && n - whole <= sizeof s->carry) {
    memcpy(s->carry, buf + whole, n - whole);
    s->ncarry = n - whole;
  } else {
    whole = n;
  }
  if (whole > 0) {
    json_t *text = lt_jmsg_string(buf, whole);
    if (text) lt_kernel_send(k, k->iopub, NULL, 0, "stream", json_pack("{s:s, s:o}", "name", s->name, "text", text));
  }
  free(joined);
}

/* sends what is in the pipe now (and, when final, a cut sequence kept back) */
static void drain(lt_kernel *k, stream *s, bool final) {
  char buf[65536];
  for (;;) {
    ssize_t r = read(s->rd, buf, sizeof buf);
    if (r > 0) { send_text(k, s, buf, (size_t)r, false); continue; }
    if (r < 0 && errno == EINTR) continue;
    break;   /* empty (EAGAIN) */
  }
  if (final && s->ncarry > 0) send_text(k, s, "", 0, true);
}

static void *stream_thread(void *arg) {
  lt_kernel *k = arg;
  for (;;) {
    struct pollfd p[3] = { { io.out[0].rd, POLLIN, 0 }, { io.out[1].rd, POLLIN, 0 }, { io.wake[0], POLLIN, 0 } };
    if (poll(p, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; i++)
      if (p[i].revents & (POLLIN | POLLHUP)) drain(k, &io.out[i], false);
    if (p[2].revents & POLLIN) {
      char c[64];
      ssize_t r = read(io.wake[0], c, sizeof c);
      (void)r;
      /* everything written before the request is in the pipes now */
      for (int i = 0; i < 2; i++) drain(k, &io.out[i], true);
      pthread_mutex_lock(&io.mu);
      io.done = io.asked;
      bool stop = io.stop;
      pthread_cond_broadcast(&io.cond);
      pthread_mutex_unlock(&io.mu);
      if (stop) break;
    }
  }
  return NULL;
}

static int capture(stream *s, int fd, const char *name) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return -1;
  fcntl(p[0], F_SETFL, O_NONBLOCK);
  s->saved = dup(fd);
  s->rd = p[0];
  s->name = name;
  s->ncarry = 0;
  if (s->saved < 0 || dup2(p[1], fd) < 0) { close(p[0]); close(p[1]); return -1; }
  close(p[1]);
  return 0;
}

int lt_kernel_io_start(lt_kernel *k) {
  fflush(stdout);
  fflush(stderr);
  io.k = k;
  if (pipe2(io.wake, O_CLOEXEC) != 0) return -1;
  if (capture(&io.out[0], STDOUT_FILENO, "stdout") != 0 || capture(&io.out[1], STDERR_FILENO, "stderr") != 0) {
    lt_kernel_log(k, "cannot redirect stdout and stderr: %s", strerror(errno));
    return -1;
  }
  /* a line at a time: print's lines go out as they are written */
  setvbuf(stdout, NULL, _IOLBF, 0);
  pthread_mutex_init(&io.mu, NULL);
  pthread_cond_init(&io.cond, NULL);
  io.stop = false;
  io.asked = io.done = 0;
  if (pthread_create(&io.thread, NULL, stream_thread, k) != 0) return -1;
  io.running = true;
  return 0;
}

static void request_sync(bool stop) {
  fflush(stdout);
  fflush(stderr);
  pthread_mutex_lock(&io.mu);
  unsigned long my = ++io.asked;
  if (stop) io.stop = true;
  ssize_t w = write(io.wake[1], "s", 1);
  (void)w;
  while (io.done < my) pthread_cond_wait(&io.cond, &io.mu);
  pthread_mutex_unlock(&io.mu);
}

void lt_kernel_io_sync(lt_kernel *k) {
  (void)k;
  if (io.running) request_sync(false);
}

void lt_kernel_io_stop(lt_kernel *k) {
  (void)k;
  if (io.running) {
    request_sync(true);
    pthread_join(io.thread, NULL);
    io.running = false;
  }
  for (int i = 0; i < 2; i++) {
    if (io.out[i].name) {
      dup2(io.out[i].saved, i == 0 ? STDOUT_FILENO : STDERR_FILENO);
      close(io.out[i].saved);
      close(io.out[i].rd);
      io.out[i].name = NULL;
    }
  }
  for (int i = 0; i < 2; i++) if (io.wake[i] >= 0) { close(io.wake[i]); io.wake[i] = -1; }
}


/* ---- Lua values as JSON --------------------------------------------------- */

static json_t *to_json(lua_State *L, int idx, int depth);

static json_t *table_to_json(lua_State *L, int idx, int depth) {
  idx = lua_absindex(L, idx);
  lua_Unsigned n = lua_rawlen(L, idx);
  bool array = n > 0;
  if (array) {   /* a sequence with nothing else */
    lua_pushnil(L);
    while (lua_next(L, idx)) {
      lua_pop(L, 1);
      if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || (lua_Unsigned)lua_tointeger(L, -1) > n) array = false;
    }
  }
  json_t *j = array ? json_array() : json_object();
  if (array) {
    for (lua_Unsigned i = 1; i <= n; i++) {
      lua_rawgeti(L, idx, (lua_Integer)i);
      json_array_append_new(j, to_json(L, -1, depth + 1));
      lua_pop(L, 1);
    }
    return j;
  }
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) == LUA_TSTRING) json_object_set_new(j, lua_tostring(L, -2), to_json(L, -1, depth + 1));
    lua_pop(L, 1);
  }
  return j;
}

static json_t *to_json(lua_State *L, int idx, int depth) {
  if (depth > 32) return json_null();
  switch (lua_type(L, idx)) {
  case LUA_TBOOLEAN: return json_boolean(lua_toboolean(L, idx));
  case LUA_TNUMBER:
    if (lua_isinteger(L, idx)) return json_integer((json_int_t)lua_tointeger(L, idx));
    return json_real(lua_tonumber(L, idx));
  case LUA_TSTRING: {
    size_t n;
    const char *s = lua_tolstring(L, idx, &n);
    json_t *j = lt_jmsg_string(s, n);
    return j ? j : json_null();
  }
  case LUA_TTABLE: return table_to_json(L, idx, depth);
  default: return json_null();
  }
}

/* text (sent as is) or binary data (sent as base64, as Jupyter stores images) */
static bool textual(const char *mime) {
  return strncmp(mime, "text/", 5) == 0 || strstr(mime, "+xml") || strstr(mime, "json") || strstr(mime, "javascript");
}


/* ---- display ------------------------------------------------------------- */

json_t *lt_kernel_bundle(lua_State *L, int idx, char *err, size_t errlen) {
  idx = lua_absindex(L, idx);
  json_t *data = json_object();
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING) {
      snprintf(err, errlen, "a bundle's keys are MIME types (strings), not %ss", luaL_typename(L, -2));
      lua_pop(L, 2);
      json_decref(data);
      return NULL;
    }
    const char *mime = lua_tostring(L, -2);
    json_t *v;
    if (lua_type(L, -1) == LUA_TSTRING && !textual(mime)) {
      size_t n;
      const char *s = lua_tolstring(L, -1, &n);
      v = lt_jmsg_base64(s, n);
    } else if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TTABLE) {
      v = to_json(L, -1, 0);
    } else {
      snprintf(err, errlen, "the bundle's '%s' is a %s (a string or a table expected)", mime, luaL_typename(L, -1));
      lua_pop(L, 2);
      json_decref(data);
      return NULL;
    }
    if (!v) {
      snprintf(err, errlen, "not enough memory for the bundle's '%s'", mime);
      lua_pop(L, 2);
      json_decref(data);
      return NULL;
    }
    json_object_set_new(data, mime, v);
    lua_pop(L, 1);
  }
  return data;
}

/* torch._display_hook(bundle [, opts]): opts.metadata, opts.display_id, opts.update */
static int l_display(lua_State *L) {
  lt_kernel *k = lua_touserdata(L, lua_upvalueindex(1));
  luaL_checktype(L, 1, LUA_TTABLE);
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
  char err[256];
  json_t *data = lt_kernel_bundle(L, 1, err, sizeof err);
  if (!data) return luaL_error(L, "display: %s", err);
  json_t *meta = NULL, *transient = json_object();
  bool update = false;
  if (lua_istable(L, 2)) {
    if (lua_getfield(L, 2, "metadata") == LUA_TTABLE) meta = to_json(L, -1, 0);
    lua_pop(L, 1);
    if (lua_getfield(L, 2, "display_id") != LUA_TNIL) {
      json_object_set_new(transient, "display_id", json_string(luaL_tolstring(L, -1, NULL)));
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    update = lua_getfield(L, 2, "update") != LUA_TNIL && lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  if (!json_is_object(meta)) { json_decref(meta); meta = json_object(); }
  lt_kernel_io_sync(k);   /* what was printed before the picture comes before it */
  lt_kernel_send(k, k->iopub, NULL, 0, update ? "update_display_data" : "display_data",
                 json_pack("{s:o, s:o, s:o}", "data", data, "metadata", meta, "transient", transient));
  return 0;
}


/* ---- input ---------------------------------------------------------------- */

/* input(prompt, password) -> the line the notebook's user typed */
static int l_input(lua_State *L) {
  lt_kernel *k = lua_touserdata(L, lua_upvalueindex(1));
  const char *prompt = luaL_optstring(L, 1, "");
  bool password = lua_toboolean(L, 2);
  if (!k->allow_stdin)
    return luaL_error(L, "io.read: this client does not take input (its execute_request has allow_stdin false)");
  lt_kernel_io_sync(k);
  lt_kernel_send(k, k->stdin_sock, k->ids, k->nids, "input_request",
                 json_pack("{s:s, s:b}", "prompt", prompt, "password", password));
  for (;;) {
    lt_jmsg m;
    lt_jframe *frames = NULL;
    size_t n = 0;
    int r = lt_kernel_recv(k, k->stdin_sock, 200, &m, &frames, &n);
    if (lt_interrupt_flag) {
      if (r == 1) { lt_jmsg_free(&m); lt_kernel_free_frames(frames, n); }
      lua_pushliteral(L, "interrupted");
      return lua_error(L);
    }
    if (r < 0 && errno != EINTR) return luaL_error(L, "io.read: %s", zmq_strerror(errno));
    if (r != 1) continue;
    bool reply = strcmp(m.msg_type, "input_reply") == 0;
    json_t *v = json_object_get(m.content, "value");
    if (reply) {
      if (json_is_string(v)) lua_pushlstring(L, json_string_value(v), json_string_length(v));
      else lua_pushliteral(L, "");
    } else {
      lt_kernel_log(k, "dropped a %s on stdin while waiting for input", m.msg_type);
    }
    lt_jmsg_free(&m);
    lt_kernel_free_frames(frames, n);
    if (reply) return 1;
  }
}

void lt_kernel_io_push_api(lt_kernel *k, lua_State *L) {
  lua_createtable(L, 0, 2);
  lua_pushlightuserdata(L, k);
  lua_pushcclosure(L, l_display, 1);
  lua_setfield(L, -2, "display");
  lua_pushlightuserdata(L, k);
  lua_pushcclosure(L, l_input, 1);
  lua_setfield(L, -2, "input");
}
