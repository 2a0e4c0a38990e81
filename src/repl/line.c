/*
** line.c — reading the REPL's lines: readline in callback mode (so that Ctrl-C
** at the prompt is ours to handle: it clears the line), tab completion through
** torch._repl.complete, and the history file.
**
** On a terminal, lines come from readline's callback interface driven by
** pselect: SIGINT is blocked except inside pselect, so a Ctrl-C either wakes
** pselect (EINTR) or waits for it, and is never lost between the two. Without
** a terminal (a pipe), lines are read plainly.
*/
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>
#include <lua.h>
#include <lauxlib.h>
#include <readline/readline.h>
#include <readline/history.h>
#include "repl.h"

static lua_State *comp_L;
static const char *hist_file;
static int hist_size;
static bool use_readline;

static volatile sig_atomic_t got_int, got_winch;
static char *cb_line;
static bool cb_done;

static void on_int(int sig) { (void)sig; got_int = 1; }
static void on_winch(int sig) { (void)sig; got_winch = 1; }

static void on_line(char *line) {
  rl_callback_handler_remove();   /* else readline prints the prompt again at once */
  cb_line = line;
  cb_done = true;
}


/* ---- completion ----------------------------------------------------------- */

static char **comp_list;
static size_t comp_n, comp_i;

static void comp_free(void) {
  for (size_t i = comp_i; i < comp_n; i++) free(comp_list[i]);
  free(comp_list);
  comp_list = NULL;
  comp_n = comp_i = 0;
}

static char *comp_next(const char *text, int state) {
  (void)text;
  if (state == 0) comp_i = 0;
  if (comp_i < comp_n) return comp_list[comp_i++];   /* readline frees it */
  return NULL;
}

/* completion must not hang the prompt on a looping __index */
static void comp_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  luaL_error(L, "completion takes too long");
}

/* torch._repl.complete(before, word) -> list of strings, left in comp_list */
static int comp_call(lua_State *L) {
  const char *before = lua_tostring(L, 1), *word = lua_tostring(L, 2);
  lua_getfield(L, LUA_REGISTRYINDEX, "lutorch.module");
  if (!lua_istable(L, -1) || lua_getfield(L, -1, "_repl") != LUA_TTABLE || lua_getfield(L, -1, "complete") != LUA_TFUNCTION) return 0;
  lua_pushstring(L, before);
  lua_pushstring(L, word);
  lua_call(L, 2, 1);
  if (!lua_istable(L, -1)) return 0;
  size_t n = (size_t)lua_rawlen(L, -1);
  comp_list = calloc(n ? n : 1, sizeof *comp_list);
  if (!comp_list) return 0;
  for (size_t i = 0; i < n; i++) {
    lua_rawgeti(L, -1, (lua_Integer)i + 1);
    const char *s = lua_tostring(L, -1);
    if (s && (comp_list[comp_n] = strdup(s))) comp_n++;
    lua_pop(L, 1);
  }
  return 0;
}

static bool shell_line(void) {
  const char *p = rl_line_buffer;
  while (*p == ' ' || *p == '\t') p++;
  return *p == '$';
}

/* a name ends at any of these; '.' and ':' too, so `torch.nn.fun` completes `fun` */
static const char lua_breaks[] = " \t\n\"'`~!@#$%^&*()-=+[]{}|;,<>/?.:\\";
static const char shell_breaks[] = " \t\n\"'`><=;|&(";

/* whether the cursor is inside a string literal ('...' or "...") */
static bool in_string(void) {
  char q = 0;
  for (int i = 0; i < rl_point && rl_line_buffer[i]; i++) {
    char c = rl_line_buffer[i];
    if (q && c == '\\' && rl_line_buffer[i + 1]) i++;
    else if (q && c == q) q = 0;
    else if (!q && (c == '"' || c == '\'')) q = c;
  }
  return q != 0;
}

/* in a string only the quotes break words: "/usr/sh<TAB>" must keep its '/' */
static char *word_breaks(void) {
  if (in_string()) return (char *)"\"'";
  return (char *)(shell_line() ? shell_breaks : lua_breaks);
}

static char **complete(const char *text, int start, int end) {
  (void)end;
  /* inside a string, or a shell command: readline's file names */
  if (rl_completion_quote_character || shell_line()) return NULL;
  rl_attempted_completion_over = 1;
  rl_completion_append_character = '\0';
  if (!comp_L) return NULL;
  lua_State *L = comp_L;
  int top = lua_gettop(L);
  char *before = strndup(rl_line_buffer, (size_t)start);
  if (!before) return NULL;
  lua_pushcfunction(L, comp_call);
  lua_pushstring(L, before);
  lua_pushstring(L, text);
  free(before);
  lua_sethook(L, comp_hook, LUA_MASKCOUNT, 10000000);
  int status = lua_pcall(L, 2, 0, 0);
  lua_sethook(L, NULL, 0, 0);
  lua_settop(L, top);
  char **m = NULL;
  if (status == LUA_OK && comp_n > 0) m = rl_completion_matches(text, comp_next);
  comp_free();
  return m;
}


