/*
** kernel_shell.c — the kernel's answers to shell and control requests. A cell
** means what a REPL command does (repl.c): the values of a final expression are
** the result (execute_result, through torch._repl.result_bundle), a trailing
** `;` silences them, `? name` is help and `$ command` a shell command. Besides
** the REPL's rule, a cell whose last line (or lines) form an expression after
** statements returns that expression, as a notebook user expects.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <lua.h>
#include <lauxlib.h>
#include <cblas.h>
#include "kernel.h"
#include "repl.h"
#include "vm/lutorch_vm.h"


/* ---- running a cell ------------------------------------------------------- */

/* A cell of several lines whose last line (or lines) form an expression after
** whole statements returns it ("x = f()\nx:sum()" shows the sum, where Lua
** alone would take the call as a statement); else the REPL's compile. Leaves
** the function or the error message. */
static int compile_cell(lua_State *L, const char *code) {
  size_t n = strlen(code);
  int tries = 0;
  for (size_t p = n; p > 0 && tries < 64; p--) {
    if (code[p - 1] != '\n') continue;
    const char *tail = code + p;
    if (strspn(tail, " \t\r\n") == strlen(tail)) continue;
    tries++;
    /* the head must stand alone: not the inside of a loop or a function */
    if (luaL_loadbuffer(L, code, p, "=cell") != LUA_OK) { lua_pop(L, 1); continue; }
    lua_pop(L, 1);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addlstring(&b, code, p);
    luaL_addstring(&b, "return ");
    luaL_addstring(&b, tail);
    luaL_pushresult(&b);
    size_t len;
    const char *src = lua_tolstring(L, -1, &len);
    if (luaL_loadbuffer(L, src, len, "=cell") == LUA_OK) {
      lua_remove(L, -2);   /* the source */
      return LUA_OK;
    }
    lua_pop(L, 2);
  }
  return lt_repl_compile(L, code, "=cell");
}

/* the error on top as ename, evalue (the message's first line) and traceback */
static json_t *error_content(lua_State *L, const char *status) {
  size_t n;
  const char *msg = lua_tolstring(L, -1, &n);
  if (!msg) { msg = "(error object is not a string)"; n = strlen(msg); }
  const char *nl = memchr(msg, '\n', n);
  size_t first = nl ? (size_t)(nl - msg) : n;
  bool interrupted = first == 11 && memcmp(msg, "interrupted", 11) == 0;
  json_t *tb = json_array();
  const char *p = msg, *end = msg + n;
  while (p < end) {
    const char *e = memchr(p, '\n', (size_t)(end - p));
    size_t len = e ? (size_t)(e - p) : (size_t)(end - p);
    json_array_append_new(tb, lt_jmsg_string(p, len));
    p += len + 1;
  }
  return json_pack("{s:s, s:s, s:o, s:o}", "status", status, "ename", interrupted ? "KeyboardInterrupt" : "LuaError",
                   "evalue", lt_jmsg_string(msg, first), "traceback", tb);
}

/* torch._repl.result_bundle(width, ...) over the values above base -> data JSON */
static json_t *result_data(lt_kernel *k, int base) {
  lua_State *L = k->L;
  int n = lua_gettop(L) - base;
  if (n <= 0 || !lt_repl_push_fn(L, "result_bundle")) return NULL;
  lua_insert(L, base + 1);
  lua_pushinteger(L, 80);
  lua_insert(L, base + 2);
  if (lt_repl_docall(L, n + 1, 1) != LUA_OK) {
    lt_kernel_log(k, "result_bundle: %s", lua_tostring(L, -1));
    return json_pack("{s:s}", "text/plain", "(the result could not be shown)");
  }
  if (!lua_istable(L, -1)) return NULL;
  char err[256];
  json_t *data = lt_kernel_bundle(L, -1, err, sizeof err);
  if (!data) data = json_pack("{s:s}", "text/plain", err);
  return data;
}

static int run_help(lua_State *L) {
  if (!lt_repl_push_fn(L, "help")) { puts("help: not available"); return 0; }
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  if (lua_tostring(L, -1)) puts(lua_tostring(L, -1));
  return 0;
}

/* torch._repl.cell_done(): what waits for the end of a cell (gnuplot's inline figures) */
static int cell_done(lt_kernel *k) {
  lua_State *L = k->L;
  if (!lt_repl_push_fn(L, "cell_done")) return LUA_OK;
  return lt_repl_docall(L, 0, 0);
}

