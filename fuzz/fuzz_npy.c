/*
** fuzz_npy.c — NumPy's .npy: torch.load_npy (src/serial/npy.c: the magic,
** version, header length and the header's Python dict literal: descr, order,
** shape) and lib/data's reader over zlib (data.read_npy, src/vm/ldata_readers.c).
*/
#include "fuzz_lua.h"

const lt_fuzz_target lt_fuzz_this = {
  "npy", ".npy", "pytorch",
  "return function(bytes, path)\n"
  "  local ok, v = fuzz_try(torch.load_npy, path)\n"
  "  if ok then fuzz_touch(v) end\n"
  "  ok, v = fuzz_try(data.read_npy, path)\n"
  "  if ok then fuzz_touch(v) end\n"
  "end\n"
};
