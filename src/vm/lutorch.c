/*
** lutorch.c — the `lutorch` program: runs scripts, -e chunks and a basic
** readline prompt, with the torch module preloaded as the global `torch`.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <limits.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include <readline/readline.h>
#include <readline/history.h>
#include "lutorch_vm.h"
#include "../tensor/error.h"

#define LUTORCH_VERSION "0.1.0"

static const char *progname = "lutorch";
static lua_State *global_L = NULL;

/* SIGINT never touches the state: it sets a hook that raises at the next
** safe point, and the flag long C kernels poll. */
static void stop_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  luaL_error(L, "interrupted");
}

static void on_sigint(int sig) {
  signal(sig, SIG_DFL);
  lt_interrupt_flag = 1;
  if (global_L) lua_sethook(global_L, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

static int msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

static int docall(lua_State *L, int narg, int nres) {
  int base = lua_gettop(L) - narg;
  lua_pushcfunction(L, msghandler);
  lua_insert(L, base);
  global_L = L;
  signal(SIGINT, on_sigint);
  int status = lua_pcall(L, narg, nres, base);
  signal(SIGINT, SIG_DFL);
  lt_interrupt_flag = 0;
  lua_remove(L, base);
  return status;
}

static int report(lua_State *L, int status) {
  if (status != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "%s: %s\n", progname, msg ? msg : "(error object is not a string)");
    fflush(stderr);
    lua_pop(L, 1);
  }
  return status;
}

/* where the Lua libraries are: lib/ beside build/ in the source tree, or the
** install's share directory */
static void set_paths(lua_State *L, const char *argv0) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) { strncpy(exe, argv0, sizeof exe - 1); n = (ssize_t)strlen(exe); }
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (slash) *slash = 0; else strcpy(exe, ".");
  lua_getglobal(L, "package");
  lua_pushfstring(L, "%s/../lib/?.lua;%s/../lib/?/init.lua;%s/../share/lutorch/lua/?.lua;%s/../share/lutorch/lua/?/init.lua;",
                  exe, exe, exe, exe);
  lua_getfield(L, -2, "path");
  lua_concat(L, 2);
  lua_setfield(L, -2, "path");
  lua_pop(L, 1);
}

static int dochunk(lua_State *L, int status) {
  if (status == LUA_OK) status = docall(L, 0, 0);
  return report(L, status);
}

static int dostring(lua_State *L, const char *s, const char *name) {
  return dochunk(L, luaL_loadbuffer(L, s, strlen(s), name));
}

static int dolibrary(lua_State *L, const char *name) {
  lua_getglobal(L, "require");
  lua_pushstring(L, name);
  int status = docall(L, 1, 1);
  if (status == LUA_OK) lua_setglobal(L, name);
  return report(L, status);
}

/* print every value left on the stack, through torch's printer when present */
static void print_results(lua_State *L) {
  int n = lua_gettop(L);
  if (n == 0) return;
  luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
  lua_getglobal(L, "print");
  lua_insert(L, 1);
  if (lua_pcall(L, n, 0, 0) != LUA_OK)
    fprintf(stderr, "%s: error calling 'print' (%s)\n", progname, lua_tostring(L, -1));
}

static int incomplete(lua_State *L, int status) {
  if (status == LUA_ERRSYNTAX) {
    size_t lmsg;
    const char *msg = lua_tolstring(L, -1, &lmsg);
    if (lmsg >= 5 && strcmp(msg + lmsg - 5, "<eof>") == 0) {
      lua_pop(L, 1);
      return 1;
    }
  }
  return 0;
}

static void repl(lua_State *L) {
  const char *hist = getenv("LUTORCH_HISTORY");
  char histbuf[PATH_MAX];
  if (!hist && getenv("HOME")) {
    snprintf(histbuf, sizeof histbuf, "%s/.lutorch_history", getenv("HOME"));
    hist = histbuf;
  }
  if (hist) read_history(hist);
  printf("lutorch %s  (%s)  — `os.exit()` or Ctrl-D to leave\n", LUTORCH_VERSION, LUA_RELEASE);
  for (;;) {
    char *line = readline("> ");
    if (!line) break;
    if (!*line) { free(line); continue; }
    char *buf = strdup(line);
    free(line);
    int status;
    for (;;) {
      /* an expression prints its value: try "return <line>" first; a trailing ';' silences */
      lua_settop(L, 0);
      size_t n = strlen(buf);
      if (!(n > 0 && buf[n - 1] == ';')) {
        const char *ret = lua_pushfstring(L, "return %s", buf);
        status = luaL_loadbuffer(L, ret, strlen(ret), "=stdin");
        lua_remove(L, -2);
        if (status == LUA_OK) break;
        lua_pop(L, 1);
      }
      status = luaL_loadbuffer(L, buf, strlen(buf), "=stdin");
      if (!incomplete(L, status)) break;
      char *more = readline(">> ");
      if (!more) break;
      char *joined = malloc(strlen(buf) + strlen(more) + 2);
      sprintf(joined, "%s\n%s", buf, more);
      free(buf);
      free(more);
      buf = joined;
    }
    add_history(buf);
    free(buf);
    if (status == LUA_OK) {
      lua_settop(L, 1);
      status = docall(L, 0, LUA_MULTRET);
    }
    if (status == LUA_OK) print_results(L);
    else report(L, status);
    lua_settop(L, 0);
  }
  if (hist) { stifle_history(1000); write_history(hist); }
  printf("\n");
}

