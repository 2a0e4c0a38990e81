/*
** fuzz_npz.c — NumPy's .npz: torch.load_npz (src/serial/npz.c over libzip: the
** archive's directory, stored and deflated members, each member an .npy).
*/
#include "fuzz_lua.h"

const lt_fuzz_target lt_fuzz_this = {
  "npz", ".npz", "pytorch",
  "return function(bytes, path)\n"
  "  local ok, v = fuzz_try(torch.load_npz, path)\n"
  "  if ok then fuzz_touch(v) end\n"
  "end\n"
};
