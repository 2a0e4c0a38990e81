/*
** fuzz_t7.c — Torch7 files read in PyTorch mode: torch.load_t7
** (src/serial/t7.c's parser of binary and ascii .t7 files, and the conversion
** to Lua values and tensors in src/vm/linterchange.c), with the format found
** by itself and with 4-byte longs (files written on Windows or 32-bit).
*/
#include "fuzz_lua.h"

const lt_fuzz_target lt_fuzz_this = {
  "t7", ".t7", "pytorch",
  "return function(bytes, path)\n"
  "  local ok, v = fuzz_try(torch.load_t7, path)\n"
  "  if ok then fuzz_touch(v) end\n"
  "  ok, v = fuzz_try(torch.load_t7, path, {long_size = 4})\n"
  "  if ok then fuzz_touch(v) end\n"
  "end\n"
};
