/*
** fuzz_safetensors.c — torch.load_safetensors (src/serial/safetensors.c: the
** 8-byte header length, the JSON header through jansson, dtypes, shapes and
** data offsets), read into memory and mapped.
*/
#include "fuzz_lua.h"

const lt_fuzz_target lt_fuzz_this = {
  "safetensors", ".safetensors", "pytorch",
  "return function(bytes, path)\n"
  "  local ok, v = fuzz_try(torch.load_safetensors, path)\n"
  "  if ok then fuzz_touch(v) end\n"
  "  ok, v = fuzz_try(torch.load_safetensors, path, {mmap = true})\n"
  "  if ok then fuzz_touch(v) end\n"
  "end\n"
};
