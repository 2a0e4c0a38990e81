/*
** repl.c — lutorch's read-eval-print loop: Lua commands (an expression prints
** its values, `;` at the end silences it, an unfinished statement continues on
** a second prompt), `? name` help, `$ command`, `:timing`, `:quit`.
** Values print through torch._repl.show (src/vm/lua/repl.lua).
*/
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <lua.h>
#include <lauxlib.h>
#include <cblas.h>
#include "repl.h"
#include "cpu/parallel.h"
#include "vm/lutorch_vm.h"         /* lutorch_version */


static bool color_out;       /* colours on stdout */
static bool timing;          /* :timing on */

#define C_BOLD  "\033[1m"
#define C_DIM   "\033[2m"
#define C_GREEN "\033[32m"
#define C_RESET "\033[0m"
/* readline counts the prompt's width without what lies between these */
#define RL_IGN(s) "\001" s "\002"

static const char *col(const char *code) { return color_out ? code : ""; }

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int lt_repl_push_fn(lua_State *L, const char *name) {
  int top = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, "lutorch.module");
  if (lua_istable(L, -1) && lua_getfield(L, -1, "_repl") == LUA_TTABLE &&
      lua_getfield(L, -1, name) == LUA_TFUNCTION) {
    lua_replace(L, top + 1);
    lua_settop(L, top + 1);
    return 1;
  }
  lua_settop(L, top);
  return 0;
}


/* ---- the banner ----------------------------------------------------------- */

/* "CUDA: ..." from torch.cuda when a backend provides it */
static void push_cuda_line(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, "lutorch.module");
  int t = lua_gettop(L);
  const char *s = "CUDA: not built";
  if (lua_istable(L, t) && lua_getfield(L, t, "cuda") == LUA_TTABLE) {
    if (lua_getfield(L, -1, "is_available") == LUA_TFUNCTION && lua_pcall(L, 0, 1, 0) == LUA_OK)
      s = lua_toboolean(L, -1) ? "CUDA: available" : "CUDA: built, no device";
  }
  lua_pushstring(L, s);
  lua_replace(L, t);
  lua_settop(L, t);
}

static void banner(lua_State *L) {
  const char *blas = openblas_get_config();
  int nt = lt_get_num_threads();
  push_cuda_line(L);
  printf("%slutorch %s%s  (%s; %s; %d thread%s; %s)\n", col(C_BOLD), lutorch_version(), col(C_RESET), LUA_RELEASE,
         blas ? blas : "BLAS unknown", nt, nt == 1 ? "" : "s", lua_tostring(L, -1));
  printf("%s? for help, :quit or Ctrl-D to leave%s\n", col(C_DIM), col(C_RESET));
  lua_pop(L, 1);
}


/* ---- Lua commands --------------------------------------------------------- */

/* a syntax error that only says the chunk stopped early */
bool lt_repl_incomplete(lua_State *L, int status) {
  if (status != LUA_ERRSYNTAX) return false;
  size_t n;
  const char *msg = lua_tolstring(L, -1, &n);
  if (n >= 5 && strcmp(msg + n - 5, "<eof>") == 0) {
    lua_pop(L, 1);
    return true;
  }
  return false;
}

/* Compiles buf as `return buf` (an expression: its values print) or else as
** statements; leaves the function or the error message. */
int lt_repl_compile(lua_State *L, const char *buf, const char *chunkname) {
  const char *src = buf;
  if (*src == '=') src++;   /* Lua 5.1's `= expr` habit */
  const char *ret = lua_pushfstring(L, "return %s", src);
  int status = luaL_loadbuffer(L, ret, strlen(ret), chunkname);
  lua_remove(L, -2);
  if (status == LUA_OK) return status;
  lua_pop(L, 1);
  /* `statements; expression` prints the expression (when the statements
  ** are whole by themselves: not `for ... do a; b end`) */
  const char *semi = strrchr(src, ';');
  if (semi && strspn(semi + 1, " \t\n") < strlen(semi + 1)) {
    lua_pushlstring(L, src, (size_t)(semi - src + 1));
    size_t hn;
    const char *head = lua_tolstring(L, -1, &hn);
    status = luaL_loadbuffer(L, head, hn, chunkname);
    lua_pop(L, 1);
    if (status != LUA_OK) {
      lua_pop(L, 1);
      return luaL_loadbuffer(L, buf, strlen(buf), chunkname);
    }
    ret = lua_pushfstring(L, "%s return %s", head, semi + 1);
    status = luaL_loadbuffer(L, ret, strlen(ret), chunkname);
    lua_remove(L, -2);
    lua_remove(L, -2);
    if (status == LUA_OK) return status;
    lua_pop(L, 1);
  }
  return luaL_loadbuffer(L, buf, strlen(buf), chunkname);
}

