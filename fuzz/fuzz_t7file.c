/*
** fuzz_t7file.c — Torch7 mode's own reader: torch.load in a state opened with
** lutorch_set_compat "torch7" (src/vm/lua/t7file.lua's readObject over the
** byte buffer of src/vm/lt7file.c), binary and ascii: references, classes,
** tensors, storages, functions' bytecode refused.
*/
#include "fuzz_lua.h"

const lt_fuzz_target lt_fuzz_this = {
  "t7file", ".t7", "torch7",
  "return function(bytes, path)\n"
  "  local ok, v = fuzz_try(torch.load, path)\n"
  "  if ok then fuzz_touch(v) end\n"
  "  ok, v = fuzz_try(torch.load, path, 'ascii')\n"
  "  if ok then fuzz_touch(v) end\n"
  "end\n"
};