static void usage(void) {
  fprintf(stderr,
          "usage: %s [options] [script [args]]\n"
          "  -e stat   execute string 'stat'\n"
          "  -l mod    require library 'mod' into global 'mod'\n"
          "  -i        enter interactive mode after running the script\n"
          "  -v        show version information\n"
          "  --        stop handling options\n"
          "  -         run stdin as a script\n", progname);
}

static int pmain(lua_State *L) {
  int argc = (int)lua_tointeger(L, 1);
  char **argv = (char **)lua_touserdata(L, 2);
  luaL_openlibs(L);
  set_paths(L, argv[0]);
  luaL_requiref(L, "torch", luaopen_torch, 1);
  lua_pop(L, 1);
  /* Most tensors die young: the generational collector frees them in small
  ** batches, so their headers are reused from the allocator's caches instead
  ** of piling up (4x faster per small op than the incremental collector). */
  lua_gc(L, LUA_GCGEN, 0, 0);
  int interactive = 0, script = 0, ran = 0;
  int i;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || strcmp(a, "-") == 0) { script = i; break; }
    if (strcmp(a, "--") == 0) { if (i + 1 < argc) script = i + 1; break; }
    if (strcmp(a, "-i") == 0) interactive = 1;
    else if (strcmp(a, "-v") == 0) { printf("lutorch %s (%s)\n", LUTORCH_VERSION, LUA_RELEASE); ran = 1; }
    else if (strcmp(a, "-e") == 0 || strcmp(a, "-l") == 0) {
      if (i + 1 >= argc) { usage(); lua_pushboolean(L, 0); return 1; }
      int st = a[1] == 'e' ? dostring(L, argv[i + 1], "=(command line)") : dolibrary(L, argv[i + 1]);
      if (st != LUA_OK) { lua_pushboolean(L, 0); return 1; }
      ran = 1;
      i++;
    } else { usage(); lua_pushboolean(L, 0); return 1; }
  }
  if (script) {
    /* arg table: script at 0, its arguments from 1 */
    lua_createtable(L, argc - script, script + 1);
    for (int k = 0; k < argc; k++) {
      lua_pushstring(L, argv[k]);
      lua_rawseti(L, -2, k - script);
    }
    lua_setglobal(L, "arg");
    const char *fname = strcmp(argv[script], "-") == 0 ? NULL : argv[script];
    int status = luaL_loadfile(L, fname);
    if (status == LUA_OK) {
      int n = argc - script - 1;
      luaL_checkstack(L, n, "too many arguments to script");
      for (int k = script + 1; k < argc; k++) lua_pushstring(L, argv[k]);
      status = docall(L, n, LUA_MULTRET);
    }
    if (report(L, status) != LUA_OK) { lua_pushboolean(L, 0); return 1; }
    ran = 1;
  }
  if (interactive || (!ran && isatty(0))) repl(L);
  else if (!ran) dochunk(L, luaL_loadfile(L, NULL));
  lua_pushboolean(L, 1);
  return 1;
}

int main(int argc, char **argv) {
  lua_State *L = luaL_newstate();
  if (!L) { fprintf(stderr, "%s: cannot create state: not enough memory\n", progname); return EXIT_FAILURE; }
  lua_pushcfunction(L, pmain);
  lua_pushinteger(L, argc);
  lua_pushlightuserdata(L, argv);
  int status = lua_pcall(L, 2, 1, 0);
  int ok = lua_toboolean(L, -1);
  report(L, status);
  lua_close(L);
  return (ok && status == LUA_OK) ? EXIT_SUCCESS : EXIT_FAILURE;
}