/* ---- history -------------------------------------------------------------- */

void lt_line_open(lua_State *L, const char *histfile, int histsize) {
  comp_L = L;
  use_readline = isatty(STDIN_FILENO);
  hist_file = histfile && *histfile ? strdup(histfile) : NULL;
  hist_size = histsize > 0 ? histsize : 1000;
  rl_readline_name = "lutorch";   /* $if lutorch in ~/.inputrc */
  rl_catch_signals = 0;
  rl_catch_sigwinch = 0;
  rl_attempted_completion_function = complete;
  rl_basic_word_break_characters = lua_breaks;
  rl_completer_word_break_characters = lua_breaks;
  rl_completion_word_break_hook = word_breaks;
  rl_completer_quote_characters = "\"'";
  using_history();
  stifle_history(hist_size);
  /* timestamps in the file keep multi-line commands one entry */
  history_comment_char = '#';   /* the timestamps' mark: "#1700000000" */
  history_write_timestamps = 1;
  history_multiline_entries = 1;
  if (hist_file) {
    /* a file without timestamps (another program's, an older lutorch's) has one command a line */
    FILE *f = fopen(hist_file, "r");
    int c0 = f ? fgetc(f) : EOF, c1 = f ? fgetc(f) : EOF;
    if (f) fclose(f);
    history_multiline_entries = c0 == '#' && c1 >= '0' && c1 <= '9';
    read_history(hist_file);
    history_multiline_entries = 1;
  }
}

void lt_line_remember(const char *entry) {
  HIST_ENTRY *last = history_length > 0 ? history_get(history_base + history_length - 1) : NULL;
  if (last && strcmp(last->line, entry) == 0) return;   /* no runs of one command */
  add_history(entry);   /* stamped with the time: see lt_line_open */
  if (!hist_file) return;
  /* appended at once: a crash keeps it, and two sessions don't overwrite each other */
  int fd = open(hist_file, O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (fd >= 0) {
    close(fd);
    append_history(1, hist_file);
  }
}

void lt_line_close(void) {
  if (hist_file) history_truncate_file(hist_file, hist_size);
}

int lt_line_width(void) {
  int rows = 0, cols = 0;
  if (use_readline) rl_get_screen_size(&rows, &cols);
  return cols > 20 ? cols : 80;
}


/* ---- reading a line ------------------------------------------------------- */

static int read_plain(const char *prompt, char **out) {
  fputs(prompt, stdout);
  fflush(stdout);
  char *line = NULL;
  size_t cap = 0;
  ssize_t n = getline(&line, &cap, stdin);
  if (n < 0) { free(line); return LT_LINE_EOF; }
  if (n > 0 && line[n - 1] == '\n') line[--n] = 0;
  *out = line;
  return LT_LINE_OK;
}

int lt_line_read(const char *prompt, char **out) {
  *out = NULL;
  if (!use_readline) return read_plain(prompt, out);
  struct sigaction sa, old_int, old_winch;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_int;
  sigaction(SIGINT, &sa, &old_int);
  sa.sa_handler = on_winch;
  sigaction(SIGWINCH, &sa, &old_winch);
  sigset_t block, old_mask;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGWINCH);
  sigprocmask(SIG_BLOCK, &block, &old_mask);
  got_int = got_winch = 0;
  cb_done = false;
  cb_line = NULL;
  int rc = LT_LINE_EOF;
  rl_callback_handler_install(prompt, on_line);
  int fd = fileno(rl_instream ? rl_instream : stdin);
  for (;;) {
    if (got_winch) {
      got_winch = 0;
      rl_resize_terminal();
    }
    if (got_int) {   /* Ctrl-C at the prompt: drop the line, a fresh prompt */
      got_int = 0;
      rl_free_line_state();
      rl_callback_sigcleanup();
      rl_cleanup_after_signal();
      rl_callback_handler_remove();
      fputs("^C\n", stdout);
      fflush(stdout);
      rc = LT_LINE_INTERRUPT;
      break;
    }
    fd_set fds;
    FD_ZERO(&fds);
    FD_SET(fd, &fds);
    int r = pselect(fd + 1, &fds, NULL, NULL, NULL, &old_mask);
    if (r < 0) {
      if (errno == EINTR) continue;
      rl_callback_handler_remove();
      break;
    }
    rl_callback_read_char();
    if (cb_done) {
      *out = cb_line;
      rc = cb_line ? LT_LINE_OK : LT_LINE_EOF;
      break;
    }
  }
  sigprocmask(SIG_SETMASK, &old_mask, NULL);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGWINCH, &old_winch, NULL);
  return rc;
}
