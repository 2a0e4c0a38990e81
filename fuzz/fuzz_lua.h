/*
** fuzz_lua.h — what a fuzz target (fuzz/fuzz_NAME.c) declares. Most of
** lutorch's readers are reached through the torch module, so a target is a
** Lua chunk: fuzz_lua.c opens one lutorch state for the process, runs the
** chunk once to get the target's function, and calls it for every input with
** (bytes, path, dir): the input as a Lua string, the same bytes written to a
** file named `path` (when the target asks for one), and a scratch directory
** of its own. A Lua error is the expected answer to bad bytes; a sanitizer
** report, a crash, a leak, a hang or a huge allocation is a finding.
**
** Built two ways (Makefile, "fuzz"): with clang and libFuzzer into
** build-fuzz/fuzz_NAME, and with the ordinary compiler and -DLT_FUZZ_REPLAY
** into build/fuzz/replay_NAME, whose main() runs the files it is given (the
** committed corpus and regressions, in make test).
*/
#ifndef LT_FUZZ_LUA_H
#define LT_FUZZ_LUA_H

#include <stddef.h>

typedef struct lt_fuzz_target {
  const char *name;     /* the target's name, for messages */
  const char *suffix;   /* the input file's name ends so (".npy"); NULL: no file is written */
  const char *mode;     /* "pytorch" or "torch7": lutorch_set_compat before the module opens */
  const char *chunk;    /* Lua source returning function(bytes, path, dir) */
} lt_fuzz_target;

/* each fuzz/fuzz_NAME.c defines it */
extern const lt_fuzz_target lt_fuzz_this;

#endif