/* Reads continuation lines while the chunk is unfinished; *buf grows. Returns
** the load status with the function or message pushed, or -1 when Ctrl-C or
** Ctrl-D abandoned the command. */
static int read_chunk(lua_State *L, char **buf) {
  for (;;) {
    int status = lt_repl_compile(L, *buf, "=stdin");
    if (!lt_repl_incomplete(L, status)) return status;
    char *more = NULL;
    const char *p2 = color_out ? RL_IGN(C_GREEN) ">> " RL_IGN(C_RESET) : ">> ";
    int r = lt_line_read(p2, &more);
    if (r == LT_LINE_INTERRUPT) {
      lt_line_remember(*buf);
      return -1;
    }
    if (r == LT_LINE_EOF) {   /* the input ended inside the command: its syntax error */
      putchar('\n');
      lt_line_remember(*buf);
      return luaL_loadbuffer(L, *buf, strlen(*buf), "=stdin");
    }
    size_t a = strlen(*buf), b = strlen(more);
    char *joined = malloc(a + b + 2);
    if (!joined) { free(more); return -1; }
    memcpy(joined, *buf, a);
    joined[a] = '\n';
    memcpy(joined + a + 1, more, b + 1);
    free(*buf);
    free(more);
    *buf = joined;
  }
}

bool lt_repl_silenced(const char *s) {
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r')) n--;
  return n > 0 && s[n - 1] == ';';
}

/* the values on the stack above `base`, through torch._repl.show */
static void print_values(lua_State *L, int base) {
  int n = lua_gettop(L) - base;
  if (n <= 0) return;
  luaL_checkstack(L, 4, "too many results to print");
  if (!lt_repl_push_fn(L, "show")) return;
  lua_insert(L, base + 1);
  lua_pushinteger(L, lt_line_width());
  lua_insert(L, base + 2);
  int status = lt_repl_docall(L, n + 1, 1);
  if (status != LUA_OK) { lt_repl_report(L, status); return; }
  const char *s = lua_tostring(L, -1);
  if (s) { fputs(s, stdout); fputc('\n', stdout); }
  fflush(stdout);
  lua_pop(L, 1);
}

static void lua_command(lua_State *L, char *line) {
  char *buf = line;
  int top = lua_gettop(L);
  int status = read_chunk(L, &buf);
  if (status < 0) { free(buf); return; }
  lt_line_remember(buf);
  bool quiet = lt_repl_silenced(buf);
  free(buf);
  if (status == LUA_OK) status = lt_repl_docall(L, 0, LUA_MULTRET);
  if (status == LUA_OK) {
    if (!quiet) print_values(L, top);
  } else {
    lt_repl_report(L, status);
  }
  lua_settop(L, top);
}


/* ---- the other commands --------------------------------------------------- */

static void help_command(lua_State *L, const char *what) {
  int top = lua_gettop(L);
  if (!lt_repl_push_fn(L, "help")) { puts("help: not available"); return; }
  lua_pushstring(L, what);
  int status = lt_repl_docall(L, 1, 1);
  if (status != LUA_OK) lt_repl_report(L, status);
  else if (lua_tostring(L, -1)) puts(lua_tostring(L, -1));
  fflush(stdout);
  lua_settop(L, top);
}

