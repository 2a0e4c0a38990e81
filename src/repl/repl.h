/*
** repl.h — the parts of the `lutorch` program beyond lutorch.c: running Lua
** code under Ctrl-C and with tracebacks (call.c), reading lines with readline,
** history and completion (line.c), and the REPL itself (repl.c).
*/
#ifndef LT_REPL_H
#define LT_REPL_H

#include <stdbool.h>
#include <lua.h>

extern const char *lt_repl_progname;
/* set by the Jupyter kernel: Ctrl-C (SIGINT) only ever stops the running call,
** never kills the process, and says nothing on stderr */
extern bool lt_repl_kernel_mode;

/* ---- call.c ---- */

/* lua_pcall with a traceback handler, Ctrl-C interrupting the call ("interrupted"
** as the error) */
int lt_repl_docall(lua_State *L, int narg, int nres);
/* Prints the error on top of the stack (and pops it) when status is not LUA_OK. */
int lt_repl_report(lua_State *L, int status);
/* Colours on stdout/stderr: a terminal, NO_COLOR unset or empty, TERM not dumb. */
bool lt_repl_color(int fd);

/* ---- line.c ---- */

enum { LT_LINE_OK, LT_LINE_EOF, LT_LINE_INTERRUPT };

/* history: the file (NULL: none) and the number of entries kept */
void lt_line_open(lua_State *L, const char *histfile, int histsize);
/* One line (malloc'd, no newline) into *out; LT_LINE_INTERRUPT after Ctrl-C at
** the prompt, LT_LINE_EOF at Ctrl-D or the end of the input. */
int lt_line_read(const char *prompt, char **out);
/* Adds a command (possibly of several lines) to the history and appends it to the file. */
void lt_line_remember(const char *entry);
/* Trims the history file to its size limit. */
void lt_line_close(void);
/* The terminal's width in columns (80 when unknown). */
int lt_line_width(void);

/* ---- repl.c ---- */

/* The read-eval-print loop, until :quit or end of input; `banner`: print the banner first. */
void lt_repl_run(lua_State *L, bool banner);
/* Compiles a command as `return buf` (an expression: its values are the result)
** or else as statements (`stmts; expr` returns expr); leaves the function or the
** error message. The Jupyter kernel's cells mean what the REPL's commands do. */
int lt_repl_compile(lua_State *L, const char *buf, const char *chunkname);
/* whether a load status is a syntax error at the end of the chunk (pops the
** message then): the command goes on in another line */
bool lt_repl_incomplete(lua_State *L, int status);
/* pushes torch._repl.<name> (a function) and returns 1, or returns 0 with nothing pushed */
int lt_repl_push_fn(lua_State *L, const char *name);
/* a command ending in `;` prints nothing */
bool lt_repl_silenced(const char *s);

#endif