/* Runs code; sends its result, streams and error. Returns the error content or NULL. */
static json_t *run_cell(lt_kernel *k, const char *code, bool silent) {
  lua_State *L = k->L;
  int top = lua_gettop(L);
  const char *p = code;
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  bool one_line = strchr(p, '\n') == NULL || strspn(strchr(p, '\n'), " \t\r\n") == strlen(strchr(p, '\n'));
  int status = LUA_OK;
  json_t *data = NULL;
  if (*p == '?' && one_line) {
    lua_pushcfunction(L, run_help);
    lua_pushstring(L, p + 1);
    status = lt_repl_docall(L, 1, 0);
  } else if (*p == '$' && one_line) {
    fflush(stdout);
    int st = system(p + 1);
    if (st == -1) perror("lutorch: $");
    else if (WIFEXITED(st) && WEXITSTATUS(st) != 0) printf("[exit %d]\n", WEXITSTATUS(st));
    else if (WIFSIGNALED(st)) printf("[killed by signal %d]\n", WTERMSIG(st));
  } else if (*p) {
    status = compile_cell(L, code);
    if (status == LUA_OK) status = lt_repl_docall(L, 0, LUA_MULTRET);
    if (status == LUA_OK && !silent && !lt_repl_silenced(code)) data = result_data(k, top);
  }
  /* figures drawn before an error are shown too; the cell's error comes first */
  if (status == LUA_OK) {
    lua_settop(L, top);
    status = cell_done(k);
  } else if (cell_done(k) != LUA_OK) {
    lua_pop(L, 1);
  }
  json_t *err = NULL;
  lt_kernel_io_sync(k);
  if (status != LUA_OK) {
    err = error_content(L, "error");
    json_decref(data);
    data = NULL;
    if (!silent) {
      json_t *pub = json_deep_copy(err);
      json_object_del(pub, "status");   /* iopub's error has ename, evalue, traceback */
      lt_kernel_send(k, k->iopub, NULL, 0, "error", pub);
    }
  } else if (data && json_object_size(data) > 0) {
    lt_kernel_send(k, k->iopub, NULL, 0, "execute_result",
                   json_pack("{s:i, s:o, s:{}}", "execution_count", k->execution_count, "data", data, "metadata"));
    data = NULL;
  }
  json_decref(data);
  lua_settop(L, top);
  return err;
}

/* user_expressions: each evaluated after the cell, its text or its error */
static json_t *user_expressions(lt_kernel *k, json_t *exprs) {
  json_t *out = json_object();
  if (!json_is_object(exprs)) return out;
  lua_State *L = k->L;
  const char *name;
  json_t *v;
  json_object_foreach(exprs, name, v) {
    if (!json_is_string(v)) continue;
    int top = lua_gettop(L);
    lua_pushfstring(L, "return %s", json_string_value(v));
    int st = luaL_loadbuffer(L, lua_tostring(L, -1), lua_rawlen(L, -1), "=expression");
    lua_remove(L, -2);
    if (st == LUA_OK) st = lt_repl_docall(L, 0, LUA_MULTRET);
    json_t *r;
    if (st == LUA_OK) {
      json_t *data = result_data(k, top);
      r = json_pack("{s:s, s:o, s:{}}", "status", "ok", "data", data ? data : json_pack("{s:s}", "text/plain", "nil"), "metadata");
    } else {
      r = error_content(L, "error");
    }
    json_object_set_new(out, name, r);
    lua_settop(L, top);
  }
  return out;
}

static void execute(lt_kernel *k, void *sock, lt_jmsg *m, const lt_jframe *frames) {
  json_t *c = m->content;
  const char *code = json_string_value(json_object_get(c, "code"));
  bool silent = json_is_true(json_object_get(c, "silent"));
  json_t *sh = json_object_get(c, "store_history");
  bool store = !silent && (sh == NULL || json_is_true(sh));
  k->allow_stdin = json_is_true(json_object_get(c, "allow_stdin"));
  if (!code) code = "";
  if (store) k->execution_count++;
  if (!silent)
    lt_kernel_send(k, k->iopub, NULL, 0, "execute_input", json_pack("{s:s, s:i}", "code", code, "execution_count", k->execution_count));
  json_t *err = run_cell(k, code, silent);
  json_t *reply;
  if (err) {
    reply = err;
    json_object_set_new(reply, "execution_count", json_integer(k->execution_count));
  } else {
    reply = json_pack("{s:s, s:i, s:o, s:[]}", "status", "ok", "execution_count", k->execution_count,
                      "user_expressions", user_expressions(k, json_object_get(c, "user_expressions")), "payload");
  }
  k->allow_stdin = false;
  lt_kernel_send(k, sock, frames, m->nids, "execute_reply", reply);
}


