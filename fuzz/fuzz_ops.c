/*
** fuzz_ops.c — the Lua API driven from the op declarations: each input is a
** short program of op calls (which op, which tensors, shapes, dtypes and
** argument values), decoded by fuzz/ops_program.lua from what src/ops
** declares, with backward passes between. It reaches the generated argument
** parsing (lua_ops.c), the dispatcher, shape inference, type promotion, the
** CPU kernels and autograd with the combinations no test thought of.
*/
#include "fuzz_lua.h"

const lt_fuzz_target lt_fuzz_this = {
  "ops", NULL, "pytorch",
  "local run = dofile('fuzz/ops_program.lua')\n"
  "return function(bytes) run(bytes) end\n"
};
