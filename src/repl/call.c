/*
** call.c — running Lua code the way the program wants it: errors come back
** with a traceback, and Ctrl-C stops the call.
**
** The SIGINT handler never touches the Lua state beyond lua_sethook (which is
** safe in a signal handler): the hook raises "interrupted" at the next
** instruction, call or return. Long C kernels see lt_interrupt_flag at their
** next chunk (parallel.c) and return early; the hook then fires as soon as the
** op returns to Lua, so its unfinished result is never seen.
*/
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <lua.h>
#include <lauxlib.h>
#include "repl.h"
#include "core/error.h"

const char *lt_repl_progname = "lutorch";
bool lt_repl_kernel_mode;

static lua_State *volatile running_L = NULL;
static volatile sig_atomic_t presses;    /* Ctrl-C presses during this call */

static void stop_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  /* The op that saw the flag has returned and its result is never seen; a
  ** script that catches "interrupted" (to save and go on) runs its next ops
  ** with the flag down, or every kernel would skip its work and hand back
  ** uninitialised memory for the rest of the call. */
  lt_interrupt_flag = 0;
  lua_pushliteral(L, "interrupted");
  lua_error(L);
}

static void on_sigint(int sig) {
  (void)sig;
  presses++;
  lt_interrupt_flag = 1;
  if (running_L) lua_sethook(running_L, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
  if (lt_repl_kernel_mode) return;   /* the notebook's interrupt button: never a kill */
  if (presses == 2) {
    static const char msg[] = "\n(interrupting; press Ctrl-C again to kill lutorch)\n";
    ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)w;
  } else if (presses >= 3) {
    signal(SIGINT, SIG_DFL);
    raise(SIGINT);
  }
}

/* the error with a traceback; the REPL's own frame at the bottom left out */
static int msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  size_t n;
  const char *tb = lua_tolstring(L, -1, &n);
  static const char tail[] = "\n\t[C]: in ?";
  if (n >= sizeof tail - 1 && memcmp(tb + n - (sizeof tail - 1), tail, sizeof tail - 1) == 0) {
    lua_pushlstring(L, tb, n - (sizeof tail - 1));
    lua_remove(L, -2);
  }
  return 1;
}

int lt_repl_docall(lua_State *L, int narg, int nres) {
  int base = lua_gettop(L) - narg;
  lua_pushcfunction(L, msghandler);
  lua_insert(L, base);
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  presses = 0;
  lt_interrupt_flag = 0;
  running_L = L;
  sigaction(SIGINT, &sa, &old);
  int status = lua_pcall(L, narg, nres, base);
  sigaction(SIGINT, &old, NULL);
  running_L = NULL;
  lua_sethook(L, NULL, 0, 0);   /* a Ctrl-C that came after the last instruction */
  lt_interrupt_flag = 0;
  lua_remove(L, base);
  return status;
}

bool lt_repl_color(int fd) {
  const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");
  if (nc && *nc) return false;
  if (term && strcmp(term, "dumb") == 0) return false;
  return isatty(fd);
}

int lt_repl_report(lua_State *L, int status) {
  if (status != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    bool c = lt_repl_color(STDERR_FILENO);
    fflush(stdout);
    fprintf(stderr, "%s%s: %s%s\n", c ? "\033[31m" : "", lt_repl_progname,
            msg ? msg : "(error object is not a string)", c ? "\033[0m" : "");
    fflush(stderr);
    lua_pop(L, 1);
  }
  return status;
}