/* ---- completion and inspection -------------------------------------------- */

/* the byte offset of code point `cp` in s (its length when past the end) */
static size_t byte_offset(const char *s, long long cp) {
  size_t i = 0;
  for (long long c = 0; s[i] && c < cp; c++) {
    i++;
    while (((unsigned char)s[i] & 0xc0) == 0x80) i++;
  }
  return i;
}

static long long code_points(const char *s, size_t n) {
  long long c = 0;
  for (size_t i = 0; i < n; i++) if (((unsigned char)s[i] & 0xc0) != 0x80) c++;
  return c;
}

static bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* completion must not hang the kernel on a looping __index */
static void comp_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  luaL_error(L, "completion takes too long");
}

static void complete(lt_kernel *k, void *sock, lt_jmsg *m, const lt_jframe *frames) {
  lua_State *L = k->L;
  const char *code = json_string_value(json_object_get(m->content, "code"));
  json_t *cp = json_object_get(m->content, "cursor_pos");
  if (!code) code = "";
  size_t end = json_is_integer(cp) ? byte_offset(code, json_integer_value(cp)) : strlen(code);
  size_t start = end;
  while (start > 0 && name_char(code[start - 1])) start--;
  json_t *matches = json_array();
  int top = lua_gettop(L);
  if (lt_repl_push_fn(L, "complete")) {
    lua_pushlstring(L, code, start);
    lua_pushlstring(L, code + start, end - start);
    lua_sethook(L, comp_hook, LUA_MASKCOUNT, 10000000);
    int st = lua_pcall(L, 2, 1, 0);
    lua_sethook(L, NULL, 0, 0);
    if (st == LUA_OK && lua_istable(L, -1)) {
      lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
      for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, i);
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        if (s) json_array_append_new(matches, lt_jmsg_string(s, len));
        lua_pop(L, 1);
      }
    }
  }
  lua_settop(L, top);
  long long cs = code_points(code, start), ce = code_points(code, end);
  lt_kernel_send(k, sock, frames, m->nids, "complete_reply",
                 json_pack("{s:s, s:o, s:I, s:I, s:{}}", "status", "ok", "matches", matches,
                           "cursor_start", (json_int_t)cs, "cursor_end", (json_int_t)ce, "metadata"));
}

static int inspect_call(lua_State *L) {
  if (!lt_repl_push_fn(L, "help")) return 0;
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  return 1;
}

static void inspect(lt_kernel *k, void *sock, lt_jmsg *m, const lt_jframe *frames) {
  lua_State *L = k->L;
  const char *code = json_string_value(json_object_get(m->content, "code"));
  json_t *cp = json_object_get(m->content, "cursor_pos");
  if (!code) code = "";
  size_t cur = json_is_integer(cp) ? byte_offset(code, json_integer_value(cp)) : strlen(code);
  /* the name at the cursor, or the function whose call it is just inside */
  while (cur > 0 && (code[cur - 1] == '(' || code[cur - 1] == ' ')) cur--;
  size_t a = cur, b = cur;
  while (a > 0 && (name_char(code[a - 1]) || code[a - 1] == '.' || code[a - 1] == ':')) a--;
  while (code[b] && name_char(code[b])) b++;
  while (a < b && (code[a] == '.' || code[a] == ':')) a++;
  json_t *data = json_object();
  bool found = false;
  if (b > a) {
    int top = lua_gettop(L);
    lua_pushcfunction(L, inspect_call);
    lua_pushlstring(L, code + a, b - a);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING) {
      size_t len;
      const char *s = lua_tolstring(L, -1, &len);
      if (!(len >= 6 && memcmp(s, "help: ", 6) == 0)) {
        found = true;
        json_object_set_new(data, "text/plain", lt_jmsg_string(s, len));
      }
    }
    lua_settop(L, top);
  }
  lt_kernel_send(k, sock, frames, m->nids, "inspect_reply",
                 json_pack("{s:s, s:b, s:o, s:{}}", "status", "ok", "found", found, "data", data, "metadata"));
}