static void shell_command(const char *cmd) {
  fflush(stdout);
  fflush(stderr);
  int st = system(cmd);
  if (st == -1) perror("lutorch: $");
  else if (WIFEXITED(st) && WEXITSTATUS(st) != 0) printf("%s[exit %d]%s\n", col(C_DIM), WEXITSTATUS(st), col(C_RESET));
  else if (WIFSIGNALED(st)) printf("%s[killed by signal %d]%s\n", col(C_DIM), WTERMSIG(st), col(C_RESET));
  fflush(stdout);
}

/* `:name args`; returns false for :quit */
static bool colon_command(lua_State *L, const char *cmd) {
  char name[32] = "", arg[32] = "";
  sscanf(cmd, "%31s %31s", name, arg);
  if (strcmp(name, "quit") == 0 || strcmp(name, "q") == 0 || strcmp(name, "exit") == 0) return false;
  if (strcmp(name, "timing") == 0) {
    if (strcmp(arg, "on") == 0) timing = true;
    else if (strcmp(arg, "off") == 0) timing = false;
    else if (*arg) { printf(":timing: expected on or off, got '%s'\n", arg); return true; }
    printf("timing is %s\n", timing ? "on" : "off");
  } else if (strcmp(name, "help") == 0) {
    help_command(L, "");
  } else {
    printf("unknown command ':%s' (:timing on|off, :quit; ? for help)\n", name);
  }
  fflush(stdout);
  return true;
}

static void print_time(double seconds) {
  if (seconds < 1e-3) printf("%s(%.1f us)%s\n", col(C_DIM), seconds * 1e6, col(C_RESET));
  else if (seconds < 1) printf("%s(%.2f ms)%s\n", col(C_DIM), seconds * 1e3, col(C_RESET));
  else printf("%s(%.3f s)%s\n", col(C_DIM), seconds, col(C_RESET));
  fflush(stdout);
}


/* ---- the loop ------------------------------------------------------------- */

static void install_globals(lua_State *L) {
  if (lt_repl_push_fn(L, "install")) {
    if (lua_pcall(L, 0, 0, 0) != LUA_OK) lua_pop(L, 1);
  }
}

/* Between commands a Ctrl-C does nothing (at the prompt and while a command
** runs, line.c and call.c have their own handlers). */
static void ignore_sigint(int sig) { (void)sig; }

void lt_repl_run(lua_State *L, bool show_banner) {
  struct sigaction sa, old_sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = ignore_sigint;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &old_sa);
  color_out = lt_repl_color(STDOUT_FILENO);
  const char *hist = getenv("LUTORCH_HISTORY");
  char histbuf[4096];
  if (!hist && getenv("HOME")) {
    snprintf(histbuf, sizeof histbuf, "%s/.lutorch_history", getenv("HOME"));
    hist = histbuf;
  }
  const char *hs = getenv("LUTORCH_HISTORY_SIZE");
  lt_line_open(L, hist, hs ? atoi(hs) : 1000);
  install_globals(L);
  if (show_banner) banner(L);
  fflush(stdout);
  const char *prompt = color_out ? RL_IGN(C_GREEN) "> " RL_IGN(C_RESET) : "> ";
  for (;;) {
    char *line = NULL;
    int r = lt_line_read(prompt, &line);
    if (r == LT_LINE_EOF) { putchar('\n'); break; }
    if (r == LT_LINE_INTERRUPT) continue;
    const char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) { free(line); continue; }
    double t0 = now();
    bool timed = true;
    if (*p == '?') {
      lt_line_remember(line);
      help_command(L, p + 1);
      timed = false;
      free(line);
    } else if (*p == '$') {
      lt_line_remember(line);
      shell_command(p + 1);
      free(line);
    } else if (p[0] == ':' && p[1] != ':') {
      lt_line_remember(line);
      bool go_on = colon_command(L, p + 1);
      free(line);
      if (!go_on) break;
      timed = false;
    } else {
      lua_command(L, line);   /* frees line */
    }
    if (timing && timed) print_time(now() - t0);
  }
  fflush(stdout);
  lt_line_close();
  sigaction(SIGINT, &old_sa, NULL);
}