static void is_complete(lt_kernel *k, void *sock, lt_jmsg *m, const lt_jframe *frames) {
  lua_State *L = k->L;
  const char *code = json_string_value(json_object_get(m->content, "code"));
  if (!code) code = "";
  const char *p = code;
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  const char *verdict = "complete";
  if (*p && *p != '?' && *p != '$') {
    int top = lua_gettop(L);
    int st = compile_cell(L, code);
    if (lt_repl_incomplete(L, st)) verdict = "incomplete";
    else if (st != LUA_OK) verdict = "invalid";
    lua_settop(L, top);
  }
  json_t *c = json_pack("{s:s}", "status", verdict);
  if (strcmp(verdict, "incomplete") == 0) json_object_set_new(c, "indent", json_string(""));
  lt_kernel_send(k, sock, frames, m->nids, "is_complete_reply", c);
}


/* ---- the rest ------------------------------------------------------------- */

static void kernel_info(lt_kernel *k, void *sock, lt_jmsg *m, const lt_jframe *frames) {
  char banner[512];
  const char *blas = openblas_get_config();
  snprintf(banner, sizeof banner, "lutorch %s (%s; %s)\n? name for help; display(x) shows a value", lutorch_version(),
           LUA_RELEASE, blas ? blas : "BLAS unknown");
  json_t *c = json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:s}, s:s, s:[{s:s, s:s}]}",
                        "status", "ok", "protocol_version", LT_JMSG_PROTOCOL, "implementation", "lutorch",
                        "implementation_version", lutorch_version(),
                        "language_info", "name", "lua", "version", LUA_VERSION_MAJOR "." LUA_VERSION_MINOR,
                        "mimetype", "text/x-lua", "file_extension", ".lua", "pygments_lexer", "lua", "codemirror_mode", "lua",
                        "banner", banner,
                        "help_links", "text", "Lua 5.4 manual", "url", "https://www.lua.org/manual/5.4/");
  lt_kernel_send(k, sock, frames, m->nids, "kernel_info_reply", c);
}

void lt_kernel_handle(lt_kernel *k, void *sock, lt_jmsg *m, const lt_jframe *frames) {
  const char *t = m->msg_type;
  if (strcmp(t, "execute_request") == 0) execute(k, sock, m, frames);
  else if (strcmp(t, "kernel_info_request") == 0) kernel_info(k, sock, m, frames);
  else if (strcmp(t, "complete_request") == 0) complete(k, sock, m, frames);
  else if (strcmp(t, "inspect_request") == 0) inspect(k, sock, m, frames);
  else if (strcmp(t, "is_complete_request") == 0) is_complete(k, sock, m, frames);
  else if (strcmp(t, "comm_info_request") == 0)
    lt_kernel_send(k, sock, frames, m->nids, "comm_info_reply", json_pack("{s:s, s:{}}", "status", "ok", "comms"));
  else if (strcmp(t, "history_request") == 0)   /* the kernel keeps no history */
    lt_kernel_send(k, sock, frames, m->nids, "history_reply", json_pack("{s:s, s:[]}", "status", "ok", "history"));
  else if (strcmp(t, "interrupt_request") == 0)   /* nothing runs while a request is read */
    lt_kernel_send(k, sock, frames, m->nids, "interrupt_reply", json_pack("{s:s}", "status", "ok"));
  else if (strcmp(t, "shutdown_request") == 0) {
    bool restart = json_is_true(json_object_get(m->content, "restart"));
    lt_kernel_send(k, sock, frames, m->nids, "shutdown_reply", json_pack("{s:s, s:b}", "status", "ok", "restart", restart));
    k->quit = true;
  } else if (strncmp(t, "comm_", 5) == 0) {
    /* no comm targets: a comm_open is closed at once, as the protocol asks */
    const char *id = json_string_value(json_object_get(m->content, "comm_id"));
    if (strcmp(t, "comm_open") == 0 && id)
      lt_kernel_send(k, k->iopub, NULL, 0, "comm_close", json_pack("{s:s, s:{}}", "comm_id", id, "data"));
  } else {
    lt_kernel_log(k, "ignored a %s (not supported)", t);
  }
}
